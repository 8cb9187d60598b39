// EulerCurveCPU.cpp - the multi-threaded CPU path: one pass over the owned
// voxels, each worker with its own histogram (or, when the histogram is too
// large to replicate, shared atomic counters), merged at the end.
#include "EulerBackends.h"
#include "EulerCells.h"

#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

namespace topovox
{
namespace euler
{
unsigned activeAxes(const GridView& grid)
{
  unsigned m = 0;
  for (int a = 0; a < 3; ++a)
    if (grid.dims[a] > 1)
      m |= 1u << a;
  return m;
}

namespace
{
// Bits of the neighbours whose offset along `axis` is allowed when the voxel
// has (or lacks) a neighbour below and above on that axis.
uint32_t axisNeighbourMask(int axis, bool hasBelow, bool hasAbove)
{
  uint32_t m = 0;
  for (int b = 0; b < 27; ++b)
  {
    const int o = choiceAxis(b, axis);
    if ((o == -1 && !hasBelow) || (o == 1 && !hasAbove))
      continue;
    m |= 1u << b;
  }
  return m & ~(1u << kCenterBit);
}

// Replicated per-worker histograms cost workers * bins * 32 bytes; beyond
// this many bins the workers share one array of atomic counters instead.
constexpr int64_t kMaxReplicatedBins = 1 << 18;

template <typename T, bool Super, bool TC>
void histogramTyped(const HistogramRequest& rq, std::vector<int64_t>& hist)
{
  const GridView& g = rq.grid;
  const Box& ob = rq.owned;
  const T* data = static_cast<const T*>(g.data);
  const T* thr = static_cast<const T*>(rq.thresholds);
  const unsigned axes = activeAxes(g);
  const int64_t nBins = static_cast<int64_t>(rq.skipped) + rq.count + 1;

  int64_t offset[27];
  for (int b = 0; b < 27; ++b)
    offset[b] = choiceAxis(b, 0) * g.strides[0] + choiceAxis(b, 1) * g.strides[1] +
      choiceAxis(b, 2) * g.strides[2];
  uint32_t axisMask[3][2][2];
  for (int a = 0; a < 3; ++a)
    for (int lo = 0; lo < 2; ++lo)
      for (int hi = 0; hi < 2; ++hi)
        axisMask[a][lo][hi] = axisNeighbourMask(a, lo, hi);

  // A linear guess of each voxel's bin, made exact by thresholdBinFrom:
  // a binary search per voxel costs mispredicted branches.
  double origin = 0, scale = 0;
  if (rq.count >= 2)
  {
    origin = static_cast<double>(thr[0]);
    const double span = static_cast<double>(thr[rq.count - 1]) - origin;
    scale = span != 0 && std::isfinite(span) ? (rq.count - 1) / span : 0;
  }
  constexpr uint32_t kAllNeighbours = ((1u << 27) - 1) & ~(1u << kCenterBit);
  // The 8 neighbours in the voxel's z plane: all that a 2D image has.
  constexpr uint32_t kPlaneNeighbours = sideBits(2, 0) & ~(1u << kCenterBit);

  const int64_t rowsY = ob.hi[1] - ob.lo[1];
  const int64_t rows = rowsY * (ob.hi[2] - ob.lo[2]);
  const bool replicate = nBins <= kMaxReplicatedBins;
  const int workers = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(rq.threads, rows)));
  std::vector<std::vector<int64_t>> local(replicate ? workers : 0);
  hist.assign(static_cast<size_t>(nBins) * 4, 0);
  std::atomic<bool> aborted{ false };

  parallelFor(rows, workers, [&](int w, int64_t r0, int64_t r1) {
    int64_t* h;
    if (replicate)
    {
      local[w].assign(static_cast<size_t>(nBins) * 4, 0);
      h = local[w].data();
    }
    else
      h = hist.data();
    for (int64_t r = r0; r < r1; ++r)
    {
      if (aborted.load(std::memory_order_relaxed))
        return;
      const int64_t y = ob.lo[1] + r % rowsY, z = ob.lo[2] + r / rowsY;
      const uint32_t yz = axisMask[1][y > 0][y + 1 < g.dims[1]] &
        axisMask[2][z > 0][z + 1 < g.dims[2]];
      const T* row = data + y * g.strides[1] + z * g.strides[2];
      for (int64_t x = ob.lo[0]; x < ob.hi[0]; ++x)
      {
        const T* p = row + x * g.strides[0];
        const T v = *p;
        if (isNan(v))
          continue; // a NaN voxel's cells are in no set
        const uint32_t valid = yz & axisMask[0][x > 0][x + 1 < g.dims[0]];
        uint32_t preceding = 0;
        if (valid == kAllNeighbours)
          preceding = interiorPrecedingMask<Super>(p, offset, v, NeighbourBits{});
        else if (valid == kPlaneNeighbours) // a 2D image's interior
          preceding = interiorPrecedingMask<Super>(p, offset, v, PlaneNeighbourBits{});
        else
          for (int b = 0; b < 27; ++b)
            if (((valid >> b) & 1u) && precedes<Super>(p[offset[b]], v, b))
              preceding |= 1u << b;
        const uint32_t packed = ownedCellCounts<TC>(preceding, axes);
        const int64_t bin = rq.skipped +
          thresholdBinFrom<Super>(v, thr, rq.count,
            guessBin(static_cast<double>(v), origin, scale, rq.count));
        int64_t* hb = h + bin * 4;
        for (int k = 0; k < 4; ++k)
        {
          const int64_t c = (packed >> (8 * k)) & 0xFF;
          if (replicate)
            hb[k] += c;
          else if (c)
            __atomic_fetch_add(hb + k, c, __ATOMIC_RELAXED);
        }
      }
      if (w == 0 && rq.progress)
      {
        // Worker 0 speaks for all: the others progress at the same pace.
        const double done = static_cast<double>(r - r0 + 1) / static_cast<double>(r1 - r0);
        if ((r & 63) == 0 && !rq.progress(done))
          aborted = true;
      }
    }
  });
  if (aborted)
    throw Aborted{};
  for (const auto& l : local)
    for (size_t i = 0; i < hist.size(); ++i)
      hist[i] += l[i];
}

template <typename T>
void collectOwned(const GridView& g, const Box& ob, int64_t r0, int64_t r1, std::vector<T>& out)
{
  const T* data = static_cast<const T*>(g.data);
  const int64_t rowsY = ob.hi[1] - ob.lo[1];
  for (int64_t r = r0; r < r1; ++r)
  {
    const int64_t y = ob.lo[1] + r % rowsY, z = ob.lo[2] + r / rowsY;
    const T* row = data + y * g.strides[1] + z * g.strides[2];
    for (int64_t x = ob.lo[0]; x < ob.hi[0]; ++x)
    {
      const T v = row[x * g.strides[0]];
      if (!isNan(v))
        out.push_back(v);
    }
  }
}
} // namespace

