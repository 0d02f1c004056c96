/* program.c — the logic program as it is built: entity names in (interned to ids),
 * relation declarations, facts and rules in (checked: known relations, arities,
 * column types, bound variables; rules become the IR of logic.h), messages out. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "logic/logic.h"

static uint64_t name_hash(const char *s, size_t len) { return tl_hash_bytes(TL_HASH_INIT, s, len); }

/* ---- entities ---------------------------------------------------------------------- */

int64_t tl_logic_entity(tl_kb *kb, const char *name, size_t len) {
  uint64_t h = name_hash(name, len), it;
  for (tl_hset_walk w = tl_hset_find(&kb->ent_set, h); (it = tl_hset_next(&kb->ent_set, &w));) {
    const char *e = kb->ent_names[it - 1];
    if (strlen(e) == len && memcmp(e, name, len) == 0) return (int64_t)it - 1;
  }
  if (!tl_vec_grow(&kb->ent_names, &kb->cap_ent, (size_t)kb->nent + 1, sizeof *kb->ent_names)) return -1;
  char *copy = malloc(len + 1);
  if (!copy) return -1;
  memcpy(copy, name, len);
  copy[len] = 0;
  if (!tl_hset_add(&kb->ent_set, h, (uint64_t)kb->nent + 1)) {
    free(copy);
    return -1;
  }
  kb->ent_names[kb->nent] = copy;
  return kb->nent++;
}

void tl_logic_value_text(const tl_kb *kb, tl_kb_type type, int64_t v, char *buf, size_t cap) {
  if (type == TL_KB_ENTITY && v >= 0 && v < kb->nent) snprintf(buf, cap, "%s", kb->ent_names[v]);
  else if (type == TL_KB_ENTITY) snprintf(buf, cap, "#%lld", (long long)v);
  else snprintf(buf, cap, "%lld", (long long)v);
}

/* ---- relations and facts -------------------------------------------------------------- */

int tl_logic_find_rel(const tl_kb *kb, const char *name) {
  uint64_t it;
  for (tl_hset_walk w = tl_hset_find(&kb->rel_set, name_hash(name, strlen(name))); (it = tl_hset_next(&kb->rel_set, &w));)
    if (strcmp(kb->rels[it - 1].name, name) == 0) return (int)it - 1;
  return -1;
}

static void signature(const tl_kb_type *types, int arity, const char *name, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "%s(", name);
  for (int c = 0; c < arity && n < cap; c++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%s", c ? ", " : "", types[c] == TL_KB_ENTITY ? "entity" : "int");
  if (n < cap) snprintf(buf + n, cap - n, ")");
}

tl_status tl_logic_declare(tl_kb *kb, const char *name, int arity, const tl_kb_type *types) {
  int old = tl_logic_find_rel(kb, name);
  if (old >= 0) {
    tl_logic_rel *r = &kb->rels[old];
    if (r->arity == arity && (arity == 0 || memcmp(r->type, types, (size_t)arity * sizeof *types) == 0))
      return TL_OK;
    char sig[512];
    signature(r->type, r->arity, r->name, sig, sizeof sig);
    return tl_logic_fail(kb, TL_ERR_ARG, "kb_relation: %s is already declared as %s", name, sig);
  }
  if (!tl_vec_grow(&kb->rels, &kb->cap_rels, (size_t)kb->nrels + 1, sizeof *kb->rels))
    return tl_logic_fail(kb, TL_ERR_NOMEM, "kb_relation: out of memory");
  tl_logic_rel *r = &kb->rels[kb->nrels];
  memset(r, 0, sizeof *r);
  r->name = strdup(name);
  r->arity = arity;
  for (int c = 0; c < arity; c++) r->type[c] = types[c];
  if (!r->name || !tl_logic_sparse_init(&r->facts, arity, TL_LOGIC_MAX_TUPLES) ||
      !tl_hset_add(&kb->rel_set, name_hash(name, strlen(name)), (uint64_t)kb->nrels + 1)) {
    free(r->name);
    tl_logic_sparse_free(&r->facts);
    return tl_logic_fail(kb, TL_ERR_NOMEM, "kb_relation: out of memory");
  }
  kb->nrels++;
  /* a new relation is a new stratum: the strata are made again */
  tl_logic_reset_eval(kb);
  return tl_logic_stratify(kb, "kb_relation");
}

