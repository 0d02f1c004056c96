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
static const tl_dialect cl_range = {.i64 = "L", .nan = "TL_NAN", .inf = "TL_INF"};

static int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

static int64_t gemm_batches(const tl_gemm_plan *g) {
  int64_t b = 1;
  for (int i = 0; i < g->nbatch; i++) b *= g->bshape[i];
  return b;
}

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

static const char *red_name(int dtype) {
  switch (dtype) {
  case TL_BOOL: return "bool";
  case TL_I32: return "i32";
  case TL_I64: return "i64";
  case TL_F32: return "f32";
  default: return "f64";
  }
}

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
static void combine(tl_strbuf *s, const tl_stmt *acc, int depth, int gs) {
  long long id = (long long)acc->u->arg.i;
  const char *r = red_name(acc->u->dtype);
  bool nan = acc->reduce_op == TL_OP_RMAX && tl_dtype_is_float(acc->u->dtype);
  const char *op = acc->reduce_op == TL_OP_RSUM ? "x + y" : acc->reduce_op == TL_OP_RPROD ? "x * y" : "x > y ? x : y";
  indent(s, depth);
  tl_strbuf_printf(s, "tl_red_%s[tl_lid] = acc%lld;%s\n", r, id, nan ? "" : "");
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
  tl_strbuf_printf(s, "acc%lld = tl_red_%s[0];%s\n", id, r, "");
  if (nan) indent(s, depth), tl_strbuf_printf(s, "nan%lld = tl_red_nan[0];\n", id);
  indent(s, depth);
  tl_strbuf_puts(s, "TL_BARRIER();\n");
}

static void group_body(tl_strbuf *s, const tl_block *b, int depth, int gs) {
  for (int i = 0; i < b->n; i++) {
    const tl_stmt *st = b->items[i];
    if (st->kind == TL_STMT_STORE) {
      indent(s, depth);
      tl_strbuf_puts(s, "if (tl_lid == 0) {\n");
      tl_cstyle_stmt(s, &cl_grid, st, depth + 1);
      indent(s, depth);
      tl_strbuf_puts(s, "}\n");
    } else if (st->kind == TL_STMT_LOOP) {
      long long r = (long long)st->u->arg.i;
      indent(s, depth);
      tl_strbuf_printf(s, "for (tl_i64 r%lld = tl_lid; r%lld < %lldL; r%lld += %d) {\n", r, r, (long long)st->u->arg2, r, gs);
      tl_cstyle_block(s, &cl_grid, st->body, depth + 1);
      indent(s, depth);
      tl_strbuf_puts(s, "}\n");
      for (int j = 0; j < i; j++)
        if (b->items[j]->kind == TL_STMT_ACC && updates(st->body, b->items[j]->u)) combine(s, b->items[j], depth, gs);
      tl_cstyle_loop_end(s, &cl_grid, st, depth);
    } else {
      tl_cstyle_stmt(s, &cl_grid, st, depth);
    }
  }
}

static void group_kernel(tl_strbuf *s, const tl_lowered *l, int gs) {
  group_arrays(s, l, gs);
  tl_strbuf_puts(s, "  const tl_i64 tl_grp = TL_GRP(0);\n  const int tl_lid = TL_LID(0);\n");
  if (!has_parallel_loop(l->root)) {
    group_body(s, l->root, 1, gs);
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
    group_body(s, st->body, 2, gs);
    tl_strbuf_puts(s, "  }\n");
  }
}

/* the elements a CONV2D writes: y, dx or dw */
static int64_t conv_outputs(const tl_conv_plan *p) {
  return p->mode == 2 ? p->o * p->c * p->kh * p->kw : p->mode == 1 ? p->n * p->c * p->h * p->w : p->n * p->o * p->oh * p->ow;
}

/* elements of C's dtype in a 32-byte vector (AVX2's) */
static int cpu_lanes(const tl_lowered *l) { return l->args[0]->dtype == TL_F32 ? 8 : 4; }

