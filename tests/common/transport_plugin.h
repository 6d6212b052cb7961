/* A transport plugin named on a test's command line (argv[1]), loaded with
 * dlopen as the core loads it, for tests that drive it with fake services.
 * Exits (2: usage, 1: not loadable) when it cannot. */
#ifndef MKCCL_TEST_TRANSPORT_PLUGIN_H
#define MKCCL_TEST_TRANSPORT_PLUGIN_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "transport/mkccl_transport_v1.h"

static inline const mkcclTransport_v1* transport_plugin_open(int argc, char** argv, void** handle) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s libmkccl-transport-NAME.so\n", argv[0]);
    exit(2);
  }
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
    exit(1);
  }
  const mkcclTransport_v1* t = dlsym(h, "mkcclTransportPlugin_v1");
  CHECK(t && t->abiVersion == MKCCL_TRANSPORT_ABI_V1);
  *handle = h;
  return t;
}

#endif
