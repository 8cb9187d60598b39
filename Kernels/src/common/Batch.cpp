// Batch.cpp - the images of a batch shared among the CPU threads, or in turn
// on the GPU.
#include "topovox/Batch.h"

#include "Parallel.h"

#include <algorithm>
#include <atomic>

namespace topovox
{

int64_t forEachImage(int64_t count, int threads, Device device, const std::function<bool(int64_t, int)>& work)
{
  if (count <= 0)
    return 0;
  const int all = threadCount(threads);
  if (resolveDevice(device, nullptr) == Device::GPU)
  {
    int64_t k = 0;
    while (k < count && work(k, all))
      ++k;
    return std::min(k + 1, count);
  }
  // One image per thread; spare threads (a batch smaller than the threads)
  // go to the images.
  const int each = count >= all ? 1 : std::max(1, all / static_cast<int>(count));
  std::atomic<int64_t> ran{ 0 };
  std::atomic<bool> stop{ false };
  // Images are handed out one at a time: their costs can differ a lot.
  parallelForDynamic(count, all, 1, [&](int, int64_t k, int64_t) {
    if (stop)
      return; // cancelled, or an image failed: no new images
    ++ran;
    try
    {
      if (!work(k, each))
        stop = true;
    }
    catch (...)
    {
      stop = true; // parallelFor rethrows this
      throw;
    }
  });
  return ran;
}

} // namespace topovox
