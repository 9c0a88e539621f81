# Device code for one GPU platform: CUDA fatbins (default) or HIP code objects.
#
#   -DIRIS_GPU_PLATFORM=CUDA   nvcc -fatbin: NAME.fatbin. Portable sources: machine code for sm_80,
#                              sm_86, sm_89, sm_90a, sm_100 and sm_120 plus compute_80 PTX
#                              (IRIS_CUDA_PORTABLE_GENCODE); NVIDIA-only ones (wgmma/TMA): sm_90a plus
#                              compute_90a PTX (IRIS_CUDA_GENCODE). The default; what runs on the H200s.
#   -DIRIS_GPU_PLATFORM=HIP    hipcc --genco for IRIS_HIP_ARCHS (gfx90a = MI200, gfx940 = MI300
#                              family; Debian's hipcc 5.2 is too old for gfx942): NAME.hsaco, a
#                              clang offload bundle with one code object per architecture, which
#                              hipModuleLoadData loads. HIP_PLATFORM=amd is set for every call, so
#                              an nvcc on the PATH does not turn hipcc into its NVIDIA mode.
#
# Both compile the same .cu sources through the same portability layer (iris/impl/arch.cuh); there
# is no per-vendor copy of any file. Java picks the extension by the runtime it loaded
# (dev.irisjvm.core.gpu.Platform).
#
# Build rules kept on both platforms:
#   - register spills and local/scratch memory fail the build (CUDA: ptxas -warn-spills,
#     -warn-lmem-usage; HIP: the kernel-resource-usage remarks, ScratchSize must be 0). In these
#     kernels they are always a mistake (e.g. a kernel parameter copied to local memory);
#   - warnings are errors.
# HIP only: a module built with HIP_CHECK_MEMORY_MODEL must contain, for every architecture, the
# L2 writeback and invalidate that system-scope release/acquire lower to (see arch.cuh); the
# check disassembles the code objects (clang-offload-bundler, llvm-objdump).
#
# NVIDIA-only sources (a line `IRIS_NVIDIA_ONLY("requirement")`, see arch.cuh) are not compiled
# for HIP: NAME.unavailable-hip, holding the requirement, is installed instead, and Java reports
# "not available on this platform (HIP): NAME needs <requirement>".
#
# Checked variants (CHECKED): NAME.checked.fatbin / NAME.checked.hsaco as well, compiled with
# -DIRIS_CHECKED=1, which bounds-checks every translated remote address (iris/ctx.cuh). Java loads
# them in checked mode (IRIS_CHECK=1). They are debugging builds: the spill / local-memory /
# scratch rule does not apply to them, and on HIP the memory-model check runs on the plain variant
# only. Which modules get one: IRIS_CHECKED_MODULES=
#   PORTABLE (default)  every portable module; not the NVIDIA-only ones (the wgmma/TMA GEMM
#                       family), where ptxas spends most of the build already and a checked variant
#                       costs about twice as much again (measured on gemm_reduce.cu: 101 s plain,
#                       218 s checked, on a 2-core machine);
#   ALL                 every module;
#   NONE                none.
# A module without its checked variant ships NAME.checked.skipped saying why; in checked mode Java
# loads the plain module instead and warns that its addresses are not checked.
#
# iris_add_fatbin(NAME SOURCE DESTINATION [INCLUDES dir...] [DEPENDS file...]
#                 [HIP_CHECK_MEMORY_MODEL] [HIP_UNAVAILABLE "reason"] [CHECKED])
# CMake 3.25 can emit neither fatbins nor code-object bundles by itself, so these are custom
# commands around the compilers.
set(IRIS_GPU_PLATFORM "CUDA" CACHE STRING "GPU platform of the native build: CUDA (default) or HIP")
set_property(CACHE IRIS_GPU_PLATFORM PROPERTY STRINGS CUDA HIP)
if(NOT IRIS_GPU_PLATFORM MATCHES "^(CUDA|HIP)$")
  message(FATAL_ERROR "IRIS_GPU_PLATFORM must be CUDA or HIP, not '${IRIS_GPU_PLATFORM}'")
endif()

set(IRIS_CUDA_GENCODE "-gencode=arch=compute_90a,code=sm_90a;-gencode=arch=compute_90a,code=compute_90a"
    CACHE STRING "nvcc -gencode flags of the NVIDIA-only fatbins (wgmma/TMA: Hopper)")
# Portable modules (the runtime's kernels, the collectives, the device API's tests...) run on every
# NVIDIA GPU since Ampere: machine code for A100 (sm_80), RTX 30xx / A10 (sm_86), L4 / L40S / RTX 40xx
# (sm_89), H100 / H200 (sm_90a, as the NVIDIA-only modules, so Hopper runs the same code as before),
# B200 (sm_100) and RTX 50xx (sm_120), plus compute_80 PTX, which any later GPU compiles on load.
set(IRIS_CUDA_PORTABLE_GENCODE
    "-gencode=arch=compute_80,code=sm_80;-gencode=arch=compute_86,code=sm_86;-gencode=arch=compute_89,code=sm_89;-gencode=arch=compute_90a,code=sm_90a;-gencode=arch=compute_100,code=sm_100;-gencode=arch=compute_120,code=sm_120;-gencode=arch=compute_80,code=compute_80"
    CACHE STRING "nvcc -gencode flags of the portable fatbins")
