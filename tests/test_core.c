/* test_core.c — the shared helpers of src/core: the growable array, the hash mix and
 * its tables, the shape formatter, the string builder. Expected values are worked out
 * by hand (FNV-1a's published test vectors, capacities doubling from 8), or come from
 * a plain reference (a linear list for the tables). Out-of-memory answers are tested
 * in test_alloc_fail.c, which can fail an allocation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/format.h"
#include "core/hash.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "test.h"

TEST(core_vec_push_grows_by_doubling) {
  tl_vec(int64_t) v = {0};
  for (int64_t i = 0; i < 1000; i++) {
    CHECK(tl_vec_push(&v, i * i));
    /* 8, 16, 32, ...: the first capacity >= len that doubling from 8 reaches */
    size_t want = 8;
    while (want < v.len) want *= 2;
    if (v.cap != want) CHECK_INT(v.cap, want);
  }
  CHECK_INT(v.len, 1000);
  CHECK_INT(v.cap, 1024);
  int64_t sum = 0;
  for (size_t i = 0; i < v.len; i++) sum += v.data[i];
  CHECK_INT(sum, 332833500); /* sum of i^2, i < 1000: 999 * 1000 * 1999 / 6 */
  tl_vec_free(&v);
  CHECK(v.data == NULL && v.len == 0 && v.cap == 0);
  CHECK(tl_vec_push(&v, 7)); /* usable again after free */
  CHECK_INT(v.data[0], 7);
  tl_vec_free(&v);
}

TEST(core_vec_reserve_and_overflow) {
  tl_vec(double) v = {0};
  CHECK(tl_vec_reserve(&v, 20));
  CHECK_INT(v.cap, 32); /* 8 -> 16 -> 32 */
  CHECK_INT(v.len, 0);
  CHECK(tl_vec_reserve(&v, 5)); /* already room: nothing changes */
  CHECK_INT(v.cap, 32);
  double *before = v.data;
  /* SIZE_MAX / 4 doubles is more bytes than a size_t holds: refused, untouched */
  CHECK(!tl_vec_reserve(&v, SIZE_MAX / 4));
  CHECK(v.data == before);
  CHECK_INT(v.cap, 32);
  tl_vec_free(&v);
  /* the engine alone: an int array whose length lives elsewhere */
  int *a = NULL;
  size_t cap = 0;
  CHECK(tl_vec_grow(&a, &cap, 9, sizeof *a));
  CHECK_INT(cap, 16);
  a[15] = 3;
  CHECK(!tl_vec_grow(&a, &cap, SIZE_MAX, sizeof *a));
  CHECK_INT(cap, 16);
  CHECK_INT(a[15], 3);
  free(a);
}

TEST(core_hash_mix_is_fnv1a) {
  CHECK(tl_hash_mix(0, 1) == 0x100000001b3ull); /* (0 ^ 1) * prime */
  CHECK(tl_hash_mix(TL_HASH_INIT, 0) == (uint64_t)(0xcbf29ce484222325ull * 0x100000001b3ull));
  /* FNV-1a 64 test vectors (Fowler, Noll, Vo): "" and "a" and "foobar" */
  CHECK(tl_hash_bytes(TL_HASH_INIT, "", 0) == 0xcbf29ce484222325ull);
  CHECK(tl_hash_bytes(TL_HASH_INIT, "a", 1) == 0xaf63dc4c8601ec8cull);
  CHECK(tl_hash_bytes(TL_HASH_INIT, "foobar", 6) == 0x85944171f73967e8ull);
  /* murmur3's fmix64: 0 stays 0; 1 worked through its five steps */
  CHECK(tl_hash_final(0) == 0);
  CHECK(tl_hash_final(1) == 0xb456bcfc34c2cb2cull);
}

TEST(core_ptrmap_against_a_list) {
  enum { N = 3000 };
  static int objs[N];
  tl_ptrmap m = {0};
  for (int i = 0; i < N; i++) CHECK(tl_ptrmap_put(&m, &objs[i], &objs[(i * 7) % N]));
  CHECK_INT(m.count, N);
  CHECK(tl_ptrmap_put(&m, &objs[5], &objs[6])); /* replaces: no new key */
  CHECK_INT(m.count, N);
  int bad = 0;
  for (int i = 0; i < N; i++)
    if (tl_ptrmap_get(&m, &objs[i]) != (i == 5 ? &objs[6] : &objs[(i * 7) % N])) bad++;
  CHECK_INT(bad, 0);
  int other;
  CHECK(tl_ptrmap_get(&m, &other) == NULL);
  /* word keys (not pointers) work the same */
  tl_ptrmap w = {0};
  CHECK(tl_ptrmap_put(&w, (void *)(uintptr_t)0x10000, (void *)(uintptr_t)3));
  CHECK((uintptr_t)tl_ptrmap_get(&w, (void *)(uintptr_t)0x10000) == 3);
  CHECK(tl_ptrmap_get(&w, (void *)(uintptr_t)0x20000) == NULL);
  tl_ptrmap_free(&w);
  tl_ptrmap_free(&m);
  CHECK(tl_ptrmap_get(&m, &objs[0]) == NULL);
}

/* items under a hash, as the table must find them: the reference is a plain list */
static int walk_count(const tl_hset *s, uint64_t h, uint64_t item) {
  int n = 0;
  uint64_t it;
  for (tl_hset_walk w = tl_hset_find(s, h); (it = tl_hset_next(s, &w));) n += it == item;
  return n;
}

