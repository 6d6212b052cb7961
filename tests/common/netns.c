#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "netns.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int netns_sh(const char* cmd) {
  int rc = system(cmd);
  return rc == 0 ? 0 : -1;
}

int netns_pair_create(netns_pair_t* p) {
  int pid = (int)getpid();
  char cmd[512];
  for (int i = 0; i < 2; i++) {
    snprintf(p->ns[i], sizeof(p->ns[i]), "mkccl_%c_%d", 'a' + i, pid);
    snprintf(p->veth[i], sizeof(p->veth[i]), "mk%c%d", 'a' + i, pid);
  }
  snprintf(cmd, sizeof(cmd), "ip netns add %s 2>/dev/null && ip netns add %s 2>/dev/null", p->ns[0], p->ns[1]);
  if (netns_sh(cmd) != 0) goto fail;
  snprintf(cmd, sizeof(cmd), "ip link add %s type veth peer name %s 2>/dev/null", p->veth[0], p->veth[1]);
  if (netns_sh(cmd) != 0) goto fail;
  for (int i = 0; i < 2; i++) {
    snprintf(cmd, sizeof(cmd),
             "ip link set %s netns %s && ip -n %s addr add 10.77.0.%d/24 dev %s && ip -n %s link set %s up && "
             "ip -n %s link set lo up",
             p->veth[i], p->ns[i], p->ns[i], i + 1, p->veth[i], p->ns[i], p->veth[i], p->ns[i]);
    if (netns_sh(cmd) != 0) goto fail;
  }
  return 0;
fail:
  netns_pair_destroy(p);
  return -1;
}

void netns_pair_destroy(const netns_pair_t* p) {
  char cmd[256];
  /* Deleting a namespace deletes the veth end inside it, and with it the pair. */
  snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null; ip link del %s 2>/dev/null",
           p->ns[0], p->ns[1], p->veth[0]);
  if (system(cmd)) { /* nothing to undo: best effort */
  }
}

int netns_enter(const netns_pair_t* p, int which, const char* hostname) {
  char path[128];
  snprintf(path, sizeof(path), "/var/run/netns/%s", p->ns[which]);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int rc = setns(fd, CLONE_NEWNET);
  close(fd);
  if (rc != 0) return -1;
  if (hostname && (unshare(CLONE_NEWUTS) != 0 || sethostname(hostname, strlen(hostname)) != 0)) return -1;
  return 0;
}

void netns_require(netns_pair_t* p) {
  if (geteuid() == 0 && netns_pair_create(p) == 0) return;
  SKIP("cannot create two network namespaces joined by a veth pair here (needs root and `ip netns`)");
}
