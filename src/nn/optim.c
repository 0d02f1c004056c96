/* optim.c — SGD (with momentum), Adam and AdamW, PyTorch's formulas.
 *
 * An optimizer holds a reference (tl_retain) to each parameter, so the parameters
 * outlive the scope that made them until tl_optimizer_free. Its per-parameter state
 * (momentum buffer, Adam's m and v) lives in a free-standing scope of its own: each
 * step makes the new parameters and state in a temporary scope, realizes them all in
 * one kernel (tl_realize_many; no graph grows across steps), moves the state into the
 * state scope and releases the old state there.
 * A step runs with recording off: the updates are not part of any model's history. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

#include "tl.h"
/* Only for ctx->err: tl.h offers no way to set an error from outside src/api. */
#include "api/context.h"
#include "autograd/autograd.h"

typedef enum { TL_OPT_SGD, TL_OPT_ADAM, TL_OPT_ADAMW } tl_optim_kind;

struct tl_optimizer {
  tl_optim_kind kind;
  const char *name; /* "sgd", "adam", "adamw": starts its messages */
  tl_ctx *ctx;
  double lr, momentum, beta1, beta2, eps, weight_decay;
  int64_t t;          /* steps taken: Adam's bias correction */
  int n;
  tl_tensor **params; /* retained */
  tl_tensor **m, **v; /* state, NULL until the first step: momentum buffer in m */
  tl_scope *state;    /* owns everything in m and v */
  bool dist_sync;     /* average the gradients over the ranks first (tl_optimizer_set_dist_sync) */
};

/* one step's Adam factors, per dtype (0 f32, 1 f64) and factor, made on first use in
 * the step's scope and shared by every parameter: one input of the step's kernel
 * instead of two per parameter */
typedef tl_tensor *tl_optim_factors[2][2];

static tl_status tl_optim_fail(tl_ctx *ctx, tl_status st, const char *fmt, ...) TL_PRINTF(3, 4);
static tl_status tl_optim_fail(tl_ctx *ctx, tl_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_error_vset(&ctx->err, st, fmt, ap);
  va_end(ap);
  return st;
}

/* ---- creation ------------------------------------------------------------------- */

/* 1 a leaf (its record is the autograd's leaf), 0 not (a computed tensor: a held one
 * keeps a gradient too, but an optimizer steps leaves only) */
static int tl_optim_is_leaf(tl_ctx *ctx, tl_tensor *handle) {
  (void)ctx;
  tl_tensor *p = tl_api_tensor(handle, "optimizer"); /* the handle is live: checked before */
  return p && p->ag && p->ag->op == TL_AG_LEAF;
}

/* Parameter i must be a live leaf requiring grad, of ctx, listed once. */
static tl_status tl_optim_check_param(tl_ctx *ctx, const char *name, tl_tensor *const *params, int i) {
  tl_tensor *p = params[i];
  tl_ctx *pc = tl_context(p);
  if (!pc) return tl_optim_fail(ctx, TL_ERR_ARG, "%s: parameter %d was released (use after release)", name, i);
  if (pc != ctx) return tl_optim_fail(ctx, TL_ERR_ARG, "%s: parameter %d comes from another context", name, i);
  if (!tl_requires_grad(p))
    return tl_optim_fail(ctx, TL_ERR_ARG, "%s: parameter %d does not require grad", name, i);
  int leaf = tl_optim_is_leaf(ctx, p);
  if (leaf < 0) return tl_optim_fail(ctx, TL_ERR_NOMEM, "%s: out of memory", name);
  if (!leaf)
    return tl_optim_fail(ctx, TL_ERR_ARG, "%s: parameter %d is not a leaf (it is computed from other tensors)",
                         name, i);
  for (int j = 0; j < i; j++)
    if (params[j] == p) return tl_optim_fail(ctx, TL_ERR_ARG, "%s: parameter %d repeats parameter %d", name, i, j);
  return TL_OK;
}

