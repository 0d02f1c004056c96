/* gen_iter.c — code for iterator chains, sort_by and Ordering (sema_iter.c checks them):
 * in: B_ITER calls (a consumer at the end of a chain, sort_by, cmp...) and `for` loops
 * over a chain; out: C. A chain has no run-time value: its consumer walks down to the
 * source Vec (or HashMap) and emits ONE loop over it, each element taken through the
 * adapters in order (map: a call giving the new element; filter: a call and `continue`;
 * enumerate, zip: a counter and a tuple; take, skip: a counter), then the consumer's
 * step. So the closures' side effects interleave element by element, as Rust's lazy
 * adapters do, and no intermediate Vec is ever made. The source is borrowed for the
 * loop (a `for` loop holds a reference, as `for x in v` does, since its body may write
 * v); an element is borrowed from it, an adapter's result owned until the next one
 * takes it or the turn ends. A closure written in place is called by its C function's
 * name, so the C compiler may inline it into the loop. */
#include <string.h>

#include "lang/gen/gen_impl.h"

#define ITER_MAX 64

typedef struct {
  const char *c;
  tl_ty *ty;
  bool owned; /* a reference of its own, released when the element is dropped */
} elem;

typedef struct {
  const char *fn, *direct; /* the closure (a tlrt_fnobj * variable) and its C function, if known */
  const tl_ty *fty;
  const char *cnt, *lim;   /* enumerate, take, skip, zip: a counter; take, skip: n; zip: the other Vec */
  const char *reuse;       /* enumerate, zip of numbers into a closure: one pair object, reused
                              while only the loop holds it */
} step;

typedef struct {
  tl_node *ad[ITER_MAX]; /* the adapters, from the source's on */
  step st[ITER_MAX];
  int n;
  const char *src; /* the source Vec or HashMap (NULL for a range) */
  const char *lo;  /* a range's start */
  const char *len; /* how many elements the source has */
  tl_ty *sty;
  tl_ty *ity; /* the source's iterator type: its element, a HashMap's (K, V) tuple */
  bool rev;
  bool split;          /* the last step's pair is not made: its parts are in part[] */
  const char *part[2];
} chain;

static const char *tmp(gen *g) { return tl_gen_fmt(g, "t%d", ++g->ntmp); }
static int ekind(const tl_ty *t) { return t->kind == TY_TENSOR ? TLRT_EK_TENSOR : tl_ty_is_refcounted(t) ? TLRT_EK_OBJ : TLRT_EK_PLAIN; }
static const char *at(gen *g, const tl_ty *t, const char *arr, const char *i) {
  return tl_gen_fmt(g, "((%s *)%s)[%s]", tl_gen_ctype(g, t), arr, i);
}

/* e as a reference the consumer owns: moved when owned, else a copy */
static const char *take(gen *g, elem e) {
  return e.owned || !tl_ty_is_refcounted(e.ty) ? e.c : tl_gen_retain_expr(g, e.ty, e.c);
}
static void drop(gen *g, elem e) {
  if (e.owned) tl_gen_emit(g, "%s", tl_gen_release_call(g, e.ty, e.c));
}

/* a closure argument, evaluated once before the loop */
static void closure_arg(gen *g, step *s, tl_node *a) {
  int before = g->nclosures;
  cv f = tl_gen_expr(g, a);
  s->fn = tmp(g);
  tl_gen_emit(g, "tlrt_fnobj *%s = %s;", s->fn, f.c);
  s->direct = a->kind == TL_N_CLOSURE ? tl_gen_fmt(g, "tlcf_%d", before + 1) : NULL;
  s->fty = a->ty;
}

static const char *call(gen *g, const step *s, const char *const *args, int n) {
  if (!s->direct) return tl_gen_closure_call_expr(g, s->fn, args, n, s->fty);
  const char *c = tl_gen_fmt(g, "%s(%s", s->direct, s->fn);
  for (int i = 0; i < n; i++) c = tl_gen_fmt(g, "%s, %s", c, args[i]);
  return tl_gen_fmt(g, "%s)", c);
}

/* a call's value in a new C variable: owned when refcounted */
static elem call_value(gen *g, const step *s, const char *const *args, int n) {
  tl_ty *r = s->fty->fn_ret;
  const char *v = tmp(g);
  tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, r), v, call(g, s, args, n));
  return (elem){v, r, tl_ty_is_refcounted(r)};
}

