/* sema_logic.c — the checker's Datalog (LANGUAGE.md §8): the program's logic items go
 * to the logic front end (logic_front.c); in function bodies, queries `?p(..)`,
 * relation calls `p(..)`, fact statements and entity_name(id) are checked here and
 * handed to it as "uses", whose arguments are classified with the scope at hand: `$x`
 * an output column, `_` any value, an integer a constant, a name in scope (or any
 * other expression) an i64 value computed when it runs, another name or a name in
 * quotes (`"alice"`) an entity.
 *
 * A query's type: ground, a 0-d f32 tensor (1.0 / 0.0; a relation call: [1]); with
 * `$` variables, an i64 [n, k] tensor whose entity columns are marked in
 * tl_ty.ent_cols once the column types are known (after every body), so printing
 * shows their names. The mark follows the type wherever the checker passes the same
 * type on (a `let`, the variable's reads). */
#include <stdlib.h>
#include <string.h>

#include "logic/logic_front.h"
#include "lang/front/module.h"
#include "lang/check/sema_impl.h"
#include "lang/front/parse_logic.h"

typedef struct {
  lf_use u;
  tl_ty *ty; /* the query's type: kept from pass to pass of a function */
} use_info;

typedef struct sema_logic {
  lf *L;
  bool used; /* any logic at all: the program needs a knowledge base */
  tl_diag *diags[TL_MAX_MODULES + 1];
  tl_ast_item *mod_at[TL_MAX_MODULES + 1];
  use_info **uses;
  int nuses, capuses;
  int scan_unit; /* the unit of the function scanned for fact statements */
} sema_logic;

/* a fact statement names a relation (one named like a function is an error, later) */
static bool is_fact_stmt(tl_node *n, void *arg) {
  sema *s = arg;
  if (n->kind == TL_N_LOGIC && n->ival == TL_LOGIC_FACT && !tl_sema_find_fn(s, n->name))
    tl_lf_add_fact_stmt(s->logic->L, n, s->logic->scan_unit);
  return false;
}

void tl_sema_logic_begin(sema *s, tl_program *prog) {
  sema_logic *sl = tl_arena_alloc(s->arena, sizeof *sl);
  if (!sl) {
    tl_diag_oom(s->diag, 1, 1, "out of memory checking the program");
    return;
  }
  sl->diags[0] = s->diag;
  int nunits = prog->nunits > 0 ? prog->nunits : 1;
  for (int u = 1; u < nunits; u++) {
    sl->diags[u] = prog->units[u].diag ? prog->units[u].diag : s->diag;
    sl->mod_at[u] = prog->units[u].mod;
  }
  sl->L = tl_lf_new(s->arena, sl->diags, sl->mod_at, nunits, NULL);
  if (!sl->L) {
    tl_diag_oom(s->diag, 1, 1, "out of memory checking the program");
    return;
  }
  s->logic = sl;
  tl_lf_add_items(sl->L, prog->items);
  for (tl_ast_item *it = prog->items; it; it = it->next) {
    if (it->kind == TL_ITEM_FACT || it->kind == TL_ITEM_RULE || it->kind == TL_ITEM_RELATION || it->kind == TL_ITEM_IO)
      sl->used = true;
    sl->scan_unit = it->unit;
    if (it->kind == TL_ITEM_FN) tl_ast_find(it->fn->body, is_fact_stmt, s);
    if (it->kind == TL_ITEM_IMPL)
      for (tl_fn *m = it->methods; m; m = m->next)
        if (m->body) tl_ast_find(m->body, is_fact_stmt, s);
  }
  tl_lf_define(sl->L);
}

bool tl_sema_logic_claims(sema *s, tl_node *n) {
  if (!s->logic || n->lhs->kind != TL_N_IDENT) return false;
  const char *name = n->lhs->name;
  if (tl_sema_lookup(s, name) || tl_sema_find_fn(s, name)) return false;
  /* tl_kb_entity_name: the seed language's spelling of entity_name */
  bool entity_name = !strcmp(name, "entity_name") || !strcmp(name, "tl_kb_entity_name");
  if (!entity_name && tl_lf_find_rel(s->logic->L, name) < 0) return false;
  n->kind = TL_N_LOGIC;
  n->ival = entity_name ? TL_LOGIC_ENTITY_NAME : TL_LOGIC_CALL;
  n->name = name;
  n->line = n->lhs->line; /* errors point at the name, not at `(` */
  n->col = n->lhs->col;
  return true;
}

static bool has_lvar(tl_node *n, void *unused) {
  (void)unused;
  return n->kind == TL_N_LVAR;
}

