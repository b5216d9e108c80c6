// The job layer of js/python.js under Node's test runner, with a scripted stand-in for the worker:
// every move of JOB_STATES, and every way a job ends (done, failed, stopped before and while it
// runs, timed out, a silent worker, an interrupt that does not land, a restart the worker asks for),
// the workers' lives (the judge's makes the boot image; one per job that runs learner code, each
// from the image), the image kept across pages, and what the page drops of what a worker says.
// Run: node --test tests/js/   (tests/test_js.py runs it as part of `make test`)

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, mock, test } from "node:test";

// ---- a worker the test speaks for --------------------------------------------------------------

const workers = [];

class FakeWorker {
  constructor(url, options) {
    this.url = String(url);
    this.options = options;
    this.terminated = false;
    this.jobs = []; // what the page sent on the private port
    workers.push(this);
  }

  postMessage(message, transfer) {
    // the page's first message hands over its end of the private channel
    assert.equal(message.type, "init");
    this.config = message.config;
    this.port = transfer[0];
    this.port.onmessage = (event) => this.jobs.push(event.data);
  }

  terminate() {
    this.terminated = true;
    this.port?.close();
  }

  /** Answer the page as js/worker.js would. */
  send(message) {
    this.port.postMessage(message);
  }
}

globalThis.Worker = FakeWorker;
globalThis.self = globalThis;

const { INTERRUPT_GRACE_MS, PythonRuntime, SIGNAL_AGAIN_MS } = await import("../../js/python.js");
const { JOB_STATES, Job, OUTPUT } = await import("../../js/job.js");

/** A Run job of `code` given to `rt` (js/runtime.js's start() does the same in a page). */
function run(rt, code, limits = {}) {
  return rt.submit(new Job("run", { code, parts: [] }, limits));
}

