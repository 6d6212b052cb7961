# NVIDIA's NCCL 2.28 headers (nccl.h and nccl_device.h), for what is built
# against them rather than mkccl's own: the device API's layout test and
# samples. Sets MKCCL_NVIDIA_NCCL_INCLUDE, and MKCCL_HAVE_NVIDIA_DEVAPI when
# nvcc, the CUDA toolkit and those headers are all here.
set(MKCCL_HAVE_NVIDIA_DEVAPI OFF)
if(MKCCL_HAVE_CUDA)
  find_path(MKCCL_NVIDIA_NCCL_INCLUDE nccl_device.h HINTS ENV NCCL_HOME PATH_SUFFIXES include
            PATHS /usr/local/cuda/include NO_CMAKE_SYSTEM_PATH)
  if(MKCCL_NVIDIA_NCCL_INCLUDE AND EXISTS ${MKCCL_NVIDIA_NCCL_INCLUDE}/nccl.h)
    file(STRINGS ${MKCCL_NVIDIA_NCCL_INCLUDE}/nccl.h mkccl_nvidia_nccl_minor REGEX "^#define NCCL_MINOR +28")
    find_package(CUDAToolkit QUIET)
    if(mkccl_nvidia_nccl_minor AND CUDAToolkit_FOUND)
      set(MKCCL_HAVE_NVIDIA_DEVAPI ON)
    endif()
  endif()
endif()
if(MKCCL_HAVE_NVIDIA_DEVAPI)
  message(STATUS "mkccl: NVIDIA's NCCL 2.28 device API headers at ${MKCCL_NVIDIA_NCCL_INCLUDE}: layout test and samples built")
else()
  message(STATUS "mkccl: no nvcc or no NCCL 2.28 nccl_device.h: the device API layout test and samples are not built")
endif()

# A target compiled by nvcc against NVIDIA's headers alone: no project
# include path, NVIDIA's headers as system headers (their warnings are not
# ours), the project's warnings spelled for nvcc.
function(mkccl_nvidia_devapi_target target)
  target_include_directories(${target} SYSTEM PRIVATE ${MKCCL_NVIDIA_NCCL_INCLUDE})
  target_compile_features(${target} PRIVATE cuda_std_17)
  set_property(TARGET ${target} PROPERTY COMPILE_OPTIONS -Xcompiler=-Wall,-Wextra
               $<$<BOOL:${MKCCL_WERROR}>:-Werror=all-warnings>)
endfunction()
