"""kgeo.MultinomialEmbedding against a dense NumPy reference.

TF keeps the counts; TF-IDF multiplies term i by ``idf_i = log(m / df_i)``
learnt at ``fit`` (0 for terms absent at fit, and 0 for terms in every
document); rows are then L1-normalised (a point of the simplex), L2-normalised
or left alone. All-zero rows stay zero.
"""

import decimal
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

import kgeo


def ref_idf(X_fit):
    m = X_fit.shape[0]
    df = np.count_nonzero(X_fit, axis=0)
    idf = np.zeros(X_fit.shape[1])
    idf[df > 0] = np.log(m / df[df > 0])
    return idf


def ref_embedding(X_fit, X, weighting, norm):
    """Dense reference: weights, then per-row normalisation (zero rows stay zero)."""
    W = X * (ref_idf(X_fit) if weighting == "tfidf" else 1.0)
    if norm is None:
        return W
    size = np.abs(W).sum(axis=1) if norm == "l1" else np.sqrt((W ** 2).sum(axis=1))
    size[size == 0] = 1.0
    return W / size[:, None]


def counts():
    """Training counts: term 0 in every document, term 5 in none, term 3 in one."""
    return np.array([
        [2, 1, 0, 0, 3, 0, 1],
        [1, 0, 4, 0, 0, 0, 1],
        [5, 2, 1, 7, 0, 0, 0],
        [1, 0, 0, 0, 1, 0, 2],
        [3, 1, 1, 0, 0, 0, 0],
    ], dtype=np.float64)


def new_counts():
    """Documents to transform, with the term unseen at fit (5) and a row made
    only of the every-document term 0 (all-zero under TF-IDF)."""
    return np.array([
        [0, 1, 0, 2, 0, 3, 0],
        [4, 0, 0, 0, 0, 0, 0],
        [1, 1, 1, 1, 1, 1, 1],
    ], dtype=np.float64)


# --------------------------------------------------------------------------
# fit: the learnt idf
# --------------------------------------------------------------------------

def test_idf_is_correctly_rounded_for_words_in_nearly_every_document():
    # np.log(m / df) rounded the quotient before log magnified its error by
    # 1 / log(m / df): 408 ulps at m = 1000, df = 999.
    m = 1000
    X = np.zeros((m, 4))
    for column, df in enumerate((999, 998, 500, 1)):
        X[:df, column] = 1.0
    idf = kgeo.MultinomialEmbedding(weighting="tfidf").fit(X).idf_
    with decimal.localcontext(decimal.Context(prec=40)):
        exact = [float((decimal.Decimal(m) / decimal.Decimal(df)).ln())
                 for df in (999, 998, 500, 1)]
    assert idf.tolist() == exact


@pytest.mark.parametrize("spread", [1, 1000])  # document frequencies counted, then sorted
def test_idf_is_correctly_rounded_whatever_the_float_logs_give(monkeypatch, spread):
    """The same bits on every machine: each idf_ is log(m / df) correctly
    rounded (here from 60 digits), and neither NumPy's logs (Intel's SVML on
    AVX-512 CPUs) nor the C library's (an FMA build from glibc 2.39) play
    a part: perturbed, they change nothing."""
    from kgeo import _embedding

    rng = np.random.default_rng(4)
    m, n_words = 400, 300
    # Words from hapaxes to words in every document: about 200 distinct
    # frequencies, most shared by several columns.
    presence = rng.random((m, n_words)) < np.geomspace(1 / m, 1.0, n_words)
    X = sp.csr_matrix(presence * rng.integers(1, 5, size=(m, n_words)), dtype=np.float64)
    X = sp.csr_matrix((X.data, X.indices * spread, X.indptr), shape=(m, n_words * spread))
    monkeypatch.setattr(_embedding, "_SPARSE_VOCABULARY", 10**9 if spread == 1 else 1)
    df = np.bincount(X.indices, minlength=X.shape[1])
    assert 100 < len(np.unique(df)) < np.count_nonzero(df) and df.max() == m
    with decimal.localcontext(decimal.Context(prec=60)):
        expected = np.array([float((decimal.Decimal(m) / decimal.Decimal(d)).ln()) if d else 0.0
                             for d in df.tolist()])
    idf = kgeo.MultinomialEmbedding(weighting="tfidf").fit(X).idf_
    assert idf.tobytes() == expected.tobytes()

    for module, name in ((np, "log1p"), (np, "log"), (math, "log1p"), (math, "log")):
        monkeypatch.setattr(module, name, lambda x, *args, **kwargs: np.nextafter(x, np.inf))
    perturbed = kgeo.MultinomialEmbedding(weighting="tfidf").fit(X).idf_
    assert perturbed.tobytes() == expected.tobytes()


