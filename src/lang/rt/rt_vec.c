/* rt_vec.c — Vec<T> and HashMap<K, V> at run time (see rt_vec.h): in: element sizes and
 * kinds from the generated code; out: growable arrays and insertion-ordered hash maps,
 * refcounted objects with copy-on-write, their element retains and releases, and the
 * run-time errors (index out of bounds) at the TL location. */
#include "lang/rt/rt_vec.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash_mix.h"

/* the most bytes one Vec or HashMap array may take, as a tensor's TL_MAX_NUMEL: a
 * count past it is an error (Rust's "capacity overflow"), never a wrapped size or an
 * allocation the machine cannot make */
#define VEC_MAX_BYTES ((int64_t)1 << 40)

/* n elements of size bytes for what (at line:col), or a run-time error saying why.
 * The run time's own realloc, not a tl_vec: a program's Vec and HashMap arrays are
 * sized exactly (with_capacity, clones, the sort's scratch) as well as doubled, their
 * counts are the program's int64_t (in the layout the generated loops read), and a
 * failure must say which of three things went wrong (a negative count, past 2^40
 * bytes, no memory, with the bytes asked) at the program's line, which a bool cannot. */
static void *xrealloc_n(tlrt *R, void *p, int64_t n, int64_t size, const char *what, int line, int col) {
  if (n < 0) tlrt_fail(R, line, col, "%s: %s %" PRId64 " is negative", what, strstr(what, "capacity") ? "capacity" : "length", n);
  if (size > 0 && n > VEC_MAX_BYTES / size)
    tlrt_fail(R, line, col, "%s: %" PRId64 " elements of %" PRId64 " bytes are more than a Vec or HashMap may hold, 2^40 bytes (1099511627776)",
              what, n, size);
  size_t bytes = (size_t)(n * size);
  void *q = realloc(p, bytes ? bytes : 1);
  if (!q) tlrt_fail(R, line, col, "%s: out of memory (asking for %zu bytes)", what, bytes);
  return q;
}

/* n elements of kind k at p: one more reference each (a copy) or one less (a drop) */
static void elems_retain(tlrt *R, int32_t k, void *p, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    if (k == TLRT_EK_OBJ) tlrt_retain(R, ((void **)p)[i]);
    else if (k == TLRT_EK_TENSOR) tlrt_tensor_retain(R, ((tl_tensor **)p)[i]);
  }
}

static void elems_release(tlrt *R, int32_t k, void *p, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    if (k == TLRT_EK_OBJ) tlrt_release(R, ((void **)p)[i]);
    else if (k == TLRT_EK_TENSOR) tlrt_tensor_release(R, ((tl_tensor **)p)[i]);
  }
}

/* ---- Vec ---- */

static void vec_drop(tlrt *R, tlrt_obj *o) {
  tlrt_vec *v = (tlrt_vec *)o;
  if (v->ekind != TLRT_EK_PLAIN) elems_release(R, v->ekind, v->data, v->len);
  free(v->data);
}

tlrt_vec *tlrt_vec_new(tlrt *R, int32_t esz, int32_t ekind, int64_t cap, const char *what, int line, int col) {
  void *data = cap ? xrealloc_n(R, NULL, cap, esz, what, line, col) : NULL; /* checked before the object exists */
  tlrt_vec *v = tlrt_obj_new(R, sizeof *v, vec_drop);
  v->esz = esz;
  v->ekind = ekind;
  v->data = data;
  v->cap = cap;
  return v;
}

void tlrt_vec_grow(tlrt *R, tlrt_vec *v, int64_t need, int line, int col) {
  if (need <= v->cap) return;
  int64_t cap = v->cap ? v->cap * 2 : 4;
  if (cap < need) cap = need;
  v->data = xrealloc_n(R, v->data, cap, v->esz, "a Vec growing", line, col);
  v->cap = cap;
}

tlrt_vec *tlrt_str_chars(tlrt *R, const tlrt_str *s, int line, int col) {
  tlrt_vec *v = tlrt_vec_new(R, sizeof(uint32_t), TLRT_EK_PLAIN, s->len, "chars", line, col); /* at most a char a byte */
  const unsigned char *p = (const unsigned char *)s->data;
  for (int64_t i = 0; i < s->len;) {
    int n = p[i] < 0x80 ? 1 : p[i] < 0xE0 ? 2 : p[i] < 0xF0 ? 3 : 4;
    uint32_t c = n == 1 ? p[i] : n == 2 ? p[i] & 0x1F : n == 3 ? p[i] & 0x0F : p[i] & 0x07;
    for (int k = 1; k < n && i + k < s->len; k++) c = (c << 6) | (p[i + k] & 0x3F);
    ((uint32_t *)v->data)[v->len++] = c;
    i += n;
  }
  return v;
}

