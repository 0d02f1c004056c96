/* render_cstyle.c — the text every C-style renderer shares (tinygrad's CStyleLanguage):
 * a kernel graph's scalar expressions and the loop AST's statements, in a dialect (C
 * for the cpu, OpenCL C; CUDA C next) that says the few words that differ.
 * in: a lowered kernel's blocks and nodes; out: their text. */
#include "render_cstyle.h"

#include "core/scalar.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *tl_cstyle_ctype(int dtype) { return tl_dtype_ctype((tl_dtype)dtype); }

static void literal(tl_strbuf *s, const tl_dialect *d, const tl_uop *c) {
  if (tl_dtype_is_half(c->dtype)) { /* its bits, rounded from the value once */
    tl_u16 h = c->dtype == TL_F16 ? tl_f64_to_f16(c->arg.f) : tl_f64_to_bf16(c->arg.f);
    tl_strbuf_printf(s, "((tl_u16)%uu)", (unsigned)h);
    return;
  }
  if (c->dtype == TL_U64) {
    tl_strbuf_printf(s, "((tl_u64)%llu%s)", (unsigned long long)c->arg.i, d->i64[0] == 'L' && d->i64[1] == 'L' ? "ULL" : "UL");
    return;
  }
  if (!tl_dtype_is_float(c->dtype)) {
    if (c->dtype == TL_I64 && c->arg.i == INT64_MIN) tl_strbuf_printf(s, "(-9223372036854775807%s - 1)", d->i64);
    else tl_strbuf_printf(s, "%lld%s", (long long)c->arg.i, c->dtype == TL_I64 ? d->i64 : "");
    return;
  }
  double v = c->arg.f;
  if (isnan(v)) {
    tl_strbuf_printf(s, "(%s)%s", tl_cstyle_ctype(c->dtype), d->nan);
  } else if (isinf(v)) {
    tl_strbuf_printf(s, "(%s)(%s%s)", tl_cstyle_ctype(c->dtype), v < 0 ? "-" : "", d->inf);
  } else {
    char text[64];
    snprintf(text, sizeof text, c->dtype == TL_F32 ? "%.9g" : "%.17g", v);
    bool has_point = strpbrk(text, ".e") != NULL; /* "1" must become "1.0" to be a float */
    tl_strbuf_printf(s, "%s%s%s", text, has_point ? "" : ".0", c->dtype == TL_F32 ? "f" : "");
  }
}

void tl_cstyle_operand(tl_strbuf *s, const tl_dialect *d, const tl_uop *u) {
  if (u->op == TL_OP_CONST) literal(s, d, u);
  else if (u->op == TL_OP_RANGE) tl_strbuf_printf(s, "r%lld", (long long)u->arg.i);
  else if (u->op == TL_OP_ACC) tl_strbuf_printf(s, "acc%lld", (long long)u->arg.i);
  else tl_strbuf_printf(s, "v%d", u->name);
}

/* integer division/remainder by a positive constant can use C's operators */
static bool positive_const(const tl_uop *u) {
  return u->op == TL_OP_CONST && !tl_dtype_is_float(u->dtype) && u->arg.i > 0;
}

/* the integer helpers an integer dtype's division uses: those that fit in i32 divide
 * there (then wrap back: i8 -128 / -1 is -128), u32 in i64, u64 its own */
static const char *int_width(int dtype) {
  if (dtype == TL_U64) return "u64";
  return dtype == TL_I64 || dtype == TL_U32 ? "i64" : "i32";
}

/* an op's row text (optab.def): $0 $1 $2 the operands, $T the result's C type, $W its
 * integer width */
static void from_row(tl_strbuf *s, const tl_dialect *d, const char *text, const tl_uop *u) {
  for (const char *p = text; *p; p++) {
    if (*p != '$' || !p[1]) {
      tl_strbuf_putn(s, p, 1);
      continue;
    }
    char k = *++p;
    if (k >= '0' && k <= '2') tl_cstyle_operand(s, d, u->src[k - '0']);
    else if (k == 'T') tl_strbuf_puts(s, tl_cstyle_ctype(u->dtype));
    else if (k == 'W') tl_strbuf_puts(s, int_width(u->dtype));
  }
}

