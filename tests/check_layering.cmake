# cmake -P check_layering.cmake <project root>
# Dependencies point one way: tensor <- autograd <- nn <- transformer/model, and
# tensor <- transformer/data; model and data <- transformer/inspect <- transformer/train <- transformer/cli.
# CMake's target links catch a call into a library a target does not link, but every target exports
# the project root as an include directory, so an upward #include of a header-only template (or an
# inline function) would compile. This script reads every #include "..." in the library folders,
# bench/ and tutorials/, and fails when one names a folder its own folder may not depend on.
#
# The programs beside the library: bench/ and tutorials/ (with its subfolders) may include from any
# of the seven library folders (tensor/ up to transformer/train/) and from themselves; neither may
# include from the other, from tests/, or from transformer/cli/ (the gradformer program's own code:
# a chapter runs the program, it does not build on its internals). A benchmark that needs a
# chapter's code, or a chapter a benchmark's, needs that code in the library.
#
# Also: the project's top level holds only its own folders; in transformer/cli/ only train's files
# include the training loop; and no two files of a folder include each other.
#
# An include is resolved where the compiler finds it: beside the including file ("claims.h" in a
# chapter), else in a folder above it (tutorials/exercises is the exercises' include directory), the
# project root last ("tensor/tensor.h").
cmake_minimum_required(VERSION 3.20)
get_filename_component(root "${CMAKE_ARGV3}" ABSOLUTE)
# folder: the folders its files may include from (its own included)
set(libraries tensor/support tensor/kernels tensor autograd nn transformer/model transformer/data transformer/inspect
              transformer/store transformer/evaluate transformer/train)
# the tensor's three rooms: support below kernels below the tensor a learner reads
set(tensor_rooms "tensor/support;tensor/kernels;tensor")
set(allowed_tensor/support "tensor/support")
set(allowed_tensor/kernels "tensor/support;tensor/kernels")
set(allowed_tensor "${tensor_rooms}")
set(allowed_autograd "${tensor_rooms};autograd")
set(allowed_nn "${tensor_rooms};autograd;nn")
set(allowed_transformer/model "${tensor_rooms};autograd;nn;transformer/model")
set(allowed_transformer/data "${tensor_rooms};transformer/data")
set(allowed_transformer/inspect "${tensor_rooms};autograd;nn;transformer/model;transformer/data;transformer/inspect")
# stored models (checkpoints, imports, averages) sit below training: every command that only reads a
# model links no training code
set(allowed_transformer/store "${tensor_rooms};autograd;nn;transformer/model;transformer/data;transformer/store")
# a model at work on text (translate, score, classify) and its measures, below training too
set(allowed_transformer/evaluate
    "${tensor_rooms};autograd;nn;transformer/model;transformer/data;transformer/inspect;transformer/evaluate")
set(allowed_transformer/train "${tensor_rooms};autograd;nn;transformer/model;transformer/data;transformer/inspect;\
transformer/store;transformer/evaluate;transformer/train")
set(allowed_transformer/cli "${libraries};transformer/cli")
set(allowed_bench "${libraries};bench")
set(allowed_tutorials "${libraries};tutorials")
set(folders ${libraries} transformer/cli bench tutorials)
set(recursive bench tutorials)  # checked with their subfolders, which count as the folder itself

