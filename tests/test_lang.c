/* test_lang.c — the language's golden tests: every tests/lang/ ** /NAME.tl is compiled
 * and run in this process; its stdout must equal NAME.out, and its diagnostics or
 * run-time error NAME.err (then the exit code must be 1, else 0). A first line
 * `// tl-args: --mem-stats` adds the memory statistics to the output. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang.h"
#include "test.h"

static int programs, failures;

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

static void run_one(const char *path) {
  size_t len;
  char *src = tl_lang_read_file(path, &len, stderr);
  if (!src) {
    tl_test_fail(__FILE__, __LINE__, "%s: unreadable", path);
    return;
  }
  char base[1024], want_path[1100];
  snprintf(base, sizeof base, "%.*s", (int)(strlen(path) - 3), path);
  snprintf(want_path, sizeof want_path, "%s.out", base);
  char *want_out = slurp(want_path);
  snprintf(want_path, sizeof want_path, "%s.err", base);
  char *want_err = slurp(want_path);
  char *out = NULL, *err = NULL;
  size_t nout = 0, nerr = 0;
  FILE *fo = open_memstream(&out, &nout), *fe = open_memstream(&err, &nerr);
  tl_lang_run_options o = {.out = fo, .err = fe, .mem_stats = strstr(src, "// tl-args: --mem-stats") == src};
  int rc = tl_lang_run_source(path, src, len, &o);
  fclose(fo);
  fclose(fe);
  programs++;
  int want_rc = want_err ? 1 : 0;
  const char *wo = want_out ? want_out : "", *we = want_err ? want_err : "";
  if (rc != want_rc || strcmp(out, wo) || strcmp(err, we)) {
    failures++;
    tl_test_fail(__FILE__, __LINE__, "%s: exit %d (want %d)\n--- stdout:\n%s--- want:\n%s--- stderr:\n%s--- want:\n%s", path,
                 rc, want_rc, out, wo, err, we);
  }
  free(out);
  free(err);
  free(want_out);
  free(want_err);
  free(src);
}

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  size_t n = strlen(path);
  if (flag == FTW_F && n > 3 && !strcmp(path + n - 3, ".tl")) run_one(path);
  return 0;
}

TEST(lang_golden_programs) {
  programs = failures = 0;
  const char *dir = getenv("TL_LANG_TESTS") ? getenv("TL_LANG_TESTS") : "tests/lang";
  CHECK(nftw(dir, visit, 16, FTW_PHYS) == 0);
  CHECK(programs >= 1);
  printf("  %d TL programs, %d failed\n", programs, failures);
}
