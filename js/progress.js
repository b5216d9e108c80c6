// The home page's progress table: per chapter, how many exercises passed Check in this browser
// and the drills' best scores, all read from localStorage (nothing leaves the browser but as a
// file the learner saves), with a reset, an export and import of everything (js/backup.js, loaded
// when asked for) and the exercises due for review today (js/review.js). Markup (written by the
// site build, `<!-- rl:progress -->`): <div data-progress><script class="rl-progress-data">
// [{href, title, exercises: [{id, title, version}]}]</script></div>.
// Only records of an exercise's current version count: older ones are kept, not counted.

import { drillRecord, el, isRecord, loadJSON, mountAll, PREFIX, STORAGE, saveJSON } from "./dom.js";
import { day, strings } from "./i18n.js";
import { isDue, scheduled } from "./review.js";

const solved = ({ id, version }) => loadJSON(STORAGE.solved + id, null, isRecord)?.version === version;
const drillBest = ({ id, version }) => drillRecord(STORAGE.drill + id, version)?.best ?? null;

class Progress {
  constructor(root) {
    this.t = strings();
    this.chapters = JSON.parse(root.querySelector("script.rl-progress-data").textContent);
    this.table = el("table", { class: "rl-progress-table" });
    this.resetButton = el(
      "button",
      { type: "button", class: "md-button", "data-action": "reset-progress" },
      this.t.progress.reset,
    );
    this.resetButton.addEventListener("click", () => this.reset());
    // progress that moves (js/backup.js): one file out, and one merged in
    const button = (action, text) => el("button", { type: "button", class: "md-button", "data-action": action }, text);
    const exportButton = button("export-progress", this.t.progress.export);
    exportButton.addEventListener("click", () => this.download());
    const importButton = button("import-progress", this.t.progress.import);
    this.file = el("input", { type: "file", accept: ".json,application/json", hidden: "", "data-import": "" });
    importButton.addEventListener("click", () => this.file.click());
    this.file.addEventListener("change", () => this.upload(this.file.files[0]));
    this.note = el("p", { class: "rl-progress-note", role: "status" });
    const buttons = el("div", { class: "rl-progress-buttons" });
    buttons.append(this.resetButton, exportButton, importButton, this.file);
    // what is due for review today (js/review.js), above the table: shown once anything was practised
    this.review = el("div", { class: "rl-review", "data-review": "", hidden: "" });
    root.append(this.review, this.table, buttons, this.note);
    this.render();
    addEventListener("storage", () => this.render()); // another tab solved something
  }

  render() {
    const t = this.t;
    const head = el("tr");
    for (const h of [t.progress.chapter, t.progress.solved, t.progress.drill])
      head.append(el("th", { scope: "col" }, h));
    const rows = this.chapters.map((chapter) => {
      const n = chapter.exercises.length;
      const passed = chapter.exercises.filter(solved).length;
      const bests = chapter.exercises.map(drillBest).filter((b) => b !== null);
      const drills = bests.length
        ? t.progress.drillBest({ best: Math.max(...bests), tried: bests.length, total: n })
        : "—";
      const row = el("tr", { "data-chapter": chapter.href });
      const name = el("td");
      name.append(el("a", { href: chapter.href }, chapter.title));
      row.append(name, el("td", { "data-solved": "" }, `${passed} / ${n}`), el("td", { "data-drills": "" }, drills));
      return row;
    });
    this.table.replaceChildren(head, ...rows);
    this._renderReview();
  }

  /** Today's reviews, each a link to its exercise's drill (?review=<id>: js/drill.js goes to it);
   * or when the next one is; nothing at all before any exercise was practised. */
  _renderReview() {
    const t = this.t;
    const all = this.chapters.flatMap((chapter) => chapter.exercises.map((e) => ({ ...e, chapter })));
    const items = scheduled(all);
    this.review.hidden = !items.length;
    if (!items.length) return;
    const due = items.filter((item) => isDue(item.due));
    if (!due.length) {
      this.review.replaceChildren(el("p", {}, t.progress.reviewNone({ day: day(items[0].due) })));
      return;
    }
    const list = el("ul");
    for (const { id } of due) {
      const e = all.find((x) => x.id === id);
      const item = el("li");
      item.append(
        el("a", { href: `${e.chapter.href}?review=${encodeURIComponent(id)}` }, e.title),
        ` — ${e.chapter.title}`,
      );
      list.append(item);
    }
    this.review.replaceChildren(el("p", {}, t.progress.reviewDue({ count: due.length })), list);
  }

  /** Save everything this browser keeps for the site as one file. */
  async download() {
    const { exportProgress } = await import("./backup.js"); // on intent: the home page loads without it
    const file = exportProgress(localStorage, PREFIX);
    const url = URL.createObjectURL(new Blob([JSON.stringify(file, null, 1)], { type: "application/json" }));
    const link = el("a", { href: url, download: `rl-ops-progress-${file.exported.slice(0, 10)}.json` });
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }

  /** Merge a file `download` wrote (here or in another browser) into this browser's, and say how. */
  async upload(blob) {
    this.file.value = ""; // the same file may be chosen again
    this._say(""); // what an earlier import said is not this one's
    if (!blob) return;
    const t = this.t;
    let file = null;
    try {
      file = JSON.parse(await blob.text());
    } catch {
      /* not JSON: said below */
    }
    const { applyImport, planImport } = await import("./backup.js");
    const current = Object.fromEntries(this.chapters.flatMap((c) => c.exercises.map((e) => [e.id, e.version])));
    const plan = planImport(file, localStorage, PREFIX, current);
    if (plan.error) return this._say(plan.error === "newer" ? t.progress.importNewer : t.progress.importBad);
    if (!plan.writes.length) return this._say(t.progress.importNothing);
    if (!applyImport(plan.writes, localStorage)) return this._say(t.progress.importFull);
    const said = Object.entries(plan.counts)
      .filter(([, count]) => count > 0)
      .map(([name, count]) => t.progress.importCounts[name]({ count }));
    this._say(t.progress.imported({ summary: said.join(t.listSeparator) }));
    this.render();
  }

  _say(text) {
    this.note.textContent = text;
  }

  /** Forget every exercise's pass and every drill's record, after asking. */
  reset() {
    if (!confirm(this.t.progress.resetConfirm)) return;
    for (const chapter of this.chapters) {
      for (const { id } of chapter.exercises) {
        saveJSON(STORAGE.solved + id, undefined);
        saveJSON(STORAGE.drill + id, undefined);
      }
    }
    saveJSON(STORAGE.drillMisses, undefined);
    this.render();
  }
}

/** Start the progress table, now and on every page Material shows. */
export const init = mountAll("progress", Progress);
