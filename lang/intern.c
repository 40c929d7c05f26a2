/* intern.c: interned names, so that names compare by pointer.
 *
 * An open-addressing hash table of strings copied into the perm arena.
 */
#include <stdlib.h>
#include <string.h>

#include "lang.h"

static const char **table;
static size_t cap, count;

static uint64_t
hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211u;
	return h;
}

static void
grow(void)
{
	size_t ncap = cap ? cap * 2 : 1024;
	const char **n = calloc(ncap, sizeof *n);
	if (!n)
		diag_fatal("out of memory");
	for (size_t i = 0; i < cap; i++) {
		if (!table[i])
			continue;
		size_t j = hash(table[i], strlen(table[i])) & (ncap - 1);
		while (n[j])
			j = (j + 1) & (ncap - 1);
		n[j] = table[i];
	}
	free(table);
	table = n;
	cap = ncap;
}

const char *
intern(const char *s, size_t len)
{
	if (2 * (count + 1) > cap)
		grow();
	if (!perm)
		perm = arena_new();
	size_t j = hash(s, len) & (cap - 1);
	for (; table[j]; j = (j + 1) & (cap - 1))
		if (strncmp(table[j], s, len) == 0 && table[j][len] == 0)
			return table[j];
	table[j] = arena_strndup(perm, s, len);
	count++;
	return table[j];
}

const char *
intern_cstr(const char *s)
{
	return intern(s, strlen(s));
}
