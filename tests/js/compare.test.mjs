// js/compare.js under Node's test runner: Run's comparison of a cell's printed output with the
// expected output, numbers with Check's tolerance widened by the rounding of what was printed.
// Run: node --test tests/js/   (tests/test_js.py runs it as part of `make test`)

import assert from "node:assert/strict";
import { test } from "node:test";

const { compareOutput, lineSpan, parseLine } = await import("../../js/compare.js");

const TOL = { rtol: 1e-4, atol: 1e-5 }; // browser_runtime/exercises.py Exercise's defaults
const EXACT = { rtol: 0, atol: 0 }; // only the rounding of the prints is allowed
const same = { same: true };
const at = (line) => ({ same: false, line });

test("an output equal to the expected one matches, its trailing blank lines aside", () => {
  const out = "ρ[mask == 1] ∈ [0.9273, 1.0566]\nρ[mask == 0] = [1.0, 1.0, 1.0]\n";
  assert.deepEqual(compareOutput(out, out, TOL), same);
  assert.deepEqual(compareOutput(`${out}\n\n`, out, TOL), same);
  assert.deepEqual(compareOutput("", "", TOL), same);
});

test("a number off within Check's tolerance matches; off by more, its line differs", () => {
  // 2 is whole (exact), 2.0003 rounded: allowed 1e-5 + 1e-4 * 2 + 0.5e-4 = 2.6e-4
  assert.deepEqual(compareOutput("a\nloss = 2.0002\n", "a\nloss = 2\n", TOL), same);
  assert.deepEqual(compareOutput("a\nloss = 2.0003\n", "a\nloss = 2\n", TOL), at(2));
  assert.deepEqual(compareOutput("a\nloss = 2.000200\n", "a\nloss = 2.000000\n", TOL), same);
  assert.deepEqual(compareOutput("a\nloss = 2.000300\n", "a\nloss = 2.000000\n", TOL), at(2));
  assert.deepEqual(compareOutput("x = 1.6\n", "x = 1.4\n", TOL), at(1));
});

test("two prints one last digit apart match: each is its value rounded to the digits printed", () => {
  // 1.0062 and 1.0063 may both stand for 1.00625: allowed even with no tolerance at all
  assert.deepEqual(compareOutput("ρ = 1.0063\n", "ρ = 1.0062\n", EXACT), same);
  assert.deepEqual(compareOutput("ρ = 1.0064\n", "ρ = 1.0062\n", EXACT), at(1));
  // the unit is the one of each print: 1.01 stands for [1.005, 1.015]
  assert.deepEqual(compareOutput("ρ = 1.0149\n", "ρ = 1.01\n", EXACT), same);
  assert.deepEqual(compareOutput("ρ = 1.0160\n", "ρ = 1.01\n", EXACT), at(1));
  // a percentage rounds like any number
  assert.deepEqual(compareOutput("5.9% of tokens\n", "6.0% of tokens\n", EXACT), same);
});

test("whole numbers are exact: 0 never equals 1, nor +1 equals -1", () => {
  assert.deepEqual(compareOutput("keep = 0\n", "keep = 1\n", TOL), at(1));
  assert.deepEqual(compareOutput("Â = -1\n", "Â = +1\n", TOL), at(1));
  assert.deepEqual(compareOutput("Â = 1\n", "Â = +1\n", TOL), same);
  // torch prints a whole-valued float tensor as `1.`: also exact
  assert.deepEqual(compareOutput("tensor([ 0.,  0., -1.])\n", "tensor([ 0.,  1., -1.])\n", TOL), at(1));
  assert.deepEqual(compareOutput("tensor([ 0.,  1., -1.])\n", "tensor([0.0000, 1.0000, -1.0000])\n", TOL), same);
});

test("nan never equals a number, and equals nan", () => {
  const want = "ρ[0, 3:] = tensor([1.0062, 1.0000, 1.0000])\n";
  assert.deepEqual(compareOutput("ρ[0, 3:] = tensor([1.0062, 1.0000,    nan])\n", want, TOL), at(1));
  assert.deepEqual(compareOutput("x = nan\n", "x = nan\n", TOL), same);
  assert.deepEqual(compareOutput("x = nan\n", "x = 0.0\n", TOL), at(1));
  assert.deepEqual(compareOutput("x = 0.0\n", "x = nan\n", TOL), at(1));
  assert.deepEqual(compareOutput("x = nan\n", "x = inf\n", TOL), at(1));
});

test("inf equals inf of the same sign only, and no finite number", () => {
  assert.deepEqual(compareOutput("x = [inf, -inf]\n", "x = [inf, -inf]\n", TOL), same);
  assert.deepEqual(compareOutput("x = [-inf, -inf]\n", "x = [inf, -inf]\n", TOL), at(1));
  assert.deepEqual(compareOutput("x = 1e308\n", "x = inf\n", TOL), at(1));
  // words that contain nan or inf are text
  assert.deepEqual(compareOutput("information\n", "information\n", TOL), same);
  assert.deepEqual(parseLine("info nanny").numbers, []);
});

