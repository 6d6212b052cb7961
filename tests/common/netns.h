/* Two "hosts" on one machine: two network namespaces joined by a veth pair
 * (10.77.0.1/24 and 10.77.0.2/24, names carrying the test's pid), each rank
 * process entering one and taking a UTS namespace with a hostname of its
 * own, as a real host has. Needs root and `ip netns`; tests that cannot
 * have them skip (check.h: SKIP, exit 77). */
#ifndef MKCCL_TESTS_NETNS_H
#define MKCCL_TESTS_NETNS_H

typedef struct {
  char ns[2][32];
  char veth[2][16];
} netns_pair_t;

/* 0 when both namespaces are up and linked; -1 (nothing left behind) otherwise. */
int netns_pair_create(netns_pair_t* p);
void netns_pair_destroy(const netns_pair_t* p);

/* Move the calling process into namespace `which` (0 or 1) with its own
 * hostname "<hostname>"; 0 on success. */
int netns_enter(const netns_pair_t* p, int which, const char* hostname);

/* Skips the test (check.h: SKIP) unless running as root with ip netns. */
void netns_require(netns_pair_t* p);

#endif
