// test_sinkhorn.cpp - the Sinkhorn kernels (POT itself is the oracle in
// Testing/cli/test_cli_transport.py):
//  * --device cpu: converged plans have the marginals a and b, costs equal
//    <plan, M>, and the scaling and log-domain methods agree;
//  * --device gpu: the GPU's costs, plans, iterations and warnings equal the
//    CPU's (sums in another order: relative 1e-9), for both methods, many
//    pairs, zero marginal entries and too few iterations (exit 77 without a
//    GPU).
#include "topovox/Sinkhorn.h"

#include "KernelCheck.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace topovox;
using kernel_check::expect;

namespace
{
bool close(const std::vector<double>& x, const std::vector<double>& y, double tol)
{
  if (x.size() != y.size())
    return false;
  double scale = 0;
  for (double v : y)
    scale = std::max(scale, std::fabs(v));
  for (size_t k = 0; k < x.size(); ++k)
    if (std::fabs(x[k] - y[k]) > tol * std::max(scale, 1e-300))
      return false;
  return true;
}
}

int main(int argc, char** argv)
{
  bool gpu = false;
  if (!kernel_check::deviceFromArguments(argc, argv, gpu))
    return 77;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u01(0, 1);
  for (int64_t d : { 5, 33, 200 })
    for (int64_t pairs : { 1, 7 })
    {
      std::vector<double> a(static_cast<size_t>(pairs * d)), b(a.size()), M(static_cast<size_t>(d * d)), x(static_cast<size_t>(d));
      for (auto& v : x)
        v = u01(rng);
      for (int64_t i = 0; i < d; ++i)
        for (int64_t j = 0; j < d; ++j)
          M[static_cast<size_t>(i * d + j)] = (x[static_cast<size_t>(i)] - x[static_cast<size_t>(j)]) *
            (x[static_cast<size_t>(i)] - x[static_cast<size_t>(j)]);
      for (int64_t p = 0; p < pairs; ++p)
      {
        double sa = 0, sb = 0;
        for (int64_t k = 0; k < d; ++k)
        {
          sa += (a[static_cast<size_t>(p * d + k)] = u01(rng));
          sb += (b[static_cast<size_t>(p * d + k)] = u01(rng));
        }
        for (int64_t k = 0; k < d; ++k)
        {
          a[static_cast<size_t>(p * d + k)] /= sa;
          b[static_cast<size_t>(p * d + k)] /= sb;
        }
      }
      a[0] = 0; // a zero entry: the log domain must stay finite
      double sa = 0;
      for (int64_t k = 0; k < d; ++k)
        sa += a[static_cast<size_t>(k)];
      for (int64_t k = 0; k < d; ++k)
        a[static_cast<size_t>(k)] /= sa;
      const std::string shape = "d " + std::to_string(d) + " pairs " + std::to_string(pairs);
      for (SinkhornMethod method : { SinkhornMethod::Sinkhorn, SinkhornMethod::SinkhornLog })
        for (int iterations : { 1000, 3 })
        {
          SinkhornOptions o;
          o.reg = 0.05;
          o.method = method;
          o.numItermax = iterations;
          o.computePlans = true;
          o.device = Device::CPU;
          const std::string what = shape + (method == SinkhornMethod::Sinkhorn ? " scaling" : " log") +
            " iterations " + std::to_string(iterations);
          const SinkhornResult cpu = sinkhorn(a, b, M, pairs, d, o);
          if (gpu)
          {
            o.device = Device::GPU;
            const SinkhornResult g = sinkhorn(a, b, M, pairs, d, o);
            expect(g.device == Device::GPU, what + ": ran on the GPU");
            expect(close(g.costs, cpu.costs, 1e-9) && close(g.plans, cpu.plans, 1e-9), what + ": GPU equals CPU");
            expect(g.iterations == cpu.iterations, what + ": the same iterations");
            expect(g.warnings.empty() == cpu.warnings.empty(), what + ": the same warnings");
            continue;
          }
          bool finite = true;
          for (double v : cpu.plans)
            finite = finite && std::isfinite(v);
          expect(method == SinkhornMethod::Sinkhorn || finite, what + ": the log domain stays finite");
          if (iterations == 3 || method == SinkhornMethod::Sinkhorn)
            continue;
          // Converged: marginals and cost.
          bool ok = true;
          for (int64_t p = 0; p < pairs && ok; ++p)
          {
            double cost = 0;
            for (int64_t i = 0; i < d; ++i)
            {
              double row = 0;
              for (int64_t j = 0; j < d; ++j)
              {
                const double v = cpu.plans[static_cast<size_t>(p * d * d + i * d + j)];
                row += v;
                cost += v * M[static_cast<size_t>(i * d + j)];
              }
              ok = ok && std::fabs(row - a[static_cast<size_t>(p * d + i)]) < 1e-8;
            }
            ok = ok && std::fabs(cost - cpu.costs[static_cast<size_t>(p)]) <= 1e-12 * std::fabs(cost);
          }
          expect(ok, what + ": marginals and cost");
        }
    }
  return kernel_check::finish();
}
