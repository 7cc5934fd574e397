"""The HP-TOP kernel of Takamura, Matsumoto & Yamada (CoNLL 2004).

A TOP kernel (Tsuda et al. 2002) is the inner product of the gradients of a
model's posterior log-odds ``v(d) = log P(+1 | d) - log P(-1 | d)``. HP-TOP
models, for a target category c, the positive class by a Gaussian of the
decision value ``t_c(d) = w_c . d - b_c`` of c's own linear SVM, and the
negative class by a mixture of such Gaussians, one per other category e,
each along its own hyperplane:

    q(d | x) = N(t_x(d); mu_x, sigma_x^2),   P(+1 | d) ~ P(c) q(d | c),
    P(-1 | d) ~ sum_{e != c} P(e) q(d | e)

with ``mu_x``, ``sigma_x^2`` the mean and (biased) variance of ``t_x`` over
the training documents of category x, and uniform priors ``P(x)``. The
gradient of ``v`` in ``theta_x1 = mu_x / sigma_x^2``, ``theta_x2 = -1 / (2
sigma_x^2)``, ``w_x`` and ``b_x`` (the paper's Appendix C, with its typos
corrected as in ``../shared/papers/NOTES-hofmann2000-takamura2004.md`` part
B: eq. 33 uses ``w.d - b``, eq. 43 ``q(d | e)``) is a handful of scalars per
category plus, per category, a scalar multiple of the document itself. The
inner product of two such vectors is the paper's factorised kernel,

    K(d, d') = sum_s s(d) s(d') + (g_c(d) g_c(d') + sum_e a_e(d) a_e(d')) <d, d'>,

so :class:`HPTOPEmbedding` returns the vectors and kgeo's linear kernel on
them is the HP-TOP kernel, exactly.
"""

import contextlib
import numbers

import numpy as np
import scipy.sparse as sp

from ._base import EstimatorMixin, TransformerMixin, check_is_fitted, wraps_output
from ._svm import SVM
from ._validation import (check_labels, check_matrix, check_n_features, check_positive,
                          feature_names)
from .exceptions import parameter_errors

__all__ = ["HPTOPEmbedding"]

_LOG_2PI = np.log(2 * np.pi)


def hp_top_scores(X, decision, mean, variance, target, prior_scores=False):
    """The gradient of HP-TOP's log-odds for each document, as a CSR matrix.

    Parameters
    ----------
    X : scipy.sparse.csr_matrix of shape (n_documents, n_features)
        The documents, as the hyperplanes see them.
    decision : ndarray of shape (n_documents, n_categories)
        ``t_x(d) = w_x . d - b_x`` for every category x.
    mean, variance : ndarray of shape (n_categories,)
        ``mu_x`` and ``sigma_x^2`` (variances > 0).
    target : int
        Column of the target category c.
    prior_scores : bool, default=False
        Add the derivatives in the priors ``P(c)`` and ``P(e)`` (eqs. 42-43).

    Returns
    -------
    scores : scipy.sparse.csr_matrix
        Columns: ``v`` (eq. 33); for c the derivatives in ``theta_c1``,
        ``theta_c2`` and ``b_c`` (eqs. 34, 36, 40); for each other category
        e in column order those in ``theta_e1``, ``theta_e2`` and ``b_e``
        (eqs. 35, 37, 41); with ``prior_scores`` the ``P(c)`` and then the
        ``P(e)`` derivatives; then the ``w_c`` derivatives (eq. 38, the
        document times ``g_c = (mu_c - t_c) / sigma_c^2``) and the ``w_e``
        derivatives of each e (eq. 39, the document times ``a_e = -pi_e
        (mu_e - t_e) / sigma_e^2``), ``n_features`` columns each.
    """
    # Far-off rows can overflow t^2 or q; the result is checked as a whole.
    with np.errstate(over="ignore", invalid="ignore"):
        scores = _scores(X, decision, mean, variance, target, prior_scores)
    if not np.all(np.isfinite(scores.data)):
        raise ValueError(
            f"the documents' decision values (up to {np.abs(decision).max():.3g}, against "
            f"category means up to {np.abs(mean).max():.3g}) make HP-TOP's scores overflow "
            f"float64: are X's rows scaled as the fit's were?")
    scores.eliminate_zeros()
    return scores


