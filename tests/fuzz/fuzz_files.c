/* fuzz_files.c — harnesses for the tensor file loaders (.npy and .safetensors): bytes
 * in, a load attempt out; any tensor loaded is checked for a sane size and freed. */
#include "fuzz.h"
#include "tl.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

const char *tl_fuzz_temp_file(const uint8_t *data, size_t size) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/tl_fuzz_%ld.bin", (long)getpid());
  FILE *f = fopen(path, "wb");
  if (!f) return NULL;
  size_t wrote = size ? fwrite(data, 1, size, f) : 0;
  if (fclose(f) != 0 || wrote != size) return NULL;
  return path;
}

int tl_fuzz_end(tl_ctx *ctx) {
  size_t leaks = tl_mem_report(ctx, NULL);
  if (leaks) tl_mem_report(ctx, stderr);
  tl_shutdown(ctx);
  return leaks ? 1 : 0;
}

/* reads every element, so a loaded tensor whose buffer is shorter than its shape says
 * shows under the sanitizers */
static void fuzz_touch(tl_tensor *t) {
  if (!t) return;
  tl_tensor *s = tl_sum(tl_cast(t, TL_F64), 0, NULL, 0);
  if (s) tl_realize(s);
}

int tl_fuzz_npy(const uint8_t *data, size_t size) {
  const char *path = tl_fuzz_temp_file(data, size);
  if (!path) return 0;
  tl_ctx *ctx = tl_init();
  if (!ctx) return 0;
  tl_set_backend(ctx, "interp"); /* reading every element needs no compiled kernel */
  fuzz_touch(tl_load_npy(ctx, path));
  unlink(path);
  return tl_fuzz_end(ctx);
}

int tl_fuzz_safetensors(const uint8_t *data, size_t size) {
  const char *path = tl_fuzz_temp_file(data, size);
  if (!path) return 0;
  tl_ctx *ctx = tl_init();
  if (!ctx) return 0;
  tl_set_backend(ctx, "interp");
  int n = 0;
  char **names = NULL;
  tl_tensor **tensors = NULL;
  if (tl_load_safetensors(ctx, path, &n, &names, &tensors) == TL_OK) {
    for (int i = 0; i < n; i++) fuzz_touch(tensors[i]);
    tl_free(names);
    tl_free(tensors);
  }
  unlink(path);
  return tl_fuzz_end(ctx);
}
