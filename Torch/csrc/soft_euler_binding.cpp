// soft_euler_binding.cpp - the PyTorch binding of the differentiable Euler
// curve (Kernels/include/topovox/SoftEuler.h): tensors in, the kernels'
// forward and backward on their memory (CPU or CUDA, no copies), tensors
// out. Images (B, C, H, W) or (B, C, D, H, W) are B*C images, x = W fastest.
#include <torch/extension.h>

#include "topovox/SoftEuler.h"

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace
{
topovox::SoftEulerProblem problemOf(const torch::Tensor& images, const torch::Tensor& thresholds,
  const torch::Tensor& direction, const torch::Tensor& alpha, double lambda, double weight, bool t,
  const std::vector<double>& origin, const std::vector<double>& spacing, int64_t stream)
{
  TORCH_CHECK(images.dim() == 4 || images.dim() == 5, "images must be (B, C, H, W) or (B, C, D, H, W)");
  TORCH_CHECK(images.scalar_type() == torch::kFloat32 || images.scalar_type() == torch::kFloat64,
    "images must be float32 or float64");
  for (const torch::Tensor* x : { &thresholds, &direction, &alpha })
  {
    TORCH_CHECK(x->scalar_type() == images.scalar_type(), "every tensor must have the images' dtype");
    TORCH_CHECK(x->device() == images.device(), "every tensor must be on the images' device");
    TORCH_CHECK(x->is_contiguous(), "tensors must be contiguous");
  }
  TORCH_CHECK(images.is_contiguous(), "images must be contiguous");
  TORCH_CHECK(thresholds.dim() == 1 && thresholds.numel() > 0, "thresholds must be a non-empty 1-D tensor");
  TORCH_CHECK((direction.dim() == 1 && direction.numel() == 3) ||
      (direction.dim() == 2 && direction.size(1) == 3 && direction.size(0) >= 1 && direction.size(0) <= 65535),
    "the direction must be (3,) or (D, 3) with 1 <= D <= 65535 (x, y, z per direction)");
  TORCH_CHECK(alpha.numel() == 1, "alpha must hold one value");
  TORCH_CHECK(origin.size() == 3 && spacing.size() == 3, "origin and spacing take 3 values (x, y, z)");
  topovox::SoftEulerProblem p;
  p.type = images.scalar_type() == torch::kFloat32 ? topovox::ScalarType::Float32 : topovox::ScalarType::Float64;
  p.memory = images.is_cuda() ? topovox::MemorySpace::Device : topovox::MemorySpace::Host;
  p.construction = t ? topovox::Construction::T : topovox::Construction::V;
  p.batch = images.size(0) * images.size(1);
  const int nd = images.dim() - 2;
  for (int a = 0; a < 3; ++a)
    p.dims[a] = a < nd ? images.size(images.dim() - 1 - a) : 1;
  p.thresholdCount = static_cast<int>(thresholds.numel());
  p.directionCount = static_cast<int>(direction.numel() / 3);
  p.lambda = lambda;
  p.weight = weight;
  for (int a = 0; a < 3; ++a)
  {
    p.origin[a] = origin[static_cast<size_t>(a)];
    p.spacing[a] = spacing[static_cast<size_t>(a)];
  }
  p.images = images.data_ptr();
  p.thresholds = thresholds.data_ptr();
  p.direction = direction.data_ptr();
  p.alpha = alpha.data_ptr();
  // CUDA tensors: the caller's current stream, passed from Python so that
  // this file needs no CUDA headers (topovox_torch._stream_of: torch's
  // default stream as cudaStreamLegacy, since a null stream would make the
  // call wait); the kernels queue behind what it holds and nothing waits.
  p.stream = images.is_cuda() ? reinterpret_cast<void*>(static_cast<intptr_t>(stream)) : nullptr;
  return p;
}

template <typename F>
void guarded(F f)
{
  try
  {
    f();
  }
  catch (const std::invalid_argument& e)
  {
    TORCH_CHECK_VALUE(false, e.what());
  }
  catch (const std::exception& e)
  {
    TORCH_CHECK(false, e.what());
  }
}
}

torch::Tensor softEulerForward(torch::Tensor images, torch::Tensor thresholds, torch::Tensor direction,
  torch::Tensor alpha, double lambda, double weight, bool t, std::vector<double> origin,
  std::vector<double> spacing, int64_t stream)
{
  const auto p = problemOf(images, thresholds, direction, alpha, lambda, weight, t, origin, spacing, stream);
  // (B, C, T) for one direction given as (3,); (B, C, D, T) for (D, 3).
  std::vector<int64_t> shape = { images.size(0), images.size(1) };
  if (direction.dim() == 2)
    shape.push_back(direction.size(0));
  shape.push_back(thresholds.numel());
  torch::Tensor chi = torch::empty(shape, images.options());
  guarded([&] { topovox::softEulerForward(p, chi.data_ptr()); });
  return chi;
}

