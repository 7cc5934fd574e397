"""The hyperbolic (spherical normal) heat kernel: its evaluation checked
against closed forms, quadrature of the paper's equation 6, the heat
equation, unit mass and the dimension recursion; the compiled kernel against
those; the SVM on it against the NumPy checker; bad input."""

import math
from decimal import Decimal
import os
import re
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.integrate import quad

import kgeo
from kgeo import _hyperbolic as H

sys.path.insert(0, os.path.dirname(__file__))
import svm_checker  # noqa: E402
from test_svm import solver_reads_shift  # noqa: E402

TAUS = (0.003, 0.1, 1.0, 10.0)


def assert_logs_close(got, want, atol):
    """|got - want| <= atol elementwise (atol may be an array: log-values
    of size L carry about 1e-16 L of rounding)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    worst = np.max(np.abs(got - want) / atol)
    assert worst <= 1.0, (worst, got, want)
DISTANCES = np.array([0.0, 1e-7, 0.01, 0.3, 1.0, 1.999, 2.001, 4.0, 9.0, 25.0])


def closed_h3(r, tau):
    """Equation 5 with m = 1 written out (the papers' NOTES)."""
    shape = np.where(r > 0, r / np.sinh(np.maximum(r, 1e-300)), 1.0)
    return -1.5 * np.log(4 * np.pi * tau) + np.log(shape) - tau - r * r / (4 * tau)


def closed_h5(r, tau):
    """Equation 5 with m = 2 written out; r coth r - 1 from its series below
    r = 0.05, where the subtraction would cancel."""
    r = np.asarray(r, dtype=np.float64)
    rs = np.where(r > 0, r, 1.0)
    bend = np.where(r < 0.05, rs ** 2 / 3 - rs ** 4 / 45 + 2 * rs ** 6 / 945, rs / np.tanh(rs) - 1)
    shape = np.where(r > 0, (bend + rs * rs / (2 * tau)) / np.sinh(rs) ** 2,
                     1 / 3 + 1 / (2 * tau))
    return (-4 * tau - r * r / (4 * tau) + np.log(shape)
            - np.log(8 * np.pi ** 2 * tau * np.sqrt(4 * np.pi * tau)))


def equation_6_h2(r, tau):
    """Equation 6 with m = 0, its prefactor sqrt(2) / (4 pi tau)^(3/2), by
    adaptive quadrature in the paper's own variable s (the 1 / sqrt(s - r)
    end handled by QUADPACK's algebraic weight)."""
    def smooth(s):
        # s exp(-s^2/4t) / sqrt(cosh s - cosh r), times sqrt(s - r)
        if s == r:
            return r / math.sqrt(math.sinh(r)) if r > 0 else math.sqrt(2.0)
        gap = 2 * math.sinh((s + r) / 2) * math.sinh((s - r) / 2)
        return s * math.exp(-(s * s - r * r) / (4 * tau)) * math.sqrt((s - r) / gap)
    width = 40 * math.sqrt(tau) + 40
    value, _ = quad(smooth, r, r + width, weight="alg", wvar=(-0.5, 0.0),
                    epsabs=0.0, epsrel=1e-13, limit=400)
    return (0.5 * math.log(2) - 1.5 * math.log(4 * math.pi * tau) - tau / 4
            - r * r / (4 * tau) + math.log(value))


@pytest.mark.parametrize("tau", TAUS)
def test_odd_dimensions_match_the_closed_forms(tau):
    for n, closed in ((3, closed_h3), (5, closed_h5)):
        want = closed(DISTANCES, tau)
        assert_logs_close(H.log_heat_kernel(DISTANCES, tau, n), want,
                          1e-13 + 3e-14 * np.abs(want))


# (Long times too: the docs' bound for H^2 is claimed at any tau, and a
# review found it tested up to 10 only; 1e-13 apart at 100 and 1000.)
@pytest.mark.parametrize("tau", TAUS + (100.0, 1000.0))
def test_h2_matches_quadrature_of_equation_6(tau):
    r = DISTANCES[DISTANCES ** 2 / (4 * tau) < 600]
    want = np.array([equation_6_h2(x, tau) for x in r])
    assert_logs_close(H.log_heat_kernel(r, tau, 2), want, 1e-11 * (1 + r ** 2 / tau))


@pytest.mark.parametrize("n, tau", [(n, tau) for n in (2, 3, 4, 5, 8, 11)
                                    for tau in (0.05, 0.5, 4.0)]
                         + [(23, 0.05), (31, 0.5), (41, 0.2), (101, 0.02)])
def test_unit_mass(n, tau):
    # integral over H^n: area of the unit (n-1)-sphere times sinh^(n-1) r dr
    area = 2 * math.pi ** (n / 2) / math.gamma(n / 2)

    def density(r):
        return math.exp(H.log_heat_kernel(r, tau, n)[0] + (n - 1) * math.log(math.sinh(r))
                        + math.log(area))
    # the mass sits near r = (n - 1) tau, within a few sqrt(2 tau)
    top = 2 * math.sqrt(tau) * 12 + 2 * (n - 1) * tau + 5
    mass, _ = quad(density, 0, top, epsabs=0, epsrel=1e-12, limit=400)
    assert abs(mass - 1) < 1e-9


@pytest.mark.parametrize("n", [2, 3, 4, 7, 10, 21, 22, 35, 101])
@pytest.mark.parametrize("tau", [0.05, 1.0])
def test_heat_equation(n, tau):
    # d/dtau K = K'' + (n - 1) coth(r) K', the radial Laplacian of H^n, by
    # central differences of log K (so relative to K).
    r = np.array([0.4, 1.0, 2.5, 5.0])
    h, d = 1e-4, 1e-4

    def log_k(r, tau):
        return H.log_heat_kernel(r, tau, n)
    f0 = log_k(r, tau)
    f1 = (log_k(r + h, tau) - log_k(r - h, tau)) / (2 * h)
    f2 = (log_k(r + h, tau) - 2 * f0 + log_k(r - h, tau)) / h ** 2
    ft = (log_k(r, tau + d) - log_k(r, tau - d)) / (2 * d)
    laplacian = f2 + f1 ** 2 + (n - 1) / np.tanh(r) * f1  # (Laplacian K) / K
    # (central differences of log K ~ r^2 / 4 tau leave about 1e-5 of it)
    np.testing.assert_allclose(ft, laplacian, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("n", [2, 3, 6, 9, 19, 20, 21, 30, 45])
def test_dimension_recursion(n):
    # K_(n+2) = -exp(-n tau) / (2 pi sinh r) dK_n/dr (Millson's recursion;
    # odd and even dimensions are computed by different routes here, and
    # n = 19 to 21 join the recursion's dimensions to the contour's).
    tau, r, h = 0.3, np.array([0.2, 0.9, 2.2, 4.0]), 1e-5
    slope = (np.exp(H.log_heat_kernel(r + h, tau, n))
             - np.exp(H.log_heat_kernel(r - h, tau, n))) / (2 * h)
    want = -np.exp(-n * tau) / (2 * np.pi * np.sinh(r)) * slope
    np.testing.assert_allclose(np.exp(H.log_heat_kernel(r, tau, n + 2)), want, rtol=1e-7)


@pytest.mark.parametrize("n, tau", [(2, 0.01), (2, 5.0), (2, 500.0), (3, 1.0), (4, 0.2),
                                    (4, 1000.0),
                                    (9, 2.0), (12, 0.05), (15, 100.0), (21, 5.0),
                                    (21, 1000.0), (22, 1.0), (41, 0.3), (100, 1.0),
                                    (101, 0.01)])
def test_table_reproduces_the_kernel(n, tau):
    table, extent, log_k0 = H.heat_table(tau, n)
    assert log_k0 == pytest.approx(H.log_heat_kernel(0.0, tau, n)[0], rel=1e-14)
    size = 300 if n <= 21 else 40  # (the direct evaluation's cost, as above)
    r = np.concatenate([np.linspace(0.0, min(3.0, extent), size + 1),
                        np.random.default_rng(n).uniform(0.0, extent, size)])
    # log(K(r) / K(0)) without log K(0) itself, -10^5 at n = 21, tau = 1000,
    # whose rounding alone would be 1e-11 of the ratio
    direct = H.log_heat_kernel_ratio(r, tau, n)
    from_table = H.evaluate_table(table, r) - r * r / (4 * tau)
    # log-space: relative to the value, growing with the exponent's size
    assert_logs_close(from_table, direct, 2e-13 * (1 + np.abs(direct)))
    assert direct[r >= extent - 1e-9].max(initial=-np.inf) < -700 or extent == r.max()


@pytest.mark.parametrize("m", range(1, 11))
def test_contour_integral_agrees_with_the_recursion(m):
    # Two independent routes to the m derivatives: where both apply (m <= 10),
    # they agree to rounding.
    r = np.array([0.0, 1e-6, 0.01, 0.4, 1.0, 1.99, 2.01, 3.5, 8.0, 19.0])
    for tau in (0.003, 0.1, 1.0):
        np.testing.assert_allclose(H._log_q_contour(r, tau, m), H._log_q(r, tau, m),
                                   rtol=0, atol=1e-13)


# log q_m(r) from the recursion in 250-digit arithmetic (mpmath 1.4.1:
# Taylor arithmetic about r, as in _log_p_about without the (r / sinh r)^k
# factor), rounded to 25 digits.
MPMATH_LOG_Q = [
    ((25, 0.2, 0.7), 44.76581362563948455688855),
    ((25, 1.0, 3.0), -2.195878301168663964875425),
    ((50, 0.05, 1.3), 129.9263831996593962692802),
    ((50, 0.5, 12.0), -391.5808423599554763776616),
    ((50, 1.0, 0.01), 110.2214485294156091306562),
]


@pytest.mark.parametrize("where, value", MPMATH_LOG_Q)
def test_high_dimensions_match_high_precision_values(where, value):
    m, tau, r = where
    assert abs(H._log_q(np.array([r]), tau, m)[0] - value) < 1e-13


# log q_m(r) in 80-digit arithmetic (mpmath 1.4.1, Cauchy's integral for the
# m-th derivative in u = cosh r on a circle of radius (cosh r + 1) / 2, which
# reproduces MPMATH_LOG_Q above to all 25 digits): the contour route (m > 10)
# and the recursion between r = 1 and 2 pinned directly (a mutation review
# found three faults there, 3e-11 to 6e-11 off, that other tests caught only
# through agreements between routes).
MORE_MPMATH_LOG_Q = [
    ((11, 0.3, 0.7), 12.19631087997378393693462),
    ((25, 0.3, 2.0), 24.84439199732233111884931),
    ((25, 1.0, 5.0), -47.10061729386191969043009),
    ((50, 0.3, 2.0), 76.3078394856947327703454),
    ((50, 1.0, 5.0), -64.74357426135745519295516),
    ((10, 1.0, 1.05), 4.365087539919868259921984),
    ((10, 100.0, 1.05), -2.482318862578359993403877),
    ((9, 1000.0, 1.2), -6.64698765044908155712725),
    ((8, 100.0, 1.5), -6.635582779414026198196254),
]


@pytest.mark.parametrize("where, value", MORE_MPMATH_LOG_Q)
def test_log_q_matches_more_high_precision_values(where, value):
    m, tau, r = where
    assert abs(H._log_q(np.array([r]), tau, m)[0] - value) < 1e-13


# log K on H^4 in 40-digit arithmetic (mpmath 1.4.1), by descent from H^5's
# closed form, K_4(r) = sqrt(2) e^(7 tau / 4) integral_r^inf K_5(s) sinh s /
# sqrt(cosh s - cosh r) ds, taken in s = r + v^2 (kgeo takes cosh s = cosh r
# cosh^2 x) by composite Gauss-Legendre; 60 and 120 panels agree to 1e-19
# (160 and 320 at r = 0.1).
# An even dimension at long times had no reference of its own: unit mass
# and the heat equation test its constant and its shape to 1e-9 and 1e-4.
MPMATH_LOG_K4 = [
    ((0.01, 3.0), -222.6811699234642359716619),
    ((1.0, 25.0), -195.1659440212881366944870),
    ((100.0, 0.0), -237.3216176578871649441812),
    ((100.0, 40.0), -295.9169915898613008217439),
    ((1000.0, 0.0), -2265.784964136353682856047),
    ((1000.0, 0.1), -2265.787777488160615303798),
    ((1000.0, 1.0), -2266.056776560021809034649),
    ((1000.0, 10.0), -2276.940381998057955823215),
    ((1000.0, 40.0), -2320.872180409778079388912),
]


@pytest.mark.parametrize("where, value", MPMATH_LOG_K4)
def test_h4_matches_high_precision_values(where, value):
    tau, r = where
    # (1e-16 |log K|: the rounding of log K itself, 2.3e-13 at tau = 1000)
    assert_logs_close(H.log_heat_kernel(np.array([r]), tau, 4), [value],
                      1e-13 + 1e-16 * abs(value))


@pytest.mark.parametrize("n, tau", [(2, 1e-10), (3, 2.5e-16), (4, 1e-12), (5, 1e-6),
                                    (11, 1e-8), (20, 1e-14), (21, 1e-18), (3, 3e-5)])
def test_table_reproduces_the_kernel_at_small_times(n, tau):
    # Below tau of about 1e-4 the kernel vanishes within the first piece of
    # 1/2; tabulated on that piece, g = log K(r)/K(0) + r^2/4 tau cancelled
    # terms of 1/(16 tau) and lost digits inside the extent (a relative
    # error of 1e-3 at tau = 2.5e-16). The table now spans the extent alone.
    table, extent, _ = H.heat_table(tau, n)
    piece = H.table_piece(extent)
    assert piece == min(H.TABLE_PIECE, extent) and table.shape[0] == 1
    r = np.concatenate([np.linspace(0.0, extent, 301),
                        np.random.default_rng(n).uniform(0.0, extent, 300)])
    direct = H.log_heat_kernel_ratio(r, tau, n)
    from_table = H.evaluate_table(table, r, piece) - r * r / (4 * tau)
    assert_logs_close(from_table, direct, 2e-13 * (1 + np.abs(direct)))


@pytest.mark.parametrize("n, tau", [(2, 1.5e-4), (2, 2.1e-4), (4, 4.4e-4), (20, 4.2e-4),
                                    (2, 8.4e-4)])
def test_even_table_reaches_its_last_piece_at_small_times(n, tau):
    # An even n's table is fitted at nodes up to the end of its last piece,
    # past the extent; there the descent integral reads the odd table of
    # H^(n+1), which stopped short where the extent and the Gaussian bound
    # rounded up to the same half-unit: the integral lost its tail and the
    # whole last piece its fifth digit (a review: 5e-5 to 9e-5 at n = 2,
    # t = 4.2e-4, r = 0.5-0.7, against mpmath's quadrature).
    H.heat_table.cache_clear()
    table, extent, _ = H.heat_table(tau, n)
    piece = H.table_piece(extent)
    assert piece == H.TABLE_PIECE and extent % piece > 0  # a last piece past the extent
    r = np.linspace(0.0, extent, 401)
    direct = H.log_heat_kernel_ratio(r, tau, n)
    from_table = H.evaluate_table(table, r, piece) - r * r / (4 * tau)
    assert_logs_close(from_table, direct, 2e-13 * (1 + np.abs(direct)))


def _pair_at_distance(n, r):
    """Two spherical normals (sigma = 1) at Fisher-Rao distance r on H^n."""
    c = 2.0 * (n - 1)
    X = np.zeros((2, n))
    X[:, -1] = 1.0
    # gap = |mu - mu'|^2 / (2c) = cosh r - 1 = 2 sinh^2(r / 2)
    X[1, 0] = 2.0 * math.sqrt(c) * math.sinh(0.5 * r)
    return X


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("n", [2, 3, 4, 7, 21])
@pytest.mark.parametrize("t", [1e-16, 1e-30, 1e-100, 1e-300])
def test_small_times_give_the_gaussian_of_the_distance(n, t):
    # At tau = t / (2 (n - 1)) this small, K(r) / K(0) is exp(-r^2 / 4 tau)
    # to within O(n r^2 + n^2 tau) = O(n^2 tau), far below rounding. Before,
    # the values were off by 1e-3 at t = 1e-15 and 17 % at t = 1e-18 (n = 2),
    # and even n failed to tabulate below about 1e-19 (the descent integral's
    # probes all lay past its end).
    tau = t / (2.0 * (n - 1))
    for exponent in (0.1, 1.0, 10.0):
        r = math.sqrt(4.0 * tau * exponent)
        X = _pair_at_distance(n, r)
        K = kgeo.pairwise_kernels(X, kernel="hyperbolic", t=t)
        assert K[0, 0] == K[1, 1] == 1.0
        assert K[0, 1] == pytest.approx(math.exp(-exponent), rel=2e-13 * (1 + exponent))


def spherical_normals(rng, n_rows, n, spread=1.0):
    return np.column_stack([spread * rng.normal(size=(n_rows, n - 1)),
                            rng.lognormal(sigma=0.6, size=n_rows)])


def reference_gram(X, Y, t, normalize=False):
    """From the Fisher-Rao distance and log_heat_kernel (any n)."""
    n = X.shape[1]
    c = 2.0 * (n - 1)
    gap = ((((X[:, None, :-1] - Y[None, :, :-1]) ** 2).sum(-1) / c
            + (X[:, None, -1] - Y[None, :, -1]) ** 2) / (2 * X[:, None, -1] * Y[None, :, -1]))
    r = np.arccosh(1 + gap)
    if normalize:
        log_k = H.log_heat_kernel(r.ravel(), t / c, n).reshape(r.shape)
        return np.exp(log_k - 0.5 * n * math.log(c))
    return np.exp(H.log_heat_kernel_ratio(r.ravel(), t / c, n).reshape(r.shape))


@pytest.mark.parametrize("n", [2, 3, 4, 6, 24, 51])
@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("normalize", [False, True])
def test_pairwise_kernels_match_the_reference(n, form, normalize):
    rng = np.random.default_rng(n)
    # (fewer rows above n = 21, where the reference's direct evaluation, a
    # contour integral per distance and for even n a quadrature of them, is slow)
    size = 25 if n <= 21 else 6
    X, Y = spherical_normals(rng, size, n), spherical_normals(rng, size - 2, n)
    X[3, :-1] = 0.0  # a mean at the origin: a sparse row of one stored value
    X[5] = X[4]  # a duplicate: distance 0 through the rows' difference
    X[2] = X[4] * (1 + 1e-12)  # a near-duplicate: never above k(x, x)
    as_form = sp.csr_matrix if form == "csr" else np.asarray
    for t in (0.2, 3.0):
        K = kgeo.pairwise_kernels(as_form(X), as_form(Y), kernel="hyperbolic", t=t,
                                  normalize=normalize)
        np.testing.assert_allclose(K, reference_gram(X, Y, t, normalize), rtol=1e-12,
                                   atol=1e-290)  # subnormals carry fewer digits
        G = kgeo.pairwise_kernels(as_form(X), kernel="hyperbolic", t=t, normalize=normalize)
        np.testing.assert_allclose(G, reference_gram(X, X, t, normalize), rtol=1e-12,
                                   atol=1e-290)
        if not normalize:
            assert np.all(np.diag(G) == 1.0) and G[4, 5] == 1.0 and G.max() == 1.0


def test_univariate_normals_use_the_fisher_rao_distance():
    # The Fisher-Rao distance of N(m1, s1^2) and N(m2, s2^2), as usually
    # written: sqrt(2) arccosh(1 + ((m1 - m2)^2 + 2 (s1 - s2)^2) / (4 s1 s2)).
    # At small t the heat kernel is exp(-d^2 / 4t) (1 + O(d^2)) of it.
    X = np.array([[0.0, 1.0], [0.1, 1.05], [-0.08, 0.95], [0.05, 1.02]])
    d = math.sqrt(2) * np.arccosh(1 + ((X[:, None, 0] - X[None, :, 0]) ** 2
                                       + 2 * (X[:, None, 1] - X[None, :, 1]) ** 2)
                                  / (4 * X[:, None, 1] * X[None, :, 1]))
    t = 2e-4
    K = kgeo.pairwise_kernels(X, kernel="hyperbolic", t=t)
    assert K.min() > 1e-100
    np.testing.assert_allclose(-4 * t * np.log(K), d ** 2, rtol=2e-3, atol=1e-12)


def test_isometries_change_no_value():
    # mu -> (mu - m) / s, sigma -> sigma / s is an isometry of the Fisher metric.
    rng = np.random.default_rng(3)
    X = spherical_normals(rng, 30, 4)
    moved = np.column_stack([(X[:, :-1] - [0.5, -1.0, 2.0]) / 3.0, X[:, -1] / 3.0])
    for t in (0.1, 2.0):
        np.testing.assert_allclose(kgeo.pairwise_kernels(moved, kernel="hyperbolic", t=t),
                                   kgeo.pairwise_kernels(X, kernel="hyperbolic", t=t),
                                   rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_gram_matrices_are_positive_definite(n):
    # A heat kernel is positive definite at every t (sum c_i c_j K = |e^(tD/2) sum c_i delta|^2),
    # unlike the multinomial parametrix (test_pairwise_theory).
    rng = np.random.default_rng(10 + n)
    X = spherical_normals(rng, 60, n)
    for t in (0.05, 1.0, 30.0):
        assert kgeo.is_positive_definite(kgeo.pairwise_kernels(X, kernel="hyperbolic", t=t))


def test_far_pairs_are_exactly_zero():
    X = np.array([[0.0, 1.0], [0.0, 1e-6], [50.0, 1.0]])
    K = kgeo.pairwise_kernels(X, kernel="hyperbolic", t=0.01)
    assert K[0, 1] == 0.0 and K[0, 2] == 0.0 and np.all(np.diag(K) == 1.0)


def test_values_reach_the_bottom_of_float64s_range():
    """The kernel is cut to 0 only below float64's smallest subnormal (e^-746),
    not earlier: along a ray of growing sigma it falls monotonically through
    the subnormals before reaching 0."""
    s = np.geomspace(3000.0, 6000.0, 600)
    X = np.column_stack([np.zeros_like(s), np.zeros_like(s), s])
    K = kgeo.pairwise_kernels(np.array([[0.0, 0.0, 1.0]]), X, kernel="hyperbolic", t=0.1,
                              normalize=False)[0]
    assert np.all(np.diff(K) <= 0)
    assert K[0] > 0 and K[-1] == 0
    assert K[K > 0].min() < 1e-320


@pytest.mark.parametrize("n", [3, 5])
def test_svm_solves_the_dual(n):
    rng = np.random.default_rng(n)
    X = spherical_normals(rng, 90, n)
    y = np.where(X[:, -1] > np.median(X[:, -1]), 1, 0) + (X[:, 0] > 0.8)
    for C, t in ((1.0, 0.5), (30.0, 4.0)):
        model = kgeo.SVM(kernel="hyperbolic", C=C, t=t, tol=1e-6).fit(X, y)
        svm_checker.check_svm(model, X, y, X_test=spherical_normals(rng, 20, n))


def test_shift_changes_nothing():
    """Proposition 3: the SVM of k + 5 is that of k, to rounding. A model
    that dropped the shift would pass that comparison too: the shifted one
    must also be the model of the Gram matrix plus 5, bit for bit, and both
    fits must hand their solver a kernel of shift 5 (a fit that dropped it
    in both routes made the same model of k twice)."""
    rng = np.random.default_rng(8)
    X = spherical_normals(rng, 80, 3)
    y = (X[:, -1] > 1.0).astype(int)
    a = kgeo.SVM(kernel="hyperbolic", t=0.7, tol=1e-8).fit(X, y)
    K = kgeo.pairwise_kernels(X, kernel="hyperbolic", t=0.7)
    with solver_reads_shift(5.0):
        b = kgeo.SVM(kernel="hyperbolic", t=0.7, shift=5.0, tol=1e-8).fit(X, y)
        given = kgeo.SVM(kernel="precomputed", shift=5.0, tol=1e-8).fit(K, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), rtol=0,
                               atol=1e-9)
    svm_checker.assert_identical_models(b, given)


@pytest.mark.parametrize("n", [3, 5])  # the checker's closed forms
def test_normalize_in_the_svm_is_the_heat_kernel_itself(n):
    """normalize=True: the SVM is the model of pairwise_kernels' normalized
    Gram matrix, bit for bit, and that matrix is the heat kernel itself: the
    normalize=False kernel (k(x, x) = 1) times the heat kernel at distance
    0, c^(-n/2) K_tau(0) of H^n. Scaling the kernel by k0 is the SVM of C
    times k0 (dual coefficients over k0, the same decision values)."""
    rng = np.random.default_rng(n)
    X, Xt = spherical_normals(rng, 70, n), spherical_normals(rng, 20, n)
    y = np.where(X[:, -1] > np.median(X[:, -1]), 1, 0) + (X[:, 0] > 0.8)
    t, C, tol = 0.7, 3.0, 1e-8
    c = 2.0 * (n - 1)
    k0 = math.exp(H.log_heat_kernel_at_zero(t / c, n) - 0.5 * n * math.log(c))
    assert k0 < 0.05  # far from the normalize=False kernel's 1
    K = kgeo.pairwise_kernels(X, kernel="hyperbolic", t=t, normalize=True)
    K_plain = kgeo.pairwise_kernels(X, kernel="hyperbolic", t=t)
    assert np.all(np.diag(K_plain) == 1.0)
    np.testing.assert_allclose(np.diag(K), k0, rtol=1e-13)
    np.testing.assert_allclose(K, k0 * K_plain, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(K, reference_gram(X, X, t, normalize=True), rtol=1e-12)

    model = kgeo.SVM(kernel="hyperbolic", t=t, normalize=True, C=C, tol=tol).fit(X, y)
    given = kgeo.SVM(kernel="precomputed", C=C, tol=tol).fit(K, y)
    svm_checker.assert_identical_models(model, given)
    Kt = kgeo.pairwise_kernels(Xt, X, kernel="hyperbolic", t=t, normalize=True)
    np.testing.assert_array_equal(model.decision_function(Xt), given.decision_function(Kt))
    svm_checker.check_svm(model, X, y, X_test=Xt)

    # The dual of (k0 K, C) is that of (K, k0 C) with alpha scaled by k0 and
    # the same gradient, so the same path (same pairs, same gap) to the same
    # solution, to rounding (measured: 8e-14 of the box, 4e-16 in value).
    plain = kgeo.SVM(kernel="hyperbolic", t=t, C=C * k0, tol=tol).fit(X, y)
    np.testing.assert_array_equal(model.support_, plain.support_)
    np.testing.assert_array_equal(model.n_iter_, plain.n_iter_)
    np.testing.assert_allclose(model.dual_coef_ * k0, plain.dual_coef_, rtol=0,
                               atol=1e-12 * C * k0)
    np.testing.assert_allclose(model.decision_function(Xt), plain.decision_function(Xt),
                               rtol=0, atol=1e-12)


def test_sets_of_points_are_classified_by_their_spread():
    # Two classes of point sets in the plane with the same means and
    # different spreads: a normal's sigma is what tells them apart.
    rng = np.random.default_rng(0)
    sets, y = [], []
    for i in range(300):
        sets.append(rng.normal(size=2) + (0.5 if i % 2 else 1.0) * rng.normal(size=(8, 2)))
        y.append(i % 2)
    X, y = kgeo.spherical_normal_mle(sets), np.array(y)
    model = kgeo.SVM(kernel="hyperbolic", C=10.0, t=1.0).fit(X[:200], y[:200])
    assert model.score(X[200:], y[200:]) > 0.8


def test_spherical_normal_mle():
    a = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 3.0]])
    b = np.array([[1.0, 1.0], [1.0, -1.0]])
    rows = kgeo.spherical_normal_mle([a, b])
    mu = a.mean(axis=0)
    np.testing.assert_allclose(rows[0], [*mu, math.sqrt(((a - mu) ** 2).sum() / 6)])
    np.testing.assert_allclose(rows[1], [1.0, 0.0, math.sqrt(2.0 / 4)])
    np.testing.assert_array_equal(kgeo.spherical_normal_mle(np.stack([b, b])), [rows[1]] * 2)


