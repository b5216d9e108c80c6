// The page's side of the Python worker: one runtime per page, one job layer for every widget.
//
// Every cell's Run and Check, the drill's check by meaning and the demo are jobs (js/job.js has
// their states). The runtime keeps them in one queue and sends the worker one job at a time
// (js/worker.js has the protocol); every message from the worker names its job, and arrives on a
// MessageChannel port that only the worker's module code holds, so no Python code can forge one.
//
// Limits are enforced from here, outside the interpreter: a run's time limit counts from the
// moment its code starts; a job the worker does not acknowledge within ACK_MS, or a runtime whose
// download makes no progress for STALL_MS, means a worker that cannot answer. A worker started
// before its job (the spare, the judge) that is silent when the job comes is replaced, and the job
// goes to a fresh one; a fresh worker's silence fails the job. Stop interrupts Python in place where
// the page is cross-origin isolated (one interrupt buffer per job); whatever does not end within
// INTERRUPT_GRACE_MS, or when the page is not isolated, ends with its worker.
//
// Every job that runs learner code (Run, Check's phase 1, the demo) has a worker of its own,
// ended when the job is: no state of one job reaches another, by construction. The page's first
// worker loads the long way and sends the boot image (js/boot.js); every later worker, the judge's
// too, starts from it in a fraction of a second, and one is started ahead (the spare), so the next
// Run finds its interpreter ready.
//
// A worker of a later deploy than the page (its modules, the wheel or Pyodide are not the page's:
// js/worker.js VERSION) fails its job as "stale", and so does every job after it: the page asks
// for a reload, which loses nothing (the learner's work is saved as it is typed). With the
// service worker, a page keeps its own version's code across deploys (js/sw.js), so this is rare.
//
// Check's verdict is the judge's: a second runtime (`judge`) whose worker runs verdict jobs and
// nothing else, so no learner code ever runs in it. A Check job's worker hands over only phase 1
// as plain data (browser_runtime/check.py plain_phase1); the Check job waits, finishing, for the
// judge, and ends with its verdict.

import { siteConfig } from "./dom.js";
import { Job } from "./job.js";

// the worker of this module's own version (the `?v=` it was asked for by)
const workerURL = new URL(`./worker.js${new URL(import.meta.url).search}`, import.meta.url);
const ACK_MS = 5000; // a live worker acknowledges a job at once; Python only runs after the ack
const STALL_MS = 30000; // loading may be slow, but not silent this long
export const INTERRUPT_GRACE_MS = 5000; // an interrupted job's code may take this long to end (C code never sees it)
export const SIGNAL_AGAIN_MS = 250; // Stop repeats its interrupt this often until the code ends
const VERDICT_MS = 20_000; // the judge compares a Check's cases in well under a second
// the jobs whose worker ends with them: they run learner code
const LEARNER_CODE = new Set(["run", "check", "demo"]);

export class PythonRuntime {
  /** @param {{version: string, indexURL: string, pyodideVersion: string, wheelUrl: string,
   *   imageCache: string, numpyTimeoutMs: number}} config
   * @param {{image: object | null}} boot the boot image, shared with the judge (js/boot.js) */
  constructor(config, boot = { image: null }) {
    this.config = config;
    this.boot = boot;
    this.images = 0; // boot images made by this runtime's workers, not taken from an earlier page's (the long loads; tests read it)
    this.worker = null;
    this.port = null;
    this.loaded = false; // the core runtime is up in the current worker
    this.workers = 0; // workers started so far (a restart shows here; the tests read it)
    this.queue = []; // jobs waiting for the worker
    this.current = null; // the job the worker has
    this.interrupt = null; // the current job's interrupt buffer (cross-origin isolated pages)
    this.listeners = new Set();
    this.judgeRuntime = null; // the judge, started with the first Check
    this.stale = null; // the failure of a worker of a later deploy than the page: every job's from then on
  }

  /** The runtime whose worker judges Checks (config.judge: it runs nothing else). */
  get judge() {
    this.judgeRuntime ??= new PythonRuntime({ ...this.config, judge: true }, this.boot);
    return this.judgeRuntime;
  }

