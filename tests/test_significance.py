"""Tests for kgeo.significance: the micro sign test and McNemar's test.

References are hand-computed values and scipy.stats.binomtest / chi2.
"""

import decimal
import fractions
import math
import re

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from kgeo.significance import (
    SIGN_TEST_EXACT_MAX_N,
    discordant_counts,
    mcnemar_test,
    micro_sign_test,
)


def _predictions(n_both, n_only_a, n_only_b, n_neither, n_classes=3):
    """Labels and two prediction vectors with the given correctness pattern."""
    y = np.arange(n_both + n_only_a + n_only_b + n_neither) % n_classes
    wrong = (y + 1) % n_classes
    a = np.concatenate([y[:n_both + n_only_a], wrong[n_both + n_only_a:]])
    b = np.concatenate([y[:n_both], wrong[n_both:n_both + n_only_a],
                        y[n_both + n_only_a:n_both + n_only_a + n_only_b],
                        wrong[n_both + n_only_a + n_only_b:]])
    # Both wrong, and wrong differently: still no evidence for either system.
    b[n_both + n_only_a + n_only_b:] = (y[n_both + n_only_a + n_only_b:] + 2) % n_classes
    return y, a, b


def test_discordant_counts():
    y, a, b = _predictions(n_both=50, n_only_a=7, n_only_b=3, n_neither=20)
    assert discordant_counts(y, a, b) == (7, 3)
    assert discordant_counts(y, b, a) == (3, 7)


def test_sign_test_hand_computed_normal():
    # n = 100 discordant documents, A right on k = 65: Z = (65 - 50) / (0.5 * 10) = 3.
    y, a, b = _predictions(n_both=400, n_only_a=65, n_only_b=35, n_neither=50)
    r = micro_sign_test(y, a, b)
    assert (r.n, r.k, r.method) == (100, 65, "normal")
    assert r.statistic == pytest.approx(3.0)
    assert r.pvalue == pytest.approx(stats.norm.sf(3.0))
    assert r.pvalue == pytest.approx(0.0013499, rel=1e-4)


def test_sign_test_is_antisymmetric():
    y, a, b = _predictions(n_both=10, n_only_a=30, n_only_b=14, n_neither=5)
    ab, ba = micro_sign_test(y, a, b), micro_sign_test(y, b, a)
    assert ab.statistic == pytest.approx(-ba.statistic)
    assert ab.pvalue + ba.pvalue == pytest.approx(1.0)  # continuous normal tails


@pytest.mark.parametrize("n_only_a, n_only_b", [(5, 0), (9, 3), (6, 6), (2, 10), (1, 0)])
def test_sign_test_small_n_is_exact_binomial(n_only_a, n_only_b):
    y, a, b = _predictions(n_both=20, n_only_a=n_only_a, n_only_b=n_only_b, n_neither=4)
    r = micro_sign_test(y, a, b)
    n = n_only_a + n_only_b
    assert n <= SIGN_TEST_EXACT_MAX_N and r.method == "binomial"
    expected = stats.binomtest(n_only_a, n, 0.5, alternative="greater").pvalue
    assert r.pvalue == pytest.approx(expected, rel=1e-12)
    assert r.statistic == pytest.approx((n_only_a - 0.5 * n) / (0.5 * math.sqrt(n)))


def test_sign_test_hand_computed_binomial():
    # k = 5 of n = 5: P = 0.5 ** 5.
    y, a, b = _predictions(n_both=3, n_only_a=5, n_only_b=0, n_neither=0)
    assert micro_sign_test(y, a, b).pvalue == pytest.approx(1 / 32)


def test_sign_test_threshold_and_forcing():
    y, a, b = _predictions(n_both=0, n_only_a=9, n_only_b=4, n_neither=0)  # n = 13
    assert micro_sign_test(y, a, b).method == "normal"
    exact = micro_sign_test(y, a, b, exact=True)
    assert exact.method == "binomial"
    assert exact.pvalue == pytest.approx(
        stats.binomtest(9, 13, 0.5, alternative="greater").pvalue)
    y, a, b = _predictions(n_both=0, n_only_a=9, n_only_b=3, n_neither=0)  # n = 12
    assert micro_sign_test(y, a, b).method == "binomial"
    assert micro_sign_test(y, a, b, exact=False).method == "normal"


def test_sign_test_no_disagreement():
    y = np.array([0, 1, 2, 0])
    r = micro_sign_test(y, y, y)
    assert (r.statistic, r.pvalue, r.n, r.k) == (0.0, 1.0, 0, 0)


def test_sign_test_accepts_string_labels():
    y = np.array(["a", "b", "c", "a"])
    r = micro_sign_test(y, ["a", "b", "c", "c"], ["b", "b", "a", "c"])
    assert (r.n, r.k) == (2, 2)


