/* fuzz.h — the fuzz harnesses: each takes a byte string and drives one input surface of
 * TL with it; a crash, a hang, a leak or a sanitizer report is a finding. The same
 * functions run under AFL++ (tests/fuzz/afl_driver.c, `make fuzz`) and replay the
 * committed corpus in `make test` (tests/test_fuzz_replay.c). */
#ifndef TL_FUZZ_H
#define TL_FUZZ_H

#include <stddef.h>
#include <stdint.h>

typedef struct tl_ctx tl_ctx;

/* each returns 0, or 1 when it found a leak (what leaked is printed) */
typedef int (*tl_fuzz_fn)(const uint8_t *data, size_t size);
int tl_fuzz_front(const uint8_t *data, size_t size);       /* lexer, parser, checker, ownership, Datalog, codegen */
int tl_fuzz_npy(const uint8_t *data, size_t size);         /* tl_load_npy */
int tl_fuzz_safetensors(const uint8_t *data, size_t size); /* tl_load_safetensors */
int tl_fuzz_kb(const uint8_t *data, size_t size);          /* knowledge-base text, then API calls */
int tl_fuzz_capi(const uint8_t *data, size_t size);        /* a call sequence of the C API */
int tl_fuzz_run(const uint8_t *data, size_t size);         /* check, compile and run a program */

/* the kb harness's calls: bytes decoded into knowledge-base API calls on kb, with
 * relation names from a fixed set and the text's (fuzz_kb_calls.c) */
typedef struct tl_kb tl_kb;
void tl_fuzz_kb_calls(tl_kb *kb, tl_ctx *ctx, const char *const *text_names, int ntext, const uint8_t *data,
                      size_t size);

typedef struct {
  const char *name;
  tl_fuzz_fn fn;
} tl_fuzz_harness;
/* the table of harnesses, ended by a NULL name */
extern const tl_fuzz_harness tl_fuzz_harnesses[];

/* writes the bytes to a fresh private file for loaders that take a path: its path
 * (static storage, valid until the next call), or NULL */
const char *tl_fuzz_temp_file(const uint8_t *data, size_t size);

/* ends the context: 1 (after printing the report) when something leaked, else 0 */
int tl_fuzz_end(tl_ctx *ctx);

#endif
