"""What prediction keeps between calls, and when it reads the model again.

A mutation review (helper 137) found that the suite replaced or edited
support vectors only with writable arrays, for which `_cache_key` is None
and nothing is kept: no test reached a kept entry whose key no longer
matches, and mutants that reused stale entries (decision values of other
support vectors, silently) passed. These tests replace them with read-only
arrays (a key, but another one), and unfreeze, edit and freeze again the
fit's own array (the same key again). Two more pin prediction routes the
review found loose: the sign of an exact zero, and a sparse row meeting
support vectors moved by the fitted centre.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import kgeo


def _counts(rng, n, d, n_classes):
    X = rng.integers(0, 5, size=(n, d)).astype(float)
    X[:, 0] += 1.0  # every row has mass
    y = np.arange(n) % n_classes
    for c in range(n_classes):
        X[y == c, 1 + c] += 3.0
    return X, y


def _reweighted(M):
    """A new matrix of M's pattern, its values not proportional per row."""
    M = M.copy()
    if sp.issparse(M):
        M.data = M.data * (1.0 + np.arange(M.nnz) % 3)
    else:
        M = M * (1.0 + np.arange(M.shape[1]) % 3)
    return M


def _read_only(M):
    """M with its arrays, and the arrays they view, read-only (as fit
    leaves its own): what the prediction cache keeps entries for."""
    for array in ((M.data, M.indices, M.indptr) if sp.issparse(M) else (M,)):
        while isinstance(array, np.ndarray):
            array.flags.writeable = False
            array = array.base
    return M


def _given_before_any_prediction(kernel, X, y, support_vectors):
    reference = kgeo.SVM(kernel=kernel).fit(X, y)
    reference.support_vectors_ = support_vectors.copy()
    return reference


@pytest.mark.parametrize("kernel", ["linear", "ngd"])
@pytest.mark.parametrize("sparse", [False, True])
def test_read_only_support_vectors_assigned_after_a_prediction_are_used(kernel, sparse, rng):
    # A read-only matrix has a cache key; it must not meet the entry kept
    # for the fit's support vectors (mutant: `if kept is not None:`).
    X, y = _counts(rng, 60, 8, 3)
    X = sp.csr_matrix(X) if sparse else X
    T = X[:7]
    model = kgeo.SVM(kernel=kernel).fit(X, y)
    model.decision_function(T)  # fills the cache
    replaced = _read_only(_reweighted(model.support_vectors_))
    assert kgeo._svm._cache_key(replaced) is not None  # kept, under another key
    model.support_vectors_ = replaced
    expected = _given_before_any_prediction(kernel, X, y, replaced).decision_function(T)
    np.testing.assert_array_equal(model.decision_function(T), expected)


@pytest.mark.parametrize("kernel", ["linear", "ngd"])
def test_a_read_only_data_array_replaced_under_the_same_sparse_matrix_is_seen(kernel, rng):
    # The key holds the matrix and its arrays: a new (read-only) data array
    # under the same matrix object is a new key (mutant: only the matrix
    # object compared).
    X, y = _counts(rng, 60, 8, 3)
    X = sp.csr_matrix(X)
    T = X[:7]
    model = kgeo.SVM(kernel=kernel).fit(X, y)
    model.decision_function(T)
    support_vectors = model.support_vectors_
    data = support_vectors.data * (1.0 + np.arange(support_vectors.nnz) % 3)
    support_vectors.data = _read_only(data)
    expected = _given_before_any_prediction(kernel, X, y, support_vectors).decision_function(T)
    np.testing.assert_array_equal(model.decision_function(T), expected)


@pytest.mark.parametrize("kernel", ["linear", "ngd"])
def test_fitted_support_vectors_unfrozen_edited_and_frozen_again_are_read_again(kernel, rng):
    # A prediction while the array is writable must forget the kept entry:
    # frozen again, the same object is the same key (mutant: no pop).
    X, y = _counts(rng, 60, 8, 3)
    T = X[:7]
    model = kgeo.SVM(kernel=kernel).fit(X, y)
    model.decision_function(T)
    support_vectors = model.support_vectors_
    support_vectors.flags.writeable = True
    model.decision_function(T)  # forgets what it kept
    support_vectors[:, ::2] *= 3.0
    support_vectors.flags.writeable = False
    expected = _given_before_any_prediction(kernel, X, y, support_vectors).decision_function(T)
    np.testing.assert_array_equal(model.decision_function(T), expected)


