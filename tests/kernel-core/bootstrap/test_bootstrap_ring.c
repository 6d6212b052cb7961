/* Bootstrap with 1..8 real processes, one root and several: ring
 * allgather (small and large slices), tagged messages out of order,
 * barriers, subset allgather. Every byte is checked. `wide`: 80 ranks, so
 * that every rank is called by more peers at once than it keeps
 * unidentified connections (the rest must wait, not be dropped). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "check.h"
#include "nccl.h"
#include "ranks.h"

#define MAX_ROOTS 4
/* In shared memory: rank 0 makes the ids (its process hosts the roots), so
 * the parent forks with no thread running. */
typedef struct {
  volatile int ready;
  int nRoots;
  int wide; /* small slices only, no subset part */
  bootstrap_handle_t handles[MAX_ROOTS];
} job_t;

static void job_ids(job_t* job, int rank) {
  if (rank == 0) {
    for (int i = 0; i < job->nRoots; i++) CHECK_NCCL(bootstrap_handle_create(&job->handles[i], 0));
    __atomic_store_n(&job->ready, 1, __ATOMIC_RELEASE);
  }
  for (int i = 0; i < 30000 && !__atomic_load_n(&job->ready, __ATOMIC_ACQUIRE); i++) usleep(1000);
  CHECK(job->ready);
}

static unsigned char pattern(int rank, size_t i) { return (unsigned char)(rank * 31 + i * 7 + 1); }

static int check_allgather(bootstrap_state_t* st, int rank, int n, size_t size) {
  unsigned char* buf = calloc((size_t)n, size);
  CHECK(buf);
  for (size_t i = 0; i < size; i++) buf[(size_t)rank * size + i] = pattern(rank, i);
  CHECK_NCCL(bootstrap_allgather(st, buf, size));
  for (int r = 0; r < n; r++)
    for (size_t i = 0; i < size; i++) CHECK_MSG(buf[(size_t)r * size + i] == pattern(r, i), "rank %d slice %d byte %zu", rank, r, i);
  free(buf);
  return 0;
}

static int rank_main(int rank, int n, void* arg) {
  job_t* job = arg;
  bootstrap_state_t* st = NULL;
  job_ids(job, rank);
  CHECK_NCCL(bootstrap_init(job->handles, job->nRoots, rank, n, NULL, &st));
  CHECK_EQ_INT(bootstrap_rank(st), rank);
  CHECK_EQ_INT(bootstrap_nranks(st), n);
  check_allgather(st, rank, n, 1);
  check_allgather(st, rank, n, 100);
  if (!job->wide) check_allgather(st, rank, n, 1 << 20); /* larger than socket buffers */

  /* Every rank sends two tagged messages to every rank (itself included);
   * receivers take tag 8 before tag 7 and walk peers backwards. */
  for (int p = 0; p < n; p++) {
    int a[2] = {rank, p}, b[3] = {rank * 100 + p, 7, 8};
    CHECK_NCCL(bootstrap_send(st, p, 7, a, sizeof(a)));
    CHECK_NCCL(bootstrap_send(st, p, 8, b, sizeof(b)));
  }
  for (int p = n - 1; p >= 0; p--) {
    int a[2], b[3];
    CHECK_NCCL(bootstrap_recv(st, p, 8, b, sizeof(b)));
    CHECK(b[0] == p * 100 + rank && b[1] == 7 && b[2] == 8);
    CHECK_NCCL(bootstrap_recv(st, p, 7, a, sizeof(a)));
    CHECK(a[0] == p && a[1] == rank);
  }
  /* A size the receiver does not expect is an error, not a truncation. */
  if (n >= 2) {
    int peer = rank ^ 1;
    if (peer < n) {
      long v = rank;
      CHECK_NCCL(bootstrap_send(st, peer, 9, &v, sizeof(v)));
      int small;
      CHECK(bootstrap_recv(st, peer, 9, &small, sizeof(small)) == ncclInternalError);
      CHECK_STR_CONTAINS(ncclGetLastError(NULL), "expected");
    }
  }
  for (int i = 0; i < 3; i++) CHECK_NCCL(bootstrap_barrier(st));

  /* Even ranks only. */
  if (!job->wide && rank % 2 == 0) {
    int ranks[8], m = 0, me = -1;
    for (int r = 0; r < n; r += 2) {
      if (r == rank) me = m;
      ranks[m++] = r;
    }
    int vals[8] = {0};
    vals[me] = rank * 3 + 1;
    CHECK_NCCL(bootstrap_subset_allgather(st, ranks, m, me, vals, sizeof(int)));
    for (int i = 0; i < m; i++) CHECK_EQ_INT(vals[i], ranks[i] * 3 + 1);
    CHECK_NCCL(bootstrap_subset_barrier(st, ranks, m, me));
  }
  CHECK_NCCL(bootstrap_barrier(st));
  bootstrap_destroy(st);
  if (rank == 0)
    for (int i = 0; i < job->nRoots; i++) bootstrap_root_finish(&job->handles[i], 0);
  return 0;
}

