// A fresh Python interpreter in a few hundred milliseconds: one worker of the page, the judge's
// (it runs no learner code, ever: js/python.js), loads Pyodide, numpy and our packages the long way
// (seconds) and takes a memory snapshot of the warmed interpreter, the boot image; every worker
// that runs a job starts from that image, so each job has an interpreter no other job has touched
// without waiting for a load. No learner code runs in the interpreter that made the image (it
// judges Checks, from plain data): it was loaded to be snapshotted (`_makeSnapshot`), and code
// that ran there could snapshot itself.
//
// The image is what Pyodide 0.27's `_makeSnapshot` / `_loadSnapshot` options give (the wasm heap
// and the JS objects Python holds), plus what the heap alone cannot carry, as Cloudflare's
// workerd does for its Python workers:
//   - the files: the virtual file system lives in JS, so every boot writes the wheels' files again;
//   - numpy's extension modules: loaded before the runtime starts (Emscripten's preRun), in the
//     boot that makes the image and in every boot from it, so that they sit at the same memory
//     and table addresses; and the handles Python's dlopen gave them.
// Both go through one hook on Pyodide's module factory (`_createPyodideModule`), which is
// Pyodide's own code for the version the site pins (0.27.8; tests/test_browser_*.py run it).
//
// image = {snapshot: Uint8Array, main: WebAssembly.Module, libs: [[path, WebAssembly.Module]],
//          files: {index: [[path, start, end]], bytes: Uint8Array}, handles: {handle: path},
//          stdlib: Blob, lock: Blob}  (python_stdlib.zip and pyodide-lock.json, as they came)
// Handed to a worker (handOff), the snapshot and the files' bytes travel as Blobs: the page passes
// them on by reference, and each worker copies them once, off the page's thread (received).

import { Fault } from "./job.js";

const SITE_PACKAGES = "/lib/python3.12/site-packages";
// the extension modules the warm-up imports (a module imported later loads the usual way);
// making an image checks that the warm-up loaded exactly these
const LIBS = [
  "numpy/_core/_multiarray_umath",
  "numpy/_core/_multiarray_tests",
  "numpy/linalg/_umath_linalg",
  // numpy.random (a fresh interpreter seeds it; the torch layer and Check draw from it)
  "numpy/random/_common",
  "numpy/random/bit_generator",
  "numpy/random/_bounded_integers",
  "numpy/random/_mt19937",
  "numpy/random/_pcg64",
  "numpy/random/_philox",
  "numpy/random/_sfc64",
  "numpy/random/_generator",
  "numpy/random/mtrand",
].map((module) => `${module}.cpython-312-wasm32-emscripten.so`);
// what every interpreter has imported before any job: numpy (numpy.random too: numpy 2 imports it
// only when first used), the torch layer, the jobs (the checker, the runner), the demo
const WARM =
  "import numpy, numpy.random\nfrom browser_runtime import install_torch\ninstall_torch()\nimport browser_runtime.jobs, rl_ops_numpy.demo";

/** The files of `wheels` (ArrayBuffers), as [path under site-packages, bytes]; tests left out.
 * fflate is imported here, not with this module: a worker started from the image never needs it. */
async function unpack(wheels) {
  const { unzipSync } = await import("../fflate/browser.js");
  const keep = (file) => !file.name.endsWith("/") && !file.name.includes("/tests/");
  return wheels.flatMap((w) => Object.entries(unzipSync(new Uint8Array(w), { filter: keep })));
}

/** What came is of another deploy than the page that asked for it: `what` is `got`, the page's is
 * `want` (js/job.js FAILURES "stale"). */
export class Stale extends Error {
  constructor(what, got, want) {
    super(`${what}: ${got} / ${want}`);
    Object.assign(this, { what, got, want });
  }

  get failure() {
    return { kind: "stale", what: this.what, got: this.got, want: this.want };
  }
}

/** A failure to load part of the runtime (js/job.js FAILURES "load"): `what` names the file or
 * package, `cause` is "http" | "network" | "timeout" | "start", with its values ({status},
 * {seconds}, {detail}: the engine's own words). */
export class LoadError extends Error {
  constructor(what, cause, values = {}) {
    super(`${what}: ${cause} ${JSON.stringify(values)}`);
    Object.assign(this, { what, cause, values });
  }

  get failure() {
    return { kind: "load", what: this.what, cause: this.cause, ...this.values };
  }
}

