// Spaced review: every exercise the learner practised comes back when they are about to forget it.
// An exercise becomes a review item when its Check passes, or when its drill's first check of a
// mask misses a token; the schedule is FSRS's (npm `ts-fsrs`, loaded only when a schedule
// changes), kept per exercise in localStorage (dom.js STORAGE.review). The home page lists what is
// due today (js/progress.js: a date compare, no FSRS); a review is the exercise's drill, whose
// mask holds the learner's weak tokens first (js/drill.js), and its first check reschedules it.
// Practice between reviews leaves the schedule alone; nothing is scheduled for a learner who
// never practised.
//
// Stored: {version, card}: the ts-fsrs card, its dates as ISO strings (JSON).

import { isRecord, loadJSON, STORAGE, saveJSON } from "./dom.js";

// days, not minutes: a passed exercise comes back in days (no same-day learning steps); no fuzz,
// so a schedule is the same in every browser and test
const PARAMETERS = { enable_fuzz: false, learning_steps: [], relearning_steps: [] };
// a drill's score (per cent of its mask right) as an FSRS grade
export const grade = (score) => (score === 100 ? "Good" : score >= 50 ? "Hard" : "Again");

export const validReview = (v) =>
  isRecord(v) && typeof v.version === "string" && isRecord(v.card) && !Number.isNaN(Date.parse(v.card.due));

/** The record after a review graded `rating` ("Again" | "Hard" | "Good" | "Easy") at `now`
 * (a new card when `stored` is null); `lib` is ts-fsrs. */
export function reviewed(lib, stored, version, rating, now) {
  const scheduler = lib.fsrs(lib.generatorParameters(PARAMETERS));
  const card = stored
    ? {
        ...stored.card,
        due: new Date(stored.card.due),
        last_review: stored.card.last_review && new Date(stored.card.last_review),
      }
    : lib.createEmptyCard(now);
  const { card: next } = scheduler.next(card, now, lib.Rating[rating]);
  return { version, card: JSON.parse(JSON.stringify(next)) };
}

/** Whether a review on `due` (a date, or its ISO text) is due by the end of `now`'s day (the
 * learner's own day). */
export function isDue(due, now = new Date()) {
  const endOfDay = new Date(now);
  endOfDay.setHours(23, 59, 59, 999);
  return new Date(due) <= endOfDay;
}

/**
 * Exercise `id` (of `version`) was practised at `now` and graded `rating`: a new item (unless
 * `create` is false: a drill with no miss makes none), or a due item's review. An item not due
 * yet, or of an older version, is left as it is (an older version's starts again). Resolves to
 * the record kept.
 */
export async function practised(id, version, rating, { create = true, now = new Date() } = {}) {
  const key = STORAGE.review + id;
  let stored = loadJSON(key, null, validReview);
  if (stored && stored.version !== version) stored = null; // the exercise changed: a new item
  if (stored ? !isDue(stored.card.due, now) : !create) return stored;
  let lib;
  try {
    lib = await import("../ts-fsrs/index.mjs");
  } catch {
    return stored; // offline with no service worker to have kept the scheduler: not scheduled
  }
  const record = reviewed(lib, stored, version, rating, now);
  saveJSON(key, record);
  return record;
}

/** The review items among `exercises` ({id, version}), soonest first: [{id, due}] (a schedule of
 * an older version of its exercise is no item). */
export function scheduled(exercises) {
  return exercises
    .map(({ id, version }) => ({ id, stored: loadJSON(STORAGE.review + id, null, validReview), version }))
    .filter(({ stored, version }) => stored && stored.version === version)
    .map(({ id, stored }) => ({ id, due: new Date(stored.card.due) }))
    .sort((a, b) => a.due - b.due);
}
