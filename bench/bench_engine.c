/* bench_engine.c — `make bench`: TL against numpy, run in the same invocation.
 * Prints per workload: bench: NAME tl_ms=X peer=numpy peer_ms=Y ratio=Y/X threads=N
 * (ratio > 1: TL is faster); realize_small, the fixed cost of a realize, against torch
 * (bench/peer_torch_small.py), also in microseconds (tl_us=, peer_us=). Times are medians of 7 runs after 2 warm-ups. numpy runs
 * with TL's thread count (OPENBLAS_NUM_THREADS). Matrix products also print their
 * gflops=, peak_gflops= and peak_isa=, the FMA peak of the cores measured here
 * (register-only FMAs at the widest vectors the CPU has: avx512, avx2 or sse, on as many
 * threads): GEMM is judged against the machine, whose BLAS may not be tuned for it; and
 * torch's median for the same product with the same thread count
 * (bench/peer_torch_matmul.py: torch_ms=, torch_ratio=). The GEMM section starts with
 * the BLAS numpy runs (bench: numpy_blas ..., OpenBLAS's core: the kernels it picked).
 * Products run in rounds of TL, numpy and torch (BENCH_ROUNDS, default 3: bench_util.h);
 * their times are the medians over rounds and ratio= the median of the rounds' ratios.
 * The fused chain, softmax and products get one more line per peer that pip installs
 * (bench_util.h: jax, tinygrad), peer=jax|tinygrad on the same thread count, or
 * peer_ms=nan with a note= saying why it is not there. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "tl.h"

typedef tl_tensor *(*workload_fn)(tl_tensor **in);


static tl_tensor *fused_chain(tl_tensor **in) {
  tl_tensor *ab = tl_mul(in[0], in[1]), *abc = tl_add(ab, in[2]), *r = tl_relu(abc);
  tl_tensor *y = tl_mul_scalar(r, 0.5);
  tl_release(ab);
  tl_release(abc);
  tl_release(r);
  return y;
}
static tl_tensor *rowsum(tl_tensor **in) { return tl_sum(in[0], 1, (int[]){1}, 0); }
static tl_tensor *softmax(tl_tensor **in) { return tl_softmax(in[0], 1); }
static tl_tensor *matmul(tl_tensor **in) { return tl_matmul(in[0], in[1]); }

/* TL's thread count: the pool's rule (TL_THREADS, else the online cores) */
static int tl_threads(void) {
  const char *env = getenv("TL_THREADS");
  int n = env ? atoi(env) : 0;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? n : cores > 0 ? (int)cores : 1;
}

/* ---- the FMA peak ----------------------------------------------------------------------
 * Twelve independent chains of FMAs (two FMA pipes times four cycles of latency need at
 * least eight), nothing but registers: the most a core can do, at the widest vectors it
 * has: 512-bit where it has AVX-512 (each loop compiled for its ISA, chosen at run time,
 * so the bench runs on any x86-64), else 256-bit AVX2+FMA, else 128-bit multiplies and
 * adds (SSE). */
typedef float v16f __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));
enum { PEAK_ITERS = 20000000 };
typedef enum { ISA_SSE, ISA_AVX2, ISA_AVX512 } peak_isa;
static const char *const isa_names[] = {"sse", "avx2", "avx512"};
static const int isa_flops_per_op[] = {8, 16, 32}; /* a mul+add of 4 lanes, an FMA of 8 or 16 */

/* twelve named accumulators (an array would live in memory); the empty asm keeps
 * each one a register the compiler cannot fold away ("v": any of AVX-512's 32) */
