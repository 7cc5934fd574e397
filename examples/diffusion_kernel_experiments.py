"""Lafferty & Lebanon's diffusion kernel against the linear and Gaussian kernels.

The experiments of Lafferty & Lebanon (JMLR 2005, section 5.2): binary SVMs
on WebKB and Reuters-21578 with the linear and Gaussian kernels on
L2-normalised TF or TF-IDF vectors and the multinomial diffusion kernel
``exp(-arccos(sum_i sqrt(p_i p'_i))^2 / t)`` on the L1-normalised ones. For
tables 1-4, each task's documents are drawn at random, L of them for
training (keeping the task's share of positives) and the rest for testing,
20 times; the Gaussian and diffusion kernels are reported at their best scale
s (``sqrt(2) sigma`` and ``2 sqrt(t)``) in {0.5, 1, 2, 3, 4, 5, 7, 10} for
each task, L and representation, as the paper does (chosen on the test
error: optimistic for both kernels alike). Table 5/6 trains on the ModApte
training stories and tests on the ModApte test stories, TF only.

    python examples/diffusion_kernel_experiments.py --data ../shared/data --table 3

Tables: 1 WebKB, each class against the other three; 2 WebKB, course,
faculty and project against student; 3 Reuters (ApteMod stories of the five
largest topics), each topic against the other four; 4 Reuters, acq,
money-fx, grain and crude against earn; 5 ModApte, the ten largest topics
against the rest (test error and F1: the paper's tables 5 and 6).
``--data`` is a folder holding ``webkb/`` and ``reuters21578/``. The paper
leaves the preprocessing, C, the test sets and the handling of stories with
several topics open; the choices here are in ``docs/diffusion_kernels.md``.
"""

import argparse
import math
import sys
import time

import numpy as np

import kgeo
from kgeo.datasets import DatasetNotFoundError, load_reuters21578, load_webkb
from kgeo.text import RainbowVectorizer

SCALES = (0.5, 1, 2, 3, 4, 5, 7, 10)
SIZES = {1: (40, 80, 120, 200, 400, 600), 2: (40, 80, 120, 200, 400, 600),
         3: (80, 120, 200, 400, 600), 4: (40, 80, 120, 200, 400)}
WEBKB_CLASSES = ("course", "faculty", "project", "student")
REUTERS_TOP5 = ("earn", "acq", "money-fx", "grain", "crude")
REUTERS_TOP10 = ("earn", "acq", "money-fx", "grain", "crude", "trade", "interest", "ship",
                 "wheat", "corn")
KERNELS = ("linear", "gaussian", "diffusion")
REPRESENTATIONS = ("tf", "tfidf")
# Preprocessing (the paper gives none): WebKB as Zhang et al.'s Rainbow
# options (kgeo.experiments), Reuters as the Fisher kernel example.
WEBKB_VECTORIZER = dict(stoplist=None, skip_header=True, skip_html=True, tag_digits=True,
                        prune_by_occur_count=2)
