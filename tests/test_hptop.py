"""The HP-TOP kernel: its scores against finite differences of the posterior
log-odds written in the paper's parameters, its kernel against the paper's
factorised form, its Gaussians against their definition."""

import math
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import kgeo
from kgeo import HPTOPEmbedding
from kgeo._hptop import hp_top_scores
from kgeo._synthetic import make_topic_corpus


def log_odds(d, w, b, theta1, theta2, prior, target):
    """v(d) from the paper's eq. 33 (with b), in its own parameters."""
    t = w @ d - b
    log_q = theta1 * t + theta2 * t ** 2 + theta1 ** 2 / (4 * theta2) - 0.5 * np.log(-np.pi / theta2)
    others = [x for x in range(len(b)) if x != target]
    return np.log(prior[target]) + log_q[target] - np.log(np.sum(prior[others] * np.exp(log_q[others])))


@pytest.fixture
def documents(rng):
    return sp.csr_matrix(rng.random((6, 5)) * (rng.random((6, 5)) < 0.7))


@pytest.mark.parametrize("target", [0, 2])
def test_scores_are_gradients_of_the_log_odds(documents, rng, target):
    n_categories, n_features = 4, documents.shape[1]
    w = rng.normal(size=(n_categories, n_features))
    b = rng.normal(size=n_categories)
    mean = rng.normal(size=n_categories)
    variance = rng.uniform(0.5, 2.0, size=n_categories)
    theta1, theta2 = mean / variance, -1 / (2 * variance)
    prior = np.full(n_categories, 1 / n_categories)
    decision = documents @ w.T - b
    scores = hp_top_scores(documents, decision, mean, variance, target,
                           prior_scores=True).toarray()
    others = [x for x in range(n_categories) if x != target]
    n_scalars = 1 + 3 + 3 * len(others) + 1 + len(others)
    assert scores.shape == (documents.shape[0], n_scalars + n_categories * n_features)

    def numeric(d, array, index, h=1e-6):
        def at(step):
            params = {"w": w, "b": b, "theta1": theta1, "theta2": theta2, "prior": prior}
            moved = params[array].copy()
            moved[index] += step
            params[array] = moved
            return log_odds(d, target=target, **params)
        return (at(h) - at(-h)) / (2 * h)

    for i in range(documents.shape[0]):
        d = documents[i].toarray().ravel()
        row = scores[i]
        np.testing.assert_allclose(row[0], log_odds(d, w, b, theta1, theta2, prior, target),
                                   rtol=1e-12)
        expected = [numeric(d, "theta1", target), numeric(d, "theta2", target),
                    numeric(d, "b", target)]
        for e in others:
            expected += [numeric(d, "theta1", e), numeric(d, "theta2", e), numeric(d, "b", e)]
        expected += [numeric(d, "prior", target)] + [numeric(d, "prior", e) for e in others]
        np.testing.assert_allclose(row[1:n_scalars], expected, rtol=1e-6, atol=1e-8)
        for block, x in enumerate([target] + others):
            expected_w = [numeric(d, "w", (x, j)) for j in range(n_features)]
            start = n_scalars + block * n_features
            np.testing.assert_allclose(row[start:start + n_features], expected_w,
                                       rtol=1e-6, atol=1e-8)


def test_kernel_is_the_papers_factorised_form(documents, rng):
    """K(d, d') = sum_s s(d) s(d') + (g_c g_c' + sum_e a_e a_e') <d, d'> (eqs. 44-45)."""
    n_categories, target = 3, 1
    decision = rng.normal(size=(documents.shape[0], n_categories))
    mean, variance = rng.normal(size=n_categories), rng.uniform(0.5, 2, size=n_categories)
    scores = hp_top_scores(documents, decision, mean, variance, target)
    n_scalars = 4 + 3 * (n_categories - 1)
    scalars = scores[:, :n_scalars].toarray()
    others = [0, 2]
    centred = decision - mean
    log_q = -0.5 * np.log(2 * np.pi * variance) - centred ** 2 / (2 * variance)
    share = np.exp(log_q[:, others]) / np.exp(log_q[:, others]).sum(axis=1, keepdims=True)
    g = (mean[target] - decision[:, target]) / variance[target]
    a = -share * (mean[others] - decision[:, others]) / variance[others]
    factor = np.outer(g, g) + a @ a.T
    expected = scalars @ scalars.T + factor * (documents @ documents.T).toarray()
    np.testing.assert_allclose((scores @ scores.T).toarray(), expected, rtol=1e-12)


