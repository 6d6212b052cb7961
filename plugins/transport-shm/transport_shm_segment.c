/* POSIX shared memory segments: private to the user (0600), random names,
 * never reused. A name carries its creator's pid namespace and pid
 * (/mkccl-shm-<pidns>-<pid>-<random>): a process killed between creating a
 * segment and its peer mapping it leaves the name behind, and the next
 * communicator set up in the same pid namespace removes it. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "transport_shm.h"

/* The inode of our pid namespace (pids are only comparable inside one). */
static unsigned long shm_pidns(void) {
  char link[64] = "";
  ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
  if (n <= 0) return 0;
  link[n] = '\0';
  const char* open = strchr(link, '[');
  return open ? strtoul(open + 1, NULL, 10) : 0;
}

int shm_segment_sweep_dead(void) {
  unsigned long ns = shm_pidns();
  DIR* d = opendir("/dev/shm");
  if (!d) return 0;
  int removed = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    unsigned long ens;
    int pid, used = 0;
    if (sscanf(e->d_name, "mkccl-shm-%lu-%d-%*x%n", &ens, &pid, &used) != 2 || used == 0) continue;
    if (ens != ns || pid <= 0 || pid == (int)getpid()) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue; /* alive (or not ours to judge) */
    char path[SHM_NAME_MAX + 2] = "/";
    if (strlen(e->d_name) >= sizeof(path) - 1) continue; /* not a name we make */
    memcpy(path + 1, e->d_name, strlen(e->d_name) + 1);
    removed += shm_unlink(path) == 0;
  }
  closedir(d);
  return removed;
}

int shm_segment_create(size_t bytes, char* name, size_t nameSize, void** ptr) {
  uint64_t rnd = 0;
  if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) rnd = (uint64_t)getpid() * 2654435761u;
  snprintf(name, nameSize, "/mkccl-shm-%lu-%d-%016llx", shm_pidns(), (int)getpid(), (unsigned long long)rnd);
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return -errno;
  if (ftruncate(fd, (off_t)bytes) != 0) {
    int err = errno;
    close(fd);
    shm_unlink(name);
    return -err;
  }
  void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name);
    return -err;
  }
  *ptr = p;
  return 0;
}

int shm_segment_open(const char* name, size_t bytes, void** ptr) {
  int fd = shm_open(name, O_RDWR, 0600);
  if (fd < 0) return -errno;
  void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) return -err;
  *ptr = p;
  return 0;
}

void shm_segment_close(void* ptr, size_t bytes) {
  if (ptr) munmap(ptr, bytes);
}

void shm_segment_unlink(const char* name) { shm_unlink(name); }
