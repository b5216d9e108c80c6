// The page's side of the Python worker: one runtime per page, one job layer for every widget.
//
// Every cell's Run and Check, the drill's check by meaning and the demo are jobs (js/job.js has
// their states). The runtime keeps them in one queue and sends the worker one job at a time
// (js/worker.js has the protocol); every message from the worker names its job, and arrives on a
// MessageChannel port that only the worker's module code holds and posts on.
//
// What a worker says after its job's code started may be that code's: were it to get hold of the
// port, it could post anything. So the page takes from a worker only what it asked for, when it
// can be asked for (`_receive`): an ack, `started` and progress only before the code starts (a
// repeated ack would rearm the time limit); `ended` and `done` once; a failure to load or a newer
// deploy ("stale") only before the code starts, which is the only time either is known; events
// only from the demo, which runs no learner code; output up to what the worker itself would send
// (js/job.js OUTPUT), the rest counted and said; the boot image only from the judge's worker, once,
// as its make job's answer; nothing for a job that is over or was never sent.
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
// ended when the job is: no state of one job reaches another, by construction. The judge's worker
// is the page's first: its make job loads the long way (or from the image an earlier page kept, if
// its digest is the one the page kept) and sends the boot image (js/boot.js), and it stays, warm,
// to judge every Check (from plain data): no learner code ever runs in the interpreter that made
// the image. Every worker that runs learner code starts from the image in a fraction of a second,
// and one is started ahead (the spare), so the next Run finds its interpreter ready.
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

import { isRecord, siteConfig } from "./dom.js";
import { Job, KINDS, OUTPUT } from "./job.js";

// the worker of this module's own version (the `?v=` it was asked for by)
const workerURL = new URL(`./worker.js${new URL(import.meta.url).search}`, import.meta.url);
const ACK_MS = 5000; // a live worker acknowledges a job at once; Python only runs after the ack
const STALL_MS = 30000; // loading may be slow, but not silent this long
export const INTERRUPT_GRACE_MS = 5000; // an interrupted job's code may take this long to end (C code never sees it)
export const SIGNAL_AGAIN_MS = 250; // Stop repeats its interrupt this often until the code ends
// what a worker may report only before its job's code runs (it is known then, and only then)
const BEFORE_CODE = new Set(["load", "stale"]);
const OUTPUT_CAP = OUTPUT.head + OUTPUT.tail; // characters of a job's output the page keeps at most

/** The page's boot image (js/boot.js), made by the judge's worker and shared by both runtimes. */
class BootImage {
  constructor() {
    this.image = null; // what every worker that runs a job starts from (boot.js handOff)
    this.made = 0; // images made the long way by this page, not taken from an earlier page's (tests read it)
    this.making = null; // while the judge makes it: the promise of its failure, or null once `image` is there
  }
}

