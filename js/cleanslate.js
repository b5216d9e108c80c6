// Clean-slate mode: every exercise's expected output, hints and answer (the block the build writes
// after its cell: <div class="rl-after" data-after="ppo/compute_gae" data-version="…">), and its
// drill (the same, with data-what="drill"), stay hidden until the exercise's Check passes, or the
// learner asks to see them. The mode is the learner's,
// kept in localStorage for every page and tab; main.html's head sets <html data-clean-slate> from
// it before the page is drawn, so an answer never flashes, and site.css hides the blocks.

import { el, isRecord, loadJSON, mountAll, STORAGE, saveJSON } from "./dom.js";
import { strings } from "./i18n.js";

const on = () => loadJSON(STORAGE.settings, {}, isRecord).cleanSlate === true;

/** Switch the mode for every page (and tell this page's blocks). */
function setMode(cleanSlate) {
  saveJSON(STORAGE.settings, { ...loadJSON(STORAGE.settings, {}, isRecord), cleanSlate });
  show();
}

/** The page as the mode says: the root's attribute, and every block's bar. */
function show() {
  document.documentElement.toggleAttribute("data-clean-slate", on());
  document.dispatchEvent(new Event("rl-clean-slate"));
}

class After {
  constructor(root) {
    this.root = root;
    this.t = strings();
    this.id = root.dataset.after;
    this.version = root.dataset.version;
    this.box = el("input", { type: "checkbox", "data-action": "clean-slate" });
    this.box.addEventListener("change", () => setMode(this.box.checked));
    const label = el("label", { class: "rl-clean-slate-switch" });
    label.append(this.box, ` ${this.t.cleanSlate.mode}`);
    // the block after a cell, or a drill (data-what="drill": it shows the answer's code)
    const note = root.dataset.what === "drill" ? this.t.cleanSlate.drillHidden : this.t.cleanSlate.hidden;
    this.hiddenNote = el("span", { class: "rl-clean-slate-note" }, note);
    this.showButton = el(
      "button",
      { type: "button", class: "md-button", "data-action": "show-answers" },
      this.t.cleanSlate.show,
    );
    this.showButton.addEventListener("click", () => {
      saveJSON(STORAGE.revealed + this.id, { version: this.version });
      this.render();
    });
    this.bar = el("div", { class: "rl-clean-slate" });
    this.bar.append(label, this.hiddenNote, this.showButton);
    root.before(this.bar);
    // the mode switched here or in another tab, or this exercise's Check passed (js/runner.js)
    document.addEventListener("rl-clean-slate", () => this.render());
    document.addEventListener("rl-solved", (e) => e.detail?.id === this.id && this.render());
    this.render();
  }

  /** Shown: the mode is off, or this exercise's current version passed Check or was asked for. */
  get shown() {
    const ofThisVersion = (key) => loadJSON(key, null, isRecord)?.version === this.version;
    return !on() || ofThisVersion(STORAGE.solved + this.id) || ofThisVersion(STORAGE.revealed + this.id);
  }

  render() {
    const shown = this.shown;
    this.box.checked = on();
    this.root.toggleAttribute("data-shown", shown);
    this.hiddenNote.hidden = shown;
    this.showButton.hidden = shown;
  }
}

addEventListener("storage", (e) => e.key === STORAGE.settings && show()); // another tab switched it

/** Start every exercise's block, now and on every page Material shows. */
export const init = mountAll("after", After);
