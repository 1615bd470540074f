# Precompiled headers, each built once per tree by a target of its own and
# reused (REUSE_FROM) by every target that compiles with the same options:
#   iowatch_precompiled       precompiled.h, for the tree's common options
#   iowatch_test_precompiled  precompiled_test.h (GoogleTest too), for the unit
#                             tests' (tests/unit: iowatch_test_code)
# A header precompiled with other options (-O0, -fPIC) or other definitions is
# invalid where it is used, and -Winvalid-pch with -Werror stops the build
# instead of silently parsing the headers again; targets that differ keep none.

# Every target defined in DIR and the folders below it.
function(iowatch_targets_below out dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(folders DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(folder IN LISTS folders)
    iowatch_targets_below(below ${folder})
    list(APPEND targets ${below})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Whether TARGET links fmt, directly or through the libraries it links: the
# headers were precompiled with fmt's definitions (FMT_SHARED).
function(iowatch_links_fmt out target)
  set(${out} FALSE PARENT_SCOPE)
  set(pending ${target})
  set(seen)
  list(LENGTH pending left)
  while(left GREATER 0)
    list(POP_FRONT pending current)
    list(LENGTH pending left)
    if(current IN_LIST seen OR NOT TARGET ${current})
      continue()
    endif()
    list(APPEND seen ${current})
    if(current STREQUAL "fmt::fmt")
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
    set(properties INTERFACE_LINK_LIBRARIES)
    get_target_property(imported ${current} IMPORTED)
    if(NOT imported)
      list(APPEND properties LINK_LIBRARIES)
    endif()
    foreach(property IN LISTS properties)
      get_target_property(links ${current} ${property})
      if(NOT links)
        continue()
      endif()
      foreach(link IN LISTS links)
        string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" link "${link}")
        list(APPEND pending ${link})
      endforeach()
      list(LENGTH pending left)
    endforeach()
  endwhile()
endfunction()

# The precompiling target among PRECOMPILING whose options TARGET compiles
# with, if TARGET compiles C++ files, without -fPIC, and links fmt; else "".
function(iowatch_precompiled_for out target precompiling)
  set(${out} "" PARENT_SCOPE)
  get_target_property(type ${target} TYPE)
  if(NOT type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$" OR target IN_LIST precompiling)
    return()
  endif()
  get_target_property(imported ${target} IMPORTED)
  get_target_property(pic ${target} POSITION_INDEPENDENT_CODE)
  get_target_property(sources ${target} SOURCES)
  list(FILTER sources INCLUDE REGEX "\\.cc$")
  if(imported OR pic OR NOT sources)
    return()
  endif()
  get_target_property(options ${target} COMPILE_OPTIONS)
  foreach(candidate IN LISTS precompiling)
    get_target_property(candidate_options ${candidate} COMPILE_OPTIONS)
    if("${options}" STREQUAL "${candidate_options}")
      iowatch_links_fmt(links_fmt ${target})
      if(links_fmt)
        set(${out} ${candidate} PARENT_SCOPE)
      endif()
      return()
    endif()
  endforeach()
endfunction()

set(iowatch_precompiling iowatch_precompiled)
add_library(iowatch_precompiled OBJECT ${CMAKE_CURRENT_LIST_DIR}/precompiled.cc)
target_link_libraries(iowatch_precompiled PRIVATE fmt::fmt)
target_precompile_headers(iowatch_precompiled PRIVATE ${CMAKE_CURRENT_LIST_DIR}/precompiled.h)
if(COMMAND iowatch_test_code)
  list(APPEND iowatch_precompiling iowatch_test_precompiled)
  add_library(iowatch_test_precompiled OBJECT ${CMAKE_CURRENT_LIST_DIR}/precompiled.cc)
  target_link_libraries(iowatch_test_precompiled PRIVATE fmt::fmt GTest::gtest)
  iowatch_test_code(iowatch_test_precompiled)
  target_precompile_headers(iowatch_test_precompiled PRIVATE
                            ${CMAKE_CURRENT_LIST_DIR}/precompiled_test.h)
endif()
# Built where a target reuses them (REUSE_FROM makes them its dependencies):
# not in a tree whose unit tests are not built.
set_target_properties(${iowatch_precompiling} PROPERTIES EXCLUDE_FROM_ALL ON)

iowatch_targets_below(iowatch_all_targets ${CMAKE_SOURCE_DIR})
foreach(target IN LISTS iowatch_all_targets)
  iowatch_precompiled_for(precompiled ${target} "${iowatch_precompiling}")
  if(precompiled)
    target_precompile_headers(${target} REUSE_FROM ${precompiled})
  endif()
endforeach()
# ccache caches the units that use a clang PCH only if it holds no timestamp
# (its manual's "Precompiled headers"; CMakeLists.txt sets the sloppiness).
# Added after the matching: it is no option of the units that use it.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  foreach(precompiling IN LISTS iowatch_precompiling)
    target_compile_options(${precompiling} PRIVATE -Xclang -fno-pch-timestamp)
  endforeach()
endif()