def test_mcnemar_hand_computed_chi2():
    # b = 40, c = 20: chi2 = (|40 - 20| - 1)^2 / 60 = 361 / 60.
    y, a, b = _predictions(n_both=100, n_only_a=40, n_only_b=20, n_neither=10)
    r = mcnemar_test(y, a, b)
    assert (r.b, r.c, r.method) == (40, 20, "chi2")
    assert r.statistic == pytest.approx(361 / 60)
    assert r.pvalue == pytest.approx(stats.chi2.sf(361 / 60, 1))
    assert r.pvalue == pytest.approx(0.014171, rel=1e-3)
    swapped = mcnemar_test(y, b, a)
    assert swapped.statistic == pytest.approx(r.statistic)
    assert swapped.pvalue == pytest.approx(r.pvalue)


def test_mcnemar_equal_counts_gives_zero_statistic():
    # The correction never makes the statistic negative or > 0 when b == c.
    y, a, b = _predictions(n_both=5, n_only_a=30, n_only_b=30, n_neither=0)
    r = mcnemar_test(y, a, b)
    assert r.statistic == 0.0 and r.pvalue == pytest.approx(1.0)


@pytest.mark.parametrize("n_only_a, n_only_b", [(7, 1), (3, 9), (5, 5), (0, 4), (12, 11)])
def test_mcnemar_exact_is_two_sided_binomial(n_only_a, n_only_b):
    y, a, b = _predictions(n_both=20, n_only_a=n_only_a, n_only_b=n_only_b, n_neither=3)
    r = mcnemar_test(y, a, b)
    assert r.method == "binomial"
    expected = stats.binomtest(n_only_a, n_only_a + n_only_b, 0.5,
                               alternative="two-sided").pvalue
    assert r.pvalue == pytest.approx(expected, rel=1e-12)


def test_mcnemar_forcing_and_empty():
    y, a, b = _predictions(n_both=5, n_only_a=8, n_only_b=2, n_neither=1)
    assert mcnemar_test(y, a, b, exact=False).method == "chi2"
    assert mcnemar_test(y, a, b, exact=False).statistic == pytest.approx(25 / 10)
    y, a, b = _predictions(n_both=5, n_only_a=60, n_only_b=20, n_neither=1)
    assert mcnemar_test(y, a, b, exact=True).method == "binomial"
    r = mcnemar_test([1, 2], [1, 2], [1, 2])
    assert (r.statistic, r.pvalue) == (0.0, 1.0)


def test_mcnemar_and_sign_test_agree_in_direction_and_size():
    y, a, b = _predictions(n_both=1000, n_only_a=150, n_only_b=80, n_neither=200)
    sign, mcnemar = micro_sign_test(y, a, b), mcnemar_test(y, a, b)
    # Without the continuity correction chi2 would be Z^2; with it, chi2 is the
    # square of Z computed on |b - c| - 1, and its P-value twice that Z's normal tail.
    assert sign.statistic ** 2 == pytest.approx((150 - 80) ** 2 / 230)
    z_corrected = (150 - 80 - 1) / math.sqrt(230)
    assert mcnemar.statistic == pytest.approx(z_corrected ** 2)
    assert mcnemar.pvalue == pytest.approx(2 * stats.norm.sf(z_corrected))
    assert sign.pvalue < mcnemar.pvalue < 2 * sign.pvalue * 1.5


@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
def test_indicator_matrices_count_each_document_and_category(test):
    """Multi-label: one trial per (document, category) decision, the same as
    the flattened matrices."""
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 2, (50, 4))
    a = np.where(rng.random((50, 4)) < 0.9, truth, 1 - truth)
    b = np.where(rng.random((50, 4)) < 0.7, truth, 1 - truth)
    assert test(truth, a, b) == test(truth.ravel(), a.ravel(), b.ravel())
    assert discordant_counts(truth, a, b) == discordant_counts(truth.ravel(), a.ravel(),
                                                               b.ravel())


@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
def test_indicator_matrices_are_one_shape_and_checked_entry_by_entry(test):
    """pred_b of another shape is refused as pred_a is (a 1-D row would
    broadcast into decisions never made); decision values in a matrix are
    counted by entry (50 documents x 4 categories), and a missing label in
    an object matrix is found."""
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 2, (50, 4))
    for other in (truth.ravel(), truth.T):
        with pytest.raises(ValueError, match=r"must have the same shape.*got shapes \(50, 4\), "
                                             r"\(50, 4\) and " + re.escape(str(other.shape))):
            test(truth, truth, other)
    with pytest.raises(ValueError, match=r"pred_a holds 200 values of 200 that are not labels"):
        test(truth, rng.normal(size=(50, 4)) + truth, truth)
    objects = truth.astype(object)
    objects[3, 2] = None
    with pytest.raises(ValueError, match=r"pred_b contains 1 missing label"):
        test(truth, truth, objects)


