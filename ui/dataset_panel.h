// The Dataset panel: the corpus in use (path, pairs, skipped lines with the first problems),
// languages and direction, split sizes, tokenizer per side with vocabulary size, a preview table
// of pairs with their tokenisation, and source/target length histograms.
#pragma once

#include <QWidget>

namespace ts::ui {

class StudioState;

class DatasetPanel : public QWidget {
  Q_OBJECT
 public:
  DatasetPanel(StudioState* state, QWidget* parent = nullptr);
};

}  // namespace ts::ui
