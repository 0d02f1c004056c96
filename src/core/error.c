#include "error.h"

#include <stdarg.h>
#include <stdio.h>

tl_status tl_error_set(tl_error *err, tl_status status, const char *fmt, ...) {
  if (!err) return status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  err->status = status;
  return status;
}

void tl_error_clear(tl_error *err) {
  err->status = TL_OK;
  err->msg[0] = 0;
}