/* a new (a, b) tuple of type t, owning its elements */
static elem pair(gen *g, tl_ty *t, const char *a, const char *b) {
  const char *v = tmp(g), *c = t->st->cname;
  tl_gen_emit(g, "struct %s *%s = tlrt_obj_new(R, sizeof(struct %s), %s__drop);", c, v, c, c);
  tl_gen_emit(g, "%s->f_0 = %s;", v, a);
  tl_gen_emit(g, "%s->f_1 = %s;", v, b);
  return (elem){v, t, true};
}

/* ---- the loop ---- */

static bool plain_pair(const tl_ty *t) {
  return !tl_ty_is_refcounted(tl_ty_tuple_elem(t, 0)) && !tl_ty_is_refcounted(tl_ty_tuple_elem(t, 1));
}

/* a pair of numbers (enumerate, zip) whose next step only lends it to a closure can be
 * one object, refilled each turn while nothing else holds it: no allocation a turn */
static bool reusable(const chain *ch, int j, int consumer) {
  const tl_node *a = ch->ad[j];
  if ((a->len != IT_ENUMERATE && a->len != IT_ZIP) || !plain_pair(a->ty->st->targs[0])) return false;
  int next = j + 1 < ch->n ? (int)ch->ad[j + 1]->len : consumer;
  return next == IT_MAP || next == IT_FILTER || next == IT_ANY || next == IT_ALL || next == IT_FOLD || next == IT_COUNT;
}

/* the chain under recv, its source and each adapter's state, evaluated before the loop;
 * hold: the loop keeps references to its Vecs (a `for` body may write them) */
static void chain_begin(gen *g, chain *ch, tl_node *recv, bool hold, int consumer) {
  tl_node *stack[ITER_MAX];
  int k = 0;
  tl_node *r = recv;
  for (; r->kind == TL_N_METHOD && r->ival == B_ITER && r->len != IT_ITER; r = r->lhs) {
    if (k == ITER_MAX) {
      tl_gen_fail(g, r, "an iterator chain of more than 64 steps");
      break;
    }
    stack[k++] = r;
  }
  ch->n = k;
  ch->rev = ch->split = false;
  for (int i = 0; i < k; i++) ch->ad[i] = stack[k - 1 - i];
  tl_node *src = r->lhs;
  ch->sty = src->ty;
  ch->ity = r->ty;
  if (src->kind == TL_N_RANGE) { /* `(a..b)`: i64 from a up to b, b excluded */
    ch->src = NULL;
    ch->lo = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, src->lhs).c);
    const char *hi = tl_gen_expr(g, src->rhs).c;
    ch->len = tl_gen_new_temp(g, TY_I64_T, tl_gen_fmt(g, "(%s > %s ? %s - %s : 0)", hi, ch->lo, hi, ch->lo));
  } else if (hold) {
    ch->src = tl_gen_new_temp(g, src->ty, tl_gen_take(g, tl_gen_expr(g, src)));
    g->temps[g->ntemps - 1].taken = false; /* the loop's own reference, released after it */
  } else {
    cv v = tl_gen_expr(g, src);
    ch->src = tmp(g);
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, src->ty), ch->src, v.c);
  }
  if (ch->src) ch->len = tl_gen_fmt(g, "%s->len", ch->src);
  for (int i = 0; i < k; i++) {
    tl_node *a = ch->ad[i];
    step *st = &ch->st[i];
    memset(st, 0, sizeof *st);
    switch (a->len) {
    case IT_MAP: case IT_FILTER: closure_arg(g, st, a->args); break;
    case IT_REV: ch->rev = true; break;
    case IT_TAKE: case IT_SKIP:
      st->lim = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a->args).c);
      st->cnt = tl_gen_new_temp(g, TY_I64_T, "0");
      break;
    case IT_ZIP: {
      tl_node *o = a->args->kind == TL_N_METHOD && a->args->ival == B_ITER && a->args->len == IT_ITER ? a->args->lhs : a->args;
      cv ov = tl_gen_expr(g, o);
      if (hold) {
        st->lim = tl_gen_new_temp(g, o->ty, tl_gen_take(g, ov));
        g->temps[g->ntemps - 1].taken = false;
      } else {
        st->lim = tmp(g);
        tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, o->ty), st->lim, ov.c);
      }
      st->cnt = tl_gen_new_temp(g, TY_I64_T, "0");
      break;
    }
    case IT_ENUMERATE: st->cnt = tl_gen_new_temp(g, TY_I64_T, "0"); break;
    default: break;
    }
    if (reusable(ch, i, consumer)) st->reuse = tl_gen_new_temp(g, a->ty->st->targs[0], "NULL"); /* released after */
  }
}

