// DistanceTransform.cpp - exact distance transforms (DistanceTransform.h):
// axis by axis, each line of voxels on its own, every line carrying for each
// voxel the nearest background voxel found so far; or, for the Euclidean
// distances alone with unit sampling, the exact integer squared distance
// (squaredEdtCPU, EdtSquaredLine.h).
#include "topovox/DistanceTransform.h"

#include "topovox/Device.h"

#include "DistanceBackends.h"
#include "EdtLine.h"
#include "EdtSquaredLine.h"

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

std::vector<uint8_t> foregroundOf(const GridView& g, int threads)
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
    parallelFor(g.dims[1] * g.dims[2], threads, [&](int, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
      {
        const T* row = d + (r % g.dims[1]) * g.strides[1] + (r / g.dims[1]) * g.strides[2];
        uint8_t* to = f.data() + r * g.dims[0];
        for (int64_t x = 0; x < g.dims[0]; ++x)
          to[x] = row[x * g.strides[0]] != T(0);
      }
    });
  });
  return f;
}

// Lines along axis a: calls body(first voxel index, stride) for each, on the
// threads. Lines cost what their windows or envelopes cost (a voxel far from
// the background takes many positions), and the costly ones cluster, so the
// threads take them in small ranges from a shared counter.
template <typename Body>
void forLines(const int64_t dims[3], int a, int threads, Body body)
{
  const int64_t stride[3] = { 1, dims[0], dims[0] * dims[1] };
  const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
  parallelForDynamic(dims[b] * dims[c], threads, 64, [&](int, int64_t l0, int64_t l1) {
    for (int64_t l = l0; l < l1; ++l)
      body((l % dims[b]) * stride[b] + (l / dims[b]) * stride[c], stride[a]);
  });
}

// A group of lines along one axis that are neighbours in x: line j starts
// at first + j, position i of a line lies `step` further per i. Gathered,
// the group's values sit side by side (index i * lines + j), so that along
// y and z each access to the image reads whole cache lines.
struct LineGroup
{
  int64_t first, step, len, lines;
  size_t at(int64_t i, int64_t j) const { return static_cast<size_t>(first + j + i * step); }
  size_t size() const { return static_cast<size_t>(len * lines); }
  template <typename T, typename Image>
  void gather(const Image& from, std::vector<T>& to) const
  {
    to.resize(size());
    for (int64_t i = 0; i < len; ++i)
      for (int64_t j = 0; j < lines; ++j)
        to[static_cast<size_t>(i * lines + j)] = from[at(i, j)];
  }
  template <typename T, typename Image>
  void scatter(const std::vector<T>& from, Image& to) const
  {
    for (int64_t i = 0; i < len; ++i)
      for (int64_t j = 0; j < lines; ++j)
        to[at(i, j)] = from[static_cast<size_t>(i * lines + j)];
  }
};

// The lines along axis a in groups of up to kLineGroup neighbours in x (one
// line at a time along x itself), body(group) for each, on the threads.
constexpr int64_t kLineGroup = 16;
template <typename Body>
void forLineGroups(const int64_t dims[3], int a, int threads, Body body)
{
  if (a == 0)
  {
    forLines(dims, a, threads, [&](int64_t first, int64_t step) { body(LineGroup{ first, step, dims[0], 1 }); });
    return;
  }
  const int64_t stride[3] = { 1, dims[0], dims[0] * dims[1] };
  const int c = a == 2 ? 1 : 2;
  const int64_t groups = (dims[0] + kLineGroup - 1) / kLineGroup;
  parallelForDynamic(groups * dims[c], threads, 4, [&](int, int64_t l0, int64_t l1) {
    for (int64_t l = l0; l < l1; ++l)
    {
      const int64_t x = (l % groups) * kLineGroup;
      body(LineGroup{ x + (l / groups) * stride[c], stride[a], dims[a], std::min(kLineGroup, dims[0] - x) });
    }
  });
}

