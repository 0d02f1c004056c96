/* rt_vec.h — the run time of Vec<T> and HashMap<K, V> (LANGUAGE.md §11): in: element
 * sizes and kinds, keys' hash and equality functions (generated per map type); out:
 * refcounted growable arrays and insertion-ordered hash maps. Pasted into every
 * compiled program (lang_prelude.inc) with rt.h, so the small inline parts (the
 * capacity and bounds checks, copy-on-write) compile into the program's own loops:
 * generated code reads element i as ((T *)v->data)[i].
 *
 * An element is plain bytes (numbers, bool, char: kind TLRT_EK_PLAIN), a refcounted
 * object pointer (String, struct, tuple, enum, Option, Vec, HashMap: TLRT_EK_OBJ) or a
 * tensor handle (TLRT_EK_TENSOR); the run time retains and releases by kind. */
#ifndef TL_LANG_RT_VEC_H
#define TL_LANG_RT_VEC_H

#include "core/hash_mix.h"
#include "lang/rt/rt.h"

enum { TLRT_EK_PLAIN, TLRT_EK_OBJ, TLRT_EK_TENSOR };

typedef struct tlrt_vec {
  tlrt_obj h;
  int64_t len, cap;
  void *data;   /* cap elements of esz bytes */
  int32_t esz;  /* bytes per element */
  int32_t ekind;
} tlrt_vec;

/* An allocation that fails (a negative count, more than 2^40 bytes, no memory) is a
 * run-time error at line:col (0: none, the run time's own copy) that names what asked
 * for it: what is "vec![x; n]", "Vec::with_capacity", "push"... */
TL_API tlrt_vec *tlrt_vec_new(tlrt *R, int32_t esz, int32_t ekind, int64_t cap, const char *what, int line, int col);
/* capacity for at least need elements (doubling) */
TL_API void tlrt_vec_grow(tlrt *R, tlrt_vec *v, int64_t need, int line, int col);
/* *v shared (rc > 1): replaced by a copy of its own (elements retained) */
TL_API tlrt_vec *tlrt_vec_unshare(tlrt *R, tlrt_vec *v, int line, int col); /* a copy; v released */
/* a String's chars (decoded UTF-8, as char_at reads them) as a Vec<char>: s.chars() */
TL_API tlrt_vec *tlrt_str_chars(tlrt *R, const tlrt_str *s, int line, int col);
TL_API _Noreturn void tlrt_vec_oob(tlrt *R, int64_t len, int64_t i, int line, int col);
/* what remove(i)/insert(i, x) do to the bytes: i checked (insert: i <= len) */
TL_API void tlrt_vec_remove_at(tlrt *R, tlrt_vec *v, int64_t i, void *out, int line, int col);
TL_API void *tlrt_vec_insert_at(tlrt *R, tlrt_vec *v, int64_t i, int line, int col);
TL_API void tlrt_vec_clear(tlrt *R, tlrt_vec *v);
TL_API void tlrt_vec_reverse(tlrt_vec *v);
/* sort ascending by cmp ('i' i64, 'I' i32, 'u' u8, '1' i8, '2' i16, '3' u16, '4' u32, '5' u64, 'f' f32, 'd' f64, 'b' bool, 'c' char,
 * 's' String); stable */
TL_API void tlrt_vec_sort(tlrt *R, tlrt_vec *v, char cmp);
/* sort_by / sort_by_key: stable, ordered by cmp (< 0, 0, > 0) given ctx and two elements'
 * addresses (a generated function calling the program's closure) */
typedef int (*tlrt_cmp_fn)(void *ctx, const void *a, const void *b);
TL_API void tlrt_vec_sort_by(tlrt *R, tlrt_vec *v, tlrt_cmp_fn cmp, void *ctx);
/* a Vec<f32|f64|i64|i32|bool> as a 1-D tensor of that dtype: one copy of the buffer */
TL_API tl_tensor *tlrt_vec_to_tensor(tlrt *R, const tlrt_vec *v, tl_dtype dt, int line, int col);
/* a tensor's elements (any rank, row-major) as a Vec of its dtype: one copy */
TL_API tlrt_vec *tlrt_tensor_to_vec(tlrt *R, tl_tensor *t, int line, int col);

/* the run-time checks the generated code inlines */
/* v, or its copy when shared; the caller stores it back (`v = tlrt_vec_mut(R, v, ..)`):
 * taking v's address instead kept it in memory, and a loop's other values with it */
static inline tlrt_vec *tlrt_vec_mut(tlrt *R, tlrt_vec *v, int line, int col) {
  return v->h.rc > 1 ? tlrt_vec_unshare(R, v, line, col) : v;
}
static inline int64_t tlrt_vec_ix(tlrt *R, const tlrt_vec *v, int64_t i, int line, int col) {
  if (__builtin_expect((uint64_t)i >= (uint64_t)v->len, 0)) tlrt_vec_oob(R, v->len, i, line, col);
  return i;
}
/* the slot of a pushed element (capacity grown first); esz is v's element size, a
 * constant where the type is known, so the slot's address needs no multiply */
static inline void *tlrt_vec_push_slot(tlrt *R, tlrt_vec *v, size_t esz, int line, int col) {
  if (__builtin_expect(v->len == v->cap, 0)) tlrt_vec_grow(R, v, v->len + 1, line, col);
  return (char *)v->data + esz * (size_t)v->len++;
}

/* ---- HashMap: entries in insertion order (keys[i], vals[i]), an open-addressing
 * table of entry numbers over them ---- */
