// The one way every widget reaches the page's Python runtime (js/python.js). Its module loads on
// the first sign of intent, never with the page; a failed import (offline at first use) is not
// kept, so the next intent tries again.

let pending = null;

/** The page's PythonRuntime, importing js/python.js on first use. */
export function python() {
  pending ??= import("./python.js")
    .then((m) => m.runtime())
    .catch((err) => {
      pending = null;
      throw err;
    });
  return pending;
}
