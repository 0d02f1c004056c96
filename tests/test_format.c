/* test_format.c — tl_format_array against numpy 1.24 str(array).
 * Every expected string was produced by numpy 1.24.2 with default print
 * options (the array expression is given in the comment above each check). */
#include <stdint.h>
#include <stdlib.h>

#include "core/format.h"
#include "test.h"

/* formats, compares with numpy's text and frees */
#define CHECK_FMT(data, dtype, ndim, shape, expected)                       \
  do {                                                                      \
    char *tl_s_ = tl_format_array((data), (dtype), (ndim), (shape));        \
    CHECK_STR(tl_s_, (expected));                                           \
    free(tl_s_);                                                            \
  } while (0)

TEST(format_f64_fixed_padding) {
  int64_t s3[] = {3};
  double a[] = {1.5, 2.25, 3.0}; /* np.array([1.5, 2.25, 3.0]) */
  CHECK_FMT(a, TL_F64, 1, s3, "[1.5  2.25 3.  ]");
  double b[] = {1.0, 2.0, 3.0};
  CHECK_FMT(b, TL_F64, 1, s3, "[1. 2. 3.]");
  double z[] = {0.0, 0.0, 0.0};
  CHECK_FMT(z, TL_F64, 1, s3, "[0. 0. 0.]");
}

TEST(format_f64_max_precision) {
  int64_t s3[] = {3};
  double a[] = {1.0 / 3, 2.0 / 3, 1.0};
  CHECK_FMT(a, TL_F64, 1, s3, "[0.33333333 0.66666667 1.        ]");
  /* 0.1+0.2 has 17 digits: cut to 8 then trimmed; negative widens the int part */
  double b[] = {0.1 + 0.2, 1.123456789, -12.5};
  CHECK_FMT(b, TL_F64, 1, s3, "[  0.3          1.12345679 -12.5       ]");
}

TEST(format_f32_shortest_digits) {
  int64_t s3[] = {3};
  float a[] = {0.1f, 1.0f / 3, 2.0f / 3}; /* dtype=float32 */
  CHECK_FMT(a, TL_F32, 1, s3, "[0.1        0.33333334 0.6666667 ]");
  /* whole f32 values print all their integer digits */
  int64_t s2[] = {2};
  float b[] = {92713848.0f, 81379584.0f};
  CHECK_FMT(b, TL_F32, 1, s2, "[92713848. 81379584.]");
}

TEST(format_negative_zero) {
  int64_t s2[] = {2};
  double a[] = {-0.0, 1.0};
  CHECK_FMT(a, TL_F64, 1, s2, "[-0.  1.]");
}

TEST(format_int_alignment) {
  int64_t s3[] = {3};
  int32_t a[] = {1, 20, 300};
  CHECK_FMT(a, TL_I32, 1, s3, "[  1  20 300]");
  int64_t b[] = {-5, 1234567890123LL, 0}; /* exact, not via double */
  CHECK_FMT(b, TL_I64, 1, s3, "[           -5 1234567890123             0]");
}

TEST(format_bool) {
  int64_t s3[] = {3}, s22[] = {2, 2};
  uint8_t a[] = {1, 0, 1};
  CHECK_FMT(a, TL_BOOL, 1, s3, "[ True False  True]");
  uint8_t b[] = {1, 1, 0, 0};
  CHECK_FMT(b, TL_BOOL, 2, s22, "[[ True  True]\n [False False]]");
}

TEST(format_scalar_0d) {
  double a = 3.5, one = 1.0, small = 1e-5, big = 1e20, nz = -0.0, e16 = 1e16, e15 = 1e15;
  CHECK_FMT(&a, TL_F64, 0, NULL, "3.5");
  CHECK_FMT(&one, TL_F64, 0, NULL, "1.0");
  CHECK_FMT(&small, TL_F64, 0, NULL, "1e-05");
  CHECK_FMT(&big, TL_F64, 0, NULL, "1e+20");
  CHECK_FMT(&nz, TL_F64, 0, NULL, "-0.0");
  CHECK_FMT(&e16, TL_F64, 0, NULL, "1e+16");
  CHECK_FMT(&e15, TL_F64, 0, NULL, "1000000000000000.0");
  double nan_ = NAN, ninf = -INFINITY;
  CHECK_FMT(&nan_, TL_F64, 0, NULL, "nan");
  CHECK_FMT(&ninf, TL_F64, 0, NULL, "-inf");
}

