// The page's side of the Python worker: one runtime per page, one job layer for every widget.
//
// Every cell's Run and Check, the drill's check by meaning and the demo are jobs. A job is a
// small state machine (JOB_STATES): queued -> running -> done | stopped | timed-out | failed,
// or, when it ends before any of its code runs (a syntax error, a failed download, a Stop),
// queued -> done | stopped | failed. The runtime keeps them in one queue and sends the worker one job
// at a time (js/worker.js has the protocol); every message from the worker names its job, and
// arrives on a MessageChannel port that only the worker's module code holds, so no Python code
// can forge one.
//
// Limits are enforced from here, outside the interpreter: a run's time limit counts from the
// moment its code starts; a job the worker does not acknowledge within ACK_MS, or a runtime whose
// download makes no progress for STALL_MS, means a worker that cannot answer. Stop interrupts
// Python in place where the page is cross-origin isolated (one interrupt buffer per job);
// whatever does not end within INTERRUPT_GRACE_MS, or when the page is not isolated, ends with
// its worker, and the next job starts a fresh one. The worker also asks for a fresh one when a
// job left the interpreter in a state it cannot put back.

const workerURL = new URL("./worker.js", import.meta.url);
const ACK_MS = 5000; // a live worker acknowledges a job at once; Python only runs after the ack
const STALL_MS = 30000; // loading may be slow, but not silent this long
export const INTERRUPT_GRACE_MS = 5000; // an interrupted job's code may take this long to end (C code never sees it)
export const SIGNAL_AGAIN_MS = 250; // Stop repeats its interrupt this often until the code ends

/** The states of a job and the moves between them. */
export const JOB_STATES = {
  queued: ["running", "done", "stopped", "failed"],
  running: ["done", "stopped", "timed-out", "failed"],
  done: [],
  stopped: [],
  "timed-out": [],
  failed: [],
};

let nextId = 1;

export class Job {
  /**
   * @param {string} kind "load" | "run" | "check" | "demo"
   * @param {object} payload what the worker needs (code, parts, exercise)
   * @param {{limitMs?: number, quietMs?: number, onState?, onOutput?, onEvent?}} options
   *   limitMs: time the code may run (0: none); quietMs: longest silence while running (demo)
   */
  constructor(kind, payload, options = {}) {
    this.id = nextId++;
    this.kind = kind;
    this.payload = payload;
    this.options = options;
    this.state = "queued";
    this.outcome = null; // {ok, result?, failure?, restarted?} once the job is over
    this.done = new Promise((resolve) => (this._resolve = resolve));
  }

  get over() {
    return JOB_STATES[this.state].length === 0;
  }

  /** Move to `next`, or refuse (a job never leaves a final state). */
  move(next, outcome = null) {
    if (!JOB_STATES[this.state].includes(next)) return false;
    this.state = next;
    this.options.onState?.(next, this);
    if (this.over) {
      this.outcome = { ok: false, ...outcome, state: next };
      this._resolve(this.outcome);
    }
    return true;
  }
}

export class PythonRuntime {
  /** @param {{indexURL: string, wheelUrl: string, numpyTimeoutMs?: number}} config */
  constructor(config) {
    this.config = { numpyTimeoutMs: 20000, ...config };
    this.worker = null;
    this.port = null;
    this.loaded = false; // the core runtime is up in the current worker
    this.workers = 0; // workers started so far (a restart shows here; the tests read it)
    this.queue = [];
    this.current = null; // the job the worker has, with its timers
    this.listeners = new Set();
  }

