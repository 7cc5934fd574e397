"""Column names of data frames: recorded at fit, checked where X comes back.

A frame of word counts whose columns come back in another order would give
each word another word's weight without any error. scikit-learn's estimators
record the names (``feature_names_in_``) and refuse such X; so do kgeo's.
scikit-learn's own check of this (``check_dataframe_column_names_consistency``)
needs pandas, which is no test extra: these tests use stand-ins with what
kgeo reads of a frame: pandas' and polars' ``columns``, pyarrow's
``column_names`` (its ``columns`` being the data), the dataframe interchange
protocol's ``column_names()``, and the values through ``__array__``.
"""

import inspect
import os
import pickle
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import kgeo
from kgeo._validation import feature_names

# The checker is a plain module beside this file (see test_svm.py).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svm_checker as ck  # noqa: E402


class _Values:
    """The values of a stand-in frame, read through ``__array__``."""

    def __init__(self, values):
        self._values = np.asarray(values)

    def __array__(self, dtype=None, copy=None):
        return self._values if dtype is None else self._values.astype(dtype)

    def __len__(self):
        return self._values.shape[0]

    @property
    def shape(self):
        return self._values.shape


class Frame(_Values):
    """The parts of a pandas DataFrame that kgeo reads."""

    def __init__(self, values, columns):
        super().__init__(values)
        self.columns = list(columns)


class InterchangeFrame(_Values):
    """A frame seen only through ``__dataframe__``."""

    class _Protocol:
        def __init__(self, names):
            self._names = names

        def column_names(self):
            return iter(self._names)

    def __init__(self, values, columns):
        super().__init__(values)
        self._names = list(columns)

    def __dataframe__(self, nan_as_null=False, allow_copy=True):
        return self._Protocol(self._names)


class ArrowTable(_Values):
    """A pyarrow Table's shape: ``columns`` holds the columns' data, the names
    are ``column_names``."""

    def __init__(self, values, columns):
        super().__init__(values)
        self.column_names = list(columns)

    @property
    def columns(self):
        raise AssertionError("the names are read without touching the data")


WORDS = ["apple", "bank", "cell", "dna", "engine", "fund", "gene", "hockey"]


@pytest.fixture
def counts():
    rng = np.random.default_rng(3)
    X, y = ck.make_count_data(rng, 40, len(WORDS), 2, separation=2.0)
    return X, y


def _estimators():
    """(name, make, fit, apply) for every estimator that reads word columns."""
    return [
        ("svm-ngd", lambda: kgeo.SVM(kernel="ngd"), lambda m, X, y: m.fit(X, y),
         lambda m, X: m.decision_function(X)),
        ("svm-linear", lambda: kgeo.SVM(kernel="linear"), lambda m, X, y: m.fit(X, y),
         lambda m, X: m.predict(X)),
        ("embedding", lambda: kgeo.MultinomialEmbedding(weighting="tfidf"),
         lambda m, X, y: m.fit(X), lambda m, X: m.transform(X).toarray()),
        ("plsa", lambda: kgeo.PLSA(n_components=2, random_state=0), lambda m, X, y: m.fit(X),
         lambda m, X: m.transform(X)),
        ("plsa-fisher", lambda: kgeo.PLSAFisherEmbedding((2,), random_state=0),
         lambda m, X, y: m.fit(X), lambda m, X: m.transform(X).toarray()),
        ("hp-top", lambda: kgeo.HPTOPEmbedding(), lambda m, X, y: m.fit(X, y),
         lambda m, X: m.transform(X).toarray()),
    ]


ESTIMATORS = {name: rest for name, *rest in _estimators()}


