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

#endif
