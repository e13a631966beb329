/* The exact engine's hot loops in C: the same integer arithmetic as the numpy references in
 * umoec/engine/fixed.py and kernels.py (and cascade.py's tables, adapt.py's adaptation), in one
 * pass over memory.
 *
 * Every function here must give bit-identical results to its reference (tests compare them on
 * random and extreme inputs). Rules that keep that true on every compiler and CPU:
 *   - integers are int64_t; `>>` on a negative value is the arithmetic shift (floor), which C
 *     leaves to the implementation and every compiler we build with defines so (checked below);
 *   - floor division through floordiv(); rounding to an integer through toi() (ties to even, as
 *     numpy's rint, with no libm call), saturating at +-2**62 like fixed.to_int;
 *   - a double expression is one correctly rounded IEEE operation on exact operands, or a chain
 *     of multiplications/divisions written in the reference's order; nothing a compiler could
 *     contract into an FMA (built with -ffp-contract=off, never -ffast-math).
 * Arrays are passed as C-contiguous buffers; the Python wrappers (kernels.py) check shapes.
 */
#include "../_native.h"
#include <math.h>
#include <stdint.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>


/* formats (fixed.py) */
#define ACT 12
#define GATE 24
#define STATE 22
#define DECAY 24
#define U_FRAC 20
#define A_FRAC 16
#define RESID_BITS 24
#define MATMUL_BITS 20
#define STATE_BITS 31
#define TABLE_LO (-16)
#define TABLE_HI 16
#define TABLE_STEP_BITS 6
#define TABLE_N ((((int64_t)(TABLE_HI - TABLE_LO)) << TABLE_STEP_BITS) + 1)  /* entries of fixed.py's tables */
#define DT_MAX (((int64_t)64) << GATE)
#define EXP_T1 18
#define EPS2_RMS (1e-5 * 16777216.0)   /* kernels.NORM_EPS * 2**(2 ACT) */
#define EPS2_LN (1e-6 * 16777216.0)    /* kernels.LN_EPS * 2**(2 ACT) */

#if (-1 >> 1) != -1
#error "signed right shifts must be arithmetic (two's complement, as GCC, Clang and MSVC do)"
#endif
/* round(v / 2**k), halves up: (v + 2**(k-1)) >> k with an arithmetic shift (floor) */
static inline int64_t rshift(int64_t v, int k) { return (v + (((int64_t)1) << (k - 1))) >> k; }
/* rint (ties to even) without libm, then into int64 saturating at +-2**62 (as fixed.to_int):
 * for |x| < 2**52, x + 2**52 has unit spacing, so the IEEE addition rounds x to an integer
 * exactly as rint does; larger values are integers already. */
static inline int64_t toi(double x) {
    const double big = 4503599627370496.0;           /* 2**52 */
    const double lim = 4611686018427387904.0;        /* 2**62 */
    double ax = fabs(x);
    double r = ax < big ? (ax + big) - big : ax;     /* rint(|x|), ties to even (symmetric) */
    r = r > lim ? lim : r;
    return (int64_t)copysign(r, x);                  /* branch-free: loops over it vectorise */
}
/* 1.5 * 2**52: x + RINT_MAGIC, for |x| < 2**51, has unit spacing, so the IEEE addition rounds x
 * to an integer as rint does (ties to even); subtracting it again gives that integer exactly */
#define RINT_MAGIC 6755399441055744.0
static inline double rint_small(double x) { return (x + RINT_MAGIC) - RINT_MAGIC; }
/* toi(x) for |x| < 2**51, in a form compilers vectorise: x + 1.5 * 2**52 has unit spacing, so
 * the IEEE addition rounds x as rint does, and its bits minus those of 1.5 * 2**52 are the
 * integer. Callers check the range (TOI51_OUT) and take toi where it fails. */
static inline int64_t toi51(double x) {
    const double y = x + RINT_MAGIC;
    int64_t i;
    memcpy(&i, &y, sizeof i);
    return i - (int64_t)0x4338000000000000LL;
}
#define TOI51_OUT(x) (!(fabs(x) < 2251799813685248.0))   /* |x| >= 2**51, or NaN */
static inline int64_t clampb(int64_t v, int bits) {
    int64_t lim = (((int64_t)1) << bits) - 1;
    return v > lim ? lim : (v < -lim ? -lim : v);
}
/* clampb(toi(x), RESID_BITS) in a form compilers vectorise (AVX2 has no double -> int64
 * conversion): clamped first (a NaN to -lim, as toi's INT64_MIN clamped), then rounded by the
 * addition of 1.5 * 2**52 (unit spacing there: the IEEE addition rounds x to an integer, ties
 * to even, as rint), then converted through int32. */
static inline int64_t toi_resid(double x) {
    const double lim = (double)((((int64_t)1) << RESID_BITS) - 1);
    x = x > -lim ? x : -lim;
    x = x < lim ? x : lim;
    return (int32_t)rint_small(x);
}
static inline int64_t floordiv(int64_t a, int64_t b) { /* b > 0 */
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}
static inline int64_t interp(const int64_t *t, int64_t x) {
    const int64_t span = ((int64_t)(TABLE_HI - TABLE_LO)) << ACT;
    const int shift = ACT - TABLE_STEP_BITS;
    int64_t u = x - (((int64_t)TABLE_LO) << ACT);
    if (u < 0) u = 0;
    if (u > span - 1) u = span - 1;
    int64_t i = u >> shift, f = u & ((((int64_t)1) << shift) - 1);
    int64_t a = t[i];
    return a + rshift((t[i + 1] - a) * f, shift);
}
static inline int64_t silu1(const int64_t *sig, int64_t x) {
    x = clampb(x, RESID_BITS);
    return rshift(x * interp(sig, x), GATE);
}
static inline int64_t softplus1(const int64_t *sp, int64_t x) {
    if (x >= (((int64_t)TABLE_HI) << ACT)) return clampb(x, RESID_BITS) << (GATE - ACT);
    return interp(sp, x);
}
static inline int64_t exp_neg1(const int64_t *t1, const int64_t *t2, const int64_t *t3, int64_t x) {
    if (x < 0) x = 0;
    int64_t i = x >> 20;
    if (i >= EXP_T1) return 0;
    int64_t e = rshift(t1[i] * t2[(x >> 10) & 1023], 30);
    e = rshift(e * t3[x & 1023], 30);
    return rshift(e, 30 - DECAY);
}

/* silu of n values in place: a plain loop over an array (GCC's tuning makes no gathers of it) */
CLONES static void silu_plain(const int64_t *restrict sig, int64_t *restrict x, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) x[i] = silu1(sig, x[i]);
}

/* AVX-512 and AVX2 twins of the two hottest loops (silu's table lookups as gathers, the state
 * update's 32 x 32 -> 64 bit products as vpmuldq instead of full 64-bit multiplies, which
 * compilers emit for the plain loops): the same operations on the same integers, 8 or 4 at a
 * time. The best the CPU has is taken, unless _kernels.simd() names another (the tests compare
 * them all). */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define X86_SIMD 1
enum { SIMD_PLAIN, SIMD_AVX2, SIMD_AVX512 };
static int simd_level = SIMD_PLAIN;

__attribute__((target("avx512f"))) static void silu_avx512(const int64_t *restrict sig,
                                                         int64_t *restrict x, Py_ssize_t n) {
    const int sh = ACT - TABLE_STEP_BITS;
    const __m512i lim = _mm512_set1_epi64((((int64_t)1) << RESID_BITS) - 1);
    const __m512i nlim = _mm512_set1_epi64(-((((int64_t)1) << RESID_BITS) - 1));
    const __m512i lo = _mm512_set1_epi64(((int64_t)TABLE_LO) << ACT);
    const __m512i top = _mm512_set1_epi64((((int64_t)(TABLE_HI - TABLE_LO)) << ACT) - 1);
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi64(1);
    const __m512i fmask = _mm512_set1_epi64((((int64_t)1) << sh) - 1);
    const __m512i half_f = _mm512_set1_epi64(((int64_t)1) << (sh - 1));
    const __m512i half_g = _mm512_set1_epi64(((int64_t)1) << (GATE - 1));
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i v = _mm512_loadu_si512((const void *)(x + i));
        v = _mm512_min_epi64(_mm512_max_epi64(v, nlim), lim);            /* clampb(x, RESID) */
        __m512i u = _mm512_min_epi64(_mm512_max_epi64(_mm512_sub_epi64(v, lo), zero), top);
        __m512i idx = _mm512_srai_epi64(u, sh), f = _mm512_and_si512(u, fmask);
        __m512i a = _mm512_i64gather_epi64(idx, (const void *)sig, 8);
        __m512i b = _mm512_i64gather_epi64(_mm512_add_epi64(idx, one), (const void *)sig, 8);
        /* (b - a) f: |b - a| < 2**24, f < 64; x s: |x| < 2**24, 0 <= s <= 2**24 (int32 both) */
        __m512i d = _mm512_mul_epi32(_mm512_sub_epi64(b, a), f);
        __m512i sg = _mm512_add_epi64(a, _mm512_srai_epi64(_mm512_add_epi64(d, half_f), sh));
        __m512i y = _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(v, sg), half_g), GATE);
        _mm512_storeu_si512((void *)(x + i), y);
    }
    for (; i < n; i++) x[i] = silu1(sig, x[i]);
}

/* AVX2 has no 64-bit arithmetic shift, min or max: for |v| < 2**62, v >> k (floor) is
 * ((v + 2**62) >>> k) - 2**(62 - k), a logical shift of a positive value; clamps are compares
 * and blends. Every product is of two values that fit int32 (vpmuldq). */
#define AVX2_INLINE static inline __attribute__((target("avx2"), always_inline))
AVX2_INLINE __m256i sra4(__m256i v, const int k) {
    const __m256i off = _mm256_set1_epi64x(((int64_t)1) << 62);
    return _mm256_sub_epi64(_mm256_srli_epi64(_mm256_add_epi64(v, off), k),
                            _mm256_set1_epi64x(((int64_t)1) << (62 - k)));
}
AVX2_INLINE __m256i clamp4(__m256i v, __m256i lo, __m256i hi) {
    v = _mm256_blendv_epi8(v, hi, _mm256_cmpgt_epi64(v, hi));
    return _mm256_blendv_epi8(v, lo, _mm256_cmpgt_epi64(lo, v));
}

/* o[j] = toi_resid((acc[j] * a) * m[j]) for j < N, 4 at a time: the same IEEE products, max
 * then min (vmaxpd gives its second operand for a NaN: -lim, as toi_resid), rounding by 1.5 *
 * 2**52, conversion through int32 (compilers left this loop scalar in the AVX2 clone) */
__attribute__((target("avx2"))) static void requant_row_avx2(const float *acc, double a,
                                                             const double *m, int64_t *o,
                                                             Py_ssize_t N) {
    const __m256d va = _mm256_set1_pd(a), magic = _mm256_set1_pd(RINT_MAGIC);
    const __m256d lim = _mm256_set1_pd((double)((((int64_t)1) << RESID_BITS) - 1));
    const __m256d nlim = _mm256_set1_pd(-(double)((((int64_t)1) << RESID_BITS) - 1));
    Py_ssize_t j = 0;
    for (; j + 4 <= N; j += 4) {
        __m256d x = _mm256_mul_pd(_mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(acc + j)), va),
                                  _mm256_loadu_pd(m + j));
        x = _mm256_min_pd(_mm256_max_pd(x, nlim), lim);
        x = _mm256_sub_pd(_mm256_add_pd(x, magic), magic);
        _mm256_storeu_si256((__m256i *)(o + j), _mm256_cvtepi32_epi64(_mm256_cvttpd_epi32(x)));
    }
    for (; j < N; j++) o[j] = toi_resid(((double)acc[j] * a) * m[j]);
}

/* 8 values a pass in int32 lanes once clamped (|x| < 2**24): the table's entries (sigmoid in
 * Q24, 0..2**24) gathered as the low halves of its int64 entries, the interpolation in int32
 * ((b - a) f < 2**30), the product x s (< 2**48) in the even and the odd lanes' 64 bits */
__attribute__((target("avx2"))) static void silu_avx2(const int64_t *restrict sig,
                                                       int64_t *restrict x, Py_ssize_t n) {
    const int sh = ACT - TABLE_STEP_BITS;
    const __m256i lim = _mm256_set1_epi64x((((int64_t)1) << RESID_BITS) - 1);
    const __m256i nlim = _mm256_set1_epi64x(-((((int64_t)1) << RESID_BITS) - 1));
    const __m256i lo = _mm256_set1_epi32(TABLE_LO << ACT);
    const __m256i top = _mm256_set1_epi32(((TABLE_HI - TABLE_LO) << ACT) - 1);
    const __m256i zero = _mm256_setzero_si256(), two = _mm256_set1_epi32(2);
    const __m256i fmask = _mm256_set1_epi32((1 << sh) - 1);
    const __m256i half_f = _mm256_set1_epi32(1 << (sh - 1));
    const __m256i half_g = _mm256_set1_epi64x(((int64_t)1) << (GATE - 1));
    const __m256i low32 = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const int *t32 = (const int *)sig;               /* entry i's low half at 2 i (little end) */
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i v0 = clamp4(_mm256_loadu_si256((const __m256i *)(x + i)), nlim, lim);
        __m256i v1 = clamp4(_mm256_loadu_si256((const __m256i *)(x + i + 4)), nlim, lim);
        __m256i v = _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(v0, low32),
                                              _mm256_permutevar8x32_epi32(v1, low32), 0x20);
        __m256i u = _mm256_min_epi32(_mm256_max_epi32(_mm256_sub_epi32(v, lo), zero), top);
        __m256i idx2 = _mm256_slli_epi32(_mm256_srli_epi32(u, sh), 1);
        __m256i f = _mm256_and_si256(u, fmask);
        __m256i a = _mm256_i32gather_epi32(t32, idx2, 4);
        __m256i b = _mm256_i32gather_epi32(t32, _mm256_add_epi32(idx2, two), 4);
        __m256i d = _mm256_mullo_epi32(_mm256_sub_epi32(b, a), f);
        __m256i sg = _mm256_add_epi32(a, _mm256_srai_epi32(_mm256_add_epi32(d, half_f), sh));
        __m256i ye = sra4(_mm256_add_epi64(_mm256_mul_epi32(v, sg), half_g), GATE);
        __m256i yo = sra4(_mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(v, 32),
                                                            _mm256_srli_epi64(sg, 32)), half_g), GATE);
        __m256i l01 = _mm256_unpacklo_epi64(ye, yo), l23 = _mm256_unpackhi_epi64(ye, yo);
        _mm256_storeu_si256((__m256i *)(x + i), _mm256_permute2x128_si256(l01, l23, 0x20));
        _mm256_storeu_si256((__m256i *)(x + i + 4), _mm256_permute2x128_si256(l01, l23, 0x31));
    }
    for (; i < n; i++) x[i] = silu1(sig, x[i]);
}
#endif

/* silu of n values in place */
static void silu_rows(const int64_t *restrict sig, int64_t *restrict x, Py_ssize_t n) {
#ifdef X86_SIMD
    if (simd_level == SIMD_AVX512) {
        silu_avx512(sig, x, n);
        return;
    }
    if (simd_level == SIMD_AVX2) {
        silu_avx2(sig, x, n);
        return;
    }
#endif
    silu_plain(sig, x, n);
}

/* o[j] = toi_resid((acc[j] * a) * m[j]), j < N: a product's requantisation */
static void requant_row(const float *acc, double a, const double *m, int64_t *o, Py_ssize_t N) {
#ifdef X86_SIMD
    if (simd_level >= SIMD_AVX2) {
        requant_row_avx2(acc, a, m, o, N);
        return;
    }
#endif
    for (Py_ssize_t j = 0; j < N; j++) o[j] = toi_resid(((double)acc[j] * a) * m[j]);
}

/* -- buffer plumbing (Buf, get, release: ../_native.h) ---------------------------------------- */
#define I64(B_) ((int64_t *)(B_).b.buf)
#define F64(B_) ((double *)(B_).b.buf)
#define F32(B_) ((float *)(B_).b.buf)
#define OPT(B_) ((B_).held ? (B_).b.buf : NULL)

/* -- elementwise ----------------------------------------------------------------------------- */
/* unary(x, out, kind, table): kind 0 silu, 1 sigmoid, 2 softplus */
static PyObject *py_unary(PyObject *self, PyObject *args) {
    PyObject *ox, *oo, *ot;
    Py_ssize_t p_n;
    int kind;
    if (!PyArg_ParseTuple(args, "OOnOi", &ox, &oo, &p_n, &ot, &kind)) return NULL;
    /* locals whose address was never taken: the compiler can count and vectorise loops */
    const Py_ssize_t n = p_n;
    Buf b[3];
    memset(b, 0, sizeof b);
    if (!get(ox, &b[0], 8, n, 0, 0, "x") || !get(oo, &b[1], 8, n, 1, 0, "out") ||
        !get(ot, &b[2], 8, TABLE_N, 0, 0, "table")) {
        release(b, 3);
        return NULL;
    }
    const int64_t *x = I64(b[0]), *t = I64(b[2]);
    int64_t *o = I64(b[1]);
    for (Py_ssize_t i = 0; i < n; i++)
        o[i] = kind == 0 ? silu1(t, x[i]) : kind == 1 ? interp(t, x[i]) : softplus1(t, x[i]);
    release(b, 3);
    Py_RETURN_NONE;
}

