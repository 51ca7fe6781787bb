/* simd.h: the one 4-lane float vector abstraction the kernels are written over.
 *
 * Three implementations chosen at compile time: WASM SIMD128, x86 SSE2 (baseline x86_64) and plain C
 * (a struct of 4 floats). Every operation is an IEEE single-precision operation with one defined
 * result (no FMA anywhere, horizontal reductions in one fixed order, min/max with the SSE operand
 * rule on every path), so a kernel gives the same bits on all three paths.
 * Integer lanes (v4i) exist only for the exponent tricks of the math functions.
 * Defining AL_KERNELS_SCALAR forces the plain C path (to test it on a SIMD machine).
 *
 * vf (at the end) is the widest vector of a translation unit: v4f, or 8 AVX2 lanes in the *_avx2.c
 * files, which define AL_SIMD_AVX2 and are compiled with -mavx2 (path.h). Element-wise code (vmath.h,
 * the activations, scalings) is written over vf: each lane does the same operations on either width.
 * Sums and maxima keep v4f accumulators, fed 4 lanes at a time in memory order (v4f_add_vf), so the
 * reduction order and its bits are the 4-lane path's on every width. */
#ifndef AL_KERNELS_SIMD_H
#define AL_KERNELS_SIMD_H

#include <stdint.h>
#include <string.h>

