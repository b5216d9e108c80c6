// Runnable exercise cells: blanks typed inline in the highlighted code, Run / Check / Stop /
// Reset / Edit, streamed output, and the learner's work kept in localStorage.
//
// Markup (written by the site build, see site_build/directives.py):
//   <div class="rl-cell" data-runner="ppo/compute_gae" data-timeout="15">   (seconds per run)
//     <script type="application/json" class="rl-cell-data">{id, function, version, exercise,
//       test, expected: {output, rtol, atol}}</script>
//                                           the program, as data: exercise has its _____ blanks;
//                                           expected: the output the page shows under the cell
//                                           and Check's tolerance, which every Run compares with
//     <div class="highlight"><pre><code>… exercise with _____ …</code></pre></div>
//     <div class="highlight"><pre><code>… test block …</code></pre></div>
//   </div>
// The highlighted code is only shown (its _____ become inputs); the program is built from the
// data. Learner text and program output are only ever inserted with textContent.

import { compareOutput, lineSpan, lines } from "./compare.js";
import { el, isRecord, loadJSON, mountAll, OutputView, readJSON, STORAGE, saveJSON, validWork } from "./dom.js";
import { Editor } from "./editor.js";
import { checkErrorText, paddingText, reasonText, strings } from "./i18n.js";
import { Fault } from "./job.js";
import { practised } from "./review.js";
import { LIMITS, prefetch, start } from "./runtime.js";
import { JobView } from "./view.js";

const BLANK = "_____";

function lineCount(text) {
  return text.split("\n").length;
}

