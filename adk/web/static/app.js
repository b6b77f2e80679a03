// The adk web page: the conversation, every event, each callback decision, state and sessions.
// Everything shown comes from the AG-UI stream (live) or the stored events (a reopened session);
// text from the agent is always set as text, never parsed as HTML.
import { newId, runAgent } from "./agui.js";

const $ = (id) => document.getElementById(id);
const conversation = $("conversation");
const eventLog = $("events");

let threadId = "";
let state = {};
let busy = false;
const toolCards = new Map(); // tool call id -> its card
const approvalCards = new Map(); // interrupt id (the waiting call's id) -> its card
const waiting = new Set(); // the interrupts the paused run waits for: each asks for an approval
const answers = new Map(); // interrupt id -> the person's answer, sent once all have one

/** An element with a class, text and data attributes. */
function el(tag, className, text, data = {}) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  for (const [key, value] of Object.entries(data)) node.dataset[key] = value;
  return node;
}

function scrolled(list, node) {
  list.append(node);
  node.scrollIntoView({ block: "nearest" });
  return node;
}

// --- the conversation ---

function bubble(role, author, text, id) {
  const item = el("li", `bubble ${role}`, undefined, { role });
  if (id) item.id = id;
  item.append(el("span", "who", author), el("span", "text", text));
  return scrolled(conversation, item);
}

function toolCard(id, name) {
  const card = el("li", "tool-call", undefined, { name, id });
  const head = el("div", "head");
  head.append(el("span", "mark", "⚙ "), el("span", "name", name), el("span", "args", ""));
  card.append(head, el("pre", "result", "running…"));
  toolCards.set(id, card);
  return scrolled(conversation, card);
}

/** A call waiting for approval (an AG-UI interrupt): what is asked, and Approve / Reject (with a reason). */
function approvalCard(id) {
  const card = el("li", "approval", undefined, { id });
  const reason = el("input", "reason");
  reason.placeholder = "reason, if you reject";
  const approve = el("button", "approve", "Approve");
  const reject = el("button", "reject", "Reject");
  for (const control of [approve, reject, reason]) {
    control.type = control === reason ? "text" : "button";
    control.disabled = true;
  }
  approve.addEventListener("click", () => decide(card, { approved: true }));
  reject.addEventListener("click", () => decide(card, { approved: false, reason: reason.value }));
  const controls = el("div", "controls");
  controls.append(approve, reject, reason);
  card.append(el("div", "asked", "⏸ waiting for approval"), controls);
  approvalCards.set(id, card);
  return scrolled(conversation, card);
}

function ask(card, asked) {
  const what = `${asked.tool}(${JSON.stringify(asked.arguments)})`;
  card.querySelector(".asked").textContent = `⏸ approve ${what}? ${asked.reason}`;
}

function awaitAnswers(ids) {
  waiting.clear();
  answers.clear();
  for (const id of ids) {
    const card = approvalCards.get(id);
    if (card === undefined) continue;
    waiting.add(id);
    for (const control of card.querySelectorAll("button, input")) control.disabled = false;
  }
}

/** Record a person's answer; once every interrupt has one, send them all as resume entries (the run resumes). */
function decide(card, answer) {
  answers.set(card.dataset.id, answer);
  card.dataset.answer = answer.approved ? "approved" : "rejected";
  for (const control of card.querySelectorAll("button, input")) control.disabled = true;
  if ([...waiting].some((id) => !answers.has(id))) return;
  const resume = [...waiting].map((interruptId) => ({ interruptId, status: "resolved", payload: answers.get(interruptId) }));
  waiting.clear();
  run([], resume);
}

function setArgs(card, raw) {
  let shown = raw;
  try {
    shown = JSON.stringify(JSON.parse(raw || "{}"));
  } catch {
    // arguments that are not JSON are shown as they came
  }
  card.querySelector(".args").textContent = `(${shown})`;
}

function toolResult(id, content, failed) {
  const card = toolCards.get(id) ?? toolCard(id, "?");
  const result = card.querySelector(".result");
  result.textContent = `↳ ${content}`;
  card.classList.toggle("failed", Boolean(failed));
}

