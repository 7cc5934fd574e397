"""A callable kernel: ``kgeo.SVM(kernel=f)`` with ``f(A, B)`` the matrix of k(a, b).

What must hold:

- A function returning a named kernel's matrix (``kgeo.pairwise_kernels``)
  trains that kernel's model bit for bit, and predicts as it does: the
  solver reads the same values in the same order.
- On a kernel none of kgeo's, the solution satisfies Definition 2 (the
  independent checker) and matches scikit-learn's ``SVC`` given the same
  function.
- The function sees float64 rows in the format X came in; prediction calls
  it on chunks of rows against ``support_vectors_``.
- What it returns is checked as a precomputed matrix is, with messages that
  name the function; its own errors reach the caller unchanged.
"""

import os
import pickle
import sys
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import kgeo
from kgeo import _svm

# --import-mode=importlib keeps the tests folder off sys.path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svm_checker as ck  # noqa: E402

NAMED = [
    ("linear", {}), ("poly", {"gamma": 0.05, "coef0": 1.0, "degree": 2}),
    ("rbf", {"gamma": 0.05}), ("ned", {}), ("ngd", {}), ("ngd_exp", {"t": 0.5}),
    ("bhattacharyya", {}), ("diffusion", {"t": 0.5}),
]


def named_kernel(kernel, **params):
    """The named kernel as a function (a closure: pickles only by reference)."""
    def k(A, B):
        return kgeo.pairwise_kernels(A, B, kernel=kernel, **params)
    k.__name__ = f"{kernel}_matrix"
    return k


def histogram_intersection(A, B):
    """sum_i min(a_i, b_i): positive definite on non-negative rows, and not
    one of kgeo's kernels. Module level, so that models using it pickle."""
    A = A.toarray() if sp.issparse(A) else A
    B = B.toarray() if sp.issparse(B) else B
    return np.minimum(A[:, None, :], B[None, :, :]).sum(axis=2)


problem = ck.train_and_test_counts
assert_identical_models = ck.assert_identical_models


# ==========================================================================
# The same model as the named kernel
# ==========================================================================

@pytest.mark.parametrize("shift", [0.0, 0.37])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("kernel,params", NAMED, ids=[k for k, _ in NAMED])
def test_a_named_kernels_function_trains_its_model_bit_for_bit(kernel, params, sparse,
                                                               shift, rng):
    X, y, Xt = problem(rng)
    if sparse:
        X, Xt = sp.csr_matrix(X), sp.csr_matrix(Xt)
    named = kgeo.SVM(kernel=kernel, shift=shift, **params).fit(X, y)
    given = kgeo.SVM(kernel=named_kernel(kernel, **params), shift=shift).fit(X, y)
    assert_identical_models(given, named)
    np.testing.assert_array_equal(given.decision_function(Xt), named.decision_function(Xt))
    np.testing.assert_array_equal(given.predict(Xt), named.predict(Xt))
    # The support vectors are the training rows, in the format given.
    assert sp.issparse(given.support_vectors_) == sparse
    rows = X[given.support_]
    np.testing.assert_array_equal(
        given.support_vectors_.toarray() if sparse else given.support_vectors_,
        rows.toarray() if sparse else rows)


def test_samples_of_weight_zero_are_left_out_of_the_call(rng):
    X, y, Xt = problem(rng)
    weight = np.ones(X.shape[0])
    weight[[0, 7, 20]] = 0.0
    weight[[3, 4]] = 2.5
    sizes = []

    def ngd(A, B):
        sizes.append((A.shape[0], B.shape[0]))
        return kgeo.pairwise_kernels(A, B, kernel="ngd")

    given = kgeo.SVM(kernel=ngd).fit(X, y, sample_weight=weight)
    named = kgeo.SVM(kernel="ngd").fit(X, y, sample_weight=weight)
    assert sizes == [(57, 57)]
    assert_identical_models(given, named)
    assert not np.isin([0, 7, 20], given.support_).any()
    np.testing.assert_array_equal(given.decision_function(Xt), named.decision_function(Xt))


# ==========================================================================
# A kernel none of kgeo's
# ==========================================================================

@pytest.mark.parametrize("class_weight", [None, "balanced"])
@pytest.mark.parametrize("C", [0.05, 1.0, 20.0])
def test_solution_satisfies_definition_2(C, class_weight, rng):
    X, y, Xt = problem(rng)
    model = kgeo.SVM(kernel=histogram_intersection, C=C, class_weight=class_weight).fit(X, y)
    report = ck.check_svm(model, X, y, X_test=Xt)
    assert any(p["n_free"] for p in report)


