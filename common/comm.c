/* MPI behind comm.h. */
#include "comm.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

static int g_rank = 0, g_size = 1, g_mpi = 0;
/* more ranks on this node than it has cores: the collectives wait with naps (wait_for) */
static int g_coop = 0;
/* the ranks on this process's node, and the cores the system counts there */
static int g_on_node = 1;
static long g_cores = 1;
static comm_stats g_stats;

int comm_node_ranks(void)
{
    return g_on_node;
}

long comm_node_cores(void)
{
    return g_cores;
}

int comm_naps(void)
{
    return g_coop;
}

comm_stats comm_stats_now(void)
{
    return g_stats;
}

void comm_partners_afresh(void)
{
    g_stats.partners = 0.0;
}

/* Accounting of one call: started by account_begin, its messages and bytes (as sent by this
 * rank) booked by account_end. */
static double account_begin(void)
{
    return MPI_Wtime();
}

/* How a rank waits for a collective when the node has more ranks than cores: MPI_Test for
 * COMM_SPIN seconds, then between naps that double from 1 us up to COMM_NAP_MAX ns. A rank that
 * only polls (Open MPI's wait, with sched_yield when the job has more ranks than slots) keeps
 * its core from the rank it waits for whenever anything else runs beside them (on 2 cores, a
 * 3-rank CD run of thousands of collectives per step beside one busy process was 40 times
 * slower than alone; with the naps, 1.6 times). With a core per rank the blocking collectives
 * are kept: the nonblocking ones cost more per call (bench/PROFILE.md, "Measured choices":
 * waiting ranks). */
#define COMM_SPIN 5e-5
#define COMM_NAP_MAX 100000L
static void wait_for(MPI_Request *req)
{
    int done = 0;
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done)
        return;
    double t0 = MPI_Wtime();
    long nap = 1000;
    while (!done) {
        if (MPI_Wtime() - t0 > COMM_SPIN) {
            nanosleep(&(struct timespec){0, nap}, NULL);
            nap = nap < COMM_NAP_MAX / 2 ? 2 * nap : COMM_NAP_MAX;
        }
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
    }
}

static void account_end(double t0, double messages, double bytes)
{
    g_stats.seconds += MPI_Wtime() - t0;
    g_stats.calls += 1.0;
    g_stats.messages += messages;
    g_stats.bytes += bytes;
}

/* A reduction of n values of size bytes each through rank 0: the others send theirs, rank 0
 * sends the result to each. */
static void account_reduction(double t0, int n, size_t size)
{
    double to = g_rank == 0 ? (double)(g_size - 1) : 1.0;
    account_end(t0, to, to * (double)n * (double)size);
    g_stats.ordered += 1.0;
}

int comm_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

status comm_init(int *argc, char ***argv, diag *err)
{
    if (!comm_launched())
        return CDLAB_OK;
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return diag_set(err, CDLAB_ERR_IO, "MPI_Init_thread failed");
    g_mpi = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    /* the ranks that share this node, against its cores */
    MPI_Comm node;
    int on_node = 1;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_size(node, &on_node);
        MPI_Comm_free(&node);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    g_on_node = on_node;
    g_cores = cores;
    g_coop = cores > 0 && on_node > cores;
#ifdef PR_SET_TIMERSLACK
    if (g_coop) /* the naps of wait_for to about a microsecond, not the default 50 */
        prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
#endif
    if (provided < MPI_THREAD_FUNNELED)
        return diag_set(err, CDLAB_ERR_IO,
                        "this MPI library does not support threads (MPI_THREAD_FUNNELED)");
    return CDLAB_OK;
}

void comm_finalize(void)
{
    if (g_mpi) {
        MPI_Finalize();
        g_mpi = 0;
    }
}

int comm_rank(void)
{
    return g_rank;
}

int comm_size(void)
{
    return g_size;
}

