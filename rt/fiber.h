/* fiber.h: user-space threads (fibers) for libtxrt's CUDA emulator.
 *
 * A fiber is a stack and the registers saved when it last switched away.
 * The emulator runs each thread of a CUDA block as one, on the OS thread
 * that launched the kernel: a barrier switches to the next.  On x86-64 a
 * switch is a few instructions of assembly (callee-saved registers, the
 * stack pointer, MXCSR and the x87 control word); elsewhere, or with
 * -DTXRT_FIBER_UCONTEXT, it is swapcontext(3).  Under AddressSanitizer
 * every switch tells ASan which stack it moves to (__sanitizer_start_-
 * and _finish_switch_fiber); x86-64 keeps the assembly there too, since
 * ASan intercepts swapcontext with a warning on stderr ("ASan doesn't
 * fully support makecontext/swapcontext") and clears the shadow of the
 * whole stack switched to at every switch.
 */
#ifndef TXRT_FIBER_H
#define TXRT_FIBER_H

#include <stddef.h>

#if (!defined(__x86_64__) || !defined(__GNUC__)) && !defined(TXRT_FIBER_UCONTEXT)
#define TXRT_FIBER_UCONTEXT 1
#endif
#ifdef TXRT_FIBER_UCONTEXT
#include <ucontext.h>
#endif

typedef struct Fiber Fiber;
struct Fiber {
	void *sp;                /* the stack pointer saved by the assembly switch */
#ifdef TXRT_FIBER_UCONTEXT
	ucontext_t uc;
#endif
	char *map;               /* the stack's mapping, guard page first (NULL: the OS thread's) */
	size_t mapsize;
	char *stack;             /* the usable stack (for the OS thread's: learnt under ASan) */
	size_t size;
	void (*fn)(void *);      /* what the fiber runs, and where it goes when fn returns */
	void *arg;
	Fiber *back;
	int live;                /* started and fn not returned yet */
	void *fake_stack;        /* ASan's fake stack, saved while switched away */
};

/* Maps a stack of `size` bytes (and a guard page) for f; 0 or -1. */
int fiber_init(Fiber *f, size_t size);
void fiber_fini(Fiber *f);
/* Makes the next switch to f run fn(arg) from the top of its stack;
 * when fn returns, f switches to `back` and is finished.  A fiber that
 * was abandoned mid-way (switched away from and never resumed) may be
 * started again. */
void fiber_start(Fiber *f, void (*fn)(void *), void *arg, Fiber *back);
/* Saves the running fiber in `from` (a zeroed Fiber for the OS thread's
 * own stack) and resumes `to`. */
void fiber_switch(Fiber *from, Fiber *to);

#endif
