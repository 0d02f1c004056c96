/* test_tensor_io.c — tensor files (.npy and .safetensors) against an independent
 * implementation: numpy (/usr/bin/python3 with python3-numpy) reads the files TL writes
 * and writes files TL reads; safetensors files are parsed and written in the test's
 * Python with json and numpy.frombuffer only. Python runs with fork/execv, a fixed
 * script and a fresh tl_test_tmpdir directory; a missing python or numpy fails the tests.
 * Malformed files are built byte by byte here, and each must give its exact message. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "tl.h"

/* ---- helpers ------------------------------------------------------------------ */

static char *make_dir(void) {
  char *dir = tl_test_tmpdir();
  if (!dir) tl_test_fail(__FILE__, __LINE__, "tl_test_tmpdir failed");
  return dir;
}

/* The number of entries of dir whose names contain `part` (NULL: every entry). */
static int count_entries(const char *dir, const char *part) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return -1;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && (!part || strstr(e->d_name, part))) n++;
  closedir(d);
  return n;
}

static const char *path_in(char *buf, size_t cap, const char *dir, const char *name) {
  snprintf(buf, cap, "%s/%s", dir, name);
  return buf;
}

static void write_bytes(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n) tl_test_fail(__FILE__, __LINE__, "cannot write %s", path);
  if (f) fclose(f);
}

static char *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  *n = 0;
  if (!f) return NULL;
  char *s = NULL;
  size_t cap = 0;
  for (int ch; (ch = fgetc(f)) != EOF;) {
    if (*n + 1 >= cap) {
      cap = cap ? cap * 2 : 256;
      s = realloc(s, cap);
    }
    s[(*n)++] = (char)ch;
  }
  fclose(f);
  return s ? s : calloc(1, 1);
}

/* t holds the dtype, shape and bytes given */
static void check_tensor(tl_tensor *t, tl_dtype dtype, int ndim, const int64_t *shape, const void *bytes,
                         size_t nbytes, const char *file, int line) {
  if (!t) {
    tl_test_fail(file, line, "tensor is NULL");
    return;
  }
  if (tl_get_dtype(t) != dtype || tl_ndim(t) != ndim) {
    tl_test_fail(file, line, "dtype %s rank %d, expected %s rank %d", tl_dtype_name(tl_get_dtype(t)), tl_ndim(t),
                 tl_dtype_name(dtype), ndim);
    return;
  }
  for (int i = 0; i < ndim; i++)
    if (tl_dim(t, i) != shape[i]) {
      tl_test_fail(file, line, "axis %d has size %lld, expected %lld", i, (long long)tl_dim(t, i),
                   (long long)shape[i]);
      return;
    }
  const void *d = tl_data(t);
  if (nbytes && (!d || memcmp(d, bytes, nbytes)))
    tl_test_fail(file, line, "values differ from those expected");
}
#define CHECK_TENSOR(t, dtype, ndim, shape, bytes, nbytes) \
  check_tensor((t), (dtype), (ndim), (shape), (bytes), (nbytes), __FILE__, __LINE__)

/* the last error is "OP: PATH: msg" with status st */
static void check_error(tl_ctx *ctx, tl_status st, const char *op, const char *path, const char *msg,
                        const char *file, int line) {
  char want[2048];
  snprintf(want, sizeof want, "%s: %s: %s", op, path, msg);
  if (strcmp(tl_last_error(ctx), want))
    tl_test_fail(file, line, "error\n\"%s\"\nexpected\n\"%s\"", tl_last_error(ctx), want);
  if (tl_last_status(ctx) != st)
    tl_test_fail(file, line, "status %d, expected %d", (int)tl_last_status(ctx), (int)st);
}
#define CHECK_ERROR(ctx, st, op, path, msg) check_error((ctx), (st), (op), (path), (msg), __FILE__, __LINE__)

/* load_npy of the file fails with msg */
static void npy_fails(tl_ctx *ctx, const char *path, tl_status st, const char *msg, const char *file, int line) {
  tl_clear_error(ctx);
  tl_tensor *t = tl_load_npy(ctx, path);
  if (t) tl_test_fail(file, line, "load_npy of %s succeeded", path);
  check_error(ctx, st, "load_npy", path, msg, file, line);
}
#define NPY_FAILS(ctx, path, st, msg) npy_fails((ctx), (path), (st), (msg), __FILE__, __LINE__)

/* An .npy file: version major.0, the header text as given (no padding), then ndata
 * bytes of data. */
static void write_npy(const char *path, int major, const char *header, const void *data, size_t ndata) {
  size_t hl = strlen(header), pre = major == 1 ? 10 : 12;
  char *b = calloc(pre + hl + ndata + 1, 1);
  memcpy(b, "\x93NUMPY", 6);
  b[6] = (char)major;
  for (size_t i = 0; i < pre - 8; i++) b[8 + i] = (char)(hl >> (8 * i));
  memcpy(b + pre, header, hl);
  if (ndata) {
    if (data) memcpy(b + pre + hl, data, ndata);
    else memset(b + pre + hl, 0, ndata);
  }
  write_bytes(path, b, pre + hl + ndata);
  free(b);
}

/* A .safetensors file: the 8-byte length of the header as given, the header, the data. */
static void write_st(const char *path, const char *header, const void *data, size_t ndata) {
  size_t hl = strlen(header);
  char *b = calloc(8 + hl + ndata + 1, 1);
  for (int i = 0; i < 8; i++) b[i] = (char)((uint64_t)hl >> (8 * i));
  memcpy(b + 8, header, hl);
  if (ndata) {
    if (data) memcpy(b + 8 + hl, data, ndata);
    else memset(b + 8 + hl, 0, ndata);
  }
  write_bytes(path, b, 8 + hl + ndata);
  free(b);
}

static void st_fails(tl_ctx *ctx, const char *path, tl_status st, const char *msg, const char *file, int line) {
  tl_clear_error(ctx);
  int n = -1;
  char **names = (char **)1;
  tl_tensor **ts = (tl_tensor **)1;
  tl_status got = tl_load_safetensors(ctx, path, &n, &names, &ts);
  if (got == TL_OK || n != 0 || names || ts)
    tl_test_fail(file, line, "load_safetensors of %s: status %d, n %d, arrays %p %p", path, (int)got, n,
                 (void *)names, (void *)ts);
  check_error(ctx, st, "load_safetensors", path, msg, file, line);
}
#define ST_FAILS(ctx, path, st, msg) st_fails((ctx), (path), (st), (msg), __FILE__, __LINE__)

/* a safetensors file with this header and zeroed data, which must fail with msg */
#define ST_HEADER_FAILS(ctx, path, header, ndata, st, msg) \
  do {                                                     \
    write_st((path), (header), NULL, (ndata));             \
    ST_FAILS((ctx), (path), (st), (msg));                  \
  } while (0)

#define NPY_HEADER_FAILS(ctx, path, header, ndata, st, msg) \
  do {                                                      \
    write_npy((path), 1, (header), NULL, (ndata));          \
    NPY_FAILS((ctx), (path), (st), (msg));                  \
  } while (0)

static tl_tensor *from(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape, const void *data) {
  return tl_from_data(ctx, dtype, ndim, shape, data);
}

