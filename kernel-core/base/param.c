#include "base/param.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"


typedef struct {
  param_decl_t decl;
  char* option;      /* manifest value, owned */
  char* optionWhere; /* manifest location, owned */
} param_entry_t;

static pthread_mutex_t param_lock = PTHREAD_MUTEX_INITIALIZER;
static param_entry_t param_entries[PARAM_TABLE_MAX];
static int param_count;
static int param_core_loaded;

void param_tables_core(void (*add)(const param_decl_t*)); /* param_tables.c */

static void param_add_locked(const param_decl_t* d) {
  for (int i = 0; i < param_count; i++)
    if (strcmp(param_entries[i].decl.name, d->name) == 0) return;
  if (param_count == PARAM_TABLE_MAX) return;
  param_entries[param_count].decl = *d;
  __atomic_store_n(&param_count, param_count + 1, __ATOMIC_RELEASE);
}

static void param_core_load(void) {
  if (__atomic_load_n(&param_core_loaded, __ATOMIC_ACQUIRE)) return;
  pthread_mutex_lock(&param_lock);
  if (!param_core_loaded) {
    param_tables_core(param_add_locked);
    /* The typed accessors index the table: a name declared twice would shift it. */
    if (param_count != PARAM_CORE_COUNT) {
      fprintf(stderr, "mkccl: %d core parameters in the table, %d declared (a name declared twice)\n", param_count,
              (int)PARAM_CORE_COUNT);
      abort();
    }
    __atomic_store_n(&param_core_loaded, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&param_lock);
}

void param_register(const mkcclParamDecl_v1* decls, int n, const char* owner) {
  param_core_load();
  pthread_mutex_lock(&param_lock);
  for (int i = 0; i < n; i++) {
    param_level_t level = strncmp(decls[i].name, "NCCL_", 5) == 0 ? PARAM_LEVEL_USER : PARAM_LEVEL_EXPERT;
    param_decl_t d = {decls[i].name, decls[i].type, decls[i].defaultValue, decls[i].help, owner, level};
    param_add_locked(&d);
  }
  pthread_mutex_unlock(&param_lock);
}

static param_entry_t* param_find(const char* name) {
  param_core_load();
  int n = __atomic_load_n(&param_count, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n; i++)
    if (strcmp(param_entries[i].decl.name, name) == 0) return &param_entries[i];
  return NULL;
}

const param_decl_t* param_decl_find(const char* name) {
  const param_entry_t* e = name ? param_find(name) : NULL;
  return e ? &e->decl : NULL;
}

/* The raw text of a value and where it came from. */
static const char* param_text(param_entry_t* e, param_source_t* source, const char** where) {
  const char* env = getenv(e->decl.name);
  if (env) {
    *source = PARAM_FROM_ENV;
    *where = "environment";
    return env;
  }
  pthread_mutex_lock(&param_lock);
  const char* opt = e->option;
  const char* optWhere = e->optionWhere;
  pthread_mutex_unlock(&param_lock);
  if (opt) {
    *source = PARAM_FROM_MANIFEST;
    *where = optWhere;
    return opt;
  }
  *source = PARAM_FROM_DEFAULT;
  *where = "default";
  return e->decl.defaultValue;
}

static int param_parse_int(const char* text, int64_t* value) {
  if (!text || !*text) return -1;
  char* end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 0);
  if (errno || !end || *end) return -1;
  *value = v;
  return 0;
}

static void param_entry_int(param_entry_t* e, int64_t* value) {
  const char* name = e->decl.name;
  param_source_t source;
  const char* where;
  const char* text = param_text(e, &source, &where);
  if (param_parse_int(text, value) == 0) return;
  if (source != PARAM_FROM_DEFAULT && text && *text)
    MK_WARN("Invalid value '%s' for %s (from %s), using default %s", text, name, where,
            e->decl.defaultValue ? e->decl.defaultValue : "0");
  if (param_parse_int(e->decl.defaultValue, value) != 0) *value = 0;
}

int param_int_lookup(const char* name, int64_t* value) {
  param_entry_t* e = param_find(name);
  if (!e) return -1;
  param_entry_int(e, value);
  return 0;
}

static param_entry_t* param_core_entry(param_id_t id) {
  param_core_load();
  return &param_entries[id];
}

int64_t param_core_int(param_id_t id) {
  int64_t v = 0;
  param_entry_int(param_core_entry(id), &v);
  return v;
}

const char* param_core_str(param_id_t id) {
  param_source_t source;
  const char* where;
  const char* v = param_text(param_core_entry(id), &source, &where);
  return v ? v : "";
}

param_source_t param_core_source(param_id_t id, const char** where) {
  param_source_t source;
  const char* w;
  param_text(param_core_entry(id), &source, &w);
  if (where) *where = w;
  return source;
}

int param_str_lookup(const char* name, const char** value) {
  param_entry_t* e = param_find(name);
  if (!e) return -1;
  param_source_t source;
  const char* where;
  *value = param_text(e, &source, &where);
  return 0;
}

int64_t param_int(const char* name) {
  int64_t v = 0;
  if (param_int_lookup(name, &v) != 0) MK_WARN("Internal: parameter %s is not declared", name);
  return v;
}

const char* param_str(const char* name) {
  const char* v = NULL;
  param_str_lookup(name, &v);
  return v;
}

int param_option_set(const char* name, const char* value, const char* where) {
  param_entry_t* e = param_find(name);
  if (!e) return -1;
  char* v = strdup(value);
  char* w = strdup(where);
  if (!v || !w) {
    free(v);
    free(w);
    return -1;
  }
  pthread_mutex_lock(&param_lock);
  free(e->option);
  free(e->optionWhere);
  e->option = v;
  e->optionWhere = w;
  pthread_mutex_unlock(&param_lock);
  return 0;
}

param_source_t param_source(const char* name, const char** where) {
  param_entry_t* e = param_find(name);
  param_source_t source = PARAM_FROM_DEFAULT;
  const char* w = "default";
  if (e) param_text(e, &source, &w);
  if (where) *where = w;
  return source;
}

void param_foreach(param_visit_fn visit, void* arg) {
  param_core_load();
  int n = __atomic_load_n(&param_count, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n; i++) {
    param_source_t source;
    const char* where;
    const char* text = param_text(&param_entries[i], &source, &where);
    visit(&param_entries[i].decl, text, source, where, arg);
  }
}

const char* param_level_name(param_level_t level) {
  return level == PARAM_LEVEL_USER ? "user" : level == PARAM_LEVEL_EXPERT ? "expert" : "developer";
}
