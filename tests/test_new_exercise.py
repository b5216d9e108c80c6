"""Adding an exercise touches three places: its lesson file (with its Chinese), its NumPy reference,
one line on each language's page. This adds a fixture exercise to a copy of the site that way and
finds it on both pages, each in its language, in the downloads, in the drill and in Check (from
the wheel the build wrote); and a misplaced or untranslated one stops the build with an error that
names it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from html import unescape
from pathlib import Path

import pytest

from .conftest import ROOT
from .golden import run_lesson

ID = "ppo/ratio_in_one_line"
LESSON = '''# --8<-- [start:exercise]
import torch


def ratio_in_one_line(new_logprobs, old_logprobs, mask):
    """ρ = π_θ / π_old, 1 on padding, in one line."""
    # TODO 1: exp of the masked log-ratio
    return (new_logprobs - old_logprobs).masked_fill(mask == 0, 0.0).exp()
# --8<-- [end:exercise]


# --8<-- [start:test]
mask = torch.tensor([[1.0, 1.0, 0.0]])
print("ratio:", ratio_in_one_line(torch.zeros(1, 3), torch.zeros(1, 3) - 1.0, mask))
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Ratio in One Line", "zh": "一行写出比值"}
REFERENCE = "importance_ratio"


def inputs(draw):
    """The arguments of one random case, in the function's parameter order."""
    B, T = draw.size()
    return {"new_logprobs": draw.normal((B, T)), "old_logprobs": draw.normal((B, T)),
            "mask": draw.mask(B, T)}
# --8<-- [end:check]


# --8<-- [start:traps]
TRAPS = [
    ("TODO 1: exp without the mask: padding's log-ratio comes through",
     "(new_logprobs - old_logprobs).masked_fill(mask == 0, 0.0).exp()",
     "(new_logprobs - old_logprobs).exp()"),
]
# --8<-- [end:traps]


