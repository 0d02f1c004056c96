/* gen.c — the code generator: statements, expressions, ownership (LANGUAGE.md §4, §6).
 * The value rules of §6 are decided here from the checker's types and the ownership
 * pass's last-use flags: a consuming use (let, a `mut` parameter, a field, a return)
 * moves an owned variable at its last use and copies (retains) otherwise; a plain
 * use borrows; every owned local is released on every exit of its block. */
#include "lang/gen/gen_impl.h"

#include "core/half.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl.h"

/* the run-time headers, pasted in front of every program (build/gen) */
static const char lang_prelude[] =
#include "lang_prelude.inc"
    ;

/* ---- emitting ---- */

const char *tl_gen_fmt(gen *g, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = tl_arena_alloc(g->arena, (size_t)n + 1);
  if (!s) {
    g->failed = true;
    return "";
  }
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

void tl_gen_emit(gen *g, const char *fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  for (int i = 0; i < g->indent; i++) tl_strbuf_puts(g->out, "  ");
  if (n >= (int)sizeof buf) { /* long: format again into the heap */
    char *big = malloc((size_t)n + 1);
    if (!big) {
      g->failed = true;
      return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    tl_strbuf_puts(g->out, big);
    free(big);
  } else tl_strbuf_puts(g->out, buf);
  tl_strbuf_puts(g->out, "\n");
}

/* A file name is user text: written raw, a `"` or a newline in it would end the
 * literal and let the rest be compiled as C. Octal escapes are always three digits,
 * so a digit after one is not read into it; `?` is escaped against trigraphs. */
void tl_gen_c_string(tl_strbuf *out, const char *s) {
  tl_strbuf_puts(out, "\"");
  char buf[5];
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '\\' || *p == '"' || *p == '?') snprintf(buf, sizeof buf, "\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f) snprintf(buf, sizeof buf, "\\%03o", *p);
    else snprintf(buf, sizeof buf, "%c", *p); /* UTF-8 bytes stay: C source takes them */
    tl_strbuf_puts(out, buf);
  }
  tl_strbuf_puts(out, "\"");
}

void tl_gen_line(gen *g, const tl_node *n) {
  if (!g->lines || !n || n->line <= 0) return;
  tl_strbuf_printf(g->out, "#line %d ", n->line);
  tl_gen_c_string(g->out, g->file);
  tl_strbuf_puts(g->out, "\n");
}

void tl_gen_fail(gen *g, const tl_node *n, const char *msg) {
  if (!g->failed) snprintf(g->error, sizeof g->error, "%s:%d:%d: error: %s", g->file, n ? n->line : 0, n ? n->col : 0, msg);
  g->failed = true;
}

const char *tl_gen_ctype(gen *g, const tl_ty *t) {
  switch (t->kind) {
  case TY_BOOL: return "bool";
  case TY_I32: return "int32_t";
  case TY_U8: return "uint8_t";
  case TY_I8: return "int8_t";
  case TY_I16: return "int16_t";
  case TY_U16: return "uint16_t";
  case TY_U32: return "uint32_t";
  case TY_U64: return "uint64_t";
  case TY_F16: case TY_BF16: return "float"; /* a value of the format, held exactly */
  case TY_I64: return "int64_t";
  case TY_F32: return "float";
  case TY_F64: return "double";
  case TY_CHAR: return "uint32_t";
  case TY_STR: return "tlrt_str *";
  case TY_TENSOR: return "tl_tensor *";
  case TY_STRUCT:
    if (t->st->generic == 'V' || t->st->generic == 'M') return tl_gen_vec_ctype(t); /* gen_vec.c */
    return tl_gen_fmt(g, "struct %s *", t->st->cname);
  case TY_FN: return "tlrt_fnobj *";
  case TY_UNIT: return "uint8_t"; /* a value of () is stored only as a payload: `Ok(())` */
  default: return "void";
  }
}

const char *tl_gen_ret_ctype(gen *g, const tl_ty *t) { return t->kind == TY_UNIT ? "void" : tl_gen_ctype(g, t); }

const char *tl_gen_release_call(gen *g, const tl_ty *t, const char *c) {
  if (t->kind == TY_TENSOR) return tl_gen_fmt(g, "tlrt_tensor_release(R, %s);", c);
  return tl_gen_fmt(g, "tlrt_release(R, %s);", c);
}

const char *tl_gen_retain_expr(gen *g, const tl_ty *t, const char *c) {
  if (t->kind == TY_TENSOR) return tl_gen_fmt(g, "tlrt_tensor_retain(R, %s)", c);
  return tl_gen_fmt(g, "((%s)tlrt_retain(R, %s))", tl_gen_ctype(g, t), c);
}

/* ---- values ---- */

cv tl_gen_scalar(const char *c, tl_ty *t) { return (cv){.c = c, .ty = t, .temp = -1}; }

/* a declared C variable holding one reference becomes an owned temporary, released at
 * the end of its statement unless a consumer takes it */
cv tl_gen_adopt_temp(gen *g, const char *name, tl_ty *t) {
  if (g->ntemps == GEN_MAX_TEMPS) {
    tl_gen_fail(g, NULL, "expression too large");
    return tl_gen_scalar(name, t);
  }
  g->temps[g->ntemps].name = name;
  g->temps[g->ntemps].ty = t;
  g->temps[g->ntemps].taken = false;
  g->ntemps++;
  return (cv){.c = name, .ty = t, .temp = g->ntemps - 1};
}

const char *tl_gen_new_temp(gen *g, const tl_ty *t, const char *init) {
  const char *name = tl_gen_fmt(g, "t%d", ++g->ntmp);
  tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, t), name, init);
  if (tl_ty_is_refcounted(t)) tl_gen_adopt_temp(g, name, (tl_ty *)t);
  return name;
}

cv tl_gen_temp_value(gen *g, const tl_ty *t, const char *init) {
  const char *name = tl_gen_new_temp(g, t, init);
  cv v = {.c = name, .ty = (tl_ty *)t, .temp = tl_ty_is_refcounted(t) ? g->ntemps - 1 : -1};
  return v;
}

void tl_gen_release_temps(gen *g, int mark) {
  while (g->ntemps > mark) {
    g->ntemps--;
    if (!g->temps[g->ntemps].taken)
      tl_gen_emit(g, "%s", tl_gen_release_call(g, g->temps[g->ntemps].ty, g->temps[g->ntemps].name));
  }
}

typedef struct {
  const tl_var *var;
  const tl_node *except, *target;
} other_read;

static bool is_other_read(tl_node *n, void *arg) {
  const other_read *o = arg;
  return n != o->except && n != o->target && (n->kind == TL_N_IDENT || n->kind == TL_N_SELF) && n->var == o->var;
}

bool tl_gen_moves(gen *g, cv v) {
  tl_var *var = v.var;
  bool owned = var && (var->kind == VAR_LOCAL || var->kind == VAR_PARAM_OWNED);
  /* `x = f(x)`: the x assigned is no read (its old value, moved out and nulled, is
   * released as NULL), so the x in f(..) may move: `l = Cons(v, l)` costs no retain */
  const tl_node *st = g->stmt;
  const tl_node *target = st && st->kind == TL_N_ASSIGN && st->op == TL_TOK_ASSIGN && st->lhs->kind == TL_N_IDENT ? st->lhs : NULL;
  other_read other = {var, v.node, target};
  return owned && v.node && v.node->last_use && !tl_ast_find((tl_node *)g->stmt, is_other_read, &other);
}

const char *tl_gen_take(gen *g, cv v) {
  if (!tl_ty_is_refcounted(v.ty)) return v.c;
  if (v.temp >= 0) { /* an owned temporary: the consumer takes its reference */
    g->temps[v.temp].taken = true;
    return v.c;
  }
  if (tl_gen_moves(g, v)) {
    /* the last use: move; the variable is nulled so its drop does nothing */
    const char *name = tl_gen_fmt(g, "t%d", ++g->ntmp);
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, v.ty), name, v.c);
    tl_gen_emit(g, "%s = NULL;", v.c);
    return name;
  }
  return tl_gen_retain_expr(g, v.ty, v.c);
}

/* the C lvalue of a variable */
const char *tl_gen_var_ref(gen *g, const tl_var *v) {
  if (v->kind == VAR_PARAM_REF) return tl_gen_fmt(g, "(*v%d_%s)", v->id, v->name);
  /* the id makes it unique: a `$for` made by the parser is `v7_for`, plain C */
  return tl_gen_fmt(g, "v%d_%s", v->id, v->name[0] == '$' ? v->name + 1 : v->name);
}

/* ---- scalars ---- */

static const char *c_literal_float(gen *g, double x, bool f32) {
  char buf[64];
  if (x != x) return f32 ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
  if (x > 1.7976931348623157e308 || (f32 && x >= 3.4028235677973366e38)) return f32 ? "__builtin_inff()" : "__builtin_inf()";
  if (x < -1.7976931348623157e308 || (f32 && x <= -3.4028235677973366e38)) /* f32::NEG_INFINITY */
    return f32 ? "(-__builtin_inff())" : "(-__builtin_inf())";
  snprintf(buf, sizeof buf, "%.17g", x);
  if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
  return tl_gen_fmt(g, "%s%s", buf, f32 ? "f" : "");
}

/* x rounded to t's format when t is f16 or bf16 (a literal's value, when compiling) */
static double half_round(const tl_ty *t, double x) {
  return t->kind == TY_F16 ? tl_round_f16(x) : t->kind == TY_BF16 ? tl_round_bf16(x) : x;
}

