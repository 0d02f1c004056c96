/* test_main.c — runs every registered test and ends with "N passed, N failed". A test
 * passes when it records no failure. Arguments filter by name: WORD keeps the tests
 * containing it (any of them), -WORD drops those containing it. */
#include "test.h"
#include "tl.h"

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

static int contexts_checked;

int tl_test_leak_check(tl_ctx *ctx, char *why, size_t whylen) {
  size_t leaks = tl_mem_report(ctx, NULL);
  if (leaks) {
    snprintf(why, whylen, "%zu leaked object(s)", leaks);
    tl_mem_report(ctx, stdout);
    return 1;
  }
  tl_scope *root = tl_scope_root(ctx);
  if (root && tl_scope_end(root) != TL_OK) {
    snprintf(why, whylen, "ending the root scope failed: %s", tl_last_error(ctx));
    return 1;
  }
  tl_stats s = tl_get_stats(ctx);
  if (s.live_tensors || s.live_nodes || s.live_buffers || s.live_bytes || s.retains != s.releases) {
    snprintf(why, whylen,
             "after the root scope: %llu tensors, %llu nodes, %llu buffers, %llu bytes live; %llu retains, %llu releases",
             (unsigned long long)s.live_tensors, (unsigned long long)s.live_nodes,
             (unsigned long long)s.live_buffers, (unsigned long long)s.live_bytes,
             (unsigned long long)s.retains, (unsigned long long)s.releases);
    return 1;
  }
  contexts_checked++;
  return 0;
}

void tl_test_shutdown(tl_ctx *ctx, const char *file, int line) {
  char why[256];
  if (tl_test_leak_check(ctx, why, sizeof why)) tl_test_fail(file, line, "leak check: %s", why);
  tl_shutdown(ctx);
}

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
  printf("leak check: %d contexts ended with nothing live\n", contexts_checked);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