def test_far_documents_keep_finite_scores(documents):
    """q underflows to 0 far from every mean; the log domain keeps pi and v."""
    decision = np.array([[0.0, 60.0, -70.0]] * documents.shape[0])
    scores = hp_top_scores(documents, decision, np.zeros(3), np.full(3, 0.01), 0)
    assert np.all(np.isfinite(scores.data))


@pytest.fixture
def categories():
    X, y = make_topic_corpus(240, 300, 4, words_per_document=40, topic_weight=0.3,
                             random_state=2)
    return kgeo.MultinomialEmbedding("tf", "l2").fit_transform(X), y


def test_gaussians_are_fitted_to_each_categorys_decision_values(categories):
    X, y = categories
    embedding = HPTOPEmbedding(target=1).fit(X, y)
    np.testing.assert_array_equal(embedding.classes_, [0, 1, 2, 3])
    for x, hyperplane in enumerate(embedding.hyperplanes_):
        alone = kgeo.SVM(kernel="linear").fit(X, y == x)
        values = alone.decision_function(X)
        np.testing.assert_array_equal(hyperplane.decision_function(X), values)
        np.testing.assert_allclose(embedding.mean_[x], values[y == x].mean(), rtol=1e-12)
        np.testing.assert_allclose(embedding.variance_[x], values[y == x].var(), rtol=1e-12)
        assert embedding.mean_[x] > 0  # a category's own documents sit on its positive side


def test_transform_is_hp_top_scores_of_the_decision_values(categories):
    X, y = categories
    embedding = HPTOPEmbedding(target=2).fit(X[:200], y[:200])
    decision = np.column_stack([h.decision_function(X[200:]) for h in embedding.hyperplanes_])
    expected = hp_top_scores(X[200:], decision, embedding.mean_, embedding.variance_, 2)
    assert (embedding.transform(X[200:]) != expected).nnz == 0


def test_indicator_matrix_and_labels_give_the_same_scores(categories):
    X, y = categories
    Y = (y[:, None] == np.arange(4)).astype(np.int8)
    by_labels = HPTOPEmbedding(target=3).fit_transform(X, y)
    by_indicator = HPTOPEmbedding(target=3).fit_transform(X, sp.csr_matrix(Y))
    assert (by_labels != by_indicator).nnz == 0
    # 0/1 held as objects (a data frame's values, say) is an indicator too:
    # it was refused as holding values other than 0 and 1.
    by_objects = HPTOPEmbedding(target=3).fit_transform(X, Y.astype(object))
    assert (by_labels != by_objects).nnz == 0


def test_a_target_that_is_not_one_category_and_a_ragged_y_are_refused(categories):
    # NumPy's own errors came through: "the truth value of an array is
    # ambiguous" for target=np.array([0, 1]), "inhomogeneous shape" for y.
    X, y = categories
    with pytest.raises(TypeError, match=r"target must be one category .*got ndarray"):
        HPTOPEmbedding(target=np.array([0, 1])).fit(X, y)
    with pytest.raises(TypeError, match=r"target must be one category .*got list"):
        HPTOPEmbedding(target=[0]).fit(X, y)
    ragged = [[0, 1]] * (X.shape[0] - 1) + [[1]]
    with pytest.raises(ValueError, match=r"rows have different lengths"):
        HPTOPEmbedding().fit(X, ragged)


def test_target_is_read_by_transform(categories):
    X, y = categories
    embedding = HPTOPEmbedding(target=0).fit(X, y)
    switched = embedding.set_params(target=3).transform(X)
    assert (switched != HPTOPEmbedding(target=3).fit_transform(X, y)).nnz == 0


