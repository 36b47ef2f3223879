// The signal flag behind InterruptScope (cli/interrupt.h).
#include "cli/interrupt.h"

#include <csignal>

namespace nmc::cli {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) {
    g_interrupted = 1;
}

}  // namespace

InterruptScope::InterruptScope()
    : previous_int_(std::signal(SIGINT, on_interrupt)), previous_term_(std::signal(SIGTERM, on_interrupt)) {
    g_interrupted = 0;
}

InterruptScope::~InterruptScope() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
}

bool InterruptScope::interrupted() {
    return g_interrupted != 0;
}

}  // namespace nmc::cli