static cv gen_literal(gen *g, tl_node *n) {
  tl_ty *t = n->ty;
  switch (n->kind) {
  case TL_N_INT:
    if (tl_ty_is_float(t)) {
      double v = tl_ty_is_half(t) ? half_round(t, tl_i64_odd(n->ival)) : (double)n->ival;
      return tl_gen_scalar(c_literal_float(g, v, t->kind != TY_F64), t);
    }
    if (t->kind == TY_U64) return tl_gen_scalar(tl_gen_fmt(g, "((uint64_t)%lluULL)", (unsigned long long)n->ival), t);
    if (t->kind != TY_I64) return tl_gen_scalar(tl_gen_fmt(g, "((%s)%lld)", tl_gen_ctype(g, t), (long long)n->ival), t);
    return tl_gen_scalar(tl_gen_fmt(g, "%lldLL", (long long)n->ival), t);
  case TL_N_FLOAT: return tl_gen_scalar(c_literal_float(g, half_round(t, n->fval), t->kind != TY_F64), t);
  case TL_N_BOOL: return tl_gen_scalar(n->ival ? "true" : "false", t);
  case TL_N_CHAR: return tl_gen_scalar(tl_gen_fmt(g, "UINT32_C(%lld)", (long long)n->ival), t);
  default: { /* a string: bytes as escapes, so any content is safe C */
    tl_strbuf b = {0};
    tl_strbuf_puts(&b, "\"");
    for (size_t i = 0; i < n->len; i++) tl_strbuf_printf(&b, "\\%03o", (unsigned char)n->str[i]);
    tl_strbuf_puts(&b, "\"");
    char *lit = tl_gen_take_text(g, &b);
    cv v = tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_str_new(R, %s, %zu)", lit ? lit : "\"\"", lit ? n->len : 0));
    free(lit);
    return v;
  }
  }
}

/* integer + - * wrap (two's complement), as Rust's release builds do: programs are
 * compiled with -fwrapv (TL_LANG_CFLAGS), so plain C arithmetic has no UB, and the
 * text stays short (a 100,000-term sum compiles in half the time of unsigned casts) */
static const char *int_arith(gen *g, const tl_ty *t, const char *op, const char *a, const char *b) {
  if (t->kind == TY_I32 || t->kind == TY_I64 || t->kind == TY_U8)
    return tl_gen_fmt(g, "((%s)((%s) %s (%s)))", tl_gen_ctype(g, t), a, op, b);
  /* the other widths in unsigned 64-bit arithmetic, then truncated: u16 * u16 would
   * overflow C's int, the type it is promoted to */
  return tl_gen_fmt(g, "((%s)((uint64_t)(%s) %s (uint64_t)(%s)))", tl_gen_ctype(g, t), a, op, b);
}

/* the C of float arithmetic's result r in type t: f16 and bf16 round it to their format */
const char *tl_gen_float_result(gen *g, const tl_ty *t, const char *r) {
  if (!tl_ty_is_half(t)) return r;
  return tl_gen_fmt(g, "tl_round_%s(%s)", t->kind == TY_F16 ? "f16" : "bf16", r);
}

/* float x to integer type to: saturating, NaN 0, as Rust's `as` */
const char *tl_gen_f2i(gen *g, const tl_ty *to, const char *x) {
  if (to->kind == TY_I64 || to->kind == TY_I32 || to->kind == TY_U8)
    return tl_gen_fmt(g, "((%s)tl__f2i(%s, %d))", tl_gen_ctype(g, to), x, to->kind == TY_I32 ? 1 : to->kind == TY_U8 ? 2 : 0);
  if (to->kind == TY_U64) return tl_gen_fmt(g, "tl__f2u64(%s)", x);
  int64_t lo, hi;
  tl_ty_int_range(to->kind, &lo, &hi);
  return tl_gen_fmt(g, "((%s)tl__f2range(%s, %lld, %lld))", tl_gen_ctype(g, to), x, (long long)lo, (long long)hi);
}

static const char *tok_c(tl_tok_kind op) {
  switch (op) {
  case TL_TOK_PLUS: return "+";
  case TL_TOK_MINUS: return "-";
  case TL_TOK_STAR: return "*";
  case TL_TOK_SLASH: return "/";
  case TL_TOK_PERCENT: return "%";
  case TL_TOK_LT: return "<";
  case TL_TOK_GT: return ">";
  case TL_TOK_LE: return "<=";
  case TL_TOK_GE: return ">=";
  case TL_TOK_EQ: return "==";
  case TL_TOK_NE: return "!=";
  default: return "?";
  }
}

/* the run-time op code of tensor arithmetic (rt_ops.h TLRT_OP_*) */
int tl_gen_tensor_op(tl_tok_kind op) {
  static const tl_tok_kind ops[] = {TL_TOK_PLUS, TL_TOK_MINUS, TL_TOK_STAR, TL_TOK_SLASH, TL_TOK_PERCENT, TL_TOK_LT,
                                    TL_TOK_GT,   TL_TOK_LE,    TL_TOK_GE,   TL_TOK_EQ,    TL_TOK_NE};
  for (int i = 0; i < 11; i++)
    if (ops[i] == op) return i;
  return -1;
}

static bool is_const_scalar(const tl_node *n) {
  if (n->kind == TL_N_UNARY && n->op == TL_TOK_MINUS) n = n->lhs;
  return n->kind == TL_N_INT || n->kind == TL_N_FLOAT || n->kind == TL_N_BOOL;
}

cv tl_gen_binary_values(gen *g, tl_node *n, tl_tok_kind op, cv a, cv b);

cv tl_gen_binary_values(gen *g, tl_node *n, tl_tok_kind op, cv a, cv b) {
  tl_ty *t = n->ty;
  /* a number made a 0-d tensor to keep its gradient (gen_grad.c) meets a tensor */
  bool pa = a.ty->kind == TY_TENSOR && n->lhs && n->lhs->ty && n->lhs->ty->kind != TY_TENSOR,
       pb = b.ty->kind == TY_TENSOR && n->rhs && n->rhs->ty && n->rhs->ty->kind != TY_TENSOR;
  if (a.ty->kind == TY_TENSOR && b.ty->kind == TY_TENSOR && pa != pb)
    return tl_gen_grad_meet(g, n, tl_gen_tensor_op(op), pa ? b : a, pa ? a : b, pa);
  if (a.ty->kind == TY_TENSOR && b.ty->kind == TY_TENSOR)
    return tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_binop(R, %d, %s, %s, %d, %d)", tl_gen_tensor_op(op), a.c, b.c, n->line, n->col));
  if (a.ty->kind == TY_TENSOR || b.ty->kind == TY_TENSOR) {
    bool left = b.ty->kind == TY_TENSOR;
    cv tv = left ? b : a, sv = left ? a : b;
    const tl_node *sn = left ? n->lhs : n->rhs;
    return tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_binop_s(R, %d, %s, (double)(%s), %d, %d, %d, %d, %d)", tl_gen_tensor_op(op),
                                        tv.c, sv.c, tl_ty_scalar_dtype(sn, sv.ty), left, is_const_scalar(sn), n->line,
                                        n->col));
  }
  if (tl_ty_is_vec(a.ty)) return tl_gen_vec_eq(g, n, a, b); /* gen_vec.c */
  if (a.ty->kind == TY_STRUCT && a.ty->st->is_enum) /* field-less (sema): the tags */
    return tl_gen_scalar(tl_gen_fmt(g, "(%s->tag %s %s->tag)", a.c, op == TL_TOK_NE ? "!=" : "==", b.c), t);
  if (tl_ty_is_tuple(a.ty))
    return tl_gen_scalar(tl_gen_fmt(g, "(%s%s__eq(%s, %s))", op == TL_TOK_NE ? "!" : "", a.ty->st->cname, a.c, b.c), t);
  if (a.ty->kind == TY_STR) {
    if (op == TL_TOK_PLUS) return tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_str_concat(R, %s, %s, %d, %d)", a.c, b.c, n->line, n->col));
    if (op == TL_TOK_EQ) return tl_gen_scalar(tl_gen_fmt(g, "tlrt_str_eq(%s, %s)", a.c, b.c), t);
    if (op == TL_TOK_NE) return tl_gen_scalar(tl_gen_fmt(g, "(!tlrt_str_eq(%s, %s))", a.c, b.c), t);
    return tl_gen_scalar(tl_gen_fmt(g, "(tlrt_str_cmp(%s, %s) %s 0)", a.c, b.c, tok_c(op)), t);
  }
  bool isint = tl_ty_is_int(a.ty), arith = op == TL_TOK_PLUS || op == TL_TOK_MINUS || op == TL_TOK_STAR || op == TL_TOK_SLASH;
  if (isint && (op == TL_TOK_PLUS || op == TL_TOK_MINUS || op == TL_TOK_STAR))
    return tl_gen_scalar(int_arith(g, a.ty, tok_c(op), a.c, b.c), t);
  if (isint && (op == TL_TOK_SLASH || op == TL_TOK_PERCENT)) /* i8 i16 u16 in 32 bits, u32 in 64 (values kept) */
    return tl_gen_scalar(tl_gen_fmt(g, "((%s)tl__%s%s(R, %s, %s, %d, %d))", tl_gen_ctype(g, t), op == TL_TOK_SLASH ? "div" : "mod",
                                    a.ty->kind == TY_U64 ? "u64" : a.ty->kind == TY_I64 || a.ty->kind == TY_U32 ? "64" : "32", a.c,
                                    b.c, n->line, n->col), t);
  if (tl_ty_is_half(a.ty) && (arith || op == TL_TOK_PERCENT)) /* exact in double, then one rounding */
    return tl_gen_scalar(tl_gen_float_result(g, a.ty, tl_gen_fmt(g, op == TL_TOK_PERCENT ? "fmod((double)(%s), (double)(%s))"
                                                                                          : "((double)(%s) %s (double)(%s))",
                                                                 a.c, op == TL_TOK_PERCENT ? b.c : tok_c(op), b.c)), t);
  if (op == TL_TOK_PERCENT) return tl_gen_scalar(tl_gen_fmt(g, "fmod%s(%s, %s)", a.ty->kind == TY_F32 ? "f" : "", a.c, b.c), t);
  if ((op == TL_TOK_SHL || op == TL_TOK_SHR) && (a.ty->kind == TY_I32 || a.ty->kind == TY_I64 || a.ty->kind == TY_U8))
    return tl_gen_scalar(tl_gen_fmt(g, "((%s)tl__shift%s(R, %s, (int64_t)(%s), %d, %d, %d))", tl_gen_ctype(g, t),
                                    a.ty->kind == TY_I32 ? "32" : a.ty->kind == TY_U8 ? "8" : "64", a.c, b.c, op == TL_TOK_SHL,
                                    n->line, n->col), t);
  if (op == TL_TOK_SHL || op == TL_TOK_SHR) /* the others: u64 by itself, the rest widened (sign or zero) to i64 */
    return tl_gen_scalar(tl_gen_fmt(g, "((%s)tl__shift%s(R, %s, (int64_t)(%s), %d, %d, %d, %d))", tl_gen_ctype(g, t),
                                    a.ty->kind == TY_U64 ? "u64" : "n", a.ty->kind == TY_U64 ? a.c : tl_gen_fmt(g, "(int64_t)(%s)", a.c),
                                    b.c, tl_ty_int_bits(a.ty), op == TL_TOK_SHL, n->line, n->col), t);
  if (op == TL_TOK_AMP || op == TL_TOK_PIPE || op == TL_TOK_CARET) /* integers or bools (sema) */
    return tl_gen_scalar(tl_gen_fmt(g, "((%s)((%s) %s (%s)))", tl_gen_ctype(g, t), a.c,
                                    op == TL_TOK_AMP ? "&" : op == TL_TOK_PIPE ? "|" : "^", b.c), t);
  return tl_gen_scalar(tl_gen_fmt(g, "(%s %s %s)", a.c, tok_c(op), b.c), t);
}