def _far_from_the_origin(rng):
    """Rows that rbf and ned fits move by their centre, and rows to predict,
    half of them mostly zero (compared with the support vectors unmoved)."""
    X = rng.random((60, 8)) + 5.0
    T = rng.random((6, 8)) + 5.0
    T[:3, :6] = 0.0
    return X, np.arange(60) % 3, T


@pytest.mark.parametrize("kernel", ["rbf", "ned"])
def test_centred_model_uses_read_only_support_vectors_assigned_later(kernel, rng):
    # Both kept indexes (moved, and as given for rows the centre does not
    # move) must follow a read-only replacement (mutants: the moved entry
    # kept whatever its key; the unmoved one not tied to the moved one).
    X, y, T = _far_from_the_origin(rng)
    model = kgeo.SVM(kernel=kernel).fit(X, y)
    assert model._centre is not None
    model.decision_function(T)  # both indexes built
    replaced = model.support_vectors_ + rng.random(model.support_vectors_.shape)
    model.support_vectors_ = _read_only(replaced)
    expected = _given_before_any_prediction(kernel, X, y, replaced).decision_function(T)
    np.testing.assert_array_equal(model.decision_function(T), expected)


@pytest.mark.parametrize("kernel", ["rbf", "ned"])
def test_centred_support_vectors_unfrozen_edited_and_frozen_again_are_read_again(kernel, rng):
    X, y, T = _far_from_the_origin(rng)
    model = kgeo.SVM(kernel=kernel).fit(X, y)
    model.decision_function(T)
    support_vectors = model.support_vectors_
    support_vectors.flags.writeable = True
    model.decision_function(T)  # forgets what it kept
    support_vectors += 0.25
    support_vectors.flags.writeable = False
    expected = _given_before_any_prediction(kernel, X, y, support_vectors).decision_function(T)
    np.testing.assert_array_equal(model.decision_function(T), expected)


@pytest.mark.parametrize("kernel", ["linear", "ngd"])
def test_hashed_model_uses_read_only_support_vectors_assigned_later(kernel, rng):
    # Over 2**22 columns the kept entry is the hashed one: it too must
    # follow a read-only replacement.
    width = 2**22
    X, y = _counts(rng, 40, 10, 3)
    spread = np.sort(rng.choice(width, 10, replace=False))
    coo = sp.coo_matrix(X)
    H = sp.csr_matrix((coo.data, (coo.row, spread[coo.col])), shape=(40, width))
    T = H[:5]
    model = kgeo.SVM(kernel=kernel).fit(H, y)
    model.decision_function(T)
    replaced = _read_only(_reweighted(model.support_vectors_))
    model.support_vectors_ = replaced
    expected = _given_before_any_prediction(kernel, H, y, replaced).decision_function(T)
    np.testing.assert_array_equal(model.decision_function(T), expected)


def test_dual_coefficients_read_only_throughout_over_a_bytearray_are_read_again(rng):
    # Every array of the chain read-only, the memory a bytearray's: only
    # `_in_lent_memory` stops the cache keeping it (mutant: a bytearray
    # taken as unchanging memory, like bytes).
    X, y = _counts(rng, 60, 8, 3)
    T = X[:7]
    model = kgeo.SVM(kernel="ngd").fit(X, y)
    own = np.array(model.dual_coef_)
    lent = bytearray(own.tobytes())
    view = _read_only(np.ndarray(own.shape, dtype=np.float64, buffer=lent))
    assert type(view.base) is bytearray
    model.dual_coef_ = view
    model.decision_function(T)
    lent[:8] = np.float64(-5.0).tobytes()  # the memory written, not through the array
    assert view[0, 0] == -5.0
    reference = kgeo.SVM(kernel="ngd").fit(X, y)
    reference.dual_coef_ = np.array(view)
    np.testing.assert_array_equal(model.decision_function(T), reference.decision_function(T))


