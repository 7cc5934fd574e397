"""Hofmann's Fisher kernel against the plain inner product on Reuters-21578.

The categorisation experiment of Hofmann (NIPS 2000, section 5): PLSA is
fitted to all ModApte training stories without their labels, then linear
SVMs with the plain inner product and with the Fisher kernel are trained on
random subsamples of the labelled stories, one category against the rest,
and their error on the ModApte test stories is reported per category.
Hofmann's claim: large gains on small subsamples, none with all the data.

    python examples/fisher_kernel_reuters.py --data ../shared/data

``--data`` is a folder holding ``reuters21578/`` (the ``reut2-*.sgm`` files
or their archive). The text does not state Hofmann's weighting, numbers of
topics or subsampling factors; he tuned C on held-out data, where this fixes
C = 1, and his kNN classifier is not run. The choices here (printed with the
table) are documented in ``docs/model_kernels.md``.
"""

import argparse
import math
import sys
import time

import numpy as np

import kgeo
from kgeo.datasets import DatasetNotFoundError, load_reuters21578
from kgeo.text import RainbowVectorizer

CATEGORIES = ("earn", "acq", "money-fx", "grain", "crude")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="folder holding reuters21578/")
    parser.add_argument("--components", default="16,32",
                        help="numbers of topics of the PLSA models whose kernels are added")
    parser.add_argument("--fractions", default="0.01,0.02,0.05,0.1,0.2,1",
                        help="shares of the training stories the SVMs are trained on")
    parser.add_argument("--repeats", type=int, default=5,
                        help="random subsamples per share (one for the whole set)")
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        args.components = tuple(int(k) for k in args.components.split(","))
        args.fractions = tuple(float(f) for f in args.fractions.split(","))
    except ValueError:
        parser.error(f"--components and --fractions must be comma-separated numbers, got "
                     f"{args.components!r} and {args.fractions!r}")
    if not all(k >= 1 for k in args.components):
        parser.error(f"--components must be at least 1, got {args.components}")
    if not 0 < args.C < math.inf:
        parser.error(f"--C must be finite and > 0, got {args.C}")
    if args.C < sys.float_info.min:  # the SVMs refuse it, after the data is read
        parser.error(f"--C must be at least {sys.float_info.min:.4g} (a normal float), "
                     f"got {args.C}")
    if not all(0 < f <= 1 for f in args.fractions):
        parser.error(f"--fractions must lie in (0, 1], got {args.fractions}")
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    return args


def subsample_errors(features, Y_train, Y_test, fraction, repeats, C, seed):
    """Per category, the mean test error (%) over ``repeats`` subsamples."""
    n_train = features[0].shape[0]
    size = max(int(round(fraction * n_train)), 2)
    n_draws = 1 if size >= n_train else repeats
    errors = np.zeros((n_draws, Y_train.shape[1]))
    for draw in range(n_draws):
        rows = np.sort(np.random.default_rng([seed, draw]).choice(n_train, size, replace=False))
        for j in range(Y_train.shape[1]):
            y = Y_train[rows, j]
            if y.min() == y.max():  # no positive story drawn: the SVM says "no"
                predictions = np.full(Y_test.shape[0], y[0])
            else:
                model = kgeo.SVM(kernel="linear", C=C).fit(features[0][rows], y)
                predictions = model.predict(features[1])
            errors[draw, j] = 100 * np.mean(predictions != Y_test[:, j])
    return errors.mean(axis=0), size, n_draws


def main(argv=None):
    args = parse_args(argv)
    started = time.perf_counter()
    try:
        train = load_reuters21578(args.data, subset="train")
        test = load_reuters21578(args.data, subset="test")
    except DatasetNotFoundError as error:
        sys.exit(f"--data: {error}")
    vectorizer = RainbowVectorizer(prune_by_doc_count=2)
    X_train = vectorizer.fit_transform(train.data)
    X_test = vectorizer.transform(test.data)
    columns = [train.category_names.index(c) for c in CATEGORIES]
    Y_train = train.indicator_matrix(sparse=False)[:, columns]
    Y_test = test.indicator_matrix(sparse=False)[:, columns]
    print(f"Reuters-21578 ModApte: {X_train.shape[0]} training / {X_test.shape[0]} test "
          f"stories, {X_train.shape[1]} words (Rainbow lexer, SMART stop list, words in more "
          f"than 2 training stories)")

    plain = kgeo.MultinomialEmbedding(weighting="tf", norm="l2").fit(X_train)
    fitting = time.perf_counter()
    fisher = kgeo.PLSAFisherEmbedding(args.components, random_state=args.seed).fit(X_train)
    fitting = time.perf_counter() - fitting
    print(f"PLSA with K = {', '.join(map(str, args.components))} fitted to the {X_train.shape[0]} "
          f"training stories without labels in {fitting:.1f} s "
          f"({', '.join(str(m.n_iter_) for m in fisher.models_)} EM steps)")
    kernels = {
        "linear (TF, L2)": (plain.transform(X_train), plain.transform(X_test)),
        "Fisher": (fisher.transform(X_train), fisher.transform(X_test)),
    }
    print(f"binary linear SVMs, C = {args.C}; test error (%) per category, mean over "
          f"{args.repeats} subsamples (one fit for the whole set)\n")
    header = " | ".join(CATEGORIES)
    print(f"| training stories | kernel | {header} | average |")
    print("|" + " --- |" * (len(CATEGORIES) + 3))
    for fraction in args.fractions:
        for name, features in kernels.items():
            errors, size, n_draws = subsample_errors(features, Y_train, Y_test, fraction,
                                                     args.repeats, args.C, args.seed)
            cells = " | ".join(f"{e:.2f}" for e in errors)
            print(f"| {size} ({100 * fraction:g} %) | {name} | {cells} | {errors.mean():.2f} |",
                  flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
