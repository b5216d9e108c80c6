// The service worker: the site keeps working offline once visited, and is never stale online.
//
// The build writes this file to the site's root as sw.js, with BUILD (a hash of every file the
// build wrote), RUNTIME (a hash of the Python runtime's files), RUNTIME_PATHS (their folders) and
// PRECACHE (what search needs) filled in; a new deploy changes BUILD, so browsers install the new worker, which deletes the
// old caches.
//
// - The Python runtime (assets/pyodide/, assets/wheels/): cache first. It is large and only
//   changes with RUNTIME, whose cache outlives deploys that leave it alone.
// - Everything else of this site (pages, CSS, JS, search index): network first, the cached copy
//   when the network fails, so a page is fresh whenever the network answers.
// - Other hosts: not touched.

const BUILD = "__BUILD__";
const RUNTIME = "__RUNTIME__";
const PRECACHE = ["__PRECACHE__"];
const SITE_CACHE = `rl-site-${BUILD}`;
const RUNTIME_CACHE = `rl-runtime-${RUNTIME}`;
const SCOPE = new URL("./", self.location).href;
const RUNTIME_PATHS = ["__RUNTIME_FOLDERS__"].map((p) => SCOPE + p);

self.addEventListener("install", (event) => {
  // search's index and scripts, fetched by its worker where this one cannot see them
  event.waitUntil(
    caches
      .open(SITE_CACHE)
      .then((cache) => cache.addAll(PRECACHE.map((p) => SCOPE + p)))
      .catch(() => null) // offline search is a bonus: never block the install on it
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith("rl-") && name !== SITE_CACHE && name !== RUNTIME_CACHE) {
          await caches.delete(name);
        }
      }
      await self.clients.claim();
    })(),
  );
});

async function cacheFirst(request) {
  const cache = await caches.open(RUNTIME_CACHE);
  const hit = await cache.match(request);
  if (hit) return hit;
  const response = await fetch(request);
  if (response.ok) await cache.put(request, response.clone());
  return response;
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

const fetchThrough = (request) =>
  RUNTIME_PATHS.some((p) => request.url.startsWith(p)) ? cacheFirst(request) : networkFirst(request);

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
