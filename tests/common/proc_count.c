#include "proc_count.h"

#include <dirent.h>
#include <string.h>

#include "check.h"

static int proc_count_dir(const char* path) {
  DIR* d = opendir(path);
  CHECK(d != NULL);
  int n = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

int proc_count_fds(void) { return proc_count_dir("/proc/self/fd") - 1; /* opendir's own */ }
int proc_count_threads(void) { return proc_count_dir("/proc/self/task"); }
