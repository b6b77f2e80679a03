// Checks AG-UI event streams with the official client's own checks (@ag-ui/client's
// enforceEvents: each event's schema; verifyEvents: the sequence). Reads one JSON array of events
// per line on stdin and answers one line per stream: "ok", or a JSON string naming what is wrong
// (a warning, such as a field the schema does not know, counts as wrong).
// Usage: node verify.mjs  (tests/agui/support.py keeps one running for the whole test session)
import readline from "node:readline";
import { enforceEvents, verifyEvents } from "@ag-ui/client";
import { from, lastValueFrom } from "rxjs";

let warnings = [];
console.warn = (...args) => void warnings.push(args.map(String).join(" "));
for await (const line of readline.createInterface({ input: process.stdin })) {
  warnings = [];
  let answer = "ok";
  try {
    await lastValueFrom(from(JSON.parse(line)).pipe(enforceEvents(), verifyEvents()), { defaultValue: null });
    if (warnings.length) answer = JSON.stringify(warnings.join("; "));
  } catch (error) {
    answer = JSON.stringify(String(error?.message ?? error));
  }
  console.log(answer);
}
