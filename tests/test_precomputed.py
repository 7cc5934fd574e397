"""kernel="precomputed": the solver on a kernel matrix the caller gives.

What must hold:

- The Gram matrix of a named kernel (``kgeo.pairwise_kernels``) trains the
  named kernel's model, bit for bit: the solver reads the same values in the
  same order, whatever the order of the samples.
- On any kernel matrix the solution satisfies Definition 2 (the independent
  checker), matches libsvm on the same matrix, and a shift changes nothing
  but rounding (Proposition 3).
- The matrix is read in place and never kept; bad matrices are refused with
  a message naming the problem and the entry.
"""

import os
import pickle
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import kgeo

# --import-mode=importlib keeps the tests folder off sys.path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svm_checker as ck  # noqa: E402

# Named kernels, with parameters that keep their values moderate.
NAMED = [
    ("linear", {}), ("poly", {"gamma": 0.05, "coef0": 1.0, "degree": 2}),
    ("rbf", {"gamma": 0.05}), ("sigmoid", {"gamma": 0.01, "coef0": -0.5}), ("ned", {}),
    ("ngd", {}), ("ngd+pi", {}), ("ngd_exp", {"t": 0.5}), ("bhattacharyya", {}),
    ("diffusion", {"t": 0.5}),
]


def gram(X, Y=None, kernel="ngd", **params):
    return kgeo.pairwise_kernels(X, Y, kernel=kernel, **params)


problem = ck.train_and_test_counts
assert_identical_models = ck.assert_identical_models


# ==========================================================================
# The same model as the named kernel
# ==========================================================================

@pytest.mark.parametrize("shift", [0.0, 0.37])
@pytest.mark.parametrize("sorted_by_class", [False, True])
@pytest.mark.parametrize("kernel,params", NAMED, ids=[k for k, _ in NAMED])
def test_gram_of_a_named_kernel_trains_its_model_bit_for_bit(kernel, params,
                                                             sorted_by_class, shift, rng):
    """The values the solver reads, then the decision values (each sum in the
    same order), are the same bits; a shift is added to each value alike."""
    X, y, Xt = problem(rng, n_duplicates=2)
    if sorted_by_class:
        order = np.argsort(y, kind="stable")
        X, y = X[order], y[order]
    named = kgeo.SVM(kernel=kernel, shift=shift, **params).fit(X, y)
    given = kgeo.SVM(kernel="precomputed", shift=shift).fit(
        gram(X, kernel=kernel, **params), y)
    assert_identical_models(named, given)
    assert given.support_vectors_.shape == (0, 0)
    assert given.n_features_in_ == X.shape[0]
    dec = named.decision_function(Xt)
    dec_given = given.decision_function(gram(Xt, X, kernel=kernel, **params))
    if kernel in ("ned", "rbf"):
        # Prediction moves rows of these kernels by the fitted centre, and
        # pairwise_kernels by its own choice: values a rounding apart.
        np.testing.assert_allclose(dec_given, dec, rtol=0, atol=1e-13)
    else:
        np.testing.assert_array_equal(dec_given, dec)
    np.testing.assert_array_equal(given.predict(gram(Xt, X, kernel=kernel, **params)),
                                  named.predict(Xt))


