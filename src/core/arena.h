/* arena.h — bump allocation, freed all at once: kernel graphs, the language's trees.
 * in: sizes; out: zeroed, 16-aligned blocks that live until tl_arena_destroy. */
#ifndef TL_CORE_ARENA_H
#define TL_CORE_ARENA_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tl_arena tl_arena;

tl_arena *tl_arena_create(void);
void *tl_arena_alloc(tl_arena *a, size_t n); /* zeroed, 16-aligned; NULL on OOM */
void tl_arena_destroy(tl_arena *a);
/* did any allocation of a fail? A phase that builds in an arena checks it once at the
 * end instead of after every allocation (a NULL it did not check leaves its result
 * incomplete, never used) */
bool tl_arena_failed(const tl_arena *a);

#endif
