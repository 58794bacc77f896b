#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// Translates with a model folder written by `transformer-studio-cli export --format onnx`, in ONNX Runtime
// (onnxruntime-node), with nothing of Transformer Studio but the folder: config.json (tokenizers, vocabularies,
// decoding settings), src.spm/tgt.spm for SentencePiece sides, encoder.onnx and decoder_step.onnx.
//
//   node translate.js FOLDER < sentences.txt > translations.txt     # one sentence per line, greedy by default
//   node translate.js FOLDER --beam 4 --input sentences.txt         # beam search as the app's
//
// Greedy and beam search mirror core/src/decode/search.cpp (the length limit, beam search's candidates, length
// penalty and stopping rule), so the output is `transformer-studio-cli translate --weights fp32`'s: token for
// token, up to near-ties between fp32 sums computed in another order (docs/export.md, "ONNX").
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');
const { Side, PAD, BOS, EOS } = require('./text');

const int64 = (values, dims) => new ort.Tensor('int64', BigInt64Array.from(values, BigInt), dims);

// Rows `index` of a tensor whose first axis is the batch: beam search follows its surviving hypotheses.
function selectRows(tensor, index) {
  const row = tensor.data.length / tensor.dims[0];
  const data = new tensor.data.constructor(index.length * row);
  index.forEach((r, i) => data.set(tensor.data.subarray(r * row, (r + 1) * row), i * row));
  return new ort.Tensor(tensor.type, data, [index.length, ...tensor.dims.slice(1)]);
}

