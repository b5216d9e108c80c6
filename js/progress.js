// The home page's progress table: per chapter, how many exercises passed Check in this browser
// and the drills' best scores, all read from localStorage (nothing leaves the browser), with a
// reset. Markup (written by the site build, `<!-- rl:progress -->`): <div data-progress><script
// class="rl-progress-data">[{href, title, exercises: [{id, title, version}]}]</script></div>.
// Only records of an exercise's current version count: older ones are kept, not counted.

import { drillRecord, el, isRecord, loadJSON, mountAll, STORAGE, saveJSON } from "./dom.js";
import { strings } from "./i18n.js";

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
    root.append(this.table, this.resetButton);
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
