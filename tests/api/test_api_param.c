/* NCCL 2.30's parameter API from outside (nccl.h only), over mkccl's table:
 * binding by name (unknown and NULL refused, outputs untouched); the typed
 * getters reading the value current at each call (environment changes
 * seen), converting where it fits and refusing where it does not (range,
 * sign, a string that is no integer); strings; the raw bytes with a buffer
 * too small (the size needed told) and big enough; the key-based getter;
 * the key table (user parameters by default, every level with
 * NCCL_PARAM_DUMP_ALL, each key bindable, none twice); the dump, read back
 * from the log file, alike. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"

#define INT_KEY "NCCL_BUFFSIZE"       /* a user-level integer, default 4194304 */
#define STR_KEY "NCCL_NET_GDR_LEVEL"  /* a user-level string, default unset */
#define EXPERT_KEY "MKCCL_HOST_SPIN_US" /* an expert-level integer */

static ncclParamHandle_t bind(const char* key) {
  ncclParamHandle_t h = NULL;
  CHECK_NCCL(ncclParamBind(&h, key));
  CHECK(h != NULL);
  return h;
}

static void check_bind(void) {
  ncclParamHandle_t h = (ncclParamHandle_t)(uintptr_t)0x1234;
  CHECK_EQ_INT(ncclParamBind(&h, "NCCL_NO_SUCH_PARAMETER"), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "NCCL_NO_SUCH_PARAMETER");
  CHECK(h == (ncclParamHandle_t)(uintptr_t)0x1234);
  CHECK_EQ_INT(ncclParamBind(NULL, INT_KEY), ncclInvalidArgument);
  CHECK_EQ_INT(ncclParamBind(&h, NULL), ncclInvalidArgument);
  CHECK(bind(INT_KEY) == bind(INT_KEY)); /* one parameter, one handle */
  CHECK(bind(INT_KEY) != bind(STR_KEY));
}

static void check_integers(void) {
  ncclParamHandle_t h = bind(INT_KEY);
  int64_t i64 = 0;
  unsetenv(INT_KEY);
  CHECK_NCCL(ncclParamGetI64(h, &i64));
  CHECK(i64 == 4194304);
  setenv(INT_KEY, "123456", 1); /* read at each call */
  int32_t i32 = 0;
  uint32_t u32 = 0;
  CHECK_NCCL(ncclParamGetI64(h, &i64));
  CHECK_NCCL(ncclParamGetI32(h, &i32));
  CHECK_NCCL(ncclParamGetU32(h, &u32));
  CHECK(i64 == 123456 && i32 == 123456 && u32 == 123456);
  int16_t i16 = 7;
  uint8_t u8 = 7;
  CHECK_EQ_INT(ncclParamGetI16(h, &i16), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "out of the range of int16_t");
  CHECK_EQ_INT(ncclParamGetU8(h, &u8), ncclInvalidArgument);
  CHECK(i16 == 7 && u8 == 7);
  setenv(INT_KEY, "-5", 1);
  int8_t i8 = 0;
  uint64_t u64 = 9;
  uint16_t u16 = 9;
  CHECK_NCCL(ncclParamGetI8(h, &i8));
  CHECK(i8 == -5);
  CHECK_EQ_INT(ncclParamGetU64(h, &u64), ncclInvalidArgument);
  CHECK_EQ_INT(ncclParamGetU16(h, &u16), ncclInvalidArgument);
  CHECK(u64 == 9 && u16 == 9);
  setenv(INT_KEY, "300", 1);
  CHECK_NCCL(ncclParamGetU16(h, &u16));
  CHECK_EQ_INT(ncclParamGetI8(h, &i8), ncclInvalidArgument);
  CHECK(u16 == 300 && i8 == -5);
  const char* s = NULL;
  CHECK_NCCL(ncclParamGetStr(h, &s));
  CHECK(s && !strcmp(s, "300"));
  /* Raw: an int64_t; a buffer too small is told the size. */
  char raw[16];
  int len = 0;
  CHECK_EQ_INT(ncclParamGet(h, raw, 4, &len), ncclInvalidArgument);
  CHECK_EQ_INT(len, (int)sizeof(int64_t));
  len = 0;
  CHECK_NCCL(ncclParamGet(h, raw, (int)sizeof(raw), &len));
  CHECK_EQ_INT(len, (int)sizeof(int64_t));
  memcpy(&i64, raw, sizeof(i64));
  CHECK(i64 == 300);
  CHECK_EQ_INT(ncclParamGetI64(NULL, &i64), ncclInvalidArgument);
  CHECK_EQ_INT(ncclParamGetI64(h, NULL), ncclInvalidArgument);
}

