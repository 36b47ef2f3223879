# Finds nmc's dependencies. An option set ON that cannot be satisfied stops configuration with a message that
# says how to build without it; AUTO turns a feature on only when its dependency is present.

find_package(Threads REQUIRED)
find_package(nlohmann_json 3.9 REQUIRED)

# zstd: Debian ships a CMake package; other distributions may only have pkg-config.
find_package(zstd CONFIG QUIET)
if(TARGET zstd::libzstd_shared)
  add_library(nmc_zstd INTERFACE)
  target_link_libraries(nmc_zstd INTERFACE zstd::libzstd_shared)
else()
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
  add_library(nmc_zstd INTERFACE)
  target_link_libraries(nmc_zstd INTERFACE PkgConfig::ZSTD)
endif()

find_package(CLI11 2.0 REQUIRED)

# ---- Image I/O -----------------------------------------------------------------------------------------
set(NMC_IMAGE_IO_BACKEND "")
if(NMC_IMAGE_IO STREQUAL "AUTO" OR NMC_IMAGE_IO STREQUAL "OIIO")
  find_package(OpenImageIO CONFIG QUIET)
  if(OpenImageIO_FOUND)
    set(NMC_IMAGE_IO_BACKEND OIIO)
  elseif(NMC_IMAGE_IO STREQUAL "OIIO")
    message(FATAL_ERROR "NMC_IMAGE_IO=OIIO but OpenImageIO was not found. Install libopenimageio-dev and "
                        "libopencv-core-dev (Debian), or configure with -DNMC_IMAGE_IO=PNGJPEG to read and write "
                        "PNG and JPEG through libpng and libjpeg.")
  endif()
endif()
if(NMC_IMAGE_IO_BACKEND STREQUAL "")
  if(NOT NMC_IMAGE_IO STREQUAL "AUTO" AND NOT NMC_IMAGE_IO STREQUAL "PNGJPEG")
    message(FATAL_ERROR "NMC_IMAGE_IO must be AUTO, OIIO or PNGJPEG (got '${NMC_IMAGE_IO}')")
  endif()
  find_package(PNG QUIET)
  find_package(JPEG QUIET)
  if(NOT PNG_FOUND OR NOT JPEG_FOUND)
    message(FATAL_ERROR "No image library: install OpenImageIO (libopenimageio-dev libopencv-core-dev) or "
                        "libpng-dev and libjpeg-dev.")
  endif()
  set(NMC_IMAGE_IO_BACKEND PNGJPEG)
endif()

# ---- LibTorch (the trainer) ----------------------------------------------------------------------------
set(NMC_TRAINER_ENABLED OFF)
set(NMC_TRAINER_DETAIL "")
if(NOT NMC_WITH_TRAINER STREQUAL "OFF")
  find_package(Torch QUIET)
  if(Torch_FOUND)
    set(NMC_TRAINER_ENABLED ON)
    set(NMC_TRAINER_DETAIL "(LibTorch ${Torch_VERSION})")
  elseif(NMC_WITH_TRAINER STREQUAL "ON")
    message(FATAL_ERROR "NMC_WITH_TRAINER=ON but LibTorch was not found. Install libtorch-dev (Debian) or point "
                        "CMAKE_PREFIX_PATH at a LibTorch (python3 -c 'import torch;print(torch.utils.cmake_prefix_path)'), "
                        "or configure with -DNMC_WITH_TRAINER=OFF to build only inspect/decompress/validate.")
  else()
    set(NMC_TRAINER_DETAIL "(LibTorch not found: nmc compress is not built)")
  endif()
endif()

