/* logic.h — the logic program (a knowledge base): entities, typed relations, facts
 * and rules in (built by C calls, checked as they arrive), relations' tuples out
 * (evaluated stratum by stratum, semi-naively, on demand). Internal to src/logic; the
 * public face is the tl_kb_* section of tl.h.
 *
 * One way through: program (program.c) -> strata (strata.c) -> rules compiled to join
 * plans and run to a fixpoint per stratum (eval.c) over relation stores (store.c:
 * sparse tuples with hash indexes, or dense bit boxes) -> queries (query.c). */
#ifndef TL_LOGIC_LOGIC_H
#define TL_LOGIC_LOGIC_H

#include <stdbool.h>
#include <stdint.h>

#include "core/hash.h"
#include "tl.h"

#define TL_LOGIC_MAX_ARITY TL_KB_MAX_ARITY
/* An expression tree in a rule holds at most this many nodes: user structs could
 * point in a cycle, and the evaluator recurses on expressions. */
#define TL_LOGIC_MAX_EXPR 64
/* Dense boxes: auto mode picks dense when a relation's box has at most this many
 * cells, and turns a dense relation sparse when it outgrows it. */
#define TL_LOGIC_DENSE_AUTO_CELLS ((int64_t)1 << 26)
/* A relation forced dense may grow to this many cells; beyond it evaluation fails. */
#define TL_LOGIC_DENSE_MAX_CELLS ((int64_t)1 << 30)
/* Tuple numbers are 32-bit in the hash tables, whose slots are placed by 32 bits of
 * hash (at most 2^32 slots at half load). */
#define TL_LOGIC_MAX_TUPLES ((int64_t)INT32_MAX)

typedef enum { TL_REPR_NONE, TL_REPR_SPARSE, TL_REPR_DENSE } tl_logic_repr;

/* ---- stores (store.c) ------------------------------------------------------------ */

/* A hash index of a sparse store on some columns: key -> the tuples with that key,
 * newest first. The membership index (all columns) has unique keys and no chains. */
typedef struct {
  uint32_t mask;      /* the key's columns */
  uint64_t *slots;    /* hash32 << 32 | (head tuple + 1); 0: empty */
  int64_t nslots, nkeys;
  uint32_t *next;     /* per tuple: the previous tuple with its key, + 1 (0: none) */
} tl_logic_index;

/* A relation that does not change while a stratum runs (one below it) is read through
 * CSR indexes: its tuples copied, grouped by the key columns (which come first:
 * perm[i] is the original column of copy column i), and a key's group found by a
 * direct offset table (one integer key column over a compact range) or by hash. */
typedef struct {
  uint32_t mask;
  int nkey;
  int8_t perm[TL_LOGIC_MAX_ARITY];
  int64_t *rows, n;
  int64_t base, range, *start; /* direct: key k's rows are [start[k - base], start[k - base + 1]) */
  uint64_t *slots;             /* hashed: hash32 << 32 | (group + 1) */
  int64_t nslots, *gstart;     /* group g's rows are [gstart[g], gstart[g + 1]) */
} tl_logic_csr;

/* Tuples in insertion order (row-major, arity columns), so a range is a version:
 * [0, limit) is what this round reads as the full relation, [d_begin, d_end) the last
 * round's delta, [limit, n) the tuples found this round. */
typedef struct {
  int64_t *tup;
  int64_t n, cap;
  int64_t limit, d_begin, d_end;
  int64_t max;         /* the most tuples it may hold (tl_kb_set_max_tuples) */
  tl_logic_index *idx; /* idx[0]: membership */
  int nidx;
  size_t cap_idx;
  tl_logic_csr *csr;   /* dropped at the first insert */
  int ncsr;
  size_t cap_csr;
} tl_logic_sparse;

