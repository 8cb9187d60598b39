// CublasLibrary.h - cuBLAS opened on its first use (dlopen) instead of at
// process start. Linked, libcublas and libcublasLt (about 700 MB) load into
// every process of a CUDA build - the command line, the ParaView plugin,
// the Torch extension - whether it ever solves a grid transport or not:
// 0.07 s a start with the files in the page cache, 0.5 s without, and
// 200 MB resident. Only the grid Sinkhorn (GridSinkhornCUDA.cu) calls it.
#pragma once

#include <cublas_v2.h>

namespace topovox
{
namespace cuda
{
// The functions the kernels use, from the cuBLAS of the toolkit they were
// built with (libcublas.so.<major>, else libcublas.so).
struct CublasLibrary
{
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasDgemm_v2) dgemm;
  decltype(&cublasDgemmStridedBatched) dgemmStridedBatched;
  decltype(&cublasSetStream_v2) setStream;
  decltype(&cublasSetWorkspace_v2) setWorkspace;
};

// Opened once per process. Throws std::runtime_error (with dlerror's
// reason) when the library or a function is missing: the callers fall back
// to the CPU as for any CUDA failure.
const CublasLibrary& cublasLibrary();
}
}