@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
def test_decision_values_passed_as_predictions_are_refused(test):
    """Found by a user's workflow: decision values compare unequal to every
    label, so both systems were wrong everywhere and the test reported no
    difference (b = c = 0, P = 1) where the predictions differ at P = 2e-6."""
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 60)
    scores = rng.normal(size=60) + y
    with pytest.raises(ValueError, match=r"pred_a holds 60 values of 60 that are not labels of "
                                         r"y_true, such as .*look like decision values or "
                                         r"probabilities .*pass the predicted labels.* "
                                         r"pass those as int or str"):
        test(y, scores, (scores > 0.5).astype(int))
    with pytest.raises(ValueError, match=r"pred_b holds"):
        test(y, y, rng.random(60))  # probabilities
    # Whole numbers, and labels y_true lacks in a minority, are predictions.
    test(y.astype(float), (y + 0.0), np.ones(60))
    test(np.zeros(60), np.zeros(60), np.r_[np.zeros(40), np.full(20, 0.5)])
    test(np.zeros(60), np.full(60, 3.0), np.zeros(60))  # a label y_true lacks, everywhere
    # Scores in an object array, and infinite ones, are scores too: with an
    # int among them (a label: 59 of 60 are not), or as Decimals or Fractions.
    with pytest.raises(ValueError, match=r"pred_a holds 60 values"):
        test(y, np.array(list(scores), dtype=object), y)
    mixed = list(scores[:-1]) + [1]
    with pytest.raises(ValueError, match=r"pred_a holds 59 values of 60 .*such as"):
        test(y, np.array(mixed, dtype=object), y)
    for kind in (decimal.Decimal, fractions.Fraction):
        exact = np.array([kind(float(v)) for v in scores], dtype=object)
        with pytest.raises(ValueError, match=r"pred_b holds 60 values of 60"):
            test(y, y, exact)
        whole = np.array([kind(int(v)) for v in y], dtype=object)
        assert test(y, whole, y) == test(y, y, y)
    # Shown as they print, cut short beyond 20 characters (401 digits here,
    # beyond float64; the Decimal's float would be 0).
    with pytest.raises(ValueError, match=r"such as 1/3, 1/3, 1/3: they look"):
        test(y, np.array([fractions.Fraction(1, 3)] * 60, dtype=object), y)
    with pytest.raises(ValueError, match=r"such as 20000000000000000\.\.\., "):
        test(y, np.array([fractions.Fraction(2 * 10**400 + 1, 2)] * 60, dtype=object), y)
    with pytest.raises(ValueError, match=r"such as 1\.5E-400, "):
        test(y, np.array([decimal.Decimal("1.5e-400")] * 60, dtype=object), y)
    # Judged in their own precision: a long double 2**53 + 0.5 is no whole
    # number (its float() is), and a NumPy bool among scores is a number.
    if np.finfo(np.longdouble).nmant > 52:
        wide = np.longdouble(2**53) + np.longdouble(0.5)
        with pytest.raises(ValueError, match=r"pred_a holds 60 values"):
            test(y, np.array([wide] * 60, dtype=object), y)
    with pytest.raises(ValueError, match=r"pred_a holds 59 values"):
        test(y, np.array([np.True_] + list(scores[1:]), dtype=object), y)
    with pytest.raises(ValueError, match=r"pred_a holds 60 values of 60 .*such as inf"):
        test(y, np.full(60, np.inf), y)
    # Labels of another float precision: said so, and only then.
    labels = np.array([0.1, 0.2, 0.3] * 20)
    with pytest.raises(ValueError, match=r"another precision than y_true's \(float64 against "
                                         r"float32\)"):
        test(labels.astype(np.float32), labels, labels)
    with pytest.raises(ValueError, match=r"pass the predicted labels \(predict's output\); "
                                         r"fractional labels .*as int or str$"):
        test(y.astype(float), scores, y)
    with pytest.raises(ValueError, match=r"pass the predicted labels \(predict's output\); "
                                         r"fractional labels .*as int or str$"):
        test(y.astype(float), np.array(list(scores), dtype=object), y)
    # Floats held in an object array are float64 against float32 too.
    with pytest.raises(ValueError, match=r"another precision than y_true's \(float64 against "
                                         r"float32\)"):
        test(labels.astype(np.float32), np.array(list(labels), dtype=object), labels)


