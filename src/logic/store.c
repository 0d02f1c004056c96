/* store.c — relation stores: tuples in (inserted during semi-naive rounds), tuples out
 * (iterators over the full relation, the last round's delta or an update pass's new
 * tuples, selecting on known columns). Two representations with one interface:
 * sparse (tuples in insertion order + hash indexes on join columns) and dense (a bit
 * box over the columns' value ranges, rows of 64-bit words along the last column). Also rows
 * sorted and deduplicated (tl_logic_sort_unique), for CSR groups and query answers. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/vec.h"
#include "logic/logic.h"

static uint32_t all_mask(int arity) { return arity >= 32 ? UINT32_MAX : ((uint32_t)1 << arity) - 1; }

/* The tables take a slot from the high 32 bits: finalized, every bit of the key counts. */
uint64_t tl_logic_hash_key(int arity, uint32_t mask, const int64_t *t) {
  uint64_t h = tl_hash_mix(TL_HASH_INIT, mask);
  for (int c = 0; c < arity; c++)
    if (mask >> c & 1) h = tl_hash_mix(h, (uint64_t)t[c]);
  return tl_hash_final(h);
}

static bool key_eq(const int64_t *a, const int64_t *b, int arity, uint32_t mask) {
  for (int c = 0; c < arity; c++)
    if ((mask >> c & 1) && a[c] != b[c]) return false;
  return true;
}

/* ---- sorting rows --------------------------------------------------------------------- */

static int row_cmp(const int64_t *a, const int64_t *b, int k) {
  for (int c = 0; c < k; c++)
    if (a[c] != b[c]) return a[c] < b[c] ? -1 : 1;
  return 0;
}

/* Least significant digit radix sort: columns last to first, bytes of each column
 * (sign bit flipped) low to high, skipping the bytes every row shares. Rows move
 * whole, k values at a time. */
static bool radix_sort(int64_t *rows, int64_t n, int k) {
  int64_t *tmp = malloc((size_t)n * (size_t)k * sizeof *tmp);
  size_t *count = malloc(8 * 256 * sizeof *count);
  if (!tmp || !count) {
    free(tmp), free(count);
    return false;
  }
  int64_t *src = rows, *dst = tmp;
  for (int c = k - 1; c >= 0; c--) {
    memset(count, 0, 8 * 256 * sizeof *count);
    for (int64_t i = 0; i < n; i++) {
      uint64_t v = (uint64_t)src[i * k + c] ^ ((uint64_t)1 << 63);
      for (int b = 0; b < 8; b++) count[b * 256 + (v >> (8 * b) & 255)]++;
    }
    for (int b = 0; b < 8; b++) {
      size_t *cnt = count + b * 256;
      bool one = false;
      for (int d = 0; d < 256; d++)
        if (cnt[d] == (size_t)n) one = true;
      if (one) continue; /* every row has the same byte here */
      size_t sum = 0;
      for (int d = 0; d < 256; d++) {
        size_t x = cnt[d];
        cnt[d] = sum;
        sum += x;
      }
      for (int64_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)src[i * k + c] ^ ((uint64_t)1 << 63);
        memcpy(dst + (int64_t)cnt[v >> (8 * b) & 255]++ * k, src + i * k, (size_t)k * sizeof *src);
      }
      int64_t *t = src;
      src = dst, dst = t;
    }
  }
  if (src != rows) memcpy(rows, src, (size_t)n * (size_t)k * sizeof *rows);
  free(tmp);
  free(count);
  return true;
}

int64_t tl_logic_sort_unique(int64_t *rows, int64_t n, int k) {
  if (n <= 1 || k == 0) return n < 1 ? n : 1;
  bool sorted = true;
  for (int64_t i = 1; i < n && sorted; i++) sorted = row_cmp(rows + (i - 1) * k, rows + i * k, k) <= 0;
  if (!sorted && !radix_sort(rows, n, k)) return -1;
  int64_t m = 1;
  for (int64_t i = 1; i < n; i++)
    if (row_cmp(rows + (m - 1) * k, rows + i * k, k) != 0) {
      if (m != i) memcpy(rows + m * k, rows + i * k, (size_t)k * sizeof *rows);
      m++;
    }
  return m;
}

/* ---- sparse ------------------------------------------------------------------------ */

/* The indexes are tables of their own, not tl_hsets (they are the engine's hot loop):
 * a slot keeps 32 bits of hash beside the tuple number, so growing reads no tuple;
 * tuples with one key chain through `next`; inserts are prefetched in batches.
 * Hash slots are read at random: a big table gets huge pages where the kernel offers
 * them on request (a TLB miss per probe otherwise), and comes zeroed from mmap. */
enum { HUGE_TABLE = 2 << 20 };
static uint64_t *slots_alloc(int64_t n) {
  size_t bytes = (size_t)n * sizeof(uint64_t);
  if (bytes < HUGE_TABLE) return calloc((size_t)n, sizeof(uint64_t));
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}
static void slots_free(uint64_t *p, int64_t n) {
  size_t bytes = (size_t)n * sizeof(uint64_t);
  if (!p) return;
  if (bytes < HUGE_TABLE) free(p);
  else munmap(p, bytes);
}

static bool index_alloc(tl_logic_index *ix, uint32_t mask, int64_t nslots, int64_t tuple_cap, bool chains) {
  memset(ix, 0, sizeof *ix);
  ix->mask = mask;
  ix->nslots = nslots;
  ix->slots = slots_alloc(nslots);
  if (chains) ix->next = malloc((size_t)tuple_cap * sizeof *ix->next);
  return ix->slots && (!chains || ix->next);
}

/* Places tuple i (its hash h) in a table known to have room. */
static void index_place(tl_logic_index *ix, const tl_logic_sparse *s, int arity, int64_t i, uint64_t h) {
  uint64_t m = (uint64_t)ix->nslots - 1, h32 = h >> 32;
  for (uint64_t pos = h32 & m;; pos = (pos + 1) & m) {
    uint64_t e = ix->slots[pos];
    if (!e) {
      ix->slots[pos] = h32 << 32 | (uint64_t)(i + 1);
      ix->nkeys++;
      if (ix->next) ix->next[i] = 0;
      return;
    }
    if (e >> 32 == h32 && ix->next) {
      int64_t head = (int64_t)(e & 0xffffffffu) - 1;
      if (key_eq(s->tup + head * arity, s->tup + i * arity, arity, ix->mask)) {
        ix->next[i] = (uint32_t)(head + 1);
        ix->slots[pos] = h32 << 32 | (uint64_t)(i + 1);
        return;
      }
    }
  }
}