def test_feature_names_reads_string_columns_only():
    values = np.ones((2, 3))
    names = feature_names(Frame(values, ["a", "b", "c"]))
    assert names.dtype == object and names.tolist() == ["a", "b", "c"]
    assert feature_names(InterchangeFrame(values, ["a", "b", "c"])).tolist() == ["a", "b", "c"]
    # No names: arrays, sparse matrices, lists, integer labels (a frame of an array).
    for X in (values, sp.csr_matrix(values), values.tolist(), Frame(values, [0, 1, 2]),
              Frame(values, [])):
        assert feature_names(X) is None
    with pytest.raises(TypeError, match=r"must all be strings or all be other labels, got "
                                        r"names of types \['int', 'str'\]"):
        feature_names(Frame(values, ["a", 1, "c"]))
    # Other labels of mixed types (a frame of an array, then a column added
    # as 2.5) are no names either, as in scikit-learn.
    assert feature_names(Frame(values, [0, 1, 2.5])) is None
    # A table whose columns are its data: the names come from column_names.
    assert feature_names(ArrowTable(values, ["a", "b", "c"])).tolist() == ["a", "b", "c"]
    # A copy: writing to a model's names must not rename the caller's columns.
    index = np.array(["a", "b", "c"], dtype=object)
    frame = Frame(values, [])
    frame.columns = index
    names = feature_names(frame)
    names[0] = "z"
    assert index.tolist() == ["a", "b", "c"]


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_names_are_recorded_and_the_same_frame_gives_the_arrays_results(name, counts):
    make, fit, apply = ESTIMATORS[name]
    X, y = counts
    frame = Frame(X, WORDS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning about names
        named = fit(make(), frame, y)
        from_frame = apply(named, frame)
    assert isinstance(named.feature_names_in_, np.ndarray)
    assert named.feature_names_in_.dtype == object
    assert named.feature_names_in_.tolist() == WORDS
    plain = fit(make(), X, y)
    assert not hasattr(plain, "feature_names_in_")
    np.testing.assert_array_equal(from_frame, apply(plain, X))
    # Kept by pickling; a refit on an array forgets them.
    assert pickle.loads(pickle.dumps(named)).feature_names_in_.tolist() == WORDS
    fit(named, X, y)
    assert not hasattr(named, "feature_names_in_")


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_columns_in_another_order_or_renamed_are_refused(name, counts):
    make, fit, apply = ESTIMATORS[name]
    X, y = counts
    model = fit(make(), Frame(X, WORDS), y)
    # The same words in another order: the values would go to the wrong words.
    with pytest.raises(ValueError, match=r"(?s)should match those that were passed during "
                                         r"fit.*must be in the same order as they were in fit"):
        apply(model, Frame(X[:, ::-1], WORDS[::-1]))
    renamed = WORDS[:-1] + ["zebra"]
    with pytest.raises(ValueError, match=r"(?s)unseen at fit time:\n- zebra\n.*yet now "
                                         r"missing:\n- hockey\n"):
        apply(model, Frame(X, renamed))
    with pytest.raises(ValueError, match=r"yet now missing:\n- fund\n- gene\n- hockey\n"):
        apply(model, Frame(X[:, :5], WORDS[:5]))
    # The interchange protocol's names are read the same way, and a table's.
    with pytest.raises(ValueError, match=r"must be in the same order"):
        apply(model, InterchangeFrame(X[:, ::-1], WORDS[::-1]))
    apply(model, InterchangeFrame(X, WORDS))
    with pytest.raises(ValueError, match=r"must be in the same order"):
        apply(model, ArrowTable(X[:, ::-1], WORDS[::-1]))
    # At most 5 names listed per kind, then "- ..." (and only then).
    with pytest.raises(ValueError, match=r"unseen at fit time:\n- new0\n- new1\n- new2\n- new3\n"
                                         r"- new4\n- \.\.\.\nFeature names seen"):
        apply(model, Frame(X, [f"new{i}" for i in range(8)]))
    with pytest.raises(ValueError, match=r"unseen at fit time:\n- new0\n- new1\n- new2\n- new3\n"
                                         r"- new4\nFeature names seen"):
        apply(model, Frame(X, WORDS[:3] + [f"new{i}" for i in range(5)]))
    # Columns only missing are not said to be "in the wrong order"; each
    # count is its own.
    with pytest.raises(ValueError) as caught:
        apply(model, Frame(X[:, :5], WORDS[:5]))
    assert "same order" not in str(caught.value)
    assert str(caught.value).endswith("was fitted on 8 named columns, X has 5)")


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_names_on_one_side_only_warn(name, counts):
    make, fit, apply = ESTIMATORS[name]
    X, y = counts
    named = fit(make(), Frame(X, WORDS), y)
    with pytest.warns(UserWarning, match=r"X does not have valid feature names, but \w+ was "
                                         r"fitted with feature names") as caught:
        apply(named, X)
    # The warning points at the caller's line, not at kgeo's.
    assert caught[0].filename == __file__
    plain = fit(make(), X, y)
    with pytest.warns(UserWarning, match=r"X has feature names, but \w+ was fitted without"):
        apply(plain, Frame(X, WORDS))


def test_the_names_warning_points_at_the_line_that_called_kgeo(counts):
    """That very line (file and line number), however deep kgeo's own calls
    go, and not the line that called it."""
    X, y = counts
    for model in (kgeo.SVM(kernel="ngd").fit(Frame(X, WORDS), y),
                  kgeo.MultinomialEmbedding().fit(Frame(X, WORDS)),
                  kgeo.PLSA(n_components=2, random_state=0).fit(Frame(X, WORDS))):
        apply = model.predict if isinstance(model, kgeo.SVM) else model.transform
        with pytest.warns(UserWarning, match=r"X does not have valid feature names") as caught:
            line = inspect.currentframe().f_lineno + 1
            apply(X)
        assert (caught[0].filename, caught[0].lineno) == (__file__, line)


def test_mixed_column_names_are_refused_at_fit(counts):
    X, y = counts
    mixed = Frame(X, WORDS[:-1] + [7])
    for make, fit, _ in ESTIMATORS.values():
        with pytest.raises(TypeError, match=r"must all be strings or all be other labels"):
            fit(make(), mixed, y)


def test_a_kernel_matrix_frame_names_the_training_samples():
    rng = np.random.default_rng(0)
    X, y = ck.make_count_data(rng, 30, 6, 3)
    K = kgeo.pairwise_kernels(X, kernel="ngd+pi")
    samples = [f"doc{i}" for i in range(30)]
    model = kgeo.SVM(kernel="precomputed").fit(Frame(K, samples), y)
    assert model.feature_names_in_.tolist() == samples
    plain = kgeo.SVM(kernel="precomputed").fit(K, y)
    np.testing.assert_array_equal(model.decision_function(Frame(K[:5], samples)),
                                  plain.decision_function(K[:5]))
    with pytest.raises(ValueError, match=r"must be in the same order"):
        model.predict(Frame(K[:5, ::-1], samples[::-1]))


def test_a_callable_kernel_reads_x_itself_and_records_no_names(counts):
    X, y = counts

    def linear(A, B):
        return np.asarray(A, dtype=float) @ np.asarray(B, dtype=float).T

    model = kgeo.SVM(kernel=linear).fit(Frame(X, WORDS), y)
    assert not hasattr(model, "feature_names_in_")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(Frame(X[:, ::-1], WORDS[::-1]))  # as scikit-learn's SVC: unchecked


def _nonzero_columns(Z):
    return set(sp.csr_matrix(Z).nonzero()[1].tolist())


def test_output_names_follow_the_words_into_their_columns(counts):
    """Each output column's name says which word it weighs: a document of
    one word has word scores only in the columns named after that word."""
    X, y = counts
    frame = Frame(X, WORDS)
    embedding = kgeo.MultinomialEmbedding().fit(frame)
    assert embedding.get_feature_names_out().tolist() == WORDS
    plsa = kgeo.PLSA(n_components=3, random_state=0).fit(frame)
    assert plsa.get_feature_names_out().tolist() == ["plsa0", "plsa1", "plsa2"]
    fisher = kgeo.PLSAFisherEmbedding((2, 3, 2), random_state=0).fit(frame)
    hptop = kgeo.HPTOPEmbedding(target=1, prior_scores=True).fit(frame, np.arange(40) % 3)
    for model in (fisher, hptop):
        names = model.get_feature_names_out()
        assert names.dtype == object and len(set(names.tolist())) == len(names)
        for j, word in enumerate(WORDS):
            one_word = np.zeros((1, len(WORDS)))
            one_word[0, j] = 3
            Z = model.transform(Frame(one_word, WORDS))
            assert Z.shape[1] == len(names)
            # Word columns of other words are zero; some of this word's are not.
            scored = {names[c] for c in _nonzero_columns(Z)}
            per_word = [n for n in scored if any(n.endswith(f"_{w}") or f"_{w}_" in n
                                                 for w in WORDS)]
            assert per_word and all(word in n for n in per_word), (word, sorted(per_word))
    names = fisher.get_feature_names_out().tolist()
    # A number of topics given twice is told apart by the model's position.
    assert names[:2] == ["plsa2_0_topic0", "plsa2_0_topic1"]
    assert names[2:4] == ["plsa2_0_apple_topic0", "plsa2_0_apple_topic1"]
    assert "plsa3_topic2" in names and "plsa2_2_hockey_topic1" in names
    names = hptop.get_feature_names_out().tolist()
    assert names[:4] == ["log_odds", "theta1[1]", "theta2[1]", "b[1]"]
    assert names[10:13] == ["prior[1]", "prior[0]", "prior[2]"]
    assert names[13] == "w[1]_apple" and names[-1] == "w[2]_hockey"
    # set_params(target=...) renames with the columns it reorders.
    assert hptop.set_params(target=2).get_feature_names_out()[1] == "theta1[2]"


def test_input_features_are_checked_against_the_fit(counts):
    X, y = counts
    plain = kgeo.MultinomialEmbedding().fit(X)
    assert plain.get_feature_names_out().tolist() == [f"x{i}" for i in range(8)]
    # an array of Python strings (dtype object), as scikit-learn's own
    # get_feature_names_out returns (from mutation testing of _base.py)
    assert plain.get_feature_names_out().dtype == object
    assert plain.get_feature_names_out(WORDS).tolist() == WORDS
    with pytest.raises(ValueError, match=r"input_features should have length equal to number "
                                         r"of features \(8, the columns of the fit's X\), got 3"):
        plain.get_feature_names_out(WORDS[:3])
    named = kgeo.MultinomialEmbedding().fit(Frame(X, WORDS))
    with pytest.raises(ValueError, match=r"input_features is not equal to feature_names_in_"):
        named.get_feature_names_out(WORDS[::-1])
    # every name is compared, not only the first (from mutation testing of _base.py)
    with pytest.raises(ValueError, match=r"input_features is not equal to feature_names_in_"):
        named.get_feature_names_out(WORDS[:-1] + ["another"])
    assert named.get_feature_names_out(list(WORDS)).tolist() == WORDS
    with pytest.raises(kgeo.NotFittedError):
        kgeo.PLSA().get_feature_names_out()


TRANSFORMERS = ["embedding", "plsa", "plsa-fisher", "hp-top"]


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_every_transformer_checks_input_features_against_the_fit(name, counts):
    """scikit-learn's rule for ``input_features``, whatever the output's names
    are made of: the fit's names, in their order, of the fit's count, as a
    1-D sequence; without names at fit, the words given replace x0, x1, ..."""
    make, fit, _ = ESTIMATORS[name]
    X, y = counts
    model = fit(make(), Frame(X, WORDS), y)
    assert model.get_feature_names_out(WORDS).tolist() == model.get_feature_names_out().tolist()
    with pytest.raises(ValueError, match=r"input_features is not equal to feature_names_in_"):
        model.get_feature_names_out(WORDS[::-1])
    with pytest.raises(ValueError, match=r"input_features should have length equal to number "
                                         r"of features \(8"):
        model.get_feature_names_out(WORDS[:3])
    plain = fit(make(), X, y)
    with pytest.raises(ValueError, match=r"input_features should have length equal to number "
                                         r"of features \(8, the columns of the fit's X\), got 8 "
                                         r"name\(s\) in an array of shape \(8, 1\)"):
        plain.get_feature_names_out(np.array(WORDS, dtype=object)[:, None])
    given = [word.upper() for word in WORDS]
    expected = plain.get_feature_names_out().tolist()
    for i in range(len(WORDS)):  # x0 ... x7: no name is another's prefix
        expected = [n.replace(f"x{i}", given[i]) for n in expected]
    assert plain.get_feature_names_out(given).tolist() == expected


def test_output_names_are_a_new_array_each_call(counts):
    """A caller editing the names it got (a ColumnTransformer prefixes them)
    renames neither the model's ``feature_names_in_`` nor the next call's."""
    X, _ = counts
    for model, first in ((kgeo.MultinomialEmbedding().fit(Frame(X, WORDS)), "apple"),
                         (kgeo.MultinomialEmbedding().fit(X), "x0")):
        names = model.get_feature_names_out()
        assert names.dtype == object
        names[0] = "edited"
        assert model.get_feature_names_out()[0] == first
        assert getattr(model, "feature_names_in_", [first])[0] == first


def test_hp_top_output_names_check_the_parameters_as_transform_does(counts):
    """The names are transform's for the current parameters, so a
    ``prior_scores`` transform refuses is refused here too (a truthy string
    would name prior columns transform never makes)."""
    X, _ = counts
    model = kgeo.HPTOPEmbedding().fit(X, np.arange(40) % 3).set_params(prior_scores="yes")
    for method in (model.transform, lambda X: model.get_feature_names_out()):
        with pytest.raises(TypeError, match=r"prior_scores must be True or False, got 'yes'"):
            method(X)


def test_a_pipeline_names_the_embeddings_columns_by_the_vocabulary():
    pytest.importorskip("sklearn")
    from sklearn.pipeline import make_pipeline

    from kgeo.text import RainbowVectorizer

    texts = ["good cheap phone", "bad movie plot", "great phone", "awful movie"]
    pipeline = make_pipeline(RainbowVectorizer(), kgeo.MultinomialEmbedding()).fit(texts)
    words = pipeline[0].get_feature_names_out()
    assert pipeline.get_feature_names_out().tolist() == words.tolist()
    assert "phone" in words.tolist()
