// Every UI string of the widgets, in both languages. The page's <html lang> picks the table.

import { siteConfig } from "./dom.js";

const STRINGS = {
  zh: {
    run: "运行",
    check: "检查",
    stop: "停止",
    reset: "重置",
    edit: "编辑",
    blanksMode: "回到填空",
    output: "输出",
    blankLabel: (i, n, fn, line) => `${fn} 的第 ${i} 个空，共 ${n} 个（第 ${line} 行）`,
    editorLabel: "代码编辑器",
    editorKeys: "Tab 缩进；先按 Esc 再按 Tab 离开编辑器；Ctrl+Enter 运行。",
    loading: "正在加载 Python",
    fetching: (name, loaded, total) =>
      total ? `正在下载 ${name}（${mb(loaded)} / ${mb(total)} MB）` : `正在下载 ${name}`,
    running: "运行中…",
    checking: "检查中…",
    waiting: "等待 Python…",
    finished: (ms) => `完成（${ms} ms）`,
    failed: "运行出错",
    stopped: "已停止：Python 运行时已重启，下次运行会重新加载。",
    interrupted: "已停止。",
    timedOut: (s) => `超过时间限制（${s} 秒），已停止。是不是有死循环？`,
    loadFailed: (what, msg, offline) =>
      `无法加载 ${what}（${msg}）。${offline ? "你现在似乎处于离线状态。" : ""}` +
      "页面上不需要 Python 的功能（阅读、提示、答案、随机挖空的精确检查）照常可用；下次运行会重试。",
    exerciseError: (msg) => `出错的是本站自己的代码，不是你的代码（欢迎反馈）：\n${msg}`,
    died: (msg) => `Python 运行时停止了（${msg}），已重启；再运行一次即可。`,
    restartedAfter: (why) => `这次运行之后 Python 运行时已重启（${why}），下次运行从干净的状态开始。`,
    outputCut: (n) => `\n……中间省略了 ${n.toLocaleString("zh")} 个字符的输出……\n`,
    storageFull: "你的答案没能保存：浏览器存储已满（或被禁用）。刷新前请自己留一份。",
    otherTab: "这道题在另一个标签页里被改过了。",
    takeOtherTab: "用另一个标签页的版本",
    keepMine: "保留这里的",
    unreadableSaved: "保存的答案无法读取，已另存一份，这里从空白开始。",
    checkPassed: (n) => `全部 ${n} 组随机输入都与参考实现一致。`,
    checkFailed: (bad, n) => `${n} 组随机输入中有 ${bad} 组与参考实现不一致：`,
    checkCase: (i) => `第 ${i} 组`,
    checkShrunk: (i) => `最小的失败输入（由第 ${i} 组随机输入缩小而来）`,
    // why a case failed: browser_runtime/check.py's reason code, with its values
    why: {
      count: (r) => `返回了 ${r.got} 个值，应为 ${r.expected} 个`,
      shape: (r) => `形状为 ${list(r.got)}，应为 ${list(r.expected)}`,
      values: (r) => (r.at.length ? `这些位置的数值不同：${r.at.map(list).join("、")}` : "数值不同"),
      output: (k) => `第 ${k} 个输出：`,
    },
    inputs: "输入",
    expected: "期望",
    got: "你的结果",
    reason: "原因",
    oldVersion: "这道题更新过，你保存的答案对应旧版本，没有自动套用。",
    restoreOld: "把旧答案放进编辑器",
    discardOld: "不用了",
    drillRatio: "挖空比例",
    drillExtended: "扩展模式",
    drillModeHelp: "扩展模式也会遮住运算符和单字符的名字、数字（- * t 1）",
    drillRefresh: "刷新",
    drillReveal: "显示答案",
    drillRetry: "重做",
    drillStats: (n, m) => `共 ${n} 个可挖空位 | 已挖 ${m} 个`,
    drillScore: (c, m) => `得分 ${c}/${m} (${Math.round((100 * c) / m)}%)`,
    drillBlankLabel: (k, n, line) => `第 ${k} 个空，共 ${n} 个（第 ${line} 行）`,
    drillWrongSlot: "这个空和答案不一致：改正后再检查，或按“显示答案”。",
    drillSeed: (seed) => `挖空种子 ${seed}（已写入网址，可分享）`,
    drillRecord: (best, n) => (n ? `最好成绩 ${best}% · 已练 ${n} 次` : "还没有练习记录"),
    drillResetRecord: "清除记录",
    drillAsking: "有的答案和原文不同，正在用 Python 检查是否等价…",
    drillNoPython: "Python 暂时不可用：只按精确匹配判分。",
    drillEquivalent: (list) => `以下答案和原文写法不同，但效果等价，已判为正确：${list.join("、")}`,
    drillNotEquivalent: "和原文不同的答案在随机输入上结果也不同。",
    drillAllRight: "全部正确！",
    demoRun: "在浏览器里运行",
    demoSample: "下面是一次完整运行的曲线（种子 0，默认配置）。",
    demoChart: {
      rm_score: "奖励模型分数：PPO 与 GRPO",
      kl: "与参考模型的 KL（每个词）：PPO 与 GRPO",
      entropy: "策略熵：PPO 与 GRPO",
      margin: "DPO：偏好边际",
      gspo: "奖励模型分数：GSPO 与 GRPO",
      mismatch: "rollout 失配：奖励模型分数",
      rollout_kl: "rollout 失配：KL(π_rollout ‖ π_train)（每个词）",
      tis_truncated: "rollout 失配：权重超过 C、被 TIS 截断的 token 比例",
    },
    demoMetric: {
      rm_score: "RM 分",
      kl: "KL",
      entropy: "熵",
      margin: "边际",
      rollout_kl: "rollout KL",
      tis_truncated: "截断比例",
    },
    demoPhaseName: {
      ppo: "PPO",
      dpo: "DPO",
      grpo: "GRPO",
      gspo: "GSPO",
      grpo_mismatch: "GRPO + 失配",
      grpo_tis: "GRPO + 失配 + TIS",
    },
    demoVariants: "同时运行 GSPO 和 rollout 失配（不修正 / TIS），用时约翻倍",
    demoStep: "步数",
    demoSampleSeries: "示例运行",
    demoLiveSeries: "你的运行",
    demoPhase: (phase, step, total) => `${phase} ${step}/${total}`,
    demoDone: (s) => `完成，用时 ${s} 秒`,
    demoModel: "模型",
    demoMeanScore: "平均 RM 分",
    demoWords: "写出的词",
    demoSampleWords: "示例运行中每个模型写出的词",
    demoYourWords: "你这次运行中每个模型写出的词",
    progressChapter: "章节",
    progressSolved: "通过检查的练习",
    progressDrill: "挖空训练最高分",
    progressDrillBest: (best, tried, total) => `${best}%（练过 ${tried} / ${total} 个）`,
    progressReset: "清空进度",
    progressResetConfirm: "清空本浏览器里记录的所有练习通过记录和挖空训练成绩？你填写的代码不受影响。",
  },
  en: {
    run: "Run",
    check: "Check",
    stop: "Stop",
    reset: "Reset",
    edit: "Edit",
    blanksMode: "Back to blanks",
    output: "Output",
    blankLabel: (i, n, fn, line) => `Blank ${i} of ${n} in ${fn} (line ${line})`,
    editorLabel: "Code editor",
    editorKeys: "Tab indents; press Esc, then Tab, to leave the editor; Ctrl+Enter runs.",
    loading: "Loading Python",
    fetching: (name, loaded, total) =>
      total ? `Downloading ${name} (${mb(loaded)} / ${mb(total)} MB)` : `Downloading ${name}`,
    running: "Running…",
    checking: "Checking…",
    waiting: "Waiting for Python…",
    finished: (ms) => `Done (${ms} ms)`,
    failed: "The code raised an error",
    stopped: "Stopped: the Python runtime was restarted and will load again on the next run.",
    interrupted: "Stopped.",
    timedOut: (s) => `Stopped after the ${s} s time limit. Is there an endless loop?`,
    loadFailed: (what, msg, offline) =>
      `Could not load ${what} (${msg}).${offline ? " You seem to be offline." : ""} ` +
      "Everything that does not need Python (reading, hints, answers, the drill's exact checking) still works; the next run tries again.",
    exerciseError: (msg) => `The site's own code raised an error, not yours (please report it):\n${msg}`,
    died: (msg) => `Python stopped (${msg}) and was restarted; run again.`,
    restartedAfter: (why) => `Python was restarted after this run (${why}); the next run starts clean.`,
    outputCut: (n) =>
      `\n[... ${n.toLocaleString("en")} ${plural(n, "character", "characters")} of output not shown ...]\n`,
    storageFull:
      "Your answers could not be saved: the browser's storage is full (or disabled). Keep a copy before you reload.",
    otherTab: "This exercise was changed in another tab.",
    takeOtherTab: "Take the other tab's version",
    keepMine: "Keep this one",
    unreadableSaved: "Your saved answers could not be read; they were set aside, and this starts empty.",
    checkPassed: (n) => `All ${n} random inputs agree with the reference.`,
    checkFailed: (bad, n) => `${bad} of ${n} random inputs ${plural(bad, "disagrees", "disagree")} with the reference:`,
    checkCase: (i) => `Case ${i}`,
    checkShrunk: (i) => `Smallest failing input (shrunk from random case ${i})`,
    why: {
      count: (r) => `returned ${r.got} ${plural(r.got, "value", "values")}, expected ${r.expected}`,
      shape: (r) => `shape ${list(r.got)}, expected ${list(r.expected)}`,
      values: (r) => (r.at.length ? `values differ at ${r.at.map(list).join(", ")}` : "values differ"),
      output: (k) => `output ${k}: `,
    },
    inputs: "Inputs",
    expected: "Expected",
    got: "Yours",
    reason: "Why",
    oldVersion: "This exercise has changed since you saved your answers; they were not applied.",
    restoreOld: "Put my old answers in the editor",
    discardOld: "Discard them",
    drillRatio: "Share of tokens to mask",
    drillExtended: "Extended",
    drillModeHelp: "Extended mode also masks operators and one-character names and numbers (- * t 1)",
    drillRefresh: "Refresh",
    drillReveal: "Reveal",
    drillRetry: "Retry",
    drillStats: (n, m) => `${n} maskable slots | ${m} masked`,
    drillScore: (c, m) => `score ${c}/${m} (${Math.round((100 * c) / m)}%)`,
    drillBlankLabel: (k, n, line) => `Blank ${k} of ${n} (line ${line})`,
    drillWrongSlot: "This slot does not match the answer: correct it and check again, or reveal the answer.",
    drillSeed: (seed) => `Mask seed ${seed} (kept in the URL, so you can share it)`,
    drillRecord: (best, n) => (n ? `Best ${best}% · ${n} ${plural(n, "attempt", "attempts")}` : "No attempts yet"),
    drillResetRecord: "Reset record",
    drillAsking: "Some answers differ from the original text; checking with Python whether they mean the same…",
    drillNoPython: "Python is unavailable right now: only exact matches are counted.",
    drillEquivalent: (list) => `These answers differ in text but not in effect, and count as right: ${list.join(", ")}`,
    drillNotEquivalent: "The answers that differ from the original text also give different results.",
    drillAllRight: "All right!",
    demoRun: "Run in the browser",
    demoSample: "Below: the curves of one full run (seed 0, default configuration).",
    demoChart: {
      rm_score: "Reward-model score: PPO and GRPO",
      kl: "KL to the reference, per word: PPO and GRPO",
      entropy: "Policy entropy: PPO and GRPO",
      margin: "DPO: preference margin",
      gspo: "Reward-model score: GSPO and GRPO",
      mismatch: "Rollout mismatch: reward-model score",
      rollout_kl: "Rollout mismatch: KL(π_rollout ‖ π_train), per word",
      tis_truncated: "Rollout mismatch: share of tokens whose weight exceeds C (TIS truncates them)",
    },
    demoMetric: {
      rm_score: "RM score",
      kl: "KL",
      entropy: "entropy",
      margin: "margin",
      rollout_kl: "rollout KL",
      tis_truncated: "truncated",
    },
    demoPhaseName: {
      ppo: "PPO",
      dpo: "DPO",
      grpo: "GRPO",
      gspo: "GSPO",
      grpo_mismatch: "GRPO + mismatch",
      grpo_tis: "GRPO + mismatch + TIS",
    },
    demoVariants: "Also run GSPO and the rollout mismatch (uncorrected / TIS): about twice as long",
    demoStep: "step",
    demoSampleSeries: "sample run",
    demoLiveSeries: "your run",
    demoPhase: (phase, step, total) => `${phase} ${step}/${total}`,
    demoDone: (s) => `Done in ${s} s`,
    demoModel: "Model",
    demoMeanScore: "Mean RM score",
    demoWords: "Words it writes",
    demoSampleWords: "What each model writes in the sample run",
    demoYourWords: "What each model writes in your run",
    progressChapter: "Chapter",
    progressSolved: "Exercises that passed Check",
    progressDrill: "Best drill score",
    progressDrillBest: (best, tried, total) => `${best}% (${tried} of ${total} drills tried)`,
    progressReset: "Reset progress",
    progressResetConfirm:
      "Forget every passed exercise and drill score kept in this browser? The code you typed is kept.",
  },
};

