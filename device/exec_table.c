/* Which executor serves a communicator: the GPU's when it has a CUDA
 * device, else the host's. The one place that names the executors. */
#include "comm/comm.h"
#include "exec/exec.h"

extern const exec_ops_t gpu_exec_ops;
extern const exec_ops_t host_exec_ops;

const exec_ops_t* exec_for(const struct ncclComm* comm) { return comm->cudaDev >= 0 ? &gpu_exec_ops : &host_exec_ops; }