static void run(int n, int nRoots, int wide) {
  job_t* job = ranks_shared_alloc(sizeof(job_t));
  CHECK(job);
  job->nRoots = nRoots;
  job->wide = wide;
  int rc = ranks_run(n, rank_main, job, wide ? 200 : 60);
  CHECK_MSG(rc == 0, "%d ranks, %d roots", n, nRoots);
  printf("%d ranks, %d root(s): ok\n", n, nRoots);
}

static void test_root_map(void) {
  for (int r = 0; r < 8; r++) CHECK_EQ_INT(bootstrap_root_of_rank(r, 8, 2), r < 4 ? 0 : 1);
  /* 10 ranks, 3 roots: 4, 3, 3. */
  int want[10] = {0, 0, 0, 0, 1, 1, 1, 2, 2, 2};
  for (int r = 0; r < 10; r++) CHECK_EQ_INT(bootstrap_root_of_rank(r, 10, 3), want[r]);
  CHECK_EQ_INT(bootstrap_root_first_rank(1, 10, 3), 4);
  CHECK_EQ_INT(bootstrap_root_first_rank(2, 10, 3), 7);
  CHECK_EQ_INT(bootstrap_root_rank_count(0, 10, 3), 4);
  CHECK_EQ_INT(bootstrap_root_rank_count(2, 10, 3), 3);
  CHECK_EQ_INT(bootstrap_root_of_rank(10, 10, 3), -1);
  for (int nr = 1; nr <= 7; nr++)
    for (int root = 0; root < nr; root++) {
      int f = bootstrap_root_first_rank(root, 7, nr), c = bootstrap_root_rank_count(root, 7, nr);
      for (int r = f; r < f + c; r++) CHECK_EQ_INT(bootstrap_root_of_rank(r, 7, nr), root);
    }
}

static void test_ids(void) {
  bootstrap_handle_t h, back;
  ncclUniqueId id;
  CHECK_NCCL(bootstrap_handle_create(&h, 0));
  bootstrap_handle_to_id(&h, &id);
  CHECK_NCCL(bootstrap_handle_from_id(&id, &back));
  CHECK(back.magic == h.magic && sock_addr_equal(&back.addr, &h.addr));
  bootstrap_root_finish(&h, 1);
  memset(&id, 0, sizeof(id));
  CHECK(bootstrap_handle_from_id(&id, &back) == ncclInvalidArgument);
  memset(&id, 0xab, sizeof(id));
  CHECK(bootstrap_handle_from_id(&id, &back) == ncclInvalidArgument);
  /* NCCL_COMM_ID names the address; no root starts. */
  setenv("NCCL_COMM_ID", "127.0.0.1:1", 1);
  CHECK_NCCL(bootstrap_handle_create(&h, 1));
  CHECK_EQ_INT(sock_addr_port(&h.addr), 1);
  setenv("NCCL_COMM_ID", "nonsense", 1);
  CHECK(bootstrap_handle_create(&h, 1) == ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "NCCL_COMM_ID=nonsense");
  unsetenv("NCCL_COMM_ID");
}

int main(int argc, char** argv) {
  if (argc > 1 && !strcmp(argv[1], "wide")) {
    run(80, 1, 1);
    run(80, 3, 1);
    return 0;
  }
  test_root_map();
  test_ids();
  for (int n = 1; n <= 8; n++) run(n, 1, 0);
  run(7, 3, 0);
  run(8, 2, 0);
  run(2, 2, 0);
  return 0;
}
