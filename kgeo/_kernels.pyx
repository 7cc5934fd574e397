"""Kernels evaluated on sparse rows, without the GIL.

Every kernel here is a scalar map of one sparse dot product (plus, for the
Euclidean distance kernels, the two squared norms precomputed per row). A
kernel row is therefore computed in two steps: the dot products of one row
against a block of rows are accumulated over the block's posting lists (only
the words the rows share cost anything), then the kernel's ``map_dots`` turns
the accumulator into kernel values, zeroing it for the next row.

One kernel is not computed at all: ``PrecomputedKernel`` reads its values
from a matrix the caller gives (``SVM(kernel="precomputed")``), so that the
solver and its row cache run unchanged on any kernel.

The manifold kernels read each row as a point ``p = x / sum(x)`` of the
simplex and work with ``sqrt(p)``: the Fisher geometry of the multinomial is
that of the sphere, and ``sum_i sqrt(p_i q_i)`` is the cosine of half the
geodesic distance.

The Python layer (``kgeo/_pairwise.py``) validates inputs and builds the
kernels; this module holds only the typed loops.
"""

from cython.parallel cimport prange, threadid
from libc.float cimport DBL_MIN
from libc.math cimport INFINITY, cos, exp, fabs, log1p, pow, sqrt, tanh

from kgeo._parallel cimport Interruptible, interruptible_init, poll_signals

import math
import numbers
import reprlib
import types

import numpy as np

from .exceptions import parameter_errors

cdef float64_t PI = 3.14159265358979323846


# The arccos of the geodesic kernels is written in C, in this block, for one
# reason: GCC's target_clones. The loop that maps a block of Bhattacharyya
# coefficients to angles (for NGD, straight to its values) is compiled twice,
# for AVX2 and for the baseline x86-64 (SSE2) instruction set, and the loader
# picks the one this CPU runs:
# twice the lanes halve the cost of the arccos (half of an NGD kernel row).
# The loop that adds a word's dense column to a row's dot products is cloned
# the same way (about a fifth of a kernel row), and so is prediction's
# weighing of kernel rows by the dual coefficients.
# setup.py compiles with -ffp-contract=off, so neither copy fuses a multiply
# and an add: both give the same bits. Other compilers and platforms build
# the single portable copy.
#
# The arccos itself: arccos(1 - h) on [0, 1] as a branch-free rational
# approximation (the classic fdlibm/Cephes split: acos(c) = pi/2 - asin(c)
# below 1/2, 2 asin(sqrt((1-c)/2)) above, asin(x) = x + x R(x^2) with a (6, 4)
# rational R), so that the compiler vectorises it; libm's acos is a scalar
# call. Accuracy: a few ulp (tests check it against numpy.arccos to 4e-16
# absolute). Taking the gap h = 1 - c rather than c keeps full precision for
# close documents: the branch for c >= 1/2 only needs z = h / 2, so an exact
# h gives an exact angle, where 1 - (1 - h) would already have lost it.
cdef extern from *:
    """
    #include <math.h>
    #include <stddef.h>

    #if defined(__GNUC__) && defined(__x86_64__) && defined(__ELF__) \
        && defined(__GLIBC__) && defined(__has_attribute)
    #  if __has_attribute(target_clones)
    #    define KGEO_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
    #  endif
    #endif
    #ifndef KGEO_VECTOR_CLONES
    #  define KGEO_VECTOR_CLONES
    #endif

    /* Inlined even in long loops, so that constant tile sizes specialise it. */
    #if defined(__GNUC__)
    #  define KGEO_TILE static inline __attribute__((always_inline))
    #else
    #  define KGEO_TILE static inline
    #endif

    /* A hint to load a cache line early; nothing where GCC's builtin is missing. */
    #if defined(__GNUC__)
    #  define kgeo_prefetch(p) __builtin_prefetch(p)
    #else
    #  define kgeo_prefetch(p) ((void)(p))
    #endif

    /* Rounding can push a Bhattacharyya coefficient a few ulps outside
       [0, 1]; arccos would return NaN above 1. Selects, not early returns
       or fmin/fmax, so that the loops vectorise. */
    static inline double kgeo_clip_unit(double c) {
        return c < 0.0 ? 0.0 : (c > 1.0 ? 1.0 : c);
    }

    /* R(z) with asin(x) = x + x R(x^2) for |x| <= 1/2. */
    static inline double kgeo_asin_ratio(double z) {
        double p = z * (1.66666666666666657415e-01 + z * (-3.25565818622400915405e-01
            + z * (2.01212532134862925881e-01 + z * (-4.00555345006794114027e-02
            + z * (7.91534994289814532176e-04 + z * 3.47933107596021167570e-05)))));
        double q = 1.0 + z * (-2.40339491173441421878e+00 + z * (2.02094576023350569471e+00
            + z * (-6.88283971605453293030e-01 + z * 7.70381505559019352791e-02)));
        return p / q;
    }

    /* arccos(1 - h) for h in [0, 1] (callers clip first). */
    static inline double kgeo_angle_from_gap(double h) {
        double c = 1.0 - h;  /* exact for h <= 1/2 (Sterbenz) and where it is used */
        /* pi/2 in a high and a low part, so that pi/2 - asin(c) keeps full precision. */
        double small = 1.57079632679489655800e+00
            - (c - (6.12323399573676603587e-17 - c * kgeo_asin_ratio(c * c)));
        double z = h * 0.5;
        double s = sqrt(z);
        double large = 2.0 * (s + s * kgeo_asin_ratio(z));
        return c < 0.5 ? small : large;
    }

    /* out[a][r] = sum over j in [j0, j1), in increasing j, of
       k[a][j] * w[j][r], for rows a < R and columns r0 <= r < r0 + 4 V: the
       accumulators of a tile stay in registers (R x V vectors of 4 doubles)
       and each w[j] is loaded once per tile, where adding into out row by
       row loaded and stored every out[a][r] once per j. The same multiply
       then add, in the same order from 0.0: the same bits. R and V are
       constants where this is inlined; GCC's vector extension gives AVX2
       registers in the AVX2 clone, pairs of SSE2 registers in the other
       (unaligned, and may_alias: the vectors are read from and written to
       arrays of double). */
    #if defined(__GNUC__)
    typedef double kgeo_v4d __attribute__((vector_size(32), aligned(8), may_alias));
    KGEO_TILE void kgeo_weigh_tile(
            const double *restrict k, ptrdiff_t k_stride, const double *restrict w,
            ptrdiff_t n_r, ptrdiff_t r0, ptrdiff_t j0, ptrdiff_t j1,
            double *restrict out, ptrdiff_t out_stride, const int R, const int V) {
        kgeo_v4d acc[4][2];
        for (int a = 0; a < R; a++)
            for (int v = 0; v < V; v++)
                acc[a][v] = (kgeo_v4d){0.0, 0.0, 0.0, 0.0};
        for (ptrdiff_t j = j0; j < j1; j++) {
            const kgeo_v4d *wj = (const kgeo_v4d *)(w + j * n_r + r0);
            kgeo_v4d wv[2];
            for (int v = 0; v < V; v++)
                wv[v] = wj[v];
            for (int a = 0; a < R; a++) {
                double x = k[a * k_stride + j];
                kgeo_v4d xv = {x, x, x, x};
                for (int v = 0; v < V; v++)
                    acc[a][v] += xv * wv[v];
            }
        }
        for (int a = 0; a < R; a++)
            for (int v = 0; v < V; v++)
                *(kgeo_v4d *)(out + a * out_stride + r0 + 4 * v) = acc[a][v];
    }
    #define KGEO_WEIGH_VECTORS 1
    #endif

    /* The same for one column r (the columns left over by the vectors). */
    KGEO_TILE void kgeo_weigh_column(
            const double *restrict k, ptrdiff_t k_stride, const double *restrict w,
            ptrdiff_t n_r, ptrdiff_t r, ptrdiff_t j0, ptrdiff_t j1,
            double *restrict out, ptrdiff_t out_stride, const int R) {
        double acc[4] = {0.0, 0.0, 0.0, 0.0};
        for (ptrdiff_t j = j0; j < j1; j++)
            for (int a = 0; a < R; a++)
                acc[a] += k[a * k_stride + j] * w[j * n_r + r];
        for (int a = 0; a < R; a++)
            out[a * out_stride + r] = acc[a];
    }

    /* The tiles over R rows and all n_r columns: 8, then 4 at a time, then one. */
    KGEO_TILE void kgeo_weigh_rows_of(
            const double *restrict k, ptrdiff_t k_stride, const double *restrict w,
            ptrdiff_t n_r, ptrdiff_t j0, ptrdiff_t j1, double *restrict out,
            ptrdiff_t out_stride, const int R) {
        ptrdiff_t r0 = 0;
    #ifdef KGEO_WEIGH_VECTORS
        for (; r0 + 8 <= n_r; r0 += 8)
            kgeo_weigh_tile(k, k_stride, w, n_r, r0, j0, j1, out, out_stride, R, 2);
        for (; r0 + 4 <= n_r; r0 += 4)
            kgeo_weigh_tile(k, k_stride, w, n_r, r0, j0, j1, out, out_stride, R, 1);
    #endif
        for (; r0 < n_r; r0++)
            kgeo_weigh_column(k, k_stride, w, n_r, r0, j0, j1, out, out_stride, R);
    }

    /* A prediction's weighted sums (see kernel_weighted_sums): for the n_rows
       kernel rows k (k_stride apart) and the rows j0 <= j < j1 of the weights
       w (n_r columns), out[a * out_stride + r] = sum_j k[a][j] w[j][r]. */
    KGEO_VECTOR_CLONES
    static void kgeo_weigh_rows(const double *restrict k, ptrdiff_t k_stride,
                                ptrdiff_t n_rows, const double *restrict w, ptrdiff_t n_r,
                                ptrdiff_t j0, ptrdiff_t j1, double *restrict out,
                                ptrdiff_t out_stride) {
        ptrdiff_t a0 = 0;
        for (; a0 + 4 <= n_rows; a0 += 4)
            kgeo_weigh_rows_of(k + a0 * k_stride, k_stride, w, n_r, j0, j1,
                               out + a0 * out_stride, out_stride, 4);
        for (; a0 < n_rows; a0++)
            kgeo_weigh_rows_of(k + a0 * k_stride, k_stride, w, n_r, j0, j1,
                               out + a0 * out_stride, out_stride, 1);
    }

    /* acc[r] += v[k] * columns[k][r] for the words k = 0 .. m-1 in turn: a
       run of a row's words that a block stores as dense columns. A tile of
       acc stays in registers for the whole run, where adding one column at
       a time loaded and stored all of acc once per word (for dense rows and
       short blocks, most of the work). The same multiply then add, word
       after word (no fused multiply-add, see setup.py): the bits of adding
       the columns one at a time, in either copy. */
    #ifdef KGEO_WEIGH_VECTORS
    KGEO_TILE void kgeo_add_run_tile(double *restrict acc, const double *restrict v,
                                     const double *const *columns, int m, ptrdiff_t r0,
                                     const int V) {
        kgeo_v4d a[4];
        for (int u = 0; u < V; u++)
            a[u] = *(kgeo_v4d *)(acc + r0 + 4 * u);
        for (int k = 0; k < m; k++) {
            kgeo_v4d x = {v[k], v[k], v[k], v[k]};
            const double *column = columns[k] + r0;
            for (int u = 0; u < V; u++)
                a[u] += x * *(const kgeo_v4d *)(column + 4 * u);
        }
        for (int u = 0; u < V; u++)
            *(kgeo_v4d *)(acc + r0 + 4 * u) = a[u];
    }
    #endif

    KGEO_VECTOR_CLONES
    static void kgeo_add_scaled_run(double *restrict acc, const double *restrict v,
                                    const double *const *columns, int m, ptrdiff_t n) {
        ptrdiff_t r = 0;
    #ifdef KGEO_WEIGH_VECTORS
        for (; r + 16 <= n; r += 16)
            kgeo_add_run_tile(acc, v, columns, m, r, 4);
        for (; r + 4 <= n; r += 4)
            kgeo_add_run_tile(acc, v, columns, m, r, 1);
    #endif
        for (; r < n; r++) {
            double a = acc[r];
            for (int k = 0; k < m; k++)
                a += v[k] * columns[k][r];
            acc[r] = a;
        }
    }

    /* NGD's map in one pass: out[j] = (offset - 2 arccos(c_j)) + shift for
       c_j = dots[j], clipped, and dots[j] kept only where c_j >= near (those
       get their exact gap later), zeroed elsewhere. Returns how many it kept. */
    KGEO_VECTOR_CLONES
    static ptrdiff_t kgeo_geodesic_of_dots(double *restrict dots, double *restrict out,
                                           ptrdiff_t n, double offset, double shift,
                                           double near) {
        ptrdiff_t kept = 0;
        for (ptrdiff_t j = 0; j < n; j++) {
            double c = dots[j];
            out[j] = (offset - 2.0 * kgeo_angle_from_gap(kgeo_clip_unit(1.0 - c))) + shift;
            dots[j] = c >= near ? c : 0.0;
            kept += c >= near;
        }
        return kept;
    }

    /* The distance kernels' map (NED, RBF): the squared distance
       d = |x|^2 + |y_j|^2 - 2 dots[j], clipped at 0, into out[j] (for NED,
       negate_root: shift - sqrt(d) in the same pass), and dots[j] kept only
       where d is within near of |x|^2 + |y_j|^2, i.e. cancelled (those get
       the rows' difference later), zeroed elsewhere. Returns how many
       nonzero dots it kept. */
    KGEO_VECTOR_CLONES
    static ptrdiff_t kgeo_sq_distances_of_dots(double *restrict dots, double *restrict out,
                                               const double *restrict sq_y, ptrdiff_t n,
                                               double sq_x, double near, int negate_root,
                                               double shift) {
        ptrdiff_t kept = 0;
        for (ptrdiff_t j = 0; j < n; j++) {
            double dot = dots[j];
            double d = sq_x + sq_y[j] - 2.0 * dot;
            d = d > 0.0 ? d : 0.0;
            out[j] = negate_root ? shift - sqrt(d) : d;
            int close = (d <= near * (sq_x + sq_y[j])) & (dot != 0.0);
            dots[j] = close ? dot : 0.0;
            kept += close;
        }
        return kept;
    }

    /* angles[j] = arccos(c_j) for the coefficients c_j = dots[j], clipped. */
    KGEO_VECTOR_CLONES
    static void kgeo_angles_of_dots(const double *dots, double *angles, ptrdiff_t n) {
        for (ptrdiff_t j = 0; j < n; j++)
            angles[j] = kgeo_angle_from_gap(kgeo_clip_unit(1.0 - dots[j]));
    }
    """
    void prefetch "kgeo_prefetch"(const void* p) noexcept nogil
    float64_t clip_unit "kgeo_clip_unit"(float64_t c) noexcept nogil
    float64_t angle_from_gap "kgeo_angle_from_gap"(float64_t h) noexcept nogil
    void angles_of_dots "kgeo_angles_of_dots"(const float64_t* dots, float64_t* angles,
                                              intp_t n) noexcept nogil
    intp_t geodesic_of_dots "kgeo_geodesic_of_dots"(float64_t* dots, float64_t* out,
                                                    intp_t n, float64_t offset,
                                                    float64_t shift,
                                                    float64_t near) noexcept nogil
    intp_t sq_distances_of_dots "kgeo_sq_distances_of_dots"(
        float64_t* dots, float64_t* out, const float64_t* sq_y, intp_t n, float64_t sq_x,
        float64_t near, int negate_root, float64_t shift) noexcept nogil
    void add_scaled_run "kgeo_add_scaled_run"(float64_t* acc, const float64_t* v,
                                              const float64_t** columns, int m,
                                              intp_t n) noexcept nogil
    void weigh_rows "kgeo_weigh_rows"(const float64_t* k, intp_t k_stride, intp_t n_rows,
                                      const float64_t* w, intp_t n_r, intp_t j0, intp_t j1,
                                      float64_t* out, intp_t out_stride) noexcept nogil


