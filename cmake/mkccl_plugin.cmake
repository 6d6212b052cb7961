# mkccl_add_plugin(<name> SOURCES ... [LIBS ...] [TEST_ONLY])
#
# Builds plugins/<name> as lib/mkccl/libmkccl-<name>.so: a dlopen-able module
# with hidden symbols except what the plugin marks default (its ABI symbols).
# Plugins see the ABI headers and the public nccl.h, never core internals.
# Each is listed on the target mkccl_all_plugins (property MKCCL_PLUGIN_FILES)
# for tests that look at every plugin built.
add_custom_target(mkccl_all_plugins)
function(mkccl_add_plugin name)
  cmake_parse_arguments(P "TEST_ONLY" "" "SOURCES;LIBS;INCLUDES" ${ARGN})
  set(target mkccl-${name})
  add_library(${target} MODULE ${P_SOURCES})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/abi
                                               ${CMAKE_CURRENT_SOURCE_DIR} ${P_INCLUDES})
  target_link_libraries(${target} PRIVATE Threads::Threads ${P_LIBS})
  target_compile_definitions(${target} PRIVATE _GNU_SOURCE)
  target_link_options(${target} PRIVATE -Wl,--no-undefined)
  set_target_properties(${target} PROPERTIES PREFIX "lib" OUTPUT_NAME mkccl-${name}
                                             LIBRARY_OUTPUT_DIRECTORY ${MKCCL_PLUGIN_DIR})
  add_dependencies(mkccl_all_plugins ${target})
  set_property(TARGET mkccl_all_plugins APPEND PROPERTY MKCCL_PLUGIN_FILES $<TARGET_FILE:${target}>)
  if(NOT P_TEST_ONLY)
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/mkccl)
  elseif(MKCCL_INSTALL_TEST_PLUGINS)
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/mkccl-test)
  endif()
endfunction()
