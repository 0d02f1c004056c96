#include "render_c.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/strbuf.h"

static const char prelude_text[] =
#include "kernel_prelude.inc"
    ;
/* where the prelude's GEMM section starts: kernels without a GEMM stop there */
#define GEMM_SECTION "/* ---- GEMM (matmul-shaped sums)"

static const char *ctype(int dtype) {
  switch (dtype) {
  case TL_BOOL: return "tl_bool";
  case TL_I32: return "tl_i32";
  case TL_I64: return "tl_i64";
  case TL_F32: return "float";
  default: return "double";
  }
}

static void literal(tl_strbuf *s, const tl_uop *c) {
  if (!tl_dtype_is_float(c->dtype)) {
    if (c->dtype == TL_I64 && c->arg.i == INT64_MIN) tl_strbuf_puts(s, "(-9223372036854775807LL - 1)");
    else tl_strbuf_printf(s, c->dtype == TL_I64 ? "%lldLL" : "%lld", (long long)c->arg.i);
    return;
  }
  double v = c->arg.f;
  if (isnan(v)) {
    tl_strbuf_printf(s, "(%s)(0.0/0.0)", ctype(c->dtype));
  } else if (isinf(v)) {
    tl_strbuf_printf(s, "(%s)(%s1e308*10.0)", ctype(c->dtype), v < 0 ? "-" : "");
  } else {
    char text[64];
    snprintf(text, sizeof text, c->dtype == TL_F32 ? "%.9g" : "%.17g", v);
    bool has_point = strpbrk(text, ".e") != NULL; /* "1" must become "1.0" to be a float */
    tl_strbuf_printf(s, "%s%s%s", text, has_point ? "" : ".0", c->dtype == TL_F32 ? "f" : "");
  }
}

static void operand(tl_strbuf *s, const tl_uop *u) {
  if (u->op == TL_OP_CONST) literal(s, u);
  else if (u->op == TL_OP_RANGE) tl_strbuf_printf(s, "r%lld", (long long)u->arg.i);
  else if (u->op == TL_OP_ACC) tl_strbuf_printf(s, "acc%lld", (long long)u->arg.i);
  else tl_strbuf_printf(s, "v%d", u->name);
}

/* integer division/remainder by a positive constant can use C's operators */
static bool positive_const(const tl_uop *u) {
  return u->op == TL_OP_CONST && !tl_dtype_is_float(u->dtype) && u->arg.i > 0;
}

/* an op's row text (optab.def): $0 $1 $2 the operands, $T the result's C type, $W its
 * integer width */
static void from_row(tl_strbuf *s, const char *text, const tl_uop *u) {
  for (const char *p = text; *p; p++) {
    if (*p != '$' || !p[1]) {
      tl_strbuf_putn(s, p, 1);
      continue;
    }
    char k = *++p;
    if (k >= '0' && k <= '2') operand(s, u->src[k - '0']);
    else if (k == 'T') tl_strbuf_puts(s, ctype(u->dtype));
    else if (k == 'W') tl_strbuf_puts(s, u->dtype == TL_I32 ? "i32" : "i64");
  }
}

/* a cast converts by the dtype pair: to bool a comparison, float to integer saturating
 * (a plain C cast is UB out of range), the rest a C cast */
static void cast(tl_strbuf *s, const tl_uop *u, const tl_uop *a) {
  if (u->dtype == TL_BOOL) {
    tl_strbuf_puts(s, "(");
    operand(s, a);
    tl_strbuf_puts(s, " != 0)");
  } else if (tl_dtype_is_float(a->dtype) && !tl_dtype_is_float(u->dtype)) {
    tl_strbuf_printf(s, "tl_%s_to_%s(", a->dtype == TL_F32 ? "f32" : "f64", u->dtype == TL_I32 ? "i32" : "i64");
    operand(s, a);
    tl_strbuf_puts(s, ")");
  } else {
    tl_strbuf_printf(s, "(%s)", ctype(u->dtype));
    operand(s, a);
  }
}

/* a buffer read; guarded: read a valid element (0) where the guard is off, then select
 * 0; every buffer has room for one element, even an empty one */
static void load(tl_strbuf *s, const tl_uop *u) {
  const tl_uop *a = u->src[0];
  if (u->nsrc == 1) {
    tl_strbuf_printf(s, "b%lld[", (long long)u->arg.i);
    operand(s, a);
    tl_strbuf_puts(s, "]");
    return;
  }
  const tl_uop *b = u->src[1];
  bool fl = tl_dtype_is_float(u->dtype);
  if (fl) tl_strbuf_printf(s, "tl_where_%s(", u->dtype == TL_F32 ? "f32" : "f64");
  else tl_strbuf_puts(s, "(");
  operand(s, b);
  tl_strbuf_printf(s, "%sb%lld[", fl ? ", " : " ? ", (long long)u->arg.i);
  operand(s, b);
  tl_strbuf_puts(s, " ? ");
  operand(s, a);
  tl_strbuf_printf(s, " : 0]%s(%s)0)", fl ? ", " : " : ", ctype(u->dtype));
}

