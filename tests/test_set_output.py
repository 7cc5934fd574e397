"""scikit-learn's set_output on kgeo's transformers.

``Pipeline.set_output(transform="pandas")`` refused a pipeline holding a kgeo
transformer ("set_output is not available"), and scikit-learn's global
``transform_output`` was ignored. The transformers now take it as
scikit-learn's do: a dense output becomes a frame named by
``get_feature_names_out()``; a sparse one is refused in scikit-learn's words.

pandas and polars are no test extras: the wiring is tested against stand-in
modules put in their place, and against the real libraries where installed,
where scikit-learn's own set_output checks (which check_estimator leaves out)
run on them too.
"""

import pickle
import sys
import types

import numpy as np
import pytest
import scipy.sparse as sp

import kgeo
import kgeo.__main__

sklearn = pytest.importorskip("sklearn")


@pytest.fixture
def counts():
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(40, 12)).astype(np.float64)
    X[:, 0] += 1  # no empty document
    return X, np.repeat([0, 1], 20)


def transformers():
    return [kgeo.MultinomialEmbedding(), kgeo.PLSA(3, random_state=0),
            kgeo.PLSAFisherEmbedding(2, random_state=0), kgeo.HPTOPEmbedding(target=1)]


def fit_transform(transformer, X, y):
    if isinstance(transformer, kgeo.HPTOPEmbedding):
        return transformer.fit_transform(X, y)
    return transformer.fit_transform(X)


class StandInFrame:
    """What the stand-in modules' DataFrame was given."""

    def __init__(self, data, **kwargs):
        self.data, self.kwargs = data, kwargs


@pytest.fixture
def stand_in_frames(monkeypatch):
    """Stand-in pandas and polars modules, each with a DataFrame class."""
    modules = {}
    for name in ("pandas", "polars"):
        module = types.ModuleType(name)
        module.DataFrame = type("DataFrame", (StandInFrame,), {})
        monkeypatch.setitem(sys.modules, name, module)
        modules[name] = module
    return modules


@pytest.mark.parametrize("transformer", transformers(), ids=lambda t: type(t).__name__)
def test_set_output_is_checked_and_returns_self(transformer):
    assert transformer.set_output(transform="pandas") is transformer
    assert transformer.set_output() is transformer  # None: left as it was
    assert transformer._sklearn_output_config == {"transform": "pandas"}
    for bad in ("numpy", "Pandas", 1, ["pandas"]):
        with pytest.raises(ValueError, match=r"set_output's transform must be one of default, "
                                             r"pandas, polars or None, got "):
            transformer.set_output(transform=bad)
    assert transformer._sklearn_output_config == {"transform": "pandas"}


@pytest.mark.parametrize("transformer", transformers(), ids=lambda t: type(t).__name__)
def test_default_output_is_the_transformers_own(transformer, counts):
    X, y = counts
    plain = fit_transform(transformer, X, y)
    assert isinstance(plain, sp.csr_matrix if not isinstance(transformer, kgeo.PLSA)
                      else np.ndarray)
    for config in ({"transform_output": "default"}, {}):
        with sklearn.config_context(**config):
            again = fit_transform(transformer.set_output(transform="default"), X, y)
        assert type(again) is type(plain)


@pytest.mark.parametrize("container", ["pandas", "polars"])
@pytest.mark.parametrize("transformer", transformers()[:1] + transformers()[2:],
                         ids=lambda t: type(t).__name__)
def test_sparse_output_in_a_frame_is_refused_in_sklearns_words(transformer, container,
                                                               counts):
    # Refused before either library is imported: no pandas or polars needed.
    X, y = counts
    transformer.set_output(transform=container)
    with pytest.raises(ValueError, match=rf"^{container.capitalize()} output does not support "
                                         rf"sparse data\. {type(transformer).__name__} returns "
                                         rf"a sparse matrix: call set_output"):
        fit_transform(transformer, X, y)


@pytest.mark.parametrize("container", ["pandas", "polars"])
def test_a_missing_library_is_named_with_what_asked_for_it(container, counts, monkeypatch):
    # A raw "No module named 'pandas'" after the work; now scikit-learn's words.
    X, _ = counts
    monkeypatch.setitem(sys.modules, container, None)  # import fails, installed or not
    model = kgeo.PLSA(3, random_state=0).fit(X).set_output(transform=container)
    with pytest.raises(ImportError, match=rf"Setting output container to '{container}' "
                                          rf"requires {container} to be installed"):
        model.transform(X)


@pytest.mark.parametrize("container", ["pandas", "polars"])
def test_dense_output_becomes_a_frame_named_by_get_feature_names_out(container, counts,
                                                                     stand_in_frames):
    X, _ = counts
    model = kgeo.PLSA(3, random_state=0).fit(X)
    expected = model.transform(X)
    frame = model.set_output(transform=container).transform(X)
    assert type(frame) is stand_in_frames[container].DataFrame
    np.testing.assert_array_equal(frame.data, expected)
    if container == "pandas":
        assert frame.kwargs == {"columns": ["plsa0", "plsa1", "plsa2"], "index": None,
                                "copy": False}
    else:
        assert frame.kwargs == {"schema": ["plsa0", "plsa1", "plsa2"], "orient": "row"}
    # fit_transform goes through transform.
    frame = kgeo.PLSA(3, random_state=0).set_output(transform=container).fit_transform(X)
    np.testing.assert_array_equal(frame.data, expected)


