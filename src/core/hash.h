/* hash.h — the library's one hash mix (core/hash_mix.h), and the hash tables built on it.
 * in: words, bytes, pointers; out: 64-bit hashes, and two tables:
 *  - tl_ptrmap: a word or pointer -> a pointer (graph passes: node -> what they know);
 *  - tl_hset: a set of items whose keys live elsewhere (an index + 1 into an array of
 *    names, a pointer to an entry): the caller hashes its key, walks the items stored
 *    under that hash, and compares them itself.
 * Both are open addressing with linear probing at most half full, and report running
 * out of memory (false) instead of exiting.
 *
 * Hot tables that need their own layout keep it (the hash-consing chains of
 * graph/uop.c, the tuple indexes of logic/store.c, the generation-stamped table of
 * runtime/replay.c), but hash with these functions. */
#ifndef TL_CORE_HASH_H
#define TL_CORE_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/hash_mix.h"

/* ---- tl_ptrmap: key -> value, keys nonzero ------------------------------------- */
typedef struct {
  const void **keys;
  void **vals;
  size_t cap, count;
} tl_ptrmap;

void *tl_ptrmap_get(const tl_ptrmap *m, const void *key); /* NULL when absent */
bool tl_ptrmap_put(tl_ptrmap *m, const void *key, void *val); /* adds or replaces; false on OOM */
void tl_ptrmap_free(tl_ptrmap *m);

/* ---- tl_hset: nonzero items under caller-computed hashes ------------------------- */
typedef struct {
  uint64_t *hash; /* per slot: the item's hash */
  uint64_t *item; /* per slot: the item; 0 = empty */
  size_t cap, count;
} tl_hset;

/* a walk over the items stored under one hash */
typedef struct {
  size_t pos;
  uint64_t hash;
} tl_hset_walk;

/* Start a walk over the items added under `hash`; tl_hset_next gives them one by one
 * (in no particular order) and 0 at the end:
 *   for (tl_hset_walk w = tl_hset_find(&s, h); (it = tl_hset_next(&s, &w));)
 *     if (same_key(it)) return it; */
tl_hset_walk tl_hset_find(const tl_hset *s, uint64_t hash);
uint64_t tl_hset_next(const tl_hset *s, tl_hset_walk *w);
/* adds item (nonzero) under hash, without looking for an equal one; false on OOM */
bool tl_hset_add(tl_hset *s, uint64_t hash, uint64_t item);
/* removes item, stored under hash; false if it is not there */
bool tl_hset_remove(tl_hset *s, uint64_t hash, uint64_t item);
void tl_hset_free(tl_hset *s);

#endif
