/* The referee: runs one scenario as two fresh processes, relays between
 * them, carries out kill requests, prints their verdicts, and bounds the
 * whole: a crash or a hang is that scenario's FAIL. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netcheck.h"

typedef struct {
  pid_t pid;
  int fd;          /* -1 once closed */
  int exited;
  int status;
  int killedByUs;
  int nfail;
} netcheck_proc_t;

static pid_t netcheck_spawn(const netcheck_opts_t* o, const netcheck_scenario_t* s, const char* self, char role,
                            int childFd, int closeFd) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  if (closeFd >= 0) close(closeFd);
  char roleText[2] = {role, 0}, ctl[16], dev[16], abi[16], timeout[16];
  snprintf(ctl, sizeof(ctl), "%d", childFd);
  snprintf(dev, sizeof(dev), "%d", o->dev);
  snprintf(abi, sizeof(abi), "%d", o->abi);
  snprintf(timeout, sizeof(timeout), "%d", o->timeoutSec);
  char* argv[16] = {(char*)self, "--role", roleText, "--scenario", (char*)s->name, "--ctl", ctl, "--dev", dev,
                     "--abi", abi, "--timeout", timeout};
  int n = 13;
  if (o->quick) argv[n++] = "--quick";
  if (netcheck_verbose) argv[n++] = "--verbose";
  argv[n++] = (char*)o->path;
  argv[n] = NULL;
  execv(self, argv);
  fprintf(stderr, "mkccl-netcheck: exec %s failed: %s\n", self, strerror(errno));
  _exit(127);
}

static void netcheck_print_check(const netcheck_scenario_t* s, netcheck_proc_t* p, const char* frame, int len) {
  if (len < 3) return;
  const char* check = frame + 1;
  const char* detail = check + strlen(check) + 1;
  if (detail >= frame + len) detail = "";
  char name[NC_FRAME_MAX + 64];
  snprintf(name, sizeof(name), "%s/%.*s", s->name, NC_FRAME_MAX - 8, check);
  const char* verdict = frame[0] == 'P' ? "PASS" : frame[0] == 'S' ? "SKIP" : "FAIL";
  if (frame[0] == 'F') p->nfail++;
  netcheck_line(verdict, name, detail);
}

static void netcheck_reap(netcheck_proc_t* p, int block) {
  if (p->exited || p->pid <= 0) return;
  int status;
  pid_t r = waitpid(p->pid, &status, block ? 0 : WNOHANG);
  if (r == p->pid) {
    p->exited = 1;
    p->status = status;
  }
}

static int netcheck_proc_ok(const netcheck_proc_t* p) {
  return p->exited && WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0;
}

int netcheck_referee_run(const netcheck_opts_t* o, const netcheck_scenario_t* s, const char* self) {
  int nroles = s->roleB ? 2 : 1;
  netcheck_proc_t procs[2];
  memset(procs, 0, sizeof(procs));
  procs[0].fd = procs[1].fd = -1;
  int failuresBefore = netcheck_failures();
  fflush(stdout);
  for (int i = 0; i < nroles; i++) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
      netcheck_line("FAIL", s->name, "socketpair failed");
      return -1;
    }
    procs[i].pid = netcheck_spawn(o, s, self, i == 0 ? 'A' : 'B', sv[1], i == 1 ? procs[0].fd : -1);
    close(sv[1]);
    procs[i].fd = sv[0];
  }
  int64_t deadline = netcheck_now_ms() + (int64_t)o->timeoutSec * 1000;
  int timedOut = 0;
  char frame[NC_FRAME_MAX + 1];
  for (;;) {
    for (int i = 0; i < nroles; i++) netcheck_reap(&procs[i], 0);
    int open = 0, running = 0;
    for (int i = 0; i < nroles; i++) open += procs[i].fd >= 0, running += !procs[i].exited;
    if (!open && !running) break;
    if (netcheck_now_ms() > deadline) {
      timedOut = 1;
      break;
    }
    /* A role that failed leaves its partner waiting for it: stop the partner. */
    for (int i = 0; i < nroles && nroles == 2; i++) {
      netcheck_proc_t* other = &procs[1 - i];
      if (procs[i].exited && !netcheck_proc_ok(&procs[i]) && !procs[i].killedByUs && !other->exited) {
        kill(other->pid, SIGKILL);
        other->killedByUs = 1;
      }
    }
    struct pollfd pfds[2];
    int map[2], n = 0;
    for (int i = 0; i < nroles; i++)
      if (procs[i].fd >= 0) pfds[n] = (struct pollfd){procs[i].fd, POLLIN, 0}, map[n++] = i;
    if (n == 0) {
      usleep(10000);
      continue;
    }
    if (poll(pfds, (nfds_t)n, 100) <= 0) continue;
    for (int k = 0; k < n; k++) {
      if (!(pfds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      netcheck_proc_t* p = &procs[map[k]];
      netcheck_proc_t* other = nroles == 2 ? &procs[1 - map[k]] : NULL;
      uint32_t type = 0;
      int len = netcheck_ctl_recv(p->fd, &type, frame, NC_FRAME_MAX, netcheck_now_ms() + 1000);
      if (len < 0) {
        close(p->fd);
        p->fd = -1;
        continue;
      }
      frame[len] = 0;
      if (type == NC_CHECK) {
        netcheck_print_check(s, p, frame, len);
      } else if (type == NC_RELAY && other && other->fd >= 0) {
        netcheck_ctl_send(other->fd, NC_RELAY, frame, (uint32_t)len);
      } else if (type == NC_KILL_PEER && other) {
        if (!other->exited) {
          kill(other->pid, SIGKILL);
          other->killedByUs = 1;
          netcheck_reap(other, 1);
        }
        netcheck_ctl_send(p->fd, NC_KILLED, NULL, 0);
      }
    }
  }
  if (timedOut) {
    for (int i = 0; i < nroles; i++)
      if (!procs[i].exited) kill(procs[i].pid, SIGKILL), procs[i].killedByUs = 1;
  }
  for (int i = 0; i < nroles; i++) {
    netcheck_reap(&procs[i], 1);
    if (procs[i].fd >= 0) close(procs[i].fd);
  }
  char detail[200];
  if (timedOut) {
    snprintf(detail, sizeof(detail), "did not finish within %d s: a call hung (killed)", o->timeoutSec);
    netcheck_line("FAIL", s->name, detail);
    return -1;
  }
  int anyFail = 0;
  for (int i = 0; i < nroles; i++) {
    netcheck_proc_t* p = &procs[i];
    if (p->killedByUs) continue;
    if (WIFSIGNALED(p->status)) {
      snprintf(detail, sizeof(detail), "role %c crashed (signal %d)", i == 0 ? 'A' : 'B', WTERMSIG(p->status));
      netcheck_line("FAIL", s->name, detail);
      anyFail = 1;
    } else if (!netcheck_proc_ok(p)) {
      anyFail = 1;
      if (p->nfail == 0) {
        snprintf(detail, sizeof(detail), "role %c exited with %d", i == 0 ? 'A' : 'B', WEXITSTATUS(p->status));
        netcheck_line("FAIL", s->name, detail);
      }
    }
  }
  if (s->bKilled == 0 && nroles == 2 && procs[1].killedByUs && !anyFail && procs[0].nfail == 0) {
    netcheck_line("FAIL", s->name, "role B stopped after role A failed");
    anyFail = 1;
  }
  return anyFail || netcheck_failures() > failuresBefore ? -1 : 0;
}
