// DistanceTransform.cpp - exact distance transforms (DistanceTransform.h):
// axis by axis, each line of voxels on its own, every line carrying for each
// voxel the nearest background voxel found so far.
#include "topovox/DistanceTransform.h"

#include "topovox/Device.h"

#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

namespace topovox
{
namespace
{
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<uint8_t> foregroundOf(const GridView& g)
{
  const std::string why = validateGrid(g);
  if (!why.empty())
    throw std::invalid_argument(why);
  if (g.memory != MemorySpace::Host)
    throw std::invalid_argument("distance transforms need the image in host memory");
  std::vector<uint8_t> f(static_cast<size_t>(g.voxelCount()));
  dispatchScalarType(g.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* d = static_cast<const T*>(g.data);
    size_t k = 0;
    for (int64_t z = 0; z < g.dims[2]; ++z)
      for (int64_t y = 0; y < g.dims[1]; ++y)
        for (int64_t x = 0; x < g.dims[0]; ++x)
          f[k++] = d[x * g.strides[0] + y * g.strides[1] + z * g.strides[2]] != T(0);
  });
  return f;
}

int threadsOf(int t)
{
  return t > 0 ? t : defaultThreadCount();
}

// Lines along axis a: calls body(first voxel index, stride) for each, on the threads.
template <typename Body>
void forLines(const int64_t dims[3], int a, int threads, Body body)
{
  const int64_t stride[3] = { 1, dims[0], dims[0] * dims[1] };
  const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
  parallelFor(dims[b] * dims[c], threads, [&](int, int64_t l0, int64_t l1) {
    for (int64_t l = l0; l < l1; ++l)
      body((l % dims[b]) * stride[b] + (l / dims[b]) * stride[c], stride[a]);
  });
}

// Every voxel its own nearest voxel to start with (x, y, z per axis);
// returns whether there is any background.
bool startFeatures(const std::vector<uint8_t>& fg, const int64_t n[3], std::vector<int32_t> feature[3])
{
  const size_t count = fg.size();
  for (int a = 0; a < 3; ++a)
    feature[a].resize(count);
  bool anyBackground = false;
  for (size_t k = 0; k < count; ++k)
  {
    anyBackground = anyBackground || !fg[k];
    const int64_t i = static_cast<int64_t>(k);
    feature[0][k] = static_cast<int32_t>(i % n[0]);
    feature[1][k] = static_cast<int32_t>((i / n[0]) % n[1]);
    feature[2][k] = static_cast<int32_t>(i / (n[0] * n[1]));
  }
  return anyBackground;
}

// The numpy-first axis of the image (the last axis with more than one
// sample, x first), where scipy puts its -1 for an image without background.
int numpyFirstAxis(const int64_t dims[3])
{
  for (int a = 2; a > 0; --a)
    if (dims[a] > 1)
      return a;
  return 0;
}
} // namespace