tlrt_vec *tlrt_vec_unshare(tlrt *R, tlrt_vec *old, int line, int col) {
  tlrt_vec *v = tlrt_vec_new(R, old->esz, old->ekind, old->len, "a Vec copied before a write", line, col);
  if (old->len) memcpy(v->data, old->data, (size_t)old->len * (size_t)old->esz);
  v->len = old->len;
  elems_retain(R, v->ekind, v->data, v->len);
  R->stats.cow_clones++;
  tlrt_release(R, old);
  return v;
}

void tlrt_vec_oob(tlrt *R, int64_t len, int64_t i, int line, int col) {
  tlrt_fail(R, line, col, "index out of bounds: the len is %" PRId64 " but the index is %" PRId64, len, i);
}

void tlrt_vec_remove_at(tlrt *R, tlrt_vec *v, int64_t i, void *out, int line, int col) {
  if ((uint64_t)i >= (uint64_t)v->len)
    tlrt_fail(R, line, col, "removal index (is %" PRId64 ") should be < len (is %" PRId64 ")", i, v->len);
  char *p = (char *)v->data + (size_t)i * (size_t)v->esz;
  memcpy(out, p, (size_t)v->esz);
  memmove(p, p + v->esz, (size_t)(v->len - i - 1) * (size_t)v->esz);
  v->len--;
}

void *tlrt_vec_insert_at(tlrt *R, tlrt_vec *v, int64_t i, int line, int col) {
  if ((uint64_t)i > (uint64_t)v->len)
    tlrt_fail(R, line, col, "insertion index (is %" PRId64 ") should be <= len (is %" PRId64 ")", i, v->len);
  tlrt_vec_grow(R, v, v->len + 1, line, col);
  char *p = (char *)v->data + (size_t)i * (size_t)v->esz;
  memmove(p + v->esz, p, (size_t)(v->len - i) * (size_t)v->esz);
  v->len++;
  return p;
}

void tlrt_vec_clear(tlrt *R, tlrt_vec *v) {
  elems_release(R, v->ekind, v->data, v->len);
  v->len = 0;
}

void tlrt_vec_reverse(tlrt_vec *v) {
  char tmp[64];
  size_t n = (size_t)v->esz;
  for (int64_t i = 0, j = v->len - 1; i < j; i++, j--) {
    char *a = (char *)v->data + (size_t)i * n, *b = (char *)v->data + (size_t)j * n;
    memcpy(tmp, a, n);
    memcpy(a, b, n);
    memcpy(b, tmp, n);
  }
}

static int cmp_of(char c, const void *a, const void *b) {
  switch (c) {
  case 'i': { int64_t x = *(const int64_t *)a, y = *(const int64_t *)b; return (x > y) - (x < y); }
  case 'I': { int32_t x = *(const int32_t *)a, y = *(const int32_t *)b; return (x > y) - (x < y); }
  case 'f': { float x = *(const float *)a, y = *(const float *)b; return (x > y) - (x < y); }
  case 'd': { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
  case 'b': return (int)*(const bool *)a - (int)*(const bool *)b;
  case 'u': return (int)*(const uint8_t *)a - (int)*(const uint8_t *)b;
  case '1': return (int)*(const int8_t *)a - (int)*(const int8_t *)b;
  case '2': return (int)*(const int16_t *)a - (int)*(const int16_t *)b;
  case '3': return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
  case '4': { uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b; return (x > y) - (x < y); }
  case '5': { uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b; return (x > y) - (x < y); }
  case 'c': { uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b; return (x > y) - (x < y); }
  default: return tlrt_str_cmp(*(tlrt_str *const *)a, *(tlrt_str *const *)b);
  }
}

static int cmp_code(void *ctx, const void *a, const void *b) { return cmp_of(*(const char *)ctx, a, b); }

void tlrt_vec_sort(tlrt *R, tlrt_vec *v, char c) { tlrt_vec_sort_by(R, v, cmp_code, &c); }

/* a stable merge sort (Rust's sort is stable): elements are at most 8 bytes here */
void tlrt_vec_sort_by(tlrt *R, tlrt_vec *v, tlrt_cmp_fn cmp, void *ctx) {
  size_t n = (size_t)v->len, sz = (size_t)v->esz;
  if (n < 2) return;
  char *a = v->data, *tmp = xrealloc_n(R, NULL, (int64_t)n, (int64_t)sz, "sort", 0, 0);
  for (size_t w = 1; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        if (cmp(ctx, a + j * sz, a + i * sz) < 0) memcpy(tmp + k++ * sz, a + j++ * sz, sz);
        else memcpy(tmp + k++ * sz, a + i++ * sz, sz);
      }
      if (i < mid) memcpy(tmp + k * sz, a + i * sz, (mid - i) * sz), k += mid - i;
      if (j < hi) memcpy(tmp + k * sz, a + j * sz, (hi - j) * sz);
    }
    memcpy(a, tmp, n * sz);
  }
  free(tmp);
}

