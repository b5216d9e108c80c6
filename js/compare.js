// Run's comparison of what a cell printed with the expected output the page shows (the lesson's
// .out file, passed by the build as data: site_build/directives.py cell_data). Pure: no page.

/** A printed number: its sign, digits, decimals and exponent; nan and inf as words. */
const NUMBER = /[-+]?(?:(?:\d+(?:\.(\d*))?|\.(\d+))(?:[eE]([-+]?\d+))?|(?<![A-Za-z_])(?:nan|inf)(?![A-Za-z_]))/g;

/**
 * A line as its numbers and the text around them: {text: [t0, t1, …, tk], numbers: [n1, …, nk]},
 * each number {value, half}: `half` is half a unit of its last printed digit (0 for a whole
 * number). Whitespace runs in the text count as one space, and whitespace next to a number or
 * at the line's ends not at all (torch pads its columns to one width).
 */
export function parseLine(line) {
  const text = [];
  const numbers = [];
  let at = 0;
  for (const m of line.matchAll(NUMBER)) {
    text.push(line.slice(at, m.index));
    numbers.push(parseNumber(m));
    at = m.index + m[0].length;
  }
  text.push(line.slice(at));
  return { text: text.map((piece) => piece.replace(/\s+/gu, " ").trim()), numbers };
}

function parseNumber(m) {
  const [token, fraction, bare, exponent] = m;
  const word = token.replace(/^[-+]/, "");
  if (word === "nan") return { value: Number.NaN, half: 0 };
  if (word === "inf") return { value: token.startsWith("-") ? -Infinity : Infinity, half: 0 };
  const decimals = (fraction ?? bare ?? "").length;
  // "3", "+1", "1.": whole, and exact (half a unit, 0.5, would let 0 equal 1)
  const whole = decimals === 0 && exponent === undefined;
  return { value: Number(token), half: whole ? 0 : 0.5 * 10 ** (Number(exponent ?? 0) - decimals) };
}

/**
 * Whether a printed number agrees with the expected one, with Check's tolerance (np.isclose's:
 * |got − want| ≤ atol + rtol·|want|) widened by the rounding of both prints:
 *
 *     |got − want| ≤ atol + rtol·|want| + ½ unit of got's last digit + ½ unit of want's
 *
 * A number printed with d decimals is its value rounded to d decimals, so it is off by up to half
 * a unit of its last digit (1.0062 stands for anything in [1.00615, 1.00625]): two values that
 * Check would call equal may print one last digit apart (the browser's torch layer over NumPy
 * and real PyTorch do). A whole number ("3", "1." of a whole-valued tensor) is taken as exact.
 * nan equals only nan; inf only inf of the same sign; -0 equals 0. A few ulps of slack absorb
 * the binary error of the decimal strings themselves.
 */
export function numbersAgree(got, want, { rtol, atol }) {
  if (Number.isNaN(got.value) || Number.isNaN(want.value)) return Number.isNaN(got.value) && Number.isNaN(want.value);
  if (!Number.isFinite(got.value) || !Number.isFinite(want.value)) return got.value === want.value;
  const bound = atol + rtol * Math.abs(want.value) + got.half + want.half;
  const slack = 8 * Number.EPSILON * Math.max(Math.abs(got.value), Math.abs(want.value), bound);
  return Math.abs(got.value - want.value) <= bound + slack;
}

/** Whether two printed lines agree: the same text, and each number within tolerance. */
export function linesAgree(got, want, tolerance) {
  const [g, w] = [parseLine(got), parseLine(want)];
  return (
    g.numbers.length === w.numbers.length &&
    g.text.every((t, i) => t === w.text[i]) &&
    g.numbers.every((n, i) => numbersAgree(n, w.numbers[i], tolerance))
  );
}

/** A text's lines; blank lines at its end do not count (nobody sees them). */
export function lines(text) {
  const all = text.split(/\r?\n/);
  while (all.length && !all[all.length - 1].trim()) all.pop();
  return all;
}

/**
 * Compare what a Run printed with the expected output, line by line, numbers with `tolerance`
 * ({rtol, atol}: the exercise's Check tolerance). Returns {same: true}, or {same: false, line}:
 * the first line (1-based) that differs; where one output is a prefix of the other, the first
 * line past the shorter.
 */
export function compareOutput(got, expected, tolerance) {
  const [g, w] = [lines(got), lines(expected)];
  const n = Math.min(g.length, w.length);
  for (let i = 0; i < n; i++) if (!linesAgree(g[i], w[i], tolerance)) return { same: false, line: i + 1 };
  return g.length === w.length ? { same: true } : { same: false, line: n + 1 };
}

/** Where line `n` (1-based) of `text` is: [start, end) character offsets, without its newline;
 * [length, length] when the text has fewer lines (a missing line is marked where it would be). */
export function lineSpan(text, n) {
  let start = 0;
  for (let k = 1; k < n; k++) {
    const newline = text.indexOf("\n", start);
    if (newline < 0) return [text.length, text.length];
    start = newline + 1;
  }
  const newline = text.indexOf("\n", start);
  return [start, newline < 0 ? text.length : newline];
}
