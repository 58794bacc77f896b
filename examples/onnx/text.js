// SPDX-License-Identifier: GPL-3.0-or-later
// Text to token ids and back, as the app does it (core/src/text/tokenizer.cpp, vocab.cpp, pipeline.cpp) for the
// tokenizers a model folder's config.json describes: `word` (punctuation split, stripped or kept), `char` and
// SentencePiece `bpe`/`unigram` (./sentencepiece.js). Every kind first cleans the text (whitespace to spaces,
// control characters dropped) and lowercases it when the side asks for that.
'use strict';

const fs = require('fs');
const path = require('path');
const { SentencePiece, SPACE } = require('./sentencepiece');

// The characters the app treats as spaces (text/utf8.cpp is_space, and ASCII 0x1C-0x1F as Python's \s).
const SPACES = new Set([...' \t\n\v\f\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000',
  ...Array.from({ length: 11 }, (_, i) => String.fromCharCode(0x2000 + i))]);

// 'space', 'control' (dropped), 'word' (letters, marks, numbers, _ and the zero-width joiners) or 'other'.
function charClass(ch) {
  if (SPACES.has(ch)) return 'space';
  if (ch === '\u200c' || ch === '\u200d') return 'word';
  if (/^[\p{Cc}\p{Cf}]$/u.test(ch)) return 'control';
  return /^[\p{L}\p{M}\p{N}\p{Pc}]$/u.test(ch) ? 'word' : 'other';
}

// What every tokenizer does first. Lowercasing is Unicode's full mapping, as the app's ICU root locale.
function normalise(text, config) {
  let out = '';
  for (const ch of text) {
    const c = charClass(ch);
    if (c === 'space') out += ' ';
    else if (c !== 'control') out += ch;
  }
  return config.lowercase ? out.toLowerCase() : out;
}

function tokenize(text, config, sp) {
  const s = normalise(text, config);
  if (sp) return sp.encode(s);
  if (config.kind === 'char') { // one token per character, one ▁ for the spaces between words
    const tokens = [];
    let space = false;
    for (const ch of s) {
      if (ch === ' ') { space = tokens.length > 0; continue; }
      if (space) tokens.push(SPACE);
      space = false;
      tokens.push(ch);
    }
    return tokens;
  }
  if (config.punctuation === 'keep') return s.split(' ').filter((w) => w !== '');
  // Runs of word characters; every other character a token of its own ("split") or dropped ("strip").
  const tokens = [];
  let word = '';
  for (const ch of s + ' ') {
    const c = charClass(ch);
    if (c === 'word') { word += ch; continue; }
    if (word) tokens.push(word);
    word = '';
    if (c === 'other' && config.punctuation === 'split') tokens.push(ch);
  }
  return tokens;
}

// ---------------------------------------------------------------- word detokenization: punctuation re-attached
// "don ' t know , tom ." -> "don't know, tom." (tokenizer.cpp join_with_punctuation). A glue is [sticks to the
// left neighbour, sticks to the right one].
const NONE = [false, false], LEFT = [true, false], RIGHT = [false, true], BOTH = [true, true];
const CLOSERS = { '"': '"', "'": "'", '\u201c': '\u201d', '\u2018': '\u2019', '\u201e': '\u201c\u201d',
  '\u201a': '\u2018\u2019', '\u00ab': '\u00bb', '\u00bb': '\u00ab', '\u2039': '\u203a', '\u203a': '\u2039' };
const CJK = [[0x4E00, 0x9FFF], [0x3400, 0x4DBF], [0x20000, 0x2A6DF], [0xF900, 0xFAFF], [0x2F800, 0x2FA1F],
  [0x3000, 0x303F], [0xFF00, 0xFFEF], [0x3040, 0x30FF]];
const chars = (s) => Array.from(s);
const first = (s) => chars(s)[0] || '';
const last = (s) => chars(s).pop() || '';
const isWord = (token) => token !== '' && charClass(first(token)) === 'word';
const isDigit = (ch) => ch !== '' && /^\p{Nd}$/u.test(ch);
const asciiLower = (s) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const oneOf = (token, words) => words.includes(asciiLower(token)); // ASCII case-insensitive, as equals_ascii_ci
const bytes = (s) => Buffer.byteLength(s, 'utf8');

function closeQuote(ch, open) { // pops the innermost open quote that `ch` closes
  for (let i = open.length - 1; i >= 0; --i) {
    if (CLOSERS[open[i]].includes(ch)) { open.length = i; return true; }
  }
  return false;
}

