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

let nextId = 1;

export class Job {
  /**
   * @param {string} kind "load" | "run" | "check" | "demo", or the judge's "make" | "verdict"
   *   (js/python.js)
   * @param {object} payload what the worker needs (code, parts, exercise, config)
   * @param {{limitMs?: number, quietMs?: number}} limits limitMs: time the code may run (0: none);
   *   quietMs: longest silence while it runs (the demo reports every few steps)
   */
  constructor(kind, payload, { limitMs = 0, quietMs = 0 } = {}) {
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
