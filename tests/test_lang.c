/* test_lang.c — the language's golden tests: every tests/lang/ ** /NAME.tl is compiled
 * and run in this process; its stdout must equal NAME.out, and its diagnostics or
 * run-time error NAME.err (then the exit code must be 1, else 0). A first line
 * `// tl-args: --mem-stats` adds the memory statistics to the output, `// tl-argv: a b`
 * gives the program arguments, `// tl-exit: N` the exit code it must end with (0 with
 * a NAME.err: the program compiles with warnings and runs). */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang.h"
#include "tl.h"
#include "test.h"

static int programs; /* registered at start-up */

static void run_one(const char *path, const char *backend) {
  size_t len;
  char *src = tl_lang_read_file(path, &len, stderr);
  if (!src) {
    tl_test_fail(__FILE__, __LINE__, "%s: unreadable", path);
    return;
  }
  char base[1024], want_path[1100];
  snprintf(base, sizeof base, "%.*s", (int)(strlen(path) - 3), path);
  snprintf(want_path, sizeof want_path, "%s.out", base);
  char *want_out = tl_test_slurp(want_path);
  snprintf(want_path, sizeof want_path, "%s.err", base);
  char *want_err = tl_test_slurp(want_path);
  char *out = NULL, *err = NULL;
  size_t nout = 0, nerr = 0;
  FILE *fo = open_memstream(&out, &nout), *fe = open_memstream(&err, &nerr);
  struct tl_stats_out st = {0};
  /* `// tl-argv: a b` first: the program's arguments after its path (args_get);
   * `// tl-exit: N` first: the exit code System::exit gives */
  char *argv[16] = {(char *)path}, words[256] = "";
  int argc = 1, want_code = -1;
  if (!strncmp(src, "// tl-argv:", 11)) {
    snprintf(words, sizeof words, "%.*s", (int)strcspn(src + 11, "\n"), src + 11);
    for (char *w = strtok(words, " "); w && argc < 16; w = strtok(NULL, " ")) argv[argc++] = w;
  }
  if (!strncmp(src, "// tl-exit:", 11)) want_code = atoi(src + 11);
  tl_lang_run_options o = {.out = fo, .err = fe, .mem_stats = strstr(src, "// tl-args: --mem-stats") == src, .stats = &st,
                           .argc = argc, .argv = argv, .backend = backend};
  int rc = tl_lang_run_source(path, src, len, &o);
  if (rc == 0 && (st.live_tensors || st.live_objects)) { /* every program that ends well ends with nothing live */
    tl_test_fail(__FILE__, __LINE__, "%s: %llu tensors and %llu objects live at exit", path, st.live_tensors,
                 st.live_objects);
  }
  fclose(fo);
  fclose(fe);
  int want_rc = want_code >= 0 ? want_code : want_err ? 1 : 0; /* warnings only: NAME.err and `// tl-exit: 0` */
  const char *wo = want_out ? want_out : "", *we = want_err ? want_err : "";
  if (rc != want_rc || strcmp(out, wo) || strcmp(err, we)) {
    tl_test_fail(__FILE__, __LINE__, "%s: exit %d (want %d)\n--- stdout:\n%s--- want:\n%s--- stderr:\n%s--- want:\n%s", path,
                 rc, want_rc, out, wo, err, we);
  }
  free(out);
  free(err);
  free(want_out);
  free(want_err);
  free(src);
}

static void run_golden(void *path) { run_one(path, NULL); }

/* the engine's programs (tensor, autograd, nn) on a device backend too, opencl or the
 * one TL_TEST_DEVICE names: the same output (PoCL in CI); each builds its kernels with
 * the device's compiler, so only these directories */
static void run_golden_device(void *path) {
  const char *device = getenv("TL_TEST_DEVICE") ? getenv("TL_TEST_DEVICE") : "opencl";
  if (tl_backend_usable(device) != TL_OK) {
    printf("  %s is not available here: %s\n", device, tl_last_error(NULL));
    tl_clear_error(NULL);
    return;
  }
  run_one(path, device);
}

static bool on_device_too(const char *rel, const char *path, const char *head) {
  static const char *const dirs[] = {"tensor/", "autograd/", "nn/"};
  bool engine = false;
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) engine |= !strncmp(rel, dirs[i], strlen(dirs[i]));
  if (!engine || !strncmp(head, "// tl-args", 10)) return false; /* --mem-stats counts what the backend made */
  char err[1100];
  snprintf(err, sizeof err, "%.*s.err", (int)(strlen(path) - 3), path);
  return access(err, F_OK) != 0; /* diagnostics are the compiler's, the same on any backend */
}

/* Each program is a test of its own (lang_golden/DIR/NAME), so the runner spreads
 * them over the cores; TL_LANG_TESTS=DIR registers another tree instead. */