def _scores(X, decision, mean, variance, target, prior_scores):
    # Imported here: scipy.special would add about 28 ms (14 %) to importing kgeo.
    from scipy.special import logsumexp

    n_categories = decision.shape[1]
    others = np.array([x for x in range(n_categories) if x != target])
    log_prior = -np.log(n_categories)
    centred = decision - mean
    log_q = -0.5 * (_LOG_2PI + np.log(variance)) - centred ** 2 / (2 * variance)
    # The negative class's mixture in the log domain: q underflows far from
    # a category's mean, pi_e stays exact.
    joint_others = log_prior + log_q[:, others]
    log_negative = logsumexp(joint_others, axis=1)
    share = np.exp(joint_others - log_negative[:, None])          # pi_e(d)
    log_odds = log_prior + log_q[:, target] - log_negative

    t_c, mu_c, var_c = decision[:, target], mean[target], variance[target]
    t_e, mu_e, var_e = decision[:, others], mean[others], variance[others]
    columns = [
        log_odds[:, None],
        (t_c - mu_c)[:, None],
        (t_c ** 2 - mu_c ** 2 - var_c)[:, None],
        ((t_c - mu_c) / var_c)[:, None],
    ]
    per_other = np.stack([
        -share * (t_e - mu_e),
        -share * (t_e ** 2 - mu_e ** 2 - var_e),
        -share * (t_e - mu_e) / var_e,
    ], axis=2).reshape(X.shape[0], -1)
    columns.append(per_other)
    if prior_scores:
        prior = np.exp(log_prior)
        columns.append(np.full((X.shape[0], 1), 1 / prior))
        columns.append(-share / prior)   # -q(d|e) / P_{-c}(d) = -pi_e / P(e)
    scalars = sp.csr_matrix(np.hstack(columns))
    word_weights = np.column_stack([(mu_c - t_c) / var_c, -share * (mu_e - t_e) / var_e])
    blocks = [scalars] + [sp.csr_matrix(X.multiply(word_weights[:, [j]]))
                          for j in range(word_weights.shape[1])]
    return sp.hstack(blocks, format="csr")


@contextlib.contextmanager
def _overflow_named_as_hp_tops():
    """An overflow of HP-TOP's linear SVMs named as theirs: the user chose no
    "kernel 'linear'", which SVM's message names."""
    try:
        yield
    except ValueError as error:
        if "overflows float64" not in str(error):
            raise
        raise ValueError(f"X's rows are too large for HPTOPEmbedding's linear SVMs: "
                         f"{error}") from None


