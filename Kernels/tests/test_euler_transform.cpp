// test_euler_transform.cpp - the Euler characteristic transform against a
// brute force of its definition: every cell of the cubical complex, its
// height the max of w X + alpha <u, p> over its vertices (V) or the min over
// its cubes (T), NaN and out-of-shape voxels absent, counted at each
// threshold. Random images with ties, NaN, shapes, 1D to 3D, V and T, spread
// and given directions, spacing and origin, owned boxes (MPI pieces), and
// the link to the Euler curve (w = 1, alpha = 0).
//
//   topovox_transform_tests [--device cpu|gpu]   (gpu: exit 77 without one)
#include "topovox/EulerTransform.h"

#include "KernelCheck.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace topovox;

namespace
{
using kernel_check::expect;

const double kNan = std::numeric_limits<double>::quiet_NaN();

// chi(t) for every threshold, cell by cell over the doubled grid, counting
// the cells whose owning voxel lies in `owned` only when given.
std::vector<int64_t> bruteForce(const std::vector<double>& x, const int64_t n[3], const EulerTransformOptions& o,
  const std::array<double, 3>& u, const std::vector<double>& thresholds, const Box* owned)
{
  const bool tc = o.construction == Construction::T;
  auto height = [&](int64_t i, int64_t j, int64_t k) {
    const double v = x[static_cast<size_t>(i + n[0] * (j + n[1] * k))];
    if (std::isnan(v) || (!std::isnan(o.shapeLevel) && !(v >= o.shapeLevel)))
      return kNan;
    const double p[3] = { o.origin[0] + o.spacing[0] * i, o.origin[1] + o.spacing[1] * j, o.origin[2] + o.spacing[2] * k };
    return (o.weight != 0 ? o.weight * v : 0.0) + o.alpha * (u[0] * p[0] + u[1] * p[1] + u[2] * p[2]);
  };
  int64_t cd[3];
  for (int a = 0; a < 3; ++a)
    cd[a] = n[a] == 1 ? 1 : (tc ? 2 * n[a] + 1 : 2 * n[a] - 1);
  std::vector<int64_t> chi(thresholds.size(), 0);
  for (int64_t c2 = 0; c2 < cd[2]; ++c2)
    for (int64_t c1 = 0; c1 < cd[1]; ++c1)
      for (int64_t c0 = 0; c0 < cd[0]; ++c0)
      {
        const int64_t c[3] = { c0, c1, c2 };
        // The voxels the cell touches per axis.
        int64_t lo[3], hi[3];
        int dim = 0;
        for (int a = 0; a < 3; ++a)
        {
          if (n[a] == 1)
          {
            lo[a] = hi[a] = 0;
            continue;
          }
          if (!tc)
          {
            lo[a] = c[a] / 2;
            hi[a] = (c[a] + 1) / 2;
            dim += c[a] & 1;
          }
          else if (c[a] & 1)
          {
            lo[a] = hi[a] = (c[a] - 1) / 2;
            ++dim;
          }
          else
          {
            lo[a] = std::max<int64_t>(0, c[a] / 2 - 1);
            hi[a] = std::min<int64_t>(n[a] - 1, c[a] / 2);
          }
        }
        // V: max over vertices, absent if one is NaN; T: min over non-NaN
        // cubes, absent if all are. The owner: the voxel attaining it, the
        // last (V) or first (T) in index order among equals.
        double value = tc ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
        bool absent = false, any = false;
        int64_t ov[3] = { 0, 0, 0 };
        for (int64_t k = lo[2]; k <= hi[2]; ++k)
          for (int64_t j = lo[1]; j <= hi[1]; ++j)
            for (int64_t i = lo[0]; i <= hi[0]; ++i)
            {
              const double h = height(i, j, k);
              if (std::isnan(h))
              {
                absent = absent || !tc;
                continue;
              }
              if (!any || (tc ? h < value : h >= value))
              {
                value = h;
                ov[0] = i, ov[1] = j, ov[2] = k;
              }
              any = true;
            }
        if (absent || !any)
          continue;
        if (owned)
        {
          bool in = true;
          for (int a = 0; a < 3; ++a)
            in = in && ov[a] >= owned->lo[a] && ov[a] < owned->hi[a];
          if (!in)
            continue;
        }
        for (size_t t = 0; t < thresholds.size(); ++t)
          if (value <= thresholds[t])
            chi[t] += dim % 2 ? -1 : 1;
      }
  return chi;
}

void check(const std::string& name, const std::vector<double>& x, const int64_t n[3], EulerTransformOptions o)
{
  const GridView g = GridView::contiguous(x.data(), ScalarType::Float64, n[0], n[1], n[2]);
  for (Construction c : { Construction::V, Construction::T })
  {
    o.construction = c;
    const std::string what = name + " " + constructionName(c);
    EulerTransform t;
    try
    {
      t = computeEulerTransform(g, o);
    }
    catch (const std::exception& e)
    {
      expect(false, what + ": threw " + e.what());
      continue;
    }
    bool same = t.euler.size() == t.directions.size();
    for (size_t d = 0; d < t.directions.size() && same; ++d)
    {
      const auto want = bruteForce(x, n, o, t.directions[d], t.thresholds, nullptr);
      same = want == t.euler[d];
      if (!same)
        for (size_t k = 0; k < want.size(); ++k)
          if (want[k] != t.euler[d][k])
          {
            std::printf("  %s direction %zu threshold %g: brute force %lld, transform %lld\n", what.c_str(), d,
              t.thresholds[k], static_cast<long long>(want[k]), static_cast<long long>(t.euler[d][k]));
            break;
          }
    }
    expect(same && !t.thresholds.empty(), what + ": equals the brute force");
    // Owned halves (as two MPI ranks count them) add up to the whole.
    int axis = 0;
    for (int a = 0; a < 3; ++a)
      if (n[a] > 1)
        axis = a;
    Box first = g.wholeBox(), second = g.wholeBox();
    first.hi[axis] = second.lo[axis] = n[axis] / 2;
    EulerTransformOptions po = o;
    po.thresholdMode = ThresholdMode::List;
    po.thresholds = t.thresholds;
    bool sums = true;
    for (const Box& b : { first, second })
    {
      po.owned = b;
      const auto h = transformHistograms(g, po, t.thresholds);
      for (size_t d = 0; d < h.size() && sums; ++d)
      {
        const auto part = accumulateTransform({ h[d] }, { t.directions[d] }, g.dimension()).euler[0];
        sums = part == bruteForce(x, n, o, t.directions[d], t.thresholds, &b);
      }
    }
    expect(sums, what + ": owned boxes count as the brute force does");
  }
}
// A batch of `count` images of shape n (NaN sprinkled in), each transform
// against the brute force at the batch's thresholds.
void checkBatch(const std::string& name, std::mt19937_64& rng, const int64_t n[3], size_t count,
  EulerTransformOptions o, Device device, bool transposedViews = false)
{
  const size_t voxels = static_cast<size_t>(n[0] * n[1] * n[2]);
  std::vector<std::vector<double>> data(count, std::vector<double>(voxels));
  std::vector<std::vector<double>> stored(count); // what the views point at
  std::vector<GridView> views;
  for (size_t k = 0; k < count; ++k)
  {
    for (size_t i = 0; i < voxels; ++i)
      data[k][i] = (rng() % 9 == 0) ? kNan : static_cast<double>(rng() % (3 + k % 4));
    if (!transposedViews)
    {
      views.push_back(GridView::contiguous(data[k].data(), ScalarType::Float64, n[0], n[1], n[2]));
      continue;
    }
    // The same image stored z fastest, seen through strides.
    stored[k].resize(voxels);
    for (int64_t z = 0; z < n[2]; ++z)
      for (int64_t y = 0; y < n[1]; ++y)
        for (int64_t x = 0; x < n[0]; ++x)
          stored[k][static_cast<size_t>(z + n[2] * (y + n[1] * x))] =
            data[k][static_cast<size_t>(x + n[0] * (y + n[1] * z))];
    GridView v = GridView::contiguous(stored[k].data(), ScalarType::Float64, n[0], n[1], n[2]);
    v.strides[0] = n[2] * n[1];
    v.strides[1] = n[2];
    v.strides[2] = 1;
    views.push_back(v);
  }
  for (Construction c : { Construction::V, Construction::T })
  {
    o.construction = c;
    o.device = device;
    const std::string what = name + " " + constructionName(c);
    std::vector<EulerTransform> batch;
    try
    {
      batch = computeEulerTransformBatch(views, o);
    }
    catch (const std::exception& e)
    {
      expect(false, what + ": threw " + e.what());
      continue;
    }
    bool same = batch.size() == count, shared = true, onDevice = true;
    for (size_t k = 0; k < batch.size() && same; ++k)
    {
      shared = shared && batch[k].thresholds == batch[0].thresholds && !batch[0].thresholds.empty();
      onDevice = onDevice && batch[k].device == device;
      for (size_t d = 0; d < batch[k].directions.size() && same; ++d)
        same = batch[k].euler[d] == bruteForce(data[k], n, o, batch[k].directions[d], batch[k].thresholds, nullptr);
    }
    expect(same, what + ": every image's transform equals the brute force");
    expect(shared, what + ": one set of thresholds for the batch");
    expect(onDevice, what + ": ran on the device asked for");
  }
}
} // namespace

