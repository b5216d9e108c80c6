// Every UI string of the widgets, in both languages. The page's <html lang> picks the table.

const STRINGS = {
  zh: {
    run: "运行",
    check: "检查",
    stop: "停止",
    reset: "重置",
    edit: "编辑",
    blanksMode: "回到填空",
    output: "输出",
    blankLabel: (i, line) => `第 ${i} 个空（第 ${line} 行）`,
    editorLabel: "代码编辑器",
    loading: "正在加载 Python",
    fetching: (name, loaded, total) =>
      total ? `正在下载 ${name}（${mb(loaded)} / ${mb(total)} MB）` : `正在下载 ${name}`,
    ready: "Python 已就绪",
    running: "运行中…",
    checking: "检查中…",
    waiting: "等待 Python…",
    finished: (ms) => `完成（${ms} ms）`,
    failed: "运行出错",
    stopped: "已停止：Python 运行时已重启，下次运行会重新加载。",
    interrupted: "已停止。",
    timedOut: (s) => `超过时间限制（${s} 秒），已停止。是不是有死循环？`,
    offline: (url) =>
      `无法下载 numpy（${url}）。可能处于离线状态，或 CDN 被拦截。页面上不需要 Python 的功能（阅读、提示、答案、随机挖空的精确检查）照常可用。`,
    loadFailed: (msg) => `Python 运行时加载失败：${msg}`,
    checkPassed: (n) => `全部 ${n} 组随机输入都与参考实现一致。`,
    checkFailed: (bad, n) => `${n} 组随机输入中有 ${bad} 组与参考实现不一致：`,
    checkCase: (i) => `第 ${i} 组`,
    inputs: "输入",
    expected: "期望",
    got: "你的结果",
    reason: "原因",
    restored: "已恢复你上次填写的内容。",
    oldVersion: "这道题更新过，你保存的答案对应旧版本，没有自动套用。",
    restoreOld: "把旧答案放进编辑器",
  },
  en: {
    run: "Run",
    check: "Check",
    stop: "Stop",
    reset: "Reset",
    edit: "Edit",
    blanksMode: "Back to blanks",
    output: "Output",
    blankLabel: (i, line) => `Blank ${i} (line ${line})`,
    editorLabel: "Code editor",
    loading: "Loading Python",
    fetching: (name, loaded, total) =>
      total ? `Downloading ${name} (${mb(loaded)} / ${mb(total)} MB)` : `Downloading ${name}`,
    ready: "Python is ready",
    running: "Running…",
    checking: "Checking…",
    waiting: "Waiting for Python…",
    finished: (ms) => `Done (${ms} ms)`,
    failed: "The code raised an error",
    stopped: "Stopped: the Python runtime was restarted and will load again on the next run.",
    interrupted: "Stopped.",
    timedOut: (s) => `Stopped after the ${s} s time limit. Is there an endless loop?`,
    offline: (url) =>
      `Could not download numpy (${url}). You may be offline, or the CDN is blocked. Everything that does not need Python (reading, hints, answers, the drill's exact checking) still works.`,
    loadFailed: (msg) => `The Python runtime failed to load: ${msg}`,
    checkPassed: (n) => `All ${n} random inputs agree with the reference.`,
    checkFailed: (bad, n) => `${bad} of ${n} random inputs disagree with the reference:`,
    checkCase: (i) => `Case ${i}`,
    inputs: "Inputs",
    expected: "Expected",
    got: "Yours",
    reason: "Why",
    restored: "Restored what you typed last time.",
    oldVersion: "This exercise has changed since you saved your answers; they were not applied.",
    restoreOld: "Put my old answers in the editor",
  },
};

function mb(bytes) {
  return (bytes / 1e6).toFixed(1);
}

/** The string table of the page's language (zh by default). */
export function strings(doc = document) {
  const lang = (doc.documentElement.lang || "zh").slice(0, 2);
  return STRINGS[lang] ?? STRINGS.zh;
}
