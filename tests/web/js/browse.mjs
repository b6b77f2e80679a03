// Drives the adk web page in headless Chromium and prints what it showed, as JSON.
// Usage: node browse.mjs '{"url": ..., "chromium": ..., "userDataDir": ..., "screenshot": ...}'
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

/** What the page shows now: the conversation, the events' objects, the state, the sessions. */
async function shown() {
  return page.evaluate(() => ({
    conversation: [...document.querySelectorAll("#conversation > li")].map((li) => [li.className, li.textContent]),
    events: [...document.querySelectorAll("#events > li")].map((li) => `${li.dataset.author} ${li.dataset.object}`),
    deltas: [...document.querySelectorAll("#events > li .delta")].map((span) => span.textContent),
    state: document.getElementById("state").textContent,
    sessions: [...document.querySelectorAll("#sessions > li")].map((li) => li.dataset.id),
    session: document.getElementById("session-id").textContent,
    images: document.querySelectorAll("#conversation img").length,
    pwned: window.pwned === true,
  }));
}

async function say(text, expect) {
  await page.fill("#message", text);
  await page.click("#send");
  await page.waitForSelector(expect);
  await page.waitForSelector("body[data-idle=true]");
}

const report = {};

/** The demo: a tool call, halts, a retry, a fallback, an attack, a reload and the session reopened. */
async function demo() {
  await say("What's the weather in Paris?", ".tool-call[data-name=get_weather] .result:has-text('Paris')");
  await say("What's the admin password?", ".decision[data-kind=halted]");
  await say("And the weather in Tokyo?", ".decision[data-kind=retried]");
  await page.waitForSelector(".bubble.assistant:has-text('Tokyo')");
  await say("What's the weather in Atlantis?", ".decision[data-kind=halted] >> nth=1");
  await say("Thanks!", ".decision[data-kind=fell_back]");
  report.live = await shown();
  if (spec.screenshot) await page.screenshot({ path: spec.screenshot });
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

/** Approvals: a payment approved with a click, one rejected with a reason after a reload. */
async function approvals() {
  await say("pay bo 5000", ".approval .approve:enabled");
  report.asked = await shown();
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

try {
  await page.goto(spec.url);
  await page.waitForSelector("body[data-ready=true]");
  await { demo, approvals }[spec.scenario ?? "demo"]();
} catch (error) {
  problems.push(`step failed: ${error.message}`);
  report.failedAt = await shown().catch(() => null);
} finally {
  await context.close();
}
report.problems = problems;
process.stdout.write(JSON.stringify(report));
