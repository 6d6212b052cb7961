/* Private: one root thread's state, shared by the thread (bootstrap_root.c)
 * and the registry that starts, joins and forgets roots
 * (bootstrap_root_registry.c). */
#ifndef MKCCL_BOOTSTRAP_ROOT_H
#define MKCCL_BOOTSTRAP_ROOT_H

#include "bootstrap/bootstrap_internal.h"

/* A connection to the root before its registration is complete. */
typedef struct {
  int fd;
  sock_addr_t addr;
  int64_t deadline;
  size_t got;
  struct {
    sock_hello_t hello;
    bootstrap_root_info_t info;
  } msg;
} bootstrap_root_pending_t;
_Static_assert(sizeof(sock_hello_t) % 8 == 0, "info must follow the hello without padding");

typedef struct bootstrap_root {
  struct bootstrap_root* next; /* registry list */
  bootstrap_handle_t handle;
  pthread_t thread;
  uint32_t stop; /* raised by the registry: end now */
  uint32_t started; /* raised by the thread as it begins */
  uint32_t done;    /* raised by the thread as it returns */
  int64_t timeoutMs, handshakeMs;

  int listenFd;
  bootstrap_root_pending_t pending[BOOTSTRAP_PENDING_MAX];
  int nPending;

  /* Known from the first valid registration on. */
  int nRanks, nRoots, index, first, count;
  int64_t deadline;
  int* regFds;                 /* [count] connection of each registered rank, -1 */
  bootstrap_root_info_t* regs; /* [count] */
  int nRegistered;
  int haveNext; /* the first rank of the next root's block (several roots) */
  bootstrap_root_info_t nextInfo;
} bootstrap_root_t;

void* bootstrap_root_main(void* arg);
/* Closes every descriptor the root holds and frees it (no join). */
void bootstrap_root_free(bootstrap_root_t* root);

#endif
