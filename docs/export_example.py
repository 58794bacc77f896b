#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Translate with a Transformer Studio model folder (transformer-studio-cli export) in plain PyTorch.

    python3 docs/export_example.py FOLDER "Ich sehe den Hund." ["another sentence" ...]   # or sentences on stdin

Greedy decoding, one translation per line: the output of `transformer-studio-cli translate --checkpoint FOLDER`.
It mirrors core/src/model/, core/src/text/tokenizer.cpp and core/src/decode/search.cpp; see docs/export.md.
"""
import argparse, json, struct, sys, unicodedata
import torch
from torch import nn

# ---------------------------------------------------------------- weights: model.safetensors
# An 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {...}},
# then the little-endian bytes of every tensor.
DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "I64": torch.int64,
          "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8, "BOOL": torch.bool}

def read_safetensors(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    tensors = {}
    for name, entry in header.items():
        begin, end = (8 + n + offset for offset in entry["data_offsets"])
        dtype = DTYPES[entry["dtype"]]
        flat = torch.frombuffer(bytearray(data[begin:end]), dtype=dtype) if end > begin else torch.empty(0, dtype=dtype)
        tensors[name] = flat.reshape(entry["shape"])
    return tensors

# ---------------------------------------------------------------- the model (attribute names = tensor names)
def linear(x, weight, bias):
    """x @ W^T + b. For a single row the C++ uses a matrix-vector product: so do we (the same rounding)."""
    if x.numel() == x.shape[-1]:
        return torch.addmv(bias, weight, x.reshape(-1)).view(*x.shape[:-1], weight.shape[0])
    return nn.functional.linear(x, weight, bias)

class Linear(nn.Linear):
    def forward(self, x):
        return linear(x, self.weight, self.bias)

layer_norm = lambda d: nn.LayerNorm(d, eps=1e-6)  # eps as in the app

def residual(pre_norm, x, norm, sublayer):
    """Pre-LN: x + f(norm(x)). Post-LN (the original Transformer): norm(x + f(x))."""
    return x + sublayer(norm(x)) if pre_norm else norm(x + sublayer(x))

class Attention(nn.Module):
    """Multi-head attention. Self-attention projects q, k and v with one fused `qkv` layer; cross-attention has
    `q` (for the decoder's positions) and a fused `kv` (for the encoder output)."""
    def __init__(self, d, heads, self_attention):
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        if self_attention:
            self.qkv = Linear(d, 3 * d)
        else:
            self.q, self.kv = Linear(d, d), Linear(d, 2 * d)
        self.out = Linear(d, d)
    def project(self, layer, x, parts):  # q, k, v (or k, v, or q) [B, T, D] -> each [B, H, T, D/H]
        return [p.view(*x.shape[:2], self.heads, self.head_dim).transpose(1, 2) for p in layer(x).chunk(parts, -1)]
    def attend(self, q, k, v, mask):
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / self.head_dim ** 0.5)  # [B, H, T, S]
        if mask is not None:
            scores = scores + mask  # -inf where a key must not be seen
        context = torch.matmul(scores.softmax(-1), v).transpose(1, 2)  # [B, T, H, D/H]
        return self.out(context.reshape(q.shape[0], q.shape[2], -1))

class FeedForward(nn.Module):
    def __init__(self, d, d_ff):
        super().__init__()
        self.fc1, self.fc2 = Linear(d, d_ff), Linear(d_ff, d)
    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))

class Layer(nn.Module):
    """Encoder layer: self-attention, feed-forward. Decoder layer: self-attention, cross-attention over the
    encoder output, feed-forward. Each sublayer has a residual connection and a LayerNorm."""
    def __init__(self, c, decoder):
        super().__init__()
        self.pre_norm, d = c["pre_norm"], c["d_model"]
        self.self_attention, self.ff = Attention(d, c["heads"], True), FeedForward(d, c["d_ff"])
        self.norm1, self.norm2 = layer_norm(d), layer_norm(d)
        if decoder:
            self.cross_attention, self.norm3 = Attention(d, c["heads"], False), layer_norm(d)
    def forward(self, x, src_mask, cache=None):
        """Encoder: all positions x [B, S, D] at once. Decoder: one new position x [B, 1, D]; `cache` holds the
        keys and values of the encoder output (computed once) and of the earlier positions (one more a step)."""
        def self_attend(y):
            q, k, v = self.self_attention.project(self.self_attention.qkv, y, 3)
            if cache is None:
                return self.self_attention.attend(q, k, v, src_mask)
            cache["k"] = k if cache["k"] is None else torch.cat([cache["k"], k], 2)
            cache["v"] = v if cache["v"] is None else torch.cat([cache["v"], v], 2)
            return self.self_attention.attend(q, cache["k"], cache["v"], None)  # the cache holds only the past
        def cross_attend(y):
            (q,) = self.cross_attention.project(self.cross_attention.q, y, 1)
            return self.cross_attention.attend(q, cache["memory_k"], cache["memory_v"], src_mask)
        h = residual(self.pre_norm, x, self.norm1, self_attend)
        if cache is None:
            return residual(self.pre_norm, h, self.norm2, self.ff)
        h = residual(self.pre_norm, h, self.norm2, cross_attend)
        return residual(self.pre_norm, h, self.norm3, self.ff)

