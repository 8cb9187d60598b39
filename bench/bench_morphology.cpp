// bench_morphology.cpp - timing of one morphology or distance operator of
// the kernels on one raw volume, for bench/bench_morphology.py (which runs
// the peers on the same file and prints the table).
//
//   bench_morphology OP FILE DTYPE NX NY NZ DEVICE REPEAT
//
// OP: binary_erosion_box3, binary_erosion_ball2, binary_opening_box3,
// grey_erosion_box3, grey_erosion_ball2, edt, cdt_chessboard. FILE: raw,
// x fastest, DTYPE uint8 or float32 (binary operators and the transforms
// take nonzero as foreground). DEVICE: cpu or gpu: the time is end to end
// through the public API (host array in, host array out: on the GPU the
// call allocates, copies, computes, copies back and frees); resident: the
// device APIs (MorphologyOnDevice.h, DistanceTransformOnDevice.h) on an
// array copied to the GPU before the timing, the result left there (the
// chamfer transform has none and prints "ms": null). The best of REPEAT
// calls after one warm-up call. Prints one JSON object.
#include "BenchRaw.h"
#include "topovox/DistanceTransform.h"
#include "topovox/DistanceTransformOnDevice.h"
#include "topovox/Morphology.h"
#include "topovox/MorphologyOnDevice.h"

#ifdef BENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace topovox;

namespace
{
// scipy's cube of side 3, and the Euclidean ball of radius 2 in a 5**3 box.
StructuringElement element(const std::string& op, const int64_t n[3])
{
  const bool ball = op.find("ball2") != std::string::npos;
  const int64_t side = ball ? 5 : 3, r = side / 2;
  StructuringElement s;
  for (int a = 0; a < 3; ++a)
    s.dims[a] = n[a] > 1 ? side : 1;
  for (int64_t z = 0; z < s.dims[2]; ++z)
    for (int64_t y = 0; y < s.dims[1]; ++y)
      for (int64_t x = 0; x < s.dims[0]; ++x)
      {
        const int64_t dx = x - s.dims[0] / 2, dy = y - s.dims[1] / 2, dz = z - s.dims[2] / 2;
        s.footprint.push_back(!ball || dx * dx + dy * dy + dz * dz <= r * r);
      }
  return s;
}
} // namespace

int main(int argc, char** argv)
{
  if (argc != 9)
  {
    std::fprintf(stderr, "usage: bench_morphology OP FILE DTYPE NX NY NZ DEVICE REPEAT\n");
    return 2;
  }
  const std::string op = argv[1], dtype = argv[3];
  const int64_t n[3] = { std::atoll(argv[4]), std::atoll(argv[5]), std::atoll(argv[6]) };
  const std::string where = argv[7];
  const Device device = where == "cpu" ? Device::CPU : Device::GPU;
  const int repeat = std::atoi(argv[8]);
  const ScalarType type = dtype == "float32" ? ScalarType::Float32 : ScalarType::UInt8;
  const size_t bytes = static_cast<size_t>(n[0] * n[1] * n[2]) * (type == ScalarType::Float32 ? 4 : 1);
  std::vector<unsigned char> data(bytes);
  std::ifstream in(argv[2], std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(bytes)))
  {
    std::fprintf(stderr, "cannot read %zu bytes from %s\n", bytes, argv[2]);
    return 1;
  }
  const GridView image = GridView::contiguous(data.data(), type, n[0], n[1], n[2]);
  const StructuringElement s = element(op, n);
  BinaryOptions b;
  b.device = device;
  GreyOptions g;
  g.device = device;
  const double unit[3] = { 1, 1, 1 };
  std::function<void()> run;
  if (where == "resident")
  {
#ifdef BENCH_WITH_CUDA
    void* input = nullptr;
    void* output = nullptr;
    const size_t outBytes = op == "edt" ? static_cast<size_t>(n[0] * n[1] * n[2]) * sizeof(double) : bytes;
    if (cudaMalloc(&input, bytes) != cudaSuccess || cudaMalloc(&output, outBytes) != cudaSuccess ||
      cudaMemcpy(input, data.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess)
    {
      std::fprintf(stderr, "cannot stage %zu bytes on the GPU\n", bytes);
      return 1;
    }
    const GridView onDevice = GridView::contiguous(input, type, n[0], n[1], n[2], MemorySpace::Device);
    uint8_t* bits = static_cast<uint8_t*>(output);
    if (op == "binary_erosion_box3" || op == "binary_erosion_ball2")
      run = [=] { binaryErosionOnDevice(onDevice, s, b, bits); };
    else if (op == "binary_opening_box3")
      run = [=] { binaryOpeningOnDevice(onDevice, s, b, bits); };
    else if (op == "grey_erosion_box3" || op == "grey_erosion_ball2")
      run = [=] { greyErosionOnDevice(onDevice, s, g, output); };
    else if (op == "edt")
      run = [=] { distanceTransformEdtOnDevice(onDevice, unit, static_cast<double*>(output), nullptr); };
#endif
    if (!run)
    {
      std::printf("{\"op\": \"%s\", \"device\": \"resident\", \"ms\": null}\n", op.c_str());
      return 0;
    }
  }
  else if (op == "binary_erosion_box3" || op == "binary_erosion_ball2")
    run = [&] { binaryErosion(image, s, b); };
  else if (op == "binary_opening_box3")
    run = [&] { binaryOpening(image, s, b); };
  else if (op == "grey_erosion_box3" || op == "grey_erosion_ball2")
    run = [&] { greyErosion(image, s, g); };
  else if (op == "edt")
    run = [&] { distanceTransformEdt(image, unit, false, 0, device); };
  else if (op == "cdt_chessboard")
    run = [&] { distanceTransformCdt(image, DistanceMetric::Chessboard, false); };
  else
  {
    std::fprintf(stderr, "unknown operator %s\n", op.c_str());
    return 2;
  }
  const double best = bestOfMs(run, repeat);
  std::printf("{\"op\": \"%s\", \"device\": \"%s\", \"ms\": %.4f, \"threads\": %d}\n", op.c_str(), argv[7], best,
    defaultThreadCount());
  return 0;
}
