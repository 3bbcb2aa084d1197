# isaforge_add_kernel_library(<target> CATALOGUE <engine.toml> [PREFIX <name>])
#
# An engine's kernels, declared in its catalogue (docs/engines.md), built the way libisaforge builds its own: at
# configure time isaforge's generator (ISAFORGE_ENGINEGEN, enginegen.py) probes every variant with this project's C
# compiler and writes the engine's header (<name>_dispatch.h) and dispatch code (isaforge_engine.inc, compiled
# through the generator's fixed engine_dispatch.c) into <binary dir>/<target>-isaforge/; then each library it
# names gets an OBJECT library compiled with that variant's flags only, and <target> is a static library holding
# all their objects (nothing to link whole, nothing for the linker to drop) with
#   PUBLIC   the generated directory (<name>_dispatch.h) and isaforge::isaforge
#   PRIVATE  ${ISAFORGE_BASELINE_C_FLAGS}, so the engine's own sources added to <target> (target_sources) are held
#            to the baseline whatever CMAKE_C_FLAGS says; the dispatch and reference objects get the same flags
# and the properties ISAFORGE_GENERATED_DIR, ISAFORGE_MANIFEST and PUBLIC_HEADER (the dispatch header, so that
# install(TARGETS <target> PUBLIC_HEADER) installs it). Editing the catalogue, or adding or removing a kernel file,
# reconfigures. A catalogue or compiler the generator refuses stops configure with its one-line message. .S kernels
# are compiled as ASM (the project enables it: project(<name> LANGUAGES C ASM)) with the same flags as the C ones.
#
# Include this file after isaforge-vars.cmake (find_package(isaforge CONFIG) does both).
include_guard(GLOBAL)

# Stops configure with one line. CMake re-wraps a message at 80 columns unless it starts with a blank.
function(_isaforge_fail text)
  message(FATAL_ERROR " ${text}")
endfunction()

