"""Tests for kgeo._synthetic.make_topic_corpus, the demo's default data.

Each test checks a property the docstring promises (balanced classes, Poisson
lengths of at least one word, a topic of ``n_features // (2 * n_classes)``
words per class, a Zipfian background, float64 CSR counts) on a corpus small
enough to draw in well under a second, with a fixed seed and tolerances of
four or more standard errors; and the memory check against what the
generator really allocates. (Written from mutation testing of _synthetic.py:
each test fails on a small change to the code that the suite let through.)
"""

import os
import re
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from kgeo import _synthetic
from kgeo._synthetic import make_topic_corpus


def _words_of_class(X, y, c):
    """The distinct words of the documents of class ``c``."""
    return set(np.flatnonzero(np.asarray(X[y == c].sum(axis=0)).ravel()))


# ---------------------------------------------------------------------------
# What the corpus is made of
# ---------------------------------------------------------------------------

def test_output_is_float64_csr_counts_of_the_requested_shape():
    """A vocabulary much larger than the corpus leaves most columns, the last
    ones among them, empty: the shape must still be (n_documents, n_features),
    as a CSR matrix of float64 counts with no duplicate entries."""
    X, y = make_topic_corpus(10, 5000, 2, words_per_document=5, random_state=0)
    assert X.shape == (10, 5000)
    assert sp.issparse(X) and X.format == "csr" and X.dtype == np.float64
    assert X.has_canonical_format  # sorted indices, duplicates summed
    assert np.all(X.data >= 1) and np.all(X.data == np.round(X.data))
    assert y.shape == (10,) and np.issubdtype(y.dtype, np.integer)


@pytest.mark.parametrize("n_documents, n_classes", [(300, 3), (301, 4)])
def test_classes_are_balanced(n_documents, n_classes):
    _, y = make_topic_corpus(n_documents, 50, n_classes, words_per_document=5, random_state=1)
    counts = np.bincount(y, minlength=n_classes)
    assert counts.shape == (n_classes,)
    assert counts.max() - counts.min() <= 1 and counts.sum() == n_documents


def test_every_document_has_a_word_and_lengths_are_poisson():
    """Lengths are Poisson(words_per_document), raised to 1 where 0. With a
    mean of 1, E[max(1, N)] = 1 + P(N = 0) = 1 + 1/e (sd of the mean over 4000
    documents: 0.011); with a mean of 50 the floor does not matter (sd of the
    mean over 4000 documents: 0.11)."""
    X, _ = make_topic_corpus(4000, 50, 2, words_per_document=1, random_state=2)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    assert lengths.min() >= 1
    assert lengths.mean() == pytest.approx(1 + np.exp(-1), abs=0.05)
    X, _ = make_topic_corpus(4000, 50, 2, words_per_document=50, random_state=2)
    assert np.asarray(X.sum(axis=1)).mean() == pytest.approx(50, abs=0.5)


@pytest.mark.parametrize("n_features, n_classes, topic_size", [(100, 2, 25), (3, 2, 1)])
def test_a_pure_topic_corpus_uses_exactly_each_class_topic(n_features, n_classes, topic_size):
    """With topic_weight=1 every word of a class's documents comes from its
    topic, uniform over topic_size distinct words (n_features // (2 *
    n_classes) by default, at least 1): 10,000 draws per class leave none of
    25 words out (chance 25 * (24/25)**10000)."""
    X, y = make_topic_corpus(200, n_features, n_classes, words_per_document=100,
                             topic_weight=1.0, random_state=3)
    for c in range(n_classes):
        assert len(_words_of_class(X, y, c)) == topic_size
    # and topic_size given explicitly, up to the whole vocabulary
    X, y = make_topic_corpus(200, n_features, n_classes, words_per_document=100,
                             topic_weight=1.0, topic_size=n_features, random_state=3)
    for c in range(n_classes):
        assert len(_words_of_class(X, y, c)) == n_features


def test_the_background_is_zipfian_over_randomly_placed_words():
    """With topic_weight=0 every word comes from the background: the r-th most
    frequent word has probability (1/r) / H_n. 200,000 tokens give each share a
    standard error below 0.0011; 0.006 is more than five of them. The ranks fall
    on random words (not the lowest column indices), so the most frequent word
    differs between seeds."""
    n_features = 20
    expected = 1.0 / np.arange(1, n_features + 1)
    expected /= expected.sum()
    top_words = set()
    for seed in range(4):
        X, _ = make_topic_corpus(2000, n_features, 2, words_per_document=100,
                                 topic_weight=0.0, random_state=seed)
        counts = np.asarray(X.sum(axis=0)).ravel()
        shares = np.sort(counts)[::-1] / counts.sum()
        np.testing.assert_allclose(shares, expected, atol=0.006)
        top_words.add(int(np.argmax(counts)))
    assert len(top_words) > 1


def test_random_state_decides_the_corpus():
    """The same seed gives the same corpus; another seed another corpus (the
    words and the order of the classes); a Generator is used as given."""
    X1, y1 = make_topic_corpus(100, 200, 4, words_per_document=20, random_state=7)
    X2, y2 = make_topic_corpus(100, 200, 4, words_per_document=20, random_state=7)
    X3, y3 = make_topic_corpus(100, 200, 4, words_per_document=20, random_state=8)
    assert (X1 != X2).nnz == 0 and np.array_equal(y1, y2)
    assert (X1 != X3).nnz > 0 and not np.array_equal(y1, y3)
    X4, y4 = make_topic_corpus(100, 200, 4, words_per_document=20,
                               random_state=np.random.default_rng(7))
    assert (X4 != X1).nnz == 0 and np.array_equal(y4, y1)


