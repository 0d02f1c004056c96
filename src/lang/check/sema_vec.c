/* sema_vec.c — Vec<T> and HashMap<K, V> in the checker (LANGUAGE.md §11): in: the types
 * `Vec<i64>`, `HashMap<String, f64>`, the calls `Vec::new()`, `Vec::with_capacity(n)`,
 * `HashMap::new()`, `Tensor::from_vec(v)`, `vec![..]`, their methods, `v[i]`, `m[k]`,
 * `for x in v`, `==`; out: their types, each call's method (node->ival B_VEC, node->len
 * a VEC_* / MAP_*). A Vec or HashMap type is a struct without fields (st->generic 'V' or
 * 'M', its type arguments in st->targs), made once for each list of type arguments with
 * tensors' dtype and rank erased, as Option's are; at run time a tlrt_vec / tlrt_map.
 * `Vec::new()` without a type from its context is a `Vec<_>`: the first `push` or
 * `insert` on its variable gives the element type (the function is checked again). */
#include "lang/check/sema_impl.h"

#include <stdio.h>
#include <string.h>


static tl_ty *erase(sema *s, tl_ty *t) {
  if (t && t->kind == TY_TENSOR && (t->dtype >= 0 || t->rank >= 0 || t->ent_cols)) return tl_sema_tensor(s, -1, -1);
  if (t && tl_ty_is_tuple(t) && t->elems) return tl_sema_struct_ty(s, t->st);
  if (t && t->kind == TY_FN) return tl_sema_fn_erase(s, t);
  return t;
}

/* the Vec (kind 'V', b NULL; flavor 'D' a VecDeque) or HashMap struct of these type
 * arguments, made on first use */
static tl_ty *intern_as(sema *s, char kind, char flavor, tl_ty *a, tl_ty *b) {
  a = erase(s, a);
  b = erase(s, b);
  int count = 0;
  for (tl_struct_info *st = s->out->structs; st; st = st->next) {
    if (st->generic != 'V' && st->generic != 'M') continue;
    count++;
    if (st->generic == kind && st->flavor == flavor && tl_sema_ty_same_erased(st->targs[0], a) && tl_sema_ty_same_erased(st->targs[1], b))
      return tl_sema_struct_ty(s, st);
  }
  tl_struct_info *st = tl_arena_alloc(s->arena, sizeof *st);
  char *cname = tl_arena_alloc(s->arena, 24), *name = tl_arena_alloc(s->arena, 300);
  if (!st || !cname || !name) return TY_ERR;
  char x[128], y[128];
  snprintf(cname, 24, "tlv_%d", count);
  if (kind == 'V') snprintf(name, 300, "%s<%s>", flavor == 'D' ? "VecDeque" : "Vec", a ? tl_ty_name(a, x, sizeof x) : "_");
  else if (flavor == 'S') snprintf(name, 300, "HashSet<%s>", a ? tl_ty_name(a, x, sizeof x) : "_");
  else if (flavor == 'B') snprintf(name, 300, "BTreeMap<%s, %s>", a ? tl_ty_name(a, x, sizeof x) : "_", b ? tl_ty_name(b, y, sizeof y) : "_");
  else snprintf(name, 300, "HashMap<%s, %s>", a ? tl_ty_name(a, x, sizeof x) : "_", b ? tl_ty_name(b, y, sizeof y) : "_");
  *st = (tl_struct_info){.name = name, .cname = cname, .generic = kind, .flavor = flavor, .targs = {a, b}};
  tl_struct_info **tail = &s->out->structs; /* after the structs its elements may name */
  while (*tail) tail = &(*tail)->next;
  *tail = st;
  return tl_sema_struct_ty(s, st);
}

static tl_ty *intern(sema *s, char kind, tl_ty *a, tl_ty *b) { return intern_as(s, kind, 0, a, b); }
tl_ty *tl_sema_vec_type(sema *s, tl_ty *elem) { return intern(s, 'V', elem, NULL); }
static tl_ty *elem_of(const tl_ty *t) { return t->st->targs[0]; }
static bool known(const tl_ty *t) { return t->st->targs[0] != NULL; }

bool tl_sema_vec_fits(const tl_ty *want, const tl_ty *have) {
  return want->kind == TY_STRUCT && have->kind == TY_STRUCT && want->st && have->st &&
         want->st->generic == have->st->generic && (want->st->generic == 'V' || want->st->generic == 'M') &&
         !have->st->targs[0];
}

static bool elem_ok(sema *s, int line, int col, tl_ty *t) {
  if (t->kind == TY_ERROR) return false;
  if (t->kind != TY_UNIT && t->kind != TY_RANGE) return true;
  tl_diag_error(s->diag, line, col, t->kind == TY_UNIT ? "a Vec's or HashMap's element cannot be ()" : "a range is not a value: it cannot be an element");
  return false;
}

