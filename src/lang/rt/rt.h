/* rt.h — the run-time library of compiled TL programs (LANGUAGE.md §4, §6, §9).
 * The C that src/lang/gen/gen.c emits calls only this header and tl.h. Every function takes
 * the program's run state `tlrt *R` first; there is no hidden global. Locations
 * (line, col) are the .tl source position of the operation, for run-time errors.
 *
 * Run-time errors: tlrt_fail formats `file:line:col: runtime error: message`, stores it
 * in R, and longjmps to R->on_error (set by tl_lang_run), never exit(). Every value a
 * program owns is a tensor (in the engine's scopes) or an object counted in R (strings,
 * structs), so the driver can free them all after an error. */
#ifndef TL_LANG_RT_H
#define TL_LANG_RT_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tl.h"

typedef struct tlrt tlrt;
typedef struct tlrt_obj tlrt_obj;

/* Every refcounted non-tensor value (a String, a struct) starts with this header.
 * `drop` releases what the object holds (its fields), not the object itself.
 * Objects are linked in R's list while live, so an error exit can free them. */
struct tlrt_obj {
  int64_t rc;
  void (*drop)(tlrt *R, tlrt_obj *o);
  tlrt_obj *prev, *next;
};

/* a value of fn type (a closure, or a named function as a value): fn is a C function
 * taking the object first, then the arguments (borrowed); a closure's object goes on
 * with its captured values (its environment), released by its drop */
typedef struct {
  tlrt_obj h;
  void *fn;
} tlrt_fnobj;

typedef struct {
  tlrt_obj h;
  int64_t len;
  char data[]; /* len bytes, then a NUL */
} tlrt_str;

typedef struct {
  uint64_t objects_created, objects_freed, objects_live;
  uint64_t retains, releases, cow_clones; /* a creation counts as a retain; cow_clones:
                                             objects copied before a write */
  uint64_t tensor_clones;                 /* tensor storage copied before a write */
} tlrt_stats;

struct tlrt {
  tl_ctx *ctx;
  const char *file;        /* the .tl path, for messages */
  FILE *out;               /* print/println go here */
  jmp_buf *on_error;       /* tlrt_fail jumps here */
  char error[1024];        /* the last run-time error, formatted */
  tlrt_obj objs;           /* sentinel of the live-object list */
  tlrt_obj *dying;         /* objects whose drop waits (tlrt_release): a list by next */
  bool dropping;           /* a drop is running: a release that frees queues on dying */
  tlrt_stats stats;
  char *fmt;               /* the text being formatted (tlrt_fmt_*) */
  size_t fmt_len, fmt_cap;
  int argc;
  char **argv;
  /* every generated function starts by comparing the address of a local with this:
   * below it, the stack is nearly used up, and the call is a run-time error (`stack
   * overflow`, at the function) instead of a SIGSEGV. tlrt_init sets it for the thread
   * that runs the program, leaving room for the library's own calls. */
  uintptr_t stack_limit;
  tl_kb *kb; /* the program's facts and rules (rt_logic.c), NULL when it has none */
  int64_t max_tuples; /* the most tuples one relation may hold (tl run --max-tuples,
                         Logic::set_max_tuples); 0: TLRT_MAX_TUPLES */
  /* System::exit(code) (rt_sys.c) longjmps to on_error with exiting set: no error */
  bool exiting;
  int exit_code;
  FILE *err; /* run-time warnings (tlrt_grad_lost); NULL: stderr */
  struct varbuilder_entry *varbuilder; /* VarBuilder's named parameters (rt_ml.c) */
};

/* set-up and tear-down (the driver) */
TL_API void tlrt_init(tlrt *R, tl_ctx *ctx, const char *file, FILE *out);
/* frees every live object without its drop (after an error: tensors go with the
 * context) and the format buffer: the driver's last call, after an error or not */
TL_API void tlrt_free_all(tlrt *R);

