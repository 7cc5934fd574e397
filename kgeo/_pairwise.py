"""Kernel matrices between sets of documents, and checks of definiteness."""

import math
import numbers
import os
import re
import threading
import time
import warnings

import numpy as np
import scipy.sparse as sp

from ._kernels import (
    PostingIndex,
    RowSet,
    _row_sq_norms,
    centred_rows,
    divide_rows_by_max,
    get_kernel,
    kernel_matrix,
    sqrt_of_row_shares,
)
from ._validation import (as_float64, as_rectangular, check_matrix, check_on_simplex,
                          check_positive, objects_as_float64, row_slices, sparse_as_float64_csr,
                          spherical_normal_sigmas)
from .exceptions import parameter_errors

__all__ = [
    "pairwise_kernels",
    "geodesic_distance",
    "is_positive_definite",
    "is_conditionally_positive_definite",
]


def available_threads():
    """CPUs this process may run on: its affinity mask, capped by a cgroup
    CPU quota (a container given 2 CPUs' worth of time on a 64-core host
    would otherwise start 64 threads that take turns)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    quota = _recent_cgroup_cpu_quota()
    return max(1, min(cpus, quota)) if quota is not None else cpus


# The cgroup quota as last read, and when (time.monotonic). Reading it walks
# a few files, 57 us a time: a fit asks for its threads five times, which was
# a quarter of a 20-sample fit's 1.3 ms. A quota changed while kgeo runs is
# seen within _QUOTA_FRESH_SECONDS.
_QUOTA_READ = [None, -math.inf]
_QUOTA_FRESH_SECONDS = 1.0


def _recent_cgroup_cpu_quota():
    now = time.monotonic()
    quota, read_at = _QUOTA_READ
    if now - read_at >= _QUOTA_FRESH_SECONDS:
        quota = cgroup_cpu_quota()
        _QUOTA_READ[:] = [quota, now]
    return quota


def cgroup_cpu_quota(root="/sys/fs/cgroup", proc_cgroup="/proc/self/cgroup"):
    """CPUs' worth of time this process's cgroups grant (rounded up), or None
    when no quota applies (or this is not Linux).

    The smallest quota on the process's cgroup and its ancestors, from
    cgroup v2's ``cpu.max`` or cgroup v1's ``cpu.cfs_quota_us`` and
    ``cpu.cfs_period_us``; ``root`` is where the hierarchies are mounted.
    """
    try:
        with open(proc_cgroup) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    limits = []
    for line in lines:
        fields = line.split(":", 2)
        if len(fields) != 3 or not fields[2].startswith("/"):
            continue
        _, controllers, path = fields
        if controllers == "":  # v2: one unified hierarchy
            base, read = root, _cgroup2_limit
        elif "cpu" in controllers.split(","):  # v1: the cpu controller's hierarchy
            base, read = os.path.join(root, controllers), _cgroup1_limit
            if not os.path.isdir(base):  # mounted as cpu,cpuacct, linked as cpu
                base = os.path.join(root, "cpu")
        else:
            continue
        parts = [part for part in path.split("/") if part]
        for depth in range(len(parts), -1, -1):
            limit = read(os.path.join(base, *parts[:depth]))
            if limit is not None:
                limits.append(limit)
    return min(limits) if limits else None


def _ceil_ratio(quota, period):
    try:
        quota, period = int(quota), int(period)
    except ValueError:
        return None
    return -(-quota // period) if quota > 0 and period > 0 else None


def _cgroup2_limit(folder):
    """``cpu.max``: "quota period", or "max period" for no limit."""
    try:
        with open(os.path.join(folder, "cpu.max")) as f:
            fields = f.read().split()
    except OSError:
        return None
    return _ceil_ratio(*fields) if len(fields) == 2 and fields[0] != "max" else None


def _cgroup1_limit(folder):
    """``cpu.cfs_quota_us`` (-1: no limit) over ``cpu.cfs_period_us``."""
    try:
        with open(os.path.join(folder, "cpu.cfs_quota_us")) as f:
            quota = f.read().strip()
        with open(os.path.join(folder, "cpu.cfs_period_us")) as f:
            period = f.read().strip()
    except OSError:
        return None
    return _ceil_ratio(quota, period)


_LONG_MAX = 2 ** 63 - 1

# OMP_NUM_THREADS values already warned about: once per process each, as an
# OpenMP runtime reads the variable once.
_WARNED_OMP_VALUES = set()


def omp_num_threads():
    """The first number of ``OMP_NUM_THREADS`` (the outermost level), or None
    when it is unset. A value libgomp rejects (anything but a comma-separated
    list of decimal integers from 1 to 2**63 - 1, each maybe with a "+" and
    blanks around it) is ignored with a warning, as libgomp ignores it."""
    value = os.environ.get("OMP_NUM_THREADS")
    if value is None:
        return None
    # C's isspace, not str.strip's wider Unicode notion; strtoul's range,
    # which libgomp then reads as a long (> 0).
    entries = [entry.strip(" \t\n\v\f\r") for entry in value.split(",")]
    if all(re.fullmatch(r"\+?[0-9]+", entry, flags=re.ASCII)
           and 1 <= int(entry) <= _LONG_MAX for entry in entries):
        return int(entries[0])
    if value not in _WARNED_OMP_VALUES:
        _WARNED_OMP_VALUES.add(value)
        warnings.warn(f"OMP_NUM_THREADS={value!r} is not a positive integer (or a "
                      f"comma-separated list of them); ignored, using every available CPU",
                      RuntimeWarning, stacklevel=2)
    return None


# Threads per available CPU that n_jobs may ask for: more only share the same
# cores, and OpenMP aborts the process when it cannot create the threads
# (n_jobs=50_000 did; 100_000 crashed it).
_THREADS_PER_CPU = 4


@parameter_errors()
def resolve_n_jobs(n_jobs):
    """Number of threads for ``n_jobs``.

    None: ``OMP_NUM_THREADS`` when it is set (as any OpenMP program would
    read it), else every available CPU; -1: every available CPU; below -1,
    as joblib and scikit-learn read it, ``n_cpus + 1 + n_jobs`` (-2: all
    CPUs but one), at least 1. Larger values are capped at
    ``_THREADS_PER_CPU`` times the CPUs available.
    """
    if n_jobs is None:
        requested = omp_num_threads()
        if requested is None:
            return available_threads()
        return int(min(requested, _THREADS_PER_CPU * available_threads()))
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"Invalid n_jobs {n_jobs!r}, must be None or a nonzero integer "
                         f"(-1: every CPU, -2: all CPUs but one, ...)")
    if n_jobs < 0:
        # Python ints: -10**30 does not wrap.
        return int(max(1, available_threads() + 1 + int(n_jobs)))
    return int(min(n_jobs, _THREADS_PER_CPU * available_threads()))


# Kernels of x - y alone: moving every row by the same vector changes no value.
_TRANSLATION_INVARIANT = ("ned", "rbf")
# Share of nonzero entries from which a matrix is centred (see translation_centre).
_CENTRE_FROM_DENSITY = 0.5


def translation_centre(kernel_name, X):
    """The centre to subtract from X (and from any rows compared with it)
    before ``ned`` or ``rbf``, or None.

    Rows far from the origin make ``|x|^2 + |y|^2 - 2 <x, y>`` cancel for
    every pair, and every pair then takes the exact route of close pairs (a
    merge of the two rows: 8-12x slower on 2,000 dense rows of 50 features
    around 300). Centring removes the offset and changes no value in exact
    arithmetic. It is done where X is mostly nonzero anyway (for sparse X it
    would fill in the zeros), by X's column means rounded to 26 significant
    bits, and only in the columns whose every entry then subtracts exactly
    (the others keep 0): a rounded subtraction would move rows by a little
    more or less than the centre, and two rows closer than that rounding
    would lose their distance (one outlier row at 1e9 made the centre 3e8 and
    the distance of two rows 1e-6 apart 1.3 % wrong).
    """
    if (kernel_name not in _TRANSLATION_INVARIANT or X.shape[0] == 0
            or X.nnz < _CENTRE_FROM_DENSITY * X.shape[0] * X.shape[1]):
        return None
    # SciPy's X.mean, each entry times 1/n summed row after row, without
    # the scaled copy of X it makes first. (Not X.sum() / n: a column near
    # float64's largest value summed to inf where its mean is finite, and
    # means on a tie of the 26-bit rounding below took the other side.)
    mantissa, exponent = np.frexp(X.T @ np.full(X.shape[0], 1.0 / X.shape[0]))
    centre = np.ldexp(np.round(np.ldexp(mantissa, 26)), exponent - 26)
    # A slice of rows dense at a time (the whole of X dense and the
    # temporaries of its differences took 5 times X's size: 380 MB above a
    # fit of 10,000 x 1,000 dense rows).
    exact = np.ones(X.shape[1], dtype=bool)
    for rows in row_slices(*X.shape):
        exact &= _subtracts_exactly(rows_of(X, rows).toarray(), centre)
    centre[~exact] = 0.0
    if not np.any(centre):
        return None  # nothing to move
    # Every entry now subtracts exactly (its column's centre is 0, or every
    # entry of the column subtracts exactly): what rows_movable would
    # check again, but the squared norms.
    largest = 0.0
    for rows in row_slices(*X.shape):
        moved = rows_of(X, rows).toarray()
        moved -= centre
        with np.errstate(over="ignore", invalid="ignore"):
            squared = np.einsum("ij,ij->i", moved, moved)
        if not np.all(squared <= np.finfo(np.float64).max / 4):
            return None  # a moved row beyond what float64 carries
        largest = max(largest, float(np.max(squared)))
    if largest < np.finfo(np.float64).tiny:
        return None  # rows moved next to 0, where their squares underflow: gains nothing
    return centre


def rows_of(X, rows):
    """The rows ``rows`` (a slice of step 1) of the CSR X, as a CSR matrix
    on views of X's arrays: SciPy's ``X[rows]`` copies them (twice the
    centring's time, its slices of rows taken twice)."""
    start, stop = X.indptr[rows.start], X.indptr[rows.stop]
    return sp.csr_matrix((X.data[start:stop], X.indices[start:stop],
                          X.indptr[rows.start:rows.stop + 1] - start),
                         shape=(rows.stop - rows.start, X.shape[1]), copy=False)


def rows_to_move(M, centre, unmoved_fits):
    """Per row of the CSR M, whether it is moved by ``centre`` (True) or
    compared as given, with the rows it meets as given too (False). A row's
    route depends on the row alone, so its values do not depend on the rows
    beside it. Moved: rows mostly nonzero that move exactly and stay in
    range (``rows_movable``); the others (sparse rows, which moving would
    fill in, and rows moving would round) go as given, unless the rows they
    meet cannot be taken as given (``unmoved_fits`` False: their squares
    leave float64 unmoved), where every row is moved, as exactly as it can."""
    move = np.ones(M.shape[0], dtype=bool)
    if not unmoved_fits:
        return move
    move = np.diff(M.indptr) >= _CENTRE_FROM_DENSITY * M.shape[1]
    dense_rows = np.flatnonzero(move)
    for part in row_slices(dense_rows.shape[0], M.shape[1]):  # a slice dense at a time
        move[dense_rows[part]] = rows_movable(M[dense_rows[part]].toarray(), centre)
    return move


def fits_unmoved(M):
    """Whether every row of the CSR M has a squared norm the kernels carry
    (max / 4) as it is: each summed as ``RowSet`` sums it, which
    ``prepare_rows`` checks (and without a temporary of M's size)."""
    squared = _row_sq_norms(M.data, M.indptr.astype(np.int64))
    return float(np.max(squared, initial=0.0)) <= np.finfo(np.float64).max / 4


def rows_movable(dense, centre):
    """Per row of ``dense``, whether moving it by ``centre`` is exact and
    keeps its squared norm within what the kernels carry (max / 4). A row
    that is not is compared unmoved, against unmoved rows: a route chosen by
    the row alone, so its values do not depend on the rows beside it."""
    moved, exact = _exact_differences(dense, centre)
    with np.errstate(over="ignore", invalid="ignore"):
        squared = np.einsum("ij,ij->i", moved, moved)
    return np.all(exact, axis=1) & (squared <= np.finfo(np.float64).max / 4)


def _subtracts_exactly(dense, centre):
    """Per column, whether every ``dense[i, j] - centre[j]`` is exact."""
    return np.all(_exact_differences(dense, centre)[1], axis=0)


def _exact_differences(dense, centre):
    """``dense - centre``, and where it is exact in float64 (and finite):
    its rounding error, by Knuth's TwoSum, is zero."""
    with np.errstate(over="ignore", invalid="ignore"):
        minus = -centre
        moved = dense + minus
        z = moved - dense
        error = (dense - (moved - z)) + (minus - z)
    return moved, np.isfinite(moved) & (error == 0.0)


def centred(X, centre, rows=None):
    """The CSR X, or its rows ``rows`` in that order, moved by ``-centre``
    (as they are, for None): the arrays SciPy's ``csr_matrix`` of the dense
    rows moved would hold, built by two compiled passes (``centred_rows``)
    without a dense copy."""
    if centre is None:
        return X if rows is None else X[rows]
    if not X.has_canonical_format:  # (the passes merge each row's sorted columns)
        X = X.copy()
        X.sum_duplicates()
    rows = (np.arange(X.shape[0], dtype=np.int64) if rows is None
            else np.ascontiguousarray(rows, dtype=np.int64))
    centre = np.ascontiguousarray(centre, dtype=np.float64)
    if centre.shape != (X.shape[1],):
        raise ValueError(f"centre must hold one value per column of X ({X.shape[1]}), got "
                         f"shape {centre.shape}")
    # (The row pointers copied: the passes read within them whatever else
    # changes meanwhile.)
    arrays = (X.data, X.indices, X.indptr.astype(np.int64), rows, centre)
    indptr = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    centred_rows(*arrays, indptr)
    np.cumsum(indptr, out=indptr)
    nnz = int(indptr[-1])
    if nnz > np.iinfo(np.int32).max or X.shape[1] > np.iinfo(np.int32).max:
        raise ValueError(
            f"X moved by its centre has {nnz} nonzeros and {X.shape[1]} features; kgeo "
            f"indexes columns with int32 and needs both below 2**31")
    data = np.empty(nnz, dtype=np.float64)
    indices = np.empty(nnz, dtype=np.int32)
    centred_rows(*arrays, indptr, data, indices)
    moved = sp.csr_matrix((data, indices, indptr.astype(np.int32)),
                          shape=(rows.shape[0], X.shape[1]), copy=False)
    moved.has_canonical_format = True  # sorted, no duplicates
    return moved


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
        # Dividing by the row maximum first keeps the sum finite for rows of
        # huge (finite) values; p is unchanged in exact arithmetic. The sums
        # are NumPy's (its reduceat has its own order of additions), the
        # element-wise passes compiled: NumPy's route through np.repeat
        # spent 40-60 ms of a first 20 Newsgroups fit faulting in temporaries.
        data = divide_rows_by_max(X.data, indptr, n_threads)
        sqrt_of_row_shares(data, indptr, np.add.reduceat(data, indptr[:-1]), X.data,
                           n_threads)
    elif kernel.half_space and X.shape[0] > 0:
        X = poincare_rows(X, kernel.dimension, kernel_name=kernel_name, name=name)
        data, indptr = X.data, np.ascontiguousarray(X.indptr, dtype=np.int64)
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


# A row's 1 - |p|^2 in the Poincare ball, as summed from its stored values,
# must agree with the exact 4 sigma / D to this relative error (see below).
_BALL_TOLERANCE = 1e-8


def poincare_rows(X, dimension, *, kernel_name="hyperbolic", name="X"):
    """Spherical normals (mu, sigma) as points of the Poincare ball.

    ``dimension`` is n, the columns of the rows as given (X may hold only
    the columns some rows use, see `used_columns_only`: sigma, stored in
    every row, stays last). With c = 2 (n - 1), the Fisher metric of
    N(mu, sigma^2 I) is c times unit-curvature hyperbolic space in the
    upper half-space coordinates
    (u, y) = (mu / sqrt(c), sigma); the ball point about (0, 1) is
    ``p = (2 u, |u|^2 + y^2 - 1) / (|u|^2 + (1 + y)^2)``. A row keeps its
    zeros in mu (the last column is always stored). In the ball, rounding
    moves a point by about 1e-16 of its distance from (0, 1) in cosh: a
    row whose ``1 - |p|^2`` (exactly 4 y / (|u|^2 + (1 + y)^2)) the stored
    values no longer carry to 1e-8 is refused, with the remedy: moving every
    row by the same isometry (mu - m) / s, sigma / s changes no kernel value.
    """
    sigma = spherical_normal_sigmas(X, name=name, columns=dimension)
    scale = math.sqrt(2.0 * (dimension - 1))
    X = sp.csr_matrix(X, copy=True)
    X.sort_indices()
    counts = np.diff(X.indptr)
    last = X.indptr[1:] - 1  # every row stores sigma last
    u = X.data / scale
    u[last] = 0.0
    # Rows beyond float64 here (sigma or |mu| near 1e154) come out NaN or
    # inf and are refused below with the others too far away.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        sq_u = np.add.reduceat(u * u, X.indptr[:-1]) if X.nnz else np.zeros(0)
        sq_u[counts == 0] = 0.0
        denominator = sq_u + (1.0 + sigma) ** 2
        data = 2.0 * u / np.repeat(denominator, counts)
        data[last] = (sq_u + (sigma - 1.0) * (sigma + 1.0)) / denominator
        exact = 4.0 * sigma / denominator
        carried = 1.0 - np.add.reduceat(data * data, X.indptr[:-1])
    far = np.flatnonzero(~(np.abs(carried - exact) <= _BALL_TOLERANCE * exact))
    if far.size:
        i = int(far[0])
        # |u| without squaring, which overflowed past 1e154 (|mu| = inf shown).
        row_u = u[X.indptr[i]:X.indptr[i + 1]]
        norm_u = float(np.hypot.reduce(row_u)) if row_u.size else 0.0
        raise ValueError(
            f"kernel {kernel_name!r}: {far.size} row(s) of {name} lie too far from "
            f"mu = 0, sigma = 1 for float64 to carry their hyperbolic distances (first row "
            f"{i}, sigma = {float(sigma[i])!r}, |mu| = {norm_u * scale:.4g}); move "
            f"every row by the same map mu -> (mu - m) / s, sigma -> sigma / s (m a central "
            f"mean, s a typical sigma), which changes no kernel value")
    return sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape)


