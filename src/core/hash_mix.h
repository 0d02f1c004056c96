/* hash_mix.h — the library's one hash mix: FNV-1a over words or bytes, murmur3's
 * finalizer. Constants and inline functions only, no library symbol, so the prelude of
 * every compiled TL program carries it too (a HashMap's struct keys combine their
 * fields' hashes with tl_hash_mix). core/hash.h includes it, with the tables. */
#ifndef TL_CORE_HASH_MIX_H
#define TL_CORE_HASH_MIX_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a's 64-bit offset basis and prime */
#define TL_HASH_INIT 0xcbf29ce484222325ull
#define TL_HASH_PRIME 0x100000001b3ull

/* The mix: one FNV-1a step over a whole word. Cheap, and distinct words give distinct
 * results from the same h; its low bits see only the words' low bits, so a table takes
 * its slot from tl_hash_final. */
static inline uint64_t tl_hash_mix(uint64_t h, uint64_t x) { return (h ^ x) * TL_HASH_PRIME; }

/* The finalizer (murmur3's fmix64): every input bit reaches every output bit. */
static inline uint64_t tl_hash_final(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

/* FNV-1a over n bytes, from h (TL_HASH_INIT to start) */
static inline uint64_t tl_hash_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) h = tl_hash_mix(h, s[i]);
  return h;
}

/* a pointer's hash, ready for a slot (its low bits are alignment zeros) */
static inline uint64_t tl_hash_ptr(const void *p) { return tl_hash_final((uint64_t)(uintptr_t)p); }

#endif
