/* NCCL_ALGO and NCCL_PROTO: which algorithms and protocols the user allows,
 * per collective function.
 *
 * Syntax (NCCL's, case-insensitive, spaces ignored):
 *   list            "ring,tree"     only these
 *   ^list           "^tree"         all but these
 *   func:list       "allreduce:tree,ring;allgather:^ring"  per function,
 *                   entries separated by ';', later entries win
 * Algorithms: tree ring collnetdirect collnetchain (collnet = both) nvls
 * nvlstree pat. Protocols: ll ll128 simple. Functions: broadcast reduce
 * allgather reducescatter allreduce sendrecv send recv. */
#ifndef MKCCL_TUNE_FILTER_H
#define MKCCL_TUNE_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "tuner/nccl_tuner.h"

typedef struct {
  uint8_t algo[ncclNumFuncs][NCCL_NUM_ALGORITHMS];  /* 1: allowed */
  uint8_t proto[ncclNumFuncs][NCCL_NUM_PROTOCOLS];
} tune_filter_t;

/* Everything allowed. */
void tune_filter_init(tune_filter_t* f);

typedef enum { TUNE_FILTER_ALGO = 0, TUNE_FILTER_PROTO = 1 } tune_filter_kind_t;

/* Apply `text` (NULL or "" changes nothing). 0 on success; -1 with a message
 * naming the offending word and its offset in `err`, and *f unchanged. */
int tune_filter_parse(const char* text, tune_filter_kind_t kind, tune_filter_t* f, char* err, size_t errSize);

static inline int tune_filter_allows(const tune_filter_t* f, int func, int algo, int proto) {
  return f->algo[func][algo] && f->proto[func][proto];
}

#endif
