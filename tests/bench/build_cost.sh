#!/usr/bin/env bash
# CPU and wall time of building the product (memprofctl and both halves of
# the agent) from nothing, file by file against unity batches
# (MEMPROF_UNITY_BUILD), in fresh Ninja directories without ccache.
#
#   bash tests/bench/build_cost.sh [SCRATCH_DIR]
#
# The generated protobuf code is built first and not timed: both sides need
# it alike. Prints one line per side: CPU (user, sys) and wall seconds.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
scratch="${1:-$(mktemp -d -t memprof-build-cost.XXXXXX)}"
trap 'rm -rf "${scratch}"' EXIT
command -v ninja >/dev/null || { echo "build_cost.sh: needs ninja (apt-get install ninja-build)" >&2; exit 1; }
for unity in OFF ON; do
  dir="${scratch}/unity-${unity}"
  cmake -S "${root}" -B "${dir}" -GNinja -DMEMPROF_UNITY_BUILD="${unity}" >/dev/null
  CCACHE_DISABLE=1 ninja -C "${dir}" -j"$(nproc)" memprof_proto memprof_pprof_proto >/dev/null
  CCACHE_DISABLE=1 /usr/bin/time -f "MEMPROF_UNITY_BUILD=${unity}: %U s user, %S s sys, %e s wall" \
    ninja -C "${dir}" -j"$(nproc)" memprofctl memprof_agent memprof_agent_server >/dev/null
  rm -rf "${dir}"
done
