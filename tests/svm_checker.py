"""An independent NumPy checker of fitted ``kgeo.SVM`` models.

Nothing here calls kgeo: the Gram matrix is recomputed with a slow dense
NumPy implementation of every kernel (written from the formulas of Zhang,
Chen & Lee 2005 and Lafferty & Lebanon 2005), the dual variables of every
class pair are read back from the public attributes (``dual_coef_``,
``support_``, ``n_support_``, in libsvm's one-vs-one layout, as
``sklearn.svm.SVC`` has them), and the optimality of each pair's solution is
verified from Definition 2 of Zhang, Chen & Lee directly:

- box constraints ``0 <= a_i <= C_i`` (``C_i = C * class_weight[y_i]``),
- ``sum_i a_i y_i = 0``,
- the KKT conditions within ``tol``: the maximal violating pair's gap
  ``max_{I_up} -y G + max_{I_low} y G`` (``G = Q a - 1``) and every
  training point's margin ``y f(x)`` against its ``a``,
- ``b*``: the mean of ``y_j - sum_i a_i y_i k(x_i, x_j)`` over the free
  support vectors, or the midpoint of the interval the KKT conditions allow,
- the dual objective ``sum a - 1/2 a'Qa`` against ``dual_objective_``,
- ``decision_function`` against the decision built from the reference Gram.

Tolerances. The reference kernel is accurate to a few ulps (distances near
the diagonal are recomputed from differences, never by cancellation), while
the formulas kgeo evaluates carry rounding: ``arccos`` of a Bhattacharyya
coefficient within ``~1e-16`` of 1 is off by up to ``~1e-7``, and so is
``sqrt`` of a cancelled squared distance (kgeo recomputes such close pairs
from the rows' difference, so the bound below is conservative there). :func:`reference_kernel`
therefore returns with every value a bound ``E_ij`` of kgeo's error on it (the
kernel's sensitivity to a perturbation of its inner product or squared
distance by ``DOT_EPS`` relative); each check gets the slack this bound
implies for its quantity (``sum_i a_i E_ik`` for a gradient, ``a'Ea / 2`` for
the objective) on top of its nominal tolerance. The slack is negligible
except next to duplicate or near-duplicate points.

Use from a test file (tests have no ``__init__.py`` and run with
``--import-mode=importlib``)::

    sys.path.insert(0, os.path.dirname(__file__))
    import svm_checker
"""

from fractions import Fraction

import numpy as np
import scipy.sparse as sp

__all__ = [
    "SIMPLEX_KERNELS",
    "KERNEL_NAMES",
    "reference_kernel",
    "resolve_gamma",
    "model_kernel_params",
    "class_weights",
    "pair_alphas",
    "pair_decisions",
    "check_svm",
    "exact_kkt_gap",
    "make_count_data",
]

EPS = np.finfo(np.float64).eps
# Relative rounding allowed to kgeo on an inner product of rows (a few ulps
# per term of a sparse dot product of modest length, generously).
DOT_EPS = 1e-14
# Nominal tolerances of the checks (before the kernel-noise slack).
EQUALITY_RTOL = 1e-10      # |sum a y| <= EQUALITY_RTOL * C * n
INTERCEPT_ATOL = 1e-6
OBJECTIVE_RTOL = 1e-9
DECISION_ATOL = 1e-6

SIMPLEX_KERNELS = ("ngd", "ngd+pi", "ngd_exp", "bhattacharyya", "diffusion")
KERNEL_NAMES = ("linear", "poly", "rbf", "sigmoid", "ned") + SIMPLEX_KERNELS


# --------------------------------------------------------------------------
# Reference kernels
# --------------------------------------------------------------------------

def _rows(X):
    """The rows as a CSR float64 matrix (sparse storage only; the maths is dense)."""
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    X.sum_duplicates()
    return X


def _sq_row_norms(A):
    return np.asarray(A.multiply(A).sum(axis=1)).ravel()


def _products(A, B):
    """Dense matrix of the inner products of the rows of A and B."""
    return (A @ B.T).toarray()


