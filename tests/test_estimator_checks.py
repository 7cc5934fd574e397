"""scikit-learn's estimator checks on kgeo.SVM.

The Euclidean kernels (named, or a callable kernel) pass every check but two, which compare a fit with
integer sample weights to one with repeated samples to 1e-7 where SMO stops
within ``tol``; they pass at a tight ``tol`` (checked below). The NGD kernel
reads each row as a point of the multinomial simplex (after L1
normalisation), so it rejects negative entries and cannot separate data whose
classes differ only in location (its ``poor_score`` tag says so, which spares it
check_classifiers_train's accuracy bound); the checks it fails for these reasons
are declared with their reason, strictly (a declared check that starts passing is
an error). The checks' all-zero rows, which have no point on the simplex, are
left out of a fit with a warning and predicted by the intercepts, so the
checks made of such data pass.
"""

import inspect

import numpy as np
import pytest

from sklearn.utils.estimator_checks import parametrize_with_checks

import kgeo

# xfail_strict came with scikit-learn 1.8 (1.6 and 1.7, the last for Python
# 3.10, lack it): there the declared failures are plain xfails, and
# test_ngd_failures_are_the_declared_ones below still checks them exactly.
_STRICT = ({"xfail_strict": True}
           if "xfail_strict" in inspect.signature(parametrize_with_checks).parameters else {})

_WITHIN_TOL = (
    "weights of k and k copies of a sample are the same SVM, but SMO stops each fit within "
    "tol=1e-3 of it along its own path: decision values differ by about 1e-4, where the "
    "check allows 1e-7 (test_svm.py::test_integer_weights_are_repeated_samples checks the "
    "equivalence to 1e-12 at tol=1e-13)")
SAMPLE_WEIGHT_EXPECTED_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": _WITHIN_TOL,
    "check_sample_weight_equivalence_on_sparse_data": _WITHIN_TOL,
}

NGD_EXPECTED_FAILURES = {
    "check_class_weight_classifiers": (
        "its random data has negative entries; a multinomial kernel rejects them with "
        "a ValueError saying so"),
    **SAMPLE_WEIGHT_EXPECTED_FAILURES,
}

PRECOMPUTED_EXPECTED_FAILURES = {
    # The other checks make a symmetric "kernel matrix" for pairwise estimators.
    "check_classifiers_one_label_sample_weights": (
        "the check's 'kernel matrix' is a random 10 x 10 array, not symmetric: kgeo rejects "
        "it with a ValueError saying so before it reads the weights"),
}


CALLABLE_EXPECTED_FAILURES = {
    **SAMPLE_WEIGHT_EXPECTED_FAILURES,
    "check_dtype_object": (
        "a callable kernel takes samples of any kind, as scikit-learn's SVC passes them: "
        "the check's 2-D array of objects holding a dict goes to the function as given, "
        "which raises its own TypeError (about multiplying dicts), not the conversion "
        "message the check looks for"),
}


def linear_function(A, B):
    """The linear kernel as a callable kernel (dense values for sparse rows too)."""
    K = A @ B.T
    return K.toarray() if hasattr(K, "toarray") else K


def expected_failed_checks(estimator):
    if estimator.kernel == "ngd":
        return NGD_EXPECTED_FAILURES
    if estimator.kernel == "precomputed":
        return PRECOMPUTED_EXPECTED_FAILURES
    if callable(estimator.kernel):
        return CALLABLE_EXPECTED_FAILURES
    return SAMPLE_WEIGHT_EXPECTED_FAILURES


def _allow_array_api_check(check, monkeypatch):
    """scikit-learn (1.8+) runs check_array_api_input with NumPy on every
    estimator, and skips it unless SCIPY_ARRAY_API is set: set for that check
    alone (it reads the variable when it runs), it runs instead of skipping."""
    if "check_array_api_input" in getattr(getattr(check, "func", check), "__name__", ""):
        monkeypatch.setenv("SCIPY_ARRAY_API", "1")


@parametrize_with_checks(
    [kgeo.SVM(kernel="linear"), kgeo.SVM(kernel="rbf"), kgeo.SVM(kernel="ngd"),
     kgeo.SVM(kernel="precomputed"), kgeo.SVM(kernel=linear_function)],
    expected_failed_checks=expected_failed_checks,
    **_STRICT,
)
def test_sklearn_compatible(estimator, check, monkeypatch):
    _allow_array_api_check(check, monkeypatch)
    check(estimator)


