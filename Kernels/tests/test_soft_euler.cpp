// test_soft_euler.cpp - the differentiable Euler curve (SoftEuler.h):
//  * as lambda grows it is the exact directional Euler curve (the Euler
//    transform of EulerTransform.h, itself checked against a brute force),
//    thresholds kept away from the heights;
//  * every gradient (images, thresholds, direction, alpha) against central
//    finite differences in float64, on random images without ties, V and T,
//    2D and 3D, batches;
//  * several directions in one call: each curve and dL/du_d those of the
//    direction alone, the other gradients the sums over the directions;
//    their gradients against finite differences too;
//  * with --device gpu: the GPU results against the CPU's (float64 within
//    rounding of the summation order, float32 within float tolerance), one
//    direction and several.
//
//   topovox_soft_euler_tests [--device cpu|gpu]   (gpu: exit 77 without one)
#include "topovox/EulerTransform.h"
#include "topovox/SoftEuler.h"

#include "KernelCheck.h"

#ifdef TOPOVOX_TEST_CUDA
#include "DeviceCopies.h"
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace topovox;

namespace
{
using kernel_check::expect;

struct Case
{
  int64_t batch, dims[3];
  Construction construction;
  std::vector<double> images, thresholds, direction, alpha; // direction: 3 per direction
  double lambda, weight;
  size_t directions() const { return direction.size() / 3; }
  size_t curveValues() const { return static_cast<size_t>(batch) * directions() * thresholds.size(); }
};

SoftEulerProblem problemOf(const Case& c)
{
  SoftEulerProblem p;
  p.type = ScalarType::Float64;
  p.construction = c.construction;
  p.batch = c.batch;
  for (int a = 0; a < 3; ++a)
    p.dims[a] = c.dims[a];
  p.thresholdCount = static_cast<int>(c.thresholds.size());
  p.directionCount = static_cast<int>(c.directions());
  p.lambda = c.lambda;
  p.weight = c.weight;
  p.spacing[0] = 0.5;
  p.origin[2] = -1;
  p.images = c.images.data();
  p.thresholds = c.thresholds.data();
  p.direction = c.direction.data();
  p.alpha = c.alpha.data();
  return p;
}

std::vector<double> forward(const Case& c)
{
  std::vector<double> chi(c.curveValues());
  softEulerForward(problemOf(c), chi.data());
  return chi;
}

// L = sum G * chi, for the finite differences.
double loss(const Case& c, const std::vector<double>& G)
{
  const auto chi = forward(c);
  double l = 0;
  for (size_t k = 0; k < chi.size(); ++k)
    l += G[k] * chi[k];
  return l;
}

// |a - b| relative to 1 + the larger magnitude (NaN when either is NaN or
// both infinite).
double relativeDifference(double a, double b)
{
  return std::fabs(a - b) / (1.0 + std::max(std::fabs(a), std::fabs(b)));
}

bool close(double a, double b, double tol)
{
  return relativeDifference(a, b) <= tol;
}

void checkGradients(const std::string& name, Case c, std::mt19937_64& rng)
{
  std::normal_distribution<double> normal;
  std::vector<double> G(c.curveValues());
  for (auto& g : G)
    g = normal(rng);
  std::vector<double> gx(c.images.size()), gt(c.thresholds.size()), gu(c.direction.size()), ga(1);
  softEulerBackward(problemOf(c), G.data(), gx.data(), gt.data(), gu.data(), ga.data());
  const double eps = 1e-6, tol = 1e-5;
  auto fd = [&](std::vector<double>& v, size_t k) {
    const double keep = v[k];
    v[k] = keep + eps;
    const double up = loss(c, G);
    v[k] = keep - eps;
    const double down = loss(c, G);
    v[k] = keep;
    return (up - down) / (2 * eps);
  };
  bool ok = true;
  for (size_t k = 0; k < c.images.size(); k += std::max<size_t>(1, c.images.size() / 40))
    ok = ok && close(gx[k], fd(c.images, k), tol);
  expect(ok, name + ": dL/dX equals finite differences");
  ok = true;
  for (size_t k = 0; k < c.thresholds.size(); ++k)
    ok = ok && close(gt[k], fd(c.thresholds, k), tol);
  expect(ok, name + ": dL/dthresholds equals finite differences");
  ok = true;
  for (size_t k = 0; k < c.direction.size(); ++k)
    ok = ok && close(gu[k], fd(c.direction, k), tol);
  expect(ok, name + ": dL/du equals finite differences");
  expect(close(ga[0], fd(c.alpha, 0), tol), name + ": dL/dalpha equals finite differences");
}

Case randomCase(std::mt19937_64& rng, int64_t batch, int64_t nx, int64_t ny, int64_t nz, Construction con)
{
  std::uniform_real_distribution<double> u01(0, 1);
  Case c;
  c.batch = batch;
  c.dims[0] = nx, c.dims[1] = ny, c.dims[2] = nz;
  c.construction = con;
  c.images.resize(static_cast<size_t>(batch * nx * ny * nz));
  for (auto& v : c.images)
    v = u01(rng);
  c.thresholds = { -0.2, 0.15, 0.4, 0.55, 0.8, 1.3 };
  c.direction = { 0.3, -0.5, 0.8 };
  c.alpha = { 0.2 };
  c.lambda = 3;
  c.weight = 1;
  return c;
}

// The forward by its definition, for one 2D image (nz = 1) in the V
// construction: every cell listed (vertices, the edges along x and y, the
// squares), its height the max of its vertices' heights h(p) = weight x(p)
// + alpha <u, p>, p = origin + spacing * index, and chi(t) the sum of
// (-1)^dim sigmoid(lambda (t - h)) with the sigmoid in its direct form.
// No ownership, no factoring: the oracle of the CPU path's threshold groups.
std::vector<double> definitionChi2D(const Case& c)
{
  const SoftEulerProblem p = problemOf(c);
  const int64_t nx = c.dims[0], ny = c.dims[1];
  auto height = [&](int64_t i, int64_t j) {
    const double pos[3] = { p.origin[0] + p.spacing[0] * double(i), p.origin[1] + p.spacing[1] * double(j),
      p.origin[2] };
    return c.weight * c.images[static_cast<size_t>(i + nx * j)] +
      c.alpha[0] * (c.direction[0] * pos[0] + c.direction[1] * pos[1] + c.direction[2] * pos[2]);
  };
  auto sigmoid = [](double z) { return z >= 0 ? 1.0 / (1.0 + std::exp(-z)) : std::exp(z) / (1.0 + std::exp(z)); };
  std::vector<double> chi(c.thresholds.size(), 0.0);
  for (size_t t = 0; t < chi.size(); ++t)
    for (int64_t j = 0; j < ny; ++j)
      for (int64_t i = 0; i < nx; ++i)
      {
        const double h = height(i, j), tau = c.thresholds[t];
        chi[t] += sigmoid(c.lambda * (tau - h));
        if (i + 1 < nx)
          chi[t] -= sigmoid(c.lambda * (tau - std::max(h, height(i + 1, j))));
        if (j + 1 < ny)
          chi[t] -= sigmoid(c.lambda * (tau - std::max(h, height(i, j + 1))));
        if (i + 1 < nx && j + 1 < ny)
        {
          const double top = std::max(height(i, j + 1), height(i + 1, j + 1));
          chi[t] += sigmoid(c.lambda * (tau - std::max(std::max(h, height(i + 1, j)), top)));
        }
      }
  return chi;
}

#ifdef TOPOVOX_TEST_CUDA

template <typename T>
void compareDevices(const std::string& name, const Case& c, double tol)
{
  auto cast = [](const std::vector<double>& v) { return std::vector<T>(v.begin(), v.end()); };
  SoftEulerProblem p = problemOf(c);
  p.type = sizeof(T) == 4 ? ScalarType::Float32 : ScalarType::Float64;
  const auto images = cast(c.images), thresholds = cast(c.thresholds), direction = cast(c.direction),
             alpha = cast(c.alpha);
  const size_t nc = c.curveValues(), nu = c.direction.size();
  std::vector<T> G(nc);
  for (size_t k = 0; k < nc; ++k)
    G[k] = static_cast<T>(std::sin(1.0 + k));
  // CPU.
  p.images = images.data(), p.thresholds = thresholds.data(), p.direction = direction.data(), p.alpha = alpha.data();
  std::vector<T> chi(nc), gx(images.size()), gt(thresholds.size()), gu(nu), ga(1);
  softEulerForward(p, chi.data());
  softEulerBackward(p, G.data(), gx.data(), gt.data(), gu.data(), ga.data());
  // GPU.
  OnDevice d;
  p.memory = MemorySpace::Device;
  p.images = d.copy(images), p.thresholds = d.copy(thresholds), p.direction = d.copy(direction),
  p.alpha = d.copy(alpha);
  T* dchi = d.copy(std::vector<T>(nc));
  T *dgx = d.copy(std::vector<T>(images.size())), *dgt = d.copy(std::vector<T>(thresholds.size())),
    *dgu = d.copy(std::vector<T>(nu)), *dga = d.copy(std::vector<T>(1));
  softEulerForward(p, dchi);
  softEulerBackward(p, d.copy(G), dgx, dgt, dgu, dga);
  // (A mismatch prints the worst relative difference and where.)
  auto same = [&](const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size())
      return false;
    double worst = 0;
    size_t at = 0;
    for (size_t k = 0; k < a.size(); ++k)
    {
      const double r = relativeDifference(a[k], b[k]);
      if (!(r <= worst))
        worst = r, at = k;
      if (r != r)
        break; // NaN: the worst there is
    }
    if (!(worst <= tol))
      std::printf("  %s: CPU %.9g, GPU %.9g at %zu (relative difference %.3g, tolerance %.3g)\n", name.c_str(),
        double(a[at]), double(b[at]), at, worst, tol);
    return worst <= tol;
  };
  expect(same(chi, d.back(dchi, nc)), name + ": GPU chi equals CPU chi");
  expect(same(gx, d.back(dgx, gx.size())), name + ": GPU dL/dX equals CPU");
  expect(same(gt, d.back(dgt, gt.size())), name + ": GPU dL/dthresholds equals CPU");
  expect(same(gu, d.back(dgu, nu)) && same(ga, d.back(dga, 1)), name + ": GPU dL/du, dL/dalpha equal CPU");
}
#endif
} // namespace

