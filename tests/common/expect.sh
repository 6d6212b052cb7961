#!/bin/sh
# expect.sh [-m REGEX]... [-x REGEX]... EXIT REGEX CMD...
# Runs CMD, shows its output (stdout and stderr), and passes only if CMD
# exited with EXIT ("0", "nonzero" or a number), printed a line matching
# REGEX and one matching each -m REGEX, and no line matching an -x REGEX
# (extended regular expressions, grep -E). The exit status is always
# checked: ctest's PASS_REGULAR_EXPRESSION would replace that check.
# CMD exiting 77 (skipped) where EXIT is not 77 exits 77: a skip stays one.
must="" mustnot=""
nl='
'
while [ $# -gt 0 ]; do
  case $1 in
    -m) must="$must$2$nl"; shift 2 ;;
    -x) mustnot="$mustnot$2$nl"; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 3 ] || { echo "usage: expect.sh [-m REGEX]... [-x REGEX]... EXIT REGEX CMD..." >&2; exit 2; }
want=$1; must="$must$2$nl"; shift 2
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ $rc -eq 77 ] && [ "$want" != 77 ]; then echo "expect.sh: exit 77: skipped"; exit 77; fi
case $want in
  nonzero) [ $rc -ne 0 ] || { echo "expect.sh: exit 0, wanted non-zero"; exit 1; } ;;
  *) [ $rc -eq "$want" ] || { echo "expect.sh: exit $rc, wanted $want"; exit 1; } ;;
esac
fail=0
set -f # the patterns are not file names
IFS=$nl
for re in $must; do
  printf '%s\n' "$out" | grep -Eq -- "$re" || { echo "expect.sh: no line matches /$re/"; fail=1; }
done
for re in $mustnot; do
  printf '%s\n' "$out" | grep -Eq -- "$re" && { echo "expect.sh: a line matches /$re/"; fail=1; }
done
exit $fail
