/* options.c: the command line of `txc tune` (txc(1) TUNE): options into a
 * Tune, each checked, with a one-line message and exit status 1 for a bad
 * one, as txc's own options.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

static void
usage(FILE *fp)
{
	fputs("usage: txc tune FILE.tx -k KERNEL [-s SCHEDULE] -D SIZE=N ... [options]\n"
	    "  -k KERNEL            the kernel (default: the file's first)\n"
	    "  -s NAME              the schedule template (default: the unnamed one)\n"
	    "  -D NAME=VALUE        a size (required for each) or scalar parameter\n"
	    "  --trials=N           candidates to measure (default 64)\n"
	    "  --threads=T          the thread count the winner is confirmed at (default:\n"
	    "                       libtxrt's); the search itself runs on one thread\n"
	    "  --log=FILE           append a JSON line per measurement to FILE\n"
	    "  --seed=S             the search's random seed (default 1)\n"
	    "  --model=M            auto (default: XGBoost when libxgboost.so.0 loads),\n"
	    "                       xgboost (required) or none (random search)\n"
	    "  -o FILE              write the winner as an ordinary schedule to FILE\n"
	    "  --name=NAME          the written schedule's name (default tuned)\n"
	    "  --samples=N          interleaved samples per comparison (default 7)\n"
	    "  --min-sample-ms=X    a sample lasts at least X ms (default 1)\n"
	    "  --top=N              points confirmed at --threads (default 3)\n"
	    "  --timeout=S          seconds a candidate may take (default 20)\n"
	    "  --tolerance=X        largest relative difference accepted (default 1e-3)\n"
	    "  --mpi                under mpirun or srun: rank 0 searches, the other ranks\n"
	    "                       measure (./configure --with-mpi)\n"
	    "  --target=cpu|vta|cuda  the schedules tuned (cpu: timed on this machine;\n"
	    "                       vta: modelled cycles of libtxrt's VTA simulator;\n"
	    "                       cuda: timed on this machine's GPU)\n"
	    "  --cuda-arch=SM       as for txc (--target=cuda)\n"
	    "  --no-layout          as for txc: calls keep their kernels' layout\n"
	    "  --cpu=NAME --features=LIST -O0..3 -I DIR   as for txc\n", fp);
}

static int
bad(const char *fmt, const char *arg)
{
	return cmdline_bad("tune", fmt, arg);
}

int
options_parse(Tune *t, int argc, char **argv)
{
	enum { O_TRIALS = 256, O_THREADS, O_LOG, O_SEED, O_NAME, O_SAMPLES, O_MINMS, O_TOP,
		O_TIMEOUT, O_TOL, O_TARGET, O_CPU, O_FEAT, O_MODEL, O_MPI, O_ARCH, O_NOLAYOUT };
	static const struct option lo[] = {
		{ "trials", required_argument, NULL, O_TRIALS },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "log", required_argument, NULL, O_LOG },
		{ "seed", required_argument, NULL, O_SEED },
		{ "name", required_argument, NULL, O_NAME },
		{ "samples", required_argument, NULL, O_SAMPLES },
		{ "min-sample-ms", required_argument, NULL, O_MINMS },
		{ "top", required_argument, NULL, O_TOP },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "tolerance", required_argument, NULL, O_TOL },
		{ "target", required_argument, NULL, O_TARGET },
		{ "cuda-arch", required_argument, NULL, O_ARCH },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "features", required_argument, NULL, O_FEAT },
		{ "model", required_argument, NULL, O_MODEL },
		{ "mpi", no_argument, NULL, O_MPI },
		{ "no-layout", no_argument, NULL, O_NOLAYOUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static int capd, capv, capi;
	int c, rc;
	double v;

	t->trials = 64;
	t->samples = 7;
	t->top = 3;
	t->seed = 1;
	t->timeout = 20;
	t->tolerance = 1e-3;
	t->min_sample_ms = 1;
	t->name = "tuned";
	t->target = "cpu";
	t->llvm.opt_level = 3;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":D:k:s:I:O:o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'D': {
			const char *name;
			CmdValue dv;
			if (!cmdline_define(optarg, &name, &dv))
				return bad("bad -D '%s': expected NAME=VALUE", optarg);
			int n = t->ndefs;
			*ARENA_PUSH(perm, t->names, t->ndefs, capd) = name;
			*ARENA_PUSH(perm, t->values, n, capv) = dv;
			break;
		}
		case 'k': t->kernel = intern_cstr(optarg); break;
		case 's': t->schedule = intern_cstr(optarg); break;
		case 'o': t->out = optarg; break;
		case 'I': *ARENA_PUSH(perm, t->drv.incdirs, t->drv.nincdirs, capi) = optarg; break;
		case 'O':
			if (optarg[0] < '0' || optarg[0] > '3' || optarg[1])
				return bad("bad -O%s: use -O0 to -O3", optarg);
			t->llvm.opt_level = optarg[0] - '0';
			break;
		case O_TRIALS:
			if (!cmdline_num(optarg, 1, 1e7, &v) || v != floor(v))
				return bad("bad --trials '%s': expected a positive integer", optarg);
			t->trials = (int)v;
			break;
		case O_THREADS:
			if (!cmdline_num(optarg, 1, 4096, &v) || v != floor(v))
				return bad("bad --threads '%s': expected a positive integer", optarg);
			t->threads = (int)v;
			break;
		case O_LOG: t->log = optarg; break;
		case O_SEED:
			if (!cmdline_num(optarg, 0, UINT_MAX, &v) || v != floor(v))
				return bad("bad --seed '%s': expected a non-negative integer", optarg);
			t->seed = (unsigned)v;
			break;
		case O_NAME:
			for (const char *p = optarg; *p; p++)
				if (!(*p == '_' || ((*p | 32) >= 'a' && (*p | 32) <= 'z') ||
				    (p > optarg && *p >= '0' && *p <= '9')))
					return bad("bad --name '%s': expected a schedule name", optarg);
			if (!*optarg)
				return bad("bad --name '%s': expected a schedule name", optarg);
			t->name = optarg;
			break;
		case O_SAMPLES:
			if (!cmdline_num(optarg, 3, 64, &v) || v != floor(v))
				return bad("bad --samples '%s': expected an integer from 3 to 64", optarg);
			t->samples = (int)v;
			break;
		case O_MINMS:
			if (!cmdline_num(optarg, 0.001, 10000, &v))
				return bad("bad --min-sample-ms '%s': expected a positive number of ms", optarg);
			t->min_sample_ms = v;
			break;
		case O_TOP:
			if (!cmdline_num(optarg, 1, 100, &v) || v != floor(v))
				return bad("bad --top '%s': expected an integer from 1 to 100", optarg);
			t->top = (int)v;
			break;
		case O_TIMEOUT:
			if (!cmdline_num(optarg, 0.01, 1e6, &v))
				return bad("bad --timeout '%s': expected a positive number of seconds", optarg);
			t->timeout = v;
			break;
		case O_TOL:
			if (!cmdline_num(optarg, 0, 1e300, &v))
				return bad("bad --tolerance '%s': expected a non-negative number", optarg);
			t->tolerance = v;
			break;
		case O_TARGET:
			if (!strcmp(optarg, "cpu") || !strcmp(optarg, "vta") || !strcmp(optarg, "cuda"))
				t->target = optarg;
			else
				return bad("bad --target '%s': use cpu, vta or cuda", optarg);
			break;
		case O_ARCH:
			if (strncmp(optarg, "sm_", 3) || !optarg[3])
				return bad("bad --cuda-arch '%s': expected an SM name such as sm_80", optarg);
			t->cuda_arch = optarg;
			break;
		case O_MPI: t->mpi = true; break;
		case O_NOLAYOUT: t->no_layout = true; break;
		case O_MODEL:
			if (!strcmp(optarg, "auto"))
				t->model = MODEL_AUTO;
			else if (!strcmp(optarg, "xgboost"))
				t->model = MODEL_XGBOOST;
			else if (!strcmp(optarg, "none"))
				t->model = MODEL_NONE;
			else
				return bad("bad --model '%s': use auto, xgboost or none", optarg);
			break;
		case O_CPU: t->llvm.cpu = optarg; break;
		case O_FEAT: t->llvm.features = optarg; break;
		case 'h': usage(stdout); return 0;
		default: return cmdline_getopt_error("tune", c, argv);
		}
	}
	if ((rc = cmdline_input("tune", argc, argv, true)) >= 0)
		return rc;
	t->input = argv[optind];
	if (!strcmp(t->input, "-"))
		return bad("%s", "the input must be a file (the tuning log and -o name it)");
	return -1;
}
