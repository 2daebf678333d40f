// The CapacityLoan spec reader (loan::parse_loan) on any JSON: it never throws; what it cannot
// honour is a message.
#include <phasescale/loan/spec.hpp>

#include "fuzz.hpp"

using namespace phasescale;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto j = nlohmann::json::parse(fuzz::text_of(data, size), nullptr, false);
    if (j.is_discarded()) return 0;
    const loan::ParsedLoan parsed = loan::parse_loan(j);
    (void)parsed.message();
    for (const auto& job : parsed.spec.jobs) {
        if (!parsed.ok()) break;
        fuzz::require(job.min_replicas >= 1 && job.min_replicas <= job.max_replicas,
                      "a valid loan's jobs have 1 <= minReplicas <= maxReplicas");
        (void)job.resource.path(job.ns);
    }
    return 0;
}
