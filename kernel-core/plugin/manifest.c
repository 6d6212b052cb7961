/* Manifest parsing with libyaml's document API: load the node tree, then
 * walk it checking every key, type and value, with the node's position in
 * each message. See manifest.h for the format. */
#include "plugin/manifest.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/err.h"

typedef struct {
  const char* path;
  const char* dir;
  yaml_document_t* doc;
  char error[768]; /* the first problem found, "path:line:col: what" */
} manifest_ctx_t;

static const char* const manifest_top_keys = "mkccl-manifest, plugins";
static const char* const manifest_entry_keys = "name, kind, abi, library, priority, options";

/* Records the first problem; returns -1 so callers can `return manifest_bad(...)`. */
__attribute__((format(printf, 3, 4))) static int manifest_bad(manifest_ctx_t* c, const yaml_node_t* at,
                                                              const char* fmt, ...) {
  if (c->error[0]) return -1;
  int n = 0;
  if (at)
    n = snprintf(c->error, sizeof(c->error), "%s:%zu:%zu: ", c->path, at->start_mark.line + 1,
                 at->start_mark.column + 1);
  else
    n = snprintf(c->error, sizeof(c->error), "%s: ", c->path);
  if (n < 0 || (size_t)n >= sizeof(c->error)) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->error + n, sizeof(c->error) - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

static char* manifest_where(const manifest_ctx_t* c, const yaml_node_t* at) {
  char buf[PATH_MAX + 48];
  snprintf(buf, sizeof(buf), "%s:%zu:%zu", c->path, at->start_mark.line + 1, at->start_mark.column + 1);
  return strdup(buf);
}

/* "a mapping", "a list", "'text'": what a node is, for messages. */
static const char* manifest_node_what(const yaml_node_t* n, char* buf, size_t size) {
  if (n->type == YAML_MAPPING_NODE) return "a mapping";
  if (n->type == YAML_SEQUENCE_NODE) return "a list";
  snprintf(buf, size, "'%.*s'", (int)(n->data.scalar.length < 64 ? n->data.scalar.length : 64),
           (const char*)n->data.scalar.value);
  return buf;
}

static const char* manifest_scalar(const yaml_node_t* n) { return (const char*)n->data.scalar.value; }

static int manifest_string(manifest_ctx_t* c, const yaml_node_t* n, const char* key, const char** out) {
  char what[80];
  if (n->type != YAML_SCALAR_NODE)
    return manifest_bad(c, n, "'%s' must be a string, got %s", key, manifest_node_what(n, what, sizeof(what)));
  if (n->data.scalar.length == 0) return manifest_bad(c, n, "'%s' must not be empty", key);
  if (strlen(manifest_scalar(n)) != n->data.scalar.length)
    return manifest_bad(c, n, "'%s' contains a NUL character", key);
  *out = manifest_scalar(n);
  return 0;
}

/* Integers are plain (unquoted) decimal scalars that fit an int. */
static int manifest_int(manifest_ctx_t* c, const yaml_node_t* n, const char* key, int* out) {
  char what[80];
  if (n->type != YAML_SCALAR_NODE)
    return manifest_bad(c, n, "'%s' must be an integer, got %s", key, manifest_node_what(n, what, sizeof(what)));
  if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
    return manifest_bad(c, n, "'%s' must be an integer, got the quoted string %s", key,
                        manifest_node_what(n, what, sizeof(what)));
  const char* text = manifest_scalar(n);
  char* end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (!*text || *end || errno || v < INT_MIN || v > INT_MAX)
    return manifest_bad(c, n, "'%s' must be an integer, got %s", key, manifest_node_what(n, what, sizeof(what)));
  *out = (int)v;
  return 0;
}

/* A mapping's keys must be scalars and unique; returns the first duplicate. */
static int manifest_keys_check(manifest_ctx_t* c, const yaml_node_t* map, const char* what) {
  for (yaml_node_pair_t* p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    yaml_node_t* k = yaml_document_get_node(c->doc, p->key);
    char buf[80];
    if (k->type != YAML_SCALAR_NODE)
      return manifest_bad(c, k, "keys in %s must be strings, got %s", what, manifest_node_what(k, buf, sizeof(buf)));
    for (yaml_node_pair_t* q = map->data.mapping.pairs.start; q < p; q++) {
      yaml_node_t* prev = yaml_document_get_node(c->doc, q->key);
      if (prev->type == YAML_SCALAR_NODE && strcmp(manifest_scalar(prev), manifest_scalar(k)) == 0)
        return manifest_bad(c, k, "duplicate key '%s' in %s (first at %zu:%zu)", manifest_scalar(k), what,
                            prev->start_mark.line + 1, prev->start_mark.column + 1);
    }
  }
  return 0;
}

static int manifest_name_valid(const char* s) {
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
          *s == '_' || *s == '.'))
      return 0;
  return 1;
}

