/* uop.h — the one IR of the engine: a hash-consed DAG of micro-ops.
 *
 * The same node type serves two graphs:
 *  - the tensor graph (refcounted, lives as long as tensors hold it): BUFFER, CONST,
 *    UNIFORM leaves; VIEW nodes carrying a shape tracker; elementwise, reduce and
 *    fused ops with a shape;
 *  - a kernel graph (arena-allocated, freed when a kernel is lowered): scalar
 *    expressions over loop variables (RANGE), loads and accumulators, with integer
 *    bounds used by the index simplifier.
 * Identical nodes are built once (hash-consing), so equality is pointer equality.
 *
 * Refcounted graphs keep every node a builder creates in a list of temporaries
 * (owned by the graph) until tl_graph_release_to(mark), so rewrite rules never have
 * to release anything; whoever keeps a node retains it before that. */
#ifndef TL_GRAPH_UOP_H
#define TL_GRAPH_UOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/buffer.h"
#include "core/dtype.h"
#include "core/vec.h"
#include "graph/optab.h"

/* The ops are the rows of the op table (graph/optab.def, read through optab.h).
 *
 * The indexed ops (src[0] the values, src[1] the indices, any integer dtype and shape
 * [I...]; an index outside [0, V) is clamped to the nearest row, never undefined):
 *   GATHER       src[0] a table [V, D]; out [I..., D] = table[idx[I...], :]
 *   SCATTER_ADD  src[0] values [I..., D]; out [V, D] = 0, out[idx[i], :] += values[i, :]
 *                (the adjoint of GATHER: its gradient w.r.t. the table)
 * CONV2D: a 2-D convolution over NCHW tensors or one of its gradients (arg2: the mode,
 *   arg.i: strides and paddings, tl_conv_params); both sources of one float dtype:
 *   mode 0: x [N, C, H, W], w [O, C, kh, kw] -> y [N, O, OH, OW], y = sum over c, ki, kj
 *           of w[o, c, ki, kj] x[n, c, oh*sh + ki - ph, ow*sw + kj - pw] (0 outside x);
 *   mode 1: g [N, O, OH, OW], w -> dx [N, C, H, W] (the adjoint of mode 0 in x);
 *   mode 2: g, x -> dw [O, C, kh, kw] (its adjoint in w).
 * SINK: several values of one dtype computed by one kernel into one buffer (see
 * tl_sink_layout). */

typedef union {
  int64_t i;
  double f;
  uint64_t u;
  void *p;
} tl_arg;

typedef struct tl_uop tl_uop;
struct tl_uop {
  uint16_t op;
  uint8_t dtype;
  uint8_t nsrc;
  int8_t ndim;
  uint32_t hash;
  int32_t refs;      /* refcounted graphs only */
  tl_uop *src[3];
  tl_arg arg;        /* CONST value, reduce axes mask, BUFFER tl_buffer*, VIEW tl_st*,
                        UNIFORM/RANDN seed, RANGE/ACC id, LOAD buffer slot */
  int64_t arg2;      /* UNIFORM/RANDN stream; RANGE extent */
  int64_t shape[TL_MAX_DIMS]; /* tensor graph only */
  int64_t vmin, vmax; /* kernel graph integer expressions: proven bounds */
  uint64_t id;       /* creation order, for deterministic output */
  uint32_t depth;    /* longest path to a leaf when built (a bound once parts realize) */
  void *aux;         /* kernel graphs: per-pass annotation (the lowering's block) */
  int32_t name;      /* kernel graphs: the rendered variable number, 0 = none */
  tl_uop *chain;     /* hash bucket chain */
};

typedef struct tl_graph {
  bool refcounted;
  tl_arena *arena;       /* kernel graphs */
  tl_uop **buckets;
  size_t nbuckets, count;
  tl_vec(tl_uop *) temps; /* refcounted: nodes built since the last release_to */
  uint64_t next_id;
  uint64_t live;         /* refcounted: nodes alive */
  bool oom;             /* a node could not be made (set by tl_uop_make, cleared by its reader) */
} tl_graph;

void tl_graph_init(tl_graph *g, bool refcounted);
void tl_graph_free(tl_graph *g); /* kernel graphs: frees every node at once */
size_t tl_graph_mark(const tl_graph *g);
void tl_graph_release_to(tl_graph *g, size_t mark);

/* The node with these fields, built once. Shape may be NULL when ndim == 0.
 * Refcounted graphs: the node is held by the temporaries list (see above). */
tl_uop *tl_uop_make(tl_graph *g, int op, tl_dtype dtype, int nsrc, tl_uop *const *src,
                    tl_arg arg, int64_t arg2, int ndim, const int64_t *shape);
void tl_uop_retain(tl_uop *u);
/* Holds an existing node among the temporaries, like a freshly built one: builders
 * that return a node they did not build use it, so callers may drop their handles. */
tl_uop *tl_graph_keep(tl_graph *g, tl_uop *u);
void tl_uop_release(tl_graph *g, tl_uop *u);
/* Turns a realized node into a BUFFER leaf in place: its sources are dropped, so the
 * graph behind it can be freed, and every holder of the node sees the buffer. */
void tl_uop_become_buffer(tl_graph *g, tl_uop *u, tl_buffer *buf);

/* RANDN (key, stream s) is Box-Muller over the UNIFORM streams s + STEP and s + 2 STEP
 * of the same key: far from the streams tl_rand numbers 0, 1, 2, ... */
#define TL_RANDN_STREAM_STEP ((int64_t)1 << 40)

int64_t tl_uop_numel(const tl_uop *u);

/* A SINK holds up to TL_SINK_MAX values of one dtype (its sources, or the sources of
 * SINKs among them, in order): one kernel computes them all, a loop nest per shape,
 * reading what they share once (an optimizer's parameters and their moments), into
 * one buffer where value i starts at element offset[i], a multiple of 64 bytes. The
 * SINK is that buffer: 1-D, of the total size. */
enum { TL_SINK_MAX = 48, TL_SINK_ALIGN_BYTES = 64 };
tl_uop *tl_sink_make(tl_graph *g, int n, tl_uop *const *values);
/* the values of a SINK and their offsets; returns their count */
int tl_sink_layout(const tl_uop *sink, const tl_uop **values, int64_t *offset);
bool tl_uop_is_const(const tl_uop *u, double *value); /* CONST, or VIEW of a CONST */
double tl_uop_const_value(const tl_uop *u);           /* of a CONST node */

#endif
