/* The root thread: collects every rank's listen address from its block of
 * ranks, tells each rank the address of its next rank on the ring, exits.
 * Connections that do not present the id's magic, or stall, or send
 * nonsense are dropped with a WARN; they never stop the others. */
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/bootstrap_root.h"

static void bootstrap_root_drop(bootstrap_root_t* root, int i, const char* why) {
  char self[SOCK_ADDR_STRLEN], text[SOCK_ADDR_STRLEN];
  MK_WARN("bootstrap root %s: dropped connection from %s: %s",
          sock_addr_to_string(&root->handle.addr, self, sizeof(self), 1),
          sock_addr_to_string(&root->pending[i].addr, text, sizeof(text), 1), why);
  sock_close(&root->pending[i].fd);
  root->pending[i] = root->pending[--root->nPending];
}

static void bootstrap_root_reply(bootstrap_root_t* root, int* fd, const bootstrap_root_reply_t* reply) {
  if (*fd < 0) return;
  int rc = sock_send_all(*fd, reply, sizeof(*reply), sock_deadline_ms(root->handshakeMs), &root->stop);
  if (rc != SOCK_OK) MK_WARN("bootstrap root: could not answer a rank: %s", sock_error());
  sock_close(fd);
}

/* The first valid registration fixes the job's shape. */
static int bootstrap_root_shape(bootstrap_root_t* root, const bootstrap_root_info_t* info) {
  if (root->regFds) return info->nRanks == root->nRanks && info->nRoots == root->nRoots && info->root == root->index;
  root->nRanks = info->nRanks;
  root->nRoots = info->nRoots;
  root->index = info->root;
  root->first = bootstrap_root_first_rank(root->index, root->nRanks, root->nRoots);
  root->count = bootstrap_root_rank_count(root->index, root->nRanks, root->nRoots);
  root->regFds = malloc(sizeof(int) * (size_t)root->count);
  root->regs = calloc((size_t)root->count, sizeof(*root->regs));
  if (!root->regFds || !root->regs) return -1;
  for (int i = 0; i < root->count; i++) root->regFds[i] = -1;
  root->deadline = sock_deadline_ms(root->timeoutMs);
  MK_INFO(NCCL_BOOTSTRAP, "bootstrap root %d/%d: serving ranks %d..%d of %d", root->index, root->nRoots,
          root->first, root->first + root->count - 1, root->nRanks);
  return 1;
}

/* A complete registration in pending[i]: keep it or say why not. */
static void bootstrap_root_register(bootstrap_root_t* root, int i) {
  bootstrap_root_pending_t* p = &root->pending[i];
  const bootstrap_root_info_t* info = &p->msg.info;
  char why[160];
  if (info->nRanks < 1 || info->nRanks > BOOTSTRAP_MAX_RANKS || info->nRoots < 1 || info->nRoots > info->nRanks ||
      info->root < 0 || info->root >= info->nRoots || info->rank < 0 || info->rank >= info->nRanks ||
      !sock_addr_valid(&info->listenAddr)) {
    snprintf(why, sizeof(why), "invalid registration (rank %d nranks %d nroots %d root %d)", info->rank, info->nRanks,
             info->nRoots, info->root);
    bootstrap_root_drop(root, i, why);
    return;
  }
  int shape = bootstrap_root_shape(root, info);
  if (shape < 0) {
    bootstrap_root_drop(root, i, "out of memory");
    return;
  }
  if (shape == 0) {
    snprintf(why, sizeof(why), "rank %d registered with nranks %d nroots %d root %d, others with %d %d %d", info->rank,
             info->nRanks, info->nRoots, info->root, root->nRanks, root->nRoots, root->index);
    bootstrap_root_reply_t reply = {.status = BOOTSTRAP_ROOT_MISMATCH};
    int fd = p->fd;
    p->fd = -1;
    bootstrap_root_reply(root, &fd, &reply);
    bootstrap_root_drop(root, i, why);
    return;
  }
  if (p->msg.hello.type == BOOTSTRAP_CONN_ROOT_NEXT) {
    int want = bootstrap_root_first_rank((root->index + 1) % root->nRoots, root->nRanks, root->nRoots);
    if (root->nRoots == 1 || info->rank != want || root->haveNext) {
      snprintf(why, sizeof(why), "unexpected next-block registration from rank %d", info->rank);
      bootstrap_root_drop(root, i, why);
      return;
    }
    root->nextInfo = *info;
    root->haveNext = 1;
    sock_close(&p->fd);
  } else {
    int local = info->rank - root->first;
    if (bootstrap_root_of_rank(info->rank, root->nRanks, root->nRoots) != root->index || root->regFds[local] >= 0) {
      snprintf(why, sizeof(why), "rank %d is not expected here (or registered twice)", info->rank);
      bootstrap_root_drop(root, i, why);
      return;
    }
    root->regs[local] = *info;
    root->regFds[local] = p->fd;
    root->nRegistered++;
  }
  root->pending[i] = root->pending[--root->nPending];
}

