/* stdlib.h — the library types written in TL (stdlib.c): `File::open`'s handle,
 * `Path` and `StringBuilder`, spliced into a program that names one of their
 * constructors and declares no item of the same name. */
#ifndef TL_LANG_STDLIB_H
#define TL_LANG_STDLIB_H

#include "lang/front/lex.h"
#include "lang/front/module.h"

/* after tl_modules_load: each library module the program's tokens (toks over src) ask
 * for becomes a unit of prog, its items at the program's end; returns the number of
 * errors (reported in diag) */
int tl_modules_std(tl_program *prog, const tl_token *toks, int ntoks, const char *src, tl_diag *diag, tl_arena *arena);

#endif
