/* test_scope.c — scopes and handles: what a scope releases, what it hands to its
 * parent, the counters, and the messages for each misuse. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "tl.h"

static tl_tensor *vec(tl_ctx *ctx, float a, float b, float c) {
  float d[3] = {a, b, c};
  return tl_from_data(ctx, TL_F32, 1, (int64_t[]){3}, d);
}

static void check_values(tl_tensor *t, float a, float b, float c) {
  float got[3] = {0};
  CHECK_INT(tl_to_host(t, got, sizeof got), TL_OK);
  CHECK_NEAR(got[0], a, 1e-6);
  CHECK_NEAR(got[1], b, 1e-6);
  CHECK_NEAR(got[2], c, 1e-6);
}

static uint64_t live_tensors(tl_ctx *ctx) { return tl_get_stats(ctx).live_tensors; }

TEST(scope_nested_keeps_what_is_handed_back) {
  tl_ctx *ctx = tl_init();
  tl_scope *outer = tl_scope_begin(ctx, "outer");
  tl_tensor *a = vec(ctx, 1, 2, 3), *b = vec(ctx, 10, 20, 30);
  tl_scope *inner = tl_scope_begin(ctx, "inner");
  CHECK(tl_scope_current(ctx) == inner);
  tl_tensor *c = tl_add(a, b);
  tl_tensor *d = tl_mul_scalar(c, 2);
  tl_tensor *scalar_noise = tl_sum(d, 0, NULL, 0);
  CHECK(scalar_noise != NULL);
  CHECK_INT(live_tensors(ctx), 5); /* a, b, c, d, the sum (mul_scalar's scalar went already) */
  CHECK_INT(tl_scope_size(inner), 3);
  CHECK_INT(tl_scope_keep(inner, d), TL_OK);
  CHECK_INT(tl_scope_end(inner), TL_OK);
  CHECK_INT(live_tensors(ctx), 3); /* a, b and d, now outer's */
  CHECK_INT(tl_scope_size(outer), 3);
  CHECK(tl_scope_current(ctx) == outer);
  check_values(d, 22, 44, 66);
  CHECK_INT(tl_scope_end(outer), TL_OK);
  CHECK_INT(live_tensors(ctx), 0);
  tl_stats s = tl_get_stats(ctx);
  CHECK_INT(s.retains, s.releases);
  CHECK_INT(s.live_buffers, 0);
  CHECK_INT(s.live_nodes, 0);
  TEST_SHUTDOWN(ctx);
}

/* the pattern of a function handing one value back */
static tl_tensor *squared_distance(tl_ctx *ctx, tl_tensor *x, tl_tensor *y) {
  tl_scope *s = tl_scope_begin(ctx, "squared_distance");
  tl_tensor *d = tl_sub(x, y);
  return tl_scope_return(s, tl_sum(tl_mul(d, d), 0, NULL, 0));
}

TEST(scope_return_moves_to_parent) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = vec(ctx, 1, 2, 3), *y = vec(ctx, 1, 0, 0);
  uint64_t before = live_tensors(ctx);
  tl_tensor *r = squared_distance(ctx, x, y);
  CHECK_INT(live_tensors(ctx), before + 1); /* only r: d and d*d went with the scope */
  double v = 0;
  CHECK_INT(tl_item(r, &v), TL_OK);
  CHECK_NEAR(v, 0 + 4 + 9, 1e-6);
  CHECK_INT(tl_scope_size(tl_scope_root(ctx)), 3);
  /* a NULL from a failed chain passes through and the scope still ends */
  tl_scope *s = tl_scope_begin(ctx, "failing");
  CHECK(tl_scope_return(s, tl_add(x, tl_reshape(x, 2, (int64_t[]){3, 2}))) == NULL);
  CHECK_CONTAINS(tl_last_error(ctx), "reshape");
  CHECK(tl_scope_current(ctx) == tl_scope_root(ctx));
  TEST_SHUTDOWN(ctx);
}

