/* Runs every file of the given corpus folders through a fuzz target once:
 * the corpus as a regression test where libFuzzer is not available. A file
 * that cannot be read, or a folder of fewer than FUZZ_REPLAY_MIN inputs (one
 * input reaches one path), fails the replay. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#define FUZZ_REPLAY_MIN 2

static int replay_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  uint8_t* buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len == cap) {
      cap = cap ? 2 * cap : 4096;
      uint8_t* grown = realloc(buf, cap);
      if (!grown) break;
      buf = grown;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    if (got == 0) break;
    len += got;
  }
  fclose(f);
  LLVMFuzzerTestOneInput(buf ? buf : (const uint8_t*)"", len);
  free(buf);
  return 0;
}

int main(int argc, char** argv) {
  int files = 0, bad = argc < 2;
  for (int a = 1; a < argc; a++) {
    DIR* d = opendir(argv[a]);
    if (!d) {
      fprintf(stderr, "cannot open corpus folder %s\n", argv[a]);
      return 1;
    }
    int here = 0;
    for (struct dirent* e; (e = readdir(d));) {
      if (e->d_name[0] == '.') continue;
      char path[4096];
      snprintf(path, sizeof(path), "%s/%s", argv[a], e->d_name);
      if (replay_file(path) == 0) here++;
      else bad = 1;
    }
    closedir(d);
    if (here < FUZZ_REPLAY_MIN) {
      fprintf(stderr, "%s: %d input(s), fewer than %d\n", argv[a], here, FUZZ_REPLAY_MIN);
      bad = 1;
    }
    files += here;
  }
  printf("replayed %d input(s)\n", files);
  return bad;
}
