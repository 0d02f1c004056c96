/* rt_bytes.c — byte buffers of compiled TL programs (rt_vec.h, LANGUAGE.md §10): a
 * Vec<u8> from a String or a file, into a file; a String from char codes. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/half.h"
#include "core/strbuf.h"
#include "lang/rt/rt_vec.h"

/* n bytes as a new Vec<u8> */
/* the text built in b as a new String (b freed), or the run-time error naming `what` */
static tlrt_str *take_text(tlrt *R, tl_strbuf *b, const char *what, int line, int col) {
  if (b->oom) {
    tl_strbuf_free(b);
    tlrt_fail(R, line, col, "out of memory in %s", what);
  }
  tlrt_str *r = tlrt_str_new(R, b->data ? b->data : "", (int64_t)b->len);
  tl_strbuf_free(b);
  return r;
}

static tlrt_vec *bytes_vec(tlrt *R, const void *p, int64_t n, const char *what, int line, int col) {
  tlrt_vec *v = tlrt_vec_new(R, 1, TLRT_EK_PLAIN, n, what, line, col);
  if (n) memcpy(v->data, p, (size_t)n);
  v->len = n;
  return v;
}

tlrt_vec *tlrt_str_to_bytes(tlrt *R, const tlrt_str *s, int line, int col) {
  return bytes_vec(R, s->data, s->len, "to_bytes", line, col);
}

/* the path as a C string, or a message in *err (NULL: a run-time error instead) */
static const char *c_path(tlrt *R, const tlrt_str *path, tlrt_str **err, int line, int col) {
  if (!memchr(path->data, 0, (size_t)path->len)) return path->data;
  if (err) *err = tlrt_str_new(R, "a file name holds a NUL character", -1);
  else tlrt_fail(R, line, col, "a file name holds a NUL character");
  return NULL;
}

/* the whole file at p: 0, or the errno of the failure (EISDIR for a directory) */
static int read_whole(const char *p, tl_strbuf *out) {
  FILE *f = fopen(p, "rb");
  if (!f) return errno ? errno : EIO;
  struct stat st;
  int bad = fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode) ? EISDIR : 0;
  if (!bad && !tl_strbuf_read(out, f)) bad = errno ? errno : EIO;
  if (!bad && out->oom) bad = ENOMEM;
  fclose(f);
  return bad;
}

/* File::read_bytes (err NULL: a failure is a run-time error) and File::read_binary (err:
 * NULL comes back and *err says why) */
tlrt_vec *tlrt_file_read_bytes_or(tlrt *R, const tlrt_str *path, tlrt_str **err, int line, int col) {
  const char *p = c_path(R, path, err, line, col);
  if (!p) return NULL;
  tl_strbuf text = {0};
  int bad = read_whole(p, &text);
  if (bad) {
    tl_strbuf_free(&text);
    char msg[600];
    snprintf(msg, sizeof msg, "cannot read %.500s: %s", p, strerror(bad));
    if (!err) tlrt_fail(R, line, col, "%s", msg);
    *err = tlrt_str_new(R, msg, -1);
    return NULL;
  }
  tlrt_vec *v = bytes_vec(R, text.data, (int64_t)text.len, "File::read_bytes", line, col);
  tl_strbuf_free(&text);
  return v;
}

tlrt_vec *tlrt_file_read_bytes(tlrt *R, const tlrt_str *path, int line, int col) {
  return tlrt_file_read_bytes_or(R, path, NULL, line, col);
}

/* 0 or the errno of the failure */
static int write_whole(const char *p, const tlrt_vec *v) {
  FILE *f = fopen(p, "wb");
  if (!f) return errno ? errno : EIO;
  size_t put = v->len ? fwrite(v->data, 1, (size_t)v->len, f) : 0;
  int bad = put != (size_t)v->len ? (errno ? errno : EIO) : 0;
  if (fclose(f) && !bad) bad = errno ? errno : EIO;
  return bad;
}

void tlrt_file_write_bytes(tlrt *R, const tlrt_str *path, const tlrt_vec *bytes, int line, int col) {
  const char *p = c_path(R, path, NULL, line, col);
  int bad = write_whole(p, bytes);
  if (bad) tlrt_fail(R, line, col, "cannot write %s: %s", p, strerror(bad));
}

bool tlrt_file_write_bytes_ok(tlrt *R, const tlrt_str *path, const tlrt_vec *bytes, int line, int col) {
  tlrt_str *err = NULL;
  const char *p = c_path(R, path, &err, line, col);
  if (!p) {
    tlrt_release(R, err);
    return false;
  }
  return write_whole(p, bytes) == 0;
}

/* an integer element as `{}` prints it: the checker lets only u8, i32 and i64 (plain
 * elements of 1, 4 and 8 bytes) and String reach join */
static void put_int(tl_strbuf *b, const tlrt_vec *v, int64_t i) {
  char num[24];
  const char *p = (const char *)v->data + i * v->esz;
  int64_t x = v->esz == 1 ? *(const uint8_t *)p : v->esz == 4 ? *(const int32_t *)p : *(const int64_t *)p;
  int n = snprintf(num, sizeof num, "%" PRId64, x);
  tl_strbuf_putn(b, num, (size_t)n);
}

