/* sema_generic.h — what sema_generic.c (generics) and sema_trait.c (traits) share: the
 * generic items, the traits, the instances made and the impls of traits. */
#ifndef TL_LANG_SEMA_GENERIC_H
#define TL_LANG_SEMA_GENERIC_H

#include "lang/check/sema_impl.h"

typedef struct gen_impl { /* `impl<T> Stack<T> { .. }` */
  tl_ast_item *it;
  struct gen_impl *next;
} gen_impl;

/* a generic item or a trait: kind 'f' fn, 's' struct, 'e' enum, 't' trait */
typedef struct gen_tmpl {
  char kind;
  const char *name;
  tl_ast_item *it;
  tl_fn *fn;
  tl_tparam *tparams;
  int n;           /* type parameters */
  gen_impl *impls; /* 's', 'e' */
  gen_impl *trait_impls; /* 's', 'e': `impl<T> Shape for Boxed<T>` */
  bool broken;     /* 'f': an error in it was reported at its definition: no instances */
  struct gen_tmpl *next;
} gen_tmpl;

typedef struct gen_inst { /* a fn instance: tmpl with owner (a method's) and args */
  tl_fn *tmpl;
  tl_struct_info *owner;
  int n;
  tl_ty **args;
  tl_fninfo *f;
  struct gen_inst *next;
} gen_inst;

typedef struct trait_impl { /* `impl Shape for Circle` */
  gen_tmpl *trait;
  tl_ty *self;
  int line;
  struct trait_impl *next;
} trait_impl;

typedef struct sema_gen {
  gen_tmpl *tmpls;
  gen_inst *insts;
  trait_impl *impls;
  gen_impl *plain; /* plain impls with generic methods */
  int count;
} sema_gen;

sema_gen *tl_sema_gen_of(sema *s);
/* kind 0: any; 'd': a struct or an enum */
gen_tmpl *tl_sema_gen_find(sema *s, const char *name, char kind);
bool tl_sema_ty_same(const tl_ty *a, const tl_ty *b);
sema_tyenv *tl_sema_gen_env(sema *s, const tl_tparam *tps, tl_ty **args, int n, tl_ty *self, const char *owner);
/* a fresh copy of fn's body (env: `T::f` paths name T's type) */
tl_fn *tl_sema_gen_clone_fn(sema *s, const tl_fn *fn, const sema_tyenv *env);
/* a fresh, unchecked copy of a node list (sema_dyn.c: a call's arguments, once per arm) */
tl_node *tl_sema_gen_clone_list(sema *s, const tl_node *n);
/* `impl<A, B> Pair<A, B>`: the impl names g's parameters as declared (else reported) */
bool tl_sema_gen_impl_params(sema *s, tl_ast_item *it, gen_tmpl *g);
/* sema_trait.c: the generic trait impls of g, for its new instance st */
void tl_sema_trait_instance(sema *s, gen_tmpl *g, tl_struct_info *st);
/* a C name for a fn whose name is no C identifier (`Pair<i64, f64>::area`) */
const char *tl_sema_gen_cname(sema *s, const char *name);
/* sema_trait.c: a generic fn's bounds at its definition (known traits; methods called on
 * a value of a type parameter are its bounds'); a hint naming the impls of a trait */
void tl_sema_trait_check_generic(sema *s, gen_tmpl *g);
void tl_sema_trait_hint(sema *s, const tl_ty *t, const char *trait, const char *tparam, const char *fn);

#endif
