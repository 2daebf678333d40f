# Third-party packages, all from Debian bookworm (see scripts/install-deps.sh).
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(nlohmann_json 3.11 REQUIRED)
find_package(CLI11 REQUIRED)

if(PHASESCALE_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
endif()
if(PHASESCALE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

# cpprestsdk, for the operator's Kubernetes and Prometheus clients. Two traps, handled once here:
# - its headers define a macro `U` that breaks Eigen, so every user gets _TURN_OFF_PLATFORM_STRING
#   (and cpprest must stay out of headers that model/ or policy/ see);
# - Debian's CMake package does not link OpenSSL.
find_package(cpprestsdk QUIET)
find_package(OpenSSL QUIET)
if(cpprestsdk_FOUND AND OpenSSL_FOUND)
  add_library(phasescale_cpprest INTERFACE)
  target_link_libraries(phasescale_cpprest INTERFACE cpprestsdk::cpprest OpenSSL::SSL OpenSSL::Crypto)
  target_compile_definitions(phasescale_cpprest INTERFACE _TURN_OFF_PLATFORM_STRING)
  add_library(phasescale::cpprest ALIAS phasescale_cpprest)
endif()
