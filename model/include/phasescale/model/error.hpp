#pragma once
// Errors raised on bad input (trace files, model files, options). The message always says where:
// a file, a line and a column for traces; a file and a field path for model files.

#include <stdexcept>
#include <string>

namespace phasescale::model {

class InputError : public std::runtime_error {
public:
    explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace phasescale::model
