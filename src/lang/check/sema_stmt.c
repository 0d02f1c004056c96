/* sema_stmt.c — the checker's statements: assignments and the places they write, let,
 * for, while and loop, break/continue with labels (LANGUAGE.md §4). In: statement
 * nodes of a function body; out: their types and errors. Expressions are sema.c's. */
#include "lang/check/sema_impl.h"

#include "core/dtype.h"

#include <stdio.h>
#include <string.h>

/* ---- statements ---- */

/* the variable at the root of a place (x, x.f.g, x[i]), or NULL */
static tl_node *place_root(tl_node *n) {
  while (n->kind == TL_N_FIELD || n->kind == TL_N_INDEX) n = n->lhs;
  return n->kind == TL_N_IDENT || n->kind == TL_N_SELF ? n : NULL;
}

static void note_loop_write(sema *s, tl_var *v) {
  for (int i = v->loop_depth; i < s->nloops; i++) {
    tl_node *loop = s->loops[i];
    tl_varlist *e = tl_arena_alloc(s->arena, sizeof *e);
    if (!e) return;
    for (tl_varlist *x = loop->ref; x; x = x->next)
      if (x->var == v) goto next;
    e->var = v;
    e->next = loop->ref;
    loop->ref = e;
  next:;
  }
}

/* checks that n is a place the program may write: a mutable variable, a `&mut`
 * parameter, or a field/element of one */
static bool check_writable(sema *s, tl_node *n) {
  tl_node *root = place_root(n);
  if (!root && tl_sema_const_name(n)) {
    tl_sema_error(s, n, "cannot assign to constant `%s`", tl_sema_const_name(n));
    tl_diag_hint(s->diag, "copy it into a `let mut %s = %s;` to change it", tl_sema_const_name(n), tl_sema_const_name(n));
    return false;
  }
  if (!root) {
    tl_sema_error(s, n, "cannot assign to this expression");
    return false;
  }
  tl_var *v = root->var;
  if (!v) return false; /* already reported */
  if (tl_sema_closure_written(s, n, v)) return false; /* sema_closure.c */
  if (v->is_index) {
    tl_sema_error(s, n, "cannot assign to comprehension index `%s`", v->name);
    return false;
  }
  if (!v->is_mut && v->kind != VAR_PARAM_REF) {
    if (root == n) tl_sema_error(s, n, "cannot assign twice to immutable variable `%s`", v->name);
    else tl_sema_error(s, n, "cannot write through immutable variable `%s`", v->name);
    if (!strcmp(v->name, "self")) tl_diag_hint(s->diag, "take the receiver as `&mut self`");
    else if (v->kind == VAR_PARAM) tl_diag_hint(s->diag, "make it a `mut %s: T` parameter (the callee's own copy), or `%s: &mut T`", v->name, v->name);
    else if (v->is_for) tl_diag_hint(s->diag, "a `for` variable takes each value in turn; copy it into a `let mut`");
    else tl_diag_hint(s->diag, "declare it mutable: `let mut %s`", v->name);
    return false;
  }
  note_loop_write(s, v);
  return true;
}

static bool i_bit_op(tl_tok_kind op) {
  return op == TL_TOK_AMP || op == TL_TOK_PIPE || op == TL_TOK_CARET || op == TL_TOK_SHL || op == TL_TOK_SHR;
}

