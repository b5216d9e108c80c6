// Progress that moves: everything the site keeps in this browser (saved work, passed exercises,
// drill records, missed tokens: dom.js STORAGE) as one file, and a file merged back, in this
// browser or another. Nothing is lost by an import:
//   - what the file has and this browser lacks is added;
//   - two records of a drill's same version are merged (the best score, the most attempts), and so
//     are the tokens missed (the most times each) and the older versions' saved work; of two review
//     schedules of one version, the one reviewed last is kept;
//   - a record of an exercise's current version wins over one of an older version;
//   - otherwise this browser's record stays, and the file's is kept beside it, under
//     `<key>/imported/<time>` (a later export carries it too).
// The home page's progress widget (js/progress.js) offers both; these functions are pure but for
// the storage they are given (Node tests drive them with a Map).
//
// File: {format: FORMAT, version: 1, exported: ISO time, entries: {key: value}}; the keys lack the
// site's prefix (dom.js PREFIX), so a file moves between copies of the site at other paths.

import { ASIDE, isRecord, KEYS, validDrillRecord, validMisses, validWork } from "./dom.js";
import { validReview } from "./review.js";

export const FORMAT = "rl-ops-progress";
export const VERSION = 1; // of the file's layout; a file of a later one is refused, never half read

// What a key holds, by the key (without the prefix): [which keys, what their values must be (the
// rest is skipped), how two differing values of a key are merged (null: they are not)]. A key of
// no kind here (one kept aside, or of a later site) is taken as it is, and never merged.
const KINDS = [
  [
    (k) => k.endsWith(ASIDE.previous),
    (v) => isRecord(v) && Object.values(v).every(validWork),
    (a, b) => union(a, b, (x) => x),
  ],
  [(k) => k === KEYS.drillMisses, validMisses, (a, b) => union(a, b, Math.max)],
  [(k) => k.startsWith(KEYS.drillTyped), isRecord, () => null],
  [(k) => k.startsWith(KEYS.drill), validDrillRecord, sameDrill],
  [(k) => k.startsWith(KEYS.solved), (v) => isRecord(v) && typeof v.version === "string", () => null],
  [(k) => k.startsWith(KEYS.cell), validWork, () => null],
  [(k) => k.startsWith(KEYS.review), validReview, laterReview],
];
const ANY = [null, () => true, () => null];
const kindOf = (key) => (key.includes(ASIDE.imported) ? ANY : (KINDS.find(([which]) => which(key)) ?? ANY));
// the exercise a record belongs to: cell/<id>, solved/<id>, drill/<id>, drill/<id>/v/<version>
const RECORD_OF = new RegExp(`^(${[KEYS.cell, KEYS.solved, KEYS.drill, KEYS.review].join("|")})`);
const OLDER = new RegExp(`${ASIDE.version}[^/]+$`);
const exerciseOf = (key) => key.replace(RECORD_OF, "").replace(OLDER, "");

/** `mine` with every entry of `theirs` it lacks, and `both(mine's, theirs)` where both have one. */
function union(mine, theirs, both) {
  const out = { ...mine };
  for (const [k, v] of Object.entries(theirs)) out[k] = Object.hasOwn(out, k) ? both(out[k], v) : v;
  return out;
}

/** Two schedules of one exercise's version: the one reviewed last (it knows every review since). */
function laterReview(mine, theirs) {
  if (mine.version !== theirs.version) return null;
  const last = (r) => Date.parse(r.card.last_review ?? 0) || 0;
  return last(theirs) > last(mine) ? theirs : mine;
}

/** Two records of one drill: merged when of its same version (the best score, the most attempts). */
function sameDrill(mine, theirs) {
  if (mine.version !== theirs.version) return null;
  const bests = [mine.best, theirs.best].filter((b) => b !== null);
  return {
    ...mine,
    best: bests.length ? Math.max(...bests) : null,
    attempts: Math.max(mine.attempts, theirs.attempts),
  };
}