static PyObject *py_exp_neg(PyObject *self, PyObject *args) {
    PyObject *ox, *oo, *o1, *o2, *o3;
    Py_ssize_t p_n;
    if (!PyArg_ParseTuple(args, "OOnOOO", &ox, &oo, &p_n, &o1, &o2, &o3)) return NULL;
    /* locals whose address was never taken: the compiler can count and vectorise loops */
    const Py_ssize_t n = p_n;
    Buf b[5];
    memset(b, 0, sizeof b);
    if (!get(ox, &b[0], 8, n, 0, 0, "x") || !get(oo, &b[1], 8, n, 1, 0, "out") ||
        !get(o1, &b[2], 8, EXP_T1, 0, 0, "t1") || !get(o2, &b[3], 8, 1024, 0, 0, "t2") ||
        !get(o3, &b[4], 8, 1024, 0, 0, "t3")) {
        release(b, 5);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        I64(b[1])[i] = exp_neg1(I64(b[2]), I64(b[3]), I64(b[4]), I64(b[0])[i]);
    release(b, 5);
    Py_RETURN_NONE;
}

/* -- rows into int8 --------------------------------------------------------------------------- */
static inline void quant_row(const int64_t *x, Py_ssize_t C, float *x8, int64_t *amax) {
    int64_t a = 1;
    for (Py_ssize_t c = 0; c < C; c++) {
        int64_t v = clampb(x[c], RESID_BITS);
        int64_t m = v < 0 ? -v : v;
        if (m > a) a = m;
    }
    const double k = 127.0 / (double)a;          /* one division per row, as fixed.quant_rows */
    /* |v k| <= 127: rounded by the addition of 1.5 * 2**52, as toi_resid (vectorises) */
    for (Py_ssize_t c = 0; c < C; c++)
        x8[c] = (float)rint_small((double)(int32_t)clampb(x[c], RESID_BITS) * k);
    *amax = a;
}

/* R rows of x (R, C) into int8 values and their amax (quant_row each) */
CLONES static void quant_block(const int64_t *x, Py_ssize_t R, Py_ssize_t C, float *x8,
                               int64_t *amax) {
    for (Py_ssize_t r = 0; r < R; r++) quant_row(x + r * C, C, x8 + r * C, amax + r);
}

/* quant_rows(x (R, C) int64, x8 (R, C) float32, amax (R,) int64, R, C) */
static PyObject *py_quant_rows(PyObject *self, PyObject *args) {
    PyObject *ox, *o8, *oa;
    Py_ssize_t p_R, p_C;
    if (!PyArg_ParseTuple(args, "OOOnn", &ox, &o8, &oa, &p_R, &p_C)) return NULL;
    /* locals whose address was never taken: the compiler can count and vectorise loops */
    const Py_ssize_t R = p_R, C = p_C;
    Buf b[3];
    memset(b, 0, sizeof b);
    if (!get(ox, &b[0], 8, R * C, 0, 0, "x") || !get(o8, &b[1], 4, R * C, 1, 0, "x8") ||
        !get(oa, &b[2], 8, R, 1, 0, "amax")) {
        release(b, 3);
        return NULL;
    }
    quant_block(I64(b[0]), R, C, F32(b[1]), I64(b[2]));
    release(b, 3);
    Py_RETURN_NONE;
}

/* requant's loop: out = clamp(rint((acc * amax) * m)) + b, then silu when act == 1; row r uses
 * row r / group of m */
CLONES static void requant_rows(const float *acc, const int64_t *amax, const double *m,
                                const int64_t *bias, const int64_t *sig, int act, int64_t *out,
                                Py_ssize_t R, Py_ssize_t N, Py_ssize_t group) {
    for (Py_ssize_t r = 0; r < R; r++) {
        const double a = (double)amax[r];
        const double *mr = m + (r / group) * N;
        const float *ar = acc + r * N;
        int64_t *o = out + r * N;
        requant_row(ar, a, mr, o, N);
        if (bias)
            for (Py_ssize_t j = 0; j < N; j++) o[j] += bias[j];
        if (act == 1) silu_rows(sig, o, N);
    }
}

/* requant(acc (R, N) float32, amax (R,), m (G, N) float64, b (N,) int64 or None,
 *         out (R, N) int64, R, N, act, sig, group): out = clamp(rint((acc * amax) * m)) + b, then
 * silu when act == 1; row r uses row r / group of m (group = R: one m for every row; the
 * experts of a mixture run as G groups of `group` rows) */
CLONES static PyObject *py_requant(PyObject *self, PyObject *args) {
    PyObject *oc, *oa, *om, *ob, *oo, *os;
    Py_ssize_t p_R, p_N, p_group;
    int act;
    if (!PyArg_ParseTuple(args, "OOOOOnniOn", &oc, &oa, &om, &ob, &oo, &p_R, &p_N, &act, &os, &p_group))
        return NULL;
    /* locals whose address was never taken: the compiler can count and vectorise loops */
    const Py_ssize_t R = p_R, N = p_N, group = p_group;
    if (group < 1 || R % group != 0) {
        PyErr_SetString(PyExc_ValueError, "requant: R must be a multiple of group");
        return NULL;
    }
    Buf b[6];
    memset(b, 0, sizeof b);
    if (!get(oc, &b[0], 4, R * N, 0, 0, "acc") || !get(oa, &b[1], 8, R, 0, 0, "amax") ||
        !get(om, &b[2], 8, (R / group) * N, 0, 0, "m") || !get(ob, &b[3], 8, N, 0, 1, "b") ||
        !get(oo, &b[4], 8, R * N, 1, 0, "out") ||
        !get(os, &b[5], 8, TABLE_N, 0, 1, "sig")) {
        release(b, 6);
        return NULL;
    }
    const float *acc = F32(b[0]);
    const int64_t *amax = I64(b[1]), *bias = OPT(b[3]), *sig = OPT(b[5]);
    const double *m = F64(b[2]);
    int64_t *out = I64(b[4]);
    if (act == 1 && sig == NULL) {
        release(b, 6);
        PyErr_SetString(PyExc_ValueError, "silu needs the sigmoid table");
        return NULL;
    }
    requant_rows(acc, amax, m, bias, sig, act, out, R, N, group);
    release(b, 6);
    Py_RETURN_NONE;
}

/* -- norms ------------------------------------------------------------------------------------ */
/* norm_quant(x (R, C), w (C,) or None, shift (C,) or None, scale (C,) or None, eps2, layer,
 *            x8 (R, C) float32, amax (R,), tmp (C,) int64 scratch, R, C)
 * layer = 0: RMSNorm (weight w or none); 1: LayerNorm without affine, then the AdaLN affine
 * (x * (4096 + scale) >> 12) + shift (scale, shift within RESID_BITS). Then the row into
 * int8 (quant_row). */
/* the rows of norm_quant (below); tmp is a scratch of C int64 */
CLONES static void norm_rows(const int64_t *xs, const int64_t *w, const int64_t *shift,
                             const int64_t *scale, double eps2, int layer, float *x8,
                             int64_t *amax, int64_t *tmp, Py_ssize_t R, Py_ssize_t C) {
    int narrow_w = 1;
    for (Py_ssize_t c = 0; w && c < C; c++) narrow_w &= w[c] > -(1 << 28) && w[c] < (1 << 28);
    for (Py_ssize_t r = 0; r < R; r++) {
        const int64_t *x = xs + r * C;
        int64_t mean = 0;
        if (layer) {
            int64_t total = 0;
            for (Py_ssize_t c = 0; c < C; c++) total += clampb(x[c], RESID_BITS);
            mean = floordiv(2 * total + C, 2 * C);
        }
        int64_t ss = 0;
        for (Py_ssize_t c = 0; c < C; c++) {
            int64_t v = clampb(clampb(x[c], RESID_BITS) - mean, RESID_BITS);
            tmp[c] = v;
            ss += v * v;
        }
        double rr = sqrt((double)ss / (double)C + eps2);
        const double k = (w && !layer ? 1.0 : 4096.0) / rr;   /* one division per row */
        /* |v| < 2**25 and |w| < 2**28: v w is exact as a product of doubles, and the loops
         * vectorise; a result beyond toi51's range (none seen) takes the plain loop */
        int big = w && !layer && !narrow_w;
        if (w && !layer && narrow_w) {
            for (Py_ssize_t c = 0; c < C; c++) {
                const double y = ((double)(int32_t)tmp[c] * (double)(int32_t)w[c]) * k;
                big |= TOI51_OUT(y);
                tmp[c] = toi51(y);
            }
        } else if (!(w && !layer)) {
            for (Py_ssize_t c = 0; c < C; c++) {
                const double y = (double)(int32_t)tmp[c] * k;
                big |= TOI51_OUT(y);
                tmp[c] = toi51(y);
            }
        }
        if (big)
            for (Py_ssize_t c = 0; c < C; c++) {
                const int64_t v = clampb(clampb(x[c], RESID_BITS) - mean, RESID_BITS);
                tmp[c] = w && !layer ? toi((double)(v * w[c]) * k) : toi((double)v * k);
            }
        if (layer && scale)
            for (Py_ssize_t c = 0; c < C; c++)
                tmp[c] = rshift(tmp[c] * ((((int64_t)1) << ACT) + scale[c]), ACT);
        if (layer && shift)
            for (Py_ssize_t c = 0; c < C; c++) tmp[c] += shift[c];
        quant_row(tmp, C, x8 + r * C, amax + r);
    }
}

static PyObject *py_norm_quant(PyObject *self, PyObject *args) {
    PyObject *ox, *ow, *osh, *osc, *o8, *oa, *ot;
    double eps2;
    int layer;
    Py_ssize_t p_R, p_C;
    if (!PyArg_ParseTuple(args, "OOOOdiOOOnn", &ox, &ow, &osh, &osc, &eps2, &layer, &o8, &oa, &ot,
                          &p_R, &p_C))
        return NULL;
    const Py_ssize_t R = p_R, C = p_C;
    Buf b[7];
    memset(b, 0, sizeof b);
    if (!get(ox, &b[0], 8, R * C, 0, 0, "x") || !get(ow, &b[1], 8, C, 0, 1, "w") ||
        !get(osh, &b[2], 8, C, 0, 1, "shift") || !get(osc, &b[3], 8, C, 0, 1, "scale") ||
        !get(o8, &b[4], 4, R * C, 1, 0, "x8") || !get(oa, &b[5], 8, R, 1, 0, "amax") ||
        !get(ot, &b[6], 8, C, 1, 0, "tmp")) {
        release(b, 7);
        return NULL;
    }
    norm_rows(I64(b[0]), OPT(b[1]), OPT(b[2]), OPT(b[3]), eps2, layer, F32(b[4]), I64(b[5]),
              I64(b[6]), R, C);
    release(b, 7);
    Py_RETURN_NONE;
}

/* -- the SSM mixer between its two projections ------------------------------------------------- */
/* The state update of one stream: for every state n and channel e,
 *     h = clamp(round(decay_e h / 2**24) + round(u_e B_n / 2**8)),  yacc_e += C_n h
 * The hot loop of the engine, written so compilers vectorise it; on x86-64 Linux it is compiled
 * for AVX-512, AVX2 and the baseline, chosen at load time (integer results are the same). */
CLONES static void ssm_plain(int32_t *restrict st, const int32_t *restrict dvec,
                              const int32_t *restrict u, const int64_t *restrict Bm,
                              const int64_t *restrict Cm, int64_t *restrict yacc, Py_ssize_t N,
                              Py_ssize_t E) {
    /* every operand fits int32 (decay <= 2**24, |state|, |u| < 2**31, |B|, |C| < 2**20), so
     * each product is a 32 x 32 -> 64 bit multiply */
    const int64_t lim = (((int64_t)1) << STATE_BITS) - 1;
    for (Py_ssize_t e = 0; e < E; e++) yacc[e] = 0;
    for (Py_ssize_t n = 0; n < N; n++) {
        const int32_t bn = (int32_t)clampb(Bm[n], MATMUL_BITS), cn = (int32_t)clampb(Cm[n], MATMUL_BITS);
        int32_t *restrict sn = st + n * E;
        for (Py_ssize_t e = 0; e < E; e++) {
            int64_t hv = (((int64_t)dvec[e] * sn[e] + (((int64_t)1) << (DECAY - 1))) >> DECAY) +
                         (((int64_t)u[e] * bn + (((int64_t)1) << (U_FRAC + ACT - STATE - 1))) >>
                          (U_FRAC + ACT - STATE));
            hv = hv > lim ? lim : hv;
            hv = hv < -lim ? -lim : hv;
            sn[e] = (int32_t)hv;
            yacc[e] += (int64_t)cn * (int32_t)hv;
        }
    }
}

#ifdef X86_SIMD
__attribute__((target("avx512f"))) static void ssm_avx512(
        int32_t *restrict st, const int32_t *restrict dvec, const int32_t *restrict u,
        const int64_t *restrict Bm, const int64_t *restrict Cm, int64_t *restrict yacc,
        Py_ssize_t N, Py_ssize_t E) {
    const int64_t lim = (((int64_t)1) << STATE_BITS) - 1;
    const int ku = U_FRAC + ACT - STATE;
    const __m512i vlim = _mm512_set1_epi64(lim), vnlim = _mm512_set1_epi64(-lim);
    const __m512i hd = _mm512_set1_epi64(((int64_t)1) << (DECAY - 1));
    const __m512i hu = _mm512_set1_epi64(((int64_t)1) << (ku - 1));
    for (Py_ssize_t e = 0; e < E; e++) yacc[e] = 0;
    for (Py_ssize_t n = 0; n < N; n++) {
        const int32_t bn = (int32_t)clampb(Bm[n], MATMUL_BITS), cn = (int32_t)clampb(Cm[n], MATMUL_BITS);
        const __m512i vb = _mm512_set1_epi64(bn), vc = _mm512_set1_epi64(cn);
        int32_t *restrict sn = st + n * E;
        for (Py_ssize_t e = 0; e < E; e += 8) {                  /* E % 8 == 0 */
            __m512i h = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(sn + e)));
            __m512i d = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(dvec + e)));
            __m512i uu = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(u + e)));
            __m512i hv = _mm512_add_epi64(
                _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(d, h), hd), DECAY),
                _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(uu, vb), hu), ku));
            hv = _mm512_min_epi64(_mm512_max_epi64(hv, vnlim), vlim);
            _mm256_storeu_si256((__m256i *)(sn + e), _mm512_cvtepi64_epi32(hv));
            __m512i ya = _mm512_loadu_si512((const void *)(yacc + e));
            _mm512_storeu_si512((void *)(yacc + e), _mm512_add_epi64(ya, _mm512_mul_epi32(vc, hv)));
        }
    }
}

/* channels 4 at a time, each group's sum over the states kept in a register (its decay and
 * input loaded once); the two rounding shifts' offsets folded into one subtraction */
__attribute__((target("avx2"))) static void ssm_avx2(
        int32_t *restrict st, const int32_t *restrict dvec, const int32_t *restrict u,
        const int64_t *restrict Bm, const int64_t *restrict Cm, int64_t *restrict yacc,
        Py_ssize_t N, Py_ssize_t E) {
    const int64_t lim = (((int64_t)1) << STATE_BITS) - 1;
    const int ku = U_FRAC + ACT - STATE;
    const __m256i vlim = _mm256_set1_epi64x(lim), vnlim = _mm256_set1_epi64x(-lim);
    /* (p + h + 2**62) >>> k - 2**(62 - k) is round(p / 2**k) for |p| < 2**61 (sra4) */
    const __m256i cd = _mm256_set1_epi64x((((int64_t)1) << (DECAY - 1)) + (((int64_t)1) << 62));
    const __m256i cu = _mm256_set1_epi64x((((int64_t)1) << (ku - 1)) + (((int64_t)1) << 62));
    const __m256i off = _mm256_set1_epi64x((((int64_t)1) << (62 - DECAY)) + (((int64_t)1) << (62 - ku)));
    const __m256i low32 = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);   /* each lane's low half */
    int64_t bn[256], cn[256];                                          /* N <= 256 (caller) */
    for (Py_ssize_t n = 0; n < N; n++) {
        bn[n] = (int32_t)clampb(Bm[n], MATMUL_BITS);
        cn[n] = (int32_t)clampb(Cm[n], MATMUL_BITS);
    }
    for (Py_ssize_t e = 0; e < E; e += 4) {                            /* E % 4 == 0 */
        const __m256i d = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(dvec + e)));
        const __m256i uu = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(u + e)));
        __m256i ya = _mm256_setzero_si256();
        for (Py_ssize_t n = 0; n < N; n++) {
            int32_t *restrict sn = st + n * E + e;
            const __m256i h = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)sn));
            const __m256i vb = _mm256_set1_epi64x(bn[n]), vc = _mm256_set1_epi64x(cn[n]);
            /* |d h| <= 2**55, |u b| < 2**51, their sum's |hv| < 2**42 */
            __m256i hv = _mm256_sub_epi64(
                _mm256_add_epi64(_mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(d, h), cd), DECAY),
                                 _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(uu, vb), cu), ku)),
                off);
            hv = clamp4(hv, vnlim, vlim);
            _mm_storeu_si128((__m128i *)sn,
                             _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(hv, low32)));
            ya = _mm256_add_epi64(ya, _mm256_mul_epi32(vc, hv));
        }
        _mm256_storeu_si256((__m256i *)(yacc + e), ya);
    }
}
#endif

static void ssm_update(int32_t *restrict st, const int32_t *restrict dvec, const int32_t *restrict u,
                       const int64_t *restrict Bm, const int64_t *restrict Cm,
                       int64_t *restrict yacc, Py_ssize_t N, Py_ssize_t E) {
#ifdef X86_SIMD
    if (simd_level == SIMD_AVX512 && E % 8 == 0) {
        ssm_avx512(st, dvec, u, Bm, Cm, yacc, N, E);
        return;
    }
    if (simd_level == SIMD_AVX2 && E % 4 == 0 && N <= 256) {
        ssm_avx2(st, dvec, u, Bm, Cm, yacc, N, E);
        return;
    }
#endif
    ssm_plain(st, dvec, u, Bm, Cm, yacc, N, E);
}