def test_string_labels_and_multilabel_documents(categories):
    X, y = categories
    names = np.array(["earn", "acq", "grain", "wheat"])[y]
    embedding = HPTOPEmbedding(target="grain").fit(X, names)
    np.testing.assert_array_equal(embedding.classes_, ["acq", "earn", "grain", "wheat"])
    Y = (y[:, None] == np.arange(4)).astype(int)
    Y[y == 3, 2] = 1   # every "wheat" story is also "grain"
    multi = HPTOPEmbedding(target=2).fit(X, Y)
    grain = multi.hyperplanes_[2].decision_function(X)[Y[:, 2] == 1]
    np.testing.assert_allclose(multi.mean_[2], grain.mean(), rtol=1e-12)


def test_hp_top_svm_learns_the_target(categories):
    X, y = categories
    embedding = HPTOPEmbedding(target=1).fit(X[:160], y[:160])
    model = kgeo.SVM(kernel="linear").fit(embedding.transform(X[:160]), y[:160] == 1)
    accuracy = np.mean(model.predict(embedding.transform(X[160:])) == (y[160:] == 1))
    assert accuracy > 0.9


@pytest.mark.parametrize("labels, match", [
    (None, "requires y to be passed, but the target y is None"),
    (np.zeros(7), "inconsistent numbers of samples"),
    (np.full((240, 3), 2), "must hold only 0 and 1"),
    (np.zeros((10, 3)), "X has 240 documents but y has 10 rows"),
    (np.zeros(240), "at least 2 categories"),
])
def test_bad_categories(categories, labels, match):
    X, _ = categories
    with pytest.raises(ValueError, match=match):
        HPTOPEmbedding().fit(X, labels)


def test_the_default_target_is_the_first_category(categories):
    # A default of 0 refused labels without a 0 (a review: scikit-learn's
    # checks fit labels 1 and 2); None takes classes_[0], 0 where there is one.
    X, y = categories
    for labels in (y, y + 1, np.array(["a", "b", "c", "d"])[y]):
        embedding = HPTOPEmbedding().fit(X, labels)
        first = embedding.set_params(target=embedding.classes_[0]).transform(X)
        default = embedding.set_params(target=None).transform(X)
        assert (default != first).nnz == 0


def test_categories_too_small_for_a_gaussian(categories):
    X, y = categories
    y = y.copy()
    y[0] = 9
    with pytest.raises(ValueError, match="category 9 has 1 of the 240 documents"):
        HPTOPEmbedding().fit(X, y)


def test_duplicate_documents_make_no_gaussian(categories):
    """Seven copies of one document: a variance of a few ulps, not a Gaussian."""
    X, y = categories
    for copies in (2, 7):
        X_dup = sp.vstack([X] + [X[1]] * copies).tocsr()
        y_dup = np.append(y, [9] * copies)
        with pytest.raises(ValueError, match=f"category 9 are equal on all its {copies} "
                                             f"documents .* they are copies of one document"):
            HPTOPEmbedding().fit(X_dup, y_dup)


def test_a_hyperplane_that_separates_nothing_is_named_not_duplicates(categories):
    # The message guessed "(duplicates?)" for distinct documents whose
    # category's SVM has w = 0 (here from a C so small that no step moves it).
    X, y = categories
    with pytest.raises(ValueError, match=r"equal on all its \d+ documents \(variance 0\), so "
                                         r"it has no Gaussian: its linear SVM's hyperplane "
                                         r"\(C=1e-300, \|w\| = 0\) does not tell them apart"):
        HPTOPEmbedding(C=1e-300).fit(X, y)


def test_a_failed_refit_keeps_the_previous_fit(categories):
    X, y = categories
    embedding = HPTOPEmbedding(target=2).fit(X, y)
    expected = embedding.transform(X)
    y_bad = y.copy()
    y_bad[0] = 9
    with pytest.raises(ValueError, match="category 9 has 1 of the 240"):
        embedding.fit(X[:, :20], y_bad)
    np.testing.assert_array_equal(embedding.classes_, [0, 1, 2, 3])
    assert embedding.n_features_in_ == 300
    assert (embedding.transform(X) != expected).nnz == 0


def test_decision_values_that_overflow_the_scores_are_refused(documents):
    decision = np.array([[2e160, 0.5, -0.5]] + [[0.1, 0.2, 0.3]] * (documents.shape[0] - 1))
    with pytest.raises(ValueError, match="make HP-TOP's scores overflow float64"):
        hp_top_scores(documents, decision, np.zeros(3), np.ones(3), 0)


