#pragma once
// The default phase model, built into the library (model/pretrained/default.model.json), so that
// `--model default` works wherever phasescale runs.

#include <phasescale/model/model.hpp>

#include <string>

namespace phasescale::model {

inline constexpr const char* kDefaultModelName = "default";

// The built-in model's JSON text.
const std::string& default_model_text();

// "default" is the built-in model; anything else is a model file's path.
PhaseModel resolve_model(const std::string& name_or_path);

}  // namespace phasescale::model
