#!/usr/bin/env python3
"""Driver of the Euler characteristic curve benchmark (see bench/README.md).

Generates the inputs as .npy files, runs bench_euler on each (our GPU, GPU
end to end, CPU, D2D copy reference, GPU == CPU check), runs the peers on the
same files, and prints a combined table and a markdown section:

  pyect   pyect.Image_ECF_2D / Image_ECF_3D (PyPI `pyect`) through torch, on
          the GPU (on the CPU with --cpu-only). Its convention is ours with
          the V construction, sublevel filtration, and thresholds j/(N-1) on
          values in [0, 1] binned as ceil(v * (N-1)) in float32; bench_euler's
          `--list pyect` thresholds are exactly those sets, so the curves must
          be identical, and are compared on every input.
  skimage skimage.measure.euler_number(image <= t_j, connectivity=1) (4- or
          6-connected foreground: the V construction) on the CPU, for a few
          thresholds only; its full-curve time is that per-threshold time
          times N, labelled as an extrapolation. Skipped on large inputs.

Usage (GPU machine, from the repository root):
  python3 bench/run_bench.py --bench build-gpu/bench/bench_euler
Plumbing check without a GPU:
  python3 bench/run_bench.py --cpu-only --bench /tmp/bench-build/bench/bench_euler
"""

import argparse
import datetime
import importlib.util
import json
import math
import os
import platform
import subprocess
import sys
import time

# Before torch is imported: fewer fragmentation OOMs on the big pyect inputs.
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

import numpy as np

T0 = time.perf_counter()
N_THRESHOLDS = 256


def log(msg):
    print(f"[run_bench {time.perf_counter() - T0:7.1f}s] {msg}", flush=True)


def fmt_shape(shape):
    return "x".join(str(s) for s in shape)


# --------------------------------------------------------------------- cases

GPU_CASES = [(1024, 1024), (8192, 8192), (256, 256, 256), (512, 512, 512), (1024, 1024, 1024)]
SMALL_CASES = [(256, 256), (1024, 1024), (32, 32, 32), (64, 64, 64)]
# Tiny, odd-sized images on which every peer is checked at every threshold.
VERIFY_CASES = [(37, 53), (13, 17, 19)]
DTYPES = ["uint8", "float32"]


# --------------------------------------------------------------------- torch / pyect

def import_torch():
    try:
        import torch  # noqa: F401
        return torch, None
    except Exception as e:  # pragma: no cover - depends on the machine
        return None, f"torch not importable: {e}"


def load_pyect():
    """Returns (Image_ECF_2D, Image_ECF_3D, description) or (None, None, reason).

    `import pyect` also imports torchvision, Pillow and trimesh (for its mesh
    and image-file helpers); where those are missing, the module that holds
    the image ECF (pyect/image_ecf.py, which needs torch only) is loaded from
    the installed package directly: the same code.
    """
    try:
        from importlib.metadata import version
        ver = version("pyect")
    except Exception:
        ver = "unknown version"
    try:
        import pyect
        return pyect.Image_ECF_2D, pyect.Image_ECF_3D, f"pyect {ver} (import pyect)"
    except Exception as e:
        first = f"{type(e).__name__}: {e}"
    spec = importlib.util.find_spec("pyect")
    if spec is None or not spec.submodule_search_locations:
        return None, None, f"pyect not installed ({first})"
    path = os.path.join(list(spec.submodule_search_locations)[0], "image_ecf.py")
    mspec = importlib.util.spec_from_file_location("pyect_image_ecf", path)
    mod = importlib.util.module_from_spec(mspec)
    mspec.loader.exec_module(mod)
    return (mod.Image_ECF_2D, mod.Image_ECF_3D,
            f"pyect {ver} (pyect/image_ecf.py loaded directly; `import pyect` failed: {first})")


def sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def unit_float32(arr):
    """uint8 -> float32 x/255, correctly rounded (numpy true division). Done on
    the host: torch on CUDA divides by a scalar as a multiply by its
    reciprocal, which can be one ulp off."""
    v = arr.astype(np.float32)
    v /= np.float32(255)
    return v