void comm_allreduce_ops(double *v, const comm_op *op, int n)
{
    if (g_size == 1 || n <= 0)
        return;
    int sums = 0;
    for (int k = 0; k < n; k++)
        sums += op[k] == COMM_SUM;
    if (sums == 0) {
        comm_allreduce_exact(v, op, n);
        return;
    }
    double t0 = account_begin();
    double *all = g_rank == 0 ? malloc((size_t)n * (size_t)g_size * sizeof *all) : NULL;
    if (g_rank == 0 && !all)
        comm_abort(3);
    MPI_Request rq;
    if (g_coop) {
        MPI_Igather(v, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq);
        wait_for(&rq);
    } else {
        MPI_Gather(v, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    if (g_rank == 0) {
        for (int r = 1; r < g_size; r++)
            for (int k = 0; k < n; k++) {
                double x = all[(size_t)r * (size_t)n + (size_t)k];
                v[k] = op[k] == COMM_SUM   ? v[k] + x
                       : op[k] == COMM_MAX ? (x > v[k] ? x : v[k])
                                           : (x < v[k] ? x : v[k]);
            }
        free(all);
    }
    if (g_coop) {
        MPI_Ibcast(v, n, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq);
        wait_for(&rq);
    } else {
        MPI_Bcast(v, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    account_reduction(t0, n, sizeof *v);
}

/* The messages a barrier costs a rank: about log2 P rounds of one message. */
static double barrier_messages(void)
{
    double m = 0.0;
    for (int p = 1; p < g_size; p *= 2)
        m += 1.0;
    return m;
}

/* One MPI reduction of n doubles with op, in place (the library's tree; naps when crowded). */
static void mpi_allreduce(double *v, int n, MPI_Op op)
{
    if (g_coop) {
        MPI_Request rq;
        MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, op, MPI_COMM_WORLD, &rq);
        wait_for(&rq);
    } else {
        MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, op, MPI_COMM_WORLD);
    }
}

void comm_allreduce_exact(double *v, const comm_op *op, int n)
{
    if (g_size == 1 || n <= 0)
        return;
    double t0 = account_begin(), few[32],
           *buf = 2 * n <= 32 ? few : malloc(2 * (size_t)n * sizeof *buf);
    if (!buf)
        comm_abort(3);
    int ns = 0, nm = 0; /* the sums first, then the maxima (a minimum as the maximum of -v) */
    for (int k = 0; k < n; k++)
        if (op[k] == COMM_SUM)
            buf[ns++] = v[k];
    for (int k = 0; k < n; k++)
        if (op[k] != COMM_SUM)
            buf[ns + nm++] = op[k] == COMM_MAX ? v[k] : -v[k];
    if (ns > 0)
        mpi_allreduce(buf, ns, MPI_SUM);
    if (nm > 0)
        mpi_allreduce(buf + ns, nm, MPI_MAX);
    for (int k = 0, a = 0, b = ns; k < n; k++)
        v[k] = op[k] == COMM_SUM ? buf[a++] : op[k] == COMM_MAX ? buf[b++] : -buf[b++];
    if (buf != few)
        free(buf);
    /* a tree each way: about log2 P messages of the values a call */
    double m = (double)((ns > 0) + (nm > 0)) * 2.0 * barrier_messages();
    account_end(t0, m, m * (double)n * sizeof *v);
}

/* comm_allreduce and comm_allreduce_exact_sum: every value with op, through
 * comm_allreduce_ops (which sends maxima and minima to the trees) or, exact, the trees. */
static void allreduce_one_op(double *v, int n, comm_op op, int exact)
{
    if (g_size == 1 || n <= 0)
        return;
    comm_op few[16], *ops = n <= 16 ? few : malloc((size_t)n * sizeof *ops);
    if (!ops)
        comm_abort(3);
    for (int k = 0; k < n; k++)
        ops[k] = op;
    if (exact)
        comm_allreduce_exact(v, ops, n);
    else
        comm_allreduce_ops(v, ops, n);
    if (ops != few)
        free(ops);
}

void comm_allreduce(double *v, int n, comm_op op)
{
    allreduce_one_op(v, n, op, 0);
}

void comm_allreduce_exact_sum(double *v, int n)
{
    allreduce_one_op(v, n, COMM_SUM, 1);
}

/* The exchanges talk only to the ranks they send to or receive from (the neighbouring boxes of a
 * halo or a migration), point to point; a rank that does not know what it receives learns it by
 * Hoefler, Siebert & Lumsdaine's nonblocking consensus (NBX, PPoPP 2010): synchronous sends,
 * probes for what comes, and a nonblocking barrier entered once its own sends are received, done
 * when the barrier is. A rank is at most one exchange ahead of another (it leaves an exchange
 * only after every rank has entered its barrier), so successive exchanges alternate two tags.
 * What is received lands in rank order, as an all-to-all puts it: the same bytes, the same
 * results. */
#define TAG_KNOWN 7301
#define TAG_NBX 7302
static unsigned g_nbx_round = 0;

/* Tests *done over n requests until all are done, with wait_for's naps when the node is
 * oversubscribed. */
static void wait_all(int n, MPI_Request *req)
{
    if (n == 0)
        return;
    if (!g_coop) {
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        return;
    }
    int done = 0;
    double t0 = MPI_Wtime();
    long nap = 1000;
    MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
    while (!done) {
        if (MPI_Wtime() - t0 > COMM_SPIN) {
            nanosleep(&(struct timespec){0, nap}, NULL);
            nap = nap < COMM_NAP_MAX / 2 ? 2 * nap : COMM_NAP_MAX;
        }
        MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
    }
}

/* Offsets of the segments of counts c into d (d[P] the total). */
static long offsets(const int *c, long *d)
{
    d[0] = 0;
    for (int r = 0; r < g_size; r++)
        d[r + 1] = d[r] + c[r];
    return d[g_size];
}

/* One received message of NBX, kept until the exchange knows every count. */
typedef struct nbx_msg {
    int from, n;
    double *v;
} nbx_msg;

static status nbx_receive(int tag, nbx_msg **got, int *ngot, int *cap, const MPI_Status *st,
                          diag *err)
{
    int n = 0;
    MPI_Get_count(st, MPI_DOUBLE, &n);
    if (*ngot == *cap) {
        int c = *cap ? 2 * *cap : 8;
        nbx_msg *m = realloc(*got, (size_t)c * sizeof *m);
        if (!m)
            return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate an exchange");
        *got = m;
        *cap = c;
    }
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate an exchange of %d values", n);
    MPI_Recv(v, n, MPI_DOUBLE, st->MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    (*got)[(*ngot)++] = (nbx_msg){st->MPI_SOURCE, n, v};
    return CDLAB_OK;
}

/* NBX: sends the segments, receives every rank's segment for this one (rcount[r] set); the
 * messages in *got, not yet in order. */
static status nbx(const double *send, const int *scount, const long *sd, int *rcount, nbx_msg **got,
                  int *ngot, diag *err)
{
    int P = g_size, tag = TAG_NBX + 2 * (int)(g_nbx_round++ & 1u), nsend = 0, cap = 0;
    MPI_Request *rq = malloc((size_t)P * sizeof *rq), bar = MPI_REQUEST_NULL;
    if (!rq)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate an exchange");
    for (int r = 0; r < P; r++) {
        rcount[r] = 0;
        if (r != g_rank && scount[r] > 0)
            MPI_Issend(send + sd[r], scount[r], MPI_DOUBLE, r, tag, MPI_COMM_WORLD, &rq[nsend++]);
    }
    int in_barrier = 0, done = 0;
    double t0 = MPI_Wtime();
    long nap = 1000;
    while (!done) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st);
        if (flag) { /* out of memory with a message waiting: the others cannot finish */
            if (nbx_receive(tag, got, ngot, &cap, &st, err) != CDLAB_OK)
                comm_abort(3);
            continue;
        }
        if (!in_barrier) {
            int sent = 0;
            MPI_Testall(nsend, rq, &sent, MPI_STATUSES_IGNORE);
            if (sent) {
                MPI_Ibarrier(MPI_COMM_WORLD, &bar);
                in_barrier = 1;
            }
        } else
            MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
        if (!done && g_coop && MPI_Wtime() - t0 > COMM_SPIN) {
            nanosleep(&(struct timespec){0, nap}, NULL);
            nap = nap < COMM_NAP_MAX / 2 ? 2 * nap : COMM_NAP_MAX;
        }
    }
    free(rq);
    for (int k = 0; k < *ngot; k++)
        rcount[(*got)[k].from] = (*got)[k].n;
    return CDLAB_OK;
}

status comm_exchange(const double *send, const int *scount, double **recv, int *rcount, int *rtotal,
                     diag *err)
{
    int P = g_size;
    *recv = NULL;
    if (P == 1) {
        rcount[0] = scount[0];
        *rtotal = scount[0];
        *recv = malloc((size_t)(scount[0] > 0 ? scount[0] : 1) * sizeof **recv);
        if (!*recv)
            return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate an exchange of %d values",
                            scount[0]);
        if (scount[0] > 0)
            memcpy(*recv, send, (size_t)scount[0] * sizeof **recv);
        return CDLAB_OK;
    }
    long *sd = malloc((size_t)(P + 1) * sizeof *sd), *rd = malloc((size_t)(P + 1) * sizeof *rd);
    if (!sd || !rd) {
        free(sd);
        free(rd);
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate an exchange");
    }
    offsets(scount, sd);
    double t0 = account_begin(), messages = barrier_messages(), bytes = 0.0;
    nbx_msg *got = NULL;
    int ngot = 0;
    status s = nbx(send, scount, sd, rcount, &got, &ngot, err);
    rcount[g_rank] = scount[g_rank];
    long total = offsets(rcount, rd);
    if (s == CDLAB_OK && total > 2147483647L)
        s = diag_set(err, CDLAB_ERR_NOMEM, "exchange of %ld values: too many", total);
    if (s == CDLAB_OK) {
        *recv = malloc((size_t)(total > 0 ? total : 1) * sizeof **recv);
        if (!*recv)
            s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate an exchange of %ld values", total);
    }
    if (s == CDLAB_OK) {
        *rtotal = (int)total;
        for (int k = 0; k < ngot; k++)
            if (got[k].n > 0)
                memcpy(*recv + rd[got[k].from], got[k].v, (size_t)got[k].n * sizeof **recv);
        if (scount[g_rank] > 0)
            memcpy(*recv + rd[g_rank], send + sd[g_rank], (size_t)scount[g_rank] * sizeof **recv);
    }
    double to = 0.0;
    for (int r = 0; r < P; r++)
        if (r != g_rank && scount[r] > 0) {
            to += 1.0;
            bytes += (double)scount[r] * sizeof *send;
        }
    account_end(t0, messages + to, bytes);
    g_stats.partners = fmax(g_stats.partners, to);
    for (int k = 0; k < ngot; k++)
        free(got[k].v);
    free(got);
    free(sd);
    free(rd);
    return s;
}