@pytest.mark.parametrize("kernel", ["linear", "rbf", "ngd", linear_function])
@pytest.mark.parametrize("name", sorted(SAMPLE_WEIGHT_EXPECTED_FAILURES))
def test_sample_weight_checks_pass_at_a_tight_tol(kernel, name):
    """The declared sample-weight failures are SMO's tolerance, nothing else."""
    from sklearn.utils import estimator_checks

    check = getattr(estimator_checks, name, None)
    if check is None:
        pytest.skip(f"this scikit-learn has no {name}")
    check("SVM", kgeo.SVM(kernel=kernel, tol=1e-13))


def test_only_the_multinomial_kernels_declare_a_poor_score():
    from sklearn.utils import get_tags

    for kernel in ("ngd", "ngd+pi", "bhattacharyya", "diffusion"):
        assert get_tags(kgeo.SVM(kernel=kernel)).classifier_tags.poor_score
    for kernel in ("linear", "rbf", "precomputed", linear_function):
        assert not get_tags(kgeo.SVM(kernel=kernel)).classifier_tags.poor_score


def test_ngd_failures_are_the_declared_ones():
    """The declared failures are exactly the checks that fail, for the reasons given."""
    from sklearn.utils.estimator_checks import check_estimator

    failed = {}

    def record(*, estimator, check_name, exception, status, expected_to_fail,
               expected_to_fail_reason):
        if status == "failed":
            failed.setdefault(check_name, []).append(exception)

    # (No blanket warning filter here: kgeo's DataConversionWarning is not
    # scikit-learn's, so check_supervised_y_2d's "always" filter would not
    # reach it through an "ignore".)
    check_estimator(kgeo.SVM(kernel="ngd"), on_fail=None, callback=record)
    assert set(failed) == set(NGD_EXPECTED_FAILURES)
    messages = {name: " ".join(repr(e.__cause__ or e.__context__ or e) for e in excs)
                for name, excs in failed.items()}
    assert "Negative values" in messages["check_class_weight_classifiers"]


# The TF/TF-IDF embedding, PLSA and its Fisher embedding are transformers of
# non-negative counts (they say so through their tags, so the checks feed
# them such data), HP-TOP a transformer that needs y: every check passes. A
# small n_components keeps the checks' tiny data meaningful.
@parametrize_with_checks(
    [kgeo.MultinomialEmbedding(), kgeo.MultinomialEmbedding(weighting="tfidf", norm="l2"),
     kgeo.PLSA(n_components=3), kgeo.PLSAFisherEmbedding(n_components=(1, 2)),
     kgeo.HPTOPEmbedding()],
    **_STRICT)
def test_kernel_embeddings_are_sklearn_compatible(estimator, check, monkeypatch):
    _allow_array_api_check(check, monkeypatch)
    check(estimator)


TRANSFORMERS = [kgeo.MultinomialEmbedding(), kgeo.PLSA(n_components=3),
                kgeo.PLSAFisherEmbedding(n_components=(1, 2)), kgeo.HPTOPEmbedding(target=1)]


@pytest.mark.parametrize("transformer", TRANSFORMERS, ids=repr)
def test_transformers_tags_say_what_they_take(transformer):
    """scikit-learn reads the tags, not the code: the count transformers take
    sparse, non-negative X and need no y (a meta-estimator that reads
    ``target_tags.required`` would otherwise insist on labels); HP-TOP, fitted
    on labels, needs y."""
    from sklearn.utils import get_tags

    tags = get_tags(transformer)
    assert tags.estimator_type is None and tags.transformer_tags is not None
    assert tags.input_tags.sparse
    needs_y = isinstance(transformer, kgeo.HPTOPEmbedding)
    assert tags.target_tags.required is needs_y
    assert tags.input_tags.positive_only is not needs_y


@pytest.mark.parametrize("transformer", TRANSFORMERS, ids=repr)
@pytest.mark.parametrize("name", ["check_transformer_get_feature_names_out",
                                  "check_transformer_get_feature_names_out_pandas",
                                  "check_get_feature_names_out_error"])
