/* sema_grad.c — element reads that keep their gradient (language-decisions.md, "Element
 * reads and autograd"). `w[0]` is a number to the checker, but a number read from a
 * tensor that requires grad must keep its history where it meets a tensor. Once every
 * function is checked, this pass finds:
 *   - the float numbers whose value follows from an element read of a float tensor
 *     (node->grad TL_GRAD_ELEM): reads, arithmetic and differentiable scalar math over
 *     them, and variables holding them (var->elem: a `let`, an assignment, a `for` over
 *     a tensor's elements);
 *   - what meets a tensor in arithmetic, through variables and their values, across
 *     functions (var->meets, also of parameters; a function's ret_meets; a field's meets);
 *   - the element reads in numbers stored where no history is kept (TL_GRAD_CHECK).
 * The generator (gen_grad.c) computes an ELEM operand of tensor arithmetic as a 0-d
 * tensor graph, keeps a 0-d tensor `shadow` beside each variable with elem and meets,
 * and where an ELEM number goes into a plain one that meets a tensor elsewhere (a
 * parameter, a result, a field) or into a tensor's element, warns at run time when the
 * tensor requires grad. The walks repeat until nothing changes (a variable may be read
 * above the assignment that makes it ELEM, in a loop); flags only ever turn on.
 * tl_sema_grad_promote, at check time, types such a number where a Tensor is required as
 * a 0-d tensor (`let e: Tensor = w[0];`). */
#include <stdlib.h>
#include <string.h>

#include "lang/check/sema_impl.h"

static bool float_scalar(const tl_ty *t) { return t && tl_ty_is_float(t); }

static bool arith(tl_tok_kind op) {
  return op == TL_TOK_PLUS || op == TL_TOK_MINUS || op == TL_TOK_STAR || op == TL_TOK_SLASH;
}

/* scalar math the engine differentiates (floor, ceil, round: a zero gradient anyway) */
static bool diff_math(int64_t id) {
  switch (id) {
  case B_NEG: case B_EXP: case B_LOG: case B_SQRT: case B_SIN: case B_COS: case B_TANH: case B_SIGMOID: case B_RELU:
  case B_GELU: case B_ABS: case B_LOG1P: case B_EXPM1: case B_ERF: case B_POW: case B_MAXIMUM: case B_MINIMUM: return true;
  default: return false;
  }
}

/* n is scalar math on floats (x.exp(), max(a, b), a.pow(b)): its operands in x and y */
bool tl_sema_grad_math(const tl_node *n, tl_node **x, tl_node **y) {
  if (n->ref || !float_scalar(n->ty) || !diff_math(n->ival)) return false;
  if (n->kind == TL_N_METHOD && float_scalar(n->lhs->ty)) {
    *x = n->lhs, *y = n->args;
    return true;
  }
  if (n->kind == TL_N_CALL && n->lhs->kind == TL_N_IDENT && n->args && float_scalar(n->args->ty)) {
    *x = n->args, *y = n->args->next;
    return true;
  }
  return false;
}

static bool elem(const tl_node *n) { return n && (n->grad & TL_GRAD_ELEM); }

/* a full element read of a float tensor (or one whose dtype is unknown) */
static bool elem_read(const tl_node *n) {
  if (n->kind != TL_N_INDEX || !float_scalar(n->ty) || !n->lhs->ty || n->lhs->ty->kind != TY_TENSOR) return false;
  int dt = n->lhs->ty->dtype;
  for (const tl_node *a = n->args; a; a = a->next)
    if (a->kind == TL_N_RANGE) return false;
  return dt < 0 || dt == TL_F32 || dt == TL_F64;
}