static bool index_grow(tl_logic_index *ix) {
  if ((ix->nkeys + 1) * 2 <= ix->nslots) return true;
  int64_t n = ix->nslots * 2;
  uint64_t *slots = slots_alloc(n), *old = ix->slots;
  if (!slots) return false;
  int64_t oldn = ix->nslots;
  ix->slots = slots;
  ix->nslots = n;
  uint64_t m = (uint64_t)n - 1;
  /* a slot's place comes from the hash bits it keeps: no tuple is read again */
  for (int64_t k = 0; k < oldn; k++) {
    if (!old[k]) continue;
    uint64_t pos = (old[k] >> 32) & m;
    while (slots[pos]) pos = (pos + 1) & m;
    slots[pos] = old[k];
  }
  slots_free(old, oldn);
  return true;
}

bool tl_logic_sparse_init(tl_logic_sparse *s, int arity, int64_t max) {
  memset(s, 0, sizeof *s);
  s->max = max;
  s->cap = 16;
  s->tup = malloc((size_t)s->cap * (size_t)(arity ? arity : 1) * sizeof *s->tup);
  s->idx = malloc(sizeof *s->idx);
  if (!s->tup || !s->idx) return false;
  s->cap_idx = 1;
  s->nidx = 1;
  return index_alloc(&s->idx[0], all_mask(arity), 16, 0, false);
}

void tl_logic_sparse_drop_csr(tl_logic_sparse *s) {
  for (int k = 0; k < s->ncsr; k++) {
    free(s->csr[k].rows);
    free(s->csr[k].start);
    free(s->csr[k].slots);
    free(s->csr[k].gstart);
  }
  free(s->csr);
  s->csr = NULL;
  s->ncsr = 0;
  s->cap_csr = 0;
}

void tl_logic_sparse_free(tl_logic_sparse *s) {
  tl_logic_sparse_drop_csr(s);
  for (int k = 0; k < s->nidx; k++) {
    slots_free(s->idx[k].slots, s->idx[k].nslots);
    free(s->idx[k].next);
  }
  free(s->idx);
  free(s->tup);
  memset(s, 0, sizeof *s);
}

/* The slot holding key's entry in index k, or the empty slot where it would go. */
static int64_t index_find(const tl_logic_sparse *s, int arity, int k, const int64_t *key, uint64_t h) {
  const tl_logic_index *ix = &s->idx[k];
  uint64_t m = (uint64_t)ix->nslots - 1, h32 = h >> 32;
  for (uint64_t pos = h32 & m;; pos = (pos + 1) & m) {
    uint64_t e = ix->slots[pos];
    if (!e) return (int64_t)pos;
    if (e >> 32 == h32) {
      int64_t head = (int64_t)(e & 0xffffffffu) - 1;
      if (key_eq(s->tup + head * arity, key, arity, ix->mask)) return (int64_t)pos;
    }
  }
}

bool tl_logic_sparse_contains(const tl_logic_sparse *s, int arity, const int64_t *t) {
  uint64_t h = tl_logic_hash_key(arity, s->idx[0].mask, t);
  return s->idx[0].slots[index_find(s, arity, 0, t, h)] != 0;
}

int64_t tl_logic_index_head(const tl_logic_sparse *s, int arity, int k, const int64_t *key) {
  uint64_t h = tl_logic_hash_key(arity, s->idx[k].mask, key);
  return (int64_t)(s->idx[k].slots[index_find(s, arity, k, key, h)] & 0xffffffffu);
}

void tl_logic_sparse_prefetch(const tl_logic_sparse *s, uint64_t h) {
  __builtin_prefetch(&s->idx[0].slots[(h >> 32) & (uint64_t)(s->idx[0].nslots - 1)]);
}

int tl_logic_sparse_insert(tl_logic_sparse *s, int arity, const int64_t *t) {
  return tl_logic_sparse_insert_hashed(s, arity, t, tl_logic_hash_key(arity, s->idx[0].mask, t));
}

int tl_logic_sparse_insert_hashed(tl_logic_sparse *s, int arity, const int64_t *t, uint64_t h) {
  if (s->idx[0].slots[index_find(s, arity, 0, t, h)]) return 0;
  if (s->ncsr) tl_logic_sparse_drop_csr(s);
  if (s->n >= s->max) return -1;
  if (s->n == s->cap) { /* tuples of `arity` values; the chains grow to the same capacity */
    size_t cap = (size_t)s->cap;
    if (!tl_vec_grow(&s->tup, &cap, cap + 1, (size_t)(arity ? arity : 1) * sizeof *s->tup)) return -1;
    for (int k = 0; k < s->nidx; k++) {
      size_t c = (size_t)s->cap;
      if (s->idx[k].next && !tl_vec_grow(&s->idx[k].next, &c, cap, sizeof *s->idx[k].next)) return -1;
    }
    s->cap = (int64_t)cap;
  }
  for (int k = 0; k < s->nidx; k++)
    if (!index_grow(&s->idx[k])) return -1;
  int64_t i = s->n;
  for (int c = 0; c < arity; c++) s->tup[i * arity + c] = t[c]; /* a call to memcpy costs more */
  index_place(&s->idx[0], s, arity, i, h);
  for (int k = 1; k < s->nidx; k++)
    index_place(&s->idx[k], s, arity, i, tl_logic_hash_key(arity, s->idx[k].mask, t));
  s->n++;
  return 1;
}

