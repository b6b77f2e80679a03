// The page's icons, drawn as inline SVG: a glyph such as ⏸ is a blank box where no system font
// has it (Debian's, for one), so the page ships its own. Each is 16×16 strokes in currentColor.

const PATHS = {
  halted: "M8 1.75a6.25 6.25 0 1 0 0 12.5a6.25 6.25 0 1 0 0-12.5M3.6 12.4L12.4 3.6",
  rejected: "M8 1.75a6.25 6.25 0 1 0 0 12.5a6.25 6.25 0 1 0 0-12.5M5.5 5.5l5 5M10.5 5.5l-5 5",
  replaced: "M2.5 13.5l.8-3.3 7.6-7.6 2.5 2.5-7.6 7.6zM9.4 4.1l2.5 2.5",
  retried: "M13.2 8.6A5.25 5.25 0 1 1 11.7 4.3M12.2 1.6v3h-3",
  fell_back: "M2.5 5h10M10 2.5L12.5 5 10 7.5M13.5 11h-10M6 8.5L3.5 11 6 13.5",
  deferred: "M5.5 3v10M10.5 3v10",
  approved: "M2.75 8.5l3.5 3.5 7-7.5",
  error: "M3.5 3.5l9 9M12.5 3.5l-9 9",
  tool: "M10.2 1.9a3.6 3.6 0 0 0-3.9 4.9L1.9 11.2l2.9 2.9 4.4-4.4a3.6 3.6 0 0 0 4.9-3.9l-2.3 2.3-2.2-.6-.6-2.2z",
  model: "M8 1.5l1.6 4.9 4.9 1.6-4.9 1.6L8 14.5 6.4 9.6 1.5 8l4.9-1.6z",
  hook: "M5.5 1.5v7.25a3.25 3.25 0 0 0 6.5 0V6.5M9.75 8.75L12 6.5l2.25 2.25",
  result: "M3.5 2.5v5.5h9M9.5 5l3 3-3 3",
  clock: "M8 1.75a6.25 6.25 0 1 0 0 12.5a6.25 6.25 0 1 0 0-12.5M8 4.5V8l2.5 2",
  agent: "M3 6.5h10v7H3zM8 6.5V3.5M6 9.5v1M10 9.5v1M1.5 9v2M14.5 9v2M8 3.5a.01.01 0 1 0 0 .02",
};

// Static markup, parsed once: the SVG namespace comes with it (no text of the agent's ever goes here).
const blank = document.createElement("template");
blank.innerHTML = '<svg viewBox="0 0 16 16" aria-hidden="true"><path/></svg>';

/** The icon `name` (a decision's kind, or tool, model, hook, result, error, clock, agent). */
export function icon(name) {
  const svg = blank.content.firstChild.cloneNode(true);
  svg.setAttribute("class", `icon icon-${name}`);
  svg.dataset.icon = name;
  svg.firstChild.setAttribute("d", PATHS[name] ?? PATHS.error);
  return svg;
}