/** Let messages on the ports and promise callbacks run (setImmediate is never mocked here). */
async function settle(until = () => true) {
  // bounded by time, not by turns: crypto.subtle's digests (the boot image's) finish off the event
  // loop, in as many turns as the machine's load makes it (200 turns once fell short)
  const deadline = Date.now() + 10_000;
  while (!until() && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/** `job`'s outcome once it is over, after checking its final `state` and each of `fields`. */
async function ended(job, state, fields = {}) {
  const outcome = await job.done;
  assert.equal(outcome.state, state);
  for (const [key, value] of Object.entries(fields)) assert.deepEqual(outcome[key], value, key);
  return outcome;
}

/** A failure's code: its kind, and its watchdog where a watchdog fired (js/job.js FAILURES). */
const pick = ({ kind, watchdog }) => (watchdog === undefined ? { kind } : { kind, watchdog });

const runtimes = [];

function runtime({ isolated = false, imageCache = undefined } = {}) {
  globalThis.crossOriginIsolated = isolated;
  const rt = new PythonRuntime({ indexURL: "http://x/", wheelUrl: "http://x/w.whl", imageCache });
  runtimes.push(rt);
  return rt;
}

// what the judge's worker sends as its make job's answer (js/boot.js handOff makes the real one)
const IMAGE = { snapshot: new Blob([new Uint8Array([1, 2, 3, 4])]), handles: { 1: "lib.so" } };

const taken = new Set(); // the make jobs makeJob() has handed out

/** The judge's worker once a make job not handed out yet has arrived, and that job. */
async function makeJob() {
  const fresh = (w) => w.config.judge && w.jobs.some((j) => j.kind === "make" && !taken.has(j));
  await settle(() => workers.some(fresh));
  const maker = workers.find(fresh);
  assert.ok(maker, "no make job reached a judge's worker within 10 s");
  const msg = maker.jobs.find((j) => j.kind === "make" && !taken.has(j));
  taken.add(msg);
  return { maker, msg };
}

/** Answer the next make job as js/worker.js would: ack, the image, done. Returns its worker. */
async function answerMake({ made = true, job = null } = {}) {
  const { maker, msg } = job ?? (await makeJob());
  maker.send({ id: msg.id, type: "ack" });
  maker.send({ id: msg.id, type: "image", image: IMAGE, made });
  maker.send({ id: msg.id, type: "done", outcome: { ok: true } });
  return maker;
}

/** A runtime whose boot image is there (its judge's worker made it), no job run yet. */
async function ready({ isolated = false } = {}) {
  const rt = runtime({ isolated });
  const making = rt.judge.make();
  await answerMake();
  assert.equal(await making, null);
  return rt;
}

/** The current worker and the latest job message it received (waits for one to arrive). */
async function sent() {
  const w0 = workers.at(-1);
  const n0 = w0?.jobs.length ?? 0;
  await settle(() => {
    const w = workers.at(-1);
    return w && (w !== w0 ? w.jobs.length > 0 : w.jobs.length > n0);
  });
  const worker = workers.at(-1);
  return { worker, msg: worker.jobs.at(-1) };
}

/** A Run job of `code` on a new runtime with its boot image, once the job's worker has it: `msg`
 * is what the worker got. */
async function submitted(code, { isolated = false, limits = {} } = {}) {
  const rt = await ready({ isolated });
  const job = run(rt, code, limits);
  const { worker, msg } = await sent();
  return { rt, job, worker, msg };
}

/** A runtime whose first job ran in a worker from the boot image: its spare, started from the
 * image ahead of the next job, is `spare`. */
async function withSpare() {
  const { rt, job, worker, msg } = await submitted("1");
  worker.send({ id: msg.id, type: "ack" });
  worker.send({ id: msg.id, type: "done", outcome: { ok: true } });
  await ended(job, "done");
  await settle(() => workers.length === 3); // the judge's, the job's, the spare
  return { rt, worker, spare: workers.at(-1) };
}

/** A job of `code` on an isolated page (an interrupt buffer), acknowledged and running. */
async function runningIsolated(code) {
  const { rt, job, worker, msg } = await submitted(code, { isolated: true });
  worker.send({ id: msg.id, type: "ack" });
  worker.send({ type: "progress", ready: true });
  worker.send({ id: msg.id, type: "started" });
  await settle();
  return { rt, job, worker, msg };
}

beforeEach(() => {
  workers.length = 0;
});

afterEach(() => {
  mock.timers.reset();
  // close every port, so nothing keeps Node running
  for (const rt of runtimes.splice(0)) rt._terminate();
  for (const worker of workers) worker.port?.close();
});

// ---- the state machine itself ------------------------------------------------------------------

describe("Job.move", () => {
  const states = Object.keys(JOB_STATES);

  /** A new job moved from queued to `state` along allowed moves (the shortest way). */
  function jobIn(state) {
    const paths = [["queued"]];
    while (paths[0].at(-1) !== state) {
      const path = paths.shift();
      for (const next of JOB_STATES[path.at(-1)]) paths.push([...path, next]);
    }
    const job = new Job("run", {});
    for (const next of paths[0].slice(1)) assert.ok(job.move(next));
    return job;
  }

  for (const from of states) {
    for (const to of states) {
      const allowed = JOB_STATES[from].includes(to);
      test(`${from} -> ${to} is ${allowed ? "allowed" : "refused"}`, () => {
        const job = jobIn(from);
        assert.equal(job.state, from);
        assert.equal(job.move(to), allowed);
        assert.equal(job.state, allowed ? to : from);
      });
    }
  }

  test("a final state resolves `done` with the outcome and the state", async () => {
    const seen = [];
    const job = new Job("run", {});
    job.on((e) => e.type === "state" && seen.push(e.state));
    job.move("running");
    job.move("finishing");
    job.move("done", { ok: true, result: 3 });
    assert.deepEqual(await job.done, { ok: true, result: 3, state: "done" });
    assert.deepEqual(seen, ["running", "finishing", "done"]);
    assert.equal(job.over, true);
    assert.equal(job.move("failed"), false); // never leaves a final state
  });

  test("the final states are exactly those with no way out", () => {
    const final = Object.entries(JOB_STATES)
      .filter(([, next]) => !next.length)
      .map(([s]) => s);
    assert.deepEqual(final.sort(), ["done", "failed", "stopped", "timed-out"]);
  });
});

// ---- the runtime's jobs --------------------------------------------------------------------------

describe("PythonRuntime", () => {
  test("queued -> running -> done: ack, started, output, done; the next job follows", async () => {
    const rt = await ready();
    const out = [];
    const first = run(rt, "print(1)");
    first.on((e) => e.type === "output" && out.push(e.text));
    const second = run(rt, "print(2)");
    const { worker, msg } = await sent();
    assert.equal(msg.kind, "run");
    assert.equal(msg.code, "print(1)");
    assert.equal(worker.jobs.length, 1); // one job at a time
    worker.send({ id: msg.id, type: "ack" });
    worker.send({ type: "progress", ready: true });
    await settle();
    assert.equal(first.state, "queued"); // acknowledged, its code not started
    worker.send({ id: msg.id, type: "started" });
    worker.send({ id: msg.id, type: "output", stream: "stdout", text: "1\n" });
    await settle();
    assert.equal(first.state, "running");
    worker.send({ id: msg.id, type: "done", outcome: { ok: true } });
    await ended(first, "done", { ok: true });
    assert.deepEqual(out, ["1\n"]);
    const next = await sent();
    assert.equal(next.msg.id, second.id);
    // the worker that ran learner code ended with its job: the next job has a worker of its own
    assert.equal(worker.terminated, true);
    assert.notEqual(next.worker, worker);
    assert.equal(rt.workers, 2);
  });

  test("the judge's worker makes the boot image and runs no job; every job's worker starts from the image", async () => {
    const rt = runtime();
    const job = run(rt, "1");
    const { maker, msg } = await makeJob();
    assert.equal(maker.config.judge, true);
    assert.equal(maker.config.image, null); // it loads the long way
    assert.equal(msg.stored, null); // no earlier page's image (no Cache Storage here)
    assert.equal(workers.length, 1); // the job waits for the image: no worker of its own yet
    assert.equal(job.state, "queued");
    await answerMake({ job: { maker, msg } });
    const { worker, msg: sentJob } = await sent();
    assert.notEqual(worker, maker); // no job runs where the image was made
    assert.deepEqual(worker.config.image, IMAGE);
    assert.equal(sentJob.code, "1");
    worker.send({ id: sentJob.id, type: "done", outcome: { ok: true } });
    await ended(job, "done");
    await settle(() => workers.length === 3);
    const spare = workers.at(-1); // started ahead of any job, from the image
    assert.deepEqual(spare.config.image, IMAGE);
    assert.equal(spare.jobs.length, 0);
    assert.equal(rt.images, 1);
    assert.deepEqual(
      maker.jobs.map((j) => j.kind),
      ["make"],
    );
    assert.equal(maker.terminated, false); // it stays, as the judge
  });

  test("a failed make fails the job that waited for it, and the next job makes the image again", async () => {
    const rt = runtime();
    const first = run(rt, "1");
    const { maker, msg } = await makeJob();
    const failure = { kind: "load", what: "numpy.whl", message: "offline" };
    maker.send({ id: msg.id, type: "done", outcome: { ok: false, failure } });
    assert.deepEqual((await ended(first, "failed")).failure, failure);
    assert.equal(maker.terminated, true);
    const second = run(rt, "2");
    const again = await answerMake();
    assert.notEqual(again, maker);
    const { worker, msg: sentJob } = await sent();
    worker.send({ id: sentJob.id, type: "done", outcome: { ok: true } });
    await ended(second, "done");
  });

  test("a make job whose worker never answers fails the waiting job as a worker that does not answer", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    const rt = runtime();
    const job = run(rt, "1");
    await makeJob();
    mock.timers.tick(5000);
    assert.deepEqual(pick((await ended(job, "failed")).failure), { kind: "stuck", watchdog: "ack" });
  });

  test("check sends the exercise id with the code", async () => {
    const rt = await ready();
    rt.submit(new Job("check", { exercise: "ppo/compute_gae", code: "def f(): pass", parts: [] }));
    const { msg } = await sent();
    assert.equal(msg.kind, "check");
    assert.equal(msg.exercise, "ppo/compute_gae");
  });

  test("Check's verdict is the judge's: the worker that made the image gets phase 1 as data", async () => {
    const rt = runtime();
    const payload = { exercise: "ppo/compute_gae", code: "def f(): pass", parts: [], seed: 7 };
    const job = rt.submit(new Job("check", payload));
    const judgeWorker = await answerMake({ made: false }); // an earlier page's, kept
    const { worker, msg } = await sent();
    worker.send({ id: msg.id, type: "ack" });
    worker.send({ id: msg.id, type: "started" });
    const phase1 = { outputs: [{ shape: [1], data: [0.5] }], error: null, shrunk: null };
    // what the learner's worker says besides phase 1 (a forged verdict) is not the verdict
    worker.send({ id: msg.id, type: "done", outcome: { ok: true, result: { phase1, passed: 36, total: 36 } } });
    await settle(() => judgeWorker.jobs.some((j) => j.kind === "verdict"));
    assert.equal(worker.config.judge, undefined);
    assert.equal(job.state, "finishing"); // the code is over; the verdict is not in yet
    assert.equal(rt.images, 0); // no long load: the image was kept from an earlier page
    const verdict = judgeWorker.jobs.find((j) => j.kind === "verdict");
    assert.deepEqual([verdict.exercise, verdict.seed, verdict.phase1], ["ppo/compute_gae", 7, phase1]);
    // the next job runs meanwhile, in a worker of its own
    const next = run(rt, "2");
    const { worker: other, msg: second } = await sent();
    assert.notEqual(other, worker);
    assert.equal(second.code, "2");
    judgeWorker.send({ id: verdict.id, type: "ack" });
    judgeWorker.send({ id: verdict.id, type: "done", outcome: { ok: true, result: { passed: 3, total: 36 } } });
    const outcome = await ended(job, "done");
    assert.deepEqual(outcome.result, { passed: 3, total: 36 });
    other.send({ id: second.id, type: "done", outcome: { ok: true } });
    await ended(next, "done");
    assert.equal(judgeWorker.terminated, false); // the judge runs no learner code: it stays
  });

  test("a judge that fails fails the Check: no verdict is made up", async () => {
    const rt = await ready();
    const job = rt.submit(new Job("check", { exercise: "ppo/compute_gae", code: "", parts: [], seed: 1 }));
    const { worker, msg } = await sent();
    worker.send({ id: msg.id, type: "done", outcome: { ok: true, result: { phase1: null } } });
    const judgeWorker = workers.find((w) => w.config.judge);
    await settle(() => judgeWorker.jobs.some((j) => j.kind === "verdict"));
    const verdict = judgeWorker.jobs.find((j) => j.kind === "verdict");
    judgeWorker.send({
      id: verdict.id,
      type: "done",
      outcome: { ok: false, failure: { kind: "error", message: "x" } },
    });
    assert.equal((await ended(job, "failed")).failure.message, "x");
  });

  test("queued -> done with no code run (a syntax error found before loading)", async () => {
    const { job, worker, msg } = await submitted("x = (");
    worker.send({ id: msg.id, type: "ack" });
    worker.send({ id: msg.id, type: "done", outcome: { ok: false } });
    await ended(job, "done");
  });

  test("a failure the worker reports -> failed", async () => {
    const { job, worker, msg } = await submitted("import numpy");
    worker.send({ id: msg.id, type: "done", outcome: { ok: false, failure: { kind: "load" } } });
    assert.equal((await ended(job, "failed")).failure.kind, "load");
  });

  test("a worker of a later deploy fails its job as stale, and every later job at once, with no worker", async () => {
    const { rt, worker, spare } = await withSpare();
    const first = run(rt, "2");
    await sent();
    spare.send({ id: spare.jobs[0].id, type: "ack" });
    const failure = { kind: "stale", message: "worker.js is b, the page a" };
    spare.send({ id: spare.jobs[0].id, type: "done", outcome: { ok: false, failure } });
    assert.deepEqual((await ended(first, "failed")).failure, failure);
    assert.equal(spare.terminated, true);
    const started = workers.length;
    const later = run(rt, "3");
    assert.deepEqual((await ended(later, "failed")).failure, failure);
    assert.equal(workers.length, started); // no spare after it, no worker for the later job
    assert.equal(worker.terminated, true);
  });

  test("queued -> stopped: a job stopped before it is sent never reaches the worker", async () => {
    const rt = await ready();
    const first = run(rt, "1");
    const second = run(rt, "2");
    rt.stop(second);
    await ended(second, "stopped");
    const { worker, msg } = await sent();
    worker.send({ id: msg.id, type: "done", outcome: { ok: true } });
    await first.done;
    await settle();
    assert.deepEqual(
      worker.jobs.map((j) => j.code),
      ["1"],
    );
  });

  test("running -> stopped without isolation: the worker ends, the next job gets a new one", async () => {
    const { rt, job, worker, msg } = await submitted("while True: pass");
    worker.send({ id: msg.id, type: "started" });
    await settle();
    rt.stop(job);
    await ended(job, "stopped", { restarted: true });
    assert.equal(worker.terminated, true);
    run(rt, "print(1)");
    await sent();
    assert.equal(rt.workers, 2);
  });

  test("running -> stopped with isolation: an interrupt ends the code where it is", async () => {
    globalThis.SharedArrayBuffer ??= ArrayBuffer;
    const { rt, job, worker, msg } = await submitted("while True: pass", { isolated: true });
    assert.ok(msg.interrupt instanceof Int32Array); // one interrupt buffer per job
    worker.send({ type: "progress", ready: true });
    worker.send({ id: msg.id, type: "started" });
    await settle();
    rt.stop(job);
    assert.equal(msg.interrupt[0], 2); // SIGINT
    worker.send({ id: msg.id, type: "done", outcome: { ok: false } });
    await ended(job, "stopped", { interrupted: true, restarted: undefined });
  });

  test("an interrupt that does not land within the grace period ends the worker", async () => {
    mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const { rt, job, worker } = await runningIsolated("time.sleep(99)");
    rt.stop(job);
    mock.timers.tick(INTERRUPT_GRACE_MS);
    await ended(job, "stopped");
    assert.equal(worker.terminated, true);
  });

  test("a swallowed interrupt is said again until the code ends, then never", async () => {
    mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const { rt, job, worker, msg } = await runningIsolated("try:\n  while True: pass\nexcept KeyboardInterrupt: pass");
    rt.stop(job);
    msg.interrupt[0] = 0; // Python read the buffer (and the learner's `except` ate the error)
    mock.timers.tick(SIGNAL_AGAIN_MS);
    assert.equal(msg.interrupt[0], 2); // said again
    msg.interrupt[0] = 0;
    worker.send({ id: msg.id, type: "ended" });
    await settle();
    mock.timers.tick(SIGNAL_AGAIN_MS * 4);
    assert.equal(msg.interrupt[0], 0); // the site's own code runs now: left alone
    worker.send({ id: msg.id, type: "done", outcome: { ok: false } });
    await ended(job, "stopped", { interrupted: true });
  });

  test("the grace period covers the learner's code, not putting the interpreter back", async () => {
    mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const { rt, job, worker, msg } = await runningIsolated("while True: pass");
    rt.stop(job);
    worker.send({ id: msg.id, type: "ended" });
    await settle();
    mock.timers.tick(INTERRUPT_GRACE_MS * 2); // a slow machine: the site's own code takes long
    assert.equal(worker.terminated, false);
    worker.send({ id: msg.id, type: "done", outcome: { ok: false } });
    await ended(job, "stopped", { restarted: undefined, interrupted: true });
  });

  test("running -> timed-out: the limit counts from `started`", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    const { job, worker, msg } = await submitted("while True: pass", { limits: { limitMs: 1000 } });
    worker.send({ id: msg.id, type: "ack" });
    await settle();
    mock.timers.tick(5000); // loading takes long: no limit yet
    assert.equal(job.state, "queued");
    worker.send({ id: msg.id, type: "started" });
    await settle();
    mock.timers.tick(999);
    assert.equal(job.state, "running");
    mock.timers.tick(1);
    await ended(job, "timed-out");
  });

  test("queued -> failed: a worker that never acknowledges is replaced", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    const rt = await ready();
    const job = run(rt, "1");
    await sent();
    mock.timers.tick(5000);
    assert.deepEqual(pick((await ended(job, "failed")).failure), { kind: "stuck", watchdog: "ack" });
  });

  test("a worker started ahead of its job that does not answer is replaced: the job goes to a fresh one", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    const { rt, spare } = await withSpare();
    const second = run(rt, "2"); // the spare failed to start, or the tab slept
    await settle();
    assert.equal(spare.jobs.at(-1).code, "2");
    mock.timers.tick(5000);
    const { worker: fresh, msg: again } = await sent();
    assert.notEqual(fresh, spare);
    assert.equal(spare.terminated, true);
    assert.equal(second.state, "queued"); // none of its code ran: it simply goes again
    assert.equal(again.code, "2");
    fresh.send({ id: again.id, type: "ack" });
    fresh.send({ id: again.id, type: "done", outcome: { ok: true } });
    await ended(second, "done");
    assert.equal(rt.workers, 4); // the first, the silent spare, the fresh one, and the next spare
  });

  test("a fresh worker that does not answer either fails the job: no endless retries", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    const { rt } = await withSpare();
    const second = run(rt, "2");
    await settle();
    mock.timers.tick(5000); // the spare is silent: a fresh one gets the job
    await sent();
    mock.timers.tick(5000); // and is silent too
    assert.deepEqual(pick((await ended(second, "failed")).failure), { kind: "stuck", watchdog: "ack" });
    assert.equal(rt.workers, 3);
  });

  test("queued -> failed: a download silent for STALL_MS is the stall watchdog's failure", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    const { job, worker, msg } = await submitted("import numpy");
    worker.send({ id: msg.id, type: "ack" });
    await settle();
    mock.timers.tick(29000);
    worker.send({ type: "progress", stage: "numpy.whl", loaded: 10, total: 100 }); // progress
    await settle();
    mock.timers.tick(29000);
    assert.equal(job.state, "queued");
    mock.timers.tick(1000);
    assert.deepEqual(pick((await ended(job, "failed")).failure), { kind: "stuck", watchdog: "stall" });
  });

  test("an uncaught error of the job's worker is a failure to start worker.js", async () => {
    // js/worker.js cancels the errors its Python's callbacks raise: any that reaches the page is one
    const { job, worker } = await submitted("1");
    worker.onerror({ message: "boom", preventDefault() {} });
    const outcome = await ended(job, "failed");
    assert.deepEqual(outcome.failure, { kind: "load", what: "worker.js", cause: "start", detail: "boom" });
  });

  test("an uncaught error of a worker already ended fails no later job", async () => {
    // CI at f967c2e: a worker a time limit ended mid-write reported Pyodide's NoGilError seconds
    // later, while the next Run's worker started, and that Run failed as "Could not load worker.js"
    const { rt, job, worker, msg } = await submitted("while True: print('y')", { limits: { limitMs: 1000 } });
    worker.send({ id: msg.id, type: "ack" });
    worker.send({ type: "progress", ready: true });
    worker.send({ id: msg.id, type: "started" });
    await settle();
    rt.stop(job, { timedOut: true }); // not isolated: the worker ends with the job
    await ended(job, "timed-out");
    assert.equal(worker.terminated, true);
    const next = run(rt, "print('after')");
    const { worker: fresh, msg: nextMsg } = await sent();
    assert.notEqual(fresh, worker);
    worker.onerror({ message: "Uncaught NoGilError", preventDefault() {} }); // before `fresh` is up
    await settle();
    assert.equal(next.state, "queued");
    assert.equal(fresh.terminated, false);
    fresh.send({ id: nextMsg.id, type: "ack" });
    fresh.send({ type: "progress", ready: true });
    fresh.send({ id: nextMsg.id, type: "started" });
    fresh.send({ id: nextMsg.id, type: "done", outcome: { ok: true } });
    await ended(next, "done");
  });

  test("messages of a job that is over are ignored", async () => {
    const { job, worker, msg } = await submitted("1");
    worker.send({ id: msg.id, type: "done", outcome: { ok: true } });
    await job.done;
    worker.send({ id: msg.id, type: "done", outcome: { ok: false, failure: { kind: "error" } } });
    worker.send({ id: msg.id, type: "started" });
    await settle();
    assert.equal(job.state, "done");
    assert.equal(job.outcome.ok, true);
  });

  test("a restart the worker asks for ends it after the job", async () => {
    const rt = await ready();
    const resets = [];
    rt.onProgress((p) => p.reset && resets.push(p.reason));
    const job = run(rt, "sys.stdout.close()");
    const { worker, msg } = await sent();
    worker.send({ id: msg.id, type: "done", outcome: { ok: true }, restart: "a standard stream was closed" });
    await ended(job, "done");
    assert.equal(worker.terminated, true);
    assert.deepEqual(resets, ["a standard stream was closed"]);
  });
});

