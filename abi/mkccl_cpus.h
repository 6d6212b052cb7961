/* How many CPUs this process may keep busy, for sizing threads (host
 * channels in the core, socket helper threads in net-socket): its affinity
 * mask, capped by a cgroup CPU quota where one is set. A container limited
 * to 2 CPUs (docker --cpus=2) still sees every CPU of the machine in its
 * affinity mask; sizing threads from that alone would put 8 busy channels
 * on 2 CPUs. Header-only, so the core and plugins share it.
 *
 * Quotas read: cgroup v2 `cpu.max` ("max 100000" or "200000 100000") of
 * this process's cgroup and of the mount's root; cgroup v1
 * `cpu.cfs_quota_us` / `cpu.cfs_period_us` (-1: none). */
#ifndef MKCCL_ABI_CPUS_H
#define MKCCL_ABI_CPUS_H

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* CPUs a quota of `quota` per `period` allows, rounded up; 0 for none. */
static inline int mkccl_cpus_from_quota(long long quota, long long period) {
  if (quota <= 0 || period <= 0) return 0;
  return (int)((quota + period - 1) / period);
}

/* A v2 cpu.max line; 0 for "max" or anything unreadable. */
static inline int mkccl_cpus_parse_cpu_max(const char* line) {
  long long quota, period;
  if (!line || strncmp(line, "max", 3) == 0) return 0;
  if (sscanf(line, "%lld %lld", &quota, &period) != 2) return 0;
  return mkccl_cpus_from_quota(quota, period);
}

static inline int mkccl_cpus_read_line(const char* path, char* buf, int size) {
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  int ok = fgets(buf, size, f) != NULL;
  fclose(f);
  return ok;
}

/* This process's cgroup v2 path ("0::/path" in /proc/self/cgroup). */
static inline int mkccl_cpus_v2_path(char* path, int size) {
  FILE* f = fopen("/proc/self/cgroup", "r");
  if (!f) return 0;
  char line[512];
  int found = 0;
  while (!found && fgets(line, sizeof(line), f)) {
    if (strncmp(line, "0::", 3) != 0) continue;
    line[strcspn(line, "\n")] = '\0';
    found = snprintf(path, (size_t)size, "/sys/fs/cgroup%s/cpu.max", line + 3) < size;
  }
  fclose(f);
  return found;
}

/* The tightest CPU quota found; 0 for none. */
static inline int mkccl_cpus_quota(void) {
  char path[600], line[128];
  int best = 0, q;
  if (mkccl_cpus_v2_path(path, sizeof(path)) && mkccl_cpus_read_line(path, line, sizeof(line)) &&
      (q = mkccl_cpus_parse_cpu_max(line)) > 0)
    best = q;
  if (mkccl_cpus_read_line("/sys/fs/cgroup/cpu.max", line, sizeof(line)) &&
      (q = mkccl_cpus_parse_cpu_max(line)) > 0 && (best == 0 || q < best))
    best = q;
  char period[64];
  if (mkccl_cpus_read_line("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", line, sizeof(line)) &&
      mkccl_cpus_read_line("/sys/fs/cgroup/cpu/cpu.cfs_period_us", period, sizeof(period)) &&
      (q = mkccl_cpus_from_quota(atoll(line), atoll(period))) > 0 && (best == 0 || q < best))
    best = q;
  return best;
}

/* CPUs this process may keep busy: the affinity mask, capped by a quota. */
static inline int mkccl_cpus_usable(void) {
  int n = 0;
#ifdef CPU_COUNT
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
#endif
  if (n <= 0) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    n = online > 0 ? (int)online : 1;
  }
  int quota = mkccl_cpus_quota();
  return quota > 0 && quota < n ? quota : n;
}

#endif
