/* Shareable host memory under one process-wide lock: allocations are rare
 * and few, and a lookup (once per point-to-point item) walks a short list.
 * The descriptor stays open while the memory is allocated: it is how a
 * peer process opens the same file (/proc/<pid>/fd). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include "api/mem_host.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/err.h"
#include "transport/mkccl_host_mem_v1.h"

typedef struct mem_host {
  struct mem_host* next;
  char* base;
  size_t bytes; /* the caller's part, whole pages */
  size_t total; /* with the tail page */
  int fd;
} mem_host_t;

static pthread_mutex_t mem_host_lock = PTHREAD_MUTEX_INITIALIZER;
static mem_host_t* mem_host_list;
/* Allocations listed: read without the lock, so planning a collective
 * takes no lock in processes that never called ncclMemAlloc. */
static int mem_host_count;
static uint64_t mem_host_next_id;

/* Unique in this process and unlikely to repeat across its lifetimes at one
 * address: a random start, then a counter. */
static uint64_t mem_host_id(void) {
  if (!mem_host_next_id && getrandom(&mem_host_next_id, sizeof(mem_host_next_id), 0) != sizeof(mem_host_next_id))
    mem_host_next_id = (uint64_t)getpid() << 32;
  mem_host_next_id |= 1;
  return mem_host_next_id += 2;
}

ncclResult_t mem_host_alloc(size_t size, void** ptr) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (size > SIZE_MAX - 2 * page) return MK_FAIL(ncclInvalidArgument, "ncclMemAlloc: %zu bytes is too many", size);
  size_t bytes = (size + page - 1) / page * page, total = bytes + page;
  mem_host_t* m = calloc(1, sizeof(*m));
  if (!m) return MK_FAIL(ncclSystemError, "ncclMemAlloc: out of memory");
  ncclResult_t res = ncclSuccess;
  int fd = memfd_create(MKCCL_HOST_MEM_NAME, MFD_CLOEXEC);
  if (fd < 0) {
    res = MK_FAIL(ncclSystemError, "ncclMemAlloc: memfd_create of %zu bytes of host memory failed: %s", size,
                  strerror(errno));
    goto free_node;
  }
  if (ftruncate(fd, (off_t)total) != 0) {
    res = MK_FAIL(ncclSystemError, "ncclMemAlloc: sizing host memory to %zu bytes failed: %s", total, strerror(errno));
    goto close_fd;
  }
  void* p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    res = MK_FAIL(ncclSystemError, "ncclMemAlloc: mapping %zu bytes of host memory failed: %s", total, strerror(errno));
    goto close_fd;
  }
  (void)madvise(p, bytes, MADV_HUGEPAGE); /* where shmem huge pages are on; a hint */
  *m = (mem_host_t){NULL, p, bytes, total, fd};
  mkcclHostMemTail_v1* tail = (mkcclHostMemTail_v1*)(m->base + bytes);
  tail->magic = MKCCL_HOST_MEM_MAGIC;
  tail->bytes = bytes;
  pthread_mutex_lock(&mem_host_lock);
  __atomic_store_n(&tail->id, mem_host_id(), __ATOMIC_RELEASE);
  m->next = mem_host_list;
  mem_host_list = m;
  __atomic_add_fetch(&mem_host_count, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&mem_host_lock);
  *ptr = p;
  return ncclSuccess;
close_fd:
  close(fd);
free_node:
  free(m);
  return res;
}

int mem_host_free(void* ptr, ncclResult_t* res) {
  mem_host_t* m = NULL;
  pthread_mutex_lock(&mem_host_lock);
  for (mem_host_t** p = &mem_host_list; *p; p = &(*p)->next)
    if ((*p)->base == ptr) {
      m = *p;
      *p = m->next;
      __atomic_sub_fetch(&mem_host_count, 1, __ATOMIC_RELEASE);
      break;
    }
  pthread_mutex_unlock(&mem_host_lock);
  if (!m) return 0;
  /* Peers that mapped it see the id change before the pages go. */
  __atomic_store_n(&((mkcclHostMemTail_v1*)(m->base + m->bytes))->id, 0, __ATOMIC_RELEASE);
  *res = ncclSuccess;
  if (munmap(m->base, m->total) != 0) *res = MK_SYSFAIL("ncclMemFree: munmap of host memory");
  close(m->fd);
  free(m);
  return 1;
}

int mem_host_covers(const void* ptr, size_t bytes) {
  const char* p = ptr;
  int found = 0;
  if (__atomic_load_n(&mem_host_count, __ATOMIC_ACQUIRE) == 0) return 0;
  pthread_mutex_lock(&mem_host_lock);
  for (const mem_host_t* m = mem_host_list; m && !found; m = m->next)
    found = p >= m->base && bytes <= m->bytes && (size_t)(p - m->base) <= m->bytes - bytes;
  pthread_mutex_unlock(&mem_host_lock);
  return found;
}