class Cell {
  constructor(root) {
    this.root = root;
    this.t = strings();
    /** @type {{id: string, function: string, version: string, exercise: string, test: string,
     *   expected?: {output: string, rtol: number, atol: number}}} */
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
      throw new Fault("blanks-differ-from-data", { id: this.id }); // the page and its rl-cell-data
    }
    this.editing = false; // the free editor is shown instead of the blanks
    this.synced = this._empty(); // the saved work as this tab last read it (restored, or another tab's)
    this.unsaved = false; // the browser refused the last save (said once, until one succeeds)
    this.undoable = null; // the work a Reset cleared, while its Undo is offered
    this._buildUi();
    this._restore();
    // the same exercise open in another tab: its saves arrive here
    window.addEventListener("storage", (e) => {
      if (e.key === this.key && e.newValue !== e.oldValue) this._otherTab(e.newValue);
    });
  }

  /** The per-run time limit: data-timeout seconds, the lesson's TIMEOUT (the build always
   * writes it; browser_runtime/exercises.py has its default). */
  get timeoutMs() {
    return Number(this.root.dataset.timeout) * 1000;
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
      input.setAttribute(
        "aria-label",
        this.t.blankLabel({ k: i + 1, n: blanks.length, function: this.data.function, line: input.dataset.line }),
      );
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
    const status = el("span", { class: "rl-status", role: "status", "aria-live": "polite" });
    bar.append(status);
    const progress = el("div", { class: "rl-progress", hidden: "" });
    const progressBar = el("progress", { max: "1" });
    const progressLabel = el("span");
    progress.append(progressBar, progressLabel);
    this.notice = el("div", { class: "rl-notice", hidden: "" });
    const pre = el("pre", { class: "rl-output", "data-output": "", hidden: "", "aria-label": t.output });
    this.output = new OutputView(pre);
    this.testBlock.after(this.editor.root, this.editorKeys, bar, progress, this.notice, pre);
    this.view = new JobView(t, {
      root: this.root,
      starts: [this.buttons.run, this.buttons.check],
      stop: this.buttons.stop,
      status,
      progress: { box: progress, bar: progressBar, label: progressLabel },
      output: this.output,
    });

    this.buttons.run.addEventListener("click", () => this.run());
    this.buttons.check.addEventListener("click", () => this.check());
    this.buttons.stop.addEventListener("click", () => this.view.job?.stop());
    this.buttons.reset.addEventListener("click", () => this.reset());
    this.buttons.edit.addEventListener("click", () => this.toggleEdit());
    // intent: fetch the runtime before the click lands
    for (const ev of ["pointerenter", "focus"]) {
      this.buttons.run.addEventListener(ev, prefetch);
      this.buttons.check.addEventListener(ev, prefetch);
    }
    this.root.addEventListener("input", () => {
      prefetch();
      this._endUndo();
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
  // is set aside by readJSON; a save the browser refuses is said; another tab's save is merged
  // blank by blank (_otherTab).

  get key() {
    return STORAGE.cell + this.id;
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

  /** The work of a cell nobody has typed in. */
  _empty() {
    return { version: this.version, blanks: this.blanks?.map(() => "") ?? [], editor: null, editing: false };
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
    if (state) {
      this._apply(state);
      this.synced = state;
    }
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

  /**
   * Another tab saved this exercise: merge, blank by blank, against the work this tab last read
   * (`synced`). A blank only the other tab changed takes theirs, one only this tab changed keeps
   * this tab's; one both changed differently keeps this tab's and is asked about (the other
   * tab's, or this one's). The merge is saved when it is not theirs, so the other tab hears of
   * this one's changes too: no blank is lost, whether or not the question is answered.
   */
  _otherTab(raw) {
    let theirs = null;
    try {
      theirs = JSON.parse(raw);
    } catch {
      return;
    }
    if (!validWork(theirs) || theirs.version !== this.version) return;
    const [mine, base] = [this._state(), this.synced];
    const both = []; // what both tabs changed, differently: [field, index]
    const merge = (m, t, b, where) => {
      if (m === b || m === t) return t;
      if (t !== b) both.push(where);
      return m;
    };
    const merged = {
      version: this.version,
      blanks: mine.blanks.map((m, i) => merge(m, theirs.blanks[i] ?? "", base.blanks[i] ?? "", i)),
      editor: merge(mine.editor ?? null, theirs.editor ?? null, base.editor ?? null, "editor"),
      editing: mine.editing === base.editing ? theirs.editing : mine.editing,
    };
    this.synced = theirs;
    this._apply(merged);
    if (JSON.stringify(merged) !== JSON.stringify({ ...theirs, version: this.version })) this._save();
    if (!both.length) return;
    const take = this._button("take-other", this.t.takeOtherTab, () => {
      for (const where of both) {
        if (where === "editor") merged.editor = theirs.editor;
        else merged.blanks[where] = theirs.blanks[where];
      }
      this._apply(merged);
      this._save();
      this._notice("");
    });
    const keep = this._button("keep-mine", this.t.keepMine, () => this._notice(""));
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

  /** Back to the exercise as published; a job of this cell is stopped (every job runs in a fresh
   * interpreter anyway: js/python.js). Old versions' work is kept (offered until discarded). */
  reset() {
    const typed = this._state();
    const empty = this._empty();
    this.view.drop(); // its job is stopped, and whatever it says now is not shown
    for (const b of this.blanks) {
      b.value = "";
      this._fit(b);
    }
    this.editor.value = "";
    this.toggleEdit(false, null, { save: false });
    saveJSON(this.key, undefined);
    this.synced = this._empty();
    this.output.clear();
    this._notice("");
    this.undoable = null;
    if (typed.editor !== null || typed.blanks.join("") !== empty.blanks.join("")) this._offerUndo(typed);
    else this._offerPrevious();
  }

  /** After a Reset that cleared typed work: "Cleared — Undo" puts `typed` back (and saves it),
   * offered until the learner types, runs or checks again (`undoable`: the work it restores). */
  _offerUndo(typed) {
    this.undoable = typed;
    const undo = this._button("undo", this.t.undo, () => {
      this._apply(typed);
      this._save();
      this._endUndo();
    });
    this._notice(this.t.resetDone, undo);
  }

  /** The undo offer is over: the notice is freed, for older versions' work if there is any. */
  _endUndo() {
    if (!this.undoable) return;
    this.undoable = null;
    this._notice("");
    this._offerPrevious();
  }

  // ---- running -------------------------------------------------------------------------------

  /** Run the cell; a run that ends without an error is compared with the expected output (the
   * status says whether it matches; the first line that differs is marked). A run records no
   * pass: only Check does. */
  async run() {
    if (this.view.busy) return null;
    this._endUndo();
    const { code, parts } = this.program(true);
    const job = start("run", { code, parts }, { limitMs: this.timeoutMs });
    let verdict = null;
    const outcome = await this.view.follow(job, {
      onDone: (outcome, ms, printed) => {
        const slip = outcome.result?.slip; // the common slip behind its error, said in our words
        if (!outcome.ok && this.t.slip[slip]) this.output.write(`${this.t.slip[slip]}\n`, "rl-stderr");
        verdict = outcome.ok ? this._compare(printed) : null; // a failed run is not compared
        if (!verdict) return null;
        return verdict.same ? this.t.runMatches({ ms }) : this.t.runDiffers({ ms, line: verdict.line });
      },
    });
    if (outcome && verdict && !verdict.same) this._markLine(verdict.line);
    return outcome;
  }

  /** What the run printed against the expected output: {same} or {same: false, line}; null when
   * it cannot be told (no expected output, or the output was cut and the difference, if any,
   * would lie past what arrived). */
  _compare({ stdout, cut }) {
    const expected = this.data.expected;
    if (!expected) return null;
    if (!cut) return compareOutput(stdout, expected.output, expected);
    // cut: only the whole lines before the cut are known; a difference among them still holds
    const known = stdout.slice(0, stdout.lastIndexOf("\n") + 1);
    const verdict = compareOutput(known, expected.output, expected);
    return !verdict.same && verdict.line <= lines(known).length ? verdict : null;
  }

  /** Mark line `n` of what the run printed (stdout: the output's unclassed spans, up to a cut):
   * a <mark> around its text (an empty one where the line is empty or missing), labelled in the
   * page's words by the stylesheet (data-label), not by colour alone. */
  _markLine(n) {
    const pre = this.output.pre;
    const texts = [];
    for (const span of pre.children) {
      if (span.classList.contains("rl-cut")) break;
      if (span.className) continue; // stderr, the end's message
      const walker = document.createTreeWalker(span, NodeFilter.SHOW_TEXT);
      while (walker.nextNode()) texts.push(walker.currentNode);
    }
    const [start, end] = lineSpan(texts.map((node) => node.data).join(""), n);
    const marks = [];
    let at = 0; // where the current text node starts in the printed text
    for (const node of texts) {
      const [from, to] = [start - at, Math.min(end - at, node.data.length)];
      at += node.data.length;
      const empty = start === end && from >= 0 && from <= node.data.length; // mark a place
      if (!empty && (to <= 0 || from >= node.data.length)) continue;
      const m = el("mark", { class: "rl-diff", "data-label": this.t.runDiffersMark });
      const piece = Math.max(from, 0) < node.data.length ? node.splitText(Math.max(from, 0)) : null;
      if (!piece) node.after(m);
      else if (empty) piece.before(m);
      else {
        if (to - Math.max(from, 0) < piece.data.length) piece.splitText(to - Math.max(from, 0));
        piece.replaceWith(m);
        m.append(piece);
      }
      marks.push(m);
      if (empty) break;
    }
    if (!marks.length) pre.append(el("mark", { class: "rl-diff", "data-label": this.t.runDiffersMark }));
    for (const m of marks.slice(0, -1)) delete m.dataset.label; // the label once, at its end
  }

  /** Check the function against the reference on random inputs (at least 20 s: many inputs). */
  check() {
    if (this.view.busy) return null;
    this._endUndo();
    const { code, parts } = this.program(false);
    const job = start(
      "check",
      { exercise: this.id, code, parts },
      { limitMs: Math.max(this.timeoutMs, LIMITS.check.limitMs) },
    );
    return this.view.follow(job, {
      labels: { running: this.t.checking },
      onDone: (outcome) => this._reportCheck(outcome.result),
    });
  }

  /** Write Check's verdict under the cell; returns the status ("3/3"). */
  _reportCheck(result) {
    const t = this.t;
    if (result.error) {
      this.output.write(checkErrorText(result.error, t), "rl-stderr");
      return t.failed;
    }
    const bad = result.total - result.passed;
    if (!bad) {
      saveJSON(STORAGE.solved + this.id, { version: this.data.version }); // the home page's progress
      // clean-slate mode shows this exercise's answer now (js/cleanslate.js)
      this.root.dispatchEvent(new CustomEvent("rl-solved", { bubbles: true, detail: { id: this.id } }));
      practised(this.id, this.data.version, "Good"); // a review item, or a due one's review (js/review.js)
      this.output.write(`${t.checkPassed({ n: result.total })}\n`, "rl-ok");
    } else {
      this.output.write(`${t.checkFailed({ count: bad, n: result.total })}\n`, "rl-error");
    }
    for (const f of result.failures) {
      const given = Object.entries(f.inputs).map(([k, v]) => `  ${k} = ${String(v).replaceAll("\n", "\n    ")}`);
      const defaults = Object.entries(f.left_out ?? {}).map(([k, v]) => `  ${k} = ${v}  ${t.leftOut}`);
      const inputs = [...given, ...defaults].join("\n");
      const padding = paddingText(f.padding, t);
      this.output.write(
        `\n${(f.shrunk ? t.checkShrunk : t.checkCase)({ case: f.case, seed: result.seed })}\n${t.inputs}:\n${inputs}\n` +
          (padding ? `${padding}\n` : "") +
          `${t.expected}: ${f.expected}\n` +
          (f.got ? `${t.got}: ${f.got}\n` : "") +
          `${t.reason}: ${reasonText(f.reason, t)}\n`,
      );
    }
    return `${result.passed}/${result.total}`;
  }
}

/** Start every runner cell on the page, now and on every page Material shows. */
export const init = mountAll("runner", Cell);
