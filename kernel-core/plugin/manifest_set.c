/* Finding, reading and merging the process's manifests (manifest_set.h). */
#include "plugin/manifest_set.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/param.h"

static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;
static int set_loaded;
static ncclResult_t set_result;
static char set_error[1024];
static manifest_set_t set_state;

/* dladdr anchor: any symbol of the core names the object the core lives in. */
static const char set_anchor = 0;

/* Where the plugins sit relative to the folder of the object holding the
 * core: the library's own folder (lib/libnccl.so.2 -> lib/mkccl), and for a
 * program linked with the core that says it sits in bin/ beside lib/
 * (manifest_set.h: mkccl_program_beside_lib) the library folder beside it.
 * MKCCL_LIBDIR_NAME is the install's library folder name. */
#ifndef MKCCL_LIBDIR_NAME
#define MKCCL_LIBDIR_NAME "lib"
#endif
static const char* const set_plugin_subdirs[] = {"mkccl", "../" MKCCL_LIBDIR_NAME "/mkccl"};
#define SET_NSUBDIRS (&mkccl_program_beside_lib ? 2 : 1)

/* "<folder of `object`>/<sub>"; 0 when it fits. */
static int set_plugin_dir(const char* object, const char* sub, char* dir, size_t size) {
  const char* slash = strrchr(object, '/');
  int n = slash ? snprintf(dir, size, "%.*s/%s", (int)(slash - object), object, sub) : snprintf(dir, size, "%s", sub);
  return n > 0 && (size_t)n < size ? 0 : -1;
}

/* Looks for manifest.yaml in the plugin folders of the object holding the
 * core, by the name it was loaded under and then by its real path; 0 when
 * found. `dir` gets the plugin folder either way (for the embedded default:
 * the first that exists, else the first candidate). */
static int set_default_find(char* dir, size_t dirSize, char* path, size_t pathSize) {
  Dl_info info;
  const char* object = (dladdr(&set_anchor, &info) && info.dli_fname && *info.dli_fname) ? info.dli_fname : ".";
  char real[PATH_MAX];
  const char* names[2] = {object, realpath(object, real) ? real : NULL};
  char first[PATH_MAX] = "", existing[PATH_MAX] = "";
  for (int i = 0; i < 2; i++) {
    for (int k = 0; names[i] && k < SET_NSUBDIRS; k++) {
      char cand[PATH_MAX];
      if (set_plugin_dir(names[i], set_plugin_subdirs[k], cand, sizeof(cand)) != 0) continue;
      if (!first[0]) snprintf(first, sizeof(first), "%s", cand);
      if (!existing[0] && access(cand, X_OK) == 0) snprintf(existing, sizeof(existing), "%s", cand);
      if (snprintf(path, pathSize, "%s/manifest.yaml", cand) >= (int)pathSize) continue;
      if (access(path, R_OK) == 0) return snprintf(dir, dirSize, "%s", cand) < (int)dirSize ? 0 : -1;
    }
  }
  snprintf(dir, dirSize, "%s", existing[0] ? existing : first[0] ? first : "mkccl");
  if (snprintf(path, pathSize, "%.*s/manifest.yaml", (int)(pathSize / 2), dir) >= (int)pathSize) path[0] = '\0';
  return -1;
}

static ncclResult_t set_add(manifest_t* m) {
  manifest_t** grown = realloc(set_state.manifests, sizeof(*grown) * (size_t)(set_state.nManifests + 1));
  if (!grown) {
    manifest_free(m);
    return MK_FAIL(ncclSystemError, "manifests: out of memory");
  }
  set_state.manifests = grown;
  set_state.manifests[set_state.nManifests++] = m;
  return ncclSuccess;
}

static ncclResult_t set_default_load(void) {
  char dir[PATH_MAX];
  manifest_t* m = NULL;
  if (set_default_find(dir, sizeof(dir), set_state.defaultPath, sizeof(set_state.defaultPath)) == 0) {
    MK_CHECK(manifest_file_parse(set_state.defaultPath, &m));
    MK_INFO(NCCL_INIT, "Plugin: default manifest %s", set_state.defaultPath);
  } else {
    MK_CHECK(manifest_text_parse(manifest_embedded_text, manifest_embedded_size, MANIFEST_EMBEDDED_NAME, dir, &m));
    set_state.defaultEmbedded = 1;
    MK_INFO(NCCL_INIT, "Plugin: no %s, using the embedded default manifest", set_state.defaultPath);
  }
  return set_add(m);
}

