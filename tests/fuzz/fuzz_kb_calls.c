/* fuzz_kb_calls.c — the knowledge-base API from bytes: after the text of the kb harness
 * (up to its first NUL), the rest of the input is decoded into calls that text cannot
 * make: declarations with any arity and types, facts with out-of-range entity ids and
 * extreme integers, rules built from raw literals and terms (expressions, every
 * operator, wrong argument counts), queries with constants, repeated variables and
 * wildcards, representation changes, tuple limits, entity lookups. Errors are expected and ignored;
 * a crash, a leak or a sanitizer report is a finding. */
#include "fuzz.h"
#include "tl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KB_FUZZ_MAX_CALLS 48
#define KB_FUZZ_MAX_ARGS 5

typedef struct {
  const uint8_t *p, *end;
  const char *names[8]; /* relation names: fixed ones, and a few of the text's */
  int nnames;
} kb_bytes;

static unsigned kb_byte(kb_bytes *b) { return b->p < b->end ? *b->p++ : 0; }

/* small values mostly, and the edges of int64 and of the dense/sparse boxes */
static int64_t kb_value(kb_bytes *b) {
  static const int64_t edge[] = {0, 1, -1, 2, 3, 63, 64, 65, 1000, (int64_t)1 << 31, (int64_t)1 << 40,
                                 INT64_MAX, INT64_MIN, INT64_MIN + 1, -1000};
  unsigned k = kb_byte(b);
  if (k < 128) return (int64_t)(k % 8);
  return edge[k % (sizeof edge / sizeof edge[0])];
}

/* a relation name; now and then NULL, which every call must refuse */
static const char *kb_name(kb_bytes *b) {
  unsigned k = kb_byte(b);
  return k == 255 ? NULL : b->names[k % (unsigned)b->nnames];
}

/* a term; an expression's operands come from terms[] (depth at most 2), so every
 * pointer stays valid through the call */
static tl_kb_term kb_term(kb_bytes *b, tl_kb_term *pool, int *used, int depth) {
  static const char *const vars[] = {"x", "y", "z", "w"};
  switch (kb_byte(b) % 6) {
  case 0: case 1: return tl_kb_var(vars[kb_byte(b) % 4]);
  case 2: return tl_kb_num(kb_value(b));
  case 3: return tl_kb_ent(kb_value(b));
  case 4: return tl_kb_any();
  default:
    if (depth >= 2 || *used + 2 > 16) return tl_kb_var("x");
    tl_kb_term *lhs = &pool[(*used)++], *rhs = &pool[(*used)++];
    *lhs = kb_term(b, pool, used, depth + 1);
    *rhs = kb_term(b, pool, used, depth + 1);
    return tl_kb_expr((tl_kb_op)(kb_byte(b) % 11), lhs, rhs);
  }
}

/* nargs terms into args, expression operands into pool */
static int kb_terms(kb_bytes *b, tl_kb_term *args, tl_kb_term *pool, int *used) {
  int n = (int)(kb_byte(b) % (KB_FUZZ_MAX_ARGS + 1));
  for (int i = 0; i < n; i++) args[i] = kb_term(b, pool, used, 0);
  return n;
}

/* a literal of any kind; its arguments live in args (KB_FUZZ_MAX_ARGS) and pool */
static tl_kb_literal kb_literal(kb_bytes *b, tl_kb_term *args, tl_kb_term *pool, int *used) {
  unsigned kind = kb_byte(b) % 4;
  const char *rel = kb_name(b);
  int n = kb_terms(b, args, pool, used);
  tl_kb_op op = (tl_kb_op)(kb_byte(b) % 11);
  tl_kb_literal l = {(tl_kb_lit_kind)kind, kind < 2 ? rel : NULL, op, n, args};
  return l;
}