def test_boolean_categories_are_named_by_booleans(categories):
    X, y = categories
    labels = y == 2
    by_true = HPTOPEmbedding(target=True).fit_transform(X, labels)
    by_false = HPTOPEmbedding(target=np.False_).fit_transform(X, labels)
    assert by_true.shape == by_false.shape and (by_true != by_false).nnz > 0
    with pytest.raises(ValueError, match=r"categories \[False, True\], got 0"):
        HPTOPEmbedding(target=0).fit(X, labels)


@pytest.mark.parametrize("indicator", [np.ones((240, 1)), sp.csr_matrix(np.ones((240, 1)))])
def test_a_one_column_indicator_names_one_category(categories, indicator):
    X, y = categories
    match = (r"y has shape \(240, 1\): a 2-D y is a 0/1 indicator matrix, one column per "
             r"category, and one column names a single category \(HP-TOP needs at least 2\); "
             r"pass y.ravel\(\) for one label per document")
    with pytest.raises(ValueError, match=match):
        HPTOPEmbedding().fit(X, indicator)
    # A column of labels gets the same words (it was "1 class", or "must
    # hold only 0 and 1" for three labels).
    with pytest.raises(ValueError, match=match):
        HPTOPEmbedding().fit(X, np.asarray(y).reshape(-1, 1))


def test_rows_too_large_name_hp_tops_own_svms(categories):
    X, y = categories
    X = sp.csr_matrix(X, dtype=float)
    model = HPTOPEmbedding().fit(X, y)
    for call in (lambda: model.transform(X * 1e200), lambda: HPTOPEmbedding().fit(X * 1e200, y)):
        with pytest.raises(ValueError, match=r"^X's rows are too large for HPTOPEmbedding's "
                                             r"linear SVMs: kernel 'linear' overflows float64"):
            call()


def test_fit_settings_reach_the_scores(categories):
    X, y = categories
    soft = HPTOPEmbedding(target=1, C=0.05).fit(X, y)
    for x, hyperplane in enumerate(soft.hyperplanes_):
        assert hyperplane.C == 0.05
        np.testing.assert_array_equal(
            hyperplane.decision_function(X),
            kgeo.SVM(kernel="linear", C=0.05).fit(X, y == x).decision_function(X))
    with_priors = soft.set_params(prior_scores=True).transform(X)
    without = soft.set_params(prior_scores=False).transform(X)
    assert with_priors.shape[1] == without.shape[1] + 4
    decision = HPTOPEmbedding._decisions(soft.hyperplanes_, X)
    expected = hp_top_scores(X, decision, soft.mean_, soft.variance_, 1, prior_scores=True)
    assert (with_priors != expected).nnz == 0


def test_a_category_holding_every_document_is_refused(categories):
    X, y = categories
    indicator = np.column_stack([y == 0, y == 1, np.ones_like(y)])
    with pytest.raises(ValueError, match="category 2 has 240 of the 240 documents"):
        HPTOPEmbedding().fit(X, indicator)


def test_bad_parameters_and_unfitted_use(categories):
    X, y = categories
    with pytest.raises(ValueError, match=r"target must be one of the categories \[0, 1, 2, 3\], got 7"):
        HPTOPEmbedding(target=7).fit(X, y)
    with pytest.raises(ValueError, match="C must be finite and > 0"):
        HPTOPEmbedding(C=0).fit(X, y)
    with pytest.raises(TypeError, match="prior_scores must be True or False"):
        HPTOPEmbedding(prior_scores="yes").fit(X, y)
    with pytest.raises(kgeo.NotFittedError):
        HPTOPEmbedding().transform(X)
    embedding = HPTOPEmbedding().fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but HPTOPEmbedding is expecting 300"):
        embedding.transform(np.ones((2, 3)))
    with pytest.raises(ValueError, match="target must be one of the categories"):
        embedding.set_params(target=True).transform(X)
    # Parameters set after the fit are checked by transform too: a string
    # prior_scores added the prior columns.
    with pytest.raises(TypeError, match="prior_scores must be True or False, got 'no'"):
        embedding.set_params(target=None, prior_scores="no").transform(X)
    # The label check names HP-TOP, not kgeo.SVM.
    with pytest.raises(ValueError, match=r"^Unknown label type: continuous\. HPTOPEmbedding's "
                                         r"y names each document's category and needs discrete"):
        HPTOPEmbedding().fit(X, y + 0.5)


