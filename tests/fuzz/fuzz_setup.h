/* A fuzz target whose harness could not be set up (no listener, no root,
 * no connection to either on loopback) tests nothing: it stops the process
 * with the reason, so the corpus replay and the libFuzzer run fail instead
 * of passing every input untested. */
#ifndef MKCCL_FUZZ_SETUP_H
#define MKCCL_FUZZ_SETUP_H

#include <stdio.h>
#include <stdlib.h>

static inline void fuzz_setup_failed(const char* target, const char* what) {
  fprintf(stderr, "%s: harness setup failed: %s\n", target, what);
  exit(1);
}

#endif
