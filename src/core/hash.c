#include "hash.h"

#include <stdlib.h>
#include <string.h>

/* ---- tl_ptrmap ---------------------------------------------------------------- */
static size_t ptr_slot(const void *p, size_t cap) { return (size_t)tl_hash_ptr(p) & (cap - 1); }

void *tl_ptrmap_get(const tl_ptrmap *m, const void *key) {
  if (!m->cap) return NULL;
  for (size_t i = ptr_slot(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (!m->keys[i]) return NULL;
    if (m->keys[i] == key) return m->vals[i];
  }
}

bool tl_ptrmap_put(tl_ptrmap *m, const void *key, void *val) {
  if ((m->count + 1) * 2 > m->cap) {
    tl_ptrmap bigger = {0};
    bigger.cap = m->cap ? m->cap * 2 : 64;
    bigger.keys = calloc(bigger.cap, sizeof *bigger.keys);
    bigger.vals = calloc(bigger.cap, sizeof *bigger.vals);
    if (!bigger.keys || !bigger.vals) {
      free(bigger.keys);
      free(bigger.vals);
      return false;
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) tl_ptrmap_put(&bigger, m->keys[i], m->vals[i]);
    tl_ptrmap_free(m);
    *m = bigger;
  }
  size_t i = ptr_slot(key, m->cap);
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) m->count++;
  m->keys[i] = key;
  m->vals[i] = val;
  return true;
}

void tl_ptrmap_free(tl_ptrmap *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

/* ---- tl_hset -------------------------------------------------------------------- */
static size_t home(uint64_t hash, size_t cap) { return (size_t)tl_hash_final(hash) & (cap - 1); }

tl_hset_walk tl_hset_find(const tl_hset *s, uint64_t hash) {
  return (tl_hset_walk){s->cap ? home(hash, s->cap) : 0, hash};
}

uint64_t tl_hset_next(const tl_hset *s, tl_hset_walk *w) {
  if (!s->cap) return 0;
  for (;; w->pos = (w->pos + 1) & (s->cap - 1)) {
    uint64_t it = s->item[w->pos];
    if (!it) return 0;
    if (s->hash[w->pos] == w->hash) {
      w->pos = (w->pos + 1) & (s->cap - 1);
      return it;
    }
  }
}

static void place(tl_hset *s, uint64_t hash, uint64_t item) {
  size_t i = home(hash, s->cap);
  while (s->item[i]) i = (i + 1) & (s->cap - 1);
  s->hash[i] = hash;
  s->item[i] = item;
}

bool tl_hset_add(tl_hset *s, uint64_t hash, uint64_t item) {
  if ((s->count + 1) * 2 > s->cap) {
    tl_hset bigger = {0};
    bigger.cap = s->cap ? s->cap * 2 : 32;
    bigger.hash = malloc(bigger.cap * sizeof *bigger.hash);
    bigger.item = calloc(bigger.cap, sizeof *bigger.item);
    if (!bigger.hash || !bigger.item) {
      free(bigger.hash);
      free(bigger.item);
      return false;
    }
    for (size_t i = 0; i < s->cap; i++)
      if (s->item[i]) place(&bigger, s->hash[i], s->item[i]);
    bigger.count = s->count;
    tl_hset_free(s);
    *s = bigger;
  }
  place(s, hash, item);
  s->count++;
  return true;
}

/* Linear probing without tombstones: the entries after a removed one that could sit in
 * its slot move back into it (each keeps its place reachable from its home slot). */
bool tl_hset_remove(tl_hset *s, uint64_t hash, uint64_t item) {
  if (!s->cap) return false;
  size_t m = s->cap - 1, i = home(hash, s->cap);
  while (s->item[i] != item) {
    if (!s->item[i]) return false;
    i = (i + 1) & m;
  }
  for (size_t j = (i + 1) & m; s->item[j]; j = (j + 1) & m) {
    size_t h = home(s->hash[j], s->cap);
    /* j's entry may fill the hole at i unless its home lies in (i, j] (cyclically) */
    if (((j - h) & m) >= ((j - i) & m)) {
      s->hash[i] = s->hash[j];
      s->item[i] = s->item[j];
      i = j;
    }
  }
  s->item[i] = 0;
  s->count--;
  return true;
}

void tl_hset_free(tl_hset *s) {
  free(s->hash);
  free(s->item);
  memset(s, 0, sizeof *s);
}
