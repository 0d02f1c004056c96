/* test_dot.c — pictures of realizes: tl_set_dot_dir (and TL_DOT_DIR) makes every
 * realize write DIR/realize-NNNN.dot, the graph with one cluster per kernel of its
 * schedule. The files are parsed minimally here; when Graphviz's `dot` is installed,
 * it must accept them too. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "tl.h"

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* braces outside quoted strings balance and never go below zero */
static bool balanced(const char *s) {
  int depth = 0;
  bool quoted = false;
  for (; *s; s++) {
    if (quoted && *s == '\\' && s[1]) s++;
    else if (*s == '"') quoted = !quoted;
    else if (!quoted && *s == '{') depth++;
    else if (!quoted && *s == '}' && --depth < 0) return false;
  }
  return depth == 0 && !quoted;
}

static bool have_graphviz(void) { return system("command -v dot >/dev/null 2>&1") == 0; }

/* file n of dir, checked: well formed, one cluster per kernel; its text (free it) */
static char *check_file(const char *dir, int n, int kernels) {
  char path[256];
  snprintf(path, sizeof path, "%s/realize-%04d.dot", dir, n);
  char *s = tl_test_slurp(path);
  CHECK(s != NULL);
  if (!s) return NULL;
  CHECK(!strncmp(s, "digraph tl_realize {", 20));
  CHECK(balanced(s));
  CHECK_INT(count(s, "subgraph cluster_"), kernels);
  CHECK_INT(count(s, "output\""), kernels); /* each kernel's output node, labelled */
  for (int k = 0; k < kernels; k++) {
    char label[64];
    snprintf(label, sizeof label, "label=\"kernel k%d\"", k);
    CHECK_CONTAINS(s, label);
  }
  if (have_graphviz()) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "dot -Tsvg '%s' -o /dev/null", path);
    CHECK_INT(system(cmd), 0);
  }
  return s;
}

static tl_tensor *filled(tl_ctx *ctx, int64_t r, int64_t c, float base) {
  float v[64];
  for (int i = 0; i < r * c; i++) v[i] = base + (float)(i % 7) - 3.0f;
  return tl_from_data(ctx, TL_F32, 2, (int64_t[]){r, c}, v);
}

TEST(dot_realize_files) {
  char *dir = tl_test_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  tl_ctx *ctx = tl_init();
  CHECK_INT(tl_set_dot_dir(ctx, dir), TL_OK);
  tl_tensor *a = filled(ctx, 4, 8, 0), *b = filled(ctx, 4, 8, 1), *c = filled(ctx, 4, 8, 2);
  /* relu(a*b+c): one fused kernel */
  tl_tensor *y = tl_relu(tl_add(tl_mul(a, b), c));
  int expect = tl_schedule_count(y);
  uint64_t before = tl_get_stats(ctx).kernels_run;
  CHECK_INT(tl_realize(y), TL_OK);
  CHECK_INT(expect, 1);
  CHECK_INT((int)(tl_get_stats(ctx).kernels_run - before), expect);
  char *s = check_file(dir, 1, expect);
  if (s) {
    CHECK_CONTAINS(s, "MUL f32 [4,8]");
    CHECK_CONTAINS(s, "ADD f32 [4,8]");
    CHECK_CONTAINS(s, "BUFFER f32 [4,8]\", shape=box]");
  }
  free(s);
  /* then a sum over a chain of matmuls: (y @ w1) @ w2 gets a kernel of its own */
  tl_tensor *w1 = filled(ctx, 8, 8, 0), *w2 = filled(ctx, 8, 3, 0);
  tl_tensor *t = tl_sum(tl_matmul(tl_matmul(y, w1), w2), 0, NULL, 0);
  expect = tl_schedule_count(t);
  before = tl_get_stats(ctx).kernels_run;
  double v;
  CHECK_INT(tl_item(t, &v), TL_OK);
  CHECK(expect >= 2);
  CHECK_INT((int)(tl_get_stats(ctx).kernels_run - before), expect);
  s = check_file(dir, 2, expect);
  if (s) CHECK_CONTAINS(s, "RSUM f32");
  free(s);
  /* the interpreter draws the graph, without kernels */
  CHECK_INT(tl_set_backend(ctx, "interp"), TL_OK);
  CHECK_INT(tl_realize(tl_exp(a)), TL_OK);
  s = check_file(dir, 3, 0);
  if (s) CHECK_CONTAINS(s, "EXP f32 [4,8]");
  free(s);
  /* NULL stops it */
  CHECK_INT(tl_set_dot_dir(ctx, NULL), TL_OK);
  CHECK_INT(tl_realize(tl_neg(a)), TL_OK);
  char path[256];
  snprintf(path, sizeof path, "%s/realize-0004.dot", dir);
  CHECK(access(path, F_OK) != 0);
  TEST_SHUTDOWN(ctx);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* a directory that cannot be made or is not one: an error with the reason */
TEST(dot_bad_dir) {
  char *dir = tl_test_tmpdir(), path[128];
  CHECK(dir != NULL);
  if (!dir) return;
  tl_ctx *ctx = tl_init();
  snprintf(path, sizeof path, "%s/plain", dir);
  FILE *f = fopen(path, "w");
  if (f) fclose(f);
  CHECK_INT(tl_set_dot_dir(ctx, path), TL_ERR_IO);
  CHECK_CONTAINS(tl_last_error(ctx), "is not a directory");
  snprintf(path, sizeof path, "%s/plain/x", dir);
  CHECK_INT(tl_set_dot_dir(ctx, path), TL_ERR_IO);
  CHECK_CONTAINS(tl_last_error(ctx), "cannot be created: Not a directory");
  snprintf(path, sizeof path, "%s/no/such", dir);
  CHECK_INT(tl_set_dot_dir(ctx, path), TL_ERR_IO);
  CHECK_CONTAINS(tl_last_error(ctx), "cannot be created: No such file or directory");
  CHECK_INT(tl_set_dot_dir(NULL, dir), TL_ERR_ARG);
  /* the context goes on, drawing nothing */
  tl_clear_error(ctx);
  double v;
  CHECK_INT(tl_item(tl_sum(filled(ctx, 2, 2, 0), 0, NULL, 0), &v), TL_OK);
  TEST_SHUTDOWN(ctx);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* TL_DOT_DIR sets it at tl_init */
TEST(dot_env) {
  char *dir = tl_test_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  char *old = getenv("TL_DOT_DIR");
  old = old ? strdup(old) : NULL;
  setenv("TL_DOT_DIR", dir, 1);
  tl_ctx *ctx = tl_init();
  if (old) setenv("TL_DOT_DIR", old, 1);
  else unsetenv("TL_DOT_DIR");
  free(old);
  CHECK_INT(tl_realize(tl_exp(filled(ctx, 2, 2, 0))), TL_OK);
  free(check_file(dir, 1, 1));
  TEST_SHUTDOWN(ctx);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}