/* a node whose C is more than arithmetic on scalars: a call (of the run time, for
 * tensors, strings, integer division; or of a function), or statements */
static bool calls(tl_node *n, void *unused) {
  (void)unused;
  if (n->ty && tl_ty_is_refcounted(n->ty)) return true;
  switch (n->kind) {
  case TL_N_INT: case TL_N_FLOAT: case TL_N_BOOL: case TL_N_CHAR: case TL_N_IDENT: case TL_N_SELF: case TL_N_UNARY:
  case TL_N_FIELD: return false;
  case TL_N_BINARY: return (n->op == TL_TOK_SLASH || n->op == TL_TOK_PERCENT) && n->ty && tl_ty_is_int(n->ty);
  default: return true;
  }
}

/* `a && b`, `a || b`, the left operand's value a already made */
static cv gen_logical(gen *g, tl_node *n, cv a) {
  if (!tl_ast_find(n->rhs, calls, NULL)) { /* b is a C expression without effects: C's own && */
    cv b = tl_gen_expr(g, n->rhs);
    return tl_gen_scalar(tl_gen_fmt(g, "(%s %s %s)", a.c, n->op == TL_TOK_ANDAND ? "&&" : "||", b.c), n->ty);
  }
  const char *r = tl_gen_new_temp(g, n->ty, a.c);
  tl_gen_emit(g, "if (%s%s) {", n->op == TL_TOK_ANDAND ? "" : "!", r);
  g->indent++;
  int mark = g->ntemps;
  cv b = tl_gen_expr(g, n->rhs);
  tl_gen_emit(g, "%s = %s;", r, b.c);
  tl_gen_release_temps(g, mark);
  g->indent--;
  tl_gen_emit(g, "}");
  return tl_gen_scalar(r, n->ty);
}

/* tensor arithmetic: an operand that is a number read from tensor elements is made a
 * 0-d tensor, so its gradient flows (gen_grad.c) */
static bool meets_tensor(const tl_node *n) {
  return n->ty && n->ty->kind == TY_TENSOR && tl_gen_tensor_op(n->op) >= 0 && tl_gen_tensor_op(n->op) <= TLRT_OP_MOD;
}

/* n, the left operand's value a already made */
static cv gen_binary_step(gen *g, tl_node *n, cv a) {
  if (n->op == TL_TOK_ANDAND || n->op == TL_TOK_OROR) return gen_logical(g, n, a);
  cv b = tl_gen_grad_operand(g, n->rhs, meets_tensor(n));
  return tl_gen_binary_values(g, n, n->op, a, b);
}

/* After a step of a chain made r from a (the previous step's value) and temporaries
 * from `mark` on: those and a's own temporary are released now, not at the end of the
 * statement (a chain of 100,000 tensor sums would hold 100,000), and a scalar is kept
 * in a C variable once its text is long, so the C is never nested deep and its text
 * grows linearly with the chain. r, where it now is. */
cv tl_gen_chain_settle(gen *g, cv r, cv a, int mark) {
  bool scalar = !tl_ty_is_refcounted(r.ty);
  int lo = a.temp >= 0 && a.temp == mark - 1 ? mark - 1 : mark;
  int top = scalar ? g->ntemps : g->ntemps - 1; /* a refcounted r is the last temporary */
  bool release = top > lo && (scalar || r.temp == top);
  /* a scalar's text may read the operands (`tlrt_str_eq(t1, t2)`): evaluated first */
  if (scalar && r.temp < 0 && (release || strlen(r.c) > 200)) r = tl_gen_scalar(tl_gen_new_temp(g, r.ty, r.c), r.ty);
  if (!release) return r;
  for (int i = top - 1; i >= lo; i--)
    if (!g->temps[i].taken) tl_gen_emit(g, "%s", tl_gen_release_call(g, g->temps[i].ty, g->temps[i].name));
  if (!scalar) {
    g->temps[lo] = g->temps[top];
    r.temp = lo;
  }
  g->ntemps = scalar ? lo : lo + 1;
  return r;
}

/* The spine of a chain, top first, or NULL after an error. The C compiler's optimizer
 * takes time that grows faster than the number of calls in one function (4,096 tensor
 * sums: seconds; 20,000: minutes), so a chain has at most GEN_MAX_CHAIN_CALLS steps
 * that call: a clear error, not a compiler that seems to hang. Arithmetic on scalars
 * has no such bound (100,000 terms compile in about a second). */
tl_node **tl_gen_chain_spine(gen *g, tl_node *n, size_t *k) {
  size_t len = 0, ncalls = 0;
  for (tl_node *m = n; m->kind == TL_N_BINARY; m = m->lhs) len++;
  tl_node **spine = malloc(sizeof *spine * len);
  if (!spine) {
    tl_gen_fail(g, n, "out of memory generating a long expression");
    return NULL;
  }
  tl_node *m = n;
  for (size_t i = 0; i < len; i++, m = m->lhs) {
    spine[i] = m;
    ncalls += calls(m, NULL) || tl_ast_find(m->rhs, calls, NULL);
  }
  if (ncalls > GEN_MAX_CHAIN_CALLS) { /* reported where the expression starts */
    char msg[200];
    snprintf(msg, sizeof msg,
             "expression too long: a chain of %zu tensor, string or call operations (at most %d: the C compiler "
             "would take minutes); use a loop",
             ncalls, GEN_MAX_CHAIN_CALLS);
    tl_gen_fail(g, m, msg);
    free(spine);
    return NULL;
  }
  *k = len;
  return spine;
}

/* A left-leaning chain `a + b + c ...` is made in a loop, not by recursion: it may be
 * 100,000 deep (a 400 KB file). Each step settles (tl_gen_chain_settle). */
static cv gen_binary(gen *g, tl_node *n) {
  if (n->lhs->kind != TL_N_BINARY) return gen_binary_step(g, n, tl_gen_grad_operand(g, n->lhs, meets_tensor(n)));
  size_t k;
  tl_node **spine = tl_gen_chain_spine(g, n, &k);
  if (!spine) return tl_gen_scalar("0", n->ty);
  /* where the chain turns from numbers into a tensor, the numbers so far may be read
   * from tensor elements: then they are made one 0-d tensor (gen_grad.c) */
  size_t first = k;
  while (first > 0 && spine[first - 1]->ty->kind != TY_TENSOR) first--;
  bool meets = first > 0 && meets_tensor(spine[first - 1]) && tl_gen_grad_elem(spine[first - 1]->lhs);
  if (!meets) first = k;
  cv a = meets ? tl_gen_as_tensor(g, spine[first - 1]->lhs) : tl_gen_expr(g, spine[k - 1]->lhs);
  for (size_t i = first; i-- > 0;) {
    int mark = g->ntemps;
    a = tl_gen_chain_settle(g, gen_binary_step(g, spine[i], a), a, mark);
  }
  free(spine);
  return a;
}

