// CommandFeatures.cpp - `topovox regions` and `topovox simplify`: the
// persistence features of an image seen in the image itself. regions: each
// voxel's innermost feature region (FeatureRegions.h) as the index of its
// pair in the diagram `topovox persistence` writes; simplify: the image with
// the features persisting no longer than a threshold removed
// (Simplification.h).
#include "Commands.h"

#include "CommandSteps.h"
#include "CommonOptions.h"
#include "Errors.h"
#include "ImageInput.h"
#include "InputFile.h"
#include "ImageWriter.h"
#include "Messages.h"
#include "OutputFile.h"
#include "Progress.h"

#include "topovox/FeatureRegions.h"
#include "topovox/Persistence.h"
#include "topovox/Simplification.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace topovox
{
namespace cli
{
namespace
{
struct FeatureArguments
{
  InputOptions input;
  ExecutionOptions execution;
  Construction construction = Construction::V;
  Filtration filtration = Filtration::Sublevel;
  double persistence = 0.0; // regions: above; simplify: at most
  bool enclosed = false;    // regions: the top dimension instead of components
  bool components = true, voids = true; // simplify
  std::string output;
};

void addFeatureOptions(OptionParser& p, FeatureArguments& a, bool simplify)
{
  p.section("Complex and filtration (as topovox persistence)");
  p.value("construction", 0, "V|T", "V: voxels are vertices; T: voxels are cubes",
    constructionName(a.construction), [&a](const std::string& text) {
      if (!parseConstruction(text, a.construction))
        throw UsageError("expected V or T, got '" + text + "'");
    });
  p.value("filtration", 0, "F", "sublevel or superlevel", filtrationName(a.filtration),
    [&a](const std::string& text) {
      if (!parseFiltration(text, a.filtration))
        throw UsageError("expected sublevel or superlevel, got '" + text + "'");
    });
  p.section("Features");
  p.value(simplify ? "threshold" : "min-persistence", 0, "X",
    simplify ? "remove the features with |death - birth| <= X" : "label the features with |death - birth| > X\n(essential classes always)",
    "0", [&a](const std::string& text) {
      const double x = parseNumber(text);
      if (!(x >= 0) || std::isinf(x))
        throw UsageError("expected a finite number >= 0, got '" + text + "'");
      a.persistence = x;
    });
  if (simplify)
    p.value("only", 0, "KIND", "components: fill basins only; voids: lower voids\n(holes in 2D) only",
      "both", [&a](const std::string& text) {
        const int k = parseChoice(text, { "components", "voids" });
        a.components = k == 0;
        a.voids = k == 1;
      });
  else
    p.value("kind", 0, "KIND",
      "components: the voxels below a component's death\nholding its birth voxel; enclosed: the voxels\nabove "
      "a void's (2D: hole's) birth that it encloses",
      "components", [&a](const std::string& text) { a.enclosed = parseChoice(text, { "components", "enclosed" }) == 1; });
  p.value("output", 'o', "OUTPUT.npy", "the image to write", "", [&a](const std::string& text) { a.output = text; });
  addInputOptions(p, a.input);
  addExecutionOptions(p, a.execution);
}

// Both need the persistence engines, built only with PHAT (Kernels/
// CMakeLists.txt); without it the commands are listed but refuse to run.
#ifdef TOPOVOX_WITH_PHAT
constexpr bool EngineBuilt = true;
#else
constexpr bool EngineBuilt = false;
#endif

// Parses the command line (false: --help was printed) and reads the input.
bool prepare(OptionParser& parser, const std::vector<std::string>& args, FeatureArguments& a, const char* name,
  Image& image)
{
  const std::vector<std::string> positional = parser.parse(args);
  if (a.execution.help)
  {
    std::fputs(parser.help().c_str(), stdout);
    return false;
  }
  const std::string& input = singleInput(positional, a.output, name);
  if (!endsWith(a.output, ".npy"))
    throw UsageError(std::string("the output of ") + name + " is an image: name it .npy");
  if (!EngineBuilt)
    throw Error("persistence is not available: this topovox was built without PHAT");
  image = readInputLogged(input, a.input, a.execution.verbose);
  return true;
}
} // namespace

int runRegions(const std::vector<std::string>& args)
{
  FeatureArguments a;
  OptionParser parser("topovox regions [options] INPUT -o LABELS.npy",
    "The region of the image behind each persistence pair: every voxel gets the\n"
    "row, in the diagram `topovox persistence` writes with the same options, of\n"
    "the innermost feature whose region holds it (-1: none), as int32.");
  addFeatureOptions(parser, a, false);
  Image image;
  if (!prepare(parser, args, a, "regions", image))
    return ExitSuccess;
  OutputFile output(a.output);
  Stopwatch watch;
  PersistenceOptions po;
  po.construction = a.construction;
  po.filtration = a.filtration;
  po.threads = a.execution.threads;
  FeatureRegionOptions ro;
  ro.construction = a.construction;
  ro.filtration = a.filtration;
  ro.minPersistence = a.persistence;
  ro.components = !a.enclosed; // only the kind asked for
  ro.enclosed = a.enclosed;
  ro.threads = a.execution.threads;
  FeatureRegions regions;
  try
  {
#ifdef TOPOVOX_WITH_PHAT
    const PersistenceDiagram diagram = computePersistence(image.view(), po);
    regions = featureRegions(image.view(), diagram, ro);
#endif
  }
  catch (const std::invalid_argument& e)
  {
    throw UsageError(e.what());
  }
  const std::vector<int32_t>& labels = regions.labels[a.enclosed ? 1 : 0];
  if (labels.empty())
    throw UsageError("a 1D image has no enclosed regions: use --kind components");
  if (a.execution.verbose)
    say(std::string("regions: ") + (a.enclosed ? "enclosed" : "components") + ", " + seconds(watch.seconds()));
  Image layout = image.withoutSamples();
  layout.type = ScalarType::Int32;
  writeImageNpy(output, layout, labels.data(), labels.size() * sizeof(int32_t), false,
    threadCount(a.execution.threads));
  output.commit();
  return ExitSuccess;
}

int runSimplify(const std::vector<std::string>& args)
{
  FeatureArguments a;
  OptionParser parser("topovox simplify [options] INPUT -o OUTPUT.npy",
    "Persistence-based topological simplification: the basins (components) that\n"
    "persist no longer than the threshold filled to their spill value, then the\n"
    "voids (holes in 2D) lowered to their birth value. The result's components\n"
    "are exactly the input's above the threshold; its type is the input's.");
  addFeatureOptions(parser, a, true);
  Image image;
  if (!prepare(parser, args, a, "simplify", image))
    return ExitSuccess;
  OutputFile output(a.output);
  Stopwatch watch;
  SimplificationOptions so;
  so.construction = a.construction;
  so.filtration = a.filtration;
  so.maxPersistence = a.persistence;
  so.components = a.components;
  so.enclosed = a.voids;
  so.threads = a.execution.threads;
  std::vector<unsigned char> simplified; // the input's type and shape
  try
  {
#ifdef TOPOVOX_WITH_PHAT
    simplified = simplifyPersistence(image.view(), so);
#endif
  }
  catch (const std::invalid_argument& e)
  {
    throw UsageError(e.what());
  }
  if (a.execution.verbose)
    say("simplify: " + seconds(watch.seconds()));
  writeImageNpy(output, image.withoutSamples(), simplified.data(), simplified.size(), false,
    threadCount(a.execution.threads));
  output.commit();
  return ExitSuccess;
}

} // namespace cli
} // namespace topovox
