"""The heat kernel of hyperbolic space, for the spherical normal family.

Lafferty & Lebanon (JMLR 2005, section 3.1) show that the Fisher metric of
the spherical normal family N(mu, sigma^2 I), mu in R^(n-1), makes its
parameter space the hyperbolic space H^n, and give the heat kernel of H^n
in closed form (their equations 5 and 6, from Grigor'yan & Noguchi 1998).
This module evaluates that kernel in float64, as a function of the
geodesic distance r of unit-curvature H^n, and tabulates it for the
compiled kernel (``HyperbolicHeatKernel`` in ``_kernels.pyx``).

Odd dimension n = 2m + 1 (equation 5):

    K(r) = (4 pi tau)^(-1/2) exp(-m^2 tau) (2 pi)^(-m) exp(-r^2 / (4 tau)) q_m(r)

with q_0 = 1 and q_(k+1) = (r q_k / (2 tau) - q_k') / sinh r, which is
equation 5's operator ((-1 / sinh r) d/dr)^m applied to the Gaussian.
Even dimension n (equation 6, with its prefactor corrected to
sqrt(2) / (4 pi tau)^(3/2), see the papers' NOTES) by descent from n + 1:

    K_n(r) = sqrt(2) exp((2n - 1) tau / 4)
             * integral_r^inf K_(n+1)(s) sinh s / sqrt(cosh s - cosh r) ds.

Why q_m is computed as it is. Differentiating m times loses digits two
ways: Taylor arithmetic about r divides by the series of sinh, whose
constant term vanishes as r -> 0 (the error grows like 1/r^m), and the
Maclaurin series of q_m alternates, with terms that grow with m and r.
Writing q_k = (r / sinh r)^k p_k removes both for the dimensions kgeo
supports: p_(k+1) = p_k / (2 tau) + k M p_k - p_k' / r, with
M = (coth r - 1/r) / r analytic on |r| < pi, has no division by a small
series, and its Maclaurin series is accurate to r = 2. Beyond, Taylor
arithmetic about r itself is well conditioned. Against 100-digit
arithmetic (mpmath, the same recursion), log q_m was within 6e-14 for
m <= 10, tau from 1e-3 to 1000 and r from 0 to 40.

Above m = 10 that recursion loses digits again (m = 20: 1e-11 near r = 2),
and q_m comes from Cauchy's integral for the m-th derivative in u = cosh r
(``_log_q_contour``) up to r = 20: against 250-digit arithmetic, within
1e-13 for m up to 50 (n = 101) and 1e-3 <= tau <= 1 where the kernel is in
float64's range, 1e-12 at tau = 3, 5e-12 at tau = 10, 1e-6 at tau = 1e-5;
kgeo takes 1e-3 <= tau <= 1 there. Where both routes apply (m <= 10) they
agree to 5e-14. tests/test_hyperbolic.py has the checks that run without
mpmath: the closed forms of H^3 and H^5, quadrature of equation 6, the
contour against the recursion, unit mass, the heat equation, the recursion
between dimensions n and n + 2, and five 250-digit values for m = 25, 50.
"""

import functools
import math

import numpy as np
from scipy.special import zeta

