#pragma once
// The last `capacity` values pushed, in one vector. A std::deque costs about 600 bytes even when
// nearly empty; an operator keeps ten of these for each of thousands of containers.

#include <cstddef>
#include <vector>

namespace phasescale::policy {

template <class T>
class Ring {
public:
    explicit Ring(std::size_t capacity = 0) : capacity_(capacity) {}

    void push(const T& value) {
        if (capacity_ == 0) return;
        if (values_.size() < capacity_) {
            values_.push_back(value);
        } else {
            values_[oldest_] = value;
            oldest_ = (oldest_ + 1) % capacity_;
        }
    }
    std::size_t size() const { return values_.size(); }
    bool empty() const { return values_.empty(); }

    // Oldest first.
    std::vector<T> values() const {
        std::vector<T> out(values_.begin() + static_cast<std::ptrdiff_t>(oldest_), values_.end());
        out.insert(out.end(), values_.begin(),
                   values_.begin() + static_cast<std::ptrdiff_t>(oldest_));
        return out;
    }

private:
    std::size_t capacity_;
    std::size_t oldest_ = 0;
    std::vector<T> values_;
};

}  // namespace phasescale::policy
