/* tensor_io.c — tensor files: numpy's .npy (format 1.0 and 2.0) and safetensors, read
 * and written.
 *
 * Both formats are a small header followed by the tensor's bytes, little-endian and in
 * C order: a realized buffer's own layout. Saving writes the buffer as it is; loading
 * reads the file's bytes straight into a new buffer (one copy, no staging area).
 *
 * A file is never trusted. Every size a header gives is checked against the file's
 * size and TL_MAX_NUMEL before anything is allocated, so a short or lying file is an
 * error naming the file and what is wrong, never a crash, and never an allocation
 * bigger than the file could fill. The header readers accept the few forms the formats
 * use and reject the rest with a message; their nesting is bounded by the grammar
 * they follow (a Python dict holding a tuple; a JSON object of objects of arrays).
 *
 * Saving writes a temporary file beside the target and renames it over the target once
 * complete and flushed, so a failed save leaves the old file (or none), never half of
 * one. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/context.h"
#include "core/dtype.h"
#include "core/format.h"
#include "core/shapetracker.h"
#include "core/vec.h"
#include "core/strbuf.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tensor files are little-endian and tensor_io.c copies buffers as they are: a big-endian host needs byte swaps here"
#endif

/* The call and the file a message is about: "load_npy: PATH: what is wrong". */
typedef struct {
  tl_ctx *ctx;
  const char *op; /* a string literal: it also names the tensors the call makes */
  const char *path;
} io_ctx;

