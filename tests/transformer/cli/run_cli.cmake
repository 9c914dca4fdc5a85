# cmake -DPROGRAM=... -DARGS="a|b|c" [-DSTDIN=file] [-DEXIT=0] [-DSTDOUT=regex] [-DSTDERR=regex]
#       [-DSTDOUT_ABSENT=regex] [-DSTDERR_ABSENT=regex] [-DSTDERR_LINES=n] [-DFILES="path|path|glob"] [-DCLEAN=dir] [-DWRITE=file] [-DWRITE_TEXT=text]
#       [-DSTDOUT_FILE=path] [-DNO_FILES="path|path"] [-DGONE="path|path"] [-DWORKDIR=dir]
#       [-DSAVE_STDOUT=path] [-DSAME_STDOUT_AS=path] [-DENV="NAME=value|NAME=value"]
#       -P run_cli.cmake
# Runs the gradformer program as a user would and checks what they see: the exit status, what it
# prints on stdout and stderr (regular expressions; the _ABSENT ones must not match), the number of
# lines on stderr (a user error is one line, never a stack trace), and the files it writes (each
# entry of FILES a path or a glob that must match at least one file). ARGS separates arguments with
# '|' because ctest's command lines cannot carry ';'. CLEAN removes a directory first; WRITE
# writes WRITE_TEXT (with '|' for newlines and '^' for tabs) to a file first. STDOUT_FILE sends
# stdout to a file (/dev/full: a full disk) instead of capturing it. NO_FILES: paths that must not
# exist afterwards (removed first); GONE: paths that must not exist afterwards (left as they are
# first: files an earlier test made, that this run must remove). WORKDIR: the directory the program
# runs in (default: the test's). SAVE_STDOUT also writes stdout to a file, so that a later test
# can require, with SAME_STDOUT_AS, exactly the same output (two checkpoints that must agree).
# ENV: environment variables the program runs with.
include(${CMAKE_CURRENT_LIST_DIR}/require_files.cmake)
if(NOT PROGRAM)
  message(FATAL_ERROR "run_cli.cmake: PROGRAM is required")
endif()
if(NOT DEFINED EXIT)
  set(EXIT 0)
endif()
string(REPLACE "|" ";" arguments "${ARGS}")
if(ENV)
  string(REPLACE "|" ";" assignments "${ENV}")
  foreach(assignment IN LISTS assignments)
    string(FIND "${assignment}" "=" equals)
    string(SUBSTRING "${assignment}" 0 ${equals} variable)
    math(EXPR after "${equals} + 1")
    string(SUBSTRING "${assignment}" ${after} -1 value)
    set(ENV{${variable}} "${value}")
  endforeach()
endif()
if(CLEAN)
  file(REMOVE_RECURSE "${CLEAN}")
endif()
if(WRITE)
  string(REPLACE "|" "\n" text "${WRITE_TEXT}")
  string(REPLACE "^" "\t" text "${text}")
  file(WRITE "${WRITE}" "${text}")
endif()

if(NO_FILES)
  string(REPLACE "|" ";" absent "${NO_FILES}")
  file(REMOVE ${absent})
endif()
set(redirect "")
if(STDIN)
  list(APPEND redirect INPUT_FILE "${STDIN}")
endif()
if(WORKDIR)
  file(MAKE_DIRECTORY "${WORKDIR}")
  list(APPEND redirect WORKING_DIRECTORY "${WORKDIR}")
endif()
if(STDOUT_FILE)
  list(APPEND redirect OUTPUT_FILE "${STDOUT_FILE}")
else()
  list(APPEND redirect OUTPUT_VARIABLE out)
endif()
execute_process(COMMAND "${PROGRAM}" ${arguments} ${redirect} RESULT_VARIABLE status ERROR_VARIABLE err)

set(failures "")
if(NOT "${status}" STREQUAL "${EXIT}")
  string(APPEND failures "exit status ${status}, expected ${EXIT}\n")
endif()
if(DEFINED STDOUT AND NOT out MATCHES "${STDOUT}")
  string(APPEND failures "stdout does not match '${STDOUT}'\n")
endif()
if(DEFINED STDOUT_ABSENT AND out MATCHES "${STDOUT_ABSENT}")
  string(APPEND failures "stdout matches '${STDOUT_ABSENT}', which it should not\n")
endif()
if(DEFINED STDERR AND NOT err MATCHES "${STDERR}")
  string(APPEND failures "stderr does not match '${STDERR}'\n")
endif()
if(DEFINED STDERR_ABSENT AND err MATCHES "${STDERR_ABSENT}")
  string(APPEND failures "stderr matches '${STDERR_ABSENT}', which it should not\n")
endif()
if(DEFINED STDERR_LINES)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT lines EQUAL STDERR_LINES)
    string(APPEND failures "stderr has ${lines} lines, expected ${STDERR_LINES}\n")
  endif()
endif()
gradformer_require_files("${FILES}")

if(GONE)
  string(REPLACE "|" ";" gone "${GONE}")
  list(APPEND absent ${gone})
endif()
if(SAVE_STDOUT)
  file(WRITE "${SAVE_STDOUT}" "${out}")
endif()
if(SAME_STDOUT_AS)
  file(READ "${SAME_STDOUT_AS}" expected)
  if(NOT out STREQUAL expected)
    string(APPEND failures "stdout differs from ${SAME_STDOUT_AS}:\n${expected}")
  endif()
endif()

foreach(path IN LISTS absent)
  if(EXISTS "${path}")
    string(APPEND failures "${path} exists, which it should not\n")
  endif()
endforeach()

if(failures)
  string(REPLACE ";" " " shown "${arguments}")
  message(FATAL_ERROR "gradformer ${shown}\n${failures}--- stdout:\n${out}--- stderr:\n${err}")
endif()
