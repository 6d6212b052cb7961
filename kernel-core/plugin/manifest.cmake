# The default manifest: compiled into the core (the embedded default), copied
# next to the built library (lib/mkccl/manifest.yaml) and installed there.
set(MKCCL_MANIFEST_SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/plugin/manifest.yaml)
add_custom_command(
  OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/plugin/manifest_embedded.c
  COMMAND ${CMAKE_COMMAND} -DIN=${MKCCL_MANIFEST_SOURCE} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/plugin/manifest_embedded.c
          -DSYMBOL=manifest_embedded_text -DSYMBOL_SIZE=manifest_embedded_size
          -P ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
  DEPENDS ${MKCCL_MANIFEST_SOURCE} ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
  COMMENT "Embedding the default plugin manifest")
add_custom_command(
  OUTPUT ${MKCCL_PLUGIN_DIR}/manifest.yaml
  COMMAND ${CMAKE_COMMAND} -E make_directory ${MKCCL_PLUGIN_DIR}
  COMMAND ${CMAKE_COMMAND} -E copy_if_different ${MKCCL_MANIFEST_SOURCE} ${MKCCL_PLUGIN_DIR}/manifest.yaml
  DEPENDS ${MKCCL_MANIFEST_SOURCE}
  COMMENT "Copying the default plugin manifest to ${MKCCL_PLUGIN_DIR}")
add_custom_target(mkccl_manifest ALL DEPENDS ${MKCCL_PLUGIN_DIR}/manifest.yaml)
add_dependencies(mkccl_core mkccl_manifest)
install(FILES ${MKCCL_MANIFEST_SOURCE} DESTINATION ${CMAKE_INSTALL_LIBDIR}/mkccl)
