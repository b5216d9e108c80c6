// js/review.js under Node's test runner: the FSRS schedule an exercise gets when it is practised,
// with ts-fsrs from node_modules (the site serves the same file), and when an item is due.
// Run: node --test tests/js/   (tests/test_js.py runs it as part of `make test`)

import assert from "node:assert/strict";
import { test } from "node:test";

const lib = await import("ts-fsrs");
const { grade, isDue, reviewed, validReview } = await import("../../js/review.js");

const NOW = new Date("2026-12-02T10:00:00");
const days = (a, b) => Math.round((new Date(b) - new Date(a)) / 86_400_000);

test("a passed exercise comes back in days, not minutes, and a good review pushes it further", () => {
  const first = reviewed(lib, null, "v1", "Good", NOW);
  assert.ok(validReview(first));
  assert.equal(first.version, "v1");
  const gap = days(NOW, first.card.due);
  assert.ok(gap >= 1, `due after ${gap} days`);
  const due = new Date(first.card.due);
  const second = reviewed(lib, first, "v1", "Good", due);
  assert.ok(days(due, second.card.due) > gap, "a second good review waits longer than the first");
  const lapse = reviewed(lib, second, "v1", "Again", new Date(second.card.due));
  assert.ok(days(second.card.due, lapse.card.due) < days(due, second.card.due), "a miss comes back sooner");
  assert.equal(lapse.card.lapses, 1);
});

test("the same practice gives the same schedule in every browser (no fuzz)", () => {
  assert.deepEqual(reviewed(lib, null, "v1", "Hard", NOW), reviewed(lib, null, "v1", "Hard", NOW));
});

test("a drill's score grades the review: all right is good, half is hard, less is again", () => {
  assert.deepEqual([100, 99, 50, 49, 0].map(grade), ["Good", "Hard", "Hard", "Again", "Again"]);
});

test("an item is due on its day, from the start of that day", () => {
  const due = "2026-12-05T18:00:00";
  assert.equal(isDue(due, new Date("2026-12-04T23:00:00")), false);
  assert.equal(isDue(due, new Date("2026-12-05T08:00:00")), true);
  assert.equal(validReview({ version: "v1", card: { due: "not a date" } }), false);
});
