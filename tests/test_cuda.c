/* test_cuda.c — the cuda backend where no GPU is: the driver says why it cannot run,
 * and every kind of kernel the GPU renderer writes (elementwise chains, work-group
 * reductions, both GEMMs with their epilogues, scatter-add, random streams, casts,
 * SINKs of several shapes) compiles as CUDA C with NVRTC for sm_90, and its PTX
 * assembles with ptxas, when the CUDA toolkit is here (it is on CI's machines). On a GPU, the differential suite
 * and the golden programs run with TL_BACKEND=cuda (bench/gpu_check.sh). */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string.h>

#include "api/context.h"
#include "codegen/render_gpu.h"
#include "graph/build.h"
#include "graph/rewrite.h"
#include "runtime/cuda_driver.h"
#include "test.h"

TEST(cuda_without_a_driver_is_a_clear_error) {
  char *saved = tl_test_env_save("TL_CUDA_LIB");
  setenv("TL_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
  tl_cuda *c = NULL;
  tl_error err = {0};
  CHECK_INT(tl_cuda_open(&c, &err), TL_ERR_BACKEND);
  CHECK_STR(err.msg, "cuda: not available (libcuda.so.1 not found: no NVIDIA driver)");
  CHECK(c == NULL);
  tl_test_env_restore("TL_CUDA_LIB", saved);
  const char *about, *why;
  CHECK_STR(tl_backend_info(3, &about, &why), "cuda");
  if (why) CHECK(strstr(why, "libcuda.so.1 not found") || strstr(why, "no CUDA device") || strstr(why, "NVRTC"));
}

/* the GPU of a rank (NCCL needs one per rank): TL_CUDA_DEVICE when it names one, else
 * the launcher's local rank modulo the GPUs, else the first */
TEST(cuda_device_of_a_rank) {
  static const char *const vars[] = {"TL_CUDA_DEVICE", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                     "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"};
  char *saved[5];
  for (int i = 0; i < 5; i++) saved[i] = tl_test_env_save(vars[i]), unsetenv(vars[i]);
  CHECK_INT(tl_cuda_device_index(4), 0);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "5", 1);
  CHECK_INT(tl_cuda_device_index(4), 1);
  CHECK_INT(tl_cuda_device_index(1), 0);
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  setenv("SLURM_LOCALID", "2", 1);
  CHECK_INT(tl_cuda_device_index(8), 2);
  setenv("TL_CUDA_DEVICE", "3", 1); /* it wins */
  CHECK_INT(tl_cuda_device_index(8), 3);
  CHECK_INT(tl_cuda_device_index(2), 0); /* no GPU 3 of 2 */
  for (int i = 0; i < 5; i++) tl_test_env_restore(vars[i], saved[i]);
}

/* ptxas, where the toolkit has it: NULL when not */
static const char *ptxas_path(void) {
  static const char *path;
  static bool looked;
  if (!looked) {
    looked = true;
    const char *own = getenv("TL_PTXAS");
    if (own && access(own, X_OK) == 0) path = own;
    else if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0) path = "/usr/local/cuda/bin/ptxas";
  }
  return path;
}

/* ptx assembled for sm_90 by ptxas (0), or its diagnostics in why */
static int assemble(const char *ptx, char *why, size_t cap) {
  char in[] = "/tmp/tl_ptx_XXXXXX", out[] = "/tmp/tl_ptx_log_XXXXXX";
  int fd = mkstemp(in), lfd = mkstemp(out);
  if (fd < 0 || lfd < 0 || write(fd, ptx, strlen(ptx)) != (ssize_t)strlen(ptx)) {
    snprintf(why, cap, "cannot write a temporary file");
    return -1;
  }
  close(fd);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(lfd, 1), dup2(lfd, 2);
    execl(ptxas_path(), "ptxas", "-arch=sm_90", "-o", "/dev/null", in, (char *)NULL);
    _exit(127);
  }
  int status = -1;
  if (pid > 0) waitpid(pid, &status, 0);
  ssize_t n = pread(lfd, why, cap - 1, 0);
  why[n > 0 ? n : 0] = 0;
  close(lfd);
  unlink(in), unlink(out);
  return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* compiles, for CUDA and sm_90, every kernel of t's schedule, as the GPU (local memory
 * tiles) and as the CPU (vector GEMM) would have it; returns the kernels compiled */