/* mixer_core(acc (R, O) float32 in_proj products, amax (R,), m (O,) float64,
 *            rows (R,) int64, conv (Bt, K-1, ch) int32 [in/out], taps (K, ch) int64,
 *            conv_s (ch,) float64, conv_b (ch,), dt_bias (H,), A (H,), D (H,),
 *            ssm (Bt, N, H, P) int32 [in/out], sig, softplus, t1, t2, t3 tables,
 *            out (R, E) int64, scratch (T (O + ch + 3 E + H)) int64,
 *            R, Bt, E, N, H, P, K, T threads)
 * O = 2E + 2N + H; ch = E + 2N. Computes, per row, the reference's mixer_step up to (and not
 * including) the gated RMSNorm: out = y * silu(z) >> 12. */
typedef struct {
    const float *acc;
    const int64_t *amax, *rows, *taps, *conv_b, *dt_bias, *A, *D, *sig, *sp, *t1, *t2, *t3;
    const double *m, *conv_s;
    int32_t *conv, *ssm;
    int64_t *out;
    Py_ssize_t E, N, H, P, K, ch, O;
} MixCtx;

/* the causal depthwise conv of one row: xs = toi((xbc t[K-1] + sum_k win[k] t[k]) conv_s) +
 * conv_b, in int64 (AVX2 has no int64 -> double conversion: this loop stays scalar there) */
static inline __attribute__((always_inline)) void conv_wide(const int64_t *xbc, const int32_t *win, const int64_t *taps,
                             const double *conv_s, const int64_t *conv_b, int64_t *xs,
                             Py_ssize_t ch, Py_ssize_t K) {
    const int64_t *tlast = taps + (K - 1) * ch;
    for (Py_ssize_t c = 0; c < ch; c++) xs[c] = xbc[c] * tlast[c];
    for (Py_ssize_t k = 0; k < K - 1; k++) {
        const int32_t *wk = win + k * ch;
        const int64_t *tk = taps + k * ch;
        for (Py_ssize_t c = 0; c < ch; c++) xs[c] += (int64_t)wk[c] * tk[c];
    }
    for (Py_ssize_t c = 0; c < ch; c++) xs[c] = toi((double)xs[c] * conv_s[c]) + conv_b[c];
}

/* conv_wide's result from sums of doubles, for taps within int16 and K <= 64 (the caller's
 * check): every partial sum is an integer below 64 * 2**31 * 2**15 = 2**52, so the sum is exact
 * and equals conv_wide's, and the loops vectorise through int32 -> double conversions; 0
 * (nothing usable written) when a result is beyond toi51's range */
#define CONV_CH_MAX 4096
static inline __attribute__((always_inline)) int conv_narrow(
    const int64_t *xbc, const int32_t *win, const int64_t *taps, const double *conv_s,
    const int64_t *conv_b, int64_t *xs, Py_ssize_t ch, Py_ssize_t K) {
    double xd[CONV_CH_MAX];
    const int64_t *tlast = taps + (K - 1) * ch;
    int out = 0;
    for (Py_ssize_t c = 0; c < ch; c++) xd[c] = (double)(int32_t)xbc[c] * (double)(int32_t)tlast[c];
    for (Py_ssize_t k = 0; k < K - 1; k++) {
        const int32_t *wk = win + k * ch;
        const int64_t *tk = taps + k * ch;
        for (Py_ssize_t c = 0; c < ch; c++) xd[c] += (double)wk[c] * (double)(int32_t)tk[c];
    }
    for (Py_ssize_t c = 0; c < ch; c++) {
        const double y = xd[c] * conv_s[c];
        out |= TOI51_OUT(y);
        xs[c] = toi51(y) + conv_b[c];
    }
    return !out;
}

/* rows [r0, r1) of mixer_core, with its own scratch (O + ch + 3 E + H int64) */
CLONES static void mixer_rows(const MixCtx *cx, Py_ssize_t r0, Py_ssize_t r1, int64_t *scratch) {
    const Py_ssize_t E = cx->E, N = cx->N, H = cx->H, P = cx->P, K = cx->K, ch = cx->ch, O = cx->O;
    const float *acc = cx->acc;
    const int64_t *amax = cx->amax, *rows = cx->rows, *taps = cx->taps, *conv_b = cx->conv_b;
    const int64_t *dt_bias = cx->dt_bias, *A = cx->A, *D = cx->D, *sig = cx->sig, *sp = cx->sp;
    const int64_t *t1 = cx->t1, *t2 = cx->t2, *t3 = cx->t3;
    const double *m = cx->m, *conv_s = cx->conv_s;
    int32_t *conv = cx->conv, *ssm = cx->ssm;
    int64_t *out = cx->out;
    int64_t *v = scratch;                /* O: the in_proj output z | xBC | dt */
    int64_t *xs = v + O;                 /* ch: silu(conv(xBC)) */
    int64_t *yacc = xs + ch;             /* E: sum_n C h */
    int64_t *dec = yacc + E;             /* H: decay per head */
    int32_t *u = (int32_t *)(dec + H);   /* E: dt x in Q20 */
    int32_t *dvec = u + E;               /* E: the decay of each channel's head */
    int64_t dt[64];
    /* the conv in doubles (conv_narrow) is exact for int16 taps (the model's) and K <= 64 */
    int narrow = K <= 64 && ch <= CONV_CH_MAX;
    for (Py_ssize_t i = 0; i < K * ch; i++) narrow &= taps[i] >= -32768 && taps[i] <= 32767;
    for (Py_ssize_t r = r0; r < r1; r++) {
        const int64_t s = rows[r];
        double a = (double)amax[r];
        requant_row(acc + r * O, a, m, v, O);
        int64_t *xbc = v + E;
        for (Py_ssize_t c = 0; c < ch; c++) xbc[c] = clampb(xbc[c], MATMUL_BITS);
        /* causal depthwise conv over the window (K-1 earlier inputs) and the new input */
        int32_t *win = conv + s * (K - 1) * ch;
        if (!narrow || !conv_narrow(xbc, win, taps, conv_s, conv_b, xs, ch, K))
            conv_wide(xbc, win, taps, conv_s, conv_b, xs, ch, K);
        silu_rows(sig, xs, ch);
        if (K > 1) {
            memmove(win, win + ch, (size_t)((K - 2) * ch) * sizeof(int32_t));
            for (Py_ssize_t c = 0; c < ch; c++) win[(K - 2) * ch + c] = (int32_t)xbc[c];
        }
        const int64_t *dtr = v + E + ch;
        for (Py_ssize_t h = 0; h < H; h++) {
            int64_t d = softplus1(sp, dtr[h] + dt_bias[h]);
            d = d < 0 ? 0 : (d > DT_MAX ? DT_MAX : d);
            dt[h] = d;
            dec[h] = exp_neg1(t1, t2, t3, rshift(d * A[h], GATE + A_FRAC - 20));
        }
        const int64_t *x = xs, *Bm = xs + E, *Cm = xs + E + N;
        for (Py_ssize_t h = 0; h < H; h++)
            for (Py_ssize_t p = 0; p < P; p++)
                u[h * P + p] = (int32_t)clampb(
                    rshift(dt[h] * clampb(x[h * P + p], MATMUL_BITS), GATE + ACT - U_FRAC), 31);
        for (Py_ssize_t h = 0; h < H; h++)
            for (Py_ssize_t p = 0; p < P; p++) dvec[h * P + p] = (int32_t)dec[h];
        ssm_update(ssm + s * N * E, dvec, u, Bm, Cm, yacc, N, E);
        int64_t *z = v;                       /* z is not needed after this: silu in place */
        silu_rows(sig, z, E);
        int64_t *o_r = out + r * E;
        for (Py_ssize_t h = 0; h < H; h++)
            for (Py_ssize_t p = 0; p < P; p++) {
                Py_ssize_t e = h * P + p;
                int64_t y = rshift(yacc[e], STATE) + rshift(D[h] * clampb(x[e], MATMUL_BITS), ACT);
                o_r[e] = rshift(y * z[e], ACT);
            }
    }
}

typedef struct { const MixCtx *c; Py_ssize_t r0, r1; int64_t *scratch; } MixJob;

static void *mixer_job(void *arg) {
    MixJob *j = (MixJob *)arg;
    mixer_rows(j->c, j->r0, j->r1, j->scratch);
    return NULL;
}

#define MAX_THREADS 16

/* rows [0, R) of mixer_core over T threads (fewer when there are few rows), each with its
 * slice of scratch (O + ch + 3 E + H int64 a thread); runs without the GIL. Rows are
 * independent (each stream's state is its own), so the result cannot depend on T. */
static void mixer_run(const MixCtx *cx, Py_ssize_t R, Py_ssize_t T, int64_t *scratch) {
    if (R < 16 * T) T = R / 16 > 1 ? R / 16 : 1;
    const Py_ssize_t per = cx->O + cx->ch + 3 * cx->E + cx->H;
    pthread_t tid[MAX_THREADS];
    MixJob jobs[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (Py_ssize_t t = 0; t < T; t++) {
        jobs[t] = (MixJob){cx, R * t / T, R * (t + 1) / T, scratch + t * per};
        if (t > 0) started[t] = pthread_create(&tid[t], NULL, mixer_job, &jobs[t]) == 0;
    }
    mixer_job(&jobs[0]);
    for (Py_ssize_t t = 1; t < T; t++) {
        if (started[t]) pthread_join(tid[t], NULL);
        else mixer_job(&jobs[t]);        /* no thread could be made: do it here */
    }
}

static PyObject *py_mixer_core(PyObject *self, PyObject *args) {
    PyObject *o[19];
    Py_ssize_t p_R, p_Bt, p_E, p_N, p_H, p_P, p_K, p_T;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOOOOOOnnnnnnnn", &o[0], &o[1], &o[2], &o[3], &o[4],
                          &o[5], &o[6], &o[7], &o[8], &o[9], &o[10], &o[11], &o[12], &o[13],
                          &o[14], &o[15], &o[16], &o[17], &o[18], &p_R, &p_Bt, &p_E, &p_N, &p_H,
                          &p_P, &p_K, &p_T))
        return NULL;
    /* locals whose address was never taken: the compiler can count and vectorise loops */
    const Py_ssize_t R = p_R, Bt = p_Bt, E = p_E, N = p_N, H = p_H, P = p_P, K = p_K;
    Py_ssize_t T = p_T < 1 ? 1 : (p_T > MAX_THREADS ? MAX_THREADS : p_T);
    const Py_ssize_t ch = E + 2 * N, O = 2 * E + 2 * N + H;
    const Py_ssize_t tab = TABLE_N;
    Buf b[19];
    memset(b, 0, sizeof b);
    int ok = get(o[0], &b[0], 4, R * O, 0, 0, "acc") && get(o[1], &b[1], 8, R, 0, 0, "amax") &&
             get(o[2], &b[2], 8, O, 0, 0, "m") && get(o[3], &b[3], 8, R, 0, 0, "rows") &&
             get(o[4], &b[4], 4, Bt * (K - 1) * ch, 1, 0, "conv") &&
             get(o[5], &b[5], 8, K * ch, 0, 0, "taps") && get(o[6], &b[6], 8, ch, 0, 0, "conv_s") &&
             get(o[7], &b[7], 8, ch, 0, 0, "conv_b") && get(o[8], &b[8], 8, H, 0, 0, "dt_bias") &&
             get(o[9], &b[9], 8, H, 0, 0, "A") && get(o[10], &b[10], 8, H, 0, 0, "D") &&
             get(o[11], &b[11], 4, Bt * N * H * P, 1, 0, "ssm") &&
             get(o[12], &b[12], 8, tab, 0, 0, "sig") && get(o[13], &b[13], 8, tab, 0, 0, "softplus") &&
             get(o[14], &b[14], 8, EXP_T1, 0, 0, "t1") && get(o[15], &b[15], 8, 1024, 0, 0, "t2") &&
             get(o[16], &b[16], 8, 1024, 0, 0, "t3") && get(o[17], &b[17], 8, R * E, 1, 0, "out") &&
             get(o[18], &b[18], 8, T * (O + ch + 3 * E + H), 1, 0, "scratch");
    if (!ok) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "mixer_core: bad arguments");
        release(b, 19);
        return NULL;
    }
    if (E != H * P) {
        release(b, 19);
        PyErr_SetString(PyExc_ValueError, "mixer_core: E must equal H * P");
        return NULL;
    }
    if (H > 64) {
        release(b, 19);
        PyErr_SetString(PyExc_ValueError, "mixer_core: at most 64 heads");
        return NULL;
    }
    const int64_t *rows = I64(b[3]);
    for (Py_ssize_t r = 0; r < R; r++) {
        if (rows[r] < 0 || rows[r] >= Bt || (r > 0 && rows[r] <= rows[r - 1])) {
            release(b, 19);
            PyErr_SetString(PyExc_IndexError, "mixer_core: rows must be increasing and in range");
            return NULL;
        }
    }
    MixCtx cx = {F32(b[0]), I64(b[1]), rows, I64(b[5]), I64(b[7]), I64(b[8]), I64(b[9]),
                I64(b[10]), I64(b[12]), I64(b[13]), I64(b[14]), I64(b[15]), I64(b[16]),
                F64(b[2]), F64(b[6]), (int32_t *)b[4].b.buf, (int32_t *)b[11].b.buf, I64(b[17]),
                E, N, H, P, K, ch, O};
    Py_BEGIN_ALLOW_THREADS
    mixer_run(&cx, R, T, I64(b[18]));
    Py_END_ALLOW_THREADS
    release(b, 19);
    Py_RETURN_NONE;
}

/* -- mixture of experts: routing, packing, combining ------------------------------------------ */
/* moe_route's loop (X <= 4096, 1 <= k <= X) */
static void route_rows(const int64_t *sc, const int64_t *bias, Py_ssize_t R, Py_ssize_t X,
                       Py_ssize_t k, int64_t *chosen, int64_t *gate, int64_t *rank,
                       int64_t *counts) {
    unsigned char taken[4096];
    for (Py_ssize_t e = 0; e < X; e++) counts[e] = 0;
    for (Py_ssize_t r = 0; r < R; r++) {
        const int64_t *sr = sc + r * X;
        memset(taken, 0, (size_t)X);
        int64_t total = 0;
        for (Py_ssize_t j = 0; j < k; j++) {
            Py_ssize_t best = -1;
            int64_t bk = 0;
            for (Py_ssize_t e = 0; e < X; e++) {
                int64_t key = sr[e] + bias[e];
                if (!taken[e] && (best < 0 || key > bk)) { best = e; bk = key; }
            }
            taken[best] = 1;
            chosen[r * k + j] = best;
            total += sr[best];
        }
        if (total < 1) total = 1;
        for (Py_ssize_t j = 0; j < k; j++) {
            int64_t e = chosen[r * k + j];
            gate[r * k + j] = (sr[e] << 15) / total;        /* both >= 0: floor */
            rank[r * k + j] = counts[e]++;
        }
    }
}

/* moe_pack's loop: each slot's row into its expert's padded batch; 0 when a slot is out of
 * range */
static int pack_rows(const float *x8, const int64_t *amax, const int64_t *chosen,
                     const int64_t *rank, float *xin, int64_t *ain, Py_ssize_t R, Py_ssize_t C,
                     Py_ssize_t k, Py_ssize_t X, Py_ssize_t cap) {
    for (Py_ssize_t i = 0; i < R * k; i++) {
        int64_t e = chosen[i], q = rank[i];
        if (e < 0 || e >= X || q < 0 || q >= cap) return 0;
        memcpy(xin + (e * cap + q) * C, x8 + (i / k) * C, (size_t)C * sizeof(float));
        ain[e * cap + q] = amax[i / k];
    }
    return 1;
}

/* moe_combine's loop: y[r] = sum_j round(ye[chosen, rank] * gate / 2**15); 0 when a slot is
 * out of range */
static int combine_rows(const int64_t *ye, const int64_t *chosen, const int64_t *rank,
                        const int64_t *gate, int64_t *y, Py_ssize_t R, Py_ssize_t C,
                        Py_ssize_t k, Py_ssize_t X, Py_ssize_t cap) {
    for (Py_ssize_t r = 0; r < R; r++) {
        int64_t *yr = y + r * C;
        for (Py_ssize_t c = 0; c < C; c++) yr[c] = 0;
        for (Py_ssize_t j = 0; j < k; j++) {
            int64_t e = chosen[r * k + j], q = rank[r * k + j], g = gate[r * k + j];
            if (e < 0 || e >= X || q < 0 || q >= cap) return 0;
            const int64_t *src = ye + (e * cap + q) * C;
            for (Py_ssize_t c = 0; c < C; c++) yr[c] += rshift(src[c] * g, 15);
        }
    }
    return 1;
}

/* moe_route(s (R, X) int64 sigmoid scores, bias (X,), chosen (R, k) out, gate (R, k) out,
 *           rank (R, k) out, counts (X,) out, R, X, k): per row the k largest s + bias (ties: the
 * lower index first, as a stable sort), gates s / sum(s chosen) in Q15 (floor), and each slot's
 * place among the slots of its expert, slots taken row by row */
