"""Warnings and errors raised by kgeo.

They mirror scikit-learn's classes of the same names (same bases), so code
written against scikit-learn catches them, without importing it at runtime.
"""

import functools
import sys

__all__ = ["ConvergenceWarning", "DataConversionWarning", "NotFittedError"]


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit``."""


def not_fitted_error(message):
    """A ``NotFittedError`` that scikit-learn also recognises when it is loaded.

    scikit-learn is never imported for this: where the caller already uses it,
    the error raised derives from both kgeo's and scikit-learn's classes.
    """
    sklearn_exceptions = sys.modules.get("sklearn.exceptions")
    if sklearn_exceptions is None:
        return NotFittedError(message)
    return _with_sklearn_base(sklearn_exceptions.NotFittedError)(message)


@functools.cache
def _with_sklearn_base(sklearn_not_fitted):
    return type("NotFittedError", (NotFittedError, sklearn_not_fitted),
                {"__module__": __name__, "__doc__": NotFittedError.__doc__})


class ConvergenceWarning(UserWarning):
    """The solver stopped before meeting its tolerance."""


class DataConversionWarning(UserWarning):
    """Input had to be converted (for example a column-vector ``y``)."""
