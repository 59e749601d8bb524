/* The contact problem of one CD step as a local frictional contact problem (FCLIB's form).
 *
 * After the sweeps of a step (cd_step_solve), with impulses r = R dt in each contact's local
 * frame (n, t1[, t2]) (n from body 0 to body 1, r on body 1):
 *
 *     u = W r + q,   W = H^T M^-1 H (the Delassus operator, m x m with m = d x contacts),
 *     q = the relative velocities without any contact impulse, plus g_pos/dt on the normal,
 *
 * and the shock law with g_pos (Unger & Kertesz eqs. 33-34) is exactly the Signorini-Coulomb
 * condition on (u, r): u_N >= 0, r_N >= 0, u_N r_N = 0 (u_N dt = g_pos + dt U_n is the gap
 * predicted at the end of the step) and Coulomb's law |r_T| <= mu r_N with maximal
 * dissipation. W is assembled by probing: a unit impulse in each local direction of each
 * contact is applied with the solver's own cd_apply_impulse (so walls, pistons, frozen
 * particles and the dimension locks act exactly as in the solver) and the relative velocities
 * of the contacts that share a body are read back with cd_relative_velocity. The world's
 * velocities are restored bit for bit. */
#ifndef CDLAB_CD_CONTACT_PROBLEM_H
#define CDLAB_CD_CONTACT_PROBLEM_H

#include <limits.h>

#include "world.h"

typedef struct contact_problem {
    int nc, d; /* contacts, local dimension: 2 (dimensions 1 and 2) or 3 */
    int m;     /* nc d */
    /* W in compressed columns: column k holds rows row[colptr[k] .. colptr[k+1]-1] */
    int nnz;
    int *colptr, *row;
    double *val;
    double *q, *mu;     /* q: m, mu: nc */
    double *r, *u;      /* cdlab's solution: impulses R dt and u = W r + q, m each */
    vec3 *frame;        /* nc x d: the local axes (n, t1[, t2]) in global coordinates */
    int *body0, *body1; /* stable ids: particle id, or -1 - wall index for body 0 */
    double *gap;        /* nc */
    /* W by rows (compressed rows: row i holds columns rcol[rowptr[i] .. rowptr[i+1]-1] in
     * ascending order), made by contact_problem_solve for its products on threads; NULL
     * elsewhere */
    int *rowptr, *rcol;
    double *rval;
} contact_problem;

/* Builds the problem of the current step from the world and its contacts L right after
 * cd_step_solve. */
status contact_problem_build(world *W, const contact_list *L, contact_problem *cp, diag *err);
void contact_problem_free(contact_problem *cp);

/* Natural-map residual of (r) for the problem (W, q, mu) in local dimension d (2 or 3):
 *   sqrt(sum_a |r_a - P_K(r_a - rho_a (u_a + mu_a |u_aT| e_N))|^2) / |r|,  u = W r + q,
 * with K the Coulomb cone. Zero exactly at a solution. Two yardsticks, named:
 *   NM_RHO_ONE: rho_a = 1, FCLIB's and Siconos's error (the one to compare codes with, and the
 *     natural_map criterion's: cd_natural_map_now);
 *   NM_RHO_INV_W: rho_a = 1 / W_(aN,aN), every term an impulse: the size of the correction one
 *     projected Gauss-Seidel step would make (up to 3.6x smaller than rho = 1 on cdlab's steps).
 * When r = 0 the absolute value is returned. abs_out (may be NULL) receives the unnormalised
 * residual. */
enum { NM_RHO_ONE, NM_RHO_INV_W };
double natural_map_residual(int nc, int d, const int *colptr, const int *row, const double *val,
                            const double *q, const double *mu, const double *r, int rho_mode,
                            double *abs_out);
/* The same with u = W r + q given (W is read only for rho = 1/W_NN). */
double natural_map_given_u(int nc, int d, const int *colptr, const int *row, const double *val,
                           const double *mu, const double *r, const double *u, int rho_mode,
                           double *abs_out);
/* y = W x for W in compressed columns (m x m). */
void contact_problem_matvec(int m, const int *colptr, const int *row, const double *val,
                            const double *x, double *y);
