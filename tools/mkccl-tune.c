/* mkccl-tune: what a tuner decides, without running anything. For a
 * communicator shape (ranks, nodes, bandwidths, or a topology XML file)
 * and a size sweep, prints per collective the algorithm, protocol,
 * channels and predicted time the built-in model, a tuner plugin, or two
 * of them side by side pick. Links the core's tuning code directly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/program.h"
#include "tune/tune.h"

/* Installed in bin/ beside lib/: the core finds the shipped plugins there. */
const int mkccl_program_beside_lib = 1;

#define MAX_TUNERS 2

typedef struct {
  const char* spec; /* "builtin" or a library path */
  tune_plugin_t* plugin;
  tune_ctx_t* ctx;
} tool_tuner_t;

static void usage(FILE* out) {
  fprintf(out,
          "Usage: mkccl-tune --ranks N [--nodes M] [--topo FILE.xml] [--intra-bw GB/s] [--inter-bw GB/s]\n"
          "                  [--intra-lat us] [--inter-lat us] [--intra-link nvlink|pci] [--gpu]\n"
          "                  [--channels C] [--coll allreduce,allgather,...] [--min BYTES] [--max BYTES]\n"
          "                  [--tuner builtin|PATH] [--compare builtin|PATH]\n"
          "Prints, for sizes from --min (8) to --max (8G) by powers of two and each collective, what\n"
          "the tuner picks (algorithm/protocol, channels) and the model's predicted time and bus\n"
          "bandwidth. --tuner names a tuner plugin library (default: the built-in model); --compare\n"
          "a second one printed alongside. --topo reads an NCCL topology XML for GPUs per node,\n"
          "NVLink and NIC speed. NCCL_ALGO and NCCL_PROTO apply as in a communicator.\n");
}

static int tool_size_parse(const char* s, size_t* v) {
  char* end = NULL;
  unsigned long long x = strtoull(s, &end, 10);
  int shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10;
  else if (*end == 'M' || *end == 'm') shift = 20;
  else if (*end == 'G' || *end == 'g') shift = 30;
  else if (*end) return -1;
  if (end == s) return -1;
  *v = (size_t)x << shift;
  return 0;
}

/* A summary of an NCCL topology XML: GPUs (ranks per node), NVLink, NIC speed (Mb/s). */
static int tool_topo_read(const char* path, costmodel_topo_t* topo) {
  FILE* f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "mkccl-tune: cannot open %s\n", path);
    return -1;
  }
  char line[4096];
  int gpus = 0, nvlink = 0;
  double speed = 0;
  while (fgets(line, sizeof(line), f)) {
    for (const char* p = line; (p = strstr(p, "<gpu")) != NULL; p += 4) gpus++;
    if (strstr(line, "<nvlink")) nvlink = 1;
    const char* net = strstr(line, "<net");
    const char* sp = net ? strstr(net, "speed=\"") : NULL;
    if (sp && strtod(sp + 7, NULL) > speed) speed = strtod(sp + 7, NULL);
  }
  fclose(f);
  if (gpus) {
    topo->ranksPerNode = gpus;
    topo->gpu = 1;
  }
  if (nvlink) {
    topo->intraLink = NCCL_HW_NVLINK;
    topo->intraBw = 150.0;
  }
  if (speed > 0) topo->interBw = speed / 8000.0; /* Mb/s -> GB/s */
  return 0;
}

static int tool_tuner_open(tool_tuner_t* t, const costmodel_topo_t* topo) {
  const ncclTuner_v6_t* table = NULL;
  if (strcmp(t->spec, "builtin") != 0) {
    setenv("NCCL_TUNER_PLUGIN", t->spec, 1); /* the loader's own selection, pointed at this file */
    if (tune_plugin_load(&t->plugin) != ncclSuccess || !t->plugin) {
      fprintf(stderr, "mkccl-tune: no tuner loaded from %s (NCCL_DEBUG=INFO says why)\n", t->spec);
      return -1;
    }
    table = tune_plugin_table(t->plugin);
  }
  if (tune_ctx_create(topo, table, 0x6d6b63636c, &t->ctx) != ncclSuccess) {
    fprintf(stderr, "mkccl-tune: %s\n", ncclGetLastError(NULL));
    return -1;
  }
  if (table && !tune_ctx_tuner(t->ctx)) {
    fprintf(stderr, "mkccl-tune: the tuner from %s failed its init (NCCL_DEBUG=WARN says why)\n", t->spec);
    return -1;
  }
  return 0;
}

static double tool_busbw_factor(int func, int n) {
  switch (func) {
    case ncclFuncAllReduce: return 2.0 * (n - 1) / n;
    case ncclFuncAllGather:
    case ncclFuncReduceScatter: return (double)(n - 1) / n;
    default: return 1.0;
  }
}

