#!/usr/bin/env bash
# Model-checks conn_fifo.pml with spin: the model must hold (assertions, and
# the liveness claim under weak fairness), and two broken variants must not
# (a slot reused one step early; a send proxy that never frees a slot), so
# the claims are known to bite.   spin_check.sh MODEL WORKDIR
set -euo pipefail
model="$(realpath "$1")" work="$2"
rm -rf "$work" && mkdir -p "$work" && cd "$work"

errors() { # model file -> pan's error count (0: every claim holds)
  spin -a "$1" >/dev/null
  gcc -O2 -w -DNFAIR=3 -o pan pan.c
  ./pan -a -f >"$1.out" 2>&1 || true
  grep -E "errors:|assertion violated|acceptance cycle|states, stored" "$1.out" | sed "s|^|  $(basename "$1"): |" >&2
  sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$1.out" | head -1
}

sed 's/wait_or_abort(sendHead + STEPS > k);/wait_or_abort(sendHead + STEPS + 1 > k);/' "$model" >early_reuse.pml
sed "s/^     sendHead = done\$/     sendHead = 0/" "$model" >stuck_proxy.pml
cp "$model" model.pml

[ "$(errors model.pml)" = 0 ] || { echo "FAIL: the model violates a claim (see model.pml.out)"; exit 1; }
[ "$(errors early_reuse.pml)" != 0 ] || { echo "FAIL: early slot reuse went unnoticed"; exit 1; }
[ "$(errors stuck_proxy.pml)" != 0 ] || { echo "FAIL: a stuck proxy went unnoticed"; exit 1; }
echo "conn_fifo.pml: safety and liveness hold; both broken variants are caught"
