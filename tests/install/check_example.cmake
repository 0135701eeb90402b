# Installs tgemm from BUILD_DIR into a fresh prefix, builds examples/ against it through
# find_package(tgemm CONFIG), and runs the program: it must start (no libcuda needed) and,
# without a GPU, say so.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples -B ${WORK_DIR}/build -G Ninja
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCUDAToolkit_ROOT=/usr/local/cuda
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc)
  message(FATAL_ERROR "configuring the example against the install tree failed:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc)
  message(FATAL_ERROR "building the example failed:\n${out}")
endif()
execute_process(COMMAND ${WORK_DIR}/build/sgemm_example
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 AND out MATCHES "relative error")
  message(STATUS "example ran on a GPU: ${out}")
elseif(rc EQUAL 2 AND out MATCHES "no CUDA device")
  message(STATUS "example started without a GPU: ${out}")
else()
  message(FATAL_ERROR "example failed (exit ${rc}):\n${out}\n${err}")
endif()
