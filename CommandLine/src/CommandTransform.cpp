// CommandTransform.cpp - `topovox transform`: the Euler characteristic
// transform of an image (EulerTransform.h), one row per direction and
// threshold: direction, ux, uy, uz, threshold, euler.
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

#include "topovox/EulerTransform.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace topovox
{
namespace cli
{
namespace
{

struct TransformArguments
{
  InputOptions input;
  ExecutionOptions execution;
  EulerTransformOptions transform;
  std::string output;
  bool batch = false; // --batch: numpy's first axis indexes images
};

void addTransformOptions(OptionParser& p, TransformArguments& a)
{
  EulerTransformOptions& t = a.transform;
  p.section("Complex and heights");
  p.value("construction", 0, "V|T",
    "V: a cell's height is the largest of its\nvertices'; T: the smallest of the cubes\ncontaining it",
    constructionName(t.construction), [&t](const std::string& text) {
      if (!parseConstruction(text, t.construction))
        throw UsageError("expected V or T, got '" + text + "'");
    });
  p.value("weight", 0, "W", "height = W * value + A * <u, position>", "0",
    [&t](const std::string& text) { t.weight = parseNumber(text); });
  p.value("alpha", 0, "A", "the weight of the position along u", "1",
    [&t](const std::string& text) { t.alpha = parseNumber(text); });
  p.value("shape-level", 0, "L",
    "the shape is the voxels with value >= L\n(default: the whole image)", "",
    [&t](const std::string& text) { t.shapeLevel = parseNumber(text); });

  p.section("Directions");
  p.value("directions", 0, "N",
    "N directions spread evenly (angles 2 pi k / N\nin 2D, the Fibonacci sphere in 3D)",
    std::to_string(t.directionCount), [&t](const std::string& text) {
      t.directionCount = static_cast<int>(parseInteger(text, 1, 1 << 20));
    });
  p.value("direction", 0, "X,Y,Z",
    "a direction in world coordinates (repeat the\noption for more); replaces --directions", "",
    [&t](const std::string& text) {
      const std::vector<double> v = parseNumberList(text);
      if (v.size() != 3)
        throw UsageError("expected three numbers X,Y,Z, got '" + text + "'");
      if (!(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] > 0))
        throw UsageError("the direction " + text + " is zero");
      t.directions.push_back({ v[0], v[1], v[2] });
    });

  p.section("Thresholds");
  p.flag("batch", 0,
    "the input is a stack of images: numpy's first axis\nindexes them ((n, w), (n, h, w) or (n, d, h, w));\n"
    "one transform each, all on the same directions and\nthresholds (bins over the heights of the whole\n"
    "stack, or the list), the images shared among the\nthreads; rows start with an image column",
    &a.batch);
  p.value("bins", 0, "N",
    "N thresholds evenly spaced over the range of\nheights of all directions", std::to_string(t.binCount),
    [&t](const std::string& text) { t.binCount = static_cast<int>(parseInteger(text, 1, 100000000)); });
  p.value("threshold-list", 0, "A,B,...", "explicit thresholds, strictly increasing", "",
    [&t](const std::string& text) {
      t.thresholds = parseNumberList(text);
      t.thresholdMode = ThresholdMode::List;
    });

  addTableOutputOption(p, a.output);
  addInputOptions(p, a.input);
  addExecutionOptions(p, a.execution);
  p.epilog(std::string(inputFormatsHelp()) +
    "\n\nColumns: direction,ux,uy,uz,threshold,euler: for each direction u (a unit\n"
    "vector) and threshold t, the Euler characteristic of the cells whose height\n"
    "is <= t, the height of a voxel being W * value + A * <u, p>, p its position\n"
    "(origin 0, the sidecar's spacing, else 1). NaN voxels and voxels outside the\n"
    "shape belong to no set.\n\n"
    "Examples:\n"
    "  topovox transform mask.npy --shape-level 1 --directions 32 -o ect.csv\n"
    "  topovox transform vol.json --direction 0,0,1 --direction 1,0,0 -o ect.npy\n"
    "  topovox transform image.npy --weight 1 --alpha 0.5 --bins 100 -o ect.csv");
}

Table transformTable(const EulerTransform& t)
{
  Table table;
  table.columns = { "direction", "ux", "uy", "uz", "threshold", "euler" };
  for (size_t d = 0; d < t.directions.size(); ++d)
    for (size_t j = 0; j < t.thresholds.size(); ++j)
    {
      const double row[6] = { static_cast<double>(d), t.directions[d][0], t.directions[d][1],
        t.directions[d][2], t.thresholds[j], static_cast<double>(t.euler[d][j]) };
      table.values.insert(table.values.end(), row, row + 6);
    }
  return table;
}

// --batch: one transform per image of the stack, on the thresholds of the
// heights of the whole stack (computeEulerTransformBatch: on the GPU the
// whole stack in one launch), one table with an image column first.
Table batchTable(const Image& image, EulerTransformOptions options, std::string& warnings)
{
  const Stack stack = stackOf(image);
  std::vector<GridView> images;
  for (int64_t k = 0; k < stack.count; ++k)
    images.push_back(stack.image(image, k));
  options.progress = nullptr;
  const std::vector<EulerTransform> transforms = computeEulerTransformBatch(images, options);
  Table t;
  t.columns = { "image", "direction", "ux", "uy", "uz", "threshold", "euler" };
  for (size_t k = 0; k < transforms.size(); ++k)
  {
    addWarning(warnings, transforms[k].warnings);
    appendImageRows(t, transformTable(transforms[k]), static_cast<int64_t>(k));
  }
  return t;
}

} // namespace

int runTransform(const std::vector<std::string>& args)
{
  TransformArguments a;
  OptionParser parser("topovox transform [options] INPUT -o OUTPUT",
    "Euler characteristic transform of an image (1D, 2D or 3D): for each direction\n"
    "u, the Euler characteristic curve of the heights W * value + A * <u, p>.");
  addTransformOptions(parser, a);
  const std::vector<std::string> positional = parser.parse(args);
  if (a.execution.help)
  {
    std::fputs(parser.help().c_str(), stdout);
    return ExitSuccess;
  }
  const std::string& inputPath = singleInput(positional, a.output, "transform");
  const TableFormat format = tableFormatFor(a.output);
  if (parser.given("bins") && parser.given("threshold-list"))
    throw UsageError("--bins and --threshold-list exclude each other");
  if (parser.given("directions") && parser.given("direction"))
    throw UsageError("--directions and --direction exclude each other");
  if (!std::isfinite(a.transform.weight) || !std::isfinite(a.transform.alpha))
    throw UsageError("--weight and --alpha must be finite numbers");
  if (a.transform.thresholdMode == ThresholdMode::List)
  {
    try
    {
      transformThresholds(a.transform, 0, -1); // the list's own check, before reading
    }
    catch (const std::invalid_argument& e)
    {
      throw UsageError(std::string("--threshold-list: ") + e.what());
    }
  }
  const bool verbose = a.execution.verbose;
  OutputFile output(a.output);
  InputOptions input = a.input;
  input.stacks = a.batch;
  GpuStart gpu(mayRunOnGpu(a.execution.device));
  const Image image = readInputLogged(inputPath, input, verbose);
  gpu.wait();
  Stopwatch watch;

  EulerTransformOptions options = a.transform;
  options.device = a.execution.device;
  options.threads = a.execution.threads;
  for (int k = 0; k < 3; ++k)
    options.spacing[k] = image.spacing[k];
  if (a.batch)
  {
    std::string warnings;
    Table t;
    try
    {
      t = batchTable(image, options, warnings);
    }
    catch (const std::invalid_argument& e)
    {
      throw UsageError(e.what());
    }
    warn(warnings);
    if (t.values.empty())
      warn("the transforms are empty: no voxel of the stack has a finite height");
    if (verbose)
      say("euler transforms: a batch of " + std::to_string(stackOf(image).count) + " images, " +
        std::to_string(t.rowCount()) + " rows: " + seconds(watch.seconds()));
    writeTableLogged(output, t, format, a.output, verbose);
    return ExitSuccess;
  }
  ProgressBar bar("topovox: transform");
  options.progress = bar.callback();
  watch.restart();
  const EulerTransform t = computeEulerTransform(image.view(), options);
  bar.clear();
  warn(t.warnings);
  if (t.thresholds.empty())
    warn("the transform is empty: no voxel has a finite height (all NaN, or outside the shape)");
  if (verbose)
    say(std::string("euler transform: construction ") + constructionName(options.construction) + ", " +
      std::to_string(t.directions.size()) + " directions, " + std::to_string(t.thresholds.size()) +
      " thresholds, " + std::to_string(t.dimension) + "D complex, on " +
      describeDevice(t.device, options.threads) + ": " + seconds(watch.seconds()));
  writeTableLogged(output, transformTable(t), format, a.output, verbose);
  return ExitSuccess;
}

} // namespace cli
} // namespace topovox
