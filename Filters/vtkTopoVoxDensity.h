// vtkTopoVoxDensity.h - (private to TopoVox::Filters) an image's scalar
// array read as a density of unit mass on its grid, for the transport
// filters: the checks users need to hear about (one component, nonnegative,
// finite, not all zero), the grid the kernel solves on, and the filters'
// common properties as the kernel's options.
#ifndef vtkTopoVoxDensity_h
#define vtkTopoVoxDensity_h

#include "topovox/Sinkhorn.h"

#include <cstdint>
#include <string>
#include <vector>

class vtkDataArray;
class vtkImageData;

namespace topovox_vtk
{
struct Density
{
  std::vector<double> values; // normalised to sum 1, x fastest
  bool cellData = false;      // the samples are cells (else points)
  int64_t grid[3] = { 1, 1, 1 }; // samples per axis
  double spacing[3] = { 1, 1, 1 }; // world distance between samples (positive)
  int dims[3] = { 0, 0, 0 };  // the image's point dimensions
};

// Reads `selected` (the filter's array to process, with its association;
// the active point scalars when none) of `image` as a density. `which`
// names the input in messages ("source", "target", "time step 3"). Returns
// an empty string, or the reason it is not a density.
std::string readDensity(vtkImageData* image, vtkDataArray* selected, int association, const std::string& which,
  Density& out);

// Whether two densities live on the same grid (same dimensions and kind of
// samples); the transport filters compare samples one to one.
bool sameGrid(const Density& a, const Density& b);

// The transport filters' Reg, Method (0 scaling, 1 log domain),
// MaximumIterations, StopThreshold and NumberOfThreads as POT's options.
topovox::SinkhornOptions sinkhornOptions(double reg, int method, int maxIterations, double stopThreshold, int threads);
}

#endif
