# The suite's test that an untouched stub fails and tells the reader what to do.
#   cmake -DCHECKER=exercise_06_split_heads_yours -DSTUB=.../06_split_heads.cpp -DCHAPTER=6 -P stub_says_what_to_do.cmake
# While STUB still throws exercises::NotWrittenYet, CHECKER (built from it) must exit non-zero and
# print the line that names the file and the chapter. Once the reader has written the function (the
# throw is gone) this says so and the test is skipped: check-exercise-NN_x checks the reader's work.
foreach(variable CHECKER STUB CHAPTER)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "stub_says_what_to_do.cmake: give -D${variable}=...")
  endif()
endforeach()
get_filename_component(file "${STUB}" NAME)
file(READ "${STUB}" source)
string(FIND "${source}" "throw NotWrittenYet();" throw_at)
if(throw_at EQUAL -1)
  message("tutorials/exercises/${file} has been written (it no longer throws NotWrittenYet): not a stub to test")
  return()
endif()

execute_process(COMMAND "${CHECKER}" RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
set(expected "tutorials/exercises/${file} still throws NotWrittenYet, the stub's placeholder: write the function body (chapter ${CHAPTER}, Try this)")
if(status EQUAL 0)
  message(FATAL_ERROR "the checker passed the untouched stub tutorials/exercises/${file}")
endif()
string(FIND "${output}" "${expected}" found)
if(found EQUAL -1)
  message(FATAL_ERROR "the checker of the untouched stub did not print\n  ${expected}")
endif()