@pytest.mark.parametrize("form", [np.asarray, sp.csr_matrix, sp.csc_matrix])
def test_idf_is_log_m_over_df(form):
    X = counts()
    emb = kgeo.MultinomialEmbedding(weighting="tfidf").fit(form(X))
    m = X.shape[0]
    expected = np.array([np.log(m / 5), np.log(m / 3), np.log(m / 3), np.log(m / 1),
                         np.log(m / 2), 0.0, np.log(m / 3)])
    np.testing.assert_allclose(emb.idf_, expected, rtol=1e-15, atol=0)
    np.testing.assert_allclose(emb.idf_, ref_idf(X), rtol=1e-15, atol=0)
    assert emb.idf_[0] == 0.0  # in every document
    assert emb.idf_[5] == 0.0  # in no document
    assert emb.n_features_in_ == X.shape[1]


def test_idf_counts_documents_not_occurrences(random_count_csr):
    X = random_count_csr(50, 30, density=0.2, max_count=9)
    emb = kgeo.MultinomialEmbedding(weighting="tfidf").fit(X)
    np.testing.assert_allclose(emb.idf_, ref_idf(X.toarray()), rtol=1e-15, atol=0)
    # Explicit zeros are not occurrences.
    Z = X.copy()
    Z.data[::3] = 0.0
    emb_z = kgeo.MultinomialEmbedding(weighting="tfidf").fit(Z)
    np.testing.assert_allclose(emb_z.idf_, ref_idf(Z.toarray()), rtol=1e-15, atol=0)


def test_idf_of_hashed_columns_counts_by_sorting_the_same(random_count_csr, monkeypatch):
    """Far more columns than entries (hashed features) take document
    frequencies from a sort of the entries, not a count per column: the
    same idf_, bit for bit, unused columns 0, explicit zeros not counted."""
    from kgeo import _embedding

    X = random_count_csr(40, 30, density=0.2, max_count=9)
    X.data[::4] = 0.0
    wide = sp.csr_matrix((X.data, X.indices * 1000 + 7, X.indptr), shape=(40, 30_000))
    assert wide.nnz < wide.shape[1] // _embedding._SPARSE_VOCABULARY  # the sorting route

    def count_per_column(*args, **kwargs):
        raise AssertionError("a count per column (np.bincount), not the sorting route")

    with monkeypatch.context() as patch:  # the route taken, not only its result
        patch.setattr(np, "bincount", count_per_column)
        sorted_route = kgeo.MultinomialEmbedding(weighting="tfidf").fit(wide).idf_
    monkeypatch.setattr(_embedding, "_SPARSE_VOCABULARY", 10**9)  # the counting route
    counted = kgeo.MultinomialEmbedding(weighting="tfidf").fit(wide).idf_
    assert sorted_route.tobytes() == counted.tobytes()
    np.testing.assert_array_equal(sorted_route[7::1000],
                                  kgeo.MultinomialEmbedding(weighting="tfidf").fit(X).idf_)
    used = np.zeros(30_000, dtype=bool)
    used[7::1000] = True
    assert not sorted_route[~used].any()
    np.testing.assert_allclose(sorted_route[used], ref_idf(X.toarray()), rtol=1e-15, atol=0)


def test_tf_idf_is_ones():
    emb = kgeo.MultinomialEmbedding(weighting="tf").fit(counts())
    np.testing.assert_array_equal(emb.idf_, np.ones(counts().shape[1]))


def test_fit_returns_self_and_keeps_parameters():
    emb = kgeo.MultinomialEmbedding(weighting="tfidf", norm="l2")
    assert emb.fit(counts()) is emb
    assert emb.get_params() == {"norm": "l2", "weighting": "tfidf"}