static PyObject *py_moe_route(PyObject *self, PyObject *args) {
    PyObject *os_, *ob, *oc, *og, *orank, *ocnt;
    Py_ssize_t p_R, p_X, p_k;
    if (!PyArg_ParseTuple(args, "OOOOOOnnn", &os_, &ob, &oc, &og, &orank, &ocnt, &p_R, &p_X, &p_k))
        return NULL;
    const Py_ssize_t R = p_R, X = p_X, k = p_k;
    if (k < 1 || k > X || X > 4096) {
        PyErr_SetString(PyExc_ValueError, "moe_route: need 1 <= k <= X <= 4096");
        return NULL;
    }
    Buf b[6];
    memset(b, 0, sizeof b);
    if (!get(os_, &b[0], 8, R * X, 0, 0, "s") || !get(ob, &b[1], 8, X, 0, 0, "bias") ||
        !get(oc, &b[2], 8, R * k, 1, 0, "chosen") || !get(og, &b[3], 8, R * k, 1, 0, "gate") ||
        !get(orank, &b[4], 8, R * k, 1, 0, "rank") || !get(ocnt, &b[5], 8, X, 1, 0, "counts")) {
        release(b, 6);
        return NULL;
    }
    route_rows(I64(b[0]), I64(b[1]), R, X, k, I64(b[2]), I64(b[3]), I64(b[4]), I64(b[5]));
    release(b, 6);
    Py_RETURN_NONE;
}

/* moe_pack(x8 (R, C) float32, amax (R,), chosen (R, k), rank (R, k), xin (X, cap, C) float32,
 *          ain (X, cap) int64, R, C, k, X, cap): slot (r, j) goes to row rank of its expert */
