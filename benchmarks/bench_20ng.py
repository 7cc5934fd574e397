"""kgeo against scikit-learn/libsvm on 20 Newsgroups bydate, in one run.

Full training set (11,314 documents) and test set (7,532), C = 1, one-vs-one:

- NGD on L1 TF: ``kgeo.SVM(kernel="ngd")`` against ``sklearn.svm.SVC(kernel="precomputed")``
  fed by the NumPy/SciPy Gram route, 1,000 rows at a time (train Gram and test-train Gram
  times included; both libraries imported before the clock);
- LIN on L2 TF-IDF: ``kgeo.SVM(kernel="linear")`` against ``SVC(kernel="linear")`` on
  the sparse matrix (libsvm computes its kernel rows itself, like kgeo).

The ``-float32`` configurations fit the same with ``cache_dtype="float32"`` (kernel
rows stored in float32; their floor stores them in float32 too).

Each configuration runs in its own process, so the peak resident memory reported
(``VmHWM``, see ``_workers.peak_resident_mb``) is its own; ``baseline`` is a process
that only loads the data.

The floor of a kgeo fit is reported four ways: the kernel blocks the fit's solvers
asked for, computed once more each, class by class, by the same row routine in as
many threads as the fit (``KernelRowCache.recompute_used``, after the fit; an entry in
two used blocks, K(x_i, x_j) and K(x_j, x_i), is computed twice); each distinct entry
the solvers used computed once, by kgeo's rows over subsets of the classes
(``distinct_floor``); the time of the whole training Gram by kgeo's rows (config
``floor``, 256 rows at a time) scaled by the share of its entries the solvers used; and
that time scaled by the share of distinct entries used (the fit computes a class pair's
cross-class entries once for both of its classes, ``KernelRowCache.sweep_cross``). Each
run also records the machine's one-minute load average when it starts.

The kgeo configurations run ``--repeat`` times (5 by default), each in a fresh
process: this machine's timings vary by 10-20 % from run to run, and a ratio of
two single runs varies twice as much. Their times and floors are the medians, their
peak memory the largest; each run's line also gives the fit's user and system CPU
time and page faults, which tell a slow CPU from slow page faults, and the fit
against its own floor (timed seconds apart in the same process, so on the same
state of the machine); the median of those ratios is reported beside the ratio of
the medians. Before the floors, each run fits the same model once more (the floors
are computed from that second fit's row cache): that second fit finds its memory
already mapped, and the difference shows what the first fit spends on page faults
and a cold start (the targets are judged on the first fit).

Peak memory is reported two ways: the process's peak (``VmHWM``), and that peak
less the resident size just before the clock (``pre_mb``: data, embeddings and the
imports, scikit-learn's 100 MB included on its side), which is what the fit and
predict added. The script ends with the targets' verdicts and exits with status 1
when an accuracy is outside the +-0.1 points within which the ratios count.
Last, each run times its SMO alone (``smo_alone``): every class pair solved again, in
one thread, from a cache that kept every block of a first solve and with its rows left
in the processor's caches by the solve just before, so no kernel value is computed.
Against the floor in one thread, it is a lower bound on the part of a fit that no
kernel work can remove: a fit within 2x its floor needs its kernel values and set-up
within 2 floors minus that.

    python benchmarks/bench_20ng.py --data ../shared/data [--skip sklearn-linear] [--repeat 5]
"""

import argparse
import json
import os
import resource
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

from _workers import (accuracy_gap, accuracy_within, peak_resident_mb, resident_before_mb,
                      run_worker)

CONFIGS = ["baseline", "kgeo-ngd", "sklearn-ngd", "kgeo-linear", "sklearn-linear", "floor",
           "kgeo-ngd-float32", "kgeo-linear-float32"]


def prepare(data_dir, out_dir):
    """Tokenise once (the paper's preprocessing) and save counts for the workers."""
    from kgeo.datasets import load_20newsgroups
    from kgeo.text import RainbowVectorizer

    train = load_20newsgroups(data_dir, subset="train")
    test = load_20newsgroups(data_dir, subset="test")
    vectorizer = RainbowVectorizer(prune_by_doc_count=2)
    X_train = vectorizer.fit_transform(train.data)
    X_test = vectorizer.transform(test.data)
    sp.save_npz(os.path.join(out_dir, "train.npz"), X_train)
    sp.save_npz(os.path.join(out_dir, "test.npz"), X_test)
    np.save(os.path.join(out_dir, "y_train.npy"), train.target)
    np.save(os.path.join(out_dir, "y_test.npy"), test.target)
    return X_train.shape, X_test.shape


