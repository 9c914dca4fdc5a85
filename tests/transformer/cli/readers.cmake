# The readers of user text, as a user meets them: every command reads its lines with one reader
# (transformer/data/line_reader.h), so every command refuses the same things the same way. A line
# longer than 1 MiB (an endless line: a file with no line ends, /dev/zero) and an input that cannot be
# read (a directory, a closed standard input) stop the command with one line naming the input, status
# 1, after reading at most the limit; a line that is not UTF-8 is refused by classify as by translate;
# score prints one output line per input line.
set(GRADFORMER_READERS_DIR ${CMAKE_CURRENT_BINARY_DIR}/cli-readers)
set(readers_limit 1048576)  # kMaxLineBytes
math(EXPR readers_over_limit "${readers_limit} + 1")
add_test(NAME "gradformer program: readers: write an endless line, 1 MiB + 1 byte without a newline, and a Latin-1 file"
         COMMAND ${CMAKE_COMMAND} -DDIR=${GRADFORMER_READERS_DIR} -DBYTES=${readers_over_limit}
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/write_reader_inputs.cmake)
set_tests_properties("gradformer program: readers: write an endless line, 1 MiB + 1 byte without a newline, and a Latin-1 file"
                     PROPERTIES FIXTURES_SETUP gradformer_cli_reader_inputs)
set(readers_model ${GRADFORMER_CLI_DIR}/model.safetensors)
set(readers_classifier ${GRADFORMER_CLI_ENC}/cls/model.safetensors)
set(too_long "line longer than ${readers_limit} bytes, the most a line may hold")

# 1. Bounded in time and memory: an endless line ends the command at the limit, naming the input and line.
gradformer_cli_test("translate stops at an endless line, naming standard input and its line, status 1"
  "-DARGS=translate|--checkpoint|${readers_model}" -DSTDIN=${GRADFORMER_READERS_DIR}/long-line.txt
  -DEXIT=1 ${one_error_line} "-DSTDOUT=^[^\n]*\n$"
  "-DSTDERR=^gradformer translate: error: standard input:2: ${too_long} \\(is it text, one sentence a line\\?\\). reading stopped there\n$"
  REQUIRES "gradformer_cli_model;gradformer_cli_reader_inputs")
gradformer_cli_test("classify stops at an endless line, naming standard input and its line, status 1"
  "-DARGS=classify|--checkpoint|${readers_classifier}" -DSTDIN=${GRADFORMER_READERS_DIR}/long-line.txt
  -DEXIT=1 ${one_error_line} "-DSTDOUT=^[a-z]+\n$" "-DSTDERR=^gradformer classify: error: standard input:2: ${too_long}"
  REQUIRES "gradformer_cli_classifier;gradformer_cli_reader_inputs")
if(EXISTS /dev/zero)
  foreach(command "translate|${readers_model}|gradformer_cli_model" "classify|${readers_classifier}|gradformer_cli_classifier")
    string(REPLACE "|" ";" parts "${command}")
    list(GET parts 0 name)
    list(GET parts 1 checkpoint)
    list(GET parts 2 fixture)
    gradformer_cli_test("${name} < /dev/zero stops after 1 MiB with one line, status 1"
      "-DARGS=${name}|--checkpoint|${checkpoint}" -DSTDIN=/dev/zero -DEXIT=1 ${one_error_line} "-DSTDOUT_ABSENT=."
      "-DSTDERR=^gradformer ${name}: error: standard input:1: ${too_long}" REQUIRES ${fixture})
    # Unbounded, the command would read /dev/zero until memory ran out: fail in time instead.
    set_tests_properties("gradformer program: ${name} < /dev/zero stops after 1 MiB with one line, status 1"
                         PROPERTIES TIMEOUT 20)
  endforeach()
endif()
gradformer_cli_test("score stops at an endless line, naming the file and line, status 1"
  "-DARGS=score|--checkpoint|${readers_model}|--data|${GRADFORMER_READERS_DIR}/long-line.tsv" -DEXIT=1 ${one_error_line}
  "-DSTDOUT_ABSENT=." "-DSTDERR=^gradformer score: error: [^\n]*cli-readers/long-line.tsv:2: ${too_long}"
  REQUIRES "gradformer_cli_model;gradformer_cli_reader_inputs")
