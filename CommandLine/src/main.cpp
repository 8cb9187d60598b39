// main.cpp - `topovox COMMAND ...`: finds the command, runs it, and turns
// every failure into one line on stderr and an exit status:
//   0 success, 1 error (bad input, write failure...), 2 usage error.
#include "Commands.h"
#include "Errors.h"
#include "HugePageHeap.h"
#include "Messages.h"
#include "OutputFile.h"

#include "topovox/Device.h"
#include "topovox/Progress.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef TOPOVOX_VERSION
#define TOPOVOX_VERSION "unknown"
#endif

namespace topovox
{
namespace cli
{
namespace
{

// Every command, in the order `topovox --help` lists them.
const std::vector<Command>& commandTable()
{
  static const std::vector<Command> table = {
    { "euler", "Euler characteristic curve (chi per threshold, cell counts)", runEuler },
    { "persistence", "persistence diagram (birth, death and voxels of each class)",
      runPersistence },
    { "transform", "Euler characteristic transform (chi per direction and threshold)", runTransform },
    { "morphology", "binary and grey morphology as scipy.ndimage computes it", runMorphology },
    { "distance", "distance transforms (edt, cdt, bf) as scipy.ndimage computes them", runDistance },
    { "transport", "optimal transport: histograms, grids, diagrams", runTransport },
    { "regions", "the region of the image behind each persistence pair, as labels", runRegions },
    { "simplify", "remove the features persisting less than a threshold from the image", runSimplify },
  };
  return table;
}

std::string mainHelp()
{
  std::string out = "Usage: topovox COMMAND [options] INPUT -o OUTPUT\n"
                    "       topovox COMMAND --help\n\n"
                    "Topological analysis of 1D, 2D and 3D images (TopoVox " TOPOVOX_VERSION ").\n\n"
                    "Commands:\n";
  for (const Command& c : commandTable())
  {
    std::string name = c.name;
    out += "  " + name + std::string(name.size() < 12 ? 12 - name.size() : 1, ' ') + c.summary + "\n";
  }
  out += "\nOptions:\n"
         "  -h, --help    show this help and exit\n"
         "  --version     show the version and exit\n\n"
         "Inputs: NumPy .npy (.npy.gz), NIfTI-1 .nii (.nii.gz), VTK .vti (.vti.gz), raw\n"
         "files with --dims/--dtype (also .gz), or a .json sidecar describing a raw file.\n"
         "Outputs: tables as .csv, .npy or - (CSV on stdout); images as .npy.\n\n"
         "Environment: TOPOVOX_DEVICE (auto, cpu, gpu) steers --device auto;\n"
         "TOPOVOX_NUM_THREADS sets the default number of CPU threads. The tool runs\n"
         "with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (large blocks on huge pages)\n"
         "unless GLIBC_TUNABLES already sets glibc.malloc.hugetlb.\n\n"
         "Exit status: 0 success, 1 error, 2 usage error. Errors and warnings are one\n"
         "line each on stderr, prefixed \"topovox: \".\n";
  return out;
}

std::string versionText()
{
  return std::string("topovox " TOPOVOX_VERSION " (") +
    (builtWithCuda() ? "with CUDA" : "CPU only, without CUDA") + ")\n";
}

int dispatch(const std::vector<std::string>& args)
{
  if (args.empty())
    throw UsageError("no command given (see topovox --help)");
  const std::string& first = args[0];
  if (first == "-h" || first == "--help")
  {
    std::fputs(mainHelp().c_str(), stdout);
    return ExitSuccess;
  }
  if (first == "--version")
  {
    std::fputs(versionText().c_str(), stdout);
    return ExitSuccess;
  }
  // `topovox help euler` is `topovox euler --help`.
  if (first == "help")
  {
    if (args.size() == 1)
      return dispatch({ "--help" });
    return dispatch({ args[1], "--help" });
  }
  for (const Command& c : commandTable())
    if (first == c.name)
      return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!first.empty() && first[0] == '-')
    throw UsageError("unknown option " + first + " (a command comes first; see topovox --help)");
  throw UsageError("unknown command '" + first + "' (see topovox --help)");
}

} // namespace
} // namespace cli
} // namespace topovox

int main(int argc, char** argv)
{
  using namespace topovox::cli;
  restartWithHugePageHeap(argv); // before anything is allocated or opened
  installCleanupOnSignals();
  try
  {
    return dispatch(std::vector<std::string>(argv + 1, argv + argc));
  }
  catch (const UsageError& e)
  {
    say(e.what());
    return ExitUsage;
  }
  catch (const Error& e)
  {
    say(e.what());
  }
  catch (const std::bad_alloc&)
  {
    say("out of memory");
  }
  catch (const topovox::Aborted&)
  {
    say("interrupted");
    return ExitInterrupted;
  }
  catch (const std::exception& e)
  {
    // The kernels' std::invalid_argument and std::runtime_error: their
    // messages are written for users.
    say(e.what());
  }
  return ExitFailure;
}
