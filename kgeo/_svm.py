"""kgeo.SVM: the estimator. Validation, one-vs-one bookkeeping, attributes.

The numerical work happens in ``_solver`` (SMO per class pair, over one kernel
row cache shared by all pairs) and ``_kernels`` (kernel rows for prediction).
Attribute names and sign conventions follow ``sklearn.svm.SVC``.
"""

import _thread
import copy
import itertools
import logging
import math
import mmap
import numbers
import queue
import reprlib
import threading
import time
import warnings

import numpy as np
import scipy.sparse as sp

from ._version import __version__
from ._base import EstimatorMixin, check_is_fitted, progress_bars_shown
from ._kernels import (
    KERNELS,
    PostingIndex,
    PrecomputedKernel,
    empty_rows,
    get_kernel,
    kernel_diagonal,
    kernel_matrix,
    kernel_params,
    kernel_weighted_sums,
    parallel_threads,
    take_rows,
    weighted_sums_of_values,
)
from ._pairwise import (centred, fits_unmoved, overflow_message, posting_tables_are_cheap,
                        prepare_rows, resolve_n_jobs, rows_to_move, single_block,
                        translation_centre, unique_columns, used_columns_only)
from ._solver import (MAX_ITER_REACHED, NOT_SOLVED, ROW_HELPER, STALLED, UNRESOLVED,
                      KernelRowCache, PairSolutions, _release_openmp_threads,
                      one_vs_one_coefficients, one_vs_one_votes, solve_pairs)
from ._validation import (_callers_stacklevel, check_dense_rows, check_feature_names,
                          check_kernel_matrix, check_kernel_samples, check_labels,
                          check_matrix, check_n_features, check_on_simplex, check_positive,
                          check_real, check_sample_weight, checked_accuracy, dense_as_csr,
                          feature_names, listed_rows,
                          spherical_normal_sigmas)
from .exceptions import (
    ConvergenceWarning,
    EmptyDocumentWarning,
    parameter_errors,
    sklearn_compatible,
)

__all__ = ["SVM"]

# max_iter above this (the solver counts in int64) means no limit in practice;
# -1 reaches the solver as is, which then applies libsvm's cap per pair.
_MAX_ITER_CAP = np.iinfo(np.int64).max

logger = logging.getLogger(__name__)

# Decision shares per prediction call (test rows x n_classes x (n_classes - 1)),
# and, for a precomputed kernel, its values gathered per call (test rows x SVs).
_PREDICT_CHUNK_VALUES = 1 << 22
# A callable kernel's values per call (test rows x SVs, 256 MB): each call
# pays the function's own set-up, which chunks must amortise (with f the
# 20NG NGD of kgeo.pairwise_kernels, which indexes the support vectors at
# every call, predicting the test set took 0.65 s in 18 calls of 432 rows,
# 0.33-0.35 s in 3 calls).
_CALLABLE_CHUNK_VALUES = 1 << 25

# set_fit_request(sample_weight=...) left out: the request stays as it was.
_UNCHANGED = object()

# The methods whose sample_weight scikit-learn's metadata routing can pass.
_ROUTED_METHODS = ("fit", "score")


class _Requests(dict):
    """The sample_weight request of each method ("fit", "score") for
    scikit-learn's metadata routing. scikit-learn's clone copies an
    estimator's ``_metadata_request`` through ``__sklearn_clone__``, where a
    plain dict of booleans would fail its checks."""

    def __sklearn_clone__(self):
        return _Requests(self)

    def __getattr__(self, method):
        # scikit-learn 1.6 and 1.7 score with ``estimator.score`` (scoring=None)
        # by reading ``estimator._metadata_request.score`` itself, a
        # MethodMetadataRequest; where that attribute was missing they routed
        # no weights to score, silently.
        if method not in _ROUTED_METHODS:
            raise AttributeError(method)
        return getattr(_metadata_request(self), method)


def _metadata_request(requested, owner="SVM"):
    """``requested`` ({method: alias}) as scikit-learn's MetadataRequest, each
    routed method asking for sample_weight under its alias (None until set)."""
    from sklearn.utils.metadata_routing import MetadataRequest

    routing = MetadataRequest(owner=owner)
    for method in _ROUTED_METHODS:
        getattr(routing, method).add_request(param="sample_weight",
                                             alias=requested.get(method))
    return routing


# kernel="precomputed": X is the kernel matrix itself (scikit-learn's SVC's name).
PRECOMPUTED = "precomputed"


def _is_precomputed(kernel):
    return isinstance(kernel, str) and kernel == PRECOMPUTED


def _is_callable_kernel(kernel):
    """kernel(X, Y) -> the matrix of k(x, y), as scikit-learn's SVC takes it."""
    return callable(kernel) and not isinstance(kernel, str)


def _kernel_label(kernel):
    """A callable kernel as messages name it: its function's name, else its repr
    (a functools.partial, an object with __call__)."""
    return getattr(kernel, "__name__", None) or repr(kernel)


def _matrix_kernel_name(kernel):
    """A precomputed or callable kernel as messages name it."""
    return ("kernel 'precomputed'" if _is_precomputed(kernel)
            else f"kernel={_kernel_label(kernel)}")


def _reads_kernel_matrix(kernel):
    """Whether the solver reads a matrix of kernel values (given, or returned
    by a callable kernel) instead of computing rows from X's features."""
    return _is_precomputed(kernel) or _is_callable_kernel(kernel)


def _squashed(conf):
    """scikit-learn's ovr confidences ``conf / (3 (|conf| + 1))``, in
    (-1/3, 1/3), the same bits where they are finite. Beyond 6e307 the
    denominator overflows (0 instead of 1/3), and a sum of the pairs'
    finite values can overflow itself (inf / inf, NaN): there the limit,
    sign(conf) / 3. A sum that met both +inf and -inf (NaN) says nothing
    about the class: 0, the votes alone decide. (Non-finite pair values
    themselves are refused after the last chunk, see _decision_chunks.)"""
    with np.errstate(over="ignore", invalid="ignore"):
        out = conf / (3 * (np.abs(conf) + 1))
    huge = ~(np.abs(conf) < np.finfo(np.float64).max / 4)
    if huge.any():
        out[huge] = np.nan_to_num(np.sign(conf[huge]), nan=0.0) / 3
    return out


def _as_float(value):
    """float(value), inf for an integer beyond float64 (10**400)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _params_of(kernel):
    """The parameters ``kernel`` reads (``kernel_params``), none for a
    precomputed or callable one; an unknown kernel is a ValueError listing
    the known ones."""
    if _reads_kernel_matrix(kernel):
        return {}
    try:
        return kernel_params(kernel)
    except ValueError as error:
        raise ValueError(f"{error}; or {PRECOMPUTED!r} (X is then the kernel matrix), or a "
                         f"callable kernel(X, Y) returning the matrix of k(x, y)") from None


def _n_samples(samples):
    """Rows of a matrix, or items of a list of samples (a callable kernel's)."""
    return samples.shape[0] if hasattr(samples, "shape") else len(samples)


def _take(samples, index):
    """The samples at ``index``, in the container they came in."""
    if isinstance(samples, list):
        return [samples[i] for i in index]
    return samples[index]


# A callable kernel's samples of these types are copied for the model: the
# containers a caller builds samples of, and may edit after the fit.
_COPIED_SAMPLE_TYPES = (list, tuple, dict, set, bytearray, np.ndarray)


def _own_copy(samples):
    """A callable kernel's kept samples, each a deep copy where it is a
    built-in container or an ndarray (a token list, say), which the caller
    may edit after the fit and so silently change the model's decisions.
    Other objects (a parsed document, a record) are kept as given: copying
    them would copy whatever they share (a 128 MB table, a vocabulary), and
    a sample that cannot be deep-copied is kept as given too."""
    if isinstance(samples, list):
        places = range(len(samples))
    elif getattr(samples, "dtype", None) == object:
        places = np.ndindex(samples.shape)  # the array is _take's own
    else:
        return samples
    for place in places:
        if isinstance(samples[place], _COPIED_SAMPLE_TYPES):
            try:
                samples[place] = copy.deepcopy(samples[place])
            except Exception:  # holding a lock, a file: it cannot be copied
                pass
    return samples


def _callable_kernel_matrix(kernel, X, Y, *, n_threads, training):
    """``kernel(X, Y)`` checked: a finite float64 matrix of shape (len(X),
    len(Y)), symmetric to rounding when ``training`` (Y is X then).

    Returns the matrix (C order; it may be the function's own memory, to be
    read only) and its largest magnitude."""
    label = _kernel_label(kernel)
    call = f"{label}(X, X)" if training else f"{label}(X, support_vectors_)"
    K = kernel(X, Y)
    expected = (_n_samples(X), _n_samples(Y))
    shape = getattr(K, "shape", None)
    if shape is None and hasattr(K, "__len__") and not isinstance(K, (str, bytes, dict, set)):
        try:
            shape = np.shape(K)  # a list of lists
        except ValueError:  # ragged
            shape = None
    if shape is not None and tuple(shape) != expected:
        raise ValueError(
            f"kernel={label} must return the matrix of k(x, y) for the rows x of its first "
            f"argument and y of its second, of shape {expected} here; {call} returned "
            f"shape {tuple(shape)}")
    if shape is None:
        raise TypeError(f"kernel={label} must return an array-like or a sparse matrix of "
                        f"numbers; {call} returned {type(K).__name__}")
    checked, largest = check_kernel_matrix(
        K, name=call, n_columns=None if training else expected[1], n_threads=n_threads,
        source=f"kernel={label}")
    return checked, largest


def _progress(iterable, total, enabled, desc):
    """Wrap ``iterable`` in a tqdm bar when asked, tqdm is installed and a
    bar would be seen (``progress_bars_shown``).

    With ``iterable=None``: the bar itself, to be updated by hand, or None.
    """
    if not enabled or not progress_bars_shown():
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, total=total, desc=desc, leave=False)


# A run of class pairs solved in one call holds at most this many dual
# variables (a pair with more is a run alone): runs are for small pairs,
# whose call costs as much as solving them. (2,048 left a thread idle for
# 4-9 % of the pairs' time at the end of fits of 8-16 classes of 128-250
# samples: a review.)
_RUN_VARIABLES = 512