@pytest.mark.parametrize("sparse", [False, True])
def test_a_model_loaded_from_out_of_band_buffers_owns_its_arrays(sparse, rng):
    # Protocol 5 with buffer_callback: the arrays come back over the
    # caller's bytearrays. __setstate__ copies support_vectors_ and
    # dual_coef_ (memory written otherwise), so that prediction may keep
    # what it derives from them (mutant: not copied, nothing kept, and the
    # two arrays lie in the caller's memory).
    import pickle

    X, y = _counts(rng, 60, 8, 3)
    X = sp.csr_matrix(X) if sparse else X
    T = X[:7]
    model = kgeo.SVM(kernel="ngd").fit(X, y)
    expected = model.decision_function(T)
    buffers = []
    data = pickle.dumps(model, protocol=5, buffer_callback=buffers.append)
    assert buffers
    lent = [bytearray(b.raw()) for b in buffers]
    loaded = pickle.loads(data, buffers=lent)
    assert kgeo._svm._cache_key(loaded.dual_coef_) is not None
    assert kgeo._svm._cache_key(loaded.support_vectors_) is not None
    np.testing.assert_array_equal(loaded.decision_function(T), expected)
    sv = loaded.support_vectors_
    for array in (loaded.dual_coef_, *((sv.data, sv.indices, sv.indptr) if sparse else (sv,))):
        assert not any(np.shares_memory(array, np.frombuffer(b, dtype=np.uint8)) for b in lent)
    loaded.decision_function(T)
    assert "coefficients" in loaded._prediction_cache


def test_binary_decision_values_of_exactly_zero_are_positive_zeros():
    # decision_function negates libsvm's orientation for two classes: a value
    # of exactly 0 must come out +0.0, not -0.0 (mutant: `-out[:, 0]` without
    # `+ 0.0`).
    model = kgeo.SVM(kernel="precomputed").fit(np.eye(2), [0, 1])
    assert model.intercept_[0] == 0.0
    dec = model.decision_function(np.array([[0.5, 0.5], [0.0, 0.0]]))
    np.testing.assert_array_equal(dec, [0.0, 0.0])
    assert not np.any(np.signbit(dec))


@pytest.mark.parametrize("kernel", ["rbf", "ned"])
def test_a_sparse_row_meets_moved_support_vectors_when_unmoved_ones_leave_float64(kernel):
    # Support vectors whose squares leave the kernels' range as given (a
    # column near 1e154) but not once moved by the fitted centre: every row
    # predicted is moved with them, a mostly-zero one too (mutant: the row
    # went as given, against the unmoved support vectors: an overflow error).
    rng = np.random.default_rng(7)
    X = rng.random((40, 8))
    X[:, 0] = 2.0**512  # 1.3e154: squared beyond float64 as given, 0 once moved
    y = (X[:, 1] > 0.5).astype(int)
    model = kgeo.SVM(kernel=kernel, gamma=1.0).fit(X, y) if kernel == "rbf" else \
        kgeo.SVM(kernel=kernel).fit(X, y)
    assert model._centre is not None
    t = np.zeros((1, 8))
    t[0, 0], t[0, 1] = X[0, 0], 0.9  # 2 of 8 columns: not moved by its own density
    dec = model.decision_function(t)
    assert np.all(np.isfinite(dec))
    # Against the support vectors as the rows' own differences give them.
    d2 = np.sum((t - model.support_vectors_) ** 2, axis=1)
    k = np.exp(-d2) if kernel == "rbf" else -np.sqrt(d2)
    expected = model.dual_coef_[0] @ k + model.intercept_[0]
    np.testing.assert_allclose(dec, [expected], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("sparse", [False, True])
def test_a_model_loaded_with_mmap_mode_keeps_its_arrays_mapped_and_its_cache(sparse, tmp_path):
    """Arrays over a file mapped into memory (joblib's ``mmap_mode``) are
    taken as unchanging (`_in_lent_memory`): loading leaves them mapped
    rather than copied into memory, which would defeat ``mmap_mode``, and
    prediction keeps what it derives from them. No test loaded a model so:
    a mutant that took them as lent memory, and copied every array, passed
    (mutation review 182)."""
    import mmap

    joblib = pytest.importorskip("joblib")

    def maps_a_file(array):
        while isinstance(array, np.ndarray):
            array = array.base
        return isinstance(array, mmap.mmap)

    X, y = _counts(np.random.default_rng(4), 90, 12, 3)
    X = sp.csr_matrix(X) if sparse else X
    model = kgeo.SVM(kernel="ngd").fit(X, y)
    joblib.dump(model, tmp_path / "model.joblib")
    loaded = joblib.load(tmp_path / "model.joblib", mmap_mode="r")
    sv = loaded.support_vectors_
    for array in (loaded.dual_coef_, *((sv.data, sv.indices, sv.indptr) if sparse else (sv,))):
        assert maps_a_file(array)
        assert not array.flags.writeable
    np.testing.assert_array_equal(loaded.decision_function(X[:9]), model.decision_function(X[:9]))
    assert {"coefficients", "support_vectors"} <= set(loaded._prediction_cache)
    np.testing.assert_array_equal(loaded.predict(X[:9]), model.predict(X[:9]))