def single_block(rows):
    """Posting lists of all of ``rows`` as one block."""
    return PostingIndex(rows, np.array([0, rows.n_rows]))


def posting_tables_are_cheap(n_features, nnz, n_blocks=1):
    """Whether a posting index of ``n_blocks`` blocks over ``n_features``
    columns costs no more in its tables than its ``nnz`` rows' values do
    (see `used_columns_only`)."""
    return n_blocks * n_features * 16 <= 4 * 12 * max(nnz, 1)


def _blocks_of(Y):
    """Row offsets of the blocks of Y's posting index for a kernel matrix.

    One block for sparse rows, where a row of X reads only the postings of
    its own words. Rows that store more than 1/8 of the columns each (dense
    data) are cut into blocks of about 256 KB of values: ``kernel_matrix``
    then takes each block, in the L2 cache, for a group of rows of X, where
    a single block was read from memory again for every row of X. The
    values are the same bits either way. (Blocks of 64 KB cost 4x more in
    per-block work than they save; 1 MB blocks did no better than 256 KB.)
    """
    n_rows, n_features = Y.shape
    per_row = Y.nnz / max(n_rows, 1)
    if n_rows == 0 or per_row * 8 < n_features:
        return np.array([0, n_rows])
    size = max(16, int(32768 / max(per_row, 1.0)))
    return np.append(np.arange(0, n_rows, size), n_rows)


