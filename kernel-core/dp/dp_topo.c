/* dp_topo.h. The topology is the machine's, not a communicator's: it is
 * built once per net plugin (its devices are the NICs) and kept for the
 * process's life, so communicators after the first pay nothing. */
#include "dp/dp_topo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "net/nccl_net.h"
#include "topo/topo.h"

/* One entry per net plugin seen, for the process's life. */
typedef struct dp_topo_entry {
  const void* api; /* the net plugin's ncclNet_v12_t (NULL: none) */
  topo_system_t* sys;
  struct dp_topo_entry* next;
} dp_topo_entry_t;
static dp_topo_entry_t* dp_topo_cache;
static pthread_mutex_t dp_topo_lock = PTHREAD_MUTEX_INITIALIZER;

/* The NICs: every device of the net plugin, in device order (the
 * topology's NIC index is the device number). */
static ncclResult_t dp_topo_build(const ncclNet_v12_t* net, topo_system_t** out) {
  int ndev = 0;
  if (net && net->devices(&ndev) != ncclSuccess) ndev = 0;
  ncclNetProperties_v12_t* props = ndev > 0 ? calloc((size_t)ndev, sizeof(*props)) : NULL;
  topo_nic_input_t* nics = ndev > 0 ? calloc((size_t)ndev, sizeof(*nics)) : NULL;
  if (ndev > 0 && (!props || !nics)) {
    free(props), free(nics);
    return MK_FAIL(ncclSystemError, "topology: out of memory for %d net device(s)", ndev);
  }
  for (int d = 0; d < ndev; d++) {
    if (net->getProperties(d, &props[d]) != ncclSuccess) memset(&props[d], 0, sizeof(props[d]));
    nics[d].name = props[d].name;
    nics[d].pciPath = props[d].pciPath;
    nics[d].speedMbps = props[d].speed;
    nics[d].gdr = (props[d].ptrSupport & NCCL_PTR_CUDA) != 0;
  }
  topo_inputs_t in;
  memset(&in, 0, sizeof(in));
  in.nics = nics;
  in.nNics = ndev;
  in.rank = -1; /* the dump is each communicator's (dp_topo_open) */
  ncclResult_t res = topo_system_build(&in, out);
  free(nics);
  free(props);
  return res;
}

static ncclResult_t dp_topo_get(const ncclNet_v12_t* net, topo_system_t** out) {
  pthread_mutex_lock(&dp_topo_lock);
  for (dp_topo_entry_t* e = dp_topo_cache; e; e = e->next)
    if (e->api == net) {
      *out = e->sys;
      pthread_mutex_unlock(&dp_topo_lock);
      return ncclSuccess;
    }
  dp_topo_entry_t* e = calloc(1, sizeof(*e));
  ncclResult_t res = e ? dp_topo_build(net, &e->sys)
                       : MK_FAIL(ncclSystemError, "topology: out of memory for a cache entry");
  if (res == ncclSuccess) {
    e->api = net;
    e->next = dp_topo_cache;
    dp_topo_cache = e;
    *out = e->sys;
  } else {
    free(e);
  }
  pthread_mutex_unlock(&dp_topo_lock);
  return res;
}

ncclResult_t dp_topo_for_net(const void* net, const struct topo_system** out) {
  topo_system_t* sys = NULL;
  MK_CHECK(dp_topo_get(net, &sys));
  *out = sys;
  return ncclSuccess;
}

static int dp_topo_wanted(const struct ncclComm* comm, int* dump) {
  const char* file = param_NCCL_TOPO_DUMP_FILE();
  *dump = file && *file && comm->rank == param_NCCL_TOPO_DUMP_FILE_RANK();
  if (*dump) return 1;
  const ncclNet_v12_t* net = comm->dp.net.api;
  if (comm->cudaDev < 0 || !net) return 0;
  int ndev = 0;
  if (net->devices(&ndev) != ncclSuccess) return 0;
  for (int d = 0; d < ndev; d++) {
    ncclNetProperties_v12_t props;
    memset(&props, 0, sizeof(props));
    if (net->getProperties(d, &props) == ncclSuccess && (props.ptrSupport & NCCL_PTR_CUDA)) return 1;
  }
  return 0;
}

ncclResult_t dp_topo_open(struct ncclComm* comm) {
  int dump = 0;
  comm->dp.topo = NULL;
  if (!dp_topo_wanted(comm, &dump)) return ncclSuccess;
  topo_system_t* sys = NULL;
  ncclResult_t res = dp_topo_get(comm->dp.net.api, &sys);
  if (res != ncclSuccess) {
    if (dump) return res;
    MK_INFO(NCCL_INIT | NCCL_GRAPH, "Rank %d: no topology (%s): GPU-NIC distances unknown", comm->rank,
            ncclGetLastError(NULL));
    return ncclSuccess;
  }
  comm->dp.topo = sys;
  if (dump) {
    const char* file = param_NCCL_TOPO_DUMP_FILE();
    MK_CHECK(topo_dump_xml(sys, file));
    MK_INFO(NCCL_GRAPH | NCCL_ENV, "Rank %d: NCCL_TOPO_DUMP_FILE: topology written to %s", comm->rank, file);
  }
  return ncclSuccess;
}

int dp_topo_gpu_nic_path(const struct ncclComm* comm, int dev) {
  const topo_system_t* sys = comm->dp.topo;
  if (!sys || comm->cudaDev < 0 || dev < 0 || dev >= topo_count(sys, TOPO_NIC)) return -1;
  int gpu = topo_gpu_find_id(sys, comm->busId);
  return gpu < 0 ? -1 : topo_gpu_nic_path_type(sys, gpu, dev);
}
