"""Peak memory and fit time of kgeo.SVM(kernel="ngd") against its kernel cache size.

20 Newsgroups bydate training set (11,314 documents), Rainbow's lexer with the
SMART stop list and words in 2 or fewer documents pruned, C = 1, one-vs-one.
Each configuration runs in its own process, so the peak resident memory
reported (``VmHWM``, read at the end of the fit) is its own; ``baseline`` is a
process that only loads the count matrix, and ``over baseline`` is what the
fit added to it.

    python benchmarks/bench_memory.py [--data ../shared/data] [--cache-sizes 50 200 2000]
"""

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

from _workers import peak_resident_mb, run_worker


def prepare(data_dir, out_dir, subset):
    """Tokenise once and save the counts for the workers."""
    from kgeo.datasets import load_20newsgroups
    from kgeo.text import RainbowVectorizer

    corpus = load_20newsgroups(data_dir, subset=subset)
    X = RainbowVectorizer(prune_by_doc_count=2).fit_transform(corpus.data)
    sp.save_npz(os.path.join(out_dir, "X.npz"), X)
    np.save(os.path.join(out_dir, "y.npy"), corpus.target)
    return X.shape, X.nnz


def worker(config, work_dir):
    import kgeo

    started = time.perf_counter()
    X = sp.load_npz(os.path.join(work_dir, "X.npz"))
    y = np.load(os.path.join(work_dir, "y.npy"))
    result = {"config": config, "load_s": time.perf_counter() - started}
    if config != "baseline":
        cache_size = float(config)
        started = time.perf_counter()
        model = kgeo.SVM(kernel="ngd", C=1.0, cache_size=cache_size).fit(X, y)
        fit_s = time.perf_counter() - started
        # Read before predicting: the training accuracy's decision values
        # would count as the fit's (200 MB against the fit's 151 MB).
        result["peak_mb"] = peak_resident_mb()
        result.update(
            fit_s=fit_s,
            n_sv=int(model.support_.shape[0]),
            n_iter=int(np.sum(model.n_iter_)),
            cache_stats={k: (float(v) if isinstance(v, float) else int(v))
                         for k, v in model.cache_stats_.items()},
            train_accuracy=float(np.mean(model.predict(X) == y)),
        )
    else:
        result["peak_mb"] = peak_resident_mb()
    print(json.dumps(result))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       "..", "..", "shared", "data"),
                        help="folder holding 20news-bydate/ (default: ../shared/data "
                             "relative to the repository root)")
    parser.add_argument("--subset", default="train", choices=["train", "test", "all"])
    parser.add_argument("--cache-sizes", type=float, nargs="+", default=[50, 200, 2000],
                        metavar="MB")
    parser.add_argument("--worker", nargs=2, metavar=("CONFIG", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return 0
    bad = [c for c in args.cache_sizes if not 0 < c < float("inf")]
    if bad:
        parser.error(f"--cache-sizes must be finite and > 0 (MB), got {bad[0]!r}")

    with tempfile.TemporaryDirectory() as work_dir:
        shape, nnz = prepare(args.data, work_dir, args.subset)
        print(f"20 Newsgroups bydate {args.subset}: {shape[0]} documents, {shape[1]} words, "
              f"{nnz} nonzeros; kernel ngd, C = 1", flush=True)
        baseline = None
        for config in ["baseline"] + [repr(c) for c in args.cache_sizes]:
            r = run_worker([sys.executable, os.path.abspath(__file__), "--worker", config,
                            work_dir])
            if config == "baseline":
                baseline = r["peak_mb"]
                print(f"{'baseline':<18} peak {r['peak_mb']:7.0f} MB  (loading the counts only, "
                      f"{r['load_s']:.2f} s)", flush=True)
                continue
            stats = r["cache_stats"]
            budget_mb = stats["budget_values"] * stats["value_bytes"] / 2**20
            computed_mb = stats["values_computed"] * stats["value_bytes"] / 2**20
            print(f"cache_size {float(config):6.0f} MB  peak {r['peak_mb']:7.0f} MB  over baseline "
                  f"{r['peak_mb'] - baseline:7.0f} MB  fit {r['fit_s']:7.2f} s  "
                  f"kernel values computed {computed_mb:8.0f} MB (budget {budget_mb:.0f} MB, "
                  f"blocks {stats['blocks_computed']}/{stats['blocks_requested']} computed/"
                  f"requested)  SMO iterations {r['n_iter']}  SVs {r['n_sv']}  "
                  f"train accuracy {100 * r['train_accuracy']:.2f}%", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
