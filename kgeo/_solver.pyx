"""SMO solver for the SVM dual, one-vs-one over class pairs, without libsvm.

For a class pair (s, t) it solves (Zhang, Chen & Lee 2005, Definition 2)

    min_a  1/2 a'Qa - sum(a)   s.t.  0 <= a_k <= C_k,  sum_k y_k a_k = 0,

with ``Q_kl = y_k y_l K(x_k, x_l)``, ``y = +1`` on class s and ``-1`` on
class t, by sequential minimal optimisation: second-order working-set
selection (Fan, Chen & Lin, JMLR 2005), a tiny positive curvature where
``K_ii + K_jj - 2 K_ij <= 0`` (duplicates, and the conditionally positive or
indefinite kernels), shrinking with gradient reconstruction, and the stopping
rule ``max_{I_up} -y G + max_{I_low} y G <= tol``.

Kernel values come from one ``KernelRowCache`` shared by every pair. The
training rows are sorted by class, so the kernel row of a document splits
into one block per class; the cache stores such (row, class) blocks in
float64 (or, when asked to, rounded to float32: half the memory and half the
bytes the SMO's scans read) under a memory budget with least-recently-used
eviction. A pair (s, t) reads blocks s and t of a row; the block of a
document's own class is then reused by every pair its class takes part in.
"""

from cpython.exc cimport PyErr_CheckSignals
from cython.parallel cimport prange, threadid
from libc.float cimport DBL_EPSILON
from libc.math cimport INFINITY, fabs, fma
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

import os
import threading

import numpy as np

from kgeo._kernels cimport (Kernel, PostingIndex, RowSet, kernel_block_part, kernel_self,
                            threads_for)
from kgeo._parallel cimport atomic_load, atomic_store, flag_raise, flag_raised
from kgeo._typedefs cimport float32_t, float64_t, int32_t, int64_t, intp_t

# The row cache's lock. Its critical sections are a few pointer updates, and
# a solver takes it for each row it has not fetched before in its pair (a
# pair holds its rows to its end, half the budget allowing), so with solvers
# in two threads it is still often found taken for a moment. Python's lock
# (a semaphore) then puts the waiter to sleep in the kernel and wakes it
# with a system call: on 20 Newsgroups (linear, two threads, before pairs
# held their rows) that was 57,000 futex calls and 11,000 context switches,
# and a second thread gained 1.3x; spinning, 1.5x. A waiter here spins with
# the CPU's pause hint, and yields its core now and then in case the holder
# has been descheduled. Where GCC's atomic builtins or sched_yield are
# missing, Python's lock is used.
cdef extern from *:
    """
    #if defined(__GNUC__) && (defined(__unix__) || defined(__APPLE__))
    #include <sched.h>
    typedef int kgeo_lock;
    static int kgeo_lock_init(kgeo_lock *lock) { *lock = 0; return 0; }
    static void kgeo_lock_free(kgeo_lock *lock) { (void)lock; }
    static void kgeo_lock_acquire(kgeo_lock *lock) {
        int spins = 0;
        while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE)) {
            while (__atomic_load_n(lock, __ATOMIC_RELAXED)) {
                if (++spins < 256) {
    #if defined(__x86_64__) || defined(__i386__)
                    __builtin_ia32_pause();
    #endif
                } else {
                    sched_yield();
                    spins = 0;
                }
            }
        }
    }
    static void kgeo_lock_release(kgeo_lock *lock) {
        __atomic_store_n(lock, 0, __ATOMIC_RELEASE);
    }
    #else
    #include "pythread.h"
    typedef PyThread_type_lock kgeo_lock;
    static int kgeo_lock_init(kgeo_lock *lock) {
        *lock = PyThread_allocate_lock();
        return *lock == NULL ? -1 : 0;
    }
    static void kgeo_lock_free(kgeo_lock *lock) {
        if (*lock != NULL) PyThread_free_lock(*lock);
    }
    static void kgeo_lock_acquire(kgeo_lock *lock) { PyThread_acquire_lock(*lock, WAIT_LOCK); }
    static void kgeo_lock_release(kgeo_lock *lock) { PyThread_release_lock(*lock); }
    #endif
    """
    ctypedef int RowCacheLock "kgeo_lock"
    int lock_init "kgeo_lock_init"(RowCacheLock* lock) noexcept nogil
    void lock_free "kgeo_lock_free"(RowCacheLock* lock) noexcept nogil
    void lock_acquire "kgeo_lock_acquire"(RowCacheLock* lock) noexcept nogil
    void lock_release "kgeo_lock_release"(RowCacheLock* lock) noexcept nogil


# The board through which a helper thread shares the blocks of a one-pair
# fit's solver (KernelRowCache.compute_shared and help_with_rows): one 64-bit
# word holds the task's generation (odd while open, even once closed) and,
# in its low 16 bits, how many of its parts have been claimed. A part is
# claimed by compare-and-swap against the generation, so a claim can never
# land on a later task. Sequentially consistent throughout: the helper reads
# the task's key between two reads of the word (a sequence lock). Where
# GCC's atomic builtins or sched_yield are missing, no helper runs.
cdef extern from *:
    """
    #if defined(__GNUC__) && (defined(__unix__) || defined(__APPLE__))
    #include <sched.h>
    #include <time.h>
    #define KGEO_ROW_HELPER 1
    /* The next unclaimed part of task gen, or -1 when it has no part left
       or is no longer the board's task. */
    static inline long long kgeo_board_claim(long long *word, long long gen,
                                             long long n_parts) {
        long long old = __atomic_load_n(word, __ATOMIC_SEQ_CST);
        for (;;) {
            if ((old >> 16) != gen || (old & 0xffff) >= n_parts)
                return -1;
            if (__atomic_compare_exchange_n(word, &old, old + 1, 0, __ATOMIC_SEQ_CST,
                                            __ATOMIC_SEQ_CST))
                return old & 0xffff;
        }
    }
    static inline void kgeo_pause(void) {
    #if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
    #endif
    }
    /* An idle helper: gives its core to any other runnable thread (level
       0), or sleeps 100 microseconds (1) or a millisecond (2) at a time. */
    static inline void kgeo_helper_wait(int level) {
        if (level) {
            struct timespec pause = {0, level == 1 ? 100000 : 1000000};
            nanosleep(&pause, NULL);
        } else {
            sched_yield();
        }
    }
    #else
    #define KGEO_ROW_HELPER 0
    static inline long long kgeo_board_claim(long long *word, long long gen,
                                             long long n_parts) {
        if ((*word >> 16) != gen || (*word & 0xffff) >= n_parts) return -1;
        return (*word)++ & 0xffff;
    }
    static inline void kgeo_helper_wait(int level) { (void)level; }
    static inline void kgeo_pause(void) {}
    #endif
    """
    bint ROW_HELPER_AVAILABLE "KGEO_ROW_HELPER"
    long long board_claim "kgeo_board_claim"(long long* word, long long gen,
                                             long long n_parts) noexcept nogil
    void helper_wait "kgeo_helper_wait"(int level) noexcept nogil
    void pause_briefly "kgeo_pause"() noexcept nogil


cdef inline float64_t seconds_between(timespec* start, timespec* end) noexcept nogil:
    return (end.tv_sec - start.tv_sec) + 1e-9 * (end.tv_nsec - start.tv_nsec)


