// CommandEuler.cpp - `topovox euler`: the Euler characteristic curve of an
// image, one row per threshold: threshold, chi, and the cell counts per
// dimension of the cubical complex at that threshold.
#include "Commands.h"

#include "CommandSteps.h"
#include "CommonOptions.h"
#include "Errors.h"
#include "ImageInput.h"
#include "Messages.h"
#include "OutputFile.h"
#include "Progress.h"
#include "TableWriter.h"

#include "topovox/EulerCurve.h"

#include <cstdio>
#include <stdexcept>

namespace topovox
{
namespace cli
{
namespace
{

struct EulerArguments
{
  InputOptions input;
  ExecutionOptions execution;
  EulerCurveOptions curve;
  std::string output;
};

void addEulerOptions(OptionParser& p, EulerArguments& a)
{
  EulerCurveOptions& c = a.curve;
  p.section("Complex and filtration");
  p.value("construction", 0, "V|T",
    "V: each voxel is a vertex (6-connected in 3D,\n4-connected in 2D); T: each voxel is a "
    "cube\n(26-connected in 3D, 8-connected in 2D)",
    constructionName(c.construction), [&c](const std::string& text) {
      if (!parseConstruction(text, c.construction))
        throw UsageError("expected V or T, got '" + text + "'");
    });
  p.value("filtration", 0, "F",
    "sublevel: the voxels with value <= t, t rising;\nsuperlevel: value >= t, t falling",
    filtrationName(c.filtration), [&c](const std::string& text) {
      if (!parseFiltration(text, c.filtration))
        throw UsageError("expected sublevel or superlevel, got '" + text + "'");
    });

  p.section("Thresholds");
  p.value("thresholds", 0, "MODE",
    "auto: exact for integer data, bins for floats;\nexact: every distinct value present;\nbins: "
    "--bins values evenly spaced from the\nfinite min to the finite max;\nlist: the --threshold-list",
    thresholdModeName(c.thresholdMode), [&c](const std::string& text) {
      if (!parseThresholdMode(text, c.thresholdMode))
        throw UsageError("expected auto, exact, bins or list, got '" + text + "'");
    });
  p.value("bins", 0, "N", "number of thresholds for bins", std::to_string(c.binCount),
    [&c](const std::string& text) {
      c.binCount = static_cast<int>(parseInteger(text, 1, 100000000));
    });
  p.value("threshold-list", 0, "A,B,...",
    "explicit thresholds, strictly increasing\n(sublevel) or decreasing (superlevel); implies\n"
    "--thresholds list",
    "", [&c](const std::string& text) { c.thresholds = parseNumberList(text); });

  addTableOutputOption(p, a.output);
  addInputOptions(p, a.input);
  addExecutionOptions(p, a.execution);
  p.epilog(std::string(inputFormatsHelp()) +
    "\n\nColumns: threshold,euler,vertices,edges,squares,cubes (cells of the complex\n"
    "at that threshold; chi = vertices - edges + squares - cubes). A NaN voxel\n"
    "belongs to no sublevel or superlevel set; +-inf are ordinary values.\n\n"
    "Examples:\n"
    "  topovox euler image.npy -o curve.csv\n"
    "  topovox euler vol.json --construction T --filtration superlevel -o c.npy\n"
    "  topovox euler ct.raw.gz --dims 512,512 --dtype int16 --byte-order big -o -\n"
    "  topovox euler field.npy --thresholds bins --bins 100 -o curve.csv\n"
    "  topovox euler field.npy --threshold-list -1,0,0.5,1 -o curve.csv");
}

// Checks the threshold options against each other, before any input is
// read: a mistake here should cost nothing.
void checkThresholdOptions(const OptionParser& p, EulerCurveOptions& c)
{
  const bool listGiven = p.given("threshold-list");
  const bool modeGiven = p.given("thresholds");
  if (listGiven && !modeGiven)
    c.thresholdMode = ThresholdMode::List;
  if (listGiven && c.thresholdMode != ThresholdMode::List)
    throw UsageError(std::string("--threshold-list needs --thresholds list, not ") +
      thresholdModeName(c.thresholdMode));
  if (c.thresholdMode == ThresholdMode::List && !listGiven)
    throw UsageError("--thresholds list needs --threshold-list");
  if (p.given("bins") &&
    (c.thresholdMode == ThresholdMode::Exact || c.thresholdMode == ThresholdMode::List))
    throw UsageError(std::string("--bins does not apply to --thresholds ") +
      thresholdModeName(c.thresholdMode));
  if (c.thresholdMode == ThresholdMode::List)
  {
    // The kernels' own check (monotone, no NaN), run now rather than after
    // reading a large input. The list does not depend on the data.
    try
    {
      resolveThresholds(c, ScalarType::Float64, ValueSummary(), {});
    }
    catch (const std::invalid_argument& e)
    {
      throw UsageError(std::string("--threshold-list: ") + e.what());
    }
  }
}

Table curveTable(const EulerCurve& curve)
{
  Table t;
  t.columns = { "threshold", "euler", "vertices", "edges", "squares", "cubes" };
  t.values.reserve(curve.thresholds.size() * t.columns.size());
  for (size_t j = 0; j < curve.thresholds.size(); ++j)
  {
    t.values.push_back(curve.thresholds[j]);
    t.values.push_back(static_cast<double>(curve.euler[j]));
    for (int k = 0; k < 4; ++k)
      t.values.push_back(static_cast<double>(curve.cells[j][k]));
  }
  return t;
}

} // namespace

int runEuler(const std::vector<std::string>& args)
{
  EulerArguments a;
  OptionParser parser("topovox euler [options] INPUT -o OUTPUT",
    "Euler characteristic curve of an image (1D, 2D or 3D): for each threshold t,\n"
    "the Euler characteristic of the cubical complex of the voxels in the sublevel\n"
    "(or superlevel) set at t, and its numbers of cells per dimension.");
  addEulerOptions(parser, a);
  const std::vector<std::string> positional = parser.parse(args);
  if (a.execution.help)
  {
    std::fputs(parser.help().c_str(), stdout);
    return ExitSuccess;
  }
  const std::string& inputPath = singleInput(positional, a.output, "euler");
  const TableFormat format = tableFormatFor(a.output);
  checkThresholdOptions(parser, a.curve);
  const bool verbose = a.execution.verbose;

  // The output's temporary file first: an unwritable folder fails now.
  OutputFile output(a.output);

  const Image image = readInputLogged(inputPath, a.input, verbose);
  Stopwatch watch;

  EulerCurveOptions options = a.curve;
  options.device = a.execution.device;
  options.threads = a.execution.threads;
  const ThresholdMode mode = options.thresholdMode != ThresholdMode::Auto ? options.thresholdMode
    : scalarTypeIsFloating(image.type)                                     ? ThresholdMode::Bins
                                                                           : ThresholdMode::Exact;
  if (parser.given("bins") && mode != ThresholdMode::Bins)
    warn("--bins is ignored: --thresholds auto uses exact thresholds for integer data "
         "(pass --thresholds bins)");
  ProgressBar bar("topovox: euler");
  options.progress = bar.callback();

  watch.restart();
  const EulerCurve curve = computeEulerCurve(image.view(), options);
  bar.clear();
  warn(curve.warnings);
  if (curve.thresholds.empty())
    warn("the curve is empty: the image has no values to threshold (all NaN or infinite)");
  if (verbose)
    say(std::string("euler curve: construction ") + constructionName(options.construction) + ", " +
      filtrationName(options.filtration) + ", " + std::to_string(curve.thresholds.size()) +
      " thresholds (" + thresholdModeName(mode) + "), " + std::to_string(curve.dimension) +
      "D complex, on " + describeDevice(curve.device, options.threads) + ": " +
      seconds(watch.seconds()));

  writeTableLogged(output, curveTable(curve), format, a.output, verbose);
  return ExitSuccess;
}

} // namespace cli
} // namespace topovox
