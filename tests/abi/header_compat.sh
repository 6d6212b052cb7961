#!/bin/sh
# mkccl's nccl.h against a reference NCCL's: every function the reference
# declares, mkccl declares too, with a compatible prototype. The check is the
# compiler's: mkccl's declarations, after the reference header in one
# translation unit, must not conflict with it (C and C++ alike).
# Usage: header_compat.sh CC CXX REFERENCE_INCLUDE_DIR MKCCL_INCLUDE_DIR [CUDA_INCLUDE_DIR]
# (the CUDA headers NCCL's nccl.h includes; default: the reference's folder).
# Exit 77 when the reference header is not there.
set -eu
cc=$1 cxx=$2 ref=$3 mk=$4 cuda=${5:-$3}
if [ ! -f "$ref/nccl.h" ]; then
  echo "skip: no reference nccl.h in $ref" >&2
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Function declarations (one a line) of a preprocessed header: statements that
# start with a return type and name a p?nccl function.
decls() {
  tr '\n' ' ' | tr ';' '\n' | sed -E -e 's/__attribute__ ?\(\([^()]*(\([^()]*\))?[^()]*\)\) ?//g' -e 's/^[ 	]*//' -e 's/[ 	][ 	]*/ /g' |
    grep -E '^[A-Za-z_][A-Za-z0-9_ *]*[ *]p?nccl[A-Za-z0-9_]+ ?\(' | grep -v '^typedef' | grep -v '^extern "C'
}
name_of() { sed -E 's/^[^(]*[ *](p?nccl[A-Za-z0-9_]+) ?\(.*/\1/'; }

"$cc" -E -P -I"$ref" -I"$cuda" "$ref/nccl.h" | decls > "$tmp/ref.decl"
"$cc" -E -P -DMKCCL_NO_CUDA_HEADERS -I"$mk" "$mk/nccl.h" | decls > "$tmp/mk.decl"
name_of < "$tmp/ref.decl" | sort -u > "$tmp/ref.names"
name_of < "$tmp/mk.decl" | sort -u > "$tmp/mk.names"
nref=$(wc -l < "$tmp/ref.names")
if [ "$nref" -lt 40 ]; then
  echo "FAIL: found only $nref functions in $ref/nccl.h: the parser no longer reads it" >&2
  exit 1
fi
missing=$(comm -23 "$tmp/ref.names" "$tmp/mk.names")
if [ -n "$missing" ]; then
  echo "FAIL: declared by $ref/nccl.h, not by mkccl's nccl.h:" $missing >&2
  exit 1
fi

# mkccl's prototypes of the reference's functions, after the reference header.
{
  echo "#include \"$ref/nccl.h\""
  while IFS= read -r d; do
    n=$(echo "$d" | name_of)
    if grep -qx "$n" "$tmp/ref.names"; then echo "$d;"; fi
  done < "$tmp/mk.decl"
} > "$tmp/compat.c"
ndecl=$(grep -c ';$' "$tmp/compat.c")
ok=1
"$cc" -std=c11 -fsyntax-only -Werror -I"$ref" -I"$cuda" "$tmp/compat.c" || ok=0
cp "$tmp/compat.c" "$tmp/compat.cc"
"$cxx" -fsyntax-only -Werror -I"$ref" -I"$cuda" "$tmp/compat.cc" || ok=0
if [ $ok = 0 ]; then
  echo "FAIL: mkccl's prototypes conflict with $ref/nccl.h (above)" >&2
  exit 1
fi
echo "ok: $nref functions of $ref/nccl.h, $ndecl prototypes of mkccl's agree; mkccl adds:" \
  $(comm -13 "$tmp/ref.names" "$tmp/mk.names")