export class PythonRuntime {
  /** @param {{version: string, indexURL: string, pyodideVersion: string, wheelUrl: string,
   *   imageCache: string, numpyTimeoutMs: number}} config
   * @param {BootImage} boot the boot image, shared with the judge */
  constructor(config, boot = new BootImage()) {
    this.config = config;
    this.boot = boot;
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

  /** The runtime whose worker makes the boot image and judges Checks (config.judge: it runs
   * nothing else). */
  get judge() {
    this.judgeRuntime ??= new PythonRuntime({ ...this.config, judge: true }, this.boot);
    return this.judgeRuntime;
  }

  /** Boot images this page made the long way (the tests and the bench read it). */
  get images() {
    return this.boot.made;
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
    this.current = job;
    if (this.config.judge || this.boot.image) this._send(job);
    else this._waitForImage(job);
  }

  /** Send `job` to the worker (a new one, if there is none). */
  _send(job) {
    const fresh = this._spawn();
    this.interrupt = this.isolated ? new Int32Array(new SharedArrayBuffer(4)) : null;
    if (fresh) this._watchdog(job, "ack", ACK_MS);
    else job.arm("ack", ACK_MS, () => this._resend(job));
    // an earlier page's image, handed over (the page keeps no copy: the judge sends the image back)
    const transfer = job.payload.stored ? [job.payload.stored.snapshot.buffer] : [];
    this.port.postMessage({ ...job.payload, id: job.id, kind: job.kind, interrupt: this.interrupt }, transfer);
  }

  /** `job`, current, waits for the boot image (the judge's worker makes it), hearing how its loading
   * goes; then it is sent, or fails as the making failed (the next job tries again). */
  _waitForImage(job) {
    const unlisten = this.judge.onProgress((p) => this.current === job && this._emit(p));
    this.judge.make().then((failure) => {
      unlisten();
      if (this.current !== job) return; // stopped meanwhile
      if (!failure) return this._send(job);
      this.current = null;
      if (failure.kind === "stale") this.stale = failure;
      job.move("failed", { failure });
      this._pump();
    });
  }

  /** The boot image: made by this runtime's worker (the judge's, where no learner code runs,
   * ever), from the image an earlier page kept if its digest is the one the page kept, else the
   * long way. Resolves to null once `boot.image` is there, else to the failure (the next call
   * tries again). */
  make() {
    if (this.boot.image) return Promise.resolve(null);
    this.boot.making ??= (async () => {
      const stored = await keptImage(this.config);
      const job = this.submit(new Job("make", { stored }));
      const outcome = await job.done;
      this.boot.making = null;
      if (outcome.state !== "done" || !job.image) return outcome.failure ?? stuck("ack", ACK_MS);
      this.boot.image = job.image.image;
      performance.mark?.("rl-python:image");
      if (job.image.made) {
        this.boot.made++;
        keepImage(this.config, this.boot.image); // for the next page: nobody waits for it
      }
      return null;
    })();
    return this.boot.making;
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
    job.arm(name, ms, () => this._replace("failed", stuck(name, ms)));
  }

  /** A message on the worker's port: taken only where the page asked for it (the rules are at
   * the top of this file); anything else is dropped. */
  _receive(msg) {
    if (!isRecord(msg)) return;
    const job = this.current;
    if (msg.type === "progress") {
      // loading, before any job's code runs: then nothing is fetched that the page shows
      if (job && job.state !== "queued") return;
      if (job) this._watch(job); // the download goes on
      if (msg.ready) this.loaded = true;
      return this._emit(msg);
    }
    if (!job || msg.id !== job.id) return; // a late message of a job already over, or of none
    const queued = job.state === "queued"; // none of its code ran yet
    if (msg.type === "ack") {
      if (!queued || !job.timers.has("ack")) return; // once, before the code: it rearms the watchdogs
      job.arm("ack", 0);
      this._watch(job);
    } else if (msg.type === "image") {
      // the make job's answer, once, from the judge's worker (it runs no learner code)
      if (this.config.judge && KINDS[job.kind].image && queued && !job.image) {
        job.image = { image: msg.image, made: msg.made === true };
      }
    } else if (msg.type === "started") {
      if (!queued) return;
      this.loaded = true;
      if (job.move("running")) this._watch(job);
    } else if (msg.type === "output") {
      this._output(job, msg);
    } else if (msg.type === "ended") {
      // the code is over and the worker puts the interpreter back: nothing left to interrupt
      if ((job.state === "running" || job.state === "stopping") && job.move("finishing")) this._watch(job);
    } else if (msg.type === "event") {
      if (!KINDS[job.kind].events || job.state !== "running") return; // the demo's, which runs no learner code
      this._watchdog(job, "quiet", job.quietMs); // it is alive
      job.emit({ type: "event", data: msg.data });
    } else if (msg.type === "done") {
      this._done(job, msg);
    }
  }

  /** Output of `job`: kept up to OUTPUT_CAP characters (what the worker sends at most); what
   * comes past it is counted, and said as left out. */
  _output(job, msg) {
    const { output } = job;
    if (msg.cut !== undefined) {
      // the worker's count of what it left out (once the page drops, its own count is said instead)
      if (Number.isSafeInteger(msg.cut) && msg.cut >= 0 && !output.dropped)
        job.emit({ type: "output", cut: msg.cut, partial: msg.partial === true });
      return;
    }
    if (typeof msg.text !== "string" || !msg.text) return;
    const text = msg.text.slice(0, OUTPUT_CAP - output.kept);
    output.kept += text.length;
    if (text) job.emit({ type: "output", stream: msg.stream === "stderr" ? "stderr" : "stdout", text });
    if (text.length < msg.text.length) {
      output.dropped += msg.text.length - text.length;
      job.emit({ type: "output", cut: output.dropped, partial: true }); // said if the job ends from here
    }
  }

  /** `job`'s worker says it is over. */
  _done(job, msg) {
    const outcome = { ...(isRecord(msg.outcome) ? msg.outcome : { ok: false }) };
    if (!isRecord(outcome.failure)) delete outcome.failure;
    // a failure to load, or a worker of a later deploy, is known before the code runs; said after,
    // it is the code's doing (it would fail every later job as "site updated")
    if (BEFORE_CODE.has(outcome.failure?.kind) && job.state !== "queued") return;
    const restart = typeof msg.restart === "string" && msg.restart ? msg.restart.slice(0, 200) : null;
    outcome.restart = restart;
    this.current = null;
    if (job.state === "running" || job.state === "stopping") job.move("finishing");
    if (job.output.dropped) job.emit({ type: "output", cut: job.output.dropped });
    if (outcome.failure?.kind === "stale") this.stale = outcome.failure;
    if (job.ending) job.move(job.ending, { ...outcome, interrupted: true });
    else if (KINDS[job.kind].verdict && !outcome.failure) this._judged(job, outcome);
    else job.move(outcome.failure ? "failed" : "done", outcome);
    const failedToMake = KINDS[job.kind].image && outcome.failure;
    if (restart) this._terminate(restart);
    else if (KINDS[job.kind].retire || this.stale || failedToMake) this._retire();
    this._pump();
  }

  /** `job` was sent to a worker started before it that does not answer now: a fresh
   * worker gets it (still queued: none of its code ran). */
  _resend(job) {
    this.current = null;
    this._terminate("resend"); // the spare did not take the job
    this.queue.unshift(job);
    this._pump();
  }

  /** Phase 1 of Check `job` is over (`outcome.result.phase1`): the judge's verdict ends it. The
   * learner's worker goes on with the next job meanwhile; the job's own watchdog ends here (the
   * verdict job has its own). */
  _judged(job, outcome) {
    job.arm("quiet", 0);
    performance.mark?.("rl-python:phase1");
    const { exercise, seed } = job.payload;
    const phase1 = outcome.result?.phase1 ?? null;
    const kind = KINDS[job.kind].verdict;
    const verdict = this.judge.submit(new Job(kind, { exercise, seed, phase1 }, KINDS[kind].limits));
    verdict.done.then((judged) => {
      performance.mark?.("rl-python:verdict");
      if (judged.state === "done" && judged.ok !== false && judged.result) {
        job.move("done", { ...outcome, result: judged.result });
      } else {
        // the judge's own failure, or its time limit (it is never stopped otherwise)
        const failure = judged.failure ?? stuck("verdict", KINDS[kind].limits.limitMs);
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
      this._replace("failed", { kind: "load", what: "worker.js", cause: "start", detail: event.message ?? "" });
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

// ---- the image across pages ------------------------------------------------------------------
// Every lesson page would otherwise load the long way once. The snapshot is kept in Cache Storage
// under a key made of the runtime's and the wheel's addresses (the wheel's carries its hash), in a
// cache named for the site's path, which the service worker deletes with every deploy. Any worker
// of the origin can write Cache Storage, so its SHA-256 and its handles are kept in localStorage,
// which no worker can reach, under the same name; what is read back is handed to the judge only if
// its digest is the one kept, and deleted otherwise (the judge then loads the long way).

const storeKey = (indexURL, wheelUrl) =>
  new URL(`boot-image?${new URLSearchParams({ runtime: indexURL, wheel: wheelUrl })}`, indexURL).href;

async function sha256(buffer) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", buffer));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The image an earlier page kept ({snapshot, handles}) for this runtime and wheel, if its digest
 * is the one kept with it; else null, and what was kept is deleted. */
async function keptImage({ imageCache, indexURL, wheelUrl }) {
  if (!imageCache) return null;
  try {
    const key = storeKey(indexURL, wheelUrl);
    const cache = await caches.open(imageCache);
    const hit = await cache.match(key);
    if (!hit) return null;
    const kept = JSON.parse(localStorage.getItem(imageCache) ?? "null");
    const snapshot = await hit.arrayBuffer();
    if (isRecord(kept) && kept.key === key && isRecord(kept.handles) && kept.digest === (await sha256(snapshot)))
      return { snapshot: new Uint8Array(snapshot), handles: kept.handles };
    await cache.delete(key); // not the page's: written by someone else, or damaged
    localStorage.removeItem(imageCache);
    return null;
  } catch {
    return null; // no Cache Storage (a private window), or an entry that cannot be read
  }
}

/** Keep `image` (the judge's worker made it) for the next page: its digest first, then it. */
async function keepImage({ imageCache, indexURL, wheelUrl }, image) {
  if (!imageCache) return;
  try {
    const key = storeKey(indexURL, wheelUrl);
    const digest = await sha256(await image.snapshot.arrayBuffer());
    localStorage.setItem(imageCache, JSON.stringify({ key, digest, handles: image.handles }));
    const headers = { "content-type": "application/octet-stream" };
    await (await caches.open(imageCache)).put(key, new Response(image.snapshot, { headers }));
  } catch {
    /* storage full or refused: the next page loads the long way */
  }
}

/** A watchdog that fired (js/job.js FAILURES): the worker, the download or Python was silent
 * for `ms`. Never the site's code's error: a learner's flood of output can make a worker slow. */
function stuck(watchdog, ms) {
  return { kind: "stuck", watchdog, seconds: ms / 1000, offline: globalThis.navigator?.onLine === false };
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
    // the image's cache (the service worker deletes it with every deploy) and its digest's key
    imageCache: `rl:${base.pathname}:boot-image`,
    numpyTimeoutMs: cfg.numpyTimeoutMs,
  });
  return shared;
}
