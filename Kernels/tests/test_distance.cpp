// test_distance.cpp - the distance transform kernels (scipy.ndimage itself
// is the oracle in Testing/cli and Testing/Python):
//  * --device cpu: the exact Euclidean and chamfer transforms equal the
//    brute force over every background voxel (sampling a power of two, so
//    that the sums are exact and the distances must be equal), the indices
//    name a background voxel at that distance, the distances without
//    indices (unit sampling: the integer path) are the same, and nothing
//    depends on the number of threads;
//  * --device gpu: the GPU's Euclidean transform gives the CPU's bits,
//    distances and indices (exit 77 without a GPU), and so does the device
//    API (DistanceTransformOnDevice.h) on device copies of float images with
//    NaN, strided views and images without background, with indices and
//    without (unit sampling without indices takes its own path).
#include "topovox/DistanceTransform.h"
#include "topovox/DistanceTransformOnDevice.h"

#include "KernelCheck.h"

#ifdef TOPOVOX_TEST_CUDA
#include "DeviceCopies.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace topovox;
using kernel_check::expect;

namespace
{
// Foreground with a given share of background voxels, and at least one (a
// share of 0: a single one in a corner; the image without background is
// scipy's special case, checked against scipy in Testing/cli).
std::vector<uint8_t> randomImage(std::mt19937_64& rng, size_t count, int backgroundPerMille)
{
  std::vector<uint8_t> f(count, 1);
  for (auto& v : f)
    v = static_cast<int>(rng() % 1000) < backgroundPerMille ? 0 : 1;
  if (backgroundPerMille == 0)
    f[count - 1] = 0;
  else if (std::find(f.begin(), f.end(), 0) == f.end())
    f[rng() % count] = 0;
  return f;
}

// Background dense on even planes z and sparse on odd ones, so that along y
// and z some lines have every voxel near a background voxel (done by windows,
// EdtLine.h) and others not (done by the lower envelope).
std::vector<uint8_t> bandedImage(std::mt19937_64& rng, const std::vector<int64_t>& n)
{
  std::vector<uint8_t> f(static_cast<size_t>(n[0] * n[1] * n[2]));
  for (size_t k = 0; k < f.size(); ++k)
  {
    const int64_t z = static_cast<int64_t>(k) / (n[0] * n[1]);
    f[k] = static_cast<int>(rng() % 1000) < (z % 2 == 0 ? 300 : 8) ? 0 : 1;
  }
  f[0] = 0;
  return f;
}

// `seeds` background voxels at random places (fewer where some coincide):
// along the last axis, lines with a few finite values only, which
// EdtSquaredOnDevice.cuh answers without an envelope up to 8 of them.
std::vector<uint8_t> seedsImage(std::mt19937_64& rng, size_t count, int seeds)
{
  std::vector<uint8_t> f(count, 1);
  for (int k = 0; k < seeds; ++k)
    f[rng() % count] = 0;
  return f;
}

// Background planes x = 0, 100, 200, ... and one voxel in 100000: in a
// pass of many lines, most voxels of most lines are more than 16 samples
// from the background found so far, and all within 64, so that the lines go
// through the lower envelope by the crowd rule (EdtLine.h).
std::vector<uint8_t> planesImage(std::mt19937_64& rng, const std::vector<int64_t>& n)
{
  std::vector<uint8_t> f(static_cast<size_t>(n[0] * n[1] * n[2]));
  for (size_t k = 0; k < f.size(); ++k)
    f[k] = static_cast<int64_t>(k) % n[0] % 100 == 0 || rng() % 100000 == 0 ? 0 : 1;
  return f;
}

// The distance of `samples` voxels drawn at random against the brute force
// over every background voxel, summed as scipy sums (numpy's first axis, z,
// first): for images too large for the full brute force.
bool sampledBruteForce(std::mt19937_64& rng, const std::vector<uint8_t>& image, const std::vector<int64_t>& n,
  const double s[3], const TransformArray<double>& distances, int samples)
{
  std::vector<int64_t> background;
  for (size_t k = 0; k < image.size(); ++k)
    if (!image[k])
      background.push_back(static_cast<int64_t>(k));
  for (int t = 0; t < samples; ++t)
  {
    const int64_t k = static_cast<int64_t>(rng() % image.size());
    const int64_t c[3] = { k % n[0], k / n[0] % n[1], k / (n[0] * n[1]) };
    double best = std::numeric_limits<double>::infinity();
    for (int64_t b : background)
    {
      const int64_t f[3] = { b % n[0], b / n[0] % n[1], b / (n[0] * n[1]) };
      double sum = 0;
      for (int a = 2; a >= 0; --a)
      {
        const double d = static_cast<double>(f[a] - c[a]) * s[a];
        sum += d * d;
      }
      best = std::min(best, sum);
    }
    if (std::sqrt(best) != distances[static_cast<size_t>(k)])
      return false;
  }
  return true;
}

bool sameTransform(const DistanceTransform& a, const DistanceTransform& b)
{
  bool same = a.distances == b.distances;
  for (int k = 0; k < 3; ++k)
    same = same && a.indices[k] == b.indices[k];
  return same;
}

#ifdef TOPOVOX_TEST_CUDA
// The device API against the host API on the CPU, on a float image stored
// as every other value of an interleaved array (NaN is foreground).
void checkDeviceApi(std::mt19937_64& rng, const int64_t n[3], int backgroundPerMille, const double sampling[3])
{
  const size_t count = static_cast<size_t>(n[0] * n[1] * n[2]);
  std::vector<float> values(2 * count);
  for (size_t k = 0; k < count; ++k)
  {
    const int r = static_cast<int>(rng() % 1000);
    values[2 * k] = r < backgroundPerMille ? 0.0f : (r % 7 == 0 ? std::numeric_limits<float>::quiet_NaN() : 2.5f);
    values[2 * k + 1] = 0.0f;
  }
  GridView host = GridView::contiguous(values.data(), ScalarType::Float32, n[0], n[1], n[2]);
  for (int a = 0; a < 3; ++a)
    host.strides[a] *= 2;
  const DistanceTransform want = distanceTransformEdt(host, sampling, true, 0, Device::CPU);
  OnDevice d;
  GridView device = host;
  device.data = d.copy(values);
  device.memory = MemorySpace::Device;
  double* distances = d.make<double>(count);
  int32_t* indices = d.make<int32_t>(3 * count);
  distanceTransformEdtOnDevice(device, sampling, distances, indices);
  const std::vector<double> gotDistances = d.back(distances, count);
  const std::vector<int32_t> gotIndices = d.back(indices, 3 * count);
  bool same = std::equal(gotDistances.begin(), gotDistances.end(), want.distances.begin(), want.distances.end(),
    [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; });
  for (int a = 0; a < 3; ++a)
    same = same && std::equal(want.indices[a].begin(), want.indices[a].end(), gotIndices.begin() + a * count);
  const std::string what = "device API " + std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" +
    std::to_string(n[2]) + " background " + std::to_string(backgroundPerMille) + "/1000";
  expect(same, what + ": the host API's distances and indices");
  // The distances alone (with unit sampling, EdtSquaredOnDevice.cuh's path).
  double* alone = d.make<double>(count);
  distanceTransformEdtOnDevice(device, sampling, alone, nullptr);
  const std::vector<double> gotAlone = d.back(alone, count);
  expect(std::equal(gotAlone.begin(), gotAlone.end(), want.distances.begin(), want.distances.end(),
           [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }),
    what + ": the host API's distances without indices");
}
#endif
} // namespace