class Transformer(nn.Module):
    """Encoder-decoder: the source is encoded once, then the decoder adds one target token per step."""
    def __init__(self, c, src_vocab, tgt_vocab, pad, bos):
        super().__init__()
        d, self.c, self.pad, self.bos = c["d_model"], c, pad, bos
        self.scale = d ** 0.5 if c["scale_embeddings"] else 1.0
        self.src_embed = nn.Embedding(src_vocab, d)
        if not c["share_embeddings"]:  # shared: one table for both sides, stored once as src_embed
            self.tgt_embed = nn.Embedding(tgt_vocab, d)
        if c["positions"] == "learned":
            self.positions = nn.Embedding(c["max_positions"], d)
        else:  # the sinusoid table (at least 1024 rows) is stored with the weights
            self.register_buffer("sinusoid", torch.zeros(max(c["max_positions"], 1024), d))
        self.encoder = nn.ModuleList(Layer(c, False) for _ in range(c["encoder_layers"]))
        self.decoder = nn.ModuleList(Layer(c, True) for _ in range(c["decoder_layers"]))
        if c["pre_norm"]:  # pre-LN ends each stack with a norm
            self.encoder_norm, self.decoder_norm = layer_norm(d), layer_norm(d)
        if not c["tie_output"]:  # tied: the target embedding is the output projection
            self.output_weight = nn.Parameter(torch.zeros(tgt_vocab, d))
        self.output_bias = nn.Parameter(torch.zeros(tgt_vocab))
    def tgt_table(self):
        return self.src_embed if self.c["share_embeddings"] else self.tgt_embed
    def position_table(self):  # its length is the most positions the model has
        return self.positions.weight if self.c["positions"] == "learned" else self.sinusoid
    def embed(self, table, tokens, offset):  # token embedding * sqrt(d) + the position's vector
        return table(tokens) * self.scale + self.position_table()[offset:offset + tokens.shape[1]]
    def encode(self, src, src_mask):
        x = self.embed(self.src_embed, src, 0)
        for layer in self.encoder:
            x = layer(x, src_mask)
        return self.encoder_norm(x) if self.c["pre_norm"] else x
    def start(self, memory):  # per decoder layer: the encoder output's keys and values, no past yet
        return [dict(zip(("memory_k", "memory_v"), layer.cross_attention.project(layer.cross_attention.kv, memory, 2)),
                     k=None, v=None) for layer in self.decoder]
    def step(self, caches, tokens, position, src_mask):
        """Log-probabilities [B, V] of the token that follows `tokens` [B] at `position`."""
        y = self.embed(self.tgt_table(), tokens.unsqueeze(1), position)
        for layer, cache in zip(self.decoder, caches):
            y = layer(y, src_mask, cache)
        if self.c["pre_norm"]:
            y = self.decoder_norm(y)
        weight = self.tgt_table().weight if self.c["tie_output"] else self.output_weight
        logits = linear(y.squeeze(1), weight, self.output_bias)
        logits[:, [self.pad, self.bos]] = float("-inf")  # padding and begin-of-sentence are never output
        return logits.log_softmax(-1)

def padding_mask(tokens, pad):  # [B, S] -> [B, 1, 1, S]: -inf on padding, 0 elsewhere
    return torch.zeros(tokens.shape).masked_fill(tokens == pad, float("-inf"))[:, None, None, :]

