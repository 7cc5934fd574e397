"""Build the Cython extensions; all metadata lives in pyproject.toml."""

import os
import shutil
import tempfile
import warnings

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CompileError, LinkError

# KGEO_DEBUG_CYTHON=1 turns bounds and wraparound checks back on for debugging.
DEBUG = os.environ.get("KGEO_DEBUG_CYTHON", "0") not in ("", "0")
# KGEO_NO_OPENMP=1 builds without OpenMP even where the compiler has it.
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


class BuildWithOptionalOpenMP(build_ext):
    """Builds with OpenMP where the compiler has it (``-fopenmp`` and
    ``omp.h``), without it elsewhere: Apple's clang, or clang without
    libomp's headers, would otherwise stop the build at ``omp.h``. Without
    OpenMP the parallel loops (Gram matrices, prediction, the fit's set-up)
    run on one thread; the class pairs of a fit still use ``n_jobs``
    threads, and the results are the same bits."""

    def build_extensions(self):
        if OPENMP and not self._compiler_has_openmp():
            warnings.warn("kgeo: this compiler cannot build OpenMP code (-fopenmp with "
                          "omp.h); building without it, so the parallel loops run on one "
                          "thread")
            for ext in self.extensions:
                ext.extra_compile_args = [a for a in ext.extra_compile_args if a != "-fopenmp"]
                ext.extra_link_args = [a for a in ext.extra_link_args if a != "-fopenmp"]
        super().build_extensions()

    def _compiler_has_openmp(self):
        folder = tempfile.mkdtemp(prefix="kgeo-openmp-")
        try:
            source = os.path.join(folder, "probe.c")
            with open(source, "w") as fh:
                fh.write("#include <omp.h>\n"
                         "int main(void) { return omp_get_max_threads() > 0 ? 0 : 1; }\n")
            objects = self.compiler.compile([source], output_dir=folder,
                                            extra_postargs=["-fopenmp"])
            # Linked as the extensions are (LDSHARED with LDFLAGS), so that a
            # runtime found only through LDFLAGS (-L/opt/llvm/lib) is found.
            self.compiler.link_shared_object(objects, os.path.join(folder, "probe.so"),
                                             extra_postargs=["-fopenmp"])
            return True
        except (CompileError, LinkError):
            return False
        finally:
            shutil.rmtree(folder, ignore_errors=True)


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
    cmdclass={"build_ext": BuildWithOptionalOpenMP},
    ext_modules=cythonize(
        [extension("_kernels"), extension("_solver"), extension("_plsa_em")],
        compiler_directives={
            "language_level": 3,
            "boundscheck": DEBUG,
            "wraparound": DEBUG,
            "cdivision": not DEBUG,
            "initializedcheck": DEBUG,
        },
    ),
)
