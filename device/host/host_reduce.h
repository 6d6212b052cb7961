/* The one data kernel of the host executor: read up to two inputs, combine
 * them with the reduction, write up to two outputs.
 *   a: data received from a peer (already combined, already pre-multiplied)
 *   b: this rank's own input (pre-multiplied here for PREMULSUM)
 *   post: the value is final: apply the post-division (SUMPOSTDIV)
 * With only one input it is a copy (plus pre/post). */
#ifndef MKCCL_HOST_REDUCE_H
#define MKCCL_HOST_REDUCE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  int type;        /* ncclDataType_t */
  int op;          /* MK_OP_* */
  uint64_t scalar; /* PREMULSUM: element bits; SUMPOSTDIV: divisor */
} host_redop_t;

void host_reduce_copy(const host_redop_t* r, void* dst1, void* dst2, const void* a, const void* b, size_t n,
                      int post);

#endif
