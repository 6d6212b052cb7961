/* mkccl: the public API, compatible with NCCL 2.28's nccl.h.
 *
 * Written from NCCL 2.28's documented API: type values, struct layouts and
 * function signatures match, so programs built against NCCL run on mkccl's
 * libnccl.so.2 and programs built against this header run on NCCL. */
#ifndef NCCL_H_
#define NCCL_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* Users of nccl.h expect the CUDA runtime types; mkccl itself builds without
 * CUDA, so the one CUDA type the API needs is declared here as CUDA does. */
#if defined(__has_include)
#if __has_include(<cuda_runtime.h>) && !defined(MKCCL_NO_CUDA_HEADERS)
#include <cuda_runtime.h>
/* As NCCL's nccl.h does: its users get half and __nv_bfloat16 (and, in C++,
 * the fp8 types) from it; nccl-tests' common.cu uses half with no include. */
#ifdef __cplusplus
extern "C++" { /* C++ headers, even where nccl.h is included inside extern "C" */
#endif
#include <cuda_fp16.h>
#if CUDART_VERSION >= 11000
#include <cuda_bf16.h>
#endif
#if defined(__cplusplus) && CUDART_VERSION >= 11080
#include <cuda_fp8.h>
#endif
#ifdef __cplusplus
}
#endif
#define MKCCL_HAVE_CUDA_HEADERS 1
#endif
#endif
#ifndef MKCCL_HAVE_CUDA_HEADERS
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;
#endif

#define NCCL_MAJOR 2
#define NCCL_MINOR 28
#define NCCL_PATCH 9
#define NCCL_SUFFIX ""
#define NCCL_VERSION_CODE 22809
#define NCCL_VERSION(X, Y, Z) \
  (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))

/* mkccl's own version, beside the NCCL API level it implements. */
#define MKCCL_MAJOR 0
#define MKCCL_MINOR 1
#define MKCCL_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncclComm* ncclComm_t;
typedef struct ncclWindow_vidmem* ncclWindow_t;
#define NCCL_COMM_NULL NULL

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;

#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_UNDEF_PTR NULL
#define NCCL_SPLIT_NOCOLOR -1
#define NCCL_UNDEF_FLOAT -1.0f

#define NCCL_WIN_DEFAULT 0x00
#define NCCL_WIN_COLL_SYMMETRIC 0x01
#define NCCL_WIN_REQUIRED_ALIGNMENT 4096

#define NCCL_CTA_POLICY_DEFAULT 0x00
#define NCCL_CTA_POLICY_EFFICIENCY 0x01
#define NCCL_CTA_POLICY_ZERO 0x02

#define NCCL_SHRINK_DEFAULT 0x00
#define NCCL_SHRINK_ABORT 0x01

#define NCCL_REVOKE_DEFAULT 0x00

/* Field order and sizes are NCCL 2.28's: the struct crosses the ABI. */
typedef struct ncclConfig_v22800 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char* netName;
  int splitShare;
  int trafficClass;
  const char* commName;
  int collnetEnable;
  int CTAPolicy;
  int shrinkShare;
  int nvlsCTAs;
  int nChannelsPerNetPeer;
  int nvlinkCentricSched;
} ncclConfig_t;

#define NCCL_CONFIG_INITIALIZER                                                           \
  {                                                                                       \
    sizeof(ncclConfig_t), 0xcafebeef, NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH),   \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,              \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT,              \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT,              \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,              \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT                                      \
  }

typedef struct ncclSimInfo_v22200 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  float estimatedTime;
} ncclSimInfo_t;

#define NCCL_SIM_INFO_INITIALIZER \
  { sizeof(ncclSimInfo_t), 0x74685283, NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH), NCCL_UNDEF_FLOAT }

typedef enum { ncclNumOps_dummy = 5 } ncclRedOp_dummy_t;
typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
  /* Built-in operators; also the first value of operators made at run time. */
  ncclNumOps = 5,
  /* Largest signed value that keeps sizeof(ncclRedOp_t) as it always was. */
  ncclMaxRedOp = 0x7fffffff >> (32 - 8 * sizeof(ncclRedOp_dummy_t))
} ncclRedOp_t;

typedef enum {
  ncclInt8 = 0, ncclChar = 0,
  ncclUint8 = 1,
  ncclInt32 = 2, ncclInt = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6, ncclHalf = 6,
  ncclFloat32 = 7, ncclFloat = 7,
  ncclFloat64 = 8, ncclDouble = 8,
  ncclBfloat16 = 9,
  ncclFloat8e4m3 = 10,
  ncclFloat8e5m2 = 11,
  ncclNumTypes = 12
} ncclDataType_t;

