// EulerTransform.cpp - the Euler characteristic transform as Euler curves of
// height images: for each direction, the heights of every voxel (one pass,
// all threads) go to eulerHistogram (CPU or GPU), which counts each cell once
// at the height of its owning voxel - the max over its vertices in V, the
// min over its cubes in T - so the transform is exact by construction.
#include "topovox/EulerTransform.h"

#include "EulerTransformBackends.h"
#include "TransformHeights.h"

#include "../common/Parallel.h"
#include "topovox/Batch.h"
#include "../common/ScalarDispatch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace topovox
{
namespace
{
constexpr double kPi = 3.14159265358979323846;

Box ownedOf(const GridView& grid, const Box& requested)
{
  if (requested.hi[0] == 0 && requested.hi[1] == 0 && requested.hi[2] == 0)
    return grid.wholeBox();
  return requested;
}

void checkOptions(const GridView& grid, const EulerTransformOptions& o)
{
  const std::string why = validateGrid(grid);
  if (!why.empty())
    throw std::invalid_argument(why);
  if (grid.memory != MemorySpace::Host)
    throw std::invalid_argument("the Euler transform needs the image in host memory");
  if (!std::isfinite(o.weight) || !std::isfinite(o.alpha))
    throw std::invalid_argument("the weight and alpha must be finite numbers");
  for (int a = 0; a < 3; ++a)
    if (!std::isfinite(o.origin[a]) || !std::isfinite(o.spacing[a]))
      throw std::invalid_argument("the origin and spacing must be finite numbers");
  if (o.thresholdMode != ThresholdMode::Bins && o.thresholdMode != ThresholdMode::List)
    throw std::invalid_argument("the Euler transform takes evenly spaced bins or a list of thresholds");
}
} // namespace

static std::vector<std::array<double, 3>> spreadDirections(const EulerTransformOptions& o, int dimension)
{
  std::vector<std::array<double, 3>> out;
  if (!o.directions.empty())
  {
    for (const auto& d : o.directions)
    {
      const double n = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      if (!(n > 0) || !std::isfinite(n))
        throw std::invalid_argument("a direction is zero or not finite");
      // Unit vectors (within rounding) are kept as given, so that directions
      // this function returned come back unchanged when passed in again.
      const double scale = std::fabs(n - 1.0) <= 4e-16 ? 1.0 : n;
      out.push_back({ d[0] / scale, d[1] / scale, d[2] / scale });
    }
    return out;
  }
  const int n = o.directionCount;
  if (n < 1)
    throw std::invalid_argument("the number of directions must be at least 1 (got " + std::to_string(n) + ")");
  for (int k = 0; k < n; ++k)
  {
    std::array<double, 3> u = { 0, 0, 0 };
    if (dimension <= 1)
      u[0] = k % 2 ? -1.0 : 1.0;
    else if (dimension == 2)
    {
      const double t = 2.0 * kPi * k / n;
      u[0] = std::cos(t);
      u[1] = std::sin(t);
    }
    else
    {
      // The Fibonacci sphere: even spread, no clustering at the poles.
      const double z = 1.0 - 2.0 * (k + 0.5) / n, r = std::sqrt(std::max(0.0, 1.0 - z * z));
      const double phi = k * kPi * (3.0 - std::sqrt(5.0));
      u = { r * std::cos(phi), r * std::sin(phi), z };
    }
    out.push_back(u);
  }
  return out;
}

// In 1D and 2D the spread directions lie along the image's own axes (an
// image of 7x1x5 spans x and z): map the first components onto them.
std::vector<std::array<double, 3>> transformDirections(const EulerTransformOptions& o, const GridView& grid)
{
  std::vector<std::array<double, 3>> dirs = spreadDirections(o, grid.dimension());
  if (!o.directions.empty() || grid.dimension() >= 3)
    return dirs;
  int axes[3], n = 0;
  for (int a = 0; a < 3; ++a)
    if (grid.dims[a] > 1)
      axes[n++] = a;
  for (auto& u : dirs)
  {
    std::array<double, 3> m = { 0, 0, 0 };
    for (int k = 0; k < n; ++k)
      m[static_cast<size_t>(axes[k])] = u[static_cast<size_t>(k)];
    if (n == 0)
      m = u;
    u = m;
  }
  return dirs;
}

void transformHeightRange(const GridView& grid, const EulerTransformOptions& o, double& lo, double& hi)
{
  checkOptions(grid, o);
  const Box owned = ownedOf(grid, o.owned);
  const std::vector<std::array<double, 3>> dirs = transformDirections(o, grid);
  const int threads = threadCount(o.threads);
  // One pass over the owned voxels for every direction at once, each worker
  // with its own extremes.
  std::vector<double> los(static_cast<size_t>(threads), std::numeric_limits<double>::infinity());
  std::vector<double> his(static_cast<size_t>(threads), -std::numeric_limits<double>::infinity());
  const int64_t ny = owned.hi[1] - owned.lo[1], rows = ny * (owned.hi[2] - owned.lo[2]);
  dispatchScalarType(grid.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = static_cast<const T*>(grid.data);
    parallelFor(rows, threads, [&](int worker, int64_t r0, int64_t r1) {
      double l = los[static_cast<size_t>(worker)], h = his[static_cast<size_t>(worker)];
      for (int64_t r = r0; r < r1; ++r)
      {
        const int64_t y = owned.lo[1] + r % ny, z = owned.lo[2] + r / ny;
        for (int64_t x = owned.lo[0]; x < owned.hi[0]; ++x)
        {
          const double v = static_cast<double>(data[x * grid.strides[0] + y * grid.strides[1] + z * grid.strides[2]]);
          const double position[3] = { o.origin[0] + o.spacing[0] * static_cast<double>(x),
            o.origin[1] + o.spacing[1] * static_cast<double>(y), o.origin[2] + o.spacing[2] * static_cast<double>(z) };
          for (const auto& u : dirs)
          {
            const double height = euler::transformHeight(v, u.data(), position, o);
            if (std::isfinite(height))
            {
              l = std::min(l, height);
              h = std::max(h, height);
            }
          }
        }
      }
      los[static_cast<size_t>(worker)] = l;
      his[static_cast<size_t>(worker)] = h;
    });
  });
  lo = *std::min_element(los.begin(), los.end());
  hi = *std::max_element(his.begin(), his.end());
}

