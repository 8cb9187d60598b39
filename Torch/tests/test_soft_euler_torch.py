"""topovox_torch against a plain PyTorch implementation of the same
relaxation, differentiated by autograd (the independent oracle), and
torch.autograd.gradcheck, on the CPU and (when there is one) the GPU.

The plain implementation lists every cell of the 2D or 3D cubical complex
explicitly: V, a cell's height is the max of its vertices' (torch.maximum
over shifted slices); T, the min over the pixels containing it (+inf padding
for the missing ones). chi(t) = sum (-1)^dim sigmoid(lam (t - h)). Random
float64 images have no ties, so both gradients are well defined.

    python3 Torch/tests/test_soft_euler_torch.py   (TOPOVOX_KERNELS_LIB set)
"""
import itertools
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from topovox_torch import EulerCurveLayer, SoftEulerFunction  # noqa: E402

failures = []


def expect(ok, what):
    if not ok:
        failures.append(what)
    print(("ok:   " if ok else "FAIL: ") + what, flush=True)


def heights(images, u, alpha, weight):
    """h per voxel, images (N, Z, Y, X) with Z = 1 for 2D."""
    n, Z, Y, X = images.shape
    dev, dt = images.device, images.dtype
    z, y, x = torch.meshgrid(torch.arange(Z, dtype=dt, device=dev), torch.arange(Y, dtype=dt, device=dev),
                             torch.arange(X, dtype=dt, device=dev), indexing="ij")
    return weight * images + alpha * (u[0] * x + u[1] * y + u[2] * z)


def reference_chi(images, thresholds, u, alpha, lam, weight, construction):
    """(N, T) by explicit cells; images (N, Z, Y, X)."""
    h = heights(images, u, alpha, weight)
    axes = [a for a in (1, 2, 3) if h.shape[a] > 1]
    cells = []  # (sign, heights of the cells of one kind)
    if construction == "V":
        # Cells = products of {vertex, edge} per axis: max over the 2^k vertices.
        for spans in itertools.product((0, 1), repeat=len(axes)):
            c = h
            for a, s in zip(axes, spans):
                if s:
                    n = c.shape[a]
                    c = torch.maximum(c.narrow(a, 0, n - 1), c.narrow(a, 1, n - 1))
            cells.append(((-1) ** sum(spans), c))
    else:
        # T: pixels are top cells; per axis a cell spans a pixel (1) or lies
        # on a boundary plane between two (0): min over the (one or two)
        # pixels around it. Its dimension is the number of spanned axes.
        for spans in itertools.product((0, 1), repeat=len(axes)):
            c = h
            for a, s in zip(axes, spans):
                if not s:
                    pad = [0, 0] * 3
                    pad[2 * (3 - a)] = pad[2 * (3 - a) + 1] = 1
                    p = torch.nn.functional.pad(c, pad, value=float("inf"))
                    n = p.shape[a]
                    c = torch.minimum(p.narrow(a, 0, n - 1), p.narrow(a, 1, n - 1))
            cells.append(((-1) ** sum(spans), c))
    chi = 0
    for sign, c in cells:
        flat = c.reshape(c.shape[0], -1, 1)
        chi = chi + sign * torch.sigmoid(lam * (thresholds.reshape(1, 1, -1) - flat)).sum(1)
    return chi


def check_alone(what, inputs, theirs, g, apply):
    """Only the gradients asked for are computed (the node's needs_input_grad):
    each input alone requiring a gradient, the others not, gets the plain
    reference's gradient (theirs)."""
    for k, name in enumerate(("images", "thresholds", "direction", "alpha")):
        alone = [v.detach().requires_grad_(i == k) for i, v in enumerate(inputs)]
        (got,) = torch.autograd.grad((apply(*alone) * g).sum(), [alone[k]])
        expect(torch.allclose(got, theirs[k], rtol=1e-8, atol=1e-9),
               what + ": d/d" + name + ", asked for alone, equals autograd's")


