#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* readlink */
#endif
#include "proc_count.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int proc_count_dir(const char* path) {
  DIR* d = opendir(path);
  CHECK(d != NULL);
  int n = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

int proc_count_fds(void) { return proc_count_dir("/proc/self/fd") - 1; /* opendir's own */ }
int proc_count_threads(void) { return proc_count_dir("/proc/self/task"); }

int proc_count_threads_named(const char* name) {
  DIR* d = opendir("/proc/self/task");
  CHECK(d != NULL);
  int n = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    char path[300], comm[32] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
    FILE* f = fopen(path, "r");
    if (!f) continue; /* the thread ended meanwhile */
    if (fgets(comm, sizeof(comm), f)) comm[strcspn(comm, "\n")] = '\0';
    fclose(f);
    n += strcmp(comm, name) == 0;
  }
  closedir(d);
  return n;
}

int proc_wait_threads_named(const char* name, double seconds) {
  for (int ms = 0; proc_count_threads_named(name) == 0 && ms < seconds * 1000; ms++) usleep(1000);
  return proc_count_threads_named(name);
}

unsigned long proc_pidns(void) {
  char link[64] = "";
  ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
  CHECK(n > 0);
  link[n] = '\0';
  const char* open = strchr(link, '[');
  CHECK(open != NULL);
  return strtoul(open + 1, NULL, 10);
}

int proc_count_shm_segments(int pid) {
  char prefix[64];
  snprintf(prefix, sizeof(prefix), "mkccl-shm-%lu-%d-", proc_pidns(), pid);
  DIR* d = opendir("/dev/shm");
  CHECK(d != NULL);
  int n = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
  closedir(d);
  return n;
}

/* Count (or KiB, with kib) of the /proc/self/maps lines holding needle. */
static long proc_maps_scan(const char* needle, int kib) {
  FILE* f = fopen("/proc/self/maps", "r");
  CHECK(f);
  char line[512];
  long n = 0;
  unsigned long lo, hi;
  while (fgets(line, sizeof(line), f)) {
    if (!strstr(line, needle)) continue;
    if (!kib) n++;
    else if (sscanf(line, "%lx-%lx", &lo, &hi) == 2) n += (long)((hi - lo) >> 10);
  }
  fclose(f);
  return n;
}

int proc_count_shm_mappings(void) { return (int)proc_maps_scan("mkccl-shm", 0); }

long proc_mapped_kib(const char* needle) { return proc_maps_scan(needle, 1); }

long proc_status_kib(const char* field) {
  FILE* f = fopen("/proc/self/status", "r");
  CHECK(f);
  char line[256];
  long kib = -1;
  size_t n = strlen(field);
  while (kib < 0 && fgets(line, sizeof(line), f))
    if (!strncmp(line, field, n) && line[n] == ':') kib = strtol(line + n + 1, NULL, 10);
  fclose(f);
  return kib;
}