static bool node_elem(const tl_node *n) {
  tl_node *x, *y;
  switch (n->kind) {
  case TL_N_INDEX: return elem_read(n);
  case TL_N_BINARY: return float_scalar(n->ty) && arith(n->op) && (elem(n->lhs) || elem(n->rhs));
  case TL_N_UNARY: return float_scalar(n->ty) && n->op == TL_TOK_MINUS && elem(n->lhs);
  case TL_N_CAST: return float_scalar(n->ty) && float_scalar(n->lhs->ty) && elem(n->lhs);
  case TL_N_IDENT: case TL_N_SELF: return n->var && n->var->elem;
  case TL_N_METHOD: case TL_N_CALL: return tl_sema_grad_math(n, &x, &y) && (elem(x) || elem(y));
  default: return false;
  }
}

static void set_flag(bool *flag, bool *changed) {
  if (*flag) return;
  *flag = true;
  *changed = true;
}

/* the variable a statement gives a value to, when it is a float scalar one */
static tl_var *target(const tl_node *n) {
  tl_var *v = NULL;
  if (n->kind == TL_N_LET && !n->lhs) v = n->var;
  if (n->kind == TL_N_ASSIGN && n->lhs->kind == TL_N_IDENT) v = n->lhs->var;
  return v && float_scalar(v->ty) && !v->captured ? v : NULL;
}

static void visit_elem(sema *s, tl_node *n, bool *changed) {
  (void)s;
  if (!(n->grad & TL_GRAD_ELEM) && node_elem(n)) {
    n->grad |= TL_GRAD_ELEM;
    *changed = true;
  }
  tl_var *v = target(n);
  if (v && elem(n->rhs)) set_flag(&v->elem, changed);
  /* `for x in t`: each x is an element read of t */
  if (n->kind == TL_N_FOR && n->var && float_scalar(n->var->ty) && n->lhs->ty && n->lhs->ty->kind == TY_TENSOR)
    set_flag(&n->var->elem, changed);
}

/* the user function a CALL or METHOD node calls, or NULL (a pattern's `E::B(x)` holds
 * its variant in ref: only the program's functions are taken) */
static tl_fninfo *user_fn(sema *s, const tl_node *n) {
  if ((n->kind != TL_N_CALL && n->kind != TL_N_METHOD) || !n->ref) return NULL;
  for (tl_fninfo *f = s->out->fns; f; f = f->next)
    if (f == n->ref) return f->partial ? NULL : f;
  return NULL;
}

/* a float scalar expression meets a tensor: every variable, call result and field it
 * reads, through arithmetic and math, meets one too */
static void mark(sema *s, tl_node *root, bool *changed) {
  tl_node *small[32], **st = small;
  size_t k = 0, cap = 32;
  st[k++] = root;
  while (k > 0) {
    tl_node *n = st[--k], *x = NULL, *y = NULL;
    if (!n || !float_scalar(n->ty)) continue;
    if (k + 2 > cap) {
      tl_node **bigger = malloc(sizeof *bigger * cap * 2);
      if (!bigger) { /* an error, not a gradient lost silently */
        tl_diag_oom(s->diag, root->line, root->col, "out of memory following element reads");
        break;
      }
      memcpy(bigger, st, sizeof *st * k);
      if (st != small) free(st);
      st = bigger, cap *= 2;
    }
    if (n->kind == TL_N_BINARY && arith(n->op)) x = n->lhs, y = n->rhs;
    else if ((n->kind == TL_N_UNARY && n->op == TL_TOK_MINUS) || n->kind == TL_N_CAST) x = n->lhs;
    else if (n->kind == TL_N_METHOD || n->kind == TL_N_CALL) {
      tl_fninfo *f = tl_sema_grad_math(n, &x, &y) ? NULL : user_fn(s, n);
      if (f) set_flag(&f->ret_meets, changed); /* a user function's result */
    } else if ((n->kind == TL_N_IDENT || n->kind == TL_N_SELF) && n->var) set_flag(&n->var->meets, changed);
    else if (n->kind == TL_N_FIELD && n->lhs->ty && n->lhs->ty->kind == TY_STRUCT && !tl_ty_is_tuple(n->lhs->ty) &&
             n->ival >= 0 && n->ival < n->lhs->ty->st->nfields)
      set_flag(&n->lhs->ty->st->fields[n->ival].meets, changed);
    if (x) st[k++] = x;
    if (y) st[k++] = y;
  }
  if (st != small) free(st);
}

