// A run's timeline: its model calls, tool calls and deciding hooks as bars on one time axis.
// Every time is measured, never made up: an event's own timestamp, or (live) when a call's hook
// saw it start and how long it took (`started`, `latency`: adk/web/timing.py). A call without
// those spans the time from the previous event of its branch to the event that ends it.
import { describe } from "./decisions.js";
import { icon } from "./icons.js";

/** What a run's events (adk events' JSON, in order) show: rows of {kind, name, start, end, ...}. */
export function layout(events) {
  const rows = [];
  const last = new Map(); // branch -> the time of its latest event
  const t0 = events[0].timestamp;
  for (const e of events) {
    const since = last.get(e.branch) ?? t0;
    const measured = e.started !== undefined ? [e.started, e.started + e.latency] : null;
    const decisions = e.decisions ?? [];
    const message = e.choices?.[0]?.message;
    if (e.object === "chat.completion" && e.author !== "user") {
      const halted = decisions.find((d) => d.kind === "halted");
      if (halted) rows.push({ kind: "hook", name: hookName(halted), start: since, end: e.timestamp, decision: halted });
      else modelCall(rows, e, measured ?? [since, e.timestamp]);
    } else if (e.object === "tool.response" && message) {
      const halted = decisions.find((d) => d.kind === "halted");
      if (halted) rows.push({ kind: "hook", name: hookName(halted), start: since, end: e.timestamp, decision: halted });
      else {
        const [start, end] = measured ?? [since, e.timestamp];
        rows.push({ kind: "tool", name: message.name ?? "tool", start, end, decisions, failed: e.error ? `${e.error.type}: ${e.error.message}` : undefined });
      }
    } else if (e.object === "tool.approval_request") {
      for (const d of decisions) rows.push({ kind: "tool", name: d.target.replace(/^tool:/, ""), start: since, end: e.timestamp, decisions: [d] });
    } else if (e.object === "error" && e.error) {
      rows.push({ kind: "error", name: e.error.type, start: since, end: e.timestamp, failed: e.error.message });
    }
    last.set(e.branch, e.timestamp);
  }
  rows.sort((a, b) => a.start - b.start);
  const end = Math.max(events.at(-1).timestamp, ...rows.map((r) => r.end));
  const agent = events.find((e) => e.author !== "user")?.author ?? "run";
  // A resumed run's first event is an answered call's result: that call started before it.
  const start = Math.min(t0, ...rows.map((r) => r.start));
  rows.unshift({ kind: "agent", name: `agent ${agent}`, start, end }); // the whole run, first event to last
  return { start, total: Math.max(end - start, 1e-6), rows };
}

/**
 * A model call's rows: each failed attempt that a hook retried (live: `failed_at`, when the hook
 * had decided) and that hook's wait, then the call. A fallback's model is called by the hook
 * itself, before its decision is told: the call is one row, with the fallback on it.
 */
function modelCall(rows, e, [start, end]) {
  const decisions = e.decisions ?? [];
  const recovered = decisions.filter((d) => d.kind === "retried" || d.kind === "fell_back");
  const split = [];
  let begin = start;
  (e.failed_at ?? []).forEach((at, i) => {
    const d = recovered[i];
    const wait = d?.wait ?? 0;
    if (d?.kind !== "retried" || at < begin || at + wait > end) return;
    rows.push({ kind: "model", name: d.target.replace(/^model:/, "model "), start: begin, end: at, failed: `${d.error}: ${d.message}` });
    rows.push({ kind: "hook", name: hookName(d), start: at, end: at + wait, decision: d });
    split.push(d);
    begin = at + wait;
  });
  const shown = decisions.filter((d) => !split.includes(d)); // the others, on the call
  rows.push({ kind: "model", name: `model ${e.model || "?"}`, start: begin, end, decisions: shown, usage: e.usage });
}

function hookName(d) {
  return d.by.replace(/^callback:/, "");
}

/** Seconds as a person reads them: 0.42 ms, 12 ms, 1.25 s. */
export function duration(seconds) {
  const ms = seconds * 1000;
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms.toFixed(0)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** What a row's decision or failure says, with its icon (none for a plain call). */
function verdicts(row) {
  const said = [];
  if (row.failed) said.push(["error", `failed: ${row.failed}`, "failed"]);
  for (const d of row.decision ? [row.decision] : row.decisions ?? []) said.push([...describe(d), d.kind]);
  return said;
}

function summary(events, { total, rows }) {
  const count = (kind) => rows.filter((r) => r.kind === kind).length;
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const decided = rows.flatMap((r) => (r.decision ? [r.decision] : r.decisions ?? [])).length;
  const said = [plural(count("model"), "model call"), plural(count("tool"), "tool call"), plural(decided, "decision")];
  const head = el("summary", "summary");
  const first = events.find((e) => e.author === "user")?.choices?.[0]?.message?.content;
  head.append(icon("clock"), el("strong", "", duration(total)), el("span", "counts", ` · ${said.join(" · ")}${first ? ` · “${first.slice(0, 40)}”` : ""}`));
  return head;
}

function axis(total) {
  const scale = el("div", "axis");
  for (const share of [0, 0.25, 0.5, 0.75, 1]) {
    const tick = el("span", "tick", duration(total * share));
    tick.style.left = `${share * 100}%`;
    scale.append(tick);
  }
  return scale;
}

function row(r, { start, total }) {
  const said = verdicts(r);
  const item = el("li", `span ${r.kind}`);
  Object.assign(item.dataset, { kind: r.kind, name: r.name, start: String(r.start - start), end: String(r.end - start) });
  if (said.length) item.dataset.decision = said.map((s) => s[2]).join(" ");
  const label = el("span", "label");
  label.title = r.name;
  label.append(icon(r.kind === "hook" && said.length ? said[0][0] : r.kind), el("span", "name", r.name));
  const track = el("span", "track");
  const bar = el("span", "bar");
  bar.style.left = `${((r.start - start) / total) * 100}%`;
  bar.style.width = `${((r.end - r.start) / total) * 100}%`;
  track.append(bar);
  const took = el("span", "took", duration(r.end - r.start));
  if (r.usage) took.title = `${r.usage.total_tokens} tokens (${r.usage.prompt_tokens} in, ${r.usage.completion_tokens} out)`;
  item.append(label, track, took);
  for (const [mark, text, kind] of said) {
    const line = el("span", `verdict ${kind}`);
    line.append(icon(mark), el("span", "", text));
    item.append(line);
  }
  return item;
}

/** The timeline of one run, as a list item of the conversation; none if nothing was timed. */
export function timeline(events) {
  if (events.length < 2) return null;
  const laid = layout(events);
  if (laid.rows.length < 2) return null; // the run's own row, and nothing in it
  const item = el("li", "timeline");
  const details = el("details");
  details.open = true;
  const rows = el("ol", "spans");
  rows.append(...laid.rows.map((r) => row(r, laid)));
  details.append(summary(events, laid), axis(laid.total), rows);
  item.append(details);
  return item;
}
