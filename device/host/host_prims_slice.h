/* The slice steps of the host primitives (host_prims.c), for the other
 * files of the host executor that move slices their own way
 * (host_prims_ptr.c). */
#ifndef MKCCL_HOST_PRIMS_SLICE_H
#define MKCCL_HOST_PRIMS_SLICE_H

#include "host_prims.h"

/* Until the peer's `word` (head or tail) reaches target. */
ncclResult_t host_prims_wait_peer(host_prims_t* p, host_conn_t* c, volatile uint64_t* word, uint64_t target,
                                  const char* what);
/* A recv connection's current slice once published: where its data is. */
ncclResult_t host_prims_slice_in(host_prims_t* p, host_conn_t* c, steps_shape_t s, const char** in);
/* A send connection's current slice once free: where to write it. */
ncclResult_t host_prims_slice_out(host_prims_t* p, host_conn_t* c, steps_shape_t s, char** out);
/* Done with a received slice: its slots go back to the sender. */
void host_prims_slice_release(host_conn_t* c, steps_shape_t s);
/* A written slice of `bytes` goes to the receiver. */
void host_prims_slice_publish(host_conn_t* c, steps_shape_t s, int64_t bytes);
/* One slice's data moved from the received inputs and this rank's own into
 * the send slots and the user's output (host_prims_chunk's move). */
void host_prims_move_slice(host_prims_t* p, const char* const* in, int nIn, const char* mine, char* const* out,
                           int nOut, char* user, int64_t bytes, int final, int raw);

#endif