def _angle_from_gap(const float64_t[::1] h):
    """angle_from_gap over an array (exposed for the accuracy tests)."""
    out = np.empty(h.shape[0])
    cdef float64_t[::1] view = out
    cdef intp_t i
    for i in range(h.shape[0]):
        view[i] = angle_from_gap(clip_unit(h[i]))
    return out


# A column in at least 1/DENSE_SHARE of a block's rows is stored dense: a
# contiguous multiply-add over the whole block then costs less than the
# scattered one over its postings (on 20 Newsgroups the few words found in
# most messages carry most of the postings' work). So is it in a short
# block, but only with at least DENSE_MIN_POSTINGS postings: in the blocks
# of a few documents of many small classes, a word in one row of five would
# cost five values instead of one. (The bound was 64 rows per block, which
# left every column of a short block of dense rows to postings: prediction
# with 24 support vectors, or pairwise_kernels' blocks of 32 rows of 1,000
# features, scattered every product one at a time.)
cdef intp_t DENSE_SHARE = 8
cdef intp_t DENSE_MIN_POSTINGS = 8


cdef inline bint stored_dense(intp_t n_postings, intp_t n_rows) noexcept nogil:
    """Whether a column of a block of ``n_rows`` rows with ``n_postings``
    nonzeros is stored as a dense column (the rule above)."""
    return n_postings >= DENSE_MIN_POSTINGS and n_postings * DENSE_SHARE >= n_rows


# The most consecutive dense-column words accumulate_dots adds in one run
# (a run's values and column pointers are kept on the stack).
cdef enum:
    RUN_WORDS = 16
# How many words ahead accumulate_dots asks for a word's posting pointers.
cdef intp_t PREFETCH_WORDS = 16
# A PostingIndex whose per-block tables of list heads would have more than
# this many entries per posting keeps them in per-block hash tables.
cdef intp_t HASHED_HEADS_BEYOND = 8


def _hashed_heads_beyond(intp_t entries_per_posting):
    """Set the table entries per posting beyond which a PostingIndex of more
    than one block hashes its list heads (0: always); returns the previous
    bound. For tests and benchmarks."""
    global HASHED_HEADS_BEYOND
    cdef intp_t before = HASHED_HEADS_BEYOND
    HASHED_HEADS_BEYOND = entries_per_posting
    return before


# The geodesic kernels' close pairs. A Bhattacharyya coefficient c is summed
# word after word, with up to about n ulp of rounding for n shared words
# (the terms of two documents of mostly single occurrences are nearly equal,
# so their roundings do not cancel; random ones give about sqrt(n)), and the
# angle arccos(c) magnifies it by c / sqrt(1 - c^2). Where that product
# could pass ANGLE_ROUNDING ulps, the pair takes its gap 1 - c from the
# rows' difference (``exact_gap``) instead, whose error is absolute: the
# rounding of the rows' square roots (about 1e-16) and about n ulp of the
# gap's sum (3e-14 in the angle at 10^5 words and c = 0.99983): from
# c >= NEAR_ONE (a factor of 71) for pairs of rows of at
# most ANGLE_ROUNDING / 71 = 256 words each, from lower c where both rows
# are longer (``exact_from``), down to CANDIDATE_FROM. So an angle is within
# about 18,000 ulp (4e-12) of the one of the rows as given above
# CANDIDATE_FROM, and within 0.58 n ulp below it, for rows of up to about
# 2 10^5 words; beyond, the difference route's own sum carries about n ulp
# of the gap too (a review: 33,600 ulp at 10^6 words and c = 0.5). With the one
# bound 0.9999 for all, a pair of 10^5 words at c = 0.99983 came out 6e-11
# off (a review, against 100-digit arithmetic). One bound of 0.9 or 0.999
# for all pairs was tried: the difference route is a merge of two rows per
# pair, and on histograms of large counts (Poisson(50) or (500) over 256
# bins, where nearly every pair has c > 0.99) ngd took 4-8x as long.
cdef float64_t NEAR_ONE = 0.9999
cdef float64_t ANGLE_ROUNDING = 18176.0
cdef float64_t CANDIDATE_FROM = 0.5
# NED's, RBF's and the hyperbolic kernel's squared distances within this
# share of |x|^2 + |y|^2 get theirs from the rows' difference: below it, the
# cancellation in |x|^2 + |y|^2 - 2 <x, y> leaves a few ulps of the scale,
# up to ~1e-8 of it after the square root.
cdef float64_t CLOSE_SHARE = 1.0 - 0.9999

# The bounds above, for the tests.
EXACT_GAP_FROM = NEAR_ONE
EXACT_GAP_CANDIDATES_FROM = CANDIDATE_FROM


cdef inline float64_t exact_from(intp_t n_words) noexcept nogil:
    """The coefficient from which a pair of rows of at most ``n_words``
    words each takes the difference route: where c / sqrt(1 - c^2) reaches
    ANGLE_ROUNDING / n_words, between CANDIDATE_FROM and NEAR_ONE."""
    cdef float64_t a, c
    if n_words <= 0:
        return NEAR_ONE
    a = ANGLE_ROUNDING / <float64_t> n_words
    c = a / sqrt(1.0 + a * a)
    if c > NEAR_ONE:
        return NEAR_ONE
    if c < CANDIDATE_FROM:
        return CANDIDATE_FROM
    return c


def _exact_from(n_words):
    """``exact_from`` for the tests."""
    return exact_from(n_words)


# --------------------------------------------------------------------------
# Row storage
# --------------------------------------------------------------------------

cdef class RowSet:
    """Rows of a CSR matrix, transformed for one kernel.

    Parameters
    ----------
    data, indices, indptr : ndarray
        CSR arrays (float64, int32 with sorted rows, int64), already
        transformed (``sqrt(p)`` for the manifold kernels).
    n_features : int
        Number of columns.
    """

    def __cinit__(self, data, indices, indptr, intp_t n_features):
        data = np.ascontiguousarray(data, dtype=np.float64)
        indices = np.ascontiguousarray(indices, dtype=np.int32)
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        # Summed row by row in index order: the same order (hence the same
        # rounding) as a row's dot product with itself in the posting lists.
        sq_norms = _row_sq_norms(data, indptr)
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.sq_norms = sq_norms
        self.n_rows = indptr.shape[0] - 1
        self.n_features = n_features
        self.arrays = (data, indices, indptr, sq_norms)

    @property
    def squared_norms(self):
        return np.asarray(self.sq_norms)


def _row_sq_norms(const float64_t[::1] data, const int64_t[::1] indptr):
    cdef intp_t n = indptr.shape[0] - 1
    cdef intp_t i, p
    cdef float64_t s
    out = np.zeros(n, dtype=np.float64)
    cdef float64_t[::1] out_view = out
    with nogil:
        for i in range(n):
            s = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                s = s + data[p] * data[p]
            out_view[i] = s
    return out


# The least work (values read or computed) worth an OpenMP parallel region,
# or worker threads for class pairs. Below it a region costs more than its
# work: the idle workers spin for a while after it, stealing the caller's
# core when small calls come in a row, and on a loaded machine the region
# waits at its end for a worker the scheduler has not run yet (a fit of 20
# documents took 11-39 ms on two threads, 1.3 ms on one, while another
# process kept both cores busy). A variable only so that tests can run the
# parallel loops on small inputs (_set_parallel_min_work).
_PARALLEL_MIN_VALUES = 1 << 18
cdef int64_t parallel_min_work = _PARALLEL_MIN_VALUES


cdef int threads_for(int n_threads, int64_t work) noexcept nogil:
    """``n_threads`` (at least 1) for ``work`` worth sharing, else 1."""
    if work < parallel_min_work or n_threads < 1:
        return 1
    return n_threads


def parallel_threads(int n_threads, int64_t work):
    """`threads_for` for Python callers: the threads to use for ``work``."""
    return threads_for(n_threads, work)


def _set_parallel_min_work(int64_t work):
    """Set the least work shared by threads; returns the previous bound.
    For tests, which run the parallel loops on small inputs (0: always)."""
    global parallel_min_work
    previous = parallel_min_work
    parallel_min_work = work
    return previous


def divide_rows_by_max(const float64_t[::1] data, const int64_t[::1] indptr,
                       int n_threads=1):
    """Every CSR row's values divided by the row's largest value (a new array).

    The first step of ``sqrt(x / sum(x))``: with the largest value 1, the row
    sum stays finite for rows of huge (finite) values. Rows are split over
    ``n_threads`` threads, which also share the first touch of the output's
    pages; the bits are those of NumPy's element-wise division.
    """
    cdef intp_t n_rows = indptr.shape[0] - 1
    out = np.empty(data.shape[0], dtype=np.float64)
    cdef float64_t[::1] scaled = out
    cdef intp_t i, p
    cdef float64_t top
    n_threads = threads_for(n_threads, data.shape[0])
    with nogil:
        for i in prange(n_rows, schedule="static", num_threads=n_threads):
            top = -INFINITY
            for p in range(indptr[i], indptr[i + 1]):
                if data[p] > top:
                    top = data[p]
            for p in range(indptr[i], indptr[i + 1]):
                scaled[p] = data[p] / top
    return out