static tl_status io_fail(const io_ctx *io, tl_status st, const char *fmt, ...) TL_PRINTF(3, 4);
static tl_status io_fail(const io_ctx *io, tl_status st, const char *fmt, ...) {
  char msg[sizeof io->ctx->err.msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return tl_error_set(&io->ctx->err, st, "%s: %s: %s", io->op, io->path, msg);
}

/* The shape fits TL_MAX_NUMEL, or an error in the engine's words, prefixed with the
 * call, the file and `whose` (a tensor's name, or ""). */
static bool io_shape_fits(const io_ctx *io, const char *whose, int ndim, const int64_t *shape) {
  char what[sizeof io->ctx->err.msg];
  snprintf(what, sizeof what, "%s: %s%s%s", io->op, io->path, *whose ? ": " : "", whose);
  return tl_api_shape_fits(io->ctx, what, ndim, shape);
}

/* ---- reading files ------------------------------------------------------------ */
typedef struct {
  int fd;
  uint64_t size;
} in_file;

/* Opens a regular file for reading. O_NONBLOCK: opening a FIFO must not wait for a
 * writer (it is refused right after); reads of a regular file ignore the flag. */
static bool in_open(const io_ctx *io, in_file *f) {
  f->fd = open(io->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (f->fd < 0) {
    io_fail(io, TL_ERR_IO, "cannot open: %s", strerror(errno));
    return false;
  }
  struct stat st;
  const char *bad = NULL;
  if (fstat(f->fd, &st) != 0) {
    io_fail(io, TL_ERR_IO, "cannot read: %s", strerror(errno));
    bad = "";
  } else if (S_ISDIR(st.st_mode)) {
    bad = "is a directory";
  } else if (!S_ISREG(st.st_mode)) {
    bad = "is not a regular file"; /* its size, which every check needs, is unknown */
  }
  if (bad) {
    if (*bad) io_fail(io, TL_ERR_IO, "%s", bad);
    close(f->fd);
    f->fd = -1;
    return false;
  }
  f->size = (uint64_t)st.st_size;
  return true;
}

static void in_close(in_file *f) {
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
}

/* Reads exactly n bytes at offset off. The sizes were checked against the file's size
 * already: a short read means the file shrank meanwhile. */
static bool read_at(const io_ctx *io, const in_file *f, void *dst, uint64_t n, uint64_t off) {
  char *p = dst;
  while (n > 0) {
    size_t chunk = n > ((size_t)1 << 30) ? (size_t)1 << 30 : (size_t)n;
    ssize_t r = pread(f->fd, p, chunk, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      io_fail(io, TL_ERR_IO, "cannot read: %s", strerror(errno));
      return false;
    }
    if (r == 0) {
      io_fail(io, TL_ERR_IO, "the file ended at byte %llu while being read (did it shrink?)",
              (unsigned long long)off);
      return false;
    }
    p += r;
    off += (uint64_t)r;
    n -= (uint64_t)r;
  }
  return true;
}

/* A new tensor of the current scope holding the n bytes at offset off of the file. */
static tl_tensor *read_tensor(const io_ctx *io, const in_file *f, tl_dtype dtype, int ndim, const int64_t *shape,
                              uint64_t off) {
  tl_ctx *ctx = io->ctx;
  char what[sizeof ctx->err.msg];
  snprintf(what, sizeof what, "%s: %s", io->op, io->path);
  int64_t numel = tl_shape_numel(ndim, shape);
  tl_buffer *b = tl_api_buffer_new(ctx, what, dtype, numel);
  if (!b) return NULL;
  uint8_t *v = b->nbytes ? tl_api_host_data(ctx, b, true) : b->data;
  if ((b->nbytes && !v) || !read_at(io, f, v, b->nbytes, off)) {
    tl_buffer_release(b);
    return NULL;
  }
  if (dtype == TL_BOOL) { /* a file may hold any non-zero byte for true; kernels expect 1 */
    for (size_t i = 0; i < b->nbytes; i++) v[i] = v[i] != 0;
  }
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_arg arg = {.p = b};
  tl_uop *u = tl_uop_make(&ctx->graph, TL_OP_BUFFER, dtype, 0, NULL, arg, 0, ndim, shape);
  tl_buffer_release(b); /* the node holds it now */
  return tl_api_wrap(ctx, io->op, u, mark);
}

/* ---- writing files: a temporary file renamed over the target -------------------- */
typedef struct {
  int fd;
  char *tmp;
} out_file;

static atomic_uint tmp_counter;

/* Creates PATH.tmp-PID-N beside the target (the same file system, so rename is
 * atomic). open() with mode 0666 rather than mkstemp: the file gets the permissions
 * the umask gives any new file, as writing the target directly would. */
static bool out_open(const io_ctx *io, out_file *w) {
  size_t len = strlen(io->path) + 48;
  w->fd = -1;
  w->tmp = malloc(len);
  if (!w->tmp) {
    io_fail(io, TL_ERR_NOMEM, "out of memory");
    return false;
  }
  for (int tries = 0; tries < 100; tries++) {
    snprintf(w->tmp, len, "%s.tmp-%ld-%u", io->path, (long)getpid(), atomic_fetch_add(&tmp_counter, 1));
    w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (w->fd >= 0) return true;
    if (errno != EEXIST) break;
  }
  io_fail(io, TL_ERR_IO, "cannot create: %s", strerror(errno));
  free(w->tmp);
  w->tmp = NULL;
  return false;
}

/* Removes the temporary file: a failed save leaves nothing behind. */
static void out_abort(out_file *w) {
  if (w->fd >= 0) close(w->fd);
  if (w->tmp) unlink(w->tmp);
  free(w->tmp);
  w->fd = -1;
  w->tmp = NULL;
}

static bool out_write(const io_ctx *io, out_file *w, const void *data, uint64_t n) {
  const char *p = data;
  while (n > 0) {
    size_t chunk = n > ((size_t)1 << 30) ? (size_t)1 << 30 : (size_t)n;
    ssize_t r = write(w->fd, p, chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      io_fail(io, TL_ERR_IO, "cannot write: %s", r < 0 ? strerror(errno) : "no progress");
      out_abort(w);
      return false;
    }
    p += r;
    n -= (uint64_t)r;
  }
  return true;
}

/* Flushes the data to disk before the rename, so a crash just after it cannot leave
 * the new name on an empty file; then the rename replaces the target at once. */
static tl_status out_commit(const io_ctx *io, out_file *w) {
  int fd = w->fd;
  w->fd = -1;
  const char *failed = fsync(fd) != 0 ? "cannot write" : NULL;
  int err = errno;
  if (close(fd) != 0 && !failed) {
    failed = "cannot write";
    err = errno;
  }
  if (!failed && rename(w->tmp, io->path) != 0) {
    failed = "cannot replace it";
    err = errno;
  }
  if (failed) {
    tl_status st = io_fail(io, TL_ERR_IO, "%s: %s", failed, strerror(err));
    out_abort(w);
    return st;
  }
  free(w->tmp);
  w->tmp = NULL;
  return TL_OK;
}

/* ---- numpy .npy ------------------------------------------------------------------
 * "\x93NUMPY", major and minor version bytes, the header's length (2 bytes in 1.0, 4
 * in 2.0, little-endian), the header: a Python dict literal
 * {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces and a
 * newline so the data starts at a multiple of 64, then the data. */
static const struct {
  const char *descr;
  tl_dtype dtype;
} npy_types[] = {{"|b1", TL_BOOL}, {"<i4", TL_I32}, {"<i8", TL_I64}, {"<f4", TL_F32}, {"<f8", TL_F64},
                 {"|i1", TL_I8},   {"<i2", TL_I16}, {"|u1", TL_U8},  {"<u2", TL_U16}, {"<u4", TL_U32},
                 {"<u8", TL_U64},  {"<f2", TL_F16}};
#define NPY_TYPES_TEXT "'|b1', '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8', '<f2', '<f4', '<f8'"
#define NPY_MAX_HEADER ((uint32_t)1 << 20) /* numpy writes ~128 bytes; its reader's own limit is 10000 */

static const char npy_magic[6] = "\x93NUMPY";

/* a cursor over a header's text; base: the file offset of text[0], for messages */
typedef struct {
  const char *s;
  size_t n, i, base;
  const io_ctx *io;
  bool json; /* JSON (double quotes only), or a Python literal */
} cursor;

static bool bad_header(cursor *c, const char *fmt, ...) TL_PRINTF(2, 3);
static bool bad_header(cursor *c, const char *fmt, ...) {
  char msg[sizeof c->io->ctx->err.msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  io_fail(c->io, TL_ERR_FORMAT, "bad header at byte %zu: %s", c->base + c->i, msg);
  return false;
}

static bool is_ws(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }
static void skip_ws(cursor *c) {
  while (c->i < c->n && is_ws(c->s[c->i])) c->i++;
}
static bool at(const cursor *c, char ch) { return c->i < c->n && c->s[c->i] == ch; }

/* What the cursor is at, for "expected X, found Y". */
static const char *found(const cursor *c, char *buf, size_t cap) {
  if (c->i >= c->n) return "the end of the header";
  unsigned char ch = (unsigned char)c->s[c->i];
  if (ch == '"' || (ch == '\'' && !c->json)) return "a string";
  if (ch == '\'') return "a single-quoted string (JSON strings take double quotes)";
  if (ch == '{') return "'{'";
  if (ch == '}') return "'}'";
  if (ch == '[') return "'['";
  if (ch == ']') return "']'";
  if (ch == '-' || (ch >= '0' && ch <= '9')) return "a number";
  if (ch > ' ' && ch < 127) snprintf(buf, cap, "'%c'", ch);
  else snprintf(buf, cap, "byte 0x%02x", ch);
  return buf;
}

/* A non-negative decimal integer: "0" or digits not starting with 0 (Python and JSON
 * alike). what: the value's role, for messages. */
static bool parse_size(cursor *c, const char *what, int64_t *out) {
  char fb[16];
  size_t start = c->i;
  if (at(c, '-')) {
    c->i++;
    while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') c->i++;
    c->i = start;
    return bad_header(c, "%s must not be negative", what);
  }
  if (c->i >= c->n || c->s[c->i] < '0' || c->s[c->i] > '9')
    return bad_header(c, "expected %s (an integer), found %s", what, found(c, fb, sizeof fb));
  if (c->s[c->i] == '0' && c->i + 1 < c->n && c->s[c->i + 1] >= '0' && c->s[c->i + 1] <= '9')
    return bad_header(c, "%s has a leading zero", what);
  uint64_t v = 0;
  bool big = false;
  for (; c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9'; c->i++) {
    if (v > (UINT64_MAX - 9) / 10) big = true; /* stop before v could wrap */
    else v = v * 10 + (uint64_t)(c->s[c->i] - '0');
  }
  if (big || v > (uint64_t)INT64_MAX) {
    size_t end = c->i;
    c->i = start;
    return bad_header(c, "%s %.*s is too large", what, (int)(end - start), c->s + start);
  }
  if (at(c, '.') || at(c, 'e') || at(c, 'E'))
    return bad_header(c, "%s must be an integer, without a fraction or an exponent", what);
  *out = (int64_t)v;
  return true;
}

typedef struct {
  const char *descr; /* into the header text */
  size_t descr_len;
  bool has_descr, has_order, has_shape, fortran;
  int ndim;
  int64_t shape[TL_MAX_DIMS];
} npy_header;

/* A Python string literal without escapes (a header holds none): the text between the
 * quotes. */
static bool py_string(cursor *c, const char *what, const char **s, size_t *len) {
  char fb[16];
  if (!at(c, '\'') && !at(c, '"')) return bad_header(c, "expected %s, found %s", what, found(c, fb, sizeof fb));
  char q = c->s[c->i++];
  size_t start = c->i;
  for (; c->i < c->n && c->s[c->i] != q; c->i++) {
    unsigned char ch = (unsigned char)c->s[c->i];
    if (ch == '\\') return bad_header(c, "escapes in strings are not supported");
    if (ch < ' ' || ch >= 127) return bad_header(c, "unterminated string or a character outside printable ASCII");
  }
  if (c->i >= c->n) return bad_header(c, "unterminated string");
  *s = c->s + start;
  *len = c->i - start;
  c->i++;
  return true;
}

/* A tuple of sizes: (), (3,), (2, 3) or (2, 3,). */
static bool py_shape(cursor *c, npy_header *h) {
  char fb[16];
  if (!at(c, '(')) {
    if (at(c, '[')) return bad_header(c, "'shape' must be a tuple, not a list");
    return bad_header(c, "expected the shape, a tuple of integers, found %s", found(c, fb, sizeof fb));
  }
  c->i++;
  skip_ws(c);
  h->ndim = 0;
  bool comma = false;
  while (!at(c, ')')) {
    if (h->ndim == TL_MAX_DIMS)
      return bad_header(c, "the shape has more than %d axes, the most a TL tensor has", TL_MAX_DIMS);
    if (!parse_size(c, "a size", &h->shape[h->ndim])) return false;
    h->ndim++;
    skip_ws(c);
    comma = at(c, ',');
    if (comma) {
      c->i++;
      skip_ws(c);
    } else if (!at(c, ')')) {
      return bad_header(c, "expected ',' or ')' in the shape, found %s", found(c, fb, sizeof fb));
    }
  }
  if (h->ndim == 1 && !comma) /* Python reads (3) as the number 3 */
    return bad_header(c, "the shape (%lld) is a number, not a tuple: a 1-d shape is written (%lld,)",
                      (long long)h->shape[0], (long long)h->shape[0]);
  c->i++;
  return true;
}

static bool py_bool(cursor *c, bool *out) {
  size_t start = c->i;
  while (c->i < c->n && ((c->s[c->i] >= 'A' && c->s[c->i] <= 'Z') || (c->s[c->i] >= 'a' && c->s[c->i] <= 'z')))
    c->i++;
  size_t len = c->i - start;
  if (len == 4 && !memcmp(c->s + start, "True", 4)) *out = true;
  else if (len == 5 && !memcmp(c->s + start, "False", 5)) *out = false;
  else {
    char fb[16];
    c->i = start;
    return bad_header(c, "expected True or False for 'fortran_order', found %s", found(c, fb, sizeof fb));
  }
  return true;
}

/* The dict: exactly the keys 'descr', 'fortran_order' and 'shape', in any order, as
 * numpy's reader requires. */
static bool npy_parse_header(cursor *c, npy_header *h) {
  char fb[16];
  memset(h, 0, sizeof *h);
  skip_ws(c);
  if (!at(c, '{')) return bad_header(c, "expected '{', found %s", found(c, fb, sizeof fb));
  c->i++;
  skip_ws(c);
  while (!at(c, '}')) {
    const char *key;
    size_t klen;
    size_t kpos = c->i;
    if (!py_string(c, "a key", &key, &klen)) return false;
    bool *seen = klen == 5 && !memcmp(key, "descr", 5)           ? &h->has_descr
                 : klen == 13 && !memcmp(key, "fortran_order", 13) ? &h->has_order
                 : klen == 5 && !memcmp(key, "shape", 5)           ? &h->has_shape
                                                                   : NULL;
    if (!seen || *seen) {
      c->i = kpos;
      return bad_header(c, seen ? "key '%.*s' appears twice" : "unknown key '%.*s'", (int)klen, key);
    }
    *seen = true;
    skip_ws(c);
    if (!at(c, ':')) return bad_header(c, "expected ':' after a key, found %s", found(c, fb, sizeof fb));
    c->i++;
    skip_ws(c);
    bool ok;
    if (seen == &h->has_descr) {
      if (at(c, '[')) return bad_header(c, "'descr' is a list: structured dtypes are not supported");
      ok = py_string(c, "the dtype string", &h->descr, &h->descr_len);
    } else if (seen == &h->has_order) {
      ok = py_bool(c, &h->fortran);
    } else {
      ok = py_shape(c, h);
    }
    if (!ok) return false;
    skip_ws(c);
    if (at(c, ',')) {
      c->i++;
      skip_ws(c);
    } else if (!at(c, '}')) {
      return bad_header(c, "expected ',' or '}', found %s", found(c, fb, sizeof fb));
    }
  }
  c->i++;
  skip_ws(c);
  if (c->i < c->n) return bad_header(c, "unexpected %s after the dict", found(c, fb, sizeof fb));
  const char *missing = !h->has_descr ? "descr" : !h->has_order ? "fortran_order" : !h->has_shape ? "shape" : NULL;
  if (missing) return bad_header(c, "the dict has no '%s'", missing);
  return true;
}

/* The dtype of a descr, or false and an error: big-endian and unknown types are named. */
static bool npy_dtype(const io_ctx *io, const npy_header *h, tl_dtype *out) {
  const char *d = h->descr;
  size_t n = h->descr_len;
  for (size_t k = 0; k < sizeof npy_types / sizeof *npy_types; k++)
    if (n == 3 && !memcmp(d, npy_types[k].descr, 3)) {
      *out = npy_types[k].dtype;
      return true;
    }
  if (n == 3 && (d[0] == '<' || d[0] == '>' || d[0] == '=') && d[2] == '1' && d[1] && strchr("biu", d[1])) {
    *out = d[1] == 'b' ? TL_BOOL : d[1] == 'i' ? TL_I8 : TL_U8; /* one byte has no byte order: numpy writes '|', but reads these */
    return true;
  }
  if (n == 3 && d[0] == '>' && d[1] && d[2] && strchr("iuf", d[1]) && strchr("248", d[2])) {
    io_fail(io, TL_ERR_FORMAT, "big-endian data ('%.*s') is not supported; numpy converts it with a.astype('<%c%c')",
            (int)n, d, d[1], d[2]);
    return false;
  }
  io_fail(io, TL_ERR_DTYPE, "dtype '%.*s' is not supported (TL reads " NPY_TYPES_TEXT ")", (int)(n > 64 ? 64 : n), d);
  return false;
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

tl_tensor *tl_load_npy(tl_ctx *ctx, const char *path) {
  if (!ctx) return NULL;
  if (!path) {
    tl_error_set(&ctx->err, TL_ERR_ARG, "load_npy: path is NULL");
    return NULL;
  }
  io_ctx io = {ctx, "load_npy", path};
  in_file f;
  if (!in_open(&io, &f)) return NULL;
  tl_tensor *result = NULL;
  char *text = NULL;
  unsigned char pre[12];
  size_t npre = f.size < sizeof pre ? (size_t)f.size : sizeof pre;
  if (!read_at(&io, &f, pre, npre, 0)) goto done;
  if (npre < 6 || memcmp(pre, npy_magic, 6)) {
    io_fail(&io, TL_ERR_FORMAT, "not an .npy file: it does not start with \"\\x93NUMPY\"");
    goto done;
  }
  if (npre < 10) {
    io_fail(&io, TL_ERR_FORMAT, "truncated: %zu bytes, shorter than the 10-byte preamble", npre);
    goto done;
  }
  if ((pre[6] != 1 && pre[6] != 2) || pre[7] != 0) {
    io_fail(&io, TL_ERR_FORMAT, "format version %d.%d is not supported (TL reads 1.0 and 2.0)", pre[6], pre[7]);
    goto done;
  }
  size_t hstart = pre[6] == 1 ? 10 : 12;
  if (npre < hstart) {
    io_fail(&io, TL_ERR_FORMAT, "truncated: %zu bytes, shorter than the 12-byte preamble of format 2.0", npre);
    goto done;
  }
  uint32_t hlen = pre[6] == 1 ? (uint32_t)pre[8] | (uint32_t)pre[9] << 8 : le32(pre + 8);
  if (hlen > f.size - hstart) {
    io_fail(&io, TL_ERR_FORMAT, "truncated: the header is %u bytes, but %llu follow the preamble", hlen,
            (unsigned long long)(f.size - hstart));
    goto done;
  }
  if (hlen > NPY_MAX_HEADER) {
    io_fail(&io, TL_ERR_FORMAT, "the header is %u bytes, more than TL reads (%u)", hlen, NPY_MAX_HEADER);
    goto done;
  }
  if (!(text = malloc(hlen ? hlen : 1))) {
    io_fail(&io, TL_ERR_NOMEM, "out of memory for a header of %u bytes", hlen);
    goto done;
  }
  if (!read_at(&io, &f, text, hlen, hstart)) goto done;
  cursor c = {text, hlen, 0, hstart, &io, false};
  npy_header h;
  tl_dtype dtype;
  if (!npy_parse_header(&c, &h) || !npy_dtype(&io, &h, &dtype)) goto done;
  if (h.fortran) {
    io_fail(&io, TL_ERR_FORMAT,
            "fortran_order True (column-major data) is not supported; save a C-order array "
            "(numpy: np.ascontiguousarray(a))");
    goto done;
  }
  if (!io_shape_fits(&io, "", h.ndim, h.shape)) goto done;
  /* at most 2^40 elements of at most 8 bytes: no overflow */
  uint64_t need = (uint64_t)tl_shape_numel(h.ndim, h.shape) * tl_dtype_size(dtype);
  uint64_t have = f.size - hstart - hlen;
  if (need != have) {
    char st[TL_SHAPE_TEXT_MAX];
    tl_format_shape(st, sizeof st, h.ndim, h.shape);
    io_fail(&io, TL_ERR_FORMAT, "shape %s of dtype '%.*s' needs %llu bytes of data, but %llu follow the header%s", st,
            (int)h.descr_len, h.descr, (unsigned long long)need, (unsigned long long)have,
            need > have ? " (truncated)" : "");
    goto done;
  }
  result = read_tensor(&io, &f, dtype, h.ndim, h.shape, hstart + hlen);
done:
  free(text);
  in_close(&f);
  return result;
}

tl_status tl_save_npy(tl_tensor *h, const char *path) {
  tl_tensor *t = tl_api_tensor(h, "save_npy");
  if (!t) return TL_ERR_ARG;
  tl_ctx *ctx = t->slot.ctx;
  if (!path) return tl_error_set(&ctx->err, TL_ERR_ARG, "save_npy: path is NULL");
  io_ctx io = {ctx, "save_npy", path};
  tl_status st = tl_realize(h); /* views and lazy results: their values, C order */
  if (st) return st;
  const tl_uop *u = t->u;
  tl_dtype dtype = (tl_dtype)u->dtype;
  const char *descr = NULL;
  for (size_t k = 0; k < sizeof npy_types / sizeof *npy_types; k++)
    if (npy_types[k].dtype == dtype) descr = npy_types[k].descr;
  if (dtype == TL_BF16) /* numpy has no bfloat16 (ml_dtypes' '<V2' files read back as raw bytes) */
    return io_fail(&io, TL_ERR_DTYPE, "bf16 has no .npy dtype (numpy has no bfloat16): cast to f32, or save as .safetensors");
  if (!descr) return io_fail(&io, TL_ERR_INTERNAL, "dtype %s has no .npy code", tl_dtype_name(dtype));
  /* the header numpy writes: sorted keys, repr() of the shape ("(3,)" for one axis) */
  char hdr[256 + TL_MAX_DIMS * 24];
  int len = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < u->ndim; i++)
    len += snprintf(hdr + len, sizeof hdr - (size_t)len, "%s%lld", i ? ", " : "", (long long)u->shape[i]);
  len += snprintf(hdr + len, sizeof hdr - (size_t)len, "%s), }", u->ndim == 1 ? "," : "");
  /* version 1.0 unless the header outgrows its 2-byte length (never for 8 axes: the
   * 2.0 branch is the format's rule, kept for completeness) */
  int version = 10 + len + 1 > 65535 + 10 ? 2 : 1;
  size_t pre = version == 1 ? 10 : 12;
  size_t total = (pre + (size_t)len + 1 + 63) / 64 * 64; /* the data starts 64-byte aligned */
  memset(hdr + len, ' ', total - pre - (size_t)len - 1);
  hdr[total - pre - 1] = '\n';
  size_t hlen = total - pre;
  unsigned char p[12];
  memcpy(p, npy_magic, 6);
  p[6] = (unsigned char)version;
  p[7] = 0;
  for (size_t i = 0; i < pre - 8; i++) p[8 + i] = (unsigned char)(hlen >> (8 * i));
  uint64_t nbytes = (uint64_t)tl_uop_numel(u) * tl_dtype_size(dtype);
  const void *data = tl_api_host_data(ctx, u->arg.p, false);
  if (!data) return ctx->err.status;
  out_file w;
  if (!out_open(&io, &w)) return ctx->err.status;
  if (!out_write(&io, &w, p, pre) || !out_write(&io, &w, hdr, hlen) || !out_write(&io, &w, data, nbytes))
    return ctx->err.status;
  return out_commit(&io, &w);
}

/* ---- safetensors -------------------------------------------------------------------
 * An 8-byte little-endian header length N, N bytes of JSON
 * {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
 *  "__metadata__": {"key": "value", ...}} (metadata optional), padded with spaces, then
 * the data: offsets count from its first byte, and the tensors' bytes tile it exactly,
 * without gaps or overlaps (the format's rule, which the reference reader enforces). */
static const struct {
  const char *name;
  tl_dtype dtype;
} st_types[] = {{"BOOL", TL_BOOL}, {"I32", TL_I32}, {"I64", TL_I64}, {"F32", TL_F32}, {"F64", TL_F64},
                {"I8", TL_I8},     {"I16", TL_I16}, {"U8", TL_U8},   {"U16", TL_U16}, {"U32", TL_U32},
                {"U64", TL_U64},   {"F16", TL_F16}, {"BF16", TL_BF16}};
static const char *st_type_name(tl_dtype dtype) {
  for (size_t k = 0; k < sizeof st_types / sizeof *st_types; k++)
    if (st_types[k].dtype == dtype) return st_types[k].name;
  return "?";
}
#define ST_TYPES_TEXT "BOOL, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64"
#define ST_MAX_HEADER 100000000ull /* the reference implementation's limit */

typedef struct {
  char *name; /* decoded, NUL-free UTF-8 */
  tl_dtype dtype;
  int ndim;
  int64_t shape[TL_MAX_DIMS];
  int64_t begin, end;
} st_entry;

typedef struct {
  st_entry *e;
  int n;
  size_t cap;
  uint64_t data_start, data_len; /* file offset and size of the data */
} st_header;

static void st_header_free(st_header *h) {
  for (int i = 0; i < h->n; i++) free(h->e[i].name);
  free(h->e);
  h->e = NULL;
  h->n = 0;
  h->cap = 0;
}

/* The length of the UTF-8 sequence at p (1 to 4), or 0 when it is not valid UTF-8
 * (overlong forms, surrogates, past U+10FFFF, cut short). */
static size_t utf8_seq(const unsigned char *p, size_t avail) {
  unsigned char b = p[0];
  if (b < 0x80) return 1;
  size_t n = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 0;
  if (!n || n > avail || b > 0xf4 || b == 0xc0 || b == 0xc1) return 0;
  for (size_t k = 1; k < n; k++)
    if ((p[k] & 0xc0) != 0x80) return 0;
  if (n == 3 && b == 0xe0 && p[1] < 0xa0) return 0; /* overlong */
  if (n == 3 && b == 0xed && p[1] >= 0xa0) return 0; /* a surrogate */
  if (n == 4 && b == 0xf0 && p[1] < 0x90) return 0;  /* overlong */
  if (n == 4 && b == 0xf4 && p[1] >= 0x90) return 0; /* past U+10FFFF */
  return n;
}

static bool utf8_valid(const char *s) {
  size_t n = strlen(s);
  for (size_t i = 0; i < n;) {
    size_t k = utf8_seq((const unsigned char *)s + i, n - i);
    if (!k) return false;
    i += k;
  }
  return true;
}

static int hex4(const char *p) {
  int v = 0;
  for (int k = 0; k < 4; k++) {
    char ch = p[k];
    int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/* A JSON string, decoded into a new NUL-terminated UTF-8 string (*out, malloc'd).
 * Escapes \" \\ \/ \b \f \n \r \t \uXXXX (surrogate pairs joined); raw control
 * characters, invalid UTF-8, lone surrogates and \u0000 (a C string cannot hold it)
 * are errors. The decoded text is never longer than the quoted one. */
static bool json_string(cursor *c, const char *what, char **out) {
  char fb[16];
  *out = NULL;
  if (!at(c, '"')) return bad_header(c, "expected %s, found %s", what, found(c, fb, sizeof fb));
  size_t start = ++c->i, end = start;
  while (end < c->n && c->s[end] != '"') end += c->s[end] == '\\' ? 2 : 1;
  if (end >= c->n) return bad_header(c, "unterminated string");
  char *d = malloc(end - start + 1);
  if (!d) {
    io_fail(c->io, TL_ERR_NOMEM, "out of memory reading the header");
    return false;
  }
  size_t k = 0;
  while (c->i < end) {
    unsigned char ch = (unsigned char)c->s[c->i];
    if (ch < 0x20) {
      free(d);
      return bad_header(c, "a control character (0x%02x) in a string must be escaped", ch);
    }
    if (ch >= 0x80) {
      size_t n = utf8_seq((const unsigned char *)c->s + c->i, end - c->i);
      if (!n) {
        free(d);
        return bad_header(c, "invalid UTF-8 in a string");
      }
      memcpy(d + k, c->s + c->i, n);
      k += n;
      c->i += n;
      continue;
    }
    c->i++;
    if (ch != '\\') {
      d[k++] = (char)ch;
      continue;
    }
    char e = c->s[c->i++]; /* in range: the scan above stepped over it */
    const char *simple = strchr("\"\\/bfnrt", e);
    if (e && simple) {
      d[k++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
      continue;
    }
    long cp = e == 'u' && end - c->i >= 4 ? hex4(c->s + c->i) : -1;
    if (e != 'u' || cp < 0) {
      c->i -= 2;
      free(d);
      return bad_header(c, e == 'u' ? "\\u needs four hex digits" : "unknown escape '\\%c'", e);
    }
    c->i += 4;
    if (cp >= 0xd800 && cp < 0xdc00) { /* a high surrogate: a low one must follow */
      long lo = end - c->i >= 6 && c->s[c->i] == '\\' && c->s[c->i + 1] == 'u' ? hex4(c->s + c->i + 2) : -1;
      if (lo < 0xdc00 || lo > 0xdfff) {
        c->i -= 6;
        free(d);
        return bad_header(c, "a \\u escape of a high surrogate without its low surrogate");
      }
      c->i += 6;
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    } else if (cp >= 0xdc00 && cp < 0xe000) {
      c->i -= 6;
      free(d);
      return bad_header(c, "a \\u escape of a lone low surrogate");
    } else if (cp == 0) {
      c->i -= 6;
      free(d);
      return bad_header(c, "\\u0000 in a string (a name cannot hold a NUL character)");
    }
    if (cp < 0x80) {
      d[k++] = (char)cp;
    } else if (cp < 0x800) {
      d[k++] = (char)(0xc0 | cp >> 6);
      d[k++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      d[k++] = (char)(0xe0 | cp >> 12);
      d[k++] = (char)(0x80 | (cp >> 6 & 0x3f));
      d[k++] = (char)(0x80 | (cp & 0x3f));
    } else {
      d[k++] = (char)(0xf0 | cp >> 18);
      d[k++] = (char)(0x80 | (cp >> 12 & 0x3f));
      d[k++] = (char)(0x80 | (cp >> 6 & 0x3f));
      d[k++] = (char)(0x80 | (cp & 0x3f));
    }
  }
  d[k] = 0;
  c->i = end + 1;
  *out = d;
  return true;
}

/* ',' then more, or the closing character: false (and an error) otherwise. */
static bool json_next(cursor *c, char close, bool *more) {
  char fb[16];
  skip_ws(c);
  if (at(c, ',')) {
    c->i++;
    skip_ws(c);
    *more = true;
    return true;
  }
  if (at(c, close)) {
    c->i++;
    *more = false;
    return true;
  }
  return bad_header(c, "expected ',' or '%c', found %s", close, found(c, fb, sizeof fb));
}

/* [n, n, ...]: at most max integers, each >= 0 (what: the field, for messages) */
static bool json_sizes(cursor *c, const char *name, const char *what, int max, int64_t *v, int *count) {
  char fb[16];
  if (!at(c, '['))
    return bad_header(c, "tensor '%s': '%s' must be an array of integers, found %s", name, what,
                      found(c, fb, sizeof fb));
  c->i++;
  skip_ws(c);
  *count = 0;
  bool more = !at(c, ']');
  if (!more) c->i++;
  while (more) {
    if (*count == max)
      return bad_header(c, "tensor '%s': '%s' has more than %d entries%s", name, what, max,
                        max == TL_MAX_DIMS ? ", the most axes a TL tensor has" : "");
    char role[64];
    snprintf(role, sizeof role, "an entry of '%s'", what);
    if (!parse_size(c, role, &v[(*count)++]) || !json_next(c, ']', &more)) return false;
  }
  return true;
}

static bool json_key(cursor *c, const char *what, char **key) {
  char fb[16];
  if (!json_string(c, what, key)) return false;
  skip_ws(c);
  if (at(c, ':')) {
    c->i++;
    skip_ws(c);
    return true;
  }
  free(*key);
  *key = NULL;
  return bad_header(c, "expected ':' after a key, found %s", found(c, fb, sizeof fb));
}

/* {"dtype": ..., "shape": [...], "data_offsets": [b, e]}: each exactly once. */
static bool st_parse_tensor(cursor *c, st_entry *e) {
  char fb[16];
  const io_ctx *io = c->io;
  if (!at(c, '{'))
    return bad_header(c, "tensor '%s': expected an object, found %s", e->name, found(c, fb, sizeof fb));
  c->i++;
  skip_ws(c);
  bool has_dtype = false, has_shape = false, has_offsets = false;
  bool more = !at(c, '}');
  if (!more) c->i++;
  while (more) {
    char *key;
    size_t kpos = c->i;
    if (!json_key(c, "a field name", &key)) return false;
    bool *seen = !strcmp(key, "dtype")          ? &has_dtype
                 : !strcmp(key, "shape")        ? &has_shape
                 : !strcmp(key, "data_offsets") ? &has_offsets
                                                : NULL;
    if (!seen || *seen) {
      c->i = kpos;
      bad_header(c, seen ? "tensor '%s': field '%s' appears twice" : "tensor '%s': unknown field '%s'", e->name,
                 key);
      free(key);
      return false;
    }
    free(key);
    *seen = true;
    if (seen == &has_dtype) {
      char *dt;
      if (!json_string(c, "the dtype, a string", &dt)) return false;
      int k = 0, nt = (int)(sizeof st_types / sizeof *st_types);
      while (k < nt && strcmp(dt, st_types[k].name)) k++;
      if (k == nt) {
        io_fail(io, TL_ERR_DTYPE, "tensor '%s': dtype %.64s is not supported (TL reads " ST_TYPES_TEXT ")", e->name,
                dt);
        free(dt);
        return false;
      }
      free(dt);
      e->dtype = st_types[k].dtype;
    } else if (seen == &has_shape) {
      if (!json_sizes(c, e->name, "shape", TL_MAX_DIMS, e->shape, &e->ndim)) return false;
    } else {
      int64_t v[2];
      int nv;
      size_t pos = c->i;
      if (!json_sizes(c, e->name, "data_offsets", 2, v, &nv)) return false;
      if (nv != 2) {
        c->i = pos;
        return bad_header(c, "tensor '%s': 'data_offsets' must hold two integers, [begin, end]", e->name);
      }
      e->begin = v[0];
      e->end = v[1];
    }
    if (!json_next(c, '}', &more)) return false;
  }
  const char *missing = !has_dtype ? "dtype" : !has_shape ? "shape" : !has_offsets ? "data_offsets" : NULL;
  if (missing) {
    io_fail(io, TL_ERR_FORMAT, "tensor '%s' has no '%s'", e->name, missing);
    return false;
  }
  return true;
}

/* "__metadata__": {"key": "value", ...}: strings only (the format's rule); TL keeps
 * none of it. */
static bool st_parse_metadata(cursor *c) {
  char fb[16];
  if (!at(c, '{')) return bad_header(c, "'__metadata__' must be an object, found %s", found(c, fb, sizeof fb));
  c->i++;
  skip_ws(c);
  bool more = !at(c, '}');
  if (!more) c->i++;
  while (more) {
    char *key, *value;
    if (!json_key(c, "a metadata key", &key)) return false;
    free(key);
    if (!json_string(c, "a metadata value (a string)", &value)) return false;
    free(value);
    if (!json_next(c, '}', &more)) return false;
  }
  return true;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const st_entry *)a)->name, ((const st_entry *)b)->name);
}
static int by_offsets(const void *a, const void *b) {
  const st_entry *x = *(const st_entry *const *)a, *y = *(const st_entry *const *)b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  return x->end < y->end ? -1 : x->end > y->end;
}

/* Every tensor's sizes agree with its offsets, and the data is tiled exactly. */
static bool st_check_layout(const io_ctx *io, st_header *h) {
  for (int i = 0; i < h->n; i++) {
    st_entry *e = &h->e[i];
    char whose[300];
    snprintf(whose, sizeof whose, "tensor '%.200s'", e->name);
    if (!io_shape_fits(io, whose, e->ndim, e->shape)) return false;
    uint64_t need = (uint64_t)tl_shape_numel(e->ndim, e->shape) * tl_dtype_size(e->dtype);
    char st[TL_SHAPE_TEXT_MAX];
    tl_format_shape(st, sizeof st, e->ndim, e->shape);
    if (e->end < e->begin) {
      io_fail(io, TL_ERR_FORMAT, "tensor '%s': data_offsets [%lld, %lld] end before they begin", e->name,
              (long long)e->begin, (long long)e->end);
      return false;
    }
    if ((uint64_t)(e->end - e->begin) != need) {
      io_fail(io, TL_ERR_FORMAT, "tensor '%s': data_offsets [%lld, %lld] hold %llu bytes, but shape %s of %s needs %llu",
              e->name, (long long)e->begin, (long long)e->end, (unsigned long long)(e->end - e->begin), st,
              st_type_name(e->dtype),
              (unsigned long long)need);
      return false;
    }
    if ((uint64_t)e->end > h->data_len) {
      io_fail(io, TL_ERR_FORMAT, "tensor '%s': data_offsets [%lld, %lld] run past the end of the data (%llu bytes): the file is truncated",
              e->name, (long long)e->begin, (long long)e->end, (unsigned long long)h->data_len);
      return false;
    }
  }
  st_entry **order = malloc(((size_t)h->n + 1) * sizeof *order);
  if (!order) {
    io_fail(io, TL_ERR_NOMEM, "out of memory reading the header");
    return false;
  }
  for (int i = 0; i < h->n; i++) order[i] = &h->e[i];
  if (h->n > 1) qsort(order, (size_t)h->n, sizeof *order, by_offsets);
  uint64_t pos = 0;
  bool ok = true;
  for (int i = 0; i < h->n && ok; i++) {
    const st_entry *e = order[i];
    if ((uint64_t)e->begin > pos) {
      io_fail(io, TL_ERR_FORMAT, "the bytes [%llu, %lld) of the data belong to no tensor", (unsigned long long)pos,
              (long long)e->begin);
      ok = false;
    } else if ((uint64_t)e->begin < pos) {
      const st_entry *p = order[i - 1];
      io_fail(io, TL_ERR_FORMAT, "tensor '%s': data_offsets [%lld, %lld] overlap those of tensor '%s' [%lld, %lld]",
              e->name, (long long)e->begin, (long long)e->end, p->name, (long long)p->begin, (long long)p->end);
      ok = false;
    }
    pos = (uint64_t)e->end;
  }
  if (ok && pos != h->data_len) {
    io_fail(io, TL_ERR_FORMAT, "the bytes [%llu, %llu) of the data belong to no tensor", (unsigned long long)pos,
            (unsigned long long)h->data_len);
    ok = false;
  }
  free(order);
  return ok;
}

/* Reads and checks the whole header; on success the entries are sorted by name. */
static bool st_read_header(const io_ctx *io, const in_file *f, st_header *h) {
  memset(h, 0, sizeof *h);
  unsigned char lenb[8];
  if (f->size < 8) {
    io_fail(io, TL_ERR_FORMAT, "truncated: %llu bytes, fewer than the 8 of the header length",
            (unsigned long long)f->size);
    return false;
  }
  if (!read_at(io, f, lenb, 8, 0)) return false;
  uint64_t n = 0;
  for (int k = 7; k >= 0; k--) n = n << 8 | lenb[k];
  if (n > f->size - 8) {
    io_fail(io, TL_ERR_FORMAT, "the header length %llu is more than the %llu bytes that follow it",
            (unsigned long long)n, (unsigned long long)(f->size - 8));
    return false;
  }
  if (n > ST_MAX_HEADER) {
    io_fail(io, TL_ERR_FORMAT, "the header length %llu is over the limit of %llu bytes", (unsigned long long)n,
            ST_MAX_HEADER);
    return false;
  }
  h->data_start = 8 + n;
  h->data_len = f->size - 8 - n;
  char *text = malloc(n ? n : 1);
  if (!text) {
    io_fail(io, TL_ERR_NOMEM, "out of memory for a header of %llu bytes", (unsigned long long)n);
    return false;
  }
  bool ok = read_at(io, f, text, n, 8);
  cursor c = {text, n, 0, 8, io, true};
  char fb[16];
  skip_ws(&c);
  if (ok && !at(&c, '{')) ok = bad_header(&c, "expected '{', found %s", found(&c, fb, sizeof fb));
  bool more = false, metadata = false;
  if (ok) {
    c.i++;
    skip_ws(&c);
    more = !at(&c, '}');
    if (!more) c.i++;
  }
  while (ok && more) {
    char *name;
    size_t kpos = c.i;
    if (!(ok = json_key(&c, "a tensor name (a string)", &name))) break;
    if (!strcmp(name, "__metadata__")) {
      free(name);
      if (metadata) {
        c.i = kpos;
        ok = bad_header(&c, "'__metadata__' appears twice");
      } else {
        ok = metadata = st_parse_metadata(&c);
      }
    } else {
      if (!tl_vec_grow(&h->e, &h->cap, (size_t)h->n + 1, sizeof *h->e)) {
        free(name);
        ok = false;
        io_fail(io, TL_ERR_NOMEM, "out of memory reading the header");
        break;
      }
      st_entry *e = &h->e[h->n++];
      memset(e, 0, sizeof *e);
      e->name = name;
      ok = st_parse_tensor(&c, e);
    }
    if (ok) ok = json_next(&c, '}', &more);
  }
  if (ok) {
    skip_ws(&c);
    if (c.i < c.n) ok = bad_header(&c, "unexpected %s after the header's closing '}'", found(&c, fb, sizeof fb));
  }
  free(text);
  if (ok) {
    if (h->n > 1) qsort(h->e, (size_t)h->n, sizeof *h->e, by_name);
    for (int i = 1; i < h->n && ok; i++)
      if (!strcmp(h->e[i - 1].name, h->e[i].name)) {
        io_fail(io, TL_ERR_FORMAT, "tensor '%s' appears twice in the header", h->e[i].name);
        ok = false;
      }
  }
  if (ok) ok = st_check_layout(io, h);
  if (!ok) st_header_free(h);
  return ok;
}

static tl_tensor *st_read_tensor(const io_ctx *io, const in_file *f, const st_header *h, const st_entry *e) {
  return read_tensor(io, f, e->dtype, e->ndim, e->shape, h->data_start + (uint64_t)e->begin);
}

tl_status tl_load_safetensors(tl_ctx *ctx, const char *path, int *n, char ***names, tl_tensor ***tensors) {
  if (n) *n = 0;
  if (names) *names = NULL;
  if (tensors) *tensors = NULL;
  if (!ctx) return TL_ERR_ARG;
  if (!path) return tl_error_set(&ctx->err, TL_ERR_ARG, "load_safetensors: path is NULL");
  if (!n) return tl_error_set(&ctx->err, TL_ERR_ARG, "load_safetensors: n is NULL");
  io_ctx io = {ctx, "load_safetensors", path};
  in_file f;
  if (!in_open(&io, &f)) return ctx->err.status;
  st_header h;
  if (!st_read_header(&io, &f, &h)) {
    in_close(&f);
    return ctx->err.status;
  }
  /* names: one block, the pointers (NULL-terminated) then the strings */
  size_t bytes = ((size_t)h.n + 1) * sizeof(char *);
  for (int i = 0; i < h.n; i++) bytes += strlen(h.e[i].name) + 1;
  char **nm = names ? malloc(bytes) : NULL;
  tl_tensor **ts = tensors ? calloc((size_t)h.n + 1, sizeof *ts) : NULL;
  tl_status st = TL_OK;
  if ((names && !nm) || (tensors && !ts)) st = io_fail(&io, TL_ERR_NOMEM, "out of memory for %d names", h.n);
  if (!st && nm) {
    char *p = (char *)(nm + h.n + 1);
    for (int i = 0; i < h.n; i++) {
      size_t len = strlen(h.e[i].name) + 1;
      memcpy(p, h.e[i].name, len);
      nm[i] = p;
      p += len;
    }
    nm[h.n] = NULL;
  }
  for (int i = 0; !st && ts && i < h.n; i++)
    if (!(ts[i] = st_read_tensor(&io, &f, &h, &h.e[i]))) st = ctx->err.status ? ctx->err.status : TL_ERR_INTERNAL;
  if (st) { /* nothing half-loaded is handed back */
    for (int i = 0; ts && i < h.n; i++) tl_release(ts[i]);
    free(ts);
    free(nm);
  } else {
    *n = h.n;
    if (names) *names = nm;
    if (tensors) *tensors = ts;
  }
  st_header_free(&h);
  in_close(&f);
  return st;
}

tl_tensor *tl_load_safetensors_one(tl_ctx *ctx, const char *path, const char *name) {
  if (!ctx) return NULL;
  if (!path || !name) {
    tl_error_set(&ctx->err, TL_ERR_ARG, "load_safetensors_one: %s is NULL", path ? "name" : "path");
    return NULL;
  }
  io_ctx io = {ctx, "load_safetensors_one", path};
  in_file f;
  if (!in_open(&io, &f)) return NULL;
  st_header h;
  tl_tensor *t = NULL;
  if (st_read_header(&io, &f, &h)) {
    st_entry key = {.name = (char *)name};
    const st_entry *e = h.n ? bsearch(&key, h.e, (size_t)h.n, sizeof *h.e, by_name) : NULL;
    if (e) {
      t = st_read_tensor(&io, &f, &h, e);
    } else {
      /* name the ones there are, so a misspelling shows */
      char list[600];
      size_t used = 0;
      list[0] = 0;
      for (int i = 0; i < h.n && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s'%.100s'", i ? ", " : "", h.e[i].name);
      if (used >= sizeof list) snprintf(list + sizeof list - 5, 5, ", ..");
      io_fail(&io, TL_ERR_ARG, "no tensor named '%s' (the file has %d%s%s)", name, h.n, h.n ? ": " : "", list);
    }
    st_header_free(&h);
  }
  in_close(&f);
  return t;
}

/* JSON string of a name: quotes, backslashes and control characters escaped; the
 * rest (valid UTF-8, checked before) as it is. */
static void json_put_string(tl_strbuf *s, const char *name) {
  tl_strbuf_puts(s, "\"");
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    if (*p == '"' || *p == '\\') tl_strbuf_printf(s, "\\%c", *p);
    else if (*p < 0x20) tl_strbuf_printf(s, "\\u%04x", *p);
    else tl_strbuf_printf(s, "%c", *p);
  }
  tl_strbuf_puts(s, "\"");
}

typedef struct {
  const char *name;
  int index;
} named;
static int named_cmp(const void *a, const void *b) { return strcmp(((const named *)a)->name, ((const named *)b)->name); }

/* Checks the names: present, valid UTF-8, not the reserved __metadata__, no two alike. */
static tl_status st_check_names(const io_ctx *io, int n, const char *const *names) {
  named *sorted = malloc(((size_t)n + 1) * sizeof *sorted);
  if (!sorted) return io_fail(io, TL_ERR_NOMEM, "out of memory");
  tl_status st = TL_OK;
  for (int i = 0; i < n && !st; i++) {
    if (!names[i]) st = io_fail(io, TL_ERR_ARG, "name %d is NULL", i);
    else if (!utf8_valid(names[i])) st = io_fail(io, TL_ERR_ARG, "name %d is not valid UTF-8", i);
    else if (!strcmp(names[i], "__metadata__"))
      st = io_fail(io, TL_ERR_ARG, "name %d is '__metadata__', which the format reserves", i);
    sorted[i] = (named){names[i], i};
  }
  if (!st && n > 1) qsort(sorted, (size_t)n, sizeof *sorted, named_cmp);
  for (int i = 1; i < n && !st; i++)
    if (!strcmp(sorted[i - 1].name, sorted[i].name))
      st = io_fail(io, TL_ERR_ARG, "the name '%s' is given twice (tensors %d and %d)", sorted[i].name,
                   sorted[i - 1].index < sorted[i].index ? sorted[i - 1].index : sorted[i].index,
                   sorted[i - 1].index < sorted[i].index ? sorted[i].index : sorted[i - 1].index);
  free(sorted);
  return st;
}

tl_status tl_save_safetensors(tl_ctx *ctx, const char *path, int n, const char *const *names,
                              tl_tensor *const *tensors) {
  if (!ctx) return TL_ERR_ARG;
  if (!path) return tl_error_set(&ctx->err, TL_ERR_ARG, "save_safetensors: path is NULL");
  io_ctx io = {ctx, "save_safetensors", path};
  if (n < 0) return io_fail(&io, TL_ERR_ARG, "n is %d", n);
  if (n > 0 && (!names || !tensors))
    return io_fail(&io, TL_ERR_ARG, "the %s array is NULL (n = %d)", names ? "tensor" : "name", n);
  tl_status st = st_check_names(&io, n, names);
  if (st) return st;
  for (int i = 0; i < n; i++) {
    /* a NULL tensor is an earlier call's failure: keep its message (set one if none) */
    if (!tensors[i])
      return ctx->err.status ? TL_ERR_ARG : io_fail(&io, TL_ERR_ARG, "tensor %d ('%s') is NULL", i, names[i]);
    tl_tensor *t = tl_api_tensor(tensors[i], "save_safetensors");
    if (!t) return TL_ERR_ARG;
    if (t->slot.ctx != ctx)
      return io_fail(&io, TL_ERR_ARG, "tensor %d ('%s') belongs to another context", i, names[i]);
    if ((st = tl_realize(tensors[i]))) return st;
  }
  /* the header, tensors in the order given, then spaces to a multiple of 8 bytes (as
   * the reference writer pads, so the data starts aligned) */
  tl_strbuf s = {0};
  tl_strbuf_puts(&s, "{");
  uint64_t off = 0;
  for (int i = 0; i < n; i++) {
    const tl_uop *u = tl_api_tensor(tensors[i], "save_safetensors")->u;
    uint64_t nbytes = (uint64_t)tl_uop_numel(u) * tl_dtype_size((tl_dtype)u->dtype);
    if (i) tl_strbuf_puts(&s, ",");
    json_put_string(&s, names[i]);
    tl_strbuf_printf(&s, ":{\"dtype\":\"%s\",\"shape\":[", st_type_name((tl_dtype)u->dtype));
    for (int d = 0; d < u->ndim; d++) tl_strbuf_printf(&s, "%s%lld", d ? "," : "", (long long)u->shape[d]);
    tl_strbuf_printf(&s, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                     (unsigned long long)(off + nbytes));
    off += nbytes; /* n tensors of at most 2^43 bytes each, n < 2^31: no overflow */
  }
  tl_strbuf_puts(&s, "}");
  while (s.len % 8) tl_strbuf_puts(&s, " ");
  if (s.oom) {
    tl_strbuf_free(&s);
    return io_fail(&io, TL_ERR_NOMEM, "out of memory for the header");
  }
  unsigned char lenb[8];
  for (int k = 0; k < 8; k++) lenb[k] = (unsigned char)((uint64_t)s.len >> (8 * k));
  out_file w;
  bool ok = out_open(&io, &w) && out_write(&io, &w, lenb, 8) && out_write(&io, &w, s.data, s.len);
  tl_strbuf_free(&s);
  for (int i = 0; ok && i < n; i++) {
    const tl_uop *u = tl_api_tensor(tensors[i], "save_safetensors")->u;
    const void *data = tl_api_host_data(ctx, u->arg.p, false);
    if (!data) out_abort(&w);
    ok = data && out_write(&io, &w, data, (uint64_t)tl_uop_numel(u) * tl_dtype_size((tl_dtype)u->dtype));
  }
  return ok ? out_commit(&io, &w) : ctx->err.status;
}
