// GridSinkhornSolver.h - the convolutional Sinkhorn iterations
// (GridSinkhorn.h) written once for the CPU threads and the GPU. A backend
// holds the vectors (u, v and the kernel's products, one value per voxel)
// where it computes, and does the steps; this file decides which step comes
// when, so that both follow POT's loop the same way.
//
// Backend interface:
//   void apply(FactorSet set, Buffer in, Buffer out)  out = (F_x F_y F_z) in
//   void updateV()              v = b / ktu, or log b - ktu (log domain)
//   bool updateU(int iteration) u = 1 / ((1 / a) kv), or log a - kv; returns
//                               whether a number went bad (scaling only), or
//                               false and leaves it to failedIteration()
//   int failedIteration()       the first iteration whose update went bad, or
//                               -1 (a backend that defers the check freezes u,
//                               v and the saved copies from then on)
//   void save(); void restore() u, v before the step, for numerical errors
//   double marginalError()      || v (K^T u) - b ||_2 from ktu = K u
// and for the results (GridResultVoxel.h's per-voxel formulas):
//   void potentials(double reg, std::vector<double>& source, std::vector<double>& target)
//   double costAlong(Buffer term)       sum over voxels of costTermOf(u, term)
//   void displaceAlong(int axis, Buffer moved, Buffer rowSum, const double spacing[3])
//                               one axis of every voxel's displacement
//   std::vector<double> displacement()  x, y, z per voxel
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

// The n_a x n_a factors (row-major) per axis: the kernel, the kernel times
// the axis's cost term, the kernel times the position. Set s applies to
// axis a the cost or position factor where s is CostX + a or PositionX + a,
// the kernel otherwise: three matrices an axis, not seven.
// Which of an axis's three factors set `set` applies to it: 0 the kernel,
// 1 the cost term's, 2 the position's (the CPU's and the GPU's one rule).
inline int factorKind(int set, int axis)
{
  return set == CostX + axis ? 1 : set == PositionX + axis ? 2 : 0;
}

struct GridFactors
{
  std::vector<double> kernel[3], cost[3], position[3];
  const std::vector<double>& of(int set, int axis) const
  {
    const int kind = factorKind(set, axis);
    return kind == 1 ? cost[axis] : kind == 2 ? position[axis] : kernel[axis];
  }
};

GridFactors gridFactors(const int64_t dims[3], const double spacing[3], double reg, bool logDomain);

template <typename Backend>
GridSinkhornResult solveGrid(Backend& be, const std::vector<double>& a, const std::vector<double>& b,
  const double spacing[3], const SinkhornOptions& o)
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
    int failed = be.updateU(ii) ? ii : -1;
    r.iterations = ii + 1;
    const bool check = ii % 10 == 0;
    if (failed < 0 && !logDomain && (check || ii + 1 == o.numItermax))
      failed = be.failedIteration();
    if (failed >= 0)
    {
      r.iterations = failed + 1;
      r.warnings = "numerical errors at iteration " + std::to_string(failed);
      be.restore();
      converged = true;
      break;
    }
    if (check)
    {
      be.apply(Kernel, Buffer::U, Buffer::KTU);
      r.error = be.marginalError();
      if (r.error < o.stopThr)
      {
        converged = true;
        break;
      }
      if (o.progress && !o.progress(static_cast<double>(ii + 1) / static_cast<double>(o.numItermax)))
        throw Aborted{};
    }
  }
  if (!converged)
    r.warnings = "did not converge in " + std::to_string(o.numItermax) + " iterations (marginal error " +
      std::to_string(r.error) + ")";

  // Potentials, cost and barycentres from u, v and the kernel's products,
  // where the backend holds them: only the results come back.
  if (!o.computeFields)
  {
    for (int axis = 0; axis < 3; ++axis)
    {
      be.apply(static_cast<FactorSet>(CostX + axis), Buffer::V, Buffer::Scratch);
      r.cost += be.costAlong(Buffer::Scratch);
    }
    return r;
  }
  be.potentials(o.reg, r.sourcePotential, r.targetPotential);
  const size_t n = r.sourcePotential.size();
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
  be.apply(Kernel, Buffer::V, Buffer::KV); // each voxel's row sum of the plan (over u)
  for (int axis = 0; axis < 3; ++axis)
  {
    be.apply(static_cast<FactorSet>(CostX + axis), Buffer::V, Buffer::Scratch);
    r.cost += be.costAlong(Buffer::Scratch);
    be.apply(static_cast<FactorSet>(PositionX + axis), Buffer::V, Buffer::Scratch);
    be.displaceAlong(axis, Buffer::Scratch, Buffer::KV, spacing);
  }
  r.displacement = be.displacement();
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