@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
def test_the_score_check_counts_labels_of_y_true_not_agreement(test):
    """Predictions are judged by whether they are labels y_true has, not by
    whether they are right: fractional labels (0.5, 1.5) wrong on most
    documents are predictions of a bad system. Exactly half outside y_true's
    labels is not over half."""
    y = np.array([0.5, 1.5] * 20)
    wrong = y[::-1].copy()
    wrong[:4] = y[:4]
    assert discordant_counts(y, y, wrong) == (36, 0)
    test(y, wrong, y)
    zeros = np.zeros(40)
    test(zeros, zeros, np.r_[np.zeros(20), np.full(20, 0.5)])
    with pytest.raises(ValueError, match=r"pred_b holds 21 values of 40"):
        test(zeros, zeros, np.r_[np.zeros(19), np.full(21, 0.5)])


@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
def test_bad_input(test):
    with pytest.raises(ValueError, match="one entry per document"):
        test([0, 1, 2], [0, 1], [0, 1, 2])
    with pytest.raises(ValueError, match=r"must be 1D \(one label per document\) or 2D"):
        test([[[0, 1]]], [[[0, 1]]], [[[0, 1]]])
    with pytest.raises(ValueError, match=r"must have the same shape.*got shapes \(1, 2\), "
                                         r"\(2,\) and \(1, 2\)"):
        test([[0, 1]], [0, 1], [[0, 1]])
    # NumPy's "inhomogeneous shape" error used to name no argument.
    with pytest.raises(ValueError, match=r"y_true must be 1D \(one label per document\): "):
        test([[0], [1, 2]], [0, 1], [0, 1])
    # A sparse matrix became a 0-d object array: "got shape ()".
    with pytest.raises(TypeError, match=r"y_true must be a dense array-like of labels, one per "
                                        r"document, got a sparse csr_matrix of shape \(1, 2\)"):
        test(sp.csr_matrix([[0, 1]]), [0, 1], [0, 1])
    # 1 and 0.0 used to pass as True and False, an array to raise NumPy's error.
    for exact in ("yes", 1, 0.0, np.array([True, False])):
        with pytest.raises(ValueError, match="exact must be None, True or False"):
            test([0], [0], [0], exact=exact)
    assert test([0], [0], [0], exact=np.bool_(True)).pvalue == 1.0


@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
@pytest.mark.parametrize("args, error, match", [
    (([], [], []), ValueError, r"y_true, pred_a and pred_b are empty"),
    (([0, np.nan], [0, 1], [0, 1]), ValueError, r"y_true contains 1 NaN label\(s\)"),
    ((np.array([0, np.nan], dtype=complex), [0, 1], [0, 1]), ValueError,
     r"y_true contains 1 NaN label\(s\)"),
    ((["a", "b"], [0, 1], [0, 1]), TypeError, r"labels of one kind, got dtypes <U1, int64 and "
                                              r"int64"),
    ((None, [0], [0]), TypeError, r"y_true must be an array-like of labels, one per document, "
                                  r"got NoneType"),
    (([0, 1], (p for p in [0, 1]), [0, 1]), TypeError, r"pred_a must be an array-like .* got "
                                                       r"generator"),
], ids=["empty", "nan-label", "complex-nan-label", "strings-vs-ints", "none", "generator"])
def test_inputs_that_would_give_a_meaningless_p_value(test, args, error, match):
    # Each used to return a P-value (empty: 1.0; strings against ints: n = 0).
    with pytest.raises(error, match=match):
        test(*args)


def test_str_against_bytes_labels_refused():
    with pytest.raises(TypeError, match="labels of one kind"):
        mcnemar_test(["a", "b"], [b"a", b"b"], [b"a", b"a"])


# Object arrays: their dtype says nothing about the labels, so the elements are
# checked. Every public function goes through the same guard.
PUBLIC_TESTS = [discordant_counts, micro_sign_test, mcnemar_test]


def _objects(values):
    out = np.empty(len(values), dtype=object)
    out[:] = values  # element by element: tuples stay tuples
    return out


@pytest.mark.parametrize("test", PUBLIC_TESTS)
@pytest.mark.parametrize("args, match", [
    # The review's case: it returned n = 0, P = 1.0.
    ((_objects(["a", "b", "a"]), [0, 1, 0], [1, 0, 1]),
     r"labels of one kind, got y_true: object \(str\); pred_a: int64; pred_b: int64"),
    ((np.array(["a", "b", "a"]), _objects([0, 1, 0]), _objects([1.0, 0.0, 1.0])),
     r"got y_true: <U1; pred_a: object \(numbers\); pred_b: object \(numbers\)"),
    ((_objects(["a", "b", "a"]), _objects([b"a", b"b", b"a"]), ["a", "b", "a"]),
     r"pred_a: object \(bytes\)"),
    ((_objects(["a", 1, "a"]), _objects(["a", 1, "a"]), _objects(["a", 1, "b"])),
     r"y_true: object \(numbers, str\)"),  # a mix inside one array, as sklearn refuses
    ((_objects([(0, 1), (1, 0)]), [0, 1], [0, 1]),
     r"y_true: object \(other objects\); pred_a: int64"),
], ids=["str-vs-int", "U-vs-object-numbers", "str-vs-bytes", "mixed-within", "tuples-vs-int"])
def test_object_arrays_of_other_label_kinds_refused(test, args, match):
    with pytest.raises(TypeError, match=match):
        test(*args)


