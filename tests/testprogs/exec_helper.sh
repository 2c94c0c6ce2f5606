#!/bin/sh
# A helper script that a service (exec_host) runs: it runs a program, as
# scripts do, and then replaces itself with another one (exec in place).
#   exec_helper.sh EXEC_HELPER
set -eu
echo "script start"
"$1" alloc
exec "$1" alloc