static cv gen_unary(gen *g, tl_node *n) {
  cv a = tl_gen_expr(g, n->lhs);
  if (a.ty->kind == TY_TENSOR)
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_unop(R, %d, %s, %d, %d)", n->op == TL_TOK_NOT ? TLRT_UNOP_NOT : TLRT_UNOP_NEG,
                                            a.c, n->line, n->col));
  if (n->op == TL_TOK_NOT && tl_ty_is_int(a.ty)) /* bitwise not */
    return tl_gen_scalar(tl_gen_fmt(g, "((%s)~(%s))", tl_gen_ctype(g, a.ty), a.c), n->ty);
  if (n->op == TL_TOK_NOT) return tl_gen_scalar(tl_gen_fmt(g, "(!%s)", a.c), n->ty);
  if (tl_ty_is_int(a.ty)) return tl_gen_scalar(int_arith(g, a.ty, "-", "0", a.c), n->ty);
  return tl_gen_scalar(tl_gen_fmt(g, "(-%s)", a.c), n->ty); /* exact in f16 and bf16 too */
}

static cv gen_cast(gen *g, tl_node *n) {
  cv a = tl_gen_expr(g, n->lhs);
  tl_ty *to = n->ty;
  if (a.ty->kind == TY_TENSOR)
    return tl_gen_temp_value(g, to, tl_gen_fmt(g, "tlrt_to_dtype(R, %s, %d, %d, %d)", a.c, to->dtype, n->line, n->col));
  if (tl_ty_is_float(a.ty) && tl_ty_is_int(to)) /* saturating, NaN -> 0, as Rust */
    return tl_gen_scalar(tl_gen_f2i(g, to, a.c), to);
  if (to->kind == TY_BOOL) return tl_gen_scalar(tl_gen_fmt(g, "(%s != 0)", a.c), to);
  if (tl_ty_is_half(to)) /* one rounding: an integer through a double rounded to odd */
    return tl_gen_scalar(tl_gen_float_result(g, to, !tl_ty_is_int(a.ty) ? tl_gen_fmt(g, "(double)(%s)", a.c)
                                                    : tl_gen_fmt(g, "tl_%s64_odd(%s)", tl_ty_is_unsigned(a.ty) ? "u" : "i", a.c)), to);
  if (tl_ty_is_int(to) && tl_ty_is_int(a.ty) && a.ty->kind != to->kind) /* wraps: through the unsigned bits */
    return tl_gen_scalar(tl_gen_fmt(g, "((%s)(uint64_t)(%s))", tl_gen_ctype(g, to), a.c), to);
  return tl_gen_scalar(tl_gen_fmt(g, "((%s)%s)", tl_gen_ctype(g, to), a.c), to);
}

/* ---- places and fields ---- */

/* the C lvalue of a place, made unique on the way (copy-on-write of each struct
 * the path goes through), ready to be written */
const char *tl_gen_place(gen *g, tl_node *n) {
  if (n->kind == TL_N_IDENT || n->kind == TL_N_SELF) return tl_gen_var_ref(g, n->var);
  if (n->kind == TL_N_FIELD) {
    const char *base = tl_gen_place(g, n->lhs);
    tl_struct_info *st = n->lhs->ty->st;
    tl_gen_emit(g, "tlrt_make_unique(R, (void **)&%s, sizeof(struct %s), %s__retain_fields);", base, st->cname,
             st->cname);
    return tl_gen_fmt(g, "%s->f_%s", base, n->name);
  }
  if (n->kind == TL_N_INDEX && (tl_ty_is_vec(n->lhs->ty) || tl_ty_is_map(n->lhs->ty))) return tl_gen_vec_place(g, n);
  tl_gen_fail(g, n, "cannot write to this expression");
  return "";
}

static cv gen_field(gen *g, tl_node *n) {
  cv base = tl_gen_expr(g, n->lhs);
  /* borrowed from the struct; a temporary struct keeps it alive to the statement's end */
  return (cv){.c = tl_gen_fmt(g, "%s->f_%s", base.c, n->name), .ty = n->ty, .temp = -1};
}

static cv gen_ident(gen *g, tl_node *n) {
  tl_var *v = n->var;
  if (!v && n->ref) return tl_gen_fn_value(g, n); /* a named function as a value (gen_closure.c) */
  if (v && v->shadow) tl_gen_grad_check(g, n, tl_gen_var_ref(g, v->shadow));
  return (cv){.c = tl_gen_var_ref(g, v), .ty = n->ty, .temp = -1, .var = v, .node = n};
}

/* ---- indexing ---- */

/* the index list of t[...]: ints alone (`all_int`) or as tlrt_ix specs */
/* the indices of t[...], each evaluated once, in order: as plain integers (`ints`,
 * when no axis is a range) and as tlrt_ix specs (`specs`) */
typedef struct {
  int n;
  bool all_int;
  const char *ints, *specs;
} index_args;

static index_args index_list(gen *g, tl_node *args) {
  index_args ix = {.all_int = true, .ints = "", .specs = ""};
  for (tl_node *a = args; a && ix.n < 32; a = a->next, ix.n++) {
    const char *sep = ix.n ? ", " : "";
    if (a->kind == TL_N_RANGE) {
      ix.all_int = false;
      const char *lo = a->lhs ? tl_gen_expr(g, a->lhs).c : "0", *hi = a->rhs ? tl_gen_expr(g, a->rhs).c : "0";
      ix.specs = tl_gen_fmt(g, "%s%s{true, %d, %d, %s, %s}", ix.specs, sep, a->lhs != NULL, a->rhs != NULL, lo, hi);
      continue;
    }
    const char *i = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a).c);
    ix.ints = tl_gen_fmt(g, "%s%s%s", ix.ints, sep, i);
    ix.specs = tl_gen_fmt(g, "%s%s{false, 0, 0, %s, 0}", ix.specs, sep, i);
  }
  return ix;
}

/* the value (a double) read from an element of t, in the scalar type `to`: an integer
 * read of a tensor whose dtype is unknown may meet floats, so it converts as `as` does
 * (saturating, NaN 0), never by C's undefined float-to-int */
cv tl_gen_number_read(gen *g, const char *get, tl_ty *to, const tl_ty *t) {
  if (tl_ty_is_int(to) && t->dtype < 0) get = tl_gen_f2i(g, to, get);
  if (tl_ty_is_half(to)) get = tl_gen_float_result(g, to, tl_gen_fmt(g, "(double)(%s)", get));
  return tl_gen_temp_value(g, to, tl_gen_fmt(g, "(%s)%s", tl_gen_ctype(g, to), get));
}

/* an element read or item() whose dtype only the run time knows (tl_sema_is_flex_read),
 * printed directly: its double, and in *dtype the C of the tensor's dtype, so it prints
 * as the tensor holds it (0.3, not 0.30000001192092896, for an f32) */
cv tl_gen_flex_read(gen *g, tl_node *n, const char **dtype) {
  cv t = tl_gen_expr(g, n->lhs);
  const char *get;
  if (n->kind == TL_N_INDEX) {
    index_args ix = index_list(g, n->args);
    get = tl_gen_fmt(g, "tlrt_get(R, %s, %d, (int64_t[]){%s}, %d, %d)", t.c, ix.n, ix.ints, n->line, n->col);
  } else get = tl_gen_fmt(g, "tlrt_item(R, %s, %d, %d)", t.c, n->line, n->col);
  cv v = tl_gen_scalar(tl_gen_new_temp(g, TY_F64_T, get), TY_F64_T);
  *dtype = tl_gen_new_temp(g, TY_I64_T, tl_gen_fmt(g, "tl_get_dtype(%s)", t.c));
  return v;
}

static cv gen_index(gen *g, tl_node *n) {
  if (tl_ty_is_vec(n->lhs->ty) || tl_ty_is_map(n->lhs->ty)) return tl_gen_vec_index(g, n); /* gen_vec.c */
  cv t = tl_gen_expr(g, n->lhs);
  index_args ix = index_list(g, n->args);
  if (ix.all_int && n->ty->kind != TY_TENSOR) {
    tl_gen_grad_check(g, n, t.c); /* a number that keeps no history: t requires grad? (gen_grad.c) */
    return tl_gen_number_read(g, tl_gen_fmt(g, "tlrt_get(R, %s, %d, (int64_t[]){%s}, %d, %d)", t.c, ix.n, ix.ints, n->line, n->col),
                           n->ty, n->lhs->ty);
  }
  return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_index(R, %s, %d, (tlrt_ix[]){%s}, %d, %d)", t.c, ix.n, ix.specs,
                                          n->line, n->col));
}

const char *tl_gen_index_tensor(gen *g, tl_node *n, const char *t) {
  index_args ix = index_list(g, n->args);
  return tl_gen_fmt(g, "tlrt_index(R, %s, %d, (tlrt_ix[]){%s}, %d, %d)", t, ix.n, ix.specs, n->line, n->col);
}

static void gen_store(gen *g, tl_node *lhs, cv v) {
  index_args ix = index_list(g, lhs->args);
  const char *place = tl_gen_place(g, lhs->lhs);
  if (ix.all_int && v.ty->kind != TY_TENSOR && lhs->ty->kind != TY_TENSOR) {
    tl_gen_emit(g, "tlrt_set(R, &%s, %d, (int64_t[]){%s}, (double)(%s), %d, %d);", place, ix.n, ix.ints, v.c, lhs->line,
             lhs->col);
    return;
  }
  const char *val = v.c;
  if (v.ty->kind != TY_TENSOR)
    val = tl_gen_new_temp(g, lhs->lhs->ty, tl_gen_fmt(g, "tlrt_scalar(R, tl_get_dtype(%s), (double)(%s))", place, v.c));
  tl_gen_emit(g, "tlrt_store(R, &%s, %d, (tlrt_ix[]){%s}, %s, %d, %d);", place, ix.n, ix.specs, val, lhs->line, lhs->col);
}

