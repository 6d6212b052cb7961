/* The host side of NCCL's device API (nccl_device.h): the types its exported
 * functions take and return, laid out as NCCL 2.28's and 2.30's headers lay
 * them out. Structures these functions only pass through stay opaque. */
#ifndef MKCCL_API_DEVICE_API_H
#define MKCCL_API_DEVICE_API_H

#include <stdbool.h>
#include <stdint.h>

#include "nccl.h"

/* Returned by value: its three ints are the ABI. */
typedef struct ncclTeam {
  int nRanks, rank, stride;
} ncclTeam_t;

/* Laid out as NCCL 2.28.9's nccl_device/impl/<name>__types.h: kernels compiled
 * against NVIDIA's headers read these fields inline (tests/devapi checks every
 * offset with nvcc). */
typedef uint32_t ncclDevResourceHandle_t; /* in units of 128 bytes of the resource window */
typedef uint32_t ncclGinSignal_t;
typedef uint32_t ncclGinCounter_t;

#define MK_GIN_MAX_CONTEXTS 4
#define MK_RESOURCE_UNIT 128

/* Passed by value to ncclGetMultimemDevicePointer. */
typedef struct ncclMultimemHandle {
  void* mcBasePtr;
} ncclMultimemHandle_t;

/* What a window handle (ncclWindow_t) points to on a GPU communicator: in
 * device memory, read by ncclGetLsaPointer and friends. Peer i's copy of
 * the window starts at lsaFlatBase + i * stride4G * 4 GiB. */
struct ncclWindow_vidmem {
  void* winHost;     /* the host's record of the window */
  char* lsaFlatBase; /* LSA rank 0's copy */
  int lsaRank;
  int worldRank;
  uint32_t stride4G;
  uint32_t mcOffset4K;
  uint32_t ginOffset4K;
  void* ginWins[MK_GIN_MAX_CONTEXTS];
};

typedef struct ncclLsaBarrierHandle {
  ncclDevResourceHandle_t bufHandle;
  int nBarriers;
} ncclLsaBarrierHandle_t;

typedef struct ncclGinBarrierHandle {
  ncclGinSignal_t signal0;
  ncclDevResourceHandle_t bufHandle;
} ncclGinBarrierHandle_t;

typedef struct ncclLLA2AHandle {
  ncclDevResourceHandle_t bufHandle;
  uint32_t nSlots;
} ncclLLA2AHandle_t;

/* 32 windows and a link to the next table: ncclFindWindow walks it. */
#define MK_WINDOW_TABLE_ENTRIES 32
typedef struct mk_window_table_entry {
  uintptr_t base, size;
  ncclWindow_t window;
} mk_window_table_entry_t;
typedef struct mk_window_table {
  mk_window_table_entry_t entries[MK_WINDOW_TABLE_ENTRIES];
  struct mk_window_table* next;
} mk_window_table_t;

typedef struct ncclDevComm {
  int rank, nRanks;
  uint32_t nRanks_rcp32;
  int lsaRank, lsaSize;
  uint32_t lsaSize_rcp32;
  mk_window_table_t* windowTable; /* device memory */
  ncclWindow_t resourceWindow;
  struct ncclWindow_vidmem resourceWindow_inlined;
  ncclMultimemHandle_t lsaMultimem;
  ncclLsaBarrierHandle_t lsaBarrier;
  ncclGinBarrierHandle_t railGinBarrier;
  uint8_t ginContextCount;
  uint8_t ginTypes[MK_GIN_MAX_CONTEXTS];
  void* ginHandles[MK_GIN_MAX_CONTEXTS];
  uint32_t ginSignalBase;
  int ginSignalCount;
  uint32_t ginCounterBase;
  int ginCounterCount;
  uint64_t* ginSignalShadows;
} ncclDevComm_t;

typedef struct ncclDevResourceRequirements ncclDevResourceRequirements_t;
struct ncclDevResourceRequirements {
  ncclDevResourceRequirements_t* next;
  size_t bufferSize, bufferAlign;
  ncclDevResourceHandle_t* outBufferHandle; /* set by ncclDevCommCreate when not NULL */
  int ginSignalCount;
  int ginCounterCount;
  ncclGinSignal_t* outGinSignalStart;
  ncclGinCounter_t* outGinCounterStart;
};

typedef struct ncclTeamRequirements ncclTeamRequirements_t;
struct ncclTeamRequirements {
  ncclTeamRequirements_t* next;
  ncclTeam_t team;
  bool multimem;
  ncclMultimemHandle_t* outMultimemHandle;
};

typedef struct ncclDevCommRequirements {
  ncclDevResourceRequirements_t* resourceRequirementsList;
  ncclTeamRequirements_t* teamRequirementsList;
  bool lsaMultimem;
  int barrierCount;
  int lsaBarrierCount;
  int railGinBarrierCount;
  int lsaLLA2ABlockCount, lsaLLA2ASlotCount;
  bool ginForceEnable;
  int ginContextCount;
  int ginSignalCount;
  int ginCounterCount;
} ncclDevCommRequirements_t;

/* Opaque: only passed through. */
typedef struct ncclGinOutboxHandle ncclGinOutboxHandle_t;
typedef struct ncclGinInboxA2AHandle ncclGinInboxA2AHandle_t;

typedef enum { mkGinTypeNone = 0, mkGinTypeProxy = 2 } mk_gin_type_t;

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
