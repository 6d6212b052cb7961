/* The host side of NCCL's device API (nccl_device.h): the types its exported
 * functions take and return, laid out as NCCL 2.28's and 2.30's headers lay
 * them out. Structures these functions only pass through stay opaque. */
#ifndef MKCCL_API_DEVICE_API_H
#define MKCCL_API_DEVICE_API_H

#include <stdbool.h>

#include "nccl.h"

/* Returned by value: its three ints are the ABI. */
typedef struct ncclTeam {
  int nRanks, rank, stride;
} ncclTeam_t;

typedef struct ncclDevComm ncclDevComm_t;
typedef struct ncclDevCommRequirements ncclDevCommRequirements_t;
typedef struct ncclDevResourceRequirements ncclDevResourceRequirements_t;
typedef struct ncclLsaBarrierHandle ncclLsaBarrierHandle_t;
typedef struct ncclGinBarrierHandle ncclGinBarrierHandle_t;
typedef struct ncclLLA2AHandle ncclLLA2AHandle_t;
typedef struct ncclGinOutboxHandle ncclGinOutboxHandle_t;
typedef struct ncclGinInboxA2AHandle ncclGinInboxA2AHandle_t;

/* Passed by value to ncclGetMultimemDevicePointer. */
typedef struct ncclMultimemHandle {
  void* mcBasePtr;
} ncclMultimemHandle_t;

typedef enum { mkGinTypeNone = 0 } mk_gin_type_t;

/* NCCL 2.29's ncclCommProperties_t; the fields after multimemSupport are
 * read by callers built against 2.29.4 or later (version). */
typedef struct ncclCommProperties {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int rank;
  int nRanks;
  int cudaDev;
  int nvmlDev;
  bool deviceApiSupport;
  bool multimemSupport;
  int ginType;
  int nLsaTeams;
  bool hostRmaSupport;
  int railedGinType;
} ncclCommProperties_t;

/* Ranks in this rank's LSA team (team_api.c). */
struct ncclComm;
int api_team_lsa_size(const struct ncclComm* comm);

#endif
