/* sema.c — the checker: resolves names, infers and checks types (LANGUAGE.md §3-4).
 * One walk per function body after every signature is known, so functions and
 * structs may be used before they are written. Each error is reported where it is
 * and the expression gets TY_ERROR, which every rule accepts silently: one mistake
 * gives one message. Builtins (tensor methods, Tensor::, print) are in sema_builtin.c. */
#include "lang/check/sema_impl.h"

#include "core/dtype.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- types ---- */

const char *tl_ty_name(const tl_ty *t, char *buf, size_t size) {
  /* an error type is never the subject of a message (tl_sema_mismatch says nothing about
   * one); where one is part of a type named anyway, it is shown as unknown, `_` */
  static const char *const names[] = {"_",   "()",  "bool", "i32", "i64", "u8",   "f32",  "f64",    "i8", "i16", "u16",
                                      "u32", "u64", "f16",  "bf16", "char", "String", "Tensor", "",     "Range", "fn"};
  if (tl_ty_is_tuple(t)) tl_sema_tuple_name(t, buf, size);
  else if (t->kind == TY_FN) tl_sema_fn_name(t, buf, size);
  else if (t->kind == TY_STRUCT) snprintf(buf, size, "%s", t->st->name);
  else if (t->kind == TY_TENSOR && t->dtype >= 0 && t->rank >= 0)
    snprintf(buf, size, "Tensor<%s, %d>", tl_dtype_name((tl_dtype)t->dtype), t->rank);
  else if (t->kind == TY_TENSOR && t->dtype >= 0) snprintf(buf, size, "Tensor<%s>", tl_dtype_name((tl_dtype)t->dtype));
  else snprintf(buf, size, "%s", names[t->kind]);
  return buf;
}

tl_ty *tl_sema_tensor(sema *s, int dtype, int rank) {
  tl_ty *t = tl_arena_alloc(s->arena, sizeof *t);
  if (!t) return TY_ERR;
  t->kind = TY_TENSOR;
  t->dtype = dtype;
  t->rank = rank;
  return t;
}

/* may a value of type `have` go where `want` is expected? */
bool tl_sema_ty_fits(const tl_ty *want, const tl_ty *have) {
  if (want == have) return true; /* a nested tuple of shared parts is not walked as a tree */
  if (want->kind == TY_ERROR || have->kind == TY_ERROR) return true;
  if (want->kind != have->kind) return false;
  if (want->kind == TY_STRUCT && tl_sema_vec_fits(want, have)) return true; /* Vec::new() */
  if (want->kind == TY_STRUCT) return want->st == have->st && (!want->st->is_tuple || tl_sema_tuple_fits(want, have));
  if (want->kind == TY_FN) return tl_sema_fn_fits(want, have);
  if (want->kind == TY_TENSOR)
    return (want->dtype < 0 || have->dtype < 0 || want->dtype == have->dtype) &&
           (want->rank < 0 || have->rank < 0 || want->rank == have->rank);
  return true;
}

/* the type of a value that may come from a or from b (an `if`'s branches, the values
 * of a variable): tensors keep the dtype and the rank they share, unknown (-1) where
 * they differ; other types must be the same. NULL when they do not join. */
tl_ty *tl_sema_join(sema *s, tl_ty *a, tl_ty *b) {
  if (a->kind == TY_ERROR) return b;
  if (b->kind == TY_ERROR) return a;
  if (tl_ty_is_tuple(a) && tl_ty_is_tuple(b)) return tl_sema_tuple_join(s, a, b);
  if (tl_sema_vec_fits(a, b)) return a; /* b a Vec<_> (Vec::new()): a says its elements */
  if (tl_sema_vec_fits(b, a)) return b;
  if (a->kind != TY_TENSOR || b->kind != TY_TENSOR) return tl_sema_ty_fits(a, b) ? a : NULL;
  int dt = a->dtype == b->dtype ? a->dtype : -1, rank = a->rank == b->rank ? a->rank : -1;
  if (dt == a->dtype && rank == a->rank) return a;
  return dt == b->dtype && rank == b->rank ? b : tl_sema_tensor(s, dt, rank);
}

/* v gets a value of type t. A variable whose type was inferred takes the join: when
 * that is wider than what the checker assumed so far, the uses already checked may be
 * wrong, so the function is checked again from its `let` (see check_fn_body). A
 * written type is a bound instead: t must fit it. false: t does not fit v. */
bool tl_sema_widen(sema *s, tl_var *v, tl_ty *t) {
  if (!v->let) return tl_sema_ty_fits(v->ty, t);
  if (v->ty->kind == TY_ERROR) return true;
  tl_ty *j = tl_sema_join(s, v->ty, t);
  if (!j) return false;
  bool vec = j->kind == TY_STRUCT && v->ty->kind == TY_STRUCT && j->st != v->ty->st && tl_sema_vec_fits(j, v->ty);
  if (j != v->ty && ((j->kind == TY_TENSOR && (j->dtype != v->ty->dtype || j->rank != v->ty->rank)) || tl_ty_is_tuple(j) || vec)) {
    v->ty = v->let->ty = j;
    s->widened = true;
  }
  return true;
}

void tl_sema_error(sema *s, const tl_node *n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_diag_verror(s->diag, n->line, n->col, fmt, ap);
  va_end(ap);
}

/* is t, or a part of it (a tuple's element, a payload, a parameter), the error type?
 * Then what is wrong with it was said where the error came from. */
bool tl_sema_ty_has_error(const tl_ty *t) {
  if (!t || t->kind == TY_ERROR) return t != NULL;
  if (t->kind == TY_FN) {
    for (int i = 0; i < t->fn_nparams; i++)
      if (tl_sema_ty_has_error(t->fn_params[i])) return true;
    return tl_sema_ty_has_error(t->fn_ret);
  }
  if (t->kind != TY_STRUCT || !t->st || !(t->st->is_tuple || t->st->generic)) return false; /* a named struct is itself */
  for (int i = 0; i < 2; i++)
    if (t->st->targs[i] && tl_sema_ty_has_error(t->st->targs[i])) return true; /* Vec<T>, HashMap<K, V> */
  for (int i = 0; i < t->st->nfields; i++)
    if (tl_sema_ty_has_error(t->elems ? t->elems[i] : t->st->fields[i].ty)) return true;
  return false;
}

void tl_sema_mismatch(sema *s, const tl_node *n, const char *what, const tl_ty *want, const tl_ty *have) {
  char a[160], b[160];
  if (tl_sema_ty_has_error(want) || tl_sema_ty_has_error(have)) return; /* said already */
  tl_sema_error(s, n, "%s: expected %s, found %s", what, tl_ty_name(want, a, sizeof a), tl_ty_name(have, b, sizeof b));
  if ((tl_ty_is_option(have) || tl_ty_is_result(have)) && want->kind != TY_STRUCT)
    tl_diag_hint(s->diag, "take the value out with `unwrap`, `match` or `if let`");
}

tl_struct_info *tl_sema_find_struct(sema *s, const char *name) {
  for (tl_struct_info *st = s->out->structs; st; st = st->next)
    if (!st->is_tuple && !strcmp(st->name, name)) return st;
  return NULL;
}
#define find_struct tl_sema_find_struct

static int dtype_named(const char *name) {
  for (int d = 0; d < TL_NDTYPES; d++) /* the engine's names are the language's */
    if (!strcmp(name, tl_dtype_name((tl_dtype)d))) return d;
  return -1;
}

tl_ty *tl_sema_scalar_named(const char *name) {
  static const struct {
    const char *name;
    tl_ty *ty;
  } scalars[] = {{"i64", TY_I64_T}, {"i32", TY_I32_T}, {"u8", TY_U8_T},     {"f32", TY_F32_T},   {"f64", TY_F64_T},
                 {"i8", TY_I8_T},   {"i16", TY_I16_T}, {"u16", TY_U16_T},   {"u32", TY_U32_T},   {"u64", TY_U64_T},
                 {"f16", TY_F16_T}, {"bf16", TY_BF16_T}, {"bool", TY_BOOL_T}, {"char", TY_CHAR_T}, {"String", TY_STR_T}};
  for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++)
    if (!strcmp(name, scalars[i].name)) return scalars[i].ty;
  return NULL;
}

