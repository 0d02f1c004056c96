/* bench/scalar_loop.c — the C peer of bench/scalar_loop.tl: the sum of i * i % 7 for
 * i below n (i64). n comes from argv (default 10^8) so the compiler cannot fold the loop.
 * Built with `cc -O2` by bench/bench_lang.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? strtoll(argv[1], NULL, 10) : 100000000;
  int64_t s = 0;
  for (int64_t i = 0; i < n; i++) s += i * i % 7;
  printf("%lld\n", (long long)s);
  return 0;
}
