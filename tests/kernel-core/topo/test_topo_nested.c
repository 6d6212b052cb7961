/* A two-level PCIe switch on one AMD socket: PXB between the sub-switches,
 * PHB to a NIC on its own root port, bandwidths from Gen3/4/5 links, and
 * NCCL's AMD rule for the default P2P level. */
#include <stdlib.h>

#include "topo_fixture.h"

static const topo_gpu_input_t gpus[3] = {
    {"0000:05:00.0", 0, 80, -1, 0.0f, 1},
    {"0000:06:00.0", 1, 80, -1, 0.0f, 1},
    {"0000:09:00.0", 2, 80, -1, 0.0f, 1},
};
static const topo_nic_input_t nics[2] = {
    {"mlx5_0", "/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:01.0/0000:07:00.0/0000:08:01.0/0000:0a:00.0",
     400000, 1},
    {"ens3", "/sys/devices/pci0000:00/0000:00:03.1/0000:0b:00.0", 25000, 0},
};

static topo_system_t* build(int nGpus) {
  topo_inputs_t in = {0};
  in.hwlocXml = NESTED_XML;
  in.gpus = gpus;
  in.nGpus = nGpus;
  in.nics = nics;
  in.nNics = 2;
  topo_system_t* sys = NULL;
  CHECK_NCCL(topo_system_build(&in, &sys));
  return sys;
}

int main(void) {
  unsetenv("NCCL_P2P_LEVEL");
  unsetenv("NCCL_P2P_DISABLE");
  topo_system_t* sys = build(3);
  CHECK_EQ_INT(topo_count(sys, TOPO_CPU), 1);
  CHECK_EQ_INT(topo_count(sys, TOPO_PCI), 3);
  topo_path_t p = path_of(sys, TOPO_GPU, 0, TOPO_GPU, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_PIX);
  CHECK_BW(p.bw, 24.0);
  p = path_of(sys, TOPO_GPU, 0, TOPO_GPU, 2); /* switch B - switch A - switch C */
  CHECK_EQ_INT(p.type, TOPO_PATH_PXB);
  CHECK_BW(p.bw, 24.0);
  CHECK_EQ_INT(p.hops, 4);
  p = path_of(sys, TOPO_GPU, 2, TOPO_NIC, 0);
  CHECK_EQ_INT(p.type, TOPO_PATH_PIX);
  CHECK_BW(p.bw, 24.0);
  CHECK_EQ_INT(topo_gpu_nic_path_type(sys, 0, 0), TOPO_PATH_PXB);
  /* NIC1 on its own root port: through the host bridge, at its 25 Gb/s. */
  p = path_of(sys, TOPO_GPU, 1, TOPO_NIC, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_PHB);
  CHECK_BW(p.bw, 3.125);
  /* NIC0 sits on Gen5 (48 GB/s) below switch A's Gen4 uplink (24 GB/s). */
  p = path_of(sys, TOPO_NIC, 0, TOPO_CPU, 0);
  CHECK_EQ_INT(p.type, TOPO_PATH_PHB);
  CHECK_BW(p.bw, 24.0);
  p = path_of(sys, TOPO_NIC, 1, TOPO_CPU, 0);
  CHECK_BW(p.bw, 3.125);
  int best[2], n;
  CHECK_NCCL(topo_gpu_best_nics(sys, 0, best, 2, &n));
  CHECK_EQ_INT(n, 1);
  CHECK_EQ_INT(best[0], 0);
  /* AMD with three GPUs: NCCL's default level, PXB, allows the nested switch. */
  CHECK_EQ_INT(topo_p2p_level(sys), TOPO_PATH_PXB);
  CHECK(topo_p2p_allowed(sys, 0, 2, NULL));
  topo_system_free(sys);

  /* AMD with at most two GPUs: P2P up to SYS. */
  sys = build(2);
  CHECK_EQ_INT(topo_p2p_level(sys), TOPO_PATH_SYS);
  topo_system_free(sys);
  return 0;
}
