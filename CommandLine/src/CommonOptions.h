// CommonOptions.h - options every kernel-running command shares: where to
// run (--device, --threads) and how much to say (--verbose), plus -o.
#pragma once

#include "OptionParser.h"

#include "topovox/Device.h"

#include <string>

namespace topovox
{
namespace cli
{

struct ExecutionOptions
{
  Device device = Device::Auto;
  int threads = 0; // 0: defaultThreadCount()
  bool verbose = false;
  bool help = false;
};

// Adds --device, --threads, --verbose and --help (an "Execution" section).
void addExecutionOptions(OptionParser& parser, ExecutionOptions& options);

// Adds -o/--output, for commands that write one table (TableWriter.h).
void addTableOutputOption(OptionParser& parser, std::string& output);

// "cpu (8 threads)" or "gpu (NVIDIA H200, 139 GiB)", with ", heap on huge
// pages" inside the brackets when it is (HugePageHeap.h): for --verbose.
std::string describeDevice(Device used, int threads);

} // namespace cli
} // namespace topovox
