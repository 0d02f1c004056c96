/* error.h — errors travel as a status plus a message, never as exit() or abort().
 * in: a status and a printf-style message; out: the same status, so a caller can
 * write `return tl_error_set(err, TL_ERR_SHAPE, "...")`. */
#ifndef TL_CORE_ERROR_H
#define TL_CORE_ERROR_H

#include "tl.h"

typedef struct tl_error {
  tl_status status;
  char msg[1024];
} tl_error;

#if defined(__GNUC__)
#define TL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TL_PRINTF(a, b)
#endif

#include <stdarg.h>

tl_status tl_error_set(tl_error *err, tl_status status, const char *fmt, ...) TL_PRINTF(3, 4);
tl_status tl_error_vset(tl_error *err, tl_status status, const char *fmt, va_list ap);
void tl_error_clear(tl_error *err);

#endif