/* MKCCL_MANIFEST: files separated by ':' or ','. */
static ncclResult_t set_user_load(void) {
  const char* list = param_MKCCL_MANIFEST();
  if (!list || !*list) return ncclSuccess;
  char* copy = strdup(list);
  if (!copy) return MK_FAIL(ncclSystemError, "manifests: out of memory");
  ncclResult_t res = ncclSuccess;
  for (char *save = NULL, *tok = strtok_r(copy, ":,", &save); tok; tok = strtok_r(NULL, ":,", &save)) {
    manifest_t* m = NULL;
    MK_CHECK_GOTO(manifest_file_parse(tok, &m), res, out);
    MK_CHECK_GOTO(set_add(m), res, out);
    MK_INFO(NCCL_INIT | NCCL_ENV, "Plugin: manifest %s (MKCCL_MANIFEST)", tok);
  }
out:
  free(copy);
  return res;
}

/* All entries, a later one replacing an earlier one of the same name, then a
 * stable sort by priority, higher first. */
static ncclResult_t set_entries_merge(void) {
  int total = 0;
  for (int i = 0; i < set_state.nManifests; i++) total += set_state.manifests[i]->nEntries;
  const manifest_entry_t** list = calloc(total ? (size_t)total : 1, sizeof(*list));
  if (!list) return MK_FAIL(ncclSystemError, "manifests: out of memory");
  int n = 0;
  for (int i = 0; i < set_state.nManifests; i++) {
    for (int j = 0; j < set_state.manifests[i]->nEntries; j++) {
      const manifest_entry_t* e = &set_state.manifests[i]->entries[j];
      for (int k = 0; k < n; k++) {
        if (strcmp(list[k]->name, e->name) != 0) continue;
        MK_INFO(NCCL_INIT, "Plugin: manifest entry %s replaces plugin '%s' of %s", e->where, e->name, list[k]->where);
        memmove(&list[k], &list[k + 1], sizeof(*list) * (size_t)(n - k - 1));
        n--;
        break;
      }
      list[n++] = e;
    }
  }
  for (int i = 1; i < n; i++) {
    const manifest_entry_t* e = list[i];
    int k = i;
    for (; k > 0 && list[k - 1]->priority < e->priority; k--) list[k] = list[k - 1];
    list[k] = e;
  }
  set_state.entries = list;
  set_state.nEntries = n;
  return ncclSuccess;
}

const manifest_option_t* manifest_entry_options_apply(const manifest_entry_t* e) {
  const manifest_option_t* undeclared = NULL;
  for (int i = 0; i < e->nOptions; i++) {
    const manifest_option_t* o = &e->options[i];
    if (param_option_set(o->name, o->value, o->where) != 0 && !undeclared) undeclared = o;
  }
  return undeclared;
}

static void set_free_locked(void) {
  for (int i = 0; i < set_state.nManifests; i++) manifest_free(set_state.manifests[i]);
  free(set_state.manifests);
  free(set_state.entries);
  memset(&set_state, 0, sizeof(set_state));
}

static ncclResult_t set_load_locked(void) {
  ncclResult_t res = ncclSuccess;
  MK_CHECK_GOTO(set_default_load(), res, fail);
  MK_CHECK_GOTO(set_user_load(), res, fail);
  MK_CHECK_GOTO(set_entries_merge(), res, fail);
  for (int i = 0; i < set_state.nEntries; i++) manifest_entry_options_apply(set_state.entries[i]);
  return ncclSuccess;
fail:
  snprintf(set_error, sizeof(set_error), "%s", err_last_get());
  set_free_locked();
  return res;
}

ncclResult_t manifest_set_get(const manifest_set_t** out) {
  pthread_mutex_lock(&set_lock);
  int first = !set_loaded;
  if (first) {
    set_result = set_load_locked();
    set_loaded = 1;
  }
  ncclResult_t res = set_result;
  pthread_mutex_unlock(&set_lock);
  /* The first failure was logged where it was found; later asks repeat it. */
  if (res != ncclSuccess) return first ? res : MK_FAIL(res, "%s", set_error);
  *out = &set_state;
  return ncclSuccess;
}
