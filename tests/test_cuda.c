/* test_cuda.c — the cuda backend where no GPU is: the driver says why it cannot run,
 * and every kind of kernel the GPU renderer writes (elementwise chains, work-group
 * reductions, both GEMMs with their epilogues, scatter-add, random streams, casts,
 * SINKs of several shapes) compiles as CUDA C with NVRTC for sm_90, when the CUDA
 * toolkit's NVRTC is here (it is on CI's machines). On a GPU, the differential suite
 * and the golden programs run with TL_BACKEND=cuda (bench/gpu_check.sh). */
#include <stdlib.h>
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
  if (root && root->op != TL_OP_BUFFER && tl_schedule_build(root, &s)) {
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
      {"softmax rows", tl_softmax(m, 1)},
      {"layer norm", tl_layer_norm(m, NULL, NULL, 1e-5)},
      {"max with NaN", tl_max(m, 1, (int[]){0}, 0)},
      {"argmax", tl_argmax(m, 1, 0)},
      {"sum to a scalar", tl_sum(tl_exp(a), 0, NULL, 0)},
      {"gemm and epilogue", tl_relu(tl_add(tl_matmul(m, w), bias))},
      {"batched f64 gemm", tl_matmul(d, tl_transpose(d, 1, 2))},
      {"scatter-add", scatter},
      {"random streams", tl_add(tl_rand(ctx, TL_F32, 2, sq), tl_randn(ctx, TL_F32, 2, sq))},
      {"casts", tl_cast(tl_mul_scalar(tl_cast(m, TL_F64), 1e10), TL_I32)},
      {"where and compare", tl_where(tl_gt(a, b), a, tl_neg(b))},
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
  printf("  %d kernels compiled for sm_90 by NVRTC\n", total);
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