tl_tensor *tlrt_vec_to_tensor(tlrt *R, const tlrt_vec *v, tl_dtype dt, int line, int col) {
  int64_t shape[1] = {v->len};
  return tlrt_check(R, tl_from_data(R->ctx, dt, 1, shape, v->len ? v->data : (const void *)"\0\0\0\0\0\0\0"), line, col);
}

tlrt_vec *tlrt_tensor_to_vec(tlrt *R, tl_tensor *t, int line, int col) {
  tl_dtype dt = tl_get_dtype(t);
  int64_t n = tl_numel(t);
  size_t sz = tl_dtype_size(dt);
  const void *d = tl_data(t);
  if (!d) tlrt_check(R, NULL, line, col);
  tlrt_vec *v = tlrt_vec_new(R, (int32_t)sz, TLRT_EK_PLAIN, n, "to_vec", line, col);
  if (n) memcpy(v->data, d, (size_t)n * sz);
  v->len = n;
  return v;
}

/* ---- HashMap ---- */

static void map_drop(tlrt *R, tlrt_obj *o) {
  tlrt_map *m = (tlrt_map *)o;
  elems_release(R, m->kkind, m->keys, m->len);
  elems_release(R, m->vkind, m->vals, m->len);
  free(m->keys);
  free(m->vals);
  free(m->table);
}

tlrt_map *tlrt_map_new(tlrt *R, int32_t ksz, int32_t kkind, int32_t vsz, int32_t vkind, tlrt_hash_fn hash, tlrt_eq_fn eq) {
  tlrt_map *m = tlrt_obj_new(R, sizeof *m, map_drop);
  m->ksz = ksz;
  m->kkind = kkind;
  m->vsz = vsz;
  m->vkind = vkind;
  m->hash = hash;
  m->eq = eq;
  return m;
}

/* the table rebuilt for tcap slots (a power of two, at least twice the entries) */
static void map_rehash(tlrt *R, tlrt_map *m, int64_t tcap, int line, int col) {
  m->table = xrealloc_n(R, m->table, (int64_t)tcap, (int64_t)sizeof *m->table, "a HashMap growing", line, col);
  memset(m->table, 0, (size_t)tcap * sizeof *m->table);
  m->tcap = tcap;
  for (int64_t e = 0; e < m->len; e++) {
    uint64_t h = m->hash((char *)m->keys + (size_t)e * (size_t)m->ksz);
    size_t s = (size_t)(h & (uint64_t)(tcap - 1));
    while (m->table[s]) s = (s + 1) & (size_t)(tcap - 1);
    m->table[s] = e + 1;
  }
}

tlrt_map *tlrt_map_unshare(tlrt *R, tlrt_map *old, int line, int col) {
  tlrt_map *m = tlrt_map_new(R, old->ksz, old->kkind, old->vsz, old->vkind, old->hash, old->eq);
  const char *what = "a HashMap copied before a write";
  m->keys = xrealloc_n(R, NULL, old->len, old->ksz, what, line, col);
  m->vals = xrealloc_n(R, NULL, old->len, old->vsz, what, line, col);
  if (old->len) {
    memcpy(m->keys, old->keys, (size_t)old->len * (size_t)old->ksz);
    memcpy(m->vals, old->vals, (size_t)old->len * (size_t)old->vsz);
  }
  m->len = m->cap = old->len;
  elems_retain(R, m->kkind, m->keys, m->len);
  elems_retain(R, m->vkind, m->vals, m->len);
  if (old->tcap) map_rehash(R, m, old->tcap, line, col);
  R->stats.cow_clones++;
  tlrt_release(R, old);
  return m;
}

