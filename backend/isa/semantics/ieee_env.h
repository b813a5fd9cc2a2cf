/*
 * The floating-point environment of ptoc's compiled kernels (included by each kernel).
 *
 * The reference profile rounds to nearest even and keeps subnormals, so a kernel sets
 * exactly that for its call, whatever the caller had (numpy or another library may have
 * set flush-to-zero or another rounding mode), with the sticky exception flags cleared,
 * and gives the caller's environment back afterwards, its flags included.
 */
#ifndef PTOC_IEEE_ENV_H
#define PTOC_IEEE_ENV_H

#include <fenv.h>
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define PTOC_HAVE_MXCSR 1
#endif

typedef struct {
    fexcept_t flags;
    int round;
#ifdef PTOC_HAVE_MXCSR
    unsigned int csr;
#endif
} ptoc_env;

/* save the caller's environment into e and enter the reference profile's */
static inline void ptoc_env_enter(ptoc_env *e)
{
    e->round = fegetround();
    fegetexceptflag(&e->flags, FE_ALL_EXCEPT);
#ifdef PTOC_HAVE_MXCSR
    e->csr = _mm_getcsr();
    _mm_setcsr(e->csr & ~0x8040u); /* clear FTZ (bit 15) and DAZ (bit 6) */
#endif
    fesetround(FE_TONEAREST);
    feclearexcept(FE_ALL_EXCEPT);
}

/* give the caller its environment back */
static inline void ptoc_env_leave(const ptoc_env *e)
{
#ifdef PTOC_HAVE_MXCSR
    _mm_setcsr(e->csr);
#endif
    fesetround(e->round);
    fesetexceptflag(&e->flags, FE_ALL_EXCEPT);
}

#endif