int tl_logic_sparse_index(tl_logic_sparse *s, int arity, uint32_t mask) {
  for (int k = 0; k < s->nidx; k++)
    if (s->idx[k].mask == mask) return k;
  if (!tl_vec_grow(&s->idx, &s->cap_idx, (size_t)s->nidx + 1, sizeof *s->idx)) return -1;
  int64_t nslots = 16;
  while (nslots < 2 * (s->n + 1)) nslots *= 2;
  tl_logic_index *ix = &s->idx[s->nidx];
  if (!index_alloc(ix, mask, nslots, s->cap, true)) {
    slots_free(ix->slots, ix->nslots);
    free(ix->next);
    return -1;
  }
  s->nidx++;
  for (int64_t i = 0; i < s->n; i++) index_place(ix, s, arity, i, tl_logic_hash_key(arity, mask, s->tup + i * arity));
  return s->nidx - 1;
}

/* the hash of a CSR key: its nkey values in column order */
static uint64_t csr_hash(const int64_t *v, int nkey) {
  uint64_t h = TL_HASH_INIT;
  for (int c = 0; c < nkey; c++) h = tl_hash_mix(h, (uint64_t)v[c]);
  return tl_hash_final(h);
}

static bool csr_build(tl_logic_csr *x, const tl_logic_sparse *s, int arity, uint32_t mask) {
  memset(x, 0, sizeof *x);
  x->mask = mask;
  for (int c = 0; c < arity; c++)
    if (mask >> c & 1) x->perm[x->nkey++] = (int8_t)c;
  for (int c = 0, k = x->nkey; c < arity; c++)
    if (!(mask >> c & 1)) x->perm[k++] = (int8_t)c;
  x->n = s->n;
  x->rows = malloc((size_t)(s->n ? s->n : 1) * (size_t)arity * sizeof *x->rows);
  if (!x->rows) return false;
  for (int64_t i = 0; i < s->n; i++)
    for (int c = 0; c < arity; c++) x->rows[i * arity + c] = s->tup[i * arity + x->perm[c]];
  /* distinct tuples: sorting loses none, and groups each key's rows */
  if (tl_logic_sort_unique(x->rows, s->n, arity) < 0) return false;
  int64_t n = s->n;
  if (x->nkey == 1 && n > 0) {
    int64_t lo = x->rows[0], hi = x->rows[(n - 1) * arity], range;
    if (!__builtin_sub_overflow(hi, lo, &range) && range < 4 * n + 1024) {
      x->base = lo;
      x->range = range + 1;
      x->start = malloc((size_t)(x->range + 1) * sizeof *x->start);
      if (!x->start) return false;
      int64_t i = 0;
      for (int64_t k = 0; k <= x->range; k++) {
        while (i < n && x->rows[i * arity] - lo < k) i++;
        x->start[k] = i;
      }
      return true;
    }
  }
  int64_t ngroups = 0;
  for (int64_t i = 0; i < n; i++)
    if (i == 0 || memcmp(x->rows + i * arity, x->rows + (i - 1) * arity, (size_t)x->nkey * 8)) ngroups++;
  x->gstart = malloc((size_t)(ngroups + 1) * sizeof *x->gstart);
  x->nslots = 16;
  while (x->nslots < 2 * ngroups + 2) x->nslots *= 2;
  x->slots = calloc((size_t)x->nslots, sizeof *x->slots);
  if (!x->gstart || !x->slots) return false;
  uint64_t m = (uint64_t)x->nslots - 1;
  for (int64_t i = 0, g = 0; i < n; i++) {
    if (i && !memcmp(x->rows + i * arity, x->rows + (i - 1) * arity, (size_t)x->nkey * 8)) continue;
    x->gstart[g] = i;
    uint64_t h = csr_hash(x->rows + i * arity, x->nkey), pos = (h >> 32) & m;
    while (x->slots[pos]) pos = (pos + 1) & m;
    x->slots[pos] = (h >> 32) << 32 | (uint64_t)(++g);
  }
  x->gstart[ngroups] = n;
  return true;
}

bool tl_logic_sparse_csr(tl_logic_sparse *s, int arity, uint32_t mask) {
  for (int k = 0; k < s->ncsr; k++)
    if (s->csr[k].mask == mask) return true;
  if (!tl_vec_grow(&s->csr, &s->cap_csr, (size_t)s->ncsr + 1, sizeof *s->csr)) return false;
  if (!csr_build(&s->csr[s->ncsr], s, arity, mask)) {
    tl_logic_csr *x = &s->csr[s->ncsr];
    free(x->rows), free(x->start), free(x->slots), free(x->gstart);
    return false;
  }
  s->ncsr++;
  return true;
}

const tl_logic_csr *tl_logic_sparse_csr_get(const tl_logic_sparse *s, uint32_t mask) {
  for (int k = 0; k < s->ncsr; k++)
    if (s->csr[k].mask == mask) return &s->csr[k];
  return NULL;
}

void tl_logic_csr_find(const tl_logic_csr *x, int arity, const int64_t *key, int64_t *b, int64_t *e) {
  *b = *e = 0;
  if (x->start) {
    uint64_t k = (uint64_t)key[x->perm[0]] - (uint64_t)x->base;
    if (k < (uint64_t)x->range) *b = x->start[k], *e = x->start[k + 1];
    return;
  }
  int64_t v[TL_LOGIC_MAX_ARITY];
  for (int c = 0; c < x->nkey; c++) v[c] = key[x->perm[c]];
  uint64_t h = csr_hash(v, x->nkey), m = (uint64_t)x->nslots - 1, h32 = h >> 32;
  for (uint64_t pos = h32 & m; x->slots[pos]; pos = (pos + 1) & m) {
    if (x->slots[pos] >> 32 != h32) continue;
    int64_t g = (int64_t)(x->slots[pos] & 0xffffffffu) - 1;
    if (memcmp(x->rows + x->gstart[g] * arity, v, (size_t)x->nkey * 8) == 0) {
      *b = x->gstart[g], *e = x->gstart[g + 1];
      return;
    }
  }
}

bool tl_logic_tuples_push(tl_logic_tuples *l, int arity, const int64_t *t) {
  if (l->n == l->cap) {
    size_t cap = (size_t)l->cap;
    if (!tl_vec_grow(&l->tup, &cap, cap + 1, (size_t)(arity ? arity : 1) * sizeof *l->tup)) return false;
    l->cap = (int64_t)cap;
  }
  memcpy(l->tup + l->n * arity, t, (size_t)arity * sizeof *t);
  l->n++;
  return true;
}

