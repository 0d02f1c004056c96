/* render_gpu.c — GPU kernels from the loop AST: one renderer for OpenCL C and CUDA C.
 * The kernel's text is the same for both, in the C-style statements of
 * render_cstyle.c and a few words each prelude defines for its language (TL_KERNEL,
 * TL_GLOBAL, TL_SHARED, TL_BARRIER, TL_GID/TL_LID/TL_GRP, TL_GROUP_SIZE, TL_NAN,
 * TL_INF: prelude_cl.h, prelude_cuda.h), in front of core/scalar.h, so every scalar
 * is computed as the C kernels and the interpreter compute it.
 * in: a lowered kernel and the device it is for; out: the source of one kernel
 * `tl_kernel` and the grid it runs on. */
#include "render_gpu.h"

#include <stdio.h>
#include <string.h>

#include "codegen/render_cstyle.h"
#include "codegen/render_gpu_gemm.h"

static const char prelude_cl_text[] =
#include "prelude_cl.inc"
    ;
static const char prelude_cuda_text[] =
#include "prelude_cuda.inc"
    ;

const char *tl_render_gpu_prelude(tl_gpu_lang lang) { return lang == TL_GPU_CUDA ? prelude_cuda_text : prelude_cl_text; }

/* the parallel loop is the grid (one iteration a work-item); the GEMM epilogue runs
 * its row's columns [begin, end) */
static const tl_dialect cl_grid = {.i64 = "L", .nan = "TL_NAN", .inf = "TL_INF", .grid = true};

static int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }


static bool has_parallel_loop(const tl_block *b) {
  for (int i = 0; i < b->n; i++)
    if (b->items[i]->kind == TL_STMT_LOOP && b->items[i]->parallel) return true;
  return false;
}

/* ---- work-group reductions ------------------------------------------------------
 * A kernel whose parallel iteration reduces (a row's sum or max; softmax, layer norm)
 * runs each iteration on a work-group: the iteration's loops are shared among the
 * group's work-items (strided by the group's size), each accumulator of the
 * iteration is combined by a tree in local memory after the loop that updates it, and
 * a store outside a loop is work-item 0's. Without a parallel loop the kernel is one
 * iteration, one group. */
static bool updates(const tl_block *b, const tl_uop *acc) {
  for (int i = 0; i < b->n; i++) {
    const tl_stmt *st = b->items[i];
    if (st->kind == TL_STMT_UPDATE && st->u == acc) return true;
    if (st->kind == TL_STMT_LOOP && updates(st->body, acc)) return true;
  }
  return false;
}

/* an iteration's body the group can share: every accumulator it updates directly is
 * updated inside a loop (split, then combined) */
static bool shareable(const tl_block *b, bool *reduces) {
  for (int i = 0; i < b->n; i++) {
    const tl_stmt *st = b->items[i];
    if (st->kind == TL_STMT_UPDATE) return false;
    if (st->kind == TL_STMT_ACC) *reduces = true;
  }
  return true;
}

/* work-items in a group: a CPU device (PoCL) runs them as loops, 64 keep its trees
 * short; a GPU wants more threads a block to hide memory latency */
static int group_size(const tl_gpu_target *t) { return t->cpu ? TL_GPU_GROUP : TL_GPU_GROUP_GPU; }

static bool group_mode(const tl_lowered *l, int gs) {
  if (l->gemm || l->scatter || l->conv || l->inner_work < gs) return false;
  bool reduces = false;
  if (!has_parallel_loop(l->root)) return shareable(l->root, &reduces) && reduces;
  for (int i = 0; i < l->root->n; i++) {
    const tl_stmt *st = l->root->items[i];
    if (st->kind == TL_STMT_LOOP && st->parallel) { /* one range, all of it: a group a turn, no test around barriers */
      if (st->part >= 0 || st->u->arg2 != l->work || !shareable(st->body, &reduces)) return false;
    } else if (st->kind != TL_STMT_DEFINE) {
      return false;
    }
  }
  return reduces;
}

