/* autograd.c — records, their order and saved values, and one step of backward. */
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "core/hash.h"
#include "core/vec.h"
#include "graph/rewrite.h"

/* ---- records ---------------------------------------------------------------------- */
static void keep_value(tl_uop **slot, tl_uop *u) {
  tl_uop_retain(u);
  *slot = u;
}

tl_ag_node *tl_ag_new(int op, const int64_t *params, int nparams, tl_uop *out, int nin) {
  tl_ag_node *n = calloc(1, sizeof *n + sizeof(tl_ag_input) * (size_t)nin);
  if (!n) return NULL;
  n->refs = 1;
  n->op = op;
  n->nin = nin;
  n->dtype = (tl_dtype)out->dtype;
  n->ndim = out->ndim;
  memcpy(n->shape, out->shape, sizeof(int64_t) * (size_t)n->ndim);
  if (nparams) memcpy(n->p, params, sizeof(int64_t) * (size_t)nparams);
  if (tl_ag_reads(op, n->p) & TL_READS_OUT) keep_value(&n->out, out);
  return n;
}

void tl_ag_set_input(tl_ag_node *n, int i, tl_ag_node *fn, tl_uop *value) {
  tl_ag_input *in = &n->in[i];
  in->dtype = (tl_dtype)value->dtype;
  in->ndim = value->ndim;
  memcpy(in->shape, value->shape, sizeof(int64_t) * (size_t)in->ndim);
  if (i < 3 && (tl_ag_reads(n->op, n->p) & (1u << i))) keep_value(&in->value, value);
  if (fn) {
    in->fn = fn;
    fn->refs++;
  }
}

tl_ag_node *tl_ag_leaf(tl_dtype dtype, int ndim, const int64_t *shape) {
  tl_ag_node *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  n->refs = 1;
  n->op = TL_AG_LEAF;
  n->dtype = dtype;
  n->ndim = ndim;
  memcpy(n->shape, shape, sizeof(int64_t) * (size_t)ndim);
  return n;
}

/* iterative: a chain of records may be as long as the program's loop */
void tl_ag_release(tl_graph *g, tl_ag_node *n) {
  tl_ag_node **stack = NULL;
  size_t depth = 0, cap = 0;
  while (n) {
    if (--n->refs == 0) {
      for (int i = 0; i < n->nin; i++) {
        if (n->in[i].value) tl_uop_release(g, n->in[i].value);
        tl_ag_node *fn = n->in[i].fn;
        if (!fn) continue;
        if (depth == cap && !tl_vec_grow(&stack, &cap, depth + 1, sizeof *stack)) {
          tl_ag_release(g, fn); /* cannot defer: drop the reference here (recursion is bounded by memory) */
          continue;
        }
        stack[depth++] = fn;
      }
      if (n->out) tl_uop_release(g, n->out);
      if (n->grad) tl_uop_release(g, n->grad);
      if (n->kept) tl_uop_release(g, n->kept);
      free(n);
    }
    n = depth ? stack[--depth] : NULL;
  }
  free(stack);
}

/* ---- backward --------------------------------------------------------------------- */
bool tl_ag_list_add(tl_ag_list *l, tl_ag_node *n) {
  if (l->n == l->cap && !tl_vec_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v)) return false;
  l->v[l->n++] = n;
  return true;
}

/* iterative depth-first post-order: the chain can be as long as a training loop; with
 * skip_saved, realizing the tensors of a loop one by one walks only what each
 * iteration added */
bool tl_ag_order(tl_ag_node *root, bool skip_saved, tl_ag_list *order) {
  typedef struct {
    tl_ag_node *n;
    int next;
  } frame;
  tl_ptrmap seen = {0};
  frame *stack = NULL;
  size_t depth = 0, cap = 0;
  bool ok = tl_ptrmap_put(&seen, root, root);
  tl_ag_node *push = root;
  while (ok && (push || depth)) {
    if (push) {
      if (depth == cap && !tl_vec_grow(&stack, &cap, depth + 1, sizeof *stack)) {
        ok = false;
        break;
      }
      stack[depth++] = (frame){push, 0};
      push = NULL;
    }
    frame *f = &stack[depth - 1];
    if (f->next < f->n->nin) {
      tl_ag_node *child = f->n->in[f->next++].fn;
      if (child && !(skip_saved && child->saved) && !tl_ptrmap_get(&seen, child)) {
        ok = tl_ptrmap_put(&seen, child, child);
        push = child;
      }
    } else {
      ok = tl_ag_list_add(order, f->n);
      depth--;
    }
  }
  tl_ptrmap_free(&seen);
  free(stack);
  return ok;
}

