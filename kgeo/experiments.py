"""Reproduce the experiments of Zhang, Chen & Lee (SIGIR 2005): Tables 1-3 and footnote 3.

``run_zhang2005("20ng", data_dir, out_dir)`` trains the ten cells of Table 2
(20 Newsgroups) and ``run_zhang2005("webkb", ...)`` those of Table 1 (WebKB):

    representation TF or TF-IDF  x  {L1: LIN, NED, NGD;  L2: LIN, NED}

with C = 1 and one-vs-one SVMs, as the paper ran LIBSVM. It then compares
NGD (L1) against LIN and NED (L2) with the micro sign test and McNemar's
test (Table 3), and with ``c_sweep=True`` checks footnote 3 ("the
superiority of the NGD kernel [is] unaffected" for C from 0.001 to 1000).

Preprocessing (the paper's Rainbow options; :class:`kgeo.text.RainbowVectorizer`):

- 20 Newsgroups "bydate" (11,314 training / 7,532 test messages, headers
  kept): ``--prune-vocab-by-doc-count=2`` with Rainbow's default lexer and
  SMART stop list.
- WebKB, classes student, faculty, course and project: ``--skip-header
  --skip-html --lex-pipe-command=tagdigits --no-stoplist
  --prune-vocab-by-occur-count=2``; four leave-one-university-out splits
  (train on the three other universities plus misc), accuracy averaged over
  the four held-out universities.

Choices the paper leaves open, and what this module does (docs/reproducing.md
discusses each with measurements):

- The vocabulary (and its pruning) is learnt from the training documents of
  each split (``vocabulary="train"``, the leak-free default), or from every
  document of the corpus (``vocabulary="all"``, what Rainbow does when train
  and test files are indexed into one barrel).
- IDF is ``log(m / df)`` over the m training documents of the split
  (:class:`kgeo.MultinomialEmbedding`); words absent from them weigh 0.
- Documents without any word left (after the stop list, pruning, or a zero
  IDF): the NGD kernel cannot place them on the simplex. Literally, with
  ``sum_i sqrt(theta_i theta'_i) = 0`` for an empty document, NGD gives
  ``-2 arccos(0) = -pi`` against every training document, and because
  ``sum_i alpha_i y_i = 0`` in each class pair the decision value is the
  intercept ``b*`` alone. So an empty *test* document is predicted from the
  pairwise intercepts (one-vs-one voting on ``b*``) and always counts in the
  accuracy. An empty *training* document is left out of NGD's training set
  (it has no position on the manifold); LIN and NED take zero rows as they
  are. The counts are reported (``n_empty_test`` in results.csv).
"""

import contextlib
import csv
import hashlib
import importlib.util
import json
import logging
import math
import numbers
import os
import secrets
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ._base import check_is_fitted, progress_bars_shown
from ._embedding import MultinomialEmbedding
from ._kernels import KERNELS
from ._pairwise import resolve_n_jobs
from ._svm import SVM, _squashed
from ._validation import _callers_stacklevel, check_positive, checked_accuracy, is_one_of
from ._version import __version__
from .datasets import (
    DatasetNotFoundError,
    _locate_20newsgroups,
    _locate_webkb,
    load_20newsgroups,
    load_webkb,
)
from .exceptions import EmptyDocumentWarning, parameter_errors
from .significance import mcnemar_test, micro_sign_test
from .text import RainbowVectorizer

__all__ = [
    "C_SWEEP_VALUES",
    "CELLS",
    "DATASETS",
    "PAPER_ACCURACY",
    "PAPER_SIGN_Z",
    "CellResult",
    "Split",
    "Zhang2005Results",
    "evaluate_cell",
    "load_zhang2005_splits",
    "predict_from_intercepts",
    "run_zhang2005",
]

logger = logging.getLogger(__name__)

