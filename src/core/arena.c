#include "arena.h"

#include <stdlib.h>
#include <string.h>

/* ---- arena ---------------------------------------------------------------- */
typedef struct arena_block {
  struct arena_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} arena_block;

struct tl_arena {
  arena_block *head;
  bool failed; /* an allocation returned NULL: see tl_arena_failed */
};

tl_arena *tl_arena_create(void) { return calloc(1, sizeof(tl_arena)); }

void *tl_arena_alloc(tl_arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  arena_block *b = a->head;
  if (!b || b->used + n > b->cap) {
    size_t cap = n > 65536 ? n : 65536;
    b = malloc(sizeof(arena_block) + cap);
    if (!b) {
      a->failed = true;
      return NULL;
    }
    b->next = a->head;
    b->used = 0;
    b->cap = cap;
    a->head = b;
  }
  void *p = b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

bool tl_arena_failed(const tl_arena *a) { return a && a->failed; }

void tl_arena_destroy(tl_arena *a) {
  if (!a) return;
  for (arena_block *b = a->head, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  free(a);
}
