"""PLSA and Hofmann's Fisher kernel: EM against a dense NumPy EM, the
fold-in against its optimality conditions, the scores against finite
differences of the log-likelihood, the kernel against Hofmann's formula."""

import math
import pickle
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import kgeo
from kgeo._synthetic import make_topic_corpus
from kgeo import PLSA, PLSAFisherEmbedding


def quiet(fn, *args, **kw):
    """Call ``fn`` with ConvergenceWarnings ignored (runs cut short on purpose)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kgeo.ConvergenceWarning)
        return fn(*args, **kw)


def dense_em(X, word_topic, n_steps, word_smoothing, doc_smoothing):
    """Hofmann's EM on dense arrays, posteriors P(z|d,w) held in full."""
    N = X.toarray()
    n_docs, n_topics = N.shape[0], word_topic.shape[1]
    doc_topic = np.full((n_docs, n_topics), 1.0 / n_topics)
    word_topic = word_topic.copy()
    for _ in range(n_steps):
        joint = doc_topic[:, None, :] * word_topic[None, :, :]   # (d, w, k)
        total = joint.sum(axis=2, keepdims=True)
        posterior = np.divide(joint, total, out=np.zeros_like(joint), where=total > 0)
        expected = N[:, :, None] * posterior
        doc_topic = expected.sum(axis=1) + doc_smoothing
        doc_topic /= doc_topic.sum(axis=1, keepdims=True)
        word_topic = expected.sum(axis=0) + word_smoothing
        word_topic /= word_topic.sum(axis=0)
    return doc_topic, word_topic


def posterior(doc_topic, phi):
    """P(z | d, w) for every document and word, 0 where no topic has the word."""
    joint = doc_topic[:, None, :] * phi[None]
    total = joint.sum(axis=2, keepdims=True)
    return np.divide(joint, total, out=np.zeros_like(joint), where=total > 0)


def fisher_kernel_reference(X, Y, embedding):
    """Hofmann's kernel (eq. 31 of Takamura et al.) summed over the models."""
    P = X.toarray() / X.toarray().sum(axis=1, keepdims=True)
    Q = Y.toarray() / Y.toarray().sum(axis=1, keepdims=True)
    K = np.zeros((X.shape[0], Y.shape[0]))
    for model in embedding.models_:
        phi = model.components_.T                        # (w, k)
        p_z = model.topic_probability_
        tx, ty = model.transform(X), model.transform(Y)
        post_x, post_y = posterior(tx, phi), posterior(ty, phi)
        if embedding.topic_scores == "exact":
            tx = np.einsum("dw,dwk->dk", P, post_x)
            ty = np.einsum("ew,ewk->ek", Q, post_y)
        K += (tx / p_z) @ ty.T
        with np.errstate(divide="ignore"):
            inverse_phi = np.where(phi > 0, 1.0 / phi, 0.0)
        K += np.einsum("dw,ew,dwk,ewk,wk->de", P, Q, post_x, post_y, inverse_phi)
    return K


@pytest.fixture
def corpus():
    X, _ = make_topic_corpus(60, 40, 3, words_per_document=30,
                             topic_weight=0.5, random_state=3)
    return X


# --- EM -------------------------------------------------------------------

@pytest.mark.parametrize("word_smoothing, doc_smoothing", [(0.0, 0.0), (0.01, 0.01), (1.0, 0.5)])
def test_em_steps_match_dense_reference(corpus, word_smoothing, doc_smoothing):
    model = quiet(PLSA(4, topic_word_smoothing=word_smoothing, doc_topic_smoothing=doc_smoothing,
                       max_iter=9, tol=0, random_state=7).fit, corpus)
    start = np.random.default_rng(7).uniform(0.5, 1.5, size=(corpus.shape[1], 4))
    start /= start.sum(axis=0)
    doc_topic, word_topic = dense_em(corpus, start, 9, word_smoothing, doc_smoothing)
    assert model.n_iter_ == 9
    np.testing.assert_allclose(model.doc_topic_, doc_topic, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.components_, word_topic.T, rtol=1e-12, atol=1e-15)
    mixture = doc_topic @ word_topic.T
    N = corpus.toarray()
    expected_ll = np.sum(N[N > 0] * np.log(mixture[N > 0]))
    np.testing.assert_allclose(model.log_likelihood_, expected_ll, rtol=1e-12)


@pytest.mark.parametrize("word_smoothing, doc_smoothing", [(0.0, 0.0), (0.01, 0.01), (2.0, 0.1)])
def test_em_never_lowers_its_objective(corpus, word_smoothing, doc_smoothing):
    model = PLSA(5, topic_word_smoothing=word_smoothing, doc_topic_smoothing=doc_smoothing,
                 tol=1e-9, max_iter=5000, random_state=0).fit(corpus)
    curve = model.objective_curve_
    assert curve.shape == (model.n_iter_ + 1,)
    assert np.all(np.diff(curve) >= -1e-12 * np.abs(curve[1:]))
    assert curve[-1] > curve[0]


def test_verbose_prints_every_nth_objective(corpus, capsys):
    """verbose=3 prints steps 0, 3, 6, ... with the objective_curve_ value of
    that step, and nothing else; verbose=0 prints nothing."""
    model = PLSA(4, random_state=0, max_iter=10, tol=0, verbose=3)
    quiet(model.fit, corpus)
    lines = capsys.readouterr().out.splitlines()
    steps = range(0, model.n_iter_ + 1, 3)
    assert lines == [f"PLSA step {s}: objective {model.objective_curve_[s]:.10g}"
                     for s in steps]
    quiet(PLSA(4, random_state=0, max_iter=10, tol=0).fit, corpus)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("verbose, every", [(True, 1), (np.True_, 1), (False, 0), (np.False_, 0)])
def test_verbose_takes_a_bool(corpus, capsys, verbose, every):
    """True prints every step and False none, as the SVM's and scikit-learn's
    bool verbose read."""
    model = PLSA(4, random_state=0, max_iter=5, tol=0, verbose=verbose)
    quiet(model.fit, corpus)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == (model.n_iter_ + 1 if every else 0)


def test_fit_is_the_same_on_any_number_of_threads(corpus):
    """One thread adds the word sums in one pass, several in a second pass
    over words: the same order, the same bits."""
    fits = [PLSA(4, random_state=0, max_iter=50, tol=0, n_jobs=n_jobs) for n_jobs in (1, 2, 3)]
    for model in fits:
        quiet(model.fit, corpus)
    for model in fits[1:]:
        np.testing.assert_array_equal(model.components_, fits[0].components_)
        np.testing.assert_array_equal(model.doc_topic_, fits[0].doc_topic_)
        np.testing.assert_array_equal(model.objective_curve_, fits[0].objective_curve_)