static bool is_tensor(const tl_node *n) { return n && n->ty && n->ty->kind == TY_TENSOR; }

/* the field a FIELD node names in a struct (not a tuple), or NULL */
static tl_field_info *sema_grad_field(const tl_node *n) {
  const tl_ty *t = n->kind == TL_N_FIELD ? n->lhs->ty : NULL;
  if (!t || t->kind != TY_STRUCT || tl_ty_is_tuple(t) || n->ival < 0 || n->ival >= t->st->nfields) return NULL;
  return &t->st->fields[n->ival];
}

/* the numbers that go where a tensor or a plain number meeting one takes them */
static void visit_meets(sema *s, tl_node *n, bool *changed) {
  tl_node *x, *y;
  tl_field_info *fi;
  if (n->kind == TL_N_BINARY && is_tensor(n) && (arith(n->op) || n->op == TL_TOK_PERCENT)) {
    mark(s, n->lhs, changed);
    mark(s, n->rhs, changed);
  } else if (n->kind == TL_N_ASSIGN && n->op != TL_TOK_ASSIGN && is_tensor(n->lhs)) {
    mark(s, n->rhs, changed); /* t += x */
  } else if (n->kind == TL_N_ASSIGN && (fi = sema_grad_field(n->lhs)) && fi->meets) {
    mark(s, n->rhs, changed);
  } else if ((n->kind == TL_N_METHOD || n->kind == TL_N_CALL) && !n->ref && is_tensor(n) && diff_math(n->ival)) {
    x = n->kind == TL_N_METHOD ? n->lhs : n->args; /* t.pow(x), max(x, t) */
    for (y = n->args; y; y = y->next) mark(s, y, changed);
    mark(s, x, changed);
  } else if (user_fn(s, n)) {
    tl_fninfo *f = user_fn(s, n); /* a parameter that meets a tensor in the callee */
    int i = f->self ? 1 : 0;
    for (y = n->args; y && i < f->nparams + (f->self ? 1 : 0); y = y->next, i++)
      if (f->params[i]->meets && f->params[i]->kind != VAR_PARAM_REF) mark(s, y, changed);
  } else if (n->kind == TL_N_STRUCT_LIT && n->ty && n->ty->kind == TY_STRUCT) {
    for (y = n->args; y; y = y->next)
      if (y->kind == TL_N_FIELD_INIT && y->ival >= 0 && y->ival < n->ty->st->nfields && n->ty->st->fields[y->ival].meets)
        mark(s, y->lhs, changed);
  } else if (n->kind == TL_N_ARRAY && !n->name && is_tensor(n)) { /* [w[0], w[1]]: stacked */
    for (y = n->args; y; y = y->next) mark(s, y, changed);
  } else if (n->kind == TL_N_RETURN && n->lhs && s->fn->ret_meets) {
    mark(s, n->lhs, changed);
  }
  tl_var *v = target(n);
  if (v && v->meets) mark(s, n->rhs, changed);
}

/* the element reads of an ELEM number that goes where no history is kept (t[i] = x,
 * t.clamp(x, y), Tensor::full(s, x), t.masked_fill(m, x)) get TL_GRAD_CHECK: the
 * generator checks their tensors at run time (cheap: no 0-d tensor is made) */
