/* mkccl-info: what this mkccl is and what it would load, in the spirit of
 * fi_info and ucx_info. The report itself is the library's
 * (mkcclInfoReport), so it describes the library the tool runs against. */
#include <stdio.h>
#include <string.h>

#include "mkccl_info.h"
#include "nccl.h"

static void usage(FILE* out) {
  fprintf(out,
          "Usage: mkccl-info [--plugins] [--params] [--manifests] [--topology] [--version] [--help]\n"
          "Prints mkccl's version, the plugin manifests read, every plugin candidate per kind\n"
          "with why it was or was not taken, the topology, and every parameter with its value\n"
          "and source. With no option, all of it. Options pick sections.\n"
          "Environment: MKCCL_MANIFEST, NCCL_NET_PLUGIN, NCCL_NET, NCCL_TUNER_PLUGIN,\n"
          "NCCL_PROFILER_PLUGIN, NCCL_DEBUG=INFO for the loader's own lines.\n"
          "Exit status: 0, or 1 with the reason on stderr (a bad manifest: file:line:col).\n");
}

int main(int argc, char** argv) {
  static const struct {
    const char* option;
    unsigned section;
  } options[] = {{"--plugins", MKCCL_INFO_PLUGINS},   {"--params", MKCCL_INFO_PARAMS},
                 {"--manifests", MKCCL_INFO_MANIFESTS}, {"--topology", MKCCL_INFO_TOPOLOGY},
                 {"--version", MKCCL_INFO_VERSION}};
  unsigned sections = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
    unsigned found = 0;
    for (size_t j = 0; j < sizeof(options) / sizeof(options[0]); j++)
      if (strcmp(argv[i], options[j].option) == 0) found = options[j].section;
    if (!found) {
      fprintf(stderr, "mkccl-info: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
    sections |= found;
  }
  if (!sections) sections = MKCCL_INFO_ALL;
  ncclResult_t res = mkcclInfoReport(stdout, sections);
  fflush(stdout);
  if (res != ncclSuccess) {
    fprintf(stderr, "mkccl-info: %s\n", ncclGetLastError(NULL));
    return 1;
  }
  return 0;
}