def _pair_runs(alpha_start, n_threads):
    """Split the pairs, whose dual variables start at ``alpha_start``, into
    runs of consecutive pairs, each solved by one call of the solver: at
    most ``_RUN_VARIABLES`` variables (or one pair) and a quarter of a
    thread's share of the pairs, so that the threads still balance their
    work over several runs each. Returns [(first, last), ...].
    """
    n_pairs = len(alpha_start) - 1
    most = max(1, -(-n_pairs // (4 * n_threads)))
    runs = []
    first = 0
    while first < n_pairs:
        # The last pair whose run from first stays within _RUN_VARIABLES.
        last = int(np.searchsorted(alpha_start, alpha_start[first] + _RUN_VARIABLES,
                                   side="right")) - 1
        last = min(max(last, first + 1), first + most, n_pairs)
        runs.append((first, last))
        first = last
    return runs


def _label(value):
    """A class label as a Python object for messages (classes_ may hold NumPy
    scalars, or plain str and bytes in an object array)."""
    return value.item() if isinstance(value, np.generic) else value


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _same_value(a, b):
    """a == b for two labels or parameter values, False where they do not
    compare (or compare element-wise)."""
    if a is b:  # a callable kernel: the same function, whatever its __eq__
        return True
    try:
        same = a == b
        return isinstance(same, (bool, np.bool_)) and bool(same)
    except (TypeError, ValueError):
        return False


def _scale_gamma(X, weight=None):
    """``1 / (n_features * X.var())`` over all entries of the CSR X (1 if X is constant).

    In units of the largest entry, so that neither the squares nor the result
    leave float64's range unnoticed, and in two passes (the mean first): the
    one-pass ``E[x^2] - E[x]^2`` cancels for data far from 0 (rows of 1e8 + noise
    had 0.03 where the variance gives 0.12). With row weights (all > 0), the
    variance of the entries weighted by their row's weight: the variance of X
    with row i repeated ``weight[i]`` times, for integer weights.
    """
    top = float(np.max(np.abs(X.data))) if X.nnz else 0.0
    if top == 0.0:
        return 1.0
    unit = X.data / top
    if weight is None:
        n = X.shape[0] * X.shape[1]
        mean = unit.sum() / n
        # The implicit zeros each add mean^2.
        var_unit = (np.sum((unit - mean) ** 2) + (n - X.nnz) * mean ** 2) / n
    else:
        per_row = np.diff(X.indptr)
        entry_weight = np.repeat(weight, per_row)
        n = weight.sum() * X.shape[1]
        mean = (entry_weight @ unit) / n
        zeros = weight @ (X.shape[1] - per_row)
        var_unit = (entry_weight @ (unit - mean) ** 2 + zeros * mean ** 2) / n
    if not var_unit > 0:
        return 1.0
    with np.errstate(over="ignore", under="ignore"):
        gamma = (1.0 / top) / top / (X.shape[1] * var_unit)
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(
            f"gamma='scale' (1 / (n_features * X.var())) is {float(gamma)!r} in float64: X's "
            f"variance is {var_unit:.3g} * {top:.3g}^2; rescale X, or pass gamma as a number")
    return gamma


class SVM(EstimatorMixin):
    """C-support vector classifier with geometric kernels, trained by SMO.

    Multi-class problems are solved one-vs-one; prediction is by voting, ties
    going to the class that comes first in ``classes_``. SMO selects its
    pairs by libsvm's second-order rule, near-ties going to the last
    candidate as libsvm's exact ties do: with a kernel that is not
    (conditionally) positive definite (``sigmoid``, ``poly`` with
    ``coef0 < 0``) the dual has several stationary points, and the one SMO
    ends at, which depends on its path, is then in general SVC's too.

    Parameters
    ----------
    kernel : str or callable, default="ngd"
        One of ``kgeo.KERNELS``: ``linear``, ``poly``, ``rbf``, ``sigmoid``,
        ``ned`` (negative Euclidean distance), ``ngd`` (negative geodesic
        distance on the multinomial manifold), ``ngd+pi``, ``ngd_exp``,
        ``bhattacharyya``, ``diffusion``, ``hyperbolic`` (the heat kernel of
        the spherical normal family: rows ``(mu_1, ..., mu_(n-1), sigma)``,
        ``2 <= n <= 101``, for instance from ``kgeo.spherical_normal_mle``).
        The manifold kernels L1-normalise
        each row themselves: pass counts or TF-IDF weights. A document
        without a word (all its words pruned or unseen) has no point on the
        simplex: ``fit`` leaves it out (as a sample of weight 0), and
        ``predict`` gives it the decision values of the intercepts, each
        with a ``kgeo.EmptyDocumentWarning`` naming the rows (filter it by
        that class where such documents are expected). The intercepts are
        what the kernel's formula gives an all-zero row (sum_i sqrt(p_i
        q_i) = 0: every geodesic distance pi, so the same kernel value
        against every support vector, whose coefficients sum to 0 in each
        pair). ``ned`` and
        ``rbf`` compute close pairs exactly from the rows' difference, which
        on data far from the origin is every pair and 8-12x slower: rows
        mostly nonzero are therefore moved to their mean first (the same
        kernel values; see ``kgeo.pairwise_kernels``), sparse ones are best
        centred by the caller.
        ``"precomputed"``: X is a kernel matrix, as for scikit-learn's SVC:
        ``K[i, j] = k(x_i, x_j)`` of the training samples in ``fit`` (square,
        symmetric to within rounding, 1e-6 of its largest magnitude), and
        ``K(X, X_train)`` of shape ``(n_samples, n_train)`` in ``predict``
        and ``decision_function``. The solver reads it in place (row i for
        sample i, as libsvm does) and the model keeps no copy;
        ``support_vectors_`` is then empty, ``support_`` indexes the columns
        prediction reads. With the Gram of a named kernel (from
        ``kgeo.pairwise_kernels``) the model is that kernel's, bit for bit.
        (With samples of weight 0, the Gram of ``ned`` and ``rbf`` must be
        the other samples' for that: the fit leaves them out before those
        kernels centre the rows, which moves the full Gram's values in
        their last bits.)
        A callable ``kernel(A, B)`` returns the matrix of ``k(a, b)`` for the
        rows of A and B, of shape ``(A.shape[0], B.shape[0])``, as for
        scikit-learn's SVC: ``fit`` trains on ``kernel(X, X)`` (checked as a
        precomputed matrix is, over the samples of positive weight), and
        prediction calls ``kernel(X_chunk, support_vectors_)`` on chunks of
        X's rows. Dense numbers reach it as a C-ordered ndarray of their own
        dtype (integer row indices stay integers), sparse ones as float64
        CSR; samples of any other kind (strings for a string kernel, token
        lists, a 2-D array of text fields) as given, an ndarray as one and a
        list or tuple as a list. ``support_vectors_`` keeps the support
        vectors so; each that is a built-in container or an ndarray (a token
        list) as a deep copy, so that editing the caller's samples after the
        fit does not change the model. Other objects, and samples that
        cannot be copied, are kept as given. The model pickles when the
        function does (one defined at module level, not a lambda).
    C : float, default=1.0
        Box bound of the dual variables (the penalty of slack). Where the
        kernel cannot separate the classes, SMO (here as in libsvm) needs a
        number of iterations that grows in proportion to C times the
        kernel's scale: 6.1 million (3.6 s) for six points at C = 1e6, 10x
        more per decade; scaling X by 1e3 does the same with the linear
        kernel (the kernel times 1e6: 2.7 million for six other points).
        ``max_iter=-1`` stops such a fit at libsvm's cap, with a warning;
        Ctrl-C stops a fit within a second.
    shift : float, default=0.0
        Constant added to the kernel. By Proposition 3 of Zhang, Chen & Lee
        (2005) it changes nothing but rounding: ``ngd`` and ``ngd+pi`` give
        the same SVM (where rounding tips one of SMO's last steps, two
        solutions within ``tol``). A shift that dwarfs the kernel's
        variation costs its values digits: K + shift rounds the curvatures
        ``K_ii + K_jj - 2 K_ij`` to about ``4 eps |shift|``, and the gradient
        to about that times ``sum(C)``; where the first exceeds 1e-9 of the
        smallest curvature, or the second 1e-9 ``tol``, SMO may break a tie
        otherwise and end at another solution within ``tol``.
    gamma : {"scale", "auto"} or float, default="scale"
        For ``poly``, ``rbf`` and ``sigmoid``: ``"scale"`` is
        ``1 / (n_features * X.var())``, ``"auto"`` is ``1 / n_features``.
        With ``sample_weight``, ``X.var()`` weighs each row by its weight
        (samples of weight 0 left out), so that a weight k is k copies;
        ``sklearn.svm.SVC`` takes the unweighted variance of every row.
    coef0 : float, default=0.0
        For ``poly`` and ``sigmoid``.
    degree : int, default=3
        For ``poly``.
    t : float, default=1.0
        Diffusion time of ``ngd_exp``, ``diffusion`` and ``hyperbolic``.
    normalize : bool, default=False
        Multiply ``ngd_exp`` and ``diffusion`` by ``(4 pi t)^(-n/2)``, with
        ``n = n_features - 1`` the dimension of the simplex; this
        only rescales the kernel (the same SVM as scaling C) and is rarely
        representable in float64 for text vocabularies. ``hyperbolic``
        without it is divided by its value at distance 0 (k(x, x) = 1), with
        it is the heat kernel itself, a density of unit mass.
    tol : float, default=1e-3
        Stop when the maximal violating pair's gap is at most ``tol``.
    cache_size : float, default=200
        Memory for cached kernel values, in MB. Raised (with a warning) to
        the minimum of two kernel rows of the largest class pair. The rows
        the solvers are reading at that moment (at most two per thread) are
        never evicted, so the budget may be exceeded by them: with several
        threads, or with one below four rows of the largest pair (where a
        solver may also hold up to half the budget of rows it reuses; at the
        two-row minimum the peak reaches 1.5 times the budget). The blocks a
        solved class pair leaves behind leave the cache at once, their
        memory kept for the next pairs' blocks, so the cache often stays
        far below the budget (``cache_stats_["peak_values_allocated"]``).
    cache_dtype : {"float64", "float32"}, default="float64"
        Storage of the cached kernel values. ``"float32"`` rounds every value
        to float32 (relative error at most 6e-8; absolute error below 1e-45
        for values under 1.2e-38; a value beyond 3.4e38, or a kernel whose
        values are all below 1.2e-38, raises a ``ValueError``) before the
        solver sees it: the cache holds twice the rows in the same memory
        and SMO reads half the bytes per step. Since
        the SMO prefetches the rows it reads, that is not reliably faster on
        20 Newsgroups (2 cores, the 5 latest runs in ``benchmarks/README.md``:
        NGD fits within 1 % of float64's in 3 runs, 8 % faster in one and 26 %
        slower in one; linear fits 2-16 % faster in 3, 9 and 29 % slower in
        2); the same accuracy and number of support vectors there. The
        model then solves the rounded kernel's SVM to ``tol``: its dual
        objectives move by about the rounding (1e-7 relative), but SMO takes
        another path, so the decision values differ as two solutions within
        ``tol`` may (20 Newsgroups, NGD, tol=1e-3: by at most 6e-4, median
        2e-5, on values up to 3; the same predictions). Prediction always
        computes float64 kernels.
    shrinking : bool or "auto", default="auto"
        Drop variables stuck at a bound from the working set (libsvm's
        heuristic); the final check is always on all variables. True
        shrinks on libsvm's schedule; "auto" only in class pairs still
        running once they have taken twice as many iterations as they have
        variables (one converging in fewer takes the path of False, bit for
        bit). On text most variables stay free and a pair converges sooner,
        and shrinking would only add the kernel rows its gradient
        reconstruction needs (20 Newsgroups, NGD: the fit 1.5x as long with
        True); problems where most variables end at a bound run long enough
        to get it.
    class_weight : dict, "balanced" or None, default=None
        Multiply C by a weight per class. ``"balanced"`` gives class c the
        weight ``n_samples / (n_classes * n_c)``; with ``sample_weight``,
        ``n_samples`` and ``n_c`` sum the samples' weights (samples of weight
        0 left out), so that a weight k is k copies, where
        ``sklearn.svm.SVC`` counts every sample once.
    max_iter : int, default=-1
        SMO iterations per class pair; -1 for libsvm's limit, ``max(10**7,
        100 l)`` for a pair of l samples (pass a larger number, such as
        10**18, for no limit). Reaching it warns with a
        ``ConvergenceWarning``.
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        Shape of ``decision_function`` for more than two classes.
    n_jobs : int, default=None
        Threads (None: ``OMP_NUM_THREADS`` when it is set, else every CPU
        the process may use, within a cgroup CPU quota; -1: every such CPU;
        -2: all but one, and so on, as in joblib, at least one thread;
        at most 4 per CPU are started, more would only share the same
        cores): class pairs are solved in parallel in ``fit`` (sharing one
        row cache; the model does not depend on the number of threads); a
        fit of two classes, one pair, has a second thread compute half of
        each kernel block its solver asks for (blocks of 1,024 values or
        more; the same bits), as long as that thread keeps up (on cores
        other work keeps busy it is left out); and the kernel rows of
        ``predict`` and ``decision_function`` are computed in parallel.
        The parallel loops are OpenMP's: kgeo ends
        the forking thread's idle OpenMP workers before ``os.fork``, so
        that a child process (multiprocessing's "fork" start method) can
        run them again; a fork while another thread is inside such a loop
        still hangs the child, as with any OpenMP library ("spawn",
        "forkserver" and joblib's loky are safe).
        A refit replaces the fitted attributes in one assignment: a
        prediction in another thread meanwhile uses the old model or the new.
    verbose : int or bool, default=0
        1 (or True, as in SVC): a progress bar over class pairs (with tqdm
        installed, where stderr is a terminal or a notebook runs it) and one
        log line per fit; 2: one log line per class pair. The lines go to
        the ``logging`` logger ``"kgeo._svm"`` at level INFO, which Python
        shows once logging is configured, e.g.
        ``logging.basicConfig(level="INFO")``.
    break_ties : bool, default=False
        With more than two classes, ``predict`` gives a sample whose votes
        tie the tied class of the largest ovr confidence, i.e. the argmax of
        ``decision_function`` (votes plus the squashed sums of the pairs'
        decision values), as ``sklearn.svm.SVC(break_ties=True)`` does;
        False gives the first of the tied classes (libsvm's rule). Needs
        ``decision_function_shape="ovr"``. One difference from SVC: when a
        pair's decision value is zero (within its rounding, see ``predict``),
        kgeo's ``decision_function`` counts the vote for the pair's second
        class, as libsvm and kgeo's ``predict`` do; SVC's counts it for the
        first. So with ``break_ties=True`` kgeo's ``predict`` always equals
        the argmax of its ``decision_function`` (with False, a tied vote
        goes to the first tied class, which the argmax need not be), and on
        such boundaries it may differ from SVC's.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training set, grouped by class.
    support_vectors_ : ndarray or CSR matrix of shape (n_SV, n_features)
        Read-only: prediction keeps what it derives from them. A matrix
        assigned in their place is used; if its arrays are writable, or
        read-only views of memory written otherwise, every prediction reads
        them again (an edit in place is seen, at the cost of preparing them
        per call). Arrays mapping a file (joblib's ``mmap_mode``) are taken
        as unchanging; so are the fit's arrays, should they be made writable
        and edited with no prediction in between. Empty for
        ``kernel="precomputed"``; for a callable kernel given samples other
        than numbers, the support vectors as given (a list, or an ndarray).
    n_support_ : ndarray of shape (n_classes,)
    dual_coef_ : ndarray of shape (n_classes - 1, n_SV)
        ``alpha_i y_i`` in libsvm's one-vs-one layout. Read-only, as
        ``support_vectors_`` are: an array assigned in their place is used,
        and read again at every prediction if writable.
    intercept_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
        ``b*`` of each class pair: the mean over its free support vectors
        (``0 < alpha < C``), or, when it has none, the midpoint of the
        interval the KKT conditions allow (libsvm's rules). A dual variable
        within a relative 1e-14 of a bound is put on it, as is one that an
        SMO step moved toward a bound and left within that step's rounding
        of it (64 ulps of the gradient's terms over the step's curvature):
        rounding residues do not become support vectors, with or without a
        ``shift``. (That rounding grows with the kernel's magnitude, so a
        coefficient genuinely that small, about 1e-12 C next to a shift of
        100, can be a support vector without the shift and not with it.)
        libsvm may instead keep one a few ulps from a bound (below C or
        above 0) and count it as free, and then reports one end of that
        interval: in such pairs ``sklearn.svm.SVC``'s intercept and
        predictions can differ from kgeo's with the same dual variables
        (a review's 150 random 3-class problems with C in [0.1, 3]: 8 had an
        intercept 0.02 or more apart, 3 of them changing test
        predictions). With ``class_weight="balanced"`` and a small C that is
        the usual case, not the exception: balanced weights make both
        classes' total box equal, so at small C a pair's variables can all
        sit at their bounds, and the interval is wide (another review's 100
        random 3-class rbf problems, C in [0.05, 1]: 73 with intercepts 0.02
        or more apart from SVC's, each changing test predictions; without
        class weights, none).
    coef_ : ndarray or CSR matrix of shape (n_classes * (n_classes - 1) / 2, n_features)
        ``kernel="linear"`` only: each class pair's weights of the features,
        its decision value being ``X @ coef_[p] + intercept_[p]``. The pairs
        come in libsvm's order, (0, 1), (0, 2), ..., (1, 2), ... by position
        in ``classes_`` (the pair (s, t) is row ``s (2 n_classes - s - 1) / 2
        + t - s - 1``), and a positive value favours the pair's first class;
        with two classes, ``classes_[1]`` (scikit-learn's convention).
    dual_objective_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
        ``sum(alpha) - 1/2 alpha'Q alpha`` of each class pair at the solution.
    n_iter_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
        SMO iterations of each class pair.
    fit_status_ : int
        0 when every class pair reached ``tol``, 1 when one stopped before
        it: at ``max_iter``; stalled, its steps no longer changing
        anything in float64; or unresolved, its gap below ``tol`` only by
        the rounding of the gradient (checked, where ``tol`` is near that
        rounding, on a gradient recomputed exactly from the dual variables),
        and the fit warns with a ``ConvergenceWarning`` saying which.
        scikit-learn's SVC convention. Missing on models pickled by kgeo
        before it recorded whether every pair converged.
    class_weight_ : ndarray of shape (n_classes,)
    n_features_in_ : int
        Absent after a fit of a callable kernel on samples that are not
        numbers (they have no features).
    feature_names_in_ : ndarray of str objects, shape (n_features_in_,)
        The column names of X at ``fit`` when it was a data frame with string
        names (words; for ``kernel="precomputed"``, the training samples'
        names); ``predict``, ``decision_function`` and ``score`` then check
        that X has the same, in the same order, as scikit-learn's estimators
        do. Absent otherwise, and for a callable kernel, which reads X itself.
    shape_fit_ : tuple of int
        The shape of the training X, as scikit-learn's SVC records it:
        ``(n_samples,)`` for a callable kernel's samples that are not rows
        of numbers.
    cache_stats_ : dict
        Kernel blocks requested, computed and distinct among them
        (``blocks_requested``, ``blocks_computed``, ``blocks_distinct``);
        values computed (``values_computed``; of them ``values_raced`` by
        two threads at once, the second copy dropped), filled by transposing
        a class pair's computed cross-class blocks (``values_transposed``),
        stored at least once (``values_distinct``) and asked for by the
        solvers (``values_used``); the most values the row cache held at
        once (``peak_values``), and the most it counted against
        ``cache_size`` at once: the stored blocks' buffers, those of blocks
        that left, kept for the next ones, and the blocks being computed
        (``peak_values_allocated``; a class pair's swept blocks sharing one
        allocation of up to 8 MB count their own values, not the whole
        allocation); blocks computed into such a buffer (``blocks_reused``);
        the bytes per stored value (``value_bytes``) and the budget in
        values (``budget_values``, from ``cache_size``); the seconds the
        solvers' threads spent computing kernel blocks (``compute_seconds``;
        for a two-class fit, the wall-clock time of its blocks, halves its
        helper thread computed included).
    fit_time_ : float
        Seconds spent in ``fit``.

    Examples
    --------
    >>> import numpy as np, kgeo
    >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 3, 4]])
    >>> kgeo.SVM(kernel="ngd").fit(X, [0, 0, 1, 1]).predict([[4, 1, 0]])
    array([0])
    """

    def __init__(self, kernel="ngd", C=1.0, shift=0.0, gamma="scale", coef0=0.0,
                 degree=3, t=1.0, normalize=False, tol=1e-3, cache_size=200,
                 cache_dtype="float64", shrinking="auto", class_weight=None, max_iter=-1,
                 decision_function_shape="ovr", n_jobs=None, verbose=0, break_ties=False):
        self.kernel = kernel
        self.C = C
        self.shift = shift
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.t = t
        self.normalize = normalize
        self.tol = tol
        self.cache_size = cache_size
        self.cache_dtype = cache_dtype
        self.shrinking = shrinking
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.break_ties = break_ties

    # ------------------------------------------------------------------
    # parameters
    # ------------------------------------------------------------------

    @parameter_errors()
    def _check_params(self):
        _params_of(self.kernel)  # raises for an unknown kernel, listing them
        check_positive(self.C, "C")
        check_positive(self.tol, "tol")
        check_positive(self.cache_size, "cache_size")
        self._cache_single()
        if not (isinstance(self.shrinking, (bool, np.bool_))
                or (isinstance(self.shrinking, str) and self.shrinking == "auto")):
            raise ValueError(
                f"shrinking must be True, False or 'auto', got {self.shrinking!r}")
        if (isinstance(self.max_iter, bool) or not isinstance(self.max_iter, numbers.Integral)
                or (self.max_iter < 0 and self.max_iter != -1)):
            raise ValueError(f"max_iter must be -1 (libsvm's limit) or an integer >= 0, got "
                             f"{self.max_iter!r}")
        if not (isinstance(self.decision_function_shape, str)
                and self.decision_function_shape in ("ovr", "ovo")):
            raise ValueError(
                f"decision_function_shape must be 'ovr' or 'ovo', got "
                f"{self.decision_function_shape!r}")
        # A bool too, as SVC's verbose is one: True is level 1.
        if not isinstance(self.verbose, (numbers.Integral, np.bool_)):
            raise ValueError(f"verbose must be an integer or a bool, got {self.verbose!r}")
        self._check_break_ties()
        resolve_n_jobs(self.n_jobs)
        self._check_kernel_params()

    @parameter_errors()
    def _check_break_ties(self):
        """``break_ties`` as a bool; checked at fit and again by ``predict``
        (it may be set after the fit)."""
        if not isinstance(self.break_ties, (bool, np.bool_)):
            raise ValueError(f"break_ties must be True or False, got {self.break_ties!r}")
        if self.break_ties and self.decision_function_shape == "ovo":
            # scikit-learn's SVC refuses the pair at predict; so does kgeo,
            # and at fit already: with "ovo" there are no per-class
            # confidences to break ties with.
            raise ValueError("break_ties=True needs decision_function_shape='ovr' (it breaks "
                             "ties between votes by the ovr confidences), got "
                             "decision_function_shape='ovo'")
        return bool(self.break_ties)

    def _check_kernel_params(self):
        # The parameters the chosen kernel does not read are checked too (as
        # scikit-learn's SVC does): SVM(kernel="linear", gamma="scael") is a
        # typo to report, not a setting to ignore. Those it reads are checked
        # by get_kernel at fit, in messages that name the kernel.
        used = _params_of(self.kernel)
        if _reads_kernel_matrix(self.kernel):
            # Named kernels check their shift in get_kernel; a matrix's is
            # first read after the whole matrix has been computed and checked.
            check_real(self.shift, f"{_matrix_kernel_name(self.kernel)}: shift")
        if "gamma" not in used:
            if isinstance(self.gamma, str):
                if self.gamma not in ("scale", "auto"):
                    raise ValueError(
                        f"gamma must be 'scale', 'auto' or a float > 0, got {self.gamma!r}")
            else:
                check_positive(self.gamma, "gamma")
        if "coef0" not in used:
            check_real(self.coef0, "coef0")
        # float() for every real type: np.float32's inf and NaN are not
        # floats, and int() of them raised OverflowError or a ValueError
        # that did not name degree.
        if "degree" not in used and (isinstance(self.degree, bool)
                                     or not isinstance(self.degree, numbers.Real)
                                     or not math.isfinite(_as_float(self.degree))
                                     or self.degree != int(self.degree) or self.degree < 1):
            raise ValueError(f"degree must be an integer >= 1, got {reprlib.repr(self.degree)}")
        if "t" not in used:
            check_positive(self.t, "t")
        if "normalize" not in used and not isinstance(self.normalize, (bool, np.bool_)):
            raise ValueError(f"normalize must be True or False, got {self.normalize!r}")

    def _without_empty_documents(self, X, y_index, classes, weight):
        """``weight`` with 0 for the rows of CSR X without a word, and a warning.

        Such a document has no point on the simplex, so a manifold kernel
        cannot train on it. Such rows get weight 0 rather than a refusal: a
        vectoriser in a pipeline can make them (a message with an empty
        body, or all of its words pruned), and refusing them made the whole
        pipeline fail. ``predict`` gives such a document its intercepts'
        decisions.
        """
        no_words = np.diff(X.indptr) == 0
        weighed = np.ones_like(no_words) if weight is None else weight > 0
        # Those of weight 0 are left out anyway: no warning about them.
        empty = no_words & weighed
        if not empty.any():
            return weight
        # Negative entries first: their error, not this warning before it.
        check_on_simplex(X, name="X", kernel=self.kernel, empty_rows="allow")
        rows = np.flatnonzero(empty)
        has_words = np.bincount(y_index[~no_words & weighed], minlength=classes.shape[0])
        # A class without a sample of positive weight at all is fit's error
        # to name, with no warning before it; not this one (which named
        # such a class a class of empty documents when some other document
        # was empty: a review).
        if not np.all(np.bincount(y_index[weighed], minlength=classes.shape[0])):
            return weight
        if not np.all(has_words):
            lost = int(np.flatnonzero(has_words == 0)[0])
            of_weight = "" if weight is None else " of positive sample_weight"
            raise ValueError(
                f"every document{of_weight} of class {_label(classes[lost])!r} is without a "
                f"word (an all-zero row): the multinomial kernel {self.kernel!r} has no point "
                f"on the simplex for any of them, and every class needs one")
        warnings.warn(
            f"{rows.size} training document(s) without a word (all-zero rows "
            f"{listed_rows(rows)}) have no point on the simplex for the multinomial kernel "
            f"{self.kernel!r}: they are left out of the fit, as samples of weight 0 are; "
            f"predict gives such a document its intercepts' decisions (filter "
            f"kgeo.EmptyDocumentWarning where expected)",
            EmptyDocumentWarning, stacklevel=4)
        weight = np.ones(X.shape[0]) if weight is None else weight.copy()
        weight[empty] = 0.0
        return weight

    def _kernel_arguments(self, X, weight=None):
        """Parameters of the chosen kernel, with gamma resolved on X (its rows
        weighted by ``weight``, where given)."""
        accepted = kernel_params(self.kernel)
        params = {}
        if "gamma" in accepted:
            params["gamma"] = self._resolve_gamma(X, weight)
        for name in ("coef0", "degree", "t", "normalize"):
            if name in accepted:
                params[name] = getattr(self, name)
        return params

    def _resolve_gamma(self, X, weight=None):
        if isinstance(self.gamma, str) and self.gamma == "auto":
            return 1.0 / X.shape[1]
        if isinstance(self.gamma, str) and self.gamma == "scale":
            # Outside the parameter check: X's variance is refused as data.
            return _scale_gamma(X, weight)
        with parameter_errors():
            if isinstance(self.gamma, str):
                raise ValueError(
                    f"gamma must be 'scale', 'auto' or a float > 0, got {self.gamma!r}")
            if self.gamma is None:
                # pairwise_kernels reads None as 1 / n_features; SVC (and this
                # estimator) spell that "auto", so None is more likely a mistake.
                raise ValueError("gamma must be 'scale', 'auto' or a float > 0, got None")
        return self.gamma

    @parameter_errors()
    def _class_weights(self, counts):
        """``class_weight`` per class; ``counts``: each class's samples (their
        summed sample weights, where given) for "balanced"."""
        n_classes = counts.shape[0]
        cw = self.class_weight
        if cw is None:
            return np.ones(n_classes)
        if isinstance(cw, str):
            if cw != "balanced":
                raise ValueError(f"class_weight must be a dict, 'balanced' or None, got {cw!r}")
            return counts.sum() / (n_classes * counts.astype(np.float64))
        if not isinstance(cw, dict):
            raise ValueError(
                f"class_weight must be a dict, 'balanced' or None, got {type(cw).__name__}")
        weights = np.ones(n_classes)
        index = {label: i for i, label in enumerate(self.classes_.tolist())}
        for label, w in cw.items():
            position = index.get(label) if _hashable(label) else None
            if position is None:
                # Keys that equal a class without hashing like its Python form
                # (np.datetime64 keys; tolist() gives datetime.date).
                position = next((i for i, c in enumerate(self.classes_)
                                 if _same_value(c, label)), None)
            if position is None:
                raise ValueError(
                    f"class_weight has label {label!r}, which is not among the classes "
                    f"{self.classes_.tolist()}")
            weights[position] = check_positive(w, f"class_weight[{label!r}]")
        return weights

    # ------------------------------------------------------------------
    # fit
    # ------------------------------------------------------------------

    def fit(self, X, y, sample_weight=None):
        """Train one binary SVM per pair of classes.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Documents as rows (counts, TF or TF-IDF weights for the manifold
            kernels). Read until fit returns, and not copied where it need
            not be (a float64 array, canonical CSR): as with SVC, no other
            thread may write it meanwhile.
        y : array-like of shape (n_samples,)
            Class labels of any sortable type.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Multiplies C per sample, as libsvm's weights do: sample i's dual
            variable is bounded by ``C * class_weight[y_i] * sample_weight[i]``
            (the primal penalty of its slack times the weight, so an integer
            weight k is k copies of the sample, to ``tol``). Finite and >= 0.
            A sample of weight 0 is as if absent: X is checked whole (finite
            values; for a precomputed kernel, a symmetric matrix), then the
            sample is dropped, so the kernels' row checks, ``gamma="scale"``,
            ``class_weight="balanced"`` and the centre of ``ned``/``rbf`` see
            only the others (every class needs a sample of positive weight).
            ``support_`` indexes X as given, weight-0 samples included (which
            are never support vectors); ``sklearn.svm.SVC``'s indexes the
            samples left after dropping them.

        Returns
        -------
        self : SVM
        """
        # The fit runs on a copy of the estimator, whose attributes then
        # replace this one's in one assignment. A fit that fails (bad input
        # found late, Ctrl-C) leaves the model as it was: attributes of a new
        # fit next to an old one's would predict with one fit's coefficients
        # and the other's classes. And another thread predicting (or
        # pickling) during a refit sees the old model or the new one, never
        # a mix: a binary model's coefficients are stored in libsvm's sign
        # first and flipped at the end, and read in between they negated
        # every decision.
        work = object.__new__(type(self))
        work.__dict__ = self.__dict__.copy()
        try:
            work._fit(X, y, sample_weight)
            self.__dict__ = work.__dict__
        finally:
            # The scratch instance shares the attributes it made: dropped as
            # a subclass instance, its finaliser (closing a file, say) would
            # run on the model's state.
            try:
                work.__class__ = _FittedView
            except TypeError:  # a subclass with __slots__: another layout
                pass
        return self

    def _fit(self, X, y, sample_weight):
        started = time.perf_counter()
        self._check_params()
        precomputed = _is_precomputed(self.kernel)
        by_callable = _is_callable_kernel(self.kernel)
        # Column names of a frame (words, or for a kernel matrix the training
        # samples): prediction checks its X has the same, in the same order.
        # A callable kernel reads X itself, so has no columns (as in SVC).
        names = None if by_callable else feature_names(X)
        if precomputed:
            # X's own array when already float64 in C order: only read below.
            X_checked, largest = check_kernel_matrix(X, name="X",
                                                     n_threads=resolve_n_jobs(self.n_jobs))
        elif by_callable:
            # For the kernel function to read: rows of numbers (an ndarray of
            # their dtype, or CSR), or samples of any other kind as given.
            X_checked, numeric = check_kernel_samples(X, name="X")
        else:
            # Possibly X's own arrays (when already canonical CSR): only read below.
            X_checked = check_matrix(X, name="X", copy=False)
        # A float64 array gives the support vectors' rows again after the
        # solve (the same values), so its CSR copy is freed before the
        # solver's cache fills (see _set_support).
        dense_source = (X if not (precomputed or by_callable) and type(X) is np.ndarray
                        and X.dtype == np.float64 and X.ndim == 2 else None)
        n_samples = _n_samples(X_checked)
        y = check_labels(y, n_samples)
        weight = check_sample_weight(sample_weight, n_samples)
        classes, y_index, counts = np.unique(y, return_inverse=True, return_counts=True)
        if classes.shape[0] < 2:
            raise ValueError(
                f"SVM needs samples of at least 2 classes; the data contains only 1 class "
                f"({classes.tolist()[0]!r}) in {n_samples} sample(s)")
        if not (precomputed or by_callable) and KERNELS[self.kernel][1]:
            weight = self._without_empty_documents(X_checked, y_index, classes, weight)
        self.classes_ = classes
        # A callable kernel's samples that are not rows of numbers have no
        # features: (n_samples,), as scikit-learn's SVC records them.
        given_shape = X_checked.shape if hasattr(X_checked, "shape") else (n_samples,)
        kept = None  # the samples of positive weight, where some weigh 0
        if weight is not None and not np.all(weight > 0):
            # Weight 0 bounds a dual variable at 0: the sample can be no
            # support vector, and would only cost the solver its rows.
            kept = np.flatnonzero(weight > 0)
            counts = np.bincount(y_index[kept], minlength=classes.shape[0])
            if not np.all(counts):
                empty = int(np.flatnonzero(counts == 0)[0])
                raise ValueError(
                    f"class {_label(classes[empty])!r} has no sample of positive weight "
                    f"(sample_weight is 0 for all its samples): every class in y needs one; "
                    f"leave the class out of X and y instead")
            if not precomputed:  # a kernel matrix stays whole: the solver reads kept[order]
                X_checked = _take(X_checked, kept)
            y_index, weight = y_index[kept], weight[kept]
        if weight is not None and np.all(weight == 1.0):
            weight = None  # the others weigh 1: the unweighted fit of them, bit for bit
        # The weights' scale leaves "balanced" and gamma="scale" unchanged:
        # their sums are taken of weights at most 1, which cannot overflow.
        relative = None if weight is None else weight / weight.max()
        # With weights, "balanced" counts a sample as its weight (as many copies).
        class_weight = self._class_weights(
            counts if weight is None else np.bincount(y_index, weights=relative,
                                                      minlength=classes.shape[0]))
        with np.errstate(over="ignore", under="ignore"):
            class_box = float(self.C) * class_weight  # float: C may be a Fraction
        # A subnormal bound would pin the variables at values whose products
        # with the kernel lose their bits (decision values of -4e-323), as
        # the sample-weighted bounds below are refused for.
        normal = np.isfinite(class_box) & (class_box >= np.finfo(np.float64).tiny)
        if not np.all(normal):
            bad = int(np.flatnonzero(~normal)[0])
            error = ValueError(
                f"C * class_weight must be a finite, normal float64 > 0 (at least "
                f"{np.finfo(np.float64).tiny:.4g}) for every class, got "
                f"{self.C!r} * {float(class_weight[bad])!r} = {float(class_box[bad])!r} for "
                f"class {_label(classes[bad])!r}")
            if isinstance(self.class_weight, str):
                raise error  # "balanced": the weights come from y's counts
            with parameter_errors():  # two parameters' product
                raise error
        n_classes = classes.shape[0]
        # Rows sorted by class (stable): every class is a contiguous block.
        order = np.argsort(y_index, kind="stable")
        class_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        # The box bound of each row's dual variable, rows in that order.
        box = class_box[y_index[order]]
        if weight is not None:
            with np.errstate(over="ignore", under="ignore"):
                box *= weight[order]
            # A subnormal bound would pin the variable at values whose
            # products with the kernel lose their bits: refused as overflow is.
            bad = np.flatnonzero(~(np.isfinite(box) & (box >= np.finfo(np.float64).tiny)))
            if bad.size:
                row = int(np.min(order[bad]))  # the first in X's order
                sample = int(kept[row]) if kept is not None else row
                raise ValueError(
                    f"C * class_weight * sample_weight must be a finite, normal float64 "
                    f"> 0 for every sample of positive weight, got "
                    f"{float(class_box[y_index[row]])!r} * {float(weight[row])!r} = "
                    f"{float(class_box[y_index[row]]) * float(weight[row])!r} for sample {sample} "
                    f"({bad.size} sample(s) in all); rescale sample_weight")
        n_threads = resolve_n_jobs(self.n_jobs)
        if precomputed or by_callable:
            kernel_args, centre = {}, None
            if by_callable:
                # Of the samples of positive weight only (X_checked is them).
                matrix, largest = _callable_kernel_matrix(
                    self.kernel, X_checked, X_checked, n_threads=n_threads, training=True)
                position = order
            else:
                matrix = X_checked
                position = order if kept is None else kept[order]
            self._check_matrix_range(largest)
            kernel = PrecomputedKernel(matrix, position.astype(np.int64), self.shift)
            rows = empty_rows(order.shape[0])
        else:
            kernel_args = self._kernel_arguments(X_checked, relative)
            kernel = get_kernel(self.kernel, X_checked.shape[1], self.shift, **kernel_args)
            rows, centre = self._training_rows(X_checked, y_index, kernel, kernel_args,
                                               order, class_start, n_threads, kept)
        scale = None
        if isinstance(self.kernel, str) and self.kernel in ("poly", "sigmoid"):
            # Their values can underflow where the rows' norms do not (a
            # degree of 150 on unit rows): all of them below float64's normal
            # range gave a model of zeros, silently, or an SMO failure
            # blamed on values too large.
            scale = self._kernel_scale(X_checked, kernel_args)
            # An exact 0 is no underflow (K = 0 is what was asked: rows of
            # zeros, or gamma <x, y> + coef0 = 0); a poly value 0 from a
            # base of the diagonal that is not 0 is (tanh keeps a base
            # that is not 0 away from 0).
            underflowed = 0.0 < scale < np.finfo(np.float64).tiny
            if scale == 0.0 and self.kernel == "poly":
                squared_norms = np.asarray(X_checked.multiply(X_checked).sum(axis=1)).ravel()
                underflowed = bool(np.any(float(kernel_args["gamma"]) * squared_norms
                                          + float(kernel_args["coef0"]) != 0.0))
            if underflowed:
                raise ValueError(
                    f"kernel {self.kernel!r} underflows float64 on X: its values (parameters "
                    f"{kernel_args}) are at most {scale:.3g} in magnitude, below float64's "
                    f"smallest normal number ({np.finfo(np.float64).tiny:.3g}), so they lose "
                    f"their bits; raise gamma or coef0"
                    + (", or lower degree" if self.kernel == "poly" else ""))
        if self.shift != 0.0:
            if scale is None:
                scale = (largest if precomputed or by_callable
                         else self._kernel_scale(X_checked, kernel_args))
            self._check_shift(scale)
        single = self._cache_single()
        if single and (precomputed or by_callable or not kernel.on_simplex
                       or kernel_args.get("normalize", False)):
            # The manifold kernels' values are of order 1, but for ngd_exp's and
            # diffusion's normalize=True factor ((4 pi t)^(-n/2): 6e-42 at t = 1
            # and 76 features); others follow X.
            if scale is None:
                scale = (largest if precomputed or by_callable
                         else self._kernel_scale(X_checked, kernel_args))
            self._check_float32_range(scale)
        if dense_source is not None:
            # X_checked is X made CSR (12 bytes a nonzero, where X has 8 a
            # value), which only the support vectors' rows are read from
            # again; the training rows are its centred or sorted copy, or
            # share arrays with it (then less or nothing is freed). Freed
            # before the index of the rows is built, and the cache: a dense
            # rbf fit of 10,000 x 1,000 rows peaked 385 MB above its start
            # with it, 271 MB without.
            del X_checked
        index = PostingIndex(rows, class_start, n_threads=n_threads)
        del rows  # the index holds them
        cache = KernelRowCache(kernel, index, self._cache_bytes(counts, single), single=single,
                               n_threads=n_threads)

        n_pairs = n_classes * (n_classes - 1) // 2
        # (0, 1), (0, 2), ..., (1, 2), ...: libsvm's order of the pairs.
        pairs = np.column_stack(np.triu_indices(n_classes, 1)).astype(np.int64)
        try:
            solutions = self._solve_pairs(cache, pairs, box)
        except FloatingPointError as error:
            if kernel.overflowed:
                raise ValueError(overflow_message(self.kernel, kernel_args, "X")) from error
            if scale is not None and scale < _TOO_SMALL_FOR_SMO:
                # Steps of G / quad, quad of the kernel's order: beyond
                # float64 when the values are barely normal (sigmoid with
                # gamma=1e-309 had values of 2.6e-308).
                raise ValueError(
                    f"SMO's arithmetic leaves float64's range on this problem ({error}): the "
                    f"values of kernel {self.kernel!r} (parameters {kernel_args}) are too "
                    f"small in magnitude (at most {scale:.3g}), so its steps, of about "
                    f"1 / k, overflow; scale the kernel up (gamma, coef0, or X)") from error
            # Finite kernel values, yet the solver's gradients or objectives
            # left float64 (their squares, times C): the values are too large.
            raise ValueError(
                f"SMO's arithmetic leaves float64's range on this problem ({error}): the "
                f"values of kernel {self.kernel!r} (parameters {kernel_args}) are too large "
                f"in magnitude for C={self.C!r}; scale the kernel down (gamma, coef0, or X)"
            ) from error
        if kernel.overflowed:
            raise ValueError(overflow_message(self.kernel, kernel_args, "X"))
        intercepts = solutions.intercept
        n_iter = solutions.n_iter
        objectives = solutions.objective

        def labelled(status):
            return [(_label(classes[s]), _label(classes[t]))
                    for s, t in pairs[solutions.status == status]]

        unconverged = labelled(MAX_ITER_REACHED)
        stalled = labelled(STALLED)
        unresolved = labelled(UNRESOLVED)
        if stalled:
            warnings.warn(
                f"SMO stopped before tol={self.tol} for {len(stalled)} of {n_pairs} class "
                f"pair(s), first {stalled[0]}: its steps no longer change the dual variables "
                f"in float64, or its gap, down to the gradient's rounding, no longer falls; "
                f"tol is below what this problem can resolve; use a larger tol",
                sklearn_compatible(ConvergenceWarning), stacklevel=3)
        if unresolved:
            warnings.warn(
                f"SMO's gap fell below tol={self.tol} for {len(unresolved)} of {n_pairs} class "
                f"pair(s), first {unresolved[0]}, only by the rounding of its gradient: "
                f"recomputed exactly from the dual variables, it stays above tol; tol is below "
                f"what this problem can resolve; use a larger tol, or scale the kernel or C "
                f"down",
                sklearn_compatible(ConvergenceWarning), stacklevel=3)
        if unconverged and self.max_iter == -1:
            first = np.flatnonzero(solutions.status == MAX_ITER_REACHED)[0]
            # The largest box is what drives the iterations; C alone unless
            # class or sample weights raise it.
            bound = (f"C={float(self.C)!r}" if weight is None else
                     f"C * class_weight * sample_weight up to {float(box.max()):.3g}")
            lower = "C" if weight is None else "C (or the largest sample weights)"
            warnings.warn(
                f"SMO reached libsvm's iteration limit (max_iter=-1: max(10**7, 100 l) for a "
                f"pair of l samples, {n_iter[first]} for {unconverged[0]}) before "
                f"tol={self.tol} for {len(unconverged)} of {n_pairs} class pair(s): SMO's "
                f"iterations grow with C times the kernel's scale, here {bound} with "
                f"kernel {self.kernel!r}; lower {lower}, scale X (or gamma, coef0) down, or "
                f"pass a larger max_iter", sklearn_compatible(ConvergenceWarning), stacklevel=3)
        elif unconverged:
            warnings.warn(
                f"SMO reached max_iter={self.max_iter} before tol={self.tol} for "
                f"{len(unconverged)} of {n_pairs} class pair(s), first {unconverged[0]}; "
                f"increase max_iter or tol",
                sklearn_compatible(ConvergenceWarning), stacklevel=3)

        # The row cache and the training rows' index are done with: freed
        # before the support vectors are copied out, so that the fit's peak
        # does not hold both (a linear fit on 352 MB of PLSA Fisher scores
        # peaked 1,131 MB above its start, with the copy on top of both).
        cache_stats = cache.stats()
        del cache, index, kernel
        if by_callable:
            del matrix
        if dense_source is None:
            self._set_support(X, X_checked, order, class_start, solutions)
        else:
            self._set_support(X, None, order, class_start, solutions, dense_source, kept)
        if kept is not None:
            self.support_ = kept[self.support_].astype(np.int32)  # indices of the given X
        self.intercept_ = intercepts
        self.dual_objective_ = objectives
        self.n_iter_ = n_iter
        self.fit_status_ = int(bool(unconverged or stalled or unresolved))
        self.class_weight_ = class_weight
        if len(given_shape) == 2:
            self.n_features_in_ = given_shape[1]
        else:  # a previous fit's, in the attributes this fit started from
            self.__dict__.pop("n_features_in_", None)
        self._set_feature_names(names)
        self.shape_fit_ = given_shape
        # What a callable kernel was given: prediction hands it X the same way.
        self._kernel_reads_numbers = numeric if by_callable else None
        self._kernel_args = kernel_args  # as fitted (gamma resolved), for prediction
        # As given (gamma maybe "scale"): prediction refuses a kernel changed since.
        self._fitted_kernel = {name: getattr(self, name)
                               for name in ("kernel", "shift", *_params_of(self.kernel))}
        self._centre = centre
        # What prediction derives from the support vectors alone, kept for
        # the next call (see _support_vector_side): a new dict, since the
        # work instance started from the previous fit's attributes.
        self._prediction_cache = {}
        self.cache_stats_ = cache_stats
        self._kgeo_version = __version__
        if n_classes == 2:
            # scikit-learn's convention: positive decision values mean classes_[1].
            self.intercept_ = -self.intercept_ + 0.0  # + 0.0: no negative zeros
            self.dual_coef_ = -self.dual_coef_
        _freeze(self.dual_coef_)  # prediction keeps what it derives from them
        self.fit_time_ = time.perf_counter() - started
        if self.verbose >= 1:
            logger.info("fit: %d samples, %d classes, %d SV, %.3f s",
                        n_samples, n_classes, self.support_.shape[0], self.fit_time_)
        return self

    def _training_rows(self, X_checked, y_index, kernel, kernel_args, order, class_start,
                       n_threads, kept):
        """The training rows sorted by class, prepared for ``kernel``
        (``RowSet``), and the centre they were moved by (None: not moved).
        ``kept``: the caller's numbers of X_checked's rows where it holds
        only some of them (else None)."""
        if kernel.on_simplex:
            # Negative entries (fit gave the rows without a word weight 0, so
            # none is left here).
            check_on_simplex(X_checked, name="X", kernel=self.kernel)
        if kernel.half_space:
            spherical_normal_sigmas(X_checked, name="X", row_names=kept)
        # Corpora read folder by folder often come sorted: no copy then.
        in_order = bool(np.all(y_index[1:] >= y_index[:-1]))
        # ned and rbf on dense rows: moved to their mean, as prediction will
        # move the support vectors and the rows it is given (the same values).
        centre = translation_centre(self.kernel, X_checked)
        (X_sorted,) = used_columns_only(
            centred(X_checked, centre, None if in_order else order),
            n_blocks=class_start.shape[0] - 1)
        rows = prepare_rows(kernel, X_sorted, name="X", kernel_name=self.kernel,
                            n_threads=n_threads)
        if not kernel.on_simplex and X_sorted.nnz:
            # Rows of 1e-170 are ordinary numbers, their products are not:
            # every dot product and squared distance below float64's normal
            # range lost its bits (0 for all: a model of zeros, or SMO steps
            # of G / 0 that looked like an overflow).
            largest = float(np.max(rows.squared_norms))
            if largest < np.finfo(np.float64).tiny:
                raise ValueError(
                    f"kernel {self.kernel!r} underflows float64 on X: the largest squared "
                    f"L2 norm of a row is {largest:.3g}, below float64's smallest normal "
                    f"number ({np.finfo(np.float64).tiny:.3g}), so the kernel values lose "
                    f"their bits; scale X up")
        diagonal = kernel_diagonal(kernel, rows)
        if not np.all(np.isfinite(diagonal)):
            bad = np.sort(order[~np.isfinite(diagonal)])
            if kept is not None:
                bad = kept[bad]
            raise ValueError(
                f"kernel {self.kernel!r} overflows float64 on {bad.size} training row(s) "
                f"(first rows {bad[:10].tolist()}): k(x, x) is not finite; scale X down")
        return rows, centre

    def _solve_pairs(self, cache, pairs, box):
        """Solve every class pair, in parallel threads when n_jobs allows
        and the problem is large enough to share; returns their
        ``PairSolutions``.

        ``pairs`` holds the classes (s, t) of each pair, ``box`` the bound of
        each dual variable, rows sorted by class. The solver releases the
        GIL and the pairs share one thread-safe row cache; each pair's
        solution is the same whatever thread solves it. Pairs are solved in
        runs (``_pair_runs``): one call of the solver for many small ones.
        """
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        solutions = PairSolutions(cache.class_start, pairs)
        # Once per fit, not per run of pairs.
        tol = float(self.tol)
        shrinking = self.shrinking if isinstance(self.shrinking, str) else bool(self.shrinking)
        max_iter = min(int(self.max_iter), _MAX_ITER_CAP)

        def solve(first, last):
            try:
                solve_pairs(cache, solutions, first, last, box, tol, shrinking, max_iter)
            finally:
                if self.verbose >= 2:
                    # The run's solved pairs, also where it stopped part-way.
                    for p in range(first, last):
                        alpha, _, iters, objective, status = solutions[p]
                        if status == NOT_SOLVED:
                            break
                        s, t = pairs[p]
                        logger.info("pair (%r, %r): %d iterations, %d SV, objective %.6g",
                                    _label(self.classes_[s]), _label(self.classes_[t]),
                                    iters, np.count_nonzero(alpha), objective)

        threads_allowed = resolve_n_jobs(self.n_jobs)
        n_threads = min(threads_allowed, len(pairs))
        # Not for a kernel matrix too small to share (below 512 samples):
        # starting the workers, and on a loaded machine waiting for them,
        # costs more than solving (4 classes of 15 samples: 3.2 ms a fit on
        # two threads while another process kept both cores busy, 1.4 ms on
        # one).
        n_threads = parallel_threads(n_threads, len(box) ** 2)
        runs = _pair_runs(solutions.alpha_start, n_threads)
        show = self.verbose >= 1
        if n_threads == 1:
            # One pair (two classes) would leave the other threads idle: a
            # helper computes half of each kernel block its solver asks for
            # (the same bits; see KernelRowCache.compute_shared).
            bar = _progress(None, len(pairs), show, "class pairs")
            try:
                if (len(pairs) == 1 and ROW_HELPER
                        and parallel_threads(threads_allowed, len(box) ** 2) > 1):
                    # Started inside the try: whatever stops the fit (Ctrl-C
                    # included) stops it too (a review). Neither waited for
                    # as it starts (threading.Thread.start waits until the
                    # system runs the new thread: on busy cores, a scheduling
                    # delay per fit) nor joined: it reads only the cache,
                    # which its reference keeps alive, and returns within a
                    # millisecond of stop_helping.
                    try:
                        _thread.start_new_thread(cache.help_with_rows, ())
                    except RuntimeError:
                        pass  # no thread to be had: the solver computes every block
                    else:
                        cache.start_helping()
                for first, last in runs:
                    solve(first, last)
                    if bar is not None:
                        bar.update(last - first)
            finally:
                if bar is not None:
                    bar.close()
                cache.stop_helping()
            return solutions
        # Each worker takes the next unsolved run itself (next() on a count
        # is atomic under the GIL). A thread pool's futures, and this thread
        # waking for each of them, had cost 20-25 ms of the two workers' time
        # between pairs in a 20 Newsgroups NGD fit; this way, 4-5 ms.
        next_run = itertools.count()
        failures = []
        finished = queue.SimpleQueue() if show else None
        # Set by each worker as it ends. Waited for instead of Thread.join
        # alone: a join that Ctrl-C interrupts can leave the thread marked
        # as ended while it still runs (Python 3.11), and a second join then
        # returned at once, before the worker had stopped (a review).
        ended = []

        def work(done):
            try:
                for r in next_run:
                    if r >= len(runs) or failures:
                        break
                    solve(*runs[r])
                    if finished is not None:
                        finished.put(runs[r][1] - runs[r][0])
            except BaseException as exc:
                failures.append(exc)
                cache.request_stop()  # the other workers stop at their next check
            finally:
                if finished is not None:
                    finished.put(None)
                done.set()

        _release_openmp_threads()  # the set-up's OpenMP workers would spin on our cores
        workers = []
        try:
            for k in range(n_threads):
                done = threading.Event()
                worker = threading.Thread(target=work, args=(done,), name=f"kgeo-pairs-{k}",
                                          daemon=True)
                worker.start()
                workers.append(worker)
                ended.append(done)
            if finished is not None:
                bar = _progress(None, len(pairs), show, "class pairs")
                running = len(workers)
                while running:
                    solved = finished.get()
                    if solved is None:
                        running -= 1
                    elif bar is not None:
                        bar.update(solved)
                if bar is not None:
                    bar.close()
            for worker in workers:
                worker.join()
        except BaseException:
            # Ctrl-C reaches only this thread: stop the workers through the
            # cache, and let them wind down before re-raising (a second
            # Ctrl-C meanwhile does not cut the wait short).
            cache.request_stop()
            for done in ended:
                while True:
                    try:
                        done.wait()
                        break
                    except KeyboardInterrupt:
                        continue
            for worker in workers:
                worker.join()
            raise
        if failures:
            raise failures[0]
        return solutions

    def _kernel_scale(self, X, kernel_args):
        """The largest |k| of the unshifted kernel on X's rows, estimated:
        k(x, x) of every row, the values among 128 evenly spaced rows, and
        those of the first row with every row (the distance kernels are 0 on
        the diagonal, and the spaced rows may all be one document: ned's
        estimate was then 0, and a shift of 1e20 that rounds the kernel away
        passed unchecked)."""
        unshifted = get_kernel(self.kernel, X.shape[1], 0.0, **kernel_args)
        spaced = np.unique(np.linspace(0, X.shape[0] - 1, 128).astype(np.int64))
        sample = prepare_rows(unshifted, *used_columns_only(X[spaced]), kernel_name=self.kernel)
        probe = kernel_matrix(unshifted, sample, single_block(sample), 1)
        rows, first = used_columns_only(X, X[:1])  # every column keeps its values
        prepared = prepare_rows(unshifted, rows, kernel_name=self.kernel)
        diagonal = kernel_diagonal(unshifted, prepared)
        against_first = kernel_matrix(unshifted, prepared,
                                      single_block(prepare_rows(unshifted, first,
                                                                kernel_name=self.kernel)), 1)
        return max(float(np.max(np.abs(probe))), float(np.max(np.abs(diagonal))),
                   float(np.max(np.abs(against_first))))

    def _check_matrix_range(self, largest):
        """Refuse a precomputed kernel matrix (largest magnitude ``largest``)
        whose values the solver's arithmetic cannot carry, as the named
        kernels refuse rows whose squares leave float64."""
        tiny, top = np.finfo(np.float64).tiny, np.finfo(np.float64).max / 4
        which = _matrix_kernel_name(self.kernel)
        if _is_callable_kernel(self.kernel):
            where, scaled = f"{_kernel_label(self.kernel)}(X, X)", "its values"
        else:
            where, scaled = "X", "X"
        if 0.0 < largest < tiny:
            raise ValueError(
                f"{which} underflows float64 on {where}: its largest magnitude is "
                f"{largest:.3g}, below float64's smallest normal number ({tiny:.3g}), so "
                f"the solver's sums of its values lose their bits; scale {scaled} up "
                f"(scaling the kernel by c is the same SVM as scaling C by c)")
        reach = largest + abs(float(self.shift))
        if not reach <= top:
            raise ValueError(
                f"{which} overflows float64 on {where}: its values (largest "
                f"magnitude {largest:.3g}, shift {self.shift!r}) reach {reach:.3g}, and the "
                f"solver's K_ii + K_jj - 2 K_ij leaves float64's range above {top:.3g}; "
                f"scale {scaled} down (scaling the kernel by c is the same SVM as scaling C "
                f"by c)")

    def _check_shift(self, scale):
        """Refuse a shift that rounds the kernel away; warn when it eats half of it.

        Proposition 3 makes every shift the same SVM in exact arithmetic, but
        the solver sees ``K + shift`` in float64: with ``|shift|`` far above
        ``|K|`` (``scale``, its largest magnitude) only the leading bits of K
        survive.
        """
        if scale == 0.0:
            return  # K is exactly 0 here: K + shift is exact
        shift = abs(float(self.shift))
        eps = np.finfo(np.float64).eps
        if shift * eps >= scale:
            raise ValueError(
                f"shift={self.shift!r} swamps the kernel: its values here are at most "
                f"{scale:.3g} in magnitude, and K + shift rounds them away in float64; "
                f"use |shift| well below {scale / eps:.3g} (any shift gives the same SVM "
                f"in exact arithmetic)")
        if shift > scale * 2.0 ** 26:
            kept = max(0, int(53 - np.log2(shift / scale)))
            warnings.warn(
                f"shift={self.shift!r} is {shift / scale:.3g} times the kernel's magnitude "
                f"({scale:.3g}): K + shift keeps only about {kept} of the 53 bits of K, and "
                f"the model differs from the unshifted one by that rounding",
                UserWarning, stacklevel=4)

    def _check_float32_range(self, largest):
        """Refuse ``cache_dtype="float32"`` for a kernel whose values (largest
        magnitude ``largest``) are all below float32's normal range: stored
        there, they keep fewer than float32's 24 bits, down to none, and the
        rounded kernel is no longer the one asked for (its overflow is
        refused as the blocks are computed)."""
        tiny = float(np.finfo(np.float32).tiny)
        if 0.0 < largest < tiny:
            raise ValueError(
                f"cache_dtype='float32' cannot store the values of kernel {self.kernel!r} on "
                f"this X: their largest magnitude is about {largest:.3g}, below float32's "
                f"smallest normal number ({tiny:.3g}), where float32 keeps few or no bits; "
                f"use cache_dtype='float64', or scale X up (scaling the kernel by c is the "
                f"same SVM as scaling C by c)")

    def _cache_single(self):
        """Whether ``cache_dtype`` asks for float32 storage (else float64)."""
        dtype = self.cache_dtype
        name = None
        if isinstance(dtype, str):
            name = dtype
        elif isinstance(dtype, np.dtype) or (isinstance(dtype, type)
                                              and dtype in (np.float32, np.float64)):
            name = np.dtype(dtype).name
        if name not in ("float64", "float32"):
            raise ValueError(
                f"cache_dtype must be 'float64' or 'float32', got {dtype!r}")
        return name == "float32"

    def _cache_bytes(self, counts, single):
        value_bytes = 4 if single else 8
        largest_pair = np.sort(counts)[-2:].sum()
        minimum = 2 * int(largest_pair) * value_bytes
        # More than the whole kernel matrix is never used: cap a huge request there.
        whole = int(counts.sum()) ** 2 * value_bytes
        requested = int(min(self.cache_size * (1 << 20), max(whole, minimum)))
        if requested < minimum:
            warnings.warn(
                f"cache_size={self.cache_size} MB is below the minimum of two kernel "
                f"rows of the largest class pair ({minimum / (1 << 20):.3g} MB); using "
                f"the minimum", UserWarning, stacklevel=4)
            return minimum
        return requested

    def _set_support(self, X, X_checked, order, class_start, solutions, dense_source=None,
                     kept=None):
        """SVC's support_, n_support_, dual_coef_ (libsvm layout), support_vectors_.

        ``support_`` numbers the rows of X_checked. Where the fit freed
        X_checked (None), the support vectors are rows ``kept[support_]``
        (``support_`` without weights of 0) of ``dense_source``, the
        caller's float64 array X_checked was made from.
        """
        is_sv, self.dual_coef_ = one_vs_one_coefficients(solutions, class_start)
        self.support_ = order[np.flatnonzero(is_sv)].astype(np.int32)
        self.n_support_ = np.array(
            [np.count_nonzero(is_sv[class_start[c]:class_start[c + 1]])
             for c in range(class_start.shape[0] - 1)], dtype=np.int32)
        if _is_precomputed(self.kernel):
            # No feature vectors: prediction reads the columns support_ of
            # its kernel matrix (scikit-learn's SVC keeps this shape too).
            self.support_vectors_ = np.empty((0, 0))
            return
        if _is_callable_kernel(self.kernel):
            # The samples as the kernel function read them, for it to read
            # again against the samples predicted.
            self.support_vectors_ = _own_copy(_take(X_checked, self.support_))
            _freeze(self.support_vectors_)
            return
        if X_checked is None:
            rows = self.support_ if kept is None else kept[self.support_]
            support_vectors = np.ascontiguousarray(dense_source[rows])  # a new array
            # As X_checked's rows made dense again: its CSR kept no zero,
            # and so no -0.0 either.
            support_vectors[support_vectors == 0.0] = 0.0
            self.support_vectors_ = support_vectors
            _freeze(self.support_vectors_)
            return
        rows = self.support_.astype(np.int64)
        indptr = np.empty(rows.shape[0] + 1, dtype=np.int64)
        data, indices = take_rows(X_checked.data, X_checked.indices,
                                  X_checked.indptr.astype(np.int64, copy=False), rows, indptr,
                                  n_threads=resolve_n_jobs(self.n_jobs))
        # int32 like X_checked's: the support vectors are some of its nonzeros,
        # which check_matrix keeps below 2**31.
        self.support_vectors_ = sp.csr_matrix(
            (data, indices, indptr.astype(np.int32)), shape=(rows.shape[0], X_checked.shape[1]))
        if not sp.issparse(X):
            self.support_vectors_ = self.support_vectors_.toarray()
        _freeze(self.support_vectors_)

    # ------------------------------------------------------------------
    # prediction
    # ------------------------------------------------------------------

    def _decision_chunks(self, X, confidence=False):
        """Decision values of every class pair, libsvm's orientation (> 0:
        class s), with the votes, a chunk of rows of X at a time, so that
        ``predict`` never holds all n_samples x n_pairs of them (20,000 rows
        of 200 classes would be 3.2 GB). X is checked before this returns.

        Returns
        -------
        n_samples : int
        classes : ndarray of shape (n_classes,)
            ``classes_`` of the model the chunks come from.
        chunks : iterator of (rows, dec, votes, confidence)

        where
        rows : slice
            The rows of X of this chunk.
        dec : ndarray of shape (n_rows, n_pairs)
        votes : ndarray of int64, shape (n_rows, n_classes)
            Within a bound on its rounding, 4 ulps of ``|b| + sum|coef|
            max|K|``, the maximum over the row's own kernel values (so that a
            row's vote does not depend on the other rows predicted with it),
            a decision value is taken as zero: see ``one_vs_one_votes``.
        confidence : ndarray of shape (n_rows, n_classes), or None
            With ``confidence=True``: scikit-learn's ovr confidences before
            squashing.

        The iterator raises ``ValueError`` after the last chunk if any value
        was not finite.
        """
        check_is_fitted(self, "dual_coef_")
        # A refit in another thread installs a new attribute dict (see fit),
        # and an attribute assigned meanwhile changes this one: every
        # attribute is read from a copy of the one in place now.
        model = _FittedView(dict(self.__dict__))
        _check_kernel_unchanged(model)
        if not _is_callable_kernel(model.kernel):
            check_feature_names(feature_names(X), estimator=type(self).__name__,
                                fitted_names=getattr(model, "feature_names_in_", None))
        n_threads = resolve_n_jobs(model.n_jobs)
        if _is_precomputed(model.kernel):
            X, n_sv, weighted_sums = _kernel_matrix_sums(model, X, n_threads)
        elif _is_callable_kernel(model.kernel):
            X, n_sv, weighted_sums = _callable_kernel_sums(model, X, n_threads)
        else:
            X, n_sv, weighted_sums = _row_sums(model, X, n_threads)
        n_classes, n_support, dual_coef, b = _check_fitted_arrays(model, n_sv)
        # libsvm's orientation (the binary case is stored flipped, as SVC does).
        if n_classes == 2:
            b = -b
        sv_start, coef_t, coef_sum = _coefficient_side(model, n_support, dual_coef)
        n_pairs = coef_sum.shape[0]
        n_samples = _n_samples(X)  # a callable kernel's samples may be a list
        # Test rows per call: bounds the shares (and the prepared rows, or the
        # kernel values of a precomputed or callable kernel) held at once.
        per_row = n_classes * (n_classes - 1)
        if _is_callable_kernel(model.kernel):
            chunk = max(1, min(_CALLABLE_CHUNK_VALUES // max(n_sv, 1),
                               _PREDICT_CHUNK_VALUES // per_row))
        else:
            if _is_precomputed(model.kernel):
                per_row = max(per_row, n_sv)
            else:
                # The chunk's rows of X, as copied and prepared, too: with two
                # classes per_row alone allowed 2 M rows, a whole batch of
                # 200,000 documents (2.8 times X at the peak).
                stored = X.nnz / max(X.shape[0], 1) if sp.issparse(X) else X.shape[1]
                per_row = max(per_row, math.ceil(stored))
            chunk = max(1, _PREDICT_CHUNK_VALUES // per_row)

        def chunks():
            not_finite = []
            for start in range(0, n_samples, chunk):
                rows = slice(start, min(start + chunk, n_samples))
                share, K_max = weighted_sums(rows, sv_start, coef_t)
                n_rows = share.shape[0]
                dec = np.empty((n_rows, n_pairs))
                votes = np.empty((n_rows, n_classes), dtype=np.int64)
                conf = np.empty((n_rows, n_classes)) if confidence else None
                one_vs_one_votes(share, b, coef_sum, K_max, dec, votes, conf)
                del share
                not_finite.append(start + np.flatnonzero(~np.all(np.isfinite(dec), axis=1)))
                yield rows, dec, votes, conf
            bad = np.concatenate(not_finite) if not_finite else np.empty(0, dtype=np.intp)
            if bad.size:
                if _is_callable_kernel(model.kernel):
                    cause = (f"the values of kernel={_kernel_label(model.kernel)} weighed "
                             f"by the dual coefficients overflow float64 on them; scale its "
                             f"values down")
                else:
                    cause = f"kernel {model.kernel!r} overflows float64 on them; scale X down"
                raise ValueError(
                    f"decision values are not finite for {bad.size} row(s) of X (first rows "
                    f"{bad[:10].tolist()}): {cause}")

        return n_samples, model.classes_, chunks()

    def decision_function(self, X):
        """Signed distances to the separating hyperplanes.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        dec : ndarray of shape (n_samples,) for two classes (positive for
            ``classes_[1]``), else (n_samples, n_classes) with
            ``decision_function_shape="ovr"`` or (n_samples, n_pairs) with
            ``"ovo"`` (positive for the first class of the pair).

        Notes
        -----
        The values are as computed, rounding included; ``predict`` counts a
        value within ``4 eps (|b| + sum|coef| max|K|)`` of zero as zero (see
        its Notes), so on a boundary its class may differ from this sign.
        """
        shape = self.decision_function_shape
        if not (isinstance(shape, str) and shape in ("ovr", "ovo")):
            # set after fit (set_params): fit's check never saw it.
            raise ValueError(f"decision_function_shape must be 'ovr' or 'ovo', got {shape!r}")
        n_samples, classes, chunks = self._decision_chunks(X, confidence=shape == "ovr")
        n_classes = classes.shape[0]
        if n_classes == 2 or shape == "ovo":
            out = np.empty((n_samples, n_classes * (n_classes - 1) // 2))
            for rows, dec, _, _ in chunks:
                out[rows] = dec
            if n_classes == 2:
                return -out[:, 0] + 0.0  # + 0.0: no negative zeros
            return out
        # Votes plus confidences squashed into (-1/3, 1/3), as scikit-learn's SVC does.
        out = np.empty((n_samples, n_classes))
        for rows, _, votes, conf in chunks:
            out[rows] = votes + _squashed(conf)
        return out

    def predict(self, X):
        """Class of each sample, by one-vs-one voting.

        Ties in the votes go to the first of the tied classes, or, with
        ``break_ties=True`` and more than two classes, to the tied class of
        the largest ``decision_function`` value (scikit-learn's SVC rule).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)

        Notes
        -----
        A pair's decision value within its rounding of zero, ``|d| <= 4 eps
        (|b| + sum|coef| max|K|)`` (``eps`` = 2.2e-16, the float64 epsilon;
        ``max|K|`` the largest kernel value of the sample against the support
        vectors), votes as an exact zero does in libsvm:
        for the pair's second class. So a sample on a boundary gets the same
        class from a model trained with ``K`` or ``K + beta`` (Proposition 3),
        whichever way rounding tips its decision value; there ``predict``
        may differ from the sign of ``decision_function``, which returns the
        value as computed (a binary model's value of -8e-16 next to ``|b| +
        sum|coef|`` of order 1 predicts ``classes_[1]``).

        The bound covers the rounding of the sample's own terms, not that of
        b* from training. A sample whose kernel values vanish (rbf rows far
        from every support vector, at 1e-200) is decided by b* alone; where
        the classes balance, b* is 0 up to that rounding (-7e-17 with K, 0.0
        with K + 10), and the two models' votes then differ (49 of 200
        random 4-point problems at gamma=1 in 20 dimensions). A bound of
        ``4 eps (1 + max|K| sum(alpha))`` over the training rows was tried
        and not kept: one long or far document, not a support vector, made
        it 1e10 on 20 Newsgroups' poly kernel, and decision values of
        order 1 voted against their sign.
        """
        check_is_fitted(self, "dual_coef_")  # before the parameters, as in SVC
        break_ties = self._check_break_ties()
        n_samples, classes, chunks = self._decision_chunks(X, confidence=break_ties)
        winners = np.empty(n_samples, dtype=np.intp)
        for rows, _, votes, conf in chunks:
            if break_ties and classes.shape[0] > 2:
                # decision_function's ovr values: the votes plus confidences
                # squashed into (-1/3, 1/3), which order classes of equal votes.
                winners[rows] = np.argmax(votes + _squashed(conf), axis=1)
            else:
                winners[rows] = np.argmax(votes, axis=1)
        return classes[winners]

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of ``predict(X)`` against ``y``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Each sample counts as its weight (real numbers, finite, >= 0, not
            all 0).

        Returns
        -------
        score : float
        """
        return checked_accuracy(y, self.predict(X), sample_weight)

    # ------------------------------------------------------------------
    # scikit-learn's metadata routing (read by scikit-learn alone, where a
    # user enables it: sklearn.set_config(enable_metadata_routing=True))
    # ------------------------------------------------------------------

    def set_fit_request(self, *, sample_weight=_UNCHANGED):
        """Ask scikit-learn's metadata routing for ``fit``'s ``sample_weight``.

        As ``set_fit_request`` of scikit-learn's estimators; only available
        while routing is enabled (``RuntimeError`` otherwise).

        Parameters
        ----------
        sample_weight : bool, None or str, default=unchanged
            True: ``fit`` receives the weights routed to it; False: it does
            not; None (the initial state): passing weights raises an error;
            a name: ``fit`` receives the weights passed under that name.
            Unchanged when not given.

        Returns
        -------
        self : SVM
        """
        return self._set_request("fit", sample_weight)

    def set_score_request(self, *, sample_weight=_UNCHANGED):
        """Ask scikit-learn's metadata routing for ``score``'s ``sample_weight``.

        As ``set_score_request`` of scikit-learn's estimators; only
        available while routing is enabled (``RuntimeError`` otherwise).

        Parameters
        ----------
        sample_weight : bool, None or str, default=unchanged
            As in :meth:`set_fit_request`, for ``score``.

        Returns
        -------
        self : SVM
        """
        return self._set_request("score", sample_weight)

    def _set_request(self, method, alias):
        import sklearn

        if not sklearn.get_config().get("enable_metadata_routing", False):
            raise RuntimeError(
                f"set_{method}_request is only available when scikit-learn's metadata "
                f"routing is enabled: sklearn.set_config(enable_metadata_routing=True)")
        if alias is not _UNCHANGED:
            if not (alias is None or isinstance(alias, bool)
                    or (isinstance(alias, str) and alias.isidentifier())):
                raise ValueError(
                    f"sample_weight's request must be True, False, None or a name (a "
                    f"Python identifier) to pass it under, got {alias!r}")
            # In the attribute scikit-learn's clone copies; a kgeo type, so that
            # a pickled model loads without scikit-learn.
            self._metadata_request = _Requests({**getattr(self, "_metadata_request", {}),
                                                method: alias})
        return self

    def get_metadata_routing(self):
        """Return the ``sample_weight`` requests of ``fit`` and ``score``.

        Read by scikit-learn's metadata routing (which imports
        scikit-learn, where this is called).

        Returns
        -------
        routing : sklearn.utils.metadata_routing.MetadataRequest
            Each method's request as :meth:`set_fit_request` and
            :meth:`set_score_request` left it: None until set (an error if
            routing passes weights).
        """
        return _metadata_request(getattr(self, "_metadata_request", {}),
                                 owner=type(self).__name__)

    @property
    def coef_(self):
        """Weights of the features in each class pair's decision function
        (``kernel="linear"`` only).

        Row p is ``w = sum_i dual_coef_i x_i`` over the support vectors of
        pair p (in the order of ``intercept_``), so that the pair's decision
        value is ``X @ coef_[p] + intercept_[p]`` (positive for its first
        class; for two classes, ``classes_[1]``), as with scikit-learn's
        SVC. A CSR matrix when the model was fitted on sparse input (a
        vocabulary's weights are mostly zero where the support vectors lack
        the word), else an array; read-only, computed at each access.
        A ``shift`` leaves it unchanged: each pair's coefficients sum to 0.

        Raises
        ------
        AttributeError
            For the other kernels, whose feature space has no finite weights
            (the manifold kernels', or the RBF's) or is not the input's.
        """
        check_is_fitted(self, "dual_coef_")
        model = _FittedView(dict(self.__dict__))  # one model, whatever happens meanwhile
        fitted_kernel = (getattr(model, "_fitted_kernel", None) or {}).get("kernel",
                                                                          model.kernel)
        if not (isinstance(fitted_kernel, str) and fitted_kernel == "linear"):
            raise AttributeError(
                f"coef_ exists only for kernel='linear'; this SVM was fitted with "
                f"kernel={fitted_kernel!r}, whose decision function is not linear in X's "
                f"features: use dual_coef_ and support_vectors_")
        _checked_support_vectors(model)  # the fitted columns
        support_vectors = model.support_vectors_
        n_classes, n_support, dual_coef, _ = _check_fitted_arrays(model,
                                                                   support_vectors.shape[0])
        sv_start = np.concatenate([[0], np.cumsum(n_support)])
        # Pair (s, t) weighs class s's SVs by row t - 1 of dual_coef_ and class
        # t's by row s (libsvm's layout): one sparse (n_pairs x n_SV) matrix of
        # these coefficients, times the support vectors.
        pair_rows, columns, values = [], [], []
        for p, (s, t) in enumerate(itertools.combinations(range(n_classes), 2)):
            for cls, row in ((s, t - 1), (t, s)):
                segment = np.arange(sv_start[cls], sv_start[cls + 1])
                pair_rows.append(np.full(segment.shape[0], p))
                columns.append(segment)
                values.append(dual_coef[row, segment])
        n_pairs = n_classes * (n_classes - 1) // 2
        weights = sp.csr_matrix(
            (np.concatenate(values), (np.concatenate(pair_rows), np.concatenate(columns))),
            shape=(n_pairs, support_vectors.shape[0]))
        if sp.issparse(support_vectors):
            # Over the columns the support vectors use: SciPy's product keeps
            # a table of all the columns (a model of 2**31 - 1 hashed columns
            # asked for gigabytes, and failed).
            support_vectors = sp.csr_matrix(support_vectors)
            used = np.unique(support_vectors.indices)
            compact = sp.csr_matrix(
                (support_vectors.data, np.searchsorted(used, support_vectors.indices),
                 support_vectors.indptr), shape=(support_vectors.shape[0], used.shape[0]))
            product = sp.csr_matrix(weights @ compact)
            product.sort_indices()
            index_dtype = np.int32 if support_vectors.shape[1] < 2**31 else np.int64
            coef = sp.csr_matrix(
                (product.data, used[product.indices].astype(index_dtype),
                 product.indptr.astype(index_dtype)),
                shape=(n_pairs, support_vectors.shape[1]))
            for array in (coef.data, coef.indices, coef.indptr):
                array.flags.writeable = False
        else:
            coef = np.asarray(weights @ np.asarray(support_vectors, dtype=np.float64))
            coef.flags.writeable = False
        return coef

    # ------------------------------------------------------------------
    # persistence and scikit-learn integration
    # ------------------------------------------------------------------

    def __getstate__(self):
        state = self.__dict__.copy()
        # Rebuilt by the first prediction after loading: compiled objects,
        # and derived from the support vectors saved anyway.
        state.pop("_prediction_cache", None)
        if "dual_coef_" in state:
            state["_kgeo_version"] = __version__
        return state

    def __setstate__(self, state):
        saved = state.get("_kgeo_version")
        if saved is not None and saved.split(".")[:2] != __version__.split(".")[:2]:
            raise ValueError(
                f"this SVM was fitted with kgeo {saved}, which is incompatible with the "
                f"installed kgeo {__version__}; refit it with kgeo {__version__} (or load "
                f"it with kgeo {saved})")
        self.__dict__.update(state)
        # A parameter added since 0.1.0's first models were saved (same
        # minor version, so they load): its default, as get_params expects.
        self.__dict__.setdefault("break_ties", False)
        if "dual_coef_" in state:
            self._prediction_cache = {}
            # Frozen as the fit's are, so that prediction keeps what it
            # derives from them. A protocol 5 pickle's arrays lie in its
            # bytearray, which `_cache_key` cannot tell from memory written
            # otherwise: they are copied.
            for name in ("support_vectors_", "dual_coef_"):
                if name in state:
                    value = getattr(self, name)
                    if any(_in_lent_memory(array) for array in _arrays_of(value)):
                        value = value.copy()
                        setattr(self, name, value)
                    _freeze(value)

    def __copy__(self):
        # The copy shares the arrays, some maybe the caller's own (assigned
        # after the fit): unlike a loaded model's, none is frozen here.
        new = object.__new__(type(self))
        new.__dict__.update(self.__getstate__())
        if "dual_coef_" in new.__dict__:
            new._prediction_cache = {}
        return new

    def __sklearn_tags__(self):
        # Called only by scikit-learn itself, so importing it here adds no
        # runtime dependency.
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        on_simplex = isinstance(self.kernel, str) and self.kernel in KERNELS and KERNELS[self.kernel][1]
        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            # The multinomial kernels see each row's direction only (after L1
            # normalisation): make_blobs' classes, apart by location, are not
            # separable with them, which is what poor_score declares.
            classifier_tags=ClassifierTags(poor_score=on_simplex),
            input_tags=InputTags(sparse=True, positive_only=on_simplex,
                                 pairwise=_is_precomputed(self.kernel)),
        )


# Kernel values below this (about the square root of float64's smallest
# normal number) make SMO's steps, of order 1 / k, leave float64's range.
_TOO_SMALL_FOR_SMO = 1e-150


def _arrays_of(support_vectors):
    """The arrays holding a support-vector matrix's values."""
    return ((support_vectors.data, support_vectors.indices, support_vectors.indptr)
            if sp.issparse(support_vectors) else (support_vectors,))


def _freeze(support_vectors):
    """Make the arrays of ``support_vectors_`` (or ``dual_coef_``) read-only:
    prediction keeps what it derives from them (``_prediction_cache``), so
    an edit in place would go unseen; it raises instead. A new matrix
    assigned is seen (the cache is keyed by the object). The arrays they
    view are frozen too (the fit's own buffers, cut to length: nothing else
    holds them), so that `_cache_key` finds the whole chain read-only."""
    for array in _arrays_of(support_vectors):
        while isinstance(array, np.ndarray):
            array.flags.writeable = False
            array = array.base


def _cache_key(support_vectors):
    """What the prediction cache keys derived support vectors (or dual
    coefficients) by: the matrix and the arrays that hold its values (a
    sparse matrix's ``data`` may be replaced under the same object), or None
    where prediction must not keep them. The fit's arrays are read-only
    (`_freeze`); a matrix the user assigns may be edited in place later,
    unseen by a key of objects, so writable arrays are prepared again at
    every call, and so are read-only views of memory that may be written
    otherwise: of a writable array, or of memory an array does not own
    (a bytearray, a memoryview, ``as_strided``'s). A file mapped into memory
    (``np.load``'s or joblib's ``mmap_mode``) is taken as unchanging."""
    arrays = _arrays_of(support_vectors)
    for array in arrays:
        if not isinstance(array, np.ndarray) or _in_lent_memory(array):
            return None
        base = array
        while isinstance(base, np.ndarray):
            if base.flags.writeable:
                return None
            base = base.base
    return (support_vectors, *arrays)


def _in_lent_memory(array):
    """Whether an ndarray's values lie in memory no array of its chain of
    bases owns, other than bytes or a file mapped into memory: a
    bytearray's, a memoryview's, ``as_strided``'s, which may be written
    other than through the array."""
    while isinstance(array, np.ndarray):
        array = array.base
    return array is not None and not isinstance(array, (bytes, mmap.mmap))


def _checked_support_vectors(model, support_vectors=None):
    """``support_vectors_`` (or ``support_vectors``, read from it earlier)
    as a checked CSR matrix of the columns the model was fitted on: a
    matrix of other columns assigned in their place (the attribute is
    documented as replaceable) read the posting tables beyond their end (a
    segmentation fault with fewer columns) or gave silently wrong decision
    values."""
    if support_vectors is None:
        support_vectors = model.support_vectors_
    support_vectors = check_matrix(support_vectors, name="support_vectors_", min_samples=0)
    n_features = getattr(model, "n_features_in_", None)
    if n_features is not None and support_vectors.shape[1] != n_features:
        raise ValueError(
            f"support_vectors_ has {support_vectors.shape[1]} columns, but this SVM was "
            f"fitted on {n_features} features: a matrix assigned to support_vectors_ must "
            f"keep the fitted columns")
    return support_vectors


def _same_key(kept, key):
    """Whether a kept cache key is ``key`` (the same objects)."""
    return (key is not None and kept is not None and len(kept) == len(key)
            and all(a is b for a, b in zip(kept, key)))


class _FittedView:
    """The attributes of one SVM attribute dict, read as attributes.

    A prediction reads every attribute from a copy of the dict in place
    when it starts, so it uses one model: a refit in another thread installs
    a new dict (see `SVM.fit`), and an attribute assigned meanwhile would
    change the dict itself (a review found ``dual_coef_`` assigned between
    two reads of one prediction: values derived from the old array were
    kept for the new one, wrong at every later call). The prediction cache
    is shared: the copy holds the same dict. A plain object, not an SVM: a
    subclass's finaliser must not run on the live model's state when the
    view is collected.
    """

    def __init__(self, state):
        self.__dict__ = state


def _support_vector_side(model, kernel, X, n_threads):
    """The support vectors prepared for ``kernel`` and their posting index,
    and X over the same columns.

    Built once per fit (again if ``support_vectors_`` is replaced, and at
    every call for a writable one, see `_cache_key`) and kept in the
    model's prediction cache. Rebuilt at every call, a 20-class 20
    Newsgroups model spent 6-10 ms predicting one row, where a row of a
    batch costs about 30 us. Hashed features (far more columns than stored
    values) keep only the columns the support vectors use, and X is
    renumbered to them; where X uses others too, the support vectors are
    renumbered and indexed again for that call (see
    `_over_support_vector_columns`).
    """
    cache = getattr(model, "_prediction_cache", None)  # None: saved before kgeo kept one
    source = model.support_vectors_
    key = _cache_key(source)
    if key is None and cache is not None:  # (as in _coefficient_side)
        cache.pop("support_vectors", None)
        cache.pop("hashed_support_vectors", None)
    kept = cache.get("support_vectors") if cache is not None else None
    if kept is not None and _same_key(kept[0], key):  # not replaced since
        return (*kept[1:], X)
    hashed = cache.get("hashed_support_vectors") if cache is not None else None
    if hashed is not None and _same_key(hashed[0], key):
        return _over_support_vector_columns(model, kernel, X, n_threads, *hashed[1:])
    support_vectors = _checked_support_vectors(model)
    # Cheap for the support vectors alone, so with X too.
    if not posting_tables_are_cheap(support_vectors.shape[1], support_vectors.nnz):
        # Hashed features: the support vectors over the columns they use.
        columns, renumbered = unique_columns(support_vectors.indices)
        local = sp.csr_matrix((support_vectors.data, renumbered, support_vectors.indptr),
                              shape=(support_vectors.shape[0], columns.shape[0]))
        sv_rows = prepare_rows(kernel, local, name="support_vectors_",
                               kernel_name=model.kernel, n_threads=n_threads)
        hashed = (key, columns, local, sv_rows, single_block(sv_rows))
        if cache is not None and key is not None:
            cache["hashed_support_vectors"] = hashed
        return _over_support_vector_columns(model, kernel, X, n_threads, *hashed[1:])
    sv_rows = prepare_rows(kernel, support_vectors, name="support_vectors_",
                           kernel_name=model.kernel, n_threads=n_threads)
    sv_index = single_block(sv_rows)
    if cache is not None and key is not None:
        # Read only from here on: predictions in several threads share it.
        cache["support_vectors"] = (key, sv_rows, sv_index)
    return sv_rows, sv_index, X


def _over_support_vector_columns(model, kernel, X, n_threads, columns, local, sv_rows,
                                 sv_index):
    """`_support_vector_side` for hashed features: the support vectors
    (``local``, prepared as ``sv_rows`` and indexed as ``sv_index``) and X
    over only the columns either uses, numbered in order, so that every
    kernel value keeps its bits (see `used_columns_only`).

    Where X uses no column the support vectors do not (``columns``), the
    kept tables serve as they are; otherwise the support vectors' columns
    move up by X's new columns below them, and their rows are prepared and
    indexed again. A call looks up only X's distinct columns: a review
    predicting one row at a time over 2**27 columns found 30 ms a call, 25
    of them in finding the columns of all the support vectors again
    (NumPy's unique, then a binary search for every stored value), against
    0.5 ms over a 30,000-word vocabulary.
    """
    if not sp.issparse(X):
        X = dense_as_csr(X, "X")  # (dense rows over hashed columns: rare)
    # X's distinct columns and their places among the support vectors' (a
    # binary search each), then each entry's through its distinct column.
    x_columns, x_places = unique_columns(X.indices)
    at = np.searchsorted(columns, x_columns)
    known = at < columns.shape[0]
    known[known] = columns[at[known]] == x_columns[known]
    new = x_columns[~known]
    if new.size == 0:
        X = sp.csr_matrix((X.data, at.astype(np.int32)[x_places], X.indptr),
                          shape=(X.shape[0], columns.shape[0]))
        return sv_rows, sv_index, X
    merged = np.insert(columns, at[~known], new)  # disjoint, both sorted: their union
    below = np.searchsorted(new, columns).astype(np.int32)  # X's new columns below each
    moved = sp.csr_matrix((local.data, local.indices + below[local.indices], local.indptr),
                          shape=(local.shape[0], merged.shape[0]))
    # A column of X lands at its place among the old columns plus the new
    # columns below it.
    x_at = (at + np.searchsorted(new, x_columns)).astype(np.int32)
    X = sp.csr_matrix((X.data, x_at[x_places], X.indptr), shape=(X.shape[0], merged.shape[0]))
    sv_rows = prepare_rows(kernel, moved, name="support_vectors_",
                           kernel_name=model.kernel, n_threads=n_threads)
    return sv_rows, single_block(sv_rows), X


def _centred_support_vector_side(model, kernel, centre, n_threads):
    """`_support_vector_side` for a model whose rows are moved by its fitted
    centre (``rbf`` and ``ned`` on dense data): the support vectors moved,
    prepared and indexed, whether they fit unmoved (see rows_to_move), and a
    function giving the index of the unmoved ones, made when a row first
    needs it. None of it depends on X, so all of it is kept per fit: rebuilt
    at every call, one row of a 2,000-vector dense rbf model took 27 ms.
    """
    cache = getattr(model, "_prediction_cache", None)  # None: saved before kgeo kept one
    source = model.support_vectors_
    key = _cache_key(source)
    if key is None and cache is not None:  # (as in _coefficient_side)
        cache.pop("centred_support_vectors", None)
        cache.pop("unmoved_support_vectors", None)
    if cache is None or key is None:
        cache = {}  # this call's only
    kept = cache.get("centred_support_vectors")
    if kept is None or not _same_key(kept[0], key):  # none yet, or replaced
        unmoved = _checked_support_vectors(model, source)
        sv_rows = prepare_rows(kernel, centred(unmoved, centre), name="support_vectors_",
                               kernel_name=model.kernel, n_threads=n_threads)
        # (Not the unmoved rows' CSR copy: kept, it was 1.5 times the
        # support vectors' size, for the rare rows compared unmoved.)
        kept = (key, sv_rows, single_block(sv_rows), fits_unmoved(unmoved))
        del unmoved
        cache["centred_support_vectors"] = kept
    _, sv_rows, sv_index, unmoved_fit = kept

    def unmoved_index():
        # Keyed by the entry of the moved rows, read and stored in one dict
        # operation each: threads predicting at once (a review found a
        # window where one thread's pop of a stale entry fell between
        # another's membership test and its lookup) each get an index of
        # this fit's rows, never a KeyError or a previous fit's.
        entry = cache.get("unmoved_support_vectors")
        if entry is None or entry[0] is not kept:
            entry = (kept, single_block(prepare_rows(
                kernel, _checked_support_vectors(model, source), name="support_vectors_",
                kernel_name=model.kernel, n_threads=n_threads)))
            cache["unmoved_support_vectors"] = entry
        return entry[1]

    return sv_rows, sv_index, unmoved_fit, unmoved_index


def _warn_of_empty_documents(empty, kernel_name):
    """Say so where rows of X to predict have no word (``empty``, a mask of
    X's rows): the intercepts alone decide them, which a vectoriser's
    setting or an unseen vocabulary can cause unnoticed (a typed sentence
    read as all header by RainbowVectorizer's skip_header: every one
    predicted as the same class)."""
    n_rows = empty.shape[0]
    empty = np.flatnonzero(empty)
    if empty.size == 0:
        return
    warnings.warn(
        f"{empty.size} of the {n_rows} document(s) to predict have no word (all-zero "
        f"rows {listed_rows(empty)}): no point on the simplex for the multinomial kernel "
        f"{kernel_name!r}, so the intercepts alone decide them (filter "
        f"kgeo.EmptyDocumentWarning where expected)",
        EmptyDocumentWarning, stacklevel=_callers_stacklevel())


def _row_sums(model, X, n_threads):
    """Prediction's inputs for a kernel on rows: X checked (CSR, or a dense
    float64 array that each chunk converts, see `_csr_rows`; on the simplex
    where the kernel needs it), the number of support vectors, and the
    function giving a chunk of rows' decision shares."""
    if sp.issparse(X):
        X, n_negative, row_nnz = check_matrix(X, name="X"), None, None
    else:
        X, n_negative, row_nnz = check_dense_rows(X, name="X")
    check_n_features(X, estimator="SVM", n_features=model.n_features_in_)
    kernel = get_kernel(model.kernel, model.n_features_in_, model.shift,
                        **model._kernel_args)
    empty = None
    if kernel.on_simplex:
        # On all of X first, so that a message names the row of X, not of a
        # chunk. Rows without a word are predicted (see below).
        check_on_simplex(X, name="X", kernel=model.kernel, empty_rows="allow",
                         n_negative=n_negative)
        empty = np.diff(X.indptr) == 0 if row_nnz is None else row_nnz == 0
        _warn_of_empty_documents(empty, model.kernel)
    if kernel.half_space:
        # On all of X, so that a message names the row of X, not of a chunk.
        spherical_normal_sigmas(X, name="X")
    # Models saved before the centring have none. Each row is moved by
    # the fitted centre or not by itself alone (see weighted_sums), not
    # by the rows predicted with it: its votes must not depend on them.
    centre = getattr(model, "_centre", None)
    if centre is None:
        sv_rows, sv_index, X = _support_vector_side(model, kernel, X, n_threads)
    else:  # (centred rows are dense: few columns)
        sv_rows, sv_index, unmoved_svs_fit, unmoved_index = _centred_support_vector_side(
            model, kernel, centre, n_threads)

    def weighted_sums(rows_of_X, sv_start, coef_t):
        """The shares and largest |k| of rows of X, each row moved by the
        centre with the support vectors, or, where that is not exact,
        both as given: a route chosen by the row alone."""
        if centre is None:
            prepared = prepare_rows(kernel, _csr_rows(X, rows_of_X, row_nnz), name="X",
                                    kernel_name=model.kernel, n_threads=n_threads)
            return kernel_weighted_sums(kernel, prepared, sv_index, sv_start, coef_t,
                                        n_threads)
        chunk_of_X = _csr_rows(X, rows_of_X, row_nnz)
        move = rows_to_move(chunk_of_X, centre, unmoved_svs_fit)
        share = np.empty((chunk_of_X.shape[0], sv_start.shape[0] - 1, coef_t.shape[1]))
        K_max = np.empty(chunk_of_X.shape[0])
        for part, moved in ((move, True), (~move, False)):
            if not part.any():
                continue
            index = sv_index if moved else unmoved_index()
            rows = chunk_of_X if part.all() else chunk_of_X[part]  # (indexing copies)
            prepared = prepare_rows(kernel, centred(rows, centre if moved else None),
                                    name="X", kernel_name=model.kernel,
                                    n_threads=n_threads)
            share[part], K_max[part] = kernel_weighted_sums(
                kernel, prepared, index, sv_start, coef_t, n_threads)
        return share, K_max

    if empty is None or not empty.any():
        return X, sv_rows.n_rows, weighted_sums
    # A document without a word has no point on the simplex. Taken as the
    # formulas read a zero vector (sum_i sqrt(p_i q_i) = 0, arccos 0 = pi/2:
    # every geodesic distance pi, as the SciPy route and libsvm compute it), it is at the
    # same kernel value c from every support vector, and a pair's decision
    # value is c sum_i alpha_i y_i + b* = b* exactly: no information, so
    # the intercepts decide. Its shares are 0, so that the value is b* to
    # the bit, not b* plus the rounding of c times a sum that is 0.
    words_of = weighted_sums

    def weighted_sums(rows_of_X, sv_start, coef_t):
        has_words = ~empty[rows_of_X]
        share = np.zeros((has_words.shape[0], sv_start.shape[0] - 1, coef_t.shape[1]))
        K_max = np.zeros(has_words.shape[0])
        if has_words.any():  # rows_of_X: a slice (see _decision_chunks)
            rows = rows_of_X.start + np.flatnonzero(has_words)
            share[has_words], K_max[has_words] = words_of(rows, sv_start, coef_t)
        return share, K_max

    return X, sv_rows.n_rows, weighted_sums


def _csr_rows(X, rows, row_nnz=None):
    """Rows of X (a slice or indices) as a canonical CSR matrix: X's own
    if X is one, else its dense rows converted (their nonzeros counted in
    ``row_nnz``, where given), the same arrays as converted whole
    (``check_matrix``), so the same decision values."""
    if sp.issparse(X):
        return X[rows]
    return dense_as_csr(X[rows], "X", None if row_nnz is None else row_nnz[rows].sum())


def _kernel_matrix_sums(model, X, n_threads):
    """``_row_sums`` for kernel="precomputed": X is K(X, X_train), of which
    prediction reads the columns of the support vectors (plus the shift)."""
    n_train = model.n_features_in_  # the training samples, a column each
    support = np.asarray(model.support_)
    if (support.ndim != 1 or support.dtype.kind not in "iu"
            or (support.size and not (0 <= support.min() and support.max() < n_train))):
        raise ValueError(
            f"this SVM's fitted attributes are damaged: support_ must index the "
            f"{n_train} training samples of its kernel matrix, got "
            f"{support.tolist() if support.size <= 10 else support}; fit it again")
    X, _ = check_kernel_matrix(X, name="X", n_columns=n_train, n_threads=n_threads)
    shift = float(model.shift)

    def weighted_sums(rows_of_X, sv_start, coef_t):
        values = np.take(X[rows_of_X], support, axis=1)
        if shift != 0.0:
            values += shift  # k + shift, as the solver read it
        return weighted_sums_of_values(values, sv_start, coef_t, n_threads)

    return X, support.shape[0], weighted_sums


def _callable_kernel_sums(model, X, n_threads):
    """``_row_sums`` for a callable kernel: its matrix against the support
    vectors, computed a chunk of rows of X at a time (plus the shift)."""
    support_vectors = model.support_vectors_
    # As the fit gave them: rows of numbers, or samples as given.
    X, numbers = check_kernel_samples(X, name="X",
                                      numbers=getattr(model, "_kernel_reads_numbers", True))
    if numbers:
        check_n_features(X, estimator="SVM", n_features=model.n_features_in_)
    shift = float(model.shift)

    def weighted_sums(rows_of_X, sv_start, coef_t):
        values, _ = _callable_kernel_matrix(model.kernel, X[rows_of_X], support_vectors,
                                            n_threads=n_threads, training=False)
        if shift != 0.0:
            # k + shift, as the solver read it, into a new array: the checked
            # matrix can be the function's own memory (a cached array, or a
            # view of one through np.matrix or a read-only memmap).
            values = values + shift
        return weighted_sums_of_values(values, sv_start, coef_t, n_threads)

    return X, _n_samples(support_vectors), weighted_sums


def _check_fitted_arrays(model, n_sv):
    """classes_, n_support_, dual_coef_ and intercept_ of a fitted model as
    arrays (int64 counts, float64 values) of the shapes its n_sv support
    vectors and its classes imply: a model edited by hand (or saved
    half-written) gets a message naming the attribute, not an index error
    from deep inside."""
    classes = np.asarray(model.classes_)
    if classes.ndim != 1 or classes.shape[0] < 2:
        raise ValueError(
            f"this SVM's fitted attributes are damaged: classes_ must be a 1-D array of at "
            f"least 2 classes, got shape {classes.shape}; fit it again")
    n_classes = classes.shape[0]
    n_pairs = n_classes * (n_classes - 1) // 2
    n_support = np.asarray(model.n_support_)
    dual_coef = np.asarray(model.dual_coef_, dtype=np.float64)
    intercept = np.ascontiguousarray(model.intercept_, dtype=np.float64)
    for name, value, shape in (
            ("n_support_", n_support, (n_classes,)),
            ("dual_coef_", dual_coef, (n_classes - 1, n_sv)),
            ("intercept_", intercept, (n_pairs,))):
        if value.shape != shape:
            raise ValueError(
                f"this SVM's fitted attributes disagree: {name} has shape {value.shape}, "
                f"but {n_classes} classes and {n_sv} support vectors need {shape}; fit it "
                f"again")
    counts = n_support.dtype.kind in "iu" or (
        n_support.dtype.kind == "f" and np.all(np.isfinite(n_support))
        and np.all(n_support == np.round(n_support)))
    if not counts or np.any(n_support < 0):
        raise ValueError(
            f"this SVM's fitted attributes are damaged: n_support_ must hold non-negative "
            f"integer counts, got {n_support.tolist()}; fit it again")
    if int(n_support.sum()) != n_sv:
        raise ValueError(
            f"this SVM's fitted attributes disagree: n_support_ {n_support.tolist()} sums "
            f"to {int(n_support.sum())}, but there are {n_sv} support vectors; fit it again")
    return n_classes, n_support.astype(np.int64), dual_coef, intercept


def _coefficient_side(model, n_support, dual_coef):
    """What prediction derives from the dual coefficients (``dual_coef``,
    ``dual_coef_`` as checked) alone: where each class's support vectors
    start, the coefficients transposed (in libsvm's orientation) and each
    pair's sum of their magnitudes, which bounds its decision values'
    rounding.

    Kept in the model's prediction cache while ``dual_coef_`` is the fit's
    read-only array (`_cache_key`; ``n_support_`` is compared by value):
    derived at every call, they took 276 us of the 700 us a 20-class 20
    Newsgroups model spent predicting one row.
    """
    cache = getattr(model, "_prediction_cache", None)  # None: saved before kgeo kept one
    key = _cache_key(model.dual_coef_)
    if key is None and cache is not None:
        # (Frozen again later, the array would match an entry of its
        # values before.)
        cache.pop("coefficients", None)
    kept = cache.get("coefficients") if cache is not None else None
    if kept is not None and _same_key(kept[0], key) and np.array_equal(kept[1], n_support):
        return kept[2:]
    n_classes = n_support.shape[0]
    sv_start = np.concatenate([[0], np.cumsum(n_support)]).astype(np.int64)
    if n_classes == 2:
        dual_coef = -dual_coef
    # Column r of dual_coef_ over class c's SVs holds their coefficients in
    # the pair of c with the r-th other class: weighing each class segment
    # by them gives every pair's share of that class (n_classes - 1 sums),
    # against n_pairs of a dense coefficient matrix.
    coef_t = np.ascontiguousarray(dual_coef.T)
    # C order: NumPy sums a row of a Fortran-ordered array one value after
    # another instead of pairwise, which would move the rounding bound by
    # an ulp with the layout of a loaded model.
    dual_coef = np.ascontiguousarray(dual_coef)
    first, second = np.triu_indices(n_classes, 1)  # the pairs in libsvm's order
    # sum|coef| of class c's SVs in column r, a class at a time (the same
    # sums as one segment at a time, in n_classes NumPy calls, not n_pairs).
    abs_coef_sums = np.empty((n_classes - 1, n_classes))
    for c in range(n_classes):
        abs_coef_sums[:, c] = np.abs(dual_coef[:, sv_start[c]:sv_start[c + 1]]).sum(axis=1)
    coef_sum = abs_coef_sums[second - 1, first] + abs_coef_sums[first, second]
    for array in (sv_start, coef_t, coef_sum):
        # Read only from here on: predictions in several threads share them.
        array.flags.writeable = False
    if cache is not None and key is not None:
        cache["coefficients"] = (key, n_support.copy(), sv_start, coef_t, coef_sum)
    return sv_start, coef_t, coef_sum


def _check_kernel_unchanged(model):
    """The coefficients solve the SVM of the fitted kernel: with another
    kernel, shift or kernel parameter set since (set_params), they would
    weigh values of a kernel they were never fitted to, silently."""
    fitted = getattr(model, "_fitted_kernel", None)  # None: saved before kgeo kept it
    for name, value in (fitted or {}).items():
        now = getattr(model, name)
        if not _same_value(now, value):
            raise ValueError(
                f"{name}={now!r}, but this SVM was fitted with {name}={value!r}: its "
                f"coefficients belong to the kernel it was fitted with; fit it again "
                f"after changing {name}")
