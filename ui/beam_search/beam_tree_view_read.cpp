// SPDX-License-Identifier: GPL-3.0-or-later
// BeamTreeView, reading the tree: the nodes of TranslationResult::beam_tree checked and indexed,
// and each hypothesis's prefix joined into text as the tokenizer would (joinTokens).
#include "beam_search/beam_tree_view.h"

#include <exception>
#include <string>

namespace ts::ui {

namespace {

constexpr char32_t kSpaceMark = 0x2581;  // "▁": SentencePiece's (and the char tokenizer's) space

bool is_cjk(char32_t c) {
  const QChar::Script script = QChar::script(c);
  return script == QChar::Script_Han || script == QChar::Script_Hiragana || script == QChar::Script_Katakana ||
         script == QChar::Script_Hangul || (c >= 0x3000 && c <= 0x303F) || (c >= 0xFF00 && c <= 0xFFEF);
}

bool closes(char32_t c) {
  static const std::u32string kClosing = U".,!?;:%)]}…»";
  return kClosing.find(c) != std::u32string::npos;
}

bool opens(char32_t c) {
  static const std::u32string kOpening = U"([{«¿¡";
  return kOpening.find(c) != std::u32string::npos;
}

bool is_special(const QString& token) {
  return token == QLatin1String("<s>") || token == QLatin1String("</s>") || token == QLatin1String("<pad>");
}

}  // namespace

bool BeamTreeView::readTree(const nlohmann::json& tree, QString* error) {
  try {
    const auto& nodes = tree.at("nodes");
    nodes_.reserve(static_cast<int>(nodes.size()));
    QVector<QStringList> tokens;  // prefix tokens per node (root excluded)
    tokens.reserve(static_cast<int>(nodes.size()));
    for (const auto& j : nodes) {
      Node n;
      n.id = j.at("id").get<qint64>();
      n.parent = j.value("parent", qint64(-1));
      n.token = QString::fromStdString(j.value("token", std::string()));
      n.token_id = j.value("token_id", qint64(0));
      n.step = j.value("step", 0);
      n.token_log_prob = j.value("token_log_prob", 0.0);
      n.log_prob = j.value("log_prob", 0.0);
      n.score = j.value("score", n.log_prob);
      const auto state = j.value("state", std::string("kept"));
      const auto parsed = parse_beam_node_state(state);
      if (!parsed) {
        *error = tr("node %1 has an unknown state \"%2\"").arg(n.id).arg(QString::fromStdString(state));
        return false;
      }
      n.state = *parsed;
      n.rank = j.value("rank", -1);
      if (index_.contains(n.id)) {
        *error = tr("node %1 appears twice").arg(n.id);
        return false;
      }
      QStringList prefix;
      if (n.parent >= 0) {
        // Parents come before their children (the contract): this also rules out cycles.
        const auto it = index_.constFind(n.parent);
        if (it == index_.constEnd()) {
          *error = tr("node %1 names parent %2, which does not come before it").arg(n.id).arg(n.parent);
          return false;
        }
        prefix = tokens[*it];
        prefix << n.token;
      }
      if (n.token.isEmpty() && n.parent >= 0) n.token = QStringLiteral("#%1").arg(n.token_id);
      index_.insert(n.id, nodes_.size());
      tokens.push_back(prefix);
      nodes_.push_back(n);
    }
    // Joining needs to know whether the vocabulary uses "▁" pieces, which any token may reveal.
    bool pieces = false;
    for (const auto& n : nodes_)
      if (n.token.contains(QChar(kSpaceMark))) {
        pieces = true;
        break;
      }
    for (int i = 0; i < nodes_.size(); ++i) {
      QStringList t = tokens[i];
      if (pieces && !t.isEmpty() && !t.first().contains(QChar(kSpaceMark))) t.first().prepend(QChar(kSpaceMark));
      nodes_[i].prefix = joinTokens(t);
    }
    if (tree.contains("best_path") && tree["best_path"].is_array())
      for (const auto& id : tree["best_path"]) best_path_ << id.get<qint64>();
  } catch (const std::exception& e) {
    *error = QString::fromStdString(e.what());
    return false;
  }
  if (nodes_.isEmpty()) {
    *error = tr("it has no nodes");
    return false;
  }
  return true;
}

QString BeamTreeView::joinTokens(const QStringList& tokens) {
  bool pieces = false;
  for (const auto& t : tokens)
    if (t.contains(QChar(kSpaceMark))) {
      pieces = true;
      break;
    }
  QString out;
  if (pieces) {
    for (const auto& t : tokens)
      if (!is_special(t)) out += t;
    out.replace(QChar(kSpaceMark), QLatin1Char(' '));
    return out.simplified();
  }
  char32_t last = 0;
  for (const auto& t : tokens) {
    if (is_special(t) || t.isEmpty()) continue;
    const auto u = t.toUcs4();
    const char32_t first = u.isEmpty() ? 0 : static_cast<char32_t>(u.first());
    if (!out.isEmpty() && !closes(first) && !opens(last) && !(is_cjk(last) && is_cjk(first))) out += QLatin1Char(' ');
    out += t;
    last = u.isEmpty() ? last : static_cast<char32_t>(u.last());
  }
  return out;
}

}  // namespace ts::ui