@pytest.mark.parametrize("points, kind", [
    ([["1", "2"], ["3", "5"]], "str"),
    ([[b"1", b"2"], [b"3", b"5"]], "bytes"),
    (np.array([["2020-01-01", "2020-01-03"]], dtype="datetime64[D]"), "datetime64"),
    (np.array([[1, 2]], dtype="timedelta64[s]"), "timedelta64"),
    (np.array([[1.0, "2"]], dtype=object), "str"),
])
def test_spherical_normal_mle_refuses_points_that_are_not_numbers(points, kind):
    # float64's conversion read the digits of strings ([["1", "2"], ["3", "5"]]
    # gave a mean of (2, 3.5)) and counted the days of dates.
    with pytest.raises(TypeError, match=rf"set 0 must hold numbers, got {kind} values"):
        kgeo.spherical_normal_mle([points])


def _decimal_mle(points):
    """The MLE of one set from the points' exact values."""
    import decimal

    # 1,100 digits: sums of float64 values (up to 767 significant digits) are exact.
    with decimal.localcontext(decimal.Context(prec=1100, Emax=10**6, Emin=-10**6)):
        exact = [[Decimal(float(x)) for x in row] for row in points]
        m, d = len(exact), len(exact[0])
        mu = [sum(row[j] for row in exact) / m for j in range(d)]
        squares = sum((row[j] - mu[j]) ** 2 for row in exact for j in range(d))
        return mu, (squares / (m * d)).sqrt()