# Dimensions of H^n whose heat kernel kgeo evaluates. Up to n = 21
# (m <= _RECURSION_UP_TO) by the recursion below, beyond by a contour
# integral, whose error grows with tau (against 250-digit arithmetic, in log
# q: 1e-13 at tau = 1, 5e-12 at tau = 10, for m = 50); past n = 101 it was
# not measured.
MAX_DIMENSION = 101
_RECURSION_UP_TO = 10
# The n whose kernel (even n: through H^(n+1)) the recursion gives.
RECURSION_DIMENSIONS = 2 * _RECURSION_UP_TO + 1
# Largest diffusion time tau on H^n: the table reaches about sqrt(3000 tau),
# 3,500 pieces here (0.4 MB), where the kernel is flat over any distance the
# rows resolve; for n > 21 (the contour integral) the largest tau is 1.
MAX_TIME = 1000.0
MAX_TIME_CONTOUR = 1.0
# ... and the smallest: below, its error grows (in log q, 1e-6 at tau = 1e-5,
# m = 50, r = 0.5; helper-24 measured 2.3e-13 from 2e-3 to 1, 1.4e-12 at
# 1e-3 where r^2 / 4 tau is 60,000).
MIN_TIME_CONTOUR = 1e-3
# ... and for the recursion: its steps divide by 2 tau, which overflows
# float64 below tau = 2^-1024; 2^-1021 leaves the steps' sums room (tables
# at this tau give log K to 1e-13 of 1 + r^2 / 4 tau for n = 2 to 21: 2e-13
# to 8e-13 in log K at n = 20 and 21, review 178).
MIN_TIME = 2.0 ** -1021

# Below this distance, q's Maclaurin series; above, Taylor arithmetic about r.
_SERIES_RADIUS = 2.0
# Above _RECURSION_UP_TO, the contour integral below this distance.
_CONTOUR_RADIUS = 20.0
# Maclaurin terms kept: (2 / pi)^160 is far below float64's resolution.
_SERIES_DEGREE = 160

# The table the compiled kernel reads: g(r) = log(K(r) / K(0)) + r^2 / (4 tau)
# as Chebyshev polynomials of degree TABLE_DEGREE on pieces of TABLE_PIECE;
# g is analytic within pi of the real axis, so 16 coefficients on pieces of
# 1/2 reproduce it to rounding. A kernel that vanishes closer than that
# (tau below about 1e-4) gets one piece, as wide as its extent: g is the
# difference of log K(r) / K(0) and -r^2 / (4 tau), which at the end of a
# piece of 1/2 are each about 1 / (16 tau), and their cancellation cost the
# values inside the extent digits (a relative error of 1e-3 at tau = 2.5e-16).
TABLE_PIECE = 0.5
TABLE_DEGREE = 15

# exp() of anything below this is 0 in float64 (subnormals included).
_LOG_ZERO = -746.0


def _series_product(a, b, degree):
    """Rows of Taylor coefficients a * b, through ``degree``."""
    out = np.zeros((a.shape[0], degree + 1))
    for j in range(degree + 1):
        out[:, j] = np.einsum("ni,ni->n", a[:, :j + 1], b[:, j::-1])
    return out


def _series_inverse(a, degree):
    """Rows of Taylor coefficients 1 / a (a's constant terms nonzero)."""
    out = np.zeros((a.shape[0], degree + 1))
    out[:, 0] = 1.0 / a[:, 0]
    for j in range(1, degree + 1):
        out[:, j] = -np.einsum("ni,ni->n", out[:, :j], a[:, j:0:-1]) / a[:, 0]
    return out


def _log_p_about(r, tau, m):
    """log p_m at each r > 0, by Taylor arithmetic about r (degree m)."""
    degree = m
    terms = np.arange(degree + 2)
    factorial = np.array([math.factorial(j) for j in terms], dtype=np.float64)
    # sinh and cosh times e^-r (the factor cancels in coth): no overflow.
    tail = np.exp(-2.0 * r)[:, None]
    sinh, cosh = 0.5 * (1.0 - tail), 0.5 * (1.0 + tail)
    sinh_series = np.where(terms % 2 == 0, sinh, cosh) / factorial
    cosh_series = np.where(terms % 2 == 1, sinh, cosh) / factorial
    coth = _series_product(cosh_series, _series_inverse(sinh_series, degree + 1), degree + 1)
    inverse_r = (-1.0) ** terms / r[:, None] ** (terms + 1)   # 1 / (r + h)
    langevin = _series_product(coth - inverse_r, inverse_r, degree + 1)  # M
    p = np.zeros((r.shape[0], degree + 1))
    p[:, 0] = 1.0
    log_p = np.zeros(r.shape[0])
    for k in range(m):
        valid = degree - k  # p holds its true coefficients through this degree
        derivative = p[:, 1:valid + 1] * np.arange(1, valid + 1)
        step = (p[:, :valid] / (2.0 * tau)
                + k * _series_product(langevin, p, valid - 1)[:, :valid]
                - _series_product(derivative, inverse_r, valid - 1))
        # Normalised at every step (the value's log kept aside): the raw
        # coefficients grow like (1 / 2 tau)^k.
        scale = step[:, 0]
        log_p += np.log(scale)
        p = np.zeros_like(p)
        p[:, :valid] = step / scale[:, None]
    return log_p


