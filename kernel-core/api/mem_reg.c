/* Registrations as a per-communicator list under one process-wide lock:
 * registering is rare, and a lookup walks a handful of entries. */
#include "api/mem_reg.h"

#include <pthread.h>
#include <stdlib.h>

#include "api/window.h"
#include "base/err.h"
#include "comm/comm.h"

#define MEM_REG_MAGIC 0x6d6b726567ull /* "mkreg" */

static pthread_mutex_t mem_reg_lock = PTHREAD_MUTEX_INITIALIZER;

ncclResult_t mem_reg_add(struct ncclComm* comm, void* buff, size_t size, mem_reg_t** out) {
  mem_reg_t* r = malloc(sizeof(*r));
  if (!r) return MK_FAIL(ncclSystemError, "ncclCommRegister: out of memory");
  *r = (mem_reg_t){NULL, MEM_REG_MAGIC, comm, buff, size};
  pthread_mutex_lock(&mem_reg_lock);
  r->next = comm->memRegs;
  comm->memRegs = r;
  pthread_mutex_unlock(&mem_reg_lock);
  *out = r;
  return ncclSuccess;
}

ncclResult_t mem_reg_remove(struct ncclComm* comm, void* handle, void** base, size_t* size) {
  mem_reg_t* found = NULL;
  pthread_mutex_lock(&mem_reg_lock);
  for (mem_reg_t** p = &comm->memRegs; *p; p = &(*p)->next)
    if (*p == handle) {
      found = *p;
      *p = found->next;
      break;
    }
  pthread_mutex_unlock(&mem_reg_lock);
  if (!found || found->magic != MEM_REG_MAGIC)
    return MK_FAIL(ncclInvalidArgument, "ncclCommDeregister: handle %p was not registered with this communicator",
                   handle);
  found->magic = 0;
  *base = found->buff;
  *size = found->size;
  free(found);
  return ncclSuccess;
}

void mem_reg_drop_all(struct ncclComm* comm) {
  pthread_mutex_lock(&mem_reg_lock);
  mem_reg_t* r = comm->memRegs;
  comm->memRegs = NULL;
  pthread_mutex_unlock(&mem_reg_lock);
  while (r) {
    mem_reg_t* next = r->next;
    r->magic = 0;
    free(r);
    r = next;
  }
}

static int mem_reg_inside(const void* lo, size_t size, const void* ptr, size_t bytes) {
  const char *l = lo, *p = ptr;
  return p >= l && (size_t)(p - l) <= size && bytes <= size - (size_t)(p - l);
}

int mem_reg_covers(const struct ncclComm* comm, const void* ptr, size_t bytes) {
  int found = 0;
  pthread_mutex_lock(&mem_reg_lock);
  for (const mem_reg_t* r = comm->memRegs; r && !found; r = r->next) found = mem_reg_inside(r->buff, r->size, ptr, bytes);
  pthread_mutex_unlock(&mem_reg_lock);
  return found || api_window_covers(comm, ptr, bytes);
}

ncclResult_t mem_reg_find(const struct ncclComm* comm, const void* ptr, size_t bytes, void** base, size_t* size) {
  const mem_reg_t* hit = NULL;
  pthread_mutex_lock(&mem_reg_lock);
  for (const mem_reg_t* r = comm->memRegs; r && !hit; r = r->next)
    if (mem_reg_inside(r->buff, r->size, ptr, bytes)) hit = r;
  if (hit) {
    *base = hit->buff;
    *size = hit->size;
  }
  pthread_mutex_unlock(&mem_reg_lock);
  if (hit || api_window_range(comm, ptr, bytes, base, size)) return ncclSuccess;
  return ncclInvalidArgument;
}
