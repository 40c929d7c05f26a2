/* benchdata.c: the data txc bench runs kernels on and how it judges them,
 * shared with txc tune (tune/): a kernel's tensor arguments allocated at
 * fixed sizes, inputs filled with seeded random values (exact in every
 * element type, f16 and bf16 included), outputs with -77; the packed
 * argument array; and the largest difference of a variant's outputs from
 * the reference's, relative to max(1, |reference|).  bench.c is the
 * command that times and prints.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "driver/driver.h"
#include "rt/txrt.h"

static uint64_t rng_state;

void
benchdata_seed(unsigned seed)
{
	rng_state = seed;
}

static double
rnd(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng_state >> 11) / 9007199254740992.0;   /* [0, 1) */
}

/* A value v of type t (exactly representable for f16: k / 64). */
void
benchdata_put(void *p, size_t i, ScalarType t, double v)
{
	switch (t) {
	case TY_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case TY_I8: ((int8_t *)p)[i] = (int8_t)v; break;
	case TY_I16: ((int16_t *)p)[i] = (int16_t)v; break;
	case TY_I32: ((int32_t *)p)[i] = (int32_t)v; break;
	case TY_I64: ((int64_t *)p)[i] = (int64_t)v; break;
	case TY_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case TY_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case TY_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case TY_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	case TY_F16: {
		/* |v| <= 1 in steps of 1/64: exact in binary16 */
		double m = fabs(v);
		uint16_t bits = v < 0 ? 0x8000 : 0;
		if (m != 0) {
			int e;
			double f = frexp(m, &e);          /* m = f * 2^e, f in [0.5, 1) */
			bits |= (uint16_t)((e - 1 + 15) << 10);
			bits |= (uint16_t)((f * 2 - 1) * 1024);
		}
		((uint16_t *)p)[i] = bits;
		break;
	}
	case TY_BF16: ((uint16_t *)p)[i] = ir_bf16_bits(v); break;   /* exact too */
	case TY_F32: ((float *)p)[i] = (float)v; break;
	default: ((double *)p)[i] = v; break;
	}
}

/* An integer v of type t, exact for every 64-bit value (an integer type
 * narrower than 64 bits keeps v's low bits, as a C conversion does). */
void
benchdata_put_int(void *p, ScalarType t, int64_t v)
{
	switch (t) {
	case TY_BOOL: *(uint8_t *)p = v != 0; break;
	case TY_I8: case TY_U8: *(uint8_t *)p = (uint8_t)v; break;
	case TY_I16: case TY_U16: *(uint16_t *)p = (uint16_t)v; break;
	case TY_I32: case TY_U32: *(uint32_t *)p = (uint32_t)v; break;
	case TY_I64: case TY_U64: *(uint64_t *)p = (uint64_t)v; break;
	default: benchdata_put(p, 0, t, (double)v); break;
	}
}

static double
get(const void *p, size_t i, ScalarType t)
{
	switch (t) {
	case TY_BOOL: case TY_U8: return ((const uint8_t *)p)[i];
	case TY_I8: return ((const int8_t *)p)[i];
	case TY_I16: return ((const int16_t *)p)[i];
	case TY_I32: return ((const int32_t *)p)[i];
	case TY_I64: return (double)((const int64_t *)p)[i];
	case TY_U16: return ((const uint16_t *)p)[i];
	case TY_U32: return ((const uint32_t *)p)[i];
	case TY_U64: return (double)((const uint64_t *)p)[i];
	case TY_F16: {
		uint16_t h = ((const uint16_t *)p)[i];
		int e = h >> 10 & 31, m = h & 1023;
		double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) :
		    ldexp(1024 + m, e - 25);
		return h & 0x8000 ? -v : v;
	}
	case TY_BF16: {
		uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
		float f;
		memcpy(&f, &u, sizeof f);
		return f;
	}
	case TY_F32: return ((const float *)p)[i];
	default: return ((const double *)p)[i];
	}
}

static double
random_value(ScalarType t)
{
	if (t == TY_BOOL)
		return rnd() < 0.5;
	if (type_is_float(t))
		return floor(rnd() * 128) / 64 - 1;    /* [-1, 1) in steps of 1/64 */
	if (type_is_signed(t))
		return floor(rnd() * 16) - 8;
	return floor(rnd() * 16);
}

