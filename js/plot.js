// uPlot in the site's colours, for every chart of the site (js/demo.js, js/figure.js): the
// library, its stylesheet (added once, when the first chart is drawn), axes in Material's text
// colours, and a redraw when the reader switches light and dark.

import uPlot from "../uplot/uPlot.esm.js";

export { uPlot };

/** A CSS variable of Material's current colour scheme. */
export function css(name) {
  return getComputedStyle(document.body).getPropertyValue(name).trim() || "#888";
}

/** uPlot's stylesheet, added to the page once. */
export function loadStylesheet() {
  const href = new URL("../uplot/uPlot.min.css", import.meta.url).href;
  if (!document.querySelector(`link[href="${href}"]`)) {
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = href;
    document.head.append(link);
  }
}

/** An axis in the scheme's colours, with `label` under it (and `extra` uPlot axis options). */
export function axis(label, extra = {}) {
  const grid = css("--md-default-fg-color--lightest");
  return {
    stroke: css("--md-default-fg-color--light"),
    grid: { stroke: grid },
    ticks: { stroke: grid },
    label,
    ...extra,
  };
}

/** Call `redraw` whenever the reader switches Material's colour scheme. */
export function onSchemeChange(redraw) {
  new MutationObserver(redraw).observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });
}
