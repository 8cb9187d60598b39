/**
 * @class   vtkGPUMorphologyFilter
 * @brief   Binary and grey-scale morphology of an image, as scipy.ndimage
 *          computes it.
 *
 * One filter for every operator of scipy.ndimage's morphology (Operation),
 * with its conventions argument for argument: structuring element, origin,
 * border mode and cval (grey), border value, iterations and an optional mask
 * (binary). Definitions: Kernels/include/topovox/Morphology.h; results are
 * bit-identical to scipy's (tested).
 *
 * Structuring element (StructureShape): a box of StructureSize voxels; a
 * cross of a connectivity (scipy's generate_binary_structure(rank,
 * Connectivity), iterated Radius times as iterate_structure does); or a
 * ball (the voxels within Euclidean distance Radius of the centre).
 *
 * Binary operators see voxels as foreground when nonzero, or, with
 * UseForegroundRange, when their value lies in ForegroundRange; their
 * result is an unsigned char array of 0 and 1. Grey operators keep the
 * input's type. Output: the input image with the result as a new array
 * (point or cell data, like the input's), named ResultArrayName.
 *
 * Optional second input: a mask image on the same grid (nonzero = may
 * change), for the binary operators.
 *
 * Device: Auto (the GPU when present), CPU or GPU, with identical results;
 * the GPU runs erosion, dilation and the operators built on them (fill
 * holes and hit-or-miss run on the CPU threads).
 *
 * MPI and streaming: the local operators (all but propagation, hole
 * filling, binary iterations until stable and the wrap border mode)
 * produce any sub-extent: each
 * piece reads its extent plus a halo as wide as the element reaches times
 * the passes it makes, computes, and crops, so that every piece equals the
 * serial result there. The global ones gather the whole image on rank 0,
 * which computes; the other ranks output empty images.
 */
#ifndef vtkGPUMorphologyFilter_h
#define vtkGPUMorphologyFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkImageAlgorithm.h"

class vtkMultiProcessController;

class TOPOVOXFILTERS_EXPORT vtkGPUMorphologyFilter : public vtkImageAlgorithm
{
public:
  static vtkGPUMorphologyFilter* New();
  vtkTypeMacro(vtkGPUMorphologyFilter, vtkImageAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum OperationType
  {
    BINARY_EROSION = 0,
    BINARY_DILATION,
    BINARY_OPENING,
    BINARY_CLOSING,
    BINARY_PROPAGATION,
    BINARY_FILL_HOLES,
    BINARY_HIT_OR_MISS,
    GREY_EROSION,
    GREY_DILATION,
    GREY_OPENING,
    GREY_CLOSING,
    MORPHOLOGICAL_GRADIENT,
    MORPHOLOGICAL_LAPLACE,
    WHITE_TOPHAT,
    BLACK_TOPHAT
  };
  enum StructureShapeType
  {
    BOX = 0,
    CROSS = 1,
    BALL = 2
  };

  vtkSetClampMacro(Operation, int, BINARY_EROSION, BLACK_TOPHAT);
  vtkGetMacro(Operation, int);
  vtkSetClampMacro(StructureShape, int, BOX, BALL);
  vtkGetMacro(StructureShape, int);
  vtkSetVector3Macro(StructureSize, int);
  vtkGetVector3Macro(StructureSize, int);
  vtkSetClampMacro(Connectivity, int, 1, 3);
  vtkGetMacro(Connectivity, int);
  vtkSetClampMacro(Radius, int, 0, 1000);
  vtkGetMacro(Radius, int);
  vtkSetVector3Macro(Origin, int);
  vtkGetVector3Macro(Origin, int);
  /** 0 reflect, 1 mirror, 2 nearest, 3 wrap, 4 constant (grey operators). */
  vtkSetClampMacro(BorderMode, int, 0, 4);
  vtkGetMacro(BorderMode, int);
  vtkSetMacro(ConstantValue, double);
  vtkGetMacro(ConstantValue, double);
  vtkSetMacro(BorderValue, bool);
  vtkGetMacro(BorderValue, bool);
  vtkSetMacro(Iterations, int);
  vtkGetMacro(Iterations, int);
  vtkSetMacro(UseForegroundRange, bool);
  vtkGetMacro(UseForegroundRange, bool);
  vtkSetVector2Macro(ForegroundRange, double);
  vtkGetVector2Macro(ForegroundRange, double);
  vtkSetStringMacro(ResultArrayName);
  vtkGetStringMacro(ResultArrayName);
  vtkSetClampMacro(Component, int, -1, VTK_INT_MAX);
  vtkGetMacro(Component, int);
  vtkSetClampMacro(Device, int, 0, 2);
  vtkGetMacro(Device, int);
  vtkSetClampMacro(NumberOfThreads, int, 0, 4096);
  vtkGetMacro(NumberOfThreads, int);
  void SetController(vtkMultiProcessController* controller);
  vtkGetObjectMacro(Controller, vtkMultiProcessController);

  /** The optional mask (second input). */
  void SetMaskConnection(vtkAlgorithmOutput* output) { this->SetInputConnection(1, output); }

protected:
  vtkGPUMorphologyFilter();
  ~vtkGPUMorphologyFilter() override;
  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int Operation = BINARY_EROSION;
  int StructureShape = CROSS;
  int StructureSize[3] = { 3, 3, 3 };
  int Connectivity = 1;
  int Radius = 1;
  int Origin[3] = { 0, 0, 0 };
  int BorderMode = 0;
  double ConstantValue = 0.0;
  bool BorderValue = false;
  int Iterations = 1;
  bool UseForegroundRange = false;
  double ForegroundRange[2] = { 1.0, 1.0 };
  char* ResultArrayName = nullptr;
  int Component = -1;
  int Device = 0;
  int NumberOfThreads = 0;
  vtkMultiProcessController* Controller = nullptr;

  /** Samples a piece must read beyond its extent, or -1 for the global
   * operators (they need the whole image). */
  int Halo() const;

private:
  vtkGPUMorphologyFilter(const vtkGPUMorphologyFilter&) = delete;
  void operator=(const vtkGPUMorphologyFilter&) = delete;
};

#endif
