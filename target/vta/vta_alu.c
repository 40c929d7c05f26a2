/* vta_alu.c: the compute module's nests: GEMM updates and resets, and
 * element-wise work on acc as ALU instructions (TVM's InjectALUIntrin).
 *
 * Leaves it takes:
 *   gemm(16, 16, acc[d], 1, inp[s], 1, wgt[w], 16, 1)   GEMM (tensorize)
 *   acc[d] = 0                      a reset GEMM (a reduction's init)
 *   y[d] = E                        y and E's operands in acc: ALU work
 *   dram[d] = i8(E)                 the epilogue: ALU work, then STORE
 * where E is a chain of operations on one acc row x: min, max, +, - and *
 * with a constant (the immediate form, 16 bits signed) or with another
 * acc row (the tensor form: a step of 0 in a loop broadcasts it, as a
 * bias is over the pixels), >> and << by a constant (SHR; a left shift is
 * SHR by a negative amount, which the simulator and the HLS design run but
 * the Chisel design does not).  Every ALU instruction works in place,
 * acc[dst] = f(acc[dst], imm or acc[src]): the epilogue runs on x itself
 * before the STORE (its stage's value is not needed afterwards), and a
 * stage y in acc first gets x's value (a reset and an ADD) unless E's row
 * is y's own.  An operation VTA's ALU lacks (division, a variable shift,
 * a select) is an error naming it; MUL runs on the simulator only (the
 * hardware designs lack it) and gets a warning.
 *
 * For ALU work and resets the innermost loop runs over the 16 lanes of a
 * row; it is the micro-op itself, and the loops outside it go to
 * vta_uop.c.
 */
#include <string.h>

#include "sema/sema.h"
#include "target/vta/vta.h"

enum { MAXOPS = 16 };

typedef struct {
	int op;              /* TXRT_VTA_ALU_* */
	bool imm;
	int64_t value;       /* imm */
	IrExpr *tensor;      /* the other row (a load of acc) */
	const char *text;    /* for messages */
} AluOp;

static bool
on_acc(IrExpr *e)
{
	return e->kind == IR_LOAD && e->load.buf->scope == SCOPE_VTA_ACC && e->load.nidx == 1;
}

static IrExpr *
strip(IrExpr *e)
{
	while (e->kind == IR_CAST && ir_is_int(e->type) && ir_is_int(e->a->type) &&
	    ir_bits(e->type.code) >= ir_bits(e->a->type.code))
		e = e->a;
	return e;
}

static bool
has_acc(IrExpr *e)
{
	e = strip(e);
	if (on_acc(e))
		return true;
	return (e->a && has_acc(e->a)) || (e->b && has_acc(e->b)) || (e->c && has_acc(e->c));
}

static bool
bad(Loc loc, const char *what, IrExpr *e, const char *why)
{
	diag_error(loc, "VTA's ALU cannot compute '%s' of '%s': %s", ir_expr_str(e), what, why);
	return false;
}

