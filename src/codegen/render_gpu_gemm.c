/* render_gpu_gemm.c — GEMM kernels in the GPU renderer's words (prelude_cl.h,
 * prelude_cuda.h): C[b][m, n] = sum_k A[b][m, k] B[b][k, n] with the fused epilogue,
 * for any strides of A and B. A CPU device (PoCL) gets vectors of C in registers; a
 * GPU gets tiles in local memory: 64 x 64 blocks of C for small products (more groups
 * than a GPU has cores), 128 x 128 with double-buffered tiles for large f32 ones.
 * in: a lowered kernel with its GEMM plan; out: its body and grid. */
#include "codegen/render_gpu_gemm.h"

#include <stdint.h>
#include <stdio.h>

#include "codegen/render_cstyle.h"

/* the epilogue runs over a row's columns [begin, end) */
static const tl_dialect cl_range = {.i64 = "L", .nan = "TL_NAN", .inf = "TL_INF"};

/* the step along K of the large GEMM: 8 measured 34 TFLOP/s on an H200 at 4096^3, 16
 * 29 (more registers a work-item); a build may try others (-DTL_GPU_BIG_K=16) */
#ifndef TL_GPU_BIG_K
#define TL_GPU_BIG_K 8
#endif

enum {
  BIG = 128,           /* a large GEMM's block of C: BIG x BIG */
  BIG_K = TL_GPU_BIG_K, /* ... and its step along K */
  BIG_PAD = 4,         /* local rows padded: 132 floats, still 16-byte aligned */
  BIG_MIN_BLOCKS = 256 /* blocks of C before the large kernel pays: two a core of a large GPU */
};

static int64_t gemm_batches(const tl_gemm_plan *g) {
  int64_t b = 1;
  for (int i = 0; i < g->nbatch; i++) b *= g->bshape[i];
  return b;
}

static int64_t blocks_of(int64_t n, int64_t m) { return (n + m - 1) / m; }

/* elements of C's dtype in a 32-byte vector (AVX2's) */
static int cpu_lanes(const tl_lowered *l) { return l->args[0]->dtype == TL_F32 ? 8 : 4; }

static bool big_gemm(const tl_lowered *l, const tl_gpu_target *t) {
  const tl_gemm_plan *g = l->gemm;
  return !t->cpu && l->args[0]->dtype == TL_F32 &&
         blocks_of(g->m, BIG) * blocks_of(g->n, BIG) * gemm_batches(g) >= BIG_MIN_BLOCKS;
}

