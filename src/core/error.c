#include "error.h"

#include <stdarg.h>
#include <stdio.h>

tl_status tl_error_vset(tl_error *err, tl_status status, const char *fmt, va_list ap) {
  if (!err) return status;
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  err->status = status;
  return status;
}

tl_status tl_error_set(tl_error *err, tl_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_error_vset(err, status, fmt, ap);
  va_end(ap);
  return status;
}

void tl_error_clear(tl_error *err) {
  err->status = TL_OK;
  err->msg[0] = 0;
}
