/* Fuzz target: what the bootstrap root accepts from the network. A root
 * runs in this process; each input is one connection's bytes (when the
 * first byte is odd, the job's real magic replaces the first 8 bytes so the
 * registration checks are reached too). The harness waits until the root
 * has dropped or answered the connection; a root that finished (a valid
 * registration completed its job) is replaced. */
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "fuzz_setup.h"
#include "sock/sock.h"

static bootstrap_handle_t fuzz_handle;
static int fuzz_started;

static int fuzz_root_start(void) {
  if (fuzz_started) bootstrap_root_finish(&fuzz_handle, 1);
  memset(&fuzz_handle, 0, sizeof(fuzz_handle));
  if (sock_addr_parse("127.0.0.1:0", 0, &fuzz_handle.addr) != SOCK_OK) return -1;
  fuzz_handle.magic = 0x6675a2a2f00dULL;
  fuzz_started = bootstrap_root_start(&fuzz_handle) == ncclSuccess;
  return fuzz_started ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!fuzz_started && fuzz_root_start() != 0)
    fuzz_setup_failed("fuzz_bootstrap_root", "bootstrap_root_start on 127.0.0.1");
  int fd = -1;
  if (sock_connect(&fuzz_handle.addr, sock_deadline_ms(200), NULL, &fd) != SOCK_OK) {
    /* The last input's registration finished the root's job: a new root. */
    if (fuzz_root_start() != 0 || sock_connect(&fuzz_handle.addr, sock_deadline_ms(200), NULL, &fd) != SOCK_OK)
      fuzz_setup_failed("fuzz_bootstrap_root", "no connection to a fresh root");
  }
  uint8_t msg[512];
  size_t n = size < sizeof(msg) ? size : sizeof(msg);
  memcpy(msg, data, n);
  if (n >= 8 && (msg[0] & 1)) memcpy(msg, &fuzz_handle.magic, 8);
  if (n) (void)sock_send_all(fd, msg, n, sock_deadline_ms(200), NULL);
  shutdown(fd, SHUT_WR);
  /* The root closes what it rejects and answers what it accepts: read until
   * then (bounded: an incomplete registration waits for its handshake). */
  char sink[256];
  int64_t deadline = sock_deadline_ms(100);
  while (sock_wait(fd, POLLIN, deadline, NULL) == SOCK_OK && read(fd, sink, sizeof(sink)) > 0) {
  }
  sock_close(&fd);
  return 0;
}
