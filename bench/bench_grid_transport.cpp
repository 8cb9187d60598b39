// bench_grid_transport.cpp - timing of the convolutional Sinkhorn
// (GridSinkhorn.h) on two raw float64 densities, for bench_grid_transport.py
// (which runs a plain torch loop of the same iterations on the same data).
//
//   bench_grid_transport A.raw B.raw NX NY NZ REG METHOD ITERATIONS DEVICE
//
// METHOD: sinkhorn or sinkhorn_log; stopThr 0, so exactly ITERATIONS run.
// End to end through the public API (host arrays in, host results out),
// the best of 3 calls after a warm-up. Prints one JSON object.
#include "BenchRaw.h"
#include "BenchSinkhorn.h"
#include "topovox/GridSinkhorn.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace topovox;


int main(int argc, char** argv)
{
  if (argc != 10 && argc != 11)
  {
    std::fprintf(stderr, "usage: bench_grid_transport A.raw B.raw NX NY NZ REG METHOD ITERATIONS DEVICE [cost]\n"
                         "  cost: the cost alone (no potentials, gradients or displacement)\n");
    return 2;
  }
  const int64_t dims[3] = { std::atoll(argv[3]), std::atoll(argv[4]), std::atoll(argv[5]) };
  const size_t n = static_cast<size_t>(dims[0] * dims[1] * dims[2]);
  const std::vector<double> a = readRawDoubles(argv[1], n), b = readRawDoubles(argv[2], n);
  SinkhornOptions o = benchSinkhornOptions(argv[6], argv[7], argv[8], argv[9]);
  o.computeFields = argc != 11 || std::string(argv[10]) != "cost";
  const double spacing[3] = { 1, 1, 1 };
  GridSinkhornResult r;
  const double best = bestOfMs([&] { r = sinkhornGrid(a, b, dims, spacing, o); }, 3);
  std::printf("{\"ms\": %.4f, \"cost\": %.17g, \"iterations\": %d, \"device\": \"%s\"}\n", best, r.cost,
    r.iterations, r.device == Device::GPU ? "gpu" : "cpu");
  return 0;
}
