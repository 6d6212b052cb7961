/* Path types and bandwidths on a synthetic 2-socket machine with 4 GPUs and 2
 * NICs behind PCIe switches; GPU-NIC affinity; devices outside the PCI tree;
 * bad inputs. */
#include <string.h>
#include <unistd.h>

#include "topo_fixture.h"

static void check_paths(const topo_system_t* sys) {
  CHECK_EQ_INT(topo_count(sys, TOPO_CPU), 2);
  CHECK_EQ_INT(topo_count(sys, TOPO_GPU), 4);
  CHECK_EQ_INT(topo_count(sys, TOPO_NIC), 2);
  CHECK_EQ_INT(topo_count(sys, TOPO_PCI), 3);
  CHECK_EQ_INT(topo_count(sys, TOPO_NVS), 0);

  topo_path_t p = path_of(sys, TOPO_GPU, 0, TOPO_GPU, 0);
  CHECK_EQ_INT(p.type, TOPO_PATH_LOC);
  CHECK_EQ_INT(p.hops, 0);
  /* Same switch: PIX at the GPUs' Gen4 x16 speed. */
  p = path_of(sys, TOPO_GPU, 0, TOPO_GPU, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_PIX);
  CHECK_BW(p.bw, 24.0);
  CHECK_EQ_INT(p.hops, 2);
  /* Two switches on one CPU, each on its own root port: through the host bridge. */
  p = path_of(sys, TOPO_GPU, 2, TOPO_GPU, 3);
  CHECK_EQ_INT(p.type, TOPO_PATH_PHB);
  CHECK_BW(p.bw, 24.0);
  CHECK_EQ_INT(p.hops, 4);
  /* Across sockets: SYS, limited by Skylake's UPI (10 GB/s). */
  p = path_of(sys, TOPO_GPU, 0, TOPO_GPU, 2);
  CHECK_EQ_INT(p.type, TOPO_PATH_SYS);
  CHECK_BW(p.bw, 10.0);
  CHECK_EQ_INT(p.hops, 5);
  p = path_of(sys, TOPO_GPU, 3, TOPO_GPU, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_SYS);

  /* GPU-NIC: NIC0 capped by its Gen3 slot, NIC1 by its 50 Gb/s link. */
  p = path_of(sys, TOPO_GPU, 0, TOPO_NIC, 0);
  CHECK_EQ_INT(p.type, TOPO_PATH_PIX);
  CHECK_BW(p.bw, 12.0);
  CHECK_EQ_INT(topo_gpu_nic_path_type(sys, 1, 0), TOPO_PATH_PIX);
  p = path_of(sys, TOPO_GPU, 2, TOPO_NIC, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_PIX);
  CHECK_BW(p.bw, 6.25);
  p = path_of(sys, TOPO_GPU, 3, TOPO_NIC, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_PHB);
  CHECK_BW(p.bw, 6.25);
  p = path_of(sys, TOPO_GPU, 3, TOPO_NIC, 0);
  CHECK_EQ_INT(p.type, TOPO_PATH_SYS);
  CHECK_BW(p.bw, 10.0);
  p = path_of(sys, TOPO_NIC, 0, TOPO_GPU, 1); /* the other way round */
  CHECK_EQ_INT(p.type, TOPO_PATH_PIX);
  CHECK_BW(p.bw, 12.0);
  p = path_of(sys, TOPO_NIC, 0, TOPO_NIC, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_SYS);

  /* GPU-CPU and CPU-CPU. */
  p = path_of(sys, TOPO_GPU, 0, TOPO_CPU, 0);
  CHECK_EQ_INT(p.type, TOPO_PATH_PHB);
  CHECK_BW(p.bw, 24.0);
  p = path_of(sys, TOPO_GPU, 0, TOPO_CPU, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_SYS);
  p = path_of(sys, TOPO_CPU, 0, TOPO_CPU, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_SYS);
  CHECK_BW(p.bw, 10.0);
  CHECK_EQ_INT(p.hops, 1);
}

