/* The peers' regions this process opened through CUDA IPC, process-wide
 * (communicators come and go on any thread). A peer frees its region when
 * its side of a communicator ends; this side may still be alive (the rank
 * a shrink left out keeps its old communicator), still holding the
 * mapping. The peer's next region can then lie where the freed one was,
 * and the driver refuses to open it ("resource already mapped"). An
 * overlap in the peer's own addresses proves the old mapping stale: a
 * process has one allocation at an address at a time. */
#include <pthread.h>
#include <stdlib.h>

#include "transport_p2p.h"

typedef struct p2p_import {
  struct p2p_import* next;
  uint64_t pidHash;      /* the exporting process */
  uintptr_t lo, hi;      /* the region in its addresses */
  p2p_conn_t* owner;
} p2p_import_t;

static pthread_mutex_t imports_lock = PTHREAD_MUTEX_INITIALIZER;
static p2p_import_t* imports;

/* Under the lock: the record of c's import taken off the list, or NULL. */
static p2p_import_t* import_take(p2p_conn_t* c) {
  for (p2p_import_t** p = &imports; *p; p = &(*p)->next)
    if ((*p)->owner == c) {
      p2p_import_t* found = *p;
      *p = found->next;
      return found;
    }
  return NULL;
}

static void import_close(p2p_import_t* rec) {
  p2p_conn_t* c = rec->owner;
  const mkcclTransportServices_v1* sv = c->ctx->services;
  sv->ipcClose(sv->ctx, c->remote);
  c->remoteIpc = 0;
  free(rec);
}

ncclResult_t p2p_import_open(p2p_conn_t* c, const p2p_connect_info_t* peer) {
  const mkcclTransportServices_v1* sv = c->ctx->services;
  p2p_import_t* rec = calloc(1, sizeof(*rec));
  if (!rec) return ncclSystemError;
  rec->pidHash = peer->pidHash;
  rec->lo = (uintptr_t)peer->ptr;
  rec->hi = rec->lo + peer->bytes;
  rec->owner = c;
  pthread_mutex_lock(&imports_lock);
  for (p2p_import_t** p = &imports; *p;) {
    p2p_import_t* old = *p;
    if (old->pidHash != rec->pidHash || old->hi <= rec->lo || rec->hi <= old->lo) {
      p = &old->next;
      continue;
    }
    *p = old->next;
    P2P_LOG(c->ctx, NCCL_LOG_INFO,
            "transport-p2p: the peer's region at %p was freed by its process while this one still mapped it (a "
            "communicator whose peer ended first): that mapping is closed", (void*)old->lo);
    import_close(old);
  }
  ncclResult_t res = sv->ipcOpen(sv->ctx, peer->ipc, (void**)&c->remote);
  if (res == ncclSuccess) {
    c->remoteIpc = 1;
    rec->next = imports;
    imports = rec;
  }
  pthread_mutex_unlock(&imports_lock);
  if (res != ncclSuccess) free(rec);
  return res;
}

void p2p_import_close(p2p_conn_t* c) {
  pthread_mutex_lock(&imports_lock);
  p2p_import_t* rec = c->remoteIpc ? import_take(c) : NULL;
  if (rec) import_close(rec);
  pthread_mutex_unlock(&imports_lock);
}