@pytest.mark.filterwarnings("error")
def test_spherical_normal_mle_at_any_scale(monkeypatch):
    """Coordinates anywhere in float64's range, each column at its own scale:
    sigma within 3e-16 of the exact MLE; the mean NumPy's bits for columns
    within 2**-450 and 2**450 (the plain formulas), elsewhere within the
    rounding of a sum at the column's scale. The plain formulas' squares
    overflowed at 1e154 and above (sigma inf) and underflowed below 1e-160
    (sigma 0: "all equal"), and a column of 1e150 hid every column below
    1e-160."""
    rng = np.random.default_rng(5)
    biggest = np.finfo(np.float64).max
    sets = [np.array([[1e200], [-1e200]]), np.array([[1.7e308, 0.0], [1.7e308, 1.0]]),
            np.array([[1e-200, 0.0], [0.0, 3e-200]]),
            np.array([[1e150, 1e-170], [1e150, -1e-170]]), np.array([[biggest], [-biggest]]),
            np.array([[2.0 ** 100], [-2.0 ** 100], [2.0 ** -1000]]),
            np.array([[4707500973758675.0], [3453079897302208.0], [3679199551440676.0]])
            * 2.0 ** -1074]
    sets += [rng.normal(size=(int(rng.integers(2, 6)), 3)) * 10.0 ** rng.integers(-290, 300, 3)
             for _ in range(200)]
    for points in sets:
        row = kgeo.spherical_normal_mle([points])[0]
        mu, sigma = _decimal_mle(points)
        tiny = Decimal(np.finfo(np.float64).smallest_subnormal)  # a subnormal's spacing
        assert abs(Decimal(row[-1]) - sigma) <= Decimal(3e-16) * sigma + tiny
        largest = np.abs(points).max(axis=0)
        if np.all((largest == 0) | ((largest >= 2.0 ** -450) & (largest <= 2.0 ** 450))):
            np.testing.assert_array_equal(row[:-1], points.mean(axis=0))
        for j, exact in enumerate(mu):
            assert abs(Decimal(row[j]) - exact) <= Decimal(2.0 ** -52) * Decimal(largest[j]) + tiny
    # sigma <= max |x| and the mean lies among the points, so only rounding at
    # the top of float64 could take either past it; then the set is refused.
    monkeypatch.setattr("kgeo._embedding._mean_and_spread",
                        lambda points, largest: (np.array([np.inf]), 1.0))
    with pytest.raises(ValueError, match=r"set 0's spherical normal lies beyond float64: its "
                                         r"mean or sigma .* scale the points down"):
        kgeo.spherical_normal_mle([np.array([[biggest], [-biggest]])])


