"""The public API's docstrings: their examples run, and their sections match the code.

numpydoc's validator is not a dependency; these checks parse the sections the
house style uses (numpydoc's ``Parameters`` / ``Returns`` / ``Attributes``)
and compare them with ``inspect.signature`` and the dataclass fields, which is
where a docstring silently falls behind a signature change.
"""

import dataclasses
import doctest
import importlib
import inspect
import re

import pytest

import kgeo

MODULES = ["kgeo", "kgeo.datasets", "kgeo.experiments", "kgeo.significance", "kgeo.text"]

# The modules whose docstrings hold examples (a reader of the source or of
# ``help()`` copies them); test_every_module_with_examples_is_run keeps the
# list whole.
DOCTEST_MODULES = ["kgeo._embedding", "kgeo._pairwise", "kgeo._plsa", "kgeo._svm",
                   "kgeo.significance", "kgeo.text"]

_HEADER = re.compile(r"^(?P<title>[A-Z][A-Za-z ]+)\n-{3,}\n", re.MULTILINE)
# A parameter's line in a section: "name : type" or "name1, name2 : type",
# at the section's own indentation (descriptions are indented further).
_ENTRY = re.compile(r"^(?P<names>\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?P<colon>:)?\s*(?P<type>.*)$")


def _sections(doc):
    """{title: [(names, type), ...]} of a numpydoc docstring's sections."""
    doc = inspect.cleandoc(doc or "")
    heads = list(_HEADER.finditer(doc))
    sections = {}
    for head, following in zip(heads, heads[1:] + [None], strict=False):
        body = doc[head.end():following.start() if following else len(doc)]
        entries = []
        for line in body.splitlines():
            if not line or line.startswith(" "):
                continue
            match = _ENTRY.match(line)
            if match:
                names = [n.strip() for n in match["names"].split(",")]
                entries.append((names, match["type"].strip() if match["colon"] else ""))
        sections[head["title"].strip()] = entries
    return sections


def _public_api():
    """(qualified name, object) of each public class, function and method."""
    seen, api = set(), []
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)) or id(obj) in seen:
                continue
            seen.add(id(obj))
            if not (inspect.isclass(obj) and issubclass(obj, BaseException)):
                # An exception's docstring says when it is raised, not how.
                api.append((f"{module_name}.{name}", obj))
            if inspect.isclass(obj):
                for attr, value in inspect.getmembers(obj):
                    if attr.startswith("_") or not inspect.isfunction(value):
                        continue
                    api.append((f"{module_name}.{name}.{attr}", value))
    return api


API = _public_api()


def _documented_parameters(obj):
    doc = obj.__doc__ if inspect.isfunction(obj) else (obj.__doc__ or obj.__init__.__doc__)
    return [name for names, _ in _sections(doc).get("Parameters", []) for name in names]