DistanceTransform distanceTransformEdt(const GridView& image, const double sampling[3], bool withIndices, int threads)
{
  const std::vector<uint8_t> fg = foregroundOf(image);
  const int64_t* n = image.dims;
  const size_t count = fg.size();
  threads = threadsOf(threads);
  for (int a = 0; a < 3; ++a)
    if (!(sampling[a] > 0) || !std::isfinite(sampling[a]))
      throw std::invalid_argument("the sampling must be positive and finite");
  // Squared distance so far and the nearest background voxel (x, y, z).
  std::vector<double> g(count);
  std::vector<int32_t> feature[3];
  const bool anyBackground = startFeatures(fg, n, feature);
  for (size_t k = 0; k < count; ++k)
    g[k] = fg[k] ? kInf : 0.0;
  DistanceTransform out;
  if (!anyBackground)
  {
    const int first = numpyFirstAxis(n);
    for (int a = 0; a < 3; ++a)
      std::fill(feature[a].begin(), feature[a].end(), a == first ? -1 : 0);
  }
  else
    for (int a = 0; a < 3; ++a)
    {
      if (n[a] == 1)
        continue;
      const double s2 = sampling[a] * sampling[a];
      forLines(n, a, threads, [&](int64_t first, int64_t step) {
        const int64_t len = n[a];
        // Lower envelope of the parabolas s2 (p - q)^2 + g(q) over the
        // finite g (Felzenszwalb and Huttenlocher).
        std::vector<int64_t> v;
        std::vector<double> z;
        std::vector<double> f(static_cast<size_t>(len));
        for (int64_t q = 0; q < len; ++q)
          f[static_cast<size_t>(q)] = g[static_cast<size_t>(first + q * step)];
        for (int64_t q = 0; q < len; ++q)
        {
          if (f[static_cast<size_t>(q)] == kInf)
            continue;
          while (!v.empty())
          {
            const int64_t r = v.back();
            const double s = ((f[static_cast<size_t>(q)] + s2 * q * q) - (f[static_cast<size_t>(r)] + s2 * r * r)) /
              (2.0 * s2 * static_cast<double>(q - r));
            if (s <= z.back())
            {
              v.pop_back();
              z.pop_back();
            }
            else
            {
              z.push_back(s);
              break;
            }
          }
          if (v.empty())
            z.push_back(-kInf);
          v.push_back(q);
        }
        if (v.empty())
          return; // nothing finite on this line yet
        std::vector<int32_t> from(static_cast<size_t>(len));
        size_t j = 0;
        for (int64_t p = 0; p < len; ++p)
        {
          while (j + 1 < v.size() && z[j + 1] < static_cast<double>(p))
            ++j;
          from[static_cast<size_t>(p)] = static_cast<int32_t>(v[j]);
        }
        std::vector<int32_t> fx(static_cast<size_t>(len)), fy(fx.size()), fz(fx.size());
        for (int64_t q = 0; q < len; ++q)
        {
          const size_t at = static_cast<size_t>(first + q * step);
          fx[static_cast<size_t>(q)] = feature[0][at];
          fy[static_cast<size_t>(q)] = feature[1][at];
          fz[static_cast<size_t>(q)] = feature[2][at];
        }
        for (int64_t p = 0; p < len; ++p)
        {
          const int64_t q = from[static_cast<size_t>(p)];
          const size_t at = static_cast<size_t>(first + p * step);
          const double d = static_cast<double>(p - q);
          g[at] = f[static_cast<size_t>(q)] + s2 * d * d;
          feature[0][at] = fx[static_cast<size_t>(q)];
          feature[1][at] = fy[static_cast<size_t>(q)];
          feature[2][at] = fz[static_cast<size_t>(q)];
        }
      });
    }
  // Distances from the indices, as scipy computes them (numpy's axes z, y, x).
  out.distances.resize(count);
  parallelFor(static_cast<int64_t>(count), threads, [&](int, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
    {
      const int64_t c[3] = { k % n[0], (k / n[0]) % n[1], k / (n[0] * n[1]) };
      double sum = 0;
      bool firstTerm = true;
      for (int a = 2; a >= 0; --a)
      {
        const double d = static_cast<double>(feature[a][static_cast<size_t>(k)] - c[a]) * sampling[a];
        sum = firstTerm ? d * d : sum + d * d;
        firstTerm = false;
      }
      out.distances[static_cast<size_t>(k)] = std::sqrt(sum);
    }
  });
  if (withIndices)
    for (int a = 0; a < 3; ++a)
      out.indices[a] = std::move(feature[a]);
  return out;
}

