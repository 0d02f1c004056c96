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
    const char *name = prefix ? gen_fmt(g, "%s.%s", prefix, f->name) : f->name;
    const char *access = gen_fmt(g, "%s->f_%s", base, f->name);
    if (f->ty->kind == TY_TENSOR) {
      tl_strbuf_printf(&p->names, "%s\"%s\"", p->n ? ", " : "", name);
      tl_strbuf_printf(&p->vals, "%s%s%s", p->n ? ", " : "", load ? "&" : "", access);
      p->n++;
    } else if (f->ty->kind == TY_STRUCT) {
      const tl_struct_info *sub = f->ty->st;
      if (load)
        gen_emit(g, "tlrt_make_unique(R, (void **)&%s, sizeof(struct %s), %s__retain_fields);", access, sub->cname,
                 sub->cname);
      collect(g, p, sub, access, name, load, depth + 1);
    }
  }
}

static cv gen_params(gen *g, tl_node *n, bool load) {
  tl_node *model = n->args;
  const char *path = gen_expr(g, model->next).c;
  const tl_struct_info *st = model->ty->st;
  const char *base;
  if (load) {
    base = gen_place(g, model);
    gen_emit(g, "tlrt_make_unique(R, (void **)&%s, sizeof(struct %s), %s__retain_fields);", base, st->cname,
             st->cname);
  } else base = gen_expr(g, model).c;
  param_list p = {0};
  collect(g, &p, st, base, NULL, load, 0);
  char *names = gen_take_text(g, &p.names), *vals = gen_take_text(g, &p.vals);
  if (p.n && names && vals)
    gen_emit(g, "tlrt_params_%s(R, %s, %d, (const char *const[]){%s}, (tl_tensor *%s[]){%s}, %d, %d);",
             load ? "load" : "save", path, p.n, names, load ? "*const" : "const", vals, n->line, n->col);
  else gen_fail(g, n, "a model without tensor fields");
  free(names);
  free(vals);
  return gen_scalar("0", TY_UNIT_T);
}

cv gen_io_call(gen *g, tl_node *n) {
  tl_builtin id = (tl_builtin)n->ival;
  tl_node *a = n->args;
  const char *l = gen_fmt(g, "%d, %d", n->line, n->col);
  switch (id) {
  case B_TENSOR_SAVE: {
    const char *t = gen_expr(g, a).c, *path = gen_expr(g, a->next).c;
    gen_emit(g, "tlrt_tensor_save(R, %s, %s, %s);", t, path, l);
    return gen_scalar("0", TY_UNIT_T);
  }
  case B_TENSOR_LOAD: {
    const char *path = gen_expr(g, a).c, *name = a->next ? gen_expr(g, a->next).c : "NULL";
    return gen_temp_value(g, n->ty, gen_fmt(g, "tlrt_tensor_load(R, %s, %s, %s)", path, name, l));
  }
  case B_CLEAR_GRADS: gen_emit(g, "tlrt_clear_grads(R);"); return gen_scalar("0", TY_UNIT_T);
  case B_MANUAL_SEED: gen_emit(g, "tl_manual_seed(R->ctx, (uint64_t)(%s));", gen_expr(g, a).c); return gen_scalar("0", TY_UNIT_T);
  case B_PARAM_SAVE: case B_PARAM_LOAD: return gen_params(g, n, id == B_PARAM_LOAD);
  default: break;
  }
  cv t = gen_expr(g, n->lhs);
  switch (id) {
  case B_ZEROS_LIKE: case B_ONES_LIKE:
    return gen_temp_value(g, n->ty, gen_fmt(g, "tlrt_full_like(R, %s, %d, %s)", t.c, id == B_ONES_LIKE, l));
  case B_TRIL: case B_TRIU: {
    const char *k = a ? gen_expr(g, a).c : "0";
    return gen_temp_value(g, n->ty, gen_fmt(g, "tlrt_tri(R, %s, %s, %s, %s)", t.c, k, id == B_TRIU ? "true" : "false", l));
  }
  case B_MASKED_FILL: {
    const char *mask = gen_expr(g, a).c, *v = gen_plain_number(g, a->next, "masked_fill", "`t + (v - t) * mask.float()`");
    return gen_temp_value(g, n->ty, gen_fmt(g, "tlrt_masked_fill(R, %s, %s, (double)(%s), %s)", t.c, mask, v, l));
  }
  case B_SLICE: {
    const char *v[4];
    for (int i = 0; i < 4; i++, a = a->next) v[i] = gen_new_temp(g, TY_I64_T, gen_expr(g, a).c);
    return gen_temp_value(g, n->ty, gen_fmt(g, "tlrt_slice(R, %s, %s, %s, %s, %s, %s)", t.c, v[0], v[1], v[2], v[3], l));
  }
  case B_SLICE_LEN: {
    const char *s = gen_new_temp(g, TY_I64_T, gen_expr(g, a).c), *len = gen_new_temp(g, TY_I64_T, gen_expr(g, a->next).c);
    return gen_temp_value(g, n->ty, gen_fmt(g, "tlrt_slice_len(R, %s, %s, %s, %s)", t.c, s, len, l));
  }
  case B_TENSOR_PRINT:
    gen_emit(g, "tlrt_fmt_begin(R);");
    gen_fmt_value(g, t, -1, n->lhs, "0");
    gen_emit(g, "tlrt_fmt_print(R, true);");
    return gen_scalar("0", TY_UNIT_T);
  case B_DETACH_GRAD: {
    const char *rg = gen_expr(g, a->kind == TL_N_FIELD_INIT ? a->lhs : a).c;
    return gen_temp_value(g, n->ty, gen_fmt(g, "tlrt_detach_grad(R, %s, %s, %s)", t.c, rg, l));
  }
  default: gen_fail(g, n, "unknown tensor method"); return gen_scalar("0", n->ty);
  }
}
