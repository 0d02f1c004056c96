/* logic_front.c — checks a Datalog program and lowers it to the tl_kb API's terms
 * (logic_front.h). The steps, each over the whole program in text order:
 *   define:  relations and arities (declarations first, then first appearances)
 *   resolve: atoms against relations; the entity set (every fact's symbols, and the
 *            names in quotes of rules); column types by union-find (declarations
 *            first, a clash reported where it happens); entity ids by first
 *            appearance; rules checked (wildcards, unbound variables; warnings for
 *            a bare name that is an entity and for a variable written once) and
 *            lowered; facts as rows; finally src/logic's stratification check
 *            (tl_logic_strata_check, no knowledge base needed) finds negation that
 *            is not stratified. */
#include "logic/logic_front.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/vec.h"
#include "logic/logic.h" /* kb->err_lit: the literal a rule error is about */

/* ---- a string -> index map (relations, entities): its entries in a tl_vec, a
 * tl_hset of entry numbers + 1 under the key's hash ---- */

typedef struct {
  const char *key;
  int64_t val;
} sentry;

typedef struct {
  tl_vec(sentry) e;
  tl_hset set;
} smap;

static uint64_t hash_str(const char *s) { return tl_hash_bytes(TL_HASH_INIT, s, strlen(s)); }

/* the entry of k, or NULL */
static sentry *smap_find(const smap *m, const char *k, uint64_t h) {
  uint64_t it;
  for (tl_hset_walk w = tl_hset_find(&m->set, h); (it = tl_hset_next(&m->set, &w));)
    if (!strcmp(m->e.data[it - 1].key, k)) return &m->e.data[it - 1];
  return NULL;
}

static int64_t smap_get(const smap *m, const char *k) {
  const sentry *e = smap_find(m, k, hash_str(k));
  return e ? e->val : -1;
}

/* sets k's value (adding it); false when out of memory */
static bool smap_put(smap *m, const char *k, int64_t v) {
  uint64_t h = hash_str(k);
  sentry *e = smap_find(m, k, h);
  if (e) {
    e->val = v;
    return true;
  }
  if (!tl_vec_push(&m->e, ((sentry){k, v}))) return false;
  if (tl_hset_add(&m->set, h, m->e.len)) return true;
  m->e.len--;
  return false;
}

static void smap_free(smap *m) {
  tl_vec_free(&m->e);
  tl_hset_free(&m->set);
}

/* ---- the program ---- */

enum { T_NONE = -1, T_ENT = TL_KB_ENTITY, T_INT = TL_KB_INT };

typedef struct {
  int64_t k0, k1; /* place in the program text (key_of) */
  int seq;
  tl_ast_item *item; /* or */
  lf_use *use;
  tl_node *fact; /* a fact statement being defined (tl_lf_define) */
  int unit;
} occ;

struct lf {
  tl_arena *arena;
  tl_diag **diag;
  tl_ast_item **mod_at;
  int nunits;
  tl_kb *target;
  tl_ast_item **items;
  int nitems;
  size_t capitems;
  occ *fstmts; /* fact statements: (node, unit) */
  int nfstmts;
  size_t capfstmts;
  lf_use *uses, *uses_tail;
  lf_rel *rels;
  int nrels;
  size_t caprels;
  smap relmap;
  smap ents;   /* name -> id (-1: a symbol not yet given an id) */
  const char **ent_names;
  int64_t nent;
  size_t capent;
  lf_rule *rules;
  int nrules;
  int *parent; /* union-find over type slots: columns, then rule variables */
  int8_t *type;
  int nslots;
  size_t capparent, captype;
  int errors;
  bool oom;
  int naggs; /* aggregates lowered: their hidden relations' numbers */
  lf_io *io;  /* `.input` / `.output` directives, checked */
  int nio;
  size_t capio;
};

/* room for need elements of esz bytes in *data_ptr (a T **, cap of them now); false,
 * with L->oom set, when out of memory */
static bool grow(lf *L, void *data_ptr, size_t *cap, size_t need, size_t esz) {
  if (tl_vec_grow(data_ptr, cap, need, esz)) return true;
  L->oom = true;
  return false;
}

static void *arena(lf *L, size_t n) {
  void *p = tl_arena_alloc(L->arena, n ? n : 1);
  if (!p) L->oom = true;
  return p;
}

/* the diagnostics of a module (unit 0: the main file's) */
static tl_diag *unit_diag(const lf *L, int unit) { return L->diag[unit >= 0 && unit < L->nunits ? unit : 0]; }

static void err_at(lf *L, int unit, int line, int col, const char *hint, const char *fmt, ...) TL_PRINTF(6, 7);
static void err_at(lf *L, int unit, int line, int col, const char *hint, const char *fmt, ...) {
  tl_diag *d = unit_diag(L, unit);
  va_list ap;
  va_start(ap, fmt);
  tl_diag_verror(d, line, col, fmt, ap);
  va_end(ap);
  if (hint) tl_diag_hint(d, "%s", hint);
  L->errors++;
}
#define ERR(L, unit, n, hint, ...) err_at(L, unit, (n)->line, (n)->col, hint, __VA_ARGS__)

/* a warning: reported, the program still compiles */
static void warn_at(lf *L, int unit, const tl_node *at, const char *hint, const char *fmt, ...) TL_PRINTF(5, 6);
static void warn_at(lf *L, int unit, const tl_node *at, const char *hint, const char *fmt, ...) {
  tl_diag *d = unit_diag(L, unit);
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tl_diag_warning(d, at->line, at->col, "%s", msg);
  if (hint) tl_diag_hint(d, "%s", hint);
}

lf *tl_lf_new(tl_arena *a, tl_diag **diag, tl_ast_item **mod_at, int nunits, tl_kb *target) {
  lf *L = calloc(1, sizeof *L);
  if (!L) return NULL;
  L->arena = a;
  L->diag = diag;
  L->mod_at = mod_at;
  L->nunits = nunits;
  L->target = target;
  L->naggs = target ? target->agg_names : 0; /* hidden names stay new across texts */
  return L;
}

void tl_lf_free(lf *L) {
  if (!L) return;
  free(L->items);
  free(L->fstmts);
  for (int r = 0; r < L->nrels; r++) free(L->rels[r].facts);
  free(L->rels);
  smap_free(&L->relmap);
  smap_free(&L->ents);
  free(L->ent_names);
  free(L->rules);
  free(L->parent);
  free(L->type);
  free(L->io);
  free(L);
}

bool tl_lf_add_items(lf *L, tl_ast_item *items) {
  for (tl_ast_item *it = items; it; it = it->next) {
    if (it->kind != TL_ITEM_FACT && it->kind != TL_ITEM_RULE && it->kind != TL_ITEM_RELATION && it->kind != TL_ITEM_IO)
      continue;
    /* an aggregate's hidden rule comes first: typed before the rule that reads it */
    tl_ast_item *hidden[64];
    int nh = it->kind == TL_ITEM_RULE ? tl_lf_lower_aggregates(L->arena, it, hidden, 64, &L->naggs) : 0;
    if (nh < 0) return L->oom = true, false;
    if (!grow(L, &L->items, &L->capitems, (size_t)L->nitems + (size_t)nh + 1, sizeof *L->items)) return false;
    for (int i = 0; i < nh; i++) L->items[L->nitems++] = hidden[i];
    L->items[L->nitems++] = it;
  }
  return true;
}

bool tl_lf_add_fact_stmt(lf *L, tl_node *at, int unit) {
  if (!grow(L, &L->fstmts, &L->capfstmts, (size_t)L->nfstmts + 1, sizeof *L->fstmts)) return false;
  L->fstmts[L->nfstmts++] = (occ){.fact = at, .unit = unit};
  return true;
}

void tl_lf_add_use(lf *L, lf_use *u) {
  if (u->listed) return;
  u->listed = true;
  u->next = NULL;
  if (L->uses_tail) L->uses_tail->next = u;
  else L->uses = u;
  L->uses_tail = u;
}