tl_ty *tl_sema_resolve_type(sema *s, const tl_type *t) {
  if (t->is_tuple) return tl_sema_tuple_resolve(s, t);
  tl_ty *g = tl_sema_generic_resolve(s, t); /* T, Self, Pair<i64, f64>, `i64<f32>` (sema_generic.c) */
  if (g) return g;
  tl_ty *scalar = tl_sema_scalar_named(t->name);
  if (scalar) return scalar;
  if (!strcmp(t->name, "Tensor")) {
    int dt = -1;
    if (t->dtype && (dt = dtype_named(t->dtype)) < 0) {
      tl_diag_error(s->diag, t->line, t->col,
                    "unknown tensor dtype `%s` (bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32 or f64)", t->dtype);
      return TY_ERR;
    }
    if (t->rank > TL_MAX_DIMS) { /* a tensor has at most TL_MAX_DIMS axes: no value could have it */
      tl_diag_error(s->diag, t->line, t->col, "a tensor's rank is at most %d, not %lld", TL_MAX_DIMS, (long long)t->rank);
      return TY_ERR;
    }
    return tl_sema_tensor(s, dt, t->rank >= 0 ? (int)t->rank : -1);
  }
  if (!strcmp(t->name, "Option") || !strcmp(t->name, "Result")) return tl_sema_option_resolve(s, t);
  if (!strcmp(t->name, "fn")) return tl_sema_fn_resolve(s, t); /* sema_closure.c */
  if (!strcmp(t->name, "Vec") || !strcmp(t->name, "HashMap") || !strcmp(t->name, "VecDeque") || !strcmp(t->name, "HashSet") ||
      !strcmp(t->name, "BTreeMap"))
    return tl_sema_vec_resolve(s, t); /* sema_vec.c */
  tl_ty *dyn = tl_sema_dyn_resolve(s, t); /* dyn Shape, Box<T> (sema_dyn.c) */
  if (dyn) return dyn;
  tl_struct_info *st = find_struct(s, t->name);
  if (!st) {
    tl_diag_error(s->diag, t->line, t->col, "unknown type `%s`", t->name);
    tl_suggest g;
    tl_suggest_init(&g, t->name);
    tl_sema_suggest_types(s, &g);
    tl_suggest_hint(&g, s->diag, "");
    return TY_ERR;
  }
  return tl_sema_struct_ty(s, st);
}

/* checks that n is an i64 (an index, a bound, a dim): integer literals become i64 */
void tl_sema_expect_i64(sema *s, tl_node *n, const char *what) {
  tl_ty *t = tl_sema_expr(s, n, TY_I64_T);
  if (t->kind != TY_I64 && t->kind != TY_ERROR) tl_sema_mismatch(s, n, what, TY_I64_T, t);
}

/* ---- names ---- */

tl_var *tl_sema_declare(sema *s, const tl_node *at, const char *name, tl_ty *ty, tl_var_kind kind, bool is_mut) {
  tl_var *v = tl_arena_alloc(s->arena, sizeof *v);
  sym *e = tl_arena_alloc(s->arena, sizeof *e);
  if (!v || !e) return NULL;
  v->name = name;
  v->ty = ty;
  v->kind = kind;
  v->is_mut = is_mut;
  v->line = at ? at->line : 0;
  v->col = at ? at->col : 0;
  v->loop_depth = s->nloops;
  if (s->fn) {
    if (s->fn->nvars == s->cap_vars) {
      int cap = s->cap_vars ? s->cap_vars * 2 : 16;
      tl_var **nv = tl_arena_alloc(s->arena, sizeof *nv * (size_t)cap);
      if (!nv) return NULL;
      if (s->fn->nvars) memcpy(nv, s->fn->vars, sizeof *nv * (size_t)s->fn->nvars);
      s->fn->vars = nv;
      s->cap_vars = cap;
    }
    v->id = s->fn->nvars;
    s->fn->vars[s->fn->nvars++] = v;
  }
  e->name = name;
  e->var = v;
  e->next = s->syms;
  s->syms = e;
  return v;
}

tl_var *tl_sema_lookup(sema *s, const char *name) {
  for (sym *e = s->syms; e; e = e->next)
    if (!strcmp(e->name, name)) return e->var;
  return NULL;
}

static tl_fninfo *find_declared_fn(sema *s, const char *name) {
  for (tl_fninfo *f = s->out->fns; f; f = f->next)
    if (!strcmp(f->name, name)) return f;
  return NULL;
}

tl_fninfo *tl_sema_find_fn(sema *s, const char *name) {
  tl_fninfo *f = find_declared_fn(s, name);
  return f ? f : tl_sema_generic_find_fn(s, name); /* `Stack<i64>::push`, made on first use */
}

/* ---- expressions ---- */


static bool is_untyped_literal(const tl_node *n);
bool tl_sema_is_plain_literal(const tl_node *n) {
  const tl_node *m = n->kind == TL_N_UNARY && n->op == TL_TOK_MINUS ? n->lhs : n;
  return is_untyped_literal(n) && !m->name; /* `5u16`: the suffix is its type */
}

static bool is_untyped_literal(const tl_node *n) {
  if (n->kind == TL_N_UNARY && n->op == TL_TOK_MINUS) n = n->lhs;
  return (n->kind == TL_N_INT || n->kind == TL_N_FLOAT) && !tl_sema_const_type(n); /* a constant has its type */
}

static tl_ty *check_literal(sema *s, tl_node *n, tl_ty *expect) {
  tl_ty *named = tl_sema_const_type(n); /* a constant's use (sema_const.c) */
  if (named) return named;
  tl_ty *suffix = n->name && (n->kind == TL_N_INT || n->kind == TL_N_FLOAT) ? tl_sema_scalar_named(n->name) : NULL;
  if (suffix && !tl_ty_is_numeric(suffix)) suffix = NULL;
  tl_ty *num = suffix ? suffix : expect && tl_ty_is_numeric(expect) ? expect : NULL;
  bool u64_bits = suffix && suffix->kind == TY_U64; /* `18446744073709551615u64`: ival holds the bits */
  if (n->kind == TL_N_INT && n->len) { /* above i64::MAX (parse.c): a u64's, or too large */
    char b[16];
    if (num && num->kind == TY_U64) return num;
    tl_sema_error(s, n, "integer literal %s is too large for %s", n->str,
                  num && tl_ty_is_int(num) ? tl_ty_name(num, b, sizeof b) : "i64");
    return TY_ERR;
  }
  switch (n->kind) {
  case TL_N_INT:
    if (num && tl_ty_is_int(num) && num->kind != TY_I64 && !u64_bits) { /* Rust's error: out of its type's range */
      int64_t lo, hi;
      tl_ty_int_range(num->kind, &lo, &hi);
      if (n->ival < lo || n->ival > hi) {
        char b[16];
        if (num->kind == TY_I32) tl_sema_error(s, n, "literal %lld does not fit in i32", (long long)n->ival);
        else
          tl_sema_error(s, n, "literal %lld does not fit in %s (%lld..=%lld)", (long long)n->ival, tl_ty_name(num, b, sizeof b),
                        (long long)lo, (long long)hi);
        return TY_ERR;
      }
    }
    if (num) return num;
    if (expect && expect->kind == TY_TENSOR && (expect->dtype == TL_F32 || expect->dtype == TL_F64))
      return tl_ty_of_dtype(expect->dtype);
    return TY_I64_T;
  case TL_N_FLOAT:
    /* past the largest finite value and half its last place, it would round to inf */
    if (num && tl_ty_is_half(num) && fabs(n->fval) >= (num->kind == TY_F16 ? 65520.0 : 0x1.ffp127)) {
      tl_sema_error(s, n, "literal out of range for %s", num->kind == TY_F16 ? "f16" : "bf16");
      return TY_ERR;
    }
    return num && tl_ty_is_float(num) ? num : TY_F32_T;
  case TL_N_STR: return TY_STR_T;
  case TL_N_CHAR: return TY_CHAR_T;
  default: return TY_BOOL_T;
  }
}

static tl_ty *check_ident(sema *s, tl_node *n) {
  tl_var *v = tl_sema_lookup(s, n->name);
  tl_ty *named = v ? NULL : tl_sema_const_use(s, n); /* a constant (sema_const.c): n becomes its literal */
  if (named) return named;
  tl_fninfo *f = v ? NULL : tl_sema_find_fn(s, n->name);
  tl_ty *fv = f ? tl_sema_fn_value(s, n, f) : NULL; /* a named function as a value */
  if (fv) return fv;
  if (f) {
    tl_sema_error(s, n, "`%s` is a function: call it with `(...)`", n->name);
    return TY_ERR;
  }
  if (!v) {
    tl_sema_error(s, n, "cannot find `%s` in this scope", n->name);
    tl_suggest g;
    tl_suggest_init(&g, n->name);
    tl_sema_suggest_vars(s, &g);
    tl_sema_suggest_fns(s, &g);
    tl_suggest_hint(&g, s->diag, "");
    return TY_ERR;
  }
  if (s->closure) v = tl_sema_closure_capture(s, v, n); /* sema_closure.c */
  n->var = v;
  return v->ty;
}

/* A full element read or item() of a tensor whose dtype the checker cannot see: its
 * scalar type comes from the context (required, else suggested: the other operand's
 * type), else f64, which holds every dtype's value exactly (printed directly, it prints
 * as the tensor's dtype does: gen_print). */