DATASETS = ("20ng", "webkb")
REPRESENTATIONS = ("tf", "tfidf")
# (normalization, kernel) of the five columns of Tables 1 and 2, in the paper's order.
COLUMNS = (("l1", "lin"), ("l1", "ned"), ("l1", "ngd"), ("l2", "lin"), ("l2", "ned"))
CELLS = tuple((r, n, k) for r in REPRESENTATIONS for n, k in COLUMNS)
KERNEL_NAMES = {"lin": "linear", "ned": "ned", "ngd": "ngd"}
# Footnote 3 of the paper.
C_SWEEP_VALUES = (0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
SWEEP_COLUMNS = (("l1", "ngd"), ("l2", "lin"), ("l2", "ned"))
# Table 3: NGD (L1) against LIN (L2) and NED (L2).
COMPARISONS = ((("l1", "ngd"), ("l2", "lin")), (("l1", "ngd"), ("l2", "ned")))
SIGNIFICANCE_LEVEL = 0.005

_DATASET_TITLES = {"20ng": "20 Newsgroups (Table 2)", "webkb": "WebKB (Table 1)"}
_WEBKB_CLASSES = ("student", "faculty", "course", "project")
_VOCABULARIES = ("train", "all")


def _paper_table(tf, tfidf):
    values = {}
    for representation, row in (("tf", tf), ("tfidf", tfidf)):
        for (normalization, kernel), value in zip(COLUMNS, row):
            values[representation, normalization, kernel] = value
    return values


# Accuracy in percent, Tables 1 (WebKB) and 2 (20NG) of the paper.
PAPER_ACCURACY = {
    "20ng": _paper_table(tf=(24.68, 69.16, 81.94, 79.76, 79.76),
                         tfidf=(21.47, 72.20, 84.61, 82.33, 82.06)),
    "webkb": _paper_table(tf=(72.57, 84.39, 91.88, 89.52, 90.08),
                          tfidf=(55.84, 81.04, 91.42, 88.23, 87.96)),
}
# Table 3: micro sign test Z of NGD (L1) against LIN (L2) and NED (L2).
PAPER_SIGN_Z = {
    ("webkb", "tf", "lin"): 3.47, ("webkb", "tf", "ned"): 2.67,
    ("webkb", "tfidf", "lin"): 4.25, ("webkb", "tfidf", "ned"): 4.43,
    ("20ng", "tf", "lin"): 7.52, ("20ng", "tf", "ned"): 7.60,
    ("20ng", "tfidf", "lin"): 7.49, ("20ng", "tfidf", "ned"): 8.47,
}

# Rainbow options of the paper, as RainbowVectorizer parameters.
PREPROCESSING = {
    "20ng": {"stoplist": "smart", "prune_by_doc_count": 2},
    "webkb": {"stoplist": None, "skip_header": True, "skip_html": True, "tag_digits": True,
              "prune_by_occur_count": 2},
}
RAINBOW_OPTIONS = {
    "20ng": "--prune-vocab-by-doc-count=2 (default lexer, SMART stop list)",
    "webkb": ("--skip-header --skip-html --lex-pipe-command=tagdigits --no-stoplist "
              "--prune-vocab-by-occur-count=2"),
}

# C is last in results.csv and significance.csv: the columns before it keep
# the places they had before it was added.
RESULTS_COLUMNS = ("dataset", "representation", "normalization", "kernel", "accuracy",
                   "seconds", "n_test", "n_empty_test", "C")
SPLIT_COLUMNS = ("dataset", "split", "representation", "normalization", "kernel", "C",
                 "accuracy", "seconds", "n_train", "n_test", "n_empty_train", "n_empty_test")
SIGNIFICANCE_COLUMNS = ("dataset", "representation", "system_a", "system_b", "n", "k",
                        "sign_z", "sign_p", "sign_method", "mcnemar_b", "mcnemar_c",
                        "mcnemar_chi2", "mcnemar_p", "mcnemar_method", "paper_sign_z", "C")
SWEEP_COLUMNS_CSV = ("dataset", "representation", "C", "normalization", "kernel", "accuracy",
                     "seconds", "rank")


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Split:
    """One train/test split of a corpus, as term counts.

    Attributes
    ----------
    name : str
        ``"bydate"`` for 20 Newsgroups, the held-out university for WebKB.
    X_train : scipy.sparse.csr_matrix of shape (n_train, n_words)
    y_train : ndarray of shape (n_train,)
    X_test : scipy.sparse.csr_matrix of shape (n_test, n_words)
    y_test : ndarray of shape (n_test,)
    """

    name: str
    X_train: sp.csr_matrix
    y_train: np.ndarray
    X_test: sp.csr_matrix
    y_test: np.ndarray

    @property
    def n_words(self):
        return self.X_train.shape[1]


@parameter_errors()
def _check_datasets(dataset):
    if isinstance(dataset, (bytes, bytearray)):
        raise TypeError(f"dataset must be a name among {list(DATASETS)} (str) or a sequence "
                        f"of them, got {type(dataset).__name__}")
    if isinstance(dataset, str):
        names = [dataset]
    else:
        try:
            names = list(dataset)
        except TypeError:
            raise TypeError(f"dataset must be a name among {list(DATASETS)} or a sequence of "
                            f"them, got {type(dataset).__name__}") from None
    if not names:
        raise ValueError(f"dataset must name at least one of {list(DATASETS)}, got none")
    for name in names:
        if not is_one_of(name, DATASETS):
            raise ValueError(f"dataset must be one of {list(DATASETS)}, got {name!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"dataset must not repeat a name, got {names}")
    return names


@parameter_errors()
def _check_path(value, name, what):
    """``value`` as a Path: a str or os.PathLike, not empty."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path to {what}, got {type(value).__name__}")
    if str(value) == "":
        raise ValueError(f"{name} must be a path to {what}, got an empty path")
    if "\0" in str(value):  # which the system's calls refuse
        raise ValueError(f"{name} must be a path to {what}, got {str(value)!r}, which holds "
                         f"a null character")
    return Path(value).expanduser()


def _check_data_dir(data_dir):
    # A missing folder is no parameter error: DatasetNotFoundError (a
    # FileNotFoundError) is raised outside _check_path's conversion.
    path = _check_path(data_dir, "data_dir", "the folder holding the corpora")
    if not path.exists():
        raise DatasetNotFoundError(f"data directory {str(path)!r} does not exist")
    return path


@parameter_errors()
def _check_dataset_name(dataset):
    if not is_one_of(dataset, DATASETS):
        raise ValueError(f"dataset must be one of {list(DATASETS)}, got {dataset!r}")


@parameter_errors()
def _check_vocabulary(vocabulary):
    if not is_one_of(vocabulary, _VOCABULARIES):
        raise ValueError(f"vocabulary must be one of {list(_VOCABULARIES)}, got {vocabulary!r}")
    return vocabulary


def load_zhang2005_splits(dataset, data_dir, vocabulary="train"):
    """Load and vectorise a corpus with the paper's preprocessing.

    Parameters
    ----------
    dataset : {"20ng", "webkb"}
    data_dir : str or os.PathLike
        Folder holding ``20news-bydate/20news-bydate.tar.gz`` (or the
        extracted folders) and/or ``webkb/webkb-data.tar.gz`` (or
        ``webkb/<class>/<university>/<page>``); see :mod:`kgeo.datasets`.
    vocabulary : {"train", "all"}, default="train"
        Learn the vocabulary and its pruning from each split's training
        documents, or once from every document of the corpus (Rainbow's
        behaviour when all files are indexed into one barrel).

    Returns
    -------
    splits : list of Split
        One split for 20 Newsgroups, four (cornell, texas, washington,
        wisconsin held out) for WebKB.
    info : dict
        ``n_documents``, ``n_classes``, ``target_names``, ``rainbow`` (the
        paper's options) and ``seconds`` spent loading and vectorising.
    """
    _check_dataset_name(dataset)
    _check_vocabulary(vocabulary)
    data_dir = _check_data_dir(data_dir)
    started = time.perf_counter()
    params = PREPROCESSING[dataset]
    if dataset == "20ng":
        corpus = load_20newsgroups(data_dir, subset="all")
        documents, target = corpus.data, corpus.target
        index_pairs = [("bydate", np.flatnonzero(corpus.split == "train"),
                        np.flatnonzero(corpus.split == "test"))]
    else:
        corpus = load_webkb(data_dir, classes=_WEBKB_CLASSES)
        documents, target = corpus.data, corpus.target
        index_pairs = [(name, train, test)
                       for name, (train, test) in zip(corpus.held_out, corpus.splits)]

    splits = []
    if vocabulary == "all":
        counts = RainbowVectorizer(**params).fit_transform(documents)
    for name, train, test in index_pairs:
        if train.size == 0 or test.size == 0:
            raise ValueError(
                f"{dataset} split {name!r} has {train.size} training and {test.size} test "
                f"documents; both must be non-empty")
        if vocabulary == "all":
            X_train, X_test = counts[train], counts[test]
        else:
            vectorizer = RainbowVectorizer(**params)
            X_train = vectorizer.fit_transform([documents[i] for i in train])
            X_test = vectorizer.transform([documents[i] for i in test])
        splits.append(Split(name, X_train, target[train], X_test, target[test]))
    info = {
        "n_documents": len(documents),
        "n_classes": len(corpus.target_names),
        "target_names": list(corpus.target_names),
        "rainbow": RAINBOW_OPTIONS[dataset],
        "seconds": time.perf_counter() - started,
    }
    return splits, info


# ---------------------------------------------------------------------------
# One cell
# ---------------------------------------------------------------------------

@parameter_errors()
def _check_C(C):
    """C as a float: finite, and normal, as SVM's box bounds must be (a
    subnormal C failed only at the first fit, after the corpora were loaded)."""
    C = check_positive(C, "C")
    if C < np.finfo(np.float64).tiny:
        raise ValueError(f"C must be a normal float64 (at least "
                         f"{np.finfo(np.float64).tiny:.4g}), got {C!r}")
    return C


@parameter_errors()
def _check_n_samples(n_samples):
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 0:
        raise ValueError(f"n_samples must be an integer >= 0, got {n_samples!r}")


def predict_from_intercepts(model, n_samples):
    """Predict documents whose kernel row is constant: by the intercepts alone.

    For a document at the same kernel value ``c`` from every training
    document, each class pair's decision value is ``c sum_i alpha_i y_i +
    b* = b*`` (the dual constraint), so one-vs-one voting only sees the
    intercepts. That is what LIBSVM computes for an empty document with the
    NGD kernel (``-2 arccos(0) = -pi`` everywhere) and with the linear kernel
    (0 everywhere).

    Parameters
    ----------
    model : fitted kgeo.SVM
    n_samples : int

    Returns
    -------
    y : ndarray of shape (n_samples,)
    """
    if not isinstance(model, SVM):
        raise TypeError(f"model must be a fitted kgeo.SVM, got {type(model).__name__}")
    check_is_fitted(model, "intercept_")
    _check_n_samples(n_samples)
    if not np.all(np.isfinite(model.intercept_)):
        # SVM.predict refuses such decisions; the votes would count a NaN as
        # a loss of the pair's first class.
        raise ValueError(f"model.intercept_ must be finite, got "
                         f"{int(np.sum(~np.isfinite(model.intercept_)))} NaN or infinite value(s)")
    classes = model.classes_
    n_classes = classes.shape[0]
    break_ties = model._check_break_ties()
    if n_classes == 2:
        # intercept_ follows scikit-learn (positive means classes_[1]); in
        # LIBSVM's orientation the pair's decision value is -intercept_.
        winner = 0 if -model.intercept_[0] > 0 else 1
    else:
        votes = np.zeros(n_classes, dtype=np.int64)
        confidence = np.zeros(n_classes)
        p = 0
        for s in range(n_classes):
            for t in range(s + 1, n_classes):
                votes[s if model.intercept_[p] > 0 else t] += 1
                confidence[s] += model.intercept_[p]
                confidence[t] -= model.intercept_[p]
                p += 1
        # As SVM.predict: ties to the first class, or, with break_ties, to
        # the tied class of the largest ovr decision value.
        winner = int(np.argmax(votes + _squashed(confidence) if break_ties else votes))
    return np.full(n_samples, classes[winner])


@dataclass
class _Outcome:
    predictions: np.ndarray
    seconds: float
    n_empty_train: int
    n_empty_test: int
    n_left_out: int = 0          # empty training documents the SVM was not given
    untrained: tuple = ()        # labels all of whose training documents those were


def _fit_predict(kernel, C, X_train, y_train, X_test, n_jobs):
    """Train one SVM and predict; handles empty documents for the manifold kernels."""
    y_train = np.asarray(y_train)
    if y_train.shape != (X_train.shape[0],):
        raise ValueError(f"y_train must hold one label per training document "
                         f"({X_train.shape[0]}), got shape {y_train.shape}")
    started = time.perf_counter()
    model = SVM(kernel=KERNEL_NAMES[kernel], C=C, n_jobs=n_jobs)
    n_left_out = _fit_without_empty_documents(model, X_train, y_train)
    predictions, _ = _predict_empty_documents_too(model, X_test)
    seconds = time.perf_counter() - started
    untrained = tuple(np.setdiff1d(np.unique(y_train), model.classes_).tolist())
    # Reported for every kernel: LIN and NED take these documents as they are.
    return _Outcome(predictions, seconds, int(np.sum(np.diff(X_train.indptr) == 0)),
                    int(np.sum(np.diff(X_test.indptr) == 0)), n_left_out, untrained)


def _empty_rows(model, X):
    """Rows of CSR ``X`` without a word, if ``model``'s kernel needs rows on the simplex."""
    if not KERNELS[model.kernel][1]:
        return np.zeros(X.shape[0], dtype=bool)
    return np.diff(X.indptr) == 0


def _fit_without_empty_documents(model, X_train, y_train):
    """Fit ``model`` on CSR ``X_train``, leaving out the documents without a word
    when its kernel is a manifold kernel (they have no point on the simplex).

    A class all of whose documents are left out is then not trained on. If
    fewer than two classes keep documents, ``SVM.fit`` on all the rows says
    which class lost them (cut out first, the fit was refused for a matrix
    the caller never passed: "0 sample(s) (shape=(0, 3))", "only 1 class").

    Returns the number of documents left out (0 for the other kernels).
    """
    empty = _empty_rows(model, X_train)
    if not empty.any():
        model.fit(X_train, y_train)
        return 0
    y_train = np.asarray(y_train)
    if np.unique(y_train[~empty]).shape[0] < 2:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptyDocumentWarning)
            model.fit(X_train, y_train)  # raises, naming the class (see SVM.fit)
    else:
        model.fit(X_train[~empty], y_train[~empty])
    return int(empty.sum())


def _predict_empty_documents_too(model, X_test):
    """``model.predict`` of CSR ``X_test``, and how many of its documents have no
    word while the kernel is a manifold kernel: ``SVM.predict`` gives those the
    intercepts' vote (``predict_from_intercepts``; see the module docstring).

    Returns the predictions and that number (0 for the other kernels).
    """
    with warnings.catch_warnings():
        # Counted and reported by the caller instead.
        warnings.simplefilter("ignore", EmptyDocumentWarning)
        predictions = model.predict(X_test)
    return predictions, int(_empty_rows(model, X_test).sum())


@parameter_errors()
def _check_cell(representation, normalization, kernel):
    if not (all(isinstance(v, str) for v in (representation, normalization, kernel))
            and (representation, normalization, kernel) in CELLS):
        raise ValueError(
            f"(representation, normalization, kernel) must be one of the cells "
            f"{list(CELLS)}, got {(representation, normalization, kernel)}")


def evaluate_cell(split, representation, normalization, kernel, C=1.0, n_jobs=None):
    """Train and test one cell of the tables on one split.

    Parameters
    ----------
    split : Split
    representation : {"tf", "tfidf"}
    normalization : {"l1", "l2"}
    kernel : {"lin", "ned", "ngd"}
    C : float, default=1.0
    n_jobs : int or None, default=None
        Threads of each SVM, as `SVM`'s ``n_jobs``.

    Returns
    -------
    accuracy : float
        In percent, every test document counted.
    predictions : ndarray of shape (n_test,)

    Warns
    -----
    EmptyDocumentWarning
        When NGD's training set leaves out documents without a word (see
        the module docstring), with their number and any class that lost
        every document.
    """
    if not isinstance(split, Split):
        raise TypeError(f"split must be a Split (see load_zhang2005_splits), got "
                        f"{type(split).__name__}")
    _check_cell(representation, normalization, kernel)
    C = _check_C(C)
    X_train, X_test = _Embeddings(split)(representation, normalization)
    outcome = _fit_predict(kernel, C, X_train, split.y_train, X_test, n_jobs)
    if outcome.n_left_out:
        # run_zhang2005 records these counts in its tables; this caller
        # would learn nothing of them otherwise.
        lost = (f"; no document of class(es) {list(outcome.untrained)} is left, so the "
                f"model never predicts them" if outcome.untrained else "")
        warnings.warn(
            f"{outcome.n_left_out} training document(s) without a word were left out of "
            f"{kernel.upper()}'s training set (they have no point on the simplex){lost}",
            EmptyDocumentWarning, stacklevel=2)
    return 100.0 * checked_accuracy(split.y_test, outcome.predictions), outcome.predictions


class _Embeddings:
    """The four embeddings of a split, computed on first use and kept."""

    def __init__(self, split):
        self.split = split
        self._cache = {}

    def __call__(self, representation, normalization):
        key = representation, normalization
        if key not in self._cache:
            # Sparse rows, whatever scikit-learn's transform_output says.
            embedding = MultinomialEmbedding(weighting=representation, norm=normalization
                                             ).set_output(transform="default")
            embedding.fit(self.split.X_train)
            self._cache[key] = (embedding.transform(self.split.X_train),
                                embedding.transform(self.split.X_test))
        return self._cache[key]


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------

@dataclass(eq=False)
class CellResult:
    """One cell of Table 1 or 2 (one kernel, representation, normalisation, C).

    Attributes
    ----------
    dataset, representation, normalization, kernel : str
        ``"20ng"``/``"webkb"``, ``"tf"``/``"tfidf"``, ``"l1"``/``"l2"``,
        ``"lin"``/``"ned"``/``"ngd"``.
    C : float
    accuracy : float
        Test accuracy in percent; for WebKB the mean over the four splits.
    split_names : list of str
    split_accuracy : list of float
        Accuracy (percent) of each split.
    split_seconds : list of float
        Fit plus predict time of each split.
    n_train, n_test, n_empty_train, n_empty_test : list of int
        Per split: training and test documents, and those without any word
        after embedding. NGD leaves empty training documents out of its
        training set and predicts empty test documents from the intercepts
        (they count in the accuracy); LIN and NED take them as zero rows.
    predictions : ndarray of shape (sum(n_test),)
        Test predictions of all splits, concatenated in split order.
    paper : float or None
        The paper's accuracy for this cell (C = 1).
    untrained : list of list of str
        Per split, the names of the classes all of whose training documents
        NGD left out (none has a word): the model never predicts them. Empty
        lists for LIN and NED, and on the real corpora.
    """

    dataset: str
    representation: str
    normalization: str
    kernel: str
    C: float
    accuracy: float
    split_names: list
    split_accuracy: list
    split_seconds: list
    n_train: list
    n_test: list
    n_empty_train: list
    n_empty_test: list
    predictions: np.ndarray = field(repr=False)
    paper: object = None
    untrained: list = field(default_factory=list)

    @property
    def seconds(self):
        """Fit plus predict time, summed over the splits."""
        return float(sum(self.split_seconds))

    @property
    def system(self):
        """``"<kernel>-<normalization>"``, e.g. ``"ngd-l1"``."""
        return f"{self.kernel}-{self.normalization}"


@dataclass(eq=False)
class Zhang2005Results:
    """What :func:`run_zhang2005` measured and wrote.

    Attributes
    ----------
    datasets : list of str
    C : float
    vocabulary : str
    cells : list of CellResult
        The ten cells of each dataset, in the paper's order.
    significance : list of dict
        One row per dataset, representation and comparison (the columns of
        ``significance.csv``), tests on the pooled test predictions.
    c_sweep : list of CellResult or None
        With ``c_sweep=True``: NGD-L1, LIN-L2 and NED-L2 for every C of
        ``C_SWEEP_VALUES``, both representations.
    c_sweep_summary : list of dict or None
        Per dataset and representation: the ranking at each C
        (``rankings``, e.g. ``"ngd-l1 > ned-l2 > lin-l2"``, exact ties as
        ``=``), whether any differs from the ranking at the reference C
        (``ranking_changed``), whether NGD-L1 is strictly best at every C
        (``ngd_best_everywhere``) and the Cs where it is not
        (``ngd_not_best_at``).
    y_true : dict of str to ndarray
        Per dataset, the test labels of all splits concatenated.
    info : dict of str to dict
        Per dataset: corpus sizes, vocabulary sizes per split, loading time.
    files : dict of str to pathlib.Path
        The files written, by kind.
    seconds : float
        Wall time of the whole run.
    """

    datasets: list
    C: float
    vocabulary: str
    cells: list
    significance: list
    c_sweep: object
    c_sweep_summary: object
    y_true: dict
    info: dict
    files: dict
    seconds: float

    def cell(self, dataset, representation, normalization, kernel):
        """Return the CellResult of one table cell.

        Parameters
        ----------
        dataset : {"20ng", "webkb"}
        representation : {"tf", "tfidf"}
        normalization : {"l1", "l2"}
        kernel : {"lin", "ned", "ngd"}
            As the paper's tables name the kernels (``"lin"`` is linear).

        Returns
        -------
        cell : CellResult

        Raises
        ------
        KeyError
            When these results hold no such cell.
        """
        for cell in self.cells:
            if (cell.dataset, cell.representation, cell.normalization, cell.kernel) == (
                    dataset, representation, normalization, kernel):
                return cell
        raise KeyError(f"no cell ({dataset!r}, {representation!r}, {normalization!r}, "
                       f"{kernel!r}) in these results")

    @property
    def ranking_changed(self):
        """Whether any C-sweep ranking differs from the one at the reference C."""
        if self.c_sweep_summary is None:
            return None
        return any(row["ranking_changed"] for row in self.c_sweep_summary)


# ---------------------------------------------------------------------------
# Progress
# ---------------------------------------------------------------------------

class _Progress:
    """A tqdm bar over cells if tqdm is installed and a bar would be seen
    (stderr a terminal, or a notebook), else one printed line per cell."""

    def __init__(self, enabled, total, desc):
        self.enabled = enabled
        self.bar = None
        if not enabled or not progress_bars_shown():
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return
        self.bar = tqdm(total=total, desc=desc, unit="cell")

    def note(self, message):
        logger.info(message)
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.write(message)
        else:
            print(message, flush=True)

    def advance(self, message):
        self.note(message)
        if self.bar is not None:
            self.bar.update(1)

    def close(self):
        if self.bar is not None:
            self.bar.close()


@parameter_errors()
def _check_flags(**flags):
    for flag, value in flags.items():
        # Any truthy value used to switch these on: c_sweep="no" ran the sweep.
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{flag} must be True or False, got {value!r}")


def _note(enabled, message):
    logger.info(message)
    if enabled:
        print(message, flush=True)


# ---------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------

def _run_cells(dataset, splits, embeddings, cells, C, n_jobs, bar, target_names):
    """Train ``cells`` (representation, normalization, kernel) on every split;
    ``target_names``: the classes' names, by label."""
    results = []
    for representation, normalization, kernel in cells:
        outcomes, untrained = [], []
        for split, embed in zip(splits, embeddings):
            X_train, X_test = embed(representation, normalization)
            outcome = _fit_predict(kernel, C, X_train, split.y_train, X_test, n_jobs)
            accuracy = 100.0 * checked_accuracy(split.y_test, outcome.predictions)
            outcomes.append((accuracy, outcome))
            where = f" {split.name}" if len(splits) > 1 else ""
            untrained.append([target_names[label] for label in outcome.untrained])
            if outcome.untrained:
                # Counted in the tables as n_empty_train; the lost classes
                # were said nowhere (a review: NGD's accuracy fell to 75 %
                # on a split whose "project" pages were all blank).
                warnings.warn(
                    f"{dataset}{where} {representation.upper()} {normalization.upper()} "
                    f"{kernel.upper()}: every training document of class(es) "
                    f"{untrained[-1]} is without a word, so the model was trained "
                    f"without them and never predicts them", EmptyDocumentWarning,
                    stacklevel=_callers_stacklevel())
            empty = (f", {outcome.n_empty_test} empty test document(s) predicted from b*"
                     if outcome.n_empty_test and KERNELS[KERNEL_NAMES[kernel]][1] else "")
            bar.advance(f"{dataset}{where} {representation.upper()} {normalization.upper()} "
                        f"{kernel.upper()} C={_fmt_C(C)}: {accuracy:.2f}% "
                        f"({outcome.seconds:.1f} s{empty})")
        paper = PAPER_ACCURACY[dataset][representation, normalization, kernel] if C == 1 else None
        results.append(CellResult(
            dataset=dataset, representation=representation, normalization=normalization,
            kernel=kernel, C=float(C),
            accuracy=float(np.mean([a for a, _ in outcomes])),
            split_names=[s.name for s in splits],
            split_accuracy=[a for a, _ in outcomes],
            split_seconds=[o.seconds for _, o in outcomes],
            n_train=[s.X_train.shape[0] for s in splits],
            n_test=[s.X_test.shape[0] for s in splits],
            n_empty_train=[o.n_empty_train for _, o in outcomes],
            n_empty_test=[o.n_empty_test for _, o in outcomes],
            predictions=np.concatenate([o.predictions for _, o in outcomes]),
            paper=paper,
            untrained=untrained,
        ))
    return results


def _significance(dataset, cells, y_true):
    rows = []
    by_system = {(c.representation, c.normalization, c.kernel): c for c in cells}
    for representation in REPRESENTATIONS:
        for (norm_a, kernel_a), (norm_b, kernel_b) in COMPARISONS:
            a = by_system[representation, norm_a, kernel_a]
            b = by_system[representation, norm_b, kernel_b]
            sign = micro_sign_test(y_true, a.predictions, b.predictions)
            mcnemar = mcnemar_test(y_true, a.predictions, b.predictions)
            # The chi-square statistic is reported even where few discordant
            # documents make the P-value exact (mcnemar_method says which).
            chi2 = mcnemar_test(y_true, a.predictions, b.predictions, exact=False).statistic
            rows.append({
                "dataset": dataset, "representation": representation,
                "system_a": a.system, "system_b": b.system,
                "n": sign.n, "k": sign.k,
                "sign_z": sign.statistic, "sign_p": sign.pvalue, "sign_method": sign.method,
                "mcnemar_b": mcnemar.b, "mcnemar_c": mcnemar.c,
                "mcnemar_chi2": chi2, "mcnemar_p": mcnemar.pvalue,
                "mcnemar_method": mcnemar.method,
                "C": b.C,
                # The paper's Z values are for C = 1, as its accuracies.
                "paper_sign_z": (PAPER_SIGN_Z.get((dataset, representation, kernel_b))
                                 if b.C == 1 else None),
            })
    return rows


def _ranking(cells):
    """Systems by decreasing accuracy; exact ties share a rank. Returns (text, ranks)."""
    ordered = sorted(cells, key=lambda c: (-c.accuracy, c.system))
    ranks, text = {}, ""
    for i, cell in enumerate(ordered):
        if i and math.isclose(cell.accuracy, ordered[i - 1].accuracy, rel_tol=0, abs_tol=1e-9):
            ranks[cell.system] = ranks[ordered[i - 1].system]
            text += " = "
        else:
            ranks[cell.system] = i + 1
            text += " > " if i else ""
        text += cell.system
    return text, ranks


def _sweep_summary(dataset, sweep_cells, reference_C):
    rows = []
    for representation in REPRESENTATIONS:
        by_C = {}
        for cell in sweep_cells:
            if cell.dataset == dataset and cell.representation == representation:
                by_C.setdefault(cell.C, []).append(cell)
        rankings = {C: _ranking(cells) for C, cells in sorted(by_C.items())}
        # Both judgements use the ranks, so that the ranking's tie tolerance
        # holds for them too: equal means that differ by rounding are a tie,
        # and a tie listed in another order is not a change.
        reference = rankings[reference_C][1]
        not_best = []
        for value, (_, ranks) in rankings.items():
            ngd = next(c.system for c in by_C[value] if c.kernel == "ngd")
            if ranks[ngd] != 1 or sum(rank == 1 for rank in ranks.values()) > 1:
                not_best.append(value)
        rows.append({
            "dataset": dataset, "representation": representation,
            "reference_C": reference_C,
            "rankings": {C: text for C, (text, _) in rankings.items()},
            "ranks": {C: ranks for C, (_, ranks) in rankings.items()},
            "ranking_changed": any(ranks != reference for _, ranks in rankings.values()),
            "ngd_best_everywhere": not not_best,
            "ngd_not_best_at": not_best,
        })
    return rows


def _describe_sweep(row):
    """One sentence on a C-sweep summary row."""
    text = f"ranking changed across C: {'yes' if row['ranking_changed'] else 'no'}; "
    if row["ngd_best_everywhere"]:
        return text + "NGD-L1 strictly best at every C"
    if len(row["ngd_not_best_at"]) == len(row["rankings"]):
        return text + "NGD-L1 strictly best at no C"
    where = ", ".join(_fmt_C(c) for c in row["ngd_not_best_at"])
    return text + f"NGD-L1 strictly best at every C except {where}"


_LOCATORS = {"20ng": _locate_20newsgroups, "webkb": _locate_webkb}
_OUTPUT_NAMES = ("results.csv", "results_by_split.csv", "significance.csv", "c_sweep.csv",
                 "table.md", "accuracy.png")
# Which files of out_dir a run wrote, with their SHA-256: a later run removes
# an earlier run's output only when it is listed here and unchanged, never a
# file of the user's that happens to bear an output's name.
_MANIFEST_NAME = ".kgeo-outputs.json"


def _new_file(folder, prefix, suffix=""):
    """Create an empty file of a fresh name in ``folder`` and return its path.

    Exclusive creation (``O_EXCL``): a temporary or probe never takes over a
    file that is already there. The fixed names used before (with the
    process id) overwrote, then deleted, a user's file that bore one (a
    review). The mode is 0o666 less the umask, as a plain ``open`` gives, so
    the outputs renamed from these files get the permissions they would have
    had.
    """
    for _ in range(100):
        path = folder / f"{prefix}{secrets.token_hex(4)}{suffix}"
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free temporary name {prefix}*{suffix} in {str(folder)!r}")


@contextlib.contextmanager
def _removed_if_empty(created):
    """Remove the folders in ``created`` (outermost first) that are still
    empty when the block fails: a run stopped by an error or Ctrl-C after
    `_prepare_out_dir` made its output folder left the folder behind, empty
    (a review)."""
    try:
        yield
    except BaseException:
        for folder in reversed(created):
            try:
                folder.rmdir()
            except OSError:
                break  # not empty (or gone): neither it nor its parents are ours to remove
        raise


def _prepare_out_dir(out_dir, created=None):
    """Create ``out_dir`` and prove it takes the output files, before any training.

    The folders it creates, outermost first, are appended to ``created``
    as it creates them, when given (see `_removed_if_empty`)."""
    out_dir = _check_path(out_dir, "out_dir", "a folder")
    if out_dir.exists() and not out_dir.is_dir():
        raise NotADirectoryError(f"out_dir {str(out_dir)!r} exists and is not a directory")
    try:
        # One level at a time, each recorded as soon as it is made: a
        # failure part way (a name too long) and a path through ".." leave
        # nothing unrecorded, and a folder another process makes meanwhile
        # is not taken for ours (mkdir(parents=True) after a look at which
        # were missing did all three; a review).
        for folder in reversed((out_dir, *out_dir.parents)):
            if folder.is_dir():
                continue
            try:
                folder.mkdir()
            except FileExistsError:
                continue
            if created is not None:
                created.append(folder)
        _new_file(out_dir, ".kgeo-write-test-").unlink()
    except OSError as exc:
        raise OSError(f"out_dir {str(out_dir)!r} cannot be created or written: {exc}") from exc
    for name in _OUTPUT_NAMES + (_MANIFEST_NAME,):
        target = out_dir / name
        if target.is_dir():
            raise IsADirectoryError(
                f"out_dir {str(out_dir)!r} holds a folder named {name!r}, where an output "
                f"file goes")
        # An earlier run's file that is not writable would fail the run only
        # after all its training on Windows (os.replace refuses it there) or
        # if immutable. A file made read-only is also taken as one to keep,
        # as mv and rm ask before replacing one: refused everywhere.
        if (target.is_file() and not target.is_symlink()
                and not os.access(target, os.W_OK)):
            raise PermissionError(
                f"out_dir {str(out_dir)!r} holds {name!r}, an output of an earlier run "
                f"that cannot be replaced (it is not writable); make it writable, move it, "
                f"or choose another out_dir")
    return out_dir


def _foreign_outputs(out_dir, names):
    """Those of ``names`` in ``out_dir`` that replacing would lose: files
    (or symbolic links) not listed in the earlier run's manifest as written
    by kgeo, or changed since it wrote them."""
    earlier = _read_manifest(out_dir)
    foreign = []
    for name in names:
        target = out_dir / name
        if not (target.is_file() or target.is_symlink()):
            continue
        if (target.is_symlink() or name not in earlier
                or _digest_or_none(target) != earlier[name]):
            foreign.append(name)
    return foreign


def _digest_or_none(path):
    try:
        return _sha256_of(path)
    except OSError:  # unreadable: nothing vouches for it
        return None


def _refuse_foreign_outputs(out_dir, names, overwrite):
    """Raise ``FileExistsError`` rather than replace a file kgeo did not
    write, or one changed since, unless ``overwrite``."""
    if overwrite:
        return
    foreign = _foreign_outputs(out_dir, names)
    if foreign:
        listed = ", ".join(repr(name) for name in foreign)
        raise FileExistsError(
            f"out_dir {str(out_dir)!r} holds {listed}: output names of this run, but not "
            f"files an earlier kgeo run wrote there, unchanged since (as {_MANIFEST_NAME} "
            f"lists them); move them, choose another out_dir, or pass overwrite=True "
            f"(kgeo reproduce --overwrite) to replace them")


def _names_written(c_sweep, figure):
    """The output files a run with these options writes (accuracy.png only
    where matplotlib can be found)."""
    names = ["results.csv", "results_by_split.csv", "significance.csv", "table.md"]
    if c_sweep:
        names.append("c_sweep.csv")
    if figure and importlib.util.find_spec("matplotlib") is not None:
        names.append("accuracy.png")
    return names


def run_zhang2005(dataset, data_dir, out_dir=None, C=1.0, c_sweep=False, progress=True,
                  vocabulary="train", n_jobs=None, figure=True, overwrite=False):
    """Regenerate Tables 1-3 of Zhang, Chen & Lee (2005) and write them to ``out_dir``.

    Parameters
    ----------
    dataset : {"20ng", "webkb"} or sequence of them
        Which table(s): 20 Newsgroups (Table 2) and/or WebKB (Table 1).
    data_dir : str or os.PathLike
        Folder holding ``20news-bydate/20news-bydate.tar.gz`` and/or
        ``webkb/webkb-data.tar.gz`` (or their extracted folders).
    out_dir : str or os.PathLike or None, default=None
        Where to write ``results.csv``, ``results_by_split.csv``,
        ``table.md``, ``significance.csv``, ``accuracy.png`` (with
        matplotlib) and, with ``c_sweep``, ``c_sweep.csv``; created if
        missing. None writes nothing. Files of these names that an earlier
        kgeo run wrote, unchanged since, are replaced; any other file of
        these names stops the run before its training (see ``overwrite``).
        An earlier run's ``c_sweep.csv`` or ``accuracy.png`` that this run
        does not write is removed if unchanged since kgeo wrote it (see
        `write_outputs`), left with a warning otherwise.
    C : float, default=1.0
        Box constraint of every SVM (the paper: LIBSVM's default, 1). The
        paper's values are shown beside ours only when C is 1.
    c_sweep : bool, default=False
        Also train NGD-L1, LIN-L2 and NED-L2 for C in ``C_SWEEP_VALUES``
        (0.001 ... 1000) and report whether their ranking changes.
    progress : bool, default=True
        Print one line per cell, with its accuracy and time, under a
        progress bar over cells where tqdm is installed and stderr is a
        terminal (or a notebook runs it).
    vocabulary : {"train", "all"}, default="train"
        See :func:`load_zhang2005_splits`.
    n_jobs : int or None, default=None
        Threads of each SVM, as `SVM`'s ``n_jobs`` (None:
        ``OMP_NUM_THREADS`` when it is set, else all CPUs).
    figure : bool, default=True
        Draw ``accuracy.png`` when matplotlib is installed.
    overwrite : bool, default=False
        Replace files of the output names in ``out_dir`` that kgeo did not
        write, or that were changed since (``.kgeo-outputs.json`` lists
        what each run wrote, with its SHA-256). False: such a file raises
        ``FileExistsError`` before the first SVM is trained.

    Returns
    -------
    results : Zhang2005Results

    Raises
    ------
    InvalidParameterError
        A ``ValueError`` and a ``TypeError`` (as from ``SVM``): for an
        unknown dataset or vocabulary, a C that is not a positive normal
        float, ``c_sweep``, ``progress``, ``figure`` or ``overwrite`` not a
        bool, a bad ``n_jobs``, or a ``data_dir`` or ``out_dir`` that is no
        path (or an empty one, or one holding a null character).
    DatasetNotFoundError
        If ``data_dir`` does not exist or lacks a requested corpus (the
        message names the path).
    FileExistsError
        If ``out_dir`` holds a file of an output name that kgeo did not
        write, or that was changed since, and ``overwrite`` is False.
    OSError
        If ``out_dir`` cannot be created or written.

    Every argument and the output folder are checked, and every corpus is
    loaded and split, before the first SVM is trained, so that a bad input
    never fails a run after its work is done. A run that fails (Ctrl-C
    included) removes the folders it created for ``out_dir`` while they
    are still empty.
    """
    started = time.perf_counter()
    datasets = _check_datasets(dataset)
    C = _check_C(C)
    _check_vocabulary(vocabulary)
    _check_flags(c_sweep=c_sweep, progress=progress, figure=figure, overwrite=overwrite)
    data_dir = _check_data_dir(data_dir)
    resolve_n_jobs(n_jobs)
    # Everything that could fail after the training is checked before it:
    # the corpora are there, and the output folder takes files.
    for name in datasets:
        _LOCATORS[name](data_dir)
    created = []
    with _removed_if_empty(created):
        if out_dir is not None:
            out_dir = _prepare_out_dir(out_dir, created)
            _refuse_foreign_outputs(out_dir, _names_written(c_sweep, figure), overwrite)
        return _train_and_write(datasets, data_dir, out_dir, C, c_sweep, progress,
                                vocabulary, n_jobs, figure, overwrite, started)


def _train_and_write(datasets, data_dir, out_dir, C, c_sweep, progress, vocabulary, n_jobs,
                     figure, overwrite, started):
    """run_zhang2005's work once its arguments are checked."""
    cells, significance, y_true, info = [], [], {}, {}
    sweep_cells = [] if c_sweep else None
    sweep_summary = [] if c_sweep else None
    # Every corpus is loaded and split before the first SVM: a damaged second
    # archive must not fail the run after the first one's cells are trained.
    loaded = {}
    for name in datasets:
        _note(progress, f"{name}: loading and vectorising ({RAINBOW_OPTIONS[name]})")
        loaded[name] = load_zhang2005_splits(name, data_dir, vocabulary=vocabulary)
    for name in datasets:
        splits, dataset_info = loaded.pop(name)
        dataset_info["splits"] = [
            {"name": s.name, "n_train": s.X_train.shape[0], "n_test": s.X_test.shape[0],
             "n_words": s.n_words} for s in splits]
        info[name] = dataset_info
        y_true[name] = np.concatenate([s.y_test for s in splits])
        _note(progress, f"{name}: {dataset_info['n_documents']} documents, "
                        + ", ".join(f"{s.name}: {s.X_train.shape[0]} train / "
                                    f"{s.X_test.shape[0]} test / {s.n_words} words"
                                    for s in splits)
                        + f" ({dataset_info['seconds']:.1f} s)")
        embeddings = [_Embeddings(s) for s in splits]

        sweep_Cs = [c for c in C_SWEEP_VALUES if c != C] if c_sweep else []
        total = len(splits) * (len(CELLS) + len(sweep_Cs) * len(REPRESENTATIONS)
                               * len(SWEEP_COLUMNS))
        bar = _Progress(progress, total, name)
        try:
            names = dataset_info["target_names"]
            table = _run_cells(name, splits, embeddings, CELLS, C, n_jobs, bar, names)
            cells.extend(table)
            significance.extend(_significance(name, table, y_true[name]))
            if c_sweep:
                swept = [c for c in table if (c.normalization, c.kernel) in SWEEP_COLUMNS]
                for value in sweep_Cs:
                    swept.extend(_run_cells(
                        name, splits, embeddings,
                        [(r, n, k) for r in REPRESENTATIONS for n, k in SWEEP_COLUMNS],
                        value, n_jobs, bar, names))
                swept.sort(key=lambda c: (c.representation, c.C))
                sweep_cells.extend(swept)
                sweep_summary.extend(_sweep_summary(name, swept, float(C)))
        finally:
            bar.close()

    results = Zhang2005Results(
        datasets=datasets, C=float(C), vocabulary=vocabulary, cells=cells,
        significance=significance, c_sweep=sweep_cells, c_sweep_summary=sweep_summary,
        y_true=y_true, info=info, files={}, seconds=0.0)
    results.seconds = time.perf_counter() - started
    if out_dir is not None:
        results.files = write_outputs(results, out_dir, figure=figure, progress=progress,
                                      overwrite=overwrite)
    results.seconds = time.perf_counter() - started
    _note(progress, _summary_text(results))
    return results


# ---------------------------------------------------------------------------
# Output files
# ---------------------------------------------------------------------------

def _write_csv(path, columns, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)


def _fmt_C(C):
    """C as short as it reads back exactly: 1, 0.001, 1.0000001 (``:g`` wrote
    1.0000001 as 1, beside the sweep's own C = 1)."""
    short = f"{C:g}"
    return short if float(short) == C else repr(float(C))


def _fmt_p(p):
    return f"{p:.3g}" if p >= 1e-3 else f"{p:.2e}"


def _exact(method):
    return " (exact)" if method == "binomial" else ""


def _fmt_optional(value, spec):
    return "" if value is None else format(value, spec)


def write_outputs(results, out_dir, figure=True, progress=False, overwrite=False):
    """Write the CSV files, ``table.md`` and (with matplotlib) ``accuracy.png``.

    The files are written under temporary names and renamed into place once
    all of them are written, so that a failure leaves the folder as it was.
    A file of an output name is replaced only if an earlier run's list of
    what it wrote (``.kgeo-outputs.json``, with each file's SHA-256) says
    kgeo wrote it and it has not changed since, or with ``overwrite=True``.
    An output of an earlier run in ``out_dir`` that this run does not write
    (``c_sweep.csv``, ``accuracy.png``) is removed if the earlier run's list
    of what it wrote (``.kgeo-outputs.json``, with each file's SHA-256) says
    kgeo wrote it and it has not changed since; a file of that name that
    kgeo did not write, or that was changed, is left as it is, with a
    warning. The list of what this run wrote replaces the earlier one. No
    other file is touched.

    Parameters
    ----------
    results : Zhang2005Results
        What :func:`run_zhang2005` returned.
    out_dir : str or os.PathLike
        The folder, created if missing (as ``run_zhang2005`` does).
    figure : bool, default=True
        Also plot ``accuracy.png`` (with matplotlib, when installed).
    progress : bool, default=False
        Print a line for a figure skipped (matplotlib not installed) and for
        each output of an earlier run removed.
    overwrite : bool, default=False
        Also replace files of the output names that kgeo did not write, or
        that were changed since.

    Returns
    -------
    files : dict of str to pathlib.Path

    Raises
    ------
    FileExistsError
        If ``out_dir`` holds a file this call would replace that kgeo did
        not write, or that was changed since, and ``overwrite`` is False:
        nothing is written then.
    ValueError
        If ``results`` holds a C sweep without its summary, or a summary
        without its sweep (a result built by hand).
    """
    _check_results(results)
    _check_sweep_summary(results)
    _check_flags(figure=figure, progress=progress, overwrite=overwrite)
    created = []
    with _removed_if_empty(created):  # a failed call leaves no empty folder of its making
        return _write_outputs(results, _prepare_out_dir(out_dir, created), figure, progress,
                              overwrite)


def _write_outputs(results, out_dir, figure, progress, overwrite):
    """write_outputs' work once its arguments are checked and out_dir made."""
    files = {}
    # Every file is written beside its final name first and renamed into
    # place only when all are written: a failure leaves the folder as it was,
    # never this run's CSV files beside an earlier run's table.
    staged = {}

    def stage(path):
        # The suffix stays last: matplotlib takes the format from it.
        staged[path] = _new_file(path.parent, f".{path.stem}.kgeo-", f".tmp{path.suffix}")
        return staged[path]

    try:
        _stage_outputs(results, out_dir, files, stage, figure, progress)
        # Checked again here, where the names written are known: a file put
        # there during the training is not lost either.
        _refuse_foreign_outputs(out_dir, [path.name for path in files.values()], overwrite)
        for path in files.values():
            os.replace(staged[path], path)
    finally:
        for temporary in staged.values():  # none left after the renames
            temporary.unlink(missing_ok=True)
    # An output of an earlier run into the same folder that this run did not
    # write (c_sweep.csv without a sweep, accuracy.png without a figure) would
    # sit beside the new files as if it belonged to them.
    written = {path.name for path in files.values()}
    earlier = _read_manifest(out_dir)
    for name in _OUTPUT_NAMES:
        stale = out_dir / name
        if name in written or not (stale.is_file() or stale.is_symlink()):
            continue
        if (not stale.is_symlink() and name in earlier
                and _digest_or_none(stale) == earlier[name]):
            stale.unlink()
            _note(progress, f"removed {stale}, an output of an earlier run that this run "
                            f"does not write")
        else:
            warnings.warn(
                f"out_dir {str(out_dir)!r} holds {name!r}, which this run does not write and "
                f"which is not an unchanged output of an earlier kgeo run: left as it is, "
                f"though it does not belong to this run's results", UserWarning,
                stacklevel=_callers_stacklevel())
    _write_manifest(out_dir, {path.name: _sha256_of(path) for path in files.values()})
    return files


def _sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _read_manifest(out_dir):
    """The earlier run's {name: sha256}, or {} if there is none or it is unreadable."""
    try:
        listed = json.loads((out_dir / _MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: absurdly deep JSON
        return {}
    if not isinstance(listed, dict):
        return {}
    return {name: digest for name, digest in listed.items()
            if name in _OUTPUT_NAMES and isinstance(digest, str)}


def _write_manifest(out_dir, digests):
    path = out_dir / _MANIFEST_NAME
    temporary = _new_file(out_dir, f"{_MANIFEST_NAME}.", ".tmp")
    try:
        temporary.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n",
                             encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _stage_outputs(results, out_dir, files, stage, figure, progress):
    """Write each output to ``stage(its final path)``; fill ``files``."""
    files["results"] = out_dir / "results.csv"
    _write_csv(stage(files["results"]), RESULTS_COLUMNS, [
        (c.dataset, c.representation, c.normalization, c.kernel, f"{c.accuracy:.2f}",
         f"{c.seconds:.2f}", sum(c.n_test), sum(c.n_empty_test), _fmt_C(c.C))
        for c in results.cells])
    files["results_by_split"] = out_dir / "results_by_split.csv"
    rows = []
    # The sweep's cells at the main C are the table's own cells: list them once.
    extra = [c for c in results.c_sweep or [] if c.C != results.C]
    for c in results.cells + extra:
        for i, split in enumerate(c.split_names):
            rows.append((c.dataset, split, c.representation, c.normalization, c.kernel,
                         _fmt_C(c.C), f"{c.split_accuracy[i]:.2f}", f"{c.split_seconds[i]:.2f}",
                         c.n_train[i], c.n_test[i], c.n_empty_train[i], c.n_empty_test[i]))
    _write_csv(stage(files["results_by_split"]), SPLIT_COLUMNS, rows)
    files["significance"] = out_dir / "significance.csv"
    _write_csv(stage(files["significance"]), SIGNIFICANCE_COLUMNS, [
        (r["dataset"], r["representation"], r["system_a"], r["system_b"], r["n"], r["k"],
         f"{r['sign_z']:.3f}", f"{r['sign_p']:.4g}", r["sign_method"], r["mcnemar_b"],
         r["mcnemar_c"], f"{r['mcnemar_chi2']:.3f}", f"{r['mcnemar_p']:.4g}",
         r["mcnemar_method"], _fmt_optional(r["paper_sign_z"], ".2f"), _fmt_C(r["C"]))
        for r in results.significance])
    if results.c_sweep is not None:
        files["c_sweep"] = out_dir / "c_sweep.csv"
        rank_of = {}
        for row in results.c_sweep_summary:
            for C, ranks in row["ranks"].items():
                for system, rank in ranks.items():
                    rank_of[row["dataset"], row["representation"], C, system] = rank
        _write_csv(stage(files["c_sweep"]), SWEEP_COLUMNS_CSV, [
            (c.dataset, c.representation, _fmt_C(c.C), c.normalization, c.kernel,
             f"{c.accuracy:.2f}", f"{c.seconds:.2f}",
             rank_of[c.dataset, c.representation, c.C, c.system]) for c in results.c_sweep])
    files["table"] = out_dir / "table.md"
    stage(files["table"]).write_text(markdown_report(results), encoding="utf-8")
    if figure:
        png = out_dir / "accuracy.png"
        if plot_accuracy(results, stage(png)):
            files["figure"] = png
        else:
            _note(progress, f"matplotlib is not installed: skipped {png} "
                            f"(pip install 'kgeo[plot]' to draw it)")


# How the tables name the representations.
_REPRESENTATION_NAMES = {"tf": "TF", "tfidf": "TF-IDF"}


def _label(representation, normalization, kernel):
    rep = _REPRESENTATION_NAMES[representation]
    return f"{rep} {normalization.upper()} {kernel.upper()}"


def _check_results(results):
    if not isinstance(results, Zhang2005Results):
        raise TypeError(f"results must be the Zhang2005Results run_zhang2005 returns, got "
                        f"{type(results).__name__}")


def _check_sweep_summary(results):
    """write_outputs' c_sweep.csv ranks the sweep's cells by the summary: a
    hand-built result must hold both or neither."""
    if (results.c_sweep is None) != (results.c_sweep_summary is None):
        raise ValueError(f"results.c_sweep and results.c_sweep_summary must both be set (a "
                         f"run with c_sweep=True) or both None, got "
                         f"{'None' if results.c_sweep is None else 'cells'} and "
                         f"{'None' if results.c_sweep_summary is None else 'a summary'}")


def markdown_report(results):
    """The tables of the run as Markdown, ours beside the paper's."""
    _check_results(results)
    lines = ["# Zhang, Chen & Lee (2005) reproduced with kgeo", "",
             f"kgeo {__version__}; C = {_fmt_C(results.C)}; one-vs-one; vocabulary learnt from "
             f"{'the training documents of each split' if results.vocabulary == 'train' else 'all documents'}; "
             f"IDF = log(m / df) over the training documents. Accuracy in percent; "
             f"difference = ours - paper.", ""]
    if results.C != 1:
        lines += ["The paper's values are for C = 1 and are not shown.", ""]
    for dataset in results.datasets:
        info = results.info[dataset]
        cells = [c for c in results.cells if c.dataset == dataset]
        lines += [f"## {_DATASET_TITLES[dataset]}", "",
                  f"Rainbow options: `{info['rainbow']}`.", ""]
        for s in info["splits"]:
            lines.append(f"- split {s['name']}: {s['n_train']} training / {s['n_test']} test "
                         f"documents, {s['n_words']} words")
        lines += ["", "| representation | normalization | kernel | ours | paper | difference | seconds |",
                  "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
        for c in cells:
            paper = "" if c.paper is None else f"{c.paper:.2f}"
            diff = "" if c.paper is None else f"{c.accuracy - c.paper:+.2f}"
            rep = _REPRESENTATION_NAMES[c.representation]
            lines.append(f"| {rep} | {c.normalization.upper()} | {c.kernel.upper()} | "
                         f"{c.accuracy:.2f} | {paper} | {diff} | {c.seconds:.1f} |")
        if len(cells[0].split_names) > 1:
            lines += ["", "Accuracy of each held-out university (the table shows their mean):", "",
                      "| cell | " + " | ".join(cells[0].split_names) + " |",
                      "| --- |" + " ---: |" * len(cells[0].split_names)]
            for c in cells:
                lines.append(f"| {_label(c.representation, c.normalization, c.kernel)} | "
                             + " | ".join(f"{a:.2f}" for a in c.split_accuracy) + " |")
        # Per cell (TF-IDF can empty a document TF keeps: words in every
        # training document weigh 0), and over the splits a document is in.
        ngd = [c for c in cells if c.kernel == "ngd"]
        if any(sum(c.n_empty_train) + sum(c.n_empty_test) for c in ngd):
            n_splits = len(cells[0].split_names)
            over = "" if n_splits == 1 else f", summed over the {n_splits} splits"
            counts = "; ".join(
                f"{_REPRESENTATION_NAMES[c.representation]} {sum(c.n_empty_train)} "
                f"training and {sum(c.n_empty_test)} test" for c in ngd)
            lines += ["", f"Documents without a word in the NGD cells{over}: {counts}. NGD "
                          f"leaves the training ones out and predicts the test ones from the "
                          f"intercepts (they count in the accuracy)."]
            lost = [f"{_REPRESENTATION_NAMES[c.representation]}"
                    + (f", {name}" if n_splits > 1 else "") + f": {', '.join(classes)}"
                    for c in ngd for name, classes in zip(c.split_names, c.untrained) if classes]
            if lost:
                lines[-1] += (f" Classes that lost every training document, so that NGD never "
                              f"predicts them: {'; '.join(lost)}.")
        lines += ["", "### Significance (Table 3): NGD (L1) against LIN and NED (L2)", "",
                  "Micro sign test (one-sided) and McNemar's test (continuity-corrected), "
                  "on the test documents of all splits pooled. n: documents exactly one "
                  "system classifies correctly; k: those NGD gets right; (exact): binomial "
                  "P-value, used when n <= 12 (sign test) or n < 25 (McNemar).", "",
                  "| representation | comparison | n | k | Z | Z (paper) | P (sign) | "
                  "chi2 (McNemar) | P (McNemar) | both P < 0.005 |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for r in results.significance:
            if r["dataset"] != dataset:
                continue
            rep = _REPRESENTATION_NAMES[r["representation"]]
            both = r["sign_p"] < SIGNIFICANCE_LEVEL and r["mcnemar_p"] < SIGNIFICANCE_LEVEL
            lines.append(
                f"| {rep} | {r['system_a'].upper()} vs {r['system_b'].upper()} | {r['n']} | "
                f"{r['k']} | {r['sign_z']:.2f} | {_fmt_optional(r['paper_sign_z'], '.2f')} | "
                f"{_fmt_p(r['sign_p'])}{_exact(r['sign_method'])} | {r['mcnemar_chi2']:.2f} | "
                f"{_fmt_p(r['mcnemar_p'])}{_exact(r['mcnemar_method'])} | "
                f"{'yes' if both else 'no'} |")
        if results.c_sweep_summary:
            lines += ["", "### C sweep (footnote 3)", ""]
            for row in results.c_sweep_summary:
                if row["dataset"] != dataset:
                    continue
                rep = _REPRESENTATION_NAMES[row["representation"]]
                swept = [c for c in results.c_sweep
                         if c.dataset == dataset and c.representation == row["representation"]]
                Cs = sorted({c.C for c in swept})
                lines += [f"{rep}: {_describe_sweep(row)}.", "",
                          "| C | NGD-L1 | LIN-L2 | NED-L2 | ranking |",
                          "| ---: | ---: | ---: | ---: | --- |"]
                for value in Cs:
                    acc = {c.system: c.accuracy for c in swept if c.C == value}
                    lines.append(f"| {_fmt_C(value)} | {acc['ngd-l1']:.2f} | {acc['lin-l2']:.2f} | "
                                 f"{acc['ned-l2']:.2f} | {row['rankings'][value]} |")
                lines.append("")
        lines.append("")
    lines.append(f"Total run time: {results.seconds:.0f} s.")
    return "\n".join(lines) + "\n"


def plot_accuracy(results, path):
    """Draw the cells as grouped bars with the paper's values marked.

    Returns
    -------
    drawn : bool
        False when matplotlib is not installed (nothing is written).
    """
    _check_results(results)
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError:
        return False
    _accuracy_figure(results).savefig(path, dpi=120)
    return True


def _accuracy_figure(results):
    """The figure :func:`plot_accuracy` saves, one axes per dataset."""
    from matplotlib.figure import Figure

    n = len(results.datasets)
    # matplotlib.figure.Figure needs no pyplot and leaves the global backend alone.
    fig = Figure(figsize=(10, 3.6 * n), layout="constrained")
    axes = fig.subplots(n, 1, squeeze=False)[:, 0]
    width = 0.38
    colours = {"tf": "#4c72b0", "tfidf": "#dd8452"}
    for ax, dataset in zip(axes, results.datasets):
        for r, representation in enumerate(REPRESENTATIONS):
            cells = [c for c in results.cells
                     if c.dataset == dataset and c.representation == representation]
            x = np.arange(len(cells)) + (r - 0.5) * width
            ax.bar(x, [c.accuracy for c in cells], width, color=colours[representation],
                   label=f"{'TF' if representation == 'tf' else 'TF-IDF'} (kgeo)")
            paper = [c.paper for c in cells]
            if all(p is not None for p in paper):
                ax.scatter(x, paper, marker="_", s=300, linewidths=2.5, color="black",
                           zorder=3, label="paper" if r == 0 else None)
        ax.set_xticks(np.arange(len(COLUMNS)))
        ax.set_xticklabels([f"{n.upper()} {k.upper()}" for n, k in COLUMNS])
        ax.set_ylabel("accuracy (%)")
        ax.set_ylim(0, 100)
        ax.set_title(f"{_DATASET_TITLES[dataset]}, C = {_fmt_C(results.C)}")
        ax.legend(loc="upper left", ncols=3, fontsize="small")
        ax.grid(axis="y", alpha=0.3)
    return fig


def _summary_text(results):
    lines = []
    for dataset in results.datasets:
        lines.append(f"{_DATASET_TITLES[dataset]}: ours / paper (difference)")
        for c in results.cells:
            if c.dataset != dataset:
                continue
            paper = "" if c.paper is None else f" / {c.paper:.2f} ({c.accuracy - c.paper:+.2f})"
            lines.append(f"  {_label(c.representation, c.normalization, c.kernel):<18} "
                         f"{c.accuracy:6.2f}{paper}")
        for r in results.significance:
            if r["dataset"] == dataset:
                lines.append(f"  {r['representation'].upper():<6} {r['system_a'].upper()} vs "
                             f"{r['system_b'].upper()}: Z = {r['sign_z']:.2f} (p = "
                             f"{_fmt_p(r['sign_p'])}), McNemar chi2 = {r['mcnemar_chi2']:.2f} "
                             f"(p = {_fmt_p(r['mcnemar_p'])})")
        for row in results.c_sweep_summary or []:
            if row["dataset"] == dataset:
                lines.append(f"  C sweep {row['representation'].upper()}: {_describe_sweep(row)}")
    if results.files:
        lines.append(f"wrote {', '.join(str(p) for p in results.files.values())}")
    lines.append(f"total {results.seconds:.0f} s")
    return "\n".join(lines)
