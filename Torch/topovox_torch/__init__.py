"""topovox_torch: the differentiable Euler characteristic curve as a PyTorch
layer, over TopoVox's kernels (Kernels/include/topovox/SoftEuler.h).

    chi(t) = sum over cells (-1)^dim sigmoid(lam * (t - h(cell))),
    h(p) = weight * x(p) + alpha * <u, p>,   p = origin + spacing * index,

a cell's height being the max over its vertices (construction "V") or the min
over the cubes containing it ("T"). As lam grows, chi is the exact Euler
curve of the direction u. Gradients flow to the images, the thresholds, the
direction and alpha, computed by the kernels (CPU threads or CUDA) on the
tensors' own memory.

The extension is compiled on first import (torch.utils.cpp_extension.load)
against the Kernels library: set TOPOVOX_KERNELS_LIB to a built
libtopovox_kernels.a (built with CUDA to use CUDA tensors); by default the
first build*/Kernels/libtopovox_kernels.a under the repository is used.
"""
import glob
import os

import torch
from torch.utils import cpp_extension

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.abspath(os.path.join(_HERE, "..", ".."))
_ext = None


def _extension():
    global _ext
    if _ext is not None:
        return _ext
    lib = os.environ.get("TOPOVOX_KERNELS_LIB")
    if not lib:
        found = sorted(glob.glob(os.path.join(_ROOT, "build*", "Kernels", "libtopovox_kernels.a")))
        if not found:
            raise RuntimeError("topovox_torch: no libtopovox_kernels.a; build Kernels/ and set TOPOVOX_KERNELS_LIB")
        lib = found[0]
    # -ldl: the kernels open cuBLAS on first use (Kernels/src/transport/CublasLibrary.h).
    ldflags = [lib, "-lpthread", "-ldl"]
    cuda_home = cpp_extension.CUDA_HOME
    if cuda_home and os.path.isdir(os.path.join(cuda_home, "lib64")):
        ldflags += ["-L" + os.path.join(cuda_home, "lib64"), "-lcudart",
                    "-Wl,-rpath," + os.path.join(cuda_home, "lib64")]
    _ext = cpp_extension.load(
        name="topovox_torch_ext",
        sources=[os.path.join(_ROOT, "Torch", "csrc", "soft_euler_binding.cpp")],
        extra_include_paths=[os.path.join(_ROOT, "Kernels", "include")],
        extra_cflags=["-O2"], extra_ldflags=ldflags, verbose=False)
    return _ext


_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
_CUDA_STREAM_LEGACY = 1  # cudaStreamLegacy in cuda_runtime_api.h


def _stream_of(tensor):
    """The CUDA stream the kernels run on for this tensor: torch's current
    stream of its device (they queue behind the work that made their inputs
    and return without waiting); 0 for CPU tensors. torch's raw accessor
    when it has one (a Stream object per call costs more than a small
    image's kernels)."""
    if not tensor.is_cuda:
        return 0
    if _raw_stream is not None:
        raw = _raw_stream(tensor.device.index)
    else:
        raw = torch.cuda.current_stream(tensor.device).cuda_stream
    # torch's default stream is the legacy default stream, handle 0; the
    # kernels take a null stream as "wait for the results" (a C++ caller's
    # plain call), so it is passed as cudaStreamLegacy (1), the same stream
    # named so that nothing waits.
    return raw if raw != 0 else _CUDA_STREAM_LEGACY


class SoftEulerFunction:
    """chi = SoftEulerFunction.apply(images, thresholds, direction, alpha,
    lam, weight, construction, origin, spacing): images (B, C, H, W) or
    (B, C, D, H, W); thresholds (T,); direction (3,) (x, y, z: used as
    given) or (K, 3) for K directions in one launch (a transform); alpha
    (1,); all of one dtype (float32/64) and device. Returns (B, C, T), or
    (B, C, K, T) for K directions, differentiable with respect to the
    images, the thresholds, the direction and alpha.

    The autograd node is the extension's (C++): a Python
    torch.autograd.Function cost more host time a call than a small image's
    kernels (Torch/csrc/soft_euler_binding.cpp). The backward runs on the
    forward's CUDA stream."""

    @staticmethod
    def apply(images, thresholds, direction, alpha, lam, weight, construction, origin, spacing):
        return _extension().apply(images, thresholds, direction, alpha, float(lam), float(weight),
                                  construction == "T", origin, spacing, _stream_of(images))


def soft_euler_curve(images, thresholds, direction=(0.0, 0.0, 1.0), alpha=0.0, lam=10.0, weight=1.0,
                     construction="V", origin=(0.0, 0.0, 0.0), spacing=(1.0, 1.0, 1.0)):
    """The functional form; direction and alpha may be tensors (learnable)."""
    like = dict(dtype=images.dtype, device=images.device)
    direction = torch.as_tensor(direction, **like)
    alpha = torch.as_tensor(alpha, **like).reshape(1)
    return SoftEulerFunction.apply(images, thresholds.to(**like), direction, alpha, lam, weight,
                                   construction, origin, spacing)


class EulerCurveLayer(torch.nn.Module):
    """Learnable thresholds, direction and alpha. The direction is kept a
    unit vector by learning an unconstrained v and using u = v / |v|, so
    that autograd carries the gradient through the normalisation. A (K, 3)
    direction learns K directions at once (each normalised), and the layer
    returns (B, C, K, T)."""

    def __init__(self, thresholds, direction=(0.0, 0.0, 1.0), alpha=1.0, weight=1.0, lam=10.0,
                 construction="V", learn_thresholds=True, learn_direction=True, learn_alpha=True):
        super().__init__()
        self.thresholds = torch.nn.Parameter(torch.as_tensor(thresholds, dtype=torch.float32),
                                             requires_grad=learn_thresholds)
        self.v = torch.nn.Parameter(torch.as_tensor(direction, dtype=torch.float32),
                                    requires_grad=learn_direction)
        self.alpha = torch.nn.Parameter(torch.tensor([float(alpha)]), requires_grad=learn_alpha)
        self.weight, self.lam, self.construction = float(weight), float(lam), construction

    def forward(self, images):
        like = dict(dtype=images.dtype, device=images.device)
        u = self.v.to(**like)
        u = u / u.norm(dim=-1, keepdim=True)
        return SoftEulerFunction.apply(images, self.thresholds.to(**like), u, self.alpha.to(**like),
                                       self.lam, self.weight, self.construction, (0.0, 0.0, 0.0),
                                       (1.0, 1.0, 1.0))
