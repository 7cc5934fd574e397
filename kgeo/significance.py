"""Paired significance tests for two classifiers scored on the same test documents.

Zhang, Chen & Lee (2005, Table 3) compare NGD against LIN and NED with the
micro sign test of Yang & Liu (1999) and confirm with McNemar's test. Both
look only at the documents on which the two classifiers disagree about
correctness:

- ``b``: documents system A classifies correctly and system B does not;
- ``c``: documents system B classifies correctly and system A does not.

Documents both systems get right, or both get wrong, carry no evidence about
which system is better and are ignored by both tests.

Only NumPy and SciPy are used.
"""

import decimal
import math
import numbers
from dataclasses import dataclass

import numpy as np
import scipy.sparse
from scipy import stats

from ._validation import (KIND_NAMES, _is_infinite_label, as_given_where_mixed, element_kind,
                          is_missing_label, refuse_masked)
from .exceptions import parameter_errors

__all__ = [
    "McNemarResult",
    "SignTestResult",
    "discordant_counts",
    "mcnemar_test",
    "micro_sign_test",
]

# Yang & Liu (1999): "P-value computed by the binomial distribution for n <= 12,
# by the standard normal distribution for Z otherwise".
SIGN_TEST_EXACT_MAX_N = 12
# The usual rule for McNemar's test: the chi-square approximation wants at
# least about 25 discordant pairs (Rosner; statsmodels' documentation).
MCNEMAR_EXACT_BELOW = 25


@dataclass(frozen=True)
class SignTestResult:
    """Result of :func:`micro_sign_test`.

    Attributes
    ----------
    statistic : float
        ``Z = (k - 0.5 n) / (0.5 sqrt(n))``; 0.0 when ``n == 0``.
    pvalue : float
        One-sided P-value of "A is not better than B" against "A is better".
    n : int
        Documents on which exactly one of the two systems is correct.
    k : int
        Of those, the documents system A gets right.
    method : str
        ``"normal"`` or ``"binomial"``: how ``pvalue`` was computed.
    """

    statistic: float
    pvalue: float
    n: int
    k: int
    method: str


@dataclass(frozen=True)
class McNemarResult:
    """Result of :func:`mcnemar_test`.

    Attributes
    ----------
    statistic : float
        ``chi2 = max(|b - c| - 1, 0)^2 / (b + c)`` (continuity-corrected,
        1 degree of freedom) for ``method="chi2"``; ``min(b, c)`` for
        ``method="binomial"``; 0.0 when ``b + c == 0``.
    pvalue : float
        Two-sided P-value of "A and B are equally accurate".
    b : int
        Documents A gets right and B gets wrong.
    c : int
        Documents B gets right and A gets wrong.
    method : str
        ``"chi2"`` or ``"binomial"``.
    """

    statistic: float
    pvalue: float
    b: int
    c: int
    method: str


@parameter_errors()
def _check_exact(exact):
    # Not "exact in (None, True, False)": 1 and 0.0 compare equal to True and
    # False, and an array raises NumPy's own error.
    if exact is not None and not isinstance(exact, (bool, np.bool_)):
        raise ValueError(f"exact must be None, True or False, got {exact!r}")


