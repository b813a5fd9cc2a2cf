/*
 * FP32 and FP64 add, sub, mul, div, max and min of (P, R, C) tiles in one pass, with the
 * status of every PE.
 *
 * The reference profile (D5) makes add, sub, mul and div correctly rounded with round to
 * nearest even, a NaN result the canonical quiet NaN, and the status the IEEE flags of
 * the operation (NV for an invalid operation or a signalling operand, DZ, OF, UF when a
 * tiny result is inexact, NX). The machine's own arithmetic is that operation, so one
 * loop per PE computes the results and reads the flags the PE's elements raised; NaN
 * results become the canonical NaN. What rests on the platform (tininess after rounding,
 * sNaN operands raising invalid, no flush-to-zero) is pinned by the load-time
 * certificate in arith_kernels.py, which compares this kernel with the exact engine.
 * TMAX/TMIN (D5) are computed on the encodings alone (see MINMAX below).
 *
 * - -ffp-contract=off and no -ffast-math: every operation is the one of the source.
 * - The environment is set for the call (round to nearest even; on x86 no FTZ/DAZ) and the
 *   caller's is restored after, its sticky flags included.
 * - Non-finite results are found with integer tests on the bits (a floating comparison
 *   could raise a flag of its own); only a row that holds one is looked at again, to
 *   replace its NaN results with the canonical NaN.
 *
 * ptoc_arith(d, x, y, z) reads its geometry from the int64 block d:
 *   d[0] op (0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min), d[1] 0 for FP32, 1 for FP64,
 *   d[2..4] P, R, C, d[5..7] the element strides of x (PE, row, column),
 *   d[8..10] those of y, d[11..12] those of z (its columns are contiguous),
 *   d[13] the canonical NaN's bits, d[14..18] the status bits NV, DZ, OF, UF, NX.
 * It writes z and returns the status byte of PE p in bits 8p .. 8p+7 (P <= 7) and, in
 * bit 62, whether some result is a NaN or an infinity.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ieee_env.h"

/*
 * The exception flags each PE's status is read from. On x86-64 every float and double
 * operation runs in SSE, so its environment is MXCSR alone: the call sets and restores
 * that register and reads and clears the flags there (the x87 unit is never used, and
 * the fenv calls that save and restore it cost far more than a small tile's arithmetic).
 * Elsewhere the portable <fenv.h> calls serve.
 */
#ifdef PTOC_HAVE_MXCSR
#define MX_FLAGS 0x3Fu      /* IE DE ZE OE UE PE */
#define MX_MASKS 0x1F80u    /* every exception masked: flags, never traps */
#define MX_CONTROL 0xE040u  /* FTZ, rounding control, DAZ */
typedef unsigned int ptoc_saved;
#define SAVE_AND_ENTER(saved)                                                              \
    do {                                                                                   \
        (saved) = _mm_getcsr();                                                            \
        _mm_setcsr(((saved) & ~(MX_FLAGS | MX_CONTROL)) | MX_MASKS);                       \
    } while (0)
#define RESTORE(saved) _mm_setcsr(saved)
#define CLEAR_FLAGS() _mm_setcsr(_mm_getcsr() & ~MX_FLAGS)
static int raised_flags(void)
{
    const unsigned f = _mm_getcsr();
    return (f & 0x01u ? FE_INVALID : 0) | (f & 0x04u ? FE_DIVBYZERO : 0)
           | (f & 0x08u ? FE_OVERFLOW : 0) | (f & 0x10u ? FE_UNDERFLOW : 0)
           | (f & 0x20u ? FE_INEXACT : 0);
}
#else
typedef ptoc_env ptoc_saved;
#define SAVE_AND_ENTER(saved) ptoc_env_enter(&(saved))
#define RESTORE(saved) ptoc_env_leave(&(saved))
#define CLEAR_FLAGS() feclearexcept(FE_ALL_EXCEPT)
static int raised_flags(void) { return fetestexcept(FE_ALL_EXCEPT); }
#endif

/* each row function carries clones for newer x86 levels (the loader picks one) */
#ifdef PTOC_CLONES
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

/* a row function's answer: bit 0 a result is not finite, bit 1 a signalling NaN operand
 * of TMAX/TMIN (their status; the IEEE operations' status comes from the flags) */
#define NOT_FINITE 1u
#define SIGNALLING 2u
#define INLINE static inline __attribute__((always_inline))

