#include "CommonOptions.h"
#include "HugePageHeap.h"

#include "Errors.h"

namespace topovox
{
namespace cli
{

void addExecutionOptions(OptionParser& p, ExecutionOptions& o)
{
  p.section("Execution");
  p.value("device", 0, "DEVICE",
    "auto, cpu or gpu. auto: the GPU when this build\nhas CUDA and one is present, else the CPU;\n"
    "TOPOVOX_DEVICE=cpu|gpu steers auto. gpu without\na GPU warns and runs on the CPU",
    "auto", [&o](const std::string& text) {
      if (!parseDevice(text, o.device))
        throw UsageError("expected auto, cpu or gpu, got '" + text + "'");
    });
  p.value("threads", 0, "N",
    "CPU threads; 0 = all cores\n(or TOPOVOX_NUM_THREADS when set)", "0",
    [&o](const std::string& text) { o.threads = static_cast<int>(parseInteger(text, 0, 1 << 16)); });
  p.flag("verbose", 'v', "stage timings, input layout and device used,\non stderr", &o.verbose);
  p.flag("help", 'h', "show this help and exit", &o.help);
}

void addTableOutputOption(OptionParser& p, std::string& output)
{
  p.section("Output");
  p.value("output", 'o', "OUTPUT",
    "required. .csv: a header line, then one row per\nline; .npy: a float64 matrix with the "
    "same\ncolumns; -: CSV on stdout. Written to a temporary\nfile, renamed when complete: a "
    "failure leaves\nno partial file",
    "", [&output](const std::string& text) {
      if (text.empty())
        throw UsageError("expected a file name or -");
      output = text;
    });
}

std::string describeDevice(Device used, int threads)
{
  const std::string heap = heapOnHugePages() ? ", heap on huge pages" : "";
  if (used == Device::GPU)
    return std::string("gpu (") + gpuDescription() + heap + ")";
  const int n = threadCount(threads);
  return "cpu (" + std::to_string(n) + (n == 1 ? " thread" : " threads") + heap + ")";
}

} // namespace cli
} // namespace topovox
