// Device.h - which processor runs a kernel.
//
// Auto (the default) means: the GPU when this build has CUDA and a device is
// present, else the CPU. The environment variable TOPOVOX_DEVICE (auto, cpu,
// gpu) replaces Auto, so a user can steer a whole pipeline without touching
// its properties; an explicit CPU or GPU request always wins over it. Asking
// for the GPU where there is none runs on the CPU and says so in a warning.
#pragma once

#include <string>

namespace topovox
{

enum class Device : int
{
  Auto = 0,
  CPU = 1,
  GPU = 2
};

const char* deviceName(Device d);
bool parseDevice(const std::string& name, Device& out);

// True when this library was built with CUDA.
bool builtWithCuda();
// True when CUDA is built in and at least one usable GPU answers.
bool gpuAvailable();
// A one-line description of the GPU (name, memory), or why there is none.
std::string gpuDescription();
// Starts CUDA on the GPU ahead of its first use, which then does not wait
// for it (0.3 to 0.5 s a process on the GPU machine): for a caller that
// knows it will use the GPU and has other work meanwhile (the command line
// calls it on a thread of its own while it reads its input). Nothing
// without CUDA or a GPU; never throws.
void prepareGpu();

// `requested` with TOPOVOX_DEVICE applied, without looking for a GPU: Auto
// becomes the device the variable names (cpu or gpu; auto or unset: Auto
// stays); CPU and GPU stay. An unknown value is ignored, and a warning
// saying so is appended to `warning`.
Device requestedDevice(Device requested, std::string* warning = nullptr);

// Resolves a request to CPU or GPU. Any warning (GPU asked for but absent,
// unknown TOPOVOX_DEVICE value) is appended to `warning`.
Device resolveDevice(Device requested, std::string* warning);

// Number of CPU threads the CPU paths use: TOPOVOX_NUM_THREADS when set and
// positive, else std::thread::hardware_concurrency().
int defaultThreadCount();

// The threads a call uses: `requested` when positive (an options struct's
// `threads`), else defaultThreadCount().
int threadCount(int requested);

} // namespace topovox
