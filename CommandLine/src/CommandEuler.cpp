// CommandEuler.cpp - `topovox euler`: the Euler characteristic curve of an
// image, one row per threshold: threshold, chi, and the cell counts per
// dimension of the cubical complex at that threshold.
#include "Commands.h"

#include "CommandSteps.h"
#include "CommonOptions.h"
#include "Errors.h"
#include "GpuStart.h"
#include "ImageInput.h"
#include "Messages.h"
#include "OutputFile.h"
#include "Progress.h"
#include "TableWriter.h"

#include "topovox/Batch.h"
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
  bool batch = false; // --batch: numpy's first axis indexes images
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
  p.flag("batch", 0,
    "the input is a stack of images: numpy's first axis\nindexes them ((n, w), (n, h, w) or (n, d, h, w));\n"
    "one curve each, all on the thresholds of the whole\nstack (bins from its min and max, exact: its\n"
    "distinct values, or the list), the images shared\namong the threads; rows start with an image column",
    &a.batch);
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

// --batch: one curve per image of the stack, on the thresholds the options
// give for the whole stack, one table with an image column first.
Table batchTable(const Image& image, EulerCurveOptions options, ThresholdMode mode, std::string& warnings)
{
  const Stack stack = stackOf(image);
  Box all;
  for (int a = 0; a < 3; ++a)
    all.hi[a] = image.dims[a];
  const GridView whole = image.view();
  EulerCurveOptions common = options;
  common.thresholdMode = mode;
  const ValueSummary summary = summarizeValues(whole, all, options.threads);
  const std::vector<double> distinct =
    mode == ThresholdMode::Exact ? distinctValues(whole, all, options.threads) : std::vector<double>();
  const std::vector<double> thresholds = resolveThresholds(common, image.type, summary, distinct);
  Table t;
  t.columns = { "image", "threshold", "euler", "vertices", "edges", "squares", "cubes" };
  if (thresholds.empty())
    return t;
  options.thresholdMode = ThresholdMode::List;
  options.thresholds = thresholds;
  options.progress = nullptr;
  std::vector<EulerCurve> curves(static_cast<size_t>(stack.count));
  forEachImage(stack.count, options.threads, options.device, [&](int64_t k, int threads) {
    EulerCurveOptions one = options;
    one.threads = threads;
    curves[static_cast<size_t>(k)] = computeEulerCurve(stack.image(image, k), one);
    return true;
  });
  for (size_t k = 0; k < curves.size(); ++k)
  {
    addWarning(warnings, curves[k].warnings);
    appendImageRows(t, curveTable(curves[k]), static_cast<int64_t>(k));
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

  InputOptions input = a.input;
  input.stacks = a.batch;
  GpuStart gpu(mayRunOnGpu(a.execution.device));
  const Image image = readInputLogged(inputPath, input, verbose);
  gpu.wait();
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
  if (a.batch)
  {
    std::string warnings;
    Table t;
    try
    {
      t = batchTable(image, options, mode, warnings);
    }
    catch (const std::invalid_argument& e)
    {
      throw UsageError(e.what());
    }
    warn(warnings);
    if (t.values.empty())
      warn("the curves are empty: the stack has no values to threshold (all NaN or infinite)");
    if (verbose)
      say("euler curves: a batch of " + std::to_string(stackOf(image).count) + " images, " +
        std::to_string(t.rowCount()) + " rows: " + seconds(watch.seconds()));
    writeTableLogged(output, t, format, a.output, verbose);
    return ExitSuccess;
  }
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