static int compile_schedule(tl_nvrtc *n, tl_tensor *handle, const char *what) {
  static const tl_ruleset *const rules[] = {&tl_rules_fallback, &tl_rules_fold, &tl_rules_algebra, &tl_rules_split};
  tl_tensor *t = tl_api_tensor(handle, "compile_schedule");
  if (!t) {
    tl_test_fail(__FILE__, __LINE__, "%s: no tensor", what);
    return 0;
  }
  size_t mark = tl_graph_mark(&t->slot.ctx->graph);
  tl_uop *root = tl_rewrite_graph(&t->slot.ctx->graph, t->u, rules, 4);
  tl_schedule s;
  int compiled = 0;
  if (root && root->op != TL_OP_BUFFER && tl_schedule_build(root, false, &s)) {
    for (int k = 0; k < s.nkernels; k++) {
      tl_lowered l;
      tl_error e = {0};
      if (tl_lower_kernel(s.roots[k], &s, &l, &e) != TL_OK) {
        tl_test_fail(__FILE__, __LINE__, "%s: kernel %d does not lower: %s", what, k, e.msg);
        continue;
      }
      tl_gpu_target target = {.lang = TL_GPU_CUDA};
      char *src = tl_render_gpu(&l, &target), *ptx = NULL;
      if (!src || tl_nvrtc_ptx(n, src, 9, 0, &ptx, &e) != TL_OK)
        tl_test_fail(__FILE__, __LINE__, "%s: kernel %d:\n%s\n%s", what, k, e.msg, src ? strstr(src, "\nTL_KERNEL") : "");
      else {
        compiled++;
        CHECK(strstr(ptx, ".entry tl_kernel") != NULL);
        char why[2048];
        if (ptxas_path() && assemble(ptx, why, sizeof why))
          tl_test_fail(__FILE__, __LINE__, "%s: kernel %d: ptxas -arch=sm_90 refused it:\n%s", what, k, why);
      }
      free(src);
      free(ptx);
      tl_lowered_free(&l);
    }
    tl_schedule_free(&s);
  }
  tl_graph_release_to(&t->slot.ctx->graph, mark);
  return compiled;
}

int tl_test_cuda_compile(tl_tensor *t, const char *what) {
  static tl_nvrtc *n; /* one per test process */
  static bool tried;
  tl_error err = {0};
  if (!tried) tried = true, tl_nvrtc_open(&n, &err);
  return n ? compile_schedule(n, t, what) : -1;
}

