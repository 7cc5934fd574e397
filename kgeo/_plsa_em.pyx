"""Typed loops of PLSA (kgeo._plsa): the sums of one EM step over a count
matrix, folding documents into a fitted model, and the Fisher scores.

Every routine walks the nonzero counts ``n(d, w)`` of a CSR matrix and
needs, per entry, the model's probability of the word in the document,
``s(d, w) = sum_k P(z_k | d) P(w | z_k)``: a dot product of two K-vectors,
``doc_topic[d]`` and ``word_topic[w]`` (``P(w | z)`` stored word-major so that
both are contiguous). An entry with ``s = 0`` (a word every topic gives
probability 0, possible only without word smoothing) carries no information
about the document's topics and is skipped.
"""

from cython.parallel cimport parallel, prange, threadid
from libc.float cimport DBL_EPSILON, DBL_MAX, DBL_MIN
from libc.math cimport INFINITY, ceil, fabs, frexp, ldexp, log, pow
from libc.stdint cimport uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy
from posix.time cimport nanosleep, timespec

from ._kernels cimport threads_for
from ._parallel cimport (Interruptible, atomic_load, fetch_add, interruptible_init,
                        poll_signals)
from ._typedefs cimport float64_t, int32_t, int64_t, intp_t


cdef inline float64_t word_probability(const float64_t* theta, const float64_t* phi,
                                       intp_t n_topics) noexcept nogil:
    cdef float64_t s = 0.0
    cdef intp_t k
    for k in range(n_topics):
        s += theta[k] * phi[k]
    return s


# How many count entries ahead a loop that walks the counts asks for the rows
# its later entries will read (or write): their words' rows of P(w | z) and
# of the E-step's word sums, the documents' rows in the word pass. Those rows
# are scattered over the whole vocabulary (2.7 MB per table for 20 Newsgroups
# at K = 10), so each entry waited on a cache miss: `perf annotate` of a
# one-thread E-step put 27 % of its samples on the first load of the word's
# P(w | z) row and 31 % on its word-sums row. 4, 8, 16 and 32 ahead did about
# as well (benchmarks/README.md); more than a row's first four lines did not.
cdef enum:
    PREFETCH_AHEAD = 8

cdef extern from *:
    """
    /* Hints to load a row of n doubles into the caches early, to read it or
       to write it: its first four lines at most (the hardware's own
       prefetcher follows a row read in order). Nothing where GCC's builtin
       is missing; a hint never faults, whatever the address. */
    #include <stdint.h>
    #if defined(__GNUC__)
    #  define KGEO_PLSA_PREFETCH(p, rw) __builtin_prefetch((p), (rw), 3)
    #else
    #  define KGEO_PLSA_PREFETCH(p, rw) ((void)(p))
    #endif
    #define KGEO_PLSA_PREFETCH_ROW(row, n, rw) do {                   \
        uintptr_t at_ = (uintptr_t)(row) & ~(uintptr_t)63;           \
        uintptr_t end_ = (uintptr_t)((row) + (n));                  \
        for (int i_ = 0; i_ < 4 && at_ < end_; i_++, at_ += 64)     \
            KGEO_PLSA_PREFETCH((const void *)at_, (rw));             \
    } while (0)
    static inline void kgeo_plsa_prefetch_read(const double *row, ptrdiff_t n) {
        KGEO_PLSA_PREFETCH_ROW(row, n, 0);
    }
    static inline void kgeo_plsa_prefetch_write(double *row, ptrdiff_t n) {
        KGEO_PLSA_PREFETCH_ROW(row, n, 1);
    }
    """
    void prefetch_read "kgeo_plsa_prefetch_read"(const float64_t* row, intp_t n) noexcept nogil
    void prefetch_write "kgeo_plsa_prefetch_write"(float64_t* row, intp_t n) noexcept nogil


# The E-step's log-likelihood takes the entries whose count is the matrix's
# smallest (a word seen once, in counts) as one product per document, with
# one log at its end, instead of a log each: 76 % of 20 Newsgroups' entries,
# where the logs took 23 % of a fit's `perf` samples. The product is
# renormalised below PRODUCT_FLOOR (its exponent counted apart; above
# PRODUCT_CEILING too, for log_sum's values), and a factor below it gets its
# own log, so the product never leaves the normal range.
cdef float64_t PRODUCT_FLOOR = 2.0 ** -500
cdef float64_t PRODUCT_CEILING = 2.0 ** 500
cdef float64_t LN2 = 0.6931471805599453


cdef struct LogProduct:
    # A product of factors in [PRODUCT_FLOOR, PRODUCT_CEILING], as value *
    # 2**exponent with the value kept in that range too.
    float64_t value
    int64_t exponent


cdef inline LogProduct empty_product() noexcept nogil:
    cdef LogProduct one
    one.value = 1.0
    one.exponent = 0
    return one


cdef inline LogProduct times(LogProduct product, float64_t factor) noexcept nogil:
    """``product * factor``, its value brought back to [0.5, 1) (frexp's
    mantissa, exactly) where it left the range. Returned, not updated in
    place, so that a parallel loop assigns its product, which makes it
    private."""
    cdef int part
    product.value *= factor
    if product.value < PRODUCT_FLOOR or product.value > PRODUCT_CEILING:
        product.value = frexp(product.value, &part)
        product.exponent += part
    return product


cdef inline float64_t log_of(LogProduct product) noexcept nogil:
    return log(product.value) + product.exponent * LN2


