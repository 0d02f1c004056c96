#include "dtype.h"

#include <stdint.h>

#include "core/scalar.h"

static const struct {
  const char *name;
  size_t size;
} dtype_info[TL_NDTYPES] = {
    [TL_BOOL] = {"bool", 1}, [TL_I32] = {"i32", 4},
    [TL_I64] = {"i64", 8},   [TL_F32] = {"f32", 4},
    [TL_F64] = {"f64", 8},
};

const char *tl_dtype_name(tl_dtype d) { return tl_dtype_valid(d) ? dtype_info[d].name : "?"; }
size_t tl_dtype_size(tl_dtype d) { return tl_dtype_valid(d) ? dtype_info[d].size : 0; }

double tl_dtype_read(const void *data, tl_dtype d, int64_t i) {
  switch (d) {
  case TL_BOOL: return ((const uint8_t *)data)[i] != 0;
  case TL_I32: return ((const int32_t *)data)[i];
  case TL_I64: return (double)((const int64_t *)data)[i];
  case TL_F32: return ((const float *)data)[i];
  case TL_F64: return ((const double *)data)[i];
  default: return 0;
  }
}

void tl_dtype_write(void *data, tl_dtype d, int64_t i, double v) {
  switch (d) {
  case TL_BOOL: ((uint8_t *)data)[i] = v != 0; break;
  case TL_I32: ((int32_t *)data)[i] = tl_f64_to_i32(v); break; /* saturating, NaN 0: the casts' rule */
  case TL_I64: ((int64_t *)data)[i] = tl_f64_to_i64(v); break;
  case TL_F32: ((float *)data)[i] = (float)v; break;
  case TL_F64: ((double *)data)[i] = v; break;
  default: break;
  }
}
