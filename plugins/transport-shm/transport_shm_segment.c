/* POSIX shared memory segments: private to the user (0600), random names,
 * never reused. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "transport_shm.h"

int shm_segment_create(size_t bytes, char* name, size_t nameSize, void** ptr) {
  uint64_t rnd = 0;
  if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) rnd = (uint64_t)getpid() * 2654435761u;
  snprintf(name, nameSize, "/mkccl-shm-%d-%016llx", (int)getpid(), (unsigned long long)rnd);
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
