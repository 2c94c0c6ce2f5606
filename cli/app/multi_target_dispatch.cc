#include "cli/app/multi_target_dispatch.h"

namespace memprof::cli {

Result<void> RunOnSelectedTargets(const Command& command, const TargetSelection& selection,
                                  const TargetOptions& options, const CommandContext& context) {
  if (auto ok = command.CheckManyTargets(); !ok) return ok;
  auto extra = command.ExtraTimePerTarget();
  if (!extra) return Fail(extra.error());
  MultiTargetPlan plan;
  plan.parallel = options.parallel;
  plan.rpc_timeout = context.timeout;
  plan.per_target_timeout = context.timeout + *extra;
  plan.json = options.json;
  return command.RunOnMany(selection, plan, context);
}

}  // namespace memprof::cli
