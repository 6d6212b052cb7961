/* Defining a public entry point: pnccl<Name> is the function, nccl<Name> a
 * weak alias to it (NCCL's scheme: a profiling layer may define nccl<Name>
 * and call pnccl<Name>). Only these symbols leave the library. */
#ifndef MKCCL_API_API_H
#define MKCCL_API_API_H

#include "nccl.h"

#define MK_API(ret, name, ...)                                                              \
  __attribute__((visibility("default"))) ret pnccl##name(__VA_ARGS__);                     \
  __attribute__((visibility("default"), weak, alias("pnccl" #name))) ret nccl##name(__VA_ARGS__); \
  ret pnccl##name(__VA_ARGS__)

/* A public function mkccl exports but does not implement yet: ncclInvalidUsage,
 * with a last-error text that names it and what it belongs to. */
ncclResult_t api_not_implemented(const char* fn, const char* what);

#endif