def test_reuters_example_checks_its_options(load_example, tmp_path, capsys):
    example = load_example("hp_top_reuters")
    with pytest.raises(SystemExit) as stop:  # NumPy refused it after the corpus was read
        example.parse_args(["--data", "nowhere", "--seed", "-1"])
    assert stop.value.code == 2
    assert "--seed must be >= 0, got -1" in capsys.readouterr().err
    with pytest.raises(SystemExit, match=r"^--data: Reuters-21578 corpus not found"):
        example.main(["--data", str(tmp_path / "nowhere")])


def test_reuters_example_runs(reuters_dir, load_example, capsys):
    """examples/hp_top_reuters.py on one small run: a row per kernel, and
    HP-TOP's scores are those of a working classifier."""
    example = load_example("hp_top_reuters")
    example.main(["--data", str(reuters_dir), "--sizes", "1500", "--repeats", "1"])
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines()
            if line.startswith("| 1500 |")]
    assert [row[1] for row in rows] == ["linear", "HP-TOP"]
    micro = {row[1]: float(row[-1].rstrip(" |")) for row in rows}
    assert micro["linear"] > 80 and micro["HP-TOP"] > 80
    # earn, the first category, is the easiest: both kernels find it (an
    # SVM given another category's scores would not).
    assert all(float(row[2]) > 90 for row in rows)


def test_reuters_example_skips_draws_without_two_stories_per_category(reuters_dir,
                                                                      load_example, capsys):
    """A draw of 20 stories lacks corn and others: HPTOPEmbedding's fit
    refused it and the script ended in a traceback. Such draws are skipped
    and listed with the categories they lack."""
    example = load_example("hp_top_reuters")
    example.main(["--data", str(reuters_dir), "--sizes", "20,150", "--repeats", "4"])
    out = capsys.readouterr().out
    assert "| 20 | (no run: each of the 4 draws was skipped) |" in out
    for run in (1, 2, 3, 4):
        assert re.search(rf"20 stories, run {run}: skipped, fewer than 2 stories of .*corn",
                         out)
    # 150 stories: the seed's draws keep some of the 4 runs, and say so.
    skipped = len(re.findall(r"150 stories, run \d: skipped", out))
    assert 0 < skipped < 4
    assert f"150 stories: the mean of {4 - skipped} of 4 runs" in out
    assert len([line for line in out.splitlines() if line.startswith("| 150 |")]) == 2
    assert example.short_components(np.ones((4, 10), dtype=bool)) == ["other"]
    assert example.short_components(np.eye(10, dtype=bool)[[0, 0, 1, 1]]) == [
        "money-fx", "grain", "crude", "trade", "interest", "ship", "wheat", "corn", "other"]


# Found by mutation testing: the duplicate guard's accepting side.

def test_near_duplicate_documents_still_make_a_gaussian():
    # H16: the duplicate guard refuses a variance within rounding**2
    # (rounding = 8 eps max|t|); a genuine tiny spread (documents scaled by 1 + 1e-10 k, so
    # variance ~2e-19 at t ~ 1, far above rounding**2 ~ 3e-30 but below
    # rounding ~ 1.8e-15) must be accepted and fitted.
    X, y = make_topic_corpus(240, 300, 4, words_per_document=40, topic_weight=0.3,
                             random_state=2)
    X = kgeo.MultinomialEmbedding("tf", "l2").fit_transform(X)
    near = sp.vstack([X[1] * (1 + 1e-10 * k) for k in range(7)]).tocsr()
    X_near = sp.vstack([X, near]).tocsr()
    y_near = np.append(y, [9] * 7)
    embedding = HPTOPEmbedding().fit(X_near, y_near)
    values = embedding.hyperplanes_[-1].decision_function(X_near)[y_near == 9]
    assert np.ptp(values) > 0
    np.testing.assert_allclose(embedding.variance_[-1], values.var(), rtol=1e-6)