function(isaforge_add_kernel_library target)
  cmake_parse_arguments(PARSE_ARGV 1 _isf "" "CATALOGUE;PREFIX" "")
  set(_who "isaforge_add_kernel_library(${target})")
  if(_isf_UNPARSED_ARGUMENTS)
    _isaforge_fail("${_who}: unexpected ${_isf_UNPARSED_ARGUMENTS}; it takes CATALOGUE <file> [PREFIX <name>]")
  endif()
  if(NOT _isf_CATALOGUE)
    _isaforge_fail("${_who}: no catalogue; give CATALOGUE <engine.toml>")
  endif()
  get_filename_component(_catalogue "${_isf_CATALOGUE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${_catalogue}")
    _isaforge_fail("${_who}: catalogue ${_catalogue} does not exist; give CATALOGUE <engine.toml>")
  endif()
  if(NOT TARGET isaforge::isaforge)
    _isaforge_fail("${_who}: no isaforge::isaforge target; call find_package(isaforge CONFIG REQUIRED) first")
  endif()
  if(NOT ISAFORGE_ENGINEGEN OR NOT EXISTS "${ISAFORGE_ENGINEGEN}")
    _isaforge_fail("${_who}: the generator '${ISAFORGE_ENGINEGEN}' does not exist; set ISAFORGE_ENGINEGEN (-D or \
environment) to isaforge's enginegen.py")
  endif()
  # The dispatch is the generator's fixed engine_dispatch.c, which includes the isaforge_engine.inc generated here.
  get_filename_component(_dispatch "${ISAFORGE_ENGINEGEN}" DIRECTORY)
  set(_dispatch "${_dispatch}/engine_dispatch.c")
  if(NOT EXISTS "${_dispatch}")
    _isaforge_fail("${_who}: no ${_dispatch} next to the generator; ISAFORGE_ENGINEGEN must name the enginegen.py of \
an isaforge install (or checkout) with its engine_dispatch.c")
  endif()
  # The generator reads TOML with the standard library's tomllib.
  find_package(Python3 3.11 COMPONENTS Interpreter REQUIRED)

  # The compiler command as CMake runs it, with the flags that choose the target: the generator asks it for its
  # arch (-dumpmachine) and compiles each variant's probe with it. Conan's clang profiles give --target through
  # CMAKE_C_FLAGS, toolchain files through CMAKE_C_COMPILER_TARGET.
  set(_cc "${CMAKE_C_COMPILER}")
  if(CMAKE_C_COMPILER_ARG1)
    separate_arguments(_arg1 UNIX_COMMAND "${CMAKE_C_COMPILER_ARG1}")
    list(APPEND _cc ${_arg1})
  endif()
  if(CMAKE_C_COMPILER_TARGET AND CMAKE_C_COMPILER_ID MATCHES "Clang")
    list(APPEND _cc "--target=${CMAKE_C_COMPILER_TARGET}")
  endif()
  if(CMAKE_SYSROOT)
    list(APPEND _cc "--sysroot=${CMAKE_SYSROOT}")
  endif()
  # The same target words for the .S kernels, which CMake compiles with CMAKE_ASM_FLAGS, not CMAKE_C_FLAGS.
  set(_asm_target "")
  if(CMAKE_C_COMPILER_TARGET AND CMAKE_C_COMPILER_ID MATCHES "Clang" AND NOT CMAKE_ASM_COMPILER_TARGET)
    list(APPEND _asm_target "--target=${CMAKE_C_COMPILER_TARGET}")
  endif()
  separate_arguments(_flags UNIX_COMMAND "${CMAKE_C_FLAGS}")
  set(_next_is_target FALSE)
  foreach(_flag IN LISTS _flags)
    if(_next_is_target OR _flag MATCHES "^(--target=|--sysroot=|--gcc-toolchain=)")
      list(APPEND _cc "${_flag}")
      list(APPEND _asm_target "${_flag}")
      set(_next_is_target FALSE)
    elseif(_flag STREQUAL "-target")
      list(APPEND _cc "${_flag}")
      list(APPEND _asm_target "${_flag}")
      set(_next_is_target TRUE)
    endif()
  endforeach()

  set(_outdir "${CMAKE_CURRENT_BINARY_DIR}/${target}-isaforge")
  set(_command "${Python3_EXECUTABLE}" "${ISAFORGE_ENGINEGEN}" "${_catalogue}" -o "${_outdir}")
  if(_isf_PREFIX)
    list(APPEND _command --prefix "${_isf_PREFIX}")
  endif()
  list(APPEND _command --cc ${_cc})
  execute_process(COMMAND ${_command} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  string(STRIP "${_err}" _err)
  if(NOT _rc EQUAL 0)
    if(_err STREQUAL "")
      set(_err "enginegen: ${_catalogue}: the generator failed (${_rc}) with no message ; run it by hand: ${_command}")
    endif()
    _isaforge_fail("${_err}")
  endif()
  if(NOT _err STREQUAL "")
    # e.g. "enginegen: variant i8mm dropped: <compiler> cannot compile i8mm code with …"
    string(REPLACE "\n" ";" _notes "${_err}")
    foreach(_note IN LISTS _notes)
      message(STATUS "${_note}")
    endforeach()
  endif()

  # stdout: one library per line, `libname|c_args|sources`; the references' (<name>_reference, at the baseline) last.
  string(STRIP "${_out}" _out)
  string(REPLACE "\n" ";" _lines "${_out}")
  set(_libs "")
  set(_depends "${_catalogue}" "${ISAFORGE_ENGINEGEN}")
  set(_name "")
  foreach(_line IN LISTS _lines)
    if(NOT _line MATCHES "^([^|]+)\\|([^|]*)\\|(.+)$")
      _isaforge_fail("${_who}: cannot read the generator's line '${_line}' (want libname|c_args|sources)")
    endif()
    set(_lib "${CMAKE_MATCH_1}")
    separate_arguments(_args UNIX_COMMAND "${CMAKE_MATCH_2}")
    separate_arguments(_srcs UNIX_COMMAND "${CMAKE_MATCH_3}")
    foreach(_src IN LISTS _srcs)
      if(_src MATCHES "\\.S$")
        # Preprocessed assembly as CMake's ASM language (as C, CMake >= 3.20 would compile it with -x c). The
        # language is the project's to enable: enable_language() cannot run inside a function.
        get_property(_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
        if(NOT "ASM" IN_LIST _languages)
          _isaforge_fail("${_who}: ${_src} is assembly and the ASM language is not enabled; add it to the \
project: project(${PROJECT_NAME} LANGUAGES C ASM)")
        endif()
        set_source_files_properties("${_src}" PROPERTIES LANGUAGE ASM)
      endif()
      # A kernel file added or removed changes its directory (and a new variant directory, the arch directory).
      get_filename_component(_dir "${_src}" DIRECTORY)
      if(NOT _dir STREQUAL _outdir)
        get_filename_component(_parent "${_dir}" DIRECTORY)
        list(APPEND _depends "${_dir}" "${_parent}")
      endif()
    endforeach()
    if(NOT _args MATCHES "-DISAFORGE_VARIANT=")
      # The references and the dispatch: at the baseline, like the engine's own code.
      string(REGEX REPLACE "_reference$" "" _name "${_lib}")
      list(APPEND _srcs "${_dispatch}")
      set(_args ${ISAFORGE_BASELINE_C_FLAGS} ${_args})
    endif()
    add_library(${_lib} OBJECT ${_srcs})
    target_compile_options(${_lib} PRIVATE ${_args} "$<$<COMPILE_LANGUAGE:ASM>:${_asm_target}>")
    target_include_directories(${_lib} PRIVATE "${_outdir}")
    target_link_libraries(${_lib} PRIVATE isaforge::isaforge)
    # isaforge check-isolation reads the flags every object was compiled with from compile_commands.json.
    set_target_properties(${_lib} PROPERTIES EXPORT_COMPILE_COMMANDS ON)
    list(APPEND _libs ${_lib})
  endforeach()
  if(_name STREQUAL "")
    _isaforge_fail("${_who}: the generator named no reference library (<name>_reference)")
  endif()

  add_library(${target} STATIC)
  foreach(_lib IN LISTS _libs)
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${_lib}>)
  endforeach()
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${_outdir}>")
  target_link_libraries(${target} PUBLIC isaforge::isaforge)
  target_compile_options(${target} PRIVATE ${ISAFORGE_BASELINE_C_FLAGS})
  set_target_properties(${target} PROPERTIES
    LINKER_LANGUAGE C
    EXPORT_COMPILE_COMMANDS ON
    PUBLIC_HEADER "${_outdir}/${_name}_dispatch.h"
    ISAFORGE_GENERATED_DIR "${_outdir}"
    ISAFORGE_MANIFEST "${_outdir}/isaforge-kernels-${_name}.json")
  message(STATUS "${_who}: ${_libs} (${_catalogue}, generator ${ISAFORGE_ENGINEGEN})")
  list(REMOVE_DUPLICATES _depends)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_depends})
endfunction()