static tl_status tl_optim_check_hyper(const tl_optimizer *o) {
  /* each must lie in [0, hi); NaN fails the test too */
  struct { const char *what; double value, hi; } h[] = {
      {"lr", o->lr, INFINITY},   {"momentum", o->momentum, INFINITY}, {"beta1", o->beta1, 1},
      {"beta2", o->beta2, 1},    {"eps", o->eps, INFINITY},           {"weight_decay", o->weight_decay, INFINITY},
  };
  for (size_t i = 0; i < sizeof h / sizeof h[0]; i++) {
    if (h[i].value >= 0 && h[i].value < h[i].hi) continue;
    if (h[i].hi == 1)
      return tl_optim_fail(o->ctx, TL_ERR_ARG, "%s: %s must be in [0, 1), got %g", o->name, h[i].what, h[i].value);
    return tl_optim_fail(o->ctx, TL_ERR_ARG, "%s: %s must be finite and >= 0, got %g", o->name, h[i].what,
                         h[i].value);
  }
  return TL_OK;
}

static void tl_optim_release(tl_optimizer *o, int nretained) {
  for (int i = 0; i < nretained; i++) tl_unretain(o->params[i]);
  if (o->state) tl_scope_free(o->state);
  free(o->params);
  free(o->m);
  free(o->v);
  free(o);
}

/* n >= 1 parameters, the context taken from the first. A NULL parameter (a failed
 * call upstream) gives NULL and keeps that call's message, like any NULL input. With
 * no parameter there is no context: the message goes where tl_last_error(NULL) reads. */
static tl_optimizer *tl_optim_new(tl_optim_kind kind, const char *name, int n, tl_tensor *const *params,
                                  const double hyper[6]) {
  if (n < 1 || !params) {
    if (n < 1) tl_api_fail_orphan(TL_ERR_ARG, "%s: n is %d; at least one parameter is needed", name, n);
    else tl_api_fail_orphan(TL_ERR_ARG, "%s: the parameter array is NULL (n = %d)", name, n);
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!params[i]) return NULL;
  tl_ctx *ctx = tl_context(params[0]);
  if (!ctx) return NULL;
  tl_optimizer *o = calloc(1, sizeof *o);
  if (!o) {
    tl_optim_fail(ctx, TL_ERR_NOMEM, "%s: out of memory", name);
    return NULL;
  }
  *o = (tl_optimizer){.kind = kind, .name = name, .ctx = ctx, .lr = hyper[0], .momentum = hyper[1],
                      .beta1 = hyper[2], .beta2 = hyper[3], .eps = hyper[4], .weight_decay = hyper[5], .n = n};
  o->params = calloc((size_t)n, sizeof *o->params);
  o->m = calloc((size_t)n, sizeof *o->m);
  o->v = calloc((size_t)n, sizeof *o->v);
  if (!o->params || !o->m || !o->v) {
    tl_optim_fail(ctx, TL_ERR_NOMEM, "%s: out of memory", name);
    goto fail;
  }
  if (tl_optim_check_hyper(o) != TL_OK) goto fail;
  for (int i = 0; i < n; i++)
    if (tl_optim_check_param(ctx, name, params, i) != TL_OK) goto fail;
  if (!(o->state = tl_scope_new(ctx, name))) goto fail;
  for (int i = 0; i < n; i++) o->params[i] = tl_retain(params[i]);
  return o;
fail:
  tl_optim_release(o, 0);
  return NULL;
}

tl_optimizer *tl_sgd(int n, tl_tensor *const *params, double lr, double momentum, double weight_decay) {
  const double h[6] = {lr, momentum, 0, 0, 0, weight_decay};
  return tl_optim_new(TL_OPT_SGD, "sgd", n, params, h);
}

tl_optimizer *tl_adam(int n, tl_tensor *const *params, double lr, double beta1, double beta2, double eps,
                      double weight_decay) {
  const double h[6] = {lr, 0, beta1, beta2, eps, weight_decay};
  return tl_optim_new(TL_OPT_ADAM, "adam", n, params, h);
}