static int register_program(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  size_t n = strlen(path);
  if (flag != FTW_F || n <= 3 || strcmp(path + n - 3, ".tl")) return 0;
  char head[16] = "";
  FILE *f = fopen(path, "rb");
  if (f) {
    if (!fgets(head, sizeof head, f)) head[0] = '\0';
    fclose(f);
  }
  if (!strncmp(head, "// tl-module", 12)) return 0; /* a module of another program (`mod name;`) */
  const char *rel = strncmp(path, "tests/lang/", 11) ? path : path + 11;
  char *name = malloc(strlen(rel) + 16), *copy = strdup(path);
  if (!name || !copy) return 1;
  sprintf(name, "lang_golden/%.*s", (int)(strlen(rel) - 3), rel);
  tl_test_register_arg(name, run_golden, copy, __FILE__);
  programs++;
  if (on_device_too(rel, path, head)) {
    char *name2 = malloc(strlen(rel) + 24), *copy2 = strdup(path); /* the runner frees each */
    if (!name2 || !copy2) return 1;
    sprintf(name2, "lang_golden_device/%.*s", (int)(strlen(rel) - 3), rel);
    tl_test_register_arg(name2, run_golden_device, copy2, __FILE__);
  }
  return 0;
}

static const char *golden_dir(void) { return getenv("TL_LANG_TESTS") ? getenv("TL_LANG_TESTS") : "tests/lang"; }

__attribute__((constructor)) static void register_golden_programs(void) {
  nftw(golden_dir(), register_program, 16, FTW_PHYS);
}

/* the tree was there and held programs (a wrong working directory registers none) */
TEST(lang_golden_programs_found) {
  if (programs < 1) tl_test_fail(__FILE__, __LINE__, "no TL programs under %s (run from the repository root)", golden_dir());
}

/* the `tl` command itself (build/tl, built by `make test`): check, --emit-c, build */
static char *run_cmd(const char *cmd, int *status) {
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  char *out = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&out, &n);
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, p)) > 0) fwrite(buf, 1, k, m);
  fclose(m);
  *status = pclose(p);
  return out;
}

TEST(lang_tl_command) {
  FILE *probe = fopen("build/tl", "rb");
  if (!probe) {
    tl_test_fail(__FILE__, __LINE__, "build/tl is missing: `make` builds it");
    return;
  }
  fclose(probe);
  int st;
  char *out = run_cmd("build/tl check tests/lang/core/recursion_fib.tl 2>&1", &st);
  CHECK_STR(out, "");
  CHECK_INT(st, 0);
  free(out);
  out = run_cmd("build/tl check tests/lang/diag/fn_name_as_value.tl 2>&1", &st);
  char *want = tl_test_slurp("tests/lang/diag/fn_name_as_value.err");
  CHECK_STR(out, want);
  CHECK(WEXITSTATUS(st) == 1);
  free(out);
  free(want);
  out = run_cmd("build/tl run --emit-c tests/lang/basics/readme_program.tl", &st);
  CHECK(out && strstr(out, "#line 8 \"tests/lang/basics/readme_program.tl\"") && strstr(out, "int tl_program_main("));
  CHECK_INT(st, 0);
  free(out);
  char cmd[512], exe[64];
  snprintf(exe, sizeof exe, "/tmp/tl-build-test-%d", (int)getpid());
  snprintf(cmd, sizeof cmd, "build/tl build tests/lang/basics/readme_program.tl -o %s 2>&1 && %s", exe, exe);
  out = run_cmd(cmd, &st);
  want = tl_test_slurp("tests/lang/basics/readme_program.out");
  CHECK_STR(out, want);
  CHECK_INT(st, 0);
  free(out);
  free(want);
  remove(exe);
  out = run_cmd("build/tl run --mem-stats tests/lang/runtime/int_division_by_zero.tl 2>&1", &st);
  CHECK(out && strstr(out, "runtime error: integer division by zero") && strstr(out, "mem: objects live=0"));
  CHECK(WEXITSTATUS(st) == 1);
  free(out);
  out = run_cmd("build/tl run /nonexistent.tl 2>&1", &st);
  CHECK_STR(out, "tl: cannot open /nonexistent.tl: No such file or directory\n");
  CHECK(WEXITSTATUS(st) == 1);
  free(out);
}

static int run_program(const char *src, char **out, struct tl_stats_out *st) {
  size_t n = 0;
  char *err = NULL;
  size_t nerr = 0;
  FILE *fo = open_memstream(out, &n), *fe = open_memstream(&err, &nerr);
  tl_lang_run_options o = {.out = fo, .err = fe, .stats = st};
  int rc = tl_lang_run_source("lazy.tl", src, strlen(src), &o);
  fclose(fo);
  fclose(fe);
  if (nerr) fprintf(stderr, "%s", err);
  free(err);
  return rc;
}

