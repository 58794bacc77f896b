// SPDX-License-Identifier: GPL-3.0-or-later
// The Configuration panel's `auto` box: chosen for an opened corpus, fitted in the background, and why.
#pragma once

#include <memory>
#include <string>

#include <QFrame>
#include <QString>

class QLabel;

namespace ts {
struct AutoFit;  // ts/train/auto_fit.h
}  // namespace ts

namespace ts::ui {

class StudioState;

/// A box under the preset description, shown while the preset is `auto`. It switches the
/// configuration to `auto` when a corpus file is opened (the built-in demo corpus keeps its preset,
/// and so does a preset the person has chosen in this session: from the list, a file or the command
/// line's --preset, whenever it was), fits the recipe off the GUI thread
/// whenever the corpus, direction, budget, device or threads change, applies the fit to the
/// configuration (keeping the person's own edits: ts/train/auto_fit.h) unless another preset has been
/// chosen meanwhile, and lists the recipe's reasons.
class RecipeNotes : public QFrame {
  Q_OBJECT
 public:
  explicit RecipeNotes(StudioState* state, QWidget* parent = nullptr);
  ~RecipeNotes() override;

  /// The person picked a preset (even the one in force): corpora opened later keep it.
  void notePresetChosen() { explicit_preset_ = true; }
  /// The fit for the current inputs when the preset is `auto` and it has been fitted; null otherwise.
  std::shared_ptr<const AutoFit> currentFit() const;
  /// Sets an `auto` configuration back to its fit (Reset to preset). False when there is no fit
  /// for the current inputs (the caller then applies the plain preset).
  bool resetToFit();
  /// True while a fit is being computed.
  bool isFitting() const { return fitting_; }
  /// The reasons as shown, one per line (empty while fitting or when the preset is not `auto`).
  QString reasonsText() const;
  /// A fit made elsewhere for the current inputs (a run's own, with the machine timed): shown and
  /// kept as this panel's, so that what it says is what the run trains.
  void adoptFit(std::shared_ptr<const AutoFit> fit) { onFitted(std::move(fit)); }

 Q_SIGNALS:
  /// A fit arrived (applied or not): what the panel compares the configuration with may have changed.
  void fitChanged();

 private:
  void onCorpusChanged();
  void update();
  void startFit(const std::string& key);
  void onFitted(std::shared_ptr<const AutoFit> fit);
  void apply(const AutoFit& fit, const AutoFit* previous);
  void showFit(const AutoFit& fit);
  void showFitting();

  StudioState* state_;
  QLabel* title_ = nullptr;
  QLabel* reasons_ = nullptr;
  std::string pending_key_;  // the inputs of the fit being computed ("" = none)
  int serial_ = 0;           // a newer fit supersedes older ones
  bool fitting_ = false;
  std::string last_preset_;       // the preset at the last configuration change
  bool explicit_preset_ = false;  // a preset was chosen by someone else than this box
  bool switching_ = false;        // this box is applying `auto` (not a choice of the person)
};

}  // namespace ts::ui