/* the pair of step st (type t) from a and b: a new object, the reused one, or (the
 * last step of a split chain) its parts in C variables */
static elem make_pair(gen *g, chain *ch, const step *st, bool last, tl_ty *t, const char *a, const char *b) {
  if (last && ch->split) {
    for (int i = 0; i < 2; i++) {
      ch->part[i] = tmp(g);
      tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, tl_ty_tuple_elem(t, i)), ch->part[i], i ? b : a);
    }
    return (elem){NULL, t, false};
  }
  if (!st->reuse) return pair(g, t, a, b);
  const char *p = st->reuse, *c = t->st->cname;
  tl_gen_emit(g, "if (!%s || ((tlrt_obj *)%s)->rc != 1) {", p, p);
  tl_gen_emit(g, "  tlrt_release(R, %s);", p);
  tl_gen_emit(g, "  %s = tlrt_obj_new(R, sizeof(struct %s), %s__drop);", p, c, c);
  tl_gen_emit(g, "}");
  tl_gen_emit(g, "%s->f_0 = %s;", p, a);
  tl_gen_emit(g, "%s->f_1 = %s;", p, b);
  return (elem){p, t, false}; /* the loop's: borrowed by what follows */
}

/* opens the loop and takes the turn's element through the adapters */
static elem chain_open(gen *g, chain *ch) {
  const char *k = tmp(g), *i = tmp(g), *s = ch->src;
  tl_gen_emit(g, "for (int64_t %s = 0; %s < %s; %s++) {", k, k, ch->len, k);
  g->indent++;
  tl_gen_emit(g, "int64_t %s = %s;", i, ch->rev ? tl_gen_fmt(g, "%s - 1 - %s", ch->len, k) : k);
  for (int j = 0; j < ch->n; j++) { /* Take and Zip stop before pulling another element */
    if (ch->ad[j]->len == IT_TAKE) tl_gen_emit(g, "if (%s >= %s) break;", ch->st[j].cnt, ch->st[j].lim);
    if (ch->ad[j]->len == IT_ZIP) tl_gen_emit(g, "if (%s >= %s->len) break;", ch->st[j].cnt, ch->st[j].lim);
  }
  elem e;
  if (!s) { /* a range: its i-th number */
    e = (elem){tmp(g), TY_I64_T, false};
    tl_gen_emit(g, "int64_t %s = %s + %s;", e.c, ch->lo, i);
  } else if (tl_ty_is_vec(ch->sty)) {
    tl_ty *t = ch->sty->st->targs[0];
    e = (elem){tmp(g), t, false};
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, t), e.c, at(g, t, tl_gen_fmt(g, "%s->data", s), i));
  } else { /* a HashMap's (key, value) */
    tl_ty *kt = ch->sty->st->targs[0], *vt = ch->sty->st->targs[1];
    tl_ty *tt = ch->ity->st->targs[0];
    const char *key = at(g, kt, tl_gen_fmt(g, "%s->keys", s), i), *val = at(g, vt, tl_gen_fmt(g, "%s->vals", s), i);
    e = pair(g, tt, take(g, (elem){key, kt, false}), take(g, (elem){val, vt, false}));
  }
  for (int j = 0; j < ch->n; j++) {
    tl_node *a = ch->ad[j];
    step *st = &ch->st[j];
    switch (a->len) {
    case IT_MAP: {
      elem r = call_value(g, st, &e.c, 1);
      drop(g, e);
      e = r;
      break;
    }
    case IT_FILTER:
      tl_gen_emit(g, "if (!%s) {", call(g, st, &e.c, 1));
      g->indent++;
      drop(g, e);
      tl_gen_emit(g, "continue;");
      g->indent--;
      tl_gen_emit(g, "}");
      break;
    case IT_ENUMERATE: e = make_pair(g, ch, st, j == ch->n - 1, a->ty->st->targs[0], tl_gen_fmt(g, "%s++", st->cnt), take(g, e)); break;
    case IT_ZIP: {
      tl_ty *ot = a->ty->st->targs[0]->st->fields[1].ty;
      tl_ty *tt = a->ty->st->targs[0];
      const char *o = at(g, ot, tl_gen_fmt(g, "%s->data", st->lim), tl_gen_fmt(g, "%s++", st->cnt));
      e = make_pair(g, ch, st, j == ch->n - 1, tt, take(g, e), take(g, (elem){o, ot, false}));
      break;
    }
    case IT_TAKE: tl_gen_emit(g, "%s++;", st->cnt); break;
    case IT_SKIP:
      tl_gen_emit(g, "if (%s < %s) {", st->cnt, st->lim);
      g->indent++;
      tl_gen_emit(g, "%s++;", st->cnt);
      drop(g, e);
      tl_gen_emit(g, "continue;");
      g->indent--;
      tl_gen_emit(g, "}");
      break;
    default: break;
    }
  }
  return e;
}

