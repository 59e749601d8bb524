#include "grow.h"

#include <stdlib.h>

void *grow_array(void *ptr, int *cap, int need, size_t elem)
{
    if (need < 1)
        need = 1;
    if (ptr && need <= *cap)
        return ptr;
    long nc = *cap > 0 ? *cap : 64;
    while (nc < need)
        nc *= 2;
    if (nc > 0x7fffffffL)
        return NULL;
    void *p = realloc(ptr, (size_t)nc * elem);
    if (p)
        *cap = (int)nc;
    return p;
}