# --------------------------------------------------------------------------
# transform against the reference
# --------------------------------------------------------------------------

def csr_int64(A):
    S = sp.csr_matrix(A)
    S.indices = S.indices.astype(np.int64)
    S.indptr = S.indptr.astype(np.int64)
    return S


@pytest.mark.parametrize("form", [np.asarray, sp.csr_matrix, sp.coo_matrix, csr_int64],
                         ids=["dense", "csr", "coo", "csr_int64"])
@pytest.mark.parametrize("norm", ["l1", "l2", None])
@pytest.mark.parametrize("weighting", ["tf", "tfidf"])
def test_transform_matches_reference(weighting, norm, form):
    X, X_new = counts(), new_counts()
    emb = kgeo.MultinomialEmbedding(weighting=weighting, norm=norm).fit(form(X))
    for A in (X, X_new):
        Z = emb.transform(form(A))
        assert sp.isspmatrix_csr(Z) or isinstance(Z, sp.csr_array)
        assert Z.dtype == np.float64
        np.testing.assert_allclose(Z.toarray(), ref_embedding(X, A, weighting, norm),
                                   rtol=1e-14, atol=0)


def _canonical_counts():
    """A CSR matrix check_matrix would hand back as it is with copy=False."""
    X = sp.csr_matrix(np.array([[1.0, 2, 0, 1], [0, 3, 4, 0], [5, 0, 6, 2]]))
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    assert kgeo._validation._is_canonical_csr(X, "X")
    return X


@pytest.mark.parametrize("weighting", ["tf", "tfidf"])
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_a_canonical_csr_input_is_left_alone(weighting, norm):
    """transform weighs and normalises its checked copy of X in place: had
    check_matrix handed a canonical CSR input back shared (its copy=False
    route taken by default), the caller's X was edited, rows L1-normalised
    in the caller's hands (a mutation review, helper 136; the suite caught
    it only through tfidf's reference)."""
    X = _canonical_counts()
    given = [a.copy() for a in (X.data, X.indices, X.indptr)]
    model = kgeo.MultinomialEmbedding(weighting=weighting, norm=norm).fit(X)
    for Z in (model.transform(X), model.fit_transform(X)):
        assert not np.shares_memory(Z.data, X.data)
    for a, b in zip((X.data, X.indices, X.indptr), given, strict=True):
        np.testing.assert_array_equal(a, b)
    checked = kgeo._validation.check_matrix(X)
    assert not np.shares_memory(checked.data, X.data)
    assert not np.shares_memory(checked.indices, X.indices)
    assert np.shares_memory(kgeo._validation.check_matrix(X, copy=False).data, X.data)


@pytest.mark.parametrize("norm", ["l1", "l2", None])
@pytest.mark.parametrize("weighting", ["tf", "tfidf"])
def test_transform_random_counts(weighting, norm, random_count_csr):
    X = random_count_csr(60, 40, density=0.15, max_count=8)
    Z = kgeo.MultinomialEmbedding(weighting=weighting, norm=norm).fit_transform(X)
    ref = ref_embedding(X.toarray(), X.toarray(), weighting, norm)
    np.testing.assert_allclose(Z.toarray(), ref, rtol=1e-14, atol=0)


@pytest.mark.parametrize("weighting", ["tf", "tfidf"])
def test_l1_rows_sum_to_one_and_l2_rows_have_unit_norm(weighting, random_count_csr):
    X = random_count_csr(80, 50, density=0.1)
    Z1 = kgeo.MultinomialEmbedding(weighting=weighting, norm="l1").fit_transform(X).toarray()
    Z2 = kgeo.MultinomialEmbedding(weighting=weighting, norm="l2").fit_transform(X).toarray()
    nonzero = Z1.any(axis=1)
    np.testing.assert_allclose(Z1.sum(axis=1)[nonzero], 1.0, rtol=0, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(Z2, axis=1)[nonzero], 1.0, rtol=0, atol=1e-14)
    assert np.all(Z1 >= 0)
    if weighting == "tf":
        assert nonzero.all()