static void check_assign(sema *s, tl_node *n) {
  tl_ty *l = tl_sema_expr(s, n->lhs, NULL);
  /* a variable itself (not a field or an element) takes the value: tl_sema_widen's rule */
  tl_var *whole = n->lhs->kind == TL_N_IDENT ? n->lhs->var : NULL;
  if (n->op == TL_TOK_ASSIGN) {
    bool store = n->lhs->kind == TL_N_INDEX && l->kind == TY_TENSOR && n->lhs->lhs->ty &&
                 n->lhs->lhs->ty->kind == TY_TENSOR; /* a tensor or a number fills it (not a Vec's element) */
    tl_ty *r = store ? tl_sema_expr_hint(s, n->rhs, tl_ty_of_dtype(l->dtype)) : tl_sema_expr(s, n->rhs, l);
    if (store ? !(r->kind == TY_TENSOR || tl_ty_is_numeric(r) || r->kind == TY_BOOL || r->kind == TY_ERROR)
              : whole ? !tl_sema_widen(s, whole, r) : !tl_sema_ty_fits(l, r))
      tl_sema_mismatch(s, n->rhs, "assigned value", l, r);
  } else {
    tl_node tmp = *n; /* type `x op= y` as `x op y` */
    static const tl_tok_kind ops[][2] = {{TL_TOK_PLUS_ASSIGN, TL_TOK_PLUS}, {TL_TOK_MINUS_ASSIGN, TL_TOK_MINUS},
                                         {TL_TOK_STAR_ASSIGN, TL_TOK_STAR}, {TL_TOK_SLASH_ASSIGN, TL_TOK_SLASH},
                                         {TL_TOK_PERCENT_ASSIGN, TL_TOK_PERCENT}, {TL_TOK_AMP_ASSIGN, TL_TOK_AMP},
                                         {TL_TOK_PIPE_ASSIGN, TL_TOK_PIPE}, {TL_TOK_CARET_ASSIGN, TL_TOK_CARET},
                                         {TL_TOK_SHL_ASSIGN, TL_TOK_SHL}, {TL_TOK_SHR_ASSIGN, TL_TOK_SHR}};
    for (int i = 0; i < 10; i++)
      if (ops[i][0] == n->op) tmp.op = ops[i][1];
    tmp.kind = TL_N_BINARY;
    if (i_bit_op(tmp.op)) { /* x &= y is x = x & y, of x's type (check_binary_at's rule) */
      tl_ty *t = tl_sema_binary_at(s, &tmp, l, false, l);
      if (t->kind != TY_ERROR && l->kind != TY_ERROR && !tl_sema_ty_fits(l, t)) tl_sema_mismatch(s, n->rhs, "assigned value", l, t);
      return;
    }
    tl_ty *r = l->kind == TY_TENSOR ? tl_sema_expr_hint(s, n->rhs, tl_ty_of_dtype(l->dtype)) : tl_sema_expr(s, n->rhs, l);
    if (l->kind != TY_ERROR && r->kind != TY_ERROR) {
      bool ok = (l->kind == TY_TENSOR && (r->kind == TY_TENSOR || tl_ty_is_numeric(r))) ||
                (tl_ty_is_numeric(l) && l->kind == r->kind) || (l->kind == TY_STR && r->kind == TY_STR && tmp.op == TL_TOK_PLUS);
      if (!ok) {
        char a[64], b[64];
        tl_sema_error(s, n, "operator `%s` cannot be applied to %s and %s", tl_tok_name(n->op), tl_ty_name(l, a, sizeof a),
                   tl_ty_name(r, b, sizeof b));
      } else if (l->kind == TY_TENSOR) { /* x op= y is x = x op y: broadcasting may change the rank */
        tl_ty *v = tl_sema_binary_tensor(s, &tmp, l, r);
        /* in place, as torch: the result is stored in x's dtype, within a kind (f64 into
         * f32); `t *= 0.5` on an integer tensor is refused, not truncated */
        bool across = v->kind != TY_ERROR && l->dtype >= 0 && v->dtype >= 0 &&
                      tl_dtype_kind((tl_dtype)v->dtype) > tl_dtype_kind((tl_dtype)l->dtype);
        if (v->kind != TY_ERROR && v->dtype != l->dtype && !across) v = tl_sema_tensor(s, l->dtype, v->rank);
        if (across) {
          tl_sema_error(s, n, "`%s` would change the tensor's dtype from %s to %s", tl_tok_name(n->op),
                     tl_dtype_name((tl_dtype)l->dtype), tl_dtype_name((tl_dtype)v->dtype));
          const char *x = whole ? whole->name : "x";
          tl_diag_hint(s->diag, "write `%s = %s %s ...` for a new tensor, or convert the operand with `as`", x, x,
                       tl_tok_name(tmp.op));
        } else if (v->kind != TY_ERROR && (whole ? !tl_sema_widen(s, whole, v) : !tl_sema_ty_fits(l, v))) {
          char what[32];
          snprintf(what, sizeof what, "result of `%s`", tl_tok_name(n->op));
          tl_sema_mismatch(s, n, what, l, v);
        }
      }
    }
  }
  if (n->lhs->kind == TL_N_INDEX && tl_ty_is_map(n->lhs->lhs->ty)) { /* Rust's HashMap has no IndexMut */
    tl_sema_error(s, n->lhs, "cannot assign through `m[k]`: a HashMap is written with `insert`");
    tl_diag_hint(s->diag, "write `m.insert(k, v);`");
  } else if (l->kind != TY_ERROR) check_writable(s, n->lhs);
}

