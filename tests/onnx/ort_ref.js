// ort_ref.js: onnxruntime's outputs for the models genmodels.py wrote
// (tests/onnx/ort.sh; NODE_PATH names the folder onnxruntime-node is in).
//
//     node ort_ref.js DIR NAME...
//
// For each run of DIR/NAME.ort.json (inputs by graph name, shape and
// file), runs DIR/NAME.onnx and writes output j of run i as
// DIR/NAME.i.ortj.bin (float32, as genmodels.py writes numpy's).
'use strict';
const ort = require('onnxruntime-node');
const fs = require('fs');
const path = require('path');

async function one(dir, name) {
	const runs = JSON.parse(fs.readFileSync(path.join(dir, name + '.ort.json'), 'utf8'));
	const s = await ort.InferenceSession.create(path.join(dir, name + '.onnx'), {
		intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
	});
	for (let i = 0; i < runs.length; i++) {
		const feeds = {};
		for (const x of runs[i].inputs) {
			const b = fs.readFileSync(path.join(dir, x.file));
			const a = new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
			feeds[x.name] = new ort.Tensor('float32', Float32Array.from(a), x.shape);
		}
		const r = await s.run(feeds);
		s.outputNames.forEach((o, j) => {
			const y = Float32Array.from(r[o].data, Number);
			fs.writeFileSync(path.join(dir, `${name}.${i}.ort${j}.bin`),
			    Buffer.from(y.buffer, y.byteOffset, y.byteLength));
		});
	}
}

async function main() {
	const [dir, ...names] = process.argv.slice(2);
	for (const n of names)
		await one(dir, n);
}

main().catch((e) => { console.error(String(e)); process.exit(1); });
