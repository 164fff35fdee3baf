# install.cmake - what `cmake --install` puts under the prefix, and the
# Debian package (cpack -G DEB). Everything is found from the prefix alone:
#   bin/onnx2mlir                      the CLI
#   <libdir>/onnx2mlir/*.so            its plugins (found relative to the CLI)
#   <libdir>/libonnx2mlir.so.0.1.0     the library (soname libonnx2mlir.so.0)
#   <libdir>/libonnx2mlir.a            the same, static (link MLIR yourself)
#   <libdir>/libonnx2mlir_rt.so.0.1.0  the runtime `compile`d libraries call
#   <libdir>/libonnx2mlir_rt.a         (soname libonnx2mlir_rt.so.0; no MLIR)
#   include/onnx2mlir.h                the C API
#   <libdir>/cmake/onnx2mlir/          find_package(onnx2mlir): onnx2mlir::onnx2mlir
#                                      (shared), onnx2mlir::onnx2mlir_static
#   <libdir>/pkgconfig/onnx2mlir.pc    pkg-config, relocatable (${pcfiledir})
#   lib/python3/dist-packages/onnx2mlir  the Python module (O2M_PYTHON_DIR)
include(CMakePackageConfigHelpers)

set(O2M_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/onnx2mlir")

install(TARGETS onnx2mlir-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES include/onnx2mlir.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

if(O2M_WITH_MLIR)
  install(TARGETS onnx2mlir-mlir onnx2mlir-forms
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/onnx2mlir)
  install(TARGETS onnx2mlir_shared onnx2mlir EXPORT onnx2mlirTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(TARGETS onnx2mlir_rt onnx2mlir_rt_static
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT onnx2mlirTargets NAMESPACE onnx2mlir:: DESTINATION ${O2M_CMAKE_DIR})
  configure_package_config_file(cmake/onnx2mlirConfig.cmake.in
      "${CMAKE_CURRENT_BINARY_DIR}/onnx2mlirConfig.cmake" INSTALL_DESTINATION ${O2M_CMAKE_DIR})
  write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/onnx2mlirConfigVersion.cmake"
      COMPATIBILITY SameMinorVersion)
  install(FILES "${CMAKE_CURRENT_BINARY_DIR}/onnx2mlirConfig.cmake"
                "${CMAKE_CURRENT_BINARY_DIR}/onnx2mlirConfigVersion.cmake"
          DESTINATION ${O2M_CMAKE_DIR})

  # pkg-config: the prefix from the .pc file's own place
  file(RELATIVE_PATH O2M_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REPLACE ";" " " O2M_PC_STATIC_LIBS "${O2M_MLIR_CAPI_LIBS}")
  set(O2M_PC_STATIC_LIBS "-Wl,--start-group ${O2M_PC_STATIC_LIBS} -Wl,--end-group ${MLIR_LIB}/libMLIR.so ${MLIR_LIB}/libLLVM.so.22.1 -lstdc++ -lm")
  configure_file(cmake/onnx2mlir.pc.in "${CMAKE_CURRENT_BINARY_DIR}/onnx2mlir.pc" @ONLY)
  install(FILES "${CMAKE_CURRENT_BINARY_DIR}/onnx2mlir.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

  # the Python module finds the library relative to its own folder
  file(RELATIVE_PATH O2M_PY_TO_LIBDIR "/prefix/${O2M_PYTHON_DIR}/onnx2mlir" "/prefix/${CMAKE_INSTALL_LIBDIR}")
  set(O2M_PY_LIBRARY "libonnx2mlir.so.${PROJECT_VERSION_MAJOR}")
  configure_file(python/onnx2mlir/_config.py.in "${CMAKE_CURRENT_BINARY_DIR}/python/_config.py" @ONLY)
  install(FILES python/onnx2mlir/__init__.py python/onnx2mlir/_capi.py
                python/onnx2mlir/_common.py python/onnx2mlir/_session.py
                "${CMAKE_CURRENT_BINARY_DIR}/python/_config.py"
          DESTINATION ${O2M_PYTHON_DIR}/onnx2mlir)
endif()

# ---- the Debian package: cpack -G DEB in the build folder -------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME onnx2mlir)
set(CPACK_PACKAGE_VENDOR "onnx2mlir")
set(CPACK_PACKAGE_CONTACT "onnx2mlir developers <onnx2mlir@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "ONNX to MLIR importer, compiler and runner (torch, onnx, Linalg, TOSA, StableHLO)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# the Debian LLVM/MLIR 22 runtime the CLI, its plugins and the library load
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libmlir-22 (>= 1:22.1), libllvm22 (>= 1:22.1), libc6, libstdc++6")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-numpy, libopenblas0-serial | libopenblas0")
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON) # shlibs file and the ldconfig trigger
include(CPack)
