"""The theory behind the kernels, checked numerically.

- The Fisher geodesic distance ``d_G(p, q) = 2 arccos(sum_i sqrt(p_i q_i))`` is
  a metric with values in ``[0, pi]``, ``pi`` exactly for disjoint supports.
- Its relation to the Hellinger distance (derived below).
- Definiteness of the Gram matrices (Zhang, Chen & Lee 2005, Props. 1, 2, 4;
  Lafferty & Lebanon 2005): NGD and NED are conditionally positive definite
  (cpd) but not positive definite (pd); NGD+pi, NGD-E, Bhattacharyya, linear and
  RBF are pd; the diffusion kernel ``exp(-arccos^2 / t)`` is pd for small ``t``
  and not for large ``t``; the sigmoid kernel can be indefinite.
- ``is_positive_definite`` / ``is_conditionally_positive_definite`` themselves,
  on matrices whose spectra are known.

Checked on random points (with hypothesis, in the deterministic "kgeo"
profile loaded by conftest.py) and on real 20 Newsgroups documents.

Tolerance for arccos: the Bhattacharyya coefficient ``c`` of a document with
itself is 1 up to about ``k`` ulps (``k`` its number of distinct words), and
``2 arccos(1 - k eps) ~ 2 sqrt(2 k eps)``: 1e-7 for the few-word random data
here, more for long real documents (``arccos_tolerance``).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kgeo

EPS = np.finfo(np.float64).eps
ARCCOS_ATOL = 1e-7


def arccos_tolerance(n_words):
    """Bound on 2 arccos(c) when c is 1 up to rounding over ``n_words`` terms."""
    return np.maximum(ARCCOS_ATOL, 2.0 * np.sqrt(2.0 * 2.0 * n_words * EPS))


# --------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------

@st.composite
def documents(draw, min_rows=2, max_rows=8, min_features=2, max_features=10,
              frequencies=None):
    """Non-negative matrices whose rows all have mass: counts or frequencies."""
    n = draw(st.integers(min_rows, max_rows))
    F = draw(st.integers(min_features, max_features))
    if frequencies is None:
        frequencies = draw(st.booleans())
    if frequencies:
        elements = st.one_of(st.just(0.0), st.floats(1e-3, 1e3))
        X = draw(hnp.arrays(np.float64, (n, F), elements=elements))
    else:
        X = draw(hnp.arrays(np.int64, (n, F), elements=st.integers(0, 6))).astype(np.float64)
    empty = X.sum(axis=1) == 0
    X[empty, draw(st.integers(0, F - 1))] = 1.0
    return X


def l1(X):
    return X / X.sum(axis=1, keepdims=True)


# --------------------------------------------------------------------------
# The geodesic distance is a metric on the simplex
# --------------------------------------------------------------------------

def assert_metric(D, diag_tol, tri_tol=ARCCOS_ATOL):
    n = D.shape[0]
    # Row i against row j and row j against row i sum the same products over
    # the same shared words in the same (column) order: exactly symmetric.
    assert np.array_equal(D, D.T)
    assert np.all(D >= 0.0) and np.all(D <= np.pi)
    assert np.all(np.abs(np.diag(D)) <= diag_tol)
    for j in range(n):  # d(i, k) <= d(i, j) + d(j, k) for every triple
        slack = D[:, j][:, None] + D[j, :][None, :] - D
        assert slack.min() >= -tri_tol, f"triangle inequality fails through {j}: {slack.min()}"


@given(documents(max_rows=12))
def test_geodesic_distance_is_a_metric(X):
    D = kgeo.geodesic_distance(X)
    assert_metric(D, diag_tol=ARCCOS_ATOL)


@given(documents(), documents())
def test_geodesic_distance_between_sets_is_symmetric(X, Y):
    F = min(X.shape[1], Y.shape[1])
    X, Y = X[:, :F], Y[:, :F]
    X[X.sum(1) == 0, 0] = 1.0
    Y[Y.sum(1) == 0, 0] = 1.0
    D_xy = kgeo.geodesic_distance(X, Y)
    assert np.array_equal(D_xy, kgeo.geodesic_distance(Y, X).T)
    assert np.all((D_xy >= 0) & (D_xy <= np.pi))


@given(documents(min_features=2, max_features=6), documents(min_features=2, max_features=6),
       st.integers(1, 4))
def test_disjoint_supports_are_exactly_pi_apart(A, B, n_pad):
    # A uses only the first columns, B only the last ones.
    n_a, n_b = A.shape[1], B.shape[1]
    X = np.hstack([A, np.zeros((A.shape[0], n_pad + n_b))])
    Y = np.hstack([np.zeros((B.shape[0], n_a + n_pad)), B])
    D = kgeo.geodesic_distance(X, Y)
    assert np.all(D == np.pi)
    assert np.all(kgeo.pairwise_kernels(X, Y, kernel="ngd") == -np.pi)


@given(documents(max_rows=10))
def test_geodesic_distance_is_minus_ngd(X):
    np.testing.assert_allclose(kgeo.geodesic_distance(X), -kgeo.pairwise_kernels(X, kernel="ngd"),
                               rtol=0, atol=4 * EPS)


@given(documents(max_rows=10))
def test_geodesic_distance_is_invariant_to_document_length(X):
    scaled = X * np.arange(1, X.shape[0] + 1)[:, None] * 7.5
    np.testing.assert_allclose(kgeo.geodesic_distance(scaled), kgeo.geodesic_distance(X),
                               rtol=0, atol=ARCCOS_ATOL)


# --------------------------------------------------------------------------
# Hellinger distance
# --------------------------------------------------------------------------
# With c = sum_i sqrt(p_i q_i) = cos(d_G / 2) and sum p = sum q = 1:
#     ||sqrt p - sqrt q||^2 = sum p + sum q - 2 c = 2 - 2 cos(d_G / 2) = 4 sin^2(d_G / 4),
# so  d_H = ||sqrt p - sqrt q|| = 2 sin(d_G / 4)  holds as written, with d_H the
# plain Euclidean distance of the square roots (no factor 1/sqrt(2) as in the
# "normalised" Hellinger distance, which would give sqrt(2) sin(d_G / 4)). It is
# the chord of the unit sphere subtending the angle d_G / 2; on the sphere of
# radius 2 (where 2 sqrt(p) lives and d_G is arc length) the chord is 2 d_H.

def hellinger(X, Y):
    S, T = np.sqrt(l1(X)), np.sqrt(l1(Y))
    return np.sqrt(((S[:, None, :] - T[None, :, :]) ** 2).sum(axis=-1))


@given(documents(max_rows=10))
def test_hellinger_is_twice_sine_of_quarter_geodesic(X):
    D = kgeo.geodesic_distance(X)
    H = hellinger(X, X)
    # sin has slope 1/2 in d_G here, so the arccos error is halved.
    np.testing.assert_allclose(2.0 * np.sin(D / 4.0), H, rtol=0, atol=ARCCOS_ATOL)
    # The same identity without arccos, exact up to rounding: d_H^2 = 2 - 2 c.
    C = kgeo.pairwise_kernels(X, kernel="bhattacharyya")
    np.testing.assert_allclose(2.0 - 2.0 * C, H ** 2, rtol=0, atol=1e-12)
    # And through kgeo's own NED kernel on the square roots.
    ned = kgeo.pairwise_kernels(np.sqrt(l1(X)), kernel="ned")
    np.testing.assert_allclose(2.0 * np.sin(D / 4.0), -ned, rtol=0, atol=ARCCOS_ATOL)


def test_hellinger_relation_needs_no_normalising_constant():
    # Two disjoint documents: d_G = pi, ||sqrt p - sqrt q|| = sqrt(2) = 2 sin(pi / 4).
    X = np.array([[1.0, 0.0], [0.0, 3.0]])
    D = kgeo.geodesic_distance(X)
    assert D[0, 1] == np.pi
    assert np.isclose(hellinger(X, X)[0, 1], np.sqrt(2.0), rtol=1e-15)
    assert np.isclose(2.0 * np.sin(D[0, 1] / 4.0), np.sqrt(2.0), rtol=1e-15)


# --------------------------------------------------------------------------
# Definiteness on random points
# --------------------------------------------------------------------------

PD_KERNELS = [
    ("ngd+pi", {}),
    ("ngd_exp", {"t": 0.1}),
    ("ngd_exp", {"t": 1.0}),
    ("ngd_exp", {"t": 10.0}),
    ("bhattacharyya", {}),
    ("diffusion", {"t": 0.1}),
    ("diffusion", {"t": 0.5}),
    ("linear", {}),
    ("rbf", {"gamma": 0.5}),
]


def ids(cases):
    return [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}".rstrip("-")
            for name, kw in cases]


@pytest.mark.parametrize("kernel, params", PD_KERNELS, ids=ids(PD_KERNELS))
@given(X=documents(min_rows=2, max_rows=15, max_features=8))
def test_pd_kernels_are_pd_on_random_points(kernel, params, X):
    K = kgeo.pairwise_kernels(X, kernel=kernel, **params)
    assert kgeo.is_positive_definite(K)
    assert kgeo.is_conditionally_positive_definite(K)  # pd implies cpd


@pytest.mark.parametrize("kernel", ["ngd", "ned"])
@given(X=documents(min_rows=2, max_rows=15, max_features=8, frequencies=False))
def test_distance_kernels_are_cpd_but_not_pd(kernel, X):
    K = kgeo.pairwise_kernels(X, kernel=kernel)
    # Zero diagonal, negative off-diagonal: trace ~0, so the spectrum has a
    # negative eigenvalue as soon as two points differ.
    assume(np.max(np.abs(K)) > 1e-3)
    assert kgeo.is_conditionally_positive_definite(K)
    assert not kgeo.is_positive_definite(K)


@given(X=documents(min_rows=2, max_rows=15, max_features=8))
def test_shift_makes_ngd_pd_and_keeps_it_cpd(X):
    # NGD + pi = pi - d_G: the constant changes pd-ness, never cpd-ness (it is
    # the constant vector's direction, which P removes).
    K = kgeo.pairwise_kernels(X, kernel="ngd", shift=np.pi)
    assert kgeo.is_positive_definite(K)
    for shift in (-10.0, 0.0, 5.0):
        assert kgeo.is_conditionally_positive_definite(
            kgeo.pairwise_kernels(X, kernel="ngd", shift=shift))


def simplex_grid(n_features=3, m=20):
    """All count vectors of n_features words summing to m: a grid over the simplex."""
    if n_features == 1:
        return np.array([[m]], dtype=np.float64)
    rows = [[i] + r.tolist() for i in range(m + 1) for r in simplex_grid(n_features - 1, m - i)]
    return np.array(rows, dtype=np.float64)


@pytest.mark.parametrize("t", [0.1, 0.5])
def test_diffusion_pd_for_small_t_on_a_dense_simplex_grid(t):
    X = simplex_grid(3, 20)
    assert kgeo.is_positive_definite(kgeo.pairwise_kernels(X, kernel="diffusion", t=t))


@pytest.mark.parametrize("t", [8.0, 12.0, 50.0])
def test_diffusion_not_pd_for_large_t(t):
    # 231 points covering the 2-simplex (3 words). The smallest Gram eigenvalue
    # becomes clearly negative from t ~ 4 (-1.5e-4 at t = 4, -0.02 at t = 6.25,
    # -0.05 at t = 8, against a largest eigenvalue ~ 220): exp(-d^2 / t) of a
    # geodesic distance is not a heat kernel and not pd once its width reaches
    # the curvature scale. On the 1-simplex (2 words, an arc) it stays pd.
    X = simplex_grid(3, 20)
    K = kgeo.pairwise_kernels(X, kernel="diffusion", t=t)
    assert not kgeo.is_positive_definite(K)
    assert np.linalg.eigvalsh(K)[0] < -1e-3
    # The same holds for Dirichlet samples spread over the simplex.
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.full(3, 0.5), size=300)
    assert not kgeo.is_positive_definite(kgeo.pairwise_kernels(P, kernel="diffusion", t=t))
    # ... while NGD-E (exp(-d / t), the Laplace kernel) stays pd at every t.
    assert kgeo.is_positive_definite(kgeo.pairwise_kernels(X, kernel="ngd_exp", t=t))


def test_sigmoid_can_be_indefinite(rng):
    X = rng.integers(0, 4, size=(30, 10)).astype(np.float64)
    K = kgeo.pairwise_kernels(X, kernel="sigmoid", gamma=0.1, coef0=-1.0)
    eig = np.linalg.eigvalsh(K)
    assert eig[0] < -1.0 and eig[-1] > 1.0
    assert not kgeo.is_positive_definite(K)
    assert not kgeo.is_conditionally_positive_definite(K)


# --------------------------------------------------------------------------
# The same on real documents
# --------------------------------------------------------------------------

def test_geodesic_distance_is_a_metric_on_newsgroups(newsgroups_counts):
    X = newsgroups_counts
    D = kgeo.geodesic_distance(X)
    n_words = np.diff(X.indptr)
    diag = np.abs(np.diag(D))
    assert np.all(diag <= arccos_tolerance(n_words))
    assert_metric(D, diag_tol=arccos_tolerance(n_words.max()))
    # Documents share words (at least header words), so none is pi from another.
    assert D.max() < np.pi


def test_hellinger_relation_on_newsgroups(newsgroups_counts):
    X = newsgroups_counts[:120]
    D = kgeo.geodesic_distance(X)
    S = sp.diags(1.0 / np.asarray(X.sum(axis=1)).ravel()) @ X
    S.data = np.sqrt(S.data)
    H = -kgeo.pairwise_kernels(S, kernel="ned")
    np.testing.assert_allclose(2.0 * np.sin(D / 4.0), H, rtol=0,
                               atol=arccos_tolerance(np.diff(X.indptr).max()))


NEWSGROUPS_CASES = [
    # kernel, params, pd, cpd
    ("ngd", {}, False, True),
    ("ned", {}, False, True),
    ("ngd+pi", {}, True, True),
    ("ngd_exp", {"t": 1.0}, True, True),
    ("bhattacharyya", {}, True, True),
    ("diffusion", {"t": 0.1}, True, True),
    ("diffusion", {"t": 0.5}, True, True),
    ("linear", {}, True, True),
    ("sigmoid", {"gamma": 0.1, "coef0": -1.0}, False, False),
]


@pytest.mark.parametrize("kernel, params, pd, cpd", NEWSGROUPS_CASES,
                         ids=ids([(k, p) for k, p, _, _ in NEWSGROUPS_CASES]))
def test_definiteness_on_newsgroups(kernel, params, pd, cpd, newsgroups_counts):
    X = newsgroups_counts
    K = kgeo.pairwise_kernels(X, kernel=kernel, **params)
    assert kgeo.is_positive_definite(K) is pd
    assert kgeo.is_conditionally_positive_definite(K) is cpd


def test_ned_cpd_on_l1_and_l2_newsgroups(newsgroups_counts):
    X = newsgroups_counts[:200]
    for scale in (np.asarray(X.sum(axis=1)).ravel(),
                  np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())):
        K = kgeo.pairwise_kernels(sp.diags(1.0 / scale) @ X, kernel="ned")
        assert kgeo.is_conditionally_positive_definite(K)
        assert not kgeo.is_positive_definite(K)


# --------------------------------------------------------------------------
# The checks themselves, on matrices with known spectra
# --------------------------------------------------------------------------

CHECKS = [kgeo.is_positive_definite, kgeo.is_conditionally_positive_definite]


def test_identity_is_pd_and_cpd():
    for n in (1, 2, 10):
        assert kgeo.is_positive_definite(np.eye(n)) is True
        assert kgeo.is_conditionally_positive_definite(np.eye(n)) is True


def test_known_indefinite_matrix():
    K = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3 and -1; c = (1, -1) gives -2
    assert kgeo.is_positive_definite(K) is False
    assert kgeo.is_conditionally_positive_definite(K) is False
    K = np.array([[0.0, 1.0], [1.0, 0.0]])
    assert kgeo.is_positive_definite(K) is False
    assert kgeo.is_conditionally_positive_definite(K) is False


def test_negative_absolute_difference_is_cpd_not_pd():
    x = np.array([0.0, 0.3, 1.0, 2.5, 4.0, 7.0])
    K = -np.abs(x[:, None] - x[None, :])  # minus a distance: cpd (Schoenberg)
    assert kgeo.is_conditionally_positive_definite(K) is True
    assert kgeo.is_positive_definite(K) is False
    # A constant added or removed keeps it cpd; a large enough one makes it pd here.
    assert kgeo.is_conditionally_positive_definite(K - 100.0) is True
    assert kgeo.is_positive_definite(K + 100.0) is True


def test_a_constant_added_never_makes_a_matrix_cpd():
    """P (K + s) P = P K P: whether K is cpd does not depend on a constant s.
    The allowance was tol * max|K_ij|, which s = 1e7 made 0.06 here, above
    the -0.0015 of the diffusion kernel's P K P at t = 25 (not cpd); the
    centring's own rounding at that size is 4 n eps s, 2e-6."""
    rng = np.random.default_rng(0)
    X = rng.poisson(0.3, (200, 400)).astype(float)
    X = X[X.sum(axis=1) > 0]
    not_cpd = kgeo.pairwise_kernels(X, kernel="diffusion", t=25.0)
    cpd = kgeo.pairwise_kernels(X, kernel="ngd")
    for shift in (0.0, 1.0, -5.0, 1e3, 1e7, 1e8, -1e8):
        assert not kgeo.is_conditionally_positive_definite(not_cpd + shift)
        assert kgeo.is_conditionally_positive_definite(cpd + shift)


