/* NCCL_TOPO_DUMP_FILE at communicator init: the rank NCCL_TOPO_DUMP_FILE_RANK
 * names writes NCCL's topology XML of the machine, with the devices of the
 * communicator's net plugin as its NICs; a rank number no rank has writes
 * nothing. 3 host ranks as processes. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "ranks.h"
#include "ranks_id.h"

#define NRANKS 3

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  int32_t in = rank + 1, out = 0;
  CHECK_NCCL(ncclAllReduce(&in, &out, 1, ncclInt32, ncclSum, comm, NULL));
  CHECK_EQ_INT(out, n * (n + 1) / 2);
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

static char* slurp(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) return NULL;
  static char text[1 << 20];
  size_t len = fread(text, 1, sizeof(text) - 1, f);
  text[len] = '\0';
  fclose(f);
  return text;
}

int main(void) {
  char dir[] = "/tmp/mkccl-topo-dump-XXXXXX";
  CHECK(mkdtemp(dir));
  char file[128];
  snprintf(file, sizeof(file), "%s/topo.xml", dir);
  setenv("NCCL_TOPO_DUMP_FILE", file, 1);

  setenv("NCCL_TOPO_DUMP_FILE_RANK", "2", 1);
  CHECK_EQ_INT(ranks_run(NRANKS, rank_main, NULL, 60), 0);
  const char* xml = slurp(file);
  CHECK_MSG(xml, "rank 2 wrote no %s", file);
  CHECK_MSG(strstr(xml, "<system version=\"1\">") && strstr(xml, "</system>"), "not a topology: %.200s", xml);
  CHECK_MSG(strstr(xml, "<cpu numaid="), "no CPU in the dump");
  /* net-socket's devices (at least one interface) are the NICs. */
  CHECK_MSG(strstr(xml, "<net name=\"") && strstr(xml, " dev=\"0\""), "no NIC of the net plugin in the dump");
  CHECK_EQ_INT(unlink(file), 0);

  setenv("NCCL_TOPO_DUMP_FILE_RANK", "7", 1);
  CHECK_EQ_INT(ranks_run(NRANKS, rank_main, NULL, 60), 0);
  struct stat st;
  CHECK_MSG(stat(file, &st) != 0, "%s written although no rank is 7", file);
  CHECK_EQ_INT(rmdir(dir), 0);
  printf("NCCL_TOPO_DUMP_FILE: written by the rank named, with the net plugin's NICs; by none for a rank not there\n");
  return 0;
}
