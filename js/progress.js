// The home page's progress table: per chapter, how many exercises passed Check in this browser
// and the drills' best scores, all read from localStorage (nothing leaves the browser), with a
// reset. Markup (written by the site build, `<!-- rl:progress -->`): <div data-progress><script
// class="rl-progress-data">[{href, title, exercises: [{id, title}]}]</script></div>.

import { el, isRecord, loadJSON, mountAll, STORAGE, saveJSON } from "./dom.js";
import { strings } from "./i18n.js";

const drillBest = (id) => {
  const record = loadJSON(STORAGE.drill + id, null, isRecord);
  return Number.isFinite(record?.best) ? record.best : null;
};

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
      const ids = chapter.exercises.map((e) => e.id);
      const solved = ids.filter((id) => loadJSON(STORAGE.solved + id, null, isRecord)).length;
      const bests = ids.map(drillBest).filter((b) => b !== null);
      const drills = bests.length
        ? t.progress.drillBest({ best: Math.max(...bests), tried: bests.length, total: ids.length })
        : "—";
      const row = el("tr", { "data-chapter": chapter.href });
      const name = el("td");
      name.append(el("a", { href: chapter.href }, chapter.title));
      row.append(
        name,
        el("td", { "data-solved": "" }, `${solved} / ${ids.length}`),
        el("td", { "data-drills": "" }, drills),
      );
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