TEST(scope_keep_several_and_ancestors) {
  tl_ctx *ctx = tl_init();
  tl_tensor *outer_t = vec(ctx, 1, 1, 1);
  tl_scope *s = tl_scope_begin(ctx, "two");
  tl_tensor *p = tl_neg(outer_t), *q = tl_exp(outer_t), *dropped = tl_abs(outer_t);
  CHECK(dropped != NULL);
  CHECK_INT(tl_scope_keep(s, p), TL_OK);
  CHECK_INT(tl_scope_keep(s, q), TL_OK);
  CHECK_INT(tl_scope_keep(s, q), TL_OK);      /* twice is once */
  CHECK_INT(tl_scope_keep(s, outer_t), TL_OK); /* already outlives s: nothing to do */
  CHECK_INT(tl_scope_end(s), TL_OK);
  CHECK_INT(live_tensors(ctx), 3);
  check_values(p, -1, -1, -1);
  check_values(q, 2.7182817f, 2.7182817f, 2.7182817f);
  TEST_SHUTDOWN(ctx);
}

TEST(scope_block_macro) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = vec(ctx, 1, 2, 3);
  double total = 0;
  for (int i = 0; i < 10; i++) {
    TL_SCOPE(ctx, s) {
      tl_tensor *y = tl_mul_scalar(tl_add_scalar(x, i), 2);
      tl_item(tl_sum(y, 0, NULL, 0), &total);
      CHECK_INT(tl_scope_size(s), 3);
    }
  }
  CHECK_NEAR(total, 2 * (6 + 3 * 9), 1e-9);
  CHECK_INT(live_tensors(ctx), 1);
  CHECK(tl_scope_current(ctx) == tl_scope_root(ctx));
  TEST_SHUTDOWN(ctx);
}

TEST(scope_retain_outlives_scope_until_released) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = vec(ctx, 1, 2, 3), *kept;
  tl_scope *s = tl_scope_begin(ctx, "inner");
  kept = tl_retain(tl_neg(x));
  CHECK_INT(tl_scope_end(s), TL_OK);
  check_values(kept, -1, -2, -3);
  CHECK_INT(tl_mem_report(ctx, NULL), 1); /* the caller still holds it */
  tl_release(kept);
  CHECK_INT(tl_mem_report(ctx, NULL), 0);
  CHECK_INT(live_tensors(ctx), 1);
  TEST_SHUTDOWN(ctx);
}

/* A holder (an optimizer) retains a tensor; its maker releases it in its own scope:
 * the holder's reference keeps it alive, the scope ending does not take it. Found when
 * an optimizer's parameter died at the end of the scope it was made in. */
TEST(scope_release_gives_up_the_owner_reference_first) {
  tl_ctx *ctx = tl_init();
  tl_scope *s = tl_scope_begin(ctx, "model");
  tl_tensor *w = vec(ctx, 1, 2, 3);
  tl_retain(w); /* the holder */
  tl_release(w); /* the maker is done with it */
  CHECK_INT(tl_scope_size(s), 0);
  CHECK_INT(tl_scope_end(s), TL_OK);
  check_values(w, 1, 2, 3);
  CHECK_INT(tl_mem_report(ctx, NULL), 1); /* escaped, until the holder lets go */
  tl_scope *other = tl_scope_begin(ctx, "elsewhere");
  tl_release(w); /* the holder, from any scope */
  CHECK_INT(tl_get_stats(ctx).live_tensors, 0);
  CHECK(tl_neg(w) == NULL);
  CHECK_CONTAINS(tl_last_error(ctx), "use after release");
  tl_scope_end(other);
  /* a holder that lets go from the tensor's own scope says so with tl_unretain */
  tl_tensor *p = vec(ctx, 4, 5, 6);
  tl_retain(p);
  tl_unretain(p);
  CHECK_INT(tl_scope_size(tl_scope_root(ctx)), 1); /* still the scope's */
  check_values(p, 4, 5, 6);
  tl_unretain(p);
  CHECK_STR(tl_last_error(ctx), "unretain: tensor #2 (made by from_data) holds no tl_retain reference");
  check_values(p, 4, 5, 6);
  TEST_SHUTDOWN(ctx);
}

