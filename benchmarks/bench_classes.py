"""One-vs-one over many small classes: kgeo's NGD fit against scikit-learn's
precomputed route, in time and peak memory.

Synthetic corpora (about 100 draws per document, Zipfian background plus a topic
per class) of N classes of M documents each, over a vocabulary of V words. For
each shape and route, a process of its own fits the SVM and reports the fit's
time and the peak resident memory it added:

- ``kgeo``: ``kgeo.SVM(kernel="ngd").fit(X, y)``;
- ``sklearn``: ``kgeo.pairwise_kernels(X, kernel="ngd")`` (the Gram, on both
  cores) then ``sklearn.svm.SVC(kernel="precomputed").fit``.

With many classes the pairs are many and small (1,000 classes: 499,500 pairs of
10 documents), so what a pair costs besides its kernel values shows, and so does
any structure per class and word.

    python benchmarks/bench_classes.py [--shapes 20x150x30000 300x10x20000 1000x5x200000]
"""

import argparse
import json
import re
import sys
import time

from _workers import memory_mb, resident_before_mb, run_worker


def reset_peak():
    """Make ``VmHWM`` start again from the current resident size (Linux 4.0 on)."""
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


def worker(route, n_classes, per_class, n_features, seed):
    import numpy as np

    import kgeo
    from kgeo._synthetic import make_topic_corpus

    X, y = make_topic_corpus(n_classes * per_class, n_features, n_classes,
                             words_per_document=100, random_state=seed)
    if route != "kgeo":
        # Before the clock and the memory baseline, as kgeo is imported: the
        # import alone takes 0.7-1.2 s and 102 MB here, which the sklearn
        # route's figures included until a review found it.
        from sklearn.svm import SVC
    before_mb = resident_before_mb()
    reset_peak()
    started = time.perf_counter()
    if route == "kgeo":
        model = kgeo.SVM(kernel="ngd").fit(X, y)
    else:
        K = kgeo.pairwise_kernels(X, kernel="ngd")
        model = SVC(kernel="precomputed").fit(K, y)
    fit_s = time.perf_counter() - started
    added_mb = memory_mb("VmHWM") - before_mb
    # After the clock and the peak: the training set's predictions, which the
    # two routes' models must share for their times to compare (no target
    # here, but the top README quotes the ratios).
    predicted = model.predict(X if route == "kgeo" else K)
    print(json.dumps({
        "fit_s": fit_s,
        "added_mb": added_mb,
        "train_predictions": np.asarray(predicted).tolist(),
        "data_mb": (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20,
        "vocabulary": int(np.unique(X.indices).size),
        "n_sv": int(model.support_.shape[0]),
    }))


def shape(text):
    """CLASSESxPER_CLASSxWORDS, e.g. 300x10x20000."""
    match = re.fullmatch(r"(\d+)x(\d+)x(\d+)", text)
    if match is None or min(map(int, match.groups())) < 1 or int(match.group(1)) < 2:
        raise argparse.ArgumentTypeError(
            f"expected CLASSESxPER_CLASSxWORDS with at least 2 classes, e.g. 300x10x20000, "
            f"got {text!r}")
    return tuple(map(int, match.groups()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", type=shape, nargs="+",
                        default=[(20, 150, 30000), (100, 30, 20000), (300, 10, 20000),
                                 (1000, 5, 200000)])
    parser.add_argument("--repeats", type=int, default=2,
                        help="processes per shape and route, alternating (best time kept)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        route, n_classes, per_class, n_features = args.worker
        worker(route, int(n_classes), int(per_class), int(n_features), args.seed)
        return 0
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")

    print(f"{'classes':>7} {'x docs':>6} {'pairs':>7} {'words':>7} {'data MB':>7} | "
          f"{'kgeo s':>7} {'MB':>6} | {'sklearn s':>9} {'MB':>6} | {'time ratio':>10} "
          f"{'memory ratio':>12}")
    print("(s: the best fit time of the repeats; MB: the most resident memory a fit added; "
          "ratios: sklearn's over kgeo's)")
    for n_classes, per_class, n_features in args.shapes:
        runs = {"kgeo": [], "sklearn": []}
        for _ in range(args.repeats):
            for route in runs:
                runs[route].append(run_worker(
                    [sys.executable, __file__, "--seed", str(args.seed), "--worker", route,
                     str(n_classes), str(per_class), str(n_features)]))
        best = {route: min(r["fit_s"] for r in rs) for route, rs in runs.items()}
        added = {route: max(r["added_mb"] for r in rs) for route, rs in runs.items()}
        first = runs["kgeo"][0]
        theirs = runs["sklearn"][0]
        same = sum(a == b for a, b in zip(first["train_predictions"],
                                          theirs["train_predictions"]))
        if first["n_sv"] != theirs["n_sv"] or same != len(first["train_predictions"]):
            print(f"  models differ: {first['n_sv']} against {theirs['n_sv']} support vectors, "
                  f"{same} of {len(first['train_predictions'])} training predictions alike")
        print(f"{n_classes:>7} {per_class:>6} {n_classes * (n_classes - 1) // 2:>7} "
              f"{first['vocabulary']:>7} {first['data_mb']:>7.1f} | {best['kgeo']:>7.2f} "
              f"{added['kgeo']:>6.0f} | {best['sklearn']:>9.2f} {added['sklearn']:>6.0f} | "
              f"{best['sklearn'] / best['kgeo']:>10.2f} "
              f"{added['sklearn'] / max(added['kgeo'], 1.0):>12.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
