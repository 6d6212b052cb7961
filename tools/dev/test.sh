#!/usr/bin/env bash
# Every test: install what is missing, build, run the whole ctest suite and
# the package checks (tools/dev/package_check.sh), then the suite again
# under ASan+UBSan and under TSan (tools/dev/sanitize.sh).
# MKCCL_TEST_SANITIZERS=0 skips the sanitizer runs (CI never does).
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/dev/deps.sh
# deps.sh installed what every test group needs (CUDA apart): a group whose
# dependency is still missing fails configure instead of leaving its tests out.
tools/dev/build.sh -DMKCCL_REQUIRE_TEST_DEPS=ON
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
# The install, its consumers, the Debian package and the wheel, from outside the tree.
tools/dev/package_check.sh build
if [[ "${MKCCL_TEST_SANITIZERS:-1}" != 0 ]]; then
  tools/dev/sanitize.sh all
fi