/* ---- dense --------------------------------------------------------------------------- */

int64_t tl_logic_box_cells(int arity, const int64_t *size) {
  if (arity == 0) return 64;
  if (size[arity - 1] > INT64_MAX - 63) return INT64_MAX; /* a column spanning nearly all of int64 */
  int64_t cells = (size[arity - 1] + 63) / 64 * 64;
  for (int c = 0; c < arity - 1; c++)
    if (__builtin_mul_overflow(cells, size[c], &cells)) return INT64_MAX;
  return cells;
}

static void dense_free(tl_logic_dense *d) {
  free(d->full), free(d->delta), free(d->next);
  free(d->full_rows), free(d->delta_rows), free(d->next_rows);
  free(d->fspan), free(d->dspan), free(d->nspan);
  free(d->delta_list), free(d->next_list), free(d->overflow);
  memset(d, 0, sizeof *d);
}

/* Empty arrays for the box lo/size (sizes >= 1, cells checked by the caller). */
static bool dense_alloc(tl_logic_dense *d, int arity, const int64_t *lo, const int64_t *size) {
  memset(d, 0, sizeof *d);
  d->rows = 1;
  for (int c = 0; c < arity; c++) {
    d->lo[c] = lo[c];
    d->size[c] = size[c];
    if (c < arity - 1) d->rows *= size[c];
  }
  d->words = arity ? (size[arity - 1] + 63) / 64 : 1;
  size_t cells = (size_t)(d->rows * d->words), rw = (size_t)((d->rows + 63) / 64);
  d->full = calloc(cells, 8), d->delta = calloc(cells, 8), d->next = calloc(cells, 8);
  d->full_rows = calloc(rw, 8), d->delta_rows = calloc(rw, 8), d->next_rows = calloc(rw, 8);
  size_t spans = 2 * (size_t)d->rows;
  d->fspan = calloc(spans, 4), d->dspan = calloc(spans, 4), d->nspan = calloc(spans, 4);
  return d->full && d->delta && d->next && d->full_rows && d->delta_rows && d->next_rows && d->fspan && d->dspan &&
         d->nspan;
}

/* Row and bit of tuple t in the box; false when outside it. */
static bool dense_pos(const tl_logic_dense *d, int arity, const int64_t *t, int64_t *row, int64_t *bit) {
  int64_t r = 0;
  *bit = 0;
  for (int c = 0; c < arity; c++) {
    uint64_t off = (uint64_t)t[c] - (uint64_t)d->lo[c];
    if (off >= (uint64_t)d->size[c]) return false;
    if (c < arity - 1) r = r * d->size[c] + (int64_t)off;
    else *bit = (int64_t)off;
  }
  if (arity == 0) *bit = 0;
  *row = r;
  return true;
}

/* The values of a row's columns (all but the last). */
static void dense_decode(const tl_logic_dense *d, int arity, int64_t row, int64_t *t) {
  for (int c = arity - 2; c >= 0; c--) {
    t[c] = d->lo[c] + row % d->size[c];
    row /= d->size[c];
  }
}

static bool list_push(int64_t **list, int64_t *n, size_t *cap, int64_t v) {
  if ((size_t)*n == *cap && !tl_vec_grow(list, cap, (size_t)*n + 1, sizeof **list)) return false;
  (*list)[(*n)++] = v;
  return true;
}

static bool bit_get(const uint64_t *w, int64_t i) { return w[i >> 6] >> (i & 63) & 1; }
static void bit_set(uint64_t *w, int64_t i) { w[i >> 6] |= (uint64_t)1 << (i & 63); }

/* Sets tuple t (inside the box) in full, delta or next, keeping the row marks. */
enum { DN_FULL, DN_DELTA, DN_NEXT };
static bool dense_set(tl_logic_dense *d, int arity, int which, const int64_t *t) {
  int64_t row, bit;
  dense_pos(d, arity, t, &row, &bit);
  uint64_t *bits = which == DN_FULL ? d->full : which == DN_DELTA ? d->delta : d->next;
  uint64_t *rows = which == DN_FULL ? d->full_rows : which == DN_DELTA ? d->delta_rows : d->next_rows;
  bit_set(bits + row * d->words, bit);
  tl_logic_span_add(which == DN_FULL ? d->fspan : which == DN_DELTA ? d->dspan : d->nspan, row, (uint32_t)(bit >> 6),
                    (uint32_t)(bit >> 6) + 1);
  if (bit_get(rows, row)) return true;
  bit_set(rows, row);
  if (which == DN_DELTA) return list_push(&d->delta_list, &d->ndelta, &d->cap_delta, row);
  if (which == DN_NEXT) return list_push(&d->next_list, &d->nnext, &d->cap_next, row);
  return true;
}

/* Calls back for every tuple set in a row of one array. */
typedef bool (*tl_logic_row_fn)(void *arg, const int64_t *t);
static bool dense_row_each(const tl_logic_dense *d, int arity, const uint64_t *bits, int64_t row,
                           tl_logic_row_fn fn, void *arg) {
  int64_t t[TL_LOGIC_MAX_ARITY];
  dense_decode(d, arity, row, t);
  const uint64_t *w = bits + row * d->words;
  for (int64_t k = 0; k < d->words; k++)
    for (uint64_t x = w[k]; x; x &= x - 1) {
      if (arity) t[arity - 1] = d->lo[arity - 1] + k * 64 + __builtin_ctzll(x);
      if (!fn(arg, t)) return false;
    }
  return true;
}

typedef struct {
  tl_logic_dense *to;
  tl_logic_sparse *sp;
  const tl_logic_dense *from;
  int arity, which;
  bool skip_delta;
  tl_logic_tuples *gained;
} move_arg;

static bool move_dense(void *p, const int64_t *t) {
  move_arg *a = p;
  return dense_set(a->to, a->arity, a->which, t);
}

