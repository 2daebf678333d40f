// The PhaseAutoscaler spec reader (control::parse_spec_yaml, parse_spec) on any text: it never
// throws; what it cannot honour is a message.
#include <phasescale/control/spec.hpp>

#include "fuzz.hpp"

using namespace phasescale;

namespace {

void check(const control::ParsedSpec& parsed) {
    (void)parsed.message();
    // Every container gets a policy, whatever the spec said.
    (void)parsed.spec.policy_for("main");
    (void)parsed.spec.model.id();
    (void)parsed.spec.selector.to_string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text = fuzz::text_of(data, size);
    // As `kubectl apply -f` takes it (YAML, JSON being YAML too) ...
    check(control::parse_spec_yaml(text, "fuzz.yaml"));
    // ... and as the API returns it.
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_discarded()) check(control::parse_spec(j));
    return 0;
}
