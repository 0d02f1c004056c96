/* test_lang_limits.c — programs at the language's size limits, generated here: chains
 * of 100,000 operators (`1 + 1 + ...`) are checked and run with the right value (every
 * pass walks a chain in a loop, and the C it becomes is neither nested deep nor
 * quadratic in size), and a chain the C compiler could not finish in reasonable time is
 * a clear error, at once. Expected values are computed here, in C. */
#include <stdlib.h>
#include <string.h>

#include "lang/lang.h"
#include "test.h"

typedef struct {
  char *text;
  size_t len, cap;
} buf;

static void put(buf *b, const char *s) {
  size_t n = strlen(s);
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->text = realloc(b->text, b->cap);
  }
  memcpy(b->text + b->len, s, n + 1);
  b->len += n;
}

/* "PRE" + first + (sep + term) * (n - 1) + "POST" */
static char *chain(const char *pre, const char *first, const char *sep_term, int n, const char *post) {
  buf b = {0};
  put(&b, pre);
  put(&b, first);
  for (int i = 1; i < n; i++) put(&b, sep_term);
  put(&b, post);
  return b.text;
}

/* runs src in this process: the exit code; stdout and stderr in *out and *err */
static int run(const char *src, char **out, char **err) {
  size_t nout = 0, nerr = 0;
  FILE *fo = open_memstream(out, &nout), *fe = open_memstream(err, &nerr);
  tl_lang_run_options o = {.out = fo, .err = fe};
  int rc = tl_lang_run_source("limits.tl", src, strlen(src), &o);
  fclose(fo);
  fclose(fe);
  return rc;
}

/* src must run and print exactly want */
static void check_prints(const char *src, const char *want, const char *what) {
  char *out = NULL, *err = NULL;
  int rc = run(src, &out, &err);
  if (rc != 0 || strcmp(out, want))
    tl_test_fail(__FILE__, __LINE__, "%s: exit %d, printed \"%.200s\" (want \"%s\"), stderr: %.300s", what, rc, out, want,
                 err);
  free(out);
  free(err);
}

/* src must fail to compile with a message holding want */
static void check_error(const char *src, const char *want, const char *what) {
  char *out = NULL, *err = NULL;
  int rc = run(src, &out, &err);
  if (rc != 1 || !strstr(err, want))
    tl_test_fail(__FILE__, __LINE__, "%s: exit %d, stderr \"%.300s\" (want \"%s\" in it)", what, rc, err, want);
  free(out);
  free(err);
}

TEST(lang_limits_long_integer_chain) {
  enum { N = 100000 };
  char *src = chain("fn main() {\n  let x = ", "1", " + 1", N, ";\n  println(x);\n}\n");
  check_prints(src, "100000\n", "1 + 1 + ... (100,000 terms)");
  free(src);
  /* a variable at the bottom, subtraction, and the chain as a call's argument */
  src = chain("fn main() {\n  let b = 7;\n  println(", "b * 1000000", " - 3", N, ");\n}\n");
  char want[32];
  snprintf(want, sizeof want, "%d\n", 7000000 - 3 * (N - 1));
  check_prints(src, want, "b * 1000000 - 3 - 3 ... (100,000 terms)");
  free(src);
}

TEST(lang_limits_long_float_chain) {
  enum { N = 100000 };
  /* every partial sum is a multiple of 0.5 below 2^24: exact in f32 */
  char *src = chain("fn main() {\n  let x = ", "0.5", " + 0.5", N, ";\n  println(x);\n}\n");
  check_prints(src, "50000.0\n", "0.5 + 0.5 + ... (100,000 terms)");
  free(src);
}

/* `a * b + c * d + ...`: a chain of `+` whose right operands are products */
TEST(lang_limits_long_mixed_precedence_chain) {
  enum { N = 50000 }; /* 100,000 numbers */
  buf b = {0};
  put(&b, "fn main() {\n  println(");
  long long sum = 0;
  char term[32];
  for (int i = 0; i < N; i++) {
    snprintf(term, sizeof term, "%s%d * %d", i ? " + " : "", i % 7, i % 5);
    put(&b, term);
    sum += (i % 7) * (i % 5);
  }
  put(&b, ");\n}\n");
  char want[32];
  snprintf(want, sizeof want, "%lld\n", sum);
  check_prints(b.text, want, "1 * 2 + 3 * 4 + ... (100,000 numbers)");
  free(b.text);
}

TEST(lang_limits_long_logical_chains) {
  enum { N = 100000 };
  char *src = chain("fn main() {\n  let a = true;\n  let b = false;\n  println(", "a", " && a", N, ");\n}\n");
  check_prints(src, "true\n", "a && a && ... (100,000 terms)");
  free(src);
  src = chain("fn main() {\n  let a = true;\n  let b = false;\n  println(", "b", " || b", N - 1, " || a);\n}\n");
  check_prints(src, "true\n", "b || b || ... || a (100,000 terms)");
  free(src);
}

/* chains whose steps call the run time or a function: each step's temporaries go right
 * after it (not at the end of the statement), with the right values */
TEST(lang_limits_chains_that_call) {
  enum { N = 1000 };
  char *src = chain("fn main() {\n  let t = Tensor::arange(0, 3) as f32;\n  let x = ", "t", " + t", N,
                    ";\n  println(x);\n}\n");
  check_prints(src, "[   0. 1000. 2000.]\n", "t + t + ... (1,000 tensors)");
  free(src);
  src = chain("fn main() {\n  let s = \"ab\";\n  let x = ", "s", " + s", N, ";\n  println(x.len());\n}\n");
  check_prints(src, "2000\n", "s + s + ... (1,000 strings)");
  free(src);
  src = chain("fn one(n: i64) -> i64 { n }\nfn main() {\n  println(", "one(1)", " + one(1)", N, ");\n}\n");
  check_prints(src, "1000\n", "one(1) + one(1) + ... (1,000 calls)");
  free(src);
  src = chain("fn main() {\n  let a = [1.0, 2.0, 3.0];\n  println([i | { ", "a[i]", " + a[i]", 500, " }]);\n}\n");
  check_prints(src, "[ 500. 1000. 1500.]\n", "a comprehension's body a[i] + a[i] + ... (500 terms)");
  free(src);
}

/* the C compiler's time grows faster than the number of calls in one function: past
 * 4,096 calling steps a chain is an error at its start, before any C is compiled */
TEST(lang_limits_chain_too_long_to_compile) {
  enum { N = 100000 };
  char *src = chain("fn main() {\n  let t = Tensor::ones([2]);\n  let x = ", "t", " + t", N, ";\n  println(x);\n}\n");
  check_error(src, "limits.tl:3:11: error: expression too long: a chain of 99999 tensor, string or call operations",
              "t + t + ... (100,000 tensors)");
  free(src);
  src = chain("fn main() {\n  println(", "1000000", " / 1", N, ");\n}\n");
  check_error(src, "limits.tl:2:11: error: expression too long", "1000000 / 1 / 1 ... (integer division calls)");
  free(src);
}