def _close_pair_sq_distances(A, B, sq, near):
    """Recompute ``|a_i - b_j|^2`` from differences where ``near`` is set."""
    sq = sq.copy()
    i, j = np.nonzero(near)
    if i.size:
        sq[i, j] = _sq_row_norms(A[i] - B[j])
    return sq


def _sq_distances(A, B):
    """Squared Euclidean distances, exact-from-differences near the diagonal."""
    sa, sb = _sq_row_norms(A), _sq_row_norms(B)
    sq = np.maximum(sa[:, None] + sb[None, :] - 2.0 * _products(A, B), 0.0)
    # Cancellation matters only where the distance is small against the norms.
    near = sq <= 1e-2 * (sa[:, None] + sb[None, :])
    return _close_pair_sq_distances(A, B, sq, near), sa, sb


def _simplex_sqrt(A):
    """sqrt(x / sum(x)) row by row."""
    sums = np.asarray(A.sum(axis=1)).ravel()
    if np.any(sums <= 0) or (A.nnz and A.data.min() < 0):
        raise ValueError("rows must be non-negative with a positive sum")
    U = sp.csr_matrix(sp.diags(1.0 / sums) @ A)
    U.data = np.sqrt(U.data)
    return U


def _sensitivity(f, q, delta, lo=None, hi=None):
    """max |f(q +- delta) - f(q)|, the argument clipped to [lo, hi]."""
    up, down = q + delta, q - delta
    if lo is not None:
        up, down = np.maximum(up, lo), np.maximum(down, lo)
    if hi is not None:
        up, down = np.minimum(up, hi), np.minimum(down, hi)
    f0 = f(q)
    return np.maximum(np.abs(f(up) - f0), np.abs(f(down) - f0))


