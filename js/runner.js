// Runnable exercise cells: blanks typed inline in the highlighted code, Run / Check / Stop /
// Reset / Edit, streamed output, and the learner's work kept in localStorage.
//
// Markup (written by the site build, see overrides/hooks/site.py):
//   <div class="rl-cell" data-runner="ppo/compute_gae" data-function="compute_gae"
//        data-version="…" [data-timeout="10"]>
//     <div class="highlight"><pre><code>… exercise with _____ …</code></pre></div>
//     <div class="highlight"><pre><code>… test block …</code></pre></div>
//   </div>
// Learner text and program output are only ever inserted with textContent.

import { el, loadJSON, saveJSON } from "./dom.js";
import { strings } from "./i18n.js";

const BLANK = "_____";
const STORE = "rl-ops/cell/";

let pythonModule = null;

/** The page's Python runtime. Its module loads on the first sign of intent, never with the page. */
function python() {
  pythonModule ??= import("./python.js").then((m) => m.runtime());
  return pythonModule;
}

function lineCount(text) {
  return text.split("\n").length;
}

class Cell {
  constructor(root) {
    this.root = root;
    this.t = strings();
    this.stem = root.dataset.runner;
    this.name = root.dataset.function;
    this.version = root.dataset.version;
    const blocks = root.querySelectorAll(":scope > .highlight, :scope > div > .highlight");
    [this.exerciseBlock, this.testBlock] = blocks;
    this.exerciseCode = this.exerciseBlock.querySelector("code");
    this.testText = this.testBlock.querySelector("code").textContent.replace(/\n$/, "");
    this.originalExercise = this.exerciseCode.textContent.replace(/\n$/, "");
    this.blanks = this._makeBlanks();
    this.generation = 0; // bumped by Reset: a run that ends after it reports nothing
    this.jobId = null; // the runtime's id of this cell's job while it is pending
    this._buildUi();
    this._restore();
  }