const englishPlural = new Intl.PluralRules("en");

/** The English word for a count: `one` for 1, `other` otherwise. */
function plural(n, one, other) {
  return englishPlural.select(n) === "one" ? one : other;
}

/** A shape or an index as Python prints a list: [2, 3]. */
function list(xs) {
  return `[${xs.join(", ")}]`;
}

/** Why a case of Check failed (a reason code of browser_runtime/check.py), in the page's words.
 * The learner's own exception (raised) and a result that is no tensor (type) are shown as Python
 * wrote them. */
export function reasonText(reason, t) {
  if (reason.code === "raised") return reason.message;
  if (reason.code === "type") return `TypeError: ${reason.message}`;
  const head = reason.output ? t.why.output(reason.output) : "";
  return head + t.why[reason.code](reason);
}

function mb(bytes) {
  return (bytes / 1e6).toFixed(1);
}

/**
 * What the page says when a job is over (js/python.js's states), as {text, cls}; null when the
 * job's own output says it all. One map for every widget. `limitMs`: the job's time limit.
 */
export function describeOutcome(outcome, t, { limitMs = 0 } = {}) {
  const failure = outcome.failure;
  if (outcome.state === "timed-out") return { text: t.timedOut(limitMs / 1000), cls: "rl-error" };
  if (outcome.state === "stopped") {
    return { text: outcome.restarted ? t.stopped : t.interrupted, cls: "rl-error" };
  }
  if (failure?.kind === "load") {
    return { text: t.loadFailed(failure.what, failure.message, failure.offline), cls: "rl-error" };
  }
  if (failure?.kind === "died") return { text: t.died(failure.message), cls: "rl-error" };
  if (failure) return { text: t.exerciseError(failure.message), cls: "rl-error" };
  if (outcome.restart) return { text: t.restartedAfter(outcome.restart), cls: "rl-error" };
  return null;
}

/** The string table of the page's language (<html lang>), or else of the site's default one
 * (the first of the languages the build configured: site_build/languages.py). */
export function strings(doc = document) {
  return STRINGS[doc.documentElement.lang] ?? STRINGS[siteConfig().languages[0]];
}