def test_fitted_parameters_are_distributions(corpus):
    model = PLSA(4, random_state=0).fit(corpus)
    np.testing.assert_allclose(model.components_.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(model.doc_topic_.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(model.topic_probability_.sum(), 1.0, rtol=1e-12)
    lengths = np.asarray(corpus.sum(axis=1)).ravel()
    np.testing.assert_allclose(model.topic_probability_,
                               lengths @ model.doc_topic_ / lengths.sum(), rtol=1e-12)
    assert model.components_.shape == (4, corpus.shape[1])


def test_one_topic_is_the_corpus_unigram(corpus):
    model = PLSA(1, topic_word_smoothing=0.0, doc_topic_smoothing=0.0).fit(corpus)
    unigram = np.asarray(corpus.sum(axis=0)).ravel() / corpus.sum()
    np.testing.assert_allclose(model.components_[0], unigram, rtol=1e-12)
    np.testing.assert_array_equal(model.topic_probability_, [1.0])


def test_same_random_state_same_model_and_different_starts_differ(corpus):
    a = PLSA(4, random_state=5).fit(corpus)
    b = PLSA(4, random_state=5).fit(corpus)
    c = PLSA(4, random_state=6).fit(corpus)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert not np.allclose(a.components_, c.components_)


def test_topics_of_a_planted_corpus_are_recovered():
    """Three disjoint vocabularies, each document drawn from one or two: the
    fitted topics are the planted ones up to order."""
    rng = np.random.default_rng(0)
    truth = np.zeros((3, 30))
    for k in range(3):
        truth[k, 10 * k:10 * k + 10] = rng.dirichlet(np.ones(10))
    mixing = rng.dirichlet([0.3] * 3, size=300)
    X = sp.csr_matrix(np.vstack([rng.multinomial(200, m @ truth) for m in mixing]).astype(float))
    model = PLSA(3, topic_word_smoothing=0.0, doc_topic_smoothing=0.0, tol=1e-10,
                 random_state=1).fit(X)
    order = [int(np.argmax(truth @ topic)) for topic in model.components_]
    assert sorted(order) == [0, 1, 2]
    np.testing.assert_allclose(model.components_, truth[order], atol=0.02)


# --- folding in -----------------------------------------------------------

def test_fold_in_meets_the_optimality_conditions(corpus):
    """Without smoothing, P(z|d) maximises the concave sum_w n(d,w) log
    sum_k theta_k P(w|z_k) on the simplex: the gradient equals n(d) on the
    topics in use and is at most n(d) on the others."""
    model = PLSA(4, topic_word_smoothing=0.0, doc_topic_smoothing=0.0, random_state=0,
                 fold_in_tol=1e-13, fold_in_max_iter=100000).fit(corpus)
    theta = model.transform(corpus)
    N = corpus.toarray()
    phi = model.components_
    gradient = (N / (theta @ phi)) @ phi.T
    length = N.sum(axis=1, keepdims=True)
    assert np.all(gradient <= length * (1 + 1e-6))
    used = theta > 1e-3
    np.testing.assert_allclose(gradient[used], np.broadcast_to(length, theta.shape)[used],
                               rtol=1e-6)


def test_fold_in_improves_on_the_fit_for_its_documents(corpus):
    """With P(w|z) fixed, folding in maximises each document's posterior:
    never below the fit's P(z|d) (whose EM was still moving both), and near it."""
    model = PLSA(3, random_state=0, tol=1e-10, max_iter=20000, fold_in_tol=1e-14,
                 fold_in_max_iter=100000).fit(corpus)
    folded = model.transform(corpus)
    N = corpus.toarray()
    alpha = model.doc_topic_smoothing

    def objective(theta):
        return (np.sum(N * np.log(theta @ model.components_), axis=1)
                + alpha * np.log(theta).sum(axis=1))

    fitted = objective(model.doc_topic_)
    assert np.all(objective(folded) >= fitted - 1e-13 * np.abs(fitted))
    np.testing.assert_allclose(folded, model.doc_topic_, atol=1e-3)


def test_fold_in_is_per_document(corpus):
    """The same bits whatever the batch, its order and the thread count."""
    model = PLSA(4, random_state=0).fit(corpus)
    whole = model.transform(corpus)
    order = np.random.default_rng(1).permutation(corpus.shape[0])
    np.testing.assert_array_equal(model.transform(corpus[order]), whole[order])
    np.testing.assert_array_equal(model.transform(corpus[7:8]), whole[7:8])
    for n_jobs in (1, 3):
        model.set_params(n_jobs=n_jobs)
        np.testing.assert_array_equal(model.transform(corpus), whole)


def test_documents_without_known_words_are_uniform(corpus):
    model = PLSA(4, topic_word_smoothing=0.0, doc_topic_smoothing=0.0, random_state=0)
    X = corpus.tolil()
    X[:, 0] = 0  # word 0 unseen in the fit: probability 0 in every topic
    model.fit(X.tocsr())
    new = sp.csr_matrix(np.vstack([np.eye(1, corpus.shape[1], 0).ravel() * 3,
                                   np.zeros(corpus.shape[1]),
                                   corpus[0].toarray().ravel() + np.eye(1, corpus.shape[1], 0)]))
    theta = model.transform(new)
    assert np.all(np.isfinite(theta))
    np.testing.assert_array_equal(theta[:2], 0.25)
    # The unseen word is ignored: the same as the document without it.
    np.testing.assert_array_equal(theta[2], model.transform(corpus[0].toarray())[0])


def test_empty_documents_in_the_fit_stay_uniform(corpus):
    X = sp.vstack([corpus, sp.csr_matrix((1, corpus.shape[1]))]).tocsr()
    model = PLSA(3, topic_word_smoothing=0.0, doc_topic_smoothing=0.0, random_state=0).fit(X)
    np.testing.assert_array_equal(model.doc_topic_[-1], 1 / 3)
    assert np.all(np.isfinite(model.components_))


def test_fold_in_that_does_not_settle_warns(corpus):
    model = PLSA(4, random_state=0, fold_in_max_iter=2).fit(corpus)
    with pytest.warns(kgeo.ConvergenceWarning, match="fold_in_max_iter=2") as caught:
        model.transform(corpus)
    assert caught[0].filename == __file__  # the warning names the caller's line
    with pytest.warns(UserWarning, match="occur in no document of the fit"):
        embedding = PLSAFisherEmbedding(2, random_state=0, fold_in_max_iter=2).fit(corpus[:5])
    with pytest.warns(kgeo.ConvergenceWarning, match="fold_in_max_iter=2") as caught:
        embedding.transform(corpus)
    assert caught[0].filename == __file__


def test_a_fit_that_does_not_converge_names_the_callers_line_and_its_topics(corpus):
    # stacklevel=2 named kgeo's own line through fit_transform and the
    # Fisher embedding, whose message did not say which model failed.
    for fit in (lambda: PLSA(3, max_iter=2, random_state=0).fit(corpus),
                lambda: PLSA(3, max_iter=2, random_state=0).fit_transform(corpus),
                lambda: PLSAFisherEmbedding([2, 3], max_iter=2, random_state=0).fit(corpus)):
        with pytest.warns(kgeo.ConvergenceWarning, match=r"^PLSA of [23] topics did not "
                                                         r"converge in max_iter=2") as caught:
            fit()
        assert all(w.filename == __file__ for w in caught)


def test_documents_settled_on_their_last_step_do_not_warn(corpus):
    """Empty documents without smoothing settle at once, even with one step."""
    model = PLSA(3, doc_topic_smoothing=0.0, fold_in_max_iter=1, random_state=0).fit(corpus)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        np.testing.assert_array_equal(model.transform(np.zeros((2, corpus.shape[1]))), 1 / 3)


def test_fit_that_does_not_converge_warns(corpus):
    with pytest.warns(kgeo.ConvergenceWarning, match="max_iter=3"):
        PLSA(4, random_state=0, max_iter=3).fit(corpus)


# --- the Fisher kernel ----------------------------------------------------

@pytest.mark.parametrize("topic_scores", ["approximate", "exact"])
@pytest.mark.parametrize("n_components", [1, 3, (2, 4)])
def test_fisher_kernel_matches_hofmann_formula(corpus, topic_scores, n_components):
    embedding = PLSAFisherEmbedding(n_components, topic_scores=topic_scores, random_state=0)
    train, test = corpus[:40], corpus[40:]
    embedding.fit(train)
    F, G = embedding.transform(train), embedding.transform(test)
    assert sp.isspmatrix_csr(F) and F.shape[1] == embedding.n_features_out_
    expected = fisher_kernel_reference(test, train, embedding)
    np.testing.assert_allclose((G @ F.T).toarray(), expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kgeo.pairwise_kernels(G, F, kernel="linear"), expected,
                               rtol=1e-12, atol=1e-14)


def test_one_topic_kernel_is_one_plus_inverse_frequency_weighted_product(corpus):
    """Hofmann's degenerate case: 1 + sum_w P^(w|d) P^(w|d') / P(w)."""
    embedding = PLSAFisherEmbedding(1, topic_word_smoothing=0.0, doc_topic_smoothing=0.0)
    F = embedding.fit_transform(corpus)
    P = corpus.toarray() / corpus.toarray().sum(axis=1, keepdims=True)
    unigram = np.asarray(corpus.sum(axis=0)).ravel() / corpus.sum()
    expected = 1 + (P / unigram) @ P.T
    np.testing.assert_allclose((F @ F.T).toarray(), expected, rtol=1e-12)


def test_scores_are_gradients_of_the_log_likelihood(corpus):
    """Derivatives of l(d) = sum_w P^(w|d) log sum_k P(w|z_k) P(z_k|d) in
    rho_k = 2 sqrt(P(z_k)) and rho_wk = 2 sqrt(P(w|z_k)), with P(d|z_k), that
    is P(z_k|d) / P(z_k), held fixed and the normalisations ignored. By the
    complex step, Im l(rho + i h) / h, exact to rounding: central
    differences with h = 1e-6 carried ~1e-10 of rounding, the tolerance
    they were checked to."""
    embedding = PLSAFisherEmbedding(3, topic_scores="exact", random_state=0).fit(corpus)
    model = embedding.models_[0]
    d = corpus[5]
    theta = model.transform(d)[0]
    scores = embedding.transform(d).toarray()[0]
    p_hat = d.toarray()[0] / d.sum()
    rho_topic = 2 * np.sqrt(model.topic_probability_)
    rho_word = 2 * np.sqrt(model.components_.T)          # (w, k)
    fixed = theta / model.topic_probability_

    def log_likelihood(rho_topic, rho_word):
        mixing = (rho_topic / 2) ** 2 * fixed
        return np.sum(p_hat[d.indices] * np.log(((rho_word[d.indices] / 2) ** 2) @ mixing))

    h = 1e-30
    for k in range(3):
        step = rho_topic.astype(complex)
        step[k] += 1j * h
        numeric = log_likelihood(step, rho_word).imag / h
        np.testing.assert_allclose(scores[k], numeric, rtol=1e-12)
    n_words = corpus.shape[1]
    for w in list(d.indices[:4]) + [int(np.setdiff1d(np.arange(n_words), d.indices)[0])]:
        for k in range(3):
            step = rho_word.astype(complex)
            step[w, k] += 1j * h
            numeric = log_likelihood(rho_topic, step).imag / h
            np.testing.assert_allclose(scores[3 + w * 3 + k], numeric, rtol=1e-12, atol=1e-300)


def test_exact_and_approximate_topic_scores_agree_at_a_settled_fold_in(corpus):
    kw = dict(topic_word_smoothing=0.0, doc_topic_smoothing=0.0, random_state=0,
              fold_in_tol=1e-14, fold_in_max_iter=100000)
    exact = PLSAFisherEmbedding(3, topic_scores="exact", **kw).fit_transform(corpus)
    approximate = PLSAFisherEmbedding(3, **kw).fit_transform(corpus)
    np.testing.assert_allclose(exact[:, :3].toarray(), approximate[:, :3].toarray(),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(exact[:, 3:].toarray(), approximate[:, 3:].toarray())


def test_hofmanns_kernel_is_positive_semidefinite(corpus):
    """The formula itself (computed without the scores) is a kernel."""
    embedding = PLSAFisherEmbedding((2, 5), random_state=0).fit(corpus)
    assert kgeo.is_positive_definite(fisher_kernel_reference(corpus, corpus, embedding),
                                     tol=1e-10)


def test_models_are_drawn_from_one_generator(corpus):
    embedding = PLSAFisherEmbedding((3, 3), random_state=4).fit(corpus)
    first, second = embedding.models_
    assert not np.allclose(first.components_, second.components_)
    again = PLSAFisherEmbedding((3, 3), random_state=4).fit(corpus)
    np.testing.assert_array_equal(again.models_[1].components_, second.components_)
    assert embedding.n_iter_ == max(first.n_iter_, second.n_iter_)


def test_fisher_svm_is_the_precomputed_svm_of_the_kernel(corpus):
    y = np.arange(corpus.shape[0]) % 3
    embedding = PLSAFisherEmbedding((2, 3), random_state=0).fit(corpus)
    F = embedding.transform(corpus)
    K = fisher_kernel_reference(corpus, corpus, embedding)
    linear = kgeo.SVM(kernel="linear", tol=1e-10).fit(F, y)
    precomputed = kgeo.SVM(kernel="precomputed", tol=1e-10).fit(K, y)
    np.testing.assert_allclose(linear.decision_function(F), precomputed.decision_function(K),
                               rtol=1e-7, atol=1e-7)


def test_pickled_embedding_gives_the_same_scores(corpus):
    embedding = PLSAFisherEmbedding((2, 3), random_state=0).fit(corpus)
    again = pickle.loads(pickle.dumps(embedding))
    assert (again.transform(corpus) != embedding.transform(corpus)).nnz == 0


def test_input_forms_give_the_same_scores(corpus):
    embedding = PLSAFisherEmbedding(2, random_state=0).fit(corpus)
    expected = embedding.transform(corpus).toarray()
    unsorted = corpus.copy()
    for a, b in zip(unsorted.indptr[:-1], unsorted.indptr[1:]):
        unsorted.indices[a:b] = unsorted.indices[a:b][::-1].copy()
        unsorted.data[a:b] = unsorted.data[a:b][::-1].copy()
    unsorted.has_sorted_indices = False
    for form in (corpus.toarray(), corpus.tocoo(), corpus.tocsc(), unsorted):
        np.testing.assert_array_equal(embedding.transform(form).toarray(), expected)


def test_fisher_kernel_with_words_the_model_never_saw(corpus):
    """Without word smoothing a word absent from the fit has P(w|z) = 0: it
    adds no score but still counts in P^(w|d)."""
    train = corpus.tolil()
    train[:, :3] = 0
    train = train.tocsr()
    train.eliminate_zeros()
    for scores in ("approximate", "exact"):
        embedding = PLSAFisherEmbedding((2, 3), topic_scores=scores, topic_word_smoothing=0.0,
                                        doc_topic_smoothing=0.3, random_state=0).fit(train)
        test = corpus[:12]
        G, F = embedding.transform(test), embedding.transform(train[:20])
        assert np.all(np.isfinite(G.data))
        np.testing.assert_allclose((G @ F.T).toarray(),
                                   fisher_kernel_reference(test, train[:20], embedding),
                                   rtol=1e-12, atol=1e-14)


def test_embedding_passes_its_settings_to_its_models(corpus):
    embedding = PLSAFisherEmbedding((2, 3), topic_word_smoothing=0.3, doc_topic_smoothing=0.05,
                                    max_iter=50, tol=1e-5, fold_in_max_iter=77,
                                    fold_in_tol=1e-7, n_jobs=1, random_state=0)
    quiet(embedding.fit, corpus)
    for model, n_topics in zip(embedding.models_, (2, 3)):
        params = model.get_params()
        assert params["n_components"] == n_topics
        for name in ("topic_word_smoothing", "doc_topic_smoothing", "max_iter", "tol",
                     "fold_in_max_iter", "fold_in_tol", "n_jobs"):
            assert params[name] == embedding.get_params()[name], name
    assert embedding.n_features_out_ == 5 * (1 + corpus.shape[1])
    assert quiet(embedding.transform, corpus).shape == (corpus.shape[0], 5 * (1 + corpus.shape[1]))


def test_fold_in_settings_are_read_by_transform(corpus):
    embedding = PLSAFisherEmbedding(3, random_state=0).fit(corpus)
    before = embedding.transform(corpus)
    embedding.set_params(doc_topic_smoothing=5.0)
    after = embedding.transform(corpus)
    model = embedding.models_[0]
    theta = model.set_params(doc_topic_smoothing=5.0).transform(corpus)
    np.testing.assert_array_equal(after[:, :3].toarray(),
                                  theta / np.sqrt(model.topic_probability_))
    assert abs(after - before).max() > 1e-3


def test_assigned_components_are_used(corpus):
    model = PLSA(3, random_state=0).fit(corpus)
    other = PLSA(3, random_state=1).fit(corpus)
    model.components_ = other.components_
    np.testing.assert_array_equal(model.transform(corpus), other.transform(corpus))
    model.components_ = other.components_[:, :5]
    with pytest.raises(ValueError, match=r"components_ has shape \(3, 5\), expected \(3, 40\)"):
        model.transform(corpus)


@pytest.mark.parametrize("edit, error, match", [
    (lambda c: np.where(np.arange(c.size).reshape(c.shape) == 4, np.nan, c), ValueError,
     r"finite probabilities >= 0, got 1 other value\(s\), first nan at \(0, 4\)"),
    (lambda c: np.where(np.arange(c.size).reshape(c.shape) == 0, np.inf, c), ValueError,
     r"first inf at \(0, 0\)"),
    (lambda c: -c, ValueError, r"finite probabilities >= 0, got 120 other value\(s\)"),
    (lambda c: c.astype(str), TypeError, r"components_ must hold numbers, got dtype <U"),
], ids=["nan", "inf", "negative", "str"])
def test_assigned_components_must_be_probabilities(corpus, edit, error, match):
    # A NaN or inf gave NaN topics (and NaN Fisher scores), negated
    # components a uniform 0.5 for every document, strings were parsed.
    model = PLSA(3, random_state=0).fit(corpus)
    model.components_ = edit(model.components_)
    with pytest.raises(error, match=match):
        model.transform(corpus)
    embedding = PLSAFisherEmbedding(3, random_state=0).fit(corpus)
    embedding.models_[0].components_ = edit(embedding.models_[0].components_)
    with pytest.raises(error, match=match):
        embedding.transform(corpus)


@pytest.mark.parametrize("estimator", [PLSA(3, random_state=0),
                                       PLSAFisherEmbedding((2, 3), random_state=0)])
def test_fit_transform_is_fit_then_transform(corpus, estimator):
    once = estimator.fit_transform(corpus)
    again = estimator.fit(corpus).transform(corpus)
    np.testing.assert_array_equal(once.toarray() if sp.issparse(once) else once,
                                  again.toarray() if sp.issparse(again) else again)


def test_objective_is_log_likelihood_plus_log_prior(corpus):
    model = PLSA(4, topic_word_smoothing=0.3, doc_topic_smoothing=0.05, random_state=0,
                 max_iter=40, tol=0)
    quiet(model.fit, corpus)
    N = corpus.toarray()
    mixture = model.doc_topic_ @ model.components_
    log_likelihood = np.sum(N[N > 0] * np.log(mixture[N > 0]))
    prior = 0.3 * np.log(model.components_).sum() + 0.05 * np.log(model.doc_topic_).sum()
    np.testing.assert_allclose(model.log_likelihood_, log_likelihood, rtol=1e-12)
    np.testing.assert_allclose(model.objective_curve_[-1], log_likelihood + prior, rtol=1e-12)


def test_default_fold_in_is_close_to_the_settled_one(corpus):
    model = PLSA(4, random_state=0).fit(corpus)
    settled = model.set_params(fold_in_tol=1e-14, fold_in_max_iter=10**6).transform(corpus)
    default = model.set_params(fold_in_tol=1e-8, fold_in_max_iter=10000).transform(corpus)
    np.testing.assert_allclose(default, settled, atol=1e-6)


def test_a_slow_fold_in_stops_within_its_tolerance_of_the_maximum():
    """Two nearly equal topics (2 % apart) make fold-in's EM shrink its
    steps by 0.996 a step: stopped on the step alone, a document ended
    2.6e-6 from its maximum at fold_in_tol=1e-8 (a review, against a
    50-digit Newton solution). The distance left at the steps' rate counts
    too now."""
    rng = np.random.default_rng(0)
    X = rng.poisson(3, (10, 20)).astype(float)
    model = quiet(PLSA(2, random_state=0, max_iter=5).fit, X)  # components replaced below
    base = rng.dirichlet(np.ones(20))
    other = base * (1 + 0.02 * rng.normal(size=20))
    model.components_ = np.vstack([base, other / other.sum()])
    document = rng.poisson(5, (1, 20)).astype(float)
    default = model.transform(document)
    settled = model.set_params(fold_in_tol=0.0, fold_in_max_iter=10**6).transform(document)
    np.testing.assert_allclose(default, settled, rtol=0, atol=2e-8)
    assert not np.array_equal(default, settled)  # stopped on the way, not at the end


@pytest.mark.parametrize("gap", [1e-8, 1e-9])
def test_a_fold_in_whose_first_steps_are_below_tol_runs_on(gap):
    """Two topics ``gap`` apart move a document of counts (3, 1) by about
    gap / 2 a step from the uniform start. The first step had no rate to
    judge by (it read as 0) and the second grew (read as rounding's): the
    document settled there, without a warning, 1e-6 from its maximum with
    smoothing and 0.5 from it without (a review). Now it stops within
    fold_in_tol of the maximum, or warns that it could not settle."""
    model = PLSA(2, topic_word_smoothing=0, random_state=0).fit([[3, 1], [1, 3]])
    model.components_ = np.array([[0.5 + gap, 0.5 - gap], [0.5 - gap, 0.5 + gap]])
    document = np.array([[3.0, 1.0]])
    # With doc_topic_smoothing a: theta maximises 3 log(1/2 + gap (2 theta - 1))
    # + log(1/2 - gap (2 theta - 1)) + a log theta (1 - theta), whose root
    # for a = 0.01, to first order in gap, is 1/2 + 100 gap.
    smoothed = model.transform(document)[0, 0]
    assert abs(smoothed - (0.5 + 100 * gap)) < 2e-8
    model.set_params(doc_topic_smoothing=0.0)
    with pytest.warns(kgeo.ConvergenceWarning, match="fold_in_max_iter"):
        model.transform(document)  # its maximum is theta = 1, 0.5 away


def test_huge_counts_are_the_same_problem_scaled(corpus):
    """Counts times 2**1000 (and the smoothing with them) give the same bits:
    the loops divide by a power of 2 instead of overflowing n / s."""
    factor = 2.0 ** 1000
    small = PLSA(3, random_state=0, topic_word_smoothing=0.01, doc_topic_smoothing=0.02)
    large = PLSA(3, random_state=0, topic_word_smoothing=0.01 * factor,
                 doc_topic_smoothing=0.02 * factor)
    small.fit(corpus)
    large.fit(corpus * factor)
    np.testing.assert_array_equal(large.components_, small.components_)
    np.testing.assert_array_equal(large.topic_probability_, small.topic_probability_)
    assert large.log_likelihood_ == small.log_likelihood_ * factor
    small.set_params(doc_topic_smoothing=0.0)
    large.set_params(doc_topic_smoothing=0.0)
    np.testing.assert_array_equal(large.transform(corpus * factor), small.transform(corpus))
    # Without smoothing a document's fold-in and scores depend only on its
    # word shares, whatever its counts' scale. A factor that is not a power
    # of 2 rounds the counts otherwise, and a weight tending to 0 then stops
    # at another step near its rounding: 3e-14 against 2e-15, hence atol.
    embedding = PLSAFisherEmbedding(2, doc_topic_smoothing=0.0, random_state=0).fit(corpus)
    for factor in (2.0 ** 1000, 1.7e308 / corpus.max()):
        huge = embedding.transform(corpus * factor)
        assert np.all(np.isfinite(huge.data))
        np.testing.assert_allclose(huge.toarray(), embedding.transform(corpus).toarray(),
                                   rtol=1e-13, atol=1e-12)


def test_counts_whose_log_likelihood_overflows_are_refused():
    X = np.full((3, 4), 1e308)
    with pytest.raises(ValueError, match=r"X's counts \(the largest 1e\+308\) make PLSA's "
                                         r"log-likelihood overflow float64"):
        PLSA(2, random_state=0).fit(X)


def test_smoothing_whose_prior_overflows_is_named_not_the_counts():
    # The message blamed X's counts ("scale X down", which makes it worse)
    # when the priors' log-density overflowed.
    X = np.array([[3.0, 1.0, 0.0], [0.0, 2.0, 1.0]])
    with pytest.raises(ValueError, match=r"the smoothing \(topic_word_smoothing=1e\+308, "
                                         r"doc_topic_smoothing=0.01\) makes the log-density "
                                         r"of PLSA's Dirichlet priors overflow float64"):
        PLSA(2, topic_word_smoothing=1e308, random_state=0).fit(X)


def test_smoothing_too_small_to_keep_probabilities_above_zero_is_named_so():
    # A subnormal pseudo-count lets P(w | z) reach 0, whose log is -inf: the
    # message said to make the smoothing smaller, which cannot help (0, or
    # a larger value, fits).
    X = np.array([[5, 4, 0, 0], [4, 5, 0, 0], [0, 0, 5, 4], [0, 1, 4, 5]], float)
    with pytest.raises(ValueError, match=r"topic_word_smoothing=5e-324, doc_topic_smoothing="
                                         r"0.01\) is too small to keep PLSA's probabilities "
                                         r"above 0 in float64.*use 0 \(no prior\) or a larger"):
        PLSA(2, topic_word_smoothing=5e-324, random_state=0).fit(X)
    for smoothing in (0.0, 1e-300):
        PLSA(2, topic_word_smoothing=smoothing, random_state=0).fit(X)


def test_words_absent_from_the_fit_are_named_where_smoothing_scores_them():
    """With topic_word_smoothing > 0 a vocabulary word that no document of
    the fit holds has the smoothing's probability alone (about 4e-6 here)
    and word scores of 1 / sqrt of it: one shared occurrence gave 12.4 of
    two documents' kernel value of 13.6, where the docs said such words add
    no score (a review). fit warns, naming the columns; with smoothing 0
    they are unknown to the model and score 0, as the docs say."""
    rng = np.random.default_rng(0)
    counts = rng.poisson(2.0, size=(200, 30)).astype(float)
    counts[:, [4, 29]] = 0
    new = rng.poisson(2.0, size=(2, 30)).astype(float)
    new[:, 4] = 0
    new[:, 29] = 1
    with pytest.warns(UserWarning, match=r"2 of the 30 words .* \(columns 4, 29\)"):
        smoothed = PLSAFisherEmbedding((5,), random_state=0).fit(counts)
    unseen = np.flatnonzero([name.startswith("plsa5_x29_")
                             for name in smoothed.get_feature_names_out()])
    scores = smoothed.transform(new).toarray()
    assert scores[0, unseen] @ scores[1, unseen] > 0.8 * (scores[0] @ scores[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        unsmoothed = PLSAFisherEmbedding((5,), topic_word_smoothing=0.0,
                                         random_state=0).fit(counts)
        PLSAFisherEmbedding((5,), random_state=0).fit(counts[:, :4])  # every word seen
    assert np.all(unsmoothed.transform(new).toarray()[:, unseen] == 0)


# --- real documents --------------------------------------------------------

def test_fisher_kernel_on_newsgroups_documents(newsgroups_counts):
    X = newsgroups_counts
    # (The vocabulary is the whole sample's: the fit warns of the words that
    # its 300 documents lack, which the reference scores alike.)
    with pytest.warns(UserWarning, match="occur in no document of the fit"):
        embedding = PLSAFisherEmbedding((4, 8), random_state=0, tol=1e-4).fit(X[:300])
    G, F = embedding.transform(X[300:320]), embedding.transform(X[:60])
    expected = fisher_kernel_reference(X[300:320], X[:60], embedding)
    np.testing.assert_allclose((G @ F.T).toarray(), expected, rtol=1e-11)
    reference = fisher_kernel_reference(X[:60], X[:60], embedding)
    assert kgeo.is_positive_definite(reference, tol=1e-9)


# --- errors ---------------------------------------------------------------

@pytest.mark.parametrize("params, match", [
    (dict(n_components=0), "n_components must be an integer >= 1, got 0"),
    (dict(n_components=True), "n_components must be an integer >= 1, got True"),
    (dict(n_components=2.5), "n_components must be an integer >= 1, got 2.5"),
    (dict(topic_word_smoothing=-1), "topic_word_smoothing must be finite and >= 0"),
    (dict(doc_topic_smoothing=float("nan")), "doc_topic_smoothing must be finite and >= 0"),
    (dict(max_iter=0), "max_iter must be an integer >= 1, got 0"),
    (dict(fold_in_max_iter=2**31), "fold_in_max_iter must be at most"),
    (dict(tol=-1e-3), "tol must be finite and >= 0"),
    (dict(fold_in_tol=float("inf")), "fold_in_tol must be finite and >= 0"),
    (dict(random_state=-1), "random_state must be None, an integer >= 0"),
    (dict(random_state="seed"), "random_state must be None, an integer >= 0"),
    (dict(n_jobs=0), "Invalid n_jobs 0"),
    (dict(verbose=-1), "verbose must be an integer >= 0"),
])
def test_invalid_plsa_parameters(corpus, params, match):
    with pytest.raises((ValueError, TypeError), match=match):
        PLSA(**params).fit(corpus)


@pytest.mark.parametrize("params, match", [
    (dict(n_components=()), "at least one number of topics"),
    (dict(n_components="10"), "n_components must be an integer >= 1 or a sequence"),
    (dict(n_components={10, 20}), "n_components must be an integer >= 1 or a sequence"),
    (dict(n_components=(10, 0)), "each of n_components must be an integer >= 1, got 0"),
    # a 0-d array is its scalar (NumPy's "iteration over a 0-d array" before)
    (dict(n_components=np.array(0)), "each of n_components must be an integer >= 1, got "),
    (dict(n_components=np.array(2.5)), "n_components must be an integer >= 1 or a sequence"),
    (dict(topic_scores="full"), "topic_scores must be 'approximate' or 'exact', got 'full'"),
    (dict(tol=-1.0), "tol must be finite and >= 0"),
])
def test_invalid_embedding_parameters(corpus, params, match):
    with pytest.raises((ValueError, TypeError), match=match):
        PLSAFisherEmbedding(**params).fit(corpus)


def test_topic_counts_as_numpy_values(corpus):
    sizes = [PLSAFisherEmbedding(k, random_state=0).fit(corpus).n_features_out_
             for k in (2, np.array(2), np.int64(2), [np.int32(2)])]
    assert len(set(sizes)) == 1


@pytest.mark.parametrize("Estimator", [PLSA, PLSAFisherEmbedding])
def test_bad_input(Estimator, corpus):
    estimator = Estimator(2)  # (made here: the item run again must start unfitted)
    with pytest.raises(ValueError, match=f"Negative values in data passed to "
                                         f"{type(estimator).__name__}: X has 1 negative entries"):
        estimator.fit(np.array([[1.0, -1.0], [2.0, 0.0]]))
    with pytest.raises(ValueError, match="NaN"):
        estimator.fit(np.array([[1.0, np.nan]]))
    with pytest.raises(kgeo.NotFittedError):
        estimator.transform(corpus)
    estimator.fit(corpus)
    with pytest.raises(ValueError, match=f"X has 5 features, but {type(estimator).__name__} "
                                         f"is expecting {corpus.shape[1]} features"):
        estimator.transform(np.ones((2, 5)))


def test_plsa_needs_words(corpus):
    with pytest.raises(ValueError, match="X has no nonzero count"):
        PLSA(2).fit(np.zeros((3, 4)))


def test_too_many_scores_are_refused():
    X = sp.csr_matrix((np.ones(1), ([0], [0])), shape=(1, 2**27))
    with pytest.raises(ValueError, match="needs fewer than 2\\*\\*31"):
        PLSAFisherEmbedding((10, 10)).fit(X)


def test_scores_up_to_the_int32_limit_are_accepted_and_one_more_refused(monkeypatch):
    # "Fewer than 2**31" scores per document: 2**31 - 1 (one topic, 2**31 - 2
    # words) reaches the models' fits, 2**31 does not (">=" refused the
    # largest allowed; a mutation review). The fits are stubbed: their
    # tables would not fit in memory.
    class Reached(Exception):
        pass

    def reached(self, X, y=None):
        raise Reached

    monkeypatch.setattr(PLSA, "fit", reached)
    embedding = PLSAFisherEmbedding(1, topic_word_smoothing=0.0)
    with pytest.raises(Reached):
        embedding.fit(sp.csr_matrix((np.ones(1), ([0], [0])), shape=(1, 2**31 - 2)))
    with pytest.raises(ValueError, match=r"give 2147483648 scores per document; .*fewer "
                                         r"than 2\*\*31"):
        embedding.fit(sp.csr_matrix((np.ones(1), ([0], [0])), shape=(1, 2**31 - 1)))


def test_transform_of_more_than_int32_scores_is_refused_up_front():
    # 410 documents of 4 words under 2**20 topics: 410 * 5 * 2**20 = 2**31 +
    # 2**21 scores, refused before any table is made (only the topic counts
    # are read first: the assigned components are never used). Without the
    # check it allocated 17 GB (a mutation review).
    embedding = PLSAFisherEmbedding(1, random_state=0).fit(np.ones((3, 4)))
    embedding.models_[0].components_ = np.zeros((2**20, 4))
    with pytest.raises(ValueError, match=r"X's 1640 nonzeros give 2149580800 Fisher scores; "
                                         r"kgeo needs fewer than 2\*\*31 per matrix"):
        embedding.transform(np.ones((410, 4)))


@pytest.mark.parametrize("n_components, n_features", [(10**9, 4), (2**63, 4), (2**11, 2**31 - 1)])
def test_topic_tables_beyond_the_machines_memory_are_refused_up_front(n_components,
                                                                      n_features, monkeypatch):
    """n_components=10**9 on 4 words reached NumPy's MemoryError (30 GiB),
    2**63 an OverflowError, and a hashed vocabulary of 2**31 - 1 columns
    holding 5 counts a 32 GiB table: a ValueError names the size first (on a
    machine of 24 GiB; where the memory is unknown, beyond 2**62 bytes)."""
    from kgeo import _plsa

    X = sp.csr_matrix((np.array([1.0, 2, 3, 1, 1]), np.array([0, 1, 3, 1, 2]),
                       np.array([0, 2, 3, 5])), shape=(3, n_features))
    for memory in (24 * 2**30,) + ((None,) if n_components == 2**63 else ()):
        monkeypatch.setattr(_plsa, "_physical_memory", lambda: memory)
        with pytest.raises(ValueError, match=rf"n_components={n_components} on X of 3 "
                                             rf"documents and {n_features} features needs"):
            PLSA(n_components, max_iter=2, random_state=0).fit(X)


# --- the example ------------------------------------------------------------

@pytest.mark.parametrize("script, argv, match", [
    ("fisher_kernel_reuters", ["--C", "inf"], r"--C must be finite and > 0, got inf"),
    # Subnormal: a traceback from the first SVM's fit, after PLSA's.
    ("fisher_kernel_reuters", ["--C", "1e-320"], r"--C must be at least 2\.225e-308 \(a "
                                                 r"normal float\), got 1e-320"),
    ("fisher_kernel_reuters", ["--seed", "-1"], r"--seed must be >= 0, got -1"),
    ("fisher_kernel_retrieval", ["--seed", "-1"], r"--seed must be >= 0, got -1"),
])
def test_example_options_are_checked_before_any_data_is_read(load_example, script, argv,
                                                             match, capsys):
    # --C inf failed in the SVM's fit after PLSA had been fitted, --seed -1
    # in NumPy.
    with pytest.raises(SystemExit) as stop:
        load_example(script).parse_args(["--data", "nowhere", *argv])
    assert stop.value.code == 2
    assert re.search(match, capsys.readouterr().err)


@pytest.mark.parametrize("script", ["fisher_kernel_reuters", "fisher_kernel_retrieval"])
def test_example_names_a_missing_corpus(load_example, script, tmp_path):
    with pytest.raises(SystemExit, match=r"^--data: .*not found"):
        load_example(script).main(["--data", str(tmp_path / "nowhere")])


def test_reuters_example_runs(reuters_dir, load_example, capsys):
    """examples/fisher_kernel_reuters.py on a small configuration: its table
    has a row per size and kernel, with errors a trained SVM would give."""
    example = load_example("fisher_kernel_reuters")
    example.main(["--data", str(reuters_dir), "--components", "4", "--fractions", "0.02,1",
                  "--repeats", "1"])
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("| 1") or line.startswith("| 9")]
    assert len(rows) == 4
    averages = {(row.split(" | ")[0], row.split(" | ")[1]): float(row.split(" | ")[-1].rstrip(" |"))
                for row in rows}
    assert averages[("| 9603 (100 %)", "linear (TF, L2)")] < 3.0
    assert all(0 < error < 15 for error in averages.values())


def test_average_precision_of_the_retrieval_example(load_example):
    example = load_example("fisher_kernel_retrieval")
    relevant = np.array([True, False, True, False, False])
    # Ranked: doc 2 (relevant, precision 1/1), doc 1, doc 0 (relevant, 2/3).
    scores = np.array([0.5, 0.7, 0.9, 0.1, 0.2])
    assert example.average_precision(scores, relevant) == pytest.approx((1 + 2 / 3) / 2)
    # Ties keep document order: doc 0 (relevant) first.
    assert example.average_precision(np.zeros(5), relevant) == pytest.approx((1 + 2 / 3) / 2)
    assert example.average_precision(-scores, relevant) == pytest.approx((1 / 3 + 2 / 5) / 2)


def test_retrieval_example_runs(data_dir, load_example, capsys):
    if not (data_dir / "ir-classic" / "med.tar.gz").is_file():
        pytest.skip(f"MED not found in {data_dir / 'ir-classic'}")
    example = load_example("fisher_kernel_retrieval")
    example.main(["--data", str(data_dir), "--collections", "med", "--components", "2,4"])
    rows = {line.split(" | ")[0].lstrip("| "): float(line.split(" | ")[1].rstrip(" |"))
            for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and "---" not in line and "ranking" not in line}
    assert set(rows) == {"VSM (TF-IDF cosine)", "Fisher kernel", "Fisher cosine",
                         "VSM + Fisher cosine"}
    assert rows["VSM (TF-IDF cosine)"] > 0.4  # MED is the easy collection
    assert all(0.2 < value < 1 for value in rows.values())


# Found by mutation testing: the count scaling seen at float64's top, a topic
# of zero probability, and a fold-in tolerance of 0.

def test_fit_with_a_count_near_float64_max_is_the_scaled_problem():
    # P19: fit divides counts (and smoothing) by a power of 2 near the
    # largest count, so n / s cannot overflow. One count of 2**1020 among
    # 50 words (P(w | z) ~ 1/50 at the start, so unscaled n / s ~ 2**1026
    # overflows): the fit must be finite and the same bits as the fit of
    # the counts times 2**-1020 with the smoothing times 2**-1020.
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(6, 50)).astype(float)
    X[:, 0] = 1.0
    X[0, 0] = 2.0 ** 1020
    kw = dict(random_state=0, max_iter=30, tol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter runs out with tol=0
        large = PLSA(2, topic_word_smoothing=0.01, doc_topic_smoothing=0.02, **kw).fit(X)
        small = PLSA(2, topic_word_smoothing=0.01 * 2.0 ** -1020,
                     doc_topic_smoothing=0.02 * 2.0 ** -1020, **kw).fit(X * 2.0 ** -1020)
    assert np.all(np.isfinite(large.components_))
    np.testing.assert_array_equal(large.components_, small.components_)
    np.testing.assert_array_equal(large.doc_topic_, small.doc_topic_)
    assert large.log_likelihood_ == small.log_likelihood_ * 2.0 ** 1020


def test_embedding_refuses_a_topic_with_zero_probability(corpus, monkeypatch):
    # P21: the guard "a topic ... is unused (P(z) = 0)": a topic's Fisher
    # score P(z|d)/sqrt(P(z)) would be 0/0. EM reached an exact 0 on counts
    # of the smallest subnormal, which it now scales up (no 0 is reached
    # there any more): the fitted model is given one here.
    fit = PLSA.fit

    def fit_with_an_unused_topic(self, X, y=None):
        fit(self, X, y)
        self.topic_probability_[1] = 0.0
        return self

    monkeypatch.setattr(PLSA, "fit", fit_with_an_unused_topic)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=r"unused \(P\(z\) = 0, at most 1.5e-08\)"):
            PLSAFisherEmbedding(3, max_iter=5, random_state=0).fit(corpus)


def test_embedding_refuses_a_topic_that_em_faded_without_reaching_zero():
    # Without smoothing a surplus topic's P(z) fades towards 0 (7.8e-64
    # here) without reaching it: the guard tested P(z) > 0, and transform's
    # division by sqrt(P(z)) gave scores of 5.6e20 (6.2 with smoothing).
    rng = np.random.default_rng(0)
    X = rng.poisson(0.5, size=(20, 50))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=r"a topic of the 30-topic model is unused \(P\(z\) "
                                             r"= [0-9.e-]+, at most 1.5e-08\)"):
            PLSAFisherEmbedding(doc_topic_smoothing=0, random_state=0).fit(X)
        scores = PLSAFisherEmbedding(random_state=0).fit(X).transform(X)
    assert np.abs(scores.data).max() < 100


def test_embedding_refuses_a_one_shot_iterator_of_topic_counts(corpus):
    # fit's checks used the generator up: fit succeeded, then transform
    # found "an empty sequence".
    with pytest.raises(ValueError, match=r"got a one-shot iterator \(generator\); pass a list"):
        PLSAFisherEmbedding(n_components=(k for k in (2, 3))).fit(corpus)
    assert PLSAFisherEmbedding(n_components=range(2, 4), random_state=0).fit(
        corpus).n_features_out_ == 5 * 41


def test_a_fitted_model_keeps_its_topics_after_set_params(corpus):
    # transform checked components_ against the n_components parameter, so
    # set_params(n_components=2) without a refit broke it, while
    # get_feature_names_out went on with the fitted 3 topics.
    model = PLSA(3, random_state=0).fit(corpus)
    before = model.transform(corpus)
    model.set_params(n_components=2)
    np.testing.assert_array_equal(model.transform(corpus), before)
    assert len(model.get_feature_names_out()) == 3


def test_fold_in_with_zero_tolerance_settles_on_an_exact_fixed_point():
    # X16: fold_in stops when no weight moves by more than fold_in_tol
    # ("moved <= tol"). With fold_in_tol=0 a document already at its fixed
    # point (an empty one with smoothing: P(z|d) = prior / (K prior) = 1/K)
    # settles; "moved < tol" would run all fold_in_max_iter steps and warn.
    X = np.array([[3.0, 1, 0, 2], [0, 2, 4, 1], [1, 0, 2, 5]])
    model = PLSA(2, random_state=0, fold_in_tol=0.0, fold_in_max_iter=50).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        theta = model.transform(np.zeros((1, 4)))
    np.testing.assert_array_equal(theta, [[0.5, 0.5]])


# Found by mutation testing, round 2: the compiled E-step's skipping of
# entries of probability 0, the stopping rule of the fit, the count scaling
# at a scale of 2, a document's own scale in the fold-in, and two bounds of
# the parameter checks.

@pytest.mark.parametrize("n_threads", [1, 2])
def test_em_sums_skip_entries_of_probability_zero(n_threads):
    # C1, C16: em_sums must skip an entry whose s(d, w) = sum_k P(z_k|d)
    # P(w|z_k) is 0 (ratio 0, no log-likelihood term) on both routes; the
    # fit rarely reaches such an entry, so em_sums is called directly with
    # P(z|d) and P(w|z) that make two entries 0, its outputs (and the
    # parallel route's ratios) filled with NaN beforehand.
    from kgeo import _plsa_em

    X = sp.csr_matrix(np.array([[2.0, 1, 0, 3], [1, 4, 2, 0], [5, 0, 1, 1]]))
    doc_topic = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    word_topic = np.array([[0.5, 0.0], [0.0, 0.5], [0.25, 0.25], [0.25, 0.25]])  # (w, k)
    counts, words, indptr = X.data, X.indices, X.indptr.astype(np.int64)
    by_word = sp.csr_matrix((np.arange(X.nnz, dtype=np.int64), words, indptr),
                            shape=X.shape).tocsc()
    doc_sums, word_sums = np.full((3, 2), np.nan), np.full((4, 2), np.nan)
    ratios, doc_ll = np.full(X.nnz, np.nan), np.full(3, np.nan)
    _plsa_em.em_sums(counts, words, indptr, by_word.indices.astype(np.int32),
                     by_word.indptr.astype(np.int64), by_word.data, doc_topic, word_topic,
                     doc_sums, word_sums, ratios, doc_ll, 1.0, n_threads)
    N = X.toarray()
    s = doc_topic @ word_topic.T
    assert np.sum((N > 0) & (s == 0)) == 2  # the premise: doc 0 word 1, doc 2 word 0
    ratio = np.divide(N, s, out=np.zeros_like(N), where=(N > 0) & (s > 0))
    used = (N > 0) & (s > 0)
    expected_ll = [np.sum(N[d][used[d]] * np.log(s[d][used[d]])) for d in range(3)]
    np.testing.assert_allclose(doc_sums, ratio @ word_topic, rtol=1e-15)
    np.testing.assert_allclose(word_sums, ratio.T @ doc_topic, rtol=1e-15)
    np.testing.assert_allclose(doc_ll, expected_ll, rtol=1e-15)


@pytest.mark.parametrize("unit", [1.0, 2.0 ** -13, 0.3])
def test_em_sums_take_the_unit_counts_log_likelihood_as_one_product(unit):
    """The E-step multiplies the probabilities of the entries whose count is
    ``unit`` into one product per document (renormalised as it shrinks below
    2**-500, a probability below that taken by its own log) and takes one
    log of it: the log-likelihoods match sum n log s on both routes, whose
    bits agree, for a document of 1,500 words seen once (the product
    renormalised about 30 times), one of counts 1 to 3, one with a word of
    probability about 1e-303 after 50 others, and one of 200 words of
    probability about 2**-100 each (a product renormalised late would
    underflow). ``unit`` as PLSA passes it: 1, a power of 2 (counts scaled
    down) or any weight."""
    from kgeo import _plsa_em

    rng = np.random.default_rng(0)
    n_words = 2000
    N = np.zeros((4, n_words))
    N[0, rng.choice(n_words, 1500, replace=False)] = 1.0
    N[1, rng.choice(n_words, 300, replace=False)] = rng.integers(1, 4, 300)
    N[2, :50] = 1.0
    N[2, n_words - 1] = 1.0
    N[3, 1000:1200] = 1.0
    N *= unit
    word_topic = rng.uniform(0.5, 1.5, (n_words, 2))
    word_topic[n_words - 1] = 1e-300  # after 50 words: times the product, subnormal
    word_topic[1000:1200] = 2.0 ** -100 * rng.uniform(0.5, 1.0, (200, 2))
    word_topic /= word_topic.sum(axis=0)
    doc_topic = np.array([[0.3, 0.7], [0.5, 0.5], [0.9, 0.1], [0.6, 0.4]])
    X = sp.csr_matrix(N)
    counts, words, indptr = X.data, X.indices, X.indptr.astype(np.int64)
    by_word = sp.csr_matrix((np.arange(X.nnz, dtype=np.int64), words, indptr),
                            shape=X.shape).tocsc()
    s = doc_topic @ word_topic.T
    assert s[2, n_words - 1] < 2.0 ** -500  # the premise: a factor taken by its log
    expected = np.sum(np.where(N > 0, N * np.log(s), 0.0), axis=1)
    results = {}
    for matched in (unit, -1.0):  # -1: no count is the unit, a log for every entry
        for n_threads in (1, 2):
            doc_ll = np.full(4, np.nan)
            _plsa_em.em_sums(counts, words, indptr, by_word.indices.astype(np.int32),
                             by_word.indptr.astype(np.int64), by_word.data, doc_topic,
                             word_topic, np.empty((4, 2)), np.empty((n_words, 2)),
                             np.empty(X.nnz), doc_ll, matched, n_threads)
            results[matched, n_threads] = doc_ll
            np.testing.assert_allclose(doc_ll, expected, rtol=1e-13)
        assert results[matched, 1].tobytes() == results[matched, 2].tobytes()
    assert not np.array_equal(results[unit, 1], results[-1.0, 1])  # the product was taken


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (3, 7), (2000, 10), (100, 1000)])
def test_log_sum_is_the_sum_of_the_logs(shape):
    """log_sum (PLSA's log priors) takes a table's logs as the log of four
    renormalised products; it matches the exactly rounded sum of the logs
    to a few ulps, tables of 10**5 values (the products renormalised
    hundreds of times) included."""
    from kgeo import _plsa_em

    rng = np.random.default_rng(shape[0])
    values = rng.uniform(1e-4, 1.0, size=shape) ** 3
    exact = math.fsum(math.log(v) for v in values.ravel())
    assert abs(_plsa_em.log_sum(values) - exact) <= 4 * math.ulp(exact) + 1e-300


