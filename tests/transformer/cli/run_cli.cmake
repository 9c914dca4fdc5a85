# cmake -DPROGRAM=... -DARGS="a|b|c" [-DSTDIN=file] [-DEXIT=0] [-DSTDOUT=regex] [-DSTDERR=regex]
#       [-DSTDOUT_ABSENT=regex] [-DSTDERR_ABSENT=regex] [-DSTDERR_LINES=n] [-DFILES="path|path|glob"] [-DCLEAN=dir] [-DWRITE=file] [-DWRITE_TEXT=text]
#       -P run_cli.cmake
# Runs the gradformer program as a user would and checks what they see: the exit status, what it
# prints on stdout and stderr (regular expressions; the _ABSENT ones must not match), the number of
# lines on stderr (a user error is one line, never a stack trace), and the files it writes (each
# entry of FILES a path or a glob that must match at least one file). ARGS separates arguments with
# '|' because ctest's command lines cannot carry ';'. CLEAN removes a directory first; WRITE
# writes WRITE_TEXT (with '|' for newlines and '^' for tabs) to a file first.
if(NOT PROGRAM)
  message(FATAL_ERROR "run_cli.cmake: PROGRAM is required")
endif()
if(NOT DEFINED EXIT)
  set(EXIT 0)
endif()
string(REPLACE "|" ";" arguments "${ARGS}")
if(CLEAN)
  file(REMOVE_RECURSE "${CLEAN}")
endif()
if(WRITE)
  string(REPLACE "|" "\n" text "${WRITE_TEXT}")
  string(REPLACE "^" "\t" text "${text}")
  file(WRITE "${WRITE}" "${text}")
endif()

if(STDIN)
  execute_process(COMMAND "${PROGRAM}" ${arguments} INPUT_FILE "${STDIN}" RESULT_VARIABLE status OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
else()
  execute_process(COMMAND "${PROGRAM}" ${arguments} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
endif()

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
if(FILES)
  string(REPLACE "|" ";" files "${FILES}")
  foreach(pattern IN LISTS files)
    file(GLOB found "${pattern}")
    if(NOT found)
      string(APPEND failures "no file ${pattern}\n")
    endif()
  endforeach()
endif()

if(failures)
  string(REPLACE ";" " " shown "${arguments}")
  message(FATAL_ERROR "gradformer ${shown}\n${failures}--- stdout:\n${out}--- stderr:\n${err}")
endif()
