/* Loading a tuner plugin through the generic loader, adapted to v6. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/log.h"
#include "plugin/loader.h"
#include "tune/tune.h"

struct tune_plugin {
  plugin_lib_t* lib;
  const ncclTuner_v6_t* tuner;
};

/* The loader's start hook: adapt, and refuse tables without their calls. */
static int tune_plugin_start(plugin_lib_t* lib, void* arg, plugin_candidate_t* c) {
  const plugin_adapter_t* adapter = lib->abiDesc->adapter;
  const void* presented = NULL;
  if (!adapter || adapter->wrap(lib->symbol, &presented) != ncclSuccess) {
    c->outcome = PLUGIN_ADAPTER_BUSY;
    snprintf(c->reason, sizeof(c->reason), "the ABI v%d adapter holds another tuner (one per old version)", lib->abi);
    return -1;
  }
  const ncclTuner_v6_t* t = presented;
  if (!t->init || !t->getCollInfo || !t->finalize) {
    adapter->unwrap();
    c->outcome = PLUGIN_INIT_FAILED;
    snprintf(c->reason, sizeof(c->reason), "its table lacks init, getCollInfo or finalize/destroy");
    return -1;
  }
  *(const ncclTuner_v6_t**)arg = t;
  snprintf(c->reason, sizeof(c->reason), "%s", lib->abiDesc->symbol);
  return 0;
}

ncclResult_t tune_plugin_load(tune_plugin_t** out) {
  const ncclTuner_v6_t* tuner = NULL;
  plugin_select_t how = {NULL, tune_plugin_start, &tuner, 0};
  plugin_lib_t** libs = NULL;
  int n = 0;
  MK_CHECK(plugin_select(PLUGIN_KIND_TUNER, &how, &libs, &n));
  if (n == 0) {
    free(libs);
    *out = NULL;
    return ncclSuccess;
  }
  tune_plugin_t* p = calloc(1, sizeof(*p));
  if (!p) {
    libs[0]->abiDesc->adapter->unwrap();
    plugin_libs_close(libs, n);
    return MK_FAIL(ncclSystemError, "TUNER/Plugin: out of memory");
  }
  p->lib = libs[0];
  p->tuner = tuner;
  free(libs);
  MK_INFO(NCCL_INIT | NCCL_TUNING, "TUNER/Plugin: using '%s' from %s (ABI v%d)", tuner->name ? tuner->name : "?",
          p->lib->path, p->lib->abi);
  *out = p;
  return ncclSuccess;
}

const ncclTuner_v6_t* tune_plugin_table(const tune_plugin_t* p) { return p ? p->tuner : NULL; }
int tune_plugin_abi(const tune_plugin_t* p) { return p ? p->lib->abi : 0; }

void tune_plugin_unload(tune_plugin_t* p) {
  if (!p) return;
  p->lib->abiDesc->adapter->unwrap();
  plugin_lib_close(p->lib);
  free(p);
}

/* The process's tuner, shared by its communicators as in NCCL. */
static pthread_mutex_t tune_process_lock = PTHREAD_MUTEX_INITIALIZER;
static tune_plugin_t* tune_process_plugin;
static int tune_process_refs;

ncclResult_t tune_plugin_acquire(const ncclTuner_v6_t** tuner) {
  ncclResult_t res = ncclSuccess;
  pthread_mutex_lock(&tune_process_lock);
  if (tune_process_refs == 0) res = tune_plugin_load(&tune_process_plugin);
  if (res == ncclSuccess) {
    tune_process_refs++;
    *tuner = tune_plugin_table(tune_process_plugin);
  }
  pthread_mutex_unlock(&tune_process_lock);
  return res;
}

void tune_plugin_release(void) {
  pthread_mutex_lock(&tune_process_lock);
  if (tune_process_refs > 0 && --tune_process_refs == 0) {
    tune_plugin_unload(tune_process_plugin);
    tune_process_plugin = NULL;
  }
  pthread_mutex_unlock(&tune_process_lock);
}
