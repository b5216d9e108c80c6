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

import { forgetScripts, fromImage, handOff, LoadError, makeImage, parts, received, Stale, scripts } from "./boot.js";
import { Fault, KINDS, OUTPUT } from "./job.js";

// the code version this file was published under (site_build/es_modules.py versioned writes it);
// a page of another version (one opened before a deploy, its modules from then) cannot drive this
// worker: every job it sends fails as "stale", and the page asks for a reload
const VERSION = "__VERSION__";

let port = null;
let config = null; // {version, indexURL, pyodideVersion, wheelUrl, imageCache, numpyTimeoutMs, judge?, image?}
let pyodide = null;
let corePromise = null;
let trusted = null; // the site's module the jobs call: {jobs} (browser_runtime/jobs.py)
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
let lastFailedFetch = null; // {what, cause, status?}: the last file whose fetch failed
const fileName = (url) => decodeURIComponent(String(url).split("?")[0].split("/").pop());
self.fetch = async (input, init) => {
  const url = input instanceof Request ? input.url : String(input);
  if (url.startsWith("blob:")) return rawFetch(input, init); // a file this worker was handed
  const name = fileName(url);
  send({ type: "progress", stage: name, loaded: 0, total: 0 });
  let response;
  try {
    response = await rawFetch(input, init);
  } catch (err) {
    lastFailedFetch = { what: name, cause: "network" };
    throw err;
  }
  const total = Number(response.headers.get("content-length")) || 0;
  if (!response.ok) lastFailedFetch = { what: name, cause: "http", status: response.status };
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
  if (!response.ok) throw new LoadError(fileName(url), "http", { status: response.status });
  return response.arrayBuffer();
}

/** `promise`, its failure a LoadError naming the file that failed to come, else `what` (the
 * step's file, or "Python": its interpreter failed to start on what came). */
async function step(what, promise) {
  try {
    return await promise;
  } catch (err) {
    if (err instanceof LoadError || err instanceof Stale) throw err;
    if (lastFailedFetch) {
      const { what: file, cause, ...values } = lastFailedFetch;
      throw new LoadError(file, cause, values);
    }
    throw new LoadError(what, "start", { detail: String(err?.message ?? err) });
  }
}

/** pyodide.asm.wasm, compiled as it arrives (where the server says it is wasm), else after. */
async function compileMain() {
  const url = `${config.indexURL}pyodide.asm.wasm`;
  try {
    return await WebAssembly.compileStreaming(fetch(url));
  } catch (err) {
    if (!(err instanceof TypeError))
      throw new LoadError("pyodide.asm.wasm", "start", { detail: String(err?.message ?? err) });
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
  if (named && !hex.startsWith(named)) throw new Stale("wheel", hex.slice(0, 16), named);
  return buffer;
}

/** The judge's make job: fetch and compile everything, start from `stored` (an earlier page's
 * image, which the page checked) or else load the long way, warm up and make the image every
 * other worker starts from (js/boot.js). Resolves to {py, image, made}. */
async function make(stored) {
  send({ type: "progress", stage: "pyodide.asm.wasm", loaded: 0, total: 0 });
  scripts(config); // Pyodide's scripts alongside the files below (the boot awaits them)
  const lockFile = bytes(`${config.indexURL}pyodide-lock.json`);
  const lock = await step(
    "pyodide-lock.json",
    lockFile.then((b) => JSON.parse(new TextDecoder().decode(b))),
  );
  const numpy = lock.packages.numpy.file_name;
  const [main, stdlib, ...wheels] = await Promise.all([
    compileMain(),
    bytes(`${config.indexURL}python_stdlib.zip`),
    withTimeout(bytes(`${config.indexURL}${numpy}`), config.numpyTimeoutMs, numpy),
    bytes(config.wheelUrl).then(ourWheel),
  ]);
  const base = await step(numpy, parts(main, wheels, { stdlib, lock: await lockFile }));
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
    if (config.version !== VERSION) throw new Stale("worker.js", VERSION, config.version);
    if (config.image) {
      scripts(config); // while the image's buffers are read
      pyodide = await step(
        "Python",
        received(config.image).then((image) => fromImage(config, image)),
      );
    } else {
      toSend = await step("Python", make(stored));
      pyodide = toSend.py;
    }
    config.image = null; // the page keeps it; this worker needs it no more
    trusted = { jobs: pyodide.pyimport("browser_runtime.jobs") };
    lockDown();
    send({ type: "progress", ready: true });
    return pyodide;
  })();
  corePromise.catch(() => {
    corePromise = null; // the next job tries again (the network may be back)
    forgetScripts();
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
    timer = setTimeout(() => reject(new LoadError(what, "timeout", { seconds: ms / 1000 })), ms);
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
// What each kind of job is, and which worker runs it, is js/job.js KINDS; the Python a kind runs is
// browser_runtime/jobs.py's function of its name, called here the same way for every kind.

const dict = { dict_converter: Object.fromEntries };
const silent = { write: (b) => b.length };

/** Plain data only: what Python handed over, copied as the structured clone algorithm copies it;
 * null where it is not plain (a proxy of the learner's objects: the judge then says so). */
function plainOf(proxy) {
  try {
    return structuredClone(proxy.toJs(dict));
  } catch {
    return null;
  } finally {
    proxy.destroy();
  }
}

// the kinds the worker's own JavaScript runs (KINDS: python false)
const OWN = {
  load: () => ({ ok: true }),
  make: (msg) => {
    if (!toSend) throw new Fault("make-without-image"); // a worker started from an image has none to send
    send({ id: msg.id, type: "image", image: handOff(toSend.image), made: toSend.made });
    toSend = null; // sent once
    return { ok: true };
  },
};

async function execute(msg, output) {
  const { id } = msg;
  const kind = Object.hasOwn(KINDS, msg.kind) ? KINDS[msg.kind] : null;
  // a judge worker (config.judge) makes the boot image and computes verdicts, nothing else; any
  // other worker never does
  if (kind?.worker !== (config.judge ? "judge" : "learner"))
    throw new Fault("kind-not-this-workers", { kind: msg.kind });
  const py = await load(kind.image ? (msg.stored ?? null) : null);
  if (!kind.python) return OWN[msg.kind](msg);
  // stdout a tty: Python flushes it at every newline
  py.setStdout(kind.output === "all" ? output.stream("stdout", true) : silent);
  py.setStderr(output.stream("stderr", false));
  let started = false;
  const job = {
    // from here the job's code runs: the time limit counts, and Stop reaches Python
    started: () => {
      if (started) return;
      started = true;
      if (msg.interrupt) py.setInterruptBuffer(msg.interrupt);
      send({ id, type: "started" });
    },
    emit: (data) => {
      if (kind.events && started) send({ id, type: "event", data: plainOf(data) });
      else data?.destroy?.();
    },
  };
  const args = Object.fromEntries(kind.payload.map((name) => [name, py.toPy(msg[name] ?? null)]));
  try {
    return plainOf(trusted.jobs[msg.kind].callKwargs(job, args)) ?? { ok: true, result: null };
  } finally {
    for (const value of Object.values(args)) value?.destroy?.();
    if (started) {
      // from here on only the site's code runs: Stop no longer reaches Python, and says so
      if (msg.interrupt) py.setInterruptBuffer(undefined);
      send({ id, type: "ended" });
    }
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
          ? { ...err.failure, offline: self.navigator.onLine === false }
          : err instanceof Stale
            ? err.failure
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