bool tl_sema_is_flex_read(const tl_node *n) {
  const tl_ty *t = n->lhs && n->lhs->ty ? n->lhs->ty : NULL;
  if (!t || t->kind != TY_TENSOR || t->dtype >= 0 || !n->ty || n->ty->kind == TY_TENSOR) return false;
  return n->kind == TL_N_INDEX || (n->kind == TL_N_METHOD && n->ival == B_ITEM && !n->ref);
}

static tl_ty *flex_type(tl_ty *need, tl_ty *expect) {
  if (need) return need;
  return expect && (tl_ty_is_numeric(expect) || expect->kind == TY_BOOL) ? expect : TY_F64_T;
}

/* a flexible read (tl_sema_is_flex_read) that took the default meets a typed number: it
 * reads as that type instead (`t.item() < x` with x an f32) */
static void flex_meets(tl_node *n, tl_ty *other) {
  if (n->kind == TL_N_UNARY && n->op == TL_TOK_MINUS && tl_sema_is_flex_read(n->lhs) && n->ty == n->lhs->ty) {
    flex_meets(n->lhs, other);
    n->ty = n->lhs->ty;
    return;
  }
  if (tl_sema_is_flex_read(n) && tl_ty_is_numeric(other)) n->ty = other;
}

tl_ty *tl_sema_binary_tensor(sema *s, tl_node *n, tl_ty *l, tl_ty *r) {
  int rank = -1;
  if (l->kind == TY_TENSOR && r->kind == TY_TENSOR) {
    if (l->rank >= 0 && r->rank >= 0) rank = l->rank > r->rank ? l->rank : r->rank;
  } else {
    tl_ty *t = l->kind == TY_TENSOR ? l : r, *o = l->kind == TY_TENSOR ? r : l;
    if (!tl_ty_is_numeric(o) && o->kind != TY_BOOL && o->kind != TY_ERROR) {
      char b[64];
      tl_sema_error(s, n, "a tensor combines with a tensor or a number, not %s", tl_ty_name(o, b, sizeof b));
      return TY_ERR;
    }
    rank = t->rank;
  }
  int dt = tl_ty_binary_dtype(n->lhs, l, n->rhs, r);
  bool cmp = n->op == TL_TOK_LT || n->op == TL_TOK_GT || n->op == TL_TOK_LE || n->op == TL_TOK_GE ||
             n->op == TL_TOK_EQ || n->op == TL_TOK_NE;
  return tl_sema_tensor(s, cmp ? TL_BOOL : dt, rank);
}

/* n against expect: a requirement when need, else only a hint (tl_sema_expr_hint) */
static tl_ty *expr_as(sema *s, tl_node *n, tl_ty *expect, bool need) {
  return need ? tl_sema_expr(s, n, expect) : tl_sema_expr_hint(s, n, expect);
}

/* the type n's operands are checked against, and whether it is required of them
 * (*need) or only a hint */
static tl_ty *operand_expect(const tl_node *n, tl_ty *expect, bool hint_only, bool *need) {
  tl_tok_kind op = n->op;
  if (op == TL_TOK_ANDAND || op == TL_TOK_OROR) {
    *need = true;
    return TY_BOOL_T;
  }
  bool cmp = op == TL_TOK_LT || op == TL_TOK_GT || op == TL_TOK_LE || op == TL_TOK_GE || op == TL_TOK_EQ ||
             op == TL_TOK_NE;
  tl_ty *hint = cmp ? NULL : expect;
  if (hint && hint->kind == TY_TENSOR) hint = tl_ty_of_dtype(hint->dtype);
  /* a scalar result is required: a tensor operand would make it a tensor, so both
   * operands are required scalars; otherwise each side's type only hints the other's */
  *need = !hint_only && hint && hint == expect;
  return hint;
}

/* n, its left operand's type `l_done` when a chain has checked it already (NULL:
 * checked here) */
/* `a + b` on a struct of the program with the operator's method (`impl Add for V`, or any
 * `fn add(self, o: V)`): n becomes the call `a.add(b)`; `a != b` is `!a.eq(b)`. NULL
 * when the type has no such method */
static tl_ty *operator_call(sema *s, tl_node *n, const tl_ty *l) {
  static const struct {
    tl_tok_kind op;
    const char *name;
  } ops[] = {{TL_TOK_PLUS, "add"}, {TL_TOK_MINUS, "sub"}, {TL_TOK_STAR, "mul"}, {TL_TOK_SLASH, "div"},
             {TL_TOK_PERCENT, "rem"}, {TL_TOK_EQ, "eq"}, {TL_TOK_NE, "eq"}};
  if (l->kind != TY_STRUCT || l->st->generic || l->st->is_tuple) return NULL;
  const char *name = NULL;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (ops[i].op == n->op) name = ops[i].name;
  char full[300];
  if (!name || snprintf(full, sizeof full, "%s::%s", l->st->name, name) >= (int)sizeof full) return NULL;
  tl_fninfo *f = tl_sema_find_fn(s, full);
  if (!f || !f->self) return NULL;
  tl_node *call = n;
  if (n->op == TL_TOK_NE) { /* n becomes `!call` */
    call = tl_arena_alloc(s->arena, sizeof *call);
    if (!call) return TY_ERR;
    *call = *n;
    call->next = NULL;
    *n = (tl_node){.kind = TL_N_UNARY, .op = TL_TOK_NOT, .line = n->line, .col = n->col, .lhs = call, .next = n->next};
  }
  tl_node *rhs = call->rhs;
  rhs->next = NULL;
  call->kind = TL_N_METHOD;
  call->name = name;
  call->args = rhs;
  call->rhs = NULL;
  tl_ty *t = tl_sema_method(s, call);
  call->ty = t;
  if (call == n) return t;
  if (t->kind != TY_BOOL) return t->kind == TY_ERROR ? t : (tl_sema_error(s, call, "`eq` must return bool for `!=`"), TY_ERR);
  return TY_BOOL_T;
}

tl_ty *tl_sema_binary_at(sema *s, tl_node *n, tl_ty *expect, bool hint_only, tl_ty *l_done) {
  tl_tok_kind op = n->op;
  bool need;
  tl_ty *hint = operand_expect(n, expect, hint_only, &need);
  if (op == TL_TOK_ANDAND || op == TL_TOK_OROR) {
    tl_ty *l = l_done ? l_done : tl_sema_expr(s, n->lhs, TY_BOOL_T), *r = tl_sema_expr(s, n->rhs, TY_BOOL_T);
    if (!tl_sema_ty_fits(TY_BOOL_T, l)) tl_sema_mismatch(s, n->lhs, "operand of a logical operator", TY_BOOL_T, l);
    if (!tl_sema_ty_fits(TY_BOOL_T, r)) tl_sema_mismatch(s, n->rhs, "operand of a logical operator", TY_BOOL_T, r);
    return TY_BOOL_T;
  }
  bool cmp = op == TL_TOK_LT || op == TL_TOK_GT || op == TL_TOK_LE || op == TL_TOK_GE || op == TL_TOK_EQ ||
             op == TL_TOK_NE;
  tl_ty *l, *r;
  if (!l_done && is_untyped_literal(n->lhs) && !is_untyped_literal(n->rhs)) {
    r = expr_as(s, n->rhs, hint, need);
    l = expr_as(s, n->lhs, r->kind == TY_TENSOR ? tl_ty_of_dtype(r->dtype) : r, need);
  } else {
    l = l_done ? l_done : expr_as(s, n->lhs, hint, need);
    r = expr_as(s, n->rhs, l->kind == TY_TENSOR ? tl_ty_of_dtype(l->dtype) : l, need);
  }
  if (l->kind == TY_ERROR || r->kind == TY_ERROR) return TY_ERR;
  tl_ty *over = operator_call(s, n, l);
  if (over) return over;
  /* a flexible read beside a tensor took that tensor's element type as a hint: a float
   * read beside an integer tensor would be truncated, so it reads as f64 (exactly) */
  if (l->kind == TY_TENSOR && tl_sema_is_flex_read(n->rhs)) r = n->rhs->ty = TY_F64_T;
  if (r->kind == TY_TENSOR && tl_sema_is_flex_read(n->lhs)) l = n->lhs->ty = TY_F64_T;
  if (l != r && op != TL_TOK_ANDAND && op != TL_TOK_OROR) { /* `t.item() < x`, `x * t[0]` */
    flex_meets(n->lhs, r);
    flex_meets(n->rhs, l);
    l = n->lhs->ty, r = n->rhs->ty;
  }
  char a[64], b[64];
  if (op == TL_TOK_AMP || op == TL_TOK_PIPE || op == TL_TOK_CARET || op == TL_TOK_SHL || op == TL_TOK_SHR) {
    /* bit operators: integers (a shift's amount any integer), or bools for & | ^ */
    bool shift = op == TL_TOK_SHL || op == TL_TOK_SHR;
    if (tl_ty_is_int(l) && (shift ? tl_ty_is_int(r) : l->kind == r->kind) && !s->compr_depth) return l;
    if (!shift && l->kind == TY_BOOL && r->kind == TY_BOOL && !s->compr_depth) return l;
    if (s->compr_depth) tl_sema_error(s, n, "a comprehension body computes numbers: bit operators are not there yet");
    else
      tl_sema_error(s, n, "operator `%s` works on integers%s, not %s and %s", tl_tok_name(op), shift ? "" : " (or bools)",
                    tl_ty_name(l, a, sizeof a), tl_ty_name(r, b, sizeof b));
    return TY_ERR;
  }
  if (l->kind == TY_TENSOR || r->kind == TY_TENSOR) return tl_sema_binary_tensor(s, n, l, r);
  if (l->kind == TY_STR && r->kind == TY_STR) {
    if (op == TL_TOK_PLUS) return TY_STR_T;
    if (cmp) return TY_BOOL_T;
  }
  if (cmp && tl_ty_is_tuple(l) && tl_ty_is_tuple(r)) return tl_sema_tuple_compare(s, n, l, r);
  if ((op == TL_TOK_EQ || op == TL_TOK_NE) && l->kind == TY_STRUCT && r->kind == TY_STRUCT && l->st == r->st &&
      l->st->is_enum && l->st->nfields == 0) /* a field-less enum (Ordering): its tags compare */
    return TY_BOOL_T;
  if (cmp && tl_ty_is_vec(l)) {
    tl_ty *v = tl_sema_vec_compare(s, n, l, r);
    if (v) return v;
  }
  if (cmp && l->kind == r->kind && l->kind != TY_STRUCT && l->kind != TY_UNIT && l->kind != TY_RANGE && l->kind != TY_FN)
    return TY_BOOL_T; /* bools too, `false < true` as in Rust (and as cmp and sort order them) */
  if (!cmp && tl_ty_is_numeric(l) && l->kind == r->kind) return l;
  if (tl_ty_is_numeric(l) && tl_ty_is_numeric(r)) {
    tl_sema_error(s, n, "mismatched types: %s %s %s", tl_ty_name(l, a, sizeof a), tl_tok_name(op),
               tl_ty_name(r, b, sizeof b));
    tl_diag_hint(s->diag, "numeric conversion is explicit: write `x as %s`", tl_ty_name(l, a, sizeof a));
  } else {
    tl_sema_error(s, n, "operator `%s` cannot be applied to %s and %s", tl_tok_name(op), tl_ty_name(l, a, sizeof a),
               tl_ty_name(r, b, sizeof b));
    if (cmp && l->kind == TY_STRUCT && l->st->is_enum && l->st == r->st) /* variants with fields */
      tl_diag_hint(s->diag, "only enums without fields compare with `==`; test the variant with `match` or `if let`");
  }
  return TY_ERR;
}