class HPTOPEmbedding(TransformerMixin, EstimatorMixin):
    """Takamura et al.'s HP-TOP kernel, as vectors whose inner product it is.

    ``fit`` trains one linear SVM per category (that category against the
    rest) and fits a Gaussian to each one's decision values on the
    category's own documents; ``transform`` returns the gradient of the
    posterior log-odds of ``target`` against the other categories. The
    linear kernel on the output is the HP-TOP kernel for ``target``:
    ``SVM(kernel="linear").fit(embedding.fit_transform(X, y), y == c)``.

    Parameters
    ----------
    target : int or label, default=None
        The positive category: a column of ``y`` when ``y`` is an indicator
        matrix, else one of its labels; None for the first of ``classes_``
        (column 0, or the smallest label), which labels of any kind have.
        Read by ``transform``: the
        hyperplanes and Gaussians of every category are fitted once, so
        ``set_params(target=e).transform(X)`` gives e's scores without a refit.
    C : float, default=1.0
        C of the categories' linear SVMs (Takamura et al. use 1).
    prior_scores : bool, default=False
        Include the derivatives in the category priors (the paper's eqs.
        42-43, which its parameter list leaves out): with uniform priors
        ``P(c)``'s is a constant, which changes no SVM.
    n_jobs : int, default=None
        Threads of the categories' SVMs.

    Attributes
    ----------
    classes_ : ndarray of shape (n_categories,)
        The categories: ``y``'s column numbers, or its sorted labels.
    hyperplanes_ : list of SVM
        The fitted linear SVM of each category against the rest.
    mean_, variance_ : ndarray of shape (n_categories,)
        ``mu_x`` and ``sigma_x^2``: the mean and biased variance of each
        category's decision values over its training documents (eqs. 19-20).
    n_features_in_ : int
    feature_names_in_ : ndarray of str objects, shape (n_features_in_,)
        The column names of X at ``fit`` when it was a data frame with string
        names (words); ``transform`` then checks X has the same, in the same
        order. Absent otherwise.

    Notes
    -----
    What the paper leaves open, and the choices made here: the document
    weighting is the caller's (``X`` goes to the hyperplanes as given); a
    document may belong to several categories (an indicator ``y``) and is
    then in each one's Gaussian; priors are uniform; no score is
    normalised. A category whose decision values on its documents are all
    equal (duplicate documents, say) has no Gaussian, and is an error.

    References
    ----------
    H. Takamura, Y. Matsumoto, H. Yamada, "Modeling category structures with
    a kernel function", CoNLL 2004.
    """

    def __init__(self, target=None, *, C=1.0, prior_scores=False, n_jobs=None):
        self.target = target
        self.C = C
        self.prior_scores = prior_scores
        self.n_jobs = n_jobs

    @parameter_errors()
    def _check_params(self):
        check_positive(self.C, "C")
        if not isinstance(self.prior_scores, (bool, np.bool_)):
            raise TypeError(f"prior_scores must be True or False, got {self.prior_scores!r}")

    def _indicator(self, y, n_documents):
        """The categories ``y`` names, and ``y`` as a dense 0/1 matrix."""
        if y is None:
            raise ValueError("HPTOPEmbedding requires y to be passed, but the target y is None")
        # Any 2-D y is an indicator matrix, one column included (which
        # names a single category: too few).
        if sp.issparse(y):
            y = y.toarray()
        try:
            y = np.asarray(y)
        except ValueError as error:  # NumPy's words for rows of different lengths
            raise ValueError(
                f"y must be one label per document or a rectangular 0/1 indicator matrix, "
                f"but its rows have different lengths ({error})") from None
        if y.ndim == 2:
            if y.shape[0] != n_documents:
                raise ValueError(f"X has {n_documents} documents but y has {y.shape[0]} rows")
            if y.shape[1] == 1:
                # A column of labels (which scikit-learn's classifiers ravel)
                # was refused as "1 class" or "must hold only 0 and 1".
                raise ValueError(
                    f"y has shape {y.shape}: a 2-D y is a 0/1 indicator matrix, one column per "
                    f"category, and one column names a single category (HP-TOP needs at least "
                    f"2); pass y.ravel() for one label per document")
            if y.dtype.kind == "O" and all(
                    isinstance(v, (numbers.Real, np.bool_)) for v in y.flat):
                y = y.astype(np.float64)  # numbers held as objects (a frame's, say)
            if y.dtype.kind not in "biuf" or not np.all((y == 0) | (y == 1)):
                raise ValueError(f"an indicator matrix y (2-D, here of shape {y.shape}: one "
                                 f"column per category) must hold only 0 and 1")
            return np.arange(y.shape[1]), y.astype(bool)
        labels = check_labels(y, n_documents,
                              learner="HPTOPEmbedding's y names each document's category")
        classes, codes = np.unique(labels, return_inverse=True)
        return classes, codes[:, None] == np.arange(classes.shape[0])

    @parameter_errors()
    def _target_column(self, classes):
        """The column of ``target`` among ``classes``. Booleans name only
        boolean categories, and those only booleans (``False == 0``)."""
        if self.target is None:
            # The first category. (A default of 0 refused labels without a
            # 0, such as 1 and 2, which scikit-learn's checks fit: a review.)
            return 0
        if np.ndim(self.target) != 0 or isinstance(self.target, (dict, set)):
            raise TypeError(
                f"target must be one category (a label, or a column of an indicator y), "
                f"got {type(self.target).__name__} {self.target!r}")
        is_bool = isinstance(self.target, (bool, np.bool_))
        matches = []
        if is_bool == (classes.dtype.kind == "b"):
            matches = [j for j, name in enumerate(classes.tolist()) if name == self.target]
        if len(matches) != 1:
            raise ValueError(f"target must be one of the categories {classes.tolist()}, "
                             f"got {self.target!r}")
        return matches[0]

    def fit(self, X, y):
        """Fit each category's hyperplane and Gaussian.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)
            Document vectors (TF, TF-IDF, normalised or not: the caller's
            choice).
        y : array-like of shape (n_documents,) or (n_documents, n_categories)
            One label per document, or a 0/1 indicator matrix (documents
            may have several categories, or none).

        Returns
        -------
        self
        """
        self._check_params()
        names = feature_names(X)
        X = check_matrix(X, name="X")
        classes, member = self._indicator(y, X.shape[0])
        if classes.shape[0] < 2:
            raise ValueError(f"HPTOPEmbedding needs at least 2 categories (classes), got "
                             f"{classes.shape[0]} class")
        self._target_column(classes)
        sizes = member.sum(axis=0)
        for x, size in enumerate(sizes):
            if size < 2 or size == X.shape[0]:
                raise ValueError(
                    f"category {classes.tolist()[x]!r} has {size} of the {X.shape[0]} documents; each "
                    f"needs at least 2 of its own (for its Gaussian) and one outside it (for "
                    f"its hyperplane)")
        with _overflow_named_as_hp_tops():
            hyperplanes = [SVM(kernel="linear", C=self.C, n_jobs=self.n_jobs).fit(X, member[:, x])
                           for x in range(classes.shape[0])]
        decision = self._decisions(hyperplanes, X)
        mean = np.empty(classes.shape[0])
        variance = np.empty(classes.shape[0])
        for x in range(classes.shape[0]):
            values = decision[member[:, x], x]
            mean[x] = values.mean()
            variance[x] = np.mean((values - mean[x]) ** 2)
            # Equal values (duplicate documents) leave only the rounding of
            # their sums, a few ulps of their terms: no Gaussian to speak of.
            # The terms' size, not the values': two documents on the margin
            # had values 32 ulps apart after terms of -3.4, 2.0 and 1.9
            # cancelled to 1.0, and scores of 1e30 followed (a review).
            rounding = 8 * np.finfo(np.float64).eps * self._term_scale(
                hyperplanes[x], X[member[:, x]])
            if np.ptp(values) == 0 or not variance[x] > rounding ** 2:
                own = X[member[:, x]]
                if (own - sp.csr_matrix(np.ones((own.shape[0], 1))) @ own[0]).nnz == 0:
                    why = "they are copies of one document"
                else:
                    weights = hyperplanes[x].coef_
                    norm = float(np.sqrt(weights.multiply(weights).sum())
                                 if sp.issparse(weights) else np.linalg.norm(weights))
                    why = (f"its linear SVM's hyperplane (C={self.C!r}, |w| = {norm:.3g}) does "
                           f"not tell them apart; a larger C may")
                raise ValueError(
                    f"the decision values of category {classes.tolist()[x]!r} are equal on "
                    f"all its {sizes[x]} documents (variance {variance[x]:.3g}), so it has no "
                    f"Gaussian: {why}")
        # Every attribute is set here, after every check: a failed refit
        # leaves the previous fit whole.
        self.classes_ = classes
        self.hyperplanes_ = hyperplanes
        self.mean_ = mean
        self.variance_ = variance
        self.n_features_in_ = X.shape[1]
        self._set_feature_names(names)
        return self

    @staticmethod
    def _term_scale(hyperplane, X):
        """The largest sum of the absolute terms of a decision value on the
        rows of X: |b| + sum_j |a_j| sum_i |x_i sv_ji|, which bounds its
        rounding (a few ulps of it)."""
        weights = abs(hyperplane.dual_coef_) @ abs(hyperplane.support_vectors_)
        weights = np.asarray(weights, dtype=np.float64).ravel()
        sums = np.asarray(abs(X) @ weights, dtype=np.float64).ravel()
        return float(np.abs(hyperplane.intercept_).max() + sums.max())

    @staticmethod
    def _decisions(hyperplanes, X):
        # SVM's decision_function is positive on classes_[1], here True.
        with _overflow_named_as_hp_tops():
            return np.column_stack([h.decision_function(X) for h in hyperplanes])

    @wraps_output
    def transform(self, X):
        """The HP-TOP scores of each document for ``target``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)

        Returns
        -------
        scores : scipy.sparse.csr_matrix of shape (n_documents, n_scores)
            Columns: ``v``, the log-odds (eq. 33); for the target c the
            derivatives in ``theta_c1``, ``theta_c2`` and ``b_c`` (eqs. 34, 36,
            40), then those of each other category e in ``classes_`` order
            (eqs. 35, 37, 41); with ``prior_scores`` the ``P(c)`` and then the
            ``P(e)`` derivatives; then the ``w_c`` derivatives (eq. 38,
            ``n_features`` columns) and the ``w_e`` derivatives of each e
            (eq. 39). `get_feature_names_out` names them. Their linear kernel
            is the HP-TOP kernel.
        """
        check_is_fitted(self, "hyperplanes_")
        self._check_params()
        self._check_feature_names(X)
        X = check_matrix(X, name="X")
        check_n_features(X, estimator="HPTOPEmbedding", n_features=self.n_features_in_)
        return hp_top_scores(X, self._decisions(self.hyperplanes_, X), self.mean_,
                             self.variance_, self._target_column(self.classes_),
                             bool(self.prior_scores))

    def fit_transform(self, X, y):
        """Fit each category's hyperplane and Gaussian, then score X.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)
            Document vectors, as for :meth:`fit`.
        y : array-like of shape (n_documents,) or (n_documents, n_categories)
            One label per document, or a 0/1 indicator matrix.

        Returns
        -------
        scores : scipy.sparse.csr_matrix of shape (n_documents, n_scores)
            ``fit(X, y).transform(X)``: the HP-TOP scores for ``target``.
        """
        return self.fit(X, y).transform(X)

    def get_feature_names_out(self, input_features=None):
        """Names of ``transform``'s columns for the current ``target``.

        ``log_odds`` (v); ``theta1[c]``, ``theta2[c]``, ``b[c]`` for the
        target c, then the same for each other category e; with
        ``prior_scores``, ``prior[c]`` and each ``prior[e]``; then the
        hyperplanes' word weights, ``w[c]_apple``, ... and ``w[e]_apple``,
        ..., in the order of `transform`'s columns. Categories are named by
        ``classes_``.

        Parameters
        ----------
        input_features : array-like of str, default=None
            The input columns' names (the words); by default
            ``feature_names_in_``, or ``x0``, ``x1``, ... without it.

        Returns
        -------
        names : ndarray of str objects
        """
        check_is_fitted(self, "hyperplanes_")
        self._check_params()
        words = self._input_feature_names(input_features)
        target = self._target_column(self.classes_)
        labels = [str(label) for label in self.classes_.tolist()]
        order = [target] + [x for x in range(len(labels)) if x != target]
        names = ["log_odds"]
        names += [f"{part}[{labels[x]}]" for x in order for part in ("theta1", "theta2", "b")]
        if self.prior_scores:
            names += [f"prior[{labels[x]}]" for x in order]
        names += [f"w[{labels[x]}]_{word}" for x in order for word in words]
        return np.asarray(names, dtype=object)

    def __sklearn_tags__(self):
        # Called only by scikit-learn, which is then imported already.
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=True),
                    transformer_tags=TransformerTags(), input_tags=InputTags(sparse=True))
