"""Input checks shared by everything public.

Everything the compiled code reads passes through here first: CSR float64
with sorted, duplicate-free int32 indices, finite values, and (for the
manifold kernels) non-negative rows with some mass.
"""

import collections.abc
import decimal
import math
import numbers
import os
import reprlib
import sys
import warnings

import numpy as np
import scipy.sparse as sp

from ._kernels import dense_rows_summary, dense_rows_to_csr, kernel_matrix_summary
from .exceptions import DataConversionWarning, parameter_errors, sklearn_compatible

_MAX_ROWS_LISTED = 10


def _describe(obj):
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def listed_rows(rows):
    """The first rows of ``rows`` for a message, and how many more there are."""
    shown = ", ".join(str(i) for i in rows[:_MAX_ROWS_LISTED])
    return shown + (f" and {len(rows) - _MAX_ROWS_LISTED} more"
                    if len(rows) > _MAX_ROWS_LISTED else "")


def refuse_masked(values, name, what="entries",
                   remedy="fill them (values.filled(...)) or leave those samples out"):
    """Refuse a NumPy masked array with masked entries: ``np.asarray`` reads
    the values under the mask as data (a masked 99 entered a kernel as 99)."""
    if np.ma.isMaskedArray(values) and np.ma.count_masked(values):
        raise ValueError(f"{name} has {np.ma.count_masked(values)} masked {what}; {remedy}")


def check_ordered(values, name):
    """Refuse a set where order matters: a set's order changes from run to
    run (string hashing is salted), and class numbers, columns or rows with
    it. dict.keys() is a Set too, but keeps insertion order."""
    if (isinstance(values, collections.abc.Set)
            and not isinstance(values, collections.abc.KeysView)):
        raise TypeError(f"{name} must be an ordered sequence such as a list, got a "
                        f"{type(values).__name__}, whose order changes from run to run")


def is_data_frame(values):
    """Whether ``values`` is a data frame (pandas, polars, or any with the
    interchange protocol), whose iteration gives its column names."""
    return hasattr(values, "columns") or hasattr(values, "__dataframe__")


def as_given_where_mixed(given, array):
    """``array`` (``np.asarray(given)``), or ``given`` as objects where NumPy
    turned a list mixing strings with other values into strings ([0, 'a',
    nan] -> ['0', 'a', 'nan']): the values as given are then judged."""
    if array.dtype.kind in "US" and not isinstance(given, np.ndarray):
        as_given = np.asarray(given, dtype=object)
        if as_given.shape == array.shape and len({type(v) for v in as_given.flat}) > 1:
            return as_given
    return array


def as_rectangular(values, name, what="rows"):
    """``np.asarray(values)``, naming ``name`` where its nesting is ragged.

    NumPy's own error ("setting an array element with a sequence. The
    requested array has an inhomogeneous shape ...") names neither the
    argument nor the lengths it found.
    """
    refuse_masked(values, name)
    try:
        return np.asarray(values)
    except ValueError as error:
        if "inhomogeneous" not in str(error) and "sequence" not in str(error):
            raise
        lengths = sorted({len(v) for v in values if hasattr(v, "__len__")})
        found = ", ".join(map(str, lengths[:5])) + (", ..." if len(lengths) > 5 else "")
        raise ValueError(
            f"{name} must be a rectangular array-like, but its {what} have different "
            f"lengths" + (f" ({found})" if len(lengths) > 1 else "")) from None


def check_matrix(X, *, name="X", min_samples=1, copy=True):
    """Return X as a canonical CSR float64 matrix with int32 indices.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Dense arrays of bool, int or float, and any SciPy sparse format, are
        converted; duplicate sparse entries are summed, as SciPy does.
    name : str, default="X"
        Name used in error messages.
    min_samples : int, default=1
        Fewest rows accepted.
    copy : bool, default=True
        False: a CSR input that is already what this function returns
        (float64 values, int32 indices, sorted and without duplicates or
        explicit zeros) comes back as a matrix sharing its arrays, which the
        caller must then only read. ``SVM.fit`` does: on 20 Newsgroups the
        copy was 12 MB and 6-8 ms of single-threaded time in a 0.8 s fit.

    Returns
    -------
    X : scipy.sparse.csr_matrix of float64
        Sorted indices, no explicit zeros; the input is never modified. A new
        matrix, unless ``copy=False`` and the input needed no change.
    """
    if X is None:
        raise TypeError(f"{name} must be an array-like or a sparse matrix, got None")
    if not copy and _is_canonical_csr(X, name):
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape, copy=False)
        X.has_canonical_format = True  # checked above; spares SciPy a second pass
        _check_shape_and_values(X, name, min_samples)
        return X
    given = X
    if sp.issparse(X):
        X = _sparse_float64(X, name)
    else:
        X = dense_as_csr(_dense_float64(X, name), name)
    X.sum_duplicates()  # also sorts the indices
    _check_shape_and_values(X, name, min_samples, given)
    X.eliminate_zeros()
    if X.nnz > np.iinfo(np.int32).max or X.shape[1] > np.iinfo(np.int32).max:
        raise ValueError(
            f"{name} has {X.nnz} nonzeros and {X.shape[1]} features; kgeo indexes "
            f"columns with int32 and needs both below 2**31")
    # SciPy wants one index dtype for both arrays; the kernels read int32
    # columns (and widen the row pointers themselves).
    X.indices = X.indices.astype(np.int32, copy=False)
    X.indptr = X.indptr.astype(np.int32, copy=False)
    return X


def check_dense_rows(X, *, name="X", min_samples=1):
    """Return a dense array-like of numbers as a 2-D float64 ndarray, checked
    as ``check_matrix`` checks it, but not converted to CSR.

    For prediction, which converts it a chunk of rows at a time
    (``dense_as_csr``): converted whole, 100,000 x 100 dense rows (80 MB)
    took 208 MB more at the peak.

    Returns
    -------
    X : ndarray of float64, shape (n_samples, n_features)
        X itself where it already is one (any memory order), to be read only.
    n_negative : int
        Its negative entries.
    row_nnz : ndarray of int64, shape (n_samples,)
        Each row's nonzero entries.
    """
    if X is None:
        raise TypeError(f"{name} must be an array-like or a sparse matrix, got None")
    X = _dense_float64(X, name)
    n_bad, n_negative, row_nnz = dense_summary(X)
    _check_shape_and_values(X, name, min_samples, n_bad=n_bad)
    return X, n_negative, row_nnz


def dense_summary(X):
    """A 2-D float64 ndarray's non-finite and negative entries (how many of
    each) and each row's nonzeros, in one compiled pass a slice of rows at a
    time (``dense_rows_summary``)."""
    row_nnz = np.empty(X.shape[0], dtype=np.int64)
    n_bad = n_negative = 0
    for rows in dense_row_slices(X):
        bad, negative = dense_rows_summary(np.ascontiguousarray(X[rows]), row_nnz[rows])
        n_bad += bad
        n_negative += negative
    return n_bad, n_negative, row_nnz


# Values of a dense input read at a time: made C-ordered on its way to CSR
# (a Fortran-ordered array, or a data frame's, is copied a slice at a
# time), or checked without a temporary of the whole array's size.
_DENSE_CHUNK_VALUES = 1 << 20


