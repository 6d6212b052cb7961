/* Logging in NCCL's line format, driven by NCCL_DEBUG, NCCL_DEBUG_SUBSYS and
 * NCCL_DEBUG_FILE. log_write has the ncclDebugLogger_t signature, so the same
 * function is handed to plugins as their logger. */
#ifndef MKCCL_BASE_LOG_H
#define MKCCL_BASE_LOG_H

#include "nccl_common.h"

/* Read by every thread, written under the log's lock at the first use and by
 * log_reset (ncclResetDebugInit) while others log: accessed atomically. */
extern int log_level;           /* ncclDebugLogLevel, -1 until first use */
extern unsigned long log_mask;  /* ncclDebugLogSubSys bits */

void log_init(void);
void log_write(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The device shown in "[dev]" on this thread's lines. */
void log_set_device(int dev);
/* Re-read the log settings (ncclResetDebugInit). */
void log_reset(void);

static inline int log_enabled(ncclDebugLogLevel level, unsigned long flags) {
  int lv = __atomic_load_n(&log_level, __ATOMIC_ACQUIRE);
  if (lv < 0) {
    log_init();
    lv = __atomic_load_n(&log_level, __ATOMIC_ACQUIRE);
  }
  return lv >= (int)level && (level <= NCCL_LOG_WARN || (__atomic_load_n(&log_mask, __ATOMIC_RELAXED) & flags));
}

#define MK_WARN(...) log_write(NCCL_LOG_WARN, NCCL_ALL, __FILE__, __LINE__, __VA_ARGS__)
#define MK_INFO(flags, ...)                                                          \
  do {                                                                               \
    if (log_enabled(NCCL_LOG_INFO, (flags))) log_write(NCCL_LOG_INFO, (flags), __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define MK_TRACE(flags, ...)                                                         \
  do {                                                                               \
    if (log_enabled(NCCL_LOG_TRACE, (flags))) log_write(NCCL_LOG_TRACE, (flags), __func__, __LINE__, __VA_ARGS__); \
  } while (0)

#endif
