# shellcheck shell=bash
# Stage `build`: configure and build ./build (warnings are errors).
# Sourced by dev.sh (the dispatcher), after .ci/stages/common.sh.

# Configures and builds everything, or only the given CMake targets.
cmd_build() {
  section "Build (${BUILD_DIR})${*:+: $*}"
  local settings
  mapfile -t settings < <(new_build_dir_settings "${BUILD_DIR}")
  cmake -S "${ROOT}" -B "${BUILD_DIR}" -DMEMPROF_WERROR=ON "${settings[@]}"
  local targets=()
  (($# == 0)) || targets=(--target "$@")
  cmake --build "${BUILD_DIR}" -j"$(nproc)" "${targets[@]}"
}