static void check_let(sema *s, tl_node *n) {
  if (n->lhs) {
    tl_sema_tuple_let(s, n);
    return;
  }
  tl_sema_einsum_let(s, n); /* sema_einsum.c: a tensor equation over free index names */
  tl_ty *want = n->type ? tl_sema_resolve_type(s, n->type) : NULL;
  tl_ty *t;
  if (!n->rhs) {
    tl_sema_error(s, n, "`let %s` needs a value: `let %s = ...;`", n->name, n->name);
    t = want ? want : TY_ERR;
  } else {
    t = tl_sema_expr(s, n->rhs, want);
    if (want && !tl_sema_ty_fits(want, t)) tl_sema_mismatch(s, n->rhs, "`let` value", want, t);
    if (want && want->kind != TY_ERROR) t = want;
  }
  if (t->kind == TY_UNIT) {
    tl_sema_error(s, n->rhs ? n->rhs : n, "this expression has no value");
    t = TY_ERR;
  }
  if (t->kind == TY_RANGE) {
    tl_sema_error(s, n->rhs, "a range is not a value: use it in `for` or to slice");
    t = TY_ERR;
  }
  /* no written type: the join of every value, as far as the passes before this one
   * found them (n->ty keeps it from pass to pass; see check_fn_body) */
  tl_ty *before = n->ty;
  if (!want && before && tl_sema_vec_fits(before, t) && !tl_sema_vec_fits(t, before)) { /* a Vec<_> a push inferred */
    t = before;
    n->rhs->ty = before;
  }
  if (!want && before && ((t->kind == TY_TENSOR && before->kind == TY_TENSOR) || (tl_ty_is_tuple(t) && tl_ty_is_tuple(before)))) {
    tl_ty *j = tl_sema_join(s, t, before);
    if (j) t = j;
  }
  n->var = tl_sema_declare(s, n, n->name, t, VAR_LOCAL, n->is_mut);
  if (n->var) n->var->plain_let = true;
  if (n->var && !want) {
    n->var->let = n;
    n->ty = t;
  }
}

/* `for i in a..b`: i has the bounds' integer type, as in Rust (`0..n` with n a u16
 * counts in u16); i64 when both bounds are plain literals. A bound that is not a
 * plain literal is checked first and gives the type; each is checked once. */
static tl_ty *for_range(sema *s, tl_node *h) {
  bool lit_lo = tl_sema_is_plain_literal(h->lhs), lit_hi = tl_sema_is_plain_literal(h->rhs);
  tl_node *first = lit_lo && !lit_hi ? h->rhs : h->lhs, *second = first == h->lhs ? h->rhs : h->lhs;
  tl_ty *want = TY_I64_T;
  if (!(lit_lo && lit_hi)) {
    tl_ty *t = tl_sema_expr(s, first, NULL);
    if (tl_ty_is_int(t)) want = t;
    else if (t->kind != TY_ERROR) tl_sema_mismatch(s, first, "range bound", TY_I64_T, t);
  } else {
    tl_sema_expect_i64(s, first, "range bound");
  }
  tl_ty *t2 = tl_sema_expr(s, second, want);
  if (t2->kind != want->kind && t2->kind != TY_ERROR) tl_sema_mismatch(s, second, "range bound", want, t2);
  h->ty = TY_RANGE_T;
  return want;
}

