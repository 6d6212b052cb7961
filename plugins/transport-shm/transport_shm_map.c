/* Single copy from shareable host memory (ncclMemAlloc's with no GPU,
 * abi/transport/mkccl_host_mem_v1.h): the receiver maps the sender's file
 * and copies with memcpy, with no system call per copy. The file is found
 * once per allocation: the line of /proc/<pid>/maps that holds the address
 * names the memfd and its inode, the entry of /proc/<pid>/fd with that
 * inode opens it. Mappings are kept per transport context and checked
 * against the allocation's id before every copy, so a freed allocation is
 * never read (ncclMemFree clears the id first). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "transport/mkccl_host_mem_v1.h"
#include "transport_shm.h"

#define SHM_LOG(ctx, level, ...) (ctx)->services->log(level, NCCL_SHM, __FILE__, __LINE__, __VA_ARGS__)

struct shm_map {
  struct shm_map* next;
  int pid;
  uint64_t remote; /* the file's address in the peer */
  size_t total;    /* the file's size */
  const char* local;
  const mkcclHostMemTail_v1* tail; /* in our mapping */
  uint64_t id;
};

static _Atomic uint64_t shm_map_bytes;
static atomic_int shm_map_said;

/* Bytes this process has copied from mapped peer memory since it loaded the
 * plugin; for tests, which find it with dlsym. */
__attribute__((visibility("default"))) uint64_t mkcclShmMapBytes(void) { return atomic_load(&shm_map_bytes); }

/* One line of /proc/<pid>/maps. */
typedef struct {
  uint64_t lo, hi, offset, inode;
  unsigned devMajor, devMinor;
  char path[256];
} shm_maps_line_t;

static int shm_maps_parse(const char* s, shm_maps_line_t* l) {
  int pathAt = 0;
  l->path[0] = '\0';
  if (sscanf(s, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %x:%x %" SCNu64 " %n", &l->lo, &l->hi, &l->offset,
             &l->devMajor, &l->devMinor, &l->inode, &pathAt) < 6)
    return 0;
  if (pathAt > 0) {
    snprintf(l->path, sizeof(l->path), "%s", s + pathAt);
    l->path[strcspn(l->path, "\n")] = '\0';
  }
  return 1;
}

/* The line of pid's maps holding addr; 0 or an errno. */
static int shm_maps_find(int pid, uint64_t addr, shm_maps_line_t* out) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/maps", pid);
  FILE* f = fopen(path, "re");
  if (!f) return errno;
  char line[512];
  int err = ENOENT;
  while (err == ENOENT && fgets(line, sizeof(line), f)) {
    shm_maps_line_t l;
    if (!shm_maps_parse(line, &l) || addr < l.lo || addr >= l.hi) continue;
    *out = l;
    err = 0;
  }
  fclose(f);
  return err;
}

/* A descriptor of our own on the file pid keeps open with this inode. */
static int shm_fd_open(int pid, const shm_maps_line_t* l, int* fdOut) {
  char dirPath[64];
  snprintf(dirPath, sizeof(dirPath), "/proc/%d/fd", pid);
  DIR* d = opendir(dirPath);
  if (!d) return errno;
  int err = ENOENT;
  struct dirent* e;
  while (err == ENOENT && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char p[320];
    snprintf(p, sizeof(p), "%s/%s", dirPath, e->d_name);
    struct stat st;
    if (stat(p, &st) != 0 || st.st_ino != l->inode || major(st.st_dev) != l->devMajor ||
        minor(st.st_dev) != l->devMinor)
      continue;
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    err = fd < 0 ? errno : 0;
    if (!err) *fdOut = fd;
  }
  closedir(d);
  return err;
}

static void shm_map_drop(struct shm_map* m) {
  if (m->local) munmap((void*)m->local, m->total);
  free(m);
}

/* Map the allocation of pid holding addr; 0 or an errno (EFAULT: addr is
 * in no such allocation, and *other is then the mapping it is in, when the
 * maps show one). */
static int shm_map_resolve(int pid, uint64_t addr, struct shm_map** out, shm_maps_line_t* other) {
  shm_maps_line_t l;
  int err = shm_maps_find(pid, addr, &l);
  if (err) return err == ENOENT ? EFAULT : err;
  if (strncmp(l.path, "/memfd:" MKCCL_HOST_MEM_NAME, strlen("/memfd:" MKCCL_HOST_MEM_NAME)) != 0) {
    *other = l;
    return EFAULT;
  }
  int fd = -1;
  if ((err = shm_fd_open(pid, &l, &fd))) return err;
  struct stat st;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (fstat(fd, &st) != 0 || (size_t)st.st_size < 2 * page) {
    close(fd);
    return EFAULT;
  }
  size_t total = (size_t)st.st_size;
  void* p = mmap(NULL, total, PROT_READ, MAP_SHARED, fd, 0);
  err = p == MAP_FAILED ? errno : 0;
  close(fd);
  if (err) return err;
  struct shm_map* m = calloc(1, sizeof(*m));
  const mkcclHostMemTail_v1* tail = (const mkcclHostMemTail_v1*)((const char*)p + total - page);
  uint64_t id = __atomic_load_n(&tail->id, __ATOMIC_ACQUIRE);
  if (!m || tail->magic != MKCCL_HOST_MEM_MAGIC || tail->bytes != total - page || !id) {
    free(m);
    munmap(p, total);
    return m ? EFAULT : ENOMEM;
  }
  *m = (struct shm_map){NULL, pid, l.lo - l.offset, total, p, tail, id};
  *out = m;
  return 0;
}

