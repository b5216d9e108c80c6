// A figure a reader can move. The build (site_build/figures.py) writes its markup (caption,
// controls as real <input>s, an empty plot box) and its numbers, computed by the rl_ops_numpy
// references for every combination of the controls' values, to assets/figures/<id>.json.
// Nothing is fetched until the figure nears the viewport or one of its controls gets focus;
// then the numbers and uPlot (js/plot.js) load, and each move of a control draws the
// combination it names. Nothing is computed here.
//
// A figure is in one state: "idle" (not yet seen), "loading", "drawn", or "failed" (offline, or
// the file did not come), which the next sight of it, or the browser coming online, tries again.

import { mountAll } from "./dom.js";
import { strings } from "./i18n.js";

// one colour per series (site.css: --rl-series-1 to 6, for both schemes)
const COLOURS = ["--rl-series-1", "--rl-series-2", "--rl-series-3", "--rl-series-4", "--rl-series-5", "--rl-series-6"];
const HEIGHT = 260; // px: the plot box keeps it before the plot is drawn (no layout shift)

class Figure {
  constructor(root) {
    this.root = root;
    this.t = strings();
    this.id = root.dataset.figure;
    this.options = JSON.parse(root.dataset.options);
    this.box = root.querySelector(".rl-figure-plot");
    this.status = root.querySelector(".rl-figure-status");
    this.controls = [...root.querySelectorAll(".rl-figure-control")];
    this.plot = null;
    this._move("idle");
    const seen = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) this.load();
      },
      { rootMargin: "200px" },
    );
    seen.observe(root);
    root.addEventListener("focusin", () => this.load());
    root.addEventListener("input", () => this._changed());
    window.addEventListener("online", () => {
      if (this.state === "failed") this.load();
    });
  }

  _move(state, message = "") {
    this.state = state;
    this.root.dataset.state = state;
    this.status.textContent = message;
  }

  /** Fetch the numbers and uPlot (once; again after a failure), then draw. */
  async load() {
    if (this.state !== "idle" && this.state !== "failed") return;
    this._move("loading", this.t.figure.loading);
    const startedOffline = navigator.onLine === false;
    try {
      // by the digest of its numbers: no cache hands it an older build's file
      const url = new URL(`../figures/${this.id}.json?v=${this.root.dataset.version}`, import.meta.url);
      const [plot, data] = await Promise.all([
        import("./plot.js"),
        fetch(url).then((r) => {
          if (!r.ok) throw new Error(`${r.status} ${url.pathname}`);
          return r.json();
        }),
      ]);
      // a host ignores ?v=: after a deploy, an open page may get numbers for other controls
      const sizes = this.controls.map(
        (c) => c.querySelectorAll("input[type=radio]").length || Number(c.querySelector("input").max) + 1,
      );
      if (data.shape.join() !== sizes.join()) {
        this._move("failed", this.t.figure.stale);
        return;
      }
      this.lib = plot;
      this.data = data;
      this._move("drawn");
      this._draw();
      plot.onSchemeChange(() => this._draw());
      new ResizeObserver(() => this.plot?.setSize({ width: this._width(), height: HEIGHT })).observe(this.box);
    } catch (err) {
      const offline = navigator.onLine === false;
      this._move(
        "failed",
        offline ? this.t.figure.offline : this.t.figure.failed({ message: String(err?.message ?? err) }),
      );
      // begun offline, and the browser came online meanwhile: its `online` event found this load
      // still running, so nothing else would try again
      if (startedOffline && !offline) this.load();
    }
  }

  /** Each control's index: a slider's value, or the checked choice's. */
  _indices() {
    return this.controls.map((c) => {
      const input = c.querySelector("input[type=range], input[type=radio]:checked");
      return Number(input.value);
    });
  }

  /** The combination the controls name: its index in data.ys (row-major). */
  _combination() {
    return this._indices().reduce((flat, i, k) => flat * this.data.shape[k] + i, 0);
  }

  _changed() {
    for (const slider of this.root.querySelectorAll("input[type=range]")) {
      const text = JSON.parse(slider.dataset.texts)[Number(slider.value)];
      slider.setAttribute("aria-valuetext", text);
      slider.nextElementSibling.textContent = text;
    }
    if (this.state !== "drawn") return;
    this.plot.setData([this.data.x, ...this.data.ys[this._combination()]]);
    this.root.dataset.combination = String(this._combination());
  }

  _width() {
    return Math.max(240, this.box.clientWidth);
  }

  /** (Re)draw in the current colour scheme. */
  _draw() {
    const { uPlot, css, axis, loadStylesheet } = this.lib;
    const { series, x, y, log, points } = this.options;
    loadStylesheet();
    const range = this.data.y;
    const pad = range ? 0.05 * (range[1] - range[0] || 1) : 0;
    const opts = {
      width: this._width(),
      height: HEIGHT,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: { time: false },
        y: log ? { distr: 3 } : range ? { range: [range[0] - pad, range[1] + pad] } : {},
      },
      axes: [axis(x), axis(y, { size: 56 })],
      series: [
        { label: x },
        ...series.map((s, i) => ({
          label: s.label,
          stroke: css(COLOURS[i % COLOURS.length]),
          width: 2,
          dash: s.dash ? [6, 4] : undefined,
          spanGaps: true,
          points: { show: points },
        })),
      ],
    };
    this.plot?.destroy();
    this.plot = new uPlot(opts, [this.data.x, ...this.data.ys[this._combination()]], this.box);
    this.root.dataset.combination = String(this._combination());
    this.root.rlPlot = this.plot; // what is drawn, for the tests
  }
}

/** Start every figure on the page, now and on every page Material shows. */
export const init = mountAll("figure", Figure);