# ---- CUDA (our own kernels) ----------------------------------------------------------------------------
set(NMC_CUDA_ENABLED OFF)
set(NMC_CUDA_DETAIL "")
if(NOT NMC_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_ARCHITECTURES "${NMC_CUDA_ARCHITECTURES}")
    # Hopper's architecture-specific target (90a: the warpgroup kernels' wgmma) needs CMake 3.25 to pass it on;
    # older CMake builds plain 90 (the warp kernels) instead.
    if(CMAKE_VERSION VERSION_LESS 3.25 AND CMAKE_CUDA_ARCHITECTURES MATCHES "90a")
      string(REGEX REPLACE "90a" "90" CMAKE_CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
      message(STATUS "CMake ${CMAKE_VERSION} < 3.25: CUDA architecture 90a built as 90 (no Hopper warpgroup kernels)")
    endif()
    enable_language(CUDA)
    # The architectures of one .cu file compile in parallel, one nvcc thread per CPU (the same code as one at a time).
    if(CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA")
      add_compile_options($<$<COMPILE_LANGUAGE:CUDA>:--threads=0>)
    endif()
    find_package(CUDAToolkit REQUIRED)
    set(NMC_CUDA_ENABLED ON)
    set(NMC_CUDA_DETAIL "(nvcc ${CMAKE_CUDA_COMPILER_VERSION}, sm ${CMAKE_CUDA_ARCHITECTURES})")
  elseif(NMC_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "NMC_WITH_CUDA=ON but no CUDA compiler was found (looked for nvcc on PATH and in "
                        "/usr/local/cuda/bin). Install the CUDA toolkit or configure with -DNMC_WITH_CUDA=OFF; "
                        "every command then decodes on the CPU.")
  else()
    set(NMC_CUDA_DETAIL "(no CUDA toolkit found: CPU decoder only)")
  endif()
endif()

# ---- Vulkan (the runtime: headers and glslangValidator at build time; the loader is opened at run time) -----
set(NMC_VULKAN_ENABLED OFF)
set(NMC_VULKAN_DETAIL "")
if(NOT NMC_WITH_VULKAN STREQUAL "OFF")
  find_path(NMC_VULKAN_INCLUDE_DIR vulkan/vulkan.h)
  find_program(NMC_GLSLANG_VALIDATOR glslangValidator)
  if(NMC_VULKAN_INCLUDE_DIR AND NMC_GLSLANG_VALIDATOR)
    set(NMC_VULKAN_ENABLED ON)
    set(NMC_VULKAN_DETAIL "(${NMC_VULKAN_INCLUDE_DIR}/vulkan, ${NMC_GLSLANG_VALIDATOR})")
  elseif(NMC_WITH_VULKAN STREQUAL "ON")
    message(FATAL_ERROR "NMC_WITH_VULKAN=ON but the Vulkan headers (vulkan/vulkan.h: ${NMC_VULKAN_INCLUDE_DIR}) or "
                        "glslangValidator (${NMC_GLSLANG_VALIDATOR}) were not found. Install them (Debian/Ubuntu: "
                        "apt-get install libvulkan-dev glslang-tools) or configure with -DNMC_WITH_VULKAN=OFF; "
                        "--device vulkan is then unavailable.")
  else()
    set(NMC_VULKAN_DETAIL "(no Vulkan headers or glslangValidator: apt-get install libvulkan-dev glslang-tools)")
  endif()
endif()

# ---- astcenc (ASTC encoding for decompress --codec astc-*) ------------------------------------------------
set(NMC_ASTCENC_ENABLED OFF)
set(NMC_ASTCENC_DETAIL "")
if(NOT NMC_WITH_ASTCENC STREQUAL "OFF")
  find_package(astcenc CONFIG QUIET)
  if(TARGET astcenc::astcenc)
    set(NMC_ASTCENC_ENABLED ON)
    set(NMC_ASTCENC_DETAIL "(astcenc ${astcenc_VERSION})")
  elseif(NMC_WITH_ASTCENC STREQUAL "ON")
    message(FATAL_ERROR "NMC_WITH_ASTCENC=ON but Arm's astcenc library was not found. Install libastcenc-dev "
                        "(Debian/Ubuntu) or configure with -DNMC_WITH_ASTCENC=OFF; decompress then writes BCn only.")
  else()
    set(NMC_ASTCENC_DETAIL "(no libastcenc-dev: decompress writes BCn only)")
  endif()
endif()

if(NMC_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
