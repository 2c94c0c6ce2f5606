# shellcheck shell=bash
# Whether a file names a build or source directory: sourced by the package
# test (package_test.sh) and tested on its own (build_paths_test.sh).
#
#   names_build_path FILE DIR...    exit 0 when FILE's strings name a DIR
#
# A directory counts only as a whole path of its own: /src matches "/src",
# "/src/cli/main.cc" and "-I/src/common", not "/usr/src/linux" or
# "/srcdir", so that a checkout at a short common path (/src, /app, /build:
# containers) fails only for a real leak.

# build_path_regex DIR...: an extended regex that matches any DIR as whole
# path components.
build_path_regex() {
  local dir escaped alternatives=()
  for dir in "$@"; do
    escaped="$(printf '%s' "${dir%/}" | sed 's/[][\.*^$+?(){}|]/\\&/g')"
    alternatives+=("${escaped}")
  done
  local joined
  joined="$(IFS='|'; echo "${alternatives[*]}")"
  # Before: the start of a word (of a line, or after a blank or one of
  # :=,;"'( ), and at most a compiler option's letters, so that "-I/src"
  # counts, and "/usr/src" or "./src" (gRPC's own relative file names) do
  # not; after: the end, a slash, or a character that cannot be part of a
  # file name.
  local word_start="(^|[[:space:]:=,;\"'(])" word_head="(-[[:alpha:]]+)?"
  printf '%s%s(%s)($|/|[^[:alnum:]_.+~-])' "${word_start}" "${word_head}" "${joined}"
}

names_build_path() {
  local file="$1"
  shift
  strings -a "${file}" | grep -E -e "$(build_path_regex "$@")" >/dev/null
}
