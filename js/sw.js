// The service worker: the site keeps working offline once visited, and is never stale online.
//
// The build writes this file to the site's root as sw.js, with BUILD (a hash of every file the
// build wrote), RUNTIME (a hash of the Python runtime's files), VERSION (the code's), HASHES
// (each runtime and code file's), their folders and PRECACHE (the other files kept at install)
// filled in; a new deploy changes BUILD, so browsers install the new worker.
//
// - The Python runtime (assets/pyodide/, assets/wheels/): cache first, and only files that match
//   the build's hashes. It is large and only changes with RUNTIME, whose cache outlives deploys
//   that leave it alone; a new RUNTIME's worker deletes the old one.
// - The site's code (assets/js/, and the vendor modules it imports), asked for by version
//   (`?v=VERSION`, site_build/es_modules.py versioned): cache first, and only this build's files
//   that match its hashes, every module of the version kept at install, so a page visited once
//   can load the rest offline (a figure's uPlot, the review scheduler). A version's files
//   outlive the deploys after it (the last KEEP versions), so a page opened before a deploy goes
//   on starting workers of its own version.
// - Any worker of the origin can write these caches (a learner's code could, but for js/worker.js
//   lockDown), so a hit is served only if it still matches the build's hash, checked at every hit
//   (a SHA-256 of a few MB at most); one that does not is deleted and fetched again, so a damaged
//   or planted entry heals at the next use. An older version's code has no hash here: it is served
//   as its own service worker kept it.
// - Everything else of this site (pages, CSS, search index): network first, the cached copy
//   when the network fails, so a page is fresh whenever the network answers. That cache outlives
//   deploys: a page visited before one is still there offline after it. What a page asks for
//   only later (a figure's numbers, uPlot's stylesheet) or where this worker cannot see it
//   (search's index) is kept at install (PRECACHE).
// - Other hosts: not touched.

// biome-ignore lint/correctness/noUnusedVariables: its bytes change with every deploy, which makes browsers install the new worker
const BUILD = "__BUILD__";
const RUNTIME = "__RUNTIME__";
const PRECACHE = ["__PRECACHE__"];
const VERSION = "__VERSION__";
const HASHES = { __HASHES__: "" }; // each runtime and code file's SHA-256, by its path in the site
const SCOPE = new URL("./", self.location).href;
const RUNTIME_PATHS = ["__RUNTIME_FOLDERS__"].map((p) => SCOPE + p);
const CODE_PATHS = ["__CODE_FOLDERS__"].map((p) => SCOPE + p);
// the caches are this site's, by its path: two sites on one origin never touch each other's
const OURS = `rl:${new URL(SCOPE).pathname}:`;
const SITE_CACHE = `${OURS}site`; // across deploys: the pages visited stay available offline
const RUNTIME_CACHE = `${OURS}runtime-${RUNTIME}`;
const CODE_CACHE = `${OURS}code`; // across deploys: the code of the last KEEP versions
const KEEP = 3;
const VERSIONS = `${SCOPE}code-versions`; // the versions kept, oldest first (a JSON list in CODE_CACHE)
const LEGACY = /^rl-(site|runtime)-[0-9a-f]{16}$/; // the names before they had the site's path

self.addEventListener("install", (event) => {
  // what a page of this version may ask for later (a figure's numbers and uPlot when it scrolls
  // into view, the review scheduler, ...) or fetches where this worker cannot see it (search's
  // index and scripts): kept now, so a page visited once works offline in full. Never blocks
  // the install: what fails is fetched when a page asks for it.
  const site = PRECACHE.map((p) => caches.open(SITE_CACHE).then((cache) => cache.add(SCOPE + p)));
  const code = Object.keys(HASHES)
    .map((path) => `${SCOPE}${path}?v=${VERSION}`)
    .filter((url) => CODE_PATHS.some((p) => url.startsWith(p)))
    .map((url) => codeFirst(new Request(url)));
  event.waitUntil(Promise.allSettled([...site, ...code]).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        const kept = [SITE_CACHE, RUNTIME_CACHE, CODE_CACHE];
        if (name.startsWith(OURS) && !kept.includes(name)) await caches.delete(name);
        if (LEGACY.test(name)) await adoptLegacy(name);
      }
      await keepCode();
      await self.clients.claim();
    })(),
  );
});