@pytest.mark.parametrize("n_classes,C", [(2, 0.3), (3, 1.0), (4, 10.0)])
def test_matches_scikit_learns_svc_given_the_same_function(n_classes, C, rng):
    from sklearn.svm import SVC

    X, y, Xt = problem(rng, n_classes=n_classes)
    ref = SVC(kernel=histogram_intersection, C=C, tol=1e-6).fit(X, y)
    model = kgeo.SVM(kernel=histogram_intersection, C=C, tol=1e-6).fit(X, y)
    K = histogram_intersection(X, X)
    np.testing.assert_allclose(model.dual_objective_, ck.pair_objectives(ref, K, y), rtol=1e-6)
    np.testing.assert_array_equal(model.predict(Xt), ref.predict(Xt))
    np.testing.assert_allclose(model.decision_function(Xt), ref.decision_function(Xt),
                               atol=1e-4)


def test_a_shift_is_the_function_plus_the_shift(rng):
    X, y, Xt = problem(rng)
    shifted = kgeo.SVM(kernel=histogram_intersection, shift=2.5).fit(X, y)
    plus = kgeo.SVM(kernel=lambda A, B: histogram_intersection(A, B) + 2.5).fit(X, y)
    assert_identical_models(shifted, plus)
    np.testing.assert_array_equal(shifted.predict(Xt), plus.predict(Xt))
    np.testing.assert_allclose(shifted.decision_function(Xt), plus.decision_function(Xt),
                               rtol=0, atol=1e-12)


# ==========================================================================
# What the function is given
# ==========================================================================

@pytest.mark.parametrize("given,kind,dtype", [
    ("int array", np.ndarray, np.int64), ("list", np.ndarray, np.float64),
    ("float32 array", np.ndarray, np.float32), ("csc", sp.csr_matrix, np.float64),
    ("float32 csr", sp.csr_matrix, np.float64)])
def test_the_function_sees_rows_in_the_format_given(given, kind, dtype, rng):
    """Dense numbers keep their dtype (integer row indices stay integers);
    sparse ones arrive as float64 CSR."""
    X, y, Xt = problem(rng, n_train=30, n_test=10)
    seen = []

    def k(A, B):
        seen.append((type(A), A.dtype, type(B), B.dtype))
        return histogram_intersection(A, B)

    to = {"int array": lambda M: M.astype(np.int64), "list": lambda M: M.tolist(),
          "float32 array": lambda M: M.astype(np.float32), "csc": sp.csc_matrix,
          "float32 csr": lambda M: sp.csr_matrix(M, dtype=np.float32)}
    model = kgeo.SVM(kernel=k).fit(to[given](X), y)
    model.predict(to[given](Xt))
    assert len(seen) == 2
    for types in seen:
        assert issubclass(types[0], kind) and issubclass(types[2], kind)
        assert types[1] == types[3] == dtype
    reference = kgeo.SVM(kernel=histogram_intersection).fit(X.astype(np.float64), y)
    assert_identical_models(model, reference)


def test_prediction_calls_the_function_in_chunks_of_rows(rng, monkeypatch):
    X, y, Xt = problem(rng, n_train=60, n_test=50)
    whole = kgeo.SVM(kernel=histogram_intersection).fit(X, y)
    expected = whole.decision_function(Xt), whole.predict(Xt)
    calls = []

    def k(A, B):
        calls.append(A.shape[0])
        return histogram_intersection(A, B)

    model = kgeo.SVM(kernel=k).fit(X, y)
    n_sv = model.support_vectors_.shape[0]
    # Values per chunk: 7 rows against every support vector.
    monkeypatch.setattr(_svm, "_PREDICT_CHUNK_VALUES", 7 * n_sv)
    monkeypatch.setattr(_svm, "_CALLABLE_CHUNK_VALUES", 7 * n_sv)
    calls.clear()
    decision, labels = model.decision_function(Xt), model.predict(Xt)
    assert calls == [7] * 7 + [1] + [7] * 7 + [1]
    np.testing.assert_array_equal(decision, expected[0])
    np.testing.assert_array_equal(labels, expected[1])


def test_one_row_predicts_as_in_a_batch(rng):
    X, y, Xt = problem(rng)
    model = kgeo.SVM(kernel=histogram_intersection).fit(X, y)
    batch = model.decision_function(Xt)
    single = np.vstack([model.decision_function(Xt[i:i + 1]) for i in range(Xt.shape[0])])
    np.testing.assert_array_equal(single, batch)