/* a value as an f32 or f64 expression: f16 and bf16 converted (exactly) to f32 */
static void as_float(tl_strbuf *s, const tl_dialect *d, const tl_uop *a) {
  if (tl_dtype_is_half(a->dtype)) tl_strbuf_printf(s, "tl_%s_to_f32(", a->dtype == TL_F16 ? "f16" : "bf16");
  tl_cstyle_operand(s, d, a);
  if (tl_dtype_is_half(a->dtype)) tl_strbuf_puts(s, ")");
}

/* a cast converts by the dtype pair: to bool a comparison, float to integer saturating
 * (a plain C cast is UB out of range), to f16/bf16 rounding once from a double (exact
 * from every float, and from integers up to 2^53), the rest a C cast (an integer to a
 * narrower one wraps) */
static void cast(tl_strbuf *s, const tl_dialect *d, const tl_uop *u, const tl_uop *a) {
  tl_dtype to = (tl_dtype)u->dtype, from = (tl_dtype)a->dtype;
  if (to == TL_BOOL) {
    tl_strbuf_puts(s, "(");
    as_float(s, d, a);
    tl_strbuf_puts(s, " != 0)");
  } else if (tl_dtype_is_half(to)) {
    bool wide = from == TL_I64 || from == TL_U64; /* past 2^53 a double would round first */
    tl_strbuf_printf(s, "tl_f64_to_%s(%s", to == TL_F16 ? "f16" : "bf16", wide ? "tl_int_to_f64_odd((tl_i64)" : "(double)");
    as_float(s, d, a);
    tl_strbuf_printf(s, "%s)", wide ? (from == TL_U64 ? ", 1)" : ", 0)") : "");
  } else if (tl_dtype_is_float(from) && !tl_dtype_is_float(to)) {
    bool f32 = from != TL_F64;
    if (to == TL_I32 || to == TL_I64) tl_strbuf_printf(s, "tl_%s_to_%s(", f32 ? "f32" : "f64", to == TL_I32 ? "i32" : "i64");
    else if (to == TL_U64) tl_strbuf_puts(s, "tl_f64_to_u64(");
    else tl_strbuf_printf(s, "(%s)tl_f64_to_int(", tl_cstyle_ctype(to));
    as_float(s, d, a);
    if (to != TL_I32 && to != TL_I64 && to != TL_U64) tl_strbuf_printf(s, ", %.1f, %.1f", tl_dtype_min(to), tl_dtype_max(to));
    tl_strbuf_puts(s, ")");
  } else {
    tl_strbuf_printf(s, "(%s)", tl_cstyle_ctype(to));
    as_float(s, d, a);
  }
}

/* a buffer read; guarded: read a valid element (0) where the guard is off, then select
 * 0; every buffer has room for one element, even an empty one */
static void load(tl_strbuf *s, const tl_dialect *d, const tl_uop *u) {
  const tl_uop *a = u->src[0];
  if (u->nsrc == 1) {
    tl_strbuf_printf(s, "b%lld[", (long long)u->arg.i);
    tl_cstyle_operand(s, d, a);
    tl_strbuf_puts(s, "]");
    return;
  }
  const tl_uop *b = u->src[1];
  bool fl = u->dtype == TL_F32 || u->dtype == TL_F64; /* f16 and bf16 are bits here */
  if (fl) tl_strbuf_printf(s, "tl_where_%s(", u->dtype == TL_F32 ? "f32" : "f64");
  else tl_strbuf_puts(s, "(");
  tl_cstyle_operand(s, d, b);
  tl_strbuf_printf(s, "%sb%lld[", fl ? ", " : " ? ", (long long)u->arg.i);
  tl_cstyle_operand(s, d, b);
  tl_strbuf_puts(s, " ? ");
  tl_cstyle_operand(s, d, a);
  tl_strbuf_printf(s, " : 0]%s(%s)0)", fl ? ", " : " : ", tl_cstyle_ctype(u->dtype));
}

/* + * and - on the integers C promotes to int (and i32): computed in unsigned
 * arithmetic and converted back, so an overflow wraps without -fwrapv (OpenCL, CUDA)
 * and u16 * u16 never overflows an int. i64 (the index type) relies on -fwrapv, u32
 * and u64 are unsigned already. */
