/* pb.c: the protobuf wire format, as much of it as onnx.proto uses.
 *
 * A message is a sequence of fields, each a varint key (field number << 3
 * | wire type) and a value: a varint (wire 0), 8 bytes (1), a length and
 * that many bytes (2: strings, bytes, sub-messages, packed repeated
 * scalars) or 4 bytes (5).  Groups (3, 4) are refused.  Nothing is copied:
 * byte values point into the file.  Every read is checked against the end
 * of its range; the first error is kept with its byte offset.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onnx/onnx.h"

PbReader
pb_reader(const unsigned char *base, size_t len, char **errp)
{
	PbReader r = { .base = base, .p = base, .end = base + len, .errp = errp };
	return r;
}

PbReader
pb_sub(PbReader *r, const PbField *f)
{
	PbReader s = *r;
	s.p = f->data;
	s.end = f->data + f->len;
	return s;
}

void
pb_error(PbReader *r, size_t at, const char *fmt, ...)
{
	if (*r->errp)
		return;
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	*r->errp = arena_printf(perm, "at byte %zu: %s", at, msg);
	r->p = r->end;
}

static bool
varint(PbReader *r, uint64_t *v)
{
	uint64_t x = 0;
	size_t at = (size_t)(r->p - r->base);
	for (int shift = 0; shift < 70; shift += 7) {
		if (r->p >= r->end) {
			pb_error(r, at, "truncated varint");
			return false;
		}
		unsigned char c = *r->p++;
		if (shift == 63 && c > 1) {
			pb_error(r, at, "varint longer than 64 bits");
			return false;
		}
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return true;
		}
	}
	pb_error(r, at, "varint longer than 10 bytes");
	return false;
}

bool
pb_next(PbReader *r, PbField *f)
{
	if (*r->errp || r->p >= r->end)
		return false;
	memset(f, 0, sizeof *f);
	f->at = (size_t)(r->p - r->base);
	uint64_t key;
	if (!varint(r, &key))
		return false;
	if (key >> 3 == 0 || key >> 3 > 0x1fffffff) {
		pb_error(r, f->at, "field number %llu out of range", (unsigned long long)(key >> 3));
		return false;
	}
	f->field = (uint32_t)(key >> 3);
	f->wire = (int)(key & 7);
	switch (f->wire) {
	case 0:
		return varint(r, &f->v);
	case 1: case 5: {
		size_t n = f->wire == 1 ? 8 : 4;
		if ((size_t)(r->end - r->p) < n) {
			pb_error(r, f->at, "truncated fixed%zu field %u", n * 8, f->field);
			return false;
		}
		uint64_t v = 0;
		for (size_t i = 0; i < n; i++)
			v |= (uint64_t)r->p[i] << (8 * i);
		r->p += n;
		f->v = v;
		return true;
	}
	case 2: {
		uint64_t n;
		if (!varint(r, &n))
			return false;
		if (n > (uint64_t)(r->end - r->p)) {
			pb_error(r, f->at, "field %u says %llu bytes, %zu are left", f->field,
			    (unsigned long long)n, (size_t)(r->end - r->p));
			return false;
		}
		f->data = r->p;
		f->len = (size_t)n;
		r->p += n;
		return true;
	}
	default:
		pb_error(r, f->at, "field %u has wire type %d, which ONNX does not use", f->field,
		    f->wire);
		return false;
	}
}

bool
pb_varints(PbReader *r, const PbField *f, int64_t **v, int *n, int *cap)
{
	if (f->wire == 0) {
		*ARENA_PUSH(perm, *v, *n, *cap) = (int64_t)f->v;
		return true;
	}
	if (f->wire != 2) {
		pb_error(r, f->at, "field %u: expected integers", f->field);
		return false;
	}
	PbReader s = pb_sub(r, f);
	while (s.p < s.end) {
		uint64_t x;
		if (!varint(&s, &x))
			return false;
		if (*n >= (1 << 28)) {
			pb_error(r, f->at, "too many values");
			return false;
		}
		*ARENA_PUSH(perm, *v, *n, *cap) = (int64_t)x;
	}
	return true;
}

bool
pb_floats(PbReader *r, const PbField *f, float **v, int *n, int *cap)
{
	if (f->wire == 5) {
		uint32_t b = (uint32_t)f->v;
		memcpy(ARENA_PUSH(perm, *v, *n, *cap), &b, 4);
		return true;
	}
	if (f->wire != 2 || f->len % 4) {
		pb_error(r, f->at, "field %u: expected floats", f->field);
		return false;
	}
	for (size_t i = 0; i < f->len; i += 4) {
		if (*n >= (1 << 28)) {
			pb_error(r, f->at, "too many values");
			return false;
		}
		memcpy(ARENA_PUSH(perm, *v, *n, *cap), f->data + i, 4);
	}
	return true;
}

const char *
pb_string(const PbField *f)
{
	if (f->wire != 2)
		return "";
	return arena_strndup(perm, (const char *)f->data, f->len);
}