def dense_row_slices(X):
    """Slices of about ``_DENSE_CHUNK_VALUES`` values covering X's rows."""
    return row_slices(*X.shape)


def row_slices(n_rows, n_cols):
    """Slices of about ``_DENSE_CHUNK_VALUES`` values covering the rows of
    an n_rows x n_cols matrix."""
    step = max(1, _DENSE_CHUNK_VALUES // max(n_cols, 1))
    return [slice(start, min(start + step, n_rows)) for start in range(0, n_rows, step)]


def dense_as_csr(array, name, nnz=None):
    """A 2-D float64 ndarray's nonzero entries as a canonical CSR matrix
    with int32 indices, built in one pass (``dense_rows_to_csr``), after
    another that counts them unless the caller has (``nnz``)."""
    nnz = int(np.count_nonzero(array)) if nnz is None else int(nnz)
    n_rows, n_cols = array.shape
    if nnz > np.iinfo(np.int32).max or n_cols > np.iinfo(np.int32).max:
        raise ValueError(
            f"{name} has {nnz} nonzeros and {n_cols} features; kgeo indexes "
            f"columns with int32 and needs both below 2**31")
    data = np.empty(nnz, dtype=np.float64)
    indices = np.empty(nnz, dtype=np.int32)
    indptr = np.zeros(n_rows + 1, dtype=np.int32)
    k = 0
    for rows in dense_row_slices(array):
        k = dense_rows_to_csr(np.ascontiguousarray(array[rows]), data, indices,
                              indptr[rows.start:], k)
        if k < 0:
            break
    if k != nnz:
        raise ValueError(f"{name} changed while it was read (another thread writing it?)")
    X = sp.csr_matrix((data, indices, indptr), shape=array.shape, copy=False)
    X.has_canonical_format = True  # sorted, no duplicates: sum_duplicates skips
    return X


def _numeric_rows(array, name):
    """A dense array of numbers as C-ordered rows of its own dtype (bool, int
    or float: integer indices stay integers), checked 2-D, non-empty and
    finite; an array of objects that did not convert to numbers is refused
    with ``_dense_float64``'s message, which names the value."""
    if np.iscomplexobj(array):
        raise ValueError(f"Complex data not supported; {name} has dtype {array.dtype}")
    if array.dtype.kind == "O":
        array = _dense_float64(array, name)
    if array.ndim != 2:
        raise ValueError(
            f"Expected a 2D array for {name}, got a {array.ndim}D array of shape "
            f"{array.shape}. Reshape your data with X.reshape(1, -1) for a single "
            f"sample or X.reshape(-1, 1) for a single feature")
    if array.shape[0] < 1:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={array.shape}) while a minimum of 1 is "
            f"required; {name} is empty or too small")
    if array.shape[1] < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={array.shape}) while a minimum of 1 "
            f"is required.")
    if array.dtype.kind == "f":
        finite = np.isfinite(array)
        if not np.all(finite):
            raise ValueError(
                f"{name} contains {int(array.size - np.count_nonzero(finite))} NaN or "
                f"infinity value(s); every entry must be finite")
    return np.ascontiguousarray(array)


def _as_numbers(array):
    """A 2-D array of objects as float64 where every one converts, else None
    (samples for the kernel function as given)."""
    try:
        return array.astype(np.float64)
    except (TypeError, ValueError, OverflowError):
        return None


def check_kernel_samples(X, *, name="X", numbers=None):
    """Return the samples a callable kernel reads, and whether they are numbers.

    - A sparse matrix: canonical float64 CSR, as ``check_matrix`` returns.
    - A dense array-like of numbers (a DataFrame too): C-ordered 2-D rows of
      its own dtype, integers staying integers (row indices into the
      caller's own matrix are a common use), checked finite; a 2-D array of
      objects that all convert to numbers: float64 rows.
    - Anything else (strings, token lists of different lengths, 1-D
      sequences or 2-D arrays of other objects) goes to the kernel function
      as given, as scikit-learn's SVC passes it: an ndarray stays one, any
      other sequence becomes a list of its items.

    Parameters
    ----------
    X : array-like, sparse matrix or sequence of shape (n_samples, ...)
    name : str, default="X"
        Name used in error messages.
    numbers : bool or None, default=None
        Whether X must be numbers (True) or goes as given (False); None
        decides from X (a fit; prediction then takes X as the fit did).

    Returns
    -------
    samples : ndarray, scipy.sparse.csr_matrix or list
        X's own array where it already is what is returned (to be read only).
    numeric : bool
        Whether ``samples`` are rows of numbers.
    """
    if X is None:
        raise TypeError(f"{name} must be an array-like or a sparse matrix, got None")
    if sp.issparse(X):
        if numbers is False:
            return X.tocsr(), False
        return check_matrix(X, name=name, copy=False), True
    if isinstance(X, (str, bytes, dict, set)) or not (hasattr(X, "__len__")
                                                     or hasattr(X, "__array__")):
        raise TypeError(
            f"{name} must be an array-like, a sparse matrix or a sequence of samples, got "
            f"{_describe(X)}")
    if isinstance(X, (list, tuple)):
        if not X:
            raise ValueError(
                f"Found 0 sample(s) in {name} while a minimum of 1 is required; {name} is "
                f"empty")
        if isinstance(X[0], (str, bytes)) and numbers:
            # Refused here: an array of it would copy every string at the longest
            # one's width only to be refused by its dtype.
            raise TypeError(
                f"{name} must hold numbers (bool, int or float), got a sequence of "
                f"{type(X[0]).__name__}: this SVM's kernel function was fitted on rows of "
                f"numbers")
        if numbers is False or isinstance(X[0], (str, bytes)):
            # Text: an array of it would copy every string at the longest one's width.
            return list(X), False
        try:
            array = np.asarray(X)
        except ValueError:  # ragged: samples of different lengths
            if numbers:
                raise ValueError(
                    f"{name} holds samples of different lengths, but this SVM's kernel "
                    f"function was fitted on rows of numbers") from None
            return list(X), False
    else:
        # An ndarray, or an array-like (a DataFrame: its rows, not its
        # iteration, which gives the column names).
        refuse_masked(X, name)
        array = np.asarray(X)
    if array.ndim == 0:
        raise TypeError(
            f"{name} must be a sequence of samples, got a 0-d array ({array.dtype})")
    if array.dtype.kind == "O" and array.ndim == 2:
        converted = _as_numbers(array)
        array = array if converted is None else converted
    is_numbers = array.dtype.kind in "biufc"
    if numbers or (numbers is None and is_numbers):
        if not is_numbers and array.dtype.kind != "O":
            raise TypeError(
                f"{name} must hold numbers (bool, int or float), got dtype {array.dtype}")
        return _numeric_rows(array, name), True
    if array.shape[0] == 0:
        raise ValueError(
            f"Found 0 sample(s) in {name} while a minimum of 1 is required; {name} is empty")
    return (list(X) if isinstance(X, (list, tuple)) else array), False


