#ifndef MEMPROF_CLI_DOCTOR_DOCTOR_REPORT_H_
#define MEMPROF_CLI_DOCTOR_DOCTOR_REPORT_H_

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/doctor/doctor_findings.h"

namespace memprof::cli {

// The breakdown, the ratios and the findings, for people.
void PrintDoctorReport(const DoctorFigures& figures, const std::vector<Finding>& findings,
                       std::ostream& out);

// The same as JSON: snake_case keys whose types never vary (bytes are
// integers, ratios numbers, the allocator-specific objects always present).
nlohmann::json DoctorReportToJson(const DoctorFigures& figures,
                                  const std::vector<Finding>& findings);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_DOCTOR_DOCTOR_REPORT_H_