/* A Boolean box: column c covers values [lo[c], lo[c] + size[c]); the last column is a
 * row of `words` 64-bit words, rows are the product of the other columns (one row for
 * arity 0 and 1). full is the relation, delta the last round's new tuples, next this
 * round's (merged into full at the round's end). Values outside the box found during a
 * round wait in `overflow` until the round ends and the box grows. */
typedef struct {
  int64_t lo[TL_LOGIC_MAX_ARITY], size[TL_LOGIC_MAX_ARITY];
  int64_t rows, words;
  uint64_t *full, *delta, *next;
  uint64_t *full_rows, *delta_rows, *next_rows; /* one bit per row: the row is not empty */
  /* per row two numbers: the words [lo, hi) outside which a row of full, delta or next
   * is zero (hi <= lo: all of it), so a row with a few bits costs a few words */
  uint32_t *fspan, *dspan, *nspan;
  int64_t *delta_list, ndelta;  /* rows with bits in delta */
  int64_t *next_list, nnext;    /* rows with bits in next */
  int64_t *overflow, noverflow; /* tuples */
  size_t cap_delta, cap_next, cap_overflow;
} tl_logic_dense;

static inline void tl_logic_span_add(uint32_t *span, int64_t row, uint32_t lo, uint32_t hi) {
  uint32_t *s = span + 2 * row;
  if (s[1] <= s[0]) s[0] = lo, s[1] = hi;
  else {
    if (lo < s[0]) s[0] = lo;
    if (hi > s[1]) s[1] = hi;
  }
}

/* A growable list of tuples (the tuples a relation gained during one update pass). */
typedef struct {
  int64_t *tup;
  int64_t n, cap;
} tl_logic_tuples;

typedef struct {
  char *name;
  int arity;
  tl_kb_type type[TL_LOGIC_MAX_ARITY];
  int stratum;
  bool has_rules;
  /* asserted facts (deduplicated; a sparse store used only for its membership and
   * order); facts [0, facts_loaded) are in the store */
  tl_logic_sparse facts;
  int64_t facts_loaded;
  tl_logic_repr repr; /* NONE: not built yet */
  tl_logic_sparse sp;
  tl_logic_dense dn;
  int64_t count;      /* tuples in the relation (full), once its stratum is evaluated */
  /* during an update pass: the tuples gained (for strata above reading them), or
   * reset: recomputed, so strata above must recompute too */
  tl_logic_tuples pass_new;
  bool pass_reset;
} tl_logic_rel;

/* ---- rules (program.c) -------------------------------------------------------------- */

typedef enum { TL_TERM_VAR, TL_TERM_CONST, TL_TERM_ANY, TL_TERM_EXPR } tl_logic_term_kind;

typedef struct {
  uint8_t kind; /* tl_logic_term_kind */
  uint8_t op;   /* EXPR: tl_kb_op */
  uint8_t type; /* CONST: tl_kb_type */
  int32_t a, b; /* EXPR: operand terms */
  int64_t v;    /* VAR: the variable; CONST: the value */
} tl_logic_term;

typedef enum { TL_LIT_ATOM, TL_LIT_NOT, TL_LIT_CMP, TL_LIT_ARITH, TL_LIT_AGG } tl_logic_lit_kind;

/* An atom's or negated atom's arguments, a comparison's two sides, an arithmetic
 * relation's operands and result (a op b = c), an aggregate's group, result and value
 * column (a constant; tl.h's TL_KB_AGG): term numbers in argv[args ...]. */
typedef struct {
  uint8_t kind, op;
  int32_t rel;
  int32_t nargs, args;
} tl_logic_lit;

typedef struct {
  tl_logic_lit head;
  tl_logic_lit *body;
  int nbody;
  tl_logic_term *terms;
  int nterms;
  int32_t *argv;
  int nargv;
  char **vars;     /* names; hidden variables (an expression in a positive atom's
                      argument, replaced by a variable and an equality) are named "" */
  int nvars;
  char *text;      /* the rule as written, for messages */
} tl_logic_rule;