static void note_int(tl_kb *kb, int64_t v) {
  if (!kb->have_ints) kb->int_lo = kb->int_hi = v;
  if (v < kb->int_lo) kb->int_lo = v;
  if (v > kb->int_hi) kb->int_hi = v;
  kb->have_ints = true;
}

tl_status tl_logic_add_facts(tl_kb *kb, int rel, int64_t nrows, const int64_t *values, const char *what) {
  tl_logic_rel *r = &kb->rels[rel];
  int arity = r->arity;
  int64_t none = 0;
  if (!values) values = &none; /* arity 0: nothing is read, but memcpy wants a pointer */
  for (int64_t i = 0; i < nrows; i++)
    for (int c = 0; c < arity; c++) {
      int64_t v = values[i * arity + c];
      if (r->type[c] == TL_KB_ENTITY && (v < 0 || v >= kb->nent)) {
        char row[32] = "";
        if (nrows > 1) snprintf(row, sizeof row, " (row %lld)", (long long)i);
        return tl_logic_fail(kb, TL_ERR_RANGE,
                             "%s %s%s: argument %d is an entity and %lld is not an entity id (there are %lld)", what,
                             r->name, row, c + 1, (long long)v, (long long)kb->nent);
      }
    }
  for (int64_t i = 0; i < nrows; i++) {
    const int64_t *t = values + i * arity;
    int st = tl_logic_sparse_insert(&r->facts, arity, t);
    if (st < 0) return tl_logic_fail(kb, TL_ERR_NOMEM, "%s %s: out of memory", what, r->name);
    if (st == 0) continue;
    for (int c = 0; c < arity; c++)
      if (r->type[c] == TL_KB_INT) note_int(kb, t[c]);
    kb->version++;
  }
  return TL_OK;
}

/* ---- rules: structure ---------------------------------------------------------------------- */

static const char *const arith_names[] = {"add", "sub", "mul", "div", "mod"};
static const char *const op_text[] = {"+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!="};
static bool is_arith(int op) { return op >= TL_KB_ADD && op <= TL_KB_MOD; }
static bool is_cmp(int op) { return op >= TL_KB_LT && op <= TL_KB_NE; }

static void where(char *buf, size_t cap, int lit, int arg) {
  if (lit < 0) snprintf(buf, cap, "the head");
  else snprintf(buf, cap, "body literal %d", lit + 1);
  if (arg >= 0) snprintf(buf + strlen(buf), cap - strlen(buf), ", argument %d", arg + 1);
}

/* A term tree is well formed: kinds, names, operators, and at most TL_LOGIC_MAX_EXPR
 * nodes (so a cycle of pointers is caught). */
static tl_status check_term(tl_kb *kb, const tl_kb_term *t, int lit, int arg, int *nodes) {
  char at[64];
  where(at, sizeof at, lit, arg);
  if (++*nodes > TL_LOGIC_MAX_EXPR)
    return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: an expression of more than %d terms", at, TL_LOGIC_MAX_EXPR);
  switch (t->kind) {
  case TL_KB_VAR:
    if (!t->name || !t->name[0])
      return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: a variable without a name", at);
    return TL_OK;
  case TL_KB_NUM:
  case TL_KB_ENT:
  case TL_KB_ANY:
    return TL_OK;
  case TL_KB_EXPR:
    if (!is_arith((int)t->op))
      return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: an expression's operator must be TL_KB_ADD .. TL_KB_MOD, not %d",
                           at, (int)t->op);
    if (!t->lhs || !t->rhs)
      return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: an expression's operand is NULL", at);
    if (check_term(kb, t->lhs, lit, arg, nodes)) return TL_ERR_ARG;
    return check_term(kb, t->rhs, lit, arg, nodes);
  }
  return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: a term of kind %d, not TL_KB_VAR .. TL_KB_EXPR", at, (int)t->kind);
}

