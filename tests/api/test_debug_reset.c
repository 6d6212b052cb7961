/* ncclResetDebugInit: the logging settings are read again from the
 * environment. One process; a 1-rank communicator's init logs INFO lines
 * ("Init START") and a bad argument logs a WARN:
 *  - NCCL_DEBUG=INFO, NCCL_DEBUG_FILE=A, reset: the init's INFO lines are in A;
 *  - NCCL_DEBUG_FILE=B, reset: the next init's lines are in B, A does not
 *    grow (and was closed: it can be removed and the process goes on);
 *  - NCCL_DEBUG=WARN, reset: an init writes no INFO line to C, a bad
 *    argument's WARN is there;
 *  - NCCL_DEBUG unset, reset: not even a WARN is written to D, while the
 *    error's text is still what ncclGetLastError returns. */
#define _GNU_SOURCE /* setenv, mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"

static char dir[64];

static const char* path_of(const char* name) {
  static char p[128];
  snprintf(p, sizeof(p), "%s/%s", dir, name);
  return p;
}

/* Lines of file `name` that contain `needle` (0 when there is no file). */
static int lines_with(const char* name, const char* needle) {
  FILE* f = fopen(path_of(name), "r");
  if (!f) return 0;
  char line[2048];
  int n = 0;
  while (fgets(line, sizeof(line), f)) n += strstr(line, needle) != NULL;
  fclose(f);
  return n;
}

static long size_of(const char* name) {
  struct stat st;
  return stat(path_of(name), &st) == 0 ? (long)st.st_size : -1;
}

static void init_one(void) {
  ncclUniqueId id;
  ncclComm_t comm;
  CHECK_NCCL(ncclGetUniqueId(&id));
  CHECK_NCCL(ncclCommInitRank(&comm, 1, id, 0));
  float x = 1, y = 0;
  CHECK_NCCL(ncclAllReduce(&x, &y, 1, ncclFloat32, ncclSum, comm, NULL));
  CHECK(y == 1);
  CHECK_NCCL(ncclCommDestroy(comm));
}

static void bad_call(void) {
  CHECK_EQ_INT(ncclAllReduce(NULL, NULL, 1, ncclFloat32, ncclSum, NULL, NULL), ncclInvalidArgument);
}

static void use_settings(const char* level, const char* file) {
  if (level) setenv("NCCL_DEBUG", level, 1);
  else unsetenv("NCCL_DEBUG");
  setenv("NCCL_DEBUG_FILE", path_of(file), 1);
  ncclResetDebugInit();
}

int main(void) {
  snprintf(dir, sizeof(dir), "/tmp/mkccl-debug-XXXXXX");
  CHECK(mkdtemp(dir));
  setenv("NCCL_DEBUG_SUBSYS", "INIT", 1);

  use_settings("INFO", "A");
  init_one();
  int inA = lines_with("A", "NCCL INFO");
  CHECK_MSG(inA > 0 && lines_with("A", "Init START") == 1, "A: %d INFO lines, %d Init START", inA,
            lines_with("A", "Init START"));

  use_settings("INFO", "B");
  long sizeA = size_of("A");
  init_one();
  CHECK_EQ_INT(lines_with("B", "Init START"), 1);
  CHECK_EQ_INT(size_of("A"), sizeA);
  CHECK(unlink(path_of("A")) == 0);

  use_settings("WARN", "C");
  init_one();
  bad_call();
  CHECK_EQ_INT(lines_with("C", "NCCL INFO"), 0);
  CHECK_MSG(lines_with("C", "NCCL WARN") == 1, "C: %d WARN lines", lines_with("C", "NCCL WARN"));
  CHECK_EQ_INT(size_of("B") > 0, 1);
  CHECK_EQ_INT(lines_with("B", "NCCL WARN"), 0);

  use_settings(NULL, "D");
  bad_call();
  CHECK_EQ_INT(lines_with("D", "NCCL"), 0);
  CHECK(ncclGetLastError(NULL)[0] != '\0');

  unsetenv("NCCL_DEBUG_FILE");
  ncclResetDebugInit();
  const char* files[] = {"B", "C", "D"};
  for (int i = 0; i < 3; i++) unlink(path_of(files[i]));
  CHECK(rmdir(dir) == 0);
  printf("test_debug_reset: ok\n");
  return 0;
}
