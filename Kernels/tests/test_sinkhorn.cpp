// test_sinkhorn.cpp - the Sinkhorn kernels (POT itself is the oracle in
// Testing/cli/test_cli_transport.py):
//  * --device cpu: converged plans have the marginals a and b, costs equal
//    <plan, M>, and the scaling and log-domain methods agree;
//  * --device gpu: the GPU's costs, plans, iterations and warnings equal the
//    CPU's (sums in another order: relative 1e-9), for both methods, many
//    pairs, zero marginal entries and too few iterations, a regularisation
//    so small that the scaling method fails on the first iteration (the
//    numerical-error path, pair by pair), histograms longer than a thread
//    block's shared memory would hold, and more pairs than a period of the
//    stopping rule lets converge together (exit 77 without a GPU).
#include "topovox/Sinkhorn.h"

#include "KernelCheck.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace topovox;
using kernel_check::expect;

namespace
{
bool close(const std::vector<double>& x, const std::vector<double>& y, double tol);

// Random normalised histograms (pairs x d) and the squared distance between
// random points of [0, 1] as the cost.
void randomProblem(std::mt19937_64& rng, int64_t pairs, int64_t d, std::vector<double>& a, std::vector<double>& b,
  std::vector<double>& M)
{
  std::uniform_real_distribution<double> u01(0, 1);
  std::vector<double> x(static_cast<size_t>(d));
  for (auto& v : x)
    v = u01(rng);
  M.resize(static_cast<size_t>(d * d));
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j)
      M[static_cast<size_t>(i * d + j)] = (x[static_cast<size_t>(i)] - x[static_cast<size_t>(j)]) *
        (x[static_cast<size_t>(i)] - x[static_cast<size_t>(j)]);
  a.resize(static_cast<size_t>(pairs * d));
  b.resize(a.size());
  for (auto* h : { &a, &b })
    for (int64_t p = 0; p < pairs; ++p)
    {
      double sum = 0;
      for (int64_t k = 0; k < d; ++k)
        sum += ((*h)[static_cast<size_t>(p * d + k)] = u01(rng));
      for (int64_t k = 0; k < d; ++k)
        (*h)[static_cast<size_t>(p * d + k)] /= sum;
    }
}

// The CPU's result; with `gpu`, the GPU's costs, plans, iterations and
// warnings against it.
SinkhornResult compareDevices(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& M,
  int64_t pairs, int64_t d, SinkhornOptions o, const std::string& what, bool gpu)
{
  o.computePlans = true;
  o.device = Device::CPU;
  const SinkhornResult cpu = sinkhorn(a, b, M, pairs, d, o);
  if (!gpu)
    return cpu;
  o.device = Device::GPU;
  const SinkhornResult g = sinkhorn(a, b, M, pairs, d, o);
  expect(g.device == Device::GPU, what + ": ran on the GPU");
  expect(close(g.costs, cpu.costs, 1e-9) && close(g.plans, cpu.plans, 1e-9), what + ": GPU equals CPU");
  expect(g.iterations == cpu.iterations, what + ": the same iterations");
  expect(g.warnings.empty() == cpu.warnings.empty(), what + ": the same warnings");
  return cpu;
}