def _label_kinds(name, arr):
    """The set of label kinds in ``arr``; missing labels (None, NaN) raise."""
    if arr.dtype.kind == "T":
        # NumPy 2's StringDType: str labels, whose missing value (its
        # na_object) only the element-wise route below can find.
        arr = arr.astype(object)
    if arr.dtype.kind != "O":
        if arr.dtype.kind in "fc" and np.isnan(arr).any():
            raise ValueError(f"{name} contains {int(np.isnan(arr).sum())} NaN label(s); every "
                             f"document needs a label")
        if name == "y_true" and arr.dtype.kind in "fc" and np.isinf(arr).any():
            # kgeo.SVM refuses infinite labels (predictions of inf are
            # decision values, which _check_not_scores judges).
            raise ValueError(f"{name} contains {int(np.isinf(arr).sum())} infinite label(s); "
                             f"labels must be finite")
        if arr.dtype.kind in "mM" and np.isnat(arr).any():
            raise ValueError(f"{name} contains {int(np.isnat(arr).sum())} NaT label(s); every "
                             f"document needs a label")
        return {"n" if arr.dtype.kind in "biuf" else arr.dtype.kind}
    # An object array says nothing about its elements: ["a", "b"] against
    # [0, 1] compared unequal everywhere and gave n = 0, P = 1.
    kinds = set()
    n_missing = n_infinite = 0
    for value in arr:
        # None, NaN of any number type (Decimal's signalling one too), NaT.
        if is_missing_label(value):
            n_missing += 1
            continue
        n_infinite += name == "y_true" and _is_infinite_label(value)
        kinds.add(element_kind(value))
    if n_missing:
        raise ValueError(f"{name} contains {n_missing} missing label(s) (None, NaN or NaT); "
                         f"every document needs a label")
    if n_infinite:
        raise ValueError(f"{name} contains {n_infinite} infinite label(s); labels must be "
                         f"finite")
    return kinds


def _describe(name, arr, kinds):
    if arr.dtype.kind != "O":
        return f"{name}: {arr.dtype}"
    shown = [kind_name for kind, kind_name in KIND_NAMES.items() if kind in kinds]
    return f"{name}: object ({', '.join(shown)})"


def _correctness(y_true, pred_a, pred_b):
    """Per-document correctness of A and B, as two boolean arrays."""
    arrays = []
    for name, values in (("y_true", y_true), ("pred_a", pred_a), ("pred_b", pred_b)):
        if values is None or isinstance(values, (str, bytes, set, dict)) or not (
                hasattr(values, "__len__") or hasattr(values, "__array__")):
            raise TypeError(f"{name} must be an array-like of labels, one per document, got "
                            f"{type(values).__name__}")
        if scipy.sparse.issparse(values):
            # np.asarray wraps a sparse matrix as a 0-d object array.
            raise TypeError(f"{name} must be a dense array-like of labels, one per document, "
                            f"got a sparse {type(values).__name__} of shape {values.shape}")
        refuse_masked(values, name, "label(s)", "every document needs a label")
        try:
            arr = np.asarray(values)
        except ValueError as exc:  # ragged nesting
            raise ValueError(f"{name} must be 1D (one label per document): {exc}") from None
        # A list mixing str with other labels became str: the int 1 then
        # equalled the label "1", and NaN became a label.
        arr = as_given_where_mixed(values, arr)
        if arr.ndim == 0 and arr.dtype.kind == "O" and not isinstance(values, np.ndarray):
            # A sized container NumPy cannot read as a sequence (dict.keys(),
            # dict.values()) became one object, reported as a shape ().
            raise TypeError(f"{name} must be an array-like of labels, one per document, got "
                            f"{type(values).__name__}, which NumPy reads as one object: "
                            f"pass a list or an array")
        if arr.ndim not in (1, 2):
            raise ValueError(f"{name} must be 1D (one label per document) or 2D (one decision "
                             f"per document and category), got shape {arr.shape}")
        arrays.append(arr)
    y_true, pred_a, pred_b = arrays
    if any(arr.ndim == 2 for arr in arrays):
        # Multi-label: each (document, category) decision is a trial.
        if not (y_true.shape == pred_a.shape == pred_b.shape):
            raise ValueError(
                f"y_true, pred_a and pred_b must have the same shape, one decision per "
                f"document (and category, for a 2D indicator matrix), got shapes "
                f"{y_true.shape}, {pred_a.shape} and {pred_b.shape}")
        arrays = [arr.ravel() for arr in arrays]
        y_true, pred_a, pred_b = arrays
    if not (y_true.shape[0] == pred_a.shape[0] == pred_b.shape[0]):
        raise ValueError(
            f"y_true, pred_a and pred_b must have one entry per document, got lengths "
            f"{y_true.shape[0]}, {pred_a.shape[0]} and {pred_b.shape[0]}")
    if y_true.shape[0] == 0:
        raise ValueError("y_true, pred_a and pred_b are empty; the tests need documents")
    # Labels of different kinds (strings against numbers) never compare equal:
    # every document would count as wrong for both systems, silently. Object
    # arrays are judged by their elements, like sklearn's "Mix of label input
    # types": a mix inside one array is refused too.
    names = ("y_true", "pred_a", "pred_b")
    kinds = [_label_kinds(name, arr) for name, arr in zip(names, arrays)]
    if len(set().union(*kinds)) > 1:
        if all(arr.dtype.kind != "O" for arr in arrays):
            got = f"dtypes {y_true.dtype}, {pred_a.dtype} and {pred_b.dtype}"
        else:
            got = "; ".join(_describe(n, a, k) for n, a, k in zip(names, arrays, kinds))
        raise TypeError(
            f"y_true, pred_a and pred_b must hold labels of one kind, got {got}; labels of "
            f"different kinds (numbers, str, bytes) never compare equal")
    for name, pred in (("pred_a", pred_a), ("pred_b", pred_b)):
        _check_not_scores(name, pred, y_true)
    return pred_a == y_true, pred_b == y_true


