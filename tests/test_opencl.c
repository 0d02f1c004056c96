/* test_opencl.c — the OpenCL driver (runtime/cl_driver.c) on whatever platform the
 * machine has (CI installs PoCL, which runs OpenCL C on the CPU with real work-groups,
 * local memory and barriers): loading and its errors, buffers and their accounting,
 * builds and their logs, launches. Expected values are computed here on the host.
 * Without a platform, the tests check the "not available" error and say that the
 * device tests did not run. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/render_gpu.h"
#include "core/scalar.h"
#include "runtime/cl_driver.h"
#include "test.h"

/* the driver, or NULL after checking the error says why it is not there */
static tl_cl *open_or_explain(void) {
  tl_cl *cl = NULL;
  tl_error err = {0};
  tl_status st = tl_cl_open(&cl, &err);
  if (st == TL_OK) return cl;
  CHECK_INT(st, TL_ERR_BACKEND);
  CHECK_CONTAINS(err.msg, "opencl: not available (");
  CHECK_CONTAINS(err.msg, "install pocl-opencl-icd");
  printf("  no OpenCL platform here (%s): device tests not run\n", err.msg);
  return NULL;
}

TEST(opencl_missing_library_is_a_clear_error) {
  const char *old = getenv("TL_OPENCL_LIB");
  char *saved = old ? strdup(old) : NULL;
  setenv("TL_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1);
  tl_cl *cl = NULL;
  tl_error err = {0};
  CHECK_INT(tl_cl_open(&cl, &err), TL_ERR_BACKEND);
  CHECK(cl == NULL);
  CHECK_CONTAINS(err.msg, "opencl: not available (cannot load /nonexistent/libOpenCL.so.1: install pocl-opencl-icd");
  if (saved) setenv("TL_OPENCL_LIB", saved, 1);
  else unsetenv("TL_OPENCL_LIB");
  free(saved);
}

TEST(opencl_device_reports_its_limits) {
  tl_cl *cl = open_or_explain();
  if (!cl) return;
  const tl_cl_caps *c = tl_cl_get_caps(cl);
  CHECK(c->device[0] != 0 && c->platform[0] != 0 && c->version[0] != 0);
  CHECK_CONTAINS(c->version, "OpenCL");
  CHECK(c->max_work_group >= 1);
  CHECK(c->local_bytes >= 1024); /* OpenCL 1.2 guarantees 32 KiB on a GPU, 1 KiB anywhere */
  CHECK(c->max_alloc >= 1 << 20 && c->max_alloc <= c->global_bytes);
  CHECK_INT(tl_cl_close(cl), 0);
}

static const char *add_src = "__kernel void add(__global const float *a, __global const float *b,\n"
                             "                  __global float *c, int n) {\n"
                             "  int i = get_global_id(0);\n"
                             "  if (i < n) c[i] = a[i] + b[i];\n"
                             "}\n";

/* c = a + b over 1000 floats (global 1024: the guard drops the rest); write, launch, read */
TEST(opencl_vector_add_round_trip) {
  tl_cl *cl = open_or_explain();
  if (!cl) return;
  enum { N = 1000 };
  float a[N], b[N], c[N];
  for (int i = 0; i < N; i++) a[i] = (float)i * 0.5f, b[i] = (float)(N - i), c[i] = -1;
  tl_error err = {0};
  tl_cl_buf *ba, *bb, *bc;
  CHECK_INT(tl_cl_alloc(cl, sizeof a, &ba, &err), TL_OK);
  CHECK_INT(tl_cl_alloc(cl, sizeof b, &bb, &err), TL_OK);
  CHECK_INT(tl_cl_alloc(cl, sizeof c, &bc, &err), TL_OK);
  CHECK_INT(tl_cl_get_stats(cl).live_buffers, 3);
  CHECK_INT(tl_cl_get_stats(cl).live_bytes, 3 * sizeof a);
  CHECK_INT(tl_cl_write(cl, ba, 0, a, sizeof a, &err), TL_OK);
  CHECK_INT(tl_cl_write(cl, bb, 0, b, sizeof b, &err), TL_OK);
  tl_cl_kernel *k = NULL;
  CHECK_INT(tl_cl_kernel_get(cl, add_src, "add", &k, &err), TL_OK);
  if (!k) {
    tl_cl_close(cl);
    return;
  }
  int n = N;
  tl_cl_arg args[4] = {{TL_CL_ARG_BUF, ba, NULL, 0}, {TL_CL_ARG_BUF, bb, NULL, 0}, {TL_CL_ARG_BUF, bc, NULL, 0},
                       {TL_CL_ARG_VALUE, NULL, &n, sizeof n}};
  size_t global = 1024;
  CHECK_INT(tl_cl_launch(cl, k, 4, args, 1, &global, NULL, &err), TL_OK);
  CHECK_INT(tl_cl_read(cl, bc, 0, c, sizeof c, &err), TL_OK);
  for (int i = 0; i < N; i++) CHECK(c[i] == (float)i * 0.5f + (float)(N - i));
  /* the same source again: built once */
  tl_cl_kernel *again;
  CHECK_INT(tl_cl_kernel_get(cl, add_src, "add", &again, &err), TL_OK);
  CHECK(again == k);
  CHECK_INT(tl_cl_get_stats(cl).builds + tl_cl_get_stats(cl).disk_hits, 1); /* built, or from an earlier run */
  CHECK_INT(tl_cl_get_stats(cl).program_hits, 1);
  /* device to device, at offsets: c[10..20) = a[0..10) */
  CHECK_INT(tl_cl_copy(cl, ba, 0, bc, 10 * sizeof(float), 10 * sizeof(float), &err), TL_OK);
  CHECK_INT(tl_cl_read(cl, bc, 0, c, sizeof c, &err), TL_OK);
  for (int i = 0; i < 10; i++) CHECK(c[10 + i] == a[i]);
  CHECK(c[9] == a[9] + b[9] && c[20] == a[20] + b[20]);
  tl_cl_free(cl, ba);
  tl_cl_free(cl, bb);
  tl_cl_free(cl, bc);
  CHECK_INT(tl_cl_get_stats(cl).live_bytes, 0);
  CHECK_INT(tl_cl_get_stats(cl).peak_bytes, 3 * sizeof a);
  CHECK_INT(tl_cl_close(cl), 0);
}

/* Row sums in one work-group per row: a tree in local memory with barriers, the shape
 * the GPU lowering gives a reduction. Rows of 1, 3, 1000 and 4097 against host sums. */
static const char *rowsum_src =
    "__kernel void rowsum(__global const float *x, __global float *out, int n, __local float *part) {\n"
    "  int row = get_group_id(0), lid = get_local_id(0), size = get_local_size(0);\n"
    "  float s = 0;\n"
    "  for (int i = lid; i < n; i += size) s += x[row * n + i];\n"
    "  part[lid] = s;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int h = size / 2; h > 0; h /= 2) {\n"
    "    if (lid < h) part[lid] += part[lid + h];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (lid == 0) out[row] = part[0];\n"
    "}\n";

TEST(opencl_work_group_tree_sums_rows) {
  tl_cl *cl = open_or_explain();
  if (!cl) return;
  static const int lengths[] = {1, 3, 1000, 4097};
  tl_error err = {0};
  tl_cl_kernel *k = NULL;
  CHECK_INT(tl_cl_kernel_get(cl, rowsum_src, "rowsum", &k, &err), TL_OK);
  if (!k) {
    printf("  %s\n", err.msg);
    tl_cl_close(cl);
    return;
  }
  size_t wg = tl_cl_get_caps(cl)->max_work_group >= 64 ? 64 : 1;
  for (int t = 0; t < 4; t++) {
    int n = lengths[t], rows = 3;
    float *x = malloc(sizeof *x * (size_t)(n * rows)), out[3];
    for (int i = 0; i < n * rows; i++) x[i] = (float)((i * 37) % 101) / 8.0f - 6.0f; /* exact in f32 sums */
    tl_cl_buf *bx, *bo;
    CHECK_INT(tl_cl_alloc(cl, sizeof *x * (size_t)(n * rows), &bx, &err), TL_OK);
    CHECK_INT(tl_cl_alloc(cl, sizeof out, &bo, &err), TL_OK);
    CHECK_INT(tl_cl_write(cl, bx, 0, x, sizeof *x * (size_t)(n * rows), &err), TL_OK);
    tl_cl_arg args[4] = {{TL_CL_ARG_BUF, bx, NULL, 0}, {TL_CL_ARG_BUF, bo, NULL, 0},
                         {TL_CL_ARG_VALUE, NULL, &n, sizeof n}, {TL_CL_ARG_LOCAL, NULL, NULL, wg * sizeof(float)}};
    size_t global = (size_t)rows * wg;
    CHECK_INT(tl_cl_launch(cl, k, 4, args, 1, &global, &wg, &err), TL_OK);
    CHECK_INT(tl_cl_read(cl, bo, 0, out, sizeof out, &err), TL_OK);
    for (int r = 0; r < rows; r++) {
      double want = 0;
      for (int i = 0; i < n; i++) want += x[r * n + i];
      CHECK_NEAR(out[r], want, 1e-3); /* eighths: every partial sum is exact in f32 */
    }
    tl_cl_free(cl, bx);
    tl_cl_free(cl, bo);
    free(x);
  }
  CHECK_INT(tl_cl_close(cl), 0);
}

/* A kernel that does not build: TL_ERR_COMPILER with the device's build log, which
 * names the line; nothing kept, and the next build works. */
TEST(opencl_build_failure_reports_the_log) {
  tl_cl *cl = open_or_explain();
  if (!cl) return;
  const char *bad = "__kernel void broken(__global float *x) {\n"
                    "  x[0] = undeclared_name + 1;\n"
                    "}\n";
  tl_error err = {0};
  tl_cl_kernel *k = NULL;
  CHECK_INT(tl_cl_kernel_get(cl, bad, "broken", &k, &err), TL_ERR_COMPILER);
  CHECK(k == NULL);
  CHECK_CONTAINS(err.msg, "opencl: the kernel did not build on ");
  CHECK_CONTAINS(err.msg, "undeclared_name");
  CHECK_CONTAINS(err.msg, ":2:");
  CHECK_INT(tl_cl_get_stats(cl).builds, 0);
  CHECK_INT(tl_cl_kernel_get(cl, add_src, "nope", &k, &err), TL_ERR_BACKEND);
  CHECK_CONTAINS(err.msg, "opencl: the program has no kernel `nope`");
  CHECK_INT(tl_cl_kernel_get(cl, add_src, "add", &k, &err), TL_OK);
  CHECK_INT(tl_cl_close(cl), 0);
}

/* More than the device takes in one buffer is TL_ERR_NOMEM, said in bytes; reads and
 * writes outside a buffer are range errors; a buffer left live is counted at close. */
TEST(opencl_out_of_memory_and_ranges_are_errors) {
  tl_cl *cl = open_or_explain();
  if (!cl) return;
  tl_error err = {0};
  tl_cl_buf *b = NULL;
  size_t huge = (size_t)tl_cl_get_caps(cl)->max_alloc + 1;
  CHECK_INT(tl_cl_alloc(cl, huge, &b, &err), TL_ERR_NOMEM);
  CHECK(b == NULL);
  CHECK_CONTAINS(err.msg, "opencl: out of device memory: a buffer of ");
  CHECK_INT(tl_cl_get_stats(cl).live_buffers, 0);
  CHECK_INT(tl_cl_alloc(cl, 16, &b, &err), TL_OK);
  char bytes[32] = {0};
  CHECK_INT(tl_cl_write(cl, b, 8, bytes, 16, &err), TL_ERR_RANGE);
  CHECK_CONTAINS(err.msg, "opencl: write of 16 bytes at 8 is outside a buffer of 16");
  CHECK_INT(tl_cl_read(cl, b, 17, bytes, 0, &err), TL_ERR_RANGE);
  CHECK_INT(tl_cl_close(cl), 1); /* b was never freed: reported, and freed by the close */
}

/* one run of add over 8 floats through a fresh driver: 1 when c = a + b came back */
static int run_add_once(tl_cl_stats *stats) {
  tl_cl *cl = NULL;
  tl_error err = {0};
  if (tl_cl_open(&cl, &err) != TL_OK) return 0;
  float a[8], b[8], c[8];
  for (int i = 0; i < 8; i++) a[i] = (float)i, b[i] = 10.0f * (float)i, c[i] = 0;
  tl_cl_buf *ba = NULL, *bb = NULL, *bc = NULL;
  tl_cl_kernel *k = NULL;
  int n = 8, ok = tl_cl_alloc(cl, sizeof a, &ba, &err) == TL_OK && tl_cl_alloc(cl, sizeof b, &bb, &err) == TL_OK &&
                  tl_cl_alloc(cl, sizeof c, &bc, &err) == TL_OK && tl_cl_write(cl, ba, 0, a, sizeof a, &err) == TL_OK &&
                  tl_cl_write(cl, bb, 0, b, sizeof b, &err) == TL_OK &&
                  tl_cl_kernel_get(cl, add_src, "add", &k, &err) == TL_OK;
  tl_cl_arg args[4] = {{TL_CL_ARG_BUF, ba, NULL, 0}, {TL_CL_ARG_BUF, bb, NULL, 0}, {TL_CL_ARG_BUF, bc, NULL, 0},
                       {TL_CL_ARG_VALUE, NULL, &n, sizeof n}};
  size_t global = 8;
  ok = ok && tl_cl_launch(cl, k, 4, args, 1, &global, NULL, &err) == TL_OK &&
       tl_cl_read(cl, bc, 0, c, sizeof c, &err) == TL_OK;
  for (int i = 0; ok && i < 8; i++) ok = c[i] == 11.0f * (float)i;
  *stats = tl_cl_get_stats(cl);
  tl_cl_close(cl); /* frees the three buffers */
  return ok;
}

/* the path of the one .clbin entry in dir (into out), or 0 */
static int find_entry(const char *dir, char *out, size_t cap) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int found = 0;
  while (d && (e = readdir(d)))
    if (strlen(e->d_name) == 38 && !strcmp(e->d_name + 32, ".clbin")) {
      snprintf(out, cap, "%s/%s", dir, e->d_name);
      found++;
    }
  if (d) closedir(d);
  return found == 1;
}

