// test_grid_sinkhorn.cpp - the convolutional Sinkhorn (GridSinkhorn.h):
//  * --device cpu: against the dense solver (Sinkhorn.h, itself checked
//    against POT in Testing/cli) given the grid's squared Euclidean cost
//    matrix, 1D to 3D with anisotropic spacing, both methods: the costs
//    within 1e-9 relative, the same number of iterations, the plan rebuilt
//    from the dual potentials equal to the dense plan, and the barycentric
//    displacement equal to the dense plan's; then zero masses, and bad input;
//  * --device gpu: the GPU against the CPU on the same grids and larger
//    ones (cuBLAS's products for the scaling method, odd sizes): the same
//    iterations and warnings, costs within 1e-12, potentials and
//    displacement within 1e-10 (cuBLAS sums in its own order; exp and log
//    differ in the last bit); a numerical error found on the device at the
//    check after it, with POT's outcome (the CPU's); exit 77 without a GPU.
#include "topovox/GridSinkhorn.h"
#include "topovox/Sinkhorn.h"

#include "KernelCheck.h"
#include "../src/transport/FactoredLogSumExp.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
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
  if (x == y)
    return true; // equal infinities too (the potentials of empty voxels)
  return std::fabs(x - y) <= tol * std::max(1.0, std::max(std::fabs(x), std::fabs(y)));
}

// The GPU's result against the CPU's on one problem.
void compareDevices(const std::vector<double>& a, const std::vector<double>& b, const int64_t dims[3],
  const double spacing[3], SinkhornOptions o, const std::string& what)
{
  o.device = Device::CPU;
  const GridSinkhornResult cpu = sinkhornGrid(a, b, dims, spacing, o);
  o.device = Device::GPU;
  const GridSinkhornResult gpu = sinkhornGrid(a, b, dims, spacing, o);
  expect(gpu.device == Device::GPU, what + ": ran on the GPU (" + gpu.warnings + ")");
  expect(gpu.iterations == cpu.iterations, what + ": iterations " + std::to_string(gpu.iterations) + " vs " +
      std::to_string(cpu.iterations));
  expect(gpu.warnings == cpu.warnings, what + ": the same warnings (" + gpu.warnings + " vs " + cpu.warnings + ")");
  // Both methods within rounding: cuBLAS sums the scaling method's products
  // in its own order, exp and log differ in the last bit.
  expect(close(gpu.cost, cpu.cost, 1e-12), what + ": cost within 1e-12");
  bool potentials = true, displacement = true;
  for (size_t k = 0; k < cpu.sourcePotential.size(); ++k)
    potentials = potentials && close(gpu.sourcePotential[k], cpu.sourcePotential[k], 1e-10) &&
      close(gpu.targetPotential[k], cpu.targetPotential[k], 1e-10);
  for (size_t k = 0; k < cpu.displacement.size(); ++k)
    displacement = displacement && close(gpu.displacement[k], cpu.displacement[k], 1e-10);
  expect(potentials, what + ": potentials within 1e-10");
  expect(displacement, what + ": displacement within 1e-10");
  // The cost alone: the same cost and iterations, no fields.
  o.computeFields = false;
  const GridSinkhornResult bare = sinkhornGrid(a, b, dims, spacing, o);
  expect(bare.cost == gpu.cost && bare.iterations == gpu.iterations && bare.warnings == gpu.warnings &&
      bare.sourcePotential.empty() && bare.displacement.empty() && bare.sourceGradient.empty(),
    what + ": the cost alone on the GPU equals the cost with the fields, and no field comes back");
}
} // namespace

