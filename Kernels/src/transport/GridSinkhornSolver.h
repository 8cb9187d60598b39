// GridSinkhornSolver.h - the convolutional Sinkhorn iterations
// (GridSinkhorn.h) written once for the CPU threads and the GPU. A backend
// holds the vectors (u, v and the kernel's products, one value per voxel)
// where it computes, and does the steps; this file decides which step comes
// when, so that both follow POT's loop the same way.
//
// Backend interface:
//   void apply(FactorSet set, Buffer in, Buffer out)  out = (F_x F_y F_z) in
//   void updateV()              v = b / ktu, or log b - ktu (log domain)
//   bool updateU()              u = 1 / ((1 / a) kv), or log a - kv; returns
//                               whether a number went bad (scaling only)
//   void save(); void restore() u, v before the step, for numerical errors
//   double marginalError()      || v (K^T u) - b ||_2 from ktu = K u
//   std::vector<double> download(Buffer)
#pragma once

#include "topovox/GridSinkhorn.h"

#include <cmath>
#include <string>
#include <vector>

namespace topovox
{
namespace transport
{
enum class Buffer : int
{
  U = 0,
  V,
  KTU,
  KV,
  Scratch
};

// The factor sets: the kernel, and per axis the kernel with that axis's
// factor times its cost term or times the position (for the cost and the
// barycentres).
enum FactorSet : int
{
  Kernel = 0,
  CostX = 1,       // CostX + axis
  PositionX = 4    // PositionX + axis
};

// The n_a x n_a factors (row-major) of the seven sets, per axis.
struct GridFactors
{
  std::vector<double> of[7][3];
};

GridFactors gridFactors(const int64_t dims[3], const double spacing[3], double reg, bool logDomain);

template <typename Backend>
GridSinkhornResult solveGrid(Backend& be, const std::vector<double>& a, const std::vector<double>& b,
  const int64_t dims[3], const double spacing[3], const SinkhornOptions& o)
{
  const bool logDomain = o.method == SinkhornMethod::SinkhornLog;
  GridSinkhornResult r;
  bool converged = false;
  for (int ii = 0; ii < o.numItermax; ++ii)
  {
    if (!logDomain)
      be.save();
    be.apply(Kernel, Buffer::U, Buffer::KTU); // K is symmetric: K^T u
    be.updateV();
    be.apply(Kernel, Buffer::V, Buffer::KV);
    const bool bad = be.updateU();
    r.iterations = ii + 1;
    if (bad)
    {
      r.warnings = "numerical errors at iteration " + std::to_string(ii);
      be.restore();
      converged = true;
      break;
    }
    if (ii % 10 == 0)
    {
      be.apply(Kernel, Buffer::U, Buffer::KTU);
      r.error = be.marginalError();
      if (r.error < o.stopThr)
      {
        converged = true;
        break;
      }
    }
  }
  if (!converged)
    r.warnings = "did not converge in " + std::to_string(o.numItermax) + " iterations (marginal error " +
      std::to_string(r.error) + ")";

  // Potentials, cost and barycentres from u, v and the kernel's products.
  const std::vector<double> u = be.download(Buffer::U), v = be.download(Buffer::V);
  const size_t n = u.size();
  r.sourcePotential.resize(n);
  r.targetPotential.resize(n);
  for (size_t k = 0; k < n; ++k)
  {
    r.sourcePotential[k] = o.reg * (logDomain ? u[k] : std::log(u[k]));
    r.targetPotential[k] = o.reg * (logDomain ? v[k] : std::log(v[k]));
  }
  // The gradients: the potentials centred over the voxels of positive mass.
  auto centred = [n](const std::vector<double>& potential, const std::vector<double>& mass) {
    double sum = 0;
    size_t count = 0;
    for (size_t k = 0; k < n; ++k)
      if (mass[k] > 0 && std::isfinite(potential[k]))
      {
        sum += potential[k];
        ++count;
      }
    const double mean = count ? sum / static_cast<double>(count) : 0.0;
    std::vector<double> out(n, 0.0);
    for (size_t k = 0; k < n; ++k)
      if (mass[k] > 0 && std::isfinite(potential[k]))
        out[k] = potential[k] - mean;
    return out;
  };
  r.sourceGradient = centred(r.sourcePotential, a);
  r.targetGradient = centred(r.targetPotential, b);
  be.apply(Kernel, Buffer::V, Buffer::KV);
  const std::vector<double> rowSum = be.download(Buffer::KV);
  r.displacement.assign(3 * n, 0.0);
  for (int axis = 0; axis < 3; ++axis)
  {
    be.apply(static_cast<FactorSet>(CostX + axis), Buffer::V, Buffer::Scratch);
    const std::vector<double> term = be.download(Buffer::Scratch);
    for (size_t k = 0; k < n; ++k)
      r.cost += logDomain ? std::exp(u[k] + term[k]) : u[k] * term[k];
    be.apply(static_cast<FactorSet>(PositionX + axis), Buffer::V, Buffer::Scratch);
    const std::vector<double> moved = be.download(Buffer::Scratch);
    const int64_t stride = axis == 0 ? 1 : axis == 1 ? dims[0] : dims[0] * dims[1];
    for (size_t k = 0; k < n; ++k)
    {
      if (!(a[k] > 0))
        continue;
      const double mean = logDomain ? std::exp(moved[k] - rowSum[k]) : moved[k] / rowSum[k];
      const double here = spacing[axis] * static_cast<double>((static_cast<int64_t>(k) / stride) % dims[axis]);
      r.displacement[3 * k + static_cast<size_t>(axis)] = std::isfinite(mean) ? mean - here : 0.0;
    }
  }
  return r;
}

#ifdef TOPOVOX_WITH_CUDA
// The GPU backend's run (GridSinkhornCUDA.cu). Throws std::runtime_error on
// a CUDA failure (the caller runs the CPU path).
GridSinkhornResult sinkhornGridGPU(const std::vector<double>& a, const std::vector<double>& b, const int64_t dims[3],
  const double spacing[3], const SinkhornOptions& options, const GridFactors& factors);
#endif
}
}
