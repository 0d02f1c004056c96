/* stdlib.h — the library types written in TL (the files of src/lang/std, stdlib.c): each is
 * joined to a program that asks for it and declares no item of the same name. */
#ifndef TL_LANG_STDLIB_H
#define TL_LANG_STDLIB_H

#include "lang/front/module.h"

/* after tl_modules_load: each library file the program (its text src of len bytes and
 * its `mod` units) asks for becomes a unit of prog, its items at the program's end; returns the
 * number of errors (reported in diag) */
int tl_stdlib_load(tl_program *prog, const char *src, size_t len, tl_diag *diag, tl_arena *arena);

#endif
