/* clock.c: the time the compile stages report (TXC_TIME_PASSES, txc(1)). */
#include <time.h>

#include "lang/lang.h"

double
clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
