/* The engine registry: system.mode -> the engine's table. The one place of cd/ that names
 * every engine (tools/check_layers.py): an engine is its folder and one line here. */
#include "engine/engine.h"

#include <stddef.h>

extern const engine_ops cd_engine_ops;  /* cd/nscd/cd_engine.c: contact dynamics */
extern const engine_ops dem_engine_ops; /* cd/dem/dem_engine.c: DEM */

const engine_ops *const engine_registry[] = {&cd_engine_ops, &dem_engine_ops, NULL};
