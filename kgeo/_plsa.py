"""Probabilistic latent semantic analysis and its Fisher kernel (Hofmann 2000).

PLSA models each document as a mixture of K topics, ``P(w | d) = sum_k
P(z_k | d) P(w | z_k)``, fitted by EM. Hofmann's Fisher kernel compares two
documents through the gradients of their per-word log-likelihoods in the
square-root parameters ``2 sqrt(P(z_k))`` and ``2 sqrt(P(w | z_k))``, with the
Fisher information taken as the identity (exact for a full multinomial in
that parameterisation):

    K(d, d') = sum_k P(z_k | d) P(z_k | d') / P(z_k)
             + sum_w P^(w | d) P^(w | d') sum_k P(z_k | d, w) P(z_k | d', w) / P(w | z_k)

where ``P^(w | d)`` is the document's word frequency. Both terms are inner
products of explicit sparse vectors (K topic scores, and K scores for each
word of the document), so :class:`PLSAFisherEmbedding` returns those vectors,
and kgeo's linear kernel on them is the Fisher kernel: exactly, in the time
of the sum over shared words that the kernel needs anyway
(``SVM(kernel="linear")``, ``pairwise_kernels(..., kernel="linear")``).

What the papers leave open, and the choices made here (``../shared/papers``,
NOTES part A): the Dirichlet prior of Hofmann's MAP-EM is a pseudo-count added
to the expected counts (``topic_word_smoothing``, ``doc_topic_smoothing``);
EM starts from random ``P(w | z)`` and uniform ``P(z | d)`` and stops on a
relative change of its objective; documents, those of the fit included, are
represented by folding them in (EM over ``P(z | d)`` alone with ``P(w | z)``
fixed); no normalisation is applied to the kernel; no tempering.
"""

import math
import numbers
import os
import reprlib
import threading
import warnings

import numpy as np
import scipy.sparse as sp

from . import _plsa_em
from ._base import (EstimatorMixin, TransformerMixin, check_is_fitted,
                    count_transformer_tags, wraps_output)
from ._kernels import parallel_threads
from ._pairwise import resolve_n_jobs
from ._validation import (_callers_stacklevel, check_counts, check_n_features, check_positive,
                          feature_names, is_one_of, listed_rows)
from .exceptions import ConvergenceWarning, parameter_errors, sklearn_compatible

__all__ = ["PLSA", "PLSAFisherEmbedding"]

# P(z) at or below which a fitted topic counts as unused for Fisher scores,
# which divide by sqrt(P(z)): sqrt of float64's epsilon.
_UNUSED_TOPIC = float(np.sqrt(np.finfo(np.float64).eps))

_INT32_MAX = np.iinfo(np.int32).max


@parameter_errors()
def _check_integer(value, name, minimum):
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral)
            or value < minimum):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


@parameter_errors()
def _check_random_state(random_state):
    if random_state is None or isinstance(random_state, np.random.Generator):
        return np.random.default_rng(random_state)
    if (isinstance(random_state, (bool, np.bool_))
            or not isinstance(random_state, numbers.Integral) or random_state < 0):
        raise ValueError(
            f"random_state must be None, an integer >= 0 or a numpy.random.Generator, "
            f"got {random_state!r}")
    return np.random.default_rng(int(random_state))


def _normalise(probabilities, axis):
    """Divide by the sums along ``axis``, in place. Without smoothing a
    document without words (or a topic no word is expected from) sums to
    0: it becomes uniform (the topic stays 0), not NaN."""
    sums = probabilities.sum(axis=axis, keepdims=True)
    empty = sums == 0
    probabilities /= np.where(empty, 1.0, sums)
    if axis == 1 and np.any(empty):
        probabilities[empty.ravel()] = 1.0 / probabilities.shape[1]


def _word_major(model):
    """``components_`` transposed, C-contiguous: ``P(w | z)`` with word w's
    K-vector contiguous, as the loops read it. Made from ``components_`` at
    each call, so that components assigned to a fitted model are used."""
    given = np.asarray(model.components_)
    if given.dtype.kind not in "biuf":
        # float64's conversion would read the digits of strings.
        raise TypeError(f"components_ must hold numbers, got dtype {given.dtype}")
    components = given.astype(np.float64, copy=False)
    # The fit's number of topics, not n_components, which set_params may
    # have changed since (a fitted model keeps its fitted attributes).
    n_topics = model.topic_probability_.shape[0]
    if components.shape != (n_topics, model.n_features_in_):
        raise ValueError(
            f"components_ has shape {components.shape}, expected ({n_topics}, "
            f"{model.n_features_in_}) for the fit's {n_topics} topics and "
            f"{model.n_features_in_} features")
    # Probabilities P(w | z): a NaN or inf gave NaN topics, negative ones
    # silently uniform ones.
    if not np.all(np.isfinite(components)) or np.any(components < 0):
        bad = np.flatnonzero(~(np.isfinite(components) & (components >= 0)).ravel())
        raise ValueError(
            f"components_ must hold finite probabilities >= 0, got {bad.size} other "
            f"value(s), first {float(components.flat[bad[0]])!r} at "
            f"{tuple(int(k) for k in np.unravel_index(bad[0], components.shape))}")
    return np.ascontiguousarray(components.T)


