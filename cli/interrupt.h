// Ctrl-C and SIGTERM for the long-running commands (compress, batch): while an InterruptScope lives, either signal
// only sets a flag, which the command polls to stop its work cleanly (exit 10, nothing partial written).
#pragma once

namespace nmc::cli {

class InterruptScope {
public:
    InterruptScope();   // installs the SIGINT and SIGTERM handlers and clears the flag
    ~InterruptScope();  // restores the previous handlers
    InterruptScope(const InterruptScope&) = delete;
    InterruptScope& operator=(const InterruptScope&) = delete;

    // Whether SIGINT or SIGTERM arrived since the scope began.
    static bool interrupted();

private:
    void (*previous_int_)(int);
    void (*previous_term_)(int);
};

}  // namespace nmc::cli