def used_columns_only(*matrices, n_blocks=1):
    """The CSR matrices over only the columns some of them use, in order,
    when a posting index of ``n_blocks`` blocks would cost more in its
    tables than in its rows.

    ``PostingIndex`` keeps 16 bytes per column for each block (a fit's
    classes) against about 12 per stored value: hashed features (``2**20``
    columns and more, few of them used) would cost gigabytes there (400
    documents of 10 classes over 2**22 columns: 640 MB to fit; predicting
    one row over 2**24 columns took 0.7 s and 242 MB). The matrices share
    one column numbering, and every column keeps its order, so every kernel
    value keeps its bits; no array of all the columns is made. The kernel
    itself stays built for all the columns (gamma="auto", the heat kernels'
    normalisation). Returns the matrices as given when the tables are cheap
    (20 Newsgroups: 0.9x the postings).
    """
    if posting_tables_are_cheap(matrices[0].shape[1], sum(M.nnz for M in matrices), n_blocks):
        return matrices
    kept, renumbered = unique_columns(np.concatenate([M.indices for M in matrices]))
    ends = np.cumsum([M.nnz for M in matrices])
    return tuple(
        sp.csr_matrix((M.data, renumbered[end - M.nnz:end].astype(M.indices.dtype), M.indptr),
                      shape=(M.shape[0], kept.shape[0]))
        for M, end in zip(matrices, ends))


