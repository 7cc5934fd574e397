"""Warnings and errors raised by kgeo.

They mirror scikit-learn's classes of the same names (same bases), so code
written against scikit-learn catches them, without importing it at runtime.
"""

import contextlib
import functools
import sys

__all__ = ["ConvergenceWarning", "DataConversionWarning", "EmptyDocumentWarning",
           "InvalidParameterError", "NotFittedError"]


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit``."""


class InvalidParameterError(ValueError, TypeError):
    """A parameter has a value of the wrong type or out of its range.

    Both a ``ValueError`` and a ``TypeError``, as scikit-learn's class of
    this name is: ``SVM(C=None)`` and ``SVM(C=-1)`` raise the same class,
    and ``except ValueError`` catches both, as it does for ``SVC``.
    """


# Where scikit-learn defines each class; sklearn.exceptions unless named here.
_SKLEARN_MODULES = {"InvalidParameterError": "sklearn.utils._param_validation"}


def sklearn_compatible(cls):
    """``cls``, or where scikit-learn is loaded, a subclass of it and of
    scikit-learn's class of the same name.

    scikit-learn is never imported for this: where the caller already uses it,
    what kgeo raises or warns with is also caught or filtered as scikit-learn's.
    """
    module = sys.modules.get(_SKLEARN_MODULES.get(cls.__name__, "sklearn.exceptions"))
    sklearn_cls = getattr(module, cls.__name__, None)
    # A private module's class may move or change: taken only where it is
    # what kgeo's is (the same bases), else kgeo's alone.
    if not (isinstance(sklearn_cls, type)
            and all(issubclass(sklearn_cls, base) for base in cls.__bases__)):
        return cls
    return _with_sklearn_base(cls, sklearn_cls)


@functools.cache
def _with_sklearn_base(cls, sklearn_cls):
    def __reduce__(self):
        # pickle finds a class by its module and name, which lead to ``cls``,
        # not to this class made on the fly: pickling an instance raised
        # PicklingError ("not the same object as
        # kgeo.exceptions.NotFittedError"), so a multiprocessing worker's
        # NotFittedError came back as a MaybeEncodingError. It is pickled as
        # ``cls``, and made scikit-learn's again where the receiving process
        # has scikit-learn loaded.
        return _rebuild, (cls, self.args, self.__dict__ or None)

    return type(cls.__name__, (cls, sklearn_cls),
                {"__module__": __name__, "__doc__": cls.__doc__, "__reduce__": __reduce__})


def _rebuild(cls, args, state):
    """Unpickle what ``_with_sklearn_base``'s ``__reduce__`` pickled."""
    instance = sklearn_compatible(cls)(*args)
    if state:
        instance.__dict__.update(state)
    return instance


def not_fitted_error(message):
    """A ``NotFittedError`` (scikit-learn's too, where it is loaded)."""
    return sklearn_compatible(NotFittedError)(message)


@contextlib.contextmanager
def parameter_errors():
    """Raise a ``ValueError`` or ``TypeError`` from the checks of parameters
    in the block as an ``InvalidParameterError`` with the same message.

    The checks raise TypeError for a value of the wrong type and ValueError
    for one out of range; scikit-learn raises one class for both, so code
    that catches either for a bad parameter works the same with kgeo.
    """
    try:
        yield
    except InvalidParameterError:
        raise
    except (TypeError, ValueError, OverflowError) as error:
        # (OverflowError: float() of an integer beyond float64, 10**400.)
        # The frames that raised it are kept, for a check's own bug.
        raise sklearn_compatible(InvalidParameterError)(*error.args).with_traceback(
            error.__traceback__) from None


class ConvergenceWarning(UserWarning):
    """The solver stopped before meeting its tolerance."""


class DataConversionWarning(UserWarning):
    """Input had to be converted (for example a column-vector ``y``)."""


class EmptyDocumentWarning(UserWarning):
    """A document without a word met a multinomial (manifold) kernel.

    It has no point on the simplex: ``SVM.fit`` leaves it out, and
    ``predict`` gives it the intercepts' decisions. Expected where a corpus
    has such documents; filter it by this class then, as
    ``warnings.filterwarnings("ignore", category=kgeo.EmptyDocumentWarning)``.
    """