TEST(format_scalar_0d_f32_int_bool) {
  float f = 0.1f, third = 1.0f / 3, big = 92713848.0f;
  CHECK_FMT(&f, TL_F32, 0, NULL, "0.1");
  CHECK_FMT(&third, TL_F32, 0, NULL, "0.33333334");
  CHECK_FMT(&big, TL_F32, 0, NULL, "92713850.0"); /* a scalar keeps shortest digits */
  int32_t i = 7;
  int64_t l = -3;
  uint8_t t = 1, fa = 0;
  CHECK_FMT(&i, TL_I32, 0, NULL, "7");
  CHECK_FMT(&l, TL_I64, 0, NULL, "-3");
  CHECK_FMT(&t, TL_BOOL, 0, NULL, "True");
  CHECK_FMT(&fa, TL_BOOL, 0, NULL, "False");
}

TEST(format_empty) {
  int64_t s0[] = {0}, s20[] = {2, 0};
  CHECK_FMT(NULL, TL_F32, 1, s0, "[]");
  CHECK_FMT(NULL, TL_I64, 2, s20, "[]");
}

TEST(format_2d) {
  int64_t s[] = {2, 2};
  double a[] = {1.0, 2.5, 3.0, 4.0};
  CHECK_FMT(a, TL_F64, 2, s, "[[1.  2.5]\n [3.  4. ]]");
  int64_t s111[] = {1, 1, 1};
  int32_t five = 5;
  CHECK_FMT(&five, TL_I32, 3, s111, "[[[5]]]");
}

TEST(format_3d_int) {
  int64_t s[] = {2, 3, 4};
  int32_t a[24];
  for (int i = 0; i < 24; i++) a[i] = i; /* np.arange(24).reshape(2, 3, 4) */
  CHECK_FMT(a, TL_I32, 3, s,
            "[[[ 0  1  2  3]\n"
            "  [ 4  5  6  7]\n"
            "  [ 8  9 10 11]]\n"
            "\n"
            " [[12 13 14 15]\n"
            "  [16 17 18 19]\n"
            "  [20 21 22 23]]]");
}

TEST(format_3d_float) {
  int64_t s[] = {2, 2, 2};
  double a[8];
  for (int i = 0; i < 8; i++) a[i] = i / 4.0; /* (np.arange(8) / 4).reshape(2, 2, 2) */
  CHECK_FMT(a, TL_F64, 3, s,
            "[[[0.   0.25]\n"
            "  [0.5  0.75]]\n"
            "\n"
            " [[1.   1.25]\n"
            "  [1.5  1.75]]]");
}

TEST(format_4d_blank_lines) {
  int64_t s[] = {2, 2, 2, 2};
  int64_t a[16];
  for (int i = 0; i < 16; i++) a[i] = i;
  CHECK_FMT(a, TL_I64, 4, s,
            "[[[[ 0  1]\n"
            "   [ 2  3]]\n"
            "\n"
            "  [[ 4  5]\n"
            "   [ 6  7]]]\n"
            "\n"
            "\n"
            " [[[ 8  9]\n"
            "   [10 11]]\n"
            "\n"
            "  [[12 13]\n"
            "   [14 15]]]]");
}

TEST(format_summarize_1d) {
  int64_t s[] = {2000};
  int64_t *a = malloc(2000 * sizeof *a);
  for (int i = 0; i < 2000; i++) a[i] = i;
  CHECK_FMT(a, TL_I64, 1, s, "[   0    1    2 ... 1997 1998 1999]");
  free(a);
  /* width and digits come from the shown elements only */
  int64_t s2[] = {2000};
  float *f = malloc(2000 * sizeof *f);
  for (int i = 0; i < 2000; i++) f[i] = (float)((i - 1000) / 3.0);
  CHECK_FMT(f, TL_F32, 1, s2, "[-333.33334 -333.      -332.66666 ...  332.33334  332.66666  333.     ]");
  free(f);
}

