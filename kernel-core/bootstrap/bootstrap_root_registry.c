/* The roots running in this process: started by ncclGetUniqueId (or by
 * rank 0 under NCCL_COMM_ID), joined by the communicator that used them or
 * reaped once they are done, so no thread outlives its use. A forked child
 * inherits the list but not the threads: it forgets them. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/param.h"
#include "bootstrap/bootstrap_root.h"

static pthread_mutex_t root_lock = PTHREAD_MUTEX_INITIALIZER;
static bootstrap_root_t* root_list;
static pthread_once_t root_once = PTHREAD_ONCE_INIT;

void bootstrap_root_free(bootstrap_root_t* root) {
  for (int i = 0; i < root->nPending; i++) sock_close(&root->pending[i].fd);
  for (int i = 0; root->regFds && i < root->count; i++) sock_close(&root->regFds[i]);
  sock_close(&root->listenFd);
  free(root->regFds);
  free(root->regs);
  free(root);
}

/* The parent's roots are not ours: close the descriptors we inherited, so
 * a connection the parent's root closes really closes, and forget the
 * roots. Only reads: the memory is a snapshot of what the parent's root
 * threads were writing, it is neither written nor freed here (a few bytes
 * stay allocated in the child). */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
__attribute__((no_sanitize("thread")))
#endif
#endif
static void bootstrap_root_atfork_child(void) {
  pthread_mutex_init(&root_lock, NULL);
  for (bootstrap_root_t* r = root_list; r; r = r->next) {
    if (r->listenFd >= 0) close(r->listenFd);
    for (int i = 0; i < r->nPending && i < BOOTSTRAP_PENDING_MAX; i++)
      if (r->pending[i].fd >= 0) close(r->pending[i].fd);
    for (int i = 0; r->regFds && i < r->count; i++)
      if (r->regFds[i] >= 0) close(r->regFds[i]);
  }
  root_list = NULL;
}

static void bootstrap_root_once(void) { pthread_atfork(NULL, NULL, bootstrap_root_atfork_child); }

ncclResult_t bootstrap_root_start(bootstrap_handle_t* handle) {
  pthread_once(&root_once, bootstrap_root_once);
  bootstrap_root_reap();
  bootstrap_root_t* root = calloc(1, sizeof(*root));
  if (!root) return MK_FAIL(ncclSystemError, "bootstrap root: out of memory");
  root->listenFd = -1;
  int64_t timeoutSec = param_MKCCL_BOOTSTRAP_TIMEOUT();
  root->timeoutMs = timeoutSec > 0 ? timeoutSec * 1000 : -1; /* 0: no limit */
  root->handshakeMs = param_MKCCL_BOOTSTRAP_HANDSHAKE_TIMEOUT();
  if (root->handshakeMs <= 0) root->handshakeMs = 5000;
  sock_addr_t bound;
  int rc = sock_listen(&handle->addr, 0, &root->listenFd, &bound);
  if (rc != SOCK_OK) {
    free(root);
    return MK_FAIL(bootstrap_result(rc), "bootstrap root: cannot listen: %s%s", sock_error(),
                   sock_addr_port(&handle->addr) ? " (NCCL_COMM_ID must name an address of the host of rank 0)" : "");
  }
  sock_addr_set_port(&handle->addr, sock_addr_port(&bound));
  root->handle = *handle;
  pthread_mutex_lock(&root_lock);
  int err = pthread_create(&root->thread, NULL, bootstrap_root_main, root);
  if (err == 0) {
    root->next = root_list;
    root_list = root;
  }
  pthread_mutex_unlock(&root_lock);
  if (err != 0) {
    bootstrap_root_free(root);
    return MK_FAIL(ncclSystemError, "bootstrap root: pthread_create failed: %s", strerror(err));
  }
  /* Return once the thread runs: a fork right after ncclGetUniqueId then
   * never copies a thread half way through its start (allocator locks). */
  for (int i = 0; i < 50000 && !__atomic_load_n(&root->started, __ATOMIC_ACQUIRE); i++) usleep(100);
  char text[SOCK_ADDR_STRLEN];
  MK_INFO(NCCL_BOOTSTRAP, "bootstrap root listening on %s", sock_addr_to_string(&handle->addr, text, sizeof(text), 1));
  return ncclSuccess;
}

static void bootstrap_root_join(bootstrap_root_t* root) {
  pthread_join(root->thread, NULL);
  bootstrap_root_free(root);
}

void bootstrap_root_finish(const bootstrap_handle_t* handle, int stop) {
  bootstrap_root_t* found = NULL;
  pthread_mutex_lock(&root_lock);
  for (bootstrap_root_t** pp = &root_list; *pp; pp = &(*pp)->next) {
    if ((*pp)->handle.magic == handle->magic && sock_addr_equal(&(*pp)->handle.addr, &handle->addr)) {
      found = *pp;
      *pp = found->next;
      break;
    }
  }
  pthread_mutex_unlock(&root_lock);
  if (!found) return;
  if (stop) __atomic_store_n(&found->stop, 1, __ATOMIC_RELEASE);
  bootstrap_root_join(found);
}

void bootstrap_root_reap(void) {
  bootstrap_root_t* done = NULL;
  pthread_mutex_lock(&root_lock);
  for (bootstrap_root_t** pp = &root_list; *pp;) {
    bootstrap_root_t* r = *pp;
    if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
      *pp = r->next;
      r->next = done;
      done = r;
    } else {
      pp = &r->next;
    }
  }
  pthread_mutex_unlock(&root_lock);
  for (bootstrap_root_t *r = done, *next; r; r = next) {
    next = r->next;
    bootstrap_root_join(r);
  }
}

/* At exit, join the roots that finished (a process that made ids for ranks
 * it forked never uses them itself, so nothing else would); a root still
 * waiting for ranks is left to the exit. */
__attribute__((destructor)) static void bootstrap_root_reap_at_exit(void) { bootstrap_root_reap(); }