/* y = W x: by rows on threads where cp has them (each row's sum in ascending column order,
 * as the columns' scatter adds them: the same bits), else contact_problem_matvec. */
void contact_problem_product(const contact_problem *cp, const double *x, double *y);
/* rows: a copy of cp (sharing its arrays) with W by rows added; contact_problem_rows_free frees
 * only those (cp's own arrays stay cp's). */
status contact_problem_with_rows(const contact_problem *cp, contact_problem *rows, diag *err);
void contact_problem_rows_free(contact_problem *rows);
/* Projection onto the Coulomb cone |z_T| <= mu z_N in local dimension d (in place; z_T is
 * z[1 .. d-1]). */
void project_cone(double *z, int d, double mu);

/* One contact's term: |r - P_K(r - rho (u + mu |u_T| e_N))|^2 in local dimension d (up to 4:
 * the normal first, then the tangent's components), and |r|^2 in *r2. */
double natural_map_term(const double *r, const double *u, int d, double mu, double rho, double *r2);

/* Writes the problem and cdlab's solution as an FCLIB local problem file (fclib_write_local
 * and fclib_write_solution), then adds a /cdlab group with the contact pairs, gaps, frames and
 * the attributes given. */
typedef struct fclib_meta {
    const char *title, *description;
    long step;
    double t, dt;
    int sweeps, converged;
    double solver_residual; /* the criterion's measure in the last sweep */
    const char *criterion, *sweep;
    double epsilon;
    double natural_map;       /* natural_map_residual of the solution, rho = 1 (NM_RHO_ONE) */
    double natural_map_inv_w; /* the same with rho = 1/W_NN (NM_RHO_INV_W) */
} fclib_meta;
status contact_problem_write_fclib(const contact_problem *cp, const char *path,
                                   const fclib_meta *meta, diag *err);
/* Loads libfclib (dlopen, once); CDLAB_ERR_ARG naming the library when it cannot be loaded.
 * Called when an export is planned, so that a run that cannot write it is refused at its start. */
status contact_problem_fclib_load(diag *err);
/* The partial files of earlier exports to path (PATH.PID.partial, contact_problem_write_fclib)
 * whose process is gone on this machine (a killed export leaves its own): line k of the notice
 * for each in said[k] (at most max); their count. Nothing is removed. */
#define STALE_NOTICE_MAX (PATH_MAX + 512)
int contact_problem_stale_partials(const char *path, char said[][STALE_NOTICE_MAX], int max);

/* Reads an FCLIB local problem (cdlab's exports, other codes' files) into cp: W in compressed
 * columns (triplets are converted), q, mu, and the stored solution's r when the file has one
 * (*has_solution; else cp->r is NULL); u, frames, bodies and gaps are not read (NULL). A file
 * that is no such problem, or whose arrays disagree, is refused (CDLAB_ERR_ARG, naming it). */
status contact_problem_read_fclib(const char *path, contact_problem *cp, int *has_solution,
                                  diag *err);

/* The solvers of a stored problem, each until the natural-map residual (rho = 1) is at most
 * tolerance or max_sweeps of its iterations are done; report (may be NULL) gets iteration 0,
 * every every-th and the last.
 *   CP_SWEEPS (cd_matrix_sweeps.c): the engine's one-contact update on r with u = W r + q kept,
 *     in order's order, relaxed by relaxation; an iteration is a sweep.
 *   CP_APGD (cd_matrix_apgd.c): Nesterov's accelerated projected gradient with an adaptive step
 *     and restart (Mazhar, Heyn, Negrut & Tasora 2015) on the cone complementarity problem
 *     min 1/2 r.W r + (q + s e_N).r over the Coulomb cones, an iteration one gradient step (one
 *     product with W per trial step). With s = 0 (desaxce 0) that is Anitescu's convex
 *     relaxation, whose sliding contacts separate at u_N = mu |u_T| (the dilation); with
 *     desaxce, s = mu |u_T| of the last outer iterate (De Saxce's modified velocity), updated
 *     whenever the inner problem's residual has fallen below a tenth of the Coulomb one, so that
 *     a fixed point is a solution of Coulomb's law.
 *   CP_NEWTON (cd_matrix_newton.c): a proximal semismooth Newton method on Alart and Curnier's
 *     function with UMFPACK's sparse LU and an Armijo line search, after presweeps sweeps of
 *     order's order; a line search that fails gives way to one sweep. */
