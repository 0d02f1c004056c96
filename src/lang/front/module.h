/* module.h — `mod name;` (LANGUAGE.md §8): the file name.tl beside the file that
 * says it is read, lexed and parsed (its errors in its own diagnostics), and its items
 * are spliced into the program after the `mod` line, so every later pass sees one
 * program; each item and function keeps its file's unit number. `use name::*;` must
 * name a module of the program. */
#ifndef TL_LANG_MODULE_H
#define TL_LANG_MODULE_H

#include <stdio.h>

#include "lang/front/ast.h"

#define TL_MAX_MODULES 64

/* the file's text, NUL-terminated (malloc'd, *len bytes), or NULL with a message on
 * err (the driver reads the program's file with it too) */
char *tl_lang_read_file(const char *path, size_t *len, FILE *err);

/* loads every module of prog (whose file is path, its diagnostics diag), modules of
 * modules too; returns the number of errors (in the files' diagnostics) */
int tl_modules_load(tl_program *prog, const char *path, tl_diag *diag, tl_arena *arena);
/* lexes and parses unit u of prog (its path, src and diag set): its tree, each item
 * marked with u, or NULL; the unit keeps the text the tree points into. Modules and the
 * library written in TL (stdlib.c) are read this way. */
tl_program *tl_modules_parse_unit(tl_program *prog, int u, tl_arena *arena);
/* the errors of the modules' files (unit 0 is the caller's) */
int tl_modules_errors(const tl_program *prog);
/* prints the modules' errors, each file's sorted */
void tl_modules_print(tl_program *prog, FILE *err);
void tl_modules_free(tl_program *prog);

#endif
