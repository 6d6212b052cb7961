/* NCCL's collnet plugin ABI, versions 6 to 12: one frozen header per version
 * (nccl_collnet_vN.h).
 *
 * A collnet plugin offloads whole collectives to the network (in-network
 * reduction such as SHARP). Under NCCL it lives in the net plugin's library
 * and exports `ncclCollNetPlugin_vN` (a ncclCollNet_vN_t) beside, or instead
 * of, `ncclNetPlugin_vN`. Its properties are the net ABI's of the same
 * version (ncclNetProperties_vN_t, net/nccl_net_vN.h): NCCL defines no
 * collnet properties of its own.
 *
 * Layouts are NCCL's, byte for byte, so a vendor's collnet plugin built
 * against NCCL's headers loads into mkccl unchanged. mkccl loads v6..v12 and
 * presents them to the core as v12 (kernel-core/plugin/collnet_adapt.h).
 *
 * What changed, version to version:
 *   v6  int sizes and counts; no iallgather/ireducescatter
 *   v7  the same table over v7's properties (device offload fields)
 *   v8  iallgather, ireducescatter (scattered buffers: ncclNetSGE_v8_t with
 *       a 32-bit size); regMr takes size_t
 *   v9  iallreduce's count is size_t, SGE sizes size_t; makeVDevice
 *   v10 the same table over v10's properties
 *   v11 init gets a context and a communicator id, listen the context;
 *       finalize
 *   v12 the same table over v12's properties (vNICs of up to 8 devices) */
#ifndef MKCCL_ABI_COLLNET_NCCL_COLLNET_H
#define MKCCL_ABI_COLLNET_NCCL_COLLNET_H

#include "net/nccl_net.h"

/* Symbol names, newest first. */
#define NCCL_COLLNET_PLUGIN_SYMBOL_V12 "ncclCollNetPlugin_v12"
#define NCCL_COLLNET_PLUGIN_SYMBOL_V11 "ncclCollNetPlugin_v11"
#define NCCL_COLLNET_PLUGIN_SYMBOL_V10 "ncclCollNetPlugin_v10"
#define NCCL_COLLNET_PLUGIN_SYMBOL_V9 "ncclCollNetPlugin_v9"
#define NCCL_COLLNET_PLUGIN_SYMBOL_V8 "ncclCollNetPlugin_v8"
#define NCCL_COLLNET_PLUGIN_SYMBOL_V7 "ncclCollNetPlugin_v7"
#define NCCL_COLLNET_PLUGIN_SYMBOL_V6 "ncclCollNetPlugin_v6"

#include "collnet/nccl_collnet_v6.h"
#include "collnet/nccl_collnet_v7.h"
#include "collnet/nccl_collnet_v8.h"
#include "collnet/nccl_collnet_v9.h"
#include "collnet/nccl_collnet_v10.h"
#include "collnet/nccl_collnet_v11.h"
#include "collnet/nccl_collnet_v12.h"

#endif
