/* libFuzzer target: a config file's text through everything `cdlab check` does (inih parsing,
 * typed and range-checked getters, the scene: particles, walls, periodic box, solver and DEM
 * sections, unknown-key check). Any outcome but a crash, a sanitizer report, a leak or a hang
 * is fine: bad input must end in an error message. Built and run by `make fuzz`. */
#include "cd_run.h"
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    config c;
    diag err = {{0}};
    if (config_load_string(&c, text, "fuzz.ini", &err) == CDLAB_OK)
        (void)cd_run_validate(&c, &err);
    config_free(&c);
    free(text);
    return 0;
}
