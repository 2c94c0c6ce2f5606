#ifndef MEMPROF_TESTS_DOCS_CLI_HELP_H_
#define MEMPROF_TESTS_DOCS_CLI_HELP_H_

#include <map>
#include <set>
#include <string>
#include <vector>

namespace memprof::docs {

// What the built memprofctl's own help says, the one source the man pages
// and the completion scripts must agree with.

// `memprofctl ARGS... --help` (stdout; a failure is recorded if it fails).
std::string HelpOf(const std::vector<std::string>& args);

// The commands `memprofctl --help` lists under `heading`, in its order:
// "Commands:" (each has a man page), or "Help:" (help, version).
std::vector<std::string> HelpCommands(const std::string& heading = "Commands:");

// Every option name in the left column of a help text: "-o", "--out",
// "--pid", "-h", "--help"...
std::set<std::string> OptionsIn(const std::string& help);

// The values the CLI accepts for `memprofctl COMMAND --format`, from the
// usage error a value it does not know gets; `required` are the other
// arguments the command needs to get that far.
std::set<std::string> FormatsOf(const std::string& command,
                                const std::vector<std::string>& required = {});

// FormatsOf() for each command that has --format.
std::map<std::string, std::set<std::string>> FormatsOfEachCommand();

// The allocators `memprofctl run --allocator` accepts, from the usage error
// a name it does not know gets.
std::set<std::string> AllocatorsOfRun();

// The words of `text`, split at white space.
std::set<std::string> Words(const std::string& text);

}  // namespace memprof::docs

#endif  // MEMPROF_TESTS_DOCS_CLI_HELP_H_