tl_optimizer *tl_adamw(int n, tl_tensor *const *params, double lr, double beta1, double beta2, double eps,
                       double weight_decay) {
  const double h[6] = {lr, 0, beta1, beta2, eps, weight_decay};
  return tl_optim_new(TL_OPT_ADAMW, "adamw", n, params, h);
}

/* ---- the step ------------------------------------------------------------------- */

/* the status of the call that just returned NULL inside a step */
static tl_status tl_optim_status(const tl_ctx *ctx) {
  tl_status st = tl_last_status(ctx);
  return st != TL_OK ? st : TL_ERR_INTERNAL;
}

/* Replaces *slot by fresh (a tensor of the current, temporary scope, already realized
 * with the parameter: tl_optim_step_param): moved into the state scope, and the old
 * state released there (only its owner's scope may release it). */
static tl_status tl_optim_swap_state(tl_optimizer *o, tl_tensor **slot, tl_tensor *fresh) {
  tl_status st = tl_scope_adopt(o->state, fresh);
  if (st != TL_OK) return st;
  if (*slot) {
    if ((st = tl_scope_enter(o->state)) != TL_OK) return st;
    tl_release(*slot);
    st = tl_scope_leave(o->state);
  }
  *slot = fresh;
  return st;
}

/* SGD: d = g + wd*p; buf = momentum*buf + d (buf = d at first); p -= lr*buf */
static tl_tensor *tl_optim_sgd_target(tl_optimizer *o, int i, tl_tensor *p, tl_tensor *g, tl_tensor **state) {
  if (o->momentum != 0) {
    /* the first buffer is a copy of the gradient, not a handle sharing its node */
    tl_tensor *buf = o->m[i] ? tl_add(tl_mul_scalar(o->m[i], o->momentum), g) : tl_contiguous(g);
    state[0] = buf;
    g = buf;
  }
  return g ? tl_sub(p, tl_mul_scalar(g, o->lr)) : NULL;
}

/* A factor that changes every step, as data: a constant would be compiled into the
 * kernel, and every step would compile new kernels. In p's dtype, so nothing promotes;
 * made once per step and dtype (which: 0 or 1, the factor), in the step's scope. */
static tl_tensor *tl_optim_step_scalar(tl_optim_factors f, tl_tensor *p, int which, double value) {
  int wide = tl_get_dtype(p) == TL_F64;
  tl_tensor **slot = &f[wide][which];
  if (*slot) return *slot;
  float narrow = (float)value;
  return *slot = tl_from_data(tl_context(p), wide ? TL_F64 : TL_F32, 0, NULL, wide ? (const void *)&value : &narrow);
}

/* Adam: m = b1*m + (1-b1)g; v = b2*v + (1-b2)g^2 (zeros at first);
 * p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps) */
static tl_tensor *tl_optim_adam_target(tl_optimizer *o, int i, tl_tensor *p, tl_tensor *g, tl_tensor **state,
                                       tl_optim_factors f) {
  tl_tensor *gm = tl_mul_scalar(g, 1 - o->beta1), *gv = tl_mul_scalar(tl_mul(g, g), 1 - o->beta2);
  tl_tensor *m = o->m[i] ? tl_add(tl_mul_scalar(o->m[i], o->beta1), gm) : gm;
  tl_tensor *v = o->v[i] ? tl_add(tl_mul_scalar(o->v[i], o->beta2), gv) : gv;
  state[0] = m;
  state[1] = v;
  double bc1 = 1 - pow(o->beta1, (double)o->t), bc2 = 1 - pow(o->beta2, (double)o->t);
  tl_tensor *denom = tl_add_scalar(tl_sqrt(tl_mul(v, tl_optim_step_scalar(f, p, 0, 1 / bc2))), o->eps);
  tl_tensor *update = tl_mul(tl_div(m, denom), tl_optim_step_scalar(f, p, 1, o->lr / bc1));
  /* AdamW decays the parameter itself, before the update, instead of the gradient */
  if (o->kind == TL_OPT_ADAMW) p = tl_mul_scalar(p, 1 - o->lr * o->weight_decay);
  return tl_sub(p, update);
}