def log_sum(const float64_t[:, ::1] values):
    """``sum log values`` over a table, as the log of the values' product
    (PLSA's Dirichlet priors: about 440,000 logs a step on 20 Newsgroups at
    K = 10, where NumPy's ``np.log(values).sum()`` also wrote them all to a
    new array). Four products, of every fourth value, so that the
    multiplications do not wait on each other; each is renormalised whenever
    it leaves [2**-500, 2**500] (its exponent counted apart), and a value
    outside that range (0, subnormal, huge, NaN or negative) gets a log of
    its own, so 0 gives -inf and NaN NaN, as the sum of logs does. Each
    value rounds a product by about 1e-16 relatively, so the result is
    within about 1e-16 sqrt(n) (absolute) of the sum of the logs: as close
    as NumPy's sum, within an ulp or so, where the logs are of the order of
    1 or more (probabilities, as PLSA's tables hold), but not for n values
    all near 1, whose logs are tiny (a review: 1.3e-7 relative for 10**6
    values of 1 + 1e-10 u).
    """
    cdef intp_t n = values.shape[0] * values.shape[1]
    cdef intp_t i
    cdef int lane
    cdef LogProduct products[4]
    cdef float64_t logs = 0.0, value
    cdef const float64_t* at
    if n == 0:
        return 0.0
    at = &values[0, 0]
    for lane in range(4):
        products[lane] = empty_product()
    with nogil:
        for i in range(n):
            value = at[i]
            if PRODUCT_FLOOR <= value <= PRODUCT_CEILING:
                products[i & 3] = times(products[i & 3], value)
            else:
                logs += log(value)
        for lane in range(4):
            logs += log(products[lane].value)
        logs += (products[0].exponent + products[1].exponent + products[2].exponent
                 + products[3].exponent) * LN2
    return logs


# How far above the counts a smoothing scaled up with them may go: its sums
# over topics and words (at most 2**100 terms) stay finite.
cdef int SMOOTHING_ROOM = 900


cpdef float64_t count_scale(float64_t largest, float64_t smoothing) noexcept nogil:
    """The power of 2 that counts whose largest is ``largest``, and the
    ``smoothing`` added to them, are divided by. Dividing by it changes no
    bit of EM's steps, which read only their ratios.

    For a largest count above 1, the power in (largest / 2, largest]: the
    counts stay below 2, so their sums and ``n / s`` stay finite up to the
    largest float64 (2**1024, which overflows, is never needed). For a
    subnormal largest count, the power that brings it to [1, 2): EM on
    subnormal counts lost their bits (rows of P(z | d) summing to 0.85 at
    5e-324); it is scaled up no further than leaves the smoothing over the
    scale below 2**SMOOTHING_ROOM (counts so far below the smoothing add
    nothing to it). Otherwise 1: normal counts up to 1 are used as given.
    """
    cdef int exponent, smoothing_exponent
    if largest > 1.0:
        frexp(largest, &exponent)
        return ldexp(1.0, exponent - 1)
    if not (0.0 < largest < DBL_MIN):
        return 1.0
    frexp(largest, &exponent)
    exponent -= 1
    if smoothing > 0.0:
        frexp(smoothing, &smoothing_exponent)
        exponent = min(max(exponent, smoothing_exponent - SMOOTHING_ROOM), 0)
    return ldexp(1.0, exponent)


cdef inline float64_t row_scale(const float64_t[::1] counts, const int64_t[::1] indptr,
                                intp_t d, float64_t smoothing) noexcept nogil:
    """``count_scale`` of document d's largest count."""
    cdef float64_t largest = 0.0
    cdef intp_t p
    for p in range(indptr[d], indptr[d + 1]):
        largest = max(largest, counts[p])
    return count_scale(largest, smoothing)


