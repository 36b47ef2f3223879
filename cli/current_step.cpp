// The current step of a command, for the message of an allocation failure.
#include "cli/current_step.h"

#include <utility>

namespace nmc::cli {
namespace {

const CurrentStep* current = nullptr;

}  // namespace

CurrentStep::CurrentStep(std::string file, std::string what)
    : file_(std::move(file)), what_(std::move(what)), enclosing_(current) {
    current = this;
}

CurrentStep::~CurrentStep() {
    current = enclosing_;
}

std::string out_of_memory_message(const char* detail) {
    const std::string tail = std::string("out of memory") + (current ? " while " + current->what_ : "") + " (" +
                             detail + "); docs/cli.md states each command's peak memory";
    return current ? current->file_ + ": " + tail : tail;
}

}  // namespace nmc::cli
