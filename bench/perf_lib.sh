# Shell helpers of the benchmark scripts that drive mkccl-perf (source it).

# Sizes in bytes from $1 to $2 (IEC suffixes: 1M), times $3 each step.
perf_sizes() {
  local s e
  s=$(numfmt --from=iec "$1")
  e=$(numfmt --from=iec "$2")
  while (( s <= e )); do echo "$s"; s=$(( s * $3 )); done
}

# The out-of-place "time busbw #wrong" of the first row in mkccl-perf's
# log $1, the run's exit code $2; "- - -" (and the log's tail on stderr,
# under the heading $3) when it failed or printed no row.
perf_row() {
  local log=$1 rc=$2 what=$3 row
  row=$(awk '!/^#/ && NF >= 9 {print $6, $8, $9; exit}' "$log")
  if [[ $rc != 0 || -z $row ]]; then
    echo "# $what exited $rc:" >&2
    sed 's/^/#   /' "$log" | tail -5 >&2
    row="- - -"
  fi
  echo "$row"
}

# $2 over $1 as "1.23x", "-" when either is not a positive number.
perf_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", b / a; else print "-" }'; }