static void chain_close(gen *g) {
  g->indent--;
  tl_gen_emit(g, "}");
}

/* ---- consumers ---- */

static const char *cmp_expr(gen *g, const tl_ty *t, const char *a, const char *b) {
  if (t->kind == TY_STR) return tl_gen_fmt(g, "tlrt_str_cmp(%s, %s)", a, b);
  return tl_gen_fmt(g, "((%s > %s) - (%s < %s))", a, b, a, b);
}

/* a new Option of type t: None, or Some(val) when have (a C condition) holds */
static cv option_of(gen *g, tl_ty *t, const char *have, const char *val) {
  const tl_struct_info *st = t->st;
  cv o = tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_obj_new(R, sizeof(struct %s), %s__drop)", st->cname, st->cname));
  tl_gen_emit(g, "if (%s) {", have);
  tl_gen_emit(g, "  %s->tag = 1;", o.c);
  tl_gen_emit(g, "  %s->f_%s = %s;", o.c, st->fields[0].name, val);
  tl_gen_emit(g, "}");
  return o;
}

/* a (key, value) pair e into map m: a new entry, or the value replaced (the key that
 * was there stays, as insert keeps it) */
static void collect_pair(gen *g, const tl_ty *mt, const char *m, elem e, const tl_node *n) {
  tl_ty *k = mt->st->targs[0], *v = mt->st->targs[1];
  const char *key = tmp(g), *found = tmp(g), *slot = tmp(g);
  tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, k), key, take(g, (elem){tl_gen_fmt(g, "%s->f_0", e.c), k, false}));
  tl_gen_emit(g, "bool %s;", found);
  tl_gen_emit(g, "int64_t %s = tlrt_map_slot(R, %s, &%s, &%s, %d, %d);", slot, m, key, found, n->line, n->col);
  const char *val = at(g, v, tl_gen_fmt(g, "%s->vals", m), slot);
  tl_gen_emit(g, "if (%s) {", found);
  g->indent++;
  if (tl_ty_is_refcounted(k)) tl_gen_emit(g, "%s", tl_gen_release_call(g, k, key));
  if (tl_ty_is_refcounted(v)) tl_gen_emit(g, "%s", tl_gen_release_call(g, v, val));
  g->indent--;
  tl_gen_emit(g, "}");
  tl_gen_emit(g, "%s = %s;", val, take(g, (elem){tl_gen_fmt(g, "%s->f_1", e.c), v, false}));
  if (mt->st->flavor == 'B') tl_gen_emit(g, "if (!%s) tlrt_map_place_sorted(R, %s, %s, %s__kcmp);", found, m, slot, mt->st->cname);
  drop(g, e);
}

