// vtkTopoVoxDensity.cxx - image arrays as densities for the transport filters.
#include "vtkTopoVoxDensity.h"

#include "vtkTopoVoxImageAdapter.h"

#include "vtkDataArray.h"
#include "vtkImageData.h"

#include <algorithm>
#include <cmath>

namespace topovox_vtk
{
std::string readDensity(
  vtkImageData* image, vtkDataArray* selected, int association, const std::string& which, Density& out)
{
  if (!image)
    return "the " + which + " image is missing";
  vtkDataArray* array = arrayToProcess(selected, association, image, out.cellData);
  if (!array)
    return "the " + which + " image has no scalar array";
  if (array->GetNumberOfComponents() != 1)
    return "the " + which + " array '" + (array->GetName() ? array->GetName() : "") + "' has " +
      std::to_string(array->GetNumberOfComponents()) + " components; a density needs one";
  out.values.resize(static_cast<size_t>(array->GetNumberOfTuples()));
  double total = 0;
  for (vtkIdType k = 0; k < array->GetNumberOfTuples(); ++k)
  {
    const double v = array->GetTuple1(k);
    if (!(v >= 0) || !std::isfinite(v))
      return "the " + which + " density has a negative, NaN or infinite value (" + std::to_string(v) +
        " at tuple " + std::to_string(k) + "); densities must be nonnegative";
    out.values[static_cast<size_t>(k)] = v;
    total += v;
  }
  if (!(total > 0))
    return "the " + which + " density is zero everywhere";
  for (double& v : out.values)
    v /= total;
  // The grid of the samples: points, or cells (one fewer per axis).
  image->GetDimensions(out.dims);
  double spacing[3];
  image->GetSpacing(spacing);
  for (int k = 0; k < 3; ++k)
  {
    out.grid[k] = out.cellData ? std::max(1, out.dims[k] - 1) : out.dims[k];
    out.spacing[k] = std::abs(spacing[k]);
  }
  return {};
}

bool sameGrid(const Density& a, const Density& b)
{
  return a.cellData == b.cellData && a.values.size() == b.values.size() && a.dims[0] == b.dims[0] &&
    a.dims[1] == b.dims[1] && a.dims[2] == b.dims[2];
}

topovox::SinkhornOptions sinkhornOptions(double reg, int method, int maxIterations, double stopThreshold, int threads)
{
  topovox::SinkhornOptions o;
  o.reg = reg;
  o.method = method ? topovox::SinkhornMethod::SinkhornLog : topovox::SinkhornMethod::Sinkhorn;
  o.numItermax = maxIterations;
  o.stopThr = stopThreshold;
  o.threads = threads;
  return o;
}
}
