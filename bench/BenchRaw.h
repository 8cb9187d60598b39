// BenchRaw.h - what the benchmark programs share: reading the raw float64
// arrays their Python drivers write (numpy's tofile), or exiting with a
// message; and timing a call the same way in all of them.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

inline std::vector<double> readRawDoubles(const char* path, size_t n)
{
  std::vector<double> v(n);
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(double))))
  {
    std::fprintf(stderr, "cannot read %zu doubles from %s\n", n, path);
    std::exit(1);
  }
  return v;
}

// The best of `repeats` calls of run(), in milliseconds, after one warm-up
// call (the CUDA context, the first allocations).
template <typename Run>
double bestOfMs(Run run, int repeats)
{
  run();
  double best = 1e300;
  for (int k = 0; k < repeats; ++k)
  {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}