static void check_for(sema *s, tl_node *n) {
  tl_ty *it;
  tl_node *h = n->lhs;
  if (h->kind == TL_N_CALL && h->lhs->kind == TL_N_IDENT && !strcmp(h->lhs->name, "range") && !tl_sema_lookup(s, "range")) {
    int k = 0;
    for (tl_node *a = h->args; a; a = a->next, k++) {
      tl_sema_expect_i64(s, a, "range bound");
    }
    if (k < 1 || k > 2) tl_sema_error(s, h, "range() takes 1 or 2 arguments, not %d", k);
    h->ty = TY_RANGE_T;
    h->ival = 1; /* marks `range(...)` for the code generator */
    it = TY_I64_T;
  } else if (h->kind == TL_N_RANGE && h->lhs && h->rhs) {
    it = for_range(s, h);
  } else {
    tl_ty *t = tl_sema_expr(s, h, NULL);
    if (t->kind == TY_RANGE) {
      if (!h->lhs || !h->rhs) tl_sema_error(s, h, "a `for` range needs both ends: `a..b`");
      it = TY_I64_T;
    } else if (tl_ty_is_map(t) && t->st->flavor == 'S' && t->st->targs[0]) {
      it = tl_sema_vec_for(s, tl_sema_set_elems(s, h, t)); /* over a copy of its elements */
    } else if (tl_ty_is_vec(t) || tl_ty_is_map(t)) {
      it = tl_sema_vec_for(s, t); /* sema_vec.c */
    } else if (tl_ty_is_iter(t)) {
      it = t->st->targs[0]; /* a chain (sema_iter.c) */
    } else if (t->kind == TY_TENSOR) {
      it = t->rank == 1 ? tl_ty_of_dtype(t->dtype) : tl_sema_tensor(s, t->dtype, t->rank > 0 ? t->rank - 1 : -1);
      if (t->rank < 0) it = tl_sema_tensor(s, t->dtype, -1);
    } else {
      if (t->kind != TY_ERROR) {
        char b[64];
        tl_sema_error(s, h, "cannot iterate over %s", tl_ty_name(t, b, sizeof b));
      }
      it = TY_ERR;
    }
  }
  sym *mark = s->syms;
  s->loops[s->nloops++] = n;
  n->ival = 0; /* check_jump's marks, made again */
  n->var = tl_sema_declare(s, n, n->name, it, VAR_LOCAL, false);
  if (!n->var) return;
  n->var->loop_depth = s->nloops;
  n->var->is_for = true;
  tl_sema_block(s, n->body, NULL);
  s->nloops--;
  s->syms = mark;
}

void tl_sema_loop(sema *s, tl_node *n) {
  if (s->nloops == SEMA_MAX_LOOPS) {
    tl_sema_error(s, n, "loops nested too deep");
    return;
  }
  if (n->kind == TL_N_FOR) {
    check_for(s, n);
    return;
  }
  s->loops[s->nloops++] = n; /* the condition runs every iteration: it is inside */
  n->ival = 0;                /* check_jump's marks, made again */
  if (n->kind == TL_N_WHILE) {
    tl_ty *c = tl_sema_expr(s, n->cond, TY_BOOL_T);
    if (!tl_sema_ty_fits(TY_BOOL_T, c) && !tl_sema_tensor_cond(s, n->cond, c)) {
      tl_sema_mismatch(s, n->cond, "`while` condition", TY_BOOL_T, c);
      if (c->kind == TY_TENSOR) tl_diag_hint(s->diag, "read a one-element tensor with `.item()`");
    }
  }
  tl_sema_block(s, n->body, NULL);
  s->nloops--;
}

/* break and continue: the loop they leave (n->ref), the innermost or the one labeled
 * so; `break value` gives a `loop` its value, the same type at every break */
