// Loads a truco-rl policy exported to ONNX and reproduces the project's test vectors.
//
//   npm install
//   node check_vectors.js policy.onnx test_vectors.json
//
// Each vector holds a game state (as a match record), the acting seat, its observation vector, its action
// mask and the probabilities the project's own runtime produced. A front end that builds the observation
// itself (docs/export.md) can compare its vector with "observation" first, then the outputs here.
"use strict";

const fs = require("fs");
const ort = require("onnxruntime-node");

async function main() {
  const [modelPath, vectorsPath] = process.argv.slice(2);
  if (!modelPath || !vectorsPath) {
    console.error("usage: node check_vectors.js MODEL.onnx TEST_VECTORS.json");
    process.exit(2);
  }
  const data = JSON.parse(fs.readFileSync(vectorsPath, "utf8"));
  const tolerance = data.tolerance ?? 1e-5;
  const session = await ort.InferenceSession.create(modelPath);
  let worst = 0;
  for (const [i, v] of data.vectors.entries()) {
    const observation = new ort.Tensor("float32", Float32Array.from(v.observation), [1, v.observation.length]);
    const mask = new ort.Tensor("int8", Int8Array.from(v.action_mask), [1, v.action_mask.length]);
    const out = await session.run({ observation, action_mask: mask });
    const probs = out.probabilities.data;
    for (let a = 0; a < probs.length; a++) {
      const diff = Math.abs(probs[a] - v.probabilities[a]);
      worst = Math.max(worst, diff);
      if (diff > tolerance) {
        console.error(`vector ${i} (${v.preset}, seat ${v.seat}): action ${a} gives ${probs[a]}, expected ` +
                      `${v.probabilities[a]}`);
        process.exit(1);
      }
      if (v.action_mask[a] === 0 && probs[a] !== 0) {
        console.error(`vector ${i}: illegal action ${a} has probability ${probs[a]}`);
        process.exit(1);
      }
    }
    if (Math.abs(out.value.data[0] - v.value) > tolerance) {
      console.error(`vector ${i}: value ${out.value.data[0]}, expected ${v.value}`);
      process.exit(1);
    }
  }
  console.log(`${data.vectors.length} vectors reproduced (largest difference ${worst.toExponential(2)})`);
}

main().catch((err) => {
  console.error(String(err));
  process.exit(1);
});