static tl_status check_literal(tl_kb *kb, const tl_kb_literal *l, int lit) {
  char at[64];
  where(at, sizeof at, lit, -1);
  switch (l->kind) {
  case TL_KB_ATOM:
  case TL_KB_NOT:
    if (!l->rel) return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: the relation name is NULL", at);
    if (l->nargs < 0 || l->nargs > TL_LOGIC_MAX_ARITY)
      return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: %d arguments (0 to %d)", at, l->nargs, TL_LOGIC_MAX_ARITY);
    break;
  case TL_KB_CMP:
    if (!is_cmp((int)l->op))
      return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: a comparison's operator must be TL_KB_LT .. TL_KB_NE, not %d", at,
                           (int)l->op);
    if (l->nargs != 2)
      return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: a comparison has 2 arguments, not %d", at, l->nargs);
    break;
  case TL_KB_ARITH:
    if (!is_arith((int)l->op))
      return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: an arithmetic relation's operator must be TL_KB_ADD .. TL_KB_MOD, not %d",
                           at, (int)l->op);
    if (l->nargs != 3)
      return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: an arithmetic relation has 3 arguments (a op b = c), not %d", at,
                           l->nargs);
    break;
  case TL_KB_AGG:
    if (l->op < TL_KB_COUNT || l->op > TL_KB_MAX)
      return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: an aggregate's operator must be TL_KB_COUNT .. TL_KB_MAX, not %d",
                           at, (int)l->op);
    if (!l->rel) return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: the relation name is NULL", at);
    if (l->nargs < 2 || l->nargs > TL_LOGIC_MAX_ARITY + 2 || !l->args || l->args[l->nargs - 1].kind != TL_KB_NUM)
      return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: an aggregate's arguments are the group, the result and the value column (TL_KB_NUM)", at);
    break;
  default:
    return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: a literal of kind %d, not TL_KB_ATOM .. TL_KB_AGG", at, (int)l->kind);
  }
  if (l->nargs > 0 && !l->args) return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %s: args is NULL", at);
  for (int a = 0; a < l->nargs; a++) {
    int nodes = 0;
    if (check_term(kb, &l->args[a], lit, a, &nodes)) return TL_ERR_ARG;
  }
  return TL_OK;
}

/* ---- rules: text ----------------------------------------------------------------------------- */

static void term_text(const tl_kb *kb, tl_strbuf *sb, const tl_kb_term *t, bool nested) {
  char v[64];
  switch (t->kind) {
  case TL_KB_VAR: tl_strbuf_puts(sb, t->name); break;
  case TL_KB_NUM: tl_strbuf_printf(sb, "%lld", (long long)t->value); break;
  case TL_KB_ENT:
    tl_logic_value_text(kb, TL_KB_ENTITY, t->value, v, sizeof v);
    tl_strbuf_puts(sb, v);
    break;
  case TL_KB_ANY: tl_strbuf_puts(sb, "_"); break;
  case TL_KB_EXPR:
    if (nested) tl_strbuf_puts(sb, "(");
    term_text(kb, sb, t->lhs, true);
    tl_strbuf_printf(sb, " %s ", op_text[t->op]);
    term_text(kb, sb, t->rhs, true);
    if (nested) tl_strbuf_puts(sb, ")");
    break;
  }
}

static void literal_text(const tl_kb *kb, tl_strbuf *sb, const tl_kb_literal *l) {
  if (l->kind == TL_KB_CMP) {
    term_text(kb, sb, &l->args[0], false);
    tl_strbuf_printf(sb, " %s ", op_text[l->op]);
    term_text(kb, sb, &l->args[1], false);
    return;
  }
  if (l->kind == TL_KB_AGG) {
    static const char *const agg[] = {"count", "sum", "min", "max"};
    term_text(kb, sb, &l->args[l->nargs - 2], false);
    tl_strbuf_printf(sb, " = %s", agg[l->op - TL_KB_COUNT]);
    if (l->op != TL_KB_COUNT) tl_strbuf_printf(sb, " #%lld", (long long)l->args[l->nargs - 1].value);
    tl_strbuf_printf(sb, " : %s(", l->rel);
    for (int a = 0; a < l->nargs - 2; a++) {
      if (a) tl_strbuf_puts(sb, ", ");
      term_text(kb, sb, &l->args[a], false);
    }
    tl_strbuf_puts(sb, ")");
    return;
  }
  if (l->kind == TL_KB_NOT) tl_strbuf_puts(sb, "not ");
  tl_strbuf_puts(sb, l->kind == TL_KB_ARITH ? arith_names[l->op] : l->rel);
  tl_strbuf_puts(sb, "(");
  for (int a = 0; a < l->nargs; a++) {
    if (a) tl_strbuf_puts(sb, ", ");
    term_text(kb, sb, &l->args[a], false);
  }
  tl_strbuf_puts(sb, ")");
}