def em_sums(const float64_t[::1] counts, const int32_t[::1] words,
            const int64_t[::1] indptr, const int32_t[::1] word_docs,
            const int64_t[::1] word_indptr, const int64_t[::1] word_entries,
            const float64_t[:, ::1] doc_topic, const float64_t[:, ::1] word_topic,
            float64_t[:, ::1] doc_sums, float64_t[:, ::1] word_sums,
            float64_t[::1] ratios, float64_t[::1] doc_log_likelihood, float64_t unit,
            int n_threads):
    """One E-step's sums, for the M-step to multiply by the parameters.

    With ``r(d, w) = n(d, w) / s(d, w)`` (0 where ``s = 0``), sets
    ``doc_sums[d] = sum_w r(d, w) word_topic[w]``, ``word_sums[w] = sum_d
    r(d, w) doc_topic[d]`` and ``doc_log_likelihood[d] = sum_w n(d, w) log
    s(d, w)`` over the entries with ``s > 0``. Multiplied elementwise by
    ``doc_topic`` and ``word_topic`` the sums are the expected counts
    ``sum_w n(d, w) P(z | d, w)`` and ``sum_d n(d, w) P(z | d, w)`` of the
    M-step. The entries whose count is ``unit`` (the smallest; a negative
    ``unit`` matches none) add ``unit log prod s`` instead of a log each
    (``PRODUCT_FLOOR``): the same value up to rounding (2e-15 apart at most,
    relatively, on 20 Newsgroups' documents).

    On several threads, two passes, each parallel without a shared sum:
    documents (their rows of the counts), then words (their columns,
    ``word_docs`` and ``word_indptr`` being the CSC structure and
    ``word_entries`` each CSC entry's position in the CSR arrays, where
    ``ratios`` keeps ``r``). On one thread, one pass over the documents,
    each adding its ratios to its words' sums: half the memory traffic
    (24 -> 15 ms a step on 20 Newsgroups, K = 10), and the CSC arrays and
    ``ratios`` are not read (they may be empty). Either way a word adds its
    documents in increasing order, so the results are the same bits for
    any ``n_threads``.

    The two routes are two loops, not one with a branch on the thread
    count: that one was 25-30 % slower on both routes (19 and 15.5 ms a step
    against 15 and 11 ms).
    """
    cdef intp_t n_docs = indptr.shape[0] - 1
    cdef intp_t n_words = word_indptr.shape[0] - 1
    cdef intp_t n_topics = doc_topic.shape[1]
    cdef intp_t d, w, p, q, k
    cdef intp_t n_entries = indptr[n_docs] if n_docs >= 0 else 0  # an empty indptr: no row
    cdef float64_t s, r, log_likelihood
    cdef LogProduct product
    cdef const float64_t* theta
    cdef const float64_t* phi
    cdef float64_t* row
    cdef float64_t* word_row
    if n_threads == 1:
        with nogil:
            word_sums[:, :] = 0.0
            for d in range(n_docs):
                theta = &doc_topic[d, 0]
                row = &doc_sums[d, 0]
                for k in range(n_topics):
                    row[k] = 0.0
                log_likelihood = 0.0
                product = empty_product()
                for p in range(indptr[d], indptr[d + 1]):
                    if p + PREFETCH_AHEAD < n_entries:
                        w = words[p + PREFETCH_AHEAD]
                        prefetch_read(&word_topic[w, 0], n_topics)
                        prefetch_write(&word_sums[w, 0], n_topics)
                    phi = &word_topic[words[p], 0]
                    s = word_probability(theta, phi, n_topics)
                    if s <= 0.0:
                        continue
                    if counts[p] == unit and s >= PRODUCT_FLOOR:
                        product = times(product, s)
                    else:
                        log_likelihood = log_likelihood + counts[p] * log(s)
                    r = counts[p] / s
                    word_row = &word_sums[words[p], 0]
                    for k in range(n_topics):
                        row[k] += r * phi[k]
                        word_row[k] += r * theta[k]
                doc_log_likelihood[d] = log_likelihood + unit * log_of(product)
        return
    with nogil:
        for d in prange(n_docs, schedule="guided", num_threads=n_threads):
            theta = &doc_topic[d, 0]
            row = &doc_sums[d, 0]
            for k in range(n_topics):
                row[k] = 0.0
            log_likelihood = 0.0
            product = empty_product()
            for p in range(indptr[d], indptr[d + 1]):
                if p + PREFETCH_AHEAD < n_entries:
                    prefetch_read(&word_topic[words[p + PREFETCH_AHEAD], 0], n_topics)
                phi = &word_topic[words[p], 0]
                s = word_probability(theta, phi, n_topics)
                if s <= 0.0:
                    ratios[p] = 0.0
                    continue
                if counts[p] == unit and s >= PRODUCT_FLOOR:
                    product = times(product, s)
                else:
                    log_likelihood = log_likelihood + counts[p] * log(s)
                r = counts[p] / s
                ratios[p] = r
                for k in range(n_topics):
                    row[k] += r * phi[k]
            doc_log_likelihood[d] = log_likelihood + unit * log_of(product)
        for w in prange(n_words, schedule="guided", num_threads=n_threads):
            row = &word_sums[w, 0]
            for k in range(n_topics):
                row[k] = 0.0
            for q in range(word_indptr[w], word_indptr[w + 1]):
                if q + PREFETCH_AHEAD < n_entries:
                    prefetch_read(&ratios[word_entries[q + PREFETCH_AHEAD]], 1)
                    prefetch_read(&doc_topic[word_docs[q + PREFETCH_AHEAD], 0], n_topics)
                r = ratios[word_entries[q]]
                if r == 0.0:
                    continue
                theta = &doc_topic[word_docs[q], 0]
                for k in range(n_topics):
                    row[k] += r * theta[k]


# EM steps of one document between two interrupt checks (a step costs its
# words times the topics, a check a read of the clock), for documents of
# fewer than 2**16 words times topics; larger ones check at every step.
cdef int INTERRUPT_EVERY_STEPS = 16
# A bound on the rounding of a fold-in step, in units of DBL_EPSILON times
# the weight that moved most (before or after, the larger): ROUNDING_PER_WORD
# per word of the document, plus ROUNDING_FIXED, plus the topics. A weight's
# new value rounds the ratios n / s (s a sum over the topics), their sum
# over the words times P(w|z), the sum of the counts it is divided by and
# four operations more, each relative to that value; a sum of positive
# terms is within its length in ulps of the exact one. Sums' errors usually
# add up like a random walk (steps of 38,000 words were off by 54 ulps,
# against this bound's 76,000), but not where terms repeat: two words split
# into 1,000 of the same P(w|z) stopped a slow document 6e-6 from its
# maximum, at tol=1e-8, on a bound of 2 sqrt(words) ulps. So a very long
# document whose steps shrink slowly can take more steps than under the
# rule before (in ulps of the largest weight, one of 38,000 words took all
# 10,000 of the default). Ulps of the largest weight also hid the steps of
# a weight tending to 0, exact to its own ulps: a document whose weight of
# 1e-21 shrank by 4e-4 a step never read a rate again. (Three reviews.)
cdef float64_t ROUNDING_PER_WORD = 2.0
cdef float64_t ROUNDING_FIXED = 6.0
# The longest cycle of a folded-in document's steps that is sure to be seen
# within its length of steps after the next checkpoint.
cdef int CYCLE_WINDOW_MOST = 1024
# Where a fold-in's check finds the distance left beyond fold_in_tol, the
# next check comes where, at the slowest rate seen, it should be within
# this share of it (not at the edge, where rounding could fail it again).
cdef float64_t FOLD_IN_MARGIN = 0.5
# The most topics a fold-in's check is made for: its solve, K**3 / 3
# operations (0.4 G at 1,024, a few tenths of a second), runs without a
# look for Ctrl-C, and its matrix takes K**2 values per thread (8 MB).
cdef intp_t CHECK_TOPICS_MOST = 1024

