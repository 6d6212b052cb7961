/* NCCL's profiler plugin ABI, versions 1 to 6: the event types, states and
 * types every version shares, then one frozen header per version
 * (nccl_profiler_vN.h).
 *
 * Layouts are NCCL's, byte for byte: a profiler built against NCCL's
 * headers loads into mkccl, and ours load into NCCL. A plugin exports
 * `ncclProfiler_vN` (a ncclProfiler_vN_t).
 *
 * Event hierarchy (parentObj is the parent's handle from startEvent):
 *   GroupApi -> CollApi | P2pApi | KernelLaunch          (v5+ API events)
 *   Group -> Coll | P2p -> ProxyOp -> ProxyStep -> NetPlugin
 *                       -> KernelCh
 *   ProxyCtrl (no parent)
 * From v5 a Coll/P2p's parentObj is its CollApi/P2pApi event and
 * coll.parentGroup / p2p.parentGroup its Group; older versions get the
 * Group as parentObj.
 *
 * The activation mask (int, set by init) is read by the core at every
 * event, so a plugin may change it at any time through the pointer.
 *
 * Which version to export: NCCL 2.28 loads v1..v5 (v6, with copy-engine
 * events, arrived in 2.29), so a profiler meant for NCCL 2.28 and mkccl
 * exports ncclProfiler_v5 and ncclProfiler_v6. mkccl loads v1..v6 and works
 * internally with v6 (kernel-core/profile). */
#ifndef MKCCL_ABI_PROFILER_NCCL_PROFILER_H
#define MKCCL_ABI_PROFILER_NCCL_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nccl.h"
#include "nccl_common.h"

typedef pid_t ncclPid_t;

enum {
  ncclProfileGroup = (1 << 0),
  ncclProfileColl = (1 << 1),
  ncclProfileP2p = (1 << 2),
  ncclProfileProxyOp = (1 << 3),
  ncclProfileProxyStep = (1 << 4),
  ncclProfileProxyCtrl = (1 << 5),
  ncclProfileKernelCh = (1 << 6),
  ncclProfileNetPlugin = (1 << 7),
  ncclProfileGroupApi = (1 << 8),     /* v5 */
  ncclProfileCollApi = (1 << 9),      /* v5 */
  ncclProfileP2pApi = (1 << 10),      /* v5 */
  ncclProfileKernelLaunch = (1 << 11), /* v5 */
  ncclProfileCeColl = (1 << 12),      /* v6 */
  ncclProfileCeSync = (1 << 13),      /* v6 */
  ncclProfileCeBatch = (1 << 14),     /* v6 */
};

typedef enum {
  /* ProxyOp states of v1..v3 (NCCL stopped emitting them in v4) */
  ncclProfilerProxyOpSendPosted = 0,
  ncclProfilerProxyOpSendRemFifoWait = 1,
  ncclProfilerProxyOpSendTransmitted = 2,
  ncclProfilerProxyOpSendDone = 3,
  ncclProfilerProxyOpRecvPosted = 4,
  ncclProfilerProxyOpRecvReceived = 5,
  ncclProfilerProxyOpRecvTransmitted = 6,
  ncclProfilerProxyOpRecvDone = 7,
  ncclProfilerProxyOpInProgress_v4 = 19,

  /* ProxyStep states */
  ncclProfilerProxyStepSendGPUWait = 8,
  ncclProfilerProxyStepSendPeerWait_v4 = 20,
  ncclProfilerProxyStepSendWait = 9,
  ncclProfilerProxyStepRecvWait = 10,
  ncclProfilerProxyStepRecvFlushWait = 11,
  ncclProfilerProxyStepRecvGPUWait = 12,

  /* ProxyCtrl states */
  ncclProfilerProxyCtrlIdle = 13,
  ncclProfilerProxyCtrlActive = 14,
  ncclProfilerProxyCtrlSleep = 15,
  ncclProfilerProxyCtrlWakeup = 16,
  ncclProfilerProxyCtrlAppend = 17,
  ncclProfilerProxyCtrlAppendEnd = 18,

  ncclProfilerNetPluginUpdate = 21,
  ncclProfilerKernelChStop = 22,

  /* GroupApi states (v5) */
  ncclProfilerGroupStartApiStop = 23,
  ncclProfilerGroupEndApiStart = 24,

  /* copy-engine states (v6) */
  ncclProfilerCeCollStart = 25,
  ncclProfilerCeCollComplete = 26,
  ncclProfilerCeSyncStart = 27,
  ncclProfilerCeSyncComplete = 28,
  ncclProfilerCeBatchStart = 29,
  ncclProfilerCeBatchComplete = 30,
} ncclProfilerEventState_t;

typedef ncclProfilerEventState_t ncclProfilerEventState_v1_t;
typedef ncclProfilerEventState_t ncclProfilerEventState_v2_t;
typedef ncclProfilerEventState_t ncclProfilerEventState_v3_t;
typedef ncclProfilerEventState_t ncclProfilerEventState_v4_t;
typedef ncclProfilerEventState_t ncclProfilerEventState_v5_t;
typedef ncclProfilerEventState_t ncclProfilerEventState_v6_t;

/* Net plugin event ids (netPlugin.id): low 16 bits the event version, the
 * next 16 the network type. */
#define NCCL_PROFILER_NET_VER_BITS (16)
#define NCCL_PROFILER_NET_VER_MASK (~0U >> NCCL_PROFILER_NET_VER_BITS)
#define NCCL_PROFILER_NET_TYPE_MASK (~0U << NCCL_PROFILER_NET_VER_BITS)
typedef enum {
  NCCL_PROFILER_NET_TYPE_IB = (1U << NCCL_PROFILER_NET_VER_BITS),
  NCCL_PROFILER_NET_TYPE_SOCK = (2U << NCCL_PROFILER_NET_VER_BITS),
} ncclProfilerNetType;

/* Net plugins' ncclProfilerCallback_t (nccl_common.h): type 0 starts an
 * event (extData = the plugin's descriptor, pHandle = the handle the core
 * passed to isend/irecv), 1 stops *eHandle, 2 records an update (extData),
 * 3 records an update and stops. */
#define NCCL_PROFILER_NET_EVENT_START 0
#define NCCL_PROFILER_NET_EVENT_STOP 1
#define NCCL_PROFILER_NET_EVENT_UPDATE 2
#define NCCL_PROFILER_NET_EVENT_UPDATE_AND_STOP 3

#define NCCL_PROFILER_SYMBOL_V6 "ncclProfiler_v6"
#define NCCL_PROFILER_SYMBOL_V5 "ncclProfiler_v5"
#define NCCL_PROFILER_SYMBOL_V4 "ncclProfiler_v4"
#define NCCL_PROFILER_SYMBOL_V3 "ncclProfiler_v3"
#define NCCL_PROFILER_SYMBOL_V2 "ncclProfiler_v2"
#define NCCL_PROFILER_SYMBOL_V1 "ncclProfiler_v1"

#include "profiler/nccl_profiler_v1.h"
#include "profiler/nccl_profiler_v2.h"
#include "profiler/nccl_profiler_v3.h"
#include "profiler/nccl_profiler_v4.h"
#include "profiler/nccl_profiler_v5.h"
#include "profiler/nccl_profiler_v6.h"
#include "profiler/nccl_profiler_net.h"

#endif
