#include "GpuStart.h"

#include <cstdlib>

namespace topovox
{
namespace cli
{

bool mayRunOnGpu(Device requested)
{
  if (requested != Device::Auto)
    return requested == Device::GPU;
  const char* env = std::getenv("TOPOVOX_DEVICE");
  Device fromEnv = Device::Auto;
  return !(env && *env && parseDevice(env, fromEnv) && fromEnv == Device::CPU);
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
