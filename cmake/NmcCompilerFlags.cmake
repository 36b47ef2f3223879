# Warning, sanitizer and fuzzer flags shared by every nmc target (apply with nmc_target_defaults()).

add_library(nmc_warnings INTERFACE)
target_compile_options(nmc_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${NMC_WERROR}>>:-Werror>)

if(NMC_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${NMC_SANITIZE}>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=${NMC_SANITIZE})
endif()

# Every nmc target: warnings, and includes relative to the repository root ("core/status.h").
function(nmc_target_defaults target)
  target_link_libraries(${target} PRIVATE nmc_warnings)
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>)
endfunction()