/* A left-leaning chain `a + b + c ...` is checked in a loop, not by recursion (100,000
 * terms are a 400 KB file, and a tree that deep): what each operand is checked against
 * goes down the left spine, the types come back up. */
static tl_ty *check_binary(sema *s, tl_node *n, tl_ty *expect, bool hint_only) {
  if (n->lhs->kind != TL_N_BINARY) return tl_sema_binary_at(s, n, expect, hint_only, NULL);
  size_t k = 0;
  for (tl_node *m = n; m->kind == TL_N_BINARY; m = m->lhs) k++;
  struct spine {
    tl_node *n;
    tl_ty *expect;
    bool hint_only;
  } *sp = malloc(sizeof *sp * k);
  if (!sp) {
    s->diag->oom = true;
    tl_sema_error(s, n, "out of memory checking a long expression");
    return TY_ERR;
  }
  tl_node *m = n;
  for (size_t i = 0; i < k; i++, m = m->lhs) {
    sp[i] = (struct spine){m, expect, hint_only};
    bool need;
    expect = operand_expect(m, expect, hint_only, &need); /* what m's left operand gets */
    hint_only = !need;
  }
  tl_ty *t = NULL;
  for (size_t i = k; i-- > 0;) {
    t = tl_sema_binary_at(s, sp[i].n, sp[i].expect, sp[i].hint_only, t);
    sp[i].n->ty = t; /* what tl_sema_expr would have set */
  }
  free(sp);
  return t;
}


static tl_ty *check_unary(sema *s, tl_node *n, tl_ty *expect, bool hint_only) {
  if (n->op == TL_TOK_AMP) {
    tl_sema_error(s, n, "`&mut` is only allowed as a call argument");
    return TY_ERR;
  }
  tl_ty *lit = n->lhs->kind == TL_N_INT && n->lhs->name ? tl_sema_scalar_named(n->lhs->name) : expect;
  if (n->op == TL_TOK_MINUS && n->lhs->kind == TL_N_INT && !n->lhs->ref && n->lhs->ival > 0 &&
      !(lit && tl_ty_is_unsigned(lit))) {
    tl_node *next = n->next; /* `-128i8`, `-2147483648` as Rust: one negative literal, in range */
    int line = n->line, col = n->col;
    *n = *n->lhs;
    n->next = next, n->line = line, n->col = col;
    n->ival = -n->ival;
    return check_literal(s, n, expect);
  }
  bool need = !hint_only && expect && expect->kind != TY_TENSOR; /* -x, !x: a scalar only from a scalar */
  bool int_not = n->op == TL_TOK_NOT && expect && tl_ty_is_int(expect); /* `let m: i64 = !x` */
  tl_ty *t = expr_as(s, n->lhs, n->op == TL_TOK_NOT && !int_not ? TY_BOOL_T : expect, need);
  if (t->kind == TY_ERROR) return t;
  if (n->op == TL_TOK_NOT && tl_ty_is_int(t) && !s->compr_depth) return t; /* bitwise not, Rust's `!` on integers */
  if (t->kind == TY_STRUCT && !t->st->generic && !t->st->is_tuple) { /* `-v` with `impl Neg for V`: `v.neg()` */
    char full[300];
    snprintf(full, sizeof full, "%s::%s", t->st->name, n->op == TL_TOK_MINUS ? "neg" : "not");
    tl_fninfo *f = tl_sema_find_fn(s, full);
    if (f && f->self) {
      n->kind = TL_N_METHOD;
      n->name = n->op == TL_TOK_MINUS ? "neg" : "not";
      n->args = NULL;
      return tl_sema_method(s, n);
    }
  }
  if (n->op == TL_TOK_MINUS && !tl_ty_is_unsigned(t) && (tl_ty_is_numeric(t) || t->kind == TY_TENSOR))
    return t; /* an unsigned type: Rust's error */
  if (n->op == TL_TOK_NOT && (t->kind == TY_BOOL || (t->kind == TY_TENSOR && (t->dtype == TL_BOOL || t->dtype < 0))))
    return t->kind == TY_TENSOR ? tl_sema_tensor(s, TL_BOOL, t->rank) : t;
  char b[64];
  tl_sema_error(s, n, "operator `%s` cannot be applied to %s", tl_tok_name(n->op), tl_ty_name(t, b, sizeof b));
  return TY_ERR;
}

static tl_ty *check_cast(sema *s, tl_node *n, tl_ty *need) {
  tl_ty *to = tl_sema_resolve_type(s, n->type);
  if (tl_sema_dyn_is(to)) return tl_sema_dyn_cast(s, n, to); /* x as dyn Shape (sema_dyn.c) */
  /* `2147483648 as i32` wraps, as in Rust; a float scalar required of the cast is
   * required of its operand (an element of unknown dtype is then read as `to`) */
  bool hint = tl_ty_is_float(to) && !tl_ty_is_half(to); /* `70000.0 as f16` is inf, not a literal out of range */
  tl_ty *from = expr_as(s, n->lhs, hint ? to : NULL, need && hint);
  if (to->kind == TY_ERROR || from->kind == TY_ERROR) return TY_ERR;
  if (from->kind == TY_TENSOR && (tl_ty_is_numeric(to) || to->kind == TY_BOOL) && tl_ty_dtype(to) >= 0)
    return tl_sema_tensor(s, tl_ty_dtype(to), from->rank);
  bool ok = (tl_ty_is_numeric(to) && (tl_ty_is_numeric(from) || from->kind == TY_BOOL || from->kind == TY_CHAR)) ||
            (to->kind == TY_CHAR && tl_ty_is_int(from)) || (to->kind == from->kind && to->kind == TY_BOOL);
  if (!ok) {
    char a[64], b[64];
    tl_sema_error(s, n, "cannot cast %s as %s", tl_ty_name(from, a, sizeof a), tl_ty_name(to, b, sizeof b));
    return TY_ERR;
  }
  return to;
}

static tl_ty *check_range(sema *s, tl_node *n) {
  if (n->lhs) tl_sema_expect_i64(s, n->lhs, "range bound");
  if (n->rhs) tl_sema_expect_i64(s, n->rhs, "range bound");
  return TY_RANGE_T;
}

