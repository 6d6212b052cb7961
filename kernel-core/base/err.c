#include "base/err.h"

#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
static char err_last[1024];
static __thread char err_copy[1024];

static void err_atfork_prepare(void) { pthread_mutex_lock(&err_lock); }
static void err_atfork_release(void) { pthread_mutex_unlock(&err_lock); }
static pthread_once_t err_atfork_once = PTHREAD_ONCE_INIT;
static void err_atfork_register(void) { pthread_atfork(err_atfork_prepare, err_atfork_release, err_atfork_release); }

void err_last_set(const char* text) {
  pthread_once(&err_atfork_once, err_atfork_register);
  pthread_mutex_lock(&err_lock);
  snprintf(err_last, sizeof(err_last), "%s", text);
  pthread_mutex_unlock(&err_lock);
}

/* A per-thread copy, so the caller's pointer stays valid while other threads
 * record new errors. */
const char* err_last_get(void) {
  pthread_mutex_lock(&err_lock);
  snprintf(err_copy, sizeof(err_copy), "%s", err_last);
  pthread_mutex_unlock(&err_lock);
  return err_copy;
}