void histogramCPU(const HistogramRequest& rq, std::vector<int64_t>& hist)
{
  dispatchScalarType(rq.grid.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool super = rq.filtration == Filtration::Superlevel;
    const bool tc = rq.construction == Construction::T;
    if (super)
      tc ? histogramTyped<T, true, true>(rq, hist) : histogramTyped<T, true, false>(rq, hist);
    else
      tc ? histogramTyped<T, false, true>(rq, hist) : histogramTyped<T, false, false>(rq, hist);
  });
}

void distinctCPU(const GridView& g, const Box& ob, int threads, std::vector<double>& out,
  std::vector<unsigned char>* native)
{
  dispatchScalarType(g.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t rows = (ob.hi[1] - ob.lo[1]) * (ob.hi[2] - ob.lo[2]);
    const int workers = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, rows)));
    // Each worker sorts and dedups its own rows; a k-way merge finishes.
    std::vector<std::vector<T>> parts(workers);
    parallelFor(rows, workers, [&](int w, int64_t r0, int64_t r1) {
      collectOwned(g, ob, r0, r1, parts[w]);
      std::sort(parts[w].begin(), parts[w].end());
      parts[w].erase(std::unique(parts[w].begin(), parts[w].end()), parts[w].end());
    });
    std::vector<T> merged;
    for (auto& p : parts)
    {
      std::vector<T> next;
      next.reserve(merged.size() + p.size());
      std::set_union(merged.begin(), merged.end(), p.begin(), p.end(), std::back_inserter(next));
      merged.swap(next);
      std::vector<T>().swap(p);
    }
    out.assign(merged.begin(), merged.end());
    if (native)
      native->assign(reinterpret_cast<const unsigned char*>(merged.data()),
        reinterpret_cast<const unsigned char*>(merged.data() + merged.size()));
  });
}

ValueSummary summarizeCPU(const GridView& g, const Box& ob, int threads)
{
  return dispatchScalarType(g.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t rows = (ob.hi[1] - ob.lo[1]) * (ob.hi[2] - ob.lo[2]);
    const int workers = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, rows)));
    const double inf = std::numeric_limits<double>::infinity();
    const ValueSummary empty{ inf, -inf, inf, -inf, 0, 0, 0 };
    std::vector<ValueSummary> parts(workers, empty);
    const T* data = static_cast<const T*>(g.data);
    const int64_t rowsY = ob.hi[1] - ob.lo[1];
    parallelFor(rows, workers, [&](int w, int64_t r0, int64_t r1) {
      double mn = std::numeric_limits<double>::infinity(), mx = -mn, fmn = mn, fmx = -mn;
      int64_t count = 0, nans = 0, finite = 0;
      for (int64_t r = r0; r < r1; ++r)
      {
        const int64_t y = ob.lo[1] + r % rowsY, z = ob.lo[2] + r / rowsY;
        const T* row = data + y * g.strides[1] + z * g.strides[2];
        for (int64_t x = ob.lo[0]; x < ob.hi[0]; ++x)
        {
          const T v = row[x * g.strides[0]];
          ++count;
          if (isNan(v))
          {
            ++nans;
            continue;
          }
          const double d = static_cast<double>(v);
          mn = std::min(mn, d);
          mx = std::max(mx, d);
          if (std::isfinite(d))
          {
            ++finite;
            fmn = std::min(fmn, d);
            fmx = std::max(fmx, d);
          }
        }
      }
      parts[w] = ValueSummary{ mn, mx, fmn, fmx, count, nans, finite };
    });
    ValueSummary s = empty;
    for (const auto& p : parts)
    {
      s.min = std::min(s.min, p.min);
      s.max = std::max(s.max, p.max);
      s.finiteMin = std::min(s.finiteMin, p.finiteMin);
      s.finiteMax = std::max(s.finiteMax, p.finiteMax);
      s.voxels += p.voxels;
      s.nans += p.nans;
      s.finite += p.finite;
    }
    return s;
  });
}
}
}