// Punctuation between two words: "don't", "e-mail", "km/h", "3,5", "10:30", "z.b."; null when none of these.
function betweenWords(ch, prev, next, after, open) {
  if (ch === "'" || ch === '\u2019') {
    const glue = oneOf(next, ['s', 't', 're', 've', 'll', 'd', 'm']) ||
      oneOf(prev, ['c', 'd', 'j', 'l', 'm', 'n', 'o', 'qu', 's', 't']) ? BOTH
      : oneOf(next, ['ne', 'nen']) ? RIGHT : LEFT;
    if (glue === LEFT) closeQuote(ch, open);
    return glue;
  }
  if (ch === '-' || ch === '\u2010') return oneOf(next, ['und', 'oder', 'bis', 'als', 'sowie']) ? LEFT : BOTH;
  if (ch === '/') return BOTH;
  if (',.:'.includes(ch) && isDigit(last(prev)) && isDigit(first(next))) {
    return ch === ',' && bytes(prev) <= 2 && bytes(next) === 4 ? LEFT : BOTH; // "march 5, 1977" keeps its space
  }
  if (ch === '.' && chars(next).length === 1 && after === '.') return BOTH;
  return null;
}

function glueOf(tokens, i, ch, open) {
  if (charClass(ch) === 'word') return NONE;
  const at = (j) => (j >= 0 && j < tokens.length ? tokens[j] : '');
  const [prev, next, after] = [at(i - 1), at(i + 1), at(i + 2)];
  if (isWord(prev) && isWord(next)) {
    const glue = betweenWords(ch, prev, next, after, open);
    if (glue) return glue;
  }
  const cp = ch.codePointAt(0);
  if (CJK.some(([a, b]) => cp >= a && cp <= b)) return BOTH;
  if ('$\u00a3\u20ac\u00a5'.includes(ch) && isDigit(first(next))) return RIGHT; // "$5"
  if (ch === '-' && isWord(prev) && !isWord(next)) return LEFT; // "sitzungs-, kein"
  if (closeQuote(ch, open)) return LEFT;
  if (CLOSERS[ch]) { // an opening quote, unless a straight one ends a word before punctuation
    if ((ch === '"' || ch === "'") && isWord(prev) && !isWord(next)) return LEFT;
    open.push(ch);
    return RIGHT;
  }
  if (ch === '\u201d' || ch === '\u2019') return LEFT; // a closing quote without an opening one
  if (',.!?;:)]}%\u2026\u2030'.includes(ch)) return LEFT;
  return '([{\u00bf\u00a1'.includes(ch) ? RIGHT : NONE;
}

function detokenize(tokens, config, sp) {
  if (sp) return sp.decode(tokens);
  if (config.kind === 'char') return tokens.map((t) => (t === SPACE ? ' ' : t)).join('');
  if (config.punctuation !== 'split') return tokens.join(' ');
  let out = '', glueNext = false;
  const open = [];
  tokens.forEach((token, i) => {
    const glue = chars(token).length === 1 ? glueOf(tokens, i, token, open) : NONE;
    if (out !== '' && !glueNext && !glue[0]) out += ' ';
    out += token;
    glueNext = glue[1];
  });
  return out;
}

// ---------------------------------------------------------------- a side: tokenizer + vocabulary
// One side of a model folder's pipeline (config.json): tokens <-> ids with the special ids 0-3 first.
class Side {
  constructor(folder, pipeline, side) {
    this.config = pipeline[`${side}_tokenizer`].config;
    if (this.config.kind === 'bpe' || this.config.kind === 'unigram') {
      const file = path.join(folder, `${side}.spm`);
      this.sp = new SentencePiece(fs.readFileSync(file), file);
    }
    if (this.config.chinese && this.config.chinese !== 'none') {
      const conversion = this.config.chinese;
      console.error(`warning: ${side}: the app converts Chinese with OpenCC (${conversion}), this reader does not`);
    }
    this.tokens = pipeline[`${side}_vocab`].tokens;
    this.ids = new Map();
    this.tokens.forEach((t, id) => { if (!this.ids.has(t)) this.ids.set(t, id); });
  }
  encode(text) { return tokenize(text, this.config, this.sp).map((t) => (this.ids.has(t) ? this.ids.get(t) : UNK)); }
  // Ids -> text: stops at </s>, skips <pad> and <s> (Vocab::decode), then the detokenizer.
  decode(ids) {
    const tokens = [];
    for (const id of ids) {
      if (id === EOS) break;
      if (id === PAD || id === BOS) continue;
      tokens.push(this.tokens[id] !== undefined ? this.tokens[id] : this.tokens[UNK]);
    }
    return detokenize(tokens, this.config, this.sp);
  }
}

const PAD = 0, UNK = 1, BOS = 2, EOS = 3; // config.json special_ids: the first four entries of every vocabulary

module.exports = { Side, tokenize, detokenize, normalise, PAD, UNK, BOS, EOS };
