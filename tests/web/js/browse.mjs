// Drives the adk web page in headless Chromium and prints what it showed, as JSON.
// Usage: node browse.mjs '{"url": ..., "chromium": ..., "userDataDir": ..., "scenario": ..., "screenshots": DIR}'
// Each step waits for what it expects to appear; a step that never sees it fails the script.
import { chromium } from "playwright-core";

const spec = JSON.parse(process.argv[2]);
const context = await chromium.launchPersistentContext(spec.userDataDir, {
  executablePath: spec.chromium,
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
  viewport: { width: 1280, height: 1000 },
  timeout: 30000,
});
context.setDefaultTimeout(15000);
const page = context.pages()[0] ?? (await context.newPage());
const problems = [];
page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
page.on("console", (message) => message.type() === "error" && problems.push(`console: ${message.text()}`));
page.on("request", (request) => {
  if (!request.url().startsWith(spec.url)) problems.push(`request beyond the server: ${request.url()}`);
});

/** What the page shows now: the conversation, the events' objects, the state, the sessions, the timelines. */
async function shown() {
  return page.evaluate(() => ({
    conversation: [...document.querySelectorAll("#conversation > li")].map((li) => [li.className, li.textContent]),
    icons: [...document.querySelectorAll("#conversation > li.note > svg.icon")].map((svg) => svg.dataset.icon),
    timelines: [...document.querySelectorAll("#conversation > li.timeline")].map((li) => ({
      summary: li.querySelector("summary").textContent,
      ticks: [...li.querySelectorAll(".tick")].map((t) => t.textContent),
      rows: [...li.querySelectorAll(".span")].map((row) => ({
        kind: row.dataset.kind,
        name: row.dataset.name,
        decision: row.dataset.decision ?? "",
        verdicts: [...row.querySelectorAll(".verdict")].map((v) => v.textContent),
        start: Number(row.dataset.start),
        end: Number(row.dataset.end),
        took: row.querySelector(".took").textContent,
        left: row.querySelector(".bar").getBoundingClientRect().left - row.querySelector(".track").getBoundingClientRect().left,
        width: row.querySelector(".bar").getBoundingClientRect().width,
        track: row.querySelector(".track").getBoundingClientRect().width,
      })),
    })),
    events: [...document.querySelectorAll("#events > li")].map((li) => `${li.dataset.author} ${li.dataset.object}`),
    deltas: [...document.querySelectorAll("#events > li .delta")].map((span) => span.textContent),
    state: document.getElementById("state").textContent,
    sessions: [...document.querySelectorAll("#sessions > li")].map((li) => li.dataset.id),
    session: document.getElementById("session-id").textContent,
    agent: document.getElementById("agent-name").textContent,
    welcome: getComputedStyle(document.getElementById("welcome")).display === "none" ? null : document.getElementById("welcome-name").textContent + " | " + document.getElementById("welcome-line").textContent,
    picker: [...document.querySelectorAll("#agent-picker:not([hidden]) option")].map((o) => `${o.value}${o.selected ? "*" : ""}`),
    cards: [...document.querySelectorAll("#agents > li")].map((li) => li.textContent),
    images: document.querySelectorAll("#conversation img").length,
    progress: [...document.querySelectorAll(".tool-call[data-progress]")].map((card) => card.dataset.progress),
    pwned: window.pwned === true,
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  }));
}

/** A screenshot of the page as it is now, named `name`, when the test asks for them. */
async function snap(name, options = {}) {
  if (spec.screenshots) await page.screenshot({ path: `${spec.screenshots}/web-${name}.png`, ...options });
}

async function say(text, expect) {
  await page.fill("#message", text);
  await page.click("#send");
  await page.waitForSelector(expect);
  await page.waitForSelector("body[data-idle=true]");
}

const report = {};

/** Bring the conversation's item `selector` to the top of the view (for a screenshot). */
async function top(selector) {
  await page.locator(selector).evaluate((node) => node.scrollIntoView({ block: "start" }));
}

