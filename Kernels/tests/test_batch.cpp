// test_batch.cpp - forEachImage (Batch.h): every image runs exactly once,
// the images of a CPU batch share the threads (never more at once than
// asked; a small batch gets the spare ones), a false from one image stops
// the batch, and an exception reaches the caller after the others finish.
#include "topovox/Batch.h"

#include "KernelCheck.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace topovox;
using kernel_check::expect;

int main()
{
  for (int threads : { 1, 2, 4, 7 })
    for (int64_t count : { 0, 1, 3, 16, 101 })
    {
      const std::string what = std::to_string(count) + " images, " + std::to_string(threads) + " threads";
      std::vector<std::atomic<int>> runs(static_cast<size_t>(count));
      std::atomic<int> inFlight{ 0 }, most{ 0 }, threadsSeen{ 0 };
      const int64_t ran = forEachImage(count, threads, Device::CPU, [&](int64_t k, int given) {
        const int now = ++inFlight;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now))
        {
        }
        threadsSeen = given;
        ++runs[static_cast<size_t>(k)];
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --inFlight;
        return true;
      });
      bool once = true;
      for (auto& r : runs)
        once = once && r == 1;
      expect(ran == count && once, what + ": every image once (" + std::to_string(ran) + " run)");
      expect(most <= threads, what + ": at most the threads at once (" + std::to_string(most.load()) + ")");
      if (count > 0)
      {
        const int each = count >= threads ? 1 : threads / static_cast<int>(count);
        expect(threadsSeen == each, what + ": each image told " + std::to_string(each) + " threads (" +
            std::to_string(threadsSeen.load()) + ")");
      }
    }
  // A false stops the batch: images not yet started are skipped.
  std::atomic<int> started{ 0 };
  const int64_t ran = forEachImage(1000, 2, Device::CPU, [&](int64_t k, int) {
    ++started;
    return k < 10;
  });
  expect(ran == started && ran < 1000 && ran >= 11, "a false stops the batch (" + std::to_string(ran) + " run)");
  // An exception reaches the caller.
  bool thrown = false;
  try
  {
    forEachImage(50, 3, Device::CPU, [&](int64_t k, int) {
      if (k == 7)
        throw std::runtime_error("image 7");
      return true;
    });
  }
  catch (const std::runtime_error& e)
  {
    thrown = std::string(e.what()) == "image 7";
  }
  expect(thrown, "an exception from one image reaches the caller");
  return kernel_check::finish();
}
