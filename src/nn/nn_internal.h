/* nn_internal.h — the helpers the files of src/nn share: a failure's message, and
 * handing a result out of a function's scope with the function's name on any error. */
#ifndef TL_NN_INTERNAL_H
#define TL_NN_INTERNAL_H

#include <stddef.h>

#include "tl.h"
#include "core/error.h"

/* Sets the message and returns NULL: the way out on bad input, before any scope. */
tl_tensor *tl_nn_fail(tl_ctx *ctx, tl_status st, const char *fmt, ...) TL_PRINTF(3, 4);
/* "[2, 3]": t's shape for a message (core/format.h's formatter); returns buf */
const char *tl_nn_shape_str(const tl_tensor *t, char *buf, size_t len);

#endif
