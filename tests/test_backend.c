/* test_backend.c — the backend interface (runtime/backend.h) and choosing a backend:
 * the backend is the context's, chosen by tl_set_backend or TL_BACKEND; cpu and interp
 * give the same values (checked against values worked out here in double); a buffer
 * records the backend that made it; unknown and unusable backends are errors that
 * leave the context's backend as it was; the table's entries fill the interface as
 * their kind requires; replay plans are each backend's own. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "runtime/backend.h"
#include "test.h"
#include "tl.h"

/* the name of the backend that made the tensor's buffer (realized) */
static const char *made_by(tl_tensor *t) {
  tl_tensor *h = tl_api_tensor(t, "made_by");
  if (!h || h->u->op != TL_OP_BUFFER) return "(not a buffer)";
  const tl_buffer *b = h->u->arg.p;
  const tl_backend_i *i = b->backend ? tl_backend_get(b->backend - 1) : NULL;
  return i ? i->name : "(none)";
}

static tl_tensor *from(tl_ctx *ctx, int ndim, const int64_t *shape, const float *v) {
  return tl_from_data(ctx, TL_F32, ndim, shape, v);
}

/* relu(a @ b + 1), the rows' softmax of it, its column sums and an embedding lookup,
 * on the backend named: the values (f32, 4 + 4 + 2 + 4 of them) into out */
static void run_graphs(tl_ctx *ctx, const char *backend, float *out) {
  CHECK_INT(tl_set_backend(ctx, backend), TL_OK);
  CHECK_STR(tl_backend_name(ctx), backend);
  int64_t s22[2] = {2, 2}, s32[2] = {3, 2}, two = 2;
  float av[4] = {1, -2, 0.5f, 3}, bv[4] = {2, 1, -1, 0.25f}, wv[6] = {1, 2, 3, 4, 5, 6};
  int64_t iv[2] = {2, 0};
  tl_tensor *a = from(ctx, 2, s22, av), *b = from(ctx, 2, s22, bv), *w = from(ctx, 2, s32, wv);
  tl_tensor *idx = tl_from_data(ctx, TL_I64, 1, &two, iv);
  tl_tensor *y = tl_relu(tl_add_scalar(tl_matmul(a, b), 1));
  tl_tensor *sm = tl_softmax(y, 1);
  tl_tensor *cs = tl_sum(y, 1, (int[]){0}, 0);
  tl_tensor *e = tl_embedding(w, idx);
  CHECK_INT(tl_to_host(y, out, 4 * sizeof(float)), TL_OK);
  CHECK_INT(tl_to_host(sm, out + 4, 4 * sizeof(float)), TL_OK);
  CHECK_INT(tl_to_host(cs, out + 8, 2 * sizeof(float)), TL_OK);
  CHECK_INT(tl_to_host(e, out + 10, 4 * sizeof(float)), TL_OK);
  CHECK_STR(made_by(y), backend); /* the buffers are the chosen backend's */
  CHECK_STR(made_by(e), backend);
  CHECK_STR(made_by(a), backend); /* from_data's too */
}

/* the same graphs through tl_set_backend on one context: cpu and interp agree with
 * each other and with the values worked out by hand */
TEST(backend_cpu_and_interp_agree_per_context) {
  tl_ctx *ctx = tl_init();
  float cpu[14], interp[14], again[14];
  run_graphs(ctx, "cpu", cpu);
  run_graphs(ctx, "interp", interp);
  run_graphs(ctx, "cpu", again); /* back again: the cpu instance kept its kernels */
  /* a @ b = [[1*2 + -2*-1, 1*1 + -2*0.25], [0.5*2 + 3*-1, 0.5*1 + 3*0.25]] = [[4, 0.5], [-2, 1.25]] */
  double y[4] = {5, 1.5, 0, 2.25};
  double want[14] = {y[0], y[1], y[2], y[3], 0, 0, 0, 0, y[0] + y[2], y[1] + y[3], 5, 6, 1, 2};
  for (int r = 0; r < 2; r++) {
    double m = fmax(y[2 * r], y[2 * r + 1]);
    double e0 = exp(y[2 * r] - m), e1 = exp(y[2 * r + 1] - m);
    want[4 + 2 * r] = e0 / (e0 + e1);
    want[5 + 2 * r] = e1 / (e0 + e1);
  }
  for (int i = 0; i < 14; i++) {
    CHECK_NEAR(cpu[i], want[i], 1e-6);
    CHECK_NEAR(interp[i], want[i], 1e-6);
    CHECK_NEAR(again[i], cpu[i], 0);
  }
  TEST_SHUTDOWN(ctx);
}