static void mark_check(sema *s, tl_node *root) {
  tl_node *small[32], **st = small;
  size_t k = 0, cap = 32;
  st[k++] = root;
  while (k > 0) {
    tl_node *n = st[--k], *x = NULL, *y = NULL;
    if (!n || !elem(n)) continue;
    if (k + 2 > cap) {
      tl_node **bigger = malloc(sizeof *bigger * cap * 2);
      if (!bigger) { /* an error, not a warning missed */
        tl_diag_oom(s->diag, root->line, root->col, "out of memory following element reads");
        break;
      }
      memcpy(bigger, st, sizeof *st * k);
      if (st != small) free(st);
      st = bigger, cap *= 2;
    }
    if (n->kind == TL_N_INDEX || n->kind == TL_N_IDENT || n->kind == TL_N_SELF) n->grad |= TL_GRAD_CHECK;
    else if (n->kind == TL_N_BINARY) x = n->lhs, y = n->rhs;
    else if (n->kind == TL_N_UNARY || n->kind == TL_N_CAST) x = n->lhs;
    else tl_sema_grad_math(n, &x, &y);
    if (x) st[k++] = x;
    if (y) st[k++] = y;
  }
  if (st != small) free(st);
}

static void visit_check(sema *s, tl_node *n, bool *changed) {
  (void)changed;
  if (n->kind == TL_N_ASSIGN && n->lhs->kind == TL_N_INDEX && is_tensor(n->lhs->lhs)) mark_check(s, n->rhs);
  if ((n->kind == TL_N_METHOD || n->kind == TL_N_CALL) && !n->ref &&
      (n->ival == B_CLAMP || n->ival == B_MASKED_FILL || n->ival == B_FULL))
    for (tl_node *a = n->args; a; a = a->next) mark_check(s, a);
}

/* Post-order, without recursion (a chain of 100,000 terms is a tree that deep); a
 * comprehension's body is an engine graph of its own (gen_compr.c), not walked */
typedef void (*visit_fn)(sema *s, tl_node *n, bool *changed);

static void post_order(sema *s, tl_node *root, visit_fn f, bool *changed) {
  typedef struct {
    tl_node *n;
    bool done;
  } item;
  item small[64], *st = small;
  size_t k = 0, cap = 64;
  st[k++] = (item){root, false};
  while (k > 0) {
    item e = st[--k];
    if (!e.n || e.n->kind == TL_N_COMPR) continue;
    if (e.done) {
      f(s, e.n, changed);
      continue;
    }
    size_t need = k + 10;
    for (tl_node *c = e.n->stmts; c; c = c->next) need++;
    for (tl_node *c = e.n->args; c; c = c->next) need++;
    if (need > cap) {
      size_t ncap = cap;
      while (ncap < need) ncap *= 2;
      item *bigger = malloc(sizeof *bigger * ncap);
      if (!bigger) { /* an error: flags missed here would make wrong code */
        tl_diag_oom(s->diag, e.n->line, e.n->col, "out of memory following element reads");
        break;
      }
      memcpy(bigger, st, sizeof *st * k);
      if (st != small) free(st);
      st = bigger, cap = ncap;
    }
    st[k++] = (item){e.n, true};
    tl_node *kids[] = {e.n->lhs, e.n->rhs, e.n->cond, e.n->then, e.n->els, e.n->body, e.n->value};
    for (size_t i = 0; i < sizeof kids / sizeof kids[0]; i++)
      if (kids[i]) st[k++] = (item){kids[i], false};
    for (tl_node *c = e.n->stmts; c; c = c->next) st[k++] = (item){c, false};
    for (tl_node *c = e.n->args; c; c = c->next) st[k++] = (item){c, false};
  }
  if (st != small) free(st);
}

static bool checked(const tl_fninfo *f) { return !f->partial && !f->fn->broken && f->fn->body; }

