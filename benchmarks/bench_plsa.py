"""Time PLSA's EM on 20 Newsgroups: kgeo.PLSA against scikit-learn's NMF.

PLSA fitted by EM and NMF with the generalised Kullback-Leibler loss fitted by
Lee & Seung's multiplicative updates maximise the same likelihood (Gaussier &
Goutte 2005): both are the closest thing scikit-learn has to PLSA, and each of
their steps costs ``O(nnz K)`` on a sparse count matrix. This script runs both
for the same number of steps on the 11,314 training documents of 20
Newsgroups "bydate" (no convergence test, no smoothing for PLSA), in the same
run, and prints the time per step, their ratio, and the per-word
log-likelihood each reached, ``sum n(d, w) log P(w | d) / sum n(d, w)`` with
NMF's ``W H`` normalised per document into ``P(w | d)``.

Usage::

    python benchmarks/bench_plsa.py [--data DIR] [--topics 10,30] [--steps 100]

``DIR`` holds ``20news-bydate/20news-bydate.tar.gz`` (default:
``../shared/data`` relative to the repository root).
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

import kgeo
from kgeo.datasets import load_20newsgroups
from kgeo.text import RainbowVectorizer

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data"


def per_word_log_likelihood(X, doc_topic, topic_word):
    """``sum n log P(w | d) / sum n`` for a factorisation ``doc_topic @ topic_word``
    whose rows are normalised into distributions here."""
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    model = np.einsum("ik,ik->i", doc_topic[rows], topic_word.T[X.indices])
    totals = doc_topic @ topic_word.sum(axis=1)
    return float(np.sum(X.data * np.log(model / totals[rows])) / X.data.sum())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--topics", default="10,30")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        topics = [int(k) for k in args.topics.split(",")]
    except ValueError:
        parser.error(f"--topics must be integers separated by commas, got {args.topics!r}")
    if min(topics) < 1:
        parser.error(f"--topics must be >= 1, got {min(topics)}")
    if args.steps < 1:
        parser.error(f"--steps must be >= 1, got {args.steps}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")

    from sklearn.decomposition import NMF

    train = load_20newsgroups(args.data, subset="train")
    X = RainbowVectorizer(prune_by_doc_count=2).fit_transform(train.data)
    X = X[np.diff(X.indptr) > 0]  # NMF needs no care for them, the log-likelihood does
    print(f"20 Newsgroups train: {X.shape[0]} documents, {X.shape[1]} words, {X.nnz} nonzeros; "
          f"{args.steps} steps each; kgeo on every core (n_jobs=None), NMF's updates as "
          f"NumPy/SciPy run them\n")
    print("| K | kgeo.PLSA (s per step) | NMF KL, mu (s per step) | ratio | log-likelihood "
          "per word, kgeo | NMF |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n_topics in topics:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # both stop at max_iter on purpose
            started = time.perf_counter()
            plsa = kgeo.PLSA(n_topics, topic_word_smoothing=0.0, doc_topic_smoothing=0.0,
                             max_iter=args.steps, tol=0.0, random_state=args.seed).fit(X)
            plsa_time = (time.perf_counter() - started) / plsa.n_iter_
            nmf = NMF(n_topics, beta_loss="kullback-leibler", solver="mu", init="random",
                      max_iter=args.steps, tol=0.0, random_state=args.seed)
            started = time.perf_counter()
            W = nmf.fit_transform(X)
            nmf_time = (time.perf_counter() - started) / nmf.n_iter_
        plsa_ll = plsa.log_likelihood_ / X.data.sum()
        nmf_ll = per_word_log_likelihood(X, W, nmf.components_)
        print(f"| {n_topics} | {plsa_time:.4f} | {nmf_time:.4f} | {nmf_time / plsa_time:.1f}x | "
              f"{plsa_ll:.4f} | {nmf_ll:.4f} |", flush=True)


if __name__ == "__main__":
    main()