void tl_render_gpu_grid(const tl_lowered *l, const tl_gpu_target *t, int *dims, size_t global[3], size_t local[3]) {
  for (int d = 0; d < 3; d++) global[d] = local[d] = 1;
  if (l->gemm && t->cpu) { /* a work-item per ROWS x lanes block of C */
    const tl_gemm_plan *g = l->gemm;
    *dims = 3;
    global[0] = (size_t)((g->n + cpu_lanes(l) - 1) / cpu_lanes(l));
    global[1] = (size_t)((g->m + TL_GPU_CPU_ROWS - 1) / TL_GPU_CPU_ROWS);
    global[2] = (size_t)gemm_batches(g);
    local[0] = 0; /* the driver's choice */
    return;
  }
  if (l->gemm) { /* tiles of C: (columns, rows, batches) */
    const tl_gemm_plan *g = l->gemm;
    *dims = 3;
    global[0] = (size_t)(round_up(g->n, TL_GPU_TILE * TL_GPU_REG) / TL_GPU_REG);
    global[1] = (size_t)(round_up(g->m, TL_GPU_TILE * TL_GPU_REG) / TL_GPU_REG);
    global[2] = (size_t)gemm_batches(g);
    local[0] = local[1] = TL_GPU_TILE;
    return;
  }
  int64_t work = l->scatter ? l->scatter->rows * l->scatter->d : l->conv ? conv_outputs(l->conv)
                : l->work > 0 ? l->work : 1;
  *dims = 1;
  int gs = group_size(t);
  if (group_mode(l, gs)) { /* a work-group an iteration */
    local[0] = (size_t)gs;
    global[0] = (size_t)work * (size_t)gs;
    return;
  }
  local[0] = (size_t)(work < gs ? work : gs);
  global[0] = (size_t)round_up(work, (int64_t)local[0]);
}

/* the parameters: each slot as a buffer and a byte offset into it, then the random
 * streams' keys and counters */
static void params(tl_strbuf *s, const tl_lowered *l) {
  for (int i = 0; i < l->nargs; i++)
    tl_strbuf_printf(s, "%sTL_GLOBAL %s%s *g%d, tl_u64 o%d", i ? ", " : "", i ? "const " : "",
                     tl_cstyle_ctype(l->args[i]->dtype), i, i);
  for (int j = 0; j < l->nrng; j++) tl_strbuf_printf(s, ", tl_u64 rk%d, tl_u64 rs%d", j, j);
}

static void pointers(tl_strbuf *s, const tl_lowered *l) {
  for (int i = 0; i < l->nargs; i++) {
    const char *t = tl_cstyle_ctype(l->args[i]->dtype), *c = i ? "const " : "";
    tl_strbuf_printf(s, "  TL_GLOBAL %s%s *b%d = (TL_GLOBAL %s%s *)((TL_GLOBAL %schar *)g%d + o%d);\n", c, t, i, c, t, c,
                     i, i);
  }
}

/* the batch bi = TL_GID(2) as offsets into A, B and C, and the operands */
static void gemm_operands(tl_strbuf *s, const tl_lowered *l) {
  const tl_gemm_plan *g = l->gemm;
  tl_strbuf_printf(s, "  tl_i64 x = TL_GID(2), oa = %lldL, ob = %lldL, oc = 0, q;\n", (long long)g->off_a,
                   (long long)g->off_b);
  tl_strbuf_puts(s, "  const tl_i64 bi = x;\n");
  for (int i = g->nbatch - 1; i >= 0; i--)
    tl_strbuf_printf(s, "  q = x %% %lldL; x /= %lldL; oa += q * %lldL; ob += q * %lldL; oc += q * %lldL;\n",
                     (long long)g->bshape[i], (long long)g->bshape[i], (long long)g->bsa[i], (long long)g->bsb[i],
                     (long long)g->bsc[i]);
  const char *t = tl_cstyle_ctype(l->args[0]->dtype);
  tl_strbuf_printf(s, "  TL_GLOBAL const %s *A = b%d + oa, *B = b%d + ob;\n", t, g->slot_a, g->slot_b);
}

/* On a CPU (PoCL runs a work-group as loops over its work-items, and vectorizes only
 * what the kernel writes as vectors): a work-item computes ROWS rows of one vector of
 * lanes columns of C, its sums in vector registers, no local memory and no barriers;
 * a row past M reads row M - 1 (valid memory) and stores nothing. A full vector of B
 * is one vload; a partial one (the last columns, or B's columns not contiguous) is
 * read lane by lane. The epilogue runs over the row's stored columns. */