static const char *red_name(int dtype) { return tl_dtype_name((tl_dtype)dtype); }

/* the local arrays the trees use: one per dtype of a combined accumulator */
static void note_accs(const tl_block *b, bool *dtypes, bool *nan) {
  for (int i = 0; i < b->n; i++) {
    const tl_stmt *st = b->items[i];
    if (st->kind != TL_STMT_ACC) continue;
    dtypes[st->u->dtype] = true;
    if (st->reduce_op == TL_OP_RMAX && tl_dtype_is_float(st->u->dtype)) *nan = true;
  }
}

static void group_arrays(tl_strbuf *s, const tl_lowered *l, int gs) {
  bool dtypes[TL_NDTYPES] = {false}, nan = false;
  if (!has_parallel_loop(l->root)) note_accs(l->root, dtypes, &nan);
  for (int i = 0; i < l->root->n; i++)
    if (l->root->items[i]->kind == TL_STMT_LOOP) note_accs(l->root->items[i]->body, dtypes, &nan);
  for (int t = 0; t < TL_NDTYPES; t++)
    if (dtypes[t]) tl_strbuf_printf(s, "  TL_SHARED %s tl_red_%s[%d];\n", tl_cstyle_ctype(t), red_name(t), gs);
  if (nan) tl_strbuf_printf(s, "  TL_SHARED int tl_red_nan[%d];\n", gs);
}

static void indent(tl_strbuf *s, int depth) {
  for (int i = 0; i < depth; i++) tl_strbuf_puts(s, "  ");
}

/* every work-item's partial value of acc, combined: all of them end with the total */
/* the same on a CUDA GPU: a warp's values combined by shuffles, then the warps' in
 * order from shared memory; two barriers instead of one a tree level */
static void combine_warps(tl_strbuf *s, const tl_stmt *acc, int depth, int gs, const char *op, bool nan) {
  long long id = (long long)acc->u->arg.i;
  const char *r = red_name(acc->u->dtype), *t = tl_cstyle_ctype(acc->u->dtype);
  indent(s, depth);
  tl_strbuf_printf(s, "{\n");
  indent(s, depth + 1);
  tl_strbuf_printf(s, "%s x = acc%lld, y;\n", t, id);
  if (nan) indent(s, depth + 1), tl_strbuf_printf(s, "int n = nan%lld;\n", id);
  indent(s, depth + 1);
  tl_strbuf_printf(s, "for (int tl_o = 16; tl_o > 0; tl_o >>= 1) { y = TL_SHFL_XOR(x, tl_o); x = %s;%s }\n", op,
                   nan ? " n |= TL_SHFL_XOR(n, tl_o);" : "");
  indent(s, depth + 1);
  tl_strbuf_printf(s, "if ((tl_lid & 31) == 0) { tl_red_%s[tl_lid >> 5] = x;%s }\n", r, nan ? " tl_red_nan[tl_lid >> 5] = n;" : "");
  indent(s, depth + 1);
  tl_strbuf_puts(s, "TL_BARRIER();\n");
  indent(s, depth + 1);
  tl_strbuf_printf(s, "x = tl_red_%s[0];%s\n", r, nan ? " n = tl_red_nan[0];" : "");
  indent(s, depth + 1);
  tl_strbuf_printf(s, "for (int tl_w = 1; tl_w < %d; tl_w++) { y = tl_red_%s[tl_w]; x = %s;%s }\n", gs / 32, r, op,
                   nan ? " n |= tl_red_nan[tl_w];" : "");
  indent(s, depth + 1);
  tl_strbuf_printf(s, "acc%lld = x;\n", id);
  if (nan) indent(s, depth + 1), tl_strbuf_printf(s, "nan%lld = n;\n", id);
  indent(s, depth + 1);
  tl_strbuf_puts(s, "TL_BARRIER();\n");
  indent(s, depth);
  tl_strbuf_puts(s, "}\n");
}

