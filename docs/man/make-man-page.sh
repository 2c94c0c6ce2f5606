#!/bin/sh
# Makes one memprofctl man page from the CLI's own help, so the options in the
# page are exactly those of the binary:
#
#   make-man-page.sh MEMPROFCTL COMMAND INCLUDE_DIR OUT.1.gz
#
# COMMAND "-" makes memprofctl(1) (from `memprofctl --help`); a command name
# makes memprofctl-COMMAND(1) (from `memprofctl COMMAND --help`). help2man
# turns the help into roff; INCLUDE_DIR/memprofctl[-COMMAND].h2m, if there is
# one, adds what the help does not say (FILES, longer notes). SEE ALSO is
# made here from the command list of `memprofctl --help`. The page is written
# with gzip -9n (no name, no time stamp; help2man takes the date from
# SOURCE_DATE_EPOCH): the same sources make the same bytes.
set -eu
memprofctl=$1 command=$2 include_dir=$3 out=$4

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$command" = - ]; then
  page=memprofctl
  command=
else
  page=memprofctl-$command
fi

# help2man runs a program with --help: a wrapper named like the page runs the
# command, marks two headings as sections of their own for help2man
# ("*Name*"; it knows Options and Environment by itself) and leaves out the
# examples, which help2man would fill as prose: they go in verbatim below.
program=$work/$page
cat >"$program" <<WRAPPER
#!/bin/sh
"$memprofctl" $command "\$@" | awk '
  /^Examples:\$/ { exit }
  /^Commands:\$/ { print "*Commands*"; next }
  /^Exit codes:\$/ { print "*Exit status*"; next }
  { print }'
WRAPPER
chmod +x "$program"

# EXAMPLES: the help's examples as they are (up to the first blank line),
# in roff's no-fill mode with hyphens and backslashes escaped.
examples=$work/examples.h2m
{
  printf '[=EXAMPLES]\n.nf\n'
  "$memprofctl" ${command:+"$command"} --help | awk '/^Examples:$/ { e = 1; next } e && /^$/ { exit } e' |
    sed -e 's/^  //' -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^[.']/\\\\\&&/"
  printf '.fi\n'
} >"$examples"
version=$("$memprofctl" --version | sed 's/^memprofctl //')

# NAME: the one-line description the help starts with (the command's, or for
# memprofctl(1) the text after "memprofctl - " up to the first colon).
name=$("$program" --help | sed -n '1{s/^memprofctl - //;s/:.*//;s/^[A-Z]/\L&/;p;}')

# SEE ALSO: the command pages from memprofctl(1), memprofctl(1) from them.
see_also=$work/see-also.h2m
{
  echo '[SEE ALSO]'
  if [ -z "$command" ]; then
    "$memprofctl" --help | sed -n '/^Commands:$/,/^$/s/^  \([a-z][a-z-]*\)  .*/.BR memprofctl\\-\1 (1),/p'
  else
    echo '.BR memprofctl (1),'
  fi
  echo '.BR memprof\-agent (7)'
} >"$see_also"

set -- --no-info --section=1 --name="$name" --version-string="$version" \
  --include="$see_also" --include="$examples"
if [ -f "$include_dir/$page.h2m" ]; then
  set -- "$@" --include="$include_dir/$page.h2m"
fi
help2man "$@" --output="$work/$page.1" "$program"
gzip -9n -c "$work/$page.1" >"$out.tmp"
mv "$out.tmp" "$out"