static PyObject *py_moe_pack(PyObject *self, PyObject *args) {
    PyObject *o8, *oa, *oc, *orank, *oxin, *oain;
    Py_ssize_t p_R, p_C, p_k, p_X, p_cap;
    if (!PyArg_ParseTuple(args, "OOOOOOnnnnn", &o8, &oa, &oc, &orank, &oxin, &oain, &p_R, &p_C,
                          &p_k, &p_X, &p_cap))
        return NULL;
    const Py_ssize_t R = p_R, C = p_C, k = p_k, X = p_X, cap = p_cap;
    Buf b[6];
    memset(b, 0, sizeof b);
    if (!get(o8, &b[0], 4, R * C, 0, 0, "x8") || !get(oa, &b[1], 8, R, 0, 0, "amax") ||
        !get(oc, &b[2], 8, R * k, 0, 0, "chosen") || !get(orank, &b[3], 8, R * k, 0, 0, "rank") ||
        !get(oxin, &b[4], 4, X * cap * C, 1, 0, "xin") || !get(oain, &b[5], 8, X * cap, 1, 0, "ain")) {
        release(b, 6);
        return NULL;
    }
    const float *x8 = F32(b[0]);
    const int64_t *amax = I64(b[1]), *chosen = I64(b[2]), *rank = I64(b[3]);
    float *xin = F32(b[4]);
    int64_t *ain = I64(b[5]);
    const int ok = pack_rows(x8, amax, chosen, rank, xin, ain, R, C, k, X, cap);
    release(b, 6);
    if (!ok) {
        PyErr_SetString(PyExc_IndexError, "moe_pack: slot out of range");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* moe_combine(ye (X, cap, C) int64, chosen (R, k), rank (R, k), gate (R, k), y (R, C) out,
 *             R, C, k, X, cap): y[r] = sum_j round(ye[chosen, rank] * gate / 2**15) */
static PyObject *py_moe_combine(PyObject *self, PyObject *args) {
    PyObject *oy, *oc, *orank, *og, *oo;
    Py_ssize_t p_R, p_C, p_k, p_X, p_cap;
    if (!PyArg_ParseTuple(args, "OOOOOnnnnn", &oy, &oc, &orank, &og, &oo, &p_R, &p_C, &p_k, &p_X,
                          &p_cap))
        return NULL;
    const Py_ssize_t R = p_R, C = p_C, k = p_k, X = p_X, cap = p_cap;
    Buf b[5];
    memset(b, 0, sizeof b);
    if (!get(oy, &b[0], 8, X * cap * C, 0, 0, "ye") || !get(oc, &b[1], 8, R * k, 0, 0, "chosen") ||
        !get(orank, &b[2], 8, R * k, 0, 0, "rank") || !get(og, &b[3], 8, R * k, 0, 0, "gate") ||
        !get(oo, &b[4], 8, R * C, 1, 0, "y")) {
        release(b, 5);
        return NULL;
    }
    const int64_t *ye = I64(b[0]), *chosen = I64(b[1]), *rank = I64(b[2]), *gate = I64(b[3]);
    int64_t *y = I64(b[4]);
    const int ok = combine_rows(ye, chosen, rank, gate, y, R, C, k, X, cap);
    release(b, 5);
    if (!ok) {
        PyErr_SetString(PyExc_IndexError, "moe_combine: slot out of range");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* -- softmax confidence ------------------------------------------------------------------------- */
/* one row's flag (top_margin's test) */
static inline int margin_row(const int64_t *l, Py_ssize_t V, const int64_t *et, Py_ssize_t T,
                             int64_t thr, int second) {
    int64_t mx = l[0];
    for (Py_ssize_t v = 1; v < V; v++) mx = l[v] > mx ? l[v] : mx;
    int64_t total = 0, w1 = -1, w2 = -1;
    for (Py_ssize_t v = 0; v < V; v++) {
        int64_t d = rshift(mx - l[v], ACT - 8);
        d = d < T - 1 ? d : T - 1;
        int64_t w = et[d];
        total += w;
        if (w > w1) { w2 = w1; w1 = w; } else if (w > w2) { w2 = w; }
    }
    int64_t top = (((int64_t)1) << 30) - (second ? w2 : 0);
    return (top << 16) >= thr * total;
}

/* top_margin(logits (R, V) int64 ACT, exp_table (T,), flags (R,) uint8 out, thr, second, R, V, T):
 * w = EXP_TABLE[min(round((max - l) / 16), T - 1)], total = sum w; flag when
 * (2**30 - [second] w2) * 2**16 >= thr * total, w2 the second largest w (model.top_margin_at_least) */
CLONES static PyObject *py_top_margin(PyObject *self, PyObject *args) {
    PyObject *ol, *oe, *of;
    long long thr;
    int second;
    Py_ssize_t p_R, p_V, p_T;
    if (!PyArg_ParseTuple(args, "OOOLinnn", &ol, &oe, &of, &thr, &second, &p_R, &p_V, &p_T))
        return NULL;
    const Py_ssize_t R = p_R, V = p_V, T = p_T;
    Buf b[3];
    memset(b, 0, sizeof b);
    if (!get(ol, &b[0], 8, R * V, 0, 0, "logits") || !get(oe, &b[1], 8, T, 0, 0, "exp") ||
        !get(of, &b[2], 1, R, 1, 0, "flags")) {
        release(b, 3);
        return NULL;
    }
    const int64_t *lg = I64(b[0]), *et = I64(b[1]);
    unsigned char *flags = (unsigned char *)b[2].b.buf;
    for (Py_ssize_t r = 0; r < R; r++) flags[r] = margin_row(lg + r * V, V, et, T, thr, second);
    release(b, 3);
    Py_RETURN_NONE;
}

/* -- int8 products ------------------------------------------------------------------------------ */
/* mm8(x (G, R, K) float32 holding int8 values, wp (G, NB, Kp, 32) int16 packed weights, out
 * (G, R, N) float32, G, R, K, N): out = x @ w per group, exact. The weights (K, N) are packed by
 * kernels.pack8: K in pairs (Kp = ceil(K / 2)), N in blocks of 16 columns (NB = ceil(N / 16)),
 * wp[nb, kp, 2j + t] = w[2kp + t, 16nb + j], zeros beyond K and N; so one multiply-add of 16-bit
 * pairs (pmaddwd) gives two terms of 8 or 16 columns at once. Sums are int32 (|x w| <= 127**2,
 * K <= 1024: below 2**24, so the float32 result is the exact integer): the same numbers on any
 * instruction set, and faster than float32 BLAS on these small products (docs/engine.md). */
typedef void (*MMKernel)(const int32_t *x, const int16_t *wp, float *out, Py_ssize_t R,
                         Py_ssize_t Kp, Py_ssize_t N);

static void mm8_scalar(const int32_t *x, const int16_t *wp, float *out, Py_ssize_t R,
                       Py_ssize_t Kp, Py_ssize_t N) {
    const Py_ssize_t NB = (N + 15) / 16;
    for (Py_ssize_t r = 0; r < R; r++) {
        const int16_t *xr = (const int16_t *)(x + r * Kp);
        for (Py_ssize_t nb = 0; nb < NB; nb++) {
            int32_t acc[16] = {0};
            const int16_t *w = wp + nb * Kp * 32;
            for (Py_ssize_t kp = 0; kp < Kp; kp++) {
                const int32_t x0 = xr[2 * kp], x1 = xr[2 * kp + 1];
                for (int j = 0; j < 16; j++)
                    acc[j] += x0 * (int32_t)w[kp * 32 + 2 * j] + x1 * (int32_t)w[kp * 32 + 2 * j + 1];
            }
            for (int j = 0; j < 16 && nb * 16 + j < N; j++) out[r * N + nb * 16 + j] = (float)acc[j];
        }
    }
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define MM8_SIMD 1

/* `ROWS` rows x 16 columns (AVX2) or 32 columns (AVX-512) per pass: the accumulators stay in
 * registers when ROWS is a constant, so each width has a 4-row and a 1-row body */
#define MM8_AVX2_BODY(ROWS)                                                                      \
    do {                                                                                         \
        __m256i a0[ROWS], a1[ROWS];                                                              \
        for (int i = 0; i < ROWS; i++) a0[i] = a1[i] = _mm256_setzero_si256();                   \
        for (Py_ssize_t kp = 0; kp < Kp; kp++) {                                                 \
            const __m256i b0 = _mm256_loadu_si256((const __m256i *)(w + kp * 32));               \
            const __m256i b1 = _mm256_loadu_si256((const __m256i *)(w + kp * 32 + 16));          \
            for (int i = 0; i < ROWS; i++) {                                                     \
                const __m256i xv = _mm256_set1_epi32(x[(r + i) * Kp + kp]);                      \
                a0[i] = _mm256_add_epi32(a0[i], _mm256_madd_epi16(xv, b0));                      \
                a1[i] = _mm256_add_epi32(a1[i], _mm256_madd_epi16(xv, b1));                      \
            }                                                                                    \
        }                                                                                        \
        for (int i = 0; i < ROWS; i++) {                                                         \
            float *o = left >= 16 ? out + (r + i) * N + n0 : tail;                               \
            _mm256_storeu_ps(o, _mm256_cvtepi32_ps(a0[i]));                                      \
            _mm256_storeu_ps(o + 8, _mm256_cvtepi32_ps(a1[i]));                                  \
            if (left < 16) memcpy(out + (r + i) * N + n0, tail, (size_t)left * sizeof(float));   \
        }                                                                                        \
    } while (0)

__attribute__((target("avx2"))) static void mm8_avx2(const int32_t *x, const int16_t *wp,
                                                     float *out, Py_ssize_t R, Py_ssize_t Kp,
                                                     Py_ssize_t N) {
    const Py_ssize_t NB = (N + 15) / 16;
    float tail[16];
    for (Py_ssize_t nb = 0; nb < NB; nb++) {
        const int16_t *w = wp + nb * Kp * 32;
        const Py_ssize_t n0 = nb * 16, left = N - n0;
        Py_ssize_t r = 0;
        for (; r + 4 <= R; r += 4) MM8_AVX2_BODY(4);
        for (; r < R; r++) MM8_AVX2_BODY(1);
    }
}

/* one multiply-add of 16-bit pairs into the int32 sums: two instructions, or VNNI's one */
#define MADD_BW(A, X, B) _mm512_add_epi32((A), _mm512_madd_epi16((X), (B)))
#define MADD_VNNI(A, X, B) _mm512_dpwssd_epi32((A), (X), (B))

#define MM8_AVX512_BODY(ROWS, MADD)                                                              \
    do {                                                                                         \
        __m512i a0[ROWS], a1[ROWS];                                                              \
        for (int i = 0; i < ROWS; i++) a0[i] = a1[i] = _mm512_setzero_si512();                   \
        for (Py_ssize_t kp = 0; kp < Kp; kp++) {                                                 \
            const __m512i b0 = _mm512_loadu_si512(w0 + kp * 32);                                 \
            const __m512i b1 = _mm512_loadu_si512(w1 + kp * 32);                                 \
            for (int i = 0; i < ROWS; i++) {                                                     \
                const __m512i xv = _mm512_set1_epi32(x[(r + i) * Kp + kp]);                      \
                a0[i] = MADD(a0[i], xv, b0);                                                     \
                a1[i] = MADD(a1[i], xv, b1);                                                     \
            }                                                                                    \
        }                                                                                        \
        for (int i = 0; i < ROWS; i++) {                                                         \
            _mm512_mask_storeu_ps(out + (r + i) * N + n0, m0, _mm512_cvtepi32_ps(a0[i]));        \
            if (two)                                                                             \
                _mm512_mask_storeu_ps(out + (r + i) * N + n0 + 16, m1,                           \
                                      _mm512_cvtepi32_ps(a1[i]));                                \
        }                                                                                        \
    } while (0)

/* the AVX-512 kernel for one multiply-add; column tails by masked stores */
#define MM8_AVX512_KERNEL(NAME, TARGET, MADD)                                                    \
    __attribute__((target(TARGET))) static void NAME(const int32_t *x, const int16_t *wp,       \
                                                     float *out, Py_ssize_t R, Py_ssize_t Kp,   \
                                                     Py_ssize_t N) {                            \
        const Py_ssize_t NB = (N + 15) / 16;                                                     \
        for (Py_ssize_t nb = 0; nb < NB; nb += 2) {                                              \
            const int two = nb + 1 < NB;                                                         \
            const int16_t *w0 = wp + nb * Kp * 32, *w1 = two ? w0 + Kp * 32 : w0;                \
            const Py_ssize_t n0 = nb * 16, left0 = N - n0, left1 = left0 - 16;                   \
            const __mmask16 m0 = left0 >= 16 ? (__mmask16)0xFFFF                                 \
                                             : (__mmask16)((1u << left0) - 1);                   \
            const __mmask16 m1 = left1 >= 16 ? (__mmask16)0xFFFF                                 \
                                 : left1 > 0 ? (__mmask16)((1u << left1) - 1) : (__mmask16)0;   \
            Py_ssize_t r = 0;                                                                    \
            for (; r + 4 <= R; r += 4) MM8_AVX512_BODY(4, MADD);                                 \
            for (; r < R; r++) MM8_AVX512_BODY(1, MADD);                                         \
        }                                                                                        \
    }

MM8_AVX512_KERNEL(mm8_avx512, "avx512f,avx512bw", MADD_BW)
MM8_AVX512_KERNEL(mm8_vnni, "avx512f,avx512bw,avx512vnni", MADD_VNNI)
#endif

typedef struct { const char *name; MMKernel kernel; int usable; } MMPath;

/* the paths this CPU can run, best first (the scalar loop always) */
static int mm8_paths(MMPath *paths) {
    int n = 0;
#ifdef MM8_SIMD
    __builtin_cpu_init();
    const int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    paths[n++] = (MMPath){"avx512-vnni", mm8_vnni, avx512 && __builtin_cpu_supports("avx512vnni")};
    paths[n++] = (MMPath){"avx512", mm8_avx512, avx512};
    paths[n++] = (MMPath){"avx2", mm8_avx2, __builtin_cpu_supports("avx2")};
#endif
    paths[n++] = (MMPath){"scalar", mm8_scalar, 1};
    return n;
}

/* UMOEC_MM8 names a path to take (the tests compare them all; benchmarks time them), else the
 * best the CPU has; a named path the CPU lacks falls back to the best */
static MMPath mm8_chosen(void) {
    MMPath paths[4];
    const int n = mm8_paths(paths);
    const char *force = getenv("UMOEC_MM8");
    for (int i = 0; force && i < n; i++)
        if (paths[i].usable && strcmp(force, paths[i].name) == 0) return paths[i];
    for (int i = 0; i < n; i++)
        if (paths[i].usable) return paths[i];
    return paths[n - 1];
}

static PyObject *py_mm8_path(PyObject *self, PyObject *args) {
    return PyUnicode_FromString(mm8_chosen().name);
}

/* rows of int8 values held in float32 -> 16-bit pairs, 2 Kp values a row (K odd: a zero after
 * the last value); 0 when a value is not in -127..127 (a NaN fails both comparisons) */
CLONES static int to_pairs(const float *restrict x, int16_t *restrict d, Py_ssize_t R,
                           Py_ssize_t K, Py_ssize_t Kp) {
    for (Py_ssize_t r = 0; r < R; r++) {
        const float *xr = x + r * K;
        int16_t *dr = d + r * 2 * Kp;
        int out_of_range = 0;
        for (Py_ssize_t k = 0; k < K; k++)
            out_of_range |= !(xr[k] >= -127.0f) | !(xr[k] <= 127.0f);
        if (out_of_range) return 0;
        for (Py_ssize_t k = 0; k < K; k++) dr[k] = (int16_t)(int32_t)xr[k];
        if (K & 1) dr[K] = 0;
    }
    return 1;
}

/* G products of x (G, R, K) int8 values with the packed weights wp into out (G, R, N) float32
 * by `kernel` (mm8_chosen, taken with the GIL: it reads the environment), xi a scratch of
 * R * Kp + 1 int32; 0 when x holds a value outside -127..127. May run without the GIL. */
static int mm8_groups(MMKernel kernel, const float *x, int32_t *xi, const int16_t *wp, float *out,
                      Py_ssize_t G, Py_ssize_t R, Py_ssize_t K, Py_ssize_t N) {
    const Py_ssize_t Kp = (K + 1) / 2, NB = (N + 15) / 16;
    for (Py_ssize_t g = 0; g < G; g++) {
        if (!to_pairs(x + g * R * K, (int16_t *)xi, R, K, Kp)) return 0;
        kernel(xi, wp + g * NB * Kp * 32, out + g * R * N, R, Kp, N);
    }
    return 1;
}

static PyObject *py_mm8(PyObject *self, PyObject *args) {
    PyObject *ox, *ow, *oo;
    Py_ssize_t G, R, K, N;
    if (!PyArg_ParseTuple(args, "OOOnnnn", &ox, &ow, &oo, &G, &R, &K, &N)) return NULL;
    if (G < 1 || R < 0 || K < 1 || K > 1024 || N < 1) {
        PyErr_SetString(PyExc_ValueError, "mm8: bad shape (K must be 1..1024)");
        return NULL;
    }
    const Py_ssize_t Kp = (K + 1) / 2, NB = (N + 15) / 16;
    Buf b[3];
    memset(b, 0, sizeof b);
    if (!get(ox, &b[0], 4, G * R * K, 0, 0, "x") || !get(ow, &b[1], 2, G * NB * Kp * 32, 0, 0, "wp") ||
        !get(oo, &b[2], 4, G * R * N, 1, 0, "out")) {
        release(b, 3);
        return NULL;
    }
    int32_t *xi = (int32_t *)malloc((size_t)(R * Kp + 1) * sizeof(int32_t));
    if (xi == NULL) {
        release(b, 3);
        return PyErr_NoMemory();
    }
    const MMKernel kernel = mm8_chosen().kernel;
    const float *x = F32(b[0]);
    const int16_t *wp = (const int16_t *)b[1].b.buf;
    float *out = F32(b[2]);
    int bad;
    Py_BEGIN_ALLOW_THREADS
    bad = !mm8_groups(kernel, x, xi, wp, out, G, R, K, N);
    Py_END_ALLOW_THREADS
    free(xi);
    release(b, 3);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "mm8: x must hold int8 values");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* linear8(x (R, K) float32 int8 values, wp (packed: kernels.pack8), amax (R,) int64, m (N,)
 *         float64, b (N,) int64 or None, out (R, N) int64, R, K, N, act, sig table or None)
 * QLinear.apply in one call: mm8's products, then requant's loop (and SiLU when act), the same
 * operations in the same order as the two calls it replaces. */
CLONES static PyObject *py_linear8(PyObject *self, PyObject *args) {
    PyObject *ox, *ow, *oa, *om, *ob, *oo, *os;
    Py_ssize_t p_R, p_K, p_N;
    int act;
    if (!PyArg_ParseTuple(args, "OOOOOOnnniO", &ox, &ow, &oa, &om, &ob, &oo, &p_R, &p_K, &p_N, &act,
                          &os))
        return NULL;
    const Py_ssize_t R = p_R, K = p_K, N = p_N;
    if (R < 0 || K < 1 || K > 1024 || N < 1) {
        PyErr_SetString(PyExc_ValueError, "linear8: bad shape (K must be 1..1024)");
        return NULL;
    }
    const Py_ssize_t Kp = (K + 1) / 2, NB = (N + 15) / 16;
    Buf b[7];
    memset(b, 0, sizeof b);
    if (!get(ox, &b[0], 4, R * K, 0, 0, "x") || !get(ow, &b[1], 2, NB * Kp * 32, 0, 0, "wp") ||
        !get(oa, &b[2], 8, R, 0, 0, "amax") || !get(om, &b[3], 8, N, 0, 0, "m") ||
        !get(ob, &b[4], 8, N, 0, 1, "b") || !get(oo, &b[5], 8, R * N, 1, 0, "out") ||
        !get(os, &b[6], 8, TABLE_N, 0, 1, "sig")) {
        release(b, 7);
        return NULL;
    }
    const int64_t *amax = I64(b[2]), *bias = OPT(b[4]), *sig = OPT(b[6]);
    const double *m = F64(b[3]);
    int64_t *out = I64(b[5]);
    if (act == 1 && sig == NULL) {
        release(b, 7);
        PyErr_SetString(PyExc_ValueError, "silu needs the sigmoid table");
        return NULL;
    }
    int32_t *xi = (int32_t *)malloc((size_t)(R * Kp + 1) * sizeof(int32_t));
    float *acc = (float *)malloc((size_t)(R * N + 1) * sizeof(float));
    if (xi == NULL || acc == NULL) {
        free(xi);
        free(acc);
        release(b, 7);
        return PyErr_NoMemory();
    }
    const MMKernel kernel = mm8_chosen().kernel;
    const float *x = F32(b[0]);
    const int16_t *wp = (const int16_t *)b[1].b.buf;
    int bad;
    Py_BEGIN_ALLOW_THREADS
    bad = !mm8_groups(kernel, x, xi, wp, acc, 1, R, K, N);
    if (!bad) requant_rows(acc, amax, m, bias, sig, act, out, R, N, R > 0 ? R : 1);
    Py_END_ALLOW_THREADS
    free(xi);
    free(acc);
    release(b, 7);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "linear8: x must hold int8 values");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* -- online adaptation (adapt.py) ------------------------------------------------------------- */
/* adapt_learn(logits (B, V) int64, x (B, F) float64, y (B,) int64, used (B,) bool, A (F, V)
 *             float64, exp_table, B, F, rate, a_bits, dist_shift, dist_max)
 * HeadAdapter.learn: per used row, w = exp_table[min(rshift(max - logits, dist_shift),
 * dist_max)], total = sum w, s_v = floor((2 g_v rate + total) / (2 total)) with g = onehot(y) total
 * - w; then A = clamp(A + x^T s, a_bits). x holds integers (|x| <= 127) and s is 0 for every byte
 * with 2 w_v rate <= total but the coded one, so the product is summed exactly in int64 over the
 * few bytes that move; A's entries are integers below 2**a_bits, exact as doubles. */
CLONES static PyObject *py_adapt_learn(PyObject *self, PyObject *args) {
    PyObject *o[6];
    Py_ssize_t B, F, n_table;
    long long rate;
    int a_bits, dist_shift;
    long long dist_max;
    if (!PyArg_ParseTuple(args, "OOOOOOnnnLiiL", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &B, &F,
                          &n_table, &rate, &a_bits, &dist_shift, &dist_max))
        return NULL;
    if (B < 0 || F < 1 || rate < 1 || rate > (1 << 20) || a_bits < 1 || a_bits > 52 ||
        dist_shift < 1 || dist_max < 0 || dist_max >= n_table) {
        PyErr_SetString(PyExc_ValueError, "adapt_learn: bad sizes");
        return NULL;
    }
    Buf b[6];
    memset(b, 0, sizeof b);
    if (!get(o[0], &b[0], 8, B * 256, 0, 0, "logits") || !get(o[1], &b[1], 8, B * F, 0, 0, "x") ||
        !get(o[2], &b[2], 8, B, 0, 0, "y") || !get(o[3], &b[3], 1, B, 0, 0, "used") ||
        !get(o[4], &b[4], 8, F * 256, 1, 0, "A") || !get(o[5], &b[5], 8, n_table, 0, 0, "exp")) {
        release(b, 6);
        return NULL;
    }
    const int64_t *logits = I64(b[0]), *y = I64(b[2]), *w_of = I64(b[5]);
    const double *x = F64(b[1]);
    const uint8_t *used = (const uint8_t *)b[3].b.buf;
    double *A = F64(b[4]);
    for (Py_ssize_t r = 0; r < B; r++)
        if (y[r] < 0 || y[r] > 255) {
            release(b, 6);
            PyErr_SetString(PyExc_IndexError, "adapt_learn: a coded byte outside 0..255");
            return NULL;
        }
    /* the moves (row, byte, step), then A's rows one at a time: each row of A (256 doubles) is
     * read once and only its moved bytes are written (a delta in A's own layout made every move
     * a store F times 2 KB apart: most of the step's time) */
    int32_t *mv_r = PyMem_Malloc(sizeof(int32_t) * (size_t)(B > 0 ? B : 1) * 256);
    int32_t *mv_v = PyMem_Malloc(sizeof(int32_t) * (size_t)(B > 0 ? B : 1) * 256);
    int64_t *mv_s = PyMem_Malloc(sizeof(int64_t) * (size_t)(B > 0 ? B : 1) * 256);
    if (!mv_r || !mv_v || !mv_s) {
        PyMem_Free(mv_r);
        PyMem_Free(mv_v);
        PyMem_Free(mv_s);
        release(b, 6);
        return PyErr_NoMemory();
    }
    Py_ssize_t nmv = 0;
    int cols[256], ncols = 0;
    uint8_t moved[256] = {0};
    for (Py_ssize_t r = 0; r < B; r++) {
        if (!used[r]) continue;
        const int64_t *l = logits + r * 256;
        int64_t mx = l[0], w[256], total = 0;
        for (int v = 1; v < 256; v++) mx = l[v] > mx ? l[v] : mx;
        for (int v = 0; v < 256; v++) {
            int64_t d = rshift(mx - l[v], dist_shift);
            total += (w[v] = w_of[d < dist_max ? d : dist_max]);
        }
        const int64_t two_total = 2 * total;
        for (int v = 0; v < 256; v++) {
            const int64_t g = (v == y[r] ? total : 0) - w[v];
            const int64_t n = 2 * g * rate + total;
            if (n >= 0 && n < two_total) continue;          /* s = 0: most bytes */
            mv_r[nmv] = (int32_t)r;
            mv_v[nmv] = v;
            mv_s[nmv++] = floordiv(n, two_total);
            if (!moved[v]) moved[v] = 1, cols[ncols++] = v;
        }
    }
    int64_t acc[256] = {0};
    for (Py_ssize_t c = 0; c < F && nmv; c++) {
        for (Py_ssize_t k = 0; k < nmv; k++)
            acc[mv_v[k]] += (int64_t)x[mv_r[k] * F + c] * mv_s[k];
        double *Ac = A + c * 256;
        for (int j = 0; j < ncols; j++) {
            const int v = cols[j];
            Ac[v] = (double)clampb((int64_t)Ac[v] + acc[v], a_bits);
            acc[v] = 0;
        }
    }
    PyMem_Free(mv_r);
    PyMem_Free(mv_v);
    PyMem_Free(mv_s);
    release(b, 6);
    Py_RETURN_NONE;
}

/* The adaptation's correction x A (HeadAdapter.extra, for adapt_logits): every product and
 * partial sum is an integer below 2**53 (|x| <= 127, |A| < 2**32, F <= 2**12), so any summation
 * order gives the BLAS's exact result; a loop here keeps the step free of the BLAS's thread pool.
 * Rows in fours, columns in 32s: a block's 4 x 32 sums stay in registers while the features go
 * by, so A (F x 256 doubles, ~200 KB: not in L1) is read once per four rows, not once a row.
 * xt holds the block's features transposed (F, 4), zero rows past the batch's end. The sums are
 * exact integers (|x| <= 127, |A| < 2**32, F <= 4096: below 2**53), so their order is free. */
#define XR 4
#define XV 32
CLONES static void extra_block(const double *restrict xt, const double *restrict A, Py_ssize_t F,
                               int v0, double out[XR][XV]) {
    double s[XR][XV];
    for (int i = 0; i < XR; i++)
        for (int j = 0; j < XV; j++) s[i][j] = 0.0;
    for (Py_ssize_t c = 0; c < F; c++) {
        const double *restrict a = A + c * 256 + v0;
        const double *restrict xc = xt + c * XR;
        for (int i = 0; i < XR; i++) {
            const double xv = xc[i];
            for (int j = 0; j < XV; j++) s[i][j] += xv * a[j];
        }
    }
    for (int i = 0; i < XR; i++)
        for (int j = 0; j < XV; j++) out[i][j] = s[i][j];
}

/* adapt_logits(x (B, F) float64, A (F, V) float64, raw (B, V) int64, final (B,) uint8,
 *              out (B, V) int64, B, F, shift, bits)
 * ExactModel.finish with an adapter: out = clamp(raw + rshift(x A, shift) on the final head's
 * rows, bits) (raw alone, clamped, on the rows an exit or the cascade coded: their correction is
 * never computed). The final rows go through extra_block in fours. */
static PyObject *py_adapt_logits(PyObject *self, PyObject *args) {
    PyObject *o[5];
    Py_ssize_t B, F;
    int shift, bits;
    if (!PyArg_ParseTuple(args, "OOOOOnnii", &o[0], &o[1], &o[2], &o[3], &o[4], &B, &F, &shift,
                          &bits))
        return NULL;
    if (B < 0 || F < 1 || F > 4096 || shift < 1 || shift > 62 || bits < 1 || bits > 62) {
        PyErr_SetString(PyExc_ValueError, "adapt_logits: bad sizes");
        return NULL;
    }
    Buf b[5];
    memset(b, 0, sizeof b);
    if (!get(o[0], &b[0], 8, B * F, 0, 0, "x") || !get(o[1], &b[1], 8, F * 256, 0, 0, "A") ||
        !get(o[2], &b[2], 8, B * 256, 0, 0, "raw") || !get(o[3], &b[3], 1, B, 0, 0, "final") ||
        !get(o[4], &b[4], 8, B * 256, 1, 0, "out")) {
        release(b, 5);
        return NULL;
    }
    const double *x = F64(b[0]), *A = F64(b[1]);
    const int64_t *raw = I64(b[2]);
    const uint8_t *final = (const uint8_t *)b[3].b.buf;
    int64_t *out = I64(b[4]);
    double *xt = (double *)malloc((size_t)F * XR * sizeof(double));
    Py_ssize_t *rows = (Py_ssize_t *)malloc((size_t)(B + 1) * sizeof(Py_ssize_t));
    if (xt == NULL || rows == NULL) {
        free(xt);
        free(rows);
        release(b, 5);
        return PyErr_NoMemory();
    }
    Py_ssize_t n = 0;
    for (Py_ssize_t r = 0; r < B; r++) {
        if (final[r]) rows[n++] = r;
        else
            for (int v = 0; v < 256; v++) out[r * 256 + v] = clampb(raw[r * 256 + v], bits);
    }
    double sums[XR][XV];
    for (Py_ssize_t r0 = 0; r0 < n; r0 += XR) {
        const Py_ssize_t nr = n - r0 < XR ? n - r0 : XR;
        for (Py_ssize_t c = 0; c < F; c++)
            for (Py_ssize_t i = 0; i < XR; i++)
                xt[c * XR + i] = i < nr ? x[rows[r0 + i] * F + c] : 0.0;
        for (int v0 = 0; v0 < 256; v0 += XV) {
            extra_block(xt, A, F, v0, sums);
            for (Py_ssize_t i = 0; i < nr; i++) {
                const Py_ssize_t at = rows[r0 + i] * 256 + v0;
                for (int j = 0; j < XV; j++)
                    out[at + j] = clampb(raw[at + j] + rshift((int64_t)sums[i][j], shift), bits);
            }
        }
    }
    free(xt);
    free(rows);
    release(b, 5);
    Py_RETURN_NONE;
}

/* -- the cascade's context tables (cascade.py) ------------------------------------------------ */
/* The arrays cascade_stats and cascade_step share, o[0..7] into b[0..7]: byte (B,), hist (B, H),
 * prev (B, K), last, run, cnt (B, NB), orders, offsets (K,). */
static int get_stats(PyObject **o, Buf *b, Py_ssize_t B, Py_ssize_t H, Py_ssize_t K, Py_ssize_t NB) {
    return get(o[0], &b[0], 8, B, 0, 0, "byte") && get(o[1], &b[1], 8, B * H, 1, 0, "hist") &&
           get(o[2], &b[2], 8, B * K, 1, 0, "prev") && get(o[3], &b[3], 2, B * NB, 1, 0, "last") &&
           get(o[4], &b[4], 2, B * NB, 1, 0, "run") && get(o[5], &b[5], 2, B * NB, 1, 0, "cnt") &&
           get(o[6], &b[6], 8, K, 0, 0, "orders") && get(o[7], &b[7], 8, K, 0, 0, "offsets");
}

/* the checks and the loop of cascade_stats (and of cascade_step): 0 when a byte, an order or a
 * bucket is out of range */
static int stats_ok(const int64_t *byte, const int64_t *prev, const int64_t *orders, Py_ssize_t B,
                    Py_ssize_t H, Py_ssize_t K, Py_ssize_t NB, Py_ssize_t t) {
    for (Py_ssize_t k = 0; k < K; k++)
        if (orders[k] < 1 || orders[k] > H) return 0;
    for (Py_ssize_t r = 0; r < B; r++) {
        if (byte[r] < 0 || byte[r] > 255) return 0;
        for (Py_ssize_t k = 0; k < K && t > 0; k++)
            if (prev[r * K + k] < 0 || prev[r * K + k] >= NB) return 0;
    }
    return 1;
}

CLONES static int stats_rows(const int64_t *byte, int64_t *hist, int64_t *prev, int16_t *last,
                             int16_t *run, int16_t *cnt, const int64_t *orders,
                             const int64_t *offsets, int64_t *pred, int64_t *runs, int64_t *cnts,
                             uint8_t *has, Py_ssize_t B, Py_ssize_t H, Py_ssize_t K, Py_ssize_t NB,
                             Py_ssize_t t, int bits, int64_t cap) {
    for (Py_ssize_t r = 0; r < B; r++) {
        int16_t *lr = last + r * NB, *rr = run + r * NB, *cr = cnt + r * NB;
        int64_t *hr = hist + r * H, *pr = prev + r * K;
        if (t > 0)
            for (Py_ssize_t k = 0; k < K; k++) {
                const int64_t i = pr[k];
                const int16_t b16 = (int16_t)(byte[r] + 1);
                const int64_t ru = lr[i] == b16 ? (rr[i] + 1 < cap ? rr[i] + 1 : cap) : 1;
                const int64_t cn = cr[i] + 1 < cap ? cr[i] + 1 : cap;
                lr[i] = b16;
                rr[i] = (int16_t)ru;
                cr[i] = (int16_t)cn;
            }
        for (Py_ssize_t i = H - 1; i > 0; i--) hr[i] = hr[i - 1];
        hr[0] = byte[r];
        for (Py_ssize_t k = 0; k < K; k++) {
            int64_t value = 0, scale = 1;
            for (int64_t i = 0; i < orders[k]; i++, scale *= 257) value += hr[i] * scale;
            const int64_t bucket =
                orders[k] == 1 ? value : ((value * 2654435761LL) & 0xFFFFFFFFLL) >> (32 - bits);
            const int64_t i = bucket + offsets[k];
            if (i < 0 || i >= NB) return 0;
            pr[k] = i;
            const int64_t l = (int64_t)lr[i] - 1;
            has[r * K + k] = l >= 0;
            pred[r * K + k] = l > 0 ? l : 0;
            runs[r * K + k] = rr[i];
            cnts[r * K + k] = cr[i];
        }
    }
    return 1;
}

/* cascade_stats(byte (B,) int64, hist (B, H) int64, prev (B, K) int64, last, run, cnt (B, NB)
 *               int16, orders (K,) int64, offsets (K,) int64, pred, runs, cnts (B, K) int64 out,
 *               has (B, K) bool out, B, H, K, NB, t, hash_bits, cap)
 * cascade.update_stats: record (the context of step t-1 -> byte) in each order's bucket, shift
 * the byte into the history, look up each order's bucket of the new context. */
static PyObject *py_cascade_stats(PyObject *self, PyObject *args) {
    PyObject *o[12];
    Py_ssize_t B, H, K, NB, t;
    int bits;
    long long cap;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOnnnnniL", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &o[6], &o[7], &o[8], &o[9], &o[10], &o[11], &B, &H, &K, &NB, &t, &bits,
                          &cap))
        return NULL;
    if (B < 0 || H < 1 || K < 1 || K > 8 || NB < 1 || t < 0 || bits < 1 || bits > 31 || cap < 1 ||
        cap > 32767) {
        PyErr_SetString(PyExc_ValueError, "cascade_stats: bad sizes");
        return NULL;
    }
    Buf b[12];
    memset(b, 0, sizeof b);
    if (!get_stats(o, b, B, H, K, NB) ||
        !get(o[8], &b[8], 8, B * K, 1, 0, "pred") || !get(o[9], &b[9], 8, B * K, 1, 0, "runs") ||
        !get(o[10], &b[10], 8, B * K, 1, 0, "cnts") || !get(o[11], &b[11], 1, B * K, 1, 0, "has")) {
        release(b, 12);
        return NULL;
    }
    if (!stats_ok(I64(b[0]), I64(b[2]), I64(b[6]), B, H, K, NB, t)) {
        release(b, 12);
        PyErr_SetString(PyExc_IndexError, "cascade_stats: a byte, order or bucket out of range");
        return NULL;
    }
    const int ok = stats_rows(I64(b[0]), I64(b[1]), I64(b[2]), (int16_t *)b[3].b.buf,
                              (int16_t *)b[4].b.buf, (int16_t *)b[5].b.buf, I64(b[6]), I64(b[7]),
                              I64(b[8]), I64(b[9]), I64(b[10]), (uint8_t *)b[11].b.buf, B, H, K,
                              NB, t, bits, (int64_t)cap);
    release(b, 12);
    if (!ok) {
        PyErr_SetString(PyExc_IndexError, "cascade_stats: a bucket out of range");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* -- a block's whole turn in one call (model.Block.advance) -------------------------------------- */
/* A step of the fast profiles runs ~35 kernels and numpy operations a block, each paying Python's
 * call and allocation costs (~80 us a block at one stream, more than its arithmetic). block_plan
 * holds a block's weights once (buffers kept for the plan's life); block_apply then runs the
 * block for its rows calling the very loops those kernels call, in the same order: the same
 * integers. Only blocks whose products all go through mm8 and that have no cross-attention
 * get a plan; the others stay on the Python path. */
enum {
    BP_NORM1, BP_NORM2, BP_IN_WP, BP_IN_M, BP_TAPS, BP_CONV_S, BP_CONV_B, BP_DT_BIAS, BP_A, BP_D,
    BP_NORM, BP_OUT_WP, BP_OUT_M, BP_OUT_B,
    BP_W1_WP, BP_W1_M, BP_W1_B, BP_W2_WP, BP_W2_M, BP_W2_B,                     /* dense FFN */
    BP_R_WP, BP_R_M, BP_R_B, BP_MOE_BIAS, BP_E1_WP, BP_E1_M, BP_E2_WP, BP_E2_M,   /* experts */
    BP_S1_WP, BP_S1_M, BP_S1_B, BP_S2_WP, BP_S2_M, BP_S2_B,                     /* shared */
    BP_SIG, BP_SOFTPLUS, BP_T1, BP_T2, BP_T3,
    BP_MR_WP, BP_MR_M, BP_MR_B,                                                  /* MoD router */
    BP_COUNT
};
enum { BD_C, BD_E, BD_N, BD_H, BD_P, BD_K, BD_MOE, BD_FD, BD_X, BD_TOPK, BD_F, BD_FS, BD_COUNT };

typedef struct { const int16_t *wp; const double *m; const int64_t *b; Py_ssize_t K, N; } Lin;

typedef struct {
    Buf buf[BP_COUNT];
    Py_ssize_t d[BD_COUNT];
    Lin in_proj, out_proj, w1, w2, router, s1, s2, mod_router;
} BlockPlan;

/* A plan (block_plan, cascade_plan, head_plan) is a PyMem block holding its buffers: plan_drop
 * releases them and frees it (every failure path, and the capsule's destructor); plan_capsule
 * hands it to Python, or drops it when the capsule cannot be made. */
static PyObject *plan_drop(void *p, Buf *buf, int n) {
    release(buf, n);
    PyMem_Free(p);
    return NULL;
}

static PyObject *plan_capsule(void *p, Buf *buf, int n, const char *name, PyCapsule_Destructor d) {
    PyObject *cap = PyCapsule_New(p, name, d);
    if (cap == NULL) plan_drop(p, buf, n);
    return cap;
}

static void plan_free(PyObject *capsule) {
    BlockPlan *p = (BlockPlan *)PyCapsule_GetPointer(capsule, "umoec.block_plan");
    if (p != NULL) plan_drop(p, p->buf, BP_COUNT);
}

static Py_ssize_t packed(Py_ssize_t K, Py_ssize_t N) { return ((N + 15) / 16) * ((K + 1) / 2) * 32; }

static Lin lin_of(BlockPlan *p, int wp, int m, int bias, Py_ssize_t K, Py_ssize_t N) {
    return (Lin){(const int16_t *)p->buf[wp].b.buf, F64(p->buf[m]),
                 bias >= 0 ? OPT(p->buf[bias]) : NULL, K, N};
}

/* block_plan(arrays (BP_COUNT,) tuple, dims (BD_COUNT,) tuple) -> capsule; every array's size
 * is checked here against the dims, None only where a block of that kind has none */
static PyObject *py_block_plan(PyObject *self, PyObject *args) {
    PyObject *arrays, *dims;
    if (!PyArg_ParseTuple(args, "O!O!", &PyTuple_Type, &arrays, &PyTuple_Type, &dims)) return NULL;
    if (PyTuple_GET_SIZE(arrays) != BP_COUNT || PyTuple_GET_SIZE(dims) != BD_COUNT) {
        PyErr_SetString(PyExc_ValueError, "block_plan: wrong number of arrays or dims");
        return NULL;
    }
    BlockPlan *p = PyMem_Calloc(1, sizeof(BlockPlan));
    if (p == NULL) return PyErr_NoMemory();
    for (int i = 0; i < BD_COUNT; i++) {
        p->d[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(dims, i));
        if (p->d[i] < 0 || p->d[i] > 65536) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "block_plan: bad dims");
            PyMem_Free(p);
            return NULL;
        }
    }
    const Py_ssize_t C = p->d[BD_C], E = p->d[BD_E], N = p->d[BD_N], H = p->d[BD_H],
                     P = p->d[BD_P], K = p->d[BD_K], moe = p->d[BD_MOE], Fd = p->d[BD_FD],
                     X = p->d[BD_X], k = p->d[BD_TOPK], F = p->d[BD_F], Fs = p->d[BD_FS];
    const Py_ssize_t ch = E + 2 * N, O = 2 * E + 2 * N + H;
    if (C < 1 || E != H * P || H < 1 || H > 64 || K < 1 || C > 1024 || E > 1024 || Fd > 1024 ||
        F > 1024 || Fs > 1024 || (moe && (k < 1 || k > X || X > 4096))) {
        PyErr_SetString(PyExc_ValueError, "block_plan: unsupported dims");
        PyMem_Free(p);
        return NULL;
    }
    /* item size, count, whether it may be None (the other kind's FFN, absent biases) */
    struct { Py_ssize_t size, count; int optional; } want[BP_COUNT] = {
        {8, C, 1}, {8, C, 1}, {2, packed(C, O), 0}, {8, O, 0}, {8, K * ch, 0}, {8, ch, 0},
        {8, ch, 0}, {8, H, 0}, {8, H, 0}, {8, H, 0}, {8, E, 0}, {2, packed(E, C), 0}, {8, C, 0},
        {8, C, 1},
        {2, packed(C, Fd), moe}, {8, Fd, moe}, {8, Fd, 1}, {2, packed(Fd, C), moe},
        {8, C, moe}, {8, C, 1},
        {2, packed(C, X), !moe}, {8, X, !moe}, {8, X, 1}, {8, X, !moe}, {2, X * packed(C, F), !moe},
        {8, X * F, !moe}, {2, X * packed(F, C), !moe}, {8, X * C, !moe},
        {2, packed(C, Fs), 1}, {8, Fs, 1}, {8, Fs, 1}, {2, packed(Fs, C), 1}, {8, C, 1}, {8, C, 1},
        {8, TABLE_N, 0}, {8, TABLE_N, 0}, {8, EXP_T1, 0}, {8, 1024, 0}, {8, 1024, 0},
        {2, packed(C, 1), 1}, {8, 1, 1}, {8, 1, 1},
    };
    static const char *names[BP_COUNT] = {
        "norm1", "norm2", "in_proj", "in_proj.m", "taps", "conv_s", "conv_b", "dt_bias", "A", "D",
        "norm", "out_proj", "out_proj.m", "out_proj.b", "w1", "w1.m", "w1.b", "w2", "w2.m", "w2.b",
        "router", "router.m", "router.b", "moe_bias", "experts.w1", "experts.m1", "experts.w2",
        "experts.m2", "shared.w1", "shared.w1.m", "shared.w1.b", "shared.w2", "shared.w2.m",
        "shared.w2.b", "sig", "softplus", "t1", "t2", "t3", "mod_router", "mod_router.m",
        "mod_router.b"};
    for (int i = 0; i < BP_COUNT; i++) {
        if (!get(PyTuple_GET_ITEM(arrays, i), &p->buf[i], want[i].size, want[i].count, 0,
                 want[i].optional, names[i])) {
            return plan_drop(p, p->buf, BP_COUNT);
        }
    }
    if ((p->buf[BP_NORM1].held != p->buf[BP_NORM2].held) ||
        (moe && Fs > 0 && !(p->buf[BP_S1_WP].held && p->buf[BP_S2_WP].held && p->buf[BP_S1_M].held &&
                            p->buf[BP_S2_M].held)) ||
        (p->buf[BP_MR_WP].held != p->buf[BP_MR_M].held)) {
        PyErr_SetString(PyExc_ValueError, "block_plan: norms, shared experts or MoD router incomplete");
        return plan_drop(p, p->buf, BP_COUNT);
    }
    p->in_proj = lin_of(p, BP_IN_WP, BP_IN_M, -1, C, O);
    p->out_proj = lin_of(p, BP_OUT_WP, BP_OUT_M, BP_OUT_B, E, C);
    p->w1 = lin_of(p, BP_W1_WP, BP_W1_M, BP_W1_B, C, Fd);
    p->w2 = lin_of(p, BP_W2_WP, BP_W2_M, BP_W2_B, Fd, C);
    p->router = lin_of(p, BP_R_WP, BP_R_M, BP_R_B, C, X);
    p->s1 = lin_of(p, BP_S1_WP, BP_S1_M, BP_S1_B, C, Fs);
    p->s2 = lin_of(p, BP_S2_WP, BP_S2_M, BP_S2_B, Fs, C);
    p->mod_router = lin_of(p, BP_MR_WP, BP_MR_M, BP_MR_B, C, 1);
    return plan_capsule(p, p->buf, BP_COUNT, "umoec.block_plan", plan_free);
}

/* QLinear.apply (linear8's loops): out (R, N) = requant(mm8(x8, L)) (+ SiLU); 0 when x8 holds a
 * value outside int8 (it cannot: every x8 here comes from quant_row) */
static int lin_rows(const Lin *L, MMKernel kernel, const float *x8, const int64_t *amax,
                    Py_ssize_t R, int act, const int64_t *sig, int64_t *out, int32_t *xi,
                    float *acc) {
    if (R == 0) return 1;
    if (!mm8_groups(kernel, x8, xi, L->wp, acc, 1, R, L->K, L->N)) return 0;
    requant_rows(acc, amax, L->m, L->b, sig, act, out, R, L->N, R);
    return 1;
}

/* the AdaLN gate: y = round(clamp(y) * g / 2**ACT) per column (Block._gate) */
CLONES static void gate_rows(int64_t *y, const int64_t *g, Py_ssize_t R, Py_ssize_t C) {
    for (Py_ssize_t r = 0; r < R; r++)
        for (Py_ssize_t c = 0; c < C; c++) y[r * C + c] = rshift(clampb(y[r * C + c], RESID_BITS) * g[c], ACT);
}

static Py_ssize_t max6(Py_ssize_t a, Py_ssize_t b, Py_ssize_t c, Py_ssize_t d, Py_ssize_t e,
                       Py_ssize_t f) {
    Py_ssize_t m = a > b ? a : b;
    m = m > c ? m : c;
    m = m > d ? m : d;
    m = m > e ? m : e;
    return m > f ? m : f;
}

/* The FFN of a mixture-of-experts block (Block._moe) for rows x8 (R, C): y (R, C). Returns 0 on
 * a memory or int8 failure (*nomem says which). */
CLONES static int moe_rows(const BlockPlan *p, MMKernel kernel, const float *x8, const int64_t *amax,
                    Py_ssize_t R, int64_t *y, int32_t *xi, float *acc, int64_t *hbuf, float *h8,
                    int64_t *hamax, int *nomem) {
    const Py_ssize_t C = p->d[BD_C], X = p->d[BD_X], k = p->d[BD_TOPK], F = p->d[BD_F],
                     Fs = p->d[BD_FS];
    const int64_t *sig = I64(p->buf[BP_SIG]);
    int64_t *s = PyMem_RawMalloc(sizeof(int64_t) * (size_t)(R * X + 3 * R * k + X) + 8);
    if (s == NULL) { *nomem = 1; return 0; }
    int64_t *chosen = s + R * X, *gate = chosen + R * k, *rank = gate + R * k, *counts = rank + R * k;
    if (!lin_rows(&p->router, kernel, x8, amax, R, 0, NULL, s, xi, acc)) { PyMem_RawFree(s); return 0; }
    for (Py_ssize_t i = 0; i < R * X; i++) s[i] = interp(sig, s[i]);          /* sigmoid */
    route_rows(s, I64(p->buf[BP_MOE_BIAS]), R, X, k, chosen, gate, rank, counts);
    Py_ssize_t cap = 1;
    for (Py_ssize_t e = 0; e < X; e++) cap = counts[e] > cap ? counts[e] : cap;
    const Py_ssize_t M = X * cap, W = F > C ? F : C;
    /* the experts' padded batches: py_moe_pack's layout, padding rows 0 with amax 1 */
    float *xin = PyMem_RawCalloc((size_t)(2 * M * W), sizeof(float));
    int64_t *ain = PyMem_RawMalloc(sizeof(int64_t) * (size_t)(M + M * W + M * C) + 8);
    if (xin == NULL || ain == NULL) {
        PyMem_RawFree(xin); PyMem_RawFree(ain); PyMem_RawFree(s);
        *nomem = 1;
        return 0;
    }
    float *eacc = xin + M * W;              /* xin: M rows of C, later of F (h8) */
    int64_t *hh = ain + M, *ye = hh + M * W;
    for (Py_ssize_t i = 0; i < M; i++) ain[i] = 1;
    int ok = pack_rows(x8, amax, chosen, rank, xin, ain, R, C, k, X, cap) &&
             mm8_groups(kernel, xin, xi, (const int16_t *)p->buf[BP_E1_WP].b.buf, eacc, X, cap, C, F);
    if (ok) {
        requant_rows(eacc, ain, F64(p->buf[BP_E1_M]), NULL, sig, 1, hh, M, F, cap);
        quant_block(hh, M, F, xin, ain);
        ok = mm8_groups(kernel, xin, xi, (const int16_t *)p->buf[BP_E2_WP].b.buf, eacc, X, cap, F, C);
    }
    if (ok) {
        requant_rows(eacc, ain, F64(p->buf[BP_E2_M]), NULL, NULL, 0, ye, M, C, cap);
        ok = combine_rows(ye, chosen, rank, gate, y, R, C, k, X, cap);
    }
    PyMem_RawFree(xin);
    PyMem_RawFree(ain);
    PyMem_RawFree(s);
    if (!ok) return 0;
    if (Fs > 0 && p->buf[BP_S1_WP].held) {                    /* the shared experts */
        if (!lin_rows(&p->s1, kernel, x8, amax, R, 1, sig, hbuf, xi, acc)) return 0;
        quant_block(hbuf, R, Fs, h8, hamax);
        int64_t *ys = hbuf;                                   /* hbuf is free again: R * C fits */
        if (!lin_rows(&p->s2, kernel, h8, hamax, R, 0, NULL, ys, xi, acc)) return 0;
        for (Py_ssize_t i = 0; i < R * C; i++) y[i] += ys[i];
    }
    return 1;
}

/* A block's step for R rows x (R, C) (rows: their places in conv and ssm, increasing): out
 * (R, C) = the block's delta (Block.step's lines); conv and ssm are updated in place at rows.
 * Called without the GIL. 0 on failure: *nomem set for memory, else a product's rows were not
 * int8 (they cannot be: every x8 here comes from quant_row). */
CLONES static int block_rows(const BlockPlan *p, const int64_t *x, int32_t *conv, int32_t *ssm,
                             const int64_t *rows, Py_ssize_t R, const int64_t *mod, Py_ssize_t T,
                             int64_t *out, int *nomem) {
    const Py_ssize_t C = p->d[BD_C], E = p->d[BD_E], N = p->d[BD_N], H = p->d[BD_H],
                     P = p->d[BD_P], K = p->d[BD_K], moe = p->d[BD_MOE], Fd = p->d[BD_FD],
                     X = p->d[BD_X], F = p->d[BD_F], Fs = p->d[BD_FS];
    const Py_ssize_t ch = E + 2 * N, O = 2 * E + 2 * N + H;
    if (R == 0) return 1;
    const Py_ssize_t Wx = max6(C, E, Fd, Fs, F, 1), Wa = max6(O, C, Fd, Fs, X, E);
    const Py_ssize_t per = O + ch + 3 * E + H;
    /* scratch: x8 (R Wx) f32, acc (R Wa) f32, xi (R Wx / 2 + 1) i32, amax R, tmp Wx, g (R E),
     * y (R C), x2 (R C), h (R Wx) i64, mixer T per */
    const size_t f32n = (size_t)(2 * R * Wx + R * Wa + R * Wx + 2);
    const size_t i64n = (size_t)(2 * R + Wx + R * E + 2 * R * C + R * Wx + T * per + 2);
    float *fbuf = PyMem_RawMalloc(sizeof(float) * f32n);
    int64_t *ibuf = PyMem_RawMalloc(sizeof(int64_t) * i64n);
    if (fbuf == NULL || ibuf == NULL) {
        PyMem_RawFree(fbuf); PyMem_RawFree(ibuf);
        *nomem = 1;
        return 0;
    }
    float *x8 = fbuf, *h8 = x8 + R * Wx, *acc = h8 + R * Wx;
    int32_t *xi = (int32_t *)(acc + R * Wa);                 /* R * Wx floats: pairs of int16 */
    int64_t *amax = ibuf, *hamax = amax + R, *tmp = hamax + R, *g = tmp + Wx, *y = g + R * E,
            *x2 = y + R * C, *h = x2 + R * C, *mscr = h + R * Wx;
    const int64_t *sig = I64(p->buf[BP_SIG]);
    const double eps_rms = EPS2_RMS, eps_ln = EPS2_LN;
    const MMKernel kernel = mm8_chosen().kernel;
    int ok;
    /* the mixer: norm, in_proj, mixer_core, gated norm, out_proj, AdaLN gate */
    if (mod) norm_rows(x, NULL, mod, mod + C, eps_ln, 1, x8, amax, tmp, R, C);
    else norm_rows(x, I64(p->buf[BP_NORM1]), NULL, NULL, eps_rms, 0, x8, amax, tmp, R, C);
    ok = mm8_groups(kernel, x8, xi, p->in_proj.wp, acc, 1, R, C, O);
    if (ok) {
        MixCtx cx = {acc, amax, rows, I64(p->buf[BP_TAPS]), I64(p->buf[BP_CONV_B]),
                     I64(p->buf[BP_DT_BIAS]), I64(p->buf[BP_A]), I64(p->buf[BP_D]), sig,
                     I64(p->buf[BP_SOFTPLUS]), I64(p->buf[BP_T1]), I64(p->buf[BP_T2]),
                     I64(p->buf[BP_T3]), p->in_proj.m, F64(p->buf[BP_CONV_S]), conv, ssm, g,
                     E, N, H, P, K, ch, O};
        mixer_run(&cx, R, T, mscr);
        norm_rows(g, I64(p->buf[BP_NORM]), NULL, NULL, eps_rms, 0, x8, amax, tmp, R, E);
        ok = lin_rows(&p->out_proj, kernel, x8, amax, R, 0, NULL, out, xi, acc);
    }
    if (ok) {
        if (mod) gate_rows(out, mod + 2 * C, R, C);
        for (Py_ssize_t i = 0; i < R * C; i++) x2[i] = clampb(x[i] + out[i], RESID_BITS);
        if (mod) norm_rows(x2, NULL, mod + 3 * C, mod + 4 * C, eps_ln, 1, x8, amax, tmp, R, C);
        else norm_rows(x2, I64(p->buf[BP_NORM2]), NULL, NULL, eps_rms, 0, x8, amax, tmp, R, C);
        if (moe) {
            ok = moe_rows(p, kernel, x8, amax, R, y, xi, acc, h, h8, hamax, nomem);
        } else {
            ok = lin_rows(&p->w1, kernel, x8, amax, R, 1, sig, h, xi, acc);
            if (ok) quant_block(h, R, Fd, h8, hamax);
            ok = ok && lin_rows(&p->w2, kernel, h8, hamax, R, 0, NULL, y, xi, acc);
        }
    }
    if (ok) {
        if (mod) gate_rows(y, mod + 5 * C, R, C);
        for (Py_ssize_t i = 0; i < R * C; i++) out[i] = clampb(out[i] + y[i], RESID_BITS);
    }
    PyMem_RawFree(fbuf);
    PyMem_RawFree(ibuf);
    return ok;
}

/* the places of the rows still alive: rows[:return] */
static Py_ssize_t alive_rows(const uint8_t *alive, Py_ssize_t B, int64_t *rows) {
    Py_ssize_t n = 0;
    for (Py_ssize_t r = 0; r < B; r++)
        if (alive[r]) rows[n++] = r;
    return n;
}

/* x (n, C) = h[rows[:n]] */
static void gather_rows(const int64_t *h, const int64_t *rows, Py_ssize_t n, Py_ssize_t C,
                        int64_t *x) {
    for (Py_ssize_t j = 0; j < n; j++) memcpy(x + j * C, h + rows[j] * C, sizeof(int64_t) * C);
}

/* block_apply(plan, h (Bt, C) int64, conv, ssm, alive (Bt,) uint8, mod or None, Bt, threads)
 * -> rows processed. A block's turn in ExactModel.core, in place: the rows still alive (a MoD
 * block: those of them whose router score r > 0) go through the block, and
 *     h[rows] = clamp(h[rows] + delta (times sigmoid(r) >> GATE in a MoD block), RESID_BITS)
 * (the lines of Block.advance: router, gate and residual besides Block.step). */
static PyObject *py_block_apply(PyObject *self, PyObject *args) {
    PyObject *cap, *oh, *oconv, *ossm, *oalive, *omod;
    Py_ssize_t Bt, T;
    if (!PyArg_ParseTuple(args, "OOOOOOnn", &cap, &oh, &oconv, &ossm, &oalive, &omod, &Bt, &T))
        return NULL;
    const BlockPlan *p = (const BlockPlan *)PyCapsule_GetPointer(cap, "umoec.block_plan");
    if (p == NULL) return NULL;
    const Py_ssize_t C = p->d[BD_C];
    T = T < 1 ? 1 : (T > MAX_THREADS ? MAX_THREADS : T);
    if (Bt < 1) {
        PyErr_SetString(PyExc_ValueError, "block_apply: bad sizes");
        return NULL;
    }
    const Py_ssize_t E = p->d[BD_E], N = p->d[BD_N], K = p->d[BD_K];
    Buf b[5];
    memset(b, 0, sizeof b);
    if (!get(oconv, &b[0], 4, Bt * (K - 1) * (E + 2 * N), 1, 0, "conv") ||
        !get(ossm, &b[1], 4, Bt * N * E, 1, 0, "ssm") || !get(omod, &b[2], 8, 6 * C, 0, 1, "mod") ||
        !get(oh, &b[3], 8, Bt * C, 1, 0, "h") || !get(oalive, &b[4], 1, Bt, 0, 0, "alive")) {
        release(b, 5);
        return NULL;
    }
    if ((b[2].held == 0) == (p->buf[BP_NORM1].held == 0)) {
        release(b, 5);
        PyErr_SetString(PyExc_ValueError, "block_apply: an AdaLN block needs mod, a plain one none");
        return NULL;
    }
    int64_t *h = I64(b[3]);
    const uint8_t *alive = (const uint8_t *)b[4].b.buf;
    const int routed = p->buf[BP_MR_WP].held;
    /* rows (Bt), gate (Bt), x (Bt C), delta (Bt C); the router's norm and product need x8 (Bt
     * C) f32, amax (Bt), tmp (C), xi (Bt C / 2 + 1) i32, acc (Bt) f32, r (Bt) */
    int64_t *ibuf = PyMem_RawMalloc(sizeof(int64_t) * (size_t)(4 * Bt + 2 * Bt * C + C + 2));
    float *fbuf = PyMem_RawMalloc(sizeof(float) * (size_t)(2 * Bt * C + Bt + 4));
    if (ibuf == NULL || fbuf == NULL) {
        PyMem_RawFree(ibuf); PyMem_RawFree(fbuf); release(b, 5);
        return PyErr_NoMemory();
    }
    int64_t *rows = ibuf, *gate = rows + Bt, *x = gate + Bt, *delta = x + Bt * C,
            *amax = delta + Bt * C, *r = amax + Bt, *tmp = r + Bt;
    float *x8 = fbuf, *acc = x8 + Bt * C;
    int32_t *xi = (int32_t *)(acc + Bt);
    Py_ssize_t R = 0, L;
    int ok = 1, nomem = 0;
    Py_BEGIN_ALLOW_THREADS
    L = alive_rows(alive, Bt, rows);
    gather_rows(h, rows, L, C, x);
    if (routed && L > 0) {            /* Block.route_score on the live rows, then r > 0 */
        norm_rows(x, NULL, NULL, NULL, EPS2_RMS, 0, x8, amax, tmp, L, C);
        ok = lin_rows(&p->mod_router, mm8_chosen().kernel, x8, amax, L, 0, NULL, r, xi, acc);
        for (Py_ssize_t j = 0; ok && j < L; j++)
            if (r[j] > 0) {           /* kept in order: x's row j moves to R <= j */
                gate[R] = interp(I64(p->buf[BP_SIG]), r[j]);
                rows[R] = rows[j];
                if (R != j) memcpy(x + R * C, x + j * C, sizeof(int64_t) * C);
                R++;
            }
    } else {
        R = L;
    }
    if (ok && R > 0) {
        ok = block_rows(p, x, (int32_t *)b[0].b.buf, (int32_t *)b[1].b.buf, rows, R, OPT(b[2]),
                        T, delta, &nomem);
    }
    if (ok)
        for (Py_ssize_t j = 0; j < R; j++) {
            int64_t *hr = h + rows[j] * C;
            const int64_t *dr = delta + j * C;
            if (routed)
                for (Py_ssize_t c = 0; c < C; c++)
                    hr[c] = clampb(hr[c] + rshift(dr[c] * gate[j], GATE), RESID_BITS);
            else
                for (Py_ssize_t c = 0; c < C; c++) hr[c] = clampb(hr[c] + dr[c], RESID_BITS);
        }
    Py_END_ALLOW_THREADS
    PyMem_RawFree(ibuf);
    PyMem_RawFree(fbuf);
    release(b, 5);
    if (nomem) return PyErr_NoMemory();
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "block_apply: a product's rows were not int8");
        return NULL;
    }
    return PyLong_FromSsize_t(R);
}

/* -- the cascade's step in one call (cascade.CascadeMixer.step) -------------------------------- */
/* cascade_plan(arrays (CP_COUNT,) tuple, K, hidden) -> capsule: the small mixer's two products
 * (both made by mm8), the log1p table of the features (cap + 1 values) and the sigmoid table */
enum { CP_H_WP, CP_H_M, CP_H_B, CP_O_WP, CP_O_M, CP_O_B, CP_LOG1P, CP_SIG, CP_COUNT };

typedef struct {
    Buf buf[CP_COUNT];
    Py_ssize_t K, F, Hd, cap;
    Lin hidden, out;
} CascadePlan;

static void cascade_plan_free(PyObject *capsule) {
    CascadePlan *p = (CascadePlan *)PyCapsule_GetPointer(capsule, "umoec.cascade_plan");
    if (p != NULL) plan_drop(p, p->buf, CP_COUNT);
}

static PyObject *py_cascade_plan(PyObject *self, PyObject *args) {
    PyObject *arrays;
    Py_ssize_t K, Hd, cap;
    if (!PyArg_ParseTuple(args, "O!nnn", &PyTuple_Type, &arrays, &K, &Hd, &cap)) return NULL;
    if (PyTuple_GET_SIZE(arrays) != CP_COUNT || K < 1 || K > 8 || Hd < 1 || Hd > 1024 ||
        cap < 1 || cap > 32767) {
        PyErr_SetString(PyExc_ValueError, "cascade_plan: bad arrays or sizes");
        return NULL;
    }
    CascadePlan *p = PyMem_Calloc(1, sizeof(CascadePlan));
    if (p == NULL) return PyErr_NoMemory();
    const Py_ssize_t F = 3 * K + K * (K - 1) / 2;      /* has, log1p(run), log1p(cnt), pairs */
    p->K = K, p->F = F, p->Hd = Hd, p->cap = cap;
    struct { Py_ssize_t size, count; int optional; } want[CP_COUNT] = {
        {2, packed(F, Hd), 0}, {8, Hd, 0}, {8, Hd, 1}, {2, packed(Hd, 2 * K), 0}, {8, 2 * K, 0},
        {8, 2 * K, 1}, {8, cap + 1, 0}, {8, TABLE_N, 0}};
    static const char *names[CP_COUNT] = {"hidden", "hidden.m", "hidden.b", "out", "out.m",
                                          "out.b", "log1p", "sig"};
    for (int i = 0; i < CP_COUNT; i++) {
        if (!get(PyTuple_GET_ITEM(arrays, i), &p->buf[i], want[i].size, want[i].count, 0,
                 want[i].optional, names[i])) {
            return plan_drop(p, p->buf, CP_COUNT);
        }
    }
    p->hidden = (Lin){(const int16_t *)p->buf[CP_H_WP].b.buf, F64(p->buf[CP_H_M]),
                      OPT(p->buf[CP_H_B]), F, Hd};
    p->out = (Lin){(const int16_t *)p->buf[CP_O_WP].b.buf, F64(p->buf[CP_O_M]),
                   OPT(p->buf[CP_O_B]), Hd, 2 * K};
    return plan_capsule(p, p->buf, CP_COUNT, "umoec.cascade_plan", cascade_plan_free);
}

/* cascade_step(plan, byte (B,), hist, prev, last, run, cnt, orders, offsets (as cascade_stats),
 *              alone (B, V) int64 out, boost (B, V) int64 out, B, H, NB, V, t, hash_bits)
 * CascadeMixer.step without its confidence test: the statistics (cascade_stats' loop), the
 * features, hidden = silu(features W1), o = hidden W2 (B, 2K), then per row and order k with a
 * prediction: alone[pred_k] += o_k, boost[pred_k] += o_{K+k} (every other entry 0). */
static PyObject *py_cascade_step(PyObject *self, PyObject *args) {
    PyObject *cap, *o[10];
    Py_ssize_t B, H, NB, V, t;
    int bits;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOnnnnni", &cap, &o[0], &o[1], &o[2], &o[3], &o[4],
                          &o[5], &o[6], &o[7], &o[8], &o[9], &B, &H, &NB, &V, &t, &bits))
        return NULL;
    const CascadePlan *p = (const CascadePlan *)PyCapsule_GetPointer(cap, "umoec.cascade_plan");
    if (p == NULL) return NULL;
    const Py_ssize_t K = p->K, F = p->F, Hd = p->Hd;
    if (B < 0 || H < 1 || NB < 1 || V < 256 || t < 0 || bits < 1 || bits > 31) {
        PyErr_SetString(PyExc_ValueError, "cascade_step: bad sizes");
        return NULL;
    }
    Buf b[10];
    memset(b, 0, sizeof b);
    if (!get_stats(o, b, B, H, K, NB) ||
        !get(o[8], &b[8], 8, B * V, 1, 0, "alone") || !get(o[9], &b[9], 8, B * V, 1, 0, "boost")) {
        release(b, 10);
        return NULL;
    }
    if (!stats_ok(I64(b[0]), I64(b[2]), I64(b[6]), B, H, K, NB, t)) {
        release(b, 10);
        PyErr_SetString(PyExc_IndexError, "cascade_step: a byte, order or bucket out of range");
        return NULL;
    }
    const Py_ssize_t W = F > Hd ? F : Hd;
    /* pred, runs, cnts (B K), feats (B W), hid (B Hd), out (B 2K), amax (B) int64; has (B K);
     * x8 (B W), acc (B W) f32, xi (B W / 2 + 1) i32 */
    int64_t *ibuf = PyMem_RawMalloc(sizeof(int64_t) * (size_t)(3 * B * K + B * W + B * Hd +
                                                               2 * B * K + B + 2));
    float *fbuf = PyMem_RawMalloc(sizeof(float) * (size_t)(3 * B * W + 4));
    uint8_t *has = PyMem_RawMalloc((size_t)(B * K + 1));
    if (ibuf == NULL || fbuf == NULL || has == NULL) {
        PyMem_RawFree(ibuf); PyMem_RawFree(fbuf); PyMem_RawFree(has); release(b, 10);
        return PyErr_NoMemory();
    }
    int64_t *pred = ibuf, *runs = pred + B * K, *cnts = runs + B * K, *feats = cnts + B * K,
            *hid = feats + B * W, *out = hid + B * Hd, *amax = out + 2 * B * K;
    float *x8 = fbuf, *acc = x8 + B * W;
    int32_t *xi = (int32_t *)(acc + B * W);
    const int64_t *log1p = I64(p->buf[CP_LOG1P]);
    int ok, range = 1;
    Py_BEGIN_ALLOW_THREADS
    ok = stats_rows(I64(b[0]), I64(b[1]), I64(b[2]), (int16_t *)b[3].b.buf, (int16_t *)b[4].b.buf,
                    (int16_t *)b[5].b.buf, I64(b[6]), I64(b[7]), pred, runs, cnts, has, B, H, K,
                    NB, t, bits, (int64_t)p->cap);
    for (Py_ssize_t r = 0; ok && r < B; r++) {        /* CascadeMixer.features */
        const int64_t *pr = pred + r * K, *ru = runs + r * K, *cn = cnts + r * K;
        const uint8_t *hr = has + r * K;
        int64_t *f = feats + r * F;
        for (Py_ssize_t k = 0; k < K; k++) {
            if (ru[k] < 0 || ru[k] > p->cap || cn[k] < 0 || cn[k] > p->cap || pr[k] >= V) range = 0;
            f[k] = (int64_t)hr[k] << ACT;
            f[K + k] = log1p[ru[k] < 0 ? 0 : (ru[k] > p->cap ? p->cap : ru[k])];
            f[2 * K + k] = log1p[cn[k] < 0 ? 0 : (cn[k] > p->cap ? p->cap : cn[k])];
        }
        Py_ssize_t j = 3 * K;
        for (Py_ssize_t a = 0; a < K; a++)
            for (Py_ssize_t c = a + 1; c < K; c++)
                f[j++] = (int64_t)(hr[a] && hr[c] && pr[a] == pr[c]) << ACT;
    }
    ok = ok && range;
    if (ok && B > 0) {
        const MMKernel kernel = mm8_chosen().kernel;
        quant_block(feats, B, F, x8, amax);
        ok = lin_rows(&p->hidden, kernel, x8, amax, B, 1, I64(p->buf[CP_SIG]), hid, xi, acc);
        if (ok) quant_block(hid, B, Hd, x8, amax);
        ok = ok && lin_rows(&p->out, kernel, x8, amax, B, 0, NULL, out, xi, acc);
    }
    if (ok) {
        int64_t *alone = I64(b[8]), *boost = I64(b[9]);
        memset(alone, 0, sizeof(int64_t) * (size_t)(B * V));
        memset(boost, 0, sizeof(int64_t) * (size_t)(B * V));
        for (Py_ssize_t r = 0; r < B; r++)
            for (Py_ssize_t k = 0; k < K; k++) {
                const int64_t hk = has[r * K + k], v = pred[r * K + k];
                alone[r * V + v] += out[r * 2 * K + k] * hk;
                boost[r * V + v] += out[r * 2 * K + K + k] * hk;
            }
    }
    Py_END_ALLOW_THREADS
    PyMem_RawFree(ibuf);
    PyMem_RawFree(fbuf);
    PyMem_RawFree(has);
    release(b, 10);
    if (!ok) {
        PyErr_SetString(PyExc_IndexError, "cascade_step: a bucket or statistic out of range");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* -- an early exit in one call (ExactModel._exit) ---------------------------------------------- */
/* head_plan(wp, m, b, exp_table, C, V) -> capsule: the unembedding (made by mm8) and the codec's
 * exp table, for exit_apply */
enum { HP_WP, HP_M, HP_B, HP_EXP, HP_COUNT };

typedef struct {
    Buf buf[HP_COUNT];
    Lin unembed;
    Py_ssize_t T;
} HeadPlan;

static void head_plan_free(PyObject *capsule) {
    HeadPlan *p = (HeadPlan *)PyCapsule_GetPointer(capsule, "umoec.head_plan");
    if (p != NULL) plan_drop(p, p->buf, HP_COUNT);
}

static PyObject *py_head_plan(PyObject *self, PyObject *args) {
    PyObject *o[HP_COUNT];
    Py_ssize_t C, V, T;
    if (!PyArg_ParseTuple(args, "OOOOnnn", &o[0], &o[1], &o[2], &o[3], &C, &V, &T)) return NULL;
    if (C < 1 || C > 1024 || V < 1 || V > 65536 || T < 2) {
        PyErr_SetString(PyExc_ValueError, "head_plan: bad sizes");
        return NULL;
    }
    HeadPlan *p = PyMem_Calloc(1, sizeof(HeadPlan));
    if (p == NULL) return PyErr_NoMemory();
    if (!get(o[0], &p->buf[HP_WP], 2, packed(C, V), 0, 0, "unembed") ||
        !get(o[1], &p->buf[HP_M], 8, V, 0, 0, "unembed.m") ||
        !get(o[2], &p->buf[HP_B], 8, V, 0, 1, "unembed.b") ||
        !get(o[3], &p->buf[HP_EXP], 8, T, 0, 0, "exp")) {
        return plan_drop(p, p->buf, HP_COUNT);
    }
    p->unembed = (Lin){(const int16_t *)p->buf[HP_WP].b.buf, F64(p->buf[HP_M]),
                       OPT(p->buf[HP_B]), C, V};
    p->T = T;
    return plan_capsule(p, p->buf, HP_COUNT, "umoec.head_plan", head_plan_free);
}

/* exit_apply(plan, h (B, C) int64, alive (B,) uint8, norm (C,) int64, thr, rows (B,) int64 out,
 *            le (B, V) int64 out, B) -> n: the rows still alive whose exit head (RMSNorm with
 * `norm`, the unembedding) has p1 - p2 >= thr / 2**16 (top_margin, second) leave: rows[:n] and
 * their logits le[:n], alive cleared for them. */
static PyObject *py_exit_apply(PyObject *self, PyObject *args) {
    PyObject *cap, *o[5];
    long long thr;
    Py_ssize_t B;
    if (!PyArg_ParseTuple(args, "OOOOLOOn", &cap, &o[0], &o[1], &o[2], &thr, &o[3], &o[4], &B))
        return NULL;
    const HeadPlan *p = (const HeadPlan *)PyCapsule_GetPointer(cap, "umoec.head_plan");
    if (p == NULL) return NULL;
    const Py_ssize_t C = p->unembed.K, V = p->unembed.N;
    if (B < 0) {
        PyErr_SetString(PyExc_ValueError, "exit_apply: bad sizes");
        return NULL;
    }
    Buf b[5];
    memset(b, 0, sizeof b);
    if (!get(o[0], &b[0], 8, B * C, 0, 0, "h") || !get(o[1], &b[1], 1, B, 1, 0, "alive") ||
        !get(o[2], &b[2], 8, C, 0, 0, "norm") || !get(o[3], &b[3], 8, B, 1, 0, "rows") ||
        !get(o[4], &b[4], 8, B * V, 1, 0, "le")) {
        release(b, 5);
        return NULL;
    }
    const int64_t *h = I64(b[0]), *norm = I64(b[2]), *et = I64(p->buf[HP_EXP]);
    uint8_t *alive = (uint8_t *)b[1].b.buf;
    int64_t *rows = I64(b[3]), *le = I64(b[4]);
    /* live (B), x (B C), amax (B), tmp (C), lg (B V) int64; x8 (B C), xi, acc (B V) f32 */
    int64_t *ibuf = PyMem_RawMalloc(sizeof(int64_t) * (size_t)(2 * B + B * C + C + B * V + 2));
    float *fbuf = PyMem_RawMalloc(sizeof(float) * (size_t)(2 * B * C + B * V + 4));
    if (ibuf == NULL || fbuf == NULL) {
        PyMem_RawFree(ibuf); PyMem_RawFree(fbuf); release(b, 5);
        return PyErr_NoMemory();
    }
    int64_t *live = ibuf, *x = live + B, *amax = x + B * C, *tmp = amax + B, *lg = tmp + C;
    float *x8 = fbuf, *acc = x8 + B * C;
    int32_t *xi = (int32_t *)(acc + B * V);
    Py_ssize_t L, n = 0;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    L = alive_rows(alive, B, live);
    if (L > 0) {
        gather_rows(h, live, L, C, x);
        norm_rows(x, norm, NULL, NULL, EPS2_RMS, 0, x8, amax, tmp, L, C);
        ok = lin_rows(&p->unembed, mm8_chosen().kernel, x8, amax, L, 0, NULL, lg, xi, acc);
        for (Py_ssize_t j = 0; ok && j < L; j++)
            if (margin_row(lg + j * V, V, et, p->T, thr, 1)) {
                memcpy(le + n * V, lg + j * V, sizeof(int64_t) * V);
                rows[n++] = live[j];
                alive[live[j]] = 0;
            }
    }
    Py_END_ALLOW_THREADS
    PyMem_RawFree(ibuf);
    PyMem_RawFree(fbuf);
    release(b, 5);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "exit_apply: a product's rows were not int8");
        return NULL;
    }
    return PyLong_FromSsize_t(n);
}