/* E as its acc row and the operations on it, innermost first. */
static IrExpr *
chain(Program *p, IrExpr *e, AluOp *ops, int *n, Loc loc, const char *what)
{
	e = strip(e);
	if (on_acc(e))
		return e;
	if (*n >= MAXOPS)
		return bad(loc, what, e, "too many operations"), NULL;
	IrExpr *x = NULL, *y = NULL;
	AluOp op = { 0 };
	int64_t c;
	switch (e->kind) {
	case IR_MIN: case IR_MAX: case IR_ADD: case IR_MUL:
		x = strip(e->a);
		y = strip(e->b);
		if (!has_acc(x) || (on_acc(x) && !on_acc(y) && has_acc(y))) {
			IrExpr *t = x;
			x = y;
			y = t;
		}
		op.op = e->kind == IR_MIN ? TXRT_VTA_ALU_MIN : e->kind == IR_MAX ? TXRT_VTA_ALU_MAX :
		    e->kind == IR_ADD ? TXRT_VTA_ALU_ADD : TXRT_VTA_ALU_MUL;
		break;
	case IR_SUB:
		x = strip(e->a);
		y = strip(e->b);
		if (!ir_is_const(y, &c))
			return bad(loc, what, e, "it has no subtraction but of a constant (ADD of "
			    "its negation)"), NULL;
		op.op = TXRT_VTA_ALU_ADD;
		op.imm = true;
		op.value = -c;
		break;
	case IR_SHR: case IR_SHL:
		x = strip(e->a);
		y = strip(e->b);
		if (!ir_is_const(y, &c) || c < 0 || c > 31)
			return bad(loc, what, e, "it shifts by constants from 0 to 31 only"), NULL;
		op.op = TXRT_VTA_ALU_SHR;
		op.imm = true;
		op.value = e->kind == IR_SHR ? c : -c;
		break;
	default:
		return bad(loc, what, e, "its operations are min, max, +, - and * of a constant "
		    "or another acc row, and >> or << by a constant"), NULL;
	}
	if (!op.imm) {
		if (ir_is_const(y, &c)) {
			op.imm = true;
			op.value = c;
		} else if (on_acc(y)) {
			op.tensor = y;
		} else {
			return bad(loc, what, e, arena_printf(ir_arena, "its operand '%s' is neither "
			    "a constant nor a row of acc (cache_read(acc) puts a tensor there)",
			    ir_expr_str(y))), NULL;
		}
	}
	if (op.imm && (op.value < -32768 || op.value > 32767))
		return bad(loc, what, e, arena_printf(ir_arena, "its immediate %lld does not fit "
		    "16 signed bits", (long long)op.value)), NULL;
	if (!has_acc(x))
		return bad(loc, what, e, "no operand is a row of acc"), NULL;
	if (!intrinsic_alu_has(p, op.op, op.imm)) {
		static const char *const names[] = { "MIN", "MAX", "ADD", "SHR", "MUL" };
		return bad(loc, what, e, arena_printf(ir_arena, "its %s in the %s form is not in the "
		    "ALU table (alu intrinsics of the vta target, intrinsics/vta.tx: import it)",
		    names[op.op], op.imm ? "immediate" : "tensor")), NULL;
	}
	IrExpr *base = chain(p, x, ops, n, loc, what);
	if (!base)
		return NULL;
	if (op.op == TXRT_VTA_ALU_MUL)
		diag_warn(loc, "'%s' of '%s' uses VTA's MUL, which the simulator runs but "
		    "the hardware designs lack", ir_expr_str(e), what);
	op.text = ir_expr_str(e);
	ops[(*n)++] = op;
	return base;
}

/* The loops without the innermost one over a row's 16 lanes (bound to
 * its first value in *env); false after a diagnostic. */
static bool
lanes_loop(IrStmt **loops, int *n, IrExpr *idx, VtaEnv **env, Loc loc, const char *what)
{
	if (*n < 1)
		goto bad;
	IrStmt *l = loops[*n - 1];
	int64_t min, ext;
	VtaAff a;
	Var *v = l->loop.var, *vars[VTA_MAXL];
	for (int i = 0; i < *n; i++)
		vars[i] = loops[i]->loop.var;
	if (!vta_eval(l->loop.min, *env, &min) || !vta_eval(l->loop.extent, *env, &ext) ||
	    ext != vta_lanes(SCOPE_VTA_ACC) || !vta_affine(idx, *env, vars, *n, &a) ||
	    a.c[*n - 1] != 1)
		goto bad;
	*env = vta_bind(*env, v, min);
	(*n)--;
	return true;
bad:
	diag_error(loc, "the innermost loop of '%s' must run over the 16 lanes of an acc row "
	    "(the packed layout's last dimension), which one ALU micro-op computes", what);
	return false;
}

static bool
lane_free(IrExpr *guard, IrStmt *lane)
{
	return !guard || !ir_uses_var(guard, lane->loop.var);
}

/* ALU instructions for ops on the row at dst (buffer of base). */
static bool
alu(VtaRun *R, IrStmt **loops, int n, IrExpr *guard, Buffer *dbuf, IrExpr *dst, AluOp *ops,
    int nops, VtaEnv *env, Loc loc, const char *what)
{
	for (int i = 0; i < nops; i++) {
		VtaLeaf lf = { 0 };
		lf.kind = VTA_OP_ALU;
		lf.alu_op = ops[i].op;
		lf.use_imm = ops[i].imm;
		lf.imm = (int32_t)ops[i].value;
		lf.dst = dst;
		lf.dbuf = dbuf;
		if (ops[i].tensor) {
			lf.src = ops[i].tensor->load.idx[0];
			lf.sbuf = ops[i].tensor->load.buf;
		} else {
			lf.src = dst;
			lf.sbuf = dbuf;
		}
		if (!vta_uop_nest(R, loops, n, guard, &lf, env, loc, what))
			return false;
	}
	return true;
}