set(IRIS_HIP_ARCHS "gfx90a;gfx940" CACHE STRING "AMD GPU architectures of every HIP code object")
set(IRIS_CHECKED_MODULES "PORTABLE" CACHE STRING
    "Which modules marked CHECKED also get a NAME.checked variant (-DIRIS_CHECKED=1): PORTABLE, ALL or NONE")
set_property(CACHE IRIS_CHECKED_MODULES PROPERTY STRINGS PORTABLE ALL NONE)
if(NOT IRIS_CHECKED_MODULES MATCHES "^(PORTABLE|ALL|NONE)$")
  message(FATAL_ERROR "IRIS_CHECKED_MODULES must be PORTABLE, ALL or NONE, not '${IRIS_CHECKED_MODULES}'")
endif()

set(IRIS_HIP_CODE_OBJECT_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/IrisHipCodeObject.cmake")

if(IRIS_GPU_PLATFORM STREQUAL "CUDA")
  find_package(CUDAToolkit REQUIRED)
  set(IRIS_DEVICE_CODE_SUFFIX ".fatbin")
else()
  set(_iris_rocm_hints "$ENV{ROCM_PATH}/bin" "/opt/rocm/bin")
  find_program(IRIS_HIPCC NAMES hipcc HINTS ${_iris_rocm_hints})
  if(NOT IRIS_HIPCC)
    message(FATAL_ERROR "IRIS_GPU_PLATFORM=HIP needs hipcc (Debian: apt-get install hipcc libamdhip64-dev; "
                        "ROCm: /opt/rocm/bin)")
  endif()
  # The tools of the LLVM that hipcc drives, for the memory-model check.
  set(_iris_llvm_hints "$ENV{ROCM_PATH}/llvm/bin" "/opt/rocm/llvm/bin" "/usr/lib/llvm-15/bin"
      "/usr/lib/llvm-16/bin" "/usr/lib/llvm-17/bin")
  find_program(IRIS_OFFLOAD_BUNDLER NAMES clang-offload-bundler HINTS ${_iris_llvm_hints})
  find_program(IRIS_LLVM_OBJDUMP NAMES llvm-objdump HINTS ${_iris_llvm_hints})
  if(NOT IRIS_OFFLOAD_BUNDLER OR NOT IRIS_LLVM_OBJDUMP)
    message(FATAL_ERROR "IRIS_GPU_PLATFORM=HIP needs clang-offload-bundler and llvm-objdump (the LLVM that "
                        "hipcc uses) for the memory-model check; found '${IRIS_OFFLOAD_BUNDLER}', '${IRIS_LLVM_OBJDUMP}'")
  endif()
  set(IRIS_DEVICE_CODE_SUFFIX ".hsaco")
  message(STATUS "Iris: HIP device code for ${IRIS_HIP_ARCHS} with ${IRIS_HIPCC} (HIP_PLATFORM=amd)")
endif()

# The requirement named by a source's IRIS_NVIDIA_ONLY("...") line, or "" for a portable source.
function(iris_nvidia_only_requirement source out_var)
  file(STRINGS "${source}" lines REGEX "^[ \t]*IRIS_NVIDIA_ONLY[ \t]*\\(")
  set(requirement "")
  if(lines)
    list(GET lines 0 line)
    if(line MATCHES "IRIS_NVIDIA_ONLY[ \t]*\\([ \t]*\"([^\"]*)\"")
      set(requirement "${CMAKE_MATCH_1}")
    else()
      message(FATAL_ERROR "${source}: IRIS_NVIDIA_ONLY takes one string literal, e.g. IRIS_NVIDIA_ONLY(\"sm_90a (wgmma/TMA)\")")
    endif()
  endif()
  set(${out_var} "${requirement}" PARENT_SCOPE)
endfunction()

function(iris_add_fatbin name source destination)
  cmake_parse_arguments(ARG "HIP_CHECK_MEMORY_MODEL;CHECKED" "HIP_UNAVAILABLE" "INCLUDES;DEPENDS" ${ARGN})
  set(forwarded "")
  if(ARG_HIP_CHECK_MEMORY_MODEL)
    list(APPEND forwarded HIP_CHECK_MEMORY_MODEL)
  endif()
  if(ARG_HIP_UNAVAILABLE)
    list(APPEND forwarded HIP_UNAVAILABLE "${ARG_HIP_UNAVAILABLE}")
  endif()
  _iris_add_device_code("${name}" "${source}" "${destination}" OFF ${forwarded}
                        INCLUDES ${ARG_INCLUDES} DEPENDS ${ARG_DEPENDS})
  if(NOT ARG_CHECKED)
    return()
  endif()
  set(skipped "")
  if(IRIS_CHECKED_MODULES STREQUAL "NONE")
    set(skipped "the build was configured with -DIRIS_CHECKED_MODULES=NONE")
  elseif(IRIS_CHECKED_MODULES STREQUAL "PORTABLE")
    iris_nvidia_only_requirement("${source}" requirement)
    if(NOT requirement STREQUAL "")
      set(skipped "it is an NVIDIA-only module, whose checked variant is built only with -DIRIS_CHECKED_MODULES=ALL (it about doubles its ptxas time)")
    endif()
  endif()
  if(skipped STREQUAL "")
    list(REMOVE_ITEM forwarded HIP_CHECK_MEMORY_MODEL)
    _iris_add_device_code("${name}.checked" "${source}" "${destination}" ON ${forwarded}
                          INCLUDES ${ARG_INCLUDES} DEPENDS ${ARG_DEPENDS})
  else()
    set(marker "${CMAKE_CURRENT_BINARY_DIR}/device-code/${name}.checked.skipped")
    file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/device-code")
    file(CONFIGURE OUTPUT "${marker}" CONTENT "${skipped}\n" @ONLY)
    install(FILES "${marker}" DESTINATION "${destination}")
  endif()
endfunction()

# One module: the plain variant (checked OFF) or the checked one (ON: -DIRIS_CHECKED=1, no
# spill / local-memory / scratch rule).
function(_iris_add_device_code name source destination checked)
  cmake_parse_arguments(ARG "HIP_CHECK_MEMORY_MODEL" "HIP_UNAVAILABLE" "INCLUDES;DEPENDS" ${ARGN})
  set(include_flags "")
  foreach(dir IN LISTS ARG_INCLUDES)
    list(APPEND include_flags "-I${dir}")
  endforeach()
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/device-code")

  if(checked)
    set(variant_flags -DIRIS_CHECKED=1)
  else()
    set(variant_flags -Xptxas=-warn-spills,-warn-lmem-usage)
  endif()
  if(IRIS_GPU_PLATFORM STREQUAL "CUDA")
    set(out "${dir}/${name}.fatbin")
    iris_nvidia_only_requirement("${source}" requirement)
    if(requirement STREQUAL "")
      set(gencode ${IRIS_CUDA_PORTABLE_GENCODE})
    else()
      set(gencode ${IRIS_CUDA_GENCODE})
    endif()
    add_custom_command(
      OUTPUT "${out}"
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${dir}"
      COMMAND "${CUDAToolkit_NVCC_EXECUTABLE}" -fatbin -std=c++17 -O3 --expt-relaxed-constexpr
              ${gencode} ${include_flags} ${variant_flags} -Werror=all-warnings -o "${out}" "${source}"
      DEPENDS "${source}" ${ARG_DEPENDS}
      COMMENT "nvcc -fatbin ${name}"
      VERBATIM COMMAND_EXPAND_LISTS)
  else()
    iris_nvidia_only_requirement("${source}" requirement)
    if(ARG_HIP_UNAVAILABLE)
      set(requirement "${ARG_HIP_UNAVAILABLE}")
    endif()
    if(NOT requirement STREQUAL "")
      # Not compiled for AMD: ship the reason where the code object would be.
      set(out "${dir}/${name}.unavailable-hip")
      file(MAKE_DIRECTORY "${dir}")
      file(CONFIGURE OUTPUT "${out}" CONTENT "${requirement}\n" @ONLY)
      message(STATUS "Iris: ${name} is not built for HIP: needs ${requirement}")
      install(FILES "${out}" DESTINATION "${destination}")
      return()
    endif()
    set(out "${dir}/${name}.hsaco")
    string(REPLACE ";" "|" archs "${IRIS_HIP_ARCHS}")
    string(REPLACE ";" "|" includes "${ARG_INCLUDES}")
    set(check OFF)
    if(ARG_HIP_CHECK_MEMORY_MODEL)
      set(check ON)
    endif()
    add_custom_command(
      OUTPUT "${out}"
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${dir}"
      COMMAND "${CMAKE_COMMAND}" "-DHIPCC=${IRIS_HIPCC}" "-DSOURCE=${source}" "-DOUTPUT=${out}"
              "-DARCHS=${archs}" "-DINCLUDES=${includes}" "-DCHECK_MEMORY_MODEL=${check}" "-DCHECKED=${checked}"
              "-DBUNDLER=${IRIS_OFFLOAD_BUNDLER}" "-DOBJDUMP=${IRIS_LLVM_OBJDUMP}"
              -P "${IRIS_HIP_CODE_OBJECT_SCRIPT}"
      DEPENDS "${source}" "${IRIS_HIP_CODE_OBJECT_SCRIPT}" ${ARG_DEPENDS}
      COMMENT "hipcc --genco ${name} (${IRIS_HIP_ARCHS})"
      VERBATIM)
  endif()
  add_custom_target("device_code_${name}" ALL DEPENDS "${out}")
  install(FILES "${out}" DESTINATION "${destination}")
endfunction()