def sqrt_l1(X):
    """sqrt of the L1-normalised rows: what a user writes for the NGD Gram."""
    X = sp.csr_matrix(X, dtype=np.float64)
    sums = np.asarray(X.sum(axis=1)).ravel()
    X = sp.diags(1.0 / sums) @ X
    X.data = np.sqrt(X.data)
    return sp.csr_matrix(X)


def ngd_gram(A, B, rows=1000):
    """The NGD Gram of sqrt-rows A and B by SciPy's sparse product, 1,000 rows
    at a time into one dense array, mapped in place: ``(A @ B.T).toarray()``
    in one go first holds the product as a sparse matrix (128 M stored
    entries, 1.5 GB for the 20NG training set) beside the dense one, and
    took 40 % longer (a review, 2026-11-29)."""
    G = np.empty((A.shape[0], B.shape[0]))
    BT = sp.csr_matrix(B.T)
    for start in range(0, A.shape[0], rows):
        G[start:start + rows] = (A[start:start + rows] @ BT).toarray()
    np.clip(G, 0.0, 1.0, out=G)
    np.arccos(G, out=G)
    G *= -2.0  # in place: -2.0 * G would be a second 1 GB array
    return G


def recording_svm():
    """kgeo.SVM that keeps the row cache of its fit, for the floor."""
    import kgeo

    class RecordingSVM(kgeo.SVM):
        def _solve_pairs(self, cache, pairs, box):
            RecordingSVM.cache = cache
            return super()._solve_pairs(cache, pairs, box)

    return RecordingSVM


def smo_alone(params, X, y):
    """The fit's SMO without any kernel work, at its fastest, and the floor,
    both in one thread: (SMO seconds, floor seconds).

    A first solve keeps every block it makes (``retire_enabled`` off, a
    budget of the whole Gram). Then each class pair is solved twice more
    in one thread from that cache, and the second solve is timed: it
    computes no kernel block (checked; only each pair's diagonal, one
    value per variable) and finds its rows where the first left them, in
    the processor's caches as far as they fit, with no second thread
    sharing them. So this is a lower bound on what the fit's SMO steps
    cost beyond its kernel values, to compare with the floor's kernel
    values computed in one thread.
    """
    import kgeo

    timed = {}
    whole_gram_mb = X.shape[0] ** 2 * 8 / 2**20 + 1

    class Resolving(kgeo.SVM):
        def _solve_pairs(self, cache, pairs, box):
            cache.retire_enabled = False
            solutions = super()._solve_pairs(cache, pairs, box)
            self.n_jobs = 1  # this throwaway model's pairs, one at a time, like the floor below
            computed = cache.stats()["values_computed"]
            seconds = 0.0
            for pair, solution in zip(pairs, solutions):
                super()._solve_pairs(cache, [pair], box)
                started = time.perf_counter()
                (again,) = super()._solve_pairs(cache, [pair], box)
                seconds += time.perf_counter() - started
                if not np.array_equal(again[0], solution[0]) or again[1:] != solution[1:]:
                    raise RuntimeError(f"pair {pair} solved again gave another solution")
            if cache.stats()["values_computed"] != computed:
                raise RuntimeError("solving the pairs again computed kernel values")
            timed["smo_s"] = seconds
            timed["floor_s"] = cache.recompute_used(1)[0]
            return solutions

    Resolving(**{**params, "cache_size": whole_gram_mb}).fit(X, y)
    return timed["smo_s"], timed["floor_s"]


def row_subset(rows, which):
    """The RowSet of the rows ``which`` (increasing) of ``rows``."""
    from kgeo._kernels import RowSet

    data, indices, indptr, _ = rows.arrays
    M = sp.csr_matrix((data, indices, indptr), shape=(rows.n_rows, rows.n_features))[which]
    return RowSet(M.data, M.indices, M.indptr.astype(np.int64), rows.n_features)


def timed_products(kernel, products, n_threads):
    """Wall-clock time of ``kernel_matrix`` over the (RowSet, PostingIndex)
    ``products``, spread over ``n_threads`` threads (each product computed by
    one thread, as the fit's class pairs are); and the page faults meanwhile."""
    from concurrent.futures import ThreadPoolExecutor

    from kgeo._kernels import kernel_matrix

    def run(product):
        kernel_matrix(kernel, product[0], product[1], 1)

    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    with ThreadPoolExecutor(n_threads) as pool:
        list(pool.map(run, products))
    seconds = time.perf_counter() - started
    return seconds, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before.ru_minflt


