/* Deformable discs: Rojek et al. eqs. (12)-(13) and the ellipse of a uniformly strained disc. */
#include "dem/dem_deform.h"

#include <math.h>

void dem_deform_term(vec3 s, vec3 F, double term[3])
{
    term[0] = s.x * F.x;
    term[1] = s.y * F.y;
    term[2] = 0.5 * (s.x * F.y + F.x * s.y);
}

void dem_deform_stress(int n, const vec3 *s, const vec3 *F, double V, double sigma[3])
{
    double sum[3] = {0.0, 0.0, 0.0};
    for (int c = 0; c < n; c++) {
        double t[3];
        dem_deform_term(s[c], F[c], t);
        for (int k = 0; k < 3; k++)
            sum[k] += t[k];
    }
    for (int k = 0; k < 3; k++)
        sigma[k] = sum[k] / V;
}

void dem_deform_strain(double E, double nu, const double sigma[3], double eps[3])
{
    double k = (1.0 + nu) / E;
    eps[0] = k * ((1.0 - nu) * sigma[0] - nu * sigma[1]);
    eps[1] = k * ((1.0 - nu) * sigma[1] - nu * sigma[0]);
    eps[2] = k * sigma[2];
}

dem_ellipse dem_deform_ellipse(double r, const double eps[3])
{
    /* principal values of [[xx, xy], [xy, yy]] and the direction of the larger */
    double mean = 0.5 * (eps[0] + eps[1]), half = 0.5 * (eps[0] - eps[1]);
    double rad = hypot(half, eps[2]);
    double angle = 0.5 * atan2(2.0 * eps[2], eps[0] - eps[1]); /* of e1 from x */
    dem_ellipse el = {.a = r * (1.0 + mean + rad),
                      .b = r * (1.0 + mean - rad),
                      .e1 = v3(cos(angle), sin(angle), 0.0)};
    return el;
}

double dem_deform_reach(const dem_ellipse *el, vec3 u)
{
    double c1 = u.x * el->e1.x + u.y * el->e1.y;  /* u . e1 */
    double c2 = -u.x * el->e1.y + u.y * el->e1.x; /* u . e2, e2 = z x e1 = (-e1.y, e1.x) */
    return 1.0 / sqrt(c1 * c1 / (el->a * el->a) + c2 * c2 / (el->b * el->b));
}
