/* libFuzzer target: a particle file in either format (targets.h). Built and run by
 * `make fuzz`. */
#include "targets.h"

#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/cdlab-fuzz-%ld.txt", (long)getpid());
    diag err = {{0}};
    (void)fuzz_particle_file(data, size, path, &err);
    return 0;
}