def check(device):
    torch.manual_seed(0)
    dt = torch.float64
    for construction, shape in itertools.product(("V", "T"), ((2, 3, 9, 8), (1, 2, 5, 6, 4))):
        what = "%s %s %s" % (device, construction, "x".join(map(str, shape)))
        x = torch.rand(shape, dtype=dt, device=device, requires_grad=True)
        t = torch.linspace(-0.3, 1.4, 7, dtype=dt, device=device, requires_grad=True)
        u = torch.tensor([0.3, -0.5, 0.8], dtype=dt, device=device, requires_grad=True)
        a = torch.tensor([0.2], dtype=dt, device=device, requires_grad=True)
        lam, weight = 3.0, 1.0
        chi = SoftEulerFunction.apply(x, t, u, a, lam, weight, construction, (0, 0, 0), (1, 1, 1))
        if x.dim() == 4:
            flat = x.reshape(-1, 1, x.shape[-2], x.shape[-1])
        else:
            flat = x.reshape(-1, x.shape[-3], x.shape[-2], x.shape[-1])
        ref = reference_chi(flat, t, u, a, lam, weight, construction).reshape(chi.shape)
        expect(torch.allclose(chi, ref, rtol=1e-9, atol=1e-9), what + ": forward equals the plain torch one")
        g = torch.randn_like(chi)
        ours = torch.autograd.grad((chi * g).sum(), (x, t, u, a))
        theirs = torch.autograd.grad((ref * g).sum(), (x, t, u, a))
        for name, o, r in zip(("images", "thresholds", "direction", "alpha"), ours, theirs):
            expect(torch.allclose(o, r, rtol=1e-8, atol=1e-9), what + ": d/d" + name + " equals autograd's")
        check_alone(what, (x, t, u, a), theirs, g, lambda *v: SoftEulerFunction.apply(
            *v, lam, weight, construction, (0, 0, 0), (1, 1, 1)))
        small = torch.rand(shape[:2] + tuple(min(s, 4) for s in shape[2:]), dtype=dt, device=device,
                           requires_grad=True)
        expect(torch.autograd.gradcheck(
            lambda xx, tt, uu, aa: SoftEulerFunction.apply(xx, tt, uu, aa, lam, weight, construction,
                                                           (0, 0, 0), (1, 1, 1)),
            (small, t, u, a), eps=1e-6, atol=1e-5,
            # The GPU sums with atomics: their order, hence the last bits, vary.
            nondet_tol=1e-12 if device != "cpu" else 0.0), what + ": gradcheck")
    # K directions in one call: each curve the direction's own; gradients
    # against autograd through the stacked single-direction reference, and
    # gradcheck.
    for construction in ("V", "T"):
        what = "%s %s 3 directions" % (device, construction)
        x = torch.rand((2, 1, 7, 6, 5), dtype=dt, device=device, requires_grad=True)
        t = torch.linspace(-0.3, 1.4, 9, dtype=dt, device=device, requires_grad=True)
        u = torch.tensor([[0.3, -0.5, 0.8], [-1.0, 0.0, 0.2], [0.0, 0.6, -0.6]], dtype=dt, device=device,
                         requires_grad=True)
        a = torch.tensor([0.2], dtype=dt, device=device, requires_grad=True)
        chi = SoftEulerFunction.apply(x, t, u, a, 3.0, 1.0, construction, (0, 0, 0), (1, 1, 1))
        flat = x.reshape(-1, x.shape[-3], x.shape[-2], x.shape[-1])
        ref = torch.stack([reference_chi(flat, t, u[k], a, 3.0, 1.0, construction) for k in range(3)], 1)
        expect(chi.shape == (2, 1, 3, 9) and torch.allclose(chi.reshape(ref.shape), ref, rtol=1e-9, atol=1e-9),
               what + ": forward (B, C, K, T) equals the plain torch one per direction")
        g = torch.randn_like(chi)
        ours = torch.autograd.grad((chi * g).sum(), (x, t, u, a))
        theirs = torch.autograd.grad((ref * g.reshape(ref.shape)).sum(), (x, t, u, a))
        for name, o, r in zip(("images", "thresholds", "directions", "alpha"), ours, theirs):
            expect(torch.allclose(o, r, rtol=1e-8, atol=1e-9), what + ": d/d" + name + " equals autograd's")
        check_alone(what, (x, t, u, a), theirs, g, lambda *v: SoftEulerFunction.apply(
            *v, 3.0, 1.0, construction, (0, 0, 0), (1, 1, 1)))
        small = torch.rand((1, 1, 4, 3, 3), dtype=dt, device=device, requires_grad=True)
        expect(torch.autograd.gradcheck(
            lambda xx, tt, uu, aa: SoftEulerFunction.apply(xx, tt, uu, aa, 3.0, 1.0, construction,
                                                           (0, 0, 0), (1, 1, 1)),
            (small, t, u, a), eps=1e-6, atol=1e-5, nondet_tol=1e-12 if device != "cpu" else 0.0),
            what + ": gradcheck")
    # float32 (computed in float on the GPU): within float tolerance of the
    # float64 reference on the same values, forward and every gradient.
    for construction, shape in itertools.product(("V", "T"), ((2, 1, 40, 33), (1, 1, 9, 12, 10))):
        what = "%s %s %s float32" % (device, construction, "x".join(map(str, shape)))
        x = torch.rand(shape, dtype=torch.float64, device=device)
        t = torch.linspace(-0.3, 1.4, 70, dtype=torch.float64, device=device)  # three chunks of 32
        u = torch.tensor([0.3, -0.5, 0.8], dtype=torch.float64, device=device)
        a = torch.tensor([0.2], dtype=torch.float64, device=device)
        inputs64 = [v.clone().requires_grad_(True) for v in (x, t, u, a)]
        inputs32 = [v.float().requires_grad_(True) for v in (x, t, u, a)]
        chi64 = SoftEulerFunction.apply(*inputs64, 5.0, 1.0, construction, (0, 0, 0), (1, 1, 1))
        chi32 = SoftEulerFunction.apply(*inputs32, 5.0, 1.0, construction, (0, 0, 0), (1, 1, 1))
        scale = chi64.abs().max().item()
        expect(chi32.dtype == torch.float32 and torch.allclose(chi32.double(), chi64, rtol=1e-4, atol=1e-5 * scale),
               what + ": forward within float tolerance of float64")
        g = torch.randn_like(chi64)
        ours = torch.autograd.grad((chi32 * g.float()).sum(), inputs32)
        theirs = torch.autograd.grad((chi64 * g).sum(), inputs64)
        for name, o, r in zip(("images", "thresholds", "direction", "alpha"), ours, theirs):
            expect(torch.allclose(o.double(), r, rtol=1e-3, atol=1e-4 * max(1.0, r.abs().max().item())),
                   what + ": d/d" + name + " within float tolerance of float64")
    # The layer: a step of gradient descent moves every parameter.
    layer = EulerCurveLayer(torch.linspace(0, 1, 5), direction=(1.0, 1.0, 0.0), alpha=0.5).to(device)
    x = torch.rand(4, 1, 16, 16, device=device)
    loss = layer(x).pow(2).mean()
    loss.backward()
    expect(all(p.grad is not None and torch.isfinite(p.grad).all() for p in layer.parameters()),
           device + ": the layer's parameters get finite gradients")


