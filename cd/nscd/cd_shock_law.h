/* The one-contact inelastic shock law of contact dynamics. */
#ifndef CDLAB_CD_SHOCK_LAW_H
#define CDLAB_CD_SHOCK_LAW_H

#include "vec3.h"

typedef enum shock_branch { SHOCK_OPEN, SHOCK_STICK, SHOCK_SLIDE } shock_branch;

/* Unger & Kertesz eq. (34) with g_pos = max(g, 0) (eq. 33).
 *   U    relative contact velocity after dt with every force except this contact's own (eq. 23)
 *   n    unit normal (body 0 -> body 1), gap g, effective masses m_n, m_t, friction mu
 * Returns the new force on body 1 and, if branch is not NULL, which branch was taken. */
vec3 shock_law(vec3 U, vec3 n, double gap, double m_n, double m_t, double mu, double dt,
               shock_branch *branch);

#endif
