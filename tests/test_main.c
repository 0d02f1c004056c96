/* test_main.c — runs every registered test and ends with "N passed, N failed". A test
 * passes when it records no failure. Arguments filter by name: WORD keeps the tests
 * containing it (any of them), -WORD drops those containing it. */
#include "test.h"

#include <libgen.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
  const char *name, *file;
  tl_test_fn fn;
} test_entry;

static test_entry tests[1024];
static int ntests;
static int current_failures;
static char bindir[4096];

void tl_test_register(const char *name, tl_test_fn fn, const char *file) {
  if (ntests < (int)(sizeof tests / sizeof tests[0]))
    tests[ntests++] = (test_entry){name, file, fn};
}

void tl_test_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stdout, "  %s:%d: ", file, line);
  vfprintf(stdout, fmt, ap);
  fputc('\n', stdout);
  va_end(ap);
  current_failures++;
}

const char *tl_test_bindir(void) { return bindir; }

static bool selected(const char *name, int argc, char **argv) {
  bool any_include = false, included = false;
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-') {
      if (strstr(name, argv[i] + 1)) return false;
    } else {
      any_include = true;
      included |= strstr(name, argv[i]) != NULL;
    }
  }
  return !any_include || included;
}

static int by_file_then_name(const void *a, const void *b) {
  const test_entry *x = a, *y = b;
  int c = strcmp(x->file, y->file);
  return c ? c : strcmp(x->name, y->name);
}

int main(int argc, char **argv) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = 0;
    snprintf(bindir, sizeof bindir, "%s", dirname(self));
  }
  qsort(tests, (size_t)ntests, sizeof tests[0], by_file_then_name);
  int passed = 0, failed = 0;
  for (int i = 0; i < ntests; i++) {
    if (!selected(tests[i].name, argc, argv)) continue;
    current_failures = 0;
    fflush(stdout);
    tests[i].fn();
    if (current_failures) {
      printf("FAIL %s (%s)\n", tests[i].name, tests[i].file);
      failed++;
    } else {
      printf("ok   %s\n", tests[i].name);
      passed++;
    }
    fflush(stdout);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