static bool move_sparse(void *p, const int64_t *t) {
  move_arg *a = p;
  if (a->skip_delta) {
    int64_t row, bit;
    dense_pos(a->from, a->arity, t, &row, &bit);
    if (bit_get(a->from->delta + row * a->from->words, bit)) return true;
  }
  return tl_logic_sparse_insert(a->sp, a->arity, t) >= 0;
}

static bool push_gained(void *p, const int64_t *t) {
  move_arg *a = p;
  return tl_logic_tuples_push(a->gained, a->arity, t);
}

/* Every row of an array with a mark, in order. */
static bool dense_each(const tl_logic_dense *d, int arity, int which, tl_logic_row_fn fn, void *arg) {
  if (which == DN_DELTA) {
    for (int64_t k = 0; k < d->ndelta; k++)
      if (!dense_row_each(d, arity, d->delta, d->delta_list[k], fn, arg)) return false;
    return true;
  }
  if (which == DN_NEXT) {
    for (int64_t k = 0; k < d->nnext; k++)
      if (!dense_row_each(d, arity, d->next, d->next_list[k], fn, arg)) return false;
    return true;
  }
  for (int64_t row = 0; row < d->rows; row++)
    if (bit_get(d->full_rows, row) && !dense_row_each(d, arity, d->full, row, fn, arg)) return false;
  return true;
}

/* a sparse store of r that could not take a tuple: full (max tuples), or no memory */
static tl_status insert_failed(tl_kb *kb, const tl_logic_rel *r, const tl_logic_sparse *sp) {
  if (sp->n < sp->max) return tl_logic_fail(kb, TL_ERR_NOMEM, "relation %s: out of memory", r->name);
  kb->full_rel = (int)(r - kb->rels);
  return tl_logic_fail(kb, TL_ERR_RANGE, "relation %s: more than %lld tuples%s", r->name, (long long)sp->max,
                       sp->max < TL_LOGIC_MAX_TUPLES ? " (the limit tl_kb_set_max_tuples set)"
                                                     : ", the most a relation may hold");
}

/* Dense to sparse, keeping the round's state: the old tuples, then the delta (which
 * full includes), are what the round reads; next and overflow follow as this round's. */
static tl_status dense_to_sparse(tl_kb *kb, tl_logic_rel *r) {
  tl_logic_dense *d = &r->dn;
  tl_logic_sparse sp;
  if (!tl_logic_sparse_init(&sp, r->arity, kb->max_tuples)) {
    tl_logic_sparse_free(&sp);
    return tl_logic_fail(kb, TL_ERR_NOMEM, "relation %s: out of memory", r->name);
  }
  move_arg a = {NULL, &sp, d, r->arity, 0, true, NULL};
  bool ok = dense_each(d, r->arity, DN_FULL, move_sparse, &a);
  sp.d_begin = sp.n;
  a.skip_delta = false;
  ok = ok && dense_each(d, r->arity, DN_DELTA, move_sparse, &a);
  sp.d_end = sp.limit = sp.n;
  ok = ok && dense_each(d, r->arity, DN_NEXT, move_sparse, &a);
  for (int64_t k = 0; ok && k < d->noverflow; k++)
    ok = tl_logic_sparse_insert(&sp, r->arity, d->overflow + k * r->arity) >= 0;
  if (!ok) { /* the box and the values outside it can be more than max tuples */
    tl_status st = insert_failed(kb, r, &sp);
    tl_logic_sparse_free(&sp);
    return st;
  }
  dense_free(d);
  r->sp = sp;
  r->repr = TL_REPR_SPARSE;
  return TL_OK;
}

tl_status tl_logic_dense_cover(tl_kb *kb, tl_logic_rel *r, const int64_t *lo, const int64_t *hi, bool pad) {
  tl_logic_dense *d = &r->dn;
  int arity = r->arity;
  int64_t nlo[TL_LOGIC_MAX_ARITY] = {0}, nsize[TL_LOGIC_MAX_ARITY] = {0};
  int64_t xlo[TL_LOGIC_MAX_ARITY] = {0}, xsize[TL_LOGIC_MAX_ARITY] = {0};
  bool change = false, overflow = false;
  for (int c = 0; c < arity; c++) {
    /* in __int128 so no box near the ends of int64 can overflow the sums */
    __int128 olo = d->lo[c], ohi = (__int128)d->lo[c] + d->size[c] - 1, a = olo, b = ohi;
    if (lo && lo[c] < a) a = lo[c];
    if (hi && hi[c] > b) b = hi[c];
    xlo[c] = (int64_t)a;
    if (b - a + 1 > INT64_MAX) overflow = true;
    else xsize[c] = (int64_t)(b - a + 1);
    if (a == olo && b == ohi) {
      nlo[c] = xlo[c], nsize[c] = xsize[c];
      continue;
    }
    change = true;
    /* grow by half again in the directions it grew, so growing one value at a time
     * costs amortized constant work per value */
    __int128 room = pad ? (b - a + 1) / 2 : 0, pa = a < olo ? a - room : a, pb = b > ohi ? b + room : b;
    if (pa < INT64_MIN) pa = INT64_MIN;
    if (pb > INT64_MAX) pb = INT64_MAX;
    if (pb - pa + 1 > INT64_MAX) pb = pa + INT64_MAX - 1;
    nlo[c] = (int64_t)pa;
    nsize[c] = (int64_t)(pb - pa + 1);
  }
  if (!change) return TL_OK;
  int64_t cap = tl_logic_dense_cap(kb);
  int64_t cells = overflow ? INT64_MAX : tl_logic_box_cells(arity, nsize);
  /* near the cap, half the padding, and half again, rather than none: a box grown to
   * its values alone near the cap was copied once per new value (`n(x + 1) :- n(x).`
   * ran for hours before reaching the limit); halving keeps the copies logarithmic */
  for (bool padded = true; !overflow && cells > cap && padded;) {
    padded = false;
    for (int c = 0; c < arity; c++) {
      int64_t below = xlo[c] - nlo[c], above = nsize[c] - xsize[c] - below;
      padded = padded || below > 0 || above > 0;
      nlo[c] = xlo[c] - below / 2;
      nsize[c] = xsize[c] + below / 2 + above / 2;
    }
    cells = tl_logic_box_cells(arity, nsize);
  }
  const int64_t *ulo = nlo, *usize = nsize;
  if (cells > cap) {
    cells = overflow ? INT64_MAX : tl_logic_box_cells(arity, xsize);
    ulo = xlo, usize = xsize;
  }
  if (cells > cap) {
    if (kb->repr_mode == TL_KB_DENSE)
      return tl_logic_fail(kb, TL_ERR_RANGE,
                           "relation %s is forced dense but its values need a box of more than %lld cells",
                           r->name, (long long)cap);
    return dense_to_sparse(kb, r);
  }
  tl_logic_dense nd;
  bool ok = dense_alloc(&nd, arity, ulo, usize);
  kb->stats.box_regrows++;
  move_arg a = {&nd, NULL, d, arity, DN_FULL, false, NULL};
  ok = ok && dense_each(d, arity, DN_FULL, move_dense, &a);
  a.which = DN_DELTA;
  ok = ok && dense_each(d, arity, DN_DELTA, move_dense, &a);
  a.which = DN_NEXT;
  ok = ok && dense_each(d, arity, DN_NEXT, move_dense, &a);
  if (!ok) {
    dense_free(&nd);
    return tl_logic_fail(kb, TL_ERR_NOMEM, "relation %s: out of memory growing its box", r->name);
  }
  nd.overflow = d->overflow, nd.noverflow = d->noverflow, nd.cap_overflow = d->cap_overflow;
  d->overflow = NULL;
  dense_free(d);
  *d = nd;
  return TL_OK;
}