def check_streams():
    """CUDA: the kernels run on torch's current stream. Inputs made on a side
    stream and used there at once (no synchronisation by the caller) give
    the same curve and gradients as on the default stream; a launch on the
    legacy stream that did not wait for the side stream would read them
    half written."""
    torch.manual_seed(3)
    thresholds = torch.linspace(-1, 2, 32, device="cuda", dtype=torch.float64)
    u = torch.tensor([0.3, -0.5, 0.81], device="cuda", dtype=torch.float64)
    alpha = torch.tensor([0.2], device="cuda", dtype=torch.float64)
    args = (10.0, 1.0, "V", (0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    base = torch.rand(4, 1, 384, 384, device="cuda", dtype=torch.float64)
    want_images = base.clone().requires_grad_(True)
    want = SoftEulerFunction.apply(want_images, thresholds, u, alpha, *args)
    want.sum().backward()
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        made = base * 1.0 + 0.0  # written on the side stream, not waited for
        images = made.requires_grad_(True)
        got = SoftEulerFunction.apply(images, thresholds, u, alpha, *args)
        got.sum().backward()
    side.synchronize()
    # Equal up to the order of the GPU's atomic sums (a race would be far off).
    close = dict(rtol=1e-10, atol=1e-10)
    expect(torch.allclose(got, want, **close), "cuda, side stream: the default stream's curve")
    expect(torch.allclose(images.grad, want_images.grad, **close),
           "cuda, side stream: the default stream's image gradient")


if __name__ == "__main__":
    check("cpu")
    if torch.cuda.is_available():
        check("cuda")
        check_streams()
    print("%d failures" % len(failures))
    sys.exit(1 if failures else 0)
