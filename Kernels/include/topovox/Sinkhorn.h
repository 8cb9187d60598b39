// Sinkhorn.h - entropic optimal transport between pairs of histograms that
// share one cost matrix, with POT's (Python Optimal Transport) arguments,
// defaults and iterations mirrored, on the CPU threads (pairs in parallel;
// with fewer pairs than threads, the rows of a pair too: the same results
// whatever the thread count) or the GPU (all pairs at once: the same
// updates, sums in another order).
//
// For each pair (a, b) of histograms of dimension d (a: source, b: target;
// nonnegative) and the d x d cost M, the plan P minimising <P, M> - reg H(P)
// with marginals a and b:
// * method Sinkhorn (POT's sinkhorn_knopp): u, v start at 1/d; K = exp(-M /
//   reg); each iteration v = b / (K^T u), u = 1 / ((K / a) v); every 10th
//   iteration (from the first) the marginal violation ||v (K^T u) - b||_2
//   is compared with stopThr; a numerical error (a zero in K^T u, a NaN or
//   inf in u or v) stops the iterations and keeps the previous u, v, with a
//   warning. P = diag(u) K diag(v).
// * method SinkhornLog (POT's sinkhorn_log): log-domain potentials from 0,
//   v = log b - logsumexp_i(-M / reg + u), u = log a - logsumexp_j(-M / reg
//   + v), the same stopping rule; a zero marginal entry gives -inf
//   potentials and zero plan rows, never NaN. Where every row of -M / reg
//   spans at most 600 (M's range over reg), both devices compute each
//   log-sum-exp as m_k + c + log sum_l exp(-M_kl / reg - m_k) exp(x_l - c)
//   (m_k the row's maximum, c the potentials'; the first factor made once):
//   plain sums instead of an exp per term, exact since the largest term
//   cannot underflow. Elsewhere, and for potentials that are not finite, by
//   the definition.
// The cost is <P, M> (POT's sinkhorn2).
#pragma once

#include "topovox/Device.h"
#include "topovox/Progress.h"

#include <cstdint>
#include <string>
#include <vector>

namespace topovox
{

enum class SinkhornMethod : int
{
  Sinkhorn = 0,
  SinkhornLog = 1
};

struct SinkhornOptions
{
  double reg = 1.0;
  SinkhornMethod method = SinkhornMethod::Sinkhorn;
  int numItermax = 1000;
  double stopThr = 1e-9;
  bool computePlans = false;
  // The grid solver (GridSinkhorn.h): the potentials, gradients and
  // displacement per voxel; false: the cost alone (nothing per voxel is
  // computed or comes back from the GPU: what a series of costs needs).
  bool computeFields = true;
  int threads = 0;
  // Auto: the GPU when one is present, else the CPU. GPU: all pairs at
  // once, every iteration on the device; too little device memory falls
  // back to the CPU with a warning.
  Device device = Device::Auto;
  // Called on the calling thread with the share of the work done; false
  // stops the solve and it throws topovox::Aborted. The grid solver
  // (GridSinkhorn.h) calls it at every marginal check (every 10th
  // iteration: the share of numItermax); the CPU's dense solver as pairs
  // finish, or at every check where pairs of d >= 256 run together. The
  // dense GPU path does not call it (it runs all pairs in one solve).
  ProgressCallback progress;
};

struct SinkhornResult
{
  std::vector<double> costs;     // per pair
  std::vector<double> plans;     // per pair d x d, row-major (when asked)
  std::vector<int> iterations;   // per pair
  std::vector<double> errors;    // per pair: the last marginal violation
  std::string warnings;          // numerical errors, non-convergence
  Device device = Device::CPU;   // where it ran
};

// a, b: `pairs` x d row-major; M: d x d row-major. Throws
// std::invalid_argument on bad sizes, negative or non-finite entries.
SinkhornResult sinkhorn(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& M,
  int64_t pairs, int64_t d, const SinkhornOptions& options);

} // namespace topovox