/* the encodings of each format: sign, exponent field, magnitude, quiet bit */
#define F32_SIGN 0x80000000u
#define F32_EXP 0x7F800000u
#define F32_MAG 0x7FFFFFFFu
#define F32_QUIET 0x00400000u
#define F64_SIGN 0x8000000000000000ull
#define F64_EXP 0x7FF0000000000000ull
#define F64_MAG 0x7FFFFFFFFFFFFFFFull
#define F64_QUIET 0x0008000000000000ull

/*
 * A row of n elements, z = RESULT(x, y), in four addressings of the operands (dense, a
 * broadcast right or left value, general strides); CHECK(x, y, z) adds to the answer.
 * Rows that hold a non-finite result take a second look (FINISH).
 */
#define DEFINE_ROW(NAME, U, RESULT, CHECK, FINISH)                                         \
    CLONES static unsigned NAME(const U *xr, ptrdiff_t sx, const U *yr, ptrdiff_t sy,     \
                                U *zr, ptrdiff_t n, U canon)                               \
    {                                                                                      \
        unsigned answer = 0;                                                               \
        if (sx == 1 && sy == 1) {                                                          \
            for (ptrdiff_t c = 0; c < n; c++) {                                            \
                const U a = xr[c], b = yr[c], r = RESULT(a, b, canon);                     \
                answer |= CHECK(a, b, r);                                                  \
                zr[c] = r;                                                                 \
            }                                                                              \
        } else if (sx == 1 && sy == 0) {                                                   \
            const U b = yr[0];                                                             \
            for (ptrdiff_t c = 0; c < n; c++) {                                            \
                const U a = xr[c], r = RESULT(a, b, canon);                                \
                answer |= CHECK(a, b, r);                                                  \
                zr[c] = r;                                                                 \
            }                                                                              \
        } else if (sx == 0 && sy == 1) {                                                   \
            const U a = xr[0];                                                             \
            for (ptrdiff_t c = 0; c < n; c++) {                                            \
                const U b = yr[c], r = RESULT(a, b, canon);                                \
                answer |= CHECK(a, b, r);                                                  \
                zr[c] = r;                                                                 \
            }                                                                              \
        } else {                                                                           \
            for (ptrdiff_t c = 0; c < n; c++) {                                            \
                const U a = xr[c * sx], b = yr[c * sy], r = RESULT(a, b, canon);           \
                answer |= CHECK(a, b, r);                                                  \
                zr[c] = r;                                                                 \
            }                                                                              \
        }                                                                                  \
        if (answer & NOT_FINITE)                                                           \
            for (ptrdiff_t c = 0; c < n; c++)                                              \
                zr[c] = FINISH(zr[c], canon);                                              \
        return answer;                                                                     \
    }

/* IEEE operations on the values the encodings hold */
#define IEEE_OP(NAME, T, U, OPERATOR)                                                      \
    INLINE U NAME(U ua, U ub, U canon)                                                     \
    {                                                                                      \
        T a, b, v;                                                                         \
        U u;                                                                               \
        (void)canon;                                                                       \
        memcpy(&a, &ua, sizeof a);                                                         \
        memcpy(&b, &ub, sizeof b);                                                         \
        v = a OPERATOR b;                                                                  \
        memcpy(&u, &v, sizeof u);                                                          \
        return u;                                                                          \
    }