# ==========================================================================
# scikit-learn and pickling
# ==========================================================================

def test_pickles_with_a_module_level_function(rng):
    X, y, Xt = problem(rng)
    model = kgeo.SVM(kernel=histogram_intersection).fit(X, y)
    loaded = pickle.loads(pickle.dumps(model))
    assert loaded.kernel is histogram_intersection
    np.testing.assert_array_equal(loaded.decision_function(Xt), model.decision_function(Xt))


def test_grid_search_over_a_function_and_a_named_kernel(rng):
    from sklearn.model_selection import GridSearchCV, cross_val_score

    X, y, _ = problem(rng, n_train=90, separation=3.0)
    ngd = named_kernel("ngd")
    search = GridSearchCV(kgeo.SVM(), {"kernel": [ngd, "ngd"], "C": [0.5, 2.0]}, cv=3)
    search.fit(X, y)
    results = search.cv_results_
    by_function = [k is ngd for k in results["param_kernel"]]
    assert sum(by_function) == 2
    np.testing.assert_array_equal(results["mean_test_score"][np.flatnonzero(by_function)],
                                  results["mean_test_score"][np.flatnonzero(~np.array(
                                      by_function))])
    np.testing.assert_array_equal(cross_val_score(kgeo.SVM(kernel=ngd), X, y, cv=3),
                                  cross_val_score(kgeo.SVM(kernel="ngd"), X, y, cv=3))


def test_tags_do_not_say_pairwise():
    # X holds features: scikit-learn's splitters must slice its rows only.
    assert not kgeo.SVM(kernel=histogram_intersection).__sklearn_tags__().input_tags.pairwise


# ==========================================================================
# Bad functions and bad input
# ==========================================================================

