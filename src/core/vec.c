#include "vec.h"

#include <stdint.h>
#include <string.h>

bool tl_vec_grow(void *data_ptr, size_t *cap, size_t need, size_t esz) {
  if (need <= *cap) return true;
  if (esz == 0 || need > PTRDIFF_MAX / esz) return false;
  size_t n = *cap ? *cap : 8;
  while (n < need) n = n > PTRDIFF_MAX / esz / 2 ? need : 2 * n;
  /* the caller's pointer is a T *: read and written as bytes, whatever T is */
  void *old, *grown;
  memcpy(&old, data_ptr, sizeof old);
  if (!(grown = realloc(old, n * esz))) return false;
  memcpy(data_ptr, &grown, sizeof grown);
  *cap = n;
  return true;
}
