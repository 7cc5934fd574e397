"""Kernel matrices between sets of documents, and checks of definiteness."""

import numbers
import os

import numpy as np
import scipy.sparse as sp

from ._kernels import (
    _PARALLEL_MIN_VALUES,
    PostingIndex,
    RowSet,
    divide_rows_by_max,
    get_kernel,
    kernel_matrix,
    sqrt_of_row_shares,
)
from ._validation import check_matrix, check_on_simplex

__all__ = [
    "pairwise_kernels",
    "geodesic_distance",
    "is_positive_definite",
    "is_conditionally_positive_definite",
]


def available_threads():
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def resolve_n_jobs(n_jobs):
    """Number of threads for ``n_jobs`` (None or -1: all available CPUs)."""
    if n_jobs is None or n_jobs == -1:
        return available_threads()
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs < 1:
        raise ValueError(f"Invalid n_jobs {n_jobs!r}, must be None, -1 or an integer >= 1")
    return int(n_jobs)


def prepare_rows(kernel, X, *, name="X", kernel_name="", n_threads=1):
    """Turn a checked CSR matrix into the rows a kernel reads.

    The manifold kernels get ``sqrt(x / sum(x))``, after checking that every
    row is non-negative with positive mass; the others get the rows as given.
    ``n_threads`` threads share the element-wise passes (the result does not
    depend on it).
    """
    indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
    if kernel.on_simplex and X.shape[0] > 0:
        check_on_simplex(X, name=name, kernel=kernel_name)
        if X.nnz < _PARALLEL_MIN_VALUES:
            n_threads = 1  # see kernel_matrix: idle OpenMP workers spin
        # Dividing by the row maximum first keeps the sum finite for rows of
        # huge (finite) values; p is unchanged in exact arithmetic. The sums
        # are NumPy's (its reduceat has its own order of additions), the
        # element-wise passes compiled: NumPy's route through np.repeat
        # spent 40-60 ms of a first 20 Newsgroups fit faulting in temporaries.
        data = divide_rows_by_max(X.data, indptr, n_threads)
        sqrt_of_row_shares(data, indptr, np.add.reduceat(data, indptr[:-1]), n_threads)
    else:
        data = X.data
    rows = RowSet(data, X.indices, indptr, X.shape[1])
    if not kernel.on_simplex and rows.n_rows > 0:
        # |x|^2 + |x'|^2 + 2 |<x, x'>| must stay finite for every kernel
        # formula (distances, dot products) to be computed without overflow.
        largest = float(np.max(rows.squared_norms))
        if not largest <= np.finfo(np.float64).max / 4:
            raise ValueError(
                f"kernel {kernel_name!r} overflows float64 on {name}: a row's squared "
                f"L2 norm is {largest:.3g}, above the {np.finfo(np.float64).max / 4:.3g} "
                f"the kernel formulas can carry; scale {name} down")
    return rows


def single_block(rows):
    """Posting lists of all of ``rows`` as one block."""
    return PostingIndex(rows, np.array([0, rows.n_rows]))


def pairwise_kernels(X, Y=None, kernel="ngd", *, shift=0.0, n_jobs=None, **params):
    """Kernel matrix between the rows of X and the rows of Y.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples_X, n_features)
        Documents as rows. The manifold kernels (``ngd``, ``ngd+pi``,
        ``ngd_exp``, ``bhattacharyya``, ``diffusion``) L1-normalise each row
        themselves, so counts or TF-IDF weights may be passed directly.
    Y : array-like or sparse matrix of shape (n_samples_Y, n_features), default=None
        If None, ``Y = X``.
    kernel : str, default="ngd"
        A name from ``kgeo.KERNELS``.
    shift : float, default=0.0
        Constant added to every value.
    n_jobs : int, default=None
        Threads; None or -1 uses every available CPU. The result does not
        depend on it.
    **params
        Kernel parameters: ``gamma``, ``coef0``, ``degree`` (``poly``,
        ``rbf``, ``sigmoid``; ``gamma=None`` means ``1 / n_features``),
        ``t`` and ``normalize`` (``ngd_exp``, ``diffusion``).

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
    """
    n_threads = resolve_n_jobs(n_jobs)
    X = check_matrix(X, name="X")
    k = get_kernel(kernel, X.shape[1], shift, **params)
    rows_x = prepare_rows(k, X, name="X", kernel_name=kernel, n_threads=n_threads)
    if Y is None:
        rows_y = rows_x
    else:
        Y = check_matrix(Y, name="Y")
        if Y.shape[1] != X.shape[1]:
            raise ValueError(
                f"X and Y must have the same number of features: X has "
                f"{X.shape[1]}, Y has {Y.shape[1]}")
        rows_y = prepare_rows(k, Y, name="Y", kernel_name=kernel, n_threads=n_threads)
    return kernel_matrix(k, rows_x, single_block(rows_y), n_threads)


