/* render_cl.c — OpenCL C kernels from the loop AST, in the OpenCL dialect of
 * render_cstyle.c, after the OpenCL prelude (prelude_cl.h, then core/scalar.h: the
 * kernels compute every scalar as the C kernels and the interpreter do).
 * in: a lowered kernel; out: the source of one `__kernel void tl_kernel(...)` whose
 * work-items are the plan's grid (tl_render_cl_grid). */
#include "render_cl.h"

#include <stdio.h>
#include <string.h>

#include "codegen/render_cstyle.h"

static const char prelude_cl_text[] =
#include "prelude_cl.inc"
    ;

const char *tl_render_cl_prelude(void) { return prelude_cl_text; }

/* the parallel loop is the grid (one iteration a work-item); the GEMM epilogue runs
 * its row's columns [begin, end) */
static const tl_dialect cl_grid = {.i64 = "L", .nan = "NAN", .inf = "INFINITY", .grid = true};
static const tl_dialect cl_range = {.i64 = "L", .nan = "NAN", .inf = "INFINITY"};

static int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

static int64_t gemm_batches(const tl_gemm_plan *g) {
  int64_t b = 1;
  for (int i = 0; i < g->nbatch; i++) b *= g->bshape[i];
  return b;
}

void tl_render_cl_grid(const tl_lowered *l, int *dims, size_t global[3], size_t local[3]) {
  for (int d = 0; d < 3; d++) global[d] = local[d] = 1;
  if (l->gemm) { /* tiles of C: (columns, rows, batches) */
    const tl_gemm_plan *g = l->gemm;
    *dims = 3;
    global[0] = (size_t)round_up(g->n, TL_CL_TILE);
    global[1] = (size_t)round_up(g->m, TL_CL_TILE);
    global[2] = (size_t)gemm_batches(g);
    local[0] = local[1] = TL_CL_TILE;
    return;
  }
  int64_t work = l->scatter ? l->scatter->rows * l->scatter->d : l->work > 0 ? l->work : 1;
  *dims = 1;
  local[0] = (size_t)(work < TL_CL_GROUP ? work : TL_CL_GROUP);
  global[0] = (size_t)round_up(work, (int64_t)local[0]);
}

/* the parameters: each slot as a buffer and a byte offset into it, then the random
 * streams' keys and counters */
static void params(tl_strbuf *s, const tl_lowered *l) {
  for (int i = 0; i < l->nargs; i++)
    tl_strbuf_printf(s, "%s__global %s%s *g%d, ulong o%d", i ? ", " : "", i ? "const " : "",
                     tl_cstyle_ctype(l->args[i]->dtype), i, i);
  for (int j = 0; j < l->nrng; j++) tl_strbuf_printf(s, ", ulong rk%d, ulong rs%d", j, j);
}

static void pointers(tl_strbuf *s, const tl_lowered *l) {
  for (int i = 0; i < l->nargs; i++) {
    const char *t = tl_cstyle_ctype(l->args[i]->dtype), *c = i ? "const " : "";
    tl_strbuf_printf(s, "  __global %s%s *b%d = (__global %s%s *)((__global %schar *)g%d + o%d);\n", c, t, i, c, t, c,
                     i, i);
  }
}

/* C[b][m, n] = sum_k A[b][m, k] B[b][k, n]: a work-group computes a TILE x TILE tile
 * of C, K in steps of TILE through tiles of A and B in local memory; a work-item its
 * element, then the epilogue on it (the elementwise consumers fused in) */
static void gemm_body(tl_strbuf *s, const tl_lowered *l) {
  const tl_gemm_plan *g = l->gemm;
  const char *t = tl_cstyle_ctype(l->args[0]->dtype);
  tl_strbuf_printf(s, "  __local %s ta[%d][%d], tb[%d][%d];\n", t, TL_CL_TILE, TL_CL_TILE + 1, TL_CL_TILE,
                   TL_CL_TILE + 1);
  tl_strbuf_puts(s, "  const tl_i64 n = get_global_id(0), m = get_global_id(1);\n"
                    "  const int lx = get_local_id(0), ly = get_local_id(1);\n");
  tl_strbuf_printf(s, "  tl_i64 x = get_global_id(2), oa = %lldL, ob = %lldL, oc = 0, q;\n", (long long)g->off_a,
                   (long long)g->off_b);
  tl_strbuf_puts(s, "  const tl_i64 bi = x;\n");
  for (int i = g->nbatch - 1; i >= 0; i--)
    tl_strbuf_printf(s, "  q = x %% %lldL; x /= %lldL; oa += q * %lldL; ob += q * %lldL; oc += q * %lldL;\n",
                     (long long)g->bshape[i], (long long)g->bshape[i], (long long)g->bsa[i], (long long)g->bsb[i],
                     (long long)g->bsc[i]);
  tl_strbuf_printf(s, "  __global const %s *A = b%d + oa, *B = b%d + ob;\n", t, g->slot_a, g->slot_b);
  tl_strbuf_printf(s, "  %s sum = 0;\n", t);
  long long M = g->m, N = g->n, K = g->k;
  tl_strbuf_printf(s, "  for (tl_i64 k0 = 0; k0 < %lldL; k0 += %d) {\n", K, TL_CL_TILE);
  tl_strbuf_printf(s, "    tl_i64 ka = k0 + lx, kb = k0 + ly;\n"
                      "    ta[ly][lx] = m < %lldL && ka < %lldL ? A[m * %lldL + ka * %lldL] : 0;\n"
                      "    tb[ly][lx] = kb < %lldL && n < %lldL ? B[kb * %lldL + n * %lldL] : 0;\n",
                   M, K, (long long)g->sam, (long long)g->sak, K, N, (long long)g->sbk, (long long)g->sbn);
  tl_strbuf_printf(s, "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                      "    for (int kk = 0; kk < %d; kk++) sum += ta[ly][kk] * tb[kk][lx];\n"
                      "    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n",
                   TL_CL_TILE);
  tl_strbuf_printf(s, "  if (m >= %lldL || n >= %lldL) return;\n", M, N);
  tl_strbuf_printf(s, "  b0[oc + m * %lldL + n] = sum;\n", (long long)g->ldc);
  if (!l->epilogue) return;
  tl_strbuf_printf(s, "  {\n    const tl_i64 r%lld = bi, r%lld = m, begin = n, end = n + 1;\n", (long long)l->epi_bi,
                   (long long)l->epi_m);
  tl_cstyle_block(s, &cl_range, l->root, 2);
  tl_strbuf_puts(s, "  }\n");
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

static bool has_parallel_loop(const tl_block *b) {
  for (int i = 0; i < b->n; i++)
    if (b->items[i]->kind == TL_STMT_LOOP && b->items[i]->parallel) return true;
  return false;
}

char *tl_render_cl(const tl_lowered *l) {
  tl_strbuf s = {0};
  tl_strbuf_puts(&s, prelude_cl_text);
  tl_strbuf_puts(&s, "\n__kernel ");
  if (l->gemm) tl_strbuf_printf(&s, "__attribute__((reqd_work_group_size(%d, %d, 1))) ", TL_CL_TILE, TL_CL_TILE);
  tl_strbuf_puts(&s, "void tl_kernel(");
  params(&s, l);
  tl_strbuf_puts(&s, ") {\n");
  pointers(&s, l);
  if (l->gemm) {
    gemm_body(&s, l);
  } else {
    tl_strbuf_puts(&s, "  const tl_i64 tl_gid = get_global_id(0);\n");
    if (l->scatter) {
      scatter_body(&s, l);
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
