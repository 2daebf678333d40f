#pragma once
// The last `capacity` values pushed, in one vector. A std::deque costs about 600 bytes even when
// nearly empty; an operator keeps ten of these for each of thousands of containers.

#include <algorithm>
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
    std::vector<T> values() const { return latest(values_.size()); }

    // The last n values pushed (all of them where fewer), oldest first: a reader of the newest few
    // copies only those.
    std::vector<T> latest(std::size_t n) const {
        n = std::min(n, values_.size());
        std::vector<T> out;
        out.reserve(n);
        for (std::size_t i = values_.size() - n; i < values_.size(); ++i)
            out.push_back(values_[(oldest_ + i) % values_.size()]);
        return out;
    }

private:
    std::size_t capacity_;
    std::size_t oldest_ = 0;
    std::vector<T> values_;
};

}  // namespace phasescale::policy
