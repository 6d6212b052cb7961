#!/bin/sh
# expect.sh EXIT REGEX CMD...: runs CMD, shows its output, and passes only if
# it exited with EXIT ("0" or "nonzero") and printed a line matching REGEX.
want=$1; regex=$2; shift 2
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ "$want" = 0 ] && [ $rc -ne 0 ]; then echo "expect.sh: exit $rc, wanted 0"; exit 1; fi
if [ "$want" = nonzero ] && [ $rc -eq 0 ]; then echo "expect.sh: exit 0, wanted non-zero"; exit 1; fi
printf '%s\n' "$out" | grep -Eq -- "$regex" || { echo "expect.sh: no line matches /$regex/"; exit 1; }
exit 0