def sqrt_of_row_shares(float64_t[::1] values, const int64_t[::1] indptr,
                       const float64_t[::1] row_sums, const float64_t[::1] counts,
                       int n_threads=1):
    """``values[p] = sqrt(values[p] / row_sums[i])`` for the entries p of row i, in place.

    ``values`` are ``counts`` divided by their row's largest count (as
    ``divide_rows_by_max`` leaves them), ``row_sums`` their row sums. A share
    that the divisions leave below float64's normal range (counts spanning
    more than 1e308 within a row) lost digits or became 0 where its square
    root is an ordinary number: ``[1e200, 1e-200]`` has shares 1 and 1e-400,
    whose roots are 1 and 1e-200. Such an entry takes the square roots before
    dividing instead, ``sqrt(count) / sqrt(top) / sqrt(sum)``; every other
    entry keeps ``sqrt(share)``, the bits of NumPy's element-wise route.
    """
    cdef intp_t n_rows = indptr.shape[0] - 1
    cdef intp_t i, p, q
    cdef float64_t total, share, top
    n_threads = threads_for(n_threads, values.shape[0])
    with nogil:
        for i in prange(n_rows, schedule="static", num_threads=n_threads):
            total = row_sums[i]
            top = 0.0  # the row's largest count, found only if a share underflows
            for p in range(indptr[i], indptr[i + 1]):
                share = values[p] / total
                if share < DBL_MIN and counts[p] > 0.0:
                    if top == 0.0:
                        for q in range(indptr[i], indptr[i + 1]):
                            if counts[q] > top:
                                top = counts[q]
                    share = sqrt(counts[p]) / sqrt(top) / sqrt(total)
                else:
                    share = sqrt(share)
                values[p] = share


def take_rows(const float64_t[::1] data, const int32_t[::1] indices,
              const int64_t[::1] indptr, const int64_t[::1] rows,
              int64_t[::1] out_indptr, int n_threads=1):
    """The CSR rows ``rows`` of (data, indices, indptr), copied in that order.

    ``out_indptr`` (len(rows) + 1 entries, filled here) receives the new row
    pointers; returns the new (data, indices). SciPy's ``X[rows]`` does the
    same in one thread: here the rows are split over ``n_threads`` threads,
    which also share the first touch of the output's pages (a fit copies its
    support vectors, on 20 Newsgroups 9.6 MB of new pages, after its last
    class pair, while the other cores wait).
    """
    cdef intp_t n = rows.shape[0], r, p, start
    out_indptr[0] = 0
    for r in range(n):
        out_indptr[r + 1] = out_indptr[r] + indptr[rows[r] + 1] - indptr[rows[r]]
    out_data = np.empty(out_indptr[n], dtype=np.float64)
    out_indices = np.empty(out_indptr[n], dtype=np.int32)
    cdef float64_t[::1] od = out_data
    cdef int32_t[::1] oi = out_indices
    n_threads = threads_for(n_threads, out_indptr[n])
    with nogil:
        for r in prange(n, schedule="static", num_threads=n_threads):
            start = indptr[rows[r]]
            for p in range(out_indptr[r + 1] - out_indptr[r]):
                od[out_indptr[r] + p] = data[start + p]
                oi[out_indptr[r] + p] = indices[start + p]
    return out_data, out_indices


def dense_rows_to_csr(const float64_t[:, ::1] X, float64_t[::1] data,
                      int32_t[::1] indices, int32_t[::1] indptr, int64_t k):
    """Append the nonzero entries of the C-ordered rows X to CSR arrays, from
    entry ``k`` on: each row's entries in column order, and its end in
    ``indptr[i + 1]`` (``indptr`` starting at the pointer of X's first row).
    Returns the next entry, or -1 if the entries would outrun ``data``.

    NaN is an entry and -0.0 is not, as for ``np.count_nonzero`` and SciPy's
    ``csr_matrix(X)``, which builds the same arrays by way of int64 COO
    indices and a conversion: 3 s and 610 MB above a 100,000 x 100 dense
    input predicted, against one pass here.
    """
    cdef intp_t n_rows = X.shape[0], n_cols = X.shape[1], i, j
    cdef int64_t capacity = data.shape[0]
    cdef float64_t value
    with nogil:
        for i in range(n_rows):
            for j in range(n_cols):
                value = X[i, j]
                if value != 0.0:
                    if k == capacity:
                        break
                    data[k] = value
                    indices[k] = <int32_t> j
                    k += 1
            else:
                indptr[i + 1] = <int32_t> k
                continue
            k = -1
            break
    return k


def centred_rows(const float64_t[::1] data, const int32_t[::1] indices,
                 const int64_t[::1] indptr, const int64_t[::1] rows,
                 const float64_t[::1] centre, int64_t[::1] out_indptr,
                 float64_t[::1] out_data=None, int32_t[::1] out_indices=None):
    """The rows ``rows`` of the canonical CSR (data, indices, indptr), each
    moved by ``-centre``: entry j of a row is ``x_j - centre[j]`` (x_j 0
    where the row has none), stored where it is not 0 (-0.0 is not, NaN is,
    as ``dense_rows_to_csr`` stores the row made dense and moved).

    Without ``out_data``, counts: ``out_indptr[r + 1]`` receives the
    entries of the r-th row. With it, ``out_indptr`` holds the rows' first
    entries (the counts summed) and the entries are stored. A slice of rows
    made dense at a time cost 4x the time (each slice's fresh pages, made
    twice), and X made dense whole 5x its size in memory.
    """
    cdef intp_t n_rows = rows.shape[0], n_cols = centre.shape[0], r, j
    cdef int64_t p, end, k, stop
    cdef float64_t value
    cdef bint store = out_data is not None, changed = False
    if out_indptr.shape[0] != n_rows + 1:
        raise ValueError(f"out_indptr must hold {n_rows + 1} entries, got "
                         f"{out_indptr.shape[0]}")
    if n_rows and not 0 <= np.min(rows) <= np.max(rows) < indptr.shape[0] - 1:
        raise ValueError(f"rows must lie in [0, {indptr.shape[0] - 1})")
    # The row pointers read: X's arrays must hold the entries they point to.
    if not (indptr[0] == 0 and np.all(np.diff(indptr) >= 0)
            and indptr[indptr.shape[0] - 1] <= min(data.shape[0], indices.shape[0])):
        raise ValueError("indptr must rise from 0 to at most the entries of data and indices")
    if store and (out_indices is None or out_indices.shape[0] != out_data.shape[0]
                  or out_data.shape[0] != out_indptr[n_rows] or out_indptr[0] != 0
                  or np.any(np.diff(out_indptr) < 0)):
        raise ValueError("out_indptr must rise from 0 to the entries of out_data and "
                         "out_indices")
    with nogil:
        for r in range(n_rows):
            p = indptr[rows[r]]
            end = indptr[rows[r] + 1]
            k = out_indptr[r] if store else 0
            stop = out_indptr[r + 1] if store else 0
            for j in range(n_cols):
                if p < end and indices[p] == j:
                    value = data[p] - centre[j]
                    p += 1
                else:
                    value = 0.0 - centre[j]
                if value != 0.0:
                    if store:
                        # The counts are the first pass's: X written
                        # meanwhile (by another thread) must not make this
                        # one write past the row's entries.
                        if k == stop:
                            changed = True
                            break
                        out_data[k] = value
                        out_indices[k] = <int32_t> j
                    k += 1
            if changed or (store and k != stop):
                changed = True
                break
            if not store:
                out_indptr[r + 1] = k
    if changed:
        raise ValueError("X changed while it was read (another thread writing it?)")
    return None


def dense_rows_summary(const float64_t[:, ::1] X, int64_t[::1] row_nnz):
    """What prediction checks of C-ordered dense rows, in one pass: each
    row's nonzero entries into ``row_nnz`` (NaN is one, -0.0 is not, as in
    ``dense_rows_to_csr``), and returns how many values are not finite and
    how many are negative. Three NumPy passes (finiteness, signs, empty
    rows) made predicting 2,000 x 30,000 dense counts 1.85x slower than
    converting them whole (a review)."""
    cdef intp_t n_rows = X.shape[0], n_cols = X.shape[1], i, j
    cdef int64_t not_finite = 0, negative = 0, nnz
    cdef float64_t value
    cdef const float64_t* row
    with nogil:
        for i in range(n_rows):
            row = &X[i, 0] if n_cols else NULL
            nnz = 0
            for j in range(n_cols):
                value = row[j]
                # A zero (most of a wide count matrix) costs one compare.
                if value != 0.0:
                    nnz += 1
                    if not (fabs(value) <= LARGEST_FLOAT64):
                        not_finite += 1
                    elif value < 0.0:
                        negative += 1
            row_nnz[i] = nnz
    return not_finite, negative


# The multiplier of Fibonacci hashing (2**32 / golden ratio): a word's slot
# in a table of 2**bits is the top bits of word * FIBONACCI mod 2**32.
cdef unsigned int FIBONACCI = 2654435769u


def hashed_lists(RowSet rows, const int64_t[::1] block_start):
    """The posting lists of a hashed PostingIndex.

    Each block's postings are sorted by word, rows increasing within a
    word (as in the tables' layout, so a block's lists lie together); each
    block has a hash table of its words' list heads, open addressing with
    linear probing, at most a quarter full (half full, the probes of the
    words a block lacks took 1.4x as long: 1,000 classes of 5 documents).

    Returns
    -------
    post_row : ndarray of int32, the row of each posting within its block
    post_val : ndarray of float64
    heads : ndarray of int64, the ListHead slots (two int64 each)
    head_start : ndarray of int64, shape (n_blocks + 1,), first slot per block
    head_shift : ndarray of int32, shape (n_blocks,), 32 - log2(table size)
    """
    data, indices, indptr, _ = rows.arrays
    # The rows' entries (a RowSet's arrays may hold more around them).
    data = data[indptr[0]:indptr[rows.n_rows]]
    indices = indices[indptr[0]:indptr[rows.n_rows]]
    n_blocks = block_start.shape[0] - 1
    F = max(rows.n_features, 1)
    row_block = np.repeat(np.arange(n_blocks, dtype=np.int64), np.diff(block_start))
    entry_row = np.repeat(np.arange(rows.n_rows, dtype=np.int64), np.diff(indptr))
    keys = row_block[entry_row] * F + indices
    # Stable: the entries of a (block, word) stay in row order.
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    entry_row = entry_row[order]
    post_val = np.ascontiguousarray(data[order])
    del order
    run_block = keys // F
    post_row = (entry_row - np.asarray(block_start)[run_block]).astype(np.int32)
    del entry_row
    # keys[:size - 1], not keys[:-1]: the module compiles with wraparound off.
    first = np.flatnonzero(np.r_[True, keys[1:] != keys[:keys.size - 1]]) if keys.size else \
        np.zeros(0, dtype=np.int64)
    run_word = (keys[first] % F).astype(np.int32)
    run_block = run_block[first]
    del keys
    run_count = np.diff(np.r_[first, post_val.shape[0]]).astype(np.int32)
    words = np.bincount(run_block, minlength=n_blocks)
    # Tables of at least 2 slots and at least 4 times the block's words.
    bits = np.maximum(1, np.ceil(np.log2(np.maximum(4 * words, 2))).astype(np.int64))
    head_start = np.r_[0, np.cumsum(1 << bits)].astype(np.int64)
    head_shift = (32 - bits).astype(np.int32)
    heads = np.empty(2 * head_start[n_blocks], dtype=np.int64)
    fill_heads(run_block.astype(np.int64), run_word, run_count, first.astype(np.int64),
               head_start, head_shift, heads)
    return post_row, post_val, heads, head_start, head_shift


cdef inline intp_t head_slot(int32_t word, int32_t shift) noexcept nogil:
    return (<unsigned int> word * FIBONACCI) >> shift


cdef void fill_heads(const int64_t[::1] run_block, const int32_t[::1] run_word,
                     const int32_t[::1] run_count, const int64_t[::1] run_start,
                     const int64_t[::1] head_start, const int32_t[::1] head_shift,
                     int64_t[::1] heads):
    # Insert every run (a block's list of a word) into its block's table,
    # whose slots (two int64 each, viewed as ListHead) ``heads`` holds; each
    # table has room for at least 4 times its block's words (hashed_lists).
    cdef ListHead* table = <ListHead*> &heads[0]
    cdef intp_t r, b, slot, mask
    with nogil:
        for slot in range(head_start[head_start.shape[0] - 1]):
            table[slot].word = -1
            table[slot].count = 0
            table[slot].start = 0
        for r in range(run_block.shape[0]):
            b = run_block[r]
            mask = head_start[b + 1] - head_start[b] - 1
            slot = head_slot(run_word[r], head_shift[b])
            while table[head_start[b] + slot].word >= 0:
                slot = (slot + 1) & mask
            table[head_start[b] + slot].word = run_word[r]
            table[head_start[b] + slot].count = run_count[r]
            table[head_start[b] + slot].start = run_start[r]


