/* emit_c.c: the C backend (--emit=c): readable, self-contained C99.
 *
 * Each lowered kernel becomes one entry point with the C ABI of
 * target.h, `const char *NAME_last_error(void)`, and, behind
 * `#ifdef TXC_DLPACK`, a DLPack entry point (cdlpack.c).  The file needs
 * only <math.h> <stddef.h> <stdint.h> <stdlib.h> <string.h> and libm, and
 * builds with or without -fopenmp (parallel loops carry
 * `#pragma omp parallel for` inside `#ifdef _OPENMP`).  It compiles
 * cleanly with -std=c99 -Wall -Wextra -Werror -pedantic.
 *
 * SEMANTICS (what every backend computes; the LLVM backend matches these):
 *
 * Storage and ABI types: bool is uint8_t (0 or 1 when written; any nonzero
 *   byte reads as true), f16 is uint16_t holding IEEE binary16 bits; both
 *   for tensors and for scalar parameters.  Sizes are int64_t.
 * Integer + - * and unary -: wrap modulo 2^bits for every integer type.
 *   The C is computed in uint32_t/uint64_t and converted back (two's
 *   complement conversion, as every C compiler txc supports does it).
 *   Exception: i64 index arithmetic (no loads, calls or scalar parameters
 *   below it) is written plainly; it cannot overflow for tensors that fit
 *   in memory, and LLVM may mark it nsw.
 * Integer / and % (as lower/fold.c folds them): Euclidean division, as
 *   Halide does it: % is never negative (0 <= a % b < |b|) and
 *   a == b*(a/b) + a%b, so / rounds toward -infinity when b > 0 and
 *   toward +infinity when b < 0 (7 / -2 == -3, 7 % -2 == 1,
 *   -7 / -2 == 4, -7 % -2 == 1).  x / 0 == 0 and x % 0 == 0;
 *   INT_MIN / -1 wraps to INT_MIN (and INT_MIN % -1 == 0).  Unsigned
 *   types divide plainly (x / 0 == 0, x % 0 == 0).
 * Floating %: fmod(a, b), plus |b| when negative: in [0, |b|] like the
 *   integers (NaN for b == 0).
 * Shifts: the amount is taken modulo the bit width of the shifted type
 *   (i8: & 7 ... i64: & 63, also for negative amounts); << wraps; >> is
 *   arithmetic for signed types, logical for unsigned ones.
 * Bitwise & | ^ ~: on the two's complement bits.
 * Comparisons: IEEE (ordered, so NaN < x is false; NaN != x is true).
 * min(a, b) = a < b ? a : b; max(a, b) = a > b ? a : b; for floats a NaN
 *   operand gives NaN (a < b || a != a ? a : b), as tx(5) says and LLVM's
 *   fcmp+select in the native object computes it;
 *   clamp(x, lo, hi) = min(max(x, lo), hi).
 * select(c, a, b): only the chosen operand is evaluated (loads under a
 *   false condition do not happen); so are the right operands of && and
 *   || and the value of a predicated store.  A predicated load gives 0
 *   where its predicate is false.
 * Casts: int -> int truncates or extends (wraps); int -> float rounds to
 *   nearest; float -> int truncates toward zero and saturates to the
 *   target range, NaN -> 0 (LLVM's fptosi.sat / fptoui.sat); any -> bool
 *   is != 0 (NaN -> true); bool -> number is 0 or 1; float -> float rounds
 *   to nearest even.
 * f16: every f16 operation is done in float and rounded to the nearest
 *   f16 (ties to even) right after, which equals exact f16 arithmetic for
 *   + - * / sqrt; f32/f64 -> f16 rounds once from the source value;
 *   overflow gives infinity, NaN a quiet NaN (0x7e00 | sign).
 * bf16: likewise, a float holding a bf16 value, rounded after every
 *   operation (txc_bf16_round); stored as uint16_t, its top half; f64 and
 *   integers convert to bf16 through float (lower/ir.h).
 * Builtins: exp log sqrt tanh sin cos erf pow floor ceil are libm's (expf
 *   for f32, exp for f64); rsqrt(x) = 1 / sqrt(x); sigmoid(x) = 1 / (1 +
 *   exp(-x)); abs of a float is fabs, of an int wraps (abs(INT_MIN) ==
 *   INT_MIN); round is half to even (rint in the default rounding mode;
 *   LLVM's roundeven); floor/ceil/round of an integer is the integer.
 * Floating-point contraction (a*b+c into fma) is whatever the C compiler
 *   does; results may differ from LLVM's in the last bits, as the design
 *   allows for reductions.
 * Errors: the entry point first checks every tensor pointer (NULL:
 *   TXC_ERR_NULL, "NAME: argument 'A' is NULL"), then the IR's asserts
 *   in order (sizes, exact splits); heap buffers are freed on every exit.
 *   Out of memory is TXC_ERR_ALLOC.  The message is a thread-local
 *   pointer read by NAME_last_error() (plain static before C11).
 * Buffers: an Allocate whose element count has a constant bound (each
 *   extent a constant or with a constant upper bound, like min(16, W -
 *   wo*16)) of at most 16 KiB is a local array; others are malloc'ed,
 *   checked, and freed on every path out.  An allocation that fails
 *   inside a parallel loop sets txc_failed to its place in the table
 *   txc_oom (whose message names the buffer); the entry point returns
 *   TXC_ERR_ALLOC with that message after the loop.
 * Vectors are written as loops over lanes (`for (lane...)`), each lane a
 *   scalar computation; a vector store whose value reads the same buffer
 *   at other positions goes through a temporary so all loads happen
 *   before any store, as in vector code.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "target/c/cemit.h"

/* Constant-size buffers up to this many bytes live on the stack. */
enum { STACK_BYTES = 16384 };