def _hyperbolic_reference(A, B, t, normalize):
    """The heat kernel of N(mu, sigma^2 I) on rows (mu, sigma), from closed
    forms: the Fisher-Rao distance r_F of two spherical normals in R^(n-1),
    cosh(r_F / sqrt(c)) = 1 + (|mu - mu'|^2 / c + (sigma - sigma')^2) / (2 sigma sigma'),
    c = 2 (n - 1), and the heat kernel of H^3 (n = 3) or H^5 (n = 5) of
    Lafferty & Lebanon's eq. 5 written out (the papers' NOTES), at time
    t / c of unit-curvature H^n, times c^(-n/2) (normalize) or over its value
    at 0. Other n are not written out here."""
    n = A.shape[1]
    if n not in (3, 5):
        raise ValueError(f"the reference hyperbolic kernel has closed forms for n = 3 and 5, "
                         f"got {n} columns")
    c = 2.0 * (n - 1)
    tau = t / c
    mu_a, mu_b, sa, sb = A[:, :-1], B[:, :-1], A[:, -1], B[:, -1]
    gap = (((mu_a[:, None, :] - mu_b[None, :, :]) ** 2).sum(-1) / c
           + (sa[:, None] - sb[None, :]) ** 2) / (2.0 * sa[:, None] * sb[None, :])
    r = np.arccosh(1.0 + gap)

    def heat(r):
        r = np.asarray(r, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            if n == 3:
                shape = np.where(r > 0, r / np.sinh(r), 1.0)
                return (4 * np.pi * tau) ** -1.5 * shape * np.exp(-tau - r * r / (4 * tau))
            # r coth r - 1 from its series where the subtraction would cancel
            series = np.where(r > 0.05, r / np.tanh(r) - 1.0,
                              r ** 2 / 3 - r ** 4 / 45 + 2 * r ** 6 / 945)
            sinh2 = np.where(r > 0, np.sinh(r) ** 2, 1.0)
            shape = np.where(r > 0, (series + r * r / (2 * tau)) / sinh2, 1.0 / 3 + 1 / (2 * tau))
            return (np.exp(-4 * tau - r * r / (4 * tau)) * shape
                    / (8 * np.pi ** 2 * tau * np.sqrt(4 * np.pi * tau)))

    scale = c ** (-n / 2) if normalize else 1.0 / heat(0.0)
    K = scale * heat(r)
    # kgeo's rows in the Poincare ball carry their distances to ~1e-15 of cosh r.
    d_gap = DOT_EPS * (1.0 + gap)
    E = np.abs(scale * (heat(np.arccosh(1.0 + gap + d_gap)) - heat(r))) + 1e-300
    return K, E


def resolve_gamma(X, gamma, sample_weight=None):
    """gamma of poly/rbf/sigmoid: ``"scale"`` = 1 / (n_features * X.var()),
    with sample weights the variance of X's rows each repeated as often as
    its weight says (the entries of row i weighted by its weight)."""
    X = _rows(X)
    if gamma == "scale":
        dense = X.toarray()
        w = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
        n = w.sum() * X.shape[1]
        var = w @ (dense ** 2).sum(axis=1) / n - (w @ dense.sum(axis=1) / n) ** 2
        return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    if gamma == "auto" or gamma is None:
        return 1.0 / X.shape[1]
    return float(gamma)


def reference_kernel(X, Y=None, kernel="ngd", *, shift=0.0, gamma=None, coef0=0.0,
                     degree=3, t=1.0, normalize=False, return_noise=False):
    """Dense kernel matrix between the rows of X and Y, from the formulas.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_x, n_features)
    Y : same, shape (n_y, n_features), default=None (Y = X)
    kernel : str
        ``linear`` <x,y>; ``poly`` (gamma <x,y> + coef0)^degree; ``rbf``
        exp(-gamma |x-y|^2); ``sigmoid`` tanh(gamma <x,y> + coef0); ``ned``
        -|x-y|; on the simplex (p = x / sum(x), angle = arccos(sum sqrt(p q)),
        half the Fisher geodesic distance): ``ngd`` -2 angle, ``ngd+pi``
        pi - 2 angle, ``ngd_exp`` exp(-angle / t), ``diffusion``
        exp(-angle^2 / t), ``bhattacharyya`` cos(angle). ``normalize`` multiplies
        the last two by (4 pi t)^(-n/2), n = n_features - 1 the dimension of
        the simplex. ``shift`` is added to every value.
    gamma : float or None
        None means 1 / n_features (resolve "scale" with :func:`resolve_gamma`).
    return_noise : bool, default=False
        Also return ``E``, a bound of the rounding error of a kernel value
        computed by the usual inner-product formulas (see the module doc).

    Returns
    -------
    K : ndarray of shape (n_x, n_y)
    E : ndarray of shape (n_x, n_y), only with ``return_noise=True``
    """
    A = _rows(X)
    B = A if Y is None else _rows(Y)
    n_features = A.shape[1]
    if gamma is None:
        gamma = 1.0 / n_features
    if kernel == "hyperbolic":
        K, E = _hyperbolic_reference(A.toarray(), B.toarray(), t, normalize)
        K = K + shift
    elif kernel in SIMPLEX_KERNELS:
        U = _simplex_sqrt(A)
        V = U if Y is None else _simplex_sqrt(B)
        cos = np.clip(_products(U, V), 0.0, 1.0)
        # Near the diagonal arccos(cos) is ill-conditioned: use the Hellinger
        # distance h = |sqrt p - sqrt q| = 2 sin(angle / 2) from differences.
        near = cos > 0.9
        h2 = _close_pair_sq_distances(U, V, np.zeros_like(cos), near)
        angle = np.where(near, 2.0 * np.arcsin(np.minimum(np.sqrt(h2) / 2.0, 1.0)),
                         np.arccos(cos))
        cos_accurate = np.where(near, np.cos(angle), cos)
        log_scale = 0.0
        if normalize and kernel in ("ngd_exp", "diffusion"):
            log_scale = -0.5 * (n_features - 1) * np.log(4.0 * np.pi * t)
        maps = {
            "ngd": lambda a: -2.0 * a,
            "ngd+pi": lambda a: np.pi - 2.0 * a,
            "ngd_exp": lambda a: np.exp(log_scale - a / t),
            "diffusion": lambda a: np.exp(log_scale - a * a / t),
            "bhattacharyya": lambda a: np.cos(a),
        }
        f = maps[kernel]
        K = f(angle) + shift
        # kgeo rounds the coefficient itself: perturb the cosine, map through.
        E = _sensitivity(lambda c: f(np.arccos(c)), cos_accurate, DOT_EPS, 0.0, 1.0)
    else:
        dots = _products(A, B)
        sa, sb = _sq_row_norms(A), _sq_row_norms(B)
        dot_delta = DOT_EPS * np.sqrt(sa)[:, None] * np.sqrt(sb)[None, :] + 1e-300
        if kernel == "linear":
            K = dots + shift
            E = dot_delta
        elif kernel == "poly":
            f = lambda d: (gamma * d + coef0) ** degree  # noqa: E731
            K = f(dots) + shift
            E = _sensitivity(f, dots, dot_delta)
        elif kernel == "sigmoid":
            f = lambda d: np.tanh(gamma * d + coef0)  # noqa: E731
            K = f(dots) + shift
            E = _sensitivity(f, dots, dot_delta)
        elif kernel in ("rbf", "ned"):
            sq, sa, sb = _sq_distances(A, B)
            sq_delta = 4.0 * DOT_EPS * (sa[:, None] + sb[None, :]) + 1e-300
            f = ((lambda s: np.exp(-gamma * s)) if kernel == "rbf"
                 else (lambda s: -np.sqrt(s)))
            K = f(sq) + shift
            E = _sensitivity(f, sq, sq_delta, lo=0.0)
        else:
            raise ValueError(f"unknown kernel {kernel!r}")
    # The scalar map and the shift round too.
    E = E + 8 * EPS * (np.abs(K) + abs(shift))
    return (K, E) if return_noise else K


def model_kernel_params(model, X_train, sample_weight=None):
    """Kernel name and parameters of a fitted or unfitted SVM, gamma resolved on X_train."""
    params = model.get_params()
    kernel = params["kernel"]
    out = {"shift": params.get("shift", 0.0)}  # SVC has no shift
    if kernel in ("poly", "rbf", "sigmoid"):
        out["gamma"] = resolve_gamma(X_train, params["gamma"], sample_weight)
    if kernel in ("poly", "sigmoid"):
        out["coef0"] = params["coef0"]
    if kernel == "poly":
        out["degree"] = params["degree"]
    if kernel in ("ngd_exp", "diffusion", "hyperbolic"):
        out["t"] = params["t"]
        out["normalize"] = params["normalize"]
    return kernel, out


# --------------------------------------------------------------------------
# Reading the solution back
# --------------------------------------------------------------------------

def class_weights(y, classes, class_weight, sample_weight=None):
    """Weight of each class: None -> 1, "balanced" -> n / (k n_c), dict -> as given.

    With sample weights, "balanced" counts each sample as its weight."""
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    counts = np.array([w[y == c].sum() for c in classes], dtype=np.float64)
    if class_weight is None:
        return np.ones(len(classes))
    if isinstance(class_weight, str):
        assert class_weight == "balanced"
        return w.sum() / (len(classes) * counts)
    return np.array([float(class_weight.get(c, 1.0)) for c in classes])


def pair_alphas(model, y):
    """Dual variables of every class pair from SVC-layout attributes.

    Works for ``kgeo.SVM`` and ``sklearn.svm.SVC`` alike (same layout): the
    support vectors are grouped by class in ``classes_`` order; for the pair
    (s, t), s < t, a support vector of class s holds ``a_i y_i = a_i`` in row
    ``t - 1`` of ``dual_coef_``, one of class t holds ``-a_i`` in row ``s``.
    With two classes scikit-learn stores the negation.

    Returns
    -------
    pairs : list of dict with keys s, t (class indices), idx (training
        indices of the pair's samples, increasing), y (+1 for s, -1 for t),
        alpha (over idx, zero off the support).
    """
    y = np.asarray(y)
    classes = model.classes_
    n_classes = len(classes)
    y_index = np.searchsorted(classes, y)
    assert np.array_equal(classes[y_index], y), "training labels not among classes_"
    support = np.asarray(model.support_)
    n_support = np.asarray(model.n_support_)
    coef = model.dual_coef_
    coef = np.asarray(coef.toarray() if sp.issparse(coef) else coef, dtype=np.float64)
    assert coef.shape == (n_classes - 1, support.shape[0]), coef.shape
    assert n_support.shape == (n_classes,) and n_support.sum() == support.shape[0]
    if n_classes == 2:
        coef = -coef  # scikit-learn's binary sign flip, back to libsvm's orientation
    sv_start = np.concatenate([[0], np.cumsum(n_support)])
    # The support vectors are grouped by class, increasing inside each class.
    for c in range(n_classes):
        block = support[sv_start[c]:sv_start[c + 1]]
        assert np.all(y_index[block] == c), f"support_ block {c} holds other classes"
        assert np.all(np.diff(block) > 0), f"support_ block {c} is not increasing"
    pairs = []
    for s in range(n_classes):
        for t in range(s + 1, n_classes):
            idx = np.flatnonzero((y_index == s) | (y_index == t))
            yy = np.where(y_index[idx] == s, 1.0, -1.0)
            alpha = np.zeros(idx.shape[0])
            pos = {g: k for k, g in enumerate(idx.tolist())}
            for c, row, sign in ((s, t - 1, 1.0), (t, s, -1.0)):
                sv = support[sv_start[c]:sv_start[c + 1]]
                alpha[[pos[g] for g in sv.tolist()]] = sign * coef[row, sv_start[c]:sv_start[c + 1]]
            pairs.append({"s": s, "t": t, "idx": idx, "y": yy, "alpha": alpha})
    # A support vector has a nonzero coefficient in at least one of its pairs.
    in_some_pair = np.zeros(support.shape[0], dtype=bool)
    in_some_pair |= np.any(coef != 0, axis=0)
    assert np.all(in_some_pair), "a support vector has only zero coefficients"
    return pairs


# --------------------------------------------------------------------------
# The checker
# --------------------------------------------------------------------------

def pair_decisions(model, X):
    """Pair decision values in libsvm's orientation (> 0: first class)."""
    n_classes = len(model.classes_)
    if n_classes == 2:
        return -np.asarray(model.decision_function(X))[:, None]
    saved = model.decision_function_shape
    try:
        model.decision_function_shape = "ovo"
        return np.asarray(model.decision_function(X))
    finally:
        model.decision_function_shape = saved


def check_svm(model, X, y, *, C=None, class_weight=None, tol=None, X_test=None,
              check_decision=True, extra_slack=0.0, sample_weight=None):
    """Verify every class pair of a fitted SVM against Definition 2.

    Parameters
    ----------
    model : fitted kgeo.SVM (or sklearn.svm.SVC with ``check_decision=False``)
    X, y : the training data (X: the kernel matrix for kernel="precomputed";
        for a callable kernel, the rows it was fitted on, read by the function)
    C, class_weight, tol : default to the model's parameters
    sample_weight : array-like of shape (n_samples,), default=None
        The weights of the fit: ``C_i`` is multiplied by them, samples of
        weight 0 must have no coefficient and are left out of the checks.
    X_test : array-like, default=None
        Points on which decision_function is compared with the reference
        (the training points are always used); for kernel="precomputed",
        their kernel against the training points.
    check_decision : bool, default=True
    extra_slack : float, default=0.0
        Added to the KKT gap tolerance.

    Returns
    -------
    report : list of dict, one per pair: s, t, alpha, y, C (per sample),
        gap, b, objective, n_free, n_upper.

    Raises
    ------
    AssertionError
        With the pair and the violated condition.
    """
    params = model.get_params()
    C = params["C"] if C is None else C
    class_weight = params.get("class_weight") if class_weight is None else class_weight
    tol = params["tol"] if tol is None else tol
    y = np.asarray(y)
    if params["kernel"] == "precomputed":
        # X is the kernel matrix itself (X_test: K(X_test, X)); its values are
        # exact as given, so no rounding slack; the solver reads them + shift.
        X_eval = np.asarray(X, dtype=np.float64)
        if X_test is not None:
            X_eval = np.vstack([X_eval, np.asarray(X_test, dtype=np.float64)])
        n_train = X_eval.shape[1]
        K_eval = X_eval + params.get("shift", 0.0)
        E_eval = np.zeros_like(K_eval)
    elif callable(params["kernel"]):
        # A callable kernel: X holds features, and the function's values are
        # the kernel by definition (exact, as a given matrix is).
        n_train = X.shape[0]
        X_eval = X if X_test is None else (
            sp.vstack([X, X_test], format="csr") if sp.issparse(X)
            else np.vstack([X, X_test]))
        K_eval = (np.asarray(params["kernel"](X_eval, X), dtype=np.float64)
                  + params.get("shift", 0.0))
        E_eval = np.zeros_like(K_eval)
    else:
        X_rows = _rows(X)
        positive = None if sample_weight is None else np.asarray(sample_weight) > 0
        kernel, kparams = model_kernel_params(
            model, X_rows if positive is None else X_rows[np.flatnonzero(positive)],
            None if positive is None else np.asarray(sample_weight, float)[positive])
        n_train = X_rows.shape[0]
        X_eval = X_rows if X_test is None else sp.vstack([X_rows, _rows(X_test)], format="csr")
        # Rows: training then test points; columns: training points.
        K_eval, E_eval = reference_kernel(X_eval, X_rows, kernel=kernel, return_noise=True,
                                          **kparams)
    K, E = K_eval[:n_train], E_eval[:n_train]
    sw = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    weights = class_weights(y[sw > 0], model.classes_, class_weight, sw[sw > 0])
    fitted = getattr(model, "class_weight_", None)
    if fitted is not None:
        # "balanced" sums the weights in another order than kgeo: the same
        # numbers to rounding, and the box is then the model's, to the bit
        # (a dual variable at C_i is compared with C_i exactly below).
        np.testing.assert_allclose(fitted, weights, rtol=1e-13,
                                   err_msg="class_weight_ is not the reference's")
        weights = np.asarray(fitted, dtype=np.float64)
    pairs = pair_alphas(model, y)
    # scikit-learn's SVC has no dual_objective_; a kgeo model's is checked
    # whatever it holds (a NaN too).
    objectives = getattr(model, "dual_objective_", None)
    if objectives is not None:
        objectives = np.asarray(objectives, dtype=np.float64)
        assert objectives.shape == (len(pairs),), objectives.shape
    intercepts = np.asarray(model.intercept_, dtype=np.float64)
    if len(model.classes_) == 2:
        intercepts = -intercepts
    if check_decision:
        dec_model = pair_decisions(model, X_eval)
    report = []
    for p, pr in enumerate(pairs):
        s, t, idx, yy, a = pr["s"], pr["t"], pr["idx"], pr["y"], pr["alpha"]
        where = f"pair {p} ({model.classes_[s]!r}, {model.classes_[t]!r})"
        # Samples of weight 0 are as if absent.
        present = sw[idx] > 0
        assert np.all(a[~present] == 0), f"{where}: a sample of weight 0 has a coefficient"
        idx, yy, a = idx[present], yy[present], a[present]
        Cvec = C * np.where(yy > 0, weights[s], weights[t]) * sw[idx]
        n = idx.shape[0]
        Kp, Ep = K[np.ix_(idx, idx)], E[np.ix_(idx, idx)]
        # Box and equality constraints.
        assert np.all(a >= 0), f"{where}: alpha < 0 (min {a.min():.3g})"
        assert np.all(a <= Cvec), f"{where}: alpha > C (max excess {(a - Cvec).max():.3g})"
        eq = abs(a @ yy)
        assert eq <= EQUALITY_RTOL * Cvec.max() * n, f"{where}: |sum a y| = {eq:.3g}"
        # Gradient and its error bound from kgeo's kernel rounding (plus the
        # rounding of an incrementally updated gradient).
        ay = a * yy
        g = Kp @ ay                                  # sum_i a_i y_i k(x_i, x_k)
        G = yy * g - 1.0                             # (Q a - 1)_k
        g_noise = Ep @ a + 1e-12 * (1.0 + np.abs(Kp) @ a)
        upper = a >= Cvec
        lower = a <= 0
        free = ~upper & ~lower
        i_up = (~upper & (yy > 0)) | (~lower & (yy < 0))
        i_low = (~lower & (yy > 0)) | (~upper & (yy < 0))
        gap = (np.max(-yy[i_up] * G[i_up], initial=-np.inf)
               + np.max(yy[i_low] * G[i_low], initial=-np.inf))
        slack = 2.0 * g_noise.max() + extra_slack
        assert gap <= tol + slack, f"{where}: KKT gap {gap:.6g} > tol {tol} + {slack:.3g}"
        # b*, as Definition 2 defines it.
        minus_yG = -yy * G                           # y_j - sum_i a_i y_i k_ij
        if np.any(free):
            b = minus_yG[free].mean()
        else:
            lo_set = (lower & (yy > 0)) | (upper & (yy < 0))
            hi_set = (upper & (yy > 0)) | (lower & (yy < 0))
            lo = minus_yG[lo_set].max() if np.any(lo_set) else -np.inf
            hi = minus_yG[hi_set].min() if np.any(hi_set) else np.inf
            b = (lo + hi) / 2.0
        b_tol = INTERCEPT_ATOL + g_noise.max()
        assert abs(intercepts[p] - b) <= b_tol, (
            f"{where}: intercept {intercepts[p]!r} != reference b* {b!r} (tol {b_tol:.3g})")
        # Primal form of the KKT conditions: the margins y f(x) against a.
        margin = yy * (g + b)
        m_tol = tol + slack
        assert np.all(margin[lower] >= 1 - m_tol), f"{where}: a = 0 with y f < 1 - tol"
        assert np.all(margin[upper] <= 1 + m_tol), f"{where}: a = C with y f > 1 + tol"
        assert np.all(np.abs(margin[free] - 1) <= m_tol), f"{where}: free SV off the margin"
        # Dual objective.
        objective = a.sum() - 0.5 * ay @ Kp @ ay
        o_tol = OBJECTIVE_RTOL * max(abs(objective), 1e-300) + 0.5 * a @ Ep @ a
        if objectives is not None:
            assert abs(objectives[p] - objective) <= o_tol, (
                f"{where}: dual_objective_ {objectives[p]!r} != reference {objective!r}")
        # Decision values.
        if check_decision:
            ref = K_eval[:, idx] @ ay + b
            d_tol = DECISION_ATOL + E_eval[:, idx] @ a + g_noise.max()
            err = np.abs(dec_model[:, p] - ref)
            assert np.all(err <= d_tol), (
                f"{where}: decision_function off the reference by {err.max():.3g}")
        report.append({"s": s, "t": t, "idx": idx, "alpha": a, "y": yy, "C": Cvec,
                       "gap": gap, "b": b, "objective": objective,
                       "n_free": int(free.sum()), "n_upper": int(upper.sum())})
    return report


def exact_kkt_gap(model, K, y, box):
    """The KKT gap of a binary model in exact rational arithmetic.

    Where the gradient's terms are large next to tol (weights of 1e8, rows
    far from the origin), its float64 rounding exceeds tol and makes the
    float gap noise; here every value is exact: the model's coefficients and
    the float64 kernel values ``K`` (n_samples x n_samples) as given, ``box``
    each sample's bound (C times its weights; 0 leaves the sample out).
    """
    sign = np.where(np.asarray(y) == model.classes_[1], 1, -1)
    n = len(sign)
    present = [k for k in range(n) if box[k] > 0]
    bound = [Fraction(float(c)) for c in box]
    alpha = [Fraction(0)] * n
    for k, c in zip(model.support_, model.dual_coef_[0]):
        # dual_coef_ holds a_k y_k, y_k = +1 for classes_[1] (scikit-learn's
        # binary orientation): the sign is checked, not dropped.
        alpha[k] = Fraction(float(c)) * int(sign[k])
    # Definition 2's constraints, which a small gap does not imply: a
    # solution of the dual without sum a y = 0 has a gap of 0 too.
    for k in range(n):
        assert 0 <= alpha[k] <= bound[k], (
            f"alpha_{k} = {float(alpha[k])!r} outside [0, {float(bound[k])!r}]")
    balance = abs(sum(int(sign[k]) * alpha[k] for k in range(n)))
    assert balance <= EQUALITY_RTOL * float(max(bound)) * n, (
        f"|sum a y| = {float(balance):.3g}")
    # G_k = (Q alpha)_k - 1; -y_k G_k is the decision's y_k - sum_j ... form.
    minus_yG = {k: sign[k] - sum(int(sign[j]) * Fraction(float(K[k, j])) * alpha[j]
                                 for j in present) for k in present}
    up = [minus_yG[k] for k in present
          if (sign[k] > 0 and alpha[k] < bound[k]) or (sign[k] < 0 and alpha[k] > 0)]
    low = [minus_yG[k] for k in present
           if (sign[k] > 0 and alpha[k] > 0) or (sign[k] < 0 and alpha[k] < bound[k])]
    return float(max(up) - min(low))


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------

def train_and_test_counts(rng, n_train=60, n_test=25, n_classes=3, **kw):
    """Training counts and labels, and test counts, of 12 words (``make_count_data``)."""
    X, y = make_count_data(rng, n_train, 12, n_classes, **kw)
    Xt, _ = make_count_data(rng, n_test, 12, n_classes)
    return X, y, Xt


def pair_objectives(model, K, y):
    """sum a - 1/2 a'Qa of each class pair on the kernel matrix K, the alphas
    read from SVC-layout attributes (kgeo's or scikit-learn's)."""
    out = []
    for pr in pair_alphas(model, y):
        ay = pr["alpha"] * pr["y"]
        out.append(pr["alpha"].sum() - 0.5 * ay @ K[np.ix_(pr["idx"], pr["idx"])] @ ay)
    return np.array(out)


def assert_identical_models(a, b):
    """Two fitted SVMs are the same model, bit for bit."""
    for name in ("classes_", "support_", "n_support_", "dual_coef_", "intercept_",
                 "n_iter_", "dual_objective_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def make_count_data(rng, n_samples, n_features, n_classes, *, density=0.5, max_count=6,
                    separation=1.0, n_duplicates=0, sparse=False):
    """Term counts with a class-dependent word distribution.

    Each class favours its own words by the factor ``1 + separation``, so the
    problems have margin errors and free support vectors alike. Every row has
    some mass; ``n_duplicates`` rows are copies of others (their labels drawn
    afresh, so duplicates may disagree).

    Returns
    -------
    X : ndarray (or CSR with ``sparse=True``) of shape (n_samples, n_features)
    y : ndarray of int of shape (n_samples,), every class present
    """
    y = np.arange(n_samples) % n_classes
    rng.shuffle(y)
    favour = rng.integers(0, n_classes, size=n_features)
    rate = np.where(favour[None, :] == y[:, None], 1.0 + separation, 1.0)
    mask = rng.random((n_samples, n_features)) < density * rate / (1.0 + separation)
    X = (rng.integers(1, max_count + 1, size=(n_samples, n_features)) * mask).astype(float)
    empty = np.flatnonzero(X.sum(axis=1) == 0)
    X[empty, rng.integers(0, n_features, size=empty.shape[0])] = 1.0
    if n_duplicates:
        src = rng.integers(0, n_samples, size=n_duplicates)
        dst = rng.choice(n_samples, size=min(n_duplicates, n_samples), replace=False)
        src = src[:dst.shape[0]]
        keep = src != dst
        X[dst[keep]] = X[src[keep]]
        y[dst[keep]] = rng.integers(0, n_classes, size=int(keep.sum()))
        # Keep every class present after relabelling.
        for c in range(n_classes):
            if not np.any(y == c):
                counts = np.bincount(y, minlength=n_classes)
                y[np.flatnonzero(y == np.argmax(counts))[0]] = c
    return (sp.csr_matrix(X) if sparse else X), y