cdef class PostingIndex:
    """Posting lists of ``rows``, one set per block of consecutive rows.

    Where the blocks' tables of list heads (n_blocks * (n_features + 1)
    entries each, for the columns and the dense columns) would have more
    than HASHED_HEADS_BEYOND entries per posting, each block finds its lists
    in a hash table of its own words instead (``hashed``), and keeps no
    dense columns. With one-vs-one over many small classes the tables were
    mostly empty and far larger than the data: 1,000 classes of 5 documents
    over 105,000 words took 1.7 GB of tables for 5 MB of postings.

    Parameters
    ----------
    rows : RowSet
    block_start : array of int, shape (n_blocks + 1,)
        Increasing row offsets, from 0 to ``rows.n_rows``.
    n_threads : int, default=1
        Threads that build the blocks' lists (each block is built by one
        thread; the index is the same for any number). A hashed index is
        built by NumPy, in one.
    """

    def __cinit__(self, RowSet rows, block_start, int n_threads=1):
        block_start = np.ascontiguousarray(block_start, dtype=np.int64)
        if (block_start.ndim != 1 or block_start.shape[0] < 2
                or block_start[0] != 0 or block_start[len(block_start) - 1] != rows.n_rows
                or np.any(np.diff(block_start) < 0)):
            raise ValueError(
                f"block_start must increase from 0 to {rows.n_rows}, "
                f"got {block_start!r}")
        cdef intp_t n_blocks = block_start.shape[0] - 1
        cdef intp_t F = rows.n_features
        cdef int64_t[::1] heads_view
        self.rows = rows
        self.n_blocks = n_blocks
        self.block_start = block_start
        self.hashed = (n_blocks > 1 and n_blocks * (F + 1)
                       > HASHED_HEADS_BEYOND * max(rows.indptr[rows.n_rows], 1))
        if self.hashed:
            post_row, post_val, heads, head_start, head_shift = hashed_lists(rows, block_start)
            heads_view = heads
            self.heads = <const ListHead*> &heads_view[0]
            self.head_start = head_start
            self.head_shift = head_shift
            self.n_dense = 0
            self.post_row = post_row
            self.post_val = post_val
            self.colptr = self.dense_ptr = np.zeros(0, dtype=np.int64)
            self.dense_val = np.zeros(0)
            self.arrays = (block_start, post_row, post_val, heads, head_start, head_shift)
            return
        self.heads = NULL
        self.head_start = np.zeros(0, dtype=np.int64)
        self.head_shift = np.zeros(0, dtype=np.int32)
        n_threads = threads_for(min(n_threads, n_blocks), rows.indptr[rows.n_rows])
        colptr = np.zeros(n_blocks * (F + 1) + 1, dtype=np.int64)
        dense_ptr = np.full(n_blocks * (F + 1), -1, dtype=np.int64)
        # Per block: its dense columns, then where its dense values start.
        block_dense = np.zeros(n_blocks, dtype=np.int64)
        dense_start = np.zeros(n_blocks + 1, dtype=np.int64)
        cdef int64_t[::1] cp = colptr
        cdef int64_t[::1] dp = dense_ptr
        cdef int64_t[::1] nd = block_dense
        cdef int64_t[::1] ds = dense_start
        cdef const int64_t[::1] bs = block_start
        cdef intp_t b, i, p, w, base, pos, n_b, offset
        # Counting sort of the nonzeros by (block, column); rows stay in
        # increasing order inside every posting list. Each block's share of
        # the table is its own, so blocks are counted and filled in parallel;
        # the prefix sums between the passes run over the whole table.
        with nogil:
            for b in prange(n_blocks, schedule="dynamic", chunksize=1, num_threads=n_threads):
                for i in range(bs[b], bs[b + 1]):
                    for p in range(rows.indptr[i], rows.indptr[i + 1]):
                        cp[b * (F + 1) + rows.indices[p] + 1] += 1
                if bs[b + 1] - bs[b] >= DENSE_MIN_POSTINGS:
                    for w in range(F):
                        if stored_dense(cp[b * (F + 1) + w + 1], bs[b + 1] - bs[b]):
                            nd[b] += 1
            for b in range(n_blocks):
                ds[b + 1] = ds[b] + nd[b] * (bs[b + 1] - bs[b])
            # Dense columns leave the posting lists; their values are laid
            # out block by block, column by column.
            for b in prange(n_blocks, schedule="dynamic", chunksize=1, num_threads=n_threads):
                base = b * (F + 1)
                n_b = bs[b + 1] - bs[b]
                offset = ds[b]
                if nd[b] > 0:
                    for w in range(F):
                        if stored_dense(cp[base + w + 1], n_b):
                            dp[base + w] = offset
                            offset = offset + n_b
                            cp[base + w + 1] = 0
            for p in range(n_blocks * (F + 1)):
                cp[p + 1] += cp[p]
        cdef intp_t n_postings = colptr[colptr.shape[0] - 1]
        post_row = np.empty(n_postings, dtype=np.int32)
        post_val = np.empty(n_postings, dtype=np.float64)
        dense_val = np.zeros(dense_start[n_blocks], dtype=np.float64)
        cdef int32_t[::1] prow = post_row
        cdef float64_t[::1] pval = post_val
        cdef float64_t[::1] dval = dense_val
        # cp[e] serves as the next free slot of posting list e while filling,
        # which leaves it at the start of list e + 1: shifted back by one
        # entry afterwards (no copy of the n_blocks * n_features table).
        with nogil:
            for b in prange(n_blocks, schedule="dynamic", chunksize=1, num_threads=n_threads):
                base = b * (F + 1)
                for i in range(bs[b], bs[b + 1]):
                    for p in range(rows.indptr[i], rows.indptr[i + 1]):
                        w = base + rows.indices[p]
                        if dp[w] >= 0:
                            dval[dp[w] + i - bs[b]] = rows.data[p]
                            continue
                        pos = cp[w]
                        prow[pos] = <int32_t>(i - bs[b])
                        pval[pos] = rows.data[p]
                        cp[w] = pos + 1
            for p in range(n_blocks * (F + 1), 0, -1):
                cp[p] = cp[p - 1]
            cp[0] = 0
        self.n_dense = int(block_dense.sum())
        self.colptr = colptr
        self.post_row = post_row
        self.post_val = post_val
        self.dense_ptr = dense_ptr
        self.dense_val = dense_val
        self.arrays = (block_start, colptr, post_row, post_val, dense_ptr, dense_val)

    @property
    def nbytes(self):
        return sum(a.nbytes for a in self.arrays)


# --------------------------------------------------------------------------
# The kernel family
# --------------------------------------------------------------------------

cdef class Kernel:
    """Base of the kernel family: ``k(x, y) = f(<x, y>, |x|^2, |y|^2) + shift``."""

    def __cinit__(self, *args, **kwargs):
        self.shift = 0.0
        self.on_simplex = False
        self.geodesic = False
        self.overflowed = False
        self.precomputed = False
        self.half_space = False

    cdef intp_t map_dots(self, float64_t* dots, float64_t sq_x,
                         const float64_t* sq_y, float64_t* out,
                         intp_t n, float64_t near) noexcept nogil:
        # Overridden by every concrete kernel. Returns how many (nonzero)
        # entries it left in dots for exact treatment (the geodesic kernels
        # keep those with c >= near there, NED, RBF and the hyperbolic
        # kernel their close pairs), 0 when dots is all zero again.
        return 0

    cdef float64_t at_angle(self, float64_t angle) noexcept nogil:
        # The value at half-angle arccos(c) = angle (geodesic kernels only).
        return 0.0

    cdef float64_t at_gap(self, float64_t gap, float64_t sq_x, float64_t sq_y) noexcept nogil:
        # The value of a pair map_dots left in dots, from the exact half
        # squared distance of the two rows (``exact_gap``) and their squared
        # norms: through the angle for the geodesic kernels, whose rows are
        # unit vectors (gap = 1 - c).
        return self.at_angle(angle_from_gap(clip_unit(gap)))


cdef class LinearKernel(Kernel):
    cdef intp_t map_dots(self, float64_t* dots, float64_t sq_x,
                         const float64_t* sq_y, float64_t* out,
                         intp_t n, float64_t near) noexcept nogil:
        cdef intp_t j
        for j in range(n):
            out[j] = dots[j] + self.shift
            dots[j] = 0.0
        return 0


cdef inline float64_t integer_power(float64_t base, float64_t degree) noexcept nogil:
    # Degrees 2 to 4 by products, as libsvm raises to its integer degree:
    # libm's pow cost 17 ns a value (2 for a linear one), 85 % of a poly
    # kernel row. b*b is correctly rounded; b*b*b and (b*b)*(b*b) round
    # twice (1.5 ulp at most, against pow's 1). Other degrees keep pow,
    # whose error does not grow with the degree as products' does.
    if degree == 2.0:
        return base * base
    if degree == 3.0:
        return base * base * base
    if degree == 4.0:
        base = base * base
        return base * base
    return pow(base, degree)


cdef class PolynomialKernel(Kernel):
    """``(gamma <x, y> + coef0)^degree``.

    The one kernel whose values can overflow float64 when every row's
    squared norm is finite (which ``prepare_rows`` checks): the others are
    bounded by the norms (linear, NED), by 1 (RBF, sigmoid, the geodesic
    kernels) or by their diagonal (the heat kernels). An overflow sets
    ``overflowed``, which the callers turn into a ValueError.
    """
    cdef float64_t gamma, coef0, degree

    def __init__(self, float64_t gamma, float64_t coef0, float64_t degree):
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree

    cdef intp_t map_dots(self, float64_t* dots, float64_t sq_x,
                         const float64_t* sq_y, float64_t* out,
                         intp_t n, float64_t near) noexcept nogil:
        cdef intp_t j
        cdef float64_t value
        cdef bint overflow = False
        # In locals: the writes to out and dots could alias self's fields,
        # which would keep degree's test inside the loop.
        cdef float64_t gamma = self.gamma, coef0 = self.coef0, degree = self.degree
        cdef float64_t shift = self.shift
        for j in range(n):
            value = integer_power(gamma * dots[j] + coef0, degree) + shift
            out[j] = value
            # inf - inf is NaN: a test without a branch.
            overflow |= (value - value) != 0
            dots[j] = 0.0
        if overflow:
            # Threads only ever set it: which one writes first does not matter.
            flag_raise(&self.overflowed)
        return 0


cdef class RBFKernel(Kernel):
    """``exp(-gamma |x - y|^2)``.

    Close pairs take their squared distance from the rows' difference, as
    NED's do: for rows far from the origin (data around 1e8, say) the
    cancelled ``|x|^2 + |y|^2 - 2 <x, y>`` is off by ~1e-16 of the squared
    norms, which ``gamma`` can make any size.
    """
    cdef float64_t gamma

    def __init__(self, float64_t gamma):
        self.gamma = gamma

    cdef intp_t map_dots(self, float64_t* dots, float64_t sq_x,
                         const float64_t* sq_y, float64_t* out,
                         intp_t n, float64_t near) noexcept nogil:
        cdef intp_t j, kept = sq_distances_of_dots(dots, out, sq_y, n, sq_x, CLOSE_SHARE,
                                                   False, 0.0)
        for j in range(n):
            out[j] = exp(-self.gamma * out[j]) + self.shift
        return kept

    cdef float64_t at_gap(self, float64_t gap, float64_t sq_x, float64_t sq_y) noexcept nogil:
        return exp(-self.gamma * (2.0 * gap)) + self.shift


cdef class SigmoidKernel(Kernel):
    cdef float64_t gamma, coef0

    def __init__(self, float64_t gamma, float64_t coef0):
        self.gamma = gamma
        self.coef0 = coef0

    cdef intp_t map_dots(self, float64_t* dots, float64_t sq_x,
                         const float64_t* sq_y, float64_t* out,
                         intp_t n, float64_t near) noexcept nogil:
        cdef intp_t j
        for j in range(n):
            out[j] = tanh(self.gamma * dots[j] + self.coef0) + self.shift
            dots[j] = 0.0
        return 0


cdef class NegativeEuclideanKernel(Kernel):
    """``-|x - y|``.

    ``|x|^2 + |y|^2 - 2 <x, y>`` cancels when x and y are close: its rounding,
    a few ulps of ``|x|^2 + |y|^2``, would be up to ~1e-8 of the distance's
    scale after the square root. The pairs within ``CLOSE_SHARE`` (1e-4) of
    that scale are left in dots and take the distance from the rows'
    difference, as the geodesic kernels' close pairs do.
    """
    cdef intp_t map_dots(self, float64_t* dots, float64_t sq_x,
                         const float64_t* sq_y, float64_t* out,
                         intp_t n, float64_t near) noexcept nogil:
        # One pass (the root in the C loop): a second one over out was 15 %
        # of a NED row.
        return sq_distances_of_dots(dots, out, sq_y, n, sq_x, CLOSE_SHARE, True,
                                    self.shift)

    cdef float64_t at_gap(self, float64_t gap, float64_t sq_x, float64_t sq_y) noexcept nogil:
        return self.shift - sqrt(2.0 * gap)