# Found by mutation testing, round 2: the duplicate guard's rounding margin
# and the indicator matrix's types.

def test_documents_a_few_ulps_apart_make_no_gaussian():
    # H7: the guard refuses a variance up to rounding**2, rounding = 8 eps
    # max|t|: seven copies of a document scaled by 1 + k eps give decision
    # values a few ulps apart (variance ~ 7 (eps t)**2), rounding, not a
    # Gaussian (a margin of 1 eps max|t| would accept them).
    X, y = make_topic_corpus(240, 300, 4, words_per_document=40, topic_weight=0.3,
                             random_state=2)
    X = kgeo.MultinomialEmbedding("tf", "l2").fit_transform(X)
    eps = np.finfo(np.float64).eps
    near = sp.vstack([X[1] * (1 + eps * k) for k in range(7)]).tocsr()
    with pytest.raises(ValueError, match="category 9 are equal on all its 7 documents"):
        HPTOPEmbedding().fit(sp.vstack([X, near]).tocsr(), np.append(y, [9] * 7))


def test_equal_values_after_cancellation_make_no_gaussian():
    # Both documents of category 0 lie on its hyperplane's margin: equal
    # decision values in exact arithmetic, but their terms (-3.4, 2.0, 1.9,
    # ...) cancel to 1.0 and leave them 32 ulps apart, beyond 8 ulps of the
    # values themselves. Judged by the values, the fit went through with a
    # variance of 3e-30 and scores up to 2.5e30 (a review); judged by the
    # terms, it is refused as exact equality is.
    X = np.array([[1, 1, 3, 2, 3], [2, 1, 2, 0, 0], [1, 3, 2, 0, 0], [4, 1, 0, 1, 0],
                  [1, 0, 1, 0, 0], [4, 0, 2, 1, 1]])
    y = [0, 1, 2, 0, 1, 2]
    values = kgeo.SVM(kernel="linear").fit(X, np.equal(y, 0)).decision_function(X)[[0, 3]]
    assert 0 < np.ptp(values) < 64 * np.finfo(np.float64).eps
    for target in (0, 1):
        with pytest.raises(ValueError, match="category 0 are equal on all its 2 documents"):
            HPTOPEmbedding(target=target).fit(X, y)


def test_a_complex_indicator_matrix_is_refused(categories):
    # H14: an indicator matrix holds booleans, integers or floats; complex
    # 0/1 values are refused though they compare equal to 0 and 1.
    X, y = categories
    indicator = (y[:, None] == np.arange(4)).astype(complex)
    with pytest.raises(ValueError, match="must hold only 0 and 1"):
        HPTOPEmbedding().fit(X, indicator)


# Found by mutation testing (a review of _hptop.py): the term scale behind the
# guard against Gaussians of rounding, that guard's margin, and the scores'
# overflow and underflow.

EPS = np.finfo(np.float64).eps


def _reference_term_scale(hyperplane, X):
    """|b| + max over rows of sum_i |alpha_i| sum_j |sv_ij x_j|, by loops."""
    alpha = np.asarray(hyperplane.dual_coef_, dtype=float).ravel()
    svs = hyperplane.support_vectors_
    svs = svs.toarray() if sp.issparse(svs) else np.asarray(svs)
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    best = 0.0
    for x in X:
        best = max(best, sum(abs(a) * sum(abs(s * v) for s, v in zip(sv, x))
                             for a, sv in zip(alpha, svs)))
    return float(np.abs(hyperplane.intercept_).max() + best)


def test_term_scale_sums_the_absolute_terms():
    # The guard against Gaussians of rounding bounds a decision value's
    # rounding by |b| plus the largest sum of its terms' absolute values;
    # leaving out |b|, taking |w| for |alpha| |sv|, keeping X's signs or
    # taking the mean over the rows for the largest, it misjudged rounding.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 6))
    y = np.arange(40) % 3
    model = HPTOPEmbedding().fit(X, y)
    for x, hyperplane in enumerate(model.hyperplanes_):
        own = X[y == x]
        np.testing.assert_allclose(HPTOPEmbedding._term_scale(hyperplane, own),
                                   _reference_term_scale(hyperplane, own), rtol=1e-12)