// The exact Euclidean distances when squaredPathApplies and no indices are
// asked for (EdtSquaredLine.h): one uint32 a voxel, the squared distance so
// far; along y and z the lines in groups of neighbours (LineGroup), each
// classified from its least and greatest values and count of finite values
// and answered as on the GPU. The image has a background voxel.
TransformArray<double> squaredEdtCPU(const std::vector<uint8_t>& fg, const int64_t n[3], int threads)
{
  using distance::kNoBackground;
  const size_t count = fg.size();
  UninitializedVector<uint32_t> g(count);
  // Along x: (p - q)^2 to the row's nearest background voxel q (the left
  // one first, kept as a position: -1 reads as kNoBackground).
  parallelFor(n[1] * n[2], threads, [&](int, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
    {
      const uint8_t* f = fg.data() + r * n[0];
      uint32_t* to = g.data() + r * n[0];
      int64_t last = -1;
      for (int64_t p = 0; p < n[0]; ++p)
      {
        if (!f[p])
          last = p;
        to[p] = static_cast<uint32_t>(last);
      }
      int64_t next = -1;
      for (int64_t p = n[0] - 1; p >= 0; --p)
      {
        if (!f[p])
          next = p;
        const int64_t q = distance::nearestOf(p, to[p] == kNoBackground ? -1 : int64_t(to[p]), next);
        to[p] = q < 0 ? kNoBackground : static_cast<uint32_t>((p - q) * (p - q));
      }
    }
  });
  TransformArray<double> distances(count); // written in full by the last pass
  const int lastAxis = n[2] > 1 ? 2 : 1;
  for (int a = 1; a <= lastAxis; ++a)
  {
    if (n[a] == 1)
      continue;
    const bool crowdRule = distance::crowdRuleHolds(static_cast<int64_t>(count) / n[a]);
    forLineGroups(n, a, threads, [&](const LineGroup& group) {
      thread_local std::vector<uint32_t> v, out;
      thread_local std::vector<double> z;
      thread_local std::vector<int32_t> stack;
      const int64_t len = group.len, lines = group.lines;
      group.gather(g, v);
      out.resize(v.size());
      for (int64_t j = 0; j < lines; ++j)
      {
        auto value = [&](int64_t q) { return v[static_cast<size_t>(q * lines + j)]; };
        distance::LineTally tally;
        for (int64_t i = 0; i < len; ++i)
          tally.add(value(i));
        const uint32_t lo = tally.lo, hi = tally.hi;
        const unsigned finite = tally.finite;
        const bool empty = finite == 0, sparse = distance::sparseLine(hi, finite),
                   windows = distance::windowsLine(lo, hi);
        int seeds[distance::kSparseSeeds];
        unsigned crowd = 0, filled = 0;
        for (int64_t i = 0; sparse && i < len; ++i)
          if (value(i) != kNoBackground)
            seeds[filled++] = static_cast<int>(i);
        for (int64_t i = 0; !sparse && crowdRule && windows && i < len; ++i)
          crowd += value(i) - lo >= distance::kSquaredCrowdAt ? 1 : 0;
        if (!distance::wideLine(empty, sparse, windows, crowd, len))
        {
          for (int p = 0; p < static_cast<int>(len); ++p)
            out[static_cast<size_t>(p * lines + j)] = distance::squaredAnswer(
              p, static_cast<int>(len), lo, empty, sparse, finite, value, [&](unsigned k) { return seeds[k]; });
          continue;
        }
        struct In
        {
          const uint32_t* v;
          int64_t stride;
          double g(int64_t q) const { return distance::envelopeValue(v[q * stride]); }
        };
        struct Out
        {
          uint32_t* to;
          int64_t stride;
          void take(int64_t p, int64_t, double gp) { to[p * stride] = distance::squaredOfEnvelope(gp); }
        };
        z.resize(static_cast<size_t>(len));
        stack.resize(static_cast<size_t>(len));
        Out o{ out.data() + j, lines };
        distance::edtLine(len, 1.0, In{ v.data() + j, lines }, o, { { stack.data(), 1 }, { z.data(), 1 } });
      }
      if (a < lastAxis)
        group.scatter(out, g);
      else
        for (int64_t i = 0; i < len; ++i)
          for (int64_t j = 0; j < lines; ++j)
            distances[group.at(i, j)] = std::sqrt(static_cast<double>(out[static_cast<size_t>(i * lines + j)]));
    });
  }
  return distances;
}

// One line of the taxicab transform: h(i) = min_j |i - j| + g(j) by two
// scans; source(i): the j that gives it.
void taxicabLine(const int64_t* g, int64_t len, int64_t* h, int64_t* source)
{
  for (int64_t i = 0; i < len; ++i)
  {
    h[i] = g[i];
    source[i] = i;
    if (i > 0 && h[i - 1] + 1 < h[i])
    {
      h[i] = h[i - 1] + 1;
      source[i] = source[i - 1];
    }
  }
  for (int64_t i = len - 2; i >= 0; --i)
    if (h[i + 1] + 1 < h[i])
    {
      h[i] = h[i + 1] + 1;
      source[i] = source[i + 1];
    }
}