def _check_not_scores(name, pred, y_true):
    """Refuse decision values or probabilities passed as predictions.

    They compare unequal to every label, so both systems would be wrong
    everywhere and the tests would find no difference (b = c = 0, P = 1):
    a silent "no evidence". Refused when over half the predictions are not
    labels of ``y_true`` and at least one of those is not a whole number (or
    is infinite): predictions that are all whole numbers pass, and so do
    fractional labels while over half the predictions are labels of y_true
    (labels like 0.5 that y_true mostly lacks: compare them as integers or
    strings instead).
    """
    if pred.dtype.kind == "O":
        # Numbers held as Python objects (scores listed with an int among
        # them, Decimals, Fractions): judged one by one as they are, since
        # not every one of them has a float64.
        if not all(isinstance(v, (numbers.Real, decimal.Decimal, np.bool_)) for v in pred):
            return
        labels = set(y_true.tolist())
        outside = np.fromiter((v not in labels for v in pred), bool, pred.shape[0])
        values = pred[outside]
        fractional = np.fromiter((not _is_whole_number(v) for v in values), bool, values.shape[0])
        floats = {np.dtype(type(v)) for v in values if isinstance(v, (float, np.floating))}
        float_dtype = floats.pop() if len(floats) == 1 else None
    elif pred.dtype.kind == "f":
        outside = ~np.isin(pred, y_true)
        values = pred[outside]
        fractional = ~np.isfinite(values) | (values != np.round(values))
        float_dtype = pred.dtype
    else:
        return
    if outside.mean() <= 0.5 or not fractional.any():
        return
    examples = ", ".join(_short_number(v) for v in values[fractional][:3])
    precision = (f"; or labels of another precision than y_true's ({float_dtype} against "
                 f"{y_true.dtype}), which differ from them in the last digits"
                 if y_true.dtype.kind == "f" and float_dtype is not None
                 and float_dtype != y_true.dtype else "")
    raise ValueError(
        f"{name} holds {int(outside.sum())} values of {pred.shape[0]} that are not labels "
        f"of y_true, such as {examples}: they look like decision values or probabilities "
        f"(decision_function's, predict_proba's); pass the predicted labels (predict's "
        f"output){precision}; fractional labels that y_true mostly lacks look alike: pass "
        f"those as int or str")