/* ---- the store interface ----------------------------------------------------------------- */

void tl_logic_store_free(tl_logic_rel *r) {
  if (r->repr == TL_REPR_SPARSE) tl_logic_sparse_free(&r->sp);
  if (r->repr == TL_REPR_DENSE) dense_free(&r->dn);
  r->repr = TL_REPR_NONE;
  r->count = 0;
}

tl_status tl_logic_store_init(tl_kb *kb, tl_logic_rel *r, tl_logic_repr repr, const int64_t *lo,
                              const int64_t *size) {
  tl_logic_store_free(r);
  bool ok = repr == TL_REPR_SPARSE ? tl_logic_sparse_init(&r->sp, r->arity, kb->max_tuples)
                                   : dense_alloc(&r->dn, r->arity, lo, size);
  r->repr = repr;
  if (!ok) {
    tl_logic_store_free(r);
    return tl_logic_fail(kb, TL_ERR_NOMEM, "relation %s: out of memory", r->name);
  }
  return TL_OK;
}

int64_t tl_logic_dense_cap(const tl_kb *kb) {
  int64_t cap = kb->repr_mode == TL_KB_DENSE ? TL_LOGIC_DENSE_MAX_CELLS : TL_LOGIC_DENSE_AUTO_CELLS;
  return cap < kb->max_tuples ? cap : kb->max_tuples;
}

void tl_logic_insert_failed(tl_kb *kb, const tl_logic_rel *r) {
  insert_failed(kb, r, &r->sp);
}

int tl_logic_store_insert(tl_kb *kb, tl_logic_rel *r, const int64_t *t) {
  if (r->repr == TL_REPR_SPARSE) {
    int st = tl_logic_sparse_insert(&r->sp, r->arity, t);
    if (st < 0) tl_logic_insert_failed(kb, r);
    return st;
  }
  tl_logic_dense *d = &r->dn;
  int64_t row, bit;
  if (!dense_pos(d, r->arity, t, &row, &bit)) {
    if ((size_t)d->noverflow == d->cap_overflow &&
        !tl_vec_grow(&d->overflow, &d->cap_overflow, (size_t)d->noverflow + 1, (size_t)(r->arity ? r->arity : 1) * sizeof *d->overflow))
      return tl_logic_fail(kb, TL_ERR_NOMEM, "relation %s: out of memory", r->name), -1;
    memcpy(d->overflow + d->noverflow++ * r->arity, t, (size_t)r->arity * sizeof *t);
    return 1;
  }
  int64_t w = row * d->words + (bit >> 6);
  uint64_t m = (uint64_t)1 << (bit & 63);
  if ((d->full[w] | d->next[w]) & m) return 0;
  d->next[w] |= m;
  tl_logic_span_add(d->nspan, row, (uint32_t)(bit >> 6), (uint32_t)(bit >> 6) + 1);
  if (!bit_get(d->next_rows, row)) {
    bit_set(d->next_rows, row);
    if (!list_push(&d->next_list, &d->nnext, &d->cap_next, row))
      return tl_logic_fail(kb, TL_ERR_NOMEM, "relation %s: out of memory", r->name), -1;
  }
  return 1;
}

bool tl_logic_store_contains(const tl_logic_rel *r, const int64_t *t) {
  if (r->repr == TL_REPR_SPARSE) return tl_logic_sparse_contains(&r->sp, r->arity, t);
  if (r->repr != TL_REPR_DENSE) return false;
  int64_t row, bit;
  return dense_pos(&r->dn, r->arity, t, &row, &bit) && bit_get(r->dn.full + row * r->dn.words, bit);
}

void tl_logic_store_round_begin(tl_logic_rel *r) {
  if (r->repr == TL_REPR_SPARSE) r->sp.limit = r->sp.n;
}

static int64_t sparse_round_end(tl_kb *kb, tl_logic_rel *r, tl_logic_tuples *gained) {
  tl_logic_sparse *s = &r->sp;
  int64_t added = s->n - s->limit;
  s->d_begin = s->limit;
  s->d_end = s->limit = s->n;
  r->count = s->n;
  for (int64_t i = s->d_begin; gained && i < s->d_end; i++)
    if (!tl_logic_tuples_push(gained, r->arity, s->tup + i * r->arity))
      return tl_logic_fail(kb, TL_ERR_NOMEM, "relation %s: out of memory", r->name), -1;
  return added;
}