def test_log_sum_takes_values_outside_the_products_range_by_their_own_logs():
    """0 gives -inf and NaN or a negative value NaN, as the sum of logs
    does; subnormal and huge values (outside [2**-500, 2**500]) are added
    as logs, between others taken by the products."""
    from kgeo import _plsa_em

    row = np.array([0.5, 1e-310, 0.25, 1e300, 0.125, 2.0 ** -600, 3.0])
    exact = math.fsum(math.log(v) for v in row)
    assert abs(_plsa_em.log_sum(row[None, :]) - exact) <= 4 * math.ulp(exact)
    # Each of the four products meets values that would take it out of
    # float64's range if multiplied in (a review's mutants: subnormals or
    # huge values multiplied, no renormalisation above 2**500).
    for row in ([1e-150] * 4 + [1e-310] * 4, [1e150] * 4 + [1e300] * 4, [1e150] * 12,
                [1e-150] * 12, [1e-150, 1e150] * 8):
        exact = math.fsum(math.log(v) for v in row)
        assert abs(_plsa_em.log_sum(np.array([row])) - exact) <= 4 * math.ulp(exact), row
    assert _plsa_em.log_sum(np.array([[0.5, 0.0, 0.25]])) == -np.inf
    assert np.isnan(_plsa_em.log_sum(np.array([[0.5, np.nan]])))
    assert np.isnan(_plsa_em.log_sum(np.array([[0.5, -1.0]])))
    assert np.isnan(_plsa_em.log_sum(np.array([[0.0, np.nan]])))


