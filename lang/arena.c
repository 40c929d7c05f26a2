/* arena.c: bump allocation in large chunks, freed all at once.
 *
 * Every AST node, name and IR node comes from an arena; no stage frees
 * single objects, but a question whose answer points into nothing it
 * built (a proof: lower/lin_prove.c) returns the arena to a mark.  Chunks grow geometrically, and a request larger than a
 * chunk gets a chunk of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang.h"

typedef struct Chunk {
	struct Chunk *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
} Chunk;

struct Arena {
	Chunk *head;
	size_t next_size;
};

Arena *perm;

Arena *
arena_new(void)
{
	Arena *a = calloc(1, sizeof *a);
	if (!a)
		diag_fatal("out of memory");
	a->next_size = 64 * 1024;
	return a;
}

void
arena_free(Arena *a)
{
	if (!a)
		return;
	for (Chunk *c = a->head, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	free(a);
}

void *
arena_alloc(Arena *a, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	Chunk *c = a->head;
	if (!c || c->size - c->used < size) {
		size_t want = a->next_size;
		if (want < size)
			want = size;
		c = malloc(sizeof *c + want);
		if (!c)
			diag_fatal("out of memory");
		c->size = want;
		c->used = 0;
		c->next = a->head;
		a->head = c;
		if (a->next_size < (64u << 20))
			a->next_size *= 2;
	}
	void *p = c->data + c->used;
	c->used += size;
	memset(p, 0, size);
	return p;
}

ArenaMark
arena_mark(Arena *a)
{
	return (ArenaMark){ a->head, a->head ? a->head->used : 0 };
}

/* Everything allocated since m is dropped: the chunks begun since are
 * freed and the one that was current is cut back. */
void
arena_release(Arena *a, ArenaMark m)
{
	while (a->head && a->head != m.chunk) {
		Chunk *n = a->head->next;
		free(a->head);
		a->head = n;
	}
	if (a->head)
		a->head->used = m.used;
}

char *
arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *
arena_strdup(Arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *
arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap, aq;
	va_start(ap, fmt);
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	char *p = arena_alloc(a, (size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, aq);
	va_end(aq);
	return p;
}

void *
arena_push(Arena *a, void *data_ptr, int *len, int *cap, size_t elem)
{
	void **data = data_ptr;
	if (*len == *cap) {
		int ncap = *cap ? *cap * 2 : 4;
		void *n = arena_alloc(a, elem * (size_t)ncap);
		if (*len)
			memcpy(n, *data, elem * (size_t)*len);
		*data = n;
		*cap = ncap;
	}
	unsigned char *p = (unsigned char *)*data + elem * (size_t)(*len)++;
	memset(p, 0, elem);
	return p;
}
