/* test_codegen.c — the index and validity expressions views lower to, read off the
 * rendered C (golden substrings: the names are deterministic). */
#include <stdlib.h>

#include "api/context.h"
#include "codegen/render_c.h"
#include "core/shapetracker.h"
#include "graph/build.h"
#include "graph/rewrite.h"
#include "test.h"

/* in the kernel's function, after the prelude */
static int count_occurrences(const char *s, const char *what) {
  int n = 0;
  const char *body = strstr(s, "\nvoid TL_UNIT(k)(");
  for (const char *p = body ? body : s; (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

/* the C of the kernel computing t (the last of its schedule), its graph rewritten
 * first by the rules a realize runs */
static char *uop_source(tl_graph *graph, tl_uop *u) {
  static const tl_ruleset *const rules[] = {&tl_rules_fallback, &tl_rules_fold, &tl_rules_algebra, &tl_rules_split};
  size_t mark = tl_graph_mark(graph);
  tl_uop *root = tl_rewrite_graph(graph, u, rules, 4);
  tl_schedule s;
  tl_lowered l;
  tl_error e = {0};
  char *src = NULL;
  if (!root || !tl_schedule_build(root, true, &s)) {
    tl_graph_release_to(graph, mark);
    return NULL;
  }
  if (tl_lower_kernel(root, &s, &l, &e) == TL_OK) {
    src = tl_render_c(&l, "k");
    tl_lowered_free(&l);
  }
  tl_schedule_free(&s);
  tl_graph_release_to(graph, mark); /* the rewritten nodes */
  return src;
}

static char *kernel_source(tl_tensor *handle) {
  tl_tensor *t = tl_api_tensor(handle, "kernel_source");
  return uop_source(&t->slot.ctx->graph, t->u);
}

static tl_tensor *matrix(tl_ctx *ctx) {
  float d[6] = {0, 1, 2, 3, 4, 5};
  return tl_from_data(ctx, TL_F32, 2, (int64_t[]){2, 3}, d);
}

TEST(codegen_transpose_is_a_strided_load) {
  tl_ctx *ctx = tl_init();
  char *src = kernel_source(tl_transpose(matrix(ctx), 0, 1)); /* (3, 2): element (i, j) = a[j*3 + i] */
  CHECK_CONTAINS(src, "tl_i64 v1 = r1 * 3LL;");
  CHECK_CONTAINS(src, "tl_i64 v2 = r0 + v1;");
  CHECK_CONTAINS(src, "float v3 = b1[v2];");
  free(src);
  TEST_SHUTDOWN(ctx);
}

TEST(codegen_pad_guards_the_load_with_its_mask) {
  tl_ctx *ctx = tl_init();
  char *src = kernel_source(tl_pad(matrix(ctx), (int64_t[]){1, 0}, (int64_t[]){0, 2}, 0)); /* (3, 5) */
  CHECK_CONTAINS(src, "tl_i64 v2 = v1 + -3LL;"); /* offset moves back one row */
  CHECK_CONTAINS(src, "tl_bool v4 = r0 < 1LL;"); /* row 0 is padding (the parallel loop is not split) */
  /* the column loop is split where the mask changes: columns 0-2 load under the row's
   * mask alone, columns 3-4 store zeros without reading */
  CHECK_CONTAINS(src, "for (tl_i64 r1 = 0; r1 < 3LL; r1++) {\n      tl_i64 v3 = v2 + r1;\n"
                      "      float v6 = tl_where_f32(v5, b1[v5 ? v3 : 0], (float)0);");
  CHECK_CONTAINS(src, "for (tl_i64 r2 = 0; r2 < 2LL; r2++) {\n      tl_i64 v9 = r2 + 3LL;\n"
                      "      tl_i64 v10 = v7 + v9;\n      b0[v10] = 0.0f;");
  CHECK(!strstr(src, "r0 < 3LL")); /* the bound r0 < 3 is proven by the loop: no check */
  CHECK(count_occurrences(src, "tl_where") == 1); /* the row mask's, and no column mask */
  free(src);
  TEST_SHUTDOWN(ctx);
}

/* conv2d's windows: a stack of 3 x 3 slices of a padded input. Split where the masks
 * change, the stacked axes unroll to constants and the padded borders to loops of
 * their own: no where and no guarded load is left, only plain copies. */
TEST(codegen_stacked_slices_of_a_pad_have_no_masks) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = tl_full(ctx, TL_F32, 4, (int64_t[]){2, 3, 6, 7}, 1.0);
  CHECK(tl_realize(x) == TL_OK);
  tl_tensor *xp = tl_pad(x, (int64_t[]){0, 0, 1, 1}, (int64_t[]){0, 0, 1, 1}, 0), *rows[3], *cols[3];
  for (int ki = 0; ki < 3; ki++) {
    tl_tensor *band = tl_slice(xp, 2, ki, ki + 6, 1);
    for (int kj = 0; kj < 3; kj++) cols[kj] = tl_slice(band, 3, kj, kj + 7, 1);
    rows[ki] = tl_stack(3, cols, 2);
  }
  char *src = kernel_source(tl_stack(3, rows, 2)); /* [2, 3, 3, 3, 6, 7] */
  CHECK(src != NULL);
  if (src) {
    CHECK(count_occurrences(src, "tl_where") == 0);
    CHECK(count_occurrences(src, " ? ") == 0);
    CHECK(count_occurrences(src, "b1[") >= 9); /* each tap reads the input in its pieces */
  }
  free(src);
  TEST_SHUTDOWN(ctx);
}

/* A sum of a value broadcast along an axis it keeps: each row's sum is computed once,
 * outside the loop over the copies, not once per copy (the backward of sum(x @ w)
 * reads ones broadcast like this). */
TEST(codegen_sum_of_a_broadcast_is_computed_once_per_row) {
  tl_ctx *ctx = tl_init();
  float d[6 * 4];
  for (int i = 0; i < 24; i++) d[i] = (float)(i % 5) - 1.5f;
  tl_tensor *x = tl_from_data(ctx, TL_F32, 3, (int64_t[]){6, 1, 4}, d);
  tl_tensor *y = tl_sum(tl_expand(x, 3, (int64_t[]){6, 5, 4}), 1, (int[]){2}, 0); /* [6, 5] */
  char *src = kernel_source(y);
  CHECK(src != NULL);
  if (src) {
    const char *body = strstr(src, "\nvoid TL_UNIT(k)("), *sum = body ? strstr(body, "< 4LL") : NULL,
               *copies = body ? strstr(body, "< 5LL") : NULL;
    CHECK(sum && copies && sum < copies);
  }
  free(src);
  float got[30];
  CHECK_INT(tl_to_host(y, got, sizeof got), TL_OK);
  for (int r = 0; r < 6; r++)
    for (int c = 0; c < 5; c++) {
      float want = 0;
      for (int k = 0; k < 4; k++) want += d[r * 4 + k];
      CHECK(got[r * 5 + c] == want);
    }
  TEST_SHUTDOWN(ctx);
}

TEST(codegen_flip_is_a_negative_stride) {
  tl_ctx *ctx = tl_init();
  char *src = kernel_source(tl_flip(matrix(ctx), 1, (int[]){1}));
  CHECK_CONTAINS(src, "tl_i64 v2 = v1 + 2LL;");
  CHECK_CONTAINS(src, "tl_i64 v3 = r1 * -1LL;");
  free(src);
  TEST_SHUTDOWN(ctx);
}

TEST(codegen_two_views_unflatten_with_div_and_mod) {
  tl_ctx *ctx = tl_init();
  char *src = kernel_source(tl_reshape(tl_transpose(matrix(ctx), 0, 1), 1, (int64_t[]){6}));
  CHECK_CONTAINS(src, "tl_i64 v1 = r0 / 2LL;");
  CHECK_CONTAINS(src, "tl_i64 v2 = r0 % 2LL;");
  CHECK_CONTAINS(src, "tl_i64 v3 = v2 * 3LL;");
  CHECK_CONTAINS(src, "b0[r0] = v5;");
  free(src);
  TEST_SHUTDOWN(ctx);
}


/* A reshape of a computed value read flat (rows of x*y, x and y [12, 40, 200] buffers,
 * summed as [12, 8000]): each buffer is read at the row's flat offset, with no division
 * or remainder, which unflattening and re-linearizing the index once cost 4 of each per
 * element (a whole-tensor sum split in rows ran 10x slower). Values against a host sum. */
TEST(codegen_reshape_of_contiguous_values_reads_flat) {
  tl_ctx *ctx = tl_init();
  int64_t shape[3] = {12, 40, 200}, rows[2] = {12, 8000};
  float *a = malloc(sizeof *a * 96000), *b = malloc(sizeof *b * 96000);
  for (int i = 0; i < 96000; i++) a[i] = (float)(i % 7) - 3, b[i] = (float)(i % 5) * 0.5f;
  tl_tensor *x = tl_from_data(ctx, TL_F32, 3, shape, a), *y = tl_from_data(ctx, TL_F32, 3, shape, b);
  tl_tensor *s = tl_sum(tl_reshape(tl_mul(x, y), 2, rows), 1, (int[]){1}, 0);
  char *src = kernel_source(s);
  CHECK(src != NULL);
  if (src) {
    CHECK_INT(count_occurrences(src, " / "), 0);
    CHECK_INT(count_occurrences(src, " % "), 0);
  }
  free(src);
  float got[12];
  CHECK_INT(tl_to_host(s, got, sizeof got), TL_OK);
  for (int r = 0; r < 12; r++) {
    double want = 0;
    for (int i = 0; i < 8000; i++) want += (double)a[r * 8000 + i] * b[r * 8000 + i];
    CHECK_NEAR(got[r], want, 1e-3);
  }
  free(a);
  free(b);
  TEST_SHUTDOWN(ctx);
}

/* The thread pool splits the parallel loop by the work of one of its iterations: for a
 * matmul that is the whole reduction, not only the output elements (counting those
 * alone kept a 128x784x256 matmul on one core). */
TEST(codegen_matmul_work_counts_the_reduction) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = tl_ones(ctx, TL_F32, 2, (int64_t[]){8, 50}), *b = tl_ones(ctx, TL_F32, 2, (int64_t[]){50, 6});
  tl_realize(a);
  tl_realize(b);
  tl_tensor *t = tl_api_tensor(tl_matmul(a, b), "test");
  tl_tensor *root = tl_api_tensor(tl_reshape(t, 3, (int64_t[]){8, 6, 1}), "test"); /* the sum itself */
  tl_uop *sum = root->u->op == TL_OP_RSUM ? root->u : root->u->src[0];
  tl_schedule s;
  tl_lowered l;
  tl_error e = {0};
  CHECK(sum->op == TL_OP_RSUM);
  CHECK(tl_schedule_build(sum, true, &s));
  CHECK_INT(tl_lower_kernel(sum, &s, &l, &e), TL_OK);
  CHECK_INT(l.work, 2);               /* 8 rows, 4 per iteration */
  CHECK(l.inner_work >= 4 * 50 * 6); /* every row of the group takes 50 x 6 updates */
  tl_lowered_free(&l);
  tl_schedule_free(&s);
  TEST_SHUTDOWN(ctx);
}

/* A slice's base offset is bound with the buffer, not compiled into the kernel: a
 * loop reading rows or minibatches at other offsets runs one kernel, compiled once.
 * Masked (padded) and flipped views keep their offset in the code (their reads may
 * fall before the base). */
TEST(codegen_slice_offsets_share_one_kernel) {
  tl_ctx *ctx = tl_init();
  float d[40];
  for (int i = 0; i < 40; i++) d[i] = (float)i;
  tl_tensor *x = tl_from_data(ctx, TL_F32, 2, (int64_t[]){10, 4}, d);
  uint64_t before = 0;
  for (int k = 0; k < 8; k++) {
    double got;
    tl_tensor *rows = tl_slice(x, 0, k, k + 2, 1); /* rows k, k+1 */
    CHECK_INT(tl_item(tl_sum(tl_mul(rows, rows), 0, NULL, 0), &got), TL_OK);
    double want = 0;
    for (int i = 4 * k; i < 4 * k + 8; i++) want += (double)i * i;
    CHECK_NEAR(got, want, 1e-3);
    if (k == 0) before = tl_get_stats(ctx).kernels_compiled + tl_get_stats(ctx).disk_cache_hits;
  }
  tl_stats st = tl_get_stats(ctx);
  CHECK_INT(st.kernels_compiled + st.disk_cache_hits, before); /* offsets 1..7: found in memory */
  char *src = kernel_source(tl_slice(x, 0, 3, 5, 1));
  CHECK(src && !strstr(src, "12LL")); /* row 3 starts at element 12: bound, not compiled */
  free(src);
  TEST_SHUTDOWN(ctx);
}

/* A long f32 sum is blocked: 128 elements at a time into a fresh f32 accumulator,
 * each block's sum added in f64, the partial last block after the loop over whole
 * ones, one rounding to f32 at the end. A short sum to one value adds each term in
 * f64; short rows stay one f32 loop. */
TEST(codegen_long_f32_sum_is_blocked) {
  tl_ctx *ctx = tl_init();
  float d[2000] = {0};
  tl_tensor *x = tl_from_data(ctx, TL_F32, 2, (int64_t[]){2, 1000}, d);
  char *src = kernel_source(tl_sum(x, 1, (int[]){1}, 0));
  CHECK_CONTAINS(src, "double acc0 = 0;");
  CHECK_CONTAINS(src, "for (tl_i64 r1 = 0; r1 < 7LL; r1++) {"); /* 7 whole blocks */
  CHECK_CONTAINS(src, "float acc1 = 0;");
  CHECK_CONTAINS(src, "r2 < 128LL");
  CHECK_CONTAINS(src, "r3 < 104LL"); /* and 104 elements */
  CHECK_CONTAINS(src, "acc0 = acc0 + v");
  CHECK_CONTAINS(src, "= (float)acc0;");
  free(src);
  src = kernel_source(tl_sum(tl_reshape(x, 1, (int64_t[]){2000}), 0, NULL, 0));
  CHECK_CONTAINS(src, "double acc0 = 0;");
  CHECK_CONTAINS(src, "= (double)v");
  free(src);
  src = kernel_source(tl_sum(tl_shrink(x, (int64_t[]){0, 0}, (int64_t[]){2, 128}), 1, (int[]){1}, 0));
  CHECK(src && !strstr(src, "double acc") && strstr(src, "float acc0 = 0;"));
  free(src);
  TEST_SHUTDOWN(ctx);
}

/* A column sum (a bias's gradient) on host threads runs in blocks of 32 columns, each
 * zeroed then summed row by row with stride 1 (it read each column with a stride of
 * its row before, 7x slower at 128 x 256); its values are the rows' sums in order,
 * exactly. Not on a device grid (one work-item a column), not past 128 rows (the f32
 * blocks keep their f64 partials), not over a broadcast reduce (softmax's max, which
 * would run again for every element). */
static char *column_sum_source(tl_tensor *handle, bool host) {
  tl_tensor *t = tl_api_tensor(handle, "kernel_source");
  tl_uop *sum = t->u->op == TL_OP_VIEW ? t->u->src[0] : t->u;
  tl_schedule s;
  tl_lowered l;
  tl_error e = {0};
  char *src = NULL;
  if (tl_schedule_build(sum, host, &s)) {
    if (tl_lower_kernel(sum, &s, &l, &e) == TL_OK) src = tl_render_c(&l, "k"), tl_lowered_free(&l);
    tl_schedule_free(&s);
  }
  return src;
}
TEST(codegen_column_sum_runs_in_blocks_of_columns) {
  tl_ctx *ctx = tl_init();
  enum { R = 100, C = 96 };
  static float d[R * C];
  for (int i = 0; i < R * C; i++) d[i] = (float)((i * 7919) % 1000) / 997.0f - 0.5f;
  tl_tensor *x = tl_from_data(ctx, TL_F32, 2, (int64_t[]){R, C}, d);
  tl_tensor *col = tl_sum(x, 1, (int[]){0}, 0);
  char *src = column_sum_source(col, true);
  CHECK_CONTAINS(src, "r0 * 32LL");             /* 3 blocks of 32 columns, the parallel loop */
  CHECK_CONTAINS(src, "r2 < 100LL");            /* the rows outside ... */
  CHECK(src && !strstr(src, "reduction(+"));   /* ... the columns: no strided sum */
  free(src);
  src = column_sum_source(col, false);         /* a device: a work-item a column, as before */
  CHECK_CONTAINS(src, "reduction(+");
  free(src);
  float got[C];
  CHECK_INT(tl_to_host(col, got, sizeof got), TL_OK);
  for (int j = 0; j < C; j++) {
    float want = 0;
    for (int i = 0; i < R; i++) want += d[i * C + j];
    CHECK(got[j] == want);
  }
  tl_tensor *tall = tl_from_data(ctx, TL_F32, 2, (int64_t[]){200, 48}, d);
  src = column_sum_source(tl_sum(tall, 1, (int[]){0}, 0), true); /* 200 rows: the blocked f32 sum */
  CHECK(src && !strstr(src, "r0 * 32LL") && !strstr(src, "r0 * 16LL"));
  free(src);
  tl_tensor *e = tl_exp(tl_sub(x, tl_max(x, 1, (int[]){0}, 1)));
  src = column_sum_source(tl_sum(e, 1, (int[]){0}, 0), true);
  CHECK(src && !strstr(src, "r0 * 32LL"));
  free(src);
  TEST_SHUTDOWN(ctx);
}

/* A SINK of several shapes (an optimizer's step) gives the pool turns of about equal
 * work: a nest of short rows takes them in groups as long as the longest row. Rows of
 * 64 beside a bias of 64 one-element rows made 141 turns, a third of them of one
 * element; grouped, 8 + 1 + 8 (of 8 rows of 5, 8 dividing 64) + 1. Values by hand. */
TEST(codegen_sink_turns_hold_equal_work) {
  tl_ctx *ctx = tl_init();
  static const int64_t shapes[4][2] = {{8, 64}, {64, 0}, {64, 5}, {5, 0}};
  static const int ndims[4] = {2, 1, 2, 1};
  static float d[8 * 64];
  for (int i = 0; i < 8 * 64; i++) d[i] = (float)(i % 97);
  tl_tensor *out[4];
  tl_uop *values[4];
  for (int i = 0; i < 4; i++) {
    out[i] = tl_add_scalar(tl_from_data(ctx, TL_F32, ndims[i], shapes[i], d), (double)i);
    values[i] = tl_api_tensor(out[i], "test")->u;
  }
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_uop *sink = tl_sink_make(&ctx->graph, 4, values);
  tl_schedule s;
  tl_lowered l;
  tl_error e = {0};
  CHECK(sink && tl_schedule_build(sink, true, &s));
  if (sink && tl_lower_kernel(sink, &s, &l, &e) == TL_OK) {
    CHECK_INT((int)l.work, 8 + 1 + 8 + 1);
    char *src = tl_render_c(&l, "k");
    CHECK_CONTAINS(src, "r4 * 40LL"); /* the (64, 5) nest: 8 rows of 5 a turn */
    CHECK_CONTAINS(src, "r2 * 64LL"); /* the bias's 64 rows in one turn */
    free(src);
    tl_lowered_free(&l);
    tl_schedule_free(&s);
  }
  tl_graph_release_to(&ctx->graph, mark);
  CHECK_INT(tl_realize_many(4, out), TL_OK);
  for (int i = 0; i < 4; i++) {
    int64_t n = tl_numel(out[i]);
    float got[8 * 64];
    CHECK_INT(tl_to_host(out[i], got, sizeof *got * (size_t)n), TL_OK);
    int bad = 0;
    for (int64_t j = 0; j < n; j++) bad += got[j] != d[j] + (float)i;
    CHECK_INT(bad, 0);
  }
  TEST_SHUTDOWN(ctx);
}

/* Broadcasting makes one view node: a scalar added to a matrix is its constant, one
 * stride-0 view of it and the add (the reshape to (1, 1) was a node of its own, built
 * and dropped for every scalar of every op: a tenth of an optimizer step's host time) */
TEST(codegen_broadcast_is_one_view) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = matrix(ctx);
  uint64_t id0 = ctx->graph.next_id;
  tl_tensor *y = tl_add_scalar(x, 7.5);
  CHECK_INT((int)(ctx->graph.next_id - id0), 3);
  tl_uop *add = tl_api_tensor(y, "test")->u, *view = add->src[0]->op == TL_OP_VIEW ? add->src[0] : add->src[1];
  CHECK_INT(view->op, TL_OP_VIEW);
  CHECK_INT(view->src[0]->op, TL_OP_CONST);
  tl_st moved = tl_st_contiguous(0, (int64_t[]){1}); /* what the moves make of a scalar */
  CHECK(tl_st_reshape(&moved, 2, (int64_t[]){1, 1}));
  tl_st_expand(&moved, (int64_t[]){2, 3});
  CHECK(tl_st_equal(view->arg.p, &moved));
  float got[6];
  CHECK_INT(tl_to_host(y, got, sizeof got), TL_OK);
  for (int i = 0; i < 6; i++) CHECK(got[i] == (float)i + 7.5f);
  TEST_SHUTDOWN(ctx);
}