/** The module at `url`, or a LoadError naming its file (it did not come, or does not run). */
async function importing(url) {
  try {
    return await import(url);
  } catch (err) {
    const cause = err instanceof TypeError ? "network" : "start"; // a module that did not come is a TypeError
    throw new LoadError(url.split("/").pop(), cause, { detail: String(err?.message ?? err) });
  }
}

let factory = null; // Pyodide's module factory, as pyodide.asm.js defined it
let imported = null; // the promise of Pyodide's two scripts, once asked for

/** Pyodide's two scripts, imported together and once per boot: pyodide.mjs (resolved to) and
 * pyodide.asm.js, which defines the module factory. Asked for as soon as the runtime is wanted
 * (js/worker.js), so that neither waits for the wasm to finish downloading; a failure fails this
 * boot when it needs them (never tried twice in one boot: the file it names is the first). */
export function scripts({ indexURL }) {
  if (!imported) {
    imported = Promise.all([
      importing(`${indexURL}pyodide.mjs`),
      typeof globalThis._createPyodideModule === "function" ? null : importing(`${indexURL}pyodide.asm.js`),
    ]).then(([mjs]) => mjs);
    imported.catch(() => {}); // said where the boot awaits it, not as an unhandled rejection
  }
  return imported;
}

/** After a failed boot: the next one asks for the scripts again (the network may be back). */
export function forgetScripts() {
  imported = null;
}

/** Pyodide's loadPyodide, its module factory hooked to start from `parts` ({main, libs, files});
 * `runtime`: {indexURL, pyodideVersion} (the version the page's build pinned). */
async function loader(runtime, parts) {
  const { indexURL, pyodideVersion } = runtime;
  const { loadPyodide, version } = await scripts(runtime);
  // these hooks are for the pinned version's internals; a later deploy's Pyodide is not this page's
  if (version !== pyodideVersion) throw new Stale("Pyodide", version, pyodideVersion);
  factory ??= globalThis._createPyodideModule; // Pyodide's own, wrapped anew for each boot
  globalThis._createPyodideModule = (settings) => {
    // the main module, compiled once per page; a failure to instantiate it (a snapshot's memory
    // too small) rejects the boot instead of leaving it waiting for ever
    let fail;
    const failed = new Promise((_, reject) => {
      fail = reject;
    });
    settings.instantiateWasm = (imports, done) => {
      WebAssembly.instantiate(parts.main, imports).then((instance) => done(instance, parts.main), fail);
      return {};
    };
    const preload = (Module) => {
      const { index, bytes } = parts.files;
      for (const [path, start, end] of index) {
        const full = `${SITE_PACKAGES}/${path}`;
        Module.FS.mkdirTree(full.slice(0, full.lastIndexOf("/")));
        Module.FS.writeFile(full, bytes.subarray(start, end), { canOwn: false });
      }
      for (const [path, module] of parts.libs) {
        const full = `${SITE_PACKAGES}/${path}`;
        const dso = Module.newDSO(full, undefined, "loading");
        dso.refcount = Infinity; // never unloaded
        dso.global = false;
        dso.exports = Module.loadWebAssemblyModule(module, {}, full);
      }
    };
    settings.preRun = [preload, ...(settings.preRun ?? [])];
    return Promise.race([factory(settings), failed]);
  };
  // Pyodide's settings start fetching pyodide.asm.wasm for Emscripten's instantiateWasm before the
  // hook above replaces it: never used, yet its 10 MB were sent at every boot. While loadPyodide
  // runs, that one address is answered with an empty body, not fetched; the standard library and
  // the lock file come from the parts' Blobs (one download per page, not one per worker).
  const wasm = `${indexURL}pyodide.asm.wasm`;
  return async (options) => {
    const { fetch } = globalThis;
    globalThis.fetch = (input, init) =>
      String(input?.url ?? input) === wasm ? Promise.resolve(new Response(null)) : fetch(input, init);
    const urls = { stdLibURL: URL.createObjectURL(parts.stdlib), lockFileURL: URL.createObjectURL(parts.lock) };
    try {
      return await loadPyodide({ ...options, ...urls });
    } finally {
      globalThis.fetch = fetch;
      for (const url of Object.values(urls)) URL.revokeObjectURL(url);
    }
  };
}

