/* Single copy over SHM from ncclMemAlloc memory: 3 host ranks
 * (MKCCL_CUDA_DISABLE=1), Send/Recv whose send buffers come from
 * ncclMemAlloc, which gives shareable host memory where there is no GPU.
 *   map:   the receiver maps the sender's memory and copies from it
 *          (transport-shm's counter of bytes so copied grows by exactly the
 *          bytes received from such senders), with no registration;
 *   off:   MKCCL_SHM_MAP=0: the counter stays 0, one INFO line says why;
 *   mixed: MKCCL_SHM_CMA=1 too: registered malloc'ed buffers go by CMA,
 *          ncclMemAlloc'ed ones by the mapping, each counted apart;
 *   stream: as map, with MKCCL_HOST_SINGLE_STREAM_BYTES=0: every copy from
 *          a mapping writes with streaming stores (the executor's log says
 *          how many bytes it read in place with which stores; in the other
 *          modes, all cached: no message reaches the 16 MiB default).
 * Every mode checks every byte on every rank: the data tell rank, call and
 * byte apart. Calls: a ring exchange, every rank to every other from parts
 * of one allocation, a plain malloc'ed sender, and an allocation freed and
 * made again (most often at the same address) between two calls, whose
 * receivers must see the new bytes, not their old mapping's. Sizes from
 * 1 byte to several steps on every channel, odd ones included. Then ring
 * AllGather (NCCL_ALGO=Ring, NCCL_PROTO=Simple) out of place and in place
 * and Broadcast from every root: with both buffers from ncclMemAlloc every
 * slice a rank receives is read from its peer's memory; with only the send
 * buffer, only the first hop is (the next rank's output is malloc'ed, so it
 * hands its slices on through the segments).
 * Usage: test_transport_shm_map map|off|mixed|stream */
#define _GNU_SOURCE
#include "check.h"
#include "nccl.h"
#include "ranks_id.h"
#include "plugin_check.h"
#include "shm_ring_colls.h"

#define N 3
static const char* mode;

static const size_t sizes[] = {1, 4096 + 3, (3u << 20) + 5, (9u << 20) + 1};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define MAXB ((9u << 20) + 1)

/* ncclMemAlloc with no GPU (MKCCL_CUDA_DISABLE=1): host memory, zeroed. */
static uint8_t* host_alloc(size_t n) {
  void* p = NULL;
  CHECK_NCCL(ncclMemAlloc(&p, n));
  CHECK(p);
  const uint8_t* b = p;
  CHECK_MSG(b[0] == 0 && b[n - 1] == 0, "ncclMemAlloc's memory is not zeroed");
  return p;
}

static void exchange(ncclComm_t comm, const void* src, int to, void* dst, int from, size_t b) {
  CHECK_NCCL(ncclGroupStart());
  CHECK_NCCL(ncclSend(src, b, ncclUint8, to, comm, NULL));
  CHECK_NCCL(ncclRecv(dst, b, ncclUint8, from, comm, NULL));
  CHECK_NCCL(ncclGroupEnd());
}

/* ncclMemAlloc'ed buffers, for shm_ring_colls. */
static uint8_t* mem_alloc(ncclComm_t comm, size_t n, void** h) {
  (void)comm;
  *h = NULL;
  return host_alloc(n);
}
static void mem_release(ncclComm_t comm, uint8_t* p, void* h) {
  (void)comm, (void)h;
  CHECK_NCCL(ncclMemFree(p));
}

/* What the host executor's channels say, at destroy, they read in place:
 * bytes with cached stores, bytes with streaming stores. */
