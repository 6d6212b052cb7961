/* NCCL's tuner plugin ABI, versions 2 to 6: the constants and types every
 * version shares, then one frozen header per version (nccl_tuner_vN.h).
 *
 * Layouts are NCCL's, byte for byte: a tuner built against NCCL's headers
 * loads into mkccl, and ours load into NCCL. A plugin exports
 * `ncclTunerPlugin_vN` (a ncclTuner_vN_t).
 *
 * The cost table handed to getCollInfo (v3+) is a contiguous
 * float[numAlgo][numProto] passed as `float**`: cast it back with
 * `float (*table)[NCCL_NUM_PROTOCOLS] = (float (*)[NCCL_NUM_PROTOCOLS])collCostTable;`.
 * Entries are microseconds; NCCL_ALGO_PROTO_IGNORE (-1) means disabled;
 * the lowest entry >= 0 wins, so writing 0 forces a combination.
 *
 * Which version to export: NCCL 2.28 loads v2..v5 (v6, with getChunkSize,
 * arrived later), so a plugin meant for NCCL 2.28 and mkccl exports
 * ncclTunerPlugin_v5 and ncclTunerPlugin_v6. mkccl loads v2..v6 and works
 * internally with v6 (kernel-core/tune). */
#ifndef MKCCL_ABI_TUNER_NCCL_TUNER_H
#define MKCCL_ABI_TUNER_NCCL_TUNER_H

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"
#include "nccl_common.h"

/* NCCL's collective function indices, as tuners see them. */
typedef enum {
  ncclFuncBroadcast = 0,
  ncclFuncReduce = 1,
  ncclFuncAllGather = 2,
  ncclFuncReduceScatter = 3,
  ncclFuncAllReduce = 4,
  ncclFuncSendRecv = 5,
  ncclFuncSend = 6,
  ncclFuncRecv = 7,
  ncclNumFuncs = 8
} ncclFunc_t;

#define NCCL_NUM_ALGORITHMS 7
#define NCCL_ALGO_UNDEF -1
#define NCCL_ALGO_TREE 0
#define NCCL_ALGO_RING 1
#define NCCL_ALGO_COLLNET_DIRECT 2
#define NCCL_ALGO_COLLNET_CHAIN 3
#define NCCL_ALGO_NVLS 4
#define NCCL_ALGO_NVLS_TREE 5
#define NCCL_ALGO_PAT 6

#define NCCL_NUM_PROTOCOLS 3
#define NCCL_PROTO_UNDEF -1
#define NCCL_PROTO_LL 0
#define NCCL_PROTO_LL128 1
#define NCCL_PROTO_SIMPLE 2

#define NCCL_ALGO_PROTO_IGNORE -1.0

/* Hardware link classes of the tuning constants' hwLatencies. */
#define NCCL_HW_NVLINK 0
#define NCCL_HW_PCI 1
#define NCCL_HW_NET 2

#define NCCL_TUNER_PLUGIN_SYMBOL_V6 "ncclTunerPlugin_v6"
#define NCCL_TUNER_PLUGIN_SYMBOL_V5 "ncclTunerPlugin_v5"
#define NCCL_TUNER_PLUGIN_SYMBOL_V4 "ncclTunerPlugin_v4"
#define NCCL_TUNER_PLUGIN_SYMBOL_V3 "ncclTunerPlugin_v3"
#define NCCL_TUNER_PLUGIN_SYMBOL_V2 "ncclTunerPlugin_v2"

#include "tuner/nccl_tuner_v2.h"
#include "tuner/nccl_tuner_v3.h"
#include "tuner/nccl_tuner_v4.h"
#include "tuner/nccl_tuner_v5.h"
#include "tuner/nccl_tuner_v6.h"

#endif