cdef class NegativeGeodesicKernel(Kernel):
    """``offset - 2 arccos(c)``: NGD with offset 0, NGD+pi with offset pi.

    Like every geodesic kernel, its map reads the gaps ``1 - c``.
    """
    cdef float64_t offset

    def __init__(self, float64_t offset):
        self.on_simplex = True
        self.geodesic = True
        self.offset = offset

    cdef intp_t map_dots(self, float64_t* dots, float64_t sq_x,
                         const float64_t* sq_y, float64_t* out,
                         intp_t n, float64_t near) noexcept nogil:
        # One pass: a second one over out and dots took ~1.4 % of the samples of
        # an NGD fit (`perf`).
        return geodesic_of_dots(dots, out, n, self.offset, self.shift, near)

    cdef float64_t at_angle(self, float64_t angle) noexcept nogil:
        return (self.offset - 2.0 * angle) + self.shift


cdef class BhattacharyyaKernel(Kernel):
    """``c = sum_w sqrt(p_w q_w)``, the cosine of the half-angle.

    Geodesic in its routes: close pairs (see ``NEAR_ONE``) take ``1 - gap``
    from the rows' difference, so k(x, x) is 1 exactly (the summed ``sum_w p_w``
    was 1 only to a few ulps, below 1 for 131 of 300 documents), and close
    pairs keep their digits.
    """
    def __init__(self):
        self.on_simplex = True
        self.geodesic = True

    cdef intp_t map_dots(self, float64_t* dots, float64_t sq_x,
                         const float64_t* sq_y, float64_t* out,
                         intp_t n, float64_t near) noexcept nogil:
        cdef intp_t j, kept = 0
        cdef float64_t c
        for j in range(n):
            c = dots[j]
            out[j] = clip_unit(c) + self.shift
            dots[j] = c if c >= near else 0.0
            kept += c >= near
        return kept

    cdef float64_t at_angle(self, float64_t angle) noexcept nogil:
        return cos(angle) + self.shift

    cdef float64_t at_gap(self, float64_t gap, float64_t sq_x, float64_t sq_y) noexcept nogil:
        return (1.0 - clip_unit(gap)) + self.shift


cdef class GeodesicExponentialKernel(Kernel):
    """``exp(log_scale - arccos(c) / t)`` (NGD-E)."""
    cdef float64_t inv_t, log_scale

    def __init__(self, float64_t t, float64_t log_scale):
        self.on_simplex = True
        self.geodesic = True
        self.inv_t = 1.0 / t
        self.log_scale = log_scale

    cdef intp_t map_dots(self, float64_t* dots, float64_t sq_x,
                         const float64_t* sq_y, float64_t* out,
                         intp_t n, float64_t near) noexcept nogil:
        cdef intp_t j, kept = 0
        cdef float64_t log_scale = self.log_scale, inv_t = self.inv_t, shift = self.shift, c
        angles_of_dots(dots, out, n)
        for j in range(n):
            out[j] = exp(log_scale - out[j] * inv_t) + shift
            c = dots[j]
            dots[j] = c if c >= near else 0.0
            kept += c >= near
        return kept

    cdef float64_t at_angle(self, float64_t angle) noexcept nogil:
        return exp(self.log_scale - angle * self.inv_t) + self.shift


cdef class DiffusionKernel(Kernel):
    """``exp(log_scale - arccos(c)^2 / t)`` (multinomial information diffusion)."""
    cdef float64_t inv_t, log_scale

    def __init__(self, float64_t t, float64_t log_scale):
        self.on_simplex = True
        self.geodesic = True
        self.inv_t = 1.0 / t
        self.log_scale = log_scale

    cdef intp_t map_dots(self, float64_t* dots, float64_t sq_x,
                         const float64_t* sq_y, float64_t* out,
                         intp_t n, float64_t near) noexcept nogil:
        cdef intp_t j, kept = 0
        cdef float64_t log_scale = self.log_scale, inv_t = self.inv_t, shift = self.shift, a, c
        angles_of_dots(dots, out, n)
        for j in range(n):
            a = out[j]
            out[j] = exp(log_scale - a * a * inv_t) + shift
            c = dots[j]
            dots[j] = c if c >= near else 0.0
            kept += c >= near
        return kept

    cdef float64_t at_angle(self, float64_t angle) noexcept nogil:
        return exp(self.log_scale - angle * angle * self.inv_t) + self.shift


cdef class HyperbolicHeatKernel(Kernel):
    """The heat kernel of the spherical normal family's Fisher metric.

    Its rows are points of the Poincare ball (``prepare_rows`` maps each
    (mu, sigma) there), where the hyperbolic distance r of two rows p, q is
    ``cosh r = 1 + 2 |p - q|^2 / ((1 - |p|^2) (1 - |q|^2))``: a function of
    their dot product and squared norms, as every kernel here. The value is
    ``exp(log_scale + g(r) - r^2 / (4 tau))`` with g read from a table of
    Chebyshev pieces (``kgeo/_hyperbolic.py`` builds it: the closed forms of
    Lafferty & Lebanon's equations 5 and 6), 0 from ``extent`` on, where it
    is below float64's smallest number.
    """
    cdef const float64_t[:, ::1] table
    cdef float64_t inv_4tau, log_scale, extent, inv_piece
    cdef intp_t n_pieces, degree
    # n of H^n, the columns of the rows as given: the Fisher metric's scale
    # 2 (n - 1) (the rows a kernel row reads may have lost unused columns).
    cdef readonly intp_t dimension

    def __init__(self, const float64_t[:, ::1] table, float64_t piece, float64_t tau,
                 float64_t extent, float64_t log_scale, intp_t dimension):
        self.half_space = True
        self.dimension = dimension
        self.table = table
        self.n_pieces = table.shape[0]
        self.degree = table.shape[1] - 1
        self.inv_piece = 1.0 / piece
        self.inv_4tau = 0.25 / tau
        self.extent = extent
        self.log_scale = log_scale

    cdef inline float64_t at_distance(self, float64_t r) noexcept nogil:
        # Clenshaw's recurrence over the piece holding r.
        cdef intp_t piece, j
        cdef float64_t x, b0 = 0.0, b1 = 0.0, b2
        if r == 0.0:
            return exp(self.log_scale) + self.shift  # g(0) = 0 exactly: k(x, x)
        if not r < self.extent:  # beyond the table, and NaN-safe
            return self.shift
        piece = <intp_t>(r * self.inv_piece)
        if piece >= self.n_pieces:
            piece = self.n_pieces - 1
        x = 2.0 * (r * self.inv_piece - piece) - 1.0
        for j in range(self.degree, 0, -1):
            b2 = b1
            b1 = b0
            b0 = 2.0 * x * b1 - b2 + self.table[piece, j]
        # log(K(r) / K(0)) <= 0: the heat kernel is largest at distance 0
        # (the table's rounding gave 1 + 3e-14 next to duplicates).
        x = (x * b0 - b1 + self.table[piece, 0]) - r * r * self.inv_4tau
        return exp(self.log_scale + (x if x < 0.0 else 0.0)) + self.shift

    cdef inline float64_t at_squared(self, float64_t sq_distance, float64_t sq_x,
                                     float64_t sq_y) noexcept nogil:
        # cosh r - 1 = d from the rows' squared distance; r = arccosh(1 + d)
        # through log1p, exact for small d, and without d^2's overflow.
        cdef float64_t d = 2.0 * sq_distance / ((1.0 - sq_x) * (1.0 - sq_y))
        return self.at_distance(log1p(d + sqrt(d) * sqrt(d + 2.0)))

    cdef intp_t map_dots(self, float64_t* dots, float64_t sq_x,
                         const float64_t* sq_y, float64_t* out,
                         intp_t n, float64_t near) noexcept nogil:
        # Squared distances first, close pairs left in dots for the rows'
        # difference (as NED's and RBF's), then the map.
        cdef intp_t j, kept = sq_distances_of_dots(dots, out, sq_y, n, sq_x, CLOSE_SHARE,
                                                   False, 0.0)
        for j in range(n):
            out[j] = self.at_squared(out[j], sq_x, sq_y[j])
        return kept

    cdef float64_t at_gap(self, float64_t gap, float64_t sq_x, float64_t sq_y) noexcept nogil:
        return self.at_squared(2.0 * gap, sq_x, sq_y)


cdef class PrecomputedKernel(Kernel):
    """A kernel given by its matrix over a fixed set of samples.

    The rows it is used with carry no features (``empty_rows``): row r is
    sample ``position[r]`` of ``matrix``, and ``k(x_r, x_s)`` is
    ``matrix[position[r], position[s]] + shift``, read rather than computed.
    The solver passes its order of the training samples (sorted by class) as
    ``position``, so that a caller's matrix of n^2 values is never copied.

    Parameters
    ----------
    matrix : ndarray of float64, shape (n_samples, n_samples), C order
        Checked by the caller (``check_kernel_matrix``): finite, square.
    position : ndarray of int64, shape (n_rows,)
        Indices into ``matrix``, each in ``[0, n_samples)``.
    shift : float, default=0.0
        Constant added to every value.
    """

    def __init__(self, const float64_t[:, ::1] matrix, const int64_t[::1] position,
                 shift=0.0):
        cdef intp_t r
        if matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"the kernel matrix must be square, got shape "
                             f"({matrix.shape[0]}, {matrix.shape[1]})")
        for r in range(position.shape[0]):
            if not 0 <= position[r] < matrix.shape[0]:
                raise ValueError(f"position[{r}] = {position[r]} is not a sample of the "
                                 f"{matrix.shape[0]} x {matrix.shape[0]} kernel matrix")
        self.precomputed = True
        self.matrix = matrix
        self.position = position
        self.shift = _real(shift, "shift", "precomputed")


# The side of the tiles kernel_matrix_summary compares with their mirror
# images: a 64 x 64 tile of float64 (32 KB) stays in the CPU caches while it
# is read down its columns.
cdef enum:
    MIRROR_TILE = 64
cdef float64_t LARGEST_FLOAT64 = 1.7976931348623157e308


def kernel_matrix_summary(const float64_t[:, ::1] K, bint square, int n_threads=1):
    """What the checks of a precomputed kernel matrix need, in compiled passes.

    A NumPy route over a 20 Newsgroups training matrix (11,314 x 11,314,
    1 GB) took 0.7 s and 1 GB of temporaries, more than the fit on it.

    Parameters
    ----------
    K : ndarray of float64, shape (n_rows, n_cols), C order
    square : bool
        Also measure the asymmetry (K must then be square), when every entry
        is finite.
    n_threads : int, default=1
        OpenMP threads over bands of rows (the result does not depend on it).

    Returns
    -------
    n_nonfinite : int
        NaN and infinite entries.
    first_nonfinite : tuple (i, j) or None
        The first of them in row order.
    largest : float
        The largest |K[i, j]| over the finite entries (0.0 for none).
    asymmetry : float
        The largest |K[i, j] - K[j, i]| (0.0 unless measured).
    at : tuple (i, j)
        Where it is first reached in row order, i < j ((0, 0) when 0.0).
    """
    cdef intp_t n_rows = K.shape[0], n_cols = K.shape[1]
    cdef intp_t n_bands = (n_rows + MIRROR_TILE - 1) // MIRROR_TILE
    if square and n_rows != n_cols:
        raise ValueError(f"square=True needs a square matrix, got shape ({n_rows}, {n_cols})")
    if n_rows == 0 or n_cols == 0:
        return 0, None, 0.0, 0.0, (0, 0)
    # Per band of MIRROR_TILE rows, reduced below in band order, so that the
    # first non-finite entry and the place of the largest gap do not depend
    # on the threads.
    counts_out = np.zeros(n_bands, dtype=np.int64)
    first_out = np.full(n_bands, -1, dtype=np.int64)
    largest_out = np.zeros(n_bands, dtype=np.float64)
    gaps_out = np.zeros(n_bands, dtype=np.float64)
    gap_at_out = np.zeros(n_bands, dtype=np.int64)
    cdef int64_t[::1] counts = counts_out, first = first_out, gap_at = gap_at_out
    cdef float64_t[::1] largest = largest_out, gaps = gaps_out
    cdef intp_t band, r0
    n_threads = threads_for(min(n_threads, n_bands), n_rows * n_cols)
    for band in prange(n_bands, nogil=True, schedule="dynamic", num_threads=n_threads):
        r0 = band * MIRROR_TILE
        scan_band(&K[0, 0], n_cols, r0, min(r0 + MIRROR_TILE, n_rows),
                  &counts[band], &first[band], &largest[band])
    n_nonfinite = int(counts_out.sum())
    if square and n_nonfinite == 0:
        for band in prange(n_bands, nogil=True, schedule="dynamic", num_threads=n_threads):
            mirror_gap_of_band(&K[0, 0], n_rows, band * MIRROR_TILE, &gaps[band],
                               &gap_at[band])
    bad = first_out[first_out >= 0]
    worst = int(np.argmax(gaps_out))
    return (n_nonfinite, None if bad.size == 0 else divmod(int(bad.min()), n_cols),
            float(largest_out.max()), float(gaps_out[worst]),
            divmod(int(gap_at_out[worst]), n_cols) if gaps_out[worst] > 0 else (0, 0))


