# Plugins reach the core through ABIs alone: no include path of theirs, nor
# of a library they link (or that links in turn), may point into
# kernel-core/; code they share with the core lives in common/, below both.
function(mkccl_plugin_check_includes name)
  foreach(dir IN LISTS ARGN)
    if(dir STREQUAL "${PROJECT_SOURCE_DIR}/kernel-core" OR dir MATCHES "^${PROJECT_SOURCE_DIR}/kernel-core/")
      message(FATAL_ERROR "plugin ${name}: include path ${dir} points into kernel-core/")
    endif()
  endforeach()
endfunction()

function(mkccl_plugin_check_libs name)
  foreach(lib IN LISTS ARGN)
    if(TARGET ${lib})
      get_target_property(dirs ${lib} INTERFACE_INCLUDE_DIRECTORIES)
      if(dirs)
        mkccl_plugin_check_includes(${name} ${dirs})
      endif()
      get_target_property(deps ${lib} INTERFACE_LINK_LIBRARIES)
      if(deps)
        mkccl_plugin_check_libs(${name} ${deps})
      endif()
    endif()
  endforeach()
endfunction()

# mkccl_add_plugin(<name> SOURCES ... [LIBS ...] [TEST_ONLY])
#
# Builds plugins/<name> as lib/mkccl/libmkccl-<name>.so: a dlopen-able module
# with hidden symbols except what the plugin marks default (its ABI symbols).
# Plugins see the ABI headers, the public nccl.h and the libraries of
# common/ they link, never core internals. A shipped plugin whose folder has
# a manifest.yaml is listed in the default manifest with that entry. Each is
# listed on the target mkccl_all_plugins (property MKCCL_PLUGIN_FILES) for
# tests that look at every plugin built.
add_custom_target(mkccl_all_plugins)
function(mkccl_add_plugin name)
  cmake_parse_arguments(P "TEST_ONLY" "" "SOURCES;LIBS;INCLUDES" ${ARGN})
  set(target mkccl-${name})
  add_library(${target} MODULE ${P_SOURCES})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/abi
                                               ${CMAKE_CURRENT_SOURCE_DIR} ${P_INCLUDES})
  mkccl_plugin_check_includes(${name} ${P_INCLUDES})
  mkccl_plugin_check_libs(${name} ${P_LIBS})
  target_link_libraries(${target} PRIVATE Threads::Threads ${P_LIBS})
  target_compile_definitions(${target} PRIVATE _GNU_SOURCE)
  target_link_options(${target} PRIVATE -Wl,--no-undefined)
  set_target_properties(${target} PROPERTIES PREFIX "lib" OUTPUT_NAME mkccl-${name}
                                             LIBRARY_OUTPUT_DIRECTORY ${MKCCL_PLUGIN_DIR})
  add_dependencies(mkccl_all_plugins ${target})
  set_property(TARGET mkccl_all_plugins APPEND PROPERTY MKCCL_PLUGIN_FILES $<TARGET_FILE:${target}>)
  if(NOT P_TEST_ONLY)
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/mkccl)
    # The folder's manifest.yaml, if any, is the entry of the plugin named
    # as the folder in the default manifest (kernel-core/plugin/manifest.cmake).
    get_filename_component(folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
    if(name STREQUAL folder AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/manifest.yaml)
      set_property(TARGET mkccl_manifest APPEND PROPERTY MKCCL_MANIFEST_FRAGMENTS
                                                         ${CMAKE_CURRENT_SOURCE_DIR}/manifest.yaml)
    endif()
  elseif(MKCCL_INSTALL_TEST_PLUGINS)
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/mkccl-test)
  endif()
endfunction()
