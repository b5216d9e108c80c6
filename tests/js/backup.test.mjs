// js/backup.js under Node's test runner: the progress file out and back in, and every rule by which
// an import merges into what a browser already keeps without losing any of it. Storage is a Map.
// Run: node --test tests/js/   (tests/test_js.py runs it as part of `make test`)

import assert from "node:assert/strict";
import { describe, test } from "node:test";

const { applyImport, exportProgress, FORMAT, planImport, VERSION } = await import("../../js/backup.js");

const P = "rl-ops/"; // a site at the origin's root
const CURRENT = { "ppo/gae": "v2", "ppo/ratio": "v1" };
const WORK = { version: "v2", blanks: ["a", "b"], editor: null, editing: false };

/** A Map of `entries` (values as JSON text) under `prefix`. */
const storage = (entries, prefix = P) =>
  new Map(Object.entries(entries).map(([k, v]) => [prefix + k, typeof v === "string" ? v : JSON.stringify(v)]));

/** `entries` as a file of this site. */
const fileOf = (entries) => ({ format: FORMAT, version: VERSION, exported: "2026-12-02T00:00:00.000Z", entries });

/** Import `file` into `store` as the page does; returns the counts. */
function imported(file, store, prefix = P) {
  const plan = planImport(file, store, prefix, CURRENT, 7);
  assert.equal(plan.error, undefined);
  assert.equal(applyImport(plan.writes, store), true);
  return plan.counts;
}

const read = (store, key, prefix = P) => JSON.parse(store.get(prefix + key));

describe("export, then import", () => {
  test("into an empty browser of a copy at another path restores every record", () => {
    const mine = storage({
      "cell/ppo/gae": WORK,
      "solved/ppo/gae": { version: "v2" },
      "drill/ppo/gae": { version: "v2", best: 80, attempts: 3 },
      "drill/misses": { "torch.exp": 2 },
      copied: "1",
      "cell/ppo/ratio/unreadable/5": "{not json",
    });
    const file = exportProgress(mine, P, new Date("2026-12-02T00:00:00Z"));
    assert.equal(file.format, FORMAT);
    assert.equal(file.exported, "2026-12-02T00:00:00.000Z");
    // the prefix's own marker and a value that is not JSON stay out
    assert.deepEqual(Object.keys(file.entries).sort(), [
      "cell/ppo/gae",
      "drill/misses",
      "drill/ppo/gae",
      "solved/ppo/gae",
    ]);
    const other = new Map();
    const counts = imported(JSON.parse(JSON.stringify(file)), other, "rl-ops@/b/");
    assert.deepEqual(counts, { added: 4, merged: 0, aside: 0, older: 0, skipped: 0 });
    for (const key of Object.keys(file.entries)) assert.deepEqual(read(other, key, "rl-ops@/b/"), file.entries[key]);
  });

  test("the same file twice changes nothing the second time", () => {
    const store = new Map();
    const file = fileOf({ "cell/ppo/gae": WORK, "drill/misses": { x: 1 } });
    imported(file, store);
    const plan = planImport(file, store, P, CURRENT, 8);
    assert.deepEqual(plan.writes, []);
  });
});

