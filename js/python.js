// The page's side of the Python worker: one PythonRuntime per page, shared by every cell.
//
// It starts the worker only when asked (run, check, or a prefetch on intent), reports loading
// progress, enforces a time limit per run and stops runaway code: by interrupting Python where
// the page is cross-origin isolated (the loaded runtime survives), otherwise by terminating the
// worker and starting a fresh one on the next run. The page never waits on Python.

const workerURL = new URL("./worker.js", import.meta.url);
// how long an interrupted job may take to end before its worker is replaced (a loaded machine
// can take a second to deliver the interrupt; C code never sees it)
const INTERRUPT_GRACE_MS = 3000;

export class PythonRuntime {
  /** @param {{indexURL: string, wheelUrl: string, numpyTimeoutMs?: number}} config */
  constructor(config) {
    this.config = { numpyTimeoutMs: 20000, ...config };
    this.worker = null;
    this.loaded = false; // the core runtime is up in the current worker
    this.nextId = 1;
    this.pending = new Map(); // id -> {payload, handlers, resolve, timer, timeoutMs, running}
    this.cancelled = new Set(); // ids cancelled before they started, until the worker skips them
    this.progressListeners = new Set();
    this.interrupt = null;
    this.workers = 0; // workers started so far: a restart shows here (the tests read it)
  }

  /** Listen to loading progress: fn({stage, loaded, total, ready}). Returns an unsubscribe. */
  onProgress(fn) {
    this.progressListeners.add(fn);
    return () => this.progressListeners.delete(fn);
  }

  get started() {
    return this.worker !== null;
  }

  _spawn() {
    if (this.worker) return this.worker;
    this.worker = new Worker(workerURL, { type: "module" });
    this.workers++;
    this.loaded = false;
    this.interrupt = self.crossOriginIsolated ? new Int32Array(new SharedArrayBuffer(4)) : null;
    this.worker.onmessage = (event) => this._receive(event.data);
    this.worker.onerror = (event) => {
      // a worker that failed is never reused: the next job starts a fresh one
      const message = event.message || "the Python worker failed to start";
      const failure = { kind: "load", what: "worker.js", message };
      this.worker?.terminate();
      this.worker = null;
      this.loaded = false;
      for (const id of [...this.pending.keys()]) this._finish(id, { ok: false, failure });
      this._emitProgress({ stage: "", error: message });
    };
    this.worker.postMessage({ type: "config", config: this.config });
    return this.worker;
  }

  /** Start loading the core runtime in the background (hover, focus, typing). */
  prefetch() {
    if (!this.worker) this._spawn().postMessage({ type: "load" });
  }

  _emitProgress(p) {
    for (const fn of this.progressListeners) fn(p);
  }

  _receive(msg) {
    if (msg.type === "progress") return this._emitProgress(msg);
    if (msg.type === "ready") {
      this.loaded = true;
      return this._emitProgress({ ready: true });
    }
    const job = this.pending.get(msg.id);
    if (!job) return this._receiveCancelled(msg);
    if (msg.type === "started") {
      job.running = true;
      job.handlers.onStart?.();
      if (job.timeoutMs) job.timer = setTimeout(() => this._timeout(msg.id), job.timeoutMs);
    } else if (msg.type === "stdout") job.handlers.onStdout?.(msg.text);
    else if (msg.type === "stderr") job.handlers.onStderr?.(msg.text);
    else if (msg.type === "event") job.handlers.onEvent?.(msg.data);
    else if (msg.type === "done") this._finish(msg.id, msg);
  }

  /** A message for a job cancelled while queued: if the worker began it anyway (the cancel
   * crossed its start), stop it, since nobody waits for it any more. */
  _receiveCancelled(msg) {
    if (!this.cancelled.has(msg.id)) return;
    if (msg.type === "done") return this.cancelled.delete(msg.id);
    if (msg.type !== "started") return;
    if (this.interrupt && this.loaded) this.interrupt[0] = 2;
    setTimeout(() => {
      if (this.cancelled.delete(msg.id)) this._restart();
    }, this.interrupt && this.loaded ? INTERRUPT_GRACE_MS : 0);
  }

