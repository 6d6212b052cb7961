/* Loading a net plugin, through the core's loader (kernel-core/plugin):
 * NCCL_NET_PLUGIN names the library, plugin_net_acquire selects, adapts
 * (v6..v11 to v12) and initializes it, and the loader's candidate record
 * says what became of it. With --abi N the library named is an ABI pin
 * (netcheck_abi_pin.c) that shows the loader only version N. This file is
 * the only place of the kit that knows how a plugin is loaded. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netcheck.h"
#include "plugin/loader.h"
#include "plugin/net.h"

int netcheck_verbose;

/* The pin for version abi, in the kit's own folder beside the tool's (never
 * among the plugins the library loads): lib/mkccl-netcheck in the build
 * tree, <libdir>/mkccl-netcheck under an install prefix. */
static int netcheck_pin_path(int abi, char* out, size_t cap) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return -1;
  exe[n] = 0;
  char* slash = strrchr(exe, '/');
  if (!slash) return -1;
  *slash = 0;
  const char* dirs[] = {"../lib/mkccl-netcheck", "../" NETCHECK_INSTALL_LIBDIR "/mkccl-netcheck"};
  for (int i = 0; i < 2; i++) {
    int n2 = snprintf(out, cap, "%.*s/%s/libmkccl-netcheck-abi%d.so", (int)(cap / 2), exe, dirs[i], abi);
    if (n2 > 0 && (size_t)n2 < cap && access(out, R_OK) == 0) return 0;
  }
  return -1;
}

/* Does the library export ncclNetPlugin_v<abi>? (A look before the loader
 * is asked, so a missing version reads as such, not as a loader failure.) */
static int netcheck_exports(const char* path, int abi) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return 0;
  char sym[32];
  snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", abi);
  int found = dlsym(lib, sym) != NULL;
  dlclose(lib);
  return found;
}

int netcheck_load(const char* path, int abi, netcheck_plugin_t* out, char* why, size_t whyLen) {
  memset(out, 0, sizeof(out[0]));
  char lib[PATH_MAX];
  snprintf(lib, sizeof(lib), "%s", path);
  if (abi) {
    if (!netcheck_exports(path, abi)) {
      snprintf(why, whyLen, "%s does not export ncclNetPlugin_v%d", path, abi);
      return -1;
    }
    if (netcheck_pin_path(abi, lib, sizeof(lib)) != 0) {
      snprintf(why, whyLen, "no ABI pin libmkccl-netcheck-abi%d.so in the kit's folder (../lib/mkccl-netcheck from mkccl-netcheck)", abi);
      return -1;
    }
    setenv("MKCCL_NETCHECK_TARGET", path, 1);
  }
  /* Before the core reads its parameters: only this library, and its WARNs shown. */
  setenv("NCCL_NET_PLUGIN", lib, 1);
  unsetenv("NCCL_NET");
  setenv("NCCL_DEBUG", netcheck_verbose ? "INFO" : "WARN", 0);
  if (netcheck_verbose) setenv("NCCL_DEBUG_SUBSYS", "INIT,NET", 0);

  plugin_net_t* net = NULL;
  ncclResult_t res = plugin_net_acquire(NULL, &net);
  plugin_candidate_t* cands = NULL;
  int n = 0;
  plugin_candidates_get(PLUGIN_KIND_NET, &cands, &n, NULL, 0);
  const plugin_candidate_t* mine = NULL; /* NCCL_NET_PLUGIN's candidate comes first */
  for (int i = 0; i < n && !mine; i++)
    if (strcmp(cands[i].request, lib) == 0) mine = &cands[i];
  int rc = -1;
  if (!mine) {
    snprintf(why, whyLen, "the loader did not consider %s (acquire returned %d)", lib, (int)res);
  } else if (mine->outcome == PLUGIN_NO_DEVICES) {
    snprintf(why, whyLen, "the loader moved on: %s", mine->reason);
    rc = 1;
  } else if (mine->outcome != PLUGIN_TAKEN || res != ncclSuccess || !net) {
    snprintf(why, whyLen, "the loader did not take it: %s: %s", plugin_outcome_text(mine->outcome), mine->reason);
  } else {
    rc = 0;
  }
  free(cands);
  if (rc != 0) {
    if (net) plugin_net_release(net); /* whatever it took instead */
    return rc;
  }
  out->handle = net;
  out->net = net->net;
  out->ctx = net->ctx;
  out->abi = net->abi;
  out->maxRequests = net->maxRequests;
  snprintf(out->name, sizeof(out->name), "%s", net->name ? net->name : "");
  return 0;
}

void netcheck_unload(netcheck_plugin_t* p) {
  if (p->handle) plugin_net_release(p->handle);
  memset(p, 0, sizeof(*p));
}

int netcheck_max_requests(const netcheck_plugin_t* p) {
  if (p->maxRequests > 0 && p->maxRequests <= NCCL_NET_MAX_REQUESTS) return p->maxRequests;
  return p->abi == 6 ? NCCL_NET_MAX_REQUESTS_V6 : NCCL_NET_MAX_REQUESTS;
}