/* a key is hashed and compared: an integer, bool, char, String, or tuples of them */
static bool key_ok(const tl_ty *t) {
  if (tl_ty_is_int(t) || t->kind == TY_BOOL || t->kind == TY_CHAR || t->kind == TY_STR) return true;
  if (!tl_ty_is_tuple(t)) return false;
  for (int i = 0; i < t->st->nfields; i++)
    if (!key_ok(t->st->fields[i].ty)) return false;
  return true;
}

static bool check_key(sema *s, int line, int col, tl_ty *k) {
  if (k->kind == TY_ERROR || key_ok(k)) return true;
  char b[128];
  tl_diag_error(s->diag, line, col, "`%s` cannot be a HashMap key", tl_ty_name(k, b, sizeof b));
  tl_diag_hint(s->diag, "a key is an i64, i32, bool, char, String, or a tuple of them");
  return false;
}

tl_ty *tl_sema_vec_resolve(sema *s, const tl_type *t) {
  if (!strcmp(t->name, "HashSet")) {
    if (!tl_sema_type_arity(s, t, 1, "write `HashSet<T>`: `HashSet<i64>`")) return TY_ERR;
    tl_ty *k = tl_sema_resolve_type(s, t->elems);
    return elem_ok(s, t->elems->line, t->elems->col, k) && check_key(s, t->elems->line, t->elems->col, k) ? intern_as(s, 'M', 'S', k, TY_BOOL_T) : TY_ERR;
  }
  bool btree = !strcmp(t->name, "BTreeMap"), map = !strcmp(t->name, "HashMap") || btree, deque = !strcmp(t->name, "VecDeque");
  if (!tl_sema_type_arity(s, t, map ? 2 : 1, map ? "write `HashMap<K, V>`: `HashMap<String, i64>`" : deque ? "write `VecDeque<T>`: `VecDeque<i64>`" : "write `Vec<T>`: `Vec<i64>`"))
    return TY_ERR;
  tl_ty *a = tl_sema_resolve_type(s, t->elems), *b = map ? tl_sema_resolve_type(s, t->elems->next) : NULL;
  bool ok = elem_ok(s, t->elems->line, t->elems->col, a);
  if (map) ok = ok && check_key(s, t->elems->line, t->elems->col, a) && elem_ok(s, t->elems->next->line, t->elems->next->col, b);
  return ok ? intern_as(s, map ? 'M' : 'V', deque ? 'D' : btree ? 'B' : 0, a, b) : TY_ERR;
}

/* ---- calls ---- */

static tl_ty *mark(tl_node *n, int m, tl_ty *t) {
  n->ival = B_VEC;
  n->len = (size_t)m;
  return t;
}

tl_ty *tl_sema_vec_path_call(sema *s, tl_node *n, tl_ty *expect) {
  const char *p = n->lhs->name;
  bool deque = !strcmp(p, "VecDeque::new") || !strcmp(p, "VecDeque::with_capacity");
  bool set = !strcmp(p, "HashSet::new"), btree = !strcmp(p, "BTreeMap::new");
  bool vec_new = !strcmp(p, "Vec::new") || !strcmp(p, "VecDeque::new"), map_new = !strcmp(p, "HashMap::new") || set || btree;
  bool cap = !strcmp(p, "Vec::with_capacity") || !strcmp(p, "VecDeque::with_capacity");
  bool from = !strcmp(p, "Tensor::from_vec");
  if (!vec_new && !cap && !map_new && !from) return NULL;
  if (tl_sema_find_fn(s, p)) return NULL;
  if (from) {
    /* `Tensor::from_vec(values, shape)`, the seed language's spelling, is from_vec then
     * reshape */
    int got = tl_ast_count(n->args);
    if (got != 1 && got != 2) {
      tl_sema_error(s, n, "`%s` takes (values) or (values, shape), not %d arguments", p, got);
      tl_sema_check_rest(s, n->args);
      return TY_ERR;
    }
    tl_ty *t = tl_sema_expr(s, n->args, NULL);
    int rank = n->args->next ? tl_sema_check_shape(s, n->args->next) : 1;
    if (t->kind == TY_ERROR) return TY_ERR;
    tl_ty *e = tl_ty_is_vec(t) ? elem_of(t) : NULL;
    int dt = e ? tl_ty_dtype(e) : -1;
    if (dt < 0) {
      tl_sema_mismatch(s, n->args, "`Tensor::from_vec` argument", tl_sema_vec_type(s, TY_F32_T), t);
      tl_diag_hint(s->diag, "a Vec of f32, f64, i64, i32 or bool becomes a 1-D tensor");
      return TY_ERR;
    }
    return mark(n, VEC_TO_TENSOR, tl_sema_tensor(s, dt, rank));
  }
  if (!tl_sema_arity(s, n, p, cap ? 1 : 0)) return TY_ERR;
  if (cap) tl_sema_expect_i64(s, n->args, "capacity");
  char kind = map_new ? 'M' : 'V';
  char flavor = deque ? 'D' : set ? 'S' : btree ? 'B' : 0;
  tl_ty *t = expect && expect->kind == TY_STRUCT && expect->st && expect->st->generic == kind && expect->st->flavor == flavor
                 ? expect
                 : intern_as(s, kind, flavor, NULL, NULL);
  return mark(n, map_new ? MAP_NEW : cap ? VEC_WITH_CAPACITY : VEC_NEW, t);
}