/* need: the scalar type the context requires, or NULL; expect: the type it suggests.
 * An element read: the tensor's element type; with the dtype unknown, flex_type. */
static tl_ty *check_index(sema *s, tl_node *n, tl_ty *need, tl_ty *expect) {
  tl_ty *t = tl_sema_expr(s, n->lhs, NULL);
  if (tl_ty_is_vec(t) || tl_ty_is_map(t)) return tl_sema_vec_index(s, n, t); /* sema_vec.c */
  if (t->kind == TY_STRUCT && !t->st->generic && !t->st->is_tuple && n->args && !n->args->next) {
    char full[300]; /* `m[i]` with `impl Index for M` (or any `fn index(&self, i)`): `m.index(i)` */
    snprintf(full, sizeof full, "%s::index", t->st->name);
    tl_fninfo *f = tl_sema_find_fn(s, full);
    if (f && f->self) {
      n->kind = TL_N_METHOD;
      n->name = "index";
      return tl_sema_method(s, n);
    }
  }
  int nint = 0, nargs = 0;
  for (tl_node *a = n->args; a; a = a->next, nargs++) {
    if (a->kind == TL_N_RANGE) {
      if (a->lhs) tl_sema_expect_i64(s, a->lhs, "slice bound");
      if (a->rhs) tl_sema_expect_i64(s, a->rhs, "slice bound");
      a->ty = TY_RANGE_T;
      continue;
    }
    tl_sema_expect_i64(s, a, "index");
    nint++;
  }
  if (t->kind == TY_ERROR) return t;
  if (t->kind != TY_TENSOR) {
    char b[64];
    tl_sema_error(s, n, "cannot index a value of type %s", tl_ty_name(t, b, sizeof b));
    return TY_ERR;
  }
  if (t->rank == 0 && nargs == 1 && n->args->kind == TL_N_INT && n->args->ival == 0) {
    /* the seed language's reductions to one number are 1-element tensors, so its
     * programs read `v.argmax(0)[0]`: the same number as `.item()`, accepted so */
    tl_diag_warning(s->diag, n->line, n->col,
                    "`[0]` of a 0-d tensor reads its one number (accepted, as the seed language does): "
                    "`.item()` says so");
    n->kind = TL_N_METHOD;
    n->name = "item";
    n->args = NULL;
    return tl_sema_method(s, n);
  }
  if (t->rank >= 0 && nargs > t->rank) {
    tl_sema_error(s, n, "too many indices: the tensor has %d ax%s, indexed with %d", t->rank, t->rank == 1 ? "is" : "es",
               nargs);
    if (t->rank == 0) /* e.g. `v.argmax(0)[0]`: torch's argmax(dim) of a 1-D tensor is 0-d too */
      tl_diag_hint(s->diag, "a 0-d tensor (a reduction such as `argmax(0)` of a 1-D tensor) holds one number: "
                            "read it with `.item()` or `as i64`, not `[0]`");
    return TY_ERR;
  }
  tl_ty *elem = t->dtype < 0 ? flex_type(need, expect) : tl_ty_of_dtype(t->dtype);
  if (t->rank >= 0 && nint == t->rank) return elem; /* every axis: a scalar */
  if (s->compr_depth && nint == nargs) return tl_ty_of_dtype(t->dtype); /* a body reads elements */
  /* the rank unknown where a scalar is required: read one, the rank checked at run
   * time (tlrt_get); elsewhere it stays a tensor, of whatever rank is left */
  if (nint == nargs && need) return elem;
  return tl_sema_tensor(s, t->dtype, t->rank >= 0 ? t->rank - nint : -1);
}

static tl_ty *number_leaf(sema *s, tl_node *n, int *dtype, int *rank, int depth);

/* `[1, 2]`: i64 when every leaf is an integer, else f32; nested arrays add axes;
 * tensor elements are stacked */
/* the arrays nested in n get their tensor types: an array with a tensor element is
 * stacked from its elements, each generated on its own, nested literals included */
static void type_nested_arrays(sema *s, tl_node *n, int dtype, int rank) {
  for (tl_node *e = n->args; e; e = e->next)
    if (e->kind == TL_N_ARRAY) {
      e->ty = tl_sema_tensor(s, dtype, rank - 1);
      type_nested_arrays(s, e, dtype, rank - 1);
    }
}

static tl_ty *check_array(sema *s, tl_node *n, tl_ty *expect) {
  int dtype = -2, rank = -1;
  if (expect && expect->kind == TY_TENSOR && (expect->dtype == TL_F32 || expect->dtype == TL_F64))
    dtype = expect->dtype;
  tl_ty *t = number_leaf(s, n, &dtype, &rank, 0);
  if (t->kind == TY_ERROR) return t;
  type_nested_arrays(s, n, dtype < 0 ? TL_F32 : dtype, rank);
  return tl_sema_tensor(s, dtype < 0 ? TL_F32 : dtype, rank);
}

static tl_ty *number_leaf(sema *s, tl_node *n, int *dtype, int *rank, int depth) {
  if (n->kind != TL_N_ARRAY) {
    tl_ty *want = *dtype == TL_F32 || *dtype == TL_F64 ? tl_ty_of_dtype(*dtype) : NULL;
    tl_ty *t = tl_sema_expr_hint(s, n, want); /* a tensor element is stacked: no scalar required */
    if (t->kind == TY_ERROR) return t;
    int leaf_rank = depth, dt;
    if (t->kind == TY_TENSOR) {
      if (t->rank < 0) {
        tl_sema_error(s, n, "an array of tensors needs tensors of known rank");
        return TY_ERR;
      }
      leaf_rank = depth + t->rank;
      dt = t->dtype;
    } else if (tl_ty_is_numeric(t) || t->kind == TY_BOOL) {
      dt = tl_ty_dtype(t);
    } else {
      char b[64];
      tl_sema_error(s, n, "an array literal holds numbers or tensors, not %s", tl_ty_name(t, b, sizeof b));
      return TY_ERR;
    }
    if (*rank >= 0 && *rank != leaf_rank) {
      tl_sema_error(s, n, "array elements have different ranks");
      return TY_ERR;
    }
    *rank = leaf_rank;
    if (*dtype == -2 || (*dtype == TL_I64 && (dt == TL_F32 || dt == TL_F64))) *dtype = dt;
    else if (*dtype != dt && !(dt == TL_I64 && n->kind == TL_N_INT) &&
             !(n->kind == TL_N_UNARY && n->lhs->kind == TL_N_INT)) {
      tl_sema_error(s, n, "array elements have different types: %s and %s", tl_dtype_name((tl_dtype)*dtype),
                 tl_dtype_name((tl_dtype)dt));
      return TY_ERR;
    }
    return t;
  }
  n->ty = NULL;
  if (!n->args) {
    if (*rank >= 0 && *rank != depth + 1) tl_sema_error(s, n, "array elements have different ranks");
    *rank = depth + 1;
    return TY_UNIT_T;
  }
  for (tl_node *e = n->args; e; e = e->next) {
    tl_ty *t = number_leaf(s, e, dtype, rank, depth + 1);
    if (t->kind == TY_ERROR) return t;
  }
  return TY_UNIT_T;
}

static void suggest_field(sema *s, const tl_struct_info *st, const char *name) {
  tl_suggest g;
  tl_suggest_init(&g, name);
  tl_sema_suggest_fields(st, &g);
  tl_suggest_hint(&g, s->diag, "");
}

static tl_ty *check_struct_lit(sema *s, tl_node *n) {
  tl_struct_info *st = find_struct(s, n->name);
  if (!st || st->is_enum) {
    if (st) tl_sema_error(s, n, "`%s` is an enum: name a variant, `%s::V { .. }`", n->name, n->name);
    else {
      tl_sema_error(s, n, "unknown struct `%s`", n->name);
      tl_suggest g;
      tl_suggest_init(&g, n->name);
      tl_sema_suggest_structs(s, &g, false);
      tl_suggest_hint(&g, s->diag, "");
    }
    for (tl_node *f = n->args; f; f = f->next) tl_sema_expr(s, f->lhs, NULL);
    return TY_ERR;
  }
  bool seen[64] = {0};
  for (tl_node *f = n->args; f; f = f->next) {
    int i = 0;
    while (i < st->nfields && strcmp(st->fields[i].name, f->name)) i++;
    if (i == st->nfields) {
      if (!st->partial) {
        tl_sema_error(s, f, "struct `%s` has no field `%s`", st->name, f->name);
        suggest_field(s, st, f->name);
      }
      tl_sema_expr(s, f->lhs, NULL);
      continue;
    }
    if (i < 64 && seen[i]) tl_sema_error(s, f, "field `%s` is given twice", f->name);
    if (i < 64) seen[i] = true;
    f->ival = i;
    tl_ty *t = tl_sema_expr(s, f->lhs, st->fields[i].ty);
    if (!tl_sema_ty_fits(st->fields[i].ty, t)) tl_sema_mismatch(s, f->lhs, "field value", st->fields[i].ty, t);
    f->ty = st->fields[i].ty;
  }
  for (int i = 0; i < st->nfields && i < 64; i++)
    if (!seen[i] && !st->partial) tl_sema_error(s, n, "missing field `%s` in `%s { .. }`", st->fields[i].name, st->name);
  return tl_sema_struct_ty(s, st);
}