/* No fused multiply-add, even if a build adds -march flags with FMA: GCC contracts a * b + c across
 * statements by default (-ffp-contract=fast in GNU C modes), which would change the bits on that
 * build only. Clang contracts only inside one expression, which the kernels never write. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

#if defined(__wasm_simd128__) && !defined(AL_KERNELS_SCALAR)
#include <wasm_simd128.h>
#define AL_SIMD_PATH "wasm-simd128"
typedef v128_t v4f;
typedef v128_t v4i;

static inline v4f v4f_load(const float *p) { return wasm_v128_load(p); }
static inline void v4f_store(float *p, v4f v) { wasm_v128_store(p, v); }
static inline v4f v4f_splat(float x) { return wasm_f32x4_splat(x); }
static inline v4f v4f_add(v4f a, v4f b) { return wasm_f32x4_add(a, b); }
static inline v4f v4f_sub(v4f a, v4f b) { return wasm_f32x4_sub(a, b); }
static inline v4f v4f_mul(v4f a, v4f b) { return wasm_f32x4_mul(a, b); }
static inline v4f v4f_div(v4f a, v4f b) { return wasm_f32x4_div(a, b); }
static inline v4f v4f_sqrt(v4f a) { return wasm_f32x4_sqrt(a); }
/* SSE rule: min(a, b) = a < b ? a : b (returns b when either is NaN); pmin(b, a) is exactly that. */
static inline v4f v4f_min(v4f a, v4f b) { return wasm_f32x4_pmin(b, a); }
static inline v4f v4f_max(v4f a, v4f b) { return wasm_f32x4_pmax(b, a); }
static inline v4f v4f_lt(v4f a, v4f b) { return wasm_f32x4_lt(a, b); }
static inline v4f v4f_isnan(v4f a) { return wasm_f32x4_ne(a, a); }
static inline v4f v4f_and(v4f a, v4f b) { return wasm_v128_and(a, b); }
static inline v4f v4f_or(v4f a, v4f b) { return wasm_v128_or(a, b); }
static inline v4f v4f_xor(v4f a, v4f b) { return wasm_v128_xor(a, b); }
/* mask ? a : b, lane by lane (mask lanes all-ones or all-zeros). */
static inline v4f v4f_select(v4f mask, v4f a, v4f b) { return wasm_v128_bitselect(a, b, mask); }
/* 1 when every lane of a mask is all-ones. */
static inline int v4f_all(v4f mask) { return wasm_i32x4_all_true(mask); }
static inline float v4f_lane0(v4f v) { return wasm_f32x4_extract_lane(v, 0); }
/* (v0 + v2) + (v1 + v3) */
static inline float v4f_hsum(v4f v) {
    v4f t = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    return wasm_f32x4_extract_lane(t, 0) + wasm_f32x4_extract_lane(t, 1);
}
static inline float v4f_hmax(v4f v) {
    v4f t = v4f_max(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    float a = wasm_f32x4_extract_lane(t, 0), b = wasm_f32x4_extract_lane(t, 1);
    return a > b ? a : b;
}
/* In-place 4x4 transpose of rows r0..r3 (data movement only, for packing). */
static inline void v4f_transpose4(v4f *r0, v4f *r1, v4f *r2, v4f *r3) {
    v4f t0 = wasm_i32x4_shuffle(*r0, *r1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(*r0, *r1, 2, 6, 3, 7);
    v4f t2 = wasm_i32x4_shuffle(*r2, *r3, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(*r2, *r3, 2, 6, 3, 7);
    *r0 = wasm_i64x2_shuffle(t0, t2, 0, 2);
    *r1 = wasm_i64x2_shuffle(t0, t2, 1, 3);
    *r2 = wasm_i64x2_shuffle(t1, t3, 0, 2);
    *r3 = wasm_i64x2_shuffle(t1, t3, 1, 3);
}
static inline v4i v4i_splat(int32_t x) { return wasm_i32x4_splat(x); }
static inline v4i v4i_add(v4i a, v4i b) { return wasm_i32x4_add(a, b); }
static inline v4i v4i_sub(v4i a, v4i b) { return wasm_i32x4_sub(a, b); }
static inline v4i v4i_shl(v4i a, int n) { return wasm_i32x4_shl(a, n); }
static inline v4i v4i_sra(v4i a, int n) { return wasm_i32x4_shr(a, n); }
static inline v4i v4f_bits(v4f a) { return a; }
static inline v4f v4i_as_float(v4i a) { return a; }

#elif defined(__SSE2__) && !defined(AL_KERNELS_SCALAR)
#include <emmintrin.h>
#define AL_SIMD_PATH "x86-sse"
typedef __m128 v4f;
typedef __m128i v4i;

static inline v4f v4f_load(const float *p) { return _mm_loadu_ps(p); }
static inline void v4f_store(float *p, v4f v) { _mm_storeu_ps(p, v); }
static inline v4f v4f_splat(float x) { return _mm_set1_ps(x); }
static inline v4f v4f_add(v4f a, v4f b) { return _mm_add_ps(a, b); }
static inline v4f v4f_sub(v4f a, v4f b) { return _mm_sub_ps(a, b); }
static inline v4f v4f_mul(v4f a, v4f b) { return _mm_mul_ps(a, b); }
static inline v4f v4f_div(v4f a, v4f b) { return _mm_div_ps(a, b); }
static inline v4f v4f_sqrt(v4f a) { return _mm_sqrt_ps(a); }
static inline v4f v4f_min(v4f a, v4f b) { return _mm_min_ps(a, b); }
static inline v4f v4f_max(v4f a, v4f b) { return _mm_max_ps(a, b); }
static inline v4f v4f_lt(v4f a, v4f b) { return _mm_cmplt_ps(a, b); }
static inline v4f v4f_isnan(v4f a) { return _mm_cmpunord_ps(a, a); }
static inline v4f v4f_and(v4f a, v4f b) { return _mm_and_ps(a, b); }
static inline v4f v4f_or(v4f a, v4f b) { return _mm_or_ps(a, b); }
static inline v4f v4f_xor(v4f a, v4f b) { return _mm_xor_ps(a, b); }
static inline int v4f_all(v4f mask) { return _mm_movemask_ps(mask) == 0xF; }
static inline v4f v4f_select(v4f mask, v4f a, v4f b) {
    return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b));
}
static inline float v4f_lane0(v4f v) { return _mm_cvtss_f32(v); }
static inline float v4f_hsum(v4f v) {
    v4f t = _mm_add_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(t) + _mm_cvtss_f32(_mm_shuffle_ps(t, t, _MM_SHUFFLE(1, 1, 1, 1)));
}
static inline float v4f_hmax(v4f v) {
    v4f t = _mm_max_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    float a = _mm_cvtss_f32(t), b = _mm_cvtss_f32(_mm_shuffle_ps(t, t, _MM_SHUFFLE(1, 1, 1, 1)));
    return a > b ? a : b;
}
static inline void v4f_transpose4(v4f *r0, v4f *r1, v4f *r2, v4f *r3) {
    _MM_TRANSPOSE4_PS(*r0, *r1, *r2, *r3);
}
static inline v4i v4i_splat(int32_t x) { return _mm_set1_epi32(x); }
static inline v4i v4i_add(v4i a, v4i b) { return _mm_add_epi32(a, b); }
static inline v4i v4i_sub(v4i a, v4i b) { return _mm_sub_epi32(a, b); }
static inline v4i v4i_shl(v4i a, int n) { return _mm_slli_epi32(a, n); }
static inline v4i v4i_sra(v4i a, int n) { return _mm_srai_epi32(a, n); }
static inline v4i v4f_bits(v4f a) { return _mm_castps_si128(a); }
static inline v4f v4i_as_float(v4i a) { return _mm_castsi128_ps(a); }

#else
#include <math.h>
#define AL_SIMD_PATH "scalar"
typedef struct { float f[4]; } v4f;
typedef struct { int32_t i[4]; } v4i;

#define AL_V4_MAP(T, expr) \
    T r;                   \
    for (int l = 0; l < 4; l++) expr;  \
    return r
static inline v4f v4f_load(const float *p) { v4f r; memcpy(r.f, p, sizeof r.f); return r; }
static inline void v4f_store(float *p, v4f v) { memcpy(p, v.f, sizeof v.f); }
static inline v4f v4f_splat(float x) { AL_V4_MAP(v4f, r.f[l] = x); }
static inline v4f v4f_add(v4f a, v4f b) { AL_V4_MAP(v4f, r.f[l] = a.f[l] + b.f[l]); }
static inline v4f v4f_sub(v4f a, v4f b) { AL_V4_MAP(v4f, r.f[l] = a.f[l] - b.f[l]); }
static inline v4f v4f_mul(v4f a, v4f b) { AL_V4_MAP(v4f, r.f[l] = a.f[l] * b.f[l]); }
static inline v4f v4f_div(v4f a, v4f b) { AL_V4_MAP(v4f, r.f[l] = a.f[l] / b.f[l]); }
static inline v4f v4f_sqrt(v4f a) { AL_V4_MAP(v4f, r.f[l] = sqrtf(a.f[l])); }
static inline v4f v4f_min(v4f a, v4f b) { AL_V4_MAP(v4f, r.f[l] = a.f[l] < b.f[l] ? a.f[l] : b.f[l]); }
static inline v4f v4f_max(v4f a, v4f b) { AL_V4_MAP(v4f, r.f[l] = a.f[l] > b.f[l] ? a.f[l] : b.f[l]); }
static inline v4f v4f_lt(v4f a, v4f b) {
    v4f r;
    for (int l = 0; l < 4; l++) {
        int32_t m = a.f[l] < b.f[l] ? -1 : 0;
        memcpy(&r.f[l], &m, 4);
    }
    return r;
}
static inline v4f v4f_isnan(v4f a) {
    v4f r;
    for (int l = 0; l < 4; l++) {
        int32_t m = a.f[l] != a.f[l] ? -1 : 0;
        memcpy(&r.f[l], &m, 4);
    }
    return r;
}
static inline v4i v4f_bits(v4f a) { v4i r; memcpy(r.i, a.f, sizeof r.i); return r; }
static inline v4f v4i_as_float(v4i a) { v4f r; memcpy(r.f, a.i, sizeof r.f); return r; }
static inline v4f v4f_and(v4f a, v4f b) {
    v4i x = v4f_bits(a), y = v4f_bits(b);
    for (int l = 0; l < 4; l++) x.i[l] &= y.i[l];
    return v4i_as_float(x);
}
static inline v4f v4f_or(v4f a, v4f b) {
    v4i x = v4f_bits(a), y = v4f_bits(b);
    for (int l = 0; l < 4; l++) x.i[l] |= y.i[l];
    return v4i_as_float(x);
}
static inline v4f v4f_xor(v4f a, v4f b) {
    v4i x = v4f_bits(a), y = v4f_bits(b);
    for (int l = 0; l < 4; l++) x.i[l] ^= y.i[l];
    return v4i_as_float(x);
}
static inline v4f v4f_select(v4f mask, v4f a, v4f b) {
    v4i m = v4f_bits(mask), x = v4f_bits(a), y = v4f_bits(b);
    for (int l = 0; l < 4; l++) x.i[l] = (x.i[l] & m.i[l]) | (y.i[l] & ~m.i[l]);
    return v4i_as_float(x);
}
static inline int v4f_all(v4f mask) {
    v4i m = v4f_bits(mask);
    return m.i[0] == -1 && m.i[1] == -1 && m.i[2] == -1 && m.i[3] == -1;
}
static inline float v4f_lane0(v4f v) { return v.f[0]; }
static inline float v4f_hsum(v4f v) { return (v.f[0] + v.f[2]) + (v.f[1] + v.f[3]); }
static inline float v4f_hmax(v4f v) {
    float a = v.f[0] > v.f[2] ? v.f[0] : v.f[2], b = v.f[1] > v.f[3] ? v.f[1] : v.f[3];
    return a > b ? a : b;
}
static inline void v4f_transpose4(v4f *r0, v4f *r1, v4f *r2, v4f *r3) {
    v4f *r[4] = {r0, r1, r2, r3};
    v4f t[4] = {*r0, *r1, *r2, *r3};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) r[i]->f[j] = t[j].f[i];
}
static inline v4i v4i_splat(int32_t x) { AL_V4_MAP(v4i, r.i[l] = x); }
/* Wrapping integer arithmetic done in uint32_t so it is defined behaviour. */
static inline v4i v4i_add(v4i a, v4i b) { AL_V4_MAP(v4i, r.i[l] = (int32_t)((uint32_t)a.i[l] + (uint32_t)b.i[l])); }
static inline v4i v4i_sub(v4i a, v4i b) { AL_V4_MAP(v4i, r.i[l] = (int32_t)((uint32_t)a.i[l] - (uint32_t)b.i[l])); }
static inline v4i v4i_shl(v4i a, int n) { AL_V4_MAP(v4i, r.i[l] = (int32_t)((uint32_t)a.i[l] << n)); }
static inline v4i v4i_sra(v4i a, int n) {
    AL_V4_MAP(v4i, r.i[l] = a.i[l] >= 0 ? a.i[l] >> n : -1 - ((-1 - a.i[l]) >> n));
}
#undef AL_V4_MAP
#endif

