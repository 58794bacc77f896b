// SPDX-License-Identifier: GPL-3.0-or-later
// Widgets whose children's signals reach their own members.
#pragma once

#include <QObject>

namespace ts::ui {

/// Call first in the destructor of a widget that connects its children's signals to itself. ~QWidget
/// runs after the derived destructor and, while it hides the window, moves the focus: a focused
/// QLineEdit then emits editingFinished, and a slot of the derived class would run on an object
/// whose derived part is already destroyed (UBSan in the asan preset: "downcast of address ...
/// which does not point to an object of type 'ProbePanel'"; the lambdas touch destroyed members).
inline void disconnect_children(QObject* owner) {
  for (QObject* child : owner->findChildren<QObject*>()) QObject::disconnect(child, nullptr, owner, nullptr);
}

}  // namespace ts::ui
