/* rt_ml.h — the run time of the seed language's model helpers (rt_ml.c, docs/language.md
 * §5): VarBuilder's named parameters, sampling from logits (top_k_sample, top_p_sample)
 * and the in-place gradient clips. Every failure is a run-time error at (line, col).
 * Tensors in are borrowed, tensors out are new references. */
#ifndef TL_LANG_RT_ML_H
#define TL_LANG_RT_ML_H

#include "lang/rt/rt.h"
#include "lang/rt/rt_vec.h"

/* VarBuilder::get(name, shape): the parameter called name, made on its first call
 * (N(0, 1), a leaf that requires grad) and the same tensor on every later one (the
 * shape must then be the same) */
TL_API tl_tensor *tlrt_varbuilder_get(tlrt *R, const tlrt_str *name, const tlrt_vec *shape, int line, int col);
/* VarBuilder::grad(name): that parameter's gradient; an unknown name is an error */
TL_API tl_tensor *tlrt_varbuilder_grad(tlrt *R, const tlrt_str *name, int line, int col);
/* drops every named parameter (the end of main, an error exit) */
TL_API void tlrt_varbuilder_end(tlrt *R);
/* one index drawn from softmax(logits) along the last axis, restricted to the k largest
 * (top_k) or to the smallest set of largest probabilities whose sum reaches p (top_p):
 * an i64 tensor of the logits' shape with a last axis of 1, as torch.multinomial */
TL_API tl_tensor *tlrt_sample_logits(tlrt *R, tl_tensor *logits, int top_p, double k_or_p, int line, int col);
/* g.clip_grad_value(lo, hi): *g becomes clamp(*g, lo, hi) */
TL_API void tlrt_clip_grad_value(tlrt *R, tl_tensor **g, double lo, double hi, int line, int col);
/* g.clip_grad_norm(max_norm, p): the p-norm of *g, and *g scaled by
 * min(1, max_norm / (norm + 1e-6)) (torch.nn.utils.clip_grad_norm_) */
TL_API double tlrt_clip_grad_norm(tlrt *R, tl_tensor **g, double max_norm, double p, int line, int col);
/* logits / temp (temp > 0) */
TL_API tl_tensor *tlrt_temperature_scale(tlrt *R, tl_tensor *logits, double temp, int line, int col);
/* the logits at the indices tokens holds (whole numbers) divided by penalty when above
 * 0, else multiplied by it (CTRL's, Hugging Face's repetition penalty) */
TL_API tl_tensor *tlrt_repetition_penalty(tlrt *R, tl_tensor *logits, tl_tensor *tokens, double penalty, int line, int col);
/* Tensor::sdpa(q, k, v): softmax(q k^T / sqrt(d)) v */
TL_API tl_tensor *tlrt_sdpa(tlrt *R, tl_tensor *q, tl_tensor *k, tl_tensor *v, int line, int col);
/* op 0: a.inverse(), 1: a.det(), 2: a.solve(b) (tl.h's tl_inverse, tl_det, tl_solve);
 * 3, 4, 5: a.svd_u(), svd_s(), svd_v() (tl_svd); 6, 7: a.eig_values(), eig_vectors() (tl_eigh) */
/* a.svd(): the tuple's three fields (U, S, V), tl.h's tl_svd */
TL_API void tlrt_svd(tlrt *R, tl_tensor *a, tl_tensor **u, tl_tensor **s, tl_tensor **v, int line, int col);
TL_API tl_tensor *tlrt_linalg(tlrt *R, int op, tl_tensor *a, tl_tensor *b, int line, int col);

#endif
