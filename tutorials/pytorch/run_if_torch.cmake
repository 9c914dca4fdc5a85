# cmake -DSCRIPT=script.py -DARGS="a|b|c" -DPYTHONS="python|python" -P run_if_torch.cmake
# Runs a PyTorch script (chapter 14's gradformer_torch.py) with the first of PYTHONS that can
# `import torch`, and fails if the script does. With none (PyTorch is not a dependency of gradformer,
# and CI has none) it prints "SKIPPED: ..." and succeeds; the test's SKIP_REGULAR_EXPRESSION then
# reports it as skipped, not passed. ARGS and PYTHONS separate items with '|'.
string(REPLACE "|" ";" arguments "${ARGS}")
string(REPLACE "|" ";" pythons "${PYTHONS}")
foreach(python IN LISTS pythons)
  if(NOT python OR NOT EXISTS "${python}")
    continue()
  endif()
  execute_process(COMMAND "${python}" -c "import torch" RESULT_VARIABLE status OUTPUT_QUIET ERROR_QUIET)
  if(status EQUAL 0)
    execute_process(COMMAND "${python}" "${SCRIPT}" ${arguments} RESULT_VARIABLE status)
    if(NOT status EQUAL 0)
      message(FATAL_ERROR "${python} ${SCRIPT} failed (status ${status})")
    endif()
    return()
  endif()
endforeach()
message("SKIPPED: no python3 that can import torch (tried: ${pythons}); install PyTorch to run ${SCRIPT}")