static void stmt(CEmit *E, IrStmt *s, bool last);

static void
line(CEmit *E, const char *fmt, ...) TXC_PRINTF(2, 3);

static void
vline(CEmit *E, const char *fmt, va_list ap)
{
	for (int i = 0; i < E->indent; i++)
		fputc('\t', E->out);
	vfprintf(E->out, fmt, ap);
	fputc('\n', E->out);
}

static void
line(CEmit *E, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(E, fmt, ap);
	va_end(ap);
}

/* Writes text (possibly several lines) at the current indentation. */
static void
text(CEmit *E, const char *s)
{
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		for (int i = 0; i < E->indent; i++)
			fputc('\t', E->out);
		fwrite(s, 1, n, E->out);
		fputc('\n', E->out);
		s += n + (nl != NULL);
	}
}

static void
open_block(CEmit *E)
{
	line(E, "{");
	E->indent++;
}

static void
close_block(CEmit *E)
{
	E->indent--;
	line(E, "}");
}

/* Writes the declarations the texts just made need (hoisted lets), in a
 * block of their own unless nothing follows in this C block.  True when
 * a block was opened. */
static bool
flush_pre(CEmit *E, bool last)
{
	if (E->npre == 0)
		return false;
	bool braces = !last;
	if (braces)
		open_block(E);
	for (int i = 0; i < E->npre; i++)
		text(E, E->pre[i]);
	E->npre = 0;
	return braces;
}

static const char *
kname(CEmit *E)
{
	return E->f->name;
}

/* Whether msg starts with the name of f's kernel and a colon, as the
 * lowering writes its checks' messages ("matmul: size M must not be
 * negative", with --prefix too: the object says the same). */
bool
c_names_kernel(IrFunc *f, const char *msg)
{
	const char *names[2] = { f->name, f->kernel ? f->kernel->name : NULL };
	for (int i = 0; i < 2; i++) {
		size_t n = names[i] ? strlen(names[i]) : 0;
		if (n && strncmp(msg, names[i], n) == 0 && msg[n] == ':')
			return true;
	}
	return false;
}

/* Frees the heap buffers live here, innermost first. */
static void
free_live(CEmit *E)
{
	for (int i = E->nheap - 1; i >= 0; i--)
		line(E, "%s(%s);", E->free_fn ? E->free_fn : "free", E->heap[i]);
}

/* return CODE with msg as the last error. */
static void
fail(CEmit *E, const char *msg, const char *code)
{
	line(E, "txc_error_%s = %s;", kname(E), cexpr_string(E->a, msg));
	free_live(E);
	line(E, "return %s;", code);
}

/* ---- buffer use (for unused-variable warnings) ----------------------------- */

typedef struct {
	IrVisitor v;
	Buffer *buf;
	bool used;
} UseBuf;

static void
use_load(IrVisitor *v, IrExpr *e)
{
	UseBuf *u = (UseBuf *)v;
	if (e->load.buf == u->buf)
		u->used = true;
	ir_visit_expr_children(v, e);
}

static void
use_store(IrVisitor *v, IrStmt *s)
{
	UseBuf *u = (UseBuf *)v;
	if (s->store.buf == u->buf)
		u->used = true;
	ir_visit_stmt_children(v, s);
}

