#!/bin/sh
# Runs a command for ctest and checks both its exit code and its output.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#
# usage: expect-output.sh REGEX COMMAND [ARG]...
# Passes COMMAND's output through and exits with COMMAND's exit code; if that is 0
# but no line of the output matches the extended regular expression REGEX, exits 1.
# (ctest's PASS_REGULAR_EXPRESSION alone ignores the exit code: a crash after the
# expected line would pass.)
regex="$1"
shift
out="$("$@" 2>&1)"
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 0 ]; then
  echo "expect-output: '$1' exited with $rc" >&2
  exit "$rc"
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
  echo "expect-output: no line of the output of '$1' matches '$regex'" >&2
  exit 1
fi