status comm_exchange_known(const double *send, const int *scount, double *recv, const int *rcount,
                           diag *err)
{
    int P = g_size;
    if (P == 1) {
        if (scount[0] > 0)
            memcpy(recv, send, (size_t)scount[0] * sizeof *recv);
        return CDLAB_OK;
    }
    long *sd = malloc((size_t)(P + 1) * sizeof *sd), *rd = malloc((size_t)(P + 1) * sizeof *rd);
    MPI_Request *rq = malloc((size_t)(2 * P) * sizeof *rq);
    if (!sd || !rd || !rq) {
        free(sd);
        free(rd);
        free(rq);
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate an exchange");
    }
    offsets(scount, sd);
    offsets(rcount, rd);
    double t0 = account_begin(), messages = 0.0, bytes = 0.0;
    int n = 0;
    for (int r = 0; r < P; r++)
        if (r != g_rank && rcount[r] > 0)
            MPI_Irecv(recv + rd[r], rcount[r], MPI_DOUBLE, r, TAG_KNOWN, MPI_COMM_WORLD, &rq[n++]);
    for (int r = 0; r < P; r++)
        if (r != g_rank && scount[r] > 0) {
            MPI_Isend(send + sd[r], scount[r], MPI_DOUBLE, r, TAG_KNOWN, MPI_COMM_WORLD, &rq[n++]);
            messages += 1.0;
            bytes += (double)scount[r] * sizeof *send;
        }
    if (scount[g_rank] > 0)
        memcpy(recv + rd[g_rank], send + sd[g_rank], (size_t)scount[g_rank] * sizeof *recv);
    wait_all(n, rq);
    account_end(t0, messages, bytes);
    g_stats.partners = fmax(g_stats.partners, messages);
    free(sd);
    free(rd);
    free(rq);
    return CDLAB_OK;
}