def test_transformers_name_their_output_columns(transformer, name):
    """scikit-learn's checks of ``get_feature_names_out``, which its
    ``check_estimator`` leaves to its own estimators' tests (the pandas one
    skips without pandas, which is no test extra)."""
    from sklearn.utils import estimator_checks

    getattr(estimator_checks, name)(type(transformer).__name__, transformer)


# ---------------------------------------------------------------------------
# kgeo's errors and warnings are scikit-learn's where it is loaded (from
# mutation testing of exceptions.py and _base.py: each test fails on a small
# change to the code that the suite let through)
# ---------------------------------------------------------------------------

def _unfitted_error():
    import numpy as np

    with pytest.raises(kgeo.NotFittedError) as excinfo:
        kgeo.SVM().predict(np.ones((1, 2)))
    return excinfo.value


def test_not_fitted_error_is_caught_as_scikit_learns():
    """Code written against scikit-learn catches kgeo's error with its own
    class, as ValueError and as AttributeError (hasattr-style probing); the
    class keeps its name and docstring, and is one class, not a new one per
    error (``except type(first)`` catches the next)."""
    import sklearn.exceptions

    with pytest.raises(sklearn.exceptions.NotFittedError, match=r"^This SVM instance is not "
                                                                r"fitted yet\. Call 'fit'"):
        kgeo.SVM().decision_function([[1.0, 2.0]])
    error = _unfitted_error()
    assert isinstance(error, ValueError) and isinstance(error, AttributeError)
    assert type(error).__name__ == "NotFittedError"
    assert type(error).__doc__ == kgeo.NotFittedError.__doc__
    assert type(_unfitted_error()) is type(error)


def test_convergence_warning_is_scikit_learns():
    """A fit stopped by max_iter warns with a UserWarning that scikit-learn's
    ConvergenceWarning filters catch."""
    import numpy as np
    import sklearn.exceptions

    assert issubclass(kgeo.ConvergenceWarning, UserWarning)
    assert issubclass(kgeo.exceptions.DataConversionWarning, UserWarning)
    X = np.array([[0.0, 1.0], [1.0, 0.0], [0.2, 0.9], [0.9, 0.1]] * 5)
    y = np.array([0, 1, 0, 1] * 5)
    with pytest.warns(sklearn.exceptions.ConvergenceWarning, match="max_iter=1"):
        kgeo.SVM(kernel="linear", max_iter=1).fit(X, y)


def test_a_partly_imported_sklearn_exceptions_is_left_alone(monkeypatch):
    """sklearn.exceptions sits in sys.modules before its classes exist (while
    it is being imported): kgeo's class is used as it is then."""
    import sys
    import types

    from kgeo.exceptions import NotFittedError, sklearn_compatible

    monkeypatch.setitem(sys.modules, "sklearn.exceptions", types.ModuleType("sklearn.exceptions"))
    assert sklearn_compatible(NotFittedError) is NotFittedError
    assert type(_unfitted_error()) is NotFittedError


