/* test_lang_io.c — tensor files from the language (Tensor::save/load, Param::save/load)
 * against an independent reader and writer: numpy (/usr/bin/python3 with
 * python3-numpy) reads the files a TL program writes (safetensors parsed with json and
 * numpy.frombuffer only) and writes files a TL program reads; a malformed file is a
 * run-time error at the TL location. Each test works in a fresh tl_test_tmpdir
 * directory, removed at its end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "lang/lang.h"
#include "test.h"

/* runs TL source text (`DIR` replaced by dir): its exit code, stdout and stderr */
static int run_tl(const char *tmpl, const char *dir, char **out, char **err) {
  size_t n = 0, dl = strlen(dir);
  for (const char *p = tmpl; (p = strstr(p, "DIR")); p += 3) n++;
  char *src = malloc(strlen(tmpl) + n * dl + 1), *w = src;
  for (const char *p = tmpl; *p;) {
    if (!strncmp(p, "DIR", 3)) {
      memcpy(w, dir, dl);
      w += dl;
      p += 3;
    } else *w++ = *p++;
  }
  *w = 0;
  size_t no = 0, ne = 0;
  FILE *fo = open_memstream(out, &no), *fe = open_memstream(err, &ne);
  struct tl_stats_out st = {0};
  tl_lang_run_options o = {.out = fo, .err = fe, .stats = &st};
  int rc = tl_lang_run_source("io.tl", src, strlen(src), &o);
  fclose(fo);
  fclose(fe);
  free(src);
  if (rc == 0 && (st.live_tensors || st.live_objects))
    tl_test_fail(__FILE__, __LINE__, "%llu tensors and %llu objects live at exit", st.live_tensors, st.live_objects);
  return rc;
}

static const char tl_writes[] =
    "struct Lin { w: Tensor, b: Tensor }\n"
    "struct Net { enc: Lin, head: Lin, tag: String }\n"
    "fn main() {\n"
    "  let a = Tensor::arange(0, 6).reshape([2, 3]) as f32 / 4.0;\n"
    "  Tensor::save(a, \"DIR/a.npy\");\n"
    "  Tensor::save([[1, -2], [3, 4]].transpose(0, 1), \"DIR/i.npy\");\n"
    "  Tensor::save([1, 0, 2] > 0, \"DIR/b.npy\");\n"
    "  Tensor::save(a.sum() as f64, \"DIR/s.npy\");\n"
    "  Tensor::save(a.slice(1, 0, 3, 2), \"DIR/one.safetensors\");\n"
    "  let net = Net { enc: Lin { w: a, b: [0.5, -0.5] }, head: Lin { w: Tensor::ones([3, 1]), b: [2.0] }, tag: \"x\" };\n"
    "  Param::save(net, \"DIR/net.safetensors\");\n"
    "  println(\"saved\");\n"
    "}\n";

static const char py_reads[] =
    "import sys, json, struct, numpy as np\n"
    "d = sys.argv[1]\n"
    "for n in ['a', 'i', 'b', 's']:\n"
    "  x = np.load(d + '/' + n + '.npy')\n"
    "  print(n, x.dtype.str, x.shape, x.tolist())\n"
    "def st(path):\n"
    "  buf = open(path, 'rb').read()\n"
    "  k = struct.unpack('<Q', buf[:8])[0]\n"
    "  h = json.loads(buf[8:8 + k])\n"
    "  DT = {'BOOL': '|b1', 'I32': '<i4', 'I64': '<i8', 'F32': '<f4', 'F64': '<f8'}\n"
    "  for name, e in h.items():\n"
    "    lo, hi = e['data_offsets']\n"
    "    x = np.frombuffer(buf[8 + k + lo:8 + k + hi], dtype=DT[e['dtype']]).reshape(e['shape'])\n"
    "    print(name, e['dtype'], x.shape, x.tolist())\n"
    "st(d + '/one.safetensors')\n"
    "st(d + '/net.safetensors')\n";

TEST(lang_io_numpy_reads_tl_files) {
  char *dir = tl_test_tmpdir();
  if (!dir) {
    tl_test_fail(__FILE__, __LINE__, "tl_test_tmpdir failed");
    return;
  }
  char *out = NULL, *err = NULL;
  CHECK_INT(run_tl(tl_writes, dir, &out, &err), 0);
  CHECK_STR(out, "saved\n");
  CHECK_STR(err, "");
  CHECK_PYTHON(py_reads, dir,
               "a <f4 (2, 3) [[0.0, 0.25, 0.5], [0.75, 1.0, 1.25]]\n"
               "i <i8 (2, 2) [[1, 3], [-2, 4]]\n"
               "b |b1 (3,) [True, False, True]\n"
               "s <f8 () 3.75\n"
               "tensor F32 (2, 2) [[0.0, 0.5], [0.75, 1.25]]\n"
               "enc.w F32 (2, 3) [[0.0, 0.25, 0.5], [0.75, 1.0, 1.25]]\n"
               "enc.b F32 (2,) [0.5, -0.5]\n"
               "head.w F32 (3, 1) [[1.0], [1.0], [1.0]]\n"
               "head.b F32 (1,) [2.0]\n");
  free(out);
  free(err);
  tl_test_rm_tree(dir);
}