TEST(format_summarize_2d) {
  int64_t s[] = {40, 40};
  int32_t *a = malloc(1600 * sizeof *a);
  double *d = malloc(1600 * sizeof *d);
  for (int i = 0; i < 1600; i++) a[i] = i, d[i] = i / 100.0 + 1;
  CHECK_FMT(a, TL_I32, 2, s,
            "[[   0    1    2 ...   37   38   39]\n"
            " [  40   41   42 ...   77   78   79]\n"
            " [  80   81   82 ...  117  118  119]\n"
            " ...\n"
            " [1480 1481 1482 ... 1517 1518 1519]\n"
            " [1520 1521 1522 ... 1557 1558 1559]\n"
            " [1560 1561 1562 ... 1597 1598 1599]]");
  CHECK_FMT(d, TL_F64, 2, s, /* np.arange(1600).reshape(40, 40) / 100 + 1 */
            "[[ 1.    1.01  1.02 ...  1.37  1.38  1.39]\n"
            " [ 1.4   1.41  1.42 ...  1.77  1.78  1.79]\n"
            " [ 1.8   1.81  1.82 ...  2.17  2.18  2.19]\n"
            " ...\n"
            " [15.8  15.81 15.82 ... 16.17 16.18 16.19]\n"
            " [16.2  16.21 16.22 ... 16.57 16.58 16.59]\n"
            " [16.6  16.61 16.62 ... 16.97 16.98 16.99]]");
  free(a);
  free(d);
}

TEST(format_summarize_2d_scientific_wrapped) {
  int64_t s[] = {40, 40};
  double *d = malloc(1600 * sizeof *d);
  for (int i = 0; i < 1600; i++) d[i] = i / 8.0; /* max/min = 1599 > 1000 */
  CHECK_FMT(d, TL_F64, 2, s,
            "[[0.00000e+00 1.25000e-01 2.50000e-01 ... 4.62500e+00 4.75000e+00\n"
            "  4.87500e+00]\n"
            " [5.00000e+00 5.12500e+00 5.25000e+00 ... 9.62500e+00 9.75000e+00\n"
            "  9.87500e+00]\n"
            " [1.00000e+01 1.01250e+01 1.02500e+01 ... 1.46250e+01 1.47500e+01\n"
            "  1.48750e+01]\n"
            " ...\n"
            " [1.85000e+02 1.85125e+02 1.85250e+02 ... 1.89625e+02 1.89750e+02\n"
            "  1.89875e+02]\n"
            " [1.90000e+02 1.90125e+02 1.90250e+02 ... 1.94625e+02 1.94750e+02\n"
            "  1.94875e+02]\n"
            " [1.95000e+02 1.95125e+02 1.95250e+02 ... 1.99625e+02 1.99750e+02\n"
            "  1.99875e+02]]");
  free(d);
}

TEST(format_summarize_3d) {
  int64_t s[] = {12, 12, 12};
  int32_t *a = malloc(1728 * sizeof *a);
  for (int i = 0; i < 1728; i++) a[i] = i;
  char *got = tl_format_array(a, TL_I32, 3, s);
  /* np.arange(1728).reshape(12, 12, 12): a block, a "..." block line, a block */
  CHECK_CONTAINS(got, "[[[   0    1    2 ...    9   10   11]\n"
                      "  [  12   13   14 ...   21   22   23]\n"
                      "  [  24   25   26 ...   33   34   35]\n"
                      "  ...\n"
                      "  [ 108  109  110 ...  117  118  119]\n");
  CHECK_CONTAINS(got, "  [ 420  421  422 ...  429  430  431]]\n"
                      "\n"
                      " ...\n"
                      "\n"
                      " [[1296 1297 1298 ... 1305 1306 1307]\n");
  CHECK_CONTAINS(got, "  [1716 1717 1718 ... 1725 1726 1727]]]");
  CHECK_INT(strlen(got), 1421); /* len(str(...)) in numpy */
  free(got);
  free(a);
}

TEST(format_scientific_threshold_small) {
  int64_t s2[] = {2}, s1[] = {1};
  double a[] = {1e-5, 1.0};
  CHECK_FMT(a, TL_F64, 1, s2, "[1.e-05 1.e+00]");
  /* float32(1e-4) is just below 1e-4, so numpy switches to scientific */
  float b[] = {1e-4f};
  CHECK_FMT(b, TL_F32, 1, s1, "[1.e-04]");
}

