// The adk web page: the conversation, every event, each callback decision, each run's timeline,
// state and sessions. Everything shown comes from the AG-UI stream (live) or the stored events (a
// reopened session); text from the agent is always set as text, never parsed as HTML.
import { newId, runAgent } from "./agui.js";
import { describe } from "./decisions.js";
import { icon } from "./icons.js";
import { showAgent } from "./picker.js";
import { timeline } from "./timeline.js";

const $ = (id) => document.getElementById(id);
const conversation = $("conversation");
const eventLog = $("events");

let threadId = "";
let prefix = ""; // what this agent's session ids start with (several agents served: its name)
let state = {};
let busy = false;
let runEvents = []; // the adk events of the run shown last, for its timeline
let lastCall = ""; // the call the latest tool.response answers: a halt of it goes before its card
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

/** `node` added to `list` (before `before`, if given), and brought into view. */
function scrolled(list, node, before = null) {
  list.insertBefore(node, before);
  node.scrollIntoView({ block: "nearest" });
  document.body.dataset.empty = "false";
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
  head.append(icon("tool"), el("span", "name", name), el("span", "args", ""));
  const result = el("div", "result");
  result.append(icon("result"), el("pre", "", "running…"));
  card.append(head, result);
  toolCards.set(id, card);
  return scrolled(conversation, card);
}

/** A call waiting for approval (an AG-UI interrupt): what is asked, and Approve / Reject (with a reason). */
function approvalCard(id) {
  const card = el("li", "approval", undefined, { id });
  const reason = el("input", "reason");
  reason.placeholder = "reason, if you reject";
  const approve = el("button", "approve");
  approve.append(icon("approved"), "Approve");
  const reject = el("button", "reject");
  reject.append(icon("rejected"), "Reject");
  for (const control of [approve, reject, reason]) {
    control.type = control === reason ? "text" : "button";
    control.disabled = true;
  }
  approve.addEventListener("click", () => decide(card, approval(card)));
  reject.addEventListener("click", () => decide(card, { approved: false, reason: reason.value }));
  const controls = el("div", "controls");
  controls.append(approve, reject, reason);
  const asked = el("div", "asked");
  asked.append(icon("deferred"), el("span", "what", "waiting for approval"));
  card.append(asked, controls);
  approvalCards.set(id, card);
  return scrolled(conversation, card);
}

function ask(card, asked) {
  const what = `${asked.tool}(${JSON.stringify(asked.arguments)})`;
  if (!asked.schema) {
    card.querySelector(".what").textContent = `approve ${what}? ${asked.reason}`;
    return;
  }
  // A question (an MCP server's elicitation): the reply, as JSON its schema accepts, starts from its defaults.
  card.querySelector(".what").textContent = `${what} asks: ${asked.reason}`;
  const defaults = Object.fromEntries(
    Object.entries(asked.schema.properties ?? {}).filter(([, p]) => p.default !== undefined).map(([k, p]) => [k, p.default]),
  );
  const reply = el("textarea", "reply");
  reply.value = JSON.stringify(defaults, null, 1);
  reply.disabled = true;
  reply.title = `JSON matching ${JSON.stringify(asked.schema)}`;
  card.querySelector(".approve").lastChild.textContent = "Reply";
  card.querySelector(".controls").before(reply);
}

/** An approval, or the reply to a question (its JSON content); null when that JSON does not parse. */
function approval(card) {
  const reply = card.querySelector(".reply");
  if (reply === null) return { approved: true };
  try {
    reply.classList.remove("invalid");
    return { approved: true, content: JSON.parse(reply.value) };
  } catch {
    reply.classList.add("invalid");
    return null;
  }
}

/** A tool call's progress (an MCP server's, an ACTIVITY_SNAPSHOT), on its card while it runs. */
function progress(content) {
  const card = toolCards.get(content.toolCallId);
  if (card === undefined) return;
  card.dataset.progress = content.progress;
  card.querySelector(".result pre").textContent = `running… ${content.progress}`;
}

function awaitAnswers(ids) {
  waiting.clear();
  answers.clear();
  for (const id of ids) {
    const card = approvalCards.get(id);
    if (card === undefined) continue;
    waiting.add(id);
    for (const control of card.querySelectorAll("button, input, textarea")) control.disabled = false;
  }
}

/** Record a person's answer; once every interrupt has one, send them all as resume entries (the run resumes). */
function decide(card, answer) {
  if (answer === null) return; // a reply that is not JSON: the person corrects it
  answers.set(card.dataset.id, answer);
  card.dataset.answer = answer.approved ? "approved" : "rejected";
  for (const control of card.querySelectorAll("button, input, textarea")) control.disabled = true;
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
  card.querySelector(".result pre").textContent = content;
  card.classList.toggle("failed", Boolean(failed));
}

/** A decision, inline; a halt of a tool call goes before that call's card, which it stopped. */
function decision(d, callId) {
  const [mark, text] = describe(d);
  const item = el("li", `note decision ${d.kind}`, undefined, { kind: d.kind });
  item.append(icon(mark), el("span", "", text));
  const stopped = d.kind === "halted" && d.target.startsWith("tool:") ? toolCards.get(callId) : undefined;
  scrolled(conversation, item, stopped ?? null);
}