def _check_sparse_arrays(X, name):
    """Refuse a sparse matrix whose arrays were replaced by other objects or
    by index arrays of non-integers: SciPy reads float indices truncated (a
    column 0.9 became column 0, silently) and a list as ``data`` failed on
    its missing ``dtype``."""
    fmt = X.format
    if fmt in ("csr", "csc", "bsr"):
        arrays = [("data", X.data), ("indices", X.indices), ("indptr", X.indptr)]
    elif fmt == "coo":
        coords = X.coords if hasattr(X, "coords") else (X.row, X.col)
        arrays = [("data", X.data)] + [(f"coords[{k}]", c) for k, c in enumerate(coords)]
    elif fmt == "dia":
        arrays = [("data", X.data), ("offsets", X.offsets)]
    elif fmt == "lil":
        bad = next((j for row in X.rows for j in row
                    if isinstance(j, (bool, np.bool_)) or not isinstance(j, (int, np.integer))),
                   None)
        if bad is not None:
            raise TypeError(
                f"{name} is a LIL matrix whose rows hold a column index that is not an "
                f"integer: {bad!r}")
        return
    else:
        return
    for attr, array in arrays:
        if not isinstance(array, np.ndarray):
            raise TypeError(
                f"{name} is a {fmt.upper()} matrix whose {attr} is a {type(array).__name__}, "
                f"not a NumPy array")
        if attr != "data" and array.dtype.kind not in "iu":
            raise TypeError(
                f"{name} is a {fmt.upper()} matrix whose {attr} must hold integers, got "
                f"dtype {array.dtype}")


def _sparse_float64(X, name, zero_below_range=False):
    """A SciPy sparse matrix of numbers as a CSR matrix of float64 (values
    unchecked; ``zero_below_range``: see `as_float64`)."""
    _check_sparse_arrays(X, name)
    # The matrix's dtype, not its data's: LIL's data is an array of lists.
    if X.dtype.kind == "c":
        raise ValueError(f"Complex data not supported; {name} has dtype {X.dtype}")
    if X.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must hold numbers (bool, int or float), got dtype {X.dtype}")
    if len(X.shape) != 2:
        raise ValueError(
            f"Expected a 2D array for {name}, got a {len(X.shape)}D sparse array of shape "
            f"{X.shape}")
    return sparse_as_float64_csr(X, name, zero_below_range)


def _count_missing(objects):
    """How many entries of an array of objects are pandas.NA (known by its
    type's name: kgeo does not import pandas). NumPy reads None as NaN."""
    return sum(1 for value in objects.flat if type(value).__name__ == "NAType")


def _dense_float64(X, name, zero_below_range=False):
    """A dense array-like of numbers as a 2-D float64 ndarray (maybe X
    itself; ``zero_below_range``: see `as_float64`)."""
    if isinstance(X, (str, bytes, dict, set)) or not hasattr(X, "__len__") and not hasattr(X, "__array__"):
        raise TypeError(
            f"{name} must be an array-like or a sparse matrix, got {_describe(X)}")
    arr = as_rectangular(X, name)
    if np.iscomplexobj(arr):
        raise ValueError(f"Complex data not supported; {name} has dtype {arr.dtype}")
    if arr.dtype.kind == "O":
        arr = objects_as_float64(arr, name, zero_below_range)
    elif arr.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must hold numbers (bool, int or float), got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(
            f"Expected a 2D array for {name}, got a {arr.ndim}D array of shape "
            f"{arr.shape}. Reshape your data with X.reshape(1, -1) for a single "
            f"sample or X.reshape(-1, 1) for a single feature")
    return as_float64(arr, name, zero_below_range)


def _signalling_nan(objects):
    """The first Decimal signalling NaN among ``objects``, or None: float()
    refuses one with a ValueError that names no input."""
    return next((v for v in objects.flat if isinstance(v, decimal.Decimal) and v.is_snan()),
                None)


def _rounded_to_infinity(objects, converted):
    """The finite objects that float64 made infinite: a Decimal or a wider
    float beyond about 1.8e308 (a Python int or Fraction there raises
    OverflowError instead). Reported as NaN or infinity, they would name a
    value the caller never passed."""
    beyond = []
    for value in objects[np.isinf(converted)]:
        if type(value) is float:  # a genuine infinity, by far the usual one
            continue
        try:
            finite = (value.is_finite() if isinstance(value, decimal.Decimal)
                      else bool(np.isfinite(value)))
        except TypeError:  # a number type NumPy cannot test: taken as the inf it gave
            finite = False
        if finite:
            beyond.append(value)
    return beyond


def objects_as_float64(arr, name, zero_below_range=False):
    """An array of objects holding numbers as float64; anything else is a
    TypeError that keeps float()'s own words, which name the offending value,
    and pandas.NA a ValueError that says a value is missing. A finite number
    beyond float64's range, and a Decimal signalling NaN, are ValueErrors
    that say so."""
    try:
        # A wider float beyond or below range: refused below.
        with np.errstate(over="ignore", under="ignore"):
            converted = arr.astype(np.float64)
    except OverflowError as error:
        # A Python int beyond float64's largest (2**1024).
        raise ValueError(
            f"{name} holds a number beyond float64's range (about 1.8e308): "
            f"{error}") from error
    except (TypeError, ValueError) as error:
        snan = _signalling_nan(arr)
        if snan is not None:
            raise ValueError(f"{name} contains a signalling NaN ({snan!r}); every entry must "
                             f"be finite") from error
        missing = _count_missing(arr)
        if missing:
            # A frame of pandas' nullable dtypes (Int64, Float64, boolean)
            # holds pd.NA: a value missing, not one of the wrong type.
            raise ValueError(
                f"{name} contains {missing} missing value(s) (pandas.NA); every "
                f"entry must be a number") from error
        raise TypeError(
            f"{name} must hold numbers (bool, int or float): {error}") from error
    beyond = _rounded_to_infinity(arr, converted)
    if beyond:
        raise ValueError(
            f"{name} holds {len(beyond)} number(s) beyond float64's range (about 1.8e308), "
            f"such as {reprlib.repr(beyond[0])}; scale it down")
    if not zero_below_range:
        _refuse_rounded_to_zero(_rounded_to_zero(arr, converted), name)
    return converted


def _rounded_to_zero(objects, converted):
    """The nonzero numbers among ``objects`` that float64 made 0: a Decimal,
    Fraction or wider float below about 4.9e-324 (text is left to float())."""
    return [value for value in objects[converted == 0]
            if isinstance(value, numbers.Number) and not isinstance(value, (str, bytes))
            and value != 0]


def as_float64(values, name, zero_below_range=False):
    """A NumPy array of bool, int or float as float64 (maybe ``values``
    itself), refusing finite values beyond float64's range, and nonzero
    values below it unless ``zero_below_range`` (a kernel matrix's
    negligible entries, where data's would lose a row's mass).

    Only a float wider than float64 (``np.longdouble`` on x86) holds such
    values: its cast makes them infinite, which a later check would have
    reported as NaN or infinity the caller never passed.
    """
    if values.dtype.kind != "f" or values.dtype.itemsize <= 8:
        return np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        converted = np.asarray(values, dtype=np.float64)
    beyond = np.isinf(converted) & np.isfinite(values)
    if np.any(beyond):
        raise ValueError(
            f"{name} holds {int(np.count_nonzero(beyond))} number(s) beyond float64's range "
            f"(about 1.8e308), such as {values[beyond][0]!r}; scale it down")
    if not zero_below_range:
        _refuse_rounded_to_zero(values[(converted == 0) & (values != 0)], name)
    return converted


