// Label selector strings (kube::parse_label_selector) on any text: std::invalid_argument, or a
// selector whose string form reads back as the same selector.
#include <phasescale/kube/selector.hpp>

#include <stdexcept>

#include "fuzz.hpp"

using namespace phasescale;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    kube::LabelSelector selector;
    try {
        selector = kube::parse_label_selector(fuzz::text_of(data, size));
    } catch (const std::invalid_argument&) {
        return 0;
    }
    const std::string text = selector.to_string();
    try {
        const kube::LabelSelector again = kube::parse_label_selector(text);
        fuzz::require(again.to_string() == text, "to_string reads back as the same selector");
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "fuzz: \"%s\" does not read back: %s\n", text.c_str(), e.what());
        std::abort();
    }
    (void)selector.matches(std::map<std::string, std::string>{{"app", "train"}, {"tier", "a"}});
    return 0;
}
