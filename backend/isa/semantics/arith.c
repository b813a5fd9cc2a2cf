/*
 * FP32 and FP64 add, sub, mul and div of (P, R, C) tiles in one pass, with the IEEE
 * status of every PE read from the floating-point environment.
 *
 * The reference profile (D5) makes these operations correctly rounded with round to
 * nearest even, a NaN result the canonical quiet NaN, and the status the IEEE flags of
 * the operation (NV for an invalid operation or a signalling operand, DZ, OF, UF when a
 * tiny result is inexact, NX). The machine's own arithmetic is that operation, so one
 * loop per PE computes the results, replaces NaN results with the canonical NaN, and
 * reads the flags the PE's elements raised. What rests on the platform (tininess after
 * rounding, sNaN operands raising invalid, no flush-to-zero) is pinned by the load-time
 * certificate in arith_kernels.py, which compares this kernel with the exact engine.
 *
 * - -ffp-contract=off and no -ffast-math: every operation is the one of the source.
 * - The environment is set for the call (round to nearest even; on x86 no FTZ/DAZ) and the
 *   caller's is restored after, its sticky flags included.
 * - Non-finite results are found with integer tests on the bits (a floating comparison
 *   could raise a flag of its own); only a row that holds one is looked at again, to
 *   replace its NaN results with the canonical NaN.
 *
 * ptoc_arith(d, x, y, z) reads its geometry from the int64 block d:
 *   d[0] op (0 add, 1 sub, 2 mul, 3 div), d[1] 0 for FP32, 1 for FP64,
 *   d[2..4] P, R, C, d[5..7] the element strides of x (PE, row, column),
 *   d[8..10] those of y, d[11..12] those of z (its columns are contiguous),
 *   d[13] the canonical NaN's bits, d[14..18] the status bits NV, DZ, OF, UF, NX.
 * It writes z and returns the status byte of PE p in bits 8p .. 8p+7 (P <= 7) and, in
 * bit 62, whether some result is a NaN or an infinity.
 */
#include <fenv.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define PTOC_HAVE_MXCSR 1
#endif

/* each row function carries clones for newer x86 levels (the loader picks one) */
#ifdef PTOC_CLONES
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

/* one row of C results, and whether one of them is not finite (all exponent bits set) */
#define ROW_LOOP(T, U, EXP, OPERATION, XA, YB)                                             \
    for (ptrdiff_t c = 0; c < n; c++) {                                                    \
        const T a = (XA), b = (YB);                                                        \
        const T v = OPERATION;                                                             \
        U u;                                                                               \
        memcpy(&u, &v, sizeof u);                                                          \
        bad |= (~u & (EXP)) ? 0 : 1;                                                       \
        zr[c] = u;                                                                         \
    }

#define ROW_FUNCTION(NAME, T, U, EXP, MAG, OPERATION)                                      \
    CLONES static int NAME(                                                                \
        const T *xr, ptrdiff_t sx, const T *yr, ptrdiff_t sy, U *zr, ptrdiff_t n, U canon)  \
    {                                                                                      \
        unsigned bad = 0;                                                                  \
        if (sx == 1 && sy == 1) {                                                          \
            ROW_LOOP(T, U, EXP, OPERATION, xr[c], yr[c])                              \
        } else if (sx == 1 && sy == 0) {                                                   \
            const T yv = yr[0];                                                            \
            ROW_LOOP(T, U, EXP, OPERATION, xr[c], yv)                                 \
        } else if (sx == 0 && sy == 1) {                                                   \
            const T xv = xr[0];                                                            \
            ROW_LOOP(T, U, EXP, OPERATION, xv, yr[c])                                 \
        } else {                                                                           \
            ROW_LOOP(T, U, EXP, OPERATION, xr[c * sx], yr[c * sy])                    \
        }                                                                                  \
        if (bad) /* a rare second look: NaN results become the canonical NaN */           \
            for (ptrdiff_t c = 0; c < n; c++)                                              \
                zr[c] = (zr[c] & (MAG)) > (EXP) ? canon : zr[c];                           \
        return bad != 0;                                                                   \
    }

#define ROWS(SUFFIX, T, U, EXP, MAG)                                                       \
    ROW_FUNCTION(add_##SUFFIX, T, U, EXP, MAG, a + b)                                      \
    ROW_FUNCTION(sub_##SUFFIX, T, U, EXP, MAG, a - b)                                      \
    ROW_FUNCTION(mul_##SUFFIX, T, U, EXP, MAG, a * b)                                      \
    ROW_FUNCTION(div_##SUFFIX, T, U, EXP, MAG, a / b)

ROWS(f32, float, uint32_t, 0x7F800000u, 0x7FFFFFFFu)
ROWS(f64, double, uint64_t, 0x7FF0000000000000ull, 0x7FFFFFFFFFFFFFFFull)

/* every PE: its rows, then its flags */
#define RUN_PES(ROW, T, U)                                                                 \
    for (ptrdiff_t p = 0; p < P; p++) {                                                    \
        feclearexcept(FE_ALL_EXCEPT);                                                      \
        for (ptrdiff_t r = 0; r < R; r++)                                                  \
            bad |= ROW((const T *)x + p * d[5] + r * d[6], d[7],                           \
                       (const T *)y + p * d[8] + r * d[9], d[10], (U *)z + p * d[11] + r * d[12], \
                       C, (U)d[13]);                                                       \
        status |= (int64_t)flags_to_status(d + 14) << (8 * p);                            \
    }

static unsigned char flags_to_status(const int64_t *bits)
{
    const int e = fetestexcept(FE_ALL_EXCEPT);
    return (unsigned char)((e & FE_INVALID ? bits[0] : 0) | (e & FE_DIVBYZERO ? bits[1] : 0)
                           | (e & FE_OVERFLOW ? bits[2] : 0) | (e & FE_UNDERFLOW ? bits[3] : 0)
                           | (e & FE_INEXACT ? bits[4] : 0));
}

static int64_t run(const int64_t *d, const void *x, const void *y, void *z)
{
    const ptrdiff_t P = d[2], R = d[3], C = d[4];
    int64_t status = 0;
    int bad = 0;
    switch ((d[1] ? 4 : 0) + (d[0] & 3)) {
    case 0: RUN_PES(add_f32, float, uint32_t) break;
    case 1: RUN_PES(sub_f32, float, uint32_t) break;
    case 2: RUN_PES(mul_f32, float, uint32_t) break;
    case 3: RUN_PES(div_f32, float, uint32_t) break;
    case 4: RUN_PES(add_f64, double, uint64_t) break;
    case 5: RUN_PES(sub_f64, double, uint64_t) break;
    case 6: RUN_PES(mul_f64, double, uint64_t) break;
    default: RUN_PES(div_f64, double, uint64_t) break;
    }
    return status | ((int64_t)(bad != 0) << 62);
}

int64_t ptoc_arith(const int64_t *d, const void *x, const void *y, void *z)
{
    fexcept_t saved_flags;
    const int saved_round = fegetround();
    fegetexceptflag(&saved_flags, FE_ALL_EXCEPT);
#ifdef PTOC_HAVE_MXCSR
    const unsigned int saved_csr = _mm_getcsr();
    _mm_setcsr(saved_csr & ~0x8040u); /* clear FTZ (bit 15) and DAZ (bit 6) */
#endif
    fesetround(FE_TONEAREST);
    const int64_t result = run(d, x, y, z);
#ifdef PTOC_HAVE_MXCSR
    _mm_setcsr(saved_csr);
#endif
    fesetround(saved_round);
    fesetexceptflag(&saved_flags, FE_ALL_EXCEPT);
    return result;
}
