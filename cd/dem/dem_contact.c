/* Kuhn, Suzuki & Daouadji, Fig. 1: the linear-frictional contact law, line by line.
 * Line numbers in comments are those of the paper's Fig. 1. */
#include "dem/dem_contact_law.h"

void dem_sliding_angle_end(double c, double sn, double E, double *cos_end, double *sin_end)
{
    /* eqs. (18)-(19) in closed form: csc(t) - cot(t) = tan(t/2), so
     * |tan(theta'/2)| = |tan(theta/2)| exp(-E), with the sign of theta kept. tan(theta/2)
     * = sin / (1 + cos), or (1 - cos) / sin where cos < 0 (no cancellation either way) */
    double half = c >= 0.0 ? fabs(sn) / (1.0 + c) : (1.0 - c) / fabs(sn);
    double t = E == INFINITY ? 0.0 : half * exp(-E);
    if (t > 1e100) { /* theta' within 1e-100 of pi (theta = pi: it stays there) */
        *sin_end = copysign(t < INFINITY ? 2.0 / t : 0.0, sn);
        *cos_end = -1.0;
        return;
    }
    double t2 = t * t;
    /* the sign of theta: that of sn (theta = pi, sn = +-0: as atan2 gives it) */
    *sin_end = copysign(2.0 * t / (1.0 + t2), sn);
    *cos_end = (1.0 - t2) / (1.0 + t2);
}

void dem_contact_force(const dem_law *L, const dem_contact_in *in, dem_contact_out *out)
{
    dem_contact_law(L, in, out);
}