TEST(scope_escape_is_managed_by_hand) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = vec(ctx, 1, 2, 3), *e;
  tl_scope *s = tl_scope_begin(ctx, "inner");
  e = tl_escape(tl_mul(x, x));
  CHECK_INT(tl_scope_size(s), 0);
  CHECK_INT(tl_scope_end(s), TL_OK);
  check_values(e, 1, 4, 9);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  CHECK_INT(tl_mem_report(ctx, f), 1);
  fclose(f);
  CHECK_CONTAINS(text, "leaked: tensor #2 f32[3] made by mul: escaped and never released");
  CHECK_CONTAINS(text, "1 leaked object(s)");
  free(text);
  tl_release(e);
  CHECK_INT(tl_mem_report(ctx, NULL), 0);
  TEST_SHUTDOWN(ctx);
}

TEST(scope_free_standing) {
  tl_ctx *ctx = tl_init();
  tl_scope *params = tl_scope_new(ctx, "params");
  CHECK(tl_scope_current(ctx) == tl_scope_root(ctx));
  CHECK_INT(tl_scope_enter(params), TL_OK);
  tl_tensor *w = vec(ctx, 1, 2, 3);
  CHECK_INT(tl_scope_leave(params), TL_OK);
  tl_tensor *b = vec(ctx, 4, 5, 6);
  CHECK_INT(tl_scope_adopt(params, b), TL_OK); /* made in root, owned by params now */
  CHECK_INT(tl_scope_size(params), 2);
  for (int step = 0; step < 3; step++) {
    tl_scope *s = tl_scope_begin(ctx, "step");
    check_values(tl_add(w, b), 5, 7, 9);
    tl_scope_end(s);
  }
  CHECK_INT(live_tensors(ctx), 2);
  tl_release(b); /* params is not current: b is not the caller's to release */
  CHECK_CONTAINS(tl_last_error(ctx),
                 "release: tensor #2 (made by from_data) belongs to scope 'params', not to the current scope 'root'");
  check_values(b, 4, 5, 6);
  CHECK_INT(tl_scope_end(params), TL_ERR_ARG);
  CHECK_CONTAINS(tl_last_error(ctx), "scope_end: 'params' is free-standing");
  CHECK_INT(tl_scope_enter(params), TL_OK);
  CHECK_INT(tl_scope_enter(params), TL_ERR_ARG);
  CHECK_CONTAINS(tl_last_error(ctx), "scope_enter: 'params' is entered already");
  CHECK_INT(tl_scope_free(params), TL_ERR_ARG);
  CHECK_CONTAINS(tl_last_error(ctx), "scope_free: 'params' is entered: leave it first");
  CHECK_INT(tl_scope_leave(params), TL_OK);
  CHECK_INT(tl_scope_free(params), TL_OK);
  CHECK_INT(live_tensors(ctx), 0);
  CHECK(tl_neg(w) == NULL);
  CHECK_STR(tl_last_error(ctx), "neg: use after release: the tensor behind this handle was released");
  CHECK_INT(tl_scope_free(params), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "scope_free: this scope was already ended or freed");
  TEST_SHUTDOWN(ctx);
}