/* a backend's name that is unknown, or of a backend that cannot run here: an error with
 * its message, and the context keeps its backend (never a fall back to another) */
TEST(backend_set_errors) {
  setenv("TL_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1); /* PoCL is not loaded: these need its absence only */
  setenv("TL_CUDA_LIB", "/nonexistent/libcuda.so.1", 1); /* as on a machine without a GPU (each test is a process) */
  tl_ctx *ctx = tl_init();
  CHECK_INT(tl_set_backend(ctx, "interp"), TL_OK);
  CHECK_INT(tl_set_backend(ctx, "gpu"), TL_ERR_BACKEND);
  const char *usable = "cpu or interp"; /* TL_OPENCL_LIB: no OpenCL here */
  char want[200];
  snprintf(want, sizeof want, "unknown backend 'gpu' (expected %s)", usable);
  CHECK_STR(tl_last_error(ctx), want);
  CHECK_STR(tl_backend_name(ctx), "interp");
  CHECK_INT(tl_set_backend(ctx, NULL), TL_ERR_BACKEND);
  snprintf(want, sizeof want, "unknown backend '(null)' (expected %s)", usable);
  CHECK_STR(tl_last_error(ctx), want);
  CHECK_INT(tl_set_backend(ctx, "CPU"), TL_ERR_BACKEND); /* names are exact */
  CHECK_INT(tl_set_backend(ctx, "cuda"), TL_ERR_BACKEND);
  CHECK_STR(tl_last_error(ctx), "backend 'cuda' is not available: libcuda.so.1 not found: no NVIDIA driver");
  CHECK_STR(tl_backend_name(ctx), "interp");
  CHECK_INT(tl_set_backend(NULL, "cpu"), TL_ERR_ARG);
  /* the same check without a context */
  tl_clear_error(NULL);
  CHECK_INT(tl_backend_usable("cpu"), TL_OK);
  CHECK_INT(tl_backend_usable("interp"), TL_OK);
  CHECK_INT(tl_backend_usable("tpu"), TL_ERR_BACKEND);
  snprintf(want, sizeof want, "unknown backend 'tpu' (expected %s)", usable);
  CHECK_STR(tl_last_error(NULL), want);
  CHECK_INT(tl_backend_usable("cuda"), TL_ERR_BACKEND);
  CHECK_STR(tl_last_error(NULL), "backend 'cuda' is not available: libcuda.so.1 not found: no NVIDIA driver");
  tl_clear_error(NULL);
  TEST_SHUTDOWN(ctx);
}

/* TL_BACKEND naming a backend that cannot run here: tl_init fails, saying why */
TEST(backend_env_unusable) {
  setenv("TL_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1); /* PoCL is not loaded: these need its absence only */
  setenv("TL_CUDA_LIB", "/nonexistent/libcuda.so.1", 1); /* as on a machine without a GPU (each test is a process) */
  char *saved = tl_test_env_save("TL_BACKEND");
  setenv("TL_BACKEND", "cuda", 1);
  tl_clear_error(NULL);
  tl_ctx *ctx = tl_init();
  CHECK(ctx == NULL);
  CHECK_INT(tl_last_status(NULL), TL_ERR_BACKEND);
  CHECK_STR(tl_last_error(NULL), "TL_BACKEND: backend 'cuda' is not available: libcuda.so.1 not found: no NVIDIA driver");
  tl_shutdown(ctx);
  tl_clear_error(NULL);
  tl_test_env_restore("TL_BACKEND", saved);
}

/* every backend the build knows, in the table's order, usable or not and why */
TEST(backend_info_lists_every_backend) {
  setenv("TL_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1); /* PoCL is not loaded: these need its absence only */
  setenv("TL_CUDA_LIB", "/nonexistent/libcuda.so.1", 1); /* as on a machine without a GPU (each test is a process) */
  const char *names[] = {"cpu", "interp", "opencl", "cuda"};
  const char *about, *why;
  for (int i = 0; i < 4; i++) {
    CHECK_STR(tl_backend_info(i, &about, &why), names[i]);
    CHECK(about && *about);
    if (i < 2) CHECK(why == NULL);
    else if (i == 2) CHECK_STR(why, "cannot load /nonexistent/libOpenCL.so.1: install pocl-opencl-icd, or a GPU's OpenCL driver");
    else CHECK_STR(why, "libcuda.so.1 not found: no NVIDIA driver");
  }
  CHECK(tl_backend_info(4, &about, &why) == NULL);
  CHECK(tl_backend_info(-1, NULL, NULL) == NULL);
}

/* The interface's contract, per entry of the table: a usable backend allocates and
 * copies buffers and either evaluates graphs (eval) or runs kernels (every one of
 * plan, render, compile, flush, launch, synchronize), never half of each; a stub fills
 * nothing but its name, its line and why it cannot run. */
TEST(backend_table_fills_the_interface) {
  setenv("TL_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1); /* PoCL is not loaded: these need its absence only */
  CHECK(tl_backend_count() <= TL_API_MAX_BACKENDS);
  for (int k = 0; k < tl_backend_count(); k++) {
    const tl_backend_i *i = tl_backend_get(k);
    CHECK(tl_backend_find(i->name) == i);
    /* a backend that cannot run here (no driver) still fills its table */
    CHECK(i->buffer_alloc && i->copy_from_host && i->copy_to_host && i->copy && i->caps);
    int kernel_fns = !!i->plan + !!i->render + !!i->compile + !!i->flush + !!i->launch + !!i->synchronize;
    if (i->eval) CHECK_INT(kernel_fns, 0);
    else CHECK_INT(kernel_fns, 6);
  }
  tl_backend_caps c;
  tl_backend_cpu.caps(NULL, &c);
  CHECK(c.host_memory && c.f64 && c.max_group == 1);
}

/* Replay plans are each backend instance's: a structure realized on cpu replays on
 * cpu after interp ran it in between (interp records nothing), and new compiler
 * settings drop the cpu's plans with its compiler. */
TEST(backend_replay_is_per_backend) {
  tl_ctx *ctx = tl_init();
  int64_t n = 8;
  float v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  tl_tensor *x = tl_from_data(ctx, TL_F32, 1, &n, v);
  for (int round = 0; round < 3; round++) {
    CHECK_INT(tl_set_backend(ctx, round == 1 ? "interp" : "cpu"), TL_OK);
    tl_tensor *y = tl_exp(tl_mul_scalar(x, 0.5));
    float got[8];
    CHECK_INT(tl_to_host(y, got, sizeof got), TL_OK);
    for (int i = 0; i < 8; i++) CHECK_NEAR(got[i], exp(0.5 * v[i]), 1e-6 * exp(0.5 * v[i]));
    tl_stats s = tl_get_stats(ctx);
    CHECK_INT((int)s.replay_plans, 1);                    /* recorded by the first cpu round */
    CHECK_INT((int)s.realize_replays, round == 2 ? 1 : 0); /* replayed by the last */
  }
  CHECK_INT(tl_set_compiler(ctx, NULL), TL_OK);
  CHECK_INT((int)tl_get_stats(ctx).replay_plans, 0);
  TEST_SHUTDOWN(ctx);
}