def test_spherical_normal_mle_of_a_spread_of_a_few_ulps_of_the_mean():
    """Deviations from the rounded mean add m (mu - mean)^2 to the sum of
    squares, which is not small where the spread is a few ulps of the mean:
    two adjacent doubles gave sigma 41 % too large, points around 1e6 with a
    spread of 1e-3 3,000 ulps off. The corrected two-pass formula, summed
    pairwise, gives sigma within 2 ulps, on both of its paths."""
    rng = np.random.default_rng(0)
    sets = [np.array([[1.0], [1.0 + 2.0 ** -52]]),
            np.array([[1e300], [np.nextafter(1e300, np.inf)]]),
            1e6 + 1e-3 * rng.standard_normal((1000, 3)),
            1e3 + 1e-9 * rng.standard_normal((1000, 3)),
            1e160 + 1e150 * rng.standard_normal((300, 2))]
    for points in sets:
        sigma = kgeo.spherical_normal_mle([points])[0, -1]
        exact = float(_decimal_mle(points)[1])
        np.testing.assert_array_max_ulp(sigma, exact, maxulp=2)


@pytest.mark.parametrize("exponent", [-449, -455, -470, -480, -495, -600, 455, 600])
def test_spherical_normal_mle_of_a_few_ulps_at_the_ends_of_the_plain_range(exponent):
    """A spread of a few ulps of coordinates just below 2**-450 has squared
    deviations below float64's normal numbers: they are scaled first there
    (computed plainly up to 2**-500, sigma was 2.6e-5 off at 2**-480, and a
    set at 2**-495 was refused as "sigma below float64's smallest number":
    a mutation review). The test above has such spreads at 1 and 1e300."""
    a = 1.3 * 2.0 ** exponent
    ulp = np.spacing(a)
    points = np.array([[a, a], [a + 3 * ulp, a], [a + 7 * ulp, a]])
    sigma = kgeo.spherical_normal_mle([points])[0, -1]
    exact = _decimal_mle(points)[1]
    assert abs(Decimal(float(sigma)) - exact) <= Decimal(3e-16) * exact


