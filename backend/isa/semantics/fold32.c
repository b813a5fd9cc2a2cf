/*
 * The D11 matrix fold as FP32 additions of exact FP32 products, compiled.
 *
 * acc[i][j] = round(acc[i][j] + a[i][k] * b[k][j]) for k = 0 .. K-1 in increasing order,
 * every element independently. The caller (semantics/matmul.py, _fold_native) passes only
 * folds whose products are exact normal FP32 values, so the product of one float
 * multiplication is the exact product and the addition is the one rounded step of the fold.
 *
 * Exactness rests on three things, each pinned by the load-time self-test in matmul.py:
 * - -ffp-contract=off: no multiply-add is fused (a fused step would skip nothing here, but
 *   the rule keeps the compiled steps those of the source);
 * - no reassociation (no -ffast-math): every element's additions stay in k order, the
 *   loops only vectorise across j, where elements are independent;
 * - the floating-point environment: round to nearest even, no flush-to-zero or
 *   denormals-are-zero (set here for the call and restored after, on x86 through MXCSR).
 *
 * ptoc_fold_f32 returns 1 when some step was inexact (the NX status of D11), else 0;
 * ptoc_fold_half widens FP16/BF16 codes itself, checks the route's conditions and folds.
 * The caller's floating-point environment is restored.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ieee_env.h"

/* a block of IB rows by JB columns of acc stays in registers across the whole k loop
 * (3 x 32 sums are twelve AVX2 registers, leaving four for B's row and A's broadcast:
 * four rows spilled sums to the stack) */
#define IB 3
#define JB 32

static void fold_tail(const float *a, const float *b, float *acc, ptrdiff_t i0, ptrdiff_t i1,
                      ptrdiff_t j0, ptrdiff_t n, ptrdiff_t k)
{
    for (ptrdiff_t i = i0; i < i1; i++)
        for (ptrdiff_t kk = 0; kk < k; kk++) {
            const float av = a[i * k + kk];
            const float *bk = b + kk * n;
            float *row = acc + i * n;
            for (ptrdiff_t j = j0; j < n; j++)
                row[j] = row[j] + av * bk[j];
        }
}

#ifdef PTOC_CLONES
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void fold_blocks(const float *a, const float *b, float *acc, ptrdiff_t m, ptrdiff_t n,
                        ptrdiff_t k)
{
    ptrdiff_t i = 0;
    for (; i + IB <= m; i += IB) {
        ptrdiff_t j0 = 0;
        for (; j0 + JB <= n; j0 += JB) {
            float r[IB][JB];
            for (int ii = 0; ii < IB; ii++)
                for (int j = 0; j < JB; j++)
                    r[ii][j] = acc[(i + ii) * n + j0 + j];
            for (ptrdiff_t kk = 0; kk < k; kk++) {
                const float *bk = b + kk * n + j0;
                for (int ii = 0; ii < IB; ii++) {
                    const float av = a[(i + ii) * k + kk];
                    for (int j = 0; j < JB; j++)
                        r[ii][j] = r[ii][j] + av * bk[j];
                }
            }
            for (int ii = 0; ii < IB; ii++)
                for (int j = 0; j < JB; j++)
                    acc[(i + ii) * n + j0 + j] = r[ii][j];
        }
        fold_tail(a, b, acc, i, i + IB, j0, n, k);
    }
    fold_tail(a, b, acc, i, m, 0, n, k);
}

/*
 * FP16 (fp16 != 0) or BF16 codes widened to their FP32 encodings, every code exactly
 * (NaN payloads shifted into place as numpy's and ml_dtypes' casts do), and the smallest
 * nonzero and the largest magnitude code (extremes[0] is 0xFFFF when all are zeros):
 * the fold's range check reads them. The extremes and the BF16 widening are separate
 * branch-free loops, which the compiler vectorises (one pass that also widened FP16 in
 * place ran element by element).
 */
#ifdef PTOC_CLONES
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void half_extremes(const unsigned short *src, ptrdiff_t count, unsigned short *extremes)
{
    /* the smallest magnitude minus one: zeros wrap to 0xFFFF and never lower it */
    unsigned short low_key = 0xFFFF, hi = 0;
    for (ptrdiff_t i = 0; i < count; i++) {
        const unsigned short mag = (unsigned short)(src[i] & 0x7FFFu);
        const unsigned short key = (unsigned short)(mag - 1u);
        low_key = key < low_key ? key : low_key;
        hi = mag > hi ? mag : hi;
    }
    extremes[0] = low_key == 0xFFFF ? 0xFFFF : (unsigned short)(low_key + 1u);
    extremes[1] = hi;
}

#ifdef PTOC_CLONES
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void widen_bf16(const unsigned short *src, unsigned int *dst, ptrdiff_t count)
{
    for (ptrdiff_t i = 0; i < count; i++)
        dst[i] = (unsigned int)src[i] << 16;
}

