// UninitializedAllocator.cpp - large blocks on huge pages where the system
// offers them (UninitializedAllocator.h).
#include "topovox/UninitializedAllocator.h"

#include <cstdlib>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace topovox
{
namespace detail
{
namespace
{
constexpr std::size_t kHugePage = std::size_t(2) << 20;
constexpr std::size_t kLarge = std::size_t(4) << 20;
}

void* allocateBytes(std::size_t bytes)
{
  if (bytes < kLarge)
  {
    void* p = std::malloc(bytes ? bytes : 1);
    if (!p)
      throw std::bad_alloc();
    return p;
  }
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (!p)
    throw std::bad_alloc();
#ifdef __linux__
  madvise(p, rounded, MADV_HUGEPAGE); // advice only: no huge pages is fine
#endif
  return p;
}

void freeBytes(void* p, std::size_t)
{
  std::free(p);
}
}
}