def test_constant_matrices():
    # -1 everywhere: eigenvalues -n and 0; P K P = 0.
    K = -np.ones((5, 5))
    assert kgeo.is_positive_definite(K) is False
    assert kgeo.is_conditionally_positive_definite(K) is True
    assert kgeo.is_positive_definite(np.ones((5, 5))) is True


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("tol", [0.0, 1e-8])
def test_the_zero_matrix_is_pd_and_cpd(n, tol):
    # Every eigenvalue of 0 is 0: semi-definite, and so is P 0 P, at any
    # tolerance (the allowance is then 0 itself, and 0 >= -0 holds).
    for check in (kgeo.is_positive_definite, kgeo.is_conditionally_positive_definite):
        assert check(np.zeros((n, n)), tol=tol) is True


def test_tol_zero_allows_the_eigensolvers_rounding_in_both_checks():
    # outer(v, v) is exactly semi-definite, but eigvalsh gives -6.4e-16 as its
    # smallest eigenvalue: tol=0 refused it as not pd, while the cpd check
    # (which always allowed its rounding) accepted it (a review).
    K = np.outer([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert np.linalg.eigvalsh(K)[0] < 0
    for scale in (1.0, 2.0**-600, 2.0**600, 3.0):
        assert kgeo.is_positive_definite(scale * K, tol=0) is True
        assert kgeo.is_conditionally_positive_definite(scale * K, tol=0) is True
    # A true negative eigenvalue far beyond the rounding is still refused.
    assert kgeo.is_positive_definite(K - 1e-9 * np.eye(3), tol=0) is False


@pytest.mark.parametrize("n", [3, 40])
@pytest.mark.parametrize("scale", [1.0, 3.0, 2.0 ** -600])
def test_tol_zero_allows_the_documented_rounding_and_no_more(n, scale):
    """tol=0 leaves the smallest eigenvalue 4 n eps max|K_ij| (the
    docstring's bound). A diagonal matrix's eigenvalues are its entries,
    exactly, so the bound is probed from both sides: half of it accepted,
    twice it refused. The -1e-9 above is 1e6 times beyond it: an allowance
    450 times the documented one (1e-13 for eps) passed every test here."""
    allowance = 4 * n * EPS * scale
    for last, expected in ((-0.5 * allowance, True), (-2.0 * allowance, False)):
        K = np.diag([scale] * (n - 1) + [last])
        assert np.linalg.eigvalsh(K)[0] == last
        assert kgeo.is_positive_definite(K, tol=0) is expected


@pytest.mark.parametrize("n", [50, 200])
def test_tol_zero_allows_a_rounding_that_grows_with_n(n):
    # The linear Gram of n points in the plane is exactly semi-definite, yet
    # eigvalsh's smallest eigenvalue is about -10 eps max|K| at n = 50 and
    # -60 eps at n = 200: an allowance of 4 eps max|K| without the factor n
    # passed the 3 x 3 test above, but refused these (mutation testing).
    V = np.random.default_rng(0).standard_normal((n, 2))
    K = V @ V.T
    eps = np.finfo(np.float64).eps
    if np.linalg.eigvalsh(K)[0] >= -4 * eps * np.abs(K).max():
        pytest.skip("this LAPACK rounds the smallest eigenvalue within 4 eps max|K|")
    assert kgeo.is_positive_definite(K, tol=0) is True
    assert kgeo.is_conditionally_positive_definite(K, tol=0) is True
    assert kgeo.is_positive_definite(K - 1e-6 * np.abs(K).max() * np.eye(n), tol=0) is False


def test_tolerance_is_relative_to_the_spectrum():
    Q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((6, 6)))
    K = Q @ np.diag([100.0, 10.0, 1.0, 0.5, 0.1, -1e-7]) @ Q.T
    K = (K + K.T) / 2
    assert kgeo.is_positive_definite(K)             # -1e-7 >= -1e-8 * 100
    assert not kgeo.is_positive_definite(K, tol=1e-10)
    assert not kgeo.is_positive_definite(K, tol=0)
    K_small = Q @ np.diag([1.0, 0.5, 0.5, 0.5, 0.1, -1e-7]) @ Q.T
    assert not kgeo.is_positive_definite((K_small + K_small.T) / 2)  # -1e-7 < -1e-8 * 1
    assert kgeo.is_positive_definite((K_small + K_small.T) / 2, tol=1e-6)


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("K, error, match", [
    (np.ones((2, 3)), ValueError, r"non-empty square matrix, got shape \(2, 3\)"),
    (np.ones(3), ValueError, r"non-empty square matrix, got shape \(3,\)"),
    (np.ones((0, 0)), ValueError, r"non-empty square matrix, got shape \(0, 0\)"),
    (np.array([[1.0, np.nan], [np.nan, 1.0]]), ValueError, "NaN or infinity"),
    (np.array([[1.0, np.inf], [np.inf, 1.0]]), ValueError, "NaN or infinity"),
    (np.array([[1.0, 0.5], [0.4, 1.0]]), ValueError, r"symmetric; max \|K - K.T\| = 0.1"),
    # Hermitian, eigenvalues -1 and 3: casting to real would call it pd.
    (np.array([[1, 2j], [-2j, 1]]), ValueError, "K must be a real matrix, got dtype complex128"),
    (np.array([["1", "0"], ["0", "1"]]), TypeError, "K must hold real numbers, got dtype <U1"),
    # LIL's data is an array of lists: its complex values were read as
    # objects, a TypeError where CSR gave this ValueError (a review).
    (sp.lil_matrix(np.array([[1, 2j], [-2j, 1]])), ValueError,
     "K must be a real matrix, got dtype complex128"),
    (None, TypeError, r"K must be a square array-like or sparse matrix of real numbers, "
                      r"got NoneType"),
    (np.array([[1.0, "x"], ["x", 1.0]], dtype=object), TypeError,
     r"K must hold numbers \(bool, int or float\): could not convert string to float: 'x'"),
], ids=["non_square", "1d", "empty", "nan", "inf", "asymmetric", "complex", "strings",
        "complex_lil", "none", "string_objects"])
def test_definiteness_check_errors(check, K, error, match):
    with pytest.raises(error, match=match):
        check(K)


@pytest.mark.parametrize("check", CHECKS)
def test_definiteness_checks_read_numbers_held_as_objects(check):
    # Python ints beyond int64 and a frame's pandas.NA were "dtype object",
    # where pairwise_kernels reads the first and names the second (a review).
    assert check([[2**70, 0], [0, 1]]) is True
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1, pd.NA], "b": [0, 1]}, dtype="Int64")
    with pytest.raises(ValueError, match=r"K contains 1 missing value\(s\) \(pandas.NA\)"):
        check(frame)


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("tol, error, match", [
    (-1e-8, ValueError, r"tol must be finite and >= 0, got -1e-08"),
    (np.nan, ValueError, r"tol must be finite and >= 0, got nan"),
    (np.inf, ValueError, r"tol must be finite and >= 0, got inf"),
    ("0", TypeError, r"tol must be a real number, got '0' \(str\)"),
    (True, TypeError, r"tol must be a real number, got True \(bool\)"),
])
def test_definiteness_check_bad_tol(check, tol, error, match):
    with pytest.raises(error, match=match):
        check(np.eye(3), tol=tol)


