/* sema_const.c — `const NAME: T = value;` items (and `static`, the same for an immutable
 * value): a number, bool, char or String computed when the program is compiled from
 * literals, other constants, arithmetic, comparisons and `as`. A use of the name in
 * any function becomes a literal of the constant's type (node->ref: the constant), so
 * the later passes see a literal and nothing else. */
#include "lang/check/sema_impl.h"

#include "core/half.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  tl_ty_kind kind; /* TY_I32 TY_I64 TY_F32 TY_F64 TY_BOOL TY_CHAR TY_STR */
  int64_t i;       /* integers, bool, char */
  double f;        /* floats (an f32's value is a float's) */
  const char *str; /* String */
  size_t len;
} cval;

typedef struct sema_const {
  tl_ast_item *it;
  tl_ty *ty;  /* the written type; TY_ERR after an error */
  int state;  /* 0 not computed, 1 being computed (a use now is a cycle), 2 done */
  cval v;
  struct sema_const *next;
} sema_const;

static sema_const *find(sema *s, const char *name) {
  for (sema_const *c = s->consts; c; c = c->next)
    if (!strcmp(c->it->name, name)) return c;
  return NULL;
}

void tl_sema_const_declare(sema *s, tl_ast_item *it, bool broken) {
  if (find(s, it->name)) {
    tl_diag_error(s->diag, it->line, it->col, "the name `%s` is defined twice", it->name);
    return;
  }
  sema_const *c = tl_arena_alloc(s->arena, sizeof *c);
  if (!c) return;
  c->it = it;
  c->ty = TY_ERR;
  c->state = broken ? 2 : 0; /* what did not parse is known by name, with no value */
  sema_const **tail = &s->consts; /* in the file's order: the first of a cycle says so */
  while (*tail) tail = &(*tail)->next;
  *tail = c;
}

/* ---- evaluation ---- */

static bool fail(sema *s, const tl_node *n, const char *msg) {
  tl_sema_error(s, n, "%s", msg);
  return false;
}

static tl_ty *ty_of(tl_ty_kind k) {
  return tl_ty_is_numeric(&tl_ty_basic[k]) || k == TY_BOOL || k == TY_CHAR ? &tl_ty_basic[k] : TY_STR_T;
}

/* f a value of float kind k: one rounding */
static double round_to(tl_ty_kind k, double f) {
  return k == TY_F32 ? (float)f : k == TY_F16 ? tl_round_f16(f) : k == TY_BF16 ? tl_round_bf16(f) : f;
}

static bool is_int(tl_ty_kind k) { return tl_ty_is_int(&tl_ty_basic[k]); }
/* f16 and bf16 constants are those of their scalar type's (numbers spelled in f32) */
static bool is_float(tl_ty_kind k) { return tl_ty_is_float(&tl_ty_basic[k]); }

/* v as an integer of kind k: false when it does not fit (u64: up to i64::MAX, but its
 * MAX, whose bits are kept) */
static bool fits(cval *v, tl_ty_kind k) {
  v->kind = k;
  int64_t lo, hi;
  tl_ty_int_range(k, &lo, &hi);
  return v->i >= lo && v->i <= hi;
}

static bool value_of(sema *s, sema_const *c, const tl_node *at);
static bool eval(sema *s, tl_node *n, tl_ty_kind want, cval *out);

