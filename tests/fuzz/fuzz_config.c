/* libFuzzer target: a config file's text (targets.h). Built and run by `make fuzz`. */
#include "targets.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    diag err = {{0}};
    (void)fuzz_config_text(text, "fuzz.ini", &err);
    free(text);
    return 0;
}