@pytest.mark.parametrize("test", PUBLIC_TESTS)
@pytest.mark.parametrize("args, match", [
    ((_objects([None, 1, 0]), [0, 1, 0], [1, 0, 1]), r"y_true contains 1 missing label\(s\)"),
    (([0, 1, 0], [0, 1, 0], _objects([np.nan, 1, float("nan")])),
     r"pred_b contains 2 missing label\(s\) \(None, NaN or NaT\); every document needs a label"),
    ((["a", "b", "a"], _objects(["a", None, "a"]), ["a", "b", "b"]),
     r"pred_a contains 1 missing label\(s\)"),
    ((_objects([np.float64("nan"), 1.0]), [1, 0], [1, 1]), r"y_true contains 1 missing"),
], ids=["none", "nan-in-pred", "none-among-str", "np-nan"])
def test_missing_labels_in_object_arrays_refused(test, args, match):
    # None never equals a label and NaN not even itself: the document would
    # silently count as wrong (both None: as right) instead of being reported.
    with pytest.raises(ValueError, match=match):
        test(*args)


class NAType:
    """Stands in for pandas' NA (``pd.NA``), recognised by its type's name and
    module so that kgeo need not import pandas."""

    __module__ = "pandas._libs.missing"

    def __eq__(self, other):
        raise TypeError("boolean value of NA is ambiguous")  # as pd.NA's comparison

    __hash__ = object.__hash__


@pytest.mark.parametrize("test", PUBLIC_TESTS)
def test_pandas_missing_values_are_missing_labels(test):
    # A pandas "string" or "boolean" Series with NA reached NumPy as an object
    # array, refused as labels "of different kinds" (or, all NA, with pandas'
    # own "boolean value of NA is ambiguous").
    with pytest.raises(ValueError, match=r"pred_a contains 2 missing label\(s\)"):
        test(["a", "b", "a"], _objects([NAType(), "b", NAType()]), ["a", "b", "b"])
    pd = pytest.importorskip("pandas")
    y = pd.Series(["a", "b", "a"], dtype="string")
    with pytest.raises(ValueError, match=r"pred_b contains 1 missing label\(s\)"):
        test(y, y, pd.Series(["a", pd.NA, "a"], dtype="string"))
    with pytest.raises(ValueError, match=r"y_true contains 3 missing label\(s\)"):
        test(pd.Series([pd.NA] * 3, dtype="boolean"), [True] * 3, [False] * 3)
    with pytest.raises(ValueError, match=r"pred_a contains 1 missing label\(s\)"):
        test(_objects([pd.Timestamp(0)] * 2), _objects([pd.NaT, pd.Timestamp(0)]),
             _objects([pd.Timestamp(0)] * 2))


@pytest.mark.skipif(not hasattr(np, "dtypes") or not hasattr(np.dtypes, "StringDType"),
                    reason="NumPy's StringDType is NumPy 2.0's")
@pytest.mark.parametrize("test", PUBLIC_TESTS)
def test_numpy_string_dtype_labels_are_str_labels(test):
    # Its dtype kind "T" was taken for a kind of its own, refused against str
    # labels, and its missing values (na_object) counted as wrong predictions.
    strings = np.dtypes.StringDType()
    y, a, b = ["spam", "ham", "ham", "spam"], ["spam", "ham", "spam", "spam"], ["ham"] * 4
    assert test(np.array(y, dtype=strings), a, b) == test(y, a, b)
    assert test(y, np.array(a, dtype=strings), np.array(b, dtype="U8")) == test(y, a, b)
    with_na = np.dtypes.StringDType(na_object=None)
    with pytest.raises(ValueError, match=r"pred_a contains 1 missing label\(s\)"):
        test(np.array(y, dtype=with_na), np.array([None] + a[1:], dtype=with_na), b)


@pytest.mark.parametrize("test", PUBLIC_TESTS)
def test_object_arrays_of_one_kind_match_typed_arrays(test):
    # Refusing mixes must not refuse what compares correctly: object arrays of
    # one kind give exactly the typed arrays' result.
    y, a, b = _predictions(n_both=6, n_only_a=5, n_only_b=2, n_neither=3)
    reference = test(y, a, b)
    # Numbers of different Python and NumPy types still compare by value.
    mixed_numbers = _objects([float(v) if i % 3 == 0 else np.int64(v) if i % 3 == 1 else int(v)
                              for i, v in enumerate(y)])
    assert test(mixed_numbers, _objects(list(a)), b) == reference
    letters = np.array(list("xyz"))
    assert test(_objects(list(letters[y])), letters[a], _objects(list(letters[b]))) == reference
    pairs = [(0, "x"), (1, "y"), (2, "z")]
    assert test(_objects([pairs[v] for v in y]), _objects([pairs[v] for v in a]),
                _objects([pairs[v] for v in b])) == reference