static char *rule_text(const tl_kb *kb, const tl_kb_literal *head, int nbody, const tl_kb_literal *body) {
  tl_strbuf sb = {0};
  literal_text(kb, &sb, head);
  for (int i = 0; i < nbody; i++) {
    tl_strbuf_puts(&sb, i ? ", " : " :- ");
    literal_text(kb, &sb, &body[i]);
  }
  return tl_strbuf_take(&sb);
}

/* ---- rules: the IR and its checks ----------------------------------------------------------------- */

typedef struct {
  tl_kb *kb;
  tl_logic_rule *r;
  const char *text;
  int8_t *vtype; /* per variable: -1 unknown, else tl_kb_type */
  int *vfirst;   /* the literal where a variable first appears (-1: the head) */
  /* the room in r->vars, vtype, vfirst, r->terms, r->argv, r->body */
  size_t cap_vars, cap_vtype, cap_vfirst, cap_terms, cap_argv, cap_body;
  bool oom;
} rule_build;

static int add_var(rule_build *b, const char *name, int lit) {
  tl_logic_rule *r = b->r;
  for (int v = 0; v < r->nvars; v++)
    if (r->vars[v][0] && strcmp(r->vars[v], name) == 0) return v;
  size_t n = (size_t)r->nvars + 1;
  bool room = tl_vec_grow(&r->vars, &b->cap_vars, n, sizeof *r->vars) &&
              tl_vec_grow(&b->vtype, &b->cap_vtype, n, sizeof *b->vtype) &&
              tl_vec_grow(&b->vfirst, &b->cap_vfirst, n, sizeof *b->vfirst);
  char *copy = room ? strdup(name) : NULL;
  if (!copy) {
    b->oom = true;
    return 0;
  }
  r->vars[r->nvars] = copy;
  b->vtype[r->nvars] = -1;
  b->vfirst[r->nvars] = lit;
  return r->nvars++;
}

static int add_term(rule_build *b, tl_logic_term t) {
  tl_logic_rule *r = b->r;
  if (!tl_vec_grow(&r->terms, &b->cap_terms, (size_t)r->nterms + 1, sizeof *r->terms)) {
    b->oom = true;
    return 0;
  }
  r->terms[r->nterms] = t;
  return r->nterms++;
}

static int convert_term(rule_build *b, const tl_kb_term *t, int lit) {
  tl_logic_term x = {0};
  switch (t->kind) {
  case TL_KB_VAR: x.kind = TL_TERM_VAR, x.v = add_var(b, t->name, lit); break;
  case TL_KB_NUM: x.kind = TL_TERM_CONST, x.type = TL_KB_INT, x.v = t->value; break;
  case TL_KB_ENT: x.kind = TL_TERM_CONST, x.type = TL_KB_ENTITY, x.v = t->value; break;
  case TL_KB_ANY: x.kind = TL_TERM_ANY; break;
  case TL_KB_EXPR:
    x.kind = TL_TERM_EXPR, x.op = (uint8_t)t->op;
    x.a = convert_term(b, t->lhs, lit);
    x.b = convert_term(b, t->rhs, lit);
    break;
  }
  return add_term(b, x);
}

static bool push_arg(rule_build *b, int term) {
  tl_logic_rule *r = b->r;
  if (!tl_vec_grow(&r->argv, &b->cap_argv, (size_t)r->nargv + 1, sizeof *r->argv)) return b->oom = true, false;
  r->argv[r->nargv++] = term;
  return true;
}