/* Program binaries are kept in the kernel cache directory: a second driver loads the
 * binary instead of building; a damaged entry and one others could write are refused,
 * rebuilt and replaced, and the results stay right. */
TEST(opencl_program_binaries_are_cached_and_checked) {
  tl_cl *probe = open_or_explain();
  if (!probe) return;
  tl_cl_close(probe);
  char dir[] = "/tmp/tl-cl-cache-XXXXXX", entry[512];
  CHECK(mkdtemp(dir) != NULL);
  setenv("TL_CACHE_DIR", dir, 1);
  tl_cl_stats s;
  CHECK(run_add_once(&s));
  CHECK_INT(s.disk_cache, 1);
  CHECK_INT(s.builds, 1);
  CHECK_INT(s.disk_stores, 1);
  CHECK(find_entry(dir, entry, sizeof entry));
  CHECK(run_add_once(&s)); /* from the disk */
  CHECK_INT(s.builds, 0);
  CHECK_INT(s.disk_hits, 1);
  FILE *f = fopen(entry, "r+b"); /* one byte changed: the checksum differs */
  CHECK(f != NULL);
  if (f) {
    int ch = fgetc(f);
    fseek(f, 0, SEEK_SET);
    fputc(ch ^ 0x5a, f);
    fclose(f);
  }
  CHECK(run_add_once(&s));
  CHECK_INT(s.disk_rejects, 1);
  CHECK_INT(s.builds, 1);
  CHECK_INT(s.disk_stores, 1);
  CHECK(run_add_once(&s)); /* the replacement is good */
  CHECK_INT(s.disk_hits, 1);
  CHECK_INT(chmod(entry, 0666), 0); /* others could have written it: refused */
  CHECK(run_add_once(&s));
  CHECK_INT(s.disk_rejects, 1);
  CHECK_INT(s.builds, 1);
  unsetenv("TL_CACHE_DIR");
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK_INT(system(cmd), 0);
}

