// What a command is working on, for the one message an allocation failure gets (exit 13, docs/cli.md): main()
// catches std::bad_alloc wherever it was thrown and names the file and the step that was allocating.
#pragma once

#include <string>

namespace nmc::cli {

// Makes "`what` of `file`" the current step for its lifetime; steps nest, the enclosing one is current again
// afterwards. Commands set steps on their main thread only.
class CurrentStep {
public:
    CurrentStep(std::string file, std::string what);
    ~CurrentStep();
    CurrentStep(const CurrentStep&) = delete;
    CurrentStep& operator=(const CurrentStep&) = delete;

private:
    std::string file_;
    std::string what_;
    const CurrentStep* enclosing_;
    friend std::string out_of_memory_message(const char* detail);
};

// "FILE: out of memory while WHAT (DETAIL)" for the current step, "out of memory (DETAIL)" outside any.
std::string out_of_memory_message(const char* detail);

}  // namespace nmc::cli