int tl_lf_find_rel(const lf *L, const char *name) { return (int)smap_get(&L->relmap, name); }
const lf_rel *tl_lf_rel_at(const lf *L, int rel) { return &L->rels[rel]; }
int tl_lf_nrels(const lf *L) { return L->nrels; }
int64_t tl_lf_nentities(const lf *L) { return L->nent; }
const char *tl_lf_entity(const lf *L, int64_t id) { return L->ent_names[id]; }
int tl_lf_nrules(const lf *L) { return L->nrules; }
const lf_rule *tl_lf_rule_at(const lf *L, int i) { return &L->rules[i]; }

static const char *const builtin_cmp[] = {"lt", "le", "gt", "ge", "eq", "ne"};
static const char *const builtin_arith[] = {"add", "sub", "mul", "div", "mod"};

/* TL_KB_LT.. for a comparison builtin, TL_KB_ADD.. for arithmetic; -1 */
static int builtin_op(const char *name, bool *arith) {
  for (int i = 0; i < 6; i++)
    if (!strcmp(name, builtin_cmp[i])) return *arith = false, TL_KB_LT + i;
  for (int i = 0; i < 5; i++)
    if (!strcmp(name, builtin_arith[i])) return *arith = true, TL_KB_ADD + i;
  return -1;
}

bool tl_lf_is_builtin(const char *name) {
  bool a;
  return builtin_op(name, &a) >= 0;
}

static int count_args(const tl_node *n) { return n ? tl_ast_count(n->args) : 0; }

/* the place of (unit, line, col) in the program text: a module's text sits at its
 * `mod` line */
static void key_of(const lf *L, int unit, int line, int col, int64_t *k0, int64_t *k1) {
  *k1 = 0;
  int64_t here = (int64_t)line << 20 | (col & 0xfffff);
  while (unit > 0 && unit < L->nunits && L->mod_at[unit]) {
    const tl_ast_item *m = L->mod_at[unit];
    *k1 = here + 1;
    here = (int64_t)m->line << 20 | (m->col & 0xfffff);
    unit = m->unit;
  }
  *k0 = here;
}

static int occ_cmp(const void *a, const void *b) {
  const occ *x = a, *y = b;
  if (x->k0 != y->k0) return x->k0 < y->k0 ? -1 : 1;
  if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
  return x->seq - y->seq;
}

static int new_rel(lf *L, const char *name, int arity, int unit, const tl_node *at) {
  if (!grow(L, &L->rels, &L->caprels, (size_t)L->nrels + 1, sizeof *L->rels) || !smap_put(&L->relmap, name, L->nrels)) return L->oom = true, -1;
  lf_rel *r = &L->rels[L->nrels];
  memset(r, 0, sizeof *r);
  r->name = name;
  r->arity = arity;
  r->unit = unit;
  r->line = at->line;
  r->col = at->col;
  for (int c = 0; c < TL_KB_MAX_ARITY; c++) r->known[c] = T_NONE;
  return L->nrels++;
}

void tl_lf_define(lf *L) {
  /* the target's relations first: their columns are declared */
  for (int r = 0; L->target && r < L->target->nrels; r++) {
    const tl_logic_rel *tr = &L->target->rels[r];
    tl_node at = {.line = 1, .col = 1};
    int i = new_rel(L, tr->name, tr->arity, 0, &at);
    if (i < 0) return;
    L->rels[i].declared = true;
    for (int c = 0; c < tr->arity; c++) L->rels[i].known[c] = (int8_t)tr->type[c];
  }
  for (int i = 0; i < L->nitems; i++) {
    tl_ast_item *it = L->items[i];
    if (it->kind != TL_ITEM_RELATION) continue;
    int n = count_args(it->atom);
    if (n > TL_KB_MAX_ARITY) {
      ERR(L, it->unit, it->atom, NULL, "a relation has at most %d columns", TL_KB_MAX_ARITY);
      continue;
    }
    int r = tl_lf_find_rel(L, it->name);
    bool fresh = r < 0;
    if (fresh && (r = new_rel(L, it->name, n, it->unit, it->atom)) < 0) return;
    lf_rel *rel = &L->rels[r];
    bool same = rel->arity == n;
    int c = 0;
    for (const tl_node *a = it->atom->args; a && same; a = a->next, c++) {
      int t = !strcmp(a->name, "entity") ? T_ENT : T_INT;
      if (fresh || !rel->declared) rel->known[c] = (int8_t)t;
      else same = rel->known[c] == t;
    }
    if (!same) ERR(L, it->unit, it->atom, NULL, "relation `%s` is declared again with other columns", it->name);
    rel->declared = true;
  }
  /* then the first appearance of each relation in a fact or a rule's head */
  int n = 0;
  occ *o = malloc(sizeof *o * (size_t)(L->nitems + L->nfstmts + 1));
  if (!o) {
    L->oom = true;
    return;
  }
  for (int i = 0; i < L->nitems; i++) {
    tl_ast_item *it = L->items[i];
    if (it->kind == TL_ITEM_RELATION || it->kind == TL_ITEM_IO) continue;
    o[n] = (occ){.item = it, .unit = it->unit, .seq = n};
    key_of(L, it->unit, it->line, it->col, &o[n].k0, &o[n].k1);
    n++;
  }
  for (int i = 0; i < L->nfstmts; i++) {
    o[n] = L->fstmts[i];
    o[n].seq = n;
    key_of(L, o[n].unit, o[n].fact->line, o[n].fact->col, &o[n].k0, &o[n].k1);
    n++;
  }
  qsort(o, (size_t)n, sizeof *o, occ_cmp);
  for (int i = 0; i < n && !L->oom; i++) {
    tl_node *atom = o[i].item ? o[i].item->atom : o[i].fact;
    int k = count_args(atom);
    if (tl_lf_is_builtin(atom->name) || tl_lf_find_rel(L, atom->name) >= 0 || k > TL_KB_MAX_ARITY) continue;
    new_rel(L, atom->name, k, o[i].unit, atom);
  }
  free(o);
}

/* ---- atoms against relations ---- */

/* checks an atom (a fact, a head, a body atom); false when it is wrong (reported) */
static bool is_agg(const tl_node *l) { return l->kind == TL_N_LOGIC && l->op == TL_TOK_COLON; }

static bool check_atom(lf *L, int unit, tl_node *atom, const char *role) {
  if (is_agg(atom)) return true; /* its hidden relation is its hidden rule's head */
  int k = count_args(atom);
  bool arith;
  int op = builtin_op(atom->name, &arith);
  if (op >= 0) {
    if (strcmp(role, "body")) {
      ERR(L, unit, atom, "rename the relation", "`%s` is a built-in relation; it cannot be %s", atom->name, role);
      return false;
    }
    if (atom->op == TL_TOK_NOT) {
      ERR(L, unit, atom, arith ? NULL : "write the opposite comparison", "`not` applies to relations, not to `%s`",
          atom->name);
      return false;
    }
    int want = arith ? 3 : 2;
    if (k != want) {
      ERR(L, unit, atom, NULL, "`%s` takes %d arguments%s, not %d", atom->name, want,
          arith ? " (`add(x, y, z)`: z = x + y)" : "", k);
      return false;
    }
    return true;
  }
  int r = tl_lf_find_rel(L, atom->name);
  if (r < 0) {
    char hint[200];
    snprintf(hint, sizeof hint, "give it facts or rules, or declare it: `relation %s(entity);`", atom->name);
    ERR(L, unit, atom, hint, "unknown relation `%s`", atom->name);
    return false;
  }
  if (L->rels[r].arity != k) {
    const lf_rel *rel = &L->rels[r];
    char hint[200];
    snprintf(hint, sizeof hint, "`%s` has %d argument%s where it first appears (line %d)", rel->name, rel->arity,
             rel->arity == 1 ? "" : "s", rel->line);
    ERR(L, unit, atom, hint, "`%s` takes %d argument%s, not %d", atom->name, rel->arity, rel->arity == 1 ? "" : "s", k);
    return false;
  }
  return true;
}

/* ---- terms in rules ---- */

