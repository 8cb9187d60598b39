// GridSinkhornSolver.h - the convolutional Sinkhorn iterations
// (GridSinkhorn.h) written once for the CPU threads and the GPU. A backend
// holds the vectors (u, v and the kernel's products, one value per voxel)
// where it computes, and does the steps; this file decides which step comes
// when, so that both follow POT's loop the same way.
//
// Backend interface:
//   void apply(FactorSet set, Buffer in, Buffer out)  out = (F_x F_y F_z) in
//   void stepV()                ktu = K u; v = b / ktu, or log b - ktu (log
//                               domain)
//   bool stepU(int iteration)   kv = K v; u = 1 / ((1 / a) kv), or log a - kv;
//                               returns whether a number went bad (scaling
//                               only), or false and leaves it to
//                               failedIteration()
//   int failedIteration()       the first iteration whose update went bad, or
//                               -1 (a backend that defers the check freezes u
//                               and v from then on)
//   void restore(int iteration) u, v as they were before that iteration
//   bool iterate(int first, int count)
//                               iterations first .. first + count - 1 (none
//                               checked, none the last) at once, as the steps
//                               above would run them; false: not done (the
//                               solver steps)
//   double marginalError()      || v (K^T u) - b ||_2 from ktu = K u
// and for the results (GridResultVoxel.h's per-voxel formulas):
//   void potentials(double reg, GridField& source, GridField& target)
//   double costAlong(Buffer term)       sum over voxels of costTermOf(u, term)
//   void displaceAlong(int axis, Buffer moved, Buffer rowSum, const double spacing[3])
//                               one axis of every voxel's displacement
//   GridField displacement()            x, y, z per voxel
// The updates write into the spare of two copies of u (of v) and make it
// the current one: the copy before the iteration is kept, without a copy
// per iteration, for restore() (POT keeps the scalings before the step that
// produced a numerical error): iteration ii reads copy ii % 2.
#pragma once

#include "topovox/GridSinkhorn.h"
#include "topovox/Device.h"

#include <algorithm>
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
// The work buffers (KTU, KV, Scratch) a backend keeps in an array; u and v
// are kept apart, two copies each.
constexpr int kWorkBuffers = 3;
inline int workIndex(Buffer b)
{
  return static_cast<int>(b) - static_cast<int>(Buffer::KTU);
}

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

// What the factors are made of: each axis's kernel and cost factors depend
// on i - j alone (Toeplitz), so 2 n - 1 values each, by offset
// t = i - j + n - 1, hold them; the position factor is the kernel's times
// the position x_j (in the log domain: plus log x_j), n values. The GPU
// expands them on the device; the CPU into GridFactors' matrices.
struct GridDiagonals
{
  std::vector<double> kernel[3], cost[3], position[3];
};

GridDiagonals gridDiagonals(const int64_t dims[3], const double spacing[3], double reg, bool logDomain);

struct GridFactors
{
  std::vector<double> kernel[3], cost[3], position[3];
  const std::vector<double>& of(int set, int axis) const
  {
    const int kind = factorKind(set, axis);
    return kind == 1 ? cost[axis] : kind == 2 ? position[axis] : kernel[axis];
  }
};

// The n x n matrices of the diagonals: F[i][j] = diagonal[i - j + n - 1];
// position: kernel[i][j] * x_j (log domain: + log x_j).
GridFactors gridFactors(const GridDiagonals& diagonals, bool logDomain);

// The gradient of the transport value from a potential: the potential
// minus its mean over the voxels of positive mass (where it is finite), 0
// elsewhere. The mean is summed in fixed chunks, added in order, so the
// result does not depend on `threads`.
GridField centredOverMass(const GridField& potential, const std::vector<double>& mass, int threads);

template <typename Backend>
GridSinkhornResult solveGrid(Backend& be, const std::vector<double>& a, const std::vector<double>& b,
  const double spacing[3], const SinkhornOptions& o)
{
  const bool logDomain = o.method == SinkhornMethod::SinkhornLog;
  GridSinkhornResult r;
  bool converged = false;
  for (int ii = 0; ii < o.numItermax; ++ii)
  {
    if (ii % 10 != 0)
    {
      // Up to the next check, or up to the last iteration (which is
      // checked): nothing to decide on the host in between.
      const int count = std::min(10 - ii % 10, o.numItermax - 1 - ii);
      if (count > 1 && be.iterate(ii, count))
      {
        ii += count - 1;
        r.iterations = ii + 1;
        continue;
      }
    }
    be.stepV(); // K is symmetric: K^T u = K u
    int failed = be.stepU(ii) ? ii : -1;
    r.iterations = ii + 1;
    const bool check = ii % 10 == 0;
    if (failed < 0 && !logDomain && (check || ii + 1 == o.numItermax))
      failed = be.failedIteration();
    if (failed >= 0)
    {
      r.iterations = failed + 1;
      r.warnings = "numerical errors at iteration " + std::to_string(failed);
      be.restore(failed);
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
  const int threads = threadCount(o.threads);
  r.sourceGradient = centredOverMass(r.sourcePotential, a, threads);
  r.targetGradient = centredOverMass(r.targetPotential, b, threads);
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
  const double spacing[3], const SinkhornOptions& options, const GridDiagonals& diagonals);
#endif
}
}
