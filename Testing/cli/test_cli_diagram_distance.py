#!/usr/bin/env python3
"""`topovox transport --diagrams` against GUDHI's wasserstein_distance (the
exact distance, by assignment) on the diagrams `topovox persistence` writes
of random 2D and 3D images: per dimension, orders 1 and 2, L-infinity and L2
ground metrics, the entropic distance within 2% at --relative-reg 1e-3
(order 2: 5%) and 0.2% at 1e-4; the essential classes matched by birth
(numpy); the distance combining both; the same numbers from the .csv, the .npy and cripser's
layout of the same diagram; the matching on a diagram with one optimal
matching; --batch tables of one image accepted, of several refused; and the
usage and input errors, each with exit status and message. Skipped (exit
77) without GUDHI (with POT).

Usage: test_cli_diagram_distance.py --topovox PATH
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    from gudhi.wasserstein import wasserstein_distance
except ImportError:
    print("SKIP: the oracle GUDHI (with POT) is not installed")
    sys.exit(77)

from cli_checks import expect, finish  # noqa: E402


def run(tool, *args):
    return subprocess.run([tool] + [str(a) for a in args], capture_output=True, text=True)


def table(path):
    return np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)


def finite_points(diagram, d):
    rows = diagram[(diagram[:, 0] == d) & np.isfinite(diagram[:, 2])]
    return rows[:, 1:3]


def essential_cost(x, y, d, order):
    ex = np.sort(x[(x[:, 0] == d) & ~np.isfinite(x[:, 2])][:, 1])
    ey = np.sort(y[(y[:, 0] == d) & ~np.isfinite(y[:, 2])][:, 1])
    return float(np.sum(np.abs(ex - ey) ** order)) if len(ex) == len(ey) else np.inf


def check_against_gudhi(tool, work, rng):
    for shape in ((9, 10), (4, 5, 4)):
        paths = []
        for name in ("x", "y"):
            image = os.path.join(work, name + ".npy")
            np.save(image, rng.random(shape))
            diagram = os.path.join(work, name + ".csv")
            p = run(tool, "persistence", image, "-o", diagram)
            expect(p.returncode == 0, "persistence of %s: %s" % (shape, p.stderr.strip()))
            paths.append(diagram)
        x, y = table(paths[0]), table(paths[1])
        for order, p_name, p_value in ((1, "inf", np.inf), (2, "2", 2.0)):
            got = {}
            for reg in ("1e-3", "1e-4"):
                out = os.path.join(work, "w.csv")
                p = run(tool, "transport", paths[0], paths[1], "--diagrams", "--order", order, "--internal-p", p_name,
                        "--relative-reg", reg, "-o", out)
                expect(p.returncode == 0, "transport --diagrams: " + p.stderr.strip())
                got[reg] = table(out)
            dims = sorted(set(x[:, 0]) | set(y[:, 0]))
            expect(list(got["1e-3"][:, 0]) == dims, "%s: one row per dimension %s" % (shape, dims))
            for row, d in enumerate(dims):
                what = "%s dim %d order %d p %s" % (shape, d, order, p_name)
                want = wasserstein_distance(finite_points(x, d), finite_points(y, d), order=order, internal_p=p_value)
                coarse, fine = got["1e-3"][row], got["1e-4"][row]
                # The entropic bias grows with the order (costs squared).
                tol = 0.02 if order == 1 else 0.05
                expect(abs(coarse[2] - want) <= tol * want + 1e-12,
                       what + ": within %g%% at 1e-3 (%g vs GUDHI %g)" % (100 * tol, coarse[2], want))
                expect(abs(fine[2] - want) <= 0.002 * want + 1e-12,
                       what + ": within 0.2%% at 1e-4 (%g vs GUDHI %g)" % (fine[2], want))
                want_e = essential_cost(x, y, d, order)
                expect(fine[3] == want_e or abs(fine[3] - want_e) <= 1e-12 * abs(want_e),
                       what + ": essential cost %g vs %g" % (fine[3], want_e))
                expect(abs(fine[1] - (fine[2] ** order + fine[3]) ** (1 / order)) <= 1e-12 * max(1, fine[1]),
                       what + ": distance = (finite^q + essential)^(1/q)")
                expect(fine[4] >= 1 and fine[4] == int(fine[4]), what + ": iterations a whole number")


def check_layouts(tool, work, rng):
    """The .csv, the .npy and cripser's layout of one diagram give one answer."""
    image = os.path.join(work, "z.npy")
    np.save(image, rng.random((12, 11)))
    other = os.path.join(work, "o.csv")
    run(tool, "persistence", os.path.join(work, "x.npy"), "-o", other)
    answers = []
    for name, extra in (("z.csv", []), ("z_t.npy", []), ("z_c.csv", ["--format", "cripser"]),
                        ("z_c.npy", ["--format", "cripser"])):
        path = os.path.join(work, name)
        p = run(tool, "persistence", image, "-o", path, *extra)
        expect(p.returncode == 0, name + ": " + p.stderr.strip())
        out = os.path.join(work, "w.csv")
        p = run(tool, "transport", path, other, "--diagrams", "-o", out)
        expect(p.returncode == 0, name + " as a diagram: " + p.stderr.strip())
        if p.returncode == 0:
            answers.append(table(out))
    expect(len(answers) == 4 and all(np.array_equal(answers[0], a) for a in answers[1:]),
           "the topovox and cripser layouts, .csv and .npy, give the same distances")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def check_matching(tool, work):
    """A diagram with one optimal matching: (0,10)-(0.2,9.5), (2,6)-(2.1,6.3),
    (5,5.5) to the diagonal; ids are data rows."""
    x, y = os.path.join(work, "mx.csv"), os.path.join(work, "my.csv")
    header = "dimension,birth,death,birth_x,birth_y,birth_z,death_x,death_y,death_z\n"
    write(x, header + "0,0,10,0,0,0,1,0,0\n0,5,5.5,0,0,0,1,0,0\n0,2,6,0,0,0,1,0,0\n")
    write(y, header + "0,0.2,9.5,0,0,0,1,0,0\n0,2.1,6.3,0,0,0,1,0,0\n")
    out, matching = os.path.join(work, "w.csv"), os.path.join(work, "m.csv")
    p = run(tool, "transport", x, y, "--diagrams", "--relative-reg", "1e-4", "--matching", matching, "-o", out)
    expect(p.returncode == 0, "small diagram: " + p.stderr.strip())
    if p.returncode != 0:
        return
    m = table(matching)
    pairs = set((int(a), int(b)) for _, a, b in m)
    expect(pairs == {(0, 0), (1, -1), (2, 1)}, "matching: %s" % sorted(pairs))
    want = wasserstein_distance(np.array([[0, 10], [5, 5.5], [2, 6]]), np.array([[0.2, 9.5], [2.1, 6.3]]))
    got = table(out)[0, 1]
    expect(abs(got - want) <= 1e-3 * want, "small diagram: %g vs GUDHI %g" % (got, want))