def _refuse_rounded_to_zero(below, name):
    """Refuse the nonzero numbers ``below`` that float64 made 0: a row of
    them read as all-zero (a document without a word), its mass lost."""
    if len(below):
        raise ValueError(
            f"{name} holds {len(below)} nonzero number(s) below float64's range (about "
            f"4.9e-324), such as {reprlib.repr(below[0])}, which float64 would read as 0; "
            f"scale it up, or set them to 0 if they are negligible")


def check_kernel_matrix(K, *, name="X", n_columns=None, n_threads=1,
                        source="kernel='precomputed'"):
    """Return a kernel matrix as a C-ordered float64 ndarray with finite values.

    Parameters
    ----------
    K : array-like or sparse matrix of shape (n_samples, n_columns)
        The kernel between some samples (rows) and the training samples
        (columns). Converted as ``check_matrix`` converts data; a sparse
        matrix is made dense (a kernel matrix is read whole), as is any
        array that is not float64 in C order.
    name : str, default="X"
        Name used in error messages.
    n_columns : int or None, default=None
        The number of training samples the columns must match (prediction);
        None asks for the kernel matrix of the training samples (fit):
        square, and symmetric to within rounding (1e-6 of its largest
        magnitude).
    n_threads : int, default=1
        Threads for the pass over the values.
    source : str, default="kernel='precomputed'"
        Where the matrix comes from, for messages (a callable kernel's
        matrices are its return values, not the user's X).

    Returns
    -------
    K : ndarray of float64, shape (n_samples, n_columns), C order
        The input itself when it is already such an array; never modified.
    largest : float
        max |K[i, j]|.
    """
    if K is None:
        raise TypeError(f"{name} must be an array-like or a sparse matrix, got None")
    given = K
    # Kernel values below float64's range are negligible beside the others
    # (a Gaussian kernel's far pairs): read as 0, as before.
    if sp.issparse(K):
        K = _sparse_float64(K, name, zero_below_range=True).toarray()
    else:
        K = np.ascontiguousarray(_dense_float64(K, name, zero_below_range=True))
    if K.shape[0] == 0:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={K.shape}) while a minimum of 1 is "
            f"required; {name} is empty")
    if K.shape[1] == 0 and n_columns is None:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={K.shape}) while a minimum of 1 is "
            f"required.")
    square = n_columns is None and K.shape[0] == K.shape[1]
    n_bad, first, largest, asymmetry, (i, j) = kernel_matrix_summary(K, square, n_threads)
    if n_bad:
        bi, bj = first
        if sp.issparse(given) and np.all(np.isfinite(
                _with_float64_data(given, name, zero_below_range=True).data)):
            # Every entry given is finite: inf is the sum of duplicates.
            raise ValueError(
                f"{name} has duplicate entries (summed, as SciPy sums them) whose sum is "
                f"beyond float64's range (about 1.8e308) at {n_bad} place(s), first "
                f"{name}[{bi}, {bj}]; every kernel value must be a finite float64")
        # The value as given (None, a long double beyond float64), when it can be read.
        value = given[bi, bj] if isinstance(given, np.ndarray) and given.ndim == 2 else K[bi, bj]
        raise ValueError(
            f"{name} contains {n_bad} value(s) that are NaN, infinite or beyond float64's "
            f"range, first {name}[{bi}, {bj}] = {_scalar_repr(value)}; every kernel value "
            f"must be a finite float64")
    if n_columns is not None and K.shape[1] != n_columns:
        # scikit-learn's words (its estimator checks match them), then ours;
        # after the values, as scikit-learn's checks ask too.
        raise ValueError(
            f"{name} has {K.shape[1]} features, but SVM is expecting {n_columns} features "
            f"as input: with kernel='precomputed', {name} must be the kernel between the "
            f"samples and the {n_columns} training samples, of shape (n_samples, {n_columns})")
    if n_columns is None and not square:
        raise ValueError(
            f"{source} needs the square kernel matrix of the training "
            f"samples, K[i, j] = k(x_i, x_j); {name} has shape {K.shape}")
    if asymmetry > _ASYMMETRY_TOLERANCE * largest:
        raise ValueError(
            f"{name} is not a symmetric kernel matrix: {name}[{i}, {j}] = {float(K[i, j])!r} "
            f"but {name}[{j}, {i}] = {float(K[j, i])!r}, beyond rounding "
            f"({_ASYMMETRY_TOLERANCE:g} of its largest magnitude, {largest:.6g}); "
            f"{source} needs K[i, j] = k(x_i, x_j) of the training samples "
            f"(symmetrise with (K + K.T) / 2)")
    return K, largest


def _scalar_repr(value):
    """A NumPy scalar as Python writes its value (nan, not np.float64(nan))."""
    if isinstance(value, np.floating) and np.dtype(type(value)).itemsize <= 8:
        return repr(float(value))
    return str(value) if isinstance(value, np.generic) else repr(value)


# A precomputed kernel matrix may be asymmetric by its rounding: a float32
# pipeline leaves ~1e-7 of its largest value. More is not a kernel (a
# similarity that is not symmetric, or K(X_test, X_train) passed to fit).
_ASYMMETRY_TOLERANCE = 1e-6


def _is_canonical_csr(X, name):
    """Whether X is a CSR matrix that check_matrix would return unchanged.

    Raises what check_matrix raises for index arrays pointing outside X.
    """
    if not (sp.issparse(X) and X.format == "csr" and X.dtype == np.float64
            and len(X.shape) == 2):
        return False
    indptr, indices, data = X.indptr, X.indices, X.data
    if not (isinstance(indptr, np.ndarray) and isinstance(indices, np.ndarray)
            and isinstance(data, np.ndarray) and indptr.dtype == np.int32
            and indices.dtype == np.int32 and indptr.ndim == 1 and indices.ndim == 1
            and data.ndim == 1 and indptr.flags.c_contiguous
            and indices.flags.c_contiguous and data.flags.c_contiguous
            and indptr.shape[0] == X.shape[0] + 1
            and indices.shape[0] == data.shape[0] == indptr[-1] and indptr[0] == 0):
        return False
    _check_sparse_structure(X, name)  # indices in range, indptr non-decreasing
    # SciPy's own compiled check of sorted, duplicate-free rows (0.6 ms on
    # 20 Newsgroups), asked of a new matrix over the same arrays: X may
    # carry a cached answer gone stale (its indices edited in place since),
    # and trusting it fitted square roots of duplicates summed apart.
    fresh = sp.csr_matrix((data, indices, indptr), shape=X.shape, copy=False)
    return bool(fresh.has_canonical_format) and not np.any(data == 0)