/* -- the split's handshake (split.py) --------------------------------------------------------- */
/* Two processes hand a step to each other through counters in a shared mapping: a store after
 * the data is written, a load before it is read, both sequentially consistent (so it holds on
 * CPUs with weak memory order too). A process that waits spins a while before it sleeps on its
 * pipe (a vCPU that sleeps takes 0.1-0.4 ms to wake, at every step: docs/compress.md); it says
 * so in a flag first, and the other side sends a pipe message only when it reads that flag
 * after its store (a message and its system calls cost ~0.05 ms a step on each side). The
 * store-then-load on both sides (the flag, then the counter; the counter, then the flag) means
 * at least one of them sees the other's store: no sleeper misses its hand-off. */
static int64_t *seq_at(PyObject *o, Py_ssize_t i, Py_buffer *view) {
    if (PyObject_GetBuffer(o, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (i < 0 || (i + 1) * 8 > view->len || ((uintptr_t)view->buf & 7) != 0) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_IndexError, "seq: index outside the counters");
        return NULL;
    }
    return (int64_t *)view->buf + i;
}

/* seq_publish(counters (n,) int64 shared, i, value, flag) -> whether counters[flag] says the
 * other side sleeps (flag < 0: False, nothing read): counters[i] = value, then the flag read */
static PyObject *py_seq_publish(PyObject *self, PyObject *args) {
    PyObject *o;
    Py_ssize_t i, f;
    long long v;
    if (!PyArg_ParseTuple(args, "OnLn", &o, &i, &v, &f)) return NULL;
    Py_buffer view;
    int64_t *p = seq_at(o, i, &view);
    if (p == NULL) return NULL;
    if (f >= 0 && (f + 1) * 8 > view.len) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_IndexError, "seq: flag outside the counters");
        return NULL;
    }
    __atomic_store_n(p, (int64_t)v, __ATOMIC_SEQ_CST);
    const int sleeps = f >= 0 && __atomic_load_n((int64_t *)view.buf + f, __ATOMIC_SEQ_CST) != 0;
    PyBuffer_Release(&view);
    return PyBool_FromLong(sleeps);
}

