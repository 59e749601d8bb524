/* The processes of a run: one, or the P ranks of an MPI job started by mpirun. This is the only
 * code that calls MPI. A process started without mpirun never initialises MPI, so it runs (and
 * is tested, sanitised and profiled) exactly as a build without MPI would.
 *
 * Sums that are not exact in any order are made in rank order, so that every rank gets the same
 * bits and a run with the same P gets the same bits every time; the others (maxima, minima,
 * counts) go through the MPI library's trees. */
#ifndef CDLAB_COMM_H
#define CDLAB_COMM_H

#include "status.h"

typedef enum comm_op { COMM_SUM, COMM_MAX, COMM_MIN } comm_op;

/* Started by mpirun (its environment names a job size): MPI is initialised (threads funnelled
 * through the main thread). Otherwise nothing happens: rank 0 of 1. */
status comm_init(int *argc, char ***argv, diag *err);
/* Ends MPI if comm_init started it (safe to call always, once). */
void comm_finalize(void);
int comm_rank(void);
int comm_size(void);
/* 1 when mpirun started this process (whatever the job size). */
int comm_launched(void);
/* The ranks on this process's node (MPI_COMM_TYPE_SHARED; 1 without MPI), the cores the system
 * counts there (sysconf), and whether a rank waiting in a collective naps instead of polling
 * (more ranks than cores: a polling rank would keep its core from the rank it waits for). */
int comm_node_ranks(void);
long comm_node_cores(void);
int comm_naps(void);

/* v[0..n-1] combined over the ranks with op, the same on every rank: rank 0 combines the
 * ranks' values in rank order and sends the result back. Maxima and minima, exact in any
 * order, go through comm_allreduce_exact (a tree: about log2 P messages a rank, the same bits). */
void comm_allreduce(double *v, int n, comm_op op);
/* The same in one call with an operation per value (op[k] for v[k]); through
 * comm_allreduce_exact when no op is a sum. */
void comm_allreduce_ops(double *v, const comm_op *op, int n);
/* Sums of n values that are exact in any order (whole numbers whose sum stays below 2^53, or
 * at most one rank's nonzero value): comm_allreduce_exact's tree, the rank-order sum's bits. */
void comm_allreduce_exact_sum(double *v, int n);
/* comm_allreduce_ops for values whose combination is exact in any order (counts and other
 * whole numbers below 2^53 summed, maxima, minima): the MPI library's reductions (trees, about
 * log2 P messages a rank), the same bits as the rank-order one. */
void comm_allreduce_exact(double *v, const comm_op *op, int n);
void comm_barrier(void);
/* All-to-all of doubles: send holds the segment for rank 0 (scount[0] doubles), then rank 1, ...;
 * *recv (malloc'ed, caller frees) receives rank 0's segment for this rank, then rank 1's, ...,
 * rcount[r] doubles from rank r, *rtotal in all. One rank: a copy. Messages go only to the ranks
 * with a segment (none for an empty one), and a nonblocking barrier tells each rank when it has
 * everything (comm.c: NBX). */
status comm_exchange(const double *send, const int *scount, double **recv, int *rcount, int *rtotal,
                     diag *err);
/* comm_exchange when every rank knows what it receives: rcount[r] doubles from rank r into recv
 * (room for all of them, in rank order); point to point with the ranks it sends to and receives
 * from, nothing else (halo refreshes, many times per step). */
status comm_exchange_known(const double *send, const int *scount, double *recv, const int *rcount,
                           diag *err);
/* Every rank's n doubles, concatenated in rank order, into *all (malloc'ed; *total doubles). */
status comm_allgather(const double *v, int n, double **all, int *total, diag *err);
/* The largest of the ranks' statuses (CDLAB_OK = 0 when all are fine), and from the lowest rank
 * that has it, its message into err on every rank: every rank stops together, with one
 * message. */
status comm_agree(status s, diag *err);
/* comm_agree, and in the same call the largest of the ranks' *flag into *flag (a signal seen
 * by any rank, say: one reduction a step instead of two). */
status comm_agree_flag(status s, int *flag, diag *err);
/* comm_agree_flag, and in the same reduction (comm_allreduce_ops: in rank order) the n values
 * v with their ops (at most COMM_AGREE_VALUES_MAX): a step's figures with its agreement. */
#define COMM_AGREE_VALUES_MAX 16
status comm_agree_values(status s, int *flag, double *v, const comm_op *op, int n, diag *err);
/* Ends every rank now (a rank that cannot go on while the others wait for it). */
void comm_abort(int code);

/* What this rank has spent on communication since the start (docs/parallel.md, "Measured per
 * rank and step"): messages and bytes it sent, counted in the logical pattern of each call (an
 * exchange: one message per other rank it has data for; a rank-order reduction: one message of
 * its values to rank 0, and rank 0 one to each other rank with the result; a tree: log2 P
 * (rounded up) each way, on every rank; an all-gather: its values to each
 * other rank), the number of MPI calls (and how many were rank-order reductions), and the seconds
 * inside them (waiting for a slower rank included: that is where imbalance shows). All zero in
 * one process. */
typedef struct comm_stats {
    double messages, bytes, calls, seconds;
    /* of the calls, the reductions made in rank order through rank 0 (P - 1 messages there) */
    double ordered;
    /* the most ranks this rank sent to in one exchange (point to point) since the start or
     * comm_partners_afresh */
    double partners;
} comm_stats;
comm_stats comm_stats_now(void);
/* comm_stats' partners counted afresh from now (the run's steps, after a set-up whose first
 * migration sends each rank's interleaved share to every owner). */
void comm_partners_afresh(void);

#endif