@pytest.mark.parametrize("check", CHECKS)
def test_definiteness_check_accepts_sparse(check):
    K = np.array([[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 2.0]])
    assert check(sp.csr_matrix(K)) is check(K) is True
    assert check(sp.csr_matrix(-K)) is check(-K) is False


def test_tiny_asymmetry_from_rounding_is_accepted():
    K = np.array([[2.0, 1.0], [1.0 + 1e-14, 2.0]])
    assert kgeo.is_positive_definite(K)


def test_asymmetry_is_refused_from_1e_10_of_the_largest_entry():
    """The documented bound: 1e-8 of max |K| is refused, 1e-12 accepted."""
    with pytest.raises(ValueError, match="K must be symmetric"):
        kgeo.is_positive_definite(np.array([[1.0, 0.5], [0.5 + 1e-8, 1.0]]))
    assert kgeo.is_positive_definite(np.array([[1.0, 0.5], [0.5 + 1e-12, 1.0]]))


@pytest.mark.parametrize("constant", [0.0, 1e3])
def test_cpd_tolerance_is_relative_to_the_spectrum_of_pkp(constant):
    """The cpd check's allowance is tol * max|eig(P K P)| (+ rounding), as
    its docstring says: K has P K P's eigenvalues by construction (an
    orthonormal basis of the complement of the constant vector, and a
    constant, which P removes). Found by mutation testing: the check with
    the tol term dropped, or multiplied by 1000, passed every test here."""
    A = np.random.default_rng(0).standard_normal((6, 5))
    Q, _ = np.linalg.qr(A - A.mean(axis=0))  # columns orthogonal to (1, ..., 1)

    def with_pkp_spectrum(eigenvalues):
        K = Q @ np.diag(eigenvalues) @ Q.T + constant
        return (K + K.T) / 2

    K = with_pkp_spectrum([100.0, 10.0, 1.0, 0.5, -1e-7])
    assert kgeo.is_conditionally_positive_definite(K)  # -1e-7 >= -1e-8 * 100
    assert not kgeo.is_conditionally_positive_definite(K, tol=1e-10)
    assert not kgeo.is_conditionally_positive_definite(K, tol=0)
    K_small = with_pkp_spectrum([1.0, 0.5, 0.5, 0.1, -1e-7])
    assert not kgeo.is_conditionally_positive_definite(K_small)  # -1e-7 < -1e-8 * 1
    assert kgeo.is_conditionally_positive_definite(K_small, tol=1e-6)