# fold_in's mark, in ``settled``, of a document whose weights overflowed;
# Python reads it as OVERFLOWED.
cdef enum:
    FOLD_IN_OVERFLOWED = 2
OVERFLOWED = FOLD_IN_OVERFLOWED

# How long the caller's thread sleeps between its interrupt checks once it
# has no document left and waits for the other threads to finish theirs.
cdef long WAIT_NS = 5000000


cdef inline void add_second_moments(float64_t count, const float64_t* ratios,
                                    intp_t n_topics, float64_t* second) noexcept nogil:
    """A word's ``count phi_k phi_l / s^2`` added to the upper triangle of
    ``second``, as ``(count u_k) u_l`` from ``ratios`` ``u = phi / s``:
    taken as ``(count / s) / s``, it overflowed where ``s < 1.5e-154`` (a
    word of ``P(w | z)`` 1e-160 under every topic), and the check then
    failed every document the word was in (a review)."""
    cdef intp_t k, l
    cdef float64_t r
    for k in range(n_topics):
        r = count * ratios[k]
        for l in range(k, n_topics):
            second[k * n_topics + l] += r * ratios[l]


cdef inline bint add_subnormal_word(const float64_t* theta, const float64_t* phi,
                                    intp_t n_topics, float64_t count, float64_t* acc,
                                    float64_t* second, float64_t* ratios) noexcept nogil:
    """``acc_k += count phi_k / s`` for a word whose ``s = sum_k theta_k
    phi_k`` is subnormal (``P(w | z)`` of 1e-310 or so). There ``n / s``
    overflowed, and the weights became inf, then NaN; and ``s`` itself is
    rounded to an absolute 5e-324, so the word's shares ``theta_k phi_k /
    s`` no longer summed to 1 (a weight off by 1.8e-4: two reviews). Its
    ``phi`` is multiplied by the power of 2 that puts its largest in [1/2,
    1) (or 1), which is exact and leaves ``phi_k / s`` as it is. Where
    ``s`` is still subnormal (the weights of its topics tiny), ``phi_k /
    s``, at most ``1 / theta_k``, stays finite where it counts, ``theta_k
    > 0``. Where ``second`` is not NULL, adds the word's ``count phi_k phi_l
    / s^2`` to its upper triangle too, from the scaled ``phi`` (``ratios``,
    K values, holding ``phi_k / s``), as the step of a check does (the same
    bits as that word scaled); returns False where those are not the
    word's (``s`` still subnormal)."""
    cdef intp_t k
    cdef int exponent
    cdef float64_t largest = 0.0, s = 0.0, r
    for k in range(n_topics):
        largest = max(largest, phi[k])
    frexp(largest, &exponent)
    exponent = min(exponent, 0)  # never scaled down: s stays above 0
    for k in range(n_topics):
        s += theta[k] * ldexp(phi[k], -exponent)
    r = count / s
    if r <= DBL_MAX:
        for k in range(n_topics):
            acc[k] += r * ldexp(phi[k], -exponent)
        if second != NULL:
            for k in range(n_topics):
                ratios[k] = ldexp(phi[k], -exponent) / s
            add_second_moments(count, ratios, n_topics, second)
        return True
    for k in range(n_topics):
        if theta[k] > 0.0:
            acc[k] += count * (ldexp(phi[k], -exponent) / s)
    return False


cdef inline intp_t fold_in_scratch(intp_t n_topics, bint can_check) noexcept nogil:
    """The values `fold_in_document` works in: five K-vectors, and a K x K
    matrix where it may check (at most CHECK_TOPICS_MOST topics)."""
    return 5 * n_topics + (n_topics * n_topics if can_check else 0)


cdef inline bint check_affordable(int64_t n_words, intp_t n_topics, int steps) noexcept nogil:
    """Whether a check, ``n_words K (K + 1) / 2`` multiply-adds and a K x K
    solve (``K**3 / 3``), costs at most the ``steps + 1`` EM steps (``2 K``
    per word) a document has taken: so it at most doubles a fold-in. A
    check of 1,000 topics on a document of 10 words was 17 times its EM
    steps (a review); such a document settles on the rate's rule alone. And
    only for up to CHECK_TOPICS_MOST topics: a check does not look for
    Ctrl-C, and its matrix is K x K per thread."""
    cdef float64_t k = <float64_t> n_topics
    return (n_topics <= CHECK_TOPICS_MOST
            and n_words * k * (k + 1.0) / 2.0 + k * k * k / 3.0
            <= (steps + 1.0) * 2.0 * k * n_words)


cdef inline bint solve_in_place(float64_t* a, float64_t* b, intp_t n) noexcept nogil:
    """Solves ``a x = b`` for the n x n row-major ``a`` by Gaussian
    elimination with partial pivoting, ``x`` into ``b`` (``a`` overwritten).
    False where a pivot is 0 or not a number (the system singular to the
    working precision, or built from an overflow)."""
    cdef intp_t i, j, k, pivot
    cdef float64_t largest, factor, swap
    for k in range(n):
        pivot = k
        largest = fabs(a[k * n + k])
        for i in range(k + 1, n):
            if fabs(a[i * n + k]) > largest:
                largest = fabs(a[i * n + k])
                pivot = i
        if not largest > 0.0:  # 0 or NaN
            return False
        if pivot != k:
            for j in range(k, n):
                swap = a[k * n + j]
                a[k * n + j] = a[pivot * n + j]
                a[pivot * n + j] = swap
            swap = b[k]
            b[k] = b[pivot]
            b[pivot] = swap
        for i in range(k + 1, n):
            factor = a[i * n + k] / a[k * n + k]
            for j in range(k + 1, n):
                a[i * n + j] -= factor * a[k * n + j]
            b[i] -= factor * b[k]
    for k in range(n - 1, -1, -1):
        for j in range(k + 1, n):
            b[k] -= a[k * n + j] * b[j]
        b[k] /= a[k * n + k]
    return True