def test_mcnemar_threshold_is_25_discordant_documents():
    """Below 25 discordant documents the exact binomial test, from 25 on the
    chi2 with continuity correction (the other tests use <= 23 and >= 60)."""
    from kgeo.significance import MCNEMAR_EXACT_BELOW, mcnemar_test

    assert MCNEMAR_EXACT_BELOW == 25
    for b, c, method in ((16, 8, "binomial"), (17, 8, "chi2")):
        y = np.zeros(b + c + 5, dtype=int)
        a, p = y.copy(), y.copy()
        a[b:b + c] = 1  # A wrong on c documents
        p[:b] = 1       # B wrong on b documents
        r = mcnemar_test(y, a, p)
        assert (r.b, r.c, r.method) == (b, c, method)
        if method == "chi2":
            assert r.pvalue == pytest.approx(stats.chi2.sf((b - c - 1) ** 2 / (b + c), 1))
        else:
            assert r.pvalue == pytest.approx(
                stats.binomtest(b, b + c, 0.5, alternative="two-sided").pvalue)


# Found by mutation testing (second round): the n == 0 method under forcing,
# bool labels, and non-finite scores held as Python objects.

def test_no_disagreement_reports_the_forced_method():
    # S14/S25: with b + c == 0 the result still names the method asked for.
    y = np.array([0, 1, 2, 0])
    assert micro_sign_test(y, y, y).method == "binomial"
    assert micro_sign_test(y, y, y, exact=True).method == "binomial"
    assert micro_sign_test(y, y, y, exact=False).method == "normal"
    # NumPy's bools, which _check_exact accepts, alike (np.False_ is not False).
    assert micro_sign_test(y, y, y, exact=np.False_).method == "normal"
    assert micro_sign_test(y, y, y, exact=np.True_).method == "binomial"
    assert mcnemar_test(y, y, y).method == "binomial"  # 0 < 25
    assert mcnemar_test(y, y, y, exact=True).method == "binomial"
    r = mcnemar_test(y, y, y, exact=False)
    assert (r.statistic, r.pvalue, r.b, r.c, r.method) == (0.0, 1.0, 0, 0, "chi2")


@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
def test_bool_labels_are_numbers_like_ints(test):
    # S4: a bool dtype is one label kind with ints (True == 1), as in sklearn.
    y = np.array([True, False, True, True, False])
    a = np.array([1, 0, 1, 0, 0])
    b = np.array([0, 0, 1, 1, 1])
    assert discordant_counts(y, a, b) == (2, 1)
    assert test(y, a, b) == test(y.astype(int), a, b)


@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
def test_infinite_scores_in_object_arrays_are_refused(test):
    # S27/S29: infinite Decimals and floats held as objects are no whole
    # numbers (Decimal('Infinity') equals its to_integral_value(), and
    # np.floor(inf) == inf), so they are scores like the typed np.inf.
    y = np.array([0, 1] * 30)
    for inf in (decimal.Decimal("Infinity"), float("inf"), np.float32("-inf")):
        with pytest.raises(ValueError, match=r"pred_a holds 60 values of 60 that are not "
                                             r"labels of y_true, such as "
                                             r"(-?inf|Infinity), "):
            test(y, np.array([inf] * 60, dtype=object), y)


@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
def test_no_precision_hint_for_objects_of_several_float_types(test):
    # S33: floats of two precisions held as objects are not "labels of
    # another precision" (float_dtype is None): no hint about precision.
    labels = np.array([0.1, 0.2, 0.3] * 20)
    mixed = np.array([np.float32(v) for v in labels[:30]]
                     + [np.float16(v) for v in labels[30:]], dtype=object)
    with pytest.raises(ValueError, match=r"pred_a holds 60 values of 60 .*pass the predicted "
                                         r"labels \(predict's output\); fractional labels "
                                         r".*as int or str$"):
        test(labels, mixed, labels)


@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
def test_nat_labels_in_datetime_arrays_refused(test):
    # S36: NaT never equals itself; as a label it would count as wrong.
    days = np.array(["2005-01-01", "2005-01-02", "NaT"], dtype="datetime64[D]")
    good = np.array(["2005-01-01", "2005-01-02", "2005-01-03"], dtype="datetime64[D]")
    with pytest.raises(ValueError, match=r"^y_true contains 1 NaT label\(s\); every document "
                                         r"needs a label$"):
        test(days, good, good)
    assert test(good, good, good).pvalue == 1.0