def _is_whole_number(value):
    """Whether a real number (int, bool, float, Decimal, Fraction, NumPy
    scalar) is a finite whole number, judged in its own precision."""
    if isinstance(value, (numbers.Integral, np.bool_)):
        return True
    if isinstance(value, decimal.Decimal):
        return value.is_finite() and value == value.to_integral_value()
    if isinstance(value, numbers.Rational):
        return value.denominator == 1
    if isinstance(value, (float, np.floating)):  # np.longdouble too, without a float()
        return bool(np.isfinite(value) and value == np.floor(value))
    value = float(value)
    return math.isfinite(value) and value.is_integer()


def _short_number(value):
    """A float as ``.4g`` (wider ones in their own precision); another number
    as it prints (a Fraction as 1/3), cut at 20 characters (an int of 400
    digits)."""
    if isinstance(value, (float, np.float64, np.float32, np.float16)):
        return f"{value:.4g}"
    if isinstance(value, np.floating):
        return np.format_float_scientific(value, precision=3, trim="-")
    text = str(value)
    return text if len(text) <= 20 else text[:17] + "..."


def discordant_counts(y_true, pred_a, pred_b):
    """Count the documents on which exactly one system is correct.

    Parameters
    ----------
    y_true, pred_a, pred_b : array-like of shape (n_documents,) or (n_documents, n_categories)
        True labels and the predicted labels of systems A and B (not their
        decision values). For a multi-label task, indicator matrices of the
        same shape: each (document, category) decision is one entry.
        Predictions over half of which are not labels of ``y_true``, some of
        those fractional, are refused as decision values; fractional labels
        that ``y_true`` mostly lacks look alike, so pass such labels as int
        or str.

    Returns
    -------
    b : int
        Documents A gets right and B gets wrong.
    c : int
        Documents B gets right and A gets wrong.
    """
    right_a, right_b = _correctness(y_true, pred_a, pred_b)
    return int(np.count_nonzero(right_a & ~right_b)), int(np.count_nonzero(~right_a & right_b))


def micro_sign_test(y_true, pred_a, pred_b, *, exact=None):
    """Yang & Liu's micro sign test (s-test) of "system A is better than B".

    Each document is a trial: ``n`` is the number of documents on which
    exactly one system is correct, ``k`` the number of those that A gets
    right. Under the null hypothesis both systems are equally good and ``k``
    is Binomial(n, 1/2). The statistic is

        Z = (k - 0.5 n) / (0.5 sqrt(n)),

    and the P-value is one-sided (large ``k`` favours A), as in Yang & Liu
    (1999, section 4.1) and Zhang, Chen & Lee (2005, Table 3).

    Yang & Liu define the micro test over binary (document, category)
    decisions. For a single-label task this function takes one trial per
    document ("the decision on document i is correct"), the reading of
    Zhang, Chen & Lee's Table 3 that their Z values support (see
    docs/reproducing.md); for a multi-label task pass one entry per
    (document, category) decision (the indicator matrices themselves), Yang
    & Liu's own test.

    Parameters
    ----------
    y_true, pred_a, pred_b : array-like of shape (n_documents,) or (n_documents, n_categories)
        True labels and the predicted labels of systems A and B (not their
        decision values). For a multi-label task, indicator matrices of the
        same shape: each (document, category) decision is one entry.
        Predictions over half of which are not labels of ``y_true``, some of
        those fractional, are refused as decision values; fractional labels
        that ``y_true`` mostly lacks look alike, so pass such labels as int
        or str.
    exact : bool or None, default=None
        How to compute the P-value. None follows Yang & Liu: the exact
        binomial tail ``P(K >= k)`` when ``n <= 12``, the standard normal
        tail of Z otherwise. True always uses the binomial tail, False always
        the normal one.

    Returns
    -------
    result : SignTestResult
        ``statistic`` (Z), ``pvalue``, ``n``, ``k`` and ``method``. With
        ``n == 0`` (the systems agree everywhere) Z is 0.0 and the P-value 1.0.

    References
    ----------
    Y. Yang and X. Liu, "A re-examination of text categorization methods",
    SIGIR 1999.

    Examples
    --------
    >>> r = micro_sign_test([0, 0, 1, 1, 2], [0, 0, 1, 1, 0], [1, 0, 0, 1, 2])
    >>> r.n, r.k, r.method
    (3, 2, 'binomial')
    """
    _check_exact(exact)
    b, c = discordant_counts(y_true, pred_a, pred_b)
    n, k = b + c, b
    if n == 0:
        return SignTestResult(statistic=0.0, pvalue=1.0, n=0, k=0,
                              method="binomial" if exact is None or exact else "normal")
    z = (k - 0.5 * n) / (0.5 * np.sqrt(n))
    use_exact = n <= SIGN_TEST_EXACT_MAX_N if exact is None else exact
    if use_exact:
        # P(K >= k) for K ~ Binomial(n, 1/2): the survival function at k - 1.
        pvalue = float(stats.binom.sf(k - 1, n, 0.5))
        method = "binomial"
    else:
        pvalue = float(stats.norm.sf(z))
        method = "normal"
    return SignTestResult(statistic=float(z), pvalue=pvalue, n=n, k=k, method=method)


