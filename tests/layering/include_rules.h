#ifndef MEMPROF_TESTS_LAYERING_INCLUDE_RULES_H_
#define MEMPROF_TESTS_LAYERING_INCLUDE_RULES_H_

#include <optional>
#include <string>
#include <string_view>

namespace memprof::layering {

// The dependency rules of the source tree (docs/architecture.md, "Layers"),
// as a pure function so that the rules themselves are unit-tested:
//
//   - common/ includes only common/ (and no gRPC, CLI11 or spdlog);
//   - agent/ never includes cli/, and has no source at its top level: each
//     of its folders is a library with a place in the agent's ranks,
//       shared/ (both halves) ; core/ (always loaded) ;
//       logging < allocators < heap < service < module (the loadable module)
//     where the core and the module sides share only shared/, a folder
//     includes only lower ranks of its side, shared/ and core/ include no
//     gRPC, protobuf, spdlog or OpenSSL header, logging/, allocators/ and
//     heap/ of those only spdlog, and only service/ and module/ include the
//     generated proto;
//   - the report engine (cli/report/) includes no other CLI folder, and
//     neither gRPC, the generated memprof proto nor CLI11;
//   - inside the report engine, a folder includes only folders before it in
//     the data flow:
//       {model, symbolize} < parse < {aggregate, merge} < {render, pprof} < trend
//       < the pipeline (the files at the top of cli/report/)
//     (a folder without a rank fails on every include of the engine), and
//     among the pipeline files, report_request and the loaders <
//     report_symbolizer and symbolization_report < the allocation and trend
//     pipelines < report_pipeline (so no include in cli/report/ runs back up);
//   - inside cli/, a folder includes only folders below it:
//       io < launch < {client, attach} < targets < {collect, exporter} < commands < app < main.cc
//     (collect and exporter are siblings and include neither each other, nor do
//     client and attach);
//   - a command never includes another command's header.
//
// `file` is a path relative to the repository root ("cli/io/logging.cc"),
// `included` what an #include names: "cli/client/target.h" for a quoted
// include, "<CLI/CLI.hpp>" (with the brackets) for a system one. Returns why
// the include breaks a rule, or nullopt when it is allowed.
std::optional<std::string> CheckInclude(std::string_view file, std::string_view included);

}  // namespace memprof::layering

#endif  // MEMPROF_TESTS_LAYERING_INCLUDE_RULES_H_