/* shuffles take 32- and 64-bit values */
static bool warp_combines(const tl_stmt *acc, bool warps) { return warps && acc->u->dtype != TL_BOOL; }

static void combine(tl_strbuf *s, const tl_stmt *acc, int depth, int gs, bool warps) {
  long long id = (long long)acc->u->arg.i;
  const char *r = red_name(acc->u->dtype);
  bool nan = acc->reduce_op == TL_OP_RMAX && tl_dtype_is_float(acc->u->dtype);
  const char *op = acc->reduce_op == TL_OP_RSUM ? "x + y" : acc->reduce_op == TL_OP_RPROD ? "x * y" : "x > y ? x : y";
  if (warp_combines(acc, warps)) return combine_warps(s, acc, depth, gs, op, nan);
  indent(s, depth);
  tl_strbuf_printf(s, "tl_red_%s[tl_lid] = acc%lld;\n", r, id);
  if (nan) indent(s, depth), tl_strbuf_printf(s, "tl_red_nan[tl_lid] = nan%lld;\n", id);
  indent(s, depth);
  tl_strbuf_printf(s, "TL_BARRIER();\n");
  indent(s, depth);
  tl_strbuf_printf(s, "for (int tl_s = %d; tl_s > 0; tl_s >>= 1) {\n", gs / 2);
  indent(s, depth + 1);
  tl_strbuf_printf(s, "if (tl_lid < tl_s) { %s x = tl_red_%s[tl_lid], y = tl_red_%s[tl_lid + tl_s]; tl_red_%s[tl_lid] = %s;%s }\n",
                   tl_cstyle_ctype(acc->u->dtype), r, r, r, op, nan ? " tl_red_nan[tl_lid] |= tl_red_nan[tl_lid + tl_s];" : "");
  indent(s, depth + 1);
  tl_strbuf_puts(s, "TL_BARRIER();\n");
  indent(s, depth);
  tl_strbuf_puts(s, "}\n");
  indent(s, depth);
  tl_strbuf_printf(s, "acc%lld = tl_red_%s[0];\n", id, r);
  if (nan) indent(s, depth), tl_strbuf_printf(s, "nan%lld = tl_red_nan[0];\n", id);
  indent(s, depth);
  tl_strbuf_puts(s, "TL_BARRIER();\n");
}

/* A shared loop whose body is a block sum (lower.c: a fresh f32 accumulator, one loop
 * over the block's terms, then the block's total added, widened, to the outer sum):
 * its inner loop, or NULL. A loop of 32 blocks shared by 256 work-items would busy 32
 * of them, each reading its own run of 128; flattened, every work-item adds its own
 * terms, each widened (the same sum, in another order). */
static const tl_stmt *block_sum_loop(const tl_block *b) {
  const tl_stmt *inner = NULL, *part = NULL, *widen = NULL;
  for (int i = 0; i < b->n; i++) {
    const tl_stmt *st = b->items[i];
    if (!inner && st->kind == TL_STMT_ACC && !part && st->reduce_op == TL_OP_RSUM && st->u->dtype == TL_F32) part = st;
    else if (!inner && st->kind == TL_STMT_DEFINE) continue;
    else if (!inner && st->kind == TL_STMT_LOOP && !st->parallel && part && updates(st->body, part->u)) inner = st;
    else if (inner && !widen && st->kind == TL_STMT_DEFINE && st->u->op == TL_OP_CAST && st->u->src[0] == part->u) widen = st;
    else if (inner && widen && st->kind == TL_STMT_UPDATE && st->reduce_op == TL_OP_RSUM && st->value == widen->u &&
             i == b->n - 1) return inner;
    else return NULL;
  }
  return NULL;
}

