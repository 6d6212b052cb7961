#!/usr/bin/env bash
# Builds NVIDIA's nccl-tests programs (all_reduce_perf ... sendrecv_perf)
# OUTSIDE this repository, from an unchanged copy of their sources, against
# one nccl.h and one libnccl.so.2. No NVIDIA code is in this repository:
# tools/gpu/pack.sh copies the sources (/tmp/nccl-tests-src, its SOURCES.txt
# says which file came from which commit) into .carry/nccl-tests-src.
#
# Usage: tools/gpu/nccl_tests_build.sh SRC NCCL_INCLUDE_DIR NCCL_LIB_DIR BUILD_DIR [PROGRAMS...]
#   SRC               holds src/*.cu, src/timer.{cc,h}, verifiable/verifiable.{cu,h}
#   NCCL_INCLUDE_DIR  the nccl.h the programs are compiled against
#   NCCL_LIB_DIR      the libnccl.so.2 they are linked against (at run time
#                     LD_LIBRARY_PATH picks the library: NCCL's or mkccl's)
#   PROGRAMS          default: all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv
# Env: NVCC (default: /usr/local/cuda/bin/nvcc, else nvcc on PATH), CUDA_LIB
#   (default: <nvcc>/../lib64), NT_GENCODE (default: sm_90 only), NT_JOBS
#   (default: nproc), CXX (default g++).
# The commands mirror nccl-tests' Makefile and verifiable/verifiable.mk
# (nvcc -ccbin g++ <gencode> -std=c++11 -O3 -g; timer.cc with the host
# compiler; link -lcudart -lrt -lnccl), with direct calls so that only the
# asked-for programs are built, in parallel. Exit 0 only if every program
# was built.
set -uo pipefail
if (($# < 4)); then
  sed -n '2,20p' "$0" >&2
  exit 2
fi
SRC=$(realpath "$1") INC=$(realpath "$2") LIB=$(realpath "$3") B=$4
shift 4
PROGS=("$@")
((${#PROGS[@]})) || PROGS=(all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv)
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
[[ -x $NVCC ]] || NVCC=$(command -v nvcc) || { echo "nccl_tests_build: no nvcc" >&2; exit 1; }
CUDA_LIB=${CUDA_LIB:-$(dirname "$(dirname "$(realpath "$NVCC")")")/lib64}
GENCODE=${NT_GENCODE:--gencode=arch=compute_90,code=sm_90}
JOBS=${NT_JOBS:-$(nproc)}
CXX=${CXX:-g++}

for f in "$INC/nccl.h" "$LIB/libnccl.so.2" "$SRC/src/common.cu" "$SRC/src/timer.cc" "$SRC/verifiable/verifiable.cu"; do
  [[ -e $f ]] || { echo "nccl_tests_build: missing $f" >&2; exit 1; }
done
for p in "${PROGS[@]}"; do
  [[ -e $SRC/src/$p.cu ]] || { echo "nccl_tests_build: missing $SRC/src/$p.cu" >&2; exit 1; }
done
ver=$(awk '/^#define NCCL_(MAJOR|MINOR|PATCH) /{printf "%s%s", sep, $3; sep="."}' "$INC/nccl.h")
echo "nccl-tests: building ${PROGS[*]} against $INC/nccl.h (NCCL $ver), $LIB/libnccl.so.2; $NVCC $GENCODE; -j$JOBS"

rm -rf "$B"
mkdir -p "$B/obj"
NVCUFLAGS=(-ccbin "$CXX" $GENCODE -std=c++11 -O3 -g -I"$INC")
# One line per object: compiler, output, input. timer.cc goes to the host
# compiler (nccl-tests' Makefile does so: nvcc hits an ICE with some GCCs).
{
  echo "cxx $B/obj/timer.o $SRC/src/timer.cc"
  echo "nvcc $B/obj/verifiable.o $SRC/verifiable/verifiable.cu"
  echo "nvcc $B/obj/common.o $SRC/src/common.cu"
  for p in "${PROGS[@]}"; do echo "nvcc $B/obj/$p.o $SRC/src/$p.cu"; done
} > "$B/objects.txt"
compile() { # kind, out, in
  local log="$2.log"
  if [[ $1 == cxx ]]; then
    "$CXX" -std=c++11 -O3 -g -o "$2" -c "$3" > "$log" 2>&1
  else
    "$NVCC" "${NVCUFLAGS[@]}" -Xcompiler -fPIC -o "$2" -c "$3" > "$log" 2>&1
  fi
  local rc=$?
  ((rc == 0)) || { echo "FAILED ($rc): $3"; sed 's/^/    /' "$log" | head -30; }
  return $rc
}
export -f compile
export NVCC CXX
export NVCUFLAGS_STR="${NVCUFLAGS[*]}"
t0=$SECONDS
# xargs runs each line through a fresh bash; the flags travel as one string.
xargs -P "$JOBS" -L 1 bash -c 'NVCUFLAGS=($NVCUFLAGS_STR); compile "$@"' _ < "$B/objects.txt"
crc=$?
echo "nccl-tests: compiled in $((SECONDS - t0)) s (rc=$crc)"
((crc == 0)) || exit 1

for p in "${PROGS[@]}"; do  # links in parallel too
  "$NVCC" "${NVCUFLAGS[@]}" -o "$B/${p}_perf" "$B/obj/$p.o" "$B/obj/common.o" "$B/obj/timer.o" "$B/obj/verifiable.o" \
    -L"$CUDA_LIB" -lcudart -lrt -L"$LIB" -l:libnccl.so.2 > "$B/${p}_perf.link.log" 2>&1 &
done
wait
built=0
for p in "${PROGS[@]}"; do
  if [[ -x $B/${p}_perf ]]; then
    built=$((built + 1))
  else
    echo "FAILED to link ${p}_perf:"; sed 's/^/    /' "$B/${p}_perf.link.log" | head -30
  fi
done
echo "nccl-tests: $built of ${#PROGS[@]} programs in $B ($((SECONDS - t0)) s)"
((built == ${#PROGS[@]}))
