/* bench_util.h — what every benchmark program needs: a clock, an order for qsort, the python
 * that has the peers (Debian's /usr/bin/python3 carries numpy and torch; a python
 * first on PATH may not). */
#ifndef TL_BENCH_UTIL_H
#define TL_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static inline double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static inline const char *peer_python(void) {
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

#endif
