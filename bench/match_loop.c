/* bench/match_loop.c — the C peer of bench/match_loop.tl: the same arms (literal,
 * alternatives, range, guard, default) as a switch, n turns (default 10^8, from argv so
 * nothing folds). Built with `cc -O2` by bench/bench_lang.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? strtoll(argv[1], NULL, 10) : 100000000;
  int64_t s = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t k = i % 10;
    switch (k) {
    case 0: s += 3; break;
    case 1: case 2: s += i % 5; break;
    case 3: case 4: case 5: s += k * 2; break;
    default: s += k > 8 ? k - 1 : 1; break;
    }
  }
  printf("%lld\n", (long long)s);
  return 0;
}