def _check_shape_and_values(X, name, min_samples, given=None, n_bad=None):
    """Refuse too few rows, no column, or a value that is not finite.

    X is a CSR matrix, or a 2-D float64 ndarray whose non-finite values the
    caller has counted (``n_bad``). ``given``: the matrix X was converted
    from, read again only to tell the caller's NaN or infinity from finite
    duplicates summed past float64.
    """
    n_samples, n_features = X.shape
    if n_samples < min_samples:
        raise ValueError(
            f"Found array with {n_samples} sample(s) (shape={X.shape}) while a "
            f"minimum of {min_samples} is required; {name} is empty or too small")
    if n_features < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 "
            f"is required.")
    if n_bad is None:
        n_bad = int(X.data.size - np.count_nonzero(np.isfinite(X.data)))
    if n_bad:
        if sp.issparse(given) and np.all(np.isfinite(_with_float64_data(given, name).data)):
            raise ValueError(
                f"{name} has duplicate entries (summed, as SciPy sums them) whose sum is "
                f"beyond float64's range (about 1.8e308) at {n_bad} place(s); scale it down")
        raise ValueError(
            f"{name} contains {n_bad} NaN or infinity value(s); every entry must be finite")


def sparse_as_float64_csr(X, name, zero_below_range=False):
    """A SciPy sparse matrix of numbers as a new CSR matrix of float64, its
    index arrays checked first (duplicates not yet summed)."""
    fmt = X.format
    _check_sparse_structure(X, name)
    if fmt == "lil" and any(len(r) != len(d) for r, d in zip(X.rows, X.data)):
        # SciPy's conversion trusts the lengths (a mismatch read past the lists).
        raise ValueError(f"{name} is not a valid LIL sparse matrix: a row's column list "
                         f"and value list differ in length")
    # Cast before converting: a conversion sums duplicate entries (COO's
    # does), which in a narrow dtype would wrap (uint8: 200 + 100 = 44).
    X = sp.csr_matrix(_with_float64_data(X, name, zero_below_range))
    if fmt not in _CHECKED_FORMATS:
        # LIL, DOK, DIA: checked once they are index arrays (LIL's rows are
        # lists anyone can edit; an index out of range would reach loops
        # that trust it).
        _check_sparse_structure(X, name, fmt)
    return X


# Formats whose index arrays _check_sparse_structure reads as they are.
_CHECKED_FORMATS = ("csr", "csc", "coo", "bsr")


def _with_float64_data(X, name, zero_below_range=False):
    """A new sparse matrix holding X's entries as float64, duplicates still
    apart (X's format; LIL as CSR, DOK and DIA as COO). SciPy before 1.11
    sums the duplicates of ``astype``'s input first, in its own dtype and in
    place: a uint8 matrix holding 200 and 100 at one place was left holding
    44, and gave 44."""
    if X.format == "lil":
        X = X.tocsr()  # its rows as they are: a row edited by hand keeps its duplicates
    # Every array copied: the caller's matrix must not see the in-place
    # summing, sorting and pruning that follow.
    if X.format in ("dok", "dia"):
        X = X.tocoo()  # they hold no duplicates
    data = as_float64(X.data, name, zero_below_range)
    if data.dtype == X.data.dtype:  # no conversion: X's own values (maybe read-only)
        data = data.copy()
    if X.format == "coo":
        row, col = X.coords if hasattr(X, "coords") else (X.row, X.col)
        copy = sp.coo_matrix((data, (row.copy(), col.copy())), shape=X.shape)
    else:
        matrix_type = {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "bsr": sp.bsr_matrix}
        copy = matrix_type[X.format]((data, X.indices.copy(), X.indptr.copy()), shape=X.shape)
    if X.dtype == np.bool_:
        # SciPy adds bool duplicates in bool, True + True being True, and so
        # does toarray(): added as float64 they made 2.0, other values than
        # the matrix's own dense form (a review). Summed on the copy, then
        # each sum of ones made one.
        copy.sum_duplicates()
        np.minimum(copy.data, 1.0, out=copy.data)
    return copy


def _check_sparse_structure(X, name, given_format=None):
    """Refuse sparse index arrays that point outside the matrix.

    SciPy's format conversions and kgeo's loops trust them: an index out of
    range would read or write outside the arrays (a crash, or garbage).
    """
    fmt = X.format
    if fmt in ("csr", "csc"):
        n_major, n_minor = X.shape if fmt == "csr" else X.shape[::-1]
        indptr, indices = np.asarray(X.indptr), np.asarray(X.indices)
        if indptr.ndim != 1 or indptr.shape[0] != n_major + 1:
            problem = f"indptr has shape {indptr.shape}, expected ({n_major + 1},)"
        elif indptr[0] != 0 or np.any(np.diff(indptr) < 0):
            problem = "indptr must start at 0 and never decrease"
        elif indices.ndim != 1 or indices.shape[0] != np.asarray(X.data).shape[0]:
            problem = "indices and data must be 1-D arrays of the same length"
        elif indptr[-1] > indices.shape[0]:
            problem = f"indptr ends at {indptr[-1]} but there are {indices.shape[0]} indices"
        elif indptr[-1] > 0 and (indices[:indptr[-1]].min() < 0
                                 or indices[:indptr[-1]].max() >= n_minor):
            used = indices[:indptr[-1]]
            problem = (f"indices range over [{used.min()}, {used.max()}] but must lie "
                       f"in [0, {n_minor - 1}]")
        else:
            return
    elif fmt == "coo":
        coords = X.coords if hasattr(X, "coords") else (X.row, X.col)
        problem = None
        for axis, (index, size) in enumerate(zip(coords, X.shape)):
            index = np.asarray(index)
            if index.shape != np.asarray(X.data).shape:
                problem = "the coordinate arrays and data must have the same length"
            elif index.size and (index.min() < 0 or index.max() >= size):
                problem = (f"axis-{axis} indices range over [{index.min()}, {index.max()}] "
                           f"but must lie in [0, {size - 1}]")
            if problem:
                break
        else:
            return
    elif fmt == "bsr":
        try:
            X.copy().check_format(full_check=True)  # a copy: check_format may recast
        except ValueError as error:
            problem = str(error)
        else:
            return
    else:
        return  # lil, dok, dia: check_matrix checks them as CSR
    raise ValueError(f"{name} is not a valid {(given_format or fmt).upper()} sparse matrix: "
                     f"{problem}")


def check_counts(X, *, estimator):
    """``check_matrix(X)``, refusing negative entries: term counts (or any
    non-negative weights) for ``estimator``, named in the message."""
    X = check_matrix(X, name="X")
    n_neg = int(np.count_nonzero(X.data < 0))
    if n_neg:
        raise ValueError(
            f"Negative values in data passed to {estimator}: X has {n_neg} negative "
            f"entries; term counts must be >= 0")
    return X


def check_n_features(X, *, estimator, n_features):
    """Raise unless X has the ``n_features`` columns ``estimator`` was fitted on."""
    if X.shape[1] != n_features:
        raise ValueError(
            f"X has {X.shape[1]} features, but {estimator} is expecting {n_features} "
            f"features as input")


