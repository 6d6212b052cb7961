/* The net plugin a communicator uses (through the loader), per comm context. */
#ifndef MKCCL_PLAN_DP_NET_H
#define MKCCL_PLAN_DP_NET_H

#include "nccl.h"

struct ncclComm;
/* Absence of any net plugin is not an error (single host: shm/p2p). */
ncclResult_t dp_net_open(struct ncclComm* comm);
void dp_net_close(struct ncclComm* comm);

#endif