/** The demo: a tool call, halts, a retry, a fallback, an attack, a reload and the session reopened. */
async function demo() {
  report.empty = await shown();
  await snap("empty");
  await say("What's the weather in Paris?", ".tool-call[data-name=get_weather] .result:has-text('Paris')");
  await say("What's the admin password?", ".decision[data-kind=halted]");
  await say("And the weather in Tokyo?", ".decision[data-kind=retried]");
  await page.waitForSelector(".bubble.assistant:has-text('Tokyo')");
  await say("What's the weather in Atlantis?", ".decision[data-kind=halted] >> nth=1");
  await say("Thanks!", ".decision[data-kind=fell_back]");
  await page.waitForSelector(".timeline >> nth=4");
  report.live = await shown();
  await top(".bubble.user >> nth=2");
  await snap("timeline");
  await page.setViewportSize({ width: 420, height: 900 });
  report.narrow = await shown();
  await top(".bubble.user >> nth=3");
  await snap("narrow");
  await page.setViewportSize({ width: 1280, height: 1000 });
  // An attacker's text is shown as text: no element is made from it, no script runs.
  await say("<img src=x onerror=\"window.pwned=true\"> hi", ".bubble.assistant >> nth=5");
  report.attacked = await shown();
  // Reload: the session is in the list, and reopening it shows what happened.
  await page.goto(spec.url.replace(/#.*$/, "") + "#");
  await page.reload();
  await page.waitForSelector("body[data-ready=true]");
  report.reloaded = await shown();
  await page.click(`#sessions > li[data-id="${report.live.sessions[0]}"] a`);
  await page.waitForSelector(".decision[data-kind=retried]");
  report.reopened = await shown();
}

/** Several agents: the root's cards, one agent's page with the header's picker, then another's. */
async function picker() {
  report.root = await shown();
  await snap("picker");
  await page.click("#agents > li >> nth=0");
  await page.waitForSelector("body[data-ready=true]");
  report.first = { ...(await shown()), url: page.url() };
  await say("pay bo 5", ".approval .approve:enabled");
  await page.waitForSelector("#sessions > li"); // listed once the run is over
  report.first.sessions = (await shown()).sessions;
  await page.selectOption("#agent-picker", { index: 1 });
  await page.waitForURL(/demo_agent/);
  await page.waitForSelector("body[data-ready=true]");
  report.second = { ...(await shown()), url: page.url() };
}

/** Approvals: a payment approved with a click, one rejected with a reason after a reload. */
async function approvals() {
  await say("pay bo 5000", ".approval .approve:enabled");
  report.asked = await shown();
  await snap("approval");
  await page.click(".approval .approve");
  await page.waitForSelector(".tool-call[data-name=pay] .result:has-text('sent 5000 to bo')");
  await page.waitForSelector("body[data-idle=true]");
  await say("pay al 9000", ".approval >> nth=1");
  // A paused session reopened after a reload is still waiting, and answerable.
  await page.reload();
  await page.waitForSelector("body[data-ready=true]");
  await page.waitForSelector(".approval .reject:enabled");
  await page.fill(".approval .reason", "too much");
  await page.click(".approval .reject");
  await page.waitForSelector(".bubble.assistant:has-text('Rejected: too much')");
  await page.waitForSelector("body[data-idle=true]");
  report.answered = await shown();
}

/** MCP: a long-running call's progress on its card; a server's question answered in the card's reply box. */
async function mcp() {
  await say("count", ".tool-call[data-name=trigger-long-running-operation] .result:has-text('completed')");
  report.counted = await shown();
  await say("ask", ".approval .reply:enabled");
  report.asked = await shown();
  await top(".bubble.user >> nth=1");
  await snap("question");
  await page.fill(".approval .reply", "{\"name\": 5}"); // not what the schema asks: the server refuses it
  await page.click(".approval .approve");
  await page.waitForSelector(".note.error");
  await page.waitForSelector("body[data-idle=true]");
  report.refused = await shown();
  await page.reload();
  await page.waitForSelector("body[data-ready=true]");
  await page.waitForSelector(".approval .reply:enabled");
  await page.fill(".approval .reply", "{\"name\": \"Ada\"}");
  await page.click(".approval .approve");
  await page.waitForSelector(".tool-call[data-name=trigger-elicitation-request] .result:has-text('Ada')");
  await page.waitForSelector("body[data-idle=true]");
  report.answered = await shown();
}

try {
  await page.goto(spec.url);
  await page.waitForSelector("body[data-ready=true]");
  await { demo, approvals, picker, mcp }[spec.scenario ?? "demo"]();
} catch (error) {
  problems.push(`step failed: ${error.message}`);
  report.failedAt = await shown().catch(() => null);
} finally {
  await context.close();
}
report.problems = problems;
process.stdout.write(JSON.stringify(report));
