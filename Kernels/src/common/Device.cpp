#include "topovox/Device.h"

#include "CudaBackend.h"

#include <cctype>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace topovox
{
const char* deviceName(Device d)
{
  switch (d)
  {
    case Device::Auto: return "auto";
    case Device::CPU: return "cpu";
    case Device::GPU: return "gpu";
  }
  return "unknown";
}

bool parseDevice(const std::string& name, Device& out)
{
  std::string s;
  for (char c : name)
    s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "auto")
    out = Device::Auto;
  else if (s == "cpu")
    out = Device::CPU;
  else if (s == "gpu" || s == "cuda")
    out = Device::GPU;
  else
    return false;
  return true;
}

bool builtWithCuda()
{
#ifdef TOPOVOX_WITH_CUDA
  return true;
#else
  return false;
#endif
}

bool gpuAvailable()
{
#ifdef TOPOVOX_WITH_CUDA
  // Asking the driver costs milliseconds; the answer does not change.
  static std::once_flag once;
  static bool available = false;
  std::call_once(once, [] { available = cuda::deviceCount() > 0; });
  return available;
#else
  return false;
#endif
}

void prepareGpu()
{
#ifdef TOPOVOX_WITH_CUDA
  if (gpuAvailable())
    cuda::startContext();
#endif
}

std::string gpuDescription()
{
#ifdef TOPOVOX_WITH_CUDA
  return cuda::deviceDescription();
#else
  return "this build of TopoVox has no CUDA support";
#endif
}

namespace
{
void addWarning(std::string* warning, const std::string& text)
{
  if (warning)
    *warning += (warning->empty() ? "" : "\n") + text;
}
}

Device requestedDevice(Device requested, std::string* warning)
{
  if (requested != Device::Auto)
    return requested;
  const char* env = std::getenv("TOPOVOX_DEVICE");
  Device fromEnv = Device::Auto;
  if (env && *env && !parseDevice(env, fromEnv))
    addWarning(warning, std::string("TOPOVOX_DEVICE='") + env + "' is not auto, cpu or gpu; ignored");
  return fromEnv;
}

Device resolveDevice(Device requested, std::string* warning)
{
  auto warn = [warning](const std::string& text) { addWarning(warning, text); };
  requested = requestedDevice(requested, warning);
  if (requested == Device::CPU)
    return Device::CPU;
  if (gpuAvailable())
    return Device::GPU;
  if (requested == Device::GPU)
    warn("the GPU was requested but " + gpuDescription() + "; running on the CPU");
  return Device::CPU;
}

int defaultThreadCount()
{
  if (const char* env = std::getenv("TOPOVOX_NUM_THREADS"))
  {
    const int n = std::atoi(env);
    if (n > 0)
      return n;
  }
  const unsigned hc = std::thread::hardware_concurrency();
  return hc > 0 ? static_cast<int>(hc) : 1;
}

int threadCount(int requested)
{
  return requested > 0 ? requested : defaultThreadCount();
}
}