# ---------------------------------------------------------------- text: tokenizers
SPACES = set(" \t\n\v\f\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | \
    {chr(c) for c in range(0x2000, 0x200B)}
MARKER = "\u2581"  # the char tokenizer's token for a space

def char_class(ch):
    """'space', 'control' (dropped), 'word' (letters, marks, numbers, _ and the joiners) or 'other'."""
    if ch in SPACES: return "space"
    if ch in "\u200c\u200d": return "word"
    cat = unicodedata.category(ch)
    if cat in ("Cc", "Cf"): return "control"
    return "word" if cat[0] in "LMN" or cat == "Pc" else "other"

def normalise(text, config):
    """Whitespace -> ' ', control characters dropped, lowercased. Deviations from the app: it lowercases with ICU
    (str.lower() agrees on ordinary text) and converts Chinese with OpenCC ("chinese": "t2s"/"s2t"); not done here."""
    text = "".join(" " if char_class(ch) == "space" else ch for ch in text if char_class(ch) != "control")
    return text.lower() if config["lowercase"] else text

def tokenize(text, config, sp):
    s = normalise(text, config)
    if sp is not None:  # SentencePiece (bpe, unigram)
        return sp.encode(s, out_type=str)
    words = [w for w in s.split(" ") if w]
    if config["kind"] == "char":  # one token per character, MARKER for the space between words
        return [t for i, w in enumerate(words) for t in ([MARKER] if i else []) + list(w)]
    if config["punctuation"] == "keep":  # split on spaces only
        return words
    tokens, word = [], ""  # runs of word characters; each other character alone ("split") or dropped ("strip")
    for ch in s + " ":
        if char_class(ch) == "word":
            word += ch
            continue
        tokens += [word] if word else []
        word = ""
        if char_class(ch) == "other" and config["punctuation"] == "split":
            tokens.append(ch)
    return tokens

# Re-attaching punctuation ("don ' t know , tom ." -> "don't know, tom.") as tokenizer.cpp does.
NONE, LEFT, RIGHT, BOTH = (False, False), (True, False), (False, True), (True, True)  # sticks to (left, right)
CLOSERS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "\u201e": "\u201c\u201d",
           "\u201a": "\u2018\u2019", "\u00ab": "\u00bb", "\u00bb": "\u00ab", "\u2039": "\u203a", "\u203a": "\u2039"}
CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
       (0x3000, 0x303F), (0xFF00, 0xFFEF), (0x3040, 0x30FF))
is_word = lambda token: bool(token) and char_class(token[0]) == "word"
is_digit = lambda ch: bool(ch) and unicodedata.category(ch) == "Nd"
one_of = lambda token, words: token.isascii() and token.lower() in words  # ASCII case-insensitive

def close_quote(ch, open_quotes):  # pops the innermost open quote that ch closes
    for i in range(len(open_quotes) - 1, -1, -1):
        if ch in CLOSERS[open_quotes[i]]:
            del open_quotes[i:]
            return True
    return False

def glue(ch, prev, nxt, after, open_quotes):
    if char_class(ch) == "word": return NONE
    if is_word(prev) and is_word(nxt):  # between two words: "don't", "e-mail", "km/h", "3,5", "10:30", "z.b."
        if ch in "'\u2019":
            g = (BOTH if one_of(nxt, ("s", "t", "re", "ve", "ll", "d", "m"))
                 or one_of(prev, ("c", "d", "j", "l", "m", "n", "o", "qu", "s", "t"))
                 else RIGHT if one_of(nxt, ("ne", "nen")) else LEFT)
            if g == LEFT: close_quote(ch, open_quotes)
            return g
        if ch in "-\u2010": return LEFT if one_of(nxt, ("und", "oder", "bis", "als", "sowie")) else BOTH
        if ch == "/": return BOTH
        if ch in ",.:" and is_digit(prev[-1]) and is_digit(nxt[0]):  # "march 5, 1977" keeps its space
            return LEFT if ch == "," and len(prev.encode()) <= 2 and len(nxt.encode()) == 4 else BOTH
        if ch == "." and len(nxt) == 1 and after == ".": return BOTH
    if any(a <= ord(ch) <= b for a, b in CJK): return BOTH
    if ch in "$\u00a3\u20ac\u00a5" and is_digit(nxt[:1]): return RIGHT  # "$5"
    if ch == "-" and is_word(prev) and not is_word(nxt): return LEFT
    if close_quote(ch, open_quotes): return LEFT
    if ch in CLOSERS:  # an opening quote, unless a straight one ends a word before punctuation
        if ch in "\"'" and is_word(prev) and not is_word(nxt): return LEFT
        open_quotes.append(ch)
        return RIGHT
    if ch in "\u201d\u2019,.!?;:)]}%\u2026\u2030": return LEFT
    return RIGHT if ch in "([{\u00bf\u00a1" else NONE