@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
def test_score_message_shows_four_significant_digits_and_no_precision_hint_for_ints(test):
    # S40/S41: examples are printed with .4g; integer y_true gets no hint
    # about float precision (only float labels can differ in the last digits).
    y = np.array([0, 1] * 30)
    scores = np.full(60, 0.123456789)
    with pytest.raises(ValueError, match=r"such as 0\.1235, 0\.1235, 0\.1235: they look .*"
                                         r"pass the predicted labels \(predict's output\); "
                                         r"fractional labels .*as int or str$"):
        test(y, scores.astype(np.float32), y)
    with pytest.raises(ValueError, match=r"pass the predicted labels \(predict's output\); "
                                         r"fractional labels .*as int or str$"):
        test(y, y, np.array(list(scores), dtype=object))


@pytest.mark.parametrize("test", PUBLIC_TESTS)
def test_lists_mixing_str_with_other_values_are_judged_as_given(test):
    """NumPy turns a list that mixes strings with other values into
    strings: the int 1 then equalled the label "1" (A right on 6 documents
    where Python's == finds 2), and a NaN became the label "nan". A review
    found both; an object array of the same values was refused already."""
    with pytest.raises(TypeError, match=r"pred_a: object \(numbers, str\)"):
        test(["1", "2", "3", "1", "2", "3"], [1, "2", 3, 1, "2", 3],
             ["1", "3", "3", "1", "3", "3"])
    with pytest.raises(ValueError, match=r"y_true contains 1 missing label\(s\)"):
        test(["a", "b", float("nan"), "a"], ["a", "b", "nan", "a"], ["a", "a", "b", "a"])
    # str with np.str_ is one kind of label, as for SVM.fit.
    assert discordant_counts(["a", np.str_("b")], ["a", "a"], ["b", "b"]) == (1, 1)


@pytest.mark.parametrize("test", PUBLIC_TESTS)
def test_masked_and_infinite_labels_are_refused(test):
    # np.asarray reads the value under a mask: a document without a label
    # counted with its hidden one. kgeo.SVM refuses infinite labels, so no
    # true label is one (predictions of inf are decision values, refused
    # as such).
    y = np.ma.array([0, 1, 2], mask=[False, True, False])
    with pytest.raises(ValueError, match=r"^y_true has 1 masked label\(s\); every document"):
        test(y, [0, 1, 1], [0, 0, 2])
    assert discordant_counts(np.ma.array([0, 1, 2]), [0, 1, 1], [0, 0, 2]) == (1, 1)
    with pytest.raises(ValueError, match=r"^y_true contains 1 infinite label\(s\); labels "
                                         r"must be finite$"):
        test([0.0, np.inf, 1.0, 1.0], [0.0, np.inf, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"^y_true contains 2 infinite label"):
        test(_objects([decimal.Decimal("inf"), 1, -math.inf]), _objects([0, 1, 2]),
             _objects([0, 1, 2]))


@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
def test_nan_labels_are_counted_in_the_message(test):
    # S47: the message gives the number of NaN labels.
    with pytest.raises(ValueError, match=r"^pred_b contains 2 NaN label\(s\); every document "
                                         r"needs a label$"):
        test([0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [np.nan, 1.0, np.nan])


def test_mcnemar_exact_statistic_is_the_smaller_count():
    # S49: the binomial version's statistic is min(b, c), whichever system wins.
    for n_only_a, n_only_b in ((7, 2), (2, 7)):
        y, a, b = _predictions(n_both=3, n_only_a=n_only_a, n_only_b=n_only_b, n_neither=1)
        r = mcnemar_test(y, a, b)
        assert (r.b, r.c, r.method, r.statistic) == (n_only_a, n_only_b, "binomial", 2.0)
        assert r.pvalue == pytest.approx(2 * stats.binom.cdf(2, 9, 0.5), rel=1e-12)


@pytest.mark.parametrize("test", PUBLIC_TESTS)
def test_sets_are_refused_and_array_protocol_objects_accepted(test):
    # S50: a set has no order (no document matches a label); S51: an object
    # with __array__ but no __len__ is an array-like all the same.
    with pytest.raises(TypeError, match=r"^pred_a must be an array-like of labels, one per "
                                        r"document, got set$"):
        test([0, 1], {0, 1}, [0, 1])
    # dict views have a length but NumPy reads them as one object: that
    # was a ValueError blaming the shape ().
    for view in ({0: 0, 1: 1}.values(), {0: 0, 1: 1}.keys()):
        with pytest.raises(TypeError, match=rf"^pred_a must be an array-like of labels, one "
                                            rf"per document, got {type(view).__name__}, which "
                                            rf"NumPy reads as one object"):
            test([0, 1], view, [0, 1])
    with pytest.raises(TypeError, match=r"^y_true must be an array-like .* got dict$"):
        test({0: 0, 1: 1}, [0, 1], [0, 1])

    class Labels:
        def __init__(self, values):
            self.values = values

        def __array__(self, dtype=None, copy=None):
            return np.asarray(self.values, dtype=dtype)

    y, a, b = [0, 1, 2, 0, 1], [0, 1, 2, 1, 1], [0, 0, 2, 0, 2]
    assert test(Labels(y), Labels(a), Labels(b)) == test(y, a, b)


@pytest.mark.skipif(np.finfo(np.longdouble).nmant <= 52, reason="long double is float64")
@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
def test_wide_float_scores_shown_with_four_significant_digits(test):
    # S53: a long double is shown in its own precision, 4 significant digits.
    y = np.array([0, 1] * 30)
    third = np.longdouble(1) / np.longdouble(3)
    with pytest.raises(ValueError, match=r"such as 3\.333e-01, 3\.333e-01, 3\.333e-01: they"):
        test(y, np.array([third] * 60, dtype=object), y)


@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
def test_complex_labels_are_never_taken_for_scores(test):
    # S55: only real predictions can be decision values or probabilities;
    # complex labels y_true mostly lacks are a bad system's predictions.
    y = np.array([1j, 2j] * 10)
    wrong = np.full(20, 0.5 + 0.5j)
    assert discordant_counts(y, y, wrong) == (20, 0)
    assert test(y, wrong, y) == test(y, np.full(20, 3j), y)


# Found by mutation testing (a review of significance.py): P-values below
# 1e-16 as tails, scores among whole numbers, shapes, and labels of other kinds.

def test_tiny_p_values_are_tails_not_one_minus_cdf():
    # 1 - cdf loses every P-value below ~1e-16 (to 0.0); the tails
    # against closed forms: Binomial(500, 1/2) >= 500 is 2**-500, the normal tail
    # erfc(z / sqrt 2) / 2, the chi-square(1) tail erfc(sqrt(x / 2)).
    y = np.zeros(500, dtype=int)
    a, b = y.copy(), np.ones(500, dtype=int)  # b = 500, c = 0
    exact = micro_sign_test(y, a, b, exact=True).pvalue
    assert exact == pytest.approx(0.5 ** 500, rel=1e-12, abs=0)
    z = math.sqrt(500)
    assert micro_sign_test(y, a, b).pvalue == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)),
                                                            rel=1e-9, abs=0)
    chi2 = 499 ** 2 / 500
    assert mcnemar_test(y, a, b).pvalue == pytest.approx(math.erfc(math.sqrt(chi2 / 2)),
                                                         rel=1e-9, abs=0)


