# The install: relocatable run paths, the plugin ABI headers, pkg-config
# files, a CMake package and a Debian package (CPack). Included by the top
# CMakeLists.txt before the subdirectories, which install their own targets;
# mkccl_install_package() at the end writes the package files.

# Installed programs find lib/ from bin/, the libraries find what sits
# beside them (a wheel bundles libyaml and hwloc there), wherever the prefix
# is moved to. The build tree keeps its absolute run paths.
file(RELATIVE_PATH MKCCL_BIN_TO_LIB ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
set(CMAKE_INSTALL_RPATH "$ORIGIN/${MKCCL_BIN_TO_LIB}")
set(MKCCL_LIB_INSTALL_RPATH "$ORIGIN")

option(MKCCL_INSTALL_TEST_PLUGINS "Install the test-only plugins too (into <libdir>/mkccl-test)" OFF)

# The plugin ABI headers, for plugins built against an installed mkccl:
# <prefix>/include/mkccl/abi, included as in the tree ("net/nccl_net.h").
add_library(mkccl_plugin_abi INTERFACE)
target_include_directories(mkccl_plugin_abi INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/abi> $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/mkccl/abi> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(mkccl_plugin_abi PROPERTIES EXPORT_NAME plugin-abi)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/abi/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mkccl/abi
        FILES_MATCHING PATTERN "*.h")
install(TARGETS mkccl_plugin_abi EXPORT mkcclTargets)

function(mkccl_install_package)
  include(CMakePackageConfigHelpers)
  set(cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/mkccl)
  install(EXPORT mkcclTargets NAMESPACE mkccl:: DESTINATION ${cmakedir})
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mkcclConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/package/mkcclConfig.cmake INSTALL_DESTINATION ${cmakedir})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/mkcclConfigVersion.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/package/mkcclConfig.cmake ${PROJECT_BINARY_DIR}/package/mkcclConfigVersion.cmake
          DESTINATION ${cmakedir})
  # pkg-config: prefix relative to the .pc file, so a moved prefix still works.
  file(RELATIVE_PATH MKCCL_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
  string(REGEX REPLACE "/$" "" MKCCL_PC_TO_PREFIX "${MKCCL_PC_TO_PREFIX}")
  foreach(pc mkccl mkccl-plugin nccl)
    configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/package/${pc}.pc @ONLY)
    install(FILES ${PROJECT_BINARY_DIR}/package/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  endforeach()

  # Debian package: `cpack -G DEB` in the build folder, installed under /usr.
  set(CPACK_PACKAGE_NAME mkccl)
  set(CPACK_PACKAGE_VENDOR mkccl)
  set(CPACK_PACKAGE_CONTACT "mkccl maintainers <mkccl@localhost>")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "NCCL-compatible collective communication library (libnccl.so.2), plugins and tools")
  set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_PACKAGE_SECTION libs)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), libyaml-0-2, libhwloc15")
  # Plugins whose library is missing are skipped at load, with a line saying so.
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libfabric1, libibverbs1")
  set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
  set(CPACK_GENERATOR DEB)
  include(CPack)
endfunction()
