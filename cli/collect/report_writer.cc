#include "cli/collect/report_writer.h"

#include <ostream>

#include "cli/collect/debuginfod_progress.h"
#include "cli/io/atomic_file_writer.h"
#include "cli/io/file_streambuf.h"
#include "cli/io/logging.h"

namespace memprof::cli {
namespace {

bool IsBinary(report::Format format) { return format == report::Format::kPprof; }

Result<void> WriteReportOnly(const report::ReportRequest& request, const ReportOutput& output,
                             const Console& console, bool stdout_is_terminal,
                             report::aggregate::SymbolizationSummary& symbolization) {
  if (output.path == "-") {
    if (IsBinary(request.format) && stdout_is_terminal) {
      return Fail(ErrorCode::kInvalidArgument,
                  "pprof output is binary (gzipped protobuf); write it to a file with -o FILE");
    }
    return report::RunReportPipeline(request, console.out, &symbolization);
  }
  auto writer = AtomicFileWriter::Create(output.path, output.existing);
  if (!writer) return Fail(writer.error());
  FileStreamBuf file(*writer);
  std::ostream stream(&file);
  const Result<void> rendered = report::RunReportPipeline(request, stream, &symbolization);
  // A write error explains a failed render better than the render does.
  if (auto flushed = file.Finish(); !flushed) return flushed;
  if (!rendered) return rendered;
  return writer->Commit();
}

}  // namespace

Result<void> WriteReport(const report::ReportRequest& request, const ReportOutput& output,
                         const Console& console, bool stdout_is_terminal, bool stderr_redraws) {
  report::aggregate::SymbolizationSummary symbolization;
  {
    const auto progress = DebuginfodProgress::StartIfUseful(console.err, stderr_redraws);
    // -v says how each binary was read (a live target's: by name or through map_files).
    report::ReportRequest described = request;
    described.describe_files = Log().should_log(spdlog::level::info);
    auto r = WriteReportOnly(described, output, console, stdout_is_terminal, symbolization);
    if (!r) return r;
  }
  // After the report, so that on a terminal it is what the user sees last.
  console.out.flush();
  console.notes() << report::aggregate::FormatSymbolizationSummary(
      symbolization, Log().should_log(spdlog::level::info));
  for (const std::string& line : symbolization.files_read) Log().info("{}", line);
  return {};
}

}  // namespace memprof::cli