def detokenize(tokens, config, sp):
    if sp is not None: return sp.decode_pieces(tokens)
    if config["kind"] == "char": return "".join(" " if t == MARKER else t for t in tokens)
    if config["punctuation"] != "split": return " ".join(tokens)
    out, open_quotes, glue_next = "", [], False
    at = lambda j: tokens[j] if 0 <= j < len(tokens) else ""
    for i, token in enumerate(tokens):
        g = glue(token, at(i - 1), at(i + 1), at(i + 2), open_quotes) if len(token) == 1 else NONE
        out += ("" if not out or glue_next or g[0] else " ") + token
        glue_next = g[1]
    return out

# ---------------------------------------------------------------- loading and translating
def load(folder):
    try:
        config = json.load(open(f"{folder}/config.json", encoding="utf-8"))
    except (OSError, ValueError) as e:
        sys.exit(f"{folder}: not a model folder written by transformer-studio-cli export ({e})")
    if config.get("format") != "transformer-studio-model" or config.get("version") != 1:
        sys.exit(f"{folder}/config.json: not a version 1 Transformer Studio model folder")
    pipeline, ids, sides = config["pipeline"], config["special_ids"], {}
    for side in ("src", "tgt"):
        tok, sp = pipeline[f"{side}_tokenizer"]["config"], None
        if tok["kind"] in ("bpe", "unigram"):
            import sentencepiece  # needed only for a SentencePiece side
            sp = sentencepiece.SentencePieceProcessor(model_file=f"{folder}/{side}.spm")
        if tok["chinese"] != "none":
            print(f"warning: {side}: no OpenCC conversion ({tok['chinese']}) in this script", file=sys.stderr)
        vocab = pipeline[f"{side}_vocab"]["tokens"]
        sides[side] = (tok, sp, vocab, {t: i for i, t in enumerate(vocab)})
    model = Transformer(config["model"], len(sides["src"][2]), len(sides["tgt"][2]), ids["pad"], ids["bos"])
    try:  # strict: every tensor in the file is used, and every weight of the model is in the file
        model.load_state_dict(read_safetensors(f"{folder}/model.safetensors"), strict=True)
    except RuntimeError as e:
        sys.exit(f"{folder}/model.safetensors does not fit the model in config.json: {e}")
    return model.eval(), sides, ids

@torch.no_grad()
def translate(model, sides, ids, text):
    tok, sp, _, index = sides["src"]
    src = [index.get(t, ids["unk"]) for t in tokenize(text, tok, sp)] + [ids["eos"]]  # unknown tokens -> <unk>
    limit = model.position_table().shape[0]
    if len(src) > limit:  # keep the end-of-sentence marker, drop what the model cannot position
        src = src[:limit - 1] + [ids["eos"]]
    src = torch.tensor([src])  # [1, S]: one sentence, </s> last
    src_mask = padding_mask(src, ids["pad"])  # no padding in a batch of one, but the model takes a mask
    caches = model.start(model.encode(src, src_mask))  # the encoder runs once
    token, out = torch.tensor([ids["bos"]]), []  # the decoder starts from <s>
    for position in range(max(1, min(2 * src.shape[1] + 10, limit - 1))):  # the app's default length limit
        token = model.step(caches, token, position, src_mask).argmax(-1)  # greedy: the most likely token
        if token.item() == ids["eos"]:
            break
        out.append(token.item())
    tok, sp, vocab, _ = sides["tgt"]
    return detokenize([vocab[i] for i in out], tok, sp)

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a folder written by transformer-studio-cli export")
    parser.add_argument("sentences", nargs="*", help="sentences to translate (default: the lines of stdin)")
    args = parser.parse_args()
    sys.stdin.reconfigure(encoding="utf-8", errors="replace")  # bad bytes -> U+FFFD, as in the app
    sys.stdout.reconfigure(encoding="utf-8")
    model, sides, ids = load(args.folder)
    for line in args.sentences or (line.rstrip("\n").removesuffix("\r") for line in sys.stdin):
        print(translate(model, sides, ids, line), flush=True)

if __name__ == "__main__":
    main()
