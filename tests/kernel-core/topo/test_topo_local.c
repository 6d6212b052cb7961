/* Topology of the machine the test runs on: it must build with no GPU and no
 * NIC (CPU only), and MKCCL_TOPO_HWLOC_XML must replace the probe. */
#include <stdlib.h>
#include <unistd.h>

#include "cuda/driver.h"
#include "topo_fixture.h"

int main(void) {
  unsetenv("MKCCL_TOPO_HWLOC_XML");
  unsetenv("NCCL_TOPO_DUMP_FILE");
  topo_inputs_t in = {0};
  in.noCudaGpus = 1;
  topo_system_t* sys = NULL;
  CHECK_NCCL(topo_system_build(&in, &sys));
  int nCpus = topo_count(sys, TOPO_CPU);
  CHECK(nCpus >= 1);
  CHECK_EQ_INT(topo_count(sys, TOPO_GPU), 0);
  CHECK_EQ_INT(topo_count(sys, TOPO_NIC), 0);
  int cores = 0;
  for (int c = 0; c < nCpus; c++) {
    cpu_set_t set;
    CHECK_NCCL(topo_cpu_affinity(sys, c, &set));
    cores += CPU_COUNT(&set);
    CHECK(topo_cpu_numa_id(sys, c) >= 0);
    for (int d = 0; d < nCpus; d++)
      CHECK_EQ_INT(path_of(sys, TOPO_CPU, c, TOPO_CPU, d).type, c == d ? TOPO_PATH_LOC : TOPO_PATH_SYS);
  }
  CHECK(cores >= 1 && cores <= sysconf(_SC_NPROCESSORS_CONF));
  int nics[1], n;
  CHECK_EQ_INT(topo_gpu_best_nics(sys, 0, nics, 1, &n), ncclInvalidArgument);
  CHECK_EQ_INT(topo_gpu_nic_for_channel(sys, 0, 0), -1);
  char* text = NULL;
  size_t len = 0;
  FILE* f = open_memstream(&text, &len);
  topo_print(sys, f);
  fclose(f);
  CHECK_STR_CONTAINS(text, "CPU 0: NUMA");
  CHECK_STR_CONTAINS(text, "0 GPUs, 0 NICs");
  free(text);
  topo_system_free(sys);

  /* GPUs from the CUDA driver, if this machine has one: as many as it says. */
  in.noCudaGpus = 0;
  CHECK_NCCL(topo_system_build(&in, &sys));
  CHECK_EQ_INT(topo_count(sys, TOPO_GPU), cuda_device_count());
  topo_system_free(sys);

  /* The parameter names a synthetic machine instead. */
  setenv("MKCCL_TOPO_HWLOC_XML", TWO_SOCKET_XML, 1);
  in.noCudaGpus = 1;
  CHECK_NCCL(topo_system_build(&in, &sys));
  CHECK_EQ_INT(topo_count(sys, TOPO_CPU), 2);
  topo_system_free(sys);
  return 0;
}
