/* How many channels a host communicator takes by default
 * (dp_host_channels_for): a channel per 2 CPUs of a rank's share over
 * shared memory, every CPU but one over the network, 1 to 8. A thread on every CPU let
 * one descheduled thread stall the rings (docs/PERFORMANCE.md). And how
 * many a GPU point-to-point transfer takes (dp_gpu_p2p_channels_for), and
 * the connection buffer's size (dp_host_buffsize_for). */
#include "check.h"
#include "dp/dp.h"

int main(void) {
  /* 32 CPUs: 2 ranks 8 channels, 4 ranks 4 (not 8: 32 spinning threads). */
  CHECK_EQ_INT((int)dp_host_channels_for(32, 2, 0), 8);
  CHECK_EQ_INT((int)dp_host_channels_for(32, 4, 0), 4);
  CHECK_EQ_INT((int)dp_host_channels_for(16, 4, 0), 2);
  /* Over the network: a CPU each, one per rank left to its proxy. */
  CHECK_EQ_INT((int)dp_host_channels_for(16, 4, 1), 3);
  CHECK_EQ_INT((int)dp_host_channels_for(32, 4, 1), 7);
  CHECK_EQ_INT((int)dp_host_channels_for(32, 8, 1), 3);
  CHECK_EQ_INT((int)dp_host_channels_for(32, 2, 1), 8);
  CHECK_EQ_INT((int)dp_host_channels_for(2, 4, 1), 1);
  /* Never below 1 (more ranks than CPUs), never above 8. */
  CHECK_EQ_INT((int)dp_host_channels_for(2, 2, 0), 1);
  CHECK_EQ_INT((int)dp_host_channels_for(2, 8, 1), 1);
  CHECK_EQ_INT((int)dp_host_channels_for(0, 1, 0), 1);
  CHECK_EQ_INT((int)dp_host_channels_for(256, 1, 0), 8);
  CHECK_EQ_INT((int)dp_host_channels_for(64, 0, 0), 1); /* no ranks counted: the floor */
  /* GPU point-to-point: 64 channels up to 4 ranks (a 4-GPU Send/Recv ring
   * needs them), 16 beyond (every peer used holds its channels' buffers). */
  CHECK_EQ_INT(dp_gpu_p2p_channels_for(2), 64);
  CHECK_EQ_INT(dp_gpu_p2p_channels_for(4), 64);
  CHECK_EQ_INT(dp_gpu_p2p_channels_for(5), 16);
  CHECK_EQ_INT(dp_gpu_p2p_channels_for(8), 16);
  /* A point-to-point transfer's channels: the setting (2) of the comm's, a
   * GPU's 0 by rank count, and one for a host communicator over the network
   * unless the user set it. */
  CHECK_EQ_INT(dp_p2p_channels_for(2, 0, 0, 0, 4, 4), 2);
  CHECK_EQ_INT(dp_p2p_channels_for(2, 0, 0, 0, 4, 1), 1);
  CHECK_EQ_INT(dp_p2p_channels_for(2, 0, 0, 1, 4, 3), 1);
  CHECK_EQ_INT(dp_p2p_channels_for(3, 1, 0, 1, 4, 3), 3);
  CHECK_EQ_INT(dp_p2p_channels_for(2, 1, 0, 1, 4, 3), 2);
  CHECK_EQ_INT(dp_p2p_channels_for(0, 0, 1, 0, 4, 64), 64);
  CHECK_EQ_INT(dp_p2p_channels_for(0, 0, 1, 0, 8, 64), 16);
  CHECK_EQ_INT(dp_p2p_channels_for(0, 1, 0, 0, 4, 4), 1);
  /* Connection buffers: NCCL_BUFFSIZE, except a host communicator over
   * shared memory on one channel with a CPU per rank, unless the user set
   * NCCL_BUFFSIZE. */
  const int64_t def = 4 << 20, one = 1 << 20;
  CHECK(dp_host_buffsize_for(def, 0, 1, 0, 1, 0, one) == one);
  CHECK(dp_host_buffsize_for(def, 1, 1, 0, 1, 0, one) == def); /* the user's NCCL_BUFFSIZE */
  CHECK(dp_host_buffsize_for(def, 0, 1, 0, 2, 0, one) == def); /* several channels */
  CHECK(dp_host_buffsize_for(def, 0, 1, 1, 1, 0, one) == def); /* rings over the network */
  CHECK(dp_host_buffsize_for(def, 0, 0, 0, 1, 0, one) == def); /* GPU */
  CHECK(dp_host_buffsize_for(def, 0, 1, 0, 1, 1, one) == def); /* more ranks than CPUs */
  CHECK(dp_host_buffsize_for(def, 0, 1, 0, 1, 0, 0) == def);   /* the exception switched off */
  return 0;
}
