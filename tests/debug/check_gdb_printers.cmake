# cmake -DGDB=<gdb or empty> -DPROGRAM=<inspect_me> -DPRINTERS=<tutorials/debug/gradformer_gdb.py> -P check_gdb_printers.cmake
# Runs gdb in batch mode, stops in stop_here() and checks what the pretty-printers print.
if(NOT GDB)
  message(NOTICE "SKIPPED: gdb is not installed (apt-get install gdb), so the pretty-printers were not checked")
  return()  # ctest reads the SKIPPED line (SKIP_REGULAR_EXPRESSION) and reports the test as skipped
endif()
execute_process(COMMAND ${GDB} -batch -nx -x ${PRINTERS} -ex "set width 0" -ex "break stop_here" -ex run -ex "print matrix"
                        -ex "print column" -ex "print loss" -ex "print weight" -ex "print matrix.shape_" ${PROGRAM}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(expected
  "Tensor \\[2, 3\\] float32, strides \\[3, 1\\], offset 0, contiguous = \\[\\[0, 1, 2\\], \\[3, 4, 5\\]\\]"
  "Tensor \\[2\\] float32, strides \\[3\\], offset 1, not contiguous \\(a view\\) = \\[1, 4\\]"
  "Variable \\[\\] float32, strides \\[\\], offset 0, contiguous = 5.25, grad_fn=sum, requires_grad, no grad yet"
  "Variable \\[3\\] float32, strides \\[1\\], offset 0, contiguous = \\[0.5, -1, 2\\], leaf, requires_grad, grad \\[3\\] float32, strides \\[1\\], offset 0, contiguous = \\[1, -2, 4\\]"
  "= \\[2, 3\\]")
foreach(line IN LISTS expected)
  if(NOT out MATCHES "${line}")
    message(FATAL_ERROR "gdb did not print\n  ${line}\nIt printed:\n${out}\n${err}")
  endif()
endforeach()
# Reading a Variable's grad_fn must not make gdb look up the node's dynamic type (a LambdaNode of a
# lambda, whose RTTI symbol it cannot match): that prints a warning before every such Variable.
string(FIND "${out}${err}" "RTTI symbol not found" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "gdb warned while printing:\n${out}\n${err}")
endif()
message(STATUS "gdb printed every tensor as expected")
