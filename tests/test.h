/* test.h — a tiny test harness: TEST(name) registers a test, CHECK* record a
 * failure with its location and go on. tests/test_main.c runs them all and ends
 * with the line "N passed, N failed". */
#ifndef TL_TEST_H
#define TL_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tl.h"

typedef void (*tl_test_fn)(void);
typedef void (*tl_test_arg_fn)(void *arg);
void tl_test_register(const char *name, tl_test_fn fn, const char *file);
/* a test made at start-up (one per data file, say): fn(arg) runs it; name and arg
 * are malloc'd and the runner frees them at the end */
void tl_test_register_arg(const char *name, tl_test_arg_fn fn, void *arg, const char *file);
void tl_test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* realizes t (any dtype), reads it as doubles and compares every element with want,
 * each within tol; a failure names file:line */
void tl_test_values(const char *file, int line, tl_tensor *t, const double *want, int64_t n, double tol);
#define VALUES(t, tol, ...)                                                                   \
  do {                                                                                        \
    const double want_[] = {__VA_ARGS__};                                                     \
    tl_test_values(__FILE__, __LINE__, t, want_, (int64_t)(sizeof want_ / sizeof want_[0]), tol); \
  } while (0)
/* the directory holding the test binary's helpers (build/tests) */
const char *tl_test_bindir(void);
/* scratch files: a fresh private directory under /tmp (malloc'd, NULL on failure);
 * removing one with all it holds (any modes; frees dir; NULL does nothing; 0 when all
 * of it went, -1 otherwise); dir/name (malloc'd) */
char *tl_test_tmpdir(void);
int tl_test_rm_tree(char *dir);
char *tl_test_path(const char *dir, const char *name);

typedef struct tl_ctx tl_ctx;
/* Ends the root scope and checks that nothing is left: no leaked object
 * (tl_mem_report), no live tensor, graph node or buffer. Returns 0, or 1 with the
 * reason in why. Leaves the context open. */
int tl_test_leak_check(tl_ctx *ctx, char *why, size_t whylen);
/* tl_shutdown after tl_test_leak_check, recording a failure if anything leaked */
#define TEST_SHUTDOWN(ctx) tl_test_shutdown((ctx), __FILE__, __LINE__)
void tl_test_shutdown(tl_ctx *ctx, const char *file, int line);

/* an environment variable's value (a copy, or NULL when unset), and putting it back
 * (frees the copy): tests that change TL_* settings restore the caller's */
/* test_cuda.c: every kernel of t's schedule rendered as CUDA C and compiled by NVRTC
 * for sm_90 (a failure is a test failure naming `what`); returns the kernels compiled,
 * -1 when this machine has no NVRTC */
int tl_test_cuda_compile(tl_tensor *t, const char *what);
char *tl_test_env_save(const char *name);
void tl_test_env_restore(const char *name, char *saved);

#define TEST(name)                                                          \
  static void name(void);                                                   \
  __attribute__((constructor)) static void tl_test_reg_##name(void) {       \
    tl_test_register(#name, name, __FILE__);                                \
  }                                                                         \
  static void name(void)

#define CHECK(cond)                                                         \
  do {                                                                      \
    if (!(cond)) tl_test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);      \
  } while (0)

#define CHECK_INT(a, b)                                                     \
  do {                                                                      \
    long long tl_a_ = (long long)(a), tl_b_ = (long long)(b);               \
    if (tl_a_ != tl_b_)                                                     \
      tl_test_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld",   \
                   #a, tl_a_, #b, tl_b_);                                   \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                               \
  do {                                                                      \
    double tl_a_ = (double)(a), tl_b_ = (double)(b);                        \
    if (!(fabs(tl_a_ - tl_b_) <= (tol)))                                    \
      tl_test_fail(__FILE__, __LINE__, "%s == %.9g, expected %.9g (tol %g)", \
                   #a, tl_a_, tl_b_, (double)(tol));                        \
  } while (0)

#define CHECK_STR(a, b)                                                     \
  do {                                                                      \
    const char *tl_a_ = (a), *tl_b_ = (b);                                  \
    if (!tl_a_ || !tl_b_ || strcmp(tl_a_, tl_b_) != 0)                      \
      tl_test_fail(__FILE__, __LINE__, "%s ==\n\"%s\"\nexpected\n\"%s\"",    \
                   #a, tl_a_ ? tl_a_ : "(null)", tl_b_ ? tl_b_ : "(null)");  \
  } while (0)

/* substring check, for error messages */
#define CHECK_CONTAINS(hay, needle)                                         \
  do {                                                                      \
    const char *tl_h_ = (hay), *tl_n_ = (needle);                           \
    if (!tl_h_ || !strstr(tl_h_, tl_n_))                                    \
      tl_test_fail(__FILE__, __LINE__, "%s == \"%s\" does not contain \"%s\"", \
                   #hay, tl_h_ ? tl_h_ : "(null)", tl_n_);                   \
  } while (0)

/* numpy's word on TL's files: PYTHON -I -c script arg, its exit status (128 + signal
 * when killed) and its stdout and stderr together in *out (malloc'd) */
#define PYTHON "/usr/bin/python3"
int tl_test_run_python(const char *script, const char *arg, char **out);
/* a script that must succeed and print exactly want */
#define CHECK_PYTHON(script, arg, want)                                                          \
  do {                                                                                           \
    char *py_out_;                                                                               \
    int py_rc_ = tl_test_run_python(script, arg, &py_out_);                                      \
    if (py_rc_ != 0)                                                                             \
      tl_test_fail(__FILE__, __LINE__, PYTHON " (with numpy) failed, status %d:\n%s", py_rc_,    \
                   py_out_ ? py_out_ : "");                                                      \
    else                                                                                         \
      CHECK_STR(py_out_, want);                                                                  \
    free(py_out_);                                                                               \
  } while (0)

/* a whole file as a string (malloc'd), NULL if it cannot be read */
char *tl_test_slurp(const char *path);

#endif