/* ---- .npy: TL writes, numpy reads --------------------------------------------------- */
static const char npy_check_py[] =
    "import sys, numpy as np\n"
    "d = sys.argv[1]\n"
    "E = {\n"
    " 'b': np.array([[1, 0, 0], [1, 1, 0]], dtype=bool),\n"
    " 'i32': np.array([0, -1, 2**31 - 1, -2**31], dtype='<i4'),\n"
    " 'i64': np.array([[-2**63, -1], [0, 2**63 - 1]], dtype='<i8'),\n"
    " 'f32': np.arange(24, dtype='<f4').reshape(2, 3, 4) * np.float32(0.5) - np.float32(3),\n"
    " 'f64': np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1 / 3]),\n"
    " 'scalar': np.array(3.25),\n"
    " 'empty': np.zeros((0,), dtype='<f4'),\n"
    " 'empty3': np.zeros((2, 0, 3), dtype='<i8'),\n"
    " 'transposed': np.arange(6, dtype='<i8').reshape(2, 3).T,\n"
    " 'strided': np.arange(10, dtype='<f4')[1:9:3],\n"
    " 'expanded': np.broadcast_to(np.array([[1.5], [2.5], [3.5]]), (3, 4)),\n"
    " 'flipped': np.arange(6, dtype='<i4').reshape(2, 3)[::-1, ::-1],\n"
    " 'rank8': np.arange(16, dtype='<i4').reshape(1, 2, 1, 2, 1, 2, 1, 2),\n"
    "}\n"
    "for name, e in E.items():\n"
    "  p = d + '/' + name + '.npy'\n"
    "  with open(p, 'rb') as f:\n"
    "    version = np.lib.format.read_magic(f)\n"
    "    shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)\n"
    "    aligned = f.tell() % 64 == 0\n"
    "  a = np.load(p)\n"
    "  ok = (version == (1, 0) and not fortran and aligned and a.dtype == e.dtype and a.shape == e.shape\n"
    "        and a.tobytes() == np.ascontiguousarray(e).tobytes())\n"
    "  print(('ok ' if ok else 'FAIL ') + name + ('' if ok else ' %r %r %r %r' % (version, a.dtype, a.shape, a)))\n";