/* the 0-d tensor kept beside v (gen_grad.c), named after it */
static void make_shadow(sema *s, tl_var *v) {
  if (v->shadow || !v->elem || !v->meets) return;
  tl_var *sh = tl_arena_alloc(s->arena, sizeof *sh);
  char *name = tl_arena_alloc(s->arena, strlen(v->name) + 4);
  if (!sh || !name) return;
  strcpy(name, v->name[0] == '$' ? v->name + 1 : v->name);
  strcat(name, "__g");
  *sh = *v;
  sh->name = name;
  sh->ty = tl_sema_tensor(s, tl_ty_dtype(v->ty), 0);
  sh->kind = VAR_LOCAL;
  sh->elem = sh->meets = false;
  sh->let = NULL;
  v->shadow = sh;
}

static bool shadow_stmt(tl_node *n, void *sp) {
  sema *s = sp;
  if ((n->kind == TL_N_LET && !n->lhs) || n->kind == TL_N_FOR)
    if (n->var && float_scalar(n->var->ty) && !n->var->captured) make_shadow(s, n->var);
  return false;
}

/* does n, a float number, read a tensor element through arithmetic and math? */
static bool reads_elem(const tl_node *n, int depth) {
  tl_node *x, *y;
  if (!n || !float_scalar(n->ty) || depth > 1000) return false;
  if (elem_read(n)) return true;
  if (n->kind == TL_N_BINARY && arith(n->op)) return reads_elem(n->lhs, depth + 1) || reads_elem(n->rhs, depth + 1);
  if ((n->kind == TL_N_UNARY && n->op == TL_TOK_MINUS) || (n->kind == TL_N_CAST && float_scalar(n->lhs->ty)))
    return reads_elem(n->lhs, depth + 1);
  if ((n->kind == TL_N_METHOD || n->kind == TL_N_CALL) && tl_sema_grad_math(n, &x, &y))
    return reads_elem(x, depth + 1) || reads_elem(y, depth + 1);
  return false;
}

/* the parts of n that read elements become 0-d tensors; the generator then builds them
 * as tensor operations (gen.c, gen_builtin.c), the reads as views (tlrt_index) */
static void retype(sema *s, tl_node *n, int depth) {
  tl_node *x = NULL, *y = NULL;
  if (!reads_elem(n, depth)) return;
  int dt = tl_ty_dtype(n->ty);
  if (n->kind == TL_N_INDEX) dt = n->lhs->ty->dtype; /* the view's own */
  else if (n->kind == TL_N_BINARY) x = n->lhs, y = n->rhs;
  else if (n->kind == TL_N_UNARY || n->kind == TL_N_CAST) x = n->lhs;
  else tl_sema_grad_math(n, &x, &y);
  if (x) retype(s, x, depth + 1);
  if (y) retype(s, y, depth + 1);
  n->ty = tl_sema_tensor(s, dt, 0);
}

bool tl_sema_grad_promote(sema *s, tl_node *n) {
  if (!reads_elem(n, 0)) return false;
  retype(s, n, 0);
  return true;
}

/* ELEM within each function, then what meets a tensor across the program (a parameter
 * meets one in its callee, a result in a caller), then the shadows */
void tl_sema_grad_program(sema *s) {
  bool changed = true;
  for (tl_fninfo *f = s->out->fns; f; f = f->next) {
    if (!checked(f)) continue;
    changed = true;
    for (int i = 0; changed && i < 1000 && !s->diag->oom; i++) {
      changed = false;
      post_order(s, f->fn->body, visit_elem, &changed);
    }
  }
  changed = true;
  for (int i = 0; changed && i < 1000 && !s->diag->oom; i++) {
    changed = false;
    for (tl_fninfo *f = s->out->fns; f; f = f->next) {
      if (!checked(f)) continue;
      s->fn = f;
      post_order(s, f->fn->body, visit_meets, &changed);
      if (f->ret_meets) mark(s, f->fn->body->value, &changed);
    }
  }
  for (tl_fninfo *f = s->out->fns; f; f = f->next)
    if (checked(f)) {
      tl_ast_find(f->fn->body, shadow_stmt, s);
      post_order(s, f->fn->body, visit_check, &changed);
    }
}
