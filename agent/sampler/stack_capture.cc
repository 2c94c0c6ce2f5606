#include "agent/sampler/stack_capture.h"

#include <unwind.h>

namespace memprof::agent {
namespace {

struct Walk {
  uintptr_t* frames;
  int max;
  int skip;
  int depth;
};

_Unwind_Reason_Code OnFrame(_Unwind_Context* context, void* arg) {
  auto* walk = static_cast<Walk*>(arg);
  const uintptr_t ip = _Unwind_GetIP(context);
  if (ip == 0) return _URC_END_OF_STACK;
  if (walk->skip > 0) {
    --walk->skip;
    return _URC_NO_REASON;
  }
  walk->frames[walk->depth++] = ip;
  return walk->depth < walk->max ? _URC_NO_REASON : _URC_END_OF_STACK;
}

}  // namespace

__attribute__((noinline)) int CaptureStack(uintptr_t* frames, int max, int skip) {
  if (max <= 0) return 0;
  // +1: _Unwind_Backtrace's first frame is this function.
  Walk walk{frames, max, skip + 1, 0};
  _Unwind_Backtrace(OnFrame, &walk);
  return walk.depth;
}

bool PrepareStackCapture() {
  uintptr_t frames[8];
  return CaptureStack(frames, 8, 0) > 0;
}

}  // namespace memprof::agent
