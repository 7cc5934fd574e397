"""Build the Cython extensions; all metadata lives in pyproject.toml."""

import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

# KGEO_DEBUG_CYTHON=1 turns bounds and wraparound checks back on for debugging.
DEBUG = os.environ.get("KGEO_DEBUG_CYTHON", "0") not in ("", "0")
OPENMP = os.environ.get("KGEO_NO_OPENMP", "0") in ("", "0")

# No errno and no FP traps: lets the compiler vectorise sqrt and the two-branch
# arccos in the kernel maps (results are unchanged; nothing here reads either).
# No fused multiply-adds: the AVX2 and baseline copies of the arccos and
# dense-column loops (kgeo/_kernels.pyx) and every platform then round alike.
# Loops start on 32-byte boundaries: where they fall otherwise depends on
# unrelated code. Adding one function to _kernels.pyx moved the dense-column
# loop of the kernel rows across a 64-byte line and made every 20 Newsgroups
# NGD fit ~7 % slower and the rows alone ~10 % (benchmarks/README.md).
compile_args = ["-O3", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off",
                "-falign-loops=32"] + (["-fopenmp"] if OPENMP else [])
link_args = ["-fopenmp"] if OPENMP else []


def extension(name):
    return Extension(
        f"kgeo.{name}",
        [f"kgeo/{name}.pyx"],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    )


setup(
    ext_modules=cythonize(
        [extension("_kernels"), extension("_solver")],
        compiler_directives={
            "language_level": 3,
            "boundscheck": DEBUG,
            "wraparound": DEBUG,
            "cdivision": not DEBUG,
            "initializedcheck": DEBUG,
        },
    ),
)
