# cmake -DPROGRAM=... -DTOKENIZER="--bytes" (or "--tokenizer|FILE", "--gpt2|DIR") -DDIR=<folder>
#       (-DTEXT=<text> | -DINPUT=<file>) [-DIDS=<ids>] -P tokenize_round_trip.cmake
# A text through `gradformer tokenize` and back through `tokenize --decode` must come out byte for
# byte as it went in. TEXT is written to a file first ('|' for newlines, '^' for tabs, as run_cli.cmake
# writes); INPUT is a file as it is. IDS, when given, are the ids the text must become (from an
# independent implementation: GPT-2's encoder.py for its fixture).
if(NOT PROGRAM OR NOT TOKENIZER OR NOT DIR)
  message(FATAL_ERROR "tokenize_round_trip.cmake: PROGRAM, TOKENIZER and DIR are required")
endif()
string(REPLACE "|" ";" tokenizer "${TOKENIZER}")
file(MAKE_DIRECTORY "${DIR}")
if(NOT INPUT)
  set(INPUT "${DIR}/text.txt")
  string(REPLACE "|" "\n" text "${TEXT}")
  string(REPLACE "^" "\t" text "${text}")
  file(WRITE "${INPUT}" "${text}")
endif()

execute_process(COMMAND "${PROGRAM}" tokenize ${tokenizer} INPUT_FILE "${INPUT}" OUTPUT_FILE "${DIR}/ids.txt"
                RESULT_VARIABLE status ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "gradformer tokenize ${TOKENIZER} < ${INPUT}: exit status ${status}\n${err}")
endif()
file(READ "${DIR}/ids.txt" ids)
# One line of ids and spaces (checked without a repeated group: CMake's regular expressions recurse on
# those, and a long text's ids would overflow its stack).
string(FIND "${ids}" "\n" line_end)
string(LENGTH "${ids}" length)
math(EXPR last "${length} - 1")
if(ids MATCHES "[^0-9 \n]" OR ids MATCHES "(^ |  | \n)" OR NOT line_end EQUAL last)
  message(FATAL_ERROR "tokenize ${TOKENIZER} printed '${ids}', not one line of ids")
endif()
if(DEFINED IDS AND NOT ids STREQUAL "${IDS}\n")
  message(FATAL_ERROR "tokenize ${TOKENIZER} gave the ids\n  ${ids}expected\n  ${IDS}")
endif()

execute_process(COMMAND "${PROGRAM}" tokenize ${tokenizer} --decode INPUT_FILE "${DIR}/ids.txt"
                OUTPUT_FILE "${DIR}/decoded.txt" RESULT_VARIABLE status ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "gradformer tokenize ${TOKENIZER} --decode: exit status ${status}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${INPUT}" "${DIR}/decoded.txt" RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  message(FATAL_ERROR "tokenize ${TOKENIZER} | tokenize --decode changed the text: ${INPUT} and ${DIR}/decoded.txt differ")
endif()