/* ---- strata (strata.c) ---------------------------------------------------------------- */

typedef struct {
  int *rels, nrels;     /* the relations of one strongly connected component */
  int *rules, nrules;   /* the rules whose head is one of them */
  bool evaluated;       /* its relations are up to date (but for facts added since) */
} tl_logic_stratum;

/* ---- the knowledge base ---------------------------------------------------------------- */

typedef struct {
  uint64_t strata_scratch;     /* strata evaluated from their facts */
  uint64_t strata_incremental; /* strata brought up to date from new tuples only */
  uint64_t strata_recomputed;  /* evaluated strata recomputed (negation over a change) */
  uint64_t rounds;             /* semi-naive rounds */
  uint64_t derivations;        /* head tuples produced (new or not) */
  uint64_t bit_joins;          /* rule variants run by the bit-parallel join */
  uint64_t sparse_joins;       /* rule variants run by the sparse join over a CSR */
  uint64_t box_regrows;        /* dense boxes moved into a bigger box */
  uint64_t query_cache_hits;
  uint64_t queries;
} tl_logic_stats;

/* A remembered query result: a tensor in the cache scope, valid for one version. */
typedef struct {
  char *key;
  size_t keylen;
  tl_tensor *result;
} tl_logic_cached;

struct tl_kb {
  tl_ctx *ctx;
  /* entities: ids in order of first appearance */
  char **ent_names;
  int64_t nent;
  size_t cap_ent;
  tl_hset ent_set; /* id + 1 under the name's hash */
  /* relations */
  tl_logic_rel *rels;
  int nrels;
  size_t cap_rels;
  tl_hset rel_set; /* relation + 1 under the name's hash */
  tl_logic_rule *rules;
  int nrules;
  size_t cap_rules;
  /* strata, dependencies first; rel_stratum is in tl_logic_rel.stratum */
  tl_logic_stratum *strata;
  int nstrata;
  tl_kb_repr repr_mode;
  int64_t max_tuples; /* the most tuples evaluation may put in one relation */
  /* the integers seen in facts and rules: the auto mode's estimate of int domains */
  int64_t int_lo, int_hi;
  bool have_ints;
  /* bumped by every change a query could see: cached results are for one version */
  uint64_t version, cache_version;
  tl_scope *cache_scope;
  tl_logic_cached *cache;
  int ncache;
  size_t cap_cache;
  /* the literal a rule error is about (-1: the head, -2: none), for the language
   * layer to point at */
  int err_lit;
  char *warnings; /* tl_kb_warnings: the last tl_kb_add_rules' (the language fills it) */
  int agg_names;  /* tl_kb_add_rules' aggregates' hidden relations so far: count#N's N */
  int full_rel;   /* the relation the last evaluation stopped at, past max_tuples; -1 */
  tl_logic_stats stats;
};

