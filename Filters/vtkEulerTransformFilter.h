/**
 * @class   vtkEulerTransformFilter
 * @brief   Euler characteristic transform of an image: one Euler curve per
 *          direction of a height filtration.
 *
 * For each direction u the Euler characteristic curve of the sublevel sets
 * of h(p) = Weight * X(p) + Alpha * <u, p> on the image's cubical complex
 * (V or T construction), p the voxel's world position. Weight 0 (default)
 * gives the classic transform of a shape: the whole image, or the voxels
 * with X >= ShapeLevel when UseShapeLevel is on. Exact: each cell counts at
 * its exact height (the max of h over its vertices in V). Definitions, NaN
 * rule and direction spreads: Kernels/include/topovox/EulerTransform.h.
 *
 * Outputs:
 * - port 0, a vtkTable: Threshold, then one EulerCharacteristic column per
 *   direction ("Direction 0", ...), with the directions as a 3-component
 *   field array "Directions", for the line chart view;
 * - port 1, the transform as a 2D vtkImageData (x: threshold index, y:
 *   direction index) with the point array "EulerCharacteristic", for the
 *   image view; field arrays Thresholds and Directions.
 *
 * MPI: ranks agree on the range of heights, count the cells of their own
 * piece (with a one-voxel halo) per direction, and the counts are summed on
 * rank 0, which holds the outputs; they equal the serial ones.
 */
#ifndef vtkEulerTransformFilter_h
#define vtkEulerTransformFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkAlgorithm.h"

#include <vector>

class vtkMultiProcessController;

class TOPOVOXFILTERS_EXPORT vtkEulerTransformFilter : public vtkAlgorithm
{
public:
  static vtkEulerTransformFilter* New();
  vtkTypeMacro(vtkEulerTransformFilter, vtkAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /** Cubical construction: 0 V (voxels are vertices, default), 1 T. */
  vtkSetClampMacro(Construction, int, 0, 1);
  vtkGetMacro(Construction, int);
  ///@}

  ///@{
  /** Directions spread evenly when no direction is given (default 16). */
  vtkSetClampMacro(NumberOfDirections, int, 1, 1 << 20);
  vtkGetMacro(NumberOfDirections, int);
  ///@}

  ///@{
  /** Directions given as (x, y, z) triples in world coordinates (normalised);
   * when any is given, NumberOfDirections is not used. */
  void SetNumberOfDirectionComponents(int n); // 3 per direction
  void SetDirectionComponent(int i, double value);
  void AddDirection(double x, double y, double z);
  void RemoveAllDirections();
  int GetNumberOfDirections() const { return static_cast<int>(this->Directions.size() / 3); }
  ///@}

  ///@{
  /** Weight on the image values (default 0: the transform of a shape). */
  vtkSetMacro(Weight, double);
  vtkGetMacro(Weight, double);
  ///@}

  ///@{
  /** Weight on the positions (default 1). */
  vtkSetMacro(Alpha, double);
  vtkGetMacro(Alpha, double);
  ///@}

  ///@{
  /** The shape is the voxels with value >= ShapeLevel when UseShapeLevel is
   * on (default off: the whole image). */
  vtkSetMacro(UseShapeLevel, bool);
  vtkGetMacro(UseShapeLevel, bool);
  vtkBooleanMacro(UseShapeLevel, bool);
  vtkSetMacro(ShapeLevel, double);
  vtkGetMacro(ShapeLevel, double);
  ///@}

  ///@{
  /** Thresholds: 0 NumberOfBins evenly spaced over the range of heights of
   * all directions (default), 1 the list given. */
  vtkSetClampMacro(ThresholdMode, int, 0, 1);
  vtkGetMacro(ThresholdMode, int);
  vtkSetClampMacro(NumberOfBins, int, 1, VTK_INT_MAX);
  vtkGetMacro(NumberOfBins, int);
  void SetNumberOfThresholds(int n);
  void SetThreshold(int i, double value);
  void AddThreshold(double value);
  void RemoveAllThresholds();
  int GetNumberOfThresholds() const { return static_cast<int>(this->Thresholds.size()); }
  ///@}

  ///@{
  /** 0 Auto (GPU when present), 1 CPU, 2 GPU (falls back with a warning). */
  vtkSetClampMacro(Device, int, 0, 2);
  vtkGetMacro(Device, int);
  ///@}

  ///@{
  /** Component of the array; -1 (default) the only one. */
  vtkSetClampMacro(Component, int, -1, VTK_INT_MAX);
  vtkGetMacro(Component, int);
  ///@}

  ///@{
  /** CPU threads; 0 (default) every core. */
  vtkSetClampMacro(NumberOfThreads, int, 0, 4096);
  vtkGetMacro(NumberOfThreads, int);
  ///@}

  ///@{
  /** Controller for distributed runs (default: the global controller). */
  void SetController(vtkMultiProcessController* controller);
  vtkGetObjectMacro(Controller, vtkMultiProcessController);
  ///@}

  vtkTypeBool ProcessRequest(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

protected:
  vtkEulerTransformFilter();
  ~vtkEulerTransformFilter() override;
  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*);
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*);
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*);

  int Construction = 0;
  int NumberOfDirections = 16;
  std::vector<double> Directions;
  double Weight = 0.0;
  double Alpha = 1.0;
  bool UseShapeLevel = false;
  double ShapeLevel = 0.0;
  int ThresholdMode = 0;
  int NumberOfBins = 64;
  std::vector<double> Thresholds;
  int Device = 0;
  int Component = -1;
  int NumberOfThreads = 0;
  vtkMultiProcessController* Controller = nullptr;

private:
  vtkEulerTransformFilter(const vtkEulerTransformFilter&) = delete;
  void operator=(const vtkEulerTransformFilter&) = delete;
};

#endif
