// bench_morphology.cpp - timing of one morphology or distance operator of
// the kernels on one raw volume, for bench/bench_morphology.py (which runs
// the peers on the same file and prints the table).
//
//   bench_morphology OP FILE DTYPE NX NY NZ DEVICE REPEAT [BATCH]
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
//
// BATCH (default 1): FILE holds BATCH images of NX x NY x NZ / BATCH, one
// after the other. A batch of 2D images (NZ == BATCH) is one call on the
// stack with the 2D element (whose one plane keeps the images apart, as a
// footprint of shape (1, 3, 3) does in scipy); volumes, and the transforms
// of any image, are one call per image, in turn.
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
  if (argc != 9 && argc != 10)
  {
    std::fprintf(stderr, "usage: bench_morphology OP FILE DTYPE NX NY NZ DEVICE REPEAT [BATCH]\n");
    return 2;
  }
  const std::string op = argv[1], dtype = argv[3];
  const int64_t n[3] = { std::atoll(argv[4]), std::atoll(argv[5]), std::atoll(argv[6]) };
  const int64_t batch = argc == 10 ? std::atoll(argv[9]) : 1;
  if (batch < 1 || n[2] % batch != 0)
  {
    std::fprintf(stderr, "BATCH must divide NZ\n");
    return 2;
  }
  // One image's dims; whether the batch is one call (a stack of planes).
  const int64_t item[3] = { n[0], n[1], n[2] / batch };
  const bool planes = batch > 1 && item[2] == 1 && op != "edt" && op != "cdt_chessboard";
  const int64_t calls = planes ? 1 : batch, perCall[3] = { n[0], n[1], planes ? n[2] : item[2] };
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
  const size_t callBytes = bytes / static_cast<size_t>(calls);
  // Call k's image, at `base` (host or device memory).
  auto image = [&](const void* base, int64_t k, MemorySpace memory) {
    return GridView::contiguous(static_cast<const unsigned char*>(base) + k * callBytes, type, perCall[0],
      perCall[1], perCall[2], memory);
  };
  const StructuringElement s = element(op, item);
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
    const size_t outPerCall = outBytes / static_cast<size_t>(calls);
    if (cudaMalloc(&input, bytes) != cudaSuccess || cudaMalloc(&output, outBytes) != cudaSuccess ||
      cudaMemcpy(input, data.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess)
    {
      std::fprintf(stderr, "cannot stage %zu bytes on the GPU\n", bytes);
      return 1;
    }
    std::function<void(const GridView&, unsigned char*)> one;
    if (op == "binary_erosion_box3" || op == "binary_erosion_ball2")
      one = [=](const GridView& v, unsigned char* to) { binaryErosionOnDevice(v, s, b, to); };
    else if (op == "binary_opening_box3")
      one = [=](const GridView& v, unsigned char* to) { binaryOpeningOnDevice(v, s, b, to); };
    else if (op == "grey_erosion_box3" || op == "grey_erosion_ball2")
      one = [=](const GridView& v, unsigned char* to) { greyErosionOnDevice(v, s, g, to); };
    else if (op == "edt")
      one = [=](const GridView& v, unsigned char* to) {
        distanceTransformEdtOnDevice(v, unit, reinterpret_cast<double*>(to), nullptr);
      };
    if (one)
      run = [=] {
        for (int64_t k = 0; k < calls; ++k)
          one(image(input, k, MemorySpace::Device), static_cast<unsigned char*>(output) + k * outPerCall);
      };
#endif
    if (!run)
    {
      std::printf("{\"op\": \"%s\", \"device\": \"resident\", \"ms\": null}\n", op.c_str());
      return 0;
    }
  }
  else
  {
    std::function<void(const GridView&)> one;
    if (op == "binary_erosion_box3" || op == "binary_erosion_ball2")
      one = [&](const GridView& v) { binaryErosion(v, s, b); };
    else if (op == "binary_opening_box3")
      one = [&](const GridView& v) { binaryOpening(v, s, b); };
    else if (op == "grey_erosion_box3" || op == "grey_erosion_ball2")
      one = [&](const GridView& v) { greyErosion(v, s, g); };
    else if (op == "edt")
      one = [&](const GridView& v) { distanceTransformEdt(v, unit, false, 0, device); };
    else if (op == "cdt_chessboard")
      one = [&](const GridView& v) { distanceTransformCdt(v, DistanceMetric::Chessboard, false); };
    else
    {
      std::fprintf(stderr, "unknown operator %s\n", op.c_str());
      return 2;
    }
    run = [&] {
      for (int64_t k = 0; k < calls; ++k)
        one(image(data.data(), k, MemorySpace::Host));
    };
  }
  const double best = bestOfMs(run, repeat);
  std::printf("{\"op\": \"%s\", \"device\": \"%s\", \"ms\": %.4f, \"threads\": %d}\n", op.c_str(), argv[7], best,
    defaultThreadCount());
  return 0;
}