# The three scans of an SMO step (choose i, choose j, update the gradient)
# visit every active variable, about a thousand per pair on text, so they
# cost as much as the kernel rows a linear fit computes. They are written in
# C, in this block, for one reason: with the bound sets kept as additive masks
# (0 inside a set, -inf outside, changed for two variables per step) the
# scans are branch-free reductions and searches that four AVX2 lanes run at
# once; GCC does not vectorise an arg-max or an early-exit search by itself.
# Each scan exists in AVX2 intrinsics and in portable C, and the two that
# cost most (the gradient update and the j objectives) in AVX-512 too, eight
# lanes, where the CPU has it. All copies compute the same values in the
# same roundings (setup.py forbids fused multiply-adds; maxima and minima do
# not depend on order, and searches return the last index), so the
# solution does not depend on the CPU. The vector copies serve the
# unshrunk, contiguous case; a shrunk active set is read through its index
# list by the portable copies.
#
# Conventions: a segment holds the variables of one class (sign = +1 on
# class s, -1 on class t), so that -sign G is a variable's value in I_up's
# maximum and sign G its value in I_low's. Pointers are pre-offset so that
# variable number a of the segment is k = idx[a], or k = a without idx.
cdef extern from *:
    """
    #include <math.h>
    #include <stddef.h>
    #include <stdint.h>

    #if defined(__GNUC__) && defined(__x86_64__)
    #  define KGEO_SMO_AVX2 1
    #  include <immintrin.h>
    #else
    #  define KGEO_SMO_AVX2 0
    #endif
    /* _mm512_reduce_max_pd and friends: GCC 7, clang 4 (Apple's clang 9);
       "avx512vbmi2" in __builtin_cpu_supports: GCC 8, clang 7. */
    #if KGEO_SMO_AVX2 && ((defined(__clang__) && __clang_major__ >= 9) \
                          || (!defined(__clang__) && __GNUC__ >= 8))
    #  define KGEO_SMO_AVX512 1
    #else
    #  define KGEO_SMO_AVX512 0
    #endif

    static const double KGEO_TAU = 1e-12;
    static int kgeo_smo_use_avx2 = 0;
    static int kgeo_smo_use_avx512 = 0;
    static int kgeo_smo_want_avx512 = 1;

    /* Whether the AVX2 copies run: asked for, and the CPU has AVX2; the
       AVX-512 copies run where AVX2 does, the CPU has AVX-512 (F and DQ)
       and runs it at full clock, and they are not turned off. Their gain
       was measured on an AMD Zen 5; AMD's Zen 4 and 5 do not lower a
       core's clock for 512-bit vectors, Intel's cores before Ice Lake do
       (which would slow the kernel rows the same threads compute), Ice
       Lake and later (the ones with VBMI2) far less. Returns the AVX2
       setting in force. */
    static int kgeo_smo_set_avx2(int wanted) {
    #if KGEO_SMO_AVX2
        __builtin_cpu_init();
        kgeo_smo_use_avx2 = wanted && __builtin_cpu_supports("avx2");
    #  if KGEO_SMO_AVX512
        kgeo_smo_use_avx512 = kgeo_smo_use_avx2 && kgeo_smo_want_avx512
            && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")
            && (__builtin_cpu_is("amd") || __builtin_cpu_supports("avx512vbmi2"));
    #  endif
    #else
        kgeo_smo_use_avx2 = 0;
    #endif
        return kgeo_smo_use_avx2;
    }

    /* Let the AVX-512 copies run where they can (the default), or not.
       Returns whether they run now. */
    static int kgeo_smo_set_avx512(int wanted) {
        kgeo_smo_want_avx512 = wanted;
        kgeo_smo_set_avx2(kgeo_smo_use_avx2);
        return kgeo_smo_use_avx512;
    }

    #define KGEO_K(a) (idx ? (ptrdiff_t)idx[a] : (a))

    /* The cache stores its blocks in float64, or in float32 when asked to
       (single). The scans reading kernel values are written once, with
       `single` a parameter, and inlined into one copy per storage where it
       is a constant: the loops never test it. */
    #if defined(__GNUC__)
    #  define KGEO_INLINE static inline __attribute__((always_inline))
    #elif defined(_MSC_VER)
    #  define KGEO_INLINE static __forceinline
    #else
    #  define KGEO_INLINE static inline
    #endif

    KGEO_INLINE double kgeo_k_at(const void *K, ptrdiff_t k, int single) {
        return single ? (double)((const float *)K)[k] : ((const double *)K)[k];
    }

    /* The kernel rows a step reads come from L3 or memory: a pair's rows
       (on 20 Newsgroups ~630 of 9 KB) are far more than L2 holds, and each
       block is an allocation of its own, where the hardware prefetchers stop
       at a page boundary. The scans therefore ask for the row's bytes
       KGEO_PREFETCH_BYTES ahead of the one they read, once per 64-byte line,
       and fetch_row asks for the first KGEO_PREFETCH_BYTES of each block
       as soon as a row is chosen. Hints only: no value changes. */
    #define KGEO_PREFETCH_BYTES 1024
    #if defined(__GNUC__)
    #  define KGEO_PREFETCH(p) __builtin_prefetch((p), 0, 3)
    #else
    #  define KGEO_PREFETCH(p) ((void)0)
    #endif

    /* Ask for the line KGEO_PREFETCH_BYTES past value k of the block K of n
       values, when value k starts a new 64 bytes and that line is inside K
       (scans advance k by 4 or 8). */
    KGEO_INLINE void kgeo_prefetch_ahead(const void *K, ptrdiff_t k, ptrdiff_t n,
                                         int single) {
        ptrdiff_t size = single ? (ptrdiff_t)sizeof(float) : (ptrdiff_t)sizeof(double);
        ptrdiff_t at = k * size + KGEO_PREFETCH_BYTES;
        if (((k * size) & 63) == 0 && at < n * size)
            KGEO_PREFETCH((const char *)K + at);
    }

    /* Ask for the first KGEO_PREFETCH_BYTES of a block of n values. */
    static void kgeo_prefetch_head(const void *K, ptrdiff_t n, int single) {
        ptrdiff_t bytes = n * (single ? (ptrdiff_t)sizeof(float) : (ptrdiff_t)sizeof(double));
        if (bytes > KGEO_PREFETCH_BYTES)
            bytes = KGEO_PREFETCH_BYTES;
        for (ptrdiff_t at = 0; at < bytes; at += 64)
            KGEO_PREFETCH((const char *)K + at);
    }

    /* The searches that follow the scans (the last variable within the tie
       margin of I_up's maximum, then of the smallest j objective) are exact
       but would read the segment again from its end (on 20 Newsgroups,
       0.07 thread-s of an NGD fit by cycle counters, timers included). So
       the scans also leave the maximum (minimum) of each run of
       KGEO_SCAN_BLOCK variables, and a search reads those first, from the
       last, then the one run that holds its answer. Every run after it has
       its extremum on the wrong side of the threshold, so the answer is the
       one a plain search finds. */
    #define KGEO_SCAN_BLOCK 64
    static int kgeo_use_scan_blocks = 1;  /* tests turn the summaries off */

    KGEO_INLINE ptrdiff_t kgeo_min_index(ptrdiff_t a, ptrdiff_t b) { return a < b ? a : b; }

    /* One variable of the gradient update: G_k += sign (ci Ki_k + cj Kj_k),
       and its values in I_up's and I_low's maxima. */
    KGEO_INLINE void kgeo_update_one(double *G, const void *Ki, const void *Kj,
            double ci, double cj, double sign, const double *up_mask,
            const double *low_mask, ptrdiff_t k, int single, double *vu, double *vl) {
        double g = G[k] + sign * (ci * kgeo_k_at(Ki, k, single)
                                  + cj * kgeo_k_at(Kj, k, single));
        double f = sign * g;
        G[k] = g;
        *vu = -f + up_mask[k];
        *vl = f + low_mask[k];
    }

    /* G_k += sign (ci Ki_k + cj Kj_k); up/low become the maxima, over the
       segment and their values on entry, of -sign G + up_mask and
       sign G + low_mask; up_blocks[b] the maximum of -sign G + up_mask
       over the segment's variables b KGEO_SCAN_BLOCK to
       (b + 1) KGEO_SCAN_BLOCK - 1. */
    KGEO_INLINE void kgeo_update_portable_body(double *G, const void *Ki,
            const void *Kj, double ci, double cj, double sign,
            const double *up_mask, const double *low_mask, const int32_t *idx,
            ptrdiff_t n, double *up, double *low, double *up_blocks, int single) {
        double u = *up, w = *low;
        for (ptrdiff_t start = 0; start < n; start += KGEO_SCAN_BLOCK) {
            ptrdiff_t end = kgeo_min_index(start + KGEO_SCAN_BLOCK, n);
            double block = -INFINITY;
            for (ptrdiff_t a = start; a < end; a++) {
                double vu, vl;
                kgeo_update_one(G, Ki, Kj, ci, cj, sign, up_mask, low_mask, KGEO_K(a),
                                single, &vu, &vl);
                block = vu > block ? vu : block;
                w = vl > w ? vl : w;
            }
            up_blocks[start / KGEO_SCAN_BLOCK] = block;
            u = block > u ? block : u;
        }
        *up = u;
        *low = w;
    }

    static void kgeo_update_portable(double *G, const void *Ki, const void *Kj,
            double ci, double cj, double sign, const double *up_mask,
            const double *low_mask, const int32_t *idx, ptrdiff_t n,
            double *up, double *low, double *up_blocks, int single) {
        if (single)
            kgeo_update_portable_body(G, Ki, Kj, ci, cj, sign, up_mask, low_mask,
                                      idx, n, up, low, up_blocks, 1);
        else
            kgeo_update_portable_body(G, Ki, Kj, ci, cj, sign, up_mask, low_mask,
                                      idx, n, up, low, up_blocks, 0);
    }

    /* The j objective of variable k: -(Gmax + sign G_k)^2 / quad_k where k is
       in I_low and Gmax + sign G_k > 0, +inf elsewhere, where quad_k is
       QDi + QD_k - 2 Ki_k (KGEO_TAU where that is not positive). */
    KGEO_INLINE double kgeo_j_objective_one(const double *G, const void *Ki,
            const double *QD, double QDi, double Gmax, double sign,
            const double *low_mask, ptrdiff_t k, int single) {
        double gd = Gmax + (sign * G[k] + low_mask[k]);
        double quad = QDi + QD[k] - 2.0 * kgeo_k_at(Ki, k, single);
        double o;
        quad = quad <= 0.0 ? KGEO_TAU : quad;
        o = -(gd * gd) / quad;
        return gd > 0.0 ? o : INFINITY;
    }

    /* obj[a] = the j objective of variable a of the segment; obj_blocks[b]
       their minimum over variables b KGEO_SCAN_BLOCK to
       (b + 1) KGEO_SCAN_BLOCK - 1. Returns the minimum of best and the obj
       written. */
    KGEO_INLINE double kgeo_j_objectives_portable_body(const double *G,
            const void *Ki, const double *QD, double QDi, double Gmax, double sign,
            const double *low_mask, const int32_t *idx, ptrdiff_t n,
            double *obj, double *obj_blocks, double best, int single) {
        for (ptrdiff_t start = 0; start < n; start += KGEO_SCAN_BLOCK) {
            ptrdiff_t end = kgeo_min_index(start + KGEO_SCAN_BLOCK, n);
            double block = INFINITY;
            for (ptrdiff_t a = start; a < end; a++) {
                double o = kgeo_j_objective_one(G, Ki, QD, QDi, Gmax, sign, low_mask,
                                                KGEO_K(a), single);
                obj[a] = o;
                block = o < block ? o : block;
            }
            obj_blocks[start / KGEO_SCAN_BLOCK] = block;
            best = block < best ? block : best;
        }
        return best;
    }

    static double kgeo_j_objectives_portable(const double *G, const void *Ki,
            const double *QD, double QDi, double Gmax, double sign,
            const double *low_mask, const int32_t *idx, ptrdiff_t n,
            double *obj, double *obj_blocks, double best, int single) {
        if (single)
            return kgeo_j_objectives_portable_body(G, Ki, QD, QDi, Gmax, sign,
                                                   low_mask, idx, n, obj, obj_blocks,
                                                   best, 1);
        return kgeo_j_objectives_portable_body(G, Ki, QD, QDi, Gmax, sign, low_mask,
                                               idx, n, obj, obj_blocks, best, 0);
    }

    /* Last a with -sign G_k + up_mask_k >= floor, or -1. */
    static ptrdiff_t kgeo_last_up_portable(const double *G, double sign,
            const double *up_mask, const int32_t *idx, ptrdiff_t n, double floor) {
        for (ptrdiff_t a = n - 1; a >= 0; a--) {
            ptrdiff_t k = KGEO_K(a);
            if (-(sign * G[k]) + up_mask[k] >= floor)
                return a;
        }
        return -1;
    }

    /* Last a with obj[a] <= ceiling, or -1. */
    static ptrdiff_t kgeo_last_at_most_portable(const double *obj, ptrdiff_t n,
                                                double ceiling) {
        for (ptrdiff_t a = n - 1; a >= 0; a--)
            if (obj[a] <= ceiling)
                return a;
        return -1;
    }

    #if KGEO_SMO_AVX2
    #define KGEO_AVX2 __attribute__((target("avx2")))

    KGEO_AVX2 static inline double kgeo_hmax(__m256d v) {
        __m128d m = _mm_max_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
        m = _mm_max_sd(m, _mm_unpackhi_pd(m, m));
        return _mm_cvtsd_f64(m);
    }

    KGEO_AVX2 static inline double kgeo_hmin(__m256d v) {
        __m128d m = _mm_min_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
        m = _mm_min_sd(m, _mm_unpackhi_pd(m, m));
        return _mm_cvtsd_f64(m);
    }

    /* Four kernel values from K + k, widened to float64 from float32
       storage (exactly). */
    KGEO_AVX2 KGEO_INLINE __m256d kgeo_k4(const void *K, ptrdiff_t k, int single) {
        if (single)
            return _mm256_cvtps_pd(_mm_loadu_ps((const float *)K + k));
        return _mm256_loadu_pd((const double *)K + k);
    }

    KGEO_AVX2 KGEO_INLINE void kgeo_update_avx2_body(double *G, const void *Ki,
            const void *Kj, double ci, double cj, double sign,
            const double *up_mask, const double *low_mask, ptrdiff_t n,
            double *up, double *low, double *up_blocks, int single) {
        const __m256d vci = _mm256_set1_pd(ci), vcj = _mm256_set1_pd(cj);
        const __m256d vsign = _mm256_set1_pd(sign), neg = _mm256_set1_pd(-0.0);
        __m256d vl = _mm256_set1_pd(-INFINITY);
        double u = *up, w = *low;
        for (ptrdiff_t start = 0; start < n; start += KGEO_SCAN_BLOCK) {
            ptrdiff_t end = kgeo_min_index(start + KGEO_SCAN_BLOCK, n), k = start;
            __m256d vu = _mm256_set1_pd(-INFINITY);
            for (; k + 4 <= end; k += 4) {
                kgeo_prefetch_ahead(Kj, k, n, single);  /* Ki: read by the j scan just before */
                __m256d x = _mm256_add_pd(_mm256_mul_pd(vci, kgeo_k4(Ki, k, single)),
                                          _mm256_mul_pd(vcj, kgeo_k4(Kj, k, single)));
                __m256d g = _mm256_add_pd(_mm256_loadu_pd(G + k), _mm256_mul_pd(vsign, x));
                __m256d f = _mm256_mul_pd(vsign, g);
                _mm256_storeu_pd(G + k, g);
                vu = _mm256_max_pd(_mm256_add_pd(_mm256_xor_pd(f, neg),
                                                 _mm256_loadu_pd(up_mask + k)), vu);
                vl = _mm256_max_pd(_mm256_add_pd(f, _mm256_loadu_pd(low_mask + k)), vl);
            }
            double block = kgeo_hmax(vu);
            for (; k < end; k++) {  /* the segment's last 0-3 variables */
                double vk, lk;
                kgeo_update_one(G, Ki, Kj, ci, cj, sign, up_mask, low_mask, k, single,
                                &vk, &lk);
                block = vk > block ? vk : block;
                w = lk > w ? lk : w;
            }
            up_blocks[start / KGEO_SCAN_BLOCK] = block;
            u = block > u ? block : u;
        }
        double wl = kgeo_hmax(vl);
        *up = u;
        *low = wl > w ? wl : w;
    }

    KGEO_AVX2 static void kgeo_update_avx2(double *G, const void *Ki,
            const void *Kj, double ci, double cj, double sign,
            const double *up_mask, const double *low_mask, ptrdiff_t n,
            double *up, double *low, double *up_blocks, int single) {
        if (single)
            kgeo_update_avx2_body(G, Ki, Kj, ci, cj, sign, up_mask, low_mask, n,
                                  up, low, up_blocks, 1);
        else
            kgeo_update_avx2_body(G, Ki, Kj, ci, cj, sign, up_mask, low_mask, n,
                                  up, low, up_blocks, 0);
    }

    KGEO_AVX2 KGEO_INLINE double kgeo_j_objectives_avx2_body(const double *G,
            const void *Ki, const double *QD, double QDi, double Gmax,
            double sign, const double *low_mask, ptrdiff_t n, double *obj,
            double *obj_blocks, double best, int single) {
        const __m256d vsign = _mm256_set1_pd(sign), vGmax = _mm256_set1_pd(Gmax);
        const __m256d vQDi = _mm256_set1_pd(QDi), two = _mm256_set1_pd(2.0);
        const __m256d tau = _mm256_set1_pd(KGEO_TAU), zero = _mm256_setzero_pd();
        const __m256d inf = _mm256_set1_pd(INFINITY), neg = _mm256_set1_pd(-0.0);
        for (ptrdiff_t start = 0; start < n; start += KGEO_SCAN_BLOCK) {
            ptrdiff_t end = kgeo_min_index(start + KGEO_SCAN_BLOCK, n), k = start;
            __m256d vblock = inf;
            for (; k + 4 <= end; k += 4) {
                kgeo_prefetch_ahead(Ki, k, n, single);
                __m256d gd = _mm256_add_pd(vGmax, _mm256_add_pd(
                    _mm256_mul_pd(vsign, _mm256_loadu_pd(G + k)),
                    _mm256_loadu_pd(low_mask + k)));
                __m256d quad = _mm256_sub_pd(_mm256_add_pd(vQDi, _mm256_loadu_pd(QD + k)),
                                             _mm256_mul_pd(two, kgeo_k4(Ki, k, single)));
                quad = _mm256_blendv_pd(quad, tau, _mm256_cmp_pd(quad, zero, _CMP_LE_OQ));
                __m256d o = _mm256_div_pd(_mm256_xor_pd(_mm256_mul_pd(gd, gd), neg), quad);
                o = _mm256_blendv_pd(inf, o, _mm256_cmp_pd(gd, zero, _CMP_GT_OQ));
                _mm256_storeu_pd(obj + k, o);
                vblock = _mm256_min_pd(o, vblock);
            }
            double block = kgeo_hmin(vblock);
            for (; k < end; k++) {  /* the segment's last 0-3 variables */
                double o = kgeo_j_objective_one(G, Ki, QD, QDi, Gmax, sign, low_mask, k,
                                                single);
                obj[k] = o;
                block = o < block ? o : block;
            }
            obj_blocks[start / KGEO_SCAN_BLOCK] = block;
            best = block < best ? block : best;
        }
        return best;
    }

    KGEO_AVX2 static double kgeo_j_objectives_avx2(const double *G,
            const void *Ki, const double *QD, double QDi, double Gmax,
            double sign, const double *low_mask, ptrdiff_t n, double *obj,
            double *obj_blocks, double best, int single) {
        if (single)
            return kgeo_j_objectives_avx2_body(G, Ki, QD, QDi, Gmax, sign, low_mask,
                                               n, obj, obj_blocks, best, 1);
        return kgeo_j_objectives_avx2_body(G, Ki, QD, QDi, Gmax, sign, low_mask, n,
                                           obj, obj_blocks, best, 0);
    }

    /* The last lane set in a 4-bit movemask. */
    #define KGEO_LAST_LANE(hits) (31 - __builtin_clz(hits))

    /* The tail beyond the last full group of four first, then the groups
       from the last. */
    KGEO_AVX2 static ptrdiff_t kgeo_last_up_avx2(const double *G, double sign,
            const double *up_mask, ptrdiff_t n, double floor) {
        const __m256d vsign = _mm256_set1_pd(sign), vfloor = _mm256_set1_pd(floor);
        const __m256d neg = _mm256_set1_pd(-0.0);
        ptrdiff_t k = n & ~(ptrdiff_t)3, rest;
        rest = kgeo_last_up_portable(G + k, sign, up_mask + k, NULL, n - k, floor);
        if (rest >= 0)
            return k + rest;
        while (k > 0) {
            k -= 4;
            __m256d v = _mm256_add_pd(
                _mm256_xor_pd(_mm256_mul_pd(vsign, _mm256_loadu_pd(G + k)), neg),
                _mm256_loadu_pd(up_mask + k));
            int hits = _mm256_movemask_pd(_mm256_cmp_pd(v, vfloor, _CMP_GE_OQ));
            if (hits)
                return k + KGEO_LAST_LANE(hits);
        }
        return -1;
    }

    KGEO_AVX2 static ptrdiff_t kgeo_last_at_most_avx2(const double *obj, ptrdiff_t n,
                                                      double ceiling) {
        const __m256d vceiling = _mm256_set1_pd(ceiling);
        ptrdiff_t k = n & ~(ptrdiff_t)3, rest;
        rest = kgeo_last_at_most_portable(obj + k, n - k, ceiling);
        if (rest >= 0)
            return k + rest;
        while (k > 0) {
            k -= 4;
            int hits = _mm256_movemask_pd(
                _mm256_cmp_pd(_mm256_loadu_pd(obj + k), vceiling, _CMP_LE_OQ));
            if (hits)
                return k + KGEO_LAST_LANE(hits);
        }
        return -1;
    }
    #endif  /* KGEO_SMO_AVX2 */

    /* The update and the j objectives in eight lanes: the same operations,
       in the same order, as the AVX2 copies above (the reductions' order
       aside, which does not change a maximum or a minimum), and the same
       scalar code for a segment's last 0-7 variables. On the Zen 5 this was
       written on, the SMO's steps took 8-10 % less time than with AVX2. The
       avx512f target also enables FMA: like the arccos, these copies rely
       on setup.py's -ffp-contract=off to keep each product and sum rounded
       apart (a build without it gives other bits, which the tests that fit
       with every copy would catch). A copy rather than one source for both
       widths: every intrinsic differs, and the blends take their masks
       differently; a macro template would hide the per-lane arithmetic
       that the same-bits argument is about. */
    #if KGEO_SMO_AVX512
    #define KGEO_AVX512 __attribute__((target("avx2,avx512f,avx512dq")))

    /* Eight kernel values from K + k, widened to float64 from float32
       storage (exactly). */
    KGEO_AVX512 KGEO_INLINE __m512d kgeo_k8(const void *K, ptrdiff_t k, int single) {
        if (single)
            return _mm512_cvtps_pd(_mm256_loadu_ps((const float *)K + k));
        return _mm512_loadu_pd((const double *)K + k);
    }

    KGEO_AVX512 KGEO_INLINE void kgeo_update_avx512_body(double *G, const void *Ki,
            const void *Kj, double ci, double cj, double sign,
            const double *up_mask, const double *low_mask, ptrdiff_t n,
            double *up, double *low, double *up_blocks, int single) {
        const __m512d vci = _mm512_set1_pd(ci), vcj = _mm512_set1_pd(cj);
        const __m512d vsign = _mm512_set1_pd(sign), neg = _mm512_set1_pd(-0.0);
        __m512d vl = _mm512_set1_pd(-INFINITY);
        double u = *up, w = *low;
        for (ptrdiff_t start = 0; start < n; start += KGEO_SCAN_BLOCK) {
            ptrdiff_t end = kgeo_min_index(start + KGEO_SCAN_BLOCK, n), k = start;
            __m512d vu = _mm512_set1_pd(-INFINITY);
            for (; k + 8 <= end; k += 8) {
                kgeo_prefetch_ahead(Kj, k, n, single);  /* Ki: read by the j scan just before */
                __m512d x = _mm512_add_pd(_mm512_mul_pd(vci, kgeo_k8(Ki, k, single)),
                                          _mm512_mul_pd(vcj, kgeo_k8(Kj, k, single)));
                __m512d g = _mm512_add_pd(_mm512_loadu_pd(G + k), _mm512_mul_pd(vsign, x));
                __m512d f = _mm512_mul_pd(vsign, g);
                _mm512_storeu_pd(G + k, g);
                vu = _mm512_max_pd(_mm512_add_pd(_mm512_xor_pd(f, neg),
                                                 _mm512_loadu_pd(up_mask + k)), vu);
                vl = _mm512_max_pd(_mm512_add_pd(f, _mm512_loadu_pd(low_mask + k)), vl);
            }
            double block = _mm512_reduce_max_pd(vu);
            for (; k < end; k++) {  /* the segment's last 0-7 variables */
                double vk, lk;
                kgeo_update_one(G, Ki, Kj, ci, cj, sign, up_mask, low_mask, k, single,
                                &vk, &lk);
                block = vk > block ? vk : block;
                w = lk > w ? lk : w;
            }
            up_blocks[start / KGEO_SCAN_BLOCK] = block;
            u = block > u ? block : u;
        }
        double wl = _mm512_reduce_max_pd(vl);
        *up = u;
        *low = wl > w ? wl : w;
    }

    KGEO_AVX512 static void kgeo_update_avx512(double *G, const void *Ki,
            const void *Kj, double ci, double cj, double sign,
            const double *up_mask, const double *low_mask, ptrdiff_t n,
            double *up, double *low, double *up_blocks, int single) {
        if (single)
            kgeo_update_avx512_body(G, Ki, Kj, ci, cj, sign, up_mask, low_mask, n,
                                    up, low, up_blocks, 1);
        else
            kgeo_update_avx512_body(G, Ki, Kj, ci, cj, sign, up_mask, low_mask, n,
                                    up, low, up_blocks, 0);
    }

    KGEO_AVX512 KGEO_INLINE double kgeo_j_objectives_avx512_body(const double *G,
            const void *Ki, const double *QD, double QDi, double Gmax,
            double sign, const double *low_mask, ptrdiff_t n, double *obj,
            double *obj_blocks, double best, int single) {
        const __m512d vsign = _mm512_set1_pd(sign), vGmax = _mm512_set1_pd(Gmax);
        const __m512d vQDi = _mm512_set1_pd(QDi), two = _mm512_set1_pd(2.0);
        const __m512d tau = _mm512_set1_pd(KGEO_TAU), zero = _mm512_setzero_pd();
        const __m512d inf = _mm512_set1_pd(INFINITY), neg = _mm512_set1_pd(-0.0);
        for (ptrdiff_t start = 0; start < n; start += KGEO_SCAN_BLOCK) {
            ptrdiff_t end = kgeo_min_index(start + KGEO_SCAN_BLOCK, n), k = start;
            __m512d vblock = inf;
            for (; k + 8 <= end; k += 8) {
                kgeo_prefetch_ahead(Ki, k, n, single);
                __m512d gd = _mm512_add_pd(vGmax, _mm512_add_pd(
                    _mm512_mul_pd(vsign, _mm512_loadu_pd(G + k)),
                    _mm512_loadu_pd(low_mask + k)));
                __m512d quad = _mm512_sub_pd(_mm512_add_pd(vQDi, _mm512_loadu_pd(QD + k)),
                                             _mm512_mul_pd(two, kgeo_k8(Ki, k, single)));
                /* mask_blend(m, a, b): b where m is set, a elsewhere */
                quad = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(quad, zero, _CMP_LE_OQ),
                                            quad, tau);
                __m512d o = _mm512_div_pd(_mm512_xor_pd(_mm512_mul_pd(gd, gd), neg), quad);
                o = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(gd, zero, _CMP_GT_OQ), inf, o);
                _mm512_storeu_pd(obj + k, o);
                vblock = _mm512_min_pd(o, vblock);
            }
            double block = _mm512_reduce_min_pd(vblock);
            for (; k < end; k++) {  /* the segment's last 0-7 variables */
                double o = kgeo_j_objective_one(G, Ki, QD, QDi, Gmax, sign, low_mask, k,
                                                single);
                obj[k] = o;
                block = o < block ? o : block;
            }
            obj_blocks[start / KGEO_SCAN_BLOCK] = block;
            best = block < best ? block : best;
        }
        return best;
    }

    KGEO_AVX512 static double kgeo_j_objectives_avx512(const double *G,
            const void *Ki, const double *QD, double QDi, double Gmax,
            double sign, const double *low_mask, ptrdiff_t n, double *obj,
            double *obj_blocks, double best, int single) {
        if (single)
            return kgeo_j_objectives_avx512_body(G, Ki, QD, QDi, Gmax, sign, low_mask,
                                                 n, obj, obj_blocks, best, 1);
        return kgeo_j_objectives_avx512_body(G, Ki, QD, QDi, Gmax, sign, low_mask, n,
                                             obj, obj_blocks, best, 0);
    }
    #endif  /* KGEO_SMO_AVX512 */

    /* The dispatchers: AVX-512, else AVX2, for contiguous segments where the
       CPU has them. */
    static void kgeo_smo_update(double *G, const void *Ki, const void *Kj,
            double ci, double cj, double sign, const double *up_mask,
            const double *low_mask, const int32_t *idx, ptrdiff_t n,
            double *up, double *low, double *up_blocks, int single) {
    #if KGEO_SMO_AVX512
        if (idx == NULL && kgeo_smo_use_avx512) {
            kgeo_update_avx512(G, Ki, Kj, ci, cj, sign, up_mask, low_mask, n, up, low,
                               up_blocks, single);
            return;
        }
    #endif
    #if KGEO_SMO_AVX2
        if (idx == NULL && kgeo_smo_use_avx2) {
            kgeo_update_avx2(G, Ki, Kj, ci, cj, sign, up_mask, low_mask, n, up, low,
                             up_blocks, single);
            return;
        }
    #endif
        kgeo_update_portable(G, Ki, Kj, ci, cj, sign, up_mask, low_mask, idx, n, up,
                             low, up_blocks, single);
    }

    static double kgeo_smo_j_objectives(const double *G, const void *Ki,
            const double *QD, double QDi, double Gmax, double sign,
            const double *low_mask, const int32_t *idx, ptrdiff_t n,
            double *obj, double *obj_blocks, double best, int single) {
    #if KGEO_SMO_AVX512
        if (idx == NULL && kgeo_smo_use_avx512)
            return kgeo_j_objectives_avx512(G, Ki, QD, QDi, Gmax, sign, low_mask, n,
                                            obj, obj_blocks, best, single);
    #endif
    #if KGEO_SMO_AVX2
        if (idx == NULL && kgeo_smo_use_avx2)
            return kgeo_j_objectives_avx2(G, Ki, QD, QDi, Gmax, sign, low_mask, n,
                                          obj, obj_blocks, best, single);
    #endif
        return kgeo_j_objectives_portable(G, Ki, QD, QDi, Gmax, sign, low_mask, idx,
                                          n, obj, obj_blocks, best, single);
    }

    static ptrdiff_t kgeo_last_up_scan(const double *G, double sign,
            const double *up_mask, const int32_t *idx, ptrdiff_t n, double floor) {
    #if KGEO_SMO_AVX2
        if (idx == NULL && kgeo_smo_use_avx2)
            return kgeo_last_up_avx2(G, sign, up_mask, n, floor);
    #endif
        return kgeo_last_up_portable(G, sign, up_mask, idx, n, floor);
    }

    /* The start of the last run of KGEO_SCAN_BLOCK variables among n > 0. */
    KGEO_INLINE ptrdiff_t kgeo_last_run(ptrdiff_t n) {
        return (n - 1) / KGEO_SCAN_BLOCK * KGEO_SCAN_BLOCK;
    }

    /* Last a with -sign G_k + up_mask_k >= floor, or -1; up_blocks, when not
       NULL, are the block maxima the update left for the current G and
       masks. */
    static ptrdiff_t kgeo_smo_last_up(const double *G, double sign,
            const double *up_mask, const int32_t *idx, ptrdiff_t n, double floor,
            const double *up_blocks) {
        if (up_blocks == NULL || !kgeo_use_scan_blocks || n <= 0)
            return kgeo_last_up_scan(G, sign, up_mask, idx, n, floor);
        for (ptrdiff_t start = kgeo_last_run(n); start >= 0; start -= KGEO_SCAN_BLOCK) {
            ptrdiff_t len, a;
            if (!(up_blocks[start / KGEO_SCAN_BLOCK] >= floor))
                continue;
            len = kgeo_min_index(KGEO_SCAN_BLOCK, n - start);
            a = idx ? kgeo_last_up_scan(G, sign, up_mask, idx + start, len, floor)
                    : kgeo_last_up_scan(G + start, sign, up_mask + start, NULL, len,
                                        floor);
            if (a >= 0)
                return start + a;
        }
        return -1;
    }

    static ptrdiff_t kgeo_last_at_most_scan(const double *obj, ptrdiff_t n,
                                            double ceiling) {
    #if KGEO_SMO_AVX2
        if (kgeo_smo_use_avx2)
            return kgeo_last_at_most_avx2(obj, n, ceiling);
    #endif
        return kgeo_last_at_most_portable(obj, n, ceiling);
    }

    /* Last a with obj[a] <= ceiling, or -1, given the block minima that
       the j scan left in obj_blocks. */
    static ptrdiff_t kgeo_smo_last_at_most(const double *obj, ptrdiff_t n,
            double ceiling, const double *obj_blocks) {
        if (!kgeo_use_scan_blocks || n <= 0)
            return kgeo_last_at_most_scan(obj, n, ceiling);
        for (ptrdiff_t start = kgeo_last_run(n); start >= 0; start -= KGEO_SCAN_BLOCK) {
            ptrdiff_t a;
            if (!(obj_blocks[start / KGEO_SCAN_BLOCK] <= ceiling))
                continue;
            a = kgeo_last_at_most_scan(obj + start,
                                       kgeo_min_index(KGEO_SCAN_BLOCK, n - start),
                                       ceiling);
            if (a >= 0)
                return start + a;
        }
        return -1;
    }
    """
    int smo_set_avx2 "kgeo_smo_set_avx2"(int wanted) noexcept nogil
    int smo_set_avx512 "kgeo_smo_set_avx512"(int wanted) noexcept nogil
    void prefetch_head "kgeo_prefetch_head"(const void* K, intp_t n, int single) noexcept nogil
    void smo_update "kgeo_smo_update"(
        float64_t* G, const void* Ki, const void* Kj, float64_t ci,
        float64_t cj, float64_t sign, const float64_t* up_mask,
        const float64_t* low_mask, const int32_t* idx, intp_t n,
        float64_t* up, float64_t* low, float64_t* up_blocks, int single) noexcept nogil
    float64_t smo_j_objectives "kgeo_smo_j_objectives"(
        const float64_t* G, const void* Ki, const float64_t* QD,
        float64_t QDi, float64_t Gmax, float64_t sign, const float64_t* low_mask,
        const int32_t* idx, intp_t n, float64_t* obj, float64_t* obj_blocks,
        float64_t best, int single) noexcept nogil
    intp_t smo_last_up "kgeo_smo_last_up"(
        const float64_t* G, float64_t sign, const float64_t* up_mask,
        const int32_t* idx, intp_t n, float64_t floor,
        const float64_t* up_blocks) noexcept nogil
    intp_t smo_last_at_most "kgeo_smo_last_at_most"(
        const float64_t* obj, intp_t n, float64_t ceiling,
        const float64_t* obj_blocks) noexcept nogil
    intp_t SCAN_BLOCK "KGEO_SCAN_BLOCK"
    int use_scan_blocks "kgeo_use_scan_blocks"


# sweep_cross stores a pair's cross values twice, as the blocks (g, t) of
# class s's rows and as the blocks (h, s) of class t's, filled from the first
# by transposing. Written one value at a time, each value of a block (g, t)
# goes to a different block (h, s): n_t cache lines, more than L1 holds,
# each written eight times over eight rows (6 % of a 20 Newsgroups NGD fit's
# samples). Eight rows at once, in 4 x 4 transposes held in AVX2 registers,
# write each destination line once, whole (3 % of the samples). Data
# movement only: both copies give the same bits.
cdef extern from *:
    """
    /* dst[h][pos + r] = src[r][h] for r < n_src, h < n_dst (float64, or
       float32 where single). */
    static void kgeo_scatter_rows_portable(void *const *src, ptrdiff_t n_src,
            void *const *dst, ptrdiff_t n_dst, ptrdiff_t pos, int single) {
        for (ptrdiff_t h = 0; h < n_dst; h++)
            for (ptrdiff_t r = 0; r < n_src; r++) {
                if (single)
                    ((float *)dst[h])[pos + r] = ((const float *)src[r])[h];
                else
                    ((double *)dst[h])[pos + r] = ((const double *)src[r])[h];
            }
    }

    #if KGEO_SMO_AVX2
    /* The same for eight float64 source rows. */
    KGEO_AVX2 static void kgeo_scatter_rows8_avx2(void *const *src, void *const *dst,
                                                  ptrdiff_t n_dst, ptrdiff_t pos) {
        ptrdiff_t h = 0;
        for (; h + 4 <= n_dst; h += 4) {
            for (int half = 0; half < 8; half += 4) {
                __m256d r0 = _mm256_loadu_pd((const double *)src[half] + h);
                __m256d r1 = _mm256_loadu_pd((const double *)src[half + 1] + h);
                __m256d r2 = _mm256_loadu_pd((const double *)src[half + 2] + h);
                __m256d r3 = _mm256_loadu_pd((const double *)src[half + 3] + h);
                __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
                __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
                _mm256_storeu_pd((double *)dst[h] + pos + half,
                                 _mm256_permute2f128_pd(t0, t2, 0x20));
                _mm256_storeu_pd((double *)dst[h + 1] + pos + half,
                                 _mm256_permute2f128_pd(t1, t3, 0x20));
                _mm256_storeu_pd((double *)dst[h + 2] + pos + half,
                                 _mm256_permute2f128_pd(t0, t2, 0x31));
                _mm256_storeu_pd((double *)dst[h + 3] + pos + half,
                                 _mm256_permute2f128_pd(t1, t3, 0x31));
            }
        }
        for (; h < n_dst; h++)
            for (int r = 0; r < 8; r++)
                ((double *)dst[h])[pos + r] = ((const double *)src[r])[h];
    }
    #endif

    static void kgeo_scatter_rows(void *const *src, ptrdiff_t n_src, void *const *dst,
                                  ptrdiff_t n_dst, ptrdiff_t pos, int single) {
    #if KGEO_SMO_AVX2
        if (n_src == 8 && !single && kgeo_smo_use_avx2) {
            kgeo_scatter_rows8_avx2(src, dst, n_dst, pos);
            return;
        }
    #endif
        kgeo_scatter_rows_portable(src, n_src, dst, n_dst, pos, single);
    }
    """
    void scatter_rows "kgeo_scatter_rows"(void** src, intp_t n_src, void** dst,
                                          intp_t n_dst, intp_t pos, int single) noexcept nogil


