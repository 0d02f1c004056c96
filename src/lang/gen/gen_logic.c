/* gen_logic.c — C for Datalog (LANGUAGE.md §8). The checked program (relations,
 * entities, top-level facts, rules as tl_kb literals) becomes static data that
 * tlrt_logic_begin loads into the program's knowledge base before `main`; queries,
 * relation calls, fact statements and entity_name(id) become calls of rt_logic.c with
 * the values the function computes. */
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"
#include "lang/gen/gen_impl.h"
#include "logic/logic_front.h"

static const char *const op_names[] = {"TL_KB_ADD", "TL_KB_SUB", "TL_KB_MUL", "TL_KB_DIV", "TL_KB_MOD", "TL_KB_LT",
                                       "TL_KB_LE",  "TL_KB_GT",  "TL_KB_GE",  "TL_KB_EQ",  "TL_KB_NE",
                                       "TL_KB_COUNT", "TL_KB_SUM", "TL_KB_MIN", "TL_KB_MAX"};
static const char *const lit_kinds[] = {"TL_KB_ATOM", "TL_KB_NOT", "TL_KB_CMP", "TL_KB_ARITH", "TL_KB_AGG"};

static void c_string(tl_strbuf *b, const char *s) {
  if (s) tl_gen_c_string(b, s);
  else tl_strbuf_puts(b, "NULL");
}

/* a rule's terms: one array, each literal's arguments contiguous, then the operands
 * of expressions (address constants of the same static array); opnd: where an
 * expression's two operands are */
typedef struct {
  const tl_kb_term *t;
  int opnd;
} term_at;

typedef struct {
  tl_vec(term_at) v;
  bool oom;
} term_list;

static void push_term(term_list *l, const tl_kb_term *t) {
  if (!tl_vec_push(&l->v, ((term_at){t, -1}))) l->oom = true;
}

static void emit_rule(tl_strbuf *b, const lf_rule *r, int k) {
  term_list l = {0};
  int nlit = 1 + r->nbody, *start = malloc(sizeof *start * (size_t)nlit);
  for (int i = 0; start && i < nlit; i++) {
    const tl_kb_literal *lit = i ? &r->body[i - 1] : &r->head;
    start[i] = (int)l.v.len;
    for (int a = 0; a < lit->nargs; a++) push_term(&l, &lit->args[a]);
  }
  for (size_t i = 0; i < l.v.len && !l.oom; i++) /* the list grows as it is walked: nested operands too */
    if (l.v.data[i].t->kind == TL_KB_EXPR) {
      l.v.data[i].opnd = (int)l.v.len;
      push_term(&l, l.v.data[i].t->lhs);
      push_term(&l, l.v.data[i].t->rhs);
    }
  if (start && !l.oom) {
    int n = (int)l.v.len;
    tl_strbuf_printf(b, "static const tl_kb_term tl__t%d[%d] = {\n", k, n ? n : 1);
    for (int i = 0; i < n; i++) {
      const tl_kb_term *t = l.v.data[i].t;
      tl_strbuf_printf(b, "  {TL_KB_%s, ", (const char *[]){"VAR", "NUM", "ENT", "ANY", "EXPR"}[t->kind]);
      c_string(b, t->kind == TL_KB_VAR ? t->name : NULL);
      if (t->kind == TL_KB_EXPR)
        tl_strbuf_printf(b, ", 0, %s, &tl__t%d[%d], &tl__t%d[%d]},\n", op_names[t->op], k, l.v.data[i].opnd, k, l.v.data[i].opnd + 1);
      else tl_strbuf_printf(b, ", INT64_C(%lld), TL_KB_ADD, NULL, NULL},\n", (long long)t->value);
    }
    if (!n) tl_strbuf_puts(b, "  {TL_KB_ANY, NULL, 0, TL_KB_ADD, NULL, NULL},\n");
    tl_strbuf_puts(b, "};\n");
    tl_strbuf_printf(b, "static const tl_kb_literal tl__l%d[%d] = {\n", k, nlit);
    for (int i = 0; i < nlit; i++) {
      const tl_kb_literal *lit = i ? &r->body[i - 1] : &r->head;
      tl_strbuf_printf(b, "  {%s, ", lit_kinds[lit->kind]);
      c_string(b, lit->rel);
      tl_strbuf_printf(b, ", %s, %d, &tl__t%d[%d]},\n", op_names[lit->op], lit->nargs, k, start[i]);
    }
    tl_strbuf_puts(b, "};\n");
  } else tl_strbuf_puts(b, "#error out of memory generating a rule\n");
  free(start);
  tl_vec_free(&l.v);
}

