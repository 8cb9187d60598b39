/**
 * @class   vtkOptimalTransportFilter
 * @brief   Entropic optimal transport between two densities on one image
 *          grid: the cost, the dual potentials and where the mass moves.
 *
 * Inputs: two images on the same grid (port 0 the source density, port 1
 * the target), any scalar array of each (the selected arrays, else the
 * active scalars), normalised to unit mass; negative, NaN or infinite
 * values, or a zero total, are errors. The cost between voxels is the
 * squared Euclidean distance in world units (the image's spacing), and the
 * problem is solved on the grid without building the voxels x voxels
 * matrices (Kernels/include/topovox/GridSinkhorn.h: POT's sinkhorn_knopp or
 * sinkhorn_log with Reg, MaximumIterations, StopThreshold).
 *
 * Outputs:
 * - port 0: the source image with point (or cell) arrays SourcePotential and
 *   TargetPotential (the dual potentials; -inf where a density is 0),
 *   SourceGradient and TargetGradient (the gradients of the entropic
 *   transport value with respect to each density: the potentials centred,
 *   0 where the density is 0) and
 *   Displacement, the vector from each voxel to the barycentre of where its
 *   mass goes (show it with glyphs or stream lines), and field data
 *   TransportCost, Iterations and MarginalError;
 * - port 1: a one-row table of TransportCost, Iterations and MarginalError.
 *
 * MPI: rank 0 gathers both images and solves; the other ranks output empty
 * data sets.
 */
#ifndef vtkOptimalTransportFilter_h
#define vtkOptimalTransportFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkAlgorithm.h"

class vtkMultiProcessController;

class TOPOVOXFILTERS_EXPORT vtkOptimalTransportFilter : public vtkAlgorithm
{
public:
  static vtkOptimalTransportFilter* New();
  vtkTypeMacro(vtkOptimalTransportFilter, vtkAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  /** Entropic regularisation, in squared world units (POT's reg). */
  vtkSetClampMacro(Reg, double, 1e-300, VTK_DOUBLE_MAX);
  vtkGetMacro(Reg, double);
  /** 0 Sinkhorn (scaling), 1 log domain (default: stable for small Reg). */
  vtkSetClampMacro(Method, int, 0, 1);
  vtkGetMacro(Method, int);
  vtkSetClampMacro(MaximumIterations, int, 1, VTK_INT_MAX);
  vtkGetMacro(MaximumIterations, int);
  vtkSetClampMacro(StopThreshold, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(StopThreshold, double);
  vtkSetClampMacro(NumberOfThreads, int, 0, 4096);
  vtkGetMacro(NumberOfThreads, int);
  void SetController(vtkMultiProcessController* controller);
  vtkGetObjectMacro(Controller, vtkMultiProcessController);

  vtkTypeBool ProcessRequest(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

protected:
  vtkOptimalTransportFilter();
  ~vtkOptimalTransportFilter() override;
  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*);

  double Reg = 1.0;
  int Method = 1;
  int MaximumIterations = 1000;
  double StopThreshold = 1e-9;
  int NumberOfThreads = 0;
  vtkMultiProcessController* Controller = nullptr;

private:
  vtkOptimalTransportFilter(const vtkOptimalTransportFilter&) = delete;
  void operator=(const vtkOptimalTransportFilter&) = delete;
};

#endif
