// Entry point: on every page Material shows (its `document$` observable), start the widgets the
// page has. Each widget module loads only where it is used, and each `init` is idempotent, so this
// is safe to run twice. Nothing Python-related is fetched here.

const widgets = [
  ["[data-runner]", () => import("./runner.js")],
  ["[data-drill]", () => import("./drill.js")],
  ["[data-demo]", () => import("./demo.js")],
];

function start() {
  for (const [selector, load] of widgets) {
    if (document.querySelector(selector)) {
      load()
        .then((m) => m.init(document))
        .catch((err) => console.error(`widget ${selector} failed to start`, err));
    }
  }
}

if (window.document$) window.document$.subscribe(start);
else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
