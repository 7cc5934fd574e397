"""Embeddings into statistical manifolds: documents as TF or TF-IDF weights,
L1 or L2 normalised (the multinomial simplex); sets of points as their
maximum-likelihood spherical normals (the hyperbolic kernel's rows)."""

import collections.abc
import decimal
import numbers

import numpy as np
import scipy.sparse as sp

from ._base import (EstimatorMixin, TransformerMixin, check_is_fitted,
                    count_transformer_tags, wraps_output)
from ._validation import (as_float64, as_rectangular, check_counts, check_n_features,
                          feature_names, is_one_of)
from .exceptions import not_fitted_error, parameter_errors

__all__ = ["MultinomialEmbedding", "spherical_normal_mle"]

# Columns per stored entry from which TF-IDF's fit counts document
# frequencies by sorting the entries rather than by a count per column.
_SPARSE_VOCABULARY = 16


def _log_inverse_frequency(n_docs, df):
    """``log(n_docs / df)``, correctly rounded, for positive integer document
    frequencies ``df``.

    Each distinct frequency's log is taken in decimal arithmetic at 40
    digits and rounded once to float64 (correct unless the value lies within
    1e-40 of a tie): the same bits on every CPU, C library and operating
    system. NumPy's log1p is Intel's SVML on AVX-512 CPUs, glibc picks an
    FMA build of log1p on CPUs that have FMA (from glibc 2.39), and neither
    rounds correctly (glibc's log1p of (n_docs - df) / df missed the
    correctly rounded value on 49 of 20NG's 611 frequencies), so the same
    corpus gave different TF-IDF weights, and SVMs, on different machines
    (the likely cause of the two 20NG linear models in benchmarks/README.md).
    Before, ``log(n_docs / df)`` in float64 rounded the quotient first,
    which the log's condition ``1 / log(n_docs / df)`` magnified for words
    in nearly every document (n_docs = 18,846, df = n_docs - 1: 13,838
    ulps).

    Distinct frequencies are few: they sum to at most the number of stored
    entries, so there are fewer than ``sqrt(2 * nnz)`` of them (611 in
    20NG's training set, 36 ms).
    """
    distinct, position = np.unique(df, return_inverse=True)
    context = decimal.Context(prec=40)
    m = decimal.Decimal(int(n_docs))
    logs = np.array([float(context.ln(context.divide(m, decimal.Decimal(int(d)))))
                     for d in distinct], dtype=np.float64)
    return logs[position.reshape(-1)]


