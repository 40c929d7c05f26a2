/* vta_eval.c: integers at compile time, for the vta target.
 *
 * A VTA region runs at compile time (vta_region.c): its loop counters,
 * lets and the sizes fixed with -D have values, kept in a VtaEnv (a list,
 * innermost binding first).  vta_eval gives an index's value under them;
 * vta_affine gives its affine form in the loops of a nest being turned
 * into instructions (the DMA's strides, the micro-op loops' factors), or
 * fails when it is not affine there (a product of two loop variables, a
 * division of one).  Division and modulo round toward negative infinity,
 * as everywhere in txc.
 */
#include <string.h>

#include "target/vta/vta.h"

VtaEnv *
vta_bind(VtaEnv *env, Var *v, int64_t val)
{
	VtaEnv *e = arena_alloc(ir_arena, sizeof *e);
	e->var = v;
	e->val = val;
	e->next = env;
	return e;
}

static bool
lookup(VtaEnv *env, Var *v, int64_t *out)
{
	for (; env; env = env->next)
		if (env->var == v) {
			*out = env->val;
			return true;
		}
	return false;
}

static int64_t
wrap_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t
wrap_mul(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

bool
vta_eval(IrExpr *e, VtaEnv *env, int64_t *out)
{
	int64_t a = 0, b = 0, c = 0;
	if (!e || e->type.lanes != 1)
		return false;
	switch (e->kind) {
	case IR_INT:
		*out = e->ival;
		return true;
	case IR_VAR:
		return lookup(env, e->var, out);
	case IR_LET:
		if (!vta_eval(e->a, env, &a))
			return false;
		return vta_eval(e->b, vta_bind(env, e->var, a), out);
	case IR_CAST:
		if (!ir_is_int(e->type) && !ir_is_bool(e->type))
			return false;
		if (!vta_eval(e->a, env, &a))
			return false;
		*out = ir_is_bool(e->type) ? a != 0 : ir_wrap(e->type.code, a);
		return true;
	case IR_NOT:
		if (!vta_eval(e->a, env, &a))
			return false;
		*out = !a;
		return true;
	case IR_NEG:
		if (!vta_eval(e->a, env, &a))
			return false;
		*out = ir_wrap(e->type.code, wrap_mul(a, -1));
		return true;
	case IR_SELECT:
		if (!vta_eval(e->a, env, &c))
			return false;
		return vta_eval(c ? e->b : e->c, env, out);
	case IR_AND:
	case IR_OR:
		/* short-circuit: a guard may protect the other side */
		if (!vta_eval(e->a, env, &a))
			return false;
		if ((e->kind == IR_AND && !a) || (e->kind == IR_OR && a)) {
			*out = a != 0;
			return true;
		}
		if (!vta_eval(e->b, env, &b))
			return false;
		*out = b != 0;
		return true;
	default:
		break;
	}
	if (!e->a || !e->b || !vta_eval(e->a, env, &a) || !vta_eval(e->b, env, &b))
		return false;
	if (!ir_is_int(e->a->type) && !ir_is_bool(e->a->type))
		return false;
	int64_t r;
	switch (e->kind) {
	case IR_ADD: r = wrap_add(a, b); break;
	case IR_SUB: r = wrap_add(a, wrap_mul(b, -1)); break;
	case IR_MUL: r = wrap_mul(a, b); break;
	case IR_DIV: if (!b) return false; r = fold_floordiv(a, b); break;
	case IR_MOD: if (!b) return false; r = fold_floormod(a, b); break;
	case IR_MIN: r = a < b ? a : b; break;
	case IR_MAX: r = a > b ? a : b; break;
	case IR_BITAND: r = a & b; break;
	case IR_BITOR: r = a | b; break;
	case IR_BITXOR: r = a ^ b; break;
	case IR_EQ: *out = a == b; return true;
	case IR_NE: *out = a != b; return true;
	case IR_LT: *out = a < b; return true;
	case IR_LE: *out = a <= b; return true;
	case IR_GT: *out = a > b; return true;
	case IR_GE: *out = a >= b; return true;
	default: return false;
	}
	*out = ir_is_bool(e->type) ? r != 0 : ir_wrap(e->type.code, r);
	return true;
}

static bool
is_const_aff(const VtaAff *f, int n)
{
	for (int i = 0; i < n; i++)
		if (f->c[i])
			return false;
	return true;
}

bool
vta_affine(IrExpr *e, VtaEnv *env, Var **vars, int n, VtaAff *out)
{
	VtaAff a, b;
	memset(out, 0, sizeof *out);
	if (!e || e->type.lanes != 1 || !ir_is_int(e->type) || n > VTA_MAXL)
		return false;
	switch (e->kind) {
	case IR_VAR:
		for (int i = 0; i < n; i++)
			if (vars[i] == e->var) {
				out->c[i] = 1;
				return true;
			}
		return lookup(env, e->var, &out->c0);
	case IR_INT:
		out->c0 = e->ival;
		return true;
	case IR_CAST:
		/* a widening or same-width integer cast keeps the value (indices
		 * stay far from the limits of their types) */
		if (!ir_is_int(e->a->type) || ir_bits(e->type.code) < ir_bits(e->a->type.code))
			return false;
		return vta_affine(e->a, env, vars, n, out);
	case IR_LET: {
		int64_t v;
		if (!vta_eval(e->a, env, &v))
			return false;
		return vta_affine(e->b, vta_bind(env, e->var, v), vars, n, out);
	}
	case IR_ADD:
	case IR_SUB:
		if (!vta_affine(e->a, env, vars, n, &a) || !vta_affine(e->b, env, vars, n, &b))
			return false;
		{
			int64_t s = e->kind == IR_ADD ? 1 : -1;
			out->c0 = a.c0 + s * b.c0;
			for (int i = 0; i < n; i++)
				out->c[i] = a.c[i] + s * b.c[i];
		}
		return true;
	case IR_MUL:
		if (!vta_affine(e->a, env, vars, n, &a) || !vta_affine(e->b, env, vars, n, &b))
			return false;
		if (!is_const_aff(&b, n)) {
			VtaAff t = a;
			a = b;
			b = t;
		}
		if (!is_const_aff(&b, n))
			return false;
		out->c0 = a.c0 * b.c0;
		for (int i = 0; i < n; i++)
			out->c[i] = a.c[i] * b.c0;
		return true;
	default: {
		/* anything else only where it does not vary in the nest */
		int64_t v;
		for (int i = 0; i < n; i++)
			if (ir_uses_var(e, vars[i]))
				return false;
		if (!vta_eval(e, env, &v))
			return false;
		out->c0 = v;
		return true;
	}
	}
}

int
vta_conjuncts(IrExpr *cond, IrExpr **out, int max)
{
	if (!cond)
		return 0;
	if (cond->kind == IR_AND) {
		int k = vta_conjuncts(cond->a, out, max);
		if (k < 0)
			return k;
		int m = vta_conjuncts(cond->b, out + k, max - k);
		return m < 0 ? m : k + m;
	}
	if (max < 1)
		return -1;
	out[0] = cond;
	return 1;
}