typedef enum {
  ncclScalarDevice = 0,        /* read by the device while the collective runs */
  ncclScalarHostImmediate = 1  /* read on the host before the create call returns */
} ncclScalarResidence_t;

/* Each function exists as nccl<Name> (a weak alias, so profiling tools can
 * wrap it) and as pnccl<Name>, as in NCCL. */
#define MKCCL_DECLARE(ret, name, ...) \
  ret nccl##name(__VA_ARGS__);        \
  ret pnccl##name(__VA_ARGS__)

MKCCL_DECLARE(ncclResult_t, MemAlloc, void** ptr, size_t size);
MKCCL_DECLARE(ncclResult_t, MemFree, void* ptr);
MKCCL_DECLARE(ncclResult_t, GetVersion, int* version);
MKCCL_DECLARE(ncclResult_t, GetUniqueId, ncclUniqueId* uniqueId);
MKCCL_DECLARE(ncclResult_t, CommInitRankConfig, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
              ncclConfig_t* config);
MKCCL_DECLARE(ncclResult_t, CommInitRank, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);
MKCCL_DECLARE(ncclResult_t, CommInitAll, ncclComm_t* comm, int ndev, const int* devlist);
MKCCL_DECLARE(ncclResult_t, CommFinalize, ncclComm_t comm);
MKCCL_DECLARE(ncclResult_t, CommDestroy, ncclComm_t comm);
MKCCL_DECLARE(ncclResult_t, CommAbort, ncclComm_t comm);
MKCCL_DECLARE(ncclResult_t, CommRevoke, ncclComm_t comm, int revokeFlags);
MKCCL_DECLARE(ncclResult_t, CommSplit, ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
              ncclConfig_t* config);
MKCCL_DECLARE(ncclResult_t, CommShrink, ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
              ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags);
MKCCL_DECLARE(ncclResult_t, CommInitRankScalable, ncclComm_t* newcomm, int nranks, int myrank, int nId,
              ncclUniqueId* commIds, ncclConfig_t* config);
MKCCL_DECLARE(const char*, GetErrorString, ncclResult_t result);
MKCCL_DECLARE(const char*, GetLastError, ncclComm_t comm);
MKCCL_DECLARE(void, ResetDebugInit, void);
MKCCL_DECLARE(ncclResult_t, CommGetAsyncError, ncclComm_t comm, ncclResult_t* asyncError);
MKCCL_DECLARE(ncclResult_t, CommCount, const ncclComm_t comm, int* count);
MKCCL_DECLARE(ncclResult_t, CommCuDevice, const ncclComm_t comm, int* device);
MKCCL_DECLARE(ncclResult_t, CommUserRank, const ncclComm_t comm, int* rank);
MKCCL_DECLARE(ncclResult_t, CommRegister, const ncclComm_t comm, void* buff, size_t size, void** handle);
MKCCL_DECLARE(ncclResult_t, CommDeregister, const ncclComm_t comm, void* handle);
MKCCL_DECLARE(ncclResult_t, CommWindowRegister, ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
              int winFlags);
MKCCL_DECLARE(ncclResult_t, CommWindowDeregister, ncclComm_t comm, ncclWindow_t win);
MKCCL_DECLARE(ncclResult_t, RedOpCreatePreMulSum, ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
              ncclScalarResidence_t residence, ncclComm_t comm);
MKCCL_DECLARE(ncclResult_t, RedOpDestroy, ncclRedOp_t op, ncclComm_t comm);

/* Collectives: sendbuff == recvbuff means in place (for AllGather and
 * ReduceScatter: the rank's own block of the larger buffer). */
