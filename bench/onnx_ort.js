// onnx_ort.js: times a model with onnxruntime-node beside txc's
// (bench/onnx.sh; NODE_PATH names the folder onnxruntime-node is in).
//
//     node onnx_ort.js MODEL SIZE THREADS RUNS OUT.bin
//
// The same input as onnx_time.c (x[i] = sin(0.001 i)); one warm-up run,
// then RUNS timed ones on THREADS intra-op threads; prints the fastest and
// the median in milliseconds and writes the output to OUT.bin.
'use strict';
const ort = require('onnxruntime-node');
const fs = require('fs');

async function main() {
	const [model, size, threads, runs, out] = process.argv.slice(2);
	const s = await ort.InferenceSession.create(model, {
		intraOpNumThreads: +threads, interOpNumThreads: 1,
		executionMode: 'sequential', graphOptimizationLevel: 'all',
	});
	const n = 3 * size * size;
	const x = new Float32Array(n);
	for (let i = 0; i < n; i++)
		x[i] = Math.sin(0.001 * i);
	const feeds = { x: new ort.Tensor('float32', x, [1, 3, +size, +size]) };
	let r = await s.run(feeds);
	const t = [];
	for (let i = 0; i < +runs; i++) {
		const t0 = process.hrtime.bigint();
		r = await s.run(feeds);
		t.push(Number(process.hrtime.bigint() - t0) / 1e6);
	}
	t.sort((a, b) => a - b);
	console.log(t[0].toFixed(2), t[Math.floor(t.length / 2)].toFixed(2));
	const y = r[s.outputNames[0]].data;
	fs.writeFileSync(out, Buffer.from(y.buffer, y.byteOffset, y.byteLength));
}

main().catch((e) => { console.error(String(e)); process.exit(1); });