@pytest.mark.parametrize("test", [micro_sign_test, mcnemar_test])
def test_scores_partly_whole_numbers_are_refused(test):
    # Decision values clipped at -1 (a whole number y_true lacks) among
    # fractional ones are still decision values: 60 of 60 outside {0, 1}.
    y = np.array([0, 1] * 30)
    scores = np.r_[np.full(30, -1.0), np.linspace(0.1, 0.9, 30)]
    with pytest.raises(ValueError, match=r"pred_a holds 60 values of 60 that are not labels"):
        test(y, scores, y)


@pytest.mark.parametrize("test", [discordant_counts, micro_sign_test, mcnemar_test])
def test_one_dimensional_truth_against_matrix_predictions_is_refused(test):
    # A 1-D y_true with 2-D predictions of as many rows broadcast into
    # n x n comparisons (b = c = 0 here) instead of being refused.
    with pytest.raises(ValueError, match=r"must have the same shape"):
        test([0, 1, 2], [[0, 1, 2]] * 3, [[0, 1, 2]] * 3)


@pytest.mark.parametrize("test", [discordant_counts, micro_sign_test, mcnemar_test])
def test_infinite_complex_and_nat_timedelta_true_labels_are_refused(test):
    # Complex infinities are infinite labels as float ones are;
    # NaT of timedelta64 is a missing label as datetime64's is.
    c = np.array([0, np.inf, 1], dtype=complex)
    with pytest.raises(ValueError, match=r"y_true contains 1 infinite label"):
        test(c, np.array([0, 1, 1], dtype=complex), np.array([0, 0, 1], dtype=complex))
    td = np.array([1, 2, "NaT"], dtype="timedelta64[D]")
    with pytest.raises(ValueError, match=r"y_true contains 1 NaT label"):
        test(td, td, np.array([1, 2, 3], dtype="timedelta64[D]"))


@pytest.mark.parametrize("test", [discordant_counts, micro_sign_test, mcnemar_test])
def test_complex_labels_against_real_labels_are_refused(test):
    # A design choice, not theory: complex and real labels are
    # different kinds, as the module refuses them today.
    with pytest.raises(TypeError, match=r"labels of one kind"):
        test(np.array([1, 2, 1, 2]) + 0j, [1, 2, 2, 2], [1, 1, 1, 1])