void tl_gen_logic_program(const lf_program *P, tl_strbuf *b) {
  tl_strbuf_puts(b, "/* ---- the logic program (rt_logic.c loads it) ---- */\n");
  for (int r = 0; r < P->nrels; r++) {
    const lf_rel *rel = &P->rels[r];
    if (rel->arity) {
      tl_strbuf_printf(b, "static const tl_kb_type tl__ty%d[] = {", r);
      for (int c = 0; c < rel->arity; c++)
        tl_strbuf_printf(b, "%s%s", c ? ", " : "", rel->type[c] == TL_KB_ENTITY ? "TL_KB_ENTITY" : "TL_KB_INT");
      tl_strbuf_puts(b, "};\n");
    }
    if (rel->nfacts && rel->arity) {
      tl_strbuf_printf(b, "static const int64_t tl__f%d[] = {", r);
      for (int64_t i = 0; i < rel->nfacts * rel->arity; i++)
        tl_strbuf_printf(b, "%sINT64_C(%lld)", i % 8 ? ", " : (i ? ",\n  " : "\n  "), (long long)rel->facts[i]);
      tl_strbuf_puts(b, "};\n");
    }
  }
  if (P->nrels) {
    tl_strbuf_puts(b, "static const tlrt_lrel tl__rels[] = {\n");
    for (int r = 0; r < P->nrels; r++) {
      const lf_rel *rel = &P->rels[r];
      tl_strbuf_puts(b, "  {");
      c_string(b, rel->name);
      tl_strbuf_printf(b, ", %d, ", rel->arity);
      if (rel->arity) tl_strbuf_printf(b, "tl__ty%d", r);
      else tl_strbuf_puts(b, "NULL");
      tl_strbuf_printf(b, ", %lld, ", (long long)rel->nfacts);
      if (rel->nfacts && rel->arity) tl_strbuf_printf(b, "tl__f%d},\n", r);
      else tl_strbuf_puts(b, "NULL},\n");
    }
    tl_strbuf_puts(b, "};\n");
  }
  if (P->nent) {
    tl_strbuf_puts(b, "static const char *const tl__ents[] = {");
    for (int64_t e = 0; e < P->nent; e++) {
      tl_strbuf_puts(b, e % 8 ? ", " : e ? ",\n  " : "\n  "); /* adjacent literals would join */
      c_string(b, P->ents[e]);
    }
    tl_strbuf_puts(b, "};\n");
  }
  for (int i = 0; i < P->nrules; i++) emit_rule(b, &P->rules[i], i);
  if (P->nrules) {
    tl_strbuf_puts(b, "static const tlrt_lrule tl__rules[] = {\n");
    for (int i = 0; i < P->nrules; i++)
      tl_strbuf_printf(b, "  {&tl__l%d[0], %d, &tl__l%d[1]},\n", i, P->rules[i].nbody, i);
    tl_strbuf_puts(b, "};\n");
  }
  if (P->nio) {
    tl_strbuf_puts(b, "static const tlrt_lio tl__io[] = {\n");
    for (int i = 0; i < P->nio; i++) {
      const lf_io *io = &P->io[i];
      char d[2] = {io->delim, 0};
      tl_strbuf_puts(b, "  {");
      c_string(b, io->rel);
      tl_strbuf_puts(b, ", ");
      c_string(b, io->path);
      tl_strbuf_puts(b, ", ");
      c_string(b, d);
      tl_strbuf_printf(b, ", %d, %d, %d},\n", io->output, io->line, io->col);
    }
    tl_strbuf_puts(b, "};\n");
  }
  tl_strbuf_printf(b, "static const tlrt_lprog tl__logic = {%lld, %s, %d, %s, %d, %s, %d, %s};\n\n", (long long)P->nent,
                   P->nent ? "tl__ents" : "NULL", P->nrels, P->nrels ? "tl__rels" : "NULL", P->nrules,
                   P->nrules ? "tl__rules" : "NULL", P->nio, P->nio ? "tl__io" : "NULL");
}

