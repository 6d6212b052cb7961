/* What this process holds, for leak checks: open file descriptors,
 * threads and mkccl's shared-memory segments, counted from /proc and
 * /dev/shm. */
#ifndef MKCCL_TEST_PROC_COUNT_H
#define MKCCL_TEST_PROC_COUNT_H

int proc_count_fds(void);     /* not counting the one used to count */
int proc_count_threads(void);
/* Threads whose name (/proc/self/task/N/comm) is `name`. */
int proc_count_threads_named(const char* name);
/* The same, after waiting up to `seconds` for one to appear: a thread
 * names itself once it runs, a little after it was created. */
int proc_wait_threads_named(const char* name, double seconds);

/* Our pid namespace's inode, as transport-shm puts it in segment names. */
unsigned long proc_pidns(void);
/* Names in /dev/shm of process pid's segments (transport-shm names them
 * mkccl-shm-<pidns>-<pid>-<random>). */
int proc_count_shm_segments(int pid);
/* Mappings of mkccl's segments in this process (/proc/self/maps). */
int proc_count_shm_mappings(void);
/* KiB of this process's mappings whose line contains `needle`
 * (/proc/self/maps), e.g. "/dev/nvidia": the driver's device-file mappings,
 * pinned host buffers among them. */
long proc_mapped_kib(const char* needle);
/* A field of /proc/self/status in kB ("VmSize", "VmPin"), -1 when absent. */
long proc_status_kib(const char* field);

#endif
