/* scalar_host.c — core/scalar.h's costly functions compiled into the library for
 * tier-1 kernels (scalar_host.h). The same text as the prelude's, built with the
 * library's flags: -std=c11 contracts no a * b + c into an FMA, so each result is bit
 * for bit what libtcc's own build of the prelude gives (tier1_scalar_host_matches_tcc)
 * and what constant folding and the interpreter give. */
#include "runtime/scalar_host.h"

#include "core/scalar.h"

static tl_i32 host_f32_to_i32(float x) { return tl_f32_to_i32(x); }
static tl_i32 host_f64_to_i32(double x) { return tl_f64_to_i32(x); }
static tl_i64 host_f32_to_i64(float x) { return tl_f32_to_i64(x); }
static tl_i64 host_f64_to_i64(double x) { return tl_f64_to_i64(x); }
static float host_expf(float x) { return tl_expf(x); }
static float host_erff(float x) { return tl_erff(x); }
static float host_uniform_f32(tl_u64 seed, tl_u64 stream, tl_i64 i) { return tl_uniform_f32(seed, stream, i); }
static double host_uniform_f64(tl_u64 seed, tl_u64 stream, tl_i64 i) { return tl_uniform_f64(seed, stream, i); }

static const tl_scalar_host_fn fns[] = {
    {"tl_f32_to_i32", (const void *)host_f32_to_i32}, {"tl_f64_to_i32", (const void *)host_f64_to_i32},
    {"tl_f32_to_i64", (const void *)host_f32_to_i64}, {"tl_f64_to_i64", (const void *)host_f64_to_i64},
    {"tl_expf", (const void *)host_expf},             {"tl_erff", (const void *)host_erff},
    {"tl_uniform_f32", (const void *)host_uniform_f32}, {"tl_uniform_f64", (const void *)host_uniform_f64},
};

const tl_scalar_host_fn *tl_scalar_host_fns(size_t *n) {
  *n = sizeof fns / sizeof fns[0];
  return fns;
}
