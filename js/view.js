// One view of a job for every widget (cell, drill, demo): which buttons work, the status line,
// the loading progress, the job's output and, when it is over, what the page says of its end
// (i18n.js's one outcome map). Widgets keep only their content (blanks, mask, charts) and say
// what a finished job means for it (`onDone`).

import { describeOutcome } from "./i18n.js";

/** What the widget's root says of its job: data-state, read by styles and tests. */
const ROOT_STATE = {
  queued: "waiting",
  running: "running",
  stopping: "running",
  finishing: "running",
};

export class JobView {
  /**
   * @param {object} t the page's strings (i18n.js)
   * @param {{root: HTMLElement, starts: HTMLElement[], stop?: HTMLElement, status: HTMLElement,
   *   progress?: {box: HTMLElement, bar: HTMLProgressElement, label: HTMLElement},
   *   output?: import("./dom.js").OutputView}} parts
   *   starts: the controls that start a job (disabled while one runs); stop: the Stop button;
   *   progress: where loading shows (hidden otherwise); output: the job's stdout, stderr and end.
   */
  constructor(t, parts) {
    this.t = t;
    this.parts = parts;
    this.job = null; // the job shown, until it is over or dropped
    this.unlisten = () => {};
    this._show(null);
  }

  /** A job of this widget's is not over. */
  get busy() {
    return this.job !== null;
  }

  /**
   * Show `job` until it is over. `labels`: the status while it waits and while it runs;
   * `onDone(outcome, ms, {stdout, cut})`: what the widget makes of a job that ran to its end (it
   * may return the status to show); `stdout` is what the job printed to stdout, up to the first
   * characters the worker left out (`cut`: some were). Resolves with the outcome once all of it
   * is on the page, or with null when the view was dropped (Reset, a new mask) before the job
   * ended.
   */
  async follow(job, { labels = {}, onDone = null } = {}) {
    this.drop();
    this.job = job;
    this.labels = { queued: this.t.waiting, running: this.t.running, ...labels };
    this.parts.output?.clear();
    let startedAt = 0;
    let cut = 0; // characters left out so far, until the final count arrives
    const printed = { stdout: "", cut: false }; // stdout up to the first cut
    this.unlisten = job.on((e) => {
      if (e.type === "state") {
        if (e.state === "running") startedAt = performance.now();
        if (!job.over) this._show(job);
      } else if (e.type === "progress") this._progress(e);
      else if (e.type === "output") {
        if (e.cut) printed.cut = true;
        else if (e.stream === "stdout" && !printed.cut) printed.stdout += e.text;
        if (e.partial) cut = e.cut;
        else if (e.cut) {
          cut = 0;
          this.parts.output?.write(this._cut(e.cut), "rl-cut");
        } else this.parts.output?.write(e.text, e.stream === "stderr" ? "rl-stderr" : "");
      }
    });
    this._show(job);
    const outcome = await job.done;
    if (this.job !== job) return null;
    const { output, status } = this.parts;
    if (cut) output?.write(this._cut(cut), "rl-cut");
    const ms = startedAt ? Math.round(performance.now() - startedAt) : 0;
    let said = outcome.state === "done" ? this.t.finished({ ms }) : "";
    if (outcome.state === "done" && !outcome.ok) said = this.t.failed;
    if (outcome.state === "done" && onDone) said = onDone(outcome, ms, printed) ?? said;
    const end = describeOutcome(outcome, this.t, { limitMs: job.limitMs });
    if (end) output?.write(`${end.text}\n`, end.cls);
    await output?.drain(); // idle means: everything is on the page
    if (this.job !== job) return null;
    this.job = null;
    this._show(null);
    this._status(said);
    if (!status.textContent && end && !output) this._status(end.text);
    return outcome;
  }

  /** The widget no longer wants its job (Reset, a new mask): the job is stopped, whatever it says
   * from now on is not shown, and the widget is idle again. */
  drop() {
    this.job?.stop();
    this.unlisten();
    this.job = null;
    this._show(null);
    this._status("");
  }

  /** The controls, status and root state for `job` (null: idle). */
  _show(job) {
    const { root, starts, stop, progress } = this.parts;
    const state = job?.state ?? "idle";
    root.dataset.state = ROOT_STATE[state] ?? "idle";
    for (const control of starts) control.disabled = Boolean(job);
    if (stop) stop.disabled = !(state === "queued" || state === "running");
    if (state === "queued") this._status(this.labels.queued);
    if (state === "running") {
      this._status(this.labels.running);
      if (progress) progress.box.hidden = true;
    }
    if (!job && progress) progress.box.hidden = true;
  }

  /** The widget's own word on its status line (the drill's note on its answers): shown, or
   * hidden when there is none. */
  say(text) {
    this._status(text);
    this.parts.status.hidden = !text;
  }

  /** How far the job's own work has come (the demo's training steps), `fraction` of it, and
   * what it is doing now: on the progress bar and the status line. */
  step(fraction, text) {
    const { progress } = this.parts;
    if (progress) {
      progress.box.hidden = false;
      progress.bar.value = fraction;
    }
    this._status(text);
  }

  _status(text) {
    this.parts.status.textContent = text;
    if (text) this.parts.status.hidden = false;
  }

  /** "[... 1,234 characters of output not shown ...]" */
  _cut(count) {
    return this.t.outputCut({ count, chars: count.toLocaleString(document.documentElement.lang) });
  }

  /** Loading progress (js/python.js): which file is coming, how much of it has arrived. */
  _progress(p) {
    const { progress } = this.parts;
    if (!progress) return;
    if (p.ready || p.reset) {
      progress.box.hidden = true;
      return;
    }
    progress.box.hidden = false;
    const mb = (bytes) => (bytes / 1e6).toFixed(1);
    const bytes = { file: p.stage, loaded: mb(p.loaded), total: mb(p.total) };
    progress.label.textContent = p.stage ? (p.total ? this.t.fetchingBytes : this.t.fetching)(bytes) : this.t.loading;
    if (p.total) progress.bar.value = p.loaded / p.total;
    else progress.bar.removeAttribute("value");
  }
}