tlrt_str *tlrt_vec_join(tlrt *R, const tlrt_vec *v, const tlrt_str *sep, int line, int col) {
  tlrt_str *const *s = v->data;
  tl_strbuf b = {0};
  for (int64_t i = 0; i < v->len; i++) {
    if (i) tl_strbuf_putn(&b, sep->data, (size_t)sep->len);
    if (v->ekind == TLRT_EK_PLAIN) put_int(&b, v, i);
    else tl_strbuf_putn(&b, s[i]->data, (size_t)s[i]->len);
  }
  return take_text(R, &b, "join", line, col);
}

/* the byte offset of sub's first match at or after from, or -1 */
static int64_t find_from(const tlrt_str *s, const tlrt_str *sub, int64_t from) {
  for (int64_t i = from; i + sub->len <= s->len; i++)
    if (!memcmp(s->data + i, sub->data, (size_t)sub->len)) return i;
  return -1;
}

int64_t tlrt_str_index_of(tlrt *R, const tlrt_str *s, const tlrt_str *sub) {
  (void)R;
  return find_from(s, sub, 0);
}

static void push_str(tlrt *R, tlrt_vec *v, const char *p, int64_t n, int line, int col) {
  *(tlrt_str **)tlrt_vec_push_slot(R, v, sizeof(tlrt_str *), line, col) = tlrt_str_new(R, p, n);
}

/* Rust's split(sep) collected: every piece, empty ones too; an empty sep splits
 * around each character, with an empty piece at both ends */
tlrt_vec *tlrt_str_split(tlrt *R, const tlrt_str *s, const tlrt_str *sep, int line, int col) {
  tlrt_vec *v = tlrt_vec_new(R, sizeof(tlrt_str *), TLRT_EK_OBJ, 0, "split", line, col);
  if (!sep->len) {
    push_str(R, v, "", 0, line, col);
    for (int64_t i = 0; i < s->len;) {
      unsigned char c = (unsigned char)s->data[i];
      int64_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      if (n > s->len - i) n = s->len - i;
      push_str(R, v, s->data + i, n, line, col);
      i += n;
    }
    push_str(R, v, "", 0, line, col);
    return v;
  }
  int64_t at = 0, k;
  while ((k = find_from(s, sep, at)) >= 0) {
    push_str(R, v, s->data + at, k - at, line, col);
    at = k + sep->len;
  }
  push_str(R, v, s->data + at, s->len - at, line, col);
  return v;
}

/* Rust's lines() collected: split at \n, a \r before it dropped, no piece after a last \n */
tlrt_vec *tlrt_str_lines(tlrt *R, const tlrt_str *s, int line, int col) {
  tlrt_vec *v = tlrt_vec_new(R, sizeof(tlrt_str *), TLRT_EK_OBJ, 0, "lines", line, col);
  int64_t at = 0;
  while (at < s->len) {
    const char *nl = memchr(s->data + at, '\n', (size_t)(s->len - at));
    int64_t end = nl ? nl - s->data : s->len, cut = end;
    if (cut > at && s->data[cut - 1] == '\r') cut--;
    push_str(R, v, s->data + at, cut - at, line, col);
    at = end + 1;
  }
  return v;
}

/* the length of the valid UTF-8 sequence at p (n bytes left), 0 when it is not one
 * (overlong forms, surrogates and code points past 0x10FFFF are not) */
static int utf8_len(const unsigned char *p, int64_t n) {
  if (p[0] < 0x80) return 1;
  int k = p[0] >= 0xC2 && p[0] <= 0xDF ? 2 : p[0] >= 0xE0 && p[0] <= 0xEF ? 3 : p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : 0;
  if (!k || k > n) return 0;
  for (int i = 1; i < k; i++)
    if ((p[i] & 0xC0) != 0x80) return 0;
  if (k == 3 && ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0))) return 0;
  if (k == 4 && ((p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] >= 0x90))) return 0;
  return k;
}

tlrt_str *tlrt_str_from_utf8_or(tlrt *R, const tlrt_vec *bytes, tlrt_str **err, int line, int col) {
  (void)line, (void)col;
  const unsigned char *p = bytes->data;
  for (int64_t i = 0; i < bytes->len;) {
    int k = utf8_len(p + i, bytes->len - i);
    if (!k) {
      char msg[96];
      snprintf(msg, sizeof msg, "invalid utf-8 sequence at byte %" PRId64, i);
      *err = tlrt_str_new(R, msg, -1);
      return NULL;
    }
    i += k;
  }
  return tlrt_str_new(R, bytes->len ? (const char *)p : "", bytes->len);
}

