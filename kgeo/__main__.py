"""The ``kgeo`` command: ``kgeo demo``, ``kgeo reproduce`` (and ``python -m kgeo ...``)."""

import argparse
import os
import signal
import sys
import time

from ._version import __version__

# main's status after Ctrl-C: the shells' status for a command SIGINT ended
# (128 + 2), which console_main turns into SIGINT itself.
INTERRUPTED = 130

# The synthetic corpus's options and their defaults: given with --data they
# would be ignored, so they default to None and are filled in here.
_SYNTHETIC_DEFAULTS = {"n_documents": 3000, "n_features": 5000, "n_classes": 10, "seed": 0}


def _check_demo_args(args):
    """The options' errors name the option, and come before any data is loaded."""
    if not (args.C > 0 and args.C < float("inf")):
        raise ValueError(f"--C must be a finite number > 0, got {args.C}")
    if args.C < sys.float_info.min:
        # SVM's box bounds must be normal floats: found at the first fit.
        raise ValueError(f"--C must be at least {sys.float_info.min:.4g} (a normal float), "
                         f"got {args.C}")
    given = [name for name in _SYNTHETIC_DEFAULTS if getattr(args, name) is not None]
    if args.data is not None and given:
        raise ValueError(
            f"{', '.join('--' + name.replace('_', '-') for name in given)} "
            f"{'describe' if len(given) > 1 else 'describes'} the synthetic corpus, which "
            f"--data replaces by 20 Newsgroups; drop one or the other")
    for name, default in _SYNTHETIC_DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    if args.seed < 0:
        raise ValueError(f"--seed must be an integer >= 0, got {args.seed}")
    if args.data is None:
        if args.n_classes < 2:
            raise ValueError(f"--n-classes must be at least 2, got {args.n_classes}")
        if args.n_features < 2:
            raise ValueError(f"--n-features must be at least 2, got {args.n_features}")
        if args.n_documents < 10 * args.n_classes:
            raise ValueError(
                f"--n-documents must be at least 10 per class ({10 * args.n_classes} for "
                f"--n-classes {args.n_classes}), so that the 60 % training and 40 % test "
                f"documents are likely to hold every class; got {args.n_documents}")
    elif args.data == "":
        raise ValueError("--data must name the folder holding 20 Newsgroups, got ''")


def _demo(args):
    import numpy as np

    from ._embedding import MultinomialEmbedding
    from ._svm import SVM
    from .experiments import _fit_without_empty_documents, _predict_empty_documents_too

    _check_demo_args(args)
    if args.data is None:
        from ._synthetic import make_topic_corpus

        X, y = make_topic_corpus(args.n_documents, args.n_features, args.n_classes,
                                 random_state=args.seed)
        n_train = int(0.6 * X.shape[0])
        X_train, y_train, X_test, y_test = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
        source = (f"synthetic corpus: {X.shape[0]} documents from {args.n_classes} topic "
                  f"multinomials over {args.n_features} words ({n_train} train / "
                  f"{X.shape[0] - n_train} test)")
    else:
        from .datasets import load_20newsgroups
        from .text import RainbowVectorizer

        train = load_20newsgroups(args.data, subset="train")
        test = load_20newsgroups(args.data, subset="test")
        vectorizer = RainbowVectorizer(prune_by_doc_count=2)
        X_train = vectorizer.fit_transform(train.data)
        X_test = vectorizer.transform(test.data)
        y_train, y_test = train.target, test.target
        source = (f"20 Newsgroups bydate: {X_train.shape[0]} train / {X_test.shape[0]} test "
                  f"documents, {X_train.shape[1]} words")

    print(source)
    print(f"{'kernel':<8} {'embedding':<12} {'accuracy':>9} {'fit (s)':>8} {'predict (s)':>12} {'SVs':>7}")
    for kernel, weighting, norm in (("ngd", "tf", "l1"), ("linear", "tfidf", "l2")):
        # Sparse rows, whatever scikit-learn's transform_output says.
        embedding = MultinomialEmbedding(weighting=weighting, norm=norm).set_output(
            transform="default").fit(X_train)
        A, B = embedding.transform(X_train), embedding.transform(X_test)
        # A document whose words were all pruned has no point on the simplex:
        # NGD trains without it and predicts it by the intercepts' vote, as
        # `kgeo reproduce` does (kgeo.experiments explains why).
        model = SVM(kernel=kernel, C=args.C)
        started = time.perf_counter()
        n_empty_train = _fit_without_empty_documents(model, A, y_train)
        fit_time = time.perf_counter() - started
        started = time.perf_counter()
        predictions, n_empty_test = _predict_empty_documents_too(model, B)
        predict_time = time.perf_counter() - started
        accuracy = np.mean(predictions == y_test)
        label = f"{weighting.upper()} {norm.upper()}"
        empty = (f"  ({n_empty_train} train / {n_empty_test} test documents without a word: "
                 f"left out / predicted by the intercepts)" if n_empty_train + n_empty_test
                 else "")
        print(f"{kernel:<8} {label:<12} {100 * accuracy:>8.2f}% {fit_time:>8.2f} "
              f"{predict_time:>12.2f} {model.support_.shape[0]:>7}{empty}")
    return 0


