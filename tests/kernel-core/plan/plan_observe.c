/* The plan tests' view of the recording profiler (plan_observe.h). */
#include "plan_observe.h"

#include <dlfcn.h>
#include <stdint.h>

#include "check.h"

static void* plan_observe_lib;

test_report_t* plan_observe_report(const char* path) {
  plan_observe_lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  CHECK_MSG(plan_observe_lib, "the test profiler %s is not loaded", path);
  test_report_fn fn = (test_report_fn)(uintptr_t)dlsym(plan_observe_lib, "test_profiler_report");
  CHECK(fn);
  return fn();
}

void plan_observe_set_mask(int mask) {
  CHECK(plan_observe_lib);
  test_set_mask_fn fn = (test_set_mask_fn)(uintptr_t)dlsym(plan_observe_lib, "test_profiler_set_mask");
  CHECK(fn);
  fn(mask);
}

void plan_observe_lock(int on) {
  CHECK(plan_observe_lib);
  test_lock_fn fn = (test_lock_fn)(uintptr_t)dlsym(plan_observe_lib, "test_profiler_lock");
  CHECK(fn);
  fn(on);
}

void plan_observe_release(void) {
  if (plan_observe_lib) dlclose(plan_observe_lib);
  plan_observe_lib = NULL;
}

int plan_observe_children(const test_report_t* r, uint64_t type, int parent) {
  int n = 0;
  plan_observe_lock(1);
  for (int i = 0; i < r->n; i++) n += r->recs[i].type == type && (parent < 0 || r->recs[i].parent == parent);
  plan_observe_lock(0);
  return n;
}

int plan_observe_last(const test_report_t* r, uint64_t type, int from) {
  int last = -1;
  plan_observe_lock(1);
  for (int i = from; i < r->n; i++)
    if (r->recs[i].type == type) last = i;
  plan_observe_lock(0);
  return last;
}