static bool wrapping(tl_strbuf *s, const tl_dialect *d, const tl_uop *u) {
  int t = u->dtype;
  if (t != TL_I8 && t != TL_I16 && t != TL_U8 && t != TL_U16 && t != TL_I32) return false;
  if (u->op != TL_OP_ADD && u->op != TL_OP_MUL && u->op != TL_OP_NEG) return false;
  tl_strbuf_printf(s, "(%s)(", tl_cstyle_ctype(t));
  if (u->op == TL_OP_NEG) tl_strbuf_puts(s, "0u - ");
  tl_strbuf_puts(s, "(tl_u32)");
  tl_cstyle_operand(s, d, u->src[0]);
  if (u->op != TL_OP_NEG) {
    tl_strbuf_puts(s, u->op == TL_OP_ADD ? " + (tl_u32)" : " * (tl_u32)");
    tl_cstyle_operand(s, d, u->src[1]);
  }
  tl_strbuf_puts(s, ")");
  return true;
}

void tl_cstyle_expression(tl_strbuf *s, const tl_dialect *d, const tl_uop *u) {
  if (u->op == TL_OP_CAST) {
    cast(s, d, u, u->src[0]);
    return;
  }
  if (u->op == TL_OP_LOAD) {
    load(s, d, u);
    return;
  }
  if (u->op == TL_OP_UNIFORM) { /* stream j's key and counter word, read from the word block */
    tl_strbuf_printf(s, "tl_uniform_%s(rk%lld, rs%lld, ", u->dtype == TL_F32 ? "f32" : "f64", (long long)u->arg.i,
                     (long long)u->arg.i);
    tl_cstyle_operand(s, d, u->src[0]);
    tl_strbuf_puts(s, ")");
    return;
  }
  if ((u->op == TL_OP_IDIV || u->op == TL_OP_MOD) && !tl_dtype_is_float(u->dtype) && positive_const(u->src[1])) {
    tl_cstyle_operand(s, d, u->src[0]);
    tl_strbuf_puts(s, u->op == TL_OP_IDIV ? " / " : " % ");
    tl_cstyle_operand(s, d, u->src[1]);
    return;
  }
  if (wrapping(s, d, u)) return;
  const char *text = NULL;
  if (u->op < TL_NOPS) text = tl_optab[u->op].c[u->dtype == TL_F32 ? 0 : u->dtype == TL_F64 ? 1 : 2];
  if (text) from_row(s, d, text, u);
  else tl_strbuf_printf(s, "/* unsupported op %s */ 0", tl_op_name(u->op));
}