typedef struct {
  const char *names[256];
  int slot[256];
  tl_node *first[256];
  int n;
} varset;

static bool is_any(const tl_node *t) { return t->kind == TL_N_IDENT && t->op != TL_TOK_STRING && !strcmp(t->name, "_"); }
/* `"alice"`: a name in quotes, always the entity (parse_logic.c) */
static bool is_quoted(const tl_node *t) { return t->kind == TL_N_IDENT && t->op == TL_TOK_STRING; }
#define ENT_PENDING INT64_MAX /* ents: a symbol not yet given its id */

static bool is_entity_name(const lf *L, const tl_node *t) {
  return t->kind == TL_N_IDENT && !is_any(t) && smap_get(&L->ents, t->name) >= 0;
}

/* the name of a variable term (`x`, `$x`), or NULL */
static const char *var_name(const lf *L, const tl_node *t) {
  if (t->kind == TL_N_LVAR) return t->name;
  if (t->kind == TL_N_IDENT && !is_any(t) && !is_entity_name(L, t)) return t->name;
  return NULL;
}

static bool is_expr(const tl_node *t) { return t->kind == TL_N_BINARY || t->kind == TL_N_UNARY; }

/* ---- types: union-find over slots ---- */

static int new_slot(lf *L) {
  size_t need = (size_t)L->nslots + 1;
  if (!grow(L, &L->parent, &L->capparent, need, sizeof *L->parent) || !grow(L, &L->type, &L->captype, need, sizeof *L->type))
    return -1;
  L->parent[L->nslots] = L->nslots;
  L->type[L->nslots] = T_NONE;
  return L->nslots++;
}

static int find(lf *L, int x) {
  while (L->parent[x] != x) x = L->parent[x] = L->parent[L->parent[x]];
  return x;
}

/* slot holds type t; false when it holds the other one */
static bool give(lf *L, int slot, int t) {
  if (slot < 0) return true;
  int r = find(L, slot);
  if (L->type[r] == T_NONE) L->type[r] = (int8_t)t;
  return L->type[r] == t;
}

static bool unite(lf *L, int a, int b) {
  if (a < 0 || b < 0) return true;
  int ra = find(L, a), rb = find(L, b);
  if (ra == rb) return true;
  if (L->type[ra] != T_NONE && L->type[rb] != T_NONE && L->type[ra] != L->type[rb]) return false;
  L->parent[ra] = rb;
  if (L->type[rb] == T_NONE) L->type[rb] = L->type[ra];
  return true;
}

static const char *const BOTH_HINT = "an argument position holds entities or integers, not both";

static void col_clash(lf *L, int unit, const tl_node *at, int rel, int arg) {
  ERR(L, unit, at, BOTH_HINT, "argument %d of `%s` is used both as an entity and as an integer", arg + 1,
      L->rels[rel].name);
}

/* a rule being typed, checked, lowered */
typedef struct {
  lf *L;
  int unit;
  varset vs;
} rctx;

static int var_slot(rctx *c, const char *name, tl_node *at) {
  for (int i = 0; i < c->vs.n; i++)
    if (!strcmp(c->vs.names[i], name)) return c->vs.slot[i];
  if (c->vs.n == 256) {
    ERR(c->L, c->unit, at, NULL, "a rule has at most 256 variables");
    return -1;
  }
  c->vs.names[c->vs.n] = name;
  c->vs.first[c->vs.n] = at;
  return c->vs.slot[c->vs.n++] = new_slot(c->L);
}

static int var_index(const rctx *c, const char *name) {
  for (int i = 0; i < c->vs.n; i++)
    if (!strcmp(c->vs.names[i], name)) return i;
  return -1;
}

/* t is an integer: its variables are integers, an entity in it is an error */
static void type_int(rctx *c, tl_node *t) {
  lf *L = c->L;
  const char *v = var_name(L, t);
  if (v) {
    if (!give(L, var_slot(c, v, t), T_INT))
      ERR(L, c->unit, t, NULL, "variable `%s` is used both as an entity and as an integer", v);
  } else if (is_entity_name(L, t)) {
    ERR(L, c->unit, t, NULL, "arithmetic on the entity `%s`", t->name);
  } else if (is_expr(t)) {
    if (t->lhs) type_int(c, t->lhs);
    if (t->rhs) type_int(c, t->rhs);
  }
}

/* t is argument `arg` of relation rel (whose slot is cs) */
static void type_col(rctx *c, tl_node *t, int rel, int arg) {
  lf *L = c->L;
  int cs = L->rels[rel].slot + arg;
  const char *v = var_name(L, t);
  if (is_any(t)) return;
  bool ok = true;
  if (v) ok = unite(L, var_slot(c, v, t), cs);
  else if (is_entity_name(L, t)) ok = give(L, cs, T_ENT);
  else {
    ok = give(L, cs, T_INT);
    if (is_expr(t)) type_int(c, t);
  }
  if (!ok) col_clash(L, c->unit, t, rel, arg);
}

static void type_cmp(rctx *c, tl_node *a, tl_node *b) {
  lf *L = c->L;
  bool ia = a->kind == TL_N_INT || is_expr(a), ib = b->kind == TL_N_INT || is_expr(b);
  const char *va = var_name(L, a), *vb = var_name(L, b);
  if (ia || ib) {
    tl_node *other = ia ? b : a;
    if (is_entity_name(L, other)) {
      ERR(L, c->unit, other, NULL, "the entity `%s` is compared with an integer", other->name);
      return;
    }
    type_int(c, a);
    type_int(c, b);
  } else if (va && vb) {
    if (!unite(L, var_slot(c, va, a), var_slot(c, vb, b)))
      ERR(L, c->unit, b, NULL, "`%s` and `%s` are compared, but one is an entity and the other an integer", va, vb);
  } else if (va || vb) {
    tl_node *var = va ? a : b, *ent = va ? b : a;
    if (is_entity_name(L, ent) && !give(L, var_slot(c, va ? va : vb, var), T_ENT))
      ERR(L, c->unit, var, NULL, "variable `%s` is used both as an entity and as an integer", va ? va : vb);
  }
}

static bool is_cmp_node(const tl_node *l) {
  return l->kind == TL_N_BINARY;
}

/* an aggregate `hidden(group..; n)`: the group in the hidden relation's first
 * columns, n an integer, and so is the value column of sum, min and max */
static void type_agg(rctx *c, tl_node *l) {
  lf *L = c->L;
  int rel = tl_lf_find_rel(L, l->name), i = 0;
  tl_node *a = l->args;
  for (; a && a->next; a = a->next, i++) type_col(c, a, rel, i);
  if (a) type_int(c, a);
  if (strcmp(l->str, "count") && rel >= 0 && !give(L, L->rels[rel].slot + (int)l->len, T_INT))
    ERR(L, c->unit, l->rhs, "sum, min and max take integers", "`%s` over entities", l->str);
}

static void type_rule(lf *L, tl_ast_item *it) {
  rctx c = {.L = L, .unit = it->unit};
  for (tl_node *l = it->atom; l; l = l == it->atom ? it->body : l->next) {
    if (is_cmp_node(l)) {
      type_cmp(&c, l->lhs, l->rhs);
      continue;
    }
    if (is_agg(l)) {
      type_agg(&c, l);
      continue;
    }
    bool arith;
    int op = builtin_op(l->name, &arith);
    if (op >= 0) {
      if (arith)
        for (tl_node *a = l->args; a; a = a->next) type_int(&c, a);
      else type_cmp(&c, l->args, l->args->next);
      continue;
    }
    int rel = tl_lf_find_rel(L, l->name), i = 0;
    for (tl_node *a = l->args; a; a = a->next, i++) type_col(&c, a, rel, i);
  }
}

static void type_fact(lf *L, tl_ast_item *it) {
  int rel = tl_lf_find_rel(L, it->name), i = 0;
  for (tl_node *a = it->atom->args; a; a = a->next, i++)
    if (!give(L, L->rels[rel].slot + i, a->kind == TL_N_IDENT ? T_ENT : T_INT)) col_clash(L, it->unit, a, rel, i);
}

