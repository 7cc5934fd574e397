"""The suite's hang watchdog (``HangWatchdog`` in conftest.py).

Each check runs pytest in a subprocess on a small folder of tests whose
conftest takes the suite's ``pytest_configure``, so that a watchdog firing
ends that process, not this run.
"""

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SUITE_CONFTEST = Path(__file__).resolve().parent / "conftest.py"


def run_pytest(folder, tests, timeout):
    """Run ``tests`` (a module's source) under the suite's watchdog set to
    ``timeout`` (the text of ``$KGEO_TEST_TIMEOUT``); return the finished
    process and its wall-clock seconds."""
    (folder / "pytest.ini").write_text("[pytest]\n")  # this folder is the rootdir
    (folder / "conftest.py").write_text(textwrap.dedent(f"""\
        import importlib.util

        spec = importlib.util.spec_from_file_location("kgeo_suite_conftest",
                                                      {str(SUITE_CONFTEST)!r})
        suite = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(suite)
        pytest_configure = suite.pytest_configure
        """))
    (folder / "test_subject.py").write_text(textwrap.dedent(tests))
    env = dict(os.environ, KGEO_TEST_TIMEOUT=timeout)
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(folder)], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=120)
    return done, time.monotonic() - start


@pytest.mark.parametrize("hang", ["time.sleep(600)",           # waiting, GIL released
                                  "sum(range(10**14))"])        # a C loop holding the GIL
def test_a_hanging_test_ends_the_run_with_its_stack(tmp_path, hang):
    done, seconds = run_pytest(tmp_path, f"""\
        import time

        def test_hangs():
            {hang}

        def test_after_the_hang():
            open("after-the-hang-ran", "w").close()
        """, "3")
    assert done.returncode not in (0, 5), done.stdout + done.stderr
    assert seconds < 120, "the watchdog did not stop the hang"
    assert "Timeout (0:00:03)!" in done.stderr
    assert "in test_hangs" in done.stderr  # the hanging test's frame is in the dump
    assert not (tmp_path / "after-the-hang-ran").exists()


def test_the_watchdog_is_armed_per_test_not_per_run(tmp_path):
    """Five tests of 1 s each pass under a 3 s watchdog: each test rearms it."""
    done, seconds = run_pytest(tmp_path, """\
        import time

        import pytest

        @pytest.mark.parametrize("i", range(5))
        def test_one_second(i):
            time.sleep(1)
        """, "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 passed" in done.stdout
    assert "Timeout" not in done.stderr


@pytest.mark.parametrize("text, seconds", [("", 900.0), (" 2.5 ", 2.5), ("0", None)])
def test_the_timeout_read_from_the_environment(tmp_path, text, seconds):
    """Unset or empty: the default; 0: no watchdog registered at all."""
    done, _ = run_pytest(tmp_path, f"""\
        def test_the_watchdog(pytestconfig):
            watchdog = pytestconfig.pluginmanager.get_plugin("kgeo-test-watchdog")
            assert (watchdog and watchdog.seconds) == {seconds!r}
        """, text)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("text", ["soon", "-1", "nan", "inf", "1e10"])
def test_a_bad_timeout_is_refused_by_name(tmp_path, text):
    done, _ = run_pytest(tmp_path, "def test_nothing():\n    pass\n", text)
    assert done.returncode == 4, done.stdout + done.stderr  # pytest's usage error
    assert "KGEO_TEST_TIMEOUT must be a number of seconds from 0 (no watchdog) to 1e+06" in (
        done.stderr)
    assert repr(text) in done.stderr