TEST(core_hset_random_against_a_list) {
  enum { N = 4000 };
  uint64_t *hash = calloc(N, sizeof *hash);
  bool *in = calloc(N, sizeof *in);
  tl_hset s = {0};
  uint64_t x = 12345;
  int live = 0;
  for (int step = 0; step < 20000; step++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull; /* an LCG picks the moves */
    int i = (int)(x >> 33) % N;
    /* few distinct hashes: long runs of equal hashes, and removals inside them */
    if (!hash[i]) hash[i] = (x >> 13) % 97 + 1;
    if (!in[i]) {
      CHECK(tl_hset_add(&s, hash[i], (uint64_t)i + 1));
      in[i] = true, live++;
    } else if (x >> 62 & 1) {
      CHECK(tl_hset_remove(&s, hash[i], (uint64_t)i + 1));
      in[i] = false, live--;
    }
  }
  CHECK_INT(s.count, live);
  int bad = 0;
  for (int i = 0; i < N; i++)
    if (hash[i] && walk_count(&s, hash[i], (uint64_t)i + 1) != (in[i] ? 1 : 0)) bad++;
  CHECK_INT(bad, 0);
  /* a walk under one hash returns exactly the live items with that hash */
  for (uint64_t h = 1; h <= 97; h++) {
    int want = 0, got = 0;
    for (int i = 0; i < N; i++) want += in[i] && hash[i] == h;
    uint64_t it;
    for (tl_hset_walk w = tl_hset_find(&s, h); (it = tl_hset_next(&s, &w));) got++;
    if (got != want) CHECK_INT(got, want);
  }
  CHECK(!tl_hset_remove(&s, 5000, 1)); /* absent */
  tl_hset_free(&s);
  tl_hset empty = {0};
  tl_hset_walk w = tl_hset_find(&empty, 1);
  CHECK(tl_hset_next(&empty, &w) == 0);
  CHECK(!tl_hset_remove(&empty, 1, 1));
  free(hash);
  free(in);
}

TEST(core_format_shape) {
  char buf[TL_SHAPE_TEXT_MAX];
  CHECK_STR(tl_format_shape(buf, sizeof buf, 2, (int64_t[]){2, 3}), "[2, 3]");
  CHECK_STR(tl_format_shape(buf, sizeof buf, 0, NULL), "[]");
  CHECK_STR(tl_format_shape(buf, sizeof buf, 1, (int64_t[]){0}), "[0]");
  int64_t big[TL_MAX_DIMS];
  for (int i = 0; i < TL_MAX_DIMS; i++) big[i] = INT64_MIN;
  tl_format_shape(buf, sizeof buf, TL_MAX_DIMS, big); /* the longest text fits */
  CHECK_INT(strlen(buf), 2 + TL_MAX_DIMS * 20 + (TL_MAX_DIMS - 1) * 2);
  CHECK(buf[strlen(buf) - 1] == ']');
  char small[5];
  CHECK_STR(tl_format_shape(small, sizeof small, 2, (int64_t[]){2, 3}), "[2, "); /* cut, terminated */
}

TEST(core_strbuf_one_builder) {
  tl_strbuf s = {0};
  tl_strbuf_puts(&s, "ab");
  tl_strbuf_repeat(&s, '-', 3);
  tl_strbuf_printf(&s, "%d%s", 42, "x");
  tl_strbuf_putn(&s, "yz!", 2);
  CHECK_INT(s.len, 10);
  char *t = tl_strbuf_take(&s);
  CHECK_STR(t, "ab---42xyz");
  free(t);
  tl_strbuf_repeat(&s, ' ', 1000); /* past the first capacity */
  CHECK_INT(s.len, 1000);
  t = tl_strbuf_take(&s);
  CHECK_INT(strspn(t, " "), 1000);
  CHECK_INT(strlen(t), 1000);
  free(t);
  t = tl_strbuf_take(&s); /* nothing appended: an empty string */
  CHECK_STR(t, "");
  free(t);
}

/* a stream read whole, after what the buffer holds: 10,000 bytes (past several 4 KiB
 * blocks) with a NUL inside, and an empty stream */
TEST(core_strbuf_read_stream) {
  FILE *f = tmpfile();
  CHECK(f != NULL);
  for (int i = 0; i < 10000; i++) fputc(i == 5000 ? 0 : 'a' + i % 26, f);
  rewind(f);
  tl_strbuf s = {0};
  tl_strbuf_puts(&s, "<");
  CHECK(tl_strbuf_read(&s, f));
  CHECK_INT(s.len, 10001);
  CHECK_INT(s.data[0], '<');
  CHECK_INT(s.data[1], 'a');
  CHECK_INT(s.data[5001], 0);
  CHECK_INT(s.data[10000], 'a' + 9999 % 26);
  CHECK_INT(s.data[10001], 0); /* terminated */
  CHECK(tl_strbuf_read(&s, f)); /* at the end: nothing more */
  CHECK_INT(s.len, 10001);
  fclose(f);
  tl_strbuf_free(&s);
  f = tmpfile();
  CHECK(tl_strbuf_read(&s, f));
  CHECK_INT(s.len, 0);
  CHECK_STR(s.data, "");
  fclose(f);
  tl_strbuf_free(&s);
}
