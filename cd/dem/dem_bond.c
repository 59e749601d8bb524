/* Bonded contacts: Rojek et al. eqs. (1)-(11). */
#include "dem/dem_bond.h"

#include <math.h>

double dem_bond_critical_damping(double k, double m_0, double m_1)
{
    double mu = isinf(m_0) ? m_1 : isinf(m_1) ? m_0 : m_0 * m_1 / (m_0 + m_1);
    return 2.0 * sqrt(mu * k);
}

void dem_bond_force(const dem_bond_law *L, const dem_bond_in *in, dem_bond_out *out)
{
    double c_n = L->xi_n * dem_bond_critical_damping(L->k_n, in->m_0, in->m_1); /* eq. (9) */
    double c_t = L->xi_t * dem_bond_critical_damping(L->k_t, in->m_0, in->m_1); /* eq. (10) */
    double fe_n = L->k_n * in->h;                                               /* eq. (4) */
    vec3 fe_t = v3_scale(in->u_t, L->k_t);                                      /* eq. (6) */
    out->f_n = fe_n + c_n * in->v_n;                                            /* eqs. (2), (7) */
    out->f_t = v3_axpy(c_t, in->v_t, fe_t);                                     /* eqs. (3), (8) */
    /* strengths act on the elastic parts: a dashpot's force is a rate effect, not a load the
     * bond carries (a fast approach would otherwise "break" a compressed bond) */
    out->broken = (L->strength_n > 0.0 && fe_n > L->strength_n) ||
                  (L->strength_t > 0.0 && v3_norm(fe_t) > L->strength_t);
}