static void check_strings(void) {
  ncclParamHandle_t h = bind(STR_KEY);
  const char* s = NULL;
  unsetenv(STR_KEY);
  CHECK_NCCL(ncclParamGetStr(h, &s));
  CHECK(s && !strcmp(s, ""));
  setenv(STR_KEY, "PHB", 1);
  CHECK_NCCL(ncclParamGetStr(h, &s));
  CHECK(!strcmp(s, "PHB"));
  int32_t i32 = 11;
  CHECK_EQ_INT(ncclParamGetI32(h, &i32), ncclInvalidArgument); /* not an integer */
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "not an integer");
  CHECK(i32 == 11);
  char raw[16];
  int len = 0;
  CHECK_EQ_INT(ncclParamGet(h, raw, 2, &len), ncclInvalidArgument);
  CHECK_EQ_INT(len, 4);
  CHECK_NCCL(ncclParamGet(h, raw, (int)sizeof(raw), &len));
  CHECK(len == 4 && !memcmp(raw, "PHB", 4));
  setenv(STR_KEY, "3", 1);
  CHECK_NCCL(ncclParamGetI32(h, &i32));
  CHECK(i32 == 3);
  /* Key-based. */
  int vlen = -1;
  CHECK_NCCL(ncclParamGetParameter(STR_KEY, &s, &vlen));
  CHECK(!strcmp(s, "3") && vlen == 1);
  setenv(INT_KEY, "65536", 1);
  CHECK_NCCL(ncclParamGetParameter(INT_KEY, &s, &vlen));
  CHECK(!strcmp(s, "65536") && vlen == 5);
  const char* untouched = "x";
  vlen = -1;
  CHECK_EQ_INT(ncclParamGetParameter("NCCL_NO_SUCH_PARAMETER", &untouched, &vlen), ncclInvalidArgument);
  CHECK(!strcmp(untouched, "x") && vlen == -1);
  CHECK_EQ_INT(ncclParamGetParameter(NULL, &s, &vlen), ncclInvalidArgument);
}

/* How many times `key` is in the table; every key must bind. */
static int key_count(const char** keys, int n, const char* key) {
  int found = 0;
  for (int i = 0; i < n; i++) {
    ncclParamHandle_t h = NULL;
    CHECK_MSG(ncclParamBind(&h, keys[i]) == ncclSuccess, "key %s from the table does not bind", keys[i]);
    found += !strcmp(keys[i], key);
  }
  return found;
}

static void check_keys(void) {
  const char** keys = NULL;
  int n = 0, nAll = 0;
  unsetenv("NCCL_PARAM_DUMP_ALL");
  CHECK_NCCL(ncclParamGetAllParameterKeys(&keys, &n));
  CHECK(keys && n > 10);
  CHECK_EQ_INT(key_count(keys, n, INT_KEY), 1);
  CHECK_EQ_INT(key_count(keys, n, STR_KEY), 1);
  CHECK_EQ_INT(key_count(keys, n, EXPERT_KEY), 0);
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) CHECK_MSG(strcmp(keys[i], keys[j]), "%s twice in the table", keys[i]);
  setenv("NCCL_PARAM_DUMP_ALL", "true", 1);
  CHECK_NCCL(ncclParamGetAllParameterKeys(&keys, &nAll));
  CHECK(nAll > n);
  CHECK_EQ_INT(key_count(keys, nAll, EXPERT_KEY), 1);
  CHECK_EQ_INT(key_count(keys, nAll, INT_KEY), 1);
  unsetenv("NCCL_PARAM_DUMP_ALL");
  CHECK_EQ_INT(ncclParamGetAllParameterKeys(NULL, &n), ncclInvalidArgument);
}

/* Lines of the log that name `what`. */
static int log_lines(const char* path, const char* what) {
  FILE* f = fopen(path, "r");
  CHECK_MSG(f, "no log at %s", path);
  char line[4096];
  int n = 0;
  while (fgets(line, sizeof(line), f)) n += strstr(line, what) != NULL;
  fclose(f);
  return n;
}

static void check_dump(const char* logPath) {
  setenv(INT_KEY, "262144", 1);
  ncclParamDumpAll();
  CHECK_EQ_INT(log_lines(logPath, INT_KEY " (int64) [user, core]"), 1);
  CHECK_EQ_INT(log_lines(logPath, "current value=262144 set_by=Env default=4194304"), 1);
  CHECK_EQ_INT(log_lines(logPath, EXPERT_KEY " (int64)"), 0);
  setenv("NCCL_PARAM_DUMP_ALL", "1", 1);
  ncclParamDumpAll();
  CHECK_EQ_INT(log_lines(logPath, INT_KEY " (int64) [user, core]"), 2);
  CHECK_EQ_INT(log_lines(logPath, EXPERT_KEY " (int64) [expert, core]"), 1);
  unsetenv("NCCL_PARAM_DUMP_ALL");
}

int main(void) {
  char logPath[] = "/tmp/mkccl-param-api-XXXXXX";
  int fd = mkstemp(logPath);
  CHECK(fd >= 0);
  close(fd);
  /* Before the first log line: the logger reads these once. */
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", "ENV", 1);
  setenv("NCCL_DEBUG_FILE", logPath, 1);
  check_bind();
  check_integers();
  check_strings();
  check_keys();
  check_dump(logPath);
  unlink(logPath);
  printf("test_api_param: ok\n");
  return 0;
}
