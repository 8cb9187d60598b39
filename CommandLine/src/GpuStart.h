// GpuStart.h - CUDA's start (prepareGpu, Device.h: about 0.3 s a process on
// the H200 machine) on a thread of its own while a command reads its input,
// so that the first GPU call finds it done: for the commands whose kernels
// will run on the GPU when there is one.
#pragma once

#include "topovox/Device.h"

#include <future>

namespace topovox
{
namespace cli
{

// Whether kernels given `requested` may run on the GPU: GPU, or Auto unless
// TOPOVOX_DEVICE says cpu (Device.h). Only a hint for starting CUDA early;
// the kernels still decide (no GPU: the CPU).
bool mayRunOnGpu(Device requested);

class GpuStart
{
public:
  // Starts CUDA now when `start`, else does nothing.
  explicit GpuStart(bool start);
  // Waits for the start (a command calls it before it times its kernels);
  // the destructor waits too, also when the reading threw.
  void wait();

private:
  std::future<void> started_;
};

} // namespace cli
} // namespace topovox
