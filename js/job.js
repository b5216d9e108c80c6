// A job: one Run, Check, drill check or demo run, from the click to its outcome.
//
// A widget asks for a job (js/runtime.js) and gets it at once, queued while Python loads; every
// later thing that happens to it (Stop, Reset, a new mask, a time limit, a worker that dies, an
// answer that comes late) is a move of its state machine, and the job owns the timers of the
// state it is in. The moves:
//
//   queued ──► running ──► finishing ──► done | failed | stopped | timed-out
//     │           │  ▲          (the code ended; the worker puts the interpreter back)
//     │           ▼  │
//     │        stopping ──► (the interrupt lands) finishing, or (it does not) stopped | timed-out
//     ▼
//   done | stopped | failed            (ended before any of its code ran)
//
// `stopping` is an interrupt sent to Python that has not landed yet: it is said again until the
// code ends (js/python.js). What a Stop ends as ("stopped" or "timed-out") is `job.ending`.

export const JOB_STATES = {
  queued: ["running", "done", "stopped", "failed"],
  running: ["stopping", "finishing", "stopped", "timed-out", "failed"],
  stopping: ["finishing", "stopped", "timed-out", "failed"],
  finishing: ["done", "failed", "stopped", "timed-out"],
  done: [],
  stopped: [],
  "timed-out": [],
  failed: [],
};

// a job's output, in characters: the worker sends the first `head` of what the code writes and
// the last `tail`, and counts the rest (js/worker.js Output); the page keeps no more than their sum
// of what it receives for a job (js/python.js), whoever sent it
export const OUTPUT = { head: 20_000, tail: 5_000 };

// Every kind of job, once: the page (js/runtime.js, js/python.js) and the worker (js/worker.js)
// read what they do with a job from here, and the Python a kind runs is the function of the same
// name in browser_runtime/jobs.py (tests/test_jobs.py checks both ways). Per kind:
//   worker    "learner": a worker of the job's own, from the boot image; "judge": the page's
//             first worker, which makes the boot image and judges, and runs no learner code
//   payload   the fields its message carries to the worker, all of them plain data
//   python    true: jobs.py's function of its name runs it (its arguments are `payload`);
//             false: the worker's own JavaScript does (`load`, `make`)
//   retire    true: its worker ends with it (it ran code that is not the site's alone)
//   output    what reaches the job's output: "all" that the code writes, or only its "stderr"
//             (Check: a learner's prints are not its verdict)
//   events    it may send values while it runs (the demo's curves)
//   image     its answer is the boot image (js/boot.js)
//   verdict   its result goes to this kind of job on the judge, whose result ends it
//   seeded    it draws from a fresh random seed (js/runtime.js): a table of one seed's answers
//             passes nothing
//   result    the shape of outcome.result, for the reader (null: none)
//   failures  the failure kinds it can end with (FAILURES)
//   limits    {limitMs: time its code may run, quietMs: longest silence while it runs}; a
//             widget may ask for more (a Run gets its lesson's TIMEOUT)
const EVERY_FAILURE = ["load", "stale", "stuck", "error", "died"];
export const KINDS = {
  load: { worker: "learner", payload: [], python: false, result: null, failures: ["load", "stale", "stuck"] },
  run: {
    worker: "learner",
    payload: ["code", "parts"],
    python: true,
    retire: true,
    output: "all",
    result: "{slip}", // unless outcome.ok (the code ran to its end): the common slip behind its error
    failures: EVERY_FAILURE,
  },
  check: {
    worker: "learner",
    payload: ["exercise", "code", "parts", "seed"],
    python: true,
    retire: true,
    output: "stderr",
    verdict: "verdict",
    seeded: true,
    result: "{phase1}", // then the verdict's result
    failures: EVERY_FAILURE,
    limits: { limitMs: 20_000 }, // many inputs: at least 20 s
  },
  demo: {
    worker: "learner",
    payload: ["config"],
    python: true,
    retire: true,
    output: "all",
    events: true,
    result: "{phase: metrics}",
    failures: EVERY_FAILURE,
    limits: { quietMs: 60_000 }, // as long as it needs, but not a minute without a word
  },
  make: {
    worker: "judge",
    payload: ["stored"],
    python: false,
    image: true,
    result: null,
    failures: ["load", "stale", "stuck", "error"],
  },
  verdict: {
    worker: "judge",
    payload: ["exercise", "seed", "phase1"],
    python: true,
    output: "stderr",
    result: "{total, passed, seed, failures, error}",
    failures: EVERY_FAILURE,
    limits: { limitMs: 20_000 }, // the judge compares a Check's cases in well under a second
  },
};

