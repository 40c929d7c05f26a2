/* gpu.c: the GPU as txc tune --target=cuda and tuning logs see it.
 *
 * Before a cuda search starts, gpu_probe asks a child process whether
 * libtxrt finds a GPU and what it is called (cuDeviceGetName): the tuner
 * itself must not load the CUDA driver, since it forks worker processes
 * afterwards and CUDA does not survive a fork.  Without a GPU the search
 * cannot time anything and txc tune stops with the reason.  libtxrt's
 * emulator checks cuda kernels but its timings mean nothing, so it is
 * refused too, except under TXC_TUNE_CUDA_EMULATE=1, a switch for the
 * test suite that runs the whole search in it (txc(1) ENVIRONMENT).
 *
 * A log's records name the machine that measured them: the CPU for cpu
 * and vta schedules, the GPU for cuda ones.  tune_machine gives the name
 * a compile with --tuning-log matches records against.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tune/tune.h"

#include "rt/txrt.h"

bool
gpu_emulate_switch(void)
{
	const char *e = getenv("TXC_TUNE_CUDA_EMULATE");
	return e && *e && strcmp(e, "0");
}

/* In the child: the GPU's name, or why there is none. */
static bool
probe_here(bool emulate, char *text, size_t cap)
{
	if (emulate) {
		txrt_cuda_set_mode(TXRT_CUDA_EMULATE);
		snprintf(text, cap, "%s", txrt_cuda_device_name());
		return true;
	}
	switch (txrt_cuda_mode()) {
	case TXRT_CUDA_DEVICE: {
		const char *name = txrt_cuda_device_name();
		if (strcmp(name, "none")) {
			snprintf(text, cap, "%s", name);
			return true;
		}
		break;
	}
	case TXRT_CUDA_EMULATE:
		snprintf(text, cap, "TXRT_CUDA=emulate chooses libtxrt's emulator, whose timings "
		    "mean nothing");
		return false;
	default:
		break;
	}
	/* libtxrt says why in the error of a call that needs the device:
	 * "txrt_cuda_malloc: no CUDA device: REASON; set TXRT_CUDA=emulate ..." */
	void *p = txrt_cuda_malloc(1);
	if (p) {   /* it came up after all */
		txrt_cuda_free(p);
		snprintf(text, cap, "%s", txrt_cuda_device_name());
		return true;
	}
	const char *e = txrt_last_error(), *from = strstr(e, "no CUDA device: ");
	from = from ? from + strlen("no CUDA device: ") : e;
	const char *end = strstr(from, "; set TXRT_CUDA");
	int n = end ? (int)(end - from) : (int)strlen(from);
	snprintf(text, cap, "%.*s", n, *from ? from : "no CUDA device");
	return false;
}

bool
gpu_probe(bool emulate, char *text, size_t cap)
{
	struct { int ok; char text[256]; } rep = { 0, "" };
	int fd[2];
	if (pipe(fd)) {
		snprintf(text, cap, "cannot start a process to look for it: %s", strerror(errno));
		return false;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(text, cap, "cannot start a process to look for it: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return false;
	}
	if (pid == 0) {
		close(fd[0]);
		rep.ok = probe_here(emulate, rep.text, sizeof rep.text);
		ssize_t w = write(fd[1], &rep, sizeof rep);
		_exit(w == (ssize_t)sizeof rep ? 0 : 1);
	}
	close(fd[1]);
	size_t got = 0;
	while (got < sizeof rep) {
		ssize_t r = read(fd[0], (char *)&rep + got, sizeof rep - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got < sizeof rep) {
		snprintf(text, cap, "the process that looked for it %s",
		    WIFSIGNALED(st) ? "crashed" : "did not answer");
		return false;
	}
	rep.text[sizeof rep.text - 1] = 0;
	snprintf(text, cap, "%s", rep.text);
	return rep.ok != 0;
}

const char *
tune_machine(const char *target)
{
	if (strcmp(target, "cuda"))
		return tunelog_cpu();
	switch (txrt_cuda_mode()) {
	case TXRT_CUDA_DEVICE: {
		const char *name = txrt_cuda_device_name();
		return strcmp(name, "none") ? name : NULL;
	}
	case TXRT_CUDA_EMULATE:
		return txrt_cuda_device_name();   /* "emulator": records made under the test switch */
	default:
		return NULL;   /* no GPU here: a compile for another machine takes any GPU's records */
	}
}
