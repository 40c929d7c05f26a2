/* fiber.c: fiber stacks and switches for the CUDA emulator (fiber.h).
 *
 * Stacks are mmap'd with a PROT_NONE guard page below them, so that a
 * kernel whose locals overflow one faults instead of writing into the
 * next.  Pages are touched only as a stack grows: a thousand fibers cost
 * their virtual space and a page or two each.
 *
 * The x86-64 switch (fiber_asm_swap) pushes the callee-saved registers
 * and the floating-point control words on the running stack, stores the
 * stack pointer in the fiber being left, loads the other's and pops the
 * same.  A new fiber's stack is laid out as if it had switched away at
 * fiber_asm_entry, which calls fiber_main(f) with the stack aligned as the
 * ABI requires.  That costs about as much as a function call; swapcontext
 * makes a system call (the signal mask) each way.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fiber.h"

#if defined(__SANITIZE_ADDRESS__)
#define FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIBER_ASAN 1
#endif
#endif
#ifdef FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

/* the fiber being switched from and to (the OS thread's own is learnt
 * from the first, a new fiber finds itself in the second) */
static _Thread_local Fiber *fiber_from, *fiber_to;

int
fiber_init(Fiber *f, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	memset(f, 0, sizeof *f);
	size = (size + page - 1) & ~(page - 1);
	void *map = mmap(NULL, size + page, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return -1;
	if (mprotect(map, page, PROT_NONE) != 0) {
		munmap(map, size + page);
		return -1;
	}
	f->map = map;
	f->mapsize = size + page;
	f->stack = f->map + page;
	f->size = size;
#ifdef TXRT_FIBER_UCONTEXT
	if (getcontext(&f->uc) != 0) {
		fiber_fini(f);
		return -1;
	}
#endif
	return 0;
}

void
fiber_fini(Fiber *f)
{
	if (f->map)
		munmap(f->map, f->mapsize);
	memset(f, 0, sizeof *f);
}

/* Around every switch: ASan learns the stack switched to (and, once the
 * switch is done, the one left: how it learns the OS thread's). */
static inline void
before_switch(Fiber *from, Fiber *to, int exiting)
{
	fiber_from = from;
	fiber_to = to;
#ifdef FIBER_ASAN
	__sanitizer_start_switch_fiber(exiting ? NULL : &from->fake_stack, to->stack, to->size);
#else
	(void)exiting;
#endif
}

#ifdef FIBER_ASAN
/* not inlined: its locals (whose addresses ASan takes) then live in a
 * frame that returns, not in fiber_main's, which never does and would
 * leave their redzones poisoned on the stack for the next start */
__attribute__((noinline))
#endif
static void
after_switch(Fiber *self)
{
#ifdef FIBER_ASAN
	const void *bottom;
	size_t size;

	__sanitizer_finish_switch_fiber(self->fake_stack, &bottom, &size);
	if (fiber_from && !fiber_from->map) {
		fiber_from->stack = (char *)(uintptr_t)bottom;
		fiber_from->size = size;
	}
#else
	(void)self;
#endif
}

#ifdef TXRT_FIBER_UCONTEXT

static void
fiber_main_uc(void)
{
	Fiber *f = fiber_to;

	after_switch(f);
	f->fn(f->arg);
	f->live = 0;
	before_switch(f, f->back, 1);
	setcontext(&f->back->uc);
	abort();
}

void
fiber_start(Fiber *f, void (*fn)(void *), void *arg, Fiber *back)
{
#ifdef FIBER_ASAN
	if (f->live)   /* abandoned: its frames left poisoned redzones behind */
		__asan_unpoison_memory_region(f->stack, f->size);
#endif
	f->fn = fn;
	f->arg = arg;
	f->back = back;
	f->live = 1;
	f->fake_stack = NULL;
	f->uc.uc_stack.ss_sp = f->stack;
	f->uc.uc_stack.ss_size = f->size;
	f->uc.uc_link = NULL;
	makecontext(&f->uc, fiber_main_uc, 0);
}

void
fiber_switch(Fiber *from, Fiber *to)
{
	before_switch(from, to, 0);
	swapcontext(&from->uc, &to->uc);
	after_switch(from);
}

#else /* x86-64 assembly */

void fiber_asm_swap(void **save_sp, void *load_sp);
void fiber_asm_entry(void);

__asm__(
	".text\n"
	".p2align 4\n"
	".globl fiber_asm_swap\n"
	".hidden fiber_asm_swap\n"
	".type fiber_asm_swap,@function\n"
	"fiber_asm_swap:\n"
	"	pushq %rbp\n"
	"	pushq %rbx\n"
	"	pushq %r12\n"
	"	pushq %r13\n"
	"	pushq %r14\n"
	"	pushq %r15\n"
	"	subq $8, %rsp\n"
	"	stmxcsr (%rsp)\n"
	"	fnstcw 4(%rsp)\n"
	"	movq %rsp, (%rdi)\n"
	"	movq %rsi, %rsp\n"
	"	ldmxcsr (%rsp)\n"
	"	fldcw 4(%rsp)\n"
	"	addq $8, %rsp\n"
	"	popq %r15\n"
	"	popq %r14\n"
	"	popq %r13\n"
	"	popq %r12\n"
	"	popq %rbx\n"
	"	popq %rbp\n"
	"	ret\n"
	".size fiber_asm_swap, .-fiber_asm_swap\n"
	".p2align 4\n"
	".globl fiber_asm_entry\n"
	".hidden fiber_asm_entry\n"
	".type fiber_asm_entry,@function\n"
	"fiber_asm_entry:\n"
	"	movq %r13, %rdi\n"
	"	callq *%r12\n"
	"	ud2\n"
	".size fiber_asm_entry, .-fiber_asm_entry\n");

static void
fiber_main(Fiber *f)
{
	after_switch(f);
	f->fn(f->arg);
	f->live = 0;
	before_switch(f, f->back, 1);
	fiber_asm_swap(&f->sp, f->back->sp);
	abort();
}

void
fiber_start(Fiber *f, void (*fn)(void *), void *arg, Fiber *back)
{
#ifdef FIBER_ASAN
	if (f->live)   /* abandoned: its frames left poisoned redzones behind */
		__asan_unpoison_memory_region(f->stack, f->size);
	else           /* what is written below */
		__asan_unpoison_memory_region(f->stack + f->size - 128, 128);
#endif
	f->fn = fn;
	f->arg = arg;
	f->back = back;
	f->live = 1;
	f->fake_stack = NULL;

	/* what fiber_asm_swap pops: the control words, r15, r14, r13 (the
	 * argument), r12 (the function), rbx, rbp (0: the end of the frame
	 * chain), the return address; fiber_asm_entry then runs with the
	 * stack 16-byte aligned */
	uintptr_t top = ((uintptr_t)(f->stack + f->size)) & ~(uintptr_t)15;
	uint64_t *sp = (uint64_t *)(top - 80);
	uint32_t ctl[2] = { 0x1f80, 0x037f };   /* MXCSR, x87 control word: the defaults */
	memcpy(&sp[0], ctl, sizeof ctl);
	sp[1] = 0;
	sp[2] = 0;
	sp[3] = (uint64_t)(uintptr_t)f;
	sp[4] = (uint64_t)(uintptr_t)fiber_main;
	sp[5] = 0;
	sp[6] = 0;
	sp[7] = (uint64_t)(uintptr_t)fiber_asm_entry;
	f->sp = sp;
}

void
fiber_switch(Fiber *from, Fiber *to)
{
	before_switch(from, to, 0);
	fiber_asm_swap(&from->sp, to->sp);
	after_switch(from);
}

#endif