def _prints_ok_in_a_fresh_process(code, tmp_path):
    """Run ``code`` in a child interpreter that imports this kgeo (run
    outside the repository, whose uncompiled source folder ``-c`` would find
    first), and check that it printed "ok"."""
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (os.path.dirname(os.path.dirname(kgeo.__file__)), env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr[-2000:]


def test_kgeo_raises_its_own_not_fitted_error_without_importing_sklearn(tmp_path):
    """In a process that never imported scikit-learn, kgeo does not import it
    to raise: the error is kgeo's own class, a ValueError and an
    AttributeError. The child imports this kgeo (run outside the repository,
    whose uncompiled source folder ``-c`` would find first)."""
    code = ("import sys, numpy as np, kgeo\n"
            "try:\n"
            "    kgeo.SVM().predict(np.ones((1, 2)))\n"
            "except kgeo.NotFittedError as error:\n"
            "    assert type(error) is kgeo.NotFittedError, type(error).__mro__\n"
            "    assert isinstance(error, ValueError) and isinstance(error, AttributeError)\n"
            "else:\n"
            "    raise AssertionError('predict before fit did not raise')\n"
            "assert 'sklearn' not in sys.modules, 'kgeo imported scikit-learn'\n"
            "print('ok')\n")
    _prints_ok_in_a_fresh_process(code, tmp_path)


def test_public_submodules_are_attributes_of_kgeo(tmp_path):
    """After ``import kgeo`` alone, ``kgeo.text.RainbowVectorizer`` (the
    README's name for it) raised AttributeError: the submodules are now
    imported when first named, as SciPy's and scikit-learn's are, and not
    before. Run in a fresh process, where no test has imported them."""
    code = ("import sys, kgeo\n"
            "lazy = ('datasets', 'experiments', 'significance', 'text')\n"
            "assert not [m for m in lazy if 'kgeo.' + m in sys.modules], sys.modules.keys()\n"
            "from kgeo.text import RainbowVectorizer\n"
            "assert kgeo.text.RainbowVectorizer is RainbowVectorizer\n"
            "assert kgeo.datasets.load_smart is sys.modules['kgeo.datasets'].load_smart\n"
            "assert kgeo.exceptions.NotFittedError is kgeo.NotFittedError\n"
            "assert callable(kgeo.experiments.run_zhang2005)\n"
            "assert callable(kgeo.significance.micro_sign_test)\n"
            "assert {'SVM', 'datasets', 'text'} <= set(dir(kgeo))\n"
            "try:\n"
            "    kgeo.svm\n"
            "except AttributeError as error:\n"
            "    assert str(error) == \"module 'kgeo' has no attribute 'svm'\", error\n"
            "else:\n"
            "    raise AssertionError('kgeo.svm did not raise')\n"
            "print('ok')\n")
    _prints_ok_in_a_fresh_process(code, tmp_path)


def test_errors_and_warnings_pickle_where_sklearn_is_loaded():
    """BUG FIX: the class made to be both kgeo's and scikit-learn's could not
    be pickled (PicklingError: "not the same object as
    kgeo.exceptions.NotFittedError"), so a NotFittedError raised in a
    multiprocessing worker reached the parent as a MaybeEncodingError. It
    round-trips now, as the same class, with its message and attributes."""
    import pickle

    import sklearn.exceptions

    error = _unfitted_error()
    error.note = "kept"
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and copy.args == error.args and copy.note == "kept"
    assert isinstance(copy, sklearn.exceptions.NotFittedError)
    from kgeo.exceptions import ConvergenceWarning, sklearn_compatible

    warning = sklearn_compatible(ConvergenceWarning)("max_iter=1 reached")
    copy = pickle.loads(pickle.dumps(warning))
    assert type(copy) is type(warning) and copy.args == ("max_iter=1 reached",)


# ---------------------------------------------------------------------------
# One class for a bad parameter, whatever its fault (type or range), as
# scikit-learn's InvalidParameterError: before it, SVM(C=None) raised
# TypeError and SVM(C=-1) ValueError, so code catching one missed the other.
# ---------------------------------------------------------------------------

def _docs():
    return np.array([[3.0, 1, 0, 2], [0, 2, 4, 1], [2, 2, 1, 0], [1, 0, 3, 3]] * 3)


def _labels():
    return [0, 1, 0, 1] * 3


_FITS_WITH_BAD_PARAMETERS = {
    "SVM C=None": lambda: kgeo.SVM(C=None).fit(_docs(), _labels()),
    "SVM C=-1": lambda: kgeo.SVM(C=-1).fit(_docs(), _labels()),
    "SVM tol='x'": lambda: kgeo.SVM(tol="x").fit(_docs(), _labels()),
    "SVM cache_dtype=float16": lambda: kgeo.SVM(cache_dtype="float16").fit(_docs(), _labels()),
    "SVM shrinking='yes'": lambda: kgeo.SVM(shrinking="yes").fit(_docs(), _labels()),
    "SVM max_iter=1.5": lambda: kgeo.SVM(max_iter=1.5).fit(_docs(), _labels()),
    "SVM verbose=None": lambda: kgeo.SVM(verbose=None).fit(_docs(), _labels()),
    "SVM n_jobs=0": lambda: kgeo.SVM(n_jobs=0).fit(_docs(), _labels()),
    "SVM kernel='foo'": lambda: kgeo.SVM(kernel="foo").fit(_docs(), _labels()),
    "SVM kernel=None": lambda: kgeo.SVM(kernel=None).fit(_docs(), _labels()),
    "SVM unused gamma=None": lambda: kgeo.SVM(kernel="linear", gamma=None).fit(_docs(), _labels()),
    "SVM unused coef0='a'": lambda: kgeo.SVM(coef0="a").fit(_docs(), _labels()),
    "SVM unused t=-1": lambda: kgeo.SVM(t=-1).fit(_docs(), _labels()),
    "SVM rbf gamma='x'": lambda: kgeo.SVM(kernel="rbf", gamma="x").fit(_docs(), _labels()),
    "SVM rbf gamma=None": lambda: kgeo.SVM(kernel="rbf", gamma=None).fit(_docs(), _labels()),
    "SVM rbf gamma=-1": lambda: kgeo.SVM(kernel="rbf", gamma=-1.0).fit(_docs(), _labels()),
    "SVM poly degree=0": lambda: kgeo.SVM(kernel="poly", degree=0).fit(_docs(), _labels()),
    "SVM diffusion t='a'": lambda: kgeo.SVM(kernel="diffusion", t="a").fit(_docs(), _labels()),
    "SVM diffusion normalize=1": lambda: kgeo.SVM(kernel="diffusion",
                                                  normalize=1).fit(_docs(), _labels()),
    "SVM shift=nan": lambda: kgeo.SVM(shift=float("nan")).fit(_docs(), _labels()),
    "SVM class_weight='x'": lambda: kgeo.SVM(class_weight="x").fit(_docs(), _labels()),
    "SVM class_weight={9: 1}": lambda: kgeo.SVM(class_weight={9: 1}).fit(_docs(), _labels()),
    "SVM class_weight={0: None}": lambda: kgeo.SVM(
        class_weight={0: None}).fit(_docs(), _labels()),
    "SVM break_ties=1": lambda: kgeo.SVM(break_ties=1).fit(_docs(), _labels()),
    "SVM unused degree=10**400": lambda: kgeo.SVM(degree=10**400).fit(_docs(), _labels()),
    "SVM poly degree=10**400": lambda: kgeo.SVM(kernel="poly",
                                                degree=10**400).fit(_docs(), _labels()),
    "PLSA n_components=0": lambda: kgeo.PLSA(n_components=0).fit(_docs()),
    "PLSA n_components=None": lambda: kgeo.PLSA(n_components=None).fit(_docs()),
    "PLSA tol=-1": lambda: kgeo.PLSA(tol=-1.0).fit(_docs()),
    "PLSA random_state='x'": lambda: kgeo.PLSA(random_state="x").fit(_docs()),
    "PLSA n_jobs=1.5": lambda: kgeo.PLSA(n_jobs=1.5).fit(_docs()),
    "PLSAFisherEmbedding topic_scores='x'": lambda: kgeo.PLSAFisherEmbedding(
        topic_scores="x").fit(_docs()),
    "PLSAFisherEmbedding n_components=(0,)": lambda: kgeo.PLSAFisherEmbedding(
        n_components=(0,)).fit(_docs()),
    "MultinomialEmbedding weighting='x'": lambda: kgeo.MultinomialEmbedding(
        weighting="x").fit(_docs()),
    "MultinomialEmbedding norm=2": lambda: kgeo.MultinomialEmbedding(norm=2).fit(_docs()),
    "HPTOPEmbedding C=None": lambda: kgeo.HPTOPEmbedding(C=None).fit(_docs(), _labels()),
    "HPTOPEmbedding prior_scores=1": lambda: kgeo.HPTOPEmbedding(
        prior_scores=1).fit(_docs(), _labels()),
    "HPTOPEmbedding target=[0]": lambda: kgeo.HPTOPEmbedding(target=[0]).fit(_docs(), _labels()),
    "HPTOPEmbedding target=7": lambda: kgeo.HPTOPEmbedding(target=7).fit(_docs(), _labels()),
    "RainbowVectorizer stoplist='x'": lambda: kgeo.text.RainbowVectorizer(
        stoplist="x").fit(["a doc"]),
    "RainbowVectorizer stoplist=5": lambda: kgeo.text.RainbowVectorizer(
        stoplist=5).fit(["a doc"]),
    "RainbowVectorizer skip_html=1": lambda: kgeo.text.RainbowVectorizer(
        skip_html=1).fit(["a doc"]),
    "RainbowVectorizer min_word_length=0": lambda: kgeo.text.RainbowVectorizer(
        min_word_length=0).fit(["a doc"]),
    "RainbowVectorizer dtype=str": lambda: kgeo.text.RainbowVectorizer(
        dtype=str).fit(["a doc"]),
    "RainbowVectorizer prune_by_doc_count=-1": lambda: kgeo.text.RainbowVectorizer(
        prune_by_doc_count=-1).fit(["a doc"]),
    "pairwise_kernels kernel='x'": lambda: kgeo.pairwise_kernels(_docs(), kernel="x"),
    "pairwise_kernels unknown parameter": lambda: kgeo.pairwise_kernels(_docs(), gamma=1.0),
    "pairwise_kernels rbf gamma='a'": lambda: kgeo.pairwise_kernels(_docs(), kernel="rbf",
                                                                    gamma="a"),
    "pairwise_kernels shift=None": lambda: kgeo.pairwise_kernels(_docs(), shift=None),
    "pairwise_kernels n_jobs=0": lambda: kgeo.pairwise_kernels(_docs(), n_jobs=0),
    "geodesic_distance n_jobs=True": lambda: kgeo.geodesic_distance(_docs(), n_jobs=True),
    "is_positive_definite tol=None": lambda: kgeo.is_positive_definite([[1.0]], tol=None),
    "is_conditionally_positive_definite tol=-1": lambda:
        kgeo.is_conditionally_positive_definite([[1.0]], tol=-1.0),
}


@pytest.mark.parametrize("call", _FITS_WITH_BAD_PARAMETERS.values(),
                         ids=_FITS_WITH_BAD_PARAMETERS.keys())
def test_a_bad_parameter_raises_invalid_parameter_error(call):
    """Of the wrong type or out of range, a parameter raises one class, which
    ``except ValueError``, ``except TypeError`` and scikit-learn's
    ``InvalidParameterError`` all catch (scikit-learn is loaded here)."""
    from sklearn.utils._param_validation import InvalidParameterError

    with pytest.raises(kgeo.InvalidParameterError) as excinfo:
        call()
    assert isinstance(excinfo.value, ValueError) and isinstance(excinfo.value, TypeError)
    assert isinstance(excinfo.value, InvalidParameterError)
    assert excinfo.value.__cause__ is None and excinfo.value.__suppress_context__


@pytest.mark.parametrize("call, error", [
    (lambda: kgeo.SVM().fit(-_docs(), _labels()), ValueError),
    (lambda: kgeo.SVM().fit(_docs(), [0] * 12), ValueError),
    (lambda: kgeo.SVM().fit(None, _labels()), TypeError),
    (lambda: kgeo.SVM().fit(_docs(), _labels(), sample_weight=[1.0] * 3), ValueError),
    (lambda: kgeo.pairwise_kernels(_docs(), _docs()[:, :2]), ValueError),
    (lambda: kgeo.is_positive_definite([[1.0, 2.0]]), ValueError),
    (lambda: kgeo.SVM().fit(_docs(), _labels(), sample_weight=-1), ValueError),
    (lambda: kgeo.SVM().fit(_docs(), _labels(), sample_weight=True), TypeError),
    (lambda: kgeo.pairwise_kernels(np.ones((4, 1)), kernel="hyperbolic"), ValueError),
    (lambda: kgeo.pairwise_kernels(np.ones((3, 3000)), kernel="ngd_exp", normalize=True,
                                   t=1e-3), ValueError),
    (lambda: kgeo.SVM(kernel="rbf").fit([[1e-200, 0], [0, 1e-200], [1e-200, 1e-200], [0, 0]],
                                        [0, 0, 1, 1]), ValueError),
], ids=["negative X", "one class", "X=None", "short sample_weight", "Y's width", "K's shape",
        "sample_weight=-1", "sample_weight=True", "hyperbolic on 1 column",
        "ngd_exp's factor on 3000 columns", "gamma='scale' on X of variance 1e-400"])
def test_bad_data_is_no_invalid_parameter_error(call, error):
    """Only parameters raise the class: bad data keeps its ValueError or
    TypeError (a parameter check that let a data error through would be
    named wrongly), also where a parameter's range depends on X (review 170)."""
    with pytest.raises(error) as excinfo:
        call()
    assert not isinstance(excinfo.value, kgeo.InvalidParameterError)


@pytest.mark.parametrize("params", [{"C": 1e-310}, {"C": 5e-324, "class_weight": {0: 0.4}},
                                    {"C": 1e200, "class_weight": {1: 1e200}}])
def test_C_times_a_given_class_weight_out_of_range_is_an_invalid_parameter_error(params):
    """Two parameters alone make that product; with "balanced" the weights
    come from y's class counts, and the refusal is the data's ValueError."""
    with pytest.raises(kgeo.InvalidParameterError, match=r"C \* class_weight must be"):
        kgeo.SVM(**params).fit(_docs(), _labels())
    with pytest.raises(ValueError, match=r"C \* class_weight must be") as excinfo:
        kgeo.SVM(C=1e-310, class_weight="balanced").fit(_docs(), _labels())
    assert not isinstance(excinfo.value, kgeo.InvalidParameterError)


def test_invalid_parameter_error_pickles_and_keeps_its_message():
    """The class made to be both kgeo's and scikit-learn's crosses process
    boundaries (a grid search's workers) as itself, message included."""
    import pickle

    with pytest.raises(kgeo.InvalidParameterError) as excinfo:
        kgeo.SVM(C=-1).fit(_docs(), _labels())
    assert str(excinfo.value) == "C must be finite and > 0, got -1.0"
    copy = pickle.loads(pickle.dumps(excinfo.value))
    assert type(copy) is type(excinfo.value) and copy.args == excinfo.value.args


def test_a_private_sklearn_class_of_other_bases_is_not_taken(monkeypatch):
    """scikit-learn's InvalidParameterError lives in a private module: if it
    ever stops being both a ValueError and a TypeError there, kgeo's class
    is raised alone, so that ``except TypeError`` still catches it."""
    import sys
    import types

    from kgeo.exceptions import InvalidParameterError, sklearn_compatible

    fake = types.ModuleType("sklearn.utils._param_validation")
    fake.InvalidParameterError = type("InvalidParameterError", (ValueError,), {})
    monkeypatch.setitem(sys.modules, "sklearn.utils._param_validation", fake)
    assert sklearn_compatible(InvalidParameterError) is InvalidParameterError
    with pytest.raises(TypeError, match="^C must be a real number") as excinfo:
        kgeo.SVM(C="1").fit(_docs(), _labels())
    assert type(excinfo.value) is InvalidParameterError


def test_kgeo_raises_its_own_invalid_parameter_error_without_importing_sklearn(tmp_path):
    """Without scikit-learn loaded, the error is kgeo's class alone, both a
    ValueError and a TypeError, and kgeo did not import scikit-learn for it."""
    code = ("import sys, kgeo\n"
            "try:\n"
            "    kgeo.SVM(C=None).fit([[1.0, 2.0], [2.0, 1.0]], [0, 1])\n"
            "except TypeError as error:\n"
            "    assert type(error) is kgeo.InvalidParameterError, type(error).__mro__\n"
            "    assert isinstance(error, ValueError)\n"
            "else:\n"
            "    raise AssertionError('C=None did not raise')\n"
            "assert 'sklearn' not in sys.modules, 'kgeo imported scikit-learn'\n"
            "print('ok')\n")
    _prints_ok_in_a_fresh_process(code, tmp_path)


# --- from a review of 3e822ed (helper 170: 50 mutants, 38 killed, 2 equivalent,
# 10 survivors, each failing a test here or in test_plsa/test_embedding/test_text)

def test_break_ties_set_after_fit_raises_invalid_parameter_error_at_predict():
    # V2: _check_break_ties is also called by predict, outside _check_params.
    model = kgeo.SVM().fit(_docs(), _labels())
    model.break_ties = 1
    with pytest.raises(kgeo.InvalidParameterError, match="break_ties must be True or False"):
        model.predict(_docs())


def test_plsa_fold_in_max_iter_beyond_int32_is_an_invalid_parameter():
    # V10: the one check PLSA._check_params raises itself.
    with pytest.raises(kgeo.InvalidParameterError, match="fold_in_max_iter must be at most"):
        kgeo.PLSA(2, fold_in_max_iter=2**31).fit(_docs())


def test_a_private_sklearn_name_that_is_no_class_is_not_taken(monkeypatch):
    import sys
    import types

    # E7: the private module's attribute may be anything, not only a class.
    from kgeo.exceptions import InvalidParameterError, sklearn_compatible

    fake = types.ModuleType("sklearn.utils._param_validation")
    fake.InvalidParameterError = lambda *args: None
    monkeypatch.setitem(sys.modules, "sklearn.utils._param_validation", fake)
    assert sklearn_compatible(InvalidParameterError) is InvalidParameterError
