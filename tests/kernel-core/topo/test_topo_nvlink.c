/* NVLink, NVSwitch and C2C given by the caller on the 2-socket machine:
 * NVL, NVB (and NCCL_NVB_DISABLE), PXN (and NCCL_PXN_DISABLE, GDR), P2C. */
#include <stdlib.h>

#include "topo_fixture.h"

static topo_system_t* build_with(const topo_gpu_input_t* gpus, const topo_nic_input_t* nics,
                                 const topo_nvlink_input_t* links, int nLinks) {
  topo_inputs_t in = two_socket_inputs();
  if (gpus) in.gpus = gpus;
  if (nics) in.nics = nics;
  in.nvlinks = links;
  in.nNvlinks = nLinks;
  topo_system_t* sys = NULL;
  CHECK_NCCL(topo_system_build(&in, &sys));
  return sys;
}

/* GPU0 =2= GPU1 =1= GPU2, sm 90: 20.6 GB/s per link. */
static const topo_nvlink_input_t chain[2] = {{0, 1, 2, 0.0f}, {1, 2, 1, 0.0f}};

static void check_nvl_nvb_pxn(void) {
  topo_system_t* sys = build_with(NULL, NULL, chain, 2);
  topo_path_t p = path_of(sys, TOPO_GPU, 0, TOPO_GPU, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_NVL);
  CHECK_BW(p.bw, 41.2);
  CHECK_EQ_INT(p.hops, 1);
  p = path_of(sys, TOPO_GPU, 1, TOPO_GPU, 2); /* across sockets, over NVLink */
  CHECK_EQ_INT(p.type, TOPO_PATH_NVL);
  CHECK_BW(p.bw, 20.6);
  p = path_of(sys, TOPO_GPU, 0, TOPO_GPU, 2); /* through GPU1 */
  CHECK_EQ_INT(p.type, TOPO_PATH_NVB);
  CHECK_BW(p.bw, 20.6);
  CHECK_EQ_INT(p.hops, 2);
  CHECK_EQ_INT(topo_gpu_gpu_path_type(sys, 2, 0), TOPO_PATH_NVB);
  /* GPU3 has no NVLink: a GPU is no waypoint for PCI traffic. */
  CHECK_EQ_INT(topo_gpu_gpu_path_type(sys, 3, 1), TOPO_PATH_SYS);

  /* GPU1 reaches NIC1 through GPU2 (NVLink, then PIX) instead of SYS. */
  p = path_of(sys, TOPO_GPU, 1, TOPO_NIC, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_PXN);
  CHECK_EQ_INT(p.via, 2);
  CHECK_BW(p.bw, 6.25);
  CHECK_EQ_INT(p.hops, 3); /* NVLink, then two PCI links */
  CHECK_EQ_INT(topo_gpu_nic_path_type(sys, 0, 1), TOPO_PATH_SYS); /* NVB peer: no PXN */
  CHECK_EQ_INT(path_of(sys, TOPO_NIC, 1, TOPO_GPU, 1).type, TOPO_PATH_SYS); /* GPU->NIC only */
  CHECK_EQ_INT(path_of(sys, TOPO_GPU, 2, TOPO_NIC, 1).via, -1);
  int nics[2], n;
  CHECK_NCCL(topo_gpu_best_nics(sys, 1, nics, 2, &n));
  CHECK_EQ_INT(n, 1);
  CHECK_EQ_INT(nics[0], 0); /* PIX beats PXN */
  topo_system_free(sys);

  setenv("NCCL_NVB_DISABLE", "1", 1);
  sys = build_with(NULL, NULL, chain, 2);
  CHECK_EQ_INT(topo_gpu_gpu_path_type(sys, 0, 2), TOPO_PATH_SYS);
  CHECK_EQ_INT(topo_gpu_gpu_path_type(sys, 0, 1), TOPO_PATH_NVL);
  topo_system_free(sys);
  unsetenv("NCCL_NVB_DISABLE");

  setenv("NCCL_PXN_DISABLE", "1", 1);
  sys = build_with(NULL, NULL, chain, 2);
  p = path_of(sys, TOPO_GPU, 1, TOPO_NIC, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_SYS);
  CHECK_EQ_INT(p.via, -1);
  topo_system_free(sys);
  unsetenv("NCCL_PXN_DISABLE");

  /* PXN needs GPUDirect RDMA on the relay GPU and on the NIC. */
  topo_gpu_input_t gpus[4] = {two_socket_gpus[0], two_socket_gpus[1], two_socket_gpus[2], two_socket_gpus[3]};
  gpus[2].gdr = 0;
  sys = build_with(gpus, NULL, chain, 2);
  CHECK_EQ_INT(topo_gpu_nic_path_type(sys, 1, 1), TOPO_PATH_SYS);
  topo_system_free(sys);
  topo_nic_input_t nicsNoGdr[2] = {two_socket_nics[0], two_socket_nics[1]};
  nicsNoGdr[1].gdr = 0;
  sys = build_with(NULL, nicsNoGdr, chain, 2);
  CHECK_EQ_INT(topo_gpu_nic_path_type(sys, 1, 1), TOPO_PATH_SYS);
  topo_system_free(sys);
}