  _finish(id, outcome) {
    const job = this.pending.get(id);
    if (!job) return;
    clearTimeout(job.timer);
    this.pending.delete(id);
    job.resolve({ ...outcome, ...(job.stopReason ?? {}) });
  }

  /** Post a job to the worker. The promise resolves with its outcome; `.id` names it for stop(). */
  _send(payload, handlers = {}, timeoutMs = 0) {
    const id = this.nextId++;
    let resolve;
    const promise = new Promise((r) => (resolve = r));
    this.pending.set(id, { payload, handlers, resolve, timer: null, timeoutMs, running: false });
    this._post(id);
    promise.id = id;
    return promise;
  }

  _post(id) {
    const { payload } = this.pending.get(id);
    this._spawn().postMessage({ ...payload, id, interrupt: this.interrupt ?? undefined });
  }

  /** Run a cell. Resolves {ok, failure?, stopped?, timedOut?, restarted?}. */
  run(code, parts, handlers = {}, timeoutMs = 10000) {
    return this._send({ type: "run", code, parts }, handlers, timeoutMs);
  }

  /** Check a function against the reference. Resolves {ok, result: {total, passed, failures, error}}. */
  check(stem, name, code, parts, handlers = {}, timeoutMs = 20000) {
    return this._send({ type: "check", stem, name, code, parts }, handlers, timeoutMs);
  }

  /** The toy RLHF demo; each logged step arrives through handlers.onEvent. No time limit. */
  demo(handlers = {}) {
    return this._send({ type: "demo" }, handlers, 0);
  }

  /** Stop the job `id` and only it. A queued job is cancelled; the running one is interrupted
   * where the page is cross-origin isolated, else its worker is terminated (jobs queued behind it
   * move to a fresh worker). */
  stop(id, { timedOut = false } = {}) {
    const job = this.pending.get(id);
    if (!job) return;
    const reason = { timedOut, stopped: !timedOut };
    if (!job.running) {
      this.cancelled.add(id);
      this.worker?.postMessage({ type: "cancel", id }); // the worker skips it when its turn comes
      return this._finish(id, { ok: false, ...reason });
    }
    if (this.interrupt && this.loaded) {
      job.stopReason = reason;
      this.interrupt[0] = 2; // SIGINT: Python raises KeyboardInterrupt at the next bytecode
      setTimeout(() => {
        if (this.pending.has(id)) this._terminate(id, reason); // stuck in C code: end it anyway
      }, INTERRUPT_GRACE_MS);
      return;
    }
    this._terminate(id, reason);
  }

  _timeout(id) {
    this.stop(id, { timedOut: true });
  }

  /** End the worker and with it job `id`; the jobs queued behind it start again in a new one. */
  _terminate(id, reason) {
    this._finish(id, { ok: false, restarted: true, ...reason });
    this._restart();
  }

  /** A fresh worker for the pending jobs (none of which had started: one job runs at a time). */
  _restart() {
    this.worker?.terminate();
    this.worker = null;
    this.loaded = false;
    this.cancelled.clear();
    this._emitProgress({ reset: true });
    for (const id of this.pending.keys()) this._post(id);
  }
}

let shared = null;

/** The page's runtime, built from the config the site put in <script id="rl-config">. */
export function runtime() {
  if (shared) return shared;
  const el = document.getElementById("rl-config");
  const cfg = el ? JSON.parse(el.textContent) : {};
  const base = new URL(cfg.base ?? "./", location.href);
  shared = new PythonRuntime({
    indexURL: new URL(cfg.pyodide ?? "assets/pyodide/", base).href,
    wheelUrl: new URL(cfg.wheel, base).href,
    numpyTimeoutMs: cfg.numpyTimeoutMs ?? 20000,
  });
  return shared;
}