def test_fit_stops_at_the_first_step_within_tol(corpus):
    # P15: the fit stops at the first step that raises the objective by no
    # more than tol times its magnitude, the first step included.
    for tol in (1e-3, 1e-5):
        model = PLSA(4, random_state=0, tol=tol).fit(corpus)
        curve = model.objective_curve_
        gains, limits = np.diff(curve), tol * np.abs(curve[1:])
        assert np.all(gains[:-1] > limits[:-1]) and gains[-1] <= limits[-1]
    # A tolerance no step can fail: one step, not two.
    assert PLSA(4, random_state=0, tol=10.0).fit(corpus).n_iter_ == 1


def test_a_step_that_lowers_the_objective_stops_a_fit_with_tol_zero(corpus, monkeypatch):
    # "Raises the objective by no more than tol times its magnitude": a fall
    # (rounding's, for EM) is within any tol >= 0 and stops the fit; its
    # size compared with abs() ran on to max_iter (a mutation review).
    steps = iter(range(10**6))
    monkeypatch.setattr(PLSA, "_log_prior", lambda self, *tables: -1e9 * next(steps))
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        model = PLSA(4, tol=0.0, random_state=0, max_iter=50).fit(corpus)
    assert model.n_iter_ == 1 and np.diff(model.objective_curve_)[0] < 0