static tl_logic_lit convert_literal(rule_build *b, const tl_kb_literal *l, int lit, int rel) {
  tl_logic_lit x = {0};
  x.kind = l->kind == TL_KB_ATOM ? TL_LIT_ATOM : l->kind == TL_KB_NOT ? TL_LIT_NOT
         : l->kind == TL_KB_CMP  ? TL_LIT_CMP  : l->kind == TL_KB_AGG ? TL_LIT_AGG : TL_LIT_ARITH;
  x.op = (uint8_t)l->op;
  x.rel = rel;
  x.nargs = l->nargs;
  int terms[TL_LOGIC_MAX_ARITY + 2];
  for (int a = 0; a < l->nargs; a++) terms[a] = convert_term(b, &l->args[a], lit);
  x.args = b->r->nargv;
  for (int a = 0; a < l->nargs; a++) push_arg(b, terms[a]);
  return x;
}

static tl_status rule_fail(rule_build *b, int lit, const char *fmt, ...) TL_PRINTF(3, 4);
static tl_status rule_fail(rule_build *b, int lit, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  b->kb->err_lit = lit;
  return tl_logic_fail(b->kb, TL_ERR_ARG, "kb_rule %s: %s", b->text, msg);
}

static const char *type_name(int t) { return t == TL_KB_ENTITY ? "an entity" : "an integer"; }

static void term_string(const tl_kb *kb, const tl_logic_rule *r, int t, char *buf, size_t cap, bool nested) {
  const tl_logic_term *x = &r->terms[t];
  if (x->kind == TL_TERM_VAR) snprintf(buf, cap, "%s", r->vars[x->v]);
  else if (x->kind == TL_TERM_CONST) tl_logic_value_text(kb, (tl_kb_type)x->type, x->v, buf, cap);
  else if (x->kind == TL_TERM_ANY) snprintf(buf, cap, "_");
  else {
    char a[160], c[160];
    term_string(kb, r, x->a, a, sizeof a, true);
    term_string(kb, r, x->b, c, sizeof c, true);
    snprintf(buf, cap, nested ? "(%s %s %s)" : "%s %s %s", a, op_text[x->op], c);
  }
}

/* The type a variable takes from an atom's column (the first use decides). */
static tl_status type_var(rule_build *b, int v, int type, int lit) {
  if (b->vtype[v] < 0) b->vtype[v] = (int8_t)type;
  else if (b->vtype[v] != type)
    return rule_fail(b, lit, "variable %s is used both as an entity and as an integer", b->r->vars[v]);
  return TL_OK;
}

/* An expression's operands are integers: variables and constants. */
static tl_status check_expr(rule_build *b, int t, int lit, const char *what) {
  tl_logic_rule *r = b->r;
  const tl_logic_term *x = &r->terms[t];
  char s[160];
  if (x->kind == TL_TERM_ANY) return rule_fail(b, lit, "a wildcard in %s", what);
  if (x->kind == TL_TERM_EXPR) {
    if (check_expr(b, x->a, lit, what)) return TL_ERR_ARG;
    return check_expr(b, x->b, lit, what);
  }
  if (x->kind == TL_TERM_CONST && x->type == TL_KB_ENTITY) {
    term_string(b->kb, r, t, s, sizeof s, false);
    return rule_fail(b, lit, "arithmetic on the entity %s", s);
  }
  if (x->kind == TL_TERM_VAR) {
    if (b->vtype[x->v] == TL_KB_ENTITY) return rule_fail(b, lit, "arithmetic on the entity variable %s", r->vars[x->v]);
    b->vtype[x->v] = TL_KB_INT;
  }
  return TL_OK;
}

static tl_status check_atom_types(rule_build *b, const tl_logic_lit *l, int lit) {
  tl_logic_rule *r = b->r;
  const tl_logic_rel *rel = &b->kb->rels[l->rel];
  for (int a = 0; a < l->nargs; a++) {
    int t = r->argv[l->args + a], ct = rel->type[a];
    const tl_logic_term *x = &r->terms[t];
    char s[160];
    term_string(b->kb, r, t, s, sizeof s, false);
    if (x->kind == TL_TERM_VAR) {
      if (type_var(b, (int)x->v, ct, lit)) return TL_ERR_ARG;
    } else if (x->kind == TL_TERM_ANY) {
      if (lit < 0) return rule_fail(b, lit, "a wildcard in the head");
    } else if (x->kind == TL_TERM_CONST && x->type != ct) {
      return rule_fail(b, lit, "argument %d of %s is %s, not %s %s", a + 1, rel->name, type_name(ct),
                       x->type == TL_KB_ENTITY ? "the entity" : "the integer", s);
    } else if (x->kind == TL_TERM_EXPR && ct == TL_KB_ENTITY) {
      return rule_fail(b, lit, "argument %d of %s is an entity, not the expression %s", a + 1, rel->name, s);
    }
  }
  return TL_OK;
}