/* A cache directory that cannot be used (a file where the directory should be) means
 * no disk cache, not an error: the program is built and runs. */
TEST(opencl_unusable_cache_directory_still_builds) {
  tl_cl *probe = open_or_explain();
  if (!probe) return;
  tl_cl_close(probe);
  char path[] = "/tmp/tl-cl-notadir-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  setenv("TL_CACHE_DIR", path, 1);
  tl_cl_stats s;
  CHECK(run_add_once(&s));
  CHECK_INT(s.disk_cache, 0);
  CHECK_INT(s.builds, 1);
  unsetenv("TL_CACHE_DIR");
  unlink(path);
}

/* The OpenCL prelude computes every scalar as the host does, bit for bit: Philox
 * uniforms (f32 and f64) for the same (seed, stream, index), tl_expf and tl_erff,
 * saturating float-to-integer casts, NaN-aware max, integer division, remainder and
 * power with their edge cases, over special values and a sweep. */
static const char *scalars_src =
    "__kernel void scalars(__global const float *xf, __global const double *xd, __global const long *a,\n"
    "                      __global const long *b, __global uint *u32, __global ulong *u64) {\n"
    "  int i = get_global_id(0);\n"
    "  u32[8 * i + 0] = as_uint(tl_uniform_f32(0x1234567890abcdefUL, 7, i));\n"
    "  u64[4 * i + 0] = as_ulong(tl_uniform_f64(42, 0xffffffffffUL, (long)i * 1000003));\n"
    "  u32[8 * i + 1] = as_uint(tl_expf(xf[i]));\n"
    "  u32[8 * i + 2] = as_uint(tl_erff(xf[i]));\n"
    "  u32[8 * i + 3] = (uint)tl_f32_to_i32(xf[i]);\n"
    "  u32[8 * i + 4] = (uint)tl_f64_to_i32(xd[i]);\n"
    "  u32[8 * i + 5] = as_uint(tl_max_f32(xf[i], xf[(i + 1) % get_global_size(0)]));\n"
    "  u32[8 * i + 6] = (uint)tl_idiv_i32((int)a[i], (int)b[i]);\n"
    "  u32[8 * i + 7] = (uint)tl_mod_i32((int)a[i], (int)b[i]);\n"
    "  u64[4 * i + 1] = (ulong)tl_f32_to_i64(xf[i]) ^ (ulong)tl_f64_to_i64(xd[i]) * 3;\n"
    "  u64[4 * i + 2] = (ulong)tl_idiv_i64(a[i], b[i]) ^ (ulong)tl_mod_i64(a[i], b[i]) * 5;\n"
    "  u64[4 * i + 3] = (ulong)tl_pow_i64(a[i] % 7, b[i] % 23);\n"
    "}\n";

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static uint64_t f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

