// EdtSquaredLine.h - one line of the exact Euclidean distance transform on
// integer squared distances (unit sampling, distances only), written once
// for the CPU threads (DistanceTransform.cpp) and the CUDA threads
// (EdtSquaredOnDevice.cuh): how a line is classified from its least and
// greatest values and count of finite values, and the answer at a position
// of a line that is not wide. Wide lines go through Felzenszwalb and
// Huttenlocher's lower envelope (EdtLine.h) on these integers as doubles.
// Every sum is exact, so the CPU and the GPU need not choose alike: any
// choice gives the same squared distance, and its square root is scipy's.
#pragma once

#include "EdtLine.h"

#include <cstdint>
#include <limits>

namespace topovox
{
namespace distance
{
constexpr uint32_t kNoBackground = 0xffffffffu; // no background voxel reached yet

// The window radius of this path: in the feature path's (EdtLine.h) the
// GPU's windows read global memory, here shared memory, and 128 measured
// best on the H200 (bench/README.md, the twentieth session: 64, 128 and
// 256; 512^3 smooth 2.36, 1.96, 1.95 ms, five balls 3.48, 2.37, 2.36 ms).
// The crowd rule's radius is the feature path's (16, 24 and no rule
// measured the same).
constexpr int kSquaredWindowRadius = 128;
constexpr uint32_t kSquaredWindowLimit = uint32_t(kSquaredWindowRadius + 1) * (kSquaredWindowRadius + 1);
constexpr uint32_t kSquaredCrowdAt = uint32_t(kCrowdRadius + 1) * (kCrowdRadius + 1);
constexpr unsigned kSparseSeeds = 8;

// A line's kind from its least (lo) and greatest (hi) values and its count
// of finite values:
//  * empty: no finite value (no background in its plane yet): it stays so;
//  * sparse: 1 to kSparseSeeds finite values (a few background voxels in
//    the whole image): each position takes the least over them;
//  * windows: every value below lo + kSquaredWindowLimit, and (the crowd
//    rule, in a pass of many lines) at most half of them at
//    lo + kSquaredCrowdAt or past it. On the excess over lo rather than the
//    plain values: a line of equal values (voxels far from the background
//    along earlier axes, with the background as far from all of the line)
//    takes no step at all, where plain limits would make it wide;
//  * wide otherwise.
TV_HD bool sparseLine(uint32_t hi, unsigned finite)
{
  return hi == kNoBackground && finite >= 1 && finite <= kSparseSeeds;
}
TV_HD bool windowsLine(uint32_t lo, uint32_t hi)
{
  return hi != kNoBackground && hi - lo < kSquaredWindowLimit;
}
TV_HD bool wideLine(bool empty, bool sparse, bool windows, unsigned crowd, int64_t len)
{
  return !empty && !sparse && (!windows || 2 * int64_t(crowd) > len);
}

// Whether the distances of an image with a background voxel may take this
// path: unit sampling, more than one row (a single row takes the feature
// path's scans), and every squared distance below kNoBackground.
inline bool squaredPathApplies(const int64_t dims[3], const double sampling[3])
{
  if (sampling[0] != 1 || sampling[1] != 1 || sampling[2] != 1 || (dims[1] == 1 && dims[2] == 1))
    return false;
  uint64_t farthest = 0;
  for (int a = 0; a < 3; ++a)
    farthest += static_cast<uint64_t>(dims[a] - 1) * static_cast<uint64_t>(dims[a] - 1);
  return farthest < kNoBackground;
}

// The wide lines' squared distances as the lower envelopes (EdtLine.h)
// read them, kNoBackground as +infinity, and the envelopes' answers back:
// exact both ways, every value below 2^32. (A wide line has a finite
// value, so no answer is infinite; one would stay kNoBackground.)
TV_HD double envelopeValue(uint32_t v)
{
  return v == kNoBackground ? std::numeric_limits<double>::infinity() : static_cast<double>(v);
}
TV_HD uint32_t squaredOfEnvelope(double gp)
{
  return gp == std::numeric_limits<double>::infinity() ? kNoBackground : static_cast<uint32_t>(gp);
}

TV_HD uint32_t lesserOf(uint32_t a, uint32_t b)
{
  return a < b ? a : b;
}

// A line's (or a run of it's) least and greatest value and count of
// finite values, taken value by value.
struct LineTally
{
  uint32_t lo = kNoBackground, hi = 0;
  unsigned finite = 0;
  TV_HD void add(uint32_t v)
  {
    lo = lesserOf(lo, v);
    hi = v > hi ? v : hi;
    finite += v != kNoBackground ? 1 : 0;
  }
};

// The squared distance at position p of a line that is not wide: value(q)
// the line's value at q, seed(k) its k-th finite value's position (sparse
// lines), lo its least value.
//  * Windows: no position q can give p less than lo + (p - q)^2, so the
//    window stops once lo + d^2 reaches the best sum (every value is below
//    lo + kSquaredWindowLimit: d stays within kSquaredWindowRadius and no
//    sum overflows). A position clamped to the line's end repeats one
//    already tried at a smaller d: it cannot win.
//  * A sparse line: the least over its finite values; an empty one keeps
//    kNoBackground.
template <typename Value, typename Seed>
TV_HD uint32_t squaredAnswer(
  int p, int len, uint32_t lo, bool empty, bool sparse, unsigned finite, const Value& value, const Seed& seed)
{
  uint32_t best = value(p);
  if (sparse)
  {
    best = kNoBackground;
    for (unsigned k = 0; k < finite; ++k)
    {
      const int q = seed(k);
      const uint32_t d = static_cast<uint32_t>(p > q ? p - q : q - p);
      best = lesserOf(best, value(q) + d * d);
    }
  }
  else if (!empty)
    for (int d = 1; lo + static_cast<uint32_t>(d * d) < best; ++d)
    {
      const uint32_t step = static_cast<uint32_t>(d * d);
      best = lesserOf(best, value(p - d > 0 ? p - d : 0) + step);
      best = lesserOf(best, value(p + d < len - 1 ? p + d : len - 1) + step);
    }
  return best;
}
}
}
