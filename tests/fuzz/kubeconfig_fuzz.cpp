// The kubeconfig loader (kube::Config::from_kubeconfig_text) on any text: ConfigError or a
// configuration that names a server.
#include <phasescale/kube/config.hpp>
#include <phasescale/kube/error.hpp>

#include <cstdlib>
#include <filesystem>

#include "fuzz.hpp"

using namespace phasescale;

namespace {

// Relative paths in the input (certificate-authority: ca.crt) resolve in an empty folder of
// our own, so they name nothing; the folder is made once per process and removed at exit.
const std::filesystem::path& base_dir() {
  static const std::filesystem::path dir = [] {
    std::string name = (std::filesystem::temp_directory_path() / "phasescale-fuzz-XXXXXX").string();
    fuzz::require(mkdtemp(name.data()) != nullptr, "mkdtemp works");
    std::atexit([] { std::filesystem::remove_all(base_dir()); });
    return std::filesystem::path(name);
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz::text_of(data, size);
  try {
    const auto config = kube::Config::from_kubeconfig_text(text, "fuzz-kubeconfig", base_dir());
    fuzz::require(!config.server.empty(), "a loaded kubeconfig names a server");
  } catch (const kube::ConfigError&) {
  }
  return 0;
}