X_SMALL = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0], [3.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
Y_SMALL = [0, 1, 0, 1]


def _ragged(A, B):
    return [[1.0] * B.shape[0]] + [[1.0]] * (A.shape[0] - 1)


@pytest.mark.parametrize("function,error,match", [
    (lambda A, B: np.ones((3, 3)), ValueError,
     r"kernel=<lambda> must return the matrix of k\(x, y\) .* of shape \(4, 4\) here; "
     r"<lambda>\(X, X\) returned shape \(3, 3\)"),
    (lambda A, B: 1.0, TypeError, r"<lambda>\(X, X\) returned float"),
    (lambda A, B: (row for row in A @ B.T), TypeError, r"<lambda>\(X, X\) returned generator"),
    (lambda A, B: np.float64(1.0), ValueError, r"<lambda>\(X, X\) returned shape \(\)"),
    (lambda A, B: None, TypeError,
     r"kernel=<lambda> must return an array-like or a sparse matrix of numbers; "
     r"<lambda>\(X, X\) returned NoneType"),
    (lambda A, B: "K", TypeError, r"returned str"),
    (_ragged, TypeError, r"kernel=_ragged must return an array-like .* returned list"),
    (lambda A, B: np.full((4, 4), "a"), TypeError,
     r"<lambda>\(X, X\) must hold numbers \(bool, int or float\)"),
    (lambda A, B: np.where(np.eye(4) > 0, np.nan, 1.0), ValueError,
     r"<lambda>\(X, X\) contains 4 value\(s\) that are NaN, infinite .* first "
     r"<lambda>\(X, X\)\[0, 0\] = nan"),
    (lambda A, B: np.triu(A @ B.T), ValueError,
     r"<lambda>\(X, X\) is not a symmetric kernel matrix: .* kernel=<lambda> needs "
     r"K\[i, j\] = k\(x_i, x_j\)"),
    (lambda A, B: A @ B.T * 1e307, ValueError,
     r"kernel=<lambda> overflows float64 on <lambda>\(X, X\): .* scale its values down"),
    (lambda A, B: A @ B.T * 1e-310, ValueError,
     r"kernel=<lambda> underflows float64 on <lambda>\(X, X\): .* scale its values up"),
])
def test_bad_return_values_at_fit(function, error, match):
    with pytest.raises(error, match=match):
        kgeo.SVM(kernel=function).fit(X_SMALL, Y_SMALL)


def test_bad_return_values_at_prediction():
    answers = {"K": None}

    def k(A, B):
        return A @ B.T if answers["K"] is None else answers["K"](A, B)

    model = kgeo.SVM(kernel=k, C=10.0).fit(X_SMALL, Y_SMALL)
    n_sv = model.support_vectors_.shape[0]
    answers["K"] = lambda A, B: np.ones((A.shape[0], B.shape[0] + 1))
    with pytest.raises(ValueError, match=rf"k\(X, support_vectors_\) returned shape "
                                         rf"\(2, {n_sv + 1}\)"):
        model.predict(X_SMALL[:2])
    answers["K"] = lambda A, B: np.full((A.shape[0], B.shape[0]), np.inf)
    with pytest.raises(ValueError, match=r"k\(X, support_vectors_\) contains"):
        model.decision_function(X_SMALL[:2])
    answers["K"] = None
    model.predict(X_SMALL)  # the model itself is unharmed


def test_the_functions_own_error_reaches_the_caller_and_keeps_the_fit():
    calls = {"n": 0}

    def flaky(A, B):
        calls["n"] += 1
        if calls["n"] > 1:
            raise RuntimeError("kernel server unreachable")
        return A @ B.T

    model = kgeo.SVM(kernel=flaky, C=10.0).fit(X_SMALL, Y_SMALL)
    coef = model.dual_coef_.copy()
    with pytest.raises(RuntimeError, match="kernel server unreachable"):
        model.fit(X_SMALL[::-1], Y_SMALL)
    np.testing.assert_array_equal(model.dual_coef_, coef)


@pytest.mark.parametrize("X,error,match", [
    (np.array([[1.0, np.nan, 0.0], [0.0, 1.0, 1.0]]), ValueError,
     r"X contains 1 NaN or infinity value\(s\)"),
    (np.zeros((2, 0)), ValueError, r"0 feature\(s\)"),
    (np.ones(3), ValueError, r"Expected a 2D array for X"),
    (np.array([[1 + 2j, 0], [0, 1]]), ValueError, r"Complex data not supported"),
    (None, TypeError, r"X must be an array-like or a sparse matrix, got None"),
])
def test_bad_X_is_refused_before_the_function_is_called(X, error, match):
    called = []

    def k(A, B):
        called.append(True)
        return A @ B.T

    with pytest.raises(error, match=match):
        kgeo.SVM(kernel=k).fit(X, [0, 1])
    assert not called


def test_prediction_checks_the_number_of_features():
    model = kgeo.SVM(kernel=lambda A, B: A @ B.T).fit(X_SMALL, Y_SMALL)
    with pytest.raises(ValueError, match="X has 2 features, but SVM is expecting 3"):
        model.predict(X_SMALL[:, :2])


def test_another_function_after_fit_is_refused():
    model = kgeo.SVM(kernel=histogram_intersection).fit(X_SMALL, Y_SMALL)
    model.set_params(kernel=lambda A, B: A @ B.T)
    with pytest.raises(ValueError, match=r"but this SVM was fitted with "
                                         r"kernel=<function histogram_intersection"):
        model.predict(X_SMALL)


class _WeightedLinear:
    """A kernel object comparing its weights element-wise (== gives an array,
    whose truth value is an error), as a class holding arrays often does."""

    def __init__(self, weights):
        self.weights = np.asarray(weights, dtype=np.float64)

    def __call__(self, A, B):
        return (A * self.weights) @ B.T

    def __eq__(self, other):
        return self.weights == getattr(other, "weights", None)

    __hash__ = object.__hash__


def test_the_fitted_kernel_object_is_the_same_kernel_whatever_its_eq():
    """The kernel the model was fitted with is recognised by identity first:
    an object whose == compares element-wise is still the fitted kernel at
    prediction (not refused as another), and another object is refused."""
    kernel = _WeightedLinear([1.0, 2.0, 0.5])
    model = kgeo.SVM(kernel=kernel).fit(X_SMALL, Y_SMALL)
    np.testing.assert_array_equal(model.predict(X_SMALL), Y_SMALL)
    model.set_params(kernel=_WeightedLinear([1.0, 2.0, 0.5]))
    with pytest.raises(ValueError, match=r"but this SVM was fitted with kernel="):
        model.predict(X_SMALL)


def test_support_vectors_of_a_function_are_read_only():
    """support_vectors_ is read-only for a callable kernel too (documented for
    every kernel): the model's samples are not edited through it."""
    model = kgeo.SVM(kernel=histogram_intersection).fit(X_SMALL, Y_SMALL)
    with pytest.raises(ValueError, match="read-only"):
        model.support_vectors_[0, 0] = 5.0


def test_coef_is_refused_for_a_function():
    model = kgeo.SVM(kernel=lambda A, B: A @ B.T).fit(X_SMALL, Y_SMALL)
    with pytest.raises(AttributeError, match="coef_ exists only for kernel='linear'"):
        model.coef_


def test_unknown_kernel_message_names_callables():
    with pytest.raises(ValueError, match=r"or a callable kernel\(X, Y\) returning the "
                                         r"matrix of k\(x, y\)"):
        kgeo.SVM(kernel="gram").fit(X_SMALL, Y_SMALL)


# ==========================================================================
# Samples that are not numbers: a string kernel on the documents themselves
# ==========================================================================

DOCUMENTS = [
    "the cat sat on the mat", "a dog ate my homework", "cats and dogs", "the mat is red",
    "homework is due", "my dog likes the cat", "red cats sat", "dogs ate homework",
    "a red mat", "the dog sat", "homework and cats", "my cat is red",
]
LABELS = [0, 1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0]


def trigram_spectrum(A, B):
    """The normalised 3-spectrum kernel of two lists of strings: the cosine of
    their character trigram counts (a string kernel, positive definite)."""
    def trigrams(text):
        counts = {}
        for i in range(len(text) - 2):
            counts[text[i:i + 3]] = counts.get(text[i:i + 3], 0) + 1
        return counts

    def dot(a, b):
        return float(sum(c * b.get(g, 0) for g, c in a.items()))

    A, B = [trigrams(a) for a in A], [trigrams(b) for b in B]
    K = np.array([[dot(a, b) for b in B] for a in A])
    return K / np.outer([np.sqrt(dot(a, a)) for a in A], [np.sqrt(dot(b, b)) for b in B])


@pytest.mark.parametrize("container", ["list", "tuple", "object array", "str array"])
def test_a_string_kernel_on_the_documents_is_its_precomputed_model(container):
    to = {"list": list, "tuple": tuple, "object array": lambda d: np.array(d, dtype=object),
          "str array": np.array}
    seen = []

    def spectrum(A, B):
        seen.append((type(A), type(B)))
        return trigram_spectrum(A, B)

    train, test = to[container](DOCUMENTS), to[container](["the red cat", "my homework"])
    model = kgeo.SVM(kernel=spectrum, C=10.0).fit(train, LABELS)
    K = trigram_spectrum(DOCUMENTS, DOCUMENTS)
    given = kgeo.SVM(kernel="precomputed", C=10.0).fit(K, LABELS)
    assert_identical_models(model, given)
    Kt = trigram_spectrum(list(test), DOCUMENTS)
    np.testing.assert_array_equal(model.decision_function(test), given.decision_function(Kt))
    np.testing.assert_array_equal(model.predict(test), [0, 1])
    # An ndarray stays one; any other sequence is a list.
    kind = np.ndarray if "array" in container else list
    assert seen == [(kind, kind)] * 3
    assert isinstance(model.support_vectors_, kind)
    assert list(model.support_vectors_) == [DOCUMENTS[i] for i in model.support_]
    assert model.shape_fit_ == (len(DOCUMENTS),)
    assert not hasattr(model, "n_features_in_")
    if container == "list":
        saved = kgeo.SVM(kernel=trigram_spectrum, C=10.0).fit(train, LABELS)
        loaded = pickle.loads(pickle.dumps(saved))
        np.testing.assert_array_equal(loaded.decision_function(test),
                                      model.decision_function(test))


def test_token_lists_of_any_length_go_to_the_function_as_lists():
    tokens = [d.split() for d in DOCUMENTS]
    seen = []

    def jaccard(A, B):
        seen.append((type(A), type(A[0])))
        return np.array([[len(set(a) & set(b)) / len(set(a) | set(b)) for b in B] for a in A])

    model = kgeo.SVM(kernel=jaccard, C=10.0).fit(tokens, LABELS)
    # Two token lists of one length: still samples as given, as in the fit
    # (not a 2-D array of strings, nor numbers).
    model.predict([["the", "cat"], ["my", "homework"]])
    assert seen == [(list, list)] * 2


def _jaccard(A, B):
    return np.array([[len(set(a) & set(b)) / len(set(a) | set(b)) for b in B] for a in A])


@pytest.mark.parametrize("container", ["list", "object array"])
def test_editing_the_samples_after_the_fit_does_not_change_the_model(container):
    """The support vectors are the model's own copies of the token lists:
    the caller's lists emptied after the fit once changed every decision
    (decision values of 0.43 became -0.14)."""
    tokens = [d.split() for d in DOCUMENTS]
    train = tokens if container == "list" else np.array(tokens + [None], dtype=object)[:-1]
    model = kgeo.SVM(kernel=_jaccard, C=10.0).fit(train, LABELS)
    test = [["the", "red", "cat"], ["my", "homework"]]
    before = model.decision_function(test)
    for words in tokens:
        words[:] = ["zzz"]
    np.testing.assert_array_equal(model.decision_function(test), before)
    assert [list(sv) for sv in model.support_vectors_] == [
        DOCUMENTS[i].split() for i in model.support_]


class _Record:
    """A sample that is not a container: its table is shared by all."""

    def __init__(self, value, table):
        self.value, self.table = value, table

    def __getitem__(self, i):
        return self.value


def test_samples_kept_as_given_when_not_containers_or_not_copyable():
    """A sample deepcopy refuses (a list holding a lock) is kept as it is;
    so is an object that is not a container, whose copy would copy what it
    shares (a review: 40 records sharing a 128 MB table copied it, +122 MB
    and 0.19 s for a fit of 0.01 s)."""
    def first_items(A, B):
        return np.array([[a[0] * b[0] for b in B] for a in A])

    lock = threading.Lock()
    table = np.zeros(1000)
    for samples in ([[float(i), lock] for i in range(6)],
                    [_Record(float(i), table) for i in range(6)]):
        model = kgeo.SVM(kernel=first_items, C=10.0).fit(samples, [0, 0, 0, 1, 1, 1])
        assert all(sv is samples[i] for sv, i in zip(model.support_vectors_, model.support_))


def test_samples_of_weight_zero_are_left_out_of_the_documents():
    sizes = []

    def spectrum(A, B):
        sizes.append((len(A), len(B)))
        return trigram_spectrum(A, B)

    weight = np.ones(len(DOCUMENTS))
    weight[[1, 2]] = 0.0
    model = kgeo.SVM(kernel=spectrum, C=10.0).fit(DOCUMENTS, LABELS, sample_weight=weight)
    assert sizes == [(10, 10)]
    assert not {1, 2} & set(model.support_.tolist())
    assert list(model.support_vectors_) == [DOCUMENTS[i] for i in model.support_]


def test_a_refit_on_documents_drops_the_numbers_features():
    model = kgeo.SVM(kernel=histogram_intersection).fit(X_SMALL, Y_SMALL)
    assert model.n_features_in_ == 3
    model.set_params(kernel=trigram_spectrum).fit(DOCUMENTS, LABELS)
    assert not hasattr(model, "n_features_in_")
    model.predict(DOCUMENTS[:2])


def test_prediction_takes_X_as_the_fit_did():
    numbers = kgeo.SVM(kernel=histogram_intersection).fit(X_SMALL, Y_SMALL)
    with pytest.raises(TypeError, match=r"X must hold numbers"):
        numbers.predict(np.array([["a", "b", "c"]]))
    with pytest.raises(TypeError, match=r"X must be an array-like, a sparse matrix or a "
                                        r"sequence of samples, got builtins.str"):
        kgeo.SVM(kernel=trigram_spectrum).fit(DOCUMENTS, LABELS).predict("the cat")


@pytest.mark.parametrize("X,error,match", [
    ("the cat", TypeError, r"a sequence of samples, got builtins.str"),
    (7, TypeError, r"a sequence of samples, got builtins.int"),
    ({"a": 1}, TypeError, r"a sequence of samples, got builtins.dict"),
    ([], ValueError, r"Found 0 sample\(s\) in X while a minimum of 1 is required"),
])
def test_bad_sample_containers(X, error, match):
    with pytest.raises(error, match=match):
        kgeo.SVM(kernel=trigram_spectrum).fit(X, [0, 1])


def test_labels_must_match_the_documents():
    with pytest.raises(ValueError, match=r"X has 12, y has 11"):
        kgeo.SVM(kernel=trigram_spectrum).fit(DOCUMENTS, LABELS[:-1])


def test_a_1d_array_of_objects_goes_as_given_and_a_2d_one_holds_numbers():
    bags = np.empty(len(DOCUMENTS), dtype=object)
    for i, text in enumerate(DOCUMENTS):
        bag = {}
        for word in text.split():
            bag[word] = bag.get(word, 0) + 1
        bags[i] = bag

    def cosine(A, B):
        assert isinstance(A, np.ndarray) and A.dtype == object and isinstance(A[0], dict)
        dot = np.array([[sum(c * b.get(w, 0) for w, c in a.items()) for b in B] for a in A],
                       dtype=np.float64)
        return dot / np.outer([np.sqrt(sum(c * c for c in a.values())) for a in A],
                              [np.sqrt(sum(c * c for c in b.values())) for b in B])

    model = kgeo.SVM(kernel=cosine, C=10.0).fit(bags, LABELS)
    assert model.predict(bags[:3]).shape == (3,)
    numbers = np.array(X_SMALL, dtype=object)
    assert (kgeo.SVM(kernel=histogram_intersection).fit(numbers, Y_SMALL).dual_coef_
            == kgeo.SVM(kernel=histogram_intersection).fit(X_SMALL, Y_SMALL).dual_coef_).all()
    # Objects that are not all numbers (a table of text fields) go as given.
    fields = np.array([[text, len(text)] for text in DOCUMENTS], dtype=object)
    seen = []

    def on_text(A, B):
        seen.append((A.dtype, A.shape[1]))
        return trigram_spectrum(A[:, 0], B[:, 0])

    kgeo.SVM(kernel=on_text, C=10.0).fit(fields, LABELS).predict(fields[:2])
    assert seen == [(object, 2)] * 2


class _Frame:
    """Iterates as a pandas DataFrame does (its column names), holds rows of
    numbers behind __array__."""

    def __init__(self, values, columns):
        self.values, self.columns = values, columns

    def __len__(self):
        return len(self.values)

    def __iter__(self):
        return iter(self.columns)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


def test_a_data_frame_gives_its_rows_not_its_column_names():
    model = kgeo.SVM(kernel=histogram_intersection).fit(_Frame(X_SMALL, ["a", "b", "c"]),
                                                        Y_SMALL)
    reference = kgeo.SVM(kernel=histogram_intersection).fit(X_SMALL, Y_SMALL)
    assert_identical_models(model, reference)
    np.testing.assert_array_equal(model.decision_function(_Frame(X_SMALL, ["a", "b", "c"])),
                                  reference.decision_function(X_SMALL))
    # Text in a frame: its rows, as an array of objects.
    texts = np.array([[d] for d in DOCUMENTS], dtype=object)
    spectrum = kgeo.SVM(kernel=lambda A, B: trigram_spectrum(A[:, 0], B[:, 0]), C=10.0)
    spectrum.fit(_Frame(texts, ["text"]), LABELS)
    assert spectrum.support_vectors_.shape[1] == 1


def test_integer_rows_index_the_callers_own_gram():
    """The scikit-learn idiom X = indices, f(A, B) = G[A[:, 0]][:, B[:, 0]]:
    integers stay integers, and the model is that of the precomputed G."""
    rng = np.random.default_rng(8)
    Z = rng.normal(size=(30, 4))
    G = Z @ Z.T
    y = (Z[:, 0] > 0).astype(int)
    index = np.arange(30)[:, None]
    model = kgeo.SVM(kernel=lambda A, B: G[A[:, 0]][:, B[:, 0]]).fit(index, y)
    assert_identical_models(model, kgeo.SVM(kernel="precomputed").fit(G, y))
    assert model.support_vectors_.dtype == index.dtype
    np.testing.assert_array_equal(model.predict(index), kgeo.SVM(kernel="precomputed")
                                  .fit(G, y).predict(G))


@pytest.mark.parametrize("shift", [0.0, 1.5])
def test_a_cached_matrix_the_function_returns_is_never_written(shift):
    rng = np.random.default_rng(9)
    Z = rng.normal(size=(40, 5))
    G = Z @ Z.T
    y = (Z[:, 0] > 0).astype(int)
    before = G.copy()
    def cached(A, B):
        return G if len(A) == len(B) == 40 else G[A[:, 0]][:, B[:, 0]]

    model = kgeo.SVM(kernel=cached, shift=shift)
    index = np.arange(40)[:, None]
    model.fit(index, y).decision_function(index)
    np.testing.assert_array_equal(G, before)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.asmatrix's
@pytest.mark.parametrize("wrap", ["matrix", "read-only memmap"])
def test_a_view_of_the_functions_memory_is_never_written_at_prediction(wrap, tmp_path):
    """The shift was added in place to any checked matrix that was not the
    returned object itself: an np.matrix view of the function's stored array
    came back changed by +2.0, and a read-only memmap made predict fail with
    'output array is read-only' (fit worked)."""
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, (60, 8)).astype(float) + np.eye(60, 8)
    y = np.arange(60) % 3
    held = {}
    path = tmp_path / "k.dat"

    def k(A, B):
        K = kgeo.pairwise_kernels(A, B, kernel="ngd")
        if wrap == "matrix":
            held["K"], held["copy"] = K, K.copy()
            return np.asmatrix(K)
        stored = np.memmap(path, dtype=np.float64, mode="w+", shape=K.shape)
        stored[:] = K
        stored.flush()
        del stored
        return np.memmap(path, dtype=np.float64, mode="r", shape=K.shape)

    model = kgeo.SVM(kernel=k, shift=2.0).fit(X, y)
    got = model.decision_function(X[:10])
    np.testing.assert_allclose(
        got, kgeo.SVM(kernel="ngd", shift=2.0).fit(X, y).decision_function(X[:10]),
        rtol=0, atol=1e-12)
    if wrap == "matrix":
        np.testing.assert_array_equal(held["K"], held["copy"])