/* the number types' associated constants, Rust's: f32::INFINITY, i64::MAX... */
static const struct {
  const char *name;
  tl_ty_kind kind;
  double f;
  int64_t i;
} assoc[] = {
    {"f32::INFINITY", TY_F32, INFINITY, 0},       {"f32::NEG_INFINITY", TY_F32, -INFINITY, 0},
    {"f32::NAN", TY_F32, NAN, 0},                 {"f32::MAX", TY_F32, FLT_MAX, 0},
    {"f32::MIN", TY_F32, -FLT_MAX, 0},            {"f32::MIN_POSITIVE", TY_F32, FLT_MIN, 0},
    {"f32::EPSILON", TY_F32, FLT_EPSILON, 0},     {"f64::INFINITY", TY_F64, INFINITY, 0},
    {"f64::NEG_INFINITY", TY_F64, -INFINITY, 0},  {"f64::NAN", TY_F64, NAN, 0},
    {"f64::MAX", TY_F64, DBL_MAX, 0},             {"f64::MIN", TY_F64, -DBL_MAX, 0},
    {"f64::MIN_POSITIVE", TY_F64, DBL_MIN, 0},    {"f64::EPSILON", TY_F64, DBL_EPSILON, 0},
    {"i64::MAX", TY_I64, 0, INT64_MAX},           {"i64::MIN", TY_I64, 0, INT64_MIN},
    {"i32::MAX", TY_I32, 0, INT32_MAX},           {"i32::MIN", TY_I32, 0, INT32_MIN},
    {"u8::MAX", TY_U8, 0, 255},                   {"u8::MIN", TY_U8, 0, 0},
    {"i8::MAX", TY_I8, 0, 127},                   {"i8::MIN", TY_I8, 0, -128},
    {"i16::MAX", TY_I16, 0, 32767},               {"i16::MIN", TY_I16, 0, -32768},
    {"u16::MAX", TY_U16, 0, 65535},               {"u16::MIN", TY_U16, 0, 0},
    {"u32::MAX", TY_U32, 0, 4294967295},          {"u32::MIN", TY_U32, 0, 0},
    {"u64::MAX", TY_U64, 0, -1 /* the bits */},   {"u64::MIN", TY_U64, 0, 0},
    {"f16::MAX", TY_F16, 65504.0, 0},             {"f16::MIN", TY_F16, -65504.0, 0},
    {"f16::EPSILON", TY_F16, 0x1p-10, 0},         {"f16::MIN_POSITIVE", TY_F16, 0x1p-14, 0},
    {"f16::INFINITY", TY_F16, INFINITY, 0},       {"f16::NEG_INFINITY", TY_F16, -INFINITY, 0},
    {"f16::NAN", TY_F16, NAN, 0},                 {"bf16::MAX", TY_BF16, 0x1.fep127, 0},
    {"bf16::MIN", TY_BF16, -0x1.fep127, 0},       {"bf16::EPSILON", TY_BF16, 0x1p-7, 0},
    {"bf16::MIN_POSITIVE", TY_BF16, 0x1p-126, 0}, {"bf16::INFINITY", TY_BF16, INFINITY, 0},
    {"bf16::NEG_INFINITY", TY_BF16, -INFINITY, 0}, {"bf16::NAN", TY_BF16, NAN, 0},
};

/* the seed language's (and Rust's deprecated) calls for them: `F32::nan()`, `i64::max_value()` */
static const char *const assoc_calls[][2] = {
    {"F32::nan", "f32::NAN"},           {"F32::infinity", "f32::INFINITY"}, {"F32::max_value", "f32::MAX"},
    {"F32::min_value", "f32::MIN"},     {"F64::nan", "f64::NAN"},           {"F64::infinity", "f64::INFINITY"},
    {"F64::max_value", "f64::MAX"},     {"F64::min_value", "f64::MIN"},     {"I64::max_value", "i64::MAX"},
    {"I64::min_value", "i64::MIN"},     {"I32::max_value", "i32::MAX"},     {"I32::min_value", "i32::MIN"},
    {"f32::max_value", "f32::MAX"},     {"f32::min_value", "f32::MIN"},     {"f64::max_value", "f64::MAX"},
    {"f64::min_value", "f64::MIN"},     {"i64::max_value", "i64::MAX"},     {"i64::min_value", "i64::MIN"},
    {"i32::max_value", "i32::MAX"},     {"i32::min_value", "i32::MIN"},
};