// One line of the chessboard transform: Meijster, Roerdink and
// Hesselink's lower envelope of max(|i - j|, g(j)); ss and tt: scratch.
void chessboardLine(const int64_t* g, int64_t len, int64_t* h, int64_t* source, int64_t* ss, int64_t* tt)
{
  auto f = [&](int64_t x, int64_t i) { return std::max(std::llabs(x - i), static_cast<long long>(g[i])); };
  auto sep = [&](int64_t i, int64_t u) {
    const int64_t gi = g[i], gu = g[u];
    return gi <= gu ? std::max(i + gu, (i + u) / 2) : std::min(u - gi, (i + u) / 2);
  };
  int64_t q = 0;
  ss[0] = 0;
  tt[0] = 0;
  for (int64_t u = 1; u < len; ++u)
  {
    while (q >= 0 && f(tt[q], ss[q]) > f(tt[q], u))
      --q;
    if (q < 0)
    {
      q = 0;
      ss[0] = u;
    }
    else
    {
      const int64_t w = 1 + sep(ss[q], u);
      if (w < len)
      {
        ++q;
        ss[q] = u;
        tt[q] = w;
      }
    }
  }
  for (int64_t u = len - 1; u >= 0; --u)
  {
    const int64_t i = ss[q];
    h[u] = f(u, i);
    source[u] = i;
    if (u == tt[q])
      --q;
  }
}

// One line of the chessboard transform whose values g are all at most
// kChessboardWindow, voxel by voxel: position i tries j = i - 1, i + 1,
// i - 2, ... while |i - j| is below its best max(|i - j|, g(j)) so far (no
// farther j can do better). Its cost follows the distances, where the lower
// envelope's follows the line; the same distances (the source may be
// another background voxel at the same distance).
constexpr int64_t kChessboardWindow = 64;
void chessboardWindows(const int64_t* g, int64_t len, int64_t* h, int64_t* source)
{
  for (int64_t i = 0; i < len; ++i)
  {
    int64_t best = g[i], from = i;
    for (int64_t d = 1; d < best; ++d)
    {
      if (i - d >= 0 && std::max(d, g[i - d]) < best)
      {
        best = std::max(d, g[i - d]);
        from = i - d;
      }
      if (i + d < len && std::max(d, g[i + d]) < best)
      {
        best = std::max(d, g[i + d]);
        from = i + d;
      }
    }
    h[i] = best;
    source[i] = from;
  }
}

