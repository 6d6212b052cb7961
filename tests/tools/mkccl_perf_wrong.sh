#!/bin/sh
# mkccl_perf_wrong.sh RUN PERF: mkccl-perf counts the wrong values of every
# rank. With one wrong element in each checked result of the last of 3
# ranks (--corrupt 2) every row says 1 in both #wrong columns, the footer
# says 8 FAILED (4 sizes x 2) and the run exits non-zero; without it, every
# row says 0, the footer 0 OK, and the run exits 0.
run=$1
perf=$2
args="all_reduce -b 8 -e 4096 -f 8 -c 1 -n 2 -w 1"
row() { # the table rows whose two #wrong columns are $1
  grep -cE "^ +[0-9]+ +[0-9]+ +float +sum +-1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +$1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +$1\$"
}
fail() { echo "mkccl_perf_wrong.sh: $*"; exit 1; }

out=$("$run" -n 3 -- "$perf" $args --corrupt 2 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -ne 0 ] || fail "exit 0 with a wrong value on rank 2"
n=$(printf '%s\n' "$out" | row 1)
[ "$n" = 4 ] || fail "$n of 4 rows count rank 2's wrong element in both placements"
printf '%s\n' "$out" | grep -q '^# Out of bounds values : 8 FAILED$' || fail "the footer does not say 8 FAILED"

out=$("$run" -n 3 -- "$perf" $args 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || fail "exit $rc with no wrong value"
n=$(printf '%s\n' "$out" | row 0)
[ "$n" = 4 ] || fail "$n of 4 rows say 0 wrong elements"
printf '%s\n' "$out" | grep -q '^# Out of bounds values : 0 OK$' || fail "the footer does not say 0 OK"
exit 0