def _p_series(tau, m):
    """Maclaurin coefficients of p_m / p_m(0) through _SERIES_DEGREE, and log p_m(0)."""
    top = _SERIES_DEGREE + 2 * m + 2  # each step leaves two fewer true coefficients
    j = np.arange(1, top // 2 + 2)
    # M(r) = sum_j (-1)^(j+1) 2 zeta(2j) r^(2j-2) / pi^(2j)
    langevin = np.zeros(top + 2)
    langevin[0:2 * j.shape[0]:2] = (-1.0) ** (j + 1) * 2.0 * zeta(2 * j) / np.pi ** (2 * j)
    p = np.zeros(top + 1)
    p[0] = 1.0
    log_p0 = 0.0
    for k in range(m):
        valid = top - 2 * k
        step = p[:valid - 1] / (2.0 * tau)
        step = step + k * np.convolve(langevin[:valid - 1], p[:valid - 1])[:valid - 1]
        # p' / r: p is even, so the coefficient of r^i is (i + 2) p_(i+2).
        step = step - p[2:valid + 1] * np.arange(2, valid + 1)
        log_p0 += math.log(step[0])
        p = np.zeros(top + 1)
        p[:valid - 1] = step / step[0]
    return p[:_SERIES_DEGREE + 1], log_p0


def _log_q_contour(r, tau, m):
    """log q_m(r) by Cauchy's integral, for m above _RECURSION_UP_TO.

    With u = cosh r, (1 / sinh r) d/dr is d/du, so q_m is
    (-1)^m f^(m)(u0) e^(r^2 / 4 tau) for f(u) = exp(-arccosh(u)^2 / (4 tau)),
    analytic but at u = -1. The m-th Taylor coefficient is the mean of
    f(z) / (z - u0)^m over N points of a circle of radius R about u0, to
    an error of about (R / (u0 + 1))^N: R stays at most (1 - 2 / (m + 4))
    (u0 + 1), with N = 20 m + 64. Within that, R is the saddle point of
    |f(u0 - R)| / R^m, where the coefficients of f, alternating in sign, all
    add up: the mean then cancels little (by a factor 10-10^3 for tau up to
    1, measured), where m differentiations in float64 lost every digit by
    m = 30.
    """
    n_nodes = 20 * m + 64
    theta = 2.0 * np.pi * (np.arange(n_nodes) + 0.5) / n_nodes
    beta = np.linspace(1e-3, 1.0 - 2.0 / (m + 4), 400)[None, :]
    out = np.empty_like(r)
    for start in range(0, r.shape[0], 128):
        rc = r[start:start + 128]
        u0 = np.cosh(rc)[:, None]
        radius = beta * (u0 + 1.0)
        x = u0 - radius  # the circle's leftmost point, in (-1, u0)
        log_f = np.where(x >= 1.0, -np.arccosh(np.maximum(x, 1.0)) ** 2,
                         np.arccos(np.clip(x, -1.0, 1.0)) ** 2) / (4.0 * tau)
        best = np.argmin(log_f - m * np.log(radius), axis=1)
        radius = radius[np.arange(rc.shape[0]), best][:, None]
        step = radius * np.exp(1j * theta)[None, :]  # z - u0
        z = u0 + step
        # arccosh(z) - r = log(w / e^r), w = z + sqrt(z + 1) sqrt(z - 1), from
        # w - e^r = (z - u0) (1 + (z + u0) / (sqrt(z + 1) sqrt(z - 1) + sinh r)):
        # arccosh(z)^2 - r^2 without the cancellation of two numbers of size
        # r^2 (which left 2e-13 of log q at r = 8, tau = 0.003).
        root = np.sqrt(z + 1.0) * np.sqrt(z - 1.0)
        gap = np.log1p(step * (1.0 + (z + u0) / (root + np.sinh(rc)[:, None]))
                       * np.exp(-rc)[:, None])
        # log of f(z) e^(r^2 / 4 tau) / (z - u0)^m, its largest real part taken out
        logs = (-(gap * (gap + 2.0 * rc[:, None])) / (4.0 * tau) - m * np.log(radius)
                - 1j * m * theta[None, :])
        top = logs.real.max(axis=1)
        mean = np.exp(logs - top[:, None]).mean(axis=1)
        out[start:start + 128] = np.log((-1.0) ** m * mean.real) + top + math.lgamma(m + 1)
    return out


def _log_q(r, tau, m):
    """log q_m(r) for r >= 0 (an array)."""
    r = np.asarray(r, dtype=np.float64)
    out = np.empty_like(r)
    if m == 0:
        out[:] = 0.0
        return out
    if m > _RECURSION_UP_TO:
        # The contour integral up to r = 20 (cosh r stays far from overflow),
        # Taylor arithmetic about r beyond (measured to 1e-13 there at m = 50).
        near = r <= _CONTOUR_RADIUS
        if near.any():
            out[near] = _log_q_contour(r[near], tau, m)
    else:
        near = r <= _SERIES_RADIUS
    if m <= _RECURSION_UP_TO and near.any():
        coefficients, log_p0 = _p_series(tau, m)
        rn = r[near]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(rn > 0, np.log(rn) - np.log(np.sinh(rn)), 0.0)
        out[near] = (log_p0 + np.log(np.polynomial.polynomial.polyval(rn, coefficients))
                     + m * ratio)
    if (~near).any():
        rf = r[~near]
        # log(r / sinh r) without overflow: sinh r = e^r (1 - e^(-2r)) / 2.
        ratio = np.log(2.0 * rf) - rf - np.log(-np.expm1(-2.0 * rf))
        out[~near] = _log_p_about(rf, tau, m) + m * ratio
    return out


# Each log K is computed as a constant (of tau and n) plus a shape (of r):
# the constant, -m^2 tau among its terms, is -10^5 at n = 21 and tau = 1000,
# and log(K(r) / K(0)) taken as a difference of logs with it would carry
# 1e-11 of rounding; the shapes' difference carries about 1e-16 of their
# own size (a few tens at most).

def _odd_constant(tau, n):
    m = (n - 1) // 2
    return -0.5 * math.log(4.0 * math.pi * tau) - m * m * tau - m * math.log(2.0 * math.pi)


def _odd_shape(r, tau, n):
    """log K(r) on H^n, n odd, less _odd_constant."""
    return -r * r / (4.0 * tau) + _log_q(r, tau, (n - 1) // 2)


def _even_constant(tau, n):
    return (0.5 * math.log(2.0) + (2 * n - 1) * tau / 4.0 + math.log(2.0)
            + _odd_constant(tau, n + 1))


# Gauss-Legendre nodes for the descent integral: panels of this many nodes.
_PANEL_NODES = 32
_PANELS = 8


def _log_cosh(x):
    """log(cosh x) without overflow."""
    x = np.abs(x)
    return x + np.log1p(np.exp(-2.0 * x)) - math.log(2.0)


def _even_shape(r, tau, n, log_odd=None):
    """log K(r) on H^n, n even, less _even_constant: by descent from H^(n+1).

    ``log_odd(s)``: the shape of log K on H^(n+1) (the direct evaluation by
    default; the table builder passes its interpolant). Substituting
    cosh s = cosh r cosh^2 x turns the descent into

        K_n(r) = sqrt(2) exp((2n - 1) tau / 4) 2 sqrt(cosh r)
                 * integral_0^inf K_(n+1)(s(x)) cosh x dx,

    whose integrand has no singularity at any r, falls from its largest
    value at x = 0, and has a Gaussian tail in x (in s = r + v^2 or
    cosh s = cosh r (1 + z^2) it had a singular or a polynomial one). The
    integral runs to where the integrand is below e^-46 of its value at 0
    (Gauss-Legendre panels).
    """
    if log_odd is None:
        def log_odd(s):
            return _odd_shape(s, tau, n + 1)
    r = np.asarray(r, dtype=np.float64)
    nodes, weights = np.polynomial.legendre.leggauss(_PANEL_NODES)
    edges = np.linspace(0.0, 1.0, _PANELS + 1)
    unit_nodes = (edges[:-1, None] + (nodes[None, :] + 1.0) * 0.5 * np.diff(edges)[:, None]).ravel()
    unit_weights = np.tile(weights * 0.5 * np.diff(edges)[0], _PANELS)
    out = np.empty_like(r)
    for start in range(0, r.shape[0], 256):
        rc = r[start:start + 256][:, None]
        log_cosh_r = _log_cosh(rc)

        def log_integrand(x):
            # cosh s - 1 = 2 sinh^2(r/2) cosh^2 x + sinh^2 x: no cancellation;
            # where cosh s is beyond float64, s = log(2 cosh s) (to e^-2s).
            log_cosh_s = log_cosh_r + 2.0 * _log_cosh(x)
            with np.errstate(over="ignore", invalid="ignore"):
                d = 2.0 * (np.sinh(0.5 * rc) * np.cosh(x)) ** 2 + np.sinh(x) ** 2
                s = np.log1p(d + np.sqrt(d) * np.sqrt(d + 2.0))
            s = np.where(log_cosh_s < 300.0, s, log_cosh_s + math.log(2.0))
            # K_(n+1)(s) / K_(n+1)(r) <= exp(-(s^2 - r^2) / 4 tau) (q_m decreases):
            # beyond 100 of that, far past the integral's end, K is not evaluated.
            out = np.full(s.shape, -np.inf)
            needed = (s - rc) * (s + rc) <= 400.0 * tau
            out[needed] = log_odd(s[needed])
            return out + _log_cosh(x)

        # The integrand decreases in x: its end is where it has fallen by 46,
        # at x of order sqrt(tau) for r near 0, so the probes reach below
        # that (at 50 per decade): at tau = 1e-30 they had all lain past the
        # end, and the integral came out 0 at every r.
        lowest = min(1e-9, 1e-6 * math.sqrt(tau))
        probe = np.geomspace(lowest, 1e3, 1 + int(round(50.0 * math.log10(1e3 / lowest))))
        probe = probe[None, :]
        fallen = log_integrand(probe) < (log_odd(rc.ravel())[:, None] - 46.0)
        end = probe[0, np.where(fallen.any(axis=1), np.argmax(fallen, axis=1),
                                probe.shape[1] - 1)]
        x = unit_nodes[None, :] * end[:, None]
        logs = log_integrand(x)
        top = np.max(logs, axis=1)
        with np.errstate(invalid="ignore"):  # -inf - -inf where K underflowed throughout
            total = np.sum(unit_weights[None, :] * end[:, None] * np.exp(logs - top[:, None]),
                           axis=1)
        total[~np.isfinite(top)] = 0.0
        with np.errstate(divide="ignore"):  # log 0 = -inf: K below float64 there
            out[start:start + 256] = 0.5 * log_cosh_r[:, 0] + top + np.log(total)
    return out


def _constant_and_shape(tau, n):
    """The constant of log K on H^n and the function giving its shape."""
    if n % 2 == 1:
        return _odd_constant(tau, n), lambda r: _odd_shape(r, tau, n)
    return _even_constant(tau, n), lambda r: _even_shape(r, tau, n)


def log_heat_kernel(r, tau, n):
    """log of the heat kernel of unit-curvature H^n at time ``tau``, distance ``r``.

    Parameters
    ----------
    r : array-like of float
        Geodesic distances, >= 0.
    tau : float
        Diffusion time, > 0.
    n : int
        Dimension, 2 <= n <= MAX_DIMENSION.

    Returns
    -------
    log_k : ndarray of float
        ``log K_tau(r)``; the kernel integrates to 1 over H^n.
    """
    r = np.atleast_1d(np.asarray(r, dtype=np.float64))
    constant, shape = _constant_and_shape(tau, n)
    return _at_infinity(r, constant + shape(r))


@functools.lru_cache(maxsize=16)
def log_heat_kernel_at_zero(tau, n):
    """``log K(0)`` on unit-curvature H^n at time ``tau``, kept for the last
    16 (tau, n): every fit and prediction builds its kernel, and for even n
    it is a quadrature of the odd kernel."""
    return float(log_heat_kernel(0.0, tau, n)[0])


def log_heat_kernel_ratio(r, tau, n):
    """``log(K(r) / K(0))`` on unit-curvature H^n at time ``tau``: what the
    kernel reads with ``normalize=False``, without the rounding of the large
    constant ``log K(0)`` has for large ``tau`` and ``n``."""
    r = np.atleast_1d(np.asarray(r, dtype=np.float64))
    _, shape = _constant_and_shape(tau, n)
    return _at_infinity(r, shape(r) - shape(np.zeros(1))[0])


def _at_infinity(r, log_k):
    """log K = -inf at r = inf (the routes' arithmetic gave inf - inf = NaN there)."""
    log_k[np.isposinf(r)] = -np.inf
    return log_k


def _chebyshev_points():
    k = np.arange(TABLE_DEGREE + 1)
    return np.cos(np.pi * (k + 0.5) / (TABLE_DEGREE + 1))


def _chebyshev_coefficients(values):
    """Coefficients c (rows) with sum_j c_j T_j(x_k) = values[:, k] at the points."""
    k = np.arange(TABLE_DEGREE + 1)
    basis = np.cos(np.pi * np.outer(k, k + 0.5) / (TABLE_DEGREE + 1))
    c = values @ basis.T * (2.0 / (TABLE_DEGREE + 1))
    c[:, 0] *= 0.5
    return c


def table_piece(extent):
    """The width of a table's pieces for a kernel that is 0 beyond ``extent``."""
    return TABLE_PIECE if not 0.0 < extent < TABLE_PIECE else extent


def _table_of(log_ratio, tau, extent, piece):
    """Chebyshev pieces of g(r) = log_ratio(r) + r^2 / (4 tau) on [0, extent]."""
    n_pieces = max(1, int(math.ceil(extent / piece)))
    x = _chebyshev_points()
    left = np.arange(n_pieces)[:, None] * piece
    r = left + (x[None, :] + 1.0) * (0.5 * piece)
    g = log_ratio(r.ravel()).reshape(r.shape) + r * r / (4.0 * tau)
    return _chebyshev_coefficients(g)


def evaluate_table(table, r, piece=TABLE_PIECE):
    """The table's g at distances r within it (NumPy; the compiled kernel's twin)."""
    r = np.asarray(r, dtype=np.float64)
    index = np.minimum((r * (1.0 / piece)).astype(np.int64), table.shape[0] - 1)
    x = 2.0 * (r * (1.0 / piece) - index) - 1.0
    return np.polynomial.chebyshev.chebval(x, table[index].T, tensor=False)


def _extent(log_ratio, tau, log_scale):
    """A distance beyond which exp(log_scale + log_ratio(r)) is 0 in float64."""
    # K(r) / K(0) <= exp(-r^2 / (4 tau)) on H^n: the Gaussian alone bounds it.
    bound = math.sqrt(4.0 * tau * (-_LOG_ZERO + max(0.0, log_scale)))
    grid = np.linspace(0.0, bound, 2049)[1:]
    below = (log_scale + log_ratio(grid)) < _LOG_ZERO
    return float(grid[np.argmax(below)]) if below.any() else bound


@functools.lru_cache(maxsize=16)
def heat_table(tau, n, log_scale=0.0):
    """The compiled kernel's table for H^n at time tau.

    Returns
    -------
    table : ndarray of shape (n_pieces, TABLE_DEGREE + 1)
        Chebyshev coefficients of g(r) = log(K(r) / K(0)) + r^2 / (4 tau),
        piece i covering [i, i + 1] * ``table_piece(extent)``.
    extent : float
        The distance from which the kernel is taken as 0 (below float64's
        smallest value, after ``log_scale``).
    log_k0 : float
        log K(0).

    Kept for the last 16 (tau, n, log_scale): every fit and prediction
    builds its kernel, and an even n's table takes 0.1-0.7 s (up to 3 s at
    the largest times, 2,000 pieces for n = 2 at tau = 1000). The table is
    read-only.
    """
    if n % 2 == 1:
        constant, shape = _constant_and_shape(tau, n)
    else:
        # The odd kernel of H^(n+1) through its own table, which the descent
        # integral reads at many points per distance.
        odd_shape0 = float(_odd_shape(np.zeros(1), tau, n + 1)[0])

        def odd_ratio(s):
            return _odd_shape(s, tau, n + 1) - odd_shape0
        # It must reach past every distance the even table is fitted at, by
        # as far as the integrand takes to fall by e^-46 (within
        # sqrt(4 tau 46) of r): it holds logs, so values far below float64's
        # range are no trouble, and no further (the contour integral loses
        # digits where s^2 / 4 tau is in the tens of thousands, at small
        # tau). The even table's nodes reach the end of its last piece: the
        # Gaussian bound of _extent rounded up to whole pieces (a review:
        # where that end passed the odd table's, at tau near 1e-4 to 1e-3,
        # the integral lost its tail and the last piece its fifth digit).
        bound = math.sqrt(4.0 * tau * (-_LOG_ZERO + max(0.0, log_scale)))
        if bound >= TABLE_PIECE:  # below, one piece of the extent's width
            bound = math.ceil(bound / TABLE_PIECE) * TABLE_PIECE
        odd_extent = bound + math.sqrt(200.0 * tau)
        odd_piece = table_piece(odd_extent)
        odd_table = _table_of(odd_ratio, tau, odd_extent, odd_piece)
        if not (np.all(np.isfinite(odd_table)) and math.isfinite(odd_shape0)):
            raise ValueError(f"the heat kernel of H^{n + 1} at time {tau!r} could not be "
                             f"tabulated in float64")
        odd_end = odd_table.shape[0] * odd_piece

        def odd_from_table(s):
            inside = s < odd_end
            out = np.full(s.shape, -np.inf)
            out[inside] = (odd_shape0 + evaluate_table(odd_table, s[inside], odd_piece)
                           - s[inside] ** 2 / (4.0 * tau))
            return out

        constant = _even_constant(tau, n)

        def shape(r):
            return _even_shape(r, tau, n, odd_from_table)
    shape0 = float(shape(np.zeros(1))[0])

    def log_ratio(r):
        return shape(r) - shape0
    extent = _extent(log_ratio, tau, log_scale)
    table = _table_of(log_ratio, tau, extent, table_piece(extent))
    if not (np.all(np.isfinite(table)) and math.isfinite(shape0)):  # never a NaN kernel
        raise ValueError(f"the heat kernel of H^{n} at time {tau!r} could not be tabulated "
                         f"in float64")
    return _read_only(table), extent, constant + shape0


def _read_only(array):
    array.flags.writeable = False
    return array
