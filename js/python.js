// The page's side of the Python worker: one PythonRuntime per page, shared by every cell.
//
// It starts the worker only when asked (run, check, or a prefetch on intent), reports loading
// progress, enforces a time limit per run and stops runaway code: by interrupting Python where
// the page is cross-origin isolated (the loaded runtime survives), otherwise by terminating the
// worker and starting a fresh one on the next run. The page never waits on Python.

const workerURL = new URL("./worker.js", import.meta.url);

export class PythonRuntime {
  /** @param {{packagesUrl: string, wheelUrl: string, numpyTimeoutMs?: number}} config */
  constructor(config) {
    this.config = { numpyTimeoutMs: 20000, ...config };
    this.worker = null;
    this.loaded = false; // the core runtime is up in the current worker
    this.nextId = 1;
    this.pending = new Map(); // id -> {handlers, resolve, timer}
    this.progressListeners = new Set();
    this.interrupt = null;
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
    this.loaded = false;
    this.interrupt = self.crossOriginIsolated ? new Int32Array(new SharedArrayBuffer(4)) : null;
    this.worker.onmessage = (event) => this._receive(event.data);
    this.worker.onerror = (event) => {
      const message = event.message || "the Python worker failed to start";
      for (const id of [...this.pending.keys()]) this._finish(id, { ok: false, error: message });
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
    if (!job) return;
    if (msg.type === "started") {
      job.handlers.onStart?.();
      if (job.timeoutMs) job.timer = setTimeout(() => this._timeout(msg.id), job.timeoutMs);
    } else if (msg.type === "stdout") job.handlers.onStdout?.(msg.text);
    else if (msg.type === "stderr") job.handlers.onStderr?.(msg.text);
    else if (msg.type === "event") job.handlers.onEvent?.(msg.data);
    else if (msg.type === "done") this._finish(msg.id, msg);
  }

  _finish(id, outcome) {
    const job = this.pending.get(id);
    if (!job) return;
    clearTimeout(job.timer);
    this.pending.delete(id);
    job.resolve({ ...outcome, ...(job.stopReason ?? {}) });
  }

  _send(payload, handlers = {}, timeoutMs = 0) {
    const id = this.nextId++;
    const worker = this._spawn();
    return new Promise((resolve) => {
      this.pending.set(id, { handlers, resolve, timer: null, timeoutMs });
      worker.postMessage({ ...payload, id, interrupt: this.interrupt ?? undefined });
    });
  }

  /** Run a cell. Resolves {ok, error?, offline?, stopped?, timedOut?}. */
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

  _timeout(id) {
    this.stop({ timedOut: true, id });
  }

  /** Stop whatever runs now. Interrupt if possible, else terminate the worker. */
  stop({ timedOut = false } = {}) {
    if (this.pending.size === 0) return;
    if (this.interrupt && this.loaded) {
      this.interrupt[0] = 2; // SIGINT: Python raises KeyboardInterrupt at the next bytecode
      const stuck = [...this.pending.keys()];
      setTimeout(() => {
        if (stuck.some((id) => this.pending.has(id))) this._terminate({ timedOut, stopped: true });
      }, 1000);
      for (const id of stuck) {
        const job = this.pending.get(id);
        if (job) job.stopReason = { timedOut, stopped: !timedOut };
      }
      return;
    }
    this._terminate({ timedOut, stopped: !timedOut });
  }

  _terminate(reason) {
    this.worker?.terminate();
    this.worker = null;
    this.loaded = false;
    for (const id of [...this.pending.keys()]) this._finish(id, { ok: false, ...reason });
    this._emitProgress({ reset: true });
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
    packagesUrl: cfg.packagesUrl,
    wheelUrl: new URL(cfg.wheel, base).href,
    numpyTimeoutMs: cfg.numpyTimeoutMs ?? 20000,
  });
  return shared;
}
