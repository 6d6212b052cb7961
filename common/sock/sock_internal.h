/* Private to the sock module. */
#ifndef MKCCL_SOCK_INTERNAL_H
#define MKCCL_SOCK_INTERNAL_H

#include "sock/sock.h"

/* Records this thread's failure text and returns status. */
int sock_fail(int status, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* SOCK_EABORT when the flag is raised, SOCK_ETIMEOUT past the deadline. */
int sock_check_wait(int64_t deadline, volatile uint32_t* abortFlag, const char* what);
/* poll() timeout for the next slice: at most 10 ms so the abort flag is seen. */
int sock_poll_slice_ms(int64_t deadline);

#endif