cdef int fold_in_document(const float64_t[::1] counts, const int32_t[::1] words,
                          const int64_t[::1] indptr, const float64_t[:, ::1] word_topic,
                          float64_t smoothing, int max_iter, float64_t tol,
                          float64_t[:, ::1] doc_topic, uint8_t[::1] settled, intp_t d,
                          float64_t* scratch, bint can_check,
                          Interruptible* signals) except -1 nogil:
    """`fold_in`'s EM steps for document ``d``, with ``scratch``
    (``fold_in_scratch(K, can_check)`` values) for the sums, the weights, a
    checkpoint's weights and a check's weights, matrix and step (without
    ``can_check``, no check is affordable and there is no matrix). The
    weights are written to ``doc_topic[d]`` once at the end: written there
    at every step, a row shared a cache line with its neighbour, folded in
    by the other thread (two threads took 3.8-7.9 s, by the array's
    alignment, where one took 4.5; now 3.9-4.2). Stops early, leaving
    ``settled[d]`` 0, when interrupted."""
    cdef intp_t n_topics = word_topic.shape[1]
    cdef int64_t n_words = indptr[d + 1] - indptr[d]
    cdef intp_t p, k, l
    cdef int it
    cdef int every = INTERRUPT_EVERY_STEPS
    cdef float64_t s, r, total, moved, value, change, rate, moved_weight, noise
    cdef float64_t anchor_moved = INFINITY, anchor_noise = 0.0
    cdef int anchor_it = 0, checkpoint_it = 0, window = 1
    cdef int check_it = -1, first_check = 0, last_check = -1
    cdef int confirm_it = -1, confirm_from = 0, exposed_from = -1, span
    cdef float64_t confirm_moved = 0.0, confirm_rate = 0.0
    cdef bint confirm_cut = False
    cdef float64_t left, last_left = INFINITY, needed, denominator
    cdef float64_t bound = FOLD_IN_MARGIN * tol
    cdef bint checking, candidate, readable, check_valid = True
    cdef float64_t rounding_ulps = (ROUNDING_PER_WORD * n_words
                                    + ROUNDING_FIXED + n_topics)
    cdef float64_t* acc = scratch
    cdef float64_t* theta = scratch + n_topics
    cdef float64_t* checkpoint = scratch + 2 * n_topics
    cdef float64_t* before = scratch + 3 * n_topics
    cdef float64_t* step = scratch + 4 * n_topics
    cdef float64_t* jacobian = scratch + 5 * n_topics
    cdef const float64_t* phi
    cdef float64_t scale = row_scale(counts, indptr, d, smoothing)
    cdef float64_t prior = smoothing / scale
    if (indptr[d + 1] - indptr[d]) * n_topics >= (1 << 16):
        every = 1
    for k in range(n_topics):
        theta[k] = 1.0 / n_topics
    settled[d] = 0
    for it in range(max_iter):
        # One document may take up to max_iter (2**31 - 1) steps.
        if it % every == every - 1 and poll_signals(signals):
            return 0  # interrupted: the output is dropped
        # A check's sums are taken at a scheduled check, and, where one is
        # affordable, at a confirmation's end and the last step, where the
        # rate's rule may stop the document with no next step to check.
        checking = can_check and (it == check_it or (
            (it == confirm_it or it == max_iter - 1)
            and check_affordable(n_words, n_topics, it)))
        if checking:
            # The sums of the step's Jacobian, M_kl = sum_w n phi_k phi_l / s^2,
            # at the weights it starts from, by the same pass.
            memcpy(before, theta, n_topics * sizeof(float64_t))
            for k in range(n_topics * n_topics):
                jacobian[k] = 0.0
            check_valid = True
        for k in range(n_topics):
            acc[k] = 0.0
        total = 0.0
        for p in range(indptr[d], indptr[d + 1]):
            phi = &word_topic[words[p], 0]
            s = word_probability(theta, phi, n_topics)
            if s <= 0.0:
                continue
            total = total + counts[p] / scale
            if s >= DBL_MIN:
                r = (counts[p] / scale) / s
                for k in range(n_topics):
                    acc[k] += r * phi[k]
                if checking:  # step holds phi / s until the check uses it
                    for k in range(n_topics):
                        step[k] = phi[k] / s
                    add_second_moments(counts[p] / scale, step, n_topics, jacobian)
            else:
                if not add_subnormal_word(theta, phi, n_topics, counts[p] / scale, acc,
                                          jacobian if checking else NULL, step):
                    check_valid = False  # no estimate this time
        if total == 0.0 and prior == 0.0:  # nothing to learn from
            settled[d] = 1
            break
        moved = 0.0
        moved_weight = 0.0
        for k in range(n_topics):
            value = (theta[k] * acc[k] + prior) / (total + n_topics * prior)
            change = fabs(value - theta[k])
            if change > moved:
                moved = change
                moved_weight = max(value, theta[k])
            theta[k] = value
        if moved == 0.0:  # a fixed point of EM's steps (to the bit)
            settled[d] = 1
            break
        # Rounded, EM's steps end at a fixed point or in a cycle of points
        # that the steps move by an ulp or so and back (40 short documents
        # of 3 topics: 27 fixed points, 11 cycles of 2 steps, 2 of 3; with
        # 16 topics, cycles of 6 and 12; a document of 1,981 words, a cycle
        # of 2 by 27 ulps). Once in one, no step leads further. It is seen
        # as the weights of a checkpoint coming back: a checkpoint taken
        # anew after `window` steps, which doubles up to CYCLE_WINDOW_MOST
        # (Brent's cycle finding), finds a cycle of up to that many steps
        # within that many steps plus one round of it.
        if it > 0:
            for k in range(n_topics):
                if theta[k] != checkpoint[k]:
                    break
            else:
                settled[d] = 1
                break
        if it == 0 or it - checkpoint_it == window:
            memcpy(checkpoint, theta, n_topics * sizeof(float64_t))
            if it > 0:
                window = min(2 * window, CYCLE_WINDOW_MOST)
            checkpoint_it = it
        noise = rounding_ulps * DBL_EPSILON * moved_weight
        # EM converges linearly: at its rate q, the weights are still about
        # step q / (1 - q) from their limit, which nearly equal topics make
        # hundreds of times the step (a review: 2.6e-6 from the maximum at
        # tol=1e-8, rate 0.996). q is read over the steps since the anchor,
        # the last step at which it was read, once the step has changed by
        # more than two steps' rounding. Read from the last two steps
        # always, it was noise where they differ by about their rounding:
        # steps of 9e-13, rounded by 1e-16 or so, shrinking at 1 - 3.8e-6,
        # seemed to shrink fast or to grow, and a step that grew and was at
        # most 2**-40 was taken as rounding's: the document stopped 4.3e-7
        # from its maximum at tol=1e-8, 2.4e-7 at 1e-12 (two reviews).
        # The rate read is that of the largest step. A slow direction (two
        # topics nearly equal) under a faster one moves less than the
        # faster one while it lasts: read from the faster, the distance
        # left seemed within tol, and a document stopped long before the
        # slow one was done (three topics, two 1e-4 apart: 2.8e-5 from the
        # maximum at tol=1e-8, 2.7e-3 with smoothing 1e-4; a review). So
        # the first step that the rate says is within tol does not stop a
        # document: it runs on until, at that rate, the step would be down
        # to its rounding (confirm_it, or the last step). A step within
        # twice that prediction plus twice its rounding bound shows no
        # slower direction above rounding; a check (below) verifies that.
        # A larger one is a slower direction, now exposed: the next step
        # within tol at a rate read from steps after that point (exposed_from)
        # is checked. The check comes only once the fast directions are done:
        # made where they were not, Newton's estimate missed the slow
        # direction (its J off by about step / theta, far more than the
        # slow direction's own gap): a document settled 0.067 from its
        # maximum at 1e-3, where this rule had warned (a review).
        if check_it < 0:
            candidate = False
            if confirm_it >= 0 and it >= confirm_it:  # span ends it by the last step
                candidate = moved <= (2.0 * confirm_moved * pow(confirm_rate, it - confirm_from)
                                      + 2.0 * noise)
                if not candidate:
                    confirm_it = -1
                    # A confirmation that fold_in_max_iter cut short of
                    # rounding proves little either way: on this last step, a
                    # rate read after it began decides, as without a
                    # confirmation (a slow document then warned where it had
                    # settled: the suite's own warnings). Otherwise only a
                    # rate read from here on can.
                    exposed_from = confirm_from if confirm_cut else it
            readable = anchor_moved < INFINITY and fabs(anchor_moved - moved) > anchor_noise + noise
            if readable and not candidate:
                rate = moved / anchor_moved
                if it - anchor_it > 1:
                    rate = pow(rate, 1.0 / (it - anchor_it))
                if rate < 1.0 and moved <= tol and moved * rate <= tol * (1.0 - rate):
                    if exposed_from >= 0:
                        candidate = anchor_it > exposed_from
                    elif confirm_it < 0:
                        span = 1
                        confirm_cut = False
                        if moved > noise and rate > 0.0:
                            # Within the last step (which checks too): it +
                            # span stays an int however large max_iter is.
                            # Capped at it + 1 steps as well, the check had
                            # not reached rounding where it passed: a document
                            # stopped at 1e-4 after 13 steps, 0.109 from its
                            # maximum (a review).
                            needed = ceil(log(noise / moved) / log(rate))
                            confirm_cut = needed > max_iter - 1 - it
                            span = max(<int> min(needed, <float64_t> (max_iter - 1 - it)), 1)
                        confirm_it = it + span
                        confirm_from = it
                        confirm_moved = moved
                        confirm_rate = rate
            if candidate:
                if not (can_check and check_affordable(n_words, n_topics, it)):
                    settled[d] = 1
                    break
                # Checked on this step where its sums were taken (a
                # confirmation's end, the last step), else on the next.
                check_it = first_check = it if checking else it + 1
            elif anchor_moved == INFINITY or readable:
                # The first step has no rate, and is the first anchor. (Rules
                # once settled a document at its first or second step from
                # the uniform start, 0.5 from the maximum, where topics 1e-8
                # apart move it by 5e-9 a step, growing: a review. It now runs
                # on, and warns where it cannot settle.)
                anchor_moved = moved
                anchor_noise = noise
                anchor_it = it
        if it == check_it:
            # The rate's rule above says the document is done: Newton's step
            # checks it. EM's step is the map T(theta), whose fixed point is
            # the maximum; Newton's step for T(x) - x = 0 from the step's
            # start, delta = (I - J)^-1 (T(theta) - theta), J = (diag(a) -
            # diag(theta) M) / (N + K smoothing) its Jacobian (a the sums
            # acc), lands on the maximum up to the square of the distance.
            # So delta - step estimates the distance left in every direction
            # at once, a slow direction the rule has not exposed included
            # (two topics nearly equal make I - J nearly singular): the rule
            # alone settled a document 0.145 from its maximum at 1e-4 where
            # fold_in_max_iter cut its confirmation short, and one whose
            # topics were 3.1e-5 apart 2.9e-3 from it at the default 1e-8 (two
            # reviews).
            denominator = total + n_topics * prior  # the M-step's
            for k in range(n_topics):
                for l in range(k):
                    jacobian[k * n_topics + l] = jacobian[l * n_topics + k]
            for k in range(n_topics):
                step[k] = theta[k] - before[k]
                for l in range(n_topics):
                    jacobian[k * n_topics + l] *= before[k] / denominator
                jacobian[k * n_topics + k] += 1.0 - acc[k] / denominator
            left = INFINITY
            if check_valid:
                memcpy(acc, step, n_topics * sizeof(float64_t))  # delta, solved in place
                if solve_in_place(jacobian, acc, n_topics):
                    left = 0.0
                    for k in range(n_topics):
                        left = max(left, fabs(acc[k] - step[k]))
                    if left != left:
                        left = INFINITY
            if left <= tol:
                settled[d] = 1
                break
            # The next check where the distance left, shrinking at the
            # slowest rate, should be within the bound: that rate is at
            # least left / (left + step) (the distance the step's own rate
            # would leave), and that at which left shrank since the last
            # check. Where left is no estimate or did not shrink, as many
            # steps again as since the first check.
            needed = it - first_check + 1
            if left < INFINITY and (last_check < 0 or left < last_left):
                rate = left / (left + moved)
                if last_check >= 0:
                    rate = max(rate, pow(left / last_left, 1.0 / (it - last_check)))
                if 0.0 < rate < 1.0:
                    needed = ceil(log(bound / left) / log(rate))
            last_check = it
            last_left = left
            # Within the last step: it + span stays an int however large
            # max_iter is.
            check_it = it + max(<int> min(needed, <float64_t> (max_iter - 1 - it)), 1)
    # A NaN weight moves by NaN, which no comparison counts: a document
    # whose weights had turned NaN was reported settled, at a "fixed point"
    # (a review). What can still overflow (a subnormal s under a weight of
    # 1e-300 or so, see above) is marked for Python to refuse.
    for k in range(n_topics):
        if not theta[k] <= DBL_MAX:
            settled[d] = FOLD_IN_OVERFLOWED
        doc_topic[d, k] = theta[k]
    return 0


