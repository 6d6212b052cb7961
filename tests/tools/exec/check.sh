#!/bin/sh
# mkccl-exec puts mkccl under a program whose run path finds another
# libnccl.so.2: without it the program gets the other copy, with it mkccl,
# for its own symbols and for a later dlopen by name; arguments pass through.
# Usage: check.sh MKCCL_EXEC RPATH_USER
set -eu
exec_=$1 user=$2
# A sanitized library preloaded into programs that are not (sh) cannot start.
if [ -n "${MKCCL_TEST_SANITIZED:-}" ]; then
  echo "skip: a sanitized libnccl.so.2 preloaded into unsanitized programs does not load (the plain build runs this)" >&2
  exit 77
fi
plain=$("$user")
echo "without: $plain"
case "$plain" in "version 99999 mkccl no later 99999") ;; *) echo "FAIL: the run path's copy should serve" >&2; exit 1 ;; esac
with=$("$exec_" "$user")
echo "with mkccl-exec: $with"
case "$with" in "version 22809 mkccl yes later 22809") ;; *) echo "FAIL: mkccl should serve" >&2; exit 1 ;; esac
args=$("$exec_" sh -c 'printf "%s|" "$@"; echo "$LD_PRELOAD"' sh "a b" c)
lib=$("$exec_" --lib)
[ "$args" = "a b|c|$lib" ] || { echo "FAIL: arguments or LD_PRELOAD: $args" >&2; exit 1; }
[ -e "$lib" ] || { echo "FAIL: --lib: $lib" >&2; exit 1; }
if "$exec_" >/dev/null 2>&1; then echo "FAIL: no command should be an error" >&2; exit 1; fi
echo ok