gradformer_cli_test("train --data with an endless line names the file and line, writes nothing, status 1"
  "-DARGS=train|--data|${GRADFORMER_READERS_DIR}/long-line.tsv|--out|${GRADFORMER_READERS_DIR}/run-tsv|--quiet"
  -DEXIT=1 ${one_error_line} "-DSTDERR=^gradformer train: error: [^\n]*cli-readers/long-line.tsv:2: ${too_long}"
  "-DNO_FILES=${GRADFORMER_READERS_DIR}/run-tsv/model.safetensors" REQUIRES gradformer_cli_reader_inputs)
gradformer_cli_test("train --arch decoder-only --data with an endless line names the file and line, status 1"
  "-DARGS=train|--arch|decoder-only|--data|${GRADFORMER_READERS_DIR}/long-line.txt|--out|${GRADFORMER_READERS_DIR}/run-lm|--quiet"
  -DEXIT=1 ${one_error_line} "-DSTDERR=^gradformer train: error: [^\n]*cli-readers/long-line.txt:2: ${too_long}"
  "-DNO_FILES=${GRADFORMER_READERS_DIR}/run-lm/model.safetensors" REQUIRES gradformer_cli_reader_inputs)
gradformer_cli_test("import --src-vocab with an endless line names the file and line, status 1"
  "-DARGS=import|--weights|${GRADFORMER_PT_DIR}/weights.safetensors|--src-vocab|${GRADFORMER_READERS_DIR}/long-line.vocab|--tgt-vocab|${GRADFORMER_PT_DIR}/tgt.vocab|--heads|2|--source-eos|yes|--out|${GRADFORMER_READERS_DIR}/imported.safetensors|--force"
  -DEXIT=1 ${one_error_line} "-DSTDERR=^gradformer import: error: [^\n]*cli-readers/long-line.vocab:5: ${too_long}"
  "-DNO_FILES=${GRADFORMER_READERS_DIR}/imported.safetensors" REQUIRES "gradformer_cli_pt;gradformer_cli_reader_inputs")

# An input that cannot be read stops the command with one line naming standard input, status 1.
foreach(command "translate|${readers_model}|gradformer_cli_model" "classify|${readers_classifier}|gradformer_cli_classifier")
  string(REPLACE "|" ";" parts "${command}")
  list(GET parts 0 name)
  list(GET parts 1 checkpoint)
  list(GET parts 2 fixture)
  gradformer_cli_test("${name} with a directory for standard input says it cannot read it, status 1"
    "-DARGS=${name}|--checkpoint|${checkpoint}" -DSTDIN=${CMAKE_CURRENT_SOURCE_DIR}/cli -DEXIT=1 ${one_error_line}
    "-DSTDOUT_ABSENT=." "-DSTDERR=^gradformer ${name}: error: standard input:1: read failed: [^\n]+\n$" REQUIRES ${fixture})
  # A closed standard input (<&-) needs a shell to close it.
  find_program(GRADFORMER_SH sh)
  if(UNIX AND GRADFORMER_SH)
    gradformer_cli_test("${name} with standard input closed says it cannot read it, status 1"
      -DPROGRAM=${GRADFORMER_SH} "-DARGS=-c|exec \"$0\" \"$@\" <&-|$<TARGET_FILE:gradformer>|${name}|--checkpoint|${checkpoint}"
      -DEXIT=1 ${one_error_line} "-DSTDOUT_ABSENT=." "-DSTDERR=^gradformer ${name}: error: standard input:1: read failed: [^\n]+\n$"
      REQUIRES ${fixture})
  endif()
endforeach()