def test_tolerance_is_relative_to_the_largest_eigenvalue():
    """tol scales with max |eig|, which exceeds the largest entry n-fold for
    the all-ones matrix (eigenvalue 100, entries 1): taking 1e-7 away along a
    direction orthogonal to it leaves an eigenvalue of -1e-7, within
    1e-8 * 100; 1e-5 is beyond it."""
    v = np.zeros(100)
    v[:2] = [1.0, -1.0]
    v /= np.linalg.norm(v)
    K = np.ones((100, 100)) - 1e-7 * np.outer(v, v)
    assert np.linalg.eigvalsh(K)[0] < -9e-8
    assert kgeo.is_positive_definite(K)
    assert not kgeo.is_positive_definite(np.ones((100, 100)) - 1e-5 * np.outer(v, v))


@pytest.mark.parametrize("transpose", [False, True])
def test_definiteness_reads_the_symmetric_part(transpose):
    """[[1, 1 - d], [1 + d, 1]] is judged by its symmetric part [[1, 1], [1, 1]]
    (singular, psd): read from one triangle, as eigvalsh does, it would have
    an eigenvalue of -d in one orientation, refused at tol=0."""
    d = 2e-11
    K = np.array([[1.0, 1.0 - d], [1.0 + d, 1.0]])
    assert kgeo.is_positive_definite(K.T if transpose else K, tol=0.0)