TEST(tensor_io_npy_numpy_reads_tl_files) {
  char *dir = make_dir();
  if (!dir) return;
  tl_ctx *ctx = tl_init();
  const char *names[] = {"b", "i32", "i64", "f32", "f64", "scalar", "empty", "empty3", "transposed",
                         "strided", "expanded", "flipped", "rank8"};
  enum { N = sizeof names / sizeof *names };
  tl_tensor *ts[N];
  uint8_t b[6] = {1, 0, 0, 1, 1, 0};
  int32_t i32[4] = {0, -1, INT32_MAX, INT32_MIN};
  int64_t i64[4] = {INT64_MIN, -1, 0, INT64_MAX};
  double f64[6] = {NAN, INFINITY, -INFINITY, -0.0, 4.9406564584124654e-324, 1.0 / 3.0};
  double col[3] = {1.5, 2.5, 3.5};
  ts[0] = from(ctx, TL_BOOL, 2, (int64_t[]){2, 3}, b);
  ts[1] = from(ctx, TL_I32, 1, (int64_t[]){4}, i32);
  ts[2] = from(ctx, TL_I64, 2, (int64_t[]){2, 2}, i64);
  ts[3] = tl_add_scalar(tl_mul_scalar(tl_reshape(tl_arange(ctx, TL_F32, 0, 24, 1), 3, (int64_t[]){2, 3, 4}), 0.5), -3);
  ts[4] = from(ctx, TL_F64, 1, (int64_t[]){6}, f64);
  ts[5] = tl_scalar(ctx, TL_F64, 3.25);
  ts[6] = tl_zeros(ctx, TL_F32, 1, (int64_t[]){0});
  ts[7] = tl_zeros(ctx, TL_I64, 3, (int64_t[]){2, 0, 3});
  ts[8] = tl_transpose(tl_reshape(tl_arange(ctx, TL_I64, 0, 6, 1), 2, (int64_t[]){2, 3}), 0, 1);
  ts[9] = tl_slice(tl_arange(ctx, TL_F32, 0, 10, 1), 0, 1, 9, 3);
  ts[10] = tl_expand(from(ctx, TL_F64, 2, (int64_t[]){3, 1}, col), 2, (int64_t[]){3, 4});
  ts[11] = tl_flip(tl_reshape(tl_arange(ctx, TL_I32, 0, 6, 1), 2, (int64_t[]){2, 3}), 2, (int[]){0, 1});
  ts[12] = tl_reshape(tl_arange(ctx, TL_I32, 0, 16, 1), 8, (int64_t[]){1, 2, 1, 2, 1, 2, 1, 2});
  char p[4200];
  for (int i = 0; i < N; i++) {
    snprintf(p, sizeof p, "%s/%s.npy", dir, names[i]);
    CHECK(ts[i] != NULL);
    CHECK_INT(tl_save_npy(ts[i], p), TL_OK);
  }
  CHECK_INT(count_entries(dir, ".tmp-"), 0); /* no temporary file left behind */
  CHECK_PYTHON(npy_check_py, dir,
               "ok b\nok i32\nok i64\nok f32\nok f64\nok scalar\nok empty\nok empty3\nok transposed\n"
               "ok strided\nok expanded\nok flipped\nok rank8\n");
  /* and TL reads them back as they were */
  for (int i = 0; i < N; i++) {
    snprintf(p, sizeof p, "%s/%s.npy", dir, names[i]);
    tl_tensor *t = tl_load_npy(ctx, p);
    int64_t shape[TL_MAX_DIMS];
    for (int d = 0; d < tl_ndim(ts[i]); d++) shape[d] = tl_dim(ts[i], d);
    size_t nbytes = (size_t)tl_numel(ts[i]) * tl_dtype_size(tl_get_dtype(ts[i]));
    CHECK_TENSOR(t, tl_get_dtype(ts[i]), tl_ndim(ts[i]), shape, tl_data(ts[i]), nbytes);
    CHECK(!tl_requires_grad(t));
  }
  /* the header numpy writes, to the byte: sorted keys, "(3,)" for one axis, spaces and a
   * newline up to 64 bytes */
  size_t n;
  snprintf(p, sizeof p, "%s/strided.npy", dir);
  char *file = read_all(p, &n);
  CHECK_INT(n, 128 + 12);
  if (file && n >= 128) {
    const char want[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
    CHECK(!memcmp(file, want, sizeof want - 1));
    CHECK_INT(file[127], '\n');
    for (size_t i = sizeof want - 1; i < 127; i++) CHECK_INT(file[i], ' ');
  }
  free(file);
  TEST_SHUTDOWN(ctx);
  tl_test_rm_tree(dir);
}

/* ---- .npy: numpy writes, TL reads ---------------------------------------------------- */
static const char npy_write_py[] =
    "import sys, numpy as np\n"
    "d = sys.argv[1] + '/'\n"
    "np.save(d + 'f32.npy', (np.arange(24, dtype='<f4').reshape(2, 3, 4) - np.float32(7)) / np.float32(4))\n"
    "np.save(d + 'f64.npy', np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1 / 3]))\n"
    "np.save(d + 'i64.npy', np.array([-2**63, -1, 0, 2**63 - 1, 123456789012345], dtype='<i8'))\n"
    "np.save(d + 'i32.npy', np.arange(-6, 6, dtype='<i4').reshape(3, 4)[:, ::2])\n"
    "np.save(d + 'b.npy', np.array([[True, False, True], [False, False, True]]))\n"
    "np.save(d + 'scalar.npy', np.float32(2.5))\n"
    "np.save(d + 'empty.npy', np.zeros((3, 0), dtype='<i8'))\n"
    "np.save(d + 'rank8.npy', np.arange(256, dtype='<i4').reshape((2,) * 8))\n"
    "with open(d + 'v2.npy', 'wb') as f:\n"
    "  np.lib.format.write_array(f, np.arange(5, dtype='<f8') * 1.5, version=(2, 0))\n"
    "np.save(d + 'fortran.npy', np.asfortranarray(np.arange(6, dtype='<f4').reshape(2, 3)))\n"
    "np.save(d + 'big.npy', np.arange(3, dtype='>f4'))\n"
    "np.save(d + 'big_i8.npy', np.arange(3, dtype='>i8'))\n"
    "np.save(d + 'c8.npy', np.arange(3, dtype='<c8'))\n"
    "np.save(d + 'void2.npy', np.zeros(3, dtype='V2'))\n"
    "print('written')\n";

TEST(tensor_io_npy_tl_reads_numpy_files) {
  char *dir = make_dir();
  if (!dir) return;
  CHECK_PYTHON(npy_write_py, dir, "written\n");
  tl_ctx *ctx = tl_init();
  char p[4200];
  float f32[24];
  for (int i = 0; i < 24; i++) f32[i] = ((float)i - 7.0f) / 4.0f;
  CHECK_TENSOR(tl_load_npy(ctx, path_in(p, sizeof p, dir, "f32.npy")), TL_F32, 3, ((int64_t[]){2, 3, 4}), f32,
               sizeof f32);
  tl_tensor *t = tl_load_npy(ctx, path_in(p, sizeof p, dir, "f64.npy"));
  double f64[6] = {NAN, INFINITY, -INFINITY, -0.0, 4.9406564584124654e-324, 1.0 / 3.0};
  CHECK_TENSOR(t, TL_F64, 1, ((int64_t[]){6}), NULL, 0);
  const double *got = tl_data(t);
  if (got) {
    CHECK(isnan(got[0]));
    CHECK(!memcmp(got + 1, f64 + 1, 5 * sizeof *f64)); /* -0.0 and the subnormal to the bit */
  }
  int64_t i64[5] = {INT64_MIN, -1, 0, INT64_MAX, 123456789012345};
  CHECK_TENSOR(tl_load_npy(ctx, path_in(p, sizeof p, dir, "i64.npy")), TL_I64, 1, ((int64_t[]){5}), i64,
               sizeof i64);
  int32_t i32[6] = {-6, -4, -2, 0, 2, 4}; /* numpy saved a strided view: its values */
  CHECK_TENSOR(tl_load_npy(ctx, path_in(p, sizeof p, dir, "i32.npy")), TL_I32, 2, ((int64_t[]){3, 2}), i32,
               sizeof i32);
  uint8_t b[6] = {1, 0, 1, 0, 0, 1};
  CHECK_TENSOR(tl_load_npy(ctx, path_in(p, sizeof p, dir, "b.npy")), TL_BOOL, 2, ((int64_t[]){2, 3}), b, sizeof b);
  float half = 2.5f;
  CHECK_TENSOR(tl_load_npy(ctx, path_in(p, sizeof p, dir, "scalar.npy")), TL_F32, 0, NULL, &half, sizeof half);
  CHECK_TENSOR(tl_load_npy(ctx, path_in(p, sizeof p, dir, "empty.npy")), TL_I64, 2, ((int64_t[]){3, 0}), NULL, 0);
  int32_t r8[256];
  for (int i = 0; i < 256; i++) r8[i] = i;
  CHECK_TENSOR(tl_load_npy(ctx, path_in(p, sizeof p, dir, "rank8.npy")), TL_I32, 8,
               ((int64_t[]){2, 2, 2, 2, 2, 2, 2, 2}), r8, sizeof r8);
  /* format 2.0 (a 4-byte header length) */
  size_t n;
  char *v2 = read_all(path_in(p, sizeof p, dir, "v2.npy"), &n);
  CHECK(v2 && n > 8 && v2[6] == 2 && v2[7] == 0);
  free(v2);
  double f[5] = {0, 1.5, 3, 4.5, 6};
  CHECK_TENSOR(tl_load_npy(ctx, p), TL_F64, 1, ((int64_t[]){5}), f, sizeof f);
  /* what numpy writes and TL does not read */
  NPY_FAILS(ctx, path_in(p, sizeof p, dir, "fortran.npy"), TL_ERR_FORMAT,
            "fortran_order True (column-major data) is not supported; save a C-order array (numpy: "
            "np.ascontiguousarray(a))");
  NPY_FAILS(ctx, path_in(p, sizeof p, dir, "big.npy"), TL_ERR_FORMAT,
            "big-endian data ('>f4') is not supported; numpy converts it with a.astype('<f4')");
  NPY_FAILS(ctx, path_in(p, sizeof p, dir, "big_i8.npy"), TL_ERR_FORMAT,
            "big-endian data ('>i8') is not supported; numpy converts it with a.astype('<i8')");
  NPY_FAILS(ctx, path_in(p, sizeof p, dir, "c8.npy"), TL_ERR_DTYPE,
            "dtype '<c8' is not supported (TL reads '|b1', '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8', "
            "'<f2', '<f4', '<f8')");
  NPY_FAILS(ctx, path_in(p, sizeof p, dir, "void2.npy"), TL_ERR_DTYPE,
            "dtype '|V2' is not supported (TL reads '|b1', '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8', "
            "'<f2', '<f4', '<f8')");
  TEST_SHUTDOWN(ctx);
  tl_test_rm_tree(dir);
}

/* ---- .npy: malformed files ---------------------------------------------------------- */
#define HDR(descr, order, shape) "{'descr': '" descr "', 'fortran_order': " order ", 'shape': " shape ", }"

TEST(tensor_io_npy_malformed_files_are_errors) {
  char *dir = make_dir();
  if (!dir) return;
  tl_ctx *ctx = tl_init();
  char p[4200];
  const char *f = path_in(p, sizeof p, dir, "bad.npy");
  /* the well-formed base case loads */
  float six[6] = {1, 2, 3, 4, 5, 6};
  write_npy(f, 1, HDR("<f4", "False", "(2, 3)") "\n", six, sizeof six);
  CHECK_TENSOR(tl_load_npy(ctx, f), TL_F32, 2, ((int64_t[]){2, 3}), six, sizeof six);
  /* the keys in any order, a 1-tuple without spaces, '<b1' for bool, bytes 2 as true */
  write_npy(f, 1, "{'shape':(3,),'fortran_order':False,'descr':'<b1'}", "\x00\x02\x01", 3);
  CHECK_TENSOR(tl_load_npy(ctx, f), TL_BOOL, 1, ((int64_t[]){3}), "\x00\x01\x01", 3);

  /* files that are not there or not files */
  char missing[4200];
  path_in(missing, sizeof missing, dir, "missing.npy");
  NPY_FAILS(ctx, missing, TL_ERR_IO, "cannot open: No such file or directory");
  NPY_FAILS(ctx, dir, TL_ERR_IO, "is a directory");
  /* the preamble */
  write_bytes(f, "", 0);
  NPY_FAILS(ctx, f, TL_ERR_FORMAT, "not an .npy file: it does not start with \"\\x93NUMPY\"");
  write_bytes(f, "\x93NUMPZ\x01\x00\x10\x00", 10);
  NPY_FAILS(ctx, f, TL_ERR_FORMAT, "not an .npy file: it does not start with \"\\x93NUMPY\"");
  write_bytes(f, "\x93NUMPY\x01\x00", 8);
  NPY_FAILS(ctx, f, TL_ERR_FORMAT, "truncated: 8 bytes, shorter than the 10-byte preamble");
  write_bytes(f, "\x93NUMPY\x02\x00\x10\x00", 10);
  NPY_FAILS(ctx, f, TL_ERR_FORMAT, "truncated: 10 bytes, shorter than the 12-byte preamble of format 2.0");
  write_npy(f, 3, HDR("<f4", "False", "(2,)"), NULL, 8);
  NPY_FAILS(ctx, f, TL_ERR_FORMAT, "format version 3.0 is not supported (TL reads 1.0 and 2.0)");
  /* header lengths the file cannot hold: nothing that size is allocated */
  write_bytes(f, "\x93NUMPY\x01\x00\xff\xff{'descr': '<f4'}", 26);
  NPY_FAILS(ctx, f, TL_ERR_FORMAT, "truncated: the header is 65535 bytes, but 16 follow the preamble");
  write_bytes(f, "\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14);
  NPY_FAILS(ctx, f, TL_ERR_FORMAT, "truncated: the header is 4294967295 bytes, but 2 follow the preamble");
  {
    size_t big = ((size_t)1 << 20) + 1;
    char *h = malloc(big + 1);
    memset(h, ' ', big);
    h[big] = 0;
    write_npy(f, 2, h, NULL, 0);
    free(h);
    NPY_FAILS(ctx, f, TL_ERR_FORMAT, "the header is 1048577 bytes, more than TL reads (1048576)");
  }
  /* header syntax; offsets count from the file's start (the header starts at byte 10) */
  NPY_HEADER_FAILS(ctx, f, "{'descr': '<f4' 'fortran_order': False, 'shape': (2,), }", 8, TL_ERR_FORMAT,
                   "bad header at byte 26: expected ',' or '}', found a string");
  NPY_HEADER_FAILS(ctx, f, "['descr']", 0, TL_ERR_FORMAT, "bad header at byte 10: expected '{', found '['");
  NPY_HEADER_FAILS(ctx, f, "{'descr' '<f4'}", 0, TL_ERR_FORMAT,
                   "bad header at byte 19: expected ':' after a key, found a string");
  NPY_HEADER_FAILS(ctx, f, "{descr: '<f4'}", 0, TL_ERR_FORMAT, "bad header at byte 11: expected a key, found 'd'");
  NPY_HEADER_FAILS(ctx, f, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", 8, TL_ERR_FORMAT,
                   "bad header at byte 66: unknown key 'extra'");
  NPY_HEADER_FAILS(ctx, f, "{'descr': '<f4', 'descr': '<f4'}", 0, TL_ERR_FORMAT,
                   "bad header at byte 27: key 'descr' appears twice");
  NPY_HEADER_FAILS(ctx, f, "{'descr': '<f4', 'fortran_order': False}", 0, TL_ERR_FORMAT,
                   "bad header at byte 50: the dict has no 'shape'");
  NPY_HEADER_FAILS(ctx, f, HDR("<f4", "false", "(2,)"), 8, TL_ERR_FORMAT,
                   "bad header at byte 44: expected True or False for 'fortran_order', found 'f'");
  NPY_HEADER_FAILS(ctx, f, HDR("<f4", "False", "[2]"), 8, TL_ERR_FORMAT,
                   "bad header at byte 60: 'shape' must be a tuple, not a list");
  NPY_HEADER_FAILS(ctx, f, HDR("<f4", "False", "(2)"), 8, TL_ERR_FORMAT,
                   "bad header at byte 62: the shape (2) is a number, not a tuple: a 1-d shape is written (2,)");
  NPY_HEADER_FAILS(ctx, f, HDR("<f4", "False", "(2, -3)"), 8, TL_ERR_FORMAT,
                   "bad header at byte 64: a size must not be negative");
  NPY_HEADER_FAILS(ctx, f, HDR("<f4", "False", "(2.0,)"), 8, TL_ERR_FORMAT,
                   "bad header at byte 62: a size must be an integer, without a fraction or an exponent");
  NPY_HEADER_FAILS(ctx, f, HDR("<f4", "False", "(02,)"), 8, TL_ERR_FORMAT,
                   "bad header at byte 61: a size has a leading zero");
  NPY_HEADER_FAILS(ctx, f, HDR("<f4", "False", "(2 3)"), 8, TL_ERR_FORMAT,
                   "bad header at byte 63: expected ',' or ')' in the shape, found a number");
  NPY_HEADER_FAILS(ctx, f, HDR("<f4", "False", "(99999999999999999999,)"), 8, TL_ERR_FORMAT,
                   "bad header at byte 61: a size 99999999999999999999 is too large");
  NPY_HEADER_FAILS(ctx, f, HDR("<f4", "False", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), 4, TL_ERR_FORMAT,
                   "bad header at byte 85: the shape has more than 8 axes, the most a TL tensor has");
  NPY_HEADER_FAILS(ctx, f, "{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8, TL_ERR_FORMAT,
                   "bad header at byte 20: 'descr' is a list: structured dtypes are not supported");
  NPY_HEADER_FAILS(ctx, f, "{'de\\x73cr': '<f4'}", 0, TL_ERR_FORMAT,
                   "bad header at byte 14: escapes in strings are not supported");
  NPY_HEADER_FAILS(ctx, f, "{'descr': '<f4", 0, TL_ERR_FORMAT, "bad header at byte 24: unterminated string");
  NPY_HEADER_FAILS(ctx, f, HDR("<f4", "False", "(2,)") " x\n", 8, TL_ERR_FORMAT,
                   "bad header at byte 68: unexpected 'x' after the dict");
  NPY_HEADER_FAILS(ctx, f, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 8, TL_ERR_FORMAT,
                   "bad header at byte 64: expected ',' or '}', found the end of the header");
  /* what the header says */
  NPY_HEADER_FAILS(ctx, f, HDR("<c8", "False", "(2,)"), 16, TL_ERR_DTYPE,
                   "dtype '<c8' is not supported (TL reads '|b1', '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8', "
                   "'<f2', '<f4', '<f8')");
  NPY_HEADER_FAILS(ctx, f, HDR("float32", "False", "(2,)"), 8, TL_ERR_DTYPE,
                   "dtype 'float32' is not supported (TL reads '|b1', '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8', "
                   "'<f2', '<f4', '<f8')");
  NPY_HEADER_FAILS(ctx, f, HDR(">f8", "False", "(2,)"), 16, TL_ERR_FORMAT,
                   "big-endian data ('>f8') is not supported; numpy converts it with a.astype('<f8')");
  NPY_HEADER_FAILS(ctx, f, HDR("<f4", "True", "(2, 3)"), 24, TL_ERR_FORMAT,
                   "fortran_order True (column-major data) is not supported; save a C-order array (numpy: "
                   "np.ascontiguousarray(a))");
  /* sizes: over the engine's limit (before any allocation), or not what the data holds */
  NPY_HEADER_FAILS(ctx, f, HDR("|b1", "False", "(1099511627777,)"), 1, TL_ERR_RANGE,
                   "shape [1099511627777] has 1099511627777 elements; the most a tensor may hold is 2^40 "
                   "(1099511627776)");
  NPY_HEADER_FAILS(ctx, f, HDR("<f8", "False", "(1048576, 1048577, 0)"), 0, TL_ERR_RANGE,
                   "shape [1048576, 1048577, 0] is too large: its sizes other than 0 multiply to 1099512676352; "
                   "the most a tensor may hold is 2^40 (1099511627776)");
  NPY_HEADER_FAILS(ctx, f, HDR("<f4", "False", "(2, 3)"), 20, TL_ERR_FORMAT,
                   "shape [2, 3] of dtype '<f4' needs 24 bytes of data, but 20 follow the header (truncated)");
  NPY_HEADER_FAILS(ctx, f, HDR("<f4", "False", "(2, 3)"), 28, TL_ERR_FORMAT,
                   "shape [2, 3] of dtype '<f4' needs 24 bytes of data, but 28 follow the header");
  NPY_HEADER_FAILS(ctx, f, HDR("<i8", "False", "(1000000000,)"), 8, TL_ERR_FORMAT,
                   "shape [1000000000] of dtype '<i8' needs 8000000000 bytes of data, but 8 follow the header "
                   "(truncated)");
  NPY_HEADER_FAILS(ctx, f, HDR("<i8", "False", "()"), 7, TL_ERR_FORMAT,
                   "shape [] of dtype '<i8' needs 8 bytes of data, but 7 follow the header (truncated)");
  CHECK_INT(tl_get_stats(ctx).live_tensors, 2); /* the two good loads, nothing from the failures */
  TEST_SHUTDOWN(ctx);
  tl_test_rm_tree(dir);
}

/* ---- safetensors: TL writes, Python (json + numpy.frombuffer) reads ------------------ */
static const char st_check_py[] =
    "import sys, json, struct, numpy as np\n"
    "d = sys.argv[1]\n"
    "DT = {'BOOL': '|b1', 'I32': '<i4', 'I64': '<i8', 'F32': '<f4', 'F64': '<f8'}\n"
    "E = [\n"
    " ('enc.w', np.arange(12, dtype='<f4').reshape(3, 4) * np.float32(0.25)),\n"
    " ('enc.b', np.array([-1.5, 2.5], dtype='<f8')),\n"
    " ('quote\"back\\\\slash', np.array([[True, False], [False, True]])),\n"
    " ('tab\\tname', np.array(7, dtype='<i8')),\n"
    " ('\\u00fcn\\u00efc\\u00f6d\\u00e9 \\U0001F600', np.array([2**31 - 1, -2**31, 5], dtype='<i4')),\n"
    " ('empty', np.zeros((2, 0), dtype='<f4')),\n"
    " ('view', np.arange(6, dtype='<i8').reshape(2, 3).T),\n"
    "]\n"
    "with open(d + '/model.safetensors', 'rb') as f:\n"
    "  buf = f.read()\n"
    "n = struct.unpack('<Q', buf[:8])[0]\n"
    "raw = buf[8:8 + n]\n"
    "hdr = json.loads(raw.decode('utf-8'))\n"
    "data = buf[8 + n:]\n"
    "checks = [('aligned', n % 8 == 0), ('brace', raw[:1] == b'{'), ('order', list(hdr) == [k for k, _ in E])]\n"
    "spans = []\n"
    "for i, (name, e) in enumerate(E):\n"
    "  t = hdr[name]\n"
    "  b, en = t['data_offsets']\n"
    "  spans.append((b, en))\n"
    "  a = np.frombuffer(data[b:en], dtype=DT[t['dtype']]).reshape(t['shape'])\n"
    "  checks.append((str(i), set(t) == {'dtype', 'shape', 'data_offsets'} and a.dtype == e.dtype and\n"
    "                 a.shape == e.shape and a.tobytes() == np.ascontiguousarray(e).tobytes()))\n"
    "spans.sort()\n"
    "pos, tiled = 0, True\n"
    "for b, en in spans:\n"
    "  tiled, pos = tiled and b == pos, en\n"
    "checks.append(('tiled', tiled and pos == len(data)))\n"
    "with open(d + '/none.safetensors', 'rb') as f:\n"
    "  buf = f.read()\n"
    "n = struct.unpack('<Q', buf[:8])[0]\n"
    "checks.append(('none', json.loads(buf[8:8 + n]) == {} and len(buf) == 8 + n))\n"
    "for name, ok in checks:\n"
    "  print(('ok ' if ok else 'FAIL ') + name)\n";

static const char *const st_names[] = {"enc.w", "enc.b", "quote\"back\\slash", "tab\tname",
                                       "\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9 \xf0\x9f\x98\x80", "empty", "view"};

TEST(tensor_io_safetensors_python_reads_tl_files) {
  char *dir = make_dir();
  if (!dir) return;
  tl_ctx *ctx = tl_init();
  enum { N = 7 };
  tl_tensor *ts[N];
  int32_t i32[3] = {INT32_MAX, INT32_MIN, 5};
  double bias[2] = {-1.5, 2.5};
  uint8_t eye[4] = {1, 0, 0, 1};
  ts[0] = tl_mul_scalar(tl_reshape(tl_arange(ctx, TL_F32, 0, 12, 1), 2, (int64_t[]){3, 4}), 0.25);
  ts[1] = from(ctx, TL_F64, 1, (int64_t[]){2}, bias);
  ts[2] = from(ctx, TL_BOOL, 2, (int64_t[]){2, 2}, eye);
  ts[3] = tl_scalar(ctx, TL_I64, 7);
  ts[4] = from(ctx, TL_I32, 1, (int64_t[]){3}, i32);
  ts[5] = tl_zeros(ctx, TL_F32, 2, (int64_t[]){2, 0});
  ts[6] = tl_transpose(tl_reshape(tl_arange(ctx, TL_I64, 0, 6, 1), 2, (int64_t[]){2, 3}), 0, 1);
  char p[4200], q[4200];
  path_in(p, sizeof p, dir, "model.safetensors");
  CHECK_INT(tl_save_safetensors(ctx, p, N, st_names, ts), TL_OK);
  CHECK_INT(tl_save_safetensors(ctx, path_in(q, sizeof q, dir, "none.safetensors"), 0, NULL, NULL), TL_OK);
  CHECK_INT(count_entries(dir, ".tmp-"), 0);
  CHECK_PYTHON(st_check_py, dir, "ok aligned\nok brace\nok order\nok 0\nok 1\nok 2\nok 3\nok 4\nok 5\nok 6\nok tiled\nok none\n");
  /* TL reads them back: sorted by name, byte by byte */
  int n = -1;
  char **names = NULL;
  tl_tensor **back = NULL;
  CHECK_INT(tl_load_safetensors(ctx, p, &n, &names, &back), TL_OK);
  const int order[N] = {5, 1, 0, 2, 3, 6, 4}; /* "empty" "enc.b" "enc.w" "quote.." "tab.." "view" "\xc3.." */
  CHECK_INT(n, N);
  if (n == N && names && back) {
    for (int i = 0; i < N; i++) {
      tl_tensor *t = ts[order[i]];
      CHECK_STR(names[i], st_names[order[i]]);
      int64_t shape[TL_MAX_DIMS];
      for (int d = 0; d < tl_ndim(t); d++) shape[d] = tl_dim(t, d);
      CHECK_TENSOR(back[i], tl_get_dtype(t), tl_ndim(t), shape, tl_data(t),
                   (size_t)tl_numel(t) * tl_dtype_size(tl_get_dtype(t)));
    }
    CHECK(names[N] == NULL && back[N] == NULL);
  }
  tl_free(names);
  tl_free(back);
  /* the names alone */
  CHECK_INT(tl_load_safetensors(ctx, p, &n, &names, NULL), TL_OK);
  CHECK_INT(n, N);
  if (names) CHECK_STR(names[0], "empty");
  tl_free(names);
  /* one, by name */
  CHECK_TENSOR(tl_load_safetensors_one(ctx, p, "tab\tname"), TL_I64, 0, NULL, &(int64_t){7}, 8);
  CHECK_INT(tl_load_safetensors(ctx, q, &n, &names, &back), TL_OK);
  CHECK_INT(n, 0);
  CHECK(names && !names[0] && back && !back[0]);
  tl_free(names);
  tl_free(back);
  TEST_SHUTDOWN(ctx);
  tl_test_rm_tree(dir);
}

/* ---- safetensors: Python writes, TL reads ------------------------------------------- */
static const char st_write_py[] =
    "import sys, json, struct, numpy as np\n"
    "d = sys.argv[1]\n"
    "T = {\n"
    " 'layer.0.weight': np.arange(6, dtype='<f4').reshape(2, 3) / np.float32(8),\n"
    " 'layer.0.bias': np.array([0.1, -0.2], dtype='<f8'),\n"
    " 'mask': np.array([True, False, True, True]),\n"
    " 'steps': np.array(123456789012, dtype='<i8'),\n"
    " 'ids': np.array([[3, -4], [5, 2**31 - 1]], dtype='<i4'),\n"
    " 'caf\\u00e9 \\U0001F600': np.array([1.0], dtype='<f4'),\n"
    " 'nothing': np.zeros((0, 4), dtype='<f8'),\n"
    "}\n"
    "DT = {'|b1': 'BOOL', '<i4': 'I32', '<i8': 'I64', '<f4': 'F32', '<f8': 'F64'}\n"
    "entries, data = {}, b''\n"
    "for name in ['ids', 'nothing', 'mask', 'layer.0.weight', 'steps', 'caf\\u00e9 \\U0001F600', 'layer.0.bias']:\n"
    "  b = T[name].tobytes()\n"
    "  entries[name] = {'dtype': DT[T[name].dtype.str], 'shape': list(T[name].shape),\n"
    "                   'data_offsets': [len(data), len(data) + len(b)]}\n"
    "  data += b\n"
    "header = {'__metadata__': {'format': 'pt', 'note': 'quote \" backslash \\\\ newline \\n'}}\n"
    "for name in sorted(entries, reverse=True):\n"
    "  header[name] = entries[name]\n"
    "for fname, text in [('py', json.dumps(header)), ('pretty', json.dumps(header, indent=1, ensure_ascii=False))]:\n"
    "  raw = text.encode('utf-8')\n"
    "  raw += b' ' * (-len(raw) % 8)\n"
    "  with open(d + '/' + fname + '.safetensors', 'wb') as f:\n"
    "    f.write(struct.pack('<Q', len(raw)) + raw + data)\n"
    "print('written')\n";

TEST(tensor_io_safetensors_tl_reads_python_files) {
  char *dir = make_dir();
  if (!dir) return;
  CHECK_PYTHON(st_write_py, dir, "written\n");
  tl_ctx *ctx = tl_init();
  const char *want[] = {"caf\xc3\xa9 \xf0\x9f\x98\x80", "ids", "layer.0.bias", "layer.0.weight",
                        "mask", "nothing", "steps"};
  float one = 1, w[6] = {0, 0.125f, 0.25f, 0.375f, 0.5f, 0.625f};
  int32_t ids[4] = {3, -4, 5, INT32_MAX};
  double bias[2] = {0.1, -0.2};
  uint8_t mask[4] = {1, 0, 1, 1};
  int64_t steps = 123456789012;
  const char *files[] = {"py.safetensors", "pretty.safetensors"};
  char p[4200];
  for (int k = 0; k < 2; k++) {
    path_in(p, sizeof p, dir, files[k]);
    int n = -1;
    char **names = NULL;
    tl_tensor **ts = NULL;
    CHECK_INT(tl_load_safetensors(ctx, p, &n, &names, &ts), TL_OK);
    CHECK_INT(n, 7);
    if (n != 7 || !names || !ts) continue;
    for (int i = 0; i < 7; i++) CHECK_STR(names[i], want[i]);
    CHECK_TENSOR(ts[0], TL_F32, 1, ((int64_t[]){1}), &one, sizeof one);
    CHECK_TENSOR(ts[1], TL_I32, 2, ((int64_t[]){2, 2}), ids, sizeof ids);
    CHECK_TENSOR(ts[2], TL_F64, 1, ((int64_t[]){2}), bias, sizeof bias);
    CHECK_TENSOR(ts[3], TL_F32, 2, ((int64_t[]){2, 3}), w, sizeof w);
    CHECK_TENSOR(ts[4], TL_BOOL, 1, ((int64_t[]){4}), mask, sizeof mask);
    CHECK_TENSOR(ts[5], TL_F64, 2, ((int64_t[]){0, 4}), NULL, 0);
    CHECK_TENSOR(ts[6], TL_I64, 0, NULL, &steps, sizeof steps);
    tl_free(names);
    tl_free(ts);
    CHECK_TENSOR(tl_load_safetensors_one(ctx, p, "layer.0.weight"), TL_F32, 2, ((int64_t[]){2, 3}), w, sizeof w);
    CHECK_TENSOR(tl_load_safetensors_one(ctx, p, want[0]), TL_F32, 1, ((int64_t[]){1}), &one, sizeof one);
    tl_clear_error(ctx);
    CHECK(tl_load_safetensors_one(ctx, p, "layer.1.weight") == NULL);
    CHECK_ERROR(ctx, TL_ERR_ARG, "load_safetensors_one", p,
                "no tensor named 'layer.1.weight' (the file has 7: 'caf\xc3\xa9 \xf0\x9f\x98\x80', 'ids', "
                "'layer.0.bias', 'layer.0.weight', 'mask', 'nothing', 'steps')");
  }
  TEST_SHUTDOWN(ctx);
  tl_test_rm_tree(dir);
}

/* ---- safetensors: malformed files ---------------------------------------------------- */
#define T1(fields) "{\"a\":{" fields "}}"
#define F32_2 "\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]"

TEST(tensor_io_safetensors_malformed_files_are_errors) {
  char *dir = make_dir();
  if (!dir) return;
  tl_ctx *ctx = tl_init();
  char p[4200];
  const char *f = path_in(p, sizeof p, dir, "bad.safetensors");
  /* the base case loads; JSON whitespace and an empty metadata object are fine */
  float two[2] = {1.5f, -2};
  write_st(f, " {\"a\" : {" F32_2 "} , \"__metadata__\":{}}\t\n  ", two, sizeof two);
  CHECK_TENSOR(tl_load_safetensors_one(ctx, f, "a"), TL_F32, 1, ((int64_t[]){2}), two, sizeof two);

  char missing[4200];
  path_in(missing, sizeof missing, dir, "missing.safetensors");
  ST_FAILS(ctx, missing, TL_ERR_IO, "cannot open: No such file or directory");
  ST_FAILS(ctx, dir, TL_ERR_IO, "is a directory");
  /* the header length */
  write_bytes(f, "\x05\x00\x00\x00\x00", 5);
  ST_FAILS(ctx, f, TL_ERR_FORMAT, "truncated: 5 bytes, fewer than the 8 of the header length");
  write_bytes(f, "\xff\xff\xff\xff\xff\xff\xff\xff{}        ", 18);
  ST_FAILS(ctx, f, TL_ERR_FORMAT,
           "the header length 18446744073709551615 is more than the 10 bytes that follow it");
  write_bytes(f, "\x20\x00\x00\x00\x00\x00\x00\x00{}", 10);
  ST_FAILS(ctx, f, TL_ERR_FORMAT, "the header length 32 is more than the 2 bytes that follow it");
  {
    /* over the format's limit, in a sparse file that really is that long */
    int fd = open(f, O_WRONLY | O_TRUNC);
    CHECK(fd >= 0 && write(fd, "\x08\xe1\xf5\x05\x00\x00\x00\x00", 8) == 8 && ftruncate(fd, 100000016) == 0);
    if (fd >= 0) close(fd);
    ST_FAILS(ctx, f, TL_ERR_FORMAT, "the header length 100000008 is over the limit of 100000000 bytes");
  }
  /* JSON syntax; offsets count from the file's start (the header starts at byte 8) */
  ST_HEADER_FAILS(ctx, f, "", 0, TL_ERR_FORMAT, "bad header at byte 8: expected '{', found the end of the header");
  ST_HEADER_FAILS(ctx, f, "hello", 0, TL_ERR_FORMAT, "bad header at byte 8: expected '{', found 'h'");
  ST_HEADER_FAILS(ctx, f, "{\"a\":{" F32_2 "},}", 8, TL_ERR_FORMAT,
                  "bad header at byte 62: expected a tensor name (a string), found '}'");
  ST_HEADER_FAILS(ctx, f, "{\"a\"{}}", 0, TL_ERR_FORMAT, "bad header at byte 12: expected ':' after a key, found '{'");
  ST_HEADER_FAILS(ctx, f, "{'a':{}}", 0, TL_ERR_FORMAT,
                  "bad header at byte 9: expected a tensor name (a string), found a single-quoted string (JSON strings take "
                  "double quotes)");
  ST_HEADER_FAILS(ctx, f, "{\"a\":{" F32_2 "} x", 8, TL_ERR_FORMAT,
                  "bad header at byte 62: expected ',' or '}', found 'x'");
  ST_HEADER_FAILS(ctx, f, "{\"a\":{" F32_2 "}}}", 8, TL_ERR_FORMAT,
                  "bad header at byte 62: unexpected '}' after the header's closing '}'");
  ST_HEADER_FAILS(ctx, f, "{\"a\":{" F32_2 "}", 8, TL_ERR_FORMAT,
                  "bad header at byte 61: expected ',' or '}', found the end of the header");
  ST_HEADER_FAILS(ctx, f, "{\"a\":true}", 0, TL_ERR_FORMAT, "bad header at byte 13: tensor 'a': expected an object, found 't'");
  ST_HEADER_FAILS(ctx, f, "{\"a\":null}", 0, TL_ERR_FORMAT, "bad header at byte 13: tensor 'a': expected an object, found 'n'");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]"), 8, TL_ERR_FORMAT,
                  "bad header at byte 38: an entry of 'shape' must be an integer, without a fraction or an exponent");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"shape\":[1e3],\"data_offsets\":[0,8]"), 8, TL_ERR_FORMAT,
                  "bad header at byte 38: an entry of 'shape' must be an integer, without a fraction or an exponent");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"shape\":[02],\"data_offsets\":[0,8]"), 8, TL_ERR_FORMAT,
                  "bad header at byte 37: an entry of 'shape' has a leading zero");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]"), 8, TL_ERR_FORMAT,
                  "bad header at byte 37: an entry of 'shape' must not be negative");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"shape\":[[2]],\"data_offsets\":[0,8]"), 8, TL_ERR_FORMAT,
                  "bad header at byte 37: expected an entry of 'shape' (an integer), found '['");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"shape\":[2,],\"data_offsets\":[0,8]"), 8, TL_ERR_FORMAT,
                  "bad header at byte 39: expected an entry of 'shape' (an integer), found ']'");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"shape\":2,\"data_offsets\":[0,8]"), 8, TL_ERR_FORMAT,
                  "bad header at byte 36: tensor 'a': 'shape' must be an array of integers, found a number");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"shape\":[9223372036854775808],\"data_offsets\":[0,8]"), 8,
                  TL_ERR_FORMAT, "bad header at byte 37: an entry of 'shape' 9223372036854775808 is too large");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":F32"), 0, TL_ERR_FORMAT,
                  "bad header at byte 22: expected the dtype, a string, found 'F'");
  /* strings: escapes, UTF-8, control characters */
  ST_HEADER_FAILS(ctx, f, "{\"a\\x\":{}}", 0, TL_ERR_FORMAT, "bad header at byte 11: unknown escape '\\x'");
  ST_HEADER_FAILS(ctx, f, "{\"a\\u12\":{}}", 0, TL_ERR_FORMAT, "bad header at byte 11: \\u needs four hex digits");
  ST_HEADER_FAILS(ctx, f, "{\"a\\ud83d\":{}}", 0, TL_ERR_FORMAT,
                  "bad header at byte 11: a \\u escape of a high surrogate without its low surrogate");
  ST_HEADER_FAILS(ctx, f, "{\"a\\ude00\":{}}", 0, TL_ERR_FORMAT,
                  "bad header at byte 11: a \\u escape of a lone low surrogate");
  ST_HEADER_FAILS(ctx, f, "{\"a\\u0000\":{}}", 0, TL_ERR_FORMAT,
                  "bad header at byte 11: \\u0000 in a string (a name cannot hold a NUL character)");
  ST_HEADER_FAILS(ctx, f, "{\"a\nb\":{}}", 0, TL_ERR_FORMAT,
                  "bad header at byte 11: a control character (0x0a) in a string must be escaped");
  ST_HEADER_FAILS(ctx, f, "{\"a\xff\":{}}", 0, TL_ERR_FORMAT, "bad header at byte 11: invalid UTF-8 in a string");
  ST_HEADER_FAILS(ctx, f, "{\"a\xc0\xaf\":{}}", 0, TL_ERR_FORMAT, "bad header at byte 11: invalid UTF-8 in a string");
  ST_HEADER_FAILS(ctx, f, "{\"a\xed\xa0\x80\":{}}", 0, TL_ERR_FORMAT, "bad header at byte 11: invalid UTF-8 in a string");
  ST_HEADER_FAILS(ctx, f, "{\"abc", 0, TL_ERR_FORMAT, "bad header at byte 10: unterminated string");
  ST_HEADER_FAILS(ctx, f, "{\"abc\\\"", 0, TL_ERR_FORMAT, "bad header at byte 10: unterminated string");
  /* metadata */
  ST_HEADER_FAILS(ctx, f, "{\"__metadata__\":{\"k\":1}}", 0, TL_ERR_FORMAT,
                  "bad header at byte 29: expected a metadata value (a string), found a number");
  ST_HEADER_FAILS(ctx, f, "{\"__metadata__\":[]}", 0, TL_ERR_FORMAT,
                  "bad header at byte 24: '__metadata__' must be an object, found '['");
  ST_HEADER_FAILS(ctx, f, "{\"__metadata__\":{},\"__metadata__\":{}}", 0, TL_ERR_FORMAT,
                  "bad header at byte 27: '__metadata__' appears twice");
  /* the fields of a tensor */
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"C64\",\"shape\":[2],\"data_offsets\":[0,16]"), 16, TL_ERR_DTYPE,
                  "tensor 'a': dtype C64 is not supported (TL reads BOOL, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64)");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"f32\",\"shape\":[2],\"data_offsets\":[0,8]"), 8, TL_ERR_DTYPE,
                  "tensor 'a': dtype f32 is not supported (TL reads BOOL, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64)");
  ST_HEADER_FAILS(ctx, f, T1(F32_2 ",\"offsets\":[0,8]"), 8, TL_ERR_FORMAT,
                  "bad header at byte 61: tensor 'a': unknown field 'offsets'");
  ST_HEADER_FAILS(ctx, f, T1(F32_2 ",\"dtype\":\"F32\""), 8, TL_ERR_FORMAT,
                  "bad header at byte 61: tensor 'a': field 'dtype' appears twice");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"data_offsets\":[0,8]"), 8, TL_ERR_FORMAT, "tensor 'a' has no 'shape'");
  ST_HEADER_FAILS(ctx, f, "{\"a\":{}}", 0, TL_ERR_FORMAT, "tensor 'a' has no 'dtype'");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4,8]"), 8, TL_ERR_FORMAT,
                  "bad header at byte 60: tensor 'a': 'data_offsets' has more than 2 entries");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8]"), 8, TL_ERR_FORMAT,
                  "bad header at byte 55: tensor 'a': 'data_offsets' must hold two integers, [begin, end]");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]"), 4,
                  TL_ERR_FORMAT,
                  "bad header at byte 53: tensor 'a': 'shape' has more than 8 entries, the most axes a TL tensor has");
  ST_HEADER_FAILS(ctx, f, "{\"a\":{" F32_2 "},\"a\":{" F32_2 "}}", 8, TL_ERR_FORMAT,
                  "tensor 'a' appears twice in the header");
  /* sizes and offsets against the data */
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,20]"), 20, TL_ERR_FORMAT,
                  "tensor 'a': data_offsets [0, 20] hold 20 bytes, but shape [2, 3] of F32 needs 24");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]"), 20, TL_ERR_FORMAT,
                  "tensor 'a': data_offsets [0, 24] run past the end of the data (20 bytes): the file is truncated");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]"), 8, TL_ERR_FORMAT,
                  "tensor 'a': data_offsets [8, 0] end before they begin");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"BOOL\",\"shape\":[1099511627777],\"data_offsets\":[0,1099511627777]"), 8,
                  TL_ERR_RANGE,
                  "tensor 'a': shape [1099511627777] has 1099511627777 elements; the most a tensor may hold is 2^40 "
                  "(1099511627776)");
  ST_HEADER_FAILS(ctx, f, T1("\"dtype\":\"F64\",\"shape\":[268435456],\"data_offsets\":[0,2147483648]"), 8,
                  TL_ERR_FORMAT,
                  "tensor 'a': data_offsets [0, 2147483648] run past the end of the data (8 bytes): the file is "
                  "truncated");
  ST_HEADER_FAILS(ctx, f, "{\"a\":{" F32_2 "},\"b\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[12,16]}}", 16,
                  TL_ERR_FORMAT, "the bytes [8, 12) of the data belong to no tensor");
  ST_HEADER_FAILS(ctx, f, "{\"a\":{" F32_2 "},\"b\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
                  TL_ERR_FORMAT, "tensor 'b': data_offsets [4, 8] overlap those of tensor 'a' [0, 8]");
  ST_HEADER_FAILS(ctx, f, T1(F32_2), 12, TL_ERR_FORMAT, "the bytes [8, 12) of the data belong to no tensor");
  ST_HEADER_FAILS(ctx, f, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, TL_ERR_FORMAT,
                  "the bytes [0, 4) of the data belong to no tensor");
  /* a name missing on load */
  write_st(f, "{\"a\":{" F32_2 "},\"b\":{\"dtype\":\"I32\",\"shape\":[],\"data_offsets\":[8,12]}}", NULL, 12);
  tl_clear_error(ctx);
  CHECK(tl_load_safetensors_one(ctx, f, "c") == NULL);
  CHECK_ERROR(ctx, TL_ERR_ARG, "load_safetensors_one", f, "no tensor named 'c' (the file has 2: 'a', 'b')");
  write_st(f, "{}", NULL, 0);
  CHECK(tl_load_safetensors_one(ctx, f, "c") == NULL);
  CHECK_ERROR(ctx, TL_ERR_ARG, "load_safetensors_one", f, "no tensor named 'c' (the file has 0)");
  /* _one checks the whole header too */
  write_st(f, "{\"a\":{" F32_2 "},\"b\":{\"dtype\":\"C64\",\"shape\":[],\"data_offsets\":[8,16]}}", NULL, 16);
  CHECK(tl_load_safetensors_one(ctx, f, "a") == NULL);
  CHECK_ERROR(ctx, TL_ERR_DTYPE, "load_safetensors_one", f,
              "tensor 'b': dtype C64 is not supported (TL reads BOOL, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64)");
  CHECK_INT(tl_get_stats(ctx).live_tensors, 1); /* the good load only */
  TEST_SHUTDOWN(ctx);
  tl_test_rm_tree(dir);
}