class Model {
  // Reads FOLDER; `threads` is ONNX Runtime's intra-op thread count (the app's --threads).
  static async load(folder, threads = os.cpus().length) {
    const model = new Model();
    model.config = JSON.parse(fs.readFileSync(path.join(folder, 'config.json'), 'utf8'));
    const c = model.config;
    if (c.format !== 'transformer-studio-model' || c.version !== 1 || c.kind !== 'translation') {
      throw new Error(`${folder}: not a translation model folder written by transformer-studio-cli export`);
    }
    for (const file of ['encoder.onnx', 'decoder_step.onnx']) {
      if (!fs.existsSync(path.join(folder, file))) {
        throw new Error(`${folder}: no ${file}: export it with --format onnx`);
      }
    }
    model.src = new Side(folder, c.pipeline, 'src');
    model.tgt = new Side(folder, c.pipeline, 'tgt');
    model.maxLength = c.max_length; // positions the model has
    model.layers = c.model.decoder_layers;
    model.heads = c.model.heads;
    model.headDim = c.model.d_model / c.model.heads;
    const options = { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all' };
    model.encoder = await ort.InferenceSession.create(path.join(folder, 'encoder.onnx'), options);
    model.decoder = await ort.InferenceSession.create(path.join(folder, 'decoder_step.onnx'), options);
    return model;
  }

  // A sentence as the model reads it: ids ending with </s>, cut to the model's positions (Translator::encode).
  encodeSource(text) {
    const ids = this.src.encode(text);
    ids.push(EOS);
    return ids.length > this.maxLength ? [...ids.slice(0, this.maxLength - 1), EOS] : ids;
  }

  // The most tokens decoded for a source of `length` ids (search.cpp max_output_length).
  maxOutput(length, decode) {
    const custom = decode.max_len_a > 0 || decode.max_len_b > 0;
    const n = custom ? decode.max_len_a * length + decode.max_len_b : 2 * length + 10;
    return Math.max(1, Math.min(n, this.maxLength - 1));
  }

  // Runs the encoder on sentences (id lists) padded into one batch; returns the decoder's state for their rows.
  async start(sources) {
    const width = Math.max(...sources.map((s) => s.length));
    const padded = sources.flatMap((s) => [...s, ...Array(width - s.length).fill(PAD)]);
    const out = await this.encoder.run({ src_tokens: int64(padded, [sources.length, width]) });
    const state = { step: 0, feeds: { src_pad_mask: out.src_pad_mask } };
    for (let i = 0; i < this.layers; ++i) {
      for (const kv of ['k', 'v']) {
        state.feeds[`cross_${kv}_${i}`] = out[`cross_${kv}_${i}`];
        // No past yet: [rows, heads, 0, head_dim].
        const empty = [sources.length, this.heads, 0, this.headDim];
        state.feeds[`self_${kv}_${i}`] = new ort.Tensor('float32', new Float32Array(0), empty);
      }
    }
    return state;
  }

  // One decoder step: `tokens` (one per row) at position state.step; returns log-probabilities [rows][vocab]
  // as views into one Float32Array, and keeps the self-attention caches for the next step.
  async step(state, tokens) {
    const feeds = { ...state.feeds, tokens: int64(tokens, [tokens.length]), step: int64([state.step], []) };
    const out = await this.decoder.run(feeds);
    for (let i = 0; i < this.layers; ++i) {
      for (const kv of ['k', 'v']) state.feeds[`self_${kv}_${i}`] = out[`new_self_${kv}_${i}`];
    }
    ++state.step;
    const vocab = out.log_probs.dims[1];
    return tokens.map((_, r) => out.log_probs.data.subarray(r * vocab, (r + 1) * vocab));
  }

  // Keeps rows `index` of every cached tensor (DecoderState::reorder).
  reorder(state, index) {
    for (const name of Object.keys(state.feeds)) state.feeds[name] = selectRows(state.feeds[name], index);
  }
}

// Greedy decoding of a batch (search.cpp greedy_search): each row takes its most likely token until </s> or
// its own length limit. Returns the target ids of each row, without </s>.
async function greedy(model, sources, decode) {
  const state = await model.start(sources);
  const limits = sources.map((s) => model.maxOutput(s.length, decode));
  const outputs = sources.map(() => []);
  const done = sources.map(() => false);
  let tokens = sources.map(() => BOS);
  for (let t = 0; t < Math.max(...limits) && done.includes(false); ++t) {
    const logProbs = await model.step(state, tokens);
    tokens = logProbs.map((lp, r) => {
      if (done[r]) return PAD; // a finished row is fed padding until the batch ends
      let best = 0;
      for (let v = 1; v < lp.length; ++v) if (lp[v] > lp[best]) best = v;
      if (best === EOS || t + 1 >= limits[r]) done[r] = true;
      if (best !== EOS) outputs[r].push(best);
      return best;
    });
  }
  return outputs;
}

const lengthPenalty = (length, alpha) => (alpha <= 0 ? 1 : Math.pow((5 + length) / 6, alpha));

// The `k` extensions of the live hypotheses with the highest summed log-probability, highest first (equal sums:
// the earlier row and token first). The sums are float32, as beam search's in the app.
function bestCandidates(logProbs, alive, k) {
  const top = [];
  logProbs.forEach((lp, row) => {
    const base = Math.fround(alive[row].logProb);
    for (let token = 0; token < lp.length; ++token) {
      const logProb = Math.fround(lp[token] + base);
      if (top.length === k && !(logProb > top[k - 1].logProb)) continue;
      let at = top.length;
      while (at > 0 && top[at - 1].logProb < logProb) --at;
      top.splice(at, 0, { row, token, logProb });
      if (top.length > k) top.pop();
    }
  });
  return top;
}

// Beam search for one sentence (search.cpp beam_search): each step extends every live hypothesis, scores are
// summed log-probabilities in float32 as there, the best 2 × width candidates are examined in order, a
// hypothesis ending with </s> is finished with its score divided by the length penalty, and the search stops
// once `width` are finished or the best finished one beats every live one. Returns the best one's ids.
async function beam(model, source, decode) {
  const width = Math.max(1, decode.beam), alpha = decode.length_penalty;
  const maxLen = model.maxOutput(source.length, decode);
  const state = await model.start([source]);
  let alive = [{ ids: [], logProb: 0 }], tokens = [BOS];
  const finished = [];
  for (let t = 0; t < maxLen && alive.length > 0; ++t) {
    const logProbs = await model.step(state, tokens);
    const next = [], origins = [], nextTokens = [];
    for (const c of bestCandidates(logProbs, alive, 2 * width)) {
      if (next.length >= width) break;
      const h = { ids: [...alive[c.row].ids], logProb: c.logProb };
      if (c.token === EOS) {
        h.score = h.logProb / lengthPenalty(h.ids.length + 1, alpha);
        finished.push(h);
        continue;
      }
      h.ids.push(c.token);
      next.push(h);
      origins.push(c.row);
      nextTokens.push(c.token);
    }
    if (finished.length > 0) {
      const bestFinished = Math.max(...finished.map((h) => h.score));
      const bestAlive = Math.max(...next.map((h) => h.logProb / lengthPenalty(maxLen, alpha)));
      if (finished.length >= width || bestFinished >= bestAlive) break;
    }
    if (next.length === 0) break;
    model.reorder(state, origins);
    alive = next;
    tokens = nextTokens;
    if (t + 1 === maxLen) {
      for (const h of alive) finished.push({ ...h, score: h.logProb / lengthPenalty(h.ids.length, alpha) });
    }
  }
  finished.sort((a, b) => b.score - a.score); // stable: the first finished of equals
  return finished.length > 0 ? finished[0].ids : [];
}

// Translates lines: greedy in length-sorted batches of `batch` (the outputs are those of one at a time), beam
// search one sentence at a time. In input order.
async function translateAll(model, lines, decode, batch = 32) {
  const sources = lines.map((line) => model.encodeSource(line));
  const out = new Array(lines.length);
  if (decode.mode === 'beam') {
    for (let i = 0; i < sources.length; ++i) out[i] = model.tgt.decode(await beam(model, sources[i], decode));
    return out;
  }
  const order = sources.map((_, i) => i).sort((a, b) => sources[a].length - sources[b].length || a - b);
  for (let start = 0; start < order.length; start += batch) {
    const chunk = order.slice(start, start + batch);
    const ids = await greedy(model, chunk.map((i) => sources[i]), decode);
    chunk.forEach((i, k) => { out[i] = model.tgt.decode(ids[k]); });
  }
  return out;
}

// ---------------------------------------------------------------- the command line
const USAGE = `usage: node translate.js FOLDER [--input FILE] [--beam N] [--length-penalty A] [--batch N] [--threads N]

Translates FILE (default: standard input), one sentence per line, with the ONNX graphs of FOLDER (written by
transformer-studio-cli export --format onnx). Without --beam, the model's own decoding settings (config.json
experiment.decode): greedy, or beam search with its width and length penalty. --beam 1 is greedy.`;

function parseArguments(argv) {
  const args = { batch: 32, threads: os.cpus().length };
  const value = (i) => {
    if (i >= argv.length) throw new Error(`${argv[i - 1]} needs a value\n\n${USAGE}`);
    return argv[i];
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--help' || a === '-h') { console.log(USAGE); process.exit(0); }
    else if (a === '--input') args.input = value(++i);
    else if (a === '--beam') args.beam = Number(value(++i));
    else if (a === '--length-penalty') args.lengthPenalty = Number(value(++i));
    else if (a === '--batch') args.batch = Number(value(++i));
    else if (a === '--threads') args.threads = Number(value(++i));
    else if (a.startsWith('-') || args.folder) throw new Error(`unexpected argument ${a}\n\n${USAGE}`);
    else args.folder = a;
  }
  if (!args.folder) throw new Error(USAGE);
  for (const key of ['beam', 'batch', 'threads']) {
    if (args[key] !== undefined && !(Number.isInteger(args[key]) && args[key] >= 1)) {
      throw new Error(`--${key} must be a whole number from 1`);
    }
  }
  return args;
}

// The lines of a file or of standard input, as the app reads them (a last line without a newline counts, a
// carriage return before the newline goes).
function readLines(file) {
  const lines = fs.readFileSync(file === undefined ? 0 : file, 'utf8').split('\n').map((l) => l.replace(/\r$/, ''));
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

async function main() {
  const args = parseArguments(process.argv.slice(2));
  const model = await Model.load(args.folder, args.threads);
  // The model's own decoding settings, as `translate` takes them; --beam and --length-penalty on top.
  const defaults = { mode: 'greedy', beam: 5, length_penalty: 0.6, max_len_a: 0, max_len_b: 0 };
  const decode = { ...defaults, ...model.config.experiment.decode };
  if (decode.mode === 'sample') decode.mode = 'greedy'; // sampling is asked for, never inherited
  if (args.beam !== undefined) [decode.beam, decode.mode] = [args.beam, args.beam > 1 ? 'beam' : 'greedy'];
  if (args.lengthPenalty !== undefined) decode.length_penalty = args.lengthPenalty;
  const translations = await translateAll(model, readLines(args.input), decode, args.batch);
  process.stdout.write(translations.map((t) => t + '\n').join(''));
}

if (require.main === module) {
  main().catch((e) => {
    console.error(`translate.js: ${e.message}`);
    process.exit(1);
  });
}

module.exports = { Model, greedy, beam, translateAll, readLines, ort };
