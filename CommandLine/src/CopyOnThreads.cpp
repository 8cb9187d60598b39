#include "CopyOnThreads.h"

#include "topovox/ParallelFor.h"

#include <cstdint>
#include <cstring>

namespace topovox
{
namespace cli
{

void copyOnThreads(void* to, const void* from, size_t bytes, int threads)
{
  constexpr int64_t kPart = int64_t(4) << 20;
  char* out = static_cast<char*>(to);
  const char* in = static_cast<const char*>(from);
  if (static_cast<int64_t>(bytes) < 2 * kPart || threads <= 1)
  {
    if (bytes)
      std::memcpy(out, in, bytes);
    return;
  }
  parallelForDynamic(static_cast<int64_t>(bytes), threads, kPart, [&](int, int64_t b0, int64_t b1) {
    std::memcpy(out + b0, in + b0, static_cast<size_t>(b1 - b0));
  });
}

} // namespace cli
} // namespace topovox
