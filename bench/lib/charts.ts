// The soak's charts: Vega-Lite specs compiled to Vega, rendered to SVG by Vega's headless view, rasterised to PNG by
// resvg. One PNG, five panels over time (node memory, Redis, database size with the largest tables, latency,
// event-loop lag), a dashed rule where the first window ends (the verdict compares what follows it).
import { writeFileSync } from "node:fs";
import { Resvg } from "@resvg/resvg-js";
import { parse, View } from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import type { SoakSample } from "./soak-sample.ts";

interface Point {
  t: number;
  series: string;
  value: number;
}

interface Panel {
  title: string;
  unit: string;
  series: [label: string, pick: (s: SoakSample) => number][];
  log?: boolean;
  /** also a line for each of the largest tables (SoakSample.tables) */
  tables?: boolean;
}

/** MB of each table named in a sample's `name:MB name:MB`. */
function tableSizes(s: SoakSample): Map<string, number> {
  return new Map(
    s.tables
      .split(" ")
      .filter(Boolean)
      .map((x) => [x.slice(0, x.lastIndexOf(":")), Number(x.slice(x.lastIndexOf(":") + 1))]),
  );
}

const PANELS: Panel[] = [
  {
    title: "Node memory",
    unit: "MB",
    series: [
      ["RSS", (s) => s.rssMb],
      ["heap used", (s) => s.heapUsedMb],
      ["heap total", (s) => s.heapTotalMb],
      ["external", (s) => s.externalMb],
      ["V8 old space", (s) => s.oldSpaceMb],
      ["malloc [heap]", (s) => s.mallocHeapMb],
    ],
  },
  {
    title: "Redis (none with the memory engines)",
    unit: "MB",
    series: [
      ["the node's keys (MEMORY USAGE)", (s) => s.redisNodeMb],
      ["used_memory, whole instance", (s) => s.redisUsedMb],
    ],
  },
  {
    title: "Database size",
    unit: "MB",
    series: [["node's schema (embedded: its files)", (s) => s.schemaMb]],
    tables: true,
  },
  {
    title: "Latency",
    unit: "ms",
    log: true,
    series: [
      ["send p50", (s) => s.sendP50],
      ["send p99", (s) => s.sendP99],
      ["delivery p50", (s) => s.deliverP50],
      ["delivery p99", (s) => s.deliverP99],
    ],
  },
  {
    title: "Event-loop lag (node)",
    unit: "ms",
    series: [
      ["p99", (s) => s.lagP99Ms],
      ["max", (s) => s.lagMaxMs],
    ],
  },
];

function panelSpec(p: Panel, rows: SoakSample[], windowS: number) {
  const values: Point[] = [];
  for (const r of rows) {
    for (const [series, pick] of p.series) {
      const v = pick(r);
      if (Number.isFinite(v) && (!p.log || v > 0)) values.push({ t: r.t, series, value: v });
    }
  }
  if (p.tables && rows.length) {
    const largest = [...tableSizes(rows.at(-1)!).keys()].slice(0, 4);
    for (const r of rows) {
      const sizes = tableSizes(r);
      for (const name of largest)
        if (sizes.has(name)) values.push({ t: r.t, series: `table ${name}`, value: sizes.get(name)! });
    }
  }
  return {
    title: p.title,
    width: 720,
    height: 180,
    layer: [
      {
        data: { values },
        mark: { type: "line" as const, point: rows.length <= 60 },
        encoding: {
          x: { field: "t", type: "quantitative" as const, title: "seconds", scale: { domainMin: 0 } },
          y: {
            field: "value",
            type: "quantitative" as const,
            title: p.unit,
            scale: p.log ? { type: "log" as const } : { zero: false },
          },
          color: { field: "series", type: "nominal" as const, title: null },
        },
      },
      {
        data: { values: [{ t: windowS }] },
        mark: { type: "rule" as const, strokeDash: [4, 4], color: "gray" },
        encoding: { x: { field: "t", type: "quantitative" as const } },
      },
    ],
  };
}

/** The panels as SVG text. */
export async function soakSvg(rows: SoakSample[], windowS: number, title: string): Promise<string> {
  const spec: TopLevelSpec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title,
    background: "white",
    padding: 12,
    vconcat: PANELS.map((p) => panelSpec(p, rows, windowS)),
    resolve: { scale: { color: "independent" } },
    config: { font: "DejaVu Sans", legend: { labelLimit: 320 } },
  };
  const view = new View(parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Writes the panels as a PNG to `file`. */
export async function writeSoakPng(file: string, rows: SoakSample[], windowS: number, title: string): Promise<void> {
  const svg = await soakSvg(rows, windowS, title);
  const png = new Resvg(svg, {
    font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" },
    fitTo: { mode: "original" },
  })
    .render()
    .asPng();
  writeFileSync(file, png);
}
