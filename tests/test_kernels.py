"""kgeo.pairwise_kernels against slow dense NumPy references.

Every kernel is compared with a reference written here from the formulas of
Zhang, Chen & Lee (2005) and Lafferty & Lebanon (2005), on every input form
the public API accepts. The manifold kernels are referenced through the
Hellinger distance ``d_H = ||sqrt(p) - sqrt(q)||``, with
``arccos(sum sqrt(p q)) = 2 arcsin(d_H / 2)``: unlike ``arccos`` of the
Bhattacharyya coefficient it has no cancellation near the diagonal, so the
reference is accurate to a few ulps everywhere and the tolerances below bound
kgeo's error alone.

Tolerances, and why:
- linear, poly, rbf, sigmoid, bhattacharyya: 1e-12 relative (one sparse dot
  product plus a smooth scalar map; the data are counts, so no cancellation).
- ngd, ngd+pi, ngd_exp, diffusion: 1e-7 absolute. ``arccos(c)`` near ``c = 1``
  turns the few-ulp rounding of ``c`` into ``sqrt(2 * k * eps) ~ 3e-8``.
  Their ``cos(angle)`` transforms are checked against the reference
  Bhattacharyya coefficient at 1e-12, which shows that only arccos is lossy.
- ned: 1e-7 absolute (``sqrt`` of ``|x|^2 + |y|^2 - 2<x, y>``, which cancels
  near the diagonal), and its square at 1e-12 relative to ``|x|^2 + |y|^2``.

These are what the formulas allow in general. Near-duplicate rows, where the
cancellation happens, kgeo recomputes from the rows' difference:
``test_close_pairs_are_exact_to_a_few_ulps`` holds NED and NGD there to 1e-12
relative, ``test_distances_of_rows_far_from_the_origin_are_exact`` NED and RBF.
"""

import math
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import kgeo
from kgeo._kernels import EXACT_GAP_FROM

SIMPLEX_KERNELS = ("ngd", "ngd+pi", "ngd_exp", "bhattacharyya", "diffusion")
ARCCOS_KERNELS = ("ngd", "ngd+pi", "ngd_exp", "diffusion")

# Non-default parameters for the comparison (positive coef0: no cancellation
# inside tanh or pow on non-negative data, so 1e-12 relative is fair).
PARAMS = {
    "linear": {},
    "poly": {"gamma": 0.3, "coef0": 1.0, "degree": 3},
    "rbf": {"gamma": 0.2},
    "sigmoid": {"gamma": 0.05, "coef0": 0.3},
    "ned": {},
    "ngd": {},
    "ngd+pi": {},
    "ngd_exp": {"t": 0.7},
    "bhattacharyya": {},
    "diffusion": {"t": 0.5},
}

TIGHT = dict(rtol=1e-12, atol=1e-15)
EPS = np.finfo(np.float64).eps
ARCCOS_ATOL = 1e-7


# --------------------------------------------------------------------------
# References: dense, broadcast over all pairs, straight from the formulas
# --------------------------------------------------------------------------

def pair_dots(X, Y):
    return (X[:, None, :] * Y[None, :, :]).sum(axis=-1)


def pair_sq_distances(X, Y):
    return ((X[:, None, :] - Y[None, :, :]) ** 2).sum(axis=-1)


def simplex_points(X):
    return X / X.sum(axis=1, keepdims=True)


def ref_bhattacharyya(X, Y):
    """sum_i sqrt(p_i q_i), p = x / sum(x)."""
    P, Q = simplex_points(X), simplex_points(Y)
    return np.sqrt(P[:, None, :] * Q[None, :, :]).sum(axis=-1)


def ref_angle(X, Y):
    """arccos(sum sqrt(p q)) = half the geodesic distance, accurate near 0.

    ``|sqrt p - sqrt q|^2 = 2 - 2 cos(angle) = 4 sin^2(angle / 2)``.
    """
    P, Q = simplex_points(X), simplex_points(Y)
    hellinger = np.sqrt(pair_sq_distances(np.sqrt(P), np.sqrt(Q)))
    return 2.0 * np.arcsin(np.minimum(hellinger / 2.0, 1.0))


def heat_factor(t, n_features):
    """(4 pi t)^(-n/2) with n = n_features - 1, the dimension of the simplex."""
    return (4.0 * np.pi * t) ** (-(n_features - 1) / 2.0)


def ref_kernel(name, X, Y=None, **params):
    """Dense reference kernel matrix; X and Y are dense float64 arrays."""
    Y = X if Y is None else Y
    n_features = X.shape[1]
    gamma = params.get("gamma")
    gamma = 1.0 / n_features if gamma is None else gamma
    coef0 = params.get("coef0", 0.0)
    t = params.get("t", 1.0)
    factor = heat_factor(t, n_features) if params.get("normalize", False) else 1.0
    if name == "linear":
        return pair_dots(X, Y)
    if name == "poly":
        return (gamma * pair_dots(X, Y) + coef0) ** params.get("degree", 3)
    if name == "rbf":
        return np.exp(-gamma * pair_sq_distances(X, Y))
    if name == "sigmoid":
        return np.tanh(gamma * pair_dots(X, Y) + coef0)
    if name == "ned":
        return -np.sqrt(pair_sq_distances(X, Y))
    if name == "bhattacharyya":
        return ref_bhattacharyya(X, Y)
    angle = ref_angle(X, Y)
    if name == "ngd":
        return -2.0 * angle
    if name == "ngd+pi":
        return np.pi - 2.0 * angle
    if name == "ngd_exp":
        return factor * np.exp(-angle / t)
    if name == "diffusion":
        return factor * np.exp(-angle ** 2 / t)
    raise AssertionError(f"no reference for kernel {name!r}")


def cos_angle(name, K, **params):
    """Invert a manifold kernel's map back to the Bhattacharyya coefficient."""
    t = params.get("t", 1.0)
    if name == "ngd":
        angle = -K / 2.0
    elif name == "ngd+pi":
        angle = (np.pi - K) / 2.0
    elif name == "ngd_exp":
        angle = -t * np.log(K)
    elif name == "diffusion":
        angle = np.sqrt(np.maximum(-t * np.log(K), 0.0))
    else:
        raise AssertionError(name)
    return np.cos(angle)


def assert_matches_reference(name, K, X, Y=None, **params):
    ref = ref_kernel(name, X, Y, **params)
    assert K.shape == ref.shape
    assert K.dtype == np.float64
    if name in ARCCOS_KERNELS:
        np.testing.assert_allclose(K, ref, rtol=0, atol=ARCCOS_ATOL)
        np.testing.assert_allclose(
            cos_angle(name, K, **params), ref_bhattacharyya(X, X if Y is None else Y),
            rtol=0, atol=1e-12)
    elif name == "ned":
        np.testing.assert_allclose(K, ref, rtol=0, atol=ARCCOS_ATOL)
        Yd = X if Y is None else Y
        scale = (X ** 2).sum(1)[:, None] + (Yd ** 2).sum(1)[None, :]
        np.testing.assert_array_less(np.abs(K ** 2 - ref ** 2), 1e-12 * scale + 1e-300)
    else:
        np.testing.assert_allclose(K, ref, **TIGHT)


# --------------------------------------------------------------------------
# Data and input forms
# --------------------------------------------------------------------------