static void check_affinity(const topo_system_t* sys) {
  int nics[4], n = -1;
  CHECK_NCCL(topo_gpu_best_nics(sys, 0, nics, 4, &n));
  CHECK_EQ_INT(n, 1);
  CHECK_EQ_INT(nics[0], 0);
  CHECK_NCCL(topo_gpu_best_nics(sys, 2, nics, 4, &n));
  CHECK_EQ_INT(n, 1);
  CHECK_EQ_INT(nics[0], 1);
  /* Type before bandwidth: GPU3 takes NIC1 (PHB, 6.25) over NIC0 (SYS, 10). */
  CHECK_NCCL(topo_gpu_best_nics(sys, 3, nics, 4, &n));
  CHECK_EQ_INT(n, 1);
  CHECK_EQ_INT(nics[0], 1);
  CHECK_EQ_INT(topo_gpu_nic_for_channel(sys, 3, 5), 1);
  CHECK_EQ_INT(topo_gpu_nic_for_channel(sys, 9, 0), -1);
  CHECK_EQ_INT(topo_nic_local_gpu(sys, 0), 0);
  CHECK_EQ_INT(topo_nic_local_gpu(sys, 1), 2);

  int cpu = -1;
  CHECK_NCCL(topo_gpu_local_cpu(sys, 3, &cpu));
  CHECK_EQ_INT(cpu, 1);
  CHECK_NCCL(topo_nic_local_cpu(sys, 0, &cpu));
  CHECK_EQ_INT(cpu, 0);
  CHECK_EQ_INT(topo_cpu_numa_id(sys, 1), 1);
  cpu_set_t set;
  CHECK_NCCL(topo_cpu_affinity(sys, 1, &set));
  CHECK_EQ_INT(CPU_COUNT(&set), 4);
  CHECK(CPU_ISSET(4, &set) && CPU_ISSET(7, &set) && !CPU_ISSET(3, &set));

  CHECK_EQ_INT(topo_gpu_find(sys, "0000:83:00.0"), 2);
  CHECK_EQ_INT(topo_gpu_find(sys, "00000000:87:00.0"), 3); /* NVML's form */
  CHECK_EQ_INT(topo_gpu_find(sys, "0000:99:00.0"), -1);
  CHECK(strcmp(topo_gpu_bus_id(sys, 1), "0000:04:00.0") == 0);
  CHECK_EQ_INT(topo_gpu_cuda_dev(sys, 3), 3);
  CHECK(strcmp(topo_nic_name(sys, 1), "mlx5_1") == 0);
  CHECK(topo_nic_name(sys, 2) == NULL);
}

/* A NIC without a PCI path, and one hwloc does not know, hang off CPU 0. */
static void check_unplaced_nics(void) {
  topo_nic_input_t nics[3] = {two_socket_nics[0], {"eth0", NULL, 25000, 0},
                              {"ghost", "/sys/devices/pci0000:40/0000:40:01.0/0000:41:00.0", 0, 0}};
  topo_inputs_t in = two_socket_inputs();
  in.nics = nics;
  in.nNics = 3;
  topo_system_t* sys = NULL;
  CHECK_NCCL(topo_system_build(&in, &sys));
  topo_path_t p = path_of(sys, TOPO_GPU, 0, TOPO_NIC, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_PHB);
  CHECK_BW(p.bw, 25000 / 8000.0);
  p = path_of(sys, TOPO_GPU, 2, TOPO_NIC, 1);
  CHECK_EQ_INT(p.type, TOPO_PATH_SYS);
  p = path_of(sys, TOPO_GPU, 1, TOPO_NIC, 2); /* speed <= 0: NCCL's 10 Gb/s */
  CHECK_EQ_INT(p.type, TOPO_PATH_PHB);
  CHECK_BW(p.bw, 1.25);
  topo_system_free(sys);
}

