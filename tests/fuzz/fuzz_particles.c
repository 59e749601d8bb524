/* libFuzzer target: a particle file (`particles.source = file`) through generate_load_file, in
 * both formats: the first input byte picks xyzr (even) or chute (odd), the rest is the file.
 * The file is read twice, as the scene does: once to count, once into the arrays. Built and
 * run by `make fuzz`. */
#include "generate.h"
#include "particles.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/cdlab-fuzz-%ld.txt", (long)getpid());
    if (size < 1)
        return 0;
    particle_format fmt = (data[0] & 1) ? PARTICLE_FORMAT_CHUTE : PARTICLE_FORMAT_XYZR;
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1)
        abort();
    fclose(f);
    int count = 0;
    diag err = {{0}};
    if (generate_load_file(NULL, path, fmt, &count, &err) == CDLAB_OK && count > 0) {
        particles P;
        if (particles_init(&P, count, 3, &err) == CDLAB_OK) {
            int n = 0;
            if (generate_load_file(&P, path, fmt, &n, &err) == CDLAB_OK && n != count)
                abort(); /* the two passes must agree */
        }
        particles_free(&P);
    }
    return 0;
}