typedef uint64_t (*tlrt_hash_fn)(const void *key);
typedef bool (*tlrt_eq_fn)(const void *a, const void *b);
typedef struct tlrt_map {
  tlrt_obj h;
  int64_t len, cap;
  void *keys, *vals;
  int32_t ksz, vsz, kkind, vkind;
  int64_t *table; /* tcap slots: entry number + 1, 0 empty */
  int64_t tcap;
  tlrt_hash_fn hash;
  tlrt_eq_fn eq;
} tlrt_map;

TL_API tlrt_map *tlrt_map_new(tlrt *R, int32_t ksz, int32_t kkind, int32_t vsz, int32_t vkind, tlrt_hash_fn hash, tlrt_eq_fn eq);
TL_API tlrt_map *tlrt_map_unshare(tlrt *R, tlrt_map *m, int line, int col); /* a copy; m released */
static inline tlrt_map *tlrt_map_mut(tlrt *R, tlrt_map *m, int line, int col) {
  return m->h.rc > 1 ? tlrt_map_unshare(R, m, line, col) : m;
}
/* the entry number of key, or -1 */
TL_API int64_t tlrt_map_find(const tlrt_map *m, const void *key);
/* the entry of key: found (*found true), or a new last entry whose key and value bytes
 * the caller fills */
TL_API int64_t tlrt_map_slot(tlrt *R, tlrt_map *m, const void *key, bool *found, int line, int col);
/* entry i removed (its key and value already released or moved out by the caller); the
 * later entries keep their order */
TL_API void tlrt_map_remove_at(tlrt *R, tlrt_map *m, int64_t i);
/* a BTreeMap's new entry e (the last) moved to its place in key order (cmp: < 0, 0, > 0);
 * O(len), the later entries moved up and the table rebuilt */
typedef int (*tlrt_kcmp_fn)(const void *a, const void *b);
TL_API void tlrt_map_place_sorted(tlrt *R, tlrt_map *m, int64_t e, tlrt_kcmp_fn cmp);
/* every entry released; the map keeps its memory */
TL_API void tlrt_map_clear(tlrt *R, tlrt_map *m);
/* a key's hash, ready for a slot (the library's FNV-1a and finalizer); a struct's
 * combines its fields' with tl_hash_mix from TL_HASH_INIT (core/hash_mix.h, pasted
 * into the prelude before this header) */
TL_API uint64_t tlrt_hash_bytes(const void *p, size_t n);
TL_API uint64_t tlrt_hash_str(const tlrt_str *s);

/* a Vec<String>'s elements with sep between them */
TL_API tlrt_str *tlrt_vec_join(tlrt *R, const tlrt_vec *v, const tlrt_str *sep, int line, int col);

/* ---- byte buffers (rt_bytes.c): Vec<u8> ---- */
/* a String's UTF-8 bytes */
TL_API tlrt_vec *tlrt_str_to_bytes(tlrt *R, const tlrt_str *s, int line, int col);
/* a file's bytes: a failure is a run-time error, or (err not NULL) NULL with *err saying why */
TL_API tlrt_vec *tlrt_file_read_bytes(tlrt *R, const tlrt_str *path, int line, int col);
TL_API tlrt_vec *tlrt_file_read_bytes_or(tlrt *R, const tlrt_str *path, tlrt_str **err, int line, int col);
/* write_bytes: a failure is a run-time error; write_bytes_ok: false on a failure */
TL_API void tlrt_file_write_bytes(tlrt *R, const tlrt_str *path, const tlrt_vec *bytes, int line, int col);
TL_API bool tlrt_file_write_bytes_ok(tlrt *R, const tlrt_str *path, const tlrt_vec *bytes, int line, int col);
/* s.index_of(sub): the byte offset of the first match, -1 when none (the seed's) */
TL_API int64_t tlrt_str_index_of(tlrt *R, const tlrt_str *s, const tlrt_str *sub);
/* s.split(sep) and s.lines() as Rust's, collected into a Vec<String> */
TL_API tlrt_vec *tlrt_str_split(tlrt *R, const tlrt_str *s, const tlrt_str *sep, int line, int col);
TL_API tlrt_vec *tlrt_str_lines(tlrt *R, const tlrt_str *s, int line, int col);
/* s.parse::<T>(): kind 'i' i64, 'I' i32, 'u' u8, 'f' f32, 'd' f64, 'b' bool, '1' i8, '2' i16,
 * '3' u16, '4' u32, '5' u64 (its bits in *i), 'h' f16, 'g' bf16; the value in
 * *i or *f, or false and *err saying why */
TL_API bool tlrt_str_parse(tlrt *R, const tlrt_str *s, char kind, int64_t *i, double *f, tlrt_str **err);
/* String::from_utf8(bytes): the String, or NULL and *err naming the first bad byte;
 * from_utf8_lossy: each bad byte as U+FFFD */
TL_API tlrt_str *tlrt_str_from_utf8_or(tlrt *R, const tlrt_vec *bytes, tlrt_str **err, int line, int col);
TL_API tlrt_str *tlrt_str_from_utf8_lossy(tlrt *R, const tlrt_vec *bytes, int line, int col);
/* a Vec<i64> of Unicode scalar values as a String; another number is a run-time error */
TL_API tlrt_str *tlrt_str_from_codes(tlrt *R, const tlrt_vec *codes, int line, int col);

/* after an error (tlrt_free_all): the buffers of a Vec or HashMap object o, if it is one */
TL_API void tlrt_vec_free_buffers(tlrt_obj *o);

#endif