static bool
uses_buffer(IrStmt *s, Buffer *b)
{
	UseBuf u = { .buf = b };
	u.v.expr[IR_LOAD] = use_load;
	u.v.stmt[IS_STORE] = use_store;
	ir_visit_stmt(&u.v, s);
	return u.used;
}

/* ---- statements ------------------------------------------------------------- */

static bool
is_zero(IrExpr *e)
{
	int64_t c;
	return ir_is_const(e, &c) && c == 0;
}

static void
emit_for(CEmit *E, IrStmt *s, bool last)
{
	Var *v = s->loop.var;
	CVar *cv = cexpr_var(E, v);
	cv->data = false;
	cv->text = NULL;
	cv->array = false;
	IrExpr *lo = s->loop.min, *ext = s->loop.extent;
	char *los = cexpr(E, lo, NULL, true);
	char *his = is_zero(lo) ? cexpr(E, ext, NULL, true)
	    : cexpr(E, ir_add(lo, ext), NULL, true);
	bool braces = flush_pre(E, last);
	bool par = s->loop.fk == FOR_PARALLEL && E->parallel_depth == 0;
	switch (s->loop.fk) {
	case FOR_PARALLEL:
		if (par) {
			line(E, "#ifdef _OPENMP");
			line(E, "#pragma omp parallel for");
			line(E, "#endif");
		} else
			line(E, "/* parallel (nested: runs serially) */");
		break;
	case FOR_SERIAL:
		break;
	case FOR_GPU_BLOCK: case FOR_GPU_THREAD:
		line(E, "/* %s.%c */", ir_for_kind_name(s->loop.fk), "xyz"[s->loop.gpu_dim % 3]);
		break;
	default:
		line(E, "/* %s */", ir_for_kind_name(s->loop.fk));
		break;
	}
	const char *vt = cexpr_vtype(v->type.code);
	line(E, "for (%s %s = %s; %s < %s; %s++) {", vt, cv->name, los, cv->name,
	    his, cv->name);
	E->indent++;
	if (s->loop.fk == FOR_PARALLEL)
		E->parallel_depth++;
	bool failed_before = E->uses_failed;
	E->uses_failed = false;
	cv->bound++;
	stmt(E, s->loop.body, true);
	cv->bound--;
	if (s->loop.fk == FOR_PARALLEL)
		E->parallel_depth--;
	close_block(E);
	if (par && E->uses_failed) {
		/* an allocation in the loop failed: report it from this thread */
		line(E, "if (txc_failed != 0) {");
		E->indent++;
		line(E, "txc_error_%s = txc_oom[txc_failed - 1];", kname(E));
		free_live(E);
		line(E, "return 4;");
		close_block(E);
	}
	E->uses_failed |= failed_before;
	if (braces)
		close_block(E);
}

static void
emit_let(CEmit *E, IrStmt *s, bool last)
{
	Var *v = s->let.var;
	IrExpr *val = s->let.value;
	CVar *cv = cexpr_var(E, v);
	int lanes = val->type.lanes;
	const char *ln = lanes > 1 ? cexpr_var(E, E->lane)->name : NULL;
	char *x = cexpr(E, val, ln, true);
	bool braces = flush_pre(E, last);
	if (!braces && !last) {
		open_block(E);
		braces = true;
	}
	cv->data = cexpr_is_data(E, val);
	cv->text = NULL;
	cv->array = lanes > 1;
	const char *vt = cexpr_vtype(v->type.code);
	if (lanes > 1) {
		line(E, "%s %s[%d];", vt, cv->name, lanes);
		line(E, "for (int64_t %s = 0; %s < %d; %s++)", ln, ln, lanes, ln);
		line(E, "\t%s[%s] = %s;", cv->name, ln, x);
	} else
		line(E, "const %s %s = %s;", vt, cv->name, x);
	if (!ir_stmt_uses_var(s->let.body, v))
		line(E, "(void)%s;", cv->name);
	cv->bound++;
	stmt(E, s->let.body, true);
	cv->bound--;
	if (braces)
		close_block(E);
}

/* x without an outer call of fn ("txc_f16_round(" ...), when x is one
 * call of it (its parenthesis closes at the end, so not "fn(a) < b ?
 * c : fn(d)"); else x. */
static char *
strip_call(CEmit *E, char *x, const char *fn)
{
	size_t n = strlen(x), k = strlen(fn);
	int depth = 1;

	if (strncmp(x, fn, k) != 0 || n <= k || x[n - 1] != ')')
		return x;
	for (size_t i = k; i < n - 1; i++) {
		depth += x[i] == '(' ? 1 : x[i] == ')' ? -1 : 0;
		if (depth == 0)
			return x;
	}
	return arena_printf(E->a, "%.*s", (int)(n - k - 1), x + k);
}

