#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/param.h"

int log_level = -1;
unsigned long log_mask = NCCL_INIT | NCCL_BOOTSTRAP | NCCL_ENV;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE* log_file;
static char log_host[64];
static struct timespec log_epoch;
static __thread int log_device = -1;

void log_set_device(int dev) { log_device = dev; }

static int log_level_parse(const char* text) {
  if (!text || !*text) return NCCL_LOG_NONE;
  static const struct { const char* name; int level; } names[] = {
      {"VERSION", NCCL_LOG_VERSION}, {"WARN", NCCL_LOG_WARN}, {"INFO", NCCL_LOG_INFO},
      {"ABORT", NCCL_LOG_ABORT},     {"TRACE", NCCL_LOG_TRACE}};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcasecmp(text, names[i].name) == 0) return names[i].level;
  return NCCL_LOG_NONE;
}

static const struct { const char* name; unsigned long bit; } log_subsys_names[] = {
    {"INIT", NCCL_INIT},   {"COLL", NCCL_COLL},         {"P2P", NCCL_P2P},     {"SHM", NCCL_SHM},
    {"NET", NCCL_NET},     {"GRAPH", NCCL_GRAPH},       {"TUNING", NCCL_TUNING}, {"ENV", NCCL_ENV},
    {"ALLOC", NCCL_ALLOC}, {"CALL", NCCL_CALL},         {"PROXY", NCCL_PROXY}, {"NVLS", NCCL_NVLS},
    {"BOOTSTRAP", NCCL_BOOTSTRAP}, {"REG", NCCL_REG},   {"PROFILE", NCCL_PROFILE}, {"RAS", NCCL_RAS},
    {"ALL", (unsigned long)NCCL_ALL}};

/* "INIT,NET" selects; a leading '^' inverts the whole list, as NCCL does. */
static unsigned long log_mask_parse(const char* text) {
  if (!text || !*text) return NCCL_INIT | NCCL_BOOTSTRAP | NCCL_ENV;
  int invert = text[0] == '^';
  if (invert) text++;
  unsigned long mask = 0;
  char buf[256];
  snprintf(buf, sizeof(buf), "%s", text);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
    for (size_t i = 0; i < sizeof(log_subsys_names) / sizeof(log_subsys_names[0]); i++)
      if (strcasecmp(tok, log_subsys_names[i].name) == 0) mask |= log_subsys_names[i].bit;
  return invert ? ~mask : mask;
}

/* NCCL_DEBUG_FILE: %h is the host name, %p the pid. */
static FILE* log_file_open(const char* pattern) {
  if (!pattern || !*pattern) return NULL;
  char path[4096];
  size_t n = 0;
  for (const char* p = pattern; *p && n + 1 < sizeof(path); p++) {
    if (p[0] == '%' && (p[1] == 'h' || p[1] == 'p')) {
      int w = p[1] == 'h' ? snprintf(path + n, sizeof(path) - n, "%s", log_host)
                          : snprintf(path + n, sizeof(path) - n, "%d", (int)getpid());
      if (w > 0) n += (size_t)w < sizeof(path) - n ? (size_t)w : sizeof(path) - n - 1;
      p++;
    } else {
      path[n++] = *p;
    }
  }
  path[n] = '\0';
  FILE* f = fopen(path, "w");
  if (f) setvbuf(f, NULL, _IOLBF, 0);
  return f;
}

static void log_init_locked(void) {
  if (__atomic_load_n(&log_level, __ATOMIC_RELAXED) >= 0) return;
  gethostname(log_host, sizeof(log_host) - 1);
  char* dot = strchr(log_host, '.');
  if (dot) *dot = '\0';
  clock_gettime(CLOCK_MONOTONIC, &log_epoch);
  __atomic_store_n(&log_mask, log_mask_parse(param_NCCL_DEBUG_SUBSYS()), __ATOMIC_RELAXED);
  FILE* f = log_file_open(param_NCCL_DEBUG_FILE());
  log_file = f ? f : stdout;
  __atomic_store_n(&log_level, log_level_parse(param_NCCL_DEBUG()), __ATOMIC_RELEASE);
}

/* A fork while another thread logs must not leave the child's lock held. */
static void log_atfork_prepare(void) { pthread_mutex_lock(&log_lock); }
static void log_atfork_release(void) { pthread_mutex_unlock(&log_lock); }
static pthread_once_t log_atfork_once = PTHREAD_ONCE_INIT;
static void log_atfork_register(void) { pthread_atfork(log_atfork_prepare, log_atfork_release, log_atfork_release); }

void log_init(void) {
  pthread_once(&log_atfork_once, log_atfork_register);
  pthread_mutex_lock(&log_lock);
  log_init_locked();
  pthread_mutex_unlock(&log_lock);
}

void log_reset(void) {
  pthread_mutex_lock(&log_lock);
  if (log_file && log_file != stdout) fclose(log_file);
  log_file = NULL;
  __atomic_store_n(&log_level, -1, __ATOMIC_RELAXED);
  log_init_locked();
  pthread_mutex_unlock(&log_lock);
}

void log_write(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  if (__atomic_load_n(&log_level, __ATOMIC_ACQUIRE) < 0) log_init();
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (level == NCCL_LOG_WARN) err_last_set(msg);
  int lv = __atomic_load_n(&log_level, __ATOMIC_ACQUIRE);
  if (lv < (int)level) return;
  if (level > NCCL_LOG_WARN && !(__atomic_load_n(&log_mask, __ATOMIC_RELAXED) & flags)) return;
  if (level == NCCL_LOG_VERSION && lv != NCCL_LOG_VERSION && lv < NCCL_LOG_INFO) return;
  int pid = (int)getpid(), tid = (int)syscall(SYS_gettid);
  const char* base = file ? strrchr(file, '/') : NULL;
  base = base ? base + 1 : file;
  pthread_mutex_lock(&log_lock);
  if (level == NCCL_LOG_WARN) {
    fprintf(log_file, "%s:%d:%d [%d] %s:%d NCCL WARN %s\n", log_host, pid, tid, log_device, base, line, msg);
  } else if (level == NCCL_LOG_TRACE) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double ms = (now.tv_sec - log_epoch.tv_sec) * 1e3 + (now.tv_nsec - log_epoch.tv_nsec) / 1e6;
    fprintf(log_file, "%s:%d:%d [%d] %f %s:%d NCCL TRACE %s\n", log_host, pid, tid, log_device, ms, base, line,
            msg);
  } else {
    fprintf(log_file, "%s:%d:%d [%d] NCCL INFO %s\n", log_host, pid, tid, log_device, msg);
  }
  fflush(log_file);
  pthread_mutex_unlock(&log_lock);
}
