/* What this process holds, for leak checks: open file descriptors and
 * threads, counted from /proc/self. */
#ifndef MKCCL_TEST_PROC_COUNT_H
#define MKCCL_TEST_PROC_COUNT_H

int proc_count_fds(void);     /* not counting the one used to count */
int proc_count_threads(void);

#endif
