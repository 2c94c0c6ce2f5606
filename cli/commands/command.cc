#include "cli/commands/command.h"

namespace memprof::cli {

Result<void> Command::RunOnTarget(const Target& /*target*/,
                                  const CommandContext& /*context*/) const {
  return Fail(ErrorCode::kInvalidArgument, "this command works on one target at a time");
}

Error FollowsOneTarget(const std::string& flag) {
  return Error{ErrorCode::kInvalidArgument,
               flag +
                   " follows one target; for several, repeat the multi-target command from a "
                   "loop or a timer (docs/user-guide.md, \"Collecting from a fleet\")"};
}

Result<void> Command::RunOnMany(const TargetSelection& selection, const MultiTargetPlan& plan,
                                const CommandContext& context) const {
  const TargetTask task = [this, &context](const Target& target, ProfileClient& client,
                                           const Console& console, const std::stop_token& stop) {
    CommandContext mine{context.env, console,           context.discovery, &client,
                        stop,        context.end_early, context.timeout,   {}};
    return RunOnTarget(target, mine);
  };
  return RunOnTargets(selection, plan, *context.discovery, context.env.make_client, task,
                      context.console, context.cancel);
}

}  // namespace memprof::cli