REUTERS_VECTORIZER = dict(prune_by_doc_count=2)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True,
                        help="folder holding webkb/ and reuters21578/")
    parser.add_argument("--table", type=int, choices=(1, 2, 3, 4, 5), required=True)
    parser.add_argument("--sizes", default=None,
                        help="training-set sizes L (default: the paper's for the table; "
                             "tables 1-4 only: table 5 is the fixed ModApte split)")
    parser.add_argument("--repeats", type=int, default=20,
                        help="random draws per size (tables 1-4)")
    parser.add_argument("--scales", default=",".join(map(str, SCALES)),
                        help="scales s tried for the Gaussian and diffusion kernels")
    parser.add_argument("--C", type=float, default=1000.0,
                        help="the SVMs' C (the paper gives none; see docs/diffusion_kernels.md)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-stoplist", action="store_true",
                        help="keep stop words (Reuters; WebKB keeps them anyway)")
    args = parser.parse_args(argv)
    if args.table == 5 and args.sizes is not None:
        parser.error("--sizes applies to tables 1-4; table 5 is the fixed ModApte split")
    try:
        args.sizes = (SIZES.get(args.table, ()) if args.sizes is None
                      else tuple(int(L) for L in args.sizes.split(",")))
        args.scales = tuple(float(s) for s in args.scales.split(","))
    except ValueError:
        parser.error(f"--sizes and --scales must be comma-separated numbers, got "
                     f"{args.sizes!r} and {args.scales!r}")
    if not all(L >= 2 for L in args.sizes):
        parser.error(f"--sizes must be at least 2 (a document of each class), got "
                     f"{args.sizes}")
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    # The Gaussian's gamma 1 / s^2 and the diffusion's t = s^2 / 4 must both
    # be finite and positive in float64.
    if not all(1e-150 <= s <= 1e150 for s in args.scales):
        parser.error(f"--scales must lie in [1e-150, 1e150], got {args.scales}")
    if not 0 < args.C < math.inf:
        parser.error(f"--C must be finite and > 0, got {args.C}")
    if args.C < sys.float_info.min:  # the SVMs refuse it, after the data is read
        parser.error(f"--C must be at least {sys.float_info.min:.4g} (a normal float), "
                     f"got {args.C}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    return args


# --------------------------------------------------------------------------
# Tasks
# --------------------------------------------------------------------------

def webkb_tasks(corpus, table):
    """(name, documents, labels): table 1 each class against the other three,
    table 2 each other class against student (booleans: True = the class)."""
    names = list(corpus.target_names)
    target = np.asarray(corpus.target)
    student = names.index("student")
    tasks = []
    for name in WEBKB_CLASSES:
        c = names.index(name)
        if table == 1:
            documents = np.arange(target.shape[0])
            tasks.append((f"{name} vs all", documents, target == c))
        elif name != "student":
            documents = np.flatnonzero((target == c) | (target == student))
            tasks.append((f"{name} vs student", documents, target[documents] == c))
    return tasks


def reuters_tasks(topics, table):
    """(name, documents, labels) over stories given by their topic lists.

    Table 3: the stories with at least one of the five largest topics, each
    topic against the stories without it. Table 4: the stories of a topic
    or of earn, not both (their label would be both).
    """
    has = {name: np.array([name in t for t in topics]) for name in REUTERS_TOP5}
    any_top5 = np.logical_or.reduce([has[name] for name in REUTERS_TOP5])
    tasks = []
    for name in REUTERS_TOP5:
        if table == 3:
            documents = np.flatnonzero(any_top5)
            tasks.append((f"{name} vs all", documents, has[name][documents]))
        elif name != "earn":
            documents = np.flatnonzero(has[name] ^ has["earn"])
            tasks.append((f"{name} vs earn", documents, has[name][documents]))
    return tasks


def stratified_draw(labels, size, rng):
    """Indices of ``size`` training documents with the task's share of
    positives (at least one of each class), and of the rest, for testing."""
    positive, negative = np.flatnonzero(labels), np.flatnonzero(~labels)
    if not 2 <= size < labels.shape[0]:
        raise ValueError(f"a training set of {size} documents needs 2 <= L < "
                         f"{labels.shape[0]}, the task's documents")
    n_pos = int(round(size * positive.shape[0] / labels.shape[0]))
    n_pos = min(max(n_pos, 1), size - 1, positive.shape[0])
    n_neg = size - n_pos
    if n_neg > negative.shape[0]:
        raise ValueError(f"L = {size} needs {n_neg} negative documents, the task has "
                         f"{negative.shape[0]}")
    train = np.sort(np.concatenate([rng.choice(positive, n_pos, replace=False),
                                    rng.choice(negative, n_neg, replace=False)]))
    test = np.setdiff1d(np.arange(labels.shape[0]), train)
    return train, test


# --------------------------------------------------------------------------
# Kernels and fits
# --------------------------------------------------------------------------

def configurations(scales):
    """(representation, kernel, scale) of every SVM of a draw; scale None for linear."""
    return [(r, k, s) for r in REPRESENTATIONS for k in KERNELS
            for s in ((None,) if k == "linear" else scales)]


def svm_for(kernel, scale, C):
    """The paper's kernels at scale s: Gaussian exp(-|x - x'|^2 / s^2)
    (s = sqrt(2) sigma), diffusion exp(-arccos^2 / t) with t = s^2 / 4."""
    if kernel == "linear":
        return kgeo.SVM(kernel="linear", C=C)
    if kernel == "gaussian":
        return kgeo.SVM(kernel="rbf", gamma=1.0 / scale ** 2, C=C)
    return kgeo.SVM(kernel="diffusion", t=scale ** 2 / 4.0, C=C)


def embeddings(counts):
    """Per representation, the rows each kernel reads: L1 for the diffusion
    kernel, L2 for the linear and Gaussian ones; IDF over the given documents
    (the whole collection: the paper's D is "the number of documents in the
    corpus"; no label is read)."""
    rows = {}
    for weighting in REPRESENTATIONS:
        for norm in ("l1", "l2"):
            rows[weighting, norm] = kgeo.MultinomialEmbedding(
                weighting=weighting, norm=norm).fit_transform(counts)
    return rows


def draw_errors(rows, labels, train, test, configs, C):
    """Test error of every configuration on one draw."""
    errors = np.empty(len(configs))
    for j, (representation, kernel, scale) in enumerate(configs):
        X = rows[representation, "l1" if kernel == "diffusion" else "l2"]
        model = svm_for(kernel, scale, C).fit(X[train], labels[train])
        errors[j] = np.mean(model.predict(X[test]) != labels[test])
    return errors


def run_task(rows, labels, sizes, repeats, scales, C, seed):
    """errors[size, draw, configuration] for one task: ``rows`` the task's
    documents in each embedding (see ``embeddings``), ``labels`` theirs."""
    configs = configurations(scales)
    errors = np.empty((len(sizes), repeats, len(configs)))
    for i, size in enumerate(sizes):
        for r in range(repeats):
            rng = np.random.default_rng([seed, size, r])
            train, test = stratified_draw(labels, size, rng)
            errors[i, r] = draw_errors(rows, labels, train, test, configs, C)
    return errors


def summarise(errors, scales):
    """Per size and representation, each kernel at its best scale.

    Returns
    -------
    rows : list of dict, one per size, with for each representation r:
        ``mean[r]`` (kernel -> mean error), ``sd[r]``, ``scale[r]`` (the
        chosen s, None for linear), ``best[r]`` (the kernel of least mean
        error) and ``p[r]``: the paired t-test's p-value of the best kernel
        against the runner-up over the draws (nan with one draw).
    """
    from scipy.stats import ttest_rel

    configs = configurations(scales)
    out = []
    for per_size in errors:
        row = {"mean": {}, "sd": {}, "scale": {}, "best": {}, "p": {}}
        for representation in REPRESENTATIONS:
            mean, sd, scale, draws = {}, {}, {}, {}
            for kernel in KERNELS:
                columns = [j for j, c in enumerate(configs) if c[:2] == (representation, kernel)]
                means = per_size[:, columns].mean(axis=0)
                chosen = columns[int(np.argmin(means))]  # the first of equal means
                mean[kernel] = float(per_size[:, chosen].mean())
                sd[kernel] = float(per_size[:, chosen].std(ddof=1)) if len(per_size) > 1 else 0.0
                scale[kernel] = configs[chosen][2]
                draws[kernel] = per_size[:, chosen]
            ranked = sorted(KERNELS, key=lambda k: mean[k])
            p = np.nan
            if len(per_size) > 1 and np.any(draws[ranked[0]] != draws[ranked[1]]):
                p = float(ttest_rel(draws[ranked[0]], draws[ranked[1]]).pvalue)
            elif len(per_size) > 1:
                p = 1.0  # the same errors on every draw: no difference at all
            row["mean"][representation], row["sd"][representation] = mean, sd
            row["scale"][representation], row["best"][representation] = scale, ranked[0]
            row["p"][representation] = p
        out.append(row)
    return out


def reduction(row, representation):
    """The diffusion kernel's relative error reduction against the better of
    the linear and Gaussian kernels (the paper's claim, as a share)."""
    mean = row["mean"][representation]
    baseline = min(mean["linear"], mean["gaussian"])
    return (baseline - mean["diffusion"]) / baseline if baseline > 0 else 0.0


def table_summary(rows):
    """Per representation, a line: in how many rows the diffusion kernel is
    best, its mean relative error reduction (``reduction``) and range, and
    the diffusion scales chosen."""
    lines = []
    for r in REPRESENTATIONS:
        wins = sum(row["best"][r] == "diffusion" for row in rows)
        reductions = [reduction(row, r) for row in rows]
        chosen = sorted({row["scale"][r]["diffusion"] for row in rows})
        lines.append(
            f"{r}: diffusion best in {wins} of {len(rows)} rows; mean relative error "
            f"reduction against the better of linear and Gaussian "
            f"{100 * np.mean(reductions):.1f} % (range {100 * min(reductions):.1f} to "
            f"{100 * max(reductions):.1f} %); diffusion scales chosen {chosen}")
    return lines


def format_row(task, size, row):
    cells = []
    for representation in REPRESENTATIONS:
        for kernel in KERNELS:
            value = f"{row['mean'][representation][kernel]:.4f}"
            if kernel == row["best"][representation]:
                star = "*" if not row["p"][representation] < 0.05 else ""
                value = f"**{value}**{star}"
            cells.append(value)
    return f"| {task} | {size} | " + " | ".join(cells) + " |"


# --------------------------------------------------------------------------
# ModApte (tables 5 and 6)
# --------------------------------------------------------------------------

def f1_score(labels, predicted):
    # No positive story and none predicted: full agreement, scored 1 (scikit-
    # learn's f1_score gives 0 there by default). The ten categories used all
    # have test stories, so the tables never reach that case.
    true_positive = np.count_nonzero(labels & predicted)
    denominator = np.count_nonzero(labels) + np.count_nonzero(predicted)
    return 2.0 * true_positive / denominator if denominator else 1.0


def modapte_results(X_train, X_test, Y_train, Y_test, scales, C):
    """Per category (columns of Y), each kernel's test error and F1 at the
    scale of least test error (TF only, as the paper's tables 5 and 6)."""
    rows = {}
    for norm in ("l1", "l2"):
        embedding = kgeo.MultinomialEmbedding(weighting="tf", norm=norm).fit(X_train)
        rows[norm] = (embedding.transform(X_train), embedding.transform(X_test))
    results = []
    for j in range(Y_train.shape[1]):
        y_train, y_test = Y_train[:, j].astype(bool), Y_test[:, j].astype(bool)
        per_kernel = {}
        for kernel in KERNELS:
            train, test = rows["l1" if kernel == "diffusion" else "l2"]
            best = None
            for scale in ((None,) if kernel == "linear" else scales):
                predicted = svm_for(kernel, scale, C).fit(train, y_train).predict(test)
                error = float(np.mean(predicted != y_test))
                if best is None or error < best[0]:
                    best = (error, f1_score(y_test, predicted), scale)
            per_kernel[kernel] = best
        results.append(per_kernel)
    return results


def modapte_summary(results):
    """Categories where the diffusion kernel has the lowest error (ties
    included), strictly the lowest, and the highest F1 (ties included)."""
    others = ("linear", "gaussian")
    lowest = sum(r["diffusion"][0] <= min(r[k][0] for k in others) for r in results)
    strictly = sum(r["diffusion"][0] < min(r[k][0] for k in others) for r in results)
    highest = sum(r["diffusion"][1] >= max(r[k][1] for k in others) for r in results)
    return lowest, strictly, highest


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def load_counts(data, table, stoplist="smart"):
    """Counts of every document the table's tasks use, and the tasks."""
    if table in (1, 2):
        corpus = load_webkb(data)
        counts = RainbowVectorizer(**WEBKB_VECTORIZER).fit_transform(corpus.data)
        return counts, webkb_tasks(corpus, table), (
            f"WebKB: {counts.shape[0]} pages of {', '.join(WEBKB_CLASSES)}, "
            f"{counts.shape[1]} words")
    corpus = load_reuters21578(data, subset="all", view="r90")
    vectorizer = RainbowVectorizer(stoplist=stoplist, **REUTERS_VECTORIZER)
    counts = vectorizer.fit_transform(corpus.data)
    return counts, reuters_tasks(corpus.topics, table), (
        f"Reuters-21578 ApteMod (ModApte stories with a topic): {counts.shape[0]} stories, "
        f"{counts.shape[1]} words")


def run_resampling_table(args):
    counts, tasks, description = load_counts(args.data, args.table,
                                             None if args.no_stoplist else "smart")
    collection = embeddings(counts)
    # A document without a word (or only words in every document, which
    # TF-IDF weighs 0) has no place on the simplex: left out of every task.
    placed = np.logical_and.reduce([np.diff(collection[r, "l1"].indptr) > 0
                                    for r in REPRESENTATIONS])
    print(f"{description}; {np.count_nonzero(~placed)} without a word left out")
    # Every task is checked before the first fit: a size too large for the
    # last task would otherwise stop the run after the others were done.
    for name, documents, labels in tasks:
        n_documents = np.count_nonzero(placed[documents])
        if max(args.sizes) >= n_documents:
            sys.exit(f"--sizes: task {name} has {n_documents} documents, so its training "
                     f"sets need L < {n_documents}; got {max(args.sizes)}")
    print(f"C = {args.C}, {args.repeats} random draws per L, scales {args.scales}; mean test "
          f"error at each kernel's best scale; bold: the best of the row's representation, "
          f"* where its paired t-test against the runner-up gives p >= 0.05\n")
    print("| task | L | tf Lin | tf Gauss | tf Diff | tfidf Lin | tfidf Gauss | tfidf Diff |")
    print("|" + " --- |" * 8)
    summaries = []
    for name, documents, labels in tasks:
        documents, labels = documents[placed[documents]], labels[placed[documents]]
        rows = {key: matrix[documents] for key, matrix in collection.items()}
        errors = run_task(rows, labels, args.sizes, args.repeats, args.scales, args.C,
                          args.seed)
        for size, row in zip(args.sizes, summarise(errors, args.scales)):
            print(format_row(name, size, row), flush=True)
            summaries.append(row)
    print()
    for line in table_summary(summaries):
        print(line)


def run_modapte(args):
    train = load_reuters21578(args.data, subset="train", view="r90")
    test = load_reuters21578(args.data, subset="test", view="r90")
    vectorizer = RainbowVectorizer(stoplist=None if args.no_stoplist else "smart",
                                   **REUTERS_VECTORIZER)
    X_train = vectorizer.fit_transform(train.data)
    X_test = vectorizer.transform(test.data)
    columns = [train.category_names.index(c) for c in REUTERS_TOP10]
    Y_train = train.indicator_matrix(sparse=False)[:, columns]
    Y_test = test.indicator_matrix(sparse=False)[:, columns]
    keep_train = np.asarray(X_train.sum(axis=1)).ravel() > 0
    keep_test = np.asarray(X_test.sum(axis=1)).ravel() > 0
    print(f"Reuters-21578 ModApte (R90 stories): {keep_train.sum()} training / "
          f"{keep_test.sum()} test stories with a word ({(~keep_test).sum()} test stories "
          f"without one left out), {X_train.shape[1]} words; TF, C = {args.C}, scales "
          f"{args.scales}, each kernel at its scale of least test error\n")
    results = modapte_results(X_train[keep_train], X_test[keep_test], Y_train[keep_train],
                              Y_test[keep_test], args.scales, args.C)
    print("| category | error Lin | error RBF | error Diff | F1 Lin | F1 RBF | F1 Diff |")
    print("|" + " --- |" * 7)
    for name, per_kernel in zip(REUTERS_TOP10, results):
        errors = " | ".join(f"{per_kernel[k][0]:.5f}" for k in KERNELS)
        f1s = " | ".join(f"{per_kernel[k][1]:.4f}" for k in KERNELS)
        print(f"| {name} | {errors} | {f1s} |", flush=True)
    lowest, strictly, highest = modapte_summary(results)
    print(f"\ndiffusion: the lowest error in {lowest} of {len(results)} categories "
          f"({strictly} strictly, the others tied), the highest F1 in {highest}")


def main(argv=None):
    args = parse_args(argv)
    started = time.perf_counter()
    try:
        if args.table == 5:
            run_modapte(args)
        else:
            run_resampling_table(args)
    except DatasetNotFoundError as error:
        sys.exit(f"--data: {error}")
    print(f"\n{time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