# The folder of `path` (relative to the root) as the rules above name it: a subfolder of a
# recursive folder is that folder.
function(rule_folder path out)
  foreach(top IN LISTS recursive)
    if(path STREQUAL top OR path MATCHES "^${top}/")
      set(${out} "${top}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "${path}" PARENT_SCOPE)
endfunction()

# The command-line program: only train's own files (train_*.h, train_*.cpp) may include the training
# loop's headers; every other command uses a model and links no training code.
set(cli_training_files "^train_")

# The project's top level: these folders and nothing else (dot-folders, and the build and run
# folders .gitignore names, are not the project's).
set(top_level_folders autograd bench nn tensor tests transformer tutorials)
file(GLOB top_entries RELATIVE "${root}" "${root}/*")
set(bad 0)
foreach(entry IN LISTS top_entries)
  if(IS_DIRECTORY "${root}/${entry}" AND NOT entry MATCHES "^\\.|^build$|^build-|^runs$"
     AND NOT entry IN_LIST top_level_folders)
    string(REPLACE ";" ", " may "${top_level_folders}")
    message(NOTICE "${entry}/: a top-level folder that is not one of ${may}")
    math(EXPR bad "${bad} + 1")
  endif()
endforeach()

set(checked 0)
set(edges "")  # "from>to" for every include of one library or program file by another in its folder
foreach(folder IN LISTS folders)
  if(folder IN_LIST recursive)
    file(GLOB_RECURSE sources "${root}/${folder}/*.h" "${root}/${folder}/*.cpp")
  else()
    file(GLOB sources "${root}/${folder}/*.h" "${root}/${folder}/*.cpp")
  endif()
  foreach(source IN LISTS sources)
    math(EXPR checked "${checked} + 1")
    get_filename_component(source_dir "${source}" DIRECTORY)
    file(STRINGS "${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1" header "${line}")
      set(resolved "${header}")  # from the root, unless found on the way up
      set(dir "${source_dir}")
      while(NOT dir STREQUAL root)
        if(EXISTS "${dir}/${header}")
          get_filename_component(found "${dir}/${header}" ABSOLUTE)
          file(RELATIVE_PATH resolved "${root}" "${found}")
          break()
        endif()
        get_filename_component(dir "${dir}" DIRECTORY)
      endwhile()
      get_filename_component(header_folder "${resolved}" DIRECTORY)
      file(RELATIVE_PATH shown "${root}" "${source}")
      get_filename_component(source_folder "${shown}" DIRECTORY)
      if(header_folder STREQUAL source_folder)
        list(APPEND edges "${shown}>${resolved}")
      endif()
      rule_folder("${header_folder}" header_folder)
      get_filename_component(source_name "${source}" NAME)
      if(folder STREQUAL "transformer/cli" AND header_folder STREQUAL "transformer/train"
         AND NOT source_name MATCHES "${cli_training_files}")
        message(NOTICE "${shown}: includes \"${header}\", but only train's own files (train_*) in transformer/cli/ "
                       "may include from transformer/train/: a command that uses a model links no training code")
        math(EXPR bad "${bad} + 1")
      elseif(NOT header_folder IN_LIST allowed_${folder})
        file(RELATIVE_PATH shown "${root}" "${source}")
        string(REPLACE ";" "/, " may "${allowed_${folder}}")
        message(NOTICE "${shown}: includes \"${header}\", but ${folder}/ may include only from ${may}/")
        math(EXPR bad "${bad} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
# No circle between files: X.cpp includes Y.h and Y.cpp includes X.h (two implementations, each
# calling into the other), or X.h includes Y.h and Y.h includes X.h. An implementation that uses a
# file built on its own header (tensor.cpp includes map.h, map.h includes tensor.h) is no circle:
# map.h reads on top of tensor.h, and tensor.h on its own.
set(circle_edges "")
foreach(edge IN LISTS edges)
  string(REPLACE ">" ";" ends "${edge}")
  list(GET ends 0 from)
  list(GET ends 1 to)
  string(REGEX REPLACE "\\.(h|cpp)$" "" from_unit "${from}")
  string(REGEX REPLACE "\\.(h|cpp)$" "" to_unit "${to}")
  string(REGEX MATCH "\\.(h|cpp)$" kind "${from}")
  if(NOT from_unit STREQUAL to_unit)
    list(APPEND circle_edges "${from_unit}>${to_unit}${kind}")
  endif()
endforeach()
list(REMOVE_DUPLICATES circle_edges)
foreach(edge IN LISTS circle_edges)
  string(REGEX MATCH "^(.*)>(.*)(\\.(h|cpp))$" parts "${edge}")
  set(from "${CMAKE_MATCH_1}")
  set(to "${CMAKE_MATCH_2}")
  set(kind "${CMAKE_MATCH_3}")
  if("${to}>${from}${kind}" IN_LIST circle_edges AND from STRLESS to)
    message(NOTICE "${from}${kind} and ${to}${kind} include each other's headers: a circle between two files of one folder")
    math(EXPR bad "${bad} + 1")
  endif()
endforeach()

if(checked EQUAL 0)
  message(FATAL_ERROR "no source files found under ${root}: nothing was checked")
endif()
if(bad GREATER 0)
  message(FATAL_ERROR "${bad} include(s) or folder(s) against the layering")
endif()
message(STATUS "layering holds: ${checked} files include only from below or beside them")
