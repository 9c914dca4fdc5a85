# cmake -DBUILD=<gradformer build dir> -DSOURCE=<project root> -DWORK=<scratch dir> -P check_install.cmake
# Installs the built library into WORK/prefix, builds tests/install (a project of a reader's own
# that calls find_package(gradformer)) against it, and runs the result.
file(REMOVE_RECURSE ${WORK})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "failed (${code}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE}/tests/install -B ${WORK}/build -DCMAKE_PREFIX_PATH=${WORK}/prefix)
run(${CMAKE_COMMAND} --build ${WORK}/build)
run(${WORK}/build/my_first_transformer)
if(NOT out MATCHES "logits \\[1, 3, 20\\]")
  message(FATAL_ERROR "unexpected output: ${out}")
endif()
message(STATUS "an outside project built and ran against the installed library: ${out}")