static cv consume(gen *g, tl_node *n) {
  int m = (int)n->len;
  chain ch;
  chain_begin(g, &ch, n->lhs, false, m);
  step f = {0};
  const char *acc = NULL, *have = NULL;
  tl_ty *et = n->lhs->ty->st->targs[0];
  cv out = {0};
  switch (m) {
  case IT_COLLECT:
    out = tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_vec_new(R, sizeof(%s), %d, %s, \"collect\", %d, %d)", tl_gen_ctype(g, et), ekind(et),
                                            ch.len, n->line, n->col));
    break;
  case IT_COLLECT_MAP: {
    tl_struct_info *st = n->ty->st;
    tl_ty *k = st->targs[0], *v = st->targs[1];
    out = tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_map_new(R, sizeof(%s), %d, sizeof(%s), %d, %s__hash, %s__keq)", tl_gen_ctype(g, k),
                                            ekind(k), tl_gen_ctype(g, v), ekind(v), st->cname, st->cname));
    break;
  }
  case IT_SUM: case IT_COUNT: acc = tl_gen_new_temp(g, n->ty, "0"); break;
  case IT_ANY: case IT_ALL:
    closure_arg(g, &f, n->args);
    acc = tl_gen_new_temp(g, TY_BOOL_T, m == IT_ALL ? "true" : "false");
    break;
  case IT_FOLD: {
    cv init = tl_gen_expr(g, n->args);
    acc = tmp(g);
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, n->ty), acc, tl_gen_take(g, init));
    closure_arg(g, &f, n->args->next);
    break;
  }
  case IT_POSITION:
    closure_arg(g, &f, n->args);
    acc = tl_gen_new_temp(g, TY_I64_T, "0");
    have = tl_gen_new_temp(g, TY_BOOL_T, "false");
    break;
  case IT_REDUCE:
    closure_arg(g, &f, n->args);
    acc = tmp(g);
    tl_gen_emit(g, "%s %s = 0;", tl_gen_ctype(g, et), acc);
    have = tl_gen_new_temp(g, TY_BOOL_T, "false");
    break;
  default: /* min, max */
    acc = tmp(g);
    tl_gen_emit(g, "%s %s = 0;", tl_gen_ctype(g, et), acc);
    have = tl_gen_new_temp(g, TY_BOOL_T, "false");
    break;
  }
  elem e = chain_open(g, &ch);
  switch (m) {
  case IT_COLLECT: tl_gen_vec_push(g, et, out.c, n, take(g, e)); break;
  case IT_COLLECT_MAP: collect_pair(g, n->ty, out.c, e, n); break;
  case IT_SUM:
    if (tl_ty_is_half(n->ty)) /* f16, bf16: each partial sum rounded, as their `+` */
      tl_gen_emit(g, "%s = %s;", acc, tl_gen_float_result(g, n->ty, tl_gen_fmt(g, "((double)%s + (double)%s)", acc, e.c)));
    else tl_gen_emit(g, "%s += %s;", acc, e.c);
    break;
  case IT_COUNT: tl_gen_emit(g, "%s++;", acc); drop(g, e); break;
  case IT_ANY: case IT_ALL: {
    const char *b = tl_gen_new_temp(g, TY_BOOL_T, call(g, &f, &e.c, 1));
    drop(g, e);
    tl_gen_emit(g, "if (%s%s) { %s = %s; break; }", m == IT_ALL ? "!" : "", b, acc, m == IT_ALL ? "false" : "true");
    break;
  }
  case IT_FOLD: {
    const char *args[2] = {acc, e.c};
    elem r = call_value(g, &f, args, 2);
    if (tl_ty_is_refcounted(n->ty)) tl_gen_emit(g, "%s", tl_gen_release_call(g, n->ty, acc));
    tl_gen_emit(g, "%s = %s;", acc, r.c);
    drop(g, e);
    break;
  }
  case IT_POSITION: {
    const char *b = tl_gen_new_temp(g, TY_BOOL_T, call(g, &f, &e.c, 1));
    drop(g, e);
    tl_gen_emit(g, "if (%s) { %s = true; break; }", b, have);
    tl_gen_emit(g, "%s++;", acc);
    break;
  }
  case IT_REDUCE: {
    tl_gen_emit(g, "if (!%s) { %s = %s; %s = true; }", have, acc, take(g, e), have);
    tl_gen_emit(g, "else {");
    g->indent++;
    const char *args[2] = {acc, e.c};
    elem r = call_value(g, &f, args, 2);
    if (tl_ty_is_refcounted(et)) tl_gen_emit(g, "%s", tl_gen_release_call(g, et, acc));
    tl_gen_emit(g, "%s = %s;", acc, r.c);
    drop(g, e);
    g->indent--;
    tl_gen_emit(g, "}");
    break;
  }
  default: { /* min keeps the first of equal elements, max the last, as Rust's do */
    const char *c = cmp_expr(g, et, e.c, acc);
    tl_gen_emit(g, "if (!%s || %s %s 0) {", have, c, m == IT_MIN ? "<" : ">=");
    g->indent++;
    if (tl_ty_is_refcounted(et)) tl_gen_emit(g, "if (%s) %s", have, tl_gen_release_call(g, et, acc));
    tl_gen_emit(g, "%s = %s;", acc, take(g, e));
    tl_gen_emit(g, "%s = true;", have);
    g->indent--;
    if (e.owned) {
      tl_gen_emit(g, "} else {");
      tl_gen_emit(g, "  %s", tl_gen_release_call(g, e.ty, e.c));
    }
    tl_gen_emit(g, "}");
    break;
  }
  }
  chain_close(g);
  switch (m) {
  case IT_COLLECT: case IT_COLLECT_MAP: return out;
  case IT_FOLD: return tl_ty_is_refcounted(n->ty) ? tl_gen_adopt_temp(g, acc, n->ty) : tl_gen_scalar(acc, n->ty);
  case IT_MIN: case IT_MAX: case IT_REDUCE: case IT_POSITION: return option_of(g, n->ty, have, acc);
  default: return tl_gen_scalar(acc, n->ty);
  }
}

