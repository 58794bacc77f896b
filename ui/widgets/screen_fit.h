// SPDX-License-Identifier: GPL-3.0-or-later
// The size a top-level window opens at: its preferred size where the screen has room for it, else the
// screen's room (a 1280 x 800 laptop gets its whole screen, not a window past its edges).
#pragma once

#include <algorithm>

#include <QRect>
#include <QScreen>
#include <QSize>
#include <QWidget>

namespace ts::ui {

/// `preferred` cut to the available geometry of the screen `window` is on (preferred when it has none).
inline QSize size_for_screen(const QWidget& window, QSize preferred) {
  const QRect room = window.screen() ? window.screen()->availableGeometry() : QRect(QPoint(0, 0), preferred);
  return {std::min(preferred.width(), room.width()), std::min(preferred.height(), room.height())};
}

}  // namespace ts::ui
