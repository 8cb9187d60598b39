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

// Scratch of one line: element i at ptr[i * stride] (the GPU interleaves
// its threads' lines so that neighbouring threads touch neighbouring words).
template <typename T>
struct Strided
{
  T* ptr;
  int64_t stride;
  TV_HD T& operator[](int64_t i) const { return ptr[i * stride]; }
};

// Runs the line: in.g(q) is the squared distance so far at position q
// (infinity: no background voxel reached yet); out.take(p, q, g) records
// that position p's nearest background is the one of position q, at squared
// distance g. v and z need `len` entries. Returns false, writing nothing,
// when no position of the line is finite.
template <typename In, typename Out>
TV_HD bool edtLine(int64_t len, double s2, const In& in, Out& out, Strided<int32_t> v, Strided<double> z)
{
  const double inf = INFINITY;
  int64_t top = -1; // the envelope is v[0..top], parabola v[j] lowest from z[j] on
  for (int64_t q = 0; q < len; ++q)
  {
    const double fq = in.g(q);
    if (fq == inf)
      continue;
    const double lq = addRn(fq, mulRn(mulRn(s2, static_cast<double>(q)), static_cast<double>(q)));
    double s = -inf;
    while (top >= 0)
    {
      const int64_t r = v[top];
      const double lr = addRn(in.g(r), mulRn(mulRn(s2, static_cast<double>(r)), static_cast<double>(r)));
      s = subRn(lq, lr) / mulRn(2.0 * s2, static_cast<double>(q - r));
      if (s <= z[top])
        --top;
      else
        break;
    }
    ++top;
    v[top] = static_cast<int32_t>(q);
    z[top] = top == 0 ? -inf : s;
  }
  if (top < 0)
    return false;
  int64_t j = 0;
  for (int64_t p = 0; p < len; ++p)
  {
    while (j < top && z[j + 1] < static_cast<double>(p))
      ++j;
    const int64_t q = v[j];
    const double d = static_cast<double>(p - q);
    out.take(p, q, addRn(in.g(q), mulRn(mulRn(s2, d), d)));
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
  const double d = static_cast<double>(p - q);
  return mulRn(mulRn(s2, d), d);
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