def _corpus():
    X, y = make_topic_corpus(240, 300, 4, words_per_document=40, topic_weight=0.3,
                             random_state=2)
    return kgeo.MultinomialEmbedding("tf", "l2").fit_transform(X), y


def test_near_copies_whose_values_are_ulps_of_the_intercept_make_no_gaussian():
    # Documents scaled down 1000 times: decision values are the intercept
    # (-1.0000002) plus 2.5e-6, and near-copies of one document whose values
    # differ by ~3 ulps of |t| are rounding, not a Gaussian (without |b| in the
    # term scale, a variance of 1e-31 was fitted and scores of 1.8e15 given).
    X, y = _corpus()
    X = X * 1e-3
    copies = sp.vstack([X, sp.vstack([X[1]] * 7)]).tocsr()
    labels = np.append(y, [9] * 7)
    hyperplane = kgeo.SVM(kernel="linear").fit(copies, labels == 9)
    u = (copies[-1] @ hyperplane.coef_.T).toarray().item()
    step = 0.5 * np.spacing(abs(hyperplane.intercept_[0])) / abs(u)
    near = sp.vstack([X, sp.vstack([X[1] * (1 + step * k) for k in range(7)])]).tocsr()
    values = kgeo.SVM(kernel="linear").fit(near, labels == 9).decision_function(near)[-7:]
    assert 0 < np.ptp(values) <= 8 * np.spacing(np.abs(values).max())
    with pytest.raises(ValueError, match="category 9 are equal on all its 7 documents"):
        HPTOPEmbedding().fit(near, labels)


def test_a_large_document_of_another_category_does_not_refuse_a_gaussian():
    # The rounding margin is that of the category's own documents; a
    # document of category 0 a million times larger, in a word the others
    # lack, must not turn category 9's genuine spread (variance 2e-19, as in
    # test_near_duplicate_documents_still_make_a_gaussian) into "equal values".
    X, y = _corpus()
    totals = np.asarray(X.sum(axis=0)).ravel()
    totals[X[1].indices] = -1
    big = sp.csr_matrix(([1e6], ([0], [int(totals.argmax())])), shape=(1, X.shape[1]))
    near = sp.vstack([X[1] * (1 + 1e-10 * k) for k in range(7)])
    X_all = sp.vstack([X, big, near]).tocsr()
    labels = np.append(y, [0] + [9] * 7)
    model = HPTOPEmbedding().fit(X_all, labels)
    values = model.hyperplanes_[-1].decision_function(X_all)[labels == 9]
    np.testing.assert_allclose(model.variance_[-1], values.var(), rtol=1e-6)


def _near_copies_of_a_document():
    """Labels with a category 9 of 7 near-copies of document 1, the
    function that makes X with copies ``step`` apart, the term scale of a
    hyperplane for category 9, and document 1's ``w . x`` on it."""
    X, y = _corpus()
    labels = np.append(y, [9] * 7)

    def with_near(step):
        return sp.vstack([X] + [X[1] * (1 + step * k) for k in range(7)]).tocsr()

    hyperplane = kgeo.SVM(kernel="linear").fit(with_near(1e-10), labels == 9)
    scale = HPTOPEmbedding._term_scale(hyperplane, with_near(1e-10)[labels == 9])
    u = hyperplane.decision_function(X[1])[0] - hyperplane.intercept_[0]
    return labels, with_near, scale, u


def test_a_spread_a_few_times_the_rounding_margin_is_a_gaussian():
    # The guard refuses a variance up to rounding**2 (rounding = 8 eps x
    # the term scale), no more: three times that is accepted.
    labels, with_near, scale, u = _near_copies_of_a_document()
    # Values (1 + step k) u + b, k = 0..6: variance 4 (step u)^2 = 3 rounding^2
    step = math.sqrt(3) * 8 * EPS * scale / (2 * abs(u))
    model = HPTOPEmbedding().fit(with_near(step), labels)
    rounding = 8 * EPS * HPTOPEmbedding._term_scale(model.hyperplanes_[-1],
                                                    with_near(step)[labels == 9])
    assert rounding ** 2 < model.variance_[-1] < 8 * rounding ** 2