/* Allocates a, a tensor of f's shaped by sizes, and fills it (inputs at
 * random, outputs with -77); false after an error (exit 1): a shape that
 * cannot be worked out, an element or byte count past 64 bits (-D
 * N=4294967296 on f32[N, N] wrapped to 0 and crashed), or no memory for
 * it (a user's size, not an internal failure). */
bool
benchdata_alloc(IrFunc *f, const int64_t *sizes, Buffer *buf, BenchArg *a)
{
	int64_t e, n = 1;
	for (int d = 0; d < buf->ndims; d++) {
		if (!benchops_eval(f, sizes, buf->extent[d], &e) || e < 0) {
			diag_error(loc_none, "cannot work out the shape of '%s' (an extent "
			    "negative, or past 64 bits)", buf->name);
			return false;
		}
		if (__builtin_mul_overflow(n, e, &n)) {
			diag_error(loc_none, "the sizes give '%s' more elements than 64 bits "
			    "count", buf->name);
			return false;
		}
	}
	a->buf = buf;
	a->elems = (size_t)n;
	a->esize = type_bits(buf->elem) <= 8 ? 1 : (size_t)type_bits(buf->elem) / 8;
	size_t bytes;
	if (__builtin_mul_overflow(a->elems, a->esize, &bytes)) {
		diag_error(loc_none, "the sizes give '%s' more bytes than 64 bits count",
		    buf->name);
		return false;
	}
	a->data = txrt_alloc(bytes);
	if (!a->data) {
		diag_error(loc_none, "out of memory for tensor '%s' (%zu bytes)", buf->name,
		    bytes);
		return false;
	}
	for (size_t j = 0; j < a->elems; j++)
		benchdata_put(a->data, j, buf->elem, buf->is_input ? random_value(buf->elem) : -77);
	return true;
}

/* The argument array: size and scalar values, then tensor pointers. */
void **
benchdata_call_args(IrFunc *f, uint64_t *slots, BenchArg *args)
{
	void **a = arena_alloc(perm, (f->nparams + f->nargs + 1) * sizeof *a);

	for (int i = 0; i < f->nparams; i++)
		a[i] = &slots[i];
	for (int i = 0; i < f->nargs; i++)
		a[f->nparams + i] = args[i].data;
	return a;
}

/* The largest |x - ref| / max(1, |ref|) over the outputs: relative where
 * values are large, absolute near 0.  Equal values are equal, infinities
 * of one sign included (a maximum over an empty range, log(0)), and so
 * are NaNs in the same places; a NaN or an infinity against anything
 * else is an infinite difference. */
double
benchdata_max_error(IrFunc *f, BenchArg *got, BenchArg *ref)
{
	double worst = 0;

	for (int i = 0; i < f->nargs; i++) {
		if (f->args[i]->is_input)
			continue;
		for (size_t j = 0; j < ref[i].elems; j++) {
			double x = get(got[i].data, j, ref[i].buf->elem);
			double r = get(ref[i].data, j, ref[i].buf->elem);
			double d = x == r || (isnan(x) && isnan(r)) ? 0 :
			    fabs(x - r) / fmax(1, fabs(r));
			if (isnan(d) || d > worst)
				worst = isnan(d) ? INFINITY : d;
		}
	}
	return worst;
}

/* Copies of the inputs' pointers; outputs freshly allocated and filled
 * with a value no kernel writes by accident. */
BenchArg *
benchdata_outputs_like(IrFunc *f, BenchArg *ref)
{
	BenchArg *a = arena_alloc(perm, (f->nargs + 1) * sizeof *a);

	for (int i = 0; i < f->nargs; i++) {
		a[i] = ref[i];
		if (f->args[i]->is_input)
			continue;
		a[i].data = txrt_alloc(a[i].elems * a[i].esize);
		if (!a[i].data)
			diag_fatal("out of memory for output '%s'", ref[i].buf->name);
		for (size_t j = 0; j < a[i].elems; j++)
			benchdata_put(a[i].data, j, a[i].buf->elem, -77);
	}
	return a;
}

/* ---- --target=cuda on a GPU: device copies (bench and tune) --------------
 * Every argument gets a device buffer holding what the host one holds
 * (inputs, and outputs filled with -77, so that an element no kernel
 * writes shows as a difference), copied once; the runs use the copies and
 * the outputs come back after them. */
