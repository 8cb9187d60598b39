// GridSinkhorn.h - entropic optimal transport between two densities on one
// regular 1D, 2D or 3D grid with the squared Euclidean cost (convolutional
// Sinkhorn): the d x d cost and kernel are never built. The Gibbs kernel
// exp(-|p - q|^2 / reg) is a product over the axes, so applying it is one
// small matrix per axis applied line by line: O(d (n_x + n_y + n_z)) per
// iteration and O(d) memory, so that 256^3 grids fit.
//
// The iterations, stopping rule, warnings and both methods are those of
// Sinkhorn.h (POT's sinkhorn_knopp and sinkhorn_log) with
// M(p, q) = sum over axes of (spacing_a (p_a - q_a))^2, so the results equal
// the dense solver's on that M up to the order of the sums (tested to 1e-10).
// Outputs per voxel, x fastest:
// * the dual potentials f = reg log u and g = reg log v (sinkhorn_log: reg
//   times its log-domain potentials), -inf where a or b is 0;
// * the barycentric displacement: where the voxel's mass goes on average,
//   sum_q P(p, q) q / sum_q P(p, q), minus the voxel's position, in world
//   units (spacing applied), 0 where a is 0.
// The cost is <P, M>. a and b should have equal sums (POT's balanced
// problem); the filter normalises them.
#pragma once

#include "topovox/Sinkhorn.h"
#include "topovox/UninitializedAllocator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace topovox
{

// One value (or three) per voxel, x fastest: a std::vector whose new
// elements are left unwritten, on huge pages where large
// (UninitializedAllocator.h), so that the GPU's results are copied back
// into fresh memory by all threads at the bus's speed rather than zeroed
// first on one (the page faults of seven 16 MB arrays took longer than 100
// iterations on a 128^3 grid).
using GridField = UninitializedVector<double>;

struct GridSinkhornResult
{
  double cost = 0;
  int iterations = 0;
  double error = 0;             // the last marginal violation
  std::string warnings;         // numerical errors, non-convergence
  GridField sourcePotential, targetPotential;
  // The gradients of the entropic transport value with respect to a and b:
  // the potentials centred (their mean over the voxels of positive mass
  // subtracted), so that they act on mass-preserving changes; 0 where the
  // density is 0 (its potential is -inf there).
  GridField sourceGradient, targetGradient;
  GridField displacement; // 3 per voxel (x, y, z)
  Device device = Device::CPU;      // where it ran
};

// a, b: one value per voxel of a dims[0] x dims[1] x dims[2] grid, x
// fastest; spacing: the voxel size per axis. Uses options.reg, method,
// numItermax, stopThr, threads (CPU threads) and device (Auto: the GPU when
// present; the same steps, within rounding: cuBLAS sums the scaling
// method's products in its own order, and the log domain's log-sum-exps are
// factored into such products where that is exact, as in Sinkhorn.h, on
// the CPU always and on the GPU for axes of 2^24 terms or more), and
// progress (every 10th iteration; false: topovox::Aborted is thrown).
// Throws std::invalid_argument on bad sizes, negative or non-finite values.
GridSinkhornResult sinkhornGrid(const std::vector<double>& a, const std::vector<double>& b, const int64_t dims[3],
  const double spacing[3], const SinkhornOptions& options);

// Samples of a density (image values, any scale) scaled to unit mass, in
// place, as the filters and the command line hand them to sinkhornGrid.
// Throws std::invalid_argument naming `which` ("the source", "time step 3")
// when one is negative, NaN or infinite, or all are zero.
void normalizeDensity(std::vector<double>& values, const std::string& which);

} // namespace topovox
