/* A communicator's data path: channels, transports, the proxy client and
 * the executors. Lives inside struct ncclComm (comm->dp). */
#ifndef MKCCL_DP_DP_H
#define MKCCL_DP_DP_H

#include <stdint.h>

#include "channel/channel.h"
#include "device/common/work.h"
#include "proxy/proxy.h"
#include "transport/mkccl_transport_v1.h"
#include "transport/transport.h"

struct host_exec;
struct proxy_replay;
struct plugin_net;

/* What the channels hold: rings, trees, FLAT connections and their buffers. */
typedef struct dp_channels {
  int nChannels;
  channel_t channels[MK_MAX_CHANNELS];
  int* ringOrder;          /* [nRanks] ring order shared by the channels */
  int treesConnected;      /* channel_connect_trees ran */
  int flatConnected;       /* channel_connect_flat ran */
  int flatNoProxy;         /* and none of its connections needs the proxy (plan_alone.c) */
  int flatLL;              /* GPU: every rank's FLAT connections have LL lines (agreed when made) */
  uint64_t connGen;        /* transport_connect calls that made connections: the GPU's copy syncs on a change */
  uint8_t* rootTreesConnected; /* [nRanks] channel_connect_rooted_trees ran for that root */
  int buffSize;            /* bytes per connection buffer (Simple protocol) */
  int llBuffSize;          /* bytes per GPU ring connection's LL buffer (0: none) */
  int ringLL;              /* every ring connection has an LL buffer: the GPU kernels may run LL */
} dp_channels_t;

/* The transports: their table and the peers as they see them. */
typedef struct dp_transports {
  mkcclPeer_v1* peers;     /* [nRanks] */
  transport_set_t set;
  int ready;
} dp_transports_t;

/* The executor (kernel-core/exec) and the device contexts it works in. */
typedef struct dp_exec {
  const struct exec_ops* ops; /* chosen at init (exec_for) */
  void* state;                /* the executor's own, NULL until made */
  void* gpuCtx;               /* GPU: the device's primary context, held */
  uint64_t gpuPeerCtxHeld;    /* devices whose primary context peer access maps: held (bit per device) */
} dp_exec_t;

/* The net plugin the communicator bound, and its net device type. */
typedef struct dp_net {
  const void* api;         /* ncclNet_v12_t* of the chosen net plugin, NULL when none */
  void* context;
  struct plugin_net* plugin;
  int devType;             /* ncclNetDeviceType the net connections use (netdev/netdev.h) */
  const void* device;      /* mkcclNetDevice_v1* of that type, NULL for HOST */
  void* devCubin;          /* GPU and UNPACK: the collective kernels linked with its device code */
  size_t devCubinSize;
} dp_net_t;

/* Parameters the planner needs per operation, read once at init as NCCL
 * does (an environment lookup per call costs more than a small host
 * collective). */
typedef struct dp_params {
  int p2pChannels;         /* MKCCL_[GPU_]P2P_NCHANNELS, within nChannels */
  int64_t channelMinBytes; /* MKCCL_CHANNEL_MIN_BYTES */
  int channelBytesPerRank; /* host rings over the network: channelMinBytes counts a rank's share */
  int64_t flatMaxBytes;    /* MKCCL_[GPU_]FLAT_MAX_BYTES; 0 with NCCL_ALGO or NCCL_PROTO set, or GPU rings without LL */
  int64_t netFlatMaxBytes; /* MKCCL_NET_FLAT_MAX_BYTES where host rings cross the network, else 0 (as flatMaxBytes) */
  int64_t netFlatChunk;    /* MKCCL_NET_FLAT_CHUNK_BYTES */
  int netFlatMaxRanks;     /* MKCCL_NET_FLAT_MAX_RANKS */
  int64_t gpuLLMaxBytes;   /* MKCCL_GPU_LL_MAX_BYTES, 0 where NCCL_ALGO/NCCL_PROTO decide */
  int64_t gpuLLChannelBytes; /* MKCCL_GPU_LL_CHANNEL_BYTES */
  int64_t symmMaxBytes;    /* MKCCL_SYMM_MAX_BYTES on GPU communicators, 0 where NCCL_ALGO/NCCL_PROTO decide */
  int64_t symmOneShotMaxBytes; /* MKCCL_SYMM_ONESHOT_MAX_BYTES */
  int64_t symmChannelBytes;    /* MKCCL_SYMM_CHANNEL_BYTES */
  int workBatch;           /* GPU items per launch: half of NCCL_WORK_FIFO_BYTES */
  int hostShmCores;        /* host ranks of one host over SHM, each with a CPU: the model's SHM hop (tune stage) */
  int ringRegByAddr;       /* MKCCL_HOST_RING_REG_ADDR */
} dp_params_t;