@pytest.mark.filterwarnings("error")
def test_spherical_normal_mle_scales_columns_by_their_largest_magnitude():
    """A column whose largest value is small and whose most negative one is
    huge has a finite MLE; an infinite coordinate is refused as such, of
    either sign (scaled by the largest value instead, such columns
    overflowed with warnings and were refused for the wrong reason)."""
    row = kgeo.spherical_normal_mle([np.array([[-1e300], [1e-300]])])[0]
    # mu = (-1e300 + 1e-300) / 2, sigma = |x1 - x2| / 2: -+5e299 to rounding
    np.testing.assert_allclose(row, [-5e299, 5e299], rtol=1e-15)
    row = kgeo.spherical_normal_mle([np.array([[-3e-170, 1.0], [-1e-170, 1.0]])])[0]
    np.testing.assert_allclose(row, [-2e-170, 1.0, 1e-170 / np.sqrt(2.0)], rtol=1e-15)
    with pytest.raises(ValueError, match="set 0 has NaN or infinite coordinates"):
        kgeo.spherical_normal_mle([np.array([[-np.inf], [1.0]])])


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("n, t", [(2, 1e-300), (4, 1e-150), (20, 1e-29)])
def test_even_normalized_kernel_reaches_its_extent_at_the_smallest_times(n, t):
    """For an even n the descent integral reads the odd table, which must
    reach as far as normalize's log K(0) = L lets the kernel stay above
    float64's range (without L in its extent, values of 1e-264 came out 0
    and of 1e-157 3.5e-5 off: a mutation review). At these times K(r) /
    K(0) = exp(-r^2 / 4 tau) far below rounding (see
    test_small_times_give_the_gaussian_of_the_distance), so the reference
    is exp(L - r^2 / 4 tau); the normalize test above is for an odd n."""
    c = 2.0 * (n - 1)
    tau = t / c
    L = H.log_heat_kernel_at_zero(tau, n) - 0.5 * n * math.log(c)
    assert L > 500
    end = math.sqrt(4.0 * tau * (746.0 + L))  # where L - r^2 / 4 tau reaches -746
    r = end * np.array([0.5, 0.85, 0.9, 0.95, 0.98])
    X = np.zeros((r.size + 1, n))
    X[:, -1] = 1.0
    X[1:, 0] = 2.0 * math.sqrt(c) * np.sinh(0.5 * r)  # Fisher-Rao distance r from row 0
    K = kgeo.pairwise_kernels(X, kernel="hyperbolic", t=t, normalize=True)[0, 1:]
    exponent = r * r / (4.0 * tau)
    want = np.exp(L - exponent)
    assert np.all(want > np.finfo(np.float64).tiny)
    assert np.all(np.abs(K / want - 1) <= 2e-13 * (1 + exponent))


@pytest.mark.parametrize("sets, match", [
    ([np.ones((3, 2))], "set 0 has sigma = 0"),
    # Finite in a long double, beyond float64: not "NaN or infinite".
    ([np.array([[np.longdouble("1e400")], [0]], dtype=np.longdouble)]
     if np.finfo(np.longdouble).maxexp > 1024 else [[[10**400], [1]]],
     r"set 0 (holds 1 number\(s\) beyond float64's range|is not an array of numbers)"),
    # Not all equal, but sigma (2.5e-324) rounds to 0: said so, not "all equal".
    ([np.array([[0.0], [5e-324]])], r"set 0's sigma .* is below float64's smallest number"),
    ([[[10**400], [1]]], "set 0 is not an array of numbers: int too large"),
    ([np.zeros((2, 2)) + [[0, 1], [1, 0]], np.zeros((2, 3))], "set 1 has points of dimension 3"),
    ([np.array([[np.nan, 1.0], [0.0, 0.0]])], "set 0 has NaN"),
    ([np.zeros(3)], r"set 0 must be a 2-D array"),
    ([], "sets is empty"),
    ([[[1.0, 2.0], [3.0]]], r"set 0 must be a rectangular array-like, but its points have "
                            r"different lengths \(1, 2\)"),
    # NumPy's conversion to float64 dropped the imaginary parts, with a warning.
    ([np.eye(2), np.eye(2) * (1 + 1j)], "Complex data not supported; set 1 holds complex"),
    ([sp.csr_matrix(np.eye(2) * 1j)], "Complex data not supported; set 0 holds complex"),
    ([np.array([[0.0, 1j], [2.0, 3.0]], dtype=object)], "Complex data not supported"),
])
def test_spherical_normal_mle_refuses(sets, match):
    with pytest.raises(ValueError, match=match):
        kgeo.spherical_normal_mle(sets)
    with pytest.raises(TypeError, match="sequence of 2-D arrays"):
        kgeo.spherical_normal_mle("abc")


def test_spherical_normal_mle_refuses_a_mapping_of_sets():
    # Its keys were read as the sets: "set 0 ... got shape ()" (a review).
    with pytest.raises(TypeError, match=r"^sets must be a sequence of 2-D arrays, got dict"):
        kgeo.spherical_normal_mle({0: np.eye(2), 1: np.eye(2) + 1})
    assert kgeo.spherical_normal_mle(list({0: np.eye(2)}.values())).shape == (1, 3)


@pytest.mark.parametrize("points, match", [
    # One point is a set with sigma = 0 (said so), not a badly shaped one.
    (np.array([[1.0, 2.0]]), r"set 0 has sigma = 0 \(its 1 point\(s\) are all equal\)"),
    (np.zeros((0, 2)), r"set 0 must be a 2-D array of points \(m, d\), m >= 1, d >= 1; "
                       r"got shape \(0, 2\)"),
    (np.zeros((2, 0)), r"set 0 must be a 2-D array .* got shape \(2, 0\)"),
])
def test_spherical_normal_mle_refuses_single_points_and_empty_sets(points, match):
    # Found by mutation testing: which message each gets.
    with pytest.raises(ValueError, match=match):
        kgeo.spherical_normal_mle([points])