tl_ty *tl_sema_const_call(sema *s, tl_node *n) {
  if (n->kind != TL_N_CALL || n->lhs->kind != TL_N_PATH || !n->lhs->name) return NULL;
  for (size_t k = 0; k < sizeof assoc_calls / sizeof assoc_calls[0]; k++) {
    if (strcmp(assoc_calls[k][0], n->lhs->name)) continue;
    if (n->args) {
      tl_sema_error(s, n, "`%s` takes no arguments", n->lhs->name);
      tl_sema_check_rest(s, n->args);
      return TY_ERR;
    }
    n->kind = TL_N_PATH; /* the constant, then its literal */
    n->name = assoc_calls[k][1];
    return tl_sema_const_use(s, n);
  }
  return NULL;
}

/* path n's associated constant as a constant of its own (made for this use), or NULL */
static sema_const *assoc_const(sema *s, const tl_node *n) {
  if (n->kind != TL_N_PATH || !n->name) return NULL;
  for (size_t k = 0; k < sizeof assoc / sizeof assoc[0]; k++) {
    if (strcmp(assoc[k].name, n->name)) continue;
    sema_const *c = tl_arena_alloc(s->arena, sizeof *c);
    tl_ast_item *it = tl_arena_alloc(s->arena, sizeof *it);
    if (!c || !it) return NULL;
    *it = (tl_ast_item){.name = assoc[k].name};
    *c = (sema_const){.it = it, .ty = ty_of(assoc[k].kind), .state = 2,
                      .v = {.kind = assoc[k].kind, .i = assoc[k].i, .f = assoc[k].f}};
    return c;
  }
  return NULL;
}

static bool mismatch(sema *s, const tl_node *n, tl_ty_kind want, tl_ty_kind have) {
  tl_sema_mismatch(s, n, "constant expression", ty_of(want), ty_of(have));
  return false;
}

static bool literal(sema *s, tl_node *n, tl_ty_kind want, cval *out) {
  switch (n->kind) {
  case TL_N_INT:
    if (is_float(want)) {
      *out = (cval){.kind = want, .f = round_to(want, tl_i64_odd(n->ival))};
      return true;
    }
    *out = (cval){.i = n->ival};
    if (want == TY_U64 && ((n->name && !strcmp(n->name, "u64")) || n->len)) return (out->kind = TY_U64), true; /* bits */
    if (n->len) return fail(s, n, "the literal is too large for its type");
    if (is_int(want) && want != TY_I32) {
      char b[16];
      return fits(out, want) || (tl_sema_error(s, n, "the literal does not fit in %s", tl_ty_name(ty_of(want), b, sizeof b)), false);
    }
    return fits(out, want == TY_I32 ? TY_I32 : TY_I64) || fail(s, n, "the literal does not fit in i32");
  case TL_N_FLOAT:
    if (is_int(want)) return mismatch(s, n, want, TY_F32);
    *out = (cval){.kind = is_float(want) ? want : TY_F32, .f = round_to(is_float(want) ? want : TY_F32, n->fval)};
    return true;
  case TL_N_BOOL: *out = (cval){.kind = TY_BOOL, .i = n->ival}; return true;
  case TL_N_CHAR: *out = (cval){.kind = TY_CHAR, .i = n->ival}; return true;
  default: *out = (cval){.kind = TY_STR, .str = n->str, .len = n->len}; return true;
  }
}

static bool negate(sema *s, tl_node *n, cval *v) {
  if (is_float(v->kind)) v->f = -v->f;
  else if (!is_int(v->kind)) return fail(s, n, "`-` in a constant needs a number");
  else if (v->i == INT64_MIN || !fits(&(cval){.i = -v->i}, v->kind)) return fail(s, n, "the constant overflows its type");
  else v->i = -v->i;
  return true;
}