def distinct_floor(params, A, y, used, n_threads):
    """Every distinct training-Gram entry the solvers used, computed once by
    kgeo's rows: (seconds, values computed, page faults while timed).

    ``recompute_used`` computes each block a solver asked for, so an entry
    K(x_g, x_h) = K(x_h, x_g) in two used blocks is computed twice (74.4 M
    values on 20NG NGD for 52.3 M distinct entries), where the fit sweeps a
    class pair's cross blocks once for both classes. Here, per class pair
    (s, t): the used rows of s against all of t, then the used rows of t
    against the rows of s not used; per class: its used rows against its
    unused ones, and against each other in groups of 32 from the group's
    first row on (the groups' own squares, half computed twice, are the
    only excess). The posting indexes over these row subsets are built
    before the clock starts.
    """
    from kgeo._kernels import PostingIndex, get_kernel
    from kgeo._pairwise import prepare_rows

    kernel = get_kernel(params["kernel"], A.shape[1], 0.0)
    order = np.argsort(y, kind="stable")
    rows = prepare_rows(kernel, sp.csr_matrix(A[order]), kernel_name=params["kernel"])
    counts = np.bincount(y)
    start = np.concatenate([[0], np.cumsum(counts)])

    def index(which):
        return PostingIndex(row_subset(rows, which), np.array([0, len(which)]))

    products = []
    n_values = 0

    def add(first, second):
        nonlocal n_values
        if len(first) and len(second):
            products.append((row_subset(rows, first), index(second)))
            n_values += len(first) * len(second)

    for s in range(len(counts)):
        members = np.arange(start[s], start[s + 1])
        mine = members[used[members, s]]
        add(mine, members[~used[members, s]])
        for at in range(0, len(mine), 32):
            add(mine[at:at + 32], mine[at:])
        for t in range(s + 1, len(counts)):
            others = np.arange(start[t], start[t + 1])
            add(members[used[members, t]], others)
            add(others[used[others, s]], members[~used[members, t]])
    # Best of two, as the whole-Gram floor (config ``floor``): the first pass
    # also pays for faulting in the fresh output of every product.
    seconds, faults = min(timed_products(kernel, products, n_threads) for _ in range(2))
    return seconds, n_values, faults


def symmetric_entries_used(used, counts):
    """Entries of the training Gram in some block the solvers asked for,
    K(x_i, x_j) and K(x_j, x_i) counted once.

    ``used[g, c]``: the block of row g (class-sorted) against class c was
    asked for; ``counts``: the class sizes. In the cross block of classes s
    and t, an entry is used unless neither of its rows was; in a class's own
    block, likewise over unordered pairs (diagonal included).
    """
    start = np.concatenate([[0], np.cumsum(counts)])
    total = 0
    for s in range(len(counts)):
        n_s = int(counts[s])
        unused = n_s - int(used[start[s]:start[s + 1], s].sum())
        total += n_s * (n_s + 1) // 2 - unused * (unused + 1) // 2
        for t in range(s + 1, len(counts)):
            n_t = int(counts[t])
            unused_s = n_s - int(used[start[s]:start[s + 1], t].sum())
            unused_t = n_t - int(used[start[t]:start[t + 1], s].sum())
            total += n_s * n_t - unused_s * unused_t
    return total


def fit_usage(before):
    """CPU time and page faults of the process since ``before`` (a getrusage)."""
    after = resource.getrusage(resource.RUSAGE_SELF)
    return {"fit_user_s": after.ru_utime - before.ru_utime,
            "fit_sys_s": after.ru_stime - before.ru_stime,
            "fit_page_faults": after.ru_minflt - before.ru_minflt}