  /** Listen to loading progress: fn({stage, loaded, total} | {ready} | {reset}). */
  onProgress(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  _emit(p) {
    for (const fn of this.listeners) fn(p);
    // every job still waiting hears how loading goes (its widget shows it)
    for (const job of [this.current, ...this.queue]) if (job?.state === "queued") job.emit({ type: "progress", ...p });
  }

  get isolated() {
    return self.crossOriginIsolated === true;
  }

  // ---- jobs ------------------------------------------------------------------------------------

  /** Take `job` (js/runtime.js made it); it is sent when the jobs before it are over. */
  submit(job) {
    if (job.over) return job; // stopped while python.js loaded
    job.runtime = this;
    // the judge starts from the boot image while the learner's code runs
    if (job.kind === "check" && this.boot.image) this.judge.prefetch();
    this.queue.push(job);
    this._pump();
    return job;
  }

  /** Start loading the core runtime in the background (hover, focus, typing). */
  prefetch() {
    if (!this.worker && !this.queue.length && !this.current) this.submit(new Job("load", {}));
  }

  /** Stop `job`, and only it. `timedOut`: it ran out of time. */
  stop(job, { timedOut = false } = {}) {
    const ending = timedOut ? "timed-out" : "stopped";
    if (job.over || job.state === "finishing") return; // its code is over: it ends on its own
    if (job !== this.current) {
      this.queue = this.queue.filter((j) => j !== job); // never sent: nothing to undo
      job.move(ending);
      return;
    }
    if (job.state === "stopping") return; // asked already: the interrupt is being said
    if (job.state === "running" && this.interrupt && this.loaded) {
      job.ending = ending;
      job.move("stopping");
      // SIGINT: Python raises KeyboardInterrupt at its next check of the buffer. Said again until
      // the code ends: a KeyboardInterrupt that lands in a finaliser, or in the learner's own
      // `except`, is swallowed there
      const signal = () => {
        this.interrupt[0] = 2;
      };
      signal();
      job.arm("signal", SIGNAL_AGAIN_MS, signal, { repeat: true });
      job.arm("grace", INTERRUPT_GRACE_MS, () => this._replace(ending));
      return;
    }
    this._replace(ending); // not isolated, or still loading: end the worker, and the job with it
  }

  _pump() {
    if (this.current || !this.queue.length) return;
    const job = this.queue.shift();
    if (job.over) return this._pump();
    if (this.stale) {
      job.move("failed", { ok: false, failure: this.stale }); // no worker of this page's version is left to start
      return this._pump();
    }
    const fresh = this._spawn();
    this.current = job;
    this.interrupt = this.isolated ? new Int32Array(new SharedArrayBuffer(4)) : null;
    if (fresh) this._watchdog(job, "ack", ACK_MS);
    else job.arm("ack", ACK_MS, () => this._resend(job));
    this.port.postMessage({ ...job.payload, id: job.id, kind: job.kind, interrupt: this.interrupt });
  }

  /** Arm the watchdogs of the state `job` is in (the job clears them when it moves). */
  _watch(job) {
    if (job.state === "queued") this._watchdog(job, "stall", STALL_MS);
    if (job.state === "running") {
      job.arm("limit", job.limitMs, () => this.stop(job, { timedOut: true }));
      this._watchdog(job, "quiet", job.quietMs);
    }
    if (job.state === "finishing") this._watchdog(job, "quiet", STALL_MS); // putting the interpreter back takes milliseconds
  }

  /** After `ms` of silence in its state, `job`'s worker is taken for stuck: it ends, and the job fails. */
  _watchdog(job, name, ms) {
    job.arm(name, ms, () => this._replace("failed", stuck(name)));
  }

  _receive(msg) {
    const job = this.current;
    if (msg.type === "image") {
      this.boot.image = msg.image;
      if (msg.made) this.images++;
      return;
    }
    if (msg.type === "progress") {
      if (job?.state === "queued") this._watch(job); // the download goes on
      if (msg.ready) this.loaded = true;
      return this._emit(msg);
    }
    if (!job || msg.id !== job.id) return; // a late message of a job already over
    if (msg.type === "ack") {
      job.arm("ack", 0);
      this._watch(job);
    } else if (msg.type === "started") {
      this.loaded = true;
      if (job.move("running")) this._watch(job);
    } else if (msg.type === "output") {
      job.emit({ type: "output", ...msg });
    } else if (msg.type === "ended") {
      // the code is over and the worker puts the interpreter back: nothing left to interrupt
      if (job.move("finishing")) this._watch(job);
    } else if (msg.type === "event") {
      if (job.state === "running") this._watchdog(job, "quiet", job.quietMs); // it is alive
      job.emit({ type: "event", data: msg.data });
    } else if (msg.type === "done") {
      this.current = null;
      if (job.state === "running" || job.state === "stopping") job.move("finishing");
      const outcome = { ...msg.outcome, restart: msg.restart };
      if (outcome.failure?.kind === "stale") this.stale = outcome.failure;
      if (job.ending) job.move(job.ending, { ...outcome, interrupted: true });
      else if (job.kind === "check" && !outcome.failure) this._judged(job, outcome);
      else job.move(outcome.failure ? "failed" : "done", outcome);
      if (msg.restart) this._terminate(msg.restart);
      else if (LEARNER_CODE.has(job.kind) || this.stale) this._retire();
      this._pump();
    }
  }

  /** `job` was sent to a worker started before it that does not answer now: a fresh
   * worker gets it (still queued: none of its code ran). */
  _resend(job) {
    this.current = null;
    this._terminate("the Python worker stopped answering between jobs");
    this.queue.unshift(job);
    this._pump();
  }

  /** Phase 1 of Check `job` is over (`outcome.result.phase1`): the judge's verdict ends it. The
   * learner's worker goes on with the next job meanwhile; the job's own watchdog ends here (the
   * verdict job has its own). */
  _judged(job, outcome) {
    job.arm("quiet", 0);
    const { exercise, seed } = job.payload;
    const phase1 = outcome.result?.phase1 ?? null;
    const verdict = this.judge.submit(new Job("verdict", { exercise, seed, phase1 }, { limitMs: VERDICT_MS }));
    verdict.done.then((judged) => {
      if (judged.state === "done" && judged.ok !== false && judged.result) {
        job.move("done", { ...outcome, result: judged.result });
      } else {
        const failure = judged.failure ?? { kind: "error", message: `the judge's job ended ${judged.state}` };
        job.move("failed", { ...outcome, ok: false, failure });
      }
    });
  }

  /** A worker for the next job: true when a new one was started for it. */
  _spawn() {
    if (this.worker) return false;
    const worker = new Worker(workerURL, { type: "module" });
    this.worker = worker;
    this.workers++;
    this.loaded = false;
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.port.onmessage = (event) => this._receive(event.data);
    // anything posted on the worker itself comes from Python code, not the worker: ignored.
    // An uncaught error reaches here only while the worker's Python starts (js/worker.js cancels
    // the later ones, a learner's JS callbacks'): worker.js or Pyodide failed to start. A worker
    // already ended can still report one (ended mid-write by a time limit, its Pyodide finds the
    // GIL released where the code was cut off), and only after the page has moved on: not ours
    worker.onerror = (event) => {
      event.preventDefault?.();
      if (worker !== this.worker) return;
      this._replace("failed", {
        kind: "load",
        what: "worker.js",
        message: event.message || "the Python worker failed to start",
      });
    };
    this.worker.postMessage({ type: "init", config: { ...this.config, image: this.boot.image } }, [channel.port2]);
    return true;
  }

  /** End the worker a job ran learner code in, and start the next one's now (a spare from the
   * boot image: the next job finds it ready). */
  _retire() {
    this._terminate();
    if (this.boot.image && !this.stale) this._spawn();
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
    const job = this.current;
    this.current = null;
    this._terminate();
    job?.move(state, { restarted: true, ...(failure ? { failure } : {}) });
    this._pump();
  }
}

/** What a watchdog that fired says: the worker, the download or Python went silent. */
function stuck(watchdog) {
  const message = {
    ack: "the Python worker does not answer",
    stall: "the download stopped making progress",
    quiet: "Python stopped answering",
  }[watchdog];
  return { kind: watchdog === "stall" ? "load" : "error", what: "Python", message };
}

let shared = null;

/** The page's runtime, built from the site's configuration (its paths resolve against `base`). */
export function runtime() {
  if (shared) return shared;
  const cfg = siteConfig();
  const base = new URL(cfg.base, location.href);
  shared = new PythonRuntime({
    version: cfg.version,
    indexURL: new URL(cfg.pyodide, base).href,
    pyodideVersion: cfg.pyodideVersion,
    wheelUrl: new URL(cfg.wheel, base).href,
    imageCache: `rl:${base.pathname}:boot-image`, // the service worker deletes it with every deploy
    numpyTimeoutMs: cfg.numpyTimeoutMs,
  });
  return shared;
}
