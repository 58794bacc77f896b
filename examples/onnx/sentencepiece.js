// SPDX-License-Identifier: GPL-3.0-or-later
// SentencePiece in plain JavaScript, for the models Transformer Studio trains (src.spm, tgt.spm of an exported
// folder): the .spm file is a protobuf ModelProto, read here with a tiny varint reader; text is encoded with the
// unigram model's Viterbi search or BPE's merges by score, and pieces are decoded back, as SentencePiece 0.1.97
// (Debian 12's, the one the app links) does. Byte fallback and user-defined pieces are refused: the app never
// trains them.
'use strict';

const SPACE = '\u2581'; // SentencePiece's "▁": a space, and the start of a word
const NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6; // ModelProto.SentencePiece.Type
const UNK_PENALTY = 10; // unigram_model.cc kUnkPenalty: an unknown character scores the lowest piece minus this

// The fields of one protobuf message: {number, value} for varints, {number, bytes} for the other wire types.
function* fields(bytes) {
  let pos = 0;
  const varint = () => {
    let value = 0, scale = 1, byte;
    do {
      byte = bytes[pos++];
      value += (byte & 0x7f) * scale; // floating point: the large varints (negative ids) are not used here
      scale *= 128;
    } while (byte & 0x80);
    return value;
  };
  while (pos < bytes.length) {
    const key = varint();
    const number = Math.floor(key / 8), wire = key % 8;
    if (wire === 0) {
      yield { number, value: varint() };
    } else {
      const length = wire === 1 ? 8 : wire === 5 ? 4 : wire === 2 ? varint() : -1;
      if (length < 0) throw new Error(`not a SentencePiece model: protobuf wire type ${wire}`);
      yield { number, bytes: bytes.subarray(pos, pos + length) };
      pos += length;
    }
  }
}

const utf8 = new TextDecoder('utf-8');

// Reads a .spm file's bytes into {type, pieces: [{piece, score, type}], ...the normaliser's switches}.
function parseModel(bytes) {
  const model = {
    type: 'unigram', pieces: [], normalizer: '', addDummyPrefix: true, removeExtraWhitespaces: true,
    escapeWhitespaces: true, unkSurface: ' \u2047 ', byteFallback: false, whitespaceAsSuffix: false,
  };
  for (const f of fields(bytes)) {
    if (f.number === 1) { // repeated SentencePiece pieces
      const p = { piece: '', score: 0, type: NORMAL };
      for (const g of fields(f.bytes)) {
        if (g.number === 1) p.piece = utf8.decode(g.bytes);
        else if (g.number === 2) p.score = Buffer.from(g.bytes).readFloatLE(0); // a float32, exactly
        else if (g.number === 3) p.type = g.value;
      }
      model.pieces.push(p);
    } else if (f.number === 2) { // TrainerSpec
      for (const g of fields(f.bytes)) {
        if (g.number === 3) model.type = { 1: 'unigram', 2: 'bpe', 3: 'word', 4: 'char' }[g.value];
        else if (g.number === 24) model.whitespaceAsSuffix = g.value !== 0;
        else if (g.number === 35) model.byteFallback = g.value !== 0;
        else if (g.number === 44) model.unkSurface = utf8.decode(g.bytes);
      }
    } else if (f.number === 3) { // NormalizerSpec
      for (const g of fields(f.bytes)) {
        if (g.number === 1) model.normalizer = utf8.decode(g.bytes);
        else if (g.number === 3) model.addDummyPrefix = g.value !== 0;
        else if (g.number === 4) model.removeExtraWhitespaces = g.value !== 0;
        else if (g.number === 5) model.escapeWhitespaces = g.value !== 0;
      }
    }
  }
  return model;
}

class SentencePiece {
  constructor(bytes, name) {
    Object.assign(this, parseModel(bytes));
    const refuse = (what) => { throw new Error(`${name}: ${what}: not supported by this reader`); };
    if (this.type !== 'unigram' && this.type !== 'bpe') refuse(`a ${this.type} model`);
    if (this.byteFallback) refuse('byte fallback');
    if (this.whitespaceAsSuffix) refuse('treat_whitespace_as_suffix');
    this.index = new Map(); // piece -> id, as SentencePiece's PieceToId
    this.minScore = Infinity;
    this.maxChars = 1;
    this.pieces.forEach((p, id) => {
      if (p.type === USER_DEFINED || p.type === BYTE) refuse(`the piece ${JSON.stringify(p.piece)}`);
      if (p.type === UNKNOWN) this.unkId = id;
      if (!this.index.has(p.piece)) this.index.set(p.piece, id);
      if (p.type === NORMAL) {
        this.minScore = Math.min(this.minScore, p.score);
        this.maxChars = Math.max(this.maxChars, Array.from(p.piece).length);
      }
    });
    if (this.unkId === undefined) refuse('a model without an unknown piece');
    // The app trains with normalization_rule_name "identity"; a model with NFKC rules gets String's NFKC,
    // close to (not exactly) SentencePiece's nmt_nfkc.
    this.nfkc = this.normalizer !== '' && this.normalizer !== 'identity';
  }