/* tensor expressions stay lazy across statements: five statements, one kernel */
TEST(lang_lazy_across_statements_fuses) {
  char *out = NULL;
  struct tl_stats_out st = {0};
  int rc = run_program("fn main() {\n  let x = Tensor::arange(0, 100) as f32;\n  let a = x * 2.0;\n"
                       "  let b = a + 1.0;\n  let c = b.relu();\n  let d = c * c;\n  println(d.sum().item());\n}\n",
                       &out, &st);
  CHECK_INT(rc, 0);
  CHECK_STR(out, "1333300.0\n"); /* sum (2i+1)^2, i < 100: exact in f32 */
  CHECK_INT(st.kernels_run, 1);
  CHECK_INT(st.live_tensors, 0);
  free(out);
}

/* a loop-carried tensor is realized every iteration: its graph never grows (one kernel
 * per turn, not a chain realized at the end) and the result is right */
TEST(lang_loop_carried_tensors_are_realized_each_iteration) {
  char *out = NULL;
  struct tl_stats_out st = {0};
  int rc = run_program("fn main() {\n  let mut acc = Tensor::zeros([4]);\n  for i in 0..50 {\n"
                       "    acc = acc + (i as f32);\n  }\n  println(acc);\n}\n",
                       &out, &st);
  CHECK_INT(rc, 0);
  CHECK_STR(out, "[1225. 1225. 1225. 1225.]\n");
  CHECK_INT(st.realizes, 50);
  CHECK_INT(st.live_tensors, 0);
  free(out);
}

/* A push's generated C: the copy-on-write check hands the Vec back instead of taking
 * its address, and the slot's address uses the element type's size. Either way round
 * (&v, v->esz), cc -O2 kept the Vec and a loop's sum in memory: vec_loop ran at 0.92
 * of C. Then the program runs: the copy made for a shared Vec leaves the other alone. */
TEST(lang_push_keeps_the_vec_in_a_register) {
  const char *src = "fn main() {\n  let mut v: Vec<i64> = Vec::new();\n  v.push(4);\n  let w = v.clone();\n"
                    "  v.push(5);\n  println(\"{:?} {:?}\", v, w);\n}\n";
  char *c = tl_lang_compile("push.tl", src, strlen(src), false, stderr);
  CHECK_CONTAINS(c, "v0_v = tlrt_vec_mut(R, v0_v, 5, 3);");
  CHECK_CONTAINS(c, "*(int64_t *)tlrt_vec_push_slot(R, v0_v, sizeof(int64_t), 5, 4) = t3;");
  CHECK(c && !strstr(c, "tlrt_vec_mut(R, &"));
  free(c);
  char *out = NULL;
  struct tl_stats_out st = {0};
  CHECK_INT(run_program(src, &out, &st), 0);
  CHECK_STR(out, "[4, 5] [4]\n");
  free(out);
}

/* a comprehension is one engine kernel: index spaces, body, filter and sum fuse */
TEST(lang_comprehension_runs_as_one_kernel) {
  char *out = NULL;
  struct tl_stats_out st = {0};
  int rc = run_program("fn main() {\n  let a = [[1.0, 2.0], [3.0, 4.0]];\n  let b = [[5.0, 6.0], [7.0, 8.0]];\n"
                       "  println([i, j | k <- 0..2 { a[i, k] * b[k, j] }]);\n}\n",
                       &out, &st);
  CHECK_INT(rc, 0);
  CHECK_STR(out, "[[19. 22.]\n [43. 50.]]\n");
  CHECK_INT(st.kernels_run, 1);
  free(out);
  out = NULL;
  rc = run_program("fn main() {\n  let m = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]];\n"
                   "  println([d | d <- 0..5, i <- 0..3, j <- 0..3, i + j == d { m[i, j] }]);\n}\n",
                   &out, &st);
  CHECK_INT(rc, 0);
  CHECK_STR(out, "[ 1.  6. 15. 14.  9.]\n"); /* the anti-diagonal sums */
  CHECK_INT(st.kernels_run, 1);
  free(out);
}

/* Tensor::manual_seed(n) is the C API's tl_manual_seed: a program's draws after it are
 * the ones a C caller gets from a fresh context with the same seed */
TEST(lang_manual_seed_matches_c_api) {
  char *out = NULL;
  int rc = run_program("fn main() {\n  Tensor::randn([3]);\n  Tensor::manual_seed(1234);\n"
                       "  let r = Tensor::randn([5]);\n  for i in 0..5 { print(\"{:.9} \", r[i]); }\n}\n",
                       &out, NULL);
  CHECK_INT(rc, 0);
  tl_ctx *ctx = tl_init();
  tl_manual_seed(ctx, 1234);
  tl_tensor *t = tl_randn(ctx, TL_F32, 1, (int64_t[]){5});
  const float *d = tl_data(t);
  CHECK(d != NULL);
  char want[200] = "";
  for (int i = 0; d && i < 5; i++) snprintf(want + strlen(want), sizeof want - strlen(want), "%.9f ", (double)d[i]);
  CHECK_STR(out, want);
  tl_release(t);
  tl_shutdown(ctx);
  free(out);
}