// ---- what the page takes from a worker ----------------------------------------------------------
// A learner's code that got hold of its worker's port (issue 35: MessagePort.prototype.postMessage
// patched through `import js`) could post anything on it, once its code runs: the page takes only
// what it asked for, when it could be asked for.

/** A Run job whose code has started in its worker (acknowledged, `started`). */
async function started(code = "1", limits = {}) {
  const { rt, job, worker, msg } = await submitted(code, { limits });
  worker.send({ id: msg.id, type: "ack" });
  worker.send({ type: "progress", ready: true });
  worker.send({ id: msg.id, type: "started" });
  await settle();
  assert.equal(job.state, "running");
  return { rt, job, worker, msg };
}

describe("What the page drops of what a worker says", () => {
  test("an image from a worker that runs jobs is dropped: the judge's make job alone sends it", async () => {
    const { rt, job, worker, msg } = await started();
    const forged = { snapshot: new Blob([new Uint8Array(9)]), handles: {} };
    worker.send({ id: msg.id, type: "image", image: forged, made: true });
    worker.send({ type: "image", image: forged, made: true });
    worker.send({ id: msg.id, type: "done", outcome: { ok: true } });
    await ended(job, "done");
    assert.equal((await rt.boot.image.snapshot.arrayBuffer()).byteLength, 4);
    assert.equal(rt.images, 1);
    await settle(() => workers.length === 3);
    assert.deepEqual(workers.at(-1).config.image, IMAGE); // the spare starts from the page's image
  });

  test("a second image, or one after the make job, is dropped", async () => {
    const rt = runtime();
    const making = rt.judge.make();
    const { maker, msg } = await makeJob();
    const other = { snapshot: new Blob([new Uint8Array(9)]), handles: {} };
    maker.send({ id: msg.id, type: "ack" });
    maker.send({ id: msg.id, type: "image", image: IMAGE, made: true });
    maker.send({ id: msg.id, type: "image", image: other, made: true }); // a second one
    maker.send({ id: msg.id, type: "done", outcome: { ok: true } });
    assert.equal(await making, null);
    maker.send({ id: msg.id, type: "image", image: other, made: true }); // after its job
    await settle();
    assert.deepEqual(rt.boot.image, IMAGE);
    assert.equal(rt.images, 1);
  });

  test("a done for no job, or for another job, is dropped", async () => {
    const { job, worker, msg } = await started();
    worker.send({ id: msg.id + 1000, type: "done", outcome: { ok: false, failure: { kind: "error" } } });
    worker.send({ type: "done", outcome: { ok: false, failure: { kind: "stale" } } });
    await settle();
    assert.equal(job.state, "running");
    worker.send({ id: msg.id, type: "done", outcome: { ok: true } });
    await ended(job, "done", { ok: true });
  });

  for (const kind of ["stale", "load"]) {
    test(`a "${kind}" failure said after the job's code started is dropped: later jobs run`, async () => {
      const { rt, job, worker, msg } = await started();
      worker.send({ id: msg.id, type: "done", outcome: { ok: false, failure: { kind, message: "forged" } } });
      await settle();
      assert.equal(job.state, "running"); // the forgery is dropped; the worker's own done ends it
      assert.equal(rt.stale, null);
      worker.send({ id: msg.id, type: "done", outcome: { ok: true } });
      await ended(job, "done");
      const next = run(rt, "2");
      const { worker: w, msg: m } = await sent();
      w.send({ id: m.id, type: "done", outcome: { ok: true } });
      await ended(next, "done");
    });
  }

  test("an ack, started or progress after the code started is dropped: the time limit stands", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    const { job, worker, msg } = await started("while True: pass", { limitMs: 1000 });
    const seen = [];
    job.on((e) => e.type === "progress" && seen.push(e));
    mock.timers.tick(900);
    // each of these would arm the job's watchdogs anew (the limit counts again from here)
    worker.send({ id: msg.id, type: "ack" });
    worker.send({ id: msg.id, type: "started" });
    worker.send({ type: "progress", stage: "x", loaded: 1, total: 2 });
    await settle();
    mock.timers.tick(100);
    await settle();
    assert.equal(job.state, "timed-out");
    assert.deepEqual(seen, []);
  });

  test("ended before the code started, and events of a job that is not the demo, are dropped", async () => {
    const { job, worker, msg } = await submitted("1");
    const events = [];
    job.on((e) => e.type === "event" && events.push(e));
    worker.send({ id: msg.id, type: "ack" });
    worker.send({ id: msg.id, type: "ended" });
    await settle();
    assert.equal(job.state, "queued");
    worker.send({ id: msg.id, type: "started" });
    for (let i = 0; i < 100; i++) worker.send({ id: msg.id, type: "event", data: { step: i } });
    worker.send({ id: msg.id, type: "done", outcome: { ok: true } });
    await ended(job, "done");
    assert.deepEqual(events, []);
  });

  test("output past what the worker itself sends is dropped and counted, and the count is said", async () => {
    const { job, worker, msg } = await started();
    const texts = [];
    const cuts = [];
    job.on((e) => e.type === "output" && (e.text ? texts.push(e.text) : cuts.push(e)));
    const line = `${"x".repeat(999)}\n`;
    const sentChars = 5000 * line.length;
    for (let i = 0; i < 5000; i++) worker.send({ id: msg.id, type: "output", stream: "stdout", text: line });
    worker.send({ id: msg.id, type: "output", cut: 3 }); // the worker's own count: not said once the page drops
    worker.send({ id: msg.id, type: "done", outcome: { ok: true } });
    await ended(job, "done");
    const kept = texts.join("").length;
    assert.equal(kept, OUTPUT.head + OUTPUT.tail);
    const said = cuts.filter((c) => !c.partial);
    assert.deepEqual(said, [{ type: "output", cut: sentChars - kept }]);
  });

  test("output the worker sends, head, count and tail, is all kept", async () => {
    const { job, worker, msg } = await started();
    const out = [];
    job.on((e) => e.type === "output" && out.push(e));
    worker.send({ id: msg.id, type: "output", stream: "stdout", text: "h".repeat(OUTPUT.head) });
    worker.send({ id: msg.id, type: "output", cut: 123, partial: true });
    worker.send({ id: msg.id, type: "output", cut: 456 });
    worker.send({ id: msg.id, type: "output", stream: "stderr", text: "t".repeat(OUTPUT.tail) });
    worker.send({ id: msg.id, type: "done", outcome: { ok: true } });
    await ended(job, "done");
    assert.deepEqual(
      out.map((e) => e.text?.length ?? e.cut),
      [OUTPUT.head, 123, 456, OUTPUT.tail],
    );
    assert.equal(out[3].stream, "stderr");
  });
});

