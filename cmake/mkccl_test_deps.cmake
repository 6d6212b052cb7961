# Test groups that need something outside the tree. tools/dev/deps.sh (the
# README's set-up) installs every one of them but CUDA, so where that set-up
# ran (CI: tools/dev/test.sh and sanitize.sh configure with
# MKCCL_REQUIRE_TEST_DEPS=ON) a missing one is a configure error naming it;
# elsewhere the group is left out with a status line. CUDA stays optional.
#   spin       the connection FIFO's model (test_fifo_conn_fifo_model)
#   python3    JSON checks of the trace profiler, the socket timeline reader
#   libfabric  plugin net-ofi and its tests (pkg-config libfabric)
#   libibverbs plugin net-ib and its tests (pkg-config libibverbs)
#   libfuzzer  the libFuzzer targets (clang -fsanitize=fuzzer); not built in
#              a sanitized build, on purpose: they carry their own ASan+UBSan
#              and the plain build runs them (docs/RELIABILITY.md)
option(MKCCL_REQUIRE_TEST_DEPS "A test group whose dependency is missing fails configure (CI)" OFF)

# mkccl_test_dep(<group> <found> <what is missing>): found is a value (a
# path, a *-NOTFOUND, ON/OFF).
function(mkccl_test_dep group found missing)
  if(found)
    return()
  endif()
  if(MKCCL_REQUIRE_TEST_DEPS)
    message(FATAL_ERROR "mkccl: test group '${group}' cannot be built: ${missing}. tools/dev/deps.sh installs it; "
                        "MKCCL_REQUIRE_TEST_DEPS=ON makes that an error")
  endif()
  message(STATUS "mkccl: ${missing}: test group '${group}' left out")
endfunction()
