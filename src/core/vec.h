/* vec.h — the library's one growable array.
 * in: elements pushed one at a time or room reserved; out: a contiguous array that
 * doubles as it grows. Growth is checked against overflow, and running out of memory
 * is an answer (false; the array is unchanged), never an exit: callers turn it into
 * their error.
 *
 *   tl_vec(tl_uop *) work = {0};
 *   if (!tl_vec_push(&work, u)) return oom(...);
 *   ... work.data[i], work.len ...
 *   tl_vec_free(&work);
 *
 * The macros evaluate the vector argument more than once: pass a plain lvalue. */
#ifndef TL_CORE_VEC_H
#define TL_CORE_VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

/* a vector of T: data[0, len) in use, room for cap */
#define tl_vec(T)    \
  struct {           \
    T *data;         \
    size_t len, cap; \
  }

/* The family's engine, also for an array whose length lives elsewhere (several arrays
 * sharing one capacity, tuples of `arity` values): makes *data_ptr, an array with room
 * for *cap elements of esz bytes, hold at least `need`. The capacity doubles from 8
 * until it does. False, with both unchanged, when need * esz overflows or memory runs
 * out. data_ptr is the address of the array's pointer (a T **). */
bool tl_vec_grow(void *data_ptr, size_t *cap, size_t need, size_t esz);

/* room for n elements in all; false on overflow or out of memory */
#define tl_vec_reserve(v, n) ((size_t)(n) <= (v)->cap || tl_vec_grow(&(v)->data, &(v)->cap, (size_t)(n), sizeof *(v)->data))
/* appends x; false (nothing appended) on out of memory */
#define tl_vec_push(v, x) (tl_vec_reserve((v), (v)->len + 1) && ((v)->data[(v)->len++] = (x), true))
/* frees the array; the vector is empty and may be used again */
#define tl_vec_free(v) (free((v)->data), (v)->data = NULL, (v)->len = (v)->cap = 0)

#endif