/* an argument computed by the function: an i64 */
static void value_arg(sema *s, tl_node *a, const char *what) {
  if (tl_ast_find(a, has_lvar, NULL)) {
    tl_sema_error(s, a, "a query variable `$x` stands alone as an argument, not inside an expression");
    return;
  }
  tl_ty *t = tl_sema_expr(s, a, TY_I64_T);
  if (t->kind != TY_I64 && t->kind != TY_ERROR) {
    tl_sema_mismatch(s, a, what, TY_I64_T, t);
    tl_diag_hint(s->diag, "a logic argument from the program is an i64: an integer, or an entity's id");
  }
}

static tl_ty *check_entity_name(sema *s, tl_node *n) {
  s->logic->used = true;
  int k = tl_ast_count(n->args);
  if (k != 1) {
    tl_sema_error(s, n, "`%s` takes 1 argument (an entity's id), not %d", n->name, k);
    for (tl_node *a = n->args; a; a = a->next) tl_sema_expr(s, a, NULL);
    return TY_ERR;
  }
  tl_sema_expect_i64(s, n->args, "entity id");
  return TY_STR_T;
}

static use_info *use_of(sema *s, tl_node *n, int nargs) {
  use_info *ui = n->ref;
  if (!ui) {
    ui = tl_arena_alloc(s->arena, sizeof *ui);
    lf_arg *args = tl_arena_alloc(s->arena, sizeof *args * (size_t)(nargs ? nargs : 1));
    if (!ui || !args) return NULL;
    ui->u.args = args;
    n->ref = ui;
  }
  ui->u.at = n;
  ui->u.nargs = nargs;
  ui->u.rel = -1;
  ui->u.ncols = 0;
  return ui;
}

/* `"alice"`, `"Bob Smith"` as an argument names that entity (node->name); false after
 * the error (a NUL in it) */
static bool quoted_name(sema *s, tl_node *a) {
  if (a->len && memchr(a->str, 0, a->len)) {
    tl_sema_error(s, a, "a string in a fact, rule or query names an entity, and holds no NUL character");
    return false;
  }
  char *name = tl_arena_alloc(s->arena, a->len + 1);
  if (!name) return false;
  memcpy(name, a->str, a->len);
  name[a->len] = 0;
  a->name = name;
  return true;
}

