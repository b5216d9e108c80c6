// The MLM random-masking drill: the answer code with random tokens blanked, typed back, checked.
//
// The build (overrides/hooks/drill.py) marks every maskable token in the highlighted code as
// <span class="rl-slot" data-slot-index="i"> and lists them in a JSON script; this module parses no
// code. A mask is a pure function of its seed, so the seed in the URL brings the same mask back
// and can be shared. Exact answers are decided here at once; other answers can be accepted "by
// meaning" by the Python worker, loaded only then.

import {
  drillRecord,
  el,
  isRecord,
  loadJSON,
  mountAll,
  STORAGE,
  saveJSON,
  validDrillRecord,
  validMisses,
} from "./dom.js";
import { strings } from "./i18n.js";
import { grade, practised } from "./review.js";
import { LIMITS, start } from "./runtime.js";
import { JobView } from "./view.js";

const RATIOS = [0.1, 0.15, 0.2, 0.3, 0.5];

// ---- seeded randomness -----------------------------------------------------------------------

/** mulberry32: a small, fast PRNG with 32-bit state; enough for picking slots. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function freshSeed() {
  return crypto.getRandomValues(new Uint32Array(1))[0];
}

/** Which `m` of the `candidates` (slot indices) a seed masks: a seeded partial shuffle. */
function pick(seed, candidates, m) {
  const next = rng(seed);
  const pool = [...candidates];
  for (let i = 0; i < m; i++) {
    const j = i + Math.floor(next() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return pool.slice(0, m).sort((a, b) => a - b);
}

const normalise = (s) => s.trim().replace(/\s+/g, " ");

const missed = (misses, text) => (Object.hasOwn(misses, text) ? misses[text] : 0);

// ---- one drill -------------------------------------------------------------------------------

class Drill {
  constructor(root) {
    this.root = root;
    this.t = strings();
    this.data = JSON.parse(root.querySelector("script.rl-drill-data").textContent);
    this.id = this.data.id;
    this.pre = root.querySelector("pre");
    this.code = this.pre.querySelector("code");
    this.spans = [...this.code.querySelectorAll(".rl-slot")];
    this.originals = this.spans.map((s) => s.cloneNode(true));
    this.mode = "default";
    this.ratio = 0.15;
    this.seed = 0;
    this.inputs = [];
    // where the learner is with the mask shown: "fresh" (not in the URL yet), "kept" (in the URL:
    // they started on it), "judging" (a check waits for Python to decide answers by meaning),
    // "checked" (its first check is in the record), "revealed"
    this.phase = "fresh";
    this._buildUi();
    const fromUrl = this._readUrl();
    if (fromUrl) Object.assign(this, fromUrl);
    this.modeButton.setAttribute("aria-pressed", String(this.mode === "extended"));
    this.select.value = String(Math.round(this.ratio * 100));
    // the first mask goes into the URL once the learner starts on it (or came from the URL)
    this.apply(fromUrl ? this.seed : this._weakSeed(), { focus: false, keep: Boolean(fromUrl) });
    // what was typed into this very mask comes back; a page opened without it keeps it stored
    if (fromUrl) this._restoreTyped(loadJSON(this.typedKey, null, isRecord));
    // the home page's review list links here (?review=<id>): this drill, its weak tokens masked
    if (new URLSearchParams(location.search).get("review") === this.id) {
      // from its heading (the exercise's name, just above it), below the sticky header (site.css)
      // (past the clean-slate switch js/cleanslate.js puts between them)
      let heading = (this.root.closest(".rl-after") ?? this.root).previousElementSibling;
      while (heading?.matches(".rl-clean-slate")) heading = heading.previousElementSibling;
      (heading?.matches("h2, h3") ? heading : this.root).scrollIntoView({ block: "start" });
      this.inputs[0]?.focus({ preventScroll: true });
    }
  }

  get candidates() {
    return this.data.slots.map((s, i) => (this.mode === "extended" || !s.extended ? i : -1)).filter((i) => i >= 0);
  }

  get masked() {
    return Math.max(1, Math.round(this.candidates.length * this.ratio));
  }

  // ---- interface -----------------------------------------------------------------------------

  _buildUi() {
    const t = this.t;
    const bar = el("div", { class: "rl-drill-bar" });
    this.stats = el("span", { class: "rl-drill-stats", "data-drill-stats": "", role: "status", "aria-live": "polite" });
    this.select = el("select", { "aria-label": t.drill.ratio });
    for (const r of RATIOS) {
      const pct = Math.round(r * 100);
      const option = el("option", { value: String(pct) }, `${pct}%`);
      this.select.append(option);
    }
    this.modeButton = el(
      "button",
      { type: "button", class: "md-button", "data-action": "mode", "aria-pressed": "false", title: t.drill.modeHelp },
      t.drill.extended,
    );
    const actions = [
      ["refresh", t.drill.refresh],
      ["check", t.check],
      ["reveal", t.drill.reveal],
      ["retry", t.drill.retry],
    ].map(([action, label]) => el("button", { type: "button", class: "md-button", "data-action": action }, label));
    [this.refreshButton, this.checkButton, this.revealButton, this.retryButton] = actions;
    this.checkButton.classList.add("md-button--primary");
    bar.append(this.stats, this.select, this.modeButton, ...actions);
    this.seedLine = el("div", { class: "rl-drill-meta" });
    this.banner = el("div", { class: "rl-drill-banner", hidden: "", role: "status" });
    // the note under the drill is the view's status line: the drill hands it what to say
    const note = el("div", { class: "rl-drill-note", hidden: "", "aria-live": "polite" });
    this.root.prepend(bar);
    // what a wrong slot's aria-describedby points to (read by screen readers; not shown)
    this.wrongHelp = el("span", { id: `rl-wrong-${this.data.id.replace("/", "-")}`, hidden: "" }, t.drill.wrongSlot);
    this.root.append(this.banner, note, this.seedLine, this.wrongHelp);
    // Python's checks by meaning: the Check button waits for them, the note says they are running
    this.view = new JobView(t, { root: this.root, starts: [this.checkButton], status: note });

    this.select.addEventListener("change", () => {
      this.ratio = Number(this.select.value) / 100;
      this.newMask(this._weakSeed());
    });
    this.modeButton.addEventListener("click", () => {
      this.mode = this.mode === "extended" ? "default" : "extended";
      this.modeButton.setAttribute("aria-pressed", String(this.mode === "extended"));
      this.newMask(this._weakSeed());
    });
    this.refreshButton.addEventListener("click", () => this.newMask(this._weakSeed()));
    this.checkButton.addEventListener("click", () => this.check());
    this.revealButton.addEventListener("click", () => this.reveal());
    this.retryButton.addEventListener("click", () => this.newMask(this.seed));
    this.root.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        this.check();
      }
    });
  }

  _statsText(score) {
    const t = this.t;
    const base = t.drill.stats({ slots: this.candidates.length, masked: this.inputs.length });
    return score
      ? `${base} | ${t.drill.score({ ...score, percent: Math.round((100 * score.right) / score.total) })}`
      : base;
  }

  // ---- masking -------------------------------------------------------------------------------

  /** Among a few fresh seeds, the one whose mask holds the most tokens this learner has missed. */
  _weakSeed() {
    const misses = loadJSON(STORAGE.drillMisses, {}, validMisses);
    const weight = (seed) =>
      pick(seed, this.candidates, this.masked).reduce((w, i) => w + missed(misses, this.data.slots[i].text), 0);
    let best = freshSeed();
    if (!Object.keys(misses).length) return best;
    let bestWeight = weight(best);
    for (let k = 0; k < 24; k++) {
      const s = freshSeed();
      const w = weight(s);
      if (w > bestWeight) [best, bestWeight] = [s, w];
    }
    return best;
  }

  /** A mask the learner asked for (refresh, retry, ratio, mode): empty blanks, and the answers
   * typed into the previous mask are forgotten. */
  newMask(seed) {
    this.apply(seed);
    this._saveTyped();
  }

  /** Show the code with the mask of `seed`: chosen slots become empty inputs. `keep` puts the
   * seed in the URL now; otherwise the first keystroke does. */
  apply(seed, { focus = true, keep = true } = {}) {
    this.seed = seed >>> 0;
    const abandoned = this.phase === "judging";
    this.view.drop(); // a check of the previous mask still waiting on Python is dropped
    this.spans = this.spans.map((span, i) => {
      const fresh = this.originals[i].cloneNode(true);
      span.replaceWith(fresh);
      return fresh;
    });
    const chosen = pick(this.seed, this.candidates, this.masked);
    this.inputs = chosen.map((slot, k) => {
      const info = this.data.slots[slot];
      const input = el("input", {
        type: "text",
        class: "rl-blank",
        "data-slot": String(slot),
        spellcheck: "false",
        autocomplete: "off",
        autocapitalize: "off",
        size: "6",
        "aria-label": this.t.drill.blankLabel({ k: k + 1, n: chosen.length, line: info.line }),
      });
      input.addEventListener("input", () => {
        if (this.phase === "fresh") this._writeUrl();
        this._fit(input);
        input.classList.remove("rl-right", "rl-wrong", "rl-equivalent");
        this._saveTyped();
      });
      input.addEventListener("keydown", (e) => {
        if (e.key === "Enter" && !e.ctrlKey && !e.metaKey) {
          e.preventDefault();
          this._move(k, e.shiftKey ? -1 : 1);
        }
      });
      const span = this.spans[slot];
      span.replaceChildren(input);
      return input;
    });
    this.stats.textContent = this._statsText();
    this.stats.removeAttribute("data-band");
    this.banner.hidden = true;
    this.view.say(abandoned ? this.t.drill.notRecorded : "");
    this.phase = "fresh";
    if (keep) this._writeUrl();
    this._showMeta();
    if (focus) this.inputs[0]?.focus();
  }

  _fit(input) {
    input.size = Math.max(6, input.value.length + 1); // grows with the typing, never the answer
  }

  // ---- typed answers survive a reload: {mask, answers: {slot: text}} per drill ----------------

  get typedKey() {
    return STORAGE.drillTyped + this.data.id;
  }

  _saveTyped() {
    const answers = Object.fromEntries(this.inputs.filter((i) => i.value).map((i) => [i.dataset.slot, i.value]));
    saveJSON(this.typedKey, Object.keys(answers).length ? { mask: this.maskName, answers } : undefined);
  }

  /** Put back what was typed into this very mask (seed, ratio and mode from the URL). */
  _restoreTyped(saved) {
    if (!saved || saved.mask !== this.maskName) return;
    for (const input of this.inputs) {
      const text = saved.answers?.[input.dataset.slot];
      if (typeof text === "string") {
        input.value = text;
        this._fit(input);
      }
    }
  }

  _move(k, step) {
    const next = this.inputs[k + step];
    if (next) next.focus();
    else if (step > 0) this.checkButton.focus();
  }

  // ---- URL: ?drill-<chapter>-<name>=<seed>.<ratio%>.<d|x> -------------------------------------

  get urlKey() {
    return `drill-${this.id.replace("/", "-")}`;
  }

  _readUrl() {
    const value = new URLSearchParams(location.search).get(this.urlKey);
    const m = /^([0-9a-f]{1,8})\.(\d+)\.([dx])$/.exec(value || "");
    if (!m || !RATIOS.includes(Number(m[2]) / 100)) return null;
    return { seed: parseInt(m[1], 16), ratio: Number(m[2]) / 100, mode: m[3] === "x" ? "extended" : "default" };
  }

  /** The mask in a few characters: seed (hex), ratio (%), mode. Names it in the URL and in storage. */
  get maskName() {
    return `${this.seed.toString(16)}.${Math.round(this.ratio * 100)}.${this.mode === "extended" ? "x" : "d"}`;
  }

  _writeUrl() {
    const url = new URL(location.href);
    url.searchParams.set(this.urlKey, this.maskName);
    history.replaceState(history.state, "", url);
    if (this.phase === "fresh") this.phase = "kept";
  }

  _showMeta() {
    const record = drillRecord(STORAGE.drill + this.data.id, this.data.version) ?? { best: null, attempts: 0 };
    this.seedLine.replaceChildren();
    const seed = el("span", { class: "rl-drill-seed" }, this.t.drill.seed({ seed: this.seed.toString(16) }));
    const rec = el(
      "span",
      {},
      record.attempts ? this.t.drill.record({ best: record.best, count: record.attempts }) : this.t.drill.noRecord,
    );
    const reset = el(
      "button",
      { type: "button", class: "rl-linkbutton", "data-action": "reset-record" },
      this.t.drill.resetRecord,
    );
    reset.addEventListener("click", () => {
      saveJSON(STORAGE.drill + this.data.id, undefined);
      const misses = loadJSON(STORAGE.drillMisses, {}, validMisses);
      for (const s of this.data.slots) delete misses[s.text];
      saveJSON(STORAGE.drillMisses, misses);
      this._showMeta();
    });
    this.seedLine.append(seed, " · ", rec, " ", reset);
  }

  // ---- checking ------------------------------------------------------------------------------

  async check() {
    // one check at a time: clicks and Ctrl+Enter while Python decides are not new attempts
    if (this.phase === "revealed" || !this.inputs.length || this.view.busy) return;
    const t = this.t;
    const results = this.inputs.map((input) => {
      const want = this.data.slots[Number(input.dataset.slot)].text;
      return normalise(input.value) === normalise(want);
    });
    this._mark(results, new Set());
    const wrong = this.inputs.filter((_, k) => !results[k] && normalise(this.inputs[k].value) !== "");
    if (!wrong.length) return this._record(results);
    // answers that differ in text may still mean the same: ask Python, one answer at a time, on
    // Check's own inputs (defaults left out too: a typed default that differs is wrong). Moving on
    // meanwhile (refresh, retry, reveal) drops the attempt, and says so (apply, reveal)
    const before = this.phase;
    this.phase = "judging";
    const equivalent = new Set();
    const looping = [];
    for (const [k, input] of wrong.entries()) {
      const job = start("check", { exercise: this.data.id, code: this._program(input), parts: null });
      const asking = t.drill.asking({ k: k + 1, n: wrong.length });
      const outcome = await this.view.follow(job, { labels: { queued: asking, running: asking } });
      if (outcome === null) return; // the learner moved on to another mask meanwhile
      if (outcome.state === "timed-out") {
        looping.push(input); // an answer that never ends means nothing the same
        continue;
      }
      if (outcome.state !== "done") {
        this.phase = before;
        this.view.say(t.drill.noPython);
        return this._record(results);
      }
      const r = outcome.result;
      if (!r.error && r.total > 0 && r.passed === r.total) equivalent.add(input);
    }
    this.phase = before;
    const final = this.inputs.map((input, k) => results[k] || equivalent.has(input));
    this._record(final);
    this._mark(final, equivalent);
    const answers = (inputs) => inputs.map((i) => i.value.trim()).join(t.listSeparator);
    const said = [];
    if (equivalent.size) said.push(t.drill.equivalent({ answers: answers([...equivalent]) }));
    else if (looping.length < wrong.length) said.push(t.drill.notEquivalent);
    if (looping.length) said.push(t.drill.looping({ answers: answers(looping), seconds: LIMITS.check.limitMs / 1000 }));
    this.view.say(said.join(" "));
  }

  /** The program the build shipped, with `input`'s slot holding the learner's text. */
  _program(input) {
    const { code, imports, slots } = this.data;
    const slot = slots[Number(input.dataset.slot)];
    return `${imports}\n\n${code.slice(0, slot.start)}${input.value}${code.slice(slot.end)}`;
  }

  _mark(results, equivalent) {
    let right = 0;
    this.inputs.forEach((input, k) => {
      input.classList.toggle("rl-right", results[k] && !equivalent.has(input));
      input.classList.toggle("rl-equivalent", equivalent.has(input));
      input.classList.toggle("rl-wrong", !results[k]);
      input.setAttribute("aria-invalid", String(!results[k]));
      if (results[k]) input.removeAttribute("aria-describedby");
      else input.setAttribute("aria-describedby", this.wrongHelp.id);
      if (results[k]) right++;
    });
    const total = this.inputs.length;
    const pct = Math.round((100 * right) / total);
    this.stats.textContent = this._statsText({ right, total });
    this.stats.dataset.band = pct >= 80 ? "high" : pct >= 50 ? "mid" : "low";
    this.banner.hidden = right !== total;
    this.banner.textContent = right === total ? this.t.drill.allRight : "";
    return right;
  }

  /** Count this mask's first check: one attempt, its misses, and maybe a new best. A second
   * check of the same mask (after fixing an answer) changes nothing in the record. */
  _record(results) {
    if (this.phase === "checked") return;
    this._writeUrl(); // a checked mask is one the learner started on
    this.phase = "checked";
    const misses = loadJSON(STORAGE.drillMisses, {}, validMisses);
    this.inputs.forEach((input, k) => {
      if (!results[k]) {
        const text = this.data.slots[Number(input.dataset.slot)].text;
        misses[text] = missed(misses, text) + 1;
      }
    });
    saveJSON(STORAGE.drillMisses, misses);
    const key = STORAGE.drill + this.data.id;
    const { version } = this.data;
    const stored = loadJSON(key, null, validDrillRecord);
    // an older version's record is kept aside, under its version, and this version's starts
    if (stored?.version && stored.version !== version) saveJSON(`${key}/v/${stored.version}`, stored);
    const record = drillRecord(key, version) ?? { best: null, attempts: 0 };
    const pct = Math.round((100 * results.filter(Boolean).length) / results.length);
    saveJSON(key, { version, best: Math.max(record.best ?? 0, pct), attempts: record.attempts + 1 });
    this._showMeta();
    // a review when the exercise is due; a missed token makes it an item (js/review.js)
    practised(this.id, version, grade(pct), { create: pct < 100 });
  }

  /** Put every answer back as plain text: the code reads whole again. */
  reveal() {
    const abandoned = this.phase === "judging";
    for (const input of this.inputs) {
      const slot = Number(input.dataset.slot);
      const shown = el("span", { class: "rl-revealed" }, this.data.slots[slot].text);
      input.replaceWith(shown);
    }
    this.inputs = [];
    this.phase = "revealed";
    this.view.drop(); // the attempt is over: a check still waiting on Python is dropped
    this.banner.hidden = true;
    this.view.say(abandoned ? this.t.drill.notRecorded : "");
  }
}

/** Start every drill cell on the page, now and on every page Material shows. */
export const init = mountAll("drill", Drill);
