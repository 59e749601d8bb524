/* Four of everything at once: doubles in lanes (GCC's vector extension, which clang also
 * understands; SSE2 pairs where AVX is not enabled) and 3-vectors of such lanes with the
 * operations of vec3.h, each written as its scalar twin is, operation for operation. With
 * -std=c11 (-ffp-contract=off: no fused multiply-add) every lane then gives the scalar code's
 * bits: sqrt and division are correctly rounded in both. */
#ifndef CDLAB_VEC3X4_H
#define CDLAB_VEC3X4_H

#include "vec3.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

/* Lanes pass between inline functions only, never across a call: the note that a 32-byte
 * vector argument's ABI depends on AVX does not apply (the Makefile's -Wno-psabi). */

typedef double v4d __attribute__((vector_size(32)));
typedef long long v4m __attribute__((vector_size(32))); /* a lane mask: all ones or zeros */

/* lane by lane: m ? a : b */
#define V4_SELECT(m, a, b) ((v4d)(((m) & (v4m)(a)) | (~(m) & (v4m)(b))))

typedef struct vv3 {
    v4d x, y, z;
} vv3;

#define VV3_SELECT(m, a, b)                                                                        \
    ((vv3){V4_SELECT(m, (a).x, (b).x), V4_SELECT(m, (a).y, (b).y), V4_SELECT(m, (a).z, (b).z)})

static inline __attribute__((always_inline)) vv3 vv3_add(vv3 a, vv3 b)
{
    return (vv3){a.x + b.x, a.y + b.y, a.z + b.z};
}
static inline __attribute__((always_inline)) vv3 vv3_sub(vv3 a, vv3 b)
{
    return (vv3){a.x - b.x, a.y - b.y, a.z - b.z};
}
static inline __attribute__((always_inline)) vv3 vv3_scale(vv3 a, v4d s)
{
    return (vv3){a.x * s, a.y * s, a.z * s};
}
static inline __attribute__((always_inline)) vv3 vv3_axpy(v4d s, vv3 a, vv3 b)
{
    return (vv3){s * a.x + b.x, s * a.y + b.y, s * a.z + b.z};
}
static inline __attribute__((always_inline)) v4d vv3_dot(vv3 a, vv3 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
static inline __attribute__((always_inline)) vv3 vv3_cross(vv3 a, vv3 b)
{
    return (vv3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
/* lanes a[idx[0..3]] of an array of vec3 */
static inline __attribute__((always_inline)) vv3 vv3_gather(const vec3 *a, const int *idx)
{
    const vec3 *p = a + idx[0], *q = a + idx[1], *r = a + idx[2], *s = a + idx[3];
    return (vv3){{p->x, q->x, r->x, s->x}, {p->y, q->y, r->y, s->y}, {p->z, q->z, r->z, s->z}};
}
static inline __attribute__((always_inline)) v4d v4_gather(const double *a, const int *idx)
{
    return (v4d){a[idx[0]], a[idx[1]], a[idx[2]], a[idx[3]]};
}
static inline __attribute__((always_inline)) vec3 vv3_lane(vv3 a, int l)
{
    return v3(a.x[l], a.y[l], a.z[l]);
}

/* lane by lane: sqrt (correctly rounded, as the scalar) */
static inline __attribute__((always_inline)) v4d v4_sqrt(v4d a)
{
#if defined(__AVX__)
    return (v4d)_mm256_sqrt_pd((__m256d)a);
#else
    return (v4d){sqrt(a[0]), sqrt(a[1]), sqrt(a[2]), sqrt(a[3])};
#endif
}

/* lane by lane: fabs */
static inline __attribute__((always_inline)) v4d v4_abs(v4d a)
{
    const v4m sign = (v4m)((v4d){-0.0, -0.0, -0.0, -0.0});
    return (v4d)((v4m)a & ~sign);
}

/* copysign(a, s): the magnitude of a with the sign of s */
static inline __attribute__((always_inline)) v4d v4_copysign(v4d a, v4d s)
{
    const v4m sign = (v4m)((v4d){-0.0, -0.0, -0.0, -0.0});
    return (v4d)(((v4m)a & ~sign) | ((v4m)s & sign));
}

/* fmax(0, a) as libm gives it: +0 for a = -0 and for a NaN */
static inline __attribute__((always_inline)) v4d v4_fmax0(v4d a)
{
    const v4d zero = {0.0, 0.0, 0.0, 0.0};
    return V4_SELECT(a > 0.0, a, zero);
}

#endif