def _spectrum(eigenvalues, seed=0):
    """A symmetric matrix with the given eigenvalues.

    The eigenvector of the last eigenvalue is (1, -1, 0, ...) / sqrt(2), which
    sums to 0: a negative last eigenvalue makes the matrix neither pd nor cpd.
    The others are random.
    """
    A = np.random.default_rng(seed).standard_normal((len(eigenvalues),) * 2)
    A[:, -1] = 0.0
    A[:2, -1] = [1.0, -1.0]
    Q, _ = np.linalg.qr(A[:, ::-1])
    Q = Q[:, ::-1]
    K = Q @ np.diag(eigenvalues) @ Q.T
    return (K + K.T) / 2


# (matrix, pd, cpd) at unit scale: the reference for every rescaled copy.
_X_LINE = np.array([0.0, 0.3, 1.0, 2.5, 4.0, 7.0])
SCALE_CASES = {
    "identity": (np.eye(4), True, True),
    "minus_distance": (-np.abs(_X_LINE[:, None] - _X_LINE[None, :]) / 7.0, False, True),
    "indefinite": (np.array([[1.0, 2.0], [2.0, 1.0]]) / 2.0, False, False),
    # Smallest eigenvalue -1e-3 of the largest: far outside tol = 1e-8 at any
    # scale. The old floor of 1 in the allowance (-tol * max(1, max|eig|))
    # accepted it once K was scaled below 1e-5.
    "relative_negative": (_spectrum([1.0, 0.5, 0.1, -1e-3]), False, False),
    "pd_spectrum": (_spectrum([1.0, 0.5, 0.1, 1e-3]), True, True),
}