def feature_names(X):
    """The column names of a data frame X, as scikit-learn reads them, or None.

    A pyarrow table's ``column_names`` (its ``columns`` are the data), a
    pandas or polars frame's ``columns``, or the dataframe interchange
    protocol's column names. Names are kept only when all are strings;
    integer column labels (a frame made from an array) are no names, as in
    scikit-learn. The result is a new array: the caller's column index is
    not shared.

    Raises
    ------
    TypeError
        If some names are strings and others are not: which columns are
        which would be checked for some and not others.
    """
    if sp.issparse(X) or isinstance(X, np.ndarray):
        return None
    if isinstance(getattr(X, "column_names", None), (list, tuple)):
        # Read first: converting pyarrow's columns would copy the whole
        # table into Python objects, only to find they are no names.
        names = np.array(X.column_names, dtype=object)
    elif hasattr(X, "columns"):
        names = np.array(X.columns, dtype=object)
    elif hasattr(X, "__dataframe__"):
        names = np.array(list(X.__dataframe__().column_names()), dtype=object)
    else:
        return None
    if names.ndim != 1 or names.size == 0:
        return None
    types = sorted({type(name).__qualname__ for name in names})
    if len(types) > 1 and "str" in types:
        raise TypeError(
            f"feature names (column names) must all be strings or all be other labels, got "
            f"names of types {types}; convert them all to strings (X.columns = "
            f"X.columns.astype(str)) to have them stored and checked at prediction, or all "
            f"to another type to have them ignored")
    return names if types == ["str"] else None