int64_t tl_logic_store_round_end(tl_kb *kb, tl_logic_rel *r, tl_logic_tuples *gained) {
  if (r->repr == TL_REPR_SPARSE) return sparse_round_end(kb, r, gained);
  tl_logic_dense *d = &r->dn;
  int arity = r->arity;
  for (int64_t k = 0; k < d->ndelta; k++) {
    int64_t row = d->delta_list[k];
    uint32_t *ds = d->dspan + 2 * row;
    if (ds[1] > ds[0]) memset(d->delta + row * d->words + ds[0], 0, (size_t)(ds[1] - ds[0]) * 8);
    ds[0] = ds[1] = 0;
    d->delta_rows[row >> 6] &= ~((uint64_t)1 << (row & 63));
  }
  d->ndelta = 0;
  /* a row in next has a new bit: a count is not needed here (popcounts per word per
   * round would cost more than the join), only whether anything is new */
  int64_t added = d->nnext > 0;
  move_arg a = {NULL, NULL, d, arity, 0, false, gained};
  for (int64_t k = 0; k < d->nnext; k++) {
    int64_t row = d->next_list[k];
    uint64_t *nx = d->next + row * d->words, *fu = d->full + row * d->words, *de = d->delta + row * d->words;
    uint32_t *ns = d->nspan + 2 * row, lo = ns[0], hi = ns[1];
    for (uint32_t w = lo; w < hi; w++) {
      fu[w] |= nx[w];
      de[w] = nx[w];
    }
    if (gained && !dense_row_each(d, arity, d->next, row, push_gained, &a))
      return tl_logic_fail(kb, TL_ERR_NOMEM, "relation %s: out of memory", r->name), -1;
    if (hi > lo) memset(nx + lo, 0, (size_t)(hi - lo) * 8);
    tl_logic_span_add(d->fspan, row, lo, hi);
    d->dspan[2 * row] = lo, d->dspan[2 * row + 1] = hi;
    ns[0] = ns[1] = 0;
    d->next_rows[row >> 6] &= ~((uint64_t)1 << (row & 63));
    bit_set(d->full_rows, row);
    bit_set(d->delta_rows, row);
    if (!list_push(&d->delta_list, &d->ndelta, &d->cap_delta, row))
      return tl_logic_fail(kb, TL_ERR_NOMEM, "relation %s: out of memory", r->name), -1;
  }
  d->nnext = 0;
  if (d->noverflow) {
    int64_t lo[TL_LOGIC_MAX_ARITY], hi[TL_LOGIC_MAX_ARITY];
    for (int c = 0; c < arity; c++) lo[c] = hi[c] = d->overflow[c];
    for (int64_t k = 1; k < d->noverflow; k++)
      for (int c = 0; c < arity; c++) {
        int64_t v = d->overflow[k * arity + c];
        if (v < lo[c]) lo[c] = v;
        if (v > hi[c]) hi[c] = v;
      }
    if (tl_logic_dense_cover(kb, r, lo, hi, true) != TL_OK) return -1;
    if (r->repr == TL_REPR_SPARSE) {
      /* turned sparse: [d_begin, limit) is this round's tuples from the box, the
       * overflow follows; together they are the delta */
      tl_logic_sparse *s = &r->sp;
      for (int64_t i = s->limit; gained && i < s->n; i++)
        if (!tl_logic_tuples_push(gained, arity, s->tup + i * arity))
          return tl_logic_fail(kb, TL_ERR_NOMEM, "relation %s: out of memory", r->name), -1;
      added += s->n - s->limit;
      s->d_end = s->limit = s->n;
      r->count = s->n;
      return added;
    }
    d = &r->dn;
    for (int64_t k = 0; k < d->noverflow; k++) {
      const int64_t *t = d->overflow + k * arity;
      int64_t row, bit;
      dense_pos(d, arity, t, &row, &bit);
      if (bit_get(d->full + row * d->words, bit)) continue;
      if (!dense_set(d, arity, DN_FULL, t) || !dense_set(d, arity, DN_DELTA, t) ||
          (gained && !tl_logic_tuples_push(gained, arity, t)))
        return tl_logic_fail(kb, TL_ERR_NOMEM, "relation %s: out of memory", r->name), -1;
      added = 1;
    }
    d->noverflow = 0;
  }
  return added;
}

static int popcount64(uint64_t x) {
  /* without -mpopcnt the builtin is a library call: this is as fast and inline */
  x -= (x >> 1) & 0x5555555555555555ULL;
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return (int)((x * 0x0101010101010101ULL) >> 56);
}

void tl_logic_store_recount(tl_logic_rel *r) {
  if (r->repr == TL_REPR_SPARSE) r->count = r->sp.n;
  if (r->repr != TL_REPR_DENSE) return;
  const tl_logic_dense *d = &r->dn;
  int64_t n = 0;
  for (int64_t row = 0; row < d->rows; row++)
    if (bit_get(d->full_rows, row))
      for (int64_t w = 0; w < d->words; w++) n += popcount64(d->full[row * d->words + w]);
  r->count = n;
}

/* ---- iterators ------------------------------------------------------------------------------ */

enum { IT_EMPTY, IT_RANGE, IT_CHAIN, IT_CSR, IT_LIST, IT_DENSE };