def _signature_parameters(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    names = []
    for parameter in inspect.signature(target).parameters.values():
        if parameter.name == "self":
            continue
        prefix = {parameter.VAR_POSITIONAL: "*", parameter.VAR_KEYWORD: "**"}.get(
            parameter.kind, "")
        names.append(prefix + parameter.name)
    return names


def test_the_parser_reads_numpydoc_sections():
    # The checks below are only as good as this parser: it must see every
    # entry of a section, several names on one line, types, and nothing of
    # the descriptions.
    doc = """Summary.

        Parameters
        ----------
        X : array-like of shape (n, m)
            Rows. A line of description: with a colon.
        a, b : int
        **params : dict

        Returns
        -------
        self : SVM
        """
    sections = _sections(doc)
    assert sections["Parameters"] == [(["X"], "array-like of shape (n, m)"),
                                      (["a", "b"], "int"), (["**params"], "dict")]
    assert sections["Returns"] == [(["self"], "SVM")]
    assert _sections("No sections.") == {}


def test_the_api_walk_finds_the_public_names():
    names = {name for name, _ in API}
    assert {"kgeo.SVM", "kgeo.SVM.fit", "kgeo.SVM.predict", "kgeo.PLSA.fit_transform",
            "kgeo.pairwise_kernels", "kgeo.text.RainbowVectorizer.get_params",
            "kgeo.significance.micro_sign_test", "kgeo.datasets.fetch_20newsgroups"} <= names
    assert not any(name.rsplit(".", 1)[-1].startswith("_") for name in names)


# Result records (dataclasses) document their fields as Attributes instead.
CALLABLES = [(name, obj) for name, obj in API if not dataclasses.is_dataclass(obj)]


@pytest.mark.parametrize("name, obj", CALLABLES, ids=[name for name, _ in CALLABLES])
def test_parameters_section_matches_the_signature(name, obj):
    documented = _documented_parameters(obj)
    assert documented == _signature_parameters(obj), (
        f"{name}: the docstring's Parameters list {documented}, the signature has "
        f"{_signature_parameters(obj)} (same names, same order)")


@pytest.mark.parametrize("name, obj", CALLABLES, ids=[name for name, _ in CALLABLES])
def test_parameters_and_returns_have_types(name, obj):
    doc = obj.__doc__ if inspect.isfunction(obj) else (obj.__doc__ or obj.__init__.__doc__)
    sections = _sections(doc)
    untyped = [names for names, kind in sections.get("Parameters", []) if not kind]
    assert not untyped, f"{name}: parameters without a type: {untyped}"
    if inspect.isfunction(obj):
        assert sections.get("Returns") or sections.get("Yields"), (
            f"{name}: no Returns section")


@pytest.mark.parametrize(
    "name, cls", [(name, obj) for name, obj in API if dataclasses.is_dataclass(obj)],
    ids=[name for name, obj in API if dataclasses.is_dataclass(obj)])
def test_result_records_document_every_field(name, cls):
    documented = [n for names, _ in _sections(cls.__doc__).get("Attributes", [])
                  for n in names]
    assert documented == [field.name for field in dataclasses.fields(cls)], name


@pytest.mark.parametrize("module_name", DOCTEST_MODULES)
def test_docstring_examples_run(module_name):
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_every_module_with_examples_is_run():
    import pkgutil

    with_examples = set()
    for info in pkgutil.iter_modules(kgeo.__path__, "kgeo."):
        module = importlib.import_module(info.name)
        if any(test.examples for test in doctest.DocTestFinder().find(module)):
            with_examples.add(info.name)
    assert with_examples == set(DOCTEST_MODULES)


def test_the_public_entry_points_have_examples():
    # A reader's first question of a class is what a call looks like.
    for obj in (kgeo.SVM, kgeo.MultinomialEmbedding, kgeo.PLSA, kgeo.pairwise_kernels,
                kgeo.text.RainbowVectorizer):
        assert "Examples" in _sections(obj.__doc__), obj.__name__
        assert doctest.DocTestFinder().find(obj)[0].examples, obj.__name__


def _documented_attributes(cls):
    return {name for names, _ in _sections(cls.__doc__).get("Attributes", [])
            for name in names}


def _fitted_attributes(estimator):
    names = {name for name in vars(estimator)
             if name.endswith("_") and not name.startswith("_")}
    names |= {name for name, value in inspect.getmembers(type(estimator))
              if isinstance(value, property) and name.endswith("_")
              and not name.startswith("_")}
    return names


def _small_fits():
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.poisson(1.0, (30, 8)).astype(float) + np.eye(30, 8))
    y = np.repeat([0, 1, 2], 10)
    return [kgeo.SVM(kernel="ngd").fit(X, y), kgeo.SVM(kernel="linear").fit(X, y),
            kgeo.MultinomialEmbedding().fit(X), kgeo.PLSA(2, random_state=0).fit(X),
            kgeo.PLSAFisherEmbedding((2, 3), random_state=0).fit(X),
            kgeo.HPTOPEmbedding().fit(X, y),
            kgeo.text.RainbowVectorizer().fit(["a cat sat on the mat", "dogs bark"])]


def test_every_fitted_attribute_is_documented():
    # scikit-learn's contract: what fit sets ends in "_", and a user finds it
    # under Attributes. The documented ones a fit may leave out are those
    # that depend on the input (feature_names_in_ without a data frame).
    for estimator in _small_fits():
        cls = type(estimator)
        fitted, documented = _fitted_attributes(estimator), _documented_attributes(cls)
        assert fitted <= documented, (cls.__name__, sorted(fitted - documented))
        assert documented - fitted <= {"feature_names_in_"}, (
            cls.__name__, sorted(documented - fitted))
