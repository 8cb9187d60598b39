// KernelCheck.h - what the kernel tests share: checks counted, failures
// printed (the first 40), and the closing line and exit status.
#pragma once

#include <cstdio>
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
}
