/* test_data.c — tl_data and tl_data_mut: reading a tensor's memory, and writing it
 * in place with copy-on-write when anything else can see it. */
#include "test.h"
#include "tl.h"

static tl_tensor *vec4(tl_ctx *ctx, float a, float b, float c, float d) {
  float v[4] = {a, b, c, d};
  return tl_from_data(ctx, TL_F32, 1, (int64_t[]){4}, v);
}

static void check4(tl_tensor *t, float a, float b, float c, float d) {
  float got[4] = {0};
  CHECK_INT(tl_to_host(t, got, sizeof got), TL_OK);
  CHECK_NEAR(got[0], a, 1e-6);
  CHECK_NEAR(got[1], b, 1e-6);
  CHECK_NEAR(got[2], c, 1e-6);
  CHECK_NEAR(got[3], d, 1e-6);
}

/* buffers made, from the system or the cache */
static uint64_t buffers_taken(tl_ctx *ctx) {
  tl_stats s = tl_get_stats(ctx);
  return s.buffer_mallocs + s.buffer_cache_hits;
}

TEST(data_reads_a_lazy_result_row_major) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = tl_reshape(vec4(ctx, 1, 2, 3, 4), 2, (int64_t[]){2, 2});
  tl_tensor *t = tl_transpose(tl_mul_scalar(a, 10), 0, 1);
  const float *d = tl_data(t);
  CHECK(d != NULL);
  if (d) {
    CHECK_NEAR(d[0], 10, 0);
    CHECK_NEAR(d[1], 30, 0);
    CHECK_NEAR(d[2], 20, 0);
    CHECK_NEAR(d[3], 40, 0);
  }
  CHECK(tl_data(t) == d); /* realized once */
  CHECK(tl_data(NULL) == NULL);
  CHECK(tl_data_mut(NULL) == NULL);
  TEST_SHUTDOWN(ctx);
}

TEST(data_mut_writes_a_unique_tensor_in_place) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec4(ctx, 1, 2, 3, 4);
  const void *before = tl_data(a);
  uint64_t taken = buffers_taken(ctx);
  float *p = tl_data_mut(a);
  CHECK(p == before);
  CHECK_INT(buffers_taken(ctx), taken);
  if (p) p[2] = 42;
  check4(a, 1, 2, 42, 4);
  /* a lazy result, once realized, is as unique */
  tl_tensor *b = tl_add_scalar(a, 1);
  p = tl_data_mut(b);
  taken = buffers_taken(ctx);
  CHECK(tl_data_mut(b) == p);
  CHECK_INT(buffers_taken(ctx), taken);
  TEST_SHUTDOWN(ctx);
}

TEST(data_mut_copies_a_buffer_shared_by_a_reshape) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec4(ctx, 1, 2, 3, 4);
  tl_tensor *b = tl_reshape(a, 2, (int64_t[]){2, 2});
  CHECK(tl_data(b) == tl_data(a)); /* b realized into a's memory */
  uint64_t taken = buffers_taken(ctx);
  float *p = tl_data_mut(b);
  CHECK(p != NULL && p != tl_data(a));
  CHECK_INT(buffers_taken(ctx), taken + 1);
  if (p) p[0] = -1;
  check4(a, 1, 2, 3, 4);
  tl_tensor *flat = tl_reshape(b, 1, (int64_t[]){4});
  check4(flat, -1, 2, 3, 4);
  tl_release(flat); /* realized, it shared b's new buffer */
  /* now each is alone: no more copies */
  taken = buffers_taken(ctx);
  CHECK(tl_data_mut(b) == p);
  float *q = tl_data_mut(a);
  if (q) q[3] = 9;
  CHECK_INT(buffers_taken(ctx), taken);
  check4(a, 1, 2, 3, 9);
  TEST_SHUTDOWN(ctx);
}