static bool arith(sema *s, tl_node *n, cval a, cval b, cval *out) {
  *out = a;
  if (is_float(a.kind)) {
    double r = n->op == TL_TOK_PLUS ? a.f + b.f : n->op == TL_TOK_MINUS ? a.f - b.f : n->op == TL_TOK_STAR ? a.f * b.f
             : n->op == TL_TOK_SLASH ? a.f / b.f : fmod(a.f, b.f);
    out->f = round_to(a.kind, r); /* one rounding from the exact result, as f32 arithmetic */
    return true;
  }
  int64_t r = 0;
  bool over = false;
  switch (n->op) {
  case TL_TOK_PLUS: over = __builtin_add_overflow(a.i, b.i, &r); break;
  case TL_TOK_MINUS: over = __builtin_sub_overflow(a.i, b.i, &r); break;
  case TL_TOK_STAR: over = __builtin_mul_overflow(a.i, b.i, &r); break;
  default:
    if (b.i == 0) return fail(s, n, "division by zero in a constant");
    over = a.i == INT64_MIN && b.i == -1;
    if (!over) r = n->op == TL_TOK_SLASH ? a.i / b.i : a.i % b.i;
  }
  out->i = r;
  if (over || !fits(out, a.kind)) return fail(s, n, "the constant overflows its type");
  return true;
}

static bool compare(tl_tok_kind op, cval a, cval b) {
  int c;
  if (a.kind == TY_STR) {
    size_t m = a.len < b.len ? a.len : b.len;
    c = memcmp(a.str, b.str, m);
    if (!c) c = (a.len > b.len) - (a.len < b.len);
  } else if (is_float(a.kind)) {
    if (isnan(a.f) || isnan(b.f)) return op == TL_TOK_NE; /* NaN is unordered, as at run time */
    c = (a.f > b.f) - (a.f < b.f);
  } else c = (a.i > b.i) - (a.i < b.i);
  switch (op) {
  case TL_TOK_EQ: return c == 0;
  case TL_TOK_NE: return c != 0;
  case TL_TOK_LT: return c < 0;
  case TL_TOK_GT: return c > 0;
  case TL_TOK_LE: return c <= 0;
  default: return c >= 0;
  }
}

static bool is_bare_literal(const tl_node *n) {
  if (n->kind == TL_N_UNARY && n->op == TL_TOK_MINUS) n = n->lhs;
  return n->kind == TL_N_INT || n->kind == TL_N_FLOAT;
}

static bool binary(sema *s, tl_node *n, tl_ty_kind want, cval *out) {
  tl_tok_kind op = n->op;
  cval a, b;
  if (op == TL_TOK_ANDAND || op == TL_TOK_OROR) {
    if (!eval(s, n->lhs, TY_BOOL, &a) || !eval(s, n->rhs, TY_BOOL, &b)) return false;
    if (a.kind != TY_BOOL) return mismatch(s, n->lhs, TY_BOOL, a.kind);
    if (b.kind != TY_BOOL) return mismatch(s, n->rhs, TY_BOOL, b.kind);
    *out = (cval){.kind = TY_BOOL, .i = op == TL_TOK_ANDAND ? a.i && b.i : a.i || b.i};
    return true;
  }
  bool cmp = op == TL_TOK_EQ || op == TL_TOK_NE || op == TL_TOK_LT || op == TL_TOK_GT || op == TL_TOK_LE || op == TL_TOK_GE;
  tl_ty_kind hint = cmp ? TY_ERROR : want;
  if (is_bare_literal(n->lhs) && !is_bare_literal(n->rhs)) { /* `2 * N`: the literal takes N's type */
    if (!eval(s, n->rhs, hint, &b) || !eval(s, n->lhs, b.kind, &a)) return false;
  } else if (!eval(s, n->lhs, hint, &a) || !eval(s, n->rhs, a.kind, &b)) return false;
  if (a.kind != b.kind) return mismatch(s, n->rhs, a.kind, b.kind);
  if (cmp) {
    if (a.kind == TY_BOOL && op != TL_TOK_EQ && op != TL_TOK_NE) return fail(s, n, "bools compare with `==` and `!=` only");
    *out = (cval){.kind = TY_BOOL, .i = compare(op, a, b)};
    return true;
  }
  bool arithmetic = op == TL_TOK_PLUS || op == TL_TOK_MINUS || op == TL_TOK_STAR || op == TL_TOK_SLASH || op == TL_TOK_PERCENT;
  if (!arithmetic || !(is_int(a.kind) || is_float(a.kind)))
    return fail(s, n, "a constant's arithmetic is on numbers: `+ - * / %`");
  return arith(s, n, a, b, out);
}

