// KernelCheck.h - what the kernel tests share: checks counted, failures
// printed (the first 40), the closing line and exit status, and the
// --device option of the suites that run on the CPU and the GPU.
#pragma once

#include "topovox/Device.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace kernel_check
{
inline int failures = 0, checks = 0;

inline void expect(bool ok, const std::string& what)
{
  ++checks;
  if (!ok && ++failures <= 40)
    std::printf("FAIL: %s\n", what.c_str());
}

// Prints "N checks, M failures" and returns the exit status.
inline int finish()
{
  std::printf("%d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}

// The suites' --device cpu|gpu: sets gpu and returns true to go on, or
// prints SKIP and returns false when the GPU is asked for and absent (the
// suite then exits 77, which CTest reports as skipped).
inline bool deviceFromArguments(int argc, char** argv, bool& gpu)
{
  gpu = false;
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--device"))
      gpu = !std::strcmp(argv[i + 1], "gpu");
  std::string warn;
  if (gpu && topovox::resolveDevice(topovox::Device::GPU, &warn) != topovox::Device::GPU)
  {
    std::printf("SKIP: %s\n", warn.c_str());
    return false;
  }
  return true;
}
}
