"""Train NGD past the size where a Gram matrix fits in memory.

Synthetic corpora of growing size (vocabulary 50,000, about 100 distinct words per
document, 20 topics) are fitted with ``kgeo.SVM(kernel="ngd", cache_size=1000)``, each
size in its own process. For each size it prints the fit time, the peak resident memory,
the memory of the data itself, the memory a dense float64 Gram matrix would need, and at
the end the fitted growth exponent of time in the number of documents.

    python benchmarks/bench_scale.py [--sizes 10000 20000 50000 100000] [--cache-size 1000]
"""

import argparse
import json
import math
import sys
import time

import numpy as np

from _workers import memory_mb, resident_before_mb, run_worker


def reset_peak():
    """Make ``VmHWM`` start again from the current resident size (Linux 4.0
    on): the corpus generator's temporaries, freed before the fit, set a
    high-water mark that the fit could refill unseen."""
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


def worker(n_documents, cache_size, n_features, seed):
    import kgeo
    from kgeo._synthetic import make_topic_corpus

    # About 100 distinct words per document: 122 draws from a Zipfian
    # background plus a topic repeat words (99.8 distinct on average at 10k
    # and 100k documents; 140 draws, used until a review, gave 113).
    X, y = make_topic_corpus(n_documents, n_features, 20, words_per_document=122,
                             random_state=seed)
    data_mb = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20
    # Resident now, not the high-water mark: the generator's freed temporaries
    # (470 MB at 100k documents) would otherwise count as the fit's; and
    # after they are handed back, or the fit reuses them unseen.
    before_mb = resident_before_mb()
    generation_peak_mb = memory_mb("VmHWM")
    reset_peak()
    started = time.perf_counter()
    model = kgeo.SVM(kernel="ngd", cache_size=cache_size).fit(X, y)
    fit_s = time.perf_counter() - started
    fit_peak_mb = memory_mb("VmHWM")
    print(json.dumps({
        "n_documents": n_documents,
        "distinct_words_per_doc": float(np.diff(X.indptr).mean()),
        "fit_s": fit_s,
        "peak_mb": max(generation_peak_mb, fit_peak_mb),
        "fit_peak_mb": fit_peak_mb,
        "before_fit_mb": before_mb,
        "data_mb": data_mb,
        "dense_gram_gb": n_documents ** 2 * 8 / 2**30,
        "n_sv": int(model.support_.shape[0]),
        "train_accuracy": float(model.score(X[:2000], y[:2000])),
        "cache": model.cache_stats_,
    }))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 20000, 50000, 100000])
    parser.add_argument("--cache-size", type=float, default=1000)
    parser.add_argument("--n-features", type=int, default=50000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        worker(args.worker, args.cache_size, args.n_features, args.seed)
        return 0
    # Checked here: a worker's refusal would come after the sizes before it.
    if min(args.sizes) < 20:
        parser.error(f"--sizes must be at least 20 (one document per topic), got "
                     f"{min(args.sizes)}")
    if not 0 < args.cache_size < math.inf:
        parser.error(f"--cache-size must be finite and > 0 (MB), got {args.cache_size!r}")
    if args.n_features < 2:
        parser.error(f"--n-features must be at least 2, got {args.n_features}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")

    print(f"{'documents':>9} {'words/doc':>9} {'fit (s)':>8} {'peak MB':>8} {'data MB':>8} "
          f"{'pre-fit MB':>10} {'dense Gram GB':>13} {'SVs':>7}")
    print(f"{'':>9} (peak: the largest resident size during the fit; pre-fit: resident just "
          f"before it)")
    rows = []
    for n in args.sizes:
        r = run_worker(
            [sys.executable, __file__, "--worker", str(n), "--cache-size", str(args.cache_size),
             "--n-features", str(args.n_features), "--seed", str(args.seed)])
        rows.append(r)
        print(f"{r['n_documents']:>9} {r['distinct_words_per_doc']:>9.1f} {r['fit_s']:>8.1f} "
              f"{r['fit_peak_mb']:>8.0f} {r['data_mb']:>8.1f} {r['before_fit_mb']:>10.0f} "
              f"{r['dense_gram_gb']:>13.1f} {r['n_sv']:>7}", flush=True)
        # The cache takes up to cache_size, but drops the blocks of solved
        # pairs: its own peak (what it counts against cache_size: blocks,
        # the buffers it keeps for the next ones, and blocks being
        # computed) is often far below.
        cache_mb = (r["cache"]["peak_values_allocated"] * r["cache"]["value_bytes"]
                    / 2**20)
        over = r["fit_peak_mb"] - r["before_fit_mb"] - cache_mb
        above = r["fit_peak_mb"] - args.cache_size
        target = ("below cache_size" if above <= 0 else
                  f"cache_size + {above:.0f} MB ({above / r['data_mb']:.1f}x the data)")
        print(f"{'':>9} row cache peak {cache_mb:.0f} MB of cache_size={args.cache_size:g}; "
              f"the fit's memory beyond the pre-fit process and the cache's peak: {over:.0f} "
              f"MB ({over / r['data_mb']:.1f}x the data); the peak is {target}; the "
              f"process's peak with the corpus generation: {r['peak_mb']:.0f} MB", flush=True)
    if len(rows) >= 2:
        n = np.log([r["n_documents"] for r in rows])
        t = np.log([r["fit_s"] for r in rows])
        slope = np.polyfit(n, t, 1)[0]
        print(f"fit time grows as n^{slope:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
