"""Tests for kgeo.experiments and ``kgeo reproduce``: the Zhang et al. (2005) runner.

The runner is exercised end to end on tiny corpora the tests write to tmp_path:
a 20 Newsgroups archive in the bydate tar layout and a WebKB folder tree
(``webkb/<class>/<university>/<page>``, HTTP header plus HTML). One test on the
real 20 Newsgroups (skipped when ../shared/data, or $KGEO_DATA, is absent)
checks a cheap cell against the paper.
"""

import argparse
import csv
import dataclasses
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import kgeo
from kgeo import SVM, MultinomialEmbedding
from kgeo.__main__ import main
from kgeo.datasets import DatasetNotFoundError, load_20newsgroups, load_webkb
from kgeo.experiments import (
    C_SWEEP_VALUES,
    CELLS,
    PAPER_ACCURACY,
    PREPROCESSING,
    RESULTS_COLUMNS,
    SIGNIFICANCE_COLUMNS,
    CellResult,
    Split,
    evaluate_cell,
    load_zhang2005_splits,
    markdown_report,
    predict_from_intercepts,
    run_zhang2005,
    write_outputs,
)
from kgeo.significance import mcnemar_test, micro_sign_test
from kgeo.text import RainbowVectorizer

REPO_ROOT = Path(__file__).resolve().parents[1]
REQUIRED_COLUMNS = ["dataset", "representation", "normalization", "kernel", "accuracy"]

# Topic words: letters only, not in the SMART stop list, long enough to be kept.
TOPICS = {
    "alt.atheism": ["deity", "faith", "scripture", "atheist", "morality", "belief"],
    "rec.autos": ["engine", "sedan", "gearbox", "mileage", "tyres", "clutch"],
    "sci.space": ["orbit", "rocket", "lunar", "shuttle", "payload", "telescope"],
}
FILLER = ["message", "reply", "thanks", "question", "posting", "people"]
WEBKB_TOPICS = {
    "student": ["homework", "advisor", "thesis", "resume", "hobbies", "graduate"],
    "faculty": ["professor", "publications", "tenure", "grants", "teaching", "research"],
    "course": ["syllabus", "lecture", "assignments", "exam", "midterm", "grading"],
    "project": ["prototype", "funding", "members", "architecture", "release", "sponsors"],
}
UNIVERSITIES = ["cornell", "misc", "texas", "washington", "wisconsin"]


def _words(rng, topic_words, n=25, topic_share=0.6):
    pool = np.where(rng.random(n) < topic_share, rng.choice(topic_words, n), rng.choice(FILLER, n))
    return " ".join(pool.tolist())


def make_20ng_tar(path, n_train=10, n_test=6, seed=0, extra_train=(), extra_test=()):
    """A gzip tar with 20news-bydate-{train,test}/<group>/<id> members;
    ``extra_train`` and ``extra_test`` add training and test messages
    (group, body) without a header."""
    rng = np.random.default_rng(seed)
    ident = 1000
    with tarfile.open(path, "w:gz") as tar:
        def add(split, group, text):
            nonlocal ident
            ident += 1
            data = text.encode("latin-1")
            info = tarfile.TarInfo(f"20news-bydate-{split}/{group}/{ident}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for split, n in (("train", n_train), ("test", n_test)):
            for group, topic in TOPICS.items():
                for _ in range(n):
                    add(split, group, f"From: someone{ident + 1}@example.edu\nSubject: about "
                                      f"{topic[0]}\nOrganization: example\nLines: 3\n\n"
                                      f"{_words(rng, topic)}\n")
        for group, body in extra_train:
            add("train", group, body)
        for group, body in extra_test:
            add("test", group, body)
    return path


def make_webkb_tree(root, per_university=3, seed=0, empty_pages=(), extra_pages=()):
    """webkb/<class>/<university>/<page> pages with an HTTP header and HTML.

    ``empty_pages`` lists (class, university) pairs that get one more page
    whose body holds no text outside tags: it has no word after
    ``--skip-header --skip-html``. ``extra_pages`` adds (class, university,
    text) pages.
    """
    rng = np.random.default_rng(seed)
    for cls, topic in WEBKB_TOPICS.items():
        for univ in UNIVERSITIES:
            folder = root / "webkb" / cls / univ
            folder.mkdir(parents=True)
            for i in range(per_university):
                body = _words(rng, topic, n=30)
                page = (f"MIME-Version: 1.0\r\nServer: CERN/3.0\r\nContent-Type: text/html\r\n"
                        f"\r\n<html><head><title>{cls} page</title></head>\n<body>\n"
                        f"<h1>{topic[i % len(topic)]}</h1> <p>{body} room {4100 + i}</p>\n"
                        f"<a href=\"http://www.cs.{univ}.edu/\">home</a></body></html>\n")
                name = f"http:^^www.cs.{univ}.edu^~{cls}{i}^index.html"
                (folder / name).write_bytes(page.encode("latin-1"))
            if (cls, univ) in empty_pages:
                page = ("Content-Type: text/html\r\n\r\n<html><body><img src=\"a.gif\">"
                        "</body></html>\n")
                (folder / "http:^^www.cs.empty.edu^blank.html").write_bytes(page.encode())
    for k, (cls, univ, text) in enumerate(extra_pages):
        page = f"Content-Type: text/html\r\n\r\n<html><body><p>{text}</p></body></html>\n"
        (root / "webkb" / cls / univ / f"http:^^www.cs.extra.edu^{k}.html").write_bytes(
            page.encode())
    return root


@pytest.fixture
def terminal(monkeypatch):
    """stderr taken for a terminal: bars are drawn (captured, it is not one)."""
    monkeypatch.setattr("kgeo.experiments.progress_bars_shown", lambda: True)


@pytest.fixture
def ng_data(tmp_path):
    data = tmp_path / "data"
    (data / "20news-bydate").mkdir(parents=True)
    make_20ng_tar(data / "20news-bydate" / "20news-bydate.tar.gz")
    return data


@pytest.fixture
def webkb_data(tmp_path):
    data = tmp_path / "data"
    make_webkb_tree(data, empty_pages={("course", "texas"), ("student", "misc")})
    return data


def _read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], [dict(zip(rows[0], row)) for row in rows[1:]]


# ---------------------------------------------------------------------------
# Data and splits
# ---------------------------------------------------------------------------

def test_20ng_split_uses_the_paper_preprocessing(ng_data):
    splits, info = load_zhang2005_splits("20ng", ng_data)
    assert [s.name for s in splits] == ["bydate"]
    split = splits[0]
    assert split.X_train.shape[0] == 30 and split.X_test.shape[0] == 18
    assert info["n_classes"] == 3 and info["n_documents"] == 48
    assert "prune-vocab-by-doc-count=2" in info["rainbow"]
    # Headers are kept (the paper gives no --skip-header for 20NG) and the SMART
    # stop list applies ("thanks" is a stop word, "organization" is not).
    vec = RainbowVectorizer(**PREPROCESSING["20ng"])
    vec.fit(load_20newsgroups(ng_data, "train").data)
    assert "organization" in vec.vocabulary_ and "subject" in vec.vocabulary_
    assert "thanks" not in vec.vocabulary_
    assert split.X_train.shape[1] == split.X_test.shape[1] == split.n_words == len(vec.vocabulary_)
    assert sp.isspmatrix_csr(split.X_train)


def test_webkb_four_leave_one_university_out_splits(webkb_data):
    splits, info = load_zhang2005_splits("webkb", webkb_data)
    assert [s.name for s in splits] == ["cornell", "texas", "washington", "wisconsin"]
    n_pages = 4 * 5 * 3 + 2
    assert info["n_documents"] == n_pages
    for s in splits:
        # One university held out: 4 classes x 3 pages (+ texas' empty course page).
        expected_test = 12 + (1 if s.name == "texas" else 0)
        assert s.X_test.shape[0] == expected_test
        assert s.X_train.shape[0] == n_pages - expected_test
        assert sorted(set(s.y_test.tolist())) == [0, 1, 2, 3]
    # Digits are tagged (--lex-pipe-command=tagdigits), HTML and headers skipped,
    # no stop list: the same vectoriser on the corpus shows the vocabulary used.
    vec = RainbowVectorizer(**PREPROCESSING["webkb"]).fit(load_webkb(webkb_data).data)
    assert "<DIGITS4>" in vec.vocabulary_ and "room" in vec.vocabulary_
    assert "html" not in vec.vocabulary_ and "server" not in vec.vocabulary_
    assert "thanks" in vec.vocabulary_  # a SMART stop word, kept by --no-stoplist


def test_vocabulary_all_shares_one_vocabulary(webkb_data):
    train_splits, _ = load_zhang2005_splits("webkb", webkb_data, vocabulary="train")
    all_splits, _ = load_zhang2005_splits("webkb", webkb_data, vocabulary="all")
    assert len({s.n_words for s in all_splits}) == 1
    assert all(a.n_words >= t.n_words for a, t in zip(all_splits, train_splits))
    with pytest.raises(ValueError, match="vocabulary must be one of"):
        load_zhang2005_splits("webkb", webkb_data, vocabulary="test")


# ---------------------------------------------------------------------------
# Empty documents
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("n_classes", [2, 4])
def test_predict_from_intercepts_matches_a_zero_row(random_count_csr, rng, n_classes):
    # The linear kernel gives 0 against every support vector for an all-zero
    # row: SVM.predict then decides on the intercepts alone, as the helper does.
    X = random_count_csr(60, 12)
    y = rng.integers(0, n_classes, size=60)
    model = SVM(kernel="linear", C=0.5).fit(X, y)
    zero = sp.csr_matrix((3, 12))
    np.testing.assert_array_equal(predict_from_intercepts(model, 3), model.predict(zero))


def test_predict_from_intercepts_bad_input():
    import kgeo

    with pytest.raises(TypeError, match="model must be a fitted kgeo.SVM, got NoneType"):
        predict_from_intercepts(None, 2)
    with pytest.raises(kgeo.NotFittedError, match="not fitted yet"):
        predict_from_intercepts(SVM(), 2)
    model = SVM(kernel="linear").fit([[1, 0], [0, 1], [1, 1]], [0, 1, 2])
    for n in (-1, 2.5, "3", None, (2, 2), True):
        with pytest.raises(ValueError, match=r"n_samples must be an integer >= 0, got "):
            predict_from_intercepts(model, n)
    assert predict_from_intercepts(model, 0).shape == (0,)


_SPLIT_OF_TWO = Split("s", sp.csr_matrix(np.eye(2)), np.array([0, 1]),
                      sp.csr_matrix(np.eye(2)), np.array([0, 1]))


@pytest.mark.parametrize("call, match", [
    (lambda tmp: run_zhang2005("reuters", tmp, tmp), "dataset must be one of"),
    (lambda tmp: run_zhang2005([], tmp, tmp), "dataset must name at least one"),
    (lambda tmp: run_zhang2005(5, tmp, tmp), "dataset must be a name among"),
    (lambda tmp: run_zhang2005("20ng", tmp, tmp, C=-1.0), "C must be finite and > 0"),
    (lambda tmp: run_zhang2005("20ng", tmp, tmp, C=1e-320), "C must be a normal float64"),
    (lambda tmp: run_zhang2005("20ng", tmp, tmp, vocabulary="test"), "vocabulary must be"),
    (lambda tmp: run_zhang2005("20ng", tmp, tmp, c_sweep="no"), "c_sweep must be True"),
    (lambda tmp: run_zhang2005("20ng", tmp, tmp, n_jobs=0), "n_jobs"),
    (lambda tmp: run_zhang2005("20ng", 5, tmp), "data_dir must be a path"),
    (lambda tmp: run_zhang2005("20ng", "", tmp), "data_dir must be a path"),
    (lambda tmp: load_zhang2005_splits("reuters", tmp), "dataset must be one of"),
    (lambda tmp: load_zhang2005_splits("20ng", tmp, vocabulary=None), "vocabulary must be"),
    (lambda tmp: load_zhang2005_splits("20ng", b"data"), "data_dir must be a path"),
    (lambda tmp: predict_from_intercepts(SVM(kernel="linear").fit([[1, 0], [0, 1]], [0, 1]),
                                         -1), "n_samples must be an integer"),
    (lambda tmp: evaluate_cell(_SPLIT_OF_TWO, "tf", "l2", "ngd"),
     r"\(representation, normalization, kernel\) must be one of the cells"),
    (lambda tmp: mcnemar_test([0, 1], [0, 1], [1, 0], exact="yes"), "exact must be None"),
    (lambda tmp: micro_sign_test([0, 1], [0, 1], [1, 0], exact=1), "exact must be None"),
])
def test_a_bad_parameter_of_the_experiments_is_an_invalid_parameter_error(call, match,
                                                                          tmp_path):
    # As for SVM(C=-1): one class, a ValueError and a TypeError at once, for
    # every argument that is no data; checked before any corpus is read.
    with pytest.raises(kgeo.InvalidParameterError, match=match):
        call(tmp_path)


def test_the_experiments_data_errors_are_no_parameter_errors(tmp_path):
    # A missing corpus folder is a FileNotFoundError (DatasetNotFoundError),
    # and not an InvalidParameterError, though it is also a ValueError.
    with pytest.raises(DatasetNotFoundError) as caught:
        run_zhang2005("20ng", tmp_path / "nowhere", None)
    assert not isinstance(caught.value, kgeo.InvalidParameterError)
    with pytest.raises(TypeError) as caught:
        evaluate_cell(None, "tf", "l1", "ngd")
    assert not isinstance(caught.value, kgeo.InvalidParameterError)
    with pytest.raises(TypeError) as caught:
        predict_from_intercepts(None, 2)
    assert not isinstance(caught.value, kgeo.InvalidParameterError)


def test_evaluate_cell_needs_a_split():
    with pytest.raises(TypeError, match=r"split must be a Split \(see load_zhang2005_splits\), "
                                        r"got NoneType"):
        evaluate_cell(None, "tf", "l1", "ngd")


def test_evaluate_cell_labels_as_a_list_or_too_few(ng_data):
    # With an empty training document, NGD's path indexed the labels by a mask:
    # a list raised TypeError, too few labels IndexError.
    split = load_zhang2005_splits("20ng", ng_data)[0][0]
    X = split.X_train.tolil()
    X[0, :] = 0
    empty_first = dataclasses.replace(split, X_train=X.tocsr(), y_train=list(split.y_train))
    assert np.diff(empty_first.X_train.indptr)[0] == 0
    with pytest.warns(kgeo.EmptyDocumentWarning, match="^1 training document"):
        expected, _ = evaluate_cell(dataclasses.replace(empty_first, y_train=split.y_train),
                                    "tf", "l1", "ngd")
    with pytest.warns(kgeo.EmptyDocumentWarning, match="^1 training document"):
        assert evaluate_cell(empty_first, "tf", "l1", "ngd")[0] == expected
    short = dataclasses.replace(empty_first, y_train=split.y_train[:-1])
    with pytest.raises(ValueError, match=r"y_train must hold one label per training document "
                                         r"\(\d+\), got shape"):
        evaluate_cell(short, "tf", "l1", "ngd")


def test_empty_test_documents_count_for_ngd(webkb_data):
    splits, _ = load_zhang2005_splits("webkb", webkb_data)
    texas = splits[1]
    empty = np.diff(texas.X_test.indptr) == 0
    assert empty.sum() == 1
    with pytest.warns(kgeo.EmptyDocumentWarning, match="^1 training document"):
        accuracy, predictions = evaluate_cell(texas, "tf", "l1", "ngd")
    assert predictions.shape == (texas.X_test.shape[0],)
    assert accuracy == pytest.approx(100 * np.mean(predictions == texas.y_test))
    # The empty student/misc page is in every training set, the empty
    # course/texas page in three: NGD leaves them out instead of failing.
    assert [int((np.diff(s.X_train.indptr) == 0).sum()) for s in splits] == [2, 1, 2, 2]
    with pytest.warns(kgeo.EmptyDocumentWarning, match="^2 training document"):
        evaluate_cell(splits[0], "tfidf", "l1", "ngd")
    evaluate_cell(splits[0], "tf", "l1", "lin")


def test_evaluate_cell_says_which_documents_and_classes_ngd_left_out():
    # NGD leaves empty training documents out; evaluate_cell, which returns
    # only the accuracy and predictions, had said nothing of them, nor of a
    # class that lost every document and was never predicted (a review).
    rng = np.random.default_rng(0)
    y_train, y_test = np.arange(60) % 3, np.arange(30) % 3
    X_train = rng.poisson(0.3 + (np.arange(30) % 3 == y_train[:, None]), (60, 30)).astype(float)
    X_test = rng.poisson(0.3 + (np.arange(30) % 3 == y_test[:, None]), (30, 30)).astype(float)
    X_train[y_train == 0] = 0
    split = Split("s", sp.csr_matrix(X_train), y_train, sp.csr_matrix(X_test), y_test)
    with pytest.warns(kgeo.EmptyDocumentWarning) as record:
        accuracy, predictions = evaluate_cell(split, "tf", "l1", "ngd")
    assert [str(w.message) for w in record] == [
        "20 training document(s) without a word were left out of NGD's training set (they "
        "have no point on the simplex); no document of class(es) [0] is left, so the model "
        "never predicts them"]
    assert record[0].filename == __file__
    assert set(predictions.tolist()) <= {1, 2}
    assert accuracy == pytest.approx(100 * np.mean(predictions == y_test))
    # One empty document of a class that keeps others: the count alone.
    X_train = rng.poisson(0.3 + (np.arange(30) % 3 == y_train[:, None]), (60, 30)).astype(float)
    X_train[0] = 0
    split = dataclasses.replace(split, X_train=sp.csr_matrix(X_train))
    with pytest.warns(kgeo.EmptyDocumentWarning, match=r"^1 training document\(s\) without a "
                                                       r"word were left out of NGD's training "
                                                       r"set \(they have no point on the "
                                                       r"simplex\)$"):
        evaluate_cell(split, "tf", "l1", "ngd")
    # LIN takes them as they are: nothing to say.
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.EmptyDocumentWarning)
        evaluate_cell(split, "tf", "l2", "lin")


