/* The aggregator: the "network" that reduces. Rank 0's connect forks it
 * over rank 0's listening socket; it accepts the nranks connections, then
 * serves iallreduces until a rank closes its connection (collnet_soft_wire.h
 * says how). The child calls only system calls and its own code (no malloc,
 * no stdio, no locks: the parent may have had threads), keeps no descriptor
 * but the listener, and dies with the thread that forked it. */
#ifndef COLLNET_SOFT_AGG_H
#define COLLNET_SOFT_AGG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nccl.h"

/* Forks it; *pid gets the child's. chunk: bytes reduced per step. */
ncclResult_t collnet_soft_agg_start(int listenFd, int nranks, int64_t timeoutMs, size_t chunk, pid_t* pid);
/* Waits up to waitMs for it to end (it does once the ranks closed), then
 * kills it. 0 when it ended by itself with status 0. */
int collnet_soft_agg_stop(pid_t pid, int waitMs);

#endif
