// SPDX-License-Identifier: GPL-3.0-or-later
#include "configuration/config_fields.h"

#include <algorithm>
#include <limits>

#include <QCoreApplication>
#include <QLocale>

namespace ts::ui {
namespace {

QString tr_(const char* text) { return QCoreApplication::translate("ConfigFields", text); }

// Chainable construction keeps each row of the table on a few readable lines.
struct Row {
  ConfigField f;
  Row(const char* key, const char* label, FieldKind kind) {
    f.key = QString::fromLatin1(key);
    f.label = tr_(label);
    f.kind = kind;
  }
  Row& range(double lo, double hi, double step = 1) {
    f.minimum = lo;
    f.maximum = hi;
    f.step = step;
    return *this;
  }
  Row& multiply(double factor) {
    f.step = factor;
    f.step_mode = StepMode::Multiply;
    return *this;
  }
  Row& fraction_or_count() {
    f.step_mode = StepMode::FractionOrCount;
    return *this;
  }
  Row& values(QStringList list) {
    f.choices = std::move(list);
    return *this;
  }
  Row& special(const char* text) {
    f.special = tr_(text);
    return *this;
  }
  Row& help(const char* text) {
    f.help = tr_(text);
    return *this;
  }
  Row& help(const QString& text) {
    f.help = text;
    return *this;
  }
  Row& when(std::function<bool(const ExperimentConfig&)> relevant, const char* note) {
    f.relevant = std::move(relevant);
    f.irrelevant_note = tr_(note);
    return *this;
  }
  Row& when(std::function<bool(const ExperimentConfig&)> relevant, const QString& note) {
    f.relevant = std::move(relevant);
    f.irrelevant_note = note;
    return *this;
  }
};

constexpr double kIntMax = std::numeric_limits<int>::max();

std::vector<ConfigField> build_fields() {
  std::vector<ConfigField> out;
  QString group, subgroup;
  auto add = [&](const Row& row) {
    out.push_back(row.f);
    out.back().group = group;
    out.back().subgroup = subgroup;
  };
  auto add_row = add;

  // ---------------------------------------------------------------- data
  group = QStringLiteral("data");
  subgroup = tr_("Split");
  add_row(Row("data.dev", "Dev set", FieldKind::Real)
              .range(0, 1e7, 0.05)
              .fraction_or_count()
              .help("Pairs held out to validate during training (loss, BLEU, early stopping, best checkpoint): "
                    "a fraction of the corpus below 1 (0.1 = 10 %), or a number of pairs from 1 up."));
  add_row(Row("data.test", "Test set", FieldKind::Real)
              .range(0, 1e7, 0.05)
              .fraction_or_count()
              .help("Pairs held out for the final score and never used for training or model selection: "
                    "a fraction below 1, or a number of pairs from 1 up."));
  add_row(Row("data.split_seed", "Split seed", FieldKind::Seed)
              .help("Seed of the shuffle that assigns pairs to train/dev/test. The same seed and corpus give "
                    "the same split on every machine."));
  add_row(Row("data.split", "Split", FieldKind::Choice)
              .values({QStringLiteral("grouped"), QStringLiteral("pairs")})
              .help("grouped: pairs that share a source sentence (Tatoeba's alternate translations) go to the same "
                    "part, so no dev or test source occurs in training. pairs: each pair on its own, the split of "
                    "runs made before 2026-11-26 (a dev or test source may then occur in training)."));
  add_row(Row("data.max_len", "Max sentence length", FieldKind::Integer)
              .range(1, 100000, 10)
              .help("Training pairs with more tokens than this on either side (end-of-sentence included) are "
                    "dropped. Dev and test pairs are kept."));
  subgroup = tr_("Vocabulary");
  add_row(Row("data.shared_vocab", "Shared vocabulary", FieldKind::Toggle)
              .help("One tokenizer (the source one), one SentencePiece model and one vocabulary for both "
                    "languages. Needed to share the source and target embeddings."));
  add_row(Row("data.min_freq", "Min token frequency", FieldKind::Integer)
              .range(1, 1000000)
              .help("Tokens seen fewer times than this in the training split are not in the vocabulary and "
                    "become <unk>."));
  add_row(Row("data.max_vocab", "Max vocabulary", FieldKind::Integer)
              .range(0, kIntMax, 1000)
              .special("no limit")
              .help("Largest vocabulary per side, the 4 special tokens included; the rarest tokens beyond it "
                    "become <unk>. 0 = no limit."));
  add_row(Row("data.cjk_chars", "CJK per character", FieldKind::Toggle)
              .help("A Chinese or Japanese side with the word tokenizer is split into single characters "
                    "(these scripts do not separate words by spaces).")
              .when([](const ExperimentConfig& c) { return !c.data.shared_vocab; },
                    "not used with a shared vocabulary (the source tokenizer is used as is)"));

  // ---------------------------------------------------------------- tokenizers
  for (const QString& side : {QStringLiteral("src"), QStringLiteral("tgt")}) {
    group = side + QStringLiteral("_tokenizer");
    subgroup.clear();
    const bool is_src = side == QLatin1String("src");
    auto tok = [is_src](const ExperimentConfig& c) -> const TokenizerConfig& {
      return is_src ? c.data.src_tokenizer : c.data.tgt_tokenizer;
    };
    // The target tokenizer is ignored when the vocabulary is shared.
    auto used = [is_src](const ExperimentConfig& c) { return is_src || !c.data.shared_vocab; };
    const QString unused_note = tr_("not used with a shared vocabulary: the source tokenizer serves both sides");
    const std::string prefix = "data." + side.toStdString() + "_tokenizer.";
    auto key = [&](const char* k) { return prefix + k; };
    std::string k;

    k = key("kind");
    Row kind(k.c_str(), "Tokenizer", FieldKind::Choice);
    kind.values({QStringLiteral("word"), QStringLiteral("char"), QStringLiteral("bpe"), QStringLiteral("unigram")})
        .help(
            "How text is cut into tokens: word (words and punctuation marks), char (single characters; spaces "
            "become \u2581), bpe or unigram (SentencePiece subwords learned from the training split).");
    if (!is_src) kind.when(used, unused_note);
    add(kind);

    k = key("lowercase");
    Row lower(k.c_str(), "Lowercase", FieldKind::Toggle);
    lower.help(is_src ? "Lowercase the source text before tokenizing (Unicode-aware): a smaller vocabulary."
                      : "Lowercase the target text before tokenizing. Translations then come out in lowercase "
                        "too, and BLEU against the cased references drops.");
    if (!is_src) lower.when(used, unused_note);
    add(lower);

    k = key("punctuation");
    Row punct(k.c_str(), "Punctuation", FieldKind::Choice);
    punct.values({QStringLiteral("split"), QStringLiteral("strip"), QStringLiteral("keep")})
        .help(
            "Word tokenizer: split (marks become tokens of their own), strip (marks are dropped), keep "
            "(marks stay attached to words; text is split on spaces only).")
        .when([tok, used](const ExperimentConfig& c) { return used(c) && tok(c).kind == TokenizerKind::kWord; },
              is_src ? tr_("only for the word tokenizer")
                     : tr_("only for the word tokenizer without a shared vocabulary"));
    add(punct);

    k = key("chinese");
    Row chinese(k.c_str(), "Chinese script", FieldKind::Choice);
    chinese.values({QStringLiteral("none"), QStringLiteral("t2s"), QStringLiteral("s2t")})
        .help(
            "Convert Chinese text before tokenizing: t2s (traditional to simplified), s2t (simplified to "
            "traditional), none. Needs OpenCC in this build.");
    if (!is_src) chinese.when(used, unused_note);
    add(chinese);

    k = key("vocab_size");
    Row size(k.c_str(), "Subword vocabulary", FieldKind::Integer);
    size.range(16, 1000000, 500)
        .help(
            "bpe/unigram: how many SentencePiece pieces to learn. Smaller corpora support fewer pieces; "
            "training retries with a smaller vocabulary when the data cannot fill it.")
        .when([tok, used](const ExperimentConfig& c) { return used(c) && is_sentencepiece(tok(c).kind); },
              "only for bpe/unigram");
    add(size);

    k = key("character_coverage");
    Row coverage(k.c_str(), "Character coverage", FieldKind::Real);
    coverage.range(0.0001, 1, 0.0005)
        .help(
            "bpe/unigram: the share of characters the SentencePiece model covers; rarer ones become <unk>. "
            "0.9995 suits scripts with thousands of characters (Chinese, Japanese), 1.0 small alphabets.")
        .when([tok, used](const ExperimentConfig& c) { return used(c) && is_sentencepiece(tok(c).kind); },
              "only for bpe/unigram");
    add(coverage);
  }

  // ---------------------------------------------------------------- model
  group = QStringLiteral("model");
  subgroup = tr_("Size");
  add_row(Row("model.encoder_layers", "Encoder layers", FieldKind::Integer)
              .range(1, 64)
              .help("Stacked encoder layers, each self-attention plus a feed-forward network."));
  add_row(Row("model.decoder_layers", "Decoder layers", FieldKind::Integer)
              .range(1, 64)
              .help("Stacked decoder layers, each masked self-attention, attention over the source and a "
                    "feed-forward network."));
  add_row(Row("model.d_model", "Model width (d_model)", FieldKind::Integer)
              .range(2, 8192, 16)
              .help("Size of the embeddings and of every layer's hidden vectors. Must be divisible by the number "
                    "of heads, and even for sinusoidal positions."));
  add_row(Row("model.heads", "Attention heads", FieldKind::Integer)
              .range(1, 128)
              .help("Attention heads per layer; each head works on d_model / heads dimensions, so heads must "
                    "divide d_model."));
  add_row(Row("model.d_ff", "Feed-forward width (d_ff)", FieldKind::Integer)
              .range(1, 65536, 64)
              .help("Inner width of each layer's position-wise feed-forward network, commonly 4 \u00d7 d_model."));
  subgroup = tr_("Architecture");
  add_row(Row("model.dropout", "Dropout", FieldKind::Real)
              .range(0, 0.95, 0.05)
              .help("Probability of zeroing activations and attention weights during training, against "
                    "overfitting; 0 turns it off. Decoding never drops."));
  add_row(Row("model.pre_norm", "Pre-norm (pre-LN)", FieldKind::Toggle)
              .help("Layer normalisation before each sublayer (pre-LN) instead of after the residual sum "
                    "(post-LN, the original paper). Pre-LN trains deep models more stably."));
  add_row(Row("model.positions", "Positions", FieldKind::Choice)
              .values({QStringLiteral("sinusoidal"), QStringLiteral("learned")})
              .help("How token positions are encoded: fixed sinusoids (the paper; any length up to 1024 or max "
                    "positions) or learned embeddings (one trained vector per position up to max positions)."));
  add_row(Row("model.max_positions", "Max positions", FieldKind::Integer)
              .range(1, 100000, 16)
              .help("Longest sequence in tokens (BOS/EOS included) the model accepts. Learned positions have "
                    "one vector for each; longer sentences cannot be encoded."));
  add_row(Row("model.scale_embeddings", "Scale embeddings by \u221ad", FieldKind::Toggle)
              .help("Multiply embeddings by \u221ad_model before adding positions, as in the paper."));
  add_row(Row("model.tie_output", "Tie output projection", FieldKind::Toggle)
              .help("The output layer reuses the target embedding matrix: fewer parameters, often better on "
                    "small data."));
  add_row(Row("model.share_embeddings", "Share embeddings", FieldKind::Toggle)
              .help("One embedding matrix for both languages. Needs a shared vocabulary (Data section)."));

  // ---------------------------------------------------------------- training
  group = QStringLiteral("train");
  subgroup = tr_("Optimizer");
  add_row(Row("train.optimizer", "Optimizer", FieldKind::Choice)
              .values({QStringLiteral("adam"), QStringLiteral("adamw")})
              .help("adam: weight decay added to the gradient (L2); adamw: decoupled weight decay."));
  add_row(Row("train.schedule", "LR schedule", FieldKind::Choice)
              .values({QStringLiteral("noam"), QStringLiteral("constant"), QStringLiteral("linear"),
                       QStringLiteral("cosine")})
              .help("Learning rate over steps. noam: rises for the warmup steps, then decays as 1/\u221astep "
                    "(the paper). constant, linear and cosine: linear warmup to the learning rate, then constant, "
                    "linear to 0 or cosine to 10 % over max steps; with a time budget, linear and cosine reach 0 "
                    "exactly at its deadline."));
  add_row(Row("train.lr", "Learning rate", FieldKind::Real)
              .range(1e-7, 100)
              .multiply(2)
              .help("noam: a factor (1.0 in the paper) on d_model^-0.5 \u00b7 min(step^-0.5, step \u00b7 warmup^-1.5). "
                    "Other schedules: the peak learning rate, e.g. 3e-4."));
  add_row(Row("train.warmup", "Warmup steps", FieldKind::Integer)
              .range(0, kIntMax, 100)
              .help("Steps over which the learning rate rises from 0 (noam: to its peak). Required for noam."));
  add_row(Row("train.adam_beta1", "Adam \u03b21", FieldKind::Real)
              .range(0, 0.9999, 0.01)
              .help("Decay of Adam's running mean of gradients (momentum)."));
  add_row(Row("train.adam_beta2", "Adam \u03b22", FieldKind::Real)
              .range(0, 0.99999, 0.001)
              .help("Decay of Adam's running mean of squared gradients; 0.98 in the paper, 0.999 is Adam's own "
                    "default."));
  add_row(Row("train.adam_eps", "Adam \u03b5", FieldKind::Real)
              .range(1e-12, 1)
              .multiply(10)
              .help("Added to Adam's denominator for numerical stability."));
  add_row(Row("train.weight_decay", "Weight decay", FieldKind::Real)
              .range(0, 1, 0.01)
              .help("Pulls weights towards 0 each step (L2 with adam, decoupled with adamw); 0 = off."));
  add_row(Row("train.label_smoothing", "Label smoothing", FieldKind::Real)
              .range(0, 0.99, 0.05)
              .help("Share of the target probability spread over the other tokens in the loss: less "
                    "overconfident models, often higher BLEU, higher perplexity. 0 = off."));
  add_row(Row("train.clip_norm", "Gradient clipping", FieldKind::Real)
              .range(0, 1000, 0.5)
              .special("off")
              .help("Gradients are scaled down when their global norm exceeds this. 0 = no clipping."));
  add_row(Row("train.ema", "Weight averaging", FieldKind::Real)
              .range(0, 0.9999, 0.0001)
              .special("off")
              .help("Exponential smoothing of the weights (as in Marian): after each update the average moves this "
                    "far towards the weights, or 9/(10+t) at update t early on, whichever is larger. Validation, "
                    "the best checkpoint, evaluation and translation use the average. 0 = off; Marian uses 1e-4."));
  add_row(Row("train.on_nonfinite", "On NaN/Inf loss", FieldKind::Choice)
              .values({QStringLiteral("stop"), QStringLiteral("skip")})
              .help("A step whose loss is not a finite number (a diverging run): stop the run, keeping the last "
                    "good checkpoint, or skip that step's update and go on (the run stops after 20 in a row)."));
  subgroup = tr_("Batches");
  add_row(Row("train.batch_tokens", "Batch tokens", FieldKind::Integer)
              .range(0, kIntMax, 500)
              .special("off (count sentences)")
              .help("Token budget per batch (padded tokens of the longer side); sentences of similar length are "
                    "bucketed together. 0 = batches of a fixed number of sentences instead."));
  add_row(
      Row("train.batch_sentences", "Batch sentences", FieldKind::Integer)
          .range(0, kIntMax, 8)
          .help("Sentences per batch (length-sorted buckets) when batch tokens is 0.")
          .when([](const ExperimentConfig& c) { return c.train.batch_tokens <= 0; }, "only when batch tokens is 0"));
  add_row(Row("train.accumulate", "Accumulate gradients", FieldKind::Integer)
              .range(1, 1024)
              .help("Batches whose gradients are summed before each optimizer step: a larger effective batch "
                    "without more memory."));
  subgroup = tr_("Stopping");
  add_row(Row("train.max_steps", "Max steps", FieldKind::Integer)
              .range(0, kIntMax, 1000)
              .special("no limit")
              .help("Stop after this many optimizer steps (linear and cosine schedules decay over them). "
                    "0 = no limit."));
  add_row(Row("train.max_epochs", "Max epochs", FieldKind::Integer)
              .range(0, 1000000)
              .special("no limit")
              .help("Stop after this many passes over the training split. 0 = no limit."));
  add_row(Row("train.max_minutes", "Max minutes", FieldKind::Real)
              .range(0, 1e6, 5)
              .special("no limit")
              .help("Stop after this much wall-clock time (a checkpoint is written). 0 = no limit."));
  add_row(Row("train.budget_minutes", "Time budget (minutes)", FieldKind::Real)
              .range(0, 525600, 5)
              .special("no budget")
              .help("Wall-clock minutes the run may take, validations included and paused time not (“Train for” "
                    "next to Start sets it). The linear and cosine schedules decay to zero exactly at the deadline, "
                    "validations are spread over the budget, and the run ends on time with a final validation. "
                    "0 = no budget: the limits above apply."));
  add_row(Row("train.patience", "Patience", FieldKind::Integer)
              .range(0, 10000)
              .special("never stop early")
              .help("Stop when this many validations in a row bring no improvement of the best metric. "
                    "0 = never stop early."));
  subgroup = tr_("Validation and checkpoints");
  add_row(Row("train.validate_every", "Validate every", FieldKind::Integer)
              .range(0, kIntMax, 100)
              .special("once per epoch")
              .help("Steps between validations (dev loss, BLEU/chrF, samples, checkpoints). 0 = at the end of "
                    "each epoch."));
  add_row(Row("train.budget_validations", "Validations in a budget", FieldKind::Integer)
              .range(0, 100000)
              .special("by length")
              .help("With a time budget: how many validations are spread over it, the final one included. "
                    "0 = as many as suit the budget's length.")
              .when([](const ExperimentConfig& c) { return c.train.budget_minutes > 0; }, "only with a time budget"));
  add_row(Row("train.dev_max_sentences", "Dev sentences decoded", FieldKind::Integer)
              .range(1, kIntMax, 100)
              .help("At most this many dev sentences are translated for BLEU/chrF at each validation (the "
                    "dev loss uses all of them)."));
  add_row(Row("train.samples", "Sample translations", FieldKind::Integer)
              .range(0, 1000)
              .help("Dev sentences shown with their translation at each validation."));
  add_row(Row("train.probe", "Probe sentence", FieldKind::Text)
              .help("A source sentence translated at every validation, its cross-attention recorded, "
                    "so the Attention over training view can replay how alignment emerges. Empty: none."));
  add_row(Row("train.best_metric", "Best checkpoint by", FieldKind::Choice)
              .values({QStringLiteral("bleu"), QStringLiteral("loss")})
              .help("Which dev score decides the best checkpoint and early stopping: BLEU (higher is better) or "
                    "loss (lower is better)."));
  add_row(Row("train.keep_last", "Keep step checkpoints", FieldKind::Integer)
              .range(0, 10000)
              .special("none")
              .help("step-N checkpoints kept besides last and best; older ones are deleted. 0 = none."));
  add_row(Row("train.seed", "Training seed", FieldKind::Seed)
              .help("Seed for weight initialisation, batch order and dropout: the same seed gives the same run."));

  // ---------------------------------------------------------------- compute
  group = QStringLiteral("compute");
  subgroup.clear();
  add_row(Row("train.device", "Device", FieldKind::Choice)
              .values({QStringLiteral("auto"), QStringLiteral("cpu"), QStringLiteral("cuda")})
              .help("Where to train: auto (the GPU when LibTorch sees one, else the CPU), cpu or cuda."));
  add_row(Row("train.threads", "CPU threads", FieldKind::Integer)
              .range(0, 4096)
              .special("all cores")
              .help("CPU threads for LibTorch's operations. 0 = all cores."));
  add_row(Row("train.shard_batch", "Thread per batch share", FieldKind::Toggle)
              .help("On a CPU with several threads, in fp32: each thread runs forward and backward on its own "
                    "share of every batch and the gradients are added, rather than every operation of the whole "
                    "batch being shared among the threads. Faster for the small models trained here; the result "
                    "is the same up to float rounding. With bf16, only on a CPU with AVX-512 BF16 (our bf16 "
                    "products, on AMX tiles where it has them, run on each thread); elsewhere and on a GPU the "
                    "whole batch trains at once."));
  add_row(
      Row("train.precision", "Precision", FieldKind::Choice)
          .values({QStringLiteral("fp32"), QStringLiteral("bf16"), QStringLiteral("fp16"), QStringLiteral("auto")})
          .help(
              "Arithmetic of the matrix products. fp32: full precision. bf16: mixed precision with fp32 "
              "weights; faster on recent GPUs and on some CPUs (an AMD EPYC's AVX-512 BF16 products ran "
              "twice as fast as fp32's, an Intel Xeon's AMX tiles trained 1.6-1.8 times as fast), slower on others "
              "(an Intel Xeon model 207 without AMX trained at about 0.8 of fp32). fp16: on a GPU with loss scaling; on a CPU with AVX-512 FP16 (Intel Xeon "
              "since Sapphire Rapids) on its fp16 multiply-adds, each operand scaled by powers of two 64 "
              "values at a time, so no loss scaling (that Xeon trained 3+3 layers of d 256 about 1.2 times "
              "as fast as in fp32). auto: on a CPU, bf16 or fp16 where a timing of their products at the "
              "start finds them at least 1.2 times as fast as fp32's (the faster of the two), else fp32; on "
              "a GPU, bf16 or fp16 as a timing finds faster. A precision chosen here trains as chosen; the "
              "log says where auto would choose another."));

  // ---------------------------------------------------------------- decoding
  group = QStringLiteral("decode");
  subgroup.clear();
  auto mode_is = [](std::initializer_list<DecodeMode> modes) {
    std::vector<DecodeMode> list(modes.begin(), modes.end());
    return
        [list](const ExperimentConfig& c) { return std::find(list.begin(), list.end(), c.decode.mode) != list.end(); };
  };
  add_row(Row("decode.mode", "Search", FieldKind::Choice)
              .values({QStringLiteral("greedy"), QStringLiteral("beam"), QStringLiteral("sample")})
              .help("How translations are produced: greedy (the most likely token each step, fast), beam "
                    "(keeps the best partial translations, usually better), sample (random draws)."));
  add_row(Row("decode.beam", "Beam size", FieldKind::Integer)
              .range(1, 100)
              .help("Partial translations kept at each step of beam search.")
              .when(mode_is({DecodeMode::kBeam}), "only for beam search"));
  add_row(Row("decode.length_penalty", "Length penalty \u03b1", FieldKind::Real)
              .range(0, 5, 0.1)
              .help("GNMT length normalisation: scores are divided by ((5 + length) / 6)^\u03b1, so longer "
                    "translations are not unduly penalised. 0 = raw log-probability.")
              .when(mode_is({DecodeMode::kBeam}), "only for beam search"));
  add_row(Row("decode.nbest", "Translations (n-best)", FieldKind::Integer)
              .range(1, 100)
              .help("How many alternatives to return (at most the beam size for beam search).")
              .when(mode_is({DecodeMode::kBeam, DecodeMode::kSample}), "only for beam search and sampling"));
  add_row(Row("decode.temperature", "Temperature", FieldKind::Real)
              .range(0.01, 100, 0.1)
              .help("Sampling: below 1 sharper (closer to greedy), above 1 more random.")
              .when(mode_is({DecodeMode::kSample}), "only for sampling"));
  add_row(Row("decode.top_k", "Top-k", FieldKind::Integer)
              .range(0, 1000000)
              .special("off")
              .help("Sampling: draw only from the k most likely tokens. 0 = off.")
              .when(mode_is({DecodeMode::kSample}), "only for sampling"));
  add_row(Row("decode.top_p", "Top-p (nucleus)", FieldKind::Real)
              .range(0.01, 1, 0.05)
              .help("Sampling: draw only from the most likely tokens whose probabilities add up to p. 1 = off.")
              .when(mode_is({DecodeMode::kSample}), "only for sampling"));
  add_row(Row("decode.seed", "Sampling seed", FieldKind::Seed)
              .help("Seed for sampling: the same seed gives the same samples.")
              .when(mode_is({DecodeMode::kSample}), "only for sampling"));
  add_row(Row("decode.max_len_a", "Max length a", FieldKind::Integer)
              .range(0, 1000)
              .help("Longest output: a \u00d7 source length + b tokens. With a and b both 0: 2 \u00d7 source "
                    "length + 10."));
  add_row(Row("decode.max_len_b", "Max length b", FieldKind::Integer)
              .range(0, 100000)
              .help("Longest output: a \u00d7 source length + b tokens. With a and b both 0: 2 \u00d7 source "
                    "length + 10."));
  add_row(
      Row("decode.weights", "Weights (CPU)", FieldKind::Choice)
          .values({QStringLiteral("bf16"), QStringLiteral("int8"), QStringLiteral("fp32"), QStringLiteral("libtorch")})
          .help("How the weights are stored while translating one sentence on the CPU: bf16 (half the memory "
                "traffic, nearly always the fp32 translation; on AMX tiles where the CPU has them, as fast as int8), "
                "int8 (the fastest without AMX, occasionally a different word), "
                "fp32 (the model's own, packed) or libtorch (LibTorch's operations, the reference). Evaluation, "
                "validation and GPUs use the model's own fp32 weights."));
  add_row(Row("decode.shortlist", "Lexical shortlist", FieldKind::Toggle)
              .help("Score only each sentence's shortlist of likely target tokens (a few hundred, from the run's "
                    "shortlist.safetensors, made by `transformer-studio-cli shortlist`) instead of the whole "
                    "vocabulary: faster, and a little different. Off: the whole vocabulary."));
  return out;
}

QString format_number(double v) { return QLocale().toString(v, 'g', 10); }

}  // namespace

const std::vector<ConfigField>& config_fields() {
  static const std::vector<ConfigField> fields = build_fields();
  return fields;
}

const ConfigField* find_config_field(const QString& key) {
  for (const auto& f : config_fields())
    if (f.key == key) return &f;
  return nullptr;
}

QStringList config_groups() {
  return {QStringLiteral("data"),  QStringLiteral("src_tokenizer"), QStringLiteral("tgt_tokenizer"),
          QStringLiteral("model"), QStringLiteral("train"),         QStringLiteral("compute"),
          QStringLiteral("decode")};
}

QString group_title(const QString& group) {
  if (group == QLatin1String("data")) return tr_("Data");
  if (group == QLatin1String("src_tokenizer")) return tr_("Source tokenizer");
  if (group == QLatin1String("tgt_tokenizer")) return tr_("Target tokenizer");
  if (group == QLatin1String("model")) return tr_("Model");
  if (group == QLatin1String("train")) return tr_("Training");
  if (group == QLatin1String("compute")) return tr_("Compute");
  if (group == QLatin1String("decode")) return tr_("Decoding");
  return group;
}

namespace {
void flatten(const nlohmann::json& j, const QString& prefix, QStringList& out) {
  for (const auto& item : j.items()) {
    const QString key = prefix.isEmpty() ? QString::fromStdString(item.key())
                                         : prefix + QLatin1Char('.') + QString::fromStdString(item.key());
    if (item.value().is_object())
      flatten(item.value(), key, out);
    else
      out << key;
  }
}
}  // namespace

QStringList flatten_config_keys(const nlohmann::json& config) {
  QStringList out;
  flatten(config, {}, out);
  out.removeAll(QStringLiteral("preset"));
  return out;
}

nlohmann::json config_value(const nlohmann::json& config, const QString& key) {
  const nlohmann::json* node = &config;
  for (const QString& part : key.split(QLatin1Char('.'))) {
    const std::string name = part.toStdString();
    if (!node->is_object() || !node->contains(name)) return nullptr;
    node = &node->at(name);
  }
  return *node;
}

QString display_value(const nlohmann::json& value) {
  if (value.is_boolean()) return value.get<bool>() ? tr_("on") : tr_("off");
  if (value.is_number_unsigned()) return QString::number(value.get<std::uint64_t>());
  if (value.is_number_integer()) return QLocale().toString(static_cast<qlonglong>(value.get<std::int64_t>()));
  if (value.is_number()) return format_number(value.get<double>());
  if (value.is_string()) return QString::fromStdString(value.get<std::string>());
  return QString::fromStdString(value.dump());
}

QString assignment_value(const nlohmann::json& value) { return QString::fromStdString(value.dump()); }

QString field_tooltip(const ConfigField& field) {
  static const nlohmann::json defaults = ExperimentConfig().to_json();
  const nlohmann::json def = config_value(defaults, field.key);
  QString range;
  switch (field.kind) {
    case FieldKind::Integer:
      range = tr_("Range: %1 to %2")
                  .arg(QLocale().toString(static_cast<qlonglong>(field.minimum)),
                       QLocale().toString(static_cast<qlonglong>(field.maximum)));
      break;
    case FieldKind::Real:
      range = tr_("Range: %1 to %2").arg(format_number(field.minimum), format_number(field.maximum));
      break;
    case FieldKind::Seed:
      range = tr_("Range: 0 to %1").arg(QString::number(std::numeric_limits<std::uint64_t>::max()));
      break;
    case FieldKind::Choice:
      range = tr_("Values: %1").arg(field.choices.join(QStringLiteral(", ")));
      break;
    case FieldKind::Toggle:
    case FieldKind::Text:
      break;
  }
  QString defaultText = display_value(def);
  if (!field.special.isEmpty() && def.is_number() && def.get<double>() == field.minimum)
    defaultText += QStringLiteral(" (%1)").arg(field.special);
  QString html = QStringLiteral("<p><b>%1</b> <code>%2</code></p><p>%3</p><p>%4")
                     .arg(field.label.toHtmlEscaped(), field.key.toHtmlEscaped(), field.help.toHtmlEscaped(),
                          tr_("Default: %1").arg(defaultText.toHtmlEscaped()));
  if (!range.isEmpty()) html += QStringLiteral("<br>") + range.toHtmlEscaped();
  html += QStringLiteral("</p>");
  if (!field.irrelevant_note.isEmpty())
    html += QStringLiteral("<p><i>%1</i></p>").arg(tr_("Note: %1.").arg(field.irrelevant_note).toHtmlEscaped());
  return html;
}

}  // namespace ts::ui