/* `x as T` between numbers (and bool, char to integers), with the run time's rules:
 * integers wrap, floats saturate into integers (NaN is 0) */
static bool cast(sema *s, tl_node *n, cval *out) {
  tl_ty *to = tl_sema_resolve_type(s, n->type);
  cval a;
  if (to->kind == TY_ERROR || !eval(s, n->lhs, TY_ERROR, &a)) return false;
  bool from_num = is_int(a.kind) || is_float(a.kind) || a.kind == TY_BOOL || a.kind == TY_CHAR;
  if (!from_num || !(is_int(to->kind) || is_float(to->kind))) return fail(s, n, "a constant casts between numbers only");
  if (is_float(to->kind)) {
    double f = is_float(a.kind) ? a.f : a.kind == TY_U64 ? tl_u64_odd((uint64_t)a.i) : tl_i64_odd(a.i);
    *out = (cval){.kind = to->kind, .f = round_to(to->kind, f)};
    return true;
  }
  int64_t i = tl_ty_int_wrap(to->kind, a.i), lo, hi; /* integers wrap */
  tl_ty_int_range(to->kind, &lo, &hi);
  if (is_float(a.kind) && to->kind == TY_U64) /* floats saturate, NaN 0 */
    i = isnan(a.f) || a.f <= 0 ? 0 : a.f >= 0x1p64 ? -1 : (int64_t)(uint64_t)a.f;
  else if (is_float(a.kind))
    i = isnan(a.f) ? 0 : a.f <= (double)lo ? lo : a.f >= (double)hi ? hi : (int64_t)a.f;
  *out = (cval){.kind = to->kind, .i = i};
  return true;
}

/* the value of constant expression n; want: the type a literal in it takes (TY_ERROR:
 * its own) */
static bool eval(sema *s, tl_node *n, tl_ty_kind want, cval *out) {
  switch (n->kind) {
  case TL_N_INT: case TL_N_FLOAT: case TL_N_BOOL: case TL_N_CHAR: case TL_N_STR: return literal(s, n, want, out);
  case TL_N_IDENT: {
    sema_const *c = find(s, n->name);
    if (!c) {
      tl_sema_error(s, n, "cannot find constant `%s`: a constant's value is made of literals and other constants", n->name);
      tl_suggest g;
      tl_suggest_init(&g, n->name);
      for (sema_const *o = s->consts; o; o = o->next) tl_suggest_add(&g, o->it->name);
      tl_suggest_hint(&g, s->diag, "");
      return false;
    }
    if (!value_of(s, c, n)) return false;
    *out = c->v;
    return true;
  }
  case TL_N_UNARY:
    if (n->op == TL_TOK_MINUS && n->lhs->kind == TL_N_INT && is_int(want) && !tl_ty_is_unsigned(ty_of(want))) {
      tl_node neg = *n->lhs; /* `-128` as an i8: one literal, as Rust reads it */
      neg.ival = -neg.ival, neg.line = n->line, neg.col = n->col;
      return literal(s, &neg, want, out);
    }
    if (n->op == TL_TOK_MINUS) return eval(s, n->lhs, want, out) && negate(s, n, out);
    if (n->op == TL_TOK_NOT) {
      if (!eval(s, n->lhs, TY_BOOL, out)) return false;
      if (out->kind != TY_BOOL) return mismatch(s, n->lhs, TY_BOOL, out->kind);
      out->i = !out->i;
      return true;
    }
    break;
  case TL_N_BINARY: return binary(s, n, want, out);
  case TL_N_CAST: return cast(s, n, out);
  case TL_N_PATH: {
    sema_const *c = assoc_const(s, n);
    if (!c) break;
    *out = c->v;
    return true;
  }
  default: break;
  }
  return fail(s, n, "a constant's value is computed when the program is compiled: literals, other constants, "
                    "arithmetic, comparisons and `as`, not this");
}