/* seq_sleep(counters, flag, i, target) -> True when counters[i] >= target (the flag cleared
 * again), else False with counters[flag] = 1 left: the caller may sleep on its pipe, the
 * other side sends a message after its next store */
static PyObject *py_seq_sleep(PyObject *self, PyObject *args) {
    PyObject *o;
    Py_ssize_t f, i;
    long long target;
    if (!PyArg_ParseTuple(args, "OnnL", &o, &f, &i, &target)) return NULL;
    Py_buffer view;
    int64_t *p = seq_at(o, i, &view);
    if (p == NULL) return NULL;
    if (f < 0 || (f + 1) * 8 > view.len) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_IndexError, "seq: flag outside the counters");
        return NULL;
    }
    int64_t *flag = (int64_t *)view.buf + f;
    __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
    const int reached = __atomic_load_n(p, __ATOMIC_SEQ_CST) >= target;
    if (reached) __atomic_store_n(flag, 0, __ATOMIC_SEQ_CST);
    PyBuffer_Release(&view);
    return PyBool_FromLong(reached);
}

static double seq_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* seq_wait(counters, i, target, seconds) -> True once counters[i] >= target, False when
 * `seconds` passed first (0: one look). Spins without the GIL, with the CPU's pause hint,
 * yielding the core now and then to any other process that wants it. */