status comm_allgather(const double *v, int n, double **all, int *total, diag *err)
{
    int P = g_size;
    int *cnt = malloc((size_t)P * sizeof *cnt), *dsp = malloc((size_t)P * sizeof *dsp);
    if (!cnt || !dsp) {
        free(cnt);
        free(dsp);
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate a gather");
    }
    double t0 = P > 1 ? account_begin() : 0.0;
    MPI_Request rq;
    if (P == 1) {
        cnt[0] = n;
    } else if (g_coop) {
        MPI_Iallgather(&n, 1, MPI_INT, cnt, 1, MPI_INT, MPI_COMM_WORLD, &rq);
        wait_for(&rq);
    } else {
        MPI_Allgather(&n, 1, MPI_INT, cnt, 1, MPI_INT, MPI_COMM_WORLD);
    }
    long t = 0;
    for (int r = 0; r < P; r++) {
        dsp[r] = (int)t;
        t += cnt[r];
    }
    *all = malloc((size_t)(t > 0 ? t : 1) * sizeof **all);
    if (!*all || t > 2147483647L) {
        free(cnt);
        free(dsp);
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate a gather of %ld values", t);
    }
    *total = (int)t;
    if (P == 1 && n > 0)
        memcpy(*all, v, (size_t)n * sizeof *v);
    else if (P > 1 && g_coop) {
        MPI_Iallgatherv(v, n, MPI_DOUBLE, *all, cnt, dsp, MPI_DOUBLE, MPI_COMM_WORLD, &rq);
        wait_for(&rq);
    } else if (P > 1) {
        MPI_Allgatherv(v, n, MPI_DOUBLE, *all, cnt, dsp, MPI_DOUBLE, MPI_COMM_WORLD);
    }
    if (P > 1) /* the count, then the values, to each other rank (the calls as one) */
        account_end(t0, 2.0 * (P - 1), (double)(P - 1) * (sizeof n + (double)n * sizeof *v));
    free(cnt);
    free(dsp);
    return CDLAB_OK;
}

