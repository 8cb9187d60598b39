// BenchRaw.h - what the benchmark programs share: reading the raw float64
// arrays their Python drivers write (numpy's tofile), or exiting with a
// message.
#pragma once

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