std::vector<double> transformThresholds(const EulerTransformOptions& o, double lo, double hi)
{
  EulerCurveOptions eo;
  eo.thresholdMode = o.thresholdMode;
  eo.binCount = o.binCount;
  eo.thresholds = o.thresholds;
  ValueSummary s;
  s.finiteMin = lo;
  s.finiteMax = hi;
  s.finite = lo <= hi ? 1 : 0;
  return resolveThresholds(eo, ScalarType::Float64, s, {});
}

std::vector<EulerHistogram> transformHistograms(const GridView& grid, const EulerTransformOptions& o,
  const std::vector<double>& thresholds, Device* used, std::string* warnings)
{
  checkOptions(grid, o);
  const std::vector<std::array<double, 3>> dirs = transformDirections(o, grid);
  EulerCurveOptions eo;
  eo.construction = o.construction;
  eo.filtration = Filtration::Sublevel;
  eo.thresholdMode = ThresholdMode::List;
  eo.thresholds = thresholds;
  eo.device = o.device;
  eo.threads = o.threads;
  eo.owned = o.owned;
  std::vector<EulerHistogram> out;
#ifdef TOPOVOX_WITH_CUDA
  // The GPU: every direction in one launch, the image read once.
  std::string warn;
  if (resolveDevice(o.device, &warn) == Device::GPU)
  {
    try
    {
      out = euler::transformHistogramsGPU(grid, o, dirs, thresholds, ownedOf(grid, o.owned));
      if (used)
        *used = Device::GPU;
      if (o.progress && !o.progress(1.0))
        throw Aborted{};
      return out;
    }
    catch (const std::runtime_error& e)
    {
      warn += std::string(warn.empty() ? "" : "\n") + "GPU path failed (" + e.what() + "); running on the CPU";
    }
  }
  if (warnings && !warn.empty())
    *warnings += (warnings->empty() ? "" : "\n") + warn;
  eo.device = Device::CPU;
#endif
  std::vector<double> h;
  const int threads = threadCount(o.threads);
  for (size_t k = 0; k < dirs.size(); ++k)
  {
    euler::transformHeights(grid, o, dirs[k].data(), threads, h);
    const GridView heights =
      GridView::contiguous(h.data(), ScalarType::Float64, grid.dims[0], grid.dims[1], grid.dims[2]);
    Device d = Device::CPU;
    out.push_back(eulerHistogram(heights, eo, thresholds, &d, k == 0 ? warnings : nullptr));
    if (used && k == 0)
      *used = d;
    if (o.progress && !o.progress(static_cast<double>(k + 1) / static_cast<double>(dirs.size())))
      throw Aborted{};
  }
  return out;
}