int64_t tlrt_map_find(const tlrt_map *m, const void *key) {
  if (!m->tcap) return -1;
  size_t s = (size_t)(m->hash(key) & (uint64_t)(m->tcap - 1));
  for (; m->table[s]; s = (s + 1) & (size_t)(m->tcap - 1)) {
    int64_t e = m->table[s] - 1;
    if (m->eq((char *)m->keys + (size_t)e * (size_t)m->ksz, key)) return e;
  }
  return -1;
}

int64_t tlrt_map_slot(tlrt *R, tlrt_map *m, const void *key, bool *found, int line, int col) {
  int64_t e = tlrt_map_find(m, key);
  *found = e >= 0;
  if (e >= 0) return e;
  if (m->len == m->cap) {
    int64_t cap = m->cap ? m->cap * 2 : 4; /* m->cap is set once both arrays have it */
    m->keys = xrealloc_n(R, m->keys, cap, m->ksz, "a HashMap growing", line, col);
    m->vals = xrealloc_n(R, m->vals, cap, m->vsz, "a HashMap growing", line, col);
    m->cap = cap;
  }
  e = m->len++;
  memcpy((char *)m->keys + (size_t)e * (size_t)m->ksz, key, (size_t)m->ksz);
  if (m->len * 2 > m->tcap) map_rehash(R, m, m->tcap ? m->tcap * 2 : 8, line, col);
  else {
    size_t s = (size_t)(m->hash(key) & (uint64_t)(m->tcap - 1));
    while (m->table[s]) s = (s + 1) & (size_t)(m->tcap - 1);
    m->table[s] = e + 1;
  }
  return e;
}

/* O(len): the later entries move down one place, keeping the insertion order, and the
 * table is rebuilt */
void tlrt_map_remove_at(tlrt *R, tlrt_map *m, int64_t i) {
  char *k = (char *)m->keys + (size_t)i * (size_t)m->ksz, *v = (char *)m->vals + (size_t)i * (size_t)m->vsz;
  memmove(k, k + m->ksz, (size_t)(m->len - i - 1) * (size_t)m->ksz);
  memmove(v, v + m->vsz, (size_t)(m->len - i - 1) * (size_t)m->vsz);
  m->len--;
  map_rehash(R, m, m->tcap, 0, 0); /* the same size as before: no new memory */
}

void tlrt_map_place_sorted(tlrt *R, tlrt_map *m, int64_t e, tlrt_kcmp_fn cmp) {
  size_t ks = (size_t)m->ksz, vs = (size_t)m->vsz;
  char *k = m->keys, *v = m->vals;
  int64_t lo = 0, hi = e; /* the first of 0..e-1 whose key is above entry e's */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (cmp(k + (size_t)mid * ks, k + (size_t)e * ks) > 0) hi = mid;
    else lo = mid + 1;
  }
  if (lo == e) return; /* the largest: already in place */
  char kb[64], vb[64]; /* an element is at most a few words (a pointer, a number) */
  if (ks > sizeof kb || vs > sizeof vb) return;
  memcpy(kb, k + (size_t)e * ks, ks);
  memcpy(vb, v + (size_t)e * vs, vs);
  memmove(k + (size_t)(lo + 1) * ks, k + (size_t)lo * ks, (size_t)(e - lo) * ks);
  memmove(v + (size_t)(lo + 1) * vs, v + (size_t)lo * vs, (size_t)(e - lo) * vs);
  memcpy(k + (size_t)lo * ks, kb, ks);
  memcpy(v + (size_t)lo * vs, vb, vs);
  map_rehash(R, m, m->tcap, 0, 0); /* the entry numbers moved: the same size, no new memory */
}

void tlrt_map_clear(tlrt *R, tlrt_map *m) {
  elems_release(R, m->kkind, m->keys, m->len);
  elems_release(R, m->vkind, m->vals, m->len);
  m->len = 0;
  if (m->table) memset(m->table, 0, (size_t)m->tcap * sizeof *m->table); /* every slot empty */
}

uint64_t tlrt_hash_bytes(const void *p, size_t n) { return tl_hash_final(tl_hash_bytes(TL_HASH_INIT, p, n)); }

uint64_t tlrt_hash_str(const tlrt_str *s) { return tlrt_hash_bytes(s->data, (size_t)s->len); }

void tlrt_vec_free_buffers(tlrt_obj *o) {
  if (o->drop == vec_drop) free(((tlrt_vec *)o)->data);
  else if (o->drop == map_drop) {
    tlrt_map *m = (tlrt_map *)o;
    free(m->keys);
    free(m->vals);
    free(m->table);
  }
}
