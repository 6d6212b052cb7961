/* Shared inputs for the topology tests: the synthetic machines under data/
 * and the GPUs and NICs placed in them. */
#ifndef MKCCL_TESTS_TOPO_FIXTURE_H
#define MKCCL_TESTS_TOPO_FIXTURE_H

#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "topo/topo.h"

#define TWO_SOCKET_XML TOPO_TEST_DATA "/two_socket_4gpu_2nic.xml"
#define NESTED_XML TOPO_TEST_DATA "/nested_switch_amd.xml"

#define CHECK_BW(value, expected)                                                              \
  do {                                                                                         \
    double v_ = (value), e_ = (expected);                                                      \
    if (fabs(v_ - e_) > 0.01) {                                                                \
      fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%g != %g)\n", __FILE__, __LINE__, #value, \
              #expected, v_, e_);                                                              \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

/* Socket 0: GPU0, GPU1, NIC0 under one switch; socket 1: GPU2 and NIC1 under
 * one switch, GPU3 under another. Every GPU can do GPUDirect RDMA. NIC0 is
 * limited by its PCIe Gen3 x16 slot (12 GB/s), NIC1 by its 50 Gb/s link. */
static const topo_gpu_input_t two_socket_gpus[4] = {
    {"0000:03:00.0", 0, 90, 0, 0.0f, 1},
    {"0000:04:00.0", 1, 90, 1, 0.0f, 1},
    {"0000:83:00.0", 2, 90, 2, 0.0f, 1},
    {"0000:87:00.0", 3, 90, 3, 0.0f, 1},
};
static const topo_nic_input_t two_socket_nics[2] = {
    {"mlx5_0", "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:14.0/0000:05:00.0", 100000, 1},
    {"mlx5_1", "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:01.0/0000:84:00.0", 50000, 1},
};

static inline topo_inputs_t two_socket_inputs(void) {
  topo_inputs_t in = {0};
  in.hwlocXml = TWO_SOCKET_XML;
  in.gpus = two_socket_gpus;
  in.nGpus = 4;
  in.nics = two_socket_nics;
  in.nNics = 2;
  return in;
}

static inline topo_path_t path_of(const topo_system_t* sys, int ta, int a, int tb, int b) {
  topo_path_t p;
  CHECK_NCCL(topo_path(sys, ta, a, tb, b, &p));
  return p;
}

#endif