def fold_in(X, word_topic, params):
    """``P(z | d)`` of each row of ``X`` under the fixed ``word_topic``
    (word-major ``P(w | z)``), with the fold-in settings of ``params`` (a
    PLSA or PLSAFisherEmbedding: ``doc_topic_smoothing``, ``fold_in_tol``,
    ``fold_in_max_iter``, ``n_jobs``). A warning names the first caller
    outside kgeo (a ``transform``'s)."""
    doc_topic = np.empty((X.shape[0], word_topic.shape[1]))
    settled = np.empty(X.shape[0], dtype=np.uint8)
    _plsa_em.fold_in(*_csr_arrays(X), word_topic, float(params.doc_topic_smoothing),
                     int(params.fold_in_max_iter), float(params.fold_in_tol), doc_topic,
                     settled, resolve_n_jobs(params.n_jobs),
                     threading.current_thread() is threading.main_thread())
    overflowed = np.flatnonzero(settled == _plsa_em.OVERFLOWED)
    if overflowed.size:
        row = X[int(overflowed[0])]
        smallest = word_topic[row.indices][word_topic[row.indices] > 0].min()
        raise ValueError(
            f"{overflowed.size} of {X.shape[0]} documents could not be folded in, first "
            f"row {int(overflowed[0])}: its EM steps overflowed, as P(w|z) of its words "
            f"(down to {smallest:.3g}) times its topic weights fell below float64's "
            f"smallest normal number, 2.2e-308 (a model fitted with "
            f"topic_word_smoothing > 0 keeps P(w|z) away from it)")
    unsettled = int(np.count_nonzero(settled == 0))
    if unsettled:
        warnings.warn(
            f"{unsettled} of {X.shape[0]} documents took all fold_in_max_iter="
            f"{params.fold_in_max_iter} EM steps without P(z|d) settling within "
            f"fold_in_tol={params.fold_in_tol}; raise fold_in_max_iter",
            sklearn_compatible(ConvergenceWarning), stacklevel=_callers_stacklevel())
    return doc_topic


def _csr_arrays(X):
    """The arrays the compiled loops read: counts, int32 words, int64 row pointers."""
    return X.data, X.indices, X.indptr.astype(np.int64)


def _gib(n_bytes):
    """A byte count of any size in GiB, to 3 digits: beyond 2**1000 by its
    logarithm (its float overflows; its str stops at 4,300 digits)."""
    if n_bytes < 2**1000:
        return f"{n_bytes / 2**30:.3g}"
    digits = math.log10(n_bytes) - 30 * math.log10(2)
    exponent = math.floor(digits)
    return f"{10 ** (digits - exponent):.2f}e+{exponent}"


def _integer_text(n):
    """``n`` shortened (reprlib), or as a power of 2 where even its repr
    fails (beyond Python's 4,300 digits)."""
    return reprlib.repr(n) if n.bit_length() < 10000 else f"about 2**{n.bit_length() - 1}"


def _physical_memory():
    """The machine's physical memory in bytes, or None where the system does
    not say (``os.sysconf`` on Linux and most Unix systems)."""
    try:
        pages, page = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * page if pages > 0 and page > 0 else None


