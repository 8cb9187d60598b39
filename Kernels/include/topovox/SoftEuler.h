// SoftEuler.h - the differentiable (sigmoid-relaxed) Euler characteristic
// curve of a batch of images, with exact gradients.
//
// Heights: h(p) = weight * X(p) + alpha * <u, p>, p the voxel's position
// (origin + spacing * index), per voxel, as in EulerTransform.h. A cell's
// height is the max of h over its vertices (V) or the min over the cubes
// containing it (T): the cells are exactly those EulerCells.h gives to the
// voxel attaining that height (ties by index), so each voxel p holds a signed
// count c(p) = sum over its cells of (-1)^dim, all at height h(p). Then
//   chi(t) = sum over cells (-1)^dim sigmoid(lambda (t - h(cell)))
//          = sum over voxels c(p) sigmoid(lambda (t - h(p))),
// which tends to the exact directional Euler curve (cells with h < t) as
// lambda grows. (The specification keeps per-voxel coefficients from X and
// only shifts them by alpha <u, p>; that is not exact once the direction
// changes which vertex is a cell's max. Here c(p) is recomputed from h.)
//
// Gradients, given G(b, t) = dL/dchi(b, t): with s = sigmoid(lambda (t - h(p)))
//   dL/dh(p)   = - sum_t G(b, t) c(p) lambda s (1 - s)
//   dL/dX(p)   = weight * dL/dh(p)         (each cell's argmax voxel: p)
//   dL/dt      =   sum_p G(b, t) c(p) lambda s (1 - s)
//   dL/du      = sum_p dL/dh(p) alpha p,   dL/dalpha = sum_p dL/dh(p) <u, p>
// (u is taken as a free vector: a caller that keeps |u| = 1 by writing
// u = v / |v| differentiates through that itself, as the PyTorch layer does).
// c(p) is piecewise constant in X, u and alpha: the gradients are those of
// the smooth function on each piece, exact away from ties.
//
// Several directions u_1 .. u_D at once (the transform): chi has one curve
// per image and direction, and the gradients sum over the directions,
// except dL/du, one per direction.
//
// All arrays live in the memory space of the images (host, or the GPU for
// the CUDA path), so that a GPU caller never copies to the host; the
// floating type T (float or double) is that of every array; sums are
// accumulated in double. NaN voxels are absent.
#pragma once

#include "topovox/EulerCurve.h"

#include <cstdint>

namespace topovox
{

struct SoftEulerProblem
{
  ScalarType type = ScalarType::Float32;     // Float32 or Float64, every array
  MemorySpace memory = MemorySpace::Host;    // of every array
  Construction construction = Construction::V;
  int64_t batch = 1;
  int64_t dims[3] = { 1, 1, 1 };             // per image, x fastest, images contiguous
  int thresholdCount = 0;
  int directionCount = 1;
  double lambda = 10.0;
  double weight = 1.0;
  double origin[3] = { 0, 0, 0 };
  double spacing[3] = { 1, 1, 1 };
  int threads = 0; // CPU threads; 0 = all
  // Inputs (arrays of `type` in `memory`):
  const void* images = nullptr;     // batch * nx * ny * nz
  const void* thresholds = nullptr; // thresholdCount
  const void* direction = nullptr;  // 3 * directionCount (x, y, z per direction)
  const void* alpha = nullptr;      // 1
  // GPU memory only: the CUDA stream (a cudaStream_t) to run on. Given, the
  // work is enqueued on it after what it already holds, and the call returns
  // without waiting (torch's current stream: no host round trip); null, the
  // legacy default stream, and the call returns when the results are there
  // (to queue on the legacy default stream without waiting, pass
  // cudaStreamLegacy).
  void* stream = nullptr;
};

// chi: batch * directionCount * thresholdCount values of `type` in `memory`
// (threshold fastest, then direction, then image).
// Throws std::invalid_argument on a bad problem; std::runtime_error when the
// GPU path fails (the caller decides; no silent fallback for device memory).
void softEulerForward(const SoftEulerProblem& problem, void* chi);

// gradChi: like chi (dL/dchi). Outputs, each optional (null to skip):
// gradImages (like images), gradThresholds (thresholdCount), gradDirection
// (3 * directionCount), gradAlpha (1); sums over the batch (and the
// directions, but for gradDirection).
void softEulerBackward(const SoftEulerProblem& problem, const void* gradChi, void* gradImages,
  void* gradThresholds, void* gradDirection, void* gradAlpha);

} // namespace topovox
