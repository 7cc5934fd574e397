"""Time the full NGD Gram matrix of 20 Newsgroups: kgeo against NumPy/SciPy.

The negative geodesic distance kernel of Zhang, Chen & Lee (2005),
``k(x, y) = -2 arccos(sum_i sqrt(p_i q_i))`` with ``p = x / sum(x)``, on the
11,314 training documents of 20 Newsgroups "bydate", computed

- by ``kgeo.pairwise_kernels(X, kernel="ngd")`` on all cores and on one, and
- the way a NumPy/SciPy user would: ``S = sqrt`` of the L1-normalised CSR
  matrix, ``G = (S @ S.T).toarray()``, ``-2 * arccos(clip(G, 0, 1))``,

in the same run (best of ``--repeat``). It prints the times, their ratios and
the largest differences, and exits with status 1 if the cosines of half the
kernels (the Bhattacharyya coefficients) differ by more than 1e-12, if the
kernels differ by more than 1e-6, or if kgeo's result depends on the number of
threads.

Why two bounds: arccos amplifies rounding near 1. The NumPy route's
coefficient of a document with itself is 1 up to a few ulps, and
``2 arccos(1 - k eps) ~ 2 sqrt(2 k eps)`` puts a few 1e-8 (4e-7 for the longest
messages) on its diagonal and on near-duplicates; kgeo takes those close pairs
from the rows' difference and gets them exactly (0 on the diagonal), so the
kernels themselves differ by the NumPy route's error there. Both routes divide
by the row sum (as the definition does).

Usage::

    python benchmarks/bench_kernels.py [--data DIR] [--repeat 3] [--n-docs N]

``DIR`` holds ``20news-bydate/20news-bydate.tar.gz`` (default: ``../shared/data``
relative to the repository root). The count matrix comes from
``kgeo.datasets.load_20newsgroups`` and ``kgeo.text.RainbowVectorizer`` (lowercase
alphabetic tokens, Rainbow's SMART stop list) when kgeo has them, else from a
plain lowercase alphabetic regex over the tar members.
"""

import argparse
import collections
import gc
import os
import re
import sys
import tarfile
import time
from pathlib import Path

import numpy as np
import scipy
import scipy.sparse as sp

import kgeo

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data"
ARCHIVE = Path("20news-bydate") / "20news-bydate.tar.gz"
TOLERANCE = 1e-6
COS_TOLERANCE = 1e-12


def counts_with_kgeo(archive, prune_by_doc_count):
    from kgeo.datasets import load_20newsgroups
    from kgeo.text import RainbowVectorizer

    corpus = load_20newsgroups(archive, subset="train")
    vectorizer = RainbowVectorizer(prune_by_doc_count=prune_by_doc_count)
    return vectorizer.fit_transform(corpus.data), "kgeo.datasets + kgeo.text.RainbowVectorizer"


def counts_with_regex(archive, prune_by_doc_count):
    """Counts of [a-z]+ tokens of the lower-cased training messages."""
    token = re.compile(r"[a-z]+")
    docs = []
    with tarfile.open(archive) as tar:
        members = sorted(
            (m for m in tar.getmembers()
             if m.isfile() and m.name.startswith("20news-bydate-train/")),
            key=lambda m: m.name)
        for m in members:
            text = tar.extractfile(m).read().decode("latin-1").lower()
            docs.append(collections.Counter(token.findall(text)))
    vocabulary = {w: j for j, w in enumerate(sorted(set().union(*docs)))}
    indptr, indices, data = [0], [], []
    for doc in docs:
        indices.extend(vocabulary[w] for w in doc)
        data.extend(doc.values())
        indptr.append(len(indices))
    X = sp.csr_matrix((np.array(data, dtype=np.float64), np.array(indices), np.array(indptr)),
                      shape=(len(docs), len(vocabulary)))
    if prune_by_doc_count:
        df = np.bincount(X.indices, minlength=X.shape[1])
        X = X[:, np.flatnonzero(df > prune_by_doc_count)]
    X.sort_indices()
    return X, "own [a-z]+ regex over the tar"


def load_counts(data_dir, prune_by_doc_count):
    archive = data_dir / ARCHIVE
    if not archive.is_file():
        sys.exit(f"20 Newsgroups archive not found at {archive} (use --data DIR)")
    try:
        X, how = counts_with_kgeo(archive, prune_by_doc_count)
    except ImportError:
        X, how = counts_with_regex(archive, prune_by_doc_count)
    X = sp.csr_matrix(X, dtype=np.float64)
    empty = np.diff(X.indptr) == 0
    if empty.any():  # a message of stop words only: no point of the simplex
        X = X[~empty]
    return X, how, int(empty.sum())