TEST(opencl_prelude_computes_scalars_as_the_host) {
  tl_cl *cl = open_or_explain();
  if (!cl) return;
  if (!tl_cl_get_caps(cl)->has_f64) {
    printf("  the device has no fp64: the prelude check needs it\n");
    tl_cl_close(cl);
    return;
  }
  enum { N = 4096, SPECIAL = 24 };
  static const float fs[SPECIAL] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 88.7f, 88.73f, -87.0f, -103.9f, -104.5f,
                                    2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483904.0f, 1e-40f, -3.9f,
                                    3.95f, 0.89f, 0.91f, 1e30f, -1e30f, 9.3e18f, 0, 0};
  float *xf = malloc(sizeof *xf * N);
  double *xd = malloc(sizeof *xd * N);
  int64_t *a = malloc(sizeof *a * N), *b = malloc(sizeof *b * N);
  uint32_t *u32 = malloc(sizeof *u32 * 8 * N);
  uint64_t *u64 = malloc(sizeof *u64 * 4 * N);
  uint64_t s = 99;
  for (int i = 0; i < N; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    xf[i] = i < SPECIAL - 2 ? fs[i] : (float)((double)(int64_t)(s >> 11) / 9007199254740992.0 * 60.0 - 30.0);
    xd[i] = i < SPECIAL - 2 ? (double)fs[i] * 1.0000001 : (double)(int64_t)s / 4e9;
    a[i] = (int64_t)(s >> 3) - (int64_t)(s >> 5) * (i % 3);
    b[i] = i % 5 == 0 ? 0 : i % 7 == 0 ? -1 : (int64_t)(s % 1000) - 500;
  }
  float nan = (float)(0.0 / 0.0), inf = (float)(1e308 * 10.0);
  xf[SPECIAL - 2] = nan;
  xf[SPECIAL - 1] = inf;
  xd[SPECIAL - 2] = (double)nan;
  xd[SPECIAL - 1] = -(double)inf;
  a[0] = INT64_MIN, b[0] = -1; /* wraps, as the host's */
  char *src = malloc(strlen(tl_render_gpu_prelude(TL_GPU_OPENCL)) + strlen(scalars_src) + 1);
  strcpy(src, tl_render_gpu_prelude(TL_GPU_OPENCL));
  strcat(src, scalars_src);
  tl_error err = {0};
  tl_cl_kernel *k = NULL;
  tl_cl_buf *bxf = NULL, *bxd = NULL, *ba = NULL, *bb = NULL, *bu32 = NULL, *bu64 = NULL;
  CHECK_INT(tl_cl_kernel_get(cl, src, "scalars", &k, &err), TL_OK);
  if (!k) printf("  %s\n", err.msg);
  int ok = k && tl_cl_alloc(cl, sizeof *xf * N, &bxf, &err) == TL_OK && tl_cl_alloc(cl, sizeof *xd * N, &bxd, &err) == TL_OK &&
           tl_cl_alloc(cl, sizeof *a * N, &ba, &err) == TL_OK && tl_cl_alloc(cl, sizeof *b * N, &bb, &err) == TL_OK &&
           tl_cl_alloc(cl, sizeof *u32 * 8 * N, &bu32, &err) == TL_OK &&
           tl_cl_alloc(cl, sizeof *u64 * 4 * N, &bu64, &err) == TL_OK &&
           tl_cl_write(cl, bxf, 0, xf, sizeof *xf * N, &err) == TL_OK &&
           tl_cl_write(cl, bxd, 0, xd, sizeof *xd * N, &err) == TL_OK &&
           tl_cl_write(cl, ba, 0, a, sizeof *a * N, &err) == TL_OK && tl_cl_write(cl, bb, 0, b, sizeof *b * N, &err) == TL_OK;
  tl_cl_arg args[6] = {{TL_CL_ARG_BUF, bxf, NULL, 0}, {TL_CL_ARG_BUF, bxd, NULL, 0}, {TL_CL_ARG_BUF, ba, NULL, 0},
                       {TL_CL_ARG_BUF, bb, NULL, 0}, {TL_CL_ARG_BUF, bu32, NULL, 0}, {TL_CL_ARG_BUF, bu64, NULL, 0}};
  size_t global = N;
  ok = ok && tl_cl_launch(cl, k, 6, args, 1, &global, NULL, &err) == TL_OK &&
       tl_cl_read(cl, bu32, 0, u32, sizeof *u32 * 8 * N, &err) == TL_OK &&
       tl_cl_read(cl, bu64, 0, u64, sizeof *u64 * 4 * N, &err) == TL_OK;
  CHECK(ok);
  int bad = 0;
  for (int i = 0; ok && i < N && bad < 10; i++) {
    uint32_t w32[8] = {f32_bits(tl_uniform_f32(0x1234567890abcdefULL, 7, i)), f32_bits(tl_expf(xf[i])),
                       f32_bits(tl_erff(xf[i])), (uint32_t)tl_f32_to_i32(xf[i]), (uint32_t)tl_f64_to_i32(xd[i]),
                       f32_bits(tl_max_f32(xf[i], xf[(i + 1) % N])), (uint32_t)tl_idiv_i32((tl_i32)a[i], (tl_i32)b[i]),
                       (uint32_t)tl_mod_i32((tl_i32)a[i], (tl_i32)b[i])};
    uint64_t w64[4] = {f64_bits(tl_uniform_f64(42, 0xffffffffffULL, (tl_i64)i * 1000003)),
                       (uint64_t)tl_f32_to_i64(xf[i]) ^ (uint64_t)tl_f64_to_i64(xd[i]) * 3,
                       (uint64_t)tl_idiv_i64(a[i], b[i]) ^ (uint64_t)tl_mod_i64(a[i], b[i]) * 5,
                       (uint64_t)tl_pow_i64(a[i] % 7, b[i] % 23)};
    for (int j = 0; j < 8; j++)
      if (u32[8 * i + j] != w32[j] && bad++ < 10) printf("  i %d (x %g) column %d: device %08x host %08x\n", i, (double)xf[i], j, u32[8 * i + j], w32[j]);
    for (int j = 0; j < 4; j++)
      if (u64[4 * i + j] != w64[j] && bad++ < 10) printf("  i %d column64 %d: device %016llx host %016llx\n", i, j, (unsigned long long)u64[4 * i + j], (unsigned long long)w64[j]);
  }
  CHECK_INT(bad, 0);
  free(src), free(xf), free(xd), free(a), free(b), free(u32), free(u64);
  CHECK_INT(tl_cl_close(cl), 6); /* the six buffers, freed by the close */
}