def pyect_input(torch, arr, device):
    """The [0, 1] float32 tensor pyect expects, on `device` (untimed)."""
    if arr.dtype == np.uint8:
        return torch.from_numpy(unit_float32(arr)).to(device)
    if arr.dtype == np.float32:
        return torch.from_numpy(arr).to(device)
    raise ValueError(f"unsupported dtype {arr.dtype}")


def check_uint8_scaling(torch, device, n):
    """pyect's bin (ceil(v * (n-1)) on `device`) of v = x/255 must be x for
    every uint8 x: then pyect's bins of x/255 are our thresholds 0..255."""
    x = np.arange(256, dtype=np.uint8)
    v = torch.from_numpy(unit_float32(x)).to(device)
    b = torch.ceil(v * (n - 1)).long().cpu().numpy()
    return bool(np.array_equal(b, x.astype(np.int64)))


def check_float_thresholds(thr, n):
    """Ours (float32 data in [0,1], --list pyect): t_j is the largest float32
    whose product with n-1 (float32) is <= j, i.e. exactly pyect's bin <= j."""
    t = np.asarray(thr, dtype=np.float64)
    t32 = t.astype(np.float32)
    if not np.array_equal(t32.astype(np.float64), t) or len(t) != n:
        return False
    m = np.float32(n - 1)
    j = np.arange(n, dtype=np.float32)
    up = np.nextafter(t32, np.float32(np.inf))
    return bool(np.all(np.ceil(t32 * m) <= j) and np.all(np.ceil(up * m) > j))


def run_pyect(torch, ecf2, ecf3, arr, device, ours, max_seconds):
    """Times pyect's forward on the tensor already on `device`."""
    res = {"status": "ok"}
    n = N_THRESHOLDS
    thr = ours["thresholds"] if ours else None
    # Do our list thresholds select the same sublevel sets as pyect's bins?
    if arr.dtype == np.uint8:
        same_sets = (thr is not None and thr == [float(j) for j in range(n)]
                     and check_uint8_scaling(torch, device, n))
    else:
        same_sets = thr is not None and check_float_thresholds(thr, n)
    res["same_thresholds"] = same_sets
    module = (ecf2 if arr.ndim == 2 else ecf3)(n)
    x = None
    try:
        x = pyect_input(torch, arr, device)
        sync(torch, device)
        t = time.perf_counter()
        curve = module(x)
        sync(torch, device)
        first = time.perf_counter() - t
        times = []
        start = time.perf_counter()
        while len(times) < 3 or (time.perf_counter() - start < max_seconds and len(times) < 20):
            t = time.perf_counter()
            module(x)
            sync(torch, device)
            times.append(time.perf_counter() - t)
            if len(times) == 1 and first + times[0] > max_seconds:
                break  # a slow input: first call + one timed call is all
        res["ms"] = 1000 * float(np.median(times))
        res["reps"] = len(times)
        res["first_ms"] = 1000 * first
        if device.type == "cuda":
            res["peak_GiB"] = torch.cuda.max_memory_allocated() / 2**30
        pc = curve.cpu().numpy().astype(np.int64)
        res["curve"] = pc.tolist()
        if ours is None:
            res["check"] = "n/a (no curve of ours)"
        else:
            oc = np.asarray(ours["euler"], dtype=np.int64)
            if len(oc) != len(pc):
                res["check"] = f"lengths differ ({len(oc)} vs {len(pc)})"
            elif np.array_equal(oc, pc):
                res["check"] = "identical" if same_sets else "identical (thresholds not shown equal)"
            else:
                j = int(np.nonzero(oc != pc)[0][0])
                res["check"] = (f"DIFFERS: first at j={j} (ours {oc[j]}, pyect {pc[j]}), "
                                f"max |diff| {int(np.abs(oc - pc).max())}"
                                + ("" if same_sets else "; thresholds differ"))
    except Exception as e:
        oom = "out of memory" in str(e).lower() or type(e).__name__ == "OutOfMemoryError"
        res = {"status": "OOM" if oom else f"error: {type(e).__name__}: {str(e)[:200]}",
               "check": "n/a"}
    finally:
        del x
        if device.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
    return res


# --------------------------------------------------------------------- skimage