static int term_type(const rule_build *b, int t) {
  const tl_logic_term *x = &b->r->terms[t];
  if (x->kind == TL_TERM_VAR) return b->vtype[x->v];
  if (x->kind == TL_TERM_CONST) return x->type;
  return TL_KB_INT;
}

static bool term_vars_bound(const tl_logic_rule *r, int t, const bool *bound) {
  const tl_logic_term *x = &r->terms[t];
  if (x->kind == TL_TERM_VAR) return bound[x->v];
  if (x->kind == TL_TERM_EXPR) return term_vars_bound(r, x->a, bound) && term_vars_bound(r, x->b, bound);
  return true;
}

/* The first variable (in order of appearance) no positive atom or arithmetic result
 * binds, or -1. */
static int unbound_var(const tl_logic_rule *r, bool *bound) {
  for (int i = 0; i < r->nbody; i++) {
    const tl_logic_lit *l = &r->body[i];
    if (l->kind != TL_LIT_ATOM) continue;
    for (int a = 0; a < l->nargs; a++) {
      const tl_logic_term *x = &r->terms[r->argv[l->args + a]];
      if (x->kind == TL_TERM_VAR) bound[x->v] = true;
    }
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (int i = 0; i < r->nbody; i++) {
      const tl_logic_lit *l = &r->body[i];
      if (l->kind != TL_LIT_ARITH && l->kind != TL_LIT_AGG) continue;
      int nin = l->kind == TL_LIT_ARITH ? 2 : l->nargs - 2; /* the operands; the group */
      const tl_logic_term *res = &r->terms[r->argv[l->args + nin]];
      bool in = true;
      for (int a = 0; a < nin && in; a++) in = term_vars_bound(r, r->argv[l->args + a], bound);
      if (res->kind == TL_TERM_VAR && !bound[res->v] && in) bound[res->v] = grew = true;
    }
  }
  /* a variable some arithmetic would bind is unbound because of another: name that one */
  int first = -1;
  for (int v = 0; v < r->nvars; v++) {
    if (bound[v]) continue;
    if (first < 0) first = v;
    bool result = false;
    for (int i = 0; i < r->nbody && !result; i++) {
      if (r->body[i].kind != TL_LIT_ARITH && r->body[i].kind != TL_LIT_AGG) continue;
      int at = r->body[i].kind == TL_LIT_ARITH ? 2 : r->body[i].nargs - 2;
      const tl_logic_term *res = &r->terms[r->argv[r->body[i].args + at]];
      result = res->kind == TL_TERM_VAR && res->v == v;
    }
    if (!result) return v;
  }
  return first;
}

/* p(x + 1) in the body becomes p(t), t == x + 1 with a hidden variable t: then only
 * variables and constants are matched against tuples. */
static void desugar(rule_build *b) {
  tl_logic_rule *r = b->r;
  int nbody = r->nbody;
  for (int i = 0; i < nbody; i++) {
    if (r->body[i].kind != TL_LIT_ATOM) continue;
    for (int a = 0; a < r->body[i].nargs; a++) {
      int t = r->argv[r->body[i].args + a];
      if (r->terms[t].kind != TL_TERM_EXPR) continue;
      int v = add_var(b, "", 0);
      if (b->oom) return;
      /* add_var matches names; a hidden variable is always new */
      int hv = add_term(b, (tl_logic_term){.kind = TL_TERM_VAR, .v = v});
      r->argv[r->body[i].args + a] = hv;
      if (!tl_vec_grow(&r->body, &b->cap_body, (size_t)r->nbody + 1, sizeof *r->body)) {
        b->oom = true;
        return;
      }
      tl_logic_lit eq = {TL_LIT_CMP, TL_KB_EQ, -1, 2, r->nargv};
      push_arg(b, hv);
      push_arg(b, t);
      r->body[r->nbody++] = eq;
    }
  }
}

