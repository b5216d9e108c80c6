// The s21 demo page: the sample run's curves, drawn with uPlot (PPO and GRPO side by side in the
// first three charts, DPO's margin in the fourth, then GSPO next to GRPO and the rollout-mismatch
// runs), and a Run button that trains the toy model in the Python worker (smaller configuration;
// the runs beside GRPO only when the learner ticks the box) and draws its curves as they come.
//
// Markup (written by the site build): <div data-demo><script class="rl-demo-data">{sample: json
// of `python -m rl_ops_numpy.demo --json`, charts: [[id, metric, phases drawn in it]] (the
// panels of rl_ops_numpy/demo/plot.py; the steps on the x axis are the first phase's)}</script>
// </div>. All text is set with textContent.

import { el, mountAll, OutputView } from "./dom.js";
import { strings } from "./i18n.js";
import { axis, css, loadStylesheet, onSchemeChange, uPlot } from "./plot.js";
import { prefetch, start } from "./runtime.js";
import { JobView } from "./view.js";

// a phase's colour (a Material variable); the sample run dashed, the learner's run solid
const COLOUR = {
  ppo: "--md-accent-fg-color",
  dpo: "--md-accent-fg-color",
  simpo: "--md-typeset-a-color",
  grpo: "--md-typeset-a-color",
  gspo: "--md-code-hl-string-color",
  grpo_mismatch: "--md-code-hl-number-color",
  grpo_tis: "--md-code-hl-function-color",
};

/** A metric's value as the summary line shows it: shares in per cent, the rest to 2 decimals. */
function show(metric, value) {
  return metric === "tis_truncated" ? `${(100 * value).toFixed(1)}%` : value.toFixed(2);
}

/** `series`' values at the steps `xs` (null where it has none yet). */
function at(xs, series, metric) {
  return xs.map((x) => {
    const i = (series.step ?? []).indexOf(x);
    return i >= 0 ? series[metric][i] : null;
  });
}

class Demo {
  constructor(root) {
    this.root = root;
    this.t = strings();
    const data = JSON.parse(root.querySelector("script.rl-demo-data").textContent);
    this.sample = data.sample;
    // the charts whose runs the sample has (all of them, unless it was made without the variants)
    this.charts = data.charts.filter(([, , phases]) => phases.every((p) => this.sample[p]));
    this.live = {}; // the learner's run: each phase's series so far
    this.plots = {};
    this._buildUi();
    this._draw();
    onSchemeChange(() => this._draw());
    new ResizeObserver(() => this._resize()).observe(this.grid);
  }

  _buildUi() {
    const t = this.t;
    const bar = el("div", { class: "rl-toolbar" });
    this.runButton = el(
      "button",
      { type: "button", class: "md-button md-button--primary", "data-action": "run" },
      t.demo.run,
    );
    this.stopButton = el("button", { type: "button", class: "md-button", "data-action": "stop", disabled: "" }, t.stop);
    // the status line and the progress bar are the view's: the demo hands it what to show
    const status = el("span", { class: "rl-status", "aria-live": "polite" }, t.demo.sample);
    this.variants = el("input", { type: "checkbox", "data-option": "variants" });
    const option = el("label", { class: "rl-demo-option" });
    option.append(this.variants, ` ${t.demo.variants}`);
    bar.append(this.runButton, this.stopButton, option, status);
    const progress = el("progress", { class: "rl-demo-progress", max: "1", value: "0", hidden: "" });
    this.grid = el("div", { class: "rl-demo-grid" });
    this.boxes = {};
    for (const [id] of this.charts) {
      const box = el("figure", { class: "rl-demo-chart", "data-chart": id });
      box.append(el("figcaption", {}, t.demo.chart[id]));
      this.boxes[id] = box;
      this.grid.append(box);
    }
    this.summary = el("p", { class: "rl-demo-summary", "data-summary": "" });
    this.words = el("div", { class: "rl-demo-words" });
    const error = el("pre", { class: "rl-output", hidden: "", "data-output": "" });
    this.root.append(bar, progress, this.grid, this.summary, error, this.words);
    this.view = new JobView(t, {
      root: this.root,
      starts: [this.runButton, this.variants],
      stop: this.stopButton,
      status,
      progress: { box: progress, bar: progress, label: status },
      output: new OutputView(error),
    });
    this.runButton.addEventListener("click", () => this.run());
    this.runButton.addEventListener("pointerenter", prefetch);
    this.stopButton.addEventListener("click", () => this.view.job?.stop());
    this._showWords(this.sample.eval, this.t.demo.sampleWords);
    this._summarise(this.sample, this.t.demo.sampleSeries);
  }

  _width() {
    const w = this.grid.clientWidth;
    return Math.max(240, w >= 640 ? Math.floor(w / 2) - 12 : w);
  }

