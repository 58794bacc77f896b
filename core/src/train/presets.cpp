// SPDX-License-Identifier: GPL-3.0-or-later
// Named presets: the seed tutorials' settings, plus `demo` (built-in corpus) and `tiny` (tests).
#include <map>

#include "ts/train/config.h"

namespace ts {
namespace {

struct PresetEntry {
  const char* description;
  ExperimentConfig (*make)();
};

ExperimentConfig auto_base() {
  // The starting point ts/train/auto_recipe.h fits to a corpus, a budget and a machine: shared
  // subwords, tied and shared embeddings, pre-LN, token-budget batches, AdamW with a short warmup
  // and linear decay to zero at the end of a 20-minute budget, weight averaging, bf16 where native.
  ExperimentConfig c;
  c.preset = "auto";
  c.data.src_tokenizer.kind = c.data.tgt_tokenizer.kind = TokenizerKind::kUnigram;
  c.data.src_tokenizer.lowercase = c.data.tgt_tokenizer.lowercase = false;
  c.data.src_tokenizer.vocab_size = c.data.tgt_tokenizer.vocab_size = 8000;
  c.data.shared_vocab = true;
  c.data.cjk_chars = false;
  c.data.dev = 1000;
  c.data.test = 1000;
  c.model.encoder_layers = c.model.decoder_layers = 3;
  c.model.d_model = 256;
  c.model.heads = 4;
  c.model.d_ff = 1024;
  c.model.dropout = 0.1;
  c.model.pre_norm = true;
  c.model.tie_output = true;
  c.model.share_embeddings = true;
  c.train.optimizer = Optimizer::kAdamW;
  c.train.lr = 1e-3;
  // Linear decay to zero at the deadline; on the dev splits of four pairs at 5 minutes cosine was
  // ahead on three by 0.5 to 1.2 BLEU and behind on French-English by 1.8, within the noise on average
  // (docs/benchmarks.md, "Linear or cosine decay, on dev").
  c.train.schedule = LrSchedule::kLinear;
  c.train.warmup = 300;
  c.train.batch_tokens = 2500;
  c.train.budget_minutes = 20;
  c.train.ema = 1e-4;
  c.train.precision = Precision::kAuto;
  c.train.validate_every = 0;
  c.train.dev_max_sentences = 500;
  return c;
}

ExperimentConfig annotated() {
  // The Annotated Transformer, English-Chinese seed: 6+6 layers, d 256, ff 1024, 8 heads,
  // dropout 0.1, Noam warmup, batches of 64 length-sorted sentences, word-level source
  // (lowercased, punctuation split) and a character-level Chinese side.
  ExperimentConfig c;
  c.preset = "annotated";
  c.data.src_tokenizer.kind = TokenizerKind::kWord;
  c.data.tgt_tokenizer.kind = TokenizerKind::kWord;
  c.data.tgt_tokenizer.lowercase = false;  // outputs keep their case; BLEU is on real text
  c.data.dev = 1000;
  c.data.test = 1000;
  c.model = ModelConfig{};
  c.model.pre_norm = true;  // the Annotated Transformer normalises before each sublayer
  c.train.lr = 1.0;
  c.train.schedule = LrSchedule::kNoam;
  c.train.warmup = 2000;
  c.train.batch_sentences = 64;
  c.train.validate_every = 1000;
  return c;
}

ExperimentConfig annotated_debug() {
  ExperimentConfig c = annotated();
  c.preset = "annotated-debug";
  c.model.encoder_layers = c.model.decoder_layers = 3;
  c.model.d_model = 128;
  c.model.d_ff = 256;
  return c;
}

ExperimentConfig nanogpt_deu() {
  // nanoGPT-style German-English seed: one layer, wide, learned positions, block of 20 tokens,
  // 15,000 words per side, punctuation stripped.
  ExperimentConfig c;
  c.preset = "nanogpt-deu";
  c.data.src_tokenizer.punctuation = Punctuation::kStrip;
  c.data.tgt_tokenizer.punctuation = Punctuation::kStrip;
  c.data.max_vocab = 15000;
  c.data.max_len = 20;
  c.data.dev = 1000;
  c.data.test = 1000;
  c.model.encoder_layers = c.model.decoder_layers = 1;
  c.model.d_model = 600;
  c.model.d_ff = 2000;
  c.model.heads = 6;
  c.model.dropout = 0.2;
  c.model.positions = Positions::kLearned;
  c.model.max_positions = 22;  // block of 20 plus BOS/EOS
  c.train.optimizer = Optimizer::kAdamW;
  c.train.schedule = LrSchedule::kConstant;
  c.train.lr = 3e-4;
  c.train.adam_beta2 = 0.99;
  c.train.adam_eps = 1e-8;
  c.train.batch_sentences = 64;
  return c;
}

ExperimentConfig scratch_bpe() {
  // Transformer from scratch with a shared 1,000-piece BPE vocabulary, tied embeddings, pre-LN.
  ExperimentConfig c;
  c.preset = "scratch-bpe";
  c.data.src_tokenizer.kind = c.data.tgt_tokenizer.kind = TokenizerKind::kBpe;
  c.data.src_tokenizer.lowercase = c.data.tgt_tokenizer.lowercase = false;
  c.data.src_tokenizer.vocab_size = c.data.tgt_tokenizer.vocab_size = 1000;
  c.data.shared_vocab = true;
  c.data.cjk_chars = false;
  c.data.dev = 1000;
  c.data.test = 1000;
  c.model.encoder_layers = c.model.decoder_layers = 4;
  c.model.d_model = 64;
  c.model.d_ff = 256;
  c.model.heads = 8;
  c.model.pre_norm = true;
  c.model.tie_output = true;
  c.model.share_embeddings = true;
  c.train.optimizer = Optimizer::kAdamW;
  c.train.schedule = LrSchedule::kCosine;
  c.train.lr = 1e-3;
  c.train.warmup = 500;
  c.train.weight_decay = 0.01;
  c.train.batch_tokens = 4096;
  return c;
}

ExperimentConfig demo() {
  // Sized for the built-in corpus: BLEU >= 80 on its held-out pairs within minutes on 2 cores.
  ExperimentConfig c;
  c.preset = "demo";
  c.data.src_tokenizer.lowercase = c.data.tgt_tokenizer.lowercase = false;
  c.data.dev = 300;
  c.data.test = 300;
  c.model.encoder_layers = c.model.decoder_layers = 2;
  c.model.d_model = 128;
  c.model.heads = 4;
  c.model.d_ff = 256;
  c.model.dropout = 0.1;
  c.model.tie_output = true;
  c.train.schedule = LrSchedule::kNoam;
  c.train.lr = 1.0;
  c.train.warmup = 400;
  c.train.batch_tokens = 1500;
  c.train.validate_every = 200;
  c.train.dev_max_sentences = 300;
  c.train.max_minutes = 2;
  return c;
}

ExperimentConfig tiny() {
  // For tests: a model that trains in seconds.
  ExperimentConfig c;
  c.preset = "tiny";
  c.data.src_tokenizer.lowercase = c.data.tgt_tokenizer.lowercase = false;
  c.data.dev = 0;
  c.data.test = 0;
  c.model.encoder_layers = c.model.decoder_layers = 1;
  c.model.d_model = 32;
  c.model.heads = 2;
  c.model.d_ff = 64;
  c.model.dropout = 0.0;
  c.model.max_positions = 64;
  c.train.optimizer = Optimizer::kAdam;
  c.train.schedule = LrSchedule::kConstant;
  c.train.lr = 3e-3;
  c.train.label_smoothing = 0.0;
  c.train.batch_sentences = 16;
  c.train.validate_every = 0;
  c.train.threads = 1;
  return c;
}

const std::map<std::string, PresetEntry>& registry() {
  static const std::map<std::string, PresetEntry> presets = {
      {"auto",
       {"Fitted to the corpus, the time budget and this machine (the default): subwords or characters, "
        "model size for the budget, linear decay to zero at the deadline, weight averaging",
        auto_base}},
      {"annotated",
       {"Annotated Transformer (English-Chinese seed): 6+6 layers, d 256, ff 1024, 8 heads, Noam", annotated}},
      {"annotated-debug", {"Annotated Transformer, small: 3+3 layers, d 128, ff 256, 8 heads", annotated_debug}},
      {"nanogpt-deu",
       {"nanoGPT-style German-English seed: 1 layer, d 600, ff 2000, 6 heads, block 20, learned positions",
        nanogpt_deu}},
      {"scratch-bpe",
       {"From scratch: 4+4 layers, d 64, ff 256, 8 heads, shared BPE 1000, tied embeddings, pre-LN", scratch_bpe}},
      {"demo", {"For the built-in German-English demo corpus: 2+2 layers, d 128, a few minutes on a laptop", demo}},
      {"tiny", {"For tests: 1+1 layers, d 32, trains in seconds", tiny}},
  };
  return presets;
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& entry : registry()) names.push_back(entry.first);
  return names;
}

std::string preset_description(const std::string& name) {
  const auto it = registry().find(name);
  return it == registry().end() ? std::string() : it->second.description;
}

ExperimentConfig preset(const std::string& name) {
  const auto it = registry().find(name);
  if (it == registry().end()) {
    std::string list;
    for (const auto& n : preset_names()) list += (list.empty() ? "" : ", ") + n;
    throw ConfigError("unknown preset \"" + name + "\" (available: " + list + ")");
  }
  return it->second.make();
}

}  // namespace ts