/* A context that queues kernels it never waits for, then ends, and the process exits:
 * the driver's workers must be done first. PoCL compiles a kernel in a worker when it
 * first runs; exiting under it tore LLVM down mid-build ("Failed to create kernel
 * compiler pass", an abort). Each child starts with an empty PoCL cache, so every
 * kernel is compiled; they must all exit 0. */
static int queue_and_exit(void) {
  char dir[] = "/tmp/tl_pocl_cache_XXXXXX";
  if (!mkdtemp(dir)) return 2;
  setenv("POCL_CACHE_DIR", dir, 1);
  if (tl_backend_usable("opencl") != TL_OK) return 10; /* no platform here */
  tl_ctx *ctx = tl_init();
  if (!ctx || tl_set_backend(ctx, "opencl") != TL_OK) return 3;
  int64_t n = 4099;
  tl_tensor *x = tl_arange(ctx, TL_F32, 0, (double)n, 1);
  tl_tensor *outs[] = {tl_exp(x), tl_sqrt(x), tl_tanh(x), tl_neg(tl_abs(x)), tl_mul_scalar(tl_sin(x), 3),
                       tl_sum(x, 0, NULL, 0), tl_max(x, 0, NULL, 0), tl_softmax(x, 0)};
  for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
    if (tl_realize(outs[i]) != TL_OK) return 4;
  tl_shutdown(ctx); /* no value read back: the kernels may still be queued */
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : 5;
}

TEST(opencl_queued_kernels_finish_before_exit) {
  /* this process never loads the driver: a fork of one whose threads hold its locks
   * could deadlock */
  for (int run = 0; run < 4; run++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) _exit(queue_and_exit());
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 10) {
      printf("  opencl is not available here\n");
      return;
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (!WIFEXITED(status)) printf("  run %d: killed by signal %d\n", run, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
}