def test_evaluate_cell_rejects_unknown_cells(ng_data):
    splits, _ = load_zhang2005_splits("20ng", ng_data)
    with pytest.raises(ValueError, match="must be one of the cells"):
        evaluate_cell(splits[0], "tf", "l2", "ngd")
    # An array compared element-wise: NumPy's "truth value ... is ambiguous".
    with pytest.raises(ValueError, match="must be one of the cells"):
        evaluate_cell(splits[0], np.array(["tf", "tfidf"]), "l1", "ngd")
    with pytest.raises(ValueError, match="C must be finite and > 0"):
        evaluate_cell(splits[0], "tf", "l1", "ngd", C=0)
    with pytest.raises(ValueError, match="C must be a normal float64"):
        evaluate_cell(splits[0], "tf", "l1", "ngd", C=5e-324)


# ---------------------------------------------------------------------------
# End to end
# ---------------------------------------------------------------------------

def test_run_20ng_writes_every_output(ng_data, tmp_path):
    out = tmp_path / "out"
    results = run_zhang2005("20ng", ng_data, out, progress=False)
    assert len(results.cells) == 10
    assert [(c.representation, c.normalization, c.kernel) for c in results.cells] == list(CELLS)

    header, rows = _read_csv(out / "results.csv")
    assert header[:5] == REQUIRED_COLUMNS and header[5] == "seconds"
    assert header == list(RESULTS_COLUMNS)
    assert len(rows) == 10
    assert {r["dataset"] for r in rows} == {"20ng"}
    assert {r["representation"] for r in rows} == {"tf", "tfidf"}
    assert {r["normalization"] for r in rows} == {"l1", "l2"}
    assert {r["kernel"] for r in rows} == {"lin", "ned", "ngd"}
    assert not any(r["normalization"] == "l2" and r["kernel"] == "ngd" for r in rows)
    for r in rows:
        accuracy = float(r["accuracy"])
        assert 0 <= accuracy <= 100 and r["accuracy"] == f"{accuracy:.2f}"
        assert float(r["seconds"]) >= 0 and int(r["n_test"]) == 18
    ngd = results.cell("20ng", "tf", "l1", "ngd")
    assert ngd.accuracy > 90  # three well separated topics

    header, rows = _read_csv(out / "significance.csv")
    assert header == list(SIGNIFICANCE_COLUMNS)
    assert [(r["representation"], r["system_a"], r["system_b"]) for r in rows] == [
        ("tf", "ngd-l1", "lin-l2"), ("tf", "ngd-l1", "ned-l2"),
        ("tfidf", "ngd-l1", "lin-l2"), ("tfidf", "ngd-l1", "ned-l2")]
    assert [r["paper_sign_z"] for r in rows] == ["7.52", "7.60", "7.49", "8.47"]
    for r in rows:
        assert 0 <= float(r["sign_p"]) <= 1 and 0 <= float(r["mcnemar_p"]) <= 1
        assert int(r["k"]) <= int(r["n"]) == int(r["mcnemar_b"]) + int(r["mcnemar_c"])

    table = (out / "table.md").read_text()
    assert "20 Newsgroups (Table 2)" in table
    for value in PAPER_ACCURACY["20ng"].values():
        assert f"{value:.2f}" in table
    assert f"| TF | L1 | NGD | {ngd.accuracy:.2f} | 81.94 | {ngd.accuracy - 81.94:+.2f} |" in table
    assert "Z (paper)" in table and not (out / "c_sweep.csv").exists()

    header, rows = _read_csv(out / "results_by_split.csv")
    assert len(rows) == 10 and {r["split"] for r in rows} == {"bydate"}
    assert set(results.files) >= {"results", "results_by_split", "significance", "table"}


def test_run_says_which_classes_ngd_never_trained_on(tmp_path):
    """Where every training page of a class has no word, NGD is trained
    without the class and never predicts it: evaluate_cell warned of it,
    run_zhang2005 said it nowhere (a review: a split at 75 % without a
    trace). It warns, and the cell and table.md name the class and split."""
    data = make_webkb_tree(tmp_path / "data")
    blank = "Content-Type: text/html\r\n\r\n<html><body><img src=\"a.gif\"></body></html>\n"
    for page in (data / "webkb" / "project").glob("*/*"):
        if page.parent.name != "texas":
            page.write_bytes(blank.encode())
    with pytest.warns(kgeo.EmptyDocumentWarning) as record:
        results = run_zhang2005("webkb", data, tmp_path / "out", progress=False, figure=False)
    assert sorted({str(w.message) for w in record}) == [
        f"webkb texas {rep} L1 NGD: every training document of class(es) ['project'] is "
        f"without a word, so the model was trained without them and never predicts them"
        for rep in ("TF", "TFIDF")]
    assert all(w.filename == __file__ for w in record)
    for rep in ("tf", "tfidf"):
        assert results.cell("webkb", rep, "l1", "ngd").untrained == [[], ["project"], [], []]
        assert results.cell("webkb", rep, "l2", "lin").untrained == [[], [], [], []]
    table = (tmp_path / "out" / "table.md").read_text()
    assert ("Classes that lost every training document, so that NGD never predicts them: "
            "TF, texas: project; TF-IDF, texas: project.") in table


def test_run_webkb_averages_the_four_universities(webkb_data, tmp_path):
    out = tmp_path / "out"
    results = run_zhang2005("webkb", webkb_data, out, progress=False, figure=False)
    header, split_rows = _read_csv(out / "results_by_split.csv")
    _, rows = _read_csv(out / "results.csv")
    assert len(rows) == 10 and len(split_rows) == 40
    for r in rows:
        per_split = [float(s["accuracy"]) for s in split_rows
                     if (s["representation"], s["normalization"], s["kernel"])
                     == (r["representation"], r["normalization"], r["kernel"])]
        assert [s["split"] for s in split_rows[:4]] == ["cornell", "texas", "washington",
                                                       "wisconsin"]
        assert len(per_split) == 4
        assert float(r["accuracy"]) == pytest.approx(np.mean(per_split), abs=0.006)
        # 12 pages per university plus the empty texas page, all counted.
        assert int(r["n_test"]) == 49 and int(r["n_empty_test"]) == 1
    cell = results.cell("webkb", "tf", "l1", "ngd")
    assert cell.n_test == [12, 13, 12, 12]
    assert cell.n_empty_test == [0, 1, 0, 0]
    # The empty misc page is in every training set, the empty texas page in three.
    assert cell.n_empty_train == [2, 1, 2, 2]
    assert cell.accuracy == pytest.approx(np.mean(cell.split_accuracy))
    # Significance pools the four test sets: every non-misc page once.
    assert results.y_true["webkb"].shape == (49,)
    _, sig = _read_csv(out / "significance.csv")
    assert [r["paper_sign_z"] for r in sig] == ["3.47", "2.67", "4.25", "4.43"]
    for r in sig:
        # Few discordant pages: exact P-values, but the chi-square is still reported.
        b, c = int(r["mcnemar_b"]), int(r["mcnemar_c"])
        assert r["mcnemar_method"] == "binomial" and r["sign_method"] == "binomial"
        expected = max(abs(b - c) - 1, 0) ** 2 / (b + c) if b + c else 0.0
        assert float(r["mcnemar_chi2"]) == pytest.approx(expected, abs=1e-3)
    assert "WebKB (Table 1)" in (out / "table.md").read_text()
    assert not (out / "accuracy.png").exists()


def test_c_sweep(ng_data, tmp_path):
    out = tmp_path / "out"
    results = run_zhang2005("20ng", ng_data, out, c_sweep=True, progress=False, figure=False)
    header, rows = _read_csv(out / "c_sweep.csv")
    assert header[:6] == ["dataset", "representation", "C", "normalization", "kernel",
                          "accuracy"]
    assert len(rows) == 2 * 3 * len(C_SWEEP_VALUES)
    assert sorted({float(r["C"]) for r in rows}) == sorted(C_SWEEP_VALUES)
    assert {(r["normalization"], r["kernel"]) for r in rows} == {
        ("l1", "ngd"), ("l2", "lin"), ("l2", "ned")}
    # The C = 1 rows are the main table's cells, not a second training.
    for r in rows:
        if float(r["C"]) == 1.0:
            main_cell = results.cell("20ng", r["representation"], r["normalization"],
                                     r["kernel"])
            assert r["accuracy"] == f"{main_cell.accuracy:.2f}"
        assert 1 <= int(r["rank"]) <= 3
    assert len(results.c_sweep_summary) == 2
    for row in results.c_sweep_summary:
        assert set(row["rankings"]) == set(C_SWEEP_VALUES)
        assert isinstance(row["ranking_changed"], bool)
        assert isinstance(row["ngd_best_everywhere"], bool)
    assert results.ranking_changed in (True, False)
    assert "C sweep (footnote 3)" in (out / "table.md").read_text()
    _, split_rows = _read_csv(out / "results_by_split.csv")
    assert len(split_rows) == 10 + 2 * 3 * (len(C_SWEEP_VALUES) - 1)