  /** (Re)draw every chart: the sample run, and the live run so far. */
  _draw() {
    loadStylesheet();
    for (const [id, metric, phases] of this.charts) {
      this.plots[id]?.destroy();
      const xs = this.sample[phases[0]].step;
      const series = [{ label: this.t.demo.step }];
      const data = [xs];
      for (const phase of phases) {
        const stroke = css(COLOUR[phase]);
        const name = phases.length > 1 ? `${this.t.demo.phaseName[phase]} · ` : "";
        series.push(
          { label: name + this.t.demo.sampleSeries, stroke, width: 1.5, dash: [4, 4] },
          { label: name + this.t.demo.liveSeries, stroke, width: 2.5, spanGaps: false },
        );
        data.push(at(xs, this.sample[phase], metric), at(xs, this.live[phase] ?? {}, metric));
      }
      const opts = {
        width: this._width(),
        height: 200,
        legend: { show: true },
        scales: { x: { time: false } },
        axes: [axis(this.t.demo.step), axis(undefined, { size: 50 })],
        series,
      };
      const box = this.boxes[id];
      box.querySelector(".uplot")?.remove();
      this.plots[id] = new uPlot(opts, data, box);
    }
  }

  _resize() {
    for (const plot of Object.values(this.plots)) plot.setSize({ width: this._width(), height: 200 });
  }

  /** One line under the charts: where each curve of `run` started and ended (once per run and
   * metric, for the runs `run` has). */
  _summarise(run, label) {
    const ends = (series) => [series[0], series[series.length - 1]];
    const seen = new Set();
    const parts = this.charts.flatMap(([, metric, phases]) =>
      phases
        .filter((phase) => run[phase]?.[metric] && !seen.has(`${phase} ${metric}`))
        .map((phase) => {
          seen.add(`${phase} ${metric}`);
          const [a, b] = ends(run[phase][metric]);
          const name = `${this.t.demo.phaseName[phase]} ${this.t.demo.metric[metric]}`;
          return `${name} ${show(metric, a)} → ${show(metric, b)}`;
        }),
    );
    this.summary.textContent = `${label}: ${parts.join(" · ")}`;
  }

  _showWords(evaluation, title) {
    const t = this.t;
    this.words.replaceChildren(el("h4", {}, title));
    const table = el("table");
    const head = el("tr");
    for (const h of [t.demo.model, t.demo.meanScore, t.demo.words]) head.append(el("th", {}, h));
    table.append(head);
    for (const model of Object.keys(evaluation)) {
      const row = el("tr");
      const e = evaluation[model];
      row.append(
        el("td", {}, t.demo.phaseName[model]),
        el("td", {}, e.rm_score.toFixed(2)),
        el("td", {}, e.examples.map((x) => x.word).join(" ")),
      );
      table.append(row);
    }
    this.words.append(table);
  }

  /** Train in the page's Python; its curves are drawn as they come. Loading, offline, Stop and
   * failure each say what happened (the view), and Run stays the way out (it tries again). */
  run() {
    if (this.view.busy) return null; // a double click starts one run
    this.live = {};
    this._draw();
    const job = start("demo", { config: this.variants.checked ? { grpo_variants: true } : {} });
    job.on((e) => {
      if (e.type === "event") this._onLog(e.data);
    });
    return this.view.follow(job, {
      labels: { queued: this.t.loading },
      onDone: (outcome, ms) => {
        this._showWords(outcome.result.eval, this.t.demo.yourWords);
        this._summarise(outcome.result, this.t.demo.liveSeries);
        return this.t.demo.done({ seconds: (ms / 1000).toFixed(1) });
      },
    });
  }

  _onLog({ phase, step, total, metrics }) {
    this.view.step(step / total, this.t.demo.phase({ phase: this.t.demo.phaseName[phase], step, total }));
    if (phase === "sft") return;
    this.live[phase] ??= {};
    const series = this.live[phase];
    series.step = [...(series.step ?? []), step];
    for (const [k, v] of Object.entries(metrics)) series[k] = [...(series[k] ?? []), v];
    for (const [id, metric, phases] of this.charts) {
      if (!phases.includes(phase)) continue;
      const xs = this.sample[phases[0]].step;
      const data = [xs];
      let points = 0;
      for (const p of phases) {
        const ys = at(xs, this.live[p] ?? {}, metric);
        data.push(at(xs, this.sample[p], metric), ys);
        points += ys.filter((y) => y !== null).length;
      }
      this.plots[id].setData(data);
      this.boxes[id].dataset.livePoints = String(points);
    }
  }
}

/** Start every demo cell on the page, now and on every page Material shows. */
export const init = mountAll("demo", Demo);