/* ---- saving: arguments, failures, atomic replacement -------------------------------- */
TEST(tensor_io_save_errors_leave_no_file) {
  char *dir = make_dir();
  if (!dir) return;
  tl_ctx *ctx = tl_init();
  char p[4200];
  tl_tensor *t = tl_arange(ctx, TL_F32, 0, 4, 1);
  /* a directory that is not there */
  char nodir[4200];
  snprintf(nodir, sizeof nodir, "%s/no/such/dir/x.npy", dir);
  CHECK_INT(tl_save_npy(t, nodir), TL_ERR_IO);
  CHECK_ERROR(ctx, TL_ERR_IO, "save_npy", nodir, "cannot create: No such file or directory");
  /* a directory in the way: the rename fails and the temporary file goes */
  path_in(p, sizeof p, dir, "sub");
  CHECK_INT(mkdir(p, 0755), 0);
  CHECK_INT(tl_save_npy(t, p), TL_ERR_IO);
  CHECK_ERROR(ctx, TL_ERR_IO, "save_npy", p, "cannot replace it: Is a directory");
  tl_tensor *ts[2] = {t, t};
  CHECK_INT(tl_save_safetensors(ctx, p, 1, (const char *[]){"a"}, ts), TL_ERR_IO);
  CHECK_ERROR(ctx, TL_ERR_IO, "save_safetensors", p, "cannot replace it: Is a directory");
  CHECK_INT(count_entries(dir, NULL), 1); /* "sub" alone */
  /* names */
  path_in(p, sizeof p, dir, "x.safetensors");
  CHECK_INT(tl_save_safetensors(ctx, p, 2, (const char *[]){"w", "w"}, ts), TL_ERR_ARG);
  CHECK_ERROR(ctx, TL_ERR_ARG, "save_safetensors", p, "the name 'w' is given twice (tensors 0 and 1)");
  CHECK_INT(tl_save_safetensors(ctx, p, 2, (const char *[]){"w", "__metadata__"}, ts), TL_ERR_ARG);
  CHECK_ERROR(ctx, TL_ERR_ARG, "save_safetensors", p, "name 1 is '__metadata__', which the format reserves");
  CHECK_INT(tl_save_safetensors(ctx, p, 2, (const char *[]){"w", "\xc3("}, ts), TL_ERR_ARG);
  CHECK_ERROR(ctx, TL_ERR_ARG, "save_safetensors", p, "name 1 is not valid UTF-8");
  CHECK_INT(tl_save_safetensors(ctx, p, 2, (const char *[]){"w", NULL}, ts), TL_ERR_ARG);
  CHECK_ERROR(ctx, TL_ERR_ARG, "save_safetensors", p, "name 1 is NULL");
  CHECK_INT(tl_save_safetensors(ctx, p, -1, NULL, NULL), TL_ERR_ARG);
  CHECK_ERROR(ctx, TL_ERR_ARG, "save_safetensors", p, "n is -1");
  CHECK_INT(tl_save_safetensors(ctx, p, 1, NULL, ts), TL_ERR_ARG);
  CHECK_ERROR(ctx, TL_ERR_ARG, "save_safetensors", p, "the name array is NULL (n = 1)");
  /* a NULL tensor: an earlier failure's message stays; with none, one is set */
  tl_clear_error(ctx);
  CHECK_INT(tl_save_safetensors(ctx, p, 2, (const char *[]){"a", "b"}, (tl_tensor *[]){t, NULL}), TL_ERR_ARG);
  CHECK_ERROR(ctx, TL_ERR_ARG, "save_safetensors", p, "tensor 1 ('b') is NULL");
  tl_tensor *bad = tl_reshape(t, 1, (int64_t[]){5});
  CHECK(bad == NULL);
  char before[1024];
  snprintf(before, sizeof before, "%s", tl_last_error(ctx));
  CHECK(strncmp(before, "reshape: ", 9) == 0);
  CHECK_INT(tl_save_safetensors(ctx, p, 2, (const char *[]){"a", "b"}, (tl_tensor *[]){t, bad}), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), before);
  CHECK_INT(count_entries(dir, NULL), 1);
  /* NULLs */
  CHECK_INT(tl_save_npy(NULL, p), TL_ERR_ARG);
  CHECK_INT(tl_save_npy(t, NULL), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "save_npy: path is NULL");
  CHECK(tl_load_npy(NULL, p) == NULL);
  CHECK(tl_load_npy(ctx, NULL) == NULL);
  CHECK_STR(tl_last_error(ctx), "load_npy: path is NULL");
  CHECK_INT(tl_save_safetensors(NULL, p, 0, NULL, NULL), TL_ERR_ARG);
  CHECK_INT(tl_save_safetensors(ctx, NULL, 0, NULL, NULL), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "save_safetensors: path is NULL");
  CHECK_INT(tl_load_safetensors(ctx, p, NULL, NULL, NULL), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "load_safetensors: n is NULL");
  CHECK(tl_load_safetensors_one(ctx, p, NULL) == NULL);
  CHECK_STR(tl_last_error(ctx), "load_safetensors_one: name is NULL");
  /* a released handle */
  tl_tensor *gone = tl_arange(ctx, TL_F32, 0, 2, 1);
  tl_release(gone);
  CHECK_INT(tl_save_npy(gone, p), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "save_npy: use after release: the tensor behind this handle was released");
  CHECK_INT(count_entries(dir, NULL), 1);
  TEST_SHUTDOWN(ctx);
  tl_test_rm_tree(dir);
}