/* The network beats P2P when both GPUs have a closer, faster NIC. */
static void check_net_faster(const topo_system_t* sys) {
  CHECK_EQ_INT(topo_net_faster(sys, 0, 2), 0); /* GPU2's NIC (6.25) is slower than UPI (10) */
  topo_nic_input_t nics[2] = {two_socket_nics[0], two_socket_nics[1]};
  nics[1].speedMbps = 100000;
  topo_inputs_t in = two_socket_inputs();
  in.nics = nics;
  topo_system_t* fast = NULL;
  CHECK_NCCL(topo_system_build(&in, &fast));
  CHECK_EQ_INT(topo_net_faster(fast, 0, 2), 1);
  CHECK_EQ_INT(topo_net_faster(fast, 0, 1), 0);
  topo_system_free(fast);
}

static void check_bad_inputs(void) {
  topo_system_t* const sentinel = (topo_system_t*)0x1;
  topo_system_t* sys = sentinel;
  topo_gpu_input_t gpus[2] = {two_socket_gpus[0], two_socket_gpus[1]};
  topo_inputs_t in = two_socket_inputs();
  in.gpus = gpus;
  in.nGpus = 2;

  gpus[1].busId = "zz:00";
  CHECK_EQ_INT(topo_system_build(&in, &sys), ncclInvalidArgument);
  gpus[1].busId = "0000:03:00.0";
  CHECK_EQ_INT(topo_system_build(&in, &sys), ncclInvalidArgument);
  gpus[1] = two_socket_gpus[1];
  topo_nvlink_input_t link = {0, 7, 2, 0.0f};
  in.nvlinks = &link;
  in.nNvlinks = 1;
  CHECK_EQ_INT(topo_system_build(&in, &sys), ncclInvalidArgument);
  link = (topo_nvlink_input_t){0, 1, 0, 0.0f};
  CHECK_EQ_INT(topo_system_build(&in, &sys), ncclInvalidArgument);
  in.nNvlinks = 0;
  in.hwlocXml = TOPO_TEST_DATA "/no_such_file.xml";
  CHECK_EQ_INT(topo_system_build(&in, &sys), ncclInvalidArgument);
  char junk[64];
  snprintf(junk, sizeof(junk), "/tmp/mkccl_topo_junk_%d.xml", (int)getpid());
  FILE* f = fopen(junk, "w");
  CHECK(f != NULL);
  fputs("<topology><object type=\"Machine\"", f); /* cut short */
  fclose(f);
  in.hwlocXml = junk;
  CHECK_EQ_INT(topo_system_build(&in, &sys), ncclInvalidArgument);
  unlink(junk);
  in = two_socket_inputs();
  in.gpus = NULL;
  CHECK_EQ_INT(topo_system_build(&in, &sys), ncclInvalidArgument);
  CHECK(sys == sentinel); /* outputs only on success */
  CHECK_EQ_INT(topo_system_build(&in, NULL), ncclInvalidArgument);

  in = two_socket_inputs();
  CHECK_NCCL(topo_system_build(&in, &sys));
  topo_path_t p = {0};
  CHECK_EQ_INT(topo_path(sys, TOPO_GPU, 4, TOPO_GPU, 0, &p), ncclInvalidArgument);
  CHECK_EQ_INT(topo_path(sys, TOPO_PCI, 0, TOPO_GPU, 0, &p), ncclInvalidArgument);
  CHECK_EQ_INT(topo_gpu_gpu_path_type(sys, 0, 9), TOPO_PATH_DIS);
  int nics[1], n;
  CHECK_EQ_INT(topo_gpu_best_nics(sys, -1, nics, 1, &n), ncclInvalidArgument);
  topo_system_free(sys);
}

int main(void) {
  unsetenv("NCCL_P2P_LEVEL");
  topo_inputs_t in = two_socket_inputs();
  topo_system_t* sys = NULL;
  CHECK_NCCL(topo_system_build(&in, &sys));
  check_paths(sys);
  check_affinity(sys);
  check_net_faster(sys);
  topo_system_free(sys);
  check_unplaced_nics();
  check_bad_inputs();
  return 0;
}