#define PEAK_CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define PEAK_INIT(i) V a##i = x + (float)i;
#define PEAK_SUM(i) s += a##i[0];
__attribute__((target("avx512f"), noinline)) static float fma512_loop(long n, float seed) {
  typedef v16f V;
  V x = (V){0} + seed, y = x * 0.999f;
  PEAK_CHAINS(PEAK_INIT)
  for (long i = 0; i < n; i++) {
/* _mm512_fmadd_ps: all 16 lanes (mask -1), the current rounding (4) */
#define PEAK_FMA512(i) a##i = __builtin_ia32_vfmaddps512_mask(a##i, y, x, (unsigned short)-1, 4); __asm__("" : "+v"(a##i));
    PEAK_CHAINS(PEAK_FMA512)
  }
  float s = 0;
  PEAK_CHAINS(PEAK_SUM)
  return s;
}
__attribute__((target("avx2,fma"), noinline)) static float fma_loop(long n, float seed) {
  typedef v8f V;
  V x = {seed, seed, seed, seed, seed, seed, seed, seed}, y = x * 0.999f;
  PEAK_CHAINS(PEAK_INIT)
  for (long i = 0; i < n; i++) {
#define PEAK_FMA(i) a##i = __builtin_ia32_vfmaddps256(a##i, y, x); __asm__("" : "+x"(a##i));
    PEAK_CHAINS(PEAK_FMA)
  }
  float s = 0;
  PEAK_CHAINS(PEAK_SUM)
  return s;
}
__attribute__((noinline)) static float muladd_loop(long n, float seed) {
  typedef v4f V;
  V x = {seed, seed, seed, seed}, y = x * 0.999f;
  PEAK_CHAINS(PEAK_INIT)
  for (long i = 0; i < n; i++) {
#define PEAK_MULADD(i) a##i = a##i * y + x; __asm__("" : "+x"(a##i));
    PEAK_CHAINS(PEAK_MULADD)
  }
  float s = 0;
  PEAK_CHAINS(PEAK_SUM)
  return s;
}

/* the widest vector ISA the CPU and the OS (saved register state) support */
static peak_isa widest_isa(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return ISA_AVX512;
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? ISA_AVX2 : ISA_SSE;
}

static peak_isa isa;
static void *peak_thread(void *arg) {
  float *out = arg;
  *out = isa == ISA_AVX512 ? fma512_loop(PEAK_ITERS, 1.0f)
         : isa == ISA_AVX2 ? fma_loop(PEAK_ITERS, 1.0f)
                           : muladd_loop(PEAK_ITERS, 1.0f);
  return NULL;
}

/* GFLOP/s of `threads` threads at once at the widest ISA (set in isa), the median of 3 runs */
static double peak_gflops(int threads) {
  isa = widest_isa();
  double flops = (double)PEAK_ITERS * 12 * isa_flops_per_op[isa] * threads, g[3];
  pthread_t th[256];
  float sink[256];
  if (threads > 256) threads = 256;
  for (int r = 0; r < 3; r++) {
    double t0 = now_ms();
    for (int i = 1; i < threads; i++) pthread_create(&th[i], NULL, peak_thread, &sink[i]);
    peak_thread(&sink[0]);
    for (int i = 1; i < threads; i++) pthread_join(th[i], NULL);
    g[r] = flops / ((now_ms() - t0) * 1e6);
  }
  qsort(g, 3, sizeof g[0], by_value);
  return g[1];
}

static double time_tl(tl_ctx *ctx, workload_fn f, tl_tensor **in) {
  static double t[BENCH_MAX_RUNS];
  int runs = 7;
  for (int i = -2; i < runs; i++) {
    double t0 = now_ms();
    tl_tensor *y = f(in);
    if (!y || tl_realize(y) != TL_OK) {
      fprintf(stderr, "bench: %s\n", tl_last_error(ctx));
      exit(1);
    }
    tl_release(y);
    if (i >= 0) t[i] = now_ms() - t0;
    if (i == -1) runs = bench_timed_runs(now_ms() - t0); /* the last warm-up's time */
  }
  return median_of(t, runs);
}

/* the number a peer command prints after `name` on a line of its own, or -1 */
static double peer_median(const char *cmd, const char *name) {
  char line[256];
  FILE *p = popen(cmd, "r");
  double ms = -1;
  if (!p) return -1;
  while (fgets(line, sizeof line, p)) {
    char got[64];
    double v;
    if (sscanf(line, "%63s %lf", got, &v) == 2 && !strcmp(got, name)) ms = v;
  }
  pclose(p);
  return ms;
}

/* numpy's median for one workload, or -1 if numpy is not there */
static double time_numpy(const char *name) {
  char cmd[512];
  int n = tl_threads();
  snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=%d OMP_NUM_THREADS=%d %s bench/peer_numpy.py %s 2>/dev/null", n, n,
           peer_python(), name);
  return peer_median(cmd, name);
}

/* torch's median for a matrix product, or -1 if torch is not there */
static double time_torch_matmul(const char *name) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=%d %s bench/peer_torch_matmul.py %s %d 2>/dev/null", tl_threads(),
           peer_python(), name, tl_threads());
  return peer_median(cmd, name);
}

