/* The built-in cost model (see costmodel.h for the formulas). */
#include "costmodel/costmodel.h"

#include <math.h>
#include <string.h>

/* Defaults in the spirit of NCCL's tuning constants: base latency per
 * algorithm/protocol, per-hop latency per link class (us). */
static const double model_base_lat[NCCL_NUM_PROTOCOLS] = {6.6, 14.0, 8.4};
/* NVLink tree Simple: mkccl's GPU tree, measured on 4 H100s, costs ~10 us
 * a hop (a 4 ranks' 8 B AllReduce 48 us against the Simple ring's 23 us for
 * 6 hops, docs/perf/multi-gpu.md), so the model keeps NVLink GPUs on rings
 * unless there are many of them. */
static const double model_hw_lat[NCCL_NUM_HW_LINKS_V5][2][NCCL_NUM_PROTOCOLS] = {
    /* NVLINK: tree, ring */ {{0.6, 1.25, 10.0}, {0.6, 1.9, 3.4}},
    /* PCI */ {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}},
    /* NET */ {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}},
};
static const double model_tree_bw_factor = 0.92;
static const double model_ll_bw_factor = 0.5;
static const double model_ll128_bw_factor = 120.0 / 128.0;
static const size_t model_bytes_per_channel = 128 << 10;

void costmodel_topo_default(costmodel_topo_t* topo, int nRanks, int nNodes) {
  memset(topo, 0, sizeof(*topo));
  topo->nRanks = nRanks > 0 ? nRanks : 1;
  topo->nNodes = nNodes > 0 ? nNodes : 1;
  topo->ranksPerNode = (topo->nRanks + topo->nNodes - 1) / topo->nNodes;
  topo->intraLink = NCCL_HW_PCI;
  topo->intraBw = 20.0; /* shared memory copies */
  topo->interBw = 10.0; /* a 100 Gb/s NIC */
}

static void model_scale_link(ncclTunerConstants_v5_t* c, int link, double simpleLat) {
  if (simpleLat <= 0) return;
  for (int a = 0; a < 2; a++) {
    double scale = simpleLat / c->hwLatencies[link][a][NCCL_PROTO_SIMPLE];
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) c->hwLatencies[link][a][p] *= scale;
  }
}

void costmodel_constants(const costmodel_topo_t* topo, ncclTunerConstants_v5_t* c) {
  memset(c, 0, sizeof(*c));
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) c->baseLatencies[a][p] = model_base_lat[p];
  c->baseLatencies[NCCL_ALGO_TREE][NCCL_PROTO_LL] = 6.8;
  for (int l = 0; l < NCCL_NUM_HW_LINKS_V5; l++)
    for (int a = 0; a < 2; a++)
      for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) c->hwLatencies[l][a][p] = model_hw_lat[l][a][p];
  for (int cc = 0; cc < NCCL_NUM_COMPCAPS_V5; cc++) {
    for (int s = 0; s < NCCL_NUM_TUNING_SCALES_V5; s++) {
      c->llMaxBws[cc][s] = topo->gpu ? 40.0 : 1e9; /* LL on the host is bounded by the flags, not a cap */
      c->perChMaxRingLL128Bws[cc][s] = 20.0;
      c->perChMaxTreeLL128Bws[cc][s] = 20.0;
      c->perChMaxTreeBws[cc][s] = 24.0;
      c->perChMaxNVLSTreeBws[cc][s] = 24.0;
    }
  }
  model_scale_link(c, topo->intraLink, topo->intraLatUs);
  model_scale_link(c, NCCL_HW_NET, topo->interLatUs);
}

int costmodel_channels(size_t bytes, int nChannelsMax) {
  if (nChannelsMax < 1) return 1;
  size_t want = (bytes + model_bytes_per_channel - 1) / model_bytes_per_channel;
  if (want < 1) want = 1;
  return want < (size_t)nChannelsMax ? (int)want : nChannelsMax;
}

static int model_scale_index(int nNodes) { return nNodes <= 1 ? 0 : nNodes <= 2 ? 1 : 2; }

static int model_log2_ceil(int n) {
  int l = 0;
  while ((1 << l) < n) l++;
  return l;
}

