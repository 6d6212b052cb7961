/* The device communicator's requirements, checked and laid out
 * (devcomm_reqs.c), apart from the API so they can be tested alone. */
#ifndef MKCCL_API_DEVCOMM_H
#define MKCCL_API_DEVCOMM_H

#include <stddef.h>

#include "api/device_api.h"

struct ncclComm;

/* Why mkccl cannot make what `reqs` asks (multimem), or NULL. */
const char* api_devcomm_refusal(const ncclDevCommRequirements_t* reqs);

/* The rail GIN barrier's buffer, as NCCL lays it out on a device
 * communicator whose rail team is one rank (nothing to signal). */
void api_devcomm_rail_barrier(int nBarriers, int signal0, ncclGinBarrierHandle_t* outHandle,
                              ncclDevResourceRequirements_t* outReq);

/* Every requirement of the list given its handle (*outBufferHandle, in
 * 128-byte units), in list order, on max(128, bufferAlign); *total: the
 * window's bytes. fn names the caller in errors. */
ncclResult_t api_devcomm_layout(ncclDevResourceRequirements_t* head, size_t* total, const char* fn);

/* GIN ids of the list: the caller's own signals and counters first
 * (nSignals, nCounters: they start at 0), then each requirement's, in
 * list order (*outGinSignalStart, *outGinCounterStart); the totals. No id
 * is written when a count is refused. */
ncclResult_t api_devcomm_gin_ids(ncclDevResourceRequirements_t* head, int nSignals, int nCounters, int* totalSignals,
                                 int* totalCounters, const char* fn);

__attribute__((visibility("default"))) ncclResult_t pncclGinBarrierCreateRequirement(
    struct ncclComm* comm, ncclTeam_t team, int nBarriers, ncclGinBarrierHandle_t* outHandle,
    ncclDevResourceRequirements_t* outReq);

/* GIN (devcomm_gin.c). Wanted: the requirements ask for it, or some rank
 * is beyond this rank's LSA team (oneLsaTeam 0). */
typedef struct api_devcomm_gin api_devcomm_gin_t;
int api_devcomm_gin_wanted(const ncclDevCommRequirements_t* reqs, int oneLsaTeam);
/* ncclSuccess when NCCL_GIN_TYPE names a backend mkccl builds. */
ncclResult_t api_devcomm_gin_backend(const char* fn);
/* Collective: the engine, its device context bound by the caller; d's GIN fields filled. */
ncclResult_t api_devcomm_gin_create(struct ncclComm* comm, int contexts, int nSignals, int nCounters,
                                    ncclDevComm_t* d, api_devcomm_gin_t** out);
/* Collective: lets every rank's puts land, then stops and frees. */
ncclResult_t api_devcomm_gin_destroy(api_devcomm_gin_t* g);
/* The engine of resource window w (if it has one) destroyed with comm's
 * device context bound, and forgotten (w->gin NULL, whatever the result). */
struct api_window;
ncclResult_t api_devcomm_gin_stop(struct ncclComm* comm, struct api_window* w);

#endif
