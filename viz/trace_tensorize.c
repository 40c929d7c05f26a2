/* trace_tensorize.c: a tensorize call in the trace (txc viz): the
 * hardware operation the call's meaning describes (lower/ir.h,
 * IrTensorizeCall: a product, a copy or a fill), run for real, with every
 * element it loads and stores.
 */
#include <string.h>

#include "viz/trace.h"

/* Where element `off` of a store's flat buffer is, as an event. */
static VizEvent *
flat_event(Run *r, VizKind kind, Store *st, int64_t off, const char *what)
{
	Buffer *b = st->buf;
	if (off < 0 || off >= st->n)
		tr_fail(r, "the intrinsic '%s' %s element %lld of '%s', outside its allocation of "
		    "%lld", what, kind == VIZ_LOAD ? "loads" : "stores", (long long)off, b->name,
		    (long long)st->n);
	VizEvent *e = tr_event(r, kind, st->tensor, b->ndims);
	for (int d = b->ndims - 1; d >= 0; d--) {
		int64_t ext = st->ext[d] > 0 ? st->ext[d] : 1;
		e->coord[d] = (int32_t)(st->min[d] + off % ext);
		off /= ext;
	}
	return e;
}

/* A copy (c = a) or a fill (c = value) intrinsic (mma_store, mma_fill):
 * every point of c's axes, a's element loaded (a copy) and c's stored,
 * each element a lane. */
static void
tr_copy(Run *r, IrExpr *e, const IrTensorizeCall *m, const int64_t *ext, Store **st,
    const int64_t *base, int64_t stride[][IR_TZ_MAXDIMS])
{
	int64_t pt[IR_TZ_MAXDIMS] = { 0 };
	for (int a = 0; a < m->naxes; a++)
		if (ext[a] <= 0)
			return;
	for (;;) {
		int64_t o[2] = { base[0], m->ntensors > 1 ? base[1] : 0 };
		for (int t = 0; t < m->ntensors; t++)
			for (int d = 0; d < m->ndims[t]; d++)
				o[t] += stride[t][d] * pt[m->axis[t][d]];
		Val v = { 0 };
		ScalarType ct = st[0]->buf->elem;
		if (m->ntensors > 1) {
			flat_event(r, VIZ_LOAD, st[1], o[1], e->call.name);
			v = tr_convert(st[1]->buf->elem, ct, st[1]->data[o[1]]);
		} else if (type_is_float(ct))
			v.f = m->value;
		else
			v.i = (int64_t)m->value;
		VizEvent *s = flat_event(r, VIZ_STORE, st[0], o[0], e->call.name);
		s->by = -1;
		s->iter = arena_alloc(perm, (r->nloops + 1) * sizeof *s->iter);
		if (r->nloops)
			memcpy(s->iter, r->loops, r->nloops * sizeof *s->iter);
		st[0]->data[o[0]] = v;
		r->lane++;
		int a = m->naxes - 1;
		while (a >= 0 && ++pt[a] == ext[a])
			pt[a--] = 0;
		if (a < 0)
			return;
	}
}

/* A tensorize call: the hardware operation its meaning says (lower/ir.h,
 * IrTensorizeCall), with every element it loads and stores, all at one
 * tick as one instruction; each element of c is a lane of it. */