/** What every boot starts from besides the snapshot: {main, files, libs, stdlib, lock} from the
 * compiled pyodide.asm.wasm, the wheels (numpy's and ours) and the bytes of python_stdlib.zip and
 * pyodide-lock.json (`runtime`), which Pyodide would fetch again in every worker: as Blobs, each
 * worker reads them from the page's copy. */
export async function parts(main, wheels, runtime) {
  const files = await unpack(wheels);
  const { stdlib, lock } = runtime;
  return {
    main,
    files: packed(files),
    libs: await compileLibs(files),
    stdlib: new Blob([stdlib]),
    lock: new Blob([lock]),
  };
}

/** [[path, bytes]] as one buffer and its index: {index: [[path, start, end]], bytes}. */
function packed(files) {
  const bytes = new Uint8Array(files.reduce((n, [, b]) => n + b.byteLength, 0));
  const index = [];
  let at = 0;
  for (const [path, b] of files) {
    bytes.set(b, at);
    index.push([path, at, at + b.byteLength]);
    at += b.byteLength;
  }
  return { index, bytes };
}

/** `image` as a worker is handed it: its large buffers as Blobs (passed on by reference). */
export function handOff(image) {
  const { files, snapshot } = image;
  return { ...image, files: { index: files.index, bytes: new Blob([files.bytes]) }, snapshot: new Blob([snapshot]) };
}

/** The image a worker was handed (handOff), its buffers read back. */
export async function received(image) {
  const read = async (blob) => new Uint8Array(await blob.arrayBuffer());
  const [bytes, snapshot] = await Promise.all([read(image.files.bytes), read(image.snapshot)]);
  return { ...image, files: { index: image.files.index, bytes }, snapshot };
}

/** Compile what `unpack` gave: the extension modules the warm-up needs. */
async function compileLibs(files) {
  const byPath = new Map(files);
  return Promise.all(
    LIBS.map(async (path) => {
      if (!byPath.has(path)) throw new Fault("numpy-wheel-lacks", { path });
      return [path, await WebAssembly.compile(byPath.get(path))];
    }),
  );
}

/** Load the long way from `parts`, warm up, and take the image. Resolves to {py, image}: `py`
 * is the warmed interpreter itself. `runtime`: {indexURL, pyodideVersion}. */
export async function makeImage(runtime, parts) {
  const loadPyodide = await loader(runtime, parts);
  const py = await loadPyodide({ indexURL: runtime.indexURL, _makeSnapshot: true });
  py.runPython(WARM);
  const { LDSO } = py._module;
  const loaded = Object.keys(LDSO.loadedLibsByName).filter((p) => p.startsWith(`${SITE_PACKAGES}/`));
  const extra = loaded.filter((p) => !LIBS.includes(p.slice(SITE_PACKAGES.length + 1)));
  if (extra.length) throw new Fault("warm-up-loaded-unlisted-libs", { extra }); // add them to LIBS
  const handles = {};
  for (const [handle, dso] of Object.entries(LDSO.loadedLibsByHandle)) if (+handle) handles[handle] = dso.name;
  // Pyodide 0.27.8 snapshots only an interpreter whose loadedPackages is empty; it lists the
  // wheels it found installed (numpy, ours), which every boot from the image finds again
  const found = { ...py.loadedPackages };
  for (const name of Object.keys(found)) delete py.loadedPackages[name];
  const snapshot = py.makeMemorySnapshot();
  Object.assign(py.loadedPackages, found);
  return { py, image: { ...parts, snapshot, handles } };
}

// every generator a job may draw from unseeded: seeded anew in each interpreter (the image holds
// the state each had when it was taken, which every interpreter would otherwise draw from alike)
const RESEED =
  "import random, numpy\nfrom browser_runtime.torch_layer import default_generator\n" +
  "random.seed()\nnumpy.random.seed()\ndefault_generator.seed()";

/** A fresh interpreter from `image`, as it was when the image was taken (`runtime`: as for
 * makeImage). Python's random module, numpy's global generator and the torch layer's are seeded
 * anew (from the browser's crypto), as in a new process. */
export async function fromImage(runtime, image) {
  const loadPyodide = await loader(runtime, image);
  const py = await loadPyodide({ indexURL: runtime.indexURL, _loadSnapshot: image.snapshot });
  const { LDSO } = py._module;
  for (const [handle, path] of Object.entries(image.handles))
    LDSO.loadedLibsByHandle[handle] = LDSO.loadedLibsByName[path];
  py.runPython(RESEED);
  return py;
}
