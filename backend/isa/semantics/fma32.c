/*
 * The D11 matrix fold with a fused step per k, compiled: the route of FP32 operands.
 *
 * acc[i][j] = fmaf(a[i][k], b[k][j], acc[i][j]) for k = 0 .. K-1 in increasing order: the
 * exact product plus the running sum, rounded once to FP32 (round to nearest even), which
 * is the D11 step for any finite FP32 operands (products beyond FP32's range or below its
 * subnormals included, since fmaf never rounds the product). The caller
 * (semantics/matmul.py, _fold_fused) passes finite FP32 values only and certifies the
 * kernel at load against the exact engine, flags included: C99 requires fmaf to be
 * correctly rounded, but the tininess rule behind UF is the hardware's (x86 detects it
 * after rounding, as ptoc's profile does; a machine that detects it before rounding fails
 * the certificate and the exact engine serves).
 *
 * Returns the status of the call: bit 0 NX, bit 1 UF, bit 2 OF, bit 3 NV (never for finite
 * operands; the caller then recomputes exactly). The caller's environment is restored.
 */
#include <math.h>
#include <stddef.h>

#include "ieee_env.h"

#define IB 4
#define JB 32

static void fma_tail(const float *a, const float *b, float *acc, ptrdiff_t i0, ptrdiff_t i1,
                     ptrdiff_t j0, ptrdiff_t n, ptrdiff_t k)
{
    for (ptrdiff_t i = i0; i < i1; i++)
        for (ptrdiff_t kk = 0; kk < k; kk++) {
            const float av = a[i * k + kk];
            const float *bk = b + kk * n;
            float *row = acc + i * n;
            for (ptrdiff_t j = j0; j < n; j++)
                row[j] = fmaf(av, bk[j], row[j]);
        }
}

#ifdef PTOC_CLONES
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
static void fma_blocks(const float *a, const float *b, float *acc, ptrdiff_t m, ptrdiff_t n,
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
                        r[ii][j] = fmaf(av, bk[j], r[ii][j]);
                }
            }
            for (int ii = 0; ii < IB; ii++)
                for (int j = 0; j < JB; j++)
                    acc[(i + ii) * n + j0 + j] = r[ii][j];
        }
        fma_tail(a, b, acc, i, i + IB, j0, n, k);
    }
    fma_tail(a, b, acc, i, m, 0, n, k);
}

/* a: M x K, b: K x N, acc: M x N, all C-contiguous float32 */
int ptoc_fold_fma_f32(const float *a, const float *b, float *acc, ptrdiff_t m, ptrdiff_t n,
                      ptrdiff_t k)
{
    ptoc_env env;
    ptoc_env_enter(&env);
    fma_blocks(a, b, acc, m, n, k);
    const int status = (fetestexcept(FE_INEXACT) ? 1 : 0) | (fetestexcept(FE_UNDERFLOW) ? 2 : 0)
                       | (fetestexcept(FE_OVERFLOW) ? 4 : 0) | (fetestexcept(FE_INVALID) ? 8 : 0);
    ptoc_env_leave(&env);
    return status;
}