#ifdef PTOC_CLONES
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void widen_fp16(const unsigned short *src, unsigned int *dst, ptrdiff_t count)
{
    for (ptrdiff_t i = 0; i < count; i++) {
        const unsigned int h = src[i];
        const unsigned int sign = (h & 0x8000u) << 16;
        const unsigned int exp = (h >> 10) & 0x1Fu, frac = h & 0x3FFu;
        const unsigned int normal = ((exp + 112u) << 23) | (frac << 13);
        const unsigned int special = 0x7F800000u | (frac << 13); /* Inf, NaN payloads */
        /* a zero or a subnormal: frac * 2**-24, exact (and normal) in FP32, so neither
         * the rounding mode nor flush-to-zero can change it and no flag is raised */
        const float tiny = (float)(int)frac * 0x1p-24f;
        unsigned int small;
        memcpy(&small, &tiny, sizeof small);
        /* selected by masks, not branches: the loop vectorises */
        const unsigned int top = 0u - (unsigned int)(exp == 0x1Fu);
        const unsigned int low = 0u - (unsigned int)(exp == 0);
        dst[i] = sign | (special & top) | (small & low) | (normal & ~(top | low));
    }
}

void ptoc_widen16(const unsigned short *src, unsigned int *dst, ptrdiff_t count, int fp16,
                  unsigned short *extremes)
{
    half_extremes(src, count, extremes);
    if (fp16)
        widen_fp16(src, dst, count);
    else
        widen_bf16(src, dst, count);
}

static double code_value(unsigned short mag, int fp16)
{
    unsigned int bits;
    float f;
    ptoc_widen16(&mag, &bits, 1, fp16, (unsigned short[2]){0, 0});
    memcpy(&f, &bits, sizeof f);
    return (double)f;
}

/* whether the extremes (smallest nonzero, largest magnitude code) of A and B keep every
 * product finite, exact and FP32-normal (or zero): the condition of the FP32-addition
 * route (_native_operands in matmul.py); the double products of the extremes are exact */
static int products_in_range(const unsigned short *ea, int a_fp16, const unsigned short *eb,
                             int b_fp16)
{
    const unsigned short a_inf = a_fp16 ? 0x7C00 : 0x7F80, b_inf = b_fp16 ? 0x7C00 : 0x7F80;
    if (ea[1] >= a_inf || eb[1] >= b_inf)
        return 0; /* an Inf or a NaN */
    if (ea[0] > 0x7FFF || eb[0] > 0x7FFF)
        return 1; /* every product is a signed zero */
    const double lo = code_value(ea[0], a_fp16) * code_value(eb[0], b_fp16);
    const double hi = code_value(ea[1], a_fp16) * code_value(eb[1], b_fp16);
    return lo >= 0x1p-126 && hi <= 0x1.fffffep127;
}

static int fold_in_environment(const float *a, const float *b, float *acc, ptrdiff_t m,
                               ptrdiff_t n, ptrdiff_t k);

/*
 * The whole FP16/BF16 route: a (M x K) and b (K x N) as 16-bit codes, acc (M x N) the
 * FP32 start. Returns -1 when the route does not apply (a NaN or Inf operand or start, a
 * product that may leave FP32's normal range: acc is then untouched), -2 when memory runs
 * out, else bit 0 NX and bit 1 OF of the fold.
 */
int ptoc_fold_half(const unsigned short *a, int a_fp16, const unsigned short *b, int b_fp16,
                   float *acc, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k)
{
    for (ptrdiff_t i = 0; i < m * n; i++)
        if (!isfinite(acc[i]))
            return -1;
    float *wa = malloc(sizeof(float) * (size_t)(m * k + k * n + 1));
    if (wa == NULL)
        return -2;
    float *wb = wa + m * k;
    unsigned short ea[2], eb[2];
    ptoc_widen16(a, (unsigned int *)wa, m * k, a_fp16, ea);
    ptoc_widen16(b, (unsigned int *)wb, k * n, b_fp16, eb);
    int status = -1;
    if (products_in_range(ea, a_fp16, eb, b_fp16))
        status = fold_in_environment(wa, wb, acc, m, n, k);
    free(wa);
    return status;
}

/* a: M x K, b: K x N, acc: M x N, all C-contiguous float32 */
int ptoc_fold_f32(const float *a, const float *b, float *acc, ptrdiff_t m, ptrdiff_t n,
                  ptrdiff_t k)
{
    return fold_in_environment(a, b, acc, m, n, k) & 1;
}

static int fold_in_environment(const float *a, const float *b, float *acc, ptrdiff_t m,
                               ptrdiff_t n, ptrdiff_t k)
{
    ptoc_env env;
    ptoc_env_enter(&env);
    fold_blocks(a, b, acc, m, n, k);
    const int status = (fetestexcept(FE_INEXACT) ? 1 : 0) | (fetestexcept(FE_OVERFLOW) ? 2 : 0);
    ptoc_env_leave(&env);
    return status;
}
