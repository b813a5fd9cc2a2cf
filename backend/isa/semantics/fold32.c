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
 * Returns 1 when some step was inexact (the NX status of D11), else 0; the caller's
 * floating-point exception flags are restored.
 */
#include <fenv.h>
#include <stddef.h>
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define PTOC_HAVE_MXCSR 1
#endif

/* a block of IB rows by JB columns of acc stays in registers across the whole k loop */
#define IB 4
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

/* a: M x K, b: K x N, acc: M x N, all C-contiguous float32 */
int ptoc_fold_f32(const float *a, const float *b, float *acc, ptrdiff_t m, ptrdiff_t n,
                  ptrdiff_t k)
{
    fexcept_t saved_flags;
    const int saved_round = fegetround();
    fegetexceptflag(&saved_flags, FE_ALL_EXCEPT);
#ifdef PTOC_HAVE_MXCSR
    const unsigned int saved_csr = _mm_getcsr();
    _mm_setcsr(saved_csr & ~0x8040u); /* clear FTZ (bit 15) and DAZ (bit 6) */
#endif
    fesetround(FE_TONEAREST);
    feclearexcept(FE_ALL_EXCEPT);
    fold_blocks(a, b, acc, m, n, k);
    const int inexact = fetestexcept(FE_INEXACT) ? 1 : 0;
#ifdef PTOC_HAVE_MXCSR
    _mm_setcsr(saved_csr);
#endif
    fesetround(saved_round);
    fesetexceptflag(&saved_flags, FE_ALL_EXCEPT);
    return inexact;
}
