/* mkccl's self-description, for the mkccl-info tool: the one mkccl-specific
 * entry point the library exports besides the NCCL API. */
#ifndef MKCCL_INFO_H
#define MKCCL_INFO_H

#include <stdio.h>

#include "nccl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MKCCL_INFO_VERSION 0x1u   /* mkccl and NCCL API versions */
#define MKCCL_INFO_MANIFESTS 0x2u /* the manifests read */
#define MKCCL_INFO_PLUGINS 0x4u   /* per kind: every candidate and its outcome */
#define MKCCL_INFO_TOPOLOGY 0x8u  /* the machine as the core sees it */
#define MKCCL_INFO_PARAMS 0x10u   /* user-level parameters and any set, value and source */
#define MKCCL_INFO_ALL 0x1fu
/* With MKCCL_INFO_PARAMS: more levels (expert: performance tuning; developer:
 * test and diagnosis switches, implies expert). */
#define MKCCL_INFO_PARAMS_EXPERT 0x100u
#define MKCCL_INFO_PARAMS_DEVELOPER 0x200u

/* Prints the chosen sections to `out`. Loads (and unloads again) the
 * plugins to report on them. A bad manifest: ncclInvalidUsage, with its
 * "file:line:col: ..." text in ncclGetLastError. */
ncclResult_t mkcclInfoReport(FILE* out, unsigned sections);

/* Prints, for every communicator of the mkccl processes of this host (pid
 * 0) or of process pid, which collective each of its ranks is in (ranks on
 * other hosts included, asked by one of the local ranks) and which ranks
 * the others wait for. Processes answer while MKCCL_WATCH_STATUS is 1. */
ncclResult_t mkcclInfoStatus(FILE* out, int pid);

#ifdef __cplusplus
}
#endif

#endif