def check_batch_tables(tool, work, rng):
    stack = os.path.join(work, "s.npy")
    np.save(stack, rng.random((3, 9, 10)))
    batch = os.path.join(work, "s.csv")
    p = run(tool, "persistence", stack, "--batch", "-o", batch)
    expect(p.returncode == 0, "persistence --batch: " + p.stderr.strip())
    rows = np.loadtxt(batch, delimiter=",", skiprows=1, ndmin=2)
    header = open(batch).readline()
    one = os.path.join(work, "s0.csv")
    with open(one, "w") as f:
        f.write(header)
        for r in rows[rows[:, 0] == 0]:
            f.write(",".join(repr(float(v)) for v in r) + "\n")
    alone = os.path.join(work, "a0.npy")
    np.save(alone, np.load(stack)[0])
    single = os.path.join(work, "a0.csv")
    run(tool, "persistence", alone, "-o", single)
    other = os.path.join(work, "mx.csv")
    p = run(tool, "transport", one, other, "--diagrams", "-o", "-")
    q = run(tool, "transport", single, other, "--diagrams", "-o", "-")
    expect(p.returncode == 0 and p.stdout == q.stdout,
           "one image's rows of a --batch table: the distances of that image's own diagram (%s)" % p.stderr.strip())
    p = run(tool, "transport", batch, single, "--diagrams", "-o", "-")
    expect(p.returncode == 2 and "several images" in p.stderr, "a --batch table of several images is refused")


def check_errors(tool, work):
    good = os.path.join(work, "mx.csv")
    cases = [
        (["transport", good, "--diagrams", "-o", "-"], 2, "two inputs"),
        (["transport", good, good, "--diagrams", "--reg", "1", "-o", "-"], 2, "relative-reg"),
        (["transport", good, good, "--diagrams", "--grid", "-o", "-"], 2, "exclude"),
        (["transport", good, good, good, "--matching", "m.csv", "-o", "-"], 2, "go with --diagrams"),
        (["transport", good, good, "--diagrams", "--order", "0.5", "-o", "-"], 2, "order"),
        (["transport", good, os.path.join(work, "x.npy.txt"), "--diagrams", "-o", "-"], 2, ".csv or .npy"),
    ]
    # Malformed diagrams: (file, its text, exit status, words of the message).
    for name, text, status, words in (("bh.csv", "dim,b,d\n0,1,2\n", 2, "no column 'dimension'"),
                                      ("bn.csv", "dimension,birth,death\n0,1,2\n0,x,3\n", 1, "line 3"),
                                      ("bd.csv", "dimension,birth,death\n7,1,2\n", 1, "dimension"),
                                      ("nb.csv", "dimension,birth,death\n0,nan,2\n", 1, "numbers")):
        path = os.path.join(work, name)
        write(path, text)
        cases.append((["transport", good, path, "--diagrams", "-o", "-"], status, words))
    vector = os.path.join(work, "v.npy")
    np.save(vector, np.zeros(5))
    cases.append((["transport", good, vector, "--diagrams", "-o", "-"], 2, "matrix"))
    cases.append((["transport", good, os.path.join(work, "missing.csv"), "--diagrams", "-o", "-"], 1, "missing.csv"))
    for args, status, words in cases:
        out = os.path.join(work, "never.csv")
        args = [out if a == "-" and args[args.index(a) - 1] == "-o" else a for a in args]
        p = run(tool, *args)
        lines = p.stderr.strip().splitlines()
        expect(p.returncode == status and len(lines) == 1 and words in p.stderr and not os.path.exists(out),
               "%s: exit %d, one line naming '%s', no output (got %d: %s)" % (" ".join(args[3:]), status, words,
                                                                               p.returncode, p.stderr.strip()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(5)
    with tempfile.TemporaryDirectory() as work:
        check_against_gudhi(a.topovox, work, rng)
        check_layouts(a.topovox, work, rng)
        check_matching(a.topovox, work)
        check_batch_tables(a.topovox, work, rng)
        check_errors(a.topovox, work)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
