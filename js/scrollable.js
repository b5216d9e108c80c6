// Every page: a formula or a table too wide for the screen scrolls sideways inside its box (a
// formula in KaTeX's, a table in the wrapper Material puts around it); such a box gets keyboard
// focus (tabindex 0) so it can be scrolled without a mouse (WCAG 2.1.1). Boxes that fit stay out
// of the tab order. Runs on load, on every page Material shows, and when a box's size
// changes (styles, fonts, the window).

const WIDE = ".katex-display, .md-typeset__scrollwrap";

function mark(root = document) {
  for (const box of root.querySelectorAll(WIDE)) {
    const scrolls = box.scrollWidth > box.clientWidth;
    if (scrolls && !box.hasAttribute("tabindex")) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "group");
    } else if (!scrolls && box.getAttribute("tabindex") === "0") {
      box.removeAttribute("tabindex");
      box.removeAttribute("role");
    }
  }
}

// widths settle once styles and fonts are in: a box measured before that may scroll after it
const observer = new ResizeObserver(() => mark());
function watch() {
  mark();
  for (const box of document.querySelectorAll(WIDE)) observer.observe(box);
}

watch();
window.document$?.subscribe(() => watch());
