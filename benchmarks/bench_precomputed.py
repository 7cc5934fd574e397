"""kgeo's SMO against libsvm's on the same kernel matrices (20 Newsgroups bydate).

Both solvers get the same precomputed Gram, so this compares the solvers and
their prediction alone, not the kernel rows (``bench_20ng.py`` does the whole
pipelines): ``kgeo.SVM(kernel="precomputed")`` against
``sklearn.svm.SVC(kernel="precomputed")``, C = 1, one-vs-one, on

- NGD of the L1 TF rows: the NumPy/SciPy Gram that ``bench_20ng.py``'s
  sklearn pipeline builds (``-2 arccos`` of the sparse product of square roots);
- LIN of the L2 TF-IDF rows: ``X @ X.T`` by SciPy;
- NGD as a callable kernel, ``kernel=f`` with ``f(A, B)`` that NumPy/SciPy
  Gram of the L1 TF rows A and B, given to both estimators: each computes
  what it asks ``f`` for (kgeo: the training Gram, then the test rows
  against the support vectors in chunks; scikit-learn: the training Gram,
  then the test rows against every training row), inside the clock.

Training (11,314 x 11,314, 1.0 GB) and test (7,532 x 11,314) matrices are
computed in each process before the clock starts. Each configuration runs in
its own process (peak memory ``VmHWM`` is then its own, matrices
included: kgeo reads the training matrix in place, without a copy); kgeo's
runs ``--repeat`` times, medians reported, sklearn's once (its fits are long
and steady).

    python benchmarks/bench_precomputed.py --data ../shared/data [--repeat 3]
"""

import json
import os
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

from _workers import (accuracy_gap, accuracy_within, peak_resident_mb, reset_peak,
                      resident_before_mb)
from bench_20ng import ngd_gram, parse_args, prepare, sqrt_l1, worker_runs

CONFIGS = ["kgeo-ngd", "sklearn-ngd", "kgeo-linear", "sklearn-linear", "kgeo-callable",
           "sklearn-callable"]


def matrices(kernel, work_dir):
    """Training and test Gram of ``kernel`` as bench_20ng's sklearn pipeline makes them."""
    import kgeo

    X_train = sp.load_npz(os.path.join(work_dir, "train.npz"))
    X_test = sp.load_npz(os.path.join(work_dir, "test.npz"))
    if kernel == "ngd":
        emb = kgeo.MultinomialEmbedding(weighting="tf", norm="l1").fit(X_train)
        A, B = sqrt_l1(emb.transform(X_train)), sqrt_l1(emb.transform(X_test))
        return ngd_gram(A, A), ngd_gram(B, A)
    emb = kgeo.MultinomialEmbedding(weighting="tfidf", norm="l2").fit(X_train)
    A, B = emb.transform(X_train), emb.transform(X_test)
    K = (A @ A.T).toarray()
    # SciPy's sparse product rounds K[i, j] and K[j, i] alike? Not promised:
    # both solvers get the same matrix, made exactly symmetric.
    K = (K + K.T) / 2
    return K, (B @ A.T).toarray()


def callable_problem(work_dir):
    """The L1 TF rows and the NGD function both estimators are given; the
    function records the time spent in it."""
    import kgeo

    X_train = sp.load_npz(os.path.join(work_dir, "train.npz"))
    X_test = sp.load_npz(os.path.join(work_dir, "test.npz"))
    emb = kgeo.MultinomialEmbedding(weighting="tf", norm="l1").fit(X_train)
    spent = []

    def ngd_function(A, B):
        started = time.perf_counter()
        K = ngd_gram(sqrt_l1(A), sqrt_l1(B))
        spent.append(time.perf_counter() - started)
        return K

    return emb.transform(X_train), emb.transform(X_test), ngd_function, spent