// The gradients of images, thresholds, direction and alpha, those of
// `wanted` only (the others undefined tensors, and not computed: the
// images' is a write of the whole batch, and with several directions a
// zeroing first).
std::vector<torch::Tensor> softEulerBackward(torch::Tensor gradChi, torch::Tensor images, torch::Tensor thresholds,
  torch::Tensor direction, torch::Tensor alpha, double lambda, double weight, bool t, std::vector<double> origin,
  std::vector<double> spacing, int64_t stream, const std::array<bool, 4>& wanted)
{
  const auto p = problemOf(images, thresholds, direction, alpha, lambda, weight, t, origin, spacing, stream);
  gradChi = gradChi.contiguous();
  TORCH_CHECK(gradChi.numel() == p.batch * p.directionCount * p.thresholdCount,
    "the gradient of chi has the wrong size");
  const torch::Tensor* of[4] = { &images, &thresholds, &direction, &alpha };
  std::vector<torch::Tensor> grads(4);
  void* out[4] = {};
  for (int k = 0; k < 4; ++k)
    if (wanted[static_cast<size_t>(k)])
    {
      grads[static_cast<size_t>(k)] = torch::empty_like(*of[k]);
      out[k] = grads[static_cast<size_t>(k)].data_ptr();
    }
  guarded([&] { topovox::softEulerBackward(p, gradChi.data_ptr(), out[0], out[1], out[2], out[3]); });
  return grads;
}

namespace
{
// The autograd node, in C++: a Python torch.autograd.Function costs about
// 11 us of host time a call on top of the kernels' own 8 (measured on the
// GPU machine for a 256^2 image), more than the GPU's time for it.
// The backward runs on the forward's stream, as torch runs a backward op on
// the stream of its forward op.
class SoftEulerCurve : public torch::autograd::Function<SoftEulerCurve>
{
public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor images, torch::Tensor thresholds,
    torch::Tensor direction, torch::Tensor alpha, double lambda, double weight, bool t, std::vector<double> origin,
    std::vector<double> spacing, int64_t stream)
  {
    ctx->saved_data["direction_sizes"] = direction.sizes().vec();
    ctx->saved_data["alpha_sizes"] = alpha.sizes().vec();
    images = images.contiguous();
    thresholds = thresholds.contiguous();
    direction = direction.dim() == 1 ? direction.contiguous().reshape({ 3 }) : direction.contiguous().reshape({ -1, 3 });
    alpha = alpha.contiguous().reshape({ 1 });
    ctx->save_for_backward({ images, thresholds, direction, alpha });
    ctx->saved_data["lambda"] = lambda;
    ctx->saved_data["weight"] = weight;
    ctx->saved_data["t"] = t;
    ctx->saved_data["origin"] = origin;
    ctx->saved_data["spacing"] = spacing;
    ctx->saved_data["stream"] = stream;
    return softEulerForward(images, thresholds, direction, alpha, lambda, weight, t, origin, spacing, stream);
  }

  static torch::autograd::variable_list backward(
    torch::autograd::AutogradContext* ctx, torch::autograd::variable_list gradOutputs)
  {
    const auto saved = ctx->get_saved_variables();
    const auto& d = ctx->saved_data;
    const std::array<bool, 4> wanted = { ctx->needs_input_grad(0), ctx->needs_input_grad(1),
      ctx->needs_input_grad(2), ctx->needs_input_grad(3) };
    auto grads = softEulerBackward(gradOutputs[0], saved[0], saved[1], saved[2], saved[3], d.at("lambda").toDouble(),
      d.at("weight").toDouble(), d.at("t").toBool(), d.at("origin").toDoubleVector(),
      d.at("spacing").toDoubleVector(), d.at("stream").toInt(), wanted);
    // The direction and alpha as the caller shaped them.
    if (wanted[2])
      grads[2] = grads[2].reshape(d.at("direction_sizes").toIntVector());
    if (wanted[3])
      grads[3] = grads[3].reshape(d.at("alpha_sizes").toIntVector());
    return { grads[0], grads[1], grads[2], grads[3], torch::Tensor(), torch::Tensor(), torch::Tensor(),
      torch::Tensor(), torch::Tensor(), torch::Tensor() };
  }
};

torch::Tensor softEulerApply(torch::Tensor images, torch::Tensor thresholds, torch::Tensor direction,
  torch::Tensor alpha, double lambda, double weight, bool t, std::vector<double> origin,
  std::vector<double> spacing, int64_t stream)
{
  return SoftEulerCurve::apply(images, thresholds, direction, alpha, lambda, weight, t, origin, spacing, stream);
}
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
  m.doc() = "TopoVox: the differentiable Euler characteristic curve (SoftEuler.h)";
  m.def("apply", &softEulerApply, "chi, differentiable: (B, C, T), or (B, C, D, T) for D directions");
}
