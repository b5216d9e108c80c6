// The Python worker: Pyodide in a module Web Worker, so Python never blocks the page.
//
// Protocol (request/response with ids; js/python.js is the other side). The page's first
// message, {type: "init", config}, carries a MessageChannel port; every other message travels
// on that port, which only this module's closure holds, and which it posts on with the native
// postMessage it took before any other code ran: Python code can reach the worker's global scope
// and its prototypes (`import js`), so a message it posts on the worker (a forged "done") never
// reaches the page, and patching MessagePort.prototype never hands it the port. (Should it get it
// anyway, the page drops what it did not ask for: js/python.js.)
//
//   page -> worker  {id, kind: "load"|"run"|"check"|"demo", ...payload, interrupt?}
//                   (check: {exercise, code, parts, seed}, the seed a 32-bit unsigned integer;
//                   its result is {phase1}, plain data for the judge)
//   page -> judge   {id, kind: "make", stored}: load the long way, or from `stored` ({snapshot,
//                   handles}, an earlier page's image, checked by the page), and send the image;
//                   {id, kind: "verdict", exercise, seed, phase1}. The judge is a worker started
//                   with config.judge, which runs no other kind of job (no learner code, ever)
//   worker -> page  {id, type: "ack"}                          the job arrived (the worker is alive)
//                   {type: "progress", stage, loaded, total}   what is being fetched
//                   {id, type: "image", image, made}           the make job's boot image (js/boot.js
//                                                               handOff; made: loaded the long way)
//                   {id, type: "started"}                      Python is loaded, the job's code runs
//                   {id, type: "output", stream, text}         batched stdout/stderr
//                   {id, type: "output", cut, partial?}        that many characters were left out
//                                                               (partial: so far, while it goes on)
//                   {id, type: "event", data}                  a value the demo emitted
//                   {id, type: "ended"}                        the job's code ended (Stop has
//                                                               nothing left to interrupt)
//                   {id, type: "done", outcome, restart}       outcome: {ok, result?, failure?};
//                                                               restart: why the interpreter is dead
//
// A failure's kind is "load" (part of the runtime could not be fetched or started; `what`
// names it), "stale" (what came is of a later deploy than the page: worker.js, the wheel or
// Pyodide) or "error" (Python raised in the site's own code, e.g. the checker). Errors in the
// learner's code are not failures: they are the run's stderr.
//
// No job's code ever meets another job's state: the page gives every job that runs learner code
// a worker of its own and ends it after (js/python.js), and each worker starts from the page's
// boot image, a snapshot of an interpreter no learner code has touched (js/boot.js). The judge's
// worker made that image and runs only the site's own code, so it serves every verdict.
//
// Once its interpreter is up, a worker gives up what would let code reach the site's storage or
// start other workers (`lockDown`): the site's own code needs none of it after the load, and a
// learner's code may not have it (the page and the service worker check what they read anyway).

import { fromImage, handOff, LoadError, makeImage, parts, received, Stale } from "./boot.js";
import { OUTPUT } from "./job.js";

// the code version this file was published under (site_build/es_modules.py versioned writes it);
// a page of another version (one opened before a deploy, its modules from then) cannot drive this
// worker: every job it sends fails as "stale", and the page asks for a reload
const VERSION = "__VERSION__";

let port = null;
let config = null; // {version, indexURL, pyodideVersion, wheelUrl, imageCache, numpyTimeoutMs, judge?, image?}
let pyodide = null;
let corePromise = null;
let trusted = null; // the site's modules the jobs call: {runner, check, demo}
let toSend = null; // the boot image this worker made or took, until its make job sends it: {image, made}

// taken before any other code runs: what a learner's code later puts on the prototypes is not ours
const apply = Reflect.apply;
const post = MessagePort.prototype.postMessage;
const dataOf = Object.getOwnPropertyDescriptor(MessageEvent.prototype, "data").get;
const send = (msg, transfer = []) => apply(post, port, [msg, transfer]);

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
// Which file a failure to load names: the one whose fetch failed, else the step that failed on what
// came (a file that arrived but does not start: another deploy's, or damaged).

/** Bytes of `url`, or a LoadError naming its file. */
async function bytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new LoadError(`${fileName(url)} (HTTP ${response.status})`, `HTTP ${response.status}`);
  return response.arrayBuffer();
}

/** `promise`, its failure a LoadError naming the file that failed to come, else `what` (the
 * step's file, or "Python": its interpreter failed to start on what came). */