def worker(config, work_dir):
    import kgeo
    from kgeo._pairwise import resolve_n_jobs

    X_train = sp.load_npz(os.path.join(work_dir, "train.npz"))
    X_test = sp.load_npz(os.path.join(work_dir, "test.npz"))
    y_train = np.load(os.path.join(work_dir, "y_train.npy"))
    y_test = np.load(os.path.join(work_dir, "y_test.npy"))
    # Other work on the machine slows kgeo's two threads more than sklearn's
    # one: each run records the load it started under.
    result = {"config": config, "load_1min": os.getloadavg()[0]}
    cache_dtype = "float32" if config.endswith("-float32") else "float64"
    config = config.removesuffix("-float32")
    if config == "baseline":
        pass
    elif config == "floor":
        # kgeo's own row routine over the whole training Gram, once per kernel;
        # the floor of a fit is this time scaled to the entries it used.
        from kgeo._kernels import PostingIndex, get_kernel
        from kgeo._pairwise import prepare_rows

        for kernel, weighting, norm in (("ngd", "tf", "l1"), ("linear", "tfidf", "l2")):
            A = kgeo.MultinomialEmbedding(weighting=weighting, norm=norm).fit_transform(X_train)
            k = get_kernel(kernel, A.shape[1], 0.0)
            rows = prepare_rows(k, A, kernel_name=kernel)
            whole = PostingIndex(rows, np.array([0, rows.n_rows]))
            # Rows in chunks of 256 (23 MB of values each, a buffer malloc
            # hands back for the next chunk): one 1 GB matrix paid for
            # faulting in fresh pages on every call, which no fit does.
            chunks = [(row_subset(rows, np.arange(at, min(at + 256, rows.n_rows))), whole)
                      for at in range(0, rows.n_rows, 256)]
            times = [timed_products(k, chunks, resolve_n_jobs(None)) for _ in range(2)]
            result[f"gram_{kernel}_s"], result[f"gram_{kernel}_faults"] = min(times)
        result["n_train"] = X_train.shape[0]
    elif config.endswith("ngd"):
        emb = kgeo.MultinomialEmbedding(weighting="tf", norm="l1").fit(X_train)
        A, B = emb.transform(X_train), emb.transform(X_test)
        if config == "sklearn-ngd":
            from sklearn.svm import SVC  # imported before the clock, as kgeo is
        result["pre_mb"] = resident_before_mb()  # freed heap trimmed first
        started = time.perf_counter()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        if config == "kgeo-ngd":
            model = kgeo.SVM(kernel="ngd", C=1.0, cache_dtype=cache_dtype).fit(A, y_train)
            fitted = time.perf_counter()
            result.update(fit_usage(usage))
            predicted = model.predict(B)
            result["cache_stats"] = model.cache_stats_
        else:
            SA, SB = sqrt_l1(A), sqrt_l1(B)
            K = ngd_gram(SA, SA)
            result["gram_s"] = time.perf_counter() - started
            model = SVC(kernel="precomputed", C=1.0).fit(K, y_train)
            del K
            fitted = time.perf_counter()
            result.update(fit_usage(usage))
            predicted = model.predict(ngd_gram(SB, SA))
        done = time.perf_counter()
        result.update(fit_s=fitted - started, predict_s=done - fitted,
                      n_sv=int(model.support_.shape[0]))
        result["accuracy"] = float(np.mean(predicted == y_test))
    else:
        emb = kgeo.MultinomialEmbedding(weighting="tfidf", norm="l2").fit(X_train)
        A, B = emb.transform(X_train), emb.transform(X_test)
        if config == "sklearn-linear":
            from sklearn.svm import SVC  # imported before the clock, as kgeo is
        result["pre_mb"] = resident_before_mb()  # freed heap trimmed first
        started = time.perf_counter()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        if config == "kgeo-linear":
            model = kgeo.SVM(kernel="linear", C=1.0, cache_dtype=cache_dtype).fit(A, y_train)
            result["cache_stats"] = model.cache_stats_
        else:
            model = SVC(kernel="linear", C=1.0).fit(A, y_train)
        result.update(fit_usage(usage))
        fitted = time.perf_counter()
        predicted = model.predict(B)
        done = time.perf_counter()
        result.update(fit_s=fitted - started, predict_s=done - fitted,
                      n_sv=int(model.support_.shape[0]),
                      accuracy=float(np.mean(predicted == y_test)))
    result["peak_mb"] = peak_resident_mb()
    if config.startswith("kgeo-"):
        # The same fit once more in this process: its memory comes back from
        # malloc already mapped, so it shows what the first fit's page faults
        # and cold start cost. The first fit is the one the targets judge.
        # This one keeps its row cache for the floor, after the peak is read:
        # the timed fit's, kept alive through predict, added 40 MB (18 %) to
        # kgeo's peak that a user's fit has freed by then (a review).
        started = time.perf_counter()
        again = recording_svm()(**model.get_params()).fit(A, y_train)
        result["refit_s"] = time.perf_counter() - started
        if (not np.array_equal(again.dual_coef_, model.dual_coef_)
                or again.cache_stats_["values_used"] != model.cache_stats_["values_used"]):
            raise RuntimeError("a second fit of the same data gave another model")
        # The blocks a solver asks for follow from its pair alone, so the
        # second fit used those of the first.
        cache = type(again).cache
        seconds, n_values = cache.recompute_used(resolve_n_jobs(model.n_jobs))
        used = cache.used_blocks()
        # The fit leaves documents without a word out of its cache: the rows of
        # ``used`` are the others' (class-sorted), and so must be the counts.
        kept = np.diff(A.indptr) > 0
        if used.shape[0] != int(kept.sum()) or not np.array_equal(
                np.unique(y_train), np.arange(used.shape[1])):
            raise RuntimeError("the row cache's rows or classes are not the training set's")
        A_kept, y_kept = A[kept], y_train[kept]
        result.update(floor_s=seconds, floor_values=n_values,
                      symmetric_used=symmetric_entries_used(used, np.bincount(y_kept)))
        if cache_dtype == "float64":  # the distinct floor stores float64 values
            (result["distinct_floor_s"], result["distinct_floor_values"],
             result["distinct_floor_faults"]) = distinct_floor(
                model.get_params(), A_kept, y_kept, used, resolve_n_jobs(model.n_jobs))
        result["smo_alone_s"], result["floor_1_thread_s"] = smo_alone(model.get_params(), A,
                                                                      y_train)
    print(json.dumps(result))