static int manifest_options_parse(manifest_ctx_t* c, const yaml_node_t* n, manifest_entry_t* e) {
  char what[80];
  if (n->type != YAML_MAPPING_NODE)
    return manifest_bad(c, n, "'options' must be a mapping of parameter name to value, got %s",
                        manifest_node_what(n, what, sizeof(what)));
  if (manifest_keys_check(c, n, "options")) return -1;
  int count = (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
  e->options = calloc(count ? (size_t)count : 1, sizeof(*e->options));
  if (!e->options) return manifest_bad(c, n, "out of memory");
  for (yaml_node_pair_t* p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
    yaml_node_t* k = yaml_document_get_node(c->doc, p->key);
    yaml_node_t* v = yaml_document_get_node(c->doc, p->value);
    if (v->type != YAML_SCALAR_NODE)
      return manifest_bad(c, v, "option '%s' must be a single value, got %s", manifest_scalar(k),
                          manifest_node_what(v, what, sizeof(what)));
    manifest_option_t* o = &e->options[e->nOptions];
    o->name = strdup(manifest_scalar(k));
    o->value = strdup(manifest_scalar(v));
    o->where = manifest_where(c, k);
    if (!o->name || !o->value || !o->where) {
      free(o->name), free(o->value), free(o->where);
      return manifest_bad(c, n, "out of memory");
    }
    e->nOptions++;
  }
  return 0;
}

static char* manifest_path_join(const char* dir, const char* library) {
  if (library[0] == '/' || !dir || !*dir) return strdup(library);
  size_t n = strlen(dir) + strlen(library) + 2;
  char* p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, library);
  return p;
}

/* One entry of `plugins:`; `e` is zeroed and owned by the caller. */
static int manifest_entry_parse(manifest_ctx_t* c, const yaml_node_t* n, manifest_entry_t* e) {
  char what[80];
  if (n->type != YAML_MAPPING_NODE)
    return manifest_bad(c, n, "a plugin entry must be a mapping (%s), got %s", manifest_entry_keys,
                        manifest_node_what(n, what, sizeof(what)));
  if (manifest_keys_check(c, n, "plugin entry")) return -1;
  const yaml_node_t *name = NULL, *kind = NULL, *abi = NULL, *library = NULL;
  for (yaml_node_pair_t* p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
    yaml_node_t* k = yaml_document_get_node(c->doc, p->key);
    yaml_node_t* v = yaml_document_get_node(c->doc, p->value);
    const char* key = manifest_scalar(k);
    if (strcmp(key, "name") == 0) name = v;
    else if (strcmp(key, "kind") == 0) kind = v;
    else if (strcmp(key, "abi") == 0) abi = v;
    else if (strcmp(key, "library") == 0) library = v;
    else if (strcmp(key, "priority") == 0) {
      if (manifest_int(c, v, "priority", &e->priority)) return -1;
    } else if (strcmp(key, "options") == 0) {
      if (manifest_options_parse(c, v, e)) return -1;
    } else {
      return manifest_bad(c, k, "unknown key '%s' in plugin entry (expected %s)", key, manifest_entry_keys);
    }
  }
  const char* missing = !name ? "name" : !kind ? "kind" : !abi ? "abi" : !library ? "library" : NULL;
  if (missing)
    return manifest_bad(c, n, "plugin entry is missing required key '%s' (expected %s)", missing,
                        manifest_entry_keys);
  const char *nameText, *kindText, *libText;
  if (manifest_string(c, name, "name", &nameText)) return -1;
  if (!manifest_name_valid(nameText))
    return manifest_bad(c, name, "'name' may hold only letters, digits, '-', '_' and '.', got '%s'", nameText);
  if (manifest_string(c, kind, "kind", &kindText)) return -1;
  if (plugin_kind_parse(kindText, &e->kind))
    return manifest_bad(c, kind, "unknown kind '%s' (expected %s)", kindText, plugin_kind_names());
  if (manifest_int(c, abi, "abi", &e->abi)) return -1;
  const plugin_kind_desc_t* d = plugin_kind_desc(e->kind);
  if (e->abi < plugin_kind_min_abi(d) || e->abi > plugin_kind_max_abi(d))
    return manifest_bad(c, abi, "abi %d is not one this mkccl loads for kind %s (%d..%d)", e->abi, d->name,
                        plugin_kind_min_abi(d), plugin_kind_max_abi(d));
  if (manifest_string(c, library, "library", &libText)) return -1;
  e->name = strdup(nameText);
  e->library = strdup(libText);
  e->path = manifest_path_join(c->dir, libText);
  e->where = manifest_where(c, n);
  if (!e->name || !e->library || !e->path || !e->where) return manifest_bad(c, n, "out of memory");
  return 0;
}

