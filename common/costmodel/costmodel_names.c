/* NCCL's algorithm, protocol and function names, lower case, as tuners,
 * NCCL_ALGO/NCCL_PROTO and logs spell them. */
#include "costmodel/costmodel_names.h"

#include <string.h>
#include <strings.h>

static const char* const names_algo[NCCL_NUM_ALGORITHMS] = {"tree", "ring", "collnetdirect", "collnetchain",
                                                             "nvls", "nvlstree", "pat"};
static const char* const names_proto[NCCL_NUM_PROTOCOLS] = {"ll", "ll128", "simple"};
static const char* const names_func[ncclNumFuncs] = {"broadcast", "reduce",   "allgather", "reducescatter",
                                                     "allreduce", "sendrecv", "send",      "recv"};

const char* costmodel_algo_name(int algo) { return algo >= 0 && algo < NCCL_NUM_ALGORITHMS ? names_algo[algo] : "?"; }
const char* costmodel_proto_name(int proto) {
  return proto >= 0 && proto < NCCL_NUM_PROTOCOLS ? names_proto[proto] : "?";
}
const char* costmodel_func_name(int func) { return func >= 0 && func < ncclNumFuncs ? names_func[func] : "?"; }

static int names_lookup(const char* const* names, int n, const char* text, size_t len) {
  for (int i = 0; i < n; i++)
    if (strlen(names[i]) == len && strncasecmp(names[i], text, len) == 0) return i;
  return -1;
}

int costmodel_algo_parse(const char* text, size_t len) {
  return names_lookup(names_algo, NCCL_NUM_ALGORITHMS, text, len);
}
int costmodel_proto_parse(const char* text, size_t len) {
  return names_lookup(names_proto, NCCL_NUM_PROTOCOLS, text, len);
}
int costmodel_func_parse(const char* text, size_t len) { return names_lookup(names_func, ncclNumFuncs, text, len); }