def test_terms_in_every_document_vanish_under_tfidf():
    X, X_new = counts(), new_counts()
    emb = kgeo.MultinomialEmbedding(weighting="tfidf", norm="l1").fit(X)
    Z = emb.transform(X_new)
    assert Z[:, 0].nnz == 0  # idf 0: term 0 is in every training document
    assert Z[:, 5].nnz == 0  # idf 0: term 5 was never seen at fit
    # The row made only of term 0 stays all-zero rather than dividing by zero.
    assert Z[1].nnz == 0
    assert np.all(np.isfinite(Z.data))


def test_every_term_in_every_document_gives_zero_rows():
    X = np.array([[1.0, 2.0], [3.0, 1.0]])
    Z = kgeo.MultinomialEmbedding(weighting="tfidf", norm="l1").fit_transform(X)
    assert Z.shape == (2, 2) and Z.nnz == 0


def test_fit_transform_equals_fit_then_transform(random_count_csr):
    X = random_count_csr(30, 20)
    for weighting in ("tf", "tfidf"):
        a = kgeo.MultinomialEmbedding(weighting=weighting).fit_transform(X)
        b = kgeo.MultinomialEmbedding(weighting=weighting).fit(X).transform(X)
        assert (a != b).nnz == 0


def test_transform_leaves_input_alone(random_count_csr):
    X = random_count_csr(20, 15)
    before = X.copy()
    kgeo.MultinomialEmbedding(weighting="tfidf").fit(X).transform(X)
    assert (X != before).nnz == 0
    np.testing.assert_array_equal(X.indices, before.indices)


def test_tfidf_l1_then_ngd_matches_reference(random_count_csr):
    X = random_count_csr(40, 30, density=0.25)
    Z = kgeo.MultinomialEmbedding(weighting="tfidf", norm="l1").fit_transform(X)
    W = ref_embedding(X.toarray(), X.toarray(), "tfidf", "l1")
    keep = W.sum(axis=1) > 0
    K = kgeo.pairwise_kernels(Z[np.flatnonzero(keep)], kernel="ngd")
    S = np.sqrt(W[keep])
    # Half-angle via the Hellinger distance: accurate near the diagonal.
    H = np.sqrt(((S[:, None, :] - S[None, :, :]) ** 2).sum(axis=-1))
    np.testing.assert_allclose(K, -4.0 * np.arcsin(H / 2.0), rtol=0, atol=1e-7)


def test_tfidf_l1_then_ngd_on_newsgroups(newsgroups_counts):
    X = newsgroups_counts[:150]
    Z = kgeo.MultinomialEmbedding(weighting="tfidf", norm="l1").fit_transform(X)
    np.testing.assert_allclose(np.asarray(Z.sum(axis=1)).ravel(), 1.0, rtol=0, atol=1e-13)
    K = kgeo.pairwise_kernels(Z, kernel="ngd")
    S = Z.copy()
    S.data = np.sqrt(S.data)
    G = np.clip((S @ S.T).toarray(), 0.0, 1.0)
    n_words = np.diff(Z.indptr).max()
    np.testing.assert_allclose(K, -2.0 * np.arccos(G), rtol=0,
                               atol=max(1e-7, 4.0 * np.sqrt(4.0 * n_words * np.finfo(float).eps)))


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------

@pytest.mark.parametrize("weighting", ["tf", "tfidf"])
def test_unfitted_transform_raises(weighting):
    emb = kgeo.MultinomialEmbedding(weighting=weighting)
    with pytest.raises(kgeo.NotFittedError, match="not fitted yet"):
        emb.transform(counts())
    # Like scikit-learn's, it is both a ValueError and an AttributeError.
    with pytest.raises(ValueError):
        emb.transform(counts())
    with pytest.raises(AttributeError):
        emb.transform(counts())


@pytest.mark.parametrize("n_features", [6, 8])
def test_transform_with_wrong_n_features_raises(n_features):
    emb = kgeo.MultinomialEmbedding(weighting="tfidf").fit(counts())
    with pytest.raises(ValueError, match=rf"X has {n_features} features, but "
                                         r"MultinomialEmbedding is expecting 7 features"):
        emb.transform(np.ones((2, n_features)))


