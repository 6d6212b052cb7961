/* Single copy between host ranks: the receiver reads a registered send
 * buffer straight from the sender's process (cross-memory attach,
 * process_vm_readv), where the kernel allows it. Whether it does is found
 * once per connection, at connect: the receiver reads the sender's segment
 * header through the sender's own address and compares it with its mapping
 * (this also catches a pid that names another process, as across pid
 * namespaces). A failure is said once per process and the connection stays
 * on the copy path. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>

#include "transport_shm.h"

#define SHM_LOG(ctx, level, ...) (ctx)->services->log(level, NCCL_SHM, __FILE__, __LINE__, __VA_ARGS__)

static _Atomic uint64_t shm_cma_bytes;
static atomic_int shm_cma_said;

/* Bytes this process has read in place since it loaded the plugin; for
 * tests, which find it with dlsym. */
__attribute__((visibility("default"))) uint64_t mkcclShmCmaBytes(void) { return atomic_load(&shm_cma_bytes); }

/* 0, or the errno that stopped the copy (MKCCL_SHM_CMA_FAULT's, when set). */
static int shm_cma_copy(const shm_conn_t* c, void* dst, const void* src, size_t bytes) {
  if (c->ctx->cmaFault) return c->ctx->cmaFault;
  size_t done = 0;
  while (done < bytes) {
    struct iovec l = {(char*)dst + done, bytes - done};
    struct iovec r = {(char*)src + done, bytes - done};
    ssize_t n = process_vm_readv(c->peerPid, &l, 1, &r, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EFAULT;
    done += (size_t)n;
  }
  return 0;
}

int shm_cma_read(void* conn, void* dst, const void* src, size_t bytes) {
  int err = shm_cma_copy(conn, dst, src, bytes);
  if (!err) atomic_fetch_add(&shm_cma_bytes, bytes);
  return err;
}

static void shm_cma_say_once(const shm_ctx_t* ctx, const char* fmt, int peerRank, int pid, const char* why) {
  if (atomic_exchange(&shm_cma_said, 1)) return;
  SHM_LOG(ctx, NCCL_LOG_INFO, fmt, peerRank, pid, why);
}

int shm_cma_probe(const shm_conn_t* c, uint64_t peerHeader, int peerRank) {
  if (!c->ctx->cma) {
    shm_cma_say_once(c->ctx, "transport-shm: single copy off (MKCCL_SHM_CMA=0, rank %d pid %d): %s", peerRank,
                     c->peerPid, "registered buffers are copied through the segments");
    return 0;
  }
  shm_header_t seen;
  int err = shm_cma_copy(c, &seen, (const void*)(uintptr_t)peerHeader, sizeof(seen));
  const shm_header_t* mapped = c->remote;
  if (!err && (seen.magic != mapped->magic || seen.token != mapped->token)) err = ESRCH;
  if (err) {
    shm_cma_say_once(c->ctx,
                     "transport-shm: process_vm_readv from rank %d (pid %d) failed: %s; registered buffers are "
                     "copied through the segments",
                     peerRank, c->peerPid, strerror(err));
    return 0;
  }
  return 1;
}