void tl_logic_iter_init(tl_logic_iter *it, const tl_logic_rel *r, tl_logic_version ver, uint32_t mask,
                        const int64_t *key, const int8_t *same) {
  memset(it, 0, offsetof(tl_logic_iter, cur));
  it->rel = r;
  it->mask = mask;
  it->key = key;
  it->same = same;
  int arity = r->arity;
  if (ver == TL_VER_PASS) {
    it->kind = IT_LIST;
    it->list = r->pass_new.tup;
    it->end = r->pass_new.n;
    return;
  }
  if (r->repr == TL_REPR_SPARSE) {
    const tl_logic_sparse *s = &r->sp;
    it->kind = IT_RANGE;
    it->i = ver == TL_VER_DELTA ? s->d_begin : 0;
    it->end = ver == TL_VER_DELTA ? s->d_end : s->limit;
    if (ver == TL_VER_FULL && mask)
      for (int k = 0; k < s->ncsr; k++)
        if (s->csr[k].mask == mask) {
          it->kind = IT_CSR;
          it->ix = k;
          tl_logic_csr_find(&s->csr[k], arity, key, &it->i, &it->end);
          return;
        }
    if (ver == TL_VER_FULL && mask)
      for (int k = 0; k < s->nidx; k++)
        if (s->idx[k].mask == mask) {
          it->kind = IT_CHAIN;
          it->ix = k;
          it->i = tl_logic_index_head(s, arity, k, key) - 1;
          break;
        }
    return;
  }
  if (r->repr != TL_REPR_DENSE) {
    it->kind = IT_EMPTY;
    return;
  }
  const tl_logic_dense *d = &r->dn;
  it->kind = IT_DENSE;
  /* a known value outside the box matches nothing */
  for (int c = 0; c < arity; c++)
    if ((mask >> c & 1) && (uint64_t)key[c] - (uint64_t)d->lo[c] >= (uint64_t)d->size[c]) {
      it->kind = IT_EMPTY;
      return;
    }
  it->bits = ver == TL_VER_DELTA ? d->delta : d->full;
  it->rowbits = ver == TL_VER_DELTA ? d->delta_rows : d->full_rows;
  it->spans = ver == TL_VER_DELTA ? d->dspan : d->fspan;
  it->li = ver == TL_VER_DELTA ? 0 : -1;
  /* rows whose leading columns are known are one contiguous range */
  int lead = 0;
  int64_t base = 0, span = 1;
  while (lead < arity - 1 && (mask >> lead & 1)) base = base * d->size[lead] + (key[lead] - d->lo[lead]), lead++;
  for (int c = lead; c < arity - 1; c++) span *= d->size[c];
  it->row = base * span - 1; /* advanced before use */
  it->row_end = base * span + span;
  it->row_fixed = arity >= 1 && (mask >> (arity - 1) & 1); /* the last column is known: one bit per row */
  it->wi = it->whi = 0; /* no row loaded */
  it->w = 0;
}

/* The next row of a dense walk whose known columns match, its values in cur. */
static bool dense_next_row(tl_logic_iter *it) {
  const tl_logic_dense *d = &it->rel->dn;
  int arity = it->rel->arity;
  for (;;) {
    int64_t row;
    if (it->li >= 0) {
      if (it->li >= d->ndelta) return false;
      row = d->delta_list[it->li++]; /* its known columns are checked below */
    } else {
      row = it->row + 1;
      /* skip empty rows 64 at a time */
      while (row < it->row_end) {
        uint64_t w = it->rowbits[row >> 6] >> (row & 63);
        if (w) {
          row += __builtin_ctzll(w);
          break;
        }
        row = (row | 63) + 1;
      }
      if (row >= it->row_end) return false;
      it->row = row;
    }
    dense_decode(d, arity, row, it->cur);
    bool ok = true;
    for (int c = 0; c < arity - 1 && ok; c++)
      if ((it->mask >> c & 1) && it->cur[c] != it->key[c]) ok = false;
    if (!ok) continue;
    it->word = row * d->words;
    return true;
  }
}

static bool same_ok(const int8_t *same, int arity, const int64_t *t) {
  if (!same) return true;
  for (int c = 0; c < arity; c++)
    if (same[c] >= 0 && t[c] != t[same[c]]) return false;
  return true;
}

bool tl_logic_iter_next(tl_logic_iter *it, int64_t *out) {
  const tl_logic_rel *r = it->rel;
  int arity = r->arity;
  size_t bytes = (size_t)arity * sizeof *out;
  switch (it->kind) {
  case IT_EMPTY:
    return false;
  case IT_RANGE:
  case IT_LIST:
    while (it->i < it->end) {
      const int64_t *t = (it->kind == IT_LIST ? it->list : r->sp.tup) + it->i++ * arity;
      if (key_eq(t, it->key, arity, it->mask) && same_ok(it->same, arity, t)) {
        memcpy(out, t, bytes);
        return true;
      }
    }
    return false;
  case IT_CSR: {
    const tl_logic_csr *x = &r->sp.csr[it->ix];
    while (it->i < it->end) {
      const int64_t *row = x->rows + it->i++ * arity;
      for (int c = 0; c < arity; c++) out[x->perm[c]] = row[c];
      if (same_ok(it->same, arity, out)) return true;
    }
    return false;
  }
  case IT_CHAIN:
    while (it->i >= 0) {
      int64_t i = it->i;
      const uint32_t *next = r->sp.idx[it->ix].next; /* NULL: the membership index, one tuple a key */
      it->i = next ? (int64_t)next[i] - 1 : -1;
      const int64_t *t = r->sp.tup + i * arity;
      if (i < r->sp.limit && key_eq(t, it->key, arity, it->mask) && same_ok(it->same, arity, t)) {
        memcpy(out, t, bytes);
        return true;
      }
    }
    return false;
  default:
    break;
  }
  const tl_logic_dense *d = &r->dn;
  int last = arity - 1;
  for (;;) {
    if (it->row_fixed || arity == 0) {
      /* one bit per row: the known last value (or the only bit of arity 0) */
      if (!dense_next_row(it)) return false;
      int64_t bit = arity ? it->key[last] - d->lo[last] : 0;
      if (!bit_get(it->bits + it->word, bit)) continue;
      memcpy(out, it->cur, bytes);
      if (arity) out[last] = it->key[last];
      if (same_ok(it->same, arity, out)) return true;
      continue;
    }
    if (it->w) {
      int b = __builtin_ctzll(it->w);
      it->w &= it->w - 1;
      memcpy(out, it->cur, bytes);
      out[last] = d->lo[last] + it->wi * 64 + b;
      if (same_ok(it->same, arity, out)) return true;
      continue;
    }
    if (it->wi + 1 < it->whi) {
      it->wi++;
      it->w = it->bits[it->word + it->wi];
      continue;
    }
    if (!dense_next_row(it)) return false;
    const uint32_t *span = it->spans + 2 * (it->word / d->words);
    it->wi = span[0], it->whi = span[1];
    it->w = it->wi < it->whi ? it->bits[it->word + it->wi] : 0;
  }
}