class MultinomialEmbedding(TransformerMixin, EstimatorMixin):
    """Map term counts to TF or TF-IDF weights, normalised per document.

    With ``norm="l1"`` each document becomes a point of the multinomial
    simplex; the TF-IDF embedding is then the pull-back of the Fisher metric
    with ``lambda_i`` proportional to ``idf_i`` (Zhang, Chen & Lee 2005, eq. 10).

    Parameters
    ----------
    weighting : {"tf", "tfidf"}, default="tf"
        ``tf`` keeps the counts; ``tfidf`` multiplies term ``i`` by
        ``idf_i = log(m / df_i)``, with ``m`` documents and ``df_i`` of them
        containing term ``i`` at ``fit``. Terms absent at ``fit`` get weight 0.
        Read by ``transform`` too: set to ``tf`` after a TF-IDF fit, it gives
        TF; set to ``tfidf`` after a TF fit (which learns no document
        frequencies), it raises ``NotFittedError``.
    norm : {"l1", "l2"} or None, default="l1"
        Row normalisation. A row whose weights are all zero (for example a
        document made only of terms present in every training document,
        whose idf is 0) stays zero.

    Attributes
    ----------
    idf_ : ndarray of shape (n_features,)
        Learnt inverse document frequencies (ones for ``weighting="tf"``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str objects, shape (n_features_in_,)
        The column names of X at ``fit`` when it was a data frame with string
        names (words); ``transform`` then checks X has the same, in the same
        order. Absent otherwise.

    Examples
    --------
    >>> import numpy as np, kgeo
    >>> counts = np.array([[2, 0, 1], [1, 1, 0], [0, 3, 1]])
    >>> emb = kgeo.MultinomialEmbedding(weighting="tf", norm="l1").fit(counts)
    >>> emb.transform(counts).toarray()  # points of the simplex
    array([[0.66666667, 0.        , 0.33333333],
           [0.5       , 0.5       , 0.        ],
           [0.        , 0.75      , 0.25      ]])
    """

    def __init__(self, weighting="tf", norm="l1"):
        self.weighting = weighting
        self.norm = norm

    @parameter_errors()
    def _check_params(self):
        if not is_one_of(self.weighting, ("tf", "tfidf")):
            raise ValueError(f"weighting must be 'tf' or 'tfidf', got {self.weighting!r}")
        if not is_one_of(self.norm, ("l1", "l2", None)):
            raise ValueError(f"norm must be 'l1', 'l2' or None, got {self.norm!r}")

    def fit(self, X, y=None):
        """Learn the document frequencies of the terms.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)
            Term counts (or any non-negative weights).
        y : ignored

        Returns
        -------
        self
        """
        self._check_params()
        names = feature_names(X)
        X = check_counts(X, estimator="MultinomialEmbedding")
        n_docs = X.shape[0]
        if self.weighting == "tfidf":
            if X.nnz < X.shape[1] // _SPARSE_VOCABULARY:
                # Far more columns than entries (hashed features): the
                # document frequencies of the columns X uses, by a sort of
                # its entries, instead of a count per column. At 2**27
                # columns the counts were a 1 GB array, faulted in at
                # 0.7-6 s on a machine where the sort of 200,000 entries
                # takes 0.2 s; np.zeros below touches only the pages of
                # the columns used.
                seen, df = np.unique(X.indices, return_counts=True)
            else:
                df = np.bincount(X.indices, minlength=X.shape[1])
                seen = df > 0
                df = df[seen]
            idf = np.zeros(X.shape[1])
            idf[seen] = _log_inverse_frequency(n_docs, df)
        else:
            idf = np.ones(X.shape[1])
        self.idf_ = idf
        # What transform may read: weighting="tfidf" set after a TF fit has
        # no document frequencies to use.
        self._weighting_fitted = self.weighting
        self.n_features_in_ = X.shape[1]
        self._set_feature_names(names)
        return self

    @wraps_output
    def transform(self, X):
        """Weight and normalise documents.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)

        Returns
        -------
        X_new : scipy.sparse.csr_matrix of shape (n_documents, n_features)
        """
        check_is_fitted(self, "idf_")
        self._check_params()
        # weighting is read here, as scikit-learn's TfidfTransformer reads
        # use_idf: set to "tf" after a TF-IDF fit, it was ignored (a review).
        if self.weighting == "tfidf" and getattr(self, "_weighting_fitted", "tfidf") == "tf":
            raise not_fitted_error(
                "This MultinomialEmbedding was fitted with weighting='tf', which learns no "
                "document frequencies; fit it again for weighting='tfidf'")
        self._check_feature_names(X)
        X = check_counts(X, estimator="MultinomialEmbedding")
        check_n_features(X, estimator="MultinomialEmbedding", n_features=self.n_features_in_)
        # TF's weights are all one: multiplying by them changes no bit and
        # makes no zero, so it is skipped (a third of the transform's time),
        # also for idfs of ones. Judged on the words X holds, not on all of
        # idf_: for hashed features (2**27 columns) that scan took 0.35 s.
        idf = self.idf_[X.indices] if self.weighting == "tfidf" else None
        if idf is not None and np.any(idf != 1.0):
            with np.errstate(over="ignore", under="ignore"):
                weighted = X.data * idf
            self._rescue_out_of_range(X, idf, weighted)
            X.data[:] = weighted
            X.eliminate_zeros()  # the words of every training document (idf 0)
        if self.norm is not None:
            lengths = np.diff(X.indptr)
            nonempty = lengths > 0
            sums = self._row_sums(X.data, X.indptr, nonempty)
            lost = nonempty & self._out_of_range(sums)
            if np.any(lost):
                # Such rows are normalised again after dividing by their
                # largest entry: the same point in exact arithmetic, with the
                # sum in [1, n_terms], far from both ends of the range. Other
                # rows keep the plain quotient's bits.
                row_max = np.zeros(X.shape[0])
                row_max[nonempty] = np.maximum.reduceat(X.data, X.indptr[:-1][nonempty])
                scale = np.where(lost, row_max, 1.0)
                X.data /= np.repeat(scale, lengths)
                sums[lost] = self._row_sums(X.data, X.indptr, nonempty)[lost]
            norms = sums if self.norm == "l1" else np.sqrt(sums)
            norms[~nonempty] = 1.0
            X.data /= np.repeat(norms, lengths)
            # A word whose share of its document is below float64's range
            # (1e-300 next to 1e300) came out 0: not stored, as TF-IDF's
            # words of every document are not.
            X.eliminate_zeros()
        return sp.csr_matrix(X)

    def _rescue_out_of_range(self, X, idf, weighted):
        """Redo, in ``weighted``, the TF-IDF weights beyond float64's range.

        A count times its idf can overflow (counts near 1e308), or come out
        subnormal, with fewer bits, or 0 (counts below about 2e-308 / idf),
        and then the word would silently leave the document. When the rows
        are normalised afterwards, their scale is free: such rows are
        weighted again after dividing by their largest count among the
        words that keep a weight (idf > 0; the words of every training
        document leave anyway, and a count of theirs could dwarf the rest),
        the same point in exact arithmetic. Without normalisation the weights
        are the output, and a weight lost to 0 or infinity is an error.
        """
        counted = (idf > 0) & (X.data > 0)
        overflowed = ~np.isfinite(weighted)
        if self.norm is None:
            if np.any(overflowed):
                raise ValueError(
                    f"X has counts up to {X.data[overflowed].max():.3g}, whose TF-IDF "
                    f"weights (idf up to {self.idf_.max():.3g}) overflow float64 (with "
                    f"norm=None the weights are the output); scale X down, or normalise "
                    f"the rows (norm='l1' or 'l2')")
            lost = counted & (weighted == 0)
            if np.any(lost):
                raise ValueError(
                    f"X has counts as small as {X.data[lost].min():.3g}, whose TF-IDF "
                    f"weights underflow float64 to 0 (with norm=None the weights are "
                    f"the output); scale X up, or normalise the rows (norm='l1' or "
                    f"'l2')")
            return
        out_of_range = counted & ((weighted < np.finfo(np.float64).tiny) | overflowed)
        if not np.any(out_of_range):
            return
        lengths = np.diff(X.indptr)
        row_of = np.repeat(np.arange(X.shape[0]), lengths)
        rows = np.zeros(X.shape[0], dtype=bool)
        rows[row_of[out_of_range]] = True
        nonempty = lengths > 0
        row_max = np.ones(X.shape[0])
        row_max[nonempty] = np.maximum.reduceat(np.where(counted, X.data, 0.0),
                                                X.indptr[:-1][nonempty])
        # Only the counted words: an idf-0 count over a tiny row_max would
        # overflow, and infinity times 0 is NaN.
        redo = rows[row_of] & counted
        with np.errstate(under="ignore"):
            weighted[redo] = X.data[redo] / row_max[row_of[redo]] * idf[redo]

    def _row_sums(self, data, indptr, nonempty):
        """Per row, the sum of the values (``l1``) or of their squares (``l2``)."""
        sums = np.zeros(indptr.shape[0] - 1)
        with np.errstate(over="ignore", under="ignore"):  # the caller rescues such rows
            values = data if self.norm == "l1" else data ** 2
            sums[nonempty] = np.add.reduceat(values, indptr[:-1][nonempty])
        return sums

    def _out_of_range(self, sums):
        """Where a row's sum from :meth:`_row_sums` has lost range or precision.

        An overflowing sum (inf) is lost for either norm. For ``l2`` a sum of
        squares below the smallest normal float64 is too: squares of values
        below about 1.5e-154 are subnormal, with fewer significant bits the
        smaller they are, or 0 ([3e-162, 4e-162] came out with norm 1.006).
        Once the sum is normal, a square rounded in the subnormal range is off
        by at most ``2**-1075``, half an ulp of the sum: no worse than the
        summation's own rounding. An ``l1`` sum of subnormal values is exact
        (subnormals are multiples of ``2**-1074``) and each quotient correctly
        rounded, so only overflow matters there.
        """
        if self.norm == "l1":
            return ~np.isfinite(sums)
        return ~((sums >= np.finfo(np.float64).tiny) & np.isfinite(sums))

    def fit_transform(self, X, y=None):
        """Learn the document frequencies of X, then weigh X by them.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)
            Term counts (or any non-negative weights).
        y : ignored

        Returns
        -------
        X_new : scipy.sparse.csr_matrix of shape (n_documents, n_features)
            ``fit(X).transform(X)``. Sparse, so a ``set_output`` asking for
            a data frame makes it raise ``ValueError``.
        """
        return self.fit(X).transform(X)

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns: the input's, one weight per word.

        Parameters
        ----------
        input_features : array-like of str, default=None
            The input columns' names; by default ``feature_names_in_``, or
            ``x0``, ``x1``, ... without it.

        Returns
        -------
        names : ndarray of str objects, shape (n_features_in_,)
        """
        return self._input_feature_names(input_features).copy()

    def __sklearn_tags__(self):
        # Without them scikit-learn took a pipeline starting with this
        # embedding for one that refuses sparse input.
        return count_transformer_tags()


def spherical_normal_mle(sets):
    """Each set of points as its maximum-likelihood spherical normal.

    Lafferty & Lebanon (2005, section 3.1) represent a data point that is a
    set of vectors x_1, ..., x_m in R^d by the normal N(mu, sigma^2 I) that
    fits it best: ``mu = mean(x_i)`` and
    ``sigma^2 = sum_i |x_i - mu|^2 / (m d)``. The rows returned are what
    ``kernel="hyperbolic"`` reads.

    Parameters
    ----------
    sets : sequence of array-like of shape (m_i, d)
        The sets, each of at least two distinct points of the same
        dimension d >= 1.

    Returns
    -------
    rows : ndarray of shape (len(sets), d + 1)
        ``(mu_1, ..., mu_d, sigma)`` per set.

    Raises
    ------
    ValueError
        If a set is not a finite 2-D array of d columns, or its points are
        all equal (sigma = 0: a point mass, on the boundary of the family),
        or its sigma is below float64's smallest subnormal. Any other finite
        set gets its MLE, computed without overflow or underflow (mu and
        sigma are at most its largest coordinate's magnitude).
    """
    if isinstance(sets, np.ndarray) and sets.ndim == 3:
        sets = list(sets)
    # A mapping's iteration gives its keys, not its sets, and a set's its
    # sets in hash order, which no label can be matched to (reviews).
    if (isinstance(sets, (str, bytes, collections.abc.Mapping, collections.abc.Set))
            or not hasattr(sets, "__len__")):
        raise TypeError(f"sets must be a sequence of 2-D arrays, got {type(sets).__name__}")
    if len(sets) == 0:
        raise ValueError("sets is empty: spherical_normal_mle needs at least one set")
    rows, dimension = [], None
    for i, points in enumerate(sets):
        if sp.issparse(points):
            points = points.toarray()
        try:
            points = as_rectangular(points, f"set {i}", what="points")
        except (TypeError, ValueError, OverflowError) as error:
            raise ValueError(f"set {i} is not an array of numbers: {error}") from None
        # float64's conversion would read digits in strings and count days
        # in dates: only numbers (and booleans) are points.
        if points.dtype.kind not in "biufcO" or (points.dtype == object and not all(
                isinstance(v, (numbers.Number, np.bool_)) for v in points.flat)):
            kind = ({"U": "str", "S": "bytes", "M": "datetime64", "m": "timedelta64"}.get(
                points.dtype.kind, str(points.dtype)) if points.dtype != object else type(next(
                    v for v in points.flat
                    if not isinstance(v, (numbers.Number, np.bool_)))).__name__)
            raise TypeError(f"set {i} must hold numbers, got {kind} values")
        try:
            complex_values = np.iscomplexobj(points) or points.dtype == object and any(
                isinstance(v, numbers.Complex) and not isinstance(v, numbers.Real)
                for v in points.flat)
            if not complex_values and points.dtype == object:
                points = points.astype(np.float64)
        except (TypeError, ValueError, OverflowError) as error:
            raise ValueError(f"set {i} is not an array of numbers: {error}") from None
        if complex_values:
            # float64's conversion would drop the imaginary parts, warning only.
            raise ValueError(f"Complex data not supported; set {i} holds complex numbers")
        points = as_float64(points, f"set {i}")
        if points.ndim != 2 or points.shape[0] < 1 or points.shape[1] < 1:
            raise ValueError(f"set {i} must be a 2-D array of points (m, d), m >= 1, d >= 1; "
                             f"got shape {points.shape}")
        if dimension is None:
            dimension = points.shape[1]
        elif points.shape[1] != dimension:
            raise ValueError(f"set {i} has points of dimension {points.shape[1]}, set 0 of "
                             f"{dimension}: every set must lie in the same R^d")
        largest = np.max(np.abs(points), axis=0)  # NaN where a column holds one
        if not np.all(np.isfinite(largest)):
            raise ValueError(f"set {i} has NaN or infinite coordinates")
        mu, sigma = _mean_and_spread(points, largest)
        if not sigma > 0:
            if np.any(points != points[0]):
                raise ValueError(
                    f"set {i}'s sigma (the root mean square of its points' distances to "
                    f"the mean) is below float64's smallest number, "
                    f"{np.finfo(np.float64).smallest_subnormal:.3g}; scale the points up")
            raise ValueError(
                f"set {i} has sigma = 0 (its {points.shape[0]} point(s) are all equal): a "
                f"point mass, on the boundary of the spherical normal family, where the "
                f"hyperbolic kernel is not defined")
        if not (np.all(np.isfinite(mu)) and np.isfinite(sigma)):
            raise ValueError(
                f"set {i}'s spherical normal lies beyond float64: its mean or sigma (the "
                f"root mean square of its points' distances to the mean) exceeds "
                f"{np.finfo(np.float64).max:.3g}; scale the points down")
        rows.append(np.append(mu, sigma))
    return np.vstack(rows)


# Columns whose largest magnitude lies in [2**-450, 2**450] (or is 0) take
# the plain formulas: their squared deviations stay normal float64 numbers.
_PLAIN_RANGE = (2.0 ** -450, 2.0 ** 450)


def _mean_and_spread(points, largest):
    """``mean(points, axis=0)`` and ``sqrt(sum |x_i - mu|^2 / (m d))`` for any
    finite points, without overflow or underflow in between.

    The plain formulas overflow for coordinates near 1e154 and above (their
    squares; near 1e308 the sums too), and lose a set whose coordinates are
    near 1e-160 and below to squares that underflow (sigma 0: "all equal").
    Sets whose columns all lie within ``_PLAIN_RANGE`` take them (NumPy's
    mean, bit for bit). Others are read column by column in units of a power
    of two near the column's largest magnitude (dividing by one is exact),
    their deviations from the mean in units of a power of two near their own
    largest, and the columns' sums of squares are added relative to the
    largest column's unit: a column's sum that underflows there is far below
    that column's rounding. ``largest``: each column's largest magnitude.
    """
    low, high = _PLAIN_RANGE
    if largest.max() <= high and (largest.min() >= low
                                  or np.all((largest >= low) | (largest == 0))):
        mu = points.mean(axis=0)
        sums = _squared_deviations(points - mu)
        return mu, float(np.sqrt(np.sum(sums) / points.size))
    # max|x| = f 2**e with f in [0.5, 1): units 2**(e - 1) put each column's
    # largest coordinate in [1, 2), and 2**(e - 1) stays finite at e = 1024.
    _, exponent = np.frexp(largest)
    exponent = exponent - 1
    scaled = np.ldexp(points, -exponent)
    mu_scaled = scaled.mean(axis=0)
    with np.errstate(over="ignore"):  # a mean rounded past float64 is refused by the caller
        mu = np.ldexp(mu_scaled, exponent)
    centred = scaled - mu_scaled  # within [-4, 4]
    _, spread_exponent = np.frexp(np.max(np.abs(centred), axis=0))
    deviations = np.ldexp(centred, -spread_exponent)  # largest in [0.5, 1)
    sums = _squared_deviations(deviations)
    varies = sums > 0
    if not np.any(varies):
        return mu, 0.0
    # The sum of squares of column j, in true units, is sums[j] * 4**unit[j].
    unit = (exponent + spread_exponent)[varies]
    top = int(unit.max())
    total = np.sum(np.ldexp(sums[varies], 2 * (unit - top)))
    with np.errstate(over="ignore"):  # likewise an infinite sigma
        sigma = float(np.ldexp(np.sqrt(total / points.size), top))
    return mu, sigma


def _squared_deviations(centred):
    """Per column, ``sum_i (x_ij - mu_j)^2`` from the deviations from the
    rounded mean, ``centred``.

    The rounded mean adds ``m (mu_j - mean_j)^2`` to a plain sum of squares,
    which is not small where the spread is a few ulps of the mean (two
    adjacent doubles: sigma 41 % too large). The corrected two-pass formula
    takes it back out: ``sum c^2 - (sum c)^2 / m``.
    """
    # Columns as contiguous rows: NumPy sums along a contiguous axis
    # pairwise (error O(log m) ulps), down a column one row at a time (O(m)).
    columns = np.ascontiguousarray(centred.T)
    column_sums = columns.sum(axis=1)
    sums = (columns * columns).sum(axis=1) - column_sums * column_sums / centred.shape[0]
    return np.maximum(sums, 0.0)
