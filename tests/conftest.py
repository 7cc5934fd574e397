"""Shared fixtures for the kgeo tests.

Fixtures here are used by several test modules; names are specific so that
modules with fixtures of their own do not collide with them.

- ``rng``: a seeded NumPy generator, fresh for every test.
- ``random_count_csr``: a function making random term-count CSR matrices.
- ``data_dir``: the folder of real corpora (``$KGEO_DATA`` or
  ``<repository root>/../shared/data``); tests using it skip when it is absent.
- ``newsgroups_counts``: ~400 real 20 Newsgroups training documents as a CSR
  count matrix, parsed straight from the tar so that it depends on no other
  kgeo module.
- ``reuters_dir``: ``data_dir`` when it holds Reuters-21578, else a skip.
- ``load_example``: a function loading a script of ``examples/`` as a module.

A hypothesis profile ``kgeo`` is registered and loaded: derandomised (the
same examples on every run), no deadline (the first call of a compiled kernel
may be slow), few examples (the whole suite should stay fast).

A test still running after ``$KGEO_TEST_TIMEOUT`` seconds (default 900; 0
turns the watchdog off) ends the run with every thread's stack printed
(``HangWatchdog``).
"""

import collections
import faulthandler
import os
import re
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # a test extra; the modules using hypothesis import it themselves
    pass