@pytest.mark.parametrize("kernel,params", NAMED, ids=[k for k, _ in NAMED])
def test_weights_of_zero_and_the_gram_of_the_other_samples(kernel, params, rng):
    """A sample of weight 0 is left out before ned and rbf centre the rows
    (dense counts, mostly nonzero: centred): their model is that of the other
    samples' Gram, bit for bit, and the full Gram's differs from it only by
    rounding. The other kernels do not move the rows: either Gram."""
    X = rng.poisson(2, (40, 12)).astype(float)
    X[X.sum(axis=1) == 0, 0] = 1
    y = rng.integers(0, 3, 40)
    y[:3] = [0, 1, 2]
    w = rng.integers(0, 3, 40).astype(float)
    w[:3] = 1
    keep = w > 0
    named = kgeo.SVM(kernel=kernel, **params).fit(X, y, sample_weight=w)
    kept = kgeo.SVM(kernel="precomputed").fit(gram(X[keep], kernel=kernel, **params), y[keep],
                                              sample_weight=w[keep])
    full = kgeo.SVM(kernel="precomputed").fit(gram(X, kernel=kernel, **params), y,
                                              sample_weight=w)
    np.testing.assert_array_equal(np.flatnonzero(keep)[kept.support_], named.support_)
    np.testing.assert_array_equal(full.support_, named.support_)
    for name in ("dual_coef_", "intercept_"):
        np.testing.assert_array_equal(getattr(kept, name), getattr(named, name))
        if kernel in ("ned", "rbf"):
            np.testing.assert_allclose(getattr(full, name), getattr(named, name), rtol=0,
                                       atol=1e-12)
        else:
            np.testing.assert_array_equal(getattr(full, name), getattr(named, name))


def test_newsgroups_ngd_gram_trains_the_ngd_model(newsgroups_subset):
    X, labels = newsgroups_subset
    named = kgeo.SVM(kernel="ngd").fit(X, labels)
    given = kgeo.SVM(kernel="precomputed").fit(gram(X), labels)
    assert_identical_models(named, given)
    # Both threads and the whole 20-class one-vs-one: the same model once more.
    again = kgeo.SVM(kernel="precomputed", n_jobs=1).fit(gram(X), labels)
    assert_identical_models(given, again)


def test_any_order_of_the_samples_gives_the_same_model(rng):
    """The solver reads the matrix through the class order it sorts the
    samples into: moving whole classes around the matrix (keeping each
    class's own order) changes nothing but the indices in support_."""
    X, y, Xt = problem(rng, n_train=70, n_classes=4)
    K, Kt = gram(X), gram(Xt, X)
    base = kgeo.SVM(kernel="precomputed").fit(K, y)
    # The samples of class 3 first, then 1, 0, 2 (each in its own order).
    perm = np.concatenate([np.flatnonzero(y == c) for c in (3, 1, 0, 2)])
    moved = kgeo.SVM(kernel="precomputed").fit(K[np.ix_(perm, perm)], y[perm])
    np.testing.assert_array_equal(perm[moved.support_], base.support_)
    for name in ("n_support_", "dual_coef_", "intercept_", "n_iter_"):
        np.testing.assert_array_equal(getattr(moved, name), getattr(base, name))
    np.testing.assert_array_equal(moved.decision_function(Kt[:, perm]),
                                  base.decision_function(Kt))


# ==========================================================================
# Any kernel matrix: the theory, libsvm, the cache
# ==========================================================================

def random_kernel_problem(rng, n_train=50, n_test=20, n_classes=3, rank=8):
    """A kernel none of kgeo's: inner products of random features (pd, of
    rank ``rank`` < n_train, so that some samples are linearly dependent)."""
    A = rng.normal(size=(n_train + n_test, rank)) + rng.normal(size=rank)
    y = np.arange(n_train) % n_classes
    rng.shuffle(y)
    A[:n_train] += 0.8 * np.eye(n_classes, rank)[y]
    K_all = A @ A[:n_train].T
    K = (K_all[:n_train] + K_all[:n_train].T) / 2  # BLAS rounds (i, j) and (j, i) alike, or not
    return K, y, K_all[n_train:]


@pytest.mark.parametrize("class_weight", [None, "balanced"])
@pytest.mark.parametrize("C", [0.05, 1.0, 20.0])
def test_solution_satisfies_definition_2(C, class_weight, rng):
    K, y, Kt = random_kernel_problem(rng)
    model = kgeo.SVM(kernel="precomputed", C=C, class_weight=class_weight).fit(K, y)
    report = ck.check_svm(model, K, y, X_test=Kt)
    assert any(p["n_free"] for p in report)