/** The file of everything `storage` (localStorage, or a Map) keeps under `prefix`. Values that
 * are not JSON (those set aside as unreadable) stay out. */
export function exportProgress(storage, prefix, now = new Date()) {
  const entries = {};
  for (const key of keysOf(storage)) {
    if (!key.startsWith(prefix) || key === `${prefix}copied`) continue;
    try {
      entries[key.slice(prefix.length)] = JSON.parse(getOf(storage, key));
    } catch {
      /* an unreadable value, kept aside in this browser */
    }
  }
  return { format: FORMAT, version: VERSION, exported: now.toISOString(), entries };
}

/**
 * What importing `file` (parsed JSON) into `storage` would write: {writes: [[key, text]], counts:
 * {added, merged, aside, older, skipped}}, or {error: "format" | "newer"} (nothing is written).
 * `current`: each exercise's current version, by id (a record of another version is imported,
 * and counted as older: the pages keep such records but do not count them).
 */
export function planImport(file, storage, prefix, current, now = Date.now()) {
  if (!isRecord(file) || file.format !== FORMAT || !Number.isInteger(file.version) || !isRecord(file.entries))
    return { error: "format" };
  if (file.version > VERSION) return { error: "newer" };
  const writes = [];
  const counts = { added: 0, merged: 0, aside: 0, older: 0, skipped: 0 };
  const write = (key, value) => writes.push([prefix + key, JSON.stringify(value)]);
  for (const [key, theirs] of Object.entries(file.entries)) {
    const [, valid, merge] = kindOf(key);
    if (!valid(theirs)) {
      counts.skipped++;
      continue;
    }
    const id = exerciseOf(key);
    const latest = (v) => isRecord(v) && v.version === current[id];
    if (isRecord(theirs) && typeof theirs.version === "string" && id in current && !latest(theirs)) counts.older++;
    const raw = getOf(storage, prefix + key);
    let mine = null;
    try {
      mine = JSON.parse(raw ?? "null");
    } catch {
      writes.push([`${prefix}${key}${ASIDE.unreadable}${now}`, raw]); // as readJSON sets one aside
    }
    const merged = mine !== null && valid(mine) ? merge(mine, theirs) : null;
    if (mine === null) {
      write(key, theirs);
      counts.added++;
    } else if (JSON.stringify(mine) === JSON.stringify(theirs)) {
      /* the same record */
    } else if (merged !== null) {
      write(key, merged);
      counts.merged++;
    } else if (latest(theirs) && !latest(mine)) {
      write(`${key}${ASIDE.imported}${now}`, mine); // this browser's is of an older version: kept beside
      write(key, theirs);
      counts.aside++;
    } else {
      write(`${key}${ASIDE.imported}${now}`, theirs);
      counts.aside++;
    }
  }
  return { writes, counts };
}

/** Write a plan's writes to `storage`, all or none: true, or false when storage refused one (what
 * was written of it is undone). */
export function applyImport(writes, storage) {
  const before = writes.map(([key]) => [key, getOf(storage, key)]);
  try {
    for (const [key, text] of writes) setOf(storage, key, text);
    return true;
  } catch {
    for (const [key, value] of before) {
      try {
        if (value === null) removeOf(storage, key);
        else setOf(storage, key, value);
      } catch {
        /* storage refuses even this: what was there is still there */
      }
    }
    return false;
  }
}

// a Storage (localStorage) or a Map (the Node tests)
const keysOf = (s) => (s instanceof Map ? [...s.keys()] : Object.keys(s));
const getOf = (s, k) => (s instanceof Map ? (s.get(k) ?? null) : s.getItem(k));
const setOf = (s, k, v) => (s instanceof Map ? s.set(k, v) : s.setItem(k, v));
const removeOf = (s, k) => (s instanceof Map ? s.delete(k) : s.removeItem(k));
