// vtkTopoVoxDensity.cxx - image arrays as densities for the transport filters.
#include "vtkTopoVoxDensity.h"

#include "vtkTopoVoxImageAdapter.h"

#include "topovox/GridSinkhorn.h"

#include "vtkDataArray.h"
#include "vtkImageData.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

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
  for (vtkIdType k = 0; k < array->GetNumberOfTuples(); ++k)
    out.values[static_cast<size_t>(k)] = array->GetTuple1(k);
  try
  {
    topovox::normalizeDensity(out.values, "the " + which);
  }
  catch (const std::invalid_argument& e)
  {
    return e.what();
  }
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
