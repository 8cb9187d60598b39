// SoftThresholdGroups.h - the CPU's sigmoids of one voxel against every
// threshold, s_t = sigmoid(lambda (t - h)), with an exp a group of
// thresholds rather than an exp a term.
//
// Why: the CPU path evaluated each term as exp(lambda (t - h)) and a
// division behind a branch, some 30 to 40 cycles, and on a noise image
// most voxels own a nonzero signed count, so the terms were its time
// (1024^2, 64 thresholds: 192 ms forward on this repository's 2 cores,
// against 9 ms for the same image smoothed, where the count is the time).
// Factored about a centre c,
//
//   exp(lambda (h - t)) = exp(lambda (h - c)) * exp(lambda (c - t)) = E_h * F_t,
//
// F_t is computed once a call, E_h once a voxel and group, and a term is a
// product, an addition and a division with no branch: the loop over a
// group's thresholds vectorises.
//
// Exactness: s_t = 1 / (1 + E_h F_t) for E_h anywhere in [0, inf] (an
// overflow gives 0, an underflow 1: the terms' own limits) as long as F_t
// is finite and nonzero, which holds where lambda |t - c| <= kMostExponent
// for every t of the group (c the middle of its smallest and largest). A
// group that does not (thresholds far apart at a large lambda, as the
// exact curve's limit asks, or a threshold that is not finite) takes the
// direct form, softSigmoid(lambda (t - h)). The two forms differ by the
// rounding of the exponent's argument and of one product: about
// lambda ulp(h) relative, as the direct form's own rounding.
#pragma once

#include "SoftEulerVoxel.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace topovox
{
namespace euler
{
class SoftThresholdGroups
{
public:
  static constexpr int kSize = 16;            // thresholds a group: 4 exps a voxel for 64
  static constexpr double kMostExponent = 300; // |lambda (t - c)|: F_t within [e^-300, e^300]

  SoftThresholdGroups(std::vector<double> tau, double lambda)
    : Tau(std::move(tau))
    , Lambda(lambda)
    , Factor(Tau.size())
  {
    for (size_t g0 = 0; g0 < Tau.size(); g0 += kSize)
    {
      const size_t g1 = std::min(Tau.size(), g0 + kSize);
      const auto [lo, hi] = std::minmax_element(Tau.begin() + g0, Tau.begin() + g1);
      const double centre = 0.5 * (*lo + *hi);
      // An infinite threshold makes the span infinite (or NaN), which fails
      // the test: the direct form. A NaN one may escape minmax_element's
      // comparisons; its own terms are NaN in either form, as on the GPU,
      // and the others' are unaffected.
      const bool factored = Lambda * (0.5 * (*hi - *lo)) <= kMostExponent;
      Centre.push_back(factored ? centre : NAN);
      for (size_t t = g0; t < g1; ++t)
        Factor[t] = factored ? std::exp(Lambda * (centre - Tau[t])) : 0.0;
    }
  }

  // s[t] = sigmoid(lambda (tau[t] - h)) for every threshold t; h a number.
  void sigmoids(double h, double* s) const
  {
    const size_t n = Tau.size();
    for (size_t g0 = 0, g = 0; g0 < n; g0 += kSize, ++g)
    {
      const size_t g1 = std::min(n, g0 + kSize);
      const double centre = Centre[g];
      if (centre == centre)
      {
        const double e = std::exp(Lambda * (h - centre));
        const double* f = Factor.data();
        for (size_t t = g0; t < g1; ++t)
          s[t] = 1.0 / (1.0 + e * f[t]);
      }
      else
        for (size_t t = g0; t < g1; ++t)
          s[t] = softSigmoid(Lambda * (Tau[t] - h));
    }
  }

private:
  std::vector<double> Tau;
  double Lambda;
  std::vector<double> Factor; // F_t (0 in a group of the direct form)
  std::vector<double> Centre; // per group; NaN: the direct form
};
}
}