/* A write that fails half-way (the file size limit, as a full disk would) leaves the old
 * file as it was and no temporary file. In a child process: the limit is its own. */
TEST(tensor_io_failed_write_keeps_the_old_file) {
  char *dir = make_dir();
  if (!dir) return;
  char p[4200], q[4200];
  path_in(p, sizeof p, dir, "keep.npy");
  path_in(q, sizeof q, dir, "keep.safetensors");
  write_bytes(p, "old npy", 7);
  write_bytes(q, "old st", 6);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN); /* write() then fails with EFBIG instead of killing */
    struct rlimit rl = {4096, 4096};
    int bad = setrlimit(RLIMIT_FSIZE, &rl) != 0;
    tl_ctx *ctx = tl_init();
    static const double zeros[4096]; /* a buffer: no kernel to compile under the limit */
    tl_tensor *t = tl_from_data(ctx, TL_F64, 1, (int64_t[]){4096}, zeros);
    char want[4400];
    bad |= tl_save_npy(t, p) != TL_ERR_IO;
    snprintf(want, sizeof want, "save_npy: %s: cannot write: File too large", p);
    bad |= strcmp(tl_last_error(ctx), want) != 0;
    if (bad) printf("  %s\n", tl_last_error(ctx));
    bad |= (tl_save_safetensors(ctx, q, 1, (const char *[]){"t"}, &t) != TL_ERR_IO) << 1;
    snprintf(want, sizeof want, "save_safetensors: %s: cannot write: File too large", q);
    bad |= (strcmp(tl_last_error(ctx), want) != 0) << 1;
    if (bad & 2) printf("  %s\n", tl_last_error(ctx));
    fflush(stdout);
    tl_shutdown(ctx);
    free(dir); /* memcheck checks this process for leaks too */
    _exit(bad);
  }
  int ws = 0;
  waitpid(pid, &ws, 0);
  CHECK(WIFEXITED(ws));
  CHECK_INT(WEXITSTATUS(ws), 0);
  size_t n;
  char *s = read_all(p, &n);
  CHECK(s && n == 7 && !memcmp(s, "old npy", 7));
  free(s);
  s = read_all(q, &n);
  CHECK(s && n == 6 && !memcmp(s, "old st", 6));
  free(s);
  CHECK_INT(count_entries(dir, NULL), 2);
  /* without the limit the same saves replace the files */
  tl_ctx *ctx = tl_init();
  tl_tensor *t = tl_full(ctx, TL_F64, 1, (int64_t[]){4096}, 0.5);
  CHECK_INT(tl_save_npy(t, p), TL_OK);
  CHECK_INT(tl_save_safetensors(ctx, q, 1, (const char *[]){"t"}, &t), TL_OK);
  double half[4096];
  for (int i = 0; i < 4096; i++) half[i] = 0.5;
  CHECK_TENSOR(tl_load_npy(ctx, p), TL_F64, 1, ((int64_t[]){4096}), half, sizeof half);
  CHECK_TENSOR(tl_load_safetensors_one(ctx, q, "t"), TL_F64, 1, ((int64_t[]){4096}), half, sizeof half);
  CHECK_INT(count_entries(dir, NULL), 2);
  /* a saved file has the permissions of any new file (the umask's), not mkstemp's 0600 */
  struct stat st;
  mode_t mask = umask(0);
  umask(mask);
  CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == (0666 & ~mask));
  TEST_SHUTDOWN(ctx);
  tl_test_rm_tree(dir);
}