#define IEEE_OPS(SUFFIX, T, U)                                                             \
    IEEE_OP(add_##SUFFIX, T, U, +)                                                         \
    IEEE_OP(sub_##SUFFIX, T, U, -)                                                         \
    IEEE_OP(mul_##SUFFIX, T, U, *)                                                         \
    IEEE_OP(div_##SUFFIX, T, U, /)

IEEE_OPS(f32, float, uint32_t)
IEEE_OPS(f64, double, uint64_t)

/*
 * TMAX/TMIN (D5, floatarith._minmax) on the encodings alone, so that no comparison can
 * raise a flag: one NaN selects the other operand, two give the canonical NaN, a
 * signalling NaN operand sets NV; the rest compare by a key that orders the encodings as
 * their values with -0 below +0 (a signed integer: a negative encoding with its
 * magnitude bits inverted), which is the zero rule (max(+0, -0) = +0,
 * min(+0, -0) = -0); equal keys are equal encodings.
 */
#define MINMAX_OPS(SUFFIX, U, S, SIGN, EXP, MAG, QUIET, SHIFT)                             \
    INLINE S key_##SUFFIX(U a) { return (S)(a ^ ((U)(-(a >> SHIFT)) >> 1)); }              \
    INLINE U unkey_##SUFFIX(S k) /* the encoding of a key (the map is an involution) */    \
    {                                                                                      \
        const U a = (U)k;                                                                  \
        return a ^ ((U)(-(a >> SHIFT)) >> 1);                                              \
    }                                                                                      \
    INLINE U pick_##SUFFIX(U a, U b, U canon, int keep_left)                               \
    {                                                                                      \
        const int an = (a & MAG) > EXP, bn = (b & MAG) > EXP;                              \
        return an ? (bn ? canon : b) : (bn ? a : (keep_left ? a : b));                     \
    }                                                                                      \
    INLINE unsigned is_nan_##SUFFIX(U a) { return (a & MAG) > EXP; }                       \
    INLINE U max_##SUFFIX(U a, U b, U canon)                                               \
    {                                                                                      \
        return pick_##SUFFIX(a, b, canon, key_##SUFFIX(a) >= key_##SUFFIX(b));             \
    }                                                                                      \
    INLINE U min_##SUFFIX(U a, U b, U canon)                                               \
    {                                                                                      \
        return pick_##SUFFIX(a, b, canon, key_##SUFFIX(a) <= key_##SUFFIX(b));             \
    }                                                                                      \
    INLINE unsigned nan_check_##SUFFIX(U a, U b, U r)                                      \
    {                                                                                      \
        const int as = (a & MAG) > EXP && !(a & QUIET), bs = (b & MAG) > EXP && !(b & QUIET); \
        return ((as | bs) ? SIGNALLING : 0u) | ((~r & EXP) ? 0u : NOT_FINITE);             \
    }                                                                                      \
    INLINE unsigned finite_check_##SUFFIX(U a, U b, U r)                                   \
    {                                                                                      \
        (void)a;                                                                           \
        (void)b;                                                                           \
        return (~r & EXP) ? 0u : NOT_FINITE;                                               \
    }                                                                                      \
    INLINE U canonical_##SUFFIX(U r, U canon) { return (r & MAG) > EXP ? canon : r; }      \
    INLINE U as_is_##SUFFIX(U r, U canon)                                                  \
    {                                                                                      \
        (void)canon;                                                                       \
        return r;                                                                          \
    }

MINMAX_OPS(f32, uint32_t, int32_t, F32_SIGN, F32_EXP, F32_MAG, F32_QUIET, 31)
MINMAX_OPS(f64, uint64_t, int64_t, F64_SIGN, F64_EXP, F64_MAG, F64_QUIET, 63)

#define ROWS(SUFFIX, U)                                                                    \
    DEFINE_ROW(row_add_##SUFFIX, U, add_##SUFFIX, finite_check_##SUFFIX, canonical_##SUFFIX) \
    DEFINE_ROW(row_sub_##SUFFIX, U, sub_##SUFFIX, finite_check_##SUFFIX, canonical_##SUFFIX) \
    DEFINE_ROW(row_mul_##SUFFIX, U, mul_##SUFFIX, finite_check_##SUFFIX, canonical_##SUFFIX) \
    DEFINE_ROW(row_div_##SUFFIX, U, div_##SUFFIX, finite_check_##SUFFIX, canonical_##SUFFIX) \
    DEFINE_ROW(row_max_##SUFFIX, U, max_##SUFFIX, nan_check_##SUFFIX, as_is_##SUFFIX)      \
    DEFINE_ROW(row_min_##SUFFIX, U, min_##SUFFIX, nan_check_##SUFFIX, as_is_##SUFFIX)

ROWS(f32, uint32_t)
ROWS(f64, uint64_t)

static unsigned char flags_to_status(const int64_t *bits, unsigned answer)
{
    const int e = raised_flags();
    return (unsigned char)((e & FE_INVALID || answer & SIGNALLING ? bits[0] : 0)
                           | (e & FE_DIVBYZERO ? bits[1] : 0) | (e & FE_OVERFLOW ? bits[2] : 0)
                           | (e & FE_UNDERFLOW ? bits[3] : 0) | (e & FE_INEXACT ? bits[4] : 0));
}

/* every PE: its rows (one row of R * C elements when every operand's rows follow each
 * other, as in a whole dense tile), then its status */
#define RUN_PES(ROW, U)                                                                    \
    for (ptrdiff_t p = 0; p < P; p++) {                                                    \
        unsigned answer = 0;                                                               \
        CLEAR_FLAGS();                                                                     \
        for (ptrdiff_t r = 0; r < R; r++)                                                  \
            answer |= ROW((const U *)x + p * d[5] + r * d[6], d[7],                        \
                          (const U *)y + p * d[8] + r * d[9], d[10],                       \
                          (U *)z + p * d[11] + r * d[12], C, (U)d[13]);                    \
        status |= (int64_t)flags_to_status(d + 14, answer) << (8 * p);                     \
        bad |= answer & NOT_FINITE;                                                        \
    }

static int64_t run(const int64_t *d, const void *x, const void *y, void *z)
{
    const int joined = d[7] == 1 && d[10] == 1 && d[6] == d[4] && d[9] == d[4] && d[12] == d[4];
    const ptrdiff_t P = d[2], R = joined ? 1 : d[3], C = joined ? d[3] * d[4] : d[4];
    int64_t status = 0;
    unsigned bad = 0;
    switch ((d[1] ? 8 : 0) + d[0]) {
    case 0: RUN_PES(row_add_f32, uint32_t) break;
    case 1: RUN_PES(row_sub_f32, uint32_t) break;
    case 2: RUN_PES(row_mul_f32, uint32_t) break;
    case 3: RUN_PES(row_div_f32, uint32_t) break;
    case 4: RUN_PES(row_max_f32, uint32_t) break;
    case 5: RUN_PES(row_min_f32, uint32_t) break;
    case 8: RUN_PES(row_add_f64, uint64_t) break;
    case 9: RUN_PES(row_sub_f64, uint64_t) break;
    case 10: RUN_PES(row_mul_f64, uint64_t) break;
    case 11: RUN_PES(row_div_f64, uint64_t) break;
    case 12: RUN_PES(row_max_f64, uint64_t) break;
    case 13: RUN_PES(row_min_f64, uint64_t) break;
    default: return -1; /* not an operation of this kernel */
    }
    return status | ((int64_t)(bad != 0) << 62);
}


/*
 * Left folds of (P, N, K) over K into (P, N), as semantics/reduce.py defines them: a sum
 * starts at +0 and a product at 1, each step rounded once (the machine's operation, its
 * flags the PE's status; NaN results become the canonical NaN at the end, which is what
 * a canonical NaN carried through the later steps gives); max and min start at element 0
 * and step with the TMAX/TMIN rules (NV from a signalling operand).
 *
 * ptoc_fold(d, x, z) reads d[0] op (0 sum, 1 prod, 2 max, 3 min), d[1] 0 for FP32, 1 for
 * FP64, d[2..4] P, N, K, d[5..7] the element strides of x (PE, n, k), d[8..9] those of z
 * (PE, n), d[10] the canonical NaN's bits, d[11..15] the status bits NV, DZ, OF, UF, NX,
 * and returns the status byte of PE p in bits 8p .. 8p+7 (P <= 7). The k loop is the
 * outer one, so the N accumulators are independent (vectorised when x's n stride is 1);
 * for rows (x's k stride 1) FOLD_ROWS of them are folded together with their
 * accumulators in registers, each still one chain in k order (the same steps, so the
 * same results and flags), and the rows left over one by one.
 */
#define FOLD_ROWS 8
#define FOLD_ARITH(SUFFIX, T, U, INIT, STEP)                                               \
    CLONES static unsigned fold_##STEP##_##SUFFIX(const int64_t *d, const T *xp, T *zp)    \
    {                                                                                      \
        const ptrdiff_t N = d[3], K = d[4], sn = d[6], sk = d[7], zn = d[9];               \
        ptrdiff_t done = 0;                                                                \
        if (sk == 1) { /* rows: FOLD_ROWS at once, each its own chain in k order */        \
            const T init = (T)(INIT);                                                      \
            U start;                                                                       \
            memcpy(&start, &init, sizeof start);                                           \
            for (; done + FOLD_ROWS <= N; done += FOLD_ROWS) {                             \
                const T *x0 = xp + done * sn;                                              \
                U acc[FOLD_ROWS];                                                          \
                for (ptrdiff_t j = 0; j < FOLD_ROWS; j++)                                  \
                    acc[j] = start;                                                        \
                for (ptrdiff_t k = 0; k < K; k++)                                          \
                    for (ptrdiff_t j = 0; j < FOLD_ROWS; j++) {                            \
                        U ub;                                                              \
                        memcpy(&ub, &x0[j * sn + k], sizeof ub);                           \
                        acc[j] = STEP##_##SUFFIX(acc[j], ub, 0);                           \
                    }                                                                      \
                for (ptrdiff_t j = 0; j < FOLD_ROWS; j++)                                  \
                    memcpy(&zp[(done + j) * zn], &acc[j], sizeof acc[j]);                  \
            }                                                                              \
            for (; done < N; done++) {                                                     \
                U acc = start;                                                             \
                for (ptrdiff_t k = 0; k < K; k++) {                                        \
                    U ub;                                                                  \
                    memcpy(&ub, &xp[done * sn + k], sizeof ub);                            \
                    acc = STEP##_##SUFFIX(acc, ub, 0);                                     \
                }                                                                          \
                memcpy(&zp[done * zn], &acc, sizeof acc);                                  \
            }                                                                              \
        }                                                                                  \
        for (ptrdiff_t n = done; n < N; n++)                                               \
            zp[n * zn] = (T)(INIT);                                                        \
        for (ptrdiff_t k = 0; done < N && k < K; k++)                                      \
            for (ptrdiff_t n = 0; n < N; n++) {                                            \
                U ua, ub;                                                                  \
                memcpy(&ua, &zp[n * zn], sizeof ua);                                       \
                memcpy(&ub, &xp[n * sn + k * sk], sizeof ub);                              \
                const U r = STEP##_##SUFFIX(ua, ub, 0);                                    \
                memcpy(&zp[n * zn], &r, sizeof r);                                         \
            }                                                                              \
        unsigned answer = 0;                                                               \
        for (ptrdiff_t n = 0; n < N; n++) {                                                \
            U u;                                                                           \
            memcpy(&u, &zp[n * zn], sizeof u);                                             \
            answer |= finite_check_##SUFFIX(0, 0, u);                                      \
            u = canonical_##SUFFIX(u, (U)d[10]);                                           \
            memcpy(&zp[n * zn], &u, sizeof u);                                             \
        }                                                                                  \
        return answer;                                                                     \
    }

/* max/min: a first pass by the keys alone notes whether a NaN is among the operands;
 * only then is the fold done again with the NaN rules and their NV. Without a NaN the
 * fold is the operand of the extreme key (equal keys are equal encodings), so a row's
 * first pass may take its keys in any order. */
#define FOLD_MINMAX(SUFFIX, U, STEP, CMP)                                                  \
    CLONES static unsigned fold_##STEP##_##SUFFIX(const int64_t *d, const U *xp, U *zp)    \
    {                                                                                      \
        const ptrdiff_t N = d[3], K = d[4], sn = d[6], sk = d[7], zn = d[9];               \
        const U canon = (U)d[10];                                                          \
        unsigned nan = 0, answer = 0;                                                      \
        ptrdiff_t done = 0;                                                                \
        if (sk == 1) /* rows: the extreme key of each (a reduction the compiler vectorises) */\
            for (; done < N; done++) {                                                     \
                const U *xr = xp + done * sn;                                              \
                __typeof__(key_##SUFFIX(0)) m = key_##SUFFIX(xr[0]);                       \
                unsigned seen = is_nan_##SUFFIX(xr[0]);                                    \
                for (ptrdiff_t k = 1; k < K; k++) {                                        \
                    const __typeof__(m) b = key_##SUFFIX(xr[k]);                           \
                    seen |= is_nan_##SUFFIX(xr[k]);                                        \
                    m = m CMP b ? m : b;                                                   \
                }                                                                          \
                nan |= seen;                                                               \
                zp[done * zn] = unkey_##SUFFIX(m);                                         \
            }                                                                              \
        for (ptrdiff_t n = done; n < N; n++) {                                             \
            zp[n * zn] = xp[n * sn];                                                       \
            nan |= is_nan_##SUFFIX(xp[n * sn]);                                            \
        }                                                                                  \
        for (ptrdiff_t k = 1; k < K; k++)                                                  \
            for (ptrdiff_t n = done; n < N; n++) {                                         \
                const U a = zp[n * zn], b = xp[n * sn + k * sk];                           \
                nan |= is_nan_##SUFFIX(b);                                                 \
                const U keep = (U)0 - (U)(key_##SUFFIX(a) CMP key_##SUFFIX(b));            \
                zp[n * zn] = (a & keep) | (b & ~keep); /* no branch to mispredict */       \
            }                                                                              \
        if (!nan)                                                                          \
            return 0;                                                                      \
        for (ptrdiff_t n = 0; n < N; n++)                                                  \
            zp[n * zn] = xp[n * sn];                                                       \
        for (ptrdiff_t k = 1; k < K; k++)                                                  \
            for (ptrdiff_t n = 0; n < N; n++) {                                            \
                const U a = zp[n * zn], b = xp[n * sn + k * sk];                           \
                const U r = STEP##_##SUFFIX(a, b, canon);                                  \
                answer |= nan_check_##SUFFIX(a, b, r) & SIGNALLING;                        \
                zp[n * zn] = r;                                                            \
            }                                                                              \
        return answer;                                                                     \
    }

FOLD_ARITH(f32, float, uint32_t, 0.0f, add)
FOLD_ARITH(f32, float, uint32_t, 1.0f, mul)
FOLD_MINMAX(f32, uint32_t, max, >=)
FOLD_MINMAX(f32, uint32_t, min, <=)
FOLD_ARITH(f64, double, uint64_t, 0.0, add)
FOLD_ARITH(f64, double, uint64_t, 1.0, mul)
FOLD_MINMAX(f64, uint64_t, max, >=)
FOLD_MINMAX(f64, uint64_t, min, <=)

#define FOLD_PES(FOLD, T)                                                                  \
    for (ptrdiff_t p = 0; p < P; p++) {                                                    \
        CLEAR_FLAGS();                                                      \
        const unsigned answer = FOLD(d, (const T *)x + p * d[5], (T *)z + p * d[8]);      \
        status |= (int64_t)flags_to_status(d + 11, answer) << (8 * p);                     \
    }

static int64_t fold(const int64_t *d, const void *x, const void *y, void *z)
{
    const ptrdiff_t P = d[2];
    int64_t status = 0;
    switch ((d[1] ? 4 : 0) + d[0]) {
    case 0: FOLD_PES(fold_add_f32, float) break;
    case 1: FOLD_PES(fold_mul_f32, float) break;
    case 2: FOLD_PES(fold_max_f32, uint32_t) break;
    case 3: FOLD_PES(fold_min_f32, uint32_t) break;
    case 4: FOLD_PES(fold_add_f64, double) break;
    case 5: FOLD_PES(fold_mul_f64, double) break;
    case 6: FOLD_PES(fold_max_f64, uint64_t) break;
    case 7: FOLD_PES(fold_min_f64, uint64_t) break;
    default: return -1; /* not an operation of this kernel */
    }
    (void)y;
    return status;
}

typedef int64_t (*job)(const int64_t *, const void *, const void *, void *);

/* a job in the reference profile's environment, the caller's restored after */
static int64_t in_environment(job f, const int64_t *d, const void *x, const void *y, void *z)
{
    ptoc_saved saved;
    SAVE_AND_ENTER(saved);
    const int64_t result = f(d, x, y, z);
    RESTORE(saved);
    return result;
}

int64_t ptoc_arith(const int64_t *d, const void *x, const void *y, void *z)
{
    return in_environment(run, d, x, y, z);
}

int64_t ptoc_fold(const int64_t *d, const void *x, void *z)
{
    return in_environment(fold, d, x, NULL, z);
}

/* OR the status byte of PE p (bits 8p .. 8p+7 of packed) into status[p], P of them */
static int64_t settle(int64_t packed, const int64_t *d, uint8_t *status)
{
    if (status != NULL && packed >= 0)
        for (ptrdiff_t p = 0; p < d[2]; p++)
            status[p] |= (uint8_t)(packed >> (8 * p));
    return packed;
}

/*
 * The same calls with every argument in one int64 block, so that a caller pays for one
 * argument conversion, not four: a[0] the geometry block d, a[1] x, a[2] y, a[3] z (the
 * fold: a[2] z, a[3] unused), a[4] 0 or the address of P status bytes that each PE's
 * status byte is ORed into. The result is the packed answer of ptoc_arith / ptoc_fold.
 */
int64_t ptoc_arith_block(const int64_t *a)
{
    const int64_t *d = (const int64_t *)(intptr_t)a[0];
    const int64_t packed = in_environment(run, d, (const void *)(intptr_t)a[1],
                                          (const void *)(intptr_t)a[2], (void *)(intptr_t)a[3]);
    return settle(packed, d, (uint8_t *)(intptr_t)a[4]);
}

int64_t ptoc_fold_block(const int64_t *a)
{
    const int64_t *d = (const int64_t *)(intptr_t)a[0];
    const int64_t packed = in_environment(fold, d, (const void *)(intptr_t)a[1], NULL,
                                          (void *)(intptr_t)a[2]);
    return settle(packed, d, (uint8_t *)(intptr_t)a[4]);
}