/* float -> integer casts call the prelude's saturating conversions */
TEST(codegen_float_to_int_cast_saturates) {
  tl_ctx *ctx = tl_init();
  char *src = kernel_source(tl_cast(matrix(ctx), TL_I64));
  CHECK_CONTAINS(src, "tl_i64 v4 = tl_f32_to_i64(v3);");
  free(src);
  TEST_SHUTDOWN(ctx);
}

/* The mode the convolution kernel's descriptor names (kernel_prelude_conv.h): 3x3 at
 * stride 1 runs as Winograd (4 y, 5 dx, 6 dw); other kernels and strides as implicit
 * GEMMs (3 y at stride 1, 0 y, 1 dx, 2 dw). dx and dw: the nodes the gradient rule
 * builds (uop.h: CONV2D modes 1, 2), from buffers of g, w and x. */
static int conv_mode_of(tl_ctx *ctx, tl_uop *u) {
  char *src = u ? uop_source(&ctx->graph, u) : NULL;
  const char *d = src ? strstr(src, "tl_conv_desc d = {") : NULL;
  long long f[14];
  int mode = -1;
  if (d && sscanf(d, "tl_conv_desc d = {%lldLL, %lldLL, %lldLL, %lldLL, %lldLL, %lldLL, %lldLL, %lldLL, %lldLL, "
                     "%lldLL, %lldLL, %lldLL, %lldLL, %lld,",
                  &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10], &f[11], &f[12],
                  &f[13]) == 14)
    mode = (int)f[13];
  free(src);
  return mode;
}

