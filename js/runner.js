// Runnable exercise cells: blanks typed inline in the highlighted code, Run / Check / Stop /
// Reset / Edit, streamed output, and the learner's work kept in localStorage.
//
// Markup (written by the site build, see site_build/directives.py):
//   <div class="rl-cell" data-runner="ppo/compute_gae" data-timeout="15">   (seconds per run)
//     <script type="application/json" class="rl-cell-data">{id, function, version, exercise,
//       test}</script>                      the program, as data: exercise has its _____ blanks
//     <div class="highlight"><pre><code>… exercise with _____ …</code></pre></div>
//     <div class="highlight"><pre><code>… test block …</code></pre></div>
//   </div>
// The highlighted code is only shown (its _____ become inputs); the program is built from the
// data. Learner text and program output are only ever inserted with textContent.

import { el, isRecord, loadJSON, mountAll, OutputView, readJSON, SOLVED, saveJSON } from "./dom.js";
import { Editor } from "./editor.js";
import { describeOutcome, strings } from "./i18n.js";
import { python } from "./runtime.js";

const BLANK = "_____";
const STORE = "rl-ops/cell/";

/** Saved work of a cell: {version, blanks: [strings], editor: string|null, editing: bool}. */
const validWork = (v) =>
  isRecord(v) &&
  typeof v.version === "string" &&
  Array.isArray(v.blanks) &&
  v.blanks.every((b) => typeof b === "string") &&
  (v.editor == null || typeof v.editor === "string");

function lineCount(text) {
  return text.split("\n").length;
}

class Cell {
  constructor(root) {
    this.root = root;
    this.t = strings();
    /** @type {{id: string, function: string, version: string, exercise: string, test: string}} */
    this.data = JSON.parse(root.querySelector(":scope > .rl-cell-data").textContent);
    this.id = this.data.id;
    this.version = this.data.version;
    this.testText = this.data.test;
    this.originalExercise = this.data.exercise;
    const blocks = root.querySelectorAll(":scope > .highlight, :scope > div > .highlight");
    [this.exerciseBlock, this.testBlock] = blocks;
    this.exerciseCode = this.exerciseBlock.querySelector("code");
    this.blanks = this._makeBlanks();
    if (this.blanks.length !== this.originalExercise.split(BLANK).length - 1) {
      throw new Error(`${this.id}: the shown exercise and its data have different blanks`);
    }
    this.job = null; // this cell's job while it is not over
    this._buildUi();
    this._restore();
    // the same exercise open in another tab: its saves arrive here
    window.addEventListener("storage", (e) => {
      if (e.key === this.key && e.newValue !== e.oldValue) this._otherTab(e.newValue);
    });
  }

  /** The per-run time limit: data-timeout seconds (the lesson's TIMEOUT), 10 by default. */
  get timeoutMs() {
    return Number(this.root.dataset.timeout || 10) * 1000;
  }

  // ---- the code ------------------------------------------------------------------------------

  /** Replace every `_____` token of the highlighted exercise with an input. */
  _makeBlanks() {
    const blanks = [];
    const walker = document.createTreeWalker(this.exerciseCode, NodeFilter.SHOW_TEXT);
    const hits = [];
    while (walker.nextNode()) if (walker.currentNode.data.includes(BLANK)) hits.push(walker.currentNode);
    let line = 1;
    const lineOf = (node) => {
      // lines before this node, counted over the code's text
      const range = document.createRange();
      range.setStart(this.exerciseCode, 0);
      range.setEnd(node, 0);
      return lineCount(range.toString());
    };
    for (const node of hits) {
      const parts = node.data.split(BLANK);
      const frag = document.createDocumentFragment();
      line = lineOf(node);
      parts.forEach((part, i) => {
        if (part) frag.append(part);
        if (i < parts.length - 1) {
          const input = el("input", {
            type: "text",
            class: "rl-blank",
            "data-blank": String(blanks.length),
            spellcheck: "false",
            autocomplete: "off",
            autocapitalize: "off",
            "data-line": String(line),
            size: "8",
          });
          blanks.push(input);
          frag.append(input);
        }
      });
      node.replaceWith(frag);
    }
    // each blank says where it is: "Blank 2 of 3 in compute_gae (line 14)"
    blanks.forEach((input, i) => {
      input.setAttribute("aria-label", this.t.blankLabel(i + 1, blanks.length, this.data.function, input.dataset.line));
    });
    return blanks;
  }

  /** The exercise as the learner has it now: the template with each blank's value (empty ones
   * stay `_____`). */
  exerciseText() {
    return this._filled(this.blanks.map((input) => input.value));
  }

  _filled(values) {
    let i = 0;
    return this.originalExercise.replaceAll(BLANK, () => {
      const value = values[i++] ?? "";
      return value.trim() === "" ? BLANK : value;
    });
  }

