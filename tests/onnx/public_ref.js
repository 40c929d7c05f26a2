// public_ref.js: inputs and onnxruntime's outputs for a model from a
// public package (tests/onnx/public.sh; NODE_PATH names the folder
// onnxruntime-node is in).
//
//     node public_ref.js MODEL.onnx DIR NAME CALL RUN...
//
// Each RUN is "SIZES:SHAPE[;SHAPE...]": the model's dynamic sizes, comma
// separated, then the shape of each graph input (comma separated too).
// For run i it writes seeded random inputs DIR/NAME.i.inJ.bin (float32
// in [-1, 1)), onnxruntime's outputs DIR/NAME.i.ortJ.bin, and
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

async function main() {
	const [model, dir, name, call, ...runs] = process.argv.slice(2);
	const s = await ort.InferenceSession.create(model, {
		intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
	});
	const meta = ['call ' + call];
	for (let i = 0; i < runs.length; i++) {
		const [sizes, shapes] = runs[i].split(':');
		const sz = sizes.split(',');
		meta.push(`sizes ${sz.length} ${sz.join(' ')}`);
		const feeds = {};
		shapes.split(';').forEach((sh, j) => {
			const dims = sh.split(',').map(Number);
			const n = dims.reduce((a, b) => a * b, 1);
			const a = new Float32Array(n);
			const rnd = filler(1000 * i + j + 1);
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