/* vec![a, b, c] and vec![x; n]: the element type from the context, else the first element */
tl_ty *tl_sema_vec_lit(sema *s, tl_node *n, tl_ty *expect) {
  tl_ty *want = tl_ty_is_vec(expect) && known(expect) ? elem_of(expect) : NULL;
  tl_ty *e = want;
  int i = 0;
  for (tl_node *a = n->args; a; a = a->next, i++) {
    if (n->ival == 1 && i == 1) {
      tl_sema_expect_i64(s, a, "`vec![x; n]` length");
      break;
    }
    tl_ty *t = tl_sema_expr(s, a, e);
    if (t->kind == TY_ERROR) continue;
    if (!e) {
      if (!elem_ok(s, a->line, a->col, t)) return TY_ERR;
      e = t;
    } else if (!tl_sema_ty_fits(e, t)) tl_sema_mismatch(s, a, strcmp(n->name, "vec!") ? "array element" : "`vec!` element", e, t);
    else if (!want) e = tl_sema_join(s, e, t) ? tl_sema_join(s, e, t) : e;
  }
  return expect && tl_ty_is_vec(expect) && known(expect) ? expect : tl_sema_vec_type(s, e);
}

/* `v.push(x)` on a variable holding a Vec<_>: the variable becomes a Vec of x's type
 * and the function is checked again (check_let keeps the type from pass to pass) */
static bool infer(sema *s, tl_node *recv, tl_ty *t) {
  if (recv->kind != TL_N_IDENT || !recv->var || t->kind == TY_ERROR || t->kind == TY_UNIT) return false;
  tl_var *v = recv->var;
  v->ty = t;
  if (v->let) v->let->ty = t;
  s->widened = true;
  return true;
}

static const struct {
  const char *name;
  char of;   /* 'V' Vec (and VecDeque), 'D' VecDeque only, 'M' HashMap, 'S' HashSet */
  int nargs;
  bool mut;  /* changes its receiver */
  int id;
} methods[] = {
    {"push", 'V', 1, true, VEC_PUSH}, {"pop", 'V', 0, true, VEC_POP}, {"len", 'V', 0, false, VEC_LEN},
    {"is_empty", 'V', 0, false, VEC_IS_EMPTY}, {"insert", 'V', 2, true, VEC_INSERT}, {"remove", 'V', 1, true, VEC_REMOVE},
    {"contains", 'V', 1, false, VEC_CONTAINS}, {"sort", 'V', 0, true, VEC_SORT}, {"reverse", 'V', 0, true, VEC_REVERSE},
    {"clear", 'V', 0, true, VEC_CLEAR}, {"to_tensor", 'V', 0, false, VEC_TO_TENSOR}, {"get", 'V', 1, false, VEC_GET},
    {"first", 'V', 0, false, VEC_FIRST}, {"last", 'V', 0, false, VEC_LAST}, {"capacity", 'V', 0, false, VEC_CAPACITY},
    {"set", 'V', 2, true, VEC_SET}, {"extend", 'V', 1, true, VEC_EXTEND},
    {"truncate", 'V', 1, true, VEC_TRUNCATE}, {"swap", 'V', 2, true, VEC_SWAP}, {"index_of", 'V', 1, false, VEC_INDEX_OF},
    {"slice", 'V', 2, false, VEC_SLICE}, {"join", 'V', 1, false, VEC_JOIN}, {"dedup", 'V', 0, true, VEC_DEDUP}, {"retain", 'V', 1, true, VEC_RETAIN},
    {"push_back", 'D', 1, true, VEC_PUSH}, {"push_front", 'D', 1, true, VEC_PUSH_FRONT}, {"pop_back", 'D', 0, true, VEC_POP},
    {"pop_front", 'D', 0, true, VEC_POP_FRONT}, {"front", 'D', 0, false, VEC_FIRST}, {"back", 'D', 0, false, VEC_LAST},
    {"insert", 'M', 2, true, MAP_INSERT}, {"get", 'M', 1, false, MAP_GET}, {"contains_key", 'M', 1, false, MAP_CONTAINS_KEY},
    {"remove", 'M', 1, true, MAP_REMOVE}, {"len", 'M', 0, false, MAP_LEN}, {"is_empty", 'M', 0, false, MAP_IS_EMPTY},
    {"keys", 'M', 0, false, MAP_KEYS}, {"values", 'M', 0, false, MAP_VALUES}, {"clear", 'M', 0, true, MAP_CLEAR},
    {"insert", 'S', 1, true, SET_INSERT}, {"contains", 'S', 1, false, MAP_CONTAINS_KEY}, {"remove", 'S', 1, true, SET_REMOVE},
    {"len", 'S', 0, false, MAP_LEN}, {"is_empty", 'S', 0, false, MAP_IS_EMPTY}, {"clear", 'S', 0, true, MAP_CLEAR},
    {"$elems", '$', 0, false, MAP_KEYS}, {"$range", '$', 1, false, VEC_RANGE}, /* the nodes of tl_sema_set_elems and v[a..b], checked again: no program can name them */
};