BenchArg *
benchdata_to_device(IrFunc *f, BenchArg *host, char *why, size_t cap)
{
	BenchArg *d = arena_alloc(perm, (f->nargs + 1) * sizeof *d);
	for (int i = 0; i < f->nargs; i++)
		d[i].data = NULL;
	for (int i = 0; i < f->nargs; i++) {
		d[i] = host[i];
		size_t bytes = host[i].elems * host[i].esize;
		d[i].data = txrt_cuda_malloc(bytes);
		if (!d[i].data || txrt_cuda_memcpy_htod(d[i].data, host[i].data, bytes)) {
			snprintf(why, cap, "device memory for '%s': %s", host[i].buf->name,
			    txrt_last_error());
			for (int j = 0; j <= i; j++)
				txrt_cuda_free(d[j].data);
			return NULL;
		}
	}
	return d;
}

bool
benchdata_from_device(IrFunc *f, BenchArg *host, BenchArg *dev, char *why, size_t cap)
{
	for (int i = 0; i < f->nargs; i++)
		if (!f->args[i]->is_input && txrt_cuda_memcpy_dtoh(host[i].data, dev[i].data,
		    host[i].elems * host[i].esize)) {
			snprintf(why, cap, "copying '%s' back: %s", host[i].buf->name,
			    txrt_last_error());
			return false;
		}
	return true;
}

void
benchdata_free_device(IrFunc *f, BenchArg *dev)
{
	for (int i = 0; dev && i < f->nargs; i++)
		txrt_cuda_free(dev[i].data);
}

/* ---- for txc tune (tune/): bench's data and checks ------------------------
 * The tuner runs candidates the way bench runs schedules: the same seeded
 * random inputs, outputs filled with -77, the same error measure. */
struct BenchData {
	IrFunc *ref;
	BenchArg *args;            /* the reference's: inputs, then its outputs */
	uint64_t *slots;      /* size and scalar values */
};

struct BenchRun {
	IrFunc *f;
	BenchArg *args;            /* on the host: what the outputs are checked in */
	BenchArg *dev;             /* on_device: the copies the kernel runs on, else NULL */
	void **argv;
};

BenchData *
bench_data_new(Kernel *k, IrFunc *ref, const int64_t *params, const double *scalars,
    unsigned seed)
{
	BenchData *d = arena_alloc(perm, sizeof *d);
	d->ref = ref;
	d->slots = arena_alloc(perm, (k->nparams + 1) * sizeof *d->slots);
	for (int i = 0; i < k->nparams; i++) {
		Param *pa = &k->params[i];
		if (pa->is_size || !type_is_float(pa->type))
			benchdata_put_int(&d->slots[i], pa->is_size ? TY_I64 : pa->type, params[i]);
		else
			benchdata_put(&d->slots[i], 0, pa->type, scalars[i]);
	}
	d->args = arena_alloc(perm, (ref->nargs + 1) * sizeof *d->args);
	benchdata_seed(seed);
	for (int i = 0; i < ref->nargs; i++) {
		if (!benchdata_alloc(ref, params, ref->args[i], &d->args[i]))
			return NULL;
	}
	return d;
}

void **
bench_data_argv(BenchData *d)
{
	return benchdata_call_args(d->ref, d->slots, d->args);
}

BenchRun *
bench_run_new(BenchData *d, IrFunc *f, bool on_device, char *why, size_t cap)
{
	BenchRun *r = arena_alloc(perm, sizeof *r);
	r->f = f;
	r->args = benchdata_outputs_like(f, d->args);
	r->dev = NULL;
	if (on_device && !(r->dev = benchdata_to_device(f, r->args, why, cap))) {
		bench_run_free(r);
		return NULL;
	}
	r->argv = benchdata_call_args(f, d->slots, r->dev ? r->dev : r->args);
	return r;
}

bool
bench_run_fetch(BenchRun *r, char *why, size_t cap)
{
	return !r->dev || benchdata_from_device(r->f, r->args, r->dev, why, cap);
}

void **
bench_run_argv(BenchRun *r)
{
	return r->argv;
}

double
bench_run_error(BenchData *d, BenchRun *r)
{
	return benchdata_max_error(r->f, r->args, d->args);
}

void
bench_run_free(BenchRun *r)
{
	benchdata_free_device(r->f, r->dev);
	r->dev = NULL;
	for (int i = 0; i < r->f->nargs; i++)
		if (!r->f->args[i]->is_input)
			txrt_free(r->args[i].data);
}