# --8<-- [start:zh]
ZH = {
    "1 on padding, in one line.": "padding 上为 1，一行写完。",
    "exp of the masked log-ratio": "对掩码后的对数比取 exp",
    "ratio:": "比值：",
}
# --8<-- [end:zh]
'''
ANSWER = "(new_logprobs - old_logprobs).masked_fill(mask == 0, 0.0).exp()"


def copy_site(dest: Path) -> Path:
    """The site's sources in ``dest``: pages and config copied; JS, npm packages and the
    references linked."""
    shutil.copytree(ROOT / "docs", dest / "docs")
    shutil.copytree(ROOT / "overrides", dest / "overrides")
    shutil.copy(ROOT / "mkdocs.yml", dest / "mkdocs.yml")
    for name in ("js", "node_modules", "rl_ops_numpy"):  # pages show the demo's code too
        (dest / name).symlink_to(ROOT / name)
    if (ROOT / ".cache" / "demo").is_dir():  # the demo's sample run, if already computed
        shutil.copytree(ROOT / ".cache" / "demo", dest / ".cache" / "demo")
    return dest


def place(page: Path, line: str, after: str) -> None:
    text = page.read_text(encoding="utf-8")
    assert after in text
    page.write_text(text.replace(after, f"{after}\n\n{line}", 1), encoding="utf-8")


def build(src: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(src / "mkdocs.yml"),
         "-d", str(src / "site")],
        cwd=src, env=env, capture_output=True, text=True, timeout=300,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    src = copy_site(tmp_path_factory.mktemp("new-exercise"))
    lesson = src / "docs" / f"{ID}.py"
    lesson.write_text(LESSON, encoding="utf-8")  # 1. the lesson file
    # (2. its reference: importance_ratio, already in rl_ops_numpy)
    from site_build.lessons import Lesson

    for lang in ("en", "zh"):  # what `make golden` writes: ratio_in_one_line.out, .zh.out
        written = Lesson.load(lesson).in_language(lang)
        written.out_path.write_text(run_lesson(written), encoding="utf-8")
    for lang in ("en", "zh"):  # 3. one line on each language's page
        place(src / "docs" / "ppo" / f"index.{lang}.md", f"<!-- rl:exercise {ID} -->",
              after="<!-- rl:exercise ppo/masked_whiten -->")
    proc = build(src)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return src


@pytest.mark.parametrize("lang", ["", "en/"])
def test_the_new_exercise_is_on_the_page_with_its_output_answer_and_drill(site, lang):
    html = (site / "site" / lang / "ppo" / "index.html").read_text(encoding="utf-8")
    cell = re.search(rf'<div class="rl-cell" data-runner="{ID}".*?</script>', html, re.S)
    assert cell, "no cell"
    data = json.loads(cell.group(0).split('type="application/json">', 1)[1][: -len("</script>")])
    assert data["function"] == "ratio_in_one_line" and "_____" in data["exercise"]
    # in the page's language: the cell Run and Check run, and the expected output
    todo = "# TODO 1: exp of the masked log-ratio" if lang else "# TODO 1: 对掩码后的对数比取 exp"
    assert todo in data["exercise"]
    out_name = f"{ID}.out" if lang else f"{ID}.zh.out"
    out = (site / "docs" / out_name).read_text(encoding="utf-8")
    assert out.startswith("ratio: tensor" if lang else "比值： tensor")
    # the expected output, whole, in the block right after the cell; the answer in its own block
    after = html.split(f'data-runner="{ID}"', 1)[1]
    shown = re.search(r'<div class="language-text highlight"><pre>.*?</pre>', after, re.S)
    assert unescape(re.sub(r"<[^>]+>", "", shown.group(0))) == out
    answer = re.search(r'<details class="success">.*?</details>', after, re.S).group(0)
    assert ANSWER in unescape(re.sub(r"<[^>]+>", "", answer))
    title = "Ratio in One Line" if lang else "一行写出比值"
    assert f'data-drill="{ID}"' in html and f">{title}<" in html  # drill under its heading
    assert html.index(f'data-drill="{ID}"') > html.index('data-drill="ppo/masked_whiten"')


@pytest.mark.parametrize(("lang", "out_suffix", "title"),
                         [("", ".zh.out", "PPO 代码填空"), ("en/", ".out", "PPO Fill-in")])
def test_the_new_exercise_is_in_the_download_and_its_solution_runs(
    site, tmp_path, lang, out_suffix, title
):
    exercise = (site / "site" / lang / "ppo" / "exercise.py").read_text(encoding="utf-8")
    assert "def ratio_in_one_line(" in exercise and "return _____" in exercise
    assert exercise.startswith(f'"""{title}')  # the chapter's title in that language
    solution = site / "site" / lang / "ppo" / "solution.py"
    run = subprocess.run([sys.executable, str(solution), "ratio_in_one_line"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    out = (site / "docs" / f"{ID}{out_suffix}").read_text(encoding="utf-8")
    assert run.stdout == f"---- ratio_in_one_line\n{out}"


def test_check_finds_the_new_exercise_in_the_wheel_and_tells_right_from_wrong(site, tmp_path):
    (whl,) = (site / "site" / "assets" / "wheels").glob("*.whl")
    with zipfile.ZipFile(whl) as z:
        z.extractall(tmp_path / "pkgs")
    unpacked = str(tmp_path / "pkgs")
    script = (
        f"import sys, json; sys.path.insert(0, {unpacked!r})\n"
        "from browser_runtime import check\n"
        f"print(json.dumps(check.check({ID!r}, sys.stdin.read())))\n"
    )
    lesson = (site / "docs" / f"{ID}.py").read_text(encoding="utf-8")
    code = lesson.split("# --8<-- [end:exercise]")[0].split("[start:exercise]\n")[1]
    results = []
    from site_build.lessons import Lesson

    (trap,) = Lesson.load(site / "docs" / f"{ID}.py").traps  # step 2's traps section
    for program in (code, trap.apply(code)):
        proc = subprocess.run([sys.executable, "-c", script], input=program, capture_output=True,
                              text=True, timeout=120, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        results.append(json.loads(proc.stdout))
    right, wrong = results
    assert right["passed"] == right["total"] > 0, right
    assert wrong["passed"] < wrong["total"] and wrong["failures"], wrong


def test_an_exercise_placed_on_one_language_only_stops_the_build_and_names_it(tmp_path):
    src = copy_site(tmp_path)
    (src / "docs" / f"{ID}.py").write_text(LESSON, encoding="utf-8")
    (src / "docs" / f"{ID}.out").write_text("", encoding="utf-8")
    place(src / "docs" / "ppo" / "index.en.md", f"<!-- rl:exercise {ID} -->",
          after="<!-- rl:exercise ppo/masked_whiten -->")
    proc = build(src)
    assert proc.returncode != 0
    assert f"exercise {ID} is placed 0 times on the zh pages" in proc.stdout + proc.stderr


def test_an_unknown_exercise_id_stops_the_build_and_names_the_page_and_line(tmp_path):
    src = copy_site(tmp_path)
    place(src / "docs" / "glossary.en.md", "<!-- rl:exercise ppo/no_such_thing -->",
          after="# Glossary")
    proc = build(src)
    assert proc.returncode != 0
    log = proc.stdout + proc.stderr
    assert "glossary.en.md:3: no exercise 'ppo/no_such_thing'" in log, log[-2000:]


def test_an_untranslated_comment_stops_the_build_and_names_the_file_and_line(tmp_path):
    src = copy_site(tmp_path)
    lesson = LESSON.replace("    # TODO 1: exp of the masked log-ratio\n",
                            "    # TODO 1: exp of the masked log-ratio\n    # mind the padding\n")
    (src / "docs" / f"{ID}.py").write_text(lesson, encoding="utf-8")
    for lang in ("en", "zh"):
        place(src / "docs" / "ppo" / f"index.{lang}.md", f"<!-- rl:exercise {ID} -->",
              after="<!-- rl:exercise ppo/masked_whiten -->")
    proc = build(src)
    assert proc.returncode != 0
    log = proc.stdout + proc.stderr
    assert f"docs/{ID}.py:8: no zh for 'mind the padding'" in log, log[-2000:]