/* ---- calls of user functions ---- */

static cv gen_user_call(gen *g, tl_node *n, const tl_fninfo *f, tl_node *self_arg) {
  int mark = g->ntemps;
  tl_strbuf b = {0};
  int i = 0;
  if (f->self) {
    const tl_var *p = f->params[0];
    if (p->kind == VAR_PARAM_REF) tl_strbuf_printf(&b, "&%s", tl_gen_place(g, self_arg));
    else if (p->kind == VAR_PARAM_OWNED) tl_strbuf_puts(&b, tl_gen_take(g, tl_gen_expr(g, self_arg)));
    else tl_strbuf_puts(&b, tl_gen_expr(g, self_arg).c);
    i = 1;
  }
  for (tl_node *a = n->args; a; a = a->next, i++) {
    const tl_var *p = f->params[i];
    const char *c;
    if (p->kind == VAR_PARAM_REF) c = tl_gen_fmt(g, "&%s", tl_gen_place(g, a->lhs));
    else if (p->meets && tl_gen_grad_elem(a)) /* a number from tensor elements, met by a tensor there (gen_grad.c) */
      c = tl_gen_grad_lost(g, a, tl_gen_fmt(g, "it is passed to `%s` of `%s`, a plain number; make `%s` a `Tensor` (such a "
                                         "number passed there stays a tensor)", p->name, f->name, p->name));
    else if (p->kind == VAR_PARAM_OWNED) c = tl_gen_take(g, tl_gen_expr(g, a));
    else c = tl_gen_expr(g, a).c;
    tl_strbuf_printf(&b, "%s%s", i ? ", " : "", c);
  }
  char *args = tl_gen_take_text(g, &b);
  const char *call = tl_gen_fmt(g, "%s(%s)", f->cname, args ? args : "");
  free(args);
  if (f->ret->kind == TY_UNIT) {
    tl_gen_emit(g, "%s;", call);
    tl_gen_grad_after_call(g, n, f);
    tl_gen_release_temps(g, mark); /* `g(f())`: the temporary goes right after the call */
    return tl_gen_scalar("0", f->ret);
  }
  const char *name = tl_gen_fmt(g, "t%d", ++g->ntmp);
  tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, f->ret), name, call);
  tl_gen_grad_after_call(g, n, f);
  tl_gen_release_temps(g, mark);
  if (!tl_ty_is_refcounted(f->ret)) return tl_gen_scalar(name, f->ret);
  return tl_gen_adopt_temp(g, name, f->ret);
}

/* ---- struct literals ---- */

/* the struct field a FIELD node names (the checker's note), or NULL (a tuple's) */
static const tl_field_info *struct_field(const tl_node *n) { return n->kind == TL_N_FIELD ? n->ref : NULL; }

static const char *lost_in_field(gen *g, tl_node *v, const tl_struct_info *st, const tl_field_info *fi) {
  return tl_gen_grad_lost(g, v, tl_gen_fmt(g, "it is stored in the field `%s` of `%s`, a plain number; make the field a `Tensor`",
                                     fi->name, st->name));
}

static cv gen_struct_lit(gen *g, tl_node *n) {
  tl_struct_info *st = n->ty->st;
  const char *vals[64];
  for (tl_node *f = n->args; f; f = f->next)
    if (f->ival < 64 && st->fields[f->ival].meets && tl_gen_grad_elem(f->lhs)) /* gen_grad.c */
      vals[f->ival] = lost_in_field(g, f->lhs, st, &st->fields[f->ival]);
    else if (f->ival < 64) vals[f->ival] = tl_gen_take(g, tl_gen_expr(g, f->lhs)); /* a copy, or a move on last use */
  cv r = tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_obj_new(R, sizeof(struct %s), %s__drop)", st->cname, st->cname));
  for (int i = 0; i < st->nfields && i < 64; i++) tl_gen_emit(g, "%s->f_%s = %s;", r.c, st->fields[i].name, vals[i]);
  return r;
}

/* ---- if and blocks as values ---- */

static void gen_scope_begin(gen *g, int *mark) { *mark = g->nlocals; }

static void gen_drop_locals(gen *g, int mark) {
  for (int i = g->nlocals - 1; i >= mark; i--)
    tl_gen_emit(g, "%s", tl_gen_release_call(g, g->locals[i]->ty, tl_gen_var_ref(g, g->locals[i])));
}

void tl_gen_scope_end(gen *g, int mark) {
  gen_drop_locals(g, mark);
  g->nlocals = mark;
}

static void gen_stmt(gen *g, tl_node *n);
static cv gen_loop_value(gen *g, tl_node *n);
static void gen_while(gen *g, tl_node *n);

/* a block whose value goes into `dst` (NULL: no value) */
static void gen_block_into(gen *g, tl_node *blk, const char *dst) {
  int mark;
  gen_scope_begin(g, &mark);
  for (tl_node *s = blk->stmts; s; s = s->next) gen_stmt(g, s);
  if (blk->value) {
    const tl_node *saved = g->stmt;
    g->stmt = blk->value;
    tl_gen_line(g, blk->value);
    int tmark = g->ntemps;
    cv v = tl_gen_expr(g, blk->value);
    if (dst && blk->value->ty->kind != TY_UNIT) tl_gen_emit(g, "%s = %s;", dst, tl_gen_take(g, v));
    tl_gen_release_temps(g, tmark);
    g->stmt = saved;
  }
  tl_gen_scope_end(g, mark);
}

static cv gen_if(gen *g, tl_node *n) {
  bool has_value = n->ty->kind != TY_UNIT && n->ty->kind != TY_ERROR && n->els;
  const char *dst = NULL;
  if (has_value) {
    dst = tl_gen_fmt(g, "t%d", ++g->ntmp);
    tl_gen_emit(g, "%s %s%s;", tl_gen_ctype(g, n->ty), dst, tl_ty_is_refcounted(n->ty) ? " = NULL" : " = 0");
  }
  int mark = g->ntemps;
  cv c = tl_gen_expr(g, n->cond);
  const char *cond = tl_gen_new_temp(g, n->cond->ty, c.c);
  tl_gen_release_temps(g, mark);
  tl_gen_emit(g, "if (%s) {", cond);
  g->indent++;
  gen_block_into(g, n->then, dst);
  g->indent--;
  if (n->els) {
    tl_gen_emit(g, "} else {");
    g->indent++;
    if (n->els->kind == TL_N_BLOCK) gen_block_into(g, n->els, dst);
    else {
      int m2 = g->ntemps;
      cv e = gen_if(g, n->els);
      if (dst) tl_gen_emit(g, "%s = %s;", dst, tl_gen_take(g, e));
      tl_gen_release_temps(g, m2);
    }
    g->indent--;
  }
  tl_gen_emit(g, "}");
  if (!has_value) return tl_gen_scalar("0", n->ty);
  if (!tl_ty_is_refcounted(n->ty)) return tl_gen_scalar(dst, n->ty);
  return tl_gen_adopt_temp(g, dst, n->ty);
}

static cv gen_block_expr(gen *g, tl_node *n) {
  bool has_value = n->value && n->ty->kind != TY_UNIT;
  const char *dst = NULL;
  if (has_value) {
    dst = tl_gen_fmt(g, "t%d", ++g->ntmp);
    tl_gen_emit(g, "%s %s%s;", tl_gen_ctype(g, n->ty), dst, tl_ty_is_refcounted(n->ty) ? " = NULL" : " = 0");
  }
  tl_gen_emit(g, "{");
  g->indent++;
  gen_block_into(g, n, dst);
  g->indent--;
  tl_gen_emit(g, "}");
  if (!has_value) return tl_gen_scalar("0", n->ty);
  if (!tl_ty_is_refcounted(n->ty)) return tl_gen_scalar(dst, n->ty);
  return tl_gen_adopt_temp(g, dst, n->ty);
}

cv tl_gen_expr(gen *g, tl_node *n) {
  if (g->in_compr) return tl_gen_compr_expr(g, n);
  switch (n->kind) {
  case TL_N_INT: case TL_N_FLOAT: case TL_N_STR: case TL_N_CHAR: case TL_N_BOOL: return gen_literal(g, n);
  case TL_N_IDENT: case TL_N_SELF: return gen_ident(g, n);
  case TL_N_UNARY: return gen_unary(g, n);
  case TL_N_BINARY: return gen_binary(g, n);
  case TL_N_CAST: return gen_cast(g, n);
  case TL_N_FIELD: return gen_field(g, n);
  case TL_N_INDEX: return gen_index(g, n);
  case TL_N_ARRAY: return n->name ? tl_gen_vec_lit(g, n) : tl_gen_array(g, n); /* vec![..] (gen_vec.c) */
  case TL_N_TUPLE: return tl_gen_tuple(g, n);
  case TL_N_VARIANT: return tl_gen_variant(g, n);
  case TL_N_MATCH: return tl_gen_match(g, n);
  case TL_N_LOOP: return gen_loop_value(g, n);
  case TL_N_TRY: return tl_gen_option_try(g, n);
  case TL_N_STRUCT_LIT: return gen_struct_lit(g, n);
  case TL_N_IF: return gen_if(g, n);
  case TL_N_BLOCK: return gen_block_expr(g, n);
  case TL_N_COMPR: return tl_gen_compr(g, n);
  case TL_N_CLOSURE: return tl_gen_closure(g, n);
  case TL_N_LOGIC: return tl_gen_logic(g, n);
  case TL_N_PATH: return tl_gen_sys_call(g, n); /* Device::Auto (gen_sys.c) */
  case TL_N_CALL:
    if (n->ref) return gen_user_call(g, n, n->ref, NULL);
    if (n->ival == B_FNVAL) return tl_gen_fnval_call(g, n); /* gen_closure.c */
    return tl_gen_builtin_call(g, n);
  case TL_N_METHOD:
    if (n->ref) return gen_user_call(g, n, n->ref, n->lhs);
    return tl_gen_builtin_call(g, n);
  default: tl_gen_fail(g, n, "cannot generate this expression"); return tl_gen_scalar("0", n->ty);
  }
}