cdef void scan_band(const float64_t* K, intp_t n_cols, intp_t r0, intp_t r1,
                    int64_t* count, int64_t* first, float64_t* largest) noexcept nogil:
    # The rows r0 <= i < r1: how many entries are not finite, the first of
    # them, and max |K| over the others. A row is reduced branch-free into
    # four running maxima (a select, then a max): one running maximum with a
    # branch made each entry wait for the one before it (3.5 ns per entry
    # against 1.9, one thread); only a row with a non-finite entry is read
    # again, to find it.
    cdef intp_t i, j
    cdef float64_t top = 0.0, row_top
    cdef int64_t n_bad = 0, row_bad
    cdef const float64_t* row
    for i in range(r0, r1):
        row = &K[i * n_cols]
        row_top = finite_abs_max(row, n_cols, &row_bad)
        top = row_top if row_top > top else top
        if row_bad and n_bad == 0:
            for j in range(n_cols):
                if not fabs(row[j]) <= LARGEST_FLOAT64:  # NaN or inf
                    first[0] = i * n_cols + j
                    break
        n_bad += row_bad
    count[0] = n_bad
    largest[0] = top


cdef inline float64_t finite_abs_max(const float64_t* x, intp_t n,
                                     int64_t* n_bad) noexcept nogil:
    # max |x[j]| over the finite entries (0.0 for none), and how many are
    # not finite. A maximum is exact in any order: four running maxima,
    # combined at the end, give the value one running maximum gives.
    cdef float64_t a0, a1, a2, a3, m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0
    cdef int64_t bad = 0
    cdef intp_t j = 0
    while j + 4 <= n:
        a0 = fabs(x[j])
        a1 = fabs(x[j + 1])
        a2 = fabs(x[j + 2])
        a3 = fabs(x[j + 3])
        bad += (not a0 <= LARGEST_FLOAT64) + (not a1 <= LARGEST_FLOAT64) \
            + (not a2 <= LARGEST_FLOAT64) + (not a3 <= LARGEST_FLOAT64)
        a0 = a0 if a0 <= LARGEST_FLOAT64 else 0.0
        a1 = a1 if a1 <= LARGEST_FLOAT64 else 0.0
        a2 = a2 if a2 <= LARGEST_FLOAT64 else 0.0
        a3 = a3 if a3 <= LARGEST_FLOAT64 else 0.0
        m0 = a0 if a0 > m0 else m0
        m1 = a1 if a1 > m1 else m1
        m2 = a2 if a2 > m2 else m2
        m3 = a3 if a3 > m3 else m3
        j += 4
    while j < n:
        a0 = fabs(x[j])
        bad += not a0 <= LARGEST_FLOAT64
        a0 = a0 if a0 <= LARGEST_FLOAT64 else 0.0
        m0 = a0 if a0 > m0 else m0
        j += 1
    n_bad[0] = bad
    return max_of_four(m0, m1, m2, m3)


cdef void mirror_gap_of_band(const float64_t* K, intp_t n, intp_t i0, float64_t* gap,
                             int64_t* at) noexcept nogil:
    # max |K[i, j] - K[j, i]| over the rows i0 <= i < i0 + MIRROR_TILE and
    # j > i, and the first place in row order where it is reached: a tile
    # of MIRROR_TILE columns at a time, whose mirror (read down its
    # columns) stays in the CPU caches while the band's rows pass over it.
    # Each row of a tile is reduced branch-free into four running maxima
    # (see finite_abs_max); a row's first column of its largest gap is
    # looked for only where that gap beats the row's best so far.
    cdef intp_t i, j, j0 = i0, i1 = min(i0 + MIRROR_TILE, n), lo, hi
    cdef float64_t d, m, best = 0.0
    cdef float64_t row_best[MIRROR_TILE]
    cdef int64_t row_at[MIRROR_TILE]
    cdef int64_t where = 0
    for i in range(i1 - i0):
        row_best[i] = 0.0
        row_at[i] = 0
    while j0 < n:
        for i in range(i0, i1):
            lo = max(j0, i + 1)
            hi = min(j0 + MIRROR_TILE, n)
            if lo >= hi:
                continue
            m = mirror_gap_max(&K[i * n], K, n, i, lo, hi)
            if m > row_best[i - i0]:  # a later tile's tie is not the first
                row_best[i - i0] = m
                for j in range(lo, hi):
                    if fabs(K[i * n + j] - K[j * n + i]) == m:
                        row_at[i - i0] = i * n + j
                        break
        j0 += MIRROR_TILE
    for i in range(i1 - i0):  # the rows in order: the first of a tie wins
        if row_best[i] > best:
            best = row_best[i]
            where = row_at[i]
    gap[0] = best
    at[0] = where


cdef inline float64_t mirror_gap_max(const float64_t* row, const float64_t* K, intp_t n,
                                     intp_t i, intp_t lo, intp_t hi) noexcept nogil:
    # max |row[j] - K[j, i]| over lo <= j < hi, in four running maxima.
    cdef float64_t d0, d1, d2, d3, m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0
    cdef intp_t j = lo
    while j + 4 <= hi:
        d0 = fabs(row[j] - K[j * n + i])
        d1 = fabs(row[j + 1] - K[(j + 1) * n + i])
        d2 = fabs(row[j + 2] - K[(j + 2) * n + i])
        d3 = fabs(row[j + 3] - K[(j + 3) * n + i])
        m0 = d0 if d0 > m0 else m0
        m1 = d1 if d1 > m1 else m1
        m2 = d2 if d2 > m2 else m2
        m3 = d3 if d3 > m3 else m3
        j += 4
    while j < hi:
        d0 = fabs(row[j] - K[j * n + i])
        m0 = d0 if d0 > m0 else m0
        j += 1
    return max_of_four(m0, m1, m2, m3)


cdef inline float64_t max_of_four(float64_t m0, float64_t m1, float64_t m2,
                                  float64_t m3) noexcept nogil:
    m0 = m1 if m1 > m0 else m0
    m2 = m3 if m3 > m2 else m2
    return m2 if m2 > m0 else m0


def empty_rows(intp_t n_rows):
    """A RowSet of ``n_rows`` rows without features (a PrecomputedKernel's)."""
    return RowSet(np.empty(0), np.empty(0, dtype=np.int32),
                  np.zeros(n_rows + 1, dtype=np.int64), 0)


cdef void look_up_block_row(PrecomputedKernel kernel, intp_t i, intp_t start, intp_t n,
                            float64_t* out) noexcept nogil:
    # A gather along row position[i] of the matrix: the block's samples are
    # contiguous in the solver's order, not (unless sorted by class) in the
    # caller's.
    cdef const float64_t* row = &kernel.matrix[kernel.position[i], 0]
    cdef const int64_t* columns = &kernel.position[start]
    cdef float64_t shift = kernel.shift
    cdef intp_t j
    for j in range(n):
        out[j] = row[columns[j]] + shift


# --------------------------------------------------------------------------
# Row evaluation
# --------------------------------------------------------------------------

cdef inline intp_t first_posting_from(const int32_t* post_row, intp_t q, intp_t q_end,
                                     intp_t lo) noexcept nogil:
    # The first posting of q .. q_end (rows increasing) whose row is >= lo.
    cdef intp_t mid
    while q < q_end:
        mid = q + (q_end - q) // 2
        if post_row[mid] < lo:
            q = mid + 1
        else:
            q_end = mid
    return q


cdef inline void add_postings(PostingIndex Y, intp_t q, intp_t q_end, float64_t v,
                              intp_t lo, intp_t hi, bint whole,
                              float64_t* acc) noexcept nogil:
    # acc[r] += v * value for the postings q .. q_end of one word, or, unless
    # ``whole``, only for those of rows lo <= r < hi (found by their rows,
    # which increase along a list).
    if whole:
        for q in range(q, q_end):
            acc[Y.post_row[q]] += v * Y.post_val[q]
        return
    if lo > 0:
        q = first_posting_from(&Y.post_row[0], q, q_end, lo)
    while q < q_end and Y.post_row[q] < hi:
        acc[Y.post_row[q]] += v * Y.post_val[q]
        q += 1


cdef inline void accumulate_dots(RowSet X, intp_t i, PostingIndex Y, intp_t block,
                                 intp_t lo, intp_t hi, float64_t* acc) noexcept nogil:
    # acc[r] += <x_i, y_(start + r)> over the words x_i shares with the block,
    # for its rows lo <= r < hi. Each acc[r] receives its terms in the order
    # of x_i's words, whether a word is a posting list or a dense column
    # (whose zeros add exactly nothing), so neither the dense columns nor
    # the range change a single bit of the result. Consecutive words stored
    # dense are added as one run (add_scaled_run), which keeps that order.
    cdef intp_t base = block * (Y.rows.n_features + 1)
    cdef intp_t n = Y.block_start[block + 1] - Y.block_start[block]
    cdef bint whole = lo == 0 and hi == n
    cdef intp_t p, d, ahead
    cdef intp_t p_end = X.indptr[i + 1]
    cdef int32_t w
    cdef float64_t v
    cdef float64_t run_v[RUN_WORDS]
    cdef const float64_t* run_column[RUN_WORDS]
    cdef int m = 0
    if Y.hashed:
        accumulate_hashed_dots(X, i, Y, block, lo, hi, acc)
        return
    for p in range(X.indptr[i], p_end):
        # The (block, word) entries of colptr and dense_ptr are scattered over
        # n_blocks * n_features slots: for the short blocks of a class, their
        # cache misses cost more than the postings themselves. Asking for them
        # a few words ahead overlaps the misses with this word's work.
        ahead = p + PREFETCH_WORDS
        if ahead < p_end:
            prefetch(&Y.dense_ptr[base + X.indices[ahead]])
            prefetch(&Y.colptr[base + X.indices[ahead]])
        w = X.indices[p]
        v = X.data[p]
        d = Y.dense_ptr[base + w]
        if d >= 0:
            run_v[m] = v
            run_column[m] = &Y.dense_val[d + lo]
            m += 1
            if m == RUN_WORDS:
                add_scaled_run(acc + lo, run_v, run_column, m, hi - lo)
                m = 0
        else:
            if m > 0:  # the run's words come first in every acc[r]
                add_scaled_run(acc + lo, run_v, run_column, m, hi - lo)
                m = 0
            add_postings(Y, Y.colptr[base + w], Y.colptr[base + w + 1], v, lo, hi, whole,
                         acc)
    if m > 0:
        add_scaled_run(acc + lo, run_v, run_column, m, hi - lo)


cdef inline void accumulate_hashed_dots(RowSet X, intp_t i, PostingIndex Y, intp_t block,
                                        intp_t lo, intp_t hi, float64_t* acc) noexcept nogil:
    # accumulate_dots through the block's hash table of list heads: each
    # acc[r] receives the same terms in the same order (x_i's words), so the
    # same bits. A small block's table (4-8 slots of 16 bytes per word of the
    # block) stays in cache while a sweep takes the block for row after row.
    cdef const ListHead* table = Y.heads + Y.head_start[block]
    cdef intp_t mask = Y.head_start[block + 1] - Y.head_start[block] - 1
    cdef int32_t shift = Y.head_shift[block]
    cdef bint whole = lo == 0 and hi == Y.block_start[block + 1] - Y.block_start[block]
    cdef intp_t p, slot
    cdef int32_t w
    for p in range(X.indptr[i], X.indptr[i + 1]):
        w = X.indices[p]
        slot = head_slot(w, shift)
        while table[slot].word != w and table[slot].word >= 0:
            slot = (slot + 1) & mask
        if table[slot].word < 0:
            continue
        add_postings(Y, table[slot].start, table[slot].start + table[slot].count,
                     X.data[p], lo, hi, whole, acc)


