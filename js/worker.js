// The Python worker: Pyodide in a module Web Worker, so Python never blocks the page.
//
// Protocol (request/response with ids; js/python.js is the other side). The page's first
// message, {type: "init", config}, carries a MessageChannel port; every other message travels
// on that port, which only this module's closure holds: Python code can reach the worker's
// global scope (`import js`), so a message it posts (a forged "done") never reaches the page.
//
//   page -> worker  {id, kind: "load"|"run"|"check"|"demo", ...payload, interrupt?}
//                   (check: {exercise, code, parts, seed}, the seed a 32-bit unsigned integer;
//                   its result is {phase1}, plain data for the judge)
//   page -> judge   {id, kind: "verdict", exercise, seed, phase1}: a worker started with
//                   config.judge, which runs no other kind of job (no learner code, ever)
//   worker -> page  {id, type: "ack"}                          the job arrived (the worker is alive)
//                   {type: "progress", stage, loaded, total}   what is being fetched
//                   {id, type: "started"}                      Python is loaded, the job's code runs
//                   {id, type: "output", stream, text}         batched stdout/stderr
//                   {id, type: "output", cut, partial?}        that many characters were left out
//                                                               (partial: so far, while it goes on)
//                   {id, type: "event", data}                  a value the demo emitted
//                   {id, type: "ended"}                        the job's code ended (Stop has
//                                                               nothing left to interrupt)
//                   {id, type: "done", outcome, restart}       outcome: {ok, result?, failure?}
//
// A failure's kind is "load" (part of the runtime could not be fetched or started; `what`
// names it) or "error" (Python raised in the site's own code, e.g. the checker). Errors in the
// learner's code are not failures: they are the run's stderr.
//
// After every job the interpreter is put back as it was (browser_runtime/sandbox.py):
// learner-made changes undone, learner timers cleared. `restart` asks the page for a fresh
// worker when that is not enough (the interpreter exited or failed, a closed stream, a huge heap).

let port = null;
let config = null; // {indexURL, wheelUrl, numpyTimeoutMs}
let pyodide = null;
let corePromise = null;
let packagesPromise = null;
let trusted = null; // PyProxies taken before any learner code ran (see trust())

const send = (msg) => port.postMessage(msg);

// ---- timers: a learner's setTimeout/setInterval (asyncio's too) end with their job ------------

const timers = new Set();
const realSetTimeout = self.setTimeout.bind(self);
const realSetInterval = self.setInterval.bind(self);
const realClearTimeout = self.clearTimeout.bind(self);
let jobRunning = false;
self.setTimeout = (fn, ms, ...args) => {
  const handle = realSetTimeout(
    (...a) => {
      timers.delete(handle);
      if (typeof fn === "function") fn(...a);
    },
    ms,
    ...args,
  );
  if (jobRunning) timers.add(handle);
  return handle;
};
self.setInterval = (fn, ms, ...args) => {
  const handle = realSetInterval(fn, ms, ...args);
  if (jobRunning) timers.add(handle);
  return handle;
};
function clearJobTimers() {
  for (const handle of timers) realClearTimeout(handle); // clears intervals too
  timers.clear();
}

