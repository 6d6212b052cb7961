/* The device communicator's requirements, checked and laid out
 * (devcomm_reqs.c), apart from the API so they can be tested alone. */
#ifndef MKCCL_API_DEVCOMM_H
#define MKCCL_API_DEVCOMM_H

#include <stddef.h>

#include "api/device_api.h"

#define API_GIN_NOT_YET "GIN (the device API's network side) is not implemented yet in mkccl"

/* Why mkccl cannot make what `reqs` asks (multimem, GIN), or NULL.
 * oneLsaTeam: every rank is in this rank's LSA team. */
const char* api_devcomm_refusal(const ncclDevCommRequirements_t* reqs, int oneLsaTeam);

/* The rail GIN barrier's buffer, as NCCL lays it out on a device
 * communicator whose rail team is one rank (nothing to signal). */
void api_devcomm_rail_barrier(int nBarriers, int signal0, ncclGinBarrierHandle_t* outHandle,
                              ncclDevResourceRequirements_t* outReq);

/* Every requirement of the list given its handle (*outBufferHandle, in
 * 128-byte units), in list order, on max(128, bufferAlign); *total: the
 * window's bytes. fn names the caller in errors. */
ncclResult_t api_devcomm_layout(ncclDevResourceRequirements_t* head, size_t* total, const char* fn);

#endif
