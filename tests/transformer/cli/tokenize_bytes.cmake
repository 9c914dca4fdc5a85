# cmake -DPROGRAM=... -DDIR=<folder> -P tokenize_bytes.cmake
# The bytes tokenizer on every byte value, NUL and 0xFF included, which no command line can carry:
# the ids 4 .. 259 (id = 4 + the byte's value: after <pad> <s> </s> <unk>) then NUL NUL 0xFF and a
# newline, decoded by `tokenize --bytes --decode`, must be exactly those bytes (read back as hex), and
# `tokenize --bytes` of those bytes must give the same ids again.
if(NOT PROGRAM OR NOT DIR)
  message(FATAL_ERROR "tokenize_bytes.cmake: PROGRAM and DIR are required")
endif()
file(MAKE_DIRECTORY "${DIR}")
set(digits 0 1 2 3 4 5 6 7 8 9 a b c d e f)
set(ids "")
set(hex "")
foreach(high ${digits})
  foreach(low ${digits})
    string(APPEND hex "${high}${low}")
  endforeach()
endforeach()
foreach(byte RANGE 255)
  math(EXPR id "${byte} + 4")
  string(APPEND ids "${id} ")
endforeach()
string(APPEND ids "4 4 259 14")
string(APPEND hex "0000ff0a")
file(WRITE "${DIR}/ids.txt" "${ids}")

execute_process(COMMAND "${PROGRAM}" tokenize --bytes --decode INPUT_FILE "${DIR}/ids.txt" OUTPUT_FILE "${DIR}/bytes.bin"
                RESULT_VARIABLE status ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "gradformer tokenize --bytes --decode: exit status ${status}\n${err}")
endif()
file(READ "${DIR}/bytes.bin" decoded HEX)
if(NOT decoded STREQUAL hex)
  message(FATAL_ERROR "tokenize --bytes --decode wrote the bytes\n  ${decoded}\nexpected\n  ${hex}")
endif()

execute_process(COMMAND "${PROGRAM}" tokenize --bytes INPUT_FILE "${DIR}/bytes.bin" OUTPUT_VARIABLE out
                RESULT_VARIABLE status ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "gradformer tokenize --bytes: exit status ${status}\n${err}")
endif()
if(NOT out STREQUAL "${ids}\n")
  message(FATAL_ERROR "tokenize --bytes gave\n  ${out}expected\n  ${ids}")
endif()