static void gemm_cpu_body(tl_strbuf *s, const tl_lowered *l) {
  const tl_gemm_plan *g = l->gemm;
  const char *t = tl_cstyle_ctype(l->args[0]->dtype);
  int V = cpu_lanes(l), RR = TL_GPU_CPU_ROWS;
  long long M = g->m, N = g->n, K = g->k, sam = g->sam, sak = g->sak, sbk = g->sbk, sbn = g->sbn;
  tl_strbuf_printf(s, "  const tl_i64 n0 = (tl_i64)TL_GID(0) * %d, mb = (tl_i64)TL_GID(1) * %d;\n", V, RR);
  gemm_operands(s, l);
  tl_strbuf_printf(s, "  const int full = n0 + %d <= %lldL%s;\n", V, N, sbn == 1 ? "" : " && 0");
  for (int i = 0; i < RR; i++)
    tl_strbuf_printf(s, "  %s%d c%d = 0; const tl_i64 a%d = (mb + %d < %lldL ? mb + %d : %lldL - 1) * %lldL;\n", t, V, i, i, i,
                     M, i, M, sam);
  tl_strbuf_printf(s, "  for (tl_i64 k = 0; k < %lldL; k++) {\n    %s%d b;\n", K, t, V);
  tl_strbuf_printf(s, "    if (full) b = vload%d(0, B + k * %lldL + n0);\n    else {\n", V, sbk);
  for (int j = 0; j < V; j++)
    tl_strbuf_printf(s, "      b.s%x = n0 + %d < %lldL ? B[k * %lldL + (n0 + %d) * %lldL] : 0;\n", j, j, N, sbk, j, sbn);
  tl_strbuf_puts(s, "    }\n");
  for (int i = 0; i < RR; i++) tl_strbuf_printf(s, "    c%d = fma((%s%d)(A[a%d + k * %lldL]), b, c%d);\n", i, t, V, i, sak, i);
  tl_strbuf_puts(s, "  }\n");
  for (int i = 0; i < RR; i++) {
    tl_strbuf_printf(s, "  if (mb + %d < %lldL) {\n", i, M);
    tl_strbuf_printf(s, "    const tl_i64 m = mb + %d, begin = n0, end = n0 + %d < %lldL ? n0 + %d : %lldL;\n", i, V, N, V, N);
    tl_strbuf_printf(s, "    TL_GLOBAL %s *cr = b0 + oc + m * %lldL;\n", t, (long long)g->ldc);
    tl_strbuf_printf(s, "    if (full) vstore%d(c%d, 0, cr + n0);\n    else {\n", V, i);
    for (int j = 0; j < V; j++) tl_strbuf_printf(s, "      if (n0 + %d < %lldL) cr[n0 + %d] = c%d.s%x;\n", j, N, j, i, j);
    tl_strbuf_puts(s, "    }\n");
    if (l->epilogue) {
      tl_strbuf_printf(s, "    {\n      const tl_i64 r%lld = bi, r%lld = m;\n", (long long)l->epi_bi, (long long)l->epi_m);
      tl_cstyle_block(s, &cl_range, l->root, 3);
      tl_strbuf_puts(s, "    }\n");
    }
    tl_strbuf_puts(s, "  }\n");
  }
}

/* C[b][m, n] = sum_k A[b][m, k] B[b][k, n]. A work-group of TILE x TILE work-items
 * computes a BLOCK x BLOCK block of C (BLOCK = TILE * REG): K in steps of TILE, the
 * block's rows of A and columns of B staged in local memory; a work-item holds REG x
 * REG sums in registers, rows ly + TILE i and columns lx + TILE j, so neighbouring
 * work-items read neighbouring columns of B and write neighbouring elements of C.
 * Each element then gets the epilogue (the elementwise consumers fused in). */