/* `for (a, b) in v.iter().enumerate()` over numbers: the parser's `let (a, b) = $for;`
 * opening the body, which the loop does itself, the pair never made (NULL: not so) */
static tl_node *split_let(const chain *ch, tl_node *n) {
  tl_node *let = n->body->stmts;
  if (!ch->n || (ch->ad[ch->n - 1]->len != IT_ENUMERATE && ch->ad[ch->n - 1]->len != IT_ZIP)) return NULL;
  if (!plain_pair(ch->ad[ch->n - 1]->ty->st->targs[0]) || !let || let->kind != TL_N_LET || !let->lhs ||
      let->lhs->kind != TL_N_TUPLE || !let->rhs || let->rhs->kind != TL_N_IDENT || strcmp(let->rhs->name, "$for"))
    return NULL;
  int k = 0;
  for (tl_node *p = let->lhs->args; p; p = p->next, k++)
    if (p->kind != TL_N_IDENT) return NULL;
  return k == 2 ? let : NULL;
}

/* `for x in chain { .. }`: x owns its element, a local of the turn */
void tl_gen_iter_for(gen *g, tl_node *n) {
  tl_var *x = n->var;
  tl_gen_emit(g, "{");
  g->indent++;
  int mark = g->ntemps;
  chain ch;
  chain_begin(g, &ch, n->lhs, true, -1);
  tl_node *let = split_let(&ch, n);
  ch.split = let != NULL;
  elem e = chain_open(g, &ch);
  if (let) { /* the pattern's names bound to the parts; the body after the `let` */
    int i = 0;
    for (tl_node *p = let->lhs->args; p; p = p->next, i++)
      if (p->var) tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, p->var->ty), tl_gen_var_ref(g, p->var), ch.part[i]);
    n->body->stmts = let->next;
    tl_gen_loop_body(g, n, n->body, NULL);
    n->body->stmts = let;
  } else {
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, x->ty), tl_gen_var_ref(g, x), take(g, e));
    tl_gen_loop_body(g, n, n->body, tl_ty_is_refcounted(x->ty) ? x : NULL);
  }
  chain_close(g);
  tl_gen_release_temps(g, mark);
  g->indent--;
  tl_gen_emit(g, "}");
}

/* ---- sort_by, sort_by_key ---- */