void tl_render_gpu_gemm_grid(const tl_lowered *l, const tl_gpu_target *t, int *dims, size_t global[3], size_t local[3]) {
  const tl_gemm_plan *g = l->gemm;
  *dims = 3;
  global[2] = (size_t)gemm_batches(g);
  if (t->cpu) { /* a work-item per ROWS x lanes block of C */
    global[0] = (size_t)blocks_of(g->n, cpu_lanes(l));
    global[1] = (size_t)blocks_of(g->m, TL_GPU_CPU_ROWS);
    local[0] = 0; /* the driver's choice */
    return;
  }
  int64_t block = big_gemm(l, t) ? BIG : TL_GPU_TILE * TL_GPU_REG; /* TILE x TILE work-items a block */
  global[0] = (size_t)(blocks_of(g->n, block) * TL_GPU_TILE);
  global[1] = (size_t)(blocks_of(g->m, block) * TL_GPU_TILE);
  local[0] = local[1] = TL_GPU_TILE;
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

/* C[m, n] stored, then its epilogue (the elementwise consumers fused in), at depth */
static void store_element(tl_strbuf *s, const tl_lowered *l, const char *value, int depth) {
  for (int i = 0; i < depth; i++) tl_strbuf_puts(s, "  ");
  tl_strbuf_printf(s, "b0[oc + m * %lldL + n] = %s;\n", (long long)l->gemm->ldc, value);
  if (!l->epilogue) return;
  for (int i = 0; i < depth; i++) tl_strbuf_puts(s, "  ");
  tl_strbuf_printf(s, "{\n");
  for (int i = 0; i <= depth; i++) tl_strbuf_puts(s, "  ");
  tl_strbuf_printf(s, "const tl_i64 r%lld = bi, r%lld = m, begin = n, end = n + 1;\n", (long long)l->epi_bi,
                   (long long)l->epi_m);
  tl_cstyle_block(s, &cl_range, l->root, depth + 1);
  for (int i = 0; i < depth; i++) tl_strbuf_puts(s, "  ");
  tl_strbuf_puts(s, "}\n");
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
  store_element(s, l, "acc[i][j]", 3);
  tl_strbuf_puts(s, "    }\n");
}


/* ---- the large f32 GEMM ---------------------------------------------------------------
 * A group of 16 x 16 work-items computes a 128 x 128 block of C, 8 x 8 elements each:
 * rows 4 ly + i and 64 + 4 ly + i, columns 4 lx + j and 64 + 4 lx + j (i, j < 4), so
 * each step along K reads its 8 + 8 operands as four 4-wide loads from local memory,
 * and a warp's loads of B touch consecutive words. K goes in steps of BIG_K through
 * two local buffers: while the group multiplies one, each work-item's loads of the
 * next step's A and B (BIG_Q elements of each) are in flight, then stored into the
 * other; one barrier a step. An operand contiguous along K is read as BIG_Q
 * consecutive elements of one row a work-item (128 rows, 2 halves of the step); one
 * contiguous along M (or N) as runs of 4 consecutive elements, a warp reading 128 of
 * a row. (Measured on an H200 at 4096^3: this 34 TFLOP/s; a warp's A loads from 32
 * rows and B stored 4 wide, 30.) */
enum { BIG_Q = BIG * BIG_K / 256 }; /* elements of each operand a work-item loads a step */

static const char *plus(int q) {
  static const char *const p[] = {"", " + 1", " + 2", " + 3", " + 4", " + 5", " + 6", " + 7"};
  return p[q];
}

/* the work-item's elements of A (a) or B: row mn and step k of the first */
static void big_coords(tl_strbuf *s, const char *name, bool along_k) {
  if (along_k) /* two work-items a row of the tile (BIG_Q = BIG_K / 2) */
    tl_strbuf_printf(s, "  const int %s_mn = li >> 1, %s_k = (li & 1) * %d;\n", name, name, BIG_Q);
  else
    tl_strbuf_printf(s, "  const int %s_mn = (li & 31) * 4, %s_k = li >> 5;\n", name, name);
}

/* element q's tile row (of M or N) and step of K, as expressions */
static void big_element(char *ie, char *ke, size_t cap, const char *n, const char *k0, bool is_a, bool along_k, int q) {
  if (along_k) {
    snprintf(ie, cap, "%s0 + %s_mn", is_a ? "m" : "n", n);
    snprintf(ke, cap, "%s + %s_k%s", k0, n, plus(q));
  } else { /* 4 along M (or N), then the next 8 steps of K */
    snprintf(ie, cap, "%s0 + %s_mn%s", is_a ? "m" : "n", n, plus(q % 4));
    snprintf(ke, cap, "%s + %s_k + %d", k0, n, q / 4 * 8);
  }
}

static void big_load(tl_strbuf *s, const tl_gemm_plan *g, bool is_a, bool along_k, const char *k0) {
  const char *n = is_a ? "a" : "b";
  long long mn = is_a ? g->m : g->n, smn = is_a ? g->sam : g->sbn, sk = is_a ? g->sak : g->sbk, K = g->k;
  bool guard_mn = mn % BIG != 0, guard_k = K % BIG_K != 0;
  for (int q = 0; q < BIG_Q; q++) {
    char ie[64], ke[64];
    big_element(ie, ke, sizeof ie, n, k0, is_a, along_k, q);
    tl_strbuf_printf(s, "      r%s[%d] = ", n, q);
    if (guard_mn || guard_k) {
      tl_strbuf_puts(s, "(");
      if (guard_mn) tl_strbuf_printf(s, "%s < %lldL", ie, mn);
      if (guard_mn && guard_k) tl_strbuf_puts(s, " && ");
      if (guard_k) tl_strbuf_printf(s, "%s < %lldL", ke, K);
      tl_strbuf_puts(s, ") ? ");
    }
    tl_strbuf_printf(s, "%s[(%s) * %lldL + (%s) * %lldL]", is_a ? "A" : "B", ie, smn, ke, sk);
    tl_strbuf_puts(s, guard_mn || guard_k ? " : 0;\n" : ";\n");
  }
}

static void big_store(tl_strbuf *s, bool is_a, bool along_k, const char *buf) {
  const char *n = is_a ? "a" : "b", *tile = is_a ? "As" : "Bs";
  if (along_k) {
    for (int q = 0; q < BIG_Q; q++)
      tl_strbuf_printf(s, "      %s[%s][%s_k + %d][%s_mn] = r%s[%d];\n", tile, buf, n, q, n, n, q);
    return;
  }
  for (int q = 0; q < BIG_Q; q++)
    tl_strbuf_printf(s, "      %s[%s][%s_k + %d][%s_mn + %d] = r%s[%d];\n", tile, buf, n, q / 4 * 8, n, q % 4, n, q);
}

/* the group's block of C: groups launched together take GROUP rows of blocks a column
 * at a time, so the B columns they read are shared in L2 (a 4096^2 operand is larger
 * than an H200's L2) */
#ifndef TL_GPU_GEMM_GROUP
#define TL_GPU_GEMM_GROUP 8
#endif
static void big_block(tl_strbuf *s, const tl_gemm_plan *g) {
  long long bx = blocks_of(g->n, BIG), by = blocks_of(g->m, BIG), G = TL_GPU_GEMM_GROUP;
  if (G <= 1 || by <= G) {
    tl_strbuf_printf(s, "  const tl_i64 m0 = (tl_i64)TL_GRP(1) * %d, n0 = (tl_i64)TL_GRP(0) * %d;\n", BIG, BIG);
    return;
  }
  tl_strbuf_printf(s, "  const tl_i64 pid = (tl_i64)TL_GRP(1) * %lldL + TL_GRP(0), first = pid / %lldL * %lldL;\n", bx, G * bx, G);
  tl_strbuf_printf(s, "  const tl_i64 rows = %lldL - first < %lldL ? %lldL - first : %lldL, in = pid %% %lldL;\n", by, G, by, G,
                   G * bx);
  tl_strbuf_printf(s, "  const tl_i64 m0 = (first + in %% rows) * %d, n0 = in / rows * %d;\n", BIG, BIG);
}

static void gemm_big_body(tl_strbuf *s, const tl_lowered *l) {
  const tl_gemm_plan *g = l->gemm;
  bool a_k = g->sak == 1 || g->sam != 1, b_k = g->sbk == 1 && g->sbn != 1;
  long long M = g->m, N = g->n, steps = (g->k + BIG_K - 1) / BIG_K;
  int W = BIG + BIG_PAD;
  tl_strbuf_printf(s, "  TL_SHARED TL_ALIGN16 float As[2][%d][%d];\n  TL_SHARED TL_ALIGN16 float Bs[2][%d][%d];\n", BIG_K,
                   W, BIG_K, W);
  tl_strbuf_puts(s, "  const int lx = TL_LID(0), ly = TL_LID(1), li = ly * 16 + lx;\n");
  big_block(s, g);
  gemm_operands(s, l);
  big_coords(s, "a", a_k);
  big_coords(s, "b", b_k);
  tl_strbuf_printf(s, "  float acc[8][8], ra[%d], rb[%d];\n", BIG_Q, BIG_Q);
  tl_strbuf_puts(s, ""
                    "  for (int i = 0; i < 8; i++)\n    for (int j = 0; j < 8; j++) acc[i][j] = 0;\n"
                    "  {\n");
  big_load(s, g, true, a_k, "0");
  big_load(s, g, false, b_k, "0");
  big_store(s, true, a_k, "0");
  big_store(s, false, b_k, "0");
  tl_strbuf_puts(s, "  }\n  TL_BARRIER();\n");
  tl_strbuf_printf(s, "  for (tl_i64 kt = 0; kt < %lldL; kt++) {\n    const int cur = (int)(kt & 1);\n", steps);
  tl_strbuf_printf(s, "    if (kt + 1 < %lldL) {\n      const tl_i64 k0 = (kt + 1) * %d;\n", steps, BIG_K);
  big_load(s, g, true, a_k, "k0");
  big_load(s, g, false, b_k, "k0");
  tl_strbuf_puts(s, "    }\n");
  tl_strbuf_printf(s, "    for (int kk = 0; kk < %d; kk++) {\n", BIG_K);
  tl_strbuf_puts(s, "      const float4 a0 = TL_LOAD4(&As[cur][kk][ly * 4]), a1 = TL_LOAD4(&As[cur][kk][64 + ly * 4]);\n"
                    "      const float4 q0 = TL_LOAD4(&Bs[cur][kk][lx * 4]), q1 = TL_LOAD4(&Bs[cur][kk][64 + lx * 4]);\n"
                    "      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};\n"
                    "      const float b[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};\n"
                    "      for (int i = 0; i < 8; i++)\n"
                    "        for (int j = 0; j < 8; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);\n"
                    "    }\n");
  tl_strbuf_printf(s, "    if (kt + 1 < %lldL) {\n", steps);
  big_store(s, true, a_k, "cur ^ 1");
  big_store(s, false, b_k, "cur ^ 1");
  tl_strbuf_puts(s, "    }\n    TL_BARRIER();\n  }\n");
  tl_strbuf_puts(s, "  for (int i = 0; i < 8; i++)\n    for (int j = 0; j < 8; j++) {\n"
                    "      const tl_i64 m = m0 + (i < 4 ? ly * 4 + i : 60 + ly * 4 + i);\n"
                    "      const tl_i64 n = n0 + (j < 4 ? lx * 4 + j : 60 + lx * 4 + j);\n");
  tl_strbuf_printf(s, "      if (m >= %lldL || n >= %lldL) continue;\n", M, N);
  store_element(s, l, "acc[i][j]", 3);
  tl_strbuf_puts(s, "    }\n");
}

void tl_render_gpu_gemm(tl_strbuf *s, const tl_lowered *l, const tl_gpu_target *t) {
  if (t->cpu) gemm_cpu_body(s, l);
  else if (big_gemm(l, t)) gemm_big_body(s, l);
  else gemm_body(s, l);
}

/* ---- convolution as an implicit GEMM ----------------------------------------------------
 * A forward CONV2D (f32) on a GPU: Y[o, p] = sum_k W[o, k] X[k, p] with k = (c, ki, kj),
 * p = (n, i, j), and X[k, p] = x[n, c, i sh + ki - ph, j sw + kj - pw] (0 in the
 * padding), gathered while its tile is loaded: no columns in memory. A group of 16 x 16
 * work-items computes 64 filters x 128 pixels, 4 x 8 sums a work-item (rows 4 ly + i,
 * columns 4 lx + j and 64 + 4 lx + j), from double-buffered tiles as the large GEMM's;
 * a filter's weights are read along k, two a work-item, the pixels 4 consecutive a
 * work-item, a warp's loads along one row of the image. */
enum { CONV_BM = 64, CONV_BN = 128, CONV_BK = 8 };

bool tl_render_gpu_conv_gemm(const tl_lowered *l, const tl_gpu_target *t) {
  return !t->cpu && l->conv && l->conv->mode != 1 && l->conv->mode != 2 && l->args[0]->dtype == TL_F32;
}

void tl_render_gpu_conv_grid(const tl_lowered *l, int *dims, size_t global[3], size_t local[3]) {
  const tl_conv_plan *p = l->conv;
  *dims = 2;
  global[0] = (size_t)(blocks_of(p->n * p->oh * p->ow, CONV_BN) * TL_GPU_TILE);
  global[1] = (size_t)(blocks_of(p->o, CONV_BM) * TL_GPU_TILE);
  global[2] = 1;
  local[0] = local[1] = TL_GPU_TILE;
}

/* the gather's index type: 32-bit where every index fits (64-bit division by a
 * constant is several times the instructions) */
static const char *conv_index(const tl_conv_plan *p) {
  int64_t most = p->n * p->c * p->h * p->w, px = p->n * p->oh * p->ow, k = p->c * p->kh * p->kw;
  return most < INT32_MAX / 2 && px < INT32_MAX / 2 && k < INT32_MAX / 2 ? "int" : "tl_i64";
}

/* the next tile's weights (ra) and gathered pixels (rb) for the step at k0 */
static void conv_load(tl_strbuf *s, const tl_conv_plan *p, const char *k0) {
  long long K = p->c * p->kh * p->kw, P = p->n * p->oh * p->ow, khw = p->kh * p->kw, ohw = p->oh * p->ow;
  const char *ix = conv_index(p);
  for (int q = 0; q < 2; q++)
    tl_strbuf_printf(s, "      ra[%d] = m0 + a_o < %lldL && %s + a_k + %d < %lldL ? Wt[(m0 + a_o) * %lldL + %s + a_k + %d] : 0;\n",
                     q, (long long)p->o, k0, q, K, K, k0, q);
  tl_strbuf_printf(s, "      {\n        const %s kk = (%s)(%s + b_k), c = kk / %lld, ki = kk %% %lld / %lld, kj = kk %% %lld;\n",
                   ix, ix, k0, khw, khw, (long long)p->kw, (long long)p->kw);
  tl_strbuf_puts(s, "        for (int q = 0; q < 4; q++) {\n");
  tl_strbuf_printf(s, "          const %s px = (%s)(n0 + b_p + q), nb = px / %lld, pix = px %% %lld;\n", ix, ix, ohw, ohw);
  tl_strbuf_printf(s, "          const %s y = pix / %lld * %lld + ki - %lld, x = pix %% %lld * %lld + kj - %lld;\n", ix,
                   (long long)p->ow, (long long)p->sh, (long long)p->ph, (long long)p->ow, (long long)p->sw, (long long)p->pw);
  tl_strbuf_printf(s, "          rb[q] = kk < %lld && px < %lld && y >= 0 && y < %lld && x >= 0 && x < %lld\n"
                      "                  ? X[((nb * %lld + c) * %lld + y) * %lld + x] : 0;\n",
                   K, P, (long long)p->h, (long long)p->w, (long long)p->c, (long long)p->h, (long long)p->w);
  tl_strbuf_puts(s, "        }\n      }\n");
}

static void conv_store(tl_strbuf *s, const char *buf) {
  for (int q = 0; q < 2; q++) tl_strbuf_printf(s, "      As[%s][a_k + %d][a_o] = ra[%d];\n", buf, q, q);
  for (int q = 0; q < 4; q++) tl_strbuf_printf(s, "      Bs[%s][b_k][b_p + %d] = rb[%d];\n", buf, q, q);
}

void tl_render_gpu_conv(tl_strbuf *s, const tl_lowered *l) {
  const tl_conv_plan *p = l->conv;
  long long K = p->c * p->kh * p->kw, P = p->n * p->oh * p->ow, ohw = p->oh * p->ow, steps = (K + CONV_BK - 1) / CONV_BK;
  tl_strbuf_printf(s, "  TL_SHARED TL_ALIGN16 float As[2][%d][%d];\n  TL_SHARED TL_ALIGN16 float Bs[2][%d][%d];\n", CONV_BK,
                   CONV_BM + BIG_PAD, CONV_BK, CONV_BN + BIG_PAD);
  tl_strbuf_puts(s, "  const int lx = TL_LID(0), ly = TL_LID(1), li = ly * 16 + lx;\n");
  tl_strbuf_printf(s, "  const tl_i64 m0 = (tl_i64)TL_GRP(1) * %d, n0 = (tl_i64)TL_GRP(0) * %d;\n", CONV_BM, CONV_BN);
  tl_strbuf_printf(s, "  TL_GLOBAL const float *Wt = b%d, *X = b%d;\n", p->slot_b, p->slot_a);
  tl_strbuf_puts(s, "  const int a_o = li >> 2, a_k = (li & 3) * 2, b_p = (li & 31) * 4, b_k = li >> 5;\n"
                    "  float acc[4][8], ra[2], rb[4];\n"
                    "  for (int i = 0; i < 4; i++)\n    for (int j = 0; j < 8; j++) acc[i][j] = 0;\n  {\n");
  conv_load(s, p, "0");
  conv_store(s, "0");
  tl_strbuf_puts(s, "  }\n  TL_BARRIER();\n");
  tl_strbuf_printf(s, "  for (tl_i64 kt = 0; kt < %lldL; kt++) {\n    const int cur = (int)(kt & 1);\n", steps);
  tl_strbuf_printf(s, "    if (kt + 1 < %lldL) {\n      const tl_i64 k0 = (kt + 1) * %d;\n", steps, CONV_BK);
  conv_load(s, p, "k0");
  tl_strbuf_puts(s, "    }\n");
  tl_strbuf_printf(s, "    for (int kk = 0; kk < %d; kk++) {\n", CONV_BK);
  tl_strbuf_puts(s, "      const float4 a0 = TL_LOAD4(&As[cur][kk][ly * 4]);\n"
                    "      const float4 q0 = TL_LOAD4(&Bs[cur][kk][lx * 4]), q1 = TL_LOAD4(&Bs[cur][kk][64 + lx * 4]);\n"
                    "      const float a[4] = {a0.x, a0.y, a0.z, a0.w};\n"
                    "      const float b[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};\n"
                    "      for (int i = 0; i < 4; i++)\n"
                    "        for (int j = 0; j < 8; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);\n"
                    "    }\n");
  tl_strbuf_printf(s, "    if (kt + 1 < %lldL) {\n", steps);
  conv_store(s, "cur ^ 1");
  tl_strbuf_puts(s, "    }\n    TL_BARRIER();\n  }\n");
  tl_strbuf_puts(s, "  for (int i = 0; i < 4; i++)\n    for (int j = 0; j < 8; j++) {\n"
                    "      const tl_i64 o = m0 + ly * 4 + i, px = n0 + (j < 4 ? lx * 4 + j : 60 + lx * 4 + j);\n");
  tl_strbuf_printf(s, "      if (o >= %lldL || px >= %lldL) continue;\n", (long long)p->o, P);
  tl_strbuf_printf(s, "      b0[(px / %lldL * %lldL + o) * %lldL + px %% %lldL] = acc[i][j];\n", ohw, (long long)p->o, ohw, ohw);
  tl_strbuf_puts(s, "    }\n");
}
