// The kubeconfig loader (kube::Config::from_kubeconfig_text) on any text: ConfigError or a
// configuration that names a server.
#include <phasescale/kube/config.hpp>
#include <phasescale/kube/error.hpp>

#include <filesystem>

#include "fuzz.hpp"

using namespace phasescale;

namespace {

// Relative paths in the input (certificate-authority: ca.crt) resolve in a folder that does not
// exist, so they name nothing (a folder made for it would outlive the run: libFuzzer ends with
// _Exit, past any cleanup).
const std::filesystem::path kBaseDir = "/nonexistent/phasescale-fuzz";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text = fuzz::text_of(data, size);
    try {
        const auto config = kube::Config::from_kubeconfig_text(text, "fuzz-kubeconfig", kBaseDir);
        fuzz::require(!config.server.empty(), "a loaded kubeconfig names a server");
    } catch (const kube::ConfigError&) {
    }
    return 0;
}
