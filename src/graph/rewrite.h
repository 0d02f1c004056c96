/* rewrite.h — the one rewrite engine and its rule sets.
 *
 * A rule looks at one node and returns a replacement or NULL. Rule sets are tables
 * of (op, rule); the engine applies them bottom-up over a graph until nothing
 * fires. Kernel graphs apply the index rules at construction (tl_rewrite_node), so
 * every index expression is born simplified.
 *
 * Rule sets:
 *   tl_rules_fold      constant folding (an elementwise op over constants)
 *   tl_rules_algebra   identities: x+0, x*1, --x, where(c, x, x), ...
 *   tl_rules_fallback  fused ops into primitives: sub, div, min, sigmoid, relu,
 *                      gelu, abs, comparisons, randn -> Box-Muller over uniform
 *   tl_rules_index     integer index arithmetic using proven bounds */
#ifndef TL_GRAPH_REWRITE_H
#define TL_GRAPH_REWRITE_H

#include "graph/uop.h"

typedef tl_uop *(*tl_rule_fn)(tl_graph *g, tl_uop *u);
typedef struct {
  int op; /* -1: any op */
  tl_rule_fn fn;
} tl_rule;
typedef struct {
  const char *name;
  const tl_rule *rules;
  int count;
} tl_ruleset;

extern const tl_ruleset tl_rules_fold, tl_rules_algebra, tl_rules_fallback, tl_rules_index,
    tl_rules_split;

/* tl_rules_split: a reduce of many elements to one value becomes two: partial results
 * over rows (a kernel of its own, so its rows are split across threads), then their
 * reduce. CONTIGUOUS marks a node the scheduler must give its own buffer. */

/* Rewrites the graph under root; NULL on out-of-memory. */
tl_uop *tl_rewrite_graph(tl_graph *g, tl_uop *root, const tl_ruleset *const *sets, int nsets);
/* Applies the rules at u alone (its sources are taken as already rewritten). */
tl_uop *tl_rewrite_node(tl_graph *g, tl_uop *u, const tl_ruleset *const *sets, int nsets);

/* Builders used by rules and the lowering. Tensor graphs: shape of a. */
tl_uop *tl_build_const(tl_graph *g, tl_dtype dtype, double value);
tl_uop *tl_build_const_like(tl_graph *g, const tl_uop *like, double value); /* same shape */
tl_uop *tl_build_unary(tl_graph *g, int op, tl_uop *a);
tl_uop *tl_build_binary(tl_graph *g, int op, tl_uop *a, tl_uop *b);
tl_uop *tl_build_where(tl_graph *g, tl_uop *c, tl_uop *a, tl_uop *b);
tl_uop *tl_build_cast(tl_graph *g, tl_uop *a, tl_dtype dtype);

/* The scalar semantics of the ops (tl_value_apply) are the op table's: graph/optab.h. */

#endif
