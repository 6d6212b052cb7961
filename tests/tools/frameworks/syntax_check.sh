#!/bin/sh
# The framework check's programs compile (bytecode written under PYCACHE,
# never into the tree) and its shell script parses.
# Usage: syntax_check.sh REPO_ROOT PYTHON3 PYCACHE
set -eu
root=$1 py=$2 cache=$3
PYTHONPYCACHEPREFIX=$cache "$py" -m py_compile "$root"/tools/gpu/frameworks/*.py "$root"/tests/tools/frameworks/*.py
bash -n "$root/tools/gpu/frameworks.sh"
echo ok