def run_skimage(arr, ours, k):
    """Euler number of k thresholded masks; time per threshold and check."""
    from skimage.measure import euler_number
    thr = ours["thresholds"]
    euler = ours["euler"]
    n = len(thr)
    if k >= n:
        js = list(range(n))
    else:
        js = [int(round((i + 0.5) * n / k)) for i in range(k)]
    times, bad = [], []
    for j in js:
        t_j = np.asarray(thr[j]).astype(arr.dtype) if arr.dtype.kind == "f" else thr[j]
        t = time.perf_counter()
        e = int(euler_number(arr <= t_j, connectivity=1))
        times.append(time.perf_counter() - t)
        if e != euler[j]:
            bad.append((j, euler[j], e))
    per = float(np.mean(times))
    res = {"status": "ok", "k": len(js), "per_threshold_ms": 1000 * per,
           "full_ms": 1000 * per * n, "extrapolated": len(js) < n}
    res["check"] = (f"{len(js)}/{len(js)} thresholds equal" if not bad else
                    f"MISMATCH at {len(bad)}/{len(js)} (j, ours, skimage) {bad[:3]}")
    return res


# --------------------------------------------------------------------- inputs

def generate(shape, dtype, data, seed, workdir, torch, device):
    """Smoothed (or uniform) noise rescaled to [0, 1]; uint8 = round(255 v).
    Cached by file name. On a GPU the noise is made with torch (fast)."""
    name = f"{data}_{fmt_shape(shape)}_{dtype}_s{seed}"
    gen = "torch-cuda" if (torch is not None and device.type == "cuda") else "numpy"
    path = os.path.join(workdir, f"{name}_{gen}.npy")
    if os.path.exists(path):
        return path, gen
    if gen == "torch-cuda":
        g = torch.Generator(device=device)
        g.manual_seed(seed)
        v = torch.rand(shape, generator=g, device=device, dtype=torch.float32)
        if data == "smooth":
            pool = torch.nn.functional.avg_pool2d if len(shape) == 2 else torch.nn.functional.avg_pool3d
            v = v[None, None]
            for _ in range(2):  # two 5-wide box passes: about a Gaussian, sigma 2
                v = pool(v, kernel_size=5, stride=1, padding=2, count_include_pad=False)
            v = v[0, 0]
        lo, hi = v.min(), v.max()
        v = ((v - lo) / (hi - lo)).clamp_(0, 1)
        out = v if dtype == "float32" else torch.round(v * 255).to(torch.uint8)
        a = out.cpu().numpy()
        del v, out
        torch.cuda.empty_cache()
    else:
        rng = np.random.default_rng(seed)
        v = rng.random(shape, dtype=np.float32)
        if data == "smooth":
            from scipy import ndimage
            for _ in range(2):
                v = ndimage.uniform_filter(v, size=5, mode="nearest")
        lo, hi = v.min(), v.max()
        v = np.clip((v - lo) / (hi - lo), 0, 1).astype(np.float32)
        a = v if dtype == "float32" else np.round(v * 255).astype(np.uint8)
    tmp = path + ".tmp.npy"
    np.save(tmp, a)
    os.replace(tmp, path)
    return path, gen


# --------------------------------------------------------------------- bench_euler

def run_bench_euler(bench, path, label, jsonl, extra, timeout):
    cmd = [bench, "--input", path, "--label", label, "--json", jsonl,
           "--thresholds", str(N_THRESHOLDS), "--list", "pyect"] + extra
    log("$ " + " ".join(cmd))
    before = 0
    if os.path.exists(jsonl):
        with open(jsonl) as f:
            before = sum(1 for _ in f)
    try:
        rc = subprocess.run(cmd, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        rc = "timeout"
    rows = {}
    machine = None
    with open(jsonl) as f:
        for i, line in enumerate(f):
            if i < before:
                continue
            r = json.loads(line)
            if r.get("type") == "machine":
                machine = r
            elif r.get("type") == "result":
                rows[r["mode"]] = r
    return rc, rows, machine


# --------------------------------------------------------------------- report

def f_ms(v, digits=3):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:.{digits}f}"


def f_ratio(a, b):
    if a is None or b is None or not b or not math.isfinite(a) or not math.isfinite(b):
        return "-"
    r = a / b
    return f"{r:.1f}x" if r >= 10 else f"{r:.2f}x"


