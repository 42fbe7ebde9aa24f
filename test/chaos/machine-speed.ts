// How fast this machine is right now, as the bench's yardstick reads it: a short run of the bare uWebSockets.js HTTP
// baseline (bench/baseline-http.ts, a 1 KB JSON answer, 50 connections; bench/run.ts measures it the same way, and
// bench/RESULTS.md states every ratio against it). Its server and its load both run on this machine's cores, beside
// whatever else runs, so it reads the speed the fault will get. The rolling faults scale their load to it.
import { load } from "../../bench/lib/load.ts";
import { startScript } from "../../bench/lib/procs.ts";

/** Requests a second the bare-uWS baseline answers over `seconds`. */
export async function baselineRps(seconds = 2): Promise<number> {
  const base = await startScript("bench/baseline-http.ts", {}, /"port":(\d+)/);
  try {
    const r = await load({
      url: `http://127.0.0.1:${base.port}`,
      connections: 50,
      duration: seconds,
      next: () => ({ method: "GET", path: "/" }),
    });
    return Math.round(r.rps);
  } finally {
    await base.stop();
  }
}