// Cases for the GPU path's pair-by-pair stopping; on the CPU, that they
// exercise it (the longest histograms only with a GPU).
void stoppingCases(bool gpu)
{
  std::mt19937_64 rng(11);
  std::vector<double> a, b, M;
  // reg 1e-4: K underflows to 0 away from the diagonal; with a zero mass
  // the CPU's (1 / a_i) K_ij products are inf x 0 = NaN: a numerical error
  // at the first iteration, previous scalings kept, for that pair only.
  randomProblem(rng, 5, 40, a, b, M);
  for (int64_t k = 0; k < 40; ++k)
    a[static_cast<size_t>(2 * 40 + k)] = k == 3 ? 0.0 : a[static_cast<size_t>(2 * 40 + k)];
  SinkhornOptions tiny;
  tiny.reg = 1e-4;
  tiny.numItermax = 50;
  const SinkhornResult failed = compareDevices(a, b, M, 5, 40, tiny, "reg 1e-4 with a zero mass", gpu);
  const size_t at = failed.warnings.find("numerical errors");
  expect(failed.warnings.find("pair 2: numerical errors at iteration 0") != std::string::npos &&
      failed.warnings.find("numerical errors", at + 1) == std::string::npos && failed.iterations[2] == 1 &&
      failed.iterations[0] == 50,
    "reg 1e-4: only the pair with the zero mass fails, at the first iteration (" + failed.warnings + ")");
  // Pairs of different difficulty (their masses spread unevenly) converge
  // at different checks, each stopping on its own.
  randomProblem(rng, 37, 64, a, b, M);
  for (int64_t p = 0; p < 37; ++p)
  {
    double sum = 0;
    for (int64_t k = 0; k < 64; ++k)
      sum += (a[static_cast<size_t>(p * 64 + k)] = std::pow(a[static_cast<size_t>(p * 64 + k)], 1.0 + p / 6.0));
    for (int64_t k = 0; k < 64; ++k)
      a[static_cast<size_t>(p * 64 + k)] /= sum;
  }
  for (SinkhornMethod method : { SinkhornMethod::Sinkhorn, SinkhornMethod::SinkhornLog })
  {
    SinkhornOptions o;
    o.reg = 0.2;
    o.method = method;
    o.numItermax = 500;
    o.stopThr = 1e-7;
    const SinkhornResult r = compareDevices(a, b, M, 37, 64, o, std::string("37 pairs ") +
      (method == SinkhornMethod::Sinkhorn ? "scaling" : "log"), gpu);
    const auto span = std::minmax_element(r.iterations.begin(), r.iterations.end());
    expect(*span.first < *span.second && *span.second < 500,
      "37 pairs: all converge, at different iterations (" + std::to_string(*span.first) + " to " +
        std::to_string(*span.second) + ")");
  }
  if (!gpu)
    return;
  // The resident kernel (SinkhornResidentCUDA.cu), both methods: 70 pairs
  // take two rounds of a block's warps; a pair with a numerical error
  // (scaling) or a zero entry (log) among them; d 1000 leaves the last
  // block rows past the end; 2 pairs, a partial group of four. 27
  // iterations: two periods and a tail.
  randomProblem(rng, 70, 96, a, b, M);
  for (int64_t k = 0; k < 96; ++k)
    a[static_cast<size_t>(41 * 96 + k)] = k == 5 ? 0.0 : a[static_cast<size_t>(41 * 96 + k)];
  for (SinkhornMethod method : { SinkhornMethod::Sinkhorn, SinkhornMethod::SinkhornLog })
    for (double reg : { 0.05, 1e-4 })
    {
      const bool log = method == SinkhornMethod::SinkhornLog;
      if (log && reg < 0.01)
        continue; // rows spanning 1e4: the log domain's one-pass row kernels, tested below
      SinkhornOptions o;
      o.reg = reg;
      o.method = method;
      o.numItermax = 27;
      const SinkhornResult r = compareDevices(a, b, M, 70, 96, o, "70 pairs d 96 reg " + std::to_string(reg) +
        (log ? " log" : " scaling"), true);
      expect(reg > 0.01 || r.warnings.find("pair 41: numerical errors") != std::string::npos,
        "70 pairs reg 1e-4: pair 41 (a zero mass) fails (" + r.warnings.substr(0, 200) + ")");
    }
  for (int64_t pairs : { 1, 2, 9 })
  {
    randomProblem(rng, pairs, 1000, a, b, M);
    for (SinkhornMethod method : { SinkhornMethod::Sinkhorn, SinkhornMethod::SinkhornLog })
    {
      SinkhornOptions o;
      o.reg = 0.05;
      o.method = method;
      o.numItermax = 23;
      compareDevices(a, b, M, pairs, 1000, o, "d 1000 pairs " + std::to_string(pairs) +
        (method == SinkhornMethod::Sinkhorn ? " scaling" : " log"), true);
    }
  }
  // The log domain where the resident kernel may not factor its sums
  // (reg 0.001: the cost's rows span up to 1000 > 600), found by the
  // device after the set-up: one and three pairs go back to the row
  // kernels' one-pass log-sum-exp (the block and the warp kernel).
  for (int64_t pairs : { 1, 3 })
  {
    randomProblem(rng, pairs, 150, a, b, M);
    SinkhornOptions o;
    o.reg = 0.001;
    o.method = SinkhornMethod::SinkhornLog;
    o.numItermax = 25;
    compareDevices(a, b, M, pairs, 150, o, "log, reg 0.001, pairs " + std::to_string(pairs), true);
  }
  // More iterations than one resident launch runs (1,000): a second,
  // partial launch (the log domain's ring of maxima carried over); then
  // pairs that converge in the second launch, at different iterations, the
  // launch ending at the check that stops the last.
  randomProblem(rng, 5, 64, a, b, M);
  for (SinkhornMethod method : { SinkhornMethod::Sinkhorn, SinkhornMethod::SinkhornLog })
    for (double stopThr : { 0.0, 1e-13 })
    {
      SinkhornOptions o;
      o.reg = 0.003;
      o.method = method;
      o.numItermax = 2345;
      o.stopThr = stopThr;
      const std::string what = std::string(method == SinkhornMethod::Sinkhorn ? "scaling" : "log") +
        ", 5 pairs, 2345 iterations, stopThr " + std::to_string(stopThr);
      const SinkhornResult r = compareDevices(a, b, M, 5, 64, o, what, true);
      const auto span = std::minmax_element(r.iterations.begin(), r.iterations.end());
      if (stopThr > 0)
        expect(*span.first > 1000 && *span.first < *span.second,
          what + ": the pairs stop at different iterations past the first launch (" + std::to_string(*span.first) +
            " to " + std::to_string(*span.second) + ")");
    }
  // Longer histograms than the shared memory of a block would hold.
  randomProblem(rng, 3, 1300, a, b, M);
  for (SinkhornMethod method : { SinkhornMethod::Sinkhorn, SinkhornMethod::SinkhornLog })
    for (int iterations : { 3, 25 })
    {
      SinkhornOptions o;
      o.reg = 0.05;
      o.method = method;
      o.numItermax = iterations;
      compareDevices(a, b, M, 3, 1300, o, std::string("d 1300 ") +
        (method == SinkhornMethod::Sinkhorn ? "scaling" : "log") + " iterations " + std::to_string(iterations), true);
    }
  // The tile kernel (4 pairs and more): its column ranges split over blocks
  // (a partial last chunk at d 200), tiles of 16 pairs and a partial one;
  // in the log domain its factored sums at reg 0.05 and 0.002 (the cost's
  // rows span up to 1 / reg = 500 < 600) and the one-pass log-sum-exp where
  // they are refused (reg 0.001: a span of 1000 underflows), and beside
  // finite pairs in the same tile one with a zero marginal (potentials
  // -inf and +inf: the one-pass path for its tile).
  for (int64_t d : { 200, 1300 })
  {
    randomProblem(rng, 20, d, a, b, M);
    for (SinkhornMethod method : { SinkhornMethod::Sinkhorn, SinkhornMethod::SinkhornLog })
      for (double reg : { 0.05, 0.002, 0.001 })
      {
        if (method == SinkhornMethod::Sinkhorn && reg < 0.05)
          continue; // K underflows: numerical errors whose iteration depends on the order of the sums
        SinkhornOptions o;
        o.reg = reg;
        o.method = method;
        o.numItermax = 40;
        compareDevices(a, b, M, 20, d, o, "20 pairs d " + std::to_string(d) + " reg " + std::to_string(reg) +
          (method == SinkhornMethod::Sinkhorn ? " scaling" : " log"), true);
      }
    std::vector<double> zeroed = b;
    std::fill(zeroed.begin() + 5 * d, zeroed.begin() + 6 * d, 0.0);
    SinkhornOptions o;
    o.method = SinkhornMethod::SinkhornLog;
    o.numItermax = 30;
    const SinkhornResult r = compareDevices(a, zeroed, M, 20, d, o, "20 pairs d " + std::to_string(d) +
      " log, pair 5's target all zero", true);
    expect(std::isfinite(r.costs[4]) && std::isfinite(r.costs[6]), "pairs beside the zero target stay finite");
  }
}

