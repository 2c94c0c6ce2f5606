#!/usr/bin/zsh -f
# Prints the completions zsh offers for a command line, one per line:
#   zsh -f zsh_complete.zsh FPATH_DIR 'memprofctl st'
# It runs an interactive zsh in a pseudo-terminal (zpty) with compinit and
# the completion functions in FPATH_DIR, types the line and a TAB, and
# prints every match that reaches compadd. Exits 3 when zsh cannot be driven.
# Used by tests/docs/completion_test.cc, which bounds it with a deadline.
emulate -L zsh
zmodload zsh/zpty || exit 3
local fpath_dir=$1 line=$2 out

# The prompt is "RDY> "; the echo of what is typed never contains that.
zpty z zsh -f -i || exit 3
Send() {
  zpty -w z "$1"
  zpty -r z out '*RDY> ' || exit 3
}
Send "PS1='R''DY> ' PROMPT_EOL_MARK='' fpath=(${(q)fpath_dir} \$fpath)"
Send 'autoload -Uz compinit && compinit -u -D'
# Every word a completion function offers passes through compadd: print it
# as a "HIT:" line instead of adding it (so nothing is inserted or listed).
Send 'compadd() {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
  local -a hits; builtin compadd -A hits "$@"
  local hit; for hit in $hits; do print -r -- "HIT:$hit"; done
  return 1
}'
zpty -w -n z "$line"$'\t'
zpty -w z $'\C-u'"print -r -- EN''D_MARK"
zpty -r z out '*END_MARK*' || exit 3
zpty -d z
# A hit may follow the echo of the typed line on the same terminal line.
local l
for l in ${(f)out//$'\r'/}; do
  [[ $l == *HIT:* ]] && print -r -- "${l##*HIT:}"
done
exit 0
