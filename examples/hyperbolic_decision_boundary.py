"""Lafferty & Lebanon's figure 1: two normals, the hyperbolic heat kernel against the Gaussian.

Their figure contrasts the geometries with an SVM on two points, one per
class, of the univariate normal family N(mu, sigma^2): with the Gaussian
kernel on (mu, sigma) and with the heat kernel of the family's Fisher metric,
the hyperbolic plane (``kgeo.SVM(kernel="hyperbolic")``). Both kernels are 1
at distance 0, so the two dual coefficients are equal, b* is 0, and the
boundary is where the two points' kernel values agree, i.e. their distances:

- Gaussian: the perpendicular bisector of the two points, a straight line;
- hyperbolic: the normals at equal Fisher-Rao distance from both, a geodesic
  of the hyperbolic plane: in the coordinates (mu / sqrt(2), sigma), half of
  a circle centred on the mu axis (or a vertical line).

"As the variance decreases the mean is known with increasing certainty":
the hyperbolic boundary bends toward the point of smaller sigma.

The script traces both boundaries (where the decision value changes sign,
by bisection along lines of a grid), prints them, and checks both
statements: equal Fisher-Rao distances along the hyperbolic boundary, and
how far its points and the Gaussian's lie from a circle centred on the axis
and from a line.

    python examples/hyperbolic_decision_boundary.py [--plot figure1.png]

``--plot`` draws the two decision functions and their boundaries side by
side (needs matplotlib, the ``plot`` extra).
"""

import argparse
import math
import os

import numpy as np

import kgeo

# The two normals (mu, sigma): a wide one and a narrow one.
POINTS = np.array([[-1.0, 1.2], [1.0, 0.4]])


def fit_pair(kernel, points=POINTS, **params):
    """An SVM on the two points, classes 0 and 1, near hard margin."""
    return kgeo.SVM(kernel=kernel, C=1e3, tol=1e-10, **params).fit(points, [0, 1])


def crossing(model, fixed, solve_for, grid):
    """Where the decision value changes sign along lines: for each value of
    the coordinate held ``fixed`` (an array), the other one (``solve_for``:
    0 for mu, 1 for sigma) within the ascending ``grid``, by bisection to
    float64 resolution; NaN where no crossing can be traced there.

    The signs are first read at the grid's points along each line, and the
    bisection starts from the first two of opposite signs with only zeros
    between them. A decision value of exactly 0 (b* is 0) is either the
    boundary, where the two kernel values agree to the last bit, or both
    kernel values underflowed, where its sign says nothing: it never ends a
    bracket, the bracket closes on a middle point where it is 0 (both ends
    move there), and the point found is kept only if a kernel value there
    is a normal float64. (Taking 0 for a sign of its own traced the edge of
    the underflow for the boundary at t = 0.02, and bracket ends at
    mu = +-10 that underflowed refused gamma = 10.)
    """
    fixed = np.asarray(fixed, dtype=np.float64)
    grid = np.asarray(grid, dtype=np.float64)

    def points(other, at):
        return np.column_stack((other, at) if solve_for == 0 else (at, other))
    signs = np.sign(model.decision_function(points(np.tile(grid, fixed.size),
                                                   np.repeat(fixed, grid.size))))
    signs = signs.reshape(fixed.size, grid.size)
    low, high = np.full(fixed.size, grid[0]), np.full(fixed.size, grid[-1])
    sign_low, changes = np.zeros(fixed.size), np.zeros(fixed.size, dtype=bool)
    for line, line_signs in enumerate(signs):
        nonzero = np.flatnonzero(line_signs)
        flips = np.flatnonzero(line_signs[nonzero[:-1]] != line_signs[nonzero[1:]])
        if flips.size:
            a, b = nonzero[flips[0]], nonzero[flips[0] + 1]
            low[line], high[line], sign_low[line] = grid[a], grid[b], line_signs[a]
            changes[line] = True
    for _ in range(80):  # a bracket / 2^80: below float64's spacing
        middle = 0.5 * (low + high)
        sign_middle = np.sign(model.decision_function(points(middle, fixed)))
        same = sign_middle == sign_low
        low = np.where(same | (sign_middle == 0), middle, low)
        high = np.where(same, high, middle)
    found = 0.5 * (low + high)
    params = {"t": model.t} if model.kernel == "hyperbolic" else {"gamma": model.gamma}
    values = kgeo.pairwise_kernels(points(found, fixed), model.support_vectors_,
                                   kernel=model.kernel, **params)
    # Subnormal kernel values keep too few digits to place the crossing
    # (at t = 0.001, 1e-326: distances 3e-5 apart).
    traced = changes & (values.max(axis=1) >= np.finfo(np.float64).tiny)
    return np.where(traced, found, np.nan)


