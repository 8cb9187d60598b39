/**
 * @class   vtkPersistenceDiagramDistanceFilter
 * @brief   Wasserstein distance between two persistence diagrams, per
 *          dimension, with the matching of their points.
 *
 * Inputs: two tables of pairs (the Pairs outputs of two Persistence Diagram
 * filters: columns Dimension, Birth, Death, and optionally IsFinite and
 * PairIdentifier). For each dimension present, the entropic Wasserstein
 * distance of order Order with the L_InternalP ground metric (0: L-infinity,
 * GUDHI's default), points allowed to match the diagonal
 * (Kernels/include/topovox/DiagramDistance.h; tends to GUDHI's
 * wasserstein_distance as RelativeRegularization -> 0), plus the essential
 * classes matched in order of birth (infinite when their counts differ).
 *
 * Outputs: port 0, a table with one row per dimension: Dimension, Distance
 * ((finite cost + essential cost)^(1/q)), FiniteDistance, EssentialCost,
 * Iterations; port 1, the matching: Dimension, FirstPair and SecondPair
 * (PairIdentifiers, -1 for the diagonal), one row per finite point of
 * either diagram.
 */
#ifndef vtkPersistenceDiagramDistanceFilter_h
#define vtkPersistenceDiagramDistanceFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkTableAlgorithm.h"

class TOPOVOXFILTERS_EXPORT vtkPersistenceDiagramDistanceFilter : public vtkTableAlgorithm
{
public:
  static vtkPersistenceDiagramDistanceFilter* New();
  vtkTypeMacro(vtkPersistenceDiagramDistanceFilter, vtkTableAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  /** The order q of the Wasserstein distance (default 1). */
  vtkSetClampMacro(Order, double, 1.0, VTK_DOUBLE_MAX);
  vtkGetMacro(Order, double);
  /** The ground metric L_p in the plane; 0 (default): L-infinity. */
  vtkSetClampMacro(InternalP, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(InternalP, double);
  /** Entropic regularisation relative to the largest cost (default 1e-3). */
  vtkSetClampMacro(RelativeRegularization, double, 1e-12, 1.0);
  vtkGetMacro(RelativeRegularization, double);
  vtkSetClampMacro(MaximumIterations, int, 1, VTK_INT_MAX);
  vtkGetMacro(MaximumIterations, int);

protected:
  vtkPersistenceDiagramDistanceFilter();
  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  double Order = 1.0;
  double InternalP = 0.0;
  double RelativeRegularization = 1e-3;
  int MaximumIterations = 100000;

private:
  vtkPersistenceDiagramDistanceFilter(const vtkPersistenceDiagramDistanceFilter&) = delete;
  void operator=(const vtkPersistenceDiagramDistanceFilter&) = delete;
};

#endif
