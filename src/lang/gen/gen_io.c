/* gen_io.c — code for tensor files and the tensor methods added with them
 * (sema_io.c checks them, rt_io.c runs them). Param::save/load walk the model's struct
 * type here, at compile time: every tensor field, nested structs by dotted names
 * (`enc.w`), as PyTorch's state_dict names them. */
#include <stdlib.h>

#include "lang/gen/gen_impl.h"

typedef struct {
  tl_strbuf names, vals;
  int n;
} param_list;

/* the tensor fields under `base` (a C expression of a struct of type st); load: their
 * addresses, each struct on the way made unique first (a write through the variable) */
static void collect(gen *g, param_list *p, const tl_struct_info *st, const char *base, const char *prefix, bool load,
                    int depth) {
  for (int i = 0; st && i < st->nfields && depth < 32; i++) {
    const tl_field_info *f = &st->fields[i];
    const char *name = prefix ? tl_gen_fmt(g, "%s.%s", prefix, f->name) : f->name;
    const char *access = tl_gen_fmt(g, "%s->f_%s", base, f->name);
    if (f->ty->kind == TY_TENSOR) {
      tl_strbuf_printf(&p->names, "%s\"%s\"", p->n ? ", " : "", name);
      tl_strbuf_printf(&p->vals, "%s%s%s", p->n ? ", " : "", load ? "&" : "", access);
      p->n++;
    } else if (f->ty->kind == TY_STRUCT) {
      const tl_struct_info *sub = f->ty->st;
      if (load)
        tl_gen_emit(g, "tlrt_make_unique(R, (void **)&%s, sizeof(struct %s), %s__retain_fields);", access, sub->cname,
                 sub->cname);
      collect(g, p, sub, access, name, load, depth + 1);
    }
  }
}

static cv gen_params(gen *g, tl_node *n, bool load) {
  tl_node *model = n->args;
  const char *path = tl_gen_expr(g, model->next).c;
  const tl_struct_info *st = model->ty->st;
  const char *base;
  if (load) {
    base = tl_gen_place(g, model);
    tl_gen_emit(g, "tlrt_make_unique(R, (void **)&%s, sizeof(struct %s), %s__retain_fields);", base, st->cname,
             st->cname);
  } else base = tl_gen_expr(g, model).c;
  param_list p = {0};
  collect(g, &p, st, base, NULL, load, 0);
  char *names = tl_gen_take_text(g, &p.names), *vals = tl_gen_take_text(g, &p.vals);
  if (p.n && names && vals)
    tl_gen_emit(g, "tlrt_params_%s(R, %s, %d, (const char *const[]){%s}, (tl_tensor *%s[]){%s}, %d, %d);",
             load ? "load" : "save", path, p.n, names, load ? "*const" : "const", vals, n->line, n->col);
  else tl_gen_fail(g, n, "a model without tensor fields");
  free(names);
  free(vals);
  return tl_gen_scalar("0", TY_UNIT_T);
}