/* a query, a relation call or a fact statement */
static tl_ty *check_use(sema *s, tl_node *n) {
  sema_logic *sl = s->logic;
  sl->used = true;
  bool fact = n->ival == TL_LOGIC_FACT, call = n->ival == TL_LOGIC_CALL;
  const char *what = fact ? "fact argument" : "query argument";
  int nargs = 0;
  for (tl_node *a = n->args; a; a = a->next) nargs++;
  int rel = tl_lf_find_rel(sl->L, n->name);
  bool bad = false;
  if (s->compr_depth) {
    tl_sema_error(s, n, "a comprehension body cannot query relations: query before it and index the result");
    bad = true;
  } else if (fact && tl_sema_find_fn(s, n->name)) {
    tl_sema_error(s, n, "`%s` is a function: `%s(..).` is a fact statement", n->name, n->name);
    tl_diag_hint(s->diag, "end the call with `;`");
    bad = true;
  } else if (tl_lf_is_builtin(n->name)) {
    tl_sema_error(s, n, "`%s` is a built-in relation of rule bodies; it cannot be %s", n->name,
               fact ? "given facts" : "queried");
    bad = true;
  } else if (rel < 0) {
    tl_sema_error(s, n, "unknown relation `%s`", n->name);
    tl_diag_hint(s->diag, "give it facts or rules, or declare it: `relation %s(entity);`", n->name);
    bad = true;
  } else if (tl_lf_rel_at(sl->L, rel)->arity != nargs) {
    const lf_rel *r = tl_lf_rel_at(sl->L, rel);
    tl_sema_error(s, n, "`%s` takes %d argument%s, not %d", n->name, r->arity, r->arity == 1 ? "" : "s", nargs);
    bad = true;
  }
  use_info *ui = bad ? NULL : use_of(s, n, nargs);
  if (!ui) { /* the arguments are still checked, for their own errors */
    for (tl_node *a = n->args; a; a = a->next)
      if (a->kind != TL_N_LVAR && !(a->kind == TL_N_IDENT && (!strcmp(a->name, "_") || !tl_sema_lookup(s, a->name))))
        tl_sema_expr(s, a, NULL);
    return fact ? TY_UNIT_T : TY_ERR;
  }
  const char *cols[32];
  int i = 0;
  for (tl_node *a = n->args; a; a = a->next, i++) {
    lf_arg *x = &ui->u.args[i];
    *x = (lf_arg){.kind = LF_ARG_ANY, .node = a, .col = -1}; /* what an argument in error stays */
    tl_node *lit = a->kind == TL_N_UNARY && a->op == TL_TOK_MINUS && (a->lhs->kind == TL_N_INT || a->lhs->kind == TL_N_FLOAT) ? a->lhs : a;
    if (a->kind == TL_N_LVAR || (a->kind == TL_N_IDENT && !strcmp(a->name, "_"))) {
      if (fact) {
        tl_sema_error(s, a, "a fact's arguments are values: `%s%s` has none", a->kind == TL_N_LVAR ? "$" : "", a->name);
        tl_diag_hint(s->diag, "a rule `p(x) :- q(x).` derives facts");
        continue;
      }
      x->kind = a->kind == TL_N_LVAR ? LF_ARG_VAR : LF_ARG_ANY;
      if (x->kind == LF_ARG_ANY) continue;
      int c = 0;
      while (c < ui->u.ncols && strcmp(cols[c], a->name)) c++;
      if (c == ui->u.ncols) {
        if (c == 32) {
          tl_sema_error(s, a, "a query has at most 32 variables");
          continue;
        }
        cols[ui->u.ncols++] = a->name;
      }
      x->col = c;
    } else if (a->kind == TL_N_IDENT && !tl_sema_lookup(s, a->name)) {
      x->kind = LF_ARG_NAME; /* an entity: known once every fact is */
    } else if (a->kind == TL_N_STR) { /* `"alice"`: the entity, as in a rule */
      if (!quoted_name(s, a)) continue;
      x->kind = LF_ARG_NAME;
    } else if (lit->kind == TL_N_FLOAT || a->kind == TL_N_FLOAT) { /* `1.5`: the entity a fact's 1.5 is (parse_logic.c) */
      char b[40];
      tl_lparse_float_name(lit == a ? a->fval : -lit->fval, b);
      char *name = tl_arena_alloc(s->arena, strlen(b) + 1);
      if (!name) continue;
      a->name = strcpy(name, b);
      x->kind = LF_ARG_NAME;
      a->ty = TY_I64_T;
    } else if (lit->kind == TL_N_INT) {
      x->kind = LF_ARG_NUM;
      x->v = lit == a ? a->ival : (int64_t)(0 - (uint64_t)lit->ival);
      tl_sema_expr(s, a, TY_I64_T);
    } else {
      x->kind = LF_ARG_VALUE;
      value_arg(s, a, what);
    }
  }
  ui->u.rel = rel;
  ui->u.fact = fact;
  ui->u.unit = s->fn ? s->fn->fn->unit : 0;
  tl_lf_add_use(sl->L, &ui->u);
  if (sl->nuses == sl->capuses) {
    int cap = sl->capuses ? sl->capuses * 2 : 16;
    use_info **u = tl_arena_alloc(s->arena, sizeof *u * (size_t)cap);
    if (!u) return TY_ERR;
    if (sl->nuses) memcpy(u, sl->uses, sizeof *u * (size_t)sl->nuses);
    sl->uses = u;
    sl->capuses = cap;
  }
  bool listed = false;
  for (int k = 0; k < sl->nuses && !listed; k++) listed = sl->uses[k] == ui;
  if (!listed) sl->uses[sl->nuses++] = ui;
  if (fact) return TY_UNIT_T;
  int rank = ui->u.ncols ? 2 : call ? 1 : 0, dt = ui->u.ncols ? TL_I64 : TL_F32;
  if (!ui->ty || ui->ty->rank != rank || ui->ty->dtype != dt) ui->ty = tl_sema_tensor(s, dt, rank);
  return ui->ty;
}

tl_ty *tl_sema_logic_expr(sema *s, tl_node *n) {
  if (n->kind == TL_N_LVAR) {
    tl_sema_error(s, n, "`$%s` is a query variable: it is an argument of a query `?p($%s)`", n->name, n->name);
    return TY_ERR;
  }
  if (!s->logic) return TY_ERR; /* out of memory, reported */
  switch (n->ival) {
  case TL_LOGIC_ENTITY_NAME: return check_entity_name(s, n);
  case TL_LOGIC_QUERY: case TL_LOGIC_CALL: case TL_LOGIC_FACT: return check_use(s, n);
  default: tl_sema_error(s, n, "expected an expression"); return TY_ERR;
  }
}

void tl_sema_logic_finish(sema *s) {
  sema_logic *sl = s->logic;
  if (!sl) return;
  tl_lf_resolve(sl->L);
  for (int k = 0; k < sl->nuses; k++)
    if (sl->uses[k]->ty) sl->uses[k]->ty->ent_cols = sl->uses[k]->u.ent_cols;
  if (sl->used || tl_lf_nrels(sl->L)) s->out->logic = tl_lf_export(sl->L);
  tl_lf_free(sl->L);
  sl->L = NULL;
}
