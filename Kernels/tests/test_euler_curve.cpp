// test_euler_curve.cpp - Euler curve kernels against the brute-force cell
// count (BruteForceEuler.h), on every scalar type, both constructions, both
// filtrations and every threshold mode; pieces (owned boxes) must add up to
// the whole; strided views must equal contiguous ones. With --device gpu the
// GPU path must also equal the CPU path bit for bit, on larger inputs too.
#include "BruteForceEuler.h"
#include "RandomValues.h"

#include "topovox/EulerCurve.h"

#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

using namespace topovox;

namespace
{
int failures = 0, checks = 0;

void expect(bool ok, const std::string& what)
{
  ++checks;
  if (!ok)
  {
    ++failures;
    if (failures < 50)
      std::printf("FAIL: %s\n", what.c_str());
  }
}

template <typename T>
ScalarType scalarTypeOf()
{
  if (std::is_same<T, int8_t>::value) return ScalarType::Int8;
  if (std::is_same<T, uint8_t>::value) return ScalarType::UInt8;
  if (std::is_same<T, int16_t>::value) return ScalarType::Int16;
  if (std::is_same<T, uint16_t>::value) return ScalarType::UInt16;
  if (std::is_same<T, int32_t>::value) return ScalarType::Int32;
  if (std::is_same<T, uint32_t>::value) return ScalarType::UInt32;
  if (std::is_same<T, int64_t>::value) return ScalarType::Int64;
  if (std::is_same<T, uint64_t>::value) return ScalarType::UInt64;
  if (std::is_same<T, float>::value) return ScalarType::Float32;
  return ScalarType::Float64;
}

std::string describe(const std::string& name, Construction c, Filtration f, ThresholdMode m)
{
  return name + " " + constructionName(c) + " " + filtrationName(f) + " " + thresholdModeName(m);
}

bool sameCurve(const EulerCurve& a, const EulerCurve& b)
{
  return a.thresholds == b.thresholds && a.cells == b.cells && a.euler == b.euler;
}

// Checks one image in every configuration.
template <typename T>
void checkImage(const std::string& name, const std::vector<T>& values, int64_t nx, int64_t ny,
  int64_t nz, Device device, bool bruteForce)
{
  const int64_t dims[3] = { nx, ny, nz };
  const GridView grid = GridView::contiguous(values.data(), scalarTypeOf<T>(), nx, ny, nz);
  // The same image as component 1 of a 2-component array: strided access.
  std::vector<T> interleaved(values.size() * 2, T(7));
  for (size_t i = 0; i < values.size(); ++i)
    interleaved[2 * i + 1] = values[i];
  GridView strided = GridView::contiguous(interleaved.data() + 1, scalarTypeOf<T>(), nx, ny, nz);
  for (int a = 0; a < 3; ++a)
    strided.strides[a] *= 2;

  for (Construction c : { Construction::V, Construction::T })
    for (Filtration f : { Filtration::Sublevel, Filtration::Superlevel })
      for (ThresholdMode m : { ThresholdMode::Exact, ThresholdMode::Bins, ThresholdMode::List })
      {
        const std::string what = describe(name, c, f, m);
        EulerCurveOptions o;
        o.construction = c;
        o.filtration = f;
        o.thresholdMode = m;
        o.binCount = 7;
        o.device = Device::CPU;
        o.threads = 3;
        if (m == ThresholdMode::List)
        {
          // Thresholds between, at and beyond the values.
          o.thresholds = { -1e30, -2.5, 0, 0.5, 1, 3, 1e30 };
          if (f == Filtration::Superlevel)
            o.thresholds = std::vector<double>(o.thresholds.rbegin(), o.thresholds.rend());
        }
        EulerCurve cpu;
        try
        {
          cpu = computeEulerCurve(grid, o);
        }
        catch (const std::exception& e)
        {
          expect(false, what + " threw " + e.what());
          continue;
        }
        expect(cpu.device == Device::CPU, what + " ran on the CPU");
        if (bruteForce)
        {
          const auto expected = test::bruteForceCounts(values, dims, c, f, cpu.thresholds);
          expect(expected == cpu.cells, what + " cell counts equal the brute-force count");
        }
        for (size_t j = 0; j < cpu.cells.size(); ++j)
          expect(cpu.euler[j] ==
              cpu.cells[j][0] - cpu.cells[j][1] + cpu.cells[j][2] - cpu.cells[j][3],
            what + " euler is the alternating sum");

        // Strided view, single thread: same curve.
        EulerCurveOptions o1 = o;
        o1.threads = 1;
        expect(sameCurve(computeEulerCurve(strided, o1), cpu), what + " strided equals contiguous");

        // Pieces along each axis (the MPI split): histograms add up.
        for (int axis = 0; axis < 3; ++axis)
        {
          if (dims[axis] < 2)
            continue;
          EulerHistogram sum;
          sum.thresholds = cpu.thresholds;
          sum.cells.assign(cpu.thresholds.size(), { 0, 0, 0, 0 });
          const int64_t cuts[3] = { 0, dims[axis] / 3 + 1, dims[axis] };
          for (int p = 0; p < 2; ++p)
          {
            EulerCurveOptions op = o;
            op.owned = grid.wholeBox();
            op.owned.lo[axis] = cuts[p];
            op.owned.hi[axis] = cuts[p + 1];
            const EulerHistogram h = eulerHistogram(grid, op, cpu.thresholds);
            for (size_t j = 0; j < h.cells.size(); ++j)
              for (int k = 0; k < 4; ++k)
                sum.cells[j][k] += h.cells[j][k];
          }
          expect(sameCurve(accumulateHistogram(sum, grid.dimension()), cpu),
            what + " pieces along axis " + std::to_string(axis) + " add up");
        }

        if (device == Device::GPU)
        {
          EulerCurveOptions og = o;
          og.device = Device::GPU;
          const EulerCurve gpu = computeEulerCurve(grid, og);
          expect(gpu.device == Device::GPU, what + " ran on the GPU (" + gpu.warnings + ")");
          expect(sameCurve(gpu, cpu), what + " GPU equals CPU");
          const EulerCurve gpuStrided = computeEulerCurve(strided, og);
          expect(sameCurve(gpuStrided, cpu), what + " GPU strided equals CPU");
        }
      }
}

using kernel_check::randomValues;

template <typename T>
void checkType(const std::string& type, std::mt19937_64& rng, Device device)
{
  const int64_t shapes[][3] = { { 1, 1, 1 }, { 9, 1, 1 }, { 1, 1, 7 }, { 6, 5, 1 }, { 1, 6, 5 },
    { 5, 4, 3 }, { 1, 7, 1 }, { 8, 1, 6 }, { 2, 2, 2 }, { 7, 6, 5 } };
  for (const auto& s : shapes)
  {
    const size_t n = static_cast<size_t>(s[0] * s[1] * s[2]);
    const std::string shape = std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" +
      std::to_string(s[2]);
    checkImage<T>(type + " random-3-levels " + shape, randomValues<T>(rng, n, 3), s[0], s[1], s[2],
      device, true);
    checkImage<T>(type + " random-50-levels " + shape, randomValues<T>(rng, n, 50), s[0], s[1],
      s[2], device, true);
    checkImage<T>(type + " constant " + shape, std::vector<T>(n, T(2)), s[0], s[1], s[2], device,
      true);
  }
}

template <typename T>
void checkSpecialFloats(std::mt19937_64& rng, Device device)
{
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  for (int trial = 0; trial < 4; ++trial)
  {
    std::vector<T> v = randomValues<T>(rng, 6 * 5 * 4, 4);
    std::uniform_int_distribution<int> pick(0, 9);
    for (auto& x : v)
    {
      const int r = pick(rng);
      x = r == 0 ? nan : r == 1 ? inf : r == 2 ? -inf : r == 3 ? T(-0.0) : x;
    }
    checkImage<T>(std::string("nan-inf trial ") + std::to_string(trial), v, 6, 5, 4, device, true);
  }
  checkImage<T>("all-nan", std::vector<T>(24, nan), 4, 3, 2, device, true);
  // Uniform random floats: every value distinct, thresholds at bin edges.
  std::uniform_real_distribution<T> u(-1, 1);
  std::vector<T> v(9 * 8 * 7);
  for (auto& x : v)
    x = u(rng);
  checkImage<T>("uniform-floats", v, 9, 8, 7, device, true);
}

template <typename T>
void checkLarge(std::mt19937_64& rng, int64_t nx, int64_t ny, int64_t nz, int levels)
{
  // GPU against CPU on tiles that leave partial blocks, with many bins.
  const std::vector<T> v = randomValues<T>(rng, static_cast<size_t>(nx * ny * nz), levels);
  checkImage<T>("large " + std::to_string(nx) + "x" + std::to_string(ny) + "x" +
      std::to_string(nz) + " levels " + std::to_string(levels),
    v, nx, ny, nz, Device::GPU, false);
}

// 64-bit integers that doubles cannot hold: Exact mode must still give each
// distinct value its own threshold and count every voxel, and thresholds at
// the ends of the type's range must keep their meaning.
void checkHugeIntegers(Device device)
{
  const int64_t big = int64_t(1) << 53;
  const std::vector<int64_t> v = { big, big + 1, big + 1, 5 };
  for (Filtration f : { Filtration::Sublevel, Filtration::Superlevel })
  {
    EulerCurveOptions o;
    o.filtration = f;
    o.thresholdMode = ThresholdMode::Exact;
    o.device = device;
    const EulerCurve c = computeEulerCurve(GridView::contiguous(v.data(), ScalarType::Int64, 4), o);
    expect(c.cells.size() == 3, "int64 beyond 2^53: three distinct values, three thresholds");
    expect(!c.cells.empty() && c.cells.back()[0] == 4 && c.cells.back()[1] == 3,
      "int64 beyond 2^53: every voxel and edge counted");
  }
  const std::vector<int64_t> w = { std::numeric_limits<int64_t>::max(), 0 };
  EulerCurveOptions o;
  o.filtration = Filtration::Superlevel;
  o.thresholdMode = ThresholdMode::List;
  o.thresholds = { 9223372036854775808.0 /* 2^63 */, 0 };
  o.device = device;
  const EulerCurve c = computeEulerCurve(GridView::contiguous(w.data(), ScalarType::Int64, 2), o);
  expect(c.cells.size() == 2 && c.cells[0][0] == 0 && c.cells[1][0] == 2,
    "int64 superlevel threshold 2^63 holds no voxel (the max is 2^63 - 1)");
  const std::vector<uint64_t> u = { std::numeric_limits<uint64_t>::max(), 1 };
  o.thresholds = { 18446744073709551616.0 /* 2^64 */, 1 };
  const EulerCurve cu = computeEulerCurve(GridView::contiguous(u.data(), ScalarType::UInt64, 2), o);
  expect(cu.cells.size() == 2 && cu.cells[0][0] == 0 && cu.cells[1][0] == 2,
    "uint64 superlevel threshold 2^64 holds no voxel");
}

void checkBadInput()
{
  std::vector<float> v(8, 1.0f);
  GridView g = GridView::contiguous(v.data(), ScalarType::Float32, 2, 2, 2);
  EulerCurveOptions o;
  o.thresholdMode = ThresholdMode::List;
  o.thresholds = { 1, 0 };
  bool threw = false;
  try
  {
    computeEulerCurve(g, o);
  }
  catch (const std::invalid_argument&)
  {
    threw = true;
  }
  expect(threw, "decreasing thresholds for a sublevel filtration are refused");
  o.thresholdMode = ThresholdMode::Bins;
  o.binCount = 0;
  threw = false;
  try
  {
    computeEulerCurve(g, o);
  }
  catch (const std::invalid_argument&)
  {
    threw = true;
  }
  expect(threw, "zero bins are refused");
  GridView empty = g;
  empty.dims[1] = 0;
  threw = false;
  try
  {
    computeEulerCurve(empty, EulerCurveOptions{});
  }
  catch (const std::invalid_argument&)
  {
    threw = true;
  }
  expect(threw, "an empty axis is refused");
}
} // namespace