# The parallel loops of a fit's set-up (prepare_rows, PostingIndex, the
# cache's slots) leave libgomp's worker threads spinning for new work, under
# its default wait policy, for tens of milliseconds: on a machine whose cores
# the class pairs' threads are about to take, that spin takes one of them
# (13 ms of CPU in the first 30 ms of the pairs, in a perf timeline of a 20
# Newsgroups NGD fit). OpenMP 5.0's omp_pause_resource_all ends the calling
# thread's pool of workers at once; the next parallel loop starts new ones.
cdef extern from *:
    """
    #if defined(_OPENMP) && (_OPENMP >= 201811 || \
        (defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 9))
    #include <omp.h>
    static int kgeo_release_openmp_threads(void) {
        return omp_pause_resource_all(omp_pause_soft) == 0;
    }
    #else
    static int kgeo_release_openmp_threads(void) { return 0; }
    #endif
    """
    int release_openmp_threads "kgeo_release_openmp_threads"() noexcept nogil


def _release_openmp_threads():
    """End this thread's idle OpenMP workers now instead of letting them spin.

    Returns whether the runtime did (False without OpenMP 5.0's
    ``omp_pause_resource_all``).
    """
    return bool(release_openmp_threads())


# A process forked after a parallel loop of kgeo's (any fit, prediction or
# kernel matrix with n_jobs > 1) hung in its own first parallel loop: libgomp
# hands the child a pool of workers that fork did not copy, and waits for
# them forever (multiprocessing's and joblib's "multiprocessing" backends
# fork on Linux). Ending the forking thread's workers first gives the child
# a runtime with no pool, which starts a fresh one.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_release_openmp_threads)


def _hold_ahead_max(intp_t n):
    """Set the largest pair whose cached rows are pinned before its SMO
    starts (0: none); returns the previous size. For tests."""
    global HOLD_AHEAD_MAX
    cdef intp_t before = HOLD_AHEAD_MAX
    HOLD_AHEAD_MAX = n
    return before


def _sweep_slab_max_bytes(intp_t n):
    """Set the largest slab ``sweep_cross`` allocates (pairs beyond it keep
    one malloc per block); returns the previous limit. For tests."""
    global SWEEP_SLAB_MAX_BYTES
    cdef intp_t before = SWEEP_SLAB_MAX_BYTES
    SWEEP_SLAB_MAX_BYTES = n
    return before


def _use_avx2_scans(bint wanted=True):
    """Run the SMO scans (and the sweep's scatter) in AVX2 where the CPU has
    it (the default), or all in portable C (no AVX-512 copies either).

    All copies give the same bits; tests switch to check that. Returns
    whether the AVX2 copies are now in use.
    """
    return bool(smo_set_avx2(wanted))


_use_avx2_scans(True)


def _use_avx512_scans(bint wanted=True):
    """Run the costliest SMO scans in AVX-512 where the AVX2 copies run and
    the CPU has AVX-512 at full clock (AMD's, or Intel's with VBMI2; the
    default), or in AVX2.

    All copies give the same bits; tests switch to check that. Returns
    whether the AVX-512 copies are now in use.
    """
    return bool(smo_set_avx512(wanted))


def _use_scan_blocks(bint wanted=True):
    """Let the searches for i and j start from the scans' block extrema (the
    default), or search every variable from the last.

    Both find the same variables; tests switch to check that. Returns the
    previous setting.
    """
    global use_scan_blocks
    cdef bint before = use_scan_blocks
    use_scan_blocks = wanted
    return before

# Curvature used where K_ii + K_jj - 2 K_ij <= 0 (libsvm's TAU; the C block
# above has its own copy).
cdef float64_t TAU = 1e-12
# Relative margin under which two candidates of a selection count as tied.
# SMO makes exact ties routine (after an unclipped step on (i, j), y_i G_i and
# y_j G_j are equal in exact arithmetic), and a tie left to rounding noise is
# broken differently by K and K + beta: the path, then the solution within
# tol, would depend on the shift that Proposition 3 says changes nothing.
# Breaking near-ties by index makes the path insensitive to rounding.
cdef float64_t TIE = 1e-9
# Relative distance to a bound under which a dual variable is put on it. An
# alpha that the exact step puts on a bound can come out 1e-18 away; left
# there it would be a free variable (and a support vector) in one run and
# not in another.
cdef float64_t SNAP = 1e-14
# A step whose exact result is a bound can also stop short of it by the
# gradient's rounding, which its delta (G_i - G_j) / quad carries: a variable
# then left 1e-14..1e-11 C off a bound is free (a support vector, or one in
# I_up and I_low both) in one run and on the bound in another, and the next
# step may spend itself moving that residue. Seen with shifts (Proposition 3
# says they change nothing but rounding): at C = 1e4 a shift of 100 left an
# alpha of 6.4e-11 where the unshifted run has 0; at C = 100, shift -10, a
# step meant to put two variables on C stopped 1.6e-13 C short. So a variable
# that a step moves toward a bound and leaves within reach of it is put on it,
# its partner moved to keep sum(y alpha); reach is the step's rounding,
# RESIDUE_ULPS ulps of G's terms (1, and max |K| sum(alpha) with max |K| over
# the diagonal and the K_ij of the steps so far) over quad, plus the step
# times as many ulps of quad's terms over quad. A step is only ever
# lengthened the way it went, never turned back, so SMO cannot stall on it;
# where quad is floored to TAU, reach can exceed the box, but such a step is
# clipped to a bound already and its partner cannot follow any further.
# Measured (random problems like the shift fuzz test's, 4,984 of them, each
# fitted with and without a shift): 148 snaps, at 5e-3 of reach (median),
# 0.012 (90 %), 0.22 at most; 16 ulps would leave little margin.
# The limit: reach grows with |K|, so with a shift it is larger, and a
# coefficient that is genuinely that small (1e-13..1e-12 C next to a shift of
# 100) is put on its bound in the shifted run and kept in the other, one
# support vector apart (both solutions within tol).
# A snap lengthens a step past the pair's optimum by at most reach, and so
# opens a gap of up to quad * reach between the two variables the other way;
# reach is therefore also held to SNAP_TOL_SHARE * tol / quad. Without that
# cap, where G's terms are large (weights up to 1e8: boxes of 1.5e12 next to
# 1.5e-4, max |K| sum(alpha) = 3.6e14, reach 0.17 at quad 29), each snap
# opened a gap of 3.4 that the next step closed and its snap reopened: two
# variables on C swapped 0.12 back and forth, and SMO stopped as stalled at
# a gap of 2 where SVC reaches 7e-4 in 26 iterations (fuzzed poly problem).
cdef float64_t RESIDUE_ULPS = 64.0
cdef float64_t SNAP_TOL_SHARE = 0.5
cdef float64_t FLOAT64_EPS = 2.220446049250313e-16
# A tol below float64's resolution of the gradient cannot be met: SMO's
# steps then change nothing (STATUS_STALLED) or, with G's rounding, cycle with
# a gap that no longer falls (1-2 ulps of |G| in the cycles seen: tol=1e-16
# on NGD, NED). G_k sums terms K_kj alpha_j, so its rounding is relative to
# the largest of them, which can dwarf G itself: kernel values of 1e17 (a
# shift of 1e17, or rows moved far from the origin) whose terms cancel leave
# G of order 1 with an error of order 10, and the gap cycled there forever at
# tol=1e-3. The gap counts as stuck when it is within STUCK_GAP of the
# larger of the gradient's magnitude and max_k |K_kk| sum(alpha) (hundreds
# of ulps of either) on all the variables, and its smallest value has not
# fallen for STUCK_STEPS_PER_VARIABLE * l (at least STUCK_STEPS_MIN)
# iterations; any tol that float64 resolves stops the pair well before. The
# pair then ends as stalled only if an exact G confirms it, its gap within
# STUCK_GAP of sum_k |K_mk alpha_k| for the two variables m that set it:
# max |K_kk| counts every row, a far one whose alpha is 0 too, and a slow
# pair can go that long without a new least gap.
cdef float64_t STUCK_GAP = 1e-13
cdef intp_t STUCK_STEPS_PER_VARIABLE = 10
cdef intp_t STUCK_STEPS_MIN = 10000
# When a converged pair's gap is checked on an exact G: see STATUS_UNRESOLVED.
cdef float64_t VERIFY_MARGIN = 1e3
cdef int VERIFY_ROUNDS = 3
# Iterations between two shrinking passes (libsvm: min(l, 1000)).
cdef intp_t SHRINK_EVERY = 1000
# shrinking="auto" waits this many times l iterations before its first pass.
# Shrinking pays where most variables end at a bound after many iterations;
# on text, where most stay free and a pair converges in about l iterations,
# the gradient reconstruction it needs computes kernel blocks the solver would
# otherwise never use (20 Newsgroups, NGD: 114 M kernel values instead of 75 M,
# the fit 1.5x as long). Such pairs end before the first pass.
cdef intp_t AUTO_SHRINK_AFTER = 2

# Shrinking modes (solve_pair's ``shrinking``).
cdef enum:
    SHRINK_OFF = 0
    SHRINK_ON = 1
    SHRINK_AUTO = 2
# Iterations between two checks for Ctrl-C, and the seconds of kernel rows
# computed after which a check comes sooner (see signals_due).
cdef intp_t SIGNAL_CHECK_EVERY = 64
cdef float64_t SIGNAL_CHECK_SECONDS = 0.2
# The largest slab sweep_cross allocates for a pair's cross blocks (glibc
# serves up to 32 MB from its heaps once its mmap threshold has adapted).
cdef intp_t SWEEP_SLAB_MAX_BYTES = 8 << 20
# The slots of a new cache are zeroed in pieces of this many bytes, split
# over the threads that will solve the pairs.
cdef intp_t SLOT_ZEROING_BYTES = 1 << 16
# A pair's cross blocks are swept (KernelRowCache.sweep_cross) only when both
# classes' fit in this fraction of the cache's budget: with a pair in flight
# per thread, the own-class blocks and the rows solvers hold keep the rest.
cdef intp_t SWEEP_BUDGET_SHARE = 8
# A fit of one class pair (two classes) leaves the other cores idle: a helper
# thread then computes one of the two halves of the blocks its solver asks
# for (see KernelRowCache.compute_shared). Blocks shorter than ROW_SHARE_MIN
# are not shared: handing half over costs more than computing it. (Halves,
# not smaller parts: each part walks all of the row's words and searches
# each posting list for its range; on Reuters, 11-16 parts made the blocks
# slower on two threads than on one, 4 parts gained 1.2x, 2 parts 1.5x.)
cdef intp_t ROW_SHARE_MIN = 1024
cdef enum:
    SHARED_PARTS = 2
# An idle helper yields its core for HELPER_SPIN_SECONDS after its last half
# (blocks come one after another while a solver asks for new rows), then
# sleeps between looks at the board: 100 microseconds at a time, and from
# HELPER_NAP_SECONDS on a millisecond at a time (a solver computing its
# blocks alone, see SHARE_WINDOW, posts none for a while).
cdef float64_t HELPER_SPIN_SECONDS = 0.0005
cdef float64_t HELPER_NAP_SECONDS = 0.01
# How long a solver waits for the helper's half once its own is done, as a
# share of the time its own half took (see compute_shared).
cdef float64_t HELPER_WAIT_SHARE = 0.5
# For the tests only (see _leave_halves_to_helper): when positive, a solver
# leaves the last half of each shared block to its helper and waits up to
# this many seconds for it, so that a test sees the helper store halves
# however late the system schedules it (on a busy machine, ten small fits
# could pass with the helper asleep through every block).
cdef float64_t HELPER_TEST_WAIT = 0.0
# Every SHARE_WINDOW shared blocks, a solver checks that its helper stored a
# half of at least a quarter of them. If not (a machine whose cores other work
# keeps busy: a review measured the helper storing 1 % of the halves beside
# one busy process, and the fits 11 % slower for it), it computes the next
# blocks alone, SHARE_BACKOFF_MIN of them, twice as many after each window
# that fails again (up to SHARE_BACKOFF_MAX), then tries again.
cdef int64_t SHARE_WINDOW = 64
cdef int64_t SHARE_BACKOFF_MIN = 256
cdef int64_t SHARE_BACKOFF_MAX = 16384
# The judgement carries over to the process's next two-class fit: the blocks
# a fit still had to compute alone when it ended, which the next one takes
# and counts down (with busy cores, ten one-vs-rest fits each probing their
# helper afresh were 5-7 % slower). Atomics: fits in several threads take
# and give it back; a fit whose helper kept up gives back 0.
cdef long long next_fit_alone = 0


# Whether this build can run a helper thread (help_with_rows).
ROW_HELPER = bool(ROW_HELPER_AVAILABLE)


def _set_row_share_min(intp_t n):
    """Set the shortest block a helper shares, and forget how helpers did in
    earlier fits (see next_fit_alone); returns the previous bound. For the
    tests, which share small blocks."""
    global ROW_SHARE_MIN
    cdef intp_t before = ROW_SHARE_MIN
    ROW_SHARE_MIN = max(n, 2)
    atomic_store(&next_fit_alone, 0)
    return before


def _set_signal_check_every(intp_t n):
    """Set SIGNAL_CHECK_EVERY (steps between looks at the signals); returns
    the previous value. For the tests, which check the looks that rows'
    compute time brings."""
    global SIGNAL_CHECK_EVERY
    cdef intp_t before = SIGNAL_CHECK_EVERY
    SIGNAL_CHECK_EVERY = max(n, 1)
    return before


def _set_share_window(int64_t n):
    """Set SHARE_WINDOW (how many shared blocks a helper is judged on);
    returns the previous value. For the tests."""
    global SHARE_WINDOW
    cdef int64_t before = SHARE_WINDOW
    SHARE_WINDOW = max(n, 1)
    return before


def _leave_halves_to_helper(float64_t seconds):
    """Have each solver leave the last half of every shared block to its
    helper and wait up to ``seconds`` for it (0: the normal race, see
    compute_shared); returns the previous value. For the tests."""
    global HELPER_TEST_WAIT
    if not 0 <= seconds < INFINITY:  # (a helper that never runs would hold a fit for ever)
        raise ValueError(f"seconds must be a finite number >= 0, got {seconds!r}")
    cdef float64_t before = HELPER_TEST_WAIT
    HELPER_TEST_WAIT = seconds
    return before


def _next_fit_alone(n=None):
    """How many blocks the process's next two-class fit computes alone before
    it shares any with its helper; sets it to ``n`` if given (for the tests)."""
    cdef long long before = atomic_load(&next_fit_alone)
    if n is not None:
        atomic_store(&next_fit_alone, n)
    return before


# Return codes of the solver core (and of solve_pair's status).
# A gap below tol proves little when tol is within VERIFY_MARGIN ulps of G's
# terms (1, and max |K| sum(alpha)): the incremental G drifts by ulps of
# them at every step, and the gap SMO computes may dip below tol by chance.
# sum(alpha) at its largest so far: the drift stays when the alphas fall
# (weights of 1e5-1e10: sum(alpha) 3e8 for 10,000 steps, then 1e-8, and the
# pair ended converged, unchecked, at an exact gap of 4.2; a review).
# Such a pair's G is then computed again from its support vectors' rows,
# each product split exactly (fma) and summed with Neumaier's compensation
# (exact_gradient): the pair has converged when that gap is within tol;
# otherwise SMO goes on from the exact G, and after VERIFY_ROUNDS failed
# checks the pair ends STATUS_UNRESOLVED. Rows moved to 3e7 (linear kernel
# values of 7.2e15, where an ulp of an alpha near 1 moves G by 1.6): SMO's
# gap fell below tol=1e-3, where the exact KKT gap over the kernel values it
# used was 2.1. Rows moved to 1e6 (G's terms of 1e14) converge, checked:
# their exact gap is 4.3e-4. A cheaper test, tol against
# one ulp of max |K| max(alpha), warned on fits whose exact gap was within
# tol, and, as max |K| includes a shift, on a shifted problem and not on
# the same one unshifted (Proposition 3).
cdef enum:
    STATUS_CONVERGED = 0
    STATUS_MAX_ITER = 1
    STATUS_STALLED = 2
    STATUS_UNRESOLVED = 3

# The status of a pair of PairSolutions not solved (yet).
NOT_SOLVED = -1
CONVERGED = STATUS_CONVERGED
MAX_ITER_REACHED = STATUS_MAX_ITER
STALLED = STATUS_STALLED
UNRESOLVED = STATUS_UNRESOLVED


# Bytes before the values of a block's own buffer (``new_block``): the rank
# of its capacity; 16 keeps the values on malloc's alignment.
cdef enum:
    BLOCK_HEADER = 16


cdef inline void free_block(void* values) noexcept nogil:
    # Free a buffer of KernelRowCache.new_block (or nothing, for NULL).
    if values != NULL:
        free(<char*> values - BLOCK_HEADER)


cdef struct CacheSlot:
    # Everything a lookup touches about one (row, class) block, side by side:
    # a hit then costs one cache miss here instead of one per array.
    void* values          # the block (float64, or float32 in a single cache), or NULL
    intp_t lru_prev       # doubly linked LRU list over the keys
    intp_t lru_next
    int32_t pins          # solvers currently reading the block
    char seen             # stored at least once (computed or transposed)
    char used             # asked for by a solver at least once
    char in_slab          # values lie in the slab of its pair's sweep (not freed alone)


