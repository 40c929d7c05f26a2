// public_ref.js: inputs and onnxruntime's outputs for a model from a
// public package (tests/onnx/public.sh; NODE_PATH names the folder
// onnxruntime-node is in).
//
//     node public_ref.js MODEL.onnx DIR NAME CALL RUN...
//
// Each RUN is "SIZES:SHAPE[;SHAPE...][:page]": the model's dynamic sizes,
// comma separated, then the shape of each graph input (comma separated
// too).  For run i it writes seeded random inputs DIR/NAME.i.inJ.bin
// (float32 in [-1, 1); with ":page", an [N, 3, H, W] image of dark
// glyph-like strokes in lines on a white page, normalised as PaddleOCR
// does, so that a text detector finds text), onnxruntime's outputs
// DIR/NAME.i.ortJ.bin, and
// DIR/NAME.meta in the form tests/onnx/models.c reads, whose call line is
// CALL.
'use strict';
const ort = require('onnxruntime-node');
const fs = require('fs');
const path = require('path');

// a small LCG, so that a run's inputs are the same on every machine
function filler(seed) {
	let s = seed >>> 0;
	return () => {
		s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
		return (s >>> 8) / (1 << 23) - 1;
	};
}

// lines 24 pixels apart, each of strokes 2 to 4 pixels wide and 10 high
// with gaps, dark on white, plus a little noise; then (v - mean) / std
function page(a, dims, rnd) {
	const [N, C, H, W] = dims, mean = [0.485, 0.456, 0.406], std = [0.229, 0.224, 0.225];
	const ink = new Uint8Array(H * W);
	for (let y0 = 6; y0 + 12 < H; y0 += 24)
		for (let x = 4; x < W - 4;) {
			const w = 2 + Math.floor((rnd() + 1) * 1.5), gap = 1 + Math.floor((rnd() + 1) * 3);
			for (let y = y0; y < y0 + 10; y++)
				for (let k = 0; k < w && x + k < W - 4; k++)
					ink[y * W + x + k] = 1;
			x += w + gap;
		}
	for (let b = 0; b < N; b++)
		for (let c = 0; c < C; c++)
			for (let p = 0; p < H * W; p++) {
				const v = (ink[p] ? 0.1 : 0.95) + 0.03 * rnd();
				a[(b * C + c) * H * W + p] = (v - mean[c % 3]) / std[c % 3];
			}
}

async function main() {
	const [model, dir, name, call, ...runs] = process.argv.slice(2);
	const s = await ort.InferenceSession.create(model, {
		intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
	});
	const meta = ['call ' + call];
	for (let i = 0; i < runs.length; i++) {
		const [sizes, shapes, kind] = runs[i].split(':');
		const sz = sizes ? sizes.split(',') : [];
		meta.push(`sizes ${sz.length} ${sz.join(' ')}`);
		const feeds = {};
		shapes.split(';').forEach((sh, j) => {
			const dims = sh.split(',').map(Number);
			const n = dims.reduce((a, b) => a * b, 1);
			const a = new Float32Array(n);
			const rnd = filler(1000 * i + j + 1);
			if (kind === 'page')
				page(a, dims, rnd);
			else
				for (let k = 0; k < n; k++)
					a[k] = rnd();
			const f = `${name}.${i}.in${j}.bin`;
			fs.writeFileSync(path.join(dir, f), Buffer.from(a.buffer));
			meta.push(`in ${j} ${n} ${f}`);
			feeds[s.inputNames[j]] = new ort.Tensor('float32', a, dims);
		});
		const r = await s.run(feeds);
		s.outputNames.forEach((o, j) => {
			const y = Float32Array.from(r[o].data, Number);
			const f = `${name}.${i}.ort${j}.bin`;
			fs.writeFileSync(path.join(dir, f), Buffer.from(y.buffer, y.byteOffset, y.byteLength));
			meta.push(`out ${j} ${y.length} ${f}`);
		});
		meta.push('run');
	}
	fs.writeFileSync(path.join(dir, name + '.meta'), meta.join('\n') + '\n');
}

main().catch((e) => { console.error(String(e)); process.exit(1); });