# ---------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    (dict(n_classes=1), r"n_classes must be an integer >= 2, got 1"),
    (dict(words_per_document=0), r"words_per_document must be an integer >= 1, got 0"),
    (dict(topic_weight=True), r"topic_weight must be a number in \[0, 1\], got True"),
    (dict(topic_weight="0.5"), r"topic_weight must be a number in \[0, 1\], got '0.5'"),
    (dict(topic_weight=None), r"topic_weight must be a number in \[0, 1\], got None"),
    (dict(topic_size=True), r"topic_size must be an integer in \[1, n_features\], got True"),
    # NumPy's own words named no parameter; True and a RandomState passed silently.
    *[(dict(random_state=bad), r"random_state must be an integer >= 0, a "
                               r"numpy.random.Generator or None, got ")
      for bad in (-1, 1.5, "0", True, np.random.RandomState(0))],
])
def test_bad_arguments_are_refused_with_a_value_error(kwargs, match):
    sizes = dict(n_documents=20, n_features=50, n_classes=2) | kwargs
    with pytest.raises(ValueError, match=match):
        make_topic_corpus(**sizes)


def test_a_refusal_names_each_size_where_it_belongs():
    with pytest.raises(ValueError, match=r"^n_documents=10, n_features=10000000000000, "
                                         r"n_classes=2 and words_per_document=100 need about"):
        make_topic_corpus(10, 10**13, 2)


# ---------------------------------------------------------------------------
# The memory check
# ---------------------------------------------------------------------------

def test_physical_memory_is_the_machines_ram():
    """os.sysconf's pages times page size: /proc/meminfo's MemTotal on Linux
    (both read the kernel's totalram_pages)."""
    try:
        with open("/proc/meminfo") as fh:
            total_kib = int(re.search(r"^MemTotal:\s+(\d+) kB", fh.read(), re.M).group(1))
    except (OSError, AttributeError):
        pytest.skip("no /proc/meminfo")
    assert _synthetic._physical_memory() == total_kib * 1024


@pytest.mark.parametrize("error", [ValueError("unrecognized configuration name"),
                                   AttributeError("module 'os' has no attribute 'sysconf'"),
                                   OSError("not supported")])
def test_physical_memory_unknown_where_the_system_does_not_say(monkeypatch, error):
    def sysconf(name):
        raise error

    monkeypatch.setattr(os, "sysconf", sysconf)
    assert _synthetic._physical_memory() is None


def test_without_a_known_ram_the_limit_is_one_tebibyte(monkeypatch):
    monkeypatch.setattr(_synthetic, "_physical_memory", lambda: None)
    with pytest.raises(ValueError, match=r"more than this machine's 1\.02e\+03 GiB of memory"):
        make_topic_corpus(10, 10**12, 2)


@pytest.mark.parametrize("sizes", [
    # one dimension at a time dominates the memory
    dict(n_documents=2, n_features=2_000_000, n_classes=2, words_per_document=1,
         topic_size=1),
    dict(n_documents=2, n_features=1_000_000, n_classes=2, words_per_document=1,
         topic_size=1_000_000),
    dict(n_documents=10_000, n_features=2, n_classes=10_000, words_per_document=1,
         topic_size=1),
    dict(n_documents=20_000, n_features=2, n_classes=2, words_per_document=100,
         topic_size=1),
])
def test_memory_estimate_bounds_what_the_generator_allocates(monkeypatch, sizes):
    """The check must not let through a corpus that needs more memory than it
    counts, nor refuse one by much more than it needs: the estimate (read from
    the refusal message of a machine made to have 1 byte) lies between the
    traced peak of a real run and three times it, whichever of features, topic
    words, classes or tokens dominates."""
    monkeypatch.setattr(_synthetic, "_physical_memory", lambda: 1)
    with pytest.raises(ValueError, match=r"need about ([\d.e+-]+) GiB") as excinfo:
        make_topic_corpus(**sizes)
    estimate = float(re.search(r"need about ([\d.e+-]+) GiB", str(excinfo.value)).group(1))
    monkeypatch.undo()
    tracemalloc.start()
    try:
        make_topic_corpus(**sizes)
        peak = tracemalloc.get_traced_memory()[1] / 2**30
    finally:
        tracemalloc.stop()
    # the message rounds to 3 significant digits
    assert peak <= estimate * 1.005
    assert estimate <= 3 * peak


def test_exactly_enough_memory_is_enough(monkeypatch):
    """Refused only when it needs *more* than the machine has."""
    sizes = dict(n_documents=20, n_features=50, n_classes=2, words_per_document=10,
                 topic_size=5)
    needed = (_synthetic._BYTES_PER_FEATURE * 50
              + (_synthetic._BYTES_PER_CLASS + _synthetic._BYTES_PER_TOPIC_WORD * 5) * 2
              + _synthetic._BYTES_PER_TOKEN * 20 * 10)
    monkeypatch.setattr(_synthetic, "_physical_memory", lambda: needed)
    make_topic_corpus(**sizes)
    monkeypatch.setattr(_synthetic, "_physical_memory", lambda: needed - 1)
    with pytest.raises(ValueError, match="need about"):
        make_topic_corpus(**sizes)
