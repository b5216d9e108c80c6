// KaTeX for the site build, one Node process for every formula.
//
// site_build/katex.py starts this script once per build and sends it one JSON line per formula,
// {"tex": "...", "displayMode": true|false}; it answers {"html": "..."} or {"error": "..."}.
// The options are those of the `katex` CLI given no flag but --display-mode.

const katex = require("katex");
const readline = require("readline");

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const { tex, displayMode } = JSON.parse(line);
  let answer;
  try {
    const html = katex.renderToString(tex, {
      displayMode,
      throwOnError: true,
      strict: false,
      macros: {},
    });
    answer = { html };
  } catch (err) {
    answer = { error: String(err.message || err) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