int main(int argc, char** argv)
{
  Device device = Device::CPU;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--device") == 0 && i + 1 < argc)
      parseDevice(argv[++i], device);
  if (device == Device::GPU && !gpuAvailable())
  {
    std::printf("SKIP: --device gpu but %s\n", gpuDescription().c_str());
    return 77;
  }
  std::printf("device: %s (%s)\n", deviceName(device),
    device == Device::GPU ? gpuDescription().c_str() : "CPU");
  std::mt19937_64 rng(20261129);
  checkType<int8_t>("int8", rng, device);
  checkType<uint8_t>("uint8", rng, device);
  checkType<int16_t>("int16", rng, device);
  checkType<uint16_t>("uint16", rng, device);
  checkType<int32_t>("int32", rng, device);
  checkType<uint32_t>("uint32", rng, device);
  checkType<int64_t>("int64", rng, device);
  checkType<uint64_t>("uint64", rng, device);
  checkType<float>("float32", rng, device);
  checkType<double>("float64", rng, device);
  checkSpecialFloats<float>(rng, device);
  checkSpecialFloats<double>(rng, device);
  checkBadInput();
  checkHugeIntegers(device);
  if (device == Device::GPU)
  {
    checkLarge<uint8_t>(rng, 131, 67, 35, 256);
    checkLarge<float>(rng, 100, 37, 50, 100000); // > 2048 bins: global atomics
    checkLarge<uint16_t>(rng, 1000, 3, 17, 5000);
    checkLarge<int32_t>(rng, 4099, 1, 1, 30);
    checkLarge<double>(rng, 77, 301, 1, 1000);
  }
  std::printf("%d checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