// Every voxel its own nearest voxel to start with (x, y, z per axis), on
// the threads (which also spreads the first touch of the fresh pages).
void startFeatures(size_t count, const int64_t n[3], TransformArray<int32_t> feature[3], int threads)
{
  for (int a = 0; a < 3; ++a)
    feature[a].resize(count);
  parallelFor(n[1] * n[2], threads, [&](int, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
    {
      const int32_t y = static_cast<int32_t>(r % n[1]), z = static_cast<int32_t>(r / n[1]);
      const size_t first = static_cast<size_t>(r * n[0]);
      for (int64_t x = 0; x < n[0]; ++x)
      {
        feature[0][first + static_cast<size_t>(x)] = static_cast<int32_t>(x);
        feature[1][first + static_cast<size_t>(x)] = y;
        feature[2][first + static_cast<size_t>(x)] = z;
      }
    }
  });
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

DistanceTransform distanceTransformEdt(
  const GridView& image, const double sampling[3], bool withIndices, int threads, Device device)
{
  threads = threadCount(threads);
  const std::vector<uint8_t> fg = foregroundOf(image, threads);
  const int64_t* n = image.dims;
  const size_t count = fg.size();
  for (int a = 0; a < 3; ++a)
    if (!(sampling[a] > 0) || !std::isfinite(sampling[a]))
      throw std::invalid_argument("the sampling must be positive and finite");
  const bool anyBackground = std::find(fg.begin(), fg.end(), 0) != fg.end();
#ifdef TOPOVOX_WITH_CUDA
  // The image without background is the CPU's (a constant answer).
  if (resolveDevice(device, nullptr) == Device::GPU && anyBackground)
  {
    try
    {
      DistanceTransform onGpu;
      distance::edtGPU(fg.data(), n, sampling, withIndices, onGpu);
      return onGpu;
    }
    catch (const std::runtime_error&)
    {
      // No GPU memory or a driver error: the CPU gives the same result.
    }
  }
#else
  (void)device;
#endif
  if (!withIndices && anyBackground && distance::squaredPathApplies(n, sampling))
  {
    DistanceTransform out;
    out.distances = squaredEdtCPU(fg, n, threads);
    return out;
  }
  // Squared distance so far and the nearest background voxel (x, y, z).
  TransformArray<double> g(count); // written in full below
  TransformArray<int32_t> feature[3];
  startFeatures(count, n, feature, threads);
  parallelFor(static_cast<int64_t>(count), threads, [&](int, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
      g[static_cast<size_t>(k)] = fg[static_cast<size_t>(k)] ? kInf : 0.0;
  });
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
      // Along x the values are still 0 or infinity: the nearest background
      // voxel of the line. Along y and z, each line by windows or by the
      // lower envelope (EdtLine.h), as the GPU chooses.
      if (n[a] == 1)
        continue;
      const double s2 = sampling[a] * sampling[a];
      const int64_t passLines = n[0] * n[1] * n[2] / n[a];
      const distance::WindowSteps steps = distance::windowSteps(s2);
      forLineGroups(n, a, threads, [&](const LineGroup& group) {
        // Values and features of the group's lines gathered (LineGroup);
        // copied, because the envelope reads positions the output has
        // already overwritten, and into the output first, for the positions
        // a line leaves as they are. A line along axis a changes only the
        // features of the axes done before (copied from the voxel taken)
        // and of axis a itself (that voxel's position on the line); those
        // of the later axes stay each voxel's own coordinates.
        thread_local std::vector<double> f, gOut, z;
        thread_local std::vector<int32_t> from[3], fOut[3], v;
        const int64_t len = group.len, lines = group.lines;
        v.resize(static_cast<size_t>(len));
        z.resize(static_cast<size_t>(len));
        group.gather(g, f);
        gOut = f;
        for (int b = 0; b < a; ++b)
        {
          group.gather(feature[b], from[b]);
          fOut[b] = from[b];
        }
        fOut[a].resize(group.size());
        for (int64_t i = 0; i < len; ++i)
          std::fill_n(fOut[a].begin() + i * lines, lines, static_cast<int32_t>(i));
        struct In
        {
          const double* f;
          int64_t stride;
          double g(int64_t q) const { return f[q * stride]; }
        };
        struct Out
        {
          double* g;
          int32_t* feature[3];
          const int32_t* from[3];
          int axis;
          int64_t stride;
          void take(int64_t p, int64_t q, double gp)
          {
            g[p * stride] = gp;
            for (int b = 0; b < axis; ++b)
              feature[b][p * stride] = from[b][q * stride];
            feature[axis][p * stride] = static_cast<int32_t>(q);
          }
        };
        for (int64_t j = 0; j < lines; ++j)
        {
          const In in{ f.data() + j, lines };
          Out out{ gOut.data() + j, { nullptr, nullptr, nullptr }, { nullptr, nullptr, nullptr }, a, lines };
          for (int b = 0; b <= a; ++b)
          {
            out.feature[b] = fOut[b].data() + j;
            out.from[b] = b < a ? from[b].data() + j : nullptr;
          }
          if (a == 0)
          {
            distance::firstAxisLine(len, s2, [&](int64_t q) { return in.g(q) == 0.0; }, out, { v.data(), 1 });
            continue;
          }
          if (!distance::lineTakesWindows(len, passLines, s2, in))
          {
            distance::edtLine(len, s2, in, out, { { v.data(), 1 }, { z.data(), 1 } });
            continue;
          }
          for (int64_t p = 0; p < len; ++p)
          {
            double gp;
            const int64_t q = distance::nearestInWindow(p, in.g(p), len, steps, in, true, distance::OwnVote(), &gp);
            out.take(p, q, gp);
          }
        }
        group.scatter(gOut, g);
        for (int b = 0; b <= a; ++b)
          group.scatter(fOut[b], feature[b]);
      });
    }
  // Distances from the indices, as scipy computes them (numpy's axes z, y,
  // x), row by row into g's own memory (a voxel's squared distance is no
  // longer needed once its indices are known), which becomes the result:
  // no fresh pages for it.
  parallelFor(n[1] * n[2], threads, [&](int, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
    {
      int64_t c[3] = { 0, r % n[1], r / n[1] };
      for (size_t at = static_cast<size_t>(r * n[0]); c[0] < n[0]; ++c[0], ++at)
      {
        const int32_t f[3] = { feature[0][at], feature[1][at], feature[2][at] };
        g[at] = distance::edtDistance(f, c, sampling);
      }
    }
  });
  out.distances = std::move(g);
  if (withIndices)
    for (int a = 0; a < 3; ++a)
      out.indices[a] = std::move(feature[a]);
  return out;
}