static void kb_call_rule(tl_kb *kb, kb_bytes *b) {
  tl_kb_term head_args[KB_FUZZ_MAX_ARGS], body_args[3][KB_FUZZ_MAX_ARGS], pool[4][16];
  int used[4] = {0};
  tl_kb_literal head = kb_literal(b, head_args, pool[0], &used[0]), body[3];
  head.kind = kb_byte(b) % 8 ? TL_KB_ATOM : head.kind; /* a head of another kind is an error */
  if (head.kind == TL_KB_ATOM && !head.rel) head.rel = kb_name(b);
  int nbody = (int)(kb_byte(b) % 4);
  for (int i = 0; i < nbody; i++) body[i] = kb_literal(b, body_args[i], pool[i + 1], &used[i + 1]);
  tl_kb_rule(kb, &head, nbody, body);
}

static void kb_call(tl_kb *kb, tl_ctx *ctx, kb_bytes *b) {
  unsigned call = kb_byte(b) % 9;
  switch (call) {
  case 0: { /* a declaration: arity 0..5, or past the limit */
    tl_kb_type types[TL_KB_MAX_ARITY + 1];
    unsigned bits = kb_byte(b);
    int arity = bits & 0x80 ? TL_KB_MAX_ARITY + 1 - (int)(bits & 1) : (int)(bits % 6);
    for (int i = 0; i < arity; i++) types[i] = (kb_byte(b) & 1) ? TL_KB_INT : TL_KB_ENTITY;
    tl_kb_relation(kb, kb_name(b), arity, arity ? types : NULL);
    break;
  }
  case 1: { /* one fact, with any number of values */
    int64_t v[KB_FUZZ_MAX_ARGS];
    int n = (int)(kb_byte(b) % (KB_FUZZ_MAX_ARGS + 1));
    for (int i = 0; i < n; i++) v[i] = kb_value(b);
    tl_kb_fact(kb, kb_name(b), n, v);
    break;
  }
  case 2: { /* rows of facts: the buffer holds the widest arity, the values vary */
    static int64_t rows[4 * TL_KB_MAX_ARITY];
    int64_t nrows = (int64_t)(kb_byte(b) % 5);
    for (int i = 0; i < 4 * TL_KB_MAX_ARITY; i++) rows[i] = i < 12 ? kb_value(b) : i % 3;
    tl_kb_facts(kb, kb_name(b), kb_byte(b) == 255 ? -1 : nrows, rows);
    break;
  }
  case 3: kb_call_rule(kb, b); break;
  case 4: { /* a query in a scope of its own, its answer read */
    tl_kb_term args[KB_FUZZ_MAX_ARGS], pool[16];
    int used = 0;
    const char *rel = kb_name(b);
    int n = kb_terms(b, args, pool, &used);
    tl_scope *s = tl_scope_begin(ctx, "query");
    tl_tensor *t = tl_kb_query(kb, rel, n, args);
    double total = 0;
    if (t) tl_item(tl_sum(tl_cast(t, TL_F64), 0, NULL, 0), &total); /* reads every element */
    tl_scope_end(s);
    break;
  }
  case 5: tl_kb_count(kb, kb_name(b)); break;
  case 6: { /* a representation, or a tuple limit (the values stay at most 1000) */
    unsigned k = kb_byte(b);
    if (k & 0x80) tl_kb_set_max_tuples(kb, kb_value(b));
    else tl_kb_set_repr(kb, (tl_kb_repr)(k % 4));
    break;
  }
  case 7: {
    static const char *const ents[] = {"a", "b", "c", "", "a b"};
    tl_kb_entity(kb, ents[kb_byte(b) % 5]);
    break;
  }
  default: tl_kb_entity_name(kb, kb_value(b)); break;
  }
  if (getenv("TL_FUZZ_TRACE")) /* what each call did, to read a corpus input */
    fprintf(stderr, "call %u: %s\n", call, tl_last_status(ctx) ? tl_last_error(ctx) : "ok");
  tl_clear_error(ctx);
}

void tl_fuzz_kb_calls(tl_kb *kb, tl_ctx *ctx, const char *const *text_names, int ntext,
                      const uint8_t *data, size_t size) {
  kb_bytes b = {data, data + size, {"r", "s", "edge", "path"}, 4};
  for (int i = 0; i < ntext && b.nnames < 8; i++) b.names[b.nnames++] = text_names[i];
  for (int i = 0; i < KB_FUZZ_MAX_CALLS && b.p < b.end; i++) kb_call(kb, ctx, &b);
}