static void acc_identity(tl_strbuf *s, const tl_dialect *d, int reduce_op, int dtype) {
  if (reduce_op == TL_OP_RSUM) tl_strbuf_puts(s, "0");
  else if (reduce_op == TL_OP_RPROD) tl_strbuf_puts(s, "1");
  else if (tl_dtype_is_float(dtype)) tl_strbuf_printf(s, "(%s)(-%s)", tl_cstyle_ctype(dtype), d->inf);
  else if (dtype == TL_I64) tl_strbuf_printf(s, "(-9223372036854775807%s - 1)", d->i64);
  else if (dtype == TL_I32) tl_strbuf_puts(s, "(-2147483647 - 1)");
  else if (dtype == TL_I8 || dtype == TL_I16) tl_strbuf_printf(s, "(%.0f)", tl_dtype_min((tl_dtype)dtype));
  else tl_strbuf_puts(s, "0"); /* bool and the unsigned */
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
static bool simd_pragma(tl_strbuf *s, const tl_dialect *d, const tl_stmt *loop) {
  bool simple;
  const tl_stmt *update = sole_update(loop->body, &simple);
  if (!d->simd_pragmas || !update || !simple) return false;
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
static void max_nan_fixup(tl_strbuf *s, const tl_dialect *d, const tl_stmt *loop, int depth) {
  bool simple;
  const tl_stmt *update = sole_update(loop->body, &simple);
  if (!update || !is_float_max(update)) return;
  for (int i = 0; i < loop->body->n; i++) /* declared inside: the loop is not the reduction's */
    if (loop->body->items[i]->kind == TL_STMT_ACC && loop->body->items[i]->u == update->u) return;
  long long id = (long long)update->u->arg.i;
  indent(s, depth);
  tl_strbuf_printf(s, "acc%lld = nan%lld ? (%s)%s : acc%lld;\n", id, id, tl_cstyle_ctype(update->u->dtype), d->nan, id);
}

/* a loop's first line: a sequential loop counts from 0; the parallel one runs the
 * range [begin, end) it is given (or its part of it, shifted to start at 0), or, on a
 * grid, is the one iteration that is this work-item's (tl_gid) */
static void loop_head(tl_strbuf *s, const tl_dialect *d, const tl_stmt *st) {
  long long r = (long long)st->u->arg.i, n = (long long)st->u->arg2, p = (long long)st->part;
  const char *L = d->i64;
  if (!st->parallel)
    tl_strbuf_printf(s, "for (tl_i64 r%lld = 0; r%lld < %lld%s; r%lld++) {\n", r, r, n, L, r);
  else if (d->grid && p >= 0)
    tl_strbuf_printf(s, "if (tl_gid >= %lld%s && tl_gid < %lld%s) { const tl_i64 r%lld = tl_gid - %lld%s;\n", p, L,
                     p + n, L, r, p, L);
  else if (d->grid)
    tl_strbuf_printf(s, "if (tl_gid < %lld%s) { const tl_i64 r%lld = tl_gid;\n", n, L, r);
  else if (p >= 0)
    tl_strbuf_printf(s, "for (tl_i64 r%lld = (begin > %lld%s ? begin : %lld%s) - %lld%s; r%lld < (end < %lld%s ? end : "
                        "%lld%s) - %lld%s; r%lld++) {\n",
                     r, p, L, p, L, p, L, r, p + n, L, p + n, L, p, L, r);
  else
    tl_strbuf_printf(s, "for (tl_i64 r%lld = begin; r%lld < end; r%lld++) {\n", r, r, r);
}

void tl_cstyle_block(tl_strbuf *s, const tl_dialect *d, const tl_block *b, int depth) {
  for (int i = 0; i < b->n; i++) tl_cstyle_stmt(s, d, b->items[i], depth);
}

void tl_cstyle_loop_end(tl_strbuf *s, const tl_dialect *d, const tl_stmt *loop, int depth) {
  max_nan_fixup(s, d, loop, depth);
}

void tl_cstyle_stmt(tl_strbuf *s, const tl_dialect *d, const tl_stmt *st, int depth) {
  {
    const tl_uop *u = st->u;
    indent(s, depth);
    switch (st->kind) {
    case TL_STMT_DEFINE:
      tl_strbuf_printf(s, "%s v%d = ", tl_cstyle_ctype(u->dtype), u->name);
      tl_cstyle_expression(s, d, u);
      tl_strbuf_puts(s, ";\n");
      break;
    case TL_STMT_ACC:
      tl_strbuf_printf(s, "%s acc%lld = ", tl_cstyle_ctype(u->dtype), (long long)u->arg.i);
      acc_identity(s, d, st->reduce_op, u->dtype);
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
        tl_cstyle_operand(s, d, st->value);
        tl_strbuf_printf(s, " ? acc%lld : ", id);
        tl_cstyle_operand(s, d, st->value);
        tl_strbuf_puts(s, ";\n");
        if (is_float_max(st)) {
          indent(s, depth);
          tl_strbuf_printf(s, "nan%lld |= ", id);
          tl_cstyle_operand(s, d, st->value);
          tl_strbuf_puts(s, " != ");
          tl_cstyle_operand(s, d, st->value);
          tl_strbuf_puts(s, ";\n");
        }
      } else {
        tl_strbuf_printf(s, "acc%lld %s ", (long long)u->arg.i, st->reduce_op == TL_OP_RSUM ? "+" : "*");
        tl_cstyle_operand(s, d, st->value);
        tl_strbuf_puts(s, ";\n");
      }
      break;
    case TL_STMT_STORE:
      tl_strbuf_puts(s, "b0[");
      tl_cstyle_operand(s, d, st->index);
      tl_strbuf_puts(s, "] = ");
      tl_cstyle_operand(s, d, st->value);
      tl_strbuf_puts(s, ";\n");
      break;
    case TL_STMT_LOOP:
      if (simd_pragma(s, d, st)) indent(s, depth);
      loop_head(s, d, st);
      tl_cstyle_block(s, d, st->body, depth + 1);
      indent(s, depth);
      tl_strbuf_puts(s, "}\n");
      max_nan_fixup(s, d, st, depth);
      break;
    }
  }
}