static void flat_block_sums(tl_strbuf *s, const tl_stmt *outer, const tl_stmt *inner, int depth, int gs) {
  long long ro = (long long)outer->u->arg.i, ri = (long long)inner->u->arg.i, no = (long long)outer->u->arg2,
            ni = (long long)inner->u->arg2;
  indent(s, depth);
  tl_strbuf_printf(s, "TL_UNROLL4 for (tl_i64 tl_f = tl_lid; tl_f < %lldL; tl_f += %d) {\n", no * ni, gs);
  indent(s, depth + 1);
  tl_strbuf_printf(s, "const tl_i64 r%lld = tl_f / %lldL, r%lld = tl_f %% %lldL;\n", ro, ni, ri, ni);
  const tl_block *b = outer->body;
  for (int i = 0; i < b->n; i++) {
    if (b->items[i] != inner) {
      tl_cstyle_stmt(s, &cl_grid, b->items[i], depth + 1);
      continue;
    }
    tl_cstyle_block(s, &cl_grid, inner->body, depth + 1);
    tl_cstyle_loop_end(s, &cl_grid, inner, depth + 1);
  }
  indent(s, depth);
  tl_strbuf_puts(s, "}\n");
}

/* a CUDA GPU's groups combine by warps */
static bool warps_of(const tl_gpu_target *t) { return t->lang == TL_GPU_CUDA && !t->cpu; }

static void group_body(tl_strbuf *s, const tl_block *b, int depth, int gs, const tl_gpu_target *t) {
  bool warps = warps_of(t);
  const tl_stmt *inner;
  for (int i = 0; i < b->n; i++) {
    const tl_stmt *st = b->items[i];
    if (st->kind == TL_STMT_STORE) {
      indent(s, depth);
      tl_strbuf_puts(s, "if (tl_lid == 0) {\n");
      tl_cstyle_stmt(s, &cl_grid, st, depth + 1);
      indent(s, depth);
      tl_strbuf_puts(s, "}\n");
    } else if (st->kind == TL_STMT_LOOP && !t->cpu && (inner = block_sum_loop(st->body))) {
      flat_block_sums(s, st, inner, depth, gs);
      for (int j = 0; j < i; j++)
        if (b->items[j]->kind == TL_STMT_ACC && updates(st->body, b->items[j]->u)) combine(s, b->items[j], depth, gs, warps);
      tl_cstyle_loop_end(s, &cl_grid, st, depth);
    } else if (st->kind == TL_STMT_LOOP) {
      long long r = (long long)st->u->arg.i;
      indent(s, depth);
      tl_strbuf_printf(s, "TL_UNROLL4 for (tl_i64 r%lld = tl_lid; r%lld < %lldL; r%lld += %d) {\n", r, r,
                       (long long)st->u->arg2, r, gs);
      tl_cstyle_block(s, &cl_grid, st->body, depth + 1);
      indent(s, depth);
      tl_strbuf_puts(s, "}\n");
      for (int j = 0; j < i; j++)
        if (b->items[j]->kind == TL_STMT_ACC && updates(st->body, b->items[j]->u)) combine(s, b->items[j], depth, gs, warps);
      tl_cstyle_loop_end(s, &cl_grid, st, depth);
    } else {
      tl_cstyle_stmt(s, &cl_grid, st, depth);
    }
  }
}

static void group_kernel(tl_strbuf *s, const tl_lowered *l, int gs, const tl_gpu_target *t) {
  group_arrays(s, l, gs);
  tl_strbuf_puts(s, "  const tl_i64 tl_grp = TL_GRP(0);\n  const int tl_lid = TL_LID(0);\n");
  if (!has_parallel_loop(l->root)) {
    group_body(s, l->root, 1, gs, t);
    return;
  }
  for (int i = 0; i < l->root->n; i++) {
    const tl_stmt *st = l->root->items[i];
    if (st->kind != TL_STMT_LOOP) {
      tl_cstyle_stmt(s, &cl_grid, st, 1);
      continue;
    }
    /* the grid is the range: every group has a turn, and every work-item reaches every barrier */
    tl_strbuf_printf(s, "  {\n    const tl_i64 r%lld = tl_grp;\n", (long long)st->u->arg.i);
    group_body(s, st->body, 2, gs, t);
    tl_strbuf_puts(s, "  }\n");
  }
}

