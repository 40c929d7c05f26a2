// halide_gen.cpp: the Halide 14 side of the benchmark: the same matmul,
// separable 3x3 blur and 3x3 convolution as txc's, with the schedules
// Halide users know best (register-blocked, vectorized, parallel matmul,
// specialized to a matrix-vector fallback below one tile; the classic
// line-buffered blur; the conv as txc's conv3x3.tx computes it, with its
// register tile as an unrolled Func).  Built with Halide's GenGen.cpp
// driver into ahead-of-time objects; the table's compile-time column times
// the generator run.
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


// The 3x3 convolution (stride 1, padding 1) as bench/kernels/conv3x3.tx
// computes it, step for step, so that the comparison is of compilers and
// not of algorithms: data NCHW, copied into a zero-bordered NHWC plane;
// weights in the same blocked layout Wp(kk, c, s, r, kb) = weight[16 kb +
// kk][c][r][s] (the driver packs them outside the timing, as txc's
// conv_prepack does); per block of 16 output channels (in parallel), 6
// pixels x 16 channels accumulate in registers over the 3 x 3 taps and 64
// input channels at a time (acc), added into the block's yb, which is then
// written back to NCHW 8 pixels wide.  Halide has no tensorize: the
// register tile is acc, a 6 x 16 Func computed per tile with its loops
// unrolled and vectorized, the idiom of Halide's own conv_layer app.  The
// row's last tile is guarded (GuardWithIf), which Halide partitions out of
// the main loop; rounding the tile up instead cost 11% at 14 x 14 and 30%
// at 7 x 7.
class Conv3x3 : public Generator<Conv3x3> {
public:
	Input<Buffer<float>> data{"data", 4};  // (w, h, c, n)
	Input<Buffer<float>> Wp{"Wp", 5};      // (kk, c, s, r, kb)
	Output<Buffer<float>> y{"y", 4};       // (q, p, k, n)

	void generate() {
		Var q("q"), p("p"), k("k"), n("n"), c("c"), x("x"), h("h");
		Var kk("kk"), kb("kb"), co("co");
		Expr C = data.dim(2).extent();
		Func zero_outside = BoundaryConditions::constant_exterior(data, 0.0f);
		Func padded("padded"), acc("acc"), yb("yb");
		padded(c, x, h, n) = zero_outside(x - 1, h - 1, c, n);
		// taps (s, r) and 64 input channels from co * 64; Halide turns
		// the predicate into the channel loop's bound
		RDom t(0, 3, 0, 3, 0, 64, "t");
		t.where(co * 64 + t.z < C);
		acc(kk, q, p, kb, co, n) = 0.0f;
		acc(kk, q, p, kb, co, n) += padded(co * 64 + t.z, q + t.x, p + t.y, n) *
			Wp(kk, co * 64 + t.z, t.x, t.y, kb);
		RDom cb(0, (C + 63) / 64, "cb");
		yb(kk, q, p, kb, n) = 0.0f;
		yb(kk, q, p, kb, n) += acc(kk, q, p, kb, cb, n);
		y(q, p, k, n) = yb(k % 16, q, p, k / 16, n);

		Var ko("ko"), ki("ki"), qo("qo"), qv("qv"), qb("qb"), qi("qi");
		y.split(k, ko, ki, 16, TailStrategy::GuardWithIf)
			.split(q, qo, qv, 8, TailStrategy::GuardWithIf)
			.reorder(qv, ki, qo, p, ko, n)
			.vectorize(qv)
			.parallel(ko);
		yb.compute_at(y, ko).vectorize(kk, 8);
		yb.update()
			.split(q, qb, qi, 6, TailStrategy::GuardWithIf)
			.reorder(kk, qi, qb, p, cb)
			.vectorize(kk, 8)
			.unroll(kk)
			.unroll(qi);
		acc.compute_at(yb, qb).vectorize(kk, 8).unroll(kk).unroll(q);
		acc.update()
			.reorder(kk, q, t.z, t.x, t.y)
			.vectorize(kk, 8)
			.unroll(kk)
			.unroll(q);
		// c outside w, rows in parallel, as txc's padded copy
		padded.compute_root().reorder(x, c, h, n).parallel(h);
	}
};

}  // namespace

HALIDE_REGISTER_GENERATOR(MatMul, halide_matmul)
HALIDE_REGISTER_GENERATOR(Blur, halide_blur)
HALIDE_REGISTER_GENERATOR(Conv3x3, halide_conv3x3)