  /** {code, parts} to run: the exercise then the test, or the editor's text. */
  program(withTest = true) {
    if (this.editing) {
      const code = this.editor.value;
      return { code, parts: [{ name: "cell", first: 1, length: lineCount(code) }] };
    }
    const ex = this.exerciseText();
    if (!withTest) return { code: `${ex}\n`, parts: [{ name: "exercise", first: 1, length: lineCount(ex) }] };
    const code = `${ex}\n\n${this.testText}\n`;
    return {
      code,
      parts: [
        { name: "exercise", first: 1, length: lineCount(ex) },
        { name: "test", first: lineCount(ex) + 2, length: lineCount(this.testText) },
      ],
    };
  }

  // ---- the interface -------------------------------------------------------------------------

  _buildUi() {
    const t = this.t;
    const keysId = `rl-editor-keys-${this.id.replace("/", "-")}`;
    this.editor = new Editor({ label: t.editorLabel, describedBy: keysId, onRun: () => this.run() });
    // its keys, under it while it is open (and read with it by screen readers)
    this.editorKeys = el("p", { class: "rl-editor-keys", id: keysId, hidden: "" }, t.editorKeys);
    this.buttons = {};
    const bar = el("div", { class: "rl-toolbar", role: "toolbar" });
    for (const [action, label, cls] of [
      ["run", t.run, "md-button md-button--primary"],
      ["check", t.check, "md-button"],
      ["stop", t.stop, "md-button"],
      ["reset", t.reset, "md-button"],
      ["edit", t.edit, "md-button"],
    ]) {
      const b = el("button", { type: "button", class: `rl-button ${cls}`, "data-action": action }, label);
      this.buttons[action] = b;
      bar.append(b);
    }
    this.buttons.stop.disabled = true;
    this.status = el("span", { class: "rl-status", role: "status", "aria-live": "polite" });
    bar.append(this.status);
    this.progress = el("div", { class: "rl-progress", hidden: "" });
    this.progressBar = el("progress", { max: "1" });
    this.progressLabel = el("span");
    this.progress.append(this.progressBar, this.progressLabel);
    this.notice = el("div", { class: "rl-notice", hidden: "" });
    this.output = el("pre", { class: "rl-output", "data-output": "", hidden: "", "aria-label": t.output });
    this.view = new OutputView(this.output);
    this.testBlock.after(this.editor.root, this.editorKeys, bar, this.progress, this.notice, this.output);

    this.buttons.run.addEventListener("click", () => this.run());
    this.buttons.check.addEventListener("click", () => this.check());
    this.buttons.stop.addEventListener("click", () => this.stop());
    this.buttons.reset.addEventListener("click", () => this.reset());
    this.buttons.edit.addEventListener("click", () => this.toggleEdit());
    // intent: fetch the runtime before the click lands
    const prefetch = () =>
      python().then(
        (rt) => rt.prefetch(),
        () => {},
      );
    for (const ev of ["pointerenter", "focus"]) {
      this.buttons.run.addEventListener(ev, prefetch);
      this.buttons.check.addEventListener(ev, prefetch);
    }
    this.root.addEventListener("input", () => {
      prefetch();
      this.dirty = true; // changed here since the last save another tab made
      this._save();
    });
    for (const input of this.blanks) {
      input.addEventListener("input", () => this._fit(input));
      input.addEventListener("keydown", (e) => {
        if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) this.run();
      });
    }
  }

  _fit(input) {
    input.size = Math.max(8, input.value.length + 1);
  }

  /** Switch between the blanks and a free editor, which starts from the exercise as filled in
   * (and keeps its own text afterwards). `focus` is false when a reload restores the mode. */
  toggleEdit(on = !this.editing, text = null, { focus = true, save = true } = {}) {
    if (on) {
      // read the blanks before switching: program() reads the editor once editing is on
      this.editor.value = text ?? (this.editor.value || this.program().code);
      this.editor.enhance(); // the real editor, fetched now (the textarea serves meanwhile)
    }
    this.editing = on;
    this.editor.hidden = !on;
    this.editorKeys.hidden = !on;
    this.exerciseBlock.hidden = on;
    this.testBlock.hidden = on;
    this.buttons.edit.textContent = on ? this.t.blanksMode : this.t.edit;
    if (on && focus) this.editor.focus();
    if (save) this._save();
  }

  // ---- persistence ---------------------------------------------------------------------------
  // The work is saved at every keystroke. Work saved for an older version of the exercise is
  // kept apart (one entry per version) until the learner takes or discards it; unreadable data
  // is set aside by readJSON; a save the browser refuses is said; another tab's save is taken
  // over when this tab has no changes of its own, and offered otherwise.

  get key() {
    return STORE + this.id;
  }

  get previousKey() {
    return `${this.key}/previous`;
  }

  _state() {
    return {
      version: this.version,
      blanks: this.blanks.map((b) => b.value),
      editor: this.editing || this.editor.value ? this.editor.value : null,
      editing: Boolean(this.editing),
    };
  }

  _save() {
    if (saveJSON(this.key, this._state())) {
      if (this.unsaved) this._notice("");
      this.unsaved = false;
    } else if (!this.unsaved) {
      this.unsaved = true;
      this._notice(this.t.storageFull);
    }
  }

  /** Show `state` (saved work of this version) in the cell. */
  _apply(state) {
    this.blanks.forEach((b, i) => {
      b.value = state.blanks[i] ?? "";
      this._fit(b);
    });
    this.editor.value = state.editor ?? "";
    if (Boolean(state.editing) !== Boolean(this.editing)) {
      this.toggleEdit(Boolean(state.editing), state.editor, { focus: false, save: false });
    }
    this.dirty = false;
  }

  _restore() {
    const read = readJSON(this.key, validWork);
    let state = read.value ?? null;
    if (state && state.version !== this.version) {
      // kept apart, per version: a second change of the exercise does not overwrite the first
      const previous = loadJSON(this.previousKey, {}, isRecord);
      previous[state.version] = { ...state, savedAt: Date.now() };
      if (saveJSON(this.previousKey, previous)) saveJSON(this.key, undefined);
      state = null;
    }
    if (read.unreadable !== undefined) this._notice(this.t.unreadableSaved);
    this._offerPrevious();
    if (state) this._apply(state);
  }

  /** Old work, newest first: offered until the learner takes or discards it. */
  _offerPrevious() {
    const previous = loadJSON(this.previousKey, {}, isRecord);
    const versions = Object.keys(previous).filter((v) => validWork(previous[v]));
    if (!versions.length) return;
    versions.sort((a, b) => (previous[b].savedAt ?? 0) - (previous[a].savedAt ?? 0));
    const old = previous[versions[0]];
    const forget = () => {
      const now = loadJSON(this.previousKey, {}, isRecord);
      delete now[versions[0]];
      saveJSON(this.previousKey, Object.keys(now).length ? now : undefined);
      this._notice("");
      this._offerPrevious();
    };
    const restore = this._button("restore-old", this.t.restoreOld, () => {
      this.toggleEdit(true, old.editor ?? this._fill(old.blanks));
      forget();
    });
    const discard = this._button("discard-old", this.t.discardOld, forget);
    this._notice(this.t.oldVersion, restore, discard);
  }

  /** Another tab saved this exercise: take its work, or ask when this tab has changes too. */
  _otherTab(raw) {
    let theirs = null;
    try {
      theirs = JSON.parse(raw);
    } catch {
      return;
    }
    if (!validWork(theirs) || theirs.version !== this.version) return;
    if (!this.dirty) return this._apply(theirs);
    const take = this._button("take-other", this.t.takeOtherTab, () => {
      this._apply(theirs);
      this._notice("");
    });
    const keep = this._button("keep-mine", this.t.keepMine, () => {
      this._save(); // this tab's work is the saved one again (and the other tab hears of it)
      this._notice("");
    });
    this._notice(this.t.otherTab, take, keep);
  }

  _button(action, label, onClick) {
    const b = el("button", { type: "button", class: "rl-button md-button", "data-action": action }, label);
    b.addEventListener("click", onClick);
    return b;
  }

  /** The original exercise text with old blank values put in, for an old saved state. */
  _fill(values) {
    return `${this._filled(values)}\n\n${this.testText}\n`;
  }

  _notice(text, ...extra) {
    this.notice.replaceChildren();
    if (text) this.notice.append(el("span", {}, text), ...extra);
    this.notice.hidden = !text;
  }

  /** Back to the exercise as published; a job of this cell is stopped. Old versions' work is
   * kept (it is offered until discarded). */
  reset() {
    this.stop();
    this.job = null; // whatever it reports now, this cell no longer listens
    this.epoch = (this.epoch ?? 0) + 1; // nor does a Run or Check still waiting for Python
    for (const b of this.blanks) {
      b.value = "";
      this._fit(b);
    }
    this.editor.value = "";
    this.toggleEdit(false, null, { save: false });
    saveJSON(this.key, undefined);
    this.dirty = false;
    this.view.clear();
    this._busy(false);
    this._notice("");
    this._offerPrevious();
  }

  // ---- running -------------------------------------------------------------------------------

  _busy(on, label = "") {
    this.root.dataset.state = on ? "waiting" : "idle";
    this.buttons.run.disabled = on;
    this.buttons.check.disabled = on;
    this.buttons.stop.disabled = !on;
    this.status.textContent = label;
  }

  _watchProgress(rt) {
    const t = this.t;
    if (rt.loaded) return () => {};
    this.progress.hidden = false;
    this.progressLabel.textContent = t.loading;
    this.progressBar.removeAttribute("value");
    return rt.onProgress((p) => {
      if (p.ready || p.reset) {
        this.progress.hidden = true;
        return;
      }
      this.progress.hidden = false;
      this.progressLabel.textContent = t.fetching(p.stage, p.loaded, p.total);
      if (p.total) this.progressBar.value = p.loaded / p.total;
      else this.progressBar.removeAttribute("value");
    });
  }

  stop() {
    if (this.job)
      python().then(
        (rt) => rt.stop(this.job),
        () => {},
      );
    this.stopAsked = !this.job && this.root.dataset.state === "waiting"; // job not sent yet
  }

  async _exec(kind) {
    const t = this.t;
    const epoch = this.epoch;
    this._busy(true, t.waiting);
    this.stopAsked = false;
    this.view.clear();
    let rt;
    try {
      rt = await python();
      if (epoch !== this.epoch) return null;
    } catch (err) {
      this.view.write(`${t.loadFailed("python.js", String(err?.message ?? err), !navigator.onLine)}\n`, "rl-error");
      await this.view.drain();
      this._busy(false);
      return null;
    }
    if (rt.loaded) this.status.textContent = kind === "run" ? t.running : t.checking;
    const unwatch = this._watchProgress(rt);
    let startedAt = 0;
    let cut = 0; // characters left out so far, until the final count arrives
    // Check compares many inputs: it gets at least 20 s
    const limitMs = kind === "run" ? this.timeoutMs : Math.max(this.timeoutMs, 20000);
    const options = {
      limitMs,
      onState: (state) => {
        if (state !== "running") return;
        this.root.dataset.state = "running"; // the code itself runs now (Python is loaded)
        this.progress.hidden = true;
        startedAt = performance.now();
        this.status.textContent = kind === "run" ? t.running : t.checking;
      },
      onOutput: (msg) => {
        if (job !== this.job) return;
        if (msg.partial) {
          cut = msg.cut; // the worker may end before it says the final count
        } else if (msg.cut) {
          cut = 0;
          this.view.write(t.outputCut(msg.cut), "rl-cut");
        } else this.view.write(msg.text, msg.stream === "stderr" ? "rl-stderr" : "");
      },
    };
    const { code, parts } = this.program(kind === "run");
    const job = kind === "run" ? rt.run(code, parts, options) : rt.check(this.id, code, parts, options);
    this.job = job;
    if (this.stopAsked) rt.stop(job);
    const outcome = await job.done;
    unwatch();
    this.progress.hidden = true;
    if (job !== this.job) return outcome; // Reset: this cell no longer reports this job
    this.job = null;
    if (cut) this.view.write(t.outputCut(cut), "rl-cut");
    this._report(kind, outcome, startedAt ? Math.round(performance.now() - startedAt) : 0, limitMs);
    await this.view.drain(); // idle means: everything is on the page
    this._busy(false, this.status.textContent);
    return outcome;
  }

  _report(kind, outcome, ms, limitMs) {
    const t = this.t;
    this.status.textContent = "";
    const said = describeOutcome(outcome, t, { limitMs });
    if (kind === "check" && outcome.state === "done") this._reportCheck(outcome.result);
    else if (outcome.state === "done") this.status.textContent = outcome.ok ? t.finished(ms) : t.failed;
    if (said) this.view.write(`${said.text}\n`, said.cls);
  }

  _reportCheck(result) {
    const t = this.t;
    if (result.error) {
      this.view.write(result.error, "rl-stderr");
      this.status.textContent = t.failed;
      return;
    }
    const bad = result.total - result.passed;
    this.status.textContent = `${result.passed}/${result.total}`;
    if (!bad) {
      saveJSON(SOLVED + this.id, { version: this.data.version }); // the home page's progress
      return this.view.write(`${t.checkPassed(result.total)}\n`, "rl-ok");
    }
    this.view.write(`${t.checkFailed(bad, result.total)}\n`, "rl-error");
    for (const f of result.failures) {
      const inputs = Object.entries(f.inputs)
        .map(([k, v]) => `  ${k} = ${String(v).replaceAll("\n", "\n    ")}`)
        .join("\n");
      this.view.write(
        `\n${f.shrunk ? t.checkShrunk(f.case) : t.checkCase(f.case)}\n${t.inputs}:\n${inputs}\n` +
          `${t.expected}: ${f.expected}\n` +
          (f.got ? `${t.got}: ${f.got}\n` : "") +
          `${t.reason}: ${t.why(f.reason)}\n`,
      );
    }
  }

  run() {
    if (this.buttons.run.disabled) return null;
    return this._exec("run");
  }

  check() {
    if (this.buttons.check.disabled) return null;
    return this._exec("check");
  }
}

/** Start every runner cell on the page, now and on every page Material shows. */
export const init = mountAll("runner", Cell);