def test_figure(ng_data, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "out"
    results = run_zhang2005("20ng", ng_data, out, progress=False)
    png = out / "accuracy.png"
    assert results.files["figure"] == png
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_figure_draws_the_cells_and_marks_the_papers_values_only_where_it_has_them(ng_data):
    pytest.importorskip("matplotlib")
    from kgeo.experiments import _accuracy_figure

    results = run_zhang2005("20ng", ng_data, None, progress=False)
    (ax,) = _accuracy_figure(results).axes
    assert ax.get_ylim() == (0, 100)
    heights = [bar.get_height() for container in ax.containers for bar in container]
    assert heights == [c.accuracy for c in results.cells]  # TF's five bars, then TF-IDF's
    marks = [collection.get_offsets()[:, 1].tolist() for collection in ax.collections]
    assert marks == [[c.paper for c in results.cells[:5]], [c.paper for c in results.cells[5:]]]
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == [
        "TF (kgeo)", "TF-IDF (kgeo)", "paper"]

    # At another C the paper has no values: no marks, and no "paper" in the legend.
    for cell in results.cells:
        cell.paper = None
    (ax,) = _accuracy_figure(results).axes
    assert not ax.collections
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == [
        "TF (kgeo)", "TF-IDF (kgeo)"]


def test_figure_skipped_without_matplotlib(ng_data, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    out = tmp_path / "out"
    results = run_zhang2005("20ng", ng_data, out, progress=True)
    assert "figure" not in results.files and not (out / "accuracy.png").exists()
    assert "matplotlib is not installed" in capsys.readouterr().out


def test_progress_lines_without_tqdm(ng_data, tmp_path, monkeypatch, capsys, terminal):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    run_zhang2005("20ng", ng_data, tmp_path / "out", progress=True, figure=False)
    lines = [line for line in capsys.readouterr().out.splitlines() if " C=1: " in line]
    assert len(lines) == 10
    assert lines[2].startswith("20ng TF L1 NGD C=1: ") and lines[2].endswith(" s)")


def test_progress_into_a_log_is_lines_not_a_bar(ng_data, capsys):
    """A user's `kgeo reproduce ... 2> log`: tqdm's redraws (carriage returns,
    one per update) were written into the log between the cells' lines.
    Where stderr is no terminal (here captured), the cells' lines alone."""
    pytest.importorskip("tqdm")
    run_zhang2005("20ng", ng_data, None, progress=True)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out.count(" C=1: ") == 10


def test_progress_bars_are_shown_on_terminals_and_in_notebooks(monkeypatch):
    from kgeo._base import progress_bars_shown

    class Stream:
        def __init__(self, tty):
            self.isatty = lambda: tty

    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    for stream, shown in ((Stream(True), True), (Stream(False), False), (None, False)):
        monkeypatch.setattr(sys, "stderr", stream)
        assert progress_bars_shown() is shown
    monkeypatch.setitem(sys.modules, "ipykernel", object())
    assert progress_bars_shown()


def test_progress_bar_with_tqdm(ng_data, tmp_path, capsys, terminal):
    pytest.importorskip("tqdm")
    run_zhang2005("20ng", ng_data, tmp_path / "out", progress=True, figure=False)
    captured = capsys.readouterr()
    assert "10/10" in captured.err  # the bar, on stderr
    # One step per cell: the bar ends at 10/10 (a bar advanced two steps a
    # cell showed "10/10" on its way to "20cell").
    assert "| 10/10 [" in captured.err.rstrip("\n").split("\r")[-1]
    assert captured.out.count(" C=1: ") == 10  # one line per cell, above the bar


def test_quiet_run_prints_nothing(ng_data, tmp_path, capsys):
    run_zhang2005("20ng", ng_data, None, progress=False)
    assert capsys.readouterr() == ("", "")


def test_both_datasets_in_one_run(tmp_path):
    data = tmp_path / "data"
    (data / "20news-bydate").mkdir(parents=True)
    make_20ng_tar(data / "20news-bydate" / "20news-bydate.tar.gz")
    make_webkb_tree(data)
    results = run_zhang2005(["20ng", "webkb"], data, tmp_path / "out", progress=False,
                            figure=False)
    _, rows = _read_csv(tmp_path / "out" / "results.csv")
    assert [r["dataset"] for r in rows] == ["20ng"] * 10 + ["webkb"] * 10
    assert len(results.significance) == 8


# ---------------------------------------------------------------------------
# Arguments and the command line
# ---------------------------------------------------------------------------

def test_paper_values_are_shown_only_at_its_C(ng_data, tmp_path):
    # The sign-test Z of the paper (C = 1) used to sit beside Z values measured at any C.
    run_zhang2005("20ng", ng_data, tmp_path / "out", C=2.0, progress=False)
    _, rows = _read_csv(tmp_path / "out" / "significance.csv")
    assert len(rows) == 4 and all(r["paper_sign_z"] == "" for r in rows)
    table = (tmp_path / "out" / "table.md").read_text()
    assert "not shown" in table
    assert not any(z in table for z in ("7.52", "7.60", "7.49", "8.47"))


def test_bad_arguments(ng_data, tmp_path):
    with pytest.raises(ValueError, match=r"dataset must be one of \['20ng', 'webkb'\], got 'reuters'"):
        run_zhang2005("reuters", ng_data, tmp_path / "out")
    # A one-element array passed `in DATASETS` (element-wise ==), then failed
    # as a dict key: "unhashable type" or "truth value ... is ambiguous".
    for dataset in (np.array(["20ng"]), np.array("20ng"), np.array(["20ng", "webkb"])):
        with pytest.raises(ValueError, match=r"dataset must be one of \['20ng', 'webkb'\], got "
                                             r"array\("):
            load_zhang2005_splits(dataset, ng_data)
    for dataset in (["20ng", np.array("webkb")], np.array([["20ng"]])):
        with pytest.raises(ValueError, match=r"dataset must be one of \['20ng', 'webkb'\], got "
                                             r"array\("):
            run_zhang2005(dataset, ng_data, tmp_path / "out")
    with pytest.raises(ValueError, match="C must be finite and > 0, got -1.0"):
        run_zhang2005("20ng", ng_data, tmp_path / "out", C=-1.0)
    # Subnormal: it failed at the first fit, after the corpora were loaded.
    with pytest.raises(ValueError, match=r"C must be a normal float64 \(at least 2.225e-308\), "
                                         r"got 1e-320"):
        run_zhang2005("20ng", ng_data, tmp_path / "out", C=1e-320)
    missing = tmp_path / "nowhere"
    with pytest.raises(DatasetNotFoundError, match=f"data directory '{missing}' does not exist"):
        run_zhang2005("20ng", missing, tmp_path / "out")
    # The folder exists but holds no WebKB copy: the loader's message names it.
    with pytest.raises(DatasetNotFoundError, match="no WebKB corpus under"):
        run_zhang2005("webkb", ng_data, tmp_path / "out")
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        run_zhang2005("20ng", ng_data, afile)
    for dataset in (None, 5):
        with pytest.raises(TypeError, match=rf"dataset must be a name among \['20ng', 'webkb'\] "
                                            rf"or a sequence of them, got {type(dataset).__name__}"):
            run_zhang2005(dataset, ng_data, tmp_path / "out")
    with pytest.raises(TypeError, match="data_dir must be a path to the folder holding the "
                                        "corpora, got int"):
        run_zhang2005("20ng", 5, tmp_path / "out")
    with pytest.raises(ValueError, match="data_dir must be a path .*, got an empty path"):
        run_zhang2005("20ng", "", tmp_path / "out")
    # bytes used to be read as a sequence of names: "got 50".
    with pytest.raises(TypeError, match=r"dataset must be a name among .* got bytes"):
        run_zhang2005(b"20ng", ng_data, tmp_path / "out")
    with pytest.raises(ValueError, match="out_dir must be a path to a folder, got an empty path"):
        run_zhang2005("20ng", ng_data, "")
    # Any truthy value used to switch these on (c_sweep="no" ran the sweep).
    for flag in ("c_sweep", "progress", "figure"):
        with pytest.raises(TypeError, match=rf"{flag} must be True or False, got 'no'"):
            run_zhang2005("20ng", ng_data, tmp_path / "out", **{flag: "no"})


@pytest.mark.parametrize("problem", ["second corpus missing", "out_dir unwritable",
                                     "output name taken by a folder", "bad n_jobs",
                                     "earlier output not replaceable",
                                     "manifest name taken by a folder"])
def test_nothing_is_trained_when_the_run_cannot_finish(ng_data, tmp_path, monkeypatch, problem):
    # These used to surface only after every cell had trained, losing the work.
    trained = []
    monkeypatch.setattr("kgeo.experiments.load_zhang2005_splits",
                        lambda *a, **k: trained.append(a) or pytest.fail("training started"))
    out, datasets, kwargs = tmp_path / "out", ["20ng"], {}
    if problem == "second corpus missing":
        datasets, error, match = ["20ng", "webkb"], DatasetNotFoundError, "no WebKB corpus under"
    elif problem == "out_dir unwritable":
        blocker = tmp_path / "blocker"
        blocker.write_text("x")
        out, error, match = blocker / "sub", OSError, r"out_dir .*sub' cannot be created or written"
    elif problem == "output name taken by a folder":
        (out / "results.csv").mkdir(parents=True)
        error, match = IsADirectoryError, r"holds a folder named 'results.csv'"
    elif problem == "manifest name taken by a folder":
        # Found only when the list of outputs was written, after the training.
        (out / ".kgeo-outputs.json").mkdir(parents=True)
        error, match = IsADirectoryError, r"holds a folder named '.kgeo-outputs.json'"
    elif problem == "earlier output not replaceable":
        # Read-only or immutable (chattr +i): used to fail the run after all
        # its training, with this run's CSV files beside the old table.md. The
        # tests run as root, whom a mode of 0o444 does not stop: ask os.access.
        out.mkdir()
        (out / "table.md").write_text("an earlier table\n")
        real_access = os.access
        monkeypatch.setattr("kgeo.experiments.os.access", lambda path, mode, **kw: (
            Path(path).name != "table.md" and real_access(path, mode, **kw)))
        error, match = PermissionError, (r"holds 'table.md', an output of an earlier run that "
                                         r"cannot be replaced \(it is not writable\)")
    else:
        kwargs, error, match = {"n_jobs": 0}, ValueError, r"Invalid n_jobs 0"
    with pytest.raises(error, match=match):
        run_zhang2005(datasets, ng_data, out, progress=False, **kwargs)
    assert trained == []


def test_cli_version(capsys):
    # `kgeo --version` said "the following arguments are required: command".
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out == f"kgeo {kgeo.__version__}\n"


def test_cli_reproduce(ng_data, tmp_path, capsys):
    out = tmp_path / "cli-out"
    code = main(["reproduce", "zhang2005", "--dataset", "20ng", "--data", str(ng_data),
                 "--out", str(out), "--C", "1", "--no-figure"])
    assert code == 0
    for name in ("results.csv", "results_by_split.csv", "significance.csv", "table.md"):
        assert (out / name).is_file()
    printed = capsys.readouterr().out
    assert "20 Newsgroups (Table 2): ours / paper (difference)" in printed
    assert "NGD-L1 vs LIN-L2: Z = " in printed


def test_cli_c_sweep_flag(ng_data, tmp_path):
    out = tmp_path / "cli-out"
    assert main(["reproduce", "zhang2005", "--dataset", "20ng", "--data", str(ng_data),
                 "--out", str(out), "--C-sweep", "--quiet", "--no-figure"]) == 0
    assert (out / "c_sweep.csv").is_file()


def test_cli_reproduce_repeated_dataset_names_the_option(ng_data, tmp_path, capsys):
    assert main(["reproduce", "zhang2005", "--dataset", "20ng", "20ng", "--data", str(ng_data),
                 "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert "kgeo reproduce: error: --dataset must not repeat a name, got 20ng 20ng" in (
        capsys.readouterr().err)
    assert not (tmp_path / "o").exists()


def _demo_corpus(root, empty_split):
    """Three messages per group and split, and one of stop words only (no
    word left) in ``empty_split``."""
    for split in ("train", "test"):
        for group, words in (("a.x", "apple banana cherry"), ("b.y", "delta eagle falcon")):
            folder = root / f"20news-bydate-{split}" / group
            folder.mkdir(parents=True)
            for i in range(3):
                (folder / str(i + 1)).write_text(words + "\n")
    (root / f"20news-bydate-{empty_split}" / "a.x" / "9").write_text("the and of\n")


def test_cli_demo_keeps_going_past_a_document_without_a_word(tmp_path, capsys):
    # A test message of stop words only stopped the demo with NGD's all-zero
    # row error; `kgeo reproduce` predicts such a document by the intercepts.
    _demo_corpus(tmp_path, "test")
    assert main(["demo", "--data", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "20 Newsgroups bydate: 6 train / 7 test documents, 6 words"
    ngd = next(line for line in lines if line.startswith("ngd "))
    linear = next(line for line in lines if line.startswith("linear "))
    # The six documents with words are right; the empty one is the intercepts' call.
    assert re.search(r"\b(85\.71|100\.00)%", ngd), ngd
    assert ngd.endswith("(0 train / 1 test documents without a word: left out / predicted "
                        "by the intercepts)"), ngd
    assert "without a word" not in linear  # a linear SVM takes the zero row as it is


def test_cli_unknown_dataset(ng_data, tmp_path, capsys):
    with pytest.raises(SystemExit) as excinfo:
        main(["reproduce", "zhang2005", "--dataset", "reuters", "--data", str(ng_data),
              "--out", str(tmp_path / "o")])
    assert excinfo.value.code == 2
    assert "invalid choice: 'reuters'" in capsys.readouterr().err


def test_cli_unknown_experiment(ng_data, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "lafferty2005", "--dataset", "20ng", "--data", str(ng_data),
              "--out", str(tmp_path / "o")])
    assert "invalid choice: 'lafferty2005'" in capsys.readouterr().err


def test_cli_missing_data_dir(tmp_path, capsys):
    missing = tmp_path / "no-such-folder"
    code = main(["reproduce", "zhang2005", "--dataset", "20ng", "--data", str(missing),
                 "--out", str(tmp_path / "o"), "--quiet"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("kgeo reproduce: error: ")
    assert str(missing) in err and not (tmp_path / "o").exists()


@pytest.mark.parametrize("how", ["the user's file", "edited", "a symbolic link", "unreadable"])
def test_a_file_kgeo_did_not_write_stops_the_run_before_training(ng_data, tmp_path,
                                                                 monkeypatch, how):
    """An output name holding a file that no earlier run vouches for (the
    user's own, an edited output, a link, one that cannot be read) is not
    replaced without overwrite=True: the run stops before its first SVM."""
    out = tmp_path / "out"
    run_zhang2005("20ng", ng_data, out, progress=False, figure=False)
    target = out / "table.md"
    if how == "the user's file":
        (out / ".kgeo-outputs.json").unlink()
        target = out / "results.csv"
    elif how == "edited":
        with open(target, "a", encoding="utf-8") as fh:
            fh.write("my notes on the table\n")
    elif how == "a symbolic link":
        elsewhere = tmp_path / "kept.md"
        target.rename(elsewhere)
        target.symlink_to(elsewhere)
    elif how == "unreadable":
        target.chmod(0o200)
        if os.geteuid() == 0:
            # Root reads any file (the case was skipped there): its reading
            # is refused as the mode refuses it to anyone else.
            sha256_of = kgeo.experiments._sha256_of

            def refused(path):
                if Path(path) == target:
                    raise PermissionError(13, "Permission denied", str(path))
                return sha256_of(path)

            monkeypatch.setattr("kgeo.experiments._sha256_of", refused)
    before = {p.name: (p.read_bytes() if how != "unreadable" else None)
              for p in out.iterdir() if not p.is_symlink()}
    with monkeypatch.context() as patched:
        patched.setattr("kgeo.experiments._run_cells",
                        lambda *a, **k: pytest.fail("training started"))
        with pytest.raises(FileExistsError, match=re.escape(target.name) + r".*overwrite=True "
                                                  r"\(kgeo reproduce --overwrite\)"):
            run_zhang2005("20ng", ng_data, out, progress=False, figure=False)
    assert {p.name: (p.read_bytes() if how != "unreadable" else None)
            for p in out.iterdir() if not p.is_symlink()} == before
    # The command line says so and stops with status 2; --overwrite replaces it.
    argv = ["reproduce", "zhang2005", "--dataset", "20ng", "--data", str(ng_data),
            "--out", str(out), "--quiet", "--no-figure"]
    assert main(argv) == 2
    if how == "unreadable":
        target.chmod(0o600)
        monkeypatch.undo()
    results = run_zhang2005("20ng", ng_data, out, progress=False, figure=False, overwrite=True)
    assert main(argv + ["--overwrite"]) == 0
    assert not target.is_symlink()
    assert json.loads((out / ".kgeo-outputs.json").read_text()).keys() == {
        p.name for p in results.files.values()}
    if how == "a symbolic link":
        assert (tmp_path / "kept.md").read_text().endswith("\n")  # the link's target kept


def test_write_outputs_checks_the_names_again(ng_data, tmp_path):
    """A file of an output name put there during the training is not lost:
    write_outputs checks the names it writes, and writes nothing then."""
    out = tmp_path / "out"
    results = run_zhang2005("20ng", ng_data, None, progress=False, figure=False)
    out.mkdir()
    (out / "significance.csv").write_text("mine\n")
    with pytest.raises(FileExistsError, match=r"holds 'significance.csv': output names"):
        write_outputs(results, out, figure=False)
    assert sorted(p.name for p in out.iterdir()) == ["significance.csv"]
    assert (out / "significance.csv").read_text() == "mine\n"
    with pytest.raises(TypeError, match=r"overwrite must be True or False, got 'yes'"):
        write_outputs(results, out, figure=False, overwrite="yes")
    for flag in ("figure", "progress"):  # a string used to draw the figure
        with pytest.raises(TypeError, match=rf"{flag} must be True or False, got 'no'"):
            write_outputs(results, out, **{"figure": False, flag: "no"})
    assert sorted(p.name for p in out.iterdir()) == ["significance.csv"]
    files = write_outputs(results, out, figure=False, overwrite=True)
    assert files["significance"].read_text().startswith("dataset,")


def test_a_damaged_second_corpus_fails_before_any_training(ng_data, monkeypatch):
    # Both corpora are loaded before the first SVM: the 20NG cells used to
    # train first and be lost when the WebKB archive turned out damaged.
    (ng_data / "webkb").mkdir()
    (ng_data / "webkb" / "webkb-data.gtar.gz").write_bytes(b"not an archive" * 100)
    monkeypatch.setattr("kgeo.experiments._run_cells",
                        lambda *a, **k: pytest.fail("training started"))
    with pytest.raises(ValueError, match=r"webkb-data.gtar.gz' is not a readable tar archive"):
        run_zhang2005(["20ng", "webkb"], ng_data, ng_data / "out", progress=False)


def test_a_failed_run_removes_the_output_folders_it_created(ng_data, monkeypatch):
    """Folders run_zhang2005 made for its outputs go again, innermost first,
    when the run fails after making them (a damaged corpus, or Ctrl-C during
    the training); they were left behind, empty. A folder that existed, or
    that holds a file by then, stays."""
    (ng_data / "webkb").mkdir()
    (ng_data / "webkb" / "webkb-data.gtar.gz").write_bytes(b"not an archive" * 100)
    (ng_data / "kept").mkdir()
    with pytest.raises(ValueError, match=r"is not a readable tar archive"):
        run_zhang2005(["20ng", "webkb"], ng_data, ng_data / "kept" / "new" / "out",
                      progress=False)
    assert list((ng_data / "kept").iterdir()) == []

    def interrupted(name, splits, *args, **kwargs):
        (ng_data / "user").mkdir(exist_ok=True)
        (ng_data / "user" / "notes.txt").write_text("mine")  # written during the run
        raise KeyboardInterrupt
    monkeypatch.setattr("kgeo.experiments._run_cells", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_zhang2005("20ng", ng_data, ng_data / "user" / "out", progress=False)
    assert [p.name for p in (ng_data / "user").iterdir()] == ["notes.txt"]

    def unwritable(folder, prefix, suffix=""):
        raise PermissionError(13, "Permission denied", str(folder / prefix))
    monkeypatch.setattr("kgeo.experiments._new_file", unwritable)  # the folder's write probe
    with pytest.raises(OSError, match=r"out_dir .* cannot be created or written"):
        run_zhang2005("20ng", ng_data, ng_data / "kept" / "probe", progress=False)
    assert list((ng_data / "kept").iterdir()) == []
    monkeypatch.undo()

    # Made one level at a time, each recorded as made: a path through ".."
    # left "new" behind (its removal as "new/../out" failed first), and a
    # name too long for the system left the levels made before it.
    def training_fails(*args, **kwargs):
        raise RuntimeError("training failed")
    monkeypatch.setattr("kgeo.experiments._train_and_write", training_fails)
    with pytest.raises(RuntimeError, match="training failed"):
        run_zhang2005("20ng", ng_data, ng_data / "kept" / "new" / ".." / "out", progress=False)
    assert list((ng_data / "kept").iterdir()) == []
    with pytest.raises(OSError, match=r"out_dir .* cannot be created or written"):
        run_zhang2005("20ng", ng_data, ng_data / "kept" / "new" / ("x" * 300), progress=False)
    assert list((ng_data / "kept").iterdir()) == []


@pytest.mark.parametrize("option, value, match", [
    ("--C", "0", r"--C must be a finite number > 0, got 0.0"),
    ("--C", "nan", r"--C must be a finite number > 0, got nan"),
    # Subnormal: it failed at the first fit, after the corpus was built.
    ("--C", "1e-320", r"--C must be at least 2.225e-308 \(a normal float\), got 1e-320"),
    ("--seed", "-1", r"--seed must be an integer >= 0, got -1"),
    ("--n-documents", "3", r"--n-documents must be at least 10 per class \(100 for --n-classes "
                           r"10\)"),
    ("--n-classes", "1", r"--n-classes must be at least 2, got 1"),
    ("--n-features", "1", r"--n-features must be at least 2, got 1"),
    ("--data", "", r"--data must name the folder holding 20 Newsgroups, got ''"),
    # The synthetic corpus's options were silently ignored beside --data.
    ("--data", "somewhere --n-classes -5", r"--n-classes describes the synthetic corpus, which "
                                           r"--data replaces by 20 Newsgroups"),
    ("--data", "somewhere --seed 3 --n-documents 10", r"--n-documents, --seed describe the "
                                                      r"synthetic corpus"),
    # Used to end in a MemoryError traceback and exit code 1.
    ("--n-features", "1000000000000", r"need about .* GiB to generate, more than this "
                                      r"machine's .* GiB of memory"),
])
def test_cli_demo_bad_options_name_the_option(option, value, match, capsys):
    assert main(["demo", option, *(value.split() if value else [value])]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kgeo demo: error: ") and re.search(match, err), err


@pytest.mark.parametrize("option, value, match", [
    ("--C", "0", "--C must be a finite number > 0, got 0.0"),
    ("--C", "nan", "--C must be a finite number > 0, got nan"),
    ("--C", "inf", "--C must be a finite number > 0, got inf"),
    ("--C", "1e-320", "--C must be at least 2.225e-308 (a normal float), got 1e-320"),
    ("--n-jobs", "0", "--n-jobs must be a nonzero integer (-1: every CPU, -2: all but one), "
                      "got 0"),
    # These two used to name run_zhang2005's parameters (data_dir, out_dir).
    ("--data", "", "--data must name the folder holding the corpora, got ''"),
    ("--out", "", "--out must name a folder for the output files, got ''"),
])
def test_cli_reproduce_bad_options_name_the_option(option, value, match, ng_data, tmp_path,
                                                   capsys):
    code = main(["reproduce", "zhang2005", "--dataset", "20ng", "--data", str(ng_data),
                 "--out", str(tmp_path / "o"), option, value, "--quiet"])
    assert code == 2
    assert match in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------
# Real data
# ---------------------------------------------------------------------------

def _real_data_dir():
    env = os.environ.get("KGEO_DATA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data"


def test_real_20ng_l2_lin_tfidf_matches_the_paper():
    """L2 LIN TF-IDF on the full 20 Newsgroups: within 1 point of Table 2 (about 15 s)."""
    data = _real_data_dir()
    if not (data / "20news-bydate").exists():
        pytest.skip(f"20 Newsgroups not found under {data} (set KGEO_DATA)")
    splits, info = load_zhang2005_splits("20ng", data)
    split = splits[0]
    assert (split.X_train.shape[0], split.X_test.shape[0]) == (11314, 7532)
    accuracy, predictions = evaluate_cell(split, "tfidf", "l2", "lin")
    paper = PAPER_ACCURACY["20ng"]["tfidf", "l2", "lin"]
    assert abs(accuracy - paper) <= 1.0, f"L2 LIN TF-IDF: {accuracy:.2f}% vs paper {paper}%"


def _fake_cell(representation, normalization, kernel, C, accuracy):
    from kgeo.experiments import CellResult
    return CellResult(dataset="20ng", representation=representation,
                      normalization=normalization, kernel=kernel, C=C, accuracy=accuracy,
                      split_names=["bydate"], split_accuracy=[accuracy], split_seconds=[0.0],
                      n_train=[1], n_test=[1], n_empty_train=[0], n_empty_test=[0],
                      predictions=np.zeros(1))


def test_sweep_summary_rankings_ties_and_exceptions():
    from kgeo.experiments import _describe_sweep, _sweep_summary
    table = {  # C: (ngd-l1, lin-l2, ned-l2)
        0.001: (5.3, 5.3, 5.3),
        0.1: (77.0, 68.0, 64.0),
        1.0: (81.0, 80.0, 80.5),
        10.0: (81.0, 80.9, 80.5),
    }
    cells = []
    for representation in ("tf", "tfidf"):
        for C, accuracies in table.items():
            for (norm, kernel), acc in zip([("l1", "ngd"), ("l2", "lin"), ("l2", "ned")],
                                           accuracies):
                if representation == "tfidf":
                    acc = {"ngd": 90.0, "lin": 80.0, "ned": 70.0}[kernel]
                cells.append(_fake_cell(representation, norm, kernel, C, acc))
    tf, tfidf = _sweep_summary("20ng", cells, 1.0)
    assert tf["rankings"][0.001] == "lin-l2 = ned-l2 = ngd-l1"
    assert tf["rankings"][1.0] == "ngd-l1 > ned-l2 > lin-l2"
    assert tf["rankings"][10.0] == "ngd-l1 > lin-l2 > ned-l2"
    assert tf["ranks"][0.001] == {"lin-l2": 1, "ned-l2": 1, "ngd-l1": 1}
    assert tf["ranking_changed"] and not tf["ngd_best_everywhere"]
    assert tf["ngd_not_best_at"] == [0.001]
    assert _describe_sweep(tf).endswith("NGD-L1 strictly best at every C except 0.001")
    assert not tfidf["ranking_changed"] and tfidf["ngd_best_everywhere"]
    assert _describe_sweep(tfidf) == ("ranking changed across C: no; NGD-L1 strictly best "
                                      "at every C")


def test_sweep_summary_uses_the_rankings_tie_tolerance():
    # Two WebKB-like cells whose per-split accuracies are the same numbers in
    # another order have the same mean, but np.mean can round them one ulp
    # apart. The ranking calls that a tie; "strictly best" used to say NGD won
    # by the ulp, and a tie listed in another order counted as a change.
    from kgeo.experiments import _sweep_summary
    ngd_splits = [100 * 6 / 12, 100 * 6 / 13, 100 * 10 / 12, 100 * 6 / 12]
    lin_splits = [100 * 10 / 12, 100 * 6 / 13, 100 * 6 / 12, 100 * 6 / 12]
    ngd_mean, lin_mean = float(np.mean(ngd_splits)), float(np.mean(lin_splits))
    assert ngd_mean != lin_mean and abs(ngd_mean - lin_mean) < 1e-12  # the case at hand
    low, high = min(ngd_mean, lin_mean), max(ngd_mean, lin_mean)
    cells = []
    for representation in ("tf", "tfidf"):
        for C, (ngd, lin) in {1.0: (high, low), 10.0: (low, high)}.items():
            for (norm, kernel), acc in zip([("l1", "ngd"), ("l2", "lin"), ("l2", "ned")],
                                           (ngd, lin, 40.0)):
                cells.append(_fake_cell(representation, norm, kernel, C, acc))
    row, _ = _sweep_summary("20ng", cells, 1.0)
    assert row["ranks"][1.0] == row["ranks"][10.0] == {"lin-l2": 1, "ngd-l1": 1, "ned-l2": 3}
    assert not row["ngd_best_everywhere"] and row["ngd_not_best_at"] == [1.0, 10.0]
    assert not row["ranking_changed"]


def test_results_and_significance_name_their_C(ng_data, tmp_path):
    run_zhang2005("20ng", ng_data, tmp_path / "out", C=2.0, progress=False, figure=False)
    header, rows = _read_csv(tmp_path / "out" / "results.csv")
    assert header[-1] == "C" and {r["C"] for r in rows} == {"2"}
    header, rows = _read_csv(tmp_path / "out" / "significance.csv")
    assert header[-1] == "C" and {r["C"] for r in rows} == {"2"}


def test_a_failure_while_writing_leaves_the_earlier_outputs(ng_data, tmp_path, monkeypatch):
    # The files used to be written one after the other in place: a failure
    # at table.md left this run's CSV files beside an earlier run's table.
    out = tmp_path / "out"
    run_zhang2005("20ng", ng_data, out, progress=False, figure=False)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def failing_report(results):
        raise OSError("disk full")

    monkeypatch.setattr("kgeo.experiments.markdown_report", failing_report)
    with pytest.raises(OSError, match="disk full"):
        run_zhang2005("20ng", ng_data, out, C=2.0, progress=False, figure=False)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no temporary left


def test_C_is_written_as_it_reads_back(ng_data, tmp_path):
    # ":g" wrote C = 1.0000001 as 1, the same label as the sweep's own C = 1,
    # and 1/3 as 0.333333.
    out = tmp_path / "out"
    run_zhang2005("20ng", ng_data, out, C=1.0000001, c_sweep=True, progress=False, figure=False)
    _, rows = _read_csv(out / "results.csv")
    assert {r["C"] for r in rows} == {"1.0000001"}
    _, rows = _read_csv(out / "c_sweep.csv")
    assert sorted({float(r["C"]) for r in rows}) == [0.001, 0.01, 0.1, 1.0, 1.0000001,
                                                      10.0, 100.0, 1000.0]
    table = (out / "table.md").read_text()
    assert "C = 1.0000001;" in table and "| 1.0000001 |" in table and "| 1 |" in table
    run_zhang2005("20ng", ng_data, out, C=1 / 3, progress=False, figure=False)
    _, rows = _read_csv(out / "significance.csv")
    assert {float(r["C"]) for r in rows} == {1 / 3}


def test_cli_demo_sizes_beyond_the_machine_are_refused(capsys):
    # These used to crash the interpreter (np.arange overflowing int64, then
    # a segmentation fault in rng.choice) or run a Python loop over a
    # billion classes for hours.
    for options in (["--n-features", "9223372036854775807"],
                    ["--n-classes", "1000000000", "--n-documents", "10000000000"]):
        assert main(["demo", *options]) == 2
        err = capsys.readouterr().err
        assert re.search(r"kgeo demo: error: n_documents=\d+, n_features=\d+, n_classes=\d+ "
                         r"and words_per_document=100 need about .* GiB to generate, more than "
                         r"this machine's .* GiB of memory", err), err


def test_a_reused_out_dir_drops_only_outputs_kgeo_wrote(ng_data, tmp_path, capsys):
    out = tmp_path / "out"
    first = run_zhang2005("20ng", ng_data, out, progress=False, figure=False, c_sweep=True)
    assert "c_sweep" in first.files
    # Files that bear an output's name but that kgeo did not write: they were
    # deleted as an earlier run's leftovers.
    (out / "accuracy.png").write_bytes(b"the user's own figure")
    (out / "notes.txt").write_text("the user's own file\n")
    with pytest.warns(UserWarning, match=r"holds 'accuracy.png', which this run does not write "
                                         r"and which is not an unchanged output of an earlier "
                                         r"kgeo run: left as it is"):
        results = run_zhang2005("20ng", ng_data, out, progress=True, figure=False)
    assert "c_sweep" not in results.files
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [p.name for p in results.files.values()]
        + ["notes.txt", "accuracy.png", ".kgeo-outputs.json"])
    assert (out / "accuracy.png").read_bytes() == b"the user's own figure"
    assert (out / "notes.txt").read_text() == "the user's own file\n"
    assert f"removed {out / 'c_sweep.csv'}" in capsys.readouterr().out
    # An earlier run's output changed since it was written is the user's now.
    (out / "accuracy.png").unlink()
    run_zhang2005("20ng", ng_data, out, progress=False, figure=False, c_sweep=True)
    with open(out / "c_sweep.csv", "a") as fh:
        fh.write("a line of the user's\n")
    with pytest.warns(UserWarning, match=r"holds 'c_sweep.csv', which this run does not write"):
        run_zhang2005("20ng", ng_data, out, progress=False, figure=False)
    assert (out / "c_sweep.csv").read_text().endswith("a line of the user's\n")
    # An unreadable list (here JSON nested past the interpreter's recursion
    # limit, which used to escape as a RecursionError after the outputs were
    # in place) vouches for nothing: the outputs it listed are replaced only
    # with overwrite=True, and the list is replaced.
    (out / ".kgeo-outputs.json").write_text("[" * 100_000)
    with pytest.raises(FileExistsError, match=r"holds 'results.csv', 'results_by_split.csv', "
                                              r"'significance.csv', 'table.md': output names"):
        run_zhang2005("20ng", ng_data, out, progress=False, figure=False)
    with pytest.warns(UserWarning, match=r"holds 'c_sweep.csv', which this run does not write"):
        results = run_zhang2005("20ng", ng_data, out, progress=False, figure=False,
                                overwrite=True)
    assert (out / "c_sweep.csv").is_file()
    assert json.loads((out / ".kgeo-outputs.json").read_text()).keys() == {
        path.name for path in results.files.values()}


# ---------------------------------------------------------------------------
# The demo's synthetic corpus
# ---------------------------------------------------------------------------

def test_synthetic_corpus_takes_numpy_integers_as_ints():
    from kgeo._synthetic import make_topic_corpus

    # np.uint64 sizes used to end in "arrays used as indices must be of
    # integer type" (uint64 and int64 mix to float64).
    X, y = make_topic_corpus(60, 200, 3, words_per_document=20, random_state=4)
    for sizes in ((np.uint64(60), 200, 3), (60, np.uint16(200), np.uint64(3)),
                  (np.int8(60), np.int16(200), np.int8(3))):
        X2, y2 = make_topic_corpus(*sizes, words_per_document=np.uint8(20), random_state=4)
        assert (X2 != X).nnz == 0 and np.array_equal(y2, y)


@pytest.mark.parametrize("kwargs,match", [
    (dict(n_documents=0), r"n_documents must be an integer >= 1, got 0"),
    (dict(n_features=1), r"n_features must be an integer >= 2, got 1"),
    (dict(n_classes=True), r"n_classes must be an integer >= 2, got True"),
    (dict(words_per_document=2.0), r"words_per_document must be an integer >= 1, got 2\.0"),
    (dict(topic_weight=1.5), r"topic_weight must be a number in \[0, 1\], got 1\.5"),
    (dict(topic_weight=np.True_), r"topic_weight must be a number in \[0, 1\], got "),
    (dict(topic_size=0), r"topic_size must be an integer in \[1, n_features\], got 0"),
    (dict(topic_size=51), r"topic_size must be an integer in \[1, n_features\], got 51"),
])
def test_synthetic_corpus_refuses_bad_sizes(kwargs, match):
    from kgeo._synthetic import make_topic_corpus

    sizes = dict(n_documents=20, n_features=50, n_classes=2) | kwargs
    with pytest.raises(ValueError, match=match):
        make_topic_corpus(**sizes)


def test_synthetic_corpus_counts_each_class_against_memory(monkeypatch):
    from kgeo import _synthetic

    with pytest.raises(ValueError, match=r"n_classes must be at most n_documents \(10\), so "
                                         r"that every class has a document, got 11"):
        _synthetic.make_topic_corpus(10, 50, 11)
    # 5 million classes of one word and one document each: 0.4 GiB by the old
    # count (8 bytes a class), 2.8 GiB with a class's own array counted, more
    # than the machine made to have 1 GiB here. The old count let it start a
    # Python loop of 5 million draws.
    monkeypatch.setattr(_synthetic, "_physical_memory", lambda: 2**30)
    with pytest.raises(ValueError, match=r"need about 2\.\d+ GiB to generate, more than this "
                                         r"machine's 1 GiB of memory"):
        _synthetic.make_topic_corpus(5 * 10**6, 10, 5 * 10**6, words_per_document=1)


# ---------------------------------------------------------------------------
# From mutation testing of experiments.py and __main__.py (each test pins a
# behaviour a small change to the code left unnoticed)
# ---------------------------------------------------------------------------

def _cell(representation, normalization, kernel, C, accuracy, predictions=None):
    return CellResult(dataset="20ng", representation=representation,
                      normalization=normalization, kernel=kernel, C=C, accuracy=accuracy,
                      split_names=["bydate"], split_accuracy=[accuracy], split_seconds=[0.0],
                      n_train=[1], n_test=[1], n_empty_train=[0], n_empty_test=[0],
                      predictions=np.zeros(1) if predictions is None else predictions)


# ---------------------------------------------------------------------------
# The paper's values and preprocessing
# ---------------------------------------------------------------------------

def test_paper_accuracy_is_tables_1_and_2_as_printed():
    """Every reference value of Tables 1 and 2, spelt out: the suite only
    compared table.md with PAPER_ACCURACY itself, so a mistyped value (84.61
    read as 84.16) passed unnoticed."""
    columns = [("l1", "lin"), ("l1", "ned"), ("l1", "ngd"), ("l2", "lin"), ("l2", "ned")]
    printed = {
        "20ng": {"tf": (24.68, 69.16, 81.94, 79.76, 79.76),
                 "tfidf": (21.47, 72.20, 84.61, 82.33, 82.06)},
        "webkb": {"tf": (72.57, 84.39, 91.88, 89.52, 90.08),
                  "tfidf": (55.84, 81.04, 91.42, 88.23, 87.96)},
    }
    expected = {dataset: {(rep, n, k): v for rep, row in rows.items()
                          for (n, k), v in zip(columns, row)}
                for dataset, rows in printed.items()}
    assert PAPER_ACCURACY == expected


def test_20ng_prunes_words_of_a_single_training_document(tmp_path):
    """--prune-vocab-by-doc-count=2 (Rainbow: remove words in 2 or fewer
    documents): a word of two training messages is dropped however often it
    occurs there; one of three is kept. Checked against RainbowVectorizer given
    the paper's options literally, not PREPROCESSING."""
    data = tmp_path / "data"
    (data / "20news-bydate").mkdir(parents=True)
    make_20ng_tar(data / "20news-bydate" / "20news-bydate.tar.gz", extra_train=[
        ("sci.space", "zeppelin zeppelin zeppelin orbit\n"), ("rec.autos", "zeppelin engine\n"),
        ("sci.space", "quasar orbit\n"), ("rec.autos", "quasar engine\n"),
        ("alt.atheism", "quasar deity\n")])
    split = load_zhang2005_splits("20ng", data)[0][0]
    train_docs = [d for d, s in zip(*_20ng_docs(data)) if s == "train"]
    paper = RainbowVectorizer(stoplist="smart", prune_by_doc_count=2).fit(train_docs)
    assert "quasar" in paper.vocabulary_ and "zeppelin" not in paper.vocabulary_
    assert split.n_words == len(paper.vocabulary_)


def _20ng_docs(data):
    corpus = load_20newsgroups(data, subset="all")
    return corpus.data, corpus.split


def test_webkb_prunes_words_that_occur_once(tmp_path):
    """--prune-vocab-by-occur-count=2 (Rainbow: remove words occurring fewer
    than 2 times) counts occurrences, not documents: a word twice in one page
    is kept, a word once in the corpus is dropped."""
    data = make_webkb_tree(tmp_path / "data", extra_pages=[
        ("course", "cornell", "syllabus wombat wombat"), ("course", "cornell", "exam narwhal")])
    splits, _ = load_zhang2005_splits("webkb", data, vocabulary="all")
    docs = load_webkb(data).data
    paper = RainbowVectorizer(stoplist=None, skip_header=True, skip_html=True, tag_digits=True,
                              prune_by_occur_count=2).fit(docs)
    assert "wombat" in paper.vocabulary_ and "narwhal" not in paper.vocabulary_
    assert splits[0].n_words == len(paper.vocabulary_)


def test_a_split_without_test_documents_is_refused(tmp_path):
    """A corpus whose test half is missing is refused by name, not trained on
    (the check used to need both halves empty to fire)."""
    data = tmp_path / "data"
    (data / "20news-bydate").mkdir(parents=True)
    make_20ng_tar(data / "20news-bydate" / "20news-bydate.tar.gz", n_test=0)
    with pytest.raises(ValueError, match=r"split 'bydate' has 30 training and 0 test documents"):
        load_zhang2005_splits("20ng", data)


def test_vocabulary_all_keeps_each_documents_row(webkb_data):
    """With vocabulary="all" the training rows are the training documents (same
    rows as with "train", up to the vocabulary), not the test ones."""
    corpus = load_webkb(webkb_data, classes=("student", "faculty", "course", "project"))
    counts = RainbowVectorizer(stoplist=None, skip_header=True, skip_html=True, tag_digits=True,
                               prune_by_occur_count=2).fit_transform(corpus.data)
    splits, _ = load_zhang2005_splits("webkb", webkb_data, vocabulary="all")
    for split, (train, test) in zip(splits, corpus.splits):
        assert split.X_train.shape[0] == split.y_train.shape[0] == train.size
        assert (split.X_train != counts[train]).nnz == 0
        assert (split.X_test != counts[test]).nnz == 0


# ---------------------------------------------------------------------------
# Empty documents
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("n_classes", [2, 3])
def test_an_intercept_of_zero_votes_as_libsvm(n_classes):
    """A pair whose b* is exactly 0 gives its vote to the second class, as
    LIBSVM (``dec_value > 0``) and SVM.predict on a zero row do."""
    rng = np.random.default_rng(3)
    X = sp.csr_matrix(rng.integers(0, 4, size=(40, 6)).astype(float) + 0.1)
    y = np.arange(40) % n_classes
    model = SVM(kernel="linear").fit(X, y)
    model.intercept_ = np.zeros_like(model.intercept_)
    np.testing.assert_array_equal(predict_from_intercepts(model, 2),
                                  model.predict(sp.csr_matrix((2, 6))))


def test_cli_demo_reports_an_empty_training_document(tmp_path, capsys):
    """A training message of stop words only: NGD leaves it out and the demo
    says so (the count of left-out training documents was never checked)."""
    _demo_corpus(tmp_path, "train")
    assert main(["demo", "--data", str(tmp_path)]) == 0
    ngd = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("ngd "))
    assert ngd.endswith("(1 train / 0 test documents without a word: left out / predicted "
                        "by the intercepts)"), ngd


# ---------------------------------------------------------------------------
# Cells
# ---------------------------------------------------------------------------

def test_tfidf_weights_come_from_the_training_documents_only(ng_data):
    """IDF = log(m / df) over the m training documents: evaluate_cell equals an
    SVM trained on MultinomialEmbedding fitted to X_train alone."""
    split = load_zhang2005_splits("20ng", ng_data)[0][0]
    embedding = MultinomialEmbedding(weighting="tfidf", norm="l2").fit(split.X_train)
    model = SVM(kernel="linear").fit(embedding.transform(split.X_train), split.y_train)
    expected = model.predict(embedding.transform(split.X_test))
    accuracy, predictions = evaluate_cell(split, "tfidf", "l2", "lin")
    np.testing.assert_array_equal(predictions, expected)
    # The fixture's topics are too well apart for predictions to show a
    # changed IDF: the embedding the cells train on is compared as well.
    from kgeo.experiments import _Embeddings
    X_train, X_test = _Embeddings(split)("tfidf", "l2")
    assert abs(X_train - embedding.transform(split.X_train)).max() == 0
    assert abs(X_test - embedding.transform(split.X_test)).max() == 0
    # The embedding's own IDF differs once the test documents join: this data
    # tells the two apart.
    both = MultinomialEmbedding(weighting="tfidf", norm="l2").fit(
        sp.vstack([split.X_train, split.X_test]).tocsr())
    assert (abs(both.transform(split.X_train) - embedding.transform(split.X_train)) > 1e-12).nnz


def test_every_cell_of_a_run_is_its_own_embedding_and_split_order(webkb_data):
    """Each cell of a run equals evaluate_cell on each split (the run shares
    embeddings between cells: each cell must get its own representation and
    normalisation), its predictions are the splits' in split order, and its
    counts are per split."""
    splits, _ = load_zhang2005_splits("webkb", webkb_data)
    results = run_zhang2005("webkb", webkb_data, None, progress=False)
    for representation, normalization, kernel in CELLS:
        cell = results.cell("webkb", representation, normalization, kernel)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", kgeo.EmptyDocumentWarning)
            expected = [evaluate_cell(s, representation, normalization, kernel)
                        for s in splits]
        # evaluate_cell names the documents NGD left out, the run counts them.
        assert sum(int(str(w.message).split()[0]) for w in caught) == (
            sum(cell.n_empty_train) if kernel == "ngd" else 0)
        assert cell.split_accuracy == [a for a, _ in expected]
        np.testing.assert_array_equal(cell.predictions,
                                      np.concatenate([p for _, p in expected]))
        assert cell.n_train == [s.X_train.shape[0] for s in splits] == [50, 49, 50, 50]
        assert cell.n_test == [12, 13, 12, 12]


def test_paper_values_of_cells_only_at_c_1(ng_data, tmp_path):
    """At C = 2 no cell carries the paper's accuracy, and table.md shows none
    (the suite checked only the Z column)."""
    results = run_zhang2005("20ng", ng_data, tmp_path / "out", C=2.0, progress=False,
                            figure=False)
    assert all(c.paper is None for c in results.cells)
    table = (tmp_path / "out" / "table.md").read_text()
    assert "81.94" not in table and "79.76" not in table


# ---------------------------------------------------------------------------
# Significance
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("ngd_wins, ngd_loses", [(30, 5), (5, 30), (10, 2), (10, 5)])
def test_significance_rows_count_ngd_as_system_a(ngd_wins, ngd_loses):
    """k and McNemar's b count the documents NGD alone gets right, Z is
    positive when NGD is better and negative when worse, and the chi-square is
    the continuity-corrected one even when b + c < 25 makes the P-value exact.
    (The fixtures' corpora have almost no discordant documents: none of this
    was pinned.)"""
    from kgeo.experiments import _significance
    n = 60
    y = np.zeros(n, dtype=int)
    ngd = y.copy()
    other = y.copy()
    other[:ngd_wins] = 1                          # NGD right, the other wrong
    ngd[ngd_wins:ngd_wins + ngd_loses] = 1        # NGD wrong, the other right
    cells = []
    for rep in ("tf", "tfidf"):
        cells += [_cell(rep, "l1", "ngd", 1.0, 0, ngd), _cell(rep, "l2", "lin", 1.0, 0, other),
                  _cell(rep, "l2", "ned", 1.0, 0, other)]
    rows = _significance("20ng", cells, y)
    assert len(rows) == 4
    for row in rows:
        assert (row["n"], row["k"]) == (ngd_wins + ngd_loses, ngd_wins)
        assert (row["mcnemar_b"], row["mcnemar_c"]) == (ngd_wins, ngd_loses)
        # Each test's own method (table.md: exact when n <= 12 for the sign
        # test, n < 25 for McNemar's); n = 15 sets the two apart.
        discordant = ngd_wins + ngd_loses
        assert row["sign_method"] == ("binomial" if discordant <= 12 else "normal")
        assert row["mcnemar_method"] == ("binomial" if discordant < 25 else "chi2")
        assert np.sign(row["sign_z"]) == np.sign(ngd_wins - ngd_loses)
        chi2 = (abs(ngd_wins - ngd_loses) - 1) ** 2 / (ngd_wins + ngd_loses)
        assert row["mcnemar_chi2"] == pytest.approx(chi2)


def test_table_says_significant_only_when_both_tests_are_below_0_005(ng_data):
    """The "both P < 0.005" column of table.md (named so: as "P < 0.005" it
    read "no" beside a sign test's P of 0.0025): yes only when the sign test
    and McNemar's test both give P < 0.005; small P-values in e-notation."""
    results = run_zhang2005("20ng", ng_data, None, progress=False)
    cases = [(0.004, 0.001, "yes"), (0.01, 0.001, "no"), (0.001, 0.01, "no"),
             (0.04, 0.04, "no")]
    for row, (sign_p, mcnemar_p, _) in zip(results.significance, cases):
        row["sign_p"], row["mcnemar_p"] = sign_p, mcnemar_p
    results.significance[0]["sign_p"] = 1.234e-4
    table = markdown_report(results)
    lines = [line for line in table.splitlines() if " vs LIN-L2 |" in line or " vs NED-L2 |" in line]
    assert [line.rstrip(" |").rsplit("| ", 1)[1] for line in lines] == [c[2] for c in cases]
    assert "| 1.23e-04" in lines[0]  # not 0.000123
    assert "| chi2 (McNemar) | P (McNemar) | both P < 0.005 |" in table


def test_csv_columns_hold_their_own_values(webkb_data, tmp_path):
    """results_by_split.csv's empty-document counts and significance.csv's
    b, c and P-values are the run's, each in its own column (columns swapped
    two by two passed every check)."""
    out = tmp_path / "out"
    results = run_zhang2005("webkb", webkb_data, out, progress=False, figure=False)
    _, rows = _read_csv(out / "results_by_split.csv")
    ngd = [r for r in rows if (r["representation"], r["normalization"], r["kernel"])
           == ("tf", "l1", "ngd")]
    assert [int(r["n_empty_train"]) for r in ngd] == [2, 1, 2, 2]
    assert [int(r["n_empty_test"]) for r in ngd] == [0, 1, 0, 0]
    assert [int(r["n_train"]) for r in ngd] == [50, 49, 50, 50]
    _, sig = _read_csv(out / "significance.csv")
    for row, r in zip(sig, results.significance):
        assert (int(row["mcnemar_b"]), int(row["mcnemar_c"])) == (r["mcnemar_b"], r["mcnemar_c"])
        assert row["sign_p"] == f"{r['sign_p']:.4g}" and row["mcnemar_p"] == f"{r['mcnemar_p']:.4g}"
    # The significance rows are not all symmetric, so a swap would show.
    assert any(r["mcnemar_b"] != r["mcnemar_c"] for r in results.significance)
    assert any(f"{r['sign_p']:.4g}" != f"{r['mcnemar_p']:.4g}" for r in results.significance)


def test_table_counts_empty_documents_of_the_ngd_cells(webkb_data, tmp_path):
    """table.md counts the NGD cells' documents without a word, cell by cell
    and over the splits a document is in: the fixture's empty pages are one
    of misc (in all four training sets) and one of texas (in three training
    sets and one test set), 7 training and 1 test in each NGD cell, not a
    sum over cells (14 and 2) that reads like 14 documents. The
    per-university table appears for WebKB only."""
    out = tmp_path / "out"
    run_zhang2005("webkb", webkb_data, out, progress=False, figure=False)
    table = (out / "table.md").read_text()
    assert ("Documents without a word in the NGD cells, summed over the 4 splits: TF 7 "
            "training and 1 test; TF-IDF 7 training and 1 test. NGD leaves the training ones "
            "out and predicts the test ones from the intercepts (they count in the "
            "accuracy).") in table
    assert "Accuracy of each held-out university" in table


def test_20ng_table_has_no_per_split_table(ng_data):
    """One split: no table of per-university accuracy."""
    results = run_zhang2005("20ng", ng_data, None, progress=False)
    assert "Accuracy of each held-out university" not in markdown_report(results)


# ---------------------------------------------------------------------------
# C sweep
# ---------------------------------------------------------------------------

def test_c_sweep_table_columns_and_csv_order(ng_data, tmp_path):
    """table.md's sweep rows put each system's accuracy under its own heading
    (NGD-L1, LIN-L2, NED-L2), and c_sweep.csv lists representation by
    representation, C ascending. The fixture's systems tie at every C, so the
    accuracies are set apart before the report is drawn."""
    out = tmp_path / "out"
    results = run_zhang2005("20ng", ng_data, out, c_sweep=True, progress=False, figure=False)
    _, rows = _read_csv(out / "c_sweep.csv")
    keys = [(r["representation"], float(r["C"])) for r in rows]
    assert keys == sorted(keys)
    for i, c in enumerate(results.c_sweep):
        c.accuracy = {"ngd-l1": 90.0, "lin-l2": 11.0, "ned-l2": 22.0}[c.system] + i / 100
    table = markdown_report(results)
    for rep in ("tf", "tfidf"):
        row = next(r for r in results.c_sweep_summary if r["representation"] == rep)
        for C in C_SWEEP_VALUES:
            acc = {c.system: c.accuracy for c in results.c_sweep
                   if c.representation == rep and c.C == C}
            assert (f"| {C:g} | {acc['ngd-l1']:.2f} | {acc['lin-l2']:.2f} | "
                    f"{acc['ned-l2']:.2f} | {row['rankings'][C]} |") in table


def test_describe_sweep_when_ngd_is_best_nowhere():
    """All Cs in ngd_not_best_at: "strictly best at no C", not a list of every C."""
    from kgeo.experiments import _describe_sweep, _sweep_summary
    cells = [_cell(rep, n, k, C, acc) for rep in ("tf", "tfidf") for C in (0.1, 1.0)
             for (n, k), acc in zip([("l1", "ngd"), ("l2", "lin"), ("l2", "ned")],
                                    (50.0, 70.0, 60.0))]
    row = _sweep_summary("20ng", cells, 1.0)[0]
    assert _describe_sweep(row) == "ranking changed across C: no; NGD-L1 strictly best at no C"


# ---------------------------------------------------------------------------
# Arguments and out_dir
# ---------------------------------------------------------------------------

def test_run_refuses_no_dataset_or_a_repeated_one(ng_data, tmp_path):
    """run_zhang2005 itself (not only the command line) refuses [] and a
    dataset named twice, before any work."""
    with pytest.raises(ValueError, match=r"dataset must name at least one of"):
        run_zhang2005([], ng_data, tmp_path / "out")
    with pytest.raises(ValueError, match=r"dataset must not repeat a name, got \['20ng', '20ng'\]"):
        run_zhang2005(["20ng", "20ng"], ng_data, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_numpy_bools_are_flags(ng_data):
    """np.bool_ is as good as bool for c_sweep, progress and figure."""
    results = run_zhang2005("20ng", ng_data, None, c_sweep=np.False_, progress=np.False_,
                            figure=np.True_)
    assert results.c_sweep is None


def test_a_fresh_out_dir_gets_no_warning(ng_data, tmp_path):
    """Outputs this run does not write and that do not exist are no cause for
    the 'not an unchanged output' warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_zhang2005("20ng", ng_data, tmp_path / "out", progress=False, figure=False)


@pytest.mark.parametrize("listed", ["[]", '"results.csv"', "3", "null"])
def test_a_manifest_that_is_not_an_object_vouches_for_nothing(ng_data, tmp_path, listed):
    """.kgeo-outputs.json holding valid JSON of another type: the run goes on,
    removes nothing, and replaces the list."""
    out = tmp_path / "out"
    run_zhang2005("20ng", ng_data, out, progress=False, figure=False, c_sweep=True)
    (out / ".kgeo-outputs.json").write_text(listed)
    with pytest.raises(FileExistsError, match=r"holds 'results.csv'"):
        run_zhang2005("20ng", ng_data, out, progress=False, figure=False)
    with pytest.warns(UserWarning, match=r"holds 'c_sweep.csv', which this run does not write"):
        results = run_zhang2005("20ng", ng_data, out, progress=False, figure=False,
                                overwrite=True)
    assert (out / "c_sweep.csv").is_file()
    assert json.loads((out / ".kgeo-outputs.json").read_text()).keys() == {
        p.name for p in results.files.values()}


def test_progress_bar_counts_every_split(webkb_data, tmp_path, capsys, terminal):
    """WebKB: ten cells on four splits, 40 steps."""
    pytest.importorskip("tqdm")
    run_zhang2005("webkb", webkb_data, None, progress=True)
    assert "40/40" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------

def test_cli_reproduce_passes_every_option(ng_data, tmp_path, monkeypatch):
    """Each option of `kgeo reproduce` reaches run_zhang2005 (vocabulary,
    n_jobs, figure, quiet, C sweep were not checked to arrive), and --n-jobs -1
    (all CPUs) is accepted."""
    calls = []
    monkeypatch.setattr("kgeo.experiments.run_zhang2005",
                        lambda *a, **k: calls.append((a, k)))
    base = ["reproduce", "zhang2005", "--dataset", "20ng", "--data", str(ng_data),
            "--out", str(tmp_path / "o")]
    assert main(base) == 0
    assert main(base + ["--C", "2", "--C-sweep", "--vocabulary", "all", "--n-jobs", "-1",
                        "--no-figure", "--quiet", "--overwrite"]) == 0
    assert calls == [
        ((["20ng"], str(ng_data), str(tmp_path / "o")),
         dict(C=1.0, c_sweep=False, progress=True, vocabulary="train", n_jobs=None,
              figure=True, overwrite=False)),
        ((["20ng"], str(ng_data), str(tmp_path / "o")),
         dict(C=2.0, c_sweep=True, progress=False, vocabulary="all", n_jobs=-1,
              figure=False, overwrite=True)),
    ]


def test_cli_demo_options_reach_the_corpus_with_the_defaults_its_help_states(monkeypatch,
                                                                             capsys):
    """`kgeo demo --help` states each synthetic-corpus option's default, and
    the demo run without options generates exactly that corpus (the
    defaults were neither documented nor checked)."""
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    # argparse wraps lines; the options' descriptions follow "options:"
    text = " ".join(capsys.readouterr().out.split()).split(" options: ")[1]
    stated = {option: re.search(rf"--{option} \w+ [^(]*\(default: (\d+)\)", text)
              for option in ("n-documents", "n-features", "n-classes", "seed")}
    assert all(stated.values()), text
    stated = {option: int(found.group(1)) for option, found in stated.items()}
    calls = []

    def record(*args, **kwargs):  # stops the demo before it trains
        calls.append((args, kwargs))
        raise ValueError("recorded")

    monkeypatch.setattr("kgeo._synthetic.make_topic_corpus", record)
    assert main(["demo"]) == 2
    assert main(["demo", "--n-documents", "201", "--n-features", "301", "--n-classes", "5",
                 "--seed", "7"]) == 2
    assert calls == [
        ((stated["n-documents"], stated["n-features"], stated["n-classes"]),
         dict(random_state=stated["seed"])),
        ((201, 301, 5), dict(random_state=7)),
    ]


def test_cli_demo_splits_60_40_and_scores_every_test_document(monkeypatch, capsys):
    """The synthetic demo trains on the first 60 % and tests on the other
    40 %, and its accuracy counts every test document with NGD on TF L1."""
    from kgeo._synthetic import make_topic_corpus
    predicted = []
    real_predict = SVM.predict

    def recording_predict(self, X):
        out = real_predict(self, X)
        predicted.append(out)
        return out

    monkeypatch.setattr(SVM, "predict", recording_predict)
    assert main(["demo", "--n-documents", "200", "--n-features", "300", "--n-classes", "4",
                 "--seed", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("(120 train / 80 test)")
    _, y = make_topic_corpus(200, 300, 4, random_state=3)
    for line, pred in zip(lines[2:4], predicted):
        assert pred.shape == (80,)
        assert f"{100 * np.mean(pred == y[120:]):.2f}%" in line.split()
    assert lines[2].split()[:3] == ["ngd", "TF", "L1"]
    assert lines[3].split()[:3] == ["linear", "TFIDF", "L2"]


def test_cli_demo_prunes_words_of_one_message(tmp_path, capsys):
    """The demo's 20 Newsgroups vocabulary drops words of two or fewer training
    messages (prune_by_doc_count=2)."""
    _demo_corpus(tmp_path, "test")
    for name in ("1", "2"):  # in two messages: pruned (doc count <= 2)
        (tmp_path / "20news-bydate-train" / "a.x" / name).write_text("apple banana cherry zebra\n")
    assert main(["demo", "--data", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "20 Newsgroups bydate: 6 train / 7 test documents, 6 words")


def test_cli_demo_refuses_an_infinite_C(capsys):
    """--C inf is named as the demo's option, as 0 and nan are."""
    assert main(["demo", "--C", "inf"]) == 2
    assert "kgeo demo: error: --C must be a finite number > 0, got inf" in capsys.readouterr().err


def test_cli_memory_error_exits_2_with_a_message(monkeypatch, capsys):
    """A MemoryError while generating or training ends in exit code 2 and one
    line naming the cause, not a traceback."""
    def no_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 8.00 GiB")

    monkeypatch.setattr("kgeo._synthetic.make_topic_corpus", no_memory)
    assert main(["demo"]) == 2
    assert capsys.readouterr().err == ("kgeo demo: error: not enough memory for these sizes "
                                       "(Unable to allocate 8.00 GiB)\n")


def test_cli_type_error_exits_2_with_a_message(monkeypatch, capsys):
    """A TypeError (a value of the wrong kind reaching kgeo) ends as a
    ValueError does: exit code 2 and one line, not a traceback."""
    def wrong_kind(*args, **kwargs):
        raise TypeError("stoplist must hold strings, got 3")

    monkeypatch.setattr("kgeo._synthetic.make_topic_corpus", wrong_kind)
    assert main(["demo"]) == 2
    assert capsys.readouterr().err == "kgeo demo: error: stoplist must hold strings, got 3\n"


def test_cli_without_a_command_is_a_usage_error(capsys):
    """`kgeo` alone: argparse's usage error (exit 2), not an AttributeError."""
    with pytest.raises(SystemExit) as excinfo:
        main([])
    assert excinfo.value.code == 2
    assert "required" in capsys.readouterr().err


@pytest.mark.parametrize("buffered", [True, False])
def test_cli_demo_into_a_closed_pipe_exits_1_quietly(tmp_path, buffered):
    """stdout closed before the demo prints: exit status 1, nothing on stderr
    (no "Exception ignored ... BrokenPipeError" at exit). `kgeo demo | head -c 1`
    does not reach this path: the demo's few lines sit in stdout's buffer until
    the end, and head is still reading then. Buffered, as stdout to a pipe is by
    default, the pipe fails at kgeo's own flush of stdout; unbuffered
    (PYTHONUNBUFFERED, set on some machines), at the first line printed. The
    child imports this kgeo."""
    import kgeo

    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (os.path.dirname(os.path.dirname(kgeo.__file__)), env.get("PYTHONPATH")) if p)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the demo writes a byte
    try:
        proc = subprocess.run([sys.executable, "-m", "kgeo", "demo", "--n-documents", "200",
                               "--n-classes", "2"], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=300, cwd=tmp_path, env=env)
    finally:
        os.close(write_end)
    assert proc.returncode == 1
    assert proc.stderr == "", proc.stderr


def test_cli_demo_with_stdout_closed_shows_no_traceback(tmp_path):
    """Started with file descriptor 1 closed (`kgeo demo >&-`), Python sets
    sys.stdout to None: kgeo's flush raised AttributeError ('NoneType' object
    has no attribute 'flush') and printed an internal traceback."""
    import kgeo

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (os.path.dirname(os.path.dirname(kgeo.__file__)), env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-c", "import os, sys, runpy; os.close(1); sys.stdout = None; "
                               "sys.argv = ['kgeo', 'demo', '--n-documents', '200', "
                               "'--n-classes', '2']; runpy.run_module('kgeo', run_name='__main__')"],
        stderr=subprocess.PIPE, text=True, timeout=300, cwd=tmp_path, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("command", [["demo"], ["reproduce", "zhang2005", "--dataset", "20ng",
                                                "--data", "d", "--out", "x"]])
def test_cli_interrupted_exits_130_without_a_traceback(command, monkeypatch, capsys):
    """Ctrl-C during a command: one line and the shells' status for SIGINT
    (130), not a traceback through the fit's threads."""
    def interrupted(args):
        raise KeyboardInterrupt
    monkeypatch.setattr("kgeo.__main__._demo", interrupted)
    monkeypatch.setattr("kgeo.__main__._reproduce", interrupted)
    assert main(command) == 130
    assert capsys.readouterr().err == f"kgeo {command[0]}: interrupted\n"


@pytest.mark.skipif(os.name != "posix", reason="ends the process by SIGINT on POSIX only")
def test_cli_interrupted_ends_by_sigint_so_a_calling_script_stops(tmp_path):
    """The console script (and python -m kgeo) ends a run that Ctrl-C
    interrupted by SIGINT, as Python does for an uncaught KeyboardInterrupt:
    exit status 130 told a calling shell that kgeo had handled the signal,
    and a loop of kgeo commands ran on. The message is printed first. The
    child imports this kgeo."""
    import signal

    import kgeo

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (os.path.dirname(os.path.dirname(kgeo.__file__)), env.get("PYTHONPATH")) if p)
    code = ("import sys\nimport kgeo.__main__ as m\n"
            "def stop(args):\n    raise KeyboardInterrupt\n"
            "m._demo = stop\nsys.argv = ['kgeo', 'demo']\nsys.exit(m.console_main())\n")
    proc = subprocess.run([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True,
                          timeout=120, cwd=tmp_path, env=env)
    assert proc.returncode == -signal.SIGINT
    assert proc.stderr == "kgeo demo: interrupted\n"


def test_check_demo_args_boundary():
    """--n-documents of exactly 10 per class is enough."""
    from kgeo.__main__ import _check_demo_args
    _check_demo_args(argparse.Namespace(C=1.0, seed=0, data=None, n_classes=10,
                                        n_features=50, n_documents=100))


def test_check_demo_args_smallest_sizes_and_one_document_too_few():
    """Two classes and two words are enough (the generator's own minimum);
    one document fewer than 10 per class is refused."""
    from kgeo.__main__ import _check_demo_args
    _check_demo_args(argparse.Namespace(C=1.0, seed=0, data=None, n_classes=2,
                                        n_features=2, n_documents=20))
    with pytest.raises(ValueError, match=r"--n-documents must be at least 10 per class \(100 "
                                         r"for --n-classes 10\).* got 99"):
        _check_demo_args(argparse.Namespace(C=1.0, seed=0, data=None, n_classes=10,
                                            n_features=50, n_documents=99))


@pytest.mark.parametrize("C_option, C", [([], 1.0), (["--C", "0.05"], 0.05)])
def test_cli_demo_rows_are_the_two_documented_pipelines(C_option, C, capsys):
    """Each row of the synthetic demo is the README's pipeline, rebuilt here
    from its parts: NGD on L1 TF and a linear SVM on L2 TF-IDF (IDF from the
    60 % training documents), both at --C (1 by default), scored on the other
    40 %; the SVs column is that model's number of support vectors. (A small
    C makes most training documents support vectors, so a C not passed on
    shows in that column.)"""
    assert main(["demo", "--n-documents", "200", "--n-features", "300", "--n-classes", "4",
                 "--seed", "5", *C_option]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[2:]}
    from kgeo._synthetic import make_topic_corpus
    X, y = make_topic_corpus(200, 300, 4, random_state=5)
    for kernel, weighting, norm in (("ngd", "tf", "l1"), ("linear", "tfidf", "l2")):
        embedding = MultinomialEmbedding(weighting=weighting, norm=norm).fit(X[:120])
        model = SVM(kernel=kernel, C=C).fit(embedding.transform(X[:120]), y[:120])
        accuracy = np.mean(model.predict(embedding.transform(X[120:])) == y[120:])
        assert rows[kernel][1:4] == [weighting.upper(), norm.upper(), f"{100 * accuracy:.2f}%"]
        assert rows[kernel][6] == str(model.support_.shape[0]), (rows[kernel], C)


def test_cli_reproduce_os_errors_exit_2(ng_data, tmp_path, capsys):
    """An OSError that is not also a ValueError (--out naming a file) ends in
    exit code 2 and a one-line message, not a traceback."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["reproduce", "zhang2005", "--dataset", "20ng", "--data", str(ng_data),
                 "--out", str(afile), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kgeo reproduce: error: out_dir ") and "is not a directory" in err


def test_table_names_the_vocabulary(ng_data):
    """table.md says where the vocabulary was learnt: all documents with
    vocabulary="all", each split's training documents by default."""
    results = run_zhang2005("20ng", ng_data, None, progress=False, vocabulary="all")
    assert "vocabulary learnt from all documents;" in markdown_report(results)
    results = run_zhang2005("20ng", ng_data, None, progress=False)
    assert ("vocabulary learnt from the training documents of each split;"
            in markdown_report(results))


# ---------------------------------------------------------------------------
# From a second mutation run on experiments.py: output files and the report
# checked on results written by hand, so that every number has a known place
# and a known rounding (the fixtures' systems tie, near 100 %, at every C)
# ---------------------------------------------------------------------------

# One-sided sign test and two-sided exact McNemar for b = 9, c = 3 (n = 12):
# Z = (9 - 6) / (0.5 sqrt(12)) = sqrt(3); P(K >= 9) = (220 + 66 + 12 + 1) / 2^12;
# 2 P(K <= 3) = 2 (1 + 12 + 66 + 220) / 2^12; chi2 = (|9 - 3| - 1)^2 / 12.
_HAND_SIGNIFICANCE = {"n": 12, "k": 9, "sign_z": 3 ** 0.5, "sign_p": 299 / 4096,
                      "sign_method": "binomial", "mcnemar_b": 9, "mcnemar_c": 3,
                      "mcnemar_chi2": 25 / 12, "mcnemar_p": 598 / 4096, "mcnemar_method": "chi2"}
# Sweep accuracies: NGD-L1 first with TF, last with TF-IDF, at every C.
_HAND_SWEEP = {"tf": {"ngd-l1": 90.0, "lin-l2": 80.0, "ned-l2": 70.0},
               "tfidf": {"ngd-l1": 60.0, "lin-l2": 80.0, "ned-l2": 70.0}}


def _hand_results(datasets=("webkb",), C=1.0, sweep=False):
    """A Zhang2005Results filled by hand, no training: two splits per dataset,
    each cell's split accuracies its own (40 + j and 60 + j for the j-th cell,
    plus 10 for the second dataset), split times 0.25 s and 1.5 s."""
    from kgeo.experiments import Zhang2005Results, _sweep_summary
    cells, significance, info = [], [], {}
    sweep_cells, summary = ([], []) if sweep else (None, None)
    names = ["cornell", "texas"]
    for d, dataset in enumerate(datasets):
        info[dataset] = {"rainbow": f"options of {dataset}", "splits": [
            {"name": n, "n_train": 50 - i, "n_test": 12 + i, "n_words": 300}
            for i, n in enumerate(names)]}
        for j, (rep, norm, kernel) in enumerate(CELLS):
            split_accuracy = [40.0 + j + 10 * d, 60.0 + j + 10 * d]
            cells.append(CellResult(
                dataset=dataset, representation=rep, normalization=norm, kernel=kernel, C=C,
                accuracy=float(np.mean(split_accuracy)), split_names=names,
                split_accuracy=split_accuracy, split_seconds=[0.25, 1.5], n_train=[50, 49],
                n_test=[12, 13], n_empty_train=[2, 1], n_empty_test=[0, 1],
                predictions=np.zeros(25),
                paper=PAPER_ACCURACY[dataset][rep, norm, kernel] if C == 1 else None))
        for rep in ("tf", "tfidf"):
            for other in ("lin-l2", "ned-l2"):
                significance.append(dict(_HAND_SIGNIFICANCE, dataset=dataset, representation=rep,
                                         system_a="ngd-l1", system_b=other, paper_sign_z=None,
                                         C=C))
        if sweep:
            swept = []
            for rep in ("tf", "tfidf"):
                for value in sorted(set(C_SWEEP_VALUES) | {C}):
                    for system, acc in _HAND_SWEEP[rep].items():
                        kernel, norm = system.split("-")
                        swept.append(CellResult(
                            dataset=dataset, representation=rep, normalization=norm,
                            kernel=kernel, C=value, accuracy=acc - d, split_names=names,
                            split_accuracy=[acc - d] * 2, split_seconds=[0.25, 1.5],
                            n_train=[50, 49], n_test=[12, 13], n_empty_train=[0, 0],
                            n_empty_test=[0, 0], predictions=np.zeros(25)))
            sweep_cells += swept
            summary += _sweep_summary(dataset, swept, C)
    return Zhang2005Results(datasets=list(datasets), C=C, vocabulary="train", cells=cells,
                            significance=significance, c_sweep=sweep_cells,
                            c_sweep_summary=summary, y_true={}, info=info, files={},
                            seconds=12.0)


def test_write_outputs_checks_its_arguments_as_run_zhang2005_does(tmp_path):
    # Called alone, it failed on a missing folder with FileNotFoundError
    # naming one of its temporary files, and on None with AttributeError.
    from kgeo.experiments import write_outputs
    files = write_outputs(_hand_results(), tmp_path / "new" / "folder", figure=False)
    assert all(path.parent == tmp_path / "new" / "folder" for path in files.values())
    with pytest.raises(TypeError, match="results must be the Zhang2005Results run_zhang2005 "
                                        "returns, got NoneType"):
        write_outputs(None, tmp_path)
    # The report's two other writers crashed with AttributeError.
    from kgeo.experiments import markdown_report, plot_accuracy
    for call in (lambda: markdown_report({}), lambda: plot_accuracy(None, tmp_path / "a.png")):
        with pytest.raises(TypeError, match="results must be the Zhang2005Results"):
            call()
    (tmp_path / "a_file").write_text("")
    with pytest.raises(NotADirectoryError, match="exists and is not a directory"):
        write_outputs(_hand_results(), tmp_path / "a_file")


def test_output_files_round_and_place_each_value(tmp_path):
    """Each CSV column holds its own value at its own precision: seconds with
    2 decimals and summed over the splits, per-split accuracy and time (not the
    cell's mean and total), n before k, Z and chi2 with 3 decimals, C as
    "1" not "1.0", and each representation's own rank in c_sweep.csv."""
    from kgeo.experiments import write_outputs
    write_outputs(_hand_results(sweep=True), tmp_path, figure=False)
    _, rows = _read_csv(tmp_path / "results.csv")
    assert {(r["seconds"], r["n_test"], r["n_empty_test"]) for r in rows} == {("1.75", "25", "1")}
    _, rows = _read_csv(tmp_path / "results_by_split.csv")
    table = [r for r in rows if r["C"] == "1"]
    assert len(table) == 20 and len(rows) == 20 + 2 * 3 * 2 * (len(C_SWEEP_VALUES) - 1)
    for j, (r1, r2) in enumerate(zip(table[::2], table[1::2])):
        assert (r1["split"], r1["accuracy"], r1["seconds"]) == ("cornell", f"{40 + j}.00", "0.25")
        assert (r2["split"], r2["accuracy"], r2["seconds"]) == ("texas", f"{60 + j}.00", "1.50")
    _, rows = _read_csv(tmp_path / "significance.csv")
    assert len(rows) == 4
    for r in rows:
        assert (r["n"], r["k"], r["mcnemar_b"], r["mcnemar_c"]) == ("12", "9", "9", "3")
        assert (r["sign_z"], r["sign_p"], r["mcnemar_chi2"], r["mcnemar_p"]) == (
            "1.732", "0.073", "2.083", "0.146")  # :.4g drops trailing zeros
        assert (r["sign_method"], r["mcnemar_method"], r["C"]) == ("binomial", "chi2", "1")
    _, rows = _read_csv(tmp_path / "c_sweep.csv")
    assert {r["C"] for r in rows} == {"0.001", "0.01", "0.1", "1", "10", "100", "1000"}
    expected_rank = {("tf", "ngd"): "1", ("tf", "lin"): "2", ("tf", "ned"): "3",
                     ("tfidf", "ngd"): "3", ("tfidf", "lin"): "1", ("tfidf", "ned"): "2"}
    for r in rows:
        assert r["rank"] == expected_rank[r["representation"], r["kernel"]], r


def test_report_per_split_accuracy_and_empty_training_documents():
    """table.md's per-university table gives each split's accuracy, and the
    NGD cells' documents without a word are reported when only training ones
    are empty (no empty test document)."""
    results = _hand_results()
    table = markdown_report(results)
    assert "| cell | cornell | texas |" in table
    assert "| TF L1 NGD | 42.00 | 62.00 |" in table
    assert "| TF-IDF L2 NED | 49.00 | 69.00 |" in table
    for c in results.cells:
        c.n_empty_test = [0, 0]
    assert ("Documents without a word in the NGD cells, summed over the 2 splits: TF 3 "
            "training and 0 test; TF-IDF 3 training and 0 test.") in markdown_report(results)


def test_report_p_values_exact_marks_and_the_0_005_threshold():
    """P-values with 3 significant digits (e-notation below 0.001, not at
    it); "(exact)" beside each P-value whose own method is binomial; P equal
    to 0.005 is not below 0.005."""
    from kgeo.experiments import _fmt_p
    assert [_fmt_p(p) for p in (0.001, 0.012345, 0.5, 0.00099)] == [
        "0.001", "0.0123", "0.5", "9.90e-04"]
    results = _hand_results()
    line = next(line for line in markdown_report(results).splitlines() if " vs LIN-L2 |" in line)
    # sign test binomial, McNemar chi-square
    assert line == ("| TF | NGD-L1 vs LIN-L2 | 12 | 9 | 1.73 |  | 0.073 (exact) | 2.08 | "
                    "0.146 | no |")
    row = results.significance[0]
    row["sign_method"], row["mcnemar_method"] = "normal", "binomial"
    row["sign_p"], row["mcnemar_p"] = 0.005, 0.001
    line = next(line for line in markdown_report(results).splitlines() if " vs LIN-L2 |" in line)
    assert line.endswith("| 0.005 | 2.08 | 0.001 (exact) | no |")
    row["sign_p"] = 0.0049
    line = next(line for line in markdown_report(results).splitlines() if " vs LIN-L2 |" in line)
    assert line.endswith("| 0.0049 | 2.08 | 0.001 (exact) | yes |")


def test_report_below_c_1_says_the_paper_is_not_shown():
    """C < 1 as well as C > 1: the paper's values (C = 1) are left out, and
    the report says so."""
    table = markdown_report(_hand_results(C=0.5))
    assert "C = 0.5;" in table
    assert "The paper's values are for C = 1 and are not shown." in table
    assert "91.88" not in table


def test_report_and_summary_keep_each_dataset_to_its_section():
    """With two datasets, each section of table.md and of the printed summary
    holds its own dataset's significance rows, sweep rows (C ascending) and
    cells only."""
    from kgeo.experiments import _summary_text
    results = _hand_results(datasets=("20ng", "webkb"), sweep=True)
    table = markdown_report(results)
    sections = table.split("\n## ")[1:]
    assert [s.splitlines()[0] for s in sections] == ["20 Newsgroups (Table 2)", "WebKB (Table 1)"]
    ascending = ["0.001", "0.01", "0.1", "1", "10", "100", "1000"]
    for d, section in enumerate(sections):
        lines = section.splitlines()
        assert sum(" vs " in line for line in lines) == 4
        sweep_rows = [line.split(" | ")[:2] for line in lines
                      if re.match(r"\| [0-9.]+ \| ", line)]
        assert [C.lstrip("| ") for C, _ in sweep_rows] == ascending * 2
        assert {ngd for _, ngd in sweep_rows} == {f"{90.0 - d:.2f}", f"{60.0 - d:.2f}"}
    summary = _summary_text(results).splitlines()
    assert summary[0] == "20 Newsgroups (Table 2): ours / paper (difference)"
    assert summary[17] == "WebKB (Table 1): ours / paper (difference)"
    for d, block in enumerate((summary[1:17], summary[18:34])):
        cells, rest = block[:10], block[10:]
        assert [float(re.match(r"  TF(-IDF)? L\d \w+ +(\d+\.\d+)", line)[2])
                for line in cells] == [50.0 + j + 10 * d for j in range(10)]
        assert sum(" vs " in line for line in rest) == 4
        assert sum("C sweep" in line for line in rest) == 2


def test_results_lookup_and_properties():
    """cell() refuses a cell the run does not hold; seconds sums the splits;
    ranking_changed is None without a sweep and true when any dataset's
    ranking changed."""
    results = _hand_results(sweep=True)
    assert results.cell("webkb", "tf", "l2", "lin").accuracy == 53.0
    with pytest.raises(KeyError, match=r"no cell \('webkb', 'tf', 'l2', 'ngd'\)"):
        results.cell("webkb", "tf", "l2", "ngd")
    assert results.cells[0].seconds == 1.75
    assert results.ranking_changed is False
    results.c_sweep_summary[1]["ranking_changed"] = True
    assert results.ranking_changed is True
    assert _hand_results().ranking_changed is None


def test_20ng_test_documents_take_the_training_vocabulary(tmp_path):
    """vocabulary="train": test messages are counted in the training messages'
    vocabulary; "nebula", in three test messages only (enough to pass the
    pruning over the whole corpus), gets no column."""
    data = tmp_path / "data"
    (data / "20news-bydate").mkdir(parents=True)
    make_20ng_tar(data / "20news-bydate" / "20news-bydate.tar.gz",
                  extra_test=[("sci.space", "nebula nebula orbit\n")] * 3)
    split = load_zhang2005_splits("20ng", data)[0][0]
    docs, which = _20ng_docs(data)
    train = [d for d, s in zip(docs, which) if s == "train"]
    test = [d for d, s in zip(docs, which) if s == "test"]
    paper = RainbowVectorizer(stoplist="smart", prune_by_doc_count=2).fit(train)
    assert "nebula" not in paper.vocabulary_
    assert split.X_test.shape == (len(test), len(paper.vocabulary_))
    assert (split.X_test != paper.transform(test)).nnz == 0


def test_predict_from_intercepts_breaks_ties_as_the_model_does():
    """With break_ties=True, SVM.predict gives a three-way tie of the votes
    to the class of the largest ovr decision value; the helper gave it to
    the first class (a review found 4 disagreements in 400 random fits)."""
    X = sp.csr_matrix(np.array([[3, 1], [1, 3], [2, 2], [3, 0], [0, 3], [2, 1]], dtype=float))
    model = SVM(kernel="linear", break_ties=True).fit(X, [5, 7, 9, 5, 7, 9])
    # Pairs (5, 7), (5, 9), (7, 9): 5 beats 7, 9 beats 5, 7 beats 9; the
    # sums of decision values are 0.5 - 3 for 5, -0.5 + 3 for 7, 3 - 3 for 9.
    model.intercept_ = np.array([0.5, -3.0, 3.0])
    np.testing.assert_array_equal(predict_from_intercepts(model, 2), [7, 7])
    np.testing.assert_array_equal(model.predict(sp.csr_matrix((2, 2))), [7, 7])
    model.break_ties = False
    np.testing.assert_array_equal(predict_from_intercepts(model, 2), [5, 5])
    np.testing.assert_array_equal(model.predict(sp.csr_matrix((2, 2))), [5, 5])


def test_predict_from_intercepts_breaks_ties_by_the_signed_ovr_sums():
    """Class t's ovr sum takes -b of pair (s, t): with b = (3, -0.5, 0.5) for
    pairs (5, 7), (5, 9), (7, 9) the votes tie 1-1-1 and the sums are 2.5
    for 5, -2.5 for 7 and 0 for 9. (The test above gives 7 whichever sign t
    takes: mutation testing.)"""
    X = sp.csr_matrix(np.array([[3, 1], [1, 3], [2, 2], [3, 0], [0, 3], [2, 1]], dtype=float))
    model = SVM(kernel="linear", break_ties=True).fit(X, [5, 7, 9, 5, 7, 9])
    model.intercept_ = np.array([3.0, -0.5, 0.5])
    np.testing.assert_array_equal(model.predict(sp.csr_matrix((2, 2))), [5, 5])
    np.testing.assert_array_equal(predict_from_intercepts(model, 2), [5, 5])


def test_predict_from_intercepts_breaks_a_tie_to_the_first_class():
    """Three classes that beat each other in a circle (0 over 1, 2 over 0,
    1 over 2) get one vote each: the first class wins, as in LIBSVM and in
    SVM.predict on a zero row."""
    X = sp.csr_matrix(np.array([[3, 1], [1, 3], [2, 2], [3, 0], [0, 3], [2, 1]], dtype=float))
    model = SVM(kernel="linear").fit(X, [5, 7, 9, 5, 7, 9])
    model.intercept_ = np.array([1.0, -1.0, 1.0])  # pairs (5, 7), (5, 9), (7, 9)
    np.testing.assert_array_equal(predict_from_intercepts(model, 2), [5, 5])
    np.testing.assert_array_equal(model.predict(sp.csr_matrix((2, 2))), [5, 5])


def test_ngd_trains_without_the_documents_that_have_no_word():
    """NGD's training set leaves out the rows without a word (they have no
    point on the simplex): the model is the one fitted on the other rows.
    LIN keeps them. A row of one word is not empty, in the counts either.
    Where that leaves a class without documents, SVM.fit's own message says
    so (the rows were cut out first, and the fit refused "only 1 class", or
    "0 sample(s)", of a matrix the caller never passed)."""
    from kgeo.experiments import _fit_predict, _fit_without_empty_documents
    X = sp.csr_matrix(np.array([[2, 1, 0], [0, 0, 0], [1, 3, 1], [0, 0, 5], [0, 0, 0],
                                [3, 0, 1], [1, 0, 3], [2, 2, 0]], dtype=float))
    y = np.array([0, 1, 0, 1, 0, 0, 1, 1])
    keep = [0, 2, 3, 5, 6, 7]
    model = SVM(kernel="ngd")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the caller reports the count instead
        assert _fit_without_empty_documents(model, X, list(y)) == 2
    reference = SVM(kernel="ngd").fit(X[keep], y[keep])
    assert model.shape_fit_ == reference.shape_fit_ == (6, 3)
    np.testing.assert_array_equal(model.intercept_, reference.intercept_)
    # A third class whose every document is empty is left out with them.
    three = sp.vstack([X, sp.csr_matrix((2, 3))]).tocsr()
    model = SVM(kernel="ngd")
    assert _fit_without_empty_documents(model, three, np.append(y, [2, 2])) == 4
    assert model.classes_.tolist() == [0, 1]
    np.testing.assert_array_equal(model.intercept_, reference.intercept_)
    for emptied, lost in (([1, 3, 6, 7], 1), (range(8), 0)):
        X_emptied = X.toarray()
        X_emptied[list(emptied)] = 0.0
        with pytest.raises(ValueError, match=f"every document of class {lost} is without a "
                                             f"word"):
            _fit_without_empty_documents(SVM(kernel="ngd"), sp.csr_matrix(X_emptied), y)
    linear = SVM(kernel="linear")
    assert _fit_without_empty_documents(linear, X, y) == 0 and linear.shape_fit_ == (8, 3)
    X_test = sp.csr_matrix(np.array([[0, 0, 0], [4, 0, 0], [1, 1, 1]], dtype=float))
    outcome = _fit_predict("ngd", 1.0, X, y, X_test, None)
    assert (outcome.n_empty_train, outcome.n_empty_test) == (2, 1)


def test_progress_lines_give_each_splits_accuracy_and_ngds_empty_documents(
        webkb_data, monkeypatch, capsys):
    """One printed line per cell and split, with that split's accuracy to 2
    decimals; the empty texas test page is "predicted from b*" in the NGD
    lines only (LIN and NED take it as a zero row)."""
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    results = run_zhang2005("webkb", webkb_data, None, progress=True)
    lines = [line for line in capsys.readouterr().out.splitlines() if " C=1: " in line]
    assert len(lines) == 40
    for c in results.cells:
        for name, accuracy in zip(c.split_names, c.split_accuracy):
            head = (f"webkb {name} {c.representation.upper()} {c.normalization.upper()} "
                    f"{c.kernel.upper()} C=1: {accuracy:.2f}% (")
            line = next(line for line in lines if line.startswith(head))
            assert line.endswith(" s, 1 empty test document(s) predicted from b*)") == (
                name == "texas" and c.kernel == "ngd"), line


def test_progress_bar_counts_the_c_sweep(ng_data, capsys, terminal):
    """20NG with the sweep: 10 cells, then 3 systems x 2 representations at
    the 6 other values of C: 46 steps."""
    pytest.importorskip("tqdm")
    run_zhang2005("20ng", ng_data, None, progress=True, c_sweep=True)
    counters = re.findall(r"(\d+)/(\d+) \[", capsys.readouterr().err)
    assert ("46", "46") in counters and {total for _, total in counters} == {"46"}


def test_symlinks_named_as_outputs_are_replaced_or_left_never_followed(ng_data, tmp_path,
                                                                        monkeypatch):
    """A link named table.md is replaced like a file with overwrite=True
    (without, it stops the run: no list vouches for a link), whatever the
    file it points to allows (os.replace never writes through it). A link named
    c_sweep.csv that this run does not write is left, with the warning,
    whether it dangles or points at a copy of the earlier run's own file
    that the list of outputs vouches for."""
    out, theirs = tmp_path / "out", tmp_path / "theirs.md"
    out.mkdir()
    theirs.write_text("their table\n")
    (out / "table.md").symlink_to(theirs)
    real_access = os.access  # the tests run as root: a mode of 0o444 would not show
    monkeypatch.setattr("kgeo.experiments.os.access", lambda path, mode, **kw: (
        Path(path).name != "table.md" and real_access(path, mode, **kw)))
    with pytest.raises(FileExistsError, match=r"holds 'table.md'"):
        run_zhang2005("20ng", ng_data, out, progress=False, figure=False)
    assert (out / "table.md").is_symlink()
    run_zhang2005("20ng", ng_data, out, progress=False, figure=False, overwrite=True)
    assert not (out / "table.md").is_symlink() and theirs.read_text() == "their table\n"
    monkeypatch.undo()
    (out / "c_sweep.csv").symlink_to(tmp_path / "nowhere.csv")
    with pytest.warns(UserWarning, match=r"holds 'c_sweep.csv', which this run does not write"):
        run_zhang2005("20ng", ng_data, out, progress=False, figure=False)
    assert (out / "c_sweep.csv").is_symlink()
    (out / "c_sweep.csv").unlink()
    run_zhang2005("20ng", ng_data, out, progress=False, figure=False, c_sweep=True)
    kept = tmp_path / "kept.csv"
    os.replace(out / "c_sweep.csv", kept)
    (out / "c_sweep.csv").symlink_to(kept)  # the same bytes as listed
    with pytest.warns(UserWarning, match=r"holds 'c_sweep.csv', which this run does not write"):
        run_zhang2005("20ng", ng_data, out, progress=False, figure=False)
    assert (out / "c_sweep.csv").is_symlink() and kept.is_file()


def test_progress_bar_of_each_dataset_is_closed_before_the_next(tmp_path, capsys, terminal):
    """Two datasets: the first bar is closed before the second starts, so the
    second is drawn on its own line, not one line down with cursor movements
    (what tqdm does for a bar started while another is still open)."""
    pytest.importorskip("tqdm")
    data = tmp_path / "data"
    (data / "20news-bydate").mkdir(parents=True)
    make_20ng_tar(data / "20news-bydate" / "20news-bydate.tar.gz")
    make_webkb_tree(data)
    run_zhang2005(["20ng", "webkb"], data, None, progress=True)
    err = capsys.readouterr().err
    assert "10/10" in err and "40/40" in err
    assert "\x1b[A" not in err and err.count("\n") == 2  # one finished line per bar


# ---------------------------------------------------------------------------
# From a third mutation run on experiments.py: the fixtures' corpora are so
# well separated that every kernel and every C scores near 100 %, so a cell
# trained with another kernel or C, and labels pooled in another order, went
# unseen. These tests use a noisy split where the alternatives differ
# (checked), and compare each cell with a plain SVM on a plain embedding.
# ---------------------------------------------------------------------------

_KERNEL = {"lin": "linear", "ned": "ned", "ngd": "ngd"}


def _noisy_split(seed=0, n_train=90, n_test=90, n_words=40, n_classes=3):
    """Overlapping topic multinomials: the kernels and the Cs disagree here."""
    rng = np.random.default_rng(seed)
    y_train = np.arange(n_train) % n_classes
    y_test = np.arange(n_test) % n_classes
    topic = (np.arange(n_words) % n_classes)

    def docs(y):
        rate = 0.4 + 0.5 * (topic == y[:, None]) + rng.random((y.size, n_words))
        X = rng.poisson(rate * rng.uniform(0.2, 3.0, (y.size, 1))).astype(float)
        X[X.sum(1) == 0, 0] = 1.0          # no empty document
        return sp.csr_matrix(X)

    return Split("s", docs(y_train), y_train, docs(y_test), y_test)


def _reference_predictions(split, representation, normalization, kernel, C):
    emb = MultinomialEmbedding(weighting=representation, norm=normalization).set_output(
        transform="default").fit(split.X_train)
    model = SVM(kernel=_KERNEL[kernel], C=C).fit(emb.transform(split.X_train), split.y_train)
    return model.predict(emb.transform(split.X_test))


@pytest.mark.parametrize("C", [1.0, 0.01, 100.0])
def test_every_cell_is_the_papers_kernel_at_the_given_C(C):
    """Each cell trains the kernel the paper names (LIN <x,x'>, NED -||x-x'||,
    NGD -2 arccos) with the C asked for: its predictions are those of a plain
    SVM with that kernel and C on the cell's embedding. The data are noisy
    enough that other kernels and other Cs predict otherwise (checked)."""
    split = _noisy_split()
    for representation, normalization, kernel in CELLS:
        _, predictions = evaluate_cell(split, representation, normalization, kernel, C=C)
        expected = _reference_predictions(split, representation, normalization, kernel, C)
        np.testing.assert_array_equal(predictions, expected,
                                      err_msg=f"{(representation, normalization, kernel)}")
    # The test has power: another kernel or another C changes the predictions.
    for representation, normalization, kernel, other in (("tf", "l2", "ned", "linear"),
                                                         ("tf", "l1", "ngd", "bhattacharyya")):
        emb = MultinomialEmbedding(weighting=representation, norm=normalization).set_output(
            transform="default").fit(split.X_train)
        A, B = emb.transform(split.X_train), emb.transform(split.X_test)
        assert (SVM(kernel=other, C=C).fit(A, split.y_train).predict(B)
                != _reference_predictions(split, representation, normalization, kernel, C)).any()
    assert (_reference_predictions(split, "tf", "l2", "lin", C)
            != _reference_predictions(split, "tf", "l2", "lin", 0.01 if C == 1 else 1.0)).any()


def test_c_sweep_cells_are_trained_at_their_own_C(tmp_path, monkeypatch):
    """Footnote 3: each sweep cell is an SVM at that cell's C. On a noisy
    split the swept accuracies equal a plain SVM's at each C, and they are
    not all the same."""
    data = tmp_path / "data"
    (data / "20news-bydate").mkdir(parents=True)
    make_20ng_tar(data / "20news-bydate" / "20news-bydate.tar.gz")   # for the locator
    split = _noisy_split(seed=1)
    info = {"n_documents": 180, "n_classes": 3, "target_names": ["a", "b", "c"],
            "rainbow": "", "seconds": 0.0}
    monkeypatch.setattr("kgeo.experiments.load_zhang2005_splits",
                        lambda *a, **k: ([split], dict(info)))
    results = run_zhang2005("20ng", data, None, progress=False, c_sweep=True)
    seen = set()
    for cell in results.c_sweep:
        expected = _reference_predictions(split, cell.representation, cell.normalization,
                                          cell.kernel, cell.C)
        np.testing.assert_array_equal(cell.predictions, expected)
        seen.add(round(cell.accuracy, 6))
    assert len(seen) > 3


def test_predict_from_intercepts_keeps_the_votes_first_with_break_ties():
    """break_ties only breaks ties of the votes (scikit-learn squashes the
    ovr sums into (-1/3, 1/3)): a class with two votes beats one with one
    vote whatever that one's summed intercepts. Pairs (0, 1), (0, 2), (1, 2)."""
    X = sp.csr_matrix(np.array([[3, 1], [1, 3], [2, 2], [3, 0], [0, 3], [2, 1]], dtype=float))
    model = SVM(kernel="linear", break_ties=True).fit(X, [0, 1, 2, 0, 1, 2])
    model.intercept_ = np.array([0.1, 0.1, 10.0])   # 0 wins twice; 1 has the largest sum
    assert model.predict(sp.csr_matrix((1, 2))).tolist() == [0]
    assert predict_from_intercepts(model, 1).tolist() == [0]


def test_webkb_keeps_the_four_classes_of_the_paper(tmp_path):
    """WebKB: the classes student, faculty, course and project only; pages of
    other, department and staff (in the real corpus "other" is the largest
    class) are in no split."""
    data = make_webkb_tree(tmp_path / "data")
    for cls in ("other", "department", "staff"):
        for univ in ("cornell", "misc", "texas", "washington", "wisconsin"):
            folder = data / "webkb" / cls / univ
            folder.mkdir(parents=True)
            (folder / f"http:^^www.cs.{univ}.edu^{cls}.html").write_bytes(
                b"Content-Type: text/html\r\n\r\n"
                b"<html><body><p>misc words here</p></body></html>\n")
    splits, info = load_zhang2005_splits("webkb", data)
    assert info["target_names"] == ["student", "faculty", "course", "project"]
    assert info["n_classes"] == 4 and info["n_documents"] == 4 * 5 * 3
    for s in splits:
        assert s.X_test.shape[0] == 12 and s.X_train.shape[0] == 48


def test_predict_from_intercepts_ovr_sums_take_minus_b_for_the_second_class():
    """A 1-1-1 tie broken by the ovr sums, where the second class's -b decides:
    b = (-5, 1, -1) for pairs (0, 1), (0, 2), (1, 2) gives the sums -4, 4 and 0
    (class 1); without the -b terms they would be -4, -1, 0 (class 2)."""
    X = sp.csr_matrix(np.array([[3, 1], [1, 3], [2, 2], [3, 0], [0, 3], [2, 1]], dtype=float))
    model = SVM(kernel="linear", break_ties=True).fit(X, [0, 1, 2, 0, 1, 2])
    model.intercept_ = np.array([-5.0, 1.0, -1.0])
    assert model.predict(sp.csr_matrix((1, 2))).tolist() == [1]
    assert predict_from_intercepts(model, 1).tolist() == [1]


def test_webkb_significance_pools_the_labels_in_split_order(tmp_path):
    """Table 3 pools the four held-out universities: y_true is their test
    labels in split order (the order of each cell's predictions), and n, k
    and McNemar's b, c count against those labels."""
    data = make_webkb_tree(tmp_path / "data", empty_pages={("course", "texas")})
    splits, _ = load_zhang2005_splits("webkb", data)
    y = np.concatenate([s.y_test for s in splits])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kgeo.EmptyDocumentWarning)
        results = run_zhang2005("webkb", data, None, progress=False)
    np.testing.assert_array_equal(results.y_true["webkb"], y)
    for row in results.significance:
        a = results.cell("webkb", row["representation"], "l1", "ngd").predictions
        kernel_b, norm_b = row["system_b"].split("-")
        b = results.cell("webkb", row["representation"], norm_b, kernel_b).predictions
        right_a, right_b = a == y, b == y
        assert (row["n"], row["k"]) == (int((right_a != right_b).sum()),
                                        int((right_a & ~right_b).sum()))
        assert (row["mcnemar_b"], row["mcnemar_c"]) == (int((right_a & ~right_b).sum()),
                                                        int((~right_a & right_b).sum()))


def test_lin_and_ned_cells_count_their_empty_training_documents(tmp_path):
    """n_empty_train is reported for every kernel (LIN and NED take the
    documents as zero rows, NGD leaves them out): the fixture's empty misc
    page is in every training set, the empty texas page in three."""
    data = make_webkb_tree(tmp_path / "data", empty_pages={("course", "texas"),
                                                           ("student", "misc")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kgeo.EmptyDocumentWarning)
        results = run_zhang2005("webkb", data, None, progress=False)
    for representation, normalization, kernel in CELLS:
        cell = results.cell("webkb", representation, normalization, kernel)
        assert cell.n_empty_train == [2, 1, 2, 2], (representation, normalization, kernel)


def test_c_sweep_at_another_C_keeps_every_sweep_value(tmp_path):
    """With C = 2 the sweep still trains every C of footnote 3 (C = 1
    included) besides the table's C, and results_by_split.csv lists the
    table's ten cells once at C = 2 and the three swept systems at each of
    the seven sweep values."""
    data = tmp_path / "data"
    (data / "20news-bydate").mkdir(parents=True)
    make_20ng_tar(data / "20news-bydate" / "20news-bydate.tar.gz")
    out = tmp_path / "out"
    results = run_zhang2005("20ng", data, out, C=2.0, c_sweep=True, progress=False,
                            figure=False)
    assert sorted({c.C for c in results.c_sweep}) == sorted(set(C_SWEEP_VALUES) | {2.0})
    with open(out / "results_by_split.csv", newline="") as fh:
        by_C = Counter(row["C"] for row in csv.DictReader(fh))
    assert by_C == {"2": 10, **{f"{C:g}": 6 for C in C_SWEEP_VALUES}}


def test_without_matplotlib_a_foreign_accuracy_png_does_not_stop_the_run(tmp_path,
                                                                         monkeypatch):
    """No figure can be drawn, so accuracy.png is no output of this run: a file
    of that name kgeo did not write is left (with a warning), not a reason to
    refuse the run."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    data = tmp_path / "data"
    (data / "20news-bydate").mkdir(parents=True)
    make_20ng_tar(data / "20news-bydate" / "20news-bydate.tar.gz")
    out = tmp_path / "out"
    out.mkdir()
    (out / "accuracy.png").write_bytes(b"mine")
    with pytest.warns(UserWarning, match="holds 'accuracy.png', which this run does not write"):
        run_zhang2005("20ng", data, out, progress=False)
    assert (out / "accuracy.png").read_bytes() == b"mine"


def test_rankings_tell_apart_accuracies_a_thousandth_of_a_point_apart():
    """Ties are exact ties up to rounding (the ranking's tolerance is for
    float noise): WebKB's means of four split accuracies can differ by far
    less than 0.01 points, and such a difference is a rank."""
    from kgeo.experiments import _sweep_summary

    def cell(rep, norm, kernel, C, acc):
        return CellResult(dataset="webkb", representation=rep, normalization=norm,
                          kernel=kernel, C=C, accuracy=acc, split_names=["a"],
                          split_accuracy=[acc], split_seconds=[0.0], n_train=[1], n_test=[1],
                          n_empty_train=[0], n_empty_test=[0], predictions=np.zeros(1))
    # 100 (1/1000 - 1/1004) / 4 = 0.0001 points apart: not a tie
    ngd = 90.0 + 100 * (1 / 1000) / 4
    lin = 90.0 + 100 * (1 / 1004) / 4
    cells = [cell(rep, n, k, 1.0, acc) for rep in ("tf", "tfidf")
             for (n, k), acc in zip([("l1", "ngd"), ("l2", "lin"), ("l2", "ned")],
                                    (ngd, lin, 50.0))]
    row = _sweep_summary("webkb", cells, 1.0)[0]
    assert row["rankings"][1.0] == "ngd-l1 > lin-l2 > ned-l2"
    assert row["ngd_best_everywhere"]


# A mutation review of __main__.py (helper 146): the demo's test messages
# counted over a vocabulary of their own went through.

def test_cli_demo_counts_test_messages_in_the_training_vocabulary(tmp_path, capsys):
    # The other tests' test messages use exactly the training words, so test
    # messages counted over a vocabulary of their own went unseen. Here
    # the test messages of a.x add "kiwi" (3 messages: not pruned if the test
    # set had its own vocabulary); the demo must ignore it.
    for split in ("train", "test"):
        for group, words in (("a.x", "apple banana cherry"), ("b.y", "delta eagle falcon")):
            folder = tmp_path / f"20news-bydate-{split}" / group
            folder.mkdir(parents=True)
            for i in range(3):
                extra = " kiwi" if split == "test" and group == "a.x" else ""
                (folder / str(i + 1)).write_text(words + extra + "\n")
    assert main(["demo", "--data", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "20 Newsgroups bydate: 6 train / 6 test documents, 6 words"
    assert all("100.00%" in line for line in lines[2:4]), lines


# ---------------------------------------------------------------------------
# From a mutation review of experiments.py (helper 172: 94 mutants, 70
# killed, 5 equivalent): a test for each of its 19 survivors, and for the
# defects it found.
# ---------------------------------------------------------------------------

def test_a_dangling_link_named_as_an_output_stops_the_run(ng_data, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.csv").symlink_to(tmp_path / "nowhere.csv")
    with pytest.raises(FileExistsError, match="holds 'results.csv'"):
        run_zhang2005("20ng", ng_data, out, progress=False, figure=False)
    assert (out / "results.csv").is_symlink()


@pytest.mark.parametrize("name, kwargs", [("c_sweep.csv", {"c_sweep": True}),
                                          ("accuracy.png", {"figure": True})])
def test_a_foreign_sweep_or_figure_stops_the_run_before_its_training(
        ng_data, tmp_path, monkeypatch, name, kwargs):
    if name == "accuracy.png":
        pytest.importorskip("matplotlib")
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_bytes(b"mine")
    monkeypatch.setattr("kgeo.experiments.load_zhang2005_splits",
                        lambda *a, **k: pytest.fail("the training started"))
    with pytest.raises(FileExistsError, match=name):
        run_zhang2005("20ng", ng_data, out, progress=False, **kwargs)
    assert (out / name).read_bytes() == b"mine"


def test_the_manifest_lists_only_this_runs_files(tmp_path):
    write_outputs(_hand_results(sweep=True), tmp_path, figure=False)
    write_outputs(_hand_results(), tmp_path, figure=False)
    assert not (tmp_path / "c_sweep.csv").exists()
    assert set(json.loads((tmp_path / ".kgeo-outputs.json").read_text())) == {
        "results.csv", "results_by_split.csv", "significance.csv", "table.md"}


def test_c_sweep_csv_ranks_each_C_by_its_own_ranking(tmp_path):
    from kgeo.experiments import _sweep_summary
    results = _hand_results(sweep=True)
    for cell in results.c_sweep:
        if cell.C == 0.001 and cell.representation == "tf" and cell.kernel == "ngd":
            cell.accuracy = 0.0
    results.c_sweep_summary = _sweep_summary("webkb", results.c_sweep, 1.0)
    write_outputs(results, tmp_path, figure=False)
    _, rows = _read_csv(tmp_path / "c_sweep.csv")
    rank = {(r["representation"], r["C"], r["kernel"]): r["rank"] for r in rows}
    assert (rank["tf", "0.001", "ngd"], rank["tf", "1", "ngd"]) == ("3", "1")


def test_the_summary_gives_ours_minus_the_papers():
    from kgeo.experiments import _summary_text
    assert " 50.00 / 72.57 (-22.57)" in _summary_text(_hand_results())


def test_the_smallest_normal_C_is_taken():
    from kgeo.experiments import _check_C
    tiny = np.finfo(np.float64).tiny
    assert _check_C(tiny) == tiny


def _one_split_20ng():
    results = _hand_results(datasets=("20ng",))
    for cell in results.cells:
        cell.split_names, cell.split_accuracy, cell.split_seconds = ["bydate"], [50.0], [1.0]
        cell.n_train, cell.n_test, cell.n_empty_train, cell.n_empty_test = [50], [12], [1], [0]
        cell.untrained = [["sci.space"]] if cell.kernel == "ngd" else [[]]
    results.info["20ng"]["splits"] = results.info["20ng"]["splits"][:1]
    return results


def test_a_report_of_one_split_names_no_split():
    table = markdown_report(_one_split_20ng())
    assert ("Documents without a word in the NGD cells: TF 1 training and 0 test; TF-IDF 1 "
            "training and 0 test.") in table
    assert "so that NGD never predicts them: TF: sci.space; TF-IDF: sci.space." in table


def test_empty_test_documents_alone_are_reported():
    results = _hand_results()
    for cell in results.cells:
        cell.n_empty_train = [0, 0]
    assert ("Documents without a word in the NGD cells, summed over the 2 splits: TF 0 "
            "training and 1 test; TF-IDF 0 training and 1 test.") in markdown_report(results)


def test_the_sweep_sentence_writes_C_as_the_tables_do():
    from kgeo.experiments import _describe_sweep
    row = {"ranking_changed": True, "ngd_best_everywhere": False,
           "ngd_not_best_at": [100.0, 1000.0], "rankings": dict.fromkeys(C_SWEEP_VALUES, "")}
    assert _describe_sweep(row).endswith("strictly best at every C except 100, 1000")


def test_the_papers_z_has_two_decimals():
    results = _hand_results()
    results.significance[0]["paper_sign_z"] = 3.47
    line = next(line for line in markdown_report(results).splitlines()
                if " vs LIN-L2 |" in line)
    assert "| 1.73 | 3.47 |" in line


def test_the_figures_bars_sit_either_side_of_their_tick():
    pytest.importorskip("matplotlib")
    from kgeo.experiments import _accuracy_figure
    axes = _accuracy_figure(_hand_results()).axes[0]
    centres = sorted(p.get_x() + p.get_width() / 2 for p in axes.patches)
    np.testing.assert_allclose(centres, sorted([i - 0.19 for i in range(5)]
                                               + [i + 0.19 for i in range(5)]))


def test_the_tables_seconds_are_summed_over_the_splits():
    line = next(line for line in markdown_report(_hand_results()).splitlines()
                if line.startswith("| TF | L1 | LIN |"))
    assert line.endswith("| 1.8 |")  # 0.25 + 1.5 s


@pytest.mark.parametrize("flag", ["c_sweep", "progress", "figure", "overwrite"])
def test_integer_flags_are_refused(ng_data, flag):
    with pytest.raises(kgeo.InvalidParameterError, match=f"{flag} must be True or False, got 1"):
        run_zhang2005("20ng", ng_data, **{flag: 1})


def test_a_manifest_that_is_not_json_vouches_for_nothing(tmp_path):
    (tmp_path / ".kgeo-outputs.json").write_bytes(b"{not json \xff")
    write_outputs(_hand_results(), tmp_path, figure=False)
    assert "results.csv" in json.loads((tmp_path / ".kgeo-outputs.json").read_text())


def test_data_dir_with_a_tilde(ng_data, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # ng_data is tmp_path / "data"
    splits, _ = load_zhang2005_splits("20ng", "~/data")
    assert len(splits) == 1


def test_out_dir_with_a_tilde(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    files = write_outputs(_hand_results(), "~/out", figure=False)
    assert files["results"] == tmp_path / "out" / "results.csv"
    assert not (tmp_path / "cwd" / "~").exists()


def test_a_cells_seconds_include_its_fit(monkeypatch):
    import time

    from kgeo import experiments
    fit = experiments.SVM.fit

    def slow_fit(self, *args, **kwargs):
        time.sleep(0.3)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(experiments.SVM, "fit", slow_fit)
    X = sp.csr_matrix(np.array([[3, 1], [1, 3], [2, 2], [3, 0], [0, 3], [2, 1]], dtype=float))
    y = np.array([0, 1, 2, 0, 1, 2])
    split = Split("s", X, y, X, y)
    cells = experiments._run_cells("20ng", [split], [experiments._Embeddings(split)],
                                   [("tf", "l2", "lin")], 1.0, None,
                                   experiments._Progress(False, 1, "x"), ["a", "b", "c"])
    assert cells[0].split_seconds[0] >= 0.3


def test_no_file_of_the_users_is_taken_for_a_temporary(tmp_path, monkeypatch):
    # The temporaries and the write probe had fixed names (the process id):
    # a file of the user's bearing one was overwritten, then deleted.
    # Every name tried first is taken: the next try is a fresh token.
    drawn = []

    def token_hex(n):
        drawn.append("aaaaaaaa" if not drawn or drawn[-1] != "aaaaaaaa" else f"{len(drawn):08x}")
        return drawn[-1]

    monkeypatch.setattr("kgeo.experiments.secrets.token_hex", token_hex)
    names = [".kgeo-write-test-aaaaaaaa", ".results.kgeo-aaaaaaaa.tmp.csv",
             ".results_by_split.kgeo-aaaaaaaa.tmp.csv", ".significance.kgeo-aaaaaaaa.tmp.csv",
             ".table.kgeo-aaaaaaaa.tmp.md", ".kgeo-outputs.json.aaaaaaaa.tmp"]
    for name in names:
        (tmp_path / name).write_text("USER DATA")
    files = write_outputs(_hand_results(), tmp_path, figure=False)
    for name in names:
        assert (tmp_path / name).read_text() == "USER DATA"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        names + [".kgeo-outputs.json"] + [path.name for path in files.values()])
    assert drawn.count("aaaaaaaa") == len(names)  # each of them was tried, and passed over


def test_outputs_get_the_permissions_of_a_plain_open(tmp_path):
    # The temporaries are made with O_EXCL (mode 0o666 less the umask), not
    # mkstemp's 0o600, so that outputs renamed from them read as before.
    umask = os.umask(0o022)
    try:
        files = write_outputs(_hand_results(), tmp_path, figure=False)
    finally:
        os.umask(umask)
    if os.name == "posix":
        assert {path.stat().st_mode & 0o777 for path in files.values()} == {0o644}


def test_predict_from_intercepts_refuses_intercepts_that_are_not_finite():
    model = SVM(kernel="linear").fit([[1, 0], [0, 1], [1, 1]], [0, 1, 2])
    model.intercept_ = np.array([np.nan, 1.0, -1.0])
    with pytest.raises(ValueError, match=r"model.intercept_ must be finite, got 1 NaN"):
        predict_from_intercepts(model, 2)


def test_write_outputs_refuses_a_sweep_without_its_summary_and_leaves_no_folder(tmp_path):
    results = _hand_results(sweep=True)
    results.c_sweep_summary = None
    with pytest.raises(ValueError, match=r"results.c_sweep and results.c_sweep_summary must "
                                         r"both be set .* got cells and None"):
        write_outputs(results, tmp_path / "new", figure=False)
    assert not (tmp_path / "new").exists()


def test_a_report_and_a_figure_need_no_sweep_summary(tmp_path):
    results = _hand_results(sweep=True)
    results.c_sweep_summary = None
    assert markdown_report(results).startswith("# Zhang, Chen & Lee (2005)")
    results.c_sweep, results.c_sweep_summary = None, _hand_results(sweep=True).c_sweep_summary
    with pytest.raises(ValueError, match="got None and a summary"):
        write_outputs(results, tmp_path, figure=False)


def test_a_temporary_that_cannot_be_created_is_no_retry(tmp_path, monkeypatch):
    import errno
    real = os.open

    def refuse(path, flags, *args, **kwargs):
        if flags & os.O_EXCL:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(OSError, match=r"cannot be created or written: \[Errno 13\] Permission"):
        write_outputs(_hand_results(), tmp_path, figure=False)


def test_no_free_temporary_name_is_an_error_and_the_users_file_stays(tmp_path, monkeypatch):
    monkeypatch.setattr("kgeo.experiments.secrets.token_hex", lambda n: "aaaaaaaa")
    (tmp_path / ".kgeo-write-test-aaaaaaaa").write_text("mine")
    with pytest.raises(OSError, match=r"no free temporary name \.kgeo-write-test-\*"):
        write_outputs(_hand_results(), tmp_path, figure=False)
    assert (tmp_path / ".kgeo-write-test-aaaaaaaa").read_text() == "mine"


def test_the_warning_of_a_foreign_earlier_output_points_at_the_caller(tmp_path):
    (tmp_path / "c_sweep.csv").write_text("mine")
    with pytest.warns(UserWarning, match="holds 'c_sweep.csv'") as record:
        write_outputs(_hand_results(), tmp_path, figure=False, overwrite=True)
    assert record[0].filename == __file__


def test_an_infinite_intercept_is_refused_as_data():
    model = SVM(kernel="linear").fit([[1, 0], [0, 1], [1, 1]], [0, 1, 2])
    model.intercept_ = np.array([np.inf, 1.0, -1.0])
    with pytest.raises(ValueError, match=r"got 1 NaN or infinite") as caught:
        predict_from_intercepts(model, 2)
    assert not isinstance(caught.value, kgeo.InvalidParameterError)


def test_a_path_with_a_null_character_is_an_invalid_parameter(tmp_path):
    with pytest.raises(kgeo.InvalidParameterError, match="holds a null character"):
        write_outputs(_hand_results(), str(tmp_path / "a\0b"), figure=False)
    with pytest.raises(kgeo.InvalidParameterError, match="holds a null character"):
        run_zhang2005("20ng", "data\0", None)


def test_a_failed_write_outputs_removes_the_folders_it_made(tmp_path, monkeypatch):
    def broken(*args):
        raise RuntimeError("a writer failed")

    monkeypatch.setattr("kgeo.experiments.markdown_report", broken)
    with pytest.raises(RuntimeError, match="a writer failed"):
        write_outputs(_hand_results(), tmp_path / "new" / "folder", figure=False)
    assert list(tmp_path.iterdir()) == []
