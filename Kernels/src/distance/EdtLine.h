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
