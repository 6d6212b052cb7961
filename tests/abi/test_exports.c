/* What libnccl.so.2 exports, read with `nm -D` as a linker sees it:
 * - every function mkccl's nccl.h declares, as nccl<Name> (weak, so a
 *   profiling layer may define it) and pnccl<Name> (the function), one
 *   address;
 * - where a reference NCCL library is given (NVIDIA's libnccl.so.2), every
 *   nccl and pnccl symbol it exports, of the same kind (function, weak or not);
 * - nothing else but mkcclInfoReport and mkcclInfoStatus (and the toolchain's own _names).
 * Usage: test_abi_exports LIB NCCL_H [REFERENCE_LIB]. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAX_SYMS 1024

typedef struct {
  char name[96];
  char kind; /* nm's letter: T a function, W a weak one */
} sym_t;

typedef struct {
  sym_t s[MAX_SYMS];
  int n;
} syms_t;

/* Defined dynamic symbols of a library. */
static void syms_read(const char* lib, syms_t* out) {
  char cmd[4200];
  snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s'", lib);
  FILE* p = popen(cmd, "r");
  CHECK_MSG(p != NULL, "cannot run nm on %s", lib);
  char line[512];
  out->n = 0;
  while (fgets(line, sizeof(line), p)) {
    char addr[64], kind, name[400];
    if (sscanf(line, "%63s %c %399s", addr, &kind, name) != 3) continue;
    char* at = strchr(name, '@'); /* a symbol version, where a library has them */
    if (at) *at = '\0';
    CHECK(out->n < MAX_SYMS && strlen(name) < sizeof(out->s[0].name));
    snprintf(out->s[out->n].name, sizeof(out->s[0].name), "%s", name);
    out->s[out->n++].kind = kind;
  }
  CHECK_EQ_INT(pclose(p), 0);
  CHECK_MSG(out->n > 0, "nm found no symbols in %s", lib);
}

static const sym_t* syms_find(const syms_t* t, const char* name) {
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->s[i].name, name) == 0) return &t->s[i];
  return NULL;
}

static int is_api_name(const char* n) { return strncmp(n, "nccl", 4) == 0 || strncmp(n, "pnccl", 5) == 0; }

/* The names of MKCCL_DECLARE(ret, Name, ...) in nccl.h. */
static int header_names(const char* path, char names[][64], int max) {
  FILE* f = fopen(path, "r");
  CHECK_MSG(f != NULL, "cannot open %s", path);
  int n = 0;
  char line[512];
  while (fgets(line, sizeof(line), f)) {
    const char* d = strstr(line, "MKCCL_DECLARE(");
    if (!d || strstr(line, "#define")) continue;
    const char* comma = strchr(d, ',');
    CHECK(comma != NULL);
    char name[64];
    if (sscanf(comma + 1, " %63[A-Za-z0-9_]", name) != 1) continue;
    CHECK(n < max);
    snprintf(names[n++], 64, "%s", name);
  }
  fclose(f);
  return n;
}

int main(int argc, char** argv) {
  CHECK(argc == 3 || argc == 4);
  static syms_t mk, ref;
  syms_read(argv[1], &mk);
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(lib != NULL, "%s", dlerror());
  int bad = 0;

  static char names[256][64];
  int nNames = header_names(argv[2], names, 256);
  CHECK_MSG(nNames >= 41, "only %d functions found in %s", nNames, argv[2]);
  for (int i = 0; i < nNames; i++) {
    char weak[80], strong[80];
    snprintf(weak, sizeof(weak), "nccl%.63s", names[i]);
    snprintf(strong, sizeof(strong), "pnccl%.63s", names[i]);
    const sym_t* w = syms_find(&mk, weak);
    const sym_t* s = syms_find(&mk, strong);
    if (!w || w->kind != 'W' || !s || s->kind != 'T') {
      fprintf(stderr, "%s: %s (%c) and %s (%c) should be a weak alias and its function\n", argv[1], weak,
              w ? w->kind : '-', strong, s ? s->kind : '-');
      bad++;
    } else if (dlsym(lib, weak) != dlsym(lib, strong)) {
      fprintf(stderr, "%s: %s and %s are different functions\n", argv[1], weak, strong);
      bad++;
    }
  }

  if (argc == 4) {
    syms_read(argv[3], &ref);
    int nRef = 0, badBefore = bad;
    for (int i = 0; i < ref.n; i++) {
      if (!is_api_name(ref.s[i].name)) continue;
      nRef++;
      const sym_t* m = syms_find(&mk, ref.s[i].name);
      if (!m || m->kind != ref.s[i].kind) {
        fprintf(stderr, "%s exports %s (%c); %s: %c\n", argv[3], ref.s[i].name, ref.s[i].kind, argv[1],
                m ? m->kind : '-');
        bad++;
      }
    }
    CHECK_MSG(nRef >= 82, "only %d nccl symbols in %s", nRef, argv[3]);
    if (bad == badBefore) printf("all %d nccl/pnccl symbols of %s are exported alike\n", nRef, argv[3]);
  } else {
    printf("no reference library: checked the %d functions of %s\n", nNames, argv[2]);
  }

  for (int i = 0; i < mk.n; i++)
    /* Names with a leading underscore are the toolchain's (a sanitizer's, say). */
    if (!is_api_name(mk.s[i].name) && strcmp(mk.s[i].name, "mkcclInfoReport") != 0 &&
        strcmp(mk.s[i].name, "mkcclInfoStatus") != 0 && mk.s[i].kind != 'A' &&
        mk.s[i].name[0] != '_') {
      fprintf(stderr, "%s exports %s, which is no API\n", argv[1], mk.s[i].name);
      bad++;
    }
  dlclose(lib);
  CHECK_EQ_INT(bad, 0);
  return 0;
}
