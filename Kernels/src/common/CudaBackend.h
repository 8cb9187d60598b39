// CudaBackend.h - the few facts about CUDA the host code needs, implemented
// in CudaBackend.cu when the library is built with CUDA and absent otherwise
// (callers check builtWithCuda() / TOPOVOX_WITH_CUDA first).
#pragma once

#include <string>

namespace topovox
{
namespace cuda
{
int deviceCount();               // 0 when no usable device answers
std::string deviceDescription(); // name and memory of device 0, or the error
void startContext();             // the current device's context made (errors cleared)
}
}