@pytest.mark.parametrize("weighting", ["tf", "tfidf"])
def test_negative_counts_raise(weighting):
    bad = counts()
    bad[1, 2] = -1.0
    with pytest.raises(ValueError, match=r"X has 1 negative entries; term counts must be >= 0"):
        kgeo.MultinomialEmbedding(weighting=weighting).fit(bad)
    emb = kgeo.MultinomialEmbedding(weighting=weighting).fit(counts())
    with pytest.raises(ValueError, match="negative entries"):
        emb.transform(sp.csr_matrix(bad))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_counts_raise(bad):
    X = counts()
    X[0, 0] = bad
    with pytest.raises(ValueError, match="NaN or infinity"):
        kgeo.MultinomialEmbedding().fit(X)


@pytest.mark.parametrize("params, match", [
    ({"weighting": "idf"}, r"weighting must be 'tf' or 'tfidf', got 'idf'"),
    ({"weighting": None}, r"weighting must be 'tf' or 'tfidf', got None"),
    ({"norm": "l3"}, r"norm must be 'l1', 'l2' or None, got 'l3'"),
    ({"norm": 1}, r"norm must be 'l1', 'l2' or None, got 1"),
])
def test_invalid_parameters_raise_at_fit(params, match):
    emb = kgeo.MultinomialEmbedding(**params)  # __init__ only stores them
    with pytest.raises(ValueError, match=match):
        emb.fit(counts())


@pytest.mark.parametrize("params, match", [
    ({"weighting": np.array(["tfidf"])},
     r"weighting must be 'tf' or 'tfidf', got array\(\['tfidf'\]"),
    ({"norm": np.array(["l1"])}, r"norm must be 'l1', 'l2' or None, got array\(\['l1'\]"),
    ({"norm": np.array(["l1", "l2"])}, r"norm must be 'l1', 'l2' or None, got array"),
])
def test_parameters_given_as_arrays_are_refused(params, match):
    # Found by mutation testing: a one-element array compares equal to its
    # string element-wise, and passed for it.
    with pytest.raises(ValueError, match=match):
        kgeo.MultinomialEmbedding(**params).fit(counts())


@pytest.mark.parametrize("params, match", [
    ({"weighting": "idf"}, r"weighting must be 'tf' or 'tfidf', got 'idf'"),
    ({"norm": "l3"}, r"norm must be 'l1', 'l2' or None, got 'l3'"),
])
def test_invalid_parameters_set_after_fit_raise_at_transform(params, match):
    # Found by mutation testing: transform re-checks the parameters; without
    # it norm="l3" was silently taken for "l2".
    emb = kgeo.MultinomialEmbedding().fit(counts()).set_params(**params)
    with pytest.raises(ValueError, match=match):
        emb.transform(counts())


def test_set_params_rejects_unknown_names():
    with pytest.raises(ValueError, match="Invalid parameter 'smooth_idf'"):
        kgeo.MultinomialEmbedding().set_params(smooth_idf=True)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("norm", ["l1", "l2"])
@pytest.mark.parametrize("scale", [1e200, 1e305, 1e-200, 1e-310])
def test_normalisation_survives_extreme_counts(norm, scale):
    # The row sum (or sum of squares) overflows or underflows; the point on
    # the simplex or the sphere is the same as for the unscaled row.
    X = np.array([[1.0, 3.0, 0.0], [0.0, 1.0, 1.0]])
    expected = kgeo.MultinomialEmbedding(norm=norm).fit_transform(X).toarray()
    X_scaled = X.copy()
    X_scaled[0] *= scale
    got = kgeo.MultinomialEmbedding(norm=norm).fit_transform(X_scaled).toarray()
    np.testing.assert_allclose(got, expected, rtol=1e-15)


@pytest.mark.parametrize("weighting", ["tf", "tfidf"])
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_shares_below_float64_are_not_stored_as_zeros(weighting, norm):
    # 1e-300 and 5e-324 of a row holding 1e300 are 0 once normalised: TF kept
    # them as stored zeros, which TF-IDF dropped.
    train = np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    got = kgeo.MultinomialEmbedding(weighting, norm).fit(train).transform(
        np.array([[1e300, 1e-300, 5e-324]]))
    assert got.nnz == 1 and got[0, 0] == 1.0