static void tool_print_sweep(tool_tuner_t* tuners, int nTuners, int func, const costmodel_topo_t* topo, int channels,
                             size_t lo, size_t hi) {
  printf("\n# %s, %d ranks on %d nodes\n%14s", costmodel_func_name(func), topo->nRanks, topo->nNodes, "bytes");
  for (int t = 0; t < nTuners; t++) printf(" | %-28.28s", tuners[t].spec);
  printf("\n%14s", "");
  for (int t = 0; t < nTuners; t++) printf(" | %-14s %2s %10s", "algo/proto", "ch", "us  GB/s");
  printf("\n");
  for (size_t bytes = lo; bytes <= hi && bytes; bytes <<= 1) {
    printf("%14zu", bytes);
    for (int t = 0; t < nTuners; t++) {
      tune_choice_t c;
      if (tune_decide(tuners[t].ctx, func, bytes, channels, NULL, &c) != ncclSuccess) {
        printf(" | %-28s", "(no choice)");
        continue;
      }
      char ap[32];
      snprintf(ap, sizeof(ap), "%s/%s%s", costmodel_algo_name(c.algo), costmodel_proto_name(c.proto),
               c.byTuner ? "*" : "");
      double bw = c.predictedUs > 0 ? bytes * tool_busbw_factor(func, topo->nRanks) / (c.predictedUs * 1e3) : 0;
      printf(" | %-14s %2d %9.1f %6.2f", ap, c.nChannels, (double)c.predictedUs, bw);
    }
    printf("\n");
  }
}

int main(int argc, char** argv) {
  costmodel_topo_t topo;
  costmodel_topo_default(&topo, 0, 1);
  int ranks = 0, nodes = 1, channels = 4, nTuners = 1;
  const char *topoFile = NULL, *colls = "allreduce,allgather,reducescatter,broadcast,reduce";
  double intraBw = 0, interBw = 0, intraLat = 0, interLat = 0;
  int gpu = 0, intraLink = -1;
  size_t lo = 8, hi = (size_t)8 << 30;
  tool_tuner_t tuners[MAX_TUNERS] = {{"builtin", NULL, NULL}, {NULL, NULL, NULL}};
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    int takes = 1;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--gpu")) {
      gpu = 1;
      takes = 0;
    } else if (!v) {
      usage(stderr);
      return 1;
    } else if (!strcmp(a, "--ranks")) ranks = atoi(v);
    else if (!strcmp(a, "--nodes")) nodes = atoi(v);
    else if (!strcmp(a, "--topo")) topoFile = v;
    else if (!strcmp(a, "--intra-bw")) intraBw = atof(v);
    else if (!strcmp(a, "--inter-bw")) interBw = atof(v);
    else if (!strcmp(a, "--intra-lat")) intraLat = atof(v);
    else if (!strcmp(a, "--inter-lat")) interLat = atof(v);
    else if (!strcmp(a, "--intra-link")) intraLink = !strcmp(v, "nvlink") ? NCCL_HW_NVLINK : NCCL_HW_PCI;
    else if (!strcmp(a, "--channels")) channels = atoi(v);
    else if (!strcmp(a, "--coll")) colls = v;
    else if (!strcmp(a, "--tuner")) tuners[0].spec = v;
    else if (!strcmp(a, "--compare")) tuners[1].spec = v, nTuners = 2;
    else if (!strcmp(a, "--min") || !strcmp(a, "--max")) {
      if (tool_size_parse(v, !strcmp(a, "--min") ? &lo : &hi) != 0) {
        fprintf(stderr, "mkccl-tune: bad size '%s'\n", v);
        return 1;
      }
    } else {
      fprintf(stderr, "mkccl-tune: unknown option '%s'\n", a);
      usage(stderr);
      return 1;
    }
    i += takes;
  }
  if (ranks < 1 || nodes < 1 || nodes > ranks || channels < 1 || lo < 1 || lo > hi) {
    fprintf(stderr, "mkccl-tune: need --ranks N >= --nodes M >= 1, --channels >= 1 and --min <= --max\n");
    usage(stderr);
    return 1;
  }
  costmodel_topo_default(&topo, ranks, nodes);
  if (topoFile && tool_topo_read(topoFile, &topo) != 0) return 1;
  if (topoFile && topo.ranksPerNode * nodes < ranks) topo.ranksPerNode = (ranks + nodes - 1) / nodes;
  if (intraBw > 0) topo.intraBw = intraBw;
  if (interBw > 0) topo.interBw = interBw;
  if (intraLink >= 0) topo.intraLink = intraLink;
  topo.intraLatUs = intraLat;
  topo.interLatUs = interLat;
  topo.gpu |= gpu;
  for (int t = 0; t < nTuners; t++)
    if (tool_tuner_open(&tuners[t], &topo) != 0) return 1;
  printf("mkccl-tune: %d ranks, %d nodes (%d per node), intra %s %.1f GB/s, inter %.1f GB/s, %d channels%s\n",
         topo.nRanks, topo.nNodes, topo.ranksPerNode, topo.intraLink == NCCL_HW_NVLINK ? "nvlink" : "pci",
         topo.intraBw, topo.interBw, channels, topo.gpu ? ", GPU" : "");
  printf("(* = the plugin changed what the model alone picks; time and GB/s are the model's)\n");
  int status = 0;
  for (const char* c = colls; *c;) {
    const char* comma = strchr(c, ',');
    size_t len = comma ? (size_t)(comma - c) : strlen(c);
    int func = costmodel_func_parse(c, len);
    if (func < 0 || func >= ncclFuncSendRecv) {
      fprintf(stderr, "mkccl-tune: unknown collective '%.*s'\n", (int)len, c);
      status = 1;
      break;
    }
    tool_print_sweep(tuners, nTuners, func, &topo, channels, lo, hi);
    c = comma ? comma + 1 : c + len;
  }
  for (int t = nTuners - 1; t >= 0; t--) {
    tune_ctx_destroy(tuners[t].ctx);
    tune_plugin_unload(tuners[t].plugin);
  }
  return status;
}