/* A query's constant of the other kind than its column matches nothing (Prolog's
 * answer: `edge(0, 1, W)` fails against `edge(a, b, 1.5)`), said by a warning; a fact
 * statement's is an error, as a fact's is. Typed after every fact and rule, so the
 * column's kind is theirs. */
static void type_use(lf *L, lf_use *u) {
  u->never = false;
  for (int i = 0; i < u->nargs; i++) {
    lf_arg *a = &u->args[i];
    int t = a->kind == LF_ARG_NUM ? T_INT : a->kind == LF_ARG_NAME && smap_get(&L->ents, a->node->name) >= 0 ? T_ENT : T_NONE;
    if (t == T_NONE || give(L, L->rels[u->rel].slot + i, t)) continue;
    if (u->fact) {
      col_clash(L, u->unit, a->node, u->rel, i);
      continue;
    }
    u->never = true;
    if (t == T_INT)
      warn_at(L, u->unit, a->node, BOTH_HINT, "argument %d of `%s` holds entities, so the integer %lld matches nothing here", i + 1,
              L->rels[u->rel].name, (long long)a->v);
    else
      warn_at(L, u->unit, a->node, BOTH_HINT, "argument %d of `%s` holds integers, so the entity `%s` matches nothing here",
              i + 1, L->rels[u->rel].name, a->node->name);
  }
}

/* the names in quotes of term list t (nested too) join the entity set: a rule's
 * `"alice"` is the entity, named by a fact or not; false when out of memory */
static bool add_quoted(lf *L, const tl_node *t) {
  for (; t; t = t->next) {
    if (is_quoted(t) && smap_get(&L->ents, t->name) < 0 && !smap_put(&L->ents, t->name, ENT_PENDING)) return false;
    if (t->kind == TL_N_LOGIC && !add_quoted(L, t->args)) return false;
    if (is_expr(t) && (!add_quoted(L, t->lhs) || !add_quoted(L, t->rhs))) return false;
  }
  return true;
}

/* ---- entity ids, in order of first appearance ---- */

static int64_t intern(lf *L, const char *name) {
  int64_t id = smap_get(&L->ents, name);
  if (id != ENT_PENDING) return id;
  if (!grow(L, &L->ent_names, &L->capent, (size_t)L->nent + 1, sizeof *L->ent_names) || !smap_put(&L->ents, name, L->nent))
    return L->oom = true, -1;
  L->ent_names[L->nent] = name;
  return L->nent++;
}

static void intern_terms(lf *L, tl_node *t) {
  for (; t; t = t->next) {
    if (t->kind == TL_N_IDENT && !is_any(t) && smap_get(&L->ents, t->name) >= 0) intern(L, t->name);
    if (t->kind == TL_N_LOGIC) intern_terms(L, t->args);
    if (is_expr(t)) { /* operands are single nodes, not lists */
      intern_terms(L, t->lhs);
      intern_terms(L, t->rhs);
    }
  }
}

static void intern_rule(lf *L, tl_ast_item *it) {
  for (tl_node *l = it->atom; l; l = l == it->atom ? it->body : l->next) {
    if (is_cmp_node(l)) {
      intern_terms(L, l->lhs);
      intern_terms(L, l->rhs);
    } else intern_terms(L, l->args);
  }
}

/* ---- rules: wildcards, bound variables ---- */

static bool has_any(const tl_node *t) {
  if (!t) return false;
  if (is_any(t)) return true;
  return is_expr(t) && (has_any(t->lhs) || has_any(t->rhs));
}

/* the first occurrence of variable `name` in term t, or NULL */
static tl_node *var_in(const lf *L, tl_node *t, const char *name) {
  if (!t) return NULL;
  const char *v = var_name(L, t);
  if (v && !strcmp(v, name)) return t;
  if (!is_expr(t)) return NULL;
  tl_node *x = var_in(L, t->lhs, name);
  return x ? x : var_in(L, t->rhs, name);
}

/* gives t's variables their numbers, in order of appearance */
static void note_vars(rctx *c, tl_node *t) {
  if (!t) return;
  const char *v = var_name(c->L, t);
  if (v) var_slot(c, v, t);
  if (is_expr(t)) note_vars(c, t->lhs), note_vars(c, t->rhs);
}

static bool all_bound(const rctx *c, const tl_node *t, const bool *bound) {
  if (!t) return true;
  const char *v = var_name(c->L, t);
  if (v) return bound[var_index(c, v)];
  return !is_expr(t) || (all_bound(c, t->lhs, bound) && all_bound(c, t->rhs, bound));
}

static tl_node *arith_result(tl_node *l) {
  bool arith;
  if (is_agg(l)) {
    tl_node *a = l->args;
    while (a && a->next) a = a->next;
    return a;
  }
  if (l->kind != TL_N_LOGIC || builtin_op(l->name, &arith) < 0 || !arith) return NULL;
  return l->args->next->next;
}

static int occurrences(lf *L, tl_ast_item *it, const char *name);

/* could term t of rule it be an entity there: an argument of an atom (not of
 * arithmetic, not inside an expression) or a side of a comparison? */
static bool entity_place(tl_ast_item *it, const tl_node *t) {
  bool arith = false;
  for (tl_node *l = it->atom; l; l = l == it->atom ? it->body : l->next) {
    if (is_cmp_node(l)) {
      if (l->lhs == t || l->rhs == t) return true;
      continue;
    }
    if (builtin_op(l->name, &arith) >= 0 && arith) continue;
    for (tl_node *a = l->args; a; a = a->next)
      if (a == t) return true;
  }
  return false;
}

static const char *const UNBOUND_HINT = "a variable takes its values from a positive atom of the body (or an "
                                         "arithmetic result); `not` and comparisons only test them";

/* every variable gets its values from a positive atom or as an arithmetic result;
 * the wildcard only where it means "any value" */
