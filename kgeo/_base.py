"""The parts of scikit-learn's estimator contract kgeo needs, without importing it."""

import functools
import importlib
import inspect
import math
import numbers
import sys

import numpy as np
import scipy.sparse as sp

from ._validation import check_feature_names, feature_names
from .exceptions import not_fitted_error


class EstimatorMixin:
    """``get_params``/``set_params`` read from the ``__init__`` signature."""

    @classmethod
    def _param_names(cls):
        signature = inspect.signature(cls.__init__)
        return sorted(
            p.name for p in signature.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))

    def get_params(self, deep=True):
        """Parameters of this estimator, as passed to ``__init__``.

        Parameters
        ----------
        deep : bool, default=True
            Unused (kgeo estimators hold no sub-estimators); kept for the API.

        Returns
        -------
        params : dict
        """
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set parameters of this estimator, as ``__init__`` names them.

        Parameters
        ----------
        **params : dict
            New values by parameter name; an unknown name raises
            ``ValueError`` listing the valid ones. Values are checked by the
            next ``fit``, as ``__init__``'s are.

        Returns
        -------
        self : estimator
        """
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for estimator {type(self).__name__}; "
                    f"valid parameters are: {', '.join(valid)}")
            setattr(self, name, value)
        return self

    def _set_feature_names(self, names):
        """``feature_names_in_`` from a fit's ``feature_names(X)``: set, or
        removed when X had none (a refit on an array after a frame)."""
        if names is None:
            self.__dict__.pop("feature_names_in_", None)
        else:
            self.feature_names_in_ = names

    def _check_feature_names(self, X):
        """X's column names against the fit's (see ``check_feature_names``)."""
        check_feature_names(feature_names(X), estimator=type(self).__name__,
                            fitted_names=getattr(self, "feature_names_in_", None))

    def _input_feature_names(self, input_features=None):
        """The names of the fitted input columns, for ``get_feature_names_out``.

        ``input_features`` where given (checked against ``feature_names_in_``
        and ``n_features_in_``), else ``feature_names_in_``, else ``x0``,
        ``x1``, ... (scikit-learn's rule).
        """
        check_is_fitted(self, "n_features_in_")
        fitted = getattr(self, "feature_names_in_", None)
        if input_features is None:
            if fitted is not None:
                return fitted
            return np.asarray([f"x{i}" for i in range(self.n_features_in_)], dtype=object)
        given = np.asarray(input_features, dtype=object)
        if given.ndim != 1 or given.shape[0] != self.n_features_in_:
            # scikit-learn's words, which its estimator checks match.
            raise ValueError(
                f"input_features should have length equal to number of features "
                f"({self.n_features_in_}, the columns of the fit's X), got {given.size} "
                f"name(s) in an array of shape {given.shape}")
        if fitted is not None and not np.array_equal(given, fitted):
            raise ValueError("input_features is not equal to feature_names_in_ (the column "
                             "names of the fit's X)")
        return given

    def __repr__(self):
        defaults = {
            p.name: p.default
            for p in inspect.signature(type(self).__init__).parameters.values()
        }
        changed = []
        for name, value in self.get_params().items():
            default = defaults.get(name, inspect.Parameter.empty)
            # scikit-learn's rule: the same repr, or a NaN left at a NaN
            # default. Not ==, under which C=True, verbose=False and
            # C=np.array([1.0]) equal their defaults: the repr hid values
            # that fit then refuses (a review).
            same = (value is default or (_is_scalar_nan(value) and _is_scalar_nan(default))
                    or repr(value) == repr(default))
            if not same:
                changed.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"


def _is_scalar_nan(value):
    """Whether ``value`` is a real number that is NaN (not an array, not a bool)."""
    return (isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral)
            and math.isnan(value))


def progress_bars_shown():
    """Whether a tqdm bar would be seen: stderr is a terminal, or a notebook's
    kernel runs us. Redirected to a log, a bar's carriage returns and
    redraws were written into it between the lines it should hold."""
    stream = sys.stderr
    interactive = stream is not None and hasattr(stream, "isatty") and stream.isatty()
    return interactive or "ipykernel" in sys.modules


# What set_output(transform=...) takes, as scikit-learn's transformers do.
OUTPUT_CONTAINERS = ("default", "pandas", "polars")


class TransformerMixin:
    """scikit-learn's ``set_output`` for kgeo's transformers: ``transform``
    (and ``fit_transform``) return a pandas or polars frame when asked, by
    ``set_output`` or by scikit-learn's ``transform_output`` setting, as
    scikit-learn's transformers do. Without it, ``Pipeline.set_output``
    refused a pipeline holding one."""

    def set_output(self, *, transform=None):
        """Set the container ``transform`` and ``fit_transform`` return.

        Parameters
        ----------
        transform : {"default", "pandas", "polars"} or None, default=None
            "default": the transformer's own (an ndarray or a CSR matrix);
            "pandas" or "polars": a data frame whose columns are
            ``get_feature_names_out()`` (pandas keeps a data frame input's
            index). A sparse output cannot be one, and raises ``ValueError``.
            None leaves the setting as it is; until set, scikit-learn's
            global ``transform_output`` applies, where scikit-learn is loaded.

        Returns
        -------
        self
        """
        if transform is None:
            return self
        if not isinstance(transform, str) or transform not in OUTPUT_CONTAINERS:
            raise ValueError(
                f"set_output's transform must be one of {', '.join(OUTPUT_CONTAINERS)} or "
                f"None, got {transform!r}")
        # scikit-learn's own attribute: its clone copies it.
        self._sklearn_output_config = {"transform": transform}
        return self

    def _output_container(self):
        configured = getattr(self, "_sklearn_output_config", {}).get("transform")
        if configured is not None:
            return configured
        sklearn = sys.modules.get("sklearn")  # not imported: its setting is the default
        if sklearn is None:
            return "default"
        return sklearn.get_config().get("transform_output", "default")

    def _as_configured_output(self, result, X):
        """``result`` (the transform of X) in the configured container."""
        container = self._output_container()
        if container == "default":
            return result
        if sp.issparse(result):
            # scikit-learn's words, which its estimator checks look for.
            raise ValueError(
                f"{container.capitalize()} output does not support sparse data. "
                f"{type(self).__name__} returns a sparse matrix: call "
                f"set_output(transform='default') on it")
        columns = [str(name) for name in self.get_feature_names_out()]
        if container == "pandas":
            pandas = _output_library("pandas")
            index = X.index if isinstance(X, pandas.DataFrame) else None
            return pandas.DataFrame(result, columns=columns, index=index, copy=False)
        if container == "polars":
            polars = _output_library("polars")
            return polars.DataFrame(result, schema=columns, orient="row")
        # A container scikit-learn's transform_output names that kgeo does not know.
        raise ValueError(
            f"{type(self).__name__} returns {', '.join(OUTPUT_CONTAINERS)} containers, "
            f"not {container!r} (scikit-learn's transform_output): call "
            f"set_output(transform='default') on it")


def _output_library(name):
    """Import pandas or polars for an output container, saying what asked for it."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        # scikit-learn's words for the same case.
        raise ImportError(
            f"Setting output container to {name!r} requires {name} to be installed "
            f"(set_output(transform={name!r}), or scikit-learn's transform_output)"
        ) from error


def wraps_output(transform):
    """Decorate a transformer's ``transform(self, X)`` to return its result
    in the container ``set_output`` configured."""
    @functools.wraps(transform)
    def wrapped(self, X, *args, **kwargs):
        return self._as_configured_output(transform(self, X, *args, **kwargs), X)

    return wrapped


def count_transformer_tags():
    """scikit-learn's tags for a transformer of non-negative counts, dense or
    sparse (called only by scikit-learn, which is then imported already)."""
    from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

    return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                transformer_tags=TransformerTags(),
                input_tags=InputTags(sparse=True, positive_only=True))


def check_is_fitted(estimator, attribute):
    """Raise ``NotFittedError`` unless ``estimator`` has ``attribute``."""
    if not hasattr(estimator, attribute):
        raise not_fitted_error(
            f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' "
            f"with appropriate arguments before using this estimator.")