def merge_runs(runs):
    """One result from repeated runs: median times, largest peak memory."""
    merged = dict(runs[-1])
    for key in ("fit_s", "predict_s", "floor_s", "distinct_floor_s", "refit_s", "smo_alone_s",
                "floor_1_thread_s"):
        if key in merged:
            merged[key] = float(np.median([run[key] for run in runs]))
    merged["peak_mb"] = max(run["peak_mb"] for run in runs)
    if "pre_mb" in merged:
        merged["added_mb"] = max(run["peak_mb"] - run["pre_mb"] for run in runs)
    if "floor_s" in merged:
        ratios = [run["fit_s"] / run["floor_s"] for run in runs]
        merged["run_ratio"] = float(np.median(ratios))
        merged["run_ratio_range"] = (min(ratios), max(ratios))
        merged["refit_ratio"] = float(np.median([run["refit_s"] / run["floor_s"]
                                                 for run in runs]))
        merged["smo_ratio"] = float(np.median([run["smo_alone_s"] / run["floor_1_thread_s"]
                                               for run in runs]))
    if "distinct_floor_s" in merged:
        ratios = [run["fit_s"] / run["distinct_floor_s"] for run in runs]
        merged["distinct_floor_s"] = float(np.median([run["distinct_floor_s"]
                                                      for run in runs]))
        merged["distinct_ratio"] = float(np.median(ratios))
        merged["distinct_ratio_range"] = (min(ratios), max(ratios))
    merged["load_1min"] = max(run["load_1min"] for run in runs)
    for key in ("accuracy", "n_sv", "floor_values", "symmetric_used", "distinct_floor_values"):
        if len({run.get(key) for run in runs}) != 1:
            raise RuntimeError(f"{key} differs between runs of {merged['config']}: the fit "
                               f"is deterministic, so this is a bug")
    return merged


def parse_args(doc, configs, repeat):
    """The command line of a benchmark whose configurations run in worker processes."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                       "shared", "data"))
    parser.add_argument("--skip", nargs="*", default=[], choices=configs)
    parser.add_argument("--repeat", type=int, default=repeat,
                        help="fresh-process runs of each kgeo configuration (medians reported)")
    parser.add_argument("--worker", nargs=2, metavar=("CONFIG", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    return args


def worker_runs(script, config, work_dir, repeat):
    """The results of ``script --worker config work_dir``, each in a fresh
    process, ``repeat`` times for kgeo's configurations and once for the others."""
    return [run_worker([sys.executable, script, "--worker", config, work_dir])
            for _ in range(repeat if config.startswith("kgeo-") else 1)]