  /** The per-run time limit: data-timeout seconds on the cell, 10 by default. */
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
            "aria-label": this.t.blankLabel(blanks.length + 1, line),
            size: "8",
          });
          blanks.push(input);
          frag.append(input);
        }
      });
      node.replaceWith(frag);
    }
    return blanks;
  }

  /** The exercise as the learner has it now: blanks filled (empty ones stay `_____`). */
  exerciseText() {
    let text = "";
    const walk = (node) => {
      for (const child of node.childNodes) {
        if (child.nodeType === Node.TEXT_NODE) text += child.data;
        else if (child.matches?.("input.rl-blank")) text += child.value.trim() === "" ? BLANK : child.value;
        else walk(child);
      }
    };
    walk(this.exerciseCode);
    return text.replace(/\n$/, "");
  }

  /** {code, parts} to run: the exercise then the test, or the editor's text. */
  program(withTest = true) {
    if (this.editing) {
      const code = this.editor.value;
      return { code, parts: [{ name: "cell", first: 1, length: lineCount(code) }] };
    }
    const ex = this.exerciseText();
    if (!withTest) return { code: ex + "\n", parts: [{ name: "exercise", first: 1, length: lineCount(ex) }] };
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
    this.editor = el("textarea", {
      class: "rl-editor",
      spellcheck: "false",
      "aria-label": t.editorLabel,
      hidden: "",
    });
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
    this.status = el("span", { class: "rl-status", "aria-live": "polite" });
    bar.append(this.status);
    this.progress = el("div", { class: "rl-progress", hidden: "" });
    this.progressBar = el("progress", { max: "1" });
    this.progressLabel = el("span");
    this.progress.append(this.progressBar, this.progressLabel);
    this.notice = el("div", { class: "rl-notice", hidden: "" });
    this.output = el("pre", { class: "rl-output", "data-output": "", hidden: "", "aria-label": t.output });
    this.testBlock.after(this.editor, bar, this.progress, this.notice, this.output);

    this.buttons.run.addEventListener("click", () => this.run());
    this.buttons.check.addEventListener("click", () => this.check());
    this.buttons.stop.addEventListener("click", () => {
      this.stopAsked = true; // if the job is not sent yet, _exec stops it as soon as it is
      python().then((rt) => rt.stop(this.jobId));
    });
    this.buttons.reset.addEventListener("click", () => this.reset());
    this.buttons.edit.addEventListener("click", () => this.toggleEdit());
    // intent: fetch the runtime before the click lands
    const prefetch = () => python().then((rt) => rt.prefetch());
    for (const ev of ["pointerenter", "focus"]) {
      this.buttons.run.addEventListener(ev, prefetch);
      this.buttons.check.addEventListener(ev, prefetch);
    }
    this.root.addEventListener("input", () => {
      prefetch();
      this._save();
    });
    for (const input of this.blanks) {
      input.addEventListener("input", () => this._fit(input));
      input.addEventListener("keydown", (e) => {
        if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) this.run();
      });
    }
    this.editor.addEventListener("keydown", (e) => this._editorKey(e));
  }

  _fit(input) {
    input.size = Math.max(8, input.value.length + 1);
  }

  _editorKey(e) {
    if (e.key === "Tab" && !e.shiftKey) {
      e.preventDefault();
      const { selectionStart: s, selectionEnd: end, value } = this.editor;
      this.editor.value = value.slice(0, s) + "    " + value.slice(end);
      this.editor.selectionStart = this.editor.selectionEnd = s + 4;
      this._save();
    } else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      this.run();
    }
  }

  /** Switch between the blanks and a free editor, which starts from the exercise as filled in
   * (and keeps its own text afterwards). `focus` is false when a reload restores the mode. */
  toggleEdit(on = !this.editing, text = null, { focus = true } = {}) {
    if (on) {
      // read the blanks before switching: program() reads the editor once editing is on
      this.editor.value = text ?? (this.editor.value || this.program().code);
      this.editor.rows = Math.min(40, lineCount(this.editor.value) + 1);
    }
    this.editing = on;
    this.editor.hidden = !on;
    this.exerciseBlock.hidden = on;
    this.testBlock.hidden = on;
    this.buttons.edit.textContent = on ? this.t.blanksMode : this.t.edit;
    if (on && focus) this.editor.focus();
    this._save();
  }

  // ---- persistence ---------------------------------------------------------------------------

  get key() {
    return STORE + this.stem;
  }

  _save() {
    const state = {
      version: this.version,
      blanks: this.blanks.map((b) => b.value),
      editor: this.editing || this.editor.value ? this.editor.value : null,
      editing: Boolean(this.editing),
    };
    saveJSON(this.key, state);
  }

  /** Work saved for an older version of the exercise, kept apart until the learner takes it
   * into the editor or discards it: typing in the new version does not overwrite it. */
  get previousKey() {
    return `${this.key}/previous`;
  }

  _restore() {
    let state = loadJSON(this.key);
    if (state && state.version !== this.version) {
      saveJSON(this.previousKey, state);
      saveJSON(this.key, undefined);
      state = null;
    }
    this._offerPrevious();
    if (!state) return;
    this.blanks.forEach((b, i) => {
      b.value = state.blanks?.[i] ?? "";
      this._fit(b);
    });
    if (state.editor) this.editor.value = state.editor;
    if (state.editing) this.toggleEdit(true, state.editor, { focus: false });
  }

  _offerPrevious() {
    const old = loadJSON(this.previousKey);
    if (!old) return;
    const button = (action, label, then) => {
      const b = el("button", { type: "button", class: "rl-button md-button", "data-action": action }, label);
      b.addEventListener("click", () => {
        then();
        saveJSON(this.previousKey, undefined);
        this._notice("");
      });
      return b;
    };
    const restore = button("restore-old", this.t.restoreOld, () =>
      this.toggleEdit(true, old.editor ?? this._fill(old.blanks ?? [])),
    );
    const discard = button("discard-old", this.t.discardOld, () => {});
    this._notice(this.t.oldVersion, restore, discard);
  }

  /** The original exercise text with old blank values put in, for an old saved state. */
  _fill(values) {
    let i = 0;
    const ex = this.originalExercise.replaceAll(BLANK, () => values[i++] || BLANK);
    return `${ex}\n\n${this.testText}\n`;
  }

  _notice(text, ...extra) {
    this.notice.replaceChildren();
    if (text) this.notice.append(el("span", {}, text), ...extra);
    this.notice.hidden = !text;
  }

  reset() {
    this.generation++;
    if (this.busy) {
      this.stopAsked = true;
      pythonModule?.then((rt) => rt.stop(this.jobId));
    }
    for (const b of this.blanks) {
      b.value = "";
      this._fit(b);
    }
    this.editor.value = "";
    this.toggleEdit(false);
    saveJSON(this.key, undefined); // forget the saved work (toggleEdit just saved it)
    saveJSON(this.previousKey, undefined);
    this.output.replaceChildren();
    this.output.hidden = true;
    this._notice("");
    this.status.textContent = "";
  }

  // ---- running -------------------------------------------------------------------------------

  _write(text, cls) {
    this.output.hidden = false;
    const span = el("span", cls ? { class: cls } : {});
    span.textContent = text;
    this.output.append(span);
  }

  _busy(on, label = "") {
    this.busy = on;
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
      if (p.ready || p.reset || p.error) {
        this.progress.hidden = true;
        return;
      }
      this.progress.hidden = false;
      this.progressLabel.textContent = t.fetching(p.stage, p.loaded, p.total);
      if (p.total) this.progressBar.value = p.loaded / p.total;
      else this.progressBar.removeAttribute("value");
    });
  }

  async _exec(kind) {
    const t = this.t;
    const generation = this.generation;
    this.stopAsked = false;
    this.jobId = null;
    this._busy(true, t.waiting);
    const rt = await python();
    this.output.replaceChildren();
    this.output.hidden = true;
    if (rt.loaded) this.status.textContent = kind === "run" ? t.running : t.checking;
    const unwatch = this._watchProgress(rt);
    const started = { at: 0 };
    const handlers = {
      onStart: () => {
        this.root.dataset.state = "running"; // the code itself runs now (Python is loaded)
        this.progress.hidden = true;
        started.at = performance.now();
        this.status.textContent = kind === "run" ? t.running : t.checking;
      },
      onStdout: (s) => this._write(s),
      onStderr: (s) => this._write(s, "rl-stderr"),
    };
    // Check compares many inputs: it gets at least 20 s
    const limitMs = kind === "run" ? this.timeoutMs : Math.max(this.timeoutMs, 20000);
    const { code, parts } = this.program(kind === "run");
    const job = kind === "run" ? rt.run(code, parts, handlers, limitMs) : rt.check(this.stem, this.name, code, parts, handlers, limitMs);
    this.jobId = job.id;
    if (this.stopAsked) rt.stop(job.id);
    const outcome = await job;
    unwatch();
    this.progress.hidden = true;
    this._busy(false);
    if (generation === this.generation) {
      this._report(kind, outcome, started.at ? Math.round(performance.now() - started.at) : 0, limitMs, rt);
    }
    return outcome;
  }

  _report(kind, outcome, ms, limitMs, rt) {
    const t = this.t;
    if (outcome.timedOut) return this._write(t.timedOut(limitMs / 1000) + "\n", "rl-error");
    if (outcome.stopped) return this._write((outcome.restarted ? t.stopped : t.interrupted) + "\n", "rl-error");
    const failure = outcome.failure;
    if (failure?.kind === "load") {
      return this._write(t.loadFailed(failure.what, failure.message, failure.offline) + "\n", "rl-error");
    }
    if (failure) return this._write(t.exerciseError(failure.message) + "\n", "rl-error");
    if (kind === "check") return this._reportCheck(outcome.result);
    this.status.textContent = outcome.ok ? t.finished(ms) : t.failed;
  }

  _reportCheck(result) {
    const t = this.t;
    if (result.error) {
      this._write(result.error, "rl-stderr");
      this.status.textContent = t.failed;
      return;
    }
    const bad = result.total - result.passed;
    this.status.textContent = `${result.passed}/${result.total}`;
    if (!bad) return this._write(t.checkPassed(result.total) + "\n", "rl-ok");
    this._write(t.checkFailed(bad, result.total) + "\n", "rl-error");
    for (const f of result.failures) {
      const inputs = Object.entries(f.inputs)
        .map(([k, v]) => `  ${k} = ${String(v).replaceAll("\n", "\n    ")}`)
        .join("\n");
      this._write(
        `\n${t.checkCase(f.case)}\n${t.inputs}:\n${inputs}\n${t.expected}: ${f.expected}\n` +
          (f.got ? `${t.got}: ${f.got}\n` : "") +
          `${t.reason}: ${f.reason}\n`,
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

/** Enhance every cell under `root` once. */
export function init(root = document) {
  for (const node of root.querySelectorAll("[data-runner]")) {
    if (node.dataset.runnerReady) continue;
    node.dataset.runnerReady = "1";
    new Cell(node);
  }
}

// Start now (the page is parsed when a module script runs) and on every page Material shows.
init(document);
window.document$?.subscribe(() => init(document));
