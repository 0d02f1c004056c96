/* logic_front.h — the checker of a Datalog program (LANGUAGE.md §8), shared by the
 * language's checker (lang/check/sema_logic.c) and tl_kb_add_rules (kb_text.c). It
 * lives in logic/ so the C API's text entry needs nothing above logic; it reads the
 * tree of the language's front end (lang/front: core only).
 * in: the parsed logic items of every file of the program (facts, rules, `relation`
 * declarations), in program order, and the facts and queries met in function bodies
 * ("uses", classified by the checker); out: relations with their arity and column
 * types, entities with their ids, top-level facts as rows, rules as tl_kb literals
 * (everything in the arena), and every error with its file, line and column:
 * unknown relations, arities, a column used both for entities and integers, unbound
 * variables, negation that is not stratified (found by src/logic's own check,
 * tl_logic_strata_check, with the target's rules first).
 *
 * Meaning of names: a name that is an argument of a fact is a symbol, an *entity*,
 * and so is a name in quotes (`"alice"`, in a rule too); in a rule, a name that is an
 * entity is that entity (a warning when it is written bare), `$x` and every other
 * name are variables (a bare one written once: a warning), `_` is the wildcard.
 * Warnings go to the diagnostics as errors do. Entity ids follow the first appearance
 * in the program text (a module's text counts at its `mod` line). A column's type is
 * declared or inferred from the constants and variables that meet in it; one that
 * nothing decides holds integers. */
#ifndef TL_LOGIC_LOGIC_FRONT_H
#define TL_LOGIC_LOGIC_FRONT_H

#include "lang/front/ast.h"
#include "lang/front/diag.h"
#include "tl.h"

/* an argument of a use (a query, a relation call, a fact statement) */
typedef enum {
  LF_ARG_VAR,   /* `$x`: an output column (queries) */
  LF_ARG_ANY,   /* `_` */
  LF_ARG_NUM,   /* an integer constant: v */
  LF_ARG_NAME,  /* a name not in scope: an entity (in a fact statement, a symbol); v its id */
  LF_ARG_VALUE, /* an i64 expression of the function, computed when it runs */
} lf_arg_kind;

typedef struct {
  lf_arg_kind kind;
  tl_node *node;
  int64_t v;
  int col;     /* VAR: its output column */
  bool entity; /* after tl_lf_resolve: the argument's column holds entities */
} lf_arg;

typedef struct lf_use {
  tl_node *at; /* the TL_N_LOGIC node */
  int unit;
  bool fact;   /* a fact statement */
  int nargs;
  lf_arg *args;
  int rel;           /* after tl_lf_resolve */
  int ncols;         /* output columns ($ variables) */
  uint32_t ent_cols; /* after tl_lf_resolve: bit c set when output column c holds entities */
  bool listed;
  bool never; /* a query with a constant of the other kind than its column holds (an
                 integer where entities are, or the reverse): it matches nothing */
  struct lf_use *next;
} lf_use;

typedef struct {
  const char *name;
  int arity;
  tl_kb_type type[TL_KB_MAX_ARITY];
  int8_t known[TL_KB_MAX_ARITY]; /* working: the column's type is declared or inferred */
  int unit, line, col;           /* where its arity comes from */
  bool declared;
  int slot;                      /* working: its first column's type slot */
  int64_t nfacts;                /* the top-level facts, rows of arity values */
  size_t cap;                    /* values (not rows) the facts array holds */
  int64_t *facts;
} lf_rel;

typedef struct {
  tl_kb_literal head;
  int nbody;
  tl_kb_literal *body;
  tl_ast_item *item;
} lf_rule;

typedef struct lf lf;

/* diag[u]: the diagnostics of unit u (0: the program's file); mod_at[u]: the `mod`
 * item that brought unit u in (NULL for unit 0). target: tl_kb_add_rules' knowledge
 * base (its entities and relations count, and the result goes into it), or NULL: a
 * knowledge base of a context made for the check. */
lf *tl_lf_new(tl_arena *arena, tl_diag **diag, tl_ast_item **mod_at, int nunits, tl_kb *target);
void tl_lf_free(lf *L);
/* every item of the program, in order (logic items are kept, others skipped) */
bool tl_lf_add_items(lf *L, tl_ast_item *items);
/* a fact statement of a function body, before tl_lf_define */
bool tl_lf_add_fact_stmt(lf *L, tl_node *at, int unit);
/* relations and arities from declarations, facts and rule heads (errors for clashes
 * come from tl_lf_resolve) */
void tl_lf_define(lf *L);
/* the relation called name, or -1 */
int tl_lf_find_rel(const lf *L, const char *name);
const lf_rel *tl_lf_rel_at(const lf *L, int rel);
/* is name a built-in relation of rule bodies (lt .. ne, add .. mod)? */
bool tl_lf_is_builtin(const char *name);
/* a use met while checking a function; listed once however often it is rechecked */
void tl_lf_add_use(lf *L, lf_use *u);
/* everything else; returns the number of errors */
int tl_lf_resolve(lf *L);

/* logic_agg.c: rule it's aggregates lowered (each node's op TL_TOK_COLON, str its
 * name: args become the group and the result, name the hidden relation, len the value
 * column, ref the hidden rule), their hidden rules in hidden[0 ..]; the count, or -1
 * when out of memory or more than room */
int tl_lf_lower_aggregates(tl_arena *a, tl_ast_item *it, tl_ast_item **hidden, int room, int *counter);

/* the result */
int tl_lf_nrels(const lf *L);
int64_t tl_lf_nentities(const lf *L);
const char *tl_lf_entity(const lf *L, int64_t id);
int tl_lf_nrules(const lf *L);
const lf_rule *tl_lf_rule_at(const lf *L, int i);

/* `.input edge` / `.output path`: the file (beside the program's file unless absolute;
 * NULL: stdout), its delimiter */
typedef struct {
  const char *rel, *path;
  char delim;
  bool output;
  int line, col;
} lf_io;

/* the program for the code generator, copied into the arena (lf may go after) */
typedef struct lf_program {
  int nio;
  lf_io *io;
  int nrels;
  lf_rel *rels; /* facts: the top-level facts' rows */
  int64_t nent;
  const char **ents;
  int nrules;
  lf_rule *rules;
} lf_program;
lf_program *tl_lf_export(lf *L);

/* text mode (kb_text.c): puts the checked program into the target knowledge base:
 * relations, entities, facts, rules in order; on a failure of the knowledge base,
 * the error goes to diag 0 at the rule and the rest is not added. */
int tl_lf_apply(lf *L);

#endif