/* the hint of an unknown method: the names of the type's methods */
static void unknown_method(sema *s, tl_node *n, tl_ty *t, char of) {
  char names[512] = "", b[128];
  size_t len = 0;
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
    if (methods[i].of == of) len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", methods[i].name);
  tl_sema_error(s, n, "no method `%s` on `%s`", n->name, tl_ty_name(t, b, sizeof b));
  tl_suggest g;
  tl_suggest_init(&g, n->name);
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
    if (methods[i].of == of) tl_suggest_add(&g, methods[i].name);
  static const char *const chains[] = {"iter", "map", "filter", "enumerate", "zip", "any", "all", "fold"}; /* iter_spelling */
  for (size_t i = 0; i < (of == 'V' ? 8u : 1u); i++) tl_suggest_add(&g, chains[i]);
  tl_suggest_hint(&g, s->diag, "");
  tl_diag_hint(s->diag, "the methods of %s are: %s, %s", of == 'V' ? "Vec" : of == 'S' ? "HashSet" : "HashMap", names,
               of == 'V' ? "iter, sort_by, sort_by_key, map, filter, enumerate, zip, any, all, fold" : "iter"); /* sema_iter.c's */
  tl_sema_check_rest(s, n->args);
}

/* an argument that must be of type want (an element, a key) */
static void arg_of(sema *s, tl_node *a, tl_ty *want, const char *what) {
  tl_ty *t = tl_sema_expr(s, a, want);
  if (!tl_sema_ty_fits(want, t)) tl_sema_mismatch(s, a, what, want, t);
}

/* the comparisons of sort: numbers, bool, char, String */
static bool sortable(const tl_ty *t) { return tl_ty_is_numeric(t) || t->kind == TY_BOOL || t->kind == TY_CHAR || t->kind == TY_STR; }

/* `v.map(f)`, `v.filter(f)`, `v.enumerate()`, `v.zip(w)` (the seed language's eager
 * spellings) are `v.iter().map(f).collect()`...; `v.any(f)`, `v.all(f)`, `v.fold(a, f)`
 * are `v.iter().any(f)`...: n becomes that chain, checked as written so (sema_iter.c) */
static tl_ty *iter_spelling(sema *s, tl_node *n) {
  static const char *const adapters[] = {"map", "filter", "enumerate", "zip"}, *const consumers[] = {"any", "all", "fold"};
  bool adapter = false, consumer = false;
  for (size_t i = 0; i < 4; i++) adapter |= !strcmp(n->name, adapters[i]);
  for (size_t i = 0; i < 3; i++) consumer |= !strcmp(n->name, consumers[i]);
  if (!adapter && !consumer) return NULL;
  tl_node *it = tl_arena_alloc(s->arena, sizeof *it), *inner = adapter ? tl_arena_alloc(s->arena, sizeof *inner) : NULL;
  if (!it || (adapter && !inner)) return TY_ERR;
  *it = (tl_node){.kind = TL_N_METHOD, .line = n->line, .col = n->col, .name = "iter", .lhs = n->lhs};
  if (adapter) {
    *inner = (tl_node){.kind = TL_N_METHOD, .line = n->line, .col = n->col, .name = n->name, .lhs = it, .args = n->args};
    n->name = "collect";
    n->lhs = inner;
    n->args = NULL;
  } else n->lhs = it;
  return tl_sema_method(s, n);
}

/* `v.reduce(f)` (the seed language's) is `v.iter().reduce(f).expect(..)`: the element
 * itself, an empty Vec a run-time error */