@pytest.mark.parametrize("shift", [0.0, 2.5])
def test_a_cached_matrix_the_function_returns_at_prediction_is_never_written(shift):
    """The function may return its own array at prediction too (a matrix of
    the test rows against the support vectors it keeps): adding the shift
    makes a new array then, and two predictions give the same values."""
    rng = np.random.default_rng(10)
    Z = rng.normal(size=(30, 4))
    y = (Z[:, 0] > 0).astype(int)
    Zt = rng.normal(size=(7, 4))
    cached = {}

    def k(A, B):
        if A.shape[0] == 30 and B.shape[0] == 30:  # fit
            return A @ B.T
        if "test" not in cached:
            cached["test"] = np.ascontiguousarray(A @ B.T)
        return cached["test"]

    model = kgeo.SVM(kernel=k, shift=shift).fit(Z, y)
    first = model.decision_function(Zt)
    before = cached["test"].copy()
    np.testing.assert_array_equal(model.decision_function(Zt), first)
    np.testing.assert_array_equal(cached["test"], before)
    np.testing.assert_array_equal(before, Zt @ model.support_vectors_.T)


@pytest.mark.parametrize("X", [np.array("the cat"), np.array(3.0)])
def test_a_0d_array_is_refused(X):
    with pytest.raises(TypeError, match=r"X must be a sequence of samples, got a 0-d array"):
        kgeo.SVM(kernel=trigram_spectrum).fit(X, [0])