class PLSA(TransformerMixin, EstimatorMixin):
    """Probabilistic latent semantic analysis (the aspect model), fitted by EM.

    Each document ``d`` is a mixture of ``n_components`` topics,
    ``P(w | d) = sum_k P(z_k | d) P(w | z_k)``. The fit maximises
    ``sum_{d, w} n(d, w) log P(w | d)`` plus the log-density of symmetric
    Dirichlet priors on each ``P(. | z_k)`` and each ``P(. | d)`` (Hofmann's
    MAP-EM), whose M-step adds ``topic_word_smoothing`` and
    ``doc_topic_smoothing`` to the expected counts.

    Parameters
    ----------
    n_components : int, default=10
        Number of topics K.
    topic_word_smoothing : float, default=0.01
        Pseudo-count added to every word's expected count in every topic
        (prior concentration ``1 + topic_word_smoothing``). With 0, words
        absent from the fit get probability 0 and are ignored when documents
        are folded in.
    doc_topic_smoothing : float, default=0.01
        Pseudo-count added to every topic's expected count in every document.
    max_iter : int, default=1000
        Most EM steps of the fit.
    tol : float, default=1e-6
        The fit stops when a step raises the objective by no more than
        ``tol`` times its magnitude.
    fold_in_max_iter : int, default=10000
        Most EM steps for each document folded in by :meth:`transform`.
    fold_in_tol : float, default=1e-8
        A folded-in document stops when no ``P(z | d)`` moves by more than
        this, and the distance its steps still lead, estimated from the rate
        at which they shrink, is within it too (EM's steps shrink
        geometrically, slowly where topics are nearly equal: the step alone
        stopped 2.6e-6 from the maximum at 1e-8, with the distance left
        1.0e-8, and with the confirmation below 2.7e-12; 7.4e-14 at 1e-4). The
        rate read is that of the largest step, and a slow direction (two
        topics nearly equal) can lie under a faster one: so a document first
        runs on until, at that rate, its step would be down to rounding, and
        stops there only if no slower direction has shown; one that has is
        then followed at its own rate. Without that confirmation, three
        topics, two of them 1e-4 apart, stopped 2.8e-5 from the maximum at
        1e-8 (2.7e-3 with ``doc_topic_smoothing=1e-4``), and of 3,000 20
        Newsgroups test documents under 16 topics, 449 stopped beyond the
        tolerance at 1e-4 (4.2 times it), 15 at 1e-8 and 44 at 1e-12; given
        10**6 steps the three topics now stop 5.0e-9 from the maximum (at the
        default 10,000 they warn, 1.7e-5 from it), and none of the 3,000
        beyond the tolerance. That has a cost: as each document runs on to
        rounding, a looser tolerance saves little (the 3,000 on one thread:
        1.26 s at 1e-4, 1.32 s at 1e-8, 1.33 s at 1e-12, against 0.23, 0.63
        and 1.05 s without the confirmation). Each stop this rule allows is
        then checked by Newton's estimate of the distance left: that step (at
        a confirmation's end or the last step) or the next also computes the
        Jacobian ``J`` of EM's map and solves ``(I - J) delta = step``, and
        ``delta - step`` estimates the distance left in every direction at
        once. The document stops only where that is within ``tol``; otherwise
        it runs on, checked again where, at the slowest rate seen, the
        distance should be within half of ``tol``. The rule alone stopped
        documents far from their maximum where ``fold_in_max_iter`` cut a
        confirmation short (five topics at 1e-4, 0.145 from it with
        ``fold_in_max_iter=200``) and, at the default tolerance, four topics
        3.1e-5 apart, 2.9e-3 from it (two reviews); both now warn. Made on its
        own, at the first step the rate put within ``tol``, the estimate
        missed slow directions while the fast ones were not done (0.067 from
        the maximum at 1e-3): it comes after the confirmation. At looser
        tolerances it can still miss them, where the rule did too (a review's
        1,187 problems of nearly equal topics: settled beyond 3e-3 in 4, 17
        times it at worst, against 47 by the rule alone; beyond 1e-3, 1
        against 15). A check adds ``K (K + 1) / 2`` multiply-adds per word to
        a step's ``2 K`` (``K`` topics) and a ``K x K`` solve, and is made
        only where it costs at most the steps taken so far, and for at most
        1,024 topics (1,000 topics on documents of 10 words stop on the rule
        alone): the 3,000 documents took 3 % longer, under 64 and 100 topics
        6-10 %. Where EM converges more slowly than geometrically (a weight
        tending to 0 without smoothing), a document may use all
        ``fold_in_max_iter`` steps and is reported as not settled, or stop up
        to twice ``tol`` from its maximum (a review's 762 such problems: 35
        beyond ``tol``, at most 1.93 times it). The rate is read over as many
        steps as it takes the step to change by more than a bound on its
        rounding, so that rounding does not end a slow document early (read
        from two steps of 1e-12, a rate of 1 - 3.8e-6 once stopped one 4.3e-7
        from its maximum at the default; now 2.9e-10). The bound grows with
        the document's words, so a very long document whose steps shrink
        slowly can need more steps than a shorter one. A document also stops
        where its rounded steps reach a fixed point or go round a cycle, from
        which no step leads further: at 0, that is where each stops (2.1e-11
        from the maximum for that rate; 4.7e-9 with its two words each split
        into 1,000 of the same ``P(w | z)``, whose sums round more, and so at
        any tolerance below that), unless its steps shrink more slowly than
        geometrically or cycle over more than 1,024 steps. A document whose
        counts are all subnormal (below 2.2e-308) is scaled up by a power of
        2, with the smoothing, as far as the smoothing stays finite; where
        it does not, the counts are negligible beside it. Subnormal counts
        beside normal ones are summed to an absolute 5e-324, and their
        weights can be far from the maximum.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the random start of ``P(w | z)``.
    n_jobs : int, default=None
        Threads for EM and folding in (None: ``OMP_NUM_THREADS`` or every
        CPU; -1: every CPU; -2: all but one, and so on, as in joblib). The
        results do not depend on it.
    verbose : int or bool, default=0
        Above 0, prints the objective every ``verbose`` EM steps (True:
        every step).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        ``P(w | z_k)``, each row summing to 1.
    topic_probability_ : ndarray of shape (n_components,)
        ``P(z_k) = sum_d P(d) P(z_k | d)`` with ``P(d)`` proportional to the
        document's length.
    doc_topic_ : ndarray of shape (n_documents, n_components)
        ``P(z_k | d)`` of the documents of the fit, as fitted.
    log_likelihood_ : float
        ``sum_{d, w} n(d, w) log P(w | d)`` at the fitted parameters.
    objective_curve_ : ndarray of shape (n_iter_ + 1,)
        The objective (log-likelihood plus log prior, up to a constant) at
        each step's parameters; EM never lowers it.
    n_iter_ : int
        EM steps taken.
    n_features_in_ : int
    feature_names_in_ : ndarray of str objects, shape (n_features_in_,)
        The column names of X at ``fit`` when it was a data frame with string
        names (words); ``transform`` then checks X has the same, in the same
        order. Absent otherwise.

    Notes
    -----
    The objective has local maxima: ``random_state`` chooses one. Each EM
    step costs ``O(nnz(X) K)``. Folding a document in climbs a concave
    function of its ``P(z | d)`` (EM approaches its maximum, which need not
    be unique), each document alone from the uniform start, so
    :meth:`transform` gives a document the same result whatever the batch it
    comes in.

    References
    ----------
    T. Hofmann, "Probabilistic latent semantic indexing", SIGIR 1999; and
    "Learning the similarity of documents: an information-geometric approach
    to document retrieval and categorization", NIPS 12, 2000.

    Examples
    --------
    Two topics in four documents, the first two about words 0 and 1, the
    others about words 2 and 3:

    >>> import numpy as np, kgeo
    >>> counts = np.array([[5, 4, 0, 0], [4, 5, 0, 0], [0, 0, 5, 4], [0, 1, 4, 5]])
    >>> plsa = kgeo.PLSA(2, random_state=0).fit(counts)
    >>> plsa.transform([[3, 3, 0, 0], [0, 0, 2, 2]]).round(2)  # P(z | d)
    array([[1., 0.],
           [0., 1.]])
    """

    def __init__(self, n_components=10, *, topic_word_smoothing=0.01,
                 doc_topic_smoothing=0.01, max_iter=1000, tol=1e-6,
                 fold_in_max_iter=10000, fold_in_tol=1e-8, random_state=None,
                 n_jobs=None, verbose=0):
        self.n_components = n_components
        self.topic_word_smoothing = topic_word_smoothing
        self.doc_topic_smoothing = doc_topic_smoothing
        self.max_iter = max_iter
        self.tol = tol
        self.fold_in_max_iter = fold_in_max_iter
        self.fold_in_tol = fold_in_tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    @parameter_errors()
    def _check_params(self):
        _check_integer(self.n_components, "n_components", 1)
        check_positive(self.topic_word_smoothing, "topic_word_smoothing", allow_zero=True)
        check_positive(self.doc_topic_smoothing, "doc_topic_smoothing", allow_zero=True)
        _check_integer(self.max_iter, "max_iter", 1)
        _check_integer(self.fold_in_max_iter, "fold_in_max_iter", 1)
        if self.fold_in_max_iter > _INT32_MAX:
            raise ValueError(f"fold_in_max_iter must be at most {_INT32_MAX}, "
                             f"got {self.fold_in_max_iter!r}")
        check_positive(self.tol, "tol", allow_zero=True)
        check_positive(self.fold_in_tol, "fold_in_tol", allow_zero=True)
        if not isinstance(self.verbose, (bool, np.bool_)):
            _check_integer(self.verbose, "verbose", 0)
        resolve_n_jobs(self.n_jobs)

    def fit(self, X, y=None):
        """Fit the topics to term counts by EM.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)
            Term counts (or any non-negative weights).
        y : ignored

        Returns
        -------
        self
        """
        self._check_params()
        names = feature_names(X)
        X = check_counts(X, estimator="PLSA")
        if X.nnz == 0:
            raise ValueError("X has no nonzero count; PLSA needs words to fit topics to")
        n_docs, n_words = X.shape
        n_topics = int(self.n_components)
        # The model is its tables P(w | z) and P(z | d), dense, with as large
        # ones for the sums of a step: refused here where they would not fit
        # in the machine's memory, not by NumPy's MemoryError (or an
        # OverflowError) part-way through (a review: n_components=10**9 on 4
        # words; a hashed vocabulary of 2**31 columns holding 5 counts).
        table_bytes = 16 * (n_words + n_docs) * n_topics
        memory = _physical_memory()
        if table_bytes > (memory if memory is not None else 2**62):
            room = (f"{memory / 2**30:.3g} GiB of memory" if memory is not None
                    else "address space")
            # (_gib: table_bytes / 2**30 overflowed a float for n_components
            # beyond about 2**1000; a review.)
            raise ValueError(
                f"PLSA with n_components={_integer_text(n_topics)} on X of {n_docs} documents "
                f"and {n_words} features needs {_gib(table_bytes)} GiB for its tables, "
                f"more than this machine's {room}: use fewer topics, or only the columns "
                f"X uses (for a CSR X: X[:, np.unique(X.indices)])")
        rng = _check_random_state(self.random_state)
        counts, words, indptr = _csr_arrays(X)
        # Counts above 1 (or all subnormal) are divided, with the
        # smoothing, by a power of 2 near their largest: the same steps to
        # the bit, but n / s and the sums stay finite for counts up to the
        # largest float64, and subnormal counts keep their ratios (EM on
        # them stopped after 3 steps with P(z | d) rows not summing to 1).
        # The objective is reported in the counts' own units.
        scale = _plsa_em.count_scale(
            counts.max(), max(self.topic_word_smoothing, self.doc_topic_smoothing))
        counts = counts / scale if scale != 1 else counts
        # The E-step takes the entries of the smallest count (a word seen
        # once) as a product per document, one log for them all; not for
        # counts so small that their terms n log s could be subnormal, where
        # rounding the sum otherwise changes the objective (-1: no count).
        positive = counts[counts > 0]
        unit = float(positive.min()) if positive.size else -1.0
        if unit < 2.0 ** -900:
            unit = -1.0
        word_smoothing = float(self.topic_word_smoothing) / scale
        doc_smoothing = float(self.doc_topic_smoothing) / scale
        # Threads only for a step's work worth sharing (kgeo/_kernels.pyx).
        n_threads = parallel_threads(resolve_n_jobs(self.n_jobs), X.nnz * n_topics)
        if n_threads > 1:
            # The counts by word too (CSC), with each entry's CSR position:
            # the E-step's word sums run over words in parallel.
            by_word = sp.csr_matrix((np.arange(X.nnz, dtype=np.int64), words, indptr),
                                    shape=X.shape).tocsc()
            by_word.sort_indices()
            word_docs = by_word.indices.astype(np.int32, copy=False)
            word_indptr = by_word.indptr.astype(np.int64)
            word_entries = by_word.data
            ratios = np.empty(X.nnz)
        else:  # one pass, which reads none of these
            word_docs, word_indptr = np.empty(0, np.int32), np.zeros(n_words + 1, np.int64)
            word_entries, ratios = np.empty(0, np.int64), np.empty(0)

        # P(w | z) word-major (row w is the K-vector the loops read), a random
        # start away from the symmetric point where all topics stay equal.
        word_topic = rng.uniform(0.5, 1.5, size=(n_words, n_topics))
        word_topic /= word_topic.sum(axis=0)
        doc_topic = np.full((n_docs, n_topics), 1.0 / n_topics)
        doc_sums = np.empty_like(doc_topic)
        word_sums = np.empty_like(word_topic)
        doc_log_likelihood = np.empty(n_docs)

        curve = []
        # The steps are compared in the scaled units: the same decisions as
        # in the counts' own, where subnormal counts give an objective whose
        # gains are lost to rounding.
        last_scaled = None
        converged = False
        for step in range(self.max_iter + 1):
            _plsa_em.em_sums(counts, words, indptr, word_docs, word_indptr, word_entries,
                             doc_topic, word_topic, doc_sums, word_sums, ratios,
                             doc_log_likelihood, unit, n_threads)
            with np.errstate(over="ignore", invalid="ignore"):  # raised just below
                log_likelihood = scale * doc_log_likelihood.sum()
                log_prior = self._log_prior(doc_topic, word_topic)
                objective = log_likelihood + log_prior
            if not np.isfinite(log_likelihood):
                raise ValueError(
                    f"X's counts (the largest {float(X.data.max()):.3g}) make PLSA's "
                    f"log-likelihood overflow float64 ({log_likelihood}); scale X down")
            if not np.isfinite(objective) and (
                    (self.topic_word_smoothing > 0 and np.any(word_topic == 0))
                    or (self.doc_topic_smoothing > 0 and np.any(doc_topic == 0))):
                # smoothing * log P with a P that underflowed to 0: a tiny
                # (subnormal) pseudo-count cannot keep it away from 0.
                raise ValueError(
                    f"the smoothing (topic_word_smoothing={self.topic_word_smoothing!r}, "
                    f"doc_topic_smoothing={self.doc_topic_smoothing!r}) is too small to keep "
                    f"PLSA's probabilities above 0 in float64: one reached 0, where the "
                    f"log-density of its Dirichlet prior is -inf; use 0 (no prior) or a "
                    f"larger smoothing")
            if not np.isfinite(objective):
                raise ValueError(
                    f"the smoothing (topic_word_smoothing={self.topic_word_smoothing!r}, "
                    f"doc_topic_smoothing={self.doc_topic_smoothing!r}) makes the log-density "
                    f"of PLSA's Dirichlet priors overflow float64 ({log_prior}); the smoothing "
                    f"is a pseudo-count per topic and word: make it smaller")
            if self.verbose and step % int(self.verbose) == 0:
                print(f"PLSA step {step}: objective {objective:.10g}")
            scaled = doc_log_likelihood.sum() + log_prior / scale
            curve.append(objective)
            if last_scaled is not None and scaled - last_scaled <= self.tol * abs(scaled):
                converged = True
                break
            last_scaled = scaled
            if step == self.max_iter:
                break
            # M-step: expected counts (the ratios times the current
            # parameters) plus the pseudo-counts, normalised.
            doc_topic *= doc_sums
            doc_topic += doc_smoothing
            _normalise(doc_topic, axis=1)
            word_topic *= word_sums
            word_topic += word_smoothing
            _normalise(word_topic, axis=0)
        if not converged:
            warnings.warn(
                f"PLSA of {self.n_components} topics did not converge in "
                f"max_iter={self.max_iter} EM steps (the last raised the objective by "
                f"{curve[-1] - curve[-2]:.3g}); raise max_iter or tol",
                sklearn_compatible(ConvergenceWarning), stacklevel=_callers_stacklevel())

        # A scale capped by the smoothing can leave the counts subnormal,
        # whose sums lost bits (P(z) summed to 1.02): brought to [1, 2) by a
        # power of 2 for these sums (normal counts are as they were).
        if counts.size:
            counts = counts / _plsa_em.count_scale(counts.max(), 0.0)
        lengths = np.bincount(np.repeat(np.arange(n_docs), np.diff(indptr)), weights=counts,
                              minlength=n_docs)
        self.components_ = np.ascontiguousarray(word_topic.T)
        self.topic_probability_ = lengths @ doc_topic / lengths.sum()
        self.doc_topic_ = doc_topic
        self.log_likelihood_ = float(log_likelihood)
        self.objective_curve_ = np.array(curve)
        self.n_iter_ = len(curve) - 1
        self.n_features_in_ = n_words
        self._set_feature_names(names)
        return self

    def _log_prior(self, doc_topic, word_topic):
        """Log-density of the Dirichlet priors, up to a constant (0 without smoothing)."""
        total = 0.0
        if self.topic_word_smoothing > 0:
            total += self.topic_word_smoothing * _plsa_em.log_sum(word_topic)
        if self.doc_topic_smoothing > 0:
            total += self.doc_topic_smoothing * _plsa_em.log_sum(doc_topic)
        return total

    def _checked_counts(self, X):
        check_is_fitted(self, "components_")
        self._check_params()
        self._check_feature_names(X)
        X = check_counts(X, estimator="PLSA")
        check_n_features(X, estimator="PLSA", n_features=self.n_features_in_)
        return X

    @wraps_output
    def transform(self, X):
        """``P(z | d)`` of each document, folded into the fitted topics.

        EM over the document's own ``P(z | d)`` with ``P(w | z)`` fixed,
        from the uniform start, with ``doc_topic_smoothing``. A document
        without any word the model knows gets the uniform ``1/K``. (With
        ``topic_word_smoothing`` > 0 the model knows every word of the
        vocabulary, those absent from the fit's documents by the smoothing's
        probability alone, largest in the topics of the fewest words: a
        document of such words leans towards them.)

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)
            Term counts.

        Returns
        -------
        doc_topic : ndarray of shape (n_documents, n_components)
            A pandas or polars frame instead where ``set_output`` (or
            scikit-learn's ``transform_output``) asks for one.
        """
        X = self._checked_counts(X)
        return fold_in(X, _word_major(self), self)

    def fit_transform(self, X, y=None):
        """Fit the topics to X, then fold X's documents in.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)
            Term counts.
        y : ignored

        Returns
        -------
        doc_topic : ndarray of shape (n_documents, n_components)
            ``fit(X).transform(X)``: ``P(z | d)`` of each document folded in
            with the fitted topics (not the fit's own ``doc_topic_``, which
            EM learnt along with them); a data frame where ``set_output``
            asks for one.
        """
        return self.fit(X).transform(X)

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns: ``plsa0``, ``plsa1``, ..., a topic each.

        Parameters
        ----------
        input_features : array-like of str, default=None
            Only checked against the fit's columns (scikit-learn's rule for
            transformers whose outputs are their own).

        Returns
        -------
        names : ndarray of str objects, shape (n_components,)
        """
        self._input_feature_names(input_features)
        return np.asarray([f"plsa{k}" for k in range(self.components_.shape[0])], dtype=object)

    def __sklearn_tags__(self):
        return count_transformer_tags()


class PLSAFisherEmbedding(TransformerMixin, EstimatorMixin):
    """Hofmann's Fisher kernel of PLSA, as vectors whose inner product it is.

    For each number of topics K in ``n_components`` a :class:`PLSA` model is
    fitted; a document ``d`` becomes, per model, the topic scores
    ``P(z_k | d) / sqrt(P(z_k))`` (K columns) and the word scores
    ``P^(w | d) P(z_k | d, w) / sqrt(P(w | z_k))`` (K columns per word of the
    vocabulary, nonzero only for the document's words), with ``P(z | d)``
    from folding ``d`` in. The models' blocks side by side give the sum of
    their kernels, as Hofmann adds the kernels of several K. The linear
    kernel on the output is therefore the Fisher kernel:
    ``SVM(kernel="linear").fit(embedding.fit_transform(X), y)`` trains the
    Fisher-kernel SVM.

    Parameters
    ----------
    n_components : int or sequence of int, default=(10, 20, 30)
        Topics of each model (Takamura et al. 2004 add K = 10, 20, 30).
    topic_scores : {"approximate", "exact"}, default="approximate"
        ``approximate``: ``P(z_k | d) / sqrt(P(z_k))``, Hofmann's optional
        simplification; ``exact``: the gradient itself,
        ``sum_w P^(w | d) P(z_k | d, w) / sqrt(P(z_k))``. They coincide when
        the fold-in has converged without smoothing on a document whose
        words the model all knows (``P^`` counts every word of the
        document, so words unknown to the model, which only
        ``topic_word_smoothing=0`` leaves, scale the exact scores by the
        known words' share).
    topic_word_smoothing : float, default=0.01
        Passed to each :class:`PLSA`.
    doc_topic_smoothing : float, default=0.01
        Passed to each :class:`PLSA`, and read again by :meth:`transform`,
        which folds documents in with the embedding's current values.
    max_iter : int, default=1000
        Passed to each :class:`PLSA`.
    tol : float, default=1e-6
        Passed to each :class:`PLSA`.
    fold_in_max_iter : int, default=10000
        Passed to each :class:`PLSA`, and read again by :meth:`transform`.
    fold_in_tol : float, default=1e-8
        Passed to each :class:`PLSA`, and read again by :meth:`transform`.
    random_state : None, int or numpy.random.Generator, default=None
        One generator, drawn from by the models in turn.
    n_jobs : int, default=None
        Passed to each :class:`PLSA`, and read again by :meth:`transform`.
    verbose : int or bool, default=0
        Passed to each :class:`PLSA`.

    Attributes
    ----------
    models_ : list of PLSA
        The fitted models, in the order of ``n_components``.
    n_iter_ : int
        EM steps of the model that took the most (each model's are in its
        ``n_iter_``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str objects, shape (n_features_in_,)
        The column names of X at ``fit`` when it was a data frame with string
        names (words); ``transform`` then checks X has the same, in the same
        order. Absent otherwise.
    n_features_out_ : int
        ``sum_K K (1 + n_features_in_)``.

    Notes
    -----
    A document of ``m`` distinct words has ``sum_K K (1 + m)`` nonzero
    scores (fewer when a score is 0), so the output holds about
    ``sum_K K`` times as many entries as ``X``; the kernel between two
    documents costs ``O(sum_K K)`` per shared word, as the kernel itself
    does. With one topic the kernel is ``1 + sum_w P^(w | d) P^(w | d') / P(w)``.
    """

    def __init__(self, n_components=(10, 20, 30), *, topic_scores="approximate",
                 topic_word_smoothing=0.01, doc_topic_smoothing=0.01, max_iter=1000,
                 tol=1e-6, fold_in_max_iter=10000, fold_in_tol=1e-8, random_state=None,
                 n_jobs=None, verbose=0):
        self.n_components = n_components
        self.topic_scores = topic_scores
        self.topic_word_smoothing = topic_word_smoothing
        self.doc_topic_smoothing = doc_topic_smoothing
        self.max_iter = max_iter
        self.tol = tol
        self.fold_in_max_iter = fold_in_max_iter
        self.fold_in_tol = fold_in_tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _topic_counts(self):
        value = self.n_components
        if hasattr(value, "__next__"):
            # A generator: fit's checks would use it up, and transform then
            # found an empty sequence.
            raise ValueError(f"n_components must be an integer >= 1 or a sequence of them, "
                             f"got a one-shot iterator ({type(value).__name__}); pass a "
                             f"list or tuple")
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]  # a NumPy scalar, checked as PLSA checks one
        if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
            value = [value]
        if isinstance(value, (str, bytes, set, frozenset, dict)) or not hasattr(value, "__iter__"):
            raise ValueError(f"n_components must be an integer >= 1 or a sequence of them, "
                             f"got {value!r}")
        value = list(value)
        if not value:
            raise ValueError("n_components must name at least one number of topics, got "
                             "an empty sequence")
        return [_check_integer(k, "each of n_components", 1) for k in value]

    def _model(self, n_topics, rng):
        return PLSA(n_topics, topic_word_smoothing=self.topic_word_smoothing,
                    doc_topic_smoothing=self.doc_topic_smoothing, max_iter=self.max_iter,
                    tol=self.tol, fold_in_max_iter=self.fold_in_max_iter,
                    fold_in_tol=self.fold_in_tol, random_state=rng, n_jobs=self.n_jobs,
                    verbose=self.verbose)

    @parameter_errors()
    def _check_params(self):
        if not is_one_of(self.topic_scores, ("approximate", "exact")):
            raise ValueError(f"topic_scores must be 'approximate' or 'exact', got "
                             f"{self.topic_scores!r}")
        topic_counts = self._topic_counts()
        rng = _check_random_state(self.random_state)
        for n_topics in topic_counts:
            self._model(n_topics, rng)._check_params()
        return topic_counts, rng

    def fit(self, X, y=None):
        """Fit one PLSA model per number of topics.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)
            Term counts: the documents the topics are learnt from (labelled
            or not).
        y : ignored

        Returns
        -------
        self
        """
        topic_counts, rng = self._check_params()
        names = feature_names(X)
        X = check_counts(X, estimator="PLSAFisherEmbedding")
        total = sum(topic_counts)
        if total * (1 + X.shape[1]) > _INT32_MAX:
            raise ValueError(
                f"n_components {topic_counts} with {X.shape[1]} features give "
                f"{total * (1 + X.shape[1])} scores per document; kgeo indexes columns "
                f"with int32 and needs fewer than 2**31")
        self._warn_of_unseen_words(X)
        models = [self._model(n_topics, rng).fit(X) for n_topics in topic_counts]
        for model in models:
            # Without smoothing, EM fades a surplus topic towards 0 without
            # reaching it (P(z) = 7.8e-64 on 20 documents, K = 30): dividing
            # by sqrt(P(z)) then gave scores of 5.6e20. Below sqrt(eps) a
            # topic is unused as far as float64's scores can tell.
            smallest = float(np.min(model.topic_probability_))
            if not smallest > _UNUSED_TOPIC:
                raise ValueError(
                    f"a topic of the {model.n_components}-topic model is unused "
                    f"(P(z) = {smallest:.3g}, at most {_UNUSED_TOPIC:.2g}), so its Fisher "
                    f"score is undefined; use fewer topics or doc_topic_smoothing > 0")
        self.models_ = models
        self.n_iter_ = max(model.n_iter_ for model in models)
        self.n_features_in_ = X.shape[1]
        self.n_features_out_ = total * (1 + X.shape[1])
        self._set_feature_names(names)
        return self

    def _warn_of_unseen_words(self, X):
        """Warn where words of the vocabulary occur in no document of the
        fit while topic_word_smoothing gives them a probability: the
        prior's alone, the smallest of all, and a word score divides by its
        square root."""
        smoothing = float(self.topic_word_smoothing)
        if smoothing == 0.0:
            return  # P(w | z) = 0: such a word is unknown, its scores 0
        unseen = np.flatnonzero(np.bincount(X.indices, weights=X.data,
                                            minlength=X.shape[1]) == 0)
        if unseen.size == 0:
            return
        warnings.warn(
            f"{unseen.size} of the {X.shape[1]} words of the vocabulary occur in no "
            f"document of the fit (columns {listed_rows(unseen)}): with "
            f"topic_word_smoothing={self.topic_word_smoothing!r} the topics give each "
            f"the smoothing's probability alone, and a document that uses one gets "
            f"word scores of 1/sqrt of it, which dominate its Fisher kernel values. "
            f"Drop those columns (a vocabulary of the documents PLSA is fit on), or "
            f"set topic_word_smoothing=0, where they are unknown to the model and "
            f"score 0", UserWarning, stacklevel=_callers_stacklevel())

    @wraps_output
    def transform(self, X):
        """The Fisher scores of each document.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)
            Term counts.

        Returns
        -------
        scores : scipy.sparse.csr_matrix of shape (n_documents, n_features_out_)
            Their linear kernel is the Fisher kernel.
        """
        check_is_fitted(self, "models_")
        self._check_params()
        self._check_feature_names(X)
        X = check_counts(X, estimator="PLSAFisherEmbedding")
        check_n_features(X, estimator="PLSAFisherEmbedding", n_features=self.n_features_in_)
        n_docs = X.shape[0]
        total = sum(model.components_.shape[0] for model in self.models_)
        lengths = np.diff(X.indptr).astype(np.int64)
        row_sizes = (1 + lengths) * total
        if row_sizes.sum() > _INT32_MAX:
            raise ValueError(
                f"X's {X.nnz} nonzeros give {row_sizes.sum()} Fisher scores; kgeo needs "
                f"fewer than 2**31 per matrix: transform the documents in batches")
        indptr = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(row_sizes, out=indptr[1:])
        data = np.empty(indptr[-1])
        indices = np.empty(indptr[-1], dtype=np.int32)
        write_at = indptr[:-1].copy()
        counts, words, x_indptr = _csr_arrays(X)
        column = 0
        for model in self.models_:
            n_topics = model.components_.shape[0]
            word_topic = _word_major(model)
            # The fold-in settings are the embedding's own, read now (as
            # ``topic_scores`` is), not those its models were fitted with.
            doc_topic = fold_in(X, word_topic, self)
            # The K topic scores open the model's block; the word scores follow.
            topic_at = write_at[:, None] + np.arange(n_topics)
            write_at += n_topics
            topic_sums = np.empty_like(doc_topic)
            _plsa_em.fisher_word_scores(
                counts, words, x_indptr, doc_topic, word_topic,
                np.sqrt(word_topic), column + n_topics, write_at, data, indices,
                topic_sums)
            shares = topic_sums if self.topic_scores == "exact" else doc_topic
            data[topic_at] = shares / np.sqrt(model.topic_probability_)
            indices[topic_at] = column + np.arange(n_topics, dtype=np.int32)
            column += n_topics * (1 + self.n_features_in_)
        scores = sp.csr_matrix((data, indices, indptr.astype(np.int32)),
                               shape=(n_docs, self.n_features_out_))
        scores.eliminate_zeros()
        return scores

    def fit_transform(self, X, y=None):
        """Fit one PLSA model per number of topics, then score X.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)
            Term counts.
        y : ignored

        Returns
        -------
        scores : scipy.sparse.csr_matrix of shape (n_documents, n_features_out_)
            ``fit(X).transform(X)``: each document's Fisher scores.
        """
        return self.fit(X).transform(X)

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns, in ``transform``'s order.

        Each model's block opens with its topics' scores, ``plsa10_topic0``
        ... for a model of 10 topics, then the word scores, word by word and
        topic by topic within a word: ``plsa10_apple_topic0``, ... Models of
        the same number of topics get their position too, every one of
        them: ``plsa10_0_...``, ``plsa10_1_...``.

        Parameters
        ----------
        input_features : array-like of str, default=None
            The input columns' names (the words); by default
            ``feature_names_in_``, or ``x0``, ``x1``, ... without it.

        Returns
        -------
        names : ndarray of str objects, shape (n_features_out_,)
        """
        words = self._input_feature_names(input_features)
        counts = [model.components_.shape[0] for model in self.models_]
        names = []
        for position, n_topics in enumerate(counts):
            prefix = (f"plsa{n_topics}" if counts.count(n_topics) == 1
                      else f"plsa{n_topics}_{position}")
            topics = [f"topic{k}" for k in range(n_topics)]
            names += [f"{prefix}_{topic}" for topic in topics]
            names += [f"{prefix}_{word}_{topic}" for word in words for topic in topics]
        return np.asarray(names, dtype=object)

    def __sklearn_tags__(self):
        return count_transformer_tags()