// Within tol of the largest finite |y|; a value that is not finite (NaN,
// +-inf) only equals the same.
bool close(const std::vector<double>& x, const std::vector<double>& y, double tol)
{
  if (x.size() != y.size())
    return false;
  double scale = 0;
  for (double v : y)
    if (std::isfinite(v))
      scale = std::max(scale, std::fabs(v));
  for (size_t k = 0; k < x.size(); ++k)
  {
    if (!std::isfinite(x[k]) || !std::isfinite(y[k]))
    {
      if (!(x[k] == y[k] || (std::isnan(x[k]) && std::isnan(y[k]))))
        return false;
    }
    else if (std::fabs(x[k] - y[k]) > tol * std::max(scale, 1e-300))
      return false;
  }
  return true;
}
}

// The CPU runs several pairs of d >= 256 together (K, or the log domain's
// factored E, read once per half-iteration for a tile of pairs): each
// pair's results must be those of the pair alone, bit for bit, including
// where pairs stop at different checks, on a numerical error, or (log
// domain) are summed by the definition beside factored ones (an all-zero
// target; reg 0.001: nothing factored, the pairs one by one). d = 300: a
// partial last group of columns; 6 pairs: a tile of 4 and one of 2.
void batchEqualsAlone()
{
  std::mt19937_64 rng(23);
  std::vector<double> a, b, M;
  const int64_t pairs = 6, d = 300;
  randomProblem(rng, pairs, d, a, b, M);
  for (int64_t p = 0; p < pairs; ++p)
  {
    double sum = 0;
    for (int64_t k = 0; k < d; ++k)
      sum += (a[static_cast<size_t>(p * d + k)] = std::pow(a[static_cast<size_t>(p * d + k)], 1.0 + p));
    for (int64_t k = 0; k < d; ++k)
      a[static_cast<size_t>(p * d + k)] /= sum;
  }
  const auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  struct Case
  {
    SinkhornMethod method;
    double reg;
  };
  for (const Case& c : { Case{ SinkhornMethod::Sinkhorn, 0.2 }, Case{ SinkhornMethod::Sinkhorn, 1e-4 },
         Case{ SinkhornMethod::SinkhornLog, 0.2 }, Case{ SinkhornMethod::SinkhornLog, 0.001 } })
  {
    const double reg = c.reg;
    const bool log = c.method == SinkhornMethod::SinkhornLog;
    std::vector<double> aa = a, bb = b;
    if (!log && reg < 0.01)
      aa[static_cast<size_t>(2 * d + 7)] = 0.0; // pair 2: (1 / 0) K = inf x 0 = NaN, a numerical error
    if (log && reg > 0.01)
      std::fill(bb.begin() + 4 * d, bb.begin() + 5 * d, 0.0); // pair 4: -inf potentials, summed by the definition
    SinkhornOptions o;
    o.method = c.method;
    o.reg = reg;
    o.numItermax = 300;
    o.stopThr = 1e-7;
    o.computePlans = true;
    o.device = Device::CPU;
    o.threads = 2;
    const SinkhornResult together = sinkhorn(aa, bb, M, pairs, d, o);
    bool equal = true, stopsDiffer = false;
    for (int64_t p = 0; p < pairs; ++p)
    {
      const auto slice = [&](const std::vector<double>& x) {
        return std::vector<double>(x.begin() + p * d, x.begin() + (p + 1) * d);
      };
      const SinkhornResult alone = sinkhorn(slice(aa), slice(bb), M, 1, d, o);
      const size_t q = static_cast<size_t>(p);
      equal = equal && same(alone.costs[0], together.costs[q]) && alone.iterations[0] == together.iterations[q] &&
        same(alone.errors[0], together.errors[q]) &&
        std::equal(alone.plans.begin(), alone.plans.end(), together.plans.begin() + p * d * d, same);
      const std::string said = alone.warnings.empty() ? "" : alone.warnings.substr(alone.warnings.find(": ") + 2);
      equal = equal &&
        (said.empty() || together.warnings.find("pair " + std::to_string(p) + ": " + said) != std::string::npos);
      stopsDiffer = stopsDiffer || together.iterations[q] != together.iterations[0];
    }
    const std::string what = std::string(log ? "log" : "scaling") + ", reg " + std::to_string(reg);
    expect(equal, what + ", 6 pairs of d 300 together: each pair as alone, bit for bit");
    if (reg != 0.001) // there none converges in 300 iterations
      expect(stopsDiffer, what + ": the pairs stop at different iterations (" + together.warnings + ")");
  }
}

