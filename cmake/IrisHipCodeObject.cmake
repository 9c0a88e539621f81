# Script mode (cmake -P), run by iris_add_fatbin for IRIS_GPU_PLATFORM=HIP: compiles one source
# into a code-object bundle and enforces the build rules of IrisFatbin.cmake.
#
#   -DHIPCC=... -DSOURCE=x.cu -DOUTPUT=x.hsaco -DARCHS=gfx90a|gfx940 -DINCLUDES=dir|dir
#   -DCHECK_MEMORY_MODEL=ON|OFF -DBUNDLER=clang-offload-bundler -DOBJDUMP=llvm-objdump
#   -DCHECKED=ON|OFF   the checked variant: -DIRIS_CHECKED=1, scratch memory allowed
cmake_minimum_required(VERSION 3.25)

string(REPLACE "|" ";" archs "${ARCHS}")
string(REPLACE "|" ";" includes "${INCLUDES}")
set(flags --genco -std=c++17 -O3 -DIRIS_PLATFORM_HIP -Wall -Wextra -Werror
          -Rpass-analysis=kernel-resource-usage -fno-caret-diagnostics -x hip)
foreach(arch IN LISTS archs)
  list(APPEND flags "--offload-arch=${arch}")
endforeach()
foreach(dir IN LISTS includes)
  list(APPEND flags "-I${dir}")
endforeach()
if(CHECKED)
  list(APPEND flags -DIRIS_CHECKED=1)
endif()

execute_process(
  COMMAND "${CMAKE_COMMAND}" -E env HIP_PLATFORM=amd "${HIPCC}" ${flags} "${SOURCE}" -o "${OUTPUT}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)

# Resource-usage remarks come as "<file>:<line>:<col>: remark: Function Name: k" followed by
# "...: remark:     ScratchSize [bytes/lane]: N" (once per architecture). They are parsed with
# regular expressions on the whole text (no line lists: source text may hold ';' and brackets)
# and left out of what is shown; errors and warnings are shown as they come.
string(REGEX MATCHALL "remark: +(Function Name: [A-Za-z0-9_]+|ScratchSize \\[bytes/lane\\]: [0-9]+)" remarks "${err}")
set(scratch_users "")
set(function "?")
foreach(remark IN LISTS remarks)
  if(remark MATCHES "Function Name: ([A-Za-z0-9_]+)")
    set(function "${CMAKE_MATCH_1}")
  elseif(remark MATCHES "ScratchSize .*: ([0-9]+)$" AND NOT CMAKE_MATCH_1 EQUAL 0)
    list(APPEND scratch_users "${function} (${CMAKE_MATCH_1} bytes/lane)")
  endif()
endforeach()
string(REGEX REPLACE "[^\n]*: remark: [^\n]*\n?" "" shown "${out}${err}")
string(STRIP "${shown}" shown)
if(NOT shown STREQUAL "")
  message("${shown}")
endif()
if(NOT rc EQUAL 0)
  file(REMOVE "${OUTPUT}")
  message(FATAL_ERROR "hipcc failed (${rc}) on ${SOURCE}")
endif()
if(scratch_users AND NOT CHECKED)
  list(REMOVE_DUPLICATES scratch_users)
  list(JOIN scratch_users ", " which)
  file(REMOVE "${OUTPUT}")
  message(FATAL_ERROR "${SOURCE}: scratch memory (spills or a private copy, e.g. of a Ctx captured by "
                      "reference in a lambda) in: ${which}")
endif()

# The memory model of arch.cuh rests on system-scope release/acquire lowering to an L2 writeback
# (buffer_wbl2) and an L2 invalidate (gfx90a: buffer_invl2, gfx940: buffer_inv sc0 sc1). A module
# that synchronizes across GPUs must contain both, for every architecture.
if(CHECK_MEMORY_MODEL)
  get_filename_component(name "${OUTPUT}" NAME_WE)
  get_filename_component(dir "${OUTPUT}" DIRECTORY)
  foreach(arch IN LISTS archs)
    set(object "${dir}/${name}-${arch}.co")
    execute_process(
      COMMAND "${BUNDLER}" --unbundle --type=o "--input=${OUTPUT}" "--targets=hipv4-amdgcn-amd-amdhsa--${arch}"
              "--output=${object}"
      RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${OUTPUT}: no ${arch} code object in the bundle: ${err}")
    endif()
    execute_process(COMMAND "${OBJDUMP}" -d "--mcpu=${arch}" "${object}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE asm ERROR_VARIABLE err)
    file(REMOVE "${object}")
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "llvm-objdump failed on the ${arch} code object of ${OUTPUT}: ${err}")
    endif()
    foreach(required "buffer_wbl2" "buffer_inv")
      if(NOT asm MATCHES "${required}")
        file(REMOVE "${OUTPUT}")
        message(FATAL_ERROR "${SOURCE} (${arch}): no ${required} in the code: system-scope release/acquire "
                            "did not lower to the L2 writeback/invalidate the memory model needs (arch.cuh)")
      endif()
    endforeach()
    message(STATUS "${name} (${arch}): system-scope release/acquire lower to buffer_wbl2 / buffer_inv")
  endforeach()
endif()
