// Run tests/wasm/driver.py under Pyodide in Node: the wasm32 interpreter and numpy the site ships.
//
//   node tests/wasm/pyodide_node.mjs <pyodide dir> <rl_ops_numpy wheel> <work dir>
//
// <work dir> holds tasks.json; the driver writes results.json next to it. The driver's own
// output goes to stderr. Exit status 1 when loading fails or the driver raises.

import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [dist, wheel, work] = process.argv.slice(2).map((p) => path.resolve(p));
const { loadPyodide } = await import(pathToFileURL(path.join(dist, "pyodide.mjs")).href);
const log = (text) => process.stderr.write(`${text}\n`);
const py = await loadPyodide({ indexURL: dist + path.sep, stdout: log, stderr: log });
const errors = [];
await py.loadPackage("numpy", { messageCallback: () => {}, errorCallback: (m) => errors.push(m) });
try {
  py.pyimport("numpy"); // loadPackage logs failures instead of throwing
} catch {
  log(`numpy did not load: ${errors.join("; ")}`);
  process.exit(1);
}
py.unpackArchive(new Uint8Array(readFileSync(wheel)), "wheel");
py.FS.mkdirTree("/work");
py.FS.mount(py.FS.filesystems.NODEFS, { root: work }, "/work");
const driver = readFileSync(new URL("./driver.py", import.meta.url), "utf8");
try {
  await py.runPythonAsync(driver);
} catch (err) {
  log(String(err));
  process.exit(1);
}
