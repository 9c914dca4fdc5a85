# gradformer trace needs no training run: without --checkpoint (and no runs/toy-translation) it trains
# the first-use model into runs/trace-model once, says so on stderr, and reuses it; two traces started
# at once train it once. Included by tests/transformer/CMakeLists.txt; --first-use-steps keeps the
# model tiny here (its recipe's full run is measured in chapter 11).
# Run as a script (cmake -DPROGRAM=... -DDIR=... -P trace_first_use.cmake), it is the test of two
# traces at once: both print the same trace, and one model was trained.
if(CMAKE_SCRIPT_MODE_FILE)
  file(REMOVE_RECURSE "${DIR}")
  file(MAKE_DIRECTORY "${DIR}")
  set(command "'${PROGRAM}' trace --first-use-steps 30 'je suis heureux .'")
  execute_process(
    COMMAND sh -c "${command} >out1 2>err1 & first=$!
                   ${command} >out2 2>err2; second=$?
                   wait $first; echo $? $second"
    WORKING_DIRECTORY "${DIR}" OUTPUT_VARIABLE statuses OUTPUT_STRIP_TRAILING_WHITESPACE)
  foreach(file out1 out2 err1 err2)
    file(READ "${DIR}/${file}" ${file})
  endforeach()
  string(REGEX MATCHALL "gradformer trace: trained [0-9]+ steps" trained "${err1}${err2}")
  list(LENGTH trained runs)
  if(NOT statuses STREQUAL "0 0" OR NOT out1 STREQUAL out2 OR NOT runs EQUAL 1 OR NOT out1 MATCHES "Translation")
    message(FATAL_ERROR "two traces at once: statuses '${statuses}' (expected 0 0), ${runs} models trained "
                        "(expected 1), the same trace expected from both\n--- first's stderr:\n${err1}--- second's "
                        "stderr:\n${err2}--- first's stdout:\n${out1}")
  endif()
  return()
endif()

set(GRADFORMER_CLI_FIRST_USE ${CMAKE_CURRENT_BINARY_DIR}/cli-first-use)
gradformer_cli_test("trace without --checkpoint trains the first-use model, saying so on stderr"
  "-DARGS=trace|--first-use-steps|30|je suis heureux ." -DWORKDIR=${GRADFORMER_CLI_FIRST_USE}/once -DCLEAN=${GRADFORMER_CLI_FIRST_USE}/once
  "-DSTDERR=^gradformer trace: no --checkpoint and no runs/toy-translation/model.safetensors: training a small toy-translation model into runs/trace-model \\(once. later traces reuse it\\)\ngradformer trace: trained 30 steps in [0-9]+ s. saved runs/trace-model/model.safetensors\n$"
  "-DSTDOUT=^An encoder-decoder Transformer: d_model 64, 2 layers each side, 4 heads.*Translation \\(greedy\\):"
  "-DFILES=${GRADFORMER_CLI_FIRST_USE}/once/runs/trace-model/model.safetensors" FIXTURE gradformer_cli_first_use)
gradformer_cli_test("trace without --checkpoint reuses the first-use model, and traces a training step on it"
  "-DARGS=trace|--train|je suis heureux .|i am happy .|--html|train.html|--force" -DWORKDIR=${GRADFORMER_CLI_FIRST_USE}/once
  "-DSTDERR=^gradformer trace: tracing the first-use model runs/trace-model/model.safetensors \\(--checkpoint to trace another\\)\n$"
  "-DSTDOUT=tgt_in:   <s> i am happy .\n   tgt_out:  i am happy . </s>\n.*label-smoothed cross-entropy, eps 0.1 .*3. Where the backward pass starts.*4. Backward.*decoder layer 1.*encoder layer 0.*6. One gradient-descent step.*wrote train.html"
  "-DFILES=${GRADFORMER_CLI_FIRST_USE}/once/train.html" REQUIRES gradformer_cli_first_use)
add_test(NAME "gradformer program: two traces started at once train the first-use model once"
         COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:gradformer> -DDIR=${GRADFORMER_CLI_FIRST_USE}/twice
                 -P ${CMAKE_CURRENT_LIST_FILE})
gradformer_cli_test("trace --train without the pair's target is status 2"
  "-DARGS=trace|--train|--checkpoint|x.safetensors|je suis heureux ." -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer trace: --train takes a pair, e.g. gradformer trace --train")
# A trained runs/toy-translation comes first: no first-use model is trained beside it (a copy-task
# model stands in for it here, trained in its place in a second).
gradformer_cli_test("a run in runs/toy-translation, for the trace that follows"
  "-DARGS=train|--task|copy|${tiny_own}|--steps|2|--quiet|--out|runs/toy-translation" -DWORKDIR=${GRADFORMER_CLI_FIRST_USE}/trained
  -DCLEAN=${GRADFORMER_CLI_FIRST_USE}/trained FIXTURE gradformer_cli_first_use_trained)
gradformer_cli_test("trace without --checkpoint traces runs/toy-translation's model when there is one"
  "-DARGS=trace|--train|4 5 6|4 5 6" -DWORKDIR=${GRADFORMER_CLI_FIRST_USE}/trained
  "-DSTDERR=^gradformer trace: tracing runs/toy-translation/model.safetensors \\(--checkpoint to trace another\\)\n$"
  "-DSTDOUT=tgt_out:  4 5 6 </s>" "-DNO_FILES=${GRADFORMER_CLI_FIRST_USE}/trained/runs/trace-model"
  REQUIRES gradformer_cli_first_use_trained)