/* once, before the first product: the BLAS numpy multiplies with (OpenBLAS's core, config) */
static void print_numpy_blas(void) {
  char cmd[512], line[1024];
  int n = tl_threads();
  snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=%d OMP_NUM_THREADS=%d %s bench/peer_numpy.py blas_info 2>/dev/null", n,
           n, peer_python());
  FILE *p = popen(cmd, "r");
  const char *got = "none (numpy did not run)";
  if (p) {
    while (fgets(line, sizeof line, p))
      if (!strncmp(line, "blas_info ", 10)) {
        line[strcspn(line, "\n")] = 0;
        got = line + 10;
      }
    pclose(p);
  }
  printf("bench: numpy_blas %s\n", got);
  fflush(stdout);
}

/* a product's rate beside the machine's: gflops=, peak_gflops= and its ISA, the peer's rate */
static void print_gemm_rates(double tl_ms, double flops, double peer_ms) {
  static double peak;
  if (!peak) peak = peak_gflops(tl_threads());
  printf(" gflops=%.1f peak_gflops=%.1f peak_isa=%s", flops / (tl_ms * 1e6), peak, isa_names[isa]);
  if (peer_ms > 0) printf(" peer_gflops=%.1f", flops / (peer_ms * 1e6));
}

/* the lines of the peers pip installs (jax, tinygrad), on TL's thread count */
static void report_extra_peers(const char *name, double tl_ms, double flops) {
  for (int i = 0; i < BENCH_EXTRA_PEERS; i++) {
    const char *why;
    double ms = extra_peer_ms(bench_extra_peers[i], name, tl_threads(), &why);
    if (ms > 0)
      printf("bench: %s tl_ms=%.3f peer=%s peer_ms=%.3f ratio=%.2f threads=%d", name, tl_ms, bench_extra_peers[i], ms,
             ms / tl_ms, tl_threads());
    else
      printf("bench: %s tl_ms=%.3f peer=%s peer_ms=nan ratio=nan threads=%d note=%s", name, tl_ms,
             bench_extra_peers[i], tl_threads(), why);
    if (flops > 0) print_gemm_rates(tl_ms, flops, ms);
    printf("\n");
    fflush(stdout);
  }
}

/* flops: of a matrix product (0: not one); then torch is timed too. extra: the peers pip
 * installs run it too */
static void report(tl_ctx *ctx, const char *name, workload_fn f, tl_tensor **in, double flops, int extra) {
  static int blas_told;
  if (flops > 0 && !blas_told++) print_numpy_blas();
  /* products: rounds of TL, numpy and torch (bench_rounds); the rest: one */
  int rounds = flops > 0 ? bench_rounds() : 1, nr = 0, nt = 0;
  double tl[BENCH_MAX_ROUNDS], np[BENCH_MAX_ROUNDS], ratio[BENCH_MAX_ROUNDS], th[BENCH_MAX_ROUNDS],
      tratio[BENCH_MAX_ROUNDS];
  for (int r = 0; r < rounds; r++) {
    tl[r] = time_tl(ctx, f, in);
    np[r] = time_numpy(name);
    if (np[r] > 0) ratio[nr++] = np[r] / tl[r];
    double t = flops > 0 ? time_torch_matmul(name) : -1;
    if (t > 0) th[nt] = t, tratio[nt++] = t / tl[r];
  }
  double tl_ms = median_of(tl, rounds), peer = nr == rounds ? median_of(np, rounds) : -1;
  if (peer > 0)
    printf("bench: %s tl_ms=%.3f peer=numpy peer_ms=%.3f ratio=%.2f threads=%d", name, tl_ms, peer,
           median_of(ratio, nr), tl_threads());
  else
    printf("bench: %s tl_ms=%.3f peer=none peer_ms=nan ratio=nan threads=%d", name, tl_ms, tl_threads());
  if (flops > 0) {
    print_gemm_rates(tl_ms, flops, peer);
    if (nt == rounds)
      printf(" torch_ms=%.3f torch_ratio=%.2f", median_of(th, nt), median_of(tratio, nt));
    printf(" rounds=%d", rounds);
    print_ratio_range(ratio, nr);
  }
  printf("\n");
  fflush(stdout);
  if (extra) report_extra_peers(name, tl_ms, flops);
}

/* realize_small: relu(a * b + c) on 64 floats built and realized again and again, its
 * kernel compiled once: what a realize costs beyond its arithmetic. Per call: the median
 * of 7 batches of SMALL_CALLS after a warm-up batch. */