async function step(what, promise) {
  try {
    return await promise;
  } catch (err) {
    if (err instanceof LoadError || err instanceof Stale) throw err;
    throw new LoadError(lastFailedFetch ?? what, String(err?.message ?? err));
  }
}

/** pyodide.asm.wasm, compiled as it arrives (where the server says it is wasm), else after. */
async function compileMain() {
  const url = `${config.indexURL}pyodide.asm.wasm`;
  try {
    return await WebAssembly.compileStreaming(fetch(url));
  } catch (err) {
    if (!(err instanceof TypeError)) throw new LoadError("pyodide.asm.wasm", String(err?.message ?? err));
    const buffer = await bytes(url); // not served as wasm (or not at all: the fetch names it)
    return step("pyodide.asm.wasm", WebAssembly.compile(buffer));
  }
}

/** Our wheel's bytes, if they are those its URL names (`?v=`: the start of their SHA-256); other
 * bytes are a later deploy's, which the page's code may not match. */
async function ourWheel(buffer) {
  const named = new URL(config.wheelUrl).searchParams.get("v");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", buffer));
  const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
  if (named && !hex.startsWith(named)) throw new Stale(`the wheel is ${hex.slice(0, 16)}, not ${named}`);
  return buffer;
}

/** The judge's make job: fetch and compile everything, start from `stored` (an earlier page's
 * image, which the page checked) or else load the long way, warm up and make the image every
 * other worker starts from (js/boot.js). Resolves to {py, image, made}. */
async function make(stored) {
  send({ type: "progress", stage: "pyodide.asm.wasm", loaded: 0, total: 0 });
  const lockFile = bytes(`${config.indexURL}pyodide-lock.json`);
  const lock = await step(
    "pyodide-lock.json",
    lockFile.then((b) => JSON.parse(new TextDecoder().decode(b))),
  );
  const numpy = lock.packages.numpy.file_name;
  const [main, ...wheels] = await Promise.all([
    compileMain(),
    withTimeout(bytes(`${config.indexURL}${numpy}`), config.numpyTimeoutMs, numpy),
    bytes(config.wheelUrl).then(ourWheel),
  ]);
  const base = await step(numpy, parts(main, wheels));
  if (stored) {
    const image = { ...base, ...stored };
    try {
      return { py: await step("Python", fromImage(config, image)), image, made: false };
    } catch (err) {
      if (err instanceof Stale || lastFailedFetch) throw err; // not the image's fault
      // not this build's after all, or damaged: made again (the page keeps the new one)
    }
  }
  const { py, image } = await step("Python", makeImage(config, base));
  return { py, image, made: true };
}

/** The interpreter: from the page's boot image when it has one, else (the judge's make job, with
 * an earlier page's image or none) made here. */
function load(stored = null) {
  corePromise ??= (async () => {
    lastFailedFetch = null;
    if (config.version !== VERSION) throw new Stale(`worker.js is ${VERSION}, the page ${config.version}`);
    if (config.image) {
      pyodide = await step(
        "Python",
        received(config.image).then((image) => fromImage(config, image)),
      );
    } else {
      toSend = await step("Python", make(stored));
      pyodide = toSend.py;
    }
    config.image = null; // the page keeps it; this worker needs it no more
    trusted = {
      runner: pyodide.pyimport("browser_runtime.runner"),
      check: pyodide.pyimport("browser_runtime.check"),
      demo: pyodide.pyimport("rl_ops_numpy.demo"),
    };
    lockDown();
    send({ type: "progress", ready: true });
    return pyodide;
  })();
  corePromise.catch(() => {
    corePromise = null; // the next job tries again (the network may be back)
  });
  return corePromise;
}

/** Give up, for good, what would let code reach the site's storage (Cache Storage, IndexedDB, the
 * origin's file system), other contexts (workers, broadcast channels) or the fetch wrapper's
 * progress messages: from the worker's global scope and from the prototypes that hold them. */