/* The C text storing value text x into an element of b.  A 16-bit float
 * text is an exact value or a rounding call, and txc_f16_bits and
 * txc_bf16_bits round by themselves, so the call is left out. */
static char *
store_value(CEmit *E, Buffer *b, char *x)
{
	if (b->elem == TY_F16) {
		chelp_use(E, H_F16_BITS);
		return arena_printf(E->a, "txc_f16_bits(%s)", strip_call(E, x, "txc_f16_round("));
	}
	if (b->elem == TY_BF16) {
		chelp_use(E, H_BF16_BITS);
		return arena_printf(E->a, "txc_bf16_bits(%s)", strip_call(E, x, "txc_bf16_round("));
	}
	return x;
}

static void
emit_store(CEmit *E, IrStmt *s, bool last)
{
	Buffer *b = s->store.buf;
	if (b->is_input)
		ICE("C backend: store to input '%s'", b->name);
	const char *name = cname_get(E->names, b, b->name);
	IrExpr *val = s->store.value, *pr = s->store.pred;
	int lanes = val->type.lanes;
	for (int i = 0; i < s->store.nidx; i++)
		if (s->store.idx[i]->type.lanes > lanes)
			lanes = s->store.idx[i]->type.lanes;
	if (pr && pr->type.lanes > lanes)
		lanes = pr->type.lanes;
	const char *ln = lanes > 1 ? cexpr_var(E, E->lane)->name : NULL;
	/* with a predicate, the value and indices are computed only where it
	 * holds: nothing of theirs may be hoisted above it */
	char *ps = pr ? cexpr(E, pr, ln, true) : NULL;
	char *off = cexpr_offset(E, b, s->store.idx, s->store.nidx, ln, !pr);
	char *x = cexpr(E, val, ln, !pr);
	bool braces = flush_pre(E, last);
	if (lanes == 1) {
		if (ps) {
			line(E, "if (%s)", ps);
			line(E, "\t%s[%s] = %s;", name, off, store_value(E, b, x));
		} else
			line(E, "%s[%s] = %s;", name, off, store_value(E, b, x));
	} else if (!cexpr_reads_elsewhere(val, b, s->store.idx, s->store.nidx) &&
	    !(pr && cexpr_reads_elsewhere(pr, b, s->store.idx, s->store.nidx))) {
		line(E, "for (int64_t %s = 0; %s < %d; %s++)", ln, ln, lanes, ln);
		if (ps)
			line(E, "\tif (%s)", ps);
		line(E, "%s%s[%s] = %s;", ps ? "\t\t" : "\t", name, off,
		    store_value(E, b, x));
	} else {
		/* every lane's loads before any lane's store */
		const char *tmp = cname_fresh(E->names, "vec");
		open_block(E);
		line(E, "%s %s[%d];", cexpr_vtype(b->elem), tmp, lanes);
		for (int pass = 0; pass < 2; pass++) {
			line(E, "for (int64_t %s = 0; %s < %d; %s++)", ln, ln, lanes, ln);
			if (ps)
				line(E, "\tif (%s)", ps);
			if (pass == 0)
				line(E, "%s%s[%s] = %s;", ps ? "\t\t" : "\t", tmp, ln, x);
			else
				line(E, "%s%s[%s] = %s;", ps ? "\t\t" : "\t", name, off,
				    store_value(E, b, arena_printf(E->a, "%s[%s]", tmp, ln)));
		}
		close_block(E);
	}
	if (braces)
		close_block(E);
}

typedef struct {
	IrVisitor v;
	BoundsScope *scope;
} FreeVars;

static void
free_var(IrVisitor *v, IrExpr *e)
{
	FreeVars *fv = (FreeVars *)v;
	fv->scope = bounds_push(fv->scope, e->var, (Interval){NULL, NULL});
}

/* A constant upper bound of e whatever its variables hold, if any. */
static bool
const_max(IrExpr *e, int64_t *c)
{
	FreeVars fv = { .scope = NULL };
	fv.v.expr[IR_VAR] = free_var;
	ir_visit_expr(&fv.v, e);
	Interval iv = bounds_of_expr(e, fv.scope);
	return iv.max && ir_is_const(iv.max, c);
}

/* A bound on the number of elements of b when every extent has a
 * constant upper bound (min(16, W - wo*16) has 16), else -1 (also when it
 * overflows).  Indices stay below the actual extents' product, so a
 * buffer of this size always suffices. */