cv tl_gen_io_call(gen *g, tl_node *n) {
  tl_builtin id = (tl_builtin)n->ival;
  tl_node *a = n->args;
  const char *l = tl_gen_fmt(g, "%d, %d", n->line, n->col);
  switch (id) {
  case B_TENSOR_SAVE: {
    const char *t = tl_gen_expr(g, a).c, *path = tl_gen_expr(g, a->next).c;
    tl_gen_emit(g, "tlrt_tensor_save(R, %s, %s, %s);", t, path, l);
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  case B_TENSOR_LOAD: {
    const char *path = tl_gen_expr(g, a).c, *name = a->next ? tl_gen_expr(g, a->next).c : "NULL";
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_tensor_load(R, %s, %s, %s)", path, name, l));
  }
  case B_CLEAR_GRADS: tl_gen_emit(g, "tlrt_clear_grads(R);"); return tl_gen_scalar("0", TY_UNIT_T);
  case B_MANUAL_SEED: tl_gen_emit(g, "tl_manual_seed(R->ctx, (uint64_t)(%s));", tl_gen_expr(g, a).c); return tl_gen_scalar("0", TY_UNIT_T);
  case B_PARAM_SAVE: case B_PARAM_LOAD: return gen_params(g, n, id == B_PARAM_LOAD);
  default: break;
  }
  cv t = tl_gen_expr(g, n->lhs);
  switch (id) {
  case B_ZEROS_LIKE: case B_ONES_LIKE:
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_full_like(R, %s, %d, %s)", t.c, id == B_ONES_LIKE, l));
  case B_RAND_LIKE: case B_RANDN_LIKE:
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_rand_like(R, %s, %s, %s)", t.c, id == B_RANDN_LIKE ? "true" : "false", l));
  case B_TRIL: case B_TRIU: {
    const char *k = a ? tl_gen_expr(g, a).c : "0";
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_tri(R, %s, %s, %s, %s)", t.c, k, id == B_TRIU ? "true" : "false", l));
  }
  case B_MASKED_FILL: {
    const char *mask = tl_gen_expr(g, a).c, *v = tl_gen_plain_number(g, a->next, "masked_fill", "`t + (v - t) * mask.float()`");
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_masked_fill(R, %s, %s, (double)(%s), %s)", t.c, mask, v, l));
  }
  case B_LEAKY_RELU: case B_ELU: case B_MISH: case B_HARDSIGMOID: case B_HARDSWISH: {
    const char *k = a ? tl_gen_plain_number(g, a, n->name, "a number") : id == B_ELU ? "1.0" : "0.01";
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_activation(R, %d, %s, (double)(%s), %s)", id == B_LEAKY_RELU ? 0 : id == B_ELU ? 1 : id == B_MISH ? 2 : id == B_HARDSIGMOID ? 3 : 4,
                                                   t.c, k, l));
  }
  case B_LOGICAL:
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_logical(R, %d, %s, %s, %s)", (int)n->len, t.c, a ? tl_gen_expr(g, a).c : "NULL", l));
  case B_TOPK:
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_topk(R, %s, %s, %s)", t.c, tl_gen_expr(g, a).c, l));
  case B_L1_LOSS: case B_BCE_LOSS: case B_NLL_LOSS: case B_KL_DIV_LOSS:
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_%s(R, %s, %s, %s)", id == B_L1_LOSS ? "l1_loss" : id == B_NLL_LOSS ? "nll_loss"
                                                   : id == B_KL_DIV_LOSS ? "kl_div_loss" : "bce_loss", t.c, tl_gen_expr(g, a).c, l));
  case B_PAD: {
    const char *lo = tl_gen_expr(g, a).c, *hi = tl_gen_expr(g, a->next).c;
    const char *v = a->next->next ? tl_gen_expr(g, a->next->next).c : "0";
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_pad_last(R, %s, %s, %s, (double)(%s), %s)", t.c, lo, hi, v, l));
  }
  case B_NORM:
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_norm(R, %s, (double)(%s), %s)", t.c, a ? tl_gen_expr(g, a).c : "2.0", l));
  case B_DROPOUT:
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_dropout(R, %s, (double)(%s), %s, %s)", t.c, tl_gen_expr(g, a).c,
                                                   a->next ? tl_gen_expr(g, a->next).c : "true", l));
  case B_VAR: case B_STD: {
    const char *dim = a ? tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a).c) : "0";
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_var(R, %s, %s, %s, %s, %s)", t.c, dim, a ? "false" : "true",
                                                   id == B_STD ? "true" : "false", l));
  }
  case B_WHERE: {
    const char *x = tl_gen_expr(g, a).c, *y = tl_gen_expr(g, a->next).c;
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_where_mask(R, %s, %s, %s, %s)", t.c, x, y, l));
  }
  case B_SLICE: {
    const char *v[4];
    for (int i = 0; i < 4; i++, a = a->next) v[i] = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a).c);
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_slice(R, %s, %s, %s, %s, %s, %s)", t.c, v[0], v[1], v[2], v[3], l));
  }
  case B_PART: {
    const char *v[3];
    for (int i = 0; i < 3; i++, a = a->next) v[i] = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a).c);
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_part(R, %s, %d, %s, %s, %s, %s)", t.c, (int)n->len, v[0], v[1], v[2], l));
  }
  case B_SLICE_LEN: {
    const char *s = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a).c), *len = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a->next).c);
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_slice_len(R, %s, %s, %s, %s)", t.c, s, len, l));
  }
  case B_DEVICE: return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_device(R, %s, %s)", t.c, l));
  case B_TO_DEVICE:
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_to_device(R, %s, %s, %s)", t.c, tl_gen_expr(g, a).c, l));
  case B_TENSOR_PRINT:
    tl_gen_emit(g, "tlrt_fmt_begin(R);");
    tl_gen_fmt_value(g, t, -1, n->lhs, "0");
    tl_gen_emit(g, "tlrt_fmt_print(R, true);");
    return tl_gen_scalar("0", TY_UNIT_T);
  case B_DETACH_GRAD: {
    const char *rg = tl_gen_expr(g, a->kind == TL_N_FIELD_INIT ? a->lhs : a).c;
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_detach_grad(R, %s, %s, %s)", t.c, rg, l));
  }
  default: tl_gen_fail(g, n, "unknown tensor method"); return tl_gen_scalar("0", n->ty);
  }
}