function lockDown() {
  self.fetch = rawFetch;
  const gone = (object, name) => {
    for (let o = object; o; o = Object.getPrototypeOf(o)) {
      if (Object.hasOwn(o, name)) delete o[name];
    }
  };
  for (const name of ["caches", "indexedDB", "Worker", "SharedWorker", "BroadcastChannel"]) gone(self, name);
  gone(self.navigator, "storage");
  gone(self.navigator, "serviceWorker");
  const methods = { CacheStorage: ["open", "match", "has", "delete", "keys"], IDBFactory: ["open", "deleteDatabase"] };
  for (const [name, names] of Object.entries(methods)) {
    const proto = self[name]?.prototype;
    for (const method of names) if (proto) delete proto[method];
  }
  for (const name of ["CacheStorage", "Cache", "IDBFactory", "StorageManager", "FileSystemHandle"]) gone(self, name);
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new LoadError(what, `no answer after ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// ---- output: batched, and capped per job ---------------------------------------------------

const HEAD = OUTPUT.head; // characters sent as they come (a few hundred lines: more is never read)
const TAIL = OUTPUT.tail; // characters kept from the end once the head is full
const FLUSH_MS = 100;
// writes sent as they come in each FLUSH_MS: a print right before code that blocks the worker
// (time.sleep, a loop ended by its time limit) is on the page already; a flood is batched
const BURST = 20;

class Output {
  constructor(id) {
    this.id = id;
    this.sent = 0;
    this.pending = []; // [stream, text] not sent yet
    this.tail = [];
    this.tailLength = 0;
    this.cut = 0;
    this.lastFlush = performance.now();
    this.window = { start: 0, flushes: 0 }; // flushes in the current FLUSH_MS
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
    const now = performance.now();
    if (now - this.window.start > FLUSH_MS) this.window = { start: now, flushes: 0 };
    if (this.window.flushes++ < BURST || now - this.lastFlush > FLUSH_MS) {
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

// a judge worker (config.judge) makes the boot image and computes verdicts, nothing else; any
// other worker never does
const KINDS = { judge: ["make", "verdict"], learner: ["load", "run", "check", "demo"] };

async function execute(msg, output) {
  const { id, kind } = msg;
  if (!KINDS[config.judge ? "judge" : "learner"].includes(kind)) throw new Error(`no ${kind} jobs in this worker`);
  const py = await load(kind === "make" ? (msg.stored ?? null) : null);
  if (kind === "load") return { ok: true };
  if (kind === "make") {
    if (!toSend) throw new Error("this worker was started from an image: it has none to send");
    send({ id, type: "image", image: handOff(toSend.image), made: toSend.made });
    toSend = null; // sent once
    return { ok: true };
  }
  if (kind === "run" || kind === "check") {
    const error = syntaxError(py, msg.code, msg.parts);
    if (error && kind === "run") {
      output.write("stderr", error);
      return { ok: false };
    }
    if (error) return { ok: true, result: { phase1: { outputs: [], error, shrunk: null } } };
  }
  py.setStdout(output.stream("stdout", true)); // a tty: Python flushes it at every newline
  py.setStderr(output.stream("stderr", false));
  if (msg.interrupt) py.setInterruptBuffer(msg.interrupt);
  send({ id, type: "started" });
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
    try {
      py.runPython("import sys\nsys.stdout.flush()\nsys.stderr.flush()");
    } catch {
      /* a stream the learner replaced or closed: the worker ends with the job anyway */
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
          : err instanceof Stale
            ? { kind: "stale", message: err.message }
            : { kind: "error", message: String(err?.message ?? err) },
    };
  }
  output.finish();
  let restart = null;
  try {
    pyodide?.runPython("1"); // the interpreter still answers (not exited, not fatally failed)
  } catch (err) {
    restart = String(err?.message ?? err).split("\n")[0];
    // the job ended the interpreter itself (os._exit, a fatal error): that is what it failed of
    if (outcome.failure?.kind === "error") outcome.failure.kind = "died";
  }
  send({ id: msg.id, type: "done", outcome, restart });
}

// Once Python is up, an uncaught error comes from a JS callback the learner's code set up
// (`js.setTimeout(print, 1)`): theirs, and their worker ends with the job; cancelled here, it never
// reaches the page, which takes any error it does get for a failure to start (js/python.js). Only
// this worker knows which it is: its error events and its port's messages reach the page in either
// order.
self.addEventListener("error", (event) => {
  if (pyodide) event.preventDefault();
});

let queue = Promise.resolve();
self.addEventListener("message", (event) => {
  if (port || event.data?.type !== "init") return;
  config = event.data.config;
  [port] = event.ports;
  if (config.image) load().catch(() => {}); // a spare: ready before its job arrives (a failure shows then)
  port.onmessage = (e) => {
    const msg = apply(dataOf, e, []);
    send({ id: msg.id, type: "ack" });
    queue = queue.then(() => handle(msg));
  };
});
