#include "cli/commands/purge_command.h"

#include <string>

#include "cli/client/profiling_format.h"
#include "cli/commands/target_flags.h"
#include "cli/io/human_format.h"
#include "cli/io/text_table.h"
#include "common/json_schema_versions.h"

namespace memprof::cli {
namespace {

using memprof::v1::PurgeReading;
using memprof::v1::PurgeResponse;

nlohmann::json ReadingJson(const PurgeReading& r) {
  const auto& s = r.summary();
  return {{"rss_bytes", r.rss_bytes()},   {"unused_bytes", r.unused_bytes()},
          {"allocated", s.allocated()},   {"active", s.active()},
          {"resident", s.resident()},     {"mapped", s.mapped()},
          {"retained", s.retained()},     {"metadata", s.metadata()}};
}

// after - before, signed.
int64_t Change(uint64_t before, uint64_t after) {
  return static_cast<int64_t>(after - before);
}

std::string FormatChange(int64_t change) {
  if (change < 0) return "-" + FormatBytes(static_cast<uint64_t>(-change));
  return "+" + FormatBytes(static_cast<uint64_t>(change));
}

}  // namespace

CLI::App* RegisterPurgeCommand(CLI::App& app, PurgeOptions& options) {
  CLI::App* cmd =
      app.add_subcommand("purge", "Make the allocator give its unused memory back to the OS now");
  AddPidOption(*cmd, options.target);
  AddJsonFlag(*cmd, options.target.json);
  cmd->footer(
      "jemalloc: purges the dirty and muzzy pages of every arena (arena.4096.purge);\n"
      "glibc: malloc_trim(0). Shows RSS and the allocator's figures before and after.\n"
      "Examples:\n"
      "  memprofctl purge --pid 1234\n"
      "  memprofctl purge --pid 1234 --json | jq .rss_change_bytes\n");
  return cmd;
}

Result<void> RunPurge(const PurgeOptions& options, TargetDiscovery& discovery,
                      ProfileClient& client, std::ostream& out) {
  auto target = discovery.Resolve(options.target.selector());
  if (!target) return Fail(target.error());
  auto purge = client.Purge(*target);
  if (!purge) return Fail(purge.error());
  if (options.target.json) {
    out << PurgeToJson(*purge, *target).dump(2) << '\n';
  } else {
    PrintPurge(*purge, *target, out);
  }
  return {};
}

nlohmann::json PurgeToJson(const PurgeResponse& purge, const Target& target) {
  return {{"schema_version", kPurgeJsonVersion},
          {"pid", target.pid},
          {"allocator", AllocatorName(purge.allocator())},
          {"method", purge.method()},
          {"before", ReadingJson(purge.before())},
          {"after", ReadingJson(purge.after())},
          {"rss_change_bytes", Change(purge.before().rss_bytes(), purge.after().rss_bytes())}};
}

void PrintPurge(const PurgeResponse& purge, const Target& target, std::ostream& out) {
  out << "purged " << DescribeTarget(target) << " (" << AllocatorName(purge.allocator())
      << ": " << purge.method() << ")\n";
  TextTable table({"", "before", "after", "change"});
  for (size_t column = 1; column < 4; ++column) table.SetAlign(column, TextTable::Align::kRight);
  const auto row = [&](const char* label, uint64_t before, uint64_t after) {
    table.AddRow({label, FormatBytes(before), FormatBytes(after),
                  FormatChange(Change(before, after))});
  };
  const PurgeReading& b = purge.before();
  const PurgeReading& a = purge.after();
  row("RSS", b.rss_bytes(), a.rss_bytes());
  row("allocator resident", b.summary().resident(), a.summary().resident());
  row("allocator unused", b.unused_bytes(), a.unused_bytes());
  row("allocated", b.summary().allocated(), a.summary().allocated());
  table.Print(out);
}

namespace {

class PurgeCommand final : public Command {
 public:
  CLI::App* Register(CLI::App& app) override { return RegisterPurgeCommand(app, options_); }
  TargetOptions* target_options() override { return &options_.target; }
  Result<void> Run(const CommandContext& context) override {
    return RunPurge(options_, *context.discovery, *context.client, context.console.out);
  }
  Result<void> RunOnTarget(const Target& target, const CommandContext& context) const override {
    return RunPurge(ForTarget(options_, target), *context.discovery, *context.client,
                    context.console.out);
  }

 private:
  PurgeOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakePurgeCommand() { return std::make_unique<PurgeCommand>(); }

}  // namespace memprof::cli