  /** Listen to loading progress: fn({stage, loaded, total} | {ready} | {reset}). */
  onProgress(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  _emit(p) {
    for (const fn of this.listeners) fn(p);
  }

  get isolated() {
    return self.crossOriginIsolated === true;
  }

  // ---- jobs ------------------------------------------------------------------------------------

  /** Queue a job; it starts when the jobs before it are over. Returns the Job. */
  submit(kind, payload, options = {}) {
    const job = new Job(kind, payload, options);
    this.queue.push(job);
    this._pump();
    return job;
  }

  run(code, parts, options = {}) {
    return this.submit("run", { code, parts }, { limitMs: 10000, ...options });
  }

  /** Check the function `code` defines against exercise `exercise`'s reference. */
  check(exercise, code, parts, options = {}) {
    return this.submit("check", { exercise, code, parts }, { limitMs: 20000, ...options });
  }

  /** The toy RLHF run; `config`: DemoConfig fields over the browser's, e.g. {grpo_variants: true}. */
  demo({ config = {}, ...options } = {}) {
    return this.submit("demo", { config }, { limitMs: 0, quietMs: 60000, ...options });
  }

  /** Start loading the core runtime in the background (hover, focus, typing). */
  prefetch() {
    if (!this.worker && !this.queue.length && !this.current) this.submit("load", {});
  }

  /** Stop `job`, and only it. `timedOut`: it ran out of time. */
  stop(job, { timedOut = false } = {}) {
    if (!job || job.over) return;
    const state = timedOut ? "timed-out" : "stopped";
    if (job !== this.current?.job) {
      this.queue = this.queue.filter((j) => j !== job); // never sent: nothing to undo
      job.move(state);
      return;
    }
    const current = this.current;
    if (job.state === "running" && current.interrupt && this.loaded && !current.ended) {
      current.stopping = state;
      // SIGINT: Python raises KeyboardInterrupt at its next check of the buffer. Said again until
      // the code ends: a KeyboardInterrupt that lands in a finaliser, or in the learner's own
      // `except`, is swallowed there
      const signal = () => (current.interrupt[0] = 2);
      signal();
      current.timers.signal = setInterval(signal, SIGNAL_AGAIN_MS);
      current.grace = setTimeout(() => this._replace(state), INTERRUPT_GRACE_MS);
      return;
    }
    this._replace(state); // not isolated, or still loading: end the worker, and the job with it
  }

  _pump() {
    if (this.current || !this.queue.length) return;
    const job = this.queue.shift();
    if (job.over) return this._pump();
    this._spawn();
    const interrupt = this.isolated ? new Int32Array(new SharedArrayBuffer(4)) : undefined;
    this.current = { job, interrupt, timers: [] };
    this._watch(this.current, "ack", ACK_MS);
    this.port.postMessage({ ...job.payload, id: job.id, kind: job.kind, interrupt });
  }

  /** (Re)arm one of the current job's watchdogs. */
  _watch(current, name, ms, state = "failed") {
    clearTimeout(current.timers[name]);
    if (!ms) return;
    current.timers[name] = setTimeout(() => {
      if (this.current !== current) return;
      if (state === "failed") this._replace("failed", this._stuck(name));
      else this.stop(current.job, { timedOut: true });
    }, ms);
  }

  _stuck(name) {
    const message = {
      ack: "the Python worker does not answer",
      stall: "the download stopped making progress",
      quiet: "Python stopped answering",
    }[name];
    return { kind: name === "stall" ? "load" : "error", what: "Python", message };
  }

  _clearTimers(current) {
    for (const t of Object.values(current.timers)) clearTimeout(t); // clears intervals too
    clearTimeout(current.grace);
  }

  _receive(msg) {
    const current = this.current;
    if (msg.type === "progress") {
      if (current && !current.job.over && current.job.state === "queued") {
        this._watch(current, "stall", STALL_MS);
      }
      if (msg.ready) this.loaded = true;
      return this._emit(msg);
    }
    if (!current || msg.id !== current.job.id) return; // a late message of a job already over
    const { job } = current;
    if (msg.type === "ack") {
      clearTimeout(current.timers.ack);
      this._watch(current, "stall", STALL_MS);
    } else if (msg.type === "started") {
      clearTimeout(current.timers.stall);
      this.loaded = true;
      job.move("running");
      this._watch(current, "limit", job.options.limitMs, "timed-out");
      this._watch(current, "quiet", job.options.quietMs);
    } else if (msg.type === "output") {
      job.options.onOutput?.(msg);
    } else if (msg.type === "ended") {
      // the code is over and the worker puts the interpreter back: not a stuck job any more
      current.ended = true;
      clearInterval(current.timers.signal);
      clearTimeout(current.grace);
      clearTimeout(current.timers.limit);
      this._watch(current, "quiet", STALL_MS); // putting the interpreter back takes milliseconds
    } else if (msg.type === "event") {
      this._watch(current, "quiet", job.options.quietMs);
      job.options.onEvent?.(msg.data);
    } else if (msg.type === "done") {
      this._clearTimers(current);
      this.current = null;
      const outcome = { ...msg.outcome, restart: msg.restart };
      if (current.stopping) job.move(current.stopping, { ...outcome, interrupted: true });
      else job.move(outcome.failure ? "failed" : "done", outcome);
      if (msg.restart) this._terminate(msg.restart);
      this._pump();
    }
  }

  _spawn() {
    if (this.worker) return;
    this.worker = new Worker(workerURL, { type: "module" });
    this.workers++;
    this.loaded = false;
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.port.onmessage = (event) => this._receive(event.data);
    // anything posted on the worker itself comes from Python code, not the worker: ignored
    this.worker.onerror = (event) => {
      event.preventDefault?.();
      this._replace("failed", {
        kind: "load",
        what: "worker.js",
        message: event.message || "the Python worker failed to start",
      });
    };
    this.worker.postMessage({ type: "init", config: this.config }, [channel.port2]);
  }

  /** End the worker (a fresh one starts with the next job). */
  _terminate(reason = null) {
    this.worker?.terminate();
    this.port?.close();
    this.worker = null;
    this.port = null;
    this.loaded = false;
    this._emit({ reset: true, reason });
  }

  /** End the worker and with it the current job, which becomes `state`; then go on. */
  _replace(state, failure = null) {
    const current = this.current;
    this.current = null;
    if (current) this._clearTimers(current);
    this._terminate();
    current?.job.move(state, { restarted: true, ...(failure ? { failure } : {}) });
    this._pump();
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