def base_counts():
    """Counts with the awkward cases: a duplicate row, a rescaled row (same
    point of the simplex), a one-word row, rows sharing no word."""
    X = np.array([
        [3, 0, 1, 0, 0, 2, 0, 0, 1, 0, 0, 4],
        [0, 1, 0, 0, 5, 0, 0, 2, 0, 0, 1, 0],
        [3, 0, 1, 0, 0, 2, 0, 0, 1, 0, 0, 4],   # = row 0
        [6, 0, 2, 0, 0, 4, 0, 0, 2, 0, 0, 8],   # = 2 * row 0
        [0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0],   # one word, shared with nobody
        [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
        [0, 2, 0, 0, 0, 0, 3, 0, 0, 1, 0, 0],
        [5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        [0, 0, 4, 0, 2, 0, 0, 0, 3, 0, 2, 0],
    ], dtype=np.float64)
    Y = np.array([
        [0, 1, 0, 0, 5, 0, 0, 2, 0, 0, 1, 0],   # = X row 1
        [0, 3, 0, 0, 15, 0, 0, 6, 0, 0, 3, 0],  # = 3 * X row 1
        [2, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0],
        [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0],
        [4, 1, 0, 3, 0, 0, 0, 2, 0, 1, 0, 5],
    ], dtype=np.float64)
    return X, Y


def unsorted_csr(D):
    """CSR with every row's entries stored in reverse column order."""
    S = sp.csr_matrix(D)
    data, indices = S.data.copy(), S.indices.copy()
    for i in range(S.shape[0]):
        lo, hi = S.indptr[i], S.indptr[i + 1]
        data[lo:hi] = data[lo:hi][::-1]
        indices[lo:hi] = indices[lo:hi][::-1]
    out = sp.csr_matrix((data, indices, S.indptr.copy()), shape=S.shape)
    out.has_sorted_indices = False
    assert any(np.any(np.diff(indices[S.indptr[i]:S.indptr[i + 1]]) < 0)
               for i in range(S.shape[0]))
    return out


def csr_with_explicit_zeros(D):
    """CSR storing a 0.0 in every row at a column the row does not use."""
    indptr, indices, data = [0], [], []
    for row in D:
        cols = list(np.flatnonzero(row))
        vals = list(row[cols])
        free = np.flatnonzero(row == 0)
        if free.size:
            cols.append(free[0])
            vals.append(0.0)
        order = np.argsort(cols)
        indices.extend(np.asarray(cols)[order])
        data.extend(np.asarray(vals)[order])
        indptr.append(len(indices))
    out = sp.csr_matrix((np.array(data), np.array(indices), np.array(indptr)), shape=D.shape)
    assert np.count_nonzero(out.data == 0) > 0
    return out


def coo_with_duplicates(D):
    """COO where each count c > 1 is stored as two entries 1 and c - 1."""
    rows, cols = np.nonzero(D)
    vals = D[rows, cols]
    split = vals > 1
    return sp.coo_matrix(
        (np.concatenate([np.where(split, 1.0, vals), vals[split] - 1.0]),
         (np.concatenate([rows, rows[split]]), np.concatenate([cols, cols[split]]))),
        shape=D.shape)


def readonly_dense(D):
    D = D.copy()
    D.flags.writeable = False
    return D


def readonly_csr(D):
    S = sp.csr_matrix(D)
    for a in (S.data, S.indices, S.indptr):
        a.flags.writeable = False
    return S


FORMS = {
    "dense": lambda D: D.copy(),
    "list": lambda D: D.tolist(),
    "csr": lambda D: sp.csr_matrix(D),
    "csr_array": lambda D: sp.csr_array(D),
    "csr_unsorted": unsorted_csr,
    "csr_explicit_zeros": csr_with_explicit_zeros,
    "readonly_dense": readonly_dense,
    "readonly_csr": readonly_csr,
    "coo_duplicates": coo_with_duplicates,
    "csc": lambda D: sp.csc_matrix(D),
    "int_dense": lambda D: D.astype(np.int64),
    "int32_csr": lambda D: sp.csr_matrix(D.astype(np.int32)),
    "float32_dense": lambda D: D.astype(np.float32),
    "float32_csr": lambda D: sp.csr_matrix(D.astype(np.float32)),
    "bool_dense": lambda D: D > 0,
    "bool_csr": lambda D: sp.csr_matrix(D > 0),
}


def values_of(obj):
    """The float64 values a kernel must see for an input in any form."""
    if sp.issparse(obj):
        return obj.toarray().astype(np.float64)
    return np.asarray(obj, dtype=np.float64)


# --------------------------------------------------------------------------
# Every kernel x every input form, against the reference
# --------------------------------------------------------------------------

def test_reference_table_covers_every_kernel():
    # The hyperbolic kernel reads spherical normals, not counts: its
    # references are in test_hyperbolic.py.
    assert set(kgeo.KERNELS) == set(PARAMS) | {"hyperbolic"}
    assert {name for name, (_, simplex) in kgeo.KERNELS.items() if simplex} == set(SIMPLEX_KERNELS)


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("kernel", sorted(PARAMS))
@pytest.mark.parametrize("with_y", [False, True], ids=["X_vs_X", "X_vs_Y"])
def test_kernel_matches_reference(kernel, form, with_y):
    X0, Y0 = base_counts()
    X = FORMS[form](X0)
    Y = FORMS[form](Y0) if with_y else None
    if not form.startswith("bool"):
        np.testing.assert_array_equal(values_of(X), X0)  # the form kept the values
    K = kgeo.pairwise_kernels(X, Y, kernel=kernel, **PARAMS[kernel])
    assert isinstance(K, np.ndarray)
    assert_matches_reference(kernel, K, values_of(X), None if Y is None else values_of(Y),
                             **PARAMS[kernel])


@pytest.mark.parametrize("kernel", sorted(PARAMS))
def test_kernel_matches_reference_random_counts(kernel, random_count_csr):
    X = random_count_csr(40, 25, density=0.2, max_count=6)
    Y = random_count_csr(17, 25, density=0.4, max_count=3)
    for A, B in ((X, None), (X, Y), (Y, X)):
        K = kgeo.pairwise_kernels(A, B, kernel=kernel, **PARAMS[kernel])
        assert_matches_reference(kernel, K, A.toarray(), None if B is None else B.toarray(),
                                 **PARAMS[kernel])


@pytest.mark.parametrize("kernel", ["poly", "rbf", "sigmoid"])
def test_gamma_none_is_one_over_n_features(kernel, random_count_csr):
    X = random_count_csr(12, 7)
    K = kgeo.pairwise_kernels(X, kernel=kernel)
    ref = ref_kernel(kernel, X.toarray(), gamma=1.0 / 7)
    np.testing.assert_allclose(K, ref, **TIGHT)


@pytest.mark.parametrize("degree", [1, 2, 4.0, np.int64(5)])
def test_poly_degrees(degree, random_count_csr):
    X = random_count_csr(10, 6)
    K = kgeo.pairwise_kernels(X, kernel="poly", degree=degree, coef0=0.5, gamma=0.1)
    ref = ref_kernel("poly", X.toarray(), degree=int(degree), coef0=0.5, gamma=0.1)
    np.testing.assert_allclose(K, ref, **TIGHT)


@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf", "sigmoid", "ned"])
def test_euclidean_kernels_take_signed_real_data(kernel, rng):
    X = rng.standard_normal((15, 8))
    Y = rng.standard_normal((6, 8))
    params = {"poly": {"gamma": 0.2, "coef0": 0.0, "degree": 2}}.get(kernel, {})
    K = kgeo.pairwise_kernels(X, Y, kernel=kernel, **params)
    ref = ref_kernel(kernel, X, Y, **params)
    # Signed data cancel inside the dot product: error relative to the norms.
    scale = np.sqrt((X ** 2).sum(1))[:, None] * np.sqrt((Y ** 2).sum(1))[None, :]
    np.testing.assert_allclose(K, ref, rtol=1e-12, atol=1e-12 * scale.max())


@pytest.mark.parametrize("kernel", SIMPLEX_KERNELS)
def test_manifold_kernels_normalise_rows_themselves(kernel, random_count_csr):
    # Scaling a document (any positive factor per row) leaves it on the same
    # point of the simplex.
    X = random_count_csr(12, 9)
    scales = np.linspace(0.01, 1000.0, 12)
    K = kgeo.pairwise_kernels(X, kernel=kernel, **PARAMS[kernel])
    K_scaled = kgeo.pairwise_kernels(sp.diags(scales) @ X, kernel=kernel, **PARAMS[kernel])
    np.testing.assert_allclose(K_scaled, K, rtol=0, atol=ARCCOS_ATOL)


def test_one_feature_and_one_row():
    # With one word every document is the same point: distance 0, coefficient 1.
    X = np.array([[3.0], [0.5], [12.0]])
    np.testing.assert_array_equal(kgeo.pairwise_kernels(X, kernel="ngd"), np.zeros((3, 3)))
    np.testing.assert_array_equal(kgeo.pairwise_kernels(X, kernel="bhattacharyya"), np.ones((3, 3)))
    np.testing.assert_array_equal(
        kgeo.pairwise_kernels([[1.0, 2.0]], [[2.0, 0.0]], kernel="linear"), [[2.0]])


def test_disjoint_documents_are_pi_apart():
    X = np.array([[1.0, 2.0, 0.0, 0.0], [0.0, 0.0, 5.0, 1.0]])
    K = kgeo.pairwise_kernels(X, kernel="ngd")
    assert K[0, 1] == K[1, 0] == -np.pi
    assert kgeo.pairwise_kernels(X, kernel="ngd+pi")[0, 1] == 0.0
    assert kgeo.pairwise_kernels(X, kernel="bhattacharyya")[0, 1] == 0.0


def test_geodesic_distance_matches_reference(random_count_csr):
    X = random_count_csr(20, 15)
    Y = random_count_csr(7, 15)
    np.testing.assert_allclose(kgeo.geodesic_distance(X), 2 * ref_angle(X.toarray(), X.toarray()),
                               rtol=0, atol=ARCCOS_ATOL)
    D = kgeo.geodesic_distance(X, Y)
    np.testing.assert_allclose(D, 2 * ref_angle(X.toarray(), Y.toarray()), rtol=0, atol=ARCCOS_ATOL)
    np.testing.assert_allclose(np.cos(D / 2), ref_bhattacharyya(X.toarray(), Y.toarray()),
                               rtol=0, atol=1e-12)


def test_geodesic_distance_is_plus_zero_on_the_diagonal(random_count_csr):
    D = kgeo.geodesic_distance(random_count_csr(6, 5))
    assert np.all(np.diag(D) == 0.0) and not np.any(np.signbit(D))


# --------------------------------------------------------------------------
# Threads, shift, inputs left alone
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kernel", sorted(PARAMS))
def test_result_does_not_depend_on_n_jobs(kernel, random_count_csr):
    X = random_count_csr(150, 60, density=0.15)
    Y = random_count_csr(90, 60, density=0.15)
    for B in (None, Y):
        K1 = kgeo.pairwise_kernels(X, B, kernel=kernel, n_jobs=1, **PARAMS[kernel])
        for n_jobs in (2, 3, -1, None):
            K = kgeo.pairwise_kernels(X, B, kernel=kernel, n_jobs=n_jobs, **PARAMS[kernel])
            assert np.array_equal(K, K1), f"n_jobs={n_jobs} differs from n_jobs=1"


@pytest.mark.parametrize("shift", [2.5, -1.25, np.pi])
@pytest.mark.parametrize("kernel", sorted(PARAMS))
def test_shift_adds_exactly_the_constant(kernel, shift, random_count_csr):
    X = random_count_csr(20, 10)
    Y = random_count_csr(5, 10)
    for B in (None, Y):
        K = kgeo.pairwise_kernels(X, B, kernel=kernel, **PARAMS[kernel])
        K_shifted = kgeo.pairwise_kernels(X, B, kernel=kernel, shift=shift, **PARAMS[kernel])
        # The kernel adds the shift as the last operation: bit for bit K + shift.
        assert np.array_equal(K_shifted, K + shift)


def test_ngd_plus_pi_is_ngd_shifted_by_pi(random_count_csr):
    X = random_count_csr(25, 12)
    np.testing.assert_allclose(kgeo.pairwise_kernels(X, kernel="ngd+pi"),
                               kgeo.pairwise_kernels(X, kernel="ngd", shift=np.pi),
                               rtol=0, atol=4 * np.finfo(float).eps)


@pytest.mark.parametrize("form", ["csr_unsorted", "csr_explicit_zeros", "coo_duplicates", "dense"])
def test_input_is_not_modified(form):
    X0, _ = base_counts()
    X = FORMS[form](X0)
    before = [a.copy() for a in (
        (X.data, X.indices, X.indptr) if sp.isspmatrix_csr(X) else
        (X.data, X.row, X.col) if sp.issparse(X) else (X,))]
    kgeo.pairwise_kernels(X, kernel="ngd")
    kgeo.pairwise_kernels(X, kernel="linear")
    after = ((X.data, X.indices, X.indptr) if sp.isspmatrix_csr(X) else
             (X.data, X.row, X.col) if sp.issparse(X) else (X,))
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------
# The heat-kernel normalisation (4 pi t)^(-n/2)
# --------------------------------------------------------------------------

@pytest.mark.parametrize("t", [0.05, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("n_features", [1, 2, 6, 30])
@pytest.mark.parametrize("kernel", ["ngd_exp", "diffusion"])
def test_normalize_applies_the_heat_factor(kernel, n_features, t, random_count_csr):
    X = random_count_csr(15, n_features, density=0.5)
    Y = random_count_csr(6, n_features, density=0.5)
    factor = heat_factor(t, n_features)
    for B in (None, Y):
        Bd = None if B is None else B.toarray()
        K = kgeo.pairwise_kernels(X, B, kernel=kernel, t=t, normalize=True)
        K_plain = kgeo.pairwise_kernels(X, B, kernel=kernel, t=t)
        ref = ref_kernel(kernel, X.toarray(), Bd, t=t, normalize=True)
        # exp(log_scale - a/t): an error da in the angle is a relative error da/t.
        np.testing.assert_allclose(K, ref, rtol=ARCCOS_ATOL / t, atol=0)
        # The factor is exactly what separates it from the unnormalised kernel.
        mask = K_plain > 1e-250
        np.testing.assert_allclose(K[mask] / K_plain[mask], factor, rtol=1e-12)


@pytest.mark.parametrize("n_features, t", [(20_000, 1.0), (20_000, 0.001), (3000, 10.0)])
@pytest.mark.parametrize("kernel", ["ngd_exp", "diffusion"])
def test_normalize_raises_when_not_representable(kernel, n_features, t):
    X = sp.random(4, n_features, density=0.01, format="csr", random_state=0) + \
        sp.csr_matrix(([1.0] * 4, ([0, 1, 2, 3], [0, 1, 2, 3])), shape=(4, n_features))
    with pytest.raises(ValueError, match="normalize"):
        kgeo.pairwise_kernels(X, kernel=kernel, t=t, normalize=True)
    # ... while the unnormalised kernel is fine on the same data.
    K = kgeo.pairwise_kernels(X, kernel=kernel, t=t)
    assert np.all(np.isfinite(K))


@pytest.mark.parametrize("kernel", ["ngd_exp", "diffusion"])
def test_normalize_with_small_t_scales_the_plain_kernel(kernel):
    X = np.array([[1.0, 2.0, 3.0], [3.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    t = 1e-3
    K_plain = kgeo.pairwise_kernels(X, kernel=kernel, t=t)
    K = kgeo.pairwise_kernels(X, kernel=kernel, t=t, normalize=True)
    np.testing.assert_allclose(K, heat_factor(t, 3) * K_plain, rtol=1e-12, atol=0)


# --------------------------------------------------------------------------
# Bad input: the error names the problem
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kernel", SIMPLEX_KERNELS)
@pytest.mark.parametrize("sparse", [False, True])
def test_negative_entries_rejected_by_manifold_kernels(kernel, sparse):
    X = np.array([[1.0, -2.0, 3.0], [1.0, 1.0, 0.0]])
    X = sp.csr_matrix(X) if sparse else X
    with pytest.raises(ValueError, match=r"X has 1 negative entries"):
        kgeo.pairwise_kernels(X, kernel=kernel)
    with pytest.raises(ValueError, match=r"Y has 1 negative entries"):
        kgeo.pairwise_kernels(np.ones((2, 3)), X, kernel=kernel)
    with pytest.raises(ValueError, match="negative"):
        kgeo.geodesic_distance(X)


@pytest.mark.parametrize("sparse", [False, True])
def test_geodesic_distance_refusals_name_it(sparse):
    # They named "the multinomial kernel 'ngd'", which the caller never
    # named, and advised on kgeo.SVM (a docs review, helper 135).
    bad = {"negative": np.array([[1.0, -2.0, 3.0], [1.0, 1.0, 0.0]]),
           "empty": np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])}
    if sparse:
        bad = {k: sp.csr_matrix(v) for k, v in bad.items()}
    for name, args in (("X", lambda M: (M,)), ("Y", lambda M: (np.ones((2, 3)), M))):
        with pytest.raises(ValueError, match=rf"^Negative values in data passed to "
                                             rf"geodesic_distance: {name} has 1 negative "
                                             rf"entries, and it needs counts or frequencies "
                                             rf">= 0$"):
            kgeo.geodesic_distance(*args(bad["negative"]))
        with pytest.raises(ValueError) as error:
            kgeo.geodesic_distance(*args(bad["empty"]))
        assert str(error.value) == (
            f"{name} has 1 all-zero row(s) (rows 1); geodesic_distance L1-normalises each "
            f"row and needs some mass in every row: drop them, as "
            f"{name}[np.asarray({name}.sum(axis=1)).ravel() > 0]")


@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf", "sigmoid", "ned"])
def test_negative_entries_fine_for_euclidean_kernels(kernel):
    X = np.array([[1.0, -2.0, 3.0], [1.0, 1.0, 0.0]])
    np.testing.assert_allclose(kgeo.pairwise_kernels(X, kernel=kernel), ref_kernel(kernel, X),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("kernel", ["linear", "ngd"])
@pytest.mark.parametrize("sparse", [False, True])
def test_nan_and_inf_rejected(bad, kernel, sparse):
    X = np.array([[1.0, 2.0, 3.0], [1.0, bad, 0.0]])
    X = sp.csr_matrix(X) if sparse else X
    with pytest.raises(ValueError, match=r"X contains 1 NaN or infinity"):
        kgeo.pairwise_kernels(X, kernel=kernel)
    with pytest.raises(ValueError, match=r"Y contains 1 NaN or infinity"):
        kgeo.pairwise_kernels(np.ones((2, 3)), X, kernel=kernel)


@pytest.mark.parametrize("kernel", SIMPLEX_KERNELS)
def test_all_zero_rows_named(kernel):
    X = np.array([[1.0, 2.0], [0.0, 0.0], [3.0, 0.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match=r"X has 2 all-zero row\(s\) \(rows 1, 3\).*drop them, "
                                         r"as X\[np.asarray\(X.sum\(axis=1\)\).ravel\(\) > 0\]"):
        kgeo.pairwise_kernels(X, kernel=kernel)
    with pytest.raises(ValueError, match=r"Y has 2 all-zero row\(s\) \(rows 1, 3\)"):
        kgeo.pairwise_kernels(np.ones((1, 2)), X, kernel=kernel)
    # A row whose only stored values are explicit zeros is empty too.
    S = sp.csr_matrix((np.array([1.0, 0.0]), np.array([0, 1]), np.array([0, 1, 2])), shape=(2, 2))
    with pytest.raises(ValueError, match=r"\(rows 1\)"):
        kgeo.pairwise_kernels(S, kernel=kernel)


def test_many_all_zero_rows_listed_briefly():
    X = np.zeros((30, 3))
    X[0, 0] = 1.0
    with pytest.raises(ValueError, match=r"29 all-zero row\(s\) \(rows 1, 2, .*, 10 and 19 more\)"):
        kgeo.pairwise_kernels(X, kernel="ngd")


def test_all_zero_rows_fine_for_linear():
    X = np.array([[1.0, 2.0], [0.0, 0.0]])
    np.testing.assert_array_equal(kgeo.pairwise_kernels(X, kernel="linear"),
                                  [[5.0, 0.0], [0.0, 0.0]])


def test_feature_mismatch():
    with pytest.raises(ValueError, match="same number of features: X has 3, Y has 4"):
        kgeo.pairwise_kernels(np.ones((2, 3)), np.ones((2, 4)), kernel="linear")


@pytest.mark.parametrize("name", ["gaussian", "NGD", "ngd_pi", "", None, 3])
def test_unknown_kernel_lists_known_ones(name):
    with pytest.raises(ValueError, match="Unknown kernel") as info:
        kgeo.pairwise_kernels(np.ones((2, 3)), kernel=name)
    for known in kgeo.KERNELS:
        assert known in str(info.value)


@pytest.mark.parametrize("kernel, params, match", [
    ("poly", {"degre": 2},
     r"'poly' got unknown parameter\(s\) degre; it accepts: coef0, degree, gamma"),
    ("linear", {"gamma": 1.0}, r"'linear' got unknown parameter\(s\) gamma; it accepts: none"),
    ("ngd", {"t": 1.0}, r"unknown parameter\(s\) t"),
    ("rbf", {"sigma": 1.0, "coef0": 1.0}, r"unknown parameter\(s\) coef0, sigma"),
    ("diffusion", {"gamma": 1.0}, r"accepts: normalize, t"),
])
def test_unknown_kernel_parameter(kernel, params, match):
    with pytest.raises(ValueError, match=match):
        kgeo.pairwise_kernels(np.ones((2, 3)), kernel=kernel, **params)


@pytest.mark.parametrize("t", [0, 0.0, -1.0, -1e-300])
@pytest.mark.parametrize("kernel", ["ngd_exp", "diffusion"])
def test_t_must_be_positive(kernel, t):
    with pytest.raises(ValueError, match=r"t must be > 0"):
        kgeo.pairwise_kernels(np.ones((2, 3)), kernel=kernel, t=t)


@pytest.mark.parametrize("t", [np.nan, np.inf, "1", None])
def test_t_must_be_a_finite_number(t):
    with pytest.raises(ValueError, match=r"t must be a finite real number"):
        kgeo.pairwise_kernels(np.ones((2, 3)), kernel="diffusion", t=t)


@pytest.mark.parametrize("normalize", [1, "yes", None])
def test_normalize_must_be_bool(normalize):
    with pytest.raises(ValueError, match="normalize must be True or False"):
        kgeo.pairwise_kernels(np.ones((2, 3)), kernel="ngd_exp", normalize=normalize)


@pytest.mark.parametrize("degree", [0, -1, 2.5, 0.5, True, "3", None])
def test_degree_must_be_integer_at_least_one(degree):
    with pytest.raises(ValueError, match=r"degree must be an integer >= 1"):
        kgeo.pairwise_kernels(np.ones((2, 3)), kernel="poly", degree=degree)


def test_degree_must_be_a_float64():
    """An integer degree beyond 2**53 that float64 cannot hold is refused,
    not rounded (an odd one would round to an even one)."""
    with pytest.raises(ValueError, match=r"degree 9007199254740993 is not a float64 \(it "
                                         r"would round to 9007199254740992\)"):
        kgeo.pairwise_kernels(np.ones((2, 3)), kernel="poly", degree=2**53 + 1)


@pytest.mark.parametrize("name, kw", [("rbf", {"gamma": True}), ("sigmoid", {"coef0": False}),
                                      ("diffusion", {"t": True}), ("linear", {"shift": True})])
def test_real_parameters_refuse_booleans(name, kw):
    """bool is an int subclass, but True is not a number of the kernel's."""
    (param, value), = kw.items()
    with pytest.raises(ValueError, match=rf"kernel '{name}': {param} must be a finite real "
                                         rf"number, got {value!r}"):
        kgeo.pairwise_kernels(np.ones((2, 3)), kernel=name, **kw)


def test_kernel_params_returns_a_copy_of_the_defaults():
    from kgeo._kernels import kernel_params

    params = kernel_params("poly")
    assert params == {"gamma": None, "coef0": 0.0, "degree": 3}
    params["degree"] = 7
    assert kernel_params("poly")["degree"] == 3


def test_unhashable_kernel_name_is_an_unknown_kernel():
    with pytest.raises(ValueError, match=r"Unknown kernel \['ngd'\]; known kernels: "):
        kgeo.pairwise_kernels(np.ones((2, 3)), kernel=["ngd"])


def test_integer_parameter_beyond_float64_is_not_a_finite_real():
    """float(10**400) raises OverflowError: the parameter is refused as any
    other value beyond float64."""
    with pytest.raises(ValueError, match=r"kernel 'rbf': gamma must be a finite real number, "
                                         r"got 1000"):
        kgeo.pairwise_kernels(np.ones((2, 3)), kernel="rbf", gamma=10**400)


@pytest.mark.parametrize("gamma", [0, 0.0, -0.5])
@pytest.mark.parametrize("kernel", ["poly", "rbf", "sigmoid"])
def test_gamma_must_be_positive(kernel, gamma):
    with pytest.raises(ValueError, match=r"gamma must be > 0"):
        kgeo.pairwise_kernels(np.ones((2, 3)), kernel=kernel, gamma=gamma)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_gamma_coef0_shift_must_be_finite(value):
    for kernel, kw in (("rbf", {"gamma": value}), ("sigmoid", {"coef0": value}),
                       ("linear", {"shift": value})):
        with pytest.raises(ValueError, match="must be a finite real number"):
            kgeo.pairwise_kernels(np.ones((2, 3)), kernel=kernel, **kw)


@pytest.mark.parametrize("X", [np.ones(3), np.ones((2, 3, 1)), np.float64(2.0)],
                         ids=["1d", "3d", "0d"])
def test_not_2d_rejected(X):
    with pytest.raises(ValueError, match=r"Expected a 2D array for X, got a \dD array"):
        kgeo.pairwise_kernels(X, kernel="linear")
    with pytest.raises(ValueError, match=r"Expected a 2D array for Y"):
        kgeo.pairwise_kernels(np.ones((2, 3)), X, kernel="linear")


@pytest.mark.parametrize("X, match", [
    (np.ones((0, 3)), r"0 sample\(s\)"),
    (sp.csr_matrix((0, 3)), r"0 sample\(s\)"),
    (np.ones((3, 0)), r"0 feature\(s\)"),
    (sp.csr_matrix((3, 0)), r"0 feature\(s\)"),
    ([], r"Expected a 2D array"),
], ids=["no_rows", "no_rows_sparse", "no_columns", "no_columns_sparse", "empty_list"])
def test_empty_input_rejected(X, match):
    with pytest.raises(ValueError, match=match):
        kgeo.pairwise_kernels(X, kernel="linear")


@pytest.mark.parametrize("X", [
    np.array([[1 + 2j, 0.0]]), sp.csr_matrix(np.array([[1 + 2j, 0.0]])),
], ids=["dense", "sparse"])
def test_complex_rejected(X):
    with pytest.raises(ValueError, match="Complex data not supported"):
        kgeo.pairwise_kernels(X, kernel="linear")


@pytest.mark.parametrize("X", [
    "some text",
    b"bytes",
    [["a", "b"]],
    np.array([["1", "2"]]),
    {"a": 1},
    None,
], ids=["str", "bytes", "list_of_str", "str_array", "dict", "None"])
def test_non_numeric_input_is_a_type_error(X):
    with pytest.raises(TypeError, match=r"X must"):
        kgeo.pairwise_kernels(X, kernel="linear")


def test_object_array_of_strings_is_a_type_error():
    with pytest.raises(TypeError):
        kgeo.pairwise_kernels(np.array([[1.0, "a"]], dtype=object), kernel="linear")


def test_object_array_of_numbers_accepted():
    X = np.array([[1, 2.5], [0, 3]], dtype=object)
    np.testing.assert_array_equal(kgeo.pairwise_kernels(X, kernel="linear"),
                                  [[7.25, 7.5], [7.5, 9.0]])


@pytest.mark.parametrize("n_jobs", [0, 1.5, True, "2", -2.0])
def test_invalid_n_jobs(n_jobs):
    match = (rf"Invalid n_jobs {re.escape(repr(n_jobs))}, must be None or a nonzero integer "
             rf"\(-1: every CPU, -2: all CPUs but one, ...\)")
    with pytest.raises(ValueError, match=match):
        kgeo.pairwise_kernels(np.ones((2, 3)), kernel="linear", n_jobs=n_jobs)


@pytest.mark.parametrize("cpus", [1, 2, 8])
def test_negative_n_jobs_count_back_from_the_cpus_as_joblib(monkeypatch, cpus):
    """n_jobs below -1 means n_cpus + 1 + n_jobs (scikit-learn's and joblib's
    reading: -2 is all CPUs but one), and never fewer than one thread."""
    from kgeo import _pairwise

    monkeypatch.setattr(_pairwise, "available_threads", lambda: cpus)
    assert _pairwise.resolve_n_jobs(-1) == cpus
    assert _pairwise.resolve_n_jobs(-2) == max(1, cpus - 1)
    assert _pairwise.resolve_n_jobs(np.int64(-3)) == max(1, cpus - 2)
    assert _pairwise.resolve_n_jobs(-10**30) == 1
    X = np.random.default_rng(0).random((30, 5))
    np.testing.assert_array_equal(kgeo.pairwise_kernels(X, kernel="ngd", n_jobs=-2),
                                  kgeo.pairwise_kernels(X, kernel="ngd", n_jobs=1))


@pytest.mark.parametrize("env, expected", [
    (None, "all"), ("1", 1), ("2,1", 2), (" 3 ", 3), ("\t3\n", 3), ("+2", 2), ("3, 1", 3),
    ("1000000", "cap"), (str(2 ** 63 - 1), "cap")])
def test_n_jobs_none_follows_omp_num_threads(env, expected, monkeypatch):
    from kgeo._pairwise import _THREADS_PER_CPU, available_threads, resolve_n_jobs

    if env is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", env)
    want = {"all": available_threads(), "cap": _THREADS_PER_CPU * available_threads()}.get(
        expected, expected)
    assert resolve_n_jobs(None) == want
    # An explicit n_jobs wins over the environment.
    assert resolve_n_jobs(-1) == available_threads()
    assert resolve_n_jobs(1) == 1


# What libgomp itself rejects ("Invalid value for environment variable").
@pytest.mark.parametrize("env", ["0", "-1", "two", "1.5", "", " ", "4,0", "2,abc",
                                 "\u00b2", "\u0661", "4\u00a0", "\x1c4",
                                 "99999999999999999999", str(2 ** 63)])
def test_invalid_omp_num_threads_is_ignored_with_one_warning(env, monkeypatch):
    import kgeo._pairwise
    from kgeo._pairwise import available_threads, resolve_n_jobs

    monkeypatch.setattr(kgeo._pairwise, "_WARNED_OMP_VALUES", set())
    monkeypatch.setenv("OMP_NUM_THREADS", env)
    with pytest.warns(RuntimeWarning, match=rf"OMP_NUM_THREADS={re.escape(repr(env))} is not a "
                                            r"positive integer"):
        assert resolve_n_jobs(None) == available_threads()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process, as OpenMP reads it once
        assert resolve_n_jobs(None) == available_threads()


def _cgroup_tree(tmp_path, proc_lines, files):
    """A fake /proc/self/cgroup and cgroup mount: files maps paths under the
    mount to their contents."""
    root = tmp_path / "cgroup"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    root.mkdir(exist_ok=True)
    proc = tmp_path / "proc_cgroup"
    proc.write_text("".join(line + "\n" for line in proc_lines))
    return str(root), str(proc)


@pytest.mark.parametrize("proc_lines, files, expected", [
    # v2: the process's own cgroup, an ancestor's, the smallest of both, none.
    (["0::/a/b"], {"a/b/cpu.max": "150000 100000\n"}, 2),
    (["0::/a/b"], {"a/cpu.max": "50000 100000\n", "a/b/cpu.max": "max 100000\n"}, 1),
    (["0::/a/b"], {"a/cpu.max": "300000 100000\n", "a/b/cpu.max": "700000 100000\n"}, 3),
    (["0::/"], {"cpu.max": "max 100000\n"}, None),
    # In a container with its own cgroup namespace the process's cgroup is
    # "/" and the container's limit is the mount's own cpu.max: depth 0 counts.
    (["0::/"], {"cpu.max": "200000 100000\n"}, 2),
    (["0::/a"], {"cpu.max": "100000 100000\n", "a/cpu.max": "max 100000\n"}, 1),
    (["0::/a"], {"a/cpu.max": "garbage\n"}, None),
    # v1, as on this kind of host: the cpu controller's own hierarchy.
    (["4:memory:/x", "1:cpu,cpuacct:/docker/c1", "0::/"],
     {"cpu,cpuacct/docker/c1/cpu.cfs_quota_us": "200000\n",
      "cpu,cpuacct/docker/c1/cpu.cfs_period_us": "100000\n"}, 2),
    (["1:cpu:/"], {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
    (["1:cpu:/"], {"cpu/cpu.cfs_quota_us": "300000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 3),
    (["2:cpuacct,cpu:/k"], {"cpu/k/cpu.cfs_quota_us": "250000\n",
                           "cpu/k/cpu.cfs_period_us": "100000\n"}, 3),
    ([], {}, None),
])
def test_cgroup_cpu_quota(proc_lines, files, expected, tmp_path):
    from kgeo._pairwise import cgroup_cpu_quota

    root, proc = _cgroup_tree(tmp_path, proc_lines, files)
    assert cgroup_cpu_quota(root, proc) == expected


def test_cgroup_cpu_quota_without_proc(tmp_path):
    from kgeo._pairwise import cgroup_cpu_quota

    assert cgroup_cpu_quota(str(tmp_path), str(tmp_path / "missing")) is None

def _csr_with_column(column):
    """A 2 x 3 CSR matrix whose second entry sits in ``column`` (maybe out of range)."""
    return sp.csr_matrix((np.ones(2), np.array([0, column]), np.array([0, 1, 2])), shape=(2, 3))


def test_cgroup_quota_reads_the_cpu_hierarchy_only_for_the_cpu_controller(tmp_path):
    # A cgroup v1 line names its controllers as a comma-separated list; only
    # the "cpu" controller's cgroup path applies to the cpu hierarchy. The
    # cpuset controller (whose own hierarchy is not mounted here) sits at
    # /other, where the cpu hierarchy happens to hold a quota of one CPU; the
    # process's cpu cgroup is "/", without a quota.
    from kgeo._pairwise import cgroup_cpu_quota

    root, proc = _cgroup_tree(tmp_path, ["5:cpuset:/other", "3:cpuacct:/other", "1:cpu:/"], {
        "cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n",
        "cpu/other/cpu.cfs_quota_us": "100000\n", "cpu/other/cpu.cfs_period_us": "100000\n"})
    assert cgroup_cpu_quota(root, proc) is None


@pytest.mark.parametrize("files", [{"cpu.max": "100000 0\n"},
                                   {"cpu.max": "100000 -5\n"}])
def test_cgroup_quota_of_a_period_that_is_not_positive_is_no_quota(tmp_path, files):
    # A malformed cpu.max (a period of 0 or below) grants no quota that can be
    # read; it must not stop kgeo from choosing its threads.
    from kgeo._pairwise import cgroup_cpu_quota

    root, proc = _cgroup_tree(tmp_path, ["0::/"], files)
    assert cgroup_cpu_quota(root, proc) is None


def _csr_with_decreasing_indptr():
    X = _csr_with_column(1)
    X.indptr = np.array([0, 3, 2], dtype=X.indptr.dtype)
    return X


@pytest.mark.parametrize("kernel", ["linear", "ngd"])
@pytest.mark.parametrize("make, match", [
    (lambda: _csr_with_column(5), r"X is not a valid CSR sparse matrix: indices range over "
                                  r"\[0, 5\] but must lie in \[0, 2\]"),
    (lambda: _csr_with_column(-1), r"X is not a valid CSR sparse matrix: indices range over "
                                   r"\[-1, 0\]"),
    (lambda: sp.csc_matrix((np.ones(2), np.array([0, 7]), np.array([0, 1, 2])), shape=(3, 2)),
     r"X is not a valid CSC sparse matrix: indices range over \[0, 7\]"),
    (_csr_with_decreasing_indptr,
     r"X is not a valid CSR sparse matrix: indptr must start at 0 and never decrease"),
], ids=["csr_above", "csr_negative", "csc_above", "indptr"])
def test_sparse_indices_out_of_range_rejected(kernel, make, match):
    # SciPy does not check index arrays set by hand; kgeo's loops (and SciPy's
    # own conversions) would read and write outside memory.
    X = make()
    with pytest.raises(ValueError, match=match):
        kgeo.pairwise_kernels(X, kernel=kernel)
    with pytest.raises(ValueError, match=match.replace("X is", "Y is")):
        kgeo.pairwise_kernels(np.ones((1, X.shape[1])), X, kernel=kernel)


def test_coo_coordinates_out_of_range_rejected():
    X = sp.coo_matrix((np.ones(2), (np.array([0, 1]), np.array([0, 2]))), shape=(2, 3))
    X.col[1] = 9
    with pytest.raises(ValueError, match=r"X is not a valid COO sparse matrix: axis-1 indices "
                                         r"range over \[0, 9\] but must lie in \[0, 2\]"):
        kgeo.pairwise_kernels(X, kernel="linear")


def _with(X, **arrays):
    X = X.copy()
    for attr, value in arrays.items():
        setattr(X, attr, value)
    return X


_DENSE = np.array([[3.0, 0.0, 1.0], [2.0, 1.0, 0.0]])


@pytest.mark.parametrize("make, match", [
    (lambda: _with(sp.csr_matrix(_DENSE), indices=np.array([0.9, 2.9, 0.9, 1.9])),
     r"X is a CSR matrix whose indices must hold integers, got dtype float64"),
    (lambda: _with(sp.csr_matrix(_DENSE), indptr=np.array([0.0, 2.0, 4.0])),
     r"X is a CSR matrix whose indptr must hold integers"),
    (lambda: _with(sp.csr_matrix(_DENSE), data=[3.0, 1.0, 2.0, 1.0]),
     r"X is a CSR matrix whose data is a list, not a NumPy array"),
    (lambda: _coo_with_columns(np.array([0.7, 2.7, 0.7, 1.7])),
     r"X is a COO matrix whose coords\[1\] must hold integers"),
    (lambda: _lil_with_row(0, [0.5, 2.5]),
     r"X is a LIL matrix whose rows hold a column index that is not an integer: 0.5"),
], ids=["csr-float-indices", "csr-float-indptr", "csr-list-data", "coo-float-col", "lil"])
def test_sparse_arrays_that_are_not_integer_indices_are_refused(make, match):
    # SciPy read float indices truncated: column 0.9 was column 0, silently.
    with pytest.raises(TypeError, match=match):
        kgeo.pairwise_kernels(make(), kernel="linear")


def _coo_with_columns(columns):
    X = sp.coo_matrix(_DENSE)
    if hasattr(X, "coords"):  # SciPy >= 1.13: its col setter casts to the old dtype
        X.coords = (X.coords[0], columns)
    else:
        X.col = columns
    return X


def _lil_with_row(i, columns):
    X = sp.lil_matrix(_DENSE)
    X.rows[i] = columns
    return X


@pytest.mark.parametrize("kernel", ["linear", "rbf", "ned", "poly", "sigmoid"])
def test_overflowing_squared_norms_rejected(kernel):
    # |x|^2 = inf would make rbf 1 and ned 0 for distinct rows, silently.
    X = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0]]) * 1e200
    with pytest.raises(ValueError, match=rf"kernel '{kernel}' overflows float64 on X: a row's "
                                         rf"squared L2 norm is inf"):
        kgeo.pairwise_kernels(X, kernel=kernel, **({} if kernel in ("linear", "ned")
                                                   else {"gamma": 1.0}))


def test_large_but_representable_rows_are_exact():
    X = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0]])
    scale = 1e150
    np.testing.assert_allclose(kgeo.pairwise_kernels(X * scale, kernel="ned"),
                               kgeo.pairwise_kernels(X, kernel="ned") * scale, rtol=1e-14)


# RBF is not here: for close pairs exp(-gamma d^2) is near 1, and the
# cancellation's error, gamma * eps * |x|^2, stays far below 1e-12 on counts
# (the test after this one is RBF's).
@pytest.mark.parametrize("kernel, signed", [("ned", False), ("ned", True), ("ngd", False)])
def test_close_pairs_are_exact_to_a_few_ulps(kernel, signed):
    """Near-duplicate documents: ``|x|^2 + |y|^2 - 2 <x, y>`` (for NGD,
    ``1 - c``) cancels there down to its rounding, which the square root (the
    arccos) turns into ~1e-8 of the scale. kgeo takes such pairs from the
    rows' difference instead: NED, whose rows are the data, is then exact to
    a few ulps, even at a distance of 1e-12; NGD's rows are the
    rounded ``sqrt(x / sum(x))``, whose last bits bound it to a few ulps of
    the sphere's scale, 1."""
    rng = np.random.default_rng(11)
    X = rng.poisson(0.5, (12, 400)).astype(float)
    X[:, 0] += 1.0  # no empty row
    if signed:
        X *= rng.choice([-1.0, 1.0], X.shape)
    Y = X.copy()
    # Row r of Y: row r of X with one count moved by 1e-12 ... 1e-1 of itself.
    for r, exponent in enumerate(np.linspace(-12, -1, X.shape[0])):
        Y[r, 0] *= 1.0 + 10.0 ** exponent
    K = kgeo.pairwise_kernels(sp.csr_matrix(X), sp.csr_matrix(Y), kernel=kernel)
    ref = ref_kernel(kernel, X, Y)
    # All pairs: the close ones (the diagonal) and the far ones.
    np.testing.assert_allclose(K, ref, rtol=1e-12, atol=4 * EPS if kernel == "ngd" else 0)
    assert np.all(np.diag(K) < 0.0)


@pytest.mark.parametrize("kernel", ["ned", "rbf"])
def test_distances_of_rows_far_from_the_origin_are_exact(kernel):
    """Rows around 1e8: |x|^2 + |y|^2 - 2 <x, y> cancels ~16 digits, which
    left RBF off by up to 0.97 (sklearn's euclidean route has the same
    limit); every pair is close against the norms and takes the difference."""
    X = 1e8 + np.random.default_rng(1).normal(size=(30, 8))
    K = kgeo.pairwise_kernels(X, kernel=kernel, gamma=0.12) if kernel == "rbf" else \
        kgeo.pairwise_kernels(X, kernel=kernel)
    ref = ref_kernel(kernel, X, X, gamma=0.12)
    np.testing.assert_allclose(K, ref, rtol=1e-12, atol=0)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_huge_finite_counts_stay_on_the_simplex():
    X = np.array([[1e308, 1e308], [1.0, 1.0]])
    np.testing.assert_allclose(kgeo.pairwise_kernels(X, kernel="ngd"), np.zeros((2, 2)),
                               atol=ARCCOS_ATOL)


# --------------------------------------------------------------------------
# The vectorised arccos the geodesic kernels use
# --------------------------------------------------------------------------

def test_angle_from_gap_is_arccos_to_one_ulp():
    from kgeo._kernels import _angle_from_gap

    rng = np.random.default_rng(0)
    # Uniform gaps, gaps near 0 (close documents) and near 1 (disjoint ones),
    # and the branch point c = 1/2.
    gaps = np.concatenate([rng.random(200_000), rng.random(20_000) * 1e-6,
                           1 - rng.random(20_000) * 1e-6, [0.0, 0.5, 1.0],
                           np.nextafter(0.5, [0.0, 1.0])])
    angles = _angle_from_gap(gaps)
    # The C library's acos and asin (math), not NumPy's: NumPy 1.x's AVX-512
    # arccos is up to 2 ulp off the C library's.
    libm = np.frompyfunc(math.acos, 1, 1)
    reference = libm(1.0 - gaps).astype(float)
    # Where 1 - h is exact (h >= 1/4 here, Sterbenz) arccos(1 - h) is the
    # reference to compare with in ulps; for tiny h, compare with
    # 2 arcsin(sqrt(h / 2)), which needs no rounded 1 - h.
    exact = gaps >= 0.25
    ulp = np.spacing(np.maximum(reference[exact], np.finfo(float).tiny))
    assert np.max(np.abs(angles[exact] - reference[exact]) / ulp) <= 1.0
    small = ~exact
    half_angles = np.frompyfunc(math.asin, 1, 1)(np.sqrt(gaps[small] / 2)).astype(float)
    np.testing.assert_allclose(angles[small], 2 * half_angles, rtol=4e-16, atol=0)
    assert angles[gaps == 0.0][0] == 0.0


def test_kernel_rows_use_the_same_arccos_bits_as_the_scalar_one():
    """The kernel maps run a loop compiled for AVX2 or for the baseline (picked
    at load time); without fused multiply-adds both round like the scalar
    arccos, so NGD is -2 arccos(c) to the last bit, c its Bhattacharyya value."""
    from kgeo._kernels import _angle_from_gap

    rng = np.random.default_rng(3)
    # Enough rows for a block (and an accumulator) longer than any vector
    # loop's unrolling, with shared words of every frequency.
    X = sp.random(300, 60, density=0.3, random_state=rng, format="csr")
    X.data += 0.1
    X = X[np.asarray(X.sum(axis=1)).ravel() > 0]
    c = kgeo.pairwise_kernels(X, kernel="bhattacharyya")
    ngd = kgeo.pairwise_kernels(X, kernel="ngd")
    far = c < EXACT_GAP_FROM  # closer pairs take the exact-gap route
    assert far.sum() > 0.9 * far.size
    expected = -2.0 * _angle_from_gap(np.ascontiguousarray(1.0 - c[far]))
    assert np.array_equal(ngd[far], expected)


def _frequent_and_rare_words(rng, n, n_features, n_frequent, share, density):
    """Counts where n_frequent words are in about ``share`` of the rows (dense
    columns of a large block) and the rest at ``density`` (postings); no
    empty row, indices sorted."""
    frequent = (rng.random((n, n_frequent)) < share) * rng.integers(1, 9, (n, n_frequent))
    rare = sp.random(n, n_features - n_frequent, density=density, random_state=rng) * 7
    X = sp.hstack([sp.csr_matrix(frequent.astype(float)), rare], format="csr")
    X = X[np.asarray(X.sum(axis=1)).ravel() > 0]
    X.sort_indices()
    return X


@pytest.mark.parametrize("kernel", ["linear", "ngd", "ned"])
def test_dense_columns_change_no_bit_of_the_kernel_rows(kernel):
    """Frequent words are stored as dense columns of a block; blocks of
    fewer than 8 rows keep every word as postings. Both give the same bits."""
    from kgeo._kernels import PostingIndex, get_kernel, kernel_matrix
    from kgeo._pairwise import prepare_rows

    n_features = 300
    X = _frequent_and_rare_words(np.random.default_rng(7), 400, n_features, 5, 0.7, 0.02)
    k = get_kernel(kernel, n_features, 0.0)
    rows = prepare_rows(k, X)
    dense = PostingIndex(rows, np.array([0, 150, rows.n_rows]))
    sparse_only = PostingIndex(rows, np.r_[np.arange(0, rows.n_rows, 7), rows.n_rows])
    assert dense.n_dense >= 5 and sparse_only.n_dense == 0
    assert np.array_equal(kernel_matrix(k, rows, dense), kernel_matrix(k, rows, sparse_only))


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_simplex_rows_are_numpys_square_roots_bit_for_bit(n_threads):
    """prepare_rows gives the manifold kernels sqrt(x / max / sum(x / max)),
    the same bits as NumPy's element-wise route, on any number of threads;
    rows of huge finite values stay finite."""
    from kgeo._kernels import _PARALLEL_MIN_VALUES, get_kernel
    from kgeo._pairwise import prepare_rows

    rng = np.random.default_rng(3)
    n_rows = 3000
    # Above the size where the passes run in parallel; rows of 1-400 words.
    X = sp.random(n_rows, 2000, density=0.05, random_state=rng, format="csr") * 50
    X = X[np.diff(X.indptr) > 0]
    X.data[X.indptr[0]:X.indptr[1]] *= 1e305  # sums to inf unless divided by the max
    X.sort_indices()
    assert X.nnz >= _PARALLEL_MIN_VALUES
    lengths = np.diff(X.indptr)
    scaled = X.data / np.repeat(np.maximum.reduceat(X.data, X.indptr[:-1]), lengths)
    expected = np.sqrt(scaled / np.repeat(np.add.reduceat(scaled, X.indptr[:-1]), lengths))
    rows = prepare_rows(get_kernel("ngd", X.shape[1], 0.0), X, n_threads=n_threads)
    got = rows.arrays[0]
    assert np.all(np.isfinite(got))
    assert np.array_equal(got, expected)
    assert np.array_equal(np.asarray(rows.arrays[2]), X.indptr)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_square_roots_of_shares_below_float64s_range_keep_their_digits(n_threads):
    """A row whose counts span more than 1e308 has shares below float64's
    range (1e-400 of [1e200, 1e-200]) whose square roots are ordinary numbers
    (1e-200): the Bhattacharyya coefficients against other rows keep them,
    to 1e-15 of a 50-digit Decimal reference, instead of coming out 0 or
    with a subnormal's few digits."""
    from decimal import Decimal, localcontext

    from kgeo._kernels import _PARALLEL_MIN_VALUES

    rows = [[1e200, 1e-200, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [1.0, 5e-324, 3.0, 0.0],
            [0.0, 2.0, 0.0, 7.0], [1e300, 0.0, 3e-20, 1e-12], [1e-310, 0.0, 0.0, 4e-310]]
    # Enough copies for the passes to run in parallel when n_threads is 2.
    copies = -(-_PARALLEL_MIN_VALUES // 12)
    X = sp.csr_matrix(np.tile(np.array(rows), (copies, 1)))
    K = kgeo.pairwise_kernels(X, np.array(rows), kernel="bhattacharyya", n_jobs=n_threads)
    with localcontext() as context:
        context.prec = 50
        exact = [[c.sqrt() / sum(row, Decimal(0)).sqrt() for c in row]
                 for row in ([Decimal(v) for v in r] for r in rows)]
        for a in range(len(rows)):
            for b in range(len(rows)):
                expected = sum((x * y for x, y in zip(exact[a], exact[b])), Decimal(0))
                for copy in (0, copies - 1):
                    got = Decimal(K[copy * len(rows) + a, b])
                    assert abs(got - expected) <= Decimal("1e-15") * expected, (a, b)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_divide_rows_by_max_divides_by_each_rows_largest_value(n_threads):
    """Whatever the scale of a row (below 1, subnormal), its values come out
    divided by its own largest value: the largest becomes 1 exactly."""
    from kgeo._kernels import divide_rows_by_max

    X = sp.csr_matrix(np.array([[0.25, 0.5, 0.0, 0.1], [0.0, 3.0, 1.5, 0.0],
                                [1e-310, 0.0, 4e-310, 0.0], [0.0, 0.0, 0.0, 7e-3]]))
    got = divide_rows_by_max(X.data, X.indptr.astype(np.int64), n_threads)
    expected = np.concatenate([X.data[a:b] / X.data[a:b].max()
                               for a, b in zip(X.indptr[:-1], X.indptr[1:])])
    assert np.array_equal(got, expected)
    assert np.array_equal(np.maximum.reduceat(got, X.indptr[:-1]), np.ones(4))


def test_posting_index_is_the_same_built_by_any_number_of_threads():
    """Each block's lists are built by one thread: the index is the same for
    1, 2 or 3 threads, and holds exactly the block's nonzeros (a NumPy
    reference: the rows of a posting list in order, a dense column whole)."""
    from kgeo._kernels import PostingIndex, get_kernel
    from kgeo._pairwise import prepare_rows

    n_features = 60
    X = _frequent_and_rare_words(np.random.default_rng(11), 500, n_features, 4, 0.6, 0.05)
    rows = prepare_rows(get_kernel("linear", n_features, 0.0), X)
    # Large blocks, a short one (dense columns where 8 of its 30 rows or more
    # hold the word), an empty one.
    block_start = np.array([0, 200, 200, 230, rows.n_rows])
    built = [PostingIndex(rows, block_start, n_threads=t) for t in (1, 2, 3)]
    for other in built[1:]:
        assert other.n_dense == built[0].n_dense
        for a, b in zip(built[0].arrays, other.arrays, strict=True):
            np.testing.assert_array_equal(a, b)
    _, colptr, post_row, post_val, dense_ptr, dense_val = built[0].arrays
    data, indices, indptr, _ = rows.arrays
    X_rows = sp.csr_matrix((data, indices, indptr), shape=X.shape).toarray()
    n_dense = 0
    for b in range(len(block_start) - 1):
        block = X_rows[block_start[b]:block_start[b + 1]]
        for w in range(n_features):
            e = b * (n_features + 1) + w
            where = np.flatnonzero(block[:, w])
            if dense_ptr[e] >= 0:
                n_dense += 1
                assert where.size >= 8 and 8 * where.size >= len(block)
                np.testing.assert_array_equal(
                    dense_val[dense_ptr[e]:dense_ptr[e] + len(block)], block[:, w])
                assert colptr[e] == colptr[e + 1]
            else:
                assert where.size < 8 or 8 * where.size < len(block)
                np.testing.assert_array_equal(post_row[colptr[e]:colptr[e + 1]], where)
                np.testing.assert_array_equal(post_val[colptr[e]:colptr[e + 1]],
                                              block[where, w])
    assert n_dense == built[0].n_dense >= 4


@pytest.fixture
def hashed_heads_beyond():
    """Set the bound of PostingIndex's hashed list heads for one test."""
    from kgeo._kernels import _hashed_heads_beyond

    before = _hashed_heads_beyond(8)
    _hashed_heads_beyond(before)
    yield _hashed_heads_beyond
    _hashed_heads_beyond(before)


def test_hashed_list_heads_hold_every_blocks_lists(hashed_heads_beyond):
    """A hashed PostingIndex holds, per block, each of its words' postings
    (rows in order, values) at the head its hash table gives, and no slot for
    a word the block lacks (a NumPy reference): blocks empty, of one row,
    and of many rows sharing frequent words."""
    from kgeo._kernels import PostingIndex, get_kernel
    from kgeo._pairwise import prepare_rows

    n_features = 70
    X = _frequent_and_rare_words(np.random.default_rng(5), 300, n_features, 4, 0.6, 0.05)
    rows = prepare_rows(get_kernel("linear", n_features, 0.0), X)
    block_start = np.array([0, 1, 1, 40, 41, 200, rows.n_rows])
    hashed_heads_beyond(0)
    index = PostingIndex(rows, block_start)
    assert index.hashed and index.n_dense == 0
    _, post_row, post_val, heads, head_start, head_shift = index.arrays
    slots = heads.view(np.dtype([("word", "<i4"), ("count", "<i4"), ("start", "<i8")]))
    data, indices, indptr, _ = rows.arrays
    X_rows = sp.csr_matrix((data, indices, indptr), shape=X.shape).toarray()
    for b in range(len(block_start) - 1):
        table = slots[head_start[b]:head_start[b + 1]]
        size = len(table)
        assert size >= 2 and size & (size - 1) == 0 and 32 - head_shift[b] == size.bit_length() - 1
        block = X_rows[block_start[b]:block_start[b + 1]]
        present = np.flatnonzero(block.any(axis=0))
        assert 4 * present.size <= size
        assert sorted(table["word"][table["word"] >= 0]) == present.tolist()
        for w in range(n_features):
            # Linear probing from the word's Fibonacci hash.
            slot = ((w * 2654435769) % 2**32) >> int(head_shift[b])
            while table[slot]["word"] not in (w, -1):
                slot = (slot + 1) % size
            if w not in present:
                assert table[slot]["word"] == -1
                continue
            start, count = table[slot]["start"], table[slot]["count"]
            where = np.flatnonzero(block[:, w])
            np.testing.assert_array_equal(post_row[start:start + count], where)
            np.testing.assert_array_equal(post_val[start:start + count], block[where, w])


@pytest.mark.parametrize("kernel", ["linear", "ngd", "ned", "bhattacharyya"])
def test_hashed_list_heads_change_no_bit_of_the_kernel_rows(kernel, hashed_heads_beyond):
    """Blocks that find their lists by hash give the same kernel rows, bit
    for bit, as the tables with or without dense columns."""
    from kgeo._kernels import PostingIndex, get_kernel, kernel_matrix
    from kgeo._pairwise import prepare_rows

    n_features = 300
    X = _frequent_and_rare_words(np.random.default_rng(9), 400, n_features, 5, 0.7, 0.02)
    k = get_kernel(kernel, n_features, 0.0)
    rows = prepare_rows(k, X)
    tables = PostingIndex(rows, np.array([0, 150, rows.n_rows]))
    assert tables.n_dense >= 5 and not tables.hashed
    hashed_heads_beyond(0)
    for block_start in ([0, 150, rows.n_rows], np.r_[np.arange(0, rows.n_rows, 3), rows.n_rows]):
        hashed = PostingIndex(rows, np.array(block_start))
        assert hashed.hashed
        assert np.array_equal(kernel_matrix(k, rows, hashed), kernel_matrix(k, rows, tables))


def test_hashed_list_heads_read_only_the_rows_entries(hashed_heads_beyond):
    """A RowSet's arrays may hold entries around its rows' (indptr not from
    0): the hashed index reads only the rows', like the tables."""
    from kgeo._kernels import PostingIndex, RowSet, get_kernel, kernel_matrix

    data = np.array([9.0, 9.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 99.0])
    indices = np.array([4, 4, 0, 3, 1, 2, 0, 4, 1], dtype=np.int32)
    rows = RowSet(data, indices, np.array([2, 4, 6, 8], dtype=np.int64), 5)
    k = get_kernel("linear", 5, 0.0)
    tables = PostingIndex(rows, np.array([0, 1, 3]))
    hashed_heads_beyond(0)
    hashed = PostingIndex(rows, np.array([0, 1, 3]))
    assert hashed.hashed and not tables.hashed
    expected = np.array([[5.0, 0.0, 5.0], [0.0, 25.0, 0.0], [5.0, 0.0, 61.0]])
    assert np.array_equal(kernel_matrix(k, rows, tables), expected)
    assert np.array_equal(kernel_matrix(k, rows, hashed), expected)


def test_posting_index_refuses_block_starts_that_do_not_rise_from_0_to_the_rows():
    """block_start must be 1-D, rise (an empty block is a block) and run
    from 0 to the rows' count."""
    from kgeo._kernels import PostingIndex, RowSet

    rows = RowSet(np.ones(4), np.zeros(4, dtype=np.int32), np.arange(5, dtype=np.int64), 1)
    PostingIndex(rows, np.array([0, 2, 2, 4]))
    for bad in ([0, 3, 2, 4], [1, 4], [0, 3], [0, 5], [4], [[0, 4]]):
        with pytest.raises(ValueError, match="block_start must increase from 0 to 4"):
            PostingIndex(rows, np.array(bad))


def test_many_small_classes_hash_their_list_heads(hashed_heads_beyond):
    """One-vs-one over many small classes keeps its posting index within a
    few times the postings (the tables would take n_classes * n_features
    entries), and trains the same SVM as with the tables."""
    from kgeo._kernels import PostingIndex, get_kernel
    from kgeo._pairwise import prepare_rows
    from kgeo._synthetic import make_topic_corpus

    X, y = make_topic_corpus(n_documents=400, n_features=5000, n_classes=100,
                             words_per_document=30, random_state=3)
    rows = prepare_rows(get_kernel("ngd", X.shape[1], 0.0), X[np.argsort(y, kind="stable")])
    index = PostingIndex(rows, np.r_[0, np.cumsum(np.bincount(y))])
    assert index.hashed
    # Postings (12 bytes) and heads (16 bytes a slot, at most 8 per posting).
    assert index.nbytes <= 12 * X.nnz + 128 * X.nnz + 8 * 101 + 4 * 100
    assert 100 * 5001 * 16 > 5 * index.nbytes  # the tables: 8 MB
    hashed = kgeo.SVM(kernel="ngd").fit(X, y)
    hashed_heads_beyond(1 << 30)
    tables = kgeo.SVM(kernel="ngd").fit(X, y)
    for attribute in ("support_", "dual_coef_", "intercept_", "n_iter_"):
        assert np.array_equal(getattr(hashed, attribute), getattr(tables, attribute))


def test_one_dimensional_sparse_input_rejected():
    one_dimensional = sp.csr_array(np.array([1.0, 0.0, 2.0]))
    if one_dimensional.ndim != 1:  # SciPy before 1.14 makes it a row, shape (1, 3)
        import scipy

        pytest.skip(f"SciPy {scipy.__version__} has no 1-D sparse arrays")
    with pytest.raises(ValueError, match=r"Expected a 2D array for X, got a 1D sparse array"):
        kgeo.pairwise_kernels(one_dimensional, kernel="linear")


def _weighted_sums_case(kernel, n_x, n_y, n_r, seed):
    from kgeo._kernels import get_kernel
    from kgeo._pairwise import prepare_rows, single_block

    rng = np.random.default_rng(seed)
    n_features = 200

    def counts(n):
        X = sp.random(n, n_features, density=0.05, random_state=rng, format="csr") * 9
        X = sp.csr_matrix(X + sp.csr_matrix((np.ones(n), (np.arange(n), np.zeros(n))),
                                            shape=(n, n_features)))  # no empty row
        X.sort_indices()
        return X

    k = get_kernel(kernel, n_features, 0.0)
    X_rows, Y_rows = prepare_rows(k, counts(n_x)), prepare_rows(k, counts(n_y))
    weights = rng.normal(size=(n_y, n_r))
    return k, X_rows, single_block(Y_rows), weights


@pytest.mark.parametrize("kernel", ["ngd", "linear", "rbf"])
def test_weighted_sums_match_the_kernel_matrix_product(kernel):
    """Prediction's fused routine: the kernel matrix weighed segment by
    segment, without storing it; row counts that are not multiples of the
    task size, an empty segment, and the same bits on 1 and 2 threads."""
    from kgeo._kernels import kernel_matrix, kernel_weighted_sums

    # 603 x 520 values: above the size where threads start.
    k, X_rows, Y, weights = _weighted_sums_case(kernel, 603, 520, 5, seed=3)
    segment_start = np.array([0, 130, 130, 400, 520])
    K = kernel_matrix(k, X_rows, Y)
    expected = np.stack([K[:, a:b] @ weights[a:b] for a, b in
                         zip(segment_start[:-1], segment_start[1:])], axis=1)
    one, largest_one = kernel_weighted_sums(k, X_rows, Y, segment_start, weights, 1)
    two, largest_two = kernel_weighted_sums(k, X_rows, Y, segment_start, weights, 2)
    assert one.shape == (603, 4, 5)
    np.testing.assert_allclose(one, expected, rtol=1e-12, atol=1e-12 * np.abs(K).max())
    assert np.array_equal(one[:, 1], np.zeros((603, 5)))  # the empty segment
    assert one.tobytes() == two.tobytes()
    # Each row's own largest |k|: a row's rounding bound in prediction.
    np.testing.assert_array_equal(largest_one, np.abs(K).max(axis=1))
    assert largest_one.tobytes() == largest_two.tobytes()


@pytest.mark.parametrize("n_r", [1, 3, 4, 8, 13, 19])
def test_weighted_sums_add_in_the_order_of_the_rows(n_r):
    """Each weighted sum is ``0.0 + k_0 w_0 + k_1 w_1 + ...`` in the order
    of Y's rows, whatever tile of rows and columns computed it (tiles of
    4 rows and 8, 4 or 1 columns): the same bits as that loop in NumPy."""
    from kgeo._kernels import kernel_matrix, kernel_weighted_sums

    k, X_rows, Y, weights = _weighted_sums_case("ngd", 83, 150, n_r, seed=n_r)
    segment_start = np.array([0, 1, 1, 70, 150])
    K = kernel_matrix(k, X_rows, Y)
    sums, _ = kernel_weighted_sums(k, X_rows, Y, segment_start, weights, 2)
    for g, (a, b) in enumerate(zip(segment_start[:-1], segment_start[1:])):
        expected = np.zeros((83, n_r))
        for j in range(a, b):
            expected += K[:, j, None] * weights[j]
        assert sums[:, g].tobytes() == expected.tobytes(), f"segment {g}"


def test_weighted_sums_refuse_mismatched_segments_and_weights():
    from kgeo._kernels import kernel_weighted_sums

    k, X_rows, Y, weights = _weighted_sums_case("ngd", 10, 12, 2, seed=4)
    with pytest.raises(ValueError, match=r"segment_start must increase from 0 to 12"):
        kernel_weighted_sums(k, X_rows, Y, np.array([0, 5, 11]), weights)
    with pytest.raises(ValueError, match=r"segment_start must increase from 0 to 12"):
        kernel_weighted_sums(k, X_rows, Y, np.array([0, 7, 5, 12]), weights)
    with pytest.raises(ValueError, match=r"weights must have one row per row of Y \(12\), got 11"):
        kernel_weighted_sums(k, X_rows, Y, np.array([0, 12]), weights[:11])


def test_weighted_sums_refuse_segments_that_do_not_start_at_0():
    """Segments must cover every row of Y: one starting past row 0 (or no
    offsets at all) is refused, for kernel rows computed or given."""
    from kgeo._kernels import kernel_weighted_sums, weighted_sums_of_values

    k, X_rows, Y, weights = _weighted_sums_case("ngd", 10, 12, 2, seed=4)
    for bad in (np.array([3, 12]), np.array([1, 5, 12]), np.array([], dtype=np.int64)):
        with pytest.raises(ValueError, match=r"segment_start must increase from 0 to 12"):
            kernel_weighted_sums(k, X_rows, Y, bad, weights)
        with pytest.raises(ValueError, match=r"segment_start must increase from 0 to 12"):
            weighted_sums_of_values(np.ones((4, 12)), bad, weights)


@pytest.mark.parametrize("kernel", sorted(PARAMS))
def test_dense_rows_in_blocks_give_the_bits_of_one_row_at_a_time(kernel):
    """Dense rows of Y are indexed in blocks of about 256 KB, which groups of
    rows of X meet in turn (2-2.4x faster past the L3 cache); each value is
    the one a single row of Y, one block, gives. Some rows of X repeat rows
    of Y, whose close pairs take the exact route inside a block."""
    rng = np.random.default_rng(7)
    Y = rng.random((300, 400)) + 0.01
    X = np.vstack([rng.random((20, 400)) + 0.01, Y[[0, 149, 299]]])
    from kgeo._pairwise import _blocks_of

    assert len(_blocks_of(sp.csr_matrix(Y))) > 3  # the blocked route is the one tested
    K = kgeo.pairwise_kernels(X, Y, kernel=kernel, **PARAMS[kernel])
    for j in range(Y.shape[0]):
        column = kgeo.pairwise_kernels(X, Y[j:j + 1], kernel=kernel, **PARAMS[kernel])
        np.testing.assert_array_equal(K[:, j:j + 1], column)


# ==========================================================================
# Found by mutation testing (38 mutants of _kernels.pyx and _pairwise.py):
# changes the tests above let through
# ==========================================================================

_EPS = np.finfo(np.float64).eps


def _near_duplicates_with_extra_words(seed=5, n_rows=10, n_features=400):
    """X: long float-count rows that never use the last two columns; Y: X
    with a small count added in a column the row lacks: the last column
    (a tail the merge of the two rows reads after the other row ends) for
    even rows, a middle column for odd rows. Every pair (x_r, y_r) is a
    close pair (Bhattacharyya coefficient >= 0.9999, squared distance
    below 1e-4 of |x|^2 + |y|^2)."""
    rng = np.random.default_rng(seed)
    # Sparse (40 % nonzero): not centred by pairwise_kernels, whose centring
    # of mostly nonzero rows would make these pairs no longer close.
    X = rng.poisson(0.5, (n_rows, n_features)).astype(float) * 10.0
    X[:, 0] += 1.0
    X[:, -2:] = 0.0
    Y = X.copy()
    for r in range(n_rows):
        free = np.flatnonzero(X[r, :-2] == 0)
        col = n_features - 1 if r % 2 == 0 else free[len(free) // 2]
        Y[r, col] = 0.02 * (r + 1)
    return X, Y


@pytest.mark.parametrize("kernel", ["ned", "ngd", "rbf", "ngd_exp", "diffusion"])
@pytest.mark.parametrize("swap", [False, True], ids=["Y_longer", "X_longer"])
def test_close_pairs_with_words_only_one_row_has_are_exact(kernel, swap):
    """Close pairs take their distance from the merge of the two rows
    (exact_gap); the words only one of them has, including those after the
    other row's last word, are part of that distance (the existing close-pair
    tests only move counts both rows have)."""
    X, Y = _near_duplicates_with_extra_words()
    if swap:
        X, Y = Y, X
    params = {"rbf": {"gamma": 0.5}, "ngd_exp": {"t": 0.01},
              "diffusion": {"t": 1e-5}}.get(kernel, {})
    K = kgeo.pairwise_kernels(sp.csr_matrix(X), sp.csr_matrix(Y), kernel=kernel, **params)
    ref = ref_kernel(kernel, X, Y, **params)
    if kernel not in ("ned", "rbf"):  # every (x_r, y_r) is on the close-pair route
        assert np.all(np.diag(ref_kernel("bhattacharyya", X, Y)) >= 0.9999)
    if kernel == "ngd":
        # the rows' sqrt(p) carry a few ulps of the sphere's scale, 1
        np.testing.assert_allclose(K, ref, rtol=1e-12, atol=4 * _EPS)
    else:
        np.testing.assert_allclose(K, ref, rtol=1e-12, atol=0)
    assert np.all(np.diag(K) != np.diag(kgeo.pairwise_kernels(X, kernel=kernel, **params)))


def _long_and_short_rows(rng, n_features):
    """x with 2,000 words, 100 heavy and 1,900 light, and y with x's 100
    heavy ones, perturbed (Bhattacharyya's c about 0.995); and the light
    words' columns."""
    x, y = np.zeros(n_features), np.zeros(n_features)
    core = rng.choice(n_features, 100, replace=False)
    counts = rng.integers(50, 200, 100).astype(float)
    x[core] = counts
    light = np.setdiff1d(np.arange(n_features), core)[:1900]
    x[light] = rng.integers(1, 3, 1900) * rng.uniform(0.01, 0.05)
    y[core] = counts * rng.uniform(0.9, 1.1, 100)
    return x, y, light


@pytest.mark.parametrize("kernel", ["ngd", "bhattacharyya", "ngd_exp", "diffusion"])
def test_geodesic_kernels_of_rows_of_very_different_lengths_are_symmetric(kernel):
    """A close pair takes the exact route (the merge of the two rows) from
    the bound of the shorter row: the same route, and the same bits, for
    k(x, y) and k(y, x). Here x has 2,000 words, 1,900 of them light, y
    only x's 100 heavy ones (Bhattacharyya's c about 0.995): a mutation
    review found the route chosen from x's bound alone unnoticed, which
    gave 38 of 40 such pairs two values (-0.19836508861890614 against
    -0.19836508861891297)."""
    rng = np.random.default_rng(3)
    asymmetric = 0
    for trial in range(10):
        x, y, _ = _long_and_short_rows(rng, 3000)
        rows = sp.csr_matrix(np.vstack([x, y]))
        forward = kgeo.pairwise_kernels(rows[0], rows[1], kernel=kernel)[0, 0]
        backward = kgeo.pairwise_kernels(rows[1], rows[0], kernel=kernel)[0, 0]
        asymmetric += forward != backward
        gram = kgeo.pairwise_kernels(rows, kernel=kernel)
        assert gram[0, 1] == gram[1, 0]
        np.testing.assert_allclose(forward, ref_kernel(kernel, rows[:1].toarray(),
                                                       rows[1:].toarray())[0, 0],
                                   rtol=1e-12)
    assert asymmetric == 0


@pytest.mark.parametrize("kernel, t", [("ngd_exp", 0.05), ("diffusion", 1e-4),
                                       ("ngd_exp", 0.3), ("diffusion", 3e-4)])
@pytest.mark.parametrize("normalize", [False, True])
def test_close_pairs_of_heat_kernels_match_the_reference(kernel, t, normalize):
    """ngd_exp and diffusion on near-duplicate documents (angles 1e-5..1e-2,
    all on the exact close-pair route): exp(log_scale - a / t) and
    exp(log_scale - a^2 / t) must match the reference there too, not only
    at angle 0 (the diagonal), where every map gives the same value."""
    rng = np.random.default_rng(21)
    n_features = 6
    X = rng.integers(1, 50, (8, n_features)).astype(float) * 1000.0
    Y = X.copy()
    for r, exponent in enumerate(np.linspace(-5, -2.3, X.shape[0])):
        Y[r, r % n_features] *= 1.0 + 10.0 ** exponent
    K = kgeo.pairwise_kernels(X, Y, kernel=kernel, t=t, normalize=normalize)
    ref = ref_kernel(kernel, X, Y, t=t, normalize=normalize)
    c = ref_kernel("bhattacharyya", X, Y)
    assert np.all(np.diag(c) >= 0.9999) and np.all(np.diag(c) < 1.0)  # the close route
    np.testing.assert_allclose(K, ref, rtol=1e-9, atol=0)


@pytest.mark.parametrize("kernel", ["ned", "rbf", "linear", "poly", "sigmoid"])
def test_squared_norms_above_a_quarter_of_the_float64_maximum_are_refused(kernel):
    """|x|^2 + |y|^2 + 2 |<x, y>| must stay finite: prepare_rows refuses a row
    whose squared norm is above max / 4 (0.3 max here, finite itself: the
    existing test only uses an infinite one), where NED of x and -x came
    out -inf."""
    s = np.sqrt(0.3 * np.finfo(np.float64).max)
    X = np.array([[s, 0.0], [-s, 0.0]])
    with pytest.raises(ValueError, match=r"overflows float64 on X: a row's squared L2 norm"):
        kgeo.pairwise_kernels(X, kernel=kernel, **({} if kernel in ("linear", "ned")
                                                   else {"gamma": 1e-300}))


def test_pairwise_ned_refuses_rows_whose_squares_underflow():
    """As SVM.fit does: rows whose squared norms are all subnormal would all be
    at distance 0. Rows that are exactly 0 are at distance 0, rightly."""
    with pytest.raises(ValueError, match="kernel 'ned' underflows float64 on X"):
        kgeo.pairwise_kernels(np.array([[1e-160, 0.0], [0.0, 1e-160]]), kernel="ned")
    np.testing.assert_array_equal(kgeo.pairwise_kernels(np.zeros((2, 2)), kernel="ned"),
                                  np.zeros((2, 2)))


@pytest.mark.parametrize("degree", [2, 3, 4, 5])
def test_poly_overflow_anywhere_in_a_kernel_row_is_an_error(degree):
    """A row's overflow is flagged wherever it is in the row, not only in
    its last value: k(x0, x0) = (1e220)^degree (or (4e154)^2) is beyond
    float64, k(x0, x1) = 0 (degrees 2-4 by products, others by pow)."""
    X = np.array([[1e110 if degree > 2 else 2e77, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"kernel 'poly' overflows float64 on some pair of "
                                         r"rows of X"):
        kgeo.pairwise_kernels(X, kernel="poly", gamma=1.0, coef0=0.0, degree=degree)


@pytest.mark.parametrize("degree", [1, 2, 3, 4, 5, 7])
def test_poly_small_degrees_are_products_within_two_ulps_of_pow(degree, rng):
    """Degrees 2-4 are computed by products, as libsvm does (b b, (b b) b,
    (b b)(b b), the same bits as NumPy's products), the others by pow; all
    within 2 ulps of NumPy's power of the same base, signed bases
    included."""
    X = rng.standard_normal((30, 6))
    Y = rng.standard_normal((20, 6))
    K = kgeo.pairwise_kernels(X, Y, kernel="poly", gamma=0.7, coef0=-0.3, degree=degree)
    base = 0.7 * kgeo.pairwise_kernels(X, Y, kernel="linear") + -0.3
    by_products = {2: lambda b: b * b, 3: lambda b: b * b * b,
                   4: lambda b: (b * b) * (b * b)}
    if degree in by_products:
        np.testing.assert_array_equal(K, by_products[degree](base))
    reference = np.power(base, degree)
    assert np.all(np.abs(K - reference) <= 2 * np.spacing(np.abs(reference)))


def test_pairwise_shift_that_overflows_is_an_error_not_inf():
    X = np.array([[6.3e153]])  # squared norm 4e307: within what the kernels carry
    with pytest.raises(ValueError, match=r"plus shift=1.7e\+308 overflows float64"):
        kgeo.pairwise_kernels(X, kernel="linear", shift=1.7e308)


def test_rows_that_centring_would_push_out_of_range_are_computed_as_given():
    """Three rows at c = 1.5 * 2**510 and one at -c: every squared norm is
    within the max / 4 the kernels carry, but centred by the column mean
    c / 2 the last row's square is not. NED is then computed on the rows as
    given (exactly: the distances are 0 and 2c), not refused."""
    c = 1.5 * 2.0 ** 510
    X = np.array([[c, 1.0], [c, 1.0], [c, 1.0], [-c, 1.0]])
    expected = np.zeros((4, 4))
    expected[3, :3] = expected[:3, 3] = -2.0 * c
    np.testing.assert_array_equal(kgeo.pairwise_kernels(X, kernel="ned"), expected)


def test_bhattacharyya_never_exceeds_one():
    """sum sqrt(p q) <= 1 (Cauchy-Schwarz); rounding puts some diagonal sums
    a few ulps above 1, which the kernel clips (kernel_matrix and the
    diagonal the solver reads)."""
    from kgeo._kernels import get_kernel, kernel_diagonal
    from kgeo._pairwise import prepare_rows

    rng = np.random.default_rng(123)
    X = sp.random(300, 60, density=0.3, random_state=rng, format="csr") * 9
    X = sp.csr_matrix(X + sp.csr_matrix((np.ones(300), (np.arange(300), rng.integers(0, 60, 300))),
                                        shape=(300, 60)))
    K = kgeo.pairwise_kernels(X, kernel="bhattacharyya")
    assert K.max() <= 1.0
    # the data do reach the clip: some rows' sum of p (their sqrt squared) rounds above 1
    rows = prepare_rows(get_kernel("bhattacharyya", 60, 0.0), X)
    assert np.any(rows.squared_norms > 1.0)
    assert kernel_diagonal(get_kernel("bhattacharyya", 60, 0.0), rows).max() <= 1.0


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs x87 long double")
def test_arccos_below_one_half_is_within_0_8_ulp():
    """The c < 1/2 branch, pi/2 - asin(c) with pi/2 in a high and a low part,
    is within 0.77 ulp of arccos (a long-double reference, exact 1 - h);
    without the low part of pi/2 it reaches 1.04 ulp and its mean error
    grows by a third, still within the existing test's 1 ulp. At c = 1/2
    both branches are faithful; the kernel's is the C library's value."""
    import math

    from kgeo._kernels import _angle_from_gap

    rng = np.random.default_rng(0)
    h = 0.5 + 0.5 * rng.random(400_000)  # c = 1 - h in (0, 1/2)
    angles = _angle_from_gap(h)
    ref = np.arccos(1.0 - h.astype(np.longdouble))
    err = np.abs((angles.astype(np.longdouble) - ref)
                 / np.spacing(ref.astype(np.float64)).astype(np.longdouble)).astype(float)
    assert err.max() <= 0.8
    assert err.mean() <= 0.3
    assert _angle_from_gap(np.array([0.5]))[0] == math.acos(0.5)


def test_a_column_in_exactly_one_eighth_of_a_block_is_dense():
    """The dense-column rule is 'in at least 1/8 of a block's rows' (and in
    8 rows or more): a column in exactly 8 of 64 rows is dense, and the count
    n_dense is the number of dense (block, column) pairs in dense_ptr.
    Kernel values are the same bits either way."""
    from kgeo._kernels import PostingIndex, get_kernel, kernel_matrix
    from kgeo._pairwise import prepare_rows

    n_rows, n_features = 64, 10
    D = np.zeros((n_rows, n_features))
    D[np.arange(n_rows), 1 + np.arange(n_rows) % 9] = 1.0  # columns 1..9: 7 or 8 rows each
    D[::8, 0] = 2.0  # column 0: exactly 8 rows = 1/8
    D[:7, 9] = 0.0
    X = sp.csr_matrix(D)
    X.sort_indices()
    k = get_kernel("linear", n_features, 0.0)
    rows = prepare_rows(k, X)
    index = PostingIndex(rows, np.array([0, n_rows]))
    dense_ptr = index.arrays[4]
    counts = np.diff(X.tocsc().indptr)
    assert np.array_equal(dense_ptr[:n_features] >= 0, counts * 8 >= n_rows)
    assert dense_ptr[0] >= 0
    assert index.n_dense == np.count_nonzero(dense_ptr >= 0)
    sparse_only = PostingIndex(rows, np.arange(0, n_rows + 1, 4))
    assert sparse_only.n_dense == 0
    assert np.array_equal(kernel_matrix(k, rows, index), kernel_matrix(k, rows, sparse_only))


def test_a_short_block_stores_columns_of_8_rows_or_more_dense():
    """A block shorter than 64 rows keeps the 1/8 rule, but a column needs 8
    rows of it to be dense: in the blocks of a few documents of many small
    classes a word of one row in five stays a posting, while the columns of
    a short block of dense rows (24 support vectors, pairwise_kernels'
    blocks of 32 rows of 1,000 features) are dense. The same bits."""
    from kgeo._kernels import PostingIndex, get_kernel, kernel_matrix
    from kgeo._pairwise import prepare_rows

    n_rows, n_features = 20, 5
    D = np.zeros((n_rows, n_features))
    D[:7, 0] = 1.5  # 7 of 20 rows: over 1/8, but under 8 rows
    D[:8, 1] = 2.0  # 8 of 20 rows: dense
    D[:, 2] = np.arange(1.0, n_rows + 1)  # every row: dense
    D[::5, 3] = 0.5  # 4 rows: postings
    D[0, 4] = 3.0
    X = sp.csr_matrix(D)
    k = get_kernel("linear", n_features, 0.0)
    rows = prepare_rows(k, X)
    dense_ptr = PostingIndex(rows, np.array([0, n_rows])).arrays[4][:n_features]
    assert np.array_equal(dense_ptr >= 0, [False, True, True, False, False])
    # rows 7-19: column 2 alone (the first block is too short; column 1 has one row here)
    assert PostingIndex(rows, np.array([0, 7, n_rows])).n_dense == 1
    queries = prepare_rows(k, sp.csr_matrix(np.random.default_rng(5).normal(size=(6, 5))))
    data, indices, indptr, _ = queries.arrays
    Q = sp.csr_matrix((data, indices, indptr), shape=(6, n_features)).toarray()
    reference = np.zeros((6, n_rows))  # a NumPy sum, word after word
    for w in range(n_features):
        reference += Q[:, [w]] * D[:, w]
    got = kernel_matrix(k, queries, PostingIndex(rows, np.array([0, n_rows])))
    assert np.array_equal(got, reference)
    assert np.array_equal(got, kernel_matrix(k, queries, PostingIndex(rows, np.arange(n_rows + 1))))


def test_a_coefficient_exactly_at_the_close_pair_bound():
    """A Bhattacharyya coefficient of exactly NEAR_ONE = EXACT_GAP_FROM (a
    one-word row against (1, t) with sqrt(1 / (1 + t)) == NEAR_ONE in
    float64) is a close pair: it must be counted, taken by the exact route
    and cleared from the accumulator, or it leaks into the next row's dot
    products."""
    bound = EXACT_GAP_FROM
    t = 1 / bound ** 2 - 1
    assert np.sqrt(1.0 / (1.0 + t)) == bound
    from kgeo._kernels import get_kernel
    from kgeo._pairwise import prepare_rows

    rows = prepare_rows(get_kernel("ngd", 3, 0.0), sp.csr_matrix([[1.0, t, 0.0]]))
    assert rows.arrays[0][0] == bound  # the dot product with (1, 0, 0) is exactly the bound
    # row 1 shares no word with Y (true c = 0): a leaked coefficient would show
    X = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    Y = np.array([[1.0, t, 0.0]])
    for kernel in ("ngd", "ngd_exp", "diffusion"):
        K = kgeo.pairwise_kernels(X, Y, kernel=kernel)
        np.testing.assert_allclose(K, ref_kernel(kernel, X, Y), rtol=1e-12, atol=4 * _EPS)
        for i in range(len(X)):  # each row as alone
            assert np.array_equal(K[i], kgeo.pairwise_kernels(X[i:i + 1], Y, kernel=kernel)[0])


# ==========================================================================
# Found by a second round of mutation testing (_kernels.pyx, deeper): changes
# the tests above let through
# ==========================================================================

@pytest.mark.parametrize("kernel", ["ngd", "ngd+pi", "ngd_exp", "diffusion", "ned", "rbf"])
@pytest.mark.parametrize("shift", [2.5, -1.25, np.pi])
def test_shift_adds_exactly_the_constant_to_close_pairs(kernel, shift):
    """The shift is the last operation of every route, the exact one of close
    pairs too (``at_angle``, ``at_gap``): K(shift) is K + shift bit for bit on
    near-duplicate documents, whose values (unlike the diagonal's, at angle
    and distance 0) are not the same whatever order the terms are added in.
    test_shift_adds_exactly_the_constant has no close pair off the diagonal."""
    X, Y = _near_duplicates_with_extra_words()
    params = {"rbf": {"gamma": 0.5}, "ngd_exp": {"t": 0.01},
              "diffusion": {"t": 1e-5}}.get(kernel, {})
    c = ref_kernel("bhattacharyya", X, Y)
    assert np.all(np.diag(c) >= 0.9999) and np.all(np.diag(c) < 1.0)  # the close route
    K = kgeo.pairwise_kernels(sp.csr_matrix(X), sp.csr_matrix(Y), kernel=kernel, **params)
    K_shifted = kgeo.pairwise_kernels(sp.csr_matrix(X), sp.csr_matrix(Y), kernel=kernel,
                                      shift=shift, **params)
    assert np.array_equal(K_shifted, K + shift)


@pytest.mark.parametrize("side", ["below", "above"])
def test_coefficients_on_either_side_of_the_close_pair_bound_take_their_route(side):
    """Pairs with a Bhattacharyya coefficient just below NEAR_ONE get NGD as
    -2 arccos(c) of the summed coefficient c, bit for bit (the arccos
    route); from the bound up, from the rows' difference (``exact_gap``), as
    documented. test_kernel_rows_use_the_same_arccos_bits_as_the_scalar_one
    has no pair near the bound."""
    from kgeo._kernels import _angle_from_gap

    rng = np.random.default_rng(2)
    X = rng.poisson(0.5, (40, 400)).astype(float)  # rows of under 256 words
    X[:, 0] += 1.0
    Y = X.copy()
    # c = 1 - O(share^2): the rows' first counts moved by a growing factor
    Y[:, 0] *= 1.0 + (np.linspace(0.3, 3.0, len(X)) if side == "below"
                      else np.linspace(0.01, 0.1, len(X)))
    c = np.diag(kgeo.pairwise_kernels(X, Y, kernel="bhattacharyya"))  # X_i against Y_i
    if side == "below":
        band = (c >= 0.999) & (c < EXACT_GAP_FROM)
    else:
        band = c >= EXACT_GAP_FROM
    assert band.sum() >= 5
    ngd = np.diag(kgeo.pairwise_kernels(X, Y, kernel="ngd"))[band]
    by_dot_product = -2.0 * _angle_from_gap(np.ascontiguousarray(1.0 - c[band]))
    if side == "below":
        assert np.array_equal(ngd, by_dot_product)
    else:
        gaps = 0.5 * np.sum((np.sqrt(X / X.sum(1, keepdims=True))
                             - np.sqrt(Y / Y.sum(1, keepdims=True))) ** 2, axis=1)
        from_difference = -2.0 * _angle_from_gap(np.ascontiguousarray(gaps[band]))
        # (the gaps summed in another order: an absolute error of order 1e-17)
        np.testing.assert_allclose(ngd, from_difference, rtol=0, atol=1e-16)
        assert not np.array_equal(ngd, by_dot_product)


@pytest.mark.parametrize("kernel", sorted(PARAMS) + ["hyperbolic"])
def test_kernel_diagonal_is_the_diagonal_of_the_kernel_rows_bit_for_bit(kernel):
    """The solver reads k(x_i, x_i) from kernel_diagonal (kernel_self) and the
    rest of its Gram rows from kernel_block_row: the two must give the same
    bits. Linear, poly and sigmoid read the squared norm as the dot product,
    so RowSet sums it in the postings' order (index order); the geodesic
    kernels take angle 0, where the rows' summed sum(p) is 1 only to a few
    ulps (the dot-product map would give an angle of ~1e-8 there)."""
    from kgeo._kernels import get_kernel, kernel_diagonal, kernel_matrix
    from kgeo._pairwise import prepare_rows, single_block

    rng = np.random.default_rng(17)
    n_features = 300
    if kernel == "hyperbolic":
        n_features = 4
        X = sp.csr_matrix(np.hstack([rng.normal(size=(40, 3)), rng.random((40, 1)) + 0.5]))
        k = get_kernel(kernel, n_features, 0.0, t=0.5)
    else:
        # long rows of values that are not small integers: their squares'
        # sums round differently in different orders
        X = sp.random(40, n_features, density=0.5, random_state=rng, format="csr")
        X.data = X.data * 7.0 + 0.1
        k = get_kernel(kernel, n_features, 0.0, **PARAMS[kernel])
    rows = prepare_rows(k, X)
    K = kernel_matrix(k, rows, single_block(rows))
    diagonal = kernel_diagonal(k, rows)
    assert np.array_equal(diagonal, np.diag(K))


# ==========================================================================
# Found by mutation testing of _pairwise.py (translation centring, the
# thread count, the used-columns route): changes the tests above let through
# ==========================================================================

def test_an_outlier_does_not_round_the_distance_of_two_close_rows():
    """Centring subtracts X's (rounded) column means only where every entry
    subtracts them exactly. One outlier row at 1e9 puts the means near 2.5e8,
    where 0.1 and 0.1 + 1e-6 would round to multiples of 3e-8: their distance
    came out 1.3 % wrong. It must be the rows' exact difference."""
    X = np.array([[1e9, 1e9], [0.1, 0.2], [0.1 + 1e-6, 0.2], [0.3, 0.4]])
    K = kgeo.pairwise_kernels(X, kernel="ned")
    assert K[1, 2] == K[2, 1] == -(X[2, 0] - X[1, 0])
    R = kgeo.pairwise_kernels(X, kernel="rbf", gamma=1e10)
    np.testing.assert_allclose(R[1, 2], np.exp(-1e10 * (X[2, 0] - X[1, 0]) ** 2), rtol=1e-14)


def test_sparse_rows_of_y_meet_x_moved_when_x_as_given_is_beyond_the_kernels_range():
    """X's rows have squared norms of 1.25 * 2**1022, above the max / 4 the
    kernels carry (below max / 2), and are mostly nonzero: centred by their
    column means they are close to 0. A sparse row of Y (not moved on its own
    account) must then be moved with X, not compared with X as given (which
    would be refused as overflowing); the distances are exact."""
    a, b = 2.0 ** 511, 2.0 ** 510
    X = np.array([[a, b, 0.0], [a, b + 2.0 ** 480, 0.0]])
    Y = np.array([[a, 0.0, 0.0]])
    K = kgeo.pairwise_kernels(X, Y, kernel="ned")
    np.testing.assert_array_equal(K, [[-b], [-(b + 2.0 ** 480)]])


def test_rows_whose_centred_squares_underflow_are_compared_as_given():
    """Two rows at 1e-150 one ulp apart: centred, their squared norms are
    subnormal (ned would refuse them as underflowing); as given they are not,
    and their distance (below 1.5e-154) comes out 0, as documented."""
    a = 1e-150
    X = np.array([[a, a], [a, np.nextafter(a, 1.0)]])
    np.testing.assert_array_equal(kgeo.pairwise_kernels(X, kernel="ned"), np.zeros((2, 2)))


def test_available_threads_is_capped_by_the_cgroup_quota(monkeypatch):
    import kgeo._pairwise as pw

    monkeypatch.setattr(pw.os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    monkeypatch.setattr(pw, "_QUOTA_FRESH_SECONDS", 0.0)  # read the quota at every call
    for quota, expected in [(2, 2), (20, 8), (None, 8)]:
        monkeypatch.setattr(pw, "cgroup_cpu_quota", lambda quota=quota: quota)
        assert pw.available_threads() == expected


def test_the_cgroup_quota_is_read_once_a_second(monkeypatch):
    """A fit asks for its threads five times; the quota's files are read
    once a second (57 us a read), and a changed quota is seen after that."""
    import types

    import kgeo._pairwise as pw

    # A clock of the test's own: a machine that stalled the test a second
    # between two calls would have read the quota twice.
    now = [1000.0]
    monkeypatch.setattr(pw, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    reads = []
    monkeypatch.setattr(pw, "cgroup_cpu_quota", lambda: reads.append(1) or 1)
    monkeypatch.setattr(pw, "_QUOTA_READ", [None, -np.inf])
    assert [pw.available_threads() for _ in range(5)] == [1] * 5
    assert len(reads) == 1
    monkeypatch.setattr(pw, "cgroup_cpu_quota", lambda: 3)
    now[0] += 0.75
    assert pw.available_threads() == 1  # read less than a second ago
    now[0] += 0.25
    assert pw.available_threads() == min(3, len(pw.os.sched_getaffinity(0)))


def test_n_jobs_is_capped_at_four_threads_per_available_cpu(monkeypatch):
    import kgeo._pairwise as pw

    monkeypatch.setattr(pw, "available_threads", lambda: 2)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert [pw.resolve_n_jobs(n) for n in (1, 7, 8, 9, 10 ** 6, -1, None)] == [1, 7, 8, 8, 8, 2, 2]
    monkeypatch.setenv("OMP_NUM_THREADS", "50")
    assert pw.resolve_n_jobs(None) == 8


def test_used_columns_only_renumbers_the_used_columns_in_order():
    """Over 2**22 columns the posting tables would be costly: the matrices
    come back over the columns some of them use, in order, every value kept,
    exactly X[:, kept] and Y[:, kept]."""
    from kgeo._pairwise import used_columns_only

    width = 2 ** 22
    X = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 4.0]), np.array([5, 900, 70_000, width - 1]),
                       np.array([0, 2, 4])), shape=(2, width))
    Y = sp.csr_matrix((np.array([5.0, 6.0]), np.array([900, 123_456]), np.array([0, 1, 2])),
                      shape=(2, width))
    X_used, Y_used = used_columns_only(X, Y)
    kept = np.array([5, 900, 70_000, 123_456, width - 1])
    for got, given in ((X_used, X), (Y_used, Y)):
        expected = given[:, kept].tocsr()
        assert got.shape == expected.shape == (2, kept.size)
        np.testing.assert_array_equal(got.indptr, expected.indptr)
        np.testing.assert_array_equal(got.indices, expected.indices)
        np.testing.assert_array_equal(got.data, expected.data)


@pytest.mark.parametrize("size", [0, 1, 7, 5000])
def test_unique_columns_is_numpys_unique_with_its_inverse(size, rng):
    from kgeo._pairwise import unique_columns

    values = rng.integers(0, max(size // 3, 1), size=size).astype(np.int32) * 1009
    kept, places = unique_columns(values)
    expected, inverse = np.unique(values, return_inverse=True)
    np.testing.assert_array_equal(kept, expected)
    np.testing.assert_array_equal(places, inverse.ravel())
    assert places.dtype == np.int32 and kept.dtype == values.dtype


def _csr_with_indptr_from_one():
    """A 2 x 3 CSR matrix whose indptr starts at 1 (its first value unread)."""
    X = sp.csr_matrix((np.ones(3), np.array([0, 1, 2]), np.array([0, 1, 3])), shape=(2, 3))
    X.indptr = np.array([1, 2, 3], dtype=X.indptr.dtype)
    return X


def _coo_with_negative_column():
    X = sp.coo_matrix((np.ones(2), (np.array([0, 1]), np.array([0, 2]))), shape=(2, 3))
    X.col[1] = -1
    return X


def _lil_with_column(column):
    """A 2 x 3 LIL matrix whose second row's only entry sits in ``column``."""
    X = sp.lil_matrix(np.eye(2, 3))
    X.rows[1] = [column]
    return X


@pytest.mark.parametrize("make, match", [
    (_csr_with_indptr_from_one,
     r"X is not a valid CSR sparse matrix: indptr must start at 0 and never decrease"),
    (_coo_with_negative_column,
     r"X is not a valid COO sparse matrix: axis-1 indices range over \[-1, 0\] but must lie "
     r"in \[0, 2\]"),
    # LIL's rows are lists anyone can edit: checked once converted (SciPy's
    # conversion trusts them; the kernels then read outside the row arrays).
    (lambda: _lil_with_column(5),
     r"X is not a valid LIL sparse matrix: indices range over \[0, 5\] but must lie in "
     r"\[0, 2\]"),
], ids=["csr_indptr_from_one", "coo_negative", "lil_above"])
def test_more_sparse_index_arrays_out_of_range_rejected(make, match):
    # Found by mutation testing: kgeo's own message, naming X and the format,
    # where SciPy's conversion said "index pointer should start with 0" or
    # "negative axis 1 index: -1", or read garbage (LIL).
    with pytest.raises(ValueError, match=match):
        kgeo.pairwise_kernels(make(), kernel="linear")


def test_exactly_ten_all_zero_rows_are_all_listed():
    # Found by mutation testing: ten rows are listed in full, with no
    # " and 0 more"; an eleventh is the first left off.
    X = np.zeros((11, 3))
    X[0, 0] = 1.0
    with pytest.raises(ValueError, match=r"X has 10 all-zero row\(s\) \(rows 1, 2, 3, 4, 5, 6, "
                                         r"7, 8, 9, 10\); the multinomial"):
        kgeo.pairwise_kernels(X, kernel="ngd")
    with pytest.raises(ValueError, match=r"X has 11 all-zero row\(s\) \(rows 1, .*, 10 and 1 "
                                         r"more\)"):
        kgeo.pairwise_kernels(np.vstack([X, np.zeros((1, 3))]), kernel="ngd")


def _decimal_gap(n, m):
    """1 - c for x = n ones and y = x with m of its counts doubled, in 50 digits."""
    from decimal import Decimal, localcontext

    with localcontext() as context:
        context.prec = 50
        c = ((n - m) + m * Decimal(2).sqrt()) / (Decimal(n) * (n + m)).sqrt()
        return float(1 - c)


@pytest.mark.parametrize("n", [1_000, 10_000, 100_000])
def test_geodesic_kernels_near_one_keep_their_digits_for_long_documents(n):
    """Two documents of mostly single occurrences, n words, c = 0.99983: the
    summed coefficient carried about n ulp (the nearly equal terms' roundings
    add up), which arccos multiplied by 54, and NGD came out 2.7e-12 off at
    n = 1,000 and 6e-11 at 10^5 (a review, against 100-digit arithmetic).
    Rows that long take the rows' difference from a lower c (exact_from):
    the angle's error is then that of the gap's sum, about n ulp of the gap."""
    from kgeo._kernels import _exact_from

    m = n // 500
    x = np.ones(n)
    y = x.copy()
    y[:m] = 2.0
    gap = _decimal_gap(n, m)
    assert 1.0 - gap >= _exact_from(n)  # the difference route
    # the angle from the gap, well conditioned: 2 asin(sqrt(gap / 2))
    angle = 2.0 * np.arcsin(np.sqrt(gap / 2.0))
    bound = 4 * _EPS + n * _EPS * np.sqrt(gap / 2.0)
    X = np.vstack([x, y])
    assert abs(kgeo.pairwise_kernels(X, kernel="ngd")[0, 1] + 2.0 * angle) <= 2 * bound
    assert abs(kgeo.geodesic_distance(X)[0, 1] - 2.0 * angle) <= 2 * bound
    t = 0.01
    assert kgeo.pairwise_kernels(X, kernel="ngd_exp", t=t)[0, 1] == pytest.approx(
        np.exp(-angle / t), rel=2 * bound / t)


def test_the_difference_route_starts_lower_for_longer_rows_only():
    """exact_from: 0.9999 (the bound for rows of short documents, where the
    dot product's rounding times arccos' magnification stays under
    ANGLE_ROUNDING ulps) up to 256 words, then lower, never below
    CANDIDATE_FROM; and the same route either way round (K(x, y) and K(y, x)
    the same bits) for a short row against a long one."""
    from kgeo._kernels import EXACT_GAP_CANDIDATES_FROM, _exact_from

    assert [_exact_from(n) for n in (0, 1, 100, 256)] == [EXACT_GAP_FROM] * 4
    lengths = [257, 300, 1_000, 10_000, 100_000, 10**9]
    bounds = [_exact_from(n) for n in lengths]
    assert all(a >= b for a, b in zip(bounds, bounds[1:]))
    assert EXACT_GAP_FROM > bounds[1] and bounds[-1] == EXACT_GAP_CANDIDATES_FROM
    for n, c in zip(lengths, bounds):
        if EXACT_GAP_CANDIDATES_FROM < c < EXACT_GAP_FROM:
            assert c / np.sqrt(1 - c * c) * n == pytest.approx(18176.0, rel=1e-9)
    rng = np.random.default_rng(5)
    short = rng.poisson(1.0, (30, 2_000)).astype(float)
    short[:, 1000:] = 0.0  # rows of under 1,000 words
    long_rows = np.ones((3, 2_000))
    long_rows[:, :50] += rng.poisson(0.2, (3, 50))
    X = np.vstack([short, long_rows])
    K = kgeo.pairwise_kernels(X, kernel="ngd")
    assert np.array_equal(K, K.T)


@pytest.mark.parametrize("n", [1_000, 100_000])
@pytest.mark.parametrize("share", [0.3, 0.6, 0.85, 0.99])
def test_geodesic_kernels_stay_within_their_documented_bound(n, share):
    """x and y of n words each, sharing share * n: c = share exactly, and
    arccos of it is correctly rounded to an ulp. The documented bound of the
    angle: ANGLE_ROUNDING = 18,176 ulp above CANDIDATE_FROM (0.5), 0.58 n ulp
    below it (measured on such pairs: 0.3 n ulp at c = 0.9 when the dot
    product was summed, 0.04 n at 0.5)."""
    from kgeo._kernels import EXACT_GAP_CANDIDATES_FROM

    shared = int(share * n)
    X = np.zeros((2, 2 * n))
    X[0, :n] = 1.0
    X[1, n - shared:2 * n - shared] = 1.0
    angle = np.arccos(shared / n)
    error = abs(kgeo.pairwise_kernels(X, kernel="ngd")[0, 1] + 2.0 * angle) / 2.0
    ulps = 18176.0 if share >= EXACT_GAP_CANDIDATES_FROM else 0.58 * n
    assert error <= ulps * _EPS


@pytest.mark.parametrize("kernel", ["ned", "rbf", "ngd", "linear"])
def test_y_given_as_x_itself_is_y_none_bit_for_bit(kernel):
    """ned and rbf move mostly nonzero X by its column means, and a mostly
    zero row of a given Y meets X unmoved: with Y=X that row's values
    differed from Y=None's in the last bits (a review: 8.9e-16), and K(X, X)
    was not symmetric. Y passed as X itself is now Y=None."""
    X = np.array([[1.1, 2.3, 3.7, 4.1], [1.3, 2.2, 3.9, 4.4], [0.7, 0, 0, 0]])
    K = kgeo.pairwise_kernels(X, kernel=kernel)
    assert np.array_equal(kgeo.pairwise_kernels(X, X, kernel=kernel), K)
    assert np.array_equal(K, K.T)


def test_bhattacharyya_is_one_on_the_diagonal_and_keeps_close_pairs_digits():
    """k(x, x) came from the summed sum_w p_w, 1 only to a few ulps (below 1
    for 131 of 300 documents, a review); the kernel now takes the geodesic
    kernels' routes: 1 exactly on the diagonal (kernel rows and the SVM's
    diagonal alike), and 1 - gap from the rows' difference for close pairs."""
    from kgeo._kernels import get_kernel, kernel_diagonal
    from kgeo._pairwise import prepare_rows

    rng = np.random.default_rng(0)
    X = rng.poisson(0.3, (300, 500)).astype(float)
    X[:, 0] += 1.0
    K = kgeo.pairwise_kernels(X, kernel="bhattacharyya")
    assert np.all(np.diag(K) == 1.0) and np.array_equal(K, K.T)
    k = get_kernel("bhattacharyya", X.shape[1], 0.0)
    assert np.all(kernel_diagonal(k, prepare_rows(k, sp.csr_matrix(X))) == 1.0)
    # x = n ones, y with n / 500 counts doubled: 1 - c from 50 digits
    n = 100_000
    x, y = np.ones(n), np.ones(n)
    y[:n // 500] = 2.0
    c = kgeo.pairwise_kernels(np.vstack([x, y]), kernel="bhattacharyya")[0, 1]
    gap = _decimal_gap(n, n // 500)
    assert abs(c - (1.0 - gap)) <= 4 * _EPS + n * _EPS * gap  # the gap's sum's rounding
    assert np.array_equal(
        kgeo.pairwise_kernels(X, kernel="bhattacharyya", shift=0.5), K + 0.5)


def test_the_kernel_registry_is_read_only():
    # kgeo.KERNELS was a plain dict that get_kernel trusted: setting a default
    # there changed every later model's, and a new name computed the
    # hyperbolic kernel (the registry's last branch took any other name).
    with pytest.raises(TypeError):
        kgeo.KERNELS["mine"] = ({}, False)
    with pytest.raises(TypeError):
        kgeo.KERNELS["poly"][0]["degree"] = 7
    assert kgeo.SVM(kernel="poly").fit([[1.0, 0.0], [0.0, 1.0]], [0, 1])._kernel_args[
        "degree"] == 3
    with pytest.raises(ValueError, match=r"^Unknown kernel 'mine'; known kernels: "):
        kgeo._kernels.get_kernel("mine", 3)


def test_masked_entries_are_refused():
    # np.asarray reads the value under a mask: a masked 99 entered the kernel.
    X = np.ma.array([[1.0, 2.0], [3.0, 99.0]], mask=[[0, 0], [0, 1]])
    message = r"^X has 1 masked entries; fill them"
    with pytest.raises(ValueError, match=message):
        kgeo.pairwise_kernels(X, kernel="linear")
    with pytest.raises(ValueError, match=message):
        kgeo.SVM().fit(X, [0, 1])
    with pytest.raises(ValueError, match=r"^K has 2 masked entries"):
        kgeo.is_positive_definite(np.ma.array([[1.0, -5.0], [-5.0, 1.0]],
                                              mask=[[0, 1], [1, 0]]))
    # Nothing masked: the data as they are.
    np.testing.assert_array_equal(
        kgeo.pairwise_kernels(np.ma.array([[1.0, 2.0]]), kernel="linear"), [[5.0]])


# ---------------------------------------------------------------------------
# Translation centring of Y, the ned underflow and overflow messages, the
# symmetry tolerance: a mutation review (helper 137) found each loose
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kernel", ["rbf", "ned"])
def test_rows_of_y_not_moved_meet_x_as_given(kernel):
    # X mostly nonzero, far from the origin: moved by its centre. Rows of Y
    # that are mostly zero are not moved, and must meet X as given too
    # (mutant: they met X moved, values of other points: rbf off by 2e6
    # relative, ned by 50 %).
    rng = np.random.default_rng(3)
    X = rng.random((20, 8)) + 5.0
    Y = rng.random((4, 8)) + 5.0
    Y[:2, :6] = 0.0  # 2 of 8 columns: compared as given
    params = {"gamma": 0.1} if kernel == "rbf" else {}
    K = kgeo.pairwise_kernels(X, Y, kernel=kernel, **params)
    d2 = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(axis=-1)
    expected = np.exp(-0.1 * d2) if kernel == "rbf" else -np.sqrt(d2)
    np.testing.assert_allclose(K, expected, rtol=1e-12)


def test_a_dense_row_of_y_that_moving_would_push_out_of_range_meets_x_as_given():
    # X near a = 2**508, spread in its low bits, is centred exactly by its
    # column means (moved to about 1e-3 a). A row of Y at -a in every column
    # fits as given (20 a**2, below max / 4), and subtracts the centre
    # exactly, but moved it would be about -2a a column, a squared norm of
    # 80 a**2 (1.25 * 2**1022), beyond what the kernels carry. It must be
    # compared as given, with X as given: the distances are those of NumPy.
    a = 2.0 ** 508
    rng = np.random.default_rng(0)
    X = a * (1.0 + rng.integers(0, 2 ** 10, (4, 20)) / 2.0 ** 20)
    Y = np.full((1, 20), -a)
    expected = -np.sqrt(((X - Y) ** 2).sum(axis=1))[:, None]
    np.testing.assert_allclose(kgeo.pairwise_kernels(X, Y, kernel="ned"), expected, rtol=1e-12)


def test_rows_of_y_exactly_half_nonzero_are_moved_with_x():
    # X is centred from a density of one half, and so is each row of Y from
    # one half of its columns: rows of X repeated in another array as Y are
    # then all moved as X's own rows are, and K(X, Y) is K(X) bit for bit
    # (the Notes allow a difference only for rows of Y not moved with X).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 8)) + 300.0
    X[:10, :4] = 0.0  # 4 of 8 columns: exactly half nonzero
    K = kgeo.pairwise_kernels(X, kernel="ned")
    assert kgeo.pairwise_kernels(X, X.copy(), kernel="ned").tobytes() == K.tobytes()


def test_a_dense_row_of_y_that_would_move_inexactly_is_compared_as_given():
    # Y's row 0 is X's row 0 but for 1e-100 in a column centred at about
    # 5.5: moved, 1e-100 - 5.5 rounds to -5.5 and the two rows would meet at
    # distance 0 (mutant: rows_movable asks any column, not every column,
    # to subtract exactly). As given, their distance is 1e-100.
    rng = np.random.default_rng(4)
    X = rng.random((10, 8)) + 5.0
    X[0, 7] = 0.0
    Y = X[:1].copy()
    Y[0, 7] = 1e-100
    K = kgeo.pairwise_kernels(X, Y, kernel="ned")
    assert K[0, 0] == -1e-100


def test_ned_underflow_is_judged_on_x_and_y_together():
    # Rows of X at 1e-170 (squares below float64's normal range) next to
    # ordinary rows of Y: the distances are the rows of Y's norms, and no
    # refusal (mutant: X's squares alone were looked at).
    X = np.full((2, 3), 1e-170)
    Y = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 2.0]])
    K = kgeo.pairwise_kernels(X, Y, kernel="ned")
    np.testing.assert_allclose(K, [[-5.0, -2.0], [-5.0, -2.0]], rtol=1e-12)
    with pytest.raises(ValueError, match="underflows float64 on X and Y"):
        kgeo.pairwise_kernels(X, X * 2, kernel="ned")


def test_overflow_messages_name_x_and_y_when_y_is_given():
    X = np.array([[1e100, 1e100]])
    Y = np.array([[1e100, 1e100], [1.0, 1.0]])
    with pytest.raises(ValueError, match="overflows float64 on some pair of rows of X and Y"):
        kgeo.pairwise_kernels(X, Y, kernel="poly", degree=4, gamma=1.0, coef0=0.0)
    with pytest.raises(ValueError, match=r"overflows float64 on some pair of rows of X:"):
        kgeo.pairwise_kernels(X, kernel="poly", degree=4, gamma=1.0, coef0=0.0)


@pytest.mark.parametrize("check", [kgeo.is_positive_definite,
                                   kgeo.is_conditionally_positive_definite])
def test_asymmetry_is_measured_against_the_largest_entry_not_its_scaled_copy(check):
    # max|K| just above 1: scaled by 2**-1 to about 0.5. An asymmetry of
    # 1.5e-10 of max|K| is refused (mutant: compared with 1e-10 of the
    # scaled copy's 1, i.e. 2e-10 of max|K|: accepted).
    K = np.array([[1.0, 1.0], [1.0 + 1.5e-10, 1.0]])
    with pytest.raises(ValueError, match="must be symmetric"):
        check(K)
    check(np.array([[1.0, 1.0], [1.0 + 0.5e-10, 1.0]]))  # 0.5e-10 of max|K|: not refused


# --- from a review of the public functions' input checks --------------------

@pytest.mark.parametrize("check", [kgeo.is_positive_definite,
                                   kgeo.is_conditionally_positive_definite])
def test_a_long_double_beyond_float64_is_refused_as_such(check):
    """BUG FIX: a finite np.longdouble beyond float64's range was cast to
    inf (with NumPy's RuntimeWarning) and refused as "NaN or infinity", a
    value the caller never passed."""
    if np.finfo(np.longdouble).max <= np.finfo(np.float64).max:
        pytest.skip("long double is float64 on this platform")
    K = np.array([[np.longdouble("1e400"), 0], [0, 1]], dtype=np.longdouble)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="beyond float64's range"):
            check(K)


def test_a_huge_integer_parameter_is_shown_short():
    """kernel parameters refused as beyond float64 name themselves in a few
    characters, not the 401 digits of 10**400."""
    message = r"shift must be a finite real number, got 1000000000+\.\.\.0+$"
    with pytest.raises(kgeo.InvalidParameterError, match=message) as e:
        kgeo.pairwise_kernels([[1.0, 2.0]], shift=10 ** 400)
    assert len(str(e.value)) < 120


# --- from a mutation review of the fit side (helper 176) ---------------------
# Each test below failed on a mutant of kgeo/_kernels.pyx that the suite let
# pass; bit for bit where the module promises bits.

def _bound_pair():
    """A one-word row (1, 0, 0) and a row (1, t, 0) whose Bhattacharyya
    coefficient is exactly NEAR_ONE = EXACT_GAP_FROM in float64, with the
    second row's stored square roots."""
    from kgeo._kernels import get_kernel
    from kgeo._pairwise import prepare_rows

    bound = EXACT_GAP_FROM
    t = 1 / bound ** 2 - 1
    rows = prepare_rows(get_kernel("ngd", 3, 0.0), sp.csr_matrix([[1.0, t, 0.0]]))
    b, s = rows.arrays[0]
    assert b == bound
    return t, b, s


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("kernel", ["ngd", "ngd+pi", "ngd_exp", "diffusion"])
def test_a_coefficient_exactly_at_the_bound_takes_the_difference_route_bit_for_bit(
        kernel, swap):
    """c >= NEAR_ONE is a close pair: at c == NEAR_ONE exactly the value is
    the one of the rows' difference, gap = ((1 - b)^2 + s^2) / 2 summed over
    the union of the words, not of the gap 1 - c of the dot product (the two
    differ by 7e-15 here, which the 1e-12 tolerance of the boundary test let
    through). Mutants: ``c > near`` in the NGD map (kept and counted alike),
    and ``acc[j] > exact_from(...)`` for the row of Y in kernel_block_part."""
    from kgeo._kernels import _angle_from_gap

    t, b, s = _bound_pair()
    gap = 0.5 * ((1.0 - b) * (1.0 - b) + s * s)  # exact_gap's order of operations
    assert gap != 1.0 - b  # the two routes differ in this pair
    angle = _angle_from_gap(np.array([gap]))[0]
    expected = {"ngd": -2.0 * angle, "ngd+pi": (math.pi - 2.0 * angle),
                "ngd_exp": math.exp(0.0 - angle * (1.0 / 1.0)),
                "diffusion": math.exp(0.0 - angle * angle * (1.0 / 1.0))}[kernel]
    X, Y = np.array([[1.0, 0.0, 0.0]]), np.array([[1.0, t, 0.0]])
    if swap:
        X, Y = Y, X
    K = kgeo.pairwise_kernels(X, Y, kernel=kernel)
    assert K[0, 0] == expected


def test_bhattacharyya_clears_a_coefficient_exactly_at_the_bound():
    """Bhattacharyya keeps its close pairs (c >= NEAR_ONE) in the accumulator
    for the difference route, and must count every one it keeps: the loop of
    kernel_block_part clears only as many as were counted. A pair at exactly
    NEAR_ONE, kept but not counted, stayed in the accumulator and was added
    to the next row's dot products: row (0, 0, 1), which shares no word with
    Y, came out 0.9999 instead of 0. (The boundary test covered the arccos
    kernels only; mutant: ``kept += c > near``.)"""
    t, _, _ = _bound_pair()
    X = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    Y = np.array([[1.0, t, 0.0]])
    K = kgeo.pairwise_kernels(X, Y, kernel="bhattacharyya")
    P, Q = X / X.sum(1, keepdims=True), Y / Y.sum(1, keepdims=True)
    np.testing.assert_allclose(K, np.sqrt(P) @ np.sqrt(Q).T, rtol=1e-12, atol=1e-15)
    assert K[1, 0] == 0.0
    for i in range(len(X)):  # each row as alone
        assert np.array_equal(K[i], kgeo.pairwise_kernels(X[i:i + 1], Y,
                                                          kernel="bhattacharyya")[0])


def test_a_block_of_exactly_8_rows_stores_a_column_of_all_8_dense():
    """The dense-column rule needs 8 postings (DENSE_MIN_POSTINGS) and 1/8 of
    the block's rows: a block of exactly 8 rows, each with column 0, stores
    that column dense (the short-block test used blocks of 7 and 20 rows;
    mutant: blocks looked at only from 9 rows on). The same bits either way."""
    from kgeo._kernels import PostingIndex, get_kernel, kernel_matrix
    from kgeo._pairwise import prepare_rows

    D = np.zeros((8, 4))
    D[:, 0] = np.arange(1.0, 9.0)
    D[::2, 1] = 0.5  # 4 rows: postings
    D[1::2, 2] = 0.25
    X = sp.csr_matrix(D)
    k = get_kernel("linear", 4, 0.0)
    rows = prepare_rows(k, X)
    index = PostingIndex(rows, np.array([0, 8]))
    dense_ptr = index.arrays[4][:4]
    assert np.array_equal(dense_ptr >= 0, [True, False, False, False])
    assert index.n_dense == 1
    # Two blocks of 8: one dense column each.
    assert PostingIndex(prepare_rows(k, sp.vstack([X, X]).tocsr()),
                        np.array([0, 8, 16])).n_dense == 2
    K = kernel_matrix(k, rows, index)
    reference = np.zeros((8, 8))
    for w in range(4):  # a NumPy sum, word after word
        reference += D[:, [w]] * D[:, w]
    assert np.array_equal(K, reference)


def test_the_arccos_hook_clips_its_gaps_to_the_unit_interval():
    """_angle_from_gap reads its gaps through clip_unit, as the kernel maps
    do: a gap a rounding below 0 is the angle 0, one above 1 is pi/2
    (arccos of a coefficient clipped to 0). Mutant: the clip's lower bound
    at -1, which gave NaN for -1e-17 (the square root of a negative half
    gap)."""
    from kgeo._kernels import _angle_from_gap

    angles = _angle_from_gap(np.array([-1e-17, -0.5, 0.0, 1.0, 1.5]))
    assert np.array_equal(angles, [0.0, 0.0, 0.0, math.pi / 2, math.pi / 2])


@pytest.mark.parametrize("t", [1e-320, 5e-324, 2.0 ** -1025])
@pytest.mark.parametrize("kernel", ["ngd_exp", "diffusion"])
def test_a_positive_t_whose_inverse_overflows_is_refused(kernel, t):
    """t > 0 whose 1 / t is inf in float64 (a subnormal t) is refused: the
    kernels read 1 / t, and k(x, x) = exp(-0 * inf) would be NaN. The
    existing tests gave t <= 0 and non-finite t only (mutant: the check of
    1 / t removed, which let NaN kernel values through)."""
    with pytest.raises(ValueError, match=r"1 / t must be finite"):
        kgeo.pairwise_kernels(np.ones((2, 3)), kernel=kernel, t=t)
    # The smallest t it takes (1 / max rounds to a subnormal whose inverse
    # overflows; the next float64 does not): the diagonal is exp(0) = 1.
    smallest = np.nextafter(1.0 / np.finfo(np.float64).max, 1.0)
    assert np.isfinite(1.0 / smallest)
    K = kgeo.pairwise_kernels(np.eye(3) + 1.0, kernel=kernel, t=smallest)
    assert np.array_equal(np.diag(K), np.ones(3))


def _t_for_log_scale(log_scale, n_features):
    """The t whose heat factor (4 pi t)^(-n/2), n = n_features - 1, is
    exp(log_scale)."""
    n = n_features - 1
    return math.exp(-2.0 * log_scale / n) / (4.0 * math.pi)


@pytest.mark.parametrize("log_scale", [-740.0, -720.0, -708.5, 709.9, 715.0])
@pytest.mark.parametrize("kernel", ["ngd_exp", "diffusion"])
def test_normalize_refuses_factors_just_beyond_float64s_normal_range(kernel, log_scale):
    """normalize=True refuses a factor exp(log_scale) that is not a normal
    float64: below exp(-708.39) it is subnormal (digits lost, 0 at -745),
    above exp(709.78) it overflows to inf on the diagonal. The existing cases
    were thousands beyond the bounds (mutants: _LOG_MIN = -745, _LOG_MAX =
    720, which let a subnormal factor and an infinite diagonal through)."""
    n_features = 1441
    t = _t_for_log_scale(log_scale, n_features)
    X = sp.csr_matrix(np.ones((2, n_features)))
    with pytest.raises(ValueError, match="not representable in float64"):
        kgeo.pairwise_kernels(X, kernel=kernel, t=t, normalize=True)


@pytest.mark.parametrize("log_scale", [-708.3, 0.0, 709.7])
@pytest.mark.parametrize("kernel", ["ngd_exp", "diffusion"])
def test_normalize_takes_factors_just_inside_float64s_normal_range(kernel, log_scale):
    """The other side of the bounds: a normal factor is applied, and the
    diagonal (distance 0) is the factor itself, finite."""
    n_features = 1441
    t = _t_for_log_scale(log_scale, n_features)
    X = sp.csr_matrix(np.ones((2, n_features)))
    K = kgeo.pairwise_kernels(X, kernel=kernel, t=t, normalize=True)
    assert np.all(np.isfinite(K))
    np.testing.assert_allclose(np.diag(K), math.exp(log_scale), rtol=1e-9)


def _count_data(rng, n_rows, n_features, density):
    """Two classes of random term counts (every row nonempty), with a few
    duplicated rows (pairs at the exact-gap route)."""
    X = sp.random(n_rows, n_features, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, 6, size=k).astype(float))
    X = X + sp.csr_matrix((np.ones(n_rows), (np.arange(n_rows),
                                             rng.integers(0, n_features, n_rows))),
                          shape=X.shape)
    X = sp.vstack([X.tocsr()[:-4], X.tocsr()[:4]]).tocsr()
    y = (np.asarray(X[:, : n_features // 2].sum(1)).ravel()
         > np.asarray(X[:, n_features // 2:].sum(1)).ravel()).astype(int)
    y[-4:] = y[:4]
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("kernel", ["ngd", "linear"])
def test_a_helper_thread_on_hashed_list_heads_changes_no_bit(kernel, monkeypatch):
    """A fit's helper thread computes halves of blocks (kernel_block_part
    with lo > 0 or hi short of the block) through the hashed list heads as
    well: each half must add only the postings of its own rows. With
    ``whole = lo == 0`` alone, the first half added the second half's rows
    too, which stayed in the accumulator and corrupted later rows (the
    helper test ran only the tables of list heads: two classes over 300
    columns are never hashed). The model is the one of one thread, bit for
    bit."""
    from kgeo import _kernels, _solver, _svm

    if not _solver.ROW_HELPER:
        pytest.skip("this build runs no helper thread (no GCC atomics)")
    rng = np.random.default_rng(7)
    X, y = _count_data(rng, 1200, 300, 0.03)
    caches, indexes = [], []
    solve, make_index = kgeo.SVM._solve_pairs, _svm.PostingIndex

    def spy_solve(self, cache, pairs, box):
        caches.append(cache)
        return solve(self, cache, pairs, box)

    def spy_index(*args, **kwargs):
        indexes.append(make_index(*args, **kwargs))
        return indexes[-1]

    monkeypatch.setattr(kgeo.SVM, "_solve_pairs", spy_solve)
    monkeypatch.setattr(_svm, "PostingIndex", spy_index)
    before = (_kernels._hashed_heads_beyond(0), _solver._set_row_share_min(2),
              _solver._set_share_window(2**62), _solver._leave_halves_to_helper(0.0))
    try:
        params = dict(kernel=kernel, C=10.0)
        one = kgeo.SVM(n_jobs=1, **params).fit(X, y)
        assert indexes[-1].hashed
        for leave_halves in (0.0, 10.0):
            _solver._leave_halves_to_helper(leave_halves)
            _solver._set_row_share_min(2)
            two = kgeo.SVM(n_jobs=2, **params).fit(X, y)
            assert indexes[-1].hashed
            for name in ("support_", "dual_coef_", "intercept_", "n_iter_"):
                np.testing.assert_array_equal(getattr(one, name), getattr(two, name),
                                              err_msg=name)
            np.testing.assert_array_equal(one.decision_function(X), two.decision_function(X))
        # The halves left to the helper: it stored some of them.
        assert caches[-1].parts_helped > 0
    finally:
        _kernels._hashed_heads_beyond(before[0])
        _solver._set_row_share_min(before[1])
        _solver._set_share_window(before[2])
        _solver._leave_halves_to_helper(before[3])


@pytest.mark.parametrize("kernel", ["ngd_exp", "diffusion"])
def test_normalize_takes_numpy_bools(kernel):
    """normalize is True or False, NumPy's booleans too (as every other flag
    of kgeo): np.True_ applies the factor as True does. Mutant: only
    Python's bool accepted."""
    X = np.array([[1.0, 2.0, 3.0], [3.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    for flag in (True, False):
        assert np.array_equal(
            kgeo.pairwise_kernels(X, kernel=kernel, t=0.5, normalize=np.bool_(flag)),
            kgeo.pairwise_kernels(X, kernel=kernel, t=0.5, normalize=flag))


def test_shares_just_below_float64s_normal_range_take_the_roots_first():
    """A share count / sum in [DBL_MIN / 2, DBL_MIN) is subnormal: divided
    first it has lost up to a bit, which its square root (a normal number)
    keeps. Such entries are sqrt(count) / sqrt(top) / sqrt(sum), bit for bit
    (the existing test's shares were 1e-400 and below; mutant: the roots
    first only below DBL_MIN / 2, which changed 40 % of these entries)."""
    from kgeo._kernels import get_kernel
    from kgeo._pairwise import prepare_rows

    tiny = np.finfo(np.float64).tiny
    rng = np.random.default_rng(3)
    ratios = rng.uniform(0.5, 1.0, size=300)
    for r in ratios:
        counts = np.array([1e200, 1e200 * r * tiny])
        rows = prepare_rows(get_kernel("ngd", 2, 0.0), sp.csr_matrix(counts[None, :]))
        total = (counts / counts.max()).sum()
        expected = math.sqrt(counts[1]) / math.sqrt(counts[0]) / math.sqrt(total)
        assert rows.arrays[0][1] == expected


# One-column rows a, b whose squared distance d = (a^2 + b^2) - 2 ab, as the
# distance kernels' map computes it, is exactly CLOSE_SHARE * (a^2 + b^2)
# (found by a search over a and the floats next to the root of
# (b - a)^2 = 1e-4 (a^2 + b^2)).
_AT_CLOSE_SHARE = [(1.6476459548395477, 1.6711137162263063),
                   (1.620410000936351, 1.6434898350105307),
                   (1.6476211221908212, 1.6710885298810372),
                   (1.6150351412411914, 1.6380384200794564)]


@pytest.mark.parametrize("a, b", _AT_CLOSE_SHARE)
@pytest.mark.parametrize("kernel", ["ned", "rbf"])
def test_a_squared_distance_exactly_at_the_close_share_takes_the_difference_route(
        kernel, a, b):
    """NED's and RBF's pairs with d <= CLOSE_SHARE (|x|^2 + |y|^2) take
    their distance from the rows' difference: at d == CLOSE_SHARE (...)
    exactly, the value is the one of (a - b)^2, not of the cancelled d (they
    differ in the last digits here: -0.023467761386758657 against ...247).
    No test had a pair on the bound (mutant: ``d < near * (...)``). Through
    kernel_matrix on the rows as given (pairwise_kernels may centre them)."""
    from kgeo._kernels import get_kernel, kernel_matrix
    from kgeo._pairwise import prepare_rows, single_block

    near = 1.0 - 0.9999
    S = a * a + b * b
    assert S - 2.0 * (a * b) == near * S  # on the bound
    params = {"gamma": 1e6} if kernel == "rbf" else {}
    k = get_kernel(kernel, 1, 0.0, **params)
    X, Y = prepare_rows(k, sp.csr_matrix([[a]])), prepare_rows(k, sp.csr_matrix([[b]]))
    gap = 0.5 * ((a - b) * (a - b))  # exact_gap
    expected = -math.sqrt(2.0 * gap) if kernel == "ned" else math.exp(-1e6 * (2.0 * gap))
    assert kernel_matrix(k, X, single_block(Y))[0, 0] == expected
    assert kernel_matrix(k, Y, single_block(X))[0, 0] == expected


@pytest.mark.parametrize("kernel", ["ngd", "bhattacharyya", "ngd_exp", "diffusion"])
def test_a_pair_kept_by_the_long_rows_bound_alone_is_cleared_for_the_next_row(kernel):
    """A long row x (2,000 words) keeps its pairs from a lower coefficient
    (exact_from(2000) = 0.994) than a short row y (100 words: 0.9999): a
    pair at c = 0.995 is kept in the accumulator by x's map, then left to
    the dot-product route by y's bound, and must still be cleared there.
    Left in, it was added to the next row's dot product with y: row z,
    which shares no word with y (c = 0), came out as c = 0.995. (The
    symmetry test's Gram matrix had y itself next, whose diagonal takes the
    difference route and hid it; mutant: the accumulator cleared only for
    the pairs taken by the difference route.)"""
    from kgeo._kernels import _exact_from

    n_features = 3000
    x, y, light = _long_and_short_rows(np.random.default_rng(3), n_features)
    z = np.zeros(n_features)
    z[light[:50]] = 1.0  # no word of y
    c = np.sqrt(x / x.sum()) @ np.sqrt(y / y.sum())
    assert _exact_from(2000) <= c < _exact_from(100)  # kept by x's bound only
    X = sp.csr_matrix(np.vstack([x, z]))
    Y = sp.csr_matrix(y[None, :])
    K = kgeo.pairwise_kernels(X, Y, kernel=kernel)
    alone = kgeo.pairwise_kernels(X[1], Y, kernel=kernel)
    assert np.array_equal(K[1], alone[0])
    expected_z = {"ngd": -math.pi, "bhattacharyya": 0.0,
                  "ngd_exp": math.exp(0.0 - (math.pi / 2) * 1.0),
                  "diffusion": math.exp(0.0 - (math.pi / 2) * (math.pi / 2) * 1.0)}[kernel]
    np.testing.assert_allclose(K[1, 0], expected_z, rtol=1e-15, atol=0)
