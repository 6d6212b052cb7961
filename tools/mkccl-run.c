/* mkccl-run -n N [-x VAR=VALUE]... -- program [args...]
 *
 * Starts N ranks of a program on this machine and tells each what it needs
 * to find the others: MKCCL_RUN_RANK, MKCCL_RUN_NRANKS, and NCCL_COMM_ID on
 * a free loopback port (so every rank's ncclGetUniqueId returns the same id
 * and rank 0's process hosts the bootstrap root). Exits with the first
 * non-zero status of a rank; if a rank dies, the others are stopped. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(void) {
  fprintf(stderr,
          "usage: mkccl-run -n N [-x VAR=VALUE]... [--] program [args...]\n"
          "  runs N ranks of program on this host with MKCCL_RUN_RANK, MKCCL_RUN_NRANKS\n"
          "  and NCCL_COMM_ID set; -x sets a variable for every rank.\n");
}

/* A free TCP port on loopback (the kernel picks it; released for the ranks). */
static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = -1;
  if (bind(fd, (struct sockaddr*)&a, sizeof(a)) == 0 && getsockname(fd, (struct sockaddr*)&a, &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

int main(int argc, char** argv) {
  int n = 0, i = 1;
  for (; i < argc; i++) {
    if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
      n = atoi(argv[++i]);
    } else if (strcmp(argv[i], "-x") == 0 && i + 1 < argc) {
      char* kv = argv[++i];
      char* eq = strchr(kv, '=');
      if (!eq) {
        usage();
        return 2;
      }
      *eq = '\0';
      setenv(kv, eq + 1, 1);
    } else if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    } else if (argv[i][0] == '-') {
      usage();
      return strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0 ? 0 : 2;
    } else {
      break;
    }
  }
  if (n < 1 || n > 1024 || i >= argc) {
    usage();
    return 2;
  }
  int port = free_port();
  if (port < 0) {
    fprintf(stderr, "mkccl-run: no free port: %s\n", strerror(errno));
    return 1;
  }
  char id[64];
  snprintf(id, sizeof(id), "127.0.0.1:%d", port);
  if (!getenv("NCCL_COMM_ID")) setenv("NCCL_COMM_ID", id, 1);
  char nstr[16];
  snprintf(nstr, sizeof(nstr), "%d", n);
  setenv("MKCCL_RUN_NRANKS", nstr, 1);
  pid_t* pids = calloc((size_t)n, sizeof(pid_t));
  if (!pids) return 1;
  for (int r = 0; r < n; r++) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("mkccl-run: fork");
      for (int k = 0; k < r; k++) kill(pids[k], SIGKILL);
      return 1;
    }
    if (pid == 0) {
      char rstr[16];
      snprintf(rstr, sizeof(rstr), "%d", r);
      setenv("MKCCL_RUN_RANK", rstr, 1);
      execvp(argv[i], &argv[i]);
      fprintf(stderr, "mkccl-run: cannot run %s: %s\n", argv[i], strerror(errno));
      _exit(127);
    }
    pids[r] = pid;
  }
  int rc = 0, left = n;
  while (left > 0) {
    int status;
    pid_t pid = wait(&status);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    left--;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0 && rc == 0) {
      rc = code;
      for (int k = 0; k < n; k++)
        if (pids[k] != pid) kill(pids[k], SIGTERM);
    }
  }
  free(pids);
  return rc;
}
