/* spread.c: txc tune's measurements spread over MPI ranks (--mpi).
 *
 *     mpirun -n K txc tune --mpi FILE.tx ...      (or srun under Slurm)
 *
 * Every rank runs the same command line, so each loads and checks the
 * program itself and starts its own worker process (worker.c).  Rank 0
 * searches, trains the model and writes the log; it sends each of the
 * other ranks a candidate at a time (the point, the incumbent, the thread
 * count, the time limit) and gets back the measurement and the CPU the
 * rank runs on, which the log records (a record from another CPU model is
 * another task).  A candidate that crashes or hangs takes down only that
 * rank's worker, which the rank restarts.  Built only with ./configure
 * --with-mpi (MPICH); without it --mpi is an error that says so.
 */
#include <stdio.h>
#include <string.h>

#include "tune/tune.h"

#ifdef TXC_MPI
#include <mpi.h>

enum { TAG_REQ = 1, TAG_REP = 2, TAG_STOP = 3 };

typedef struct {
	int cand[TUNE_MAX_KNOBS];
	int inc[TUNE_MAX_KNOBS];
	int threads;
	double timeout;
} SpreadReq;

static int nranks;

bool
spread_init(int *rank, int *size, char *why, size_t cap)
{
	(void)why;
	(void)cap;
	MPI_Init(NULL, NULL);
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	nranks = *size;
	return true;
}

void
spread_serve(Worker *w, const char *machine)
{
	for (;;) {
		SpreadReq rq;
		MPI_Status st;
		MPI_Recv(&rq, (int)sizeof rq, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		if (st.MPI_TAG == TAG_STOP)
			break;
		Meas m;
		worker_measure(w, rq.cand, rq.inc, rq.threads, rq.timeout, &m);
		if (!m.cpu[0])   /* else the worker named it (cuda: the GPU) */
			snprintf(m.cpu, sizeof m.cpu, "%s", machine);
		MPI_Send(&m, (int)sizeof m, MPI_BYTE, 0, TAG_REP, MPI_COMM_WORLD);
	}
}

void
spread_measure(int (*pts)[TUNE_MAX_KNOBS], int n, const int *inc, int threads, double timeout,
    Meas *out)
{
	/* ranks 1..nranks-1, one candidate each at a time, in order */
	for (int i = 0; i < n; i += nranks - 1) {
		int k = n - i < nranks - 1 ? n - i : nranks - 1;
		for (int j = 0; j < k; j++) {
			SpreadReq rq = { .threads = threads, .timeout = timeout };
			memcpy(rq.cand, pts[i + j], sizeof rq.cand);
			memcpy(rq.inc, inc, sizeof rq.inc);
			MPI_Send(&rq, (int)sizeof rq, MPI_BYTE, 1 + j, TAG_REQ, MPI_COMM_WORLD);
		}
		for (int j = 0; j < k; j++)
			MPI_Recv(&out[i + j], (int)sizeof out[i + j], MPI_BYTE, 1 + j, TAG_REP,
			    MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
}

int
spread_width(void)
{
	return nranks > 1 ? nranks - 1 : 1;
}

void
spread_finish(bool root)
{
	if (root) {
		SpreadReq rq = { .threads = 1 };
		for (int r = 1; r < nranks; r++)
			MPI_Send(&rq, (int)sizeof rq, MPI_BYTE, r, TAG_STOP, MPI_COMM_WORLD);
	}
	MPI_Finalize();
}

#else

bool
spread_init(int *rank, int *size, char *why, size_t cap)
{
	*rank = 0;
	*size = 1;
	snprintf(why, cap, "this txc was built without MPI (./configure --with-mpi, with "
	    "Debian's libmpich-dev)");
	return false;
}

void
spread_serve(Worker *w, const char *machine)
{
	(void)w;
	(void)machine;
}

void
spread_measure(int (*pts)[TUNE_MAX_KNOBS], int n, const int *inc, int threads, double timeout,
    Meas *out)
{
	(void)pts;
	(void)n;
	(void)inc;
	(void)threads;
	(void)timeout;
	(void)out;
}

int
spread_width(void)
{
	return 1;
}

void
spread_finish(bool root)
{
	(void)root;
}

#endif
