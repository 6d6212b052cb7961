/* CollNet: AllReduce reduced by a collnet plugin (in-network reduction),
 * for the rest of the core.
 *
 * A host communicator opens it with its data path when NCCL_COLLNET_ENABLE=1
 * and every rank could load a collnet plugin, listen and connect: per
 * channel (MKCCL_COLLNET_NCHANNELS of them) one collective communicator of
 * the plugin joining every rank, a send and a recv step buffer registered
 * with it (regMr), and two connectors in the channel (collnetSend,
 * collnetRecv). Every rank is a participant of its own: the executor writes
 * a step of its input to collnetSend, the proxy hands it to the plugin's
 * iallreduce with the collnetRecv slot of the same step as the output, and
 * once test says it is done publishes that slot to the executor and frees
 * the send slot (collnet_progress.c). Where any of that fails on any rank,
 * no rank offers CollNet, and each says why once at INFO; GPU
 * communicators never open it (the GPU executor has no CollNet).
 *
 * The core reaches the plugin only through plugin/collnet.h's v12 table. */
#ifndef MKCCL_COLLNET_COLLNET_H
#define MKCCL_COLLNET_COLLNET_H

#include <stdint.h>

#include "nccl.h"
#include "transport/mkccl_transport_v1.h"

struct ncclComm;
typedef struct collnet_comm collnet_comm_t;

/* After the rings, before the executor: sets comm->dp.collnet, or leaves it
 * NULL (not an error) when CollNet cannot be set up. Every rank calls it.
 * Errors only when the ranks cannot agree (bootstrap failure). */
ncclResult_t collnet_comm_open(struct ncclComm* comm);
/* Waits for the proxy to be done with the connections, then closes them. */
void collnet_comm_close(struct ncclComm* comm);

/* Whether comm's collnet reduces `type` (ncclDataType_t; < 0: any) with
 * `op` (MK_OP_*; < 0: any): sum, prod, max and min where the plugin's
 * reduceSupport says so, and PREMULSUM as a sum of pre-multiplied inputs.
 * 0 when comm has none. */
int collnet_comm_reduces(const struct ncclComm* comm, int type, int op);
/* Channels its connections exist on (0 when none). */
int collnet_comm_channels(const struct ncclComm* comm);
/* iallreduce calls the proxy made through comm's collnet so far (tests). */
uint64_t collnet_comm_requests(const struct ncclComm* comm);

/* What the proxy needs of an item beyond its steps, in a sub of the
 * collnetSend connector: the element type and the op (MK_OP_*). */
void collnet_sub_describe(mkcclProxySubOp_v1* sub, int type, int op);

#endif