cdef class KernelRowCache:
    """Kernel values K(x_g, x_j) for j in one class, per training row g.

    Shared by the class pairs, also when they are solved in parallel threads:
    the index is guarded by a lock, blocks are computed outside it, and a
    block in use by a solver (pinned) is never evicted. Blocks leave when
    the budget needs room (least recently used first) or, sooner, when the
    last pair that can use them is solved (``retire_pair``).

    Parameters
    ----------
    kernel : Kernel
    index : PostingIndex
        The training rows with one block per class (rows sorted by class).
    budget_bytes : int
        Memory for cached values; at least the two largest class blocks twice
        over (the two rows of an SMO step must stay cached together).
    single : bool, default=False
        Store the blocks in float32: half the memory, and half the bytes the
        SMO's scans read per step, for kernel values rounded to float32. The
        values are computed in float64 and rounded once, when stored.
    n_threads : int, default=1
        Threads that zero the cache's index of blocks when it is made.

    Attributes
    ----------
    sweep_enabled : bool
        Whether a pair's cross-class blocks may be swept before its SMO
        (``sweep_cross``); True by default. The blocks, hence the models,
        are the same bits either way: tests turn it off to check that.
    retire_enabled : bool
        Whether a solved pair frees the blocks no later pair can use
        (``retire_pair``); True by default. Turned off (before the pairs
        are solved), blocks leave only when the budget needs room and no
        pair's cross blocks are swept ahead, so that with a budget of the
        whole kernel matrix the pairs can be solved again from the cache
        alone: the benchmarks time the SMO without kernel work that way.
        Solved pairs are counted either way, again when solved again.
    """
    cdef Kernel kernel
    cdef PostingIndex index
    cdef RowSet rows
    cdef intp_t n_rows, n_classes, n_keys, largest
    cdef CacheSlot* slots         # key = row * n_classes + class; slots[n_keys] heads the LRU list
    cdef RowCacheLock lock
    cdef bint lock_ready
    # The board of a helper thread (help_with_rows; see compute_shared).
    cdef long long board_word     # generation << 16 | parts claimed
    cdef long long board_key      # the open task's block (read as an atomic)
    cdef void* board_out          # its storage (read under board_lock only)
    cdef long long board_done[SHARED_PARTS]  # halves stored (as atomics; the helper's under board_lock)
    cdef bint board_overflow      # a helper's part beyond float32 (under board_lock)
    cdef bint helper_stop         # a one-way flag: help_with_rows returns
    cdef RowCacheLock board_lock  # guards the helper's stores into board_out
    cdef bint board_lock_ready
    # Whether a helper serves compute_shared (start_helping, stop_helping),
    # and whether one ever did in this fit (only then is the carry given back).
    cdef readonly bint row_helper
    cdef bint row_helper_used
    # The solver's record of its helper (see SHARE_WINDOW): blocks shared in
    # this window and those the helper stored a half of, blocks left to
    # compute alone, and the next such run's length.
    cdef int64_t window_blocks, window_helped, alone_left, alone_next
    cdef readonly int64_t parts_helped  # halves a helper stored (for the tests)
    cdef readonly int64_t blocks_shared  # blocks posted for a helper (for the tests)
    cdef readonly int64_t pinned_walked  # pinned blocks evictions met (for the tests)
    cdef long long helping        # 1 while a thread runs help_with_rows (an atomic)
    cdef readonly bint single     # blocks in float32 rather than float64
    cdef readonly intp_t value_bytes
    cdef readonly intp_t budget   # in values (of value_bytes each)
    cdef readonly intp_t used
    cdef readonly intp_t peak_used
    cdef readonly intp_t held     # values in blocks solvers hold for a whole pair
    cdef intp_t hold_limit        # at most this many (half the budget)
    cdef intp_t* pairs_left       # per class: its one-vs-one pairs not yet retired
    # sweep_cross stores a pair's cross blocks in one allocation, its slab
    # (index s * n_classes + t, s < t), freed when the last of its blocks
    # leaves the cache: one malloc and free per pair instead of n_s + n_t.
    cdef void** slabs
    cdef intp_t* slab_refs        # per slab: its blocks in the cache, + 1 while sweeping
    # A slab whose last block left is kept for the next sweep, up to one per
    # thread, rather than freed: a pair's slab (5.75 MB on 20 Newsgroups),
    # freed and allocated again, can come back from malloc as fresh pages (a
    # new mapping, or heap pages glibc gave back), faulted in once more by
    # the sweep. Spare slabs all have slab_bytes, the largest slab a pair of
    # this cache may need.
    cdef void** spare_slabs
    cdef intp_t n_spare, max_spare, slab_bytes
    # The buffers of blocks that left the cache (evicted for a miss, or
    # dead at a pair's retirement) serve the next blocks instead of being
    # freed. glibc gives each thread its own arena and returns a freed
    # buffer to the arena it came from, while malloc takes from the
    # caller's: blocks freed by one thread and allocated again by another
    # moved memory between the arenas, each of which grew towards its own
    # peak share of the cache (bench_scale at 100k documents: 270 MB beyond
    # the 1,000 MB budget; 16 MB with MALLOC_ARENA_MAX=1). A buffer reused
    # stays in its arena, so the arenas together hold about the budget.
    # A buffer keeps the capacity it was allocated with, one class's block
    # length, in a header before its values (``new_block``), and serves
    # blocks of 8/9 of that length up to all of it (``fits``): resizing it
    # with realloc (which copies what it held to grow it) made NGD fits on
    # 20 Newsgroups with a 20 MB cache 3-7 % slower, and reused whole they
    # take the time malloc and free took. Capacities are ranked among the
    # classes' distinct block lengths; spare buffers wait in one list per
    # rank, linked through their first values, and a miss that no spare
    # fits frees one. The budget counts capacities: of the stored blocks
    # (``stored``; a slab's block, its length), the spare buffers and the
    # blocks being computed outside the lock (``reserved``); a spare is
    # freed before a stored block is evicted.
    cdef void** spare_head        # per rank
    cdef intp_t* length_rank      # per class: the rank of its block length
    cdef intp_t* rank_length      # per rank: the length
    cdef intp_t n_ranks
    cdef readonly int64_t stored, spare_values, n_spare_blocks, reserved, blocks_reused
    # The most values of capacity counted against the budget at once.
    cdef readonly int64_t peak_allocated
    cdef readonly int64_t slab_allocations
    cdef int32_t* row_class       # the class of each row (to find a block's slab)
    cdef readonly int64_t n_computed   # blocks computed (misses)
    cdef readonly int64_t n_requests   # blocks requested
    cdef readonly int64_t n_distinct   # distinct blocks ever computed
    cdef readonly int64_t values_computed
    cdef readonly int64_t values_distinct
    # Values computed by a thread while another computed the same block (two
    # pairs of one class missing its own block at once); the later copy is
    # dropped. Part of values_computed (or of values_transposed).
    cdef readonly int64_t values_raced
    # Values of cross-class blocks filled from the transposed blocks of the
    # other class (``sweep_cross``) rather than computed.
    cdef readonly int64_t values_transposed
    cdef readonly int64_t values_used  # in blocks some solver asked for
    cdef readonly int64_t rows_held_ahead  # by hold_small_pair (for the tests)
    cdef readonly float64_t compute_seconds  # solvers' seconds computing blocks (with a helper's halves)
    # Cross-class values of the retired pairs: all of them (2 n_s n_t per
    # pair), and those in blocks their solver asked for. Their ratio decides
    # whether sweeping a pair's cross blocks pays (``sweep_cross``).
    cdef int64_t cross_values, cross_values_used
    cdef public bint sweep_enabled  # whether sweep_cross may run (tests turn it off)
    cdef public bint retire_enabled  # whether retire_pair frees dead blocks
    cdef bint stop_requested  # a one-way flag (flag_raise, flag_raised)

    def __cinit__(self, Kernel kernel, PostingIndex index, int64_t budget_bytes,
                  bint single=False, int n_threads=1):
        cdef intp_t c, g, page, n_pages, n_bytes
        cdef char* first
        self.single = single
        self.value_bytes = sizeof(float32_t) if single else sizeof(float64_t)
        self.kernel = kernel
        self.index = index
        self.rows = index.rows
        self.n_rows = index.rows.n_rows
        self.n_classes = index.n_blocks
        self.n_keys = self.n_rows * self.n_classes
        self.largest = 0
        for c in range(self.n_classes):
            self.largest = max(self.largest, index.block_start[c + 1] - index.block_start[c])
        self.budget = budget_bytes // self.value_bytes
        # The other half stays for blocks that come and go under the LRU.
        self.hold_limit = self.budget // 2
        self.slots = <CacheSlot*> malloc((self.n_keys + 1) * sizeof(CacheSlot))
        self.pairs_left = <intp_t*> malloc(max(self.n_classes, 1) * sizeof(intp_t))
        self.slabs = <void**> calloc(max(self.n_classes * self.n_classes, 1), sizeof(void*))
        self.slab_refs = <intp_t*> calloc(max(self.n_classes * self.n_classes, 1), sizeof(intp_t))
        self.max_spare = max(1, n_threads)
        self.spare_slabs = <void**> calloc(self.max_spare, sizeof(void*))
        lengths = np.diff(np.asarray(index.block_start))
        distinct = np.unique(lengths)
        ranks = np.searchsorted(distinct, lengths)
        self.n_ranks = distinct.shape[0]
        self.spare_head = <void**> calloc(max(self.n_ranks, 1), sizeof(void*))
        self.length_rank = <intp_t*> malloc(max(self.n_classes, 1) * sizeof(intp_t))
        self.rank_length = <intp_t*> malloc(max(self.n_ranks, 1) * sizeof(intp_t))
        self.row_class = <int32_t*> malloc(max(self.n_rows, 1) * sizeof(int32_t))
        self.lock_ready = lock_init(&self.lock) == 0
        self.board_lock_ready = lock_init(&self.board_lock) == 0
        if (self.slots == NULL or self.pairs_left == NULL or self.slabs == NULL
                or self.slab_refs == NULL or self.spare_slabs == NULL
                or self.spare_head == NULL or self.length_rank == NULL
                or self.rank_length == NULL
                or self.row_class == NULL or not self.lock_ready
                or not self.board_lock_ready):
            # The slots are not zeroed yet: __dealloc__, which runs after a
            # failed __cinit__, must not read their blocks (it freed
            # uninitialised pointers, and glibc aborted the process).
            free(self.slots)
            self.slots = NULL
            raise MemoryError("could not allocate the kernel row cache index")
        for c in range(self.n_classes):
            self.length_rank[c] = ranks[c]
        for c in range(self.n_ranks):
            self.rank_length[c] = distinct[c]
        for c in range(self.n_classes):
            for g in range(index.block_start[c], index.block_start[c + 1]):
                self.row_class[g] = <int32_t> c
        # Zeroed here by writing, in n_threads threads, rather than by calloc:
        # calloc's pages are mapped to the shared zero page by a solver's
        # first lookup, and the first insert into them then faults again and
        # makes the kernel interrupt every other core to flush its TLB (on
        # 20 Newsgroups, 7 MB of slots: 1,500-1,700 such shootdowns per NGD
        # fit, 1.3 % of its samples, under KernelRowCache.insert).
        first = <char*> self.slots
        n_bytes = (self.n_keys + 1) * <intp_t> sizeof(CacheSlot)
        n_pages = (n_bytes + SLOT_ZEROING_BYTES - 1) // SLOT_ZEROING_BYTES
        n_threads = threads_for(n_threads, n_bytes // 8)
        with nogil:
            for page in prange(n_pages, schedule="static", num_threads=n_threads):
                memset(first + page * SLOT_ZEROING_BYTES, 0,
                       min(SLOT_ZEROING_BYTES, n_bytes - page * SLOT_ZEROING_BYTES))
        for c in range(self.n_classes):
            self.pairs_left[c] = self.n_classes - 1
        self.slab_bytes = self.largest_slab_bytes()
        self.sweep_enabled = True
        self.retire_enabled = True
        self.row_helper = False
        self.alone_next = SHARE_BACKOFF_MIN
        self.slots[self.n_keys].lru_prev = self.n_keys
        self.slots[self.n_keys].lru_next = self.n_keys

    def __dealloc__(self):
        cdef intp_t k
        cdef void* spent
        if self.slots != NULL:
            for k in range(self.n_keys):
                if not self.slots[k].in_slab:
                    free_block(self.slots[k].values)
        if self.slabs != NULL:
            for k in range(self.n_classes * self.n_classes):
                free(self.slabs[k])
        for k in range(self.n_spare):
            free(self.spare_slabs[k])
        if self.spare_head != NULL:
            for k in range(self.n_ranks):
                while self.spare_head[k] != NULL:
                    spent = self.spare_head[k]
                    self.spare_head[k] = (<void**> spent)[0]
                    free_block(spent)
        free(self.spare_head)
        free(self.length_rank)
        free(self.rank_length)
        free(self.slots)
        free(self.slabs)
        free(self.slab_refs)
        free(self.spare_slabs)
        free(self.row_class)
        free(self.pairs_left)
        if self.lock_ready:
            lock_free(&self.lock)
        if self.board_lock_ready:
            lock_free(&self.board_lock)

    cdef inline void lru_unlink(self, intp_t key) noexcept nogil:
        cdef CacheSlot* slot = &self.slots[key]
        self.slots[slot.lru_prev].lru_next = slot.lru_next
        self.slots[slot.lru_next].lru_prev = slot.lru_prev

    cdef inline void lru_push_front(self, intp_t key) noexcept nogil:
        cdef intp_t head = self.n_keys
        cdef CacheSlot* slot = &self.slots[key]
        slot.lru_next = self.slots[head].lru_next
        slot.lru_prev = head
        self.slots[slot.lru_next].lru_prev = key
        self.slots[head].lru_next = key

    cdef inline intp_t block_length(self, intp_t c) noexcept nogil:
        return self.index.block_start[c + 1] - self.index.block_start[c]

    cdef inline intp_t slab_of(self, intp_t key) noexcept nogil:
        # The slab index of the cross block key = (row g, class c).
        cdef intp_t c = key % self.n_classes, cg = self.row_class[key // self.n_classes]
        return (cg * self.n_classes + c) if cg < c else (c * self.n_classes + cg)

    cdef void* leave_slot(self, intp_t key) noexcept nogil:
        # Empty the slot of an unlinked block; returns what to free: the
        # block, or its slab when it was the slab's last block, or NULL.
        # Called with the lock held.
        cdef void* values = self.slots[key].values
        cdef intp_t n = self.block_length(key % self.n_classes)
        self.slots[key].values = NULL
        self.used -= n
        if not self.slots[key].in_slab:
            self.stored -= self.capacity(values)
            return values
        self.stored -= n
        self.slots[key].in_slab = 0
        return self.release_slab(self.slab_of(key))

    cdef inline void* release_slab(self, intp_t p) noexcept nogil:
        # Drop one reference to slab p; when that was the last, the slab
        # becomes a spare, or is returned for the caller to free. Called
        # with the lock held.
        cdef void* slab
        self.slab_refs[p] -= 1
        if self.slab_refs[p] > 0:
            return NULL
        slab = self.slabs[p]
        self.slabs[p] = NULL
        return self.keep_spare(slab, self.slab_capacity(p // self.n_classes,
                                                       p % self.n_classes))

    cdef inline intp_t slab_capacity(self, intp_t s, intp_t t) noexcept nogil:
        # The bytes sweep_cross allocates for the slab of pair (s, t).
        return max(2 * self.block_length(s) * self.block_length(t) * self.value_bytes,
                   self.slab_bytes)

    cdef inline void* keep_spare(self, void* slab, intp_t capacity) noexcept nogil:
        # Keep a slab no block lives in for the next sweep; returns NULL, or
        # the slab when it cannot be kept (then the caller frees it). Called
        # with the lock held.
        if capacity != self.slab_bytes or self.n_spare == self.max_spare:
            return slab
        self.spare_slabs[self.n_spare] = slab
        self.n_spare += 1
        return NULL

    cdef intp_t largest_slab_bytes(self) noexcept nogil:
        # The most bytes the slab of a pair sweep_cross may sweep needs
        # (pairs beyond SWEEP_SLAB_MAX_BYTES have none, pairs beyond the
        # budget's share are not swept).
        cdef intp_t s, t, n, largest = 0
        for s in range(self.n_classes):
            for t in range(s + 1, self.n_classes):
                n = 2 * self.block_length(s) * self.block_length(t)
                if (n <= self.budget // SWEEP_BUDGET_SHARE
                        and n * self.value_bytes <= SWEEP_SLAB_MAX_BYTES):
                    largest = max(largest, n * self.value_bytes)
        return largest

    cdef void* new_block(self, intp_t c) noexcept nogil:
        # A buffer for a block of class c (its capacity: c's block length),
        # or NULL. Freed by free_block.
        cdef intp_t rank = self.length_rank[c]
        cdef char* base = <char*> malloc(
            BLOCK_HEADER + max(self.rank_length[rank] * self.value_bytes, <intp_t> sizeof(void*)))
        if base == NULL:
            return NULL
        (<intp_t*> base)[0] = rank
        return base + BLOCK_HEADER

    cdef inline intp_t capacity(self, void* values) noexcept nogil:
        # The values a buffer of new_block holds.
        return self.rank_length[(<intp_t*> (<char*> values - BLOCK_HEADER))[0]]

    cdef inline void push_spare(self, void* values) noexcept nogil:
        # Keep the buffer of a block that left the cache. Called with the
        # lock held.
        cdef intp_t rank = (<intp_t*> (<char*> values - BLOCK_HEADER))[0]
        (<void**> values)[0] = self.spare_head[rank]
        self.spare_head[rank] = values
        self.spare_values += self.rank_length[rank]
        self.n_spare_blocks += 1

    cdef inline void* pop_spare(self, intp_t rank) noexcept nogil:
        # Called with the lock held, on a rank with a spare.
        cdef void* values = self.spare_head[rank]
        self.spare_head[rank] = (<void**> values)[0]
        self.spare_values -= self.rank_length[rank]
        self.n_spare_blocks -= 1
        return values

    cdef inline bint fits(self, intp_t capacity, intp_t n) noexcept nogil:
        # Whether a buffer of that capacity may hold a block of n values: at
        # most 1/8 of it left unused (the budget counts capacities, and the
        # blocks solvers hold for a pair, up to half of it, count lengths).
        return n <= capacity and 8 * capacity <= 9 * n

    cdef void* take_spare(self, intp_t c) noexcept nogil:
        # The spare buffer of least capacity that holds a block of class c
        # (see ``fits``), or NULL. Called with the lock held.
        cdef intp_t rank, n = self.block_length(c)
        if self.n_spare_blocks == 0:
            return NULL
        for rank in range(self.length_rank[c], self.n_ranks):
            if not self.fits(self.rank_length[rank], n):
                break
            if self.spare_head[rank] != NULL:
                self.blocks_reused += 1
                return self.pop_spare(rank)
        return NULL

    cdef bint free_one_spare(self) noexcept nogil:
        # Free a spare buffer, one of the largest; False when there is none.
        # Called with the lock held.
        cdef intp_t rank
        if self.n_spare_blocks == 0:
            return False
        for rank in range(self.n_ranks - 1, -1, -1):
            if self.spare_head[rank] != NULL:
                free_block(self.pop_spare(rank))
                return True
        return False

    cdef void* evict_for(self, intp_t n, intp_t keep_length=-1) noexcept nogil:
        # Make room for n more values of capacity beside the stored blocks,
        # the spare buffers and the reserved blocks: spare buffers are freed
        # first, then the least recently used unpinned blocks. With
        # keep_length >= 0, the first evicted buffer that holds a block that
        # long (see ``fits``) is returned instead of freed, else NULL.
        # Called with the lock held.
        # A pinned block met on the way goes to the front, as in use: the
        # rows a pair holds (up to half the budget) drift to the back while
        # pinned, and every eviction walked past all of them (a binary fit
        # of 10,000 documents whose Gram is four times the cache: 19 % of
        # its time in this loop). The walk stops at the first block it
        # moved, where it has seen every block once.
        cdef intp_t head = self.n_keys
        cdef intp_t victim = self.slots[head].lru_prev, before
        cdef intp_t first_moved = head
        cdef void* kept = NULL
        cdef void* spent
        cdef bint in_slab
        while self.stored + self.spare_values + self.reserved + n > self.budget:
            if self.free_one_spare():
                continue
            if victim == head or victim == first_moved:
                break
            before = self.slots[victim].lru_prev
            if self.slots[victim].pins != 0:
                self.pinned_walked += 1
                self.lru_unlink(victim)
                self.lru_push_front(victim)
                if first_moved == head:
                    first_moved = victim
            else:
                self.lru_unlink(victim)
                in_slab = self.slots[victim].in_slab
                spent = self.leave_slot(victim)
                if in_slab:
                    free(spent)  # the slab, when its last block left; or NULL
                elif keep_length >= 0 and kept == NULL and self.fits(self.capacity(spent),
                                                                     keep_length):
                    kept = spent
                else:
                    free_block(spent)
            victim = before
        return kept

    cdef void* reserve_block(self, intp_t c, intp_t* booked) noexcept nogil:
        # Count a block of class c about to be computed outside the lock
        # against the budget (``booked[0]``: the capacity counted), and
        # return a buffer for it: a spare, or an evicted block's, or NULL
        # (new_block then). Called with the lock held; matched by an
        # insert(reserved=True) or an unreserve of booked[0].
        cdef intp_t n = self.block_length(c)
        cdef void* values = self.take_spare(c)
        if values == NULL:
            self.reserved += n
            values = self.evict_for(0, n)
            self.reserved -= n
            self.blocks_reused += values != NULL
        if values == NULL:
            # No spare fits: one goes back to malloc for new_block to take,
            # rather than waiting, unused, for a block of its length (the
            # spares would grow towards the budget while class lengths differ).
            self.free_one_spare()
        booked[0] = n if values == NULL else self.capacity(values)
        self.reserved += booked[0]
        self.evict_for(0)
        self.peak_allocated = max(self.peak_allocated,
                                  self.stored + self.spare_values + self.reserved)
        return values

    cdef inline void unreserve(self, intp_t booked) noexcept nogil:
        # A reserved block that will not be inserted. Called with the lock held.
        self.reserved -= booked

    cdef inline const void* lookup(self, intp_t key) noexcept nogil:
        # Pin and return a cached block, or NULL. Called with the lock held.
        cdef void* values = self.slots[key].values
        self.n_requests += 1
        if values != NULL:
            self.slots[key].pins += 1
            self.lru_unlink(key)
            self.lru_push_front(key)
        return values

    cdef const void* insert(self, intp_t key, void* values, intp_t n,
                            bint transposed=False, bint in_slab=False,
                            bint reserved=False) noexcept nogil:
        # Store and pin a block made outside the lock (computed, or filled
        # by sweep_cross from transposed blocks), or, when another thread
        # stored the same block meanwhile, drop it (a spare buffer, unless
        # it lies in a sweep's slab) and pin that one. A reserved block
        # (see reserve_block) has its room already. Called with the lock held.
        if transposed:
            self.values_transposed += n
        else:
            self.n_computed += 1
            self.values_computed += n
        cdef intp_t room = n if in_slab else self.capacity(values)
        if reserved:
            self.reserved -= room
        if self.slots[key].values != NULL:
            if not in_slab:
                self.push_spare(values)
            self.values_raced += n
            values = self.slots[key].values
            self.lru_unlink(key)
        else:
            if not reserved:
                self.evict_for(room)
            self.slots[key].values = values
            self.slots[key].in_slab = in_slab
            if in_slab:
                self.slab_refs[self.slab_of(key)] += 1
            self.used += n
            self.stored += room
            self.peak_used = max(self.peak_used, self.used)
            self.peak_allocated = max(self.peak_allocated,
                                      self.stored + self.spare_values + self.reserved)
            if not self.slots[key].seen:
                self.slots[key].seen = 1
                self.n_distinct += 1
                self.values_distinct += n
        self.slots[key].pins += 1
        self.lru_push_front(key)
        return values

    cdef bint compute_block(self, intp_t key, float64_t* acc, float64_t* scratch,
                            void* out) noexcept nogil:
        # The block of key in the cache's storage: kgeo's row routine writes
        # float64, rounded to float32 here for a single cache. Returns 1 when
        # a value is beyond float32's range (stored as inf), else 0.
        return self.compute_block_part(key, 0, self.block_length(key % self.n_classes),
                                       acc, scratch, out)

    cdef bint compute_block_part(self, intp_t key, intp_t lo, intp_t hi, float64_t* acc,
                                 float64_t* scratch, void* out) noexcept nogil:
        # compute_block for the values lo <= j < hi of the block alone (only
        # those of acc, scratch and out are touched): each value has the
        # bits it has in the whole block (kernel_block_part).
        cdef intp_t c = key % self.n_classes, k
        cdef float32_t* out32
        cdef bint overflow = False
        if not self.single:
            kernel_block_part(self.kernel, self.rows, key // self.n_classes, self.index,
                              c, lo, hi, acc, <float64_t*> out)
            return 0
        kernel_block_part(self.kernel, self.rows, key // self.n_classes, self.index,
                          c, lo, hi, acc, scratch)
        out32 = <float32_t*> out
        for k in range(lo, hi):
            out32[k] = <float32_t> scratch[k]
            # inf - inf is nan: a test without a branch in the loop.
            overflow |= (out32[k] - out32[k]) != 0
        return overflow

    cdef bint compute_shared(self, intp_t key, float64_t* acc, float64_t* scratch,
                             void* out) noexcept nogil:
        """compute_block, with a helper thread (help_with_rows) taking one
        half of the block where one serves this cache; the same bits either
        way (kernel_block_part).

        The solver posts the block on the board and claims its halves in
        turn, as the helper does. Once no half is left to claim, it waits
        for the helper's for at most half the time its own took, then
        closes the task, under the lock the helper stores its halves under,
        and computes itself a half the helper claimed but had not stored.
        So a helper the system has not scheduled costs a block at most a
        quarter more, and one that keeps missing its halves is left out
        (judge_helper). (A join would wait for it however long: an OpenMP
        loop over the halves, tried first, made ten binary Reuters fits
        2.6x slower beside one busy process and 10x beside two.)
        """
        cdef intp_t n = self.block_length(key % self.n_classes), m, part, claims = 0
        cdef long long gen, claimed
        cdef bint overflow = False
        cdef timespec started, now, later
        cdef float64_t patience, waited
        cdef bint own[SHARED_PARTS]
        cdef bint helped
        # (A matrix's block is a gather, shorter than the handing over.)
        if not self.row_helper or n < ROW_SHARE_MIN or self.kernel.precomputed:
            return self.compute_block(key, acc, scratch, out)
        if self.alone_left > 0:
            self.alone_left -= 1
            return self.compute_block(key, acc, scratch, out)
        m = SHARED_PARTS
        gen = (atomic_load(&self.board_word) >> 16) + 1  # odd: the word was closed
        for part in range(m):
            atomic_store(&self.board_done[part], 0)
            own[part] = False
        self.board_overflow = False
        self.board_out = out
        atomic_store(&self.board_key, key)
        clock_gettime(CLOCK_MONOTONIC, &started)
        atomic_store(&self.board_word, gen << 16)  # posted
        while HELPER_TEST_WAIT == 0 or claims < m - 1:
            claimed = board_claim(&self.board_word, gen, m)
            if claimed < 0:
                break
            part = <intp_t> claimed
            overflow |= self.compute_block_part(key, part * n // m, (part + 1) * n // m,
                                                acc, scratch, out)
            atomic_store(&self.board_done[part], 1)
            own[part] = True
            claims += 1
        # The helper took its half after the solver took its own, so it
        # should store it shortly after the solver's is done: waited for
        # as long as half the solver's own time, then computed here. (Not
        # waiting at all, the helper lost that race by a hair on blocks of
        # dense columns, whose halves cost the same: on 5,000 x 1,000 dense
        # rows it stored 1,507 halves of 7,342 blocks, the others thrown
        # away, and the fit took 12.6-13.9 s against 10.2 s on one thread.)
        clock_gettime(CLOCK_MONOTONIC, &now)
        patience = HELPER_WAIT_SHARE * seconds_between(&started, &now) + HELPER_TEST_WAIT
        waited = 0.0
        while waited <= patience and not self.all_halves_stored(m):
            pause_briefly()
            clock_gettime(CLOCK_MONOTONIC, &later)
            waited = seconds_between(&now, &later)
        lock_acquire(&self.board_lock)
        atomic_store(&self.board_word, (gen + 1) << 16)  # closed: the helper stores no more
        overflow |= self.board_overflow
        lock_release(&self.board_lock)
        helped = False
        for part in range(m):
            if not atomic_load(&self.board_done[part]):
                overflow |= self.compute_block_part(key, part * n // m, (part + 1) * n // m,
                                                    acc, scratch, out)
            elif not own[part]:
                helped = True
        self.judge_helper(helped)
        return overflow

    cdef inline void judge_helper(self, bint helped) noexcept nogil:
        # See SHARE_WINDOW.
        self.blocks_shared += 1
        self.window_blocks += 1
        self.window_helped += helped
        if self.window_blocks < SHARE_WINDOW:
            return
        if 4 * self.window_helped < self.window_blocks:
            self.alone_left = self.alone_next
            self.alone_next = min(2 * self.alone_next, SHARE_BACKOFF_MAX)
        else:
            self.alone_next = SHARE_BACKOFF_MIN
        self.window_blocks = self.window_helped = 0

    cdef inline bint all_halves_stored(self, intp_t m) noexcept nogil:
        cdef intp_t part
        for part in range(m):
            if not atomic_load(&self.board_done[part]):
                return False
        return True

    def help_with_rows(self):
        """Compute halves of the blocks compute_shared posts, until
        stop_helping is called: the loop of a one-pair fit's helper thread
        (which _solve_pairs starts, then calls start_helping). A half is
        computed into the helper's own buffers, then stored into the block
        under the board's lock if its task is still open."""
        cdef float64_t* acc = <float64_t*> calloc(self.largest + 1, sizeof(float64_t))
        cdef float64_t* values = <float64_t*> malloc((self.largest + 1) * sizeof(float64_t))
        cdef long long word, gen, last = 0, key, claimed
        cdef intp_t n, m, part, lo, hi, k
        cdef float32_t* out32
        cdef bint overflow
        cdef timespec now, worked
        cdef float64_t idle
        if acc == NULL or values == NULL:
            free(acc)
            free(values)
            return  # the solver computes every half itself
        atomic_store(&self.helping, 1)
        with nogil:
            clock_gettime(CLOCK_MONOTONIC, &worked)
            while not flag_raised(&self.helper_stop):
                word = atomic_load(&self.board_word)
                gen = word >> 16
                if gen % 2 == 0 or gen == last:
                    clock_gettime(CLOCK_MONOTONIC, &now)
                    idle = seconds_between(&worked, &now)
                    helper_wait(0 if idle <= HELPER_SPIN_SECONDS
                                else (1 if idle <= HELPER_NAP_SECONDS else 2))
                    continue
                key = atomic_load(&self.board_key)
                if atomic_load(&self.board_word) >> 16 != gen:
                    continue  # a new task was posted meanwhile: its key may not be this one
                last = gen
                n = self.block_length(key % self.n_classes)
                m = SHARED_PARTS
                while True:
                    claimed = board_claim(&self.board_word, gen, m)
                    if claimed < 0:
                        break
                    part = <intp_t> claimed
                    lo = part * n // m
                    hi = (part + 1) * n // m
                    kernel_block_part(self.kernel, self.rows, key // self.n_classes,
                                      self.index, key % self.n_classes, lo, hi, acc, values)
                    lock_acquire(&self.board_lock)
                    if atomic_load(&self.board_word) >> 16 != gen:
                        lock_release(&self.board_lock)
                        break  # closed: the solver computes this half itself
                    if self.single:
                        out32 = <float32_t*> self.board_out
                        overflow = False
                        for k in range(lo, hi):
                            out32[k] = <float32_t> values[k]
                            overflow |= (out32[k] - out32[k]) != 0
                        self.board_overflow |= overflow
                    else:
                        memcpy(<float64_t*> self.board_out + lo, values + lo,
                               (hi - lo) * sizeof(float64_t))
                    atomic_store(&self.board_done[part], 1)
                    self.parts_helped += 1
                    lock_release(&self.board_lock)
                clock_gettime(CLOCK_MONOTONIC, &worked)
        free(acc)
        free(values)
        atomic_store(&self.helping, 0)

    def start_helping(self):
        """Have compute_shared post blocks for a helper thread (which the
        caller has started on help_with_rows), the first of them after the
        blocks the process's last two-class fit left to compute alone."""
        # Taken, not read: each fit counts down what it took, and gives back
        # what is left when it ends (stop_helping). Read only, a carry
        # longer than a small fit's blocks outlived every later fit (a
        # review: no sharing for the rest of the process).
        self.alone_left = atomic_load(&next_fit_alone)
        atomic_store(&next_fit_alone, 0)
        self.alone_next = min(2 * max(self.alone_left, SHARE_BACKOFF_MIN // 2),
                              SHARE_BACKOFF_MAX)
        self.row_helper_used = True
        self.row_helper = True

    def stop_helping(self):
        """End help_with_rows (in whichever thread runs it), and hand the
        blocks this fit still had to compute alone to the process's next
        two-class fit (see next_fit_alone)."""
        flag_raise(&self.helper_stop)
        self.row_helper = False
        if self.row_helper_used:
            atomic_store(&next_fit_alone, self.alone_left)

    @property
    def helper_running(self):
        """Whether a thread is in help_with_rows (for the tests)."""
        return atomic_load(&self.helping) != 0

    cdef int sweep_cross(self, intp_t cls_s, intp_t cls_t, float64_t* acc,
                         float64_t* scratch, bint signals_here) except -1 nogil:
        """Store every cross block of the pair (cls_s, cls_t) before it starts.

        The block (g, t) of each row g of class s is computed, and the block
        (h, s) of each row h of class t is filled from them, transposed:
        K(x_h, x_g) = K(x_g, x_h) bit for bit (the same products of shared
        words, summed in word order either way; the kernels' maps are
        symmetric). The pair's cross values then cost n_s n_t kernel
        evaluations in one sweep over class t's postings, where computing
        its rows on demand costs 2 u n_s n_t, u being the share of cross
        values its solver asks for.

        Done only where it pays: u over the pairs retired so far is at least
        1/2 (20 Newsgroups: 0.56; corpora whose pairs use nearly every row:
        1), and both classes' cross blocks fit in 1/SWEEP_BUDGET_SHARE of the
        budget. Anything that goes wrong (no memory, a float32 overflow, a
        stop request) leaves the blocks to be computed on demand, where it
        is reported. In the main thread (``signals_here``), the signals are
        looked at once SIGNAL_CHECK_SECONDS have passed since the last look,
        as the solver does after costly rows (``signals_due``): a sweep may
        take an eighth of the budget, and one of 3,500 x 3,500 heat-kernel
        rows took 0.9 s of CPU, unseen by Ctrl-C, which stops a fit within
        a second. An exception a handler raises ends the sweep, tidied up as
        for the other failures, and is raised.

        All 2 n_s n_t values live in one allocation, the pair's slab, when
        it is at most SWEEP_SLAB_MAX_BYTES: one malloc and one free per pair
        instead of one per block (malloc and free were 2.0-2.4 % of the
        pairs' CPU samples on 20 Newsgroups, blocks of 3-5 KB). A
        swept block the LRU order evicts leaves the budget's count at once,
        but its memory only with the slab's last block: the budget may then
        be exceeded by what is left of the slabs of the pairs being solved,
        each at most 1/SWEEP_BUDGET_SHARE of it, until they retire. A slab
        whose blocks have all left is kept for the next sweep (at most one
        per thread, see ``spare_slabs``) instead of being freed. Larger
        pairs' blocks take the buffers of blocks that left the cache (see
        ``spare_head``). The sweep's values count against the budget from
        its start: what is evicted for them goes before they are computed.

        A kernel read from a matrix (precomputed, or a callable's) is read
        as given, K[h, g] for the block (h, s), not transposed from K[g, h]
        (libsvm reads a matrix symmetric only to rounding row by row), and
        only for pairs of at most HOLD_AHEAD_MAX variables: reading ahead
        saves nothing, but a small pair whose blocks are all cached is held
        ahead, with no lock operation per row (hold_small_pair).
        """
        cdef intp_t s0 = self.index.block_start[cls_s], n_s = self.block_length(cls_s)
        cdef intp_t t0 = self.index.block_start[cls_t], n_t = self.block_length(cls_t)
        cdef bint as_given = self.kernel.precomputed
        cdef intp_t k, h, n_made = 0, n_filled = 0, nc = self.n_classes
        cdef void** blocks_s
        cdef void** blocks_t
        cdef char* slab = NULL
        cdef void* spent
        cdef intp_t p = cls_s * nc + cls_t if cls_s < cls_t else cls_t * nc + cls_s
        # Large pairs keep a malloc per block: a slab beyond glibc's mmap
        # threshold would be fresh pages for every pair (bench_scale at 50k
        # documents: 100 MB slabs, 4.8 M page faults instead of 0.27 M).
        cdef intp_t need = 2 * n_s * n_t * self.value_bytes
        cdef intp_t capacity = self.slab_capacity(cls_s, cls_t)
        cdef bint in_slab = need <= SWEEP_SLAB_MAX_BYTES
        cdef bint ok = True, worth, allocated = False, interrupted = False
        cdef timespec started, finished, checked, now
        cdef int64_t booked = 2 * n_s * n_t
        # Outside the lock; NULL where no spare buffer serves a block.
        blocks_s = <void**> calloc(n_s, sizeof(void*))
        blocks_t = <void**> calloc(n_t, sizeof(void*))
        if blocks_s == NULL or blocks_t == NULL:
            free(blocks_s)
            free(blocks_t)
            return 0  # computed on demand, where a lack of memory is reported
        lock_acquire(&self.lock)
        # Not without retiring: a slab is freed with its last block, which
        # only retire_pair makes prompt; under the LRU order alone, slabs
        # partly evicted would hold memory beyond the budget.
        worth = (self.sweep_enabled and self.retire_enabled and self.cross_values > 0
                 and 2 * self.cross_values_used >= self.cross_values
                 and 2 * n_s * n_t <= self.budget // SWEEP_BUDGET_SHARE
                 and (not as_given or n_s + n_t <= HOLD_AHEAD_MAX))
        if worth:
            if in_slab and capacity == self.slab_bytes and self.n_spare > 0:
                self.n_spare -= 1
                slab = <char*> self.spare_slabs[self.n_spare]
            elif not in_slab:
                # The buffers of blocks that left (the retired pairs' mostly)
                # for this sweep's blocks, as for a miss (see spare_head).
                for h in range(n_t):
                    blocks_t[h] = self.take_spare(cls_s)
                    if blocks_t[h] == NULL:
                        break
                    booked += self.capacity(blocks_t[h]) - n_s
                for k in range(n_s):
                    blocks_s[k] = self.take_spare(cls_t)
                    if blocks_s[k] == NULL:
                        break
                    booked += self.capacity(blocks_s[k]) - n_t
            # The sweep's blocks count against the budget from now on.
            self.reserved += booked
            self.evict_for(0)
            self.peak_allocated = max(self.peak_allocated,
                                      self.stored + self.spare_values + self.reserved)
        lock_release(&self.lock)
        if not worth:
            free(blocks_s)
            free(blocks_t)
            return 0
        clock_gettime(CLOCK_MONOTONIC, &started)
        checked = started
        if in_slab and slab == NULL:
            slab = <char*> malloc(capacity)
            ok = allocated = slab != NULL
        # In a slab: the blocks (h, s) first, then the blocks (g, t).
        while ok and n_filled < n_t:
            if in_slab:
                blocks_t[n_filled] = slab + n_filled * n_s * self.value_bytes
            elif blocks_t[n_filled] == NULL:
                blocks_t[n_filled] = self.new_block(cls_s)
                if blocks_t[n_filled] == NULL:
                    ok = False
                    break
            n_filled += 1
        # The blocks (g, t) of class s's rows by kgeo's row routine, scattered
        # eight at a time into the blocks (h, s) of class t's rows while
        # they are still in L1 or L2 (``scatter_rows``). Transposing them
        # all afterwards read them back from L3 or memory: on a loaded
        # machine that took a fifth of the sweep.
        while ok and n_made < n_s:
            # Every eight rows (a few microseconds to a few milliseconds of
            # work, beside which an atomic load and a clock read cost
            # nothing): a stop request from another thread, and in the main
            # thread the signals when their time has come.
            if n_made % 8 == 0:
                if flag_raised(&self.stop_requested):
                    ok = False
                    break
                if signals_here:
                    clock_gettime(CLOCK_MONOTONIC, &now)
                    if seconds_between(&checked, &now) >= SIGNAL_CHECK_SECONDS:
                        checked = now
                        with gil:
                            interrupted = signal_handlers_raised()
                        if interrupted:
                            ok = False
                            break
            if in_slab:
                blocks_s[n_made] = slab + (n_t * n_s + n_made * n_t) * self.value_bytes
            elif blocks_s[n_made] == NULL:
                blocks_s[n_made] = self.new_block(cls_t)
                if blocks_s[n_made] == NULL:
                    ok = False
                    break
            if self.compute_block((s0 + n_made) * nc + cls_t, acc, scratch,
                                  blocks_s[n_made]):
                n_made += 1
                ok = False  # a float32 overflow: reported on demand
                break
            n_made += 1
            if not as_given and (n_made % 8 == 0 or n_made == n_s):
                k = (n_made - 1) // 8 * 8
                scatter_rows(blocks_s + k, n_made - k, blocks_t, n_t, k, self.single)
        h = 0
        while ok and as_given and h < n_t:
            if self.compute_block((t0 + h) * nc + cls_s, acc, scratch, blocks_t[h]):
                ok = False  # a float32 overflow: reported on demand
                break
            h += 1
        clock_gettime(CLOCK_MONOTONIC, &finished)
        if not ok:
            if not in_slab:
                # Spare buffers taken for blocks not reached yet too.
                for k in range(n_s):
                    free_block(blocks_s[k])
                for h in range(n_t):
                    free_block(blocks_t[h])
            spent = NULL
            lock_acquire(&self.lock)
            self.reserved -= booked
            if slab != NULL:
                self.slab_allocations += allocated
                spent = self.keep_spare(slab, capacity)
            lock_release(&self.lock)
            free(spent)
            free(blocks_s)
            free(blocks_t)
            return -1 if interrupted else 0  # the handler's exception is set
        lock_acquire(&self.lock)
        self.compute_seconds += seconds_between(&started, &finished)
        # The sweep's own reference keeps the slab while its blocks go in
        # (an insert may evict one that went in before).
        self.slab_allocations += allocated
        if in_slab:
            self.slabs[p] = slab
            self.slab_refs[p] = 1
        # Stored unpinned: the solver pins the rows it asks for.
        for k in range(n_s):
            self.insert((s0 + k) * nc + cls_t, blocks_s[k], n_t, False, in_slab, True)
            self.slots[(s0 + k) * nc + cls_t].pins -= 1
        for h in range(n_t):
            self.insert((t0 + h) * nc + cls_s, blocks_t[h], n_s, not as_given, in_slab, True)
            self.slots[(t0 + h) * nc + cls_s].pins -= 1
        spent = self.release_slab(p) if in_slab else NULL
        lock_release(&self.lock)
        free(spent)
        free(blocks_s)
        free(blocks_t)
        return 0

    cdef inline bint grant_hold(self, intp_t n) noexcept nogil:
        # May a solver keep n more values pinned until its pair ends? Called
        # with the lock held.
        if self.held + n > self.hold_limit:
            return False
        self.held += n
        return True

    cdef int get_pair(self, intp_t row, intp_t c1, intp_t c2, float64_t* acc,
                      float64_t* scratch, const void** out1,
                      const void** out2, bint* hold,
                      float64_t* computing) except -1 nogil:
        """Pin and return K(x_row, x_j) for the rows j of class c1 and of class c2.

        Both blocks under one lock operation (two if one must be computed):
        with solvers in several threads, lock traffic is what the shared
        cache costs. ``acc`` is the caller's zeroed accumulator and
        ``scratch`` its float64 buffer (both at least as long as the largest
        class). ``hold[0]`` asks to keep both blocks pinned until the pair
        ends (``release_held_rows``), and says on return whether that was
        granted; if not, the get_pair is matched by a ``release_pair``.
        The seconds spent computing blocks are added to ``computing[0]``.
        """
        cdef intp_t keys[2]
        cdef const void** outs[2]
        cdef void* fresh[2]
        cdef intp_t booked[2]
        cdef intp_t n, side, missing = 0
        cdef timespec started, finished
        keys[0] = row * self.n_classes + c1
        keys[1] = row * self.n_classes + c2
        outs[0] = out1
        outs[1] = out2
        fresh[0] = fresh[1] = NULL
        booked[0] = booked[1] = 0
        lock_acquire(&self.lock)
        for side in range(2):
            outs[side][0] = self.lookup(keys[side])
            fresh[side] = NULL
            if outs[side][0] == NULL:
                missing += 1
            if not self.slots[keys[side]].used:
                self.slots[keys[side]].used = 1
                self.values_used += self.block_length(keys[side] % self.n_classes)
        if missing == 0 and hold[0]:
            hold[0] = self.grant_hold(self.block_length(c1) + self.block_length(c2))
        for side in range(2):
            if outs[side][0] == NULL:
                fresh[side] = self.reserve_block(keys[side] % self.n_classes, &booked[side])
        lock_release(&self.lock)
        if missing == 0:
            return 0

        # Computed outside the lock, so that other threads go on meanwhile.
        clock_gettime(CLOCK_MONOTONIC, &started)
        for side in range(2):
            if outs[side][0] != NULL:
                continue
            n = self.block_length(keys[side] % self.n_classes)
            if fresh[side] == NULL:
                fresh[side] = self.new_block(keys[side] % self.n_classes)
                if fresh[side] == NULL:
                    self.release_found(keys, outs, fresh, booked)
                    with gil:
                        raise MemoryError(
                            f"could not allocate a kernel row block of {n} values")
            if self.compute_shared(keys[side], acc, scratch, fresh[side]):
                self.release_found(keys, outs, fresh, booked)
                with gil:
                    raise ValueError(
                        "a kernel value is beyond float32's range (|k| > 3.4e38): "
                        "cache_dtype='float32' cannot store this kernel on this data; "
                        "use cache_dtype='float64'")
        clock_gettime(CLOCK_MONOTONIC, &finished)
        computing[0] += seconds_between(&started, &finished)
        lock_acquire(&self.lock)
        self.compute_seconds += seconds_between(&started, &finished)
        for side in range(2):
            if outs[side][0] == NULL:
                outs[side][0] = self.insert(
                    keys[side], fresh[side], self.block_length(keys[side] % self.n_classes),
                    False, False, True)  # reserved
        if hold[0]:
            hold[0] = self.grant_hold(self.block_length(c1) + self.block_length(c2))
        lock_release(&self.lock)
        return 0

    cdef void release_found(self, intp_t* keys, const void*** outs,
                            void** fresh, intp_t* booked) noexcept nogil:
        # Unpin the blocks a failed get_pair had found cached, and give up
        # the ones it reserved (freeing their buffers).
        cdef intp_t side
        lock_acquire(&self.lock)
        for side in range(2):
            if outs[side][0] != NULL:
                self.slots[keys[side]].pins -= 1
            else:
                self.unreserve(booked[side])
        lock_release(&self.lock)
        free_block(fresh[0])
        free_block(fresh[1])

    cdef void release_pair(self, intp_t row, intp_t c1, intp_t c2) noexcept nogil:
        lock_acquire(&self.lock)
        self.slots[row * self.n_classes + c1].pins -= 1
        self.slots[row * self.n_classes + c2].pins -= 1
        lock_release(&self.lock)

    cdef intp_t drop_blocks(self, intp_t first_row, intp_t end_row, intp_t c,
                            void** dropped) noexcept nogil:
        # Take the unpinned blocks (g, c), first_row <= g < end_row, out of
        # the cache: their buffers become spares (see ``spare_head``), and
        # slabs whose last block left go to ``dropped`` (freed by the
        # caller, outside the lock). Called with the lock held. Returns how
        # many went to ``dropped``.
        cdef intp_t g, key, n_dropped = 0
        cdef void* spent
        cdef bint in_slab
        for g in range(first_row, end_row):
            key = g * self.n_classes + c
            if self.slots[key].values != NULL and self.slots[key].pins == 0:
                self.lru_unlink(key)
                in_slab = self.slots[key].in_slab
                spent = self.leave_slot(key)
                if not in_slab:
                    self.push_spare(spent)
                elif spent != NULL:
                    dropped[n_dropped] = spent
                    n_dropped += 1
        return n_dropped

    cdef void retire_pair(self, intp_t cls_s, intp_t cls_t) noexcept nogil:
        """Drop the blocks that no pair after (cls_s, cls_t) will ask for.

        In one-vs-one, the block (g, c) of a row g outside class c serves
        only the pair of g's class and c: it is dead once that pair is
        solved. The blocks (g, c) of class c's own rows serve all of c's
        pairs, and die with the last of them. Freeing them at once, rather
        than when the LRU order reaches them, keeps the cache to the blocks
        still of use: far less memory touched (first-touch page faults are
        a large part of a fit) and no live block evicted for a dead one.
        Only when to free changes: a block asked for again is recomputed,
        bit for bit the same. Their buffers stay as spares for the next
        pairs' blocks (see ``spare_head``); their slabs are freed.
        """
        cdef intp_t s0 = self.index.block_start[cls_s], s1 = self.index.block_start[cls_s + 1]
        cdef intp_t t0 = self.index.block_start[cls_t], t1 = self.index.block_start[cls_t + 1]
        cdef intp_t n_dropped = 0, a
        # Room for the cross blocks and both classes' own blocks. Without it
        # the LRU order frees them later; the pairs are counted either way,
        # so that a class's last pair is still recognised.
        cdef void** dropped = <void**> malloc(max(2 * (s1 - s0 + t1 - t0), 1) * sizeof(void*))
        lock_acquire(&self.lock)
        self.pairs_left[cls_s] -= 1
        self.pairs_left[cls_t] -= 1
        self.cross_values += 2 * (s1 - s0) * (t1 - t0)
        for a in range(s0, s1):
            if self.slots[a * self.n_classes + cls_t].used:
                self.cross_values_used += t1 - t0
        for a in range(t0, t1):
            if self.slots[a * self.n_classes + cls_s].used:
                self.cross_values_used += s1 - s0
        if self.retire_enabled and dropped != NULL:
            n_dropped += self.drop_blocks(s0, s1, cls_t, dropped + n_dropped)
            n_dropped += self.drop_blocks(t0, t1, cls_s, dropped + n_dropped)
            if self.pairs_left[cls_s] == 0:
                n_dropped += self.drop_blocks(s0, s1, cls_s, dropped + n_dropped)
            if self.pairs_left[cls_t] == 0:
                n_dropped += self.drop_blocks(t0, t1, cls_t, dropped + n_dropped)
        lock_release(&self.lock)
        for a in range(n_dropped):
            free(dropped[a])
        free(dropped)

    def recompute_used(self, int n_threads=1):
        """Compute every block a solver asked for once more, each once, class by class.

        The benchmarks' floor of a fit: what the kernel values the solvers
        used cost with the same row routine, without the solver (rounded to
        float32 too for a single cache, as the fit stores them). Blocks the
        fit stored without a solver asking for them (``sweep_cross``) are not
        part of it. The values go to scratch buffers; the cache is not
        changed.

        Returns
        -------
        seconds : float
            Wall-clock time of the computation in ``n_threads`` threads.
        n_values : int
            Kernel values computed (the ``values_used`` of ``stats``).
        """
        keys_list = []
        cdef intp_t k
        for k in range(self.n_keys):
            if self.slots[k].used:
                keys_list.append(k)
        keys = np.array(keys_list, dtype=np.intp)
        # Class by class: each class's postings then stay in the CPU caches.
        keys = keys[np.argsort(keys % self.n_classes, kind="stable")]
        n_threads = max(1, n_threads)
        width = self.largest + 1
        acc_all = np.zeros((n_threads, width))
        scratch_all = np.empty((n_threads, width))
        # Each thread's output block, in the cache's storage.
        out_all = np.empty((n_threads, width * self.value_bytes), dtype=np.uint8)
        cdef intp_t[::1] keys_v = keys
        cdef float64_t[:, ::1] acc = acc_all, scratch = scratch_all
        cdef unsigned char[:, ::1] out = out_all
        cdef intp_t a, n = keys.shape[0]
        cdef int64_t n_values = 0
        cdef int tid
        cdef timespec started, finished
        with nogil:
            clock_gettime(CLOCK_MONOTONIC, &started)
            for a in prange(n, schedule="dynamic", chunksize=64, num_threads=n_threads):
                tid = threadid()
                self.compute_block(keys_v[a], &acc[tid, 0], &scratch[tid, 0],
                                   &out[tid, 0])
            clock_gettime(CLOCK_MONOTONIC, &finished)
        for a in range(n):
            n_values += self.block_length(keys_v[a] % self.n_classes)
        return seconds_between(&started, &finished), int(n_values)

    def used_blocks(self):
        """Which blocks some solver asked for: bool array (n_rows, n_classes),
        rows in the cache's (class-sorted) order."""
        used = np.zeros(self.n_keys, dtype=bool)
        cdef intp_t k
        for k in range(self.n_keys):
            used[k] = self.slots[k].used
        return used.reshape(self.n_rows, self.n_classes)

    def request_stop(self):
        """Make every solver using this cache raise KeyboardInterrupt soon."""
        flag_raise(&self.stop_requested)

    def live_slabs(self):
        """How many sweeps' slabs are still allocated (none once every pair
        is retired: tests check that)."""
        cdef intp_t p, n = 0
        lock_acquire(&self.lock)
        for p in range(self.n_classes * self.n_classes):
            n += self.slabs[p] != NULL
        lock_release(&self.lock)
        return n

    def slab_counts(self):
        """(slabs allocated so far, spare slabs kept now, most spares kept)."""
        return int(self.slab_allocations), int(self.n_spare), int(self.max_spare)

    @property
    def class_start(self):
        """The first row of each class block, n_classes + 1 offsets (a copy)."""
        return np.array(self.index.block_start)

    def stats(self):
        """Counters: blocks requested, computed, distinct; values computed,
        filled by transposing (``sweep_cross``), distinct (stored at least
        once), used (asked for by a solver), and computed twice at once by
        two threads; the most values held at once, and the most values of
        capacity counted against the budget at once (``spare_head``: the
        stored blocks' buffers, a swept block as its length, the spare
        buffers and the blocks being computed or swept; not the buffers'
        16-byte headers, the room a slab has beyond its pair's blocks, nor
        the spare slabs kept for the next sweep); blocks computed into the
        buffer of one that left; the bytes per stored value."""
        return {
            "value_bytes": self.value_bytes,
            "blocks_requested": self.n_requests,
            "blocks_computed": self.n_computed,
            "blocks_distinct": self.n_distinct,
            "values_computed": self.values_computed,
            "values_distinct": self.values_distinct,
            "values_raced": self.values_raced,
            "values_transposed": self.values_transposed,
            "values_used": self.values_used,
            "budget_values": self.budget,
            "peak_values": self.peak_used,
            "blocks_reused": self.blocks_reused,
            "peak_values_allocated": self.peak_allocated,
            "compute_seconds": self.compute_seconds,
        }


# --------------------------------------------------------------------------
# Binary SMO on one class pair
# --------------------------------------------------------------------------

cdef struct Pair:
    intp_t l              # n_s + n_t; local k < n_s is class s (y = +1)
    intp_t n_s
    intp_t start_s        # first global row of class s
    intp_t start_t
    intp_t cls_s
    intp_t cls_t
    float64_t* alpha
    float64_t* G          # gradient of the dual objective, Q alpha - 1
    float64_t* G_bar      # sum over upper-bound j of C_j Q_jk (for reconstruction)
    float64_t* C
    float64_t* QD         # K_kk
    float64_t* up_mask    # 0 where k is in I_up (may rise), -inf where not
    float64_t* low_mask   # 0 where k is in I_low (may fall), -inf where not
    float64_t* obj        # scratch: the j-selection objective per active variable
    # Per run of SCAN_BLOCK active variables of a class: the maximum over I_up
    # that the last gradient update found, and the j objectives' minimum
    # (a class's runs start at its first active variable; class t's entries
    # after class s's). The searches for i and j read these first.
    float64_t* up_blocks
    float64_t* obj_blocks
    float64_t* acc        # zeroed accumulator for computing kernel blocks
    float64_t* scratch    # a block in float64, before a single cache rounds it
    bint single           # the cache's blocks are float32
    int32_t* active       # active local indices, increasing (class s ones first)
    intp_t active_size
    intp_t active_s       # how many of them are in class s
    # Rows the pair keeps pinned from their first fetch to its end: an SMO
    # step fetches two rows, mostly ones the pair has fetched before (on
    # 20NG ~2,470 fetches of ~630 rows), and a held row is read without
    # the cache's lock. held[2 k] and
    # held[2 k + 1] are the blocks (s, t) of variable k's row, or NULL.
    const void** held
    int64_t held_fetches  # fetches answered from held rows (for the stats)
    # Per variable: 1 where hold_small_pair pinned its row before SMO asked
    # for it, 2 once SMO has (release_held_rows then counts it as used).
    char* held_ahead
    bint signals_here     # solved in the main thread, where signals arrive
    float64_t computing   # seconds of kernel rows computed since the last check_signals


cdef struct Row:
    const void* Ks        # K(x_i, x_j) for j in class s (float64, or float32
    const void* Kt        # ... and in class t             in a single cache)
    intp_t g              # global row, to release the blocks
    bint held             # pinned until the pair ends (release_row skips it)


cdef inline float64_t y_of(Pair* P, intp_t k) noexcept nogil:
    return 1.0 if k < P.n_s else -1.0


cdef inline float64_t value_at(const void* K, intp_t k, bint single) noexcept nogil:
    return (<const float32_t*> K)[k] if single else (<const float64_t*> K)[k]


cdef inline float64_t K_at(Row* r, Pair* P, intp_t k) noexcept nogil:
    if k < P.n_s:
        return value_at(r.Ks, k, P.single)
    return value_at(r.Kt, k - P.n_s, P.single)


cdef inline bint is_upper(Pair* P, intp_t k) noexcept nogil:
    return P.alpha[k] >= P.C[k]


cdef inline bint is_lower(Pair* P, intp_t k) noexcept nogil:
    return P.alpha[k] <= 0.0


cdef inline void refresh_masks(Pair* P, intp_t k) noexcept nogil:
    # I_up = {y = +1, alpha < C} + {y = -1, alpha > 0}; I_low the other way.
    cdef bint below_C = P.alpha[k] < P.C[k], above_0 = P.alpha[k] > 0.0
    cdef bint up = below_C if k < P.n_s else above_0
    cdef bint low = above_0 if k < P.n_s else below_C
    P.up_mask[k] = 0.0 if up else -INFINITY
    P.low_mask[k] = 0.0 if low else -INFINITY


cdef struct Segment:
    # The active variables of one class, as the C scans read them: variable a
    # of the segment is k = idx[a] (a shrunk active set) or k = offset + a,
    # and every per-variable pointer below is shifted by offset.
    intp_t offset
    const int32_t* idx
    intp_t n
    float64_t sign        # y of the class
    bint is_s             # class s: kernel values in Row.Ks, else in Row.Kt


cdef inline void segments(Pair* P, Segment* s, Segment* t) noexcept nogil:
    if P.active_size == P.l:
        # Every variable active (no shrinking yet, or shrinking off): the
        # contiguous layout that the vector scans run on.
        s.offset = 0
        s.idx = NULL
        s.n = P.n_s
        t.offset = P.n_s
        t.idx = NULL
        t.n = P.l - P.n_s
    else:
        s.offset = 0
        s.idx = P.active
        s.n = P.active_s
        t.offset = 0
        t.idx = P.active + P.active_s
        t.n = P.active_size - P.active_s
    s.sign = 1.0
    s.is_s = True
    t.sign = -1.0
    t.is_s = False


cdef inline intp_t segment_k(Segment* seg, intp_t a) noexcept nogil:
    return seg.idx[a] if seg.idx != NULL else seg.offset + a


cdef inline intp_t segment_blocks(Segment* seg) noexcept nogil:
    # Where class t's entries start in up_blocks and obj_blocks, for seg s.
    return (seg.n + SCAN_BLOCK - 1) // SCAN_BLOCK


cdef inline const void* segment_K(Pair* P, Segment* seg, Row* r) noexcept nogil:
    # The row's values indexed like the other arrays of the segment.
    cdef intp_t size = sizeof(float32_t) if P.single else sizeof(float64_t)
    if seg.is_s:
        return <const char*> r.Ks + seg.offset * size
    return <const char*> r.Kt + (seg.offset - P.n_s) * size


cdef int fetch_row(KernelRowCache cache, Pair* P, intp_t k, Row* r) except -1 nogil:
    """Pin the kernel row of local variable k; release it with release_row."""
    r.g = (P.start_s + k) if k < P.n_s else (P.start_t + k - P.n_s)
    if P.held[2 * k] != NULL:
        r.Ks = P.held[2 * k]
        r.Kt = P.held[2 * k + 1]
        r.held = True
        P.held_fetches += 1
        if P.held_ahead[k] == 1:
            P.held_ahead[k] = 2  # asked for: counted as used at its release
        prefetch_head(r.Ks, P.n_s, P.single)
        prefetch_head(r.Kt, P.l - P.n_s, P.single)
        return 0
    r.held = True  # ask to hold it
    cache.get_pair(r.g, P.cls_s, P.cls_t, P.acc, P.scratch, &r.Ks, &r.Kt, &r.held,
                   &P.computing)
    if r.held:
        P.held[2 * k] = r.Ks
        P.held[2 * k + 1] = r.Kt
    prefetch_head(r.Ks, P.n_s, P.single)
    prefetch_head(r.Kt, P.l - P.n_s, P.single)
    return 0


# Pairs of at most this many variables have the rows already in the cache
# pinned at once before their SMO starts (see hold_small_pair).
cdef intp_t HOLD_AHEAD_MAX = 64


cdef void hold_small_pair(KernelRowCache cache, Pair* P) noexcept nogil:
    """Pin all the rows of a small pair under one lock operation, as held
    rows (see fetch_row), where all its blocks are cached and the hold
    limit takes them all; otherwise none.

    A small pair's SMO asks for most of its rows, one lock operation each:
    with one-vs-one over many small classes (1,000 classes of 5 documents)
    and two solver threads, 65 % of get_pair's time went in waiting for the
    lock. A row held this way moves nowhere in the LRU order (but to the
    front where another thread's eviction meets it, pinned), and is
    counted as asked for (the cache's ``values_used`` and requests) only
    when SMO asks for it (see release_held_rows). All or none: with every
    block cached the pair computes none, so nothing is evicted while it
    runs, and pinned rows it never asks for change no eviction (on one
    thread the cache's statistics stay those of rows pinned as asked for;
    pinning some, or moving them in the LRU order, changed them under
    caches of 0.01-0.05 MB: a review).
    """
    cdef intp_t k, g, side, n = cache.block_length(P.cls_s) + cache.block_length(P.cls_t)
    cdef intp_t keys[2]
    lock_acquire(&cache.lock)
    for k in range(P.l):
        g = (P.start_s + k) if k < P.n_s else (P.start_t + k - P.n_s)
        if (cache.slots[g * cache.n_classes + P.cls_s].values == NULL
                or cache.slots[g * cache.n_classes + P.cls_t].values == NULL):
            lock_release(&cache.lock)
            return
    if not cache.grant_hold(P.l * n):
        lock_release(&cache.lock)
        return
    for k in range(P.l):
        g = (P.start_s + k) if k < P.n_s else (P.start_t + k - P.n_s)
        keys[0] = g * cache.n_classes + P.cls_s
        keys[1] = g * cache.n_classes + P.cls_t
        for side in range(2):
            cache.slots[keys[side]].pins += 1
        P.held[2 * k] = cache.slots[keys[0]].values
        P.held[2 * k + 1] = cache.slots[keys[1]].values
        P.held_ahead[k] = 1
    cache.rows_held_ahead += P.l
    lock_release(&cache.lock)


cdef inline void release_row(KernelRowCache cache, Pair* P, Row* r) noexcept nogil:
    if not r.held:
        cache.release_pair(r.g, P.cls_s, P.cls_t)


cdef void release_held_rows(KernelRowCache cache, Pair* P) noexcept nogil:
    """Unpin every row the pair held, under one lock operation.

    A row's own-class block goes to the front of the LRU order, as if just
    used: it serves its class's next pairs. Its cross block is left where
    it is: the pair is retired right after, and the block with it. A row
    held ahead (hold_small_pair) that SMO never asked for moves nowhere.
    """
    cdef intp_t k, g, own, cross
    cdef intp_t n_s = cache.block_length(P.cls_s), n_t = cache.block_length(P.cls_t)
    lock_acquire(&cache.lock)
    for k in range(P.l):
        if P.held[2 * k] == NULL:
            continue
        g = (P.start_s + k) if k < P.n_s else (P.start_t + k - P.n_s)
        own = g * cache.n_classes + (P.cls_s if k < P.n_s else P.cls_t)
        cross = g * cache.n_classes + (P.cls_t if k < P.n_s else P.cls_s)
        if P.held_ahead[k] == 2:
            # Held ahead, then asked for: used, as get_pair would have marked it.
            if not cache.slots[own].used:
                cache.slots[own].used = 1
                cache.values_used += n_s if k < P.n_s else n_t
            if not cache.slots[cross].used:
                cache.slots[cross].used = 1
                cache.values_used += n_t if k < P.n_s else n_s
        cache.slots[own].pins -= 1
        cache.slots[cross].pins -= 1
        if P.held_ahead[k] != 1:
            cache.lru_unlink(own)
            cache.lru_push_front(own)
        P.held_ahead[k] = 0
        cache.held -= n_s + n_t
        P.held[2 * k] = NULL
        P.held[2 * k + 1] = NULL
    # Blocks requested: two per fetch, held or not, so that the count does
    # not depend on the budget or on the other threads.
    cache.n_requests += 2 * P.held_fetches
    P.held_fetches = 0
    lock_release(&cache.lock)


cdef inline bint signals_due(Pair* P, intp_t count) noexcept nogil:
    """Whether to check_signals at the count-th step of a loop: every
    SIGNAL_CHECK_EVERY steps, and sooner where the rows computed since the
    last check took SIGNAL_CHECK_SECONDS (64 steps of rows of 6,000 x 2,000
    dense values took 1-3.6 s: Ctrl-C waited that long). Not much sooner:
    in the main thread a check takes the GIL, which another busy Python
    thread holds for up to its switch interval (5 ms): a check every 0.05 s
    made a dense fit 13 % slower beside such a thread (a review)."""
    return count % SIGNAL_CHECK_EVERY == 0 or P.computing >= SIGNAL_CHECK_SECONDS


cdef extern from "Python.h":
    # PyErr_CheckSignals without Cython's check of its result, for a caller
    # that must tidy up before the exception goes (sweep_cross).
    int PyErr_CheckSignals_unchecked "PyErr_CheckSignals" () noexcept


cdef inline bint signal_handlers_raised() noexcept:
    """Run the pending signal handlers (the GIL held); whether one raised,
    its exception then set."""
    return PyErr_CheckSignals_unchecked() != 0


cdef int check_signals(KernelRowCache cache, Pair* P) except -1 nogil:
    # Signals reach only the main thread, the one solver that takes the GIL
    # here; solvers in other threads learn of an interrupt through the
    # cache's stop flag, read without it. (Two solver threads taking the GIL
    # every SIGNAL_CHECK_EVERY steps, for nothing, spent 14-23 ms of a 20
    # Newsgroups NGD fit waiting for each other and for the pool's thread.)
    P.computing = 0.0
    if P.signals_here:
        with gil:
            PyErr_CheckSignals()
    if flag_raised(&cache.stop_requested):
        with gil:
            raise KeyboardInterrupt("fit interrupted")
    if flag_raised(&cache.kernel.overflowed):
        # inf in the rows would end in NaN gradients or a solution of
        # nothing; the caller names the kernel and its parameters.
        with gil:
            raise FloatingPointError("a kernel value overflowed float64")
    return 0


cdef void violation_maxima(Pair* P, float64_t* Gmax, float64_t* Gmax2) noexcept nogil:
    """max over I_up of -y G and max over I_low of y G, on the active set."""
    cdef float64_t up = -INFINITY, low = -INFINITY
    cdef intp_t a, k
    for a in range(P.active_s):
        k = P.active[a]
        if P.alpha[k] < P.C[k] and -P.G[k] > up:
            up = -P.G[k]
        if P.alpha[k] > 0.0 and P.G[k] > low:
            low = P.G[k]
    for a in range(P.active_s, P.active_size):
        k = P.active[a]
        if P.alpha[k] > 0.0 and P.G[k] > up:
            up = P.G[k]
        if P.alpha[k] < P.C[k] and -P.G[k] > low:
            low = -P.G[k]
    Gmax[0] = up
    Gmax2[0] = low


cdef int select_working_set(KernelRowCache cache, Pair* P, float64_t tol,
                            float64_t Gmax, float64_t Gmax2, bint from_update,
                            intp_t* out_i, intp_t* out_j, Row* ri) except -1 nogil:
    """Second-order working-set selection; returns 1 when optimal to tol.

    Otherwise the row of i is left pinned in ``ri`` for the step.

    ``Gmax`` and ``Gmax2`` are the violation maxima of the current state (from
    ``violation_maxima``, or from the gradient update that produced it, in
    which case ``from_update`` says that ``P.up_blocks`` hold too).
    Near-ties, within a relative TIE far above rounding noise, go to the
    last variable in the active order (class s first), so that rounding
    decides nothing (see TIE), and as libsvm's exact ties do (``>=`` and
    ``<=`` in its searches): where the dual is not concave (sigmoid, poly
    with coef0 < 0), the first pair, chosen among ties (every G_k is -1),
    decides which of its stationary points SMO ends at, and then kgeo's is
    scikit-learn's.
    """
    cdef float64_t margin, floor, best = INFINITY, QDi
    cdef intp_t a, i = -1, j = -1, o, b
    cdef Segment seg[2]
    cdef Segment* g
    cdef int side
    if Gmax + Gmax2 <= tol:
        return 1
    segments(P, &seg[0], &seg[1])
    # i: the last variable of I_up within the tie margin of the maximum. The
    # margin is far above rounding noise, and far below the gap, so the pair
    # still makes progress when a tiny tol is asked for.
    margin = min(TIE * (1.0 + fabs(Gmax)), 1e-3 * (Gmax + Gmax2))
    floor = Gmax - margin
    for side in range(1, -1, -1):
        g = &seg[side]
        b = 0 if g.is_s else segment_blocks(&seg[0])
        a = smo_last_up(P.G + g.offset, g.sign, P.up_mask + g.offset, g.idx, g.n, floor,
                        (P.up_blocks + b) if from_update else NULL)
        if a >= 0:
            i = segment_k(g, a)
            Gmax = -g.sign * P.G[i]
            break
    if i < 0:
        # Gmax is finite and some variable attains it, unless the gradient
        # holds a NaN: stop rather than read a row that does not exist.
        with gil:
            raise FloatingPointError(
                f"the SMO gradient of class pair ({P.cls_s}, {P.cls_t}) is not a number "
                f"(violation maxima {Gmax!r}, {Gmax2!r}): non-finite kernel values?")
    fetch_row(cache, P, i, ri)
    QDi = P.QD[i]
    # j: over I_low, the largest decrease of the objective, -grad_diff^2 / quad
    # (the pair's curvature floored at TAU); first all objectives and their
    # minimum, then the last variable within the tie margin of it.
    for side in range(2):
        g = &seg[side]
        o = 0 if g.is_s else seg[0].n
        b = 0 if g.is_s else segment_blocks(&seg[0])
        best = smo_j_objectives(P.G + g.offset, segment_K(P, g, ri), P.QD + g.offset,
                                QDi, Gmax, g.sign, P.low_mask + g.offset, g.idx, g.n,
                                P.obj + o, P.obj_blocks + b, best, P.single)
    if best == INFINITY:
        release_row(cache, P, ri)
        return 1
    for side in range(1, -1, -1):
        g = &seg[side]
        o = 0 if g.is_s else seg[0].n
        b = 0 if g.is_s else segment_blocks(&seg[0])
        a = smo_last_at_most(P.obj + o, g.n, best + TIE * fabs(best), P.obj_blocks + b)
        if a >= 0:
            j = segment_k(g, a)
            break
    if j < 0:  # best is the minimum of the obj searched: only a NaN hides it
        release_row(cache, P, ri)
        with gil:
            raise FloatingPointError(
                f"the SMO objectives of class pair ({P.cls_s}, {P.cls_t}) are not "
                f"numbers (minimum {best!r}): non-finite kernel values?")
    out_i[0] = i
    out_j[0] = j
    return 0


cdef void update_pair(Pair* P, intp_t i, intp_t j, float64_t Kij,
                      float64_t G_rounding, float64_t snap_cap,
                      float64_t alpha_sum) noexcept nogil:
    """Solve the two-variable subproblem exactly and clip to the box (libsvm's
    rule); a variable left within the step's rounding of the bound it moved
    toward is put on it (see RESIDUE_ULPS). ``G_rounding`` estimates the
    absolute rounding of a gradient entry, ``snap_cap`` the most a snap may
    move G (SNAP_TOL_SHARE tol), ``alpha_sum`` is sum(alpha), the scale to
    which sum(y alpha) = 0 holds."""
    cdef float64_t Ci = P.C[i], Cj = P.C[j], old_ai = P.alpha[i], old_aj = P.alpha[j]
    cdef float64_t quad, delta, diff, total, reach
    cdef float64_t* alpha = P.alpha
    cdef float64_t* G = P.G
    cdef bint clipped = False
    quad = P.QD[i] + P.QD[j] - 2.0 * Kij
    if quad <= 0:
        quad = TAU
    if y_of(P, i) != y_of(P, j):
        delta = (-G[i] - G[j]) / quad
        diff = alpha[i] - alpha[j]
        alpha[i] += delta
        alpha[j] += delta
        if diff > 0:
            if alpha[j] < 0:
                alpha[j] = 0
                alpha[i] = diff
                clipped = True
        else:
            if alpha[i] < 0:
                alpha[i] = 0
                alpha[j] = -diff
                clipped = True
        if diff > Ci - Cj:
            if alpha[i] > Ci:
                alpha[i] = Ci
                alpha[j] = Ci - diff
                clipped = True
        else:
            if alpha[j] > Cj:
                alpha[j] = Cj
                alpha[i] = Cj + diff
                clipped = True
    else:
        delta = (G[i] - G[j]) / quad
        total = alpha[i] + alpha[j]
        alpha[i] -= delta
        alpha[j] += delta
        if total > Ci:
            if alpha[i] > Ci:
                alpha[i] = Ci
                alpha[j] = total - Ci
                clipped = True
        else:
            if alpha[j] < 0:
                alpha[j] = 0
                alpha[i] = total
                clipped = True
        if total > Cj:
            if alpha[j] > Cj:
                alpha[j] = Cj
                alpha[i] = total - Cj
                clipped = True
        else:
            if alpha[i] < 0:
                alpha[i] = 0
                alpha[j] = total
                clipped = True
    snap_to_bound(P, i, j, clipped, old_aj)
    snap_to_bound(P, j, i, clipped, old_ai)
    # The step's rounding: G's over quad, and quad's own, relative to quad,
    # times the step (the kernel values and their sum are rounded at the
    # scale of |K_ii| + |K_jj| + 2 |K_ij|, which a shift raises). At a
    # pair's first step G's terms are the 1s alone, while a shift of -10
    # rounds a quad of 0.02 by 4e-15: a step meant to put two variables on
    # C = 100 stopped 1.6e-11 short, 20 times G's share of the reach.
    reach = min(G_rounding + fabs(delta) * RESIDUE_ULPS * FLOAT64_EPS
                * (fabs(P.QD[i]) + fabs(P.QD[j]) + 2.0 * fabs(Kij)), snap_cap) / quad
    snap_toward(P, i, j, old_ai, reach, alpha_sum)
    snap_toward(P, j, i, old_aj, reach, alpha_sum)
    refresh_masks(P, i)
    refresh_masks(P, j)


cdef inline void snap_to_bound(Pair* P, intp_t k, intp_t m, bint clipped,
                               float64_t old_m) noexcept nogil:
    # Put alpha_k on a bound it is within SNAP of (or beyond, by a rounding
    # of the clipping above), moving alpha_m so that sum y alpha stays as it
    # was; alpha_m is then clamped into its own box.
    cdef float64_t target, delta, partner
    # Near 0 the rounding is relative to the partner's value where the
    # clipping computed alpha_k from it, near C relative to C; but never
    # beyond SNAP of alpha_k's own box. Weights spanning more than 1/SNAP
    # give boxes below SNAP alpha_m: a step clipped such a variable to its
    # box C_k, this put it back on 0 (undoing the step), and SMO stopped as
    # stalled with a wrong intercept (X = [0, 1, 2, 0.5], sample_weight
    # 1e-16 on the last). An unclipped step leaves alpha_k + delta, no
    # residue of the partner's: snapped to 0, a step from 0 shorter than
    # SNAP alpha_m (7e-8 next to 1e7, where quad was 45,000 and the gap
    # 3e-3) was undone every time, and SMO stopped as stalled where the
    # step met tol (fuzzed poly problems with weights up to 1e8).
    # The same near C, unless the partner's change rounded away: an
    # unclipped step from C shorter than SNAP C (1e-10 next to C = 1e4,
    # where K_jj C was 1e12, its partner moving from 0 to 1e-10) was undone
    # every time, and SMO stopped as stalled at a gap of 1e-2 where SVC
    # converges (a review). But a step below an ulp of the partner (593)
    # moved only the variable at C, an ulp at a time: put back, it is the
    # no-step that ends the pair as stalled (tol below G's rounding), where
    # kept, SMO crept off C for 10,000 steps and more, each an ulp off
    # sum(y alpha) = 0 (a second review).
    if P.alpha[k] <= (SNAP * (P.alpha[m] if P.alpha[m] < P.C[k] else P.C[k])
                      if P.alpha[m] > 0.0 and clipped else 0.0):
        target = 0.0
    elif P.alpha[k] >= (P.C[k] * (1.0 - SNAP) if clipped or P.alpha[m] == old_m
                        else P.C[k]):
        target = P.C[k]
    else:
        return
    delta = target - P.alpha[k]
    if delta == 0.0:
        return
    partner = P.alpha[m] - y_of(P, k) * y_of(P, m) * delta
    # Clamped where it leaves its box by a rounding of that box (as delta
    # does with equal boxes). Beyond, the partner's box is below the
    # rounding of alpha_k (the same example: snapping alpha_0 = 1 - 1e-16
    # to C = 1 took 1.1e-16 from a partner whose box is 1e-16, putting it on
    # 0 again): the partner keeps its value, and sum y alpha absorbs delta,
    # a rounding of alpha_k's scale, as it absorbs the clipping's.
    if partner < 0.0:
        partner = 0.0 if partner >= -2.0 * SNAP * P.C[m] else P.alpha[m]
    elif partner > P.C[m]:
        partner = P.C[m] if partner <= P.C[m] * (1.0 + 2.0 * SNAP) else P.alpha[m]
    P.alpha[k] = target
    P.alpha[m] = partner


cdef inline void snap_toward(Pair* P, intp_t k, intp_t m, float64_t old_k,
                             float64_t reach, float64_t alpha_sum) noexcept nogil:
    # Put alpha_k on the bound it moved toward from old_k when it stopped
    # within reach of it, and move alpha_m as the step does, so that
    # sum y alpha stays as it was; unless alpha_m cannot follow in its box
    # by more than the rounding to which sum y alpha = 0 holds anyway (SNAP
    # of the larger of its box and sum(alpha)). Without that margin, a
    # variable whose box is small next to others' (weighted samples) was
    # left an ulp of the large alphas below its bound, free, with a partner
    # already on its bound: no step could move it, SMO stopped as stalled,
    # and b* came from that variable alone (0.71 off in a review's example,
    # at any tol).
    # And only a step at least twice as long as the snap: a snap lengthens
    # the step by the share omega of its length, and the pair's objective
    # then falls by omega (2 - omega) of the exact step's gain, 3/4 of it at
    # least, never rising. (A residue is a rounding, far below its step.)
    # Where quad is tiny beside G's rounding (two documents of K_ii = 3e-6
    # next to one of 1.1e6: reach 0.1), the snap had gone further than the
    # step: 0.026 after 0.021, past twice the exact step, so the objective
    # rose, and the next step of the same pair undid it, swapping the two
    # alphas between 1 and 0.9534 until max_iter, where SVC needs 79 steps
    # (a review, on 20 Newsgroups with poly kernels).
    cdef float64_t target, delta, partner, margin
    if (P.alpha[k] > old_k and P.C[k] - P.alpha[k] <= reach
            and 2.0 * (P.C[k] - P.alpha[k]) <= P.alpha[k] - old_k):
        target = P.C[k]
    elif (P.alpha[k] < old_k and P.alpha[k] <= reach
            and 2.0 * P.alpha[k] <= old_k - P.alpha[k]):
        target = 0.0
    else:
        return
    delta = target - P.alpha[k]
    if delta == 0.0:
        return
    partner = P.alpha[m] - y_of(P, k) * y_of(P, m) * delta
    # Beyond its box by a rounding of the sum at most (SNAP, as above).
    margin = SNAP * (P.C[m] if P.C[m] >= alpha_sum else alpha_sum)
    if partner < 0.0:
        if partner < -margin:
            return
        partner = 0.0
    elif partner > P.C[m]:
        if partner > P.C[m] + margin:
            return
        partner = P.C[m]
    P.alpha[k] = target
    P.alpha[m] = partner


cdef void update_gradient(Pair* P, Row* ri, float64_t ci, Row* rj, float64_t cj,
                          float64_t* Gmax, float64_t* Gmax2) noexcept nogil:
    """G_k += y_k (ci K_ik + cj K_jk) over the active set (ci = y_i d alpha_i),
    in one pass that also yields the violation maxima of the new state and
    P.up_blocks."""
    cdef float64_t up = -INFINITY, low = -INFINITY
    cdef Segment seg[2]
    cdef Segment* g
    cdef int side
    segments(P, &seg[0], &seg[1])
    for side in range(2):
        g = &seg[side]
        smo_update(P.G + g.offset, segment_K(P, g, ri), segment_K(P, g, rj), ci, cj,
                   g.sign, P.up_mask + g.offset, P.low_mask + g.offset, g.idx, g.n,
                   &up, &low, P.up_blocks + (0 if g.is_s else segment_blocks(&seg[0])),
                   P.single)
    Gmax[0] = up
    Gmax2[0] = low


cdef void add_row_to_G_bar(Pair* P, Row* r, float64_t coef) noexcept nogil:
    """G_bar[k] += coef * y_k * K_ik over all variables (y_i folded in coef)."""
    cdef intp_t k
    for k in range(P.n_s):
        P.G_bar[k] += coef * value_at(r.Ks, k, P.single)
    for k in range(P.n_s, P.l):
        P.G_bar[k] -= coef * value_at(r.Kt, k - P.n_s, P.single)


cdef int reconstruct_gradient(KernelRowCache cache, Pair* P) except -1 nogil:
    """Recompute G of the inactive variables from G_bar and the free ones."""
    cdef intp_t a, k, m, n_free = 0
    cdef Row r
    if P.active_size == P.l:
        return 0
    cdef char* in_active = <char*> malloc(P.l)
    if in_active == NULL:
        with gil:
            raise MemoryError("could not allocate the gradient reconstruction mask")
    try:
        for k in range(P.l):
            in_active[k] = 0
        for a in range(P.active_size):
            in_active[P.active[a]] = 1
        for k in range(P.l):
            if not in_active[k]:
                P.G[k] = P.G_bar[k] - 1.0
        for a in range(P.active_size):
            k = P.active[a]
            if not is_upper(P, k) and not is_lower(P, k):
                n_free += 1
        if n_free <= P.l - P.active_size:
            # Fewer free variables than inactive ones: spread each free row.
            for a in range(P.active_size):
                k = P.active[a]
                if not is_upper(P, k) and not is_lower(P, k):
                    fetch_row(cache, P, k, &r)
                    for m in range(P.l):
                        if not in_active[m]:
                            P.G[m] += P.alpha[k] * y_of(P, k) * y_of(P, m) * K_at(&r, P, m)
                    release_row(cache, P, &r)
                    if signals_due(P, a):
                        check_signals(cache, P)
        else:
            # Fewer inactive variables: gather over the free ones in their rows.
            for m in range(P.l):
                if not in_active[m]:
                    fetch_row(cache, P, m, &r)
                    for a in range(P.active_size):
                        k = P.active[a]
                        if not is_upper(P, k) and not is_lower(P, k):
                            P.G[m] += P.alpha[k] * y_of(P, k) * y_of(P, m) * K_at(&r, P, k)
                    release_row(cache, P, &r)
                    if signals_due(P, m):
                        check_signals(cache, P)
    finally:
        free(in_active)
    return 0


cdef inline bint be_shrunk(Pair* P, intp_t k, float64_t Gmax1,
                           float64_t Gmax2) noexcept nogil:
    # Shrink only beyond the tie margin, so rounding noise decides nothing.
    cdef float64_t m1 = Gmax1 + TIE * (1.0 + fabs(Gmax1))
    cdef float64_t m2 = Gmax2 + TIE * (1.0 + fabs(Gmax2))
    if is_upper(P, k):
        return (-P.G[k] > m1) if k < P.n_s else (-P.G[k] > m2)
    if is_lower(P, k):
        return (P.G[k] > m2) if k < P.n_s else (P.G[k] > m1)
    return False


cdef void activate_all(Pair* P) noexcept nogil:
    cdef intp_t k
    for k in range(P.l):
        P.active[k] = <int32_t>k
    P.active_size = P.l
    P.active_s = P.n_s


cdef int do_shrinking(KernelRowCache cache, Pair* P, float64_t tol,
                      bint* unshrunk) except -1 nogil:
    """Drop bound variables that cannot move at the current violation level."""
    cdef float64_t Gmax1 = -INFINITY  # max over I_up of -y G
    cdef float64_t Gmax2 = -INFINITY  # max over I_low of y G
    cdef intp_t a, k, kept = 0, kept_s = 0
    for a in range(P.active_size):
        k = P.active[a]
        if k < P.n_s:
            if not is_upper(P, k) and -P.G[k] >= Gmax1:
                Gmax1 = -P.G[k]
            if not is_lower(P, k) and P.G[k] >= Gmax2:
                Gmax2 = P.G[k]
        else:
            if not is_upper(P, k) and -P.G[k] >= Gmax2:
                Gmax2 = -P.G[k]
            if not is_lower(P, k) and P.G[k] >= Gmax1:
                Gmax1 = P.G[k]
    if not unshrunk[0] and Gmax1 + Gmax2 <= tol * 10:
        # Close to the end: bring everything back once, so that variables
        # shrunk early on a stale gradient get another look.
        unshrunk[0] = True
        reconstruct_gradient(cache, P)
        activate_all(P)
    for a in range(P.active_size):
        k = P.active[a]
        if not be_shrunk(P, k, Gmax1, Gmax2):
            P.active[kept] = <int32_t>k
            kept += 1
            if k < P.n_s:
                kept_s += 1
    P.active_size = kept
    P.active_s = kept_s
    return 0


cdef int exact_gradient(KernelRowCache cache, Pair* P,
                        float64_t* term_scale) except -1 nogil:
    """G = Q alpha - 1 from the support vectors' rows, to about an ulp of G.

    Each term K_km alpha_k is split exactly into its rounded product and
    that product's error (fma), and both are summed with Neumaier's
    compensation, so that terms far larger than G (1e14 against G of order
    1, with rows far from the origin) cancel without leaving their
    rounding. All variables must be active. ``term_scale``, where not NULL,
    receives sum_k |K_km alpha_k| (at least 1, the constant term) of the two
    variables that set the gap on the exact G (the first maximum of -y G
    over I_up, of y G over I_low), the larger: the scale of their G's
    rounding as SMO's updates sum it. (Over every m, a row far from the
    others but outside the support, K_mk of 1e7, set it: a review.)
    """
    cdef intp_t k, m, up_at = -1, low_at = -1
    cdef float64_t up_max = -INFINITY, low_max = -INFINITY, v
    cdef float64_t a, value, product, error, total, part
    cdef Row r
    cdef float64_t* compensation = <float64_t*> malloc(2 * P.l * sizeof(float64_t))
    cdef float64_t* magnitude
    if compensation == NULL:
        with gil:
            raise MemoryError("could not allocate the exact gradient's compensation")
    magnitude = compensation + P.l
    try:
        for m in range(P.l):
            P.G[m] = -1.0
            compensation[m] = 0.0
            magnitude[m] = 1.0
        for k in range(P.l):
            a = P.alpha[k]
            if a == 0.0:
                continue
            fetch_row(cache, P, k, &r)
            for m in range(P.l):
                value = K_at(&r, P, m)
                product = value * a
                error = fma(value, a, -product)
                if (k < P.n_s) != (m < P.n_s):  # y_k y_m = -1
                    product = -product
                    error = -error
                total = P.G[m] + product
                if fabs(P.G[m]) >= fabs(product):
                    part = (P.G[m] - total) + product
                else:
                    part = (product - total) + P.G[m]
                P.G[m] = total
                compensation[m] += part + error
                magnitude[m] += fabs(product)
            release_row(cache, P, &r)
            if signals_due(P, k):
                check_signals(cache, P)
        for m in range(P.l):
            P.G[m] += compensation[m]
            if term_scale == NULL:
                continue
            # I_up and I_low as violation_maxima reads them: y = +1 for m < n_s.
            v = -P.G[m] if m < P.n_s else P.G[m]
            if (not is_upper(P, m) if m < P.n_s else not is_lower(P, m)) and v > up_max:
                up_max, up_at = v, m
            v = P.G[m] if m < P.n_s else -P.G[m]
            if (not is_lower(P, m) if m < P.n_s else not is_upper(P, m)) and v > low_max:
                low_max, low_at = v, m
        if term_scale != NULL:
            term_scale[0] = max(magnitude[up_at] if up_at >= 0 else 1.0,
                                magnitude[low_at] if low_at >= 0 else 1.0)
    finally:
        free(compensation)
    return 0


cdef int solve_pair_core(KernelRowCache cache, Pair* P, float64_t tol,
                         int shrinking, int64_t max_iter,
                         int64_t* n_iter) except -1 nogil:
    """Run SMO to tol (or max_iter); leaves every variable active and G exact."""
    cdef intp_t i, j, k
    cdef intp_t counter = P.l if P.l < SHRINK_EVERY else SHRINK_EVERY
    if shrinking == SHRINK_AUTO:
        counter = AUTO_SHRINK_AFTER * P.l + 1
    cdef int64_t it = 0
    cdef bint unshrunk = False, ui, uj
    cdef int status = STATUS_CONVERGED
    cdef float64_t old_ai, old_aj, dai, daj, yi, yj, Kij
    cdef float64_t Gmax, Gmax2, largest_terms
    # The smallest gap so far, and when it was reached (see STUCK_GAP).
    cdef float64_t least_gap = INFINITY
    cdef int64_t least_gap_at = 0
    cdef int64_t stuck_after = max(STUCK_STEPS_PER_VARIABLE * P.l, STUCK_STEPS_MIN)
    # The scale of G's terms (see STUCK_GAP): max |K_kk| and sum(alpha).
    cdef float64_t kernel_scale = 0.0, alpha_sum = 0.0
    # The largest sum(alpha) so far: G, updated step by step, keeps the
    # rounding of the largest terms it ever summed, and G_bar its share of
    # them, after the alphas that made them have fallen (see VERIFY_MARGIN).
    cdef float64_t alpha_peak = 0.0
    cdef int checks_failed = 0
    # max |K| over the diagonal and the K_ij of the steps so far: with
    # alpha_sum, the scale of G's rounding that a step's snap allows for
    # (see RESIDUE_ULPS; the geodesic kernels' diagonal is 0).
    cdef float64_t term_scale
    # Gmax, Gmax2 (and P.up_blocks) describe the current state: they come
    # from the gradient update that made it.
    cdef bint maxima_known = False
    cdef Row ri, rj
    activate_all(P)
    for k in range(P.l):
        P.G[k] = -1.0
        P.G_bar[k] = 0.0
        refresh_masks(P, k)
        kernel_scale = max(kernel_scale, fabs(P.QD[k]))
    term_scale = kernel_scale
    while True:
        if max_iter >= 0 and it >= max_iter:
            status = STATUS_MAX_ITER
            break
        if signals_due(P, it):
            check_signals(cache, P)
        if shrinking:
            counter -= 1
            if counter == 0:
                counter = P.l if P.l < SHRINK_EVERY else SHRINK_EVERY
                do_shrinking(cache, P, tol, &unshrunk)
                maxima_known = False
        if not maxima_known:
            violation_maxima(P, &Gmax, &Gmax2)
        if Gmax + Gmax2 < least_gap:
            least_gap = Gmax + Gmax2
            least_gap_at = it
        elif (it - least_gap_at > stuck_after and Gmax + Gmax2 > tol
              and Gmax + Gmax2 <= STUCK_GAP * max(fabs(Gmax), fabs(Gmax2),
                                                  kernel_scale * alpha_sum)):
            # (A gap within tol is no stall: the selection below ends the pair,
            # or, on a shrunk set, judges all the variables.)
            if P.active_size == P.l:
                # max |K_kk| bounds G's terms from every row, those whose
                # alpha is 0 too: one row far from the others (K_kk of 1e10,
                # alpha 0) let a slow pair (C = 5e4) pass as stuck at a gap of
                # 7.7 with tol=1e-3 (a review). Judged again on an exact G
                # and the size of the terms of the two variables that set
                # its gap.
                largest_terms = 0.0
                exact_gradient(cache, P, &largest_terms)
                violation_maxima(P, &Gmax, &Gmax2)
                maxima_known = False  # P.up_blocks describe the old G
                if Gmax + Gmax2 <= tol:
                    break
                if Gmax + Gmax2 <= STUCK_GAP * max(fabs(Gmax), fabs(Gmax2), largest_terms):
                    status = STATUS_STALLED
                    break
                # Slow, not stuck: go on from the exact G.
                least_gap = INFINITY
                continue
            # Stuck on the shrunk set only: the variables left out may still
            # violate. Judge all of them, and go on without shrinking, so that
            # the next verdict is on all of them too.
            reconstruct_gradient(cache, P)
            activate_all(P)
            shrinking = SHRINK_OFF
            violation_maxima(P, &Gmax, &Gmax2)
            maxima_known = False
            least_gap = Gmax + Gmax2
            least_gap_at = it
        # On 0, row i stays pinned in ri.
        if select_working_set(cache, P, tol, Gmax, Gmax2, maxima_known, &i, &j, &ri):
            # Optimal on the active set: check again on all variables.
            reconstruct_gradient(cache, P)
            activate_all(P)
            violation_maxima(P, &Gmax, &Gmax2)
            if select_working_set(cache, P, tol, Gmax, Gmax2, False, &i, &j, &ri):
                if tol >= VERIFY_MARGIN * FLOAT64_EPS * (1.0 + term_scale * alpha_peak):
                    break
                # tol is near G's rounding: check the gap on an exact G (see
                # STATUS_UNRESOLVED), and go on from it where it is above tol.
                exact_gradient(cache, P, NULL)
                violation_maxima(P, &Gmax, &Gmax2)
                if Gmax + Gmax2 <= tol:
                    break
                checks_failed += 1
                if checks_failed == VERIFY_ROUNDS:
                    status = STATUS_UNRESOLVED
                    break
                maxima_known = False  # P.up_blocks describe the old G
                least_gap = Gmax + Gmax2
                least_gap_at = it
                continue
            counter = 1  # shrink again at the next iteration
            # The least gap so far was the shrunk set's, smaller than any
            # gap on all the variables may be for long: measure anew.
            least_gap = Gmax + Gmax2
            least_gap_at = it
        it += 1
        fetch_row(cache, P, j, &rj)
        yi = y_of(P, i)
        yj = y_of(P, j)
        Kij = K_at(&ri, P, j)
        old_ai = P.alpha[i]
        old_aj = P.alpha[j]
        ui = is_upper(P, i)
        uj = is_upper(P, j)
        term_scale = max(term_scale, fabs(Kij))
        update_pair(P, i, j, Kij, RESIDUE_ULPS * FLOAT64_EPS * (1.0 + term_scale * alpha_sum),
                    SNAP_TOL_SHARE * tol, alpha_sum)
        dai = P.alpha[i] - old_ai
        daj = P.alpha[j] - old_aj
        alpha_sum += dai + daj
        alpha_peak = max(alpha_peak, alpha_sum)
        if dai == 0.0 and daj == 0.0:
            release_row(cache, P, &ri)
            release_row(cache, P, &rj)
            if P.active_size == P.l:
                # The step underflowed: the same pair would be chosen forever.
                # The gap left is below what float64 can resolve for this
                # problem.
                status = STATUS_STALLED
                break
            # Underflowed on the shrunk set: its gap is below float64's
            # resolution, but the variables left out may violate far more (a
            # review: a stall declared at a true gap of 1.6 with tol=1e-13,
            # where shrinking=False converged). Judge all of them, and go on
            # without shrinking, as for a stuck gap above.
            reconstruct_gradient(cache, P)
            activate_all(P)
            shrinking = SHRINK_OFF
            maxima_known = False
            least_gap = INFINITY  # measured anew on all the variables
            continue
        # G_k += Q_ik dai + Q_jk daj over the active set, and the next
        # iteration's violation maxima in the same pass.
        update_gradient(P, &ri, yi * dai, &rj, yj * daj, &Gmax, &Gmax2)
        maxima_known = True
        if shrinking:
            if ui != is_upper(P, i):
                add_row_to_G_bar(P, &ri, yi * P.C[i] * (-1.0 if ui else 1.0))
            if uj != is_upper(P, j):
                add_row_to_G_bar(P, &rj, yj * P.C[j] * (-1.0 if uj else 1.0))
        release_row(cache, P, &ri)
        release_row(cache, P, &rj)
    if P.active_size < P.l:
        reconstruct_gradient(cache, P)
        activate_all(P)
    n_iter[0] = it
    return status


cdef float64_t intercept(Pair* P) noexcept nogil:
    """b*: mean of y_k - sum_i a_i y_i K_ik = -y_k G_k over the free k.

    With no free variable, the midpoint of the interval the KKT conditions
    leave for b.
    """
    cdef float64_t total = 0.0, yG, upper = INFINITY, lower = -INFINITY
    cdef intp_t k, n_free = 0
    for k in range(P.l):
        yG = y_of(P, k) * P.G[k]
        if is_upper(P, k):
            if k < P.n_s:
                lower = max(lower, yG)
            else:
                upper = min(upper, yG)
        elif is_lower(P, k):
            if k < P.n_s:
                upper = min(upper, yG)
            else:
                lower = max(lower, yG)
        else:
            n_free += 1
            total += yG
    # + 0.0: an intercept of exactly 0 is 0.0, not -0.0 (as in dual_coef_).
    if n_free > 0:
        return -total / n_free + 0.0
    return -(upper + lower) / 2 + 0.0


cdef inline int64_t libsvm_iteration_cap_of(intp_t l) noexcept nogil:
    # libsvm_iteration_cap, without the GIL: the solver's copy, which the
    # Python function returns, so that the tests read the cap it applies.
    return max(<int64_t> 10_000_000, 100 * <int64_t> l)


def libsvm_iteration_cap(intp_t l):
    """SMO iterations libsvm allows a problem of l variables: max(10**7, 100 l).

    Where the kernel cannot separate the classes, SMO's iterations grow in
    proportion to C times the kernel's scale (X scaled by s is the linear
    kernel times s**2, the SVM of C times s**2): six points took 2.7
    million iterations scaled by 1e3, 270 million by 1e4, and each
    iteration costs O(l). libsvm's own solver (svm.cpp) stops at this cap
    with a warning rather than run for hours; ``max_iter=-1`` does the same.
    """
    return libsvm_iteration_cap_of(l)


cdef inline float64_t* aligned_64(float64_t* p) noexcept nogil:
    # The first 64-byte boundary at or after p (8 doubles of slack allocated).
    return <float64_t*> ((<size_t> p + 63) & ~(<size_t> 63))


def solve_pair(KernelRowCache cache, intp_t cls_s, intp_t cls_t,
               const float64_t[::1] box, float64_t tol, shrinking, int64_t max_iter):
    """Solve the binary SVM between classes cls_s (y = +1) and cls_t (y = -1).

    ``solve_pairs`` for one pair (see there for the parameters).

    Returns
    -------
    alpha : ndarray of shape (n_s + n_t,)
        Dual variables, class cls_s rows first.
    b : float
        The intercept b* (decision = sum_k alpha_k y_k K(x_k, x) + b).
    n_iter : int
    objective : float
        The dual objective sum(alpha) - 1/2 alpha'Q alpha at the solution.
    status : int
        CONVERGED; MAX_ITER_REACHED; STALLED; UNRESOLVED (see solve_pairs).
    """
    solved = PairSolutions(cache.class_start, [[cls_s, cls_t]])
    solve_pairs(cache, solved, 0, 1, box, tol, shrinking, max_iter)
    return solved[0]


class PairSolutions:
    """The solutions of a fit's class pairs, in arrays (one entry per pair;
    the dual variables of all pairs back to back).

    ``solutions[p]`` is pair p's ``(alpha, b, n_iter, objective, status)``,
    ``alpha`` a view.

    Parameters
    ----------
    class_start : ndarray of int64, shape (n_classes + 1,)
        The first row of each class in the class-sorted training rows (the
        block_start of their posting index).
    pairs : ndarray of int64, shape (n_pairs, 2)
        The classes (s, t) of each pair.
    """

    def __init__(self, class_start, pairs):
        self.pairs = np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2)
        sizes = np.diff(np.asarray(class_start, dtype=np.int64))
        n_pairs = self.pairs.shape[0]
        bad = np.flatnonzero(((self.pairs < 0) | (self.pairs >= sizes.shape[0])).any(axis=1)
                             | (self.pairs[:, 0] == self.pairs[:, 1]))
        if bad.size:
            raise ValueError(
                f"a pair is two different classes of {sizes.shape[0]}: pair {bad[0]} is "
                f"{tuple(self.pairs[bad[0]].tolist())}")
        self.alpha_start = np.zeros(n_pairs + 1, dtype=np.int64)
        if n_pairs:
            np.cumsum(sizes[self.pairs[:, 0]] + sizes[self.pairs[:, 1]],
                      out=self.alpha_start[1:])
        self.alpha = np.zeros(self.alpha_start[n_pairs])
        self.intercept = np.zeros(n_pairs)
        self.n_iter = np.zeros(n_pairs, dtype=np.int64)
        self.objective = np.zeros(n_pairs)
        # NOT_SOLVED until its pair is solved (whatever its iterations: at
        # tol >= 2 a pair converges in none).
        self.status = np.full(n_pairs, NOT_SOLVED, dtype=np.int32)

    def __len__(self):
        return self.pairs.shape[0]

    def __getitem__(self, p):
        if not -len(self) <= p < len(self):
            raise IndexError(f"pair {p} of {len(self)}")
        p %= len(self)
        return (self.alpha[self.alpha_start[p]:self.alpha_start[p + 1]],
                float(self.intercept[p]), int(self.n_iter[p]), float(self.objective[p]),
                int(self.status[p]))


def solve_pairs(KernelRowCache cache, solutions, intp_t first, intp_t last,
                const float64_t[::1] box, float64_t tol, shrinking, int64_t max_iter):
    """Solve the binary SVMs of class pairs first .. last - 1 of ``solutions``
    in turn, in one call.

    Pair p is the SVM between classes solutions.pairs[p, 0] = s (y = +1)
    and solutions.pairs[p, 1] = t (y = -1). After each, the cache frees the
    blocks that only that pair could use (see ``KernelRowCache.retire_pair``):
    each one-vs-one pair is solved once. One call for a run of pairs: with
    one-vs-one over many small classes (1,000 classes of 5 documents:
    499,500 pairs of 10 variables) a call per pair, its arrays and its
    handoffs of the GIL between the threads cost more than solving it.

    Parameters
    ----------
    cache : KernelRowCache
    solutions : PairSolutions
        The pairs (class blocks of the cache's posting index); receives pair
        p's dual variables (class s's rows first), intercept b* (decision =
        sum_k alpha_k y_k K(x_k, x) + b), iterations, dual objective
        sum(alpha) - 1/2 alpha'Q alpha, and status: CONVERGED;
        MAX_ITER_REACHED; STALLED (steps no longer change alpha, or the gap
        no longer falls, within G's rounding); UNRESOLVED (the gap fell below
        tol, but on an exact G it stays above: see STATUS_UNRESOLVED).
    first, last : int
        The pairs solved.
    box : ndarray of shape (n_rows,)
        Box bound of every row's dual variable (C times its class's and its
        own weight), rows in the posting index's order (sorted by class).
    tol : float
        Stop when the maximal violating pair's gap is <= tol.
    shrinking : bool or "auto"
        True: a shrinking pass every min(l, 1000) iterations (libsvm's
        schedule); "auto": the same, its first pass once 2 l iterations
        are done (a pair converging in fewer is never shrunk).
    max_iter : int
        Iteration limit; -1 for libsvm's own, ``max(10**7, 100 l)`` with l
        the pair's size (``libsvm_iteration_cap``).

    Everything is checked before the first pair: the solver writes through
    pointers into the solutions' arrays.
    """
    cdef PostingIndex index = cache.index
    if box.shape[0] != index.block_start[index.n_blocks]:
        raise ValueError(f"box has {box.shape[0]} bounds for "
                         f"{index.block_start[index.n_blocks]} rows")
    cdef const int64_t[:, ::1] pairs = solutions.pairs
    cdef float64_t[::1] alpha_all = solutions.alpha
    cdef const int64_t[::1] alpha_start = solutions.alpha_start
    cdef float64_t[::1] intercepts = solutions.intercept
    cdef int64_t[::1] n_iters = solutions.n_iter
    cdef float64_t[::1] objectives = solutions.objective
    cdef int32_t[::1] statuses = solutions.status
    cdef intp_t n_pairs = pairs.shape[0]
    if not 0 <= first <= last <= n_pairs:
        raise ValueError(f"pairs {first} .. {last} of {n_pairs}")
    if (pairs.shape[1] != 2 or alpha_start.shape[0] != n_pairs + 1
            or intercepts.shape[0] != n_pairs or n_iters.shape[0] != n_pairs
            or objectives.shape[0] != n_pairs or statuses.shape[0] != n_pairs
            or alpha_start[first] < 0 or alpha_start[last] > alpha_all.shape[0]):
        # (alpha_start is read only where its length is right.)
        raise ValueError(
            f"solutions' arrays do not fit their {n_pairs} pairs: alpha_start "
            f"{alpha_start.shape[0]} offsets"
            + (f" up to {alpha_start[last]}" if alpha_start.shape[0] == n_pairs + 1 else "")
            + f", alpha {alpha_all.shape[0]}, intercept {intercepts.shape[0]}, n_iter "
            f"{n_iters.shape[0]}, objective {objectives.shape[0]}, status "
            f"{statuses.shape[0]}")
    cdef intp_t p, k, cls_s, cls_t, start_s, start_t, n_s, n_t, l
    cdef intp_t largest_l = 1, largest_blocks = 1
    for p in range(first, last):
        cls_s = pairs[p, 0]
        cls_t = pairs[p, 1]
        if not (0 <= cls_s < index.n_blocks and 0 <= cls_t < index.n_blocks
                and cls_s != cls_t):
            raise ValueError(f"pair {p}: classes ({cls_s}, {cls_t}) of {index.n_blocks}")
        n_s = index.block_start[cls_s + 1] - index.block_start[cls_s]
        n_t = index.block_start[cls_t + 1] - index.block_start[cls_t]
        if alpha_start[p + 1] - alpha_start[p] != n_s + n_t:
            raise ValueError(f"pair {p} has {alpha_start[p + 1] - alpha_start[p]} dual "
                             f"variables for {n_s + n_t} rows")
        largest_l = max(largest_l, n_s + n_t)
        largest_blocks = max(largest_blocks, (n_s + SCAN_BLOCK - 1) // SCAN_BLOCK
                             + (n_t + SCAN_BLOCK - 1) // SCAN_BLOCK)
    # The work arrays of the largest pair, carved, each 64-byte aligned, from
    # one allocation and used by every pair in turn.
    cdef intp_t stride = (largest_l + 7) & ~7, block_stride = (largest_blocks + 7) & ~7
    cdef intp_t row_stride = (cache.largest + 1 + 7) & ~7
    work = np.empty(7 * stride + 2 * block_stride + 8)
    # acc must start at zero (kernel rows accumulate into it, and leave it
    # zeroed); scratch may not.
    row_work = np.zeros(2 * row_stride + 8)
    active = np.empty(largest_l, dtype=np.int32)
    # NULL throughout: release_held_rows sets back what a pair held.
    held = np.zeros(2 * largest_l, dtype=np.uintp)
    held_ahead = np.zeros(largest_l, dtype=np.int8)
    cdef float64_t[::1] work_v = work, row_work_v = row_work
    cdef float64_t* at = aligned_64(&work_v[0])
    cdef float64_t* row_at = aligned_64(&row_work_v[0])
    cdef int32_t[::1] active_v = active
    cdef size_t[::1] held_v = held
    cdef char[::1] held_ahead_v = held_ahead
    cdef Pair P
    P.G = at
    P.G_bar = at + stride
    P.C = at + 2 * stride
    P.QD = at + 3 * stride
    P.up_mask = at + 4 * stride
    P.low_mask = at + 5 * stride
    P.obj = at + 6 * stride
    P.up_blocks = at + 7 * stride
    P.obj_blocks = at + 7 * stride + block_stride
    P.active = &active_v[0]
    P.acc = row_at
    P.scratch = row_at + row_stride
    P.single = cache.single
    P.held = <const void**> &held_v[0]
    P.held_ahead = &held_ahead_v[0]
    # Read at each call, not once at import: after os.fork() from another
    # thread, that thread is the child's main thread.
    P.signals_here = threading.get_ident() == threading.main_thread().ident
    P.computing = 0.0
    cdef int64_t n_iter, pair_max_iter
    cdef int shrink_mode = SHRINK_AUTO if shrinking == "auto" else (
        SHRINK_ON if shrinking else SHRINK_OFF)
    cdef float64_t objective
    with nogil:
        for p in range(first, last):
            cls_s = pairs[p, 0]
            cls_t = pairs[p, 1]
            start_s = index.block_start[cls_s]
            start_t = index.block_start[cls_t]
            n_s = index.block_start[cls_s + 1] - start_s
            n_t = index.block_start[cls_t + 1] - start_t
            l = n_s + n_t
            P.l = l
            P.n_s = n_s
            P.start_s = start_s
            P.start_t = start_t
            P.cls_s = cls_s
            P.cls_t = cls_t
            P.alpha = &alpha_all[alpha_start[p]]
            P.held_fetches = 0
            for k in range(l):
                P.alpha[k] = 0.0
                if k < n_s:
                    P.C[k] = box[start_s + k]
                    P.QD[k] = kernel_self(cache.kernel, cache.rows, start_s + k)
                else:
                    P.C[k] = box[start_t + k - n_s]
                    P.QD[k] = kernel_self(cache.kernel, cache.rows, start_t + k - n_s)
                if P.single:
                    # The diagonal rounded like the stored rows: one float32 kernel.
                    P.QD[k] = <float32_t> P.QD[k]
            pair_max_iter = libsvm_iteration_cap_of(l) if max_iter < 0 else max_iter
            n_iter = 0
            try:
                if index.hashed:
                    # Class t's rows against class s's hash table, which the
                    # run's next pairs (s, t + 1), ... find in cache; the same
                    # values either way round (see sweep_cross).
                    cache.sweep_cross(cls_t, cls_s, P.acc, P.scratch, P.signals_here)
                else:
                    cache.sweep_cross(cls_s, cls_t, P.acc, P.scratch, P.signals_here)
                if l <= HOLD_AHEAD_MAX:
                    hold_small_pair(cache, &P)
                statuses[p] = solve_pair_core(cache, &P, tol, shrink_mode, pair_max_iter,
                                              &n_iter)
            finally:
                release_held_rows(cache, &P)
            cache.retire_pair(cls_s, cls_t)
            intercepts[p] = intercept(&P)
            n_iters[p] = n_iter
            # With G = Q a - 1: sum(a) - a'Qa/2 = -sum_k a_k (G_k - 1) / 2.
            objective = 0.0
            for k in range(l):
                objective -= P.alpha[k] * (P.G[k] - 1.0)
            objectives[p] = objective / 2


def one_vs_one_coefficients(solutions, const int64_t[::1] class_start):
    """The support vectors and libsvm's ``dual_coef_`` from the pairs' duals.

    Parameters
    ----------
    solutions : PairSolutions
        Pair p's classes (s, t) and dual variables, class s's rows (in class
        order) then class t's.
    class_start : ndarray of int64
        The first row of each class in the class-sorted training rows.

    Returns
    -------
    is_sv : ndarray of bool, shape (n_rows,)
        Whether a class-sorted row has alpha > 0 in some pair.
    dual_coef : ndarray of shape (n_classes - 1, n_sv)
        libsvm's layout: pair (s, t) puts y alpha of class s's support vectors
        in row t - 1 and of class t's in row s, each in its support vector's
        column.

    Two loops over the 190 pairs' variables: in NumPy, 5 ms of a 20 Newsgroups
    fit in one thread after its last pair; compiled, a fraction of one.
    """
    cdef intp_t n_classes = class_start.shape[0] - 1
    cdef intp_t n = class_start[n_classes]
    cdef const int64_t[:, ::1] pairs = solutions.pairs
    cdef const int64_t[::1] alpha_start = solutions.alpha_start
    cdef const float64_t[::1] alpha = solutions.alpha
    cdef intp_t n_pairs = pairs.shape[0]
    cdef intp_t p, s, t, k, n_s, g, n_sv = 0
    is_sv = np.zeros(n, dtype=np.uint8)
    column = np.empty(n, dtype=np.intp)
    cdef unsigned char[::1] sv = is_sv
    cdef intp_t[::1] col = column
    with nogil:
        for p in range(n_pairs):
            s = pairs[p, 0]
            t = pairs[p, 1]
            n_s = class_start[s + 1] - class_start[s]
            for k in range(alpha_start[p + 1] - alpha_start[p]):
                if alpha[alpha_start[p] + k] > 0.0:
                    sv[(class_start[s] + k) if k < n_s else (class_start[t] + k - n_s)] = 1
        for g in range(n):
            col[g] = n_sv
            n_sv += sv[g]
    dual_coef = np.zeros((max(n_classes - 1, 0), n_sv))
    cdef float64_t[:, ::1] coef = dual_coef
    with nogil:
        for p in range(n_pairs):
            s = pairs[p, 0]
            t = pairs[p, 1]
            n_s = class_start[s + 1] - class_start[s]
            for k in range(alpha_start[p + 1] - alpha_start[p]):
                if k < n_s:
                    g = class_start[s] + k
                    if sv[g]:
                        coef[t - 1, col[g]] = alpha[alpha_start[p] + k]
                else:
                    g = class_start[t] + k - n_s
                    if sv[g]:
                        # + 0.0: no negative zeros
                        coef[s, col[g]] = -alpha[alpha_start[p] + k] + 0.0
    return is_sv.view(bool), dual_coef


# A pair's decision value within VOTE_ROUNDING (|b| + sum|coef| max|K|) of
# zero votes as an exact zero: a few ulps of the largest terms it is summed
# from, the rounding of a point lying exactly on a boundary (with K or with
# K + beta alike: Proposition 3). It was 1e-12, 4,500 ulps, which on data far
# from the origin (linear, features offset by 1e6: terms of 1e14 for decision
# values of order 1, computed to 0.02) took values up to 92 for ties: 102 of
# 200 training points voted against their own decision value's sign. The
# shift and tie tests pass from 2 ulps; 4 leaves a factor of 2.
VOTE_ROUNDING = 4 * DBL_EPSILON
cdef float64_t VOTE_ROUNDING_C = VOTE_ROUNDING


def one_vs_one_votes(const float64_t[:, :, ::1] share, const float64_t[::1] intercept,
                     const float64_t[::1] coef_sum, const float64_t[::1] K_max,
                     float64_t[:, ::1] dec, int64_t[:, ::1] votes, confidence=None):
    """Decision values, votes and confidences of every class pair, one pass.

    Parameters
    ----------
    share : ndarray of shape (n_rows, n_classes, n_classes - 1)
        ``share[i, c, r]``: the sum over class c's support vectors of their
        coefficient in column r of ``dual_coef_`` times their kernel value
        with row i (``kernel_weighted_sums``).
    intercept : ndarray of shape (n_pairs,)
        libsvm's orientation (> 0: the pair's first class).
    coef_sum : ndarray of shape (n_pairs,)
        The sum of the pair's ``|dual_coef_|``.
    K_max : ndarray of shape (n_rows,)
        Per row, the largest ``|k|`` against the support vectors.
    dec : ndarray of shape (n_rows, n_pairs), written
        ``share[i, s, t - 1] + share[i, t, s] + intercept[p]`` for pair p =
        (s, t), pairs in libsvm's order (0, 1), (0, 2), ..., (1, 2), ...
    votes : ndarray of int64, shape (n_rows, n_classes), written
        Pair p votes for s when ``dec[i, p]`` exceeds its rounding bound,
        ``VOTE_ROUNDING |intercept[p]| + (VOTE_ROUNDING coef_sum[p]) K_max[i]``
        (``VOTE_ROUNDING`` = 4 eps), else for t: a
        value within the bound counts as zero (a vote for t, as libsvm gives
        an exact zero), so that a point lying exactly on a boundary gets the
        same vote whatever the rounding, with K or with K + beta.
    confidence : ndarray of shape (n_rows, n_classes), optional, written
        scikit-learn's ovr confidence before squashing: each pair's value
        added to its first class and subtracted from its second, pair by
        pair in that order.

    In NumPy, the same work over 19,900 pairs (200 classes) took longer than
    the kernel values themselves: a dozen passes over n_rows x n_pairs arrays.
    """
    cdef intp_t n_rows = share.shape[0], n_classes = share.shape[1]
    cdef intp_t n_pairs = n_classes * (n_classes - 1) // 2
    if (share.shape[2] != max(n_classes - 1, 0) or intercept.shape[0] != n_pairs
            or coef_sum.shape[0] != n_pairs or K_max.shape[0] != n_rows
            or dec.shape[0] != n_rows or dec.shape[1] != n_pairs
            or votes.shape[0] != n_rows or votes.shape[1] != n_classes):
        raise ValueError("one_vs_one_votes: inconsistent shapes")
    cdef float64_t[:, ::1] conf
    cdef bint with_confidence = confidence is not None
    if with_confidence:
        conf = confidence
        if conf.shape[0] != n_rows or conf.shape[1] != n_classes:
            raise ValueError("one_vs_one_votes: inconsistent shapes")
    cdef intp_t i, s, t, p
    cdef float64_t d
    with nogil:
        for i in range(n_rows):
            for s in range(n_classes):
                votes[i, s] = 0
                if with_confidence:
                    conf[i, s] = 0.0
            p = 0
            for s in range(n_classes):
                for t in range(s + 1, n_classes):
                    d = share[i, s, t - 1] + share[i, t, s] + intercept[p]
                    dec[i, p] = d
                    # VOTE_ROUNDING applied term by term: its product with
                    # coef_sum K_max of 1e308 would overflow to inf, and every
                    # pair vote for its second class whatever its value.
                    if d > (VOTE_ROUNDING_C * fabs(intercept[p])
                            + (VOTE_ROUNDING_C * coef_sum[p]) * K_max[i]):
                        votes[i, s] += 1
                    else:
                        votes[i, t] += 1
                    if with_confidence:
                        conf[i, s] += d
                        conf[i, t] -= d
                    p += 1
    return dec
