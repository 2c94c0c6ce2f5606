#ifndef MEMPROF_CLI_APP_HELP_TEXT_H_
#define MEMPROF_CLI_APP_HELP_TEXT_H_

#include <string>

namespace memprof::cli {

// The one-paragraph description at the top of `memprofctl --help`.
std::string RootDescription();

// The footer of `memprofctl --help`: environment, exit codes, examples.
std::string RootFooter();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_HELP_TEXT_H_