def test_tfidf_weights_overflowing_without_normalisation_are_refused():
    X = np.array([[1.7e308, 0.0], [0.0, 1.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"X has counts up to 1.7e\+308, whose TF-IDF weights "
                                         r"\(idf up to 1.1\) overflow float64 \(with "
                                         r"norm=None the weights are the output\)"):
        kgeo.MultinomialEmbedding(weighting="tfidf", norm=None).fit_transform(X)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_tfidf_weights_overflowing_are_normalised_when_the_scale_is_free(norm):
    # idf = (log 3, log 1.5): 1.7e308 log 3 overflows, yet the normalised row
    # is that of any multiple of it (TF normalised the same row already).
    train = np.array([[1.0, 1.0], [0.0, 1.0], [0.0, 1.0]])
    row = np.array([[1.7e308, 1.7e308]])
    embedding = kgeo.MultinomialEmbedding("tfidf", norm).fit(train)
    expected = embedding.transform(row * 1e-10).toarray()
    np.testing.assert_allclose(embedding.transform(row).toarray(), expected, rtol=2 * EPS)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_tfidf_rescue_scales_by_the_words_that_keep_a_weight(norm):
    # Column 0 is in every training document (idf 0). The rescue of the
    # subnormal weights divided by the row's largest count, column 0's: the
    # other words then underflowed to 0 (the first row came out empty) or
    # kept only a few bits (the second, 4e13 ulps off).
    train = np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0]])
    embedding = kgeo.MultinomialEmbedding("tfidf", norm).fit(train)
    rows = np.array([[1e300, 1e-310, 0.0], [1.0, 1e-310, 3e-310]])
    got = embedding.transform(rows)
    expected = embedding.transform(np.array([[0.0, 1.0, 0.0], [0.0, 1.0, 3.0]])).toarray()
    np.testing.assert_allclose(got.toarray(), expected, rtol=2 * EPS, atol=0)
    assert got.nnz == 3


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_tfidf_weights_of_subnormal_counts_keep_their_words(norm):
    # A count of 5e-324 times an idf below 1 rounded to 0, and
    # eliminate_zeros() then emptied the document. Normalised, a row's scale
    # is free: the result must be that of the same counts times 1e300.
    X = np.array([[5e-324, 0.0, 0.0], [0.0, 5e-324, 1e-323], [0.0, 2.0, 0.0],
                  [1.0, 0.0, 3.0]])
    expected = kgeo.MultinomialEmbedding("tfidf", norm).fit_transform(X * 1e300)
    embedding = kgeo.MultinomialEmbedding("tfidf", norm).fit(X)
    got = embedding.transform(X)
    np.testing.assert_allclose(got.toarray(), expected.toarray(), rtol=4 * EPS, atol=0)
    assert np.array_equal(got.indptr, expected.indptr)
    # The other rows keep the bits of the plain product, as alone.
    assert np.array_equal(got[2:].toarray(), embedding.transform(X[2:]).toarray())