TEST(data_mut_copies_a_node_a_lazy_graph_holds) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec4(ctx, 1, 2, 3, 4);
  tl_tensor *later = tl_add_scalar(a, 100); /* not computed yet: reads a's node */
  tl_tensor *view = tl_slice(a, 0, 1, 3, 1);
  float *p = tl_data_mut(a);
  if (p) p[1] = 0;
  check4(a, 1, 0, 3, 4);
  check4(later, 101, 102, 103, 104);
  float v[2] = {0};
  CHECK_INT(tl_to_host(view, v, sizeof v), TL_OK);
  CHECK_NEAR(v[0], 2, 0);
  CHECK_NEAR(v[1], 3, 0);
  TEST_SHUTDOWN(ctx);
}

/* two handles of one node (a detached copy) and a constant shared by hash-consing */
TEST(data_mut_copies_for_a_second_handle_and_constants) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec4(ctx, 1, 2, 3, 4), *b = tl_detach(a);
  float *p = tl_data_mut(b);
  if (p) p[0] = 7;
  check4(a, 1, 2, 3, 4);
  check4(b, 7, 2, 3, 4);
  tl_tensor *x = tl_full(ctx, TL_F32, 1, (int64_t[]){4}, 2), *y = tl_full(ctx, TL_F32, 1, (int64_t[]){4}, 2);
  p = tl_data_mut(x);
  if (p) p[3] = 5;
  check4(x, 2, 2, 2, 5);
  check4(y, 2, 2, 2, 2);
  check4(tl_full(ctx, TL_F32, 1, (int64_t[]){4}, 2), 2, 2, 2, 2);
  TEST_SHUTDOWN(ctx);
}

/* a retained handle is one handle: its holders share every write; tl_handle_refs tells */
TEST(data_mut_retained_handle_and_handle_refs) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec4(ctx, 1, 2, 3, 4);
  CHECK_INT(tl_handle_refs(a), 1);
  CHECK(tl_retain(a) == a);
  CHECK_INT(tl_handle_refs(a), 2);
  uint64_t taken = buffers_taken(ctx);
  float *p = tl_data_mut(a);
  CHECK_INT(buffers_taken(ctx), taken); /* a copy would not separate the holders */
  if (p) p[0] = 0;
  tl_release(a); /* the scope's reference: a is escaped, held by the retain */
  CHECK_INT(tl_handle_refs(a), 1);
  check4(a, 0, 2, 3, 4);
  tl_release(a);
  CHECK_INT(tl_handle_refs(NULL), 0);
  TEST_SHUTDOWN(ctx);
}

TEST(data_mut_refuses_a_tensor_requiring_grad) {
  tl_ctx *ctx = tl_init();
  tl_tensor *w = vec4(ctx, 1, 2, 3, 4);
  CHECK_INT(tl_set_requires_grad(w, 1), TL_OK);
  CHECK(tl_data(w) != NULL);
  CHECK(tl_data_mut(w) == NULL);
  CHECK_STR(tl_last_error(ctx), "cannot write into a tensor that requires grad (detach() it first)");
  tl_clear_error(ctx);
  tl_tensor *y = tl_mul_scalar(w, 2); /* history, not a leaf */
  CHECK(tl_data_mut(y) == NULL);
  CHECK_CONTAINS(tl_last_error(ctx), "requires grad");
  tl_clear_error(ctx);
  tl_tensor *d = tl_detach(y);
  float *p = tl_data_mut(d);
  CHECK(p != NULL);
  if (p) p[0] = 0;
  check4(d, 0, 4, 6, 8);
  check4(y, 2, 4, 6, 8);
  TEST_SHUTDOWN(ctx);
}

TEST(data_mut_on_a_released_handle_is_an_error) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec4(ctx, 1, 2, 3, 4);
  tl_release(a);
  CHECK(tl_data_mut(a) == NULL);
  CHECK_CONTAINS(tl_last_error(ctx), "use after release");
  tl_clear_error(ctx);
  CHECK(tl_data(a) == NULL);
  CHECK_CONTAINS(tl_last_error(ctx), "use after release");
  tl_clear_error(ctx);
  TEST_SHUTDOWN(ctx);
}
