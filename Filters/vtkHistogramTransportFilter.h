/**
 * @class   vtkHistogramTransportFilter
 * @brief   Entropic optimal transport between histograms held in tables.
 *
 * Histograms are read from a table in one of two layouts:
 * - rows of numeric columns: each row a histogram over the bins (one per
 *   column); bin centres from a field data array BinCenters when present,
 *   else the column names when all read as numbers, else 0, 1, 2, ...;
 * - ParaView's Histogram filter output (columns bin_extents, bin_values): one
 *   histogram, bin centres bin_extents.
 * With a second input, histogram k of the first table is compared with
 * histogram k of the second (one histogram on either side is compared with
 * every histogram of the other); without one, consecutive histograms of the
 * first (k with k + 1: a time series of histograms, one per row). Each is
 * normalised to unit mass (negative values are errors); the cost between
 * bins is |c_i - c_j|^CostPower; the problem is POT's Sinkhorn
 * (Kernels/include/topovox/Sinkhorn.h) with Reg, Method, MaximumIterations,
 * StopThreshold.
 *
 * Output: a table with one row per comparison: First, Second (histogram
 * indices), TransportCost (<P, M>), Wasserstein (the cost to the power
 * 1 / CostPower), Iterations, MarginalError.
 */
#ifndef vtkHistogramTransportFilter_h
#define vtkHistogramTransportFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkTableAlgorithm.h"

class TOPOVOXFILTERS_EXPORT vtkHistogramTransportFilter : public vtkTableAlgorithm
{
public:
  static vtkHistogramTransportFilter* New();
  vtkTypeMacro(vtkHistogramTransportFilter, vtkTableAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  vtkSetClampMacro(Reg, double, 1e-300, VTK_DOUBLE_MAX);
  vtkGetMacro(Reg, double);
  /** 0 Sinkhorn (scaling), 1 log domain (default). */
  vtkSetClampMacro(Method, int, 0, 1);
  vtkGetMacro(Method, int);
  vtkSetClampMacro(MaximumIterations, int, 1, VTK_INT_MAX);
  vtkGetMacro(MaximumIterations, int);
  vtkSetClampMacro(StopThreshold, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(StopThreshold, double);
  /** The cost between bins is |c_i - c_j|^CostPower (default 2). */
  vtkSetClampMacro(CostPower, double, 1.0, 10.0);
  vtkGetMacro(CostPower, double);

protected:
  vtkHistogramTransportFilter();
  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  double Reg = 1.0;
  int Method = 1;
  int MaximumIterations = 1000;
  double StopThreshold = 1e-9;
  double CostPower = 2.0;

private:
  vtkHistogramTransportFilter(const vtkHistogramTransportFilter&) = delete;
  void operator=(const vtkHistogramTransportFilter&) = delete;
};

#endif
