#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* NCCL_SOCKET_IFNAME / NCCL_SOCKET_FAMILY semantics, address text, sysfs. */
#include <arpa/inet.h>
#include <string.h>

#include "check.h"
#include "sock/sock.h"

static sock_iface_t fake(const char* name, const char* ip) {
  sock_iface_t f;
  memset(&f, 0, sizeof(f));
  strcpy(f.name, name);
  if (strchr(ip, ':')) {
    f.addr.sin6.sin6_family = AF_INET6;
    CHECK(inet_pton(AF_INET6, ip, &f.addr.sin6.sin6_addr) == 1);
  } else {
    f.addr.sin.sin_family = AF_INET;
    CHECK(inet_pton(AF_INET, ip, &f.addr.sin.sin_addr) == 1);
  }
  return f;
}

static void test_match(void) {
  CHECK(sock_iface_match("eth0", NULL));
  CHECK(sock_iface_match("eth0", ""));
  CHECK(sock_iface_match("eth0", "eth"));
  CHECK(sock_iface_match("eth0", "ib,eth"));
  CHECK(!sock_iface_match("eth0", "ib,en"));
  CHECK(!sock_iface_match("eth0", "^eth"));
  CHECK(sock_iface_match("ib0", "^eth"));
  CHECK(!sock_iface_match("eth0", "=eth"));
  CHECK(sock_iface_match("eth", "=eth"));
  CHECK(sock_iface_match("eth1", "=eth0,eth1"));
  CHECK(sock_iface_match("eth0", "^=eth"));
  CHECK(!sock_iface_match("eth", "^=eth"));
  CHECK(!sock_iface_match("docker0", "^docker,lo"));
  CHECK(!sock_iface_match("lo", "^docker,lo"));
  CHECK(sock_iface_match("enp1s0", "^docker,lo"));
  CHECK(sock_iface_match("eth0", "foo,,eth")); /* empty entries are ignored */
}

static void names(const sock_iface_t* l, int n, char* out) {
  out[0] = '\0';
  for (int i = 0; i < n; i++) {
    if (i) strcat(out, ",");
    strcat(out, l[i].name);
  }
}

static void test_select(void) {
  sock_iface_t c[] = {fake("lo", "127.0.0.1"),       fake("lo", "::1"),           fake("docker0", "172.17.0.1"),
                      fake("eth0", "10.0.0.2"),      fake("eth0", "fd00::2"),     fake("ib0", "192.168.1.2"),
                      fake("eth1", "10.1.0.2")};
  sock_iface_t out[8];
  int n = 0;
  char buf[256];
  /* Automatic: IPoIB first. */
  CHECK(sock_ifaces_select(c, 7, NULL, AF_UNSPEC, out, 8, &n) == SOCK_OK);
  names(out, n, buf);
  CHECK(strcmp(buf, "ib0") == 0);
  /* Without ib: real interfaces, one address each (the first). */
  sock_iface_t noib[] = {c[0], c[1], c[2], c[3], c[4], c[6]};
  CHECK(sock_ifaces_select(noib, 6, "", AF_UNSPEC, out, 8, &n) == SOCK_OK);
  names(out, n, buf);
  CHECK(strcmp(buf, "eth0,eth1") == 0);
  CHECK(out[0].addr.sa.sa_family == AF_INET);
  CHECK(sock_ifaces_select(noib, 6, "", AF_INET6, out, 8, &n) == SOCK_OK);
  names(out, n, buf);
  CHECK(strcmp(buf, "eth0") == 0);
  CHECK(out[0].addr.sa.sa_family == AF_INET6);
  /* max bounds the answer. */
  CHECK(sock_ifaces_select(noib, 6, "", AF_UNSPEC, out, 1, &n) == SOCK_OK);
  CHECK_EQ_INT(n, 1);
  /* Docker only if nothing better, loopback last. */
  CHECK(sock_ifaces_select(c, 3, NULL, AF_UNSPEC, out, 8, &n) == SOCK_OK);
  names(out, n, buf);
  CHECK(strcmp(buf, "docker0") == 0);
  CHECK(sock_ifaces_select(c, 2, NULL, AF_UNSPEC, out, 8, &n) == SOCK_OK);
  CHECK(n == 1 && strcmp(out[0].name, "lo") == 0 && out[0].addr.sa.sa_family == AF_INET);
  CHECK(sock_ifaces_select(c, 2, NULL, AF_INET6, out, 8, &n) == SOCK_OK);
  CHECK(n == 1 && strcmp(out[0].name, "lo") == 0 && out[0].addr.sa.sa_family == AF_INET6);
  /* A user list wins over the automatic order, lo included. */
  CHECK(sock_ifaces_select(c, 7, "^eth", AF_UNSPEC, out, 8, &n) == SOCK_OK);
  names(out, n, buf);
  CHECK(strcmp(buf, "lo,docker0,ib0") == 0);
  CHECK(sock_ifaces_select(c, 7, "=eth", AF_UNSPEC, out, 8, &n) == SOCK_ENOTFOUND);
  CHECK_STR_CONTAINS(sock_error(), "no interface matches '=eth'");
  CHECK(sock_ifaces_select(c, 7, "docker,eth1", AF_UNSPEC, out, 8, &n) == SOCK_OK);
  names(out, n, buf);
  CHECK(strcmp(buf, "docker0,eth1") == 0);
  CHECK(sock_ifaces_select(c, 7, "docker", AF_INET6, out, 8, &n) == SOCK_ENOTFOUND);
  /* Outputs untouched on failure. */
  n = 42;
  CHECK(sock_ifaces_select(c, 7, "nothing", AF_UNSPEC, out, 8, &n) == SOCK_ENOTFOUND);
  CHECK_EQ_INT(n, 42);
}

