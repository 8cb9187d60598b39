// Progress.h - how long-running kernels report progress and accept aborts.
#pragma once

#include <functional>

namespace topovox
{
// Called with a fraction in [0, 1]. Returning false asks the kernel to stop
// early; the kernel then throws topovox::Aborted.
using ProgressCallback = std::function<bool(double)>;

struct Aborted
{
};
} // namespace topovox
