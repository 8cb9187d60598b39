/**
 * @class   vtkEulerCurveFilter
 * @brief   Euler characteristic curve of an image's sublevel or superlevel sets.
 *
 * For each threshold t, the Euler characteristic chi(t) = V - E + F - C of
 * the cubical complex of the image restricted to the cells with value <= t
 * (sublevel) or >= t (superlevel), and the number of cells of each dimension.
 *
 * Input: vtkImageData, 1D, 2D or 3D, any numeric scalar type, point data
 * (default) or cell data; the array is chosen with SetInputArrayToProcess
 * (default: the active point scalars), and one of its components.
 *
 * Output: a vtkTable with the columns Threshold, EulerCharacteristic,
 * Vertices, Edges, Squares, Cubes (cumulative cell counts), plus field data
 * naming the construction, filtration and the device that ran.
 *
 * Conventions (construction V/T, NaN, threshold modes) are those of the
 * kernel, documented in Kernels/include/topovox/EulerCurve.h.
 *
 * Distributed runs: under MPI each rank counts the cells its piece owns (a
 * cell belongs to the voxel attaining its value, so shared planes are never
 * counted twice); the curve, identical to the serial one, is on rank 0, and
 * the other ranks output an empty table (chart views append every rank's
 * rows). Ranks exchange Exact thresholds as doubles: for 64-bit integer data
 * beyond 2^53 under MPI, use Bins or List thresholds.
 */
#ifndef vtkEulerCurveFilter_h
#define vtkEulerCurveFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkTableAlgorithm.h"

#include <vector>

class vtkMultiProcessController;

class TOPOVOXFILTERS_EXPORT vtkEulerCurveFilter : public vtkTableAlgorithm
{
public:
  static vtkEulerCurveFilter* New();
  vtkTypeMacro(vtkEulerCurveFilter, vtkTableAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum ConstructionType
  {
    CONSTRUCTION_V = 0, ///< voxels are vertices (default)
    CONSTRUCTION_T = 1  ///< voxels are top-dimensional cubes
  };
  enum FiltrationType
  {
    SUBLEVEL = 0,
    SUPERLEVEL = 1
  };
  enum ThresholdModeType
  {
    THRESHOLDS_AUTO = 0,  ///< exact for integer data, bins for floating point
    THRESHOLDS_EXACT = 1, ///< one per distinct value
    THRESHOLDS_BINS = 2,  ///< NumberOfBins uniform thresholds over [min, max]
    THRESHOLDS_LIST = 3   ///< the user's thresholds
  };
  enum DeviceType
  {
    DEVICE_AUTO = 0, ///< the GPU when there is one (or TOPOVOX_DEVICE)
    DEVICE_CPU = 1,
    DEVICE_GPU = 2
  };

  ///@{
  /** Cubical construction (default V). */
  vtkSetClampMacro(Construction, int, CONSTRUCTION_V, CONSTRUCTION_T);
  vtkGetMacro(Construction, int);
  ///@}

  ///@{
  /** Sublevel (default) or superlevel filtration. */
  vtkSetClampMacro(Filtration, int, SUBLEVEL, SUPERLEVEL);
  vtkGetMacro(Filtration, int);
  ///@}

  ///@{
  /** How thresholds are chosen (default Auto). */
  vtkSetClampMacro(ThresholdMode, int, THRESHOLDS_AUTO, THRESHOLDS_LIST);
  vtkGetMacro(ThresholdMode, int);
  ///@}

  ///@{
  /** Number of uniform thresholds in Bins mode (default 256). */
  vtkSetClampMacro(NumberOfBins, int, 1, VTK_INT_MAX);
  vtkGetMacro(NumberOfBins, int);
  ///@}

  ///@{
  /** Thresholds in List mode, in filtration order. */
  void SetNumberOfThresholds(int n);
  int GetNumberOfThresholds() const { return static_cast<int>(this->Thresholds.size()); }
  void SetThreshold(int i, double value);
  double GetThreshold(int i) const;
  void AddThreshold(double value);
  void RemoveAllThresholds();
  ///@}

  ///@{
  /** Which processor runs the kernel (default Auto). A GPU request where
   * there is none warns and runs on the CPU. */
  vtkSetClampMacro(Device, int, DEVICE_AUTO, DEVICE_GPU);
  vtkGetMacro(Device, int);
  ///@}

  ///@{
  /** Component of the array. -1 (default): the only one; a multi-component
   * array then needs an explicit choice (an error says so). */
  vtkSetClampMacro(Component, int, -1, VTK_INT_MAX);
  vtkGetMacro(Component, int);
  ///@}

  ///@{
  /** CPU threads; 0 (default) uses every core (or TOPOVOX_NUM_THREADS). */
  vtkSetClampMacro(NumberOfThreads, int, 0, 4096);
  vtkGetMacro(NumberOfThreads, int);
  ///@}

  ///@{
  /** Controller for distributed runs (default: the global controller). */
  void SetController(vtkMultiProcessController* controller);
  vtkGetObjectMacro(Controller, vtkMultiProcessController);
  ///@}

  /** The device that ran the last update ("cpu" or "gpu"). */
  const char* GetLastDevice() const { return this->LastDevice; }

protected:
  vtkEulerCurveFilter();
  ~vtkEulerCurveFilter() override;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int Construction = CONSTRUCTION_V;
  int Filtration = SUBLEVEL;
  int ThresholdMode = THRESHOLDS_AUTO;
  int NumberOfBins = 256;
  int Device = DEVICE_AUTO;
  int Component = -1;
  int NumberOfThreads = 0;
  std::vector<double> Thresholds;
  vtkMultiProcessController* Controller = nullptr;
  const char* LastDevice = "none";

private:
  vtkEulerCurveFilter(const vtkEulerCurveFilter&) = delete;
  void operator=(const vtkEulerCurveFilter&) = delete;
};

#endif