def worker(config, work_dir):
    import kgeo

    library, kernel = config.split("-")
    spent = []
    if kernel == "callable":
        K, K_test, function, spent = callable_problem(work_dir)
    else:
        K, K_test = matrices(kernel, work_dir)
        function = "precomputed"
    y_train = np.load(os.path.join(work_dir, "y_train.npy"))
    y_test = np.load(os.path.join(work_dir, "y_test.npy"))
    if library == "kgeo":
        model = kgeo.SVM(kernel=function, C=1.0)
    else:
        from sklearn.svm import SVC

        model = SVC(kernel=function, C=1.0)
    # The peak from here on (the matrices resident): building them (the
    # linear one's sparse product and symmetrisation) peaked above what either
    # solver adds, alike on both sides. What the fit and predict added is that
    # peak less the resident size now (scikit-learn's import, 100 MB, is in
    # its side's resident size alone).
    # Freed heap trimmed first (see resident_before_mb): left resident, the
    # fit refilled it without raising the peak, and "added" came out small.
    pre_mb = resident_before_mb()
    reset_peak()
    started = time.perf_counter()
    model.fit(K, y_train)
    fitted = time.perf_counter()
    predicted = model.predict(K_test)
    done = time.perf_counter()
    print(json.dumps({
        "fit_s": fitted - started, "predict_s": done - fitted,
        "function_s": sum(spent), "function_calls": len(spent),
        "accuracy": float(np.mean(predicted == y_test)),
        "n_sv": int(model.support_.shape[0]),
        "n_iter": int(np.sum(model.n_iter_)),
        "peak_mb": peak_resident_mb(),
        "added_mb": peak_resident_mb() - pre_mb,
    }))


def main():
    args = parse_args(__doc__, CONFIGS, 3)
    if args.worker:
        worker(*args.worker)
        return 0

    results = {}
    with tempfile.TemporaryDirectory() as work_dir:
        shapes = prepare(args.data, work_dir)
        print(f"20 Newsgroups bydate: train {shapes[0]}, test {shapes[1]}; "
              f"the same precomputed Gram for both solvers")
        for config in CONFIGS:
            if config in args.skip:
                continue
            runs = worker_runs(__file__, config, work_dir, args.repeat)
            r = dict(runs[-1])
            for key in ("fit_s", "predict_s"):
                r[key] = float(np.median([run[key] for run in runs]))
            r["peak_mb"] = max(run["peak_mb"] for run in runs)
            r["added_mb"] = max(run["added_mb"] for run in runs)
            results[config] = r
            fits = ", ".join(f"{run['fit_s']:.2f}" for run in runs)
            calls = (f"  in f {r['function_s']:.2f} s ({r['function_calls']} calls)"
                     if r["function_calls"] else "")
            print(f"{config:<16} accuracy {100 * r['accuracy']:6.2f}%  fit {r['fit_s']:6.2f} s "
                  f"({fits})  predict {r['predict_s']:5.2f} s  peak {r['peak_mb']:6.0f} MB  "
                  f"SVs {r['n_sv']}  SMO iterations {r['n_iter']}{calls}", flush=True)
    outside = False
    for kernel in ("ngd", "linear", "callable"):
        ours, theirs = results.get(f"kgeo-{kernel}"), results.get(f"sklearn-{kernel}")
        if ours and theirs:
            same = "function" if kernel == "callable" else "matrix"
            print(f"{kernel}: on the same {same}, kgeo fits {theirs['fit_s'] / ours['fit_s']:.1f}x "
                  f"and predicts {theirs['predict_s'] / ours['predict_s']:.1f}x faster than "
                  f"libsvm, peak memory {ours['peak_mb'] / theirs['peak_mb']:.2f} of sklearn's "
                  f"(added by fit and predict: {ours['added_mb']:.0f} MB against "
                  f"{theirs['added_mb']:.0f} MB), "
                  f"accuracy {accuracy_gap(ours['accuracy'], theirs['accuracy'])}")
            outside |= not accuracy_within(ours["accuracy"], theirs["accuracy"])
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
