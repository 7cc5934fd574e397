"""kgeo: support vector machines with geometric kernels for text.

Documents are bags of words; L1-normalised they are points of the multinomial
manifold. kgeo trains SVMs with kernels built on its Fisher geometry (the
negative geodesic distance kernel of Zhang, Chen & Lee 2005, the diffusion
kernel of Lafferty & Lebanon 2005) and with the usual Euclidean ones, using
its own SMO solver; any other kernel trains the same solver through its matrix
(``SVM(kernel="precomputed")``).
"""

try:
    from . import _kernels, _solver  # noqa: F401  (compiled by the build)
except ImportError as _error:  # pragma: no cover - depends on how kgeo was found
    import os as _os

    raise ImportError(
        f"kgeo's compiled modules are missing from {_os.path.dirname(__file__)!r}: this is "
        f"kgeo's source folder, found before the installed package ('python' and 'python -m "
        f"pytest' look in the current folder first; the 'pytest' command does not). Run "
        f"from another folder ('cd ..'), use the 'pytest' command, or build in place "
        f"with 'pip install \"setuptools>=77\" \"cython>=3\" \"numpy>=2\"' then 'python "
        f"setup.py build_ext --inplace'.") from _error

from ._embedding import MultinomialEmbedding, spherical_normal_mle
from ._hptop import HPTOPEmbedding
from ._kernels import KERNELS
from ._pairwise import (
    geodesic_distance,
    is_conditionally_positive_definite,
    is_positive_definite,
    pairwise_kernels,
)
from ._plsa import PLSA, PLSAFisherEmbedding
from ._svm import SVM
from ._version import __version__
from .exceptions import (
    ConvergenceWarning,
    EmptyDocumentWarning,
    InvalidParameterError,
    NotFittedError,
)

__all__ = [
    "KERNELS",
    "ConvergenceWarning",
    "EmptyDocumentWarning",
    "HPTOPEmbedding",
    "InvalidParameterError",
    "MultinomialEmbedding",
    "NotFittedError",
    "PLSA",
    "PLSAFisherEmbedding",
    "SVM",
    "__version__",
    "geodesic_distance",
    "is_conditionally_positive_definite",
    "is_positive_definite",
    "pairwise_kernels",
    "spherical_normal_mle",
]

# The public submodules, imported when first named (``kgeo.text.RainbowVectorizer``
# after ``import kgeo``), as SciPy's and scikit-learn's are; importing them
# eagerly would cost every ``import kgeo`` the corpora loaders and the
# experiments' imports.
_SUBMODULES = ("datasets", "exceptions", "experiments", "significance", "text")


def __getattr__(name):
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