/** One line per callback decision, as the command line shows it. */
export function describe(d) {
  const who = d.by.replace(/^callback:/, "");
  const [kind, name] = d.target.split(/:(.*)/s);
  const target = `${kind} ${name}`;
  const failed = `${target} failed (${d.error}: ${d.message})`;
  switch (d.kind) {
    case "halted":
      return ["⊘", `${who} halted ${target}; ${kind === "model" ? "the model was not called" : "it did not run"}`];
    case "replaced":
      return ["✎", `${who} replaced the output of ${target}`];
    case "retried":
      return ["↻", `${failed}; ${who} retries in ${d.wait.toFixed(2)} s (attempt ${d.attempt})`];
    case "fell_back":
      return ["⇄", `${failed}; ${who} falls back to ${d.to === null ? "a fallback result" : d.to.replace(":", " ")}`];
    case "deferred": // by a callback, or by a tool marked as needing approval
      return ["⏸", d.by === d.target ? `${target} waits for approval: ${d.reason}` : `${who} deferred ${target} for approval: ${d.reason}`];
    case "approved":
      return ["✔", `${target} approved (${d.call_id}); it runs`];
    case "rejected":
      return ["⊘", `${target} rejected (${d.call_id})${d.reason ? `: ${d.reason}` : ""}; it does not run`];
    default:
      return ["?", JSON.stringify(d)];
  }
}

function decision(d) {
  const [mark, text] = describe(d);
  scrolled(conversation, el("li", `note decision ${d.kind}`, `${mark} ${text}`, { kind: d.kind }));
}

function note(className, text) {
  scrolled(conversation, el("li", `note ${className}`, text));
}

function usageLine(e) {
  const parts = [`model ${e.model}`];
  if (e.latency !== undefined) parts.push(`${(e.latency * 1000).toFixed(0)} ms`);
  if (e.usage) parts.push(`${e.usage.total_tokens} tokens (${e.usage.prompt_tokens} in, ${e.usage.completion_tokens} out)`);
  return parts.join(" · ");
}

// --- events and state ---

function logEvent(e) {
  const row = el("li", "event", undefined, { object: e.object, author: e.author });
  const when = new Date(e.timestamp * 1000).toLocaleTimeString();
  row.append(
    el("span", "when", when),
    el("span", "author", e.author),
    el("span", "branch", e.branch),
    el("span", "object", e.object),
  );
  const message = e.choices?.[0]?.message;
  if (message?.content) row.append(el("span", "content", message.content.slice(0, 120)));
  for (const call of message?.tool_calls ?? []) row.append(el("span", "call", `${call.function.name}(${call.function.arguments})`));
  if (e.model) row.append(el("span", "usage", usageLine(e)));
  for (const d of e.decisions ?? []) row.append(el("span", `decision ${d.kind}`, describe(d).join(" ")));
  const delta = e.actions?.state_delta ?? {};
  if (Object.keys(delta).length) row.append(el("span", "delta", `Δ ${JSON.stringify(delta)}`));
  if (e.error) row.append(el("span", "error", `${e.error.type}: ${e.error.message}`));
  scrolled(eventLog, row);
}

function showState() {
  $("state").textContent = JSON.stringify(state, null, 2);
}

/** Apply an AG-UI STATE_DELTA (JSON Patch on top-level keys, as adk sends it). */
function applyPatch(ops) {
  for (const op of ops) {
    const key = op.path.slice(1).replaceAll("~1", "/").replaceAll("~0", "~");
    if (op.op === "remove") delete state[key];
    else state[key] = op.value;
  }
  showState();
}

// --- a live run ---

function onEvent(event) {
  switch (event.type) {
    case "STATE_SNAPSHOT":
      state = { ...event.snapshot };
      showState();
      break;
    case "STATE_DELTA":
      applyPatch(event.delta);
      break;
    case "TEXT_MESSAGE_START":
      bubble("assistant", event.name ?? "assistant", "", event.messageId).classList.add("live");
      break;
    case "TEXT_MESSAGE_CONTENT":
      document.getElementById(event.messageId).querySelector(".text").textContent += event.delta;
      break;
    case "TOOL_CALL_START":
      toolCard(event.toolCallId, event.toolCallName);
      break;
    case "TOOL_CALL_ARGS": {
      const card = toolCards.get(event.toolCallId);
      card.dataset.raw = (card.dataset.raw ?? "") + event.delta;
      setArgs(card, card.dataset.raw);
      break;
    }
    case "TOOL_CALL_RESULT":
      toolResult(event.toolCallId, event.content);
      break;
    case "MESSAGES_SNAPSHOT": {
      // A discarded attempt or a replaced output: the snapshot is what the messages are now.
      const kept = new Map(event.messages.map((m) => [m.id, m]));
      for (const item of conversation.querySelectorAll(".bubble.assistant.live")) {
        const message = kept.get(item.id);
        if (message === undefined) item.classList.add("discarded");
        else item.querySelector(".text").textContent = message.content ?? "";
      }
      break;
    }
    case "CUSTOM":
      if (event.name === "adk.decision") decision(event.value);
      else if (event.name === "adk.event") {
        logEvent(event.value);
        if (event.value.object === "chat.completion" && event.value.model) note("usage", usageLine(event.value));
      }
      break;
    case "RUN_FINISHED": {
      // Paused to ask (AG-UI 1.0's interrupt outcome): one approval per interrupt.
      const interrupts = event.outcome?.type === "interrupt" ? event.outcome.interrupts : [];
      for (const i of interrupts) ask(approvalCard(i.id), { tool: i.metadata?.tool, arguments: i.metadata?.arguments, reason: i.message });
      awaitAnswers(interrupts.map((i) => i.id));
      break;
    }
    case "RUN_ERROR":
      note("error", `✗ ${event.code ?? "error"}: ${event.message}`);
      break;
  }
}

