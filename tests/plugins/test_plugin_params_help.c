/* Every built plugin's parameter table (its mkcclPluginInfo_v1): each help
 * is one line of 1 to 100 characters, as mkccl-info prints it under the
 * name; test_param holds the core's own table to the same rule. Longer
 * explanations belong in the plugin's README. ctest passes the plugins in
 * MKCCL_TEST_PLUGINS (paths, colon-separated). */
#define _POSIX_C_SOURCE 200809L /* strdup, strtok */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mkccl_plugin_v1.h"

#define HELP_MAX 100

static int bad;

/* The parameters of the plugin at path that were checked (0 without a table). */
static int check_plugin(const char* path) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(lib != NULL, "%s", dlerror());
  const mkcclPluginInfo_v1_t* info = dlsym(lib, MKCCL_PLUGIN_INFO_SYMBOL);
  int n = info ? info->nParams : 0;
  for (int i = 0; i < n; i++) {
    const mkcclParamDecl_v1* d = &info->params[i];
    CHECK_MSG(d->name != NULL, "%s: parameter %d has no name", info->name, i);
    size_t len = d->help ? strlen(d->help) : 0;
    if (len == 0 || len > HELP_MAX || strchr(d->help, '\n')) {
      fprintf(stderr, "%s: %s: help of %zu characters, not one line of 1 to %d: '%s'\n", info->name, d->name, len,
              HELP_MAX, d->help ? d->help : "");
      bad++;
    }
  }
  dlclose(lib);
  return n;
}

int main(void) {
  const char* list = getenv("MKCCL_TEST_PLUGINS");
  CHECK_MSG(list && *list, "run through ctest (MKCCL_TEST_PLUGINS)");
  char* paths = strdup(list);
  CHECK(paths != NULL);
  int plugins = 0, tables = 0, params = 0;
  for (char* p = strtok(paths, ":"); p; p = strtok(NULL, ":")) {
    int n = check_plugin(p);
    plugins++;
    tables += n > 0;
    params += n;
  }
  free(paths);
  printf("%d plugins, %d with parameters, %d parameters checked\n", plugins, tables, params);
  CHECK(tables > 0 && params > 0); /* nothing checked is not a pass */
  CHECK_MSG(bad == 0, "%d help text(s) too long or not one line", bad);
  return 0;
}
