/* conv.c — 2-D convolution and pooling over NCHW tensors.
 *
 * Like nn.c, everything here is a composition of public tl.h operations, so autograd
 * records each step and no backward rule of its own is needed. The windows are
 * gathered im2col-style from views: the input is padded (tl_pad), and for every kernel
 * offset (ki, kj) a strided slice of it picks the [N, C, OH, OW] values that offset
 * sees; the kh * kw slices stacked give [N, C, kh, kw, OH, OW]. Convolution is then
 * one matmul of the kernel [O, C*kh*kw] with those columns [N, C*kh*kw, OH*OW]; max
 * and average pooling reduce the stacked windows. The slices and the stack are views
 * and pads summed, which the engine fuses into the kernel that reads them.
 * Convolution itself is one CONV2D node (tl_api_conv2d), recorded with its own
 * gradient rule: the prelude runs it and both gradients as implicit GEMMs, gathering
 * the windows while it packs the GEMM's panels (codegen/kernel_prelude_conv.h); the
 * windows-and-matmul form above remains for mixed dtypes and huge strides. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tl.h"
/* For ctx->err (tl.h offers no way to set an error from outside src/api) and the
 * CONV2D node (tl_api_conv2d), which tl.h does not offer either. */
#include "api/context.h"
#include "graph/build.h"
#include "nn/nn_internal.h"

/* the most kernel rows or columns: tl_stack takes at most 256 tensors */
#define TL_CONV_MAX_K 256



static int tl_conv_is_float(tl_dtype d) { return d == TL_F32 || d == TL_F64; }

/* The input checks shared by convolution and pooling: x float NCHW, a kernel of
 * kh x kw that fits the padded input, positive strides. Sets *oh, *ow. */
static int tl_conv_check(tl_ctx *ctx, const char *what, tl_tensor *x, int64_t kh, int64_t kw, int64_t sh,
                         int64_t sw, int64_t ph, int64_t pw, int64_t *oh, int64_t *ow) {
  char sa[200];
  tl_dtype dt = tl_get_dtype(x);
  if (tl_ndim(x) != 4)
    return tl_nn_fail(ctx, TL_ERR_SHAPE, "%s: input must be [N, C, H, W], got %s", what,
                        tl_nn_shape_str(x, sa, sizeof sa)) != NULL;
  if (!tl_conv_is_float(dt))
    return tl_nn_fail(ctx, TL_ERR_DTYPE, "%s: input must be f32 or f64, got %s", what, tl_dtype_name(dt)) != NULL;
  if (sh <= 0 || sw <= 0)
    return tl_nn_fail(ctx, TL_ERR_ARG, "%s: stride must be positive, got %lld x %lld", what, (long long)sh,
                        (long long)sw) != NULL;
  if (ph < 0 || pw < 0)
    return tl_nn_fail(ctx, TL_ERR_ARG, "%s: padding must be >= 0, got %lld x %lld", what, (long long)ph,
                        (long long)pw) != NULL;
  if (kh <= 0 || kw <= 0 || kh > TL_CONV_MAX_K || kw > TL_CONV_MAX_K)
    return tl_nn_fail(ctx, TL_ERR_ARG, "%s: kernel size must be in [1, %d], got %lld x %lld", what, TL_CONV_MAX_K,
                        (long long)kh, (long long)kw) != NULL;
  if (ph > TL_MAX_NUMEL || pw > TL_MAX_NUMEL) /* keeps the sums below from overflowing */
    return tl_nn_fail(ctx, TL_ERR_RANGE, "%s: padding %lld x %lld is too large", what, (long long)ph,
                        (long long)pw) != NULL;
  int64_t hp = tl_dim(x, 2) + 2 * ph, wp = tl_dim(x, 3) + 2 * pw;
  if (kh > hp || kw > wp)
    return tl_nn_fail(ctx, TL_ERR_SHAPE, "%s: kernel %lld x %lld is bigger than the padded input %lld x %lld", what,
                        (long long)kh, (long long)kw, (long long)hp, (long long)wp) != NULL;
  *oh = (hp - kh) / sh + 1;
  *ow = (wp - kw) / sw + 1;
  return 1;
}

/* [N, C, kh, kw, OH, OW]: window (ki, kj) of output (i, j) is xp[.., i*sh + ki, j*sw + kj] */
static tl_tensor *tl_conv_windows(tl_tensor *x, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                                  int64_t ph, int64_t pw, int64_t oh, int64_t ow) {
  tl_tensor *xp = x;
  if (ph || pw) xp = tl_pad(x, (int64_t[]){0, 0, ph, pw}, (int64_t[]){0, 0, ph, pw}, 0.0);
  if (!xp) return NULL;
  tl_tensor *rows[TL_CONV_MAX_K], *cols[TL_CONV_MAX_K];
  for (int64_t ki = 0; ki < kh; ki++) {
    tl_tensor *band = tl_slice(xp, 2, ki, ki + (oh - 1) * sh + 1, sh); /* [N, C, OH, Wp] */
    for (int64_t kj = 0; kj < kw; kj++) cols[kj] = tl_slice(band, 3, kj, kj + (ow - 1) * sw + 1, sw);
    rows[ki] = kw == 1 ? tl_unsqueeze(cols[0], 2) : tl_stack((int)kw, cols, 2); /* [N, C, kw, OH, OW] */
    if (!rows[ki]) return NULL;
  }
  return kh == 1 ? tl_unsqueeze(rows[0], 2) : tl_stack((int)kh, rows, 2);
}

