// The model loader (model::parse_model) on any text: InputError, or a model that serialises and
// reads back.
#include <phasescale/model/error.hpp>
#include <phasescale/model/model.hpp>

#include "fuzz.hpp"

using namespace phasescale;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    model::PhaseModel parsed;
    try {
        parsed = model::parse_model(fuzz::text_of(data, size), "fuzz.model.json");
    } catch (const model::InputError&) {
        return 0;
    }
    // What was accepted is a valid model: written out and read back, it must pass again.
    const std::string again = model::serialise_model(parsed);
    try {
        const model::PhaseModel back = model::parse_model(again, "fuzz.again.json");
        fuzz::require(back.phases() == parsed.phases(), "a model reads back with its phases");
        fuzz::require(back.phase_names == parsed.phase_names,
                      "a model reads back with its phase names");
    } catch (const model::InputError& e) {
        std::fprintf(stderr, "fuzz: an accepted model does not read back: %s\n", e.what());
        std::abort();
    }
    return 0;
}