static int manifest_plugins_parse(manifest_ctx_t* c, const yaml_node_t* list, manifest_t* m) {
  char what[80];
  if (list->type != YAML_SEQUENCE_NODE)
    return manifest_bad(c, list, "'plugins' must be a list of plugin entries, got %s",
                        manifest_node_what(list, what, sizeof(what)));
  int count = (int)(list->data.sequence.items.top - list->data.sequence.items.start);
  m->entries = calloc(count ? (size_t)count : 1, sizeof(*m->entries));
  if (!m->entries) return manifest_bad(c, list, "out of memory");
  for (yaml_node_item_t* it = list->data.sequence.items.start; it < list->data.sequence.items.top; it++) {
    yaml_node_t* n = yaml_document_get_node(c->doc, *it);
    manifest_entry_t* e = &m->entries[m->nEntries++];
    if (manifest_entry_parse(c, n, e)) return -1;
    for (int i = 0; i < m->nEntries - 1; i++) {
      if (strcmp(m->entries[i].name, e->name) == 0) {
        yaml_node_t* nameNode = NULL;
        for (yaml_node_pair_t* p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++)
          if (strcmp(manifest_scalar(yaml_document_get_node(c->doc, p->key)), "name") == 0)
            nameNode = yaml_document_get_node(c->doc, p->value);
        return manifest_bad(c, nameNode ? nameNode : n, "duplicate plugin name '%s' (first at %s)", e->name,
                            m->entries[i].where);
      }
    }
  }
  return 0;
}

static int manifest_root_parse(manifest_ctx_t* c, const yaml_node_t* root, manifest_t* m) {
  char what[80];
  if (!root)
    return manifest_bad(c, NULL, "empty manifest (expected a mapping with 'mkccl-manifest: %d' and 'plugins')",
                        MANIFEST_FORMAT_VERSION);
  if (root->type != YAML_MAPPING_NODE)
    return manifest_bad(c, root, "a manifest is a mapping (%s), got %s", manifest_top_keys,
                        manifest_node_what(root, what, sizeof(what)));
  if (manifest_keys_check(c, root, "the manifest")) return -1;
  const yaml_node_t *version = NULL, *plugins = NULL;
  for (yaml_node_pair_t* p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
    yaml_node_t* k = yaml_document_get_node(c->doc, p->key);
    yaml_node_t* v = yaml_document_get_node(c->doc, p->value);
    if (strcmp(manifest_scalar(k), "mkccl-manifest") == 0) version = v;
    else if (strcmp(manifest_scalar(k), "plugins") == 0) plugins = v;
    else
      return manifest_bad(c, k, "unknown key '%s' at the top level (expected %s)", manifest_scalar(k),
                          manifest_top_keys);
  }
  if (!version)
    return manifest_bad(c, root, "missing key 'mkccl-manifest' (the format version: 'mkccl-manifest: %d')",
                        MANIFEST_FORMAT_VERSION);
  int v = 0;
  if (manifest_int(c, version, "mkccl-manifest", &v)) return -1;
  if (v != MANIFEST_FORMAT_VERSION)
    return manifest_bad(c, version, "manifest format %d is not supported (this mkccl reads %d)", v,
                        MANIFEST_FORMAT_VERSION);
  if (!plugins) return manifest_bad(c, root, "missing key 'plugins' (a list of plugin entries, may be [])");
  return manifest_plugins_parse(c, plugins, m);
}