def main():
    args = parse_args(__doc__, CONFIGS, 5)
    if args.worker:
        worker(*args.worker)
        return 0

    with tempfile.TemporaryDirectory() as work_dir:
        shapes = prepare(args.data, work_dir)
        print(f"20 Newsgroups bydate: train {shapes[0]}, test {shapes[1]}")
        results = {}
        for config in CONFIGS:
            if config in args.skip:
                continue
            runs = worker_runs(__file__, config, work_dir, args.repeat)
            results[config] = r = merge_runs(runs)
            if config == "floor":
                print(f"{config:<19} kgeo's rows for the whole training Gram (in chunks of 256 "
                      f"rows): NGD {r['gram_ngd_s']:.2f} s ({r['gram_ngd_faults']} page "
                      f"faults), linear {r['gram_linear_s']:.2f} s ({r['gram_linear_faults']} "
                      f"page faults); load {r['load_1min']:.1f}", flush=True)
            elif config != "baseline":
                extra = f" (Gram {r['gram_s']:.2f} s)" if "gram_s" in r else ""
                print(f"{config:<19} accuracy {100 * r['accuracy']:6.2f}%  fit {r['fit_s']:7.2f} s"
                      f"{extra}  predict {r['predict_s']:6.2f} s  total "
                      f"{r['fit_s'] + r['predict_s']:7.2f} s  peak {r['peak_mb']:7.0f} MB "
                      f"(added {r['added_mb']:.0f} MB)  SVs {r['n_sv']}", flush=True)
                if "floor_s" not in r:
                    print(f"{'':<19} fit: user {r['fit_user_s']:.2f} s, system "
                          f"{r['fit_sys_s']:.2f} s; load {r['load_1min']:.1f}")
                for run in runs if "floor_s" in r else []:
                    # Page faults are slow and erratic on some virtual machines:
                    # the system time shows when a fit paid for them.
                    distinct = (f", distinct floor {run['distinct_floor_s']:.2f} s "
                                f"({run['fit_s'] / run['distinct_floor_s']:.2f}x, "
                                f"{run['distinct_floor_faults']} page faults)"
                                if "distinct_floor_s" in run else "")
                    print(f"{'':<19} run (load {run['load_1min']:.1f}): fit {run['fit_s']:.2f} s "
                          f"(user {run['fit_user_s']:.2f} s, system {run['fit_sys_s']:.2f} s, "
                          f"{run['fit_page_faults']} page faults), floor {run['floor_s']:.2f} s "
                          f"({run['fit_s'] / run['floor_s']:.2f}x){distinct}; a second fit "
                          f"{run['refit_s']:.2f} s ({run['refit_s'] / run['floor_s']:.2f}x); "
                          f"one thread: SMO alone {run['smo_alone_s']:.2f} s, floor "
                          f"{run['floor_1_thread_s']:.2f} s "
                          f"({run['smo_alone_s'] / run['floor_1_thread_s']:.2f}x)")
            else:
                print(f"{config:<19} peak {r['peak_mb']:.0f} MB (loading the data only)", flush=True)

    floor = results.get("floor")
    verdicts = []
    for kind in ("ngd", "linear", "ngd-float32", "linear-float32"):
        kernel = kind.split("-")[0]
        ours, theirs = results.get(f"kgeo-{kind}"), results.get(f"sklearn-{kernel}")
        if ours:
            low, high = ours["run_ratio_range"]
            print(f"{kind}: computing every block the solvers asked for, once each "
                  f"({ours['floor_values'] / 1e6:.1f} M kernel values; an entry in two used "
                  f"blocks, as K(i, j) and K(j, i), counted twice), takes "
                  f"{ours['floor_s']:.2f} s; the fit "
                  f"{ours['fit_s']:.2f} s ({ours['fit_s'] / ours['floor_s']:.2f}x this floor; "
                  f"each run against its own floor: median {ours['run_ratio']:.2f}x, "
                  f"{low:.2f}-{high:.2f}x). A second fit in the same process: "
                  f"{ours['refit_s']:.2f} s (median {ours['refit_ratio']:.2f}x its run's floor)")
            if "distinct_floor_s" in ours:
                low, high = ours["distinct_ratio_range"]
                print(f"{kind}: computing each distinct entry the solvers used once "
                      f"({ours['symmetric_used'] / 1e6:.1f} M entries; "
                      f"{ours['distinct_floor_values'] / 1e6:.1f} M values computed, with "
                      f"kgeo's rows over subsets of the classes), takes "
                      f"{ours['distinct_floor_s']:.2f} s; the fit {ours['fit_s']:.2f} s "
                      f"({ours['fit_s'] / ours['distinct_floor_s']:.2f}x this floor; each run "
                      f"against its own: median {ours['distinct_ratio']:.2f}x, "
                      f"{low:.2f}-{high:.2f}x). Its rows over subsets cost "
                      f"{1e9 * ours['distinct_floor_s'] / ours['distinct_floor_values']:.1f} "
                      f"ns per value against the blocks' "
                      f"{1e9 * ours['floor_s'] / ours['floor_values']:.1f}: a time for "
                      f"these entries, not a lower bound on it")
            print(f"{kind}: its SMO alone (one thread, each pair solved again from rows "
                  f"already cached, no kernel value computed): {ours['smo_alone_s']:.2f} s, "
                  f"median {ours['smo_ratio']:.2f}x its run's floor in one thread "
                  f"({ours['floor_1_thread_s']:.2f} s); a fit within 2x its floor needs its "
                  f"kernel work and set-up within the other {2 - ours['smo_ratio']:.2f} floors")
        if ours and floor:
            used = ours["cache_stats"]["values_used"] / floor["n_train"] ** 2
            floor_s = floor[f"gram_{kernel}_s"] * used
            print(f"{kind}: the fit used {100 * used:.0f}% of the Gram's entries; that share of "
                  f"the whole Gram's time is {floor_s:.2f} s, the fit {ours['fit_s']:.2f} s "
                  f"({ours['fit_s'] / floor_s:.2f}x this floor)")
            distinct = ours["symmetric_used"] / floor["n_train"] ** 2
            floor_s = floor[f"gram_{kernel}_s"] * distinct
            print(f"{kind}: counting K(i, j) and K(j, i) once, the fit used "
                  f"{ours['symmetric_used'] / 1e6:.1f} M entries (it computed "
                  f"{ours['cache_stats']['values_computed'] / 1e6:.1f} M); at the whole Gram's "
                  f"time per entry, {floor_s:.2f} s, the fit {ours['fit_s']:.2f} s "
                  f"({ours['fit_s'] / floor_s:.2f}x this floor)")
        if ours and theirs:
            t_ours = ours["fit_s"] + ours["predict_s"]
            t_theirs = theirs["fit_s"] + theirs["predict_s"]
            same = accuracy_within(ours["accuracy"], theirs["accuracy"])
            # 0.1 points is 7.5 of 7,532 test documents.
            print(f"{kind}: kgeo {t_theirs / t_ours:.1f}x faster, peak memory "
                  f"{ours['peak_mb'] / theirs['peak_mb']:.2f} of sklearn's (memory added by "
                  f"fit and predict: {ours['added_mb'] / theirs['added_mb']:.2f}; "
                  f"scikit-learn's import is in its peak, not in its added memory), accuracy "
                  f"{accuracy_gap(ours['accuracy'], theirs['accuracy'])}")
            speed_target = 4 if kernel == "ngd" else 20
            verdicts.append((f"{kind}: >= {speed_target}x sklearn's fit + predict",
                             same and t_theirs / t_ours >= speed_target))
            if kernel == "ngd":
                # Both ways: the whole process's peak (the words) also
                # holds scikit-learn's import, the added memory neither side's
                # data.
                verdicts.append((f"{kind}: <= 1/4 of sklearn's peak memory (the process's, "
                                 f"and that added by fit and predict)",
                                 same and ours["peak_mb"] <= theirs["peak_mb"] / 4
                                 and ours["added_mb"] <= theirs["added_mb"] / 4))
            if not same:
                verdicts.append((f"{kind}: accuracy within +-0.1 points", False))
        if ours and not kind.endswith("float32"):
            # Issue 4's floor computes each used entry once: of the floors measured,
            # the distinct-entries one is that definition (where computed).
            ratio = ours["fit_s"] / ours.get("distinct_floor_s", ours["floor_s"])
            verdicts.append((f"{kind}: fit within 2x of its floor ({ratio:.2f}x; at the whole "
                             f"Gram's rate per entry: see above)", ratio <= 2))
    print("targets (issue 4):")
    for what, held in verdicts:
        print(f"  {'held' if held else 'NOT held'}: {what}")
    return 1 if any(what.endswith("accuracy within +-0.1 points") for what, _ in verdicts) else 0


if __name__ == "__main__":
    sys.exit(main())