def geodesic_distance(X, Y=None, *, n_jobs=None):
    """Fisher geodesic distance between rows mapped to the multinomial simplex.

    ``d(p, q) = 2 arccos(sum_i sqrt(p_i q_i))`` with ``p = x / sum(x)``; it
    lies in ``[0, pi]`` and equals ``pi`` for documents sharing no word.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples_X, n_features)
        Non-negative rows with positive sums (counts or weights).
    Y : array-like or sparse matrix of shape (n_samples_Y, n_features), default=None
    n_jobs : int, default=None

    Returns
    -------
    D : ndarray of shape (n_samples_X, n_samples_Y)
    """
    # NGD is -d, with close pairs computed from the rows' difference (exact
    # 0 on the diagonal and for duplicates), not by arccos of a rounded sum.
    D = pairwise_kernels(X, Y, kernel="ngd", n_jobs=n_jobs)
    np.negative(D, out=D)
    D += 0.0  # -(0.0) is -0.0: a distance is +0.0
    return D


def _check_square(K):
    if sp.issparse(K):
        K = K.toarray()
    K = np.asarray(K)
    if np.iscomplexobj(K):
        raise ValueError(f"K must be a real matrix, got dtype {K.dtype}")
    if K.dtype.kind not in "biuf":
        raise TypeError(f"K must hold real numbers, got dtype {K.dtype}")
    K = K.astype(np.float64, copy=False)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0:
        raise ValueError(f"K must be a non-empty square matrix, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("K contains NaN or infinity")
    scale = max(1.0, float(np.max(np.abs(K))))
    asym = float(np.max(np.abs(K - K.T)))
    if asym > 1e-10 * scale:
        raise ValueError(f"K must be symmetric; max |K - K.T| = {asym:.3g}")
    return (K + K.T) / 2


def _check_tol(tol):
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real):
        raise TypeError(f"tol must be a real number, got {tol!r} ({type(tol).__name__})")
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be finite and >= 0, got {tol!r}")


def _passes(eigenvalues, tol):
    scale = max(1.0, float(np.max(np.abs(eigenvalues))))
    return bool(eigenvalues[0] >= -tol * scale)


def is_positive_definite(K, tol=1e-8):
    """Whether a symmetric matrix is positive semi-definite.

    Parameters
    ----------
    K : array-like or sparse matrix of shape (n, n)
        Symmetric (to 1e-10 relative), real.
    tol : float, default=1e-8
        The smallest eigenvalue may be as low as ``-tol * max(1, max|eig|)``,
        for rounding.

    Returns
    -------
    bool
    """
    _check_tol(tol)
    K = _check_square(K)
    return _passes(np.linalg.eigvalsh(K), tol)


def is_conditionally_positive_definite(K, tol=1e-8):
    """Whether ``c' K c >= 0`` for every ``c`` with ``sum(c) = 0``.

    That is, ``P K P`` is positive semi-definite, with ``P = I - 11'/n`` the
    projector onto the complement of the constant vector.

    Parameters
    ----------
    K : array-like or sparse matrix of shape (n, n)
    tol : float, default=1e-8
        As for :func:`is_positive_definite`.

    Returns
    -------
    bool
    """
    _check_tol(tol)
    K = _check_square(K)
    # P K P without forming P: subtract row and column means, add the grand mean.
    row_mean = K.mean(axis=1, keepdims=True)
    centred = K - row_mean - row_mean.T + K.mean()
    return _passes(np.linalg.eigvalsh((centred + centred.T) / 2), tol)
