/* test_dtype_io.c — .npy and .safetensors files of the dtypes i8 i16 u8 u16 u32 u64 f16
 * bf16, against numpy (/usr/bin/python3): numpy reads what TL writes and writes what TL
 * reads; safetensors are parsed and written with json and numpy.frombuffer only (bf16 as
 * its 16 bits, '<u2', since numpy has no bfloat16). bf16 has no .npy dtype: saving one
 * is an error that says so. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "test.h"
#include "tl.h"

/* the values every test uses, per dtype, as numpy spells them */
static const int8_t v_i8[4] = {-128, -1, 0, 127};
static const int16_t v_i16[3] = {-32768, 7, 32767};
static const uint8_t v_u8[3] = {0, 200, 255};
static const uint16_t v_u16[3] = {0, 65535, 1234};
static const uint32_t v_u32[3] = {0, 4294967295u, 70000};
static const uint64_t v_u64[3] = {0, 18446744073709551615ull, 9223372036854775808ull};
static const uint16_t v_f16[4] = {0x2e66, 0xc000, 0x7c00, 0x7bff}; /* f16 0.1, -2, inf, 65504 */
static const uint16_t v_bf16[4] = {0x3dcd, 0xc000, 0x7f80, 0x0001}; /* bf16 0.1, -2, inf, 2^-133 */

typedef struct {
  const char *name;
  tl_dtype dtype;
  int64_t n;
  const void *data;
} sample;

static const sample samples[] = {
    {"i8", TL_I8, 4, v_i8},    {"i16", TL_I16, 3, v_i16}, {"u8", TL_U8, 3, v_u8},       {"u16", TL_U16, 3, v_u16},
    {"u32", TL_U32, 3, v_u32}, {"u64", TL_U64, 3, v_u64}, {"f16", TL_F16, 4, v_f16}, {"bf16", TL_BF16, 4, v_bf16},
};
enum { NS = sizeof samples / sizeof samples[0] };

static const char numpy_values[] =
    "E = {\n"
    " 'i8': np.array([-128, -1, 0, 127], dtype='|i1'),\n"
    " 'i16': np.array([-32768, 7, 32767], dtype='<i2'),\n"
    " 'u8': np.array([0, 200, 255], dtype='|u1'),\n"
    " 'u16': np.array([0, 65535, 1234], dtype='<u2'),\n"
    " 'u32': np.array([0, 2**32 - 1, 70000], dtype='<u4'),\n"
    " 'u64': np.array([0, 2**64 - 1, 2**63], dtype='<u8'),\n"
    " 'f16': np.array([0.1, -2, np.inf, 65504], dtype='<f2'),\n"
    " 'bf16': np.array([0x3dcd, 0xc000, 0x7f80, 0x0001], dtype='<u2'),\n"
    "}\n"
    "ST = {'i8': 'I8', 'i16': 'I16', 'u8': 'U8', 'u16': 'U16', 'u32': 'U32', 'u64': 'U64', 'f16': 'F16', 'bf16': 'BF16'}\n";

static void check_sample(tl_tensor *t, const sample *s, const char *how) {
  if (!t) {
    tl_test_fail(__FILE__, __LINE__, "%s %s: %s", how, s->name, tl_last_error(NULL));
    return;
  }
  size_t nbytes = (size_t)s->n * tl_dtype_size(s->dtype);
  const void *d = tl_data(t);
  if (tl_get_dtype(t) != s->dtype || tl_ndim(t) != 1 || tl_dim(t, 0) != s->n || !d || memcmp(d, s->data, nbytes))
    tl_test_fail(__FILE__, __LINE__, "%s %s: dtype %s, %lld values, or the bytes differ", how, s->name,
                 tl_dtype_name(tl_get_dtype(t)), (long long)tl_numel(t));
}

static const char npy_reads_py[] =
    "import sys, numpy as np\n"
    "d = sys.argv[1]\n"
    "%s"
    "for name, e in E.items():\n"
    "  if name == 'bf16': continue\n"
    "  a = np.load(d + '/' + name + '.npy')\n"
    "  ok = a.dtype == e.dtype and a.shape == e.shape and a.tobytes() == e.tobytes()\n"
    "  print(('ok ' if ok else 'FAIL ') + name + ('' if ok else ' %%r %%r' %% (a.dtype, a)))\n"
    "import json, struct\n"
    "with open(d + '/all.safetensors', 'rb') as f: b = f.read()\n"
    "n = struct.unpack('<Q', b[:8])[0]\n"
    "h = json.loads(b[8:8 + n])\n"
    "for name, e in E.items():\n"
    "  x = h[name]\n"
    "  lo, hi = x['data_offsets']\n"
    "  a = np.frombuffer(b[8 + n + lo:8 + n + hi], dtype=e.dtype)\n"
    "  ok = x['dtype'] == ST[name] and x['shape'] == list(e.shape) and a.tobytes() == e.tobytes()\n"
    "  print(('ok st ' if ok else 'FAIL st ') + name + ('' if ok else ' %%r' %% x))\n";

