// SinkhornChecks.h - the argument checks the dense and the grid Sinkhorn
// share, with the same messages.
#pragma once

#include "topovox/Sinkhorn.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace topovox
{
namespace transport
{
// reg, numItermax, and the two marginals (`what`: "histograms", "densities").
inline void checkSinkhornArguments(
  const SinkhornOptions& o, const std::vector<double>& a, const std::vector<double>& b, const char* what)
{
  if (!(o.reg > 0) || !std::isfinite(o.reg))
    throw std::invalid_argument("reg must be positive and finite");
  if (o.numItermax < 1)
    throw std::invalid_argument("numItermax must be at least 1");
  for (const auto* v : { &a, &b })
    for (double x : *v)
      if (!(x >= 0) || !std::isfinite(x))
        throw std::invalid_argument(std::string(what) + " must be nonnegative and finite");
}
}
}
