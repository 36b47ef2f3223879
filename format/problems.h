// The problems a reader finds in a pack: the reader stops at the first, or collects every one (nmc validate).
#pragma once

#include <utility>
#include <vector>

#include "core/status.h"

namespace nmc {

class ProblemList {
public:
    explicit ProblemList(bool collect_all) : collect_all_(collect_all) {}

    // Records a problem. Returns true when the reader must stop now (it is not collecting).
    bool add(Status problem) {
        problems_.push_back(std::move(problem));
        return !collect_all_;
    }
    // True when a problem was recorded and the reader is not collecting.
    bool must_stop() const { return !collect_all_ && !problems_.empty(); }
    bool empty() const { return problems_.empty(); }
    const Status& first() const { return problems_.front(); }
    const std::vector<Status>& all() const { return problems_; }

private:
    bool collect_all_;
    std::vector<Status> problems_;
};

}  // namespace nmc