def fold_in(const float64_t[::1] counts, const int32_t[::1] words,
            const int64_t[::1] indptr, const float64_t[:, ::1] word_topic,
            float64_t smoothing, int max_iter, float64_t tol,
            float64_t[:, ::1] doc_topic, uint8_t[::1] settled, int n_threads,
            bint main_thread=False):
    """``P(z | d)`` of each document under fixed ``P(w | z)``, by EM.

    Each document starts at the uniform ``1/K`` and alternates the E- and
    M-steps of its own mixing weights, ``theta_k <- (theta_k sum_w r(d, w)
    phi_k(w) + smoothing) / (sum_w n(d, w) + K smoothing)`` over the words with
    ``s > 0``, until no weight moves by more than ``tol`` and, at the rate
    ``q`` at which the steps shrink, the distance left, ``step q / (1 -
    q)``, is within ``tol`` too; or the steps reach a fixed point or go
    round a cycle (the weights equal those at a checkpoint, taken at the
    first step and again after 1, 2, 4, ... steps, then every
    ``CYCLE_WINDOW_MOST``); or ``max_iter`` steps. ``q`` is read over the
    steps since it was last read, once the step has changed by more than
    the bounds on the two steps' rounding (``ROUNDING_PER_WORD`` ulps of the
    weight that moved most per word, plus ``ROUNDING_FIXED`` plus the
    topics), so that the step has surely shrunk or grown, though the rate
    read can still carry rounding; the first step has no rate. The first
    step within ``tol`` on that reading is confirmed: the document runs on
    until, at that rate, the step would be down to its rounding, and stops
    there if the step is where the rate said; otherwise a slower direction
    has shown, and the next step within ``tol`` on a rate read after that
    point stops it. (Where ``max_iter`` cuts the confirmation short, a rate
    read after it began decides on the last step.) Each such stop is
    checked, where a check costs at most the steps taken (see
    ``check_affordable``): that step, at a confirmation's end or the last
    step, or the next, solves ``(I - J) delta = step``, ``J`` the Jacobian
    of the step's map at the weights it starts from, for Newton's step; the
    document stops only where ``delta - step``, an estimate of the distance
    left in every direction, is within ``tol``. Otherwise the next check
    comes where the distance should be within ``FOLD_IN_MARGIN * tol`` at
    the slowest rate seen (at the latest on the last step). (The objective
    is concave in ``theta``, so EM approaches its maximum.)
    Each document runs alone from the same start: the same steps, and the
    same bits, whatever the batch and thread count. A document with no such
    word (and ``smoothing = 0``) keeps the uniform start.

    A document whose largest count exceeds 1, or is subnormal, is folded in
    with its counts and the smoothing divided by a power of 2 near it
    (``count_scale``), which changes no bit of the steps: ``n / s`` and the
    counts' sum then stay finite for counts up to the largest float64, and
    subnormal counts keep the ratios they hold.

    Writes ``doc_topic``, and into ``settled`` whether each document stopped
    before ``max_iter`` ran out (1) or not (0), or ``OVERFLOWED`` where its
    weights are not finite. Called from Python's main thread
    (``main_thread``), it runs the signal handlers on the way, so Ctrl-C
    stops it within ``INTERRUPT_CHECK_MS`` and a few EM steps.
    """
    cdef intp_t n_docs = indptr.shape[0] - 1
    cdef intp_t n_topics = word_topic.shape[1]
    cdef long long d
    cdef long long next_doc = 0, started = 0, finished = 0
    cdef int64_t longest = 0
    cdef bint can_check
    cdef float64_t* buffers
    cdef float64_t* scratch
    cdef Interruptible signals
    cdef timespec wait
    if n_docs == 0:
        return
    n_threads = threads_for(n_threads, indptr[n_docs] * n_topics)
    # A check is affordable for some document at some step only if it is for
    # the longest at the last (check_affordable grows with both).
    for d in range(n_docs):
        longest = max(longest, indptr[d + 1] - indptr[d])
    can_check = max_iter > 0 and check_affordable(longest, n_topics, max_iter - 1)
    # The threads' scratches at least a 64-byte line apart, so that they
    # share none.
    cdef intp_t stride = (fold_in_scratch(n_topics, can_check) + 7) // 8 * 8 + 8
    buffers = <float64_t*> malloc(n_threads * stride * sizeof(float64_t))
    if buffers == NULL:
        raise MemoryError()
    wait.tv_sec = 0
    wait.tv_nsec = WAIT_NS
    interruptible_init(&signals, main_thread)
    try:
        # Each thread takes the next document until none is left (a
        # prange's dynamic schedule, by hand): a prange would leave the
        # caller's thread, the only one signals reach, at the loop's closing
        # barrier while another thread folds in a document of endless steps.
        with nogil, parallel(num_threads=n_threads):
            scratch = buffers + threadid() * stride
            fetch_add(&started, 1)
            while True:
                d = fetch_add(&next_doc, 1)
                if d >= n_docs or poll_signals(&signals):
                    break
                fold_in_document(counts, words, indptr, word_topic, smoothing, max_iter,
                                 tol, doc_topic, settled, d, scratch, can_check, &signals)
            fetch_add(&finished, 1)
            if threadid() == 0:
                # Every document taken: wait for the others, still checking.
                while atomic_load(&finished) < atomic_load(&started):
                    poll_signals(&signals)
                    nanosleep(&wait, NULL)
    finally:
        free(buffers)