/* A large elementwise kernel on a GPU: each work-item takes STRIDED iterations, a grid
 * apart (each step's loads coalesced), unrolled, its inputs restrict-qualified so the
 * next iterations' loads are in flight while this one's store waits: a load at a time
 * a work-item leaves HBM idle. (No kernel reads a buffer it writes at another
 * element than the one written: on a GPU its work-items would race.) */
enum { STRIDED = 4, STRIDED_MIN = 1 << 16 };

static bool strided(const tl_lowered *l, const tl_gpu_target *t) {
  return !t->cpu && !l->gemm && !l->scatter && !l->conv && l->work >= STRIDED_MIN && has_parallel_loop(l->root) &&
         !group_mode(l, group_size(t));
}

/* a strided kernel's work-items, the distance between an item's iterations */
static int64_t strided_grid(const tl_lowered *l, const tl_gpu_target *t) {
  int64_t gs = group_size(t);
  return round_up((l->work + STRIDED - 1) / STRIDED, gs);
}

/* the elements a CONV2D writes: y, dx or dw */
static int64_t conv_outputs(const tl_conv_plan *p) {
  return p->mode == 2 ? p->o * p->c * p->kh * p->kw : p->mode == 1 ? p->n * p->c * p->h * p->w : p->n * p->o * p->oh * p->ow;
}


void tl_render_gpu_grid(const tl_lowered *l, const tl_gpu_target *t, int *dims, size_t global[3], size_t local[3]) {
  for (int d = 0; d < 3; d++) global[d] = local[d] = 1;
  if (l->gemm) return tl_render_gpu_gemm_grid(l, t, dims, global, local);
  if (tl_render_gpu_conv_gemm(l, t)) return tl_render_gpu_conv_grid(l, dims, global, local);
  int64_t work = l->scatter ? l->scatter->rows * l->scatter->d : l->conv ? conv_outputs(l->conv)
                : l->work > 0 ? l->work : 1;
  *dims = 1;
  int gs = group_size(t);
  if (group_mode(l, gs)) { /* a work-group an iteration */
    local[0] = (size_t)gs;
    global[0] = (size_t)work * (size_t)gs;
    return;
  }
  if (strided(l, t)) { /* work >= STRIDED_MIN: whole groups */
    local[0] = (size_t)gs;
    global[0] = (size_t)strided_grid(l, t);
    return;
  }
  local[0] = (size_t)(work < gs ? work : gs);
  global[0] = (size_t)round_up(work, (int64_t)local[0]);
}


/* the parameters: each slot as a buffer and a byte offset into it, then the random
 * streams' keys and counters */
static void params(tl_strbuf *s, const tl_lowered *l, bool restrict_inputs) {
  for (int i = 0; i < l->nargs; i++)
    tl_strbuf_printf(s, "%sTL_GLOBAL %s%s *%sg%d, tl_u64 o%d", i ? ", " : "", i ? "const " : "",
                     tl_cstyle_ctype(l->args[i]->dtype), i && restrict_inputs ? "TL_RESTRICT " : "", i, i);
  for (int j = 0; j < l->nrng; j++) tl_strbuf_printf(s, ", tl_u64 rk%d, tl_u64 rs%d", j, j);
}

static void pointers(tl_strbuf *s, const tl_lowered *l) {
  for (int i = 0; i < l->nargs; i++) {
    const char *t = tl_cstyle_ctype(l->args[i]->dtype), *c = i ? "const " : "";
    tl_strbuf_printf(s, "  TL_GLOBAL %s%s *b%d = (TL_GLOBAL %s%s *)((TL_GLOBAL %schar *)g%d + o%d);\n", c, t, i, c, t, c,
                     i, i);
  }
}

/* out[r, c] = the sum over i, in order, of values[i, c] where idx[i] is row r (clamped
 * as the CPU's routine clamps it): deterministic, the CPU's order */