cdef float64_t exact_gap(RowSet X, intp_t i, RowSet Y, intp_t j) noexcept nogil:
    """Half the squared distance of two rows, ``|x_i - y_j|^2 / 2``.

    For the geodesic kernels' rows, the square roots of the simplex points,
    this is ``1 - sum_w sqrt(p_w q_w)``. Summed over the union of the two
    rows' words (a merge of sorted indices), it is exact to rounding of the
    small terms, 0 for identical rows.
    """
    cdef intp_t p = X.indptr[i], p_end = X.indptr[i + 1]
    cdef intp_t q = Y.indptr[j], q_end = Y.indptr[j + 1]
    cdef float64_t total = 0.0, d
    while p < p_end and q < q_end:
        if X.indices[p] == Y.indices[q]:
            d = X.data[p] - Y.data[q]
            p += 1
            q += 1
        elif X.indices[p] < Y.indices[q]:
            d = X.data[p]
            p += 1
        else:
            d = Y.data[q]
            q += 1
        total += d * d
    while p < p_end:
        total += X.data[p] * X.data[p]
        p += 1
    while q < q_end:
        total += Y.data[q] * Y.data[q]
        q += 1
    return 0.5 * total


cdef void kernel_block_row(Kernel kernel, RowSet X, intp_t i, PostingIndex Y,
                           intp_t block, float64_t* acc,
                           float64_t* out) noexcept nogil:
    """Write k(x_i, y_j) for every row j of ``block`` of Y into ``out``.

    ``acc`` is a zeroed buffer of at least the block's length; it is left
    zeroed.
    """
    kernel_block_part(kernel, X, i, Y, block, 0,
                      Y.block_start[block + 1] - Y.block_start[block], acc, out)


cdef void kernel_block_part(Kernel kernel, RowSet X, intp_t i, PostingIndex Y,
                            intp_t block, intp_t lo, intp_t hi, float64_t* acc,
                            float64_t* out) noexcept nogil:
    """``kernel_block_row`` for the rows lo <= j < hi of the block alone.

    Only ``acc[lo:hi]`` and ``out[lo:hi]`` are touched, and each value has
    the bits it has in the whole row: threads can share one row's ranges.
    """
    cdef intp_t start = Y.block_start[block]
    cdef intp_t j, left, row
    cdef float64_t near_x = 0.0
    if kernel.precomputed:
        look_up_block_row(<PrecomputedKernel> kernel, i, start + lo, hi - lo, out + lo)
        return
    if kernel.geodesic:
        near_x = exact_from(X.indptr[i + 1] - X.indptr[i])
    accumulate_dots(X, i, Y, block, lo, hi, acc)
    # (The maps are elementwise, and setup.py keeps their vector and scalar
    # code to the same operations: a value's bits do not depend on where
    # the range starts.)
    left = kernel.map_dots(acc + lo, X.sq_norms[i], &Y.rows.sq_norms[start + lo], out + lo,
                           hi - lo, near_x)
    # A geodesic kernel left the pairs with c >= exact_from(row i's length)
    # in acc, NED its close pairs: there the rounding of the dot product (up
    # to ~1e-16 per shared word) would be magnified by arccos or the square
    # root (to ~1e-8 next to duplicates), so close pairs (duplicates, the
    # diagonal) take their gap from the difference of the rows instead. A
    # geodesic kernel's pair does so from exact_from(the shorter row's
    # length), which bounds the words the two share: the larger of the two
    # rows' exact_from, the same either way round, so that K(x, y) and
    # K(y, x) take the same route. Most blocks have no such pair, and are
    # not scanned (the bound on j guards against a map that would miscount).
    j = lo
    while left > 0 and j < hi:
        if acc[j] != 0.0:
            row = start + j
            # (Otherwise the dot route's value in out stays.)
            if not kernel.geodesic or (
                    acc[j] >= exact_from(Y.rows.indptr[row + 1] - Y.rows.indptr[row])):
                out[j] = kernel.at_gap(exact_gap(X, i, Y.rows, row), X.sq_norms[i],
                                       Y.rows.sq_norms[row])
            acc[j] = 0.0
            left -= 1
        j += 1


cdef float64_t kernel_self(Kernel kernel, RowSet X, intp_t i) noexcept nogil:
    """k(x_i, x_i), exactly as the entry of a kernel row gives it."""
    cdef intp_t p
    if kernel.precomputed:
        p = (<PrecomputedKernel> kernel).position[i]
        return (<PrecomputedKernel> kernel).matrix[p, p] + kernel.shift
    if kernel.geodesic:
        return kernel.at_angle(0.0)
    cdef float64_t dot = X.sq_norms[i]
    cdef float64_t sq = X.sq_norms[i]
    cdef float64_t out
    kernel.map_dots(&dot, sq, &sq, &out, 1, NEAR_ONE)
    return out


# Rows of X per task in kernel_matrix, each task taking the blocks of Y in turn.
cdef intp_t MATRIX_ROWS = 8


def kernel_matrix(Kernel kernel, RowSet X, PostingIndex Y, int n_threads=1,
                  bint main_thread=False):
    """Dense kernel matrix between the rows of X and all rows of Y.

    Parameters
    ----------
    kernel : Kernel
    X : RowSet
    Y : PostingIndex
        Usually a single block; several blocks are concatenated in order.
    n_threads : int, default=1
        OpenMP threads over the rows of X (each row is computed by one thread
        alone, so the result does not depend on the thread count).
    main_thread : bool, default=False
        Called from Python's main thread: run its signal handlers every
        ``INTERRUPT_CHECK_MS`` on the way, so that Ctrl-C stops a large matrix
        within that time, not at its end.

    Returns
    -------
    K : ndarray of shape (X.n_rows, Y.rows.n_rows)
    """
    cdef intp_t n_x = X.n_rows
    cdef intp_t n_y = Y.rows.n_rows
    K = np.empty((n_x, n_y), dtype=np.float64)
    if n_x == 0 or n_y == 0:
        return K
    n_threads = threads_for(min(n_threads, n_x), n_x * n_y)
    # One zeroed accumulator per thread; kernel_block_row leaves it zeroed.
    acc_all = np.zeros((n_threads, n_y), dtype=np.float64)
    cdef float64_t[:, ::1] acc = acc_all
    cdef float64_t[:, ::1] K_view = K
    cdef intp_t g, i, b
    cdef int tid
    cdef intp_t n_blocks = Y.n_blocks
    cdef intp_t n_groups = (n_x + MATRIX_ROWS - 1) // MATRIX_ROWS
    # A group of rows of X meets one block of Y after the other: a block
    # small enough for the L2 cache is read from memory once per group, not
    # once per row (dense rows; see pairwise_kernels). Every value is
    # computed as alone, so the bits do not depend on the grouping.
    cdef Interruptible signals
    interruptible_init(&signals, main_thread)
    for g in prange(n_groups, nogil=True, schedule="dynamic", num_threads=n_threads):
        if poll_signals(&signals):
            continue  # the rest of the loop is skipped; the matrix is dropped
        tid = threadid()
        for b in range(n_blocks):
            for i in range(g * MATRIX_ROWS, min((g + 1) * MATRIX_ROWS, n_x)):
                kernel_block_row(kernel, X, i, Y, b, &acc[tid, 0],
                                 &K_view[i, Y.block_start[b]])
    return K


# Rows of X per task in kernel_weighted_sums: the weights of a column of Y
# are read once for this many kernel rows.
cdef intp_t WEIGHED_ROWS = 8


def kernel_weighted_sums(Kernel kernel, RowSet X, PostingIndex Y, segment_start,
                         const float64_t[:, ::1] weights, int n_threads=1):
    """Kernel values of the rows of X against segments of the rows of Y, weighted.

    ``sums[i, g, r]`` is the sum over the rows j of segment g of
    ``k(x_i, y_j) * weights[j, r]``: with the dual coefficients as weights
    and the support vectors' classes as segments, the shares of the decision
    values. The kernel matrix is never stored: each thread computes a few
    kernel rows, then weighs them while they are in the CPU caches.

    Parameters
    ----------
    kernel : Kernel
    X : RowSet
    Y : PostingIndex
        Usually a single block (one pass over a row's words for all of Y).
    segment_start : array of int, shape (n_segments + 1,)
        Increasing row offsets into Y, from 0 to ``Y.rows.n_rows``.
    weights : ndarray of shape (Y.rows.n_rows, n_r)
    n_threads : int, default=1
        OpenMP threads over the rows of X. Each row is computed by one thread
        alone and each sum is accumulated in the order of j, so the result
        does not depend on the thread count.

    Returns
    -------
    sums : ndarray of shape (X.n_rows, n_segments, n_r)
    largest : ndarray of shape (X.n_rows,)
        Per row of X, the largest ``|k(x_i, y_j)|`` over Y (0.0 when Y is
        empty): the scale of that row's rounding, whatever the other rows.
    """
    cdef intp_t n_x = X.n_rows
    cdef intp_t n_y = Y.rows.n_rows
    cdef intp_t n_blocks = Y.n_blocks
    cdef intp_t n_r = weights.shape[1]
    cdef const int64_t[::1] seg = _checked_segments(segment_start, weights, n_y)
    cdef intp_t n_segments = seg.shape[0] - 1
    if n_x == 0 or n_y == 0 or n_r == 0:
        return np.zeros((n_x, n_segments, n_r), dtype=np.float64), np.zeros(n_x)
    # Every sum is stored once by its task (weigh_rows), never read first:
    # np.zeros' pages would be mapped to the shared zero page by a read, and
    # the write after it would cost a TLB shootdown of the other threads'
    # cores (on the 20 Newsgroups test set, ~700 per 3,000 rows predicted).
    sums = np.empty((n_x, n_segments, n_r), dtype=np.float64)
    cdef intp_t n_tasks = (n_x + WEIGHED_ROWS - 1) // WEIGHED_ROWS
    n_threads = threads_for(min(n_threads, n_tasks), n_x * n_y)
    # Per thread: a zeroed accumulator (kernel_block_row leaves it zeroed)
    # and WEIGHED_ROWS kernel rows.
    acc_all = np.zeros((n_threads, n_y), dtype=np.float64)
    rows_all = np.empty((n_threads, WEIGHED_ROWS * n_y), dtype=np.float64)
    largest_out = np.empty(n_x, dtype=np.float64)
    cdef float64_t[:, ::1] acc = acc_all, krows = rows_all
    cdef float64_t[::1] largest = largest_out
    cdef float64_t[:, :, ::1] out = sums
    cdef const float64_t* w = &weights[0, 0]
    cdef intp_t task, i0, n_i, a, b
    cdef int tid
    for task in prange(n_tasks, nogil=True, schedule="dynamic", chunksize=1,
                       num_threads=n_threads):
        tid = threadid()
        i0 = task * WEIGHED_ROWS
        n_i = min(WEIGHED_ROWS, n_x - i0)
        for a in range(n_i):
            for b in range(n_blocks):
                kernel_block_row(kernel, X, i0 + a, Y, b, &acc[tid, 0],
                                 &krows[tid, a * n_y + Y.block_start[b]])
        weigh_kernel_rows(&krows[tid, 0], n_i, n_y, &seg[0], n_segments, w, n_r,
                          &out[i0, 0, 0], &largest[i0])
    return sums, largest_out


def weighted_sums_of_values(const float64_t[:, ::1] K, segment_start,
                            const float64_t[:, ::1] weights, int n_threads=1):
    """``kernel_weighted_sums`` of kernel values given rather than computed.

    The same sums, added in the same order, so the same bits: row i of ``K``
    holds ``k(x_i, y_j)`` for the rows j of Y (a precomputed kernel's
    prediction passes the columns of its support vectors).

    Parameters
    ----------
    K : ndarray of shape (n_x, n_y)
    segment_start : array of int, shape (n_segments + 1,)
        Increasing column offsets into K, from 0 to ``n_y``.
    weights : ndarray of shape (n_y, n_r)
    n_threads : int, default=1

    Returns
    -------
    sums : ndarray of shape (n_x, n_segments, n_r)
    largest : ndarray of shape (n_x,)
    """
    cdef intp_t n_x = K.shape[0]
    cdef intp_t n_y = K.shape[1]
    cdef intp_t n_r = weights.shape[1]
    cdef const int64_t[::1] seg = _checked_segments(segment_start, weights, n_y)
    cdef intp_t n_segments = seg.shape[0] - 1
    if n_x == 0 or n_y == 0 or n_r == 0:
        return np.zeros((n_x, n_segments, n_r), dtype=np.float64), np.zeros(n_x)
    sums = np.empty((n_x, n_segments, n_r), dtype=np.float64)  # (see kernel_weighted_sums)
    cdef intp_t n_tasks = (n_x + WEIGHED_ROWS - 1) // WEIGHED_ROWS
    n_threads = threads_for(min(n_threads, n_tasks), n_x * n_y)
    largest_out = np.empty(n_x, dtype=np.float64)
    cdef float64_t[::1] largest = largest_out
    cdef float64_t[:, :, ::1] out = sums
    cdef const float64_t* w = &weights[0, 0]
    cdef intp_t task, i0
    for task in prange(n_tasks, nogil=True, schedule="dynamic", chunksize=1,
                       num_threads=n_threads):
        i0 = task * WEIGHED_ROWS
        weigh_kernel_rows(&K[i0, 0], min(WEIGHED_ROWS, n_x - i0), n_y, &seg[0], n_segments,
                          w, n_r, &out[i0, 0, 0], &largest[i0])
    return sums, largest_out