/* Reads what pending[i] has sent; checks the hello as soon as it is whole. */
static void bootstrap_root_read(bootstrap_root_t* root, int i) {
  bootstrap_root_pending_t* p = &root->pending[i];
  size_t before = p->got;
  /* hello then info, back to back (no padding between them on the wire) */
  const size_t want = sizeof(sock_hello_t) + sizeof(bootstrap_root_info_t);
  int rc = sock_recv_some(p->fd, &p->msg, want, &p->got);
  if (rc != SOCK_OK) {
    bootstrap_root_drop(root, i, sock_error());
    return;
  }
  if (before < sizeof(sock_hello_t) && p->got >= sizeof(sock_hello_t)) {
    const sock_hello_t* h = &p->msg.hello;
    int type = h->type == BOOTSTRAP_CONN_ROOT_NEXT ? BOOTSTRAP_CONN_ROOT_NEXT : BOOTSTRAP_CONN_ROOT_REGISTER;
    if (sock_hello_check(h, root->handle.magic, (uint32_t)type, BOOTSTRAP_PROTO_VERSION) != SOCK_OK) {
      bootstrap_root_drop(root, i, sock_error());
      return;
    }
  }
  if (p->got == want) bootstrap_root_register(root, i);
}

static void bootstrap_root_accept(bootstrap_root_t* root) {
  for (;;) {
    int fd = -1;
    sock_addr_t peer;
    /* Full: the rest wait in the listen backlog until registrations free slots. */
    if (root->nPending == BOOTSTRAP_PENDING_MAX) return;
    if (sock_accept_try(root->listenFd, &fd, &peer) != SOCK_OK || fd < 0) return;
    bootstrap_root_pending_t* p = &root->pending[root->nPending++];
    memset(p, 0, sizeof(*p));
    p->fd = fd;
    p->addr = peer;
    p->deadline = sock_deadline_ms(root->handshakeMs);
  }
}

static int bootstrap_root_complete(const bootstrap_root_t* root) {
  return root->regFds && root->nRegistered == root->count && (root->nRoots == 1 || root->haveNext);
}

static void bootstrap_root_answer(bootstrap_root_t* root) {
  for (int i = 0; i < root->count; i++) {
    bootstrap_root_reply_t reply;
    memset(&reply, 0, sizeof(reply));
    if (i + 1 < root->count) reply.next = root->regs[i + 1].listenAddr;
    else reply.next = root->nRoots > 1 ? root->nextInfo.listenAddr : root->regs[0].listenAddr;
    bootstrap_root_reply(root, &root->regFds[i], &reply);
  }
  MK_INFO(NCCL_BOOTSTRAP, "bootstrap root %d/%d: answered %d ranks", root->index, root->nRoots, root->count);
}

/* The deadline passed: tell the ranks that came who did not. */
static void bootstrap_root_give_up(bootstrap_root_t* root) {
  bootstrap_root_reply_t reply;
  memset(&reply, 0, sizeof(reply));
  reply.status = BOOTSTRAP_ROOT_TIMEOUT;
  reply.timeoutSec = (int32_t)(root->timeoutMs / 1000);
  char list[256] = "";
  size_t used = 0;
  for (int i = 0; i <= root->count; i++) {
    int missingRank = -1;
    if (i < root->count && root->regFds[i] < 0) missingRank = root->first + i;
    if (i == root->count && root->nRoots > 1 && !root->haveNext)
      missingRank = bootstrap_root_first_rank((root->index + 1) % root->nRoots, root->nRanks, root->nRoots);
    if (missingRank < 0) continue;
    if (reply.nMissing < BOOTSTRAP_MISSING_SHOWN) reply.missing[reply.nMissing] = missingRank;
    reply.nMissing++;
    if (used < sizeof(list) - 16) used += (size_t)snprintf(list + used, sizeof(list) - used, " %d", missingRank);
  }
  MK_WARN("bootstrap root: %d of %d ranks did not arrive within %" PRId64 " s (MKCCL_BOOTSTRAP_TIMEOUT); missing:%s",
          reply.nMissing, root->count, root->timeoutMs / 1000, list);
  for (int i = 0; i < root->count; i++) bootstrap_root_reply(root, &root->regFds[i], &reply);
}

void* bootstrap_root_main(void* arg) {
  bootstrap_root_t* root = arg;
  __atomic_store_n(&root->started, 1, __ATOMIC_RELEASE);
  struct pollfd fds[BOOTSTRAP_PENDING_MAX + 1];
  for (;;) {
    if (__atomic_load_n(&root->stop, __ATOMIC_ACQUIRE)) break;
    if (bootstrap_root_complete(root)) {
      bootstrap_root_answer(root);
      break;
    }
    int64_t now = sock_time_ns();
    if (root->regFds && now >= root->deadline) {
      bootstrap_root_give_up(root);
      break;
    }
    for (int i = root->nPending - 1; i >= 0; i--)
      if (now >= root->pending[i].deadline) bootstrap_root_drop(root, i, "no registration within the handshake timeout");
    int n = 0;
    fds[n++] = (struct pollfd){root->nPending < BOOTSTRAP_PENDING_MAX ? root->listenFd : -1, POLLIN, 0};
    for (int i = 0; i < root->nPending; i++) fds[n++] = (struct pollfd){root->pending[i].fd, POLLIN, 0};
    if (poll(fds, (nfds_t)n, 20) <= 0) continue;
    for (int i = n - 1; i >= 1; i--)
      if (fds[i].revents) bootstrap_root_read(root, i - 1);
    if (fds[0].revents) bootstrap_root_accept(root);
  }
  for (int i = root->nPending - 1; i >= 0; i--) sock_close(&root->pending[i].fd);
  root->nPending = 0;
  for (int i = 0; root->regFds && i < root->count; i++) sock_close(&root->regFds[i]);
  sock_close(&root->listenFd);
  __atomic_store_n(&root->done, 1, __ATOMIC_RELEASE);
  return NULL;
}
