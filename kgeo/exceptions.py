"""Warnings and errors raised by kgeo.

They mirror scikit-learn's classes of the same names (same bases), so code
written against scikit-learn catches them, without importing it at runtime.
"""

__all__ = ["ConvergenceWarning", "DataConversionWarning", "NotFittedError"]


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit``."""


class ConvergenceWarning(UserWarning):
    """The solver stopped before meeting its tolerance."""


class DataConversionWarning(UserWarning):
    """Input had to be converted (for example a column-vector ``y``)."""
