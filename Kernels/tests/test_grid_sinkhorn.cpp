// test_grid_sinkhorn.cpp - the convolutional Sinkhorn (GridSinkhorn.h)
// against the dense solver (Sinkhorn.h, itself checked against POT in
// Testing/cli) given the grid's squared Euclidean cost matrix, 1D to 3D with
// anisotropic spacing, both methods: the costs within 1e-9 relative, the
// same number of iterations, the plan rebuilt from the dual potentials equal
// to the dense plan, and the barycentric displacement equal to the dense
// plan's; then zero masses, and bad input.
#include "topovox/GridSinkhorn.h"
#include "topovox/Sinkhorn.h"

#include "KernelCheck.h"

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace topovox;
using kernel_check::expect;

namespace
{
bool close(double x, double y, double tol)
{
  return std::fabs(x - y) <= tol * std::max(1.0, std::max(std::fabs(x), std::fabs(y)));
}
} // namespace

int main()
{
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> uniform(0.05, 1.0);
  const std::vector<std::vector<int64_t>> shapes = { { 11, 1, 1 }, { 5, 4, 1 }, { 3, 4, 3 }, { 1, 6, 2 } };
  const double spacing[3] = { 1.0, 0.5, 0.75 };
  for (const auto& s : shapes)
    for (int zeros = 0; zeros < 2; ++zeros)
      for (SinkhornMethod method : { SinkhornMethod::Sinkhorn, SinkhornMethod::SinkhornLog })
      {
        const int64_t dims[3] = { s[0], s[1], s[2] };
        const int64_t d = dims[0] * dims[1] * dims[2];
        std::vector<double> a(static_cast<size_t>(d)), b(a.size());
        double sa = 0, sb = 0;
        for (size_t k = 0; k < a.size(); ++k)
        {
          a[k] = uniform(rng);
          b[k] = uniform(rng);
          if (zeros && k % 3 == 1)
            a[k] = 0; // empty source voxels: -inf potentials, no displacement
          sa += a[k];
          sb += b[k];
        }
        for (size_t k = 0; k < a.size(); ++k)
        {
          a[k] /= sa;
          b[k] /= sb;
        }
        // The dense cost of the grid.
        std::vector<double> M(static_cast<size_t>(d * d)), position(static_cast<size_t>(3 * d));
        for (int64_t p = 0; p < d; ++p)
        {
          const int64_t c[3] = { p % dims[0], (p / dims[0]) % dims[1], p / (dims[0] * dims[1]) };
          for (int ax = 0; ax < 3; ++ax)
            position[static_cast<size_t>(3 * p + ax)] = spacing[ax] * static_cast<double>(c[ax]);
        }
        for (int64_t p = 0; p < d; ++p)
          for (int64_t q = 0; q < d; ++q)
          {
            double m = 0;
            for (int ax = 0; ax < 3; ++ax)
            {
              const double t = position[static_cast<size_t>(3 * p + ax)] - position[static_cast<size_t>(3 * q + ax)];
              m += t * t;
            }
            M[static_cast<size_t>(p * d + q)] = m;
          }
        SinkhornOptions o;
        o.method = method;
        o.reg = method == SinkhornMethod::Sinkhorn ? 0.5 : 0.05;
        o.numItermax = 2000;
        o.computePlans = true;
        o.threads = 2;
        const SinkhornResult dense = sinkhorn(a, b, M, 1, d, o);
        const GridSinkhornResult grid = sinkhornGrid(a, b, dims, spacing, o);
        const std::string what = std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]) +
          (method == SinkhornMethod::Sinkhorn ? " scaling" : " log") + (zeros ? " with empty voxels" : "");
        expect(close(grid.cost, dense.costs[0], 1e-9),
          what + ": cost " + std::to_string(grid.cost) + " vs dense " + std::to_string(dense.costs[0]));
        expect(grid.iterations == dense.iterations[0], what + ": iterations " + std::to_string(grid.iterations) +
            " vs dense " + std::to_string(dense.iterations[0]));
        double scale = 0;
        for (double p : dense.plans)
          scale = std::max(scale, p);
        bool planOk = true, displacementOk = true;
        for (int64_t p = 0; p < d; ++p)
        {
          double row = 0, moved[3] = { 0, 0, 0 };
          for (int64_t q = 0; q < d; ++q)
          {
            const double P = dense.plans[static_cast<size_t>(p * d + q)];
            const double rebuilt = std::exp((grid.sourcePotential[static_cast<size_t>(p)] +
              grid.targetPotential[static_cast<size_t>(q)] - M[static_cast<size_t>(p * d + q)]) / o.reg);
            planOk = planOk && std::fabs(rebuilt - P) <= 1e-9 * scale;
            row += P;
            for (int ax = 0; ax < 3; ++ax)
              moved[ax] += P * position[static_cast<size_t>(3 * q + ax)];
          }
          for (int ax = 0; ax < 3; ++ax)
          {
            const double want = row > 0 ? moved[ax] / row - position[static_cast<size_t>(3 * p + ax)] : 0.0;
            displacementOk = displacementOk && std::fabs(grid.displacement[static_cast<size_t>(3 * p + ax)] - want) <= 1e-8;
          }
        }
        expect(planOk, what + ": the plan from the potentials equals the dense plan");
        expect(displacementOk, what + ": the displacement equals the dense plan's barycentres");
      }
  // Bad input is refused with a reason.
  const int64_t dims[3] = { 2, 2, 1 };
  const double unit[3] = { 1, 1, 1 };
  SinkhornOptions o;
  for (const auto& bad : { std::vector<double>{ 0.5, 0.5, -0.1, 0.1 }, std::vector<double>{ 1, 0, 0 } })
  {
    bool refused = false;
    try
    {
      sinkhornGrid(bad, std::vector<double>(bad.size(), 0.25), dims, unit, o);
    }
    catch (const std::invalid_argument&)
    {
      refused = true;
    }
    expect(refused, "bad densities are refused");
  }
  return kernel_check::finish();
}