/* kb.c ----------------------------------------------------------------------------------- */
/* Sets the context's error; returns st. */
tl_status tl_logic_fail(tl_kb *kb, tl_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* program.c ---------------------------------------------------------------------------- */
int64_t tl_logic_entity(tl_kb *kb, const char *name, size_t len); /* interns; -1: no memory */
int tl_logic_find_rel(const tl_kb *kb, const char *name);           /* -1: unknown */
tl_status tl_logic_declare(tl_kb *kb, const char *name, int arity, const tl_kb_type *types);
tl_status tl_logic_add_facts(tl_kb *kb, int rel, int64_t nrows, const int64_t *values, const char *what);
tl_status tl_logic_add_rule(tl_kb *kb, const tl_kb_literal *head, int nbody, const tl_kb_literal *body);
/* Forgets every evaluated tuple: strata evaluate again from their facts when queried. */
void tl_logic_reset_eval(tl_kb *kb);
void tl_logic_rule_free(tl_logic_rule *r);
/* Appends the text of an entity or integer value of the given type. */
void tl_logic_value_text(const tl_kb *kb, tl_kb_type type, int64_t v, char *buf, size_t cap);

/* strata.c ------------------------------------------------------------------------------ */
/* Recomputes the strata; an error (and no change) when negation is not stratified, the
 * message naming the cycle, prefixed with `what`. */
tl_status tl_logic_stratify(tl_kb *kb, const char *what);
/* A rule's head reads a relation of its body: neg 0 plainly, 1 under `not`, 2 .. 5
 * through an aggregate (count, sum, min, max), which must be stratified as `not`. */
typedef struct {
  int head, body;
  uint8_t neg;
} tl_logic_dep;
/* The stratification check alone, with no knowledge base (no context, no engine): the
 * relations 0 .. nrels - 1 (names for the message) and what the rules read, in rule
 * order. -1 when negation is stratified; -2 out of memory; else the first dependency
 * (in that order) negating a relation that depends on its head, with the cycle through
 * it in *cycle ("p -> not q -> r -> p", malloc'd; NULL if out of memory). */
int tl_logic_strata_check(int nrels, const char *const *names, int ndeps, const tl_logic_dep *deps, char **cycle);
void tl_logic_strata_free(tl_kb *kb);

/* store.c ------------------------------------------------------------------------------- */
/* Sorts n rows of k columns ascending and drops repeats; returns the rows left (-1: out
 * of memory). A store's CSR groups and a query's answer use it. */
int64_t tl_logic_sort_unique(int64_t *rows, int64_t n, int k);
void tl_logic_sparse_free(tl_logic_sparse *s);
bool tl_logic_sparse_init(tl_logic_sparse *s, int arity, int64_t max);
/* 1: added, 0: there already, -1: out of memory or too many tuples */
int tl_logic_sparse_insert(tl_logic_sparse *s, int arity, const int64_t *t);
/* The same with the membership hash (tl_logic_hash_key over every column) computed, and
 * a hint to fetch its slot early: a batch of inserts overlaps its cache misses. */
int tl_logic_sparse_insert_hashed(tl_logic_sparse *s, int arity, const int64_t *t, uint64_t h);
void tl_logic_sparse_prefetch(const tl_logic_sparse *s, uint64_t h);
/* The CSR index on `mask` of a store that will not change while it is used; false:
 * out of memory. tl_logic_sparse_drop_csr frees them (before the store changes). */
bool tl_logic_sparse_csr(tl_logic_sparse *s, int arity, uint32_t mask);
const tl_logic_csr *tl_logic_sparse_csr_get(const tl_logic_sparse *s, uint32_t mask); /* NULL: none */
/* The rows [*b, *e) of x whose key columns equal key's (key in column positions). */
void tl_logic_csr_find(const tl_logic_csr *x, int arity, const int64_t *key, int64_t *b, int64_t *e);
void tl_logic_sparse_drop_csr(tl_logic_sparse *s);
bool tl_logic_sparse_contains(const tl_logic_sparse *s, int arity, const int64_t *t);
/* The index on `mask`, made (from the tuples there) if missing; -1: out of memory. */
int tl_logic_sparse_index(tl_logic_sparse *s, int arity, uint32_t mask);
uint64_t tl_logic_hash_key(int arity, uint32_t mask, const int64_t *t);
/* the newest tuple whose `mask` columns equal key's, + 1 (0: none); then its next */
int64_t tl_logic_index_head(const tl_logic_sparse *s, int arity, int ix, const int64_t *key);

void tl_logic_store_free(tl_logic_rel *r);
/* An empty store of the given representation (dense: over the box lo/size). */
tl_status tl_logic_store_init(tl_kb *kb, tl_logic_rel *r, tl_logic_repr repr, const int64_t *lo,
                              const int64_t *size);
/* During a round: 1 new (visible from the next round), 0 already there, -1 error. */
int tl_logic_store_insert(tl_kb *kb, tl_logic_rel *r, const int64_t *t);
/* the error after a sparse insert failed: past the tuple limit, or out of memory */
void tl_logic_insert_failed(tl_kb *kb, const tl_logic_rel *r);
/* the most cells a dense box may have: the mode's bound, and never more than the
 * tuple limit (a relation that could pass it is kept sparse, where it is counted) */
int64_t tl_logic_dense_cap(const tl_kb *kb);
bool tl_logic_store_contains(const tl_logic_rel *r, const int64_t *t);
void tl_logic_store_round_begin(tl_logic_rel *r);
/* Ends a round: this round's tuples join the relation and become its delta (added to
 * `gained` when not NULL). Returns how many (a dense store: 1 when any), or -1 and an
 * error. */
int64_t tl_logic_store_round_end(tl_kb *kb, tl_logic_rel *r, tl_logic_tuples *gained);
/* Sets count, the relation's tuples (after rounds, which do not keep it). */
void tl_logic_store_recount(tl_logic_rel *r);
/* A dense store's box grows to cover [lo, hi] on every column (NULL: keep), with room
 * to spare when pad (so growing a value at a time is amortized), else exactly (the
 * bit join's alignment of two boxes: padded, each would outgrow the other every
 * round); it may turn sparse (auto mode) or fail (forced dense, too big). */
tl_status tl_logic_dense_cover(tl_kb *kb, tl_logic_rel *r, const int64_t *lo, const int64_t *hi, bool pad);
/* The cells of a box (the last column rounded up to words); INT64_MAX when it would
 * overflow. */
int64_t tl_logic_box_cells(int arity, const int64_t *size);
bool tl_logic_tuples_push(tl_logic_tuples *l, int arity, const int64_t *t);

/* Which tuples an iterator walks. */
typedef enum { TL_VER_FULL, TL_VER_DELTA, TL_VER_PASS } tl_logic_version;

/* Walks the tuples of one version of a relation whose `mask` columns equal key's and
 * whose columns same[c] >= 0 equal column same[c]. The tuple is copied out, so the
 * store may grow while a walk is under way (sparse: new tuples are not seen). */
typedef struct {
  const tl_logic_rel *rel;
  uint32_t mask;
  const int64_t *key;
  const int8_t *same;
  int kind;
  int64_t i, end;       /* sparse and list walks */
  int ix;               /* sparse: index walk, or the CSR index */
  const int64_t *list;  /* a tuple list */
  /* dense (cur last: tl_logic_iter_init clears everything before it) */
  const uint64_t *bits, *rowbits;
  const uint32_t *spans;
  int64_t row, row_end, word, wi, whi;
  uint64_t w;
  bool row_fixed;
  int64_t li;           /* dense delta: position in delta_list (-1: a walk over rows) */
  int64_t cur[TL_LOGIC_MAX_ARITY]; /* the current row's values */
} tl_logic_iter;
void tl_logic_iter_init(tl_logic_iter *it, const tl_logic_rel *r, tl_logic_version ver, uint32_t mask,
                        const int64_t *key, const int8_t *same);
bool tl_logic_iter_next(tl_logic_iter *it, int64_t *out);

/* eval.c -------------------------------------------------------------------------------- */
/* Brings relation rel (and what it depends on, and every stratum evaluated before) up
 * to date. */
tl_status tl_logic_eval(tl_kb *kb, int rel);
/* Integer arithmetic as rules see it: wraps in two's complement; false for a division
 * or remainder by zero (the literal fails). */
bool tl_logic_arith(int op, int64_t a, int64_t b, int64_t *out);
bool tl_logic_compare(int op, int64_t a, int64_t b);

/* query.c ------------------------------------------------------------------------------- */
tl_tensor *tl_logic_query(tl_kb *kb, int rel, int nargs, const tl_kb_term *args);
void tl_logic_cache_clear(tl_kb *kb);

#endif