// ---- the image across pages --------------------------------------------------------------------
// Kept in Cache Storage, which any worker of the origin can write; its digest in localStorage,
// which no worker can reach. Both stand-ins below are in-memory.

class MemoryCache {
  constructor() {
    this.entries = new Map();
  }
  async match(key) {
    return this.entries.get(String(key))?.clone();
  }
  async put(key, response) {
    this.entries.set(String(key), response);
  }
  async delete(key) {
    return this.entries.delete(String(key));
  }
}

describe("The boot image kept across pages", () => {
  const NAME = "rl:/:boot-image";
  const KEY = `http://x/boot-image?${new URLSearchParams({ runtime: "http://x/", wheel: "http://x/w.whl" })}`;
  let cache;
  beforeEach(() => {
    cache = new MemoryCache();
    globalThis.caches = { open: async (name) => (name === NAME ? cache : new MemoryCache()) };
    const items = new Map();
    globalThis.localStorage = {
      getItem: (k) => items.get(k) ?? null,
      setItem: (k, v) => items.set(k, String(v)),
      removeItem: (k) => items.delete(k),
    };
  });
  afterEach(() => {
    delete globalThis.caches;
    delete globalThis.localStorage;
  });

  /** A page's runtime that makes (or takes) its image: the make job's message, and its worker. */
  async function pageMakes() {
    const rt = runtime({ imageCache: NAME });
    rt.judge.make();
    const { maker, msg } = await makeJob();
    return { rt, maker, msg };
  }

  async function madeAndKept() {
    const { rt, maker, msg } = await pageMakes();
    maker.send({ id: msg.id, type: "image", image: IMAGE, made: true });
    maker.send({ id: msg.id, type: "done", outcome: { ok: true } });
    await settle(() => cache.entries.size === 1);
    await settle(() => localStorage.getItem(NAME) !== null);
    return rt;
  }

  test("a made image is kept, with its digest where no worker can write, and handed to the next page's judge", async () => {
    await madeAndKept();
    const kept = JSON.parse(localStorage.getItem(NAME));
    assert.equal(kept.key, KEY);
    assert.deepEqual(kept.handles, IMAGE.handles);
    assert.match(kept.digest, /^[0-9a-f]{64}$/);
    const { msg } = await pageMakes(); // the next page
    assert.deepEqual([...msg.stored.snapshot], [1, 2, 3, 4]);
    assert.deepEqual(msg.stored.handles, IMAGE.handles);
  });

  test("an image not as the page kept it (another one written over it) is deleted, and made again", async () => {
    await madeAndKept();
    // what a learner's worker with Cache Storage could write: a snapshot of another interpreter
    await cache.put(KEY, new Response(new Uint8Array([6, 6, 6, 6])));
    const { msg } = await pageMakes();
    assert.equal(msg.stored, null); // the judge loads the long way
    assert.equal(cache.entries.size, 0);
    assert.equal(localStorage.getItem(NAME), null);
  });

  test("an image with no digest kept is deleted, and made again", async () => {
    await cache.put(KEY, new Response(new Uint8Array([1, 2, 3, 4])));
    const { msg } = await pageMakes();
    assert.equal(msg.stored, null);
    assert.equal(cache.entries.size, 0);
  });

  test("an image taken from an earlier page is not kept again, nor counted as made", async () => {
    const first = await madeAndKept();
    assert.equal(first.images, 1);
    const { rt, maker, msg } = await pageMakes();
    maker.send({ id: msg.id, type: "image", image: IMAGE, made: false });
    maker.send({ id: msg.id, type: "done", outcome: { ok: true } });
    assert.equal(await rt.judge.make(), null);
    assert.equal(rt.images, 0);
  });
});

