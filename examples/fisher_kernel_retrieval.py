"""Hofmann's Fisher kernel for ad hoc retrieval on the classic SMART collections.

The retrieval experiment of Hofmann (NIPS 2000, section 4): documents are
ranked against each query by the vector space model (TF-IDF cosine), by the
Fisher kernel of PLSA models fitted to the collection's documents (queries
folded in), and by the two combined; the measure is average precision.
Hofmann reports gains over the vector space model on all four collections
(MED, CRAN, CISI, CACM; CACM is not in ``../shared/data``).

    python examples/fisher_kernel_retrieval.py --data ../shared/data

``--data`` is a folder holding ``ir-classic/`` (the Glasgow archives). The
text does not state Hofmann's preprocessing, numbers of topics or how the
two scores were combined; the choices here (printed with the table) are
documented in ``docs/model_kernels.md``.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import kgeo
from kgeo.datasets import DatasetNotFoundError, load_smart
from kgeo.text import RainbowVectorizer

COLLECTIONS = ("med", "cran", "cisi")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="folder holding ir-classic/")
    parser.add_argument("--collections", default=",".join(COLLECTIONS))
    parser.add_argument("--components", default="1,2,4,8,16,32,64",
                        help="numbers of topics of the PLSA models whose kernels are added")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.collections = tuple(args.collections.split(","))
    unknown = [name for name in args.collections if name not in COLLECTIONS]
    if unknown:
        parser.error(f"--collections must name some of {','.join(COLLECTIONS)}, got {unknown}")
    try:
        args.components = tuple(int(k) for k in args.components.split(","))
    except ValueError:
        parser.error(f"--components must be comma-separated integers, got {args.components!r}")
    if not all(k >= 1 for k in args.components):
        parser.error(f"--components must be at least 1, got {args.components}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    return args


def average_precision(scores, relevant):
    """Non-interpolated average precision of one ranking.

    The mean, over the relevant documents, of the precision at the rank of
    each (documents ranked by decreasing score, ties in document order).

    Parameters
    ----------
    scores : ndarray of shape (n_documents,)
    relevant : ndarray of bool, shape (n_documents,)
        At least one True.
    """
    ranked = relevant[np.argsort(-scores, kind="stable")]
    precision = np.cumsum(ranked) / np.arange(1, ranked.size + 1)
    return float(precision[ranked].sum() / ranked.sum())


def cosine(A, B):
    """Cosines between the rows of sparse A and B (0 against an empty row)."""
    norm_a = np.sqrt(np.asarray(A.multiply(A).sum(axis=1)).ravel())
    norm_b = np.sqrt(np.asarray(B.multiply(B).sum(axis=1)).ravel())
    products = (A @ B.T).toarray()
    return products / np.outer(np.where(norm_a > 0, norm_a, 1), np.where(norm_b > 0, norm_b, 1))


def evaluate(collection, components, seed):
    """Mean average precision of each ranking over the judged queries."""
    vectorizer = RainbowVectorizer()
    documents = vectorizer.fit_transform(collection.documents)
    queries = vectorizer.transform(collection.queries)
    column = {int(doc_id): j for j, doc_id in enumerate(collection.doc_ids)}
    judged, relevant = [], []
    for i, query_id in enumerate(collection.query_ids):
        hits = [column[d] for d in collection.qrels.get(int(query_id), ()) if d in column]
        if hits:  # queries without a relevant document have no average precision
            judged.append(i)
            relevant.append(np.isin(np.arange(documents.shape[0]), hits))

    tfidf = kgeo.MultinomialEmbedding(weighting="tfidf", norm="l2").fit(documents)
    vsm = (tfidf.transform(queries[judged]) @ tfidf.transform(documents).T).toarray()
    fisher = kgeo.PLSAFisherEmbedding(components, random_state=seed).fit(documents)
    doc_scores, query_scores = fisher.transform(documents), fisher.transform(queries[judged])
    fisher_kernel = (query_scores @ doc_scores.T).toarray()
    fisher_cosine = cosine(query_scores, doc_scores)
    rankings = {
        "VSM (TF-IDF cosine)": vsm,
        "Fisher kernel": fisher_kernel,
        "Fisher cosine": fisher_cosine,
        "VSM + Fisher cosine": 0.5 * vsm + 0.5 * fisher_cosine,
    }
    return {name: np.mean([average_precision(s, r) for s, r in zip(scores, relevant)])
            for name, scores in rankings.items()}, documents.shape, len(judged)


def main(argv=None):
    args = parse_args(argv)
    started = time.perf_counter()
    print(f"PLSA with K = {', '.join(map(str, args.components))} fitted to each collection's "
          f"documents, queries folded in; Rainbow's lexer with the SMART stop list, no "
          f"stemming; mean (non-interpolated) average precision over the judged queries\n")
    rows = {}
    for name in args.collections:
        try:
            collection = load_smart(Path(args.data) / "ir-classic", name)
        except DatasetNotFoundError as error:
            sys.exit(f"--data: {error}")
        rows[name], shape, n_judged = evaluate(collection, args.components, args.seed)
        print(f"{name.upper()}: {shape[0]} documents, {shape[1]} words, {n_judged} judged "
              f"queries", flush=True)
    names = list(next(iter(rows.values())))
    print("\n| ranking | " + " | ".join(c.upper() for c in rows) + " |")
    print("|" + " --- |" * (len(rows) + 1))
    for name in names:
        print(f"| {name} | " + " | ".join(f"{rows[c][name]:.4f}" for c in rows) + " |")
    print(f"\n{time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