@pytest.mark.parametrize("scale", [9e307 / 1.0, 1.7e308 / 2.0, 1e150, 1e-6, 1e-150, 1e-300,
                                   2.0 ** -1060])
@pytest.mark.parametrize("case", list(SCALE_CASES))
def test_answers_do_not_depend_on_the_matrix_scale(case, scale):
    # Definiteness is invariant under K -> c K (c > 0); the answers at unit
    # scale are the reference. Entries near the float64 maximum used to
    # overflow in (K + K.T) / 2 and in the cpd check's means (eye * 9e307:
    # pd False; minus a distance * 1.7e308: LinAlgError), small ones met an
    # absolute allowance.
    K, pd, cpd = SCALE_CASES[case]
    assert kgeo.is_positive_definite(K) is pd
    assert kgeo.is_conditionally_positive_definite(K) is cpd
    scaled = K * scale
    with np.errstate(over="raise", invalid="raise"):  # and no overflow on the way
        assert kgeo.is_positive_definite(scaled) is pd
        assert kgeo.is_conditionally_positive_definite(scaled) is cpd


def test_entries_at_the_float64_limit():
    # The review's cases: eye * 9e307 is pd; minus a distance with entries up
    # to the float64 maximum is cpd, as it is after scaling by 1e-300.
    assert kgeo.is_positive_definite(np.eye(2) * 9e307) is True
    D = np.abs(_X_LINE[:, None] - _X_LINE[None, :]) / 7.0 * np.finfo(np.float64).max
    assert kgeo.is_conditionally_positive_definite(-D) is True
    assert kgeo.is_conditionally_positive_definite(-D * 1e-300) is True
    assert kgeo.is_positive_definite(-D) is False


