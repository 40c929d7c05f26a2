// onnx_public.js: times a published model with onnxruntime-node beside
// txc's (bench/onnx_public.sh; NODE_PATH names the folder
// onnxruntime-node is in).
//
//     node onnx_public.js MODEL SHAPE THREADS RUNS
//
// SHAPE is the input's, comma separated; the input is x[i] = sin(0.001 i)
// as in onnx_time.c; one warm-up run, then RUNS timed ones on THREADS
// intra-op threads; prints the fastest and the median in milliseconds.
'use strict';
const ort = require('onnxruntime-node');

async function main() {
	const [model, shape, threads, runs] = process.argv.slice(2);
	const s = await ort.InferenceSession.create(model, {
		intraOpNumThreads: +threads, interOpNumThreads: 1,
		executionMode: 'sequential', graphOptimizationLevel: 'all',
	});
	const dims = shape.split(',').map(Number);
	const n = dims.reduce((a, b) => a * b, 1);
	const x = new Float32Array(n);
	for (let i = 0; i < n; i++)
		x[i] = Math.sin(0.001 * i);
	const feeds = { [s.inputNames[0]]: new ort.Tensor('float32', x, dims) };
	await s.run(feeds);
	const t = [];
	for (let i = 0; i < +runs; i++) {
		const t0 = process.hrtime.bigint();
		await s.run(feeds);
		t.push(Number(process.hrtime.bigint() - t0) / 1e6);
	}
	t.sort((a, b) => a - b);
	console.log(t[0].toFixed(3), t[Math.floor(t.length / 2)].toFixed(3));
}

main().catch((e) => { console.error(String(e)); process.exit(1); });