/* ---- statements ---- */

static void realize_carried(gen *g, const tl_node *loop) {
  for (const tl_varlist *e = loop->ref; e; e = e->next)
    tl_gen_realize_value(g, e->var->ty, tl_gen_var_ref(g, e->var), loop, 0);
}

static void gen_let(gen *g, tl_node *n) {
  if (n->lhs) {
    tl_gen_tuple_let(g, n);
    return;
  }
  if (n->var->shadow) { /* a number from tensor elements that meets a tensor (gen_grad.c) */
    tl_gen_grad_let(g, n);
    return;
  }
  cv v = tl_gen_expr(g, n->rhs);
  tl_var *var = n->var;
  const char *val = tl_gen_take(g, v);
  tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, var->ty), tl_gen_var_ref(g, var), val);
  tl_gen_add_local(g, var, n);
}

void tl_gen_add_local(gen *g, tl_var *v, const tl_node *at) {
  if (!tl_ty_is_refcounted(v->ty)) return;
  if (g->nlocals == GEN_MAX_LOCALS) tl_gen_fail(g, at, "too many variables");
  else g->locals[g->nlocals++] = v;
}

static tl_tok_kind plain_op(tl_tok_kind op) {
  switch (op) {
  case TL_TOK_PLUS_ASSIGN: return TL_TOK_PLUS;
  case TL_TOK_MINUS_ASSIGN: return TL_TOK_MINUS;
  case TL_TOK_STAR_ASSIGN: return TL_TOK_STAR;
  case TL_TOK_SLASH_ASSIGN: return TL_TOK_SLASH;
  case TL_TOK_AMP_ASSIGN: return TL_TOK_AMP;
  case TL_TOK_PIPE_ASSIGN: return TL_TOK_PIPE;
  case TL_TOK_CARET_ASSIGN: return TL_TOK_CARET;
  case TL_TOK_SHL_ASSIGN: return TL_TOK_SHL;
  case TL_TOK_SHR_ASSIGN: return TL_TOK_SHR;
  default: return TL_TOK_PERCENT;
  }
}

static void gen_assign(gen *g, tl_node *n) {
  tl_node *lhs = n->lhs;
  cv v;
  if (lhs->kind == TL_N_IDENT && lhs->var && lhs->var->shadow) { /* gen_grad.c */
    tl_gen_grad_assign(g, n, n->op == TL_TOK_ASSIGN ? -1 : tl_gen_tensor_op(plain_op(n->op)));
    return;
  }
  if (n->op != TL_TOK_ASSIGN) { /* x op= y is x = x op y: a new value, never a write into shared storage */
    cv cur = tl_gen_expr(g, lhs);
    cv r = tl_gen_grad_operand(g, n->rhs, lhs->ty->kind == TY_TENSOR); /* t += w[0]: a 0-d tensor */
    tl_node tmp = *n;
    tmp.ty = lhs->ty;
    tmp.lhs = lhs;
    v = tl_gen_binary_values(g, &tmp, plain_op(n->op), cur, r);
    /* x op= y keeps x's dtype (tlrt_keep_dtype) where the checker does not see that it does */
    if (lhs->ty->kind == TY_TENSOR && (lhs->ty->dtype < 0 || tl_ty_binary_dtype(lhs, lhs->ty, n->rhs, r.ty) != lhs->ty->dtype))
      v = tl_gen_temp_value(g, lhs->ty, tl_gen_fmt(g, "tlrt_keep_dtype(R, %s, %s, \"%s\", %d, %d)", cur.c, v.c,
                                             tl_tok_name(n->op), n->line, n->col));
  } else if (tl_gen_grad_elem(n->rhs) && lhs->kind == TL_N_INDEX && lhs->lhs->ty->kind == TY_TENSOR) { /* gen_grad.c */
    v = tl_gen_grad_checked(g, n->rhs, "it is stored into an element of a tensor, which keeps no history; build the tensor "
                                    "with tensor operations (an array literal `[a, b]` of such numbers keeps it)");
  } else if (tl_gen_grad_elem(n->rhs) && struct_field(lhs) && struct_field(lhs)->meets) {
    v = tl_gen_scalar(lost_in_field(g, n->rhs, lhs->lhs->ty->st, struct_field(lhs)), n->rhs->ty);
  } else v = tl_gen_expr(g, n->rhs);
  if (lhs->kind == TL_N_INDEX && lhs->lhs->ty->kind == TY_TENSOR) {
    gen_store(g, lhs, v);
    return;
  }
  const char *val = tl_gen_take(g, v); /* taken before the old value goes: `x = x.f` stays valid */
  const char *place = tl_gen_place(g, lhs);
  if (tl_ty_is_refcounted(lhs->ty)) {
    bool owned = !(lhs->kind == TL_N_IDENT && lhs->var->kind == VAR_PARAM);
    const char *old = tl_gen_fmt(g, "t%d", ++g->ntmp);
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, lhs->ty), old, place);
    tl_gen_emit(g, "%s = %s;", place, val);
    if (owned) tl_gen_emit(g, "%s", tl_gen_release_call(g, lhs->ty, old));
    else tl_gen_emit(g, "(void)%s;", old);
  } else tl_gen_emit(g, "%s = %s;", place, val);
}

/* one turn of a loop; `owned` (a `for` row, or NULL) is a local of the turn, released
 * at its end and by break and continue */
void tl_gen_loop_body(gen *g, tl_node *loop, tl_node *body, tl_var *owned) {
  if (g->nloops == GEN_MAX_LOOPS || g->nlocals == GEN_MAX_LOCALS) {
    tl_gen_fail(g, loop, "too many nested loops or variables in one function");
    return;
  }
  int mark = g->nlocals;
  g->loops[g->nloops].locals_mark = mark;
  g->loops[g->nloops].node = loop;
  g->loops[g->nloops].result = loop->kind == TL_N_LOOP ? g->loop_result : NULL;
  g->loops[g->nloops].temps_mark = g->ntemps;
  g->loops[g->nloops].stmt_mark = g->loop_stmt == loop && g->loop_stmt_mark <= g->ntemps ? g->loop_stmt_mark : g->ntemps;
  g->loop_result = NULL;
  g->nloops++;
  if (owned) g->locals[g->nlocals++] = owned;
  gen_block_into(g, body, NULL);
  realize_carried(g, loop);
  g->nloops--;
  tl_gen_scope_end(g, mark);
  if (loop->ival & 2) tl_gen_emit(g, "tl_cont_%lx:;", (unsigned long)(uintptr_t)loop); /* `continue 'label` from inside */
}

/* after a loop that a labeled break leaves from an inner loop */
static void loop_exit_label(gen *g, const tl_node *n) {
  if (n->ival & 1) tl_gen_emit(g, "tl_brk_%lx:;", (unsigned long)(uintptr_t)n);
}

/* break (value) and continue, to n->ref, the innermost loop or a labeled outer one:
 * the value goes to the loop's result variable, the locals inside it are dropped */
static void gen_jump(gen *g, tl_node *n) {
  int i = g->nloops - 1;
  while (i > 0 && n->ref && g->loops[i].node != n->ref) i--;
  const gen_loop *l = &g->loops[i];
  if (n->lhs) {
    cv v = tl_gen_expr(g, n->lhs);
    if (l->result) tl_gen_emit(g, "%s = %s;", l->result, tl_gen_take(g, v));
    /* a statement loop drops the value: the break statement's temporaries go now */
    tl_gen_release_temps(g, g->stmt_temps_mark);
  }
  bool inner = i == g->nloops - 1;
  int from = n->kind == TL_N_BREAK ? l->stmt_mark : l->temps_mark;
  for (int k = g->ntemps - 1; !inner && k >= from; k--) /* the loops' sources it leaves, on this path only */
    if (!g->temps[k].taken) tl_gen_emit(g, "%s", tl_gen_release_call(g, g->temps[k].ty, g->temps[k].name));
  gen_drop_locals(g, l->locals_mark);
  if (n->kind == TL_N_CONTINUE) realize_carried(g, l->node);
  if (inner) tl_gen_emit(g, n->kind == TL_N_BREAK ? "break;" : "continue;");
  else tl_gen_emit(g, "goto tl_%s_%lx;", n->kind == TL_N_BREAK ? "brk" : "cont", (unsigned long)(uintptr_t)l->node);
}