MKCCL_DECLARE(ncclResult_t, Reduce, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
              ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
MKCCL_DECLARE(ncclResult_t, Bcast, void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
              cudaStream_t stream);
MKCCL_DECLARE(ncclResult_t, Broadcast, const void* sendbuff, void* recvbuff, size_t count,
              ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
MKCCL_DECLARE(ncclResult_t, AllReduce, const void* sendbuff, void* recvbuff, size_t count,
              ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
MKCCL_DECLARE(ncclResult_t, ReduceScatter, const void* sendbuff, void* recvbuff, size_t recvcount,
              ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
MKCCL_DECLARE(ncclResult_t, AllGather, const void* sendbuff, void* recvbuff, size_t sendcount,
              ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
MKCCL_DECLARE(ncclResult_t, AlltoAll, const void* sendbuff, void* recvbuff, size_t count,
              ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
MKCCL_DECLARE(ncclResult_t, Gather, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
              int root, ncclComm_t comm, cudaStream_t stream);
MKCCL_DECLARE(ncclResult_t, Scatter, const void* sendbuff, void* recvbuff, size_t count,
              ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
MKCCL_DECLARE(ncclResult_t, Send, const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
              ncclComm_t comm, cudaStream_t stream);
MKCCL_DECLARE(ncclResult_t, Recv, void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
              ncclComm_t comm, cudaStream_t stream);

MKCCL_DECLARE(ncclResult_t, GroupStart, void);
MKCCL_DECLARE(ncclResult_t, GroupEnd, void);
MKCCL_DECLARE(ncclResult_t, GroupSimulateEnd, ncclSimInfo_t* simInfo);

/* ---- NCCL 2.29 and 2.30 ----------------------------------------------------------------------
 * Declared with NCCL 2.30's signatures so that programs built against a newer
 * nccl.h find every function here; the header otherwise stays at 2.28's level
 * (version, result codes, ncclConfig_t). The README's status table says which
 * of these are implemented: the others return ncclInvalidUsage, and
 * ncclGetLastError names the function. */

/* Communicators that grow, and that give back their memory for a while. */
#define NCCL_SUSPEND_MEM 0x01

typedef enum {
  ncclStatGpuMemSuspend = 0,   /* bytes of GPU memory that suspending would release */
  ncclStatGpuMemSuspended = 1, /* 1 while suspended, else 0 */
  ncclStatGpuMemPersist = 2,   /* bytes that stay while suspended */
  ncclStatGpuMemTotal = 3      /* all GPU memory the communicator holds */
} ncclCommMemStat_t;

MKCCL_DECLARE(ncclResult_t, CommGetUniqueId, ncclComm_t comm, ncclUniqueId* uniqueId);
MKCCL_DECLARE(ncclResult_t, CommGrow, ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank,
              ncclComm_t* newcomm, ncclConfig_t* config);
MKCCL_DECLARE(ncclResult_t, CommSuspend, ncclComm_t comm, int flags);
MKCCL_DECLARE(ncclResult_t, CommResume, ncclComm_t comm);
MKCCL_DECLARE(ncclResult_t, CommMemStats, ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value);
MKCCL_DECLARE(ncclResult_t, WinGetUserPtr, ncclComm_t comm, ncclWindow_t win, void** outUserPtr);

/* One-sided operations on windows. */
typedef struct {
  int opCnt;  /* signals to wait for */
  int peer;   /* from this rank */
  int sigIdx; /* on this signal */
  int ctx;    /* in this context */
} ncclWaitSignalDesc_t;

MKCCL_DECLARE(ncclResult_t, PutSignal, const void* localbuff, size_t count, ncclDataType_t datatype, int peer,
              ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
              cudaStream_t stream);
MKCCL_DECLARE(ncclResult_t, Signal, int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
              cudaStream_t stream);
MKCCL_DECLARE(ncclResult_t, WaitSignal, int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm,
              cudaStream_t stream);

/* Parameters by name: a handle read as a typed value or a string, or a
 * string by key. */
typedef struct ncclParamHandle* ncclParamHandle_t;

MKCCL_DECLARE(ncclResult_t, ParamBind, ncclParamHandle_t* out, const char* key);
MKCCL_DECLARE(ncclResult_t, ParamGetI8, ncclParamHandle_t h, int8_t* out);
MKCCL_DECLARE(ncclResult_t, ParamGetI16, ncclParamHandle_t h, int16_t* out);
MKCCL_DECLARE(ncclResult_t, ParamGetI32, ncclParamHandle_t h, int32_t* out);
MKCCL_DECLARE(ncclResult_t, ParamGetI64, ncclParamHandle_t h, int64_t* out);
MKCCL_DECLARE(ncclResult_t, ParamGetU8, ncclParamHandle_t h, uint8_t* out);
MKCCL_DECLARE(ncclResult_t, ParamGetU16, ncclParamHandle_t h, uint16_t* out);
MKCCL_DECLARE(ncclResult_t, ParamGetU32, ncclParamHandle_t h, uint32_t* out);
MKCCL_DECLARE(ncclResult_t, ParamGetU64, ncclParamHandle_t h, uint64_t* out);
MKCCL_DECLARE(ncclResult_t, ParamGetStr, ncclParamHandle_t h, const char** out);
MKCCL_DECLARE(ncclResult_t, ParamGet, ncclParamHandle_t h, void* out, int maxLen, int* len);
MKCCL_DECLARE(ncclResult_t, ParamGetParameter, const char* key, const char** value, int* valueLen);
MKCCL_DECLARE(ncclResult_t, ParamGetAllParameterKeys, const char*** table, int* tableLen);
MKCCL_DECLARE(void, ParamDumpAll, void);

#undef MKCCL_DECLARE

#ifdef __cplusplus
}
#endif

#endif /* NCCL_H_ */