static void expression(tl_strbuf *s, const tl_uop *u) {
  if (u->op == TL_OP_CAST) {
    cast(s, u, u->src[0]);
    return;
  }
  if (u->op == TL_OP_LOAD) {
    load(s, u);
    return;
  }
  if (u->op == TL_OP_UNIFORM) { /* stream j's key and counter word, read from the word block */
    tl_strbuf_printf(s, "tl_uniform_%s(rk%lld, rs%lld, ", u->dtype == TL_F32 ? "f32" : "f64", (long long)u->arg.i,
                     (long long)u->arg.i);
    operand(s, u->src[0]);
    tl_strbuf_puts(s, ")");
    return;
  }
  if ((u->op == TL_OP_IDIV || u->op == TL_OP_MOD) && !tl_dtype_is_float(u->dtype) && positive_const(u->src[1])) {
    operand(s, u->src[0]);
    tl_strbuf_puts(s, u->op == TL_OP_IDIV ? " / " : " % ");
    operand(s, u->src[1]);
    return;
  }
  const char *text = NULL;
  if (u->op < TL_NOPS) text = tl_optab[u->op].c[u->dtype == TL_F32 ? 0 : u->dtype == TL_F64 ? 1 : 2];
  if (text) from_row(s, text, u);
  else tl_strbuf_printf(s, "/* unsupported op %s */ 0", tl_op_name(u->op));
}

static void acc_identity(tl_strbuf *s, int reduce_op, int dtype) {
  if (reduce_op == TL_OP_RSUM) tl_strbuf_puts(s, "0");
  else if (reduce_op == TL_OP_RPROD) tl_strbuf_puts(s, "1");
  else if (tl_dtype_is_float(dtype)) tl_strbuf_printf(s, "(%s)(-1e308*10.0)", ctype(dtype));
  else if (dtype == TL_I64) tl_strbuf_puts(s, "(-9223372036854775807LL - 1)");
  else if (dtype == TL_I32) tl_strbuf_puts(s, "(-2147483647 - 1)");
  else tl_strbuf_puts(s, "0");
}

static void indent(tl_strbuf *s, int depth) {
  for (int i = 0; i < depth; i++) tl_strbuf_puts(s, "  ");
}

/* A loop whose body only defines values and updates one float sum or product is a
 * reduction OpenMP may reassociate: say so, and it vectorizes under strict IEEE
 * flags. Nothing else in such a body carries a value from one iteration to the next. */
static bool is_float_max(const tl_stmt *st) {
  return st->reduce_op == TL_OP_RMAX && tl_dtype_is_float(st->u->dtype);
}

/* the update statement directly in a loop body, if it is the only one */
static const tl_stmt *sole_update(const tl_block *body, bool *simple) {
  const tl_stmt *update = NULL;
  *simple = true;
  for (int i = 0; i < body->n; i++) {
    const tl_stmt *st = body->items[i];
    if (st->kind == TL_STMT_LOOP || st->kind == TL_STMT_STORE || st->kind == TL_STMT_ACC) *simple = false;
    if (st->kind == TL_STMT_UPDATE) {
      if (update) *simple = false;
      update = st;
    }
  }
  return update;
}

/* A loop whose body only defines values and updates one accumulator is a reduction
 * OpenMP may reorder: say so, and it vectorizes under strict IEEE flags. A float max
 * also tracks NaN in a flag, so the result is NaN if any input is, in any order. */
static bool simd_pragma(tl_strbuf *s, const tl_stmt *loop) {
  bool simple;
  const tl_stmt *update = sole_update(loop->body, &simple);
  if (!update || !simple) return false;
  long long id = (long long)update->u->arg.i;
  if (is_float_max(update))
    tl_strbuf_printf(s, "#pragma omp simd reduction(max:acc%lld) reduction(|:nan%lld)\n", id, id);
  else if (update->reduce_op == TL_OP_RMAX)
    tl_strbuf_printf(s, "#pragma omp simd reduction(max:acc%lld)\n", id);
  else
    tl_strbuf_printf(s, "#pragma omp simd reduction(%s:acc%lld)\n",
                     update->reduce_op == TL_OP_RSUM ? "+" : "*", id);
  return true;
}

/* after a loop that updates a float max: NaN wins */
static void max_nan_fixup(tl_strbuf *s, const tl_stmt *loop, int depth) {
  bool simple;
  const tl_stmt *update = sole_update(loop->body, &simple);
  if (!update || !is_float_max(update)) return;
  for (int i = 0; i < loop->body->n; i++) /* declared inside: the loop is not the reduction's */
    if (loop->body->items[i]->kind == TL_STMT_ACC && loop->body->items[i]->u == update->u) return;
  long long id = (long long)update->u->arg.i;
  indent(s, depth);
  tl_strbuf_printf(s, "acc%lld = nan%lld ? (%s)(0.0/0.0) : acc%lld;\n", id, id, ctype(update->u->dtype), id);
}

