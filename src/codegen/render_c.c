/* render_c.c — the C renderer: a loop AST as one C kernel function (the kernel
 * prelude pasted in front; GEMM and scatter kernels call its routines), in the C
 * dialect of render_cstyle.c. in: a lowered kernel; out: its source. */
#include "render_c.h"

#include <stdio.h>
#include <string.h>

#include "codegen/render_cstyle.h"

static const tl_dialect c_dialect = {.i64 = "LL", .nan = "(0.0/0.0)", .inf = "(1e308*10.0)", .simd_pragmas = true};

static const char prelude_text[] =
#include "kernel_prelude.inc"
    ;
/* where the prelude's GEMM section starts: kernels without a GEMM stop there */
#define GEMM_SECTION "/* ---- GEMM (matmul-shaped sums)"

static bool has_parallel_loop(const tl_block *b) {
  for (int i = 0; i < b->n; i++)
    if (b->items[i]->kind == TL_STMT_LOOP && b->items[i]->parallel) return true;
  return false;
}

static void int_list(tl_strbuf *s, int n, const int64_t *v) {
  tl_strbuf_puts(s, "{");
  for (int i = 0; i < n; i++) tl_strbuf_printf(s, "%s%lldLL", i ? ", " : "", (long long)v[i]);
  tl_strbuf_puts(s, n ? "}" : "0}");
}

/* the plan as a constant descriptor (every size known: the routine's loops see
 * constants once inlined) */
static void gemm_desc(tl_strbuf *s, const tl_gemm_plan *g) {
  tl_strbuf_puts(s, "static const tl_gemm_desc TL_UNIT(tl_gd) = {");
  const int64_t v[] = {g->m, g->n, g->k, g->sam, g->sak, g->sbk, g->sbn, g->ldc, g->um, g->un, g->gm, g->gn};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) tl_strbuf_printf(s, "%lldLL, ", (long long)v[i]);
  tl_strbuf_printf(s, "%d,\n  ", g->nbatch);
  int_list(s, g->nbatch, g->bshape);
  tl_strbuf_puts(s, ", ");
  int_list(s, g->nbatch, g->bsa);
  tl_strbuf_puts(s, ", ");
  int_list(s, g->nbatch, g->bsb);
  tl_strbuf_puts(s, ", ");
  int_list(s, g->nbatch, g->bsc);
  tl_strbuf_puts(s, "};\n");
}

/* the arguments as typed pointers b0 (the output) .. bN, then the random streams' keys
 * and counters from the word block after them (locals: loop-invariant, as constants were) */
static void buffer_pointers(tl_strbuf *s, const tl_lowered *l, bool restrict_, bool streams) {
  for (int i = 0; i < l->nargs; i++)
    tl_strbuf_printf(s, "  %s%s *%sb%d = (%s *)bufs[%d];\n", i ? "const " : "", tl_cstyle_ctype(l->args[i]->dtype),
                     restrict_ ? "restrict " : "", i, tl_cstyle_ctype(l->args[i]->dtype), i);
  if (streams && l->nrng) tl_strbuf_printf(s, "  const tl_u64 *tl_words = (const tl_u64 *)bufs[%d];\n", l->nargs);
  for (int j = 0; streams && j < l->nrng; j++)
    tl_strbuf_printf(s, "  const tl_u64 rk%d = tl_words[%d], rs%d = tl_words[%d];\n", j, 2 * j, j, 2 * j + 1);
}

