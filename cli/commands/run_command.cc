#include "cli/commands/run_command.h"

#include <memory>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <span>

#include "cli/io/logging.h"

namespace memprof::cli {
namespace {

std::vector<char*> PointerArray(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Index of the first argument that is not a global option or its value
// (args.size() if none).
size_t FindCommandName(const CLI::App& app, const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") return args.size();
    if (arg.size() < 2 || arg[0] != '-') return i;
    const bool inline_value = arg.find('=') != std::string::npos;
    const CLI::Option* opt = app.get_option_no_throw(arg.substr(0, arg.find('=')));
    if (opt != nullptr && opt->get_items_expected_min() > 0 && !inline_value)
      ++i;  // skip its value
  }
  return args.size();
}

bool IsHelpFlag(const std::string& word) { return word == "-h" || word == "--help"; }

// The -h/--help among `run`'s own words, the ones before CMD and before a
// `--` (`--allocator NAME`, `--allocator=NAME`): a user who writes
// `run --allocator tcmalloc --help` asks for run's help, not to start a
// program named --help. After CMD or `--`, a --help is CMD's. Null if none.
const std::string* RunHelpFlag(std::span<const std::string> words) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (IsHelpFlag(word)) return &word;
    if (word == "--allocator") {
      // `--allocator --help`: no allocator is called that; the help is meant.
      if (i + 1 < words.size() && IsHelpFlag(words[i + 1])) return &words[i + 1];
      ++i;
    } else if (!word.starts_with("--allocator=")) {
      return nullptr;  // `--` or CMD
    }
  }
  return nullptr;
}

Result<RunAllocator> ParseAllocatorName(const std::string& name) {
  if (name == "jemalloc") return RunAllocator::kJemalloc;
  if (name == "tcmalloc") return RunAllocator::kTcmalloc;
  return Fail(ErrorCode::kInvalidArgument,
              "run: unknown allocator '" + name + "' (valid: jemalloc, tcmalloc)");
}

}  // namespace

Result<RunOptions> ParseRunWords(const std::vector<std::string>& words) {
  RunOptions options;
  size_t at = 0;
  constexpr std::string_view kFlag = "--allocator";
  if (at < words.size() && words[at].starts_with(kFlag)) {
    std::string name;
    if (words[at] == kFlag) {
      if (at + 1 >= words.size()) {
        return Fail(ErrorCode::kInvalidArgument,
                    "run: --allocator needs a value (valid: jemalloc, tcmalloc)");
      }
      name = words[at + 1];
      at += 2;
    } else if (words[at][kFlag.size()] == '=') {
      name = words[at].substr(kFlag.size() + 1);
      ++at;
    }
    if (at > 0) {
      auto allocator = ParseAllocatorName(name);
      if (!allocator) return Fail(allocator.error());
      options.allocator = *allocator;
      if (at < words.size() && words[at] == "--") ++at;
    }
  }
  options.command.assign(words.begin() + static_cast<std::ptrdiff_t>(at), words.end());
  return options;
}

CLI::App* RegisterRunCommand(CLI::App& app, RunHelpWords& words) {
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Start CMD with the memprof agent (and jemalloc if needed) preloaded, ready to profile");
  // For the help (and so the man page and the completion): the words after
  // `run` never reach CLI11 (SplitRunArguments); ParseRunWords reads them.
  cmd->add_option("--allocator", words.allocator,
                  "jemalloc (default) or tcmalloc: the allocator to preload when CMD does not "
                  "link one; must come before CMD")
      ->type_name("NAME");
  cmd->add_option("CMD", words.command,
                  "The program to start, found in $PATH, then its arguments, passed verbatim "
                  "(after an optional --)");
  cmd->footer(
      "CMD replaces memprofctl (same pid). LD_PRELOAD gets jemalloc (unless CMD already uses it)\n"
      "and libmemprof_agent.so; MALLOC_CONF gets prof:true,prof_active:false merged with yours.\n"
      "--allocator tcmalloc: gperftools' libtcmalloc.so.4 instead of jemalloc (unless CMD links\n"
      "it), and TCMALLOC_SAMPLE_PARAMETER=524288 unless you set it; MALLOC_CONF is left alone.\n"
      "Libraries: $MEMPROF_AGENT_LIB, $MEMPROF_JEMALLOC_LIB and $MEMPROF_TCMALLOC_LIB override\n"
      "the built-in paths.\n\n"
      "Examples:\n"
      "  memprofctl run -- ./my-server --port 8080\n"
      "  MALLOC_CONF=lg_prof_sample:17 memprofctl run -- redis-server\n"
      "  memprofctl run --allocator tcmalloc -- ./my-server\n");
  return cmd;
}

SplitArguments SplitRunArguments(const CLI::App& app, const std::vector<std::string>& args) {
  const size_t at = FindCommandName(app, args);
  if (at == args.size() || args[at] != "run") return {args, std::nullopt};
  SplitArguments split{{args.begin(), args.begin() + static_cast<std::ptrdiff_t>(at) + 1}, {}};
  size_t rest = at + 1;
  const auto words = std::span<const std::string>(args).subspan(rest);
  if (const std::string* help = RunHelpFlag(words)) split.cli_args.push_back(*help);
  if (rest < args.size() && args[rest] == "--") ++rest;
  split.run_command.emplace(args.begin() + static_cast<std::ptrdiff_t>(rest), args.end());
  return split;
}

Result<void> RunRun(const RunOptions& options, const RunEnvironment& env, const Executor& exec) {
  if (options.command.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                std::string("run: missing command; usage: memprofctl run ") + kRunUsage);
  }
  auto plan = PlanRun(options.command, env, options.allocator);
  if (!plan) return Fail(plan.error());
  for (const std::string& warning : plan->warnings) Log().warn("{}", warning);
  Log().info("starting {} with LD_PRELOAD={} {}", plan->path, plan->ld_preload,
             plan->allocator_setting);
  return exec(*plan);
}

Result<void> ExecPlanNow(const ExecPlan& plan) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::vector<char*> argv = PointerArray(plan.argv);
  std::vector<char*> envp = PointerArray(plan.env);
  ::execve(plan.path.c_str(), argv.data(), envp.data());
  const int err = errno;
  const ErrorCode code = err == EACCES || err == EPERM ? ErrorCode::kPermissionDenied
                         : err == ENOENT               ? ErrorCode::kInvalidArgument
                                                       : ErrorCode::kInternal;
  return Fail(code, "cannot execute " + plan.path + ": " + std::strerror(err));
}

namespace {

class RunCommand final : public Command {
 public:
  CLI::App* Register(CLI::App& app) override { return RegisterRunCommand(app, help_words_); }
  std::string usage() const override { return kRunUsage; }
  bool talks_to_agents() const override { return false; }
  Result<void> Run(const CommandContext& context) override {
    auto options = ParseRunWords(context.verbatim_args);
    if (!options) return Fail(options.error());
    return RunRun(*options, context.env.run_environment(), context.env.exec);
  }

 private:
  RunHelpWords help_words_;
};

}  // namespace

std::unique_ptr<Command> MakeRunCommand() { return std::make_unique<RunCommand>(); }

}  // namespace memprof::cli
