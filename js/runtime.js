// The one way every widget reaches the page's Python: ask for a job, get it at once.
//
// The job (js/job.js) exists from the click: it waits, queued, while js/python.js and then
// Pyodide load, and a Stop before either arrives simply ends it. python.js loads on the first sign
// of intent, never with the page; a failed import (offline at first use) fails that job, with the
// file named, and is not kept: the next job tries again.

import { Job } from "./job.js";

// limits by kind of job, unless its widget says otherwise: Check compares many inputs, so it gets at
// least 20 s (a Run gets its lesson's TIMEOUT, the cell's data-timeout); the demo runs as long as it
// needs, but not a minute without a word
export const LIMITS = {
  load: {},
  run: {},
  check: { limitMs: 20_000 },
  demo: { quietMs: 60_000 },
};

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
 * A new job of `kind` ("run": {code, parts}; "check": {exercise, code, parts}; "demo": {config}),
 * handed to the runtime as soon as it is there. `limits` overrides LIMITS[kind]. Every Check
 * draws its inputs from a fresh seed (a table of one seed's answers passes nothing); its result
 * says which, so a failing case can be drawn again.
 */
export function start(kind, payload, limits = {}) {
  if (kind === "check") payload = { ...payload, seed: crypto.getRandomValues(new Uint32Array(1))[0] };
  const job = new Job(kind, payload, { ...LIMITS[kind], ...limits });
  python().then(
    (rt) => rt.submit(job),
    (err) =>
      job.move("failed", {
        failure: {
          kind: "load",
          what: "python.js",
          message: String(err?.message ?? err),
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
