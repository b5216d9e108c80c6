// The Python worker: one module Web Worker per page runs Pyodide, so Python never blocks the page.
//
// Messages in:  {type: "config", config}                       where Python comes from
//               {type: "load"}                                  load the core runtime (prefetch)
//               {type: "cancel", id}                            skip that job when its turn comes
//               {type: "run",   id, code, parts, interrupt?}    run a cell, streaming its output
//               {type: "check", id, stem, name, code, parts}    compare a function with the reference
//               {type: "demo",  id}                             the toy RLHF run, browser configuration
// Messages out: {type: "progress", stage, loaded, total}        what is being fetched, and how far
//               {type: "ready"} · {type: "started", id} · {type: "stdout"|"stderr", id, text}
//               {type: "event", id, data}                        a value a Python callback emitted
//               {type: "done", id, ok, result?, failure?}        failure: {kind, what?, message, offline?}
//
// A failure's kind is "load" (a file of the runtime could not be fetched or started: `what` names
// it) or "error" (Python raised while running the site's own code, e.g. the checker). Errors in
// the learner's code are not failures: they are the run's stderr.
//
// Pyodide (core, numpy) comes from `config.indexURL`: this site's assets/pyodide/ by default;
// rl_ops_numpy from the wheel the site build made. numpy and the wheel load only when needed.

let config = null; // {indexURL, wheelUrl, numpyTimeoutMs}
let pyodide = null;
let corePromise = null;
let packagesPromise = null;

const post = (msg) => self.postMessage(msg);

/** The job's last message. Python's streams are flushed first, so that output without a final
 * newline is the job's own, not the start of the next job's. */
function done(id, outcome) {
  try {
    pyodide?.runPython("import sys\nsys.stdout.flush()\nsys.stderr.flush()");
  } catch {
    /* a stream the learner replaced or closed: nothing more to flush */
  }
  post({ type: "done", id, ...outcome });
}