// ---- fetching with progress ------------------------------------------------------------------
// Pyodide fetches its files itself; wrapping fetch lets the page show which file is coming and
// how many bytes of it have arrived, and name the one that failed.
const rawFetch = self.fetch.bind(self);
let lastFailedFetch = null;
const fileName = (url) => decodeURIComponent(String(url).split("?")[0].split("/").pop());
self.fetch = async (input, init) => {
  const url = input instanceof Request ? input.url : String(input);
  const name = fileName(url);
  send({ type: "progress", stage: name, loaded: 0, total: 0 });
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
          send({ type: "progress", stage: name, loaded, total });
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

function loadCore() {
  corePromise ??= (async () => {
    send({ type: "progress", stage: "pyodide.asm.wasm", loaded: 0, total: 0 });
    const wheel = rawFetch(config.wheelUrl)
      .then((r) => {
        if (!r.ok) throw new Error(`HTTP ${r.status}`);
        return r.arrayBuffer();
      })
      .catch((err) => {
        throw new LoadError(fileName(config.wheelUrl), String(err?.message ?? err));
      });
    try {
      const { loadPyodide } = await import(`${config.indexURL}pyodide.mjs`);
      pyodide = await loadPyodide({
        indexURL: config.indexURL,
        lockFileURL: `${config.indexURL}pyodide-lock.json`,
      });
    } catch (err) {
      throw new LoadError(lastFailedFetch ?? "pyodide.mjs", String(err?.message ?? err));
    }
    // rl_ops_numpy's pure-Python parts (the cell runner) work before numpy arrives
    pyodide.unpackArchive(await wheel, "wheel");
    trust(pyodide);
    send({ type: "progress", ready: true });
    return pyodide;
  })();
  corePromise.catch(() => {
    corePromise = null; // the next job tries again (the network may be back)
  });
  return corePromise;
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = realSetTimeout(() => reject(new LoadError(what, `no answer after ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => realClearTimeout(timer));
}

/** numpy, the torch layer and the checker, once per worker; then the interpreter's snapshot. */
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
    py.runPython(
      "from browser_runtime import install_torch\ninstall_torch()\n" +
        "import browser_runtime.check, rl_ops_numpy.demo",
    );
    trust(py, { packages: true });
  })();
  packagesPromise.catch(() => {
    packagesPromise = null;
  });
  return packagesPromise;
}

/** Take every Python object the worker calls, and the interpreter's snapshot, while only trusted
 * code has run: once the core is up, again once the packages are (the interpreter was just put
 * back, so still only trusted code has run). `restore` is checked before each call: its code and
 * defaults must still be the objects seen here (a learner could swap them), compared by
 * Python's built-in `id`. */
function trust(py, { packages = false } = {}) {
  const sandbox = py.pyimport("browser_runtime.sandbox");
  const id = trusted?.id ?? py.pyimport("builtins").id;
  const restore = trusted?.restore ?? sandbox.restore;
  trusted?.snapshot.destroy();
  // the objects themselves are kept alive here, so no other object can ever reuse their ids
  const kept = trusted?.kept ?? [restore.__code__, restore.__defaults__];
  trusted = {
    id,
    restore,
    kept,
    code: id(kept[0]),
    defaults: id(kept[1]),
    snapshot: sandbox.snapshot(),
    runner: trusted?.runner ?? py.pyimport("browser_runtime.runner"),
    check: packages ? py.pyimport("browser_runtime.check") : null,
    demo: packages ? py.pyimport("rl_ops_numpy.demo") : null,
  };
}

/** Put the interpreter back as it was; the reasons it cannot be, if any. */
function restoreInterpreter() {
  clearJobTimers();
  if (!trusted) return [];
  const { id, restore } = trusted;
  if (id(restore.__code__) !== trusted.code || id(restore.__defaults__) !== trusted.defaults) {
    return ["the site's own restore function was changed"];
  }
  const heap = pyodide._module.HEAP8.length;
  return restore(trusted.snapshot, heap).toJs();
}

// ---- output: batched, and capped per job ---------------------------------------------------

const HEAD = 20_000; // characters sent as they come (a few hundred lines: more is never read)
const TAIL = 5_000; // characters kept from the end once the head is full
const FLUSH_MS = 100;

class Output {
  constructor(id) {
    this.id = id;
    this.sent = 0;
    this.pending = []; // [stream, text] not sent yet
    this.tail = [];
    this.tailLength = 0;
    this.cut = 0;
    this.lastFlush = performance.now();
    this.decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  }

  stream(name, isatty) {
    return {
      isatty,
      write: (bytes) => {
        this.write(name, this.decoders[name].decode(bytes, { stream: true }));
        return bytes.length;
      },
    };
  }

  write(stream, text) {
    if (!text) return;
    const room = Math.max(0, HEAD - this.sent);
    if (room) {
      const head = text.slice(0, room);
      this._append(this.pending, stream, head);
      this.sent += head.length;
      text = text.slice(room);
    }
    if (text) {
      this._append(this.tail, stream, text);
      this.tailLength += text.length;
      if (this.tailLength > 2 * TAIL) this._trimTail(); // amortised: trim only now and then
    }
    if (performance.now() - this.lastFlush > FLUSH_MS) {
      this.flush();
      // while output is being cut, say how much so far: a job ended from outside never finishes
      if (this.cut) send({ id: this.id, type: "output", cut: this.cut, partial: true });
    }
  }

  /** Keep the last TAIL characters of the tail, counting the rest as cut. */
  _trimTail() {
    let excess = this.tailLength - TAIL;
    this.cut += excess;
    this.tailLength = TAIL;
    while (excess > 0) {
      const first = this.tail[0];
      if (first[1].length <= excess) {
        excess -= first[1].length;
        this.tail.shift();
      } else {
        first[1] = first[1].slice(excess);
        excess = 0;
      }
    }
  }

  _append(list, stream, text) {
    const last = list[list.length - 1];
    if (last && last[0] === stream) last[1] += text;
    else list.push([stream, text]);
  }

  flush() {
    this.lastFlush = performance.now();
    for (const [stream, text] of this.pending) send({ id: this.id, type: "output", stream, text });
    this.pending = [];
  }

  /** The rest: what is pending, then how much was cut, then the tail. */
  finish() {
    if (this.tailLength > TAIL) this._trimTail();
    this.flush();
    if (this.cut) send({ id: this.id, type: "output", cut: this.cut });
    for (const [stream, text] of this.tail) send({ id: this.id, type: "output", stream, text });
    this.tail = [];
  }
}

// ---- jobs ------------------------------------------------------------------------------------

/** A syntax error in the learner's code, in their terms, before anything else is fetched. */
function syntaxError(py, code, parts) {
  return trusted.runner.syntax_error(code, py.toPy(parts ?? []));
}

const dict = { dict_converter: Object.fromEntries };

/** A Check's seed: a 32-bit unsigned integer (js/runtime.js draws it), else 0. */
const seedOf = (msg) => (Number.isInteger(msg.seed) && msg.seed >= 0 && msg.seed < 2 ** 32 ? msg.seed : 0);

// a judge worker (config.judge) computes verdicts and nothing else; any other worker never does
const KINDS = { judge: ["load", "verdict"], learner: ["load", "run", "check", "demo"] };

async function execute(msg, output) {
  const { id, kind } = msg;
  if (!KINDS[config.judge ? "judge" : "learner"].includes(kind)) throw new Error(`no ${kind} jobs in this worker`);
  if (kind === "load") {
    await loadCore();
    return { ok: true };
  }
  const core = await loadCore();
  if (kind === "run" || kind === "check") {
    const error = syntaxError(core, msg.code, msg.parts);
    if (error && kind === "run") {
      output.write("stderr", error);
      return { ok: false };
    }
    if (error) return { ok: true, result: { phase1: { outputs: [], error, shrunk: null } } };
  }
  // Run loads numpy only for code that imports it (Python reads the imports from the code's ast);
  // Check and the demo always need it
  if (kind !== "run" || trusted.runner.needs_packages(msg.code)) await loadPackages();
  const py = core;
  py.setStdout(output.stream("stdout", true)); // a tty: Python flushes it at every newline
  py.setStderr(output.stream("stderr", false));
  if (msg.interrupt) py.setInterruptBuffer(msg.interrupt);
  send({ id, type: "started" });
  jobRunning = true;
  try {
    if (kind === "run") {
      return { ok: trusted.runner.run_cell(msg.code, py.toPy(msg.parts ?? [])) };
    }
    if (kind === "check") {
      // phase 1 only: the learner's function on the seed's inputs, handed over as plain data;
      // the verdict is the judge's, in a worker no learner code ever ran in (js/python.js)
      py.setStdout({ write: (b) => b.length }); // a learner's prints are not the verdict's
      const phase1 = trusted.check.learner_outputs.callKwargs(msg.exercise, msg.code, py.toPy(msg.parts ?? []), {
        seed: seedOf(msg),
      });
      const plain = trusted.check.plain_phase1(phase1);
      phase1.destroy();
      let data = plain.toJs(dict);
      plain.destroy();
      try {
        data = structuredClone(data); // only data leaves: anything else is the learner's doing
      } catch {
        data = null; // the judge says the code could not run
      }
      return { ok: true, result: { phase1: data } };
    }
    if (kind === "verdict") {
      const result = trusted.check.judge.callKwargs(msg.exercise, py.toPy(msg.phase1 ?? null), { seed: seedOf(msg) });
      const plain = result.toJs(dict);
      result.destroy();
      return { ok: true, result: plain };
    }
    if (kind === "demo") {
      const onLog = (phase, step, total, metrics) => {
        send({ id, type: "event", data: { phase, step, total, metrics: metrics.toJs(dict) } });
        metrics.destroy();
      };
      // the browser's configuration, with the fields the page chose (e.g. the runs beside GRPO)
      const config = trusted.demo.DemoConfig.browser.callKwargs(msg.config ?? {});
      const result = trusted.demo.run(config, onLog);
      config.destroy();
      const plain = result.toJs(dict);
      result.destroy();
      return { ok: true, result: plain };
    }
    throw new Error(`unknown job kind ${kind}`);
  } finally {
    // from here on only the site's code runs: Stop no longer reaches Python, and says so
    if (msg.interrupt) py.setInterruptBuffer(undefined);
    send({ id, type: "ended" });
    jobRunning = false;
    try {
      py.runPython("import sys\nsys.stdout.flush()\nsys.stderr.flush()");
    } catch {
      /* a stream the learner replaced or closed: restore below puts it back or says so */
    }
  }
}

async function handle(msg) {
  const output = new Output(msg.id);
  let outcome;
  try {
    outcome = await execute(msg, output);
  } catch (err) {
    outcome = {
      ok: false,
      failure:
        err instanceof LoadError
          ? { kind: "load", what: err.what, message: err.message, offline: self.navigator.onLine === false }
          : { kind: "error", message: String(err?.message ?? err) },
    };
  }
  output.finish();
  // put the interpreter back for the next job; when that cannot be done, ask for a new worker
  let problems;
  try {
    problems = pyodide ? [...restoreInterpreter()] : [];
    pyodide?.runPython("1"); // the interpreter still answers (not exited, not fatally failed)
  } catch (err) {
    problems = [String(err?.message ?? err).split("\n")[0]];
    // the job ended the interpreter itself (os._exit, a fatal error): that is what it failed of
    if (outcome.failure?.kind === "error") outcome.failure.kind = "died";
  }
  send({ id: msg.id, type: "done", outcome, restart: problems.length ? problems.join("; ") : null });
}

let queue = Promise.resolve();
self.addEventListener("message", (event) => {
  if (port || event.data?.type !== "init") return;
  config = event.data.config;
  [port] = event.ports;
  port.onmessage = (e) => {
    const msg = e.data;
    send({ id: msg.id, type: "ack" });
    queue = queue.then(() => handle(msg));
  };
});
