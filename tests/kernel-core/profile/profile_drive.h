/* A synthetic run driven through the profiler's core API, shared by the
 * profiler tests: an API group of every collective and a Send/Recv pair,
 * each collective with a kernel channel and a proxy op (a send and a recv
 * sub), Send and Recv with one sub each; every proxy sub moves NSTEPS steps
 * by SLICE with a net plugin event per step. */
#ifndef PROFILE_DRIVE_H
#define PROFILE_DRIVE_H

#include "profile/profile.h"

#define NSTEPS 16
#define SLICE 2
/* The bytes the driven transport reports for step k (mkcclProxyOp_v1.stepBytes). */
#define PROFILE_DRIVE_SEND_BYTES(k) (1000 + (int64_t)(k))
#define PROFILE_DRIVE_RECV_BYTES(k) (2000 + (int64_t)(k))

extern const int profile_drive_funcs[5];
void profile_drive_sequence(profile_comm_t* pc);

#endif