/* errors */
TL_API _Noreturn void tlrt_fail(tlrt *R, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* t, or a run-time error carrying the engine's message when t is NULL */
TL_API tl_tensor *tlrt_check(tlrt *R, tl_tensor *t, int line, int col);
TL_API void tlrt_check_status(tlrt *R, tl_status st, int line, int col);

/* objects: allocation, counting, copy-on-write */
TL_API void *tlrt_obj_new(tlrt *R, size_t size, void (*drop)(tlrt *R, tlrt_obj *o));
TL_API void *tlrt_retain(tlrt *R, void *o);  /* NULL-safe; counts a retain */
TL_API void tlrt_release(tlrt *R, void *o);  /* NULL-safe; drop + free at 0 */
/* for a write through a struct: *o is shared (rc > 1)? copy `size` bytes into a new
 * object, call `retain_fields` on it, release the old one, store the copy in *o */
TL_API void tlrt_make_unique(tlrt *R, void **o, size_t size, void (*retain_fields)(tlrt *R, void *o));

/* tensors as owned values */
TL_API tl_tensor *tlrt_tensor_retain(tlrt *R, tl_tensor *t); /* NULL-safe */
TL_API void tlrt_tensor_release(tlrt *R, tl_tensor *t);      /* NULL-safe */

/* strings (immutable; len < 0: strlen(s)) */
TL_API tlrt_str *tlrt_str_new(tlrt *R, const char *s, int64_t len);
TL_API tlrt_str *tlrt_str_concat(tlrt *R, const tlrt_str *a, const tlrt_str *b, int line, int col);
TL_API bool tlrt_str_eq(const tlrt_str *a, const tlrt_str *b);
/* does s hold exactly these n bytes? (a string literal in a `match` pattern) */
TL_API bool tlrt_str_is(const tlrt_str *s, const char *bytes, int64_t n);
TL_API int tlrt_str_cmp(const tlrt_str *a, const tlrt_str *b); /* -1, 0, 1 by bytes */

/* formatting: begin, add pieces, then print (println adds '\n') or take a String.
 * prec < 0: the default form. Floats print the shortest digits that read back and
 * keep a ".0" when integral (1.0, 0.1, 1e-07...); tensors print numpy-style. */
TL_API void tlrt_fmt_begin(tlrt *R);
TL_API void tlrt_fmt_text(tlrt *R, const char *s, size_t len);
/* the text from byte `from` padded to width characters: align '<' '>' '^' with fill, or
 * zeros after a sign (zero) */
TL_API void tlrt_fmt_pad(tlrt *R, size_t from, int width, char align, int fill, int zero);
TL_API void tlrt_fmt_i64(tlrt *R, int64_t v, int prec);
TL_API void tlrt_fmt_f32(tlrt *R, float v, int prec);
TL_API void tlrt_fmt_f64(tlrt *R, double v, int prec);
TL_API void tlrt_fmt_half(tlrt *R, float v, int bf16, int prec); /* an f16 (bf16: a bf16) value */
TL_API void tlrt_fmt_u64(tlrt *R, uint64_t v);
TL_API void tlrt_fmt_bool(tlrt *R, bool v);
/* v, an element of a tensor of this dtype (tl_dtype), printed as that dtype prints */
TL_API void tlrt_fmt_number(tlrt *R, double v, int dtype, int prec);
TL_API void tlrt_fmt_char(tlrt *R, uint32_t c); /* UTF-8 */
TL_API void tlrt_fmt_str(tlrt *R, const tlrt_str *s);
/* dbg: as Rust's `{:?}` writes them, quoted and escaped ("a\"b\n", '\''); else as above */
TL_API void tlrt_fmt_char_as(tlrt *R, uint32_t c, bool dbg);
TL_API void tlrt_fmt_str_as(tlrt *R, const tlrt_str *s, bool dbg);
TL_API void tlrt_fmt_tensor(tlrt *R, tl_tensor *t, int prec, int line, int col);
TL_API void tlrt_fmt_print(tlrt *R, bool newline);
TL_API tlrt_str *tlrt_fmt_take(tlrt *R);

/* tensor element access. idx: n indices, negative ones count from the end (as Python);
 * out of range is a run-time error. Reading realizes the tensor. */
TL_API double tlrt_get(tlrt *R, tl_tensor *t, int n, const int64_t *idx, int line, int col);
/* writes one element: *t is made unique first (copy-on-write), so no other value sees it.
 * Unique: when the handle is shared (other values retained it), *t becomes a new handle
 * of the current scope and the old one is released; then its storage is copied if
 * anything else sees it (tl_data_mut). A tensor requiring grad is an error. */
TL_API void tlrt_set(tlrt *R, tl_tensor **t, int n, const int64_t *idx, double v, int line, int col);
/* t[spec...]: each axis spec is an index (is_range false: the axis goes; the index is
 * in lo) or a range lo..hi (has_lo/has_hi false: open end; negative ends count from the
 * end; out of range or lo > hi is an error, never clamped). Fewer specs than axes keep
 * the rest whole. The result is a new handle, a view (lazy) sharing t's storage. */
typedef struct {
  bool is_range, has_lo, has_hi;
  int64_t lo, hi;
} tlrt_ix;
TL_API tl_tensor *tlrt_index(tlrt *R, tl_tensor *t, int n, const tlrt_ix *spec, int line, int col);
/* t[spec...] = v: v broadcasts to the selected part; *t is made unique first */
TL_API void tlrt_store(tlrt *R, tl_tensor **t, int n, const tlrt_ix *spec, tl_tensor *v, int line, int col);
/* *t made unique (copy-on-write) and realized: for enable_grad and other writes */
TL_API void tlrt_tensor_make_unique(tlrt *R, tl_tensor **t, int line, int col);

/* tensor construction from the language: NULL with the engine's error on failure
 * (check it with tlrt_check) */
TL_API tl_tensor *tlrt_from_f64(tlrt *R, tl_dtype dt, int ndim, const int64_t *shape, const double *v);
TL_API tl_tensor *tlrt_from_i64(tlrt *R, tl_dtype dt, int ndim, const int64_t *shape, const int64_t *v);
TL_API tl_tensor *tlrt_scalar(tlrt *R, tl_dtype dt, double v); /* 0-d, as data (not a constant) */
/* a shape argument: a 1-D integer tensor (or 0-d) -> dims; fails when not integral or
 * a dim is negative or there are more than 8 */
TL_API int tlrt_shape(tlrt *R, tl_tensor *shape, int64_t *dims, int line, int col);
TL_API double tlrt_item(tlrt *R, tl_tensor *t, int line, int col);
TL_API tl_tensor *tlrt_grad(tlrt *R, tl_tensor *t, int line, int col); /* no grad: error */

/* the statistics `tl run --mem-stats` prints */
TL_API void tlrt_print_mem_stats(tlrt *R, FILE *out);

/* ---- logic (rt_logic.c, LANGUAGE.md §8): the knowledge base of the program ---- */
typedef struct {
  const char *name;
  int arity;
  const tl_kb_type *types;
  int64_t nfacts;
  const int64_t *facts; /* the top-level facts, rows of arity values */
} tlrt_lrel;
typedef struct {
  const tl_kb_literal *head;
  int nbody;
  const tl_kb_literal *body;
} tlrt_lrule;
/* `.input edge` / `.output path` (path NULL: stdout; delim a one-character string) */
typedef struct {
  const char *rel, *path, *delim;
  int output, line, col;
} tlrt_lio;
typedef struct {
  int64_t nent;
  const char *const *ents; /* entity names by id */
  int nrels;
  const tlrt_lrel *rels;
  int nrules;
  const tlrt_lrule *rules;
  int nio;
  const tlrt_lio *io;
} tlrt_lprog;
/* The default limit of tuples in one relation: a rule that derives without end
 * (`n(x + 1) :- n(x).`) stops at a run-time error instead of exhausting memory. 50
 * million is 35 times the largest closure of bench/ (tc2000, 1.4 million pairs) and
 * about 3 GB for a relation of two columns (docs/logic.md, Limits). */
#define TLRT_MAX_TUPLES 50000000
/* before main: R->kb made from the checked program, under R->max_tuples; after it:
 * freed (an error exit frees it in tlrt_free_all) */
TL_API void tlrt_logic_begin(tlrt *R, const tlrt_lprog *P);
TL_API void tlrt_logic_end(tlrt *R);
/* after main: the `.output` relations written (rt_logic_io.c) */
TL_API void tlrt_logic_output(tlrt *R, const tlrt_lprog *P);
/* before main, after the rules: one `.input` relation read, all of it or an error */
TL_API void tlrt_logic_input(tlrt *R, const tlrt_lio *io);
/* ?rel(args): [n, k] i64 or 0-d f32; rank1: a relation call, at least 1-D */
TL_API tl_tensor *tlrt_logic_query(tlrt *R, const char *rel, int nargs, const tl_kb_term *args, bool rank1, int line, int col);
/* the answer of a query that matches nothing: 0.0 ([1] when rank1), or [0, ncols] i64 */
TL_API tl_tensor *tlrt_logic_none(tlrt *R, int ncols, bool rank1, int line, int col);
/* a fact statement: rel(vals) asserted now */
TL_API void tlrt_logic_fact(tlrt *R, const char *rel, int n, const int64_t *vals, int line, int col);
TL_API tlrt_str *tlrt_entity_name(tlrt *R, int64_t id, int line, int col);
/* Logic::set_max_tuples(n): 1 .. 2147483647, else a run-time error; Logic::max_tuples() */
TL_API void tlrt_logic_set_max_tuples(tlrt *R, int64_t max, int line, int col);
TL_API int64_t tlrt_logic_max_tuples(tlrt *R);
/* a query result printed numpy-style, the columns in ent_cols (of the last axis) by name */
TL_API void tlrt_fmt_entities(tlrt *R, tl_tensor *t, uint32_t ent_cols, int line, int col);

#endif