def ngd_numpy(X, rows=1000):
    """The NGD Gram matrix as a NumPy/SciPy user writes it: SciPy's sparse
    product 1,000 rows at a time into one dense array, mapped in place (in
    one go, the product first held 128 M stored entries as a sparse matrix,
    and took 40 % longer)."""
    S = sp.csr_matrix(X, copy=True)
    S.data /= np.repeat(np.asarray(S.sum(axis=1)).ravel(), np.diff(S.indptr))  # p = x / sum(x)
    S.data = np.sqrt(S.data)
    ST = sp.csr_matrix(S.T)
    G = np.empty((S.shape[0], S.shape[0]))
    for start in range(0, S.shape[0], rows):
        G[start:start + rows] = (S[start:start + rows] @ ST).toarray()
    np.arccos(np.clip(G, 0.0, 1.0, out=G), out=G)
    G *= -2.0
    return G


def best_of(repeat, fn):
    """Best wall time over ``repeat`` calls, and the last result."""
    best, result = np.inf, None
    for _ in range(repeat):
        result = None  # free the previous Gram matrix before timing the next
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path,
                        default=Path(os.environ.get("KGEO_DATA", DEFAULT_DATA)),
                        help="folder holding 20news-bydate/20news-bydate.tar.gz "
                             "(default: $KGEO_DATA or ../shared/data from the repository root)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="timed runs of each route (default 3)")
    parser.add_argument("--n-docs", type=int, default=None,
                        help="use only the first N documents (default: all 11,314)")
    parser.add_argument("--prune-by-doc-count", type=int, default=0,
                        help="drop words in this many or fewer documents (default 0: keep all)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be >= 1, got {args.repeat}")
    if args.n_docs is not None and args.n_docs < 1:
        # X[:-11000] would quietly keep all but the last 11,000.
        parser.error(f"--n-docs must be >= 1, got {args.n_docs}")

    start = time.perf_counter()
    X, how, n_dropped = load_counts(args.data, args.prune_by_doc_count)
    if args.n_docs is not None:
        X = X[:args.n_docs]
    n_cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"20 Newsgroups train: {X.shape[0]:,} documents x {X.shape[1]:,} words, "
          f"{X.nnz:,} nonzeros ({how}; {n_dropped} empty documents dropped; "
          f"loaded in {time.perf_counter() - start:.1f} s)")
    print(f"Gram matrix {X.shape[0]:,} x {X.shape[0]:,} float64 = "
          f"{X.shape[0] ** 2 * 8 / 2 ** 30:.2f} GiB; best of {args.repeat}; {n_cores} cores; "
          f"kgeo {kgeo.__version__}, numpy {np.__version__}, scipy {scipy.__version__}")

    t_np, K_np = best_of(args.repeat, lambda: ngd_numpy(X))
    t_all, K_all = best_of(args.repeat, lambda: kgeo.pairwise_kernels(X, kernel="ngd", n_jobs=-1))
    same_threads = None
    if n_cores > 1:
        t_one, K_one = best_of(
            args.repeat, lambda: kgeo.pairwise_kernels(X, kernel="ngd", n_jobs=1))
        same_threads = bool(np.array_equal(K_one, K_all))
        del K_one
    else:
        t_one = t_all

    diff = np.abs(K_all - K_np)
    max_diff = float(diff.max())
    max_diag = float(np.diag(diff).max())
    np.fill_diagonal(diff, 0.0)
    max_off = float(diff.max())
    del diff
    G_np = np.cos(K_np / 2.0)
    max_cos = float(np.abs(np.cos(K_all / 2.0) - G_np).max())
    del G_np

    rows = [
        ("numpy/scipy: sqrt(L1 CSR), S @ S.T, arccos", t_np),
        ("kgeo.pairwise_kernels, n_jobs=1", t_one),
        (f"kgeo.pairwise_kernels, n_jobs=-1 ({n_cores} cores)", t_all),
    ]
    width = max(len(r[0]) for r in rows)
    print()
    print(f"{'route':<{width}}  {'best [s]':>9}  {'vs numpy':>9}  {'vs kgeo 1 thread':>16}")
    print(f"{'-' * width}  {'-' * 9}  {'-' * 9}  {'-' * 16}")
    for name, t in rows:
        print(f"{name:<{width}}  {t:9.2f}  {t_np / t:8.2f}x  {t_one / t:15.2f}x")
    print()
    print(f"max |K_kgeo - K_numpy|           {max_diff:.3g}  (diagonal {max_diag:.3g}, "
          f"off-diagonal {max_off:.3g}; bound {TOLERANCE:g})")
    print(f"max |cos(K_kgeo/2) - cos(K_np/2)| {max_cos:.3g}")
    if same_threads is not None:
        print(f"kgeo n_jobs=1 and n_jobs=-1 bit-identical: {same_threads}")

    failed = False
    if not max_diff <= TOLERANCE:
        print(f"FAIL: the Gram matrices differ by {max_diff:.3g} > {TOLERANCE:g}", file=sys.stderr)
        failed = True
    if not max_cos <= COS_TOLERANCE:
        print(f"FAIL: the coefficients differ by {max_cos:.3g} > {COS_TOLERANCE:g}",
              file=sys.stderr)
        failed = True
    if same_threads is False:
        print("FAIL: kgeo's result depends on n_jobs", file=sys.stderr)
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