tlrt_str *tlrt_str_from_utf8_lossy(tlrt *R, const tlrt_vec *bytes, int line, int col) {
  const unsigned char *p = bytes->data;
  tl_strbuf b = {0};
  for (int64_t i = 0; i < bytes->len;) {
    int k = utf8_len(p + i, bytes->len - i);
    if (k) tl_strbuf_putn(&b, (const char *)p + i, (size_t)k);
    else tl_strbuf_puts(&b, "\xEF\xBF\xBD"); /* U+FFFD for each bad byte (Rust groups some; one each is simpler) */
    i += k ? k : 1;
  }
  return take_text(R, &b, "String::from_utf8_lossy", line, col);
}

/* an integer kind of tlrt_str_parse: its name, largest value, and the magnitude of its
 * smallest (0: unsigned) */
static const struct {
  char kind;
  const char *name;
  uint64_t max, neg;
} int_kinds[] = {{'i', "i64", INT64_MAX, (uint64_t)INT64_MAX + 1}, {'I', "i32", INT32_MAX, (uint64_t)INT32_MAX + 1},
                 {'u', "u8", UINT8_MAX, 0},  {'1', "i8", INT8_MAX, 128}, {'2', "i16", INT16_MAX, 32768},
                 {'3', "u16", UINT16_MAX, 0}, {'4', "u32", UINT32_MAX, 0}, {'5', "u64", UINT64_MAX, 0}};

bool tlrt_str_parse(tlrt *R, const tlrt_str *s, char kind, int64_t *i, double *f, tlrt_str **err) {
  char buf[64], msg[160];
  bool range = false; /* digits, but too many for the type */
  bool is_float = kind == 'f' || kind == 'd' || kind == 'h' || kind == 'g';
  const char *what = kind == 'b' ? "a bool" : is_float ? "a number" : "an integer";
  size_t ik = 0;
  while (ik + 1 < sizeof int_kinds / sizeof int_kinds[0] && int_kinds[ik].kind != kind) ik++;
  bool ok = s->len > 0 && (size_t)s->len < sizeof buf && !memchr(s->data, 0, (size_t)s->len);
  if (ok) memcpy(buf, s->data, (size_t)s->len), buf[s->len] = '\0';
  if (ok && kind == 'b') {
    ok = !strcmp(buf, "true") || !strcmp(buf, "false");
    *i = buf[0] == 't';
  } else if (ok && is_float) { /* Rust's from_str: no spaces, no hex; f16 (h), bf16 (g) rounded from the double */
    for (int64_t k = 0; ok && k < s->len; k++)
      if (strchr(" \t\n\r\v\fxXpP", buf[k])) ok = false;
    char *end = NULL;
    *f = ok ? (kind == 'f' ? (double)strtof(buf, &end) : strtod(buf, &end)) : 0;
    ok = ok && end == buf + s->len;
    if (kind == 'h' || kind == 'g') *f = kind == 'h' ? tl_round_f16(*f) : tl_round_bf16(*f);
  } else if (ok) { /* an optional sign, then digits, in range */
    const char *p = buf;
    bool neg = *p == '-' || *p == '+' ? *p++ == '-' : false;
    ok = *p != '\0' && !(neg && !int_kinds[ik].neg);
    uint64_t v = 0, lim = neg ? int_kinds[ik].neg : int_kinds[ik].max;
    for (; ok && *p; p++) {
      unsigned d = (unsigned)(*p - '0');
      ok = *p >= '0' && *p <= '9';
      range = ok && v > (lim - d) / 10;
      ok = ok && !range;
      if (ok) v = v * 10 + d;
    }
    *i = neg ? (int64_t)(0 - v) : (int64_t)v;
  }
  if (ok) return true;
  const char *type = int_kinds[ik].name;
  if (range) snprintf(msg, sizeof msg, "`%.*s` is out of range for %s", (int)(s->len > 80 ? 80 : s->len), s->data, type);
  else snprintf(msg, sizeof msg, "`%.*s` is not %s", (int)(s->len > 80 ? 80 : s->len), s->data, what);
  *err = tlrt_str_new(R, msg, -1);
  return false;
}

/* String::from_chars(codes): each i64 a Unicode scalar value, UTF-8 encoded */
tlrt_str *tlrt_str_from_codes(tlrt *R, const tlrt_vec *codes, int line, int col) {
  const int64_t *c = codes->data;
  tl_strbuf b = {0};
  for (int64_t i = 0; i < codes->len; i++) {
    int64_t u = c[i];
    if (u < 0 || u > 0x10FFFF || (u >= 0xD800 && u <= 0xDFFF)) {
      tl_strbuf_free(&b);
      tlrt_fail(R, line, col, "String::from_chars: element %" PRId64 " is %" PRId64 ", not a character code", i, u);
    }
    char e[4];
    int n = u < 0x80 ? 1 : u < 0x800 ? 2 : u < 0x10000 ? 3 : 4;
    if (n == 1) e[0] = (char)u;
    else {
      for (int k = n - 1; k > 0; k--, u >>= 6) e[k] = (char)(0x80 | (u & 0x3F));
      e[0] = (char)((n == 2 ? 0xC0 : n == 3 ? 0xE0 : 0xF0) | u);
    }
    tl_strbuf_putn(&b, e, (size_t)n);
  }
  return take_text(R, &b, "String::from_chars", line, col);
}