def test_tfidf_weights_underflowing_without_normalisation_are_refused():
    # idf log(4/3) = 0.29: 5e-324 (the smallest subnormal) times it rounds to 0.
    X = np.array([[5e-324, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"X has counts as small as 4.94e-324, whose TF-IDF "
                                         r"weights underflow float64 to 0"):
        kgeo.MultinomialEmbedding("tfidf", None).fit_transform(X)
    # Subnormal weights that do not round to 0 are kept as computed.
    Z = kgeo.MultinomialEmbedding("tfidf", None).fit_transform(X * 16)
    assert Z[0, 0] == (16 * 5e-324) * np.log(4 / 3) > 0


# --------------------------------------------------------------------------
# Rows at the ends of the float64 range
# --------------------------------------------------------------------------

EPS = np.finfo(np.float64).eps


def _exactly_rescaled(row):
    """``row`` times the power of two that puts its largest value in [0.5, 1).

    Exact (for values not far below the largest), so the rescaled row is the
    same point of the simplex or the sphere, computed where nothing rounds
    out of range: the reference for rows near either end of the range.
    """
    return np.ldexp(row, -int(np.frexp(np.max(row))[1]))


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("row", [
    [3e-162, 4e-162],            # squares subnormal: came out as [0.6036, 0.8048], norm 1.006
    [1e-160, 1e-170],            # norm 1.0000056
    [1e-155, 2e-156, 0.0, 7e-157],
    [1.4e-154, 1e-154],          # sum of squares just below the smallest normal
    [2.0 ** -1000, 2.0 ** -1001, 2.0 ** -1010],
    [5e-324, 5e-324, 1e-323],    # subnormal values; their squares are 0
], ids=["3-4e-162", "1e-160-1e-170", "1e-155-mix", "edge-1.4e-154", "2^-1000", "subnormal"])
def test_l2_rows_with_subnormal_squares_have_unit_norm(row):
    # The rescue used to run only when the norm was exactly 0 or not finite;
    # a subnormal sum of squares has lost bits and gave rows off the sphere.
    X = np.array([row])
    Z = kgeo.MultinomialEmbedding(norm="l2").fit_transform(X).toarray()
    assert abs(np.sqrt(np.sum(Z[0] ** 2)) - 1.0) <= 4 * EPS
    reference = ref_embedding(X, _exactly_rescaled(X), "tf", "l2")
    np.testing.assert_allclose(Z, reference, rtol=4 * EPS, atol=0)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("row", [
    [1e-320, 3e-320, 5e-324],    # subnormal sum: exact, quotients correctly rounded
    [3e-162, 4e-162],
    [1e308, 1e308, 1e308],       # the sum overflows
    [1.7e308, 1e-300],
], ids=["subnormal", "3-4e-162", "overflow", "overflow-wide"])
def test_l1_rows_at_the_ends_of_the_range_sum_to_one(row):
    # The L1 analogue: only an overflowing sum loses anything (a sum of
    # subnormals is exact), and that row is rescued.
    X = np.array([row])
    Z = kgeo.MultinomialEmbedding(norm="l1").fit_transform(X).toarray()
    assert abs(np.sum(Z[0]) - 1.0) <= 4 * EPS
    reference = ref_embedding(X, _exactly_rescaled(X), "tf", "l1")
    np.testing.assert_allclose(Z, reference, rtol=4 * EPS, atol=0)


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_ordinary_rows_keep_the_plain_quotients_bits(norm, random_count_csr):
    # The rescue of extreme rows must not touch the others: those keep exactly
    # the plain formula x / sum(x) or x / sqrt(sum(x**2)), summed in CSR order,
    # with extreme rows (subnormal squares, overflowing sums) in the same matrix.
    # TF only: TF-IDF weights of 1e308 would overflow (and are refused).
    X = random_count_csr(40, 25).toarray()
    X[::3] *= np.random.default_rng(1).uniform(0.01, 100.0, size=(X[::3].shape[0], 1))
    X[5] = 0.0
    X[5, [1, 4]] = [3e-162, 4e-162]
    X[11] = 0.0
    X[11, [2, 7, 9]] = 1e308
    Z = kgeo.MultinomialEmbedding(norm=norm).fit_transform(X)
    W = sp.csr_matrix(X)
    starts = W.indptr[:-1]
    with np.errstate(over="ignore", under="ignore"):
        values = W.data if norm == "l1" else W.data ** 2
        sums = np.add.reduceat(values, starts)
    size = sums if norm == "l1" else np.sqrt(sums)
    plain = sp.csr_matrix((W.data / np.repeat(size, np.diff(W.indptr)), W.indices, W.indptr),
                          shape=W.shape).toarray()
    ordinary = np.ones(X.shape[0], dtype=bool)
    ordinary[[5, 11]] = False
    assert np.count_nonzero(W[ordinary].getnnz(axis=1)) == ordinary.sum()  # no empty rows
    assert np.array_equal(Z.toarray()[ordinary], plain[ordinary])
    # ... and the extreme rows are on the simplex or the sphere.
    lengths = np.abs(Z.toarray()).sum(axis=1) if norm == "l1" else np.linalg.norm(
        Z.toarray(), axis=1)
    np.testing.assert_allclose(lengths, 1.0, rtol=0, atol=8 * EPS)


def test_l1_rows_with_a_subnormal_sum_are_correctly_rounded():
    """An l1 sum of subnormal counts is exact, and each share is then one
    correctly rounded division (_out_of_range): such rows are not taken as
    out of range (dividing by the largest entry first was 1 ulp off in 1,446
    of 2,000 random rows: a mutation review)."""
    rng = np.random.default_rng(0)
    rows = rng.integers(1, 10**6, size=(200, 4)) * np.finfo(np.float64).smallest_subnormal
    Z = kgeo.MultinomialEmbedding(norm="l1").fit_transform(rows).toarray()
    for row, got in zip(rows, Z):
        total = sum(Fraction(float(v)) for v in row)
        assert got.tolist() == [float(Fraction(float(v)) / total) for v in row]


# --- weighting is read by transform (a review: it was ignored after fit) ----

def test_weighting_set_to_tf_after_a_tfidf_fit_gives_tf():
    """As scikit-learn's TfidfTransformer reads use_idf at transform: before,
    transform kept applying the fitted idf_, silently, while get_params said
    "tf"."""
    X = np.array([[1.0, 0.0, 2.0], [1.0, 1.0, 0.0], [0.0, 3.0, 1.0]])
    embedding = kgeo.MultinomialEmbedding("tfidf", norm="l2").fit(X)
    tfidf = embedding.transform(X).toarray()
    embedding.set_params(weighting="tf")
    np.testing.assert_array_equal(embedding.transform(X).toarray(),
                                  kgeo.MultinomialEmbedding("tf", norm="l2").fit_transform(
                                      X).toarray())
    embedding.set_params(weighting="tfidf")
    np.testing.assert_array_equal(embedding.transform(X).toarray(), tfidf)


def test_weighting_set_to_tfidf_after_a_tf_fit_asks_for_a_fit():
    """A TF fit learns no document frequencies: TF-IDF then is refused, not
    given as TF."""
    X = np.array([[1.0, 0.0, 2.0], [1.0, 1.0, 0.0]])
    embedding = kgeo.MultinomialEmbedding("tf").fit(X)
    embedding.set_params(weighting="tfidf")
    with pytest.raises(kgeo.NotFittedError, match="fitted with weighting='tf'.*fit it again"):
        embedding.transform(X)
    np.testing.assert_allclose(embedding.fit(X).transform(X).toarray(),
                               ref_embedding(X, X, "tfidf", "l1"), rtol=1e-14)


# --- from a mutation review of _embedding.py and _hptop.py (helper 171: 122
# mutants, 103 killed, 14 equivalent, 5 gaps, each failing its test) ---------

@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_rescued_tfidf_rows_keep_their_words_different_idfs(norm):
    # Subnormal counts make subnormal TF-IDF weights, and the row is weighted
    # again after dividing by its largest count: the idf must be applied
    # there too. (Every rescue test had rows whose words share one idf, so a
    # rescue that forgot the idf still gave their point.)
    train = np.array([[1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    embedding = kgeo.MultinomialEmbedding("tfidf", norm).fit(train)
    np.testing.assert_allclose(embedding.idf_, [np.log(4.0), np.log(2.0)], rtol=1e-15)
    got = embedding.transform(np.array([[1e-310, 3e-310]])).toarray()
    expected = embedding.transform(np.array([[1.0, 3.0]])).toarray()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    weights = np.array([np.log(4.0), 3 * np.log(2.0)])
    size = weights.sum() if norm == "l1" else np.sqrt((weights ** 2).sum())
    np.testing.assert_allclose(got[0], weights / size, rtol=1e-12)


# --- from a review of 3e822ed (helper 170)

def test_multinomial_embedding_fitted_before_weighting_was_recorded_still_transforms():
    # M1: a model pickled before _weighting_fitted existed (fitted with tfidf)
    # must still transform with weighting="tfidf".
    import pickle

    X = np.array([[3.0, 1, 0, 2], [0, 2, 4, 1], [2, 2, 1, 0], [1, 0, 3, 3]])
    model = kgeo.MultinomialEmbedding(weighting="tfidf").fit(X)
    expected = model.transform(X).toarray()
    del model._weighting_fitted
    old = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(old.transform(X).toarray(), expected)