static tl_ty *reduce_spelling(sema *s, tl_node *n) {
  if (strcmp(n->name, "reduce")) return NULL;
  static const char msg[] = "reduce of an empty Vec";
  tl_node *it = tl_arena_alloc(s->arena, sizeof *it), *red = tl_arena_alloc(s->arena, sizeof *red),
          *text = tl_arena_alloc(s->arena, sizeof *text);
  if (!it || !red || !text) return TY_ERR;
  *text = (tl_node){.kind = TL_N_STR, .line = n->line, .col = n->col, .str = msg, .len = sizeof msg - 1};
  *it = (tl_node){.kind = TL_N_METHOD, .line = n->line, .col = n->col, .name = "iter", .lhs = n->lhs};
  *red = (tl_node){.kind = TL_N_METHOD, .line = n->line, .col = n->col, .name = "reduce", .lhs = it, .args = n->args};
  n->name = "expect";
  n->lhs = red;
  n->args = text;
  return tl_sema_method(s, n);
}

/* `m.get_or_default(k, d)` (the seed language's) is `m.get(k).unwrap_or(d)` */
static tl_ty *get_or_default_spelling(sema *s, tl_node *n) {
  if (strcmp(n->name, "get_or_default")) return NULL;
  if (!tl_sema_arity(s, n, "get_or_default", 2)) return TY_ERR;
  tl_node *get = tl_arena_alloc(s->arena, sizeof *get);
  if (!get) return TY_ERR;
  tl_node *d = n->args->next;
  n->args->next = NULL;
  *get = (tl_node){.kind = TL_N_METHOD, .line = n->line, .col = n->col, .name = "get", .lhs = n->lhs, .args = n->args};
  n->name = "unwrap_or";
  n->lhs = get;
  n->args = d;
  return tl_sema_method(s, n);
}

/* `m.entries()` (the seed language's) is `m.iter().collect()`: a Vec of (key, value) */
static tl_ty *entries_spelling(sema *s, tl_node *n) {
  if (strcmp(n->name, "entries")) return NULL;
  if (!tl_sema_arity(s, n, "entries", 0)) return TY_ERR;
  tl_node *it = tl_arena_alloc(s->arena, sizeof *it);
  if (!it) return TY_ERR;
  *it = (tl_node){.kind = TL_N_METHOD, .line = n->line, .col = n->col, .name = "iter", .lhs = n->lhs};
  n->name = "collect";
  n->lhs = it;
  return tl_sema_method(s, n);
}