def table(headers, rows):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]
    out = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths)),
           "  ".join("-" * w for w in widths)]
    for r in rows:
        out.append("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    return "\n".join(out)


def markdown(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=os.path.join(repo, "build-gpu", "bench", "bench_euler"),
                    help="the bench_euler executable")
    ap.add_argument("--workdir", default="/tmp/topovox-bench", help="inputs and results")
    ap.add_argument("--cpu-only", action="store_true",
                    help="small inputs, pyect on the CPU: a plumbing check for a machine without GPU")
    ap.add_argument("--data", choices=["smooth", "uniform"], default="smooth")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", default=None,
                    help="comma-separated shapes, numpy order, e.g. 1024x1024,256x256x256")
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--no-pyect", action="store_true")
    ap.add_argument("--no-skimage", action="store_true")
    ap.add_argument("--skimage-max-voxels", type=int, default=8192 * 8192,
                    help="skimage is skipped above this many voxels (default 8192^2 = 2^26)")
    ap.add_argument("--skimage-k", type=int, default=4,
                    help="thresholds measured per input (2 above 2^24 voxels)")
    ap.add_argument("--pyect-max-voxels", type=int, default=1024 ** 3)
    ap.add_argument("--pyect-seconds", type=float, default=2.0,
                    help="time spent on repeated pyect calls per input")
    ap.add_argument("--cpu-all-modes-max-voxels", type=int, default=2 ** 28,
                    help="above: our CPU time in list mode only (bins/exact still checked)")
    ap.add_argument("--budget-s", type=float, default=420,
                    help="time budget: an input whose predicted CPU work would end past it "
                         "drops its untimed CPU checks, then its CPU run; past it, later "
                         "inputs run on the GPU only (no CPU, pyect, skimage)")
    args = ap.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    jsonl = os.path.join(args.workdir, "results.jsonl")
    if os.path.exists(jsonl):
        os.remove(jsonl)
    if not os.path.exists(args.bench):
        sys.exit(f"bench_euler not found at {args.bench} (build it, or pass --bench)")

    torch, torch_err = import_torch()
    device = None
    if torch is not None:
        if args.cpu_only:
            device = torch.device("cpu")
        elif torch.cuda.is_available():
            device = torch.device("cuda")
            torch.cuda.init()
        else:
            sys.exit("no CUDA device for torch: use --cpu-only for a plumbing check")
    ecf2 = ecf3 = None
    pyect_desc = "skipped (--no-pyect)"
    if not args.no_pyect:
        if torch is None:
            pyect_desc = f"unavailable: {torch_err}"
        else:
            ecf2, ecf3, pyect_desc = load_pyect()
    try:
        import skimage
        skimage_desc = f"scikit-image {skimage.__version__}"
    except Exception as e:
        skimage_desc = f"unavailable: {e}"
        args.no_skimage = True

    env = [f"python {platform.python_version()}", f"numpy {np.__version__}",
           f"torch {torch.__version__} on {device}" if torch is not None else torch_err,
           pyect_desc, skimage_desc]
    if torch is not None and device.type == "cuda":
        env.append("torch GPU: " + torch.cuda.get_device_name(0))
    log("environment: " + "; ".join(env))
    log(f"CPU: {os.cpu_count()} logical CPUs; {platform.processor() or platform.machine()}")

    if args.cases:
        shapes = [tuple(int(s) for s in c.split("x")) for c in args.cases.split(",")]
    else:
        shapes = SMALL_CASES if args.cpu_only else GPU_CASES
    dtypes = args.dtypes.split(",")
    cases = [(s, d, True) for s in VERIFY_CASES for d in dtypes] + \
            [(s, d, False) for s in shapes for d in dtypes]

    results = []
    machine = None
    cpu_ns_per_voxel = None  # our CPU list time per voxel, largest input so far
    for shape, dtype, verify in cases:
        voxels = int(np.prod(shape))
        elapsed = time.perf_counter() - T0
        over = elapsed > args.budget_s
        log(f"=== {fmt_shape(shape)} {dtype}{' (verification)' if verify else ''}"
            f"{' [over budget: GPU only]' if over else ''}")
        path, gen = generate(shape, dtype, args.data, args.seed, args.workdir, torch, device)
        label = f"{fmt_shape(shape)} {dtype}"
        extra = ["--cpu-all-modes-max-voxels", str(args.cpu_all_modes_max_voxels)]
        if over:
            extra += ["--cpu-max-voxels", "0"]
        elif cpu_ns_per_voxel and voxels > args.cpu_all_modes_max_voxels and not args.cpu_only:
            # Predicted CPU work: the timed list run, plus (float32) one untimed
            # histogram pass to check bins; 60 s kept for the rest.
            one = cpu_ns_per_voxel * voxels * 1e-9
            full = one * (2.0 if dtype == "float32" else 1.3)
            log(f"predicted CPU work for this input: {full:.0f} s (one pass {one:.0f} s)")
            if elapsed + full + 60 > args.budget_s:
                if elapsed + one + 60 <= args.budget_s:
                    extra += ["--no-check-untimed"]
                    log("over budget for the untimed CPU checks: --no-check-untimed")
                else:
                    extra += ["--cpu-max-voxels", "0"]
                    log("over budget for any CPU run: --cpu-max-voxels 0")
        if args.cpu_only:
            extra += ["--no-gpu"]
        rc, rows, m = run_bench_euler(args.bench, path, label, jsonl, extra, timeout=400)
        machine = m or machine
        ours = rows.get("list")
        if ours and ours.get("cpu_ms") and len(shape) == 3 and not verify:
            cpu_ns_per_voxel = 1e6 * ours["cpu_ms"] / voxels
        r = {"shape": shape, "dtype": dtype, "verify": verify, "voxels": voxels, "gen": gen,
             "rc": rc, "ours": rows}
        if rc != 0:
            log(f"bench_euler exit status {rc}")

        arr = None
        if ((ecf2 is not None and not over and voxels <= args.pyect_max_voxels)
                or (not args.no_skimage and not over and voxels <= args.skimage_max_voxels)):
            arr = np.load(path)
        if ecf2 is None:
            r["pyect"] = {"status": pyect_desc if args.no_pyect or torch is None else "unavailable"}
        elif over or voxels > args.pyect_max_voxels:
            r["pyect"] = {"status": "skipped (budget)" if over else "skipped (size)"}
        else:
            log("pyect ...")
            r["pyect"] = run_pyect(torch, ecf2, ecf3, arr, device, ours, args.pyect_seconds)
            p = r["pyect"]
            log(f"pyect: {p.get('status')} {f_ms(p.get('ms'))} ms median of {p.get('reps')}, "
                f"first call {f_ms(p.get('first_ms'))} ms; check: {p.get('check')}"
                + (f"; peak {p['peak_GiB']:.1f} GiB" if "peak_GiB" in p else ""))
        if args.no_skimage:
            r["skimage"] = {"status": "skipped"}
        elif over or voxels > args.skimage_max_voxels or ours is None:
            r["skimage"] = {"status": "skipped (budget)" if over else
                            "skipped (size)" if ours is not None else "skipped (no curve)"}
        else:
            k = N_THRESHOLDS if voxels <= 2 ** 16 else (args.skimage_k if voxels <= 2 ** 24 else 2)
            log(f"skimage, {k} thresholds ...")
            r["skimage"] = run_skimage(arr, ours, k)
            s = r["skimage"]
            log(f"skimage: {f_ms(s['per_threshold_ms'])} ms per threshold -> "
                f"{f_ms(s['full_ms'], 1)} ms for {N_THRESHOLDS}"
                f"{' (extrapolated)' if s['extrapolated'] else ''}; {s['check']}")
        del arr
        results.append(r)

    # ----------------------------------------------------------- the tables
    h1 = ["input", "dtype", "GPU list ms", "call ovh ms", "GPU bins ms", "GPU exact ms", "e2e list ms",
          "CPU list ms", "GB/s", "D2D copy GB/s", "of copy", "GPU==CPU"]
    h2 = ["input", "dtype", "ours GPU ms", "pyect GPU ms", "pyect/ours", "pyect curve",
          "skimage ms (x256)", "skimage/ours GPU", "skimage/ours CPU", "skimage check"]
    rows1, rows2 = [], []
    for r in results:
        o = r["ours"]
        li, bi, ex = o.get("list", {}), o.get("bins", {}), o.get("exact", {})
        name = fmt_shape(r["shape"]) + (" (verify)" if r["verify"] else "")
        checks = [f"{m}:{o[m]['check']}" for m in ("list", "bins", "exact") if m in o]
        allsame = all(o[m]["check"] == "identical" for m in o) and o
        check = "identical (all modes)" if allsame else ("; ".join(checks) or f"bench_euler rc={r['rc']}")
        cpu = li.get("cpu_ms")
        cpu_s = f_ms(cpu, 1) + ("" if li.get("cpu_reps", 0) != 1 else " (1 run)")
        frac = li.get("fraction_of_copy")
        rows1.append([name, r["dtype"], f_ms(li.get("gpu_ms")), f_ms(li.get("gpu_call_overhead_ms")),
                      f_ms(bi.get("gpu_ms")),
                      f_ms(ex.get("gpu_ms")), f_ms(li.get("e2e_ms"), 2), cpu_s,
                      f_ms(li.get("gpu_read_GBps"), 1), f_ms(li.get("copy_read_GBps"), 1),
                      f"{100 * frac:.1f}%" if frac else "-", check])
        ours_t = li.get("gpu_ms")
        p, s = r["pyect"], r["skimage"]
        pc = p.get("check", "-") if p.get("status") == "ok" else p.get("status")
        sk_ms = s.get("full_ms")
        sk_s = "-" if s.get("status") != "ok" else (
            f_ms(sk_ms, 1) + (f" (est. from {s['k']})" if s["extrapolated"] else " (all)"))
        rows2.append([name, r["dtype"], f_ms(ours_t), f_ms(p.get("ms")),
                      f_ratio(p.get("ms"), ours_t), pc, sk_s if s.get("status") == "ok" else s["status"],
                      f_ratio(sk_ms, ours_t), f_ratio(sk_ms, cpu),
                      s.get("check", "-")])

    gpu_name = machine["gpu"] if machine else "?"
    threads = machine["cpu_threads"] if machine else "?"
    print("\n" + "=" * 100)
    print(f"Euler characteristic curve, V construction, sublevel, {N_THRESHOLDS} thresholds; "
          f"GPU: {gpu_name}; CPU threads: {threads}")
    print(table(h1, rows1))
    print()
    print(table(h2, rows2))
    print("=" * 100, flush=True)

    date = datetime.date.today().isoformat()
    md = []
    md.append(f"### Run of {date}{' (CPU-only plumbing check)' if args.cpu_only else ''}")
    md.append("")
    md.append(f"- GPU: {gpu_name}; CPU: {threads} threads ({os.cpu_count()} logical CPUs)")
    md.append("- " + "; ".join(env))
    md.append(f"- inputs: {args.data} noise in [0,1] (seed {args.seed}), uint8 = round(255 v); "
              f"generator: {results[0]['gen'] if results else '?'}")
    md.append(f"- our List mode: {N_THRESHOLDS} thresholds (uint8: 0..255; float32: the float32 "
              "rounding of j/255 that pyect bins by); bins adds a min/max pass, exact a sort")
    md.append("- times are medians after warm-up; GPU ms = data already on the device; "
              "GB/s = image bytes / GPU list time; D2D copy GB/s = bytes read / cudaMemcpy time")
    md.append("")
    md.append(markdown(h1, rows1))
    md.append("")
    md.append(markdown(h2, rows2))
    md.append("")
    md.append("pyect: Image_ECF_2D/3D forward on a float32 [0,1] tensor already on the GPU "
              "(uint8 input divided by 255 on the host beforehand, untimed). skimage: euler_number(img <= t, "
              "connectivity=1) per threshold on the CPU (one thread), mask included; "
              "'est. from k' = mean over k thresholds x 256 (extrapolated, not measured).")
    text = "\n".join(md)
    with open(os.path.join(args.workdir, "results.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(args.workdir, "results.json"), "w") as f:
        json.dump(results, f, default=str)
    print("\n----- markdown for bench/README.md -----")
    print(text)
    print("----- end of markdown -----", flush=True)
    log(f"done; inputs, results.jsonl, results.json and results.md are in {args.workdir}")
    bad = any("MISMATCH" in str(x) or "DIFFERS" in str(x) or "GPU ERROR" in str(x) for row in rows1 + rows2 for x in row)
    return 2 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