static double model_bw(const costmodel_topo_t* t, const ncclTunerConstants_v5_t* c, int algo, int proto, int nChannels,
                       int nChannelsMax) {
  double bw = t->nNodes > 1 ? fmin(t->intraBw, t->interBw) : t->intraBw;
  bw *= (double)nChannels / (double)(nChannelsMax > 0 ? nChannelsMax : 1);
  if (algo == NCCL_ALGO_TREE) bw *= model_tree_bw_factor;
  int s = model_scale_index(t->nNodes);
  if (proto == NCCL_PROTO_LL) bw = fmin(bw * model_ll_bw_factor, c->llMaxBws[0][s]);
  if (proto == NCCL_PROTO_LL128) {
    double cap = (algo == NCCL_ALGO_TREE ? c->perChMaxTreeLL128Bws : c->perChMaxRingLL128Bws)[0][s] * nChannels;
    bw = fmin(bw * model_ll128_bw_factor, cap);
  }
  return bw;
}

static double model_lat(const costmodel_topo_t* t, const ncclTunerConstants_v5_t* c, ncclFunc_t func, int algo,
                        int proto) {
  int N = t->nRanks, intra = t->intraLink;
  double lat = c->baseLatencies[algo][proto];
  if (algo == NCCL_ALGO_TREE) {
    /* A double binary tree over all ranks, a host's ranks side by side:
     * the top log2(nNodes) levels cross the network, the rest stay inside. */
    int depth = model_log2_ceil(N), across = model_log2_ceil(t->nNodes);
    if (across > depth) across = depth;
    double ways = func == ncclFuncAllReduce ? 2.0 : 1.0; /* up and down, or one of them */
    return lat + ways * ((depth - across) * c->hwLatencies[intra][algo][proto] +
                        across * c->hwLatencies[NCCL_HW_NET][algo][proto]);
  }
  int steps = func == ncclFuncAllReduce ? 2 * (N - 1) : N - 1;
  int netSteps = t->nNodes > 1 ? (steps * t->nNodes + N - 1) / N : 0;
  if (netSteps > steps) netSteps = steps;
  return lat + (steps - netSteps) * c->hwLatencies[intra][algo][proto] +
         netSteps * c->hwLatencies[NCCL_HW_NET][algo][proto];
}

static double model_factor(ncclFunc_t func, int algo, int N) {
  switch (func) {
    case ncclFuncAllReduce: return algo == NCCL_ALGO_TREE ? 2.0 : 2.0 * (N - 1) / N;
    case ncclFuncAllGather:
    case ncclFuncReduceScatter: return (double)(N - 1) / N;
    default: return 1.0;
  }
}

void costmodel_table(const costmodel_topo_t* topo, const ncclTunerConstants_v5_t* c, ncclFunc_t func, size_t bytes,
                     int nChannels, int nChannelsMax, float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]) {
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) table[a][p] = (float)NCCL_ALGO_PROTO_IGNORE;
  int N = topo->nRanks > 0 ? topo->nRanks : 1;
  if (nChannels < 1) nChannels = 1;
  for (int a = NCCL_ALGO_TREE; a <= NCCL_ALGO_RING; a++) {
    if (a == NCCL_ALGO_TREE &&
        ((func != ncclFuncAllReduce && func != ncclFuncBroadcast && func != ncclFuncReduce) || N < 2))
      continue;
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
      if (p == NCCL_PROTO_LL128 && !topo->gpu) continue;
      if (func >= ncclFuncSendRecv && !(a == NCCL_ALGO_RING && p == NCCL_PROTO_SIMPLE)) continue;
      double bw = model_bw(topo, c, a, p, nChannels, nChannelsMax);
      if (bw <= 0) continue;
      double us = model_lat(topo, c, func, a, p) + (double)bytes * model_factor(func, a, N) / (bw * 1e3);
      table[a][p] = (float)us;
    }
  }
  if (topo->collnet && func == ncclFuncAllReduce && N >= 2 && topo->interBw > 0) {
    const int a = NCCL_ALGO_COLLNET_DIRECT, p = NCCL_PROTO_SIMPLE;
    double lat = c->baseLatencies[a][p] + 2.0 * c->hwLatencies[NCCL_HW_NET][NCCL_ALGO_RING][p];
    table[a][p] = (float)(lat + (double)bytes / (topo->interBw * 1e3));
  }
}