@pytest.mark.parametrize("X, params, match", [
    (np.ones((3, 1)), {}, "got n_features=1"),
    (np.ones((3, 102)), {}, "n from 2 to 101"),
    (np.array([[0.0, 1.0], [1.0, 0.0]]), {}, r"1 row\(s\) have sigma <= 0 \(row 1: 0.0\)"),
    (np.array([[0.0, 1.0], [1.0, -2.0]]), {}, r"row 1: -2.0"),
    (np.array([[0.0, 1.0], [1e12, 1.0]]), {}, "too far from mu = 0, sigma = 1"),
    (np.array([[0.0, 1.0], [0.0, 1e-13]]), {}, "too far from mu = 0, sigma = 1"),
    (np.array([[0.0, 1.0], [0.0, 1e200]]), {}, "too far from mu = 0, sigma = 1"),
    (np.array([[0.0, 1.0], [1e160, 1.0]]), {}, "too far from mu = 0, sigma = 1"),
    # Near the edge: this row's Poincare point loses about 1e-6 of 1 - |p|^2,
    # beyond the 1e-8 allowed.
    (np.array([[0.0, 1.0], [1e4, 1e-2]]), {}, "too far from mu = 0, sigma = 1"),
    (np.array([[0.0, 1.0]]), {"t": 3000.0}, "t must be at most 2000"),
    (np.array([[0.0, 1.0]]), {"t": 0.0}, "t must be > 0"),
    (np.ones((2, 22)), {"t": 43.0}, "t must be at most 42 "),
    (np.ones((2, 22)), {"t": 0.04}, "t must be at least 0.042 "),
    # 1 / (2 tau) overflowed inside the table: NumPy's warnings, then a
    # message naming H^5 and tau instead of n_features=4 and t.
    (np.array([[0.0, 0.0, 0.0, 1.0]] * 2), {"t": 6e-309},
     r"t must be at least 2\.67e-307 for n_features=4 \(t / \(2 \(n - 1\)\) >= 4\.45e-308, "
     r"1 / t stays finite through the recursion\), got 6e-309"),
    (np.ones((2, 21)), {"t": 1e-307}, r"t must be at least 1\.78e-306 for n_features=21 "),
    (np.ones((2, 21)), {"t": 2e4, "normalize": True}, "not representable in float64"),
])
@pytest.mark.filterwarnings("error")
def test_bad_input_is_refused(X, params, match):
    with pytest.raises(ValueError, match=match):
        kgeo.pairwise_kernels(X, kernel="hyperbolic", **params)
    y = np.arange(X.shape[0]) % 2
    if X.shape[0] > 1:
        with pytest.raises(ValueError, match=match):
            kgeo.SVM(kernel="hyperbolic", **params).fit(X, y)


def test_sparse_rows_without_sigma_are_named():
    X = sp.csr_matrix(np.array([[0.5, 1.0], [1.0, 0.0], [0.0, 2.0]]))
    with pytest.raises(ValueError, match=r"row 1: 0.0"):
        kgeo.pairwise_kernels(X, kernel="hyperbolic")
    model = kgeo.SVM(kernel="hyperbolic").fit(np.array([[0.0, 1.0], [1.0, 2.0]]), [0, 1])
    with pytest.raises(ValueError, match=r"row 1: 0.0"):
        model.predict(X)


def test_rows_whose_means_are_mostly_zero():
    # Rows that store few of their columns make the posting tables keep
    # only the columns in use (used_columns_only): the Fisher scale must
    # still be that of all n columns.
    rng = np.random.default_rng(5)
    X = np.zeros((6, 8))
    X[:, -1] = rng.lognormal(size=6)
    X[1, 2] = 0.7
    for rows in (X[:1], X):
        for form in (np.asarray, sp.csr_matrix):
            K = kgeo.pairwise_kernels(form(rows), kernel="hyperbolic", t=0.4)
            np.testing.assert_allclose(K, reference_gram(rows, rows, 0.4), rtol=1e-12)
    y = np.array([0, 1, 0, 1, 0, 1])
    model = kgeo.SVM(kernel="hyperbolic", t=0.4, C=5.0).fit(sp.csr_matrix(X), y)
    dense = kgeo.SVM(kernel="hyperbolic", t=0.4, C=5.0).fit(X, y)
    np.testing.assert_allclose(model.decision_function(X), dense.decision_function(X),
                               atol=1e-12)


@pytest.fixture
def figure_1(load_example):
    return load_example("hyperbolic_decision_boundary")


@pytest.mark.parametrize("argv, match", [
    # The kernel underflows between the two points: no boundary, and the
    # trace ended in "zero-size array to reduction operation maximum".
    (["--t", "1e-4"], r"the hyperbolic SVM's decision values do not change sign .* the "
                      r"kernel between the two points is 0\); use a larger t"),
    (["--gamma", "1e6"], r"the rbf SVM's decision values do not change sign"),
    (["--t", "inf"], r"--t and --gamma must be finite and > 0, got inf and 0.5"),
    # Refused before the computation, not by matplotlib after it.
    (["--plot", "/nonexistent/figure.png"], r"--plot: the folder '/nonexistent' does not exist"),
    (["--plot", "figure.nosuchformat"], r"--plot: the file name must end in one of .*\.png"),
])
def test_figure_1_options_are_checked(figure_1, argv, match, capsys):
    if argv[0] == "--plot":
        pytest.importorskip("matplotlib")
    with pytest.raises(SystemExit) as stop:
        figure_1.main(argv)
    assert stop.value.code == 2
    assert re.search(match, capsys.readouterr().err)


def test_figure_1_boundaries_are_a_geodesic_and_a_line(figure_1):
    # Two points, one per class, of N(mu, sigma^2): the boundary is where
    # their distances agree. Gaussian on (mu, sigma): a straight line.
    # Hyperbolic: the geodesic bisector, the half circle centred on the axis
    # whose inversion swaps the points: in (u, sigma) = (mu / sqrt 2, sigma),
    # centre a = (u1 s2 - u2 s1) / (s2 - s1), radius^2 = |z1 - a| |z2 - a|.
    result = figure_1.trace(t=0.5, gamma=0.5)
    assert result["intercepts"] == (0.0, 0.0)
    assert result["distance_gap"] < 1e-12 * result["distance_scale"]
    u1, u2 = figure_1.POINTS[:, 0] / math.sqrt(2)
    s1, s2 = figure_1.POINTS[:, 1]
    a = (u1 * s2 - u2 * s1) / (s2 - s1)
    radius = math.sqrt(math.hypot(u1 - a, s1) * math.hypot(u2 - a, s2))
    centre, fitted_radius, off_circle = result["circle"]
    assert abs(centre - a * math.sqrt(2)) < 1e-9 and abs(fitted_radius - radius) < 1e-9
    assert off_circle < 1e-12
    assert result["hyperbolic_off_line"] > 0.5  # not a line
    assert result["gaussian_off_line"] < 1e-12
    mu_h, sigma_h = result["hyperbolic"]
    assert np.count_nonzero(~np.isnan(sigma_h)) > 50


@pytest.mark.parametrize("t, gamma", [(0.02, 0.5), (0.05, 0.5), (0.001, 0.5), (0.5, 10.0)])
def test_figure_1_traces_the_boundaries_where_kernels_underflow_nearby(figure_1, t, gamma):
    """Where both kernel values underflow to 0 along a line, the decision
    value 0 says nothing: taken for a sign of its own, the trace followed
    the underflow's edge (t = 0.02: distances 2.8 apart on the "boundary";
    t = 0.001's subnormal kernel values put points 3e-5 off) and refused
    gamma = 10, whose bracket ends underflowed."""
    result = figure_1.trace(t=t, gamma=gamma)
    assert result["distance_gap"] < 1e-12 * result["distance_scale"]
    assert result["gaussian_off_line"] < 1e-12
    assert np.count_nonzero(~np.isnan(result["gaussian"][0])) == 49


def test_figure_1_refuses_a_figure_it_could_not_write(figure_1, tmp_path, capsys):
    """Checked before the computation by opening the file as the figure
    will be: a folder of the figure's name ran the whole trace, then ended
    in IsADirectoryError. A name without a format ("") was ignored."""
    pytest.importorskip("matplotlib")
    (tmp_path / "taken.png").mkdir()
    for argv, match in ((["--plot", str(tmp_path / "taken.png")], r"--plot: cannot write"),
                        (["--plot", ""], r"--plot: the file name must end in one of")):
        with pytest.raises(SystemExit) as stop:
            figure_1.main(argv)
        assert stop.value.code == 2
        assert re.search(match, capsys.readouterr().err)
    # The check leaves no file behind, and an existing figure unchanged.
    figure = tmp_path / "figure.png"
    figure_1.check_plot_path(None, str(figure))
    assert not figure.exists()
    figure.write_bytes(b"earlier")
    figure_1.check_plot_path(None, str(figure))
    assert figure.read_bytes() == b"earlier"
    # A link to a file not yet there: the check created an empty target.
    link = tmp_path / "link.png"
    link.symlink_to(tmp_path / "target.png")
    figure_1.check_plot_path(None, str(link))
    assert not (tmp_path / "target.png").exists()


