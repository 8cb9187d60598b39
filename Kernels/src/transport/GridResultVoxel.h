// GridResultVoxel.h - what the convolutional Sinkhorn reports per voxel
// once u and v are known, written once for the CPU loops and the GPU
// kernels (GridSinkhornSolver.h's epilogue): the dual potential, the
// voxel's share of the transport cost along one axis, and its mass's mean
// displacement along one axis.
#pragma once

#include "../euler/EulerCells.h" // TV_HD

#include <cmath>

namespace topovox
{
namespace transport
{
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
