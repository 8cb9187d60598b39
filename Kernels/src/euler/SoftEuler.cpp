// SoftEuler.cpp - checks, and the CPU path of the differentiable Euler curve
// (SoftEuler.h): voxels in rows of x shared among threads, each thread with
// its own double accumulators, added up at the end; a voxel's sigmoids
// against every threshold with an exp a group of thresholds
// (SoftThresholdGroups.h). Device-memory problems go to SoftEulerCUDA.cu.
#include "topovox/SoftEuler.h"

#include "SoftEulerBackends.h"
#include "SoftEulerVoxel.h"
#include "SoftThresholdGroups.h"

#include "../common/Parallel.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace topovox
{
namespace euler
{
void checkSoftProblem(const SoftEulerProblem& p)
{
  if (p.type != ScalarType::Float32 && p.type != ScalarType::Float64)
    throw std::invalid_argument("the differentiable Euler curve takes float32 or float64 arrays");
  if (p.batch < 1)
    throw std::invalid_argument("the batch must hold at least one image");
  for (int a = 0; a < 3; ++a)
    if (p.dims[a] < 1)
      throw std::invalid_argument("every image dimension must be at least 1");
  if (p.thresholdCount < 1)
    throw std::invalid_argument("at least one threshold is needed");
  if (p.directionCount < 1 || p.directionCount > 65535)
    throw std::invalid_argument("the directions must number 1 to 65535");
  if (!(p.lambda > 0) || !std::isfinite(p.lambda))
    throw std::invalid_argument("lambda must be a positive finite number");
  if (!std::isfinite(p.weight))
    throw std::invalid_argument("the weight must be finite");
  if (!p.images || !p.thresholds || !p.direction || !p.alpha)
    throw std::invalid_argument("the images, thresholds, direction and alpha are all needed");
}

SoftVoxelParams softParams(const SoftEulerProblem& p, const double u[3], double alpha)
{
  SoftVoxelParams P;
  P.axes = 0;
  for (int a = 0; a < 3; ++a)
  {
    P.dims[a] = p.dims[a];
    P.axes |= p.dims[a] > 1 ? 1u << a : 0u;
    P.u[a] = u[a];
    P.origin[a] = p.origin[a];
    P.spacing[a] = p.spacing[a];
  }
  P.tConstruction = p.construction == Construction::T;
  P.weight = p.weight;
  P.alpha = alpha;
  P.lambda = p.lambda;
  return P;
}

namespace
{
// Direction d's parameters.
template <typename T>
SoftVoxelParams directionParams(const SoftEulerProblem& p, int d)
{
  const T* dir = static_cast<const T*>(p.direction) + 3 * d;
  const double u[3] = { double(dir[0]), double(dir[1]), double(dir[2]) };
  return softParams(p, u, double(*static_cast<const T*>(p.alpha)));
}

// The heights of the rows (j, k) of x that a thread's voxels need, each row
// computed once when first asked for (a voxel compares its height with its
// 8 or 26 neighbours': computed per voxel, each height was computed 9 or 27
// times). The rows around row r = j + ny k are r + dy + ny dz; a thread
// walks its rows in order, so a ring of 2 ny + 3 rows (3 for one plane),
// each in the slot r mod size, always holds the ones it needs.
template <typename T>
class HeightRows
{
public:
  HeightRows(const T* image, const SoftVoxelParams& P)
    : Image(image)
    , Params(P)
    , Slots(P.dims[2] > 1 ? 2 * P.dims[1] + 3 : 3)
    , Heights(static_cast<size_t>(Slots * P.dims[0]))
    , Held(static_cast<size_t>(Slots), -1)
  {
  }
  const double* row(int64_t j, int64_t k)
  {
    const int64_t r = j + Params.dims[1] * k, slot = r % Slots;
    double* out = Heights.data() + slot * Params.dims[0];
    if (Held[static_cast<size_t>(slot)] != r)
    {
      for (int64_t i = 0; i < Params.dims[0]; ++i)
        out[i] = softHeight(Image, Params, i, j, k);
      Held[static_cast<size_t>(slot)] = r;
    }
    return out;
  }

private:
  const T* Image;
  SoftVoxelParams Params;
  int64_t Slots;
  std::vector<double> Heights;
  std::vector<int64_t> Held;
};

// Calls visit(i, j, k, h, c) for every voxel of rows [r0, r1) (x fastest),
// with its height and signed cell count.
template <typename T, typename Visit>
void walkRows(const T* image, const SoftVoxelParams& P, int64_t r0, int64_t r1, Visit visit)
{
  HeightRows<T> heights(image, P);
  const bool plane = P.dims[2] == 1;
  for (int64_t r = r0; r < r1; ++r)
  {
    const int64_t j = r % P.dims[1], k = r / P.dims[1];
    // Every neighbour of the row's voxels but the first and last is in the
    // image: they take the interior comparisons, without bounds checks
    // (which were most of a 3D voxel's count).
    const bool interiorRow = j > 0 && j + 1 < P.dims[1] && (plane || (k > 0 && k + 1 < P.dims[2]));
    // around[dz + 1][dy + 1]: the neighbouring rows' heights (null outside).
    const double* around[3][3] = {};
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        if (j + dy >= 0 && j + dy < P.dims[1] && k + dz >= 0 && k + dz < P.dims[2])
          around[dz + 1][dy + 1] = heights.row(j + dy, k + dz);
    // Neighbour b's height at offset[b] from the voxel's: the rows are
    // slots of one array (HeightRows), so an interior voxel takes the exact
    // curve's branch-free comparisons (interiorPrecedingMask, EulerCells.h).
    int64_t offset[27] = {};
    if (interiorRow)
      for (int b = 0; b < 27; ++b)
        if (const double* row = around[choiceAxis(b, 2) + 1][choiceAxis(b, 1) + 1])
          offset[b] = (row - around[1][1]) + choiceAxis(b, 0);
    for (int64_t i = 0; i < P.dims[0]; ++i)
    {
      const double h = around[1][1][i];
      int c = 0;
      if (h == h) // NaN voxels own no cells
      {
        auto heightOf = [&](int b) {
          return around[choiceAxis(b, 2) + 1][choiceAxis(b, 1) + 1][i + choiceAxis(b, 0)];
        };
        const double* at = around[1][1] + i;
        if (interiorRow && i > 0 && i + 1 < P.dims[0])
          c = plane ? signedCountOfMask<true>(interiorPrecedingMask<false>(at, offset, h, PlaneNeighbourBits{}), P)
                    : signedCountOfMask<false>(interiorPrecedingMask<false>(at, offset, h, NeighbourBits{}), P);
        else
          c = plane ? signedCountOfMask<true>(precedingByHeights<9, 18>(P, i, j, k, h, heightOf), P)
                    : signedCountOfMask<false>(precedingByHeights<0, 27>(P, i, j, k, h, heightOf), P);
      }
      visit(i, j, k, h, c);
    }
  }
}

template <typename T>
void forwardCPU(const SoftEulerProblem& p, T* chi)
{
  const T* thr = static_cast<const T*>(p.thresholds);
  const int nt = p.thresholdCount, nd = p.directionCount;
  const SoftThresholdGroups groups(std::vector<double>(thr, thr + nt), p.lambda);
  const int64_t voxels = p.dims[0] * p.dims[1] * p.dims[2], rows = p.dims[1] * p.dims[2];
  const int threads = threadCount(p.threads);
  for (int64_t item = 0; item < p.batch * nd; ++item) // images, each with its directions
  {
    const int64_t b = item / nd;
    const int d = static_cast<int>(item % nd);
    const SoftVoxelParams P = directionParams<T>(p, d);
    const T* image = static_cast<const T*>(p.images) + b * voxels;
    std::vector<std::vector<double>> partial(static_cast<size_t>(threads), std::vector<double>(nt, 0.0));
    parallelFor(rows, threads, [&](int worker, int64_t r0, int64_t r1) {
      double* acc = partial[static_cast<size_t>(worker)].data();
      std::vector<double> sigmoids(static_cast<size_t>(nt));
      double* s = sigmoids.data();
      walkRows(image, P, r0, r1, [&](int64_t, int64_t, int64_t, double h, int c) {
        if (c == 0)
          return;
        groups.sigmoids(h, s);
        for (int t = 0; t < nt; ++t)
          acc[t] += c * s[t];
      });
    });
    for (int t = 0; t < nt; ++t)
    {
      double sum = 0;
      for (const auto& acc : partial)
        sum += acc[static_cast<size_t>(t)];
      chi[item * nt + t] = static_cast<T>(sum);
    }
  }
}

template <typename T>
void backwardCPU(const SoftEulerProblem& p, const T* gradChi, T* gradImages, T* gradThresholds,
  T* gradDirection, T* gradAlpha)
{
  const T* thr = static_cast<const T*>(p.thresholds);
  const int nt = p.thresholdCount, nd = p.directionCount;
  const SoftThresholdGroups groups(std::vector<double>(thr, thr + nt), p.lambda);
  const int64_t voxels = p.dims[0] * p.dims[1] * p.dims[2], rows = p.dims[1] * p.dims[2];
  const int threads = threadCount(p.threads);
  // Per worker: dL/dt (nt), dL/du (3 per direction), dL/dalpha (1).
  const size_t slots = static_cast<size_t>(nt + 3 * nd + 1), alphaSlot = slots - 1;
  std::vector<std::vector<double>> partial(static_cast<size_t>(threads), std::vector<double>(slots, 0.0));
  for (int64_t item = 0; item < p.batch * nd; ++item) // images, each with its directions
  {
    const int64_t b = item / nd;
    const int d = static_cast<int>(item % nd);
    const SoftVoxelParams P = directionParams<T>(p, d);
    const T* image = static_cast<const T*>(p.images) + b * voxels;
    const T* g = gradChi + item * nt;
    parallelFor(rows, threads, [&](int worker, int64_t r0, int64_t r1) {
      std::vector<double>& acc = partial[static_cast<size_t>(worker)];
      std::vector<double> sigmoids(static_cast<size_t>(nt)), terms(static_cast<size_t>(nt));
      double *s = sigmoids.data(), *term = terms.data(), *accT = acc.data();
      walkRows(image, P, r0, r1, [&](int64_t i, int64_t j, int64_t k, double h, int c) {
        const int64_t at = b * voxels + i + p.dims[0] * (j + p.dims[1] * k);
        double dh = 0;
        if (c != 0)
        {
          groups.sigmoids(h, s);
          // The terms first (a loop that vectorises), then their sum into
          // dL/dh in threshold order.
          for (int t = 0; t < nt; ++t)
          {
            term[t] = double(g[t]) * c * P.lambda * s[t] * (1.0 - s[t]);
            accT[t] += term[t];
          }
          for (int t = 0; t < nt; ++t)
            dh -= term[t];
        }
        if (gradImages) // summed over the directions, the first one writing
          gradImages[at] = static_cast<T>((d ? double(gradImages[at]) : 0.0) + P.weight * dh);
        if (dh != 0)
        {
          double pos[3];
          softPosition(P, i, j, k, pos);
          for (int a = 0; a < 3; ++a)
            acc[static_cast<size_t>(nt + 3 * d + a)] += dh * P.alpha * pos[a];
          acc[alphaSlot] += dh * (P.u[0] * pos[0] + P.u[1] * pos[1] + P.u[2] * pos[2]);
        }
      });
    });
  }
  std::vector<double> sum(slots, 0.0);
  for (const auto& acc : partial)
    for (size_t k = 0; k < sum.size(); ++k)
      sum[k] += acc[k];
  if (gradThresholds)
    for (int t = 0; t < nt; ++t)
      gradThresholds[t] = static_cast<T>(sum[static_cast<size_t>(t)]);
  if (gradDirection)
    for (int a = 0; a < 3 * nd; ++a)
      gradDirection[a] = static_cast<T>(sum[static_cast<size_t>(nt + a)]);
  if (gradAlpha)
    *gradAlpha = static_cast<T>(sum[alphaSlot]);
}
} // namespace
} // namespace euler

void softEulerForward(const SoftEulerProblem& p, void* chi)
{
  euler::checkSoftProblem(p);
  if (!chi)
    throw std::invalid_argument("no output array for chi");
  if (p.memory == MemorySpace::Device)
  {
#ifdef TOPOVOX_WITH_CUDA
    euler::softForwardGPU(p, chi);
    return;
#else
    throw std::invalid_argument("the arrays are in GPU memory but this build has no CUDA");
#endif
  }
  if (p.type == ScalarType::Float32)
    euler::forwardCPU(p, static_cast<float*>(chi));
  else
    euler::forwardCPU(p, static_cast<double*>(chi));
}

void softEulerBackward(const SoftEulerProblem& p, const void* gradChi, void* gradImages, void* gradThresholds,
  void* gradDirection, void* gradAlpha)
{
  euler::checkSoftProblem(p);
  if (!gradChi)
    throw std::invalid_argument("no gradient of chi given");
  if (p.memory == MemorySpace::Device)
  {
#ifdef TOPOVOX_WITH_CUDA
    euler::softBackwardGPU(p, gradChi, gradImages, gradThresholds, gradDirection, gradAlpha);
    return;
#else
    throw std::invalid_argument("the arrays are in GPU memory but this build has no CUDA");
#endif
  }
  if (p.type == ScalarType::Float32)
    euler::backwardCPU(p, static_cast<const float*>(gradChi), static_cast<float*>(gradImages),
      static_cast<float*>(gradThresholds), static_cast<float*>(gradDirection), static_cast<float*>(gradAlpha));
  else
    euler::backwardCPU(p, static_cast<const double*>(gradChi), static_cast<double*>(gradImages),
      static_cast<double*>(gradThresholds), static_cast<double*>(gradDirection), static_cast<double*>(gradAlpha));
}
} // namespace topovox
