"""The README's set-up commands are the ones CI runs, and the demo they start works."""

import pathlib
import re

import pytest

import kgeo.__main__

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _setup_commands():
    readme = ROOT / "README.md"
    if not readme.exists():
        pytest.skip(f"no README.md beside the tests ({readme})")
    block = re.search(r"```bash\n(.*?)```", readme.read_text(), re.S)
    assert block, "README.md must open with a bash block of set-up commands"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_the_two_setup_commands():
    demo, tests = _setup_commands()[:2]
    assert "pip install ." in demo and demo.endswith("kgeo demo")
    assert 'pip install ".[test]"' in tests and tests.endswith("pytest")


def test_ci_runs_the_readme_test_command_verbatim():
    ci = ROOT / ".ci" / "run"
    if not ci.exists():
        pytest.skip(f"no .ci/run beside the tests ({ci})")
    test_line = _setup_commands()[1]
    # What CI runs after creating and activating its own fresh environment:
    # the README line without its own venv creation and activation.
    install_and_test = test_line.split("&&", 2)[-1].strip()
    assert install_and_test in ci.read_text().splitlines()


def test_readme_tests_the_declared_minimum_versions():
    """The README's command for the oldest versions pins every lower bound
    pyproject.toml declares for the package and its test extra, to that
    version's series: raising a bound without testing at it shows here."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    pyproject = ROOT / "pyproject.toml"
    readme = ROOT / "README.md"
    if not pyproject.exists() or not readme.exists():
        pytest.skip(f"no pyproject.toml or README.md beside the tests ({ROOT})")
    project = tomllib.loads(pyproject.read_text())["project"]
    declared = dict(re.fullmatch(r"([\w-]+)>=([\d.]+)", requirement).groups()
                    for requirement in project["dependencies"]
                    + project["optional-dependencies"]["test"] if ">=" in requirement)
    assert {"numpy", "scipy", "scikit-learn", "pytest"} <= set(declared)
    lines = [line for line in readme.read_text().splitlines()
             if line.startswith('pip install ".[test]" "numpy==')]
    assert len(lines) == 1, "README.md must hold one command for the oldest versions"
    pinned = dict(re.findall(r'"([\w-]+)==([\d.]+)\.\*"', lines[0]))
    # ">=7" is the 7.0 series.
    assert pinned == {name: ".".join((version.split(".") + ["0"])[:2])
                      for name, version in declared.items()}
    assert lines[0].endswith("&& pytest")


def test_demo_prints_both_kernels(capsys):
    assert kgeo.__main__.main(["demo", "--n-documents", "600", "--n-features", "800",
                               "--n-classes", "4"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines()[2:]}
    for kernel in ("ngd", "linear"):
        accuracy = float(rows[kernel].split()[3].rstrip("%"))
        # Well above chance (25%) on 4 topics: the default seed gives 97.9%
        # (ngd) and 99.2% (linear); test rows misaligned with their labels
        # give chance, 25.4% and 25.8%.
        assert 90.0 < accuracy <= 100.0


def test_demo_rejects_a_missing_data_folder(tmp_path, capsys):
    assert kgeo.__main__.main(["demo", "--data", str(tmp_path / "nowhere")]) == 2
    assert "nowhere" in capsys.readouterr().err


def test_importing_the_uncompiled_source_folder_says_so(tmp_path):
    # Straight after `pip install .`, `python -c "import kgeo"` in the
    # repository root finds the source folder first; it used to fail with
    # "No module named 'kgeo._kernels'", which names no cause.
    import shutil
    import subprocess
    import sys

    source = pathlib.Path(kgeo.__file__).parent
    shutil.copytree(source, tmp_path / "kgeo", ignore=shutil.ignore_patterns(
        "*.so", "*.pyd", "*.c", "__pycache__"))
    proc = subprocess.run([sys.executable, "-c", "import kgeo"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "kgeo's compiled modules are missing from" in proc.stderr, proc.stderr[-2000:]
    assert "Run from another folder" in proc.stderr
