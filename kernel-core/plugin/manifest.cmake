# The default manifest, assembled at build time: manifest_head.yaml (the
# core's part: the comment for users, `mkccl-manifest: 1`, `plugins:`), then
# the manifest.yaml of every plugin built that has one, its entry
# (mkccl_add_plugin records it on the target mkccl_manifest, in the order
# plugins/CMakeLists.txt adds the plugins; cmake/manifest_assemble.cmake).
# Written next to the built library (lib/mkccl/manifest.yaml), installed
# there, and compiled into the core (the embedded default).
set(MKCCL_MANIFEST_HEAD ${CMAKE_CURRENT_SOURCE_DIR}/plugin/manifest_head.yaml)
set(MKCCL_MANIFEST_FILE ${MKCCL_PLUGIN_DIR}/manifest.yaml)
add_custom_target(mkccl_manifest ALL DEPENDS ${MKCCL_MANIFEST_FILE})
set(fragments "$<TARGET_PROPERTY:mkccl_manifest,MKCCL_MANIFEST_FRAGMENTS>")
add_custom_command(
  OUTPUT ${MKCCL_MANIFEST_FILE}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${MKCCL_PLUGIN_DIR}
  COMMAND ${CMAKE_COMMAND} -DHEAD=${MKCCL_MANIFEST_HEAD} "-DFRAGMENTS=$<JOIN:${fragments},|>"
          -DOUT=${MKCCL_MANIFEST_FILE} -P ${PROJECT_SOURCE_DIR}/cmake/manifest_assemble.cmake
  DEPENDS ${MKCCL_MANIFEST_HEAD} ${fragments} ${PROJECT_SOURCE_DIR}/cmake/manifest_assemble.cmake
  COMMENT "Assembling the default plugin manifest in ${MKCCL_PLUGIN_DIR}"
  VERBATIM)
add_custom_command(
  OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/plugin/manifest_embedded.c
  COMMAND ${CMAKE_COMMAND} -DIN=${MKCCL_MANIFEST_FILE} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/plugin/manifest_embedded.c
          -DSYMBOL=manifest_embedded_text -DSYMBOL_SIZE=manifest_embedded_size
          -P ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
  DEPENDS ${MKCCL_MANIFEST_FILE} ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
  COMMENT "Embedding the default plugin manifest")
add_dependencies(mkccl_core mkccl_manifest)
install(FILES ${MKCCL_MANIFEST_FILE} DESTINATION ${CMAKE_INSTALL_LIBDIR}/mkccl)
