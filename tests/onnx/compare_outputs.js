// SPDX-License-Identifier: GPL-3.0-or-later
// Holds examples/onnx (the JavaScript tokenizers and the ONNX graphs in ONNX Runtime) to what the app computes,
// as ts_onnx_reference wrote it (tests/onnx/onnx_reference.cpp):
//
//   node compare_outputs.js EXAMPLE_DIR FOLDER REFERENCE.json [TOLERANCE]
//
// Text: every sentence's source ids, and its round trips through each side's tokenizer, must be equal. Numbers:
// the encoder's outputs and the decoder's log-probabilities and caches, step by step on the reference's tokens
// with the encoder outputs of ONNX Runtime itself, within TOLERANCE (default 1e-4) of LibTorch's; -inf exactly.
// Prints the largest difference of each output; exits 1 on any mismatch.
'use strict';

const fs = require('fs');
const path = require('path');

const [exampleDir, folder, referenceFile, toleranceText] = process.argv.slice(2);
const { Model, ort } = require(path.resolve(exampleDir, 'translate.js'));
const { tokenize, detokenize } = require(path.resolve(exampleDir, 'text.js'));
const tolerance = Number(toleranceText || 1e-4);
const reference = JSON.parse(fs.readFileSync(referenceFile, 'utf8'));
let failures = 0;

const fail = (what) => {
  console.log(`FAIL: ${what}`);
  ++failures;
};

// The largest |a - b| over a tensor (null in the reference is -inf, which must match exactly).
function compare(name, expected, actual) {
  if (JSON.stringify(expected.shape) !== JSON.stringify(actual.dims)) {
    return fail(`${name}: shape [${actual.dims}], LibTorch's [${expected.shape}]`);
  }
  let worst = 0;
  expected.data.forEach((e, i) => {
    const a = actual.data[i];
    const diff = e === null ? (a === -Infinity ? 0 : Infinity) : Math.abs(a - e);
    if (!(diff <= worst)) worst = diff; // NaN counts as the worst
  });
  console.log(`${name}: max abs difference ${worst.toExponential(2)}`);
  if (!(worst <= tolerance)) fail(`${name} differs from LibTorch by ${worst} (tolerance ${tolerance})`);
  return worst;
}

async function main() {
  const model = await Model.load(folder, 1);
  let equalText = 0;
  const text = JSON.stringify;
  for (const s of reference.sentences) {
    const { config, sp } = model.src;
    const mine = {
      ids: model.encodeSource(s.text),
      src_round_trip: detokenize(tokenize(s.text, config, sp), config, sp),
      tgt_round_trip: model.tgt.decode(model.tgt.encode(s.text)),
    };
    const differing = Object.keys(mine).filter((key) => text(mine[key]) !== text(s[key]));
    for (const key of differing) fail(`${key} of ${text(s.text)}: ${text(mine[key])}, the app's ${text(s[key])}`);
    if (differing.length === 0) ++equalText;
  }
  console.log(`text: ${equalText} of ${reference.sentences.length} sentences tokenised and detokenised as the app does`);

  const int64 = (values, dims) => new ort.Tensor('int64', BigInt64Array.from(values, BigInt), dims);
  const src = reference.src_tokens;
  const encoded = await model.encoder.run({ src_tokens: int64(src.data, src.shape) });
  let worst = 0;
  for (const name of model.encoder.outputNames) {
    worst = Math.max(worst, compare(`encoder ${name}`, reference[name], encoded[name]));
  }
  const feeds = { src_pad_mask: encoded.src_pad_mask };
  for (let i = 0; i < model.layers; ++i) {
    for (const kv of ['k', 'v']) {
      feeds[`cross_${kv}_${i}`] = encoded[`cross_${kv}_${i}`];
      const empty = [src.shape[0], model.heads, 0, model.headDim];
      feeds[`self_${kv}_${i}`] = new ort.Tensor('float32', new Float32Array(0), empty);
    }
  }
  let out;
  for (const [t, step] of reference.steps.entries()) {
    const tokens = int64(step.tokens, [step.tokens.length]);
    out = await model.decoder.run({ ...feeds, tokens, step: int64([t], []) });
    worst = Math.max(worst, compare(`step ${t} log_probs`, step.log_probs, out.log_probs));
    for (let i = 0; i < model.layers; ++i) {
      for (const kv of ['k', 'v']) feeds[`self_${kv}_${i}`] = out[`new_self_${kv}_${i}`];
    }
  }
  for (let i = 0; i < model.layers; ++i) {
    for (const kv of ['k', 'v']) {
      const name = `self_${kv}_${i}`;
      worst = Math.max(worst, compare(`${name} after ${reference.steps.length} steps`, reference[name], feeds[name]));
    }
  }
  console.log(`largest difference from LibTorch: ${worst.toExponential(2)} (tolerance ${tolerance}); ${failures} failures`);
  process.exit(failures === 0 ? 0 : 1);
}

main().catch((e) => {
  console.log(`FAIL: ${e.stack}`);
  process.exit(1);
});