/** A cache of the names before this site's path was in them: its pages under this scope move
 * into the site cache (its runtime files were never verified: they are dropped), the rest stays
 * for the site it belongs to; an emptied cache goes. */
async function adoptLegacy(name) {
  const legacy = await caches.open(name);
  const site = await caches.open(SITE_CACHE);
  for (const request of await legacy.keys()) {
    if (!request.url.startsWith(SCOPE)) continue;
    if (name.startsWith("rl-site-") && !(await site.match(request)))
      await site.put(request, await legacy.match(request));
    await legacy.delete(request);
  }
  if (!(await legacy.keys()).length) await caches.delete(name);
}

/** This version joins the code versions kept; the files of older ones than the last KEEP go. */
async function keepCode() {
  const cache = await caches.open(CODE_CACHE);
  const listed = await cache.match(VERSIONS).then(
    (r) => r?.json(),
    () => null,
  );
  const versions = [...(Array.isArray(listed) ? listed : []).filter((v) => v !== VERSION), VERSION].slice(-KEEP);
  await cache.put(VERSIONS, Response.json(versions));
  for (const request of await cache.keys()) {
    const v = new URL(request.url).searchParams.get("v");
    if (request.url !== VERSIONS && !versions.includes(v)) await cache.delete(request);
  }
}

/** Whether `response`'s bytes are those the build wrote for `url` (HASHES). */
async function verified(url, response) {
  const path = url.split("?")[0].slice(SCOPE.length);
  const digest = await crypto.subtle.digest("SHA-256", await response.clone().arrayBuffer());
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return HASHES[path] === hex;
}

/** `request` from `cache` if it is there and `trusted` (a check of the hit), else from the network
 * past the browser's HTTP cache (a host may keep an older deploy's file there for minutes); a hit
 * that is not trusted is deleted first. What comes is kept only if `keep` says so. */
async function cachedFirst(cacheName, request, trusted, keep) {
  const cache = await caches.open(cacheName);
  const hit = await cache.match(request);
  if (hit && (await trusted(hit))) return hit;
  if (hit) await cache.delete(request); // damaged, or written by someone else: fetched again
  const response = await fetch(request, { cache: "no-cache" });
  if (response.ok && (await keep(response))) await cache.put(request, response.clone());
  return response;
}

/** The runtime: from the cache, a hit only if it matches the build's hash; a miss is fetched,
 * verified, and only then cached (what fails to verify is served, never kept). */
function cacheFirst(request) {
  const ours = (response) => verified(request.url, response);
  return cachedFirst(RUNTIME_CACHE, request, ours, ours);
}

/** The code, by version: a version's file from the cache, else from the network; kept only when
 * it is this build's (its version, its hash), and a hit of this version served only if it still
 * matches. A page opened before a deploy finds its version's files here; one this worker never
 * kept comes from the network as the host has it now (js/worker.js then tells the page it was
 * updated). */
function codeFirst(request) {
  const thisVersion = new URL(request.url).searchParams.get("v") === VERSION;
  const ours = async (response) => thisVersion && (await verified(request.url, response));
  return cachedFirst(CODE_CACHE, request, async (hit) => !thisVersion || (await ours(hit)), ours);
}

async function networkFirst(request) {
  const cache = await caches.open(SITE_CACHE);
  try {
    const response = await fetch(request);
    if (response.ok) await cache.put(request, response.clone());
    return response;
  } catch (err) {
    const hit = await cache.match(request, { ignoreSearch: request.mode === "navigate" });
    if (hit) return hit;
    throw err;
  }
}

function fetchThrough(request) {
  const under = (paths) => paths.some((p) => request.url.startsWith(p));
  if (under(RUNTIME_PATHS)) return cacheFirst(request);
  if (under(CODE_PATHS) && new URL(request.url).searchParams.has("v")) return codeFirst(request);
  return networkFirst(request);
}

self.addEventListener("fetch", (event) => {
  const { request } = event;
  if (request.method !== "GET" || !request.url.startsWith(SCOPE)) return;
  event.respondWith(fetchThrough(request));
});

// A page that loaded before this worker controlled it sends the URLs it used, to be cached now.
self.addEventListener("message", (event) => {
  if (event.data?.type !== "cache" || !Array.isArray(event.data.urls)) return;
  const urls = event.data.urls.filter((u) => typeof u === "string" && u.startsWith(SCOPE));
  event.waitUntil(Promise.all(urls.map((u) => fetchThrough(new Request(u)).catch(() => null))));
});