static void check_bw_and_nvswitch(void) {
  /* An explicit bandwidth wins over count x per-link. */
  topo_nvlink_input_t one = {0, 1, 0, 50.0f};
  topo_system_t* sys = build_with(NULL, NULL, &one, 1);
  topo_path_t p = path_of(sys, TOPO_GPU, 1, TOPO_GPU, 0);
  CHECK_EQ_INT(p.type, TOPO_PATH_NVL);
  CHECK_BW(p.bw, 50.0);
  topo_system_free(sys);

  /* Every GPU on an NVSwitch with 18 links: all pairs NVL at 18 x 20.6. */
  topo_nvlink_input_t nvs[4];
  for (int g = 0; g < 4; g++) nvs[g] = (topo_nvlink_input_t){g, TOPO_NVLINK_NVSWITCH, 18, 0.0f};
  sys = build_with(NULL, NULL, nvs, 4);
  CHECK_EQ_INT(topo_count(sys, TOPO_NVS), 1);
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) {
      if (a == b) continue;
      p = path_of(sys, TOPO_GPU, a, TOPO_GPU, b);
      CHECK_EQ_INT(p.type, TOPO_PATH_NVL);
      CHECK_BW(p.bw, 18 * 20.6);
      CHECK_EQ_INT(p.hops, 2);
    }
  p = path_of(sys, TOPO_GPU, 3, TOPO_NVS, 0);
  CHECK_EQ_INT(p.type, TOPO_PATH_NVL);
  topo_system_free(sys);

  /* NVLink to the CPU (POWER-style). */
  topo_nvlink_input_t toCpu = {0, TOPO_NVLINK_CPU, 3, 0.0f};
  sys = build_with(NULL, NULL, &toCpu, 1);
  p = path_of(sys, TOPO_GPU, 0, TOPO_CPU, 0);
  CHECK_EQ_INT(p.type, TOPO_PATH_NVL);
  CHECK_BW(p.bw, 3 * 20.6);
  topo_system_free(sys);
}

/* GPU3 with a C2C link to CPU 1: its NIC (NIC1, PHB from the CPU) becomes P2C. */
static void check_c2c(void) {
  topo_gpu_input_t gpus[4] = {two_socket_gpus[0], two_socket_gpus[1], two_socket_gpus[2], two_socket_gpus[3]};
  gpus[3].c2cBw = 100.0f;
  topo_system_t* sys = build_with(gpus, NULL, NULL, 0);
  topo_path_t p = path_of(sys, TOPO_GPU, 3, TOPO_CPU, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_C2C);
  CHECK_BW(p.bw, 100.0);
  CHECK_EQ_INT(p.hops, 1);
  p = path_of(sys, TOPO_GPU, 3, TOPO_NIC, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_P2C);
  CHECK_BW(p.bw, 6.25);
  CHECK_EQ_INT(path_of(sys, TOPO_NIC, 1, TOPO_GPU, 3).type, TOPO_PATH_P2C);
  CHECK_EQ_INT(topo_gpu_nic_path_type(sys, 2, 1), TOPO_PATH_PIX);
  CHECK_EQ_INT(topo_gpu_nic_path_type(sys, 3, 0), TOPO_PATH_SYS);
  p = path_of(sys, TOPO_GPU, 2, TOPO_GPU, 3); /* in through the switch, out over C2C */
  CHECK_EQ_INT(p.type, TOPO_PATH_PHB);
  CHECK_EQ_INT(p.hops, 3);
  topo_system_free(sys);
}

int main(void) {
  unsetenv("NCCL_NVB_DISABLE");
  unsetenv("NCCL_PXN_DISABLE");
  unsetenv("NCCL_PXN_C2C");
  check_nvl_nvb_pxn();
  check_bw_and_nvswitch();
  check_c2c();
  return 0;
}