status comm_agree(status s, diag *err)
{
    return comm_agree_flag(s, NULL, err);
}

/* The worst status's rank sends its message to the others (comm_agree's second half). */
static status agreed(status worst, int from, diag *err)
{
    if (worst == CDLAB_OK)
        return CDLAB_OK;
    double t0 = account_begin();
    MPI_Request rq;
    if (g_coop) {
        MPI_Ibcast(err->msg, (int)sizeof err->msg, MPI_CHAR, from, MPI_COMM_WORLD, &rq);
        wait_for(&rq);
    } else {
        MPI_Bcast(err->msg, (int)sizeof err->msg, MPI_CHAR, from, MPI_COMM_WORLD);
    }
    double to = g_rank == from ? (double)(g_size - 1) : 0.0;
    account_end(t0, to, to * sizeof err->msg);
    return worst;
}

status comm_agree_values(status s, int *flag, double *v, const comm_op *op, int n, diag *err)
{
    if (g_size == 1)
        return s;
    /* the status and the rank as one value whose maximum is the largest status from the
     * lowest rank that has it (exact in a double: the statuses are a handful of small codes) */
    const double span = 4294967296.0;
    double buf[COMM_AGREE_VALUES_MAX + 2];
    comm_op ops[COMM_AGREE_VALUES_MAX + 2];
    if (n < 0 || n > COMM_AGREE_VALUES_MAX)
        comm_abort(3);
    for (int k = 0; k < n; k++)
        buf[k] = v[k], ops[k] = op[k];
    buf[n] = (double)s * span + (span - 1.0 - g_rank), ops[n] = COMM_MAX;
    buf[n + 1] = flag ? *flag : 0, ops[n + 1] = COMM_MAX;
    comm_allreduce_ops(buf, ops, n + 2);
    for (int k = 0; k < n; k++)
        v[k] = buf[k];
    if (flag)
        *flag = (int)buf[n + 1];
    double worst = floor(buf[n] / span);
    return agreed((status)worst, (int)(span - 1.0 - (buf[n] - worst * span)), err);
}

status comm_agree_flag(status s, int *flag, diag *err)
{
    if (g_size == 1)
        return s;
    int mine[4] = {(int)s, g_rank, flag ? *flag : 0, g_rank}, worst[4], pairs = flag ? 2 : 1;
    double t0 = account_begin();
    /* the largest status; among the ranks with it, the lowest (and the largest flag) */
    MPI_Request rq;
    if (g_coop) {
        MPI_Iallreduce(mine, worst, pairs, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD, &rq);
        wait_for(&rq);
    } else {
        MPI_Allreduce(mine, worst, pairs, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
    }
    /* a tree each way, as comm_allreduce_exact's */
    double m = 2.0 * barrier_messages();
    account_end(t0, m, m * (double)pairs * 2.0 * sizeof *mine);
    if (flag)
        *flag = worst[2];
    /* MPI_MAXLOC gives the lowest rank among those with the largest value */
    return agreed((status)worst[0], worst[1], err);
}

void comm_barrier(void)
{
    if (g_mpi) {
        double t0 = account_begin();
        if (g_coop) {
            MPI_Request rq;
            MPI_Ibarrier(MPI_COMM_WORLD, &rq);
            wait_for(&rq);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
        account_end(t0, 0.0, 0.0);
    }
}

void comm_abort(int code)
{
    if (g_mpi)
        MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}