function send(text) {
  if (!threadId) openThread(newId().slice(0, 12));
  bubble("user", "you", text);
  return run([{ id: newId(), role: "user", content: text }]);
}

async function run(messages, resume) {
  busy = true;
  document.body.dataset.idle = "false";
  $("send").disabled = true;
  try {
    await runAgent("/agui", threadId, messages, onEvent, resume);
  } catch (error) {
    note("error", `✗ ${error.message}`);
  } finally {
    for (const item of conversation.querySelectorAll(".live")) item.classList.remove("live");
    busy = false;
    $("send").disabled = false;
    document.body.dataset.idle = "true";
    listSessions();
  }
}

// --- sessions ---

function openThread(id) {
  threadId = id;
  $("session-id").textContent = id ? `session ${id}` : "new session";
  history.replaceState(null, "", id ? `#session=${encodeURIComponent(id)}` : "#");
  for (const item of $("sessions").children) item.classList.toggle("current", item.dataset.id === id);
}

async function listSessions() {
  const response = await fetch("/api/sessions");
  if (!response.ok) return;
  const sessions = await response.json();
  const list = $("sessions");
  list.replaceChildren();
  for (const s of sessions) {
    const item = el("li", s.id === threadId ? "current" : "", undefined, { id: s.id });
    const link = el("a", "", s.title || s.id);
    link.href = `#session=${encodeURIComponent(s.id)}`;
    link.title = `${s.id}, ${new Date(s.updated_at * 1000).toLocaleString()}`;
    link.addEventListener("click", (click) => {
      click.preventDefault();
      if (!busy) reopen(s.id);
    });
    item.append(link);
    list.append(item);
  }
}

/** Show a stored session: its conversation, events, decisions and state, as they were. */
async function reopen(id) {
  const response = await fetch(`/api/sessions/${encodeURIComponent(id)}`);
  conversation.replaceChildren();
  eventLog.replaceChildren();
  toolCards.clear();
  approvalCards.clear();
  openThread(id);
  if (!response.ok) {
    note("error", `✗ session ${id}: ${(await response.json()).detail}`);
    return;
  }
  const session = await response.json();
  const last = session.events.at(-1);
  const paused = last?.object === "runner.paused" ? last : null;
  for (const e of session.events) {
    logEvent(e);
    for (const d of e.decisions ?? []) decision(d); // stored events are the record: every decision
    const message = e.choices?.[0]?.message;
    if (e.object === "chat.completion" && message) {
      if (message.role === "user") bubble("user", "you", message.content);
      else {
        if (message.content) bubble("assistant", e.author, message.content);
        for (const call of message.tool_calls ?? []) setArgs(toolCard(call.id, call.function.name), call.function.arguments);
        if (e.model) note("usage", usageLine(e));
      }
    } else if (e.object === "tool.response" && message) {
      toolResult(message.tool_call_id, message.content, e.error);
    } else if (e.object === "error" && e.error) {
      note("error", `✗ ${e.error.type}: ${e.error.message}`);
    } else if (e.object === "tool.approval_request" && paused?.invocation_id === e.invocation_id) {
      for (const d of e.decisions ?? []) {
        if (d.kind === "deferred") ask(approvalCard(d.call_id), { tool: d.target.replace(/^tool:/, ""), arguments: d.arguments, reason: d.reason });
      }
    }
  }
  awaitAnswers(paused ? paused.long_running_tool_ids : []);
  state = session.state;
  showState();
}

// --- start ---

$("composer").addEventListener("submit", (submit) => {
  submit.preventDefault();
  const input = $("message");
  const text = input.value.trim();
  if (!text || busy) return;
  input.value = "";
  send(text);
});

$("new-session").addEventListener("click", () => {
  if (busy) return;
  conversation.replaceChildren();
  eventLog.replaceChildren();
  toolCards.clear();
  approvalCards.clear();
  awaitAnswers([]);
  state = {};
  showState();
  openThread("");
});

const asked = new URLSearchParams(location.hash.slice(1)).get("session");
openThread("");
await listSessions();
if (asked) await reopen(asked);
document.body.dataset.ready = "true";
document.body.dataset.idle = "true";