def fisher_rao(a, b):
    """Fisher-Rao distance of N(mu_a, sigma_a^2) and N(mu_b, sigma_b^2)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return math.sqrt(2.0) * np.arccosh(
        1.0 + ((a[..., 0] - b[..., 0]) ** 2 + 2.0 * (a[..., 1] - b[..., 1]) ** 2)
        / (4.0 * a[..., 1] * b[..., 1]))


def circle_on_axis(mu, sigma):
    """The circle centred on the mu axis through the points (mu / sqrt(2),
    sigma), by least squares: its centre (in mu), radius and the largest
    distance of a point from it, in those coordinates."""
    u = mu / math.sqrt(2.0)
    # u^2 + sigma^2 = 2 a u + (R^2 - a^2): linear in (a, R^2 - a^2).
    A = np.column_stack([2.0 * u, np.ones_like(u)])
    (a, rest), *_ = np.linalg.lstsq(A, u * u + sigma * sigma, rcond=None)
    radius = math.sqrt(rest + a * a)
    off = np.abs(np.hypot(u - a, sigma) - radius)
    return a * math.sqrt(2.0), radius, float(off.max())


def line(mu, sigma):
    """The line through the points (mu, sigma) by least squares, and the
    largest distance of a point from it."""
    centre = np.array([mu.mean(), sigma.mean()])
    _, _, vt = np.linalg.svd(np.column_stack([mu, sigma]) - centre)
    normal = vt[1]
    return float(np.max(np.abs((np.column_stack([mu, sigma]) - centre) @ normal)))


def trace(t=0.5, gamma=0.5):
    """Both boundaries and the checks, as a dict.

    The Gaussian's is a line crossing every sigma once: mu is solved for on
    a grid of sigma. The hyperbolic one is half a circle, crossing a sigma
    twice or not at all, but every mu of its span once: sigma is solved
    for on a grid of mu.
    """
    hyperbolic = fit_pair("hyperbolic", t=t)
    gaussian = fit_pair("rbf", gamma=gamma)
    sigma_grid = np.linspace(0.1, 2.5, 49)
    mu_g = crossing(gaussian, sigma_grid, 0, np.linspace(-10.0, 10.0, 257))
    mu_grid = np.linspace(-3.0, 5.0, 161)
    # Geometric in sigma, the scale (where the boundary nears the axis, a
    # sigma of 0.01 is far from one of 0.05).
    sigma_h = crossing(hyperbolic, mu_grid, 1, np.geomspace(1e-3, 20.0, 257))
    on = ~np.isnan(sigma_h)
    gon = ~np.isnan(mu_g)
    # A kernel that underflows between the points (a short t, a large
    # gamma) leaves every decision value at b*: no boundary to trace.
    for kernel, params, found, needed in (("hyperbolic", {"t": t}, on, 3),
                                          ("rbf", {"gamma": gamma}, gon, 2)):
        if np.count_nonzero(found) < needed:
            between = kgeo.pairwise_kernels(POINTS[:1], POINTS[1:], kernel=kernel, **params)
            raise ValueError(
                f"the {kernel} SVM's decision values do not change sign in the plotted "
                f"region ({params}: the kernel between the two points is "
                f"{between[0, 0]:.3g}); use a larger t or a smaller gamma")
    along = np.column_stack([mu_grid[on], sigma_h[on]])
    d0, d1 = fisher_rao(along, POINTS[0]), fisher_rao(along, POINTS[1])
    centre, radius, off_circle = circle_on_axis(mu_grid[on], sigma_h[on])
    return {
        "gaussian": (mu_g, sigma_grid), "hyperbolic": (mu_grid, sigma_h),
        "intercepts": (float(hyperbolic.intercept_[0]), float(gaussian.intercept_[0])),
        "distance_gap": float(np.max(np.abs(d0 - d1))), "distance_scale": float(np.max(d0)),
        "circle": (centre, radius, off_circle),
        "hyperbolic_off_line": line(mu_grid[on], sigma_h[on]),
        "gaussian_off_line": line(mu_g[gon], sigma_grid[gon]),
        "models": (hyperbolic, gaussian),
    }


def plot(result, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mu, sigma = np.meshgrid(np.linspace(-3, 5, 321), np.linspace(0.05, 2.5, 197))
    grid = np.column_stack([mu.ravel(), sigma.ravel()])
    figure, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
    for axis, model, key, title in zip(
            axes, result["models"][::-1], ("gaussian", "hyperbolic"),
            ("Gaussian kernel on (mu, sigma)", "hyperbolic heat kernel (Fisher metric)")):
        values = model.decision_function(grid).reshape(mu.shape)
        axis.contourf(mu, sigma, values, levels=21, cmap="RdBu_r")
        axis.plot(*result[key], "k-", lw=2)
        axis.plot(*POINTS[0], "o", color="navy", ms=9)
        axis.plot(*POINTS[1], "o", color="darkred", ms=9)
        axis.set_title(title)
        axis.set_xlabel("mu")
        axis.set_xlim(-3, 5)
        axis.set_ylim(0.05, 2.5)
    axes[0].set_ylabel("sigma")
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def check_plot_path(parser, path):
    """Refuse, before the computation, a figure that could not be written."""
    try:
        import matplotlib
    except ImportError:
        parser.error("--plot needs matplotlib (pip install matplotlib)")
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        parser.error(f"--plot: the folder {folder!r} does not exist")
    formats = Figure().canvas.get_supported_filetypes()
    extension = os.path.splitext(path)[1].lstrip(".").lower()
    if extension not in formats:
        parser.error(f"--plot: the file name must end in one of "
                     f"{', '.join('.' + f for f in sorted(formats))}; got {path!r}")
    # Opened as the figure will be (a folder of that name, a read-only file
    # or folder, /proc or /sys failed only after the computation); a file
    # this check creates is removed again, an existing one is not changed.
    target = os.path.realpath(path)  # a link's target is the file opened
    existed = os.path.exists(target)
    try:
        with open(path, "ab"):
            pass
    except OSError as error:
        parser.error(f"--plot: cannot write {path!r}: {error.strerror or error}")
    if not existed:
        os.remove(target)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--t", type=float, default=0.5, help="diffusion time (hyperbolic)")
    parser.add_argument("--gamma", type=float, default=0.5, help="gamma of the Gaussian")
    parser.add_argument("--plot", default=None, help="write the figure to this file")
    args = parser.parse_args(argv)
    if not (0 < args.t < math.inf and 0 < args.gamma < math.inf):
        parser.error(f"--t and --gamma must be finite and > 0, got {args.t} and {args.gamma}")
    if args.plot is not None:  # "" too: refused for its missing extension
        check_plot_path(parser, args.plot)
    try:
        result = trace(args.t, args.gamma)
    except ValueError as error:
        parser.error(str(error))
    print(f"points (mu, sigma): {POINTS[0].tolist()} (class 0), {POINTS[1].tolist()} (class 1)")
    print(f"b*: hyperbolic {result['intercepts'][0]:.2e}, Gaussian {result['intercepts'][1]:.2e}")
    mu_g, sigma_g = result["gaussian"]
    print("Gaussian boundary (mu at sigma): " + ", ".join(
        f"{m:.4f} at {s:.2f}" for m, s in list(zip(mu_g, sigma_g))[::8]))
    mu_h, sigma_h = result["hyperbolic"]
    print("hyperbolic boundary (sigma at mu): " + ", ".join(
        f"{s:.4f} at {m:.2f}" for m, s in list(zip(mu_h, sigma_h))[::16] if s == s))
    centre, radius, off = result["circle"]
    print(f"hyperbolic boundary: Fisher-Rao distances to the two points differ by at most "
          f"{result['distance_gap']:.1e} (distances up to {result['distance_scale']:.2f})")
    print(f"  a circle centred on the axis at mu = {centre:.6f}, radius {radius:.6f} in "
          f"(mu / sqrt 2, sigma): points within {off:.1e} of it; "
          f"{result['hyperbolic_off_line']:.3f} from the best line")
    print(f"Gaussian boundary: points within {result['gaussian_off_line']:.1e} of a line")
    if args.plot is not None:
        plot(result, args.plot)
        print(f"figure written to {args.plot}")


if __name__ == "__main__":
    main()
