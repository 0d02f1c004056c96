/* types.c — the checked tree's types (types.h): the basic types, the predicates and
 * the dtype rules, shared by the checker and the passes after it. */
#include "lang/check/types.h"

#include "core/dtype.h"

/* indexed by kind (the TENSOR and STRUCT slots are unused: those are made per use) */
#define BASIC(k) [k] = {.kind = k, .dtype = -1, .rank = -1}
tl_ty tl_ty_basic[TY_RANGE + 1] = {BASIC(TY_ERROR), BASIC(TY_UNIT), BASIC(TY_BOOL), BASIC(TY_I32), BASIC(TY_I64), BASIC(TY_U8),
                                BASIC(TY_F32),   BASIC(TY_F64),  BASIC(TY_CHAR), BASIC(TY_STR), BASIC(TY_RANGE),
                                BASIC(TY_I8), BASIC(TY_I16), BASIC(TY_U16), BASIC(TY_U32), BASIC(TY_U64), BASIC(TY_F16), BASIC(TY_BF16)};

bool tl_ty_is_refcounted(const tl_ty *t) {
  return t->kind == TY_STR || t->kind == TY_TENSOR || t->kind == TY_STRUCT || t->kind == TY_FN;
}
bool tl_ty_is_tuple(const tl_ty *t) { return t->kind == TY_STRUCT && t->st && t->st->is_tuple; }
bool tl_ty_is_int(const tl_ty *t) { return tl_ty_int_bits(t) > 0; }
bool tl_ty_is_float(const tl_ty *t) { return t->kind == TY_F32 || t->kind == TY_F64 || tl_ty_is_half(t); }
int tl_ty_int_bits(const tl_ty *t) {
  switch (t->kind) {
  case TY_I8: case TY_U8: return 8;
  case TY_I16: case TY_U16: return 16;
  case TY_I32: case TY_U32: return 32;
  case TY_I64: case TY_U64: return 64;
  default: return 0;
  }
}
bool tl_ty_is_unsigned(const tl_ty *t) { return t->kind == TY_U8 || t->kind == TY_U16 || t->kind == TY_U32 || t->kind == TY_U64; }
bool tl_ty_is_half(const tl_ty *t) { return t->kind == TY_F16 || t->kind == TY_BF16; }
void tl_ty_int_range(tl_ty_kind k, int64_t *lo, int64_t *hi) {
  const tl_ty *t = &tl_ty_basic[k];
  int bits = tl_ty_int_bits(t);
  bool u = tl_ty_is_unsigned(t);
  *lo = u ? 0 : bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
  *hi = bits == 64 ? INT64_MAX : u ? ((int64_t)1 << bits) - 1 : ((int64_t)1 << (bits - 1)) - 1;
}
int64_t tl_ty_int_wrap(tl_ty_kind k, int64_t v) {
  const tl_ty *t = &tl_ty_basic[k];
  int bits = tl_ty_int_bits(t);
  if (bits == 64) return v;
  uint64_t m = (uint64_t)v & (((uint64_t)1 << bits) - 1);
  if (!tl_ty_is_unsigned(t) && m >> (bits - 1)) return (int64_t)(m | ~(((uint64_t)1 << bits) - 1));
  return (int64_t)m;
}
bool tl_ty_is_numeric(const tl_ty *t) { return tl_ty_is_int(t) || tl_ty_is_float(t); }

bool tl_ty_is_iter(const tl_ty *t) { return t && t->kind == TY_STRUCT && t->st && t->st->generic == 'I'; }
bool tl_ty_is_option(const tl_ty *t) { return t->kind == TY_STRUCT && t->st && t->st->generic == 'O'; }
bool tl_ty_is_result(const tl_ty *t) { return t->kind == TY_STRUCT && t->st && t->st->generic == 'R'; }
tl_ty *tl_ty_tuple_elem(const tl_ty *t, int i) { return t->elems ? t->elems[i] : t->st->fields[i].ty; }
bool tl_ty_is_vec(const tl_ty *t) { return t && t->kind == TY_STRUCT && t->st && t->st->generic == 'V'; }
bool tl_ty_is_map(const tl_ty *t) { return t && t->kind == TY_STRUCT && t->st && t->st->generic == 'M'; }

