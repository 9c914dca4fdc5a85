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
# An include is resolved where the compiler finds it: beside the including file ("claims.h" in a
# chapter), else in a folder above it (tutorials/exercises is the exercises' include directory), the
# project root last ("tensor/tensor.h").
cmake_minimum_required(VERSION 3.20)
get_filename_component(root "${CMAKE_ARGV3}" ABSOLUTE)
# folder: the folders its files may include from (its own included)
set(libraries tensor autograd nn transformer/model transformer/data transformer/inspect transformer/train)
set(allowed_tensor "tensor")
set(allowed_autograd "tensor;autograd")
set(allowed_nn "tensor;autograd;nn")
set(allowed_transformer/model "tensor;autograd;nn;transformer/model")
set(allowed_transformer/data "tensor;transformer/data")
set(allowed_transformer/inspect "tensor;autograd;nn;transformer/model;transformer/data;transformer/inspect")
set(allowed_transformer/train "tensor;autograd;nn;transformer/model;transformer/data;transformer/inspect;transformer/train")
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

set(bad 0)
set(checked 0)
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
      rule_folder("${header_folder}" header_folder)
      if(NOT header_folder IN_LIST allowed_${folder})
        file(RELATIVE_PATH shown "${root}" "${source}")
        string(REPLACE ";" "/, " may "${allowed_${folder}}")
        message(NOTICE "${shown}: includes \"${header}\", but ${folder}/ may include only from ${may}/")
        math(EXPR bad "${bad} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "no source files found under ${root}: nothing was checked")
endif()
if(bad GREATER 0)
  message(FATAL_ERROR "${bad} include(s) against the layering")
endif()
message(STATUS "layering holds: ${checked} files include only from below or beside them")
