/* bench/vec_loop.c — the C peer of bench/vec_loop.tl: push n values (i * i % 7 + round)
 * onto a growable i64 array (capacity doubling, as Vec::push), read them back by index
 * with a bounds check, 10 rounds. n comes from argv (default 10^7) so nothing folds.
 * Built with `cc -O2` by bench/bench_lang.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? strtoll(argv[1], NULL, 10) : 10000000;
  int64_t total = 0;
  for (int64_t round = 0; round < 10; round++) {
    int64_t *v = NULL, len = 0, cap = 0;
    for (int64_t i = 0; i < n; i++) {
      if (len == cap) {
        cap = cap ? cap * 2 : 4;
        v = realloc(v, (size_t)cap * sizeof *v);
        if (!v) return 1;
      }
      v[len++] = i * i % 7 + round;
    }
    for (int64_t j = 0; j < len; j++) {
      if ((uint64_t)j >= (uint64_t)len) abort(); /* the index check TL makes */
      total += v[j] % 3;
    }
    free(v);
  }
  printf("%lld\n", (long long)total);
  return 0;
}