def test_overflowing_decision_values_name_the_function():
    huge = {"on": False}

    def k(A, B):  # finite values, whose weighed sums overflow
        return np.full((len(A), len(B)), 1e308) if huge["on"] else A @ B.T

    model = kgeo.SVM(kernel=k, C=10.0).fit(X_SMALL, Y_SMALL)
    assert np.abs(model.dual_coef_).sum() > 2.0
    huge["on"] = True
    with pytest.raises(ValueError, match=r"kernel=k weighed by the dual coefficients "
                                         r"overflow float64 on them; scale its values down"):
        model.decision_function(X_SMALL)


def test_ragged_rows_after_a_fit_on_numbers_are_named():
    model = kgeo.SVM(kernel=histogram_intersection).fit(X_SMALL, Y_SMALL)
    with pytest.raises(ValueError, match=r"X holds samples of different lengths, but this "
                                         r"SVM's kernel function was fitted on rows of numbers"):
        model.predict([[1.0, 2.0, 3.0], [1.0]])


def test_text_after_a_fit_on_numbers_is_refused_before_the_function_is_called():
    """A list of strings, as an array of them, is no rows of numbers: refused
    by kgeo, not handed to the function against numeric support vectors
    (it was, where the first sample was a str or bytes)."""
    calls = []

    def counted(A, B):
        calls.append(1)
        return histogram_intersection(A, B)

    model = kgeo.SVM(kernel=counted).fit(X_SMALL, Y_SMALL)
    calls.clear()
    for text in (["ab", "cd"], [b"ab", b"cd"], np.array(["ab", "cd"])):
        with pytest.raises(TypeError, match=r"X must hold numbers \(bool, int or float\)"):
            model.predict(text)
    assert calls == []
    # Before any array of it is made: one long string among many short ones
    # would copy them all at its width (2 GB for 100,000 strings here).
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(TypeError, match=r"got a sequence of str"):
            model.predict(["a"] * 100_000 + ["x" * 5_000])
        assert tracemalloc.get_traced_memory()[1] < 50 * 2**20
    finally:
        tracemalloc.stop()
