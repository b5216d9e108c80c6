// The one way every widget reaches the page's Python: ask for a job, get it at once.
//
// The job (js/job.js) exists from the click: it waits, queued, while js/python.js and then
// Pyodide load, and a Stop before either arrives simply ends it. python.js loads on the first sign
// of intent, never with the page; a failed import (offline at first use) fails that job, with the
// file named, and is not kept: the next job tries again.

import { Job, KINDS } from "./job.js";

// each kind's limits (js/job.js KINDS), unless its widget says otherwise
export const LIMITS = Object.fromEntries(Object.entries(KINDS).map(([kind, k]) => [kind, k.limits ?? {}]));

let pending = null;

/** The page's PythonRuntime, importing js/python.js on first use. */
function python() {
  pending ??= import("./python.js")
    .then((m) => m.runtime())
    .catch((err) => {
      pending = null;
      throw err;
    });
  return pending;
}

/**
 * A new job of `kind` (js/job.js KINDS: its payload's fields), handed to the runtime as soon as it
 * is there. `limits` overrides the kind's. A seeded kind (Check) draws from a fresh seed each time;
 * its result says which, so a failing case can be drawn again.
 */
export function start(kind, payload, limits = {}) {
  if (KINDS[kind].seeded) payload = { ...payload, seed: crypto.getRandomValues(new Uint32Array(1))[0] };
  const job = new Job(kind, payload, { ...LIMITS[kind], ...limits });
  python().then(
    (rt) => rt.submit(job),
    (err) =>
      job.move("failed", {
        // the browser's own words stay in `detail` (for a report); the page says its own
        failure: {
          kind: "load",
          what: "python.js",
          cause: "network",
          detail: String(err?.message ?? err),
          offline: navigator.onLine === false,
        },
      }),
  );
  return job;
}

/** Start loading Python in the background (hover, focus, typing). */
export function prefetch() {
  python().then(
    (rt) => rt.prefetch(),
    () => {},
  );
}