/* the comparator: a function in g->side calling the closure on two elements */
static void comparator(gen *g, const char *name, const step *f, tl_ty *et, bool key) {
  tl_strbuf *saved = g->out;
  int indent = g->indent;
  g->out = g->side;
  g->indent = 0;
  tl_gen_emit(g, "static int %s(void *ctx, const void *a, const void *b) {", name);
  g->indent = 1;
  step s = *f;
  s.fn = "f";
  tl_gen_emit(g, "tlrt_fnobj *f = ctx;");
  const char *ct = tl_gen_ctype(g, et);
  const char *x = tl_gen_fmt(g, "(*(%s *)a)", ct), *y = tl_gen_fmt(g, "(*(%s *)b)", ct);
  if (!key) {
    const char *args[2] = {x, y};
    tl_gen_emit(g, "%s o = %s;", tl_gen_ctype(g, f->fty->fn_ret), call(g, &s, args, 2));
    tl_gen_emit(g, "int r = (int)o->tag - 1;");
    tl_gen_emit(g, "tlrt_release(R, o);");
  } else {
    tl_ty *kt = f->fty->fn_ret;
    tl_gen_emit(g, "%s ka = %s;", tl_gen_ctype(g, kt), call(g, &s, &x, 1));
    tl_gen_emit(g, "%s kb = %s;", tl_gen_ctype(g, kt), call(g, &s, &y, 1));
    tl_gen_emit(g, "int r = %s;", cmp_expr(g, kt, "ka", "kb"));
    if (tl_ty_is_refcounted(kt)) {
      tl_gen_emit(g, "%s", tl_gen_release_call(g, kt, "ka"));
      tl_gen_emit(g, "%s", tl_gen_release_call(g, kt, "kb"));
    }
  }
  tl_gen_emit(g, "return r;");
  g->indent = 0;
  tl_gen_emit(g, "}\n");
  g->out = saved;
  g->indent = indent;
}

static cv sort_by(gen *g, tl_node *n) {
  step f = {0};
  closure_arg(g, &f, n->args);
  tl_ty *et = n->lhs->ty->st->targs[0];
  const char *name = tl_gen_fmt(g, "tli_cmp_%d", ++g->nclosures);
  comparator(g, name, &f, et, n->len == IT_SORT_BY_KEY);
  const char *p = tl_gen_place(g, n->lhs);
  tl_gen_emit(g, "%s = tlrt_vec_mut(R, %s, %d, %d);", p, p, n->line, n->col);
  tl_gen_emit(g, "tlrt_vec_sort_by(R, %s, %s, %s);", p, name, f.fn);
  return tl_gen_scalar("0", TY_UNIT_T);
}

/* ---- cmp, partial_cmp, Ordering::reverse ---- */

static cv ordering(gen *g, tl_ty *t, const char *tag) {
  const char *c = t->st->cname;
  cv o = tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_obj_new(R, sizeof(struct %s), %s__drop)", c, c));
  tl_gen_emit(g, "%s->tag = %s;", o.c, tag);
  return o;
}

static cv compare(gen *g, tl_node *n) {
  cv a = tl_gen_expr(g, n->lhs);
  if (n->len == IT_ORD_REVERSE) return ordering(g, n->ty, tl_gen_fmt(g, "2 - %s->tag", a.c));
  const char *x = tl_gen_new_temp(g, TY_I64_T, "0");
  cv b = tl_gen_expr(g, n->args);
  if (n->len == IT_CMP) {
    tl_gen_emit(g, "%s = %s;", x, cmp_expr(g, n->lhs->ty, a.c, b.c));
    return ordering(g, n->ty, tl_gen_fmt(g, "%s + 1", x));
  }
  /* partial_cmp: None when either is NaN */
  tl_gen_emit(g, "%s = %s < %s ? 0 : %s == %s ? 1 : %s > %s ? 2 : -1;", x, a.c, b.c, a.c, b.c, a.c, b.c);
  tl_ty *ot = n->ty->st->fields[0].ty;
  const char *o = tmp(g), *c = ot->st->cname;
  tl_gen_emit(g, "struct %s *%s = NULL;", c, o);
  tl_gen_emit(g, "if (%s >= 0) {", x);
  tl_gen_emit(g, "  %s = tlrt_obj_new(R, sizeof(struct %s), %s__drop);", o, c, c);
  tl_gen_emit(g, "  %s->tag = %s;", o, x);
  tl_gen_emit(g, "}");
  return option_of(g, n->ty, tl_gen_fmt(g, "%s >= 0", x), o);
}

cv tl_gen_iter_call(gen *g, tl_node *n) {
  switch (n->len) {
  case IT_SORT_BY: case IT_SORT_BY_KEY: return sort_by(g, n);
  case IT_CMP: case IT_PARTIAL_CMP: case IT_ORD_REVERSE: return compare(g, n);
  case IT_STR_CHARS: /* a chain's source: the String's chars as a new Vec<char> */
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_str_chars(R, %s, %d, %d)", tl_gen_expr(g, n->lhs).c, n->line, n->col));
  default: return consume(g, n);
  }
}
