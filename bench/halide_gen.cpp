// halide_gen.cpp: the Halide 14 side of the benchmark: the same matmul and
// separable 3x3 blur as txc's, with the schedules Halide users know best
// (register-blocked, vectorized, parallel matmul, specialized to a
// matrix-vector fallback below one tile; the classic line-buffered blur).
// Built with Halide's GenGen.cpp driver into ahead-of-time objects; the
// table's compile-time column times the generator run.
#include "Halide.h"

using namespace Halide;

namespace {

// C(j, i) = sum_k A(k, i) * B(j, k): row-major M x K times K x N, with
// Halide's dimension 0 innermost.
class MatMul : public Generator<MatMul> {
public:
	Input<Buffer<float>> A{"A", 2};
	Input<Buffer<float>> B{"B", 2};
	Output<Buffer<float>> C{"C", 2};

	void generate() {
		Var j("j"), i("i");
		RDom k(0, A.dim(0).extent(), "k");
		Func acc("acc");
		acc(j, i) += A(k, i) * B(j, k);
		C(j, i) = acc(j, i);

		// Large matrices: 24x32 register tiles (ShiftInwards tails need
		// N >= 24 and M >= 32).  Anything smaller, matrix-vector products
		// above all, takes the fallback: column panels of 64 spread over
		// the threads, each row's dot products as k outer, eight vectors of
		// columns inner.  Both compute acc per row-level loop `ii`.
		Var jo("jo"), io("io"), ji("ji"), ii("ii"), iii("iii"), t("t");
		Expr big = C.dim(0).extent() >= 24 && C.dim(1).extent() >= 32;
		C.specialize(big)
			.tile(j, i, jo, io, ji, ii, 24, 32)
			.fuse(jo, io, t)
			.parallel(t)
			.split(ii, ii, iii, 4)
			.vectorize(ji, 8)
			.unroll(ji)
			.unroll(iii);
		C.split(j, jo, ji, 64, TailStrategy::GuardWithIf)
			.rename(i, ii)
			.reorder(ji, ii, jo)
			.parallel(jo);
		acc.compute_at(C, ii);
		acc.specialize(big).vectorize(j, 8).unroll(i);
		acc.update(0).specialize(big)
			.reorder(j, i, k)
			.vectorize(j, 8)
			.unroll(j)
			.unroll(i)
			.unroll(k, 2);
		acc.update(0)
			.reorder(j, i, k)
			.vectorize(j, 8, TailStrategy::GuardWithIf);
	}
};

// out(x, y) = 3x3 box blur of in, without padding: out is (W-2) x (H-2).
class Blur : public Generator<Blur> {
public:
	Input<Buffer<float>> in{"in", 2};
	Output<Buffer<float>> out{"out", 2};

	void generate() {
		Var x("x"), y("y"), yi("yi");
		Func bx("bx");
		bx(x, y) = (in(x, y) + in(x + 1, y) + in(x + 2, y)) * (1.0f / 3);
		out(x, y) = (bx(x, y) + bx(x, y + 1) + bx(x, y + 2)) * (1.0f / 3);

		out.split(y, y, yi, 32).parallel(y).vectorize(x, 8);
		bx.store_at(out, y).compute_at(out, yi).vectorize(x, 8);
	}
};

}  // namespace

HALIDE_REGISTER_GENERATOR(MatMul, halide_matmul)
HALIDE_REGISTER_GENERATOR(Blur, halide_blur)
