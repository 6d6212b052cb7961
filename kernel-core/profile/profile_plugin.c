/* The process's profiler plugin: loaded through the generic loader,
 * adapted to v6, shared by every communicator (as in NCCL). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/log.h"
#include "plugin/loader.h"
#include "profile/profile.h"
#include "profile/profile_internal.h"

static pthread_mutex_t profile_process_lock = PTHREAD_MUTEX_INITIALIZER;
static plugin_lib_t* profile_process_lib;
static int profile_process_refs;
const ncclProfiler_v6_t* _Atomic profile_process_prof;
/* The library's mkcclProfilerTimed_v1 when it exports one beside ncclProfiler_v6. */
static const mkcclProfilerTimed_v1_t* profile_process_timed;

static int profile_plugin_start(plugin_lib_t* lib, void* arg, plugin_candidate_t* c) {
  const plugin_adapter_t* adapter = lib->abiDesc->adapter;
  const void* presented = NULL;
  if (!adapter || adapter->wrap(lib->symbol, &presented) != ncclSuccess) {
    c->outcome = PLUGIN_ADAPTER_BUSY;
    snprintf(c->reason, sizeof(c->reason), "the ABI v%d adapter holds another profiler (one per old version)",
             lib->abi);
    return -1;
  }
  const ncclProfiler_v6_t* p = presented;
  if (!p->init || !p->startEvent || !p->stopEvent || !p->recordEventState || !p->finalize) {
    adapter->unwrap();
    c->outcome = PLUGIN_INIT_FAILED;
    snprintf(c->reason, sizeof(c->reason), "its table lacks init, startEvent, stopEvent, recordEventState or finalize");
    return -1;
  }
  *(const ncclProfiler_v6_t**)arg = p;
  snprintf(c->reason, sizeof(c->reason), "%s", lib->abiDesc->symbol);
  return 0;
}

ncclResult_t profile_plugin_acquire(const ncclProfiler_v6_t** prof, int* abi) {
  ncclResult_t res = ncclSuccess;
  pthread_mutex_lock(&profile_process_lock);
  if (profile_process_refs == 0) {
    const ncclProfiler_v6_t* presented = NULL;
    plugin_select_t how = {NULL, profile_plugin_start, &presented, 0};
    plugin_lib_t** libs = NULL;
    int n = 0;
    res = plugin_select(PLUGIN_KIND_PROFILER, &how, &libs, &n);
    if (res == ncclSuccess && n > 0) {
      profile_process_lib = libs[0];
      atomic_store(&profile_process_prof, presented);
      if (profile_process_lib->abi == 6 && profile_process_lib->handle)
        profile_process_timed = dlsym(profile_process_lib->handle, MKCCL_PROFILER_TIMED_V1_SYMBOL);
      if (profile_process_timed &&
          (!profile_process_timed->startEventAt || !profile_process_timed->stopEventAt ||
           !profile_process_timed->recordEventStateAt))
        profile_process_timed = NULL;
      MK_INFO(NCCL_INIT | NCCL_PROFILE, "PROFILER/Plugin: using '%s' from %s (ABI v%d)",
              presented->name ? presented->name : "?", profile_process_lib->path, profile_process_lib->abi);
    }
    free(libs);
  }
  if (res == ncclSuccess) {
    profile_process_refs++;
    *prof = atomic_load(&profile_process_prof);
    if (abi) *abi = profile_process_lib ? profile_process_lib->abi : 0;
  }
  pthread_mutex_unlock(&profile_process_lock);
  return res;
}

void profile_plugin_release(void) {
  pthread_mutex_lock(&profile_process_lock);
  if (profile_process_refs > 0 && --profile_process_refs == 0 && profile_process_lib) {
    atomic_store(&profile_process_prof, NULL);
    profile_process_timed = NULL;
    profile_process_lib->abiDesc->adapter->unwrap();
    plugin_lib_close(profile_process_lib);
    profile_process_lib = NULL;
  }
  pthread_mutex_unlock(&profile_process_lock);
}

const mkcclProfilerTimed_v1_t* profile_plugin_timed(void) {
  pthread_mutex_lock(&profile_process_lock);
  const mkcclProfilerTimed_v1_t* t = profile_process_refs > 0 ? profile_process_timed : NULL;
  pthread_mutex_unlock(&profile_process_lock);
  return t;
}
