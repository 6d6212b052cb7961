/* Test assertions: print where and what, then fail the process. */
#ifndef MKCCL_TESTS_CHECK_H
#define MKCCL_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);       \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

#define CHECK_MSG(cond, ...)                                                         \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);       \
      fprintf(stderr, __VA_ARGS__);                                                  \
      fputc('\n', stderr);                                                           \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                           \
  do {                                                                               \
    long long a_ = (long long)(a), b_ = (long long)(b);                              \
    if (a_ != b_) {                                                                  \
      fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, #a, #b, a_, b_); \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

#define CHECK_STR_CONTAINS(haystack, needle)                                         \
  do {                                                                               \
    const char* h_ = (haystack);                                                     \
    if (!h_ || !strstr(h_, (needle))) {                                              \
      fprintf(stderr, "%s:%d: CHECK failed: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, \
              h_ ? h_ : "(null)", (needle));                                         \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

/* The test cannot run here (a missing feature of the machine, not a fault of
 * the code): says why on stderr and exits TEST_SKIP_CODE, which ctest counts
 * as skipped (every test gets SKIP_RETURN_CODE 77: tests/CMakeLists.txt).
 * Never return 0 instead: a test that did not run has not passed. */
#define TEST_SKIP_CODE 77
#define SKIP(...)                                                                    \
  do {                                                                               \
    fprintf(stderr, "skip: ");                                                       \
    fprintf(stderr, __VA_ARGS__);                                                    \
    fputc('\n', stderr);                                                             \
    exit(TEST_SKIP_CODE);                                                            \
  } while (0)

/* An NCCL call that must succeed. */
#define CHECK_NCCL(call)                                                             \
  do {                                                                               \
    ncclResult_t r_ = (call);                                                        \
    if (r_ != ncclSuccess) {                                                         \
      fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call, (int)r_, \
              ncclGetLastError(NULL));                                               \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

#endif