int main(int argc, char** argv)
{
  bool gpu = false;
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--device"))
      gpu = !std::strcmp(argv[i + 1], "gpu");
  if (gpu)
  {
#ifdef TOPOVOX_TEST_CUDA
    std::string warn;
    if (resolveDevice(Device::GPU, &warn) != Device::GPU)
    {
      std::printf("SKIP: %s\n", warn.c_str());
      return 77;
    }
#else
    std::printf("SKIP: built without CUDA\n");
    return 77;
#endif
  }
  std::mt19937_64 rng(3);

  // 1. Large lambda: the exact directional curve, on integer images (ties
  // everywhere: the ownership rule must match the exact transform's).
  for (Construction con : { Construction::V, Construction::T })
    for (const auto& shape : { std::vector<int64_t>{ 7, 6, 1 }, std::vector<int64_t>{ 5, 4, 6 } })
    {
      Case c = randomCase(rng, 1, shape[0], shape[1], shape[2], con);
      for (auto& v : c.images)
        v = std::floor(v * 4);
      c.images[3] = std::nan("");
      c.direction = { 0.6, 0.0, 0.8 };
      c.alpha = { 0.5 };
      c.weight = 2;
      // Heights are multiples of 0.05 here; thresholds sit between them.
      c.thresholds = { -1.025, 0.025, 1.225, 2.525, 3.975, 5.325, 7.025, 9.975 };
      c.lambda = 4000;
      EulerTransformOptions o;
      o.construction = con;
      o.directions = { { 0.6, 0.0, 0.8 } };
      o.weight = 2;
      o.alpha = 0.5;
      o.spacing[0] = 0.5;
      o.origin[2] = -1;
      o.thresholdMode = ThresholdMode::List;
      o.thresholds = c.thresholds;
      o.device = Device::CPU;
      const GridView g = GridView::contiguous(c.images.data(), ScalarType::Float64, shape[0], shape[1], shape[2]);
      const EulerTransform exact = computeEulerTransform(g, o);
      const auto soft = forward(c);
      bool same = true;
      for (size_t t = 0; t < soft.size(); ++t)
        same = same && std::fabs(soft[t] - static_cast<double>(exact.euler[0][t])) < 1e-6;
      expect(same, std::string("lambda -> infinity: the exact curve, ") + constructionName(con) + " " +
          std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" + std::to_string(shape[2]));
    }

  // 1b. The CPU path's sigmoids by groups of 16 thresholds, each factored
  // about its centre where lambda |t - c| <= 300 for all its thresholds
  // (SoftThresholdGroups.h), else direct, against the definition listing
  // every cell: heights near 1e5 (floats there 1/128 apart; the factored
  // exponent's argument is h - c, not h), 40 thresholds in three groups,
  // the second holding one threshold 1000 above the others (direct at
  // lambda 5, factored at 0.5), the third a partial group; and a group
  // holding +infinity among finite ones and one holding -infinity (each
  // span infinite: the direct form, whose terms are then exactly 0 and 1;
  // factored about an infinite centre, 0 times infinity, NaN). A factor without the centre (exp(lambda h)
  // times exp(-lambda t): 0 times infinity here), or no bound on the
  // group's span (the second group factored at lambda 5, where e^2497
  // overflows), gives NaN and fails these.
  {
    Case c = randomCase(rng, 1, 11, 9, 1, Construction::V);
    for (auto& v : c.images)
      v = 1e5 + 4 * v;
    c.alpha = { 0.37 };
    c.thresholds.clear();
    for (int t = 0; t < 40; ++t)
      c.thresholds.push_back(1e5 - 2 + 0.2 * t);
    c.thresholds[20] = 1e5 + 1000;
    for (double lambda : { 5.0, 0.5, 30.0 })
    {
      c.lambda = lambda;
      const std::vector<double> soft = forward(c), defined = definitionChi2D(c);
      bool same = true; // (NaN fails)
      for (size_t t = 0; t < soft.size(); ++t)
        same = same && close(soft[t], defined[t], 1e-9);
      char name[80];
      std::snprintf(name, sizeof name, "threshold groups near 1e5, lambda %g: chi equals the definition", lambda);
      expect(same, name);
    }
    Case w = randomCase(rng, 1, 8, 7, 1, Construction::V);
    // A group of 16 holding +infinity, then a partial one holding -infinity.
    w.thresholds = { -0.3, 0.1, 0.45, 0.7, INFINITY, 1.2, 0.9, 0.05, 0.3, 0.5, 0.6, 0.65, 0.8, 1.0, 1.1, 0.2,
      0.25, -INFINITY, 0.75, 0.35 };
    w.lambda = 40;
    const std::vector<double> soft = forward(w), defined = definitionChi2D(w);
    bool same = true;
    for (size_t t = 0; t < soft.size(); ++t)
      same = same && close(soft[t], defined[t], 1e-9);
    expect(same, "a group with infinite thresholds: chi equals the definition");
  }

  // 2. Gradients against finite differences.
  for (Construction con : { Construction::V, Construction::T })
  {
    const std::string cn = constructionName(con);
    checkGradients("2D " + cn, randomCase(rng, 1, 9, 8, 1, con), rng);
    checkGradients("3D " + cn, randomCase(rng, 1, 5, 6, 4, con), rng);
    checkGradients("batch of 3, 2D " + cn, randomCase(rng, 3, 6, 5, 1, con), rng);
  }

  // 2b. Several directions in one call against one call per direction.
  for (Construction con : { Construction::V, Construction::T })
  {
    const std::string cn = constructionName(con);
    Case c = randomCase(rng, 2, 7, 5, 4, con);
    c.direction = { 0.3, -0.5, 0.8, -1.0, 0.0, 0.2, 0.0, 0.6, -0.6 };
    const size_t nt = c.thresholds.size(), nd = c.directions();
    std::vector<double> G(c.curveValues());
    for (size_t k = 0; k < G.size(); ++k)
      G[k] = std::cos(0.7 * k);
    const std::vector<double> chi = forward(c);
    std::vector<double> gx(c.images.size()), gt(nt), gu(3 * nd), ga(1);
    softEulerBackward(problemOf(c), G.data(), gx.data(), gt.data(), gu.data(), ga.data());
    bool curves = true, perDirection = true;
    std::vector<double> sx(gx.size(), 0.0), st(nt, 0.0);
    double sa = 0;
    for (size_t d = 0; d < nd; ++d)
    {
      Case one = c;
      one.direction.assign(c.direction.begin() + 3 * d, c.direction.begin() + 3 * d + 3);
      const std::vector<double> chiOne = forward(one);
      std::vector<double> Gone;
      for (int64_t b = 0; b < c.batch; ++b)
        for (size_t t = 0; t < nt; ++t)
        {
          curves = curves && chi[(b * nd + d) * nt + t] == chiOne[b * nt + t];
          Gone.push_back(G[(b * nd + d) * nt + t]);
        }
      std::vector<double> ox(gx.size()), ot(nt), ou(3), oa(1);
      softEulerBackward(problemOf(one), Gone.data(), ox.data(), ot.data(), ou.data(), oa.data());
      for (int a = 0; a < 3; ++a)
        perDirection = perDirection && gu[3 * d + a] == ou[a];
      for (size_t k = 0; k < ox.size(); ++k)
        sx[k] += ox[k];
      for (size_t t = 0; t < nt; ++t)
        st[t] += ot[t];
      sa += oa[0];
    }
    bool sums = close(ga[0], sa, 1e-12);
    for (size_t k = 0; k < sx.size(); ++k)
      sums = sums && close(gx[k], sx[k], 1e-12);
    for (size_t t = 0; t < nt; ++t)
      sums = sums && close(gt[t], st[t], 1e-12);
    expect(curves, "3 directions " + cn + ": each curve is the direction's own");
    expect(perDirection, "3 directions " + cn + ": dL/du_d is the direction's own");
    expect(sums, "3 directions " + cn + ": dL/dX, dL/dt, dL/dalpha are the sums over the directions");
    checkGradients("3 directions, batch of 2, 3D " + cn, c, rng);
  }

  // 3. Bad problems are refused with a reason.
  Case c = randomCase(rng, 1, 4, 4, 1, Construction::V);
  SoftEulerProblem bad = problemOf(c);
  bad.lambda = -1;
  std::vector<double> chi(c.thresholds.size());
  bool threw = false;
  try
  {
    softEulerForward(bad, chi.data());
  }
  catch (const std::invalid_argument&)
  {
    threw = true;
  }
  expect(threw, "a negative lambda is refused");

#ifdef TOPOVOX_TEST_CUDA
  if (gpu)
    for (Construction con : { Construction::V, Construction::T })
    {
      const std::string cn = constructionName(con);
      const Case big = randomCase(rng, 2, 40, 33, 17, con);
      compareDevices<double>("float64 3D batch " + cn, big, 1e-9);
      compareDevices<float>("float32 3D batch " + cn, big, 2e-3);
      Case many = randomCase(rng, 1, 64, 64, 1, con);
      many.thresholds.clear();
      for (int t = 0; t < 1500; ++t) // beyond the shared-memory accumulators
        many.thresholds.push_back(-0.5 + 2.0 * t / 1500);
      compareDevices<double>("1500 thresholds " + cn, many, 1e-9);
      compareDevices<float>("1500 thresholds float32 " + cn, many, 2e-3); // 47 chunks of 32, the last partial
      // Shapes against the GPU's tiles (32 x 8 of a plane, 32 x 4 x 2 of a
      // volume): a line, planes thinner than a tile with NaN voxels, a volume
      // of two planes, one of three (a partial last tile along z).
      for (const auto& dims : { std::array<int64_t, 3>{ 300, 1, 1 }, std::array<int64_t, 3>{ 70, 3, 1 },
             std::array<int64_t, 3>{ 5, 3, 2 }, std::array<int64_t, 3>{ 33, 9, 3 } })
      {
        Case shaped = randomCase(rng, 2, dims[0], dims[1], dims[2], con);
        shaped.images[7] = std::nan("");
        shaped.images[shaped.images.size() - 2] = std::nan("");
        const std::string shape = std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" +
          std::to_string(dims[2]) + " with NaN " + cn;
        compareDevices<double>(shape, shaped, 1e-9);
        compareDevices<float>(shape + " float32", shaped, 2e-3);
      }
      // Float32 terms against float64 sums, at a tolerance the GPU's float
      // rounding meets (a term's error about 1e-6) and a lost low part of
      // the heights does not: heights near 1e5, where floats are 1/128
      // apart, so lambda (t - h) needs h's part below that (the kernels
      // split h into two floats). The CPU's float path sums in double: its
      // float chi is the double's, rounded. lambda 5 and 500 (most terms 0
      // or 1 there; dL/du there sums terms of up to 125 that cancel to
      // about 1e-3, which float's rounding of the terms leaves 6e-5 off,
      // the build before the float terms' rewrite as this one, so 2e-4).
      Case offset = randomCase(rng, 1, 12, 10, 1, con);
      for (auto& v : offset.images)
        v = 1e5 + 4 * v;
      offset.images[17] = std::nan("");
      offset.thresholds = { 1e5 + 0.3, 1e5 + 1.1, 1e5 + 2.05, 1e5 + 3.7, -1e30, 1e30 };
      offset.alpha = { 0.37 };
      for (double lambda : { 5.0, 500.0 })
      {
        offset.lambda = lambda;
        compareDevices<float>("heights near 1e5, lambda " + std::to_string(static_cast<int>(lambda)) + " float32 " + cn,
          offset, lambda < 100 ? 5e-5 : 2e-4);
      }
      Case several = randomCase(rng, 3, 20, 17, 9, con);
      several.direction = { 0.3, -0.5, 0.8, -1.0, 0.0, 0.2, 0.0, 0.6, -0.6, 0.5, 0.5, 0.5 };
      compareDevices<double>("4 directions " + cn, several, 1e-9);
      compareDevices<float>("4 directions float32 " + cn, several, 2e-3);
    }
#endif
  return kernel_check::finish();
}
