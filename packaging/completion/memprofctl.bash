# bash completion for memprofctl(1): commands, each command's options, the
# values of --format and of run's --allocator, files and directories where
# an option takes one, and the pids of the processes with an agent after
# --pid (from `memprofctl list --json`, so MEMPROF_SOCKET_DIR is honoured).
#
# Kept in step with the CLI by tests/docs/completion_test.cc, which compares
# every command and option here with `memprofctl --help` and
# `memprofctl COMMAND --help`.

_memprofctl_commands='list status activate deactivate dump profile stats doctor purge exporter report run attach help version'
_memprofctl_globals='-h --help --version -v --verbose -q --quiet --timeout --config'
_memprofctl_targets='--pid --all --name --targets --target --tls-ca --tls-cert --tls-key --parallel'

# The options of command $1, besides the global ones.
_memprofctl_options() {
  case $1 in
    list) echo '--json --prune --no-prune' ;;
    status) echo "$_memprofctl_targets --json" ;;
    activate) echo "$_memprofctl_targets --for --sample-interval --reset --capture-growth --capture-near-limit --keep --json" ;;
    deactivate) echo "$_memprofctl_targets --json" ;;
    dump) echo "$_memprofctl_targets -o --out --force --out-dir --every --count --captured --follow -f --format --json" ;;
    profile) echo "$_memprofctl_targets --duration -o --out --force --out-dir -f --format --json --allocations --record-bound" ;;
    stats) echo "$_memprofctl_targets --json --raw -f --format --watch --count" ;;
    doctor | purge) echo "$_memprofctl_targets --json" ;;
    exporter) echo '--listen --allow-remote --target-timeout --captures-dir' ;;
    attach) echo '-p --pid --dry-run --json' ;;
    report)
      echo '--inuse-space --inuse-objects --alloc-space --alloc-objects --base --focus --ignore' \
        '--top --show-bytes --cum --lines --nearest-symbol --pid --sysroot -f --format --json -o' \
        '--out --force --trend --lifetimes --no-cache'
      ;;
    run | help | version) ;;
  esac
}

# The values of --format for command $1.
_memprofctl_formats() {
  case $1 in
    dump | profile) echo 'heap text collapsed pprof svg json' ;;
    stats) echo 'table json raw prometheus' ;;
    report) echo 'text collapsed pprof svg json' ;;
  esac
}

# The pids of the processes with an agent, as memprofctl ($1) lists them.
_memprofctl_pids() {
  "$1" list --json 2>/dev/null | grep -o '"pid": *[0-9]*' | grep -o '[0-9]*$'
}

# Completes the value of option $1 of command $2; fails if $1 takes none.
_memprofctl_value() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  case $1 in
    -p | --pid)
      [[ $2 == report ]] && return 0 # the pid a dump came from: may be gone
      if [[ $2 == attach ]]; then # any process: it has no agent yet
        mapfile -t COMPREPLY < <(compgen -W "$(cd /proc && compgen -G '[0-9]*')" -- "$cur")
        return 0
      fi
      mapfile -t COMPREPLY < <(compgen -W "$(_memprofctl_pids "${COMP_WORDS[0]}")" -- "$cur")
      ;;
    -f | --format) mapfile -t COMPREPLY < <(compgen -W "$(_memprofctl_formats "$2")" -- "$cur") ;;
    -o | --out | --base | --targets | --tls-ca | --tls-cert | --tls-key | --config)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      ;;
    --out-dir | --sysroot | --captures-dir)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -d -- "$cur")
      ;;
    --timeout | --for | --sample-interval | --capture-growth | --capture-near-limit | --keep | --every | --count | \
      --duration | --watch | \
      --listen | --target-timeout | --name | --target | --parallel | --focus | --ignore | --top)
      ;; # free-form values: nothing to offer
    *) return 1 ;;
  esac
  return 0
}

_memprofctl() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local i command='' command_at=0
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      --timeout | --config) ((i++)) ;; # a global option and its value
      -*) ;;
      *)
        command=${COMP_WORDS[i]} command_at=$i
        break
        ;;
    esac
  done
  if [[ $command == run ]]; then
    # `run [--allocator NAME] [--] CMD ARGS...`: the program, then its own arguments.
    local first=$((command_at + 1)) run_options='-h --help --allocator'
    if [[ ${COMP_WORDS[first]} == --allocator ]] && ((COMP_CWORD > first)); then
      if ((COMP_CWORD == first + 1)); then
        mapfile -t COMPREPLY < <(compgen -W 'jemalloc tcmalloc' -- "$cur")
        return 0
      fi
      ((first += 2))
      run_options=''
    fi
    [[ ${COMP_WORDS[first]} == -- ]] && ((first++))
    if ((COMP_CWORD == first)) && [[ $cur == -* && ${COMP_WORDS[first - 1]} != -- ]]; then
      mapfile -t COMPREPLY < <(compgen -W "$run_options" -- "$cur")
    elif ((COMP_CWORD == first)); then
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -c -- "$cur")
    elif ((COMP_CWORD > first)); then
      compopt -o default 2>/dev/null
    fi
    return 0
  fi
  _memprofctl_value "$prev" "$command" && return 0
  if [[ -z $command ]]; then
    if [[ $cur == -* ]]; then
      mapfile -t COMPREPLY < <(compgen -W "$_memprofctl_globals" -- "$cur")
    else
      mapfile -t COMPREPLY < <(compgen -W "$_memprofctl_commands" -- "$cur")
    fi
  elif [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_memprofctl_options "$command") $_memprofctl_globals" -- "$cur")
  elif [[ $command == help ]] && ((COMP_CWORD == command_at + 1)); then
    mapfile -t COMPREPLY < <(compgen -W "$_memprofctl_commands" -- "$cur") # help COMMAND
  elif [[ $command == report ]]; then
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur") # the dumps
  fi
  return 0
}

complete -F _memprofctl memprofctl