function note(className, text, mark) {
  const item = el("li", `note ${className}`);
  if (mark) item.append(icon(mark));
  item.append(el("span", "", text));
  scrolled(conversation, item);
}

function usageLine(e) {
  const parts = [`model ${e.model}`];
  if (e.latency !== undefined) parts.push(`${(e.latency * 1000).toFixed(0)} ms`);
  if (e.usage) parts.push(`${e.usage.total_tokens} tokens (${e.usage.prompt_tokens} in, ${e.usage.completion_tokens} out)`);
  return parts.join(" · ");
}

/** The timeline of the run whose events were gathered, after what the run showed. */
function endRun() {
  const shown = timeline(runEvents);
  runEvents = [];
  if (shown) scrolled(conversation, shown);
}

// --- events and state ---

function logEvent(e) {
  const row = el("li", "event", undefined, { object: e.object, author: e.author });
  const when = new Date(e.timestamp * 1000).toLocaleTimeString();
  row.append(el("span", "when", when), el("span", "author", e.author), el("span", "branch", e.branch), el("span", "object", e.object));
  const message = e.choices?.[0]?.message;
  if (message?.content) row.append(el("span", "content", message.content.slice(0, 120)));
  for (const call of message?.tool_calls ?? []) row.append(el("span", "call", `${call.function.name}(${call.function.arguments})`));
  if (e.model) row.append(el("span", "usage", usageLine(e)));
  for (const d of e.decisions ?? []) row.append(el("span", `decision ${d.kind}`, describe(d)[1]));
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

function onDetail(e) {
  runEvents.push(e);
  logEvent(e);
  if (e.object === "tool.response") lastCall = e.choices?.[0]?.message?.tool_call_id ?? "";
  if (e.object === "chat.completion" && e.model) note("usage", usageLine(e));
}

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
    case "ACTIVITY_SNAPSHOT":
      if (event.activityType === "progress") progress(event.content);
      break;
    case "CUSTOM":
      if (event.name === "adk.decision") decision(event.value, lastCall);
      else if (event.name === "adk.event") onDetail(event.value);
      break;
    case "RUN_FINISHED": {
      // Paused to ask (AG-UI 1.0's interrupt outcome): one approval per interrupt.
      const interrupts = event.outcome?.type === "interrupt" ? event.outcome.interrupts : [];
      for (const i of interrupts) {
        const schema = i.reason === "input" ? i.responseSchema?.properties?.content : undefined;
        ask(approvalCard(i.id), { tool: i.metadata?.tool, arguments: i.metadata?.arguments, reason: i.message, schema });
      }
      awaitAnswers(interrupts.map((i) => i.id));
      break;
    }
    case "RUN_ERROR":
      note("error", `${event.code ?? "error"}: ${event.message}`, "error");
      break;
  }
}

function send(text) {
  if (!threadId) openThread(prefix + newId().slice(0, 12));
  bubble("user", "you", text);
  return run([{ id: newId(), role: "user", content: text }]);
}

async function run(messages, resume) {
  busy = true;
  document.body.dataset.idle = "false";
  $("send").disabled = true;
  runEvents = [];
  try {
    await runAgent("agui", threadId, messages, onEvent, resume);
  } catch (error) {
    note("error", error.message, "error");
  } finally {
    endRun();
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
  const response = await fetch("api/sessions");
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

function clear() {
  conversation.replaceChildren();
  eventLog.replaceChildren();
  toolCards.clear();
  approvalCards.clear();
  runEvents = [];
  document.body.dataset.empty = "true";
}

/** One stored event, shown as it was live (its decisions all on it: the stored events are the record). */
function replay(e, paused) {
  runEvents.push(e);
  logEvent(e);
  const message = e.choices?.[0]?.message;
  const callId = e.object === "tool.response" ? message?.tool_call_id : undefined;
  for (const d of e.decisions ?? []) decision(d, callId);
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
    note("error", `${e.error.type}: ${e.error.message}`, "error");
  } else if (e.object === "tool.approval_request" && paused?.invocation_id === e.invocation_id) {
    for (const d of e.decisions ?? []) {
      if (d.kind === "deferred") ask(approvalCard(d.call_id), { tool: d.target.replace(/^tool:/, ""), arguments: d.arguments, reason: d.reason, schema: d.schema });
    }
  }
  if (["runner.completion", "runner.paused", "error"].includes(e.object)) endRun();
}

/** Show a stored session: its conversation, events, decisions, timelines and state, as they were. */
async function reopen(id) {
  const response = await fetch(`api/sessions/${encodeURIComponent(id)}`);
  clear();
  openThread(id);
  if (!response.ok) {
    note("error", `session ${id}: ${(await response.json()).detail}`, "error");
    return;
  }
  const session = await response.json();
  const last = session.events.at(-1);
  const paused = last?.object === "runner.paused" ? last : null;
  for (const e of session.events) replay(e, paused);
  endRun();
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
  clear();
  awaitAnswers([]);
  state = {};
  showState();
  openThread("");
});

const about = await showAgent();
prefix = about.prefix ?? "";
if (about.name) {
  const asked = new URLSearchParams(location.hash.slice(1)).get("session");
  openThread("");
  await listSessions();
  if (asked) await reopen(asked);
}
document.body.dataset.ready = "true";
document.body.dataset.idle = "true";