def unique_columns(indices):
    """The sorted distinct values of ``indices`` and, for each entry, its
    place among them (int32): ``np.unique(indices, return_inverse=True)``,
    by one sort of the positions. On 300,000 column indices of a hashed
    matrix NumPy's hash-based unique took 10 ms and a binary search of
    every entry among the result 27 ms; this takes about 6 ms."""
    indices = np.asarray(indices)
    order = np.argsort(indices)  # not a stable sort: equal values get one place
    ordered = indices[order]
    first = np.empty(ordered.shape[0], dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    places = np.empty(ordered.shape[0], dtype=np.int32)
    places[order] = np.cumsum(first, dtype=np.int64) - 1
    return ordered[first], places


def pairwise_kernels(X, Y=None, kernel="ngd", *, shift=0.0, n_jobs=None, **params):
    """Kernel matrix between the rows of X and the rows of Y.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples_X, n_features)
        Documents as rows. The manifold kernels (``ngd``, ``ngd+pi``,
        ``ngd_exp``, ``bhattacharyya``, ``diffusion``) L1-normalise each row
        themselves, so counts or TF-IDF weights may be passed directly.
    Y : array-like or sparse matrix of shape (n_samples_Y, n_features), default=None
        If None (or X itself), ``Y = X``. For ``ned`` and ``rbf`` on mostly
        nonzero X, whose column means centre the rows (see Notes), a Y
        holding the same rows in another array may differ from that in the
        last bits, where a row of Y is not moved with X; so may
        ``pairwise_kernels(B, A).T`` from ``pairwise_kernels(A, B)``, and a
        block of rows from the same rows within a larger X.
    kernel : str, default="ngd"
        A name from ``kgeo.KERNELS``.
    shift : float, default=0.0
        Constant added to every value.
    n_jobs : int, default=None
        Threads: None takes ``OMP_NUM_THREADS`` when it is set, else every
        available CPU (the affinity mask, within a cgroup CPU quota); -1
        every available CPU, below -1 ``n_cpus + 1 + n_jobs`` as in
        joblib (-2: all but one), at least one. More than 4 per available
        CPU are not started. The result does not depend on it.
    **params : dict
        Kernel parameters: ``gamma``, ``coef0``, ``degree`` (``poly``,
        ``rbf``, ``sigmoid``; ``gamma=None`` means ``1 / n_features``),
        ``t`` and ``normalize`` (``ngd_exp``, ``diffusion``, ``hyperbolic``).
        ``hyperbolic`` reads rows ``(mu_1, ..., mu_(n-1), sigma)`` of spherical
        normals N(mu, sigma^2 I), 2 <= n <= 101 columns.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)

    Notes
    -----
    The values come from posting lists, the route of sparse documents, and
    give the bits ``SVM`` fits with. On dense rows that route is a
    multiply-add per feature and pair without a BLAS product's register
    tiling: 2,000 x 5,000 or 10,000 dense rows of 500 features take about
    5-6x the time of ``X @ Y.T`` (Y in blocks that stay in the L2 cache
    while groups of rows of X meet them; see `_blocks_of`).

    ``ned`` and ``rbf`` take a pair whose squared distance is below 1e-4 of
    ``|x|^2 + |y|^2`` from the difference of the two rows, where
    ``|x|^2 + |y|^2 - 2 <x, y>`` would have lost its last digits. Just above
    that bound the squared distance keeps an error of up to about 10^4 ulp,
    which ``rbf`` multiplies by ``gamma d^2``: a relative error of 5e-9 at
    ``gamma d^2 = 300`` (on a value of 5e-131), 2e-10 at 10. The
    geodesic kernels do the same where arccos would magnify the rounding of
    ``c = sum sqrt(p q)``, summed word by word (up to about n ulp for n
    shared words), past 18,000 ulp: from c = 0.9999 for documents of up to
    256 words, from lower c for longer ones (0.9985 at 1,000 words, 0.5 at
    10^5). So an angle is within about 18,000 ulp (4e-12) above c = 0.5 and
    0.58 n ulp below it, for documents of up to about 2 10^5 words (beyond,
    about n ulp); on the difference route its error is absolute, of order
    1e-16 (the rows' square roots are rounded) plus n ulp of the gap.
    It is
    exact, but a merge of the two rows per pair: on data far from the
    origin every pair is such a pair (2,000 dense rows of 50 features around
    300: 8-12x slower). Both kernels are translation-invariant, so when X is
    mostly nonzero it is first moved by its column means (rounded, and only
    in the columns whose every entry subtracts them exactly), and so is each
    row of Y that is mostly nonzero and subtracts them exactly; any other
    row of Y meets X as given. Sparse data far from the origin are best
    centred by the caller. A
    distance below about 1.5e-154 (the square root of float64's smallest
    normal number) loses digits, its square being subnormal (at 1e-161 the
    first two digits are left), and one below about 2.5e-162 comes out 0.

    Examples
    --------
    >>> import numpy as np, kgeo
    >>> counts = np.array([[2, 0, 1], [1, 1, 0], [0, 3, 1]])
    >>> K = kgeo.pairwise_kernels(counts, kernel="ngd")  # -2 arccos(sum sqrt(p q))
    >>> K.round(4)
    array([[ 0.    , -1.9106, -2.5559],
           [-1.9106,  0.    , -1.8235],
           [-2.5559, -1.8235,  0.    ]])
    >>> kgeo.is_positive_definite(K), kgeo.is_conditionally_positive_definite(K)
    (False, True)
    >>> kgeo.is_positive_definite(kgeo.pairwise_kernels(counts, kernel="ngd+pi"))
    True
    """
    return _pairwise_kernels(X, Y, kernel, shift, n_jobs, params)


def _pairwise_kernels(X, Y, kernel, shift, n_jobs, params, copy=True):
    """pairwise_kernels' work; ``copy=False`` for X and Y already checked
    by the caller (its own matrices: they are not copied again)."""
    n_threads = resolve_n_jobs(n_jobs)
    if Y is X:
        # The same rows: K(X, X) as Y=None gives it, symmetric, whichever
        # rows ned and rbf would move (see Notes).
        Y = None
    X = check_matrix(X, name="X", copy=copy)
    k = get_kernel(kernel, X.shape[1], shift, **params)
    if k.half_space:
        spherical_normal_sigmas(X, name="X")
    centre = translation_centre(kernel, X)
    if Y is not None:
        Y = check_matrix(Y, name="Y", copy=copy)
        if k.half_space and Y.shape[1] == X.shape[1]:
            spherical_normal_sigmas(Y, name="Y")
        if Y.shape[1] != X.shape[1]:
            raise ValueError(
                f"X and Y must have the same number of features: X has "
                f"{X.shape[1]}, Y has {Y.shape[1]}")
        if centre is not None:
            move = rows_to_move(Y, centre, fits_unmoved(X))
            if not move.all():
                # Each row of Y by its own route: moved with X, or both as given.
                K = np.empty((X.shape[0], Y.shape[0]))
                for part, moved in ((move, True), (~move, False)):
                    if part.any():
                        K[:, part] = _kernel_matrix_of(
                            k, kernel, params, centred(X, centre if moved else None),
                            centred(Y[part], centre if moved else None), n_threads, shift)
                return K
        return _kernel_matrix_of(k, kernel, params, centred(X, centre), centred(Y, centre),
                                 n_threads, shift)
    return _kernel_matrix_of(k, kernel, params, centred(X, centre), None, n_threads, shift)


def _kernel_matrix_of(k, kernel, params, X, Y, n_threads, shift):
    """pairwise_kernels' work on checked (and maybe moved) X and Y (None: X)."""
    if Y is None:
        (X_used,) = used_columns_only(X)
        rows_x = prepare_rows(k, X_used, name="X", kernel_name=kernel, n_threads=n_threads)
        rows_y = rows_x
    else:
        X_used, Y_used = used_columns_only(X, Y)
        rows_x = prepare_rows(k, X_used, name="X", kernel_name=kernel, n_threads=n_threads)
        rows_y = prepare_rows(k, Y_used, name="Y", kernel_name=kernel, n_threads=n_threads)
    if kernel == "ned":
        # -|x - y| is representable where the squares are not: refuse rows
        # (as moved) whose squared norms all fell below float64's normal
        # range (their distances would come out 0 or lose digits), as
        # SVM.fit does. Rows that are exactly 0 are at distance 0, rightly.
        used = (X_used,) if Y is None else (X_used, Y_used)
        largest = max(float(np.max(rows.squared_norms, initial=0.0))
                      for rows in ((rows_x,) if Y is None else (rows_x, rows_y)))
        if largest < np.finfo(np.float64).tiny and any(M.nnz for M in used):
            raise ValueError(
                f"kernel 'ned' underflows float64 on {'X' if Y is None else 'X and Y'}: the "
                f"largest squared L2 norm of a row is {largest:.3g}, below float64's "
                f"smallest normal number ({np.finfo(np.float64).tiny:.3g}), so distances "
                f"lose their digits; scale the rows up")
    Y_csr = X_used if Y is None else Y_used
    K = kernel_matrix(k, rows_x, PostingIndex(rows_y, _blocks_of(Y_csr)), n_threads,
                      threading.current_thread() is threading.main_thread())
    where = "X" if Y is None else "X and Y"
    if k.overflowed:
        raise ValueError(overflow_message(kernel, params, where))
    if shift != 0.0 and not np.all(np.isfinite(K)):
        raise ValueError(
            f"kernel {kernel!r} plus shift={shift!r} overflows float64 on some pair of rows "
            f"of {where}; use a smaller |shift|")
    return K


def overflow_message(kernel, params, where):
    """Why a kernel matrix cannot be computed: some value beyond float64."""
    return (f"kernel {kernel!r} overflows float64 on some pair of rows of {where}: a value "
            f"of (gamma <x, y> + coef0)^degree is beyond {np.finfo(np.float64).max:.3g} "
            f"(parameters {params}); use a smaller degree, gamma or |coef0|, or scale the "
            f"rows down")


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
        Threads, as in `pairwise_kernels`.

    Returns
    -------
    D : ndarray of shape (n_samples_X, n_samples_Y)
    """
    # Checked here first, so that a refusal names this function rather than
    # the kernel it is computed through; the checked copies are the kernel's
    # (copy=False there: not converted or copied twice).
    if Y is X:
        Y = None  # the same rows, as pairwise_kernels takes them
    X = check_matrix(X, name="X")
    check_on_simplex(X, name="X", needed_by="geodesic_distance")
    if Y is not None:
        Y = check_matrix(Y, name="Y")
        check_on_simplex(Y, name="Y", needed_by="geodesic_distance")
    # NGD is -d, with close pairs computed from the rows' difference (exact
    # 0 on the diagonal and for duplicates), not by arccos of a rounded sum.
    D = _pairwise_kernels(X, Y, "ngd", 0.0, n_jobs, {}, copy=False)
    np.negative(D, out=D)
    D += 0.0  # -(0.0) is -0.0: a distance is +0.0
    return D


def _check_square(K):
    """``K`` validated and scaled by a power of two; the scale-free tolerance base.

    Returns ``(S, size)``: ``S`` is the symmetric part of ``K * 2**-e``, with
    ``e`` chosen so that ``max|S_ij|`` lies in ``[0.5, 1)``, and ``size`` that
    maximum. Scaling first keeps ``K + K.T``, ``K - K.T`` and the means of
    ``is_conditionally_positive_definite`` finite for entries near the float64
    limit (``(K + K.T) / 2`` overflows at 9e307), and makes the answers the
    same for ``2**k * K`` as for ``K``: a power of two multiplies exactly
    (only entries below ``2**-1022`` times the largest, far under any
    tolerance, can lose bits).
    """
    if sp.issparse(K):
        # The matrix's dtype, not its data's: LIL's data is an array of lists.
        if K.dtype.kind == "c":
            raise ValueError(f"K must be a real matrix, got dtype {K.dtype}")
        if K.dtype.kind not in "biuf":
            raise TypeError(f"K must hold real numbers, got dtype {K.dtype}")
        K = sparse_as_float64_csr(K, "K").toarray()
    if K is None or isinstance(K, (str, bytes, dict, set)):
        raise TypeError(f"K must be a square array-like or sparse matrix of real numbers, "
                        f"got {type(K).__name__}")
    K = as_rectangular(K, "K")
    if np.iscomplexobj(K):
        raise ValueError(f"K must be a real matrix, got dtype {K.dtype}")
    if K.dtype.kind == "O":
        # Numbers as objects (Python ints beyond int64, a frame's pandas.NA):
        # read as pairwise_kernels reads them.
        K = objects_as_float64(K, "K", zero_below_range=True)
    if K.dtype.kind not in "biuf":
        raise TypeError(f"K must hold real numbers, got dtype {K.dtype}")
    # A long double beyond float64's range is refused as such, not cast to
    # the infinity the check below would name.
    K = as_float64(K, "K", zero_below_range=True)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0:
        raise ValueError(f"K must be a non-empty square matrix, got shape {K.shape}")
    n_bad = int(np.count_nonzero(~np.isfinite(K)))
    if n_bad:
        raise ValueError(f"K contains NaN or infinity ({n_bad} of {K.size} entries); "
                         f"definiteness needs finite entries")
    largest = float(np.max(np.abs(K)))
    if largest == 0.0:
        return K, 0.0
    # ldexp, not K / 2**e: 2**e itself overflows for the subnormal largest
    # entries (e < -1022), while ldexp scales without an intermediate.
    exponent = int(np.frexp(largest)[1])
    K = np.ldexp(K, -exponent)
    size = float(np.max(np.abs(K)))
    asym = float(np.max(np.abs(K - K.T)))
    # Relative to the largest entry, so that scaling K does not change whether
    # the same rounding-level asymmetry is accepted.
    if asym > 1e-10 * size:
        try:
            shown = f"{math.ldexp(asym, exponent):.3g}"
        except OverflowError:  # K[i, j] - K[j, i] itself exceeds float64
            shown = "above the float64 maximum"
        raise ValueError(
            f"K must be symmetric; max |K - K.T| = {shown} ({asym / size:.3g} of "
            f"max |K|), more than 1e-10 of max |K|")
    return (K + K.T) / 2, size


def _passes(eigenvalues, tol, size, n):
    # Rounding in eigvalsh (and in the centring of the cpd check) is relative
    # to the matrix's scale, so the allowance is too: no floor of 1, which made
    # the answer for a matrix of small entries differ from its rescaled copy's.
    # Its second term is eigvalsh's own rounding, about n eps max|K_ij|: with
    # tol=0 alone, an exactly semi-definite matrix (the rank-one outer(v, v),
    # eigenvalue -6e-16) was refused, where the cpd check, which always
    # allowed its rounding, accepted it (a review).
    scale = max(size, float(np.max(np.abs(eigenvalues))))
    rounding = 4 * n * np.finfo(np.float64).eps * size
    return bool(eigenvalues[0] >= -(tol * scale + rounding))


def is_positive_definite(K, tol=1e-8):
    """Whether a symmetric matrix is positive semi-definite.

    Parameters
    ----------
    K : array-like or sparse matrix of shape (n, n)
        Symmetric (to 1e-10 relative), real.
    tol : float, default=1e-8
        The smallest eigenvalue may be as low as
        ``-(tol * max(max|eig|, max|K_ij|) + 4 n eps max|K_ij|)``, with
        ``eps`` the float64 epsilon: the second term is the eigensolver's
        rounding, so that ``tol=0`` still accepts an exactly semi-definite
        matrix, as :func:`is_conditionally_positive_definite` does. The
        allowance is relative to the matrix's scale: ``K`` and ``c * K``
        (``c > 0``) get the same answer, up to the rounding of the product
        (exactly for powers of two).

    Returns
    -------
    bool
    """
    tol = check_positive(tol, "tol", allow_zero=True)
    K, size = _check_square(K)
    return _passes(np.linalg.eigvalsh(K), tol, size, K.shape[0])


def is_conditionally_positive_definite(K, tol=1e-8):
    """Whether ``c' K c >= 0`` for every ``c`` with ``sum(c) = 0``.

    That is, ``P K P`` is positive semi-definite, with ``P = I - 11'/n`` the
    projector onto the complement of the constant vector.

    Parameters
    ----------
    K : array-like or sparse matrix of shape (n, n)
    tol : float, default=1e-8
        The smallest eigenvalue of ``P K P`` may be as low as
        ``-(tol * max|eig(P K P)| + 4 n eps max|K_ij|)``, with ``eps`` the
        float64 epsilon: the second term is the centring's rounding, relative
        to the entries of ``K``, which can be much larger than ``P K P`` (a
        constant added to ``K``, which leaves ``P K P`` as it is and so
        never changes the answer). As for :func:`is_positive_definite`, ``K``
        and ``c * K`` get the same answer.

    Returns
    -------
    bool
    """
    tol = check_positive(tol, "tol", allow_zero=True)
    K, size = _check_square(K)
    # K is scaled to entries below 1 in magnitude, so neither these sums nor
    # the means overflow.
    # P K P without forming P: subtract row and column means, add the grand mean.
    row_mean = K.mean(axis=1, keepdims=True)
    centred = K - row_mean - row_mean.T + K.mean()
    eigenvalues = np.linalg.eigvalsh((centred + centred.T) / 2)
    # Each centred entry carries a few roundings of K's largest entry, so the
    # error matrix's norm is within n of that. The allowance used to be tol
    # times max|K_ij|, which a constant added to K (cpd-ness unchanged) made
    # large enough to accept a matrix whose P K P has eigenvalue -0.037.
    rounding = 4 * K.shape[0] * np.finfo(np.float64).eps * size
    allowed = tol * float(np.max(np.abs(eigenvalues))) + rounding
    return bool(eigenvalues[0] >= -allowed)