describe("merging into what the browser keeps", () => {
  test("a drill's records of one version: the best score and the most attempts", () => {
    const store = storage({ "drill/ppo/gae": { version: "v2", best: 60, attempts: 9 } });
    const counts = imported(fileOf({ "drill/ppo/gae": { version: "v2", best: 90, attempts: 2 } }), store);
    assert.deepEqual(read(store, "drill/ppo/gae"), { version: "v2", best: 90, attempts: 9 });
    assert.equal(counts.merged, 1);
  });

  test("tokens missed: every token, the most times each", () => {
    const store = storage({ "drill/misses": { a: 3, b: 1 } });
    imported(fileOf({ "drill/misses": { b: 4, c: 2 } }), store);
    assert.deepEqual(read(store, "drill/misses"), { a: 3, b: 4, c: 2 });
  });

  test("older versions' saved work: every version kept, this browser's where both have one", () => {
    const old = (blank) => ({ ...WORK, version: "v1", blanks: [blank] });
    const store = storage({ "cell/ppo/gae/previous": { v1: old("mine") } });
    imported(fileOf({ "cell/ppo/gae/previous": { v1: old("theirs"), v0: { ...old("x"), version: "v0" } } }), store);
    assert.deepEqual(Object.keys(read(store, "cell/ppo/gae/previous")).sort(), ["v0", "v1"]);
    assert.deepEqual(read(store, "cell/ppo/gae/previous").v1.blanks, ["mine"]);
  });

  test("a pass of the current version wins over one of an older version, which is kept beside it", () => {
    const store = storage({ "solved/ppo/gae": { version: "v1" } });
    const counts = imported(fileOf({ "solved/ppo/gae": { version: "v2" } }), store);
    assert.deepEqual(read(store, "solved/ppo/gae"), { version: "v2" });
    assert.deepEqual(read(store, "solved/ppo/gae/imported/7"), { version: "v1" });
    assert.equal(counts.aside, 1);
  });

  test("two different works of one version: this browser's stays, the file's is kept beside it", () => {
    const store = storage({ "cell/ppo/gae": WORK });
    const theirs = { ...WORK, blanks: ["c", "d"] };
    const counts = imported(fileOf({ "cell/ppo/gae": theirs }), store);
    assert.deepEqual(read(store, "cell/ppo/gae"), WORK);
    assert.deepEqual(read(store, "cell/ppo/gae/imported/7"), theirs);
    assert.deepEqual(counts, { added: 0, merged: 0, aside: 1, older: 0, skipped: 0 });
  });

  test("two review schedules of one version: the one reviewed last is kept", () => {
    const card = (last, due) => ({ version: "v2", card: { due, last_review: last, reps: 1 } });
    const store = storage({ "review/ppo/gae": card("2026-12-01T00:00:00Z", "2026-12-03T00:00:00Z") });
    imported(fileOf({ "review/ppo/gae": card("2026-12-05T00:00:00Z", "2026-12-20T00:00:00Z") }), store);
    assert.equal(read(store, "review/ppo/gae").card.due, "2026-12-20T00:00:00Z");
    imported(fileOf({ "review/ppo/gae": card("2026-11-01T00:00:00Z", "2026-11-03T00:00:00Z") }), store);
    assert.equal(read(store, "review/ppo/gae").card.due, "2026-12-20T00:00:00Z");
  });

  test("records of an older version are imported and counted as older", () => {
    const counts = imported(fileOf({ "drill/ppo/gae/v/v1": { version: "v1", best: 50, attempts: 1 } }), new Map());
    assert.equal(counts.older, 1);
    assert.equal(counts.added, 1);
  });

  test("a value this browser cannot read is set aside as it was, and the file's takes its place", () => {
    const store = storage({ "drill/misses": "{broken" });
    imported(fileOf({ "drill/misses": { a: 1 } }), store);
    assert.deepEqual(read(store, "drill/misses"), { a: 1 });
    assert.equal(store.get(`${P}drill/misses/unreadable/7`), "{broken");
  });
});

describe("a bad file changes nothing and says why", () => {
  test("not a progress file, or damaged", () => {
    for (const file of [
      null,
      [],
      "x",
      { format: "other" },
      { format: FORMAT, version: 1 },
      { format: FORMAT, entries: {} },
    ])
      assert.deepEqual(planImport(file, new Map(), P, CURRENT), { error: "format" });
  });

  test("a file of a later layout is refused whole, never half read", () => {
    assert.deepEqual(planImport({ ...fileOf({}), version: VERSION + 1 }, new Map(), P, CURRENT), { error: "newer" });
  });

  test("entries that are not what their key holds are skipped and counted", () => {
    const file = fileOf({
      "drill/ppo/gae": { version: "v2", best: 1e308, attempts: 1 },
      "cell/ppo/gae": { version: "v2", blanks: [1] },
      "drill/misses": { a: -1 },
      "solved/ppo/ratio": { version: "v1" },
    });
    const store = new Map();
    const counts = imported(file, store);
    assert.deepEqual(counts, { added: 1, merged: 0, aside: 0, older: 0, skipped: 3 });
    assert.deepEqual([...store.keys()], [`${P}solved/ppo/ratio`]);
  });

  test("storage that refuses a write: nothing of the import stays", () => {
    const store = storage({ "cell/ppo/gae": WORK });
    const plan = planImport(
      fileOf({ "solved/ppo/gae": { version: "v2" }, "drill/misses": { a: 1 } }),
      store,
      P,
      CURRENT,
      7,
    );
    let writes = 0;
    const full = new Map(store);
    full.set = function (key, value) {
      if (++writes > 1) throw new Error("QuotaExceededError");
      return Map.prototype.set.call(this, key, value);
    };
    assert.equal(applyImport(plan.writes, full), false);
    assert.deepEqual([...full.keys()], [...store.keys()]);
  });
});