static void gemm_body(tl_strbuf *s, const tl_lowered *l) {
  const tl_gemm_plan *g = l->gemm;
  const char *t = tl_cstyle_ctype(l->args[0]->dtype);
  enum { T = TL_GPU_TILE, R = TL_GPU_REG, BL = TL_GPU_TILE * TL_GPU_REG };
  long long M = g->m, N = g->n, K = g->k;
  tl_strbuf_printf(s, "  TL_SHARED %s As[%d][%d], Bs[%d][%d];\n", t, T, BL + 1, T, BL);
  tl_strbuf_printf(s, "  const int lx = TL_LID(0), ly = TL_LID(1), li = ly * %d + lx;\n", T);
  tl_strbuf_printf(s, "  const tl_i64 m0 = (tl_i64)TL_GRP(1) * %d, n0 = (tl_i64)TL_GRP(0) * %d;\n", BL, BL);
  gemm_operands(s, l);
  tl_strbuf_printf(s, "  %s acc[%d][%d];\n  for (int i = 0; i < %d; i++)\n    for (int j = 0; j < %d; j++) acc[i][j] = 0;\n",
                   t, R, R, R, R);
  tl_strbuf_printf(s, "  for (tl_i64 k0 = 0; k0 < %lldL; k0 += %d) {\n", K, T);
  /* the block's A (BL rows x T) and B (T x BL columns): BL * T elements each, R * R a work-item */
  tl_strbuf_printf(s, "    for (int e = li; e < %d; e += %d) {\n"
                      "      const int r = e / %d, kk = e %% %d;\n"
                      "      const tl_i64 gm = m0 + r, gk = k0 + kk;\n"
                      "      As[kk][r] = gm < %lldL && gk < %lldL ? A[gm * %lldL + gk * %lldL] : 0;\n"
                      "      const int kb = e / %d, c = e %% %d;\n"
                      "      const tl_i64 gkb = k0 + kb, gn = n0 + c;\n"
                      "      Bs[kb][c] = gkb < %lldL && gn < %lldL ? B[gkb * %lldL + gn * %lldL] : 0;\n"
                      "    }\n",
                   BL * T, T * T, T, T, M, K, (long long)g->sam, (long long)g->sak, BL, BL, K, N, (long long)g->sbk,
                   (long long)g->sbn);
  tl_strbuf_printf(s, "    TL_BARRIER();\n"
                      "    for (int kk = 0; kk < %d; kk++) {\n"
                      "      %s a[%d], b[%d];\n"
                      "      for (int i = 0; i < %d; i++) a[i] = As[kk][ly + %d * i];\n"
                      "      for (int j = 0; j < %d; j++) b[j] = Bs[kk][lx + %d * j];\n"
                      "      for (int i = 0; i < %d; i++)\n"
                      "        for (int j = 0; j < %d; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);\n"
                      "    }\n"
                      "    TL_BARRIER();\n  }\n",
                   T, t, R, R, R, T, R, T, R, R);
  tl_strbuf_printf(s, "  for (int i = 0; i < %d; i++)\n    for (int j = 0; j < %d; j++) {\n", R, R);
  tl_strbuf_printf(s, "      const tl_i64 m = m0 + ly + %d * i, n = n0 + lx + %d * j;\n", T, T);
  tl_strbuf_printf(s, "      if (m >= %lldL || n >= %lldL) continue;\n", M, N);
  tl_strbuf_printf(s, "      b0[oc + m * %lldL + n] = acc[i][j];\n", (long long)g->ldc);
  if (l->epilogue) {
    tl_strbuf_printf(s, "      {\n        const tl_i64 r%lld = bi, r%lld = m, begin = n, end = n + 1;\n", (long long)l->epi_bi,
                     (long long)l->epi_m);
    tl_cstyle_block(s, &cl_range, l->root, 4);
    tl_strbuf_puts(s, "      }\n");
  }
  tl_strbuf_puts(s, "    }\n");
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
  if (l->gemm && !target->cpu)
    tl_strbuf_printf(&s, "TL_GROUP_SIZE(%d, %d) ", TL_GPU_TILE, TL_GPU_TILE);
  tl_strbuf_puts(&s, "void tl_kernel(");
  params(&s, l);
  tl_strbuf_puts(&s, ") {\n");
  pointers(&s, l);
  if (l->gemm && target->cpu) {
    gemm_cpu_body(&s, l);
  } else if (l->gemm) {
    gemm_body(&s, l);
  } else if (group_mode(l, group_size(target))) {
    group_kernel(&s, l, group_size(target));
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