void
tr_intrinsic(Run *r, IrExpr *e)
{
	const IrTensorizeCall *m = e->call.tz;
	int64_t ext[IR_TZ_MAXDIMS], stride[3][IR_TZ_MAXDIMS], base[3];
	Store *st[3];
	int pos = m->naxes;
	if (m->naxes > IR_TZ_MAXDIMS)
		tr_fail(r, "the intrinsic '%s' has too many axes to draw", e->call.name);
	if (m->ntensors < 1 || m->ntensors > 3 ||
	    pos + m->ntensors + m->ndims[0] + m->ndims[1] + m->ndims[2] > e->call.nargs)
		tr_fail(r, "the intrinsic '%s' (an IR form txc viz does not run)", e->call.name);
	for (int a = 0; a < m->naxes; a++)
		ext[a] = tr_eval_int(r, e->call.args[a]);
	for (int t = 0; t < m->ntensors; t++) {
		IrExpr *ld = e->call.args[pos++];
		if (ld->kind != IR_LOAD)
			tr_fail(r, "the intrinsic '%s' (an IR form txc viz does not run)", e->call.name);
		st[t] = tr_storage(r, ld->load.buf);
		base[t] = 0;
		for (int d = 0; d < ld->load.nidx; d++)
			base[t] = base[t] * st[t]->ext[d] + (tr_eval_int(r, ld->load.idx[d]) - st[t]->min[d]);
		for (int d = 0; d < m->ndims[t]; d++)
			stride[t][d] = tr_eval_int(r, e->call.args[pos++]);
	}
	if (m->ntensors < 3) {
		int saved = r->store_tensor, lane0 = r->lane;
		r->store_tensor = st[0]->tensor;
		r->lane = 0;
		tr_copy(r, e, m, ext, st, base, stride);
		r->store_tensor = saved;
		r->lane = lane0;
		return;
	}
	bool reset = m->reset >= 0 && tr_eval_int(r, e->call.args[m->reset]);
	ScalarType ct = st[0]->buf->elem;
	bool in_c[IR_TZ_MAXDIMS] = { false };
	for (int d = 0; d < m->ndims[0]; d++)
		in_c[m->axis[0][d]] = true;
	int64_t pt[IR_TZ_MAXDIMS] = { 0 };
	int saved = r->store_tensor, lane0 = r->lane;
	r->store_tensor = st[0]->tensor;
	r->lane = 0;
	bool empty = false;   /* no reduction point: c stays (or is reset) */
	for (int a = 0; a < m->naxes; a++) {
		if (ext[a] <= 0 && in_c[a])
			goto done;
		empty |= ext[a] <= 0;
	}
	/* the points of c (its axes odometer-style), then of the reduction */
	for (;;) {
		int64_t oc = base[0];
		for (int d = 0; d < m->ndims[0]; d++)
			oc += stride[0][d] * pt[m->axis[0][d]];
		Val acc = { 0 };
		if (!reset) {
			flat_event(r, VIZ_LOAD, st[0], oc, e->call.name);
			acc = st[0]->data[oc];
		} else if (type_is_float(ct))
			acc.f = 0;
		for (;;) {
			if (empty)
				break;
			Val x[2];
			for (int t = 1; t < 3; t++) {
				int64_t o = base[t];
				for (int d = 0; d < m->ndims[t]; d++)
					o += stride[t][d] * pt[m->axis[t][d]];
				flat_event(r, VIZ_LOAD, st[t], o, e->call.name);
				x[t - 1] = tr_convert(st[t]->buf->elem, ct, st[t]->data[o]);
			}
			if (type_is_float(ct))
				acc.f = tr_convert(TY_F64, ct, (Val){ .f = acc.f + x[0].f * x[1].f }).f;
			else
				acc.i = ir_wrap(ct, (int64_t)((uint64_t)acc.i + (uint64_t)x[0].i * (uint64_t)x[1].i));
			int a = m->naxes - 1;
			while (a >= 0 && (in_c[a] || ++pt[a] == ext[a])) {
				if (!in_c[a])
					pt[a] = 0;
				a--;
			}
			if (a < 0)
				break;
		}
		VizEvent *s = flat_event(r, VIZ_STORE, st[0], oc, e->call.name);
		s->update = !reset && tr_in_update(r, st[0]->buf->name);   /* reset: c's first value */
		s->by = -1;
		s->iter = arena_alloc(perm, (r->nloops + 1) * sizeof *s->iter);
		if (r->nloops)
			memcpy(s->iter, r->loops, r->nloops * sizeof *s->iter);
		st[0]->data[oc] = acc;
		r->lane++;
		int a = m->naxes - 1;
		while (a >= 0 && (!in_c[a] || ++pt[a] == ext[a])) {
			if (in_c[a])
				pt[a] = 0;
			a--;
		}
		if (a < 0)
			break;
	}
done:
	r->store_tensor = saved;
	r->lane = lane0;
}