static void test_family(void) {
  int f = -1;
  CHECK(sock_family_parse(NULL, &f) == SOCK_OK && f == AF_UNSPEC);
  CHECK(sock_family_parse("", &f) == SOCK_OK && f == AF_UNSPEC);
  CHECK(sock_family_parse("AF_INET", &f) == SOCK_OK && f == AF_INET);
  CHECK(sock_family_parse("AF_INET6", &f) == SOCK_OK && f == AF_INET6);
  f = 99;
  CHECK(sock_family_parse("AF_UNIX", &f) == SOCK_EINVAL && f == 99);
}

static void test_addr(void) {
  sock_addr_t a;
  char buf[SOCK_ADDR_STRLEN];
  CHECK(sock_addr_parse("127.0.0.1:1234", AF_UNSPEC, &a) == SOCK_OK);
  CHECK(a.sa.sa_family == AF_INET && sock_addr_port(&a) == 1234);
  CHECK(strcmp(sock_addr_to_string(&a, buf, sizeof(buf), 1), "127.0.0.1:1234") == 0);
  CHECK(strcmp(sock_addr_to_string(&a, buf, sizeof(buf), 0), "127.0.0.1") == 0);
  CHECK(sock_addr_is_loopback(&a));
  CHECK(sock_addr_parse("[::1]:80", AF_UNSPEC, &a) == SOCK_OK);
  CHECK(a.sa.sa_family == AF_INET6 && sock_addr_port(&a) == 80 && sock_addr_is_loopback(&a));
  CHECK(strcmp(sock_addr_to_string(&a, buf, sizeof(buf), 1), "[::1]:80") == 0);
  sock_addr_t b;
  CHECK(sock_addr_parse(buf, AF_UNSPEC, &b) == SOCK_OK && sock_addr_equal(&a, &b));
  CHECK(sock_addr_parse("[fd00::1:2]:65535", AF_UNSPEC, &a) == SOCK_OK && sock_addr_port(&a) == 65535);
  CHECK(!sock_addr_is_loopback(&a));
  CHECK(sock_addr_parse("localhost:5", AF_INET, &a) == SOCK_OK && a.sa.sa_family == AF_INET);
  const char* bad[] = {"", "1.2.3.4", "::1:80", "[::1]80", "[::1:80", "1.2.3.4:99999", "1.2.3.4:x", ":80",
                       "1.2.3.4:", "no.such.host.invalid:1"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    a.sa.sa_family = 77;
    int rc = sock_addr_parse(bad[i], AF_UNSPEC, &a);
    CHECK_MSG(rc == SOCK_EINVAL || rc == SOCK_ENOTFOUND, "'%s' parsed (%d)", bad[i], rc);
    CHECK(a.sa.sa_family == 77);
  }
  CHECK(sock_addr_parse("[::1]:80", AF_INET, &a) == SOCK_EINVAL);
  CHECK(sock_addr_parse("10.0.0.1:80", AF_INET6, &a) != SOCK_OK);
}

/* `test_sock_iface loopback`: "=lo" and the route to 127.0.0.1 (skipped
 * where lo has no IPv4 address). */
static void test_loopback(void) {
  sock_iface_t out[4];
  int n = 0;
  if (sock_ifaces_find("=lo", AF_INET, out, 4, &n) != SOCK_OK) SKIP("no IPv4 loopback here (%s)", sock_error());
  CHECK(n == 1 && strcmp(out[0].name, "lo") == 0 && sock_addr_is_loopback(&out[0].addr));
  sock_iface_t m;
  sock_addr_t r;
  CHECK(sock_addr_parse("127.0.0.1:9", AF_UNSPEC, &r) == SOCK_OK);
  CHECK(sock_ifaces_find_for_remote(&r, &m) == SOCK_OK && sock_addr_is_loopback(&m.addr));
}

static void test_host(void) {
  sock_iface_t out[4];
  int n = 0;
  CHECK(sock_ifaces_find(NULL, AF_UNSPEC, out, 4, &n) == SOCK_OK); /* something, at worst lo */
  CHECK(n >= 1);
  char path[512];
  int mbps = 0;
  CHECK(sock_iface_pci_path("lo", path, sizeof(path)) == SOCK_ENOTFOUND); /* virtual */
  CHECK(sock_iface_speed_mbps("lo", &mbps) == SOCK_ENOTFOUND && mbps == 0);
  CHECK(sock_iface_pci_path("../x", path, sizeof(path)) == SOCK_EINVAL);
  CHECK(sock_iface_speed_mbps("no-such-if0", &mbps) == SOCK_ENOTFOUND);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "loopback") == 0) {
    test_loopback();
    return 0;
  }
  test_match();
  test_select();
  test_family();
  test_addr();
  test_host();
  printf("ok\n");
  return 0;
}