static int64_t
const_count(Buffer *b)
{
	int64_t n = 1, c;
	for (int d = 0; d < b->ndims; d++) {
		if (!b->extent[d])
			return -1;
		if (!ir_is_const(b->extent[d], &c) && !const_max(b->extent[d], &c))
			return -1;
		if (c < 0)
			c = 0;
		if (c != 0 && n > INT64_MAX / c)
			return -1;
		n *= c;
	}
	return n;
}

static int
elem_bytes(ScalarType t)
{
	int bits = ir_bits(t);
	return bits < 8 ? 1 : bits / 8;
}

static void
emit_allocate(CEmit *E, IrStmt *s, bool last)
{
	Buffer *b = s->alloc.buf;
	const char *name = cname_get(E->names, b, b->name);
	const char *ct = target_c_type(b->elem);
	int64_t n = const_count(b);
	char *dims = "";
	for (int d = 0; d < b->ndims; d++)
		dims = arena_printf(E->a, "%s%s%s", dims, d ? ", " : "",
		    b->extent[d] ? ir_expr_str(b->extent[d]) : "?");
	bool used = uses_buffer(s->alloc.body, b);
	if (n >= 0 && n <= STACK_BYTES / elem_bytes(b->elem)) {
		if (!last)
			open_block(E);
		line(E, "%s %s[%lld];   /* %s[%s], %s */", ct, name,
		    (long long)(n ? n : 1), ir_type_str(ir_scalar(b->elem)), dims,
		    ir_scope_name(b->scope));
		if (!used)
			line(E, "(void)%s;", name);
		stmt(E, s->alloc.body, true);
		if (!last)
			close_block(E);
		return;
	}
	IrExpr *count = NULL;
	for (int d = 0; d < b->ndims; d++)
		count = count ? ir_mul(count, b->extent[d]) : b->extent[d];
	char *cs = count ? cexpr(E, count, NULL, true) : "1";
	chelp_use(E, H_ALLOC);
	if (!last)
		open_block(E);
	flush_pre(E, true);
	line(E, "%s *%s = txc_alloc(%s, sizeof(%s));   /* %s[%s], %s */", ct, name,
	    cs, ct, ir_type_str(ir_scalar(b->elem)), dims, ir_scope_name(b->scope));
	line(E, "if (%s == NULL) {", name);
	E->indent++;
	if (E->parallel_depth > 0) {
		line(E, "#ifdef _OPENMP");
		line(E, "#pragma omp atomic write");
		line(E, "#endif");
		*ARENA_PUSH(E->a, E->oom, E->noom, E->capoom) = arena_printf(E->a,
		    "%s: out of memory allocating '%s'", kname(E), b->name);
		line(E, "txc_failed = %d;   /* TXC_ERR_ALLOC: txc_oom[%d] */", E->noom, E->noom - 1);
		E->uses_failed = E->any_failed = true;
		E->indent--;
		line(E, "} else {");
		E->indent++;
		stmt(E, s->alloc.body, false);
		line(E, "free(%s);", name);
		close_block(E);
	} else {
		fail(E, arena_printf(E->a, "%s: out of memory allocating '%s'",
		    kname(E), b->name), "4");
		close_block(E);
		*ARENA_PUSH(E->a, E->heap, E->nheap, E->capheap) = name;
		stmt(E, s->alloc.body, false);
		E->nheap--;
		line(E, "free(%s);", name);
	}
	if (!last)
		close_block(E);
}

static void
emit_if(CEmit *E, IrStmt *s, bool last)
{
	char *c = cexpr(E, s->ifs.cond, NULL, true);
	bool braces = flush_pre(E, last);
	line(E, "if (%s) {", c);
	E->indent++;
	stmt(E, s->ifs.then_s, true);
	E->indent--;
	if (s->ifs.else_s) {
		line(E, "} else {");
		E->indent++;
		stmt(E, s->ifs.else_s, true);
		E->indent--;
	}
	line(E, "}");
	if (braces)
		close_block(E);
}