def test_em_steps_with_counts_below_four_match_dense_reference(corpus):
    # P17: counts up to 3 have the scale 2 (scale_above), by which the
    # counts and the smoothing are both divided: the same EM as unscaled.
    X = corpus.minimum(3).tocsr()
    assert X.max() == 3
    model = quiet(PLSA(3, topic_word_smoothing=0.3, doc_topic_smoothing=0.2, max_iter=6,
                       tol=0, random_state=2).fit, X)
    start = np.random.default_rng(2).uniform(0.5, 1.5, size=(X.shape[1], 3))
    start /= start.sum(axis=0)
    doc_topic, word_topic = dense_em(X, start, 6, 0.3, 0.2)
    np.testing.assert_allclose(model.doc_topic_, doc_topic, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.components_, word_topic.T, rtol=1e-12, atol=1e-15)


def test_fold_in_scales_each_document_by_its_largest_count(corpus):
    # C18: the fold-in divides a document's counts by a power of 2 near its
    # largest count, wherever that count sits in the row. A huge count
    # first and small ones after (unscaled n / s ~ 2**1025 overflows): the
    # same bits as the document times 2**-1020, without smoothing.
    model = PLSA(3, doc_topic_smoothing=0.0, random_state=0).fit(corpus)
    small = np.zeros((1, corpus.shape[1]))
    small[0, :3] = [1.5, 3 * 2.0 ** -1020, 2 * 2.0 ** -1020]
    huge = small * 2.0 ** 1020
    theta = model.transform(sp.csr_matrix(huge))
    assert np.all(np.isfinite(theta))
    np.testing.assert_array_equal(theta, model.transform(sp.csr_matrix(small)))


def test_largest_fold_in_max_iter_is_accepted(corpus):
    # P9: fold_in_max_iter may be 2**31 - 1 ("at most"), only 2**31 is refused.
    model = PLSA(2, random_state=0, fold_in_max_iter=2**31 - 1).fit(corpus)
    assert np.all(np.isfinite(model.transform(corpus[:3])))


def test_a_mapping_is_not_a_sequence_of_topic_counts(corpus):
    # P22: a dict iterates over its keys, but is no sequence of numbers of topics.
    with pytest.raises(ValueError, match="n_components must be an integer >= 1 or a sequence"):
        PLSAFisherEmbedding({2: "a", 3: "b"}).fit(corpus)


# Found by mutation testing, round 3 (a review of _plsa.py and _plsa_em.pyx):
# the fit's stop at a gain of exactly 0, the fold-in's stopping rule step by
# step, stored zeros in the scores, verbose passed on, weights below 1, and
# parameters set after the fit.

SEPARATE = np.array([[5, 4, 0, 0], [4, 5, 0, 0], [0, 0, 5, 4], [0, 1, 4, 5]], float)


def test_a_step_that_leaves_the_objective_unchanged_stops_a_fit_with_tol_zero():
    # The fit stops on a gain of "no more than tol" times the objective: one
    # topic reaches its fixed point (the corpus unigram) in one step, so the
    # second step's gain is 0 and stops a fit with tol=0 ("< tol" ran all
    # max_iter steps and warned).
    X = np.array([[5, 4, 0, 1], [4, 5, 1, 0], [0, 1, 5, 4]], float)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        model = PLSA(1, tol=0.0, random_state=0, max_iter=200).fit(X)
    gains = np.diff(model.objective_curve_)
    assert model.n_iter_ < 200
    assert np.all(gains[:-1] > 0) and gains[-1] <= 0


def _fold_in_reference(n, phi, smoothing, max_iter, tol):
    """fold_in's documented rule for one document, step by step in NumPy:
    EM from the uniform start over the words with s > 0 (counts and
    smoothing divided by the power of 2 below the largest count), stopping
    at a move of 0; where the weights come back to a checkpoint's (taken at
    the first step, then anew 1, 2, 4, ... 1,024 steps later); or at a move
    within tol whose distance left at the rate q, move q / (1 - q), is
    within tol too, q read over the moves since the last one it was read
    at, once the move has changed by more than the bounds on the two
    moves' rounding, (2 words + 6 + topics) ulps of the weight that moved
    most (before or after, the larger). The first step has no rate. The
    first such move does not stop it: it runs on until the move, at that
    rate, would be down to its rounding (or to the last step), and stops
    there if the move is within twice that prediction plus twice its
    rounding; otherwise the next move within tol whose rate is read over
    moves after that point stops it (after the confirmation's start, where
    max_iter cut it short of rounding). Such a stop is checked on its step
    where that is a confirmation's end or the last step, else on the next,
    unless a check (words K (K + 1) / 2 + K**3 / 3) costs more than the
    steps so far (2 K words each) or K > 1,024: a check solves (I - J)
    delta = step for Newton's step, J the Jacobian of the step's map at the
    weights it starts from, and stops the document where delta - step is
    within tol. Otherwise the next check comes where the distance left
    would be within tol / 2 at the larger of the rates left / (left + move)
    and (left / last check's left) ** (1 / steps since); or, where left is
    not finite or did not shrink, as many steps later as since the first
    check; within the last step.
    Returns (P(z|d), whether it stopped before max_iter)."""
    n_topics = phi.shape[1]
    largest = n.max()
    scale = 2.0 ** (np.frexp(largest)[1] - 1) if largest > 1 else 1.0
    prior = smoothing / scale
    theta = np.full(n_topics, 1.0 / n_topics)
    checkpoint, checkpoint_step, window = theta, 0, 1
    anchor, anchor_rounding, anchor_step = np.inf, 0.0, 0
    confirm, exposed_from = None, None
    check_at, first_check, last_check, last_left = None, None, None, np.inf
    n_words = np.count_nonzero(n)

    def affordable(steps):
        k = n_topics
        cost = n_words * k * (k + 1) / 2 + k ** 3 / 3
        return k <= 1024 and cost <= (steps + 1) * 2 * k * n_words
    ulps = (2 * np.count_nonzero(n) + 6 + n_topics) * np.finfo(float).eps
    for step in range(max_iter):
        s = phi @ theta
        used = (n > 0) & (s > 0)
        counts = n[used] / scale
        total = counts.sum()
        if total == 0 and prior == 0:
            return theta, True
        sums = (counts / s[used]) @ phi[used]
        value = (theta * sums + prior) / (total + n_topics * prior)
        most = np.argmax(np.abs(value - theta))
        moved = abs(value[most] - theta[most])
        rounding = ulps * max(value[most], theta[most])
        before, theta = theta, value
        if moved == 0 or (step > 0 and np.array_equal(theta, checkpoint)):
            return theta, True
        if step == 0 or step - checkpoint_step == window:
            checkpoint, checkpoint_step = theta, step
            window = min(2 * window, 1024) if step > 0 else window
        checking = step == check_at or (
            (confirm is not None and step == confirm[0] or step == max_iter - 1)
            and affordable(step))
        if check_at is None:
            candidate = False
            if confirm is not None and step >= confirm[0]:  # by the last step
                _, start, start_moved, start_rate, cut = confirm
                candidate = moved <= 2 * start_moved * start_rate ** (step - start) + 2 * rounding
                if not candidate:
                    confirm, exposed_from = None, (start if cut else step)
            readable = anchor < np.inf and abs(anchor - moved) > anchor_rounding + rounding
            if readable and not candidate:
                rate = (moved / anchor) ** (1 / (step - anchor_step))
                if rate < 1 and moved <= tol and moved * rate <= tol * (1 - rate):
                    if exposed_from is not None:
                        candidate = anchor_step > exposed_from
                    elif confirm is None:
                        span, cut = 1, False
                        if moved > rounding and rate > 0:
                            needed = np.ceil(np.log(rounding / moved) / np.log(rate))
                            cut = needed > max_iter - 1 - step
                            span = max(int(min(needed, max_iter - 1 - step)), 1)
                        confirm = (step + span, step, moved, rate, cut)
            if candidate:
                if not affordable(step):
                    return theta, True
                first_check = check_at = step if checking else step + 1
            elif anchor == np.inf or readable:
                anchor, anchor_rounding, anchor_step = moved, rounding, step
        if step == check_at:
            # Rows of a subnormal s scaled by a power of 2, as the fold-in
            # does (exact, and leaves phi / s as it is).
            exponent = np.minimum(np.frexp(phi[used].max(axis=1))[1], 0)
            words = np.ldexp(phi[used], -exponent[:, None])
            scaled = words @ before
            second = (words.T * (counts / scaled ** 2)) @ words
            jacobian = (np.diag(sums) - before[:, None] * second) / (total + n_topics * prior)
            with np.errstate(all="ignore"):
                try:
                    delta = np.linalg.solve(np.eye(n_topics) - jacobian, theta - before)
                    left = np.max(np.abs(delta - (theta - before)))
                except np.linalg.LinAlgError:
                    left = np.inf
            if not np.isfinite(left) or (counts / scaled).max() > np.finfo(float).max:
                left = np.inf
            if left <= tol:
                return theta, True
            needed = step - first_check + 1
            if left < np.inf and (last_check is None or left < last_left):
                rate = left / (left + moved)
                if last_check is not None:
                    rate = max(rate, (left / last_left) ** (1 / (step - last_check)))
                if 0 < rate < 1:
                    needed = np.ceil(np.log(tol / 2 / left) / np.log(rate))
            last_check, last_left = step, left
            check_at = step + int(max(min(needed, max_iter - 1 - step), 1))
    return theta, False