def mcnemar_test(y_true, pred_a, pred_b, *, exact=None):
    """McNemar's test of "systems A and B are equally accurate".

    With ``b`` documents that only A gets right and ``c`` that only B gets
    right, the continuity-corrected statistic

        chi2 = max(|b - c| - 1, 0)^2 / (b + c)

    is referred to the chi-square distribution with 1 degree of freedom
    (two-sided). The exact version computes the two-sided binomial P-value
    ``min(1, 2 P(K <= min(b, c)))`` for K ~ Binomial(b + c, 1/2).

    Parameters
    ----------
    y_true, pred_a, pred_b : array-like of shape (n_documents,) or (n_documents, n_categories)
        True labels and the predicted labels of systems A and B (not their
        decision values). For a multi-label task, indicator matrices of the
        same shape: each (document, category) decision is one entry.
        Predictions over half of which are not labels of ``y_true``, some of
        those fractional, are refused as decision values; fractional labels
        that ``y_true`` mostly lacks look alike, so pass such labels as int
        or str.
    exact : bool or None, default=None
        None uses the exact binomial test when ``b + c < 25`` and the
        chi-square approximation otherwise; True or False forces one.

    Returns
    -------
    result : McNemarResult
        ``statistic``, ``pvalue``, ``b``, ``c`` and ``method``. With
        ``b + c == 0`` the statistic is 0.0 and the P-value 1.0.

    References
    ----------
    Q. McNemar, "Note on the sampling error of the difference between
    correlated proportions or percentages", Psychometrika 12, 1947;
    T.G. Dietterich, "Approximate statistical tests for comparing supervised
    classification learning algorithms", Neural Computation 10, 1998.

    Examples
    --------
    >>> r = mcnemar_test([0] * 40, [0] * 30 + [1] * 10, [0] * 10 + [1] * 30)
    >>> r.b, r.c, r.method, r.pvalue == 2 * 0.5 ** 20
    (20, 0, 'binomial', True)
    """
    _check_exact(exact)
    b, c = discordant_counts(y_true, pred_a, pred_b)
    n = b + c
    use_exact = n < MCNEMAR_EXACT_BELOW if exact is None else exact
    if n == 0:
        return McNemarResult(statistic=0.0, pvalue=1.0, b=0, c=0,
                             method="binomial" if use_exact else "chi2")
    if use_exact:
        low = min(b, c)
        pvalue = min(1.0, 2.0 * float(stats.binom.cdf(low, n, 0.5)))
        return McNemarResult(statistic=float(low), pvalue=pvalue, b=b, c=c, method="binomial")
    chi2 = max(abs(b - c) - 1, 0) ** 2 / n
    pvalue = float(stats.chi2.sf(chi2, 1))
    return McNemarResult(statistic=float(chi2), pvalue=pvalue, b=b, c=c, method="chi2")
