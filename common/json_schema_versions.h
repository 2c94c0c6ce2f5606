#ifndef MEMPROF_COMMON_JSON_SCHEMA_VERSIONS_H_
#define MEMPROF_COMMON_JSON_SCHEMA_VERSIONS_H_

namespace memprof {

// The "schema_version" of each JSON document memprofctl prints, described by
// docs/schemas/<name>.schema.json. Adding a key keeps a version; removing,
// renaming or retyping one bumps it, in the same commit as the schema
// (docs/user-guide.md, "Machine output").
inline constexpr int kListJsonVersion = 1;         // list.schema.json
inline constexpr int kStatusJsonVersion = 1;       // status.schema.json
inline constexpr int kActivateJsonVersion = 1;     // activate.schema.json
inline constexpr int kDeactivateJsonVersion = 1;   // deactivate.schema.json
inline constexpr int kDumpJsonVersion = 1;         // dump.schema.json (also each --every line)
inline constexpr int kDumpCapturedJsonVersion = 1;  // dump-captured.schema.json
inline constexpr int kProfileJsonVersion = 1;      // profile.schema.json
inline constexpr int kAllocationProfileJsonVersion = 1;  // profile-allocations.schema.json
inline constexpr int kStatsJsonVersion = 1;        // stats.schema.json
inline constexpr int kStatsWatchJsonVersion = 1;   // stats-watch.schema.json (each line)
inline constexpr int kReportJsonVersion = 1;       // report.schema.json
inline constexpr int kTrendJsonVersion = 1;        // report-trend.schema.json
inline constexpr int kLifetimesJsonVersion = 1;   // report-lifetimes.schema.json
inline constexpr int kMultiTargetJsonVersion = 1;  // multi-target.schema.json (each line)
inline constexpr int kDoctorJsonVersion = 1;       // doctor.schema.json
inline constexpr int kPurgeJsonVersion = 1;        // purge.schema.json
inline constexpr int kAttachJsonVersion = 1;       // attach.schema.json

}  // namespace memprof

#endif  // MEMPROF_COMMON_JSON_SCHEMA_VERSIONS_H_