static tl_ty *check_field(sema *s, tl_node *n) {
  n->ref = NULL; /* a struct's field, once found (a tuple's has none) */
  tl_ty *t = tl_sema_expr(s, n->lhs, NULL);
  if (t->kind == TY_ERROR) return t;
  if (n->name[0] >= '0' && n->name[0] <= '9') return tl_sema_tuple_field(s, n, t);
  if (t->kind == TY_STRUCT && t->st->is_enum) {
    tl_sema_error(s, n, "enum `%s` has no field `%s`", t->st->name, n->name);
    tl_diag_hint(s->diag, "take a variant's fields with `match` or `if let`");
    return TY_ERR;
  }
  if (t->kind == TY_STRUCT)
    for (int i = 0; i < t->st->nfields; i++)
      if (!strcmp(t->st->fields[i].name, n->name)) {
        n->ival = i;
        n->ref = &t->st->fields[i];
        return t->st->fields[i].ty;
      }
  if (t->kind == TY_STRUCT && t->st->partial) return TY_ERR; /* it may be a field that did not parse */
  char b[64];
  tl_sema_error(s, n, "%s has no field `%s`", tl_ty_name(t, b, sizeof b), n->name);
  if (t->kind == TY_STRUCT) suggest_field(s, t->st, n->name);
  return TY_ERR;
}

static tl_ty *branches_join(sema *s, tl_node *n, tl_ty *a, tl_ty *b) {
  tl_ty *j = tl_sema_join(s, a, b); /* the value comes from either branch */
  if (!j) {
    char x[64], y[64];
    tl_sema_error(s, n->els, "`if` and `else` have different types: %s and %s", tl_ty_name(a, x, sizeof x),
               tl_ty_name(b, y, sizeof y));
    return TY_ERR;
  }
  return j;
}

/* `if t > 0.5 { .. }` on a bool tensor of one element reads that element, as PyTorch's
 * `if` does (bool(t)): the condition becomes `t.item()` (a run-time error unless the
 * tensor has exactly one element) */
bool tl_sema_tensor_cond(sema *s, tl_node *cond, const tl_ty *c) {
  if (c->kind != TY_TENSOR || c->dtype != TL_BOOL || c->rank > 0) return false;
  tl_node *inner = tl_arena_alloc(s->arena, sizeof *inner);
  if (!inner) return false;
  *inner = *cond;
  inner->next = NULL;
  *cond = (tl_node){.kind = TL_N_METHOD, .line = inner->line, .col = inner->col, .name = "item", .lhs = inner,
                    .next = cond->next, .ival = B_ITEM, .ty = TY_BOOL_T};
  return true;
}

static tl_ty *check_if(sema *s, tl_node *n, tl_ty *expect, bool hint_only) {
  tl_ty *c = tl_sema_expr(s, n->cond, TY_BOOL_T);
  if (!tl_sema_ty_fits(TY_BOOL_T, c) && !tl_sema_tensor_cond(s, n->cond, c)) {
    tl_sema_mismatch(s, n->cond, "`if` condition", TY_BOOL_T, c);
    if (c->kind == TY_TENSOR) tl_diag_hint(s->diag, "read a one-element tensor with `.item()`");
  }
  if (!expect && n->els && tl_sema_option_needs_context(n->then)) { /* `if c { None } else { Some(1) }` */
    tl_ty *b = expr_as(s, n->els, NULL, false);
    tl_ty *a = expr_as(s, n->then, b->kind == TY_UNIT ? NULL : b, true);
    return branches_join(s, n, a, b);
  }
  tl_ty *a = expr_as(s, n->then, expect, !hint_only);
  if (!n->els) return TY_UNIT_T;
  /* a scalar `then` requires the same scalar of `else` (only tensors join) */
  bool scalar = a->kind != TY_UNIT && a->kind != TY_TENSOR && a->kind != TY_ERROR;
  tl_ty *b = expr_as(s, n->els, a->kind == TY_UNIT ? expect : a, scalar || !hint_only);
  return branches_join(s, n, a, b);
}

static bool ends_in_return(const tl_node *body);

tl_ty *tl_sema_block(sema *s, tl_node *n, tl_ty *expect) {
  bool hint = s->hint; /* for the value, not the statements */
  s->hint = false;
  sym *mark = s->syms;
  bool unparsed = false; /* a statement that did not parse: maybe the value */
  for (tl_node *st = n->stmts; st; st = st->next) {
    tl_sema_stmt(s, st);
    unparsed |= st->kind == TL_N_ERROR;
  }
  /* a block that always returns has no value of its own: it fits any type (TY_ERROR
   * is accepted everywhere silently, which is what a diverging block needs); so does
   * one whose value may be the statement that did not parse */
  tl_ty *t = n->value ? expr_as(s, n->value, expect, !hint) : ends_in_return(n) || unparsed ? TY_ERR : TY_UNIT_T;
  s->syms = mark;
  return t;
}

tl_ty *tl_sema_expr_hint(sema *s, tl_node *n, tl_ty *hint) {
  s->hint = true;
  return tl_sema_expr(s, n, hint);
}