test("different text differs; whitespace runs count as one, torch's column padding as none", () => {
  assert.deepEqual(compareOutput("loss = 0.5\n", "loss: 0.5\n", TOL), at(1));
  assert.deepEqual(compareOutput("a\n损失 0.5\n", "a\n概率 0.5\n", TOL), at(2));
  assert.deepEqual(compareOutput("L =  100, s = 1.0\n", "L = 100,   s = 1.0  \n", TOL), same);
  // a nan or a minus in a column widens every number's padding
  assert.deepEqual(compareOutput("tensor([ 1.0000, -0.5000])\n", "tensor([1.0000, 0.5000])\n", TOL), at(1));
  assert.deepEqual(compareOutput("tensor([ 1.0000, -0.0000])\n", "tensor([1.0000, 0.0000])\n", TOL), same);
  // a number more or fewer is a difference, wherever it is
  assert.deepEqual(compareOutput("x = 1 2\n", "x = 12\n", TOL), at(1));
});

test("extra or missing lines differ at the first line past the shorter output", () => {
  const want = "a = 1.0\nb = 2.0\n";
  assert.deepEqual(compareOutput("a = 1.0\nb = 2.0\nc = 3.0\n", want, TOL), at(3));
  assert.deepEqual(compareOutput("a = 1.0\n", want, TOL), at(2));
  assert.deepEqual(compareOutput("", want, TOL), at(1));
  assert.deepEqual(compareOutput("a = 1.0\n\nb = 2.0\n", want, TOL), at(2)); // a blank line more
});

test("a tensor printed over several lines is compared line by line", () => {
  const want = [
    "advantages:",
    "tensor([[ 0.0000,  0.0000,  0.0000],",
    "        [-0.5000,  1.5000, -0.5000],",
    "        [ 0.5000, -1.5000,  0.5000]])",
  ].join("\n");
  const close = want.replace("1.5000, -0.5000]", "1.5001, -0.5000]"); // a last digit
  assert.deepEqual(compareOutput(close, want, TOL), same);
  const wrong = want.replace("-1.5000", "-1.4000");
  assert.deepEqual(compareOutput(wrong, want, TOL), at(4));
  const shorter = want.split("\n").slice(0, 3).join("\n").replace(/,$/, "])");
  assert.deepEqual(compareOutput(shorter, want, TOL), at(3));
});

test("scientific notation: its unit is the one of its last digit times its power of ten", () => {
  assert.deepEqual(parseLine("x = 1.2e-05").numbers, [{ value: 1.2e-5, half: 0.5e-6 }]);
  assert.deepEqual(compareOutput("x = 1.2e-05\n", "x = 1.2e-05\n", EXACT), same);
  assert.deepEqual(compareOutput("x = 1.3e-05\n", "x = 1.2e-05\n", EXACT), same); // a last digit
  assert.deepEqual(compareOutput("x = 1.4e-05\n", "x = 1.2e-05\n", EXACT), at(1));
  // the same value in torch's scientific mode and in fixed notation
  assert.deepEqual(compareOutput("tensor([1.0000e+00, 2.0000e-05])\n", "tensor([1.0000, 0.0000])\n", TOL), same);
  assert.deepEqual(compareOutput("k 2e-4\n", "k 4e-4\n", EXACT), at(1));
});

test("negative zero equals zero", () => {
  assert.deepEqual(compareOutput("x = -0.0000\n", "x = 0.0000\n", EXACT), same);
  assert.deepEqual(compareOutput("tensor([-0., 1.])\n", "tensor([0., 1.])\n", EXACT), same);
  assert.deepEqual(compareOutput("x = -0.0\n", "x = nan\n", TOL), at(1));
});

test("Check's tolerance of the exercise is the one used: a looser atol lets more through", () => {
  assert.deepEqual(compareOutput("x = 0.0100\n", "x = 0.0000\n", TOL), at(1));
  assert.deepEqual(compareOutput("x = 0.0100\n", "x = 0.0000\n", { rtol: 1e-4, atol: 0.02 }), same);
});

test("a line's place in the printed text, for its mark: missing lines are placed at the end", () => {
  const text = "a = 1\n\nccc\n";
  assert.deepEqual(
    [1, 2, 3, 4, 5].map((n) => lineSpan(text, n)),
    [
      [0, 5],
      [6, 6],
      [7, 10],
      [11, 11],
      [11, 11],
    ],
  );
  assert.deepEqual(lineSpan("a\nb", 2), [2, 3]);
  assert.deepEqual(lineSpan("a\nb", 3), [3, 3]);
  assert.deepEqual(lineSpan("", 1), [0, 0]);
});