#if defined(AL_SIMD_AVX2)
#include <immintrin.h>
#define AL_VF_LANES 8
typedef __m256 vf;
typedef __m256i vi;
static inline vf vf_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void vf_store(float *p, vf v) { _mm256_storeu_ps(p, v); }
static inline vf vf_splat(float x) { return _mm256_set1_ps(x); }
static inline vf vf_add(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm256_div_ps(a, b); }
static inline vf vf_sqrt(vf a) { return _mm256_sqrt_ps(a); }
static inline vf vf_min(vf a, vf b) { return _mm256_min_ps(a, b); } /* the SSE operand rule */
static inline vf vf_max(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf vf_lt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OS); }
static inline vf vf_isnan(vf a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
static inline vf vf_and(vf a, vf b) { return _mm256_and_ps(a, b); }
static inline vf vf_or(vf a, vf b) { return _mm256_or_ps(a, b); }
static inline vf vf_xor(vf a, vf b) { return _mm256_xor_ps(a, b); }
static inline vf vf_select(vf mask, vf a, vf b) { return _mm256_or_ps(_mm256_and_ps(mask, a), _mm256_andnot_ps(mask, b)); }
static inline int vf_all(vf mask) { return _mm256_movemask_ps(mask) == 0xFF; }
static inline float vf_lane0(vf v) { return _mm256_cvtss_f32(v); }
static inline vi vi_splat(int32_t x) { return _mm256_set1_epi32(x); }
static inline vi vi_add(vi a, vi b) { return _mm256_add_epi32(a, b); }
static inline vi vi_sub(vi a, vi b) { return _mm256_sub_epi32(a, b); }
static inline vi vi_shl(vi a, int n) { return _mm256_slli_epi32(a, n); }
static inline vi vi_sra(vi a, int n) { return _mm256_srai_epi32(a, n); }
static inline vi vf_bits(vf a) { return _mm256_castps_si256(a); }
static inline vf vi_as_float(vi a) { return _mm256_castsi256_ps(a); }
/* acc + lanes 0-3, then + lanes 4-7: two steps of a 4-lane accumulation over the same memory. */
static inline v4f v4f_add_vf(v4f acc, vf v) {
    return _mm_add_ps(_mm_add_ps(acc, _mm256_castps256_ps128(v)), _mm256_extractf128_ps(v, 1));
}
#else
#define AL_VF_LANES 4
typedef v4f vf;
typedef v4i vi;
static inline vf vf_load(const float *p) { return v4f_load(p); }
static inline void vf_store(float *p, vf v) { v4f_store(p, v); }
static inline vf vf_splat(float x) { return v4f_splat(x); }
static inline vf vf_add(vf a, vf b) { return v4f_add(a, b); }
static inline vf vf_sub(vf a, vf b) { return v4f_sub(a, b); }
static inline vf vf_mul(vf a, vf b) { return v4f_mul(a, b); }
static inline vf vf_div(vf a, vf b) { return v4f_div(a, b); }
static inline vf vf_sqrt(vf a) { return v4f_sqrt(a); }
static inline vf vf_min(vf a, vf b) { return v4f_min(a, b); }
static inline vf vf_max(vf a, vf b) { return v4f_max(a, b); }
static inline vf vf_lt(vf a, vf b) { return v4f_lt(a, b); }
static inline vf vf_isnan(vf a) { return v4f_isnan(a); }
static inline vf vf_and(vf a, vf b) { return v4f_and(a, b); }
static inline vf vf_or(vf a, vf b) { return v4f_or(a, b); }
static inline vf vf_xor(vf a, vf b) { return v4f_xor(a, b); }
static inline vf vf_select(vf mask, vf a, vf b) { return v4f_select(mask, a, b); }
static inline int vf_all(vf mask) { return v4f_all(mask); }
static inline float vf_lane0(vf v) { return v4f_lane0(v); }
static inline vi vi_splat(int32_t x) { return v4i_splat(x); }
static inline vi vi_add(vi a, vi b) { return v4i_add(a, b); }
static inline vi vi_sub(vi a, vi b) { return v4i_sub(a, b); }
static inline vi vi_shl(vi a, int n) { return v4i_shl(a, n); }
static inline vi vi_sra(vi a, int n) { return v4i_sra(a, n); }
static inline vi vf_bits(vf a) { return v4f_bits(a); }
static inline vf vi_as_float(vi a) { return v4i_as_float(a); }
static inline v4f v4f_add_vf(v4f acc, vf v) { return v4f_add(acc, v); }
#endif

/* A row's last n < AL_VF_LANES values as a vector (the other lanes 0) and back: the tail goes through the same
 * vector code as the rest of the row, so an element's bits do not depend on its place or the vector width. */
static inline vf vf_load_part(const float *p, size_t n) {
    float t[AL_VF_LANES] = {0.0f};
    memcpy(t, p, sizeof(float) * n);
    return vf_load(t);
}
static inline void vf_store_part(float *p, vf v, size_t n) {
    float t[AL_VF_LANES];
    vf_store(t, v);
    memcpy(p, t, sizeof(float) * n);
}

#endif