/* a tensor constant's value: an array literal, rectangular, of constant numbers (or
 * bools); its rank the written one where that is given. true when it is */
static bool tensor_literal(sema *s, const tl_node *n, const tl_ty *t, int depth, int64_t *dims, int *rank) {
  if (n->kind != TL_N_ARRAY || n->name) {
    if (depth == 0) return fail(s, n, "a tensor constant's value is an array literal of numbers, like `[1.0, 2.0]`");
    cval v;
    tl_ty_kind want = t->dtype == TL_F64 ? TY_F64 : t->dtype == TL_I64 ? TY_I64 : t->dtype == TL_I32 ? TY_I32
                      : t->dtype == TL_BOOL ? TY_BOOL : TY_F32;
    if (*rank < 0) *rank = depth;
    if (depth != *rank) return fail(s, n, "the rows of a tensor constant have one shape: this element is not where its row's are");
    return eval(s, (tl_node *)n, want, &v) && ((is_int(v.kind) || is_float(v.kind) || v.kind == TY_BOOL) ||
                                              fail(s, n, "a tensor's element is a number or a bool"));
  }
  int64_t k = tl_ast_count(n->args);
  if (depth >= 8) return fail(s, n, "a tensor has at most 8 axes");
  if (dims[depth] < 0) dims[depth] = k;
  else if (dims[depth] != k) return fail(s, n, "the rows of a tensor constant have one shape: this row's length differs");
  for (const tl_node *a = n->args; a; a = a->next)
    if (!tensor_literal(s, a, t, depth + 1, dims, rank)) return false;
  if (depth == 0 && t->rank >= 0 && *rank != t->rank) {
    tl_sema_error(s, n, "this literal has %d ax%s, the written type %d", *rank, *rank == 1 ? "is" : "es", t->rank);
    return false;
  }
  return true;
}

/* a copy of tree n (a tensor constant's literal, for one use) */
static tl_node *clone(sema *s, const tl_node *n) {
  if (!n) return NULL;
  tl_node *c = tl_arena_alloc(s->arena, sizeof *c);
  if (!c) return NULL;
  *c = *n;
  c->next = clone(s, n->next);
  c->lhs = clone(s, n->lhs);
  c->rhs = clone(s, n->rhs);
  c->args = clone(s, n->args);
  return c;
}

