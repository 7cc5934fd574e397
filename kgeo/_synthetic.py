"""Synthetic corpora drawn from topic multinomials (the demo's default data)."""

import numbers

import numpy as np
import scipy.sparse as sp

__all__ = ["make_topic_corpus"]


def make_topic_corpus(n_documents=3000, n_features=5000, n_classes=10, *,
                      words_per_document=100, topic_weight=0.15, topic_size=None,
                      random_state=0):
    """Bag-of-words documents from one topic multinomial per class.

    Every word of a document is drawn from a mixture: with probability
    ``topic_weight`` from its class's topic (uniform over ``topic_size``
    words of the class's own), otherwise from a shared Zipfian background,
    as stop words and common vocabulary are in real text.

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
    random_state : int or numpy.random.Generator, default=0

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
    if not 0.0 <= topic_weight <= 1.0:
        raise ValueError(f"topic_weight must be in [0, 1], got {topic_weight!r}")
    if topic_size is None:
        topic_size = max(1, n_features // (2 * n_classes))
    if not 1 <= topic_size <= n_features:
        raise ValueError(f"topic_size must be in [1, n_features], got {topic_size!r}")
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
