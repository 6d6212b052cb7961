/* GPUs found through the CUDA driver (a fake libcuda with two devices whose
 * bus ids the synthetic machine does not have: they hang off CPU 0). */
#include <stdlib.h>

#include "topo_fixture.h"

int main(void) {
  setenv("MKCCL_CUDA_LIBRARY", FAKE_CUDA_LIB, 1);
  unsetenv("MKCCL_CUDA_DISABLE");
  topo_inputs_t in = {0};
  in.hwlocXml = TWO_SOCKET_XML;
  topo_system_t* sys = NULL;
  CHECK_NCCL(topo_system_build(&in, &sys));
  CHECK_EQ_INT(topo_count(sys, TOPO_GPU), 2);
  CHECK(strcmp(topo_gpu_bus_id(sys, 0), "0000:1b:00.0") == 0);
  CHECK(strcmp(topo_gpu_bus_id(sys, 1), "0000:3d:00.0") == 0);
  CHECK_EQ_INT(topo_gpu_cuda_dev(sys, 1), 1);
  CHECK_EQ_INT(topo_gpu_gpu_path_type(sys, 0, 1), TOPO_PATH_PHB);
  char* text = NULL;
  size_t len = 0;
  FILE* f = open_memstream(&text, &len);
  topo_print(sys, f);
  fclose(f);
  CHECK_STR_CONTAINS(text, "GPU 1 0000:3d:00.0 cudaDev 1 sm 90");
  free(text);
  topo_system_free(sys);

  /* The caller's list wins; noCudaGpus leaves the driver alone. */
  in.gpus = two_socket_gpus;
  in.nGpus = 1;
  CHECK_NCCL(topo_system_build(&in, &sys));
  CHECK_EQ_INT(topo_count(sys, TOPO_GPU), 1);
  CHECK(strcmp(topo_gpu_bus_id(sys, 0), "0000:03:00.0") == 0);
  topo_system_free(sys);
  in.gpus = NULL;
  in.nGpus = 0;
  in.noCudaGpus = 1;
  CHECK_NCCL(topo_system_build(&in, &sys));
  CHECK_EQ_INT(topo_count(sys, TOPO_GPU), 0);
  topo_system_free(sys);
  return 0;
}
