"""The SMO solver and the ``kgeo.SVM`` estimator.

1. Every fitted model is verified by an independent NumPy checker
   (``svm_checker.py``): box and equality constraints, KKT conditions within
   ``tol``, ``b*`` as Definition 2 of Zhang, Chen & Lee (2005) defines it, the
   dual objective and the decision function, for every kernel and class pair.
2. Proposition 3 (a constant added to the kernel changes nothing) holds to
   rounding, on random data (hypothesis) and on real 20 Newsgroups documents.
3. The dual optimum agrees with libsvm's (scikit-learn's SVC) on the same Gram
   matrix.
4. The solution does not depend on the cache size, the thread count or the
   input format; shrinking does not change it beyond ``tol``.
5. Scaling the kernel by c is the same SVM as scaling C by c.
6. The estimator behaves as scikit-learn's SVC: labels, shapes, sign
   conventions, class weights, warnings, cloning, calibration.
"""

import _thread as _thread_module
import contextlib
import copy
import math
import os
import pickle
import re
import sys
import time
import warnings

import numpy as np
import pytest
import scipy
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import kgeo
from kgeo.exceptions import DataConversionWarning

# The checker is a plain module beside this file (tests/ is no package, and
# --import-mode=importlib keeps it off sys.path).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svm_checker as ck  # noqa: E402

# Non-default parameters, so that their passing is checked too.
KERNEL_PARAMS = {
    "linear": {},
    "poly": {"gamma": 0.05, "coef0": 1.0, "degree": 2},
    "rbf": {"gamma": "scale"},
    "sigmoid": {"gamma": 0.01, "coef0": -0.2},
    "ned": {},
    "ngd": {},
    "ngd+pi": {},
    "ngd_exp": {"t": 2.0},
    "bhattacharyya": {},
    "diffusion": {"t": 0.5},
}
EUCLIDEAN = ("linear", "poly", "rbf", "sigmoid", "ned")


def l2_rows(X):
    """Rows scaled to unit L2 norm (the paper's input for LIN and NED)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        return sp.csr_matrix(sp.diags(1.0 / norms) @ X)
    X = np.asarray(X, dtype=np.float64)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def votes_from_pairs(dec, n_classes):
    """One-vs-one votes: pair (s, t) votes for s when its decision is > 0."""
    votes = np.zeros((dec.shape[0], n_classes), dtype=int)
    p = 0
    for s in range(n_classes):
        for t in range(s + 1, n_classes):
            votes[:, s] += dec[:, p] > 0
            votes[:, t] += dec[:, p] <= 0
            p += 1
    return votes


@pytest.fixture(scope="module")
def newsgroups5(data_dir):
    """Five real 20 Newsgroups classes: 1000 training and 250 test messages.

    The first 250 training messages of alt.atheism, comp.sys.ibm.pc.hardware,
    rec.autos, sci.crypt and soc.religion.christian (two of them close), every
    fifth held out; Rainbow's lexer with ``--prune-vocab-by-doc-count=2``
    learned on the training part.
    """
    from kgeo.datasets import load_20newsgroups
    from kgeo.text import RainbowVectorizer

    tar = data_dir / "20news-bydate" / "20news-bydate.tar.gz"
    if not tar.is_file():
        pytest.skip(f"20 Newsgroups archive {tar} not found")
    corpus = load_20newsgroups(tar, subset="train")
    groups = ["alt.atheism", "comp.sys.ibm.pc.hardware", "rec.autos", "sci.crypt",
              "soc.religion.christian"]
    codes = [corpus.target_names.index(g) for g in groups]
    chosen = np.concatenate([np.flatnonzero(corpus.target == c)[:250] for c in codes])
    test = np.arange(chosen.shape[0]) % 5 == 0
    vec = RainbowVectorizer(prune_by_doc_count=2)
    X = vec.fit_transform([corpus.data[i] for i in chosen[~test]])
    Xt = vec.transform([corpus.data[i] for i in chosen[test]])
    names = np.array(corpus.target_names)
    y, yt = names[corpus.target[chosen[~test]]], names[corpus.target[chosen[test]]]
    # Every message keeps some vocabulary word (the manifold kernels need it).
    assert np.all(np.diff(X.indptr) > 0) and np.all(np.diff(Xt.indptr) > 0)
    return X, y, Xt, yt


@st.composite
def problems(draw, duplicates=True):
    """Small count data with duplicates (possibly differently labelled), C in [1e-3, 1e3]."""
    n_classes = draw(st.integers(2, 4))
    n_samples = draw(st.integers(2 * n_classes + 2, 36))
    n_features = draw(st.integers(2, 10))
    n_duplicates = draw(st.integers(0, 5)) if duplicates else 0
    sparse = draw(st.booleans())
    C = 10.0 ** draw(st.floats(-3.0, 3.0))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X, y = ck.make_count_data(rng, n_samples, n_features, n_classes,
                              n_duplicates=n_duplicates, sparse=sparse)
    Xt, _ = ck.make_count_data(rng, 10, n_features, n_classes)
    return X, y, Xt, C


# ==========================================================================
# 1. The independent checker
# ==========================================================================

def test_reference_kernel_known_values():
    X = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 2.0], [0.0, 5.0, 5.0], [1.0, 1.0, 0.0]])
    ngd = ck.reference_kernel(X, kernel="ngd")
    # Disjoint supports: the geodesic distance is pi; proportional rows: 0.
    assert ngd[0, 1] == pytest.approx(-np.pi, abs=1e-15)
    assert ngd[1, 2] == 0.0 and np.all(np.diag(ngd) == 0.0)
    # <sqrt p, sqrt q> = sqrt(1/2) between rows 0 and 3: angle pi/4.
    assert ngd[0, 3] == pytest.approx(-np.pi / 2, abs=1e-15)
    assert ck.reference_kernel(X, kernel="ngd+pi")[0, 1] == pytest.approx(0.0, abs=1e-15)
    assert ck.reference_kernel(X, kernel="bhattacharyya")[0, 3] == pytest.approx(np.sqrt(0.5))
    ned = ck.reference_kernel(X, kernel="ned")
    assert ned[1, 2] == pytest.approx(-np.sqrt(18.0)) and ned[0, 0] == 0.0
    diffusion = ck.reference_kernel(X, kernel="diffusion", t=0.5, normalize=True)
    # (4 pi t)^(-n/2) with n = 2, the dimension of the simplex of 3 words.
    assert diffusion[0, 3] == pytest.approx(np.exp(-(np.pi / 4) ** 2 / 0.5) / (2 * np.pi))


@pytest.mark.parametrize("kernel", ck.KERNEL_NAMES)
def test_reference_noise_bound_covers_kgeo(kernel, rng):
    """|kgeo's kernel - reference| <= E: the slack the checker grants is enough."""
    X, _ = ck.make_count_data(rng, 30, 7, 2, n_duplicates=4)
    X[1] = X[0]
    X[2] = X[0] * 3  # the same point of the simplex
    X[3] = X[0] + np.eye(7)[0] * 1e-7  # a near-duplicate
    if kernel in EUCLIDEAN:
        X = l2_rows(X)
    params = dict(KERNEL_PARAMS[kernel])
    if params.get("gamma") == "scale":
        params["gamma"] = ck.resolve_gamma(X, "scale")
    K_ref, E = ck.reference_kernel(X, kernel=kernel, return_noise=True, shift=0.5, **params)
    K = kgeo.pairwise_kernels(X, kernel=kernel, shift=0.5, **params)
    assert np.all(np.abs(K - K_ref) <= E)
    # The bound is tight away from the diagonal: the checker stays strict there.
    off = ~np.eye(30, dtype=bool) & (np.abs(K_ref) < 10)
    assert np.median(E[off]) < 1e-12


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("n_classes,C", [(2, 0.5), (3, 1.0), (5, 20.0)])
@pytest.mark.parametrize("kernel", ck.KERNEL_NAMES)
def test_checker_every_kernel(kernel, n_classes, C, sparse, rng):
    X, y = ck.make_count_data(rng, 45, 8, n_classes, n_duplicates=3, sparse=sparse)
    Xt, _ = ck.make_count_data(rng, 15, 8, n_classes)
    model = kgeo.SVM(kernel=kernel, C=C, **KERNEL_PARAMS[kernel]).fit(X, y)
    report = ck.check_svm(model, X, y, X_test=Xt)
    assert len(report) == n_classes * (n_classes - 1) // 2
    assert sum(r["n_free"] for r in report) > 0


@pytest.mark.parametrize("kernel", ["ngd", "linear", "rbf", "ned", "diffusion"])
@settings(max_examples=15)
@given(data=st.data())
def test_checker_random_problems(kernel, data):
    """C from 1e-3 (every alpha at a bound: b* is a midpoint) to 1e3, duplicates."""
    X, y, Xt, C = data.draw(problems())
    class_weight = data.draw(st.sampled_from([None, "balanced"]))
    if kernel in EUCLIDEAN:
        X, Xt = l2_rows(X), l2_rows(Xt)
    model = kgeo.SVM(kernel=kernel, C=C, class_weight=class_weight).fit(X, y)
    ck.check_svm(model, X, y, X_test=Xt)


@pytest.mark.parametrize("kernel", ["ngd", "rbf", "diffusion", "linear"])
def test_checker_tight_tol(kernel, rng):
    """The stopping rule follows tol: a 1e-6 solution passes a 1e-6 check."""
    X, y = ck.make_count_data(rng, 60, 10, 3, n_duplicates=2)
    if kernel == "linear":
        X = l2_rows(X)
    model = kgeo.SVM(kernel=kernel, C=10.0, tol=1e-6).fit(X, y)
    ck.check_svm(model, X, y)  # gap <= 1e-6 (plus kernel-noise slack)
    # The check is sensitive at this level: the default tol leaves larger gaps.
    default = ck.check_svm(kgeo.SVM(kernel=kernel, C=10.0).fit(X, y), X, y)
    assert max(r["gap"] for r in default) > 1e-5


@pytest.mark.parametrize("kernel", ["ngd", "linear"])
def test_checker_real_newsgroups(kernel, newsgroups_subset):
    """400 real messages of all 20 groups (190 class pairs)."""
    X, labels = newsgroups_subset
    if kernel == "linear":
        X = l2_rows(X)
    test = np.arange(X.shape[0]) % 4 == 0
    model = kgeo.SVM(kernel=kernel).fit(X[~test], labels[~test])
    report = ck.check_svm(model, X[~test], labels[~test], X_test=X[test])
    assert len(report) == 190
    assert model.score(X[test], labels[test]) > 0.3  # 20 classes, 15 examples each


def _scaled_at(array, where, factor):
    """A copy of ``array`` (the fit's are read-only) with one entry scaled."""
    array = array.copy()
    array[where] *= factor
    return array


@pytest.mark.parametrize("kernel,objective_change", [("rbf", 1e-7), ("ngd", 1e-5)])
def test_checker_detects_wrong_models(kernel, objective_change, rng):
    """Each corruption of a correct model makes the checker fail.

    (NGD's objective carries kgeo's arccos rounding on the diagonal, up to
    ~1e-7 relative here, which the checker must allow: its corruption is larger.)
    """
    X, y = ck.make_count_data(rng, 45, 8, 3, n_duplicates=2)
    model = kgeo.SVM(kernel=kernel, C=2.0).fit(X, y)
    ck.check_svm(model, X, y)
    free = np.flatnonzero((np.abs(model.dual_coef_[0]) > 0) & (np.abs(model.dual_coef_[0]) < 2.0))

    def corrupted(change):
        bad = copy.deepcopy(model)
        change(bad)
        return bad

    cases = [
        (lambda m: setattr(m, "dual_coef_", _scaled_at(m.dual_coef_, (0, free[0]), 1.001)),
         r"sum a y"),
        (lambda m: m.intercept_.__setitem__(1, m.intercept_[1] + 1e-4), r"intercept"),
        (lambda m: m.dual_objective_.__setitem__(2, m.dual_objective_[2] * (1 + objective_change)),
         r"dual_objective_"),
        (lambda m: m.dual_objective_.__setitem__(0, np.nan), r"dual_objective_"),
        (lambda m: setattr(m, "dual_coef_", m.dual_coef_ * 1.5), r"alpha > C"),
        (lambda m: m.support_.__setitem__(slice(0, 2), m.support_[[1, 0]]), r"not increasing"),
    ]
    for change, match in cases:
        with pytest.raises(AssertionError, match=match):
            ck.check_svm(corrupted(change), X, y)
    # Stopped early: the KKT conditions fail at a tighter tol.
    loose = kgeo.SVM(kernel=kernel, C=2.0, tol=0.5).fit(X, y)
    with pytest.raises(AssertionError, match="KKT gap"):
        ck.check_svm(loose, X, y, tol=1e-3)
    # The wrong box: a model fitted with class weights checked without them.
    weighted = kgeo.SVM(kernel=kernel, C=2.0, class_weight={0: 0.2}).fit(X, y)
    ck.check_svm(weighted, X, y)
    with pytest.raises(AssertionError):
        ck.check_svm(weighted, X, y, class_weight={})


def test_exact_kkt_gap_checks_the_duals_constraints(rng):
    """A gap of 0 does not make a solution: duals of the wrong sign, or
    without sum a y = 0, are refused before the gap is taken."""
    X, y = ck.make_count_data(rng, 30, 6, 2)
    X = l2_rows(X)
    model = kgeo.SVM(kernel="linear", C=2.0, tol=1e-10).fit(X, y)
    K, box = X @ X.T, np.full(len(y), 2.0)
    assert ck.exact_kkt_gap(model, K, y, box) <= 1e-10
    flipped = copy.deepcopy(model)
    flipped.dual_coef_ = -model.dual_coef_
    with pytest.raises(AssertionError, match="outside"):
        ck.exact_kkt_gap(flipped, K, y, box)
    coef = model.dual_coef_[0]
    free = np.flatnonzero((np.abs(coef) > 0) & (np.abs(coef) < 2.0))
    unbalanced = copy.deepcopy(model)
    unbalanced.dual_coef_ = _scaled_at(model.dual_coef_, (0, free[0]), 0.5)
    with pytest.raises(AssertionError, match="sum a y"):
        ck.exact_kkt_gap(unbalanced, K, y, box)


@pytest.mark.parametrize("kernel", ["precomputed", "rbf"])
def test_checker_reads_scikit_learns_svc(kernel, rng):
    """check_svm's docstring takes SVC's models too (no shift, no
    dual_objective_); libsvm stores its kernel rows in float32, so its gaps
    meet the default tol, not a tight one."""
    from sklearn.svm import SVC

    X, y = ck.make_count_data(rng, 40, 6, 3)
    X = l2_rows(X)  # dense
    data = X @ X.T if kernel == "precomputed" else X
    model = SVC(kernel=kernel, gamma=0.5).fit(data, y)
    report = ck.check_svm(model, data, y, check_decision=False)
    assert len(report) == 3


# ==========================================================================
# 2. Proposition 3: k and k + beta give the same SVM
# ==========================================================================

@contextlib.contextmanager
def solver_reads_shift(shift):
    """Assert that every fit in the block solves its pairs from K + shift.

    Proposition 3 says no fitted attribute shows the shift, so a fit that
    dropped it would pass every comparison with the unshifted fit: the shift
    is read from the kernel handed to the row cache the pairs are solved from.
    """
    shifts = []
    cache_class = kgeo._svm.KernelRowCache

    def recording(kernel, *args, **kwargs):
        shifts.append(kernel.shift)
        return cache_class(kernel, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kgeo._svm, "KernelRowCache", recording)
        yield
    assert shifts and all(seen == shift for seen in shifts), (shift, shifts)


def assert_same_svm(m1, m2, X_eval, C):
    """Proposition 3's conclusion, to rounding."""
    np.testing.assert_array_equal(m1.support_, m2.support_)
    np.testing.assert_array_equal(m1.n_support_, m2.n_support_)
    # Near-ties are broken by index, so both follow one SMO path.
    np.testing.assert_array_equal(m1.n_iter_, m2.n_iter_)
    assert np.max(np.abs(m1.dual_coef_ - m2.dual_coef_)) <= 1e-9 * C
    assert np.max(np.abs(m1.intercept_ - m2.intercept_)) <= 1e-9
    # The objectives differ by beta/2 (sum a y)^2 = 0.
    assert np.all(np.abs(m1.dual_objective_ - m2.dual_objective_)
                  <= 1e-9 * np.maximum(1.0, np.abs(m1.dual_objective_)))
    d1, d2 = ck.pair_decisions(m1, X_eval), ck.pair_decisions(m2, X_eval)
    assert np.max(np.abs(d1 - d2)) <= 1e-9
    # Predictions are equal wherever no pair decision is within rounding of 0
    # (a point equidistant from two classes is decided by rounding alone).
    clear = np.all(np.abs(d1) > 1e-9, axis=1)
    np.testing.assert_array_equal(m1.predict(X_eval)[clear], m2.predict(X_eval)[clear])


def _evaluation_points(X, Xt):
    return sp.vstack([sp.csr_matrix(X), sp.csr_matrix(Xt)], format="csr")


@settings(max_examples=25)
@given(problem=problems(duplicates=False))
def test_shift_invariance_ngd_vs_ngd_pi(problem):
    X, y, Xt, C = problem
    m1 = kgeo.SVM(kernel="ngd", C=C).fit(X, y)
    m2 = kgeo.SVM(kernel="ngd+pi", C=C).fit(X, y)
    assert_same_svm(m1, m2, _evaluation_points(X, Xt), C)


# Found by hypothesis: rows 1, 5 and 9 are one document, labelled 2, 2 and 3.
_DUPLICATES_X = np.array([[0, 0, 1, 0, 0, 0], [1, 3, 0, 0, 0, 3], [0, 0, 0, 5, 1, 0],
                          [0, 0, 0, 2, 0, 6], [0, 0, 0, 2, 6, 0], [1, 3, 0, 0, 0, 3],
                          [0, 0, 0, 3, 0, 0], [4, 0, 0, 0, 0, 3], [4, 3, 0, 0, 0, 6],
                          [1, 3, 0, 0, 0, 3]], dtype=float)
_DUPLICATES_Y = np.array([1, 2, 3, 0, 0, 2, 1, 3, 1, 3])


@settings(max_examples=25)
@given(problem=problems(duplicates=True))
@example(problem=(_DUPLICATES_X, _DUPLICATES_Y, _DUPLICATES_X[:3], 10.0))
def test_shift_invariance_ngd_vs_ngd_pi_duplicates(problem):
    X, y, Xt, C = problem
    m1 = kgeo.SVM(kernel="ngd", C=C).fit(X, y)
    m2 = kgeo.SVM(kernel="ngd+pi", C=C).fit(X, y)
    assert_same_svm(m1, m2, _evaluation_points(X, Xt), C)


@pytest.mark.parametrize("kernel", ["ngd", "ngd+pi", "diffusion", "ngd_exp"])
def test_duplicate_documents_have_equal_kernel_rows(kernel):
    """A kernel is a function of the points: identical documents, identical rows."""
    X = _DUPLICATES_X[[1, 5, 9, 0, 3]]
    K = kgeo.pairwise_kernels(X, kernel=kernel)
    np.testing.assert_array_equal(K[0], K[1])
    np.testing.assert_array_equal(K[0], K[2])


@pytest.mark.parametrize("kernel", ["ngd", "ngd+pi", "linear", "rbf", "ned", "poly",
                                    "sigmoid", "ngd_exp", "diffusion", "bhattacharyya"])
@settings(max_examples=12)
@given(problem=problems(), beta=st.sampled_from([np.pi, 10.0, -3.0]))
def test_shift_invariance_random(kernel, problem, beta):
    X, y, Xt, C = problem
    if kernel in EUCLIDEAN:
        # Unit rows keep the kernel O(1), so that absolute tolerances mean
        # the same for every kernel (G's rounding grows with C max|K|).
        X, Xt = l2_rows(X), l2_rows(Xt)
    params = KERNEL_PARAMS[kernel]
    m1 = kgeo.SVM(kernel=kernel, C=C, **params).fit(X, y)
    with solver_reads_shift(beta):  # k + beta, not k again
        m2 = kgeo.SVM(kernel=kernel, C=C, shift=beta, **params).fit(X, y)
    assert_same_svm(m1, m2, _evaluation_points(X, Xt), C)


@pytest.mark.parametrize("kernel,other,shift,C", [
    ("ngd", "ngd+pi", 0.0, 0.1),
    ("ngd", "ngd+pi", 0.0, 1.0),
    ("ngd", "ngd", 10.0, 1.0),
    ("linear", "linear", np.pi, 1.0),
    ("ned", "ned", -3.0, 0.3),
])
def test_shift_invariance_newsgroups(kernel, other, shift, C, newsgroups5):
    X, y, Xt, yt = newsgroups5
    if kernel in EUCLIDEAN:
        X, Xt = l2_rows(X), l2_rows(Xt)
    m1 = kgeo.SVM(kernel=kernel, C=C).fit(X, y)
    with solver_reads_shift(shift):
        m2 = kgeo.SVM(kernel=other, C=C, shift=shift).fit(X, y)
    assert_same_svm(m1, m2, Xt, C)
    np.testing.assert_array_equal(m1.predict(Xt), m2.predict(Xt))
    assert m1.score(Xt, yt) > 0.85


# ==========================================================================
# 3. Against libsvm on the same Gram matrix
# ==========================================================================

pair_objectives = ck.pair_objectives


def gram_problem(kernel, n_train, n_classes, rng):
    """Training and test data for kernel, its parameters, K(X, X) and K(Xt, X)."""
    X, y = ck.make_count_data(rng, n_train, 10, n_classes, n_duplicates=2)
    Xt, _ = ck.make_count_data(rng, 40, 10, n_classes)
    if kernel in EUCLIDEAN:
        X, Xt = l2_rows(X), l2_rows(Xt)
    params = {"gamma": 2.0} if kernel == "rbf" else {}
    K = kgeo.pairwise_kernels(X, kernel=kernel, **params)
    Kt = kgeo.pairwise_kernels(Xt, X, kernel=kernel, **params)
    return X, y, Xt, params, K, Kt


@pytest.mark.parametrize("n_classes,C", [(2, 0.3), (3, 1.0), (4, 10.0)])
@pytest.mark.parametrize("kernel", ["ngd", "ned", "linear", "rbf"])
def test_matches_libsvm_on_same_gram(kernel, n_classes, C, rng):
    from sklearn.svm import SVC

    X, y, Xt, params, K, Kt = gram_problem(kernel, 60, n_classes, rng)
    ref = SVC(kernel="precomputed", C=C, tol=1e-6, decision_function_shape="ovo").fit(K, y)
    model = kgeo.SVM(kernel=kernel, C=C, tol=1e-6, decision_function_shape="ovo",
                     **params).fit(X, y)
    np.testing.assert_array_equal(model.classes_, ref.classes_)
    ours, theirs = pair_objectives(model, K, y), pair_objectives(ref, K, y)
    # dual_objective_ is the objective of the returned alphas...
    np.testing.assert_allclose(model.dual_objective_, ours, rtol=1e-12)
    # ... and both solvers reach the same optimum.
    np.testing.assert_allclose(model.dual_objective_, theirs, rtol=1e-6)
    np.testing.assert_array_equal(model.predict(Xt), ref.predict(Kt))
    dec, dec_ref = model.decision_function(Xt), ref.decision_function(Kt)
    np.testing.assert_allclose(dec, dec_ref, atol=1e-4)
    ck.check_svm(model, X, y, X_test=Xt)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_matches_libsvm_linear_sparse(n_classes, rng):
    from sklearn.svm import SVC

    X, y = ck.make_count_data(rng, 80, 20, n_classes, density=0.2, sparse=True)
    Xt, _ = ck.make_count_data(rng, 40, 20, n_classes, density=0.2, sparse=True)
    X, Xt = l2_rows(X), l2_rows(Xt)
    ref = SVC(kernel="linear", C=2.0, tol=1e-6).fit(X, y)
    model = kgeo.SVM(kernel="linear", C=2.0, tol=1e-6).fit(X, y)
    K = (X @ X.T).toarray()
    np.testing.assert_allclose(model.dual_objective_, pair_objectives(ref, K, y), rtol=1e-6)
    np.testing.assert_array_equal(model.predict(Xt), ref.predict(Xt))
    np.testing.assert_allclose(model.decision_function(Xt), ref.decision_function(Xt),
                               atol=1e-4)


def test_indefinite_kernels_end_at_libsvms_stationary_point():
    """Sigmoid (and poly with coef0 < 0) make the dual non-concave, so SMO
    ends at a stationary point that depends on its path, and the first pair
    is chosen among ties (every G_k is -1 at the start). kgeo broke ties
    toward the first variable, libsvm toward the last: at the defaults 25 of
    60 such sigmoid fits ended elsewhere than scikit-learn's SVC (decision
    values up to 10.6 apart; here 9.8, and 20 labels of 120). Ties now go to
    the last variable, as libsvm's do: 0 of those 60."""
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC

    X, y = make_classification(n_samples=120, n_features=6, n_informative=4, random_state=1)
    params = dict(kernel="sigmoid", gamma=0.05, coef0=-0.5, C=10.0, tol=1e-6)
    model, ref = kgeo.SVM(**params).fit(X, y), SVC(**params).fit(X, y)
    np.testing.assert_array_equal(model.support_, ref.support_)
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X),
                               atol=1e-4)
    for seed in range(8):
        X, y = make_classification(n_samples=150, n_features=8, n_informative=5,
                                   random_state=seed)
        model, ref = kgeo.SVM(kernel="sigmoid").fit(X, y), SVC(kernel="sigmoid").fit(X, y)
        np.testing.assert_array_equal(model.predict(X), ref.predict(X))
        np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X),
                                   atol=1e-2)


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("sparse", [False, True])
def test_coef_is_the_weight_vector_of_each_pair(n_classes, sparse, rng):
    """coef_[p] is w = sum_i a_i y_i x_i of pair p: rebuilt here from the
    pairs' dual variables (svm_checker), it gives decision_function's "ovo"
    values with intercept_, and it is libsvm's w (unique: the primal is
    strictly convex in w) to the solvers' tolerance."""
    from sklearn.svm import SVC

    X, y = ck.make_count_data(rng, 90, 25, n_classes, density=0.3, sparse=sparse)
    Xt, _ = ck.make_count_data(rng, 40, 25, n_classes, density=0.3, sparse=sparse)
    X, Xt = l2_rows(X), l2_rows(Xt)
    model = kgeo.SVM(kernel="linear", C=3.0, tol=1e-8, decision_function_shape="ovo",
                     class_weight="balanced").fit(X, y)
    coef = model.coef_
    assert sp.issparse(coef) == sparse
    dense = coef.toarray() if sparse else coef
    n_pairs = n_classes * (n_classes - 1) // 2
    assert dense.shape == (n_pairs, 25)
    X_dense = X.toarray() if sparse else X
    for p, pair in enumerate(ck.pair_alphas(model, y)):
        w = (pair["alpha"] * pair["y"]) @ X_dense[pair["idx"]]
        if n_classes == 2:
            w = -w  # scikit-learn's sign: positive for classes_[1]
        np.testing.assert_allclose(dense[p], w, rtol=1e-13, atol=1e-13)
    dec = model.decision_function(Xt)
    Xt_dense = Xt.toarray() if sparse else Xt
    np.testing.assert_allclose(Xt_dense @ dense.T + model.intercept_,
                               dec.reshape(len(Xt_dense), n_pairs), rtol=1e-12, atol=1e-12)
    ref = SVC(kernel="linear", C=3.0, tol=1e-8, class_weight="balanced").fit(X, y)
    ref_coef = ref.coef_.toarray() if sparse else ref.coef_
    np.testing.assert_allclose(dense, ref_coef, atol=1e-5)
    with pytest.raises(ValueError, match="read-only"):
        (coef.data if sparse else coef)[0] = 1.0


def test_sparse_coef_is_a_canonical_csr_matrix(rng):
    """The product of the pairs' coefficients with the support vectors comes
    out of SciPy with each row's columns unsorted; coef_ is sorted, so that
    code reading its indices (or handing them to a library that assumes
    canonical CSR) sees each row's columns in increasing order, once each."""
    X, y = ck.make_count_data(rng, 90, 40, 3, density=0.3, sparse=True)
    coef = kgeo.SVM(kernel="linear").fit(l2_rows(X), y).coef_
    assert coef.nnz > 3 * 10
    for p in range(coef.shape[0]):
        columns = coef.indices[coef.indptr[p]:coef.indptr[p + 1]]
        assert np.all(np.diff(columns) > 0), p


@pytest.mark.parametrize("kernel", ["ned", "ngd"])
def test_a_swamping_shift_is_refused_where_the_probed_rows_coincide(kernel):
    """The kernel's magnitude, against which a shift is judged, was
    estimated from k(x, x) and 128 evenly spaced rows; for a distance
    kernel (0 on the diagonal) whose spaced rows are one document, the
    estimate was 0 and shift=1e20 passed unchecked: every decision value
    came out -1, training accuracy 0.36. The first row against every row
    is part of the estimate now."""
    n = 200
    spaced = np.unique(np.linspace(0, n - 1, 128).astype(np.int64))
    others = np.setdiff1d(np.arange(n), spaced)
    X = np.ones((n, 2))
    X[others] = [5.0, 3.0] if kernel == "ngd" else [5.0, -3.0]
    y = np.zeros(n, int)
    y[others] = 1
    assert kgeo.SVM(kernel=kernel).fit(X, y).score(X, y) == 1.0
    with pytest.raises(ValueError, match=r"shift=1e\+20 swamps the kernel"):
        kgeo.SVM(kernel=kernel, shift=1e20).fit(X, y)


def test_coef_of_a_model_of_many_hashed_columns_uses_only_theirs():
    """coef_ of a sparse linear model is computed over the columns its
    support vectors use: SciPy's product kept a table of all the columns,
    and a model of 2**31 - 1 hashed columns asked for gigabytes. The same
    weights, at the same columns, as a model of only those columns has,
    and the decision values they imply."""
    n = 2**31 - 1
    rows = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 5])
    cols = np.array([0, n - 1, 5, n - 1, 0, 7, 9, n - 2, 5, 7])
    X = sp.csr_matrix((np.array([1.0, 2, 3, 1, 2, 2, 1, 4, 1, 3]), (rows, cols)), shape=(6, n))
    y = [0, 0, 1, 1, 2, 2]
    model = kgeo.SVM(kernel="linear", decision_function_shape="ovo").fit(X, y)
    coef = model.coef_
    assert coef.shape == (3, n) and coef.indices.dtype == np.int32
    used = np.unique(cols)
    assert set(coef.indices.tolist()) <= set(used.tolist())

    def over_used(M):  # (SciPy's own column slicing of 2**31 columns takes seconds)
        return sp.csr_matrix((M.data, np.searchsorted(used, M.indices), M.indptr),
                             shape=(M.shape[0], used.shape[0]))

    compact = kgeo.SVM(kernel="linear").fit(over_used(X), y)
    np.testing.assert_array_equal(over_used(coef).toarray(), compact.coef_.toarray())
    np.testing.assert_allclose((over_used(X) @ over_used(coef).T).toarray() + model.intercept_,
                               model.decision_function(X), rtol=1e-12, atol=1e-12)


def test_coef_with_a_shift_is_the_unshifted_one(rng):
    """Each pair's coefficients sum to zero, so a shift of the linear kernel
    moves neither w nor the decision values X w + b (Proposition 3)."""
    X, y = ck.make_count_data(rng, 80, 20, 3, density=0.3)
    X = l2_rows(X)
    plain = kgeo.SVM(kernel="linear", tol=1e-10).fit(X, y)
    with solver_reads_shift(10.0):
        shifted = kgeo.SVM(kernel="linear", tol=1e-10, shift=10.0,
                           decision_function_shape="ovo").fit(X, y)
    np.testing.assert_allclose(shifted.coef_, plain.coef_, atol=1e-8)
    np.testing.assert_allclose(X @ shifted.coef_.T + shifted.intercept_,
                               shifted.decision_function(X), atol=1e-12)


@pytest.mark.parametrize("kernel", ["ngd", "rbf", "precomputed"])
def test_coef_exists_only_for_the_linear_kernel(kernel, rng):
    X, y = ck.make_count_data(rng, 40, 10, 2)
    data = kgeo.pairwise_kernels(X, kernel="ngd+pi") if kernel == "precomputed" else X
    model = kgeo.SVM(kernel=kernel)
    assert not hasattr(model, "coef_")  # not fitted
    with pytest.raises(kgeo.NotFittedError):
        model.coef_
    model.fit(data, y)
    assert not hasattr(model, "coef_")
    with pytest.raises(AttributeError, match=f"kernel='linear'.*kernel={kernel!r}"):
        model.coef_
    # The kernel the model was fitted with decides, not one set since.
    linear = kgeo.SVM(kernel="linear").fit(X, y)
    linear.set_params(kernel="ngd")
    assert linear.coef_.shape == (1, 10)


def test_matches_libsvm_newsgroups(newsgroups5):
    from sklearn.svm import SVC

    X, y, Xt, _ = newsgroups5
    K = kgeo.pairwise_kernels(X, kernel="ngd")
    Kt = kgeo.pairwise_kernels(Xt, X, kernel="ngd")
    ref = SVC(kernel="precomputed", C=1.0, tol=1e-6).fit(K, y)
    model = kgeo.SVM(kernel="ngd", C=1.0, tol=1e-6).fit(X, y)
    np.testing.assert_allclose(model.dual_objective_, pair_objectives(ref, K, y), rtol=1e-6)
    np.testing.assert_array_equal(model.predict(Xt), ref.predict(Kt))


@pytest.mark.parametrize("n_classes,C", [(2, 0.3), (3, 10.0)])
@pytest.mark.parametrize("kernel", ["ngd", "linear", "rbf", "diffusion"])
def test_float32_cache_solves_the_rounded_gram_exactly(kernel, n_classes, C, rng):
    """cache_dtype="float32" solves the SVM of the Gram rounded to float32:
    the same optimum as libsvm on that matrix, not an approximation of it."""
    from sklearn.svm import SVC

    X, y, Xt, params, K, Kt = gram_problem(kernel, 70, n_classes, rng)
    K32 = K.astype(np.float32).astype(np.float64)
    assert np.any(K32 != K)  # the rounding is there to see
    ref = SVC(kernel="precomputed", C=C, tol=1e-6, decision_function_shape="ovo").fit(K32, y)
    model = kgeo.SVM(kernel=kernel, C=C, tol=1e-6, cache_dtype="float32",
                     decision_function_shape="ovo", **params).fit(X, y)
    assert model.cache_stats_["value_bytes"] == 4
    # The objective of the returned alphas on the rounded matrix ...
    np.testing.assert_allclose(model.dual_objective_, pair_objectives(model, K32, y),
                               rtol=1e-12)
    # ... is libsvm's optimum there.
    np.testing.assert_allclose(model.dual_objective_, pair_objectives(ref, K32, y), rtol=1e-6)
    # Prediction computes float64 kernels, like ref's on Kt.
    np.testing.assert_allclose(model.decision_function(Xt), ref.decision_function(Kt),
                               atol=1e-4)


@pytest.mark.parametrize("n_classes,C", [(2, 0.3), (3, 10.0)])
def test_float32_cache_is_the_float64_solver_on_the_rounded_gram_to_the_bit(n_classes, C,
                                                                             rng):
    """The float32 cache rounds the diagonal too: the SMO reads exactly the
    numbers a float64 fit of the rounded matrix reads, so the models are the
    same bits. A linear Gram's diagonal is not exact in float32 (ngd's is 0
    and rbf's 1); mutation testing found a float64 diagonal, 1e-8 off,
    unseen by the objectives compared above to 1e-6."""
    X, y = ck.make_count_data(rng, 90, 15, n_classes, n_duplicates=3)
    K = X @ X.T * 1.1  # not small integers, which float32 holds exactly
    K32 = K.astype(np.float32).astype(np.float64)
    assert np.any(np.diag(K32) != np.diag(K))
    single = kgeo.SVM(kernel="precomputed", C=C, cache_dtype="float32").fit(K, y)
    double = kgeo.SVM(kernel="precomputed", C=C, cache_dtype="float64").fit(K32, y)
    assert single.cache_stats_["value_bytes"] == 4
    assert_identical(single, double)


@pytest.mark.parametrize("kernel", ["ngd", "linear"])
def test_float32_cache_close_to_float64(kernel, rng):
    """With a tight tol, the float32 model is the float64 one up to the
    rounding of K (both solutions within tol of their optima): half the
    cache memory, decision values within 1e-4 of the largest."""
    X, y = ck.make_count_data(rng, 120, 15, 4, n_duplicates=2)
    Xt, _ = ck.make_count_data(rng, 60, 15, 4)
    if kernel in EUCLIDEAN:
        X, Xt = l2_rows(X), l2_rows(Xt)
    # One thread: the cache's peak then does not depend on the threads' timing.
    double = kgeo.SVM(kernel=kernel, tol=1e-6, n_jobs=1).fit(X, y)
    single = kgeo.SVM(kernel=kernel, tol=1e-6, n_jobs=1, cache_dtype=np.float32).fit(X, y)
    np.testing.assert_allclose(single.dual_objective_, double.dual_objective_, rtol=1e-5)
    dec, dec32 = double.decision_function(Xt), single.decision_function(Xt)
    np.testing.assert_allclose(dec32, dec, atol=1e-4 * np.abs(dec).max())
    # Votes may flip only where the float64 decision is within that of 0.
    ovo, ovo32 = (m.set_params(decision_function_shape="ovo").decision_function(Xt)
                  for m in (double, single))
    flipped = np.sign(ovo) != np.sign(ovo32)
    assert np.all(np.abs(ovo[flipped]) < 1e-4 * np.abs(ovo).max())
    s, d = single.cache_stats_, double.cache_stats_
    assert (s["value_bytes"], d["value_bytes"]) == (4, 8)
    # About as many values held at once (the SMO paths differ a little), in
    # half the bytes ...
    assert s["peak_values"] * 4 < 0.6 * d["peak_values"] * 8
    # ... and twice the values in a budget below the whole Gram.
    small = [kgeo.SVM(kernel=kernel, cache_size=2**-5, cache_dtype=dtype).fit(X, y).cache_stats_
             for dtype in ("float32", "float64")]
    assert small[0]["budget_values"] == 2 * small[1]["budget_values"] < 2 * X.shape[0] ** 2


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_float32_cache_refuses_values_beyond_its_range(n_jobs, rng):
    X, y = ck.make_count_data(rng, 40, 6, 3)
    X = X * 1e20  # linear kernel values near 1e40: float64 holds them, float32 does not
    # (C scaled down with K^-1, so that the float64 problem is a well-posed one)
    params = dict(kernel="linear", C=1e-40, n_jobs=n_jobs)
    with pytest.raises(ValueError, match=r"beyond float32's range.*use cache_dtype='float64'"):
        kgeo.SVM(cache_dtype="float32", **params).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # converges, no warning
        model = kgeo.SVM(**params).fit(X, y)
    assert np.all(np.isfinite(model.dual_coef_))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_float32_cache_refuses_a_single_value_beyond_its_range(n_jobs, rng):
    """One row far from the others: its own kernel value K(x, x) ~ 1e40 is
    the only one beyond float32's range, first in its block, the others ~1e20.
    The overflow check must look at every value of a block, not only its
    last, or the fit would go on with an inf in the cache."""
    X, y = ck.make_count_data(rng, 40, 6, 3)
    X = np.asarray(X, dtype=float)
    first = np.flatnonzero(y == y.min())[0]  # first in its class: first in its block
    X[first] *= 1e20
    params = dict(kernel="linear", C=1e-20, n_jobs=n_jobs)
    with pytest.raises(ValueError, match=r"beyond float32's range.*use cache_dtype='float64'"):
        kgeo.SVM(cache_dtype="float32", **params).fit(X, y)


@pytest.mark.parametrize("kernel", ["linear", "precomputed", "callable"])
def test_float32_cache_refuses_a_kernel_below_its_normal_range(kernel, rng):
    """Kernel values of about 1e-44 are ordinary float64 numbers but float32
    subnormals, with a bit or two: stored so, the fit was another SVM (19 of
    200 predictions changed on a review's example) where overflow was refused."""
    X, y = ck.make_count_data(rng, 40, 6, 3)
    X = np.asarray(X, dtype=float) * 1e-23
    params = dict(C=1e44)  # the float64 problem of K * 1e-46 and C * 1e46 is well posed
    if kernel == "precomputed":
        X = X @ X.T
        params["kernel"] = "precomputed"
    else:
        params["kernel"] = "linear" if kernel == "linear" else (lambda A, B: A @ B.T)
    with pytest.raises(ValueError, match=r"cache_dtype='float32' cannot store the values of "
                                         r"kernel .* largest magnitude is about \d\.\d+e-4\d, "
                                         r"below float32's smallest normal number"):
        kgeo.SVM(cache_dtype="float32", **params).fit(X, y)
    reference = kgeo.SVM(**params).fit(X, y)
    assert np.all(np.isfinite(reference.dual_coef_))
    # The manifold kernels' values do not depend on X's scale: nothing to refuse.
    kgeo.SVM(kernel="ngd", cache_dtype="float32").fit(X, y)


@pytest.mark.parametrize("kernel", ["ngd_exp", "diffusion"])
def test_float32_cache_refuses_a_normalising_factor_below_its_range(kernel, rng):
    """normalize=True multiplies by (4 pi t)^(-n/2): at t = 1 and 76 words,
    every value is about 6e-42, a float32 subnormal. The manifold kernels
    were exempt from the check ("values of order 1"): the float32 fit was
    accepted, its dual coefficients 1.6e-3 off float64's (a review)."""
    X, y = ck.make_count_data(rng, 60, 76, 3)
    params = dict(kernel=kernel, t=1.0, normalize=True, C=1e41)
    with pytest.raises(ValueError, match=r"cache_dtype='float32' cannot store the values of "
                                         rf"kernel '{kernel}'.* about \d\.\d+e-4\d"):
        kgeo.SVM(cache_dtype="float32", **params).fit(X, y)
    kgeo.SVM(kernel=kernel, t=1.0, cache_dtype="float32").fit(X, y)  # unnormalised: <= 1


# ==========================================================================
# 4. Cache, threads, shrinking, input format
# ==========================================================================

def assert_identical(m1, m2):
    for name in ("support_", "n_support_", "dual_coef_", "intercept_", "n_iter_",
                 "dual_objective_"):
        np.testing.assert_array_equal(getattr(m1, name), getattr(m2, name), err_msg=name)


@pytest.mark.parametrize("kernel", ["ngd", "linear"])
def test_rows_already_sorted_by_class_give_the_same_model(kernel, rng):
    """Rows sorted by class are used in place, others sorted (stably) first:
    both routes must hand the solver the same rows in the same order."""
    X, y = ck.make_count_data(rng, 90, 15, 3, n_duplicates=3)
    by_class = np.argsort(y, kind="stable")
    X, y = X[by_class], y[by_class]
    # The same rows with class 0 moved to the end: not sorted, and the
    # stable sort by class restores the order above.
    moved = np.concatenate([np.flatnonzero(y != 0), np.flatnonzero(y == 0)])
    sorted_fit = kgeo.SVM(kernel=kernel).fit(X, y)
    moved_fit = kgeo.SVM(kernel=kernel).fit(X[moved], y[moved])
    np.testing.assert_array_equal(moved[moved_fit.support_], sorted_fit.support_)
    for name in ("n_support_", "dual_coef_", "intercept_", "n_iter_", "dual_objective_",
                 "support_vectors_"):
        np.testing.assert_array_equal(getattr(sorted_fit, name), getattr(moved_fit, name),
                                      err_msg=name)


def _read_only_csr(X):
    X = sp.csr_matrix(X, dtype=np.float64)
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    for a in (X.data, X.indices, X.indptr):
        a.flags.writeable = False
    return X


@pytest.mark.parametrize("kernel", ["ngd", "linear", "rbf"])
def test_fit_reads_a_canonical_csr_in_place_and_leaves_it_alone(kernel, rng):
    """fit uses a canonical CSR input's own arrays (no copy): it must never
    write to them (read-only arrays would raise), keep them in the model, or
    fit anything else than it fits on a copy."""
    X, y = ck.make_count_data(rng, 60, 12, 3)
    X = _read_only_csr(X)
    before = [a.copy() for a in (X.data, X.indices, X.indptr)]
    shared = kgeo._validation.check_matrix(X, copy=False)
    assert all(np.shares_memory(a, b) for a, b in
               ((shared.data, X.data), (shared.indices, X.indices), (shared.indptr, X.indptr)))
    model = kgeo.SVM(kernel=kernel, shift=0.5).fit(X, y)  # shift: also _check_shift
    # The same matrix with int64 indices: check_matrix copies it.
    copied = sp.csr_matrix(X, copy=True)
    copied.indices = copied.indices.astype(np.int64)
    copied.indptr = copied.indptr.astype(np.int64)
    assert not kgeo._validation._is_canonical_csr(copied, "X")
    reference = kgeo.SVM(kernel=kernel, shift=0.5).fit(copied, y)
    for a, b in zip((X.data, X.indices, X.indptr), before):
        np.testing.assert_array_equal(a, b)
    for name in ("support_", "dual_coef_", "intercept_", "n_iter_"):
        np.testing.assert_array_equal(getattr(model, name), getattr(reference, name),
                                      err_msg=name)
    assert not np.shares_memory(model.support_vectors_.data, X.data)


@pytest.mark.parametrize("chunk_values", [1 << 20, 20])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, bool])
def test_dense_input_becomes_scipys_csr_arrays(order, dtype, chunk_values, rng, monkeypatch):
    """A dense matrix is converted in one compiled pass into the arrays
    SciPy's csr_matrix gives (int32 indices): -0.0 is no entry, NaN one (then
    refused), empty rows and columns kept; the input left as it was. In
    slices of rows (of one row here, with 20 values a slice), so that a
    Fortran-ordered input is not copied whole."""
    monkeypatch.setattr(kgeo._validation, "_DENSE_CHUNK_VALUES", chunk_values)
    dense = rng.normal(size=(40, 13)) * (rng.random((40, 13)) < 0.4)
    dense[3] = 0.0
    dense[:, 5] = 0.0
    dense[7, 2] = -0.0
    X = np.asarray(dense.astype(dtype), order=order)
    before = X.copy()
    checked = kgeo._validation.check_matrix(X)
    expected = sp.csr_matrix(X.astype(np.float64))
    assert checked.indices.dtype == np.int32 and checked.indptr.dtype == np.int32
    assert checked.has_canonical_format and checked.shape == X.shape
    for got, want in ((checked.data, expected.data), (checked.indices, expected.indices),
                      (checked.indptr, expected.indptr)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(X, before)
    if dtype in (np.float64, np.float32):
        X = X.copy()
        X[0, 0] = np.nan
        with pytest.raises(ValueError, match="1 NaN or infinity"):
            kgeo._validation.check_matrix(X)


@pytest.mark.parametrize("kernel", ["ngd", "linear", "rbf"])
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_a_non_finite_value_in_any_slice_of_dense_rows_to_predict_is_named(
        kernel, value, monkeypatch):
    """Dense rows to predict are checked a slice at a time (`dense_summary`),
    and every slice's count of non-finite values counts: keeping the last
    slice's alone passed the suite (a mutation review, helper 134), and a NaN
    in an earlier slice reached the kernels, whose message blamed an
    overflow ("scale X down")."""
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(40, 5)).astype(float) + np.eye(40, 5) + np.eye(40, 5, 1)
    y = np.arange(40) % 2
    model = kgeo.SVM(kernel=kernel).fit(X, y)
    monkeypatch.setattr(kgeo._validation, "_DENSE_CHUNK_VALUES", 5)  # a row a slice
    for row in (0, 17, 39):  # the first, a middle and the last slice
        Z = X.copy()
        Z[row, 1] = value
        for method in (model.predict, model.decision_function):
            with pytest.raises(ValueError, match=r"^X contains 1 NaN or infinity value\(s\); "
                                                 r"every entry must be finite"):
                method(Z)
    W = np.where(np.eye(40, 5) > 0, np.nan, -X)
    n_bad, n_negative, row_nnz = kgeo._validation.dense_summary(W)
    assert (n_bad, n_negative) == (5, int(np.sum(W < 0)))
    np.testing.assert_array_equal(row_nnz, np.count_nonzero(W, axis=1))


@pytest.mark.parametrize("change", ["unsorted", "duplicate", "stale flag", "explicit zero",
                                    "int64", "float32", "csc", "strided", "strided indptr"])
def test_check_matrix_copies_what_it_must_change(change, rng):
    """copy=False shares arrays only with an input needing no change; any
    other input is copied, then made canonical, and left as it was."""
    X = sp.csr_matrix(rng.poisson(0.5, size=(8, 6)).astype(np.float64))
    X = sp.csr_matrix(X + sp.csr_matrix((np.ones(8), (np.arange(8), np.arange(8) % 6))))
    expected = X.toarray()
    if change == "unsorted":  # the first two entries of a row swapped
        p = X.indptr[np.flatnonzero(np.diff(X.indptr) >= 2)[0]]
        X.indices[p:p + 2] = X.indices[p:p + 2][::-1].copy()
        X.data[p:p + 2] = X.data[p:p + 2][::-1].copy()
        X.has_sorted_indices = False
    elif change == "duplicate":  # row 0's first entry stored twice
        expected[0, X.indices[0]] += X.data[0]
        X = sp.csr_matrix((np.r_[X.data[:1], X.data], np.r_[X.indices[:1], X.indices],
                           np.r_[0, X.indptr[1:] + 1]), shape=X.shape)
    elif change == "stale flag":
        # SciPy caches has_canonical_format on the matrix; indices edited in
        # place afterwards (row 0's second entry made a copy of its first)
        # leave it saying True. Trusted, fit took the square roots of the two
        # halves of a count apart.
        assert X.has_canonical_format
        p = X.indptr[np.flatnonzero(np.diff(X.indptr) >= 2)[0]]
        X.indices[p + 1] = X.indices[p]
        expected = X.toarray()
        assert X.has_canonical_format  # stale
    elif change == "explicit zero":
        X.data[0] = 0.0
        expected = X.toarray()
    elif change == "int64":
        X.indices = X.indices.astype(np.int64)
        X.indptr = X.indptr.astype(np.int64)
    elif change == "float32":
        X = X.astype(np.float32)
    elif change == "csc":
        X = X.tocsc()
    elif change == "strided":
        X = sp.csr_matrix((np.repeat(X.data, 2)[::2], X.indices, X.indptr), shape=X.shape)
    else:  # the compiled loops read indptr as a contiguous array too
        X.indptr = np.repeat(X.indptr, 2)[::2]
        assert not X.indptr.flags.c_contiguous
    arrays = [np.array(a, copy=True) for a in (X.data, X.indices, X.indptr)]
    assert not kgeo._validation._is_canonical_csr(X, "X")
    checked = kgeo._validation.check_matrix(X, copy=False)
    assert not np.shares_memory(checked.data, X.data)
    assert checked.dtype == np.float64 and checked.indices.dtype == np.int32
    assert checked.has_canonical_format and not np.any(checked.data == 0)
    np.testing.assert_array_equal(checked.toarray(), expected)
    for a, b in zip((X.data, X.indices, X.indptr), arrays):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("kernel", ["ngd", "rbf", "linear"])
def test_cache_size_does_not_change_solution(kernel, n_classes, rng):
    X, y = ck.make_count_data(rng, 120, 15, n_classes, n_duplicates=3)
    largest_pair = np.sort(np.bincount(y))[-2:].sum()
    with pytest.warns(UserWarning, match=r"cache_size=1e-06 MB is below the minimum of "
                                         r"two kernel rows.*using the minimum"):
        tiny = kgeo.SVM(kernel=kernel, cache_size=1e-6, n_jobs=1).fit(X, y)
    # Clamped to two rows (each of both classes' blocks) of the largest pair.
    assert tiny.cache_stats_["budget_values"] == 2 * largest_pair
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # enough room: no warning
        small = kgeo.SVM(kernel=kernel, cache_size=0.01, n_jobs=1).fit(X, y)
        whole = kgeo.SVM(kernel=kernel, cache_size=200, n_jobs=1).fit(X, y)
    # Bit-identical: a kernel block is the same whenever it is computed.
    assert_identical(tiny, whole)
    assert_identical(small, whole)
    stats = [m.cache_stats_ for m in (tiny, small, whole)]
    # One path: the same blocks are requested, more of them recomputed.
    assert stats[0]["blocks_requested"] == stats[2]["blocks_requested"]
    assert stats[0]["blocks_computed"] > stats[1]["blocks_computed"] >= stats[2]["blocks_computed"]
    # A whole-matrix cache computes each (row, class) block at most once.
    assert stats[2]["blocks_computed"] <= X.shape[0] * n_classes


@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
def test_threads_do_not_change_solution(cache_dtype, rng):
    X, y = ck.make_count_data(rng, 100, 12, 5, n_duplicates=3)
    one = kgeo.SVM(kernel="ngd", n_jobs=1, cache_dtype=cache_dtype).fit(X, y)
    for n_jobs in (2, 4):
        assert_identical(one, kgeo.SVM(kernel="ngd", n_jobs=n_jobs,
                                       cache_dtype=cache_dtype).fit(X, y))
    # Threads sharing a minimal cache (pinned blocks may overfill it).
    with pytest.warns(UserWarning, match="cache_size"):
        assert_identical(one, kgeo.SVM(kernel="ngd", n_jobs=2, cache_size=1e-6,
                                       cache_dtype=cache_dtype).fit(X, y))


def _spy_on_caches(monkeypatch):
    """The row caches of the fits that follow, in a list."""
    caches = []
    solve = kgeo.SVM._solve_pairs

    def spy(self, cache, pairs, box):
        caches.append(cache)
        return solve(self, cache, pairs, box)

    monkeypatch.setattr(kgeo.SVM, "_solve_pairs", spy)
    return caches


def _helper_ends(cache, seconds=5.0):
    """Whether the cache's helper thread has left help_with_rows within
    ``seconds`` (it is not joined: it returns within a millisecond or so of
    stop_helping, later on a loaded machine)."""
    deadline = time.monotonic() + seconds
    while cache.helper_running and time.monotonic() < deadline:
        time.sleep(0.001)
    return not cache.helper_running


@pytest.mark.parametrize("cache_size", [1, 3])
def test_an_eviction_moves_the_pinned_blocks_it_meets_to_the_front(cache_size, rng, monkeypatch):
    """The rows a pair holds stay pinned, and drift to the back of the LRU
    order: every eviction walked past all of them (300,024 pinned blocks met
    for 2,996 blocks computed at 1 MB, 76,936 for 891 at 3 MB). One met goes
    to the front, as in use. The model is the same with any cache."""
    X, y = ck.make_count_data(rng, 1200, 300, 2, density=0.3)
    caches = _spy_on_caches(monkeypatch)
    whole = kgeo.SVM(kernel="ngd", n_jobs=1).fit(X, y)
    assert caches[-1].pinned_walked == 0
    small = kgeo.SVM(kernel="ngd", n_jobs=1, cache_size=cache_size).fit(X, y)
    computed = small.cache_stats_["blocks_computed"]
    assert computed > small.cache_stats_["blocks_distinct"]  # it evicted
    assert 0 < caches[-1].pinned_walked <= 2 * computed
    ck.assert_identical_models(whole, small)


@pytest.mark.parametrize("density", [0.3, 0.03], ids=["dense_columns", "posting_lists"])
@pytest.mark.parametrize("kernel, cache_dtype", [
    ("ngd", "float64"), ("ngd", "float32"), ("linear", "float64"), ("rbf", "float64"),
    ("precomputed", "float64")])
def test_a_two_class_fits_helper_thread_changes_no_bit(kernel, cache_dtype, density, rng,
                                                       monkeypatch, request):
    """With one class pair, a second thread computes halves of the blocks
    its solver asks for (compute_shared; conftest shares blocks of any
    length): the model is the one of a single thread, bit for bit, in the
    normal race (whoever computes or throws away which half) and where the
    solver leaves a half of every block to the helper, which then has stored
    them. (Left to the race, CI once ran ten such fits with the helper
    asleep through every block.) Words in at least an eighth of a class's
    rows are its dense columns, the others posting lists, whose halves
    start and end within a word's list: at density 0.3 every word was a
    dense column, and a mutation review found two wrong half bounds of the
    lists unnoticed."""
    from kgeo import _solver

    if not _solver.ROW_HELPER:
        pytest.skip("this build runs no helper thread (no GCC atomics)")
    X, y = ck.make_count_data(rng, 1200, 300, 2, density=density, n_duplicates=4)
    params = dict(kernel=kernel, cache_dtype=cache_dtype, C=10.0)
    if kernel == "precomputed":
        X = kgeo.pairwise_kernels(X, kernel="ngd", shift=np.pi)
    caches = _spy_on_caches(monkeypatch)
    one = kgeo.SVM(n_jobs=1, **params).fit(X, y)
    assert caches[-1].parts_helped == 0
    # Not judged (a helper slow on these small blocks would be left out).
    window = _solver._set_share_window(2**62)
    request.addfinalizer(lambda: _solver._set_share_window(window))
    wait = _solver._leave_halves_to_helper(0.0)
    request.addfinalizer(lambda: _solver._leave_halves_to_helper(wait))
    for leave_halves in (0.0, 10.0):
        _solver._leave_halves_to_helper(leave_halves)
        _solver._set_row_share_min(2)  # (and forgets earlier fits' judgements)
        two = kgeo.SVM(n_jobs=2, **params).fit(X, y)
        assert_identical(one, two)
        np.testing.assert_array_equal(one.decision_function(X), two.decision_function(X))
    # (Both halves of a block, where the solver was preempted before its claim.)
    helped, shared = caches[-1].parts_helped, caches[-1].blocks_shared
    # A matrix's blocks are gathers, not worth handing over.
    if kernel == "precomputed":
        assert helped == shared == 0
    else:
        assert 0 < shared <= helped <= 2 * shared
    assert all(_helper_ends(cache) for cache in caches)


def test_a_helper_that_never_keeps_up_leaves_the_blocks_to_the_solver(rng, monkeypatch):
    """A helper the system does not schedule (here: one never started)
    stores no half: after SHARE_WINDOW (64) shared blocks the solver
    computes its blocks alone. What is left of that run when a fit ends is
    taken by the next fit, which counts it down block by block and gives
    back the rest (a review found a carry that was only read: after one
    busy stretch, no later fit of the process shared a block). The models
    are the same bits."""
    from kgeo import _solver, _svm

    if not _solver.ROW_HELPER:
        pytest.skip("this build runs no helper thread (no GCC atomics)")

    def unscheduled(function, args):
        pass  # the thread never runs

    X, y = ck.make_count_data(rng, 600, 50, 2, density=0.3)
    one = kgeo.SVM(kernel="ngd", n_jobs=1, C=10.0).fit(X, y)
    assert _solver._next_fit_alone() == 0
    caches = _spy_on_caches(monkeypatch)
    monkeypatch.setattr(_svm._thread, "start_new_thread", unscheduled)
    assert_identical(one, kgeo.SVM(kernel="ngd", n_jobs=2, C=10.0).fit(X, y))
    blocks = caches[-1].stats()["blocks_computed"]
    assert caches[-1].parts_helped == 0
    assert 64 <= caches[-1].blocks_shared < blocks - 200
    monkeypatch.setattr(_svm._thread, "start_new_thread", _thread_module.start_new_thread)
    # A long carry: the next fit shares none of its blocks, and gives back
    # the carry less its blocks (all of them may be shared: conftest).
    _solver._next_fit_alone(10**9)
    assert_identical(one, kgeo.SVM(kernel="ngd", n_jobs=2, C=10.0).fit(X, y))
    assert caches[-1].blocks_shared == 0
    assert _solver._next_fit_alone() == 10**9 - caches[-1].stats()["blocks_computed"]
    # One thread neither takes nor gives it back.
    kgeo.SVM(kernel="ngd", n_jobs=1, C=10.0).fit(X, y)
    assert _solver._next_fit_alone() == 10**9 - caches[-1].stats()["blocks_computed"]
    # No thread to be had: the fit runs on one thread, as it did before
    # there was a helper.

    def refused(function, args):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(_svm._thread, "start_new_thread", refused)
    assert_identical(one, kgeo.SVM(kernel="ngd", n_jobs=2, C=10.0).fit(X, y))
    assert caches[-1].blocks_shared == 0


def test_a_carry_is_taken_by_one_fit_not_by_a_fit_that_overlaps_it(rng, monkeypatch, request):
    """The blocks an earlier fit left to compute alone go to one fit: the
    one that starts its helper first takes them (the carry drops to 0), and
    a two-class fit that runs meanwhile in another thread shares its blocks
    from its first. Read and not taken, the carry held every fit overlapping
    the first to the same run alone (a mutation review, helper 133: the
    suite's fits never overlapped). The models are the same bits; what is
    left when both end is the first fit's carry less its blocks."""
    from kgeo import _solver, _svm

    if not _solver.ROW_HELPER:
        pytest.skip("this build runs no helper thread (no GCC atomics)")
    X, y = ck.make_count_data(rng, 300, 50, 2, density=0.3)
    one = kgeo.SVM(kernel="ngd", n_jobs=1, C=10.0).fit(X, y)
    # Not judged: a helper slow on these small blocks would start a run alone.
    window = _solver._set_share_window(2**62)
    request.addfinalizer(lambda: _solver._set_share_window(window))
    caches = _spy_on_caches(monkeypatch)
    solve_pairs = _svm.solve_pairs
    inner = []

    def solve_pairs_with_a_fit_inside(cache, *args):
        # The outer fit has started its helper, and taken the carry; the
        # inner fit, marked first, passes through here as a plain fit.
        if not inner:
            inner.append(None)
            inner[0] = kgeo.SVM(kernel="ngd", n_jobs=2, C=10.0).fit(X, y)
        return solve_pairs(cache, *args)

    monkeypatch.setattr(_svm, "solve_pairs", solve_pairs_with_a_fit_inside)
    request.addfinalizer(lambda: _solver._next_fit_alone(0))
    _solver._next_fit_alone(10**9)
    outer = kgeo.SVM(kernel="ngd", n_jobs=2, C=10.0).fit(X, y)
    assert len(caches) == 2 and len(inner) == 1
    outer_cache, inner_cache = caches
    assert_identical(one, outer)
    assert_identical(one, inner[0])
    assert outer_cache.blocks_shared == 0  # it took the carry
    blocks = inner_cache.stats()["blocks_computed"]
    assert blocks > 0 and inner_cache.blocks_shared == blocks  # and left none
    assert _solver._next_fit_alone() == 10**9 - outer_cache.stats()["blocks_computed"]


def test_a_two_class_fits_helper_thread_ends_when_the_fit_fails(rng, monkeypatch):
    X, y = ck.make_count_data(rng, 40, 6, 2)
    X = X * 1e20  # linear kernel values near 1e40: beyond float32
    caches = _spy_on_caches(monkeypatch)
    with pytest.raises(ValueError, match=r"beyond float32's range"):
        kgeo.SVM(kernel="linear", C=1e-40, n_jobs=2, cache_dtype="float32").fit(X, y)
    assert _helper_ends(caches[-1])


def set_scans(copy):
    """Make the SMO run the scans ``copy`` ("avx512", "avx2" or "portable");
    return whether this CPU has them."""
    from kgeo import _solver

    has_avx2 = _solver._use_avx2_scans(copy != "portable")
    has_avx512 = _solver._use_avx512_scans(copy == "avx512")
    return {"avx512": has_avx512, "avx2": has_avx2, "portable": True}[copy]


def fit_with_scans(copy, X, y, **params):
    """kgeo.SVM(**params).fit(X, y) with the scans ``copy``, or None where this
    CPU lacks them; the default scans are restored after."""
    try:
        return kgeo.SVM(**params).fit(X, y) if set_scans(copy) else None
    finally:
        set_scans("avx512")


@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
@pytest.mark.parametrize("shrinking", [False, True])
@pytest.mark.parametrize("kernel", ["ngd", "rbf", "linear", "diffusion"])
def test_vector_and_portable_scans_give_the_same_bits(kernel, shrinking, cache_dtype, rng):
    """The SMO scans exist in AVX-512 (the update and the j objectives), AVX2
    and portable C; the model must not depend on which one this CPU runs.
    Class sizes that are not multiples of 8 exercise the vector loops' tails;
    with shrinking, the shrunk phases run the portable copy between vector
    phases."""
    X, y = ck.make_count_data(rng, 157, 15, 3, n_duplicates=3)
    assert np.any(np.bincount(y) % 8 >= 4)  # tails longer than AVX2's
    params = dict(kernel=kernel, C=30.0, shrinking=shrinking, n_jobs=1,
                  cache_dtype=cache_dtype)
    fits = {copy: fit_with_scans(copy, X, y, **params)
            for copy in ("avx512", "avx2", "portable")}
    if fits["avx2"] is None:
        pytest.skip("this CPU has no AVX2: only the portable scans run here")
    for copy in ("avx512", "avx2"):
        if fits[copy] is not None:
            assert_identical(fits[copy], fits["portable"])
    if shrinking:
        assert fits["avx2"].n_iter_.max() > np.bincount(y).max()  # long enough to shrink
    if cache_dtype == "float64":
        ck.check_svm(fits["avx2"], X, y)


def test_the_avx512_scans_are_used_where_the_cpu_has_them():
    """The default: AVX-512 where the CPU has it (F and DQ, per /proc/cpuinfo
    on Linux) and runs it at full clock (AMD's, or Intel's with VBMI2),
    never without AVX2."""
    from kgeo import _solver

    assert set_scans("avx512") == _solver._use_avx512_scans(True)
    try:
        set_scans("portable")
        assert not _solver._use_avx512_scans(True)  # not without AVX2
        # Turned off, they stay off where AVX2 runs: otherwise the "avx2"
        # fits of the same-bits tests would run AVX-512 and compare it
        # with itself, leaving the AVX2 update and j scan untested.
        _solver._use_avx2_scans(True)
        assert not _solver._use_avx512_scans(False)
    finally:
        set_scans("avx512")
    try:
        with open("/proc/cpuinfo") as info:
            fields = dict(line.split(":", 1) for line in info.read().split("\n\n")[0]
                          .splitlines() if ":" in line)
    except OSError:
        fields = {}
    fields = {key.strip(): value.strip() for key, value in fields.items()}
    if "flags" not in fields or "vendor_id" not in fields:
        pytest.skip("no /proc/cpuinfo flags and vendor to compare with")
    flags = set(fields["flags"].split())
    expected = ({"avx2", "avx512f", "avx512dq"} <= flags
                and (fields["vendor_id"] == "AuthenticAMD" or "avx512_vbmi2" in flags))
    assert _solver._use_avx512_scans(True) == expected


@pytest.mark.parametrize("kernel,C,shrinking", [("ngd", 50.0, False), ("linear", 0.2, True)])
def test_block_extrema_find_the_variables_a_plain_search_finds(kernel, C, shrinking, rng):
    """The searches for i and j skip the runs of 64 variables whose extremum
    (left by the scans) is on the wrong side of the threshold; they must
    pick the same variables as a search through every one. Classes of 64
    to ~200 rows put class t's runs after several of class s's, partial
    runs at each class's end, and duplicate rows make exact ties."""
    from kgeo import _solver

    # The switch takes: without it both settings would search from the
    # block extrema, and the comparison below would test nothing.
    before = _solver._use_scan_blocks(False)
    assert _solver._use_scan_blocks(before) is False
    X, y = ck.make_count_data(rng, 470, 25, 3, n_duplicates=40, separation=0.5)
    y[:64] = 3  # a class of exactly one run
    params = dict(kernel=kernel, C=C, shrinking=shrinking, n_jobs=1)
    fits = {}
    for blocks in (True, False):
        for copy in ("avx512", "avx2", "portable"):
            before = _solver._use_scan_blocks(blocks)
            try:
                fits[blocks, copy] = fit_with_scans(copy, X, y, **params)
            finally:
                _solver._use_scan_blocks(before)
    for key, fit in fits.items():
        if fit is not None:
            assert_identical(fit, fits[False, "portable"])
    assert np.bincount(y).min() == 64
    assert fits[True, "portable"].n_iter_.min() > 200  # many selections per pair
    if shrinking:  # shrunk phases too: most variables end at C
        assert fits[True, "portable"].n_iter_.max() > 2000
    ck.check_svm(fits[True, "portable"], X, y)


@pytest.mark.parametrize("verbose", [0, 1])
def test_threads_solve_every_pair_once(verbose, rng, monkeypatch):
    """The workers take the pairs from a shared counter: each pair is solved
    exactly once, its solution lands in its own place (the same model as one
    thread's), and with verbose=1 the progress bar counts all of them."""
    import threading
    from kgeo import _svm

    X, y = ck.make_count_data(rng, 160, 15, 6, n_duplicates=3)
    one = kgeo.SVM(kernel="ngd", n_jobs=1).fit(X, y)
    calls, threads = [], set()
    solve_pairs = _svm.solve_pairs

    def counting(cache, solutions, first, last, *args):
        calls.extend(map(tuple, solutions.pairs[first:last].tolist()))
        threads.add(threading.get_ident())
        return solve_pairs(cache, solutions, first, last, *args)

    bars = []
    progress = _svm._progress

    def recording(*args):
        bars.append(progress(*args))
        return bars[-1]

    monkeypatch.setattr(_svm, "solve_pairs", counting)
    monkeypatch.setattr(_svm, "_progress", recording)
    monkeypatch.setattr(_svm, "progress_bars_shown", lambda: True)  # captured stderr
    two = kgeo.SVM(kernel="ngd", n_jobs=2, verbose=verbose).fit(X, y)
    assert sorted(calls) == [(s, t) for s in range(6) for t in range(s + 1, 6)]
    assert threading.get_ident() not in threads
    assert_identical(one, two)
    if verbose:  # tqdm is a test dependency
        assert [bar.n for bar in bars] == [15]
    else:
        assert bars == []


@pytest.mark.parametrize("n_samples, in_workers", [(160, False), (600, True)])
def test_small_work_stays_in_the_calling_thread(n_samples, in_workers, rng, monkeypatch):
    """By default work below 2**18 values runs on one thread: with n_jobs=2
    a kernel matrix of fewer than 512 samples is solved in the calling thread
    (workers cost more than its pairs: 3.2 against 1.4 ms for 60 samples
    while another process kept both cores busy), a larger one in workers;
    the same model either way."""
    import threading

    from kgeo import _svm
    from kgeo._kernels import _PARALLEL_MIN_VALUES, _set_parallel_min_work, parallel_threads

    _set_parallel_min_work(_PARALLEL_MIN_VALUES)  # the default (conftest lowers it)
    assert _PARALLEL_MIN_VALUES == 2**18
    assert [parallel_threads(2, 2**18 - 1), parallel_threads(2, 2**18),
            parallel_threads(0, 2**40)] == [1, 2, 1]
    X, y = ck.make_count_data(rng, n_samples, 15, 4, n_duplicates=3)
    one = kgeo.SVM(kernel="ngd", n_jobs=1).fit(X, y)
    threads = set()
    solve_pairs = _svm.solve_pairs

    def recording(cache, *args):
        threads.add(threading.get_ident())
        return solve_pairs(cache, *args)

    monkeypatch.setattr(_svm, "solve_pairs", recording)
    two = kgeo.SVM(kernel="ngd", n_jobs=2).fit(X, y)
    assert (threading.get_ident() not in threads) == in_workers
    assert_identical(one, two)


@pytest.mark.parametrize("n_pairs, n_threads", [(1, 1), (3, 2), (28, 2), (4950, 1), (4950, 2)])
def test_pair_runs_cover_every_pair_once_within_their_bounds(n_pairs, n_threads, rng):
    """Runs of consecutive pairs, each at most _RUN_VARIABLES dual variables
    (or one pair) and at most a quarter of a thread's share of the pairs."""
    from kgeo._svm import _RUN_VARIABLES, _pair_runs

    sizes = rng.integers(2, 400, n_pairs)
    sizes[rng.random(n_pairs) < 0.1] = 3000  # pairs beyond a run's variables
    alpha_start = np.r_[0, np.cumsum(sizes)]
    runs = _pair_runs(alpha_start, n_threads)
    assert [first for first, _ in runs] == [0] + [last for _, last in runs[:-1]]
    assert runs[-1][1] == n_pairs
    most = max(1, -(-n_pairs // (4 * n_threads)))
    for first, last in runs:
        assert 1 <= last - first <= most
        assert last - first == 1 or alpha_start[last] - alpha_start[first] <= _RUN_VARIABLES
        # A run stops short only where the next pair would pass a bound.
        if last < n_pairs and last - first < most:
            assert alpha_start[last + 1] - alpha_start[first] > _RUN_VARIABLES


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_pairs_solved_in_runs_or_one_by_one_give_the_same_model(n_jobs, monkeypatch):
    """Many small classes: runs of many pairs per call of the solver give
    the model of one pair per call, bit for bit, with sample weights too.
    (That the sweep of a hashed index, class t's rows against class s's
    table, gives the bits of the tables' sweep: in test_kernels.py, a fit
    with each.)"""
    from kgeo import _svm
    from kgeo._synthetic import make_topic_corpus

    X, y = make_topic_corpus(n_documents=600, n_features=3000, n_classes=120,
                             words_per_document=40, random_state=4)
    weight = np.random.default_rng(4).uniform(0.5, 2.0, X.shape[0])
    calls = []
    solve_pairs = _svm.solve_pairs

    def counting(cache, solutions, first, last, *args):
        calls.append(last - first)
        return solve_pairs(cache, solutions, first, last, *args)

    monkeypatch.setattr(_svm, "solve_pairs", counting)
    runs = kgeo.SVM(kernel="ngd", n_jobs=n_jobs).fit(X, y, sample_weight=weight)
    assert max(calls) > 50 and sum(calls) == 120 * 119 // 2
    calls.clear()
    monkeypatch.setattr(_svm, "_RUN_VARIABLES", 1)
    one_by_one = kgeo.SVM(kernel="ngd", n_jobs=n_jobs).fit(X, y, sample_weight=weight)
    assert max(calls) == 1
    assert_identical(runs, one_by_one)


@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
@pytest.mark.parametrize("kernel", ["precomputed", "callable"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_matrix_kernels_sweep_small_pairs_to_the_same_model(kernel, cache_dtype, n_jobs):
    """A kernel read from a matrix sweeps its small pairs (both classes'
    rows read as given) to the model of rows read on demand, bit for bit,
    on a matrix symmetric only to rounding, with sample weights."""
    from kgeo._synthetic import make_topic_corpus

    X, y = make_topic_corpus(n_documents=400, n_features=2000, n_classes=70,
                             words_per_document=30, random_state=8)
    K = kgeo.pairwise_kernels(X, kernel="ngd")
    K += np.random.default_rng(8).uniform(-1e-9, 1e-9, K.shape)  # not symmetric
    weight = np.random.default_rng(9).uniform(0.5, 2.0, X.shape[0])
    if kernel == "precomputed":
        data, params = K, {"kernel": "precomputed"}
    else:
        data, params = np.arange(X.shape[0], dtype=float)[:, None], {
            "kernel": lambda A, B: K[np.ix_(A[:, 0].astype(int), B[:, 0].astype(int))]}
    fits = [fit_keeping_cache(data, y, sweep=sweep, cache_dtype=cache_dtype, n_jobs=n_jobs,
                              sample_weight=weight, **params) for sweep in (True, False)]
    (swept, cache), (on_demand, _) = fits
    assert cache.rows_held_ahead > 0 and cache.held == 0
    assert cache.stats()["values_transposed"] == 0  # read as given, never transposed
    assert_identical(swept, on_demand)


@pytest.mark.parametrize("classes, cache_size", [("small", 200), ("small", 0.01),
                                                 ("mixed", 200), ("mixed", 0.05)])
def test_small_pairs_held_ahead_change_no_model_and_no_statistic(classes, cache_size):
    """A small pair's rows pinned under one lock operation before its SMO
    starts (hold_small_pair) give the same model and the same cache
    statistics (values used, blocks computed and requested, ...) as each row
    pinned when SMO asks for it, with a roomy cache and ones that evict. (Had
    the rows held ahead moved in the LRU order, the mixed classes' blocks
    computed would differ at 0.05 MB; had some been held where the pair
    computes a block, the small ones' at 0.01 MB: a review.)"""
    from kgeo import _solver
    from kgeo._synthetic import make_topic_corpus

    if classes == "small":  # 80 classes of 5
        X, y = make_topic_corpus(n_documents=400, n_features=3000, n_classes=80,
                                 words_per_document=40, random_state=6)
    else:  # 33 classes of 1 to 60: pairs on both sides of HOLD_AHEAD_MAX
        sizes = [60, 45, 30] + [1, 2, 3, 5, 8, 13, 20, 25, 33, 40] * 3
        X, _ = make_topic_corpus(sum(sizes), 2000, len(sizes), words_per_document=30,
                                 random_state=5)
        y = np.repeat(np.arange(len(sizes)), sizes)
        np.random.default_rng(5).shuffle(y)

    def fit():
        model, cache = fit_keeping_cache(X, y, kernel="ngd", n_jobs=1, cache_size=cache_size)
        stats = {k: v for k, v in model.cache_stats_.items() if k != "compute_seconds"}
        return model, stats, cache.rows_held_ahead, cache.held

    ahead, ahead_stats, n_ahead, held = fit()
    assert n_ahead > 100 and held == 0
    before = _solver._hold_ahead_max(0)
    try:
        asked, asked_stats, n_asked, _ = fit()
    finally:
        _solver._hold_ahead_max(before)
    assert n_asked == 0
    assert ahead_stats == asked_stats
    assert_identical(ahead, asked)


def test_a_pair_of_exactly_hold_ahead_max_variables_is_held_ahead():
    """Pairs of at most HOLD_AHEAD_MAX variables are held ahead, the bound
    included: classes of 5 give pairs of 10, held with the bound at 10 and
    not at 9. No pair of the test above has exactly HOLD_AHEAD_MAX
    variables, and a mutant holding only pairs below it passed (mutation
    review 181)."""
    from kgeo import _solver
    from kgeo._synthetic import make_topic_corpus

    X, y = make_topic_corpus(n_documents=150, n_features=1000, n_classes=30,
                             words_per_document=30, random_state=6)
    assert np.all(np.bincount(y) == 5)
    held_ahead = {}
    for bound in (10, 9):
        before = _solver._hold_ahead_max(bound)
        try:
            _, cache = fit_keeping_cache(X, y, kernel="ngd", n_jobs=1)
        finally:
            _solver._hold_ahead_max(before)
        held_ahead[bound] = cache.rows_held_ahead
        assert cache.held == 0
    assert held_ahead[9] == 0 and held_ahead[10] > 100


def test_solve_pairs_refuses_pairs_that_do_not_fit_its_arrays(rng):
    """solve_pairs checks its range, its classes and the sizes of every array
    of the solutions before the first pair (it writes through pointers)."""
    from kgeo._kernels import PostingIndex, get_kernel
    from kgeo._pairwise import prepare_rows
    from kgeo._solver import KernelRowCache, PairSolutions, solve_pairs

    X, y = ck.make_count_data(rng, 30, 5, 3)
    order = np.argsort(y, kind="stable")
    class_start = np.r_[0, np.cumsum(np.bincount(y))]
    assert class_start.tolist() == [0, 10, 20, 30]
    kernel = get_kernel("ngd", X.shape[1], 0.0)
    rows = prepare_rows(kernel, sp.csr_matrix(X[order]))
    cache = KernelRowCache(kernel, PostingIndex(rows, class_start), 2**20)
    pairs = np.array([[0, 1], [0, 2], [1, 2]])
    box = np.ones(30)

    def refused(solutions, match, first=0, last=3, box=box):
        untouched = solutions.alpha.copy()
        with pytest.raises(ValueError, match=match):
            solve_pairs(cache, solutions, first, last, box, 1e-3, True, -1)
        np.testing.assert_array_equal(solutions.alpha, untouched)

    refused(PairSolutions(class_start, pairs), r"pairs 1 \.\. 4 of 3", 1, 4)
    refused(PairSolutions(class_start, pairs), r"box has 29 bounds for 30 rows", box=box[:29])
    for wrong in ([[0, 1], [0, 3], [1, 2]], [[0, 1], [1, 1], [1, 2]]):
        with pytest.raises(ValueError, match=rf"pair 1 is \({wrong[1][0]}, {wrong[1][1]}\)"):
            PairSolutions(class_start, wrong)
        solutions = PairSolutions(class_start, pairs)
        solutions.pairs = np.array(wrong)  # replaced after the checks
        refused(solutions, rf"pair 1: classes \({wrong[1][0]}, {wrong[1][1]}\) of 3")
    refused(PairSolutions(np.array([0, 5, 20, 30]), pairs),  # 20, 15, 25 variables
            r"pair 1 has 15 dual variables for 20 rows")
    for name, wrong in [("alpha", np.zeros(4)), ("intercept", np.zeros(1)),
                        ("n_iter", np.zeros(2, dtype=np.int64)),
                        ("objective", np.zeros(4)), ("status", np.zeros(1, dtype=np.int32)),
                        ("alpha_start", np.array([0, 20, 40]))]:
        solutions = PairSolutions(class_start, pairs)
        setattr(solutions, name, wrong)
        refused(solutions, r"solutions' arrays do not fit their 3 pairs")
    solutions = PairSolutions(class_start, pairs)
    solve_pairs(cache, solutions, 0, 3, box, 1e-3, True, -1)
    assert len(solutions) == 3 and np.all(solutions.n_iter > 0)
    with pytest.raises(IndexError, match="pair 3 of 3"):
        solutions[3]


def test_a_failing_pair_stops_the_other_threads_and_raises_its_error(rng, monkeypatch):
    """An error in one worker (here from the third run of pairs) is the error
    fit raises; the other worker stops through the cache instead of solving
    the remaining pairs, and no thread outlives the fit."""
    import threading
    from kgeo import _svm

    X, y = ck.make_count_data(rng, 200, 15, 8, n_duplicates=3)  # 28 pairs
    started = []
    solve_pairs = _svm.solve_pairs

    def failing(cache, solutions, first, last, *args):
        started.append((first, last))
        if len(started) == 3:
            raise MemoryError("no memory for run 3")
        return solve_pairs(cache, solutions, first, last, *args)

    monkeypatch.setattr(_svm, "solve_pairs", failing)
    before = threading.active_count()
    with pytest.raises(MemoryError, match="no memory for run 3"):
        kgeo.SVM(kernel="ngd", n_jobs=2).fit(X, y)
    # Runs of 4 pairs (a quarter of a thread's share): 7 of them, of which
    # the failure, and at most one run per worker after it.
    assert all(last - first == 4 for first, last in started)
    assert len(started) <= 5
    assert threading.active_count() == before
    monkeypatch.setattr(_svm, "solve_pairs", solve_pairs)
    ck.check_svm(kgeo.SVM(kernel="ngd", n_jobs=2).fit(X, y), X, y)  # the next fit is sound


def test_a_failing_pair_interrupts_the_pair_another_thread_is_solving(monkeypatch):
    """A worker's error stops the pairs other workers are in the middle of
    (through the cache's stop flag, read by SMO every 64 steps), not only the
    pairs not started yet: a long pair still running when another fails
    ends with the interrupt instead of running to its end."""
    import threading
    from kgeo import _svm

    # Classes 0 and 1: six points the linear kernel cannot separate, which at
    # C = 1e6 SMO solves in millions of steps (here cut at max_iter, 10**6,
    # about 0.5 s). Class 2 is far from both.
    X = np.array([[3., 0., 1.], [2., 1., 0.], [0., 2., 3.], [1., 3., 4.], [1., 1., 1.],
                  [0., 4., 1.], [30., 30., 30.], [31., 30., 29.]])
    y = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    long_pair_started = threading.Event()
    ended = {}
    solve_pairs = _svm.solve_pairs

    def solving(cache, solutions, first, last, *args):
        assert last == first + 1  # 3 pairs, 2 threads: runs of one pair
        s, t = solutions.pairs[first]
        if (s, t) == (0, 2):
            assert long_pair_started.wait(10)
            raise MemoryError("no memory for pair (0, 2)")
        if (s, t) == (0, 1):
            long_pair_started.set()
        try:
            solve_pairs(cache, solutions, first, last, *args)
        except BaseException as error:
            ended[s, t] = type(error).__name__
            raise
        ended[s, t] = "solved"

    monkeypatch.setattr(_svm, "solve_pairs", solving)
    with pytest.raises(MemoryError, match=r"no memory for pair \(0, 2\)"):
        kgeo.SVM(kernel="linear", C=1e6, max_iter=10**6, n_jobs=2).fit(X, y)
    assert ended == {(0, 1): "KeyboardInterrupt"}


def test_openmp_loops_work_after_their_threads_are_released(rng, monkeypatch):
    """A multi-class fit ends the set-up's idle OpenMP workers before its
    pair threads start (``_release_openmp_threads``); the parallel loops
    after that (the support vectors' copy, prediction, the next fit) start
    new ones and give the same bits."""
    from kgeo import _solver, _svm
    from kgeo._pairwise import pairwise_kernels

    X, y = ck.make_count_data(rng, 300, 30, 4, n_duplicates=3)
    before = pairwise_kernels(X, kernel="ngd", n_jobs=2)
    released = []

    def releasing():
        released.append(_solver._release_openmp_threads())
        return released[-1]

    monkeypatch.setattr(_svm, "_release_openmp_threads", releasing)
    model = kgeo.SVM(kernel="ngd", n_jobs=2).fit(X, y)
    assert len(released) == 1
    assert isinstance(_solver._release_openmp_threads(), bool)
    np.testing.assert_array_equal(pairwise_kernels(X, kernel="ngd", n_jobs=2), before)
    again = kgeo.SVM(kernel="ngd", n_jobs=2).fit(X, y)
    assert_identical(model, again)
    np.testing.assert_array_equal(model.decision_function(X), again.decision_function(X))


@pytest.mark.parametrize("n_threads", [1, 2])
def test_take_rows_matches_scipy_row_indexing(n_threads, rng):
    """The support vectors' copy: X[rows] as SciPy computes it, with empty
    rows, repeated rows and rows out of order."""
    from kgeo._kernels import take_rows

    dense = rng.random((60, 40)) * (rng.random((60, 40)) < 0.2)
    dense[5] = 0.0  # an empty row
    X = sp.csr_matrix(dense)
    X.indices = X.indices.astype(np.int32)
    for rows in (np.arange(60), np.array([5, 3, 3, 59, 0, 5]), np.array([], dtype=np.int64),
                 rng.permutation(60)[:25]):
        indptr = np.empty(rows.shape[0] + 1, dtype=np.int64)
        data, indices = take_rows(X.data, X.indices, X.indptr.astype(np.int64),
                                  rows.astype(np.int64), indptr, n_threads=n_threads)
        expected = X[rows]
        np.testing.assert_array_equal(indptr, expected.indptr)
        np.testing.assert_array_equal(indices, expected.indices)
        np.testing.assert_array_equal(data, expected.data)
        assert indices.dtype == np.int32 and data.dtype == np.float64


def test_one_vs_one_coefficients_match_a_numpy_reference(rng):
    """libsvm's dual_coef_ layout from the pairs' duals, against the loops it
    replaced: pair (s, t) writes class s's y alpha in row t - 1 and class
    t's in row s, in each support vector's column; no negative zeros."""
    from kgeo._solver import PairSolutions, one_vs_one_coefficients

    counts = np.array([7, 1, 12, 5])
    class_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    pairs = [(s, t) for s in range(4) for t in range(s + 1, 4)]
    solutions = PairSolutions(class_start, pairs)
    alphas = [solutions[p][0] for p in range(len(pairs))]  # views of solutions.alpha
    for alpha in alphas:
        alpha[:] = rng.random(alpha.shape[0])
        alpha[rng.random(alpha.shape[0]) < 0.5] = 0.0
    alphas[0][:] = 0.0  # a pair without support vectors
    is_sv, dual_coef = one_vs_one_coefficients(solutions, class_start)

    n = class_start[-1]
    ref_sv = np.zeros(n, dtype=bool)
    for (s, t), alpha in zip(pairs, alphas):
        n_s = counts[s]
        ref_sv[class_start[s]:class_start[s + 1]] |= alpha[:n_s] > 0
        ref_sv[class_start[t]:class_start[t + 1]] |= alpha[n_s:] > 0
    column = np.cumsum(ref_sv) - 1
    ref = np.zeros((3, ref_sv.sum()))
    for (s, t), alpha in zip(pairs, alphas):
        n_s = counts[s]
        for k, a in enumerate(alpha):
            g = class_start[s] + k if k < n_s else class_start[t] + k - n_s
            if ref_sv[g]:
                ref[t - 1 if k < n_s else s, column[g]] = a if k < n_s else -a
    np.testing.assert_array_equal(is_sv, ref_sv)
    assert is_sv.dtype == bool
    np.testing.assert_array_equal(dual_coef, ref)
    assert not np.any(np.signbit(dual_coef) & (dual_coef == 0))


def test_a_worker_that_cannot_start_stops_the_fit_cleanly(rng, monkeypatch):
    """When the system refuses a second thread, fit raises that error after
    stopping and joining the worker already running; the next fit works."""
    import threading
    from kgeo import _svm

    X, y = ck.make_count_data(rng, 200, 15, 8, n_duplicates=3)
    started = []

    class Refusing(threading.Thread):
        def start(self):
            if started:
                raise RuntimeError("can't start new thread")
            started.append(self)
            super().start()

    monkeypatch.setattr(_svm.threading, "Thread", Refusing)
    before = threading.active_count()
    with pytest.raises(RuntimeError, match="can't start new thread"):
        kgeo.SVM(kernel="ngd", n_jobs=2).fit(X, y)
    assert len(started) == 1 and not started[0].is_alive()
    assert threading.active_count() == before
    monkeypatch.undo()
    ck.check_svm(kgeo.SVM(kernel="ngd", n_jobs=2).fit(X, y), X, y)


def fit_keeping_cache(X, y, sweep=True, sample_weight=None, **params):
    """Fit kgeo.SVM; return the model and the row cache its fit used.

    ``sweep=False`` computes every block on demand (no ``sweep_cross``)."""
    caches = []

    class Recording(kgeo.SVM):
        def _solve_pairs(self, cache, pairs, box):
            cache.sweep_enabled = sweep
            caches.append(cache)
            return super()._solve_pairs(cache, pairs, box)

    model = Recording(**params).fit(X, y, sample_weight=sample_weight)
    return model, caches[0]


@pytest.mark.parametrize("slab", [True, False], ids=["slab", "malloc-per-block"])
@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
def test_swept_blocks_share_a_slab_that_lives_until_its_last_block_leaves(cache_dtype, slab, rng):
    """sweep_cross stores a pair's cross blocks in one allocation (or, for
    pairs beyond SWEEP_SLAB_MAX_BYTES, one per block). With a budget that
    sweeps every pair but must evict swept blocks (which are then
    recomputed), the model is the one a large cache gives, bit for bit,
    no slab outlives the fit's pairs, and a retired pair's slab is reused
    by the next sweep rather than freed. (Fits like this one ran under
    AddressSanitizer while this was written: no invalid access.)"""
    from kgeo import _solver

    X, y = ck.make_count_data(rng, 600, 30, 20, n_duplicates=3)  # classes of 29-31
    limit = _solver._sweep_slab_max_bytes(1 << 30 if slab else 0)
    try:
        large, large_cache = fit_keeping_cache(X, y, kernel="ngd", n_jobs=1,
                                               cache_dtype=cache_dtype)
        value_bytes = large_cache.stats()["value_bytes"]
        # Sweeping a pair needs its 2 n_s n_t values within 1/8 of the
        # budget: just that, below the fit's peak (the classes' own blocks
        # add up).
        largest = np.bincount(y).max()
        budget_mb = (16 * largest ** 2 + 64) * value_bytes / 2**20
        big = large_cache.stats()
        assert large_cache.live_slabs() == 0
        # A retired pair's slab serves the next sweep: one thread allocates
        # one, and keeps it as its spare.
        assert large_cache.slab_counts() == ((1, 1, 1) if slab else (0, 0, 1))
        for n_jobs in (1, 2):
            small, small_cache = fit_keeping_cache(X, y, kernel="ngd", n_jobs=n_jobs,
                                                   cache_dtype=cache_dtype,
                                                   cache_size=budget_mb)
            tight = small_cache.stats()
            # One thread retires the pairs in a fixed order, so sweeps the
            # pairs the large cache's one thread swept; two may skip one
            # whose decision came while the share of used values was below 1/2.
            assert (tight["values_transposed"] == big["values_transposed"] if n_jobs == 1
                    else tight["values_transposed"] > 0)
            assert tight["values_computed"] > big["values_computed"]  # evicted, recomputed
            assert_identical(small, large)
            assert small_cache.live_slabs() == 0
            # Never more slabs than threads sweeping at once, all kept.
            allocated, spare, max_spare = small_cache.slab_counts()
            assert max_spare == n_jobs
            assert (1 <= allocated <= n_jobs and spare == allocated) if slab else allocated == 0
    finally:
        _solver._sweep_slab_max_bytes(limit)


@pytest.mark.parametrize("slab", [True, False], ids=["slab", "malloc-per-block"])
@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
def test_buffers_of_blocks_that_leave_serve_the_next_blocks_within_the_budget(
        cache_dtype, n_jobs, slab, rng):
    """A block evicted for a miss, or dead when its pair retires, leaves its
    buffer to the next blocks that fit it (of 8/9 to all of its capacity;
    classes of 1 to 75 rows here) instead of freeing it, so that two
    threads' malloc arenas do not each grow to their own peak share of the
    cache; so do the blocks of a pair swept outside a slab. The budget
    counts the buffers' capacities, of the stored blocks, the spare
    buffers and the blocks being computed (or swept): with a tenth of the
    Gram, the cache's memory never exceeds it, nothing stays stored or
    reserved, and the model is the one a large cache gives, bit for bit."""
    from kgeo import _solver

    X, y = ck.make_count_data(rng, 300, 30, 6, n_duplicates=3)
    y[np.flatnonzero(y == 2)[:25]] = 1
    y[0] = 6  # a class of one row: its blocks are shorter than a spare list's link
    large = kgeo.SVM(kernel="ngd", cache_dtype=cache_dtype).fit(X, y)
    value_bytes = 4 if cache_dtype == "float32" else 8
    budget_mb = 300 ** 2 / 10 * value_bytes / 2**20
    for sweep in (True, False):
        limit = _solver._sweep_slab_max_bytes(1 << 30 if slab else 0)
        try:
            model, cache = fit_keeping_cache(X, y, sweep=sweep, kernel="ngd", n_jobs=n_jobs,
                                             cache_dtype=cache_dtype, cache_size=budget_mb)
        finally:
            _solver._sweep_slab_max_bytes(limit)
        stats = cache.stats()
        assert (stats["values_transposed"] > 0) == sweep
        # Blocks were evicted, and computed again.
        assert (stats["values_computed"] + stats["values_transposed"] - stats["values_raced"]
                > stats["values_distinct"])
        assert stats["blocks_reused"] > 0
        assert stats["peak_values"] <= stats["peak_values_allocated"] <= stats["budget_values"]
        assert cache.reserved == 0
        assert cache.used == 0
        assert cache.stored == 0
        # Every pair retired: the spares are what is left, freed with the cache.
        assert 0 < cache.spare_values <= stats["budget_values"]
        assert cache.n_spare_blocks > 0
        assert_identical(model, large)


@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
def test_recompute_used_covers_exactly_the_blocks_solvers_asked_for(cache_dtype, rng):
    """The benchmarks' floor recomputes each block a solver asked for, once:
    not the recomputations of evicted blocks, not the blocks swept ahead."""
    X, y = ck.make_count_data(rng, 130, 15, 4, n_duplicates=3)
    with pytest.warns(UserWarning, match="cache_size"):
        # evicts and recomputes
        model, cache = fit_keeping_cache(X, y, kernel="ngd", cache_size=1e-6,
                                         cache_dtype=cache_dtype)
    before = cache.stats()
    assert before["values_computed"] > before["values_used"]
    assert before["values_used"] == before["values_distinct"]  # nothing swept: no room
    for n_threads in (1, 2):
        seconds, n_values = cache.recompute_used(n_threads)
        assert seconds > 0.0
        assert n_values == before["values_used"]
    assert cache.stats() == before
    assert_identical(model, kgeo.SVM(kernel="ngd", cache_dtype=cache_dtype).fit(X, y))

    model, cache = fit_keeping_cache(X, y, kernel="ngd", cache_dtype=cache_dtype)
    stats = cache.stats()
    assert stats["values_transposed"] > 0  # swept ahead: stored, not all used
    assert stats["values_used"] < stats["values_distinct"]
    assert cache.recompute_used(2)[1] == stats["values_used"]
    used = cache.used_blocks()
    lengths = np.bincount(np.asarray(y).astype(int))
    assert used.shape == (130, 4)
    assert (used * lengths[None, :]).sum() == stats["values_used"]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_solved_pairs_free_exactly_the_blocks_no_later_pair_uses(n_jobs, rng):
    """A block dies with the last pair that can ask for it: with a cache as
    large as the whole Gram nothing is ever computed twice (a block freed
    too early would be), and once every pair is solved nothing is left."""
    X, y = ck.make_count_data(rng, 150, 15, 5, n_duplicates=3)
    for sweep in (False, True):
        model, cache = fit_keeping_cache(X, y, sweep=sweep, kernel="ngd", cache_size=200,
                                         n_jobs=n_jobs)
        stats = cache.stats()
        # Two threads may compute one block at once (two pairs of its class
        # missing it together); beyond those races, nothing twice, whether
        # computed or filled by transposing.
        assert (stats["values_computed"] + stats["values_transposed"] - stats["values_raced"]
                == stats["values_distinct"])
        assert (stats["values_transposed"] > 0) == sweep
        if n_jobs == 1:
            assert stats["values_raced"] == 0
        # Every row a pair held was let go, so its blocks could die with it.
        assert cache.used == 0
        assert cache.held == 0
        # Blocks died along the way: the cache never held all of them at once.
        assert 0 < stats["peak_values"] < stats["values_distinct"]
        assert_identical(model, kgeo.SVM(kernel="ngd", n_jobs=1).fit(X, y))


def test_blocks_two_threads_compute_at_once_are_counted_as_raced(rng):
    """Two pairs of one class that miss its own block together both compute
    it; the later copy is dropped and its values counted as raced, so that,
    with a budget of the whole Gram, computed - raced is exactly the
    distinct values. Races depend on timing: fits are repeated until one
    races (8 classes of 50 rows; about one fit in five races on two cores),
    and the test is skipped if none does (found by mutation testing: not
    counting raced values passed the suite, whose two-thread fits seldom
    race; this test catches it only when a race happens)."""
    X, y = ck.make_count_data(rng, 400, 300, 8, n_duplicates=3)
    serial = kgeo.SVM(kernel="ngd", n_jobs=1).fit(X, y)
    for _ in range(60):
        model, cache = fit_keeping_cache(X, y, kernel="ngd", n_jobs=2)
        stats = cache.stats()
        assert (stats["values_computed"] + stats["values_transposed"] - stats["values_raced"]
                == stats["values_distinct"])
        assert_identical(model, serial)
        if stats["values_raced"] > 0:
            return
    pytest.skip("no two threads computed a block at once in 60 fits")


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_without_retiring_the_pairs_solve_again_from_the_cache_alone(n_jobs, rng):
    """With ``retire_enabled`` off and a budget of the whole Gram, a fit keeps
    every block it made (and sweeps none ahead): the same model, and a
    second solve of all pairs from that cache computes no kernel value and
    gives the same solutions (the benchmarks time the SMO alone this way)."""
    X, y = ck.make_count_data(rng, 150, 15, 5, n_duplicates=3)
    kept = {}

    class Keeping(kgeo.SVM):
        def _solve_pairs(self, cache, pairs, box):
            cache.retire_enabled = False
            kept.update(cache=cache, pairs=pairs, box=box)
            kept["solutions"] = super()._solve_pairs(cache, pairs, box)
            return kept["solutions"]

    model = Keeping(kernel="ngd", cache_size=200, n_jobs=n_jobs).fit(X, y)
    assert_identical(model, kgeo.SVM(kernel="ngd", n_jobs=1).fit(X, y))
    cache = kept["cache"]
    first = cache.stats()
    assert cache.used == first["values_distinct"] == first["peak_values"]  # nothing freed
    assert first["values_transposed"] == 0  # no slab: it could outlive the budget
    assert cache.held == 0
    solutions = kept["solutions"]
    # kgeo.SVM's own _solve_pairs: Keeping's would record the second solve.
    again = kgeo.SVM._solve_pairs(model, cache, kept["pairs"], kept["box"])
    assert again is not solutions
    second = cache.stats()
    for name in ("values_computed", "values_transposed", "values_distinct", "values_used"):
        assert second[name] == first[name], name
    assert second["blocks_requested"] == 2 * first["blocks_requested"]
    for solution, repeated in zip(solutions, again):
        np.testing.assert_array_equal(repeated[0], solution[0])
        assert repeated[1:] == solution[1:]


@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
def test_a_budget_of_exactly_the_values_a_fit_stores_holds_them_all(cache_dtype, rng):
    """A block that fills the budget to the last value is stored without
    evicting another: without retiring, a one-thread fit whose budget is
    exactly the values it stores (known from a fit with the whole Gram's
    budget) keeps every block, computes none twice, and peaks at the budget
    (found by mutation testing: evicting while used + n >= budget passed
    the suite)."""
    X, y = ck.make_count_data(rng, 150, 15, 5, n_duplicates=3)
    kept = {}

    class Keeping(kgeo.SVM):
        def _solve_pairs(self, cache, pairs, box):
            cache.retire_enabled = False
            kept["cache"] = cache
            return super()._solve_pairs(cache, pairs, box)

    whole = Keeping(kernel="ngd", cache_dtype=cache_dtype, n_jobs=1).fit(X, y)
    stored = kept["cache"].stats()["values_distinct"]
    assert stored == kept["cache"].used  # nothing freed: the whole Gram fits
    value_bytes = kept["cache"].stats()["value_bytes"]
    exact = Keeping(kernel="ngd", cache_dtype=cache_dtype, n_jobs=1,
                    cache_size=stored * value_bytes / 2**20).fit(X, y)
    stats = kept["cache"].stats()
    assert stats["budget_values"] == stats["peak_values"] == stored
    assert stats["values_computed"] == stats["values_distinct"] == stored
    assert_identical(exact, whole)


@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
def test_one_thread_keeps_the_cache_within_its_budget(cache_dtype, rng):
    """Solvers hold rows for a whole pair within half the budget, and the
    other half keeps the two rows of an SMO step: from four rows of the
    largest pair up, one thread's cache never holds more values than its
    budget, the LRU order evicting the rest (found by mutation testing:
    making room for half a block, or letting held rows take the whole
    budget, passed the suite)."""
    X, y = ck.make_count_data(rng, 200, 15, 5, n_duplicates=3)
    row = np.sort(np.bincount(y))[-2:].sum()
    value_bytes = 4 if cache_dtype == "float32" else 8
    reference = kgeo.SVM(kernel="ngd", cache_dtype=cache_dtype).fit(X, y)
    for rows in (4, 7, 40):
        model, cache = fit_keeping_cache(X, y, kernel="ngd", cache_dtype=cache_dtype, n_jobs=1,
                                         cache_size=rows * row * value_bytes / 2**20)
        stats = cache.stats()
        assert stats["budget_values"] == rows * row
        assert stats["peak_values"] <= stats["budget_values"]
        assert stats["values_computed"] > stats["values_distinct"]  # it did evict
        assert_identical(model, reference)


@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
@pytest.mark.parametrize("kernel", ["ngd", "linear", "ned", "rbf"])
def test_sweeping_a_pairs_cross_blocks_changes_no_bit(kernel, cache_dtype, rng):
    """sweep_cross fills the blocks of class t's rows by transposing those of
    class s's rows: K(x_h, x_g) and K(x_g, x_h) are the same bits, so the
    model, and every block a solver asks for, are those of the on-demand
    route, with fewer kernel evaluations. Classes of 66-77 rows store their
    frequent words as dense columns; their sizes leave partial tiles of the
    eight-row scatter and of its 4 x 4 AVX2 transposes, which must match the
    portable copy; the non-simplex kernels get signed data."""
    from kgeo import _solver
    from kgeo._kernels import PostingIndex, get_kernel
    from kgeo._pairwise import prepare_rows

    X, y = ck.make_count_data(rng, 320, 20, 4, n_duplicates=3)
    # Classes of 77, 74, 70 and 66 rows: not multiples of 4 or 8.
    sizes = [77, 74, 70, 66]
    keep = np.ones(y.shape[0], dtype=bool)
    for c, size in enumerate(sizes):
        keep[np.flatnonzero(y == c)[size:]] = False
    X, y = X[keep], y[keep]
    assert np.array_equal(np.bincount(y), sizes)
    if kernel in ("linear", "ned", "rbf"):
        X = X - 1.5 * (rng.random(X.shape) < 0.3) * (X > 0)
    order = np.argsort(y, kind="stable")
    rows = prepare_rows(get_kernel(kernel, 20, 0.0), sp.csr_matrix(X[order]))
    assert PostingIndex(rows, np.r_[0, np.cumsum(np.bincount(y))]).n_dense > 0
    fits = {sweep: fit_keeping_cache(X, y, sweep=sweep, kernel=kernel, n_jobs=2,
                                     cache_dtype=cache_dtype)
            for sweep in (False, True)}
    (on_demand, cache_off), (swept, cache_on) = fits[False], fits[True]
    assert_identical(swept, on_demand)
    _solver._use_avx2_scans(False)
    try:
        portable, cache_portable = fit_keeping_cache(X, y, kernel=kernel, n_jobs=2,
                                                     cache_dtype=cache_dtype)
    finally:
        _solver._use_avx2_scans(True)
    assert cache_portable.stats()["values_transposed"] > 0
    assert_identical(portable, on_demand)
    off, on = cache_off.stats(), cache_on.stats()
    assert off["values_transposed"] == 0 < on["values_transposed"]
    assert on["values_computed"] < off["values_computed"]
    assert on["values_used"] == off["values_used"]
    assert np.array_equal(cache_on.used_blocks(), cache_off.used_blocks())


def sweep_rule_problem(case):
    """The data of ``test_the_pairs_swept_are_those_the_documented_rule_picks``."""
    if case == "unequal-classes":
        X, y = ck.make_count_data(np.random.default_rng(5), 180, 12, 4, separation=8.0)
        keep = np.ones(y.shape[0], dtype=bool)
        # The largest pair within the budget's share is (1, 2).
        for c, size in enumerate([25, 10, 40, 6]):
            keep[np.flatnonzero(y == c)[size:]] = False
        return X[keep], y[keep], {}
    # Classes 0 and 1 are two copies of one row each: their pair converges
    # in one SMO step, which asks for the cross blocks of one row of each,
    # exactly half of the pair's cross values.
    rest, _ = ck.make_count_data(np.random.default_rng(0), 30, 6, 2)
    X = np.vstack([[[5, 1, 0, 0, 1, 1]] * 2, [[0, 1, 5, 1, 0, 1]] * 2, rest])
    y = np.r_[0, 0, 1, 1, np.full(30, 2)]
    if case == "exactly-half":
        return X, y, {}
    # Pairs (0, 2) and (1, 2) have 2 * 2 * 30 = 120 cross values: a budget of
    # 8 * 120 values puts them exactly at the budget's share, one of 8 * 119
    # just beyond it.
    budget = 8 * 120 if case == "budget-boundary" else 8 * 119
    return X, y, {"cache_size": budget * 8 / 2**20}


@pytest.mark.parametrize("case", ["unequal-classes", "exactly-half", "budget-boundary",
                                  "budget-beyond"])
def test_the_pairs_swept_are_those_the_documented_rule_picks(case):
    """sweep_cross sweeps a pair when pairs were retired before it, the
    solvers of those asked for at least half of their cross values
    (2 sum_used >= sum 2 n_s n_t, counted per cross block (g, c) as n_c),
    and 2 n_s n_t is at most 1/8 of the budget. In one thread the pairs run
    in libsvm's order, and the blocks solvers ask for are those of the
    on-demand route: from its used_blocks(), a simulation of the rule gives
    the values transposed and computed. One thread's sweeps share one slab
    allocation (of the largest sweepable pair's size), the spare each
    retired pair leaves. The cases: unequal classes (the two sides of a
    pair count n_t and n_s apart, a block leaving the cache takes its own
    length off, the largest pair's classes are adjacent), a share of
    exactly one half, pairs exactly at the budget's share and (their slab)
    at the slab's size limit, and just beyond the budget's share (found by
    mutation testing: the first pair swept with nothing retired, the sides'
    counts swapped, n_s n_t for 2 n_s n_t, > for >= or < for <= in the
    bounds, the slab size taken from non-adjacent pairs only, a block's
    length taken from its row's class, blocks_distinct reported as
    blocks_computed, the slab limit's setter returning the new limit, all
    passed the suite)."""
    from kgeo import _solver

    X, y, params = sweep_rule_problem(case)
    counts = np.bincount(y)
    start = np.r_[0, np.cumsum(counts)]
    # The budget's boundary case is at the slab's too: a slab of 120 values.
    limit = 120 * 8 if case.startswith("budget") else 1 << 30
    before = _solver._sweep_slab_max_bytes(1 << 29)
    try:
        assert _solver._sweep_slab_max_bytes(limit) == 1 << 29  # the previous limit
        _, off = fit_keeping_cache(X, y, sweep=False, kernel="ngd", n_jobs=1,
                                   shrinking=False, **params)
        model, on = fit_keeping_cache(X, y, sweep=True, kernel="ngd", n_jobs=1,
                                      shrinking=False, **params)
    finally:
        assert _solver._sweep_slab_max_bytes(before) == limit
    used = off.used_blocks()
    assert np.array_equal(on.used_blocks(), used)
    assert on.used == off.used == 0  # every block left with its last pair
    budget = on.stats()["budget_values"]
    swept, total, cross_used = [], 0, 0
    for s in range(len(counts)):
        for t in range(s + 1, len(counts)):
            n_s, n_t = counts[s], counts[t]
            if total > 0 and 2 * cross_used >= total and 2 * n_s * n_t <= budget // 8:
                swept.append((s, t))
            total += 2 * n_s * n_t
            cross_used += (used[start[s]:start[s + 1], t].sum() * n_t
                           + used[start[t]:start[t + 1], s].sum() * n_s)
    if case == "exactly-half":
        # One cross block of each side, of 2 values each: 4 of the pair's 8.
        assert used[0:2, 1].sum() == used[2:4, 0].sum() == 1
        assert swept[0] == (0, 2)
    if case == "budget-boundary":
        assert budget == 8 * 120 and swept == [(0, 2), (1, 2)]
    if case == "budget-beyond":
        assert budget == 8 * 119 and swept == []
    stats = on.stats()
    assert stats["values_transposed"] == sum(counts[s] * counts[t] for s, t in swept)
    assert on.slab_counts() == ((1, 1, 1) if swept else (0, 0, 1))
    if "cache_size" not in params:  # the whole Gram: nothing computed twice
        in_swept = np.zeros_like(used)
        for s, t in swept:
            in_swept[start[s]:start[s + 1], t] = in_swept[start[t]:start[t + 1], s] = True
        on_demand = ((used & ~in_swept) * counts[None, :]).sum()
        assert stats["values_computed"] == stats["values_transposed"] + on_demand
        # Blocks: a swept pair computes class s's side; every block stored
        # once is distinct.
        n_swept_s = sum(counts[s] for s, _ in swept)
        assert stats["blocks_computed"] == n_swept_s + (used & ~in_swept).sum()
        assert stats["blocks_distinct"] == (used | in_swept).sum()
    assert_identical(model, kgeo.SVM(kernel="ngd", shrinking=False).fit(X, y))


def test_auto_shrinking_starts_on_long_bound_heavy_pairs(rng):
    """shrinking="auto" leaves pairs that converge within 2 l iterations
    alone (the same path as False) and shrinks the long ones (a different
    path), each to the same solution within tol."""
    n = 300
    X = np.abs(rng.normal(size=(n, 8)))
    y = (X[:, 0] + 0.8 * rng.normal(size=n) > 0.9).astype(int)  # noisy: most alphas at C
    fits = {mode: kgeo.SVM(kernel="linear", C=10.0, shrinking=mode).fit(X, y)
            for mode in (True, False, "auto")}
    assert fits[False].n_iter_[0] > 2 * n  # a long pair
    assert fits["auto"].n_iter_[0] != fits[False].n_iter_[0]  # it did shrink
    for mode in (True, "auto"):
        rel = abs(fits[mode].dual_objective_[0] - fits[False].dual_objective_[0])
        assert rel <= fits[mode].tol * abs(fits[False].dual_objective_[0])
        ck.check_svm(fits[mode], X, y)
    short_X, short_y = ck.make_count_data(rng, 300, 200, 3)
    short = {mode: kgeo.SVM(kernel="ngd", shrinking=mode).fit(short_X, short_y)
             for mode in (False, "auto")}
    counts = np.bincount(short_y)
    sizes = [counts[s] + counts[t] for s in range(3) for t in range(s + 1, 3)]
    assert np.all(short[False].n_iter_ <= 2 * np.array(sizes))
    assert_identical(short["auto"], short[False])


@pytest.mark.parametrize("kernel", ["ngd", "rbf"])
def test_auto_shrinking_leaves_pairs_ending_between_l_and_2l_alone(kernel):
    """The bound is 2 l iterations, not l: pairs that need between l and
    2 l take the same path as with shrinking=False (found by mutation
    testing: the test above has pairs ending within l or far beyond 2 l
    only, which a first shrinking pass after l iterations treats alike)."""
    X, y = ck.make_count_data(np.random.default_rng(2), 240, 20, 3, separation=1.0)
    fits = {mode: kgeo.SVM(kernel=kernel, C=1.0, shrinking=mode).fit(X, y)
            for mode in (False, "auto")}
    counts = np.bincount(y)
    sizes = np.array([counts[s] + counts[t] for s in range(3) for t in range(s + 1, 3)])
    n_iter = fits[False].n_iter_
    assert np.all(n_iter < 2 * sizes)
    assert np.any(n_iter > sizes)  # a pair a pass after l iterations would shrink
    assert_identical(fits["auto"], fits[False])


@pytest.mark.parametrize("seed", [0, 1, 11])
def test_auto_shrinking_leaves_a_pair_of_2l_minus_1_iterations_alone(seed):
    """The first pass comes once 2 l iterations are done (the counter starts
    at 2 l + 1): a pair converging after 2 l - 1 takes shrinking=False's
    path, bit for bit. A mutation review found a counter of 2 l unnoticed
    (the test above has no pair this close to the bound)."""
    X, y = ck.make_count_data(np.random.default_rng(seed), 40, 8, 2, separation=0.5)
    off = kgeo.SVM(kernel="ngd", shrinking=False).fit(X, y)
    auto = kgeo.SVM(kernel="ngd", shrinking="auto").fit(X, y)
    assert off.n_iter_[0] == 2 * 40 - 1
    assert_identical(auto, off)


@pytest.mark.parametrize("max_iter", [700, 1000, 1500, 2500])
def test_a_pair_stopped_by_max_iter_while_shrunk_reports_its_alphas_objective(max_iter):
    """A pair that reaches max_iter with variables shrunk has them made
    active, their gradient reconstructed, before b* and the dual objective
    are taken: a mutation review skipped that step unnoticed (the objective
    1714.87 where the model's alphas give 1655.38), max_iter's tests
    checking only the warning and n_iter_."""
    rng = np.random.default_rng(0)
    X = np.abs(rng.normal(size=(300, 8)))
    y = (X[:, 0] + 0.8 * rng.normal(size=300) > 0.9).astype(int)
    with pytest.warns(kgeo.ConvergenceWarning, match=f"max_iter={max_iter}"):
        model = kgeo.SVM(kernel="linear", C=10.0, shrinking=True, max_iter=max_iter).fit(X, y)
    assert model.fit_status_ == 1 and model.n_iter_[0] == max_iter
    # Every check but the KKT gap, which max_iter stopped short of: b* and
    # the dual objective against the alphas, and the decision function.
    ck.check_svm(model, X, y, tol=1e6)


@pytest.mark.parametrize("kernel", ["ngd", "rbf", "linear", "diffusion"])
def test_shrinking_same_solution(kernel, rng):
    X, y = ck.make_count_data(rng, 120, 15, 3, n_duplicates=3)
    on = kgeo.SVM(kernel=kernel, shrinking=True).fit(X, y)
    off = kgeo.SVM(kernel=kernel, shrinking=False).fit(X, y)
    np.testing.assert_array_equal(on.support_, off.support_)
    rel = np.abs(on.dual_objective_ - off.dual_objective_) / np.abs(off.dual_objective_)
    assert np.all(rel <= on.tol)
    ck.check_svm(on, X, y)
    ck.check_svm(off, X, y)


@pytest.mark.parametrize("kernel", ["ngd", "rbf", "linear"])
def test_dense_and_sparse_input_same_model(kernel, rng):
    X, y = ck.make_count_data(rng, 60, 10, 3, n_duplicates=2)
    Xt, _ = ck.make_count_data(rng, 20, 10, 3)
    dense = kgeo.SVM(kernel=kernel).fit(X, y)
    # Unsorted indices and explicit zeros in the CSR matrix, and COO input.
    csr = sp.csr_matrix(X)
    order = np.concatenate([np.arange(a, b)[::-1] for a, b in zip(csr.indptr[:-1], csr.indptr[1:])])
    unsorted = sp.csr_matrix((csr.data[order], csr.indices[order], csr.indptr), shape=X.shape)
    unsorted.has_sorted_indices = False
    with_zeros = sp.csr_matrix(X)
    with_zeros.data[::7] = 0.0  # stored zeros, not removed
    for Xs in (sp.csr_matrix(X), unsorted, sp.coo_matrix(X), X.astype(np.int64)):
        other = kgeo.SVM(kernel=kernel).fit(Xs, y)
        assert_identical(dense, other)
        np.testing.assert_array_equal(dense.decision_function(Xt),
                                      other.decision_function(sp.csr_matrix(Xt)))
    assert isinstance(dense.support_vectors_, np.ndarray)
    sparse_model = kgeo.SVM(kernel=kernel).fit(sp.csr_matrix(X), y)
    assert sp.issparse(sparse_model.support_vectors_)
    np.testing.assert_array_equal(sparse_model.support_vectors_.toarray(),
                                  dense.support_vectors_)
    np.testing.assert_array_equal(dense.support_vectors_, X[dense.support_])
    # Explicit zeros are only zeros: the model of the matrix they leave.
    reduced = with_zeros.copy()
    reduced.eliminate_zeros()
    if np.all(np.diff(reduced.indptr) > 0):
        assert_identical(kgeo.SVM(kernel=kernel).fit(reduced, y),
                         kgeo.SVM(kernel=kernel).fit(with_zeros, y))


# ==========================================================================
# 5. Scaling the kernel is scaling C
# ==========================================================================
#
# With K' = cK and box C, the dual is max sum a - c/2 a'Qa, 0 <= a <= C.
# Substituting a = a'' / c gives (1/c) [sum a'' - 1/2 a''Qa''], 0 <= a'' <= cC:
# the problem (K, cC) scaled by 1/c. Hence, at the optima,
#     alpha(K, cC) = c alpha(cK, C),   objective(K, cC) = c objective(cK, C),
# and since y_j - sum_i a_i y_i cK_ij = y_j - sum_i a''_i y_i K_ij, the same b*
# and the same decision function. The gradients G = Qa - 1 coincide too (and
# the second-order working-set criterion scales uniformly by 1/c), so SMO
# takes the same steps and stops at the same iteration.

@pytest.mark.parametrize("C", [1.0, 30.0])
@pytest.mark.parametrize("kernel", ["diffusion", "ngd_exp"])
def test_normalized_kernel_is_scaled_C(kernel, C, rng):
    n_features, t = 6, 0.5
    X, y = ck.make_count_data(rng, 40, n_features, 3)
    Xt, _ = ck.make_count_data(rng, 30, n_features, 3)
    # (4 pi t)^(-n/2) with n = n_features - 1, the dimension of the simplex.
    c = (4 * np.pi * t) ** (-(n_features - 1) / 2)
    np.testing.assert_allclose(
        kgeo.pairwise_kernels(X, kernel=kernel, t=t, normalize=True),
        c * kgeo.pairwise_kernels(X, kernel=kernel, t=t), rtol=1e-13)
    scaled = kgeo.SVM(kernel=kernel, t=t, normalize=True, C=C).fit(X, y)
    plain = kgeo.SVM(kernel=kernel, t=t, normalize=False, C=C * c).fit(X, y)
    np.testing.assert_array_equal(scaled.support_, plain.support_)
    np.testing.assert_array_equal(scaled.n_iter_, plain.n_iter_)
    np.testing.assert_allclose(plain.dual_coef_, c * scaled.dual_coef_, rtol=0, atol=1e-12 * c * C)
    np.testing.assert_allclose(plain.intercept_, scaled.intercept_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(plain.dual_objective_, c * scaled.dual_objective_, rtol=1e-12)
    np.testing.assert_allclose(plain.decision_function(Xt), scaled.decision_function(Xt),
                               rtol=0, atol=1e-12)
    np.testing.assert_array_equal(plain.predict(Xt), scaled.predict(Xt))
    ck.check_svm(scaled, X, y, X_test=Xt)


@pytest.mark.parametrize("C", [0.01, 1.0])
def test_linear_scaled_inputs_is_scaled_C(C, rng):
    X, y = ck.make_count_data(rng, 40, 6, 3)  # no duplicates: no TAU curvature
    Xt, _ = ck.make_count_data(rng, 30, 6, 3)
    # c = 4: the scalings by 2 and 4 are exact in binary floating point, and
    # so is the whole SMO path: the relation holds bit for bit.
    a = kgeo.SVM(kernel="linear", C=C).fit(2.0 * X, y)
    b = kgeo.SVM(kernel="linear", C=4.0 * C).fit(X, y)
    np.testing.assert_array_equal(b.dual_coef_, 4.0 * a.dual_coef_)
    np.testing.assert_array_equal(b.intercept_, a.intercept_)
    np.testing.assert_array_equal(b.dual_objective_, 4.0 * a.dual_objective_)
    np.testing.assert_array_equal(b.decision_function(Xt), a.decision_function(2.0 * Xt))
    # c = 3: equal to rounding.
    a = kgeo.SVM(kernel="linear", C=C).fit(np.sqrt(3.0) * X, y)
    b = kgeo.SVM(kernel="linear", C=3.0 * C).fit(X, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(b.dual_coef_, 3.0 * a.dual_coef_, rtol=0, atol=1e-12 * 3 * C)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.decision_function(Xt), a.decision_function(np.sqrt(3.0) * Xt),
                               rtol=0, atol=1e-11)
    np.testing.assert_array_equal(b.predict(Xt), a.predict(np.sqrt(3.0) * Xt))


# ==========================================================================
# 6. Estimator behaviour
# ==========================================================================

def test_fit_returns_self(rng):
    X, y = ck.make_count_data(rng, 20, 5, 2)
    model = kgeo.SVM()
    assert model.fit(X, y) is model


@pytest.mark.parametrize("labels", [
    np.array(["spam", "eggs", "ham"]),
    np.array([-1, -7, 3]),
    np.array([2.0, -1.0, 0.0]),
    np.array(["b", "a"]),
    np.array([5, -5]),
], ids=["str3", "negint3", "float3", "str2", "negint2"])
def test_labels_of_any_type(labels, rng):
    n_classes = labels.shape[0]
    X, y_int = ck.make_count_data(rng, 30, 6, n_classes)
    Xt, _ = ck.make_count_data(rng, 20, 6, n_classes)
    y = labels[y_int]
    model = kgeo.SVM(kernel="ngd").fit(X, y)
    np.testing.assert_array_equal(model.classes_, np.sort(labels))
    # The same model as with the labels' ranks as integers.
    ranks = np.searchsorted(np.sort(labels), y)
    ref = kgeo.SVM(kernel="ngd").fit(X, ranks)
    assert_identical(model, ref)
    pred = model.predict(Xt)
    assert pred.dtype == model.classes_.dtype
    np.testing.assert_array_equal(pred, np.sort(labels)[ref.predict(Xt)])
    ck.check_svm(model, X, y, X_test=Xt)


@pytest.mark.parametrize("spam, ham", [(np.str_("spam"), "ham"), (np.bytes_(b"spam"), b"ham")],
                         ids=["str", "bytes"])
def test_labels_mixing_str_and_numpy_str_are_one_kind(spam, ham, rng):
    """An object array of np.str_ and str labels (NumPy's and Python's
    strings, equal across the types; bytes likewise) is a set of string
    labels, not a mix of label types."""
    X, y_int = ck.make_count_data(rng, 30, 6, 2)
    y = np.array([spam if v else ham for v in y_int], dtype=object)
    plain = np.array([str(spam) if isinstance(spam, str) else bytes(spam) for _ in y_int],
                     dtype=object)
    plain[y_int == 0] = ham
    model = kgeo.SVM(kernel="ngd").fit(X, y)
    assert_identical(model, kgeo.SVM(kernel="ngd").fit(X, plain))
    assert model.classes_.tolist() == sorted([ham, spam])


@pytest.mark.parametrize("kernel,params", [("ngd", {}), ("rbf", {"gamma": 0.3}),
                                           ("poly", {"gamma": 0.1, "coef0": 1.0})])
def test_binary_decision_function_formula(kernel, params, rng):
    X, y = ck.make_count_data(rng, 40, 8, 2, separation=3.0)
    y = np.array(["neg", "pos"])[y]
    Xt, _ = ck.make_count_data(rng, 25, 8, 2)
    model = kgeo.SVM(kernel=kernel, **params).fit(X, y)
    assert model.dual_coef_.shape == (1, model.support_.shape[0])
    assert model.intercept_.shape == (1,)
    K = kgeo.pairwise_kernels(Xt, model.support_vectors_, kernel=kernel, **params)
    dec = model.decision_function(Xt)
    assert dec.shape == (25,)
    np.testing.assert_allclose(dec, K @ model.dual_coef_[0] + model.intercept_[0],
                               rtol=1e-12, atol=1e-12)
    # Positive means classes_[1].
    np.testing.assert_array_equal(model.predict(Xt), model.classes_[(dec > 0).astype(int)])
    dec_train = model.decision_function(X)
    assert dec_train[y == "pos"].mean() > 0 > dec_train[y == "neg"].mean()
    # Support vectors of classes_[1] carry positive coefficients.
    n0 = model.n_support_[0]
    assert np.all(model.dual_coef_[0, :n0] < 0) and np.all(model.dual_coef_[0, n0:] > 0)


def test_decision_function_shapes_and_votes(rng):
    X, y = ck.make_count_data(rng, 60, 8, 4, separation=0.5)
    Xt, _ = ck.make_count_data(rng, 200, 8, 4)
    ovo = kgeo.SVM(kernel="ngd", decision_function_shape="ovo").fit(X, y)
    ovr = kgeo.SVM(kernel="ngd", decision_function_shape="ovr").fit(X, y)
    d_ovo, d_ovr = ovo.decision_function(Xt), ovr.decision_function(Xt)
    assert d_ovo.shape == (200, 6) and d_ovr.shape == (200, 4)
    votes = votes_from_pairs(d_ovo, 4)
    # ovr is the votes plus confidences squashed into (-1/3, 1/3).
    np.testing.assert_array_equal(np.round(d_ovr), votes)
    assert np.all(np.abs(d_ovr - votes) < 1 / 3)
    # Its argmax is a class with the most votes; predict takes the first one.
    best = votes.max(axis=1)
    assert np.all(votes[np.arange(200), np.argmax(d_ovr, axis=1)] == best)
    np.testing.assert_array_equal(ovr.predict(Xt), ovr.classes_[np.argmax(votes, axis=1)])
    np.testing.assert_array_equal(ovo.predict(Xt), ovr.predict(Xt))


def test_vote_ties_go_to_first_class():
    # Three blobs of different spreads: the three pairwise boundaries do not
    # meet in a point, and inside their triangle every class has one vote.
    rng = np.random.default_rng(0)
    centers = np.array([[0.0, 3.0], [3.0, -1.0], [-2.5, -2.0]])
    X = np.vstack([c + s * rng.normal(size=(15, 2)) for c, s in zip(centers, (0.5, 1.5, 1.0))])
    labels = np.array(["c", "a", "b"])  # classes_ = a, b, c
    y = np.repeat(labels, 15)
    model = kgeo.SVM(kernel="linear", decision_function_shape="ovo").fit(X, y)
    grid = np.stack(np.meshgrid(np.linspace(-2, 2, 81), np.linspace(-2, 2, 81)), -1).reshape(-1, 2)
    votes = votes_from_pairs(model.decision_function(grid), 3)
    tied = np.all(votes == 1, axis=1)
    assert tied.sum() > 10
    assert np.all(model.predict(grid[tied]) == "a")
    np.testing.assert_array_equal(model.predict(grid), model.classes_[np.argmax(votes, axis=1)])


def _triangle_of_ties():
    """Three blobs of different spreads and a grid over the triangle their
    pairwise boundaries leave, where each class has one vote."""
    rng = np.random.default_rng(0)
    centers = np.array([[0.0, 3.0], [3.0, -1.0], [-2.5, -2.0]])
    X = np.vstack([c + s * rng.normal(size=(15, 2)) for c, s in zip(centers, (0.5, 1.5, 1.0))])
    y = np.repeat(np.array(["c", "a", "b"]), 15)
    grid = np.stack(np.meshgrid(np.linspace(-2, 2, 81), np.linspace(-2, 2, 81)), -1).reshape(-1, 2)
    return X, y, grid


@pytest.mark.parametrize("kernel", ["ngd", "ngd+pi", "ngd_exp", "bhattacharyya", "diffusion"])
@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.filterwarnings("ignore::kgeo.EmptyDocumentWarning")
def test_a_document_without_a_word_is_decided_by_the_intercepts(kernel, n_classes, rng):
    """No point on the simplex: the kernel's formula on a zero row gives the
    same value against every support vector, so each pair's decision value
    is its b* exactly (sum alpha y = 0), as predict_from_intercepts says and
    libsvm computes from the NGD Gram of such a row; the other rows are
    predicted as without it."""
    from kgeo.experiments import predict_from_intercepts

    X, y = ck.make_count_data(rng, 60, 8, n_classes, separation=0.5)
    X_test, _ = ck.make_count_data(rng, 12, 8, n_classes)
    model = kgeo.SVM(kernel=kernel).fit(X, y)
    with_empty = np.array(X_test, dtype=float)
    with_empty[[0, 5, 11]] = 0.0
    for rows in (with_empty, sp.csr_matrix(with_empty)):
        pairs = ck.pair_decisions(model, rows)
        b = -model.intercept_ if n_classes == 2 else model.intercept_  # libsvm's orientation
        assert np.array_equal(pairs[[0, 5, 11]], np.tile(b, (3, 1)))
        kept = np.setdiff1d(np.arange(12), [0, 5, 11])
        np.testing.assert_array_equal(pairs[kept], ck.pair_decisions(model, with_empty[kept]))
        np.testing.assert_array_equal(model.predict(rows)[[0, 5, 11]],
                                      predict_from_intercepts(model, 3))
    # Only empty rows, and one alone.
    np.testing.assert_array_equal(model.predict(np.zeros((2, 8))), predict_from_intercepts(model, 2))
    # The intercepts' signs decide even when they are tiny: no rounding
    # bound of kernel values stands in their way.
    tiny = copy.deepcopy(model)
    tiny.intercept_ = np.where(np.arange(tiny.intercept_.size) % 2 == 0, 1e-200, -1e-200)
    np.testing.assert_array_equal(tiny.predict(np.zeros((1, 8))), predict_from_intercepts(tiny, 1))
    assert np.array_equal(np.sign(ck.pair_decisions(tiny, np.zeros((1, 8)))[0]),
                          np.sign(tiny.intercept_) * (-1 if n_classes == 2 else 1))
    # The formula on a zero row: sum_i sqrt(p_i q_i) = 0 against each support
    # vector, which a row with words no support vector has also gets.
    unseen = np.zeros((1, 9))
    unseen[0, 8] = 2.0
    wide = kgeo.SVM(kernel=kernel).fit(np.hstack([X, np.zeros((60, 1))]), y)
    np.testing.assert_allclose(ck.pair_decisions(wide, unseen)[0],
                               ck.pair_decisions(wide, np.zeros((1, 9)))[0], rtol=0, atol=1e-12)
    # Training leaves such documents out, saying so: the model of the others.
    with_empty_train = np.array(X, dtype=float)
    with_empty_train[[7, 30]] = 0.0
    with pytest.warns(UserWarning, match=r"2 training document\(s\) without a word \(all-zero "
                                         r"rows 7, 30\) have no point on the simplex for the "
                                         rf"multinomial kernel '{re.escape(kernel)}': they are left out"):
        left_out = kgeo.SVM(kernel=kernel).fit(with_empty_train, y)
    others = np.setdiff1d(np.arange(60), [7, 30])
    alone = kgeo.SVM(kernel=kernel).fit(X[others], y[others])
    for name in ("dual_coef_", "intercept_", "n_iter_"):
        np.testing.assert_array_equal(getattr(left_out, name), getattr(alone, name))
    np.testing.assert_array_equal(left_out.support_, others[alone.support_])
    # The warning points at the caller's line.
    with pytest.warns(UserWarning, match="without a word") as caught:
        kgeo.SVM(kernel=kernel).fit(with_empty_train, y)
    assert caught[0].filename == __file__
    # A class whose documents of positive weight are all empty is refused
    # for that, not for its weights.
    weight = np.ones(60)
    last = np.flatnonzero(y == y.max())
    with_empty_train[last[:2]] = 0.0
    weight[last[2:]] = 0.0
    with pytest.raises(ValueError, match=rf"every document of positive sample_weight of class "
                                         rf"{y.max()} is without a word"):
        kgeo.SVM(kernel=kernel).fit(with_empty_train, y, sample_weight=weight)
    with_empty_train[last[:2]] = X[last[:2]]
    # A negative entry is refused before any warning about empty rows.
    negative = with_empty_train.copy()
    negative[3, 2] = -1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"X has 1 negative entries"):
            kgeo.SVM(kernel=kernel).fit(negative, y)
    # An empty row already of weight 0 is left out without a word said.
    weight = np.ones(60)
    weight[7] = 0.0
    with pytest.warns(UserWarning, match=r"1 training document\(s\) without a word \(all-zero "
                                         r"rows 30\)"):
        kgeo.SVM(kernel=kernel).fit(with_empty_train, y, sample_weight=weight)
    weight[30] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kgeo.SVM(kernel=kernel).fit(with_empty_train, y, sample_weight=weight)


def test_the_empty_documents_messages_list_ten_rows_and_name_the_first_class(rng):
    """Up to ten empty training rows are listed, the rest counted (exactly ten:
    no "and 0 more"); of several classes made only of empty documents, the
    refusal names the first in ``classes_`` order, as every other message."""
    X, y = ck.make_count_data(rng, 60, 8, 2)
    X = np.asarray(X, dtype=float)
    for n_empty, listed in ((10, r"rows 0, 1, 2, 3, 4, 5, 6, 7, 8, 9\) have"),
                            (11, r"rows 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 1 more\) have")):
        Z = X.copy()
        Z[:n_empty] = 0.0
        with pytest.warns(UserWarning, match=rf"{n_empty} training document\(s\) without a word "
                                             rf"\(all-zero {listed}"):
            kgeo.SVM(kernel="ngd").fit(Z, y)
    labels = np.array(["c", "a", "b"])[np.arange(60) % 3]
    Z = X.copy()
    Z[labels != "c"] = 0.0
    with pytest.raises(ValueError, match=r"every document of class 'a' is without a word"):
        kgeo.SVM(kernel="ngd").fit(Z, labels)


def test_a_zero_row_is_an_ordinary_point_for_the_euclidean_kernels(rng):
    """The intercepts-only rule is the multinomial kernels': for rbf the zero
    vector is a point like any other, decided by the kernel's formula,
    sum_i coef_i exp(-gamma |sv_i|^2) + b (NumPy here), alone or in a batch."""
    X, y = ck.make_count_data(rng, 40, 8, 2)
    model = kgeo.SVM(kernel="rbf", gamma=0.05).fit(X, y)
    sv = np.asarray(sp.csr_matrix(model.support_vectors_).toarray())
    expected = model.dual_coef_[0] @ np.exp(-0.05 * np.sum(sv ** 2, axis=1)) + model.intercept_[0]
    assert abs(expected - model.intercept_[0]) > 1e-3  # the rule would show
    rows = np.vstack([np.asarray(X, dtype=float)[:3], np.zeros((1, 8))])
    np.testing.assert_allclose(model.decision_function(rows[3:]), [expected], rtol=1e-10)
    np.testing.assert_allclose(model.decision_function(rows)[3], expected, rtol=1e-10)


def test_a_pipeline_predicts_texts_whose_words_are_all_unseen():
    """Found by a user's workflow: one text of unknown words made a whole
    batch (and every NGD fold of a grid search) fail."""
    from kgeo.text import RainbowVectorizer

    texts = ["good cheap phone", "bad movie plot", "great phone", "awful movie"]
    vectoriser = RainbowVectorizer().fit(texts)
    model = kgeo.SVM(kernel="ngd").fit(vectoriser.transform(texts), [0, 1, 0, 1])
    new = vectoriser.transform(["good phone", "excellent", "awful plot"])
    assert np.diff(new.indptr).tolist() == [2, 0, 2]
    with pytest.warns(kgeo.EmptyDocumentWarning, match=r"1 of the 3 document\(s\) to predict "
                                                        r"have no word \(all-zero rows 1\)"):
        predicted = model.predict(new)
    np.testing.assert_array_equal(predicted[[0, 2]], model.predict(new[[0, 2]]))
    with pytest.warns(kgeo.EmptyDocumentWarning):
        assert model.decision_function(new)[1] == model.intercept_[0]


def test_documents_to_predict_without_a_word_are_named_once_per_call(rng):
    """A user's pipeline with RainbowVectorizer(skip_header=True) read typed
    sentences (no blank line) as all header: every one an empty row, all
    predicted as one class by the intercepts, without a word said. fit
    already warned of such training rows; predict, decision_function and
    score now do too, pointing at the caller's line, in a class of their
    own to filter where such documents are expected."""
    X, y = ck.make_count_data(rng, 40, 6, 3)
    model = kgeo.SVM(kernel="ngd").fit(X, y)
    X_new = np.array(X[:12], dtype=float)
    X_new[[2, 7]] = 0.0
    for call in (model.predict, model.decision_function, lambda A: model.score(A, y[:12])):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call(X_new)
        empty = [w for w in caught if issubclass(w.category, kgeo.EmptyDocumentWarning)]
        assert len(empty) == 1 and empty[0].filename == __file__
        assert "2 of the 12 document(s) to predict have no word (all-zero rows 2, 7)" in str(
            empty[0].message)
    assert issubclass(kgeo.EmptyDocumentWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=kgeo.EmptyDocumentWarning)
        model.predict(X_new)  # filtered by its class
        model.predict(X[:12])  # no empty row: no warning
        # A kernel off the simplex reads an empty row as the zero vector.
        kgeo.SVM(kernel="linear").fit(X, y).predict(np.zeros((2, 6)))
    with pytest.warns(kgeo.EmptyDocumentWarning, match="training document"):
        kgeo.SVM(kernel="ngd").fit(np.vstack([X, np.zeros((1, 6))]), np.r_[y, y[0]])


def test_verbose_logs_each_pair_by_its_plain_labels(caplog, rng):
    X, y = ck.make_count_data(rng, 30, 5, 3)
    with caplog.at_level("INFO", logger="kgeo._svm"):
        kgeo.SVM(verbose=2).fit(X, y)
    lines = [r.getMessage() for r in caplog.records]
    assert any(line.startswith("pair (0, 1): ") for line in lines), lines
    assert any(line.startswith("fit: 30 samples, 3 classes") for line in lines), lines


@pytest.mark.parametrize("verbose, pair_lines", [
    (True, False), (np.True_, False), (False, False), (np.False_, False), (1, False), (2, True)])
def test_verbose_takes_a_bool_as_svc_does(verbose, pair_lines, caplog, rng):
    """SVC's verbose is a bool: True is level 1 (the fit's line, no pair
    lines), False is 0 (nothing). Refusing True broke code written for SVC."""
    X, y = ck.make_count_data(rng, 30, 5, 3)
    with caplog.at_level("INFO", logger="kgeo._svm"):
        kgeo.SVM(verbose=verbose).fit(X, y)
    lines = [r.getMessage() for r in caplog.records]
    assert any(line.startswith("fit: 30 samples") for line in lines) == bool(verbose), lines
    assert any(line.startswith("pair (") for line in lines) == pair_lines, lines


@pytest.mark.parametrize("max_iter, tol", [(-1, 1e-3), (0, 1e-3), (-1, 3.0)])
def test_verbose_logs_the_pairs_a_failing_run_solved(max_iter, tol, caplog, monkeypatch):
    """verbose=2 logs a run's pairs as it ends, each once and in order, and
    where the run fails part-way (here in its third pair), the pairs solved
    before the failure; also pairs solved in no iteration (max_iter=0, or
    tol=3 above the gap of 2 every pair starts from: a review)."""
    from kgeo import _solver, _svm
    from kgeo._synthetic import make_topic_corpus

    X, y = make_topic_corpus(n_documents=60, n_features=500, n_classes=12,
                             words_per_document=30, random_state=2)
    pattern = r"pair \((\d+), (\d+)\): "
    with caplog.at_level("INFO", logger="kgeo._svm"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kgeo.SVM(verbose=2, n_jobs=1, max_iter=max_iter, tol=tol).fit(X, y)
    logged = [tuple(map(int, m.groups())) for r in caplog.records
              if (m := re.match(pattern, r.getMessage()))]
    assert logged == [(s, t) for s in range(12) for t in range(s + 1, 12)]
    caplog.clear()
    solve_pairs = _solver.solve_pairs

    def failing(cache, solutions, first, last, *args):
        if first == 0:  # the first run: its first 2 pairs, then a failure
            solve_pairs(cache, solutions, 0, 2, *args)
            raise MemoryError("no memory for pair 3")
        return solve_pairs(cache, solutions, first, last, *args)

    monkeypatch.setattr(_svm, "solve_pairs", failing)
    with caplog.at_level("INFO", logger="kgeo._svm"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(MemoryError, match="no memory for pair 3"):
            kgeo.SVM(verbose=2, n_jobs=1, max_iter=max_iter, tol=tol).fit(X, y)
    logged = [tuple(map(int, m.groups())) for r in caplog.records
              if (m := re.match(pattern, r.getMessage()))]
    assert logged == [(0, 1), (0, 2)]


def test_coef_rows_follow_the_documented_pair_order(rng):
    X, y = ck.make_count_data(rng, 60, 6, 4)
    model = kgeo.SVM(kernel="linear").fit(X, y)
    ovo = ck.pair_decisions(model, X)
    n = 4
    for s in range(n):
        for t in range(s + 1, n):
            row = s * (2 * n - s - 1) // 2 + t - s - 1
            np.testing.assert_allclose(X @ model.coef_[row] + model.intercept_[row], ovo[:, row],
                                       rtol=0, atol=1e-12)


def test_break_ties_takes_the_largest_ovr_value_where_votes_tie():
    X, y, grid = _triangle_of_ties()
    plain = kgeo.SVM(kernel="linear").fit(X, y)
    model = kgeo.SVM(kernel="linear", break_ties=True).fit(X, y)
    ck.assert_identical_models(plain, model)  # a prediction rule, not a training one
    assert model.fit_status_ == 0
    votes = votes_from_pairs(ck.pair_decisions(model, grid), 3)
    tied = np.all(votes == 1, axis=1)
    assert tied.sum() > 10
    ovr = model.decision_function(grid)
    predicted = model.predict(grid)
    np.testing.assert_array_equal(predicted, model.classes_[np.argmax(ovr, axis=1)])
    # Where no votes tie, the rule is the votes'; where they tie, all three
    # classes win somewhere (first-class ties would give "a" only).
    np.testing.assert_array_equal(predicted[~tied], plain.predict(grid)[~tied])
    assert set(predicted[tied]) == {"a", "b", "c"}
    assert np.all(plain.predict(grid[tied]) == "a")
    # Two classes: nothing to break, the pair's sign decides.
    two = y != "c"
    binary = kgeo.SVM(kernel="linear", break_ties=True).fit(X[two], y[two])
    np.testing.assert_array_equal(binary.predict(grid),
                                  kgeo.SVM(kernel="linear").fit(X[two], y[two]).predict(grid))


def test_break_ties_predicts_what_sklearns_svc_does():
    pytest.importorskip("sklearn")
    from sklearn.svm import SVC

    X, y, grid = _triangle_of_ties()
    ours = kgeo.SVM(kernel="linear", tol=1e-8, break_ties=True).fit(X, y)
    ref = SVC(kernel="linear", tol=1e-8, break_ties=True).fit(X, y)
    np.testing.assert_allclose(ours.decision_function(grid), ref.decision_function(grid),
                               rtol=0, atol=1e-6)
    # Away from decision values within that tolerance of a tie, the same class.
    ovr = np.sort(ref.decision_function(grid), axis=1)
    clear = ovr[:, -1] - ovr[:, -2] > 1e-5
    assert clear.sum() > 0.99 * len(grid)
    np.testing.assert_array_equal(ours.predict(grid)[clear], ref.predict(grid)[clear])


def test_break_ties_at_a_zero_pair_value_keeps_predict_the_argmax():
    """A pair's decision value of exactly 0 votes for its second class (libsvm's
    rule), in decision_function too, where SVC's decision_function gives it
    to the first: the documented difference from SVC(break_ties=True)."""
    X = np.array([[-1, 0], [-1, 1], [-1, -1], [1, 0], [1, 1], [1, -1], [0, 5], [1, 5],
                  [-1, 5]], dtype=float)
    y = np.repeat([0, 1, 2], 3)
    model = kgeo.SVM(kernel="linear", break_ties=True).fit(X, y)
    on_boundary = np.array([[0.0, 0.0]])
    assert ck.pair_decisions(model, on_boundary)[0, 0] == 0.0  # the pair (0, 1)
    ovr = model.decision_function(on_boundary)
    np.testing.assert_array_equal(np.round(ovr), [[1, 2, 0]])
    assert model.predict(on_boundary).tolist() == [1]


def test_break_ties_needs_the_ovr_shape_and_a_bool():
    X, y, grid = _triangle_of_ties()
    with pytest.raises(ValueError, match=r"break_ties=True needs decision_function_shape='ovr'"):
        kgeo.SVM(kernel="linear", break_ties=True, decision_function_shape="ovo").fit(X, y)
    # Set after the fit, as scikit-learn's SVC refuses it: at predict.
    model = kgeo.SVM(kernel="linear", decision_function_shape="ovo").fit(X, y)
    model.set_params(break_ties=True)
    with pytest.raises(ValueError, match=r"got decision_function_shape='ovo'"):
        model.predict(grid)
    # Unfitted, the model says so first, as SVC does.
    with pytest.raises(kgeo.NotFittedError):
        kgeo.SVM(break_ties=True, decision_function_shape="ovo").predict(grid)
    # A NumPy bool (from an array of settings) is a bool, as for SVC.
    for flag in (True, False):
        np.testing.assert_array_equal(
            kgeo.SVM(kernel="linear", break_ties=np.bool_(flag)).fit(X, y).predict(grid),
            kgeo.SVM(kernel="linear", break_ties=flag).fit(X, y).predict(grid))
    for bad in ("yes", 1, None):
        with pytest.raises(ValueError, match=r"break_ties must be True or False, got"):
            kgeo.SVM(kernel="linear", break_ties=bad).fit(X, y)
        with pytest.raises(ValueError, match=r"break_ties must be True or False, got"):
            kgeo.SVM(kernel="linear").fit(X, y).set_params(break_ties=bad).predict(grid)


def test_a_model_saved_before_break_ties_loads_with_its_default():
    X, y, grid = _triangle_of_ties()
    model = kgeo.SVM(kernel="linear").fit(X, y)
    state = model.__getstate__()
    del state["break_ties"]
    old = kgeo.SVM.__new__(kgeo.SVM)
    old.__setstate__(state)
    assert old.get_params()["break_ties"] is False
    np.testing.assert_array_equal(old.predict(grid), model.predict(grid))


def test_fit_status_says_whether_every_pair_reached_tol():
    X, y, _ = _triangle_of_ties()
    assert kgeo.SVM(kernel="linear").fit(X, y).fit_status_ == 0
    with pytest.warns(kgeo.ConvergenceWarning, match="max_iter=3"):
        short = kgeo.SVM(kernel="linear", max_iter=3).fit(X, y)
    assert short.fit_status_ == 1
    # Stalled in float64 (tol below rounding) counts as not reaching tol too.
    rng = np.random.default_rng(0)
    Z = rng.poisson(1.0, (40, 8)).astype(float)
    Z[:, 0] += 1
    labels = np.array([0, 1] * 20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stalled = kgeo.SVM(kernel="ngd", tol=1e-300, max_iter=10**6).fit(Z, labels)
    said = any("tol is below what this problem can resolve" in str(w.message) for w in caught)
    assert said and stalled.fit_status_ == 1


# Documents of lengths spanning four orders of magnitude: poly's kernel
# diagonal then spans 1e-9 to 2.4e7 (case 444) and 4.7e-6 to 3.3e11 (894).
_SCALED_DOCUMENTS = {
    444: ([[0, 2, 1, 0, 0, 2, 0, 0], [0, 3, 1, 1, 0, 0, 0, 1], [0, 2, 0, 0, 0, 2, 1, 2],
           [0, 0, 0, 1, 1, 0, 0, 0], [1, 2, 0, 1, 0, 1, 1, 1], [2, 0, 2, 0, 1, 1, 0, 0],
           [0, 0, 0, 0, 0, 0, 1, 0], [0, 0, 0, 1, 0, 0, 0, 0], [2, 1, 0, 1, 0, 1, 1, 0],
           [0, 1, 0, 3, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 2]],
          [17.3, 0.00733, 0.00523, 0.00522, 0.00341, 0.924, 69.8, 0.579, 15.5, 0.0213, 0.365],
          [0, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1]),
    894: ([[0, 1, 0, 2], [0, 1, 0, 1], [0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 1, 1], [0, 1, 0, 0],
           [2, 0, 1, 2], [1, 0, 2, 1]],
          [39.4, 442.0, 757.0, 297.0, 0.0342, 0.0466, 0.185, 0.0467],
          [0, 1, 1, 1, 0, 1, 1, 1]),
}


@pytest.mark.parametrize("case", sorted(_SCALED_DOCUMENTS))
def test_a_snap_never_undoes_the_step_it_lengthens(case):
    """Where a pair's quad is tiny beside G's rounding (short documents next
    to long ones), the reach of a snap to a bound (the step's rounding, see
    snap_toward) is large: a snap longer than its step had taken the pair past
    twice its optimum, and the next step of the same pair went back; SMO
    swapped the two alphas until max_iter (a review: 20 Newsgroups with a
    poly kernel, 23 s against 2.4 s for SVC). SVC needs 22 and 2 steps here;
    the two cases were among 38 of 3,000 random ones of this kind that
    reached max_iter before, none after."""
    rows, lengths, y = _SCALED_DOCUMENTS[case]
    X = np.array(rows, dtype=float) * np.array(lengths)[:, None]
    model = kgeo.SVM(kernel="poly", degree=2, gamma=1.0, max_iter=20000).fit(X, y)
    assert model.fit_status_ == 0
    assert model.n_iter_[0] < 1000
    ck.check_svm(model, X, y)


@pytest.mark.parametrize("kernel", ["ngd", "linear", "rbf", "ned", "diffusion"])
def test_separable_training_data_perfect(kernel, rng):
    # Each class writes with its own words (plus rare shared ones).
    n_per, words = 15, 4
    X = np.zeros((3 * n_per, 3 * words + 2))
    for c in range(3):
        block = X[c * n_per:(c + 1) * n_per]
        block[:, c * words:(c + 1) * words] = rng.integers(1, 6, size=(n_per, words))
        block[:, -2:] = rng.integers(0, 2, size=(n_per, 2))
    y = np.repeat([10, 20, 30], n_per)
    model = kgeo.SVM(kernel=kernel, C=10.0).fit(X, y)
    np.testing.assert_array_equal(model.predict(X), y)
    assert model.score(X, y) == 1.0


@pytest.mark.parametrize("class_weight", ["balanced", {"a": 3.0, "c": 0.25}],
                         ids=["balanced", "dict"])
def test_class_weight_changes_C_per_class(class_weight, rng):
    X, y_int = ck.make_count_data(rng, 60, 6, 3, separation=0.3, n_duplicates=4)
    y_int = np.where(np.arange(60) < 30, 0, y_int)  # unbalanced
    y = np.array(["a", "b", "c"])[y_int]
    C = 0.2
    model = kgeo.SVM(kernel="ngd", C=C, class_weight=class_weight).fit(X, y)
    counts = np.array([np.count_nonzero(y == c) for c in "abc"])
    expected = (60 / (3 * counts) if class_weight == "balanced"
                else np.array([3.0, 1.0, 0.25]))
    np.testing.assert_allclose(model.class_weight_, expected, rtol=1e-15)
    report = ck.check_svm(model, X, y)  # the box is C * weight of the class
    # The weighted bound is active: some alpha of the class of least weight
    # sits at its C_i (less than C).
    c = np.argmin(expected)
    assert expected[c] < 1
    assert any(np.any(r["alpha"][y_int[r["idx"]] == c] == C * expected[c])
               for r in report if c in (r["s"], r["t"]))
    # ... and checking against the unweighted box fails.
    with pytest.raises(AssertionError):
        ck.check_svm(model, X, y, class_weight={})


def test_max_iter_warns(rng):
    X, y = ck.make_count_data(rng, 40, 6, 3)
    with pytest.warns(kgeo.ConvergenceWarning, match=r"max_iter=1\b"):
        model = kgeo.SVM(kernel="ngd", max_iter=1).fit(X, y)
    np.testing.assert_array_equal(model.n_iter_, [1, 1, 1])
    # Converged fits do not warn.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kgeo.SVM(kernel="ngd").fit(X, y)


def test_calibrated_classifier(rng):
    from sklearn.calibration import CalibratedClassifierCV

    X, y = ck.make_count_data(rng, 90, 10, 3, separation=1.5)
    Xt, _ = ck.make_count_data(rng, 30, 10, 3)
    calibrated = CalibratedClassifierCV(kgeo.SVM(kernel="ngd"), cv=3).fit(X, y)
    proba = calibrated.predict_proba(Xt)
    assert proba.shape == (30, 3)
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(calibrated.classes_, [0, 1, 2])


def test_calibrated_classifier_passes_sample_weight(rng):
    """Platt's sigmoid on cross-validated decision values, the way scikit-learn
    1.9 recommends in place of SVC's deprecated probability=True: the
    weights reach kgeo's fits (here the final one, on all the data)."""
    from sklearn.calibration import CalibratedClassifierCV

    X, y = ck.make_count_data(rng, 90, 10, 3, separation=1.5)
    weight = np.where(np.arange(90) % 4 == 0, 0.0, 2.0)
    calibrated = CalibratedClassifierCV(kgeo.SVM(kernel="ngd"), cv=3, ensemble=False,
                                        method="sigmoid").fit(X, y, sample_weight=weight)
    final = calibrated.calibrated_classifiers_[0].estimator
    assert_identical(final, kgeo.SVM(kernel="ngd").fit(X, y, sample_weight=weight))
    assert not np.any(weight[final.support_] == 0)
    np.testing.assert_allclose(calibrated.predict_proba(X).sum(axis=1), 1.0, rtol=1e-12)


def test_sample_weight_through_sklearns_metadata_routing(rng):
    """With scikit-learn's metadata routing on, set_fit_request and
    set_score_request route sample_weight as scikit-learn's estimators do:
    cross_validate gives the scores of weighted fits scored with weights;
    unrequested weights are an error; the requests survive clone and pickle."""
    import sklearn
    from sklearn.base import clone
    from sklearn.model_selection import KFold, cross_validate

    X, y = ck.make_count_data(rng, 90, 10, 3, separation=0.5)
    weight = rng.choice([0.0, 0.5, 3.0], size=90)
    with pytest.raises(RuntimeError, match="enable_metadata_routing=True"):
        kgeo.SVM().set_fit_request(sample_weight=True)
    with sklearn.config_context(enable_metadata_routing=True):
        model = kgeo.SVM().set_fit_request(sample_weight=True).set_score_request(
            sample_weight=True)
        scores = cross_validate(model, X, y, cv=KFold(3),
                                params={"sample_weight": weight})["test_score"]
        expected = [kgeo.SVM().fit(X[train], y[train], sample_weight=weight[train]).score(
                        X[test], y[test], sample_weight=weight[test])
                    for train, test in KFold(3).split(X)]
        np.testing.assert_array_equal(scores, expected)
        unweighted = [kgeo.SVM().fit(X[train], y[train]).score(X[test], y[test])
                      for train, test in KFold(3).split(X)]
        assert not np.array_equal(expected, unweighted)  # the weights matter here
        with pytest.raises(Exception, match="sample_weight.*not explicitly set"):
            cross_validate(kgeo.SVM(), X, y, cv=KFold(3), params={"sample_weight": weight})
        for copy in (clone(model), pickle.loads(pickle.dumps(model))):
            routing = copy.get_metadata_routing()
            assert routing.fit.requests == {"sample_weight": True}
            assert routing.score.requests == {"sample_weight": True}
            # scikit-learn 1.6 and 1.7 score with estimator.score by reading
            # this attribute's score request; without it they scored unweighted.
            assert copy._metadata_request.score.requests == {"sample_weight": True}
            assert copy._metadata_request.fit.requests == {"sample_weight": True}
        with pytest.raises(ValueError, match="True, False, None or a name"):
            kgeo.SVM().set_fit_request(sample_weight="not a name")
    assert kgeo.SVM().get_metadata_routing().fit.requests == {"sample_weight": None}


def test_a_model_with_routing_requests_loads_without_sklearn(tmp_path):
    """The requests are saved as a kgeo type: a model tuned with scikit-learn
    (GridSearchCV's best_estimator_ is a clone, requests included) loads and
    predicts where scikit-learn is not installed."""
    import subprocess

    import sklearn

    X = np.array([[3.0, 1, 0], [2, 1, 1], [0, 2, 3], [1, 3, 4]])
    with sklearn.config_context(enable_metadata_routing=True):
        model = kgeo.SVM().set_fit_request(sample_weight=True).fit(X, [0, 0, 1, 1])
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps(model))
    code = (
        "import builtins, pickle, sys\n"
        "real_import = builtins.__import__\n"
        "def no_sklearn(name, *args, **kwargs):\n"
        "    if name == 'sklearn' or name.startswith('sklearn.'):\n"
        "        raise ModuleNotFoundError(f'No module named {name!r}')\n"
        "    return real_import(name, *args, **kwargs)\n"
        "builtins.__import__ = no_sklearn\n"
        f"model = pickle.loads(open({str(path)!r}, 'rb').read())\n"
        "print(model.predict([[4, 1, 0]]).tolist(), 'sklearn' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[0]", "False"]


def test_clone_get_set_params(rng):
    from sklearn.base import clone

    model = kgeo.SVM(kernel="rbf", C=3.0, gamma=0.2, class_weight={1: 2.0}, tol=1e-4)
    params = model.get_params()
    assert params["C"] == 3.0 and params["kernel"] == "rbf" and params["class_weight"] == {1: 2.0}
    assert set(params) == {"kernel", "C", "shift", "gamma", "coef0", "degree", "t", "normalize",
                           "tol", "cache_size", "cache_dtype", "shrinking", "class_weight",
                           "max_iter", "decision_function_shape", "n_jobs", "verbose",
                           "break_ties"}
    other = kgeo.SVM().set_params(**params)
    assert other.get_params() == params
    X, y = ck.make_count_data(rng, 30, 5, 2)
    model.fit(X, y)
    cloned = clone(model)
    assert cloned is not model and cloned.get_params() == params
    assert not hasattr(cloned, "dual_coef_")
    assert_identical(cloned.fit(X, y), model)
    with pytest.raises(ValueError, match="Invalid parameter 'bogus'"):
        kgeo.SVM().set_params(bogus=1)


@pytest.mark.parametrize("kernel, change", [
    ("ngd", {"kernel": "linear"}),
    ("ngd", {"shift": 1e17}),
    ("poly", {"kernel": "ngd"}),  # poly's degree and coef0 then reached ngd
    ("poly", {"degree": 2}),
    ("rbf", {"gamma": 0.5}),  # fitted with gamma="scale"
    ("diffusion", {"t": 0.5}),
])
def test_a_kernel_changed_after_fit_is_refused(kernel, change, rng):
    """Prediction read the current kernel and shift but the fitted kernel
    parameters: set_params(kernel="linear") after an NGD fit weighed linear
    kernel values by NGD's coefficients without a word (accuracy 0.77 ->
    0.58), a changed degree or t was silently ignored."""
    X, y = ck.make_count_data(rng, 40, 6, 3)
    if kernel == "poly":
        X = l2_rows(X)
    model = kgeo.SVM(kernel=kernel, degree=3).fit(X, y)
    before = model.decision_function(X)
    loaded = pickle.loads(pickle.dumps(model))
    name = next(iter(change))
    model.set_params(**change)
    for predict in (model.predict, model.decision_function, lambda X: model.score(X, y)):
        with pytest.raises(ValueError, match=rf"{name}=.*, but this SVM was fitted with "
                                             rf"{name}=.*fit it again after changing {name}"):
            predict(X)
    # What does not touch the kernel is free to change, and the way back too.
    model.set_params(**{name: loaded.get_params()[name]}, C=7.0, n_jobs=1)
    np.testing.assert_array_equal(model.decision_function(X), before)
    np.testing.assert_array_equal(loaded.decision_function(X), before)


@pytest.mark.parametrize("how", ["pickle", "copy"])
@pytest.mark.parametrize("change", [{"kernel": "linear"}, {"shift": 1.0}])
def test_a_loaded_or_copied_model_refuses_a_kernel_changed_after_its_fit(how, change, rng):
    """The fitted kernel travels with the model. The test above changes the
    kernel of the fitted model only, so a ``__getstate__`` that dropped it
    passed (mutation review 182): a loaded model then weighed the new
    kernel's values by the old coefficients without a word."""
    X, y = ck.make_count_data(rng, 45, 6, 3)
    model = kgeo.SVM(kernel="ngd").fit(X, y)
    before = model.decision_function(X)
    other = pickle.loads(pickle.dumps(model)) if how == "pickle" else copy.copy(model)
    np.testing.assert_array_equal(other.decision_function(X), before)
    name = next(iter(change))
    other.set_params(**change)
    for predict in (other.predict, other.decision_function):
        with pytest.raises(ValueError, match=rf"{name}=.*, but this SVM was fitted with "
                                             rf"{name}="):
            predict(X)


def test_a_whole_degree_of_any_real_type_is_accepted(rng):
    # np.float32(2.0) was refused by poly ("must be an integer >= 1") while
    # 2.0 and np.float64(2.0) were accepted, and so was np.float32(2.0) by
    # the kernels that do not read degree.
    X, y = ck.make_count_data(rng, 30, 5, 2)
    X = l2_rows(X)
    reference = kgeo.SVM(kernel="poly", degree=2).fit(X, y).decision_function(X)
    for degree in (2.0, np.float32(2.0), np.float64(2.0), np.int8(2), np.uint64(2)):
        model = kgeo.SVM(kernel="poly", degree=degree).fit(X, y)
        np.testing.assert_array_equal(model.decision_function(X), reference)


@pytest.mark.parametrize("kernel, params", [("linear", {}), ("ngd", {}), ("ned", {}),
                                            ("rbf", {"gamma": 0.5}),
                                            ("diffusion", {"t": 0.3})])
def test_predicting_over_only_the_used_columns_keeps_every_bit(kernel, params, rng):
    # Wide rows (hashed features) are predicted over the columns the support
    # vectors or the rows use; the same rows with the unused columns cut by
    # hand give the same decision values, bit for bit, test words unseen in
    # training included.
    X, y = ck.make_count_data(rng, 40, 12, 3, density=0.3, sparse=True)
    T, _ = ck.make_count_data(rng, 15, 12, 3, density=0.3, sparse=True)
    T = T.tolil()
    T[:, 11] = 1.0  # a word no training row has
    T = T.tocsr()
    X = X[:, :11]
    X = sp.hstack([X, sp.csr_matrix((40, 1))]).tocsr()
    width = 2**22
    spread = rng.choice(width, 12, replace=False)
    spread.sort()

    def widen(M):
        M = M.tocoo()
        return sp.csr_matrix((M.data, (M.row, spread[M.col])), shape=(M.shape[0], width))

    narrow = kgeo.SVM(kernel=kernel, **params).fit(X, y)
    wide = kgeo.SVM(kernel=kernel, **params).fit(widen(X), y)
    np.testing.assert_array_equal(wide.dual_coef_, narrow.dual_coef_)
    np.testing.assert_array_equal(wide.decision_function(widen(T)), narrow.decision_function(T))
    np.testing.assert_array_equal(kgeo.pairwise_kernels(widen(T), widen(X), kernel=kernel,
                                                        **params),
                                  kgeo.pairwise_kernels(T, X, kernel=kernel, **params))


def test_labels_that_numpy_cannot_test_for_finiteness_are_classes(rng):
    # np.isfinite raised its own TypeError on Python ints beyond int64 and on
    # Fractions; both are discrete, sortable labels.
    from fractions import Fraction

    X, y = ck.make_count_data(rng, 30, 5, 2)
    reference = kgeo.SVM().fit(X, y)
    # Beyond float64 too: math.isfinite would raise OverflowError on them.
    for labels in ([2**64 + int(v) for v in y], [Fraction(int(v) + 1) for v in y],
                   [2**2000 + int(v) for v in y], [Fraction(10**400 + int(v)) for v in y]):
        model = kgeo.SVM().fit(X, labels)
        assert model.classes_.tolist() == sorted(set(labels))
        np.testing.assert_array_equal(model.dual_coef_, reference.dual_coef_)


def test_labels_without_a_total_order_are_refused(rng):
    """Frozensets order by inclusion: two disjoint ones are neither < nor >,
    so a sort does not group equal labels, and np.unique gave each of 2
    labels 3 times (6 classes of one sample each, no word said). A total
    order is needed, and said so; HP-TOP reads labels the same way."""
    X, _ = ck.make_count_data(rng, 6, 4, 2)
    a, b = frozenset({1}), frozenset({2})
    labels = [a, b, a, b, a, b]
    for fit in (lambda: kgeo.SVM().fit(X, labels),
                lambda: kgeo.HPTOPEmbedding(a).fit(X, labels)):
        with pytest.raises(TypeError, match=r"totally ordered.*frozenset\(\{1\}\) and "
                                            r"frozenset\(\{2\}\) differ"):
            fit()
    # Nested frozensets are a chain: totally ordered, so classes.
    chain = [frozenset({1}), frozenset({1, 2})] * 3
    assert kgeo.SVM().fit(X, chain).classes_.tolist() == [frozenset({1}), frozenset({1, 2})]


@pytest.mark.skipif(not hasattr(np, "dtypes") or not hasattr(np.dtypes, "StringDType"),
                    reason="NumPy's StringDType is NumPy 2.0's")
def test_stringdtype_labels_are_str_labels(rng):
    """NumPy 2's StringDType holds str: scored against str labels (it was
    refused as another kind, 'T'), and its missing value named as one
    (np.unique raised NumPy's 'Cannot compare null')."""
    X, y = ck.make_count_data(rng, 30, 5, 2)
    text = np.array(["spam", "ham"])[y]
    model = kgeo.SVM().fit(X, text)
    expected = model.score(X, text)
    strings = text.astype(np.dtypes.StringDType())
    assert model.score(X, strings) == expected
    assert kgeo.SVM().fit(X, strings).score(X, text) == expected
    with_na = strings.astype(np.dtypes.StringDType(na_object=None))
    with_na[3] = None
    for call in (lambda: kgeo.SVM().fit(X, with_na), lambda: model.score(X, with_na)):
        with pytest.raises(ValueError, match=r"y contains 1 missing label\(s\) \(None\)"):
            call()


def test_score_takes_labels_of_any_number_type_and_weights_of_any_size(rng):
    """Bools, NumPy bools and Decimals are numbers: equal to the integer
    classes they stand for, scored, not refused as another kind of label.
    Weights near float64's largest (their sum overflows) give the share of
    weight predicted right, not inf / inf."""
    import decimal

    X, y = ck.make_count_data(rng, 40, 5, 2)
    model = kgeo.SVM().fit(X, y)
    expected = model.score(X, y)
    assert expected < 1.0  # some wrong: a wrong kind would show
    for labels in (y.astype(bool), np.array([np.bool_(v) for v in y], dtype=object),
                   np.array([decimal.Decimal(int(v)) for v in y], dtype=object)):
        assert model.score(X, labels) == expected
    assert model.score(X, y, sample_weight=np.full(40, 1e308)) == expected


def test_class_weight_keys_that_equal_a_class_are_found(rng):
    # Looked up among classes_.tolist(): datetime64[D] classes became
    # datetime.date there, and an np.datetime64 key was "not among the
    # classes [datetime.date(2020, 1, 1), ...]".
    X, y = ck.make_count_data(rng, 30, 5, 2)
    days = np.where(y == 0, np.datetime64("2020-01-01", "D"), np.datetime64("2021-01-01", "D"))
    weighted = kgeo.SVM(class_weight={np.datetime64("2020-01-01"): 3.0}).fit(X, days)
    np.testing.assert_array_equal(weighted.class_weight_, [3.0, 1.0])
    by_number = kgeo.SVM(class_weight={0: 3.0}).fit(X, y)
    np.testing.assert_array_equal(weighted.dual_coef_, by_number.dual_coef_)
    key = np.datetime64("2022-01-01")
    with pytest.raises(ValueError, match=rf"class_weight has label {re.escape(repr(key))}, "
                                         r"which is not among the classes"):
        kgeo.SVM(class_weight={np.datetime64("2022-01-01"): 3.0}).fit(X, days)


def test_pickle_round_trip(rng):
    X, y = ck.make_count_data(rng, 40, 6, 3)
    model = kgeo.SVM(kernel="ngd").fit(X, y)
    loaded = pickle.loads(pickle.dumps(model))
    assert_identical(model, loaded)
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


def test_a_model_pickles_after_predicting(rng):
    """Prediction keeps compiled objects derived from the support vectors
    (their prepared rows and index), which do not pickle: a model that has
    predicted pickles without them, and predicts the same bits once loaded."""
    X, y = ck.make_count_data(rng, 50, 8, 3)
    model = kgeo.SVM(kernel="ngd").fit(X, y)
    dec = model.decision_function(X)
    assert model._prediction_cache
    loaded = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(loaded.decision_function(X), dec)


def test_loaded_support_vectors_are_read_only(rng):
    """Loading a model freezes its support vectors again, as fit does: the
    prediction cache rebuilt after loading would miss an edit in place."""
    X, y = ck.make_count_data(rng, 40, 6, 2, sparse=True)
    for data in (X, X.toarray()):
        loaded = pickle.loads(pickle.dumps(kgeo.SVM(kernel="ngd").fit(data, y)))
        values = loaded.support_vectors_.data if sp.issparse(data) else loaded.support_vectors_
        with pytest.raises(ValueError, match="read-only"):
            values[0] = 1.0


def test_repr_shows_only_parameters_that_differ_from_the_defaults():
    """A parameter equal to its default is left out of the repr even when it
    is another object (a float computed, a string built at run time), as in
    scikit-learn's repr."""
    assert repr(kgeo.SVM(C=float("1"), kernel="".join(["n", "gd"]), tol=1e-3 * 1.0)) == "SVM()"
    assert repr(kgeo.SVM(C=2.0, kernel="rbf")) == "SVM(C=2.0, kernel='rbf')"


@pytest.mark.parametrize("params, shown", [
    ({"C": True}, "SVM(C=True)"),
    ({"C": 1}, "SVM(C=1)"),
    ({"C": np.array([1.0])}, "SVM(C=array([1.]))"),
    ({"break_ties": 0}, "SVM(break_ties=0)"),
    ({"verbose": False}, "SVM(verbose=False)"),
])
def test_repr_shows_a_value_equal_to_its_default_but_of_another_type(params, shown):
    """Compared by repr, as scikit-learn's repr compares them: under ==,
    True, 0 and array([1.]) matched their defaults, and the repr hid values
    that fit refuses."""
    assert repr(kgeo.SVM(**params)) == shown


def test_repr_shows_an_array_parameter_it_cannot_compare():
    """A parameter whose == with the default gives an array (no single truth
    value) is shown, not hidden as if it were the default (from mutation
    testing of _base.py)."""
    assert (repr(kgeo.PLSAFisherEmbedding(n_components=np.array([5, 10])))
            == "PLSAFisherEmbedding(n_components=array([ 5, 10]))")


def test_repr_leaves_out_a_parameter_still_at_a_nan_default():
    """repr shows the parameters changed from their defaults, as
    scikit-learn's does, which takes a NaN left at a NaN default as
    unchanged, though NaN != NaN: the default object itself (a mutation
    review: comparing with == alone showed it), or another NaN (as
    scikit-learn's ``is_scalar_nan``; a review)."""
    class WithNan(kgeo.SVM):
        def __init__(self, C=1.0, missing=float("nan")):
            super().__init__(C=C)
            self.missing = missing

    assert repr(WithNan()) == "WithNan()"
    assert repr(WithNan(missing=np.nan)) == "WithNan()"
    assert repr(WithNan(missing=np.float64("nan"))) == "WithNan()"
    assert repr(WithNan(missing=0.5)) == "WithNan(missing=0.5)"
    assert repr(WithNan(missing=np.array([np.nan]))) == "WithNan(missing=array([nan]))"


@pytest.mark.parametrize("base", [kgeo.SVM, kgeo.PLSA, kgeo.MultinomialEmbedding])
def test_a_subclass_taking_keyword_arguments_has_only_its_named_parameters(base):
    """scikit-learn's rule (BaseEstimator._get_param_names): the parameters
    are the named ones of ``__init__``; a ``**kwargs`` passed on to the base
    class is not one. A subclass with its own named parameter and
    ``**kwargs`` must still give get_params, set_params and repr (reading
    one named 'kwargs' failed with AttributeError: a mutation review)."""
    class Tuned(base):
        def __init__(self, tuned=1, **kwargs):
            super().__init__(**kwargs)
            self.tuned = tuned

    estimator = Tuned(tuned=2)
    assert estimator.get_params() == {"tuned": 2}
    assert estimator.set_params(tuned=3) is estimator and estimator.tuned == 3
    assert repr(estimator) == "Tuned(tuned=3)"
    with pytest.raises(ValueError, match="Invalid parameter 'kwargs'"):
        estimator.set_params(kwargs={})


def test_set_params_names_the_valid_parameters():
    """An unknown name is refused with the estimator's __init__ parameters,
    sorted and comma-separated, as scikit-learn lists them."""
    with pytest.raises(ValueError, match=r"^Invalid parameter 'smooth_idf' for estimator "
                                         r"MultinomialEmbedding; valid parameters are: norm, "
                                         r"weighting$"):
        kgeo.MultinomialEmbedding().set_params(smooth_idf=True)


@pytest.mark.parametrize("name", ["_centre", "_private", "C_", "dual_coef_"])
def test_set_params_refuses_any_name_that_init_does_not_take(name):
    # scikit-learn's set_params takes exactly the __init__ parameters: a
    # private or fitted attribute's name is a typo, refused with the valid
    # names, and sets nothing.
    for estimator in (kgeo.SVM(), kgeo.PLSA(), kgeo.MultinomialEmbedding()):
        with pytest.raises(ValueError, match="Invalid parameter"):
            estimator.set_params(**{name: 1})
        assert name not in vars(estimator)


def test_fitted_means_the_attribute_asked_for():
    """check_is_fitted looks for the attribute each method needs (dual_coef_
    for an SVM, idf_ for an embedding), not for n_features_in_ alone, which a
    half-set-up estimator can carry."""
    from kgeo._base import check_is_fitted

    model = kgeo.SVM(kernel="linear")
    model.n_features_in_ = 2
    with pytest.raises(kgeo.NotFittedError, match=r"^This SVM instance is not fitted yet"):
        model.predict(np.ones((1, 2)))
    embedding = kgeo.MultinomialEmbedding()
    embedding.n_features_in_ = 2
    with pytest.raises(kgeo.NotFittedError, match=r"^This MultinomialEmbedding instance"):
        embedding.transform(np.ones((1, 2)))
    embedding.idf_ = None
    check_is_fitted(embedding, "idf_")  # present, even as None: fitted


@pytest.mark.parametrize("params,match", [
    ({"C": 0.0}, r"C must be finite and > 0, got 0.0"),
    ({"kernel": "cosine"}, r"Unknown kernel 'cosine'"),
    ({"tol": -1.0}, r"tol must be finite and > 0"),
    ({"max_iter": -2}, r"max_iter must be -1"),
    ({"decision_function_shape": "ova"}, r"decision_function_shape must be 'ovr' or 'ovo'"),
    ({"class_weight": {7: 2.0}}, r"class_weight has label 7"),
    ({"class_weight": "auto"}, r"class_weight must be a dict, 'balanced' or None"),
    ({"shrinking": "yes"}, r"shrinking must be True, False or 'auto', got 'yes'"),
    # Parameters the chosen kernel does not read are checked all the same.
    ({"kernel": "linear", "gamma": "bogus"}, r"gamma must be 'scale', 'auto' or a float > 0, got 'bogus'"),
    ({"kernel": "ngd", "gamma": -1.0}, r"gamma must be finite and > 0, got -1.0"),
    ({"kernel": "rbf", "gamma": -1.0}, r"kernel 'rbf': gamma must be > 0, got -1.0"),
    ({"kernel": "linear", "degree": 1.5}, r"degree must be an integer >= 1, got 1.5"),
    ({"kernel": "rbf", "coef0": float("nan")}, r"coef0 must be a finite real number, got nan"),
    ({"kernel": "ngd", "t": -1.0}, r"t must be finite and > 0, got -1.0"),
    # np.float32's inf and NaN are no Python floats: int() of them raised
    # OverflowError, or a ValueError that did not name degree.
    ({"kernel": "ngd", "degree": np.float32("inf")}, r"degree must be an integer >= 1, got "),
    ({"kernel": "ngd", "degree": np.float32("nan")}, r"degree must be an integer >= 1, got "),
    # Unused, None was a TypeError, where a kernel reading it gives ValueError.
    ({"kernel": "ngd", "t": None}, r"t must be a real number, got None"),
    ({"kernel": "ngd", "gamma": None}, r"gamma must be a real number, got None"),
    ({"kernel": "linear", "normalize": "yes"}, r"normalize must be True or False, got 'yes'"),
    ({"shrinking": 1}, r"shrinking must be True, False or 'auto', got 1"),
    ({"cache_dtype": "float16"}, r"cache_dtype must be 'float64' or 'float32', got 'float16'"),
    ({"cache_dtype": None}, r"cache_dtype must be 'float64' or 'float32', got None"),
    ({"cache_dtype": np.int32}, r"cache_dtype must be 'float64' or 'float32', got <class"),
    ({"verbose": 1.5}, r"verbose must be an integer or a bool, got 1.5"),
    ({"verbose": "1"}, r"verbose must be an integer or a bool, got '1'"),
    ({"class_weight": [1.0, 2.0]}, r"class_weight must be a dict, 'balanced' or None, got list"),
    ({"class_weight": 2.0}, r"class_weight must be a dict, 'balanced' or None, got float"),
])
def test_invalid_parameters(params, match, rng):
    X, y = ck.make_count_data(rng, 20, 5, 2)
    with pytest.raises(ValueError, match=match):
        kgeo.SVM(**params).fit(X, y)


def test_invalid_data(rng):
    X, y = ck.make_count_data(rng, 20, 5, 2)
    with pytest.raises(ValueError, match="negative entries"):
        kgeo.SVM(kernel="ngd").fit(X - 1.0, y)
    kgeo.SVM(kernel="linear").fit(X - 1.0, y)  # fine for a Euclidean kernel
    with pytest.raises(ValueError, match="at least 2 classes"):
        kgeo.SVM().fit(X, np.zeros(20))
    model = kgeo.SVM().fit(X, y)
    with pytest.raises(ValueError, match="X has 4 features, but SVM is expecting 5"):
        model.predict(X[:, :4])
    with pytest.raises(kgeo.NotFittedError):
        kgeo.SVM().predict(X)


# ==========================================================================
# Regressions: defects found by these tests, fixed
# ==========================================================================

def test_alpha_never_exceeds_its_bound():
    # All of class 0 at C and the one class-2 sample at 4 C = C_2: the last
    # alpha is computed by a subtraction that used to come out 1 ulp above C.
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 3.0], [3.0, 0.0], [0.0, 1.0]])
    y = np.array([0, 0, 2, 0, 0])
    C = 0.0038105416996505894
    model = kgeo.SVM(kernel="linear", C=C, class_weight={2: 4.0}).fit(X, y)
    assert np.all(np.abs(model.dual_coef_) <= C * model.class_weight_.max())
    assert np.all(np.abs(model.dual_coef_[0, :4]) <= C)
    ck.check_svm(model, X, y)


@pytest.mark.parametrize("kernel", ["linear", "ngd"])
def test_a_gap_equal_to_tol_is_met(kernel, rng):
    """SMO stops when the gap is at most tol, equality included. Every G_k
    starts at -1, so the first gap is exactly 2: with tol=2 no pair takes a
    step (every alpha stays 0, as PairSolutions' zero start assumes), and
    with the float below 2 every pair takes at least one. A solver stopping
    only below tol passed the suite (mutation review 181)."""
    X, y = ck.make_count_data(rng, 60, 8, 3)
    model = kgeo.SVM(kernel=kernel, tol=2.0).fit(X, y)
    assert np.all(model.n_iter_ == 0) and model.fit_status_ == 0
    assert np.all(model.dual_coef_ == 0)
    stepped = kgeo.SVM(kernel=kernel, tol=np.nextafter(2.0, 0.0)).fit(X, y)
    assert np.all(stepped.n_iter_ >= 1)


def test_small_tol_is_met():
    X, y = ck.make_count_data(np.random.default_rng(0), 30, 6, 2)
    # The near-tie margin of the working-set selection used to leave a gap of
    # ~1e-9 here whatever tol was asked for.
    for tol in (1e-10, 1e-12):
        model = kgeo.SVM(kernel="rbf", gamma=0.1, C=10.0, tol=tol).fit(X, y)
        ck.check_svm(model, X, y, tol=tol)


def test_tol_below_float64_resolution_stops_with_a_warning():
    """tol=1e-16 is below the rounding of a gradient of magnitude ~1: SMO's
    steps can then cycle with a gap that no longer falls (NGD, NED and RBF
    ran forever here). Each fit now ends soon, met by an exact gap of 0 or
    stopped with the warning that tol cannot be resolved, with the model a
    resolvable tol gives."""
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, (40, 8)).astype(float)
    X[:, 0] += 1
    y = np.array([0, 1] * 20)
    stuck = 0
    for kernel in ("ngd", "rbf", "ned"):
        resolvable = kgeo.SVM(kernel=kernel, tol=1e-12).fit(X, y)
        for tol in (1e-16, 1e-300):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                # max_iter only turns a regression into a failure, not a hang.
                model = kgeo.SVM(kernel=kernel, tol=tol, max_iter=10**6).fit(X, y)
            messages = [str(w.message) for w in caught]
            assert not any("max_iter" in m for m in messages), (kernel, tol, messages)
            assert model.n_iter_[0] < 10**5
            stuck += any("tol is below what this problem can resolve" in m for m in messages)
            np.testing.assert_allclose(model.decision_function(X),
                                       resolvable.decision_function(X), rtol=0, atol=1e-9)
            ck.check_svm(model, X, y, tol=1e-12)
    assert stuck >= 3  # the path this test is about was taken


def test_the_stuck_gap_rule_judges_all_variables():
    """With shrinking=True the rule once judged the shrunk set alone and
    stopped 45,000 iterations early, gap 0.026 for tol=1e-9, with a warning
    that blamed tol; the variables left out still violated."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(150, 3))
    y = (X[:, 0] + 0.7 * rng.normal(size=150) > 0).astype(int)
    X += 100.0  # an intercept of -168: the gradient is large, the tol small beside it
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        shrunk = kgeo.SVM(kernel="linear", C=100.0, tol=1e-9, shrinking=True).fit(X, y)
        plain = kgeo.SVM(kernel="linear", C=100.0, tol=1e-9, shrinking=False).fit(X, y)
    np.testing.assert_allclose(shrunk.decision_function(X), plain.decision_function(X),
                               rtol=0, atol=1e-5)


@pytest.mark.parametrize("shrinking", [True, False, "auto"])
def test_a_converged_pair_is_never_called_stuck(shrinking):
    """Found by a review's fuzzing: with shrinking="auto" the pair ended at a
    gap of 9.1e-13 (tol 1e-3) after 59,981 iterations, yet warned that SMO
    stopped before tol: the stuck rule compared that gap with the least gap
    of a shrunk set (2.2e-16, 47,000 iterations before), and it ran before
    the selection that ends a pair within tol."""
    X = np.array([-4.0, 2.0, 2.0, -1.0, -3.0, 2.0, -1.0, -1.0, 1.0, 2.0])[:, None]
    y = np.array([3, 2, 3, 2, 3, 2, 2, 2, 3, 3])
    C = 2607.858510651656
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        model = kgeo.SVM(kernel="linear", C=C, shrinking=shrinking).fit(X, y)
    ck.check_svm(model, X, y)


@pytest.mark.parametrize("far", [1e5, 1e7])
@pytest.mark.parametrize("shrinking", ["auto", False])
def test_a_far_row_outside_the_support_does_not_make_a_slow_pair_stuck(shrinking, far):
    """The stuck rule measured G's rounding by max |K_kk| sum(alpha): one
    row far from the others (K_kk = 1e10) whose alpha stays 0 made it 1e15,
    and a slow pair (C = 1e4, 740,000 steps without that row) ended as
    stalled after 20,000 steps at an exact KKT gap of 2.35 with tol=1e-3 (a
    review; SVC given the same matrix converges). A pair is now judged
    stuck on an exact G and the size of the terms of the two variables that
    set its gap (over every row, the far row's own terms, K = 1e7 and more,
    still made it stall at 1e7: a second review)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] + 0.8 * rng.normal(size=30) > 0).astype(int)
    X, y = np.vstack([X, [[far, 0.0]]]), np.append(y, 1)  # deep on class 1's side
    K = X @ X.T
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        model = kgeo.SVM(kernel="precomputed", C=1e4, shrinking=shrinking).fit(K, y)
    assert model.fit_status_ == 0 and 30 not in model.support_
    assert ck.exact_kkt_gap(model, K, y, np.full(31, 1e4)) <= 1e-3


@pytest.mark.parametrize("shrinking", ["auto", True, False])
@pytest.mark.parametrize("tol", [1e-12, 1e-13])
def test_a_step_that_underflows_on_a_shrunk_set_is_no_stall(tol, shrinking):
    """A step that changes neither variable ended the pair as stalled even
    with variables shrunk: the active set's gap was below float64's
    resolution, but a variable left out violated far more (a review's case,
    from fits checking that integer weights are repeated samples: stopped
    after 1,578 steps at a true gap of 1.6 with tol=1e-13, intercept -1.6
    where the optimum has -1.0; with shrinking=False it converged). Such a
    step now brings every variable back, and only on all of them is a zero
    step a stall. The case is the same on every machine (every scan copy
    gives the same bits)."""
    X = np.array([[0, 0, 2, 1, 2, 2], [0, 2, 0, 1, 0, 1], [0, 2, 0, 1, 0, 1],
                  [0, 2, 0, 1, 0, 1], [0, 2, 0, 1, 0, 1], [1, 1, 0, 0, 2, 0],
                  [0, 0, 2, 0, 1, 1], [0, 0, 2, 0, 1, 1], [0, 0, 0, 0, 1, 2],
                  [0, 2, 0, 0, 0, 0], [1, 4, 0, 0, 2, 0], [1, 4, 0, 0, 2, 0],
                  [1, 1, 3, 0, 1, 0], [2, 2, 1, 1, 0, 0], [0, 4, 1, 1, 0, 1],
                  [0, 4, 1, 1, 0, 1], [0, 4, 1, 1, 0, 1], [1, 0, 0, 3, 0, 1],
                  [1, 0, 0, 3, 0, 1], [1, 0, 0, 3, 0, 1], [1, 0, 3, 1, 0, 3],
                  [1, 0, 1, 0, 1, 0], [1, 2, 0, 1, 1, 2], [0, 0, 0, 0, 1, 1],
                  [1, 0, 3, 0, 5, 1], [1, 0, 1, 3, 0, 1], [1, 0, 1, 3, 0, 1],
                  [0, 2, 2, 2, 1, 1], [0, 2, 2, 2, 1, 1], [0, 2, 2, 2, 1, 1],
                  [0, 1, 1, 1, 0, 0]], dtype=float)
    y = np.array([1, 2, 2, 2, 2, 2, 2, 2, 2, 1, 2, 2, 1, 1, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2,
                  2, 2, 2, 2, 2, 2, 1])
    C, class_weight = 51.130082712417455, {1: 46 / 27, 2: 23 / 33}
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        model = kgeo.SVM(kernel="linear", C=C, class_weight=class_weight, tol=tol,
                         shrinking=shrinking).fit(X, y)
    assert model.fit_status_ == 0
    box = C * np.array([class_weight[label] for label in y])
    assert ck.exact_kkt_gap(model, X @ X.T, y, box) <= 10 * tol
    np.testing.assert_allclose(model.intercept_, [-1.0], rtol=0, atol=1e-9)


@pytest.mark.parametrize("shrinking", [True, False])
def test_a_step_whose_other_change_rounds_away_is_no_stall(shrinking):
    """An SMO step moves alpha_i and alpha_j by the same amount, but in
    float64 the change of the larger one can round away while its smaller
    partner's does not: the step still makes progress and
    must not end the pair as stalled. Only a step that changes neither
    variable is one (found by mutation testing: ``dai == 0 or daj == 0``
    ended such fits with the tol-below-resolution warning, gap > tol; this
    case, from a search of random problems with that mutant, too). The case
    hangs on the rounding of one step at this exact C; it is the same on
    every machine, since every scan copy gives the same bits. tol=1e-15 is
    near G's rounding (G's terms reach max |K| sum(alpha) = 520): the gap
    SMO computes is checked on an exact G, and is within tol in exact
    arithmetic too."""
    X = np.array([
        [0.07, -0.098, -0.157], [-0.292, -0.035, 0.125], [0.003, 0.051, 0.102],
        [-0.088, 0.265, -0.088], [0.037, 0.274, -0.011], [0.011, -0.051, 0.033],
        [-0.213, -0.065, 0.169], [0.021, -0.024, 0.037], [0.041, 0.015, 0.058],
        [-0.166, 0.059, -0.067], [0.079, -0.002, -0.1], [-0.007, -0.101, 0.101],
        [-0.003, 0.085, -0.112], [0.162, -0.03, 0.137], [0.085, -0.11, 0.032],
        [-0.054, 0.041, 0.143], [0.069, 0.107, -0.117], [0.02, 0.036, 0.109],
        [-0.062, 0.057, 0.043], [-0.152, -0.104, 0.044], [-0.118, -0.123, 0.09],
        [0.029, -0.024, 0.011], [-0.04, -0.054, -0.046], [0.039, 0.132, -0.047],
        [-0.007, -0.022, -0.126], [0.025, 0.087, -0.084], [0.083, -0.057, 0.115],
        [0.122, -0.038, -0.2], [-0.035, -0.139, -0.131], [-0.025, 0.136, -0.009],
        [-0.022, -0.185, -0.061], [-0.14, 0.052, -0.053], [-0.004, -0.002, -0.019],
        [0.095, 0.049, -0.032], [0.015, 0.055, 0.137]])
    y = np.array([0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 1, 0,
                  1, 1, 0, 0, 1, 0, 1, 0, 0, 1])
    C = 187.2638527390644
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        model = kgeo.SVM(kernel="linear", C=C, tol=1e-15, shrinking=shrinking).fit(X, y)
    assert model.fit_status_ == 0
    ck.check_svm(model, X, y, tol=1e-15)
    K = kgeo.pairwise_kernels(X, kernel="linear")  # the values the solver used
    assert ck.exact_kkt_gap(model, K, y, np.full(len(y), C)) <= 1e-15


@pytest.mark.parametrize("shrinking", ["auto", True, False])
def test_a_pair_whose_alphas_fell_is_not_taken_as_converged(shrinking):
    """Weights of 1e5-1e10: sum(alpha) stays near 1.5e8 for 10,000 steps, then
    the alphas fall near 0. G, updated step by step (and rebuilt from G_bar
    on a shrunk set), keeps the rounding of the terms it summed, hundreds
    here; judged by sum(alpha) at the end, the gap SMO computed went
    unchecked, and the pair ended converged at an exact gap of 4.2 (a review;
    SVC does not converge either). Either the pair converges on an exact G,
    or it says it did not."""
    X = np.array([[60000., 50000.], [10000., 90000.], [10000., 90000.], [10000., 10000.]])
    y = np.array([3, 0, 3, 0])
    weight = np.array([1e5, 1e7, 1e10, 1e10])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = kgeo.SVM(kernel="linear", shrinking=shrinking).fit(X, y, sample_weight=weight)
    said = any(issubclass(w.category, kgeo.ConvergenceWarning) for w in caught)
    if model.fit_status_ == 0:
        assert not said
        assert ck.exact_kkt_gap(model, X @ X.T, y, weight) <= 1e-3
    else:
        assert said


def test_a_step_shorter_than_the_snap_from_c_is_kept():
    """alpha_0 must leave C = 1e4 by 1e-10, less than SNAP C: the snap to C,
    meant for the rounding of a clipped step, undid that unclipped one every
    time, and the pair stopped as stalled, warning that tol was below what
    the problem resolves, at an exact gap of 1e-2 (a review; SVC converges
    in 2 steps). Clipped steps alone are snapped so, near C as near 0."""
    K = np.array([[1e8, 0.0, 1e-6], [0.0, 1e-20, 0.0], [1e-6, 0.0, 1e-20]])
    y = np.array([1, 1, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        model = kgeo.SVM(kernel="precomputed", C=1e4).fit(K, y)
    assert model.fit_status_ == 0
    assert ck.exact_kkt_gap(model, K, y, np.full(3, 1e4)) <= 1e-3
    np.testing.assert_allclose(model.decision_function(K), [1.0, 1.0, 1.0], rtol=1e-12)


@pytest.mark.parametrize("tol", [1e-13, 1e-16])
def test_a_step_whose_partner_rounds_away_does_not_creep_off_c(tol):
    """Below G's rounding, a step shorter than an ulp of its partner (593)
    moves only the variable at C (43.2), an ulp at a time: snapped back to
    C, the step changes nothing and the pair ends as stalled at once (69
    steps), with sum(y alpha) = 0 to 2.5e-13. Not snapped, SMO crept off C
    for 20,000 steps, sum(y alpha) 2.8e-10 off (a review)."""
    X = np.array([[0], [0], [1], [3], [3], [3], [0], [0], [3], [0], [3], [3], [3], [4], [3],
                  [2], [3], [3], [1]], dtype=float)
    y = np.array([0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1, 1])
    weight = np.array([
        1.2649172746390624, 0.011682835679266567, 0.10785328213185111, 0.018357090309858024,
        4.616266820184791, 0.12304524153885876, 0.4101572852699803, 0.01738290354581486,
        0.08248642645957636, 3.334123177210283, 0.47995223769067724, 0.02175268901706864,
        0.01919960555300987, 43.920328972858755, 41.78646916312421, 0.21243718773317058,
        0.8736690069253403, 62.03169256792361, 6.085305952193809])
    with pytest.warns(kgeo.ConvergenceWarning, match="tol is below what this problem"):
        model = kgeo.SVM(kernel="linear", C=12.956829679661668, tol=tol).fit(
            X, y, sample_weight=weight)
    assert model.n_iter_[0] < 1000
    assert abs(math.fsum(model.dual_coef_[0])) < 1e-12


def test_bytes_and_object_labels_reach_the_warnings_and_messages():
    # The warnings named the classes with .item(), which plain bytes and str
    # (an object array) do not have; a list of bytes stays bytes.
    X = np.array([[3., 0., 1.], [2., 1., 0.], [0., 2., 3.], [1., 3., 4.], [1., 1., 1.],
                  [0., 4., 1.]])
    with pytest.warns(kgeo.ConvergenceWarning, match=r"first \(b'a', b'b'\)"):
        model = kgeo.SVM(max_iter=1).fit(X, [b"a"] * 3 + [b"b"] * 3)
    assert model.classes_.dtype.kind == "S"
    with pytest.warns(kgeo.ConvergenceWarning, match=r"first \('a', 'b'\)"):
        kgeo.SVM(max_iter=1).fit(X, np.array(list("aaabbb"), dtype=object))


@pytest.mark.parametrize("kernel", ["ned", "rbf"])
def test_dense_rows_far_from_the_origin_are_centred(kernel):
    """Around 300 every pair would take the exact route of close pairs (a
    merge per pair, 8-12x slower): fit moves dense rows to their mean, and
    prediction moves the support vectors and its rows the same way, so the
    model is the one of the centred data, and so is one saved without it."""
    from kgeo._pairwise import translation_centre

    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 5))
    y = (X[:, 0] + 0.5 * rng.normal(size=60) > 0).astype(int)
    params = {"gamma": 0.2} if kernel == "rbf" else {}
    model = kgeo.SVM(kernel=kernel, **params).fit(X + 300.0, y)
    # The column means to 26 bits, so that every entry subtracts exactly.
    np.testing.assert_allclose(model._centre, (X + 300.0).mean(axis=0), rtol=2.0 ** -26)
    moved = (X + 300.0) - model._centre
    assert np.array_equal(moved + model._centre, X + 300.0)
    centred = kgeo.SVM(kernel=kernel, **params).fit(X, y)
    np.testing.assert_allclose(model.decision_function(X + 300.0),
                               centred.decision_function(X), rtol=0, atol=1e-9)
    del model.__dict__["_centre"]  # as unpickled from before the centring
    np.testing.assert_allclose(model.decision_function(X + 300.0),
                               centred.decision_function(X), rtol=0, atol=1e-9)
    # Sparse rows keep their zeros: not centred.
    assert translation_centre(kernel, sp.random(50, 40, density=0.1, format="csr")) is None
    assert translation_centre("linear", sp.csr_matrix(X + 300.0)) is None


def test_centring_holds_a_slice_of_rows_dense_at_a_time(monkeypatch):
    """translation_centre, rows_to_move and fits_unmoved read dense CSR rows
    a slice at a time, and centred moves them in compiled passes (whole, the
    centring of a fit of 10,000 x 1,000 dense rows took 5 times X's size):
    the same centre and choices with slices of one row as with one slice,
    centred rows those of NumPy's subtraction (in the order asked for), and
    no temporary near X's dense size."""
    import tracemalloc

    from kgeo import _pairwise, _validation

    rng = np.random.default_rng(7)
    dense = rng.normal(size=(300, 40)) + 300.0
    dense[:, 3] = rng.exponential(size=300)  # does not subtract its rounded mean exactly
    dense[5] = 0.0  # a row without entries, and
    dense[8, :30] = 0.0  # a sparse row: compared unmoved
    X = sp.csr_matrix(dense)
    order = rng.permutation(300)

    def results():
        centre = _pairwise.translation_centre("rbf", X)
        moved = _pairwise.centred(X, centre, order)
        return (centre, moved, _pairwise.rows_to_move(X, centre, True),
                _pairwise.fits_unmoved(X), kgeo.SVM(kernel="rbf").fit(dense, dense[:, 0] > 300))

    whole = results()
    monkeypatch.setattr(_validation, "_DENSE_CHUNK_VALUES", 7)  # a row at a time
    sliced = results()
    centre, moved = sliced[0], sliced[1]
    assert centre[3] == 0.0 and np.all(centre[np.arange(40) != 3] > 290.0)
    np.testing.assert_array_equal(centre, whole[0])
    expected = sp.csr_matrix(dense[order] - centre)
    for got in (moved, whole[1]):
        assert got.has_canonical_format and got.indices.dtype == np.int32
        for name in ("data", "indices", "indptr"):
            np.testing.assert_array_equal(getattr(got, name), getattr(expected, name))
    # Columns out of order in X's rows: sorted first.
    shuffled = X.copy()
    for i in range(shuffled.shape[0]):
        row = slice(shuffled.indptr[i], shuffled.indptr[i + 1])
        shuffled.indices[row], shuffled.data[row] = shuffled.indices[row][::-1], \
            shuffled.data[row][::-1]
    shuffled.has_sorted_indices = False
    got = _pairwise.centred(shuffled, centre, order)
    np.testing.assert_array_equal(got.toarray(), expected.toarray())
    np.testing.assert_array_equal(sliced[2], whole[2])
    np.testing.assert_array_equal(np.flatnonzero(~sliced[2]), [5, 8])  # the sparse rows
    assert sliced[3] == whole[3]
    assert_identical(sliced[4], whole[4])
    # X written between the passes (by another thread during a fit, whose X
    # is the caller's own arrays): refused, not stored past the counts (a
    # review: a segmentation fault).
    from kgeo._kernels import centred_rows

    for before, after in ((centre[X.indices], X.data), (X.data, centre[X.indices])):
        # Entries equal to their centre (0 once moved) before or after.
        arrays = (before.copy(), X.indices, X.indptr.astype(np.int64),
                  np.arange(300, dtype=np.int64), centre)
        counts = np.zeros(301, dtype=np.int64)
        centred_rows(*arrays, counts)
        indptr = np.cumsum(counts)
        arrays[0][:] = after
        with pytest.raises(ValueError, match="X changed while it was read"):
            centred_rows(*arrays, indptr, np.empty(indptr[-1]),
                         np.empty(indptr[-1], np.int32))
    for outside in (-1, 300):
        with pytest.raises(ValueError, match=r"rows must lie in \[0, 300\)"):
            centred_rows(*arrays[:3], np.array([outside]), centre, np.zeros(2, dtype=np.int64))
    one_row = (*arrays[:3], np.array([0, 1]), centre)
    with pytest.raises(ValueError, match="out_indptr must rise from 0"):  # (a review)
        centred_rows(*one_row, np.array([0, 5, 3]), np.empty(3), np.empty(3, np.int32))
    with pytest.raises(ValueError, match="indptr must rise from 0"):
        centred_rows(arrays[0][:10], *arrays[1:], np.zeros(301, dtype=np.int64))
    with pytest.raises(ValueError, match="centre must hold one value per column of X"):
        _pairwise.centred(X, centre[:-1])
    # The means as SciPy's X.mean takes them, each entry times 1/n (summed
    # first, a column near float64's largest value overflowed: no centre,
    # and the fit was refused as overflowing).
    huge = np.ldexp(np.round(np.ldexp(0.9, 26)), 1024 - 26)  # 26 bits, near 1.6e308
    columns = np.column_stack([np.full(40, huge), rng.normal(size=(40, 2))])
    np.testing.assert_array_equal(_pairwise.translation_centre("rbf", sp.csr_matrix(columns)),
                                  [huge, 0.0, 0.0])
    mantissa, exponent = np.frexp(np.asarray(X.mean(axis=0)).ravel())
    expected = np.ldexp(np.round(np.ldexp(mantissa, 26)), exponent - 26)
    expected[3] = 0.0  # (does not subtract exactly)
    np.testing.assert_array_equal(centre, expected)
    # Slices of 10,000 values: no temporary of the dense rows' 1.6 MB (the
    # build before: 5 times that for the centre, twice for the rows).
    dense = rng.normal(size=(2000, 100)) + 300.0
    X = sp.csr_matrix(dense)
    monkeypatch.setattr(_validation, "_DENSE_CHUNK_VALUES", 10_000)
    tracemalloc.start()
    try:
        centre = _pairwise.translation_centre("rbf", X)
        above_centre = tracemalloc.get_traced_memory()[1]
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        moved = _pairwise.centred(X, centre)
        above_rows = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    result_size = moved.data.nbytes + moved.indices.nbytes + moved.indptr.nbytes
    assert above_centre < dense.nbytes / 2
    assert result_size < above_rows < result_size + dense.nbytes / 2


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_a_dense_fit_frees_its_csr_copy_of_X_before_the_solve(kernel, monkeypatch):
    """Fitted on a float64 array, the solver runs without X made CSR (1.5
    times X), which the centred or sorted training rows made redundant: a
    dense rbf fit of 10,000 x 1,000 rows peaked 385 MB above its start with
    it, 271 MB without. The support vectors are then X's rows again: the
    same model, bit for bit, as from a list, whose CSR copy is kept."""
    import tracemalloc

    rng = np.random.default_rng(3)
    X = rng.normal(size=(1500, 400)) + 2.0
    X[rng.random(X.shape) < 0.05] = 0.0
    X[rng.random(X.shape) < 0.05] = -0.0
    y = rng.integers(0, 3, 1500)  # not sorted: the linear rows are a sorted copy
    held = []
    solve = kgeo.SVM._solve_pairs

    def measured(self, *args):
        held.append(tracemalloc.get_traced_memory()[0])
        return solve(self, *args)

    monkeypatch.setattr(kgeo.SVM, "_solve_pairs", measured)
    tracemalloc.start()
    try:
        array_model = kgeo.SVM(kernel=kernel, C=0.01).fit(X, y)
    finally:
        tracemalloc.stop()
    # The training rows (1.5 X, as CSR) and their index (X's size for dense
    # columns); X_checked would add 1.5 X.
    assert held[0] < 3.2 * X.nbytes, (held[0] / X.nbytes)  # 2.5 X; 3.9 X before
    for other_form in (np.asfortranarray(X), X.tolist()):
        model = kgeo.SVM(kernel=kernel, C=0.01).fit(other_form, y)
        for name in ("support_", "dual_coef_", "intercept_", "support_vectors_"):
            a, b = getattr(model, name), getattr(array_model, name)
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
        assert model.support_vectors_.flags.c_contiguous
    assert not np.any(np.signbit(array_model.support_vectors_[array_model.support_vectors_ == 0]))
    # Samples of weight 0 are left out: support_ numbers the given X still.
    weight = rng.random(1500)
    weight[::3] = 0.0
    weighted = kgeo.SVM(kernel=kernel, C=0.01).fit(X, y, sample_weight=weight)
    np.testing.assert_array_equal(weighted.support_vectors_, X[weighted.support_] + 0.0)
    assert not np.any(weight[weighted.support_] == 0.0)


@pytest.mark.parametrize("kernel", ["ned", "rbf"])
def test_centring_never_rounds_the_rows(kernel):
    """An outlier row drags the column means far from the other rows; moved
    by them, rows 1e-6 apart would lose their distance to the rounding of
    x - c (NED was 1.3 % off). Such data are not centred; nor is a sparse Y
    (centring would fill it in), and Y far on the other side of X's mean
    (whose centred rows would overflow) is not moved either."""
    X = np.array([[1.0, 2.0], [1.0 + 1e-6, 2.0], [1e9, 1e9]])
    params = {"gamma": 1e12} if kernel == "rbf" else {}
    K = kgeo.pairwise_kernels(X, kernel=kernel, **params)
    exact_d = (1.0 + 1e-6) - 1.0  # the stored rows' distance, exact (Sterbenz)
    expected = -exact_d if kernel == "ned" else np.exp(-1e12 * exact_d ** 2)
    np.testing.assert_allclose(K[0, 1], expected, rtol=1e-12)
    X = np.full((2, 20), 1.4e153)
    Y = np.full((1, 20), -1.4e153)
    if kernel == "ned":
        np.testing.assert_allclose(kgeo.pairwise_kernels(X, Y, kernel="ned"),
                                   -2.8e153 * np.sqrt(20), rtol=1e-12)
    # Columns that do not subtract the rounded mean exactly keep a centre of
    # 0; the others are centred (and fast).
    from kgeo._pairwise import translation_centre

    rng = np.random.default_rng(0)
    C = rng.normal(size=(200, 6)) + 300.0
    C[:, 5] = rng.exponential(size=200)
    centre = translation_centre(kernel, sp.csr_matrix(C))
    assert centre[5] == 0.0 and np.all(np.abs(centre[:5] - 300.0) < 1.0)
    assert np.array_equal((C - centre) + centre, C)
    # A sparse Y compared with a dense X is not filled in.
    Y = sp.random(20, 6, density=0.1, format="csr", random_state=0)
    np.testing.assert_allclose(kgeo.pairwise_kernels(C, Y, kernel=kernel, **params),
                               kgeo.pairwise_kernels(C, Y.toarray() + 0.0, kernel=kernel,
                                                     **params), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kernel", ["ned", "rbf"])
def test_a_rows_label_does_not_depend_on_rows_the_centre_cannot_move(kernel):
    """Every test row is moved by the fitted centre, whatever the rows
    predicted with it: a row that does not subtract it exactly, or zero
    rows, once switched the whole call to uncentred values, whose last bits
    flipped a vote of this row (second review)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    y = (X[:, 0] + 0.5 * rng.normal(size=60) > 0).astype(int)
    params = {"gamma": 0.2} if kernel == "rbf" else {}
    model = kgeo.SVM(kernel=kernel, **params).fit(X + 300.0, y)
    rows = 300.0 + rng.normal(size=(200, 5))
    alone = np.concatenate([model.decision_function(r[None]) for r in rows])
    for extra in (np.full((1, 5), 0.1234567), np.zeros((2, 5))):
        together = model.decision_function(np.vstack([rows, extra]))[:200]
        assert together.tobytes() == alone.tobytes()


def test_rows_the_centre_cannot_move_are_compared_as_given():
    """A row of Y (or a predicted row) that does not subtract X's centre
    exactly, or whose square would overflow once moved, is compared with
    the rows as given, by itself: rounding it to the centre's grid lost
    its distance (0 instead of 1 ulp; a vote flipped), and the overflow
    refused a row that is fine as it is (third review)."""
    X = np.array([[2.0], [16.0]])  # centre 9: both subtract exactly
    Y = np.array([[np.nextafter(2.0, 3.0)]])
    assert kgeo.pairwise_kernels(X, Y, kernel="ned")[0, 0] == -2.0 ** -51
    np.testing.assert_allclose(kgeo.pairwise_kernels(X, Y, kernel="rbf", gamma=1e30)[0, 0],
                               np.exp(-1e30 * 2.0 ** -102), rtol=1e-12)
    X = np.array([[0.0]] * 5 + [[1.0]] * 5 + [[2.0 ** 53]] * 3)
    model = kgeo.SVM(kernel="ned", C=10.0).fit(X, [0] * 5 + [1] * 8)
    T = np.array([[0.1], [0.3], [0.4], [0.45], [0.55], [0.7]])
    unmoved = pickle.loads(pickle.dumps(model))
    del unmoved.__dict__["_centre"]
    np.testing.assert_allclose(model.decision_function(T), unmoved.decision_function(T),
                               rtol=1e-12)
    np.testing.assert_array_equal(model.predict(T), [0, 0, 0, 0, 1, 1])
    model = kgeo.SVM(kernel="ned").fit([[4e153], [4.5e153], [5.5e153], [6e153]], [0, 0, 1, 1])
    # SVC on the kernel of the rows scaled by 1e-153, with C = 1e153, at tol 1e-12.
    np.testing.assert_allclose(model.decision_function([[-2e153]]), [-1.0], rtol=1e-6)
    # A constant tiny column is not moved to 1e-158, where its square underflows.
    assert np.array_equal(kgeo.pairwise_kernels(np.array([[1e-150, 5.0]] * 3), kernel="ned"),
                          np.zeros((3, 3)))


@pytest.mark.parametrize("kernel", ["ned", "rbf"])
def test_row_routes_depend_on_the_row_alone(kernel):
    """A dense row of Y is moved with X whatever the rest of Y (a sparse rest
    once turned the whole call unmoved); a row that cannot be moved exactly,
    next to data whose squares leave float64 as given, is moved anyway
    rather than failing every row (fourth review)."""
    params = {"gamma": 0.5} if kernel == "rbf" else {}
    rng = np.random.default_rng(0)
    X = 300 + 0.5 * rng.standard_normal((30, 8))
    Y = np.zeros((3, 8))
    Y[0] = 300 + 0.5 * rng.standard_normal(8)
    K = kgeo.pairwise_kernels(X, Y, kernel=kernel, **params)
    for j in range(3):
        assert K[:, j].tobytes() == kgeo.pairwise_kernels(X, Y[[j]], kernel=kernel,
                                                          **params)[:, 0].tobytes()
    rng = np.random.default_rng(2)
    X = 5e153 * (1 + 1e-3 * rng.standard_normal((20, 6)))
    Y = X[:3].copy()
    Y[2, 0] = 1e-300  # 1e-300 - centre is not exact
    if kernel == "ned":
        K = kgeo.pairwise_kernels(X, Y, kernel="ned")
        assert np.all(np.isfinite(K)) and np.array_equal(K[:, :2], kgeo.pairwise_kernels(
            X, Y[:2], kernel="ned"))
        model = kgeo.SVM(kernel="ned").fit(X, np.arange(20) % 2)
        dec = model.decision_function(Y)
        assert np.all(np.isfinite(dec))
        assert dec[:2].tobytes() == model.decision_function(Y[:2]).tobytes()


def test_pairwise_kernel_refusals_found_by_an_audit():
    # A shift that overflows every value, and NED on rows whose squares underflow.
    with pytest.raises(ValueError, match=r"kernel 'linear' plus shift=1.7e\+308 overflows"):
        kgeo.pairwise_kernels(np.full((1, 20), 1.4e153), kernel="linear", shift=1.7e308)
    with pytest.raises(ValueError, match=r"kernel 'ned' underflows float64 on X"):
        kgeo.pairwise_kernels(np.array([[1e-300, 0.0], [0.0, 1e-300]]), kernel="ned")
    # Identical rows far from 0 are not an underflow: distance 0 is right.
    assert np.array_equal(kgeo.pairwise_kernels([[1.0, 0.0], [1.0, 0.0]], kernel="ned"),
                          np.zeros((2, 2)))
    # Parameters beyond float64, and an odd degree that would round to an even one.
    from fractions import Fraction

    for params, match in (({"degree": 10 ** 400}, r"degree must be an integer >= 1"),
                          ({"gamma": 10 ** 400}, r"gamma must be a finite real number"),
                          ({"degree": 2 ** 53 + 1}, r"degree 9007199254740993 is not a "
                                                    r"float64"),
                          ({"degree": Fraction(2 ** 53 + 1)}, r"is not a float64")):
        with pytest.raises(ValueError, match=match):
            kgeo.pairwise_kernels([[1.0], [-1.0]], kernel="poly", **params)
    # 4 pi t overflows, the factor (4 pi t)^(-1/2) does not.
    K = kgeo.pairwise_kernels([[1.0, 2.0]], kernel="ngd_exp", t=1e308, normalize=True)
    np.testing.assert_allclose(K, [[(4 * np.pi) ** -0.5 * 1e-154]], rtol=1e-12)
    assert kgeo.pairwise_kernels([[1.0]], kernel="ngd_exp", t=1e308, normalize=True) == 1.0


class NAType:
    """A stand-in for pandas.NA (of pandas' class name), which float() refuses."""

    def __float__(self):
        raise TypeError("float() argument must be a string or a real number, not 'NAType'")


def test_a_missing_entry_is_a_value_error_counting_them():
    """A frame of pandas' nullable dtypes holds pd.NA where a value is
    missing; it was refused as a TypeError quoting float() ('not NAType')."""
    X = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], dtype=object)
    X[0, 0] = X[3, 1] = NAType()
    with pytest.raises(ValueError, match=r"^X contains 2 missing value\(s\) \(pandas.NA\); "
                                         r"every entry must be a number$"):
        kgeo.SVM().fit(X, [0, 0, 1, 1])
    X[0, 0] = X[3, 1] = None  # NumPy reads None as NaN
    with pytest.raises(ValueError, match=r"X contains 2 NaN or infinity value\(s\)"):
        kgeo.SVM().fit(X, [0, 0, 1, 1])
    X[0, 0] = "1"  # a string that float() reads is a number, as before
    X[3, 1] = "two"
    with pytest.raises(TypeError, match=r"X must hold numbers \(bool, int or float\): "
                                        r"could not convert string to float: 'two'"):
        kgeo.SVM().fit(X, [0, 0, 1, 1])


def test_a_frame_of_nullable_integers_with_pd_na_is_a_value_error():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1, 2, 3, 4], "b": [5, 6, 7, 8]}, dtype="Int64")
    model = kgeo.SVM().fit(frame, [0, 0, 1, 1])  # no NA: the counts as numbers
    frame.loc[2, "b"] = pd.NA
    with pytest.raises(ValueError, match=r"X contains 1 missing value\(s\)"):
        model.predict(frame)


def test_sparse_inputs_are_checked_and_summed_in_float64():
    # LIL rows anyone can edit: an index out of range reached the kernels' loops (a crash).
    L = sp.lil_matrix((2, 3))
    L[0, 0], L[1, 1] = 1.0, 2.0
    L.rows[0] = [10 ** 8]
    with pytest.raises(ValueError, match=r"X is not a valid LIL sparse matrix: indices range "
                                         r"over \[1, 100000000\]"):
        kgeo.pairwise_kernels(L, kernel="linear")
    L = sp.lil_matrix((2, 3))
    L[0, 0], L[1, 1] = 1.0, 2.0
    L.data[0] = [1.0] * 1000  # SciPy's conversion read past the column list
    with pytest.raises(ValueError, match=r"a row's column list and value list differ"):
        kgeo.pairwise_kernels(L, kernel="linear")
    # Duplicate COO entries summed in uint8 wrapped (200 + 100 = 44).
    C = sp.coo_matrix((np.array([200, 100, 1], dtype=np.uint8), ([0, 0, 1], [0, 0, 1])),
                      shape=(2, 2))
    np.testing.assert_array_equal(kgeo.pairwise_kernels(C, kernel="linear"), [[9e4, 0], [0, 1]])
    np.testing.assert_array_equal(
        kgeo.MultinomialEmbedding(norm=None).fit_transform(C).toarray(), [[300, 0], [0, 1]])
    K = sp.coo_matrix((np.array([100, 100, 1], dtype=np.int8), ([0, 0, 1], [0, 0, 1])),
                      shape=(2, 2))
    assert kgeo.is_positive_definite(K)


def _uint8_duplicates(fmt):
    """A 2 x 2 uint8 matrix of format ``fmt`` holding 200 and 100 apart at (0, 0)."""
    values, indices, indptr = np.array([200, 100, 1], dtype=np.uint8), [0, 0, 1], [0, 2, 3]
    if fmt == "lil":  # rows edited by hand: LIL's own setters make no duplicates
        L = sp.lil_matrix((2, 2), dtype=np.uint8)
        L[1, 1] = 1
        L.rows[0], L.data[0] = [0, 0], [200, 100]
        return L
    if fmt == "bsr":
        return sp.bsr_matrix((values.reshape(3, 1, 1), indices, indptr), shape=(2, 2))
    if fmt.startswith("coo"):
        return getattr(sp, fmt)((values, ([0, 0, 1], [0, 0, 1])), shape=(2, 2))
    return getattr(sp, fmt)((values, indices, indptr), shape=(2, 2))


@pytest.mark.parametrize("fmt", ["coo_matrix", "csr_matrix", "csc_matrix", "bsr", "lil",
                                 "coo_array", "csr_array"])
def test_duplicates_in_a_narrow_dtype_are_summed_in_float64_and_left_in_the_input(fmt):
    """SciPy before 1.11 summed an input's duplicates in its own dtype and in
    place when asked for a float64 copy: a uint8 matrix was left holding 44
    for 200 + 100, and its kernel was 44^2."""
    if not hasattr(sp, fmt) and fmt not in ("bsr", "lil"):
        pytest.skip(f"SciPy {scipy.__version__} has no {fmt}")
    X = _uint8_duplicates(fmt)
    arrays = ("data", "indices", "indptr", "row", "col", "rows")

    def stored():
        return {name: [np.asarray(part).tolist() for part in getattr(X, name)]
                for name in arrays if hasattr(X, name)}

    before = stored()
    np.testing.assert_array_equal(kgeo.pairwise_kernels(X, kernel="linear"),
                                  [[9e4, 0], [0, 1]])
    model = kgeo.SVM(kernel="linear").fit(X, [0, 1])
    np.testing.assert_array_equal(model.support_vectors_.toarray(), [[300, 0], [0, 1]])
    np.testing.assert_array_equal(model.predict(X), [0, 1])
    assert stored() == before  # values and index arrays alike


@pytest.mark.parametrize("fmt", ["coo", "csr", "csc", "bsr", "lil"])
def test_bool_duplicates_are_one_entry_as_in_the_dense_form(fmt):
    # SciPy adds bool duplicates in bool (True + True is True), as toarray()
    # shows them; cast first, they were counted: 2.0, and the linear kernel
    # 4 on the sparse matrix against 1 on its dense form (a review).
    values, rows, cols = np.array([True, True, True]), [0, 0, 1], [1, 1, 2]
    X = sp.coo_matrix((values, (rows, cols)), shape=(2, 3))
    if fmt == "csr":
        X = sp.csr_matrix((values, [1, 1, 2], [0, 2, 3]), shape=(2, 3))
    elif fmt == "csc":
        X = sp.csc_matrix((values, [0, 0, 1], [0, 0, 2, 3]), shape=(2, 3))
    elif fmt == "bsr":
        X = sp.bsr_matrix((values.reshape(3, 1, 1), [1, 1, 2], [0, 2, 3]), shape=(2, 3))
    elif fmt == "lil":  # rows edited by hand
        X = sp.lil_matrix((2, 3), dtype=bool)
        X[1, 2] = True
        X.rows[0], X.data[0] = [1, 1], [True, True]
    dense = X.toarray()
    np.testing.assert_array_equal(dense, [[0, 1, 0], [0, 0, 1]])
    np.testing.assert_array_equal(kgeo.pairwise_kernels(X, kernel="linear"),
                                  kgeo.pairwise_kernels(dense, kernel="linear"))
    np.testing.assert_array_equal(
        kgeo.MultinomialEmbedding(norm=None).fit_transform(X).toarray(), dense)


@pytest.mark.parametrize("fmt", ["coo", "csr", "csc", "bsr"])
def test_a_float64_copy_of_sparse_input_is_made_without_scipys_astype(fmt):
    """The mechanism of the test above, on any SciPy: kgeo casts the values
    itself and never asks the caller's matrix to cast or sum itself."""
    base = {"coo": sp.coo_matrix, "csr": sp.csr_matrix, "csc": sp.csc_matrix,
            "bsr": sp.bsr_matrix}[fmt]

    class Untouchable(base):
        def astype(self, *args, **kwargs):
            raise AssertionError("astype of the caller's matrix")

        def sum_duplicates(self):
            raise AssertionError("sum_duplicates of the caller's matrix")

    X = _uint8_duplicates(f"{fmt}_matrix" if fmt != "bsr" else fmt)
    if fmt == "coo":
        X = Untouchable((X.data, (X.row, X.col)), shape=X.shape)
    else:
        X = Untouchable((X.data, X.indices, X.indptr), shape=X.shape)
    np.testing.assert_array_equal(kgeo.pairwise_kernels(X, kernel="linear"),
                                  [[9e4, 0], [0, 1]])


def test_scale_gamma_is_the_variance_of_data_far_from_zero():
    # E[x^2] - E[x]^2 cancels for data at 1e8: it gave gamma 0.03 here, the
    # variance 0.12.
    X = 1e8 + np.random.default_rng(1).normal(size=(40, 8))
    model = kgeo.SVM(kernel="rbf").fit(X, [0, 1] * 20)
    # float64 holds 1e8 + noise to ~1e-8 of the noise: the reference's own rounding.
    np.testing.assert_allclose(model._kernel_args["gamma"], 1.0 / (8 * X.var()), rtol=1e-8)


@pytest.mark.parametrize("value", [0.0, 3.0, -2.5])
def test_scale_gamma_of_constant_data_is_one_as_in_sklearn(value):
    """Data without variance (every entry the same, 0 included) has no scale:
    gamma="scale" falls back to 1, as scikit-learn's SVC does, instead of
    dividing by a zero variance."""
    SVC = pytest.importorskip("sklearn.svm").SVC
    X = np.full((6, 3), value)
    y = [0, 1] * 3
    model = kgeo.SVM(kernel="rbf").fit(X, y)
    assert model._kernel_args["gamma"] == 1.0
    assert SVC(kernel="rbf").fit(X, y)._gamma == 1.0


def test_scale_gamma_counts_the_implicit_zeros_of_sparse_rows(rng):
    """X.var() is over every entry of X, the zeros a sparse matrix does not
    store included (each adds mean^2): gamma="scale" is scikit-learn's SVC's
    1 / (n_features * X.var()) on sparse counts, and the dense rows' gamma."""
    SVC = pytest.importorskip("sklearn.svm").SVC
    X, y = ck.make_count_data(rng, 40, 30, 2, density=0.2, sparse=True)
    assert X.nnz < 0.5 * X.shape[0] * X.shape[1]
    dense = X.toarray()
    sparse_gamma = kgeo.SVM(kernel="rbf").fit(X, y)._kernel_args["gamma"]
    dense_gamma = kgeo.SVM(kernel="rbf").fit(dense, y)._kernel_args["gamma"]
    reference = 1.0 / (30 * dense.var())
    np.testing.assert_allclose(sparse_gamma, reference, rtol=1e-13)
    np.testing.assert_allclose(dense_gamma, reference, rtol=1e-13)
    np.testing.assert_allclose(SVC(kernel="rbf").fit(X, y)._gamma, reference, rtol=1e-12)


def test_auto_gamma_is_one_over_the_number_of_features(rng):
    """gamma="auto" is 1 / n_features (columns, not rows), as scikit-learn's
    SVC has it: the same model as gamma given as that number."""
    X = rng.random((25, 4))
    y = np.arange(25) % 2
    auto = kgeo.SVM(kernel="rbf", gamma="auto").fit(X, y)
    assert auto._kernel_args["gamma"] == 0.25
    assert pytest.importorskip("sklearn.svm").SVC(gamma="auto").fit(X, y)._gamma == 0.25
    given = kgeo.SVM(kernel="rbf", gamma=0.25).fit(X, y)
    np.testing.assert_array_equal(auto.decision_function(X), given.decision_function(X))


def test_unused_columns_cost_no_memory_and_no_bit():
    """Hashed features: 2**22 columns, 30 used per document. The posting
    index kept 16 bytes per column and class (640 MB here); fit drops the
    unused columns first, and the model is the one of the used columns."""
    import tracemalloc

    rng = np.random.default_rng(0)
    n, n_features = 400, 1 << 22
    columns = rng.integers(0, n_features, (n, 30)).ravel()
    X = sp.csr_matrix((rng.integers(1, 5, n * 30).astype(float),
                       (np.repeat(np.arange(n), 30), columns)), shape=(n, n_features))
    y = rng.integers(0, 10, n)
    tracemalloc.start()
    try:
        model = kgeo.SVM(kernel="ngd").fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * 2**20
    assert model.support_vectors_.shape[1] == n_features
    used = np.unique(X.indices)
    compact = kgeo.SVM(kernel="ngd").fit(X[:, used], y)
    assert np.array_equal(model.dual_coef_, compact.dual_coef_)
    assert np.array_equal(model.intercept_, compact.intercept_)
    assert np.array_equal(model.decision_function(X), compact.decision_function(X[:, used]))
    # gamma="auto" still counts every column.
    assert kgeo.SVM(kernel="rbf", gamma="auto").fit(X, y)._kernel_args["gamma"] == 2.0 ** -22


def test_score_weighs_samples_like_accuracy_score(rng):
    from sklearn.metrics import accuracy_score

    X, y = ck.make_count_data(rng, 60, 8, 3, separation=0.3)
    model = kgeo.SVM().fit(X, y)
    predicted = model.predict(X)
    assert 0.3 < model.score(X, y) < 1.0  # some right, some wrong
    weight = rng.choice([0.0, 0.5, 2.0, 7.0], size=60)
    assert model.score(X, y, sample_weight=weight) == pytest.approx(
        accuracy_score(y, predicted, sample_weight=weight), rel=1e-14)
    # Weight 0 leaves a sample out; huge weights do not overflow the sums.
    right = predicted == y
    assert model.score(X, y, sample_weight=right.astype(float)) == 1.0
    # All right is exactly 1 whatever the weights (one summation order for both sums).
    for seed in range(200):
        weight = np.random.default_rng(seed).random(60) * right
        assert model.score(X, y, sample_weight=weight) == 1.0
    assert model.score(X, y, sample_weight=np.where(right, 0.0, 1e307)) == 0.0
    with pytest.raises(ValueError, match="sample_weight must be >= 0"):
        model.score(X, y, sample_weight=-np.ones(60))
    with pytest.raises(ValueError, match=r"shape \(60,\)"):
        model.score(X, y, sample_weight=np.ones(59))


def test_score_checks_y_like_fit():
    X, y = ck.make_count_data(np.random.default_rng(2), 40, 6, 3)
    model = kgeo.SVM(kernel="ngd").fit(X, y)
    expected = np.mean(model.predict(X) == y)
    assert model.score(X, y) == expected
    assert model.score(X, list(y)) == expected
    # A column vector broadcast against the predictions to a 40 x 40 matrix.
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        assert model.score(X, y[:, None]) == expected


@pytest.mark.filterwarnings("ignore::kgeo.EmptyDocumentWarning")
def test_prediction_chunks_change_nothing(rng, monkeypatch):
    """Test rows go through prediction in chunks; the decision values are
    the same bits whatever the chunk size, and a bad row is named by its
    index in X, not in its chunk."""
    import kgeo._svm

    X, y = ck.make_count_data(rng, 120, 15, 4, n_duplicates=3)
    model = kgeo.SVM(kernel="ngd").fit(X, y)
    whole = model.decision_function(X)
    monkeypatch.setattr(kgeo._svm, "_PREDICT_CHUNK_VALUES", 7 * 12)  # 7 rows per chunk
    assert model.decision_function(X).tobytes() == whole.tobytes()
    # A row without a word within a chunk: the intercepts, the same bits
    # whatever the chunk size; a negative entry is refused in any chunk.
    empty = np.array(X, dtype=float)
    empty[100] = 0.0
    with_empty = model.decision_function(empty)
    np.testing.assert_array_equal(with_empty[100], model.decision_function(empty[100:101])[0])
    np.testing.assert_array_equal(np.delete(with_empty, 100, axis=0), np.delete(whole, 100, axis=0))
    empty[100, 3] = -1.0
    with pytest.raises(ValueError, match=r"X has 1 negative entries"):
        model.predict(empty)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_predict_follows_decision_values_far_above_their_rounding(n_classes):
    """Features offset by 1e6: linear kernel values of 1e12, decision values
    of order 1 summed from terms of 1e14, computed to about 0.02. The vote's
    rounding bound was 1e-12 of those terms, 92: 102 of 200 points (2
    classes) went to the second class against their decision value's sign,
    and predict's accuracy fell from 0.945 to 0.45 (3 classes, offset 1e5:
    predict agreed with the centred model on 66 % of the points). The bound
    is now 4 ulps of |b| + sum|coef| max|K|, here about 0.2: values beyond
    0.5 decide."""
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(200, 2))
    y = np.digitize(Z[:, 0] + 0.3 * rng.normal(size=200), [0.0] if n_classes == 2
                    else [-0.5, 0.5])
    X = Z + (1e6 if n_classes == 2 else 1e5)  # 3 classes at 1e6: fit_status_ 1
    model = kgeo.SVM(kernel="linear").fit(X, y)
    assert model.fit_status_ == 0
    predicted = model.predict(X)
    dec = model.decision_function(X)
    if n_classes == 2:
        clear = np.abs(dec) > 0.5
        by_sign = model.classes_[(dec > 0).astype(int)]
    else:
        votes = np.round(dec).astype(int)  # ovr: votes plus confidences in (-1/3, 1/3)
        pair_values = kgeo.SVM(kernel="linear", decision_function_shape="ovo").fit(
            X, y).decision_function(X)
        clear = np.all(np.abs(pair_values) > 0.5, axis=1)
        by_sign = model.classes_[np.argmax(votes, axis=1)]
        assert clear.sum() > 100
    np.testing.assert_array_equal(predicted[clear], by_sign[clear])
    # The same points, centred: the same classes.
    centred = kgeo.SVM(kernel="linear").fit(Z, y)
    assert np.mean(predicted == centred.predict(Z)) > 0.97


def test_a_vote_bound_beyond_float64_does_not_swallow_finite_decisions():
    """4 eps (|b| + sum|coef| max|K|) overflowed to inf once sum|coef| max|K|
    passed 1.8e308, with every kernel and decision value finite: every pair
    voted for its second class (poly, a row scaled by 2e102: decision value
    -2.4e306, predicted classes_[1])."""
    rng = np.random.default_rng(0)
    X = np.abs(rng.normal(size=(60, 5))) + 0.1
    y = (X[:, 0] > X[:, 1]).astype(int)
    model = kgeo.SVM(kernel="poly", degree=3, gamma=1.0, coef0=0.0, C=10).fit(X, y)
    x = np.array([[0.0, 1.0, 0.0, 0.0, 0.0]])
    for scale in (1.0, 1e100, 2e102):
        assert model.decision_function(x * scale)[0] < 0
        assert model.predict(x * scale)[0] == 0


def test_ovr_confidences_squash_to_a_third_beyond_float64():
    """scikit-learn's conf / (3 (|conf| + 1)): the same bits where finite; its
    denominator overflowed beyond 6e307 (0 instead of about 1/3), and a sum
    of finite pair values that overflowed gave inf / inf = NaN, which
    decision_function returned and predict(break_ties=True) chose by."""
    from kgeo._svm import _squashed

    finite = np.array([[-1e300, -2.5, -1e-300, 0.0, 3.0, 1e300]])
    np.testing.assert_array_equal(_squashed(finite), finite / (3 * (np.abs(finite) + 1)))
    huge = np.array([[1e308, -1.7e308, np.inf, -np.inf]])
    np.testing.assert_array_equal(_squashed(huge), [[1 / 3, -1 / 3, 1 / 3, -1 / 3]])
    # A sum that met both +inf and -inf: no confidence either way.
    np.testing.assert_array_equal(_squashed(np.array([[np.nan, 1.0]])), [[0.0, 1 / 6]])
    # Through a precomputed model: pair values of 1.2e308 and 1.09e308 sum
    # beyond float64 for class 0.
    # Pair values (0, 1) and (0, 2) of 1.2e308, (1, 2) of 0: votes [2, 0, 1],
    # confidences +inf (their sum), -1.2e308 and -1.2e308.
    K = np.diag([1.0, 1.0, 1.0])
    model = kgeo.SVM(kernel="precomputed").fit(K, [0, 1, 2])
    big = np.array([[1.2e308, 0.0, 0.0]])
    np.testing.assert_allclose(model.decision_function(big), [[2 + 1 / 3, -1 / 3, 1 - 1 / 3]],
                               rtol=1e-15)


@pytest.mark.parametrize("n_classes", [2, 3, 5, 17])
def test_one_vs_one_votes_match_a_loop_over_the_pairs(n_classes, rng):
    """The compiled pass over the class pairs against the plain loop in
    NumPy: the same decision values, votes (values at the rounding bound vote
    for the second class) and confidences, bit for bit."""
    from kgeo._solver import VOTE_ROUNDING, one_vs_one_votes

    assert VOTE_ROUNDING == 4 * np.finfo(np.float64).eps
    n_rows, n_pairs = 50, n_classes * (n_classes - 1) // 2
    share = rng.normal(size=(n_rows, n_classes, n_classes - 1))
    intercept = rng.normal(size=n_pairs)
    coef_sum = rng.random(n_pairs) * 1e3
    K_max = rng.random(n_rows) * 1e3
    threshold = VOTE_ROUNDING * np.abs(intercept) + (VOTE_ROUNDING * coef_sum) * K_max[:, None]
    dec = np.empty((n_rows, n_pairs))
    votes = np.zeros((n_rows, n_classes), dtype=np.int64)
    confidence = np.zeros((n_rows, n_classes))
    p = 0
    for s in range(n_classes):
        for t in range(s + 1, n_classes):
            # Some values put exactly on, just inside or at zero of the bound.
            on = rng.random(n_rows) < 0.3
            share[on, s, t - 1] = threshold[on, p] - intercept[p] - share[on, t, s]
            dec[:, p] = share[:, s, t - 1] + share[:, t, s] + intercept[p]
            wins = dec[:, p] > threshold[:, p]
            votes[:, s] += wins
            votes[:, t] += ~wins
            confidence[:, s] += dec[:, p]
            confidence[:, t] -= dec[:, p]
            p += 1
    assert 0 < np.mean(dec > threshold) < 1
    out_dec = np.full((n_rows, n_pairs), np.nan)
    out_votes = np.full((n_rows, n_classes), -1, dtype=np.int64)
    out_conf = np.full((n_rows, n_classes), np.nan)
    one_vs_one_votes(share, intercept, coef_sum, K_max, out_dec, out_votes, out_conf)
    assert out_dec.tobytes() == dec.tobytes()
    np.testing.assert_array_equal(out_votes, votes)
    assert out_conf.tobytes() == confidence.tobytes()
    # Without confidences: the same votes.
    out_votes[:] = -1
    one_vs_one_votes(share, intercept, coef_sum, K_max, out_dec, out_votes)
    np.testing.assert_array_equal(out_votes, votes)
    with pytest.raises(ValueError, match="inconsistent shapes"):
        one_vs_one_votes(share, intercept[:-1] if n_pairs > 1 else intercept[:0], coef_sum,
                         K_max, out_dec, out_votes)
    # Each array one short is refused, not read beyond its end (found by
    # mutation testing: dropping the check of coef_sum passed the suite).
    args = [share, intercept, coef_sum, K_max, out_dec, out_votes, out_conf]
    for a in range(1, len(args)):
        short = list(args)
        short[a] = args[a][:-1]
        with pytest.raises(ValueError, match="inconsistent shapes"):
            one_vs_one_votes(*short)


def _votes_by_the_documented_rule(K, n_support, dual_coef, intercept):
    """predict's rule, one pair at a time in NumPy: pair (s, t) weighs class
    s's support vectors by row t - 1 of dual_coef_ and class t's by row s,
    and votes for s where its value exceeds 4 eps (|b| + sum|coef| max|K|),
    else for t; tied votes go to the first class."""
    start = np.concatenate([[0], np.cumsum(n_support)])
    votes = np.zeros((K.shape[0], len(n_support)), dtype=int)
    p = 0
    for s in range(len(n_support)):
        for t in range(s + 1, len(n_support)):
            seg_s, seg_t = slice(start[s], start[s + 1]), slice(start[t], start[t + 1])
            coef_s, coef_t = dual_coef[t - 1, seg_s], dual_coef[s, seg_t]
            d = K[:, seg_s] @ coef_s + K[:, seg_t] @ coef_t + intercept[p]
            coef_sum = np.abs(coef_s).sum() + np.abs(coef_t).sum()
            wins = d > 4 * ck.EPS * (abs(intercept[p]) + coef_sum * np.abs(K).max(axis=1))
            votes[wins, s] += 1
            votes[~wins, t] += 1
            p += 1
    return np.argmax(votes, axis=1)


@pytest.mark.parametrize("dual_coef, intercept, row, value", [
    # |b|: pair (0, 1)'s value 10 eps is within 4 eps (|b| + 2 |K|) = 12 eps;
    # without the |b| term the bound is 8 eps.
    ([[-1.0, 1.0, 1.0], [1.0, 1.0, 1.0]], [1.0 + 10 * ck.EPS, 1.0, 1.0], [1.0, 0.0, 0.0],
     10 * ck.EPS),
    # The pair's own sum|coef|: 2**-44 = 256 eps is within 4 eps (1 + 1025);
    # class 0's coefficients counted twice would make the bound 12 eps.
    ([[1.0, 1024.0, 1.0], [1.0, 1.0, 1.0]], [-1.0 + 2.0**-44, 1.0, 1.0], [1.0, 0.0, 0.0],
     2.0**-44),
    # max|K| is the largest magnitude: K = (-1, 0, 0) gives 1 (bound 12 eps),
    # not the largest signed value 0 (bound 4 eps). NGD's values are all <= 0.
    ([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]], [1.0 + 10 * ck.EPS, 3.0, 1.0], [-1.0, 0.0, 0.0],
     10 * ck.EPS),
])
def test_votes_follow_the_documented_rounding_bound_term_by_term(dual_coef, intercept, row,
                                                                 value):
    """A model of one support vector per class (the precomputed identity),
    its coefficients and intercepts set by hand to dyadic numbers, so every
    sum is exact: pairs (0, 2) and (1, 2) vote far from their bounds, and
    pair (0, 1)'s value, just inside its bound, decides the class (1, its
    second). The compiled votes were tested with max|K| given: a
    ``kernel_weighted_sums`` that took the largest signed kernel value
    instead passed the suite (mutation review 182)."""
    model = kgeo.SVM(kernel="precomputed").fit(np.eye(3), [0, 1, 2])
    assert model.n_support_.tolist() == [1, 1, 1] and model.support_.tolist() == [0, 1, 2]
    model.dual_coef_ = np.array(dual_coef)
    model.intercept_ = np.array(intercept)
    K = np.array([row])
    model.set_params(decision_function_shape="ovo")
    assert model.decision_function(K)[0, 0] == value > 0
    model.set_params(decision_function_shape="ovr")
    expected = _votes_by_the_documented_rule(K, model.n_support_, model.dual_coef_,
                                             model.intercept_)
    assert expected.tolist() == [1]
    np.testing.assert_array_equal(model.predict(K), [1])


def test_votes_do_not_depend_on_the_memory_layout_of_dual_coef():
    """The rounding bound sums |dual_coef_| per pair; NumPy sums a row of a
    Fortran-ordered array in another order than a C-ordered one, so a value
    between the two bounds would get a vote that depends on how a loaded
    model's arrays lie in memory. Here a decision value is put there."""
    from kgeo._solver import VOTE_ROUNDING

    rng = np.random.default_rng(5)
    n = 60
    X = np.vstack([np.c_[rng.random((n, 2)) + [0.3, 0], np.zeros(n)],
                   np.c_[rng.random((n, 2)) + [0, 0.3], np.zeros(n)],
                   np.c_[np.zeros((n, 2)), rng.random(n) + 0.5]])
    y = np.repeat([0, 1, 2], n)
    model = kgeo.SVM(kernel="linear", C=10.0).fit(X, y)
    # Coefficients of many magnitudes (the sums' order then matters), Fortran
    # order, drawn until NumPy's two sums differ: whether a draw does depends
    # on NumPy's reduction code for the CPU (seed 5's first draw did on an
    # AVX-512 Xeon, not on a Zen 3 with NumPy 2.4).
    n0, n1 = model.n_support_[0], model.n_support_[1]
    for _ in range(100):
        D = np.asfortranarray(
            model.dual_coef_ * 10.0 ** rng.uniform(-4, 4, model.dual_coef_.shape))
        c_rows = np.abs(D[0, :n0]).sum() + np.abs(D[0, n0:n0 + n1]).sum()
        c_fortran = np.abs(D[:, :n0]).sum(axis=1)[0] + np.abs(D[:, n0:n0 + n1]).sum(axis=1)[0]
        if c_rows != c_fortran:  # the case this test is about
            break
    else:
        pytest.skip("this NumPy sums a row of a C- and of a Fortran-ordered array in the "
                    "same order (100 draws): the case cannot arise")
    model.dual_coef_ = D
    x = np.array([[0.0, 0.0, 1.0]])  # orthogonal to classes 0 and 1: pair (0, 1)'s value is b
    K_max = np.abs(model.support_vectors_ @ x[0]).max()

    def votes_first(value, coef_sum):  # one_vs_one_votes' rule, as it rounds
        return value > VOTE_ROUNDING * abs(value) + (VOTE_ROUNDING * coef_sum) * K_max

    b = VOTE_ROUNDING * c_rows * K_max / (1 - VOTE_ROUNDING)
    for i in range(8000):  # b with the value b between the two bounds
        candidate = b
        for _ in range(i // 2):
            candidate = np.nextafter(candidate, np.inf if i % 2 else -np.inf)
        if votes_first(candidate, c_rows) != votes_first(candidate, c_fortran):
            break
    else:
        pytest.fail("no intercept between the two bounds")
    model.intercept_ = model.intercept_.copy()
    model.intercept_[0] = candidate
    fortran = model.predict(x), model.decision_function(x)
    model.dual_coef_ = np.ascontiguousarray(model.dual_coef_)
    c_order = model.predict(x), model.decision_function(x)
    np.testing.assert_array_equal(fortran[0], c_order[0])
    assert fortran[1].tobytes() == c_order[1].tobytes()


@pytest.mark.parametrize("attribute, value, match", [
    ("intercept_", lambda m: m.intercept_[:-1], r"intercept_ has shape \(5,\), but 4 classes "
                                                r"and \d+ support vectors need \(6,\)"),
    ("dual_coef_", lambda m: m.dual_coef_[:2], r"dual_coef_ has shape \(2, \d+\)"),
    ("n_support_", lambda m: m.n_support_[:3], r"n_support_ has shape \(3,\)"),
    ("n_support_", lambda m: m.n_support_ + 1,
     r"n_support_ \[.*\] sums to \d+, but there are \d+ support vectors"),
])
def test_prediction_names_a_fitted_attribute_that_disagrees(attribute, value, match, rng):
    X, y = ck.make_count_data(rng, 60, 8, 4, separation=0.5)
    model = kgeo.SVM(kernel="ngd").fit(X, y)
    setattr(model, attribute, value(model))
    for method in (model.predict, model.decision_function):
        with pytest.raises(ValueError, match=r"this SVM's fitted attributes disagree: " + match):
            method(X)


@pytest.mark.parametrize("kernel", ["ngd", "ned"])
def test_a_prediction_reads_one_model_while_another_thread_refits(kernel):
    """fit installs the refitted attributes in one assignment, and a
    prediction reads every attribute from the dict in place when it starts:
    a prediction racing refits of another class count gets one model's
    answer, never a mix (which used to fail on shapes, or mislabel). NED on
    dense rows also moves them by the fitted column means (``_centre``),
    which differ between the two fits."""
    import threading

    rng = np.random.default_rng(1)
    if kernel == "ngd":
        X3, y3 = ck.make_count_data(rng, 90, 10, 3, separation=0.5)
        X5, y5 = ck.make_count_data(rng, 150, 10, 5, separation=0.5)
    else:
        y3, y5 = np.arange(90) % 3, np.arange(150) % 5
        X3 = 1.0 + rng.random((90, 10)) + 0.3 * y3[:, None]
        X5 = 40.0 + rng.random((150, 10)) + 0.3 * y5[:, None]
    model = kgeo.SVM(kernel=kernel, n_jobs=1).fit(X3, y3)
    answers = [model.decision_function(X3[:40]),
               kgeo.SVM(kernel=kernel, n_jobs=1).fit(X5, y5).decision_function(X3[:40])]
    stop = threading.Event()

    def refit():
        while not stop.is_set():
            model.fit(X5, y5)
            model.fit(X3, y3)

    worker = threading.Thread(target=refit)
    worker.start()
    try:
        for _ in range(60):
            dec = model.decision_function(X3[:40])
            assert any(dec.tobytes() == a.tobytes() for a in answers)
    finally:
        stop.set()
        worker.join()


def test_fit_and_prediction_run_no_finaliser_of_a_subclass():
    """The scratch instance a fit solves on and the view a prediction reads
    its model through share the model's attributes: a subclass's __del__
    (closing a file, say) must not run on them when they are dropped."""
    import gc

    finalised = []

    class Holding(kgeo.SVM):
        def __del__(self):
            finalised.append(id(self))

    X, y = ck.make_count_data(np.random.default_rng(3), 40, 6, 3)
    model = Holding(kernel="ngd").fit(X, y)
    model.fit(X, y)  # a refit, which solves on a scratch instance
    model.predict(X)
    model.decision_function(X)
    gc.collect()
    assert finalised == []
    with pytest.raises(ValueError):
        model.fit(X, y[:-1])  # a failed fit drops its scratch instance too
    gc.collect()
    assert finalised == []


def test_fitted_attributes_damaged_are_named():
    X, y = ck.make_count_data(np.random.default_rng(4), 40, 6, 3)
    model = kgeo.SVM(kernel="ngd").fit(X, y)
    for classes in (model.classes_[:1], model.classes_[None, :], np.array(5)):
        broken = pickle.loads(pickle.dumps(model))
        broken.classes_ = classes
        with pytest.raises(ValueError, match=r"classes_ must be a 1-D array of at least 2 "
                                             r"classes, got shape"):
            broken.predict(X)
    broken = pickle.loads(pickle.dumps(model))
    broken.n_support_ = np.array([1.5, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"n_support_ must hold non-negative integer counts"):
        broken.predict(X)
    # Counts stored as floats (hand-made or converted models) are still counts.
    broken.n_support_ = model.n_support_.astype(float)
    np.testing.assert_array_equal(broken.predict(X), model.predict(X))


def test_a_negative_support_count_is_named(rng):
    """n_support_ cuts dual_coef_'s columns into the classes' segments: a
    negative count, even with the right sum, would cut them wrongly and
    predict silently from other classes' coefficients; it is refused by
    name."""
    X, y = ck.make_count_data(rng, 60, 8, 3, separation=0.5)
    model = kgeo.SVM(kernel="ngd", C=0.5).fit(X, y)
    n = model.n_support_
    model.n_support_ = np.array([-1, n[0] + n[1] + 1, n[2]])  # the same sum
    for method in (model.predict, model.decision_function):
        with pytest.raises(ValueError, match=r"n_support_ must hold non-negative integer counts"):
            method(X)


def test_decision_overflow_is_named_by_its_row_in_x_across_chunks(rng, monkeypatch):
    """A test row whose weighted kernel sums overflow (poly, degree 3, a row
    1e102 times a training row) is refused, named by its index in X even
    when it sits in a later chunk."""
    import kgeo._svm

    X = rng.integers(0, 5, size=(60, 6)).astype(float)
    X[:, 0] += 1
    y = np.repeat([0, 1, 2], 20)
    model = kgeo.SVM(kernel="poly", degree=3, gamma=1.0, C=1e3).fit(X, y)
    test = X[:20].copy()
    test[[3, 17]] *= 1e102
    monkeypatch.setattr(kgeo._svm, "_PREDICT_CHUNK_VALUES", 5 * 6)  # 5 rows per chunk
    match = (r"decision values are not finite for 2 row\(s\) of X \(first rows \[3, 17\]\): "
             r"kernel 'poly' overflows float64 on them")
    for method in (model.predict, model.decision_function):
        with pytest.raises(ValueError, match=match):
            method(test)


def _poisson_counts(n, n_features, n_classes, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)
    centres = rng.random((n_classes, n_features)) ** 3
    X = np.stack([rng.poisson(20 * centres[c] / centres[c].sum() + 0.3) for c in y])
    X = X.astype(np.float64)
    X[X.sum(axis=1) == 0, 0] = 1.0
    return X, y


def test_a_rows_label_does_not_depend_on_the_rows_predicted_with_it():
    # The bound below which a decision value counts as zero took max|K| over
    # the whole call: one long document in the batch turned clear decision
    # values of the other rows into ties, and their votes went to class t.
    X, y = _poisson_counts(80, 20, 3, seed=0)
    X_test, _ = _poisson_counts(200, 20, 3, seed=5)
    model = kgeo.SVM(kernel="poly", degree=4, gamma=1.0, coef0=1.0).fit(X, y)
    alone = np.array([model.predict(X_test[i:i + 1])[0] for i in range(len(X_test))])
    with_long_document = model.predict(np.vstack([X_test, 300 * X_test[:1]]))[:-1]
    np.testing.assert_array_equal(with_long_document, alone)
    votes_alone = np.vstack([model.set_params(decision_function_shape="ovr")
                             .decision_function(X_test[i:i + 1]) for i in range(len(X_test))])
    votes_batch = model.decision_function(np.vstack([X_test, 300 * X_test[:1]]))[:-1]
    np.testing.assert_array_equal(np.round(votes_batch), np.round(votes_alone))

    rng = np.random.default_rng(0)
    X2 = rng.normal(size=(40, 5))
    y2 = (X2[:, 0] + 0.3 * rng.normal(size=40) > 0).astype(int)
    binary = kgeo.SVM(kernel="linear").fit(X2, y2)
    x = np.array([[-0.3, 0.0, 0.0, 0.0, 0.0]])
    assert binary.decision_function(x)[0] < -0.5 and binary.predict(x)[0] == 0
    assert binary.predict(np.vstack([x, [[0.0, 0.0, 0.0, 0.0, 1e11]]]))[0] == 0


@pytest.mark.parametrize("kernel", ["ngd", "linear", "rbf"])
def test_support_vectors_are_prepared_once_per_fit(kernel, rng, monkeypatch):
    """Prediction builds the support vectors' posting index once per fit and
    keeps it (one row at a time cost 6-10 ms on a 20-class 20NG model, where
    a row of a batch costs 30 us); every call gives the bits a fresh model
    gives, a refit or a loaded model builds its own, and a pickle has none."""
    import kgeo._svm as svm_module

    X, y = ck.make_count_data(rng, 60, 15, 4, density=0.4, sparse=True)
    X2, y2 = ck.make_count_data(rng, 50, 15, 3, density=0.4, sparse=True)
    T, _ = ck.make_count_data(rng, 12, 15, 4, density=0.4, sparse=True)
    builds = []
    single_block = svm_module.single_block
    monkeypatch.setattr(svm_module, "single_block",
                        lambda rows: builds.append(rows.n_rows) or single_block(rows))
    model = kgeo.SVM(kernel=kernel).fit(X, y)
    batch = model.decision_function(T)
    assert len(builds) == 1
    rows = np.vstack([model.decision_function(T[i:i + 1]) for i in range(T.shape[0])])
    assert model.predict(T).shape == (12,)
    assert len(builds) == 1  # not rebuilt by 13 more calls
    np.testing.assert_array_equal(rows, batch)
    fresh = kgeo.SVM(kernel=kernel).fit(X, y)
    np.testing.assert_array_equal(fresh.decision_function(T), batch)
    assert b"_prediction_cache" not in pickle.dumps(model)  # compiled objects, rebuilt
    loaded = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(loaded.decision_function(T), batch)
    # A refit predicts with its own support vectors, not the kept ones.
    model.fit(X2, y2)
    np.testing.assert_array_equal(model.decision_function(T),
                                  kgeo.SVM(kernel=kernel).fit(X2, y2).decision_function(T))


@pytest.mark.filterwarnings("ignore::kgeo.EmptyDocumentWarning")
@pytest.mark.parametrize("kernel", ["ngd", "linear", "rbf", "ned"])
def test_hashed_features_keep_the_support_vectors_columns(kernel, rng, monkeypatch):
    """Over 2**22 columns the support vectors are cut to the columns they
    use, prepared and indexed once per fit; a predicted row with columns
    they do not use renumbers them for that call. Either way every decision
    value is the one over a compact vocabulary, bit for bit, and the same
    whether a row is predicted alone or in a batch."""
    import kgeo._svm as svm_module

    width = 2**22
    X, y = ck.make_count_data(rng, 40, 14, 3, density=0.3, sparse=True)
    unused = [5, 13]  # columns no training row uses: one among the used, one above
    X = X.tolil()
    X[:, unused] = 0.0
    X = X.tocsr()
    T, _ = ck.make_count_data(rng, 6, 14, 3, density=0.5, sparse=True)
    T = T.tolil()
    T[:3, unused] = 0.0  # rows 0-2 use only the support vectors' columns
    T[3:, 5] = 1.0       # rows 3-5 also one they do not use, among theirs
    T[3:, 13] = 0.0
    T = T.tocsr()
    spread = np.sort(rng.choice(width, 14, replace=False))

    def hashed(M):
        M = M.tocoo()
        return sp.csr_matrix((M.data, (M.row, spread[M.col])), shape=(M.shape[0], width))

    builds = []
    single_block = svm_module.single_block
    monkeypatch.setattr(svm_module, "single_block",
                        lambda rows: builds.append(rows.n_features) or single_block(rows))
    model = kgeo.SVM(kernel=kernel, gamma=0.5).fit(hashed(X), y)
    compact = kgeo.SVM(kernel=kernel, gamma=0.5).fit(X, y)
    np.testing.assert_array_equal(model.dual_coef_, compact.dual_coef_)
    expected = compact.decision_function(T)
    builds.clear()
    known = model.decision_function(hashed(T[:3]))
    np.testing.assert_array_equal(model.decision_function(hashed(T[:3])), known)
    assert builds == [12]  # once: the support vectors' own columns
    np.testing.assert_array_equal(known, expected[:3])
    both = model.decision_function(hashed(T))
    assert builds == [12, 13]  # renumbered for this call's new column
    np.testing.assert_array_equal(both, expected)
    alone = np.vstack([model.decision_function(hashed(T[i:i + 1])) for i in range(6)])
    np.testing.assert_array_equal(alone, expected)


@pytest.mark.parametrize("kernel", ["rbf", "ned"])
def test_centred_support_vectors_are_prepared_once_per_fit(kernel, rng, monkeypatch):
    # Dense rows far from the origin are moved by the fitted centre; the
    # support vectors moved, and as given for the rows that are not moved,
    # are indexed once per fit (one row of a 2,000-vector model took 27 ms).
    import kgeo._svm as svm_module

    X = rng.random((80, 12)) + 5.0
    y = rng.integers(0, 3, 80)
    T = rng.random((10, 12)) + 5.0
    T[:3, :10] = 0.0  # mostly zero: met as given, by the unmoved support vectors
    builds = []
    single_block = svm_module.single_block
    monkeypatch.setattr(svm_module, "single_block",
                        lambda rows: builds.append(rows.n_rows) or single_block(rows))
    model = kgeo.SVM(kernel=kernel).fit(X, y)
    assert model._centre is not None
    batch = model.decision_function(T)
    assert len(builds) == 2  # moved and unmoved support vectors
    rows = np.vstack([model.decision_function(T[i:i + 1]) for i in range(T.shape[0])])
    assert len(builds) == 2
    np.testing.assert_array_equal(rows, batch)
    np.testing.assert_array_equal(kgeo.SVM(kernel=kernel).fit(X, y).decision_function(T), batch)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).decision_function(T), batch)


@pytest.mark.parametrize("kernel", ["ned", "rbf"])
def test_the_unmoved_index_survives_another_thread_replacing_it(kernel, rng):
    """Threads predicting at once on a fresh centred model: one thread's
    rebuild popped the unmoved support vectors' index between another's
    membership test and its lookup, a KeyError (a review found the window;
    it did not fire in 2,516 rounds of 4 threads). Here a cache that loses
    the entry right after each read stands for that thread."""
    X = rng.random((60, 8)) + 5.0
    y = rng.integers(0, 3, 60)
    T = rng.random((6, 8)) + 5.0
    T[:3, :6] = 0.0  # mostly zero: met as given, by the unmoved support vectors
    model = kgeo.SVM(kernel=kernel).fit(X, y)
    expected = model.decision_function(T)

    class LosesTheEntryAfterEachRead(dict):
        def _lose(self, key):
            if key == "unmoved_support_vectors":
                self.pop(key, None)

        def __contains__(self, key):
            found = super().__contains__(key)
            self._lose(key)
            return found

        def get(self, key, default=None):
            value = super().get(key, default)
            self._lose(key)
            return value

    model._prediction_cache = LosesTheEntryAfterEachRead(model._prediction_cache)
    np.testing.assert_array_equal(model.decision_function(T), expected)
    np.testing.assert_array_equal(model.decision_function(T), expected)


@pytest.mark.parametrize("kernel", ["ned", "rbf"])
def test_replaced_support_vectors_reach_the_rows_predicted_unmoved(kernel, rng):
    """A centred model keeps two indexes of its support vectors: moved by the
    centre, and as given (for rows the centre cannot move, built when such a
    row first comes). A matrix assigned to support_vectors_ after both were
    built must replace both: the model predicts as one whose support vectors
    were replaced before any prediction."""
    X = rng.random((60, 8)) + 5.0
    y = rng.integers(0, 3, 60)
    T = rng.random((6, 8)) + 5.0
    T[:3, :6] = 0.0  # mostly zero: met as given, by the unmoved support vectors
    model = kgeo.SVM(kernel=kernel).fit(X, y)
    assert model._centre is not None
    fresh = pickle.loads(pickle.dumps(model))
    model.decision_function(T)  # both indexes built
    replaced = model.support_vectors_ + rng.random(model.support_vectors_.shape)
    model.support_vectors_ = replaced
    fresh.support_vectors_ = replaced.copy()
    np.testing.assert_array_equal(model.decision_function(T), fresh.decision_function(T))


@pytest.mark.parametrize("kernel, offset", [("linear", 0.0), ("rbf", 5.0)])
def test_support_vectors_replaced_after_a_prediction_are_used(kernel, offset, rng):
    # The prediction cache used to keep the first support vectors: a matrix
    # assigned later was ignored, and an edit in place went unseen.
    X = rng.random((60, 5)) + offset
    y = (X[:, 0] > 0.5 + offset).astype(int)
    T = rng.random((3, 5)) + offset
    model = kgeo.SVM(kernel=kernel).fit(X, y)
    edited = kgeo.SVM(kernel=kernel).fit(X, y)
    edited.support_vectors_ = edited.support_vectors_ * 2  # before any prediction
    expected = edited.decision_function(T)
    model.decision_function(T)  # fills the cache
    with pytest.raises(ValueError, match="read-only"):
        model.support_vectors_ *= 2
    model.support_vectors_ = model.support_vectors_ * 2
    np.testing.assert_array_equal(model.decision_function(T), expected)
    loaded = pickle.loads(pickle.dumps(model))
    assert not loaded.support_vectors_.flags.writeable


@pytest.mark.parametrize("kernel", ["linear", "ngd", "rbf"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_columns", [2, 5])
def test_support_vectors_assigned_with_other_columns_are_refused(kernel, sparse, n_columns,
                                                                  rng):
    """support_vectors_ may be replaced, but by rows of the fitted columns:
    fewer columns read the posting tables beyond their end (a segmentation
    fault for a model of 1e8 sparse columns), and other widths gave
    silently wrong decision values (or a NumPy broadcasting error)."""
    X = rng.random((40, 3)) + (5.0 if kernel == "rbf" else 0.0)
    y = (X[:, 0] > X[:, 0].mean()).astype(int)
    model = kgeo.SVM(kernel=kernel).fit(sp.csr_matrix(X) if sparse else X, y)
    support_vectors = model.support_vectors_
    other = (support_vectors[:, :2] if n_columns == 2
             else (sp.hstack([support_vectors, support_vectors[:, :2]]).tocsr() if sparse
                   else np.hstack([support_vectors, support_vectors[:, :2]])))
    model.support_vectors_ = other
    for method in (model.decision_function, model.predict):
        with pytest.raises(ValueError, match=rf"support_vectors_ has {n_columns} columns, "
                                             r"but this SVM was fitted on 3 features"):
            method(X)
    if kernel == "linear":
        with pytest.raises(ValueError, match="support_vectors_ has"):
            model.coef_
    model.support_vectors_ = support_vectors
    model.decision_function(X)


@pytest.mark.parametrize("kernel, offset", [("linear", 0.0), ("ngd", 0.0), ("rbf", 5.0)])
@pytest.mark.parametrize("sparse", [False, True])
def test_support_vectors_the_user_assigns_are_read_again_after_an_edit_in_place(
        kernel, offset, sparse, rng):
    """The fit's support vectors are read-only, so prediction keeps what it
    derives from them. Writable ones a user assigns (or read-only views of
    writable ones) may change in place after a prediction: each prediction
    reads them again, and sees the edit, as a model given the edited matrix
    does."""
    X = rng.random((60, 5)) + offset
    y = (X[:, 0] > 0.5 + offset).astype(int)
    T = rng.random((3, 5)) + offset
    model = kgeo.SVM(kernel=kernel).fit(sp.csr_matrix(X) if sparse else X, y)
    own = model.support_vectors_.copy()
    own_view = None
    if not sparse:
        own_view = own.view()
        own_view.flags.writeable = False  # read-only, over writable memory
    for assigned in ([own] if sparse else [own, own_view]):
        model.support_vectors_ = assigned
        model.decision_function(T)  # the cache would keep the rows from here
        if sparse:
            own.data *= 1.5  # the same matrix object, its values edited
        else:
            own *= 1.5
        reference = kgeo.SVM(kernel=kernel).fit(sp.csr_matrix(X) if sparse else X, y)
        reference.support_vectors_ = own.copy()
        np.testing.assert_array_equal(model.decision_function(T),
                                      reference.decision_function(T))
    if sparse:  # the data array replaced under the same matrix object
        own.data = own.data * 2.0
        reference.support_vectors_ = own.copy()
        np.testing.assert_array_equal(model.decision_function(T),
                                      reference.decision_function(T))


def _dot_products(A, B):
    """A callable kernel that pickles (a module's function)."""
    return A @ B.T


@pytest.mark.parametrize("kernel, n_classes", [("ngd", 2), ("ngd", 4), ("precomputed", 3),
                                               (_dot_products, 3)])
def test_dual_coefficients_are_read_only_and_replaced_ones_are_used(kernel, n_classes, rng):
    """Prediction keeps what it derives from dual_coef_ (its transpose and
    the pairs' rounding bounds: 276 of the 700 us a 20-class model spent on
    one row), so the fit's array is read-only, after pickling too. An array
    assigned in its place is used, and one that is writable is read again
    at every call: an edit in place is seen, as by a model given the edited
    array. A changed n_support_ is seen as well."""
    X, y = ck.make_count_data(rng, 90, 12, n_classes)
    T = X[:7] + 1.0
    if kernel == "precomputed":
        X, T = (kgeo.pairwise_kernels(A, X, kernel="ngd", shift=np.pi) for A in (X, T))

    def fitted():
        return kgeo.SVM(kernel=kernel).fit(X, y)

    model = fitted()
    original = model.decision_function(T)  # fills the cache
    kept = model._prediction_cache["coefficients"]
    np.testing.assert_array_equal(model.decision_function(T), original)
    assert model._prediction_cache["coefficients"] is kept
    for loaded in (model, pickle.loads(pickle.dumps(model))):
        assert not loaded.dual_coef_.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            loaded.dual_coef_ *= 2
        np.testing.assert_array_equal(loaded.decision_function(T), original)
    own = model.dual_coef_ * 0.5  # writable
    model.dual_coef_ = own
    reference = fitted()
    reference.dual_coef_ = own.copy()
    np.testing.assert_array_equal(model.decision_function(T), reference.decision_function(T))
    assert not np.array_equal(model.decision_function(T), original)
    own[:, ::2] *= -3.0  # in place, after a prediction
    reference = fitted()
    reference.dual_coef_ = own.copy()
    np.testing.assert_array_equal(model.decision_function(T), reference.decision_function(T))
    np.testing.assert_array_equal(model.predict(T), reference.predict(T))
    # n_support_ moved by one support vector between the first two classes.
    model = fitted()
    model.decision_function(T)
    reference = fitted()
    for edited in (model, reference):
        edited.n_support_ = edited.n_support_ + np.array([1, -1] + [0] * (n_classes - 2))
    reference._prediction_cache.clear()
    np.testing.assert_array_equal(model.decision_function(T), reference.decision_function(T))
    assert not np.array_equal(model.decision_function(T), original)


def test_kept_coefficients_follow_the_arrays_they_came_from(rng, monkeypatch):
    """Reviews of the kept coefficients: (1) an assignment by another
    thread between two reads of one prediction stored values of the old
    array under the new one's key, wrong at every later call; (2) read-only
    arrays over memory written otherwise (as_strided's, a bytearray's) were
    kept; (3) an array made writable, used, then frozen again met the entry
    of its values before; (4) copy.copy froze the caller's own arrays. A
    protocol 5 pickle's arrays, which lie in its bytearray, are still kept."""
    import copy as copy_module

    from numpy.lib.stride_tricks import as_strided

    from kgeo import _svm

    X, y = ck.make_count_data(rng, 90, 12, 4)
    T = X[:7] + 1.0

    def given(coefficients):
        reference = kgeo.SVM(kernel="ngd").fit(X, y)
        reference.dual_coef_ = np.array(coefficients)
        return reference.decision_function(T)

    model = kgeo.SVM(kernel="ngd").fit(X, y)
    other = model.dual_coef_ * 0.5
    other[:, ::2] *= -3.0
    other.flags.writeable = False
    checked = _svm._check_fitted_arrays

    def assigned_meanwhile(view, n_sv):
        result = checked(view, n_sv)
        model.dual_coef_ = other  # (1): as another thread would
        return result

    monkeypatch.setattr(_svm, "_check_fitted_arrays", assigned_meanwhile)
    before = model.decision_function(T)  # all of one model: the old array's
    monkeypatch.setattr(_svm, "_check_fitted_arrays", checked)
    assert model.dual_coef_ is other
    np.testing.assert_array_equal(model.decision_function(T), given(other))
    assert not np.array_equal(before, given(other))

    own = np.array(other)  # (2)
    strided = as_strided(own, writeable=False)
    lent = bytearray(own.tobytes())
    in_bytearray = np.frombuffer(lent, dtype=np.float64).reshape(own.shape)
    in_bytearray.flags.writeable = False
    for view, values in ((strided, own), (in_bytearray, None)):
        model.dual_coef_ = view
        model.decision_function(T)
        if values is None:
            lent[:8] = np.float64(5.0).tobytes()
        else:
            values[0, 0] = 5.0
        assert view[0, 0] == 5.0
        np.testing.assert_array_equal(model.decision_function(T), given(view))

    model = kgeo.SVM(kernel="ngd").fit(X, y)  # (3)
    model.decision_function(T)
    model.dual_coef_.flags.writeable = True
    model.decision_function(T)  # forgets what it kept
    model.dual_coef_[:, 0] *= -2.0
    model.dual_coef_.flags.writeable = False
    np.testing.assert_array_equal(model.decision_function(T), given(model.dual_coef_))

    workspace = np.array(other)  # (4)
    model.dual_coef_ = workspace[:, :]
    shallow = copy_module.copy(model)
    assert workspace.flags.writeable and model.dual_coef_.flags.writeable
    np.testing.assert_array_equal(shallow.decision_function(T), given(workspace))

    model = kgeo.SVM(kernel="ngd").fit(X, y)
    loaded = pickle.loads(pickle.dumps(model, protocol=5))
    assert _svm._cache_key(loaded.dual_coef_) is not None
    assert _svm._cache_key(loaded.support_vectors_) is not None
    np.testing.assert_array_equal(loaded.decision_function(T), model.decision_function(T))


# --------------------------------------------------------------------------
# sample_weight
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kernel", ["ngd", "linear", "rbf", "poly", "precomputed"])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_sample_weight_bounds_each_dual_variable(kernel, class_weight, rng):
    """Every pair solves Definition 2 with C_i = C * class_weight * sample_weight_i
    (the checker's own box, its "balanced" and gamma="scale" weighted too), the
    samples of weight 0 left out; the weighted bound is active somewhere, and
    the unweighted box fails the same check."""
    X, y = ck.make_count_data(rng, 90, 12, 3, separation=0.3, n_duplicates=4)
    weight = rng.choice([0.0, 0.3, 1.0, 2.5, 7.0], size=90)
    params = {**KERNEL_PARAMS.get(kernel, {}), "C": 0.7, "class_weight": class_weight}
    data = kgeo.pairwise_kernels(X, kernel="ngd+pi") if kernel == "precomputed" else X
    model = kgeo.SVM(kernel=kernel, **params).fit(data, y, sample_weight=weight)
    assert not np.any(np.isin(model.support_, np.flatnonzero(weight == 0)))
    report = ck.check_svm(model, data, y, sample_weight=weight)
    assert any(np.any((r["alpha"] == r["C"]) & (r["C"] != r["C"].max())) for r in report)
    # The same class weights, the per-sample bounds without the weights:
    # only the bounds can fail the check.
    same_classes = dict(zip(model.classes_.tolist(), model.class_weight_.tolist()))
    with pytest.raises(AssertionError) as failure:
        ck.check_svm(model, data, y, sample_weight=np.where(weight > 0, 1.0, 0.0),
                     class_weight=same_classes)
    assert "class_weight_" not in str(failure.value)


@pytest.mark.parametrize("kernel", ["ngd", "linear", "rbf", "precomputed"])
def test_integer_weights_are_repeated_samples(kernel, rng):
    """A weight of k is k copies of the sample: the primal is the same, so
    at a tight tol both fits reach one decision function (with "balanced"
    counting a sample as its weight, and gamma="scale" the weighted
    variance, both as for the copies)."""
    X, y = ck.make_count_data(rng, 50, 10, 3, separation=0.3)
    weight = rng.integers(0, 4, size=50)
    weight[:3] = 1  # every class keeps a sample
    Xt, _ = ck.make_count_data(rng, 30, 10, 3, separation=0.3)
    repeated = np.repeat(np.arange(50), weight)
    params = dict(C=2.0, tol=1e-13, class_weight="balanced", decision_function_shape="ovo")
    if kernel == "precomputed":
        K = kgeo.pairwise_kernels(X, kernel="ngd+pi")
        Kt = kgeo.pairwise_kernels(Xt, X, kernel="ngd+pi")
        weighted = kgeo.SVM(kernel=kernel, **params).fit(K, y, sample_weight=weight)
        copies = kgeo.SVM(kernel=kernel, **params).fit(K[np.ix_(repeated, repeated)], y[repeated])
        dec_w, dec_c = weighted.decision_function(Kt), copies.decision_function(Kt[:, repeated])
    else:
        weighted = kgeo.SVM(kernel=kernel, **params).fit(X, y, sample_weight=weight)
        copies = kgeo.SVM(kernel=kernel, **params).fit(X[repeated], y[repeated])
        dec_w, dec_c = weighted.decision_function(Xt), copies.decision_function(Xt)
        if kernel == "rbf":
            assert weighted._kernel_args["gamma"] == pytest.approx(
                copies._kernel_args["gamma"], rel=1e-14)
    np.testing.assert_allclose(weighted.class_weight_, copies.class_weight_, rtol=1e-15)
    np.testing.assert_allclose(dec_w, dec_c, atol=1e-10)
    # ... and the same dual objective: the copies of a sample share its alpha.
    np.testing.assert_allclose(weighted.dual_objective_, copies.dual_objective_, rtol=1e-10)


@pytest.mark.parametrize("kernel", ["ngd", "rbf", "precomputed"])
def test_zero_weights_are_absent_samples(kernel, rng):
    """Samples of weight 0 are dropped first: the model is the fit of the
    others, bit for bit (gamma, the centre of rbf's dense rows included), with
    support_ indexing the given X; a sample of weight 0 may even be a row the
    kernel could not take."""
    X, y = ck.make_count_data(rng, 70, 8, 3)
    X = X.astype(np.float64)
    weight = np.where(rng.random(70) < 0.3, 0.0, 1.0)
    X[np.flatnonzero(weight == 0)[0]] = 0.0  # an empty document, weighing nothing
    kept = np.flatnonzero(weight > 0)
    if kernel == "precomputed":
        K = kgeo.pairwise_kernels(X[kept], kernel="ngd+pi")
        full = np.zeros((70, 70))
        full[np.ix_(kept, kept)] = K
        weighted = kgeo.SVM(kernel=kernel).fit(full, y, sample_weight=weight)
        subset = kgeo.SVM(kernel=kernel).fit(K, y[kept])
    else:
        data = X + 300.0 if kernel == "rbf" else X  # dense rows far from 0: moved to a centre
        weighted = kgeo.SVM(kernel=kernel).fit(data, y, sample_weight=weight)
        subset = kgeo.SVM(kernel=kernel).fit(data[kept], y[kept])
        np.testing.assert_array_equal(weighted.support_vectors_, subset.support_vectors_)
    np.testing.assert_array_equal(weighted.support_, kept[subset.support_])
    for name in ("n_support_", "dual_coef_", "intercept_", "n_iter_", "dual_objective_"):
        np.testing.assert_array_equal(getattr(weighted, name), getattr(subset, name), name)
    assert weighted.shape_fit_ == (70, 70 if kernel == "precomputed" else 8)


def test_weights_of_one_are_no_weights(rng):
    """Weights all 1 (or 1 for every sample of positive weight) are the
    unweighted fit, bit for bit; a single number weighs every sample (here
    a power of two, so C * 2 rounds as 2 C does)."""
    X, y = ck.make_count_data(rng, 60, 10, 3)
    plain = kgeo.SVM(kernel="rbf").fit(X, y)
    assert_identical(kgeo.SVM(kernel="rbf").fit(X, y, sample_weight=np.ones(60)), plain)
    assert_identical(kgeo.SVM(kernel="rbf").fit(X, y, sample_weight=[1] * 60), plain)
    assert_identical(kgeo.SVM(kernel="linear", C=0.5).fit(X, y, sample_weight=2.0),
                     kgeo.SVM(kernel="linear", C=1.0).fit(X, y))


def test_sample_weight_matches_libsvm(rng):
    """scikit-learn's SVC multiplies C by the same weights (and drops those
    of weight 0, but its support_ then counts only the others): the same dual
    optimum and decisions."""
    from sklearn.svm import SVC

    X, y = ck.make_count_data(rng, 80, 15, 3, density=0.3, sparse=True)
    X = l2_rows(X)
    weight = rng.choice([0.25, 0.5, 1.0, 4.0], size=80)
    ref = SVC(kernel="linear", C=1.5, tol=1e-8).fit(X, y, sample_weight=weight)
    model = kgeo.SVM(kernel="linear", C=1.5, tol=1e-8).fit(X, y, sample_weight=weight)
    K = (X @ X.T).toarray()
    np.testing.assert_allclose(model.dual_objective_, pair_objectives(ref, K, y), rtol=1e-7)
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X),
                               atol=1e-5)


@pytest.mark.parametrize("weight, n_free", [([1.0, 1.0, 20.0, 1.0], 1), (None, 0)])
def test_intercept_over_one_or_no_free_variable_matches_sklearn_svc(weight, n_free):
    """b* is the mean of -y G over the free variables, even when there is a
    single one, and the midpoint of the interval the KKT conditions leave
    for b when there is none: libsvm's rules on the same Gram (its intercept
    to rounding). Random problems rarely end with exactly one free variable:
    here the heavy row 2 is the only one, the others sit on 0 or C."""
    from sklearn.svm import SVC

    X = np.array([[0.0, 1.0], [0.5, 0.0], [2.0, 0.5], [6.0, 5.0]])
    y = np.array([0, 0, 1, 1])
    K = X @ X.T
    w = None if weight is None else np.array(weight)
    model = kgeo.SVM(kernel="precomputed", C=0.01, tol=1e-10).fit(K, y, sample_weight=w)
    ref = SVC(kernel="precomputed", C=0.01, tol=1e-10).fit(K, y, sample_weight=w)
    box = 0.01 * (np.ones(4) if w is None else w)[model.support_]
    alpha = np.abs(model.dual_coef_[0])
    assert np.sum((alpha > 0) & (alpha < box)) == n_free
    np.testing.assert_array_equal(model.support_, ref.support_)
    np.testing.assert_allclose(model.dual_coef_, ref.dual_coef_, rtol=1e-9)
    np.testing.assert_allclose(model.intercept_, ref.intercept_, rtol=1e-9)
    assert np.all(np.isfinite(model.decision_function(K)))


@pytest.mark.parametrize("order", [[0, 1, 2, 3], [2, 0, 3, 1]])
def test_a_small_box_left_an_ulp_of_the_large_ones_below_its_bound_is_put_on_it(order):
    """Weighted boxes of 1.75 and 0.01 (class_weight="balanced" on sample
    weights): a step left the small box's variable 2.2e-16 (an ulp of the
    large alphas, 2.2e-14 of its own box) below its bound, with its partner
    already on its bound, so the snap toward that bound was refused. Free
    there, it could not move: SMO stopped as stalled (fit_status_ 1 at any
    tol) with a KKT gap of 0.71, and b* came from its gradient alone, 0.71
    outside the interval the solution allows; in another row order the
    same data fitted fine (a review's fuzzing: 0.2-0.5 % of random weighted
    problems). Now every variable ends on a bound and b* is the midpoint."""
    X = np.array([[-1.0, -0.2], [-0.9, -0.4], [-1.0, -0.8], [0.2, 0.2]])[order]
    y = np.array([0, 1, 0, 1])[order]
    weight = np.array([1.5, 350.0, 0.0086, 0.15])[order]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning
        model = kgeo.SVM(kernel="ned", C=0.01, class_weight="balanced").fit(
            X, y, sample_weight=weight)
    assert model.fit_status_ == 0
    ck.check_svm(model, X, y, sample_weight=weight)
    np.testing.assert_allclose(model.intercept_, [-0.0030886819359928], rtol=1e-9)


@pytest.mark.parametrize("tiny", [1e-16, 1e-14, 1e-20])
def test_a_box_below_the_rounding_of_its_partner_keeps_its_step(tiny):
    """Weights spanning more than 1e14: X = [0, 1, 2, 0.5], the last of
    weight 1e-16. The step clipping it to its box 1e-16 left its partner at
    1 - 1e-16; the snap then put the small variable back on 0 (within 1e-14
    of the partner's value), or, snapping the partner onto C = 1, took
    1.1e-16 from it, the same undoing. SMO stopped as stalled after 2 steps
    (fit_status_ 1, whatever the tol), with intercept_ -1.25 outside the
    interval [-1, 0] the solution allows, and predicted the training point
    x = 1 wrongly. Now the small variable ends on its box, and the model
    meets the KKT conditions with its intercept inside that interval."""
    X = np.array([[0.0], [1.0], [2.0], [0.5]])
    y = np.array([0, 1, 1, 0])
    weight = np.array([1.0, 1.0, 1.0, tiny])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning
        model = kgeo.SVM(kernel="linear").fit(X, y, sample_weight=weight)
    assert model.fit_status_ == 0
    ck.check_svm(model, X, y, sample_weight=weight)
    assert -1.0 - 1e-12 <= model.intercept_[0] <= 1e-12
    alpha = dict(zip(model.support_, np.abs(model.dual_coef_[0])))
    assert alpha[3] == tiny and alpha[0] == pytest.approx(1.0, abs=1e-12)
    dec = model.decision_function(X)
    assert dec[0] < -0.4 and dec[2] > 0.9


@pytest.mark.parametrize("gamma", [118.0, 150.0])
def test_a_step_from_zero_below_snap_of_its_partner_is_kept(gamma):
    """An unclipped step from alpha_j = 0 ends at delta, no residue of the
    partner's value: the snap to 0 within SNAP (1e-14) of the partner is
    for values the clipping computes from it. Here (duplicated points of
    both classes, weights from 1.6e-6 to 6.5e7) the step that met tol was
    7e-8 next to a partner of 1e7: the snap undid it every time, and SMO
    stopped as stalled after 26 steps with an exact KKT gap of 3e-3, where
    scikit-learn's SVC meets tol. Now it converges."""
    X = np.array([[1, 0], [0, 1], [0, 0], [1, 1], [0, 0], [0, 0], [0, 1], [0, 0], [1, 1]],
                 dtype=float)
    y = np.array([0, 1, 0, 1, 0, 1, 0, 1, 1])
    weight = np.array([197.0, 16.2, 10713.0, 8.0e6, 6.5e7, 2.3e5, 0.018, 1.6e-6, 0.1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning
        model = kgeo.SVM(kernel="poly", degree=2, coef0=1.0, gamma=gamma, C=44.0,
                         shrinking=False).fit(X, y, sample_weight=weight)
    assert model.fit_status_ == 0
    # (The float64 rounding of the kernel's terms makes the float gap noisy.)
    K = (gamma * X @ X.T + 1.0) ** 2
    assert ck.exact_kkt_gap(model, K, y, 44.0 * weight) <= 1e-3


def test_a_snap_never_opens_a_gap_beyond_tol():
    """A step that leaves a variable within the rounding of its gradient
    (RESIDUE_ULPS of max |K| sum(alpha)) of a bound puts it on the bound,
    lengthening the step past the pair's optimum. With weights of 1e8 that
    rounding was 5 here, against quad 29: two variables on C = 1.5e12 swapped
    0.12 back and forth, each snap opening the gap of 3.4 that the next step
    closed, and SMO stopped as stalled at tol 0.1, where scikit-learn's SVC
    converges in 26 iterations. A snap now opens at most tol / 2."""
    pattern = np.array([[1, 0], [1, 0], [0, 0], [0, 1], [0, 1], [1, 1], [1, 1], [1, 1], [0, 0],
                        [0, 1], [1, 1], [1, 0], [0, 0], [0, 0], [1, 1], [1, 0], [1, 0], [0, 1],
                        [1, 1], [1, 0], [1, 0], [0, 0], [1, 0], [1, 1], [1, 0], [1, 1]])
    X = pattern * 0.0031311345795793
    y = np.array([1, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1])
    weight = np.array([1, 1e-8, 1, 1e-8, 1, 1e8, 1, 1e8, 1e-8, 1e-8, 1e8, 1e8, 1e-8, 1e-8, 1,
                       1e-8, 1e-8, 0, 1e-8, 0, 1e-8, 0, 1e8, 0, 1e8, 1])
    C, gamma = 15267.767861004844, 2976427.0924236104
    for shrinking in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no ConvergenceWarning
            model = kgeo.SVM(kernel="poly", degree=1, coef0=1.0, gamma=gamma, C=C, tol=0.1,
                             shrinking=shrinking).fit(X, y, sample_weight=weight)
        assert model.fit_status_ == 0
        K = gamma * X @ X.T + 1.0
        assert ck.exact_kkt_gap(model, K, y, C * weight) <= 0.1


def test_a_gap_below_tol_only_by_rounding_is_no_convergence():
    """Rows moved to 3e7: linear kernel values of 7.2e15, so one ulp of an
    alpha near 1 moves the gradient by 1.6, and each step's update of G
    rounds by as much. The gap SMO computes wanders with that rounding and
    falls below tol=1e-3 by chance: the fit reported convergence. Near G's
    rounding the gap is now checked on an exact G (fma products, compensated
    sums): here it stays above tol (2.1 with shrinking, 3.6e-3 without), and
    the fit warns that it is unresolved.
    Rows moved to 1e6, whose terms of 1e14 leave G's rounding near 0.02,
    pass the check: their exact gap is within tol."""
    rng = np.random.default_rng(0)
    Z = rng.poisson(2, (60, 8))[:15] + 0.0
    Z[:, 0] += 1
    y = rng.integers(0, 2, 60)[:15]
    X = Z + 3e7
    K = kgeo.pairwise_kernels(X, kernel="linear")  # the values the solver uses
    for shrinking in (True, False):
        with pytest.warns(kgeo.ConvergenceWarning,
                          match=r"recomputed exactly from the dual variables, it stays above tol"):
            model = kgeo.SVM(kernel="linear", shrinking=shrinking).fit(X, y)
        assert model.fit_status_ == 1
        assert ck.exact_kkt_gap(model, K, y, np.ones(15)) > 2e-3
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(200, 2))
    y = (Z[:, 0] + 0.3 * rng.normal(size=200) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = kgeo.SVM(kernel="linear").fit(Z + 1e6, y)
    assert model.fit_status_ == 0
    K = kgeo.pairwise_kernels(Z + 1e6, kernel="linear")
    assert ck.exact_kkt_gap(model, K, y, np.ones(200)) <= 1e-3


@pytest.mark.parametrize("case", ["shifted_gram", "far_rows"])
def test_a_stuck_gap_that_the_exact_gradient_meets_is_convergence(case):
    """The incremental G's rounding (kernel values of 8.6e9: a shift of
    2**33; rows moved to about 7e4) keeps SMO's gap above tol with no new
    least gap for 20,000 steps, the stuck rule's verdict; on an exact G the
    gap is within tol (3.0e-7 for tol=3.2e-7, 8.4e-5 for 9.4e-5): the pair
    has converged, no warning, fit_status_ 0. A mutation review (helper 133)
    found this branch never reached by the suite: judged on the exact G's
    size alone, such a pair warned that tol cannot be resolved."""
    def problem(seed):
        rng = np.random.default_rng(seed)
        n, d = int(rng.integers(6, 40)), int(rng.integers(1, 4))
        X = rng.integers(-3, 4, size=(n, d)).astype(float)
        y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
        rng.integers(0, 2)
        return rng, X, y

    if case == "shifted_gram":
        rng, X, y = problem(3951)
        data = X @ X.T + 2.0 ** int(rng.integers(20, 50))  # Proposition 3: a shift
        K = data
        params = dict(kernel="precomputed", C=0.32190712064185545, shrinking="auto",
                      tol=3.2e-7)
    else:
        rng, X, y = problem(3800)
        data = X + 10 ** rng.uniform(2, 6) * rng.normal(size=X.shape[1])
        K = kgeo.pairwise_kernels(data, kernel="linear")  # the values the solver uses
        params = dict(kernel="linear", C=28.87439795716217, shrinking=True, tol=9.4e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        model = kgeo.SVM(max_iter=200000, **params).fit(data, y)
    assert model.fit_status_ == 0
    assert model.n_iter_[0] > 20000  # the stuck rule's path
    assert ck.exact_kkt_gap(model, K, y, np.full(len(y), params["C"])) <= params["tol"]


def test_sample_weight_is_not_modified(rng):
    X, y = ck.make_count_data(rng, 40, 6, 2)
    weight = rng.random(40)
    weight[0] = 0.0
    given = weight.copy()
    weight.flags.writeable = False
    kgeo.SVM().fit(X, y, sample_weight=weight)
    np.testing.assert_array_equal(weight, given)


@pytest.mark.parametrize("weight, error, match", [
    (lambda n: -np.ones(n), ValueError, r"must be >= 0, got 40 negative"),
    (lambda n: np.r_[np.nan, np.ones(n - 1)], ValueError, r"must be finite.*first samples \[0\]"),
    (lambda n: np.r_[np.ones(n - 1), np.inf], ValueError, r"must be finite.*\[39\]"),
    (lambda n: np.ones(n - 1), ValueError, r"shape \(40,\).*got shape \(39,\)"),
    (lambda n: np.ones((n, 1)), ValueError, r"shape \(40,\).*got shape \(40, 1\)"),
    (lambda n: np.zeros(n), ValueError, r"zero for all 40 samples"),
    (lambda n: 0.0, ValueError, r"sample_weight must be finite and > 0, got 0.0"),
    (lambda n: np.ones(n, dtype=bool), TypeError, r"real numbers, got dtype bool"),
    (lambda n: ["a"] * n, TypeError, r"real numbers"),
    (lambda n: [object()] * n, TypeError, r"real numbers"),
    (lambda n: True, TypeError, r"sample_weight must be a real number"),
    (lambda n: sp.csr_matrix(np.ones((1, n))), TypeError, r"sparse matrix"),
    (lambda n: np.array([True] * n, dtype=object), TypeError, r"got True \(bool\)"),
    (lambda n: np.array(["1"] * n, dtype=object), TypeError, r"got '1' \(str\)"),
    (lambda n: [10 ** 400] + [1] * (n - 1), ValueError, r"beyond float64's range"),
    (lambda n: np.r_[np.full(20, 1e308), np.ones(n - 20)], ValueError,
     r"C \* class_weight \* sample_weight must be a finite.*for sample 0"),
    (lambda n: np.r_[np.ones(n - 1), 1e-320], ValueError,
     r"C \* class_weight \* sample_weight must be a finite, normal.* = 1e-319 for sample 39"),
])
def test_bad_sample_weight_is_refused(weight, error, match, rng):
    X, y = ck.make_count_data(rng, 40, 6, 2)
    with pytest.raises(error, match=match):
        kgeo.SVM(C=10.0).fit(X, y, sample_weight=weight(40))


@pytest.mark.skipif(np.finfo(np.longdouble).max <= np.finfo(np.float64).max,
                    reason="this platform's long double is float64")
def test_wider_float_weights_beyond_float64_are_refused_as_such(rng):
    """A long double weight of 1e400 became inf in float64, refused as a
    'NaN or infinite weight' the caller never passed, with NumPy's overflow
    warning (a review, helper 138); X already said so for such values."""
    X, y = ck.make_count_data(rng, 40, 6, 2)
    weight = np.ones(40, dtype=np.longdouble)
    weight[3] = np.longdouble("1e400")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"^sample_weight holds 1 number\(s\) beyond "
                                             r"float64's range \(about 1.8e308\)"):
            kgeo.SVM().fit(X, y, sample_weight=weight)
    weight[3] = 2.5
    model = kgeo.SVM().fit(X, y, sample_weight=weight)
    assert_identical(model, kgeo.SVM().fit(X, y, sample_weight=weight.astype(np.float64)))
    assert weight.dtype == np.longdouble and weight[3] == 2.5  # left as it was


def test_zero_weights_do_not_copy_a_kernel_matrix(rng):
    """The solver reads the rows of positive weight from the caller's matrix
    in place: no copy of its n^2 values (a 20NG Gram would be 1 GB)."""
    import tracemalloc

    X, y = ck.make_count_data(rng, 600, 20, 3)
    K = kgeo.pairwise_kernels(X, kernel="ngd+pi")
    weight = np.ones(600)
    weight[::7] = 0.0
    kgeo.SVM(kernel="precomputed").fit(K, y, sample_weight=weight)  # warm-up
    tracemalloc.start()
    kgeo.SVM(kernel="precomputed").fit(K, y, sample_weight=weight)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < K.nbytes / 4, (peak, K.nbytes)


@pytest.mark.parametrize("scale", [1e-300, 1e306])
def test_the_scale_of_the_weights_leaves_balanced_and_gamma_alone(scale, rng):
    """"balanced" and gamma="scale" depend on the weights' ratios only: sums
    of weights near float64's limits must not overflow or underflow them."""
    X, y = ck.make_count_data(rng, 40, 10, 2)
    weight = rng.choice([1.0, 2.0, 3.0], size=40)
    params = dict(kernel="rbf", class_weight="balanced", C=1e-300 if scale > 1 else 1e290)
    ref = kgeo.SVM(**params).fit(X, y, sample_weight=weight)
    scaled = kgeo.SVM(**params).fit(X, y, sample_weight=weight * scale)
    np.testing.assert_allclose(scaled.class_weight_, ref.class_weight_, rtol=1e-14)
    assert scaled._kernel_args["gamma"] == pytest.approx(ref._kernel_args["gamma"], rel=1e-14)


def test_the_iteration_limit_names_the_weights():
    """SMO's iterations grow with the box: weights of 1e10 on six points that
    no line separates reach libsvm's limit (10**7 iterations, about a
    second), and the warning names the weighted bound, not C."""
    X = np.array([[3.0, 1], [1, 3], [2, 2], [3, 2], [2, 3], [1, 1]])
    with pytest.warns(kgeo.ConvergenceWarning,
                      match=r"sample_weight up to 1e\+10 .*lower C \(or the largest sample"):
        model = kgeo.SVM(kernel="linear").fit(X, [0, 1, 0, 1, 0, 1],
                                              sample_weight=np.full(6, 1e10))
    assert model.n_iter_.tolist() == [10**7]


def test_a_class_of_weight_zero_is_refused_and_rows_are_named_as_given(rng):
    X, y = ck.make_count_data(rng, 40, 6, 3)
    weight = np.where(y == 2, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"class 2 has no sample of positive weight"):
        kgeo.SVM().fit(X, y, sample_weight=weight)
    # A bad row of positive weight is named by its number in X, not among
    # the samples kept: a sigma <= 0 for the hyperbolic kernel, and an empty
    # document, which a manifold kernel leaves out with a warning.
    weight = np.ones(40)
    weight[:5] = 0.0
    rows = np.column_stack([rng.normal(size=(40, 2)), rng.uniform(0.5, 1.0, 40)])
    rows[7, -1] = -1.0
    with pytest.raises(ValueError, match=r"row\(s\) have sigma <= 0 \(row 7: -1.0\)"):
        kgeo.SVM(kernel="hyperbolic").fit(rows, y, sample_weight=weight)
    X = X.astype(np.float64)
    X[7] = 0.0
    with pytest.warns(UserWarning, match=r"1 training document\(s\) without a word \(all-zero "
                                         r"rows 7\)"):
        kgeo.SVM().fit(X, y, sample_weight=weight)


# ==========================================================================
# Found by mutation testing of the Python layer
# ==========================================================================

@pytest.mark.parametrize("n_classes", [3, 5])
def test_rounding_bound_sums_the_coefficients_of_each_pairs_own_support_vectors(
        n_classes, monkeypatch):
    """The bound below which a vote counts a decision value as zero uses
    sum|coef| over the pair's own support vectors: class s's in row t - 1 of
    dual_coef_, class t's in row s (the compiled vote is tested with the
    sums given; these are the sums prediction gives it)."""
    from kgeo import _svm
    from kgeo._synthetic import make_topic_corpus

    X, y = make_topic_corpus(40 * n_classes, 60, n_classes, words_per_document=25,
                             random_state=n_classes)
    model = kgeo.SVM(kernel="ngd", C=10.0).fit(X, y)
    seen = []
    real = _svm.one_vs_one_votes

    def spy(share, b, coef_sum, K_max, *rest):
        seen.append(np.array(coef_sum, copy=True))
        return real(share, b, coef_sum, K_max, *rest)

    monkeypatch.setattr(_svm, "one_vs_one_votes", spy)
    model.predict(X[:5])
    start = np.concatenate([[0], np.cumsum(model.n_support_)])
    expected = [np.abs(model.dual_coef_[t - 1, start[s]:start[s + 1]]).sum()
                + np.abs(model.dual_coef_[s, start[t]:start[t + 1]]).sum()
                for s in range(n_classes) for t in range(s + 1, n_classes)]
    assert seen
    np.testing.assert_allclose(seen[0], expected, rtol=1e-12)


def test_a_two_class_prediction_chunks_its_rows_by_their_stored_values(monkeypatch):
    """The chunk of test rows was bounded by n_classes (n_classes - 1)
    values per row only: with two classes a batch of 200,000 documents went
    through in one chunk, copied and prepared whole (peak 2.8 times X). Each
    row's stored values count too, and the results do not depend on it."""
    from kgeo import _svm

    rng = np.random.default_rng(4)
    X = sp.random(300, 500, density=0.2, random_state=rng, format="csr") * 10
    X.data = np.ceil(X.data)
    y = (np.asarray(X[:, :250].sum(axis=1)).ravel() > np.asarray(
        X[:, 250:].sum(axis=1)).ravel()).astype(int)
    model = kgeo.SVM(kernel="ngd").fit(X, y)
    whole = model.decision_function(X)
    rows_seen = []
    real = _svm.one_vs_one_votes

    def spy(share, *rest):
        rows_seen.append(share.shape[0])
        return real(share, *rest)

    monkeypatch.setattr(_svm, "one_vs_one_votes", spy)
    monkeypatch.setattr(_svm, "_PREDICT_CHUNK_VALUES", 2000)  # 100 values per row: 20 rows
    np.testing.assert_array_equal(model.decision_function(X), whole)
    assert max(rows_seen) <= 2000 // 100 and sum(rows_seen) == 300


@pytest.mark.parametrize("kernel", ["ngd", "linear", "rbf", "hyperbolic"])
def test_dense_rows_to_predict_are_converted_a_chunk_at_a_time(kernel, monkeypatch):
    """Dense rows to predict were converted to CSR whole before the first
    chunk (100,000 x 100 dense rows, 80 MB: 208 MB more at the peak). Each
    chunk now converts its own rows: the same decision values, bit for bit,
    as the CSR matrix of the same rows, in C or Fortran order, float64 or
    int; and the checks still read all of X, naming its rows (not a
    chunk's) and counting over every chunk."""
    from kgeo import _svm

    rng = np.random.default_rng(7)
    n, d = 90, 12
    X = rng.poisson(1.0, size=(n, d)).astype(np.float64)
    X[:, -1] += 1.0  # the hyperbolic kernel's sigma > 0
    if kernel == "rbf":
        X += 300.0  # far from the origin: the rows move by the fitted centre
    y = (X[:, 0] + X[:, 1] > X[:, 2] + X[:, 3]).astype(int) + (X[:, 4] > 1)
    model = kgeo.SVM(kernel=kernel).fit(sp.csr_matrix(X), y)
    assert (getattr(model, "_centre", None) is not None) == (kernel == "rbf")
    converted = []
    real = _svm.dense_as_csr

    def spy(array, name, nnz=None):
        converted.append(array.shape[0])
        return real(array, name, nnz)

    monkeypatch.setattr(_svm, "dense_as_csr", spy)
    monkeypatch.setattr(_svm, "_PREDICT_CHUNK_VALUES", 8 * d)  # 8 rows a chunk
    whole = model.decision_function(sp.csr_matrix(X))
    assert converted == []
    for dense in (X, np.asfortranarray(X), X.astype(np.int64) if kernel != "rbf" else X):
        converted.clear()
        assert model.decision_function(dense).tobytes() == whole.tobytes()
        assert max(converted) <= 8 and sum(converted) == n
    bad = X.copy()
    bad[[5, 70]] = np.nan
    with pytest.raises(ValueError, match="X contains 24 NaN or infinity"):
        model.predict(bad)
    if kernel == "ngd":
        bad = X.copy()
        bad[3, 0], bad[80, 1] = -1.0, -2.0
        with pytest.raises(ValueError, match="X has 2 negative entries"):
            model.predict(bad)
        empty = X.copy()
        empty[[2, 50, 88]] = -0.0
        with pytest.warns(kgeo.EmptyDocumentWarning,
                          match=r"3 of the 90 document\(s\).*rows 2, 50, 88\)"):
            dec = model.decision_function(empty)
        with pytest.warns(kgeo.EmptyDocumentWarning):
            np.testing.assert_array_equal(dec, model.decision_function(sp.csr_matrix(empty)))
    if kernel == "hyperbolic":
        bad = X.copy()
        bad[[4, 77], -1] = [0.0, -1.5]
        with pytest.raises(ValueError, match=r"2 row\(s\) have sigma <= 0 \(row 4: 0.0, "
                                             r"row 77: -1.5\)"):
            model.predict(bad)


def test_a_refit_does_not_keep_the_previous_fits_support_vectors_alive():
    """A refit starts a new prediction cache: the old one, keyed by the old
    support vectors, would give right values but hold the previous fit's
    support vectors and prepared rows in memory."""
    import gc
    import weakref

    from kgeo._synthetic import make_topic_corpus

    X, y = make_topic_corpus(90, 50, 3, words_per_document=20, random_state=1)
    model = kgeo.SVM(kernel="ngd").fit(sp.csr_matrix(X), y)
    model.predict(X[:3])  # fills the prediction cache
    old = weakref.ref(model.support_vectors_)
    model.fit(sp.csr_matrix(X[:60]), y[:60])
    gc.collect()
    assert old() is None


def test_balanced_class_weight_survives_weights_whose_sum_overflows():
    """"balanced" and gamma="scale" sum the weights relative to the largest:
    weights each finite but whose sum overflows give the class weights and
    gamma of the same weights unscaled."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, (40, 10)).astype(float)
    X[:, 0] += 1
    y = np.repeat([0, 1], 20)
    weight = rng.choice([1.0, 2.0, 3.0], size=40)
    params = dict(kernel="rbf", class_weight="balanced", C=1e-300)
    ref = kgeo.SVM(**params).fit(X, y, sample_weight=weight)
    big = weight * 5e307  # each finite (<= 1.5e308); their sum is not
    with np.errstate(over="ignore"):
        assert not np.isfinite(big.sum())
    scaled = kgeo.SVM(**params).fit(X, y, sample_weight=big)
    np.testing.assert_allclose(scaled.class_weight_, ref.class_weight_, rtol=1e-14)
    assert scaled._kernel_args["gamma"] == pytest.approx(ref._kernel_args["gamma"], rel=1e-14)


# ==========================================================================
# From a mutation review of fit's side of _svm.py (helper 165: 84 mutants,
# 68 killed by the suite, 4 equivalent, 10 gaps, each failing a test below)
# ==========================================================================


def _fit_review_counts(seed=0, n=40, d=6, k=2):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    X = rng.integers(0, 5, size=(n, d)).astype(np.float64)
    X[np.arange(n), y % d] += 3  # each class favours a word; no empty rows
    return X, y


# Mutant F13: `sample = row` in the sample-weighted box check (the index
# among the kept samples instead of the index in X as given).
def test_a_subnormal_box_names_the_sample_by_its_number_in_x_past_zero_weights():
    X, y = _fit_review_counts()
    w = np.ones(40)
    w[:3] = 0.0
    w[39] = 1e-320
    with pytest.raises(ValueError, match=r"= 1e-319 for sample 39 \(1 sample"):
        kgeo.SVM(C=10.0).fit(X, y, sample_weight=w)


# A defect it found: a class whose samples all weigh 0 was reported as a
# class "whose documents of positive sample_weight are all without a word"
# when some *other* document was empty, although its documents have words;
# the accurate message ("class 1 has no sample of positive weight") came
# only where no document was empty (and after a warning about the empty one).
@pytest.mark.filterwarnings("error::kgeo.EmptyDocumentWarning")
def test_a_class_of_weight_zero_is_named_as_such_beside_an_empty_document():
    X = np.array([[1, 2, 0], [2, 1, 1], [0, 0, 0], [1, 0, 3], [0, 2, 2]], float)
    y = [0, 0, 0, 1, 1]
    with pytest.raises(ValueError, match=r"class 1 has no sample of positive weight"):
        kgeo.SVM().fit(X, y, sample_weight=[1, 1, 1, 0, 0])


# Mutant S5: the dense fast path (support vectors re-read from the caller's
# array) taken for any dtype, not only float64: support_vectors_ then kept
# X's dtype (float32, int) instead of float64 as sklearn's SVC has it.
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("kernel", ["ngd", "linear", "rbf"])
def test_support_vectors_are_float64_whatever_the_dense_dtype(kernel, dtype):
    X, y = _fit_review_counts()
    model = kgeo.SVM(kernel=kernel).fit(X.astype(dtype), y)
    reference = kgeo.SVM(kernel=kernel).fit(X, y)
    assert model.support_vectors_.dtype == np.float64
    np.testing.assert_array_equal(model.support_, reference.support_)
    np.testing.assert_array_equal(model.support_vectors_, reference.support_vectors_)


def _stalled_fit(n_classes):
    rng = np.random.default_rng(0)
    Z = rng.poisson(1.0, (20 * n_classes, 8)).astype(float)
    Z[:, 0] += 1
    labels = np.tile(np.arange(n_classes), 20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = kgeo.SVM(kernel="ngd", tol=1e-300, max_iter=10**6).fit(Z, labels)
    return model, [w for w in caught if issubclass(w.category, kgeo.ConvergenceWarning)]


# Mutants F33 (the stall warning names the last stalled pair, not the first)
# and F34 (its stacklevel off by one: the warning points into kgeo).
def test_the_stall_warning_counts_the_pairs_names_the_first_and_points_at_the_caller():
    model, caught = _stalled_fit(3)
    assert model.fit_status_ == 1
    assert len(caught) == 1
    assert "for 3 of 3 class pair(s), first (0, 1):" in str(caught[0].message)
    assert caught[0].filename == __file__


# Mutant P5: shrinking=np.bool_ refused (the suite passes only Python bools).
def test_shrinking_takes_numpy_bools():
    X, y = _fit_review_counts()
    for value in (np.True_, np.False_):
        model = kgeo.SVM(shrinking=value).fit(X, y)
        reference = kgeo.SVM(shrinking=bool(value)).fit(X, y)
        np.testing.assert_array_equal(model.dual_coef_, reference.dual_coef_)


# Mutants P7 (max_iter=True accepted as 1) and P13 (degree=0 accepted by a
# kernel that does not read it).
@pytest.mark.parametrize("params, match", [
    ({"max_iter": True}, r"max_iter must be -1 \(libsvm's limit\) or an integer >= 0, got True"),
    ({"max_iter": False}, r"max_iter must be -1"),
    ({"kernel": "ngd", "degree": 0}, r"degree must be an integer >= 1, got 0"),
    ({"kernel": "linear", "degree": -2}, r"degree must be an integer >= 1, got -2"),
])
def test_more_invalid_parameters(params, match):
    X, y = _fit_review_counts()
    with pytest.raises(ValueError, match=match):
        kgeo.SVM(**params).fit(X, y)


# Mutant F36: rows whose k(x, x) overflows named by their place among the
# rows sorted by class instead of their number in X.
def test_an_overflowing_training_row_is_named_by_its_number_in_x():
    rng = np.random.default_rng(0)
    X = np.abs(rng.normal(size=(12, 3))) + 0.1
    y = np.array([1, 0] * 6)  # not sorted: row 2 is the 8th row by class
    X[2] = 1e50
    with pytest.raises(ValueError, match=r"1 training row\(s\) \(first rows \[2\]\)"):
        kgeo.SVM(kernel="poly", degree=4, gamma=1.0).fit(X, y)


# Mutant F39: a precomputed matrix's reach taken as largest + shift, so a
# large negative shift passed the overflow check.
def test_a_large_negative_shift_of_a_kernel_matrix_is_refused_as_overflow():
    y = np.array([1, 0] * 6)
    K = np.full((12, 12), 1e307) + np.eye(12)
    with pytest.raises(ValueError, match=r"kernel 'precomputed' overflows float64 on X"):
        kgeo.SVM(kernel="precomputed", shift=-1.5e308).fit(K, y)


# Mutant P4: cache_dtype checked only late in the fit, after X: parameters
# are refused before the data are read (a bad X then hid a bad parameter).
def test_cache_dtype_is_checked_before_the_data():
    X, y = _fit_review_counts()
    X[0, 0] = -1.0  # ngd refuses negative entries
    with pytest.raises(ValueError, match=r"cache_dtype must be 'float64' or 'float32'"):
        kgeo.SVM(cache_dtype="float16").fit(X, y)


# The shift's scale estimate prepares X's rows uncentred: its errors name the
# kernel (review 179).

def test_shift_scale_estimate_names_the_kernel_when_x_overflows():
    """rbf centres its training rows, so rows of 1e154 pass prepare_rows there;
    the shift's scale estimate reads them uncentred and overflows: its
    error must name 'rbf' (it named the kernel '' before d035e23)."""
    rng = np.random.default_rng(0)
    X = 1e154 + rng.random((12, 3))
    y = np.arange(12) % 2
    with pytest.raises(ValueError, match=r"kernel 'rbf' overflows float64 on X"):
        kgeo.SVM(kernel="rbf", shift=0.5).fit(X, y)


def test_shift_scale_estimate_names_the_kernel_for_a_row_outside_its_sample():
    """The estimate's second prepare_rows (every row, uncentred) overflows on
    row 1, which the 128 spaced rows of its sample leave out (review 179's
    mutant S04)."""
    rng = np.random.default_rng(0)
    X = 2e153 + rng.random((300, 1))
    X[1, 0] = 7e153  # squared 4.9e307 > max / 4; centred (rbf's training rows) it fits
    spaced = np.unique(np.linspace(0, X.shape[0] - 1, 128).astype(np.int64))
    assert 1 not in spaced
    with pytest.raises(ValueError, match=r"kernel 'rbf' overflows float64 on X: a row's "
                                         r"squared L2 norm is 4\.9e\+307"):
        kgeo.SVM(kernel="rbf", shift=0.5).fit(X, np.arange(300) % 2)


# --- from a mutation review of the row cache (helper 180) --------------------

def test_a_helper_that_keeps_up_is_judged_helpful_and_shares_every_block(
        rng, monkeypatch, request):
    """A helper that stores its half of every block (the solver leaves it one
    and waits for it) is judged helpful at every SHARE_WINDOW: the solver
    never falls back to computing alone, so every block the fit computes is
    shared, and the halves the helper stored are taken, not computed again
    (review 180: recomputing every half the solver had not computed itself,
    the helper's stored halves included, passed the suite: the bits are the
    same, but each block cost a whole block on the solver and the helper was
    judged useless and left out after 64 blocks)."""
    from kgeo import _solver

    if not _solver.ROW_HELPER:
        pytest.skip("this build runs no helper thread (no GCC atomics)")
    X, y = ck.make_count_data(rng, 600, 50, 2, density=0.3)
    one = kgeo.SVM(kernel="ngd", n_jobs=1, C=10.0).fit(X, y)
    caches = _spy_on_caches(monkeypatch)
    window = _solver._set_share_window(4)
    request.addfinalizer(lambda: _solver._set_share_window(window))
    wait = _solver._leave_halves_to_helper(10.0)
    request.addfinalizer(lambda: _solver._leave_halves_to_helper(wait))
    _solver._set_row_share_min(2)  # forgets earlier fits' judgements (conftest restores it)
    two = kgeo.SVM(kernel="ngd", n_jobs=2, C=10.0).fit(X, y)
    assert_identical(one, two)
    cache = caches[-1]
    computed = cache.stats()["blocks_computed"]
    assert computed > 16  # several windows judged
    assert cache.blocks_shared == computed
    assert cache.blocks_shared <= cache.parts_helped <= 2 * cache.blocks_shared


def test_a_float32_overflow_in_the_helpers_half_is_refused(rng, request):
    """A kernel value beyond float32's range in the half of a block that the
    helper thread computes is refused like one in the solver's half: the
    helper's overflow flag reaches the solver (board_overflow). Review 180:
    dropping the helper's flag passed the suite, and the fit went on with
    an inf in the cache. One row far from the others, last in its class:
    K(x, x) ~ 1e40 is the last value of its own-class block, in the half
    the solver leaves to the helper; repeated, since which half the helper
    claims is a race the solver nearly always wins."""
    from kgeo import _solver

    if not _solver.ROW_HELPER:
        pytest.skip("this build runs no helper thread (no GCC atomics)")
    X, y = ck.make_count_data(rng, 60, 6, 2)
    X = np.asarray(X, dtype=float)
    last = np.flatnonzero(y == y.min())[-1]  # last in its class: last in its block
    X[last] *= 1e20
    wait = _solver._leave_halves_to_helper(10.0)
    request.addfinalizer(lambda: _solver._leave_halves_to_helper(wait))
    window = _solver._set_share_window(2**62)
    request.addfinalizer(lambda: _solver._set_share_window(window))
    for _ in range(5):
        _solver._set_row_share_min(2)  # forgets earlier fits' judgements
        with pytest.raises(ValueError, match=r"beyond float32's range.*use cache_dtype='float64'"):
            kgeo.SVM(kernel="linear", C=1e-20, n_jobs=2, cache_dtype="float32").fit(X, y)


@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
def test_a_budget_of_the_peak_allocation_recomputes_nothing(cache_dtype, rng):
    """Spare buffers (of blocks that died) are freed before a live block is
    evicted: with a budget of exactly the most capacity a whole-Gram fit
    counted at once (stored blocks, spares and reserved ones), a fit whose
    classes have different block lengths (spares of one length do not serve
    another's blocks) computes no block twice and gives the same model.
    Review 180: evicting live blocks while spares of another
    length stayed passed the suite (89 of 22,438 values recomputed)."""
    X, y = ck.make_count_data(rng, 150, 15, 5, n_duplicates=3)
    assert len(set(np.bincount(y))) > 1  # several block lengths

    class OnDemand(kgeo.SVM):
        def _solve_pairs(self, cache, pairs, box):
            cache.sweep_enabled = False
            return super()._solve_pairs(cache, pairs, box)

    whole = OnDemand(kernel="ngd", cache_dtype=cache_dtype, n_jobs=1).fit(X, y)
    stats = whole.cache_stats_
    assert stats["values_computed"] == stats["values_distinct"]
    peak = stats["peak_values_allocated"]
    assert peak < stats["budget_values"]
    exact = OnDemand(kernel="ngd", cache_dtype=cache_dtype, n_jobs=1,
                     cache_size=peak * stats["value_bytes"] / 2**20).fit(X, y)
    stats = exact.cache_stats_
    assert stats["budget_values"] == peak
    assert stats["values_computed"] == stats["values_distinct"]
    assert stats["peak_values_allocated"] <= peak
    assert_identical(exact, whole)


@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
def test_a_cache_size_of_exactly_the_minimum_is_taken_without_a_warning(cache_dtype, rng):
    """The minimum budget (two rows of the largest pair) asked for exactly is
    enough: no warning, and the budget is that minimum (review 180: a
    warning for requested <= minimum passed the suite)."""
    X, y = ck.make_count_data(rng, 120, 15, 3, n_duplicates=3)
    largest_pair = int(np.sort(np.bincount(y))[-2:].sum())
    value_bytes = 4 if cache_dtype == "float32" else 8
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = kgeo.SVM(kernel="ngd", cache_dtype=cache_dtype, n_jobs=1,
                         cache_size=2 * largest_pair * value_bytes / 2**20).fit(X, y)
    assert model.cache_stats_["budget_values"] == 2 * largest_pair
    assert_identical(model, kgeo.SVM(kernel="ngd", cache_dtype=cache_dtype, n_jobs=1).fit(X, y))
