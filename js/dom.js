// Small helpers every widget shares: building elements (text only ever through textContent),
// keeping JSON in localStorage without ever losing what is there, and an output area that takes
// any amount of text without blocking the page.

/** A new element with string attributes and, optionally, text. */
export function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text) node.textContent = text;
  return node;
}

let config = null;

/** The site's configuration, as the build wrote it into <script id="rl-config"> (overrides/main.html). */
export function siteConfig() {
  config ??= JSON.parse(document.getElementById("rl-config")?.textContent || "{}");
  return config;
}

// ---- storage ---------------------------------------------------------------------------------

/**
 * What is stored under `key`: `{value}` (parsed, and accepted by `valid`), `{missing: true}`,
 * or `{unreadable: raw}` when it is not JSON or not what `valid` accepts. An unreadable value is
 * moved aside to `<key>/unreadable/<time>` (never overwritten, never lost) before this returns,
 * so the widget can start afresh and say so.
 */
export function readJSON(key, valid = () => true) {
  let raw;
  try {
    raw = localStorage.getItem(key);
  } catch {
    return { missing: true }; // storage disabled: as if nothing were saved
  }
  if (raw === null) return { missing: true };
  try {
    const value = JSON.parse(raw);
    if (valid(value)) return { value };
  } catch {
    /* not JSON: set aside below */
  }
  try {
    localStorage.setItem(`${key}${ASIDE.unreadable}${Date.now()}`, raw);
    localStorage.removeItem(key);
  } catch {
    /* cannot even set it aside (storage full): leave it where it is */
  }
  return { unreadable: raw };
}

/** The JSON stored under `key` and accepted by `valid`, or `fallback`. */
export function loadJSON(key, fallback = null, valid = () => true) {
  const read = readJSON(key, valid);
  return "value" in read && read.value !== null ? read.value : fallback;
}

/** Store `value` as JSON under `key` (`undefined` removes it). False when storage refused it
 * (full, or disabled): the caller tells the learner their work was not saved. */
export function saveJSON(key, value) {
  try {
    if (value === undefined) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(value));
    return true;
  } catch {
    return false;
  }
}

// ---- head: the storage prefix. overrides/main.html runs this block as it is in the page's <head>
// (site_build/plugin.py inlines it), to read the clean-slate setting before the page is drawn:
// plain script between these two lines, no imports, no exports.
// Each site's keys apart: a site at the origin's root keeps "rl-ops/", one under a path ("/proj/",
// a GitHub Pages project site) "rl-ops@/proj/", so that two sites on one origin never read or
// overwrite each other's work.
const LEGACY = "rl-ops/";
const prefixOf = (sitePath) => (sitePath === "/" ? LEGACY : `rl-ops@${sitePath}`);
const SETTINGS = "settings"; // the one key of the learner's settings: {cleanSlate: bool} (cleanslate.js)
// ---- end of head

const SITE_PATH = globalThis.location ? new URL(siteConfig().base ?? "./", location.href).pathname : "/"; // "/" off a page
export const PREFIX = prefixOf(SITE_PATH);
// A site under a path copies, once, what it kept under "rl-ops/" before its keys had its path
// (nothing is lost; the copy is left where it was).
try {
  if (PREFIX !== LEGACY && localStorage.getItem(`${PREFIX}copied`) === null) {
    for (const key of Object.keys(localStorage).filter((k) => k.startsWith(LEGACY))) {
      if (localStorage.getItem(PREFIX + key.slice(LEGACY.length)) === null) {
        localStorage.setItem(PREFIX + key.slice(LEGACY.length), localStorage.getItem(key));
      }
    }
    localStorage.setItem(`${PREFIX}copied`, "1");
  }
} catch {
  /* storage disabled or full: the widgets say so when they save */
}

/** Every localStorage key the site writes, without the prefix (+ exercise id, unless said
 * otherwise): the one home of their shapes (backup.js reads them without the prefix too). */
export const KEYS = {
  cell: "cell/", // a cell's work: {version, blanks, editor, editing} (runner.js); + ASIDE.previous
  solved: "solved/", // {version} once the exercise passed Check (runner.js; progress.js reads)
  drill: "drill/", // a drill's record: {version, best, attempts} (drill.js; progress.js reads);
  // one of an older version is kept under + ASIDE.version + <version> when the current one starts
  drillTyped: "drill/typed/", // what was typed into a drill's mask: {mask, answers}
  drillMisses: "drill/misses", // the one key: {token text: times missed}, every drill's
  settings: SETTINGS, // the one key (cleanslate.js; main.html's head reads it too)
  revealed: "revealed/", // {version}: the learner asked to see an exercise's answer (cleanslate.js)
  review: "review/", // {version, card}: the exercise's review schedule (review.js; progress.js reads)
};

