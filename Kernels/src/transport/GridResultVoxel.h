// GridResultVoxel.h - the convolutional Sinkhorn's per-voxel formulas,
// written once for the CPU loops and the GPU kernels: each iteration's
// updates of v and u and POT's numerical-error test, then what is reported
// once u and v are known (GridSinkhornSolver.h's epilogue): the dual
// potential, the voxel's share of the transport cost along one axis, and
// its mass's mean displacement along one axis.
#pragma once

#include "../euler/EulerCells.h" // TV_HD

#include <cmath>

namespace topovox
{
namespace transport
{
// v after K^T u = t: b / t, or log b - t in the log domain (where
// `marginal` is log b). One rounding each, so host and device agree bit
// for bit (no product to fuse into an fma).
TV_HD double updatedV(double marginal, double t, bool logDomain)
{
  return logDomain ? marginal - t : marginal / t;
}

// u after K v = t: POT's 1 / ((1 / a) t), or log a - t in the log domain
// (`marginal` log a).
TV_HD double updatedU(double marginal, double t, bool logDomain)
{
  return logDomain ? marginal - t : 1.0 / ((1.0 / marginal) * t);
}

// POT's numerical error of the scaling method, tested after each update of
// u: a zero in K^T u, or a u or v that is not finite (x - x is NaN for
// +-inf and NaN: one spelling for host and device).
TV_HD bool updateWentBad(double ktu, double u, double v)
{
  return ktu == 0 || !(u - u == 0.0) || !(v - v == 0.0);
}

// The dual potential reg log u (u the scaling; the log domain holds log u).
TV_HD double potentialOf(double s, double reg, bool logDomain)
{
  return reg * (logDomain ? s : log(s));
}

// u_k times (K with one axis's factor multiplied by its cost) v, at voxel k:
// its share of <plan, M> along that axis.
TV_HD double costTermOf(double u, double term, bool logDomain)
{
  return logDomain ? exp(u + term) : u * term;
}

// Where the voxel's mass goes on average along one axis, minus its
// position `here`: moved / rowSum is the plan's barycentre (the kernel with
// the position factor, over the kernel). Empty voxels, and barycentres that
// underflowed, move by 0.
TV_HD double displacementOf(double mass, double moved, double rowSum, double here, bool logDomain)
{
  if (!(mass > 0))
    return 0.0;
  const double mean = logDomain ? exp(moved - rowSum) : moved / rowSum;
  return mean - mean == 0.0 ? mean - here : 0.0; // finite (inf - inf and NaN are NaN): one spelling for host and device
}
} // namespace transport
} // namespace topovox
