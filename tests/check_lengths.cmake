# cmake -DROOT=<project root> -P check_lengths.cmake
# Files short, functions shorter: fails on a function over 60 lines or a file over 500 lines in the
# library folders, bench/ and tutorials/ (the chapters' programs, check_listings, the exercises),
# unless an allow list below names it with a reason; and fails on an entry of those lists that is
# no longer over its limit (or no longer exists), so the lists cannot go stale. The chapters'
# programs are checked too: a chapter's main may print its sections in the order the chapter reads
# them, which is a reason for an entry, but a helper that grew long is not.
#
# How a function is found, without a C++ parser: the code is clang-formatted, so a function defined
# at namespace scope starts at column 0 (its `template <...>` line included) and its body ends at the
# next `}` at column 0. A column-0 statement whose last line ends in `{`, and that is not a
# namespace, struct, class, enum, union or an initializer (`... = {`), is taken for a function; its
# length counts every line from its first to its closing `}`. Member functions defined inside a
# class body are indented and not measured (the class counts toward its file), nor are lambdas; a
# raw string literal with a line starting with `}` would end a body early. A function is named by its
# file and the word before its first `(`: "autograd/engine.cpp: Engine::run" (overloads share a name).
#
# -DMAX_FILE_LINES=N replaces the file limit (the suite's check of this script on a planted tree,
# tests/lengths/planted, so that the tree need not hold a 500-line file).
cmake_minimum_required(VERSION 3.20)
if(NOT ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<project root> [-DMAX_FILE_LINES=N] -P check_lengths.cmake")
endif()
get_filename_component(root "${ROOT}" ABSOLUTE)

set(max_function_lines 60)
set(max_file_lines 500)
if(MAX_FILE_LINES)
  set(max_file_lines ${MAX_FILE_LINES})
endif()
set(folders tensor/support tensor/kernels tensor autograd nn transformer/model transformer/data transformer/inspect
            transformer/store transformer/evaluate transformer/train transformer/cli)
# "<folder>|<most lines its .h and .cpp files hold together>|<why>": a room that must stay one idea.
set(folder_budgets
  "transformer/train|3250|the training loop and its tasks alone: stored models are store/'s, measures evaluate/'s"
)
set(recursive bench tutorials)  # with their subfolders
# Folders left out of the check (none: every library folder is checked).
set(not_yet_checked "")

# "<file>: <function>|<why it may stay longer>", one line each.
set(allowed_functions
  "autograd/engine.cpp: Engine::run|the backward pass as one loop over the sorted graph: run a node, hand out its gradients, free it"
  "autograd/fused_cross_entropy.cpp: cross_entropy|one fused op: checks, the forward pass and the backward function that captures its softmax"
  "autograd/fused_layer_norm.cpp: layer_norm|one fused op: checks, the forward pass and the backward function that captures its statistics"
  "autograd/gradcheck.cpp: check_leaves|the analytic gradients and the central differences that judge them, element by element, in one place"
  "transformer/cli/import_command.cpp: import_command|its flags, each checked against what the tensors' shapes say, in the order --help lists them"
  "transformer/data/toy_lexicon.cpp: build|a table of words, one entry a line"
  "transformer/inspect/gradcheck_suite.cpp: gradient_checks|the table of every op's and layer's check, one entry after the next"
  "transformer/inspect/svg.cpp: heatmap_svg|one picture drawn top to bottom: title, labels, cells, colour bar"
  "transformer/inspect/trace.cpp: trace_sentence|the figure's stages in the order the sentence passes them, each recorded as it happens"
  "transformer/inspect/trace.cpp: trace_text|the trace's stages printed in the order they were recorded"
  "transformer/inspect/trace_html.cpp: trace_html|one page written top to bottom, a section per stage of the trace"
  "transformer/model/decoding.cpp: beam_search|the beam's loop in one place: expand every hypothesis, score with the length penalty, keep the best"
  "tutorials/00-map.cpp: main|a chapter's program: prints the chapter's sections in the order the chapter reads them"
  "tutorials/02-matmul.cpp: main|a chapter's program: the machine, the ladder and one attention head, in the chapter's order"
  "tutorials/07-positional-encoding.cpp: longer_than_trained|one experiment of the chapter: train both kinds of positions, then print their table"
  "tutorials/11-training-step.cpp: copy_task|one experiment of the chapter: the copy-task run, step by step as the chapter tells it"
  "tutorials/check_listings.cpp: main|the checker's one pass: arguments, the chapter's blocks, the runs, each block checked or rewritten"
)
# "<file>|<why it may stay longer>", one line each.
set(allowed_files
)

# Every name a list entry gives, and its reason.
function(split_entries list names_out)
  set(names "")
  foreach(entry IN LISTS ${list})
    string(FIND "${entry}" "|" bar)
    if(bar LESS 1)
      message(FATAL_ERROR "${list}: \"${entry}\" is not \"<name>|<reason>\"")
    endif()
    string(SUBSTRING "${entry}" 0 ${bar} name)
    list(APPEND names "${name}")
  endforeach()
  set(${names_out} "${names}" PARENT_SCOPE)
endfunction()
split_entries(allowed_functions allowed_function_names)
split_entries(allowed_files allowed_file_names)

set(sources "")
foreach(folder IN LISTS folders recursive)
  if(folder IN_LIST not_yet_checked)
    continue()
  elseif(folder IN_LIST recursive)
    file(GLOB_RECURSE found "${root}/${folder}/*.h" "${root}/${folder}/*.cpp")
  else()
    file(GLOB found "${root}/${folder}/*.h" "${root}/${folder}/*.cpp")
  endif()
  list(APPEND sources ${found})
endforeach()
list(SORT sources)

set(bad 0)
set(long_functions "")  # every function over the limit, allowed or not, to find stale entries
set(long_files "")
set(functions 0)
foreach(source IN LISTS sources)
  file(RELATIVE_PATH shown "${root}" "${source}")
  file(READ "${source}" text)
  # One list element per line: first hide what CMake's lists would take as separators or brackets.
  string(REPLACE "\\" "<bs>" text "${text}")
  string(REPLACE ";" "<semi>" text "${text}")
  string(REPLACE "[" "<lb>" text "${text}")
  string(REPLACE "]" "<rb>" text "${text}")
  string(REGEX REPLACE "\n$" "" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  list(LENGTH lines count)
  if(count GREATER max_file_lines)
    list(APPEND long_files "${shown}")
    if(NOT shown IN_LIST allowed_file_names)
      message(NOTICE "${shown}: ${count} lines, over ${max_file_lines}: split it, or give it an entry in allowed_files with a reason")
      math(EXPR bad "${bad} + 1")
    endif()
  endif()

  # outside: between definitions; statement: a column-0 statement read so far; body: inside a
  # function's body; skip: inside a column-0 block that is not a function (struct, initializer).
  set(state outside)
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    string(REGEX REPLACE "[ \t]*//.*$" "" code "${line}")  # a trailing comment
    if(state STREQUAL "outside")
      # a column-0 line that starts a declaration (a name, or an attribute: [[nodiscard]])
      if(code MATCHES "^([A-Za-z_]|<lb><lb>)" AND NOT code MATCHES "^(namespace|using|typedef|extern|friend)[ \t]")
        set(state statement)
        set(start ${number})
        set(signature "")
      endif()
    endif()
    if(state STREQUAL "statement")
      string(APPEND signature " ${code}")
      if(code MATCHES "<semi>$|}$" OR code STREQUAL "")
        set(state outside)  # a declaration, or a definition on one line
      elseif(code MATCHES "{$")
        if(signature MATCHES "^ *(template *<.*> *)?(struct|class|enum|union)[ \t]" OR code MATCHES "= *{$")
          set(state skip)
        else()
          set(state body)
        endif()
      endif()
    elseif(state STREQUAL "body" OR state STREQUAL "skip")
      if(line MATCHES "^}")
        if(state STREQUAL "body")
          math(EXPR length "${number} - ${start} + 1")
          math(EXPR functions "${functions} + 1")
          # The function's name: the word (with any Class:: and operator) before the first '('.
          string(REGEX REPLACE "\\(.*" "" name "${signature}")
          string(REGEX REPLACE ".*[ *&>]" "" name "${name}")
          if(length GREATER max_function_lines)
            set(key "${shown}: ${name}")
            list(APPEND long_functions "${key}")
            if(NOT key IN_LIST allowed_function_names)
              message(NOTICE "${shown}:${start}: ${name} is ${length} lines, over ${max_function_lines}: split it, or give \"${key}\" an entry in allowed_functions with a reason")
              math(EXPR bad "${bad} + 1")
            endif()
          endif()
        endif()
        set(state outside)
      endif()
    endif()
  endforeach()
endforeach()

foreach(budget IN LISTS folder_budgets)
  string(REPLACE "|" ";" parts "${budget}")
  list(GET parts 0 folder)
  list(GET parts 1 most)
  set(total 0)
  file(GLOB found "${root}/${folder}/*.h" "${root}/${folder}/*.cpp")
  foreach(source IN LISTS found)
    file(READ "${source}" text)
    string(REGEX MATCHALL "\n" newlines "${text}")
    list(LENGTH newlines count)
    math(EXPR total "${total} + ${count}")
  endforeach()
  if(total GREATER most)
    message(NOTICE "${folder}/: ${total} lines, over its budget of ${most}: move what is not its one idea to the room it belongs to")
    math(EXPR bad "${bad} + 1")
  endif()
endforeach()

foreach(name IN LISTS allowed_function_names)
  if(NOT name IN_LIST long_functions)
    message(NOTICE "allowed_functions names \"${name}\", which is not over ${max_function_lines} lines (or not found): remove the entry")
    math(EXPR bad "${bad} + 1")
  endif()
endforeach()
foreach(name IN LISTS allowed_file_names)
  if(NOT name IN_LIST long_files)
    message(NOTICE "allowed_files names \"${name}\", which is not over ${max_file_lines} lines (or not found): remove the entry")
    math(EXPR bad "${bad} + 1")
  endif()
endforeach()

list(LENGTH sources files)
if(functions EQUAL 0)
  message(FATAL_ERROR "no functions found under ${root}: nothing was checked")
endif()
if(bad GREATER 0)
  message(FATAL_ERROR "${bad} length problem(s)")
endif()
message(STATUS "lengths hold: ${files} files of at most ${max_file_lines} lines, ${functions} functions of at most ${max_function_lines} (the allow lists' entries excepted)")