static void check_jump(sema *s, tl_node *n) {
  const char *what = n->kind == TL_N_BREAK ? "break" : "continue";
  if (s->compr_depth || !s->nloops) {
    tl_sema_error(s, n, s->compr_depth ? "`%s` inside a comprehension body" : "`%s` outside of a loop", what);
    return;
  }
  int i = s->nloops - 1;
  while (n->str && i >= 0 && (!s->loops[i]->str || strcmp(s->loops[i]->str, n->str))) i--;
  if (i < 0) {
    tl_sema_error(s, n, "no loop labeled `%s` around this `%s`", n->str, what);
    if (n->lhs) tl_sema_expr(s, n->lhs, NULL);
    return;
  }
  tl_node *loop = s->loops[i];
  n->ref = loop;
  if (n->kind == TL_N_BREAK) loop->ival |= 4; /* the loop ends: its type is not `!` */
  if (i < s->nloops - 1) loop->ival |= n->kind == TL_N_BREAK ? 1 : 2; /* a jump out of an inner loop: a C label */
  if (!n->lhs) {
    if (loop->kind == TL_N_LOOP && loop->ty && loop->ty->kind != TY_UNIT && loop->ty->kind != TY_ERROR && n->kind == TL_N_BREAK) {
      char b[64];
      tl_sema_error(s, n, "this `break` gives no value, but the loop's value is %s", tl_ty_name(loop->ty, b, sizeof b));
    }
    if (loop->kind == TL_N_LOOP && !loop->ty && n->kind == TL_N_BREAK) loop->ty = TY_UNIT_T; /* later breaks give () too */
    return;
  }
  if (loop->kind != TL_N_LOOP) {
    tl_sema_error(s, n, "`break` with a value leaves only a `loop`, not a `%s`", loop->kind == TL_N_WHILE ? "while" : "for");
    tl_sema_expr(s, n->lhs, NULL);
    return;
  }
  tl_ty *t = tl_sema_expr(s, n->lhs, loop->ty);
  if (t->kind == TY_ERROR) return;
  if (!loop->ty) loop->ty = t;
  else if (!tl_sema_ty_fits(loop->ty, t)) tl_sema_mismatch(s, n->lhs, "`break` value", loop->ty, t);
}

void tl_sema_stmt(sema *s, tl_node *n) {
  if (s->compr_depth && n->kind != TL_N_LET && n->kind != TL_N_ERROR) {
    tl_sema_error(s, n, "a comprehension body holds `let` statements and a value, nothing with effects");
    return;
  }
  switch (n->kind) {
  case TL_N_LET: check_let(s, n); break;
  case TL_N_ASSIGN: tl_sema_seed_assign(s, n), check_assign(s, n); break;
  case TL_N_EXPR_STMT:
    switch (tl_sema_seed_stmt(s, n)) { /* sema_seed.c: `t.fill_(v)` */
    case 0: tl_sema_expr(s, n->lhs, NULL); break;
    case 1: check_assign(s, n); break;
    }
    break;
  case TL_N_WHILE: case TL_N_LOOP: case TL_N_FOR:
    n->ty = NULL; /* a statement loop's break values are dropped */
    tl_sema_loop(s, n);
    break;
  case TL_N_BREAK: case TL_N_CONTINUE: check_jump(s, n); break;
  case TL_N_RETURN: {
    if (s->compr_depth) {
      tl_sema_error(s, n, "`return` inside a comprehension body");
      break;
    }
    tl_ty *want = s->fn->ret;
    tl_ty *t = n->lhs ? tl_sema_expr(s, n->lhs, want) : TY_UNIT_T;
    if (!tl_sema_ty_fits(want, t)) tl_sema_mismatch(s, n->lhs ? n->lhs : n, "returned value", want, t);
    break;
  }
  case TL_N_ERROR: /* reported by the parser; what a failed `let` binds is an error value */
    for (tl_node *name = n->args; name; name = name->next) tl_sema_declare(s, name, name->name, TY_ERR, VAR_LOCAL, true);
    break;
  default: tl_sema_expr(s, n, NULL);
  }
}

