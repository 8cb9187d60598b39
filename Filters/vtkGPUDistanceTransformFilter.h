/**
 * @class   vtkGPUDistanceTransformFilter
 * @brief   Distance transforms of an image's foreground, as scipy.ndimage
 *          computes them, with the image's (anisotropic) spacing.
 *
 * Foreground: nonzero voxels, or those in ForegroundRange with
 * UseForegroundRange. Each foreground voxel gets its distance to the
 * nearest background voxel (Metric: exact Euclidean with the spacing, or
 * the chamfer's chessboard or taxicab distances in voxels, or a brute-force
 * Euclidean check); background voxels get 0. Optional outputs:
 * - NearestBackgroundIndex: the nearest background voxel's (i, j, k);
 * - NearestBackgroundVector: the world-space vector to it, for glyphs;
 * - SignedDistance: outside the foreground the (positive) distance to it,
 *   inside minus the distance to the background (Euclidean metrics), as
 *   level-set and medical users expect.
 * Definitions: Kernels/include/topovox/DistanceTransform.h.
 *
 * Device: Auto (the GPU when present), CPU or GPU, with identical results;
 * the exact Euclidean metric runs on the GPU, the others on the CPU
 * threads. MPI: rank 0 reads the whole image
 * and computes (the exact transform is global); other ranks output empty
 * images.
 */
#ifndef vtkGPUDistanceTransformFilter_h
#define vtkGPUDistanceTransformFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkImageAlgorithm.h"

class vtkMultiProcessController;

class TOPOVOXFILTERS_EXPORT vtkGPUDistanceTransformFilter : public vtkImageAlgorithm
{
public:
  static vtkGPUDistanceTransformFilter* New();
  vtkTypeMacro(vtkGPUDistanceTransformFilter, vtkImageAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum MetricType
  {
    EUCLIDEAN = 0,
    CHESSBOARD = 1,
    TAXICAB = 2,
    BRUTE_FORCE_EUCLIDEAN = 3
  };
  vtkSetClampMacro(Metric, int, EUCLIDEAN, BRUTE_FORCE_EUCLIDEAN);
  vtkGetMacro(Metric, int);
  vtkSetMacro(UseForegroundRange, bool);
  vtkGetMacro(UseForegroundRange, bool);
  vtkSetVector2Macro(ForegroundRange, double);
  vtkGetVector2Macro(ForegroundRange, double);
  vtkSetMacro(ComputeIndices, bool);
  vtkGetMacro(ComputeIndices, bool);
  vtkSetMacro(ComputeVectors, bool);
  vtkGetMacro(ComputeVectors, bool);
  vtkSetMacro(ComputeSignedDistance, bool);
  vtkGetMacro(ComputeSignedDistance, bool);
  vtkSetClampMacro(Component, int, -1, VTK_INT_MAX);
  vtkGetMacro(Component, int);
  /// 0 Auto, 1 CPU, 2 GPU.
  vtkSetClampMacro(Device, int, 0, 2);
  vtkGetMacro(Device, int);
  vtkSetClampMacro(NumberOfThreads, int, 0, 4096);
  vtkGetMacro(NumberOfThreads, int);
  void SetController(vtkMultiProcessController* controller);
  vtkGetObjectMacro(Controller, vtkMultiProcessController);

protected:
  vtkGPUDistanceTransformFilter();
  ~vtkGPUDistanceTransformFilter() override;
  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int Metric = EUCLIDEAN;
  bool UseForegroundRange = false;
  double ForegroundRange[2] = { 1.0, 1.0 };
  bool ComputeIndices = false;
  bool ComputeVectors = false;
  bool ComputeSignedDistance = false;
  int Component = -1;
  int Device = 0;
  int NumberOfThreads = 0;
  vtkMultiProcessController* Controller = nullptr;

private:
  vtkGPUDistanceTransformFilter(const vtkGPUDistanceTransformFilter&) = delete;
  void operator=(const vtkGPUDistanceTransformFilter&) = delete;
};

#endif
