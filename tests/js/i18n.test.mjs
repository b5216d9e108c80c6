// js/i18n.js under Node's test runner: a day as each language writes it in full.
// Run: node --test tests/js/   (tests/test_js.py runs it as part of `make test`)

import assert from "node:assert/strict";
import { test } from "node:test";

const { day } = await import("../../js/i18n.js");

test("a day is written with its month's name, in the order of the page's language", () => {
  const date = new Date(2026, 11, 6, 10); // 6 December 2026, local time
  assert.equal(day(date, "en"), "6 Dec 2026");
  assert.equal(day(date, "zh"), "2026年12月6日");
  assert.equal(day(new Date(2027, 0, 12), "en"), "12 Jan 2027"); // never 1/12/2027 or 12/1/2027
});