else:
    settings.register_profile(
        "kgeo",
        derandomize=True,
        deadline=None,
        max_examples=30,
        database=None,  # derandomised runs need no example database on disk
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.load_profile("kgeo")

REPO_ROOT = Path(__file__).resolve().parent.parent

TEST_TIMEOUT_DEFAULT = 900.0  # seconds; the slowest test takes about 1 min on a busy machine
TEST_TIMEOUT_MOST = 1e6


class HangWatchdog:
    """Ends the run when a test outlives ``seconds``, printing every thread's stack.

    A solver loop that never ends, or a thread waiting for a partner that is
    never scheduled, would otherwise hold CI until its budget runs out with
    nothing to show. ``faulthandler``'s watchdog is a C thread: it fires while
    compiled code runs without the GIL or holds it. It writes to a copy of
    the stderr of the run's start, since a test's own stderr is captured to
    a file that would be lost when the process ends. A test that forks must
    end its child with ``os._exit``, as the suite's do: in the child the
    timer, whose thread did not survive the fork, can no longer be
    cancelled (``cancel_dump_traceback_later`` blocks there: a review).
    """

    __test__ = False  # a plugin, not a test class

    def __init__(self, seconds):
        self.seconds = seconds
        self.stderr = None

    def pytest_configure(self, config):
        self.stderr = os.fdopen(os.dup(sys.__stderr__.fileno()), "w")

    def pytest_unconfigure(self, config):
        faulthandler.cancel_dump_traceback_later()
        self.stderr.close()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        faulthandler.dump_traceback_later(self.seconds, exit=True, file=self.stderr)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()


def pytest_configure(config):
    text = os.environ.get("KGEO_TEST_TIMEOUT", "").strip()
    try:
        seconds = float(text) if text else TEST_TIMEOUT_DEFAULT
    except ValueError:
        seconds = np.nan
    # faulthandler's timer overflows the system's time type from about 1e10 s.
    if not 0 <= seconds <= TEST_TIMEOUT_MOST:
        raise pytest.UsageError(f"KGEO_TEST_TIMEOUT must be a number of seconds from 0 (no "
                                f"watchdog) to {TEST_TIMEOUT_MOST:.0e}, got {text!r}")
    if seconds > 0:
        config.pluginmanager.register(HangWatchdog(seconds), "kgeo-test-watchdog")


NEWSGROUPS_TAR = Path("20news-bydate") / "20news-bydate.tar.gz"
NEWSGROUPS_PER_CLASS = 20  # 20 classes x 20 = 400 documents
TOKEN = re.compile(r"[a-z]+")


@pytest.fixture(autouse=True)
def threads_for_small_problems():
    """n_jobs > 1 runs the parallel loops and the class pairs' workers even
    on the small problems tests use. By default kgeo keeps work below 2**18
    values in the calling thread, where starting threads costs more than the
    work, so the suite's checks that threads change no bit would otherwise
    run one thread. ``test_small_work_stays_in_the_calling_thread`` checks
    the default bound itself. Likewise a two-class fit's helper thread
    shares blocks of any length, not only those of 1,024 values or more."""
    from kgeo._kernels import _set_parallel_min_work
    from kgeo._solver import _set_row_share_min

    default = _set_parallel_min_work(0)
    default_share = _set_row_share_min(2)
    yield
    _set_parallel_min_work(default)
    _set_row_share_min(default_share)


@pytest.fixture
def rng():
    """A seeded generator, new for each test (tests do not share state)."""
    return np.random.default_rng(20050815)


def make_count_csr(rng, n_samples, n_features, *, density=0.3, max_count=5,
                   nonempty_rows=True):
    """Random term counts as a CSR float64 matrix.

    Parameters
    ----------
    rng : numpy.random.Generator
    n_samples, n_features : int
    density : float, default=0.3
        Probability that an entry is nonzero.
    max_count : int, default=5
        Nonzero counts are drawn uniformly from 1..max_count.
    nonempty_rows : bool, default=True
        Give every empty row one count, so that it can be L1-normalised.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
    """
    counts = rng.integers(1, max_count + 1, size=(n_samples, n_features))
    counts = counts * (rng.random((n_samples, n_features)) < density)
    if nonempty_rows:
        empty = np.flatnonzero(counts.sum(axis=1) == 0)
        counts[empty, rng.integers(0, n_features, size=empty.size)] = 1
    return sp.csr_matrix(counts.astype(np.float64))


@pytest.fixture
def random_count_csr(rng):
    """``make(n_samples, n_features, **kw)`` -> random counts, see make_count_csr."""
    def make(n_samples, n_features, **kw):
        return make_count_csr(rng, n_samples, n_features, **kw)
    return make


def _data_dir():
    env = os.environ.get("KGEO_DATA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data"


@pytest.fixture
def load_example():
    """``load(name)`` -> the script ``examples/<name>.py`` as a module
    (examples are scripts, not a package)."""
    import importlib.util

    def load(name):
        spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "examples" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return load


@pytest.fixture
def reuters_dir(data_dir):
    """The folder holding ``reuters21578/``; skip the test when it is missing."""
    if not (data_dir / "reuters21578").is_dir():
        pytest.skip(f"Reuters-21578 not found in {data_dir}")
    return data_dir


@pytest.fixture(scope="session")
def data_dir():
    """Folder holding the real corpora; skip the test when it is missing."""
    path = _data_dir()
    if not path.is_dir():
        pytest.skip(f"real-corpus folder {path} not found (set KGEO_DATA to its location)")
    return path


def load_newsgroups_subset(tar_path, per_class=NEWSGROUPS_PER_CLASS):
    """First ``per_class`` training documents of each 20 Newsgroups class.

    Returns
    -------
    X : scipy.sparse.csr_matrix of float64, shape (n_documents, n_words)
        Counts of lowercase alphabetic tokens; columns are the words of
        these documents in sorted order.
    labels : ndarray of str, shape (n_documents,)
    """
    taken = collections.Counter()
    texts, labels = [], []
    with tarfile.open(tar_path) as tar:
        for member in tar:
            parts = member.name.split("/")
            if not member.isfile() or len(parts) != 3 or parts[0] != "20news-bydate-train":
                continue
            group = parts[1]
            if taken[group] >= per_class:
                continue
            raw = tar.extractfile(member).read()
            texts.append(raw.decode("latin-1").lower())  # some files are not UTF-8
            labels.append(group)
            taken[group] += 1
    docs = [collections.Counter(TOKEN.findall(text)) for text in texts]
    vocabulary = {w: j for j, w in enumerate(sorted(set().union(*docs)))}
    indptr, indices, data = [0], [], []
    for doc in docs:
        indices.extend(vocabulary[w] for w in doc)
        data.extend(doc.values())
        indptr.append(len(indices))
    X = sp.csr_matrix(
        (np.array(data, dtype=np.float64), np.array(indices), np.array(indptr)),
        shape=(len(docs), len(vocabulary)))
    X.sort_indices()
    return X, np.array(labels)


@pytest.fixture(scope="session")
def newsgroups_subset(data_dir):
    """``(X, labels)``: ~400 real training documents, 20 of each class."""
    tar_path = data_dir / NEWSGROUPS_TAR
    if not tar_path.is_file():
        pytest.skip(f"20 Newsgroups archive {tar_path} not found")
    X, labels = load_newsgroups_subset(tar_path)
    # Every message has a header, so no row is empty; the manifold kernels rely on it.
    assert np.all(np.diff(X.indptr) > 0)
    return X, labels


@pytest.fixture(scope="session")
def newsgroups_counts(newsgroups_subset):
    """CSR count matrix of ~400 real 20 Newsgroups training documents."""
    return newsgroups_subset[0]
