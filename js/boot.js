// A fresh Python interpreter in a few hundred milliseconds: the page's first worker loads Pyodide,
// numpy and our packages the long way (seconds) and takes a memory snapshot of the warmed
// interpreter, the boot image; every later worker of the page starts from that image, so each job
// can have an interpreter no other job has touched (js/python.js) without waiting for a load.
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
//          files: [[path, Uint8Array]], handles: {handle: path}}

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
// only when first used), the torch layer, the checker, the demo
const WARM =
  "import numpy, numpy.random\nfrom browser_runtime import install_torch\ninstall_torch()\nimport browser_runtime.check, rl_ops_numpy.demo";

/** The files of `wheels` (ArrayBuffers), as [path under site-packages, bytes]; tests left out.
 * fflate is imported here, not with this module: a worker started from the image never needs it. */
async function unpack(wheels) {
  const { unzipSync } = await import("../fflate/browser.js");
  const keep = (file) => !file.name.endsWith("/") && !file.name.includes("/tests/");
  return wheels.flatMap((w) => Object.entries(unzipSync(new Uint8Array(w), { filter: keep })));
}

/** What came is of another deploy than the page that asked for it (js/worker.js says so). */
export class Stale extends Error {}

let factory = null; // Pyodide's module factory, as pyodide.asm.js defined it

/** Pyodide's loadPyodide, its module factory hooked to start from `parts` ({main, libs, files});
 * `runtime`: {indexURL, pyodideVersion} (the version the page's build pinned). */
async function loader({ indexURL, pyodideVersion }, parts) {
  const { loadPyodide, version } = await import(`${indexURL}pyodide.mjs`);
  // these hooks are for the pinned version's internals; a later deploy's Pyodide is not this page's
  if (version !== pyodideVersion) throw new Stale(`Pyodide is ${version}, the page's ${pyodideVersion}`);
  if (typeof globalThis._createPyodideModule !== "function") await import(`${indexURL}pyodide.asm.js`);
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
      for (const [path, bytes] of parts.files) {
        const full = `${SITE_PACKAGES}/${path}`;
        Module.FS.mkdirTree(full.slice(0, full.lastIndexOf("/")));
        Module.FS.writeFile(full, bytes, { canOwn: false });
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
  return loadPyodide;
}

/** What every boot starts from besides the snapshot: {main, files, libs} from the compiled
 * pyodide.asm.wasm and the wheels (numpy's and ours). */
export async function parts(main, wheels) {
  const files = await unpack(wheels);
  return { main, files, libs: await compileLibs(files) };
}

/** Compile what `unpack` gave: the extension modules the warm-up needs. */
async function compileLibs(files) {
  const byPath = new Map(files);
  return Promise.all(
    LIBS.map(async (path) => {
      if (!byPath.has(path)) throw new Error(`numpy's wheel has no ${path}`);
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
  if (extra.length) throw new Error(`the warm-up loaded extension modules js/boot.js does not preload: ${extra}`);
  const handles = {};
  for (const [handle, dso] of Object.entries(LDSO.loadedLibsByHandle)) if (+handle) handles[handle] = dso.name;
  // Pyodide 0.27.8 snapshots only an interpreter whose loadedPackages is empty; it lists the
  // wheels it found installed (numpy, ours), which every boot from the image finds again
  const found = { ...py.loadedPackages };
  for (const name of Object.keys(found)) delete py.loadedPackages[name];
  const snapshot = py.makeMemorySnapshot();
  Object.assign(py.loadedPackages, found);
  // this interpreter serves the page's first job: its `js` was the recording proxy that taking a
  // snapshot needs, through which a native method (`js.performance.now()`) throws "Illegal
  // invocation"; from here on `import js` is the worker's own global scope
  py.registerJsModule("js", globalThis);
  py.runPython("import sys\nsys.modules.pop('js', None)");
  return { py, image: { ...parts, snapshot, handles } };
}

/** A fresh interpreter from `image`, as it was when the image was taken (`runtime`: as for
 * makeImage). Python's random module
 * and numpy's global generator are seeded anew (from the browser's crypto), as in a new process. */
export async function fromImage(runtime, image) {
  const loadPyodide = await loader(runtime, image);
  const py = await loadPyodide({ indexURL: runtime.indexURL, _loadSnapshot: image.snapshot });
  const { LDSO } = py._module;
  for (const [handle, path] of Object.entries(image.handles))
    LDSO.loadedLibsByHandle[handle] = LDSO.loadedLibsByName[path];
  py.runPython("import random, numpy\nrandom.seed()\nnumpy.random.seed()");
  return py;
}

// ---- the image across pages: the snapshot kept in Cache Storage ------------------------------
// Every lesson page would otherwise load the long way once. The snapshot (and its handles) is kept
// under a key made of the runtime's and the wheel's addresses (the wheel's carries its hash), in a
// cache named for the site's path, which the service worker deletes with every deploy; Pyodide
// refuses a snapshot of another build, and one that fails to start is deleted and made again.

const storeKey = (indexURL, wheelUrl) =>
  new URL(`boot-image?${new URLSearchParams({ runtime: indexURL, wheel: wheelUrl })}`, indexURL).href;

/** The stored {snapshot, handles} for this runtime and wheel, or null. */
export async function storedImage(cacheName, indexURL, wheelUrl) {
  try {
    const hit = await (await caches.open(cacheName)).match(storeKey(indexURL, wheelUrl));
    if (!hit) return null;
    const handles = JSON.parse(hit.headers.get("x-handles"));
    return { snapshot: new Uint8Array(await hit.arrayBuffer()), handles };
  } catch {
    return null; // no Cache Storage (a private window), or an entry that cannot be read
  }
}

/** Keep `image`'s snapshot for the next page; `image` null deletes what is kept. */
export async function storeImage(cacheName, indexURL, wheelUrl, image) {
  try {
    const cache = await caches.open(cacheName);
    const key = storeKey(indexURL, wheelUrl);
    if (!image) return void (await cache.delete(key));
    const headers = { "content-type": "application/octet-stream", "x-handles": JSON.stringify(image.handles) };
    await cache.put(key, new Response(image.snapshot, { headers }));
  } catch {
    /* storage full or refused: the next page loads the long way */
  }
}