typedef struct dp_state {
  dp_channels_t ch;
  dp_transports_t tr;
  proxy_client_t proxy;
  int proxyAttached;
  dp_exec_t exec;
  dp_net_t net;
  dp_params_t par;
  uint64_t opCount;
  int sendPeerSaid;        /* plan_p2p said once that window sends go by the receiver's address */
  uint64_t algoCount[MK_ALGO_COUNT]; /* collective items planned per algorithm, for tests and tools */
  uint64_t aloneCount;     /* of those, run at once outside any group (plan_alone.c), for tests */
  struct proxy_replay* graphOps; /* proxy ops of captured launches (plan/plan_graph.h) */
  struct collnet_comm* collnet; /* the collnet the CollNet algorithm reduces through, NULL: none (collnet/collnet.h) */
  const struct topo_system* topo; /* the machine's, shared, NULL when not needed or not built (dp_topo.h) */
} dp_state_t;

/* Channels of a host communicator when MKCCL_HOST_NCHANNELS is 0, for one
 * host of `cpus` CPUs (its ranks' affinity) shared by `hostRanks` ranks:
 * a channel needs 2 CPUs over shared memory and 1 over the network (`net`;
 * one CPU of a rank's share left to its proxy); 1 to 8. */
int64_t dp_host_channels_for(int64_t cpus, int hostRanks, int net);

/* Channels a GPU point-to-point transfer is split over when
 * MKCCL_GPU_P2P_NCHANNELS is 0, in a communicator of nRanks (each channel
 * of each peer used holds an NCCL_BUFFSIZE buffer). */
int dp_gpu_p2p_channels_for(int nRanks);

/* Channels a point-to-point transfer is split over, of a communicator's
 * nChannels: `p2p` is MKCCL_[GPU_]P2P_NCHANNELS (`userSet`: not its
 * default); a GPU's 0 is dp_gpu_p2p_channels_for; a host communicator over
 * the network takes 1 unless the user set it. */
int dp_p2p_channels_for(int64_t p2p, int userSet, int gpu, int hostNet, int nRanks, int nChannels);

/* Connection buffer bytes: NCCL_BUFFSIZE (ncclBuff), or for a host
 * communicator over shared memory that runs one channel on hosts with a CPU
 * per rank, unless the user set NCCL_BUFFSIZE, MKCCL_HOST_SHM_BUFFSIZE
 * (oneChannelShm; 0: no exception). */
int64_t dp_host_buffsize_for(int64_t ncclBuff, int userSet, int host, int net, int nChannels, int oversubscribed,
                             int64_t oneChannelShm);

struct ncclComm;

/* After bootstrap and peer info: transports, channels, ring connections,
 * proxy, host executor. dp_fini undoes what dp_init did, in reverse. */
ncclResult_t dp_init(struct ncclComm* comm);
void dp_fini(struct ncclComm* comm);

/* Connect the p2p connectors to `peers` on channels [0, nChannels) that are
 * not connected yet (both ends call this with matching peers). */
ncclResult_t dp_connect_p2p(struct ncclComm* comm, const int* sendPeers, int nSend, const int* recvPeers,
                            int nRecv, int nChannels);

#endif