/* Parameter i's update (tl_assign: the parameter's new value, lazy) and its new state
 * (momentum, or Adam's m and v) into state[0..*nstate), tensors of the current scope. */
static tl_status tl_optim_build_param(tl_optimizer *o, int i, tl_tensor **state, int *nstate, tl_optim_factors f) {
  tl_tensor *p = o->params[i], *g = tl_grad(p);
  if (g && o->weight_decay != 0 && o->kind != TL_OPT_ADAMW) g = tl_add(g, tl_mul_scalar(p, o->weight_decay));
  tl_tensor *target = !g ? NULL
                      : o->kind == TL_OPT_SGD ? tl_optim_sgd_target(o, i, p, g, state)
                                              : tl_optim_adam_target(o, i, p, g, state, f);
  *nstate = o->kind == TL_OPT_SGD ? (o->momentum != 0) : 2;
  bool made = target != NULL;
  for (int k = 0; k < *nstate; k++) made = made && state[k];
  return made ? tl_assign(p, target) : tl_optim_status(o->ctx);
}

/* Every parameter and its new state are realized together (tl_realize_many): one
 * kernel reads each gradient, parameter and old state once and writes all of them. */
static tl_status tl_optim_step_all(tl_optimizer *o) {
  tl_scope *s = tl_scope_begin(o->ctx, o->name);
  if (!s) return tl_optim_status(o->ctx);
  tl_optim_factors factors = {{NULL, NULL}, {NULL, NULL}};
  tl_tensor **all = malloc(sizeof *all * (size_t)(3 * o->n));
  int *nstate = malloc(sizeof *nstate * (size_t)o->n), count = 0;
  tl_status st = all && nstate ? TL_OK : tl_optim_fail(o->ctx, TL_ERR_NOMEM, "out of memory");
  for (int i = 0; st == TL_OK && i < o->n; i++) {
    tl_tensor *state[2] = {NULL, NULL};
    st = tl_optim_build_param(o, i, state, &nstate[i], factors);
    for (int k = 0; st == TL_OK && k < nstate[i]; k++) all[count++] = state[k];
    if (st == TL_OK) all[count++] = o->params[i];
  }
  if (st == TL_OK) st = tl_realize_many(count, all);
  for (int i = 0, at = 0; st == TL_OK && i < o->n; at += nstate[i] + 1, i++)
    for (int k = 0; st == TL_OK && k < nstate[i]; k++) st = tl_optim_swap_state(o, k ? &o->v[i] : &o->m[i], all[at + k]);
  free(all);
  free(nstate);
  tl_scope_end(s);
  return st;
}

tl_status tl_optimizer_step(tl_optimizer *opt) {
  if (!opt) return TL_ERR_ARG;
  tl_ctx *ctx = opt->ctx;
  int was_enabled = tl_grad_enabled(ctx);
  tl_set_grad_enabled(ctx, 0);
  opt->t++;
  tl_status st = opt->dist_sync ? tl_dist_sync_grads(opt->n, opt->params) : TL_OK;
  if (st == TL_OK) st = tl_optim_step_all(opt);
  tl_set_grad_enabled(ctx, was_enabled);
  if (st != TL_OK && st == tl_last_status(ctx)) {
    char inner[sizeof ctx->err.msg];
    snprintf(inner, sizeof inner, "%s", ctx->err.msg);
    tl_optim_fail(ctx, st, "%s: step %lld: %s", opt->name, (long long)opt->t, inner);
  }
  return st;
}

tl_status tl_optimizer_set_dist_sync(tl_optimizer *opt, int on) {
  if (!opt) return TL_ERR_ARG;
  opt->dist_sync = on != 0;
  return TL_OK;
}

tl_status tl_optimizer_zero_grad(tl_optimizer *opt) {
  if (!opt) return TL_ERR_ARG;
  tl_status first = TL_OK;
  for (int i = 0; i < opt->n; i++) {
    tl_status st = tl_zero_grad(opt->params[i]);
    if (first == TL_OK) first = st;
  }
  return first;
}

void tl_optimizer_free(tl_optimizer *opt) {
  if (opt) tl_optim_release(opt, opt->n);
}