static void
emit_assert(CEmit *E, IrStmt *s, bool last)
{
	if (E->parallel_depth > 0) {
		diag_error(s->loc, "the C backend cannot check an assertion inside a parallel loop");
		E->error = true;
		return;
	}
	/* if (M < 0) reads better than if (!(M >= 0)); not for floats (NaN) */
	IrExpr *cond = s->assrt.cond;
	static const IrExprKind inverse[] = {
		[IR_EQ] = IR_NE, [IR_NE] = IR_EQ, [IR_LT] = IR_GE,
		[IR_LE] = IR_GT, [IR_GT] = IR_LE, [IR_GE] = IR_LT,
	};
	bool inv = cond->kind >= IR_EQ && cond->kind <= IR_GE &&
	    cond->type.lanes == 1 && !ir_is_float(cond->a->type);
	if (inv)
		cond = ir_binop(inverse[cond->kind], cond->a, cond->b);
	char *c = cexpr(E, cond, NULL, true);
	bool braces = flush_pre(E, last);
	const char *msg = s->assrt.msg ? s->assrt.msg : "assertion failed";
	if (!c_names_kernel(E->f, msg))
		msg = arena_printf(E->a, "%s: %s", kname(E), msg);
	if (inv)
		line(E, "if (%s) {", c);
	else
		line(E, "if (!(%s)) {", c);
	E->indent++;
	fail(E, msg, arena_printf(E->a, "%d", s->assrt.code));
	close_block(E);
	if (braces)
		close_block(E);
}

static void
stmt(CEmit *E, IrStmt *s, bool last)
{
	if (!s)
		return;
	E->npre = 0;
	if (E->hooks && E->hooks->stmt && E->hooks->stmt(E, s, last))
		return;
	switch (s->kind) {
	case IS_FOR:
		emit_for(E, s, last);
		break;
	case IS_LET:
		emit_let(E, s, last);
		break;
	case IS_STORE:
		emit_store(E, s, last);
		break;
	case IS_ALLOCATE:
		emit_allocate(E, s, last);
		break;
	case IS_IF:
		emit_if(E, s, last);
		break;
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			stmt(E, s->block.stmts[i], last && i == s->block.n - 1);
		break;
	case IS_EVALUATE: {
		IrExpr *v = s->eval.value;
		const char *ln = v->type.lanes > 1 ? cexpr_var(E, E->lane)->name : NULL;
		char *x = cexpr(E, v, ln, true);
		bool braces = flush_pre(E, last);
		if (ln) {
			line(E, "for (int64_t %s = 0; %s < %d; %s++)", ln, ln,
			    v->type.lanes, ln);
			line(E, "\t(void)%s;", x);
		} else
			line(E, "(void)%s;", x);
		if (braces)
			close_block(E);
		break;
	}
	case IS_ASSERT:
		emit_assert(E, s, last);
		break;
	case IS_PRODUCE:
		line(E, "/* %s %s */", s->produce.update ? "update" : "produce",
		    s->produce.name ? s->produce.name : "?");
		stmt(E, s->produce.body, last);
		break;
	default:
		ICE("C backend: statement kind %d", (int)s->kind);
	}
}

/* ---- entry points ----------------------------------------------------------- */

char *
c_emit_params(Arena *a, CNames *n, IrFunc *f, bool dlpack)
{
	char *s = "";
	const char *sep = "";
	for (int i = 0; i < f->nparams; i++, sep = ", ") {
		Var *v = f->params[i];
		s = arena_printf(a, "%s%s%s %s", s, sep, target_c_type(v->type.code),
		    cname_get(n, v, v->name));
	}
	for (int i = 0; i < f->nargs; i++, sep = ", ") {
		Buffer *b = f->args[i];
		const char *cn = cname_get(n, b, b->name);
		if (dlpack)
			s = arena_printf(a, "%s%s%sDLTensor *%s", s, sep,
			    b->is_input ? "const " : "", cn);
		else
			s = arena_printf(a, "%s%s%s%s *%s", s, sep,
			    b->is_input ? "const " : "", target_c_type(b->elem), cn);
	}
	return *s ? s : "void";
}

/* Whether the kernel's i-th parameter is a size (else a scalar, data). */
static bool
is_size_param(IrFunc *f, int i)
{
	if (f->kernel && f->kernel->nparams == f->nparams)
		return f->kernel->params[i].is_size;
	return f->params[i]->type.code == TY_I64;
}

/* Names f's parameters and sets up what the expression writer knows. */
static void
begin_func(CEmit *E, IrFunc *f, IrFunc **all, int nall)
{
	E->f = f;
	E->names = cname_new(E->a);
	E->vars = NULL;
	E->nvars = E->capvars = 0;
	E->nheap = 0;
	E->npre = 0;
	E->parallel_depth = 0;
	E->uses_failed = E->any_failed = false;
	E->noom = 0;
	cname_func(E->names, all, nall, f);
	for (int i = 0; i < f->nparams; i++) {
		CVar *cv = cexpr_var(E, f->params[i]);
		cv->param = true;
		cv->data = !is_size_param(f, i);
	}
	E->lane = ir_new_var("lane", ir_i64);
	cexpr_var(E, E->lane)->param = true;   /* valid in every lane loop */
}