TEST(dtype_io_numpy_reads_tl_files) {
  char *dir = tl_test_tmpdir();
  if (!dir) return;
  tl_ctx *ctx = tl_init();
  tl_tensor *ts[NS];
  const char *names[NS];
  char p[4200];
  for (int i = 0; i < NS; i++) {
    ts[i] = tl_from_data(ctx, samples[i].dtype, 1, &samples[i].n, samples[i].data);
    names[i] = samples[i].name;
    snprintf(p, sizeof p, "%s/%s.npy", dir, samples[i].name);
    if (samples[i].dtype != TL_BF16) CHECK_INT(tl_save_npy(ts[i], p), TL_OK);
  }
  snprintf(p, sizeof p, "%s/all.safetensors", dir);
  CHECK_INT(tl_save_safetensors(ctx, p, NS, names, ts), TL_OK);
  char script[4096];
  snprintf(script, sizeof script, npy_reads_py, numpy_values);
  CHECK_PYTHON(script, dir,
               "ok i8\nok i16\nok u8\nok u16\nok u32\nok u64\nok f16\n"
               "ok st i8\nok st i16\nok st u8\nok st u16\nok st u32\nok st u64\nok st f16\nok st bf16\n");
  /* and TL reads its own files back, to the byte */
  for (int i = 0; i < NS; i++) {
    if (samples[i].dtype == TL_BF16) continue;
    snprintf(p, sizeof p, "%s/%s.npy", dir, samples[i].name);
    check_sample(tl_load_npy(ctx, p), &samples[i], "npy round trip");
  }
  int n = 0;
  char **got_names = NULL;
  tl_tensor **got = NULL;
  snprintf(p, sizeof p, "%s/all.safetensors", dir);
  CHECK_INT(tl_load_safetensors(ctx, p, &n, &got_names, &got), TL_OK);
  CHECK_INT(n, NS);
  for (int k = 0; k < n; k++)
    for (int i = 0; i < NS; i++)
      if (!strcmp(got_names[k], samples[i].name)) check_sample(got[k], &samples[i], "safetensors round trip");
  tl_free(got_names);
  tl_free(got);
  /* bf16: no .npy dtype, an error that says what to do, and no file */
  snprintf(p, sizeof p, "%s/bf16.npy", dir);
  CHECK_INT(tl_save_npy(ts[NS - 1], p), TL_ERR_DTYPE);
  char want[4400];
  snprintf(want, sizeof want,
           "save_npy: %s: bf16 has no .npy dtype (numpy has no bfloat16): cast to f32, or save as .safetensors", p);
  CHECK(strcmp(tl_last_error(ctx), want) == 0);
  FILE *f = fopen(p, "rb");
  CHECK(f == NULL);
  if (f) fclose(f);
  TEST_SHUTDOWN(ctx);
  tl_test_rm_tree(dir);
}

static const char numpy_writes_py[] =
    "import sys, json, struct, numpy as np\n"
    "d = sys.argv[1] + '/'\n"
    "%s"
    "for name, e in E.items():\n"
    "  if name != 'bf16': np.save(d + name + '.npy', e)\n"
    "h, data = {}, b''\n"
    "for name, e in E.items():\n"
    "  h[name] = {'dtype': ST[name], 'shape': list(e.shape), 'data_offsets': [len(data), len(data) + e.nbytes]}\n"
    "  data += e.tobytes()\n"
    "j = json.dumps(h).encode()\n"
    "with open(d + 'all.safetensors', 'wb') as f: f.write(struct.pack('<Q', len(j)) + j + data)\n"
    "print('written')\n";

TEST(dtype_io_tl_reads_numpy_files) {
  char *dir = tl_test_tmpdir();
  if (!dir) return;
  char script[4096];
  snprintf(script, sizeof script, numpy_writes_py, numpy_values);
  CHECK_PYTHON(script, dir, "written\n");
  tl_ctx *ctx = tl_init();
  char p[4200];
  for (int i = 0; i < NS; i++) {
    if (samples[i].dtype == TL_BF16) continue;
    snprintf(p, sizeof p, "%s/%s.npy", dir, samples[i].name);
    check_sample(tl_load_npy(ctx, p), &samples[i], "numpy's npy");
  }
  int n = 0;
  char **names = NULL;
  tl_tensor **ts = NULL;
  snprintf(p, sizeof p, "%s/all.safetensors", dir);
  CHECK_INT(tl_load_safetensors(ctx, p, &n, &names, &ts), TL_OK);
  CHECK_INT(n, NS);
  for (int k = 0; k < n; k++)
    for (int i = 0; i < NS; i++)
      if (!strcmp(names[k], samples[i].name)) check_sample(ts[k], &samples[i], "python's safetensors");
  /* the loaded f16 and bf16 compute: their values as f64 */
  for (int k = 0; k < n; k++)
    if (!strcmp(names[k], "f16") || !strcmp(names[k], "bf16")) {
      double v[4];
      CHECK(tl_to_host(tl_cast(ts[k], TL_F64), v, sizeof v) == TL_OK);
      bool bf = names[k][0] == 'b';
      CHECK(v[0] == (bf ? 0.10009765625 : 0.0999755859375) && v[1] == -2.0 && isinf(v[2]));
      CHECK(v[3] == (bf ? 9.183549615799121e-41 : 65504.0));
    }
  tl_free(names);
  tl_free(ts);
  TEST_SHUTDOWN(ctx);
  tl_test_rm_tree(dir);
}