TEST(scope_errors_double_release_and_use_after_release) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec(ctx, 1, 2, 3);
  tl_release(a);
  CHECK_INT(live_tensors(ctx), 0);
  tl_release(a);
  CHECK_STR(tl_last_error(ctx), "release: double release: the tensor behind this handle was already released");
  CHECK(tl_exp(a) == NULL);
  CHECK_STR(tl_last_error(ctx), "exp: use after release: the tensor behind this handle was released");
  CHECK_INT(tl_ndim(a), -1);
  CHECK_INT(tl_realize(a), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "realize: use after release: the tensor behind this handle was released");
  /* the slot is reused by later tensors, the stale handle still is caught */
  tl_tensor *fresh[300];
  for (int i = 0; i < 300; i++) fresh[i] = tl_scalar(ctx, TL_F32, i);
  CHECK(tl_add(a, fresh[0]) == NULL);
  CHECK_STR(tl_last_error(ctx), "add: use after release: the tensor behind this handle was released");
  tl_release(a);
  CHECK_CONTAINS(tl_last_error(ctx), "double release");
  double v = 0;
  CHECK_INT(tl_item(fresh[299], &v), TL_OK);
  CHECK_NEAR(v, 299, 0);
  CHECK_INT(live_tensors(ctx), 300);
  TEST_SHUTDOWN(ctx);
}

TEST(scope_errors_wrong_scope_and_order) {
  tl_ctx *ctx = tl_init();
  tl_scope *outer = tl_scope_begin(ctx, "outer");
  tl_tensor *a = vec(ctx, 1, 2, 3);
  tl_scope *inner = tl_scope_begin(ctx, "inner");
  tl_release(a); /* a is borrowed in here */
  CHECK_STR(tl_last_error(ctx),
            "release: tensor #1 (made by from_data) belongs to scope 'outer', not to the current scope 'inner'");
  CHECK(tl_escape(a) == NULL);
  CHECK_CONTAINS(tl_last_error(ctx), "escape: tensor #1");
  check_values(a, 1, 2, 3);
  CHECK_INT(tl_scope_end(outer), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "scope_end: 'outer' is not the innermost scope: end 'inner' first");
  tl_scope *other = tl_scope_new(ctx, "other");
  tl_scope_enter(other);
  tl_tensor *o = vec(ctx, 0, 0, 0);
  tl_scope_leave(other);
  CHECK_INT(tl_scope_keep(inner, o), TL_ERR_ARG);
  CHECK_CONTAINS(tl_last_error(ctx), "scope_keep: tensor #2 (made by from_data) belongs to scope 'other', not to 'inner'");
  CHECK_INT(tl_scope_end(inner), TL_OK);
  CHECK_INT(tl_scope_end(inner), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "scope_end: this scope was already ended or freed");
  tl_release(a); /* outer is current again: fine */
  CHECK_INT(tl_scope_end(outer), TL_OK);
  CHECK_INT(tl_scope_keep(tl_scope_root(ctx), o), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "scope_keep: scope 'root' has no parent to hand tensors to");
  CHECK_INT(tl_scope_free(other), TL_OK);
  TEST_SHUTDOWN(ctx);
}

TEST(scope_none_open_is_an_error) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec(ctx, 1, 2, 3);
  CHECK_INT(tl_scope_end(tl_scope_root(ctx)), TL_OK);
  CHECK(tl_scope_root(ctx) == NULL && tl_scope_current(ctx) == NULL);
  CHECK(tl_neg(a) == NULL); /* released with the root */
  CHECK(vec(ctx, 1, 2, 3) == NULL);
  CHECK_STR(tl_last_error(ctx),
            "from_data: no open scope to own the new tensor (the root scope was ended; begin a scope first)");
  CHECK(tl_zeros(ctx, TL_F32, 1, (int64_t[]){4}) == NULL);
  CHECK_CONTAINS(tl_last_error(ctx), "full: no open scope");
  CHECK_INT(tl_get_stats(ctx).live_buffers, 0);
  tl_scope *s = tl_scope_begin(ctx, "again");
  CHECK(tl_scope_root(ctx) == s);
  check_values(vec(ctx, 7, 8, 9), 7, 8, 9);
  TEST_SHUTDOWN(ctx);
}