/* `let v = loop { .. break x; .. }`: x in a variable declared before the loop */
static cv gen_loop_value(gen *g, tl_node *n) {
  tl_ty *t = n->ty;
  bool unit = !t || t->kind == TY_UNIT;
  const char *r = unit ? NULL : tl_gen_fmt(g, "t%d", ++g->ntmp);
  if (r) tl_gen_emit(g, "%s %s = 0;", tl_gen_ctype(g, t), r);
  g->loop_result = r;
  gen_while(g, n);
  loop_exit_label(g, n);
  if (unit) return tl_gen_scalar("0", TY_UNIT_T);
  return tl_ty_is_refcounted(t) ? tl_gen_adopt_temp(g, r, t) : tl_gen_scalar(r, t);
}

static void gen_while(gen *g, tl_node *n) {
  tl_gen_emit(g, "for (;;) {");
  g->indent++;
  if (n->kind == TL_N_WHILE) {
    int mark = g->ntemps;
    g->stmt = n->cond;
    cv c = tl_gen_expr(g, n->cond);
    const char *cond = tl_gen_new_temp(g, n->cond->ty, c.c);
    tl_gen_release_temps(g, mark);
    tl_gen_emit(g, "if (!%s) break;", cond);
  }
  tl_gen_loop_body(g, n, n->body, NULL);
  g->indent--;
  tl_gen_emit(g, "}");
}

static void gen_for(gen *g, tl_node *n) {
  tl_node *h = n->lhs;
  tl_var *v = n->var;
  if (tl_ty_is_vec(h->ty) || tl_ty_is_map(h->ty)) {
    tl_gen_vec_for(g, n); /* gen_vec.c */
    return;
  }
  if (tl_ty_is_iter(h->ty)) {
    tl_gen_iter_for(g, n); /* gen_iter.c */
    return;
  }
  tl_gen_emit(g, "{");
  g->indent++;
  int mark = g->ntemps;
  if (h->ty->kind == TY_RANGE) {
    tl_node *lo = h->ival == 1 ? (h->args->next ? h->args : NULL) : h->lhs;
    tl_node *hi = h->ival == 1 ? (h->args->next ? h->args->next : h->args) : h->rhs;
    /* counted in the bounds' own type (sema_stmt.c's for_range): i < b keeps i++ in range */
    const char *a = tl_gen_new_temp(g, v->ty, lo ? tl_gen_expr(g, lo).c : "0");
    const char *b = tl_gen_new_temp(g, v->ty, tl_gen_expr(g, hi).c);
    tl_gen_emit(g, "for (%s %s = %s; %s < %s; %s++) {", tl_gen_ctype(g, v->ty), tl_gen_var_ref(g, v), a, tl_gen_var_ref(g, v), b,
                tl_gen_var_ref(g, v));
    g->indent++;
    tl_gen_loop_body(g, n, n->body, NULL);
  } else {
    cv src = tl_gen_expr(g, h);
    const char *s = tl_gen_new_temp(g, h->ty, src.temp >= 0 ? tl_gen_take(g, src) : tl_gen_fmt(g, "tlrt_tensor_retain(R, %s)", src.c));
    g->temps[g->ntemps - 1].taken = false; /* the loop's own reference, released after it */
    const char *len = tl_gen_new_temp(g, TY_I64_T, tl_gen_fmt(g, "tlrt_len(R, %s, %d, %d)", s, h->line, h->col));
    const char *k = tl_gen_fmt(g, "t%d", ++g->ntmp);
    tl_gen_emit(g, "for (int64_t %s = 0; %s < %s; %s++) {", k, k, len, k);
    g->indent++;
    if (v->ty->kind == TY_TENSOR) {
      tl_gen_emit(g, "tl_tensor *%s = tlrt_index_ints(R, %s, 1, (int64_t[]){%s}, %d, %d);", tl_gen_var_ref(g, v), s, k, h->line, h->col);
      tl_gen_loop_body(g, n, n->body, v);
    } else {
      tl_gen_emit(g, "%s %s = (%s)tlrt_get(R, %s, 1, (int64_t[]){%s}, %d, %d);", tl_gen_ctype(g, v->ty), tl_gen_var_ref(g, v),
               tl_gen_ctype(g, v->ty), s, k, h->line, h->col);
      if (v->shadow) /* the element as a 0-d view too: it meets a tensor (gen_grad.c) */
        tl_gen_emit(g, "tl_tensor *%s = tlrt_index_ints(R, %s, 1, (int64_t[]){%s}, %d, %d);", tl_gen_var_ref(g, v->shadow), s, k,
                 h->line, h->col);
      tl_gen_loop_body(g, n, n->body, v->shadow);
    }
  }
  g->indent--;
  tl_gen_emit(g, "}");
  tl_gen_release_temps(g, mark);
  g->indent--;
  tl_gen_emit(g, "}");
}

/* a function's result: a number from tensor elements that a caller's tensor meets
 * is lost into a plain number (gen_grad.c) */
static cv gen_result(gen *g, tl_node *v) {
  if (!g->fn->ret_meets || !tl_gen_grad_elem(v)) return tl_gen_expr(g, v);
  const char *why = tl_gen_fmt(g, "`%s` returns it as a plain number; make its result a `Tensor`", g->fn->name);
  return tl_gen_scalar(tl_gen_grad_lost(g, v, why), v->ty);
}

static void gen_return(gen *g, tl_node *n) {
  const char *val = NULL;
  if (n->lhs) {
    cv v = gen_result(g, n->lhs);
    if (n->lhs->ty->kind != TY_UNIT) {
      val = tl_gen_fmt(g, "t%d", ++g->ntmp);
      /* `return local` moves; `return param` copies (tl_gen_take decides) */
      tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, n->lhs->ty), val, tl_gen_take(g, v));
    }
  }
  tl_gen_return_value(g, val);
}

void tl_gen_return_value(gen *g, const char *val) {
  /* every pending temporary of the enclosing statements (a loop's source, ...) and
   * every owned local goes on this path; the stacks stay as they are for the code
   * after the return (the rest of the enclosing statements, reached by other paths) */
  for (int i = g->ntemps - 1; i >= 0; i--)
    if (!g->temps[i].taken) tl_gen_emit(g, "%s", tl_gen_release_call(g, g->temps[i].ty, g->temps[i].name));
  gen_drop_locals(g, 0);
  if (g->own_file) tl_gen_emit(g, "R->file = tl__file;");
  tl_gen_emit(g, val ? "return %s;" : "return;", val);
}

static void gen_stmt(gen *g, tl_node *n) {
  const tl_node *saved = g->stmt;
  g->stmt = n;
  tl_gen_line(g, n);
  int mark = g->ntemps;
  switch (n->kind) {
  case TL_N_LET: gen_let(g, n); break;
  case TL_N_ASSIGN: gen_assign(g, n); break;
  case TL_N_EXPR_STMT: {
    cv v = tl_gen_expr(g, n->lhs);
    if (v.temp < 0 && !tl_ty_is_refcounted(v.ty) && strcmp(v.c, "0")) tl_gen_emit(g, "(void)(%s);", v.c);
    break;
  }
  case TL_N_WHILE: g->loop_stmt = n, g->loop_stmt_mark = mark; gen_while(g, n); loop_exit_label(g, n); break;
  case TL_N_LOOP: { /* its break values, if any, are dropped */
    cv v = gen_loop_value(g, n);
    if (v.temp >= 0) tl_gen_release_temps(g, mark);
    break;
  }
  case TL_N_FOR: g->loop_stmt = n, g->loop_stmt_mark = mark; gen_for(g, n); loop_exit_label(g, n); break;
  case TL_N_BREAK: case TL_N_CONTINUE: g->stmt_temps_mark = mark; gen_jump(g, n); break;
  case TL_N_RETURN: gen_return(g, n); break;
  default: tl_gen_expr(g, n); break;
  }
  tl_gen_release_temps(g, mark);
  g->stmt = saved;
}

/* ---- functions and structs ---- */

static void gen_signature(gen *g, tl_strbuf *b, const tl_fninfo *f) {
  tl_strbuf_printf(b, "static %s %s(", tl_gen_ret_ctype(g, f->ret), f->cname);
  int n = f->nparams + (f->self ? 1 : 0);
  for (int i = 0; i < n; i++) {
    const tl_var *p = f->params[i];
    tl_strbuf_printf(b, "%s%s%s v%d_%s", i ? ", " : "", tl_gen_ctype(g, p->ty), p->kind == VAR_PARAM_REF ? "*" : "", p->id,
                     p->name);
  }
  tl_strbuf_puts(b, n ? ")" : "void)");
}

static void gen_function(gen *g, const tl_fninfo *f, tl_strbuf *out) {
  g->out = out;
  g->fn = f;
  g->ntmp = 0;
  g->ntemps = g->nlocals = g->nloops = 0;
  gen_signature(g, out, f);
  tl_strbuf_puts(out, " {\n");
  g->indent = 1;
  tl_gen_function_body(g, f);
  tl_strbuf_puts(out, "}\n\n");
}

