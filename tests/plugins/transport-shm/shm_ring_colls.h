/* What the single-copy tests of transport-shm run of the ring AllGather and
 * Broadcast (NCCL_ALGO=Ring, NCCL_PROTO=Simple), on buffers of the kind
 * each test gives (ncclMemAlloc'ed, or registered): out of place and in
 * place with both buffers of that kind, every received byte read in place;
 * the input alone of that kind (the output malloc'ed), only the first hop;
 * Broadcast from every root into that kind. Every byte on every rank is
 * checked; what this rank should read in place is added to *inPlace. */
#ifndef MKCCL_TESTS_SHM_RING_COLLS_H
#define MKCCL_TESTS_SHM_RING_COLLS_H

#include "nccl.h"
#include "plugin_check.h"

typedef struct {
  /* n bytes of the kind under test, zeroed; *h: what release needs. */
  uint8_t* (*alloc)(ncclComm_t comm, size_t n, void** h);
  void (*release)(ncclComm_t comm, uint8_t* p, void* h);
} shm_buf_kind_t;

static inline void shm_ring_colls(ncclComm_t comm, int rank, int nRanks, int call, const shm_buf_kind_t* kind,
                                  uint64_t* inPlace) {
  static const size_t counts[] = {1, 100003, (5u << 20) / 4 + 3};
  for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
    size_t b = counts[k] * 4, all = b * (size_t)nRanks;
    void *hi, *ho;
    uint8_t* in = kind->alloc(comm, b, &hi);
    uint8_t* out = kind->alloc(comm, all, &ho);
    uint8_t* plainOut = malloc(all);
    CHECK(plainOut);
    /* Out of place, both of the kind: every received byte by address. */
    call++;
    fill(in, b, rank, 0, call);
    CHECK_NCCL(ncclAllGather(in, out, counts[k], ncclFloat, comm, NULL));
    for (int r = 0; r < nRanks; r++) expect(out + (size_t)r * b, b, r, 0, call);
    *inPlace += all - b;
    /* In place. */
    call++;
    memset(out, 0, all);
    fill(out + (size_t)rank * b, b, rank, 0, call);
    CHECK_NCCL(ncclAllGather(out + (size_t)rank * b, out, counts[k], ncclFloat, comm, NULL));
    for (int r = 0; r < nRanks; r++) expect(out + (size_t)r * b, b, r, 0, call);
    *inPlace += all - b;
    /* Only the input of the kind: the first hop by address, the rest copied. */
    call++;
    fill(in, b, rank, 0, call);
    memset(plainOut, 0, all);
    CHECK_NCCL(ncclAllGather(in, plainOut, counts[k], ncclFloat, comm, NULL));
    for (int r = 0; r < nRanks; r++) expect(plainOut + (size_t)r * b, b, r, 0, call);
    *inPlace += b;
    /* Broadcast from every root into memory of the kind. */
    for (int root = 0; root < nRanks; root++) {
      call++;
      if (rank == root) fill(in, b, root, 1, call);
      memset(out, 0, b);
      CHECK_NCCL(ncclBroadcast(in, out, counts[k], ncclFloat, root, comm, NULL));
      expect(out, b, root, 1, call);
      if (rank != root) *inPlace += b;
    }
    free(plainOut);
    kind->release(comm, out, ho);
    kind->release(comm, in, hi);
  }
}

#endif
