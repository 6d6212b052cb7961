/* The CUDA driver shim: no driver is a clean "host only", MKCCL_CUDA_DISABLE
 * pretends so, and a driver (a fake libcuda) is reached through
 * cuGetProcAddress or dlsym. The shim loads once per process, so each case
 * runs in its own child process. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "check.h"
#include "cuda/driver.h"

static void check_no_driver(const char* reasonPart) {
  CHECK_NCCL(cuda_driver_load());
  CHECK(!cuda_driver_available());
  CHECK(cuda_driver() == NULL);
  CHECK_STR_CONTAINS(cuda_driver_reason(), reasonPart);
  CHECK_EQ_INT(cuda_device_count(), 0);
  int x = 0;
  CHECK_EQ_INT(cuda_pointer_is_device(&x), 0);
  char busId[32];
  CHECK_EQ_INT(cuda_device_bus_id(0, busId, sizeof(busId)), ncclInvalidUsage);
  int dev;
  CHECK_EQ_INT(cuda_current_device(&dev), ncclInvalidUsage);
}

static void case_missing(void) {
  setenv("MKCCL_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  check_no_driver("/nonexistent/libcuda.so.1");
}

static void case_disabled(void) {
  setenv("MKCCL_CUDA_LIBRARY", FAKE_CUDA_LIB, 1);
  setenv("MKCCL_CUDA_DISABLE", "1", 1);
  check_no_driver("MKCCL_CUDA_DISABLE");
}

/* Whatever this machine has: the answers agree with each other. */
static void case_system(void) {
  unsetenv("MKCCL_CUDA_LIBRARY");
  CHECK_NCCL(cuda_driver_load());
  if (!cuda_driver_available()) {
    CHECK(strlen(cuda_driver_reason()) > 0);
    CHECK_EQ_INT(cuda_device_count(), 0);
  } else {
    CHECK(cuda_driver()->driverVersion > 0);
    CHECK_EQ_INT(cuda_driver_reason()[0], '\0');
  }
}

static void* load_thread(void* arg) {
  *(ncclResult_t*)arg = cuda_driver_load();
  return NULL;
}

static void check_fake(int viaProc) {
  setenv("MKCCL_CUDA_LIBRARY", FAKE_CUDA_LIB, 1);
  /* Many threads at once: one load, one answer. */
  pthread_t t[8];
  ncclResult_t res[8];
  for (int i = 0; i < 8; i++) CHECK(pthread_create(&t[i], NULL, load_thread, &res[i]) == 0);
  for (int i = 0; i < 8; i++) {
    pthread_join(t[i], NULL);
    CHECK_EQ_INT(res[i], ncclSuccess);
  }
  CHECK(cuda_driver_available());
  const cuda_driver_t* d = cuda_driver();
  CHECK(d != NULL);
  CHECK_EQ_INT(d->viaProcAddress, viaProc);
  CHECK_EQ_INT(d->driverVersion, 12040);
  CHECK(d->get_error_string != NULL);
  CHECK_EQ_INT(cuda_device_count(), 2);
  char busId[32];
  CHECK_NCCL(cuda_device_bus_id(1, busId, sizeof(busId)));
  CHECK(strcmp(busId, "0000:3d:00.0") == 0);
  CHECK_EQ_INT(cuda_device_bus_id(2, busId, sizeof(busId)), ncclInvalidArgument);
  CHECK_EQ_INT(cuda_device_bus_id(0, busId, 8), ncclInvalidArgument);
  int sm = 0, dev = -1;
  CHECK_NCCL(cuda_device_sm(0, &sm));
  CHECK_EQ_INT(sm, 90);
  CHECK_NCCL(cuda_current_device(&dev));
  CHECK_EQ_INT(dev, 1);
  int can = 0;
  CHECK_EQ_INT(d->device_can_access_peer(&can, 0, 1), CUDA_DRV_SUCCESS);
  CHECK_EQ_INT(can, 1);

  /* Memory types, through the buffers the fake driver calls its own. */
  void* lib = dlopen(FAKE_CUDA_LIB, RTLD_NOW | RTLD_NOLOAD);
  CHECK(lib != NULL);
  char* devMem = dlsym(lib, "fake_cuda_device_memory");
  char* pinned = dlsym(lib, "fake_cuda_pinned_memory");
  int* requested = dlsym(lib, "fake_cuda_requested_version");
  CHECK(devMem && pinned && requested);
  CHECK_EQ_INT(cuda_pointer_is_device(devMem + 100), 1);
  CHECK_EQ_INT(cuda_pointer_is_device(pinned), 0);
  char* heap = malloc(64);
  CHECK_EQ_INT(cuda_pointer_is_device(heap), 0);
  CHECK_EQ_INT(cuda_pointer_is_device(NULL), 0);
  free(heap);
  /* cuGetProcAddress was asked for the ABI our pointer types describe. */
  CHECK_EQ_INT(*requested, CUDA_DRV_ABI_VERSION);
  CHECK_STR_CONTAINS(cuda_result_str(100), "no CUDA-capable device");
  dlclose(lib);
}

static void case_fake_proc(void) { check_fake(1); }

static void case_fake_dlsym(void) {
  setenv("FAKE_CUDA_NO_PROC", "1", 1);
  check_fake(0);
}

static void case_init_fails(void) {
  setenv("MKCCL_CUDA_LIBRARY", FAKE_CUDA_LIB, 1);
  setenv("FAKE_CUDA_INIT_FAIL", "1", 1);
  check_no_driver("cuInit returned 100");
}

static void case_broken(void) {
  setenv("MKCCL_CUDA_LIBRARY", FAKE_CUDA_BROKEN_LIB, 1);
  CHECK_EQ_INT(cuda_driver_load(), ncclSystemError);
  CHECK_STR_CONTAINS(err_last_get(), "cuDeviceCanAccessPeer");
  CHECK_EQ_INT(cuda_driver_load(), ncclSystemError); /* cached */
  CHECK(!cuda_driver_available());
  CHECK_EQ_INT(cuda_device_count(), 0);
}

static int run_case(const char* name, void (*fn)(void)) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    unsetenv("MKCCL_CUDA_DISABLE");
    unsetenv("FAKE_CUDA_NO_PROC");
    unsetenv("FAKE_CUDA_INIT_FAIL");
    fn();
    _exit(0);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  fprintf(stderr, "%s: %s\n", name, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

int main(void) {
  int failed = 0;
  failed += run_case("missing driver", case_missing);
  failed += run_case("MKCCL_CUDA_DISABLE", case_disabled);
  failed += run_case("this machine", case_system);
  failed += run_case("fake driver via cuGetProcAddress", case_fake_proc);
  failed += run_case("fake driver via dlsym", case_fake_dlsym);
  failed += run_case("cuInit fails", case_init_fails);
  failed += run_case("entry point missing", case_broken);
  return failed ? 1 : 0;
}
