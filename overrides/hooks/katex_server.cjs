// KaTeX for the site build, one process for every formula.
//
// markdown-katex runs the `katex` CLI once per formula (~70 ms of Node start-up each). The MkDocs
// hook (site.py) starts this script once instead and sends it one JSON line per formula:
// {"tex": "...", "displayMode": true|false}; it answers {"html": "..."} or {"error": "..."}.
// The options are the ones the CLI uses when given no flags but --display-mode, so the HTML is
// byte for byte what the CLI writes (a test compares them).

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
