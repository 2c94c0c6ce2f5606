#!/usr/bin/env bash
# names_build_path (build_paths.sh) on files made here: a checkout at a short
# common path (/src) is found where an installed file really names it, and
# only there.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tests/package/build_paths.sh
source "${here}/build_paths.sh"

work="$(mktemp -d -t memprof-build-paths.XXXXXX)"
trap 'rm -rf "${work}"' EXIT
failures=0
cases=0

# expect WANT TEXT DIR...: WANT is "names" or "clean".
expect() {
  local want="$1" text="$2"
  shift 2
  printf 'padding\n%s\n' "${text}" >"${work}/file"
  cases=$((cases + 1))
  local got=clean
  if names_build_path "${work}/file" "$@"; then got=names; fi
  if [[ "${got}" != "${want}" ]]; then
    echo "FAIL: '${text}' with $*: ${got}, want ${want}"
    failures=$((failures + 1))
  fi
}

expect names "/src" /src
expect names "/src/cli/main.cc" /src
expect names "-I/src/common" /src
expect names "file=/src/x.cc:12" /src
expect names "/build/cli/memprofctl" /src /build
expect names "/tmp/ci check/build/x.o" "/tmp/ci check/build"
expect names "/src/" /src/
expect clean "/usr/src/linux-headers" /src
expect clean "/srcdir/a" /src
expect clean "./src/core/lib/gprpp/ref_counted.h" /src
expect clean "../src/x.cc" /src
expect clean "third_party/src/x.cc" /src
expect clean "/src.orig" /src
expect clean "/usr/lib/x86_64-linux-gnu/libc.so.6" /src /app /build
expect clean "GCC: (Debian 12.2.0-14) 12.2.0" /src
# Regex characters in a directory are taken literally.
expect clean "/opt/aXb/c" /opt/a.b
expect names "/opt/a.b/c" /opt/a.b
expect names "see /src/README" /src

echo "build_paths_test: $((cases - failures)) passed, ${failures} failed"
((failures == 0))