def test_overflowing_scores_are_refused_without_runtime_warnings():
    # The overflow is reported once, as the ValueError, not also as
    # NumPy's "overflow encountered in square" warnings.
    documents = sp.csr_matrix(np.ones((3, 4)))
    decision = np.array([[2e160, 0.5, -0.5], [0.1, 0.2, 0.3], [0.1, 0.2, 0.3]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="make HP-TOP's scores overflow float64"):
            hp_top_scores(documents, decision, np.zeros(3), np.ones(3), 0)


def test_underflowed_shares_store_no_zeros():
    # Far from category 2's mean its share pi_e underflows to 0; its
    # scores are then absent from the CSR, not stored zeros.
    rng = np.random.default_rng(0)
    documents = sp.csr_matrix(rng.random((6, 5)) * (rng.random((6, 5)) < 0.7))
    decision = np.array([[0.0, 60.0, -70.0]] * 6)
    scores = hp_top_scores(documents, decision, np.zeros(3), np.full(3, 0.01), 0)
    assert not np.any(scores.data == 0)


def test_nan_scores_are_refused_as_overflow():
    # Far beyond a non-target category e its share underflows to 0 and
    # 0 * t_e**2 (inf) is NaN, with no inf anywhere: the check must catch NaN.
    documents = sp.csr_matrix(np.ones((2, 4)))
    decision = np.array([[0.1, 0.2, 2e160], [0.1, 0.2, 0.3]])
    with pytest.raises(ValueError, match="make HP-TOP's scores overflow float64"):
        hp_top_scores(documents, decision, np.zeros(3), np.ones(3), 0)


# --- from a mutation review of _embedding.py and _hptop.py (helper 171: 122
# mutants, 103 killed, 14 equivalent, 5 gaps, each failing its test) ---------

def test_a_spread_below_the_rounding_margin_is_refused():
    """The duplicate guard refuses a variance up to rounding**2 with
    rounding = 8 eps x the term scale: near-copies whose decision values have
    a variance of a quarter of that are rounding, not a Gaussian (a margin of
    1 eps x the term scale accepted them and gave scores of 1.4e14)."""
    labels, with_near, scale, u = _near_copies_of_a_document()
    # Values (1 + step k) u + b, k = 0..6: variance 4 (step u)^2 = rounding^2 / 4
    step = 0.5 * 8 * EPS * scale / (2 * abs(u))
    near = with_near(step)
    values = kgeo.SVM(kernel="linear").fit(near, labels == 9).decision_function(near)[-7:]
    rounding = 8 * EPS * scale
    assert (rounding / 8) ** 2 < values.var() < rounding ** 2
    with pytest.raises(ValueError, match="category 9 are equal on all its 7 documents"):
        HPTOPEmbedding().fit(near, labels)


def _three_categories():
    rng = np.random.default_rng(0)
    y = np.arange(30) % 3
    X = rng.random((30, 8)) + 2.0 * (np.arange(8)[None, :] % 3 == y[:, None])
    return X, y


def test_n_jobs_reaches_the_categories_svms():
    # n_jobs is documented as "Threads of the categories' SVMs": it must be
    # passed to them (and so be checked by them), not dropped.
    X, y = _three_categories()
    model = kgeo.HPTOPEmbedding(n_jobs=2).fit(X, y)
    assert [h.n_jobs for h in model.hyperplanes_] == [2, 2, 2]
    with pytest.raises(ValueError, match="Invalid n_jobs 0"):
        kgeo.HPTOPEmbedding(n_jobs=0).fit(X, y)


@pytest.mark.parametrize("target", [{0: 1}, {0}])
def test_a_target_that_is_a_dict_or_a_set_is_refused_as_not_one_category(target):
    rng = np.random.default_rng(0)
    y = np.arange(30) % 3
    X = rng.random((30, 6)) + 2.0 * (np.arange(6)[None, :] % 3 == y[:, None])
    with pytest.raises(TypeError, match=r"target must be one category \(a label, or a column "
                                        r"of an indicator y\), got (dict|set)"):
        kgeo.HPTOPEmbedding(target=target).fit(X, y)