@pytest.mark.parametrize("fold_in_tol, smoothing", [(1e-3, 0.0), (1e-4, 0.01), (1e-5, 0.5)])
def test_fold_in_stops_where_its_documented_rule_says(fold_in_tol, smoothing):
    # The tests above compare with a settled fold-in to 1e-6, which a step
    # more or less does not break at the default tolerance. At a loose one, a
    # step is about the tolerance, far above the rounding of two summation
    # orders: stopping on the sum of the moves instead of the largest, or
    # without the rate's factor, is a difference here.
    rng = np.random.default_rng(3)
    X = rng.poisson(rng.uniform(0.2, 3, size=30), size=(40, 30)).astype(float)
    model = PLSA(3, random_state=0, doc_topic_smoothing=smoothing, fold_in_tol=fold_in_tol,
                 fold_in_max_iter=10000).fit(X)
    theta = model.transform(X)
    phi = model.components_.T
    for d in range(X.shape[0]):
        expected, settled = _fold_in_reference(X[d], phi, smoothing, 10000, fold_in_tol)
        assert settled
        np.testing.assert_allclose(theta[d], expected, rtol=0, atol=1e-12)


def test_fold_in_with_zero_tolerance_stops_where_rounding_alone_moves_it():
    # With fold_in_tol=0 the rule for a move as small as rounding (then at
    # most 2**-40, not shrinking) was out of reach, inside "moved <= tol":
    # 13 of these 40 documents cycled by an ulp for all fold_in_max_iter
    # steps (10**5 and 10**6 alike), then warned to raise it (a review).
    # They go round cycles of 2 or 3 steps, which now stop them.
    rng = np.random.default_rng(3)
    X = rng.poisson(rng.uniform(0.2, 3, size=30), size=(40, 30)).astype(float)
    model = PLSA(3, random_state=0).fit(X)
    settled = model.set_params(fold_in_tol=1e-14, fold_in_max_iter=10**5).transform(X)
    model.set_params(fold_in_tol=0.0, fold_in_max_iter=10**5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        theta = model.transform(X)
    np.testing.assert_allclose(theta, settled, rtol=0, atol=1e-12)


def test_fold_in_with_zero_tolerance_runs_on_while_a_slow_step_is_above_rounding():
    """Two topics 1e-3 apart: EM's rate is 1 - 3.8e-6, and the maximum,
    inside, is theta_0 = 1/2 + (f - 1/2) / (2 e). Steps of 9e-13, real
    progress, read as growing through their rounding: taken as rounding's
    at fold_in_tol=0 (a step up to 2**-40), the document stopped 2.4e-7 from
    its maximum, reported settled (a review). At 0 a document now stops
    only where its rounded steps reach a fixed point or go round a cycle:
    2.1e-11 from the maximum."""
    e, f = 1e-3, 0.5 + 0.25e-3
    model = PLSA(2, random_state=0, max_iter=5, doc_topic_smoothing=0.0)
    quiet(model.fit, np.array([[3.0, 1.0], [1.0, 3.0]]))
    model.components_ = np.array([[0.5 + e, 0.5 - e], [0.5 - e, 0.5 + e]])
    model.set_params(fold_in_tol=0.0, fold_in_max_iter=10**7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        theta = model.transform(np.array([[f * 1000, (1 - f) * 1000]]))
    assert abs(theta[0, 0] - (0.5 + (f - 0.5) / (2 * e))) < 1e-9


def test_a_slow_fold_in_at_the_default_tolerance_stops_within_it_of_the_maximum():
    """The document above at the default fold_in_tol=1e-8. Its rate was read
    from the last two steps, which near steps of 1e-12, rounded by 1e-16 or
    so, is noise 100 times larger than the 3.8e-6 by which the steps
    shrink: it stopped 4.3e-7 from its maximum, reported settled. Read over
    as many steps as it takes the step to change by more than its rounding,
    the rate puts the stop 9.6e-9 from it (the rule is an estimate of the
    distance, hence the margin)."""
    e, f = 1e-3, 0.5 + 0.25e-3
    model = PLSA(2, random_state=0, max_iter=5, doc_topic_smoothing=0.0)
    quiet(model.fit, np.array([[3.0, 1.0], [1.0, 3.0]]))
    model.components_ = np.array([[0.5 + e, 0.5 - e], [0.5 - e, 0.5 + e]])
    model.set_params(fold_in_max_iter=10**7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        theta = model.transform(np.array([[f * 1000, (1 - f) * 1000]]))
    assert abs(theta[0, 0] - (0.5 + (f - 0.5) / (2 * e))) < 2e-8


def test_a_weight_tending_to_zero_settles_on_its_own_steps_rate(corpus):
    """Without smoothing, one of these documents has a weight tending to 0 at
    a rate of 1 - 4e-4 a step, 1e-21 after 10**5 steps, its steps exact to
    its own ulps. With the rounding judged in ulps of the largest weight,
    its steps of 1e-25 were taken for rounding and no rate was read: all
    fold_in_max_iter steps, then a warning (an earlier form of this rule,
    seen in the suite's warnings). Judged in ulps of the weight that moves,
    the rate shows and the document settles."""
    model = PLSA(4, topic_word_smoothing=0.0, doc_topic_smoothing=0.0, random_state=0,
                 fold_in_tol=1e-13, fold_in_max_iter=100000).fit(corpus)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        theta = model.transform(corpus)
    # Each stopped where one more EM step moves it by at most the tolerance.
    N = corpus.toarray()
    step = theta * ((N / (theta @ model.components_)) @ model.components_.T)
    step /= N.sum(axis=1, keepdims=True)
    assert np.abs(step - theta).max() <= 1e-13


def test_fold_in_at_zero_tolerance_settles_where_its_rounded_steps_cycle(data_dir):
    """Rounded, EM's steps end at a fixed point or go round a cycle. Among
    these 3,000 real documents, folded into 16 topics, one of 1,981 words
    goes round a cycle of 2 steps of 27 ulps, which the rule of 4 ulps
    (below a tol of 2**-40) never took as rounding's: all fold_in_max_iter
    steps, then a warning to raise it; 84 go round cycles (of 6 or 12 steps
    in those looked at) that comparing the weights with those of the last 2
    to 4 steps did not find. A checkpoint taken anew after 1, 2, 4, ...
    steps finds them all, and each document stops where one more step in
    extended precision moves it by a few ulps at most."""
    if not (data_dir / "20news-bydate").is_dir():
        pytest.skip(f"20 Newsgroups not found in {data_dir}")
    train = kgeo.datasets.load_20newsgroups(data_dir, subset="train")
    test = kgeo.datasets.load_20newsgroups(data_dir, subset="test")
    vectorizer = kgeo.text.RainbowVectorizer()
    X = vectorizer.fit_transform(train.data[:3000])
    Y = vectorizer.transform(test.data[:3000]).tocsr()
    model = quiet(PLSA(16, random_state=0, max_iter=50).fit, X)
    model.set_params(fold_in_tol=0.0, fold_in_max_iter=10**5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        theta = model.transform(Y)
    phi = model.components_.T.astype(np.longdouble)
    smoothing = model.doc_topic_smoothing
    for d in range(Y.shape[0]):
        n = Y[d].data.astype(np.longdouble)
        used = phi[Y[d].indices]
        current = theta[d].astype(np.longdouble)
        step = (current * ((n / (used @ current)) @ used) + smoothing) / (n.sum() + 16 * smoothing)
        assert np.abs(step - current).max() <= 64 * np.finfo(float).eps


# A review of the rule's first form (helper 147): a weight tending to 0 at
# tol=0, a slow document over many words, and a thread's checkpoint left by
# the document before.

def _model_with_topics(components, smoothing, **params):
    """A PLSA whose topics are ``components`` (K x V)."""
    K, V = components.shape
    model = PLSA(K, random_state=0, max_iter=1, doc_topic_smoothing=smoothing, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(sp.csr_matrix(np.ones((2, V))))
    model.components_ = np.ascontiguousarray(components, dtype=float)
    return model


def test_zero_tolerance_weight_tending_to_zero_runs_to_its_fixed_point():
    # Without smoothing, topic 0's weight shrinks geometrically (rate 5/9)
    # to 0. At fold_in_tol=0 the document stops only at a fixed point or a
    # cycle of its rounded steps: the weight reaches the smallest subnormal
    # (5e-324 * 5/9 rounds back to it). Topic 1's weight is 1.0 to the bit
    # from a weight of 1e-16 on: a cycle check that compared only some
    # weights took that for a fixed point, 1e-33 away.
    model = _model_with_topics(np.array([[0.5, 0.5], [0.9, 0.1]]), 0.0, fold_in_tol=0.0,
                               fold_in_max_iter=10**5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        theta = model.transform(np.array([[10.0, 0.0]]))
    assert theta[0, 0] < 1e-300 and theta[0, 1] == 1.0


@pytest.mark.parametrize("n_words", [100, 1000])
def test_slow_fold_in_spread_over_many_words_stops_within_tolerance(n_words):
    # The slow document of test_a_slow_fold_in_at_the_default_tolerance_stops_...
    # (two topics 1e-3 apart, rate 1 - 3.8e-6), its two words each split
    # into n_words words of the same P(w|z): the same maximum, but its sums
    # run over 2 n_words terms and round by more, which a rounding estimate
    # without its term for the words reads as a rate (1.9e-6 and 6.1e-6
    # from the maximum, as before this rule).
    e, f = 1e-3, 0.5 + 0.25e-3
    W = n_words
    components = np.hstack([np.tile([[0.5 + e], [0.5 - e]], (1, W)),
                            np.tile([[0.5 - e], [0.5 + e]], (1, W))]) / W
    model = _model_with_topics(components, 0.0, fold_in_max_iter=10**7)
    X = np.concatenate([np.full(W, f), np.full(W, 1 - f)])[None, :] * 1000 / W
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        theta = model.transform(X)
    assert abs(theta[0, 0] - (0.5 + (f - 0.5) / (2 * e))) < 2e-8


def test_duplicate_documents_in_a_batch_get_the_bits_they_get_alone():
    # A thread's scratch (and its checkpoint) is reused from one document
    # to the next: a checkpoint left by the previous document must never be
    # compared with the next one's weights. At loose tolerances, documents
    # stopping at their third step leave a checkpoint equal to a duplicate's
    # first-step weights.
    rng = np.random.default_rng(0)
    for _ in range(100):
        K, V = int(rng.integers(2, 5)), int(rng.integers(2, 8))
        components = rng.dirichlet(np.ones(V), size=K)
        x = rng.integers(0, 5, size=V).astype(float)
        if x.sum() == 0:
            continue
        tol = float(10 ** rng.uniform(-4, -1))
        model = _model_with_topics(components, 0.01, fold_in_tol=tol, fold_in_max_iter=1000,
                                   n_jobs=1)
        alone = model.transform(x[None, :])
        batch = model.transform(np.vstack([x, x, x]))
        assert np.array_equal(batch, np.vstack([alone] * 3))


def test_fisher_scores_store_no_zeros():
    # The scores of a word the model gives probability 0 (no word smoothing,
    # absent from the fit) are 0, and are not stored: the class docstring
    # counts nonzero scores.
    embedding = PLSAFisherEmbedding(2, topic_word_smoothing=0.0, doc_topic_smoothing=0.3,
                                    random_state=0).fit(SEPARATE[:2])  # words 2, 3 unseen
    scores = embedding.transform(np.array([[1.0, 0, 0, 3]]))
    assert np.all(scores.data != 0)
    assert scores.nnz == 2 + 2  # the topic scores, and word 0's
    assert scores.has_canonical_format


def test_embedding_passes_verbose_to_its_models(capsys):
    embedding = PLSAFisherEmbedding((2, 3), verbose=2, max_iter=4, tol=0, random_state=0)
    quiet(embedding.fit, SEPARATE)
    assert [model.verbose for model in embedding.models_] == [2, 2]
    assert capsys.readouterr().out.splitlines() == [
        f"PLSA step {s}: objective {model.objective_curve_[s]:.10g}"
        for model in embedding.models_ for s in range(0, model.n_iter_ + 1, 2)]


def test_weights_below_one_are_not_taken_for_unseen_words():
    # X may hold any non-negative weights (TF shares, TF-IDF): a rare word of
    # total weight 0.05 was seen; only a total of 0 is unseen.
    rng = np.random.default_rng(0)
    X = rng.uniform(0.01, 0.3, size=(20, 6))
    X[:, 4:] = 0.0
    X[3, 5] = 0.05
    with pytest.warns(UserWarning, match=r"1 of the 6 words .* \(columns 4\)"):
        PLSAFisherEmbedding(2, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        PLSAFisherEmbedding(2, random_state=0).fit(np.delete(X, 4, axis=1))


def test_transform_refuses_parameters_set_wrong_after_fit():
    # transform reads topic_scores and the fold-in settings again, so it
    # checks them again: "Exact" gave the approximate scores silently.
    embedding = PLSAFisherEmbedding(2, random_state=0).fit(SEPARATE)
    embedding.set_params(topic_scores="Exact")
    with pytest.raises(ValueError, match="topic_scores must be 'approximate' or 'exact'"):
        embedding.transform(SEPARATE)
    embedding.set_params(topic_scores="exact", fold_in_tol=-1.0)
    with pytest.raises(ValueError, match="fold_in_tol must be finite and >= 0"):
        embedding.transform(SEPARATE)


def test_a_checkpoint_is_not_compared_at_a_documents_first_step():
    # Document 0 reaches a fixed point at its second step, leaving its
    # first-step weights (3/4, 1/4) as the thread's checkpoint; document 1's
    # first step from the uniform start is (3/4, 1/4) too. Compared there,
    # it stopped at (3/4, 1/4) reported settled (a review's mutant), where
    # its maximum is (1, 0): its words give 2 log(theta_0 / 2) + 2 log(1/2).
    components = np.array([[0.5, 0.0, 0.5], [0.0, 0.5, 0.5]])
    model = _model_with_topics(components, 0.0, n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        theta = model.transform(np.array([[3.0, 1.0, 0.0], [2.0, 0.0, 2.0]]))
    assert theta[0, 0] == 0.75  # the first document's fixed point
    assert theta[1, 0] > 1 - 1e-7


def _two_topic_maximum(counts, components, smoothing):
    """The maximum over theta_0 of sum_w n_w log(theta_0 phi_0(w) + (1 -
    theta_0) phi_1(w)) + smoothing log theta_0 (1 - theta_0), by bisection
    on its derivative (decreasing: the objective is concave). Each word's
    pair of probabilities is divided by its larger one, which leaves the
    derivative unchanged and keeps subnormal probabilities out of it."""
    used = counts > 0
    n, phi = counts[used], components[:, used]
    phi = phi / phi.max(axis=0)
    low, high = 0.0, 1.0
    for _ in range(200):
        theta = (low + high) / 2
        slope = np.sum(n * (phi[0] - phi[1]) / (theta * phi[0] + (1 - theta) * phi[1]))
        slope += smoothing * (1 / theta - 1 / (1 - theta))
        low, high = (theta, high) if slope > 0 else (low, theta)
    return (low + high) / 2


def test_subnormal_word_probabilities_fold_in_to_their_maximum():
    # A model fitted on a column of counts 1e-309 gives that word P(w|z) of
    # about 5e-311 in each topic. A document using it divided its count by a
    # subnormal s: n / s overflowed, the weights went to inf and then NaN,
    # and the NaN weights, moving by NaN, which no comparison counts, read as
    # a fixed point: NaN returned, reported settled (a review).
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(20, 6)).astype(float)
    X[:, 5] = 1e-309 * (rng.random(20) < 0.5)
    X[0, 5] = 1e-309
    model = quiet(PLSA(2, random_state=0, topic_word_smoothing=0.0).fit, X)
    assert 0 < model.components_[:, 5].max() < np.finfo(float).tiny
    document = np.array([1.0, 0.0, 2.0, 0.0, 1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        theta = model.transform(document[None, :])[0]
    expected = _two_topic_maximum(document, model.components_, model.doc_topic_smoothing)
    assert abs(theta[0] - expected) < 2e-8


def test_random_subnormal_word_probabilities_give_finite_weights():
    # 500 small problems whose P(w|z) are often subnormal or 0, without
    # smoothing: 80 of the 489 with words gave inf or NaN weights before n / s
    # was kept from overflowing, and then 39 of 3,000 weights summing to 1
    # only within 1e-6 (a review), before each such word's P(w|z) was scaled
    # by a power of 2.
    rng = np.random.default_rng(1)
    for _ in range(500):
        K, V = int(rng.integers(2, 5)), int(rng.integers(2, 6))
        components = rng.random((K, V)) ** rng.integers(1, 4)
        tiny = rng.random((K, V)) < 0.4
        components[tiny] = 10.0 ** -rng.uniform(300, 323, size=int(tiny.sum()))
        components[rng.random((K, V)) < 0.2] = 0.0
        x = rng.integers(0, 4, size=V).astype(float)
        if x.sum() == 0:
            continue
        model = _model_with_topics(components, 0.0, n_jobs=1)
        theta = quiet(model.transform, x[None, :])
        assert np.all(np.isfinite(theta)) and np.all(theta >= 0), (components, x)
        assert abs(theta.sum() - 1) < 1e-12, (components, x)


def test_a_document_whose_steps_overflow_is_refused_by_row(monkeypatch):
    # The compiled fold-in marks a document whose weights became inf or NaN
    # (no known input reaches it since n / s was kept finite): Python must
    # refuse the result by row, not return NaN weights.
    from kgeo import _plsa_em

    compiled = _plsa_em.fold_in

    def overflowing(*args):
        compiled(*args)
        args[8][1] = _plsa_em.OVERFLOWED  # `settled` of the second document

    monkeypatch.setattr(_plsa_em, "fold_in", overflowing)
    model = _model_with_topics(np.array([[0.5, 0.5], [0.9, 0.1]]), 0.01)
    with pytest.raises(ValueError, match=r"1 of 3 documents could not be folded in, first "
                                         r"row 1: .*down to 0\.1.*2\.2e-308"):
        model.transform(np.array([[1.0, 2.0], [3.0, 1.0], [0.0, 1.0]]))


def test_a_subnormal_word_folds_in_as_the_same_word_scaled_by_a_power_of_2():
    # A word's P(w|z) of 4e-321 and 1e-321: s = sum_k theta_k P(w|z_k) was
    # rounded to an absolute 5e-324, 1e-3 of it, and the weights summed to
    # 1 - 1.8e-4 (a review). Scaling one word's P(w|z) by any factor leaves
    # the maximum where it is; by a power of 2 it is exact, and each step
    # the same bits, once the subnormal word is scaled as the fold-in does.
    components = np.array([[0.6, 0.4 - 4e-321, 4e-321], [0.3, 0.7 - 1e-321, 1e-321]])
    scaled = components.copy()
    scaled[:, 2] = np.ldexp(scaled[:, 2], 1070)
    X = np.array([[2.0, 1.0, 3.0]])
    for tol in (1e-8, 0.0):
        theta = _model_with_topics(components, 0.01, fold_in_tol=tol).transform(X)
        expected = _model_with_topics(scaled, 0.01, fold_in_tol=tol).transform(X)
        np.testing.assert_array_equal(theta, expected)
        assert abs(theta.sum() - 1) < 1e-15


def _three_topics_two_nearly_equal(gap, smoothing, **params):
    """Topics 0 and 1 ``gap`` apart over words 0 and 1, topic 2 mostly on
    word 2, and a document of counts (340 f, 340 (1 - f), 660), f = 1/2 +
    gap / 4: the two near topics make a slow direction, the third a fast
    one (a review's)."""
    g = 0.3
    components = np.array([[(0.5 + gap) * (1 - g), (0.5 - gap) * (1 - g), g],
                           [(0.5 - gap) * (1 - g), (0.5 + gap) * (1 - g), g],
                           [0.05, 0.05, 0.9]])
    f = 0.5 + 0.25 * gap
    return (_model_with_topics(components, smoothing, **params),
            np.array([[f * 340, (1 - f) * 340, 660.0]]))


@pytest.mark.parametrize("gap, tol", [(1e-4, 1e-8), (1e-2, 1e-4)])
def test_a_slow_direction_under_a_faster_one_is_followed_to_its_maximum(gap, tol):
    # The rate read is the largest step's, the fast direction's: the distance
    # it left seemed within tol while the slow direction had far to go. These
    # stopped 2.8e-5 and 0.049 from their maximum, reported settled; run on
    # to rounding (the rule before Newton's estimate), 1.02e-8 and 1.0e-4.
    model, X = _three_topics_two_nearly_equal(gap, 0.01, fold_in_max_iter=10**6)
    exact = model.set_params(fold_in_tol=0.0).transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kgeo.ConvergenceWarning)
        theta = model.set_params(fold_in_tol=tol).transform(X)
    assert np.abs(theta - exact).max() <= tol


def test_a_slow_direction_too_slow_to_settle_is_reported():
    # With smoothing 1e-4 the slow direction barely moves (10**7 steps do
    # not settle it): the document had stopped at its 35th step, 2.7e-3 from
    # its maximum, reported settled. It now warns.
    model, X = _three_topics_two_nearly_equal(1e-4, 1e-4)
    with pytest.warns(kgeo.ConvergenceWarning, match="fold_in_max_iter=10000"):
        model.transform(X)


def test_slow_directions_that_fold_in_max_iter_cannot_follow_are_reported():
    # Four topics, three of them nearly equal (0 and 1 1.6e-3 apart, 1 and 2
    # 7.4e-5), smoothing 1e-4 (a review's search). At 1e-4 the rate first put
    # the step within tol at step 6, 5.7e-5 at 0.6 a step; a confirmation of
    # that rate capped at as many steps again then ended at 1.6e-6, where it
    # "showed no slower direction": settled, 0.109 from the maximum. The
    # slow directions take more than fold_in_max_iter steps: a warning.
    components = np.array([
        [0.05443905625298032, 0.03910490374118679, 0.5336649395375744,
         0.08217518999457063, 0.22778987307133597, 0.0628260374023519],
        [0.054433506207025084, 0.03911413213775395, 0.5336307074204191,
         0.08231636514508694, 0.22771416378038026, 0.06279112530933482],
        [0.054436139798302266, 0.039113790270031534, 0.5336266532109822,
         0.08231645892222772, 0.22771006090343235, 0.06279689689502399],
        [0.060787650016995855, 0.4158627942095086, 0.1633595687411677,
         0.2830753040032059, 0.00864102835356095, 0.06827365467556114]])
    model = _model_with_topics(components, 1e-4, fold_in_tol=1e-4)
    with pytest.warns(kgeo.ConvergenceWarning, match="fold_in_max_iter=10000"):
        model.transform(np.array([[1.0, 10.0, 6.0, 27.0, 51.0, 12.0]]))


def test_a_fold_in_cut_short_by_fold_in_max_iter_is_reported():
    """Five topics, three nearly equal (a review's search, smoothing 1e-4):
    at fold_in_tol=1e-4 and fold_in_max_iter=200, the rule before Newton's
    estimate confirmed the rate of the largest step by running on toward
    rounding; cut short by the last step, it settled the document 0.145
    from its maximum. The estimate sees the slow directions, still far from
    done after 200 steps (or 10,000): a warning."""
    components = np.array([
        [0.348425090883046, 0.05123627271924535, 0.12484078860095203, 0.06477059690135557,
         0.23969205936159327, 0.14469965793253592, 0.026335533601271957],
        [0.3479937043089113, 0.05149052601791904, 0.12489853518097575, 0.06489313536116845,
         0.23961662186140667, 0.1448678303850006, 0.026239646884618075],
        [0.3479905785727445, 0.051491072823129994, 0.12489818174777026, 0.0648928898259237,
         0.23961936167392398, 0.1448681602944095, 0.02623975506209822],
        [0.06617688164762775, 0.3671321611729002, 0.08178501417682081, 0.02576422778693273,
         0.04267950781989429, 0.3340252834529134, 0.08243692394291098],
        [0.03064728362402293, 0.17925582548758037, 0.08384601075890562, 0.017364854397365282,
         0.18219054129086185, 0.28597013372725755, 0.22072535071400626]])
    document = np.array([[46.0, 27.0, 7.0, 26.0, 4.0, 46.0, 54.0]])
    for max_iter in (200, 10000):
        model = _model_with_topics(components, 1e-4, fold_in_tol=1e-4,
                                   fold_in_max_iter=max_iter)
        with pytest.warns(kgeo.ConvergenceWarning, match=f"fold_in_max_iter={max_iter}"):
            model.transform(document)


def test_fold_in_with_identical_topics_settles_without_a_warning():
    """Two identical topics make I - J singular (a direction EM never
    moves along, its rate exactly 1): Newton's estimate has no solution
    there. The document still settles (its rounded steps reach a fixed
    point or a cycle), the two weights equal from the uniform start, and
    their sum is the maximum of the model with the topic once."""
    rng = np.random.default_rng(5)
    topics = rng.dirichlet(np.ones(12), size=3)
    twice = np.vstack([topics[0], topics[0], topics[1], topics[2]])
    documents = rng.poisson(rng.uniform(0.5, 4, size=12), size=(6, 12)).astype(float)
    for smoothing in (0.0, 0.01):
        with warnings.catch_warnings():
            warnings.simplefilter("error", kgeo.ConvergenceWarning)
            theta = _model_with_topics(twice, smoothing).transform(documents)
            once = _model_with_topics(topics, 0.0, fold_in_tol=0.0).transform(documents)
        np.testing.assert_array_equal(theta[:, 0], theta[:, 1])
        if smoothing == 0.0:
            np.testing.assert_allclose(theta[:, 0] + theta[:, 1], once[:, 0], rtol=0, atol=1e-8)
            np.testing.assert_allclose(theta[:, 2:], once[:, 1:], rtol=0, atol=1e-8)


@pytest.mark.parametrize("fold_in_tol", [1e-3, 1e-5])
def test_fold_in_of_many_topics_stops_where_its_documented_rule_says(fold_in_tol):
    # Ten topics: the check's 10 x 10 solve, against NumPy's LAPACK one, and
    # every document within the tolerance of its maximum (the fold-in at 0).
    rng = np.random.default_rng(11)
    X = rng.poisson(rng.uniform(0.1, 2, size=60), size=(30, 60)).astype(float)
    model = PLSA(10, random_state=0, fold_in_tol=fold_in_tol, max_iter=200)
    quiet(model.fit, X)
    theta = model.transform(X)
    exact = model.set_params(fold_in_tol=0.0, fold_in_max_iter=10**6).transform(X)
    phi = model.components_.T
    for d in range(X.shape[0]):
        expected, settled = _fold_in_reference(X[d], phi, model.doc_topic_smoothing, 10000,
                                               fold_in_tol)
        assert settled
        np.testing.assert_allclose(theta[d], expected, rtol=0, atol=1e-12)
    assert np.abs(theta - exact).max() <= fold_in_tol


def test_a_slow_direction_the_rule_has_not_exposed_fails_the_check():
    """Four topics, two of them 3.1e-5 apart, and a document whose counts
    are exactly a mixture of them (so its maximum, without smoothing, is
    that mixture, to about 1e-7 here: the direction is that flat). The
    rate's rule, its confirmation passed, settled it 2.9e-3 from the
    maximum at the default tolerance and at every one from 1e-3 to 1e-10
    (a review, helper 154). Newton's check sees the slow direction: the
    document runs on, and warns where it cannot get there."""
    components = np.array([
        [0.004588210368123936, 0.025392287306439314, 0.022554764845365383,
         0.08433530199927863, 0.0944480121955984, 0.02495548103219319,
         0.07307960842861155, 0.019179636614425233, 0.009268598729946948,
         0.018408049058653602, 0.0052322589828219, 0.036419918366355296,
         0.005452651984287904, 0.0011172497889118571, 0.14098618592155424,
         0.02256351435202307, 0.04427920262345905, 0.10276056728705517,
         0.011776083854285205, 0.004378377633224612, 0.026005550619530523,
         0.11749527023335098, 0.010547365655099252, 0.0947758521194047],
        [0.00458824130456082, 0.025391674510874748, 0.02255522942207389,
         0.08433794473605204, 0.09444684615727633, 0.02495546646868382,
         0.07308096509690891, 0.019179204766995937, 0.009268322764489566,
         0.01840768299763289, 0.00523220943254902, 0.036419567552108956,
         0.005452691730950408, 0.0011172525310809047, 0.14098348462311794,
         0.022563665957706345, 0.044280325829597844, 0.10276218112949706,
         0.011776234186594198, 0.00437837286155134, 0.02600587982931943,
         0.11749348841139078, 0.010547464163660387, 0.09477560353532631],
        [0.045090679020437674, 0.14789540706762358, 0.16145503646609746,
         0.010239594534922573, 0.02683789022977044, 0.0034940998870025526,
         0.051780547809004145, 0.11382705796839085, 0.004895322190443963,
         0.0036469153637764175, 0.00850390717637916, 0.032858643517573845,
         0.04162641474021764, 0.037255429160307975, 0.03487215101661988,
         0.06392973957639009, 0.026017111100367096, 0.04259303705575149,
         0.06720680783017956, 0.008854103492839405, 0.05603049631578404,
         0.0039005715077864898, 0.00347608695724153, 0.003712950015092102],
        [0.0580434643336561, 0.005411879189720079, 0.041099776270444345,
         0.01211841750499197, 0.05261369344453499, 0.021966747000140167,
         0.006649695476176124, 0.012460750580549199, 0.024926746176423008,
         0.013029037043345898, 0.03719004847092419, 0.06099957242695226,
         0.03122595930911532, 0.15158545032005974, 0.08456251061448097,
         0.1173022042401776, 0.04655003490164058, 0.018414104752921188,
         0.057110856928384954, 0.030233490070277914, 0.025046466589590876,
         0.004967505880289734, 0.06506265511969107, 0.02142893335551178]])
    mixture = np.array([0.050703470369764705, 0.05654991948874417, 0.3534405219523213,
                        0.5393060881891697])
    document = (mixture @ components)[None, :]
    model = _model_with_topics(components, 0.0)
    for tol in (1e-6, 1e-8):
        model.set_params(fold_in_tol=tol)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            theta = model.transform(document)
        if not any(issubclass(w.category, kgeo.ConvergenceWarning) for w in caught):
            assert np.abs(theta[0] - mixture).max() <= 1e-6


@pytest.mark.parametrize("n_topics", [40, 300])
def test_fold_in_where_a_check_costs_more_than_the_steps_taken(n_topics):
    # A check costs words K (K + 1) / 2 + K**3 / 3 operations, a step 2 K
    # per word: with 300 topics and documents of a few words, no check is
    # affordable and the rate's rule alone stops a document (1,000 topics on
    # 10-word documents had taken 17 times the time of their steps: a
    # review); with 40, a check is affordable after some steps. Both stop
    # where the NumPy reference, which counts the same costs, says.
    rng = np.random.default_rng(2)
    components = rng.dirichlet(np.full(60, 0.1), size=n_topics)
    X = rng.poisson(0.08, size=(12, 60)).astype(float)
    X[X.sum(axis=1) == 0, 0] = 1.0
    model = _model_with_topics(components, 0.01, fold_in_tol=1e-6)
    theta = model.transform(X)
    for d in range(X.shape[0]):
        expected, settled = _fold_in_reference(X[d], components.T, 0.01, 10000, 1e-6)
        assert settled
        np.testing.assert_allclose(theta[d], expected, rtol=0, atol=1e-12)


def test_a_word_of_tiny_probability_leaves_the_check_finite():
    """A word whose P(w | z) is about 1e-160 under every topic (a normal
    float, s = sum_k theta_k P(w | z_k) too): the check's sums n phi_k
    phi_l / s^2, taken as (n / s) / s, overflowed, and every check of the
    document failed: it warned where the rate's rule settles it within tol
    (a review's case, helper 155). The same document with that word's
    P(w | z) scaled up by 2**500 (which leaves the maximum where it is, and
    every step's bits) settles at the same step."""
    rng = np.random.default_rng(0)
    n_topics, n_words = 4, 15
    phi = rng.dirichlet(np.ones(n_words), size=n_topics).T
    shift = rng.normal(size=n_words)
    shift -= shift.mean()
    shift *= 10 ** rng.uniform(-3, -1.5) / np.abs(shift).max()
    phi[:, 1] = phi[:, 0] * (1 + shift)  # topics 0 and 1 close: a slow direction
    phi[:, 1] /= phi[:, 1].sum()
    document = rng.integers(1, 30, n_words).astype(float)[None, :]
    document[0, 0] = 1
    rng.uniform(0.5, 1.5, n_topics)
    phi[0, :] = 1e-160 * rng.uniform(0.5, 1.5, n_topics)
    phi /= phi.sum(axis=0)
    scaled = phi.T.copy()
    scaled[:, 0] = np.ldexp(scaled[:, 0], 500)
    for tol in (1e-6, 1e-8):
        with warnings.catch_warnings():
            warnings.simplefilter("error", kgeo.ConvergenceWarning)
            theta = _model_with_topics(phi.T, 0.01, fold_in_tol=tol).transform(document)
            expected = _model_with_topics(scaled, 0.01, fold_in_tol=tol).transform(document)
        np.testing.assert_allclose(theta, expected, rtol=0, atol=1e-12)


# --- subnormal counts (a review: EM on them lost their bits) -----------------

# Counts below 2**-1020 are subnormal; a power of 2 keeps every ratio exact.
_SUBNORMAL = 2.0 ** -1060


def test_subnormal_counts_fit_as_the_same_counts_scaled(corpus):
    """BUG FIX: without smoothing EM reads only the counts' ratios, but on
    subnormal counts it stopped after 3 steps, with rows of P(z | d) summing
    to 0.85. They are now scaled up by a power of 2, as counts above 1 are
    scaled down: the same steps, bit for bit, as the unscaled counts."""
    params = dict(topic_word_smoothing=0, doc_topic_smoothing=0, random_state=0, max_iter=60)
    model = quiet(PLSA(3, **params).fit, corpus)
    tiny = quiet(PLSA(3, **params).fit, corpus * _SUBNORMAL)
    assert tiny.n_iter_ == model.n_iter_
    np.testing.assert_array_equal(tiny.components_, model.components_)
    np.testing.assert_array_equal(tiny.doc_topic_, model.doc_topic_)
    np.testing.assert_allclose(tiny.topic_probability_, model.topic_probability_, rtol=1e-14)
    # The objective stays in the counts' own (subnormal) units.
    assert 0 > tiny.log_likelihood_ > -1e-300


def test_subnormal_documents_fold_in_as_the_same_documents_scaled(corpus):
    """transform and the Fisher scores of subnormal documents: before, rows
    of P(z | d) summed to 0.88-1.15 and scores were 0.33 off."""
    model = PLSA(3, topic_word_smoothing=0, doc_topic_smoothing=0, random_state=0,
                 max_iter=30)
    quiet(model.fit, corpus)
    np.testing.assert_array_equal(model.transform(corpus * _SUBNORMAL), model.transform(corpus))
    embedding = quiet(PLSAFisherEmbedding((3,), topic_word_smoothing=0, doc_topic_smoothing=0,
                                          random_state=0, max_iter=30).fit, corpus)
    scores = embedding.transform(corpus[:8])
    np.testing.assert_allclose(embedding.transform(corpus[:8] * _SUBNORMAL).toarray(),
                               scores.toarray(), rtol=1e-14, atol=1e-15)


def test_subnormal_documents_beside_a_smoothing_fold_in_to_its_mode(corpus):
    """With smoothing, counts 2**-1060 add nothing beside it: a document
    folds in to the prior's mode (uniform); scaled up as far as the
    smoothing allows, its rows still sum to 1 and hold no NaN."""
    model = quiet(PLSA(3, random_state=0, max_iter=30).fit, corpus)
    theta = model.transform(corpus[:10] * _SUBNORMAL)
    np.testing.assert_allclose(theta, 1 / 3, rtol=1e-14)
    tiny = quiet(PLSA(3, random_state=0, max_iter=30).fit, corpus * _SUBNORMAL)
    assert np.all(np.isfinite(tiny.components_)) and np.all(np.isfinite(tiny.doc_topic_))
    np.testing.assert_allclose(tiny.doc_topic_.sum(axis=1), 1, rtol=1e-14)
    np.testing.assert_allclose(tiny.components_.sum(axis=1), 1, rtol=1e-14)


# --- from a review of 3e822ed (helper 170): the scale-up of subnormal counts

def _poisson_counts():
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(20, 30)).astype(float)
    X[:, 0] += 1
    return X


@pytest.mark.parametrize("word, doc", [(0.0, 1.0), (1.0, 0.0)])
def test_subnormal_counts_scale_up_no_further_than_either_smoothing_allows(word, doc):
    # P1/P2: the cap is the larger smoothing's; the other one at 0 must not
    # let the larger one over the scale overflow.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = kgeo.PLSA(3, topic_word_smoothing=word, doc_topic_smoothing=doc, random_state=0,
                          max_iter=30).fit(_poisson_counts() * _SUBNORMAL)
    assert np.all(np.isfinite(model.components_)) and np.all(np.isfinite(model.doc_topic_))
    np.testing.assert_allclose(model.doc_topic_.sum(axis=1), 1, rtol=1e-14)
    np.testing.assert_allclose(model.components_.sum(axis=1), 1, rtol=1e-14)


def test_subnormal_counts_beside_a_huge_smoothing_are_not_scaled_down():
    # C3: count_scale never exceeds 1 for subnormal counts: divided by a
    # power above 1 they would round to 0.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = kgeo.PLSA(3, topic_word_smoothing=0.0, doc_topic_smoothing=1e280, random_state=0,
                          max_iter=30).fit(_poisson_counts() * _SUBNORMAL)
    assert model.log_likelihood_ < 0
    assert np.all(np.isfinite(model.topic_probability_))


def test_subnormal_counts_converge_as_the_same_counts_scaled_at_a_small_tol():
    # P4: the stopping rule is applied in the scaled units; in the counts' own
    # (subnormal) units the objective's gains round to multiples of 5e-324
    # and a fit at a small tol stopped as soon as one rounded to 0.
    params = dict(topic_word_smoothing=0, doc_topic_smoothing=0, random_state=0, tol=1e-10,
                  max_iter=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = kgeo.PLSA(3, **params).fit(_poisson_counts())
        tiny = kgeo.PLSA(3, **params).fit(_poisson_counts() * _SUBNORMAL)
    assert model.n_iter_ < 2000
    assert tiny.n_iter_ == model.n_iter_
    np.testing.assert_array_equal(tiny.components_, model.components_)


def test_count_scale_at_its_boundaries():
    # C1/C3: normal counts up to 1 are used as given; a subnormal largest is
    # brought to [1, 2), capped by the smoothing, and never scaled down.
    from kgeo._plsa_em import count_scale

    tiny = np.finfo(np.float64).tiny
    assert count_scale(tiny, 0.0) == 1.0
    assert count_scale(1.0, 0.0) == 1.0
    assert count_scale(2.0, 0.0) == 2.0
    assert count_scale(np.nextafter(tiny, 0), 0.0) == 2.0 ** -1023
    assert count_scale(5e-324, 0.0) == 5e-324
    assert count_scale(5e-324, 5e-324) == 5e-324
    assert count_scale(5e-324, 1.0) == 2.0 ** -899
    assert count_scale(5e-324, 1e300) == 1.0


def test_topic_probability_sums_to_one_where_the_smoothing_caps_the_scale():
    """BUG FIX (review 170): with doc_topic_smoothing=1e300 the counts stay
    subnormal after their capped scale-up, and P(z) summed their lengths
    with lost bits (to 1.02); every document's P(z | d) is then the prior's
    uniform mode, and so is P(z)."""
    X = np.random.default_rng(0).integers(0, 3, (6, 8)).astype(float)
    X[:, 0] += 1
    model = quiet(PLSA(3, random_state=0, topic_word_smoothing=0,
                       doc_topic_smoothing=1e300).fit, X * 5e-324)
    np.testing.assert_allclose(model.topic_probability_, 1 / 3, rtol=1e-14)