TEST(codegen_conv_3x3_at_stride_1_runs_winograd) {
  tl_ctx *ctx = tl_init();
  static const struct { int64_t k, s, y, dx, dw; } cases[] = {{3, 1, 4, 5, 6}, {3, 2, 0, 1, 2}, {5, 1, 3, 1, 2}};
  for (int i = 0; i < 3; i++) {
    TL_SCOPE(ctx, sc) {
      int64_t k = cases[i].k, s = cases[i].s, o = (9 + 2 - k) / s + 1;
      int64_t xs[4] = {2, 3, 9, 9}, ws[4] = {4, 3, k, k}, gs[4] = {2, 4, o, o};
      tl_tensor *x = tl_randn(ctx, TL_F32, 4, xs), *w = tl_randn(ctx, TL_F32, 4, ws);
      tl_tensor *g = tl_randn(ctx, TL_F32, 4, gs);
      CHECK(x && w && g && tl_realize(x) == TL_OK && tl_realize(w) == TL_OK && tl_realize(g) == TL_OK);
      tl_tensor *y = tl_api_tensor(tl_conv2d(x, w, NULL, s, s, 1, 1), "test");
      tl_uop *gu = tl_api_tensor(g, "test")->u, *xu = tl_api_tensor(x, "test")->u, *wu = tl_api_tensor(w, "test")->u;
      tl_conv_params p = {s, s, 1, 1};
      CHECK_INT(conv_mode_of(ctx, y->u), (int)cases[i].y);
      size_t mark = tl_graph_mark(&ctx->graph); /* the nodes built here, released after */
      CHECK_INT(conv_mode_of(ctx, tl_build_conv2d(&ctx->graph, 1, gu, wu, p, xs)), (int)cases[i].dx);
      CHECK_INT(conv_mode_of(ctx, tl_build_conv2d(&ctx->graph, 2, gu, xu, p, ws)), (int)cases[i].dw);
      tl_graph_release_to(&ctx->graph, mark);
    }
  }
  TEST_SHUTDOWN(ctx);
}
