#include "GpuStart.h"

namespace topovox
{
namespace cli
{

bool mayRunOnGpu(Device requested)
{
  return requestedDevice(requested) != Device::CPU;
}

GpuStart::GpuStart(bool start)
{
  if (start)
    started_ = std::async(std::launch::async, prepareGpu);
}

void GpuStart::wait()
{
  if (started_.valid())
    started_.get();
}

} // namespace cli
} // namespace topovox
