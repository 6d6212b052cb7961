/* NCCL_TOPO_DUMP_FILE: NCCL's topology XML, well-formed, with the CPUs,
 * switches, GPUs (and NVLinks), NICs; link speeds that give back the
 * bandwidths; and topo_print's picture. */
#include <ctype.h>
#include <stdlib.h>
#include <unistd.h>

#include "topo_fixture.h"

static char* slurp(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

static int count_of(const char* text, const char* needle) {
  int n = 0;
  for (const char* p = text; (p = strstr(p, needle)); p++) n++;
  return n;
}

/* Well-formed: matching tags, quoted attributes, no stray text. 0 when good. */
static int xml_check(const char* s) {
  char stack[32][32];
  int depth = 0, elements = 0;
  while (*s) {
    if (isspace((unsigned char)*s)) {
      s++;
      continue;
    }
    if (*s != '<') return -1; /* NCCL's format has no text content */
    s++;
    int closing = *s == '/';
    if (closing) s++;
    char name[32];
    int n = 0;
    while (isalnum((unsigned char)*s) || *s == '_') {
      if (n < 31) name[n++] = *s;
      s++;
    }
    name[n] = '\0';
    if (n == 0) return -2;
    if (closing) {
      if (depth == 0 || strcmp(stack[--depth], name) != 0) return -3;
      if (*s++ != '>') return -4;
      continue;
    }
    for (;;) {
      while (isspace((unsigned char)*s)) s++;
      if (*s == '>' || (s[0] == '/' && s[1] == '>')) break;
      int k = 0;
      while (isalnum((unsigned char)*s) || *s == '_') s++, k++;
      if (k == 0 || *s++ != '=' || *s++ != '"') return -5;
      while (*s && *s != '"' && *s != '<') s++;
      if (*s++ != '"') return -6;
    }
    elements++;
    if (*s == '/') {
      s += 2;
    } else {
      s++;
      if (depth == 32) return -7;
      strcpy(stack[depth++], name);
    }
  }
  return depth == 0 && elements > 0 ? 0 : -8;
}

static void check_dump_file(const char* path) {
  unlink(path);
  setenv("NCCL_TOPO_DUMP_FILE", path, 1);
  static const topo_nvlink_input_t chain[2] = {{0, 1, 2, 0.0f}, {1, 2, 1, 0.0f}};
  topo_nic_input_t nics[4] = {two_socket_nics[0], two_socket_nics[1], two_socket_nics[0], {"eth0", NULL, 25000, 0}};
  nics[2].name = "mlx5_0<port2>"; /* a second port of NIC0's PCI device, with a name to escape */
  topo_inputs_t in = two_socket_inputs();
  in.nics = nics;
  in.nNics = 4;
  in.nvlinks = chain;
  in.nNvlinks = 2;
  topo_system_t* sys = NULL;
  CHECK_NCCL(topo_system_build(&in, &sys));
  const char* xml = slurp(path);
  CHECK_MSG(xml != NULL, "%s not written", path);
  CHECK_MSG(xml_check(xml) == 0, "not well-formed (%d):\n%s", xml_check(xml), xml);
  CHECK(strncmp(xml, "<system version=\"1\">", 20) == 0);
  CHECK_EQ_INT(count_of(xml, "<cpu "), 2);
  CHECK_STR_CONTAINS(xml, "<cpu numaid=\"1\" affinity=\"000000f0\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"85\">");
  CHECK_EQ_INT(count_of(xml, "class=\"0x060400\""), 3);
  CHECK_EQ_INT(count_of(xml, "<gpu "), 4);
  for (int g = 0; g < 4; g++) {
    char want[128];
    snprintf(want, sizeof(want), "<pci busid=\"%s\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x2330\"",
             two_socket_gpus[g].busId);
    CHECK_STR_CONTAINS(xml, want);
    snprintf(want, sizeof(want), "<gpu dev=\"%d\" sm=\"90\" rank=\"%d\" gdr=\"1\">", g, g);
    CHECK_STR_CONTAINS(xml, want);
  }
  CHECK_STR_CONTAINS(xml, "<nvlink target=\"0000:04:00.0\" count=\"2\" tclass=\"0x030200\"/>");
  CHECK_EQ_INT(count_of(xml, "<nvlink "), 4);
  /* Gen4 x16 GPUs, Gen3 x16 NICs. */
  CHECK_STR_CONTAINS(xml, "subsystem_device=\"0x16c1\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">");
  CHECK_STR_CONTAINS(xml, "subsystem_device=\"0x0007\" link_speed=\"8.0 GT/s PCIe\" link_width=\"16\">");
  /* Both ports of NIC0 under one <pci><nic>; the PCI-less NIC straight under its CPU. */
  CHECK_EQ_INT(count_of(xml, "<pci busid=\"0000:05:00.0\""), 1);
  CHECK_EQ_INT(count_of(xml, "<nic>"), 3);
  CHECK_STR_CONTAINS(xml, "<net name=\"mlx5_0\" dev=\"0\" speed=\"100000\" gdr=\"1\"/>");
  CHECK_STR_CONTAINS(xml, "<net name=\"mlx5_0&lt;port2&gt;\" dev=\"2\" speed=\"100000\" gdr=\"1\"/>");
  CHECK_STR_CONTAINS(xml, "<net name=\"mlx5_1\" dev=\"1\" speed=\"50000\" gdr=\"1\"/>");
  CHECK_STR_CONTAINS(xml, "</pci>\n    <nic>\n      <net name=\"eth0\" dev=\"3\" speed=\"25000\" gdr=\"0\"/>");

  /* Two ports of one NIC tie for GPU0: channels alternate between them. */
  int best[4], n = 0;
  CHECK_NCCL(topo_gpu_best_nics(sys, 0, best, 4, &n));
  CHECK_EQ_INT(n, 2);
  CHECK(best[0] == 0 && best[1] == 2);
  CHECK_EQ_INT(topo_gpu_nic_for_channel(sys, 0, 0), 0);
  CHECK_EQ_INT(topo_gpu_nic_for_channel(sys, 0, 1), 2);
  CHECK_EQ_INT(topo_gpu_nic_for_channel(sys, 0, 2), 0);
  CHECK_NCCL(topo_gpu_best_nics(sys, 0, best, 1, &n)); /* room for one */
  CHECK_EQ_INT(n, 1);

  /* The picture for mkccl-info. */
  char* text = NULL;
  size_t len = 0;
  FILE* f = open_memstream(&text, &len);
  topo_print(sys, f);
  fclose(f);
  CHECK_STR_CONTAINS(text, "2 CPUs, 4 GPUs, 4 NICs, 3 PCI switches");
  CHECK_STR_CONTAINS(text, "GPU 2 0000:83:00.0 cudaDev 2 sm 90");
  CHECK_STR_CONTAINS(text, "NIC 1 mlx5_1 0000:84:00.0 50000 Mb/s");
  CHECK_STR_CONTAINS(text, "GPU 0 - GPU 1: NVL x2 41.2 GB/s");
  CHECK_STR_CONTAINS(text, "NVB/20.6");
  free(text);
  topo_system_free(sys);

  /* Another rank does not write. */
  unlink(path);
  setenv("NCCL_TOPO_DUMP_FILE_RANK", "1", 1);
  in.rank = 0;
  CHECK_NCCL(topo_system_build(&in, &sys));
  CHECK(access(path, F_OK) != 0);
  topo_system_free(sys);
  in.rank = 1;
  CHECK_NCCL(topo_system_build(&in, &sys));
  CHECK(access(path, F_OK) == 0);
  topo_system_free(sys);
  unsetenv("NCCL_TOPO_DUMP_FILE_RANK");

  /* A file that cannot be written fails the build. */
  setenv("NCCL_TOPO_DUMP_FILE", "/nonexistent-dir/topo.xml", 1);
  in.rank = 0;
  sys = (topo_system_t*)0x1;
  CHECK_EQ_INT(topo_system_build(&in, &sys), ncclSystemError);
  CHECK(sys == (topo_system_t*)0x1);
  unsetenv("NCCL_TOPO_DUMP_FILE");
  unlink(path);
}

/* Link speeds and widths that give NCCL back our bandwidths (Gen5, Gen3 x8). */
static void check_nested_links(const char* path) {
  static const topo_gpu_input_t gpus[1] = {{"0000:09:00.0", 0, 80, 0, 0.0f, 0}};
  static const topo_nic_input_t nics[2] = {{"mlx5_0", "/x/0000:0a:00.0", 400000, 1}, {"ens3", "/x/0000:0b:00.0", 0, 0}};
  topo_inputs_t in = {0};
  in.hwlocXml = NESTED_XML;
  in.gpus = gpus;
  in.nGpus = 1;
  in.nics = nics;
  in.nNics = 2;
  topo_system_t* sys = NULL;
  CHECK_NCCL(topo_system_build(&in, &sys));
  CHECK_NCCL(topo_dump_xml(sys, path));
  const char* xml = slurp(path);
  CHECK(xml && xml_check(xml) == 0);
  CHECK_STR_CONTAINS(xml, "<pci busid=\"0000:07:00.0\" class=\"0x060400\" vendor=\"0x1000\" device=\"0xc030\" subsystem_vendor=\"0x1000\" subsystem_device=\"0xa0a0\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">");
  CHECK_STR_CONTAINS(xml, "<pci busid=\"0000:0b:00.0\" class=\"0x020000\" vendor=\"0x8086\" device=\"0x1572\" subsystem_vendor=\"0x8086\" subsystem_device=\"0x0001\" link_speed=\"8.0 GT/s PCIe\" link_width=\"8\">");
  CHECK_STR_CONTAINS(xml, "<cpu numaid=\"0\" affinity=\"0000000f\" arch=\"x86_64\" vendor=\"AuthenticAMD\" familyid=\"25\"");
  CHECK_STR_CONTAINS(xml, "<gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"0\">");
  CHECK_EQ_INT(count_of(xml, "<pci "), 5); /* switches A, C; GPU; two NICs (B leads to no device) */
  CHECK_EQ_INT(topo_dump_xml(sys, "/nonexistent-dir/x.xml"), ncclSystemError);
  CHECK_EQ_INT(topo_dump_xml(NULL, path), ncclInvalidArgument);
  topo_system_free(sys);
  unlink(path);
}

int main(void) {
  unsetenv("NCCL_TOPO_DUMP_FILE_RANK");
  char path[64];
  snprintf(path, sizeof(path), "/tmp/mkccl_topo_dump_%d.xml", (int)getpid());
  check_dump_file(path);
  check_nested_links(path);
  return 0;
}
