// bench_dense_transport.cpp - timing of the dense Sinkhorn (Sinkhorn.h) on
// raw float64 histograms and cost matrix, for bench_dense_transport.py
// (which runs POT and a plain torch loop on the same data).
//
//   bench_dense_transport A.raw B.raw M.raw PAIRS D REG METHOD ITERATIONS DEVICE
//
// A, B: PAIRS x D; M: D x D. METHOD: sinkhorn or sinkhorn_log; stopThr 0,
// so exactly ITERATIONS run. End to end through the public API (host arrays
// in, costs out, no plans), the best of 3 calls after a warm-up. Prints one
// JSON object: ms, the costs, the device used.
#include "BenchRaw.h"
#include "BenchSinkhorn.h"
#include "topovox/Sinkhorn.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace topovox;


int main(int argc, char** argv)
{
  if (argc != 10)
  {
    std::fprintf(stderr, "usage: bench_dense_transport A.raw B.raw M.raw PAIRS D REG METHOD ITERATIONS DEVICE\n");
    return 2;
  }
  const int64_t pairs = std::atoll(argv[4]), d = std::atoll(argv[5]);
  const std::vector<double> a = readRawDoubles(argv[1], static_cast<size_t>(pairs * d)),
                            b = readRawDoubles(argv[2], static_cast<size_t>(pairs * d)),
                            M = readRawDoubles(argv[3], static_cast<size_t>(d * d));
  const SinkhornOptions o = benchSinkhornOptions(argv[6], argv[7], argv[8], argv[9]);
  SinkhornResult r;
  const double best = bestOfMs([&] { r = sinkhorn(a, b, M, pairs, d, o); }, 3);
  std::printf("{\"ms\": %.4f, \"device\": \"%s\", \"costs\": [", best, r.device == Device::GPU ? "gpu" : "cpu");
  for (size_t k = 0; k < r.costs.size(); ++k)
    std::printf("%s%.17g", k ? ", " : "", r.costs[k]);
  std::printf("]}\n");
  return 0;
}