void tl_logic_rule_free(tl_logic_rule *r) {
  for (int v = 0; v < r->nvars; v++) free(r->vars[v]);
  free(r->vars);
  free(r->body);
  free(r->terms);
  free(r->argv);
  free(r->text);
  memset(r, 0, sizeof *r);
}

static tl_status build_rule(rule_build *b, const tl_kb_literal *head, int nbody, const tl_kb_literal *body) {
  tl_kb *kb = b->kb;
  tl_logic_rule *r = b->r;
  /* relations and arities */
  int rels[1 + 4096] = {0};
  for (int i = -1; i < nbody; i++) {
    const tl_kb_literal *l = i < 0 ? head : &body[i];
    if (l->kind != TL_KB_ATOM && l->kind != TL_KB_NOT && l->kind != TL_KB_AGG) continue;
    int rel = tl_logic_find_rel(kb, l->rel);
    if (rel < 0) return rule_fail(b, i, "unknown relation %s", l->rel);
    rels[i + 1] = rel;
    if (l->kind == TL_KB_AGG) {
      int64_t col = l->args[l->nargs - 1].value;
      if (l->nargs - 2 > kb->rels[rel].arity)
        return rule_fail(b, i, "an aggregate over %s groups on %d columns, more than its %d", l->rel, l->nargs - 2,
                         kb->rels[rel].arity);
      if (l->op != TL_KB_COUNT && (col < 0 || col >= kb->rels[rel].arity || kb->rels[rel].type[col] != TL_KB_INT))
        return rule_fail(b, i, "an aggregate's value column must be an integer column of %s, not %lld", l->rel, (long long)col);
      continue;
    }
    if (kb->rels[rel].arity != l->nargs)
      return rule_fail(b, i, "%s has arity %d but is given %d argument%s", l->rel, kb->rels[rel].arity, l->nargs,
                       l->nargs == 1 ? "" : "s");
  }
  r->head = convert_literal(b, head, -1, rels[0]);
  if (!tl_vec_grow(&r->body, &b->cap_body, (size_t)nbody + 1, sizeof *r->body))
    return tl_logic_fail(kb, TL_ERR_NOMEM, "kb_rule: out of memory");
  for (int i = 0; i < nbody; i++) {
    bool atom = body[i].kind == TL_KB_ATOM || body[i].kind == TL_KB_NOT || body[i].kind == TL_KB_AGG;
    r->body[i] = convert_literal(b, &body[i], i, atom ? rels[i + 1] : -1);
    r->nbody++;
  }
  if (b->oom) return tl_logic_fail(kb, TL_ERR_NOMEM, "kb_rule: out of memory");
  /* entity ids */
  for (int t = 0; t < r->nterms; t++)
    if (r->terms[t].kind == TL_TERM_CONST && r->terms[t].type == TL_KB_ENTITY &&
        (r->terms[t].v < 0 || r->terms[t].v >= kb->nent))
      return rule_fail(b, -2, "#%lld is not an entity id (there are %lld)", (long long)r->terms[t].v,
                       (long long)kb->nent);
  /* types: columns first (atoms decide), then arithmetic and comparisons */
  for (int i = -1; i < r->nbody; i++) {
    const tl_logic_lit *l = i < 0 ? &r->head : &r->body[i];
    if ((l->kind == TL_LIT_ATOM || l->kind == TL_LIT_NOT) && check_atom_types(b, l, i)) return TL_ERR_ARG;
    if (l->kind == TL_LIT_AGG) { /* the group as the relation's first columns; the result an integer */
      tl_logic_lit g = *l;
      g.nargs -= 2;
      if (check_atom_types(b, &g, i) || check_expr(b, r->argv[l->args + l->nargs - 2], i, "an aggregate's result"))
        return TL_ERR_ARG;
    }
  }
  for (int i = -1; i < r->nbody; i++) {
    const tl_logic_lit *l = i < 0 ? &r->head : &r->body[i];
    for (int a = 0; a < l->nargs; a++) {
      int t = r->argv[l->args + a];
      if (l->kind == TL_LIT_AGG) {
        if (a < l->nargs - 2 && r->terms[t].kind == TL_TERM_EXPR) return rule_fail(b, i, "an expression in an aggregate's group");
      } else if (l->kind == TL_LIT_ARITH) {
        if (check_expr(b, t, i, "arithmetic")) return TL_ERR_ARG;
      } else if (r->terms[t].kind == TL_TERM_EXPR && check_expr(b, t, i, "arithmetic")) {
        return TL_ERR_ARG;
      } else if (l->kind == TL_LIT_CMP && r->terms[t].kind == TL_TERM_ANY) {
        return rule_fail(b, i, "a wildcard in a comparison");
      }
    }
    if (l->kind == TL_LIT_CMP) {
      int ta = term_type(b, r->argv[l->args]), tb = term_type(b, r->argv[l->args + 1]);
      if (ta >= 0 && tb >= 0 && ta != tb) {
        char s[320];
        tl_strbuf sb = {0};
        literal_text(kb, &sb, &body[i]);
        snprintf(s, sizeof s, "%s", sb.data ? sb.data : "");
        tl_strbuf_free(&sb);
        return rule_fail(b, i, "%s compares %s with %s", s, type_name(ta), type_name(tb));
      }
    }
  }
  /* every variable bound */
  bool *bound = calloc((size_t)(r->nvars ? r->nvars : 1), sizeof *bound);
  if (!bound) return tl_logic_fail(kb, TL_ERR_NOMEM, "kb_rule: out of memory");
  int v = unbound_var(r, bound);
  free(bound);
  if (v >= 0) return rule_fail(b, b->vfirst[v], "unbound variable %s (bind it in a positive atom or as an arithmetic result)",
                               r->vars[v]);
  desugar(b);
  if (b->oom) return tl_logic_fail(kb, TL_ERR_NOMEM, "kb_rule: out of memory");
  return TL_OK;
}