void tl_gen_function_body(gen *g, const tl_fninfo *f) {
  /* deep recursion is a run-time error at the function, not a SIGSEGV (rt.h) */
  tl_gen_emit(g, "char tl__sp;");
  tl_gen_emit(g, "if (__builtin_expect((uintptr_t)&tl__sp < R->stack_limit, 0)) tlrt_fail(R, %d, %d, \"stack overflow\");",
           f->fn->line, f->fn->col);
  /* with modules, a run-time error names the file of the function it is in */
  g->own_file = g->S->nunits > 1;
  g->file = g->own_file && f->fn->unit > 0 && f->fn->unit < g->S->nunits ? g->S->units[f->fn->unit].path : g->main_file;
  if (g->own_file) {
    tl_strbuf name = {0};
    tl_gen_c_string(&name, g->file);
    char *lit = tl_gen_take_text(g, &name);
    tl_gen_emit(g, "const char *tl__file = R->file;");
    tl_gen_emit(g, "R->file = %s;", lit ? lit : "\"\"");
    free(lit);
  }
  int n = f->nparams + (f->self ? 1 : 0);
  for (int i = 0; i < n; i++) /* a `mut x: T` parameter is the callee's own: dropped at its exit */
    if (f->params[i]->kind == VAR_PARAM_OWNED && tl_ty_is_refcounted(f->params[i]->ty))
      g->locals[g->nlocals++] = f->params[i];
  tl_node *body = f->fn->body;
  for (tl_node *s = body->stmts; s; s = s->next) gen_stmt(g, s);
  if (body->value && f->ret->kind != TY_UNIT) {
    g->stmt = body->value;
    tl_gen_line(g, body->value);
    cv v = gen_result(g, body->value);
    const char *r = tl_gen_fmt(g, "t%d", ++g->ntmp);
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, f->ret), r, tl_gen_take(g, v));
    tl_gen_release_temps(g, 0);
    gen_drop_locals(g, 0);
    if (g->own_file) tl_gen_emit(g, "R->file = tl__file;");
    tl_gen_emit(g, "return %s;", r);
  } else {
    if (body->value) {
      g->stmt = body->value;
      tl_gen_line(g, body->value);
      tl_gen_expr(g, body->value);
      tl_gen_release_temps(g, 0);
    }
    gen_drop_locals(g, 0);
    if (g->own_file) tl_gen_emit(g, "R->file = tl__file;");
    if (f->ret->kind != TY_UNIT) tl_gen_emit(g, "tlrt_fail(R, %d, %d, \"function ended without a value\");", f->fn->line, f->fn->col);
  }
}

static void gen_struct(gen *g, const tl_struct_info *st, tl_strbuf *out) {
  const char *c = st->cname;
  if (st->generic == 'V' || st->generic == 'M') { /* a tlrt_vec / tlrt_map: printing, == (gen_vec.c) */
    tl_gen_vec_functions(g, st, out);
    return;
  }
  tl_strbuf_printf(out, "struct %s {\n  tlrt_obj h;\n%s", c, st->is_enum ? "  int64_t tag;\n" : "");
  for (int i = 0; i < st->nfields; i++) tl_strbuf_printf(out, "  %s f_%s;\n", tl_gen_ctype(g, st->fields[i].ty), st->fields[i].name);
  tl_strbuf_puts(out, "};\n");
  tl_strbuf_printf(out, "static void %s__drop(tlrt *R, tlrt_obj *o) {\n  struct %s *p = (void *)o;\n", c, c);
  for (int i = 0; i < st->nfields; i++)
    if (tl_ty_is_refcounted(st->fields[i].ty))
      tl_strbuf_printf(out, "  %s\n", tl_gen_release_call(g, st->fields[i].ty, tl_gen_fmt(g, "p->f_%s", st->fields[i].name)));
  tl_strbuf_puts(out, "  (void)p; (void)R;\n}\n");
  tl_strbuf_printf(out, "static void %s__retain_fields(tlrt *R, void *o) {\n  struct %s *p = o;\n", c, c);
  for (int i = 0; i < st->nfields; i++)
    if (tl_ty_is_refcounted(st->fields[i].ty))
      tl_strbuf_printf(out, "  %s;\n", tl_gen_retain_expr(g, st->fields[i].ty, tl_gen_fmt(g, "p->f_%s", st->fields[i].name)));
  tl_strbuf_puts(out, "  (void)p; (void)R;\n}\n");
  if (st->is_tuple) { /* printing (1, 2.5) and == (gen_tuple.c) */
    tl_gen_tuple_functions(g, st, out);
    return;
  }
  if (st->generic) { /* printing Some(1), Err("bad") (gen_option.c) */
    tl_gen_option_fmt(g, st, out);
    return;
  }
  if (st->is_enum) { /* printing B(1, 2.0) (gen_match.c) */
    tl_gen_enum_fmt(g, st, out);
    return;
  }
  /* printing: P { x: 1.0, y: 2.0 }; under `{}`, an `impl Display`'s to_string */
  if (st->display) {
    gen_signature(g, out, st->display);
    tl_strbuf_puts(out, ";\n");
  }
  tl_strbuf_printf(out, "static void %s__fmt(tlrt *R, struct %s *p, bool dbg) {\n  (void)dbg;\n", c, c);
  if (st->display) /* the text so far kept aside: to_string may format text of its own */
    tl_strbuf_printf(out, "  if (!dbg) {\n    tlrt_str *before = tlrt_fmt_take(R), *s = %s(p);\n    tlrt_fmt_begin(R);\n"
                          "    tlrt_fmt_str(R, before);\n    tlrt_fmt_str(R, s);\n    tlrt_release(R, before);\n    tlrt_release(R, s);\n"
                          "    return;\n  }\n",
                     st->display->cname);
  const char *shown = st->generic_of ? st->generic_of : st->name; /* `Pair { .. }`, as Rust's Debug */
  tl_strbuf_printf(out, "  tlrt_fmt_text(R, \"%s { \", %zu);\n", shown, strlen(shown) + 3);
  tl_strbuf *saved = g->out;
  g->out = out;
  g->indent = 1;
  for (int i = 0; i < st->nfields; i++) {
    const char *lead = tl_gen_fmt(g, "%s%s: ", i ? ", " : "", st->fields[i].name);
    tl_strbuf_printf(out, "  tlrt_fmt_text(R, \"%s\", %zu);\n", lead, strlen(lead));
    tl_gen_fmt_value(g, (cv){.c = tl_gen_fmt(g, "p->f_%s", st->fields[i].name), .ty = st->fields[i].ty, .temp = -1}, -1, NULL, "dbg");
  }
  g->out = saved;
  tl_strbuf_puts(out, "  tlrt_fmt_text(R, \" }\", 2);\n}\n\n");
}

char *tl_gen_take_text(gen *g, tl_strbuf *b) {
  char *s = tl_strbuf_take(b);
  if (!s && !g->failed) { /* an append failed: the C would have a hole */
    g->failed = true;
    snprintf(g->error, sizeof g->error, "tl: out of memory");
  }
  return s;
}

char *tl_gen_program(const tl_sema *S, tl_arena *arena, const char *file, bool line_directives, char *err,
                     size_t errlen) {
  gen *g = calloc(1, sizeof *g);
  if (!g) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  g->S = S;
  g->arena = arena;
  g->file = g->main_file = file;
  g->lines = line_directives;
  tl_strbuf out = {0}, fns = {0}, side = {0};
  g->side = &side; /* closures' functions and environments (gen_closure.c) */
  tl_strbuf_puts(&out, lang_prelude);
  tl_strbuf_puts(&out, "\n/* ---- the program ---- */\nstatic tlrt *R;\n\n");
  for (const tl_struct_info *st = S->structs; st; st = st->next) {
    if (st->generic == 'V' || st->generic == 'M') {
      tl_gen_vec_declare(g, st, &out);
      continue;
    }
    tl_strbuf_printf(&out, "struct %s;\nstatic void %s__fmt(tlrt *R, struct %s *p, bool dbg);\n", st->cname, st->cname, st->cname);
    if (st->is_tuple) tl_gen_tuple_declare(st, &out);
  }
  for (const tl_struct_info *st = S->structs; st; st = st->next) gen_struct(g, st, &out);
  if (S->logic) tl_gen_logic_program(S->logic, &out);
  for (const tl_fninfo *f = S->fns; f; f = f->next) {
    gen_signature(g, &out, f);
    tl_strbuf_puts(&out, ";\n");
  }
  tl_strbuf_puts(&out, "\n");
  for (const tl_fninfo *f = S->fns; f; f = f->next) gen_function(g, f, &fns);
  char *closures = tl_gen_take_text(g, &side); /* before the functions that make them */
  if (closures) tl_strbuf_puts(&out, closures);
  free(closures);
  char *body = tl_gen_take_text(g, &fns);
  if (body) tl_strbuf_puts(&out, body);
  free(body);
  /* the knowledge base lives as long as main runs (an error exit frees it too) */
  /* `fn main() -> i64` (the seed language's): its value is the exit status, 0 to 255 */
  const tl_fn *mf = S->main->fn;
  const char *status = S->main->ret->kind == TY_I64
                           ? tl_gen_fmt(g, "  int64_t status = %s();\n  if (status < 0 || status > 255) tlrt_fail(R, %d, %d, "
                                           "\"main returned %%lld, an exit status outside 0..255\", (long long)status);\n",
                                        S->main->cname, mf->line, mf->col)
                           : tl_gen_fmt(g, "  %s();\n", S->main->cname);
  tl_strbuf_printf(&out, "int tl_program_main(tlrt *run) {\n  R = run;\n%s%s%s  return %s;\n}\n",
                   S->logic ? "  tlrt_logic_begin(R, &tl__logic);\n" : "", status,
                   S->logic ? "  tlrt_logic_output(R, &tl__logic);\n  tlrt_logic_end(R);\n" : "", S->main->ret->kind == TY_I64 ? "(int)status" : "0");
  char *src = tl_gen_take_text(g, &out);
  if (g->failed || !src) {
    snprintf(err, errlen, "%s", g->failed ? g->error : "tl: out of memory");
    free(src);
    src = NULL;
  }
  free(g);
  return src;
}
