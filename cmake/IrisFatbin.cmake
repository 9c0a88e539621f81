# iris_add_fatbin(NAME SOURCE DESTINATION [INCLUDES dir...])
#
# Compiles one .cu file into NAME.fatbin (sm_90a machine code plus compute_90a PTX, so newer
# GPUs can JIT it) and installs it into DESTINATION. Register spills and local-memory use are
# build errors: in these kernels they are always a mistake (e.g. a kernel parameter copied to
# local memory for want of __grid_constant__). CMake 3.25 cannot emit fatbins by itself,
# so this is a custom command around nvcc.
set(IRIS_CUDA_GENCODE "-gencode=arch=compute_90a,code=sm_90a;-gencode=arch=compute_90a,code=compute_90a"
    CACHE STRING "nvcc -gencode flags for every fatbin")

function(iris_add_fatbin name source destination)
  cmake_parse_arguments(ARG "" "" "INCLUDES;DEPENDS" ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/fatbin/${name}.fatbin")
  set(include_flags "")
  foreach(dir IN LISTS ARG_INCLUDES)
    list(APPEND include_flags "-I${dir}")
  endforeach()
  add_custom_command(
    OUTPUT "${out}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_CURRENT_BINARY_DIR}/fatbin"
    COMMAND "${CUDAToolkit_NVCC_EXECUTABLE}" -fatbin -std=c++17 -O3 --expt-relaxed-constexpr
            ${IRIS_CUDA_GENCODE} ${include_flags} -Xptxas=-warn-spills,-warn-lmem-usage -Werror=all-warnings -o "${out}" "${source}"
    DEPENDS "${source}" ${ARG_DEPENDS}
    COMMENT "nvcc -fatbin ${name}"
    VERBATIM COMMAND_EXPAND_LISTS)
  add_custom_target("fatbin_${name}" ALL DEPENDS "${out}")
  install(FILES "${out}" DESTINATION "${destination}")
endfunction()
