/* mkccl-info: what this mkccl is and what it would load, in the spirit of
 * fi_info and ucx_info. The report itself is the library's
 * (mkcclInfoReport), so it describes the library the tool runs against. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkccl_info.h"
#include "nccl.h"

static void usage(FILE* out) {
  fprintf(out,
          "Usage: mkccl-info [--plugins] [--params[=user|expert|all]] [--manifests] [--topology] [--version]\n"
          "                  [--help]\n"
          "       mkccl-info --status[=PID]\n"
          "Prints mkccl's version, the plugin manifests read, every plugin candidate per kind\n"
          "with why it was or was not taken, the topology, and the parameters with their value\n"
          "and source. With no option, all of it. Options pick sections.\n"
          "Parameters have a level: user (NCCL's documented knobs and what a user sets), expert\n"
          "(performance tuning), developer (test and diagnosis switches). --params lists user\n"
          "level, --params=expert adds expert, --params=all (or =developer) lists every one;\n"
          "a parameter set in the environment or a manifest is always listed. A plugin's\n"
          "parameters are user level when named NCCL_*, else expert.\n"
          "Environment: MKCCL_MANIFEST, NCCL_NET_PLUGIN, NCCL_NET, NCCL_TUNER_PLUGIN,\n"
          "NCCL_PROFILER_PLUGIN, NCCL_DEBUG=INFO for the loader's own lines.\n"
          "--status: for every communicator of this host's mkccl processes (or of PID), which\n"
          "collective each rank is in, ranks on other hosts included, and which ranks the others\n"
          "wait for.\n"
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
    if (strcmp(argv[i], "--status") == 0 || strncmp(argv[i], "--status=", 9) == 0) {
      int pid = argv[i][8] == '=' ? atoi(argv[i] + 9) : 0;
      ncclResult_t res = mkcclInfoStatus(stdout, pid);
      fflush(stdout);
      if (res != ncclSuccess) fprintf(stderr, "mkccl-info: %s\n", ncclGetLastError(NULL));
      return res == ncclSuccess ? 0 : 1;
    }
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
    unsigned found = 0;
    if (strncmp(argv[i], "--params=", 9) == 0) {
      const char* level = argv[i] + 9;
      if (strcmp(level, "user") == 0) found = MKCCL_INFO_PARAMS;
      else if (strcmp(level, "expert") == 0) found = MKCCL_INFO_PARAMS | MKCCL_INFO_PARAMS_EXPERT;
      else if (strcmp(level, "all") == 0 || strcmp(level, "developer") == 0)
        found = MKCCL_INFO_PARAMS | MKCCL_INFO_PARAMS_EXPERT | MKCCL_INFO_PARAMS_DEVELOPER;
    }
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
