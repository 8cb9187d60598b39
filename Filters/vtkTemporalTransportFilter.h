/**
 * @class   vtkTemporalTransportFilter
 * @brief   Entropic optimal transport along a time series of images: the
 *          cost of moving each step's density onto the next (or the first
 *          step's onto each step), as a table to plot against time.
 *
 * Input: an image with time steps (a file series, a reader of a temporal
 * format, a source with TIME_STEPS). Every step's selected array (else the
 * active scalars) is read as a density of unit mass, with the same rules
 * as vtkOptimalTransportFilter: one component, nonnegative and finite
 * values, not all zero, the same grid at every step. The cost between two
 * steps is topovox::sinkhornGrid's (Kernels/include/topovox/GridSinkhorn.h:
 * squared Euclidean distance in world units, POT's sinkhorn_knopp or
 * sinkhorn_log with Reg, MaximumIterations, StopThreshold).
 *
 * Reference: 0 (default) consecutive steps, row k the transport from step k
 * to step k + 1 (how much the field moves per step); 1 the first step, row
 * k the transport from step 0 to step k + 1 (how far it has drifted).
 *
 * Output: a vtkTable with one row per pair of steps: FromTime, ToTime,
 * FromStep, ToStep, TransportCost, Iterations, MarginalError. The pipeline
 * runs the filter once per time step (CONTINUE_EXECUTING), holding one
 * step upstream and one previous density here.
 *
 * MPI: rank 0 gathers each step's whole image and solves; the other ranks
 * take part in every step's update and output an empty table.
 */
#ifndef vtkTemporalTransportFilter_h
#define vtkTemporalTransportFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkTableAlgorithm.h"

#include <memory>

class vtkMultiProcessController;

class TOPOVOXFILTERS_EXPORT vtkTemporalTransportFilter : public vtkTableAlgorithm
{
public:
  static vtkTemporalTransportFilter* New();
  vtkTypeMacro(vtkTemporalTransportFilter, vtkTableAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum ReferenceStep
  {
    PREVIOUS_STEP = 0,
    FIRST_STEP = 1
  };
  /** Which step each step's density is transported from (see above). */
  vtkSetClampMacro(Reference, int, PREVIOUS_STEP, FIRST_STEP);
  vtkGetMacro(Reference, int);
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

protected:
  vtkTemporalTransportFilter();
  ~vtkTemporalTransportFilter() override;
  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int Reference = PREVIOUS_STEP;
  double Reg = 1.0;
  int Method = 1;
  int MaximumIterations = 1000;
  double StopThreshold = 1e-9;
  int NumberOfThreads = 0;
  vtkMultiProcessController* Controller = nullptr;

private:
  vtkTemporalTransportFilter(const vtkTemporalTransportFilter&) = delete;
  void operator=(const vtkTemporalTransportFilter&) = delete;
  struct Series; // the time loop, the reference density and the rows so far
  std::unique_ptr<Series> State;
};

#endif