def test_figure_1_script_prints_and_plots(figure_1, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    figure_1.main(["--plot", str(tmp_path / "figure1.png")])
    out = capsys.readouterr().out
    assert "a circle centred on the axis at mu = 2.000000" in out
    assert (tmp_path / "figure1.png").stat().st_size > 10_000


# ==========================================================================
# Found by mutation testing of the kernel code: close pairs at distances the
# kernel resolves, and the shift beyond the table
# ==========================================================================

@pytest.mark.parametrize("n", [2, 3, 5])
def test_hyperbolic_close_pairs_at_small_but_visible_distances(n):
    """Hyperbolic rows whose ball points are within 1e-4 of |p|^2 + |q|^2 in
    squared distance take the exact route; their distances (1e-3..1e-2,
    where the kernel differs from 1 in the 5th digit) must match the
    reference. The reference test's near-duplicate is at 1e-12, where any
    distance gives 1.0."""
    rng = np.random.default_rng(40 + n)
    X = spherical_normals(rng, 8, n, spread=2.0)
    X[:, -1] *= 3.0  # points away from the ball's centre
    Y = X.copy()
    for r, step in enumerate(np.geomspace(3e-3, 3e-2, X.shape[0])):
        Y[r, 0] += step
    for t in (0.05, 0.5):
        K = kgeo.pairwise_kernels(X, Y, kernel="hyperbolic", t=t)
        ref = reference_gram(X, Y, t)
        assert np.all(np.diag(ref) < 1.0 - 1e-7)
        np.testing.assert_allclose(K, ref, rtol=1e-10, atol=1e-290)


@pytest.mark.parametrize("shift", [2.5, -1.25])
def test_hyperbolic_shift_adds_exactly_the_constant_even_to_far_pairs(shift):
    """k + shift bit for bit for the hyperbolic kernel too (the shift test of
    test_kernels.py covers every other kernel): at distance 0, in the table,
    and beyond its extent, where the kernel is 0 and the value is the shift."""
    X = np.array([[0.0, 1.0], [0.0, 1e-6], [50.0, 1.0], [0.3, 1.2], [0.3, 1.2]])
    for t in (0.01, 1.0):
        K = kgeo.pairwise_kernels(X, kernel="hyperbolic", t=t)
        if t == 0.01:
            assert K[0, 1] == 0.0 and K[0, 2] == 0.0  # beyond the table's extent
        K_shifted = kgeo.pairwise_kernels(X, kernel="hyperbolic", t=t, shift=shift)
        assert np.array_equal(K_shifted, K + shift)


def test_normalized_kernel_is_not_cut_off_where_the_unnormalised_shape_would_underflow():
    """With normalize=True the table reaches beyond sqrt(4 tau 746) by the
    log K(0) the kernel is multiplied by: at n = 21, t = 4e-7, K(0) = e^128,
    and values there are normal floats, not 0."""
    n, t = 21, 4e-7
    c = 2.0 * (n - 1)
    tau = t / c
    log_k0 = H.log_heat_kernel_at_zero(tau, n) - 0.5 * n * math.log(c)
    assert log_k0 > 100
    plain_end = math.sqrt(4.0 * tau * 746.0)
    # The same mu, sigma 1 and e^r: Fisher-Rao distance r (in units of sqrt(c)).
    r = plain_end * np.array([1.001, 1.01, 1.03])
    X = np.zeros((r.size + 1, n))
    X[0, -1] = 1.0
    X[1:, -1] = np.exp(r)
    K = kgeo.pairwise_kernels(X, kernel="hyperbolic", t=t, normalize=True)[0, 1:]
    reference = np.exp(H.log_heat_kernel(r, tau, n) - 0.5 * n * math.log(c))
    assert np.all(reference > np.finfo(np.float64).tiny)
    np.testing.assert_allclose(K, reference, rtol=1e-9)


@pytest.mark.parametrize("which", ["X", "Y"])
def test_rows_too_far_are_counted_and_the_first_is_named(which):
    # Found by mutation testing: the message's row number and count, and sigma
    # as a plain number (not NumPy 2's repr, np.float64(1.0)).
    far = np.array([[0.0, 1.0], [0.0, 2.0], [1e12, 1.0], [0.0, 1e200]])
    X, Y = (far, None) if which == "X" else (np.array([[0.0, 1.0]]), far)
    with pytest.raises(ValueError, match=rf"2 row\(s\) of {which} lie too far from mu = 0, "
                                         rf"sigma = 1 .* \(first row 2, sigma = 1\.0, "
                                         rf"\|mu\| = 1e\+12\)"):
        kgeo.pairwise_kernels(X, Y, kernel="hyperbolic")
    # |mu| past 1e154, whose square overflows, was shown as inf.
    with pytest.raises(ValueError, match=r"\(first row 1, sigma = 1\.0, \|mu\| = 1e\+200\)"):
        kgeo.pairwise_kernels(np.array([[0.0, 0.0, 1.0], [6e199, 8e199, 1.0]]),
                              kernel="hyperbolic")


def test_compiled_kernel_evaluates_the_table_it_is_given(monkeypatch):
    """The compiled kernel is evaluate_table's twin on any table: every
    coefficient of the piece holding r counts (up to the last degree), the
    last piece is continued up to the extent and 0 is returned from it on,
    and g(r) - r^2 / (4 tau) > 0 is clipped to k(x, x) = 1. A synthetic
    table (coefficients of 0.1, unlike the real ones, which fall below 1e-13)
    makes each of these visible."""
    rng = np.random.default_rng(11)
    table = rng.uniform(-0.05, 0.05, size=(3, H.TABLE_DEGREE + 1))
    table[0, 0] = 1.0  # g >= 0.2 on [0, 0.5): above r^2 / 4 tau, clipped
    table[1:, 0] = -2.0  # g < -1.2: below
    table[2, 1:] = 0.1 * 0.3 ** np.arange(1, H.TABLE_DEGREE + 1)  # tame beyond x = 1
    extent = 1.6  # past the 3 pieces' 1.5
    monkeypatch.setattr(H, "heat_table", lambda tau, n, log_scale=0.0: (table, extent, 0.0))
    n, t = 2, 2.0
    tau = t / (2.0 * (n - 1))
    # Rows (0, e^s): Fisher-Rao distances |s_i - s_j|, none within 0.02 of a
    # piece's end or of the extent.
    s = np.array([0.0, 0.13, 0.37, 0.81, 1.19, 1.55, 1.77])
    X = np.column_stack([np.zeros(s.size), np.exp(s)])
    K = kgeo.pairwise_kernels(X, kernel="hyperbolic", t=t)
    r = np.abs(s[:, None] - s[None, :])
    ends = np.concatenate([np.arange(4) * H.TABLE_PIECE, [extent]])
    assert np.abs(r[..., None] - ends[1:]).min() > 0.02
    assert {int(v) for v in (r[r < extent] / H.TABLE_PIECE).ravel()} == {0, 1, 2, 3}
    assert np.any(r > extent)
    log_k = np.minimum(H.evaluate_table(table, r.ravel()).reshape(r.shape) - r * r / (4 * tau),
                       0.0)
    expected = np.where(r < extent, np.exp(log_k), 0.0)
    np.testing.assert_allclose(K, expected, rtol=1e-9, atol=0.0)
    assert np.all(K[r < H.TABLE_PIECE] == 1.0) and np.sum(r > extent) == np.sum(K == 0.0)


def test_the_largest_time_is_accepted_and_the_next_float_refused():
    """t / (2 (n - 1)) <= MAX_TIME: the bound itself is a valid time."""
    n = 3
    t = H.MAX_TIME * 2.0 * (n - 1)
    rng = np.random.default_rng(5)
    X = spherical_normals(rng, 4, n)
    K = kgeo.pairwise_kernels(X, kernel="hyperbolic", t=t)
    np.testing.assert_allclose(K, reference_gram(X, X, t), rtol=1e-12)
    with pytest.raises(ValueError, match=r"t must be at most 4000 for n_features=3"):
        kgeo.pairwise_kernels(X, kernel="hyperbolic", t=np.nextafter(t, np.inf))


def test_values_are_cut_to_0_only_below_the_smallest_subnormal():
    """Along the ray of the test above (steps of about 0.2 in log K), the
    kernel takes float64's smallest subnormal, 5e-324, before its first 0:
    the table's extent is not shorter than where exp() gives 0."""
    s = np.geomspace(3000.0, 6000.0, 600)
    X = np.column_stack([np.zeros_like(s), np.zeros_like(s), s])
    K = kgeo.pairwise_kernels(np.array([[0.0, 0.0, 1.0]]), X, kernel="hyperbolic", t=0.1)[0]
    first_zero = np.argmax(K == 0.0)
    assert K[-1] == 0.0 and np.all(K[first_zero:] == 0.0)
    assert K[first_zero - 1] == np.nextafter(0.0, 1.0)


# --- from a mutation review of _embedding.py and _hptop.py (helper 171: 122
# mutants, 103 killed, 14 equivalent, 5 gaps, each failing its test) ---------

def test_spherical_normal_mle_takes_boolean_points_as_numbers():
    # The docstring: "only numbers (and booleans) are points"; a set of
    # booleans is the set of their 0/1 values, not a TypeError.
    points = np.array([[True, False, True], [False, False, True], [True, True, False]])
    rows = kgeo.spherical_normal_mle([points, points.astype(object)])
    expected = kgeo.spherical_normal_mle([points.astype(np.float64)])[0]
    np.testing.assert_array_equal(rows, [expected, expected])


@pytest.mark.parametrize("kind", [set, frozenset])
def test_spherical_normal_mle_refuses_a_set_of_sets(kind):
    """BUG FIX: a set of sets was taken, its rows in hash order, which no
    label can be matched to; refused as a mapping is."""
    a = ((1.0, 0.0), (2.0, 0.0))
    b = ((0.0, 1.0), (3.0, 4.0))
    message = f"sets must be a sequence of 2-D arrays, got {kind.__name__}"
    with pytest.raises(TypeError, match=message):
        kgeo.spherical_normal_mle(kind([a, b]))


# --- from a mutation review of _hyperbolic.py (helper 178) --------------------
# Each test below failed on a mutant the suite let pass, or (r = inf) on a
# defect it found.

@pytest.mark.parametrize("n, tau", [(3, 0.0128), (3, 0.0215), (3, 0.0304), (3, 0.0548),
                                    (21, 100.0), (21, 1000.0)])
def test_the_kernel_is_0_in_float64_at_the_tables_extent(n, tau):
    """heat_table's extent is where exp(log K(r) / K(0)) is 0 in float64, so
    that the compiled kernel's 0 from the extent on is exact: with the
    threshold _LOG_ZERO at -745 (instead of -746) the extent fell where the
    kernel is still float64's smallest subnormal, 5e-324 (exp() gives 0 only
    below about -745.13), mutant 15 of review 178; with the extent one grid point short
    (_extent), it fell where the kernel was e^-744 to e^-741 (n = 21, whose
    log K falls by more than 1 per grid step at long times), mutant 64. The
    existing tests walk a ray at n = 3, where a grid step is 0.73 in log K
    and neither shows."""
    H.heat_table.cache_clear()
    _, extent, _ = H.heat_table(tau, n)
    log_ratio = H.log_heat_kernel_ratio(np.array([extent]), tau, n)[0]
    assert np.exp(log_ratio) == 0.0, (extent, log_ratio)


def test_table_cache_tells_scales_apart():
    """heat_table is cached by (tau, n, log_scale): a normalized kernel's
    table (log_scale = log K(0) > 0) reaches further than the plain one of
    the same (tau, n); a cache keyed by (tau, n) alone handed the plain table
    (and its shorter extent) to the normalized kernel. Review 178's mutant 71."""
    tau, n = 0.01, 3
    H.heat_table.cache_clear()
    plain = H.heat_table(tau, n)
    log_k0 = H.log_heat_kernel_at_zero(tau, n)
    assert log_k0 > 1.0
    scaled = H.heat_table(tau, n, log_k0)
    assert scaled[1] > plain[1]
    want = math.sqrt(4.0 * tau * (746.0 + log_k0))  # the Gaussian bound with the scale
    assert scaled[1] > 0.9 * want
    # the table itself ends at its own extent's pieces
    assert scaled[0].shape[0] == math.ceil(scaled[1] / H.table_piece(scaled[1]))


def test_value_at_zero_cache_tells_dimensions_apart():
    """log_heat_kernel_at_zero is cached by (tau, n): the same tau at
    another dimension is another value (a cache keyed by tau alone returned
    the first dimension's). Review 178's mutant 72."""
    H.log_heat_kernel_at_zero.cache_clear()
    tau = 0.37
    values = [H.log_heat_kernel_at_zero(tau, n) for n in (3, 5, 4, 3)]
    for n, v in zip((3, 5, 4, 3), values):
        assert v == pytest.approx(H.log_heat_kernel(0.0, tau, n)[0], rel=1e-14, abs=1e-14)
    assert len(set(values[:3])) == 3 and values[3] == values[0]


def test_cached_tables_are_read_only():
    """The table heat_table caches is shared by every kernel built at that
    (tau, n, log_scale): it must not be writable (a caller's write would
    change every later kernel). Review 178's mutant 73."""
    H.heat_table.cache_clear()
    table, _, _ = H.heat_table(0.5, 3)
    assert not table.flags.writeable
    with pytest.raises(ValueError):
        table[0, 0] = 1.0
    assert H.heat_table(0.5, 3)[0] is table


@pytest.mark.parametrize("n", [50, 51])
def test_a_kernel_the_contour_cannot_give_is_refused_not_tabulated(n):
    """Below MIN_TIME_CONTOUR the contour integral gives NaN for r beyond
    about 13 (the docs); heat_table refuses such a table rather than hand
    the compiled kernel NaN coefficients (odd n: the table's check; even n:
    the check of H^(n+1)'s table it reads). Mutants 74, 75."""
    H.heat_table.cache_clear()
    with pytest.raises(ValueError, match=r"the heat kernel of H\^51 at time 1e-05 could not "
                                         r"be tabulated in float64"), \
            np.errstate(invalid="ignore"):  # the contour's NaN, which is refused
        H.heat_table(1e-5, n)


@pytest.mark.parametrize("n", [2, 4])
def test_even_dimensions_far_beyond_float64s_range_give_minus_infinity(n):
    """Where K_(n+1) is below float64's range at every node of the descent
    integral (its log is -inf throughout), log K is -inf, not NaN
    (total[~isfinite(top)] = 0). Review 178's mutant 57."""
    r = np.array([0.5, 1e200])
    with np.errstate(all="ignore"):
        got = H.log_heat_kernel(r, 1.0, n)
    assert np.isfinite(got[0]) and got[1] == -np.inf


@pytest.mark.parametrize("n", [2, 3, 4, 23])
def test_an_infinite_distance_gives_minus_infinity(n):
    """r = inf, a distance >= 0 as the docstring allows,
    gave NaN on every route (log(2 r) - r = inf - inf in _log_q, and through
    it the descent integral); K(inf) = 0, log K = -inf, as at r = 1e200."""
    r = np.array([0.0, 1e200, np.inf])
    with np.errstate(all="ignore"):
        log_k = H.log_heat_kernel(r, 0.5, n)
        ratio = H.log_heat_kernel_ratio(r, 0.5, n)
    assert np.isfinite(log_k[0]) and ratio[0] == 0.0
    assert log_k[1] == log_k[2] == -np.inf and ratio[1] == ratio[2] == -np.inf


# log K on H^2 at the largest time, in 40- and 60-digit arithmetic (mpmath
# 1.3.0, the two agreeing to all 25 digits): equation 6 with its prefactor
# sqrt(2) / (4 pi tau)^(3/2), K_2(r) = sqrt(2) (4 pi tau)^(-3/2) e^(-tau/4)
# integral_r^inf s e^(-s^2 / 4 tau) / sqrt(cosh s - cosh r) ds, taken in
# s = r + v^2 by mp.quad (tanh-sinh) on [0, 30] split at 0.25, 0.5, 1, 2, 3,
# 4, 6, 8, 10, 12, 15, 20, 25. (tests/test_hyperbolic.py compares H^2 with
# SciPy's quad to 1e-11 (1 + r^2 / tau) only, its reference's resolution.)
MPMATH_LOG_K2 = [
    ((1000.0, 0.0), -261.8736082631608957682648),
    ((1000.0, 0.3), -261.8792537556824206581556),
    ((1000.0, 1.0), -261.9349370106428131657175),
    ((1.0, 1.0), -3.18227430906421420921814),
]


@pytest.mark.parametrize("where, value", MPMATH_LOG_K2)
def test_h2_matches_high_precision_values(where, value):
    """The descent integral's quadrature (8 panels of 32 Gauss-Legendre
    nodes) resolves H^2's long integrand at tau = 1000: with 4 panels it was
    1.5e-12 to 1.9e-12 off at r <= 1 (unmutated: 9e-14). Review 178's mutant 47."""
    tau, r = where
    got = H.log_heat_kernel(np.array([r]), tau, 2)[0]
    assert abs(got - value) < 3e-13, got - value
