"""pvpython: the Optimal Transport proxy and vtkOptimalTransportFilter
against POT on the same densities: the dense problem with M = ot.dist of the
voxels' world positions (squared Euclidean), ot.sinkhorn2's cost and the
barycentres of ot.sinkhorn's plan, both methods, 2D and 3D with anisotropic
spacing; marginals of the plan rebuilt from the potentials; the gradients
(centred potentials) against finite differences of the transport value;
errors for negative densities and different grids.
"""
import sys

import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkCommand

from paraview import servermanager as sm
from paraview.simple import Calculator, OptimalTransport, Wavelet

import topovox
from checks import expect, failures, image_of, world_positions

try:
    import ot
except ImportError:
    print("SKIP: the oracle POT is not installed (python3-pot)")
    sys.exit(77)


positions = world_positions


rng = np.random.default_rng(5)
cases = [((7, 9), (1.0, 0.5), 0.3, 1), ((7, 9), (1.0, 0.5), 2.0, 0), ((5, 3, 4), (1.0, 2.0, 0.5), 0.5, 1)]
for shape, spacing, reg, method in cases:
    what = "%s spacing %s reg %g %s" % ("x".join(map(str, shape)), spacing, reg, "log" if method else "scaling")
    a = rng.random(shape) + 0.05
    b = rng.random(shape) ** 2 + 0.01
    f = topovox.vtkOptimalTransportFilter()
    f.SetInputDataObject(0, image_of(a, spacing))
    f.SetInputDataObject(1, image_of(b, spacing))
    f.SetReg(reg)
    f.SetMethod(method)
    f.Update()
    out = f.GetOutputDataObject(0)
    cost = out.GetFieldData().GetArray("TransportCost").GetValue(0)
    table = f.GetOutputDataObject(1)
    expect(table.GetNumberOfRows() == 1 and table.GetColumnByName("TransportCost").GetValue(0) == cost,
           what + ": the table holds the cost")
    X = positions(shape, spacing)
    an, bn = a.reshape(-1) / a.sum(), b.reshape(-1) / b.sum()
    M = ot.dist(X, X)
    pot_method = "sinkhorn_log" if method else "sinkhorn"
    want = ot.sinkhorn2(an, bn, M, reg, method=pot_method, numItermax=1000, stopThr=1e-9)
    expect(abs(cost - want) <= 1e-8 * abs(want), what + ": cost %r, POT %r" % (cost, want))
    plan = ot.sinkhorn(an, bn, M, reg, method=pot_method, numItermax=1000, stopThr=1e-9)
    bary = plan @ X / plan.sum(axis=1, keepdims=True) - X
    got = vtk_to_numpy(out.GetPointData().GetArray("Displacement"))
    expect(np.allclose(got, bary, rtol=0, atol=1e-8), what + ": displacement = POT plan's barycentres")
    fpot = vtk_to_numpy(out.GetPointData().GetArray("SourcePotential"))
    gpot = vtk_to_numpy(out.GetPointData().GetArray("TargetPotential"))
    rebuilt = np.exp((fpot[:, None] + gpot[None, :] - M) / reg)
    expect(np.allclose(rebuilt, plan, rtol=0, atol=1e-9 * plan.max()), what + ": the potentials give POT's plan")

# Gradients: the centred potentials are the derivatives of the entropic
# transport value W(a, b) = <f, a> + <g, b> (the dual at its optimum, up to a
# constant) along mass-preserving changes; checked by central differences.
def transport_value(a, b, reg):
    f = topovox.vtkOptimalTransportFilter()
    f.SetInputDataObject(0, image_of(a, (1.0, 0.5)))
    f.SetInputDataObject(1, image_of(b, (1.0, 0.5)))
    f.SetReg(reg)
    f.SetMethod(1)
    f.SetMaximumIterations(100000)
    f.SetStopThreshold(1e-14)
    f.Update()
    pd = f.GetOutputDataObject(0).GetPointData()
    get = lambda name: vtk_to_numpy(pd.GetArray(name))
    return (get("SourcePotential") @ a.reshape(-1) + get("TargetPotential") @ b.reshape(-1),
            get("SourceGradient"), get("TargetGradient"))


a = rng.random((5, 6)) + 0.1
b = rng.random((5, 6)) + 0.1
a /= a.sum()
b /= b.sum()
_, grad_a, grad_b = transport_value(a, b, 0.5)
for which, grad in (("source", grad_a), ("target", grad_b)):
    delta = rng.standard_normal((5, 6))
    delta -= delta.mean()  # mass-preserving
    t = 1e-5  # central differences: error O(t^2), about 1e-7 relative here
    if which == "source":
        plus, minus = transport_value(a + t * delta, b, 0.5)[0], transport_value(a - t * delta, b, 0.5)[0]
    else:
        plus, minus = transport_value(a, b + t * delta, 0.5)[0], transport_value(a, b - t * delta, 0.5)[0]
    numeric = (plus - minus) / (2 * t)
    analytic = grad @ delta.reshape(-1)
    expect(abs(numeric - analytic) <= 1e-5 * max(1.0, abs(analytic)),
           "%s gradient: finite differences %r, centred potentials %r" % (which, numeric, analytic))
    expect(abs(grad[(a if which == "source" else b).reshape(-1) > 0].mean()) < 1e-12, which + " gradient is centred")

# The proxy as a user applies it: two Wavelet-derived densities.
wavelet = Wavelet()
wavelet.WholeExtent = [0, 8, 0, 6, 0, 0]
source = Calculator(Input=wavelet, Function="RTData", ResultArrayName="rho")
target = Calculator(Input=wavelet, Function="400 - RTData", ResultArrayName="rho")
transport = OptimalTransport(Source=source, Target=target)
transport.Reg = 0.5
transport.UpdatePipeline()
data = sm.Fetch(transport)
expect(data.GetPointData().GetArray("Displacement") is not None, "proxy: Displacement array")
expect(data.GetFieldData().GetArray("TransportCost").GetValue(0) > 0, "proxy: a positive cost")

# Errors, not crashes: a negative density; grids that differ.
for target_values, words in ((-np.ones((4, 5)), "negative"), (np.ones((4, 6)), "same grid")):
    errors = []
    bad = topovox.vtkOptimalTransportFilter()
    bad.AddObserver(vtkCommand.ErrorEvent, lambda obj, event, calldata=None: errors.append(event))
    bad.SetInputDataObject(0, image_of(np.ones((4, 5)), (1.0, 1.0)))
    bad.SetInputDataObject(1, image_of(target_values, (1.0, 1.0)))
    bad.Update()
    expect(len(errors) == 1, "bad input (%s) is reported" % words)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