static bool check_rule(lf *L, tl_ast_item *it) {
  rctx c = {.L = L, .unit = it->unit};
  int before = L->errors;
  for (tl_node *a = it->atom->args; a; a = a->next)
    if (has_any(a)) ERR(L, it->unit, a, "every argument of a head needs a value", "a wildcard `_` in a rule's head");
  for (tl_node *l = it->body; l; l = l->next) {
    bool arith = false;
    bool builtin = is_cmp_node(l) || builtin_op(l->name, &arith) >= 0;
    tl_node *sides[3] = {0};
    if (is_cmp_node(l)) sides[0] = l->lhs, sides[1] = l->rhs;
    else if (builtin) sides[0] = l->args, sides[1] = l->args->next, sides[2] = arith ? l->args->next->next : NULL;
    for (int i = 0; i < 3; i++)
      if (sides[i] && has_any(sides[i]))
        ERR(L, it->unit, sides[i], NULL, "a wildcard `_` %s", arith ? "in arithmetic" : "cannot be compared");
    if (!builtin)
      for (tl_node *a = l->args; a; a = a->next)
        if (is_expr(a) && has_any(a)) ERR(L, it->unit, a, NULL, "a wildcard `_` in arithmetic");
  }
  if (L->errors > before) return false;
  /* the variables, in order of appearance */
  for (tl_node *l = it->atom; l; l = l == it->atom ? it->body : l->next) {
    if (is_cmp_node(l)) note_vars(&c, l->lhs), note_vars(&c, l->rhs);
    else
      for (tl_node *a = l->args; a; a = a->next) note_vars(&c, a);
  }
  bool bound[256] = {0}, result[256] = {0};
  for (tl_node *l = it->body; l; l = l->next) {
    bool arith;
    if (l->kind != TL_N_LOGIC || l->op == TL_TOK_NOT || is_agg(l) || builtin_op(l->name, &arith) >= 0) continue;
    for (tl_node *a = l->args; a; a = a->next) {
      const char *v = var_name(L, a);
      if (v) bound[var_index(&c, v)] = true;
    }
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (tl_node *l = it->body; l; l = l->next) {
      tl_node *r = arith_result(l);
      const char *v = r ? var_name(L, r) : NULL;
      if (!v) continue;
      result[var_index(&c, v)] = true;
      bool in = true; /* the operands; an aggregate's group */
      for (tl_node *a = l->args; a && a != r && in; a = a->next) in = all_bound(&c, a, bound);
      if (!bound[var_index(&c, v)] && in) bound[var_index(&c, v)] = grew = true;
    }
  }
  /* a variable some arithmetic would bind is unbound because of another: that one
   * is named, unless they are all such */
  int first = -1, named = -1;
  for (int i = 0; i < c.vs.n; i++) {
    if (bound[i]) continue;
    if (first < 0) first = i;
    if (!result[i]) {
      named = i;
      break;
    }
  }
  if (named < 0) named = first;
  if (named >= 0) {
    /* where it is in the body (under `not`, in a comparison) says most; else the head */
    tl_node *at = NULL;
    for (tl_node *l = it->body; l && !at; l = l->next) {
      if (is_cmp_node(l)) at = var_in(L, l->lhs, c.vs.names[named]), at = at ? at : var_in(L, l->rhs, c.vs.names[named]);
      for (tl_node *a = is_cmp_node(l) ? NULL : l->args; a && !at; a = a->next) at = var_in(L, a, c.vs.names[named]);
    }
    at = at ? at : c.vs.first[named];
    const char *name = c.vs.names[named];
    for (tl_node *l = it->body; l; l = l->next)
      if (is_agg(l) && at->line == l->line && at->col == l->col && var_in(L, l->args, name)) {
        char hint[400];
        snprintf(hint, sizeof hint, "`%s` occurs outside the aggregate's braces too, so the aggregate groups on it: bind it "
                 "outside them (in a positive atom), or rename one of the two", name);
        ERR(L, it->unit, l, hint, "unbound variable `%s`", name);
        return false;
      }
    if (at->kind == TL_N_LVAR || occurrences(L, it, name) > 1 || !entity_place(it, at)) {
      ERR(L, it->unit, at, UNBOUND_HINT, "unbound variable `%s`", name);
      return false;
    }
    /* a bare name written once: most likely meant as a constant */
    char hint[600];
    snprintf(hint, sizeof hint, "%s; for the entity `%s` write `\"%s\"`", UNBOUND_HINT, name, name);
    ERR(L, it->unit, at, hint, "unbound variable `%s` (no fact names an entity `%s`, so here it is a variable)", name,
        name);
    return false;
  }
  return true;
}

/* ---- warnings: a bare name that is an entity, a variable written once ---- */

typedef void (*term_fn)(tl_node *t, void *arg);

/* fn on term t and the terms inside it */
static void each_term(tl_node *t, term_fn fn, void *arg) {
  if (!t) return;
  fn(t, arg);
  if (is_expr(t)) each_term(t->lhs, fn, arg), each_term(t->rhs, fn, arg);
}

/* fn on every term of a rule, in text order */
static void each_rule_term(tl_ast_item *it, term_fn fn, void *arg) {
  for (tl_node *l = it->atom; l; l = l == it->atom ? it->body : l->next) {
    if (is_cmp_node(l)) each_term(l->lhs, fn, arg), each_term(l->rhs, fn, arg);
    else
      for (tl_node *a = l->args; a; a = a->next) each_term(a, fn, arg);
  }
}

/* the first name `name` among the terms of list t (nested too); only a quoted one when
 * quoted */
static const tl_node *find_name(const tl_node *t, const char *name, bool quoted) {
  for (; t; t = t->next) {
    const tl_node *x = NULL;
    if (t->kind == TL_N_IDENT && (!quoted || is_quoted(t)) && !strcmp(t->name, name)) return t;
    if (t->kind == TL_N_LOGIC) x = find_name(t->args, name, quoted);
    if (is_expr(t)) x = find_name(t->lhs, name, quoted), x = x ? x : find_name(t->rhs, name, quoted);
    if (x) return x;
  }
  return NULL;
}

/* "line 3" in unit, "family.tl:3" in another */
static void place(const lf *L, int unit, int at_unit, int line, char *buf, size_t n) {
  if (at_unit == unit) snprintf(buf, n, "line %d", line);
  else snprintf(buf, n, "%s:%d", unit_diag(L, at_unit)->file, line);
}

/* what makes `name` an entity, said from unit: "the fact at line 3 names it" */
static void entity_source(const lf *L, int unit, const char *name, char *buf, size_t n) {
  char at[300];
  for (int i = 0; i < L->nitems; i++) {
    const tl_ast_item *it = L->items[i];
    const tl_node *x = NULL;
    if (it->kind == TL_ITEM_FACT) x = find_name(it->atom->args, name, false);
    if (it->kind == TL_ITEM_RULE) x = find_name(it->atom, name, true), x = x ? x : find_name(it->body, name, true);
    if (!x) continue;
    place(L, unit, it->unit, x->line, at, sizeof at);
    snprintf(buf, n, it->kind == TL_ITEM_FACT ? "the fact at %s names it" : "%s names it in quotes", at);
    return;
  }
  for (const lf_use *u = L->uses; u; u = u->next)
    for (int k = 0; u->fact && k < u->nargs; k++)
      if (u->args[k].kind == LF_ARG_NAME && !strcmp(u->args[k].node->name, name)) {
        place(L, unit, u->unit, u->at->line, at, sizeof at);
        snprintf(buf, n, "the fact at %s names it", at);
        return;
      }
  snprintf(buf, n, "the knowledge base has it");
}

typedef struct {
  lf *L;
  int unit;
  const char *seen[256];
  int n;
} ent_warn;

/* a bare name that is an entity: said once a rule, at its first place */
static void warn_entity(tl_node *t, void *arg) {
  ent_warn *w = arg;
  if (t->kind != TL_N_IDENT || is_any(t) || is_quoted(t) || !is_entity_name(w->L, t)) return;
  for (int i = 0; i < w->n; i++)
    if (!strcmp(w->seen[i], t->name)) return;
  if (w->n < 256) w->seen[w->n++] = t->name;
  char why[400], hint[300];
  entity_source(w->L, w->unit, t->name, why, sizeof why);
  snprintf(hint, sizeof hint, "write `$%s` for a variable, or `\"%s\"` for the entity without this warning", t->name,
           t->name);
  warn_at(w->L, w->unit, t, hint, "`%s` is the entity `%s` here, not a variable: %s", t->name, t->name, why);
}

typedef struct {
  lf *L;
  const char *names[256];
  tl_node *first[256];
  int count[256];
  int n;
} var_count;

static void count_var(tl_node *t, void *arg) {
  var_count *c = arg;
  const char *v = t->kind == TL_N_IDENT || t->kind == TL_N_LVAR ? var_name(c->L, t) : NULL;
  if (!v) return;
  for (int i = 0; i < c->n; i++)
    if (!strcmp(c->names[i], v)) {
      c->count[i]++;
      return;
    }
  if (c->n == 256) return;
  c->names[c->n] = v;
  c->first[c->n] = t;
  c->count[c->n++] = 1;
}

/* a bare name written once in a checked rule matches anything: as Soufflé and Prolog
 * do, say so (a constant meant, or a typo); `$x` once is meant */
static void warn_singletons(lf *L, tl_ast_item *it) {
  var_count c = {.L = L};
  each_rule_term(it, count_var, &c);
  for (int i = 0; i < c.n; i++) {
    if (c.count[i] != 1 || c.first[i]->kind != TL_N_IDENT) continue;
    char hint[400];
    snprintf(hint, sizeof hint, "no fact names an entity `%s`: write `_` for any value, or `\"%s\"` for the entity",
             c.names[i], c.names[i]);
    warn_at(L, it->unit, c.first[i], hint, "`%s` occurs only once in this rule, so it is a variable that matches any value",
            c.names[i]);
  }
}

/* how often variable `name` is written in rule it */
static int occurrences(lf *L, tl_ast_item *it, const char *name) {
  var_count c = {.L = L};
  each_rule_term(it, count_var, &c);
  for (int i = 0; i < c.n; i++)
    if (!strcmp(c.names[i], name)) return c.count[i];
  return 0;
}

