# Issue "nothing lost": a run's folder and its results guarded, in every architecture. Included by
# tests/transformer/CMakeLists.txt (GRADFORMER_CLI_OWN, tiny_own, one_error_line come from there).
set(GRADFORMER_CLI_RUNS ${CMAKE_CURRENT_BINARY_DIR}/cli-runs)
set(busy "^gradformer train: error: train: [^\n]* is in use: another gradformer train is writing there")
function(gradformer_cli_twice name)
  add_test(NAME "gradformer program: ${name}"
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:gradformer> ${ARGN}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_twice.cmake)
endfunction()

foreach(arch "encoder-decoder|copy|3000" "decoder-only|toy-lm|2000" "encoder-only|mlm|3000")
  string(REPLACE "|" ";" parts "${arch}")
  list(GET parts 0 name)
  list(GET parts 1 task)
  list(GET parts 2 long)  # steps enough for a run of about a second: the other starts while it runs
  set(dir ${GRADFORMER_CLI_RUNS}/${name})
  set(tiny train|--arch|${name}|--task|${task}|${tiny_own}|--quiet)

  # One run per folder: of two started at once, one trains, the other stops before training.
  gradformer_cli_twice("train --arch ${name}: of two runs started on one --out, one trains and the other stops, status 1"
    "-DARGS=${tiny}|--steps|${long}|--out|${dir}/twice" -DCLEAN=${dir}/twice "-DBUSY=${busy}"
    "-DFILES=${dir}/twice/model.safetensors")
  # Nor two resumes of one run, nor a resume of a run still training (both take the folder's lock).
  gradformer_cli_test("train --arch ${name}: a run to resume" "-DARGS=${tiny}|--steps|2|--out|${dir}/resume"
    -DCLEAN=${dir}/resume "-DFILES=${dir}/resume/model.safetensors" FIXTURE gradformer_cli_runs_${name}_resume)
  gradformer_cli_twice("train --arch ${name}: of two resumes of one run started at once, one trains, the other stops"
    "-DARGS=train|--resume|${dir}/resume/model.safetensors|--steps|${long}|--quiet" "-DBUSY=${busy}"
    "-DFILES=${dir}/resume/model.safetensors")
  set_tests_properties("gradformer program: train --arch ${name}: of two resumes of one run started at once, one trains, the other stops"
    PROPERTIES FIXTURES_REQUIRED gradformer_cli_runs_${name}_resume)

  # --force replaces a run only with a checkpoint: a replacement that diverges first leaves it whole.
  gradformer_cli_test("train --arch ${name}: a run to replace" "-DARGS=${tiny}|--steps|2|--out|${dir}/force"
    -DCLEAN=${dir}/force FIXTURE gradformer_cli_runs_${name}_force)
  gradformer_cli_test("train --arch ${name}: --force with a run that diverges before its first checkpoint, status 1"
    "-DARGS=train|--arch|${name}|--task|${task}|--d-model|32|--heads|2|--layers|1|--lr|1e30|--clip|0|--force|--out|${dir}/force"
    -DEXIT=1 ${one_error_line} "-DSTDERR=diverged: .*No checkpoint written for it" "-DFILES=${dir}/force/model.safetensors"
    REQUIRES gradformer_cli_runs_${name}_force FIXTURE gradformer_cli_runs_${name}_forced)
  gradformer_cli_test("train --arch ${name}: the run --force failed to replace is still there and resumes"
    "-DARGS=train|--resume|${dir}/force/model.safetensors|--steps|3|--log-every|1"
    "-DSTDOUT=^training ${name} ${task}: [0-9]+ parameters \\(d_model 16, 1 layer, 2 heads\\).*\nstep 3/3 "
    REQUIRES gradformer_cli_runs_${name}_forced FIXTURE gradformer_cli_runs_${name}_resumed)
  # A resume writes next to its checkpoint, so it can be resumed again, from the same place.
  gradformer_cli_test("train --arch ${name}: a resumed run resumes again, in its own folder"
    "-DARGS=train|--resume|${dir}/force/model.safetensors|--steps|4|--log-every|1|--quiet" -DWORKDIR=${dir}/elsewhere
    "-DSTDOUT=^trained 1 steps in [^\n]*. saved ${dir}/force/model.safetensors\n" "-DNO_FILES=${dir}/elsewhere/runs"
    REQUIRES gradformer_cli_runs_${name}_resumed)

  # With clipping on too, a divergence names its step (the clipped norm once hid it).
  gradformer_cli_test("train --arch ${name}: a run diverging with clipping on stops naming the step, status 1"
    "-DARGS=${tiny}|--lr|1e30|--clip|1|--stop-after|20|--out|${dir}/diverge-clipped" -DCLEAN=${dir}/diverge-clipped
    -DEXIT=1 ${one_error_line} "-DNO_FILES=${dir}/diverge-clipped/model.safetensors"
    "-DSTDERR=^gradformer train: error: train: step [0-9]+ diverged: .*No checkpoint written for it")

  # A run's length is bounded before anything is read or built.
  gradformer_cli_test("train --arch ${name}: --steps 99999999999 is status 2 naming the bound" "-DARGS=${tiny}|--steps|99999999999|--out|${dir}/long"
    -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer train: --steps must be at most [0-9]+, got 99999999999\n$" "-DSTDOUT_ABSENT=.")

  # Seeds are from 0: -1 must not become 2^64 - 1.
  gradformer_cli_test("train --arch ${name}: --seed -1 is status 2" "-DARGS=${tiny}|--seed|-1|--out|${dir}/seed"
    -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer train: --seed must be at least 0, got -1\n$" "-DSTDOUT_ABSENT=.")
endforeach()

# Flags bounded by what the model can use, refused alike by every command (status 2, one line).
gradformer_cli_test("translate --beam beyond the target vocabulary is status 2"
  "-DARGS=translate|--checkpoint|${GRADFORMER_CLI_DIR}/model.safetensors|--beam|99999999999" -DSTDIN=${CMAKE_CURRENT_LIST_FILE}
  -DEXIT=2 ${one_error_line} "-DSTDOUT_ABSENT=."
  "-DSTDERR=^gradformer translate: --beam must be from 1 to [0-9]+ \\(the target vocabulary's size\\), got 99999999999\n$"
  REQUIRES gradformer_cli_model)
gradformer_cli_test("trace --top beyond the target vocabulary is status 2"
  "-DARGS=trace|--checkpoint|${GRADFORMER_CLI_DIR}/model.safetensors|--top|100000|1 2 3" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer trace: --top must be from 1 to [0-9]+ \\(the target vocabulary's size\\), got 100000\n$"
  REQUIRES gradformer_cli_model)
gradformer_cli_test("train --beam beyond the target vocabulary is status 2 before training"
  "-DARGS=train|--task|toy-translation|--beam|100000|--out|${GRADFORMER_CLI_RUNS}/beam" -DEXIT=2 ${one_error_line} "-DSTDOUT_ABSENT=."
  "-DSTDERR=^gradformer train: --beam must be from 1 to [0-9]+ \\(the target vocabulary's size\\), got 100000\n$")
# The environment, checked by every command before any work, even one that starts no threads.
foreach(command "params" "gradcheck|--filter|relu" "translate|--checkpoint|${GRADFORMER_CLI_DIR}/model.safetensors")
  string(REPLACE "|" ";" words "${command}")
  list(GET words 0 first)
  gradformer_cli_test("GRADFORMER_THREADS=abc is refused by ${first}, status 1" "-DARGS=${command}" -DENV=GRADFORMER_THREADS=abc
    -DSTDIN=${CMAKE_CURRENT_LIST_FILE} -DEXIT=1 ${one_error_line} "-DSTDOUT_ABSENT=."
    "-DSTDERR=^gradformer ${first}: error: GRADFORMER_THREADS: expected a thread count from 0 \\(all cores\\) to [0-9]+, got 'abc'\n$")
endforeach()
# A closed standard output is a failure to write it, not a file the program opens next.
find_program(GRADFORMER_SH sh)
if(UNIX AND GRADFORMER_SH)
  gradformer_cli_test("params with standard output closed says it cannot write it, status 1"
    -DPROGRAM=${GRADFORMER_SH} "-DARGS=-c|exec \"$0\" \"$@\" >&-|$<TARGET_FILE:gradformer>|params"
    -DEXIT=1 ${one_error_line} "-DSTDERR=^gradformer params: error: writing standard output failed: Bad file descriptor\n$")
endif()

# Resuming from the newest kept checkpoint (a hard link to model.safetensors) continues the run in
# its folder: its history (the other kept checkpoints, the metrics it appends to) stays.
set(kept ${GRADFORMER_CLI_RUNS}/kept)
gradformer_cli_test("a run keeping checkpoints, with its metrics"
  "-DARGS=train|--task|copy|${tiny_own}|--quiet|--steps|6|--save-every|2|--keep-last|3|--metrics|${kept}/m.jsonl|--out|${kept}"
  -DCLEAN=${kept} "-DFILES=${kept}/model-step-2.safetensors|${kept}/model-step-6.safetensors|${kept}/m.jsonl"
  FIXTURE gradformer_cli_runs_kept)
gradformer_cli_test("resuming from the newest kept checkpoint keeps the run's history"
  "-DARGS=train|--resume|${kept}/model-step-6.safetensors|--steps|8|--quiet|--metrics|${kept}/m.jsonl"
  "-DFILES=${kept}/model-step-4.safetensors|${kept}/model-step-6.safetensors|${kept}/model-step-8.safetensors|${kept}/m.jsonl"
  REQUIRES gradformer_cli_runs_kept FIXTURE gradformer_cli_runs_kept_resumed)
# The metrics file is written from the first step: a replacing run may not write the old run's.
gradformer_cli_test("--force with the replaced run's metrics file is status 2, and the file stays"
  "-DARGS=train|--task|copy|${tiny_own}|--quiet|--steps|2|--force|--metrics|${kept}/m.jsonl|--out|${kept}"
  -DEXIT=2 ${one_error_line} "-DFILES=${kept}/m.jsonl|${kept}/model-step-8.safetensors"
  "-DSTDERR=^gradformer train: --metrics is [^\n]*kept/m.jsonl, the metrics file of the run this one replaces, which must stay until this run has a checkpoint. give another file\n$"
  REQUIRES gradformer_cli_runs_kept_resumed)
# A new run replaces a metrics file only with --force (a resumed run appends to it); the profile is
# written whole and renamed into place, so never over a device or through a link.
gradformer_cli_test("a new run's --metrics that exists is status 2 without --force, and the file stays"
  "-DARGS=train|--task|copy|${tiny_own}|--quiet|--steps|2|--metrics|${kept}/m.jsonl|--out|${GRADFORMER_CLI_RUNS}/fresh-metrics"
  -DEXIT=2 ${one_error_line} "-DFILES=${kept}/m.jsonl"
  "-DSTDERR=^gradformer train: --metrics [^\n]*kept/m.jsonl exists. give --force to replace it \\(a resumed run appends to its metrics\\)\n$"
  REQUIRES gradformer_cli_runs_kept_resumed)
gradformer_cli_test("train --profile /dev/null is status 2 before any step: a device is never replaced"
  "-DARGS=train|--task|copy|${tiny_own}|--quiet|--steps|2|--profile|/dev/null|--out|${GRADFORMER_CLI_RUNS}/profile-null"
  -DEXIT=2 ${one_error_line} "-DNO_FILES=${GRADFORMER_CLI_RUNS}/profile-null/model.safetensors"
  "-DSTDERR=^gradformer train: --profile /dev/null: a device, not a regular file. not replacing it\n$")
# Answers nobody can read stop the command at once, not after the whole input.
gradformer_cli_test("translate to a full disk stops at the first line, status 1"
  "-DARGS=translate|--checkpoint|${GRADFORMER_CLI_DIR}/model.safetensors" -DSTDIN=${CMAKE_CURRENT_LIST_FILE}
  -DSTDOUT_FILE=/dev/full -DEXIT=1 ${one_error_line}
  "-DSTDERR=^gradformer translate: error: writing standard output failed at line 1: No space left on device\n$"
  REQUIRES gradformer_cli_model)
# The environment does not stand in the way of --help or of naming an unknown command.
gradformer_cli_test("GRADFORMER_THREADS=abc leaves --help alone" "-DARGS=params|--help" -DENV=GRADFORMER_THREADS=abc
  "-DSTDOUT=^usage: gradformer params" "-DSTDERR_ABSENT=.")
gradformer_cli_test("GRADFORMER_THREADS=abc: an unknown command is still status 2" "-DARGS=trian" -DENV=GRADFORMER_THREADS=abc
  -DEXIT=2 ${one_error_line} "-DSTDERR=^gradformer: unknown command 'trian'")
gradformer_cli_test("translate --beam 0 is status 2 before the checkpoint is read"
  "-DARGS=translate|--checkpoint|no-such-file.safetensors|--beam|0" -DEXIT=2 ${one_error_line}
  "-DSTDERR=^gradformer translate: --beam must be at least 1, got 0\n$")