static void in_place_bytes(uint64_t* cached, uint64_t* streamed) {
  char path[160], line[2048];
  snprintf(path, sizeof(path), "%s/log.%d", logDir, (int)getpid());
  FILE* f = fopen(path, "r");
  CHECK_MSG(f, "no log at %s", path);
  *cached = *streamed = 0;
  while (fgets(line, sizeof(line), f)) {
    const char* at = strstr(line, "read in place ");
    unsigned long long c, s;
    if (at && sscanf(at, "read in place %llu bytes with cached stores, %llu with streaming stores", &c, &s) == 2)
      *cached += c, *streamed += s;
  }
  fclose(f);
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  int next = (rank + 1) % N, prev = (rank + N - 1) % N;
  int map = strcmp(mode, "off") != 0, mixed = strcmp(mode, "mixed") == 0;
  uint64_t mapExpected = 0, cmaExpected = 0;
  uint8_t* sbuf = host_alloc((size_t)MAXB * N);
  uint8_t* rbuf = malloc((size_t)MAXB * N);
  uint8_t* plain = malloc(MAXB);
  CHECK(rbuf && plain);
  void* hp = NULL;
  CHECK_NCCL(ncclCommRegister(comm, plain, MAXB, &hp));
  int call = 0;
  for (size_t k = 0; k < NSIZES; k++) {
    size_t b = sizes[k];
    call++;
    fill(sbuf, b, rank, next, call);
    memset(rbuf, 0, b);
    exchange(comm, sbuf, next, rbuf, prev, b);
    expect(rbuf, b, prev, rank, call);
    expect(sbuf, b, rank, next, call); /* the sender's bytes are left as they were */
    mapExpected += b;
    /* Every rank to every other, from parts of one allocation. */
    call++;
    memset(rbuf, 0, (size_t)MAXB * N);
    CHECK_NCCL(ncclGroupStart());
    for (int p = 0; p < N; p++) {
      if (p == rank) continue;
      fill(sbuf + (size_t)p * b, b, rank, p, call);
      CHECK_NCCL(ncclSend(sbuf + (size_t)p * b, b, ncclUint8, p, comm, NULL));
      CHECK_NCCL(ncclRecv(rbuf + (size_t)p * b, b, ncclUint8, p, comm, NULL));
      mapExpected += b;
    }
    CHECK_NCCL(ncclGroupEnd());
    for (int p = 0; p < N; p++)
      if (p != rank) expect(rbuf + (size_t)p * b, b, p, rank, call);
    /* A registered malloc'ed sender: by CMA where it is on, else copied. */
    call++;
    fill(plain, b, rank, prev, call);
    memset(rbuf, 0, b);
    exchange(comm, plain, prev, rbuf, next, b);
    expect(rbuf, b, next, rank, call);
    cmaExpected += b;
    /* Freed and made again: the receiver's old mapping must not be read. */
    call++;
    CHECK_NCCL(ncclMemFree(sbuf));
    sbuf = host_alloc((size_t)MAXB * N);
    fill(sbuf, b, rank, next, call);
    memset(rbuf, 0, b);
    exchange(comm, sbuf, next, rbuf, prev, b);
    expect(rbuf, b, prev, rank, call);
    mapExpected += b;
  }
  const shm_buf_kind_t kind = {mem_alloc, mem_release};
  shm_ring_colls(comm, rank, N, call, &kind, &mapExpected);
  uint64_t mapped = plugin_counter("libmkccl-transport-shm.so", "mkcclShmMapBytes"), cmaRead = plugin_counter("libmkccl-transport-shm.so", "mkcclShmCmaBytes");
  CHECK_MSG(mapped == (map ? mapExpected : 0), "rank %d copied %llu bytes from mapped memory, expected %llu (%s)",
            rank, (unsigned long long)mapped, (unsigned long long)(map ? mapExpected : 0), mode);
  CHECK_MSG(cmaRead == (mixed ? cmaExpected : 0), "rank %d read %llu bytes by CMA, expected %llu (%s)", rank,
            (unsigned long long)cmaRead, (unsigned long long)(mixed ? cmaExpected : 0), mode);
  CHECK_NCCL(ncclCommDeregister(comm, hp));
  CHECK_NCCL(ncclCommDestroy(comm));
  CHECK_NCCL(ncclMemFree(sbuf));
  CHECK_EQ_INT(plugin_log_lines("cannot map its peer's ncclMemAlloc memory"), !map);
  uint64_t cached, streamed, stream = strcmp(mode, "stream") == 0;
  in_place_bytes(&cached, &streamed);
  CHECK_MSG(cached == (stream ? 0 : mapped) && streamed == (stream ? mapped : 0),
            "rank %d: the executor read %llu bytes in place with cached stores and %llu with streaming ones, of %llu "
            "mapped (%s)", rank, (unsigned long long)cached, (unsigned long long)streamed, (unsigned long long)mapped,
            mode);
  free(plain), free(rbuf);
  printf("rank %d: %s: %llu bytes mapped, %llu by CMA: ok\n", rank, mode, (unsigned long long)mapped,
         (unsigned long long)cmaRead);
  return 0;
}

int main(int argc, char** argv) {
  mode = argc > 1 ? argv[1] : "map";
  CHECK_MSG(!strcmp(mode, "map") || !strcmp(mode, "off") || !strcmp(mode, "mixed") || !strcmp(mode, "stream"),
            "unknown mode %s", mode);
  setenv("MKCCL_CUDA_DISABLE", "1", 1);
  setenv("NCCL_ALGO", "Ring", 1);
  setenv("NCCL_PROTO", "Simple", 1);
  setenv("MKCCL_SHM_MAP", strcmp(mode, "off") ? "1" : "0", 1);
  setenv("MKCCL_SHM_CMA", strcmp(mode, "mixed") ? "0" : "1", 1);
  if (!strcmp(mode, "stream")) setenv("MKCCL_HOST_SINGLE_STREAM_BYTES", "0", 1);
  plugin_log_start("INIT,SHM,COLL");
  int rc = ranks_run(N, rank_main, NULL, 120);
  plugin_log_end(rc);
  printf("test_transport_shm_map %s: ok\n", mode);
  return 0;
}