def _check_reproduce_args(args):
    """As for the demo: these errors name the option the user typed, not the
    parameter. (run_zhang2005's own, on what the folders hold, name its
    parameters, data_dir and out_dir.)"""
    if not (args.C > 0 and args.C < float("inf")):
        raise ValueError(f"--C must be a finite number > 0, got {args.C}")
    if args.C < sys.float_info.min:
        # SVM's box bounds must be normal floats: found at the first fit.
        raise ValueError(f"--C must be at least {sys.float_info.min:.4g} (a normal float), "
                         f"got {args.C}")
    if args.n_jobs == 0:
        raise ValueError(f"--n-jobs must be a nonzero integer (-1: every CPU, -2: all but "
                         f"one), got {args.n_jobs}")
    if len(set(args.dataset)) != len(args.dataset):
        raise ValueError(f"--dataset must not repeat a name, got {' '.join(args.dataset)}")
    if args.data == "":
        raise ValueError("--data must name the folder holding the corpora, got ''")
    if args.out == "":
        raise ValueError("--out must name a folder for the output files, got ''")


def _reproduce(args):
    from .experiments import run_zhang2005

    _check_reproduce_args(args)
    run_zhang2005(args.dataset, args.data, args.out, C=args.C, c_sweep=args.C_sweep,
                  progress=not args.quiet, vocabulary=args.vocabulary, n_jobs=args.n_jobs,
                  figure=not args.no_figure, overwrite=args.overwrite)
    return 0