bool tl_ag_saved_values(const tl_ag_list *order, tl_uop ***values, size_t *n) {
  size_t cap = 0;
  tl_ptrmap seen = {0};
  bool ok = true;
  *values = NULL;
  *n = 0;
  for (size_t k = 0; ok && k < order->n; k++) {
    const tl_ag_node *r = order->v[k];
    for (int i = -1; ok && i < r->nin; i++) {
      tl_uop *u = i < 0 ? r->out : r->in[i].value;
      while (u && u->op == TL_OP_VIEW) u = u->src[0];
      if (!u || u->op == TL_OP_BUFFER || tl_ptrmap_get(&seen, u)) continue;
      if (*n == cap && !tl_vec_grow(values, &cap, *n + 1, sizeof **values)) {
        ok = false;
        break;
      }
      (*values)[(*n)++] = u;
      ok = tl_ptrmap_put(&seen, u, u);
    }
  }
  tl_ptrmap_free(&seen);
  return ok;
}

void tl_ag_mark_saved(const tl_ag_list *order) {
  for (size_t k = 0; k < order->n; k++) order->v[k]->saved = true;
}

bool tl_ag_history_values(tl_ag_node *root, tl_uop ***values, size_t *n) {
  tl_ag_list order = {0};
  bool ok = tl_ag_order(root, true, &order) && tl_ag_saved_values(&order, values, n);
  free(order.v);
  return ok;
}

void tl_ag_mark_history_saved(tl_ag_node *root) {
  tl_ag_list order = {0};
  if (tl_ag_order(root, true, &order)) tl_ag_mark_saved(&order);
  free(order.v); /* out of memory: nothing marked, the values are found again next time */
}

bool tl_ag_accumulate(tl_graph *g, tl_ag_node *n, tl_uop *grad) {
  if (n->grad) grad = tl_build_binary(g, TL_OP_ADD, n->grad, grad);
  if (!grad) return false;
  tl_uop_retain(grad);
  if (n->grad) tl_uop_release(g, n->grad);
  n->grad = grad;
  return true;
}

bool tl_ag_keep(tl_graph *g, tl_ag_node *n) {
  size_t mark = tl_graph_mark(g); /* the sum's own builder reference goes at the end */
  tl_uop *k = n->kept ? tl_build_binary(g, TL_OP_ADD, n->kept, n->grad) : n->grad;
  if (k) {
    tl_uop_retain(k);
    n->kept_sum = n->kept != NULL;
    if (n->kept) tl_uop_release(g, n->kept);
    n->kept = k;
  }
  tl_graph_release_to(g, mark);
  return k != NULL;
}

int tl_ag_inputs_needing_grad(const tl_ag_node *n) {
  int k = 0;
  for (int i = 0; i < n->nin; i++) k += n->in[i].fn != NULL;
  return k;
}

bool tl_ag_step(tl_graph *g, tl_error *err, tl_ag_node *n) {
  tl_uop *stack_grads[4], **grads = n->nin <= 4 ? stack_grads : calloc((size_t)n->nin, sizeof *grads);
  if (!grads) return false;
  memset(grads, 0, sizeof *grads * (size_t)n->nin);
  size_t mark = tl_graph_mark(g);
  bool ok = tl_ag_input_grads(g, err, n, n->grad, grads);
  for (int i = 0; ok && i < n->nin; i++)
    if (n->in[i].fn && grads[i]) ok = tl_ag_accumulate(g, n->in[i].fn, grads[i]);
  tl_graph_release_to(g, mark);
  if (grads != stack_grads) free(grads);
  tl_uop_release(g, n->grad);
  n->grad = NULL;
  return ok;
}
