// On every page: register the service worker (sw.js at the site's root) that keeps the pages
// visited and the Python runtime for offline use (see js/sw.js). A page that loaded before the
// worker took control hands it the URLs it used, so this very page works offline too.

import { siteConfig } from "./dom.js";

const config = siteConfig();

if ("serviceWorker" in navigator && window.isSecureContext && config.base) {
  const base = new URL(config.base, location.href);
  const controlled = Boolean(navigator.serviceWorker.controller);
  const register = () =>
    navigator.serviceWorker.register(new URL("sw.js", base)).catch(() => {
      /* no offline copy (private mode, disabled storage): the site works as before */
    });
  // once the page has loaded: what the worker keeps at install never competes with the page's own
  if (document.readyState === "complete") register();
  else window.addEventListener("load", register, { once: true });
  if (!controlled) {
    navigator.serviceWorker.ready.then((registration) => {
      const urls = [location.href, ...performance.getEntriesByType("resource").map((e) => e.name)];
      registration.active?.postMessage({ type: "cache", urls });
    });
  }
}
