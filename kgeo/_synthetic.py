"""Synthetic corpora drawn from topic multinomials (the demo's default data)."""

import numbers
import os

import numpy as np
import scipy.sparse as sp

__all__ = ["make_topic_corpus"]


# Bytes the generator holds at its peak, per vocabulary word (the background
# distribution, its permutation and cumulative sums), per class (its topic's
# words drawn as one small array before they are stacked: 409 bytes measured
# at a million classes), per topic word, and per token (its document, two
# uniform draws, the topic mask, the word, and the COO and CSR copies of the
# matrix).
_BYTES_PER_FEATURE = 32
_BYTES_PER_CLASS = 512
_BYTES_PER_TOPIC_WORD = 8
_BYTES_PER_TOKEN = 80


def _physical_memory():
    """Bytes of RAM, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _check_fits_in_memory(n_documents, n_features, n_classes, words_per_document,
                          topic_size):
    # Sizes past the machine used to reach NumPy as they were: an int64
    # overflow in np.arange (an empty array, then a crash in rng.choice), or
    # a Python loop over a billion classes that never ends.
    needed = (_BYTES_PER_FEATURE * int(n_features)
              + (_BYTES_PER_CLASS + _BYTES_PER_TOPIC_WORD * int(topic_size)) * int(n_classes)
              + _BYTES_PER_TOKEN * int(n_documents) * int(words_per_document))
    available = _physical_memory()
    limit = available if available is not None else 2 ** 40
    if needed > limit:
        raise ValueError(
            f"n_documents={n_documents}, n_features={n_features}, n_classes={n_classes} "
            f"and words_per_document={words_per_document} need about {needed / 2**30:.3g} GiB "
            f"to generate, more than this machine's {limit / 2**30:.3g} GiB of memory")


def make_topic_corpus(n_documents=3000, n_features=5000, n_classes=10, *,
                      words_per_document=100, topic_weight=0.15, topic_size=None,
                      random_state=0):
    """Bag-of-words documents from one topic multinomial per class.

    Every word of a document is drawn from a mixture: with probability
    ``topic_weight`` from its class's topic (uniform over ``topic_size``
    words drawn for the class; two classes' topics may share some),
    otherwise from a shared Zipfian background, as stop words and common
    vocabulary are in real text.

    Parameters
    ----------
    n_documents : int, default=3000
    n_features : int, default=5000
        Vocabulary size.
    n_classes : int, default=10
    words_per_document : int, default=100
        Mean document length (lengths are Poisson, at least 1).
    topic_weight : float, default=0.15
        Share of each document's words drawn from its class topic.
    topic_size : int, default=None
        Words per topic; ``n_features // (2 * n_classes)`` by default.
    random_state : int >= 0, numpy.random.Generator or None, default=0
        The seed, or the generator to draw from (and advance); None draws
        fresh entropy from the operating system.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_documents, n_features)
        Term counts (float64).
    y : ndarray of shape (n_documents,)
        Class of each document, balanced.
    """
    for name, value, low in (("n_documents", n_documents, 1), ("n_features", n_features, 2),
                             ("n_classes", n_classes, 2), ("words_per_document", words_per_document, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    # Plain ints: NumPy's unsigned or narrow integers would index badly
    # (uint64 + int is a float) or overflow (int8 + 1).
    n_documents, n_features, n_classes = int(n_documents), int(n_features), int(n_classes)
    words_per_document = int(words_per_document)
    if n_classes > n_documents:
        # Such a class would have no document; refusing it also bounds the
        # per-class loop below by the documents' own memory check.
        raise ValueError(f"n_classes must be at most n_documents ({n_documents}), so that "
                         f"every class has a document, got {n_classes}")
    if (isinstance(topic_weight, (bool, np.bool_)) or not isinstance(topic_weight, numbers.Real)
            or not 0.0 <= topic_weight <= 1.0):
        raise ValueError(f"topic_weight must be a number in [0, 1], got {topic_weight!r}")
    if topic_size is None:
        topic_size = max(1, n_features // (2 * n_classes))
    if (isinstance(topic_size, (bool, np.bool_)) or not isinstance(topic_size, numbers.Integral)
            or not 1 <= topic_size <= n_features):
        raise ValueError(f"topic_size must be an integer in [1, n_features], got {topic_size!r}")
    topic_size = int(topic_size)
    _check_fits_in_memory(n_documents, n_features, n_classes, words_per_document, topic_size)
    if not (random_state is None or isinstance(random_state, np.random.Generator)
            or (isinstance(random_state, numbers.Integral)
                and not isinstance(random_state, (bool, np.bool_)) and random_state >= 0)):
        raise ValueError(f"random_state must be an integer >= 0, a numpy.random.Generator or "
                         f"None, got {random_state!r}")
    rng = np.random.default_rng(random_state)

    background = 1.0 / np.arange(1, n_features + 1)
    background_cdf = np.cumsum(rng.permutation(background / background.sum()))
    topics = np.stack([rng.choice(n_features, topic_size, replace=False)
                       for _ in range(n_classes)])

    y = np.arange(n_documents) % n_classes
    rng.shuffle(y)
    lengths = np.maximum(1, rng.poisson(words_per_document, n_documents))
    doc_of_token = np.repeat(np.arange(n_documents), lengths)
    n_tokens = doc_of_token.shape[0]
    from_topic = rng.random(n_tokens) < topic_weight
    words = np.searchsorted(background_cdf, rng.random(n_tokens) * background_cdf[-1])
    words = np.minimum(words, n_features - 1)
    topic_words = topics[y[doc_of_token[from_topic]], rng.integers(0, topic_size, from_topic.sum())]
    words[from_topic] = topic_words
    X = sp.csr_matrix((np.ones(n_tokens), (doc_of_token, words)),
                      shape=(n_documents, n_features))
    X.sum_duplicates()
    return X, y