tl_status tl_logic_add_rule(tl_kb *kb, const tl_kb_literal *head, int nbody, const tl_kb_literal *body) {
  kb->err_lit = -2;
  if (nbody > 4096) return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: %d body literals (at most 4096)", nbody);
  if (check_literal(kb, head, -1)) return TL_ERR_ARG;
  if (head->kind != TL_KB_ATOM) return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: the head must be an atom (TL_KB_ATOM)");
  for (int i = 0; i < nbody; i++)
    if (check_literal(kb, &body[i], i)) return TL_ERR_ARG;
  if (!tl_vec_grow(&kb->rules, &kb->cap_rules, (size_t)kb->nrules + 1, sizeof *kb->rules))
    return tl_logic_fail(kb, TL_ERR_NOMEM, "kb_rule: out of memory");
  tl_logic_rule *r = &kb->rules[kb->nrules];
  memset(r, 0, sizeof *r);
  r->text = rule_text(kb, head, nbody, body);
  if (!r->text) return tl_logic_fail(kb, TL_ERR_NOMEM, "kb_rule: out of memory");
  rule_build b = {.kb = kb, .r = r, .text = r->text};
  tl_status st = build_rule(&b, head, nbody, body);
  free(b.vtype);
  free(b.vfirst);
  if (st != TL_OK) {
    tl_logic_rule_free(r);
    return st;
  }
  kb->nrules++;
  char what[600];
  snprintf(what, sizeof what, "kb_rule %.500s", r->text);
  st = tl_logic_stratify(kb, what);
  if (st != TL_OK) {
    kb->nrules--;
    tl_logic_rule_free(r);
    return st;
  }
  kb->rels[r->head.rel].has_rules = true;
  for (int t = 0; t < r->nterms; t++)
    if (r->terms[t].kind == TL_TERM_CONST && r->terms[t].type == TL_KB_INT) note_int(kb, r->terms[t].v);
  tl_logic_reset_eval(kb);
  return TL_OK;
}

void tl_logic_reset_eval(tl_kb *kb) {
  for (int i = 0; i < kb->nrels; i++) {
    tl_logic_rel *r = &kb->rels[i];
    tl_logic_store_free(r);
    r->facts_loaded = 0;
    free(r->pass_new.tup);
    memset(&r->pass_new, 0, sizeof r->pass_new);
    r->pass_reset = false;
  }
  for (int s = 0; s < kb->nstrata; s++) kb->strata[s].evaluated = false;
  kb->version++;
}