static void scatter_body(tl_strbuf *s, const tl_lowered *l) {
  const tl_scatter_plan *p = l->scatter;
  tl_strbuf_printf(s, "  if (tl_gid >= %lldL) return;\n", (long long)(p->rows * p->d));
  tl_strbuf_printf(s, "  const tl_i64 r = tl_gid / %lldL, c = tl_gid %% %lldL;\n", (long long)p->d, (long long)p->d);
  tl_strbuf_printf(s, "  %s acc = 0;\n", tl_cstyle_ctype(l->args[0]->dtype));
  tl_strbuf_printf(s, "  for (tl_i64 i = 0; i < %lldL; i++)\n"
                      "    if (tl_clamp_row((tl_i64)b%d[i], %lldL) == r) acc += b%d[i * %lldL + c];\n",
                   (long long)p->n, p->slot_idx, (long long)p->rows, p->slot_values, (long long)p->d);
  tl_strbuf_puts(s, "  b0[tl_gid] = acc;\n");
}

/* A CONV2D (the CPU's implicit GEMM, kernel_prelude_conv.h) as its definition: a
 * work-item per output element, summing its products in order */
static void conv_body(tl_strbuf *s, const tl_lowered *l) {
  const tl_conv_plan *p = l->conv;
  const char *T = tl_cstyle_ctype(l->args[0]->dtype);
  long long n = p->n, c = p->c, h = p->h, w = p->w, o = p->o, kh = p->kh, kw = p->kw, oh = p->oh, ow = p->ow;
  tl_strbuf_printf(s, "  if (tl_gid >= %lldL) return;\n  %s acc = 0;\n", (long long)conv_outputs(p), T);
  tl_strbuf_printf(s, "  const tl_i64 sh = %lldL, sw = %lldL, ph = %lldL, pw = %lldL;\n", (long long)p->sh,
                   (long long)p->sw, (long long)p->ph, (long long)p->pw);
  if (p->mode == 2) { /* dw[o, c, ki, kj] = sum over n, i, j of g[n, o, i, j] x[n, c, i*sh + ki - ph, ...] */
    tl_strbuf_printf(s, "  const tl_i64 kj = tl_gid %% %lldL, ki = tl_gid / %lldL %% %lldL, c = tl_gid / %lldL %% %lldL, "
                        "o = tl_gid / %lldL;\n", kw, kw, kh, kw * kh, c, kw * kh * c);
    tl_strbuf_printf(s, "  for (tl_i64 n = 0; n < %lldL; n++)\n    for (tl_i64 i = 0; i < %lldL; i++)\n"
                        "      for (tl_i64 j = 0; j < %lldL; j++) {\n", n, oh, ow);
    tl_strbuf_printf(s, "        const tl_i64 y = i * sh + ki - ph, x = j * sw + kj - pw;\n"
                        "        if (y >= 0 && y < %lldL && x >= 0 && x < %lldL)\n"
                        "          acc += b%d[((n * %lldL + o) * %lldL + i) * %lldL + j] * b%d[((n * %lldL + c) * %lldL + y) * %lldL + x];\n"
                        "      }\n", h, w, p->slot_a, o, oh, ow, p->slot_b, c, h, w);
  } else if (p->mode == 1) { /* dx[n, c, y, x] = sum over o, ki, kj of g at the window's output, w */
    tl_strbuf_printf(s, "  const tl_i64 x = tl_gid %% %lldL, y = tl_gid / %lldL %% %lldL, c = tl_gid / %lldL %% %lldL, "
                        "n = tl_gid / %lldL;\n", w, w, h, w * h, c, w * h * c);
    tl_strbuf_printf(s, "  for (tl_i64 o = 0; o < %lldL; o++)\n    for (tl_i64 ki = 0; ki < %lldL; ki++)\n"
                        "      for (tl_i64 kj = 0; kj < %lldL; kj++) {\n", o, kh, kw);
    tl_strbuf_printf(s, "        const tl_i64 i = y + ph - ki, j = x + pw - kj;\n"
                        "        if (i >= 0 && j >= 0 && i %% sh == 0 && j %% sw == 0 && i / sh < %lldL && j / sw < %lldL)\n"
                        "          acc += b%d[((n * %lldL + o) * %lldL + i / sh) * %lldL + j / sw] * b%d[((o * %lldL + c) * %lldL + ki) * %lldL + kj];\n"
                        "      }\n", oh, ow, p->slot_a, o, oh, ow, p->slot_b, c, kh, kw);
  } else { /* y[n, o, i, j] = sum over c, ki, kj of w x */
    tl_strbuf_printf(s, "  const tl_i64 j = tl_gid %% %lldL, i = tl_gid / %lldL %% %lldL, o = tl_gid / %lldL %% %lldL, "
                        "n = tl_gid / %lldL;\n", ow, ow, oh, ow * oh, o, ow * oh * o);
    tl_strbuf_printf(s, "  for (tl_i64 c = 0; c < %lldL; c++)\n    for (tl_i64 ki = 0; ki < %lldL; ki++)\n"
                        "      for (tl_i64 kj = 0; kj < %lldL; kj++) {\n", c, kh, kw);
    tl_strbuf_printf(s, "        const tl_i64 y = i * sh + ki - ph, x = j * sw + kj - pw;\n"
                        "        if (y >= 0 && y < %lldL && x >= 0 && x < %lldL)\n"
                        "          acc += b%d[((o * %lldL + c) * %lldL + ki) * %lldL + kj] * b%d[((n * %lldL + c) * %lldL + y) * %lldL + x];\n"
                        "      }\n", h, w, p->slot_b, c, kh, kw, p->slot_a, c, h, w);
  }
  tl_strbuf_puts(s, "  b0[tl_gid] = acc;\n");
}