// How a job can fail: outcome.failure = {kind, ...its values}, worded by js/i18n.js
// describeOutcome from js/strings.toml (`failure.*`); never a sentence.
//   load   part of the runtime did not come or does not start: {what (its file), cause: "http"
//          (status) | "network" | "timeout" (seconds) | "start" (detail: the engine's message),
//          offline}
//   stale  what came is of a later deploy than the page: {what, got, want}
//   stuck  a watchdog of the page fired: {watchdog: "ack" (the worker did not take the job) |
//          "stall" (the download made no progress) | "quiet" (Python said nothing while it ran)
//          | "verdict" (the judge did not answer), seconds}
//   error  an exception in the site's own code (the checker, the worker): {message}
//   died   the job ended the interpreter itself (os._exit, a fatal error): {message}
export const FAILURES = ["load", "stale", "stuck", "error", "died"];

// A fault of the site's own code: an invariant that does not hold. Its message is a code and the
// values that say which, never a sentence, so a report of it reads the same on every page (the
// page words the failure around it: strings.toml exerciseError).
export class Fault extends Error {
  constructor(code, values = {}) {
    super(`${code} ${JSON.stringify(values)}`);
    this.name = "Fault";
    this.code = code;
    this.values = values;
  }
}
export const WATCHDOGS = ["ack", "stall", "quiet", "verdict"];
export const LOAD_CAUSES = ["http", "network", "timeout", "start"];

let nextId = 1;

export class Job {
  /**
   * @param {string} kind one of KINDS
   * @param {object} payload what the worker needs (code, parts, exercise, config)
   * @param {{limitMs?: number, quietMs?: number}} limits limitMs: time the code may run (0: none);
   *   quietMs: longest silence while it runs (the demo reports every few steps)
   */
  constructor(kind, payload, { limitMs = 0, quietMs = 0 } = {}) {
    if (!Object.hasOwn(KINDS, kind)) throw new Fault("job-kind", { kind });
    this.id = nextId++;
    this.kind = kind;
    this.payload = payload;
    this.limitMs = limitMs;
    this.quietMs = quietMs;
    this.state = "queued";
    this.ending = null; // "stopped" | "timed-out": what a Stop asked for, once it is asked
    this.outcome = null; // {state, ok, result?, failure?, restarted?, restart?} once over
    this.runtime = null; // the PythonRuntime that has the job (null while python.js loads)
    this.output = { kept: 0, dropped: 0 }; // characters of its output the page kept, and dropped (js/python.js)
    this.image = null; // a make job's answer: {image, made} (js/python.js)
    this.timers = new Map(); // name -> handle, of the current state only
    this.listeners = new Set();
    this.done = new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  get over() {
    return JOB_STATES[this.state].length === 0;
  }

  /** Listen to the job: fn({type: "state", state} | {type: "output", …} | {type: "event", data}
   * | {type: "progress", …}). Returns the function that stops listening. */
  on(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  emit(event) {
    for (const fn of this.listeners) fn(event);
  }

  /** Move to `next`, or refuse (a job never leaves a final state). The timers of the state it
   * leaves end with it. A final state resolves `done` with the outcome. */
  move(next, outcome = {}) {
    if (!JOB_STATES[this.state].includes(next)) return false;
    this.clearTimers();
    this.state = next;
    if (this.over) this.outcome = { ok: false, ...outcome, state: next };
    this.emit({ type: "state", state: next });
    if (this.over) {
      this.listeners.clear();
      this.resolve(this.outcome);
    }
    return true;
  }

  /** A timer of the current state: `fn` after `ms` (every `ms` with `repeat`), unless the job
   * moves first. Arming a name again replaces it; `ms` 0 arms nothing. */
  arm(name, ms, fn, { repeat = false } = {}) {
    clearTimeout(this.timers.get(name)); // clears intervals too
    this.timers.delete(name);
    if (ms) this.timers.set(name, (repeat ? setInterval : setTimeout)(fn, ms));
  }

  clearTimers() {
    for (const handle of this.timers.values()) clearTimeout(handle);
    this.timers.clear();
  }

  /** The learner's Stop (or the time limit's, `timedOut`): a job not yet sent ends here; one the
   * worker has is the runtime's to end. */
  stop({ timedOut = false } = {}) {
    if (this.over) return;
    if (this.runtime) this.runtime.stop(this, { timedOut });
    else this.move(timedOut ? "timed-out" : "stopped");
  }
}