# 2. One reader: classify refuses a line that is not UTF-8 as translate does, and goes on.
gradformer_cli_test("classify refuses a Latin-1 line as translate does: an empty output line, the rest labelled, status 1"
  "-DARGS=classify|--checkpoint|${readers_classifier}" -DSTDIN=${GRADFORMER_READERS_DIR}/latin1.txt -DEXIT=1 -DSTDERR_LINES=2
  "-DSTDOUT=^\n[a-z]+\n$"
  "-DSTDERR=^gradformer classify: line 1 not classified \\(an empty line is printed\\): standard input:1: not valid UTF-8 \\(byte 0xE9 at column 4\\). save the file as UTF-8\ngradformer classify: 1 line could not be classified\n$"
  REQUIRES "gradformer_cli_classifier;gradformer_cli_reader_inputs")
gradformer_cli_test("translate refuses a Latin-1 line: an empty output line, the rest translated, status 1"
  "-DARGS=translate|--checkpoint|${readers_model}" -DSTDIN=${GRADFORMER_READERS_DIR}/latin1.txt -DEXIT=1 -DSTDERR_LINES=2
  "-DSTDOUT=^\n[^\n]*\n$"
  "-DSTDERR=^gradformer translate: line 1 not translated \\(an empty line is printed\\): standard input:1: not valid UTF-8 \\(byte 0xE9 at column 4\\). save the file as UTF-8\ngradformer translate: 1 line could not be translated\n$"
  REQUIRES "gradformer_cli_model;gradformer_cli_reader_inputs")
string(REPEAT "4 " 200 readers_long_sentence)
gradformer_cli_test("classify a sentence longer than the model takes: an empty output line, the rest labelled, status 1"
  "-DARGS=classify|--checkpoint|${readers_classifier}" -DWRITE=${GRADFORMER_READERS_DIR}/long-sentence.txt
  "-DWRITE_TEXT=il mange .|${readers_long_sentence}|je mange .|" -DSTDIN=${GRADFORMER_READERS_DIR}/long-sentence.txt
  -DEXIT=1 -DSTDERR_LINES=2 "-DSTDOUT=^[a-z]+\n\n[a-z]+\n$"
  "-DSTDERR=^gradformer classify: line 2 not classified \\(an empty line is printed\\): classify: the sentence has 200 words. this model takes at most [0-9]+ \\(its max_len [0-9]+ less <s> and </s>\\)\ngradformer classify: 1 line could not be classified\n$"
  REQUIRES gradformer_cli_classifier)
# A command's own argument is user text too: not UTF-8 is a usage error, before any model is loaded.
string(ASCII 233 latin1_e_acute)
gradformer_cli_test("generate refuses a --prompt that is not UTF-8, status 2"
  "-DARGS=generate|--checkpoint|${GRADFORMER_CLI_DIR}/missing.safetensors|--prompt|caf${latin1_e_acute}" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer generate: --prompt is not valid UTF-8 \\(byte 0xE9 at column 4\\)\n$")
gradformer_cli_test("trace refuses a sentence that is not UTF-8, status 2"
  "-DARGS=trace|--checkpoint|${GRADFORMER_CLI_DIR}/missing.safetensors|caf${latin1_e_acute} ." -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer trace: the sentence is not valid UTF-8 \\(byte 0xE9 at column 4\\)\n$")

# 3. score: one output line per input line; a blank line (spaces and tabs only) gives an empty one.
gradformer_cli_test("score prints an empty line for a blank or tab-only line, so 5 lines give 5 lines"
  "-DARGS=score|--checkpoint|${readers_model}|--data|${GRADFORMER_READERS_DIR}/five.tsv|--batch-size|2"
  -DWRITE=${GRADFORMER_READERS_DIR}/five.tsv "-DWRITE_TEXT=4 5 6^4 5 6||^|7^7|8 9^9 8|" "-DSTDERR_ABSENT=."
  "-DSTDOUT=^-[0-9]+\\.[0-9]+\t4\n\n\n-[0-9]+\\.[0-9]+\t2\n-[0-9]+\\.[0-9]+\t3\n$" REQUIRES gradformer_cli_model)
gradformer_cli_test("score --help says a blank line gives an empty output line" "-DARGS=score|--help"
  "-DSTDOUT=A blank line \\(only spaces and tabs\\) gives an empty output line, so output line N is input line N's score.\n")
