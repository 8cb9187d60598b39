// SinkhornRows.cuh - what the dense Sinkhorn's row kernels share: which
// update a row's sum turns into (Row, finishRow), the terms and their
// warp-wide combination, and the arguments of a half-iteration (RowArgs).
// Included by SinkhornCUDA.cu (the kernels relaunched each half-iteration)
// and SinkhornResidentCUDA.cu (the matrix held in shared memory across
// iterations).
#pragma once

#include <cmath>
#include <cstdint>

namespace topovox
{
namespace transport
{
namespace rows
{
// What a row kernel computes for pair p and row k, with x_l = X[k][l] and
// s_l = s[p][l] (at = p * d + k):
enum class Row
{
  ScaleV,        // v = b / (K^T u): X = K^T, s = u, mass = b; out = v, prev = the old v
  ScaleU,        // u = 1 / ((K / a) v): X = K, s = v, mass = a; out = u, prev = the old u
  ScaleResidual, // (K^T u) v - b: X = K^T, s = u, t = v, mass = b
  LogUpdate,     // log mass - logsumexp_l (x_l + s_l): mass = log b (X = Mr^T, s = u) or log a (X = Mr, s = v)
  LogResidual    // sum_l exp(x_l + s_l + t_k) - b: X = Mr^T, s = u, t = v, mass = b
};

struct RowArgs
{
  const double* X;
  const double* s;
  const double* t;
  const double* mass;
  const int* active;
  int n, d;
  double* out;
  double* prev;
  int* bad;
  // The tile kernel's columns split over gridDim.z blocks: each block's
  // partial sums ([z][pair][row]) and, per tile, how many have arrived.
  double* partM = nullptr;
  double* partSum = nullptr;
  int* partZero = nullptr;
  int* arrivals = nullptr;
  // The log domain's factored sums (LogUpdate, tile kernel): E = exp(X -
  // rowMax), usable where *factorOk; each pair's maximum of s (read) and
  // of out (written), as ordered keys, and the slot the next kernel writes
  // (reset here).
  const double* E = nullptr;
  const double* rowMax = nullptr;
  const int* factorOk = nullptr;
  const unsigned long long* sMax = nullptr;
  unsigned long long* outMax = nullptr;
  unsigned long long* resetMax = nullptr;
};

// A double as an unsigned key that orders as the doubles do (atomicMax on
// doubles); NaN and +inf above every finite value. 0: no value (a slot
// just reset, or only -inf).
__device__ inline unsigned long long orderedKey(double x)
{
  if (isnan(x) || x == INFINITY)
    return ~0ull;
  const unsigned long long bits = static_cast<unsigned long long>(__double_as_longlong(x));
  return (bits >> 63) ? ~bits : (bits | (1ull << 63));
}

// The key's double; NaN for a key that stands for no finite value.
__device__ inline double fromOrderedKey(unsigned long long key)
{
  if (key == 0 || key == ~0ull)
    return NAN;
  return __longlong_as_double(static_cast<long long>((key >> 63) ? (key & ~(1ull << 63)) : ~key));
}

// Combines the one-pass log-sum-exp state (m, sum) with (m2, s2); plain
// sums (Lse false) just add.
template <bool Lse>
__device__ inline void combine(double& m, double& sum, double m2, double s2)
{
  if (!Lse)
    sum += s2;
  else if (m2 > m)
  {
    sum = (m == -INFINITY ? 0.0 : sum * exp(m - m2)) + s2;
    m = m2;
  }
  else if (m2 != -INFINITY)
    sum += s2 * exp(m2 - m);
}

// The scaling method's new value of a row from its sum: v = b / (K^T u)
// (ScaleV) or u = 1 / ((K / a) v) (ScaleU; zero: a product that is not
// positive); `bad`: a numerical error.
template <Row R>
__device__ inline double scaledUpdate(double mass, double sum, bool zero, bool& bad)
{
  if (R == Row::ScaleV)
  {
    const double v = mass / sum;
    bad = sum == 0 || !isfinite(v);
    return v;
  }
  // The CPU sums ((1 / a_k) K_kl) v_l: with 1 / a_k infinite every term is
  // inf, or NaN where K_kl v_l is 0 (u: 0, or NaN). Otherwise 1 / a_k scales
  // the row's sum.
  const double inverse = 1.0 / mass;
  const double u = isinf(inverse) ? (zero ? NAN : 0.0) : 1.0 / (inverse * sum);
  bad = !isfinite(u);
  return u;
}

// The log domain's new potential from its row's log-sum-exp state (m, sum):
// log mass - (m + log sum), where m = -inf (no term) gives mass + inf.
__device__ inline double logUpdated(double mass, double m, double sum)
{
  return mass - (m == -INFINITY ? m : m + log(sum));
}

// The m of a factored sum (FactoredLogSumExp.h): the row's maximum of X
// plus the pair's shift c, -inf where the sum is 0.
__device__ inline double factoredM(double sum, double rowMax, double c)
{
  return sum > 0 ? rowMax + c : -INFINITY;
}

// The update of pair p at row k from its row's sum (and maximum m in the
// log domain; zero: a product that is not positive, for ScaleU).
template <Row R>
__device__ inline void finishRow(const RowArgs& g, int64_t p, int64_t k, double m, double sum, bool zero)
{
  const int64_t at = p * g.d + k;
  switch (R)
  {
    case Row::ScaleV:
    case Row::ScaleU:
    {
      bool bad = false;
      const double x = scaledUpdate<R>(g.mass[at], sum, zero, bad);
      g.prev[at] = g.out[at];
      g.out[at] = x;
      if (bad)
        g.bad[p] = 1;
      break;
    }
    case Row::ScaleResidual:
      g.out[at] = sum * g.t[at] - g.mass[at];
      break;
    case Row::LogUpdate:
      g.out[at] = logUpdated(g.mass[at], m, sum);
      break;
    case Row::LogResidual:
      g.out[at] = sum - g.mass[at];
      break;
  }
}

// One term x_l s_l of pair p's row into a thread's (m, sum, zero).
template <Row R>
__device__ inline void addTerm(double x, double y, double shift, double& m, double& sum, bool& zero)
{
  if (R == Row::LogResidual)
    sum += exp(x + y + shift);
  else if (R == Row::LogUpdate)
    combine<true>(m, sum, x + y, 1.0); // one pass: a new maximum rescales the sum
  else
  {
    sum += x * y;
    if (R == Row::ScaleU)
      zero = zero || !(x > 0 && y > 0);
  }
}

// Warp-wide combination of (m, sum, zero): lane 0 holds the result.
template <Row R>
__device__ inline void warpCombine(double& m, double& sum, bool& zero)
{
  constexpr bool Lse = R == Row::LogUpdate;
  for (int o = 16; o > 0; o >>= 1)
  {
    const double s2 = __shfl_down_sync(0xffffffffu, sum, o);
    combine<Lse>(m, sum, Lse ? __shfl_down_sync(0xffffffffu, m, o) : 0.0, s2);
    if (R == Row::ScaleU)
      zero = __shfl_down_sync(0xffffffffu, zero, o) || zero;
  }
}

// How a pair stops, for the row kernels' stepKernel and the resident
// kernel alike. POT's rule after a checked iteration ii: the marginal
// error `err` recorded, and below stopThr the pair converged (status 0)
// after ii + 1 iterations; true then.
__device__ inline bool stopIfConverged(
  int p, double err, int ii, double stopThr, double* errors, int* status, int* iterations, int* active)
{
  errors[p] = err;
  if (!(err < stopThr))
    return false;
  status[p] = 0;
  iterations[p] = ii + 1;
  active[p] = 0;
  return true;
}

// A numerical error: the pair stops (status 2) after `done` iterations,
// its previous scalings restored by the caller.
__device__ inline void stopForNumericalError(int p, int done, int* status, int* iterations, int* active)
{
  status[p] = 2;
  iterations[p] = done;
  active[p] = 0;
}

} // namespace rows
} // namespace transport
} // namespace topovox