def _checked_segments(segment_start, weights, intp_t n_y):
    segment_start = np.ascontiguousarray(segment_start, dtype=np.int64)
    if (segment_start.ndim != 1 or segment_start.shape[0] < 1 or segment_start[0] != 0
            or segment_start[len(segment_start) - 1] != n_y
            or np.any(np.diff(segment_start) < 0)):
        raise ValueError(f"segment_start must increase from 0 to {n_y}, "
                         f"got {segment_start!r}")
    if weights.shape[0] != n_y:
        raise ValueError(f"weights must have one row per row of Y ({n_y}), "
                         f"got {weights.shape[0]}")
    return segment_start


cdef void weigh_kernel_rows(const float64_t* krows, intp_t n_i, intp_t n_y,
                            const int64_t* seg, intp_t n_segments, const float64_t* w,
                            intp_t n_r, float64_t* out, float64_t* largest) noexcept nogil:
    # n_i kernel rows of n_y values (contiguous): the largest |k| of each
    # into largest[a], and their sums over each segment of Y weighted by the
    # n_r columns of w into out (n_i x n_segments x n_r).
    cdef intp_t a, g, j
    cdef float64_t v, top
    for a in range(n_i):
        top = 0.0
        for j in range(n_y):
            v = fabs(krows[a * n_y + j])
            if v > top:
                top = v
        largest[a] = top
    for g in range(n_segments):
        weigh_rows(krows, n_y, n_i, w, n_r, seg[g], seg[g + 1], &out[g * n_r],
                   n_segments * n_r)


def kernel_diagonal(Kernel kernel, RowSet X):
    """k(x_i, x_i) for every row, shape (X.n_rows,)."""
    out = np.empty(X.n_rows, dtype=np.float64)
    cdef float64_t[::1] view = out
    cdef intp_t i
    with nogil:
        for i in range(X.n_rows):
            view[i] = kernel_self(kernel, X, i)
    return out


# --------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------

# name -> (parameters it accepts with their defaults, reads rows on the simplex).
# Read-only, the defaults too: kgeo.KERNELS is public, and an edit changed
# every later model's defaults, or made a new name compute another kernel.
KERNELS = types.MappingProxyType({name: (types.MappingProxyType(defaults), on_simplex)
                                  for name, (defaults, on_simplex) in {
    "linear": ({}, False),
    "poly": ({"gamma": None, "coef0": 0.0, "degree": 3}, False),
    "rbf": ({"gamma": None}, False),
    "sigmoid": ({"gamma": None, "coef0": 0.0}, False),
    "ned": ({}, False),
    "ngd": ({}, True),
    "ngd+pi": ({}, True),
    "ngd_exp": ({"t": 1.0, "normalize": False}, True),
    "bhattacharyya": ({}, True),
    "diffusion": ({"t": 1.0, "normalize": False}, True),
    "hyperbolic": ({"t": 1.0, "normalize": False}, False),
}.items()})

# Largest and smallest exponents whose exp() is a normal float64.
_LOG_MAX = 709.78
_LOG_MIN = -708.39


def _real(value, name, kernel):
    import numbers
    try:
        # float(10**400) overflows: not a float64 either.
        as_float = float(value) if isinstance(value, numbers.Real) else None
    except OverflowError:
        as_float = None
    if isinstance(value, (bool, np.bool_)) or as_float is None or not math.isfinite(as_float):
        # reprlib: 10**400 would put its 401 digits in the message.
        raise ValueError(
            f"kernel {kernel!r}: {name} must be a finite real number, got "
            f"{reprlib.repr(value)}")
    return as_float


def _heat_log_scale(kernel, t, n_features):
    """log of (4 pi t)^(-n/2), n = n_features - 1, the dimension of the simplex."""
    n = n_features - 1
    # log(4 pi) + log(t): 4 pi t overflows for t above 1.4e307.
    log_scale = -0.5 * n * (math.log(4.0 * math.pi) + math.log(t)) if n else 0.0
    # The kernel's largest value is the factor itself (at distance 0); far
    # points may underflow to 0 with or without it, as exp(-a/t) does.
    if not _LOG_MIN <= log_scale <= _LOG_MAX:
        raise ValueError(
            f"kernel {kernel!r} with normalize=True: the factor (4 pi t)^(-n/2) = "
            f"exp({log_scale:.4g}) for n = {n} (n_features - 1) and t = {t} is not "
            f"representable in float64. The factor only rescales the kernel, and "
            f"scaling a kernel by c is the same SVM as scaling C by c: use "
            f"normalize=False and multiply C by the factor instead")
    return log_scale


def _hyperbolic_kernel(t, n_features, normalize):
    """The heat kernel of N(mu, sigma^2 I) on rows (mu_1, ..., mu_(n-1), sigma).

    The Fisher metric of the family is c = 2 (n - 1) times that of
    unit-curvature H^n in the coordinates (mu / sqrt(c), sigma), so its heat
    kernel at time t is c^(-n/2) K(r) at time t / c of H^n, r the H^n
    distance (see ``_hyperbolic``).
    """
    from . import _hyperbolic
    n = n_features
    if not 2 <= n <= _hyperbolic.MAX_DIMENSION:
        raise ValueError(
            f"kernel 'hyperbolic' reads rows (mu_1, ..., mu_(n-1), sigma) of the spherical "
            f"normal family, n from 2 to {_hyperbolic.MAX_DIMENSION} (the dimensions whose "
            f"heat kernel kgeo evaluates to about 1e-13); got n_features={n}")
    c = 2.0 * (n - 1)
    tau = t / c
    # The table's size grows with sqrt(tau): refuse times whose kernel is flat
    # over any distance float64 can tell apart anyway; above n = 21, times
    # where the contour integral's error was not measured below 1e-13.
    largest = (_hyperbolic.MAX_TIME if n <= _hyperbolic.RECURSION_DIMENSIONS
               else _hyperbolic.MAX_TIME_CONTOUR)
    if tau > largest:
        raise ValueError(
            f"kernel 'hyperbolic': t must be at most {largest * c:.4g} for "
            f"n_features={n} (t / (2 (n - 1)) <= {largest:g}), got {t!r}")
    if n <= _hyperbolic.RECURSION_DIMENSIONS:
        smallest, why = _hyperbolic.MIN_TIME, "1 / t stays finite through the recursion"
    else:
        smallest = _hyperbolic.MIN_TIME_CONTOUR
        why = (f"n_features > {_hyperbolic.RECURSION_DIMENSIONS}: where kgeo's evaluation "
               f"of the kernel was measured to 1e-12")
    if tau < smallest:
        raise ValueError(
            f"kernel 'hyperbolic': t must be at least {smallest * c:.4g} for "
            f"n_features={n} (t / (2 (n - 1)) >= {smallest:.4g}, {why}), got {t!r}")
    log_k0 = _hyperbolic.log_heat_kernel_at_zero(tau, n) - 0.5 * n * math.log(c)
    log_scale = 0.0
    if normalize:
        log_scale = float(log_k0)
        if not _LOG_MIN <= log_scale <= _LOG_MAX:
            raise ValueError(
                f"kernel 'hyperbolic' with normalize=True: its value at distance 0, "
                f"exp({log_scale:.4g}) for n = {n} and t = {t}, is not representable in "
                f"float64. The factor only rescales the kernel, and scaling a kernel by c is "
                f"the same SVM as scaling C by c: use normalize=False and multiply C by it")
    table, extent, _ = _hyperbolic.heat_table(tau, n, log_scale)
    return HyperbolicHeatKernel(np.ascontiguousarray(table), _hyperbolic.table_piece(extent),
                                tau, extent, log_scale, n)


def kernel_params(name):
    """Names and defaults of the parameters a kernel accepts.

    Raises
    ------
    ValueError
        If the kernel name is unknown (the message lists the known ones).
    """
    if not isinstance(name, str) or name not in KERNELS:
        raise ValueError(
            f"Unknown kernel {name!r}; known kernels: {', '.join(sorted(KERNELS))}")
    return dict(KERNELS[name][0])


def get_kernel(name, n_features, shift=0.0, **params):
    """Build the kernel object for ``name`` on data with ``n_features`` columns.

    Parameters
    ----------
    name : str
        One of ``KERNELS``.
    n_features : int
        Number of columns of the data (sets ``gamma=None`` to 1/n_features
        and the dimension of the heat-kernel normalisation).
    shift : float, default=0.0
        Constant added to every kernel value.
    **params
        The kernel's parameters (see ``KERNELS``); unknown names raise.

    Returns
    -------
    kernel : Kernel
    """
    # The parameters alone: what n_features makes of them (the heat kernels'
    # factors, the hyperbolic kernel's smallest t) is refused as data.
    with parameter_errors():
        defaults = kernel_params(name)
        unknown = sorted(set(params) - set(defaults))
        if unknown:
            accepted = ", ".join(sorted(defaults)) or "none"
            raise ValueError(
                f"kernel {name!r} got unknown parameter(s) {', '.join(unknown)}; "
                f"it accepts: {accepted}")
        p = {**defaults, **params}
        shift = _real(shift, "shift", name)
        if "gamma" in p:
            gamma = 1.0 / n_features if p["gamma"] is None else _real(p["gamma"], "gamma", name)
            if gamma <= 0:
                raise ValueError(f"kernel {name!r}: gamma must be > 0, got {gamma!r}")
        if "coef0" in p:
            coef0 = _real(p["coef0"], "coef0", name)
        if "t" in p:
            t = _real(p["t"], "t", name)
            if t <= 0:
                raise ValueError(f"kernel {name!r}: t must be > 0, got {t!r}")
            if not np.isfinite(1.0 / t):
                # The kernels read 1 / t: inf would make k(x, x) = exp(-0 * inf), NaN.
                # The least such t is the float64 after 1 / max: 1 / max itself
                # rounds to a subnormal whose inverse overflows (named as the
                # bound at 3 digits, it was refused with its own value).
                smallest = float(np.nextafter(1.0 / np.finfo(np.float64).max, 1.0))
                raise ValueError(
                    f"kernel {name!r}: t must be at least {smallest!r} "
                    f"(1 / t must be finite in float64), got {t!r}")
            if not isinstance(p["normalize"], (bool, np.bool_)):
                raise ValueError(
                    f"kernel {name!r}: normalize must be True or False, got {p['normalize']!r}")

    cdef Kernel kernel
    if name == "linear":
        kernel = LinearKernel()
    elif name == "poly":
        degree = p["degree"]
        with parameter_errors():
            # Any real number (np.float32(2.0) too) that is a whole number >= 1.
            try:
                as_float = float(degree) if isinstance(degree, numbers.Real) else math.nan
            except OverflowError:  # an int beyond float64
                as_float = math.inf
            if (isinstance(degree, (bool, np.bool_)) or not math.isfinite(as_float)
                    or as_float < 1 or as_float != int(as_float)):
                raise ValueError(f"kernel 'poly': degree must be an integer >= 1, got "
                                 f"{reprlib.repr(degree)}")
            if as_float != degree:
                # An odd degree above 2**53 rounded to an even one would flip
                # the sign of every negative value.
                raise ValueError(
                    f"kernel 'poly': degree {degree!r} is not a float64 (it would round to "
                    f"{int(as_float)}); use one that is")
        kernel = PolynomialKernel(gamma, coef0, as_float)
    elif name == "rbf":
        kernel = RBFKernel(gamma)
    elif name == "sigmoid":
        kernel = SigmoidKernel(gamma, coef0)
    elif name == "ned":
        kernel = NegativeEuclideanKernel()
    elif name == "ngd":
        kernel = NegativeGeodesicKernel(0.0)
    elif name == "ngd+pi":
        kernel = NegativeGeodesicKernel(PI)
    elif name == "bhattacharyya":
        kernel = BhattacharyyaKernel()
    elif name == "ngd_exp":
        log_scale = _heat_log_scale(name, t, n_features) if p["normalize"] else 0.0
        kernel = GeodesicExponentialKernel(t, log_scale)
    elif name == "diffusion":
        log_scale = _heat_log_scale(name, t, n_features) if p["normalize"] else 0.0
        kernel = DiffusionKernel(t, log_scale)
    elif name == "hyperbolic":
        kernel = _hyperbolic_kernel(t, n_features, p["normalize"])
    else:
        raise ValueError(f"Unknown kernel {name!r}; known kernels: {', '.join(sorted(KERNELS))}")
    kernel.shift = shift
    return kernel
