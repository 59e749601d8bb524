#include "world.h"

#include <stdlib.h>
#include <string.h>

void world_free(world *W)
{
    particles_free(&W->P);
    contacts_free(&W->C);
    free(W->walls);
    memset(W, 0, sizeof *W);
}

double world_kinetic_energy(const world *W)
{
    const particles *P = &W->P;
    double e = 0.0;
    for (int i = 0; i < P->n; i++)
        e += 0.5 * P->m[i] * v3_norm2(P->v[i]) + 0.5 / P->inv_I[i] * v3_norm2(P->w[i]);
    for (int k = 0; k < W->n_walls; k++)
        if (W->walls[k].kind == WALL_PISTON)
            e += 0.5 * W->walls[k].mass * W->walls[k].u * W->walls[k].u;
    return e;
}