TEST(cuda_every_kind_of_kernel_compiles_with_nvrtc) {
  tl_nvrtc *n = NULL;
  tl_error err = {0};
  if (tl_nvrtc_open(&n, &err) != TL_OK) {
    printf("  no NVRTC here: %s\n", err.msg);
    return;
  }
  tl_ctx *ctx = tl_init();
  int64_t v = 1000, sq[2] = {33, 65};
  tl_tensor *a = tl_randn(ctx, TL_F32, 1, &v), *b = tl_randn(ctx, TL_F32, 1, &v), *m = tl_randn(ctx, TL_F32, 2, sq);
  tl_tensor *w = tl_randn(ctx, TL_F32, 2, (int64_t[]){65, 17}), *bias = tl_randn(ctx, TL_F32, 1, (int64_t[]){17});
  tl_tensor *d = tl_randn(ctx, TL_F64, 3, (int64_t[]){2, 9, 5});
  tl_tensor *big = tl_randn(ctx, TL_F32, 2, (int64_t[]){2100, 2100}); /* the 128 x 128 blocked GEMM */
  int64_t idx[6] = {0, 3, 3, 1, 7, 2};
  tl_tensor *ids = tl_from_data(ctx, TL_I64, 1, (int64_t[]){6}, idx);
  tl_tensor *rows = tl_randn(ctx, TL_F32, 2, (int64_t[]){6, 4});
  tl_realize(rows);
  /* the gradient of a row gather: rows added into a table of 8 (as autograd builds it) */
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_uop *sc = tl_build_scatter_add(&ctx->graph, tl_api_tensor(rows, "t")->u, tl_api_tensor(ids, "t")->u, 8);
  tl_tensor *scatter = tl_api_wrap(ctx, "scatter", sc, mark);
  struct {
    const char *what;
    tl_tensor *t;
  } cases[] = {
      {"fused chain", tl_mul_scalar(tl_relu(tl_add(tl_mul(a, b), a)), 0.5)},
      {"large fused chain (strided)", tl_exp(tl_neg(tl_relu(tl_randn(ctx, TL_F32, 1, (int64_t[]){1 << 17}))))},
      {"softmax rows", tl_softmax(m, 1)},
      {"layer norm", tl_layer_norm(m, NULL, NULL, 1e-5)},
      {"max with NaN", tl_max(m, 1, (int[]){0}, 0)},
      {"argmax", tl_argmax(m, 1, 0)},
      {"sum to a scalar", tl_sum(tl_exp(a), 0, NULL, 0)},
      {"gemm and epilogue", tl_relu(tl_add(tl_matmul(m, w), bias))},
      {"batched f64 gemm", tl_matmul(d, tl_transpose(d, 1, 2))},
      {"large f32 gemm, A transposed", tl_relu(tl_matmul(tl_transpose(big, 0, 1), big))},
      {"large f32 gemm, B transposed", tl_matmul(big, tl_transpose(big, 0, 1))},
      {"scatter-add", scatter},
      {"random streams", tl_add(tl_rand(ctx, TL_F32, 2, sq), tl_randn(ctx, TL_F32, 2, sq))},
      {"casts", tl_cast(tl_mul_scalar(tl_cast(m, TL_F64), 1e10), TL_I32)},
      {"where and compare", tl_where(tl_gt(a, b), a, tl_neg(b))},
      {"pooling", tl_add(tl_max_pool2d(tl_reshape(m, 4, (int64_t[]){1, 3, 11, 65}), 2, 3, 2, 3),
                         tl_avg_pool2d(tl_reshape(m, 4, (int64_t[]){1, 3, 11, 65}), 2, 3, 2, 3))},
      {"log_softmax, gelu, pad, flip, cat", tl_cat(2, (tl_tensor *[]){tl_log_softmax(tl_gelu(m), 0),
                         tl_flip(tl_pad(m, (int64_t[]){0, 1}, (int64_t[]){0, 2}, -1.0), 1, (int[]){1})}, 1)},
      {"cross-entropy", tl_cross_entropy(tl_slice(m, 0, 0, 6, 1), ids)},
      {"embedding", tl_embedding(tl_slice(m, 0, 0, 8, 1), ids)},
      {"conv2d", tl_conv2d(tl_randn(ctx, TL_F32, 4, (int64_t[]){2, 3, 9, 8}), tl_randn(ctx, TL_F32, 4, (int64_t[]){4, 3, 3, 3}),
                           NULL, 2, 1, 1, 1)},
  };
  int total = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int k = compile_schedule(n, cases[i].t, cases[i].what);
    if (k < 1) tl_test_fail(__FILE__, __LINE__, "%s: no kernel compiled", cases[i].what);
    total += k;
  }
  tl_realize_many(2, (tl_tensor *[]){tl_exp(m), tl_sum(m, 1, (int[]){1}, 1)}); /* a SINK of two shapes */
  printf("  %d kernels compiled for sm_90 by NVRTC%s\n", total, ptxas_path() ? ", assembled by ptxas" : "");
  TEST_SHUTDOWN(ctx);
  tl_nvrtc_close(n);
}

/* a kernel NVRTC refuses: TL_ERR_COMPILER with its log */
TEST(cuda_compile_error_reports_the_log) {
  tl_nvrtc *n = NULL;
  tl_error err = {0};
  if (tl_nvrtc_open(&n, &err) != TL_OK) {
    printf("  no NVRTC here: %s\n", err.msg);
    return;
  }
  char *ptx = NULL;
  CHECK_INT(tl_nvrtc_ptx(n, "extern \"C\" __global__ void tl_kernel(float *x) { x[0] = undefined_name; }", 9, 0, &ptx, &err),
            TL_ERR_COMPILER);
  CHECK_CONTAINS(err.msg, "cuda: the kernel did not compile");
  CHECK_CONTAINS(err.msg, "undefined_name");
  CHECK(ptx == NULL);
  tl_nvrtc_close(n);
}

/* ---- on a GPU (bench/gpu_check.sh runs these with the rest; here they say so) ---- */
static tl_ctx *cuda_ctx(void) {
  if (tl_backend_usable("cuda") != TL_OK) {
    printf("  cuda is not available here: %s\n", tl_last_error(NULL));
    tl_clear_error(NULL);
    return NULL;
  }
  tl_ctx *ctx = tl_init();
  if (ctx && tl_set_backend(ctx, "cuda") != TL_OK) tl_test_fail(__FILE__, __LINE__, "cuda: %s", tl_last_error(ctx));
  return ctx;
}

