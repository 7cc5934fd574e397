"""The reproduction of Lafferty & Lebanon's experiments
(``examples/diffusion_kernel_experiments.py``): its kernels against their
formulas, its draws, tasks and summaries against hand-made cases, and a
small run on Reuters-21578."""

import re
import types

import numpy as np
import pytest
import scipy.sparse as sp

import kgeo
from kgeo._synthetic import make_topic_corpus


@pytest.fixture
def example(load_example):
    return load_example("diffusion_kernel_experiments")


def test_kernels_at_scale_s_are_the_papers(example, rng):
    """Gaussian exp(-|x - x'|^2 / s^2) (s = sqrt(2) sigma) and the heat kernel
    exp(-d^2 / s^2) of the Fisher distance d = 2 arccos(sum sqrt(p p')) (s =
    2 sqrt(t)): the SVMs the example trains read these values."""
    counts = rng.integers(0, 4, size=(12, 9)).astype(float)
    counts[:, 0] += 1  # no empty row
    p = counts / counts.sum(axis=1, keepdims=True)
    x = counts / np.linalg.norm(counts, axis=1, keepdims=True)
    fisher = 2 * np.arccos(np.clip(np.sqrt(p) @ np.sqrt(p).T, -1, 1))
    squared = ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2)
    for s in (0.5, 2.0, 7.0):
        gaussian = example.svm_for("gaussian", s, 1.0)
        diffusion = example.svm_for("diffusion", s, 1.0)
        # Every kernel parameter read from the models, not assumed.
        np.testing.assert_allclose(
            kgeo.pairwise_kernels(x, kernel=gaussian.kernel, gamma=gaussian.gamma,
                                  shift=gaussian.shift),
            np.exp(-squared / s ** 2), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(
            kgeo.pairwise_kernels(counts, kernel=diffusion.kernel, t=diffusion.t,
                                  normalize=diffusion.normalize, shift=diffusion.shift),
            np.exp(-fisher ** 2 / s ** 2), rtol=1e-7, atol=1e-12)
    assert example.svm_for("linear", None, 2.0).get_params()["C"] == 2.0


def test_draws_keep_the_share_of_positives(example):
    labels = np.zeros(1000, dtype=bool)
    labels[:130] = True
    rng = np.random.default_rng(0)
    for size in (40, 80, 600):
        train, test = example.stratified_draw(labels, size, rng)
        assert train.shape[0] == size and np.intersect1d(train, test).size == 0
        assert np.array_equal(np.union1d(train, test), np.arange(1000))
        assert abs(labels[train].sum() - 0.13 * size) <= 0.5
    # A task whose positives are rare still gets one of each class.
    rare = np.zeros(1000, dtype=bool)
    rare[0] = True
    train, _ = example.stratified_draw(rare, 40, rng)
    assert rare[train].sum() == 1 and (~rare[train]).sum() == 39
    for size in (1, 1000):
        with pytest.raises(ValueError, match="2 <= L < 1000"):
            example.stratified_draw(labels, size, rng)


def test_reuters_tasks(example):
    topics = [["earn"], ["acq"], ["acq", "earn"], ["grain", "wheat"], ["trade"], [],
              ["crude"], ["money-fx", "interest"], ["earn"]]
    table3 = dict((name, (docs, labels)) for name, docs, labels in
                  example.reuters_tasks(topics, 3))
    assert list(table3) == ["earn vs all", "acq vs all", "money-fx vs all", "grain vs all",
                            "crude vs all"]
    docs, labels = table3["acq vs all"]
    np.testing.assert_array_equal(docs, [0, 1, 2, 3, 6, 7, 8])  # not "trade", not empty
    np.testing.assert_array_equal(labels, [False, True, True, False, False, False, False])
    table4 = dict((name, (docs, labels)) for name, docs, labels in
                  example.reuters_tasks(topics, 4))
    assert list(table4) == ["acq vs earn", "money-fx vs earn", "grain vs earn", "crude vs earn"]
    docs, labels = table4["acq vs earn"]
    np.testing.assert_array_equal(docs, [0, 1, 8])  # story 2 is both: left out
    np.testing.assert_array_equal(labels, [False, True, False])


def test_webkb_tasks(example):
    corpus = types.SimpleNamespace(target_names=["student", "faculty", "course", "project"],
                                   target=np.array([0, 1, 2, 3, 0, 2, 1]))
    table1 = {name: (docs, labels) for name, docs, labels in example.webkb_tasks(corpus, 1)}
    assert list(table1) == ["course vs all", "faculty vs all", "project vs all",
                            "student vs all"]
    np.testing.assert_array_equal(table1["course vs all"][1],
                                  [False, False, True, False, False, True, False])
    table2 = {name: (docs, labels) for name, docs, labels in example.webkb_tasks(corpus, 2)}
    assert list(table2) == ["course vs student", "faculty vs student", "project vs student"]
    docs, labels = table2["faculty vs student"]
    np.testing.assert_array_equal(docs, [0, 1, 4, 6])
    np.testing.assert_array_equal(labels, [False, True, False, True])


def test_summaries_pick_each_kernels_best_scale(example):
    scales = (1.0, 2.0)
    configs = example.configurations(scales)
    assert len(configs) == 2 * (1 + 2 + 2)
    rng = np.random.default_rng(1)
    errors = rng.uniform(0.2, 0.3, size=(1, 6, len(configs)))
    column = {c: j for j, c in enumerate(configs)}
    errors[0, :, column["tf", "diffusion", 2.0]] = 0.05 + 0.001 * np.arange(6)
    errors[0, :, column["tf", "gaussian", 1.0]] = 0.06 + 0.0015 * np.arange(6)
    errors[0, :, column["tfidf", "linear", None]] = 0.1
    errors[0, :, column["tfidf", "gaussian", 2.0]] = 0.1
    (row,) = example.summarise(errors, scales)
    assert row["best"]["tf"] == "diffusion" and row["scale"]["tf"]["diffusion"] == 2.0
    assert row["scale"]["tf"]["gaussian"] == 1.0 and row["scale"]["tf"]["linear"] is None
    assert row["mean"]["tf"]["diffusion"] == pytest.approx(0.0525)
    assert row["p"]["tf"] < 1e-6  # 0.01-0.0125 lower on every draw
    assert example.reduction(row, "tf") == pytest.approx((0.06375 - 0.0525) / 0.06375)
    # Equal errors on every draw: the first kernel listed wins, with p = 1.
    assert row["best"]["tfidf"] == "linear" and row["p"]["tfidf"] == 1.0
    line = example.format_row("task", 40, row)
    assert "**0.0525** |" in line and "**0.1000*** |" in line
    (single,) = example.summarise(errors[:, :1], scales)
    assert np.isnan(single["p"]["tf"]) and single["sd"]["tf"]["linear"] == 0.0


def test_run_task_on_topic_documents(example):
    """Two topics of a synthetic corpus, separable by their words: each kernel
    learns them at its best scale, and the same seed gives the same errors."""
    counts, y = make_topic_corpus(n_documents=300, n_features=400, n_classes=2,
                                  words_per_document=60, topic_weight=0.3, random_state=3)
    labels = np.asarray(y) == 1
    rows = example.embeddings(sp.csr_matrix(counts))
    assert sorted(rows) == [("tf", "l1"), ("tf", "l2"), ("tfidf", "l1"), ("tfidf", "l2")]
    np.testing.assert_allclose(rows["tfidf", "l1"].sum(axis=1), 1.0)
    errors = example.run_task(rows, labels, (40, 80), 2, (1.0, 3.0), 1.0, 7)
    assert errors.shape == (2, 2, 10)
    assert np.all((errors >= 0) & (errors <= 1))
    configs = example.configurations((1.0, 3.0))
    for kernel in example.KERNELS:
        columns = [j for j, c in enumerate(configs) if c[1] == kernel]
        best = errors[:, :, columns].mean(axis=1).min(axis=1)
        assert np.all(best < 0.1), (kernel, best)
    again = example.run_task(rows, labels, (40, 80), 2, (1.0, 3.0), 1.0, 7)
    np.testing.assert_array_equal(errors, again)


def test_each_kernel_reads_its_normalisation(example, monkeypatch):
    """Linear and Gaussian SVMs train on L2 rows, the diffusion kernel on L1
    rows (points of the simplex), for both representations."""
    counts, y = make_topic_corpus(n_documents=80, n_features=100, n_classes=2,
                                  words_per_document=30, random_state=4)
    rows = example.embeddings(sp.csr_matrix(counts))
    seen = []
    svm_for = example.svm_for

    def recording(kernel, scale, C):
        model = svm_for(kernel, scale, C)
        fit = model.fit

        def fit_and_record(X, y):
            dense = X.toarray()
            seen.append((kernel, np.allclose(dense.sum(axis=1), 1.0),
                         np.allclose(np.linalg.norm(dense, axis=1), 1.0)))
            return fit(X, y)
        model.fit = fit_and_record
        return model

    monkeypatch.setattr(example, "svm_for", recording)
    train, test = np.arange(40), np.arange(40, 80)
    example.draw_errors(rows, np.asarray(y) == 1, train, test,
                        example.configurations((1.0,)), 1.0)
    assert len(seen) == 6
    for kernel, l1, l2 in seen:
        assert (l1, l2) == ((True, False) if kernel == "diffusion" else (False, True)), kernel


def test_table_summaries(example):
    def row(diffusion, linear, gaussian, scale):
        mean = {"linear": linear, "gaussian": gaussian, "diffusion": diffusion}
        best = min(example.KERNELS, key=lambda k: mean[k])
        scales = {"linear": None, "gaussian": 1.0, "diffusion": scale}
        return {"mean": {r: mean for r in example.REPRESENTATIONS},
                "best": {r: best for r in example.REPRESENTATIONS},
                "scale": {r: scales for r in example.REPRESENTATIONS}}

    lines = example.table_summary([row(0.08, 0.10, 0.11, 5.0), row(0.12, 0.10, 0.2, 10.0)])
    assert lines[0] == ("tf: diffusion best in 1 of 2 rows; mean relative error reduction "
                        "against the better of linear and Gaussian 0.0 % (range -20.0 to "
                        "20.0 %); diffusion scales chosen [5.0, 10.0]")
    results = [dict(zip(example.KERNELS, triple)) for triple in (
        ((0.02, 0.8, None), (0.01, 0.9, 1.0), (0.01, 0.85, 2.0)),
        ((0.03, 0.7, None), (0.03, 0.7, 1.0), (0.02, 0.7, 2.0)),
        ((0.01, 0.9, None), (0.02, 0.8, 1.0), (0.03, 0.6, 2.0)),
    )]
    # Lowest error: a tie (first) and a strict win (second); highest F1: the second, tied.
    assert example.modapte_summary(results) == (2, 1, 1)


def test_modapte_results_keep_each_kernels_best_scale(example):
    counts, y = make_topic_corpus(n_documents=240, n_features=300, n_classes=3,
                                  words_per_document=50, topic_weight=0.25, random_state=5)
    counts = sp.csr_matrix(counts)
    Y = np.stack([np.asarray(y) == c for c in range(3)], axis=1).astype(np.int8)
    train, test = np.arange(160), np.arange(160, 240)
    results = example.modapte_results(counts[train], counts[test], Y[train], Y[test],
                                      (1.0, 4.0), 1000.0)
    assert len(results) == 3 and all(set(r) == set(example.KERNELS) for r in results)
    for j, per_kernel in enumerate(results):
        for kernel, (error, f1, scale) in per_kernel.items():
            assert (scale is None) == (kernel == "linear")
            errors, f1s = [], []
            for s in ((None,) if kernel == "linear" else (1.0, 4.0)):
                norm = "l1" if kernel == "diffusion" else "l2"
                embedding = kgeo.MultinomialEmbedding(norm=norm).fit(counts[train])
                model = example.svm_for(kernel, s, 1000.0).fit(
                    embedding.transform(counts[train]), Y[train, j].astype(bool))
                predicted = model.predict(embedding.transform(counts[test]))
                errors.append(np.mean(predicted != Y[test, j].astype(bool)))
                f1s.append(example.f1_score(Y[test, j].astype(bool), predicted))
            chosen = int(np.argmin(errors))  # the first of equal errors
            assert error == errors[chosen] and f1 == f1s[chosen]


def test_f1(example):
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(2)
    labels, predicted = rng.random(50) < 0.3, rng.random(50) < 0.4
    assert example.f1_score(labels, predicted) == pytest.approx(f1_score(labels, predicted))
    none = np.zeros(5, dtype=bool)
    assert example.f1_score(none, none) == 1.0


def test_reuters_table_runs(example, reuters_dir, capsys):
    import re

    words = []
    for extra in ([], ["--no-stoplist"]):
        example.main(["--data", str(reuters_dir), "--table", "4", "--sizes", "40",
                      "--repeats", "2", "--scales", "2,5", *extra])
        out = capsys.readouterr().out
        assert "ApteMod" in out
        rows = [line for line in out.splitlines() if line.startswith("| acq vs earn | 40 |")]
        assert len(rows) == 1 and rows[0].count("**") == 4  # one best per representation
        assert "diffusion best in" in out
        words.append(int(re.search(r"stories, (\d+) words", out).group(1)))
    assert words[1] > words[0]  # the stop words kept


@pytest.mark.parametrize("argv, match", [
    (["--table", "5", "--sizes", "40"], r"--sizes applies to tables 1-4"),
    (["--table", "3", "--sizes", "-5"],
     r"--sizes must be at least 2 \(a document of each class\), got \(-5,\)"),
    (["--table", "3", "--sizes", "1"], r"--sizes must be at least 2"),
    (["--table", "3", "--sizes", "abc"], r"--sizes and --scales must be comma-separated"),
    # Each reached the fits and failed there (C, seed) or made gamma or t 0
    # or infinite (scales).
    (["--table", "3", "--C", "-1"], r"--C must be finite and > 0, got -1.0"),
    (["--table", "3", "--C", "inf"], r"--C must be finite and > 0, got inf"),
    (["--table", "3", "--C", "1e-320"], r"--C must be at least 2\.225e-308 \(a normal "
                                        r"float\), got 1e-320"),
    (["--table", "3", "--seed", "-1"], r"--seed must be >= 0, got -1"),
    (["--table", "3", "--scales", "inf"], r"--scales must lie in \[1e-150, 1e150\]"),
    (["--table", "3", "--scales", "1e-300"], r"--scales must lie in \[1e-150, 1e150\]"),
])
def test_bad_options_are_usage_errors_before_any_data_is_read(example, argv, match, capsys):
    # They failed inside NumPy after loading and vectorising the corpus, or
    # (table 5) were silently ignored.
    with pytest.raises(SystemExit) as stop:
        example.parse_args(["--data", "nowhere", *argv])
    assert stop.value.code == 2
    assert re.search(match, capsys.readouterr().err)
