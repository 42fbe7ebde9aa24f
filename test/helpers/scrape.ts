// A node's /metrics, read as a test reads it: the Prometheus text exposition parsed into samples by name.

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

export type Scrape = Map<string, Sample[]>;

/** Prometheus text exposition: sample name -> its samples. */
export function parseScrape(text: string): Scrape {
  const out = new Map<string, Sample[]>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`unparsable sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    const list = out.get(m[1]!) ?? [];
    list.push({ labels, value: Number(m[3]) });
    out.set(m[1]!, list);
  }
  return out;
}

/** The sum of `name`'s samples whose labels include `match`. */
export function total(scrape: Scrape, name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of scrape.get(name) ?? [])
    if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  return sum;
}

/** One scrape of a node's metrics listener (FLOCK_METRICS_PORT). */
export async function scrapeNode(metricsPort: number | undefined): Promise<Scrape> {
  if (metricsPort === undefined) throw new Error("the node has no metrics listener (start it with FLOCK_METRICS_PORT)");
  const r = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
  return parseScrape(await r.text());
}