/* e, an extent of the sizes, in u64 arithmetic, or NULL for a form this
 * does not convert.  A specialized kernel tests its tensors for NULL
 * before its branch's overflow checks (lower/sizecheck.c), where an
 * extent such as N + 2 may pass 64 bits: in i64 that is undefined
 * behaviour, in u64 it wraps.  The sizes are known non-negative by then
 * (their signs are checked first), so the u64 value is the extent where
 * the extent fits, and a wrapped one at worst lets NULL on to the branch's
 * size error. */
static IrExpr *
as_u64(IrExpr *e)
{
	IrType u = ir_scalar(TY_U64);
	switch (e->kind) {
	case IR_INT: return ir_int(u, e->ival);
	case IR_VAR: return ir_cast(u, e);
	case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_MIN: case IR_MAX: {
		IrExpr *a = as_u64(e->a), *b = as_u64(e->b);
		return a && b ? ir_binop(e->kind, a, b) : NULL;
	}
	default:
		return NULL;
	}
}

/* The whole function text of f's entry point, in a malloc'ed string. */
static char *
emit_func(CEmit *E, IrFunc *f, const char *head, bool kernel)
{
	char *body;
	size_t len;
	E->out = open_memstream(&body, &len);
	if (!E->out)
		diag_fatal("out of memory");
	E->indent = 1;
	/* the sizes first (signs, -D values, no overflow: lower/sizecheck.c),
	 * so that the extents the NULL tests below compute are in range */
	IrStmt *rest = f->body;
	int nsz = kernel ? 0 : ir_size_checks(rest);
	for (int i = 0; i < nsz; i++)
		stmt(E, rest->block.stmts[i], false);
	if (nsz)
		rest = ir_block(rest->block.stmts + nsz, rest->block.n - nsz);
	for (int i = 0; !kernel && i < f->nargs; i++) {
		Buffer *b = f->args[i];
		/* NULL is fine for a tensor of no elements (PyTorch's empty
		 * tensors): the loops touch none of it */
		const char *some = "";
		for (int d = 0; d < b->ndims; d++) {
			IrExpr *x = b->extent[d], *ux = x ? as_u64(x) : NULL;
			int64_t c;
			const char *xs = !x ? "0" : x->kind == IR_VAR || ir_is_const(x, &c) || !ux ?
			    cexpr(E, x, NULL, false) : cexpr(E, ux, NULL, false);
			some = arena_printf(E->a, "%s && %s != 0", some, xs);
		}
		line(E, "if (%s == NULL%s) {", cname_get(E->names, b, b->name), some);
		E->indent++;
		fail(E, arena_printf(E->a, "%s: argument '%s' is NULL", f->name,
		    b->name), "1");
		close_block(E);
	}
	stmt(E, rest, true);
	if (!kernel)
		line(E, "return 0;");
	fclose(E->out);

	char *fn;
	size_t fnlen;
	FILE *out = open_memstream(&fn, &fnlen);
	if (!out)
		diag_fatal("out of memory");
	fprintf(out, "%s%s\n%s(%s)\n{\n", head, kernel ? "void" : "int", f->name,
	    c_emit_params(E->a, E->names, f, false));
	if (!kernel)
		cconst_emit(out, E->names, f);
	for (int i = 0; i < f->nparams; i++)
		if (!ir_stmt_uses_var(f->body, f->params[i]))
			fprintf(out, "\t(void)%s;\n", cexpr_var(E, f->params[i])->name);
	if (E->any_failed) {
		fputs("\tstatic const char *const txc_oom[] = {\n", out);
		for (int i = 0; i < E->noom; i++)
			fprintf(out, "\t\t%s,\n", cexpr_string(E->a, E->oom[i]));
		fputs("\t};\n\tint txc_failed = 0;   /* set by a parallel loop: txc_oom[txc_failed - 1] */\n",
		    out);
	}
	fwrite(body, 1, len, out);
	fputs("}\n", out);
	fclose(out);
	free(body);
	return fn;
}

static char *
emit_dlpack(CEmit *E)
{
	char *s;
	size_t len;
	FILE *out = open_memstream(&s, &len);
	if (!out)
		diag_fatal("out of memory");
	cdlpack_emit(out, E);
	fclose(out);
	return s;
}

/* s with comment delimiters broken up, for a C comment. */
static const char *
comment_safe(Arena *a, const char *s)
{
	char *t = arena_strdup(a, s ? s : "");
	for (char *p = t; p[0] && p[1]; p++)
		if ((p[0] == '*' && p[1] == '/') || (p[0] == '/' && p[1] == '*'))
			p[0] = '_';
	return t;
}