TEST(scope_counters) {
  tl_ctx *ctx = tl_init();
  tl_stats s0 = tl_get_stats(ctx);
  CHECK_INT(s0.open_scopes, 1);
  tl_tensor *a = vec(ctx, 1, 2, 3);
  tl_retain(a);
  tl_retain(a);
  tl_release(a);
  tl_stats s1 = tl_get_stats(ctx);
  CHECK_INT(s1.tensors_created, 1);
  CHECK_INT(s1.retains, 3);
  CHECK_INT(s1.releases, 1);
  CHECK_INT(s1.live_tensors, 1);
  CHECK_INT(s1.live_buffers, 1);
  CHECK_INT(s1.live_bytes, 12);
  tl_release(a);
  tl_release(a);
  tl_stats s2 = tl_get_stats(ctx);
  CHECK_INT(s2.releases, 3);
  CHECK_INT(s2.live_tensors, 0);
  CHECK_INT(s2.live_buffers, 0);
  CHECK_INT(s2.live_bytes, 0);
  CHECK_INT(s2.peak_bytes, 12);
  TEST_SHUTDOWN(ctx);
}

/* a training-shaped loop under scopes: nothing grows, nothing is malloc'd after warm-up */
TEST(scope_loop_steady_state) {
  tl_ctx *ctx = tl_init();
  tl_tensor *w = tl_randn(ctx, TL_F32, 2, (int64_t[]){64, 64});
  tl_tensor *x = tl_randn(ctx, TL_F32, 2, (int64_t[]){32, 64});
  tl_realize(w);
  tl_realize(x);
  tl_stats warm = {0};
  for (int i = 0; i < 12; i++) {
    TL_SCOPE(ctx, s) {
      tl_tensor *h = tl_relu(tl_matmul(x, w));
      tl_tensor *y = tl_softmax(tl_matmul(h, w), 1);
      double total = 0;
      CHECK_INT(tl_item(tl_sum(y, 0, NULL, 0), &total), TL_OK);
      CHECK_NEAR(total, 32, 1e-3);
    }
    if (i == 1) warm = tl_get_stats(ctx);
  }
  tl_stats end = tl_get_stats(ctx);
  CHECK_INT(end.buffer_mallocs - warm.buffer_mallocs, 0);
  CHECK_INT(end.live_tensors, 2);
  CHECK_INT(end.live_nodes, warm.live_nodes);
  CHECK_INT(end.live_buffers, 2);
  CHECK(end.buffer_cache_hits > warm.buffer_cache_hits);
  TEST_SHUTDOWN(ctx);
}

/* TL_MEM_REPORT=1 prints the report at shutdown, naming each leaked object */
TEST(scope_mem_report_at_exit) {
  int fds[2];
  CHECK_INT(pipe(fds), 0);
  fflush(stdout);
  pid_t kid = fork();
  if (kid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    setenv("TL_MEM_REPORT", "1", 1);
    tl_ctx *ctx = tl_init();
    tl_tensor *x = vec(ctx, 1, 2, 3);
    tl_escape(tl_reshape(x, 2, (int64_t[]){1, 3}));
    tl_scope_begin(ctx, "forgotten");
    tl_retain(tl_neg(x));
    tl_shutdown(ctx);
    _exit(0);
  }
  close(fds[1]);
  char buf[4096] = {0};
  size_t n = 0;
  ssize_t r;
  while (n < sizeof buf - 1 && (r = read(fds[0], buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)r;
  close(fds[0]);
  int status = 0;
  CHECK(waitpid(kid, &status, 0) == kid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_CONTAINS(buf, "tl memory report\n");
  CHECK_CONTAINS(buf, "tensors: 3 live, 3 made, 4 retains, 0 releases");
  CHECK_CONTAINS(buf, "leaked: scope #2 'forgotten' holding 1 tensor(s): never ended");
  CHECK_CONTAINS(buf, "leaked: tensor #3 f32[3] made by neg: retained and never released");
  CHECK_CONTAINS(buf, "leaked: tensor #2 f32[1, 3] made by reshape: escaped and never released");
  CHECK_CONTAINS(buf, "3 leaked object(s)");
  CHECK_CONTAINS(buf, "at shutdown, after every handle went: 0 graph nodes, 0 buffers, 0 bytes still live\n");
}