def main(argv=None):
    """Entry point of the ``kgeo`` console script."""
    parser = argparse.ArgumentParser(
        prog="kgeo", description="Train SVMs with geometric kernels for text: a demo, or a "
        "paper's tables reproduced (also run as 'python -m kgeo').")
    parser.add_argument("--version", action="version", version=f"kgeo {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser(
        "demo", help="train NGD (L1 TF) and linear (L2 TF-IDF) SVMs and print their accuracy")
    demo.add_argument("--data", metavar="DIR", default=None,
                      help="use 20 Newsgroups: DIR holds 20news-bydate/20news-bydate.tar.gz "
                           "(default: a synthetic corpus generated on the spot)")
    demo.add_argument("--n-documents", type=int, default=None, metavar="N",
                      help="synthetic corpus: documents, the first 60 %% for training "
                           "(default: 3000)")
    demo.add_argument("--n-features", type=int, default=None, metavar="N",
                      help="synthetic corpus: words in the vocabulary (default: 5000)")
    demo.add_argument("--n-classes", type=int, default=None, metavar="N",
                      help="synthetic corpus: topics, one per class (default: 10)")
    demo.add_argument("--C", type=float, default=1.0,
                      help="box constraint of both SVMs (default: %(default)s)")
    demo.add_argument("--seed", type=int, default=None,
                      help="synthetic corpus: random seed (default: 0)")
    demo.set_defaults(run=_demo)

    reproduce = commands.add_parser(
        "reproduce", help="regenerate a paper's tables (zhang2005: Tables 1-3 of Zhang, "
                          "Chen & Lee, SIGIR 2005)",
        description="Train every cell of the paper's tables with its preprocessing, and "
                    "write results.csv, results_by_split.csv, table.md (ours beside the "
                    "paper's), significance.csv, accuracy.png (with matplotlib) and, with "
                    "--C-sweep, c_sweep.csv to OUT. Files of those names are replaced only "
                    "if an earlier kgeo run wrote them and they are unchanged, or with "
                    "--overwrite; otherwise the run stops before its training. An "
                    "earlier run's c_sweep.csv or accuracy.png that this run does not write "
                    "is removed if kgeo wrote it and it is unchanged (OUT/.kgeo-outputs.json "
                    "lists what each run wrote), left with a warning otherwise.")
    reproduce.add_argument("experiment", choices=["zhang2005"],
                           help="the experiment to reproduce")
    reproduce.add_argument("--dataset", nargs="+", required=True, choices=["20ng", "webkb"],
                           help="20ng (Table 2) and/or webkb (Table 1)")
    reproduce.add_argument("--data", metavar="DIR", required=True,
                           help="folder holding 20news-bydate/20news-bydate.tar.gz and/or "
                                "webkb/webkb-data.tar.gz (or the extracted folders)")
    reproduce.add_argument("--out", metavar="OUT", required=True,
                           help="folder for the output files (created if missing)")
    reproduce.add_argument("--C", type=float, default=1.0,
                           help="box constraint of every SVM (default: 1, as the paper)")
    reproduce.add_argument("--C-sweep", action="store_true",
                           help="also train NGD-L1, LIN-L2 and NED-L2 for C in "
                                "0.001 ... 1000 and report whether their ranking changes")
    reproduce.add_argument("--vocabulary", choices=["train", "all"], default="train",
                           help="learn the vocabulary from each split's training documents "
                                "(default) or from all documents, as Rainbow indexing both")
    reproduce.add_argument("--n-jobs", type=int, default=None,
                           help="threads per SVM; -1 all CPUs, -2 all but one, ... "
                                "(default: OMP_NUM_THREADS if set, else all CPUs)")
    reproduce.add_argument("--no-figure", action="store_true", help="do not draw accuracy.png")
    reproduce.add_argument("--overwrite", action="store_true",
                           help="replace files of the output names in OUT that kgeo did not "
                                "write, or that were changed since")
    reproduce.add_argument("--quiet", action="store_true",
                           help="no progress bar and no per-cell lines")
    reproduce.set_defaults(run=_reproduce)

    args = parser.parse_args(argv)
    try:
        status = args.run(args)
        if sys.stdout is not None:  # None when started with stdout closed (`>&-`)
            sys.stdout.flush()  # a closed pipe fails here, inside the try, not at exit
        return status
    except BrokenPipeError:
        # The reader went away (`kgeo demo | head -1`): nothing to report.
        # Python's own flush of stdout at exit would fail again, so stdout
        # is pointed at /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (ValueError, TypeError, OSError) as error:
        print(f"kgeo {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Ctrl-C: one line, not a traceback through the fit's threads (a
        # review); console_main then ends the process by SIGINT.
        print(f"kgeo {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except MemoryError as error:
        # e.g. kgeo demo --n-features 1000000000000: NumPy's message names the
        # array it could not allocate.
        print(f"kgeo {args.command}: error: not enough memory for these sizes ({error})",
              file=sys.stderr)
        return 2


def console_main():
    """The ``kgeo`` console script and ``python -m kgeo``: `main` on the
    command line, its status returned; after Ctrl-C, the process ends by
    SIGINT instead, as Python ends it for an uncaught KeyboardInterrupt. A
    shell script running kgeo then stops too: given exit status 130, bash
    takes the signal for handled by kgeo and runs the script on (a
    review: `for d in ...; do kgeo reproduce ...; done` took one Ctrl-C
    per loop)."""
    status = main()
    if status == INTERRUPTED and os.name == "posix":
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()  # the signal ends the process without Python's flush
            except (OSError, ValueError):
                pass
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return status


if __name__ == "__main__":
    sys.exit(console_main())
