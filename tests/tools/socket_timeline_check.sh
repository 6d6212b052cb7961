#!/bin/sh
# tools/bench/socket_timeline.patch still applies to this tree, and
# tools/bench/socket_timeline.py reads the stage times it writes: three
# messages with known times give known medians.
#   socket_timeline_check.sh SOURCE_DIR patch|script
set -eu
src=$1
case $2 in
  patch)
    if ! command -v git >/dev/null 2>&1 || ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
      echo "skip: socket_timeline_check: not a git checkout" >&2
      exit 77
    fi
    git -C "$src" apply --check "$src/tools/bench/socket_timeline.patch"
    echo "socket_timeline.patch applies"
    ;;
  script)
    d=$(mktemp -d)
    trap 'rm -rf "$d"' EXIT
    b=1000000
    for seq in 0 1 2; do
      # send: isend, header written, -, -, helper's first try, first bytes, all sent, test done
      echo "S a $seq 131072 $b $((b + 4000)) 0 0 $((b + 1000)) $((b + 31000)) $((b + 31000)) $((b + 32000))" >>"$d/tl-1.txt"
      # receive: irecv, header read, matched, -, helper's first try, first bytes, all received, test done
      echo "R a $seq 131072 $((b - 50000)) $((b + 9000)) $((b + 9200)) 0 $((b + 10000)) $((b + 25000)) $((b + 38000)) $((b + 39000))" >>"$d/tl-2.txt"
    done
    out=$(python3 "$src/tools/bench/socket_timeline.py" "$d" 0)
    echo "$out"
    for want in "# 3 matched messages" \
                "S helper first try -> first bytes (S5-S4)  p10    30.0  med    30.0" \
                "R irecv posted before isend (S0-R0)        p10    50.0" \
                "S all sent -> R all received (R6-S6)       p10     7.0" \
                "isend -> R test done (R7-S0)               p10    39.0  med    39.0  p90    39.0"; do
      echo "$out" | grep -qF "$want" || { echo "missing: $want"; exit 1; }
    done
    ;;
  *) echo "usage: socket_timeline_check.sh SOURCE_DIR patch|script" >&2; exit 2 ;;
esac