static void warn_rule(lf *L, tl_ast_item *it) {
  ent_warn w = {.L = L, .unit = it->unit};
  each_rule_term(it, warn_entity, &w);
}

/* ---- lowering to tl_kb terms ---- */

static tl_kb_op tok_op(tl_tok_kind k) {
  switch (k) {
  case TL_TOK_PLUS: return TL_KB_ADD;
  case TL_TOK_MINUS: return TL_KB_SUB;
  case TL_TOK_STAR: return TL_KB_MUL;
  case TL_TOK_SLASH: return TL_KB_DIV;
  case TL_TOK_PERCENT: return TL_KB_MOD;
  case TL_TOK_LT: return TL_KB_LT;
  case TL_TOK_LE: return TL_KB_LE;
  case TL_TOK_GT: return TL_KB_GT;
  case TL_TOK_GE: return TL_KB_GE;
  case TL_TOK_EQ: return TL_KB_EQ;
  default: return TL_KB_NE;
  }
}

static tl_kb_term lower_term(lf *L, const tl_node *t) {
  if (is_any(t)) return tl_kb_any();
  const char *v = var_name(L, t);
  if (v) return tl_kb_var(v);
  if (t->kind == TL_N_IDENT) return tl_kb_ent(smap_get(&L->ents, t->name));
  if (t->kind == TL_N_INT) return tl_kb_num(t->ival);
  tl_kb_term *ab = arena(L, sizeof *ab * 2);
  if (!ab) return tl_kb_any();
  if (t->kind == TL_N_UNARY) {
    ab[0] = tl_kb_num(0);
    ab[1] = lower_term(L, t->lhs);
    return tl_kb_expr(TL_KB_SUB, &ab[0], &ab[1]);
  }
  ab[0] = lower_term(L, t->lhs);
  ab[1] = lower_term(L, t->rhs);
  return tl_kb_expr(tok_op(t->op), &ab[0], &ab[1]);
}

static tl_kb_literal lower_literal(lf *L, tl_node *l) {
  if (l->kind == TL_N_BINARY) {
    tl_kb_term *two = arena(L, sizeof *two * 2);
    if (!two) return tl_kb_cmp(TL_KB_EQ, NULL);
    two[0] = lower_term(L, l->lhs);
    two[1] = lower_term(L, l->rhs);
    return tl_kb_cmp(tok_op(l->op), two);
  }
  int n = count_args(l), i = 0;
  tl_kb_term *args = arena(L, sizeof *args * (size_t)(n + 1));
  for (tl_node *a = l->args; a && args; a = a->next) args[i++] = lower_term(L, a);
  if (is_agg(l) && args) {
    static const char *const ops[] = {"count", "sum", "min", "max"};
    int op = 0;
    while (op < 3 && strcmp(l->str, ops[op])) op++;
    args[n] = tl_kb_num(op ? (int64_t)l->len : -1);
    return tl_kb_agg((tl_kb_op)(TL_KB_COUNT + op), l->name, n + 1, args);
  }
  bool arith;
  int op = builtin_op(l->name, &arith);
  if (op >= 0) return arith ? tl_kb_arith((tl_kb_op)op, args) : tl_kb_cmp((tl_kb_op)op, args);
  return l->op == TL_TOK_NOT ? tl_kb_not(l->name, n, args) : tl_kb_atom(l->name, n, args);
}

static void lower_rule(lf *L, tl_ast_item *it) {
  lf_rule *r = &L->rules[L->nrules];
  r->item = it;
  r->head = lower_literal(L, it->atom);
  r->nbody = 0;
  for (tl_node *l = it->body; l; l = l->next) r->nbody++;
  r->body = arena(L, sizeof *r->body * (size_t)r->nbody);
  int i = 0;
  for (tl_node *l = it->body; l && r->body; l = l->next) r->body[i++] = lower_literal(L, l);
  if (!L->oom) L->nrules++;
}

/* ---- the knowledge base's own checks ---- */