tl_tensor *tl_conv2d(tl_tensor *x, tl_tensor *w, tl_tensor *bias, int64_t stride_h, int64_t stride_w, int64_t pad_h,
                     int64_t pad_w) {
  if (!x || !w) return NULL;
  tl_ctx *ctx = tl_context(x), *wc = ctx ? tl_context(w) : NULL, *bc = bias && wc ? tl_context(bias) : wc;
  if (!ctx || !wc || !bc) return NULL;
  if (wc != ctx || bc != ctx) return tl_nn_fail(ctx, TL_ERR_ARG, "conv2d: tensors from different contexts");
  char sa[200], sb[200];
  if (tl_ndim(w) != 4)
    return tl_nn_fail(ctx, TL_ERR_SHAPE, "conv2d: kernel must be [out, in, kh, kw], got %s",
                        tl_nn_shape_str(w, sa, sizeof sa));
  if (!tl_conv_is_float(tl_get_dtype(w)))
    return tl_nn_fail(ctx, TL_ERR_DTYPE, "conv2d: kernel must be f32 or f64, got %s", tl_dtype_name(tl_get_dtype(w)));
  int64_t o = tl_dim(w, 0), c = tl_dim(w, 1), kh = tl_dim(w, 2), kw = tl_dim(w, 3), oh = 0, ow = 0;
  if (!tl_conv_check(ctx, "conv2d", x, kh, kw, stride_h, stride_w, pad_h, pad_w, &oh, &ow)) return NULL;
  if (tl_dim(x, 1) != c)
    return tl_nn_fail(ctx, TL_ERR_SHAPE, "conv2d: input %s has %lld channels, the kernel %s expects %lld",
                        tl_nn_shape_str(x, sa, sizeof sa), (long long)tl_dim(x, 1),
                        tl_nn_shape_str(w, sb, sizeof sb), (long long)c);
  if (bias && (tl_ndim(bias) != 1 || tl_dim(bias, 0) != o))
    return tl_nn_fail(ctx, TL_ERR_SHAPE, "conv2d: bias must be [%lld] (the kernel's out channels), got %s",
                        (long long)o, tl_nn_shape_str(bias, sa, sizeof sa));
  if (bias && !tl_conv_is_float(tl_get_dtype(bias)))
    return tl_nn_fail(ctx, TL_ERR_DTYPE, "conv2d: bias must be f32 or f64, got %s",
                        tl_dtype_name(tl_get_dtype(bias)));
  int64_t n = tl_dim(x, 0), k = c * kh * kw;
  tl_scope *s = tl_scope_begin(ctx, "conv2d");
  if (!s) return NULL;
  tl_tensor *y;
  if (tl_get_dtype(x) == tl_get_dtype(w) && stride_h < TL_CONV_PARAM_LIMIT && stride_w < TL_CONV_PARAM_LIMIT &&
      pad_h < TL_CONV_PARAM_LIMIT && pad_w < TL_CONV_PARAM_LIMIT) {
    y = tl_api_conv2d(x, w, stride_h, stride_w, pad_h, pad_w); /* one node, implicit GEMM */
  } else { /* mixed dtypes (promoted as matmul does) or huge strides: windows and a matmul */
    tl_tensor *win = tl_conv_windows(x, kh, kw, stride_h, stride_w, pad_h, pad_w, oh, ow);
    tl_tensor *cols = tl_reshape(win, 3, (int64_t[]){n, k, oh * ow});
    y = tl_matmul(tl_reshape(w, 2, (int64_t[]){o, k}), cols); /* [N, O, OH*OW] */
    y = tl_reshape(y, 4, (int64_t[]){n, o, oh, ow});
  }
  if (bias) y = tl_add(y, tl_reshape(bias, 4, (int64_t[]){1, o, 1, 1}));
  return tl_api_finish(ctx, s, y, "conv2d");
}

static tl_tensor *tl_pool2d(tl_tensor *x, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int is_max,
                            const char *what) {
  if (!x) return NULL;
  tl_ctx *ctx = tl_context(x);
  if (!ctx) return NULL;
  int64_t oh = 0, ow = 0;
  if (!tl_conv_check(ctx, what, x, kh, kw, sh, sw, 0, 0, &oh, &ow)) return NULL;
  int64_t n = tl_dim(x, 0), c = tl_dim(x, 1);
  tl_scope *s = tl_scope_begin(ctx, what);
  if (!s) return NULL;
  tl_tensor *win = tl_reshape(tl_conv_windows(x, kh, kw, sh, sw, 0, 0, oh, ow), 5,
                              (int64_t[]){n, c, kh * kw, oh, ow});
  int axis = 2;
  tl_tensor *y = is_max ? tl_max(win, 1, &axis, 0) : tl_mean(win, 1, &axis, 0);
  return tl_api_finish(ctx, s, y, what);
}

tl_tensor *tl_max_pool2d(tl_tensor *x, int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w) {
  return tl_pool2d(x, kh, kw, stride_h, stride_w, 1, "max_pool2d");
}

tl_tensor *tl_avg_pool2d(tl_tensor *x, int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w) {
  return tl_pool2d(x, kh, kw, stride_h, stride_w, 0, "avg_pool2d");
}