/* relu(x * 2 - 3) over 0..n-1, read back and checked by hand */
static void check_chain(tl_ctx *ctx, int64_t n) {
  tl_tensor *x = tl_arange(ctx, TL_F32, 0, (double)n, 1);
  float got[1000];
  CHECK_INT(tl_to_host(tl_relu(tl_add_scalar(tl_mul_scalar(x, 2), -3)), got, sizeof(float) * (size_t)n), TL_OK);
  for (int64_t i = 0; i < n; i++) CHECK_NEAR(got[i], i * 2 - 3 > 0 ? i * 2 - 3 : 0, 0);
}

/* the process keeps its CUDA context and modules: a second TL context loads nothing */
TEST(cuda_second_context_reuses_the_process_modules) {
  tl_ctx *a = cuda_ctx();
  if (!a) return;
  check_chain(a, 1000);
  TEST_SHUTDOWN(a);
  tl_ctx *b = cuda_ctx();
  check_chain(b, 1000);
  tl_stats st = tl_get_stats(b);
  CHECK(st.kernels_compiled == 0 && st.disk_cache_hits == 0);
  CHECK(st.mem_cache_hits >= 1);
  TEST_SHUTDOWN(b);
}

/* contexts on several threads share the context and the modules */
static void *chain_on_a_thread(void *arg) {
  (void)arg;
  tl_ctx *ctx = tl_init();
  if (!ctx || tl_set_backend(ctx, "cuda") != TL_OK) return (void *)1;
  for (int k = 0; k < 20; k++) check_chain(ctx, 1 + 50 * k);
  tl_shutdown(ctx);
  return NULL;
}

TEST(cuda_contexts_on_several_threads) {
  tl_ctx *probe = cuda_ctx();
  if (!probe) return;
  TEST_SHUTDOWN(probe);
  pthread_t th[4];
  for (int i = 0; i < 4; i++) CHECK_INT(pthread_create(&th[i], NULL, chain_on_a_thread, NULL), 0);
  for (int i = 0; i < 4; i++) {
    void *r = NULL;
    pthread_join(th[i], &r);
    CHECK(r == NULL);
  }
}

/* a request beyond the GPU's memory is TL_ERR_NOMEM, and the context goes on; operands
 * on two backends are an error naming both */
TEST(cuda_out_of_memory_and_mixed_backends) {
  tl_ctx *ctx = cuda_ctx();
  if (!ctx) return;
  int64_t huge = (int64_t)1 << 40, n = 3; /* 4 TiB of f32 */
  CHECK_INT(tl_realize(tl_exp(tl_zeros(ctx, TL_F32, 1, &huge))), TL_ERR_NOMEM);
  CHECK_CONTAINS(tl_last_error(ctx), "out of memory");
  float v[3] = {1, 2, 3}, got[3];
  tl_tensor *dev = tl_from_data(ctx, TL_F32, 1, &n, v);
  CHECK_INT(tl_set_backend(ctx, "cpu"), TL_OK);
  tl_tensor *host = tl_from_data(ctx, TL_F32, 1, &n, v);
  CHECK_INT(tl_realize(tl_add(host, dev)), TL_ERR_BACKEND);
  CHECK_STR(tl_last_error(ctx), "operands on different backends: cpu and cuda (move one with .to(\"cpu\"))");
  CHECK_INT(tl_set_backend(ctx, "cuda"), TL_OK);
  CHECK_INT(tl_to_host(tl_add(dev, dev), got, sizeof got), TL_OK);
  CHECK(got[0] == 2 && got[1] == 4 && got[2] == 6);
  TEST_SHUTDOWN(ctx);
}

/* copies through the pinned staging buffer (over 256 KiB, several halves of 4 MiB, an
 * odd tail) and straight (small) round-trip exactly */
TEST(cuda_large_copies_round_trip) {
  tl_ctx *ctx = cuda_ctx();
  if (!ctx) return;
  static const int64_t sizes[] = {5, 70000, (9 << 20) / 4 + 3};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    int64_t n = sizes[s];
    float *in = malloc(sizeof(float) * (size_t)n), *out = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) in[i] = (float)(i % 1000003) * 0.5f;
    tl_tensor *t = tl_from_data(ctx, TL_F32, 1, &n, in);
    CHECK_INT(tl_to_host(tl_add_scalar(t, 1), out, sizeof(float) * (size_t)n), TL_OK);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) bad += out[i] != in[i] + 1;
    CHECK_INT(bad, 0);
    free(in), free(out);
  }
  TEST_SHUTDOWN(ctx);
}