static void block(tl_strbuf *s, const tl_block *b, int depth) {
  for (int i = 0; i < b->n; i++) {
    const tl_stmt *st = b->items[i];
    const tl_uop *u = st->u;
    indent(s, depth);
    switch (st->kind) {
    case TL_STMT_DEFINE:
      tl_strbuf_printf(s, "%s v%d = ", ctype(u->dtype), u->name);
      expression(s, u);
      tl_strbuf_puts(s, ";\n");
      break;
    case TL_STMT_ACC:
      tl_strbuf_printf(s, "%s acc%lld = ", ctype(u->dtype), (long long)u->arg.i);
      acc_identity(s, st->reduce_op, u->dtype);
      tl_strbuf_puts(s, ";\n");
      if (is_float_max(st)) {
        indent(s, depth);
        tl_strbuf_printf(s, "tl_i32 nan%lld = 0;\n", (long long)u->arg.i);
      }
      break;
    case TL_STMT_UPDATE:
      tl_strbuf_printf(s, "acc%lld = ", (long long)u->arg.i);
      if (st->reduce_op == TL_OP_RMAX) { /* a plain select: OpenMP's max reduction */
        long long id = (long long)u->arg.i;
        tl_strbuf_printf(s, "acc%lld > ", id);
        operand(s, st->value);
        tl_strbuf_printf(s, " ? acc%lld : ", id);
        operand(s, st->value);
        tl_strbuf_puts(s, ";\n");
        if (is_float_max(st)) {
          indent(s, depth);
          tl_strbuf_printf(s, "nan%lld |= ", id);
          operand(s, st->value);
          tl_strbuf_puts(s, " != ");
          operand(s, st->value);
          tl_strbuf_puts(s, ";\n");
        }
      } else {
        tl_strbuf_printf(s, "acc%lld %s ", (long long)u->arg.i, st->reduce_op == TL_OP_RSUM ? "+" : "*");
        operand(s, st->value);
        tl_strbuf_puts(s, ";\n");
      }
      break;
    case TL_STMT_STORE:
      tl_strbuf_puts(s, "b0[");
      operand(s, st->index);
      tl_strbuf_puts(s, "] = ");
      operand(s, st->value);
      tl_strbuf_puts(s, ";\n");
      break;
    case TL_STMT_LOOP:
      if (simd_pragma(s, st)) indent(s, depth);
      if (st->parallel && st->part >= 0) /* this nest's part of [begin, end), from 0 */
        tl_strbuf_printf(s, "for (tl_i64 r%lld = (begin > %lldLL ? begin : %lldLL) - %lldLL; r%lld < (end < %lldLL ? end : "
                            "%lldLL) - %lldLL; r%lld++) {\n",
                         (long long)u->arg.i, (long long)st->part, (long long)st->part, (long long)st->part,
                         (long long)u->arg.i, (long long)(st->part + u->arg2), (long long)(st->part + u->arg2),
                         (long long)st->part, (long long)u->arg.i);
      else if (st->parallel)
        tl_strbuf_printf(s, "for (tl_i64 r%lld = begin; r%lld < end; r%lld++) {\n", (long long)u->arg.i,
                         (long long)u->arg.i, (long long)u->arg.i);
      else
        tl_strbuf_printf(s, "for (tl_i64 r%lld = 0; r%lld < %lldLL; r%lld++) {\n", (long long)u->arg.i,
                         (long long)u->arg.i, (long long)u->arg2, (long long)u->arg.i);
      block(s, st->body, depth + 1);
      indent(s, depth);
      tl_strbuf_puts(s, "}\n");
      max_nan_fixup(s, st, depth);
      break;
    }
  }
}

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
    tl_strbuf_printf(s, "  %s%s *%sb%d = (%s *)bufs[%d];\n", i ? "const " : "", ctype(l->args[i]->dtype),
                     restrict_ ? "restrict " : "", i, ctype(l->args[i]->dtype), i);
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
    block(&s, l->root, 1);
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
                     (long long)p->sw, (long long)p->ph, (long long)p->pw, p->mode, (long long)p->unit,
                     (long long)p->units);
    tl_strbuf_printf(&s, "  tl_conv_run_%s(&d, b0, b%d, b%d, begin, end);\n", l->args[0]->dtype == TL_F32 ? "f32" : "f64",
                     p->slot_a, p->slot_b);
  } else if (l->scatter) {
    const tl_scatter_plan *p = l->scatter;
    tl_strbuf_printf(&s, "  tl_scatter_add_%s_%s(b0, b%d, b%d, %lldLL, %lldLL, %lldLL, begin, end);\n",
                     l->args[0]->dtype == TL_F32 ? "f32" : "f64", l->args[p->slot_idx]->dtype == TL_I32 ? "i32" : "i64",
                     p->slot_values, p->slot_idx, (long long)p->n, (long long)p->rows, (long long)p->d);
  } else if (has_parallel_loop(l->root)) {
    block(&s, l->root, 1);
  } else { /* no loop to split: the single iteration belongs to chunk [0, 1) */
    tl_strbuf_puts(&s, "  if (begin < end) {\n");
    block(&s, l->root, 2);
    tl_strbuf_puts(&s, "  }\n");
  }
  tl_strbuf_puts(&s, "}\n");
  return tl_strbuf_take(&s);
}
