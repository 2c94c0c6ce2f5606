# shellcheck shell=bash
# The package test's checks that run inside the Debian root, with only what
# the packages pulled in (plus the compilers check_examples installs).
# Sourced by tests/package/package_test.sh through `chroot ... bash -c`.

# Fails the check.
die() {
  echo "package test (in the root): FAIL: $*" >&2
  exit 1
}

# wait_until SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds.
wait_until() {
  local seconds="$1" what="$2" deadline
  shift 2
  deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "${what}: not within ${seconds}s"
    sleep 0.2
  done
}

# Whether `memprofctl list` shows PID.
listed() { memprofctl list | awk -v pid="$1" '$1 == pid { found = 1 } END { exit !found }'; }

# Whether the report of a fresh dump of PID names the demo's leak (polled:
# each dump replaces the last, --force).
profile_names_the_leak() {
  local pid="$1" dump="$2"
  memprofctl dump --pid "${pid}" --out "${dump}" --force &&
    memprofctl report "${dump}" --top 20 | grep 'SessionRegistry::LeakSession' >/dev/null
}

# Stops PID with SIGTERM and expects exit status 0.
stop_and_reap() {
  local pid="$1" status=0
  kill -TERM "${pid}"
  wait "${pid}" || status=$?
  ((status == 0)) || die "pid ${pid} exited with status ${status}"
}

# check_demo DEMO SECONDS: the README's session, with the packaged memprofctl.
check_demo() {
  local demo="$1" seconds="$2" pid dump=/tmp/demo.heap
  command -v memprofctl | grep -x /usr/bin/memprofctl >/dev/null || die "memprofctl is not /usr/bin/memprofctl"
  memprofctl run -- "${demo}" &
  pid=$!
  trap 'kill -KILL '"${pid}"' 2>/dev/null || true' EXIT
  wait_until "${seconds}" "the agent in memprof-demo (pid ${pid}) answering" \
    memprofctl status --pid "${pid}"
  grep -q /usr/lib/x86_64-linux-gnu/libmemprof_agent.so "/proc/${pid}/maps" ||
    die "memprof-demo did not get the installed agent preloaded"
  memprofctl list
  listed "${pid}" || die "memprofctl list does not show pid ${pid}"
  memprofctl activate --pid "${pid}" --for 5m
  wait_until "${seconds}" "a dump of pid ${pid} naming SessionRegistry::LeakSession" \
    profile_names_the_leak "${pid}" "${dump}"
  memprofctl report "${dump}" --top 10
  stop_and_reap "${pid}"
  trap - EXIT
}

# serve_and_list PROGRAM SECONDS: starts PROGRAM (packaging/examples'
# agent_example), which serves until its stdin ends; expects `memprofctl list`
# to show it, then ends its stdin and expects exit status 0.
serve_and_list() {
  local program="$1" seconds="$2" fifo=/tmp/example-stdin pid status=0
  rm -f "${fifo}"
  mkfifo "${fifo}"
  "${program}" <"${fifo}" &
  pid=$!
  exec 3>"${fifo}"
  wait_until "${seconds}" "${program} (pid ${pid}) in memprofctl list" listed "${pid}"
  memprofctl status --pid "${pid}"
  exec 3>&-
  wait "${pid}" || status=$?
  ((status == 0)) || die "${program} exited with status ${status}"
  rm -f "${fifo}"
}

# check_examples DIR SECONDS: packaging/examples/ built both ways a user would.
check_examples() {
  local dir="$1" seconds="$2"
  echo "pkg-config --cflags --libs memprof-agent: $(pkg-config --cflags --libs memprof-agent)"
  # shellcheck disable=SC2046  # pkg-config's flags are separate words
  cc -Wall -Wextra -Werror "${dir}/agent_example.c" $(pkg-config --cflags --libs memprof-agent) \
    -o /tmp/example-pkg-config
  cmake -S "${dir}" -B /tmp/example-cmake >/dev/null
  cmake --build /tmp/example-cmake
  local program
  for program in /tmp/example-pkg-config /tmp/example-cmake/agent_example; do
    # /lib is /usr/lib on Debian 12 (merged /usr): ldd may name either.
    ldd "${program}" | grep -E 'libmemprof_agent\.so\.0 => (/usr)?/lib/x86_64-linux-gnu/libmemprof_agent\.so\.0' >/dev/null ||
      die "${program} does not load the installed libmemprof_agent.so.0"
    serve_and_list "${program}" "${seconds}"
  done
}

# --- man page and shell completion --------------------------------------------
# Checks of what the package installs for the shell and man(1); add more here.
# Each one runs only when the package holds the file, so that the test passes
# before the files exist.

check_man_page() {
  local page=/usr/share/man/man1/memprofctl.1.gz
  dpkg -L memprof | grep -xF "${page}" >/dev/null || { echo "no ${page} in the package: skipped"; return 0; }
  apt-get install -y -q --no-install-recommends man-db >/dev/null
  local text
  text="$(MANWIDTH=80 man -P cat memprofctl 2>&1)" || die "man memprofctl failed: ${text}"
  grep -q 'memprofctl' <<<"${text}" || die "man memprofctl renders no text naming memprofctl"
  echo "man memprofctl: $(wc -l <<<"${text}") lines"
}

# Prints what bash completion offers for the words "$@" (the last one being
# completed), the way bash calls a completion function.
bash_completions() {
  # shellcheck disable=SC1091
  source /usr/share/bash-completion/bash_completion
  # shellcheck disable=SC1091
  source /usr/share/bash-completion/completions/memprofctl
  local spec function
  spec="$(complete -p memprofctl)"
  function="$(sed -n 's/.*-F \([^ ]*\).*/\1/p' <<<"${spec}")"
  [[ -n "${function}" ]] || die "no completion function for memprofctl (${spec})"
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMP_LINE="$*"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  "${function}" memprofctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  printf '%s\n' "${COMPREPLY[@]}"
}

check_bash_completion() {
  local script=/usr/share/bash-completion/completions/memprofctl
  dpkg -L memprof | grep -xF "${script}" >/dev/null || { echo "no ${script} in the package: skipped"; return 0; }
  apt-get install -y -q --no-install-recommends bash-completion >/dev/null
  local offered
  # bash-completion is not written for set -eu.
  offered="$(set +eu +o pipefail; bash_completions memprofctl st)"
  echo "memprofctl st<TAB>: ${offered//$'\n'/ }"
  grep -qx stats <<<"${offered}" || die "memprofctl st<TAB> does not offer stats"
  grep -qx status <<<"${offered}" || die "memprofctl st<TAB> does not offer status"
}

check_docs_and_completion() {
  check_man_page
  check_bash_completion
}
