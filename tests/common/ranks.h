/* Multi-rank tests run ranks as real processes: ranks_run forks n children,
 * each runs fn(rank, n, arg) and exits with its return value; the parent
 * waits (killing all after timeoutSec, or a few seconds after one rank
 * failed) and returns 0 only if every rank
 * returned 0. Shared setup (a unique id, say) goes in `arg` before the call:
 * children inherit it. */
#ifndef MKCCL_TESTS_RANKS_H
#define MKCCL_TESTS_RANKS_H

typedef int (*rank_fn)(int rank, int nranks, void* arg);

int ranks_run(int nranks, rank_fn fn, void* arg, int timeoutSec);

/* As ranks_run, for tests where some ranks are meant to die: status[r] is
 * the rank's exit code, or -signal when a signal ended it. Returns -1 only
 * on a timeout (every rank killed) or a failed fork. */
int ranks_run_status(int nranks, rank_fn fn, void* arg, int timeoutSec, int* status);

/* Anonymous shared memory visible to all forked ranks (for results). */
void* ranks_shared_alloc(unsigned long bytes);

/* Setup made in rank 0 after the fork and copied to every rank, such as a
 * unique id: rank 0 calls make(data) (nonzero: failed), the others wait
 * and get the same `bytes` (at most 1024) in `data`. Every rank makes the
 * same calls in the same order (each call is one slot, 16 per run).
 * Why not make the id in the parent: ncclGetUniqueId starts the bootstrap
 * root thread there, and a process forked beside a running thread gets its
 * memory but not the thread. ThreadSanitizer then stops the child ("dup
 * thread with used id"), AddressSanitizer takes the dead thread's stack,
 * which glibc frees in the child, for a live one and reports false errors
 * on memory mapped there later, and a lock that thread held stays held. */
typedef int (*ranks_make_fn)(void* data);
int ranks_share(int rank, void* data, unsigned long bytes, ranks_make_fn make);

#endif