EulerTransform accumulateTransform(const std::vector<EulerHistogram>& histograms,
  const std::vector<std::array<double, 3>>& directions, int dimension)
{
  EulerTransform t;
  t.directions = directions;
  t.dimension = dimension;
  if (!histograms.empty())
    t.thresholds = histograms[0].thresholds;
  for (const EulerHistogram& h : histograms)
    t.euler.push_back(accumulateHistogram(h, dimension).euler);
  return t;
}

EulerTransform computeEulerTransform(const GridView& grid, const EulerTransformOptions& o)
{
  checkOptions(grid, o);
  double lo, hi;
  std::vector<double> thresholds;
  if (o.thresholdMode == ThresholdMode::Bins)
  {
    transformHeightRange(grid, o, lo, hi);
    thresholds = transformThresholds(o, lo, hi);
  }
  else
    thresholds = transformThresholds(o, 0, -1);
  EulerTransform t;
  std::string warnings;
  Device used = Device::CPU;
  const auto histograms = transformHistograms(grid, o, thresholds, &used, &warnings);
  t = accumulateTransform(histograms, transformDirections(o, grid), grid.dimension());
  if (histograms.empty() || thresholds.empty())
    t.thresholds = thresholds;
  t.device = used;
  t.warnings = warnings;
  return t;
}

std::vector<EulerTransform> computeEulerTransformBatch(
  const std::vector<GridView>& images, const EulerTransformOptions& o)
{
  if (images.empty())
    return {};
  if (o.owned.hi[0] != 0 || o.owned.hi[1] != 0 || o.owned.hi[2] != 0)
    throw std::invalid_argument("a batch of Euler transforms takes whole images (no owned box)");
  for (const GridView& image : images)
  {
    checkOptions(image, o);
    if (image.type != images[0].type || image.dims[0] != images[0].dims[0] || image.dims[1] != images[0].dims[1] ||
      image.dims[2] != images[0].dims[2])
      throw std::invalid_argument("the images of a batch must share one shape and type");
  }
  // Shared thresholds: the list, or bins over every image's heights.
  std::vector<double> thresholds;
  if (o.thresholdMode == ThresholdMode::Bins)
  {
    double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
    for (const GridView& image : images)
    {
      double l = 0, h = -1;
      transformHeightRange(image, o, l, h);
      if (l <= h)
      {
        lo = std::min(lo, l);
        hi = std::max(hi, h);
      }
    }
    thresholds = transformThresholds(o, lo, hi);
  }
  else
    thresholds = transformThresholds(o, 0, -1);
  const std::vector<std::array<double, 3>> dirs = transformDirections(o, images[0]);
  const int dimension = images[0].dimension();
  std::vector<EulerTransform> out(images.size());
  auto finish = [&](EulerTransform& t, const std::vector<EulerHistogram>& histograms, Device used) {
    t = accumulateTransform(histograms, dirs, dimension);
    if (histograms.empty() || thresholds.empty())
      t.thresholds = thresholds;
    t.device = used;
  };
  std::string warn;
#ifdef TOPOVOX_WITH_CUDA
  if (!thresholds.empty() && resolveDevice(o.device, &warn) == Device::GPU)
  {
    try
    {
      const auto histograms = euler::transformHistogramsBatchGPU(images, o, dirs, thresholds);
      for (size_t k = 0; k < images.size(); ++k)
      {
        finish(out[k], histograms[k], Device::GPU);
        out[k].warnings = warn;
      }
      if (o.progress && !o.progress(1.0))
        throw Aborted{};
      return out;
    }
    catch (const std::runtime_error& e)
    {
      warn += std::string(warn.empty() ? "" : "\n") + "GPU path failed (" + e.what() + "); running on the CPU";
    }
  }
#endif
  EulerTransformOptions one = o;
  one.device = Device::CPU;
  one.progress = nullptr;
  forEachImage(static_cast<int64_t>(images.size()), o.threads, Device::CPU, [&](int64_t k, int threads) {
    EulerTransformOptions mine = one;
    mine.threads = threads;
    finish(out[static_cast<size_t>(k)], transformHistograms(images[static_cast<size_t>(k)], mine, thresholds),
      Device::CPU);
    out[static_cast<size_t>(k)].warnings = warn;
    return true;
  });
  if (o.progress && !o.progress(1.0))
    throw Aborted{};
  return out;
}

} // namespace topovox