// ---- fetching with progress ------------------------------------------------------------------
// Pyodide fetches its files itself; wrapping fetch lets the page show which file is coming and
// how many bytes of it have arrived.
const rawFetch = self.fetch.bind(self);
let lastFailedFetch = null; // the file whose download failed last: what a load failure names
const fileName = (url) => decodeURIComponent(String(url).split("?")[0].split("/").pop());
self.fetch = async (input, init) => {
  const url = input instanceof Request ? input.url : String(input);
  const name = fileName(url);
  post({ type: "progress", stage: name, loaded: 0, total: 0 });
  let response;
  try {
    response = await rawFetch(input, init);
  } catch (err) {
    lastFailedFetch = name;
    throw err;
  }
  const total = Number(response.headers.get("content-length")) || 0;
  if (!response.ok) lastFailedFetch = `${name} (HTTP ${response.status})`;
  if (!response.body || !response.ok) return response;
  let loaded = 0;
  let last = 0;
  const counted = response.body.pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        loaded += chunk.byteLength;
        const now = performance.now();
        if (now - last > 50 || loaded === total) {
          last = now;
          post({ type: "progress", stage: name, loaded, total });
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(counted, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
};

// ---- loading ---------------------------------------------------------------------------------

/** A failure to load part of the runtime: `what` names the file or package. */
class LoadError extends Error {
  constructor(what, message) {
    super(message);
    this.what = what;
  }
}

async function loadCore() {
  corePromise ??= (async () => {
    post({ type: "progress", stage: "pyodide.asm.wasm", loaded: 0, total: 0 });
    const wheel = rawFetch(config.wheelUrl)
      .then((r) => {
        if (!r.ok) throw new Error(`HTTP ${r.status}`);
        return r.arrayBuffer();
      })
      .catch((err) => {
        throw new LoadError(fileName(config.wheelUrl), String(err?.message ?? err));
      });
    try {
      const { loadPyodide } = await import(config.indexURL + "pyodide.mjs");
      pyodide = await loadPyodide({
        indexURL: config.indexURL,
        lockFileURL: config.indexURL + "pyodide-lock.json",
      });
    } catch (err) {
      throw new LoadError(lastFailedFetch ?? "pyodide.mjs", String(err?.message ?? err));
    }
    // rl_ops_numpy's pure-Python parts (the cell runner) work before numpy arrives
    pyodide.unpackArchive(await wheel, "wheel");
    post({ type: "ready" });
    return pyodide;
  })();
  corePromise.catch(() => {
    corePromise = null; // a later run tries again (the network may be back)
  });
  return corePromise;
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new LoadError(what, `no answer after ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// numpy, then rl_ops_numpy's torch layer, once per worker
function loadPackages() {
  packagesPromise ??= (async () => {
    const py = await loadCore();
    const messages = [];
    lastFailedFetch = null;
    await withTimeout(
      py.loadPackage("numpy", { messageCallback: () => {}, errorCallback: (m) => messages.push(m) }),
      config.numpyTimeoutMs,
      "numpy",
    );
    try {
      py.pyimport("numpy"); // loadPackage logs failures instead of throwing: check the import
    } catch {
      throw new LoadError(lastFailedFetch ?? "numpy", messages.join("\n") || "numpy could not be imported");
    }
    py.runPython("from rl_ops_numpy.browser import install_torch; install_torch()");
  })();
  packagesPromise.catch(() => {
    packagesPromise = null; // a later run may try again (the network may be back)
  });
  return packagesPromise;
}

const NEEDS_PACKAGES = /^\s*(import|from)\s+(torch|numpy|rl_ops_numpy)\b/m;

// ---- running ---------------------------------------------------------------------------------

/** What Python writes to `type` goes to the page as text, as it comes (done() flushes the rest). */
function stream(type, id, isatty) {
  const decoder = new TextDecoder(); // one per job: a character split over two writes is kept
  return {
    isatty,
    write: (bytes) => {
      post({ type, id, text: decoder.decode(bytes, { stream: true }) });
      return bytes.length;
    },
  };
}

async function prepare(id, code, interrupt) {
  const py = await loadCore();
  py.setStdout(stream("stdout", id, true)); // a tty: Python flushes it at every newline
  py.setStderr(stream("stderr", id, false)); // Python flushes stderr at every newline anyway
  if (NEEDS_PACKAGES.test(code)) await loadPackages();
  if (interrupt) {
    py.setInterruptBuffer(interrupt);
    interrupt[0] = 0;
  }
  return py;
}

/** A syntax error in the learner's code, in their terms, before anything else is fetched. */
function syntaxError(py, code, parts) {
  const runner = py.pyimport("rl_ops_numpy.browser.runner");
  return runner.syntax_error(code, py.toPy(parts ?? []));
}

async function handle(msg) {
  const { id } = msg;
  try {
    if (msg.type === "load") {
      await loadCore();
      return;
    }
    if (msg.type === "run" || msg.type === "check") {
      const error = syntaxError(await loadCore(), msg.code, msg.parts);
      if (error && msg.type === "run") {
        post({ type: "stderr", id, text: error });
        done(id, { ok: false });
        return;
      }
      if (error) {
        done(id, { ok: true, result: { total: 0, passed: 0, failures: [], error } });
        return;
      }
    }
    // Run loads numpy only for code that imports it; Check and the demo always need it
    const py = await prepare(id, msg.type === "run" ? msg.code : "import numpy", msg.interrupt);
    post({ type: "started", id });
    if (msg.type === "run") {
      const runner = py.pyimport("rl_ops_numpy.browser.runner");
      const ok = runner.run_cell(msg.code, py.toPy(msg.parts ?? []));
      done(id, { ok });
    } else if (msg.type === "check") {
      const checker = py.pyimport("rl_ops_numpy.browser.check");
      const result = checker.check(msg.stem, msg.code, msg.name, py.toPy(msg.parts ?? []));
      done(id, { ok: true, result: result.toJs({ dict_converter: Object.fromEntries }) });
      result.destroy();
    } else if (msg.type === "demo") {
      const demo = py.pyimport("rl_ops_numpy.demo");
      const onLog = (phase, step, total, metrics) => {
        post({ type: "event", id, data: { phase, step, total, metrics: metrics.toJs({ dict_converter: Object.fromEntries }) } });
        metrics.destroy();
      };
      const result = demo.run(demo.BROWSER_CONFIG, onLog);
      done(id, { ok: true, result: result.toJs({ dict_converter: Object.fromEntries }) });
      result.destroy();
    }
  } catch (err) {
    const failure =
      err instanceof LoadError
        ? { kind: "load", what: err.what, message: err.message, offline: self.navigator.onLine === false }
        : { kind: "error", message: String(err?.message ?? err) };
    done(id, { ok: false, failure });
  } finally {
    // a Stop that arrives as this job ends must not interrupt the next one
    if (msg.interrupt) msg.interrupt[0] = 0;
  }
}

// One message at a time: Python itself is single-threaded. Cancels act at once, on the queue.
let queue = Promise.resolve();
const cancelled = new Set();
self.onmessage = (event) => {
  const msg = event.data;
  if (msg.type === "config") {
    config = msg.config;
    return;
  }
  if (msg.type === "cancel") {
    cancelled.add(msg.id);
    return;
  }
  queue = queue.then(() => (cancelled.delete(msg.id) ? post({ type: "done", id: msg.id, ok: false }) : handle(msg)));
};