// ---- Stop, in every state a job can be in ------------------------------------------------------

describe("Stop in every state", () => {
  test("queued, before python.js is there: the job ends stopped, nothing is sent", async () => {
    const job = new Job("run", { code: "1", parts: [] });
    job.stop();
    await ended(job, "stopped");
    const rt = runtime();
    rt.submit(job); // python.js arrives after the Stop
    await settle();
    assert.equal(workers.length, 0);
  });

  test("queued and sent, while Python loads: the worker ends with it", async () => {
    const { job, worker, msg } = await submitted("1", { isolated: true });
    worker.send({ id: msg.id, type: "ack" });
    await settle();
    job.stop();
    await ended(job, "stopped", { restarted: true });
    assert.equal(worker.terminated, true);
  });

  test("stopping: a second Stop neither restarts the grace period nor ends the job early", async () => {
    mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const { job, worker } = await runningIsolated("while True: pass");
    job.stop();
    assert.equal(job.state, "stopping");
    mock.timers.tick(INTERRUPT_GRACE_MS - 1);
    job.stop();
    assert.equal(job.state, "stopping");
    mock.timers.tick(1); // the first Stop's grace period, not a new one
    await ended(job, "stopped");
    assert.equal(worker.terminated, true);
  });

  test("finishing: the code is over, a Stop changes nothing and the job ends done", async () => {
    const { job, worker, msg } = await runningIsolated("1");
    worker.send({ id: msg.id, type: "ended" });
    await settle();
    assert.equal(job.state, "finishing");
    job.stop();
    assert.equal(job.state, "finishing");
    worker.send({ id: msg.id, type: "done", outcome: { ok: true } });
    await ended(job, "done", { restarted: undefined, interrupted: undefined });
  });

  test("over: a Stop after the end changes nothing", async () => {
    const { job, worker, msg } = await submitted("1");
    worker.send({ id: msg.id, type: "done", outcome: { ok: true } });
    await job.done;
    job.stop();
    assert.equal(job.state, "done");
    assert.equal(job.outcome.restarted, undefined);
  });

  test("the time limit while stopping ends the job as stopped, as asked", async () => {
    mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const { job, worker, msg } = await submitted("while True: pass", { isolated: true, limits: { limitMs: 1000 } });
    worker.send({ type: "progress", ready: true });
    worker.send({ id: msg.id, type: "started" });
    await settle();
    job.stop();
    mock.timers.tick(1000); // the limit belonged to `running`: it ended with it
    worker.send({ id: msg.id, type: "done", outcome: { ok: false } });
    await ended(job, "stopped");
  });
});

describe("A job's timers", () => {
  test("end with the state that armed them", () => {
    mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
    const job = new Job("run", {});
    let fired = 0;
    job.arm("once", 10, () => fired++);
    job.arm("again", 10, () => fired++, { repeat: true });
    job.move("running");
    mock.timers.tick(100);
    assert.equal(fired, 0);
    assert.equal(job.timers.size, 0);
  });

  test("arming a name again replaces its timer", () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    const job = new Job("run", {});
    let fired = 0;
    job.arm("limit", 10, () => fired++);
    job.arm("limit", 20, () => fired++);
    mock.timers.tick(15);
    assert.equal(fired, 0);
    mock.timers.tick(5);
    assert.equal(fired, 1);
  });
});
