/* Unger & Kertesz eq. (34), shock law with g_pos (eq. 33). */
#include "nscd/cd_shock_law.h"

vec3 shock_law(vec3 U, vec3 n, double gap, double m_n, double m_t, double mu, double dt,
               shock_branch *branch)
{
    double g_pos = gap > 0.0 ? gap : 0.0;
    double U_n = v3_dot(U, n);
    if (U_n * dt + g_pos > 0.0) { /* the gap stays open: no contact */
        if (branch)
            *branch = SHOCK_OPEN;
        return v3_zero();
    }
    double R_n = -(m_n / dt) * (g_pos / dt + U_n);
    vec3 U_t = v3_axpy(-U_n, n, U);
    vec3 R_t = v3_scale(U_t, -m_t / dt);
    double rt = v3_norm(R_t), limit = mu * R_n;
    shock_branch b = SHOCK_STICK;
    if (rt > limit) { /* sliding: scale onto the friction cone; R_n need not change (M diagonal) */
        R_t = rt > 0.0 ? v3_scale(R_t, limit / rt) : v3_zero();
        b = SHOCK_SLIDE;
    }
    if (branch)
        *branch = b;
    return v3_axpy(R_n, n, R_t);
}
