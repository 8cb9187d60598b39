// UninitializedAllocator.cpp - large blocks on huge pages where the system
// offers them (UninitializedAllocator.h).
#include "topovox/UninitializedAllocator.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

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

void populateBytes(void* p, std::size_t bytes)
{
  static const bool byWriting = [] {
    const char* env = std::getenv("TOPOVOX_POPULATE_BY_WRITING");
    return env && std::strcmp(env, "1") == 0;
  }();
  if (bytes == 0)
    return;
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  // (madvise takes a page-aligned start: the page holding p on.)
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = at / 4096 * 4096;
  if (!byWriting && madvise(reinterpret_cast<void*>(first), at + bytes - first, MADV_POPULATE_WRITE) == 0)
    return;
#endif
  std::memset(p, 0, bytes);
}

void adviseHugePages(void* p, std::size_t bytes)
{
#ifdef __linux__
  if (bytes < kLarge)
    return;
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (at + kHugePage - 1) / kHugePage * kHugePage;
  const std::uintptr_t last = (at + bytes) / kHugePage * kHugePage;
  if (last > first)
    madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}
}
}