def fisher_word_scores(const float64_t[::1] counts, const int32_t[::1] words,
                       const int64_t[::1] indptr, const float64_t[:, ::1] doc_topic,
                       const float64_t[:, ::1] word_topic,
                       const float64_t[:, ::1] sqrt_word_topic, int64_t column_offset,
                       int64_t[::1] write_at, float64_t[::1] out_data,
                       int32_t[::1] out_indices, float64_t[:, ::1] topic_sums):
    """Write each document's word-level Fisher scores into a CSR being built.

    For word ``w`` of document ``d`` and topic ``k`` the score is
    ``P^(w | d) P(z_k | d, w) / sqrt(P(w | z_k))``, computed as
    ``(n(d, w) / n(d)) theta_k sqrt(phi_k(w)) / s(d, w)`` (no division by a
    small ``phi``), in column ``column_offset + w K + k``; ``n(d)`` counts all
    the document's words (summed after dividing by a power of 2 near the
    largest, so that it cannot overflow, which changes no bit of the share).
    Entries with ``s = 0`` get score 0. Row ``d``'s entries go from
    ``write_at[d]``, which is advanced past them.

    Also sets ``topic_sums[d, k] = sum_w P^(w | d) P(z_k | d, w)``, the exact
    form of the topic-level score before its division by ``sqrt(P(z_k))``.
    """
    cdef intp_t n_docs = indptr.shape[0] - 1
    cdef intp_t n_topics = doc_topic.shape[1]
    cdef intp_t d, p, k
    cdef intp_t n_entries = indptr[n_docs] if n_docs >= 0 else 0  # an empty indptr: no row
    cdef int64_t at
    cdef int32_t w
    cdef float64_t s, length, share, scale
    cdef const float64_t* theta
    cdef const float64_t* phi
    with nogil:
        for d in range(n_docs):
            theta = &doc_topic[d, 0]
            scale = row_scale(counts, indptr, d, 0.0)
            length = 0.0
            for p in range(indptr[d], indptr[d + 1]):
                length += counts[p] / scale
            for k in range(n_topics):
                topic_sums[d, k] = 0.0
            at = write_at[d]
            for p in range(indptr[d], indptr[d + 1]):
                if p + PREFETCH_AHEAD < n_entries:
                    w = words[p + PREFETCH_AHEAD]
                    prefetch_read(&word_topic[w, 0], n_topics)
                    prefetch_read(&sqrt_word_topic[w, 0], n_topics)
                w = words[p]
                phi = &word_topic[w, 0]
                s = word_probability(theta, phi, n_topics)
                share = (counts[p] / scale) / length
                for k in range(n_topics):
                    out_indices[at + k] = <int32_t> (column_offset + w * n_topics + k)
                    if s > 0.0:
                        out_data[at + k] = share * theta[k] * sqrt_word_topic[w, k] / s
                        topic_sums[d, k] += share * theta[k] * phi[k] / s
                    else:
                        out_data[at + k] = 0.0
                at += n_topics
            write_at[d] = at