// Bad arguments: std::invalid_argument with the reason, on the device
// asked for (a cost matrix that is not finite is found by the CPU's scan or
// by the GPU's set-up kernel, with the same message), for both methods and
// a matrix large enough for the GPU's staged upload.
void badArguments(bool gpu)
{
  std::mt19937_64 rng(41);
  for (int64_t d : { 7, 1024 })
  {
    std::vector<double> a, b, M;
    randomProblem(rng, 2, d, a, b, M);
    auto message = [&](const std::vector<double>& aa, const std::vector<double>& MM, SinkhornOptions o) {
      o.device = gpu ? Device::GPU : Device::CPU;
      try
      {
        sinkhorn(aa, b, MM, 2, d, o);
      }
      catch (const std::invalid_argument& e)
      {
        return std::string(e.what());
      }
      return std::string("(nothing thrown)");
    };
    const std::string at = " (d " + std::to_string(d) + (gpu ? ", gpu)" : ", cpu)");
    for (SinkhornMethod method : { SinkhornMethod::Sinkhorn, SinkhornMethod::SinkhornLog })
      for (double bad : { std::nan(""), HUGE_VAL, -HUGE_VAL })
      {
        std::vector<double> MM = M;
        MM[static_cast<size_t>(d * d - 2)] = bad; // the last slice of a staged upload
        SinkhornOptions o;
        o.method = method;
        o.numItermax = 20;
        const std::string said = message(a, MM, o);
        expect(said == "the cost matrix must be finite", "M with " + std::to_string(bad) + at + ": " + said);
      }
    std::vector<double> negative = a;
    negative[3] = -0.1;
    expect(message(negative, M, SinkhornOptions()) == "histograms must be nonnegative and finite",
      "a negative histogram value" + at);
    SinkhornOptions zeroReg;
    zeroReg.reg = 0;
    expect(message(a, M, zeroReg) == "reg must be positive and finite", "reg 0" + at);
    std::vector<double> shortM(M.begin(), M.end() - 1);
    expect(message(a, shortM, SinkhornOptions()).find("the cost matrix must be d x d") == 0, "M too short" + at);
  }
}