@given(K=hnp.arrays(np.float64, st.tuples(st.integers(1, 6)).map(lambda s: s * 2),
                    elements=st.one_of(st.just(0.0), st.floats(1e-3, 1e3),
                                       st.floats(-1e3, -1e-3))),
       k=st.integers(-1000, 1000), shift=st.floats(-5.0, 5.0))
def test_power_of_two_scaling_gives_identical_answers(K, k, shift):
    # 2**k * K is K with its exponents moved (every entry stays normal here),
    # and the checks normalise by a power of two: the same matrix reaches
    # eigvalsh, so the answers agree exactly, right at the tolerance too.
    K = (K + K.T) / 2 + shift * np.eye(K.shape[0])
    scaled = np.ldexp(K, k)
    for check in CHECKS:
        assert check(scaled) is check(K)
        assert check(scaled, tol=0) is check(K, tol=0)


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("scale", [1e-20, 1.0, 1e300])
def test_asymmetry_is_judged_relative_to_the_entries(check, scale):
    # 10% asymmetry is refused at any scale (at 1e-20 it used to pass the
    # absolute 1e-10 bound); rounding-level asymmetry is accepted at any scale.
    with pytest.raises(ValueError, match=r"symmetric; max \|K - K.T\| = .* \(0.1 of max \|K\|\)"):
        check(np.array([[1.0, 0.5], [0.4, 1.0]]) * scale)
    assert check(np.array([[2.0, 1.0], [1.0 + 1e-14, 2.0]]) * scale) is True


@pytest.mark.parametrize("check", CHECKS)
def test_asymmetry_beyond_float64_is_reported(check):
    # K - K.T overflows; the check must still refuse it, with a finite message.
    with pytest.raises(ValueError, match=r"max \|K - K.T\| = above the float64 maximum \(2 of"):
        check(np.array([[1.0, 9e307], [-9e307, 1.0]]))


@pytest.mark.parametrize("check", CHECKS)
def test_asymmetry_between_1e_10_and_1e_8_of_the_largest_entry_is_refused(check):
    """Found by mutation testing: the existing test's 1e-8 sits at the edge
    of a tenfold looser bound. 1e-9 of max |K| is above the documented
    1e-10, and refused, naming it."""
    with pytest.raises(ValueError, match=r"symmetric; max \|K - K.T\| = 1e-09 \(1e-09 of max "
                                         r"\|K\|\), more than 1e-10 of max \|K\|"):
        check(np.array([[1.0, 0.5], [0.5 + 1e-9, 1.0]]))
