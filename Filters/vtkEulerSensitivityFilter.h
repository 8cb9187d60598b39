/**
 * @class   vtkEulerSensitivityFilter
 * @brief   The differentiable Euler characteristic curve of an image and its
 *          gradient with respect to every voxel: where topology is sensitive.
 *
 * chi(t) = sum over cells (-1)^dim sigmoid(Lambda (t - h(cell))), with
 * h(p) = Weight * X(p) + Alpha * <Direction, p> (p in world coordinates) and
 * a cell's height the max over its vertices (V) or the min over its cubes
 * (T); exact as Lambda grows. Definitions: Kernels/include/topovox/SoftEuler.h.
 *
 * Outputs:
 * - port 0, a vtkTable: Threshold, SoftEulerCharacteristic and
 *   dChi/dThreshold;
 * - port 1, the input image with a new array "EulerSensitivity" (point or
 *   cell data, like the input array): d(sum_t chi(t))/dX at each voxel,
 *   large where moving the value would change the curve most, zero where
 *   it would not change it at all. The field arrays dChi/dDirection and
 *   dChi/dAlpha hold the other gradients of the same sum.
 *
 * Thresholds: NumberOfThresholds evenly spaced over the range of heights, or
 * the list given. Values are converted to double; the CPU threads compute
 * (the GPU path of the kernels serves callers whose arrays are already on
 * the GPU, as the PyTorch layer). Under MPI, rank 0 reads the whole image
 * and computes (the others output empty data).
 */
#ifndef vtkEulerSensitivityFilter_h
#define vtkEulerSensitivityFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkAlgorithm.h"

#include <vector>

class vtkMultiProcessController;

class TOPOVOXFILTERS_EXPORT vtkEulerSensitivityFilter : public vtkAlgorithm
{
public:
  static vtkEulerSensitivityFilter* New();
  vtkTypeMacro(vtkEulerSensitivityFilter, vtkAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /** 0 V (default), 1 T. */
  vtkSetClampMacro(Construction, int, 0, 1);
  vtkGetMacro(Construction, int);
  ///@}

  ///@{
  /** Sharpness of the sigmoid (default 10, in 1 / value units). */
  vtkSetClampMacro(Lambda, double, 1e-12, 1e12);
  vtkGetMacro(Lambda, double);
  ///@}

  ///@{
  /** Height = Weight * value + Alpha * <Direction, p> (defaults 1, 0, z;
   * the direction is normalised). */
  vtkSetMacro(Weight, double);
  vtkGetMacro(Weight, double);
  vtkSetMacro(Alpha, double);
  vtkGetMacro(Alpha, double);
  vtkSetVector3Macro(Direction, double);
  vtkGetVector3Macro(Direction, double);
  ///@}

  ///@{
  /** Evenly spaced thresholds over the range of heights (default 32), or
   * the list given (when not empty; strictly increasing). */
  vtkSetClampMacro(NumberOfThresholds, int, 1, 1 << 20);
  vtkGetMacro(NumberOfThresholds, int);
  void SetNumberOfThresholdValues(int n);
  void SetThresholdValue(int i, double value);
  void RemoveAllThresholdValues();
  ///@}

  ///@{
  /** CPU threads; 0 (default) every core. */
  vtkSetClampMacro(NumberOfThreads, int, 0, 4096);
  vtkGetMacro(NumberOfThreads, int);
  ///@}

  ///@{
  /** Component of the array; -1 (default) the only one. */
  vtkSetClampMacro(Component, int, -1, VTK_INT_MAX);
  vtkGetMacro(Component, int);
  ///@}

  void SetController(vtkMultiProcessController* controller);
  vtkGetObjectMacro(Controller, vtkMultiProcessController);

  vtkTypeBool ProcessRequest(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

protected:
  vtkEulerSensitivityFilter();
  ~vtkEulerSensitivityFilter() override;
  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*);
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*);

  int Construction = 0;
  double Lambda = 10.0;
  double Weight = 1.0;
  double Alpha = 0.0;
  double Direction[3] = { 0, 0, 1 };
  int NumberOfThresholds = 32;
  std::vector<double> ThresholdValues;
  int NumberOfThreads = 0;
  int Component = -1;
  vtkMultiProcessController* Controller = nullptr;

private:
  vtkEulerSensitivityFilter(const vtkEulerSensitivityFilter&) = delete;
  void operator=(const vtkEulerSensitivityFilter&) = delete;
};

#endif
