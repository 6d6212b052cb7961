/* The parameter table: defaults, environment, manifest options, plugin
 * declarations, and the log's use of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/param.h"
#include "check.h"

static int visited;
static void count_visit(const param_decl_t* d, const char* v, param_source_t s, const char* w, void* arg) {
  (void)v, (void)s, (void)w;
  if (strcmp(d->name, (const char*)arg) == 0) visited++;
}

/* mkccl-info prints help as one line under the name. */
static int long_helps;
static void help_visit(const param_decl_t* d, const char* v, param_source_t s, const char* w, void* arg) {
  (void)v, (void)s, (void)w, (void)arg;
  if (!d->help || !d->help[0] || strlen(d->help) > 100 || strchr(d->help, '\n')) {
    fprintf(stderr, "%s: help not one line of 1 to 100 characters: '%s'\n", d->name, d->help ? d->help : "");
    long_helps++;
  }
}

int main(void) {
  param_foreach(help_visit, NULL);
  CHECK_EQ_INT(long_helps, 0);

  unsetenv("NCCL_DEBUG_SUBSYS");
  const char* where = NULL;
  CHECK(strcmp(param_str("NCCL_DEBUG_SUBSYS"), "INIT,BOOTSTRAP,ENV") == 0);
  CHECK_EQ_INT(param_source("NCCL_DEBUG_SUBSYS", &where), PARAM_FROM_DEFAULT);

  /* A plugin's table: default, then manifest option, then environment wins. */
  static const mkcclParamDecl_v1 decls[] = {
      {"MKCCL_TEST_THREADS", MKCCL_PARAM_INT64, "4", "threads"},
      {"MKCCL_TEST_NAME", MKCCL_PARAM_STRING, "abc", "a name"},
  };
  param_register(decls, 2, "test-plugin");
  CHECK_EQ_INT(param_int("MKCCL_TEST_THREADS"), 4);
  CHECK(param_option_set("MKCCL_TEST_THREADS", "8", "m.yaml:3:5") == 0);
  CHECK_EQ_INT(param_int("MKCCL_TEST_THREADS"), 8);
  CHECK_EQ_INT(param_source("MKCCL_TEST_THREADS", &where), PARAM_FROM_MANIFEST);
  CHECK(strcmp(where, "m.yaml:3:5") == 0);
  setenv("MKCCL_TEST_THREADS", "0x10", 1);
  CHECK_EQ_INT(param_int("MKCCL_TEST_THREADS"), 16);
  CHECK_EQ_INT(param_source("MKCCL_TEST_THREADS", NULL), PARAM_FROM_ENV);

  /* A bad value falls back to the default and says so. */
  setenv("MKCCL_TEST_THREADS", "many", 1);
  CHECK_EQ_INT(param_int("MKCCL_TEST_THREADS"), 4);
  CHECK_STR_CONTAINS(err_last_get(), "Invalid value 'many' for MKCCL_TEST_THREADS");

  /* Unknown names are refused, never invented. */
  int64_t v;
  CHECK(param_int_lookup("MKCCL_NO_SUCH", &v) == -1);
  CHECK(param_option_set("MKCCL_NO_SUCH", "1", "x") == -1);
  CHECK(strcmp(param_str("MKCCL_TEST_NAME"), "abc") == 0);

  param_foreach(count_visit, (void*)"MKCCL_TEST_NAME");
  CHECK_EQ_INT(visited, 1);
  return 0;
}
