/* render_cstyle.h — the C-style text the renderers share: a kernel graph's scalar
 * expressions and the loop AST's statements (render_cstyle.c), in a dialect.
 * in: the blocks and nodes of a lowered kernel (codegen/lower.h); out: their text. */
#ifndef TL_CODEGEN_RENDER_CSTYLE_H
#define TL_CODEGEN_RENDER_CSTYLE_H

#include <stdbool.h>

#include "codegen/lower.h"
#include "core/strbuf.h"

/* the words a dialect spells its own way */
typedef struct tl_dialect {
  const char *i64;      /* a 64-bit integer literal's suffix: C "LL", OpenCL C "L" */
  const char *nan, *inf; /* a NaN and +infinity as expressions, cast to the type they meet */
  bool simd_pragmas;    /* reductions tell OpenMP they may be reordered (C for the cpu) */
  bool grid;            /* the parallel loop is the grid: the work-item's one iteration
                           (tl_gid, an index the kernel defines); else it runs [begin, end) */
} tl_dialect;

/* the C type of a dtype (tl_bool, tl_i32, tl_i64, float, double: the prelude's names) */
const char *tl_cstyle_ctype(int dtype);
/* a node as an operand (a literal, a loop index, an accumulator, a value's name) */
void tl_cstyle_operand(tl_strbuf *s, const tl_dialect *d, const tl_uop *u);
/* the expression defining a node */
void tl_cstyle_expression(tl_strbuf *s, const tl_dialect *d, const tl_uop *u);
/* a block's statements, indented `depth` levels; buffers are b0 (the output) .. bN,
 * random streams rkJ and rsJ */
void tl_cstyle_block(tl_strbuf *s, const tl_dialect *d, const tl_block *b, int depth);
/* one statement of a block (a loop with its body) */
void tl_cstyle_stmt(tl_strbuf *s, const tl_dialect *d, const tl_stmt *st, int depth);
/* what follows a loop's closing brace: a float max it updated becomes NaN if it saw one */
void tl_cstyle_loop_end(tl_strbuf *s, const tl_dialect *d, const tl_stmt *loop, int depth);

#endif
