/* The bodies of the two fuzz targets, shared by the libFuzzer harnesses (fuzz_*.c, `make fuzz`)
 * and the Check suite that replays the saved inputs of tests/fuzz/regress/ (check_fuzz.c). Any
 * outcome but a crash, a sanitizer report, a leak or a hang is fine: bad input must end in an
 * error with a message. */
#ifndef CDLAB_FUZZ_TARGETS_H
#define CDLAB_FUZZ_TARGETS_H

#include "cd_run.h"
#include "config.h"
#include "generate.h"
#include "particles.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A config file's text through everything `cdlab check` does (inih parsing, typed and
 * range-checked getters, the scene: particles, walls, periodic box, solver and DEM sections,
 * unknown-key check). */
static inline status fuzz_config_text(const char *text, const char *name, diag *err)
{
    config c;
    status s = config_load_string(&c, text, name, err);
    if (s == CDLAB_OK)
        s = cd_run_validate(&c, NULL, err);
    config_free(&c);
    return s;
}

/* A particle file (`particles.source = file`) through generate_load_file: the first byte picks
 * xyzr (even) or chute (odd), the rest is written to path and read twice, as the scene does:
 * once to count, once into the arrays (the two passes must agree: abort otherwise). */
static inline status fuzz_particle_file(const uint8_t *data, size_t size, const char *path,
                                        diag *err)
{
    if (size < 1)
        return CDLAB_OK;
    particle_format fmt = (data[0] & 1) ? PARTICLE_FORMAT_CHUTE : PARTICLE_FORMAT_XYZR;
    FILE *f = fopen(path, "wb");
    if (!f || (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1))
        abort();
    fclose(f);
    int count = 0;
    status s = generate_load_file(NULL, path, fmt, &count, err);
    if (s == CDLAB_OK && count > 0) {
        particles P;
        s = particles_init(&P, count, 3, err);
        int n = 0;
        if (s == CDLAB_OK && (s = generate_load_file(&P, path, fmt, &n, err)) == CDLAB_OK &&
            n != count)
            abort();
        particles_free(&P);
    }
    return s;
}

#endif