static void manifest_syntax_error(manifest_ctx_t* c, const yaml_parser_t* p) {
  const char* problem = p->problem ? p->problem : "unknown error";
  if (p->error == YAML_READER_ERROR) {
    manifest_bad(c, NULL, "invalid text at byte %zu: %s", p->problem_offset, problem);
  } else if (p->context) {
    snprintf(c->error, sizeof(c->error), "%s:%zu:%zu: YAML syntax error: %s (%s at %zu:%zu)", c->path,
             p->problem_mark.line + 1, p->problem_mark.column + 1, problem, p->context, p->context_mark.line + 1,
             p->context_mark.column + 1);
  } else {
    snprintf(c->error, sizeof(c->error), "%s:%zu:%zu: YAML syntax error: %s", c->path, p->problem_mark.line + 1,
             p->problem_mark.column + 1, problem);
  }
}

void manifest_free(manifest_t* m) {
  if (!m) return;
  for (int i = 0; i < m->nEntries; i++) {
    manifest_entry_t* e = &m->entries[i];
    for (int j = 0; j < e->nOptions; j++) free(e->options[j].name), free(e->options[j].value), free(e->options[j].where);
    free(e->options);
    free(e->name), free(e->library), free(e->path), free(e->where);
  }
  free(m->entries);
  free(m->path);
  free(m->dir);
  free(m);
}

/* Loads the one document of the text; a second document is an error. */
static int manifest_document_load(manifest_ctx_t* c, const char* text, size_t len, yaml_document_t* doc) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return manifest_bad(c, NULL, "out of memory");
  yaml_parser_set_input_string(&parser, (const unsigned char*)text, len);
  int rc = 0;
  if (!yaml_parser_load(&parser, doc)) {
    manifest_syntax_error(c, &parser);
    rc = -1;
  } else {
    yaml_document_t next;
    if (!yaml_parser_load(&parser, &next)) {
      manifest_syntax_error(c, &parser);
      rc = -1;
    } else {
      yaml_node_t* extra = yaml_document_get_root_node(&next);
      if (extra) rc = manifest_bad(c, extra, "a manifest holds one YAML document; a second one starts here");
      yaml_document_delete(&next);
    }
    if (rc) yaml_document_delete(doc);
  }
  yaml_parser_delete(&parser);
  return rc;
}

ncclResult_t manifest_text_parse(const char* text, size_t len, const char* path, const char* dir,
                                 manifest_t** out) {
  manifest_ctx_t c = {path, dir, NULL, ""};
  manifest_t* m = calloc(1, sizeof(*m));
  if (!m) return MK_FAIL(ncclSystemError, "%s: out of memory", path);
  m->path = strdup(path);
  m->dir = strdup(dir ? dir : "");
  if (!m->path || !m->dir) {
    manifest_free(m);
    return MK_FAIL(ncclSystemError, "%s: out of memory", path);
  }
  yaml_document_t doc;
  if (manifest_document_load(&c, text, len, &doc) == 0) {
    c.doc = &doc;
    manifest_root_parse(&c, yaml_document_get_root_node(&doc), m);
    yaml_document_delete(&doc);
  }
  if (c.error[0]) {
    manifest_free(m);
    return MK_FAIL(ncclInvalidUsage, "%s", c.error);
  }
  *out = m;
  return ncclSuccess;
}

ncclResult_t manifest_file_parse(const char* path, manifest_t** out) {
  FILE* f = fopen(path, "rb");
  if (!f) return MK_FAIL(ncclInvalidUsage, "%s: cannot read manifest: %s", path, strerror(errno));
  char* text = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 4096 > cap) {
      cap = cap ? cap * 2 : 8192;
      char* t = realloc(text, cap);
      if (!t) {
        free(text);
        fclose(f);
        return MK_FAIL(ncclSystemError, "%s: out of memory", path);
      }
      text = t;
    }
    size_t n = fread(text + len, 1, cap - len, f);
    len += n;
    if (n == 0) break;
  }
  int readError = ferror(f);
  fclose(f);
  if (readError) {
    free(text);
    return MK_FAIL(ncclInvalidUsage, "%s: cannot read manifest: read error", path);
  }
  char dir[PATH_MAX];
  snprintf(dir, sizeof(dir), "%s", path);
  char* slash = strrchr(dir, '/');
  if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
  else snprintf(dir, sizeof(dir), ".");
  ncclResult_t res = manifest_text_parse(text, len, path, dir, out);
  free(text);
  return res;
}