tl_ty *tl_sema_expr(sema *s, tl_node *n, tl_ty *expect) {
  bool hint = s->hint; /* this call's own: the calls for n's parts say theirs */
  s->hint = false;
  tl_ty *need = !hint && expect && (tl_ty_is_numeric(expect) || expect->kind == TY_BOOL) ? expect : NULL;
  tl_ty *t;
  int k; /* Param::checkpoint's answer */
  if (n->kind == TL_N_PATH || n->kind == TL_N_CALL) tl_sema_option_spelling(s, n); /* Option::Some(1) */
  switch (n->kind) {
  case TL_N_INT: case TL_N_FLOAT: case TL_N_STR: case TL_N_CHAR: case TL_N_BOOL: t = check_literal(s, n, expect); break;
  case TL_N_IDENT:
    if ((t = tl_sema_option_value(s, n, expect, hint))) break; /* None (sema_option.c) */
    t = check_ident(s, n);
    break;
  case TL_N_SELF:
    n->name = "self";
    t = check_ident(s, n);
    break;
  case TL_N_PATH: case TL_N_VARIANT:
    if (!tl_sema_generic_rename(s, n, expect)) { /* MyOption::Nothing (sema_generic.c) */
      t = TY_ERR;
      break;
    }
    if ((t = tl_sema_option_value(s, n, expect, hint))) break; /* Some(1) made in an earlier pass */
    if ((t = tl_sema_enum_value(s, n))) break; /* E::A, and a variant made in an earlier pass */
    if ((t = tl_sema_sys_path_value(s, n))) break; /* Device::Auto (sema_sys.c) */
    if ((t = tl_sema_const_use(s, n))) break;      /* f32::INFINITY (sema_const.c) */
    tl_sema_error(s, n, "`%s` is a function: call it with `(...)`", n->name);
    t = TY_ERR;
    break;
  case TL_N_UNARY: t = check_unary(s, n, expect, hint); break;
  case TL_N_BINARY: t = check_binary(s, n, expect, hint); break;
  case TL_N_CAST: t = check_cast(s, n, need); break;
  case TL_N_RANGE: t = check_range(s, n); break;
  case TL_N_CALL:
    if ((k = tl_sema_seed_checkpoint(s, n)) < 0) { /* Param::checkpoint(f, x) is f(x) (sema_seed.c) */
      t = TY_ERR;
      break;
    }
    if (k > 0 || tl_sema_dyn_box_new(s, n)) { /* Box::new(x) is x (sema_dyn.c) */
      s->hint = hint;
      return tl_sema_expr(s, n, expect);
    }
    if (!tl_sema_generic_rename(s, n, expect)) { /* MyOption::Just(1) (sema_generic.c) */
      t = TY_ERR;
      break;
    }
    if ((t = tl_sema_const_call(s, n))) break;                                 /* F32::nan() (sema_const.c) */
    if (n->lhs->kind == TL_N_PATH && (t = tl_sema_enum_value(s, n))) break; /* E::B(1, 2.0) */
    if (n->lhs->kind == TL_N_IDENT && (t = tl_sema_option_value(s, n, expect, hint))) break; /* Some(1), Ok(x) */
    if (n->lhs->kind == TL_N_PATH && (t = tl_sema_vec_path_call(s, n, expect))) break; /* Vec::new() (sema_vec.c) */
    t = tl_sema_logic_claims(s, n) ? tl_sema_logic_expr(s, n) : tl_sema_call(s, n, expect);
    break;
  case TL_N_MATCH: t = tl_sema_match(s, n, expect, hint); break;
  case TL_N_LOOP: /* `let v = loop { .. break x; }`: the breaks' type (unit when none has a value) */
    n->ty = expect && !hint && expect->kind != TY_ERROR ? expect : NULL;
    tl_sema_loop(s, n);
    /* no break ends it: it never gives a value (Rust's `!`), so it fits what is expected */
    t = n->ty ? n->ty : !(n->ival & 4) && expect ? expect : TY_UNIT_T;
    break;
  case TL_N_TRY: t = tl_sema_option_try(s, n); break;
  case TL_N_LOGIC: case TL_N_LVAR: t = tl_sema_logic_expr(s, n); break;
  case TL_N_METHOD:
    t = tl_sema_method(s, n);
    if (n->kind == TL_N_MATCH) break; /* a call on a `dyn` value became a match (sema_dyn.c) */
    t = tl_sema_iter_collect_into(s, n, t, expect); /* sema_iter.c */
    n->ty = t;
    if (tl_sema_is_flex_read(n)) t = flex_type(need, expect); /* item() of an unknown dtype */
    break;
  case TL_N_FIELD: t = check_field(s, n); break;
  case TL_N_INDEX: t = check_index(s, n, need, expect); break;
  case TL_N_ARRAY:
    if (!n->name && tl_ty_is_vec(expect)) { /* `let a: [i64; 3] = [1, 2, 3]`: an array is a Vec (§11) */
      n->name = "[..]"; /* an ARRAY with a name is a Vec literal */
      n->ival = 0;
    }
    t = n->name ? tl_sema_vec_lit(s, n, expect) : check_array(s, n, expect); /* vec![..] */
    break;
  case TL_N_TUPLE: t = tl_sema_tuple_expr(s, n, expect, hint); break;
  case TL_N_STRUCT_LIT:
    if (!tl_sema_generic_rename(s, n, expect)) { /* Pair { a: 1, b: 2.0 } (sema_generic.c) */
      t = TY_ERR;
      break;
    }
    if (strstr(n->name, "::") && (t = tl_sema_enum_value(s, n))) break; /* E::C { x: 1.0 } */
    t = check_struct_lit(s, n);
    break;
  case TL_N_IF: t = check_if(s, n, expect, hint); break;
  case TL_N_BLOCK:
    s->hint = hint;
    t = tl_sema_block(s, n, expect);
    break;
  case TL_N_COMPR: t = tl_sema_compr(s, n); break;
  case TL_N_CLOSURE: t = tl_sema_closure_expr(s, n, !hint || (expect && expect->kind == TY_FN) ? expect : NULL); break;
  case TL_N_ERROR: t = TY_ERR; break;
  case TL_N_FIELD_INIT: /* `name: value` among call arguments (check_tensor_ctor takes its own) */
    tl_sema_error(s, n, "only the tensor creation functions take a named argument (`requires_grad: true`)");
    tl_sema_expr(s, n->lhs, NULL);
    t = TY_ERR;
    break;
  default:
    tl_sema_error(s, n, "expected an expression");
    t = TY_ERR;
  }
  /* a number read from tensor elements where a Tensor is required (`let e: Tensor =
   * w[0];`, a Tensor parameter): a 0-d tensor of views, which keeps w's history */
  if (expect && t->kind == TY_STRUCT && tl_sema_dyn_is(expect)) t = tl_sema_dyn_wrap(s, n, expect, t); /* sema_dyn.c */
  n->ty = t;
  if (!hint && expect && expect->kind == TY_TENSOR && tl_ty_is_float(t) && !s->compr_depth && tl_sema_grad_promote(s, n))
    t = n->ty;
  return t;
}

/* ---- items ---- */

static bool ends_in_return(const tl_node *body) {
  const tl_node *last = NULL;
  for (const tl_node *st = body->stmts; st; st = st->next) last = st;
  if (!last) return false;
  if (last->kind == TL_N_RETURN) return true;
  if (last->kind == TL_N_BREAK || last->kind == TL_N_CONTINUE) return true; /* diverges too: fits any type */
  if (last->kind == TL_N_LOOP) return true; /* leaves only by return (break makes it unit) */
  if (last->kind == TL_N_EXPR_STMT && last->lhs->kind == TL_N_IF && last->lhs->els)
    return ends_in_return(last->lhs->then) &&
           (last->lhs->els->kind == TL_N_BLOCK ? ends_in_return(last->lhs->els) : false);
  return false;
}

static void check_fn_pass(sema *s, tl_fninfo *f) {
  s->fn = f;
  s->env = f->env; /* a generic instance's type parameters (sema_generic.c) */
  s->self_ty = f->self_struct ? tl_sema_struct_ty(s, f->self_struct) : f->env ? f->env->self : NULL;
  s->assoc = f->fn->assoc;
  s->cap_vars = 0;
  f->nvars = 0; /* every variable is declared again, with the same ids */
  f->vars = NULL;
  s->syms = NULL;
  s->nloops = 0;
  tl_param *p = f->fn->params;
  int i = 0;
  for (; p; p = p->next, i++) {
    tl_ty *t = p->is_self ? (tl_ty *)f->params[i]->ty : f->params[i]->ty;
    tl_var_kind k = f->params[i]->kind;
    tl_node at = {.line = p->line, .col = p->col};
    tl_var *v = tl_sema_declare(s, &at, p->name, t, k, p->is_mut && !p->by_ref && !p->is_self);
    if (v && k == VAR_PARAM_OWNED) v->is_mut = true;
    f->params[i] = v;
  }
  tl_ty *t = tl_sema_block(s, f->fn->body, f->ret);
  f->fn->body->ty = t;
  if (f->ret->kind == TY_UNIT) return;
  if (f->fn->body->value) {
    if (!tl_sema_ty_fits(f->ret, t)) tl_sema_mismatch(s, f->fn->body->value, "function result", f->ret, t);
  } else if (!ends_in_return(f->fn->body) && t->kind != TY_ERROR) { /* TY_ERROR: a statement did not parse */
    char b[64];
    tl_diag_error(s->diag, f->fn->line, f->fn->col, "function `%s` must return a value of type %s", f->name,
                  tl_ty_name(f->ret, b, sizeof b));
  }
}

static bool forget_loop_writes(tl_node *n, void *unused) {
  (void)unused;
  if (n->kind == TL_N_WHILE || n->kind == TL_N_LOOP || n->kind == TL_N_FOR) n->ref = NULL;
  return false;
}

/* A variable whose inferred type widens (tl_sema_widen) was used with the narrower type
 * before the assignment that widened it (and, in a loop, after it): the body is checked
 * again, its `let`s starting from the wider types, until no type widens. A pass only
 * ever widens (a dtype or rank becomes unknown), so this ends. The errors of a pass
 * that widened are dropped: the next pass reports them with the final types. */
static void check_fn_body(sema *s, tl_fninfo *f) {
  tl_diag *d = s->diag;
  int errors = d->errors, nat = d->nat;
  size_t len = d->text.len;
  for (int pass = 0;; pass++) {
    s->widened = false;
    check_fn_pass(s, f);
    if (!s->widened || pass == 100) {
      if (!f->fn->broken) tl_sema_vec_check_inferred(s, f); /* a push may be in what did not parse */
      tl_sema_iter_check_consumed(s, f); /* sema_iter.c */
      break;
    }
    d->errors = errors;
    d->nat = nat;
    d->text.len = len;
    if (d->text.data) d->text.data[len] = '\0';
    tl_ast_find(f->fn->body, forget_loop_writes, NULL);
  }
}

/* a method's owner is st, or s->env->owner for a trait's method on a builtin type
 * (`i64::area`); the signature's `Self` is the owner's type */