bool
c_emit(FILE *out, IrFunc **funcs, int n, const char *source_name)
{
	bool ok = true;
	for (int i = 0; i < n; i++)
		if (!cname_ok_global(funcs[i]->name)) {
			diag_error(funcs[i]->kernel ? funcs[i]->kernel->name_loc : loc_none,
			    "kernel name '%s' cannot be a C function name (a C keyword "
			    "or a name the C library may define); rename the kernel",
			    funcs[i]->name);
			ok = false;
		}
	if (!ok)
		return false;

	CHelpers help = { 0 };
	CEmit E = { .a = arena_new(), .help = &help };
	char **texts = calloc(2 * (size_t)n + 1, sizeof *texts);
	const char **protos = calloc((size_t)n + 1, sizeof *protos);
	if (!texts || !protos)
		diag_fatal("out of memory");
	for (int i = 0; i < n && !E.error; i++) {
		begin_func(&E, funcs[i], funcs, n);
		protos[i] = c_emit_params(E.a, E.names, funcs[i], false);
		texts[2 * i] = emit_func(&E, funcs[i], "", false);
		texts[2 * i + 1] = emit_dlpack(&E);
	}
	ok = !E.error;
	if (ok) {
		fprintf(out, "/* Generated by txc from %s; do not edit.\n *\n",
		    comment_safe(E.a, source_name));
		fputs(" * Entry points (0 on success, else an error code whose message\n"
		    " * NAME_last_error() returns):\n", out);
		for (int i = 0; i < n; i++)
			fprintf(out, " *   int %s(%s);\n", funcs[i]->name, protos[i]);
		fputs(" * Build: cc -O2 -c FILE.c [-fopenmp]; link with -lm.  With\n"
		    " * -DTXC_DLPACK, NAME_dlpack() takes DLTensors (dlpack/dlpack.h).\n"
		    " */\n"
		    "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n"
		    "#include <stdlib.h>\n#include <string.h>\n\n"
		    "#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && "
		    "!defined(__STDC_NO_THREADS__)\n"
		    "#define TXC_THREAD_LOCAL _Thread_local\n#else\n"
		    "#define TXC_THREAD_LOCAL\n#endif\n\n", out);
		chelp_write(out, &help);
		for (int i = 0; i < n; i++) {
			const char *k = funcs[i]->name;
			fprintf(out, "/* ---- %s ---- */\n\n", k);
			fprintf(out, "static TXC_THREAD_LOCAL const char *txc_error_%s = \"\";\n\n", k);
			fprintf(out, "const char *%s_last_error(void);\n", k);
			fprintf(out, "int %s(%s);\n\n", k, protos[i]);
			fprintf(out, "/* The message of this thread's last failed call of %s(). */\n"
			    "const char *\n%s_last_error(void)\n{\n\treturn txc_error_%s;\n}\n\n",
			    k, k, k);
			fputs(texts[2 * i], out);
			fputc('\n', out);
		}
		cdlpack_prelude(out);
		for (int i = 0; i < n; i++)
			fputs(texts[2 * i + 1], out);
		fputs("#endif /* TXC_DLPACK */\n", out);
	}
	for (int i = 0; i < 2 * n; i++)
		free(texts[i]);
	free(texts);
	free(protos);
	arena_free(E.a);
	return ok && !ferror(out);
}

/* ---- for the flavours (cemit.h) ----------------------------------------- */

void
cemit_line(CEmit *E, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(E, fmt, ap);
	va_end(ap);
}

void
cemit_stmt(CEmit *E, IrStmt *s, bool last)
{
	stmt(E, s, last);
}

bool
cemit_flush_pre(CEmit *E, bool last)
{
	return flush_pre(E, last);
}

void
cemit_open(CEmit *E)
{
	open_block(E);
}

void
cemit_close(CEmit *E)
{
	close_block(E);
}

void
cemit_fail(CEmit *E, const char *msg, const char *code)
{
	fail(E, msg, code);
}

void
cemit_push_heap(CEmit *E, const char *name)
{
	*ARENA_PUSH(E->a, E->heap, E->nheap, E->capheap) = name;
}

void
cemit_pop_heap(CEmit *E)
{
	E->nheap--;
}

void
cemit_begin_func(CEmit *E, IrFunc *f, IrFunc **all, int nall)
{
	begin_func(E, f, all, nall);
}

char *
cemit_func(CEmit *E, IrFunc *f, const char *head, bool kernel)
{
	return emit_func(E, f, head, kernel);
}

void
cemit_free_live(CEmit *E)
{
	free_live(E);
}