def _callers_stacklevel():
    """The ``stacklevel`` that makes a warning raised by the function calling
    this one point at the first frame outside kgeo, however many of kgeo's
    own calls lie between: the user's line when they call kgeo directly
    (through a scikit-learn Pipeline, the pipeline's)."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame = frame.f_back
        level += 1
    return level


def check_feature_names(names, *, estimator, fitted_names):
    """Compare the column names of X (``feature_names(X)``) with the fit's.

    Columns named at fit and named otherwise now, or in another order, would
    give each word another word's weight: a ``ValueError`` listing the
    differences, in scikit-learn's words (its estimator checks match them).
    Names on one side only warn (a frame against an array of the same
    columns is common and harmless), as in scikit-learn.
    """
    if names is None and fitted_names is None:
        return
    if fitted_names is None:
        warnings.warn(f"X has feature names, but {estimator} was fitted without feature names",
                      UserWarning, stacklevel=_callers_stacklevel())
        return
    if names is None:
        warnings.warn(f"X does not have valid feature names, but {estimator} was fitted with "
                      f"feature names", UserWarning, stacklevel=_callers_stacklevel())
        return
    if len(names) == len(fitted_names) and np.all(names == fitted_names):
        return
    unseen = sorted(set(names.tolist()) - set(fitted_names.tolist()))
    missing = sorted(set(fitted_names.tolist()) - set(names.tolist()))

    def listed(items, most=5):
        lines = [f"- {item}\n" for item in items[:most]]
        return "".join(lines) + ("- ...\n" if len(items) > most else "")

    message = "The feature names should match those that were passed during fit.\n"
    if unseen:
        message += "Feature names unseen at fit time:\n" + listed(unseen)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n" + listed(missing)
    if not unseen and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    raise ValueError(message + f"({estimator} was fitted on {len(fitted_names)} named "
                               f"columns, X has {len(names)})")


def check_on_simplex(X, *, name="X", kernel="ngd", empty_rows="raise", n_negative=None,
                     needed_by=None):
    """Check that every row of X can be L1-normalised.

    X is a CSR matrix, or a 2-D float64 ndarray whose negative entries the
    caller has counted (``n_negative``, see ``check_dense_rows``; only with
    ``empty_rows="allow"``).
    ``empty_rows="allow"`` lets rows without any entry pass (fit leaves them
    out, prediction gives them the intercepts' decision values).
    ``needed_by``: what the messages name as needing the simplex, where it is
    not the multinomial kernel ``kernel`` (a function the user called, such
    as ``geodesic_distance``, which is computed through that kernel).

    Raises
    ------
    ValueError
        If an entry is negative or (unless allowed) a row sums to zero,
        naming the rows.
    """
    user = f"the multinomial kernel {kernel!r}" if needed_by is None else needed_by
    n_neg = int(np.count_nonzero(X.data < 0)) if n_negative is None else n_negative
    if n_neg:
        raise ValueError(
            f"Negative values in data passed to {user}: {name} has {n_neg} negative "
            f"entries, and {'the kernel' if needed_by is None else 'it'} needs counts or "
            f"frequencies >= 0")
    if empty_rows == "allow":
        return
    empty = np.flatnonzero(np.diff(X.indptr) == 0)
    if empty.size:
        raise ValueError(
            f"{name} has {empty.size} all-zero row(s) (rows {listed_rows(empty)}); "
            f"{user} L1-normalises each row and needs some mass in every row: drop "
            f"them, as {name}[np.asarray({name}.sum(axis=1)).ravel() > 0]"
            + (". kgeo.SVM leaves such documents out of its fit itself, and predicts them "
               "by its intercepts" if needed_by is None else ""))


def spherical_normal_sigmas(X, *, name="X", row_names=None, columns=None):
    """Each row's sigma, the last column of a CSR matrix (or a 2-D float64
    ndarray) of spherical normals (mu_1, ..., mu_(n-1), sigma), checked to
    be > 0.

    ``row_names[i]``, where given, is the caller's number of row i;
    ``columns``, where given, the number of columns of the rows as the
    caller gave them (X then holds only those some rows use).

    Raises
    ------
    ValueError
        If X has fewer than 2 columns, or some row's sigma is not > 0
        (naming the rows).
    """
    if (X.shape[1] if columns is None else columns) < 2:
        raise ValueError(
            f"the hyperbolic kernel reads rows (mu_1, ..., mu_(n-1), sigma) of the spherical "
            f"normal family N(mu, sigma^2 I), at least 2 columns; {name} has {X.shape[1]}")
    last = X.shape[1] - 1
    if sp.issparse(X):
        sigma = np.zeros(X.shape[0])
        ends = X.indptr[1:]
        stored = (ends > X.indptr[:-1]) & (X.indices[np.maximum(ends - 1, 0)] == last) \
            if X.nnz else np.zeros(X.shape[0], dtype=bool)
        sigma[stored] = X.data[ends[stored] - 1]
    else:
        sigma = X[:, last] + 0.0  # a copy; -0.0 as CSR gives it, 0.0
    bad = np.flatnonzero(~(sigma > 0))
    if bad.size:
        values = sigma[bad]
        if row_names is not None:
            bad = np.asarray(row_names)[bad]
        listed = ", ".join(f"row {i}: {v!r}" for i, v in zip(bad[:_MAX_ROWS_LISTED],
                                                            values[:_MAX_ROWS_LISTED].tolist()))
        more = f" and {bad.size - _MAX_ROWS_LISTED} more" if bad.size > _MAX_ROWS_LISTED else ""
        raise ValueError(
            f"the hyperbolic kernel reads the last column of {name} as each row's standard "
            f"deviation sigma, which must be > 0; {bad.size} row(s) have sigma <= 0 "
            f"({listed}{more})")
    return sigma


def is_one_of(value, choices):
    """``value in choices`` for a str (or None) value only: an array's
    ``in`` compares element-wise (NumPy's "truth value ... is ambiguous",
    or a one-element array that passed for its string)."""
    return (value is None or isinstance(value, str)) and value in choices


def is_missing_label(value):
    """Whether one label is missing: None, a NaN of any number type
    (Decimal's signalling one too, without raising), NaT, or pandas' NA and
    NaT (recognised by their types, without importing pandas)."""
    if value is None:
        return True
    if type(value).__module__.startswith("pandas") and type(value).__name__ in ("NAType",
                                                                               "NaTType"):
        return True
    if isinstance(value, (np.datetime64, np.timedelta64)):
        return bool(np.isnat(value))
    if isinstance(value, decimal.Decimal):
        return value.is_nan()
    if isinstance(value, numbers.Integral) or not isinstance(value, numbers.Number):
        return False  # ints beyond float64 included
    try:
        return value != value  # NaN, the one number unequal to itself
    except (TypeError, ValueError, ArithmeticError):
        return False


def _is_infinite_label(value):
    if isinstance(value, decimal.Decimal):
        return value.is_infinite()
    if isinstance(value, numbers.Rational) or not isinstance(value, numbers.Real):
        return False  # ints and fractions are finite, however large
    return not math.isfinite(value)


def check_labels(y, n_samples, *, learner="kgeo.SVM is a classifier"):
    """Validate targets: 1D, finite, discrete, as long as X.

    ``learner`` says, in the message for continuous labels, who needs
    discrete ones ("<learner> and needs discrete labels").

    Returns
    -------
    y : ndarray of shape (n_samples,)
    """
    if y is None:
        raise ValueError("This classifier requires y to be passed, but the target y is None")
    if sp.issparse(y):
        raise TypeError(
            f"y must be a 1-D array-like of labels, got a sparse matrix ({_describe(y)}) of "
            f"shape {y.shape}: pass y.toarray().ravel()")
    if hasattr(y, "__iter__") and not (hasattr(y, "__len__") or hasattr(y, "__array__")):
        # An iterator (a generator): NumPy would wrap it as one 0-d object.
        # A scalar or a string goes on to the shape check's ValueError below,
        # as in scikit-learn.
        raise TypeError(
            f"y must be a 1-D array-like of labels, one per sample, got {_describe(y)}")
    y = as_given_where_mixed(y, as_rectangular(y, "y", what="entries"))
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please "
            "change the shape of y to (n_samples,), for example using ravel().",
            sklearn_compatible(DataConversionWarning), stacklevel=4)
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1D (one label per sample), got shape {y.shape}")
    if y.shape[0] != n_samples:
        raise ValueError(
            f"X and y have inconsistent numbers of samples: X has {n_samples}, "
            f"y has {y.shape[0]}")
    if y.dtype.kind == "c":
        raise ValueError("Complex data not supported in y")
    if y.dtype.kind == "f":
        if not np.all(np.isfinite(y)):
            raise ValueError(
                f"y contains {int(np.count_nonzero(~np.isfinite(y)))} NaN or infinity "
                f"label(s); labels must be finite")
        if np.any(y != np.round(y)):
            raise ValueError(
                f"Unknown label type: continuous. {learner} and needs discrete labels "
                f"(ints, strings, or floats with integral values)")
    if y.dtype.kind == "T":
        # NumPy 2's StringDType: str labels, whose missing value (its
        # na_object, None say) only an element-wise look finds; np.unique
        # would fail on it with NumPy's own words.
        missing = [v for v in y.astype(object) if is_missing_label(v)]
        if missing:
            raise ValueError(f"y contains {len(missing)} missing label(s) ({missing[0]!r}); "
                             f"labels must be set")
    if y.dtype.kind in "mM" and np.any(np.isnat(y)):
        raise ValueError(
            f"y contains {int(np.count_nonzero(np.isnat(y)))} missing label(s) (NaT); labels "
            f"must be set")
    if y.dtype.kind == "O":
        kinds = {type(v) for v in y}
        for v in y:
            if is_missing_label(v) or _is_infinite_label(v):
                raise ValueError(f"y contains a missing label ({v!r}); labels must be set")
            if (isinstance(v, numbers.Real) and not isinstance(v, numbers.Integral)
                    and v != round(v)) or (isinstance(v, decimal.Decimal)
                                           and v != v.to_integral_value()):
                raise ValueError(
                    f"Unknown label type: continuous. {learner} and needs discrete "
                    f"labels")
            if element_kind(v) == "c":
                raise ValueError(f"Complex data not supported in y, got {v!r}")
        # str with np.str_ (bytes with np.bytes_, numbers of any types) are
        # one kind of label: they compare equal across the types.
        letters = {element_kind(v) for v in y}
        if len(kinds) > 1 and not (len(letters) == 1 and letters <= {"n", "U", "S"}):
            raise ValueError(
                f"Unknown label type: y mixes label types {sorted(k.__name__ for k in kinds)}")
        truth = [isinstance(v, (bool, np.bool_)) for v in y]
        if letters == {"n"} and any(truth) and not all(truth):
            # True == 1 and False == 0: a bool among numbers was read as
            # class 1 or 0 without a word (a review); SVC refuses it too.
            raise ValueError(
                f"Unknown label type: y mixes bool labels with other numbers "
                f"({sorted(k.__name__ for k in kinds)}), and True would be class 1, "
                f"False class 0; give one type")
        try:
            classes = np.unique(y)  # the classes are y's sorted distinct labels
        except TypeError as error:
            raise TypeError(
                f"y's labels must be sortable, as the classes are ordered, but "
                f"{sorted(k.__name__ for k in kinds)} labels are not ({error})") from None
        # A sort groups equal labels only under a total order: under a
        # partial one (frozensets' subset order), np.unique kept one label
        # as several classes (a review: 2 labels, 6 classes, without a word).
        for a, b in zip(classes[:-1], classes[1:]):
            if not a < b:
                raise TypeError(
                    f"y's labels must be totally ordered, as the classes are sorted, but "
                    f"{sorted(k.__name__ for k in kinds)} labels are not: {a!r} and "
                    f"{b!r} differ, yet {a!r} < {b!r} is False")
    return y


def element_kind(value):
    """The kind of one label held in an object array, in dtype.kind letters.

    Real numbers (bool and NumPy scalars included) compare equal across
    types, so they are one kind ``"n"``, like the dtypes ``b``, ``i``, ``u``
    and ``f``; ``str`` and ``bytes`` never equal each other or a number.
    Anything else (tuples, enums, ...) is ``"other"``: its own ``__eq__``
    decides among such labels, but mixed with strings or numbers it is a
    mistake.
    """
    if isinstance(value, str):  # np.str_ is a str
        return "U"
    if isinstance(value, bytes):  # and np.bytes_ a bytes
        return "S"
    if isinstance(value, (numbers.Real, np.bool_)):  # NumPy registers its scalars
        return "n"
    if isinstance(value, numbers.Complex):
        return "c"
    if isinstance(value, numbers.Number):  # decimal.Decimal
        return "n"
    return "other"


KIND_NAMES = {"n": "numbers", "c": "complex numbers", "U": "str", "S": "bytes",
              "other": "other objects"}


def _kinds_of(labels):
    """The label kinds (``element_kind``'s letters) an array holds."""
    if labels.dtype.kind != "O":
        # (StringDType's "T" holds str, as "U" does: they compare equal.)
        return {"n" if labels.dtype.kind in "biuf" else
                "U" if labels.dtype.kind == "T" else labels.dtype.kind}
    return {element_kind(v) for v in labels.flat}


def checked_accuracy(y_true, y_pred, sample_weight=None):
    """Share of ``y_pred`` equal to ``y_true`` (each sample counting as its
    weight, where weights are given), after checking ``y_true``.

    ``y_true`` must be labels like the ones the model was fitted on: one per
    prediction (a column vector is flattened, with the warning ``fit`` gives),
    of the same kind (strings or numbers) as ``y_pred``, which would otherwise
    compare unequal everywhere and score 0 without a word.
    """
    y_true = check_labels(y_true, y_pred.shape[0])
    true_kinds, pred_kinds = _kinds_of(y_true), _kinds_of(y_pred)
    if true_kinds != pred_kinds:
        def named(kinds):
            return " and ".join(KIND_NAMES.get(kind, kind) for kind in sorted(kinds))
        raise ValueError(
            f"y holds {named(true_kinds)} as labels, but the model predicts "
            f"{named(pred_kinds)} (its classes_); they would never compare equal")
    weight = check_sample_weight(sample_weight, y_pred.shape[0])
    if weight is None:
        return float(np.mean(y_pred == y_true))
    weight = weight / weight.max()  # sums of weights at most 1 each cannot overflow
    # Both sums in one order: all right gives exactly 1 (a dot product and a
    # sum add in different orders, and 1.0000000000000002 is no accuracy).
    return float(np.sum(weight * (y_pred == y_true)) / np.sum(weight))


def _short_repr(value):
    """repr shortened for messages: 2**2000 has 603 digits."""
    return reprlib.repr(value)


@parameter_errors()
def check_real(value, name, *, requirement="a finite real number"):
    """``real_value`` of a parameter: its errors are InvalidParameterErrors."""
    return real_value(value, name, requirement=requirement)


@parameter_errors()
def check_positive(value, name, *, allow_zero=False):
    """``positive_value`` of a parameter: its errors are InvalidParameterErrors."""
    return positive_value(value, name, allow_zero=allow_zero)


def real_value(value, name, *, requirement="a finite real number"):
    """Return ``value`` as a finite float, or raise naming ``name``.

    Any ``numbers.Real`` but bool is accepted (``Fraction``, NumPy scalars);
    an integer beyond float64's range raises ``ValueError``, where ``float``
    would raise ``OverflowError``.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {_short_repr(value)} "
                        f"({type(value).__name__})")
    try:
        as_float = float(value)
        shown = repr(as_float)
    except OverflowError:
        as_float, shown = math.inf, _short_repr(value)
    if not math.isfinite(as_float):
        raise ValueError(f"{name} must be {requirement}, got {shown}")
    return as_float


def positive_value(value, name, *, allow_zero=False):
    """Return ``value`` as a float, or raise if it is not a finite positive number."""
    requirement = f"finite and {'>= 0' if allow_zero else '> 0'}"
    value = real_value(value, name, requirement=requirement)
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {requirement}, got {value!r}")
    return value


def check_sample_weight(sample_weight, n_samples):
    """``sample_weight`` as a new float64 array of shape (n_samples,), or None.

    Weights must be finite and >= 0, and not all 0; a single real number
    weighs every sample alike. Booleans are refused (a mask passed as
    weights is more likely a mistake than 0/1 weights).
    """
    if sample_weight is None:
        return None
    if isinstance(sample_weight, (numbers.Real, np.bool_)) and not isinstance(
            sample_weight, np.ndarray):
        # Data, not a parameter: its own ValueError or TypeError.
        return np.full(n_samples, positive_value(sample_weight, "sample_weight"))
    if sp.issparse(sample_weight):
        raise TypeError(
            f"sample_weight must be a 1-D array-like of real numbers, got a sparse matrix "
            f"({_describe(sample_weight)})")
    # As X and y: np.asarray would weigh a sample by the value under its mask.
    refuse_masked(sample_weight, "sample_weight", remedy="fill them (sample_weight.filled(0) "
                  "leaves those samples out)")
    try:
        weight = np.asarray(sample_weight)
    except (TypeError, ValueError) as error:
        raise TypeError(f"sample_weight must be a 1-D array-like of real numbers, got "
                        f"{_short_repr(sample_weight)} ({error})") from None
    if weight.dtype.kind == "O":  # Fractions, Decimals, huge ints, or a mix
        # NumPy would convert True and "2" too: a mask or text is no weight.
        odd = next((v for v in weight.flat
                    if isinstance(v, (bool, np.bool_, str, bytes))
                    or not isinstance(v, (numbers.Real, decimal.Decimal))), None)
        if odd is not None:
            raise TypeError(f"sample_weight must hold real numbers, got {_short_repr(odd)} "
                            f"({type(odd).__name__}) among them")
        try:
            # A wider float beyond or below range: refused below.
            with np.errstate(over="ignore", under="ignore"):
                converted = weight.astype(np.float64)
        except OverflowError:  # a Python int or Fraction beyond range
            converted = None
        except ValueError:
            snan = _signalling_nan(weight)
            if snan is None:
                raise
            raise ValueError(f"sample_weight must be finite, got a signalling NaN "
                             f"({snan!r})") from None
        if converted is None or _rounded_to_infinity(weight, converted):
            raise ValueError(f"sample_weight must be finite float64 numbers, got a value "
                             f"beyond float64's range ({_short_repr(sample_weight)})")
        # A weight made 0 would leave its sample out, unsaid.
        _refuse_rounded_to_zero(_rounded_to_zero(weight, converted), "sample_weight")
        weight = converted
    if weight.dtype.kind not in "iuf":
        raise TypeError(f"sample_weight must hold real numbers, got dtype {weight.dtype} "
                        f"({_short_repr(sample_weight)})")
    if weight.ndim != 1 or weight.shape[0] != n_samples:
        raise ValueError(f"sample_weight must have shape ({n_samples},), one weight per "
                         f"sample, got shape {weight.shape}")
    # as_float64: a float wider than float64 beyond its range is refused as
    # such, not as the infinity it would become; then always a copy, so
    # that the caller's array stays as it was.
    weight = np.array(as_float64(weight, "sample_weight"), copy=True)
    bad = np.flatnonzero(~np.isfinite(weight))
    if bad.size:
        raise ValueError(
            f"sample_weight must be finite, got {bad.size} NaN or infinite weight(s) (first "
            f"samples {bad[:_MAX_ROWS_LISTED].tolist()})")
    bad = np.flatnonzero(weight < 0)
    if bad.size:
        raise ValueError(
            f"sample_weight must be >= 0, got {bad.size} negative weight(s) (first samples "
            f"{bad[:_MAX_ROWS_LISTED].tolist()}, weights "
            f"{weight[bad[:_MAX_ROWS_LISTED]].tolist()})")
    if not np.any(weight > 0):
        raise ValueError(f"sample_weight is zero for all {n_samples} samples: at least one "
                         f"needs a positive weight")
    return weight
