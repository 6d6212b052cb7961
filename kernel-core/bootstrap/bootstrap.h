/* Bootstrap (docs/BOOTSTRAP.md): the unique id, the root thread(s), the
 * ring, ring allgather, tagged point-to-point messages between any two
 * ranks, barriers. Everything runs over TCP (mkccl_sock); every connection
 * starts with a hello carrying the communicator's magic and is dropped
 * (with a WARN naming the peer) when it does not. Every wait is bounded by
 * MKCCL_BOOTSTRAP_TIMEOUT and watches the caller's abort flag.
 *
 * Messages are meant to be small (connection info, peer info): a send
 * completes into the kernel's socket buffer, so two ranks that both send
 * megabytes to each other before receiving would wait until the timeout.
 * bootstrap_allgather has no such limit (its ring steps send and receive at
 * once). */
#ifndef MKCCL_BOOTSTRAP_BOOTSTRAP_H
#define MKCCL_BOOTSTRAP_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"
#include "sock/sock.h"

/* What an ncclUniqueId holds (the rest of its 128 bytes is zero). */
typedef struct {
  uint64_t magic;   /* random per id; NCCL_COMM_ID ids use a fixed one */
  sock_addr_t addr; /* the root's listen address */
} bootstrap_handle_t;

/* Tags below 0 are the bootstrap's and the communicator's own; modules use
 * tags >= 0 (one constant per use, kept next to its user). */
enum {
  BOOTSTRAP_TAG_BARRIER = -1,
  BOOTSTRAP_TAG_SPLIT = -2,
  BOOTSTRAP_TAG_SUBSET_ALLGATHER = -3,
  BOOTSTRAP_TAG_SUBSET_BARRIER = -4,
};

typedef struct bootstrap_state bootstrap_state_t;

/* ---- ids and roots ------------------------------------------------------------------------- */
/* The interface bootstrap traffic uses: NCCL_SOCKET_IFNAME, NCCL_SOCKET_FAMILY,
 * the subnet of NCCL_COMM_ID, else the automatic order. */
ncclResult_t bootstrap_iface_get(sock_iface_t* iface);
/* A new id. useEnv: honour NCCL_COMM_ID (the id then names that address and
 * no root starts here); otherwise a random magic, this host's bootstrap
 * address, and a root thread listening there. */
ncclResult_t bootstrap_handle_create(bootstrap_handle_t* handle, int useEnv);
/* Reads an id received from the application; ncclInvalidArgument if it is
 * not one of ours. */
ncclResult_t bootstrap_handle_from_id(const ncclUniqueId* id, bootstrap_handle_t* handle);
void bootstrap_handle_to_id(const bootstrap_handle_t* handle, ncclUniqueId* id);
/* An id made from NCCL_COMM_ID (its root is started by rank 0). */
int bootstrap_handle_is_env(const bootstrap_handle_t* handle);

/* Which of nRoots roots serves rank (NCCL's rootIdFromRank, offset 0). */
int bootstrap_root_of_rank(int rank, int nRanks, int nRoots);
/* The first rank a root serves and how many. */
int bootstrap_root_first_rank(int root, int nRanks, int nRoots);
int bootstrap_root_rank_count(int root, int nRanks, int nRoots);

/* Starts a root thread listening at handle->addr; port 0 picks a free port
 * and writes it into handle->addr (NCCL_COMM_ID names a fixed one). */
ncclResult_t bootstrap_root_start(bootstrap_handle_t* handle);
/* Ends (stop: at once; else once it has answered every rank) and joins the
 * root of handle if it runs in this process. Bounded by its timeout. */
void bootstrap_root_finish(const bootstrap_handle_t* handle, int stop);
/* Joins the roots that have finished on their own. */
void bootstrap_root_reap(void);

/* ---- a communicator's bootstrap --------------------------------------------------------------- */
/* Registers with the root that serves rank (handles[bootstrap_root_of_rank]),
 * forms the ring and learns every rank's address. abortFlag may be NULL. */
ncclResult_t bootstrap_init(const bootstrap_handle_t* handles, int nHandles, int rank, int nRanks,
                            volatile uint32_t* abortFlag, bootstrap_state_t** state);
/* Closes every connection; NULL is fine. Other threads must be out of the
 * state's calls (raise the abort flag and join them first). */
void bootstrap_destroy(bootstrap_state_t* state);

int bootstrap_rank(const bootstrap_state_t* state);
int bootstrap_nranks(const bootstrap_state_t* state);
/* A rank's bootstrap listen address (learnt at init). */
const sock_addr_t* bootstrap_peer_addr(const bootstrap_state_t* state, int rank);

/* data holds nRanks slices of size bytes; this rank's slice (data + rank *
 * size) is sent, the others are filled in. */
ncclResult_t bootstrap_allgather(bootstrap_state_t* state, void* data, size_t size);
/* Tagged messages between any two ranks, in order per (peer, tag). The
 * receiver names the exact size; a different size is an error. Connections
 * are made on first use and kept. peer may be the rank itself. */
ncclResult_t bootstrap_send(bootstrap_state_t* state, int peer, int tag, const void* data, size_t size);
ncclResult_t bootstrap_recv(bootstrap_state_t* state, int peer, int tag, void* data, size_t size);
/* Every rank waits for all (dissemination, log2(n) rounds). */
ncclResult_t bootstrap_barrier(bootstrap_state_t* state);

/* Which abort flag the state's waits watch (NULL: none); returns the one it
 * watched. ncclCommShrink with NCCL_SHRINK_ABORT still talks to the
 * survivors over an aborted parent's bootstrap. */
volatile uint32_t* bootstrap_abort_watch(bootstrap_state_t* state, volatile uint32_t* flag);

/* The same over a subset of ranks (the ranks of one node, say): ranks[] in
 * the same order on every member, me = this rank's index in it. */
ncclResult_t bootstrap_subset_allgather(bootstrap_state_t* state, const int* ranks, int n, int me, void* data,
                                        size_t size);
ncclResult_t bootstrap_subset_barrier(bootstrap_state_t* state, const int* ranks, int n, int me);

#endif
