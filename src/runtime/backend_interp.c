/* backend_interp.c — the interp backend: the reference interpreter (interp.c), which
 * evaluates the tensor graph node by node; the oracle of tests/test_diff.c. Host memory,
 * as cpu's. */
#include "runtime/backend.h"
#include "runtime/interp.h"

static void interp_caps(const tl_backend *be, tl_backend_caps *out) {
  (void)be;
  *out = (tl_backend_caps){.max_group = 1, .max_group_dims = {1, 1, 1}, .f64 = true, .host_memory = true, .units = 1};
}

static tl_buffer *interp_eval(tl_backend *be, tl_uop *u, tl_mem *mem, tl_error *err) {
  tl_buffer *b = tl_interp_eval(u, mem, err);
  if (b && !b->backend) b->backend = (uint8_t)(be->index + 1);
  return b;
}

const tl_backend_i tl_backend_interp = {
    .name = "interp",
    .about = "the reference interpreter: the graph evaluated node by node, in double precision",
    .caps = interp_caps,
    .buffer_alloc = tl_backend_host_alloc,
    .copy_from_host = tl_backend_host_from,
    .copy_to_host = tl_backend_host_to,
    .copy = tl_backend_host_copy,
    .eval = interp_eval,
};