/* is relation rel among those of "p -> not q -> p"? */
static bool in_cycle(const char *cycle, const char *rel) {
  size_t n = strlen(rel);
  for (const char *p = strstr(cycle, rel); p; p = strstr(p + 1, rel))
    if ((p == cycle || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ')) return true;
  return false;
}

/* the knowledge base ran out of memory: marks the unit's diagnostics, so a caller can
 * say that alone */
static void kb_note_oom(lf *L, int unit, const tl_kb *kb) {
  if (tl_last_status(kb->ctx) == TL_ERR_NOMEM) unit_diag(L, unit)->oom = true;
}

/* the knowledge base's last error at (unit, line, col) */
static void kb_error_at(lf *L, int unit, int line, int col, const tl_kb *kb) {
  kb_note_oom(L, unit, kb);
  err_at(L, unit, line, col, NULL, "%s", tl_last_error(kb->ctx));
}

/* rule r closed a cycle through `not`: at its literal on the cycle, a negated one first */
static void strata_error(lf *L, const lf_rule *r, const char *cycle, bool agg) {
  tl_node *at = r->item->atom;
  for (tl_node *l = r->item->body; agg && l && at == r->item->atom; l = l->next) /* the aggregate */
    for (const tl_node *b = is_agg(l) ? ((const tl_ast_item *)l->ref)->body : NULL; b; b = b->next)
      if (b->kind == TL_N_LOGIC && in_cycle(cycle, b->name)) {
        at = l;
        break;
      }
  for (int pass = 0; pass < 2 && at == r->item->atom; pass++)
    for (tl_node *l = r->item->body; l; l = l->next)
      if (l->kind == TL_N_LOGIC && (pass || l->op == TL_TOK_NOT) && in_cycle(cycle, l->name)) {
        at = l;
        break;
      }
  if (agg)
    ERR(L, r->item->unit, at, "an aggregate needs the relations in its braces complete: they may not depend on the rule's head",
        "aggregate is not stratified: %s", cycle);
  else
    ERR(L, r->item->unit, at, "a relation may negate only relations that do not depend on it",
        "negation is not stratified: %s", cycle);
}

/* a rule tl_kb_rule refused: its message at the literal it names */
static void kb_rule_error(lf *L, const lf_rule *r, tl_kb *kb) {
  const char *msg = tl_last_error(kb->ctx);
  kb_note_oom(L, r->item->unit, kb);
  tl_node *at = r->item->atom;
  if (kb->err_lit >= 0) {
    at = r->item->body;
    for (int i = 0; i < kb->err_lit && at->next; i++) at = at->next;
  }
  const char *neg = strstr(msg, "negation is not stratified: ");
  if (neg) {
    strata_error(L, r, neg + strlen("negation is not stratified: "), false);
    return;
  }
  /* "kb_rule RULE: message": the rule is where the caret is */
  const char *p = strncmp(msg, "kb_rule ", 8) ? NULL : strstr(msg, ": ");
  ERR(L, r->item->unit, at, NULL, "%s", p ? p + 2 : msg);
}

/* src/logic's stratification check on the target's rules (which passed it) and the
 * program's, with no knowledge base and no engine: at the first rule that closes a
 * cycle through `not`, the error tl_kb_rule would give there. */
static void check_strata(lf *L) {
  const tl_kb *t = L->target;
  int ndeps = 0, room = 0;
  for (int i = 0; t && i < t->nrules; i++) room += t->rules[i].nbody;
  for (int i = 0; i < L->nrules; i++) room += 2 * L->rules[i].nbody; /* an aggregate's: its braces' too */
  const char **names = malloc(sizeof *names * (size_t)(L->nrels + 1));
  tl_logic_dep *deps = malloc(sizeof *deps * (size_t)(room + 1));
  int *end = malloc(sizeof *end * (size_t)(L->nrules + 1)); /* end[i]: the dependencies up to rule i's */
  if (!names || !deps || !end) {
    L->oom = true;
    goto done;
  }
  for (int r = 0; r < L->nrels; r++) names[r] = L->rels[r].name;
  for (int i = 0; t && i < t->nrules; i++) {
    const tl_logic_rule *r = &t->rules[i];
    int head = tl_lf_find_rel(L, t->rels[r->head.rel].name);
    for (int j = 0; j < r->nbody; j++)
      if (r->body[j].kind == TL_LIT_ATOM || r->body[j].kind == TL_LIT_NOT)
        deps[ndeps++] = (tl_logic_dep){head, tl_lf_find_rel(L, t->rels[r->body[j].rel].name), r->body[j].kind == TL_LIT_NOT};
  }
  for (int i = 0; i < L->nrules; i++) {
    const lf_rule *r = &L->rules[i];
    int head = tl_lf_find_rel(L, r->head.rel);
    for (int j = 0; j < r->nbody; j++) {
      const tl_kb_literal *l = &r->body[j];
      if (l->kind == TL_KB_ATOM || l->kind == TL_KB_NOT)
        deps[ndeps++] = (tl_logic_dep){head, tl_lf_find_rel(L, l->rel), l->kind == TL_KB_NOT};
      if (l->kind != TL_KB_AGG) continue;
      /* through an aggregate: the relations in its braces, by name (its hidden rule's
       * body), then the hidden relation */
      uint8_t how = (uint8_t)(2 + l->op - TL_KB_COUNT);
      const lf_rule *h = NULL;
      for (int k = 0; k < L->nrules && !h; k++)
        if (!strcmp(L->rules[k].head.rel, l->rel)) h = &L->rules[k];
      for (int k = 0; h && k < h->nbody; k++)
        if (h->body[k].kind == TL_KB_ATOM || h->body[k].kind == TL_KB_NOT)
          deps[ndeps++] = (tl_logic_dep){head, tl_lf_find_rel(L, h->body[k].rel), how};
      deps[ndeps++] = (tl_logic_dep){head, tl_lf_find_rel(L, l->rel), how};
    }
    end[i] = ndeps;
  }
  char *cycle = NULL;
  int bad = tl_logic_strata_check(L->nrels, names, ndeps, deps, &cycle), i = -1;
  if (bad >= 0) /* the rule that closes the first cycle: the shortest prefix of the rules with one */
    do {
      free(cycle);
      bad = tl_logic_strata_check(L->nrels, names, end[++i], deps, &cycle);
    } while (bad == -1);
  if (bad >= 0 && cycle) strata_error(L, &L->rules[i], cycle, deps[bad].neg > 1);
  else if (bad != -1) L->oom = true;
  free(cycle);
done:
  free(names), free(deps), free(end);
}

/* declares the relations, entities, facts and rules in kb; false after an error */
static bool fill_kb(lf *L, tl_kb *kb) {
  for (int r = 0; r < L->nrels; r++) {
    lf_rel *rel = &L->rels[r];
    if (tl_kb_relation(kb, rel->name, rel->arity, rel->type) != TL_OK) {
      kb_error_at(L, rel->unit, rel->line, rel->col, kb);
      return false;
    }
  }
  for (int64_t e = 0; e < L->nent; e++)
    if (tl_kb_entity(kb, L->ent_names[e]) != e) {
      kb_error_at(L, 0, 1, 1, kb);
      return false;
    }
  for (int r = 0; r < L->nrels; r++)
    if (L->rels[r].nfacts && tl_kb_facts(kb, L->rels[r].name, L->rels[r].nfacts, L->rels[r].facts) != TL_OK) {
      kb_error_at(L, L->rels[r].unit, L->rels[r].line, L->rels[r].col, kb);
      return false;
    }
  for (int i = 0; i < L->nrules; i++) {
    const lf_rule *r = &L->rules[i];
    if (tl_kb_rule(kb, &r->head, r->nbody, r->body) != TL_OK) {
      kb_rule_error(L, r, kb);
      return false;
    }
  }
  return true;
}

int tl_lf_apply(lf *L) {
  if (L->errors || !L->target) return L->errors;
  L->target->agg_names = L->naggs;
  fill_kb(L, L->target);
  return L->errors;
}

/* ---- everything together ---- */

static bool valid_fact(lf *L, tl_ast_item *it) {
  bool ok = true;
  for (tl_node *a = it->atom->args; a; a = a->next)
    if (a->kind != TL_N_INT && (a->kind != TL_N_IDENT || is_any(a))) {
      ERR(L, it->unit, a, "a fact holds no variables: a rule `p(x) :- q(x).` derives facts",
          "a fact's arguments are entity names and integers");
      ok = false;
    }
  return ok;
}

static void add_fact_row(lf *L, tl_ast_item *it) {
  lf_rel *r = &L->rels[tl_lf_find_rel(L, it->name)];
  /* rows of arity values: the capacity counts values */
  size_t row = (size_t)(r->arity ? r->arity : 1);
  if (!grow(L, &r->facts, &r->cap, ((size_t)r->nfacts + 1) * row, sizeof *r->facts)) return;
  int i = 0;
  for (tl_node *a = it->atom->args; a; a = a->next, i++)
    r->facts[r->nfacts * r->arity + i] = a->kind == TL_N_INT ? a->ival : smap_get(&L->ents, a->name);
  r->nfacts++;
}

/* `.input edge(IO=file, filename="e.csv", delimiter=",")`: Soufflé's defaults, edge.facts
 * to read and path.csv to write, tab-separated, beside the program's file */
static void check_io(lf *L, tl_ast_item *it) {
  bool out = !strcmp(it->atom->str, "output"), to_stdout = false;
  const char *file = NULL;
  char delim = '\t';
  if (tl_lf_find_rel(L, it->name) < 0) {
    char hint[200];
    snprintf(hint, sizeof hint, "declare it: `relation %s(entity, i64);` (its columns' types)", it->name);
    ERR(L, it->unit, it->atom, hint, "`.%s %s`: unknown relation `%s`", it->atom->str, it->name, it->name);
    return;
  }
  for (const tl_node *o = it->atom->args; o; o = o->next) {
    if (!strcmp(o->name, "IO") && (!strcmp(o->str, "file") || (out && !strcmp(o->str, "stdout")))) to_stdout = !strcmp(o->str, "stdout");
    else if (!strcmp(o->name, "filename") && o->len && !memchr(o->str, 0, o->len)) file = o->str;
    else if (!strcmp(o->name, "delimiter") && o->len == 1) delim = o->str[0];
    else {
      ERR(L, it->unit, o, out ? "options: IO=file or IO=stdout, filename=\"path.csv\", delimiter=\",\"" : "options: IO=file, filename=\"edge.facts\", delimiter=\",\"",
          "`%s=%s` is not an option of `.%s` that TL supports", o->name, o->str, it->atom->str);
      return;
    }
  }
  if (delim == '\n' || delim == '\r' || delim == '"') {
    ERR(L, it->unit, it->atom, NULL, "a delimiter cannot be a line end or a quote");
    return;
  }
  char *path = NULL;
  if (!to_stdout) {
    char name[600];
    if (!file) snprintf(name, sizeof name, "%s.%s", it->name, out ? "csv" : "facts"), file = name;
    const char *src = unit_diag(L, it->unit)->file, *slash = src ? strrchr(src, '/') : NULL;
    size_t dir = file[0] == '/' || !slash ? 0 : (size_t)(slash - src) + 1;
    path = arena(L, dir + strlen(file) + 1);
    if (!path) return;
    memcpy(path, src, dir);
    strcpy(path + dir, file);
  }
  if (!grow(L, &L->io, &L->capio, (size_t)L->nio + 1, sizeof *L->io)) return;
  L->io[L->nio++] = (lf_io){it->name, path, delim, out, it->atom->line, it->atom->col};
}

int tl_lf_resolve(lf *L) {
  int n = 0;
  bool *bad = calloc((size_t)L->nitems + 1, sizeof *bad);
  int nuses = 0;
  for (lf_use *u = L->uses; u; u = u->next) nuses++;
  occ *all = malloc(sizeof *all * ((size_t)(L->nitems + nuses) + 1));
  if (!bad || !all) {
    L->oom = true;
    goto done;
  }
  /* atoms against relations; facts hold constants */
  for (int i = 0; i < L->nitems; i++) {
    tl_ast_item *it = L->items[i];
    if (it->kind == TL_ITEM_FACT) bad[i] = !check_atom(L, it->unit, it->atom, "given facts") || !valid_fact(L, it);
    if (it->kind != TL_ITEM_RULE) continue;
    bad[i] = !check_atom(L, it->unit, it->atom, "a rule's head");
    for (tl_node *l = it->body; l; l = l->next)
      if (l->kind == TL_N_LOGIC && !check_atom(L, it->unit, l, "body")) bad[i] = true;
  }
  /* the entity set: every fact's symbols (the target's entities keep their ids) */
  for (int64_t e = 0; L->target && e < L->target->nent; e++) {
    if (!grow(L, &L->ent_names, &L->capent, (size_t)L->nent + 1, sizeof *L->ent_names) ||
        !smap_put(&L->ents, L->target->ent_names[e], L->nent))
      goto oom;
    L->ent_names[L->nent++] = L->target->ent_names[e];
  }
  for (int i = 0; i < L->nitems; i++)
    if (L->items[i]->kind == TL_ITEM_FACT && !bad[i])
      for (tl_node *a = L->items[i]->atom->args; a; a = a->next)
        if (a->kind == TL_N_IDENT && smap_get(&L->ents, a->name) < 0 && !smap_put(&L->ents, a->name, ENT_PENDING)) goto oom;
  for (int i = 0; i < L->nitems; i++)
    if (L->items[i]->kind == TL_ITEM_RULE && !bad[i] &&
        (!add_quoted(L, L->items[i]->atom) || !add_quoted(L, L->items[i]->body)))
      goto oom;
  for (lf_use *u = L->uses; u; u = u->next)
    for (int i = 0; u->fact && i < u->nargs; i++)
      if (u->args[i].kind == LF_ARG_NAME && smap_get(&L->ents, u->args[i].node->name) < 0 &&
          !smap_put(&L->ents, u->args[i].node->name, ENT_PENDING))
        goto oom;
  /* everything but declarations, in text order */
  for (int i = 0; i < L->nitems; i++) {
    tl_ast_item *it = L->items[i];
    if (it->kind == TL_ITEM_RELATION || it->kind == TL_ITEM_IO || bad[i]) continue;
    all[n] = (occ){.item = it, .unit = it->unit, .seq = n};
    key_of(L, it->unit, it->line, it->col, &all[n].k0, &all[n].k1);
    n++;
  }
  for (lf_use *u = L->uses; u; u = u->next) {
    if (u->rel < 0) continue;
    all[n] = (occ){.use = u, .unit = u->unit, .seq = n};
    key_of(L, u->unit, u->at->line, u->at->col, &all[n].k0, &all[n].k1);
    n++;
  }
  qsort(all, (size_t)n, sizeof *all, occ_cmp);
  /* column types */
  for (int r = 0; r < L->nrels; r++) {
    L->rels[r].slot = L->nslots;
    for (int c = 0; c < L->rels[r].arity; c++) {
      int s = new_slot(L);
      if (s < 0) goto oom;
      if (L->rels[r].known[c] != T_NONE) give(L, s, L->rels[r].known[c]);
    }
  }
  for (int i = 0; i < n; i++) {
    if (all[i].use) continue;
    if (all[i].item->kind == TL_ITEM_FACT) type_fact(L, all[i].item);
    else type_rule(L, all[i].item);
    if (L->oom) goto oom;
  }
  for (int i = 0; i < n; i++)
    if (all[i].use) type_use(L, all[i].use);
  if (L->oom) goto oom;
  for (int r = 0; r < L->nrels; r++)
    for (int c = 0; c < L->rels[r].arity; c++) {
      int t = L->type[find(L, L->rels[r].slot + c)];
      L->rels[r].type[c] = t == T_ENT ? TL_KB_ENTITY : TL_KB_INT; /* undecided: integers */
    }
  /* entity ids, in text order */
  for (int i = 0; i < n; i++) {
    if (all[i].item && all[i].item->kind == TL_ITEM_FACT) intern_terms(L, all[i].item->atom->args);
    else if (all[i].item) intern_rule(L, all[i].item);
    else {
      lf_use *u = all[i].use;
      for (int k = 0; k < u->nargs; k++) {
        lf_arg *a = &u->args[k];
        if (a->kind != LF_ARG_NAME) continue;
        if (smap_get(&L->ents, a->node->name) < 0) {
          char hint[200];
          const char *nm = a->node->name;
          if (nm[0] == '-' || (nm[0] >= '0' && nm[0] <= '9')) /* a float's entity (parse_logic.c) */
            snprintf(hint, sizeof hint, "no fact mentions the value %s", nm);
          else
            snprintf(hint, sizeof hint, "no fact mentions `%s` (a fact statement ends with `.`); a query variable is written `$%s`",
                     nm, nm);
          ERR(L, u->unit, a->node, hint, "unknown entity `%s`", a->node->name);
          continue;
        }
        a->v = intern(L, a->node->name);
      }
    }
    if (L->oom) goto oom;
  }
  /* rules checked and lowered; facts as rows */
  L->rules = calloc((size_t)L->nitems + 1, sizeof *L->rules);
  if (!L->rules) goto oom;
  for (int i = 0; i < n; i++) {
    tl_ast_item *it = all[i].item;
    if (it && it->kind == TL_ITEM_RULE) {
      warn_rule(L, it);
      if (check_rule(L, it)) {
        warn_singletons(L, it);
        lower_rule(L, it);
      }
    }
    if (it && it->kind == TL_ITEM_FACT) add_fact_row(L, it);
    if (L->oom) goto oom;
  }
  /* the uses learn their columns' types */
  for (lf_use *u = L->uses; u; u = u->next) {
    if (u->rel < 0) continue;
    u->ent_cols = 0;
    for (int k = 0; k < u->nargs; k++) {
      lf_arg *a = &u->args[k];
      a->entity = L->rels[u->rel].type[k] == TL_KB_ENTITY;
      if (a->kind == LF_ARG_VAR && a->entity && a->col >= 0 && a->col < 32) u->ent_cols |= 1u << a->col;
    }
  }
  for (int i = 0; i < L->nitems; i++)
    if (L->items[i]->kind == TL_ITEM_IO) check_io(L, L->items[i]);
  /* stratified negation, src/logic's check: the target is touched only by a program
   * that passed */
  if (!L->errors && L->nrules) check_strata(L);
  goto done;
oom:
  L->oom = true;
done:
  if (L->oom) unit_diag(L, 0)->oom = true, err_at(L, 0, 1, 1, NULL, "out of memory checking the logic program");
  free(bad);
  free(all);
  return L->errors;
}

lf_program *tl_lf_export(lf *L) {
  lf_program *P = arena(L, sizeof *P);
  if (!P) return NULL;
  P->nio = L->nio;
  P->io = arena(L, sizeof *P->io * (size_t)(L->nio + 1));
  if (P->io && L->nio) memcpy(P->io, L->io, sizeof *P->io * (size_t)L->nio);
  P->nrels = L->nrels;
  P->rels = arena(L, sizeof *P->rels * (size_t)L->nrels);
  P->nent = L->nent;
  P->ents = arena(L, sizeof *P->ents * (size_t)L->nent);
  P->nrules = L->nrules;
  P->rules = arena(L, sizeof *P->rules * (size_t)L->nrules);
  if (L->oom) return NULL;
  if (L->nent) memcpy(P->ents, L->ent_names, sizeof *P->ents * (size_t)L->nent);
  if (L->nrules) memcpy(P->rules, L->rules, sizeof *P->rules * (size_t)L->nrules);
  for (int r = 0; r < L->nrels; r++) {
    P->rels[r] = L->rels[r];
    size_t bytes = sizeof(int64_t) * (size_t)(L->rels[r].nfacts * L->rels[r].arity);
    P->rels[r].facts = arena(L, bytes);
    if (!P->rels[r].facts) return NULL;
    if (bytes) memcpy(P->rels[r].facts, L->rels[r].facts, bytes);
  }
  return P;
}