char *tl_render_c(const tl_lowered *l, const char *fn_name) {
  tl_strbuf s = {0};
  const tl_gemm_plan *g = l->gemm;
  /* file-scope names through TL_UNIT: the compiler renames them when it builds many
   * kernels in one translation unit (runtime/compiler.h) */
  tl_strbuf_puts(&s, "#ifndef TL_UNIT\n#define TL_UNIT(name) name\n#endif\n");
  if (g || l->conv) tl_strbuf_puts(&s, "#define TL_GEMM 1\n");
  if (l->conv) tl_strbuf_puts(&s, "#define TL_CONV 1\n");
  if (l->scatter) tl_strbuf_puts(&s, "#define TL_SCATTER 1\n");
  const char *gemm = g || l->conv ? NULL : strstr(prelude_text, GEMM_SECTION);
  tl_strbuf_putn(&s, prelude_text, gemm ? (size_t)(gemm - prelude_text) : sizeof prelude_text - 1);
  if (g) gemm_desc(&s, g);
  if (g && l->epilogue) { /* the store loop over one row of C (begin, end: its columns) */
    tl_strbuf_printf(&s, "\nstatic void TL_UNIT(tl_epi)(void *const *bufs, tl_i64 r%lld, tl_i64 r%lld, tl_i64 begin, tl_i64 end) {\n",
                     (long long)l->epi_bi, (long long)l->epi_m);
    buffer_pointers(&s, l, true, true);
    tl_cstyle_block(&s, &c_dialect, l->root, 1);
    tl_strbuf_puts(&s, "}\n");
  }
  tl_strbuf_printf(&s, "\nvoid TL_UNIT(%s)(void *const *bufs, tl_i64 begin, tl_i64 end) {\n", fn_name);
  /* a GEMM's buffers are written through the routine's own pointers: no restrict; its
   * streams are drawn in the epilogue */
  buffer_pointers(&s, l, !g, !g);
  if (g) {
    tl_strbuf_printf(&s, "  tl_gemm_run_%s(&TL_UNIT(tl_gd), b%d + %lldLL, b%d + %lldLL, b0, begin, end, bufs, %s);\n",
                     l->args[0]->dtype == TL_F32 ? "f32" : "f64", g->slot_a, (long long)g->off_a, g->slot_b,
                     (long long)g->off_b, l->epilogue ? "TL_UNIT(tl_epi)" : "0");
  } else if (l->conv) {
    const tl_conv_plan *p = l->conv;
    tl_strbuf_printf(&s,
                     "  static const tl_conv_desc d = {%lldLL, %lldLL, %lldLL, %lldLL, %lldLL, %lldLL, %lldLL, %lldLL, "
                     "%lldLL, %lldLL, %lldLL, %lldLL, %lldLL, %d, %lldLL, %lldLL};\n",
                     (long long)p->n, (long long)p->c, (long long)p->h, (long long)p->w, (long long)p->o,
                     (long long)p->kh, (long long)p->kw, (long long)p->oh, (long long)p->ow, (long long)p->sh,
                     (long long)p->sw, (long long)p->ph, (long long)p->pw,
                     p->wino ? (p->mode == 1 ? 5 : p->mode == 2 ? 6 : 4) : p->mode, (long long)p->unit,
                     (long long)p->units);
    tl_strbuf_printf(&s, "  tl_conv_run_%s(&d, b0, b%d, b%d, begin, end);\n", l->args[0]->dtype == TL_F32 ? "f32" : "f64",
                     p->slot_a, p->slot_b);
  } else if (l->scatter) {
    const tl_scatter_plan *p = l->scatter;
    tl_strbuf_printf(&s, "  tl_scatter_add_%s_%s(b0, b%d, b%d, %lldLL, %lldLL, %lldLL, begin, end);\n",
                     l->args[0]->dtype == TL_F32 ? "f32" : "f64", l->args[p->slot_idx]->dtype == TL_I32 ? "i32" : "i64",
                     p->slot_values, p->slot_idx, (long long)p->n, (long long)p->rows, (long long)p->d);
  } else if (has_parallel_loop(l->root)) {
    tl_cstyle_block(&s, &c_dialect, l->root, 1);
  } else { /* no loop to split: the single iteration belongs to chunk [0, 1) */
    tl_strbuf_puts(&s, "  if (begin < end) {\n");
    tl_cstyle_block(&s, &c_dialect, l->root, 2);
    tl_strbuf_puts(&s, "  }\n");
  }
  tl_strbuf_puts(&s, "}\n");
  return tl_strbuf_take(&s);
}