  // SentencePiece's Normalizer without rules: spaces trimmed and collapsed, one in front, each as ▁.
  normalize(text) {
    if (this.nfkc) text = text.normalize('NFKC');
    if (this.removeExtraWhitespaces) text = text.replace(/^ +/, '').replace(/ +/g, ' ');
    if (text === '') return '';
    if (this.addDummyPrefix) text = ' ' + text;
    if (this.escapeWhitespaces) text = text.replaceAll(' ', SPACE);
    const space = this.escapeWhitespaces ? SPACE : ' ';
    while (this.removeExtraWhitespaces && text.endsWith(space)) text = text.slice(0, -space.length);
    return text;
  }

  // Text -> pieces (strings), as SentencePieceProcessor::Encode: a run of unknown characters is one piece.
  encode(text) {
    const chars = Array.from(this.normalize(text));
    const found = this.type === 'unigram' ? this.viterbi(chars) : this.merge(chars);
    const pieces = [];
    let previousUnknown = false;
    for (const { piece, id } of found) {
      const unknown = id === this.unkId;
      if (unknown && previousUnknown) pieces[pieces.length - 1] += piece;
      else pieces.push(piece);
      previousUnknown = unknown;
    }
    return pieces;
  }

  // Unigram: the segmentation with the highest sum of piece scores (unigram_model.cc EncodeOptimized). The sums
  // are float32 there, so they are rounded to float32 here too: ties break the same way.
  viterbi(chars) {
    const n = chars.length;
    const best = Array.from({ length: n + 1 }, () => ({ score: 0, start: -1, id: -1 }));
    const unkScore = Math.fround(this.minScore - UNK_PENALTY);
    const offer = (end, start, id, score) => {
      const candidate = Math.fround(score + best[start].score);
      if (best[end].start === -1 || candidate > best[end].score) best[end] = { score: candidate, start, id };
    };
    for (let start = 0; start < n; ++start) {
      let piece = '', single = false;
      for (let end = start + 1; end <= n && end - start <= this.maxChars; ++end) {
        piece += chars[end - 1];
        const id = this.index.get(piece);
        if (id === undefined || this.pieces[id].type !== NORMAL) continue;
        offer(end, start, id, this.pieces[id].score);
        if (end === start + 1) single = true;
      }
      if (!single) offer(start + 1, start, this.unkId, unkScore); // a character no piece covers
    }
    const out = [];
    for (let end = n; end > 0; end = best[end].start) {
      out.push({ piece: chars.slice(best[end].start, end).join(''), id: best[end].id });
    }
    return out.reverse();
  }

  // BPE: starting from characters, merge the adjacent pair whose merged piece scores highest (the leftmost of
  // equals) until no pair is a piece (bpe_model.cc).
  merge(chars) {
    const symbols = chars.slice();
    for (;;) {
      let at = -1, atScore = -Infinity;
      for (let i = 0; i + 1 < symbols.length; ++i) {
        const id = this.index.get(symbols[i] + symbols[i + 1]);
        if (id === undefined || this.pieces[id].type !== NORMAL) continue;
        if (at === -1 || this.pieces[id].score > atScore) [at, atScore] = [i, this.pieces[id].score];
      }
      if (at === -1) break;
      symbols.splice(at, 2, symbols[at] + symbols[at + 1]);
    }
    return symbols.map((piece) => {
      const id = this.index.get(piece);
      return { piece, id: id !== undefined && this.pieces[id].type === NORMAL ? id : this.unkId };
    });
  }

  // Pieces -> text (SentencePieceProcessor::Decode): ▁ becomes a space, the first one dropped; <unk> reads " ⁇ ",
  // a piece the model does not have is copied as it is.
  decode(pieces) {
    let text = '', expectSpace = true, spaceSeen = false;
    for (const piece of pieces) {
      if (spaceSeen || text !== '') expectSpace = false;
      spaceSeen = false;
      const id = this.index.has(piece) ? this.index.get(piece) : this.unkId;
      const type = this.pieces[id].type;
      if (type === CONTROL) continue;
      if (type === UNKNOWN) {
        text += piece === this.pieces[id].piece ? this.unkSurface : piece;
        continue;
      }
      let p = piece;
      if (expectSpace && (this.addDummyPrefix || this.removeExtraWhitespaces) && p.startsWith(SPACE)) {
        p = p.slice(SPACE.length);
        spaceSeen = !this.removeExtraWhitespaces; // with extra spaces removed, every leading ▁ goes
      }
      text += p.replaceAll(SPACE, ' ');
    }
    return text;
  }
}

module.exports = { SentencePiece, SPACE };
