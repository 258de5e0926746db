// Latency of the bundled models with onnxruntime-node, 1 thread:
//   node training/bench_onnx.cjs [models/voxkey-speaker-v1.onnx] [models/voxkey-spoof-v1.onnx]
const path = require('path');
const ort = require(path.join(__dirname, '..', 'node_modules', 'onnxruntime-node'));
(async () => {
  const spk = process.argv[2] || path.join(__dirname, '..', 'models', 'voxkey-speaker-v1.onnx');
  const cm = process.argv[3] || path.join(__dirname, '..', 'models', 'voxkey-spoof-v1.onnx');
  const opt = { intraOpNumThreads: 1, interOpNumThreads: 1 };
  const time = async (sess, feeds, n = 15) => {
    await sess.run(feeds);
    const t = [];
    for (let i = 0; i < n; i++) {
      const s = process.hrtime.bigint();
      await sess.run(feeds);
      t.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
    t.sort((a, b) => a - b);
    return { medianMs: +t[n >> 1].toFixed(2), minMs: +t[0].toFixed(2) };
  };
  const s1 = await ort.InferenceSession.create(spk, opt);
  const T = 498; // 5 s of audio -> 498 frames
  const f = new Float32Array(T * 80).map(() => Math.random() * 2 - 1);
  console.log(
    'speaker 5 s clip',
    await time(s1, { feats: new ort.Tensor('float32', f, [1, T, 80]) }),
  );
  const s2 = await ort.InferenceSession.create(cm, opt);
  const w = new Float32Array(64000).map(() => (Math.random() * 2 - 1) * 0.1);
  console.log(
    'spoof one 4 s window',
    await time(s2, { waveform: new ort.Tensor('float32', w, [1, 64000]) }),
  );
})();