DistanceTransform distanceTransformCdt(const GridView& image, DistanceMetric metric, bool withIndices, int threads)
{
  if (metric == DistanceMetric::Euclidean)
    throw std::invalid_argument("the chamfer transform takes the taxicab or chessboard metric");
  const std::vector<uint8_t> fg = foregroundOf(image);
  const int64_t* n = image.dims;
  const size_t count = fg.size();
  threads = threadsOf(threads);
  constexpr int64_t kFar = std::numeric_limits<int64_t>::max() / 4;
  // Per axis, the distance so far; taxicab sums the axes' distances,
  // chessboard takes their maximum: both separable, exactly.
  std::vector<int64_t> d(count);
  std::vector<int32_t> feature[3];
  const bool anyBackground = startFeatures(fg, n, feature);
  for (size_t k = 0; k < count; ++k)
    d[k] = fg[k] ? kFar : 0;
  DistanceTransform out;
  out.integerDistances.assign(count, -1);
  if (!anyBackground)
  {
    if (withIndices)
      for (int a = 0; a < 3; ++a)
        out.indices[a].assign(count, -1);
    return out;
  }
  // Two raster passes of the chamfer with unit steps to the 3**rank
  // neighbours (chessboard) or the face neighbours (taxicab): exact for
  // these two metrics (Rosenfeld and Pfaltz), as scipy's chamfer is. The
  // forward pass looks at the neighbours before the voxel in raster order,
  // the backward pass at those after it.
  const bool taxicab = metric == DistanceMetric::Taxicab;
  std::vector<std::array<int64_t, 3>> before;
  for (int64_t dz = -1; dz <= 1; ++dz)
    for (int64_t dy = -1; dy <= 1; ++dy)
      for (int64_t dx = -1; dx <= 1; ++dx)
      {
        if ((dx && n[0] == 1) || (dy && n[1] == 1) || (dz && n[2] == 1))
          continue;
        const int64_t steps = std::llabs(dx) + std::llabs(dy) + std::llabs(dz);
        const bool earlier = dz < 0 || (dz == 0 && (dy < 0 || (dy == 0 && dx < 0)));
        if (earlier && (!taxicab || steps == 1))
          before.push_back({ dx, dy, dz });
      }
  auto relax = [&](int64_t x, int64_t y, int64_t z, int sign) {
    const size_t at = static_cast<size_t>(x + n[0] * (y + n[1] * z));
    for (const auto& o : before)
    {
      const int64_t q[3] = { x + sign * o[0], y + sign * o[1], z + sign * o[2] };
      if (q[0] < 0 || q[1] < 0 || q[2] < 0 || q[0] >= n[0] || q[1] >= n[1] || q[2] >= n[2])
        continue;
      const size_t from = static_cast<size_t>(q[0] + n[0] * (q[1] + n[1] * q[2]));
      if (d[from] + 1 < d[at])
      {
        d[at] = d[from] + 1;
        for (int a = 0; a < 3; ++a)
          feature[a][at] = feature[a][from];
      }
    }
  };
  for (int64_t z = 0; z < n[2]; ++z)
    for (int64_t y = 0; y < n[1]; ++y)
      for (int64_t x = 0; x < n[0]; ++x)
        relax(x, y, z, 1);
  for (int64_t z = n[2] - 1; z >= 0; --z)
    for (int64_t y = n[1] - 1; y >= 0; --y)
      for (int64_t x = n[0] - 1; x >= 0; --x)
        relax(x, y, z, -1);
  for (size_t k = 0; k < count; ++k)
    out.integerDistances[k] = static_cast<int32_t>(d[k]);
  if (withIndices)
    for (int a = 0; a < 3; ++a)
      out.indices[a] = std::move(feature[a]);
  return out;
}

DistanceTransform distanceTransformBf(const GridView& image, DistanceMetric metric, const double sampling[3],
  bool withIndices, int threads)
{
  const std::vector<uint8_t> fg = foregroundOf(image);
  const int64_t* n = image.dims;
  const size_t count = fg.size();
  std::vector<int64_t> background;
  for (size_t k = 0; k < count; ++k)
    if (!fg[k])
      background.push_back(static_cast<int64_t>(k));
  DistanceTransform out;
  const bool euclidean = metric == DistanceMetric::Euclidean;
  if (euclidean)
    out.distances.assign(count, std::sqrt(DBL_MAX));
  else
    out.bfDistances.assign(count, std::numeric_limits<uint32_t>::max());
  if (withIndices)
    for (int a = 0; a < 3; ++a)
      out.indices[a].assign(count, -1);
  parallelFor(static_cast<int64_t>(count), threadsOf(threads), [&](int, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
    {
      const int64_t c[3] = { k % n[0], (k / n[0]) % n[1], k / (n[0] * n[1]) };
      double bestE = kInf;
      int64_t bestI = -1, bestK = -1;
      for (int64_t b : background)
      {
        const int64_t q[3] = { b % n[0], (b / n[0]) % n[1], b / (n[0] * n[1]) };
        if (euclidean)
        {
          double sum = 0;
          for (int a = 2; a >= 0; --a)
          {
            const double dd = static_cast<double>(q[a] - c[a]) * sampling[a];
            sum += dd * dd;
          }
          if (sum < bestE)
            bestE = sum, bestK = b;
        }
        else
        {
          int64_t v = 0;
          for (int a = 0; a < 3; ++a)
          {
            const int64_t dd = std::llabs(q[a] - c[a]);
            v = metric == DistanceMetric::Taxicab ? v + dd : std::max(v, dd);
          }
          if (bestI < 0 || v < bestI)
            bestI = v, bestK = b;
        }
      }
      if (bestK < 0)
        continue;
      if (euclidean)
        out.distances[static_cast<size_t>(k)] = std::sqrt(bestE);
      else
        out.bfDistances[static_cast<size_t>(k)] = static_cast<uint32_t>(bestI);
      if (withIndices)
      {
        out.indices[0][static_cast<size_t>(k)] = static_cast<int32_t>(bestK % n[0]);
        out.indices[1][static_cast<size_t>(k)] = static_cast<int32_t>((bestK / n[0]) % n[1]);
        out.indices[2][static_cast<size_t>(k)] = static_cast<int32_t>(bestK / (n[0] * n[1]));
      }
    }
  });
  return out;
}
} // namespace topovox
