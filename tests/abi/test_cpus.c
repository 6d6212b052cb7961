/* abi/mkccl_cpus.h: cgroup CPU quotas read right, and the usable count
 * never above the affinity mask nor below 1. */
#define _GNU_SOURCE
#include <sched.h>

#include "check.h"
#include "mkccl_cpus.h"

static void test_quota_arithmetic(void) {
  CHECK_EQ_INT(mkccl_cpus_from_quota(200000, 100000), 2);
  CHECK_EQ_INT(mkccl_cpus_from_quota(150000, 100000), 2); /* 1.5 CPUs keep 2 threads partly busy */
  CHECK_EQ_INT(mkccl_cpus_from_quota(50000, 100000), 1);
  CHECK_EQ_INT(mkccl_cpus_from_quota(-1, 100000), 0); /* v1: no quota */
  CHECK_EQ_INT(mkccl_cpus_from_quota(100000, 0), 0);
}

static void test_cpu_max_lines(void) {
  CHECK_EQ_INT(mkccl_cpus_parse_cpu_max("max 100000\n"), 0);
  CHECK_EQ_INT(mkccl_cpus_parse_cpu_max("400000 100000\n"), 4);
  CHECK_EQ_INT(mkccl_cpus_parse_cpu_max("250000 100000"), 3);
  CHECK_EQ_INT(mkccl_cpus_parse_cpu_max("garbage"), 0);
  CHECK_EQ_INT(mkccl_cpus_parse_cpu_max(""), 0);
  CHECK_EQ_INT(mkccl_cpus_parse_cpu_max(NULL), 0);
}

static void test_usable(void) {
  cpu_set_t set;
  CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
  int usable = mkccl_cpus_usable(), mask = CPU_COUNT(&set);
  CHECK_MSG(usable >= 1 && usable <= mask, "usable %d, affinity mask %d", usable, mask);
  int quota = mkccl_cpus_quota();
  if (quota > 0) CHECK_MSG(usable <= quota, "usable %d above the quota %d", usable, quota);
  /* One CPU in the mask: one usable, whatever the quota. */
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set)) {
      CPU_SET(c, &one);
      break;
    }
  CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
  CHECK_EQ_INT(mkccl_cpus_usable(), 1);
  CHECK(sched_setaffinity(0, sizeof(set), &set) == 0);
}

int main(void) {
  test_quota_arithmetic();
  test_cpu_max_lines();
  test_usable();
  return 0;
}