enum { SMALL_CALLS = 20000 };
static double time_small(tl_ctx *ctx, tl_tensor **in) {
  double t[7];
  for (int i = -1; i < 7; i++) {
    double t0 = now_ms();
    for (int c = 0; c < SMALL_CALLS; c++) {
      tl_tensor *ab = tl_mul(in[0], in[1]), *abc = tl_add(ab, in[2]), *y = tl_relu(abc);
      if (!y || tl_realize(y) != TL_OK) {
        fprintf(stderr, "bench: %s\n", tl_last_error(ctx));
        exit(1);
      }
      tl_release(ab);
      tl_release(abc);
      tl_release(y);
    }
    if (i >= 0) t[i] = (now_ms() - t0) / SMALL_CALLS;
  }
  qsort(t, 7, sizeof t[0], by_value);
  return t[3];
}

/* torch's ms per call of the same 3 eager ops, or -1 if torch is not there */
static double time_torch_small(void) {
  char cmd[512], line[256];
  snprintf(cmd, sizeof cmd, "%s bench/peer_torch_small.py %d 2>/dev/null", peer_python(), tl_threads());
  FILE *p = popen(cmd, "r");
  double ms = -1;
  if (!p) return -1;
  while (fgets(line, sizeof line, p)) {
    double v;
    if (sscanf(line, "realize_small %lf", &v) == 1) ms = v;
  }
  pclose(p);
  return ms;
}

static void bench_small(tl_ctx *ctx) {
  int64_t n = 64;
  tl_tensor *in[3];
  for (int i = 0; i < 3; i++) {
    in[i] = tl_randn(ctx, TL_F32, 1, &n);
    tl_realize(in[i]);
  }
  double ms = time_small(ctx, in), peer = time_torch_small();
  if (peer > 0)
    printf("bench: realize_small tl_ms=%.5f peer=torch peer_ms=%.5f ratio=%.2f threads=%d tl_us=%.2f peer_us=%.2f\n",
           ms, peer, peer / ms, tl_threads(), ms * 1e3, peer * 1e3);
  else
    printf("bench: realize_small tl_ms=%.5f peer=none peer_ms=nan ratio=nan threads=%d tl_us=%.2f\n", ms,
           tl_threads(), ms * 1e3);
  fflush(stdout);
  for (int i = 0; i < 3; i++) tl_release(in[i]);
}

int main(int argc, char **argv) {
  bench_clean_blas_env();
  tl_ctx *ctx = tl_init();
  tl_manual_seed(ctx, 0);
  const char *only = argc > 1 ? argv[1] : NULL;
  int64_t n = 16 << 20, sq[2] = {4096, 4096}, mm[2] = {1024, 1024}, big[2] = {2048, 2048};
  int64_t x_shape[2] = {128, 784}, w_shape[2] = {784, 256};
  tl_tensor *v[3], *m, *p, *q, *p2, *q2, *x, *w;
  for (int i = 0; i < 3; i++) {
    v[i] = tl_randn(ctx, TL_F32, 1, &n);
    tl_realize(v[i]);
  }
  m = tl_randn(ctx, TL_F32, 2, sq);
  p = tl_randn(ctx, TL_F32, 2, mm);
  q = tl_randn(ctx, TL_F32, 2, mm);
  tl_realize(m);
  p2 = tl_randn(ctx, TL_F32, 2, big);
  q2 = tl_randn(ctx, TL_F32, 2, big);
  x = tl_randn(ctx, TL_F32, 2, x_shape);
  w = tl_randn(ctx, TL_F32, 2, w_shape);
  tl_tensor *all[] = {p, q, p2, q2, x, w};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tl_realize(all[i]);
  struct {
    const char *name;
    workload_fn f;
    tl_tensor *in[3];
    double flops;
    int extra; /* jax and tinygrad run it too */
  } work[] = {
      {"fused_chain_16M", fused_chain, {v[0], v[1], v[2]}, 0, 1},
      {"rowsum_4096", rowsum, {m}, 0, 0},
      {"softmax_4096", softmax, {m}, 0, 1},
      {"matmul_1024", matmul, {p, q}, 2.0 * 1024 * 1024 * 1024, 1},
      {"matmul_2048", matmul, {p2, q2}, 2.0 * 2048 * 2048 * 2048, 1},
      {"matmul_128x784x256", matmul, {x, w}, 2.0 * 128 * 784 * 256, 1},
  };
  for (size_t i = 0; i < sizeof work / sizeof work[0]; i++)
    if (!only || !strcmp(only, work[i].name))
      report(ctx, work[i].name, work[i].f, work[i].in, work[i].flops, work[i].extra);
  if (!only || !strcmp(only, "realize_small")) bench_small(ctx);
  tl_shutdown(ctx);
  return 0;
}