/* s as a C string literal, in the arena (an append that failed fails the program) */
static const char *c_literal(gen *g, const char *s) {
  tl_strbuf b = {0};
  c_string(&b, s);
  char *text = tl_gen_take_text(g, &b);
  const char *lit = tl_gen_fmt(g, "%s", text ? text : "\"\"");
  free(text);
  return lit;
}

/* a use's arguments as tl_kb terms (queries) or values (facts), the values the
 * function computes evaluated first, in order */
static const char *use_args(gen *g, const lf_use *u, bool terms) {
  const char *list = "";
  for (int i = 0; i < u->nargs; i++) {
    const lf_arg *a = &u->args[i];
    const char *sep = i ? ", " : "", *item;
    const char *v = NULL;
    if (a->kind == LF_ARG_VALUE) v = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a->node).c);
    else if (a->kind == LF_ARG_NUM || a->kind == LF_ARG_NAME) v = tl_gen_fmt(g, "INT64_C(%lld)", (long long)a->v);
    if (!terms) item = v ? v : "0";
    else if (a->kind == LF_ARG_VAR) {
      item = tl_gen_fmt(g, "{TL_KB_VAR, %s, 0, TL_KB_ADD, NULL, NULL}", c_literal(g, a->node->name));
    } else if (a->kind == LF_ARG_ANY) item = "{TL_KB_ANY, NULL, 0, TL_KB_ADD, NULL, NULL}";
    else item = tl_gen_fmt(g, "{%s, NULL, %s, TL_KB_ADD, NULL, NULL}", a->entity ? "TL_KB_ENT" : "TL_KB_NUM", v);
    list = tl_gen_fmt(g, "%s%s%s", list, sep, item);
  }
  return list;
}

cv tl_gen_logic(gen *g, tl_node *n) {
  if (n->ival == TL_LOGIC_ENTITY_NAME) {
    cv id = tl_gen_expr(g, n->args);
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_entity_name(R, %s, %d, %d)", id.c, n->line, n->col));
  }
  const lf_use *u = n->ref;
  const char *rel = c_literal(g, n->name);
  if (n->ival == TL_LOGIC_FACT) {
    const char *vals = use_args(g, u, false);
    tl_gen_emit(g, "tlrt_logic_fact(R, %s, %d, %s, %d, %d);", rel, u->nargs,
             u->nargs ? tl_gen_fmt(g, "(int64_t[]){%s}", vals) : "NULL", n->line, n->col);
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  if (u->never) /* a constant of the other kind: no match (logic_front.c's warning) */
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_logic_none(R, %d, %d, %d, %d)", u->ncols, n->ival == TL_LOGIC_CALL,
                                                   n->line, n->col));
  const char *terms = use_args(g, u, true);
  return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_logic_query(R, %s, %d, %s, %d, %d, %d)", rel, u->nargs,
                                          u->nargs ? tl_gen_fmt(g, "(tl_kb_term[]){%s}", terms) : "NULL",
                                          n->ival == TL_LOGIC_CALL, n->line, n->col));
}