@pytest.mark.parametrize("n_classes,C", [(2, 0.3), (3, 1.0), (4, 10.0)])
def test_matches_libsvm_on_the_same_matrix(n_classes, C, rng):
    from sklearn.svm import SVC

    K, y, Kt = random_kernel_problem(rng, n_train=60, n_classes=n_classes)
    ref = SVC(kernel="precomputed", C=C, tol=1e-6).fit(K, y)
    model = kgeo.SVM(kernel="precomputed", C=C, tol=1e-6).fit(K, y)
    np.testing.assert_allclose(model.dual_objective_, ck.pair_objectives(ref, K, y), rtol=1e-6)
    np.testing.assert_array_equal(model.predict(Kt), ref.predict(Kt))
    np.testing.assert_allclose(model.decision_function(Kt), ref.decision_function(Kt),
                               atol=1e-4)


@pytest.mark.parametrize("shift", [np.pi, 10.0, -5.0])
def test_a_shift_changes_nothing(shift, rng):
    """Proposition 3 on a given matrix: shift=beta is K + beta, the same SVM."""
    X, y, Xt = problem(rng)
    K, Kt = gram(X), gram(Xt, X)
    plain = kgeo.SVM(kernel="precomputed").fit(K, y)
    shifted = kgeo.SVM(kernel="precomputed", shift=shift).fit(K, y)
    np.testing.assert_array_equal(shifted.support_, plain.support_)
    np.testing.assert_allclose(shifted.dual_coef_, plain.dual_coef_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(shifted.intercept_, plain.intercept_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(shifted.decision_function(Kt), plain.decision_function(Kt),
                               rtol=0, atol=1e-9)
    # shift=beta reads K + beta: the same model as K + beta given.
    assert_identical_models(shifted, kgeo.SVM(kernel="precomputed").fit(K + shift, y))
    # And NGD + pi given is the ngd+pi kernel's model.
    if shift == np.pi:
        assert_identical_models(shifted, kgeo.SVM(kernel="ngd+pi").fit(X, y))


def test_scaling_the_matrix_is_scaling_C(rng):
    K, y, Kt = random_kernel_problem(rng)
    a = kgeo.SVM(kernel="precomputed", C=2.0, tol=1e-8).fit(4.0 * K, y)
    b = kgeo.SVM(kernel="precomputed", C=8.0, tol=1e-8).fit(K, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(4.0 * a.dual_coef_, b.dual_coef_, rtol=0, atol=1e-6)
    np.testing.assert_allclose(a.decision_function(4.0 * Kt), b.decision_function(Kt),
                               rtol=0, atol=1e-6)


def test_cache_size_threads_and_float32(rng):
    X, y, Xt = problem(rng, n_train=90, n_classes=4)
    K = gram(X)
    base = kgeo.SVM(kernel="precomputed").fit(K, y)
    with pytest.warns(UserWarning, match="cache_size"):
        small = kgeo.SVM(kernel="precomputed", cache_size=1e-6, n_jobs=2).fit(K, y)
    assert_identical_models(small, base)
    assert_identical_models(kgeo.SVM(kernel="precomputed", n_jobs=1).fit(K, y), base)
    # float32: the SVM of the matrix rounded to float32, as the named kernel's.
    single = kgeo.SVM(kernel="precomputed", cache_dtype="float32").fit(K, y)
    assert single.cache_stats_["value_bytes"] == 4
    assert_identical_models(single, kgeo.SVM(kernel="ngd", cache_dtype="float32").fit(X, y))


def test_sparse_integer_and_read_only_matrices(rng):
    K, y, Kt = random_kernel_problem(rng)
    K = np.round(K * 10)  # whole numbers: exact as int64
    base = kgeo.SVM(kernel="precomputed").fit(K, y)
    assert_identical_models(kgeo.SVM(kernel="precomputed").fit(K.astype(np.int64), y), base)
    assert_identical_models(kgeo.SVM(kernel="precomputed").fit(sp.csr_matrix(K), y), base)
    assert_identical_models(kgeo.SVM(kernel="precomputed").fit(np.asfortranarray(K), y), base)
    frozen = K.copy()
    frozen.flags.writeable = False
    assert_identical_models(kgeo.SVM(kernel="precomputed", shift=1.5).fit(frozen, y),
                            kgeo.SVM(kernel="precomputed", shift=1.5).fit(K, y))
    np.testing.assert_array_equal(frozen, K)
    Kt = np.round(Kt * 10)
    np.testing.assert_array_equal(base.decision_function(sp.csr_matrix(Kt)),
                                  base.decision_function(Kt))


@pytest.mark.parametrize("n_classes", [5, 60])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_matrix_symmetric_to_rounding_is_read_as_given(n_jobs, n_classes, rng):
    """A Gram rounded asymmetrically (float32 arithmetic, say) is accepted,
    and read as libsvm reads it: row i for sample i. A step on alpha_i adds
    row i of K to the gradient, so G_k = y_k sum_i y_i alpha_i K[i, k] - 1:
    the KKT conditions hold for K.T's rows (the checker reads rows), not
    for K's, and prediction weighs the rows of the matrix it is given.
    With 60 classes of about 5 samples, the pairs' cross blocks are read
    ahead of their SMO (``sweep_cross``), both classes' rows as given."""
    n = 300
    A = rng.normal(size=(n, 30))
    y = rng.integers(0, n_classes, size=n)
    K = A @ A.T
    K = (K + K.T) / 2
    bent = K + rng.uniform(-2e-7, 2e-7, size=K.shape) * np.abs(K).max()
    model = kgeo.SVM(kernel="precomputed", tol=1e-8, n_jobs=n_jobs).fit(bent, y)
    ck.check_svm(model, bent.T, y)
    with pytest.raises(AssertionError, match="KKT gap|margin|intercept"):
        ck.check_svm(model, bent, y)


def test_the_model_keeps_no_copy_and_pickles(rng):
    X, y, Xt = problem(rng, n_train=200, n_classes=2)
    K, Kt = gram(X), gram(Xt, X)
    model = kgeo.SVM(kernel="precomputed").fit(K, y)
    saved = pickle.dumps(model)
    # Coefficients and indices of the support vectors, not K's 320 KB.
    assert len(saved) < K.nbytes / 10
    loaded = pickle.loads(saved)
    np.testing.assert_array_equal(loaded.decision_function(Kt), model.decision_function(Kt))
    assert loaded.score(Kt, loaded.predict(Kt)) == 1.0


def test_estimator_tags_say_pairwise():
    assert kgeo.SVM(kernel="precomputed").__sklearn_tags__().input_tags.pairwise
    assert not kgeo.SVM(kernel="ngd").__sklearn_tags__().input_tags.pairwise


def test_works_in_scikit_learn_cross_validation(rng):
    """scikit-learn slices a pairwise estimator's X on both axes (its tag)."""
    from sklearn.model_selection import cross_val_score

    X, y, _ = problem(rng, n_train=90, n_classes=3, separation=3.0)
    named = cross_val_score(kgeo.SVM(kernel="ngd"), X, y, cv=3)
    given = cross_val_score(kgeo.SVM(kernel="precomputed"), gram(X), y, cv=3)
    np.testing.assert_array_equal(given, named)


# ==========================================================================
# The compiled pass behind the checks, against NumPy
# ==========================================================================

def summary_reference(K, square):
    finite = np.isfinite(K)
    bad = np.argwhere(~finite)
    largest = float(np.abs(K[finite]).max(initial=0.0))
    asymmetry, at = 0.0, (0, 0)
    if square and finite.all():
        with np.errstate(over="ignore"):  # a gap beyond float64 is inf, as it should be
            gap = np.triu(np.abs(K - K.T), 1)
        asymmetry = float(gap.max())
        if asymmetry > 0:
            at = tuple(int(v) for v in np.argwhere(gap == asymmetry)[0])
    return (int(bad.shape[0]), tuple(int(v) for v in bad[0]) if bad.size else None,
            largest, asymmetry, at)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("n", [1, 63, 64, 65, 200, 700])
def test_matrix_summary_matches_numpy(n, n_threads, rng):
    from kgeo._kernels import kernel_matrix_summary

    A = rng.normal(size=(n, 5))
    K = A @ A.T
    K = (K + K.T) / 2
    cases = [K]
    bent = K.copy()
    k = rng.integers(0, n, size=(6, 2))
    bent[k[:, 0], k[:, 1]] += rng.normal(size=6)  # asymmetric where the pair differs
    cases.append(bent)
    tied = K.copy()
    if n > 2:
        # Equal gaps in two places: the first in row order is named.
        tied[n - 2, n - 1] += 1.0
        tied[0, n - 1] += 1.0
    cases.append(tied)
    if n > 8:
        # Equal gaps in one row, in one tile of columns and in two: the first
        # column is named (each row is reduced in four running maxima).
        one_row = K.copy()
        one_row[1, [n - 1, 7, 6]] += 2.0
        cases.append(one_row)
        # A gap beyond float64 (inf) is the largest.
        overflow = K.copy()
        overflow[2, n - 2], overflow[n - 2, 2] = 1e308, -1e308
        cases.append(overflow)
    broken = K.copy()
    broken[k[:3, 0], k[:3, 1]] = [np.nan, np.inf, -np.inf]
    cases.append(broken)
    late = K.copy()  # non-finite entries only in the last row, in the tail of 4
    late[n - 1, n - 1] = np.nan
    cases.append(late)
    for M in cases:
        assert kernel_matrix_summary(M, True, n_threads) == summary_reference(M, True)
        rect = M[:, : max(1, n // 2)].copy()
        assert kernel_matrix_summary(rect, False, n_threads) == summary_reference(rect, False)


def test_matrix_summary_counts_the_largest_float64_as_finite():
    """Only NaN and +-inf are not finite: +-1.7976931348623157e308 is the
    largest magnitude, not a bad entry."""
    from kgeo._kernels import kernel_matrix_summary

    top = np.finfo(np.float64).max
    K = np.array([[top, 1.0], [1.0, -top]])
    assert kernel_matrix_summary(K, True) == summary_reference(K, True) == (
        0, None, top, 0.0, (0, 0))
    K[0, 1] = np.inf
    assert kernel_matrix_summary(K, False) == summary_reference(K, False) == (
        1, (0, 1), top, 0.0, (0, 0))


def test_matrix_summary_square_needs_a_square_matrix():
    from kgeo._kernels import kernel_matrix_summary

    with pytest.raises(ValueError, match=r"square=True needs a square matrix, got shape \(2, 3\)"):
        kernel_matrix_summary(np.zeros((2, 3)), True)


def test_precomputed_kernel_refuses_positions_outside_the_matrix():
    """Each position must index a sample of the square matrix: [0, n)."""
    from kgeo._kernels import PrecomputedKernel

    K = np.arange(9.0).reshape(3, 3)
    PrecomputedKernel(K, np.array([2, 0, 1, 2], dtype=np.int64))  # every sample, repeated
    for bad in (3, -1):
        with pytest.raises(ValueError, match=rf"position\[1\] = {bad} is not a sample of "
                                             rf"the 3 x 3 kernel matrix"):
            PrecomputedKernel(K, np.array([0, bad, 1], dtype=np.int64))
    with pytest.raises(ValueError, match=r"the kernel matrix must be square, got shape \(2, 3\)"):
        PrecomputedKernel(np.zeros((2, 3)), np.array([0], dtype=np.int64))


# ==========================================================================
# Bad input
# ==========================================================================

def _fit(K, y=None, **params):
    K = np.asarray(K) if not sp.issparse(K) else K
    y = np.arange(K.shape[0]) % 2 if y is None else y
    return kgeo.SVM(kernel="precomputed", **params).fit(K, y)


SQUARE = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 2.0]])


def _with(i, j, value, K=SQUARE):
    K = K.copy()
    K[i, j] = value
    return K


@pytest.mark.parametrize("K,y,error,match", [
    (np.ones((3, 2)), None, ValueError,
     r"square kernel matrix of the training samples.*shape \(3, 2\)"),
    (np.ones(3), None, ValueError, r"Expected a 2D array for X, got a 1D array"),
    (np.ones((0, 0)), [], ValueError, r"0 sample\(s\)"),
    (np.ones((3, 0)), None, ValueError, r"0 feature\(s\) \(shape=\(3, 0\)\)"),
    (_with(1, 2, np.nan), None, ValueError,
     r"X contains 1 value\(s\) that are NaN, infinite or beyond float64's range, first "
     r"X\[1, 2\] = nan"),
    (sp.csr_matrix(_with(1, 2, np.nan)), None, ValueError, r"first X\[1, 2\] = nan"),
    (_with(0, 0, -np.inf), None, ValueError, r"X\[0, 0\] = -inf"),
    (np.array([[1.0, None], [None, 1.0]], dtype=object), [0, 1], ValueError,
     r"first X\[0, 1\] = None"),
    (sp.csr_matrix((0, 0)), [], ValueError, r"0 sample\(s\)"),
    (np.full((3, 3), 1e308), [0, 1, 1], ValueError,
     r"kernel 'precomputed' overflows float64 on X: its values \(largest magnitude 1e\+308"),
    (np.eye(3) * 1e-309, [0, 1, 1], ValueError,
     r"kernel 'precomputed' underflows float64 on X: its largest magnitude is 1e-309.*scale X up"),
    (_with(0, 2, 0.5), None, ValueError,
     r"not a symmetric kernel matrix: X\[0, 2\] = 0\.5 but X\[2, 0\] = 0\.0"),
    (SQUARE.astype(complex), None, ValueError, r"Complex data not supported"),
    (SQUARE.astype(str), None, TypeError, r"must hold numbers"),
    (SQUARE, [0, 1], ValueError, r"3.*2|2.*3"),
], ids=["not-square", "1d", "empty", "no-columns", "nan", "sparse-nan", "inf", "none",
        "sparse-empty", "overflow", "underflow", "asymmetric", "complex", "strings",
        "labels-length"])
def test_bad_matrices_at_fit(K, y, error, match):
    with pytest.raises(error, match=match):
        _fit(K, y)


def test_bad_matrix_none():
    with pytest.raises(TypeError, match=r"X must be an array-like or a sparse matrix, got None"):
        kgeo.SVM(kernel="precomputed").fit(None, [0, 1])


def test_bad_matrices_at_prediction():
    model = _fit(SQUARE, [0, 1, 1])
    with pytest.raises(ValueError, match=r"X has 2 features, but SVM is expecting 3 features"
                                         r".*kernel between the samples and the 3 training"):
        model.predict(np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"X has 0 features, but SVM is expecting 3"):
        model.predict(np.ones((2, 0)))
    with pytest.raises(ValueError, match=r"X\[1, 0\] = nan"):
        model.decision_function(_with(1, 0, np.nan))
    with pytest.raises(ValueError, match=r"decision values are not finite for 1 row"):
        model.decision_function(np.array([[1.7e308, -1.7e308, 0.0], [1.0, 2.0, 3.0]]))
    with pytest.raises(ValueError, match=r"Expected a 2D array"):
        model.predict(np.ones(3))
    # Prediction does not ask for a square or symmetric matrix.
    assert model.predict(np.array([[1.0, 2.0, 3.0]])).shape == (1,)


def test_a_shift_that_swamps_or_overflows_the_matrix_is_refused():
    with pytest.raises(ValueError, match=r"shift=1e\+20 swamps the kernel: its values here "
                                         r"are at most 2 in magnitude"):
        _fit(SQUARE, [0, 1, 1], shift=1e20)
    with pytest.raises(ValueError, match=r"overflows float64 on X: its values \(largest "
                                         r"magnitude 2, shift 1e\+308\)"):
        _fit(SQUARE, [0, 1, 1], shift=1e308)
    with pytest.warns(UserWarning, match=r"keeps only about"):
        _fit(SQUARE, [0, 1, 1], shift=1e10)
    # At |shift| eps = max|K| exactly, K + shift is a multiple of 2 (the ulp
    # of 2**53): SQUARE's 1s round to 0 or 2, the kernel is lost already.
    with pytest.raises(ValueError, match=r"shift=9007199254740992.0 swamps the kernel"):
        _fit(SQUARE, [0, 1, 1], shift=float(2.0 / np.finfo(np.float64).eps))


def test_damaged_support_is_named(rng):
    model = _fit(SQUARE, [0, 1, 1])
    model.support_ = model.support_ + 10
    with pytest.raises(ValueError, match=r"support_ must index the 3 training samples"):
        model.predict(SQUARE)


def test_a_support_index_one_past_the_last_column_is_named():
    """support_ indexes the columns 0 .. n_train - 1 of the matrix predicted:
    the first index past them is damage named as such, not an IndexError
    from deep inside NumPy."""
    model = _fit(SQUARE, [0, 1, 1])
    support = model.support_.copy()
    support[-1] = 3
    model.support_ = support
    with pytest.raises(ValueError, match=r"support_ must index the 3 training samples"):
        model.predict(SQUARE)


def test_a_zero_decision_value_is_not_a_negative_zero():
    """A binary model's decision values are -(libsvm's), negated: a value of
    exactly 0 (here every one, from an all-zero Gram) must come out as 0.0,
    not -0.0, which prints as "-0." and has np.signbit set (so np.sign,
    copysign and 1 / d give the other class's side)."""
    K = np.zeros((6, 6))
    model = kgeo.SVM(kernel="precomputed").fit(K, [0, 0, 0, 1, 1, 1])
    dec = model.decision_function(np.zeros((4, 6)))
    np.testing.assert_array_equal(dec, 0.0)
    assert not np.any(np.signbit(dec))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_zero_intercept_is_not_a_negative_zero(n_classes):
    """b* = -(mean of y G over the free variables) was -0.0 where that mean
    is 0, as for the identity Gram (found by mutation review 182), and
    printed as "-0."; a binary model's intercept is then negated, which must
    not turn 0.0 into -0.0 either."""
    model = kgeo.SVM(kernel="precomputed").fit(np.eye(n_classes), np.arange(n_classes))
    np.testing.assert_array_equal(model.intercept_, 0.0)
    assert not np.any(np.signbit(model.intercept_))


def test_kernel_changed_after_fit_is_refused():
    model = _fit(SQUARE, [0, 1, 1])
    model.set_params(kernel="linear")
    with pytest.raises(ValueError, match=r"kernel='linear', but this SVM was fitted with "
                                         r"kernel='precomputed'"):
        model.predict(SQUARE)


def test_unknown_kernel_message_names_precomputed():
    with pytest.raises(ValueError, match=r"Unknown kernel 'gram'; known kernels: .*; or "
                                         r"'precomputed' \(X is then the kernel matrix\)"):
        kgeo.SVM(kernel="gram").fit(SQUARE, [0, 1, 1])


def indefinite_kernel_problem(rng, duplicated):
    """random_kernel_problem's matrix less 3 on the diagonal: pairs of
    samples less than sqrt(6) apart get K_ii + K_jj - 2 K_ij <= 0 (69 of the
    1225 pairs); ``duplicated``: samples 40..49 first made copies of 0..9,
    so that each copy and its original then have the curvature -6."""
    K, y, Kt = random_kernel_problem(rng)
    n = len(y)
    if duplicated:
        copies, originals = np.arange(n - 10, n), np.arange(10)
        K[copies] = K[originals]
        K[:, copies] = K[:, originals]
        Kt[:, copies] = Kt[:, originals]
    return K - 3.0 * np.eye(n), y, Kt


@pytest.mark.parametrize("scans", ["avx512", "avx2", "portable"])
@pytest.mark.parametrize("duplicated,C", [(False, 1.0), (False, 20.0), (True, 5.0)])
def test_an_indefinite_matrix_trains_libsvms_model(duplicated, C, scans, rng):
    """SMO copes with negative curvature as libsvm does (TAU: a pair whose
    K_ii + K_jj - 2 K_ij <= 0 is given the curvature 1e-12, in the choice of
    j and in the step): on an indefinite matrix the dual is not concave and
    has many stationary points, and the one reached here is libsvm's, not
    merely one that satisfies Definition 2. Without shrinking, whose schedule
    is kgeo's own ("auto") and so may take another path to another one. (Not
    on every matrix and C: this one at C = 0.3 and the duplicated one at
    C = 20 end at other stationary points than libsvm's, also without
    shrinking.)"""
    from sklearn.svm import SVC
    from test_svm import fit_with_scans

    K, y, Kt = indefinite_kernel_problem(rng, duplicated)
    assert np.linalg.eigvalsh(K).min() < 0
    d = np.diag(K)
    curvature = d[:, None] + d[None, :] - 2.0 * K
    # SMO steps on such pairs 14, 15 and 13 times in these three cases (counted
    # with a print in update_pair).
    assert np.count_nonzero(np.triu(curvature <= 0, 1)) >= 60
    tol = 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = fit_with_scans(scans, K, y, kernel="precomputed", C=C, tol=tol,
                               shrinking=False, n_jobs=1)
    if model is None:
        pytest.skip(f"this CPU has no {scans} scans")
    ck.check_svm(model, K, y, X_test=Kt)
    ref = SVC(kernel="precomputed", C=C, tol=tol, shrinking=False).fit(K, y)
    np.testing.assert_array_equal(model.support_, ref.support_)
    np.testing.assert_array_equal(model.n_support_, ref.n_support_)
    # Both stop at a KKT gap under tol at the same stationary point (in as many
    # iterations or not: 46 and 56 in one pair here): the objectives agree
    # to 1e-14 of their size (measured), the coefficients to 2.3e-6 at C = 20
    # (each solver snaps to bounds and rounds its own way), the decision
    # values as in test_matches_libsvm_on_the_same_matrix. The other
    # stationary points that a curvature of |quad| instead of TAU reaches
    # (in the step or in the choice of j) differ in the support set.
    np.testing.assert_allclose(model.dual_objective_, ck.pair_objectives(ref, K, y),
                               rtol=1e-12)
    np.testing.assert_allclose(model.dual_coef_, ref.dual_coef_, rtol=0, atol=1e-5 * C)
    np.testing.assert_allclose(model.intercept_, ref.intercept_, rtol=0, atol=1e-4)
    np.testing.assert_allclose(model.decision_function(Kt), ref.decision_function(Kt),
                               rtol=0, atol=1e-4)
    np.testing.assert_array_equal(model.predict(Kt), ref.predict(Kt))


def test_asymmetry_just_above_one_millionth_is_refused():
    """The symmetry tolerance is 1e-6 of the largest magnitude: half of it
    is rounding to accept, five times it a matrix to refuse."""
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(12, 4))
    K = Z @ Z.T
    y = np.arange(12) % 2
    largest = np.abs(K).max()
    inside, outside = K.copy(), K.copy()
    inside[0, 5] += 0.5e-6 * largest
    outside[0, 5] += 5e-6 * largest
    kgeo.SVM(kernel="precomputed").fit(inside, y)
    with pytest.raises(ValueError, match="not a symmetric kernel matrix"):
        kgeo.SVM(kernel="precomputed").fit(outside, y)


def test_an_all_zero_matrix_is_accepted_as_libsvm_accepts_it():
    """Asymmetry 0 of a largest magnitude 0 is within the tolerance (the
    comparison is strict): an all-zero Gram (the constant kernel shifted to
    0, an empty vocabulary) is a kernel matrix, which libsvm fits too."""
    from sklearn.svm import SVC

    K = np.zeros((6, 6))
    y = np.array([0, 0, 0, 1, 1, 1])
    model = kgeo.SVM(kernel="precomputed").fit(K, y)
    ref = SVC(kernel="precomputed").fit(K, y)
    np.testing.assert_array_equal(model.predict(K), ref.predict(K))
    np.testing.assert_allclose(model.intercept_, ref.intercept_, atol=1e-12)