DistanceTransform distanceTransformCdt(const GridView& image, DistanceMetric metric, bool withIndices, int threads)
{
  if (metric == DistanceMetric::Euclidean)
    throw std::invalid_argument("the chamfer transform takes the taxicab or chessboard metric");
  threads = threadCount(threads);
  const std::vector<uint8_t> fg = foregroundOf(image, threads);
  const int64_t* n = image.dims;
  const size_t count = fg.size();
  constexpr int64_t kFar = std::numeric_limits<int64_t>::max() / 4;
  // Per axis, the distance so far; taxicab sums the axes' distances,
  // chessboard takes their maximum: both separable, exactly.
  TransformArray<int64_t> d(count); // written in full below
  TransformArray<int32_t> feature[3]; // tracked only when the indices are asked for
  const bool anyBackground = std::find(fg.begin(), fg.end(), 0) != fg.end();
  if (withIndices)
    startFeatures(count, n, feature, threads);
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
  // Separable, axis by axis, each line on its own (on the threads):
  // taxicab by two scans of h(i) = min_j |i - j| + g(j), chessboard by
  // Meijster, Roerdink and Hesselink's lower envelope of
  // max(|i - j|, g(j)). Exact, as scipy's chamfer passes are (its distances,
  // not necessarily its choice among equally near background voxels).
  const bool taxicab = metric == DistanceMetric::Taxicab;
  int firstAxis = 0;
  while (firstAxis < 2 && n[firstAxis] == 1)
    ++firstAxis;
  for (int a = 0; a < 3; ++a)
  {
    if (n[a] == 1)
      continue;
    forLineGroups(n, a, threads, [&](const LineGroup& group) {
      // The group's distances (and features) gathered (LineGroup); each
      // line's taken out, transformed and put back in turn.
      thread_local std::vector<int64_t> g, h, source, ss, tt, gathered;
      thread_local std::vector<int32_t> from[3], fOut[3];
      const int64_t len = group.len, lines = group.lines;
      const size_t l = static_cast<size_t>(len);
      group.gather(d, gathered);
      if (withIndices)
        for (int b = 0; b < 3; ++b)
        {
          group.gather(feature[b], from[b]);
          fOut[b].resize(group.size());
        }
      g.resize(l);
      h.resize(l);
      source.resize(l);
      ss.resize(l);
      tt.resize(l);
      for (int64_t j = 0; j < lines; ++j)
      {
        int64_t most = 0;
        for (int64_t i = 0; i < len; ++i)
        {
          g[static_cast<size_t>(i)] = gathered[static_cast<size_t>(i * lines + j)];
          most = std::max(most, g[static_cast<size_t>(i)]);
        }
        // The first axis (values 0 or kFar) is the nearest background voxel
        // along the line whatever the metric: the two scans.
        if (taxicab || a == firstAxis)
          taxicabLine(g.data(), len, h.data(), source.data());
        else if (most <= kChessboardWindow)
          chessboardWindows(g.data(), len, h.data(), source.data());
        else
          chessboardLine(g.data(), len, h.data(), source.data(), ss.data(), tt.data());
        for (int64_t i = 0; i < len; ++i)
        {
          const size_t k = static_cast<size_t>(i * lines + j);
          gathered[k] = std::min(h[static_cast<size_t>(i)], kFar);
          if (withIndices)
            for (int b = 0; b < 3; ++b)
              fOut[b][k] = from[b][static_cast<size_t>(source[static_cast<size_t>(i)] * lines + j)];
        }
      }
      group.scatter(gathered, d);
      if (withIndices)
        for (int b = 0; b < 3; ++b)
          group.scatter(fOut[b], feature[b]);
    });
  }
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
  const std::vector<uint8_t> fg = foregroundOf(image, threadCount(threads));
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
  parallelFor(static_cast<int64_t>(count), threadCount(threads), [&](int, int64_t k0, int64_t k1) {
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