TEST(format_scientific_threshold_large_and_ratio) {
  int64_t s2[] = {2};
  double a[] = {1.5e10, -2.0};
  CHECK_FMT(a, TL_F64, 1, s2, "[ 1.5e+10 -2.0e+00]");
  double r1[] = {1.0, 1001.0}; /* max/min > 1000 */
  CHECK_FMT(r1, TL_F64, 1, s2, "[1.000e+00 1.001e+03]");
  double r2[] = {1.0, 1000.0}; /* exactly 1000: still fixed */
  CHECK_FMT(r2, TL_F64, 1, s2, "[   1. 1000.]");
}

TEST(format_scientific_digits) {
  int64_t s2[] = {2}, s3[] = {3};
  double a[] = {1e100, 1e-5}; /* a 3-digit exponent widens every exponent */
  CHECK_FMT(a, TL_F64, 1, s2, "[1.e+100 1.e-005]");
  double b[] = {0.1, 1.2345678e-5}; /* common mantissa digit count */
  CHECK_FMT(b, TL_F64, 1, s2, "[1.0000000e-01 1.2345678e-05]");
  float c[] = {3e-7f, 1.0f, 2.5e9f};
  CHECK_FMT(c, TL_F32, 1, s3, "[3.0e-07 1.0e+00 2.5e+09]");
}

TEST(format_nan_inf) {
  int64_t s4[] = {4}, s3[] = {3}, s2[] = {2};
  double a[] = {1.5, NAN, -INFINITY, INFINITY};
  CHECK_FMT(a, TL_F64, 1, s4, "[ 1.5  nan -inf  inf]");
  double b[] = {1e-5, NAN, -INFINITY};
  CHECK_FMT(b, TL_F64, 1, s3, "[1.e-05    nan   -inf]");
  double c[] = {NAN, INFINITY};
  CHECK_FMT(c, TL_F64, 1, s2, "[nan inf]");
  float d[] = {NAN, -INFINITY};
  CHECK_FMT(d, TL_F32, 1, s2, "[ nan -inf]");
}

TEST(format_wrap_1d) {
  int64_t s[] = {30};
  double a[30];
  for (int i = 0; i < 30; i++) a[i] = i / 29.0; /* np.linspace(0, 1, 30) */
  a[29] = 1.0;
  CHECK_FMT(a, TL_F64, 1, s,
            "[0.         0.03448276 0.06896552 0.10344828 0.13793103 0.17241379\n"
            " 0.20689655 0.24137931 0.27586207 0.31034483 0.34482759 0.37931034\n"
            " 0.4137931  0.44827586 0.48275862 0.51724138 0.55172414 0.5862069\n"
            " 0.62068966 0.65517241 0.68965517 0.72413793 0.75862069 0.79310345\n"
            " 0.82758621 0.86206897 0.89655172 0.93103448 0.96551724 1.        ]");
}

TEST(format_wrap_2d) {
  int64_t s[] = {2, 30};
  int32_t a[60];
  for (int i = 0; i < 60; i++) a[i] = i * 1000;
  CHECK_FMT(a, TL_I32, 2, s,
            "[[    0  1000  2000  3000  4000  5000  6000  7000  8000  9000 10000 11000\n"
            "  12000 13000 14000 15000 16000 17000 18000 19000 20000 21000 22000 23000\n"
            "  24000 25000 26000 27000 28000 29000]\n"
            " [30000 31000 32000 33000 34000 35000 36000 37000 38000 39000 40000 41000\n"
            "  42000 43000 44000 45000 46000 47000 48000 49000 50000 51000 52000 53000\n"
            "  54000 55000 56000 57000 58000 59000]]");
}

TEST(format_bad_arguments) {
  int64_t s[] = {2};
  CHECK(tl_format_array(NULL, TL_F32, 1, s) == NULL);
  CHECK(tl_format_array(s, (tl_dtype)99, 1, s) == NULL);
  CHECK(tl_format_array(s, TL_I64, -1, s) == NULL);
}