/* the scalar type of a tensor's elements: f32 when the dtype is not known */
tl_ty *tl_ty_of_dtype(int dtype) {
  switch (dtype) {
  case TL_F64: return TY_F64_T;
  case TL_I64: return TY_I64_T;
  case TL_I32: return TY_I32_T;
  case TL_BOOL: return TY_BOOL_T;
  case TL_U8: return TY_U8_T;
  case TL_I8: return TY_I8_T;
  case TL_I16: return TY_I16_T;
  case TL_U16: return TY_U16_T;
  case TL_U32: return TY_U32_T;
  case TL_U64: return TY_U64_T;
  case TL_F16: return TY_F16_T;
  case TL_BF16: return TY_BF16_T;
  default: return TY_F32_T;
  }
}

int tl_ty_dtype(const tl_ty *t) {
  switch (t->kind) {
  case TY_F64: return TL_F64;
  case TY_I64: return TL_I64;
  case TY_I32: return TL_I32;
  case TY_BOOL: return TL_BOOL;
  case TY_F32: return TL_F32;
  case TY_U8: return TL_U8;
  case TY_I8: return TL_I8;
  case TY_I16: return TL_I16;
  case TY_U16: return TL_U16;
  case TY_U32: return TL_U32;
  case TY_U64: return TL_U64;
  case TY_F16: return TL_F16;
  case TY_BF16: return TL_BF16;
  default: return -1;
  }
}

/* the dtype a number n of type ty takes beside a tensor: its own, but i64 for an
 * integer literal, whatever type the tensor's dtype hinted it (it may be unknown) */
int tl_ty_scalar_dtype(const tl_node *n, const tl_ty *ty) {
  const tl_node *m = n->kind == TL_N_UNARY && n->op == TL_TOK_MINUS ? n->lhs : n;
  return m->kind == TL_N_INT ? TL_I64 : tl_ty_dtype(ty);
}

bool tl_fmt_spec_read(const char *s, size_t len, size_t i, size_t *end, tl_fmt_spec *out) {
  *out = (tl_fmt_spec){.prec = -1, .fill = ' '};
  size_t j = i + 1;
  if (j < len && s[j] == ':') {
    j++;
    if (j + 1 < len && s[j] != '}' && (s[j + 1] == '<' || s[j + 1] == '>' || s[j + 1] == '^') && (unsigned char)s[j] < 0x80)
      out->fill = s[j], out->align = s[j + 1], j += 2;
    else if (j < len && (s[j] == '<' || s[j] == '>' || s[j] == '^')) out->align = s[j++];
    if (j < len && s[j] == '0') out->zero = true, j++;
    for (int d = 0; j < len && s[j] >= '0' && s[j] <= '9'; j++, d++) {
      if (d >= 3) return false; /* a width under 1000 */
      out->width = out->width * 10 + (s[j] - '0');
    }
    if (j < len && s[j] == '.') {
      size_t d = ++j;
      out->prec = 0;
      for (; j < len && s[j] >= '0' && s[j] <= '9'; j++) out->prec = out->prec * 10 + (s[j] - '0');
      if (j == d || j - d > 2) return false;
    }
    if (j < len && s[j] == '?') out->debug = true, j++;
  }
  if (j >= len || s[j] != '}') return false;
  *end = j;
  return true;
}

/* the dtype two tensors of dtypes a and b compute in, as torch promotes (LANGUAGE.md
 * §3): the wider along bool < i32 < i64 < f32 < f64; -1 when a dtype it depends on is
 * not known here */
int tl_ty_promote_dtypes(int a, int b) {
  if (a >= 0 && b >= 0) return tl_dtype_promote((tl_dtype)a, (tl_dtype)b);
  return a == TL_F64 || b == TL_F64 ? TL_F64 : -1;
}

/* the dtype of l (op) r where one of them is a tensor: two tensors tl_ty_promote_dtypes,
 * a tensor and a number tl_dtype_promote_scalar */
int tl_ty_binary_dtype(const tl_node *ln, const tl_ty *l, const tl_node *rn, const tl_ty *r) {
  if (l->kind == TY_TENSOR && r->kind == TY_TENSOR) return tl_ty_promote_dtypes(l->dtype, r->dtype);
  const tl_ty *t = l->kind == TY_TENSOR ? l : r, *o = l->kind == TY_TENSOR ? r : l;
  int sdt = tl_ty_scalar_dtype(l->kind == TY_TENSOR ? rn : ln, o);
  if (t->dtype < 0 || sdt < 0) return t->dtype;
  return tl_dtype_promote_scalar((tl_dtype)t->dtype, (tl_dtype)sdt);
}