/** What a key's suffix keeps beside its value (key + suffix): a cell's saved work of older
 * versions, a drill's record of an older version (+ the version), a value that was not readable
 * (+ the time), this browser's or an imported file's record that lost a merge (+ the time). */
export const ASIDE = { previous: "/previous", version: "/v/", unreadable: "/unreadable/", imported: "/imported/" };

/** Every localStorage key the site writes, with this site's prefix. */
export const STORAGE = Object.fromEntries(Object.entries(KEYS).map(([name, key]) => [name, PREFIX + key]));

/** A plain object (not null, not an array). */
export const isRecord = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/** Saved work of a cell: {version, blanks: [strings], editor: string|null, editing: bool}. */
export const validWork = (v) =>
  isRecord(v) &&
  typeof v.version === "string" &&
  Array.isArray(v.blanks) &&
  v.blanks.every((b) => typeof b === "string") &&
  (v.editor == null || typeof v.editor === "string");

/** The tokens missed in drills: {token text: times missed}. */
export const validMisses = (v) => isRecord(v) && Object.values(v).every((n) => Number.isSafeInteger(n) && n >= 0);

/** A drill's record as stored: {version, best, attempts}, a count and a per cent. (A record
 * without a version was written before records had one: it stands for the current version.) */
export const validDrillRecord = (v) =>
  isRecord(v) &&
  (v.version === undefined || typeof v.version === "string") &&
  Number.isSafeInteger(v.attempts) &&
  v.attempts >= 0 &&
  (v.best === null || (Number.isFinite(v.best) && v.best >= 0 && v.best <= 100));

/** The drill record of `version` under `key`, or null (none, or one of another version). */
export function drillRecord(key, version) {
  const record = loadJSON(key, null, validDrillRecord);
  return record && (record.version ?? version) === version ? record : null;
}

/**
 * Give every element under `root` that has `data-<key>` one `Widget`, once, now and on every page
 * Material shows (`document$`): safe to call twice. Returns the function that mounts under a root.
 */
export function mountAll(key, Widget) {
  const ready = `${key}Ready`;
  const attr = `data-${key}`;
  const mount = (root = document) => {
    for (const node of root.querySelectorAll(`[${attr}]`)) {
      if (node.dataset[ready]) continue;
      node.dataset[ready] = "1";
      new Widget(node);
    }
  };
  mount(document); // the page is parsed when a module script runs
  window.document$?.subscribe(() => mount(document));
  return mount;
}

// ---- output ----------------------------------------------------------------------------------

const PAINT_MS = 100; // how often new output is written into the page
const PAINT_CHARS = 8_000; // at most this much per paint: the rest waits for the next one

/**
 * A <pre> that takes text at any rate and writes it into the page a few times a second, one
 * element per stretch of the same kind, so a flood of output never blocks the page. (The worker
 * caps what one run sends.)
 */
export class OutputView {
  constructor(pre) {
    this.pre = pre;
    this.pending = [];
    this.timer = null;
  }

  /** Queue `text`; `cls` marks its kind ("rl-stderr", "rl-error", …). */
  write(text, cls = "") {
    if (!text) return;
    const last = this.pending[this.pending.length - 1];
    if (last && last[0] === cls) last[1] += text;
    else this.pending.push([cls, text]);
    this.timer ??= setTimeout(() => this.flush(), PAINT_MS);
  }

  /** Write what is queued (up to PAINT_CHARS now, the rest at the next paint; `all`: now). */
  flush({ all = false } = {}) {
    clearTimeout(this.timer);
    this.timer = null;
    if (!this.pending.length) return;
    this.pre.hidden = false;
    let budget = all ? Infinity : PAINT_CHARS;
    while (this.pending.length && budget > 0) {
      const [cls, whole] = this.pending[0];
      const text = whole.slice(0, budget);
      budget -= text.length;
      if (text.length < whole.length) this.pending[0][1] = whole.slice(text.length);
      else this.pending.shift();
      const last = this.pre.lastElementChild;
      if (last && (last.getAttribute("class") ?? "") === cls) {
        last.append(text);
        continue;
      }
      const span = el("span", cls ? { class: cls } : {});
      span.textContent = text;
      this.pre.append(span);
    }
    if (this.pending.length) this.timer = setTimeout(() => this.flush(), PAINT_MS);
  }

  /** Paint everything queued, a paint at a time; resolves when all of it is in the page. */
  async drain() {
    while (this.pending.length) {
      this.flush();
      if (this.pending.length) await new Promise((r) => setTimeout(r, PAINT_MS));
    }
  }

  clear() {
    clearTimeout(this.timer);
    this.timer = null;
    this.pending = [];
    this.pre.replaceChildren();
    this.pre.hidden = true;
  }

  get text() {
    return this.pre.textContent + this.pending.map(([, t]) => t).join("");
  }
}
