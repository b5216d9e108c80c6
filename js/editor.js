// Edit mode's code editor: a plain <textarea> first, prism-code-editor once a learner opens Edit.
//
// The textarea works with nothing downloaded (and offline). The first Edit fetches
// prism-code-editor (npm, served as the package ships it: site_build/es_modules.py) and puts it
// in the textarea's place: Python highlighting, line numbers, indentation kept on Enter and added
// after ":", Tab / Shift+Tab indent the selected lines, Ctrl+/ comments, brackets and quotes
// closed, undo history. If it cannot be fetched the textarea stays, with what was typed.
//
// Keys, the same in both (js/i18n.js says them under the editor): Tab indents; Esc, then Tab
// or Shift+Tab, leaves the editor (no keyboard trap); Ctrl+Enter (Cmd+Enter) runs.

import { el } from "./dom.js";
import { Fault } from "./job.js";

const VENDOR = new URL("../prism-code-editor/", import.meta.url);
// what this module loads of prism-code-editor: the core, its commands, Python's grammar
// (highlighting) and behaviour (comments, indenting), the layout. The build serves these and what
// they import (site_build/plugin.py reads this list)
export const VENDOR_FILES = [
  "index.js",
  "extensions/commands/index.js",
  "prism/languages/python.js",
  "languages/python.js",
  "layout.css",
];
const INDENT = "    ";
const MAX_ROWS = 40; // the plain textarea grows with its text up to this many rows

function stylesheet(href) {
  const have = document.querySelector(`link[href="${href}"]`);
  if (have) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const link = el("link", { rel: "stylesheet", href: String(href) });
    link.onload = resolve;
    link.onerror = () => reject(new Fault("editor-style", { href }));
    document.head.append(link);
  });
}

let library = null;

/** prism-code-editor's modules and styles, fetched once per page. */
function loadLibrary() {
  library ??= Promise.all([
    ...VENDOR_FILES.map((name) => {
      const url = new URL(name, VENDOR);
      return name.endsWith(".css") ? stylesheet(url) : import(url.href);
    }),
    stylesheet(new URL("../stylesheets/editor.css", import.meta.url)),
  ]).then(([core, commands]) => ({ core, commands }));
  library.catch(() => (library = null)); // offline now: the next Edit tries again
  return library;
}

export class Editor {
  /**
   * @param {{label: string, describedBy: string, onRun: () => void}} options
   *   label: the editor's accessible name; describedBy: the id of the line that says its keys
   */
  constructor({ label, describedBy, onRun }) {
    this.onRun = onRun;
    this.attrs = { "aria-label": label, "aria-describedby": describedBy };
    this.textarea = el("textarea", { class: "rl-editor-plain", spellcheck: "false", ...this.attrs });
    this.root = el("div", { class: "rl-editor", hidden: "" });
    this.root.append(this.textarea);
    this.code = null; // the prism-code-editor, once it is in place
    this.leaving = false; // Esc was pressed: the next Tab leaves
    // capture: these keys are decided here, before either editor handles them
    this.root.addEventListener("keydown", (e) => this._key(e), true);
    this.textarea.addEventListener("input", () => this._fit());
  }

  get value() {
    return this.code ? this.code.value : this.textarea.value;
  }

  set value(text) {
    if (this.code) this.code.setOptions({ value: text });
    else this.textarea.value = text;
    this._fit();
  }

  get hidden() {
    return this.root.hidden;
  }

  set hidden(on) {
    this.root.hidden = on;
  }

  focus() {
    (this.code?.textarea ?? this.textarea).focus();
  }

  _fit() {
    if (!this.code) this.textarea.rows = Math.min(MAX_ROWS, this.textarea.value.split("\n").length + 1);
  }

  _key(e) {
    if (e.key === "Escape") {
      this.leaving = true;
      e.stopPropagation(); // prism-code-editor would blur: focus stays, and Tab moves on from here
      return;
    }
    if (["Shift", "Control", "Alt", "Meta"].includes(e.key)) return; // Shift+Tab leaves too
    const leave = this.leaving;
    this.leaving = false;
    if (e.key === "Tab" && leave) {
      e.stopPropagation(); // not an indent: the browser moves the focus on
    } else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      e.stopPropagation(); // (prism-code-editor's Ctrl+Enter would insert a line)
      this.onRun();
    } else if (e.key === "Tab" && !e.shiftKey && !this.code) {
      e.preventDefault(); // the plain textarea: Tab inserts an indent (undoably where it can)
      if (!document.execCommand?.("insertText", false, INDENT)) {
        const { selectionStart: start, selectionEnd: end } = this.textarea;
        this.textarea.setRangeText(INDENT, start, end, "end");
        this.textarea.dispatchEvent(new Event("input", { bubbles: true }));
      }
    }
  }

  /** Put prism-code-editor in the textarea's place (once). False when it could not be loaded:
   * the textarea stays. */
  async enhance() {
    if (this.code) return true;
    let lib;
    try {
      lib = await loadLibrary();
    } catch {
      return false;
    }
    if (this.code) return true; // two calls raced
    const { createEditor } = lib.core;
    const { editorCommands, editHistory, defaultKeymap } = lib.commands;
    const focused = document.activeElement === this.textarea;
    const { selectionStart, selectionEnd } = this.textarea;
    const code = createEditor(
      null,
      { language: "python", tabSize: 4, insertSpaces: true, value: this.textarea.value },
      editorCommands(defaultKeymap),
      editHistory(),
    );
    for (const [k, v] of Object.entries(this.attrs)) code.textarea.setAttribute(k, v);
    code.textarea.setAttribute("aria-multiline", "true");
    this.textarea.replaceWith(code.container);
    this.code = code;
    if (focused) {
      // the textarea it replaces had the focus in the same place: nothing to scroll to (and the
      // reader may have scrolled away while the library loaded)
      code.textarea.focus({ preventScroll: true });
      code.textarea.setSelectionRange(selectionStart, selectionEnd);
    }
    return true;
  }
}
