// SPDX-License-Identifier: GPL-3.0-or-later
// Plain structs the language-model window, the training controller and the LM service pass
// between threads. No LibTorch here: panels include this header only.
#pragma once

#include <memory>

#include <QMetaType>
#include <QPair>
#include <QString>
#include <QStringList>
#include <QVector>

#include "ts/lm/lm_config.h"

namespace ts {
struct LoadedLanguageModel;
}

namespace ts::ui {

/// What the window shows about a text file before training on it.
struct LmTextInfo {
  QString path;
  qint64 bytes = 0, chars = 0, lines = 0;
  QString tokenizer;   // "char" | "bpe" | "unigram"
  int vocab_size = 0;  // tokens, the four specials (<pad> <unk> <s> </s>) included
  qint64 train_tokens = 0, val_tokens = 0;
  /// Val cross-entropy (nats/token) of the add-one bigram table counted on the training split:
  /// the line a trained model has to get below.
  double bigram_loss = 0;
  double uniform_loss = 0;  // log(vocabulary): a model that knows nothing
  /// The text's tokens with their counts, most frequent first (specials left out).
  QVector<QPair<QString, qint64>> tokens;
};

/// Trains a language model in the background (TrainingController::startLanguageModel).
struct LmTrainingRequest {
  LmConfig config;
  QString text_path;
  QString out_dir;            // created
  QString database;           // run history; empty = not recorded
  QString name;               // history name; empty = "<file> <preset>"
  QString resume_checkpoint;  // continue from this LM checkpoint (its codec is reused)
};

/// A language model to generate from: a copy of the one being trained, or a loaded checkpoint.
struct LmModelSnapshot {
  std::shared_ptr<const LoadedLanguageModel> model;
  qint64 step = 0;
  QString label;  // "training model at step 1200", "checkpoint best.ckpt (step 5000)"
};

/// What resuming a checkpoint needs to know, read without its weights.
struct LmCheckpointInfo {
  QString path;
  LmConfig config;
  QString text_path;  // the text it was trained on
  qint64 step = 0;
};

struct LmGenerateRequest {
  QString prompt;            // may be empty: generation then starts from a newline
  int length = 500;          // tokens
  double temperature = 1.0;  // 0 = greedy
  int top_k = 0;             // 0 = off
  double top_p = 1.0;        // 1 = off
  quint64 seed = 1337;
  bool record_attention = true;
};

/// Self-attention over the last window (at most block_size tokens of prompt + generated text).
struct LmAttention {
  QStringList tokens;                                  // the window's tokens, shown with visible whitespace
  QVector<QVector<QVector<QVector<double>>>> weights;  // [layer][head][query][key]
  int layers() const { return weights.size(); }
  int heads() const { return weights.isEmpty() ? 0 : weights.front().size(); }
};

struct LmGeneration {
  QString prompt, text;  // text: the generated part only
  qint64 tokens = 0;
  double seconds = 0;
  bool stopped = false;   // cut short by Stop
  LmAttention attention;  // empty for the bigram model or when stopped
  QString model;          // label of the model that generated
};

/// A token as the UI shows it: newline as ⏎, space as ␣, tab as ⇥, other control characters as
/// U+XXXX, so that every vocabulary entry and attention label is visible.
QString visible_token(const QString& token);

}  // namespace ts::ui

Q_DECLARE_METATYPE(ts::ui::LmTextInfo)
Q_DECLARE_METATYPE(ts::ui::LmModelSnapshot)
Q_DECLARE_METATYPE(ts::ui::LmGeneration)
Q_DECLARE_METATYPE(ts::ui::LmCheckpointInfo)
