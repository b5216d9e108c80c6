// The widgets' UI strings in the page's language: js/strings.toml, which the build checks and
// writes into the page's rl-config (site_build/ui_strings.py). A string with {placeholders} is
// a function of its named values here: t.finished({ ms: 12 }); a plural picks its form by
// `count`. How a job ended is worded once, for every widget: describeOutcome.

import { isRecord, siteConfig } from "./dom.js";
import { Fault } from "./job.js";

/** A shape or an index as Python prints a list: [2, 3]. */
function list(xs) {
  return `[${xs.join(", ")}]`;
}

/** Python's traceback of the learner's error, then the common slip behind it in the page's words
 * (browser_runtime/runner.py slip: "blank"), if one is. */
export function raisedText({ message, slip }, t) {
  const text = message.endsWith("\n") ? message : `${message}\n`;
  return slip && t.slip[slip] ? `${text}${t.slip[slip]}\n` : text;
}

/** Why Check could not even call the learner's function (browser_runtime/check.py define's
 * error: raised, undefined, norun), as the output shows it. */
export function checkErrorText(error, t) {
  if (error.code === "raised") return raisedText(error, t);
  if (error.code === "undefined") return `NameError: ${t.why.undefined({ name: `'${error.name}'` })}\n`;
  return `${t.why.norun}\n`;
}

/** What a result that is no tensor was (browser_runtime/check.py NotTensors), in the page's words. */
function typeText(reason, t) {
  if (reason.returned) return t.why.type.returned({ type: reason.returned });
  if (reason.holding) return t.why.type.holding({ type: reason.holding });
  if (reason.dtype) return t.why.type.dtype({ dtype: reason.dtype });
  return t.why.type.unreadable;
}

/** Why a case of Check failed (a reason code of browser_runtime/check.py), in the page's words.
 * The learner's own exception (raised) is shown as Python wrote it, and a result that is no
 * tensor (type) as a TypeError. */
export function reasonText(reason, t) {
  if (reason.code === "raised") return raisedText(reason, t).trimEnd();
  if (reason.code === "type") return `TypeError: ${typeText(reason, t)}`;
  const head = reason.output ? t.why.output({ k: reason.output }) : "";
  if (reason.code === "count") return head + t.why.count({ count: reason.got, expected: reason.expected });
  if (reason.code === "tuple") return head + t.why.tuple({ count: reason.got, expected: list(reason.expected) });
  if (reason.code === "shape") return head + t.why.shape({ got: list(reason.got), expected: list(reason.expected) });
  const at = reason.at.map(list).join(t.listSeparator);
  const first = reason.first ? t.why.first(reason.first) : "";
  if (reason.code === "gradient") {
    const input = reason.input;
    return head + (at ? t.why.gradientAt({ input, at }) : t.why.gradient({ input })) + first;
  }
  if (!at) return head + t.why.values;
  return head + t.why.valuesAt({ at }) + first;
}

/** What the padding of a failing case holds that no real value would (browser_runtime/check.py's
 * "padding": "-inf", "inf", "nan", "huge"), as the page says it; "" when it holds none. */
export function paddingText(values, t) {
  if (!values?.length) return "";
  const words = values.map((v) => ({ "-inf": "−inf", inf: "inf", nan: "NaN", huge: t.huge })[v] ?? v);
  return t.paddingHolds({ values: words.join(t.listSeparator) });
}

/**
 * What the page says when a job is over (js/python.js's states), as {text, cls}; null when the
 * job's own output says it all. One map for every widget. `limitMs`: the job's time limit.
 */
export function describeOutcome(outcome, t, { limitMs = 0 } = {}) {
  const failure = outcome.failure;
  if (outcome.state === "timed-out") return { text: t.timedOut({ seconds: limitMs / 1000 }), cls: "rl-error" };
  if (outcome.state === "stopped") {
    return { text: outcome.restarted ? t.stopped : t.interrupted, cls: "rl-error" };
  }
  if (failure?.kind === "load") {
    const why = t.load[failure.cause] ?? t.load.network;
    const values = { status: failure.status, seconds: failure.seconds, detail: failure.detail ?? "" };
    const offline = failure.offline ? t.offline : "";
    const text = t.loadFailed({ what: failure.what, why: typeof why === "function" ? why(values) : why, offline });
    return { text, cls: "rl-error" };
  }
  if (failure?.kind === "stuck") {
    const offline = failure.offline ? t.offline : "";
    const say = t.stuck[failure.watchdog] ?? t.stuck.ack;
    return { text: say({ seconds: failure.seconds, offline }), cls: "rl-error" };
  }
  if (failure?.kind === "stale") return { text: t.siteUpdated, cls: "rl-error" };
  if (failure?.kind === "died") return { text: t.died({ message: failure.message }), cls: "rl-error" };
  // an exception inside the site's own code: the only failure that says so
  if (failure) return { text: t.exerciseError({ message: failure.message }), cls: "rl-error" };
  if (outcome.restart) return { text: t.restartedAfter({ why: outcome.restart }), cls: "rl-error" };
  return null;
}

/** One string of the table: as it is, or, with {placeholders}, a function of its values. */
function compile(text, plural, key) {
  const forms = typeof text === "string" ? { other: text } : text;
  if (!Object.values(forms).some((form) => /\{\w+\}/.test(form))) return forms.other;
  return (values) =>
    (forms[plural.select(values.count)] ?? forms.other).replace(/\{(\w+)\}/g, (_, name) => {
      if (!(name in values)) throw new Fault("string-lacks-value", { key, name });
      return String(values[name]);
    });
}

/** A table of strings, or a group of them, compiled. */
function compileAll(table, plural, path = "") {
  const out = {};
  for (const [key, text] of Object.entries(table)) {
    const grouped = isRecord(text) && !("other" in text);
    out[key] = grouped ? compileAll(text, plural, `${path}${key}.`) : compile(text, plural, path + key);
  }
  return out;
}

let compiled = null;

/** The page's strings (its rl-config), compiled once. */
export function strings(doc = document) {
  compiled ??= compileAll(siteConfig().strings ?? {}, new Intl.PluralRules(doc.documentElement.lang));
  return compiled;
}

// a day as each language writes it in full, never as digits whose order a reader must guess
// ("12/6/2026"): "6 Dec 2026", "2026年12月6日"
const DAY = {
  en: ["en-GB", { day: "numeric", month: "short", year: "numeric" }],
  zh: ["zh-CN", { year: "numeric", month: "long", day: "numeric" }],
};

/** `date` as the page's language writes a day. */
export function day(date, lang = document.documentElement.lang) {
  const [locale, options] = DAY[lang] ?? DAY.en;
  return new Intl.DateTimeFormat(locale, options).format(date);
}
