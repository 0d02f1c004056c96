/* test_fuzz_replay.c — replays the committed fuzz corpus (tests/fuzz/corpus/NAME/, the
 * minimized inputs AFL++ kept, crashes found included once fixed) through each harness
 * of tests/fuzz: a crash fails the test (it runs in a forked child), a leak is a
 * recorded failure naming the input. */
#include "fuzz/fuzz.h"
#include "test.h"

#include <dirent.h>
#include <stdlib.h>

static uint8_t *replay_read(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t *buf = NULL;
  size_t cap = 0, n = 0, got;
  do {
    if (n == cap) {
      cap = cap ? 2 * cap : 4096;
      uint8_t *b = realloc(buf, cap);
      if (!b) break;
      buf = b;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  fclose(f);
  *size = n;
  return buf;
}

/* every file of the harness's corpus directory; the count is checked so an empty or
 * missing corpus fails instead of passing vacuously */
static void replay(void *arg) {
  const tl_fuzz_harness *h = arg;
  char dir[256];
  snprintf(dir, sizeof dir, "tests/fuzz/corpus/%s", h->name);
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  if (!d) return;
  int files = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t size = 0;
    uint8_t *data = replay_read(path, &size);
    CHECK(data != NULL || size == 0);
    if (h->fn(data ? data : (const uint8_t *)"", size) != 0) tl_test_fail(__FILE__, __LINE__, "leak on %s", path);
    free(data);
    files++;
  }
  closedir(d);
  CHECK(files > 0);
}

__attribute__((constructor)) static void replay_register(void) {
  for (const tl_fuzz_harness *h = tl_fuzz_harnesses; h->name; h++) {
    char name[64];
    snprintf(name, sizeof name, "fuzz_replay_%s", h->name);
    char *copy = malloc(strlen(name) + 1);
    tl_fuzz_harness *arg = malloc(sizeof *arg); /* the runner frees both */
    if (!copy || !arg) {
      free(copy);
      free(arg);
      return;
    }
    strcpy(copy, name);
    *arg = *h;
    tl_test_register_arg(copy, replay, arg, __FILE__);
  }
}