/* c's value, computed on first use; false after an error (said once) */
static bool value_of(sema *s, sema_const *c, const tl_node *at) {
  if (c->state == 1) {
    tl_sema_error(s, at, "the value of constant `%s` depends on itself", c->it->name);
    c->state = 2;
    return false;
  }
  if (c->state == 2) return c->ty->kind != TY_ERROR;
  c->state = 1;
  tl_ast_item *it = c->it;
  tl_ty *t = tl_sema_resolve_type(s, it->type);
  if (t->kind == TY_TENSOR) { /* its literal is copied into each use (tl_sema_const_use) */
    int64_t dims[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    int rank = -1;
    bool ok = tensor_literal(s, it->value, t, 0, dims, &rank);
    c->state = 2;
    c->ty = ok ? t : TY_ERR;
    return ok;
  }
  bool scalar = tl_ty_is_numeric(t) || t->kind == TY_BOOL || t->kind == TY_CHAR || t->kind == TY_STR;
  if (t->kind != TY_ERROR && !scalar) {
    char b[64];
    tl_diag_error(s->diag, it->type->line, it->type->col, "a constant is a number, a bool, a char, a String or a tensor, not %s",
                  tl_ty_name(t, b, sizeof b));
  }
  cval v;
  bool ok = t->kind != TY_ERROR && scalar && eval(s, it->value, t->kind, &v);
  if (ok && v.kind != t->kind) ok = mismatch(s, it->value, t->kind, v.kind);
  c->state = 2;
  c->ty = ok ? t : TY_ERR;
  c->v = v;
  return ok;
}

void tl_sema_const_check(sema *s, tl_program *prog) {
  tl_diag *d = s->diag;
  for (sema_const *c = s->consts; c; c = c->next) {
    int u = c->it->unit; /* a module's constant: its errors are its file's */
    s->diag = u > 0 && u < prog->nunits ? prog->units[u].diag : d;
    if (c->it->is_mut) {
      tl_diag_error(s->diag, c->it->line, c->it->col, "`static mut` is not supported: TL has no mutable globals");
      tl_diag_hint(s->diag, "keep the value in a `let mut` in `main` and pass it to the functions that change it (`&mut x`)");
      c->state = 2;
    } else if (tl_sema_find_fn(s, c->it->name))
      tl_diag_error(s->diag, c->it->line, c->it->col, "the name `%s` is defined twice (a function has it)", c->it->name);
    value_of(s, c, c->it->value);
  }
  s->diag = d;
}

/* ---- uses ---- */
bool tl_sema_const_exists(sema *s, const char *name) { return find(s, name) != NULL; }


tl_ty *tl_sema_const_use(sema *s, tl_node *n) {
  sema_const *c = n->kind == TL_N_IDENT ? find(s, n->name) : assoc_const(s, n);
  if (!c && n->kind == TL_N_PATH && n->name && strlen(n->name) > 5 && n->name[3] == ':' &&
      (!strncmp(n->name, "f32", 3) || !strncmp(n->name, "f64", 3) || !strncmp(n->name, "i64", 3) || !strncmp(n->name, "i32", 3))) {
    tl_sema_error(s, n, "no constant `%s`", n->name);
    tl_suggest g;
    tl_suggest_init(&g, n->name);
    for (size_t k = 0; k < sizeof assoc / sizeof assoc[0]; k++) tl_suggest_add(&g, assoc[k].name);
    tl_suggest_hint(&g, s->diag, "");
    return TY_ERR;
  }
  if (!c) return NULL;
  if (!value_of(s, c, n)) return TY_ERR;
  if (c->ty->kind == TY_TENSOR) { /* a copy of its literal, checked as written here */
    n->kind = TL_N_ARRAY;
    n->name = NULL;
    n->args = clone(s, c->it->value->args);
    return tl_sema_expr(s, n, c->ty);
  }
  const cval *v = &c->v;
  n->ref = c;
  if (is_int(v->kind) || v->kind == TY_BOOL || v->kind == TY_CHAR) {
    n->kind = is_int(v->kind) ? TL_N_INT : v->kind == TY_BOOL ? TL_N_BOOL : TL_N_CHAR;
    n->ival = v->i;
  } else if (is_float(v->kind)) {
    n->kind = TL_N_FLOAT;
    n->fval = v->f;
  } else {
    n->kind = TL_N_STR;
    n->str = v->str;
    n->len = v->len;
  }
  return c->ty;
}

tl_ty *tl_sema_const_type(const tl_node *n) { return n->ref ? ((const sema_const *)n->ref)->ty : NULL; }

const char *tl_sema_const_name(const tl_node *n) {
  bool lit = n->kind == TL_N_INT || n->kind == TL_N_FLOAT || n->kind == TL_N_BOOL || n->kind == TL_N_CHAR || n->kind == TL_N_STR;
  return lit && n->ref ? ((const sema_const *)n->ref)->it->name : NULL;
}
