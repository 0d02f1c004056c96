/* build.h — tensor-graph builders that know shapes: views (movement), broadcasts,
 * reduces, matmul and the indexed ops. The API checks its arguments, then builds with
 * these; autograd's rules build gradients with them. Shapes are taken as valid; NULL
 * in gives NULL out, and NULL out means out of memory. */
#ifndef TL_GRAPH_BUILD_H
#define TL_GRAPH_BUILD_H

#include "graph/rewrite.h"

enum { TL_MOVE_RESHAPE, TL_MOVE_PERMUTE, TL_MOVE_EXPAND, TL_MOVE_SHRINK, TL_MOVE_PAD, TL_MOVE_FLIP };

/* VIEW(u) moved by kind: RESHAPE, EXPAND a: the shape; SHRINK a, b: begin, end; PAD a,
 * b: before, after; PERMUTE perm; FLIP flags (ndim: the result's rank for RESHAPE) */
tl_uop *tl_build_view(tl_graph *g, tl_uop *u, int kind, const int64_t *a, const int64_t *b, const int *perm,
                      const bool *flags, int ndim);
tl_uop *tl_build_broadcast_to(tl_graph *g, tl_uop *u, int ndim, const int64_t *shape);
tl_uop *tl_build_reduce(tl_graph *g, tl_uop *u, int op, uint64_t axes_mask);
/* numpy matmul: (..., M, K) x (..., K, N), 1-D operands as in numpy */
tl_uop *tl_build_matmul(tl_graph *g, tl_uop *a, tl_uop *b);
/* GATHER: rows of table [V, D] picked by the integer node idx [I...] -> [I..., D] */
tl_uop *tl_build_gather(tl_graph *g, tl_uop *table, tl_uop *idx);
/* SCATTER_ADD: values [I..., D] added into the rows idx [I...] of a zero [rows, D] */
tl_uop *tl_build_scatter_add(tl_graph *g, tl_uop *values, tl_uop *idx, int64_t rows);
/* CONV2D (uop.h): strides and paddings, each below TL_CONV_PARAM_LIMIT, in one word */
#define TL_CONV_PARAM_LIMIT 65536
typedef struct tl_conv_params {
  int64_t sh, sw, ph, pw;
} tl_conv_params;
int64_t tl_conv_params_pack(tl_conv_params p);
tl_conv_params tl_conv_params_unpack(int64_t word);
/* mode 0: y from (x, w); 1: dx from (g, w); 2: dw from (g, x); shape: the result's */
tl_uop *tl_build_conv2d(tl_graph *g, int mode, tl_uop *a, tl_uop *b, tl_conv_params p, const int64_t shape[4]);

#endif