typedef enum { CP_FORWARD, CP_BACKWARD, CP_RANDOM } cp_order;
typedef enum { CP_SWEEPS, CP_APGD, CP_NEWTON } cp_method;
typedef struct cp_sweep_options {
    cp_method method;
    cp_order order;
    double relaxation; /* omega in (0, 2) */
    double tolerance;
    int max_sweeps, every;
    uint64_t seed;      /* the random order's stream */
    int desaxce;        /* APGD: De Saxce's outer fixed point (1) or the convex relaxation (0) */
    int presweeps;      /* Newton: sweeps before the first Newton step */
    double max_seconds; /* > 0: stop after an iteration that ends past this many seconds */
    /* APGD and Newton: stop also when one iteration's change of the impulses meets eq. 35
     * (CP_CHANGE_LOCAL: |dr_a| <= epsilon |r_a| + delta for every contact) or eq. 36
     * (CP_CHANGE_GLOBAL: |d sum |r_a|| <= epsilon sum |r_a|), delta an impulse */
    int change;
    double change_epsilon, change_delta;
} cp_sweep_options;
enum { CP_CHANGE_NONE, CP_CHANGE_LOCAL, CP_CHANGE_GLOBAL };
typedef struct cp_sweep_result {
    int sweeps, converged;
    double residual, seconds;
    int outer; /* APGD with desaxce: outer iterations (updates of s) */
    /* APGD: the answer's residual on the last s; without desaxce that of the convex problem
     * itself, which is then the criterion's measure (residual) */
    double inner_residual;
    double coulomb;     /* the answer's natural-map residual, rho = 1 (contact_problem_solve) */
    int factorizations; /* Newton: LU factorizations; fallbacks: line searches that failed */
    int fallbacks;
    /* the answer's dilation: at the contacts that carry a normal impulse (r_N > 0), the mean
     * and the largest normal velocity u_N (zero in Coulomb's law, mu |u_T| at the convex
     * relaxation's sliding contacts), and how many such contacts there are */
    double dilation_mean, dilation_max;
    int closed;
    /* with o->change: whether the last iteration's change met it, and its measure
     * (local: max |dr_a|/(|r_a| + delta); global: |d sum |r_a|| / sum |r_a|) */
    int change_met;
    double change;
} cp_sweep_result;
/* eqs. 35-36 between two iterates of a stored problem's impulses (o->change): 1 when met, the
 * measure in *measure */
int cp_change_met(const contact_problem *cp, const cp_sweep_options *o, const double *before,
                  const double *after, double *measure);
typedef void (*cp_sweep_report)(void *ctx, int sweep, double residual, double seconds);
status contact_problem_sweeps(const contact_problem *cp, double *r, const cp_sweep_options *o,
                              cp_sweep_report report, void *ctx, cp_sweep_result *res, diag *err);
status contact_problem_apgd(const contact_problem *cp, double *r, const cp_sweep_options *o,
                            cp_sweep_report report, void *ctx, cp_sweep_result *res, diag *err);
status contact_problem_newton(const contact_problem *cp, double *r, const cp_sweep_options *o,
                              cp_sweep_report report, void *ctx, cp_sweep_result *res, diag *err);
/* The method o->method asks for, and then the answer's dilation in res. */
status contact_problem_solve(const contact_problem *cp, double *r, const cp_sweep_options *o,
                             cp_sweep_report report, void *ctx, cp_sweep_result *res, diag *err);
/* W's diagonal into w_diag (m); CDLAB_ERR_ARG when a contact's normal entry is not positive. */
status contact_problem_diagonal(const contact_problem *cp, double *w_diag, diag *err);
/* Seconds of the monotonic clock. */
double cp_seconds(void);

#endif