int main(int argc, char** argv)
{
  bool gpu = false;
  if (!kernel_check::deviceFromArguments(argc, argv, gpu))
    return 77;
  const Device device = gpu ? Device::GPU : Device::CPU;
  std::mt19937_64 rng(11);
  const int64_t shapes[][3] = { { 12, 1, 1 }, { 7, 6, 1 }, { 1, 5, 6 }, { 5, 4, 6 }, { 2, 3, 2 } };
  for (const auto& s : shapes)
  {
    const size_t count = static_cast<size_t>(s[0] * s[1] * s[2]);
    std::uniform_int_distribution<int> level(0, 4);
    std::vector<double> x(count);
    for (auto& v : x)
      v = level(rng);
    const std::string shape = std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
    EulerTransformOptions o;
    o.device = device;
    o.directionCount = 6;
    o.binCount = 9;
    check("shape of the whole image " + shape, x, s, o);
    o.shapeLevel = 2; // the classic transform of a shape: voxels X >= 2
    o.spacing[0] = 0.5;
    o.spacing[2] = 2;
    o.origin[1] = -3;
    check("shape X >= 2, spacing and origin " + shape, x, s, o);
    o.shapeLevel = kNan;
    o.weight = 1.5;
    o.alpha = 0.25;
    o.directions = { { 1, 2, 0 }, { 0, 0, -1 }, { 1, 1, 1 } };
    check("weighted image, given directions " + shape, x, s, o);
    o.directions.clear();
    for (size_t k = 0; k < count; k += 5)
      x[k] = kNan;
    o.thresholdMode = ThresholdMode::List;
    o.thresholds = { -20, -3, -1.5, 0, 0.5, 2, 3.25, 7, 40 };
    check("with NaN, listed thresholds " + shape, x, s, o);
  }
  // Batches: bins over the whole batch, or a list; 2D and 3D; views with
  // strides; on the GPU more images than one launch's 65535 rows of blocks.
  {
    EulerTransformOptions o;
    o.directionCount = 5;
    o.binCount = 7;
    const int64_t square[3] = { 6, 5, 1 }, cube[3] = { 4, 3, 5 };
    checkBatch("batch of 9 2D images, bins over the batch", rng, square, 9, o, device);
    o.weight = 0.5;
    checkBatch("batch of 4 3D images through strided views", rng, cube, 4, o, device, true);
    o.thresholdMode = ThresholdMode::List;
    o.thresholds = { -4, -1, 0, 0.5, 2, 6 };
    checkBatch("batch of 3 3D images, listed thresholds", rng, cube, 3, o, device);
    if (gpu)
    {
      const int64_t tiny[3] = { 3, 2, 1 };
      o.directionCount = 2;
      checkBatch("batch of 65600 tiny images", rng, tiny, 65600, o, device);
    }
    bool threw = false;
    try
    {
      std::vector<double> a(30), b(24);
      computeEulerTransformBatch({ GridView::contiguous(a.data(), ScalarType::Float64, 6, 5, 1),
                                   GridView::contiguous(b.data(), ScalarType::Float64, 6, 4, 1) },
        o);
    }
    catch (const std::invalid_argument&)
    {
      threw = true;
    }
    expect(threw, "a batch of images of different shapes is refused");
    expect(computeEulerTransformBatch({}, o).empty(), "an empty batch gives no transforms");
  }
  // w = 1, alpha = 0: each direction's curve is the image's Euler curve.
  std::vector<double> x(6 * 5 * 4);
  for (auto& v : x)
    v = static_cast<double>(rng() % 7);
  const GridView g = GridView::contiguous(x.data(), ScalarType::Float64, 6, 5, 4);
  EulerTransformOptions o;
  o.device = device;
  o.weight = 1;
  o.alpha = 0;
  o.directionCount = 3;
  o.thresholdMode = ThresholdMode::List;
  o.thresholds = { 0, 1, 2, 3, 4, 5, 6 };
  EulerCurveOptions eo;
  eo.device = device;
  eo.thresholdMode = ThresholdMode::List;
  eo.thresholds = o.thresholds;
  const EulerCurve curve = computeEulerCurve(g, eo);
  const EulerTransform t = computeEulerTransform(g, o);
  for (const auto& e : t.euler)
    expect(e == curve.euler, "w = 1, alpha = 0: the Euler curve");
  expect(t.device == device, "ran on the device asked for");
  // Bad options are refused with a reason.
  bool threw = false;
  try
  {
    o.directions = { { 0, 0, 0 } };
    computeEulerTransform(g, o);
  }
  catch (const std::invalid_argument&)
  {
    threw = true;
  }
  expect(threw, "a zero direction is refused");
  threw = false;
  try
  {
    o.directions.clear();
    o.directionCount = 0;
    computeEulerTransform(g, o);
  }
  catch (const std::invalid_argument&)
  {
    threw = true;
  }
  expect(threw, "zero directions are refused");
  return kernel_check::finish();
}
