// OpenBLAS as the trainer uses it: which core it runs (cli/openblas_reexec.h picks a better one on virtual machines)
// and its thread count.
//
// OpenBLAS divides a matrix product between its threads in a way that changes the float32 sums, so the packs of
// OMP_NUM_THREADS=1 and 2 differed (and `batch -j 2`'s, whose children get fewer threads, differed from `compress`'s).
// CPU training holds a OneOpenBlasThread; LibTorch's own threads, whose results for the trainer's operations do not
// depend on their count, still run the rest in parallel.
#pragma once

#include <string>

namespace nmc {

// The core OpenBLAS runs with in this process, or "" when the BLAS loaded is not OpenBLAS.
std::string openblas_core_name();

// While at least one instance lives, OpenBLAS runs every product on the calling thread (openblas_set_num_threads(1));
// after the last is destroyed, the thread count it had before is restored. Nothing where the BLAS loaded is not
// OpenBLAS. Safe to create and destroy from several threads.
class OneOpenBlasThread {
public:
    OneOpenBlasThread();
    ~OneOpenBlasThread();
    OneOpenBlasThread(const OneOpenBlasThread&) = delete;
    OneOpenBlasThread& operator=(const OneOpenBlasThread&) = delete;
};

// OpenBLAS's thread count now (openblas_get_num_threads), or 0 when the BLAS loaded is not OpenBLAS.
int openblas_threads();

}  // namespace nmc