tl_ty *tl_sema_vec_method(sema *s, tl_node *n, tl_ty *t) {
  if (t->kind == TY_TENSOR && !strcmp(n->name, "to_vec")) { /* its elements, one copy */
    if (!tl_sema_arity(s, n, "to_vec", 0)) return TY_ERR;
    if (t->dtype < 0) {
      tl_sema_error(s, n, "`to_vec` needs the tensor's dtype known here");
      tl_diag_hint(s->diag, "write the type: `let t: Tensor<f32, 1> = ..`, or convert: `t.to_f32().to_vec()`");
      return TY_ERR;
    }
    return mark(n, VEC_FROM_TENSOR, tl_sema_vec_type(s, tl_ty_of_dtype(t->dtype)));
  }
  char of = tl_ty_is_vec(t) ? 'V' : tl_ty_is_map(t) ? (t->st->flavor == 'S' ? 'S' : 'M') : 0;
  if (!of) return NULL;
  size_t i = 0;
  bool deque = of == 'V' && t->st->flavor == 'D';
  while (i < sizeof methods / sizeof methods[0] &&
         ((methods[i].of != of && !(deque && methods[i].of == 'D') && methods[i].of != '$') ||
          strcmp(methods[i].name, n->name)))
    i++;
  if (i == sizeof methods / sizeof methods[0]) {
    tl_ty *chain = of == 'V' ? iter_spelling(s, n) : entries_spelling(s, n);
    if (!chain && of == 'V') chain = reduce_spelling(s, n);
    if (!chain && of == 'M') chain = get_or_default_spelling(s, n);
    if (chain) return chain;
    unknown_method(s, n, t, of);
    return TY_ERR;
  }
  if (!tl_sema_arity(s, n, n->name, methods[i].nargs)) return TY_ERR;
  if (methods[i].mut) tl_sema_receiver_mut(s, n);
  int m = methods[i].id;
  tl_node *a = n->args;
  if (!known(t)) { /* a Vec<_> or HashMap<_, _>: push and insert tell the types */
    if (m == VEC_PUSH || m == MAP_INSERT || m == VEC_INSERT || m == VEC_PUSH_FRONT || m == SET_INSERT) {
      tl_ty *x = tl_sema_expr(s, m == VEC_INSERT ? a->next : a, NULL);
      tl_ty *y = m == MAP_INSERT ? tl_sema_expr(s, a->next, NULL) : NULL;
      if (m == VEC_INSERT) tl_sema_expect_i64(s, a, "index");
      if (x->kind != TY_ERROR && (!y || y->kind != TY_ERROR)) {
        if (!elem_ok(s, a->line, a->col, x)) return TY_ERR;
        if ((m == MAP_INSERT || m == SET_INSERT) && !check_key(s, a->line, a->col, x)) return TY_ERR;
        infer(s, n->lhs, intern_as(s, of == 'V' ? 'V' : 'M', t->st->flavor, x, of == 'V' ? NULL : of == 'S' ? TY_BOOL_T : y));
      }
    } else tl_sema_check_rest(s, n->args);
    return mark(n, m, m == VEC_LEN || m == MAP_LEN || m == VEC_CAPACITY ? TY_I64_T : m == VEC_IS_EMPTY || m == MAP_IS_EMPTY ? TY_BOOL_T : m == VEC_PUSH || m == VEC_INSERT || m == VEC_PUSH_FRONT ? TY_UNIT_T : m == SET_INSERT ? TY_BOOL_T : TY_ERR);
  }
  tl_ty *e = t->st->targs[0], *v = t->st->targs[1];
  char b[128];
  switch (m) {
  case VEC_PUSH: case VEC_PUSH_FRONT: arg_of(s, a, e, m == VEC_PUSH ? "`push` argument" : "`push_front` argument"); return mark(n, m, TY_UNIT_T);
  case VEC_POP: case VEC_FIRST: case VEC_LAST: case VEC_POP_FRONT: return mark(n, m, tl_sema_option_type(s, e));
  case VEC_GET: tl_sema_expect_i64(s, a, "index"); return mark(n, m, tl_sema_option_type(s, e));
  case VEC_SET: /* the seed language's `v.set(i, x)`, Rust's `v[i] = x` */
    tl_sema_expect_i64(s, a, "index");
    arg_of(s, a->next, e, "`set` element");
    return mark(n, m, TY_UNIT_T);
  case VEC_LEN: case MAP_LEN: case VEC_CAPACITY: return mark(n, m, TY_I64_T);
  case VEC_IS_EMPTY: case MAP_IS_EMPTY: return mark(n, m, TY_BOOL_T);
  case VEC_INSERT:
    tl_sema_expect_i64(s, a, "index");
    arg_of(s, a->next, e, "`insert` element");
    return mark(n, m, TY_UNIT_T);
  case VEC_REMOVE: tl_sema_expect_i64(s, a, "index"); return mark(n, m, e);
  case VEC_RANGE: return tl_sema_vec_index(s, n, t); /* checked again */
  case VEC_CONTAINS:
    if (!tl_sema_vec_eq_ok(e)) {
      tl_sema_error(s, n, "`contains` compares elements with `==`, which %s does not have", tl_ty_name(e, b, sizeof b));
      return TY_ERR;
    }
    arg_of(s, a, e, "`contains` argument");
    return mark(n, m, TY_BOOL_T);
  case VEC_SORT:
    if (!sortable(e)) {
      tl_sema_error(s, n, "`sort` orders numbers, bools, chars and Strings, not %s", tl_ty_name(e, b, sizeof b));
      return TY_ERR;
    }
    return mark(n, m, TY_UNIT_T);
  case VEC_REVERSE: case VEC_CLEAR: case MAP_CLEAR: return mark(n, m, TY_UNIT_T);
  case VEC_EXTEND: arg_of(s, a, t, "`extend` argument"); return mark(n, m, TY_UNIT_T); /* a Vec: its elements copied */
  case VEC_TRUNCATE: tl_sema_expect_i64(s, a, "length"); return mark(n, m, TY_UNIT_T);
  case VEC_RETAIN: /* retain(|x| ..): the elements it holds for stay, in order */
    return tl_sema_closure_expect(s, a, &e, 1, TY_BOOL_T)->kind == TY_ERROR ? TY_ERR : mark(n, m, TY_UNIT_T);
  case VEC_SWAP: case VEC_SLICE:
    tl_sema_expect_i64(s, a, m == VEC_SWAP ? "index" : "start");
    tl_sema_expect_i64(s, a->next, m == VEC_SWAP ? "index" : "end");
    return mark(n, m, m == VEC_SWAP ? TY_UNIT_T : t);
  case VEC_JOIN:
    if (e->kind != TY_STR && !tl_ty_is_int(e)) { /* integers: the seed's, each as `{}` prints it */
      tl_sema_error(s, n, "`join` joins a Vec<String> or a Vec of integers, not %s", tl_ty_name(t, b, sizeof b));
      return TY_ERR;
    }
    arg_of(s, a, TY_STR_T, "`join` separator");
    return mark(n, m, TY_STR_T);
  case VEC_INDEX_OF: case VEC_DEDUP:
    if (!tl_sema_vec_eq_ok(e)) {
      tl_sema_error(s, n, "`%s` compares elements with `==`, which %s does not have", n->name, tl_ty_name(e, b, sizeof b));
      return TY_ERR;
    }
    if (m == VEC_INDEX_OF) arg_of(s, a, e, "`index_of` argument");
    return mark(n, m, m == VEC_INDEX_OF ? TY_I64_T : TY_UNIT_T);
  case VEC_TO_TENSOR:
    if (tl_ty_dtype(e) < 0) {
      tl_sema_error(s, n, "`to_tensor` needs a Vec of f32, f64, i64, i32 or bool, not %s", tl_ty_name(t, b, sizeof b));
      return TY_ERR;
    }
    return mark(n, m, tl_sema_tensor(s, tl_ty_dtype(e), 1));
  case MAP_INSERT:
    arg_of(s, a, e, "`insert` key");
    arg_of(s, a->next, v, "`insert` value");
    return mark(n, m, tl_sema_option_type(s, v));
  case MAP_GET: arg_of(s, a, e, "`get` key"); return mark(n, m, tl_sema_option_type(s, v));
  case SET_INSERT: case SET_REMOVE: arg_of(s, a, e, m == SET_INSERT ? "`insert` element" : "`remove` element"); return mark(n, m, TY_BOOL_T);
  case MAP_CONTAINS_KEY: arg_of(s, a, e, "`contains_key` key"); return mark(n, m, TY_BOOL_T);
  case MAP_REMOVE: arg_of(s, a, e, "`remove` key"); return mark(n, m, tl_sema_option_type(s, v));
  case MAP_KEYS: return mark(n, m, tl_sema_vec_type(s, e));
  default: return mark(n, m, tl_sema_vec_type(s, v)); /* values */
  }
}

