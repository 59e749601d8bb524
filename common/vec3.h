/* Small 3-vector algebra, header-only so that the compiler inlines it in the sweep. */
#ifndef CDLAB_VEC3_H
#define CDLAB_VEC3_H

#include <math.h>

#define CDLAB_PI 3.14159265358979323846

/* The larger of two numbers that are not NaN, inline: fmax is a libm call in this build (its
 * NaN and signed-zero rules keep GCC from inlining it without -ffinite-math-only; 1% of the DEM
 * step). Where a or b can be NaN, use fmax. */
static inline double num_max(double a, double b)
{
    return a > b ? a : b;
}

typedef struct vec3 {
    double x, y, z;
} vec3;

static inline vec3 v3(double x, double y, double z)
{
    return (vec3){x, y, z};
}
static inline vec3 v3_add(vec3 a, vec3 b)
{
    return v3(a.x + b.x, a.y + b.y, a.z + b.z);
}
static inline vec3 v3_sub(vec3 a, vec3 b)
{
    return v3(a.x - b.x, a.y - b.y, a.z - b.z);
}
static inline vec3 v3_scale(vec3 a, double s)
{
    return v3(a.x * s, a.y * s, a.z * s);
}
static inline vec3 v3_axpy(double s, vec3 a, vec3 b)
{
    return v3(s * a.x + b.x, s * a.y + b.y, s * a.z + b.z);
}
static inline double v3_dot(vec3 a, vec3 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
static inline vec3 v3_cross(vec3 a, vec3 b)
{
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline double v3_norm2(vec3 a)
{
    return v3_dot(a, a);
}
static inline double v3_norm(vec3 a)
{
    return sqrt(v3_dot(a, a));
}
static inline vec3 v3_zero(void)
{
    return v3(0.0, 0.0, 0.0);
}
/* Component of a orthogonal to the unit vector n. */
static inline vec3 v3_reject(vec3 a, vec3 n)
{
    return v3_axpy(-v3_dot(a, n), n, a);
}

#endif