static tl_fninfo *declare_fn(sema *s, tl_fn *fn, tl_struct_info *st) {
  tl_fninfo *f = tl_arena_alloc(s->arena, sizeof *f);
  if (!f) return NULL;
  const char *owner = st ? st->name : s->env ? s->env->owner : NULL;
  tl_ty *saved_self = s->self_ty;
  const tl_type *saved_assoc = s->assoc;
  s->self_ty = st ? tl_sema_struct_ty(s, st) : s->env ? s->env->self : NULL;
  s->assoc = fn->assoc;
  f->env = s->env;
  char *name = tl_arena_alloc(s->arena, strlen(fn->name) + (owner ? strlen(owner) + 3 : 1) + 1);
  char *cname = tl_arena_alloc(s->arena, strlen(fn->name) + (owner ? strlen(owner) + 3 : 1) + 6);
  if (!name || !cname) return NULL;
  sprintf(name, "%s%s%s", owner ? owner : "", owner ? "::" : "", fn->name);
  sprintf(cname, "tlf_%s%s%s", owner ? owner : "", owner ? "__" : "", fn->name);
  f->name = name;
  f->cname = cname;
  f->fn = fn;
  f->self_struct = st;
  if (fn->partial) { /* known by name only: a call to it is not an error too */
    f->partial = true;
    f->ret = TY_ERR;
    s->self_ty = saved_self;
    s->assoc = saved_assoc;
    if (!find_declared_fn(s, name)) {
      tl_fninfo **tail = &s->out->fns;
      while (*tail) tail = &(*tail)->next;
      *tail = f;
    }
    return f;
  }
  f->ret = fn->ret ? tl_sema_resolve_type(s, fn->ret) : TY_UNIT_T;
  int n = 0;
  for (tl_param *p = fn->params; p; p = p->next) n++;
  f->params = tl_arena_alloc(s->arena, sizeof *f->params * (size_t)(n + 1));
  if (!f->params) return NULL;
  int i = 0;
  for (tl_param *p = fn->params; p; p = p->next, i++) {
    tl_var *v = tl_arena_alloc(s->arena, sizeof *v);
    if (!v) return NULL;
    if (p->is_self) {
      if (i || !owner) {
        tl_diag_error(s->diag, p->line, p->col, "`self` is only allowed as the first parameter of a method");
        v->ty = TY_ERR;
      } else {
        v->ty = s->self_ty;
        f->self = p;
      }
      v->kind = p->is_mut ? (p->by_ref ? VAR_PARAM_REF : VAR_PARAM_OWNED) : VAR_PARAM;
    } else {
      v->ty = tl_sema_resolve_type(s, p->type);
      v->kind = p->by_ref ? VAR_PARAM_REF : p->is_mut ? VAR_PARAM_OWNED : VAR_PARAM;
      if (v->ty->kind == TY_UNIT) tl_diag_error(s->diag, p->line, p->col, "a parameter cannot have type ()");
    }
    v->name = p->name;
    f->params[i] = v;
  }
  f->nparams = n - (f->self ? 1 : 0);
  s->self_ty = saved_self;
  s->assoc = saved_assoc;
  tl_fninfo *prev = find_declared_fn(s, name);
  if (prev || (!owner && tl_sema_generic_fn_named(s, name))) { /* `fn f` and `fn f<T>` */
    tl_diag_error(s->diag, fn->line, fn->col, "`%s` is defined twice", name);
    return f;
  }
  tl_fninfo **tail = &s->out->fns; /* in source order: errors come out in order */
  while (*tail) tail = &(*tail)->next;
  *tail = f;
  return f;
}

static void declare_struct(sema *s, tl_ast_item *it, bool partial) {
  tl_struct_info *prev = find_struct(s, it->name);
  if (prev) {
    if (!partial)
      tl_diag_error(s->diag, it->line, it->col, prev->is_enum ? "the name `%s` is defined twice" : "struct `%s` is defined twice",
                    it->name);
    return;
  }
  tl_struct_info *st = tl_arena_alloc(s->arena, sizeof *st);
  if (!st) return;
  st->name = it->name;
  char *cname = tl_arena_alloc(s->arena, strlen(it->name) + 5);
  if (!cname) return;
  sprintf(cname, "tls_%s", it->name);
  st->cname = cname;
  st->line = it->line;
  st->col = it->col;
  st->partial = partial;
  st->next = s->out->structs;
  s->out->structs = st;
}

tl_fninfo *tl_sema_declare_fn(sema *s, tl_fn *fn, tl_struct_info *st) { return declare_fn(s, fn, st); }

static void struct_fields(sema *s, tl_ast_item *it) {
  tl_struct_info *st = find_struct(s, it->name);
  if (!st || st->fields || st->is_enum) return;
  tl_sema_struct_fill(s, st, it);
}

/* st's fields from the item's (a generic struct's instance: with s->env set) */
void tl_sema_struct_fill(sema *s, tl_struct_info *st, tl_ast_item *it) {
  int n = 0;
  for (tl_field *f = it->fields; f; f = f->next) n++;
  st->fields = tl_arena_alloc(s->arena, sizeof *st->fields * (size_t)(n + 1));
  if (!st->fields) return;
  for (tl_field *f = it->fields; f; f = f->next) {
    bool twice = false;
    for (int i = 0; i < st->nfields; i++)
      if (!strcmp(st->fields[i].name, f->name)) twice = true;
    if (twice) { /* reported once; kept out, so `P { x: .. }` is not also missing a second `x` */
      tl_diag_error(s->diag, f->line, f->col, "field `%s` is declared twice", f->name);
      continue;
    }
    tl_field_info *fi = &st->fields[st->nfields++];
    fi->name = f->name;
    fi->ty = tl_sema_resolve_type(s, f->type);
    fi->line = f->line;
    fi->col = f->col;
    if (fi->ty->kind == TY_STRUCT && fi->ty->st == st)
      tl_diag_error(s->diag, f->line, f->col, "struct `%s` cannot contain itself", st->name);
  }
}

int tl_sema_check(tl_program *prog, tl_diag *diag, tl_arena *arena, tl_sema *out) {
  sema s = {.diag = diag, .arena = arena, .out = out, .items = prog->items};
  memset(out, 0, sizeof *out);
  int before = diag->errors;
  /* the items that did not parse are declared as far as they got, after the others,
   * so what uses them is not reported too; a function body whose statements recovered
   * from syntax errors is checked (the failed statements are ERROR nodes), one whose
   * parse was given up (partial) is not */
  for (int pass = 0; pass < 2; pass++)
    for (tl_ast_item *it = pass ? prog->broken : prog->items; it; it = it->next)
      if (tl_sema_generic_register(&s, it, pass)) continue; /* generics and traits (sema_generic.c) */
      else if (it->kind == TL_ITEM_STRUCT) declare_struct(&s, it, pass);
      else if (it->kind == TL_ITEM_ENUM) tl_sema_enum_declare(&s, it, pass);
  tl_sema_iter_begin(&s); /* the built-in enum Ordering (sema_iter.c) */
  for (int pass = 0; pass < 2; pass++)
    for (tl_ast_item *it = pass ? prog->broken : prog->items; it; it = it->next)
      if (it->kind == TL_ITEM_STRUCT) struct_fields(&s, it);
      else if (it->kind == TL_ITEM_ENUM) tl_sema_enum_fields(&s, it);
  for (int pass = 0; pass < 2; pass++)
    for (tl_ast_item *it = pass ? prog->broken : prog->items; it; it = it->next) {
      if (tl_sema_generic_item(&s, it)) continue; /* generic fns and impls, trait impls */
      if (it->kind == TL_ITEM_FN) declare_fn(&s, it->fn, NULL);
      if (it->kind == TL_ITEM_CONST) tl_sema_const_declare(&s, it, pass);
      if (it->kind != TL_ITEM_IMPL) continue;
      tl_struct_info *st = find_struct(&s, it->name);
      if (!st) {
        if (!pass) tl_diag_error(diag, it->line, it->col, "`impl` of unknown struct `%s`", it->name);
        continue;
      }
      if (pass) st->partial = true; /* a method may be missing */
      for (tl_fn *m = it->methods; m; m = m->next)
        if (!m->tparams) declare_fn(&s, m, st); /* a generic method is made per call (sema_generic.c) */
    }
  tl_sema_logic_begin(&s, prog);
  tl_sema_const_check(&s, prog);
  for (tl_fninfo *f = out->fns; f; f = f->next) /* instances made meanwhile are appended */
    if (!f->fn->partial && f->fn->body) {
      int u = f->fn->unit; /* a module's function: its errors are its file's */
      s.diag = u > 0 && u < prog->nunits ? prog->units[u].diag : diag;
      int nat = s.diag->nat;
      check_fn_body(&s, f);
      if (f->env && f->env->n) tl_sema_generic_dedupe(&s, nat, f->name); /* another instance said it already */
    }
  s.diag = diag;
  if (!diag->errors) tl_sema_grad_program(&s); /* element reads that keep a gradient (sema_grad.c) */
  tl_sema_logic_finish(&s);
  if (!diag->errors) tl_sema_annotate(&s); /* what the generator reads (sema_annotate.c) */
  out->units = prog->units;
  out->nunits = prog->nunits;
  out->main = tl_sema_find_fn(&s, "main");
  if (!out->main) {
    if (before == 0) tl_diag_error(diag, 1, 1, "no `fn main()` in this file"); /* else it may be what failed */
  } else if (!out->main->partial && (out->main->nparams || out->main->self ||
                                     (out->main->ret->kind != TY_UNIT && out->main->ret->kind != TY_I64)))
    tl_diag_error(diag, out->main->fn->line, out->main->fn->col,
                  "`main` takes no parameters and returns nothing (or an i64, the exit status)");
  return diag->errors - before;
}
