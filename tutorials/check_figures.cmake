# cmake [-DPROGRAM=<chapter program>] -DDIR=<run dir> -DFIGURES=<a.svg,b.svg> -DSOURCE=<tutorials/figures>
#       [-DARGS=<the program's arguments, e.g. --quick>] [-DVARIES=<b.svg,...>] [-DUPDATE=ON] -P check_figures.cmake
# A chapter's figures are drawn by its program, like its text blocks are printed by it: this runs
# the program in DIR, where it writes its figures (into DIR/runs: claims.h's output_path), and checks
# each against the committed copy in SOURCE, byte for byte. With UPDATE it copies the fresh figures over the committed ones instead.
# Without PROGRAM it checks the figures a run that just happened left in DIR.
# The figures named in VARIES draw measurements (a roofline): they are compared with every number
# in them masked, as a varies text block is, so the elements, their order and every word must be
# the same, and the coordinates and measured values may differ.
if(PROGRAM)
  execute_process(COMMAND ${PROGRAM} ${ARGS} WORKING_DIRECTORY ${DIR} RESULT_VARIABLE code OUTPUT_QUIET)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} failed (${code})")
  endif()
endif()
string(REPLACE "," ";" FIGURES "${FIGURES}")
string(REPLACE "," ";" VARIES "${VARIES}")
set(number "-?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?")
foreach(figure IN LISTS FIGURES)
  if(UPDATE)
    file(COPY_FILE ${DIR}/runs/${figure} ${SOURCE}/${figure})
    message(STATUS "updated ${SOURCE}/${figure}")
    continue()
  endif()
  list(FIND VARIES ${figure} varies_at)  # (IN_LIST needs a policy a -P script does not set)
  if(NOT varies_at EQUAL -1)
    file(READ ${DIR}/runs/${figure} drawn)
    file(READ ${SOURCE}/${figure} committed)
    string(REGEX REPLACE "${number}" "#" drawn "${drawn}")
    string(REGEX REPLACE "${number}" "#" committed "${committed}")
    if(NOT drawn STREQUAL committed)
      message(FATAL_ERROR "${SOURCE}/${figure} differs from what the program draws now (${DIR}/runs/${figure}) in more "
                          "than its numbers; if the change is meant, update it: cmake --build build --target "
                          "tutorial-blocks-varies-<chapter>")
    endif()
    continue()
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${DIR}/runs/${figure} ${SOURCE}/${figure} RESULT_VARIABLE differ)
  if(NOT differ EQUAL 0)
    message(FATAL_ERROR "${SOURCE}/${figure} is not what the program draws now (${DIR}/runs/${figure}); "
                        "if the change is meant, update it: cmake --build build --target tutorial-blocks")
  endif()
endforeach()
message(STATUS "every figure is what the program draws: ${FIGURES}")
