// What the page says before any run: the agent's name and its welcome line; with several agents
// served (`adk web FOLDER`), a picker in the header, and at the root a page to choose one.
import { icon } from "./icons.js";

const $ = (id) => document.getElementById(id);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A card per agent, each a link to its page. */
function cards(agents) {
  const list = $("agents");
  for (const agent of agents) {
    const item = el("li", "agent-card");
    item.dataset.name = agent.name;
    const link = el("a");
    link.href = agent.url;
    link.append(icon("agent"), el("strong", "", agent.name), el("span", "about", agent.description || "an adk agent"));
    item.append(link);
    list.append(item);
  }
}

/** The header's picker: the agents served, this one selected; choosing one opens its page. */
function picker(agents) {
  const select = $("agent-picker");
  for (const agent of agents) {
    const option = el("option", "", agent.name);
    option.value = agent.name;
    option.selected = location.pathname.endsWith(`/${agent.url}`);
    select.append(option);
  }
  select.hidden = false;
  select.addEventListener("change", () => {
    location.href = `../${encodeURIComponent(select.value)}/`;
  });
}

/** Fetch what the server says about its agent (`GET api/agent`) and show it; returns it. */
export async function showAgent() {
  const about = await (await fetch("api/agent")).json();
  const agents = about.agents ?? [];
  document.body.dataset.empty = "true";
  if (!about.name) {
    // The root of several agents: choose one.
    document.body.dataset.mode = "picker";
    $("agent-name").textContent = `${agents.length} agents`;
    $("welcome-name").textContent = "Pick an agent";
    $("welcome-line").textContent = "Each opens in its own page, with its own sessions.";
    cards(agents);
    return about;
  }
  document.title = `${about.name} · adk web`;
  $("agent-name").textContent = about.name;
  $("welcome-name").textContent = about.name;
  $("welcome-line").textContent = about.description || `Say hello to ${about.name}.`;
  if (agents.length > 1) picker(agents);
  return about;
}