static const char py_writes[] =
    "import sys, json, struct, numpy as np\n"
    "d = sys.argv[1]\n"
    "np.save(d + '/f.npy', np.arange(6, dtype='<f4').reshape(3, 2) / np.float32(2))\n"
    "np.save(d + '/i.npy', np.array([[7, -8, 9]], dtype='<i4'))\n"
    "np.save(d + '/d.npy', np.array(2.5, dtype='<f8'))\n"
    "np.save(d + '/fortran.npy', np.asfortranarray(np.ones((2, 2), dtype='<f4')))\n"
    "T = {'enc.w': np.full((2, 3), 0.5, dtype='<f8'), 'enc.b': np.array([1, 2], dtype='<f4'),\n"
    "     'head.w': np.array([[1], [2], [3]], dtype='<f4'), 'head.b': np.array([-1], dtype='<f4')}\n"
    "entries, data = {}, b''\n"
    "for name, x in T.items():\n"
    "  b = x.tobytes()\n"
    "  entries[name] = {'dtype': 'F64' if x.dtype == np.float64 else 'F32', 'shape': list(x.shape),\n"
    "                   'data_offsets': [len(data), len(data) + len(b)]}\n"
    "  data += b\n"
    "raw = json.dumps(entries).encode()\n"
    "open(d + '/net.safetensors', 'wb').write(struct.pack('<Q', len(raw)) + raw + data)\n"
    "open(d + '/short.npy', 'wb').write(open(d + '/f.npy', 'rb').read()[:-4])\n"
    "print('written')\n";

static const char tl_reads[] =
    "struct Lin { w: Tensor, b: Tensor }\n"
    "struct Net { enc: Lin, head: Lin }\n"
    "fn main() {\n"
    "  println(Tensor::load(\"DIR/f.npy\"));\n"
    "  println(Tensor::load(\"DIR/i.npy\") * 2);\n"
    "  println(Tensor::load(\"DIR/d.npy\"));\n"
    "  let mut net = Net { enc: Lin { w: Tensor::zeros([2, 3]), b: Tensor::zeros([2]) },\n"
    "                      head: Lin { w: Tensor::zeros([3, 1]), b: Tensor::zeros([1]) } };\n"
    "  Param::load(net, \"DIR/net.safetensors\");\n"
    "  println(net);\n"
    "  println(Tensor::load(\"DIR/short.npy\"));\n"
    "}\n";

TEST(lang_io_tl_reads_numpy_files) {
  char *dir = tl_test_tmpdir();
  if (!dir) {
    tl_test_fail(__FILE__, __LINE__, "tl_test_tmpdir failed");
    return;
  }
  CHECK_PYTHON(py_writes, dir, "written\n");
  char *out = NULL, *err = NULL;
  CHECK_INT(run_tl(tl_reads, dir, &out, &err), 1);
  CHECK_STR(out, "[[0.  0.5]\n [1.  1.5]\n [2.  2.5]]\n"
                 "[[ 14 -16  18]]\n"
                 "2.5\n"
                 "Net { enc: Lin { w: [[0.5 0.5 0.5]\n [0.5 0.5 0.5]], b: [1. 2.] }, head: Lin { w: [[1.]\n [2.]\n [3.]], b: [-1.] } }\n");
  char want[4400];
  snprintf(want, sizeof want,
           "io.tl:11:23: runtime error: load_npy: %s/short.npy: shape [3, 2] of dtype '<f4' needs 24 bytes of data, but 20 "
           "follow the header (truncated)\n",
           dir);
  CHECK_STR(err, want);
  free(out);
  free(err);
  /* Fortran order: the C API's message, at the load */
  const char fortran[] = "fn main() {\n  let t = Tensor::load(\"DIR/fortran.npy\");\n}\n";
  CHECK_INT(run_tl(fortran, dir, &out, &err), 1);
  CHECK_CONTAINS(err, "io.tl:2:23: runtime error: load_npy: ");
  CHECK_CONTAINS(err, "fortran");
  free(out);
  free(err);
  tl_test_rm_tree(dir);
}