bool
vta_compute_nest(VtaRun *R, IrStmt **loops, int n, IrExpr *guard, IrStmt *leaf, VtaEnv *env)
{
	Loc loc = leaf->loc.file ? leaf->loc : vta_stream(R)->loc;
	if (leaf->kind == IS_STORE)
		loc = vta_stage_loc(leaf->store.buf, loc);
	if (leaf->kind == IS_EVALUATE) {
		IrExpr *c = leaf->eval.value;
		if (c->kind != IR_CALL || c->call.ck != CALL_INTRINSIC || strcmp(c->call.name, "gemm") ||
		    c->call.nargs != 9)
			return false;
		IrExpr *acc = c->call.args[2], *inp = c->call.args[4], *wgt = c->call.args[6];
		if (acc->load.buf->scope != SCOPE_VTA_ACC || inp->load.buf->scope != SCOPE_VTA_INP ||
		    wgt->load.buf->scope != SCOPE_VTA_WGT) {
			diag_error(loc, "VTA's GEMM reads inp and wgt and accumulates into acc; here "
			    "'%s' is in %s, '%s' in %s and '%s' in %s (cache_read(inp), "
			    "cache_read(wgt) and set_scope(acc) put them there)", inp->load.buf->name,
			    ir_scope_name(inp->load.buf->scope), wgt->load.buf->name,
			    ir_scope_name(wgt->load.buf->scope), acc->load.buf->name,
			    ir_scope_name(acc->load.buf->scope));
			return true;
		}
		VtaLeaf lf = { 0 };
		lf.kind = VTA_OP_GEMM;
		lf.dst = acc->load.idx[0];
		lf.src = inp->load.idx[0];
		lf.wgt = wgt->load.idx[0];
		lf.dbuf = acc->load.buf;
		lf.sbuf = inp->load.buf;
		lf.wbuf = wgt->load.buf;
		vta_uop_nest(R, loops, n, guard, &lf, env, loc, acc->load.buf->name);
		return true;
	}
	if (leaf->kind != IS_STORE || leaf->store.pred || leaf->store.nidx != 1)
		return false;
	Buffer *b = leaf->store.buf;
	IrExpr *v = leaf->store.value, *d = leaf->store.idx[0];
	int64_t z;
	bool to_acc = b->scope == SCOPE_VTA_ACC;
	if (!to_acc && (vta_sram_of(b->scope) >= 0 || !has_acc(v)))
		return false;
	if (n > 0 && !lane_free(guard, loops[n - 1])) {
		diag_error(loc, "'%s' is guarded inside an acc row; VTA computes whole rows of 16",
		    b->name);
		return true;
	}
	if (to_acc && ir_is_const(v, &z) && z == 0) {
		VtaLeaf lf = { 0 };
		lf.kind = VTA_OP_RESET;
		lf.dst = d;
		lf.dbuf = b;
		if (lanes_loop(loops, &n, d, &env, loc, b->name))
			vta_uop_nest(R, loops, n, guard, &lf, env, loc, b->name);
		return true;
	}
	AluOp ops[MAXOPS];
	int nops = 0;
	IrExpr *top = v;
	if (!to_acc && top->kind == IR_CAST && ir_bits(top->type.code) == 8)
		top = top->a;
	IrExpr *base = chain(vta_program(R), top, ops, &nops, loc, b->name);
	if (!base)
		return true;
	if (to_acc) {
		bool same = base->load.buf == b && ir_expr_equal(base->load.idx[0], d);
		int m = n;
		VtaEnv *e = env;
		if (!lanes_loop(loops, &m, d, &e, loc, b->name))
			return true;
		if (!same) {
			/* y = x first: a reset of y, then y += x */
			VtaLeaf lf = { 0 };
			lf.kind = VTA_OP_RESET;
			lf.dst = d;
			lf.dbuf = b;
			AluOp copy = { TXRT_VTA_ALU_ADD, false, 0, base, "copy" };
			if (!vta_uop_nest(R, loops, m, guard, &lf, e, loc, b->name) ||
			    !alu(R, loops, m, guard, b, d, &copy, 1, e, loc, b->name))
				return true;
		}
		alu(R, loops, m, guard, b, d, ops, nops, e, loc, b->name);
		return true;
	}
	/* the epilogue: in place on x's row, then the STORE */
	int m = n;
	VtaEnv *e = env;
	if (nops > 0) {
		if (!lanes_loop(loops, &m, base->load.idx[0], &e, loc, b->name))
			return true;
		if (!alu(R, loops, m, guard, base->load.buf, base->load.idx[0], ops, nops, e, loc,
		    b->name))
			return true;
	}
	vta_dma_store(R, loops, n, guard, leaf, base, env);
	return true;
}