int main(int argc, char** argv)
{
  bool gpu = false;
  if (!kernel_check::deviceFromArguments(argc, argv, gpu))
    return 77;
  std::mt19937_64 rng(5);
  const double samplings[][3] = { { 1, 1, 1 }, { 1, 2, 0.5 }, { 0.25, 1, 4 } };
  std::vector<std::vector<int64_t>> shapes = { { 1, 1, 1 }, { 57, 1, 1 }, { 1, 31, 1 }, { 23, 17, 1 },
    { 2, 40, 3 }, { 13, 11, 9 }, { 24, 5, 19 }, { 3, 100, 12 }, { 2, 12, 100 }, { 6, 1, 40 },
    { 256, 256, 2 } }; // 65536 lines along z: the crowd rule
  if (gpu)
  {
    shapes.push_back({ 1024, 64, 64 }); // the crowd rule along y and z
    shapes.push_back({ 96, 80, 70 }); // many lines per thread block, some long
    shapes.push_back({ 3, 1900, 2 }); // envelopes too long for shared memory
    // Unit sampling without indices (EdtSquaredOnDevice.cuh): lines of 1100
    // (most of a block's shared memory), one voxel a row, no y axis.
    shapes.push_back({ 40, 1100, 3 });
    shapes.push_back({ 1, 70, 60 });
    shapes.push_back({ 33, 1, 70 });
  }
  // perMille -1: bandedImage, lines of windows and lines of envelopes side by
  // side (lines longer than twice the window radius: 100 samples); -2:
  // planesImage; -3, -8, -9: that many background voxels (seedsImage).
  for (const auto& n : shapes)
    for (int perMille : { 0, 3, 100, 600, -1, -2, -3, -8, -9 })
    {
      const size_t count = static_cast<size_t>(n[0] * n[1] * n[2]);
      const std::vector<uint8_t> image = perMille == -1 ? bandedImage(rng, n)
        : perMille == -2                               ? planesImage(rng, n)
        : perMille < 0                                 ? seedsImage(rng, count, -perMille)
                                                       : randomImage(rng, count, perMille);
      const GridView g = GridView::contiguous(image.data(), ScalarType::UInt8, n[0], n[1], n[2]);
      const std::string shape = std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]) +
        (perMille == -1 ? std::string(" banded background")
            : perMille == -2 ? std::string(" background planes")
            : perMille < 0   ? " " + std::to_string(-perMille) + " background voxels"
                             : " background " + std::to_string(perMille) + "/1000");
      for (const auto& s : samplings)
      {
        const std::string what = shape + " sampling " + std::to_string(s[0]) + "," + std::to_string(s[1]) + "," +
          std::to_string(s[2]);
        const DistanceTransform cpu = distanceTransformEdt(g, s, true, 1, Device::CPU);
        if (gpu)
        {
          expect(sameTransform(cpu, distanceTransformEdt(g, s, true, 0, Device::GPU)), what + ": GPU edt == CPU edt");
          // Without indices (with unit sampling EdtSquaredOnDevice.cuh's
          // path), the lines in shared memory where they fit and in global
          // memory, forced each way, and as the device chooses.
          for (const char* lines : { "1", "0", "" })
          {
            setenv("TOPOVOX_EDT_SHARED_LINES", lines, 1);
            expect(cpu.distances == distanceTransformEdt(g, s, false, 0, Device::GPU).distances,
              what + ": GPU edt without indices (TOPOVOX_EDT_SHARED_LINES=" + lines + ")");
          }
          unsetenv("TOPOVOX_EDT_SHARED_LINES");
          continue;
        }
        expect(sameTransform(cpu, distanceTransformEdt(g, s, true, 4, Device::CPU)), what + ": threads 1 == 4");
        // Without indices (with unit sampling the integer path of
        // EdtSquaredLine.h): the same distances, on 1 and 4 threads.
        for (int threads : { 1, 4 })
          expect(cpu.distances == distanceTransformEdt(g, s, false, threads, Device::CPU).distances,
            what + ": without indices, " + std::to_string(threads) + " threads");
        if (count > 4000)
        {
          // The brute force is quadratic: a sample of voxels.
          expect(sampledBruteForce(rng, image, n, s, cpu.distances, 100), what + ": edt == brute force (sampled)");
          continue;
        }
        const DistanceTransform bf = distanceTransformBf(g, DistanceMetric::Euclidean, s, false, 1);
        expect(cpu.distances == bf.distances, what + ": edt == brute force");
        bool pointsAtBackground = true;
        for (size_t k = 0; k < count; ++k)
        {
          const int64_t at = cpu.indices[0][k] + n[0] * (cpu.indices[1][k] + n[1] * cpu.indices[2][k]);
          pointsAtBackground = pointsAtBackground && at >= 0 && at < static_cast<int64_t>(count) && !image[at];
        }
        expect(pointsAtBackground, what + ": indices name background voxels");
      }
      if (gpu || count > 4000)
        continue;
      for (DistanceMetric m : { DistanceMetric::Taxicab, DistanceMetric::Chessboard })
      {
        const double unit[3] = { 1, 1, 1 };
        const DistanceTransform cdt = distanceTransformCdt(g, m, false, 1);
        const DistanceTransform bf = distanceTransformBf(g, m, unit, false, 1);
        bool same = true;
        for (size_t k = 0; k < count; ++k)
          same = same && static_cast<uint32_t>(cdt.integerDistances[k]) == bf.bfDistances[k];
        expect(same, shape + (m == DistanceMetric::Taxicab ? ": taxicab" : ": chessboard") + " cdt == brute force");
        // With indices: the same distances, and each index names a
        // background voxel at exactly that distance in the metric.
        const DistanceTransform withIndices = distanceTransformCdt(g, m, true, 2);
        bool named = withIndices.integerDistances == cdt.integerDistances;
        for (size_t k = 0; k < count && named; ++k)
        {
          const int64_t c[3] = { static_cast<int64_t>(k) % n[0], (static_cast<int64_t>(k) / n[0]) % n[1],
            static_cast<int64_t>(k) / (n[0] * n[1]) };
          int64_t sum = 0, most = 0;
          for (int a = 0; a < 3; ++a)
          {
            const int64_t step = std::llabs(withIndices.indices[a][k] - c[a]);
            sum += step;
            most = std::max(most, step);
          }
          const int64_t at = withIndices.indices[0][k] + n[0] * (withIndices.indices[1][k] + n[1] * withIndices.indices[2][k]);
          named = at >= 0 && at < static_cast<int64_t>(count) && !image[static_cast<size_t>(at)] &&
            (m == DistanceMetric::Taxicab ? sum : most) == cdt.integerDistances[k];
        }
        expect(named, shape + (m == DistanceMetric::Taxicab ? ": taxicab" : ": chessboard") +
            " cdt indices name a background voxel at the distance");
      }
    }
#ifdef TOPOVOX_TEST_CUDA
  if (gpu)
  {
    const int64_t volume[3] = { 37, 21, 9 }, image[3] = { 45, 33, 1 }, line[3] = { 70, 1, 1 };
    const double unit[3] = { 1, 1, 1 }, uneven[3] = { 0.5, 2, 1.5 };
    checkDeviceApi(rng, volume, 30, uneven);
    checkDeviceApi(rng, volume, 30, unit);
    checkDeviceApi(rng, image, 100, unit);
    checkDeviceApi(rng, line, 50, unit);
    checkDeviceApi(rng, volume, 0, uneven); // no background: scipy's special case
    checkDeviceApi(rng, image, 0, unit);
  }
#endif
  return kernel_check::finish();
}