/* v[i] (an i64 index) and m[k] (a key): the element, a copy */
tl_ty *tl_sema_vec_index(sema *s, tl_node *n, tl_ty *t) {
  char b[128];
  if (tl_ty_is_vec(t) && n->args && !n->args->next && n->args->kind == TL_N_RANGE) { /* `v[a..b]`: a copy of those */
    tl_node *r = n->args;
    if (r->lhs) tl_sema_expect_i64(s, r->lhs, "slice start");
    if (r->rhs) tl_sema_expect_i64(s, r->rhs, "slice end");
    r->ty = TY_RANGE_T;
    n->kind = TL_N_METHOD; /* the node is a call from here on: not a place */
    n->name = "$range";
    return mark(n, VEC_RANGE, t);
  }
  if (tl_ast_count(n->args) != 1 || n->args->kind == TL_N_RANGE) {
    tl_sema_error(s, n, "a %s is indexed with one %s", tl_ty_is_vec(t) ? "Vec" : "HashMap", tl_ty_is_vec(t) ? "integer" : "key");
    tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  if (!known(t)) {
    tl_sema_expr(s, n->args, NULL);
    return TY_ERR;
  }
  if (tl_ty_is_map(t)) {
    arg_of(s, n->args, t->st->targs[0], "HashMap key");
    return t->st->targs[1];
  }
  tl_ty *i = tl_sema_expr(s, n->args, TY_I64_T);
  if (i->kind != TY_I64 && i->kind != TY_ERROR) {
    tl_sema_error(s, n->args, "a Vec is indexed by an i64, not %s", tl_ty_name(i, b, sizeof b));
    tl_diag_hint(s->diag, tl_ty_is_numeric(i) ? "convert it: `v[i as i64]`" : "index with an integer: `v[0]`");
  }
  return elem_of(t);
}

/* a HashSet's elements, in insertion order, as iter() and `for` see them: h becomes
 * `h.keys()`, a Vec copied from the set */
tl_ty *tl_sema_set_elems(sema *s, tl_node *h, tl_ty *t) {
  tl_node *inner = tl_arena_alloc(s->arena, sizeof *inner);
  if (!inner) return TY_ERR;
  *inner = *h;
  inner->next = NULL;
  tl_ty *v = tl_sema_vec_type(s, t->st->targs[0]);
  *h = (tl_node){.kind = TL_N_METHOD, .line = inner->line, .col = inner->col, .name = "$elems", .lhs = inner, .next = h->next,
                 .ival = B_VEC, .len = MAP_KEYS, .ty = v};
  return v;
}

tl_ty *tl_sema_vec_for(sema *s, tl_ty *t) {
  if (!known(t)) return TY_ERR;
  if (tl_ty_is_vec(t)) return elem_of(t);
  tl_ty *kv[2] = {t->st->targs[0], t->st->targs[1]};
  return tl_sema_tuple_of(s, kv, 2);
}

/* do values of type t have `==` (a Vec's, a tuple's of these, a Vec of these)? */
bool tl_sema_vec_eq_ok(const tl_ty *t) {
  if (tl_ty_is_numeric(t) || t->kind == TY_BOOL || t->kind == TY_CHAR || t->kind == TY_STR) return true;
  if (tl_ty_is_vec(t)) return t->st->targs[0] && tl_sema_vec_eq_ok(t->st->targs[0]);
  if (!tl_ty_is_tuple(t)) return false;
  for (int i = 0; i < t->st->nfields; i++) {
    const tl_ty *f = t->st->fields[i].ty;
    if (tl_ty_is_vec(f) || !tl_sema_vec_eq_ok(f)) return false; /* a tuple's == compares scalars, strings, tuples */
  }
  return true;
}

/* a == b on Vecs of the same type whose elements compare */
tl_ty *tl_sema_vec_compare(sema *s, tl_node *n, tl_ty *l, tl_ty *r) {
  char a[128], b[128];
  if (n->op != TL_TOK_EQ && n->op != TL_TOK_NE) return NULL;
  if (!tl_ty_is_vec(l) || l->st != r->st || !known(l)) return NULL;
  tl_ty *e = elem_of(l);
  if (!tl_sema_vec_eq_ok(e)) {
    tl_sema_error(s, n, "`%s` cannot compare %s and %s: their elements have no `==`", tl_tok_name(n->op), tl_ty_name(l, a, sizeof a),
               tl_ty_name(r, b, sizeof b));
    return TY_ERR;
  }
  return TY_BOOL_T;
}

static bool unknown_let(tl_node *n, void *arg) {
  sema *s = arg;
  if (n->kind == TL_N_LET && !n->lhs && !n->type && n->var && (tl_ty_is_vec(n->var->ty) || tl_ty_is_map(n->var->ty)) && !known(n->var->ty)) {
    bool map = tl_ty_is_map(n->var->ty);
    const tl_node *at = !n->rhs ? n : n->rhs->kind == TL_N_CALL ? n->rhs->lhs : n->rhs; /* `Vec::new()` at its start */
    tl_sema_error(s, at, "cannot infer the %s type of `%s`", map ? "key and value" : "element", n->var->name);
    tl_diag_hint(s->diag, map ? "write its type: `let %s: HashMap<String, i64> = HashMap::new();`"
                              : "write its type: `let %s: Vec<i64> = Vec::new();`, or push a value to it",
                 n->var->name);
  }
  return false;
}

static bool unknown(const tl_ty *t) { return t && (tl_ty_is_vec(t) || tl_ty_is_map(t)) && !known(t); }

/* n, a value of type t where the checker saw a Vec<_> (an `if` branch, an argument):
 * its nodes get t, so the generator makes a Vec of the right element type */
static void settle(tl_node *n, tl_ty *t) {
  /* t may be anything the context wanted, the error type (no st) included */
  if (!n || !(tl_ty_is_vec(t) || tl_ty_is_map(t)) || unknown(t) || !unknown(n->ty) || n->ty->st->generic != t->st->generic)
    return;
  n->ty = t;
  if (n->kind == TL_N_BLOCK) settle(n->value, t);
  else if (n->kind == TL_N_IF) {
    settle(n->then, t);
    settle(n->els, t);
  } else if (n->kind == TL_N_MATCH)
    for (tl_node *a = n->args; a; a = a->next) settle(a->rhs, t);
}

/* n->ref a function of the program (a CALL's ref may be other things: a variant...) */
static const tl_fninfo *called(const sema *s, const tl_node *n) {
  if ((n->kind != TL_N_CALL && n->kind != TL_N_METHOD) || !n->ref || n->ival != B_NONE) return NULL;
  for (const tl_fninfo *f = s->out->fns; f; f = f->next)
    if (f == n->ref) return f->partial ? NULL : f;
  return NULL;
}

static bool settle_node(tl_node *n, void *arg) {
  const sema *s = arg;
  if (!n->ty || (n->kind != TL_N_IF && n->kind != TL_N_BLOCK && n->kind != TL_N_MATCH) || !(tl_ty_is_vec(n->ty) || tl_ty_is_map(n->ty)) || unknown(n->ty)) {
    if (n->kind == TL_N_LET && n->var && n->rhs && !n->lhs) settle(n->rhs, n->var->ty);
    const tl_fninfo *f = called(s, n);
    if (f) {
      int i = f->self ? 1 : 0;
      for (tl_node *a = n->args; a && f->params && i < f->nparams + (f->self ? 1 : 0); a = a->next, i++)
        if (f->params[i]) settle(a, f->params[i]->ty);
    }
    return false;
  }
  tl_ty *t = n->ty;
  if (n->kind == TL_N_BLOCK) settle(n->value, t);
  else if (n->kind == TL_N_IF) {
    settle(n->then, t);
    settle(n->els, t);
  } else
    for (tl_node *a = n->args; a; a = a->next) settle(a->rhs, t);
  return false;
}

void tl_sema_vec_check_inferred(sema *s, tl_fninfo *f) {
  if (!f->fn->body) return;
  tl_ast_find(f->fn->body, unknown_let, s);
  tl_ast_find(f->fn->body, settle_node, s);
}
