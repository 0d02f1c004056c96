/* replay.h — realizes remembered by the structure of their graphs.
 * in: a tensor graph about to be realized; out: the compiled kernels and the argument
 * bindings recorded when a graph of the same structure was realized before, so that a
 * repeat (a training step, a small op in a loop) skips rewrite, schedule, lowering,
 * rendering and the compiler's source hash, and only binds and runs.
 *
 * Structure is what decides the kernels: ops, dtypes, shapes, views, constants, which
 * nodes are shared, and where the leaves are; not which buffer or which random stream
 * a leaf is, which are bound on every call. A key is hashed, and a hit compared word
 * by word. Bounded: at most TL_REPLAY_ENTRIES plans and TL_REPLAY_BYTES bytes, the
 * least recently used out first; graphs over TL_REPLAY_MAX_NODES nodes are not kept. */
#ifndef TL_RUNTIME_REPLAY_H
#define TL_RUNTIME_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "core/hash.h"
#include "core/vec.h"
#include "graph/uop.h"
#include "runtime/kernel.h"

enum { TL_REPLAY_MAX_NODES = 1024, TL_REPLAY_ENTRIES = 256 };
#define TL_REPLAY_BYTES ((size_t)16 << 20)

/* where a kernel argument comes from: leaf `from` of the key (from >= 0, a BUFFER), or
 * the output of kernel -1 - from; bound `skip` bytes into that buffer */
typedef struct tl_replay_arg {
  int32_t from;
  size_t skip;
} tl_replay_arg;

/* a random stream: leaf `leaf` (UNIFORM or RANDN) gives the key (arg) and the counter
 * word arg2 + delta (RANDN's two uniform streams lie TL_RANDN_STREAM_STEP apart) */
typedef struct tl_replay_stream {
  int32_t leaf;
  uint64_t delta;
} tl_replay_stream;

typedef struct tl_replay_kernel {
  tl_kernel k;           /* the compiled function and its argument checks */
  tl_replay_arg arg[TL_KERNEL_MAX_ARGS]; /* arg[0]: its own output */
  tl_replay_stream *streams; /* k.nwords / 2 of them */
  tl_dtype out_dtype;    /* its output: numel elements, at out_offset in the arena */
  int64_t out_numel;     /* unless it is the last kernel (the result) */
  size_t out_offset;
} tl_replay_kernel;

/* one recorded realize: kernels in order, the last one's output is the result */
typedef struct tl_replay {
  int nkernels;
  tl_replay_kernel *kernels;
  size_t arena_bytes, naive_bytes;
} tl_replay;

typedef struct tl_replay_entry tl_replay_entry;
typedef struct tl_replay_seen tl_replay_seen;

typedef struct tl_replay_cache {
  /* the key of the graph last given to tl_replay_key, and its leaves in key order */
  tl_vec(uint64_t) words;
  tl_vec(tl_uop *) leaves;
  int nnodes;
  uint64_t hash;
  bool valid;
  tl_replay_seen *seen; /* node -> its index in the key (this key's generation only) */
  uint32_t gen;
  /* the plans */
  tl_hset plans;         /* tl_replay_entry pointers under their key's hash */
  tl_replay_entry *newest, *oldest;
  int count;
  size_t bytes;
} tl_replay_cache;

/* Builds the key of the graph under u. False (and no key) when the graph is too big or
 * memory runs out: then the realize runs in full and nothing is recorded. */
bool tl_replay_key(tl_replay_cache *c, const tl_uop *u);
/* No current key (a realize that takes the full path without one): the leaves of an
 * earlier key may be gone. */
void tl_replay_forget(tl_replay_cache *c);
/* The plan recorded for the current key, or NULL. */
const tl_replay *tl_replay_find(tl_replay_cache *c);
/* The index of node u among the current key's leaves, or -1. */
int tl_replay_leaf(const tl_replay_cache *c, const tl_uop *u);
/* Where a (rewritten) UNIFORM node's stream comes from among the current key's leaves:
 * false unless exactly one leaf can give it. */
bool tl_replay_stream_of(const tl_replay_cache *c, const tl_uop *uniform, tl_replay_stream *out);
/* Keeps rp (malloc'd, with its arrays) as the current key's plan, evicting the least
 * recently used over the bounds; frees it when there is no key or no memory. */
void tl_replay_put(tl_replay_cache *c, tl_replay *rp);
void tl_replay_free(tl_replay *rp);
/* Drops every plan (their functions go with the compiler), keeps the scratch. */
void tl_replay_clear(tl_replay_cache *c);
/* Frees everything. */
void tl_replay_cache_free(tl_replay_cache *c);

#endif
