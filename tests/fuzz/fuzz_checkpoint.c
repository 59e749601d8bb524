/* libFuzzer target: a checkpoint restored from a mutated HDF5 file (targets.h). Built and run
 * by `make fuzz`. */
#include "targets.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/cdlab-fuzz-ck-%ld", (long)getpid());
        mkdir(dir, 0755);
    }
    diag err = {{0}};
    (void)fuzz_checkpoint(data, size, dir, &err);
    return 0;
}