def test_a_pandas_frame_keeps_its_index(counts, stand_in_frames):
    X, _ = counts

    class Frame(stand_in_frames["pandas"].DataFrame):
        index = [f"doc{i}" for i in range(len(X))]
        columns = [f"w{i}" for i in range(X.shape[1])]

        def __array__(self, dtype=None, copy=None):
            return X if dtype is None else X.astype(dtype)

        def __len__(self):
            return len(X)

    model = kgeo.PLSA(3, random_state=0).fit(Frame(None)).set_output(transform="pandas")
    frame = model.transform(Frame(None))
    assert frame.kwargs["index"] is Frame.index
    assert frame.kwargs["columns"] == ["plsa0", "plsa1", "plsa2"]
    np.testing.assert_array_equal(frame.data,
                                  model.set_output(transform="default").transform(Frame(None)))


def test_sklearns_global_setting_applies_until_set_output_is_called(counts,
                                                                    stand_in_frames):
    X, _ = counts
    model = kgeo.PLSA(3, random_state=0).fit(X)
    with sklearn.config_context(transform_output="pandas"):
        assert type(model.transform(X)) is stand_in_frames["pandas"].DataFrame
        assert isinstance(model.set_output(transform="default").transform(X), np.ndarray)
    model.set_output(transform="polars")
    with sklearn.config_context(transform_output="pandas"):
        assert type(model.transform(X)) is stand_in_frames["polars"].DataFrame


def test_a_container_kgeo_does_not_know_is_refused(counts, monkeypatch):
    """A container scikit-learn's global setting may name in a later version."""
    X, _ = counts
    model = kgeo.PLSA(3, random_state=0).fit(X)
    monkeypatch.setattr(sklearn, "get_config", lambda: {"transform_output": "pyarrow"})
    with pytest.raises(ValueError, match=r"PLSA returns default, pandas, polars containers, "
                                         r"not 'pyarrow'"):
        model.transform(X)
    assert isinstance(model.set_output(transform="default").transform(X), np.ndarray)


def test_the_setting_survives_clone_and_pickle_and_a_pipeline_sets_it(counts,
                                                                      stand_in_frames):
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline

    X, _ = counts
    model = kgeo.PLSA(3, random_state=0).set_output(transform="pandas")
    for copy in (clone(model), pickle.loads(pickle.dumps(model))):
        assert copy._sklearn_output_config == {"transform": "pandas"}
    pipeline = make_pipeline(kgeo.PLSA(3, random_state=0)).set_output(transform="pandas")
    assert type(pipeline.fit_transform(X)) is stand_in_frames["pandas"].DataFrame


def test_kgeos_own_embeddings_ignore_the_global_setting(capsys):
    """The demo (and the experiments) embed documents in sparse rows, which
    a frame cannot hold: they pin the default container."""
    with sklearn.config_context(transform_output="pandas"):
        assert kgeo.__main__.main(["demo", "--n-documents", "300", "--n-features", "400",
                                   "--n-classes", "3"]) == 0
    assert "ngd" in capsys.readouterr().out


SKLEARN_SET_OUTPUT_CHECKS = ["check_set_output_transform", "check_set_output_transform_pandas",
                             "check_global_output_transform_pandas",
                             "check_set_output_transform_polars",
                             "check_global_set_output_transform_polars"]


@pytest.mark.parametrize("check", SKLEARN_SET_OUTPUT_CHECKS)
@pytest.mark.parametrize("transformer", transformers(), ids=lambda t: type(t).__name__)
def test_sklearns_set_output_checks(transformer, check):
    """scikit-learn runs these in its own suite, not in check_estimator; the
    pandas and polars ones skip where the library is missing."""
    from sklearn.utils import estimator_checks

    if not hasattr(estimator_checks, check):
        pytest.skip(f"scikit-learn {sklearn.__version__} has no {check}")
    getattr(estimator_checks, check)(type(transformer).__name__, transformer)


@pytest.mark.parametrize("container", ["pandas", "polars"])
def test_real_frames(container, counts):
    library = pytest.importorskip(container)
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, _ = counts
    names = [f"w{i}" for i in range(X.shape[1])]
    if container == "pandas":
        frame = library.DataFrame(X, columns=names, index=[f"doc{i}" for i in range(len(X))])
    else:
        frame = library.DataFrame(X, schema=names, orient="row")
    pipeline = make_pipeline(kgeo.PLSA(3, random_state=0), StandardScaler())
    out = pipeline.set_output(transform=container).fit_transform(frame)
    assert isinstance(out, library.DataFrame)
    assert list(out.columns) == ["plsa0", "plsa1", "plsa2"]
    if container == "pandas":
        assert list(out.index) == list(frame.index)
    plain = make_pipeline(kgeo.PLSA(3, random_state=0), StandardScaler()).fit_transform(X)
    np.testing.assert_allclose(out.to_numpy(), plain, rtol=1e-12, atol=1e-12)