// Progress and abort on the CPU: pairs in parallel report as pairs finish
// (worker 0's), pairs together (d >= 256) at every check; false throws
// topovox::Aborted.
void progressAndAbort()
{
  std::mt19937_64 rng(31);
  for (int64_t d : { 40, 300 })
  {
    std::vector<double> a, b, M;
    randomProblem(rng, 6, d, a, b, M);
    SinkhornOptions o;
    o.reg = 0.2;
    o.numItermax = 45;
    o.stopThr = 0; // every pair runs all 45 iterations
    o.device = Device::CPU;
    o.threads = 2;
    std::vector<double> seen;
    o.progress = [&](double f) {
      seen.push_back(f);
      return true;
    };
    sinkhorn(a, b, M, 6, d, o);
    const bool together = d >= 256;
    expect(!seen.empty() && std::is_sorted(seen.begin(), seen.end()) && seen.back() <= 1.0 &&
        (!together || (seen.size() == 5 && seen.back() == 41.0 / 45)),
      "d " + std::to_string(d) + ": progress rises (" + std::to_string(seen.size()) + " calls, last " +
        std::to_string(seen.empty() ? -1.0 : seen.back()) + ")");
    int calls = 0;
    o.progress = [&](double) { return ++calls < 2; };
    bool aborted = false;
    try
    {
      sinkhorn(a, b, M, 6, d, o);
    }
    catch (const Aborted&)
    {
      aborted = true;
    }
    expect(aborted && calls == 2, "d " + std::to_string(d) + ": progress returning false aborts the solve");
  }
}

int main(int argc, char** argv)
{
  bool gpu = false;
  if (!kernel_check::deviceFromArguments(argc, argv, gpu))
    return 77;
  if (!gpu)
  {
    batchEqualsAlone();
    progressAndAbort();
  }
  stoppingCases(gpu);
  badArguments(gpu);
  std::mt19937_64 rng(5);
  for (int64_t d : { 5, 33, 200 })
    for (int64_t pairs : { 1, 7 })
    {
      std::vector<double> a, b, M;
      randomProblem(rng, pairs, d, a, b, M);
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
          const std::string what = shape + (method == SinkhornMethod::Sinkhorn ? " scaling" : " log") +
            " iterations " + std::to_string(iterations);
          const SinkhornResult cpu = compareDevices(a, b, M, pairs, d, o, what, gpu);
          if (gpu)
            continue;
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
