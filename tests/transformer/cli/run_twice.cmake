# cmake -DPROGRAM=... -DARGS="a|b|c" -DBUSY=regex [-DFILES="path|glob"] [-DCLEAN=dir] -P run_twice.cmake
# Starts the same gradformer command twice at the same moment (two users, or a script run twice,
# on one output folder) and checks that exactly one of them runs: one exits 0, the other exits 1
# with one line on stderr matching BUSY, and FILES exist afterwards (the winner's outputs, whole).
# CLEAN removes a directory first.
# The two run through sh, each with its own output files, because a CMake pipeline would join
# one's stdout to the other's stdin.
include(${CMAKE_CURRENT_LIST_DIR}/require_files.cmake)
if(NOT PROGRAM OR NOT ARGS OR NOT BUSY)
  message(FATAL_ERROR "run_twice.cmake: PROGRAM, ARGS and BUSY are required")
endif()
string(REPLACE "|" "' '" quoted "${ARGS}")
set(command "'${PROGRAM}' '${quoted}'")
if(CLEAN)
  file(REMOVE_RECURSE "${CLEAN}")
endif()
string(MD5 tag "${ARGS}")
set(dir "${CMAKE_CURRENT_BINARY_DIR}/run-twice-${tag}")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}")
execute_process(
  COMMAND sh -c "${command} >'${dir}/out1' 2>'${dir}/err1' & first=$!
                 ${command} >'${dir}/out2' 2>'${dir}/err2'; second=$?
                 wait $first; echo $? $second"
  OUTPUT_VARIABLE statuses OUTPUT_STRIP_TRAILING_WHITESPACE)
file(READ "${dir}/err1" err1)
file(READ "${dir}/err2" err2)
set(failures "")
if(statuses STREQUAL "0 1")
  set(err "${err2}")
elseif(statuses STREQUAL "1 0")
  set(err "${err1}")
else()
  string(APPEND failures "exit statuses ${statuses}, expected one 0 and one 1\n")
endif()
if(DEFINED err)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT lines EQUAL 1 OR NOT err MATCHES "${BUSY}")
    string(APPEND failures "the refused run's stderr should be one line matching '${BUSY}'\n")
  endif()
endif()
gradformer_require_files("${FILES}")
if(failures)
  message(FATAL_ERROR "gradformer ${ARGS}, twice at once\n${failures}--- first's stderr:\n${err1}--- second's stderr:\n${err2}")
endif()