int main(int argc, char** argv)
{
  bool gpu = false;
  if (!kernel_check::deviceFromArguments(argc, argv, gpu))
    return 77;
  // The GPU's iterations between checks run as CUDA graphs: a failed
  // capture is then an error (the GPU path fails and compareDevices finds
  // the CPU's result), unless the run asks otherwise (TOPOVOX_GRID_GRAPHS=0
  // tests the launches one at a time).
  if (gpu && !std::getenv("TOPOVOX_GRID_GRAPHS"))
    setenv("TOPOVOX_GRID_GRAPHS", "require", 1);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> uniform(0.05, 1.0);
  std::vector<std::vector<int64_t>> shapes = { { 11, 1, 1 }, { 5, 4, 1 }, { 3, 4, 3 }, { 1, 6, 2 } };
  if (gpu)
  {
    // Longer and odd axes, each axis the longest once.
    shapes.push_back({ 17, 18, 2 });
    shapes.push_back({ 70, 3, 1 });
    shapes.push_back({ 2, 5, 33 });
  }
  if (gpu && !std::getenv("TOPOVOX_TEST_SMALL"))
    shapes.push_back({ 40, 30, 20 }); // many thread blocks (left out under compute-sanitizer: too slow)
  const double spacing[3] = { 1.0, 0.5, 0.75 };
  for (const auto& s : shapes)
    for (int zeros = 0; zeros < 3; ++zeros)
      for (SinkhornMethod method : { SinkhornMethod::Sinkhorn, SinkhornMethod::SinkhornLog })
      {
        const int64_t dims[3] = { s[0], s[1], s[2] };
        const int64_t d = dims[0] * dims[1] * dims[2];
        if (zeros == 2 && d == dims[0])
          continue; // the line is the whole grid
        std::vector<double> a(static_cast<size_t>(d)), b(a.size());
        double sa = 0, sb = 0;
        for (size_t k = 0; k < a.size(); ++k)
        {
          a[k] = uniform(rng);
          b[k] = uniform(rng);
          if ((zeros == 1 && k % 3 == 1) || (zeros == 2 && k < static_cast<size_t>(dims[0])))
            a[k] = 0; // empty source voxels: -inf potentials, no displacement; 2: a whole line along x
          sa += a[k];
          sb += b[k];
        }
        for (size_t k = 0; k < a.size(); ++k)
        {
          a[k] /= sa;
          b[k] /= sb;
        }
        SinkhornOptions o;
        o.method = method;
        o.reg = method == SinkhornMethod::Sinkhorn ? 0.5 : 0.05;
        // Fewer iterations where many voxels or a sanitizer make them slow.
        o.numItermax = d > 10000 ? 300 : std::getenv("TOPOVOX_TEST_SMALL") ? 200 : 2000;
        o.computePlans = true;
        o.threads = gpu ? 0 : 2; // the CPU reference of the GPU run on all cores
        const std::string what = std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]) +
          (method == SinkhornMethod::Sinkhorn ? " scaling" : " log") +
          (zeros == 1 ? " with empty voxels" : zeros == 2 ? " with an empty line" : "");
        if (gpu)
        {
          compareDevices(a, b, dims, spacing, o, what);
          continue;
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
        const SinkhornResult dense = sinkhorn(a, b, M, 1, d, o);
        o.device = Device::CPU;
        const GridSinkhornResult grid = sinkhornGrid(a, b, dims, spacing, o);
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
        o.computeFields = false;
        const GridSinkhornResult bare = sinkhornGrid(a, b, dims, spacing, o);
        expect(bare.cost == grid.cost && bare.iterations == grid.iterations && bare.error == grid.error &&
            bare.sourcePotential.empty() && bare.targetGradient.empty() && bare.displacement.empty(),
          what + ": the cost alone equals the cost with the fields, and no field is made");
      }
  {
    // A numerical error between checks: with a tiny reg the kernel is the
    // identity, the empty voxels' u becomes 0 at iteration 0 and K^T u = 0
    // at iteration 1; the device finds it at iteration 10's check and must
    // still report iteration 1 and keep the scalings before it, as the CPU.
    const int64_t dims[3] = { 23, 1, 1 };
    const double unit[3] = { 1, 1, 1 };
    std::vector<double> a(23), b(23, 1.0 / 23);
    for (size_t k = 0; k < a.size(); ++k)
      a[k] = k % 3 == 1 ? 0.0 : 1.0 / 15;
    a[0] += 1.0 - [&] { double t = 0; for (double x : a) t += x; return t; }();
    SinkhornOptions o;
    o.reg = 1e-3;
    o.numItermax = 100;
    o.device = Device::CPU;
    const GridSinkhornResult cpu = sinkhornGrid(a, b, dims, unit, o);
    expect(cpu.warnings.find("numerical errors at iteration 1") != std::string::npos,
      "the CPU stops at iteration 1's numerical error (" + cpu.warnings + ")");
    // The scalings kept are those before iteration 1: the state after one
    // iteration, as a run of one iteration leaves it (no error there). (POT
    // and the dense solver stop at iteration 0 here: their (1 / a) K has
    // inf * 0 = NaN entries; the grid solver applies 1 / a after K.)
    SinkhornOptions once = o;
    once.numItermax = 1;
    const GridSinkhornResult first = sinkhornGrid(a, b, dims, unit, once);
    expect(first.cost == cpu.cost && first.sourcePotential == cpu.sourcePotential &&
        first.targetPotential == cpu.targetPotential && first.displacement == cpu.displacement,
      "numerical error at iteration 1: the CPU keeps the state after iteration 0 (cost " + std::to_string(cpu.cost) +
        " vs " + std::to_string(first.cost) + ")");
    // And that state by its definition, summed here with the dense kernel
    // (an oracle outside the solver): u = 1 / n, v = b / K^T u, u = a / K v;
    // the potentials are reg log u and reg log v.
    {
      const size_t n = a.size();
      std::vector<double> u(n, 1.0 / static_cast<double>(n)), v(n);
      auto K = [&](size_t p, size_t q) {
        const double d = static_cast<double>(p) - static_cast<double>(q);
        return std::exp(d * d / -o.reg);
      };
      for (size_t q = 0; q < n; ++q)
      {
        double s = 0;
        for (size_t p = 0; p < n; ++p)
          s += K(p, q) * u[p];
        v[q] = b[q] / s;
      }
      for (size_t p = 0; p < n; ++p)
      {
        double s = 0;
        for (size_t q = 0; q < n; ++q)
          s += K(p, q) * v[q];
        u[p] = 1.0 / ((1.0 / a[p]) * s);
      }
      bool same = cpu.sourcePotential.size() == n && cpu.targetPotential.size() == n;
      for (size_t k = 0; k < n && same; ++k)
        same = close(cpu.sourcePotential[k], o.reg * std::log(u[k]), 1e-12) &&
          close(cpu.targetPotential[k], o.reg * std::log(v[k]), 1e-12);
      expect(same,
        "numerical error at iteration 1: the potentials kept equal the state after iteration 0 by its definition");
    }
    if (gpu)
      compareDevices(a, b, dims, unit, o, "numerical error between checks");
  }
  if (gpu)
  {
    // The log domain's factored axes (GridSinkhornCUDA.cu: where the rows of
    // -C / reg span at most 600, and from 2^24 terms an axis; the shapes
    // above are direct): every axis of the longer shapes at reg 25, the
    // size threshold lifted, and a source line all empty (its potentials
    // -inf, its maximum too: the direct path on that line).
    setenv("TOPOVOX_GRID_FACTOR_MIN_TERMS", "0", 1);
    std::vector<std::vector<int64_t>> longer = { { 17, 18, 2 }, { 70, 3, 1 }, { 6, 5, 4 } };
    if (!std::getenv("TOPOVOX_TEST_SMALL"))
      longer.push_back({ 40, 30, 20 });
    for (const auto& s : longer)
    {
      const int64_t dims[3] = { s[0], s[1], s[2] };
      const size_t d = static_cast<size_t>(dims[0] * dims[1] * dims[2]);
      std::vector<double> a(d), b(d);
      double sa = 0, sb = 0;
      for (size_t k = 0; k < d; ++k)
      {
        a[k] = k < static_cast<size_t>(dims[0]) && s[0] == 6 ? 0.0 : uniform(rng);
        b[k] = uniform(rng);
        sa += a[k];
        sb += b[k];
      }
      for (size_t k = 0; k < d; ++k)
      {
        a[k] /= sa;
        b[k] /= sb;
      }
      SinkhornOptions o;
      o.method = SinkhornMethod::SinkhornLog;
      o.reg = s[0] == 6 ? 1.0 : 25.0;
      o.numItermax = 300;
      o.computePlans = true;
      compareDevices(a, b, dims, spacing, o, std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" +
        std::to_string(s[2]) + " log, reg " + std::to_string(o.reg) + (s[0] == 6 ? ", first line empty" : ""));
    }
    unsetenv("TOPOVOX_GRID_FACTOR_MIN_TERMS");
    // The one-launch kernel on small 2D grids (GridSinkhornCUDA.cu's
    // applyPlane; the 2D shapes above use it), both methods: one, two and
    // four rows a block, widths that leave partial warps, empty source
    // voxels (-inf in the log domain); and the same grids through cuBLAS's
    // products and the direct log-sum-exps with it turned off.
    std::vector<std::vector<int64_t>> planes = { { 37, 130, 1 }, { 100, 300, 1 }, { 60, 600, 1 } };
    if (!std::getenv("TOPOVOX_TEST_SMALL"))
      planes.push_back({ 256, 256, 1 });
    for (const char* plane : { "1", "0" })
    {
      setenv("TOPOVOX_GRID_PLANE", plane, 1);
      for (const auto& s : planes)
      {
        const int64_t dims[3] = { s[0], s[1], s[2] };
        const size_t d = static_cast<size_t>(dims[0] * dims[1]);
        std::vector<double> a(d), b(d);
        double sa = 0, sb = 0;
        for (size_t k = 0; k < d; ++k)
        {
          a[k] = k % 7 == 3 ? 0.0 : uniform(rng);
          b[k] = uniform(rng) + 0.01;
          sa += a[k];
          sb += b[k];
        }
        for (size_t k = 0; k < d; ++k)
        {
          a[k] /= sa;
          b[k] /= sb;
        }
        for (SinkhornMethod method : { SinkhornMethod::Sinkhorn, SinkhornMethod::SinkhornLog })
        {
          SinkhornOptions o;
          // reg 160 in the log domain: every row of -C / reg spans at most
          // 600 there, so it is factored (the plane's condition)
          o.reg = method == SinkhornMethod::Sinkhorn ? 40.0 : 160.0;
          o.numItermax = 60;
          o.method = method;
          compareDevices(a, b, dims, spacing, o, std::to_string(s[0]) + "x" + std::to_string(s[1]) +
              (method == SinkhornMethod::Sinkhorn ? " scaling" : " log") +
              (plane[0] == '1' ? ", one launch" : ", without it"));
        }
      }
    }
    unsetenv("TOPOVOX_GRID_PLANE");
    return kernel_check::finish();
  }
  // The GPU's test of a Toeplitz factor for the factored log-sum-exp, from
  // its diagonal (toeplitzRowMaxima), against factorRows on the matrix
  // itself: the same answer and row maxima, on rows that qualify, rows that
  // span too much, a value that is not finite, and random diagonals.
  {
    std::uniform_real_distribution<double> negative(-400.0, 0.0);
    for (int c = 0; c < 8; ++c)
    {
      const int64_t n = c < 4 ? 37 : 5 + c * 3;
      std::vector<double> diagonal(static_cast<size_t>(2 * n - 1));
      for (int64_t t = 0; t < 2 * n - 1; ++t)
      {
        const double d = static_cast<double>(t - (n - 1));
        diagonal[static_cast<size_t>(t)] = c == 0 ? d * d / -25.0 : c == 1 ? d * d / -1.0 : negative(rng);
      }
      if (c == 2)
        diagonal[5] = -INFINITY;
      std::vector<double> X(static_cast<size_t>(n * n)), E, rows, fromDiagonal;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
          X[static_cast<size_t>(i * n + j)] = diagonal[static_cast<size_t>(i - j + n - 1)];
      const bool full = transport::factorRows(X, n, E, rows);
      const bool toeplitz = transport::toeplitzRowMaxima(diagonal, n, fromDiagonal);
      expect(full == toeplitz && (!full || rows == fromDiagonal),
        "toeplitzRowMaxima agrees with factorRows (case " + std::to_string(c) + ": " + (full ? "factored" : "not") +
          ")");
      if (c < 3)
        expect(full == (c == 0), "case " + std::to_string(c) + " is factored only where its rows span at most 600");
    }
  }
  // Progress: every 10th iteration, the share of numItermax done, rising;
  // false stops the solve with topovox::Aborted.
  {
    const int64_t dims[3] = { 6, 5, 1 };
    const double unit[3] = { 1, 1, 1 };
    std::vector<double> a(30, 1.0 / 30), b(30);
    for (size_t k = 0; k < b.size(); ++k)
      b[k] = (1.0 + static_cast<double>(k)) / 465.0;
    SinkhornOptions o;
    o.reg = 0.5;
    o.numItermax = 45;
    o.stopThr = 0; // all 45 iterations run: checks at 0, 10, .., 40
    std::vector<double> seen;
    o.progress = [&](double f) {
      seen.push_back(f);
      return true;
    };
    const GridSinkhornResult r = sinkhornGrid(a, b, dims, unit, o);
    expect(r.iterations == 45 && seen.size() == 5 && seen.front() == 1.0 / 45 && seen.back() == 41.0 / 45 &&
        std::is_sorted(seen.begin(), seen.end()),
      "progress at every check, rising (" + std::to_string(seen.size()) + " calls)");
    int calls = 0;
    o.progress = [&](double) { return ++calls < 2; };
    bool aborted = false;
    try
    {
      sinkhornGrid(a, b, dims, unit, o);
    }
    catch (const Aborted&)
    {
      aborted = true;
    }
    expect(aborted && calls == 2, "progress returning false aborts the solve at that check");
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