static int shm_map_holds(const struct shm_map* m, int pid, uint64_t src, size_t bytes) {
  size_t span = m->tail ? m->tail->bytes : m->total;
  return m->pid == pid && src >= m->remote && bytes <= span && src - m->remote <= span - bytes;
}

/* Where [src, src + bytes) of pid's memory is: *at in our mapping of it,
 * or *at NULL with 0 when it lies in memory of pid known not to be
 * shareable (read it with CMA), or an errno. Entries for memory that is not
 * shareable are kept only where CMA reads it anyway (`cma`), so one that
 * went stale costs a slower read, never a wrong one. */
static int shm_map_find(shm_ctx_t* ctx, int pid, uint64_t src, size_t bytes, int cma, const char** at) {
  int err = 0, found = 0;
  *at = NULL;
  pthread_mutex_lock(&ctx->mapLock);
  for (struct shm_map **p = &ctx->maps, *m; (m = *p) && !found;) {
    if (m->tail && __atomic_load_n(&m->tail->id, __ATOMIC_ACQUIRE) != m->id) { /* freed there: forget it */
      *p = m->next;
      shm_map_drop(m);
      continue;
    }
    if ((found = shm_map_holds(m, pid, src, bytes)) && m->local) *at = m->local + (src - m->remote);
    p = &m->next;
  }
  if (!found) {
    struct shm_map* m = NULL;
    shm_maps_line_t other = {0};
    err = shm_map_resolve(pid, src, &m, &other);
    if (err == EFAULT && cma && other.hi > other.lo && (m = calloc(1, sizeof(*m)))) {
      *m = (struct shm_map){NULL, pid, other.lo, other.hi - other.lo, NULL, NULL, 0};
      err = 0;
    }
    if (!err && !shm_map_holds(m, pid, src, bytes)) {
      shm_map_drop(m);
      err = EFAULT;
    } else if (!err) {
      m->next = ctx->maps;
      ctx->maps = m;
      if (m->local) *at = m->local + (src - m->remote);
    }
  }
  pthread_mutex_unlock(&ctx->mapLock);
  return err;
}

/* Where src lies in our mapping of the sender's shareable memory (*at,
 * counted as read in place), or *at NULL; 0 or the lookup's errno. */
static int shm_map_lookup(shm_conn_t* c, const void* src, size_t bytes, const char** at) {
  *at = NULL;
  int err = c->mapOk ? shm_map_find(c->ctx, c->peerPid, (uint64_t)(uintptr_t)src, bytes, c->cmaOk, at) : 0;
  if (*at) atomic_fetch_add(&shm_map_bytes, bytes);
  return err;
}

const void* shm_map_at(void* conn, const void* src, size_t bytes) {
  const char* at;
  (void)shm_map_lookup(conn, src, bytes, &at);
  return at;
}

int shm_map_read(void* conn, void* dst, const void* src, size_t bytes) {
  shm_conn_t* c = conn;
  const char* at;
  int err = shm_map_lookup(c, src, bytes, &at);
  if (at) {
    memcpy(dst, at, bytes);
    return 0;
  }
  /* Not shareable memory: a registered buffer, which only CMA reads. */
  return c->cmaOk ? shm_cma_read(conn, dst, src, bytes) : err ? err : EFAULT;
}

void shm_map_drop_all(shm_ctx_t* ctx) {
  for (struct shm_map* m = ctx->maps; m;) {
    struct shm_map* next = m->next;
    shm_map_drop(m);
    m = next;
  }
  ctx->maps = NULL;
}

int shm_map_probe(const shm_conn_t* c, uint64_t peerHeader, const char* peerName, int peerRank) {
  const char* why = NULL;
  char whyBuf[96];
  if (!c->ctx->map) why = "MKCCL_SHM_MAP=0";
  shm_maps_line_t l;
  /* Our own mapping of the sender's segment, seen at its address in the
   * sender: the pid is the sender's, and its maps are ours to read. */
  const char* base = strrchr(peerName, '/');
  int err = why ? 0 : shm_maps_find(c->peerPid, peerHeader, &l);
  if (!why && !err && !strstr(l.path, base ? base + 1 : peerName)) err = ENOENT;
  if (!why && err) {
    snprintf(whyBuf, sizeof(whyBuf), "/proc/%d/maps does not show its segment (%s)", c->peerPid, strerror(err));
    why = whyBuf;
  }
  if (!why) {
    char dirPath[64];
    snprintf(dirPath, sizeof(dirPath), "/proc/%d/fd", c->peerPid);
    DIR* d = opendir(dirPath);
    if (d) closedir(d);
    if (!d) {
      snprintf(whyBuf, sizeof(whyBuf), "%s: %s", dirPath, strerror(errno));
      why = whyBuf;
    }
  }
  if (why && !atomic_exchange(&shm_map_said, 1))
    SHM_LOG(c->ctx, NCCL_LOG_INFO,
            "transport-shm: rank %d (pid %d) cannot map its peer's ncclMemAlloc memory: %s; such buffers are "
            "copied through the segments",
            peerRank, c->peerPid, why);
  return !why;
}