static PyObject *py_seq_wait(PyObject *self, PyObject *args) {
    PyObject *o;
    Py_ssize_t i;
    long long target;
    double seconds;
    if (!PyArg_ParseTuple(args, "OnLd", &o, &i, &target, &seconds)) return NULL;
    Py_buffer view;
    int64_t *p = seq_at(o, i, &view);
    if (p == NULL) return NULL;
    int reached = __atomic_load_n(p, __ATOMIC_SEQ_CST) >= target;
    if (!reached && seconds > 0) {
        Py_BEGIN_ALLOW_THREADS
        const double end = seq_now() + seconds;
        for (unsigned n = 1; !reached; n++) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            reached = __atomic_load_n(p, __ATOMIC_SEQ_CST) >= target;
            if (!reached && (n & 255) == 0) {
                if (seq_now() > end) break;
                sched_yield();
            }
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&view);
    return PyBool_FromLong(reached);
}

/* simd(path or None) -> the twins that run: "avx512", "avx2" or "plain". A path names the
 * twins to take (True: the best the CPU has; False: "plain"); a path the CPU lacks is not
 * taken. None only asks. */
#ifdef X86_SIMD
static int simd_best(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") ? SIMD_AVX512
           : __builtin_cpu_supports("avx2") ? SIMD_AVX2 : SIMD_PLAIN;
}
#endif

static PyObject *py_simd(PyObject *self, PyObject *args) {
    static const char *names[] = {"plain", "avx2", "avx512"};
    PyObject *on = Py_None;
    if (!PyArg_ParseTuple(args, "|O", &on)) return NULL;
    int level = -1;
    if (on == Py_True || on == Py_False || on == Py_None) {
        level = 0;
    } else if (PyUnicode_Check(on)) {
        const char *want = PyUnicode_AsUTF8(on);
        for (int i = 0; want && i < 3; i++)
            if (strcmp(want, names[i]) == 0) level = i;
    }
    if (level < 0) {
        PyErr_SetString(PyExc_ValueError, "simd: a path is 'avx512', 'avx2' or 'plain'");
        return NULL;
    }
#ifdef X86_SIMD
    if (on == Py_True) level = simd_best();
    if (on != Py_None && level <= simd_best()) simd_level = level;
    return PyUnicode_FromString(names[simd_level]);
#else
    return PyUnicode_FromString(names[0]);
#endif
}

static PyMethodDef methods[] = {
    {"unary", py_unary, METH_VARARGS, "silu / sigmoid / softplus of int64 values"},
    {"exp_neg", py_exp_neg, METH_VARARGS, "exp(-x) of Q20 values in Q24"},
    {"quant_rows", py_quant_rows, METH_VARARGS, "rows into int8 values and their scales"},
    {"requant", py_requant, METH_VARARGS, "int8 products back into ACT format"},
    {"norm_quant", py_norm_quant, METH_VARARGS, "RMSNorm / AdaLN LayerNorm, then into int8"},
    {"mixer_core", py_mixer_core, METH_VARARGS, "the SSM mixer between its projections"},
    {"moe_route", py_moe_route, METH_VARARGS, "top-k experts, gates and slot ranks"},
    {"moe_pack", py_moe_pack, METH_VARARGS, "rows into the experts' padded batch"},
    {"moe_combine", py_moe_combine, METH_VARARGS, "gated sum of the chosen experts' outputs"},
    {"mm8", py_mm8, METH_VARARGS, "exact products of int8 rows and packed int8 weights"},
    {"mm8_path", py_mm8_path, METH_NOARGS, "the instruction set mm8 uses here"},
    {"top_margin", py_top_margin, METH_VARARGS, "softmax confidence against a threshold"},
    {"linear8", py_linear8, METH_VARARGS, "mm8's products, then requantisation, in one call"},
    {"adapt_learn", py_adapt_learn, METH_VARARGS, "the online adaptation's gradient step"},
    {"adapt_logits", py_adapt_logits, METH_VARARGS, "the adapter's corrected, clamped logits"},
    {"head_plan", py_head_plan, METH_VARARGS, "the unembedding and exp table for exit_apply"},
    {"exit_apply", py_exit_apply, METH_VARARGS, "an early exit in one call"},
    {"cascade_plan", py_cascade_plan, METH_VARARGS, "the cascade mixer's weights for cascade_step"},
    {"cascade_step", py_cascade_step, METH_VARARGS, "the cascade's step in one call"},
    {"cascade_stats", py_cascade_stats, METH_VARARGS, "the cascade's context tables, one step"},
    {"block_plan", py_block_plan, METH_VARARGS, "a block's weights held for block_apply"},
    {"block_apply", py_block_apply, METH_VARARGS, "a block's turn in core, in place"},
    {"simd", py_simd, METH_VARARGS, "which twins of silu and the state update run (avx512, avx2, plain)"},
    {"seq_sleep", py_seq_sleep, METH_VARARGS, "say this side sleeps, unless the counter is there"},
    {"seq_publish", py_seq_publish, METH_VARARGS, "store a shared counter, read a flag"},
    {"seq_wait", py_seq_wait, METH_VARARGS, "spin until a shared counter reaches a value"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernels",
                                    "Compiled loops of the exact coding engine.", -1, methods};

PyMODINIT_FUNC PyInit__kernels(void) {
#ifdef X86_SIMD
    simd_level = simd_best();
#endif
    return PyModule_Create(&module);
}
