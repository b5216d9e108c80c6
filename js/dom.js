// Small helpers every widget shares: building elements (text only ever through textContent) and
// keeping JSON in localStorage, where a full or disabled storage never breaks the page.

/** A new element with string attributes and, optionally, text. */
export function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text) node.textContent = text;
  return node;
}

/** The JSON stored under `key`, or `fallback` when there is none (or it cannot be read). */
export function loadJSON(key, fallback = null) {
  try {
    return JSON.parse(localStorage.getItem(key)) ?? fallback;
  } catch {
    return fallback;
  }
}

/** Store `value` as JSON under `key`; `undefined` removes the key. */
export function saveJSON(key, value) {
  try {
    if (value === undefined) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(value));
  } catch {
    /* storage full or disabled: the widget still works, it just forgets */
  }
}
