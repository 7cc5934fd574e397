"""What the benchmarks share: a worker process's own memory figures, running
one with its error shown when it fails, and the accuracy check of the targets."""

import ctypes
import ctypes.util
import json
import resource
import subprocess
import sys


def memory_mb(field):
    """A memory figure of this process from /proc/self/status, in MB
    (``VmRSS``: resident now; ``VmHWM``: the peak since start or the last reset)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def resident_before_mb():
    """Resident memory now, in MB, after handing freed heap back to the system.

    What a benchmark subtracts from a fit's peak. glibc keeps memory that
    was freed (a corpus generator's temporaries) resident for reuse, and
    the fit then refills it without raising ``VmHWM``: read before the
    trim, the "memory the fit added" came out too small (a review: 26 MB
    against 95 MB for ``bench_scale`` at 20k documents, 16 MB against 24 MB
    for ``bench_classes`` at 20 x 150). Elsewhere than glibc, no trim.
    """
    name = ctypes.util.find_library("c")
    if name is not None:
        try:
            ctypes.CDLL(name).malloc_trim(0)
        except (OSError, AttributeError):
            pass
    return memory_mb("VmRSS")


def peak_resident_mb():
    """This process's own peak resident memory, in MB.

    Not ``ru_maxrss``: Linux carries it across ``exec`` from the process
    that forked (``subprocess`` forks with ``vfork``), so a worker started
    by a benchmark that had loaded and tokenised 20 Newsgroups reported
    that parent's peak (184 MB for a ``baseline`` worker that alone peaks at
    70 MB). ``VmHWM`` belongs to the worker's own address space. Elsewhere
    than Linux, ``ru_maxrss`` (kilobytes; bytes on macOS).
    """
    try:
        return memory_mb("VmHWM")
    except (OSError, RuntimeError):
        scale = 1 if sys.platform == "darwin" else 1024
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def run_worker(command):
    """Run ``command`` (a worker) and return the JSON of its last output line;
    if it fails, stop with its own error message rather than a bare exit
    status."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"worker {' '.join(command[2:])} failed (exit status {done.returncode}):\n"
                 f"{done.stderr.strip()[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def accuracy_within(ours, theirs):
    """Whether kgeo's accuracy is within the +-0.1 points of the reference's
    within which issue 4's targets compare times (fractions of the same test
    cases). Judged on the exact gap, not on its printed rounding (a gap of
    0.104 points printed as +0.10 is outside)."""
    return abs(100 * (ours - theirs)) <= 0.1 + 1e-9


def accuracy_gap(ours, theirs):
    """kgeo's accuracy against the reference's, in points, with the verdict
    of ``accuracy_within``."""
    points = 100 * (ours - theirs)
    verdict = "within" if accuracy_within(ours, theirs) else "OUTSIDE"
    return f"{points:+.2f} points ({verdict} the +-0.1 points the targets allow)"


def reset_peak():
    """Make ``VmHWM`` start again from the current resident size (Linux 4.0
    on), so that a peak read later is that of what ran since."""
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")
