// EdtLine.h - one line of the exact Euclidean distance transform, written
// once for the CPU threads and the CUDA threads so that both choose the same
// nearest background voxel and compute the same bits.
//
// Felzenszwalb and Huttenlocher's lower envelope of the parabolas
// s2 (p - q)^2 + f(q) over the finite f(q) of the line. Ties go to the
// parabola found first (the pop test is `<=`, the walk test `<`). Every
// product and sum goes through mulRn/addRn, so that the CUDA compiler cannot
// fuse them into FMAs that the CPU would not do (the host side is built with
// -ffp-contract=off for the same reason).
#pragma once

#include "../euler/EulerCells.h" // TV_HD

#include <cmath>
#include <cstdint>

namespace topovox
{
namespace distance
{
TV_HD double mulRn(double a, double b)
{
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

TV_HD double addRn(double a, double b)
{
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

TV_HD double subRn(double a, double b)
{
#ifdef __CUDA_ARCH__
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

// A line is transformed voxel by voxel (nearestInWindow: the GPU's threads
// work side by side with coalesced loads) when every squared distance so
// far lies below windowLimit(s2), so that each voxel's nearest background
// is within kWindowRadius positions, and at most half of them reach
// crowdLimit(s2): a voxel's window search takes about as many steps as its
// distance, and on lines where most voxels are far the lower envelope
// (edtLine: a few steps a voxel whatever the distances) is faster. That
// second rule holds only in passes of at least kCrowdMinLines lines: the
// GPU builds each envelope on one thread, and a pass of few long lines (a
// 2D image's) then leaves most of the device idle. Other lines go through
// the envelope. The CPU and the GPU classify every line alike
// (lineTakesWindows), so they give the same bits. Both ways are exact; with
// a sampling whose squares round, they may choose different background
// voxels at equal distance.
// TOPOVOX_EDT_WINDOW_RADIUS and TOPOVOX_EDT_CROWD_RADIUS exist to benchmark
// other radii; a build sets them for the CPU and the CUDA sources alike, or
// their bits may differ.
#ifndef TOPOVOX_EDT_WINDOW_RADIUS
#define TOPOVOX_EDT_WINDOW_RADIUS 64
#endif
#ifndef TOPOVOX_EDT_CROWD_RADIUS
#define TOPOVOX_EDT_CROWD_RADIUS 16
#endif
constexpr int kWindowRadius = TOPOVOX_EDT_WINDOW_RADIUS;
constexpr int kCrowdRadius = TOPOVOX_EDT_CROWD_RADIUS;
constexpr int64_t kCrowdMinLines = int64_t(1) << 16;

TV_HD double squaredStep(double s2, double d)
{
  return mulRn(mulRn(s2, d), d);
}

TV_HD double windowLimit(double s2)
{
  return squaredStep(s2, static_cast<double>(kWindowRadius + 1));
}

TV_HD double crowdLimit(double s2)
{
  return squaredStep(s2, static_cast<double>(kCrowdRadius + 1));
}

// Whether the crowd rule holds in a pass of `lines` lines.
TV_HD bool crowdRuleHolds(int64_t lines)
{
  return lines >= kCrowdMinLines;
}

// The choice for a line of `len` positions in a pass of `lines` lines,
// in.g(q) its squared distances so far: windows (true) or the envelope.
template <typename In>
TV_HD bool lineTakesWindows(int64_t len, int64_t lines, double s2, const In& in)
{
  const double limit = windowLimit(s2), crowd = crowdRuleHolds(lines) ? crowdLimit(s2) : INFINITY;
  int64_t far = 0;
  for (int64_t q = 0; q < len; ++q)
  {
    const double g = in.g(q);
    if (!(g < limit)) // infinity too
      return false;
    far += g >= crowd ? 1 : 0;
  }
  return 2 * far <= len;
}

// squaredStep(s2, d) for the steps d of a window, looked up instead of
// multiplied (the same values: squaredStep(s2, -d) == squaredStep(s2, d)).
struct WindowSteps
{
  double v[kWindowRadius + 1];
};

TV_HD WindowSteps windowSteps(double s2)
{
  WindowSteps t;
  for (int d = 0; d <= kWindowRadius; ++d)
    t.v[d] = squaredStep(s2, static_cast<double>(d));
  return t;
}

// Position p (g(p) = gp < windowLimit) of a line: the q with the least
// g(q) + s2 (p - q)^2, summed as edtLine sums it, the lowest q among
// equals; *best gets that sum. The window grows outwards from p, one step d
// at a time (p - d, then p + d), and stops when s2 d^2 alone exceeds the best
// so far (no farther q can win or tie) or d passes kWindowRadius (past it
// s2 d^2 exceeds g(p) itself). vote(b): whether b holds for any of the
// threads that grow their windows in step (a warp on the GPU, whose threads
// then read neighbouring words; b itself on the CPU); `active`: whether
// this thread's voxel takes part.
template <typename In, typename Vote>
TV_HD int64_t nearestInWindow(
  int64_t p, double gp, int64_t len, const WindowSteps& steps, const In& in, bool active, const Vote& vote, double* best)
{
  int64_t at = p;
  *best = gp;
  for (int d = 1; d <= kWindowRadius && vote(active && steps.v[d] <= *best); ++d)
  {
    // p - d is below every q tried so far: it takes ties; p + d above them.
    if (active && p - d >= 0)
    {
      const double v = addRn(in.g(p - d), steps.v[d]);
      if (v <= *best)
      {
        *best = v;
        at = p - d;
      }
    }
    if (active && p + d < len)
    {
      const double v = addRn(in.g(p + d), steps.v[d]);
      if (v < *best)
      {
        *best = v;
        at = p + d;
      }
    }
  }
  return at;
}

// vote() for a thread on its own.
struct OwnVote
{
  TV_HD bool operator()(bool b) const { return b; }
};

// Scratch of one line: element i at ptr[i * stride] (the GPU interleaves
// its threads' lines so that neighbouring threads touch neighbouring words).
template <typename T>
struct Strided
{
  T* ptr;
  int64_t stride;
  TV_HD T& operator[](int64_t i) const { return ptr[i * stride]; }
};

// The lower envelope's stack, `len` entries of each: parabola v[j] is the
// lowest from z[j] on. Its value g and l = g + s2 v[j]^2 are read or
// recomputed from the line (the same bits) rather than stored: on the GPU
// the stacks' traffic is the envelope's cost.
struct EnvelopeScratch
{
  Strided<int32_t> v;
  Strided<double> z;
};

// l of the parabola at q, whose value is fq.
TV_HD double parabolaL(double s2, int64_t q, double fq)
{
  return addRn(fq, squaredStep(s2, static_cast<double>(q)));
}

// Builds the lower envelope of the line's parabolas: in.g(q) is the squared
// distance so far at position q (infinity: no background voxel reached
// yet). Returns the index of the stack's top (-1: no position is finite).
// The top entry is kept in registers, so that a step that pushes without
// popping reads no scratch memory, and the line's values are loaded
// kAhead at a time before they are used: a GPU thread builds a whole line
// alone (on a 2D image, one thread a column), and these loads in flight
// together are most of its time.
template <typename In>
TV_HD int64_t buildEnvelope(int64_t len, double s2, const In& in, const EnvelopeScratch& stack)
{
  constexpr int kAhead = 8;
  const double inf = INFINITY;
  int64_t top = -1; // the envelope is stack[0..top]
  int64_t topV = 0;
  double topZ = -inf, topL = 0;
  for (int64_t q0 = 0; q0 < len; q0 += kAhead)
  {
    double ahead[kAhead];
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int k = 0; k < kAhead; ++k)
      ahead[k] = q0 + k < len ? in.g(q0 + k) : inf;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int k = 0; k < kAhead; ++k)
    {
      const double fq = ahead[k];
      if (fq == inf)
        continue;
      const int64_t q = q0 + k;
      const double lq = parabolaL(s2, q, fq);
      double s = -inf;
      while (top >= 0)
      {
        s = subRn(lq, topL) / mulRn(2.0 * s2, static_cast<double>(q - topV));
        if (s > topZ)
          break;
        if (--top >= 0)
        {
          topV = stack.v[top], topZ = stack.z[top];
          topL = parabolaL(s2, topV, in.g(topV));
        }
      }
      ++top;
      topV = q, topZ = top == 0 ? -inf : s, topL = lq;
      stack.v[top] = static_cast<int32_t>(q);
      stack.z[top] = topZ;
    }
  }
  return top;
}

// The envelope's entry that holds position p: the last j <= top with
// z[j] < p (z[0] is -infinity and z strictly increases), by bisection. The
// same j as a walk from 0 that steps while z[j + 1] < p (edtLine's).
TV_HD int64_t envelopeEntry(double p, int64_t top, const Strided<double>& z)
{
  int64_t lo = 0, hi = top;
  while (lo < hi)
  {
    const int64_t mid = (lo + hi + 1) / 2;
    if (z[mid] < p)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// Position p's answer from the envelope's entry j.
template <typename In, typename Out>
TV_HD void takeFromEnvelope(int64_t p, int64_t j, double s2, const EnvelopeScratch& stack, const In& in, Out& out)
{
  const int64_t q = stack.v[j];
  out.take(p, q, addRn(in.g(q), squaredStep(s2, static_cast<double>(p - q))));
}

// Runs the line: out.take(p, q, g) records that position p's nearest
// background is the one of position q, at squared distance g. Returns
// false, writing nothing, when no position of the line is finite.
template <typename In, typename Out>
TV_HD bool edtLine(int64_t len, double s2, const In& in, Out& out, const EnvelopeScratch& stack)
{
  const int64_t top = buildEnvelope(len, s2, in, stack);
  if (top < 0)
    return false;
  int64_t j = 0;
  for (int64_t p = 0; p < len; ++p)
  {
    while (j < top && stack.z[j + 1] < static_cast<double>(p))
      ++j;
    takeFromEnvelope(p, j, s2, stack, in, out);
  }
  return true;
}

// The first axis transformed: every value is 0 (background) or infinity,
// so the envelope is simply the nearest background voxel of the line, found
// by two scans (linear, and on the GPU a pair of block-wide scans). Ties go
// to the lower index. The GPU's block-scan kernel for lines along x uses
// nearestOf and firstAxisG too, so both give the same bits.
TV_HD int64_t nearestOf(int64_t p, int64_t left, int64_t right)
{
  if (left < 0)
    return right;
  if (right < 0)
    return left;
  return p - left <= right - p ? left : right;
}

TV_HD double firstAxisG(double s2, int64_t p, int64_t q)
{
  return squaredStep(s2, static_cast<double>(p - q));
}

// background(p): whether position p is background. out.take as in edtLine;
// positions with no background on the line get take(p, p, infinity).
// `left` needs `len` entries.
template <typename Background, typename Out>
TV_HD void firstAxisLine(int64_t len, double s2, const Background& background, Out& out, Strided<int32_t> left)
{
  int64_t last = -1;
  for (int64_t p = 0; p < len; ++p)
  {
    if (background(p))
      last = p;
    left[p] = static_cast<int32_t>(last);
  }
  int64_t next = -1;
  for (int64_t p = len - 1; p >= 0; --p)
  {
    if (background(p))
      next = p;
    const int64_t q = nearestOf(p, left[p], next);
    if (q < 0)
      out.take(p, p, INFINITY);
    else
      out.take(p, q, firstAxisG(s2, p, q));
  }
}

// scipy's distance from a voxel at c to its nearest background voxel f:
// the squared offsets times sampling summed from numpy's first axis (z) to
// its last (x), then the square root.
TV_HD double edtDistance(const int32_t f[3], const int64_t c[3], const double sampling[3])
{
  double sum = 0;
  for (int a = 2; a >= 0; --a)
  {
    const double d = mulRn(static_cast<double>(f[a] - c[a]), sampling[a]);
    sum = a == 2 ? mulRn(d, d) : addRn(sum, mulRn(d, d));
  }
  return sqrt(sum);
}
}
}