char *tl_render_gpu(const tl_lowered *l, const tl_gpu_target *target) {
  tl_strbuf s = {0};
  tl_strbuf_puts(&s, tl_render_gpu_prelude(target->lang));
  tl_strbuf_puts(&s, "\nTL_KERNEL ");
  bool conv_gemm = tl_render_gpu_conv_gemm(l, target);
  if ((l->gemm && !target->cpu) || conv_gemm)
    tl_strbuf_printf(&s, "TL_GROUP_SIZE(%d, %d) ", TL_GPU_TILE, TL_GPU_TILE);
  tl_strbuf_puts(&s, "void tl_kernel(");
  bool strided_items = strided(l, target);
  params(&s, l, strided_items);
  tl_strbuf_puts(&s, ") {\n");
  pointers(&s, l);
  if (l->gemm) {
    tl_render_gpu_gemm(&s, l, target);
  } else if (conv_gemm) {
    tl_render_gpu_conv(&s, l);
  } else if (group_mode(l, group_size(target))) {
    group_kernel(&s, l, group_size(target), target);
  } else if (strided_items) {
    tl_strbuf_printf(&s, "  TL_UNROLL4\n  for (tl_i64 tl_gid = TL_GID(0); tl_gid < %lldL; tl_gid += %lldL) {\n",
                     (long long)l->work, (long long)strided_grid(l, target));
    tl_cstyle_block(&s, &cl_grid, l->root, 2);
    tl_strbuf_puts(&s, "  }\n");
  } else {
    tl_strbuf_puts(&s, "  const tl_i64 tl_gid = TL_GID(0);\n");
    if (l->scatter) {
      scatter_body(&s, l);
    } else if (l->conv) {
      conv_body(&s, l);
    } else if (has_parallel_loop(l->root)) {
      tl_cstyle_block(&s, &cl_grid, l->root, 1);
    } else { /* no loop to spread: work-item 0 runs it */
      tl_strbuf_puts(&s, "  if (tl_gid == 0) {\n");
      tl_cstyle_block(&s, &cl_grid, l->root, 2);
      tl_strbuf_puts(&s, "  }\n");
    }
  }
  tl_strbuf_puts(&s, "}\n");
  return tl_strbuf_take(&s);
}
