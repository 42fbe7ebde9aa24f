// deploy/prometheus/ checked by Prometheus' own tool: the alert rules parse and their PromQL is valid (`promtool check
// rules`), the scrape configuration loads with them (`promtool check config`), and the rules fire as intended on
// made-up series (`promtool test rules deploy/prometheus/alerts.test.yml`). promtool comes from Debian's prometheus
// package, which .ci/run installs (its daemon not started); where it is absent these tests skip and say so.
import { execFileSync, spawnSync } from "node:child_process";
import t from "tap";

function findPromtool(): string | undefined {
  for (const p of ["promtool", "/usr/bin/promtool"]) {
    try {
      execFileSync(p, ["--version"], { stdio: "ignore" });
      return p;
    } catch {
      // not this one
    }
  }
  return undefined;
}

const promtool = findPromtool();
const skip =
  promtool === undefined
    ? "promtool is not installed (Debian: apt-get install prometheus; .ci/run installs it)"
    : false;

const run = (...args: string[]) => {
  const r = spawnSync(promtool!, args, { encoding: "utf8" });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
};

t.test("promtool check rules deploy/prometheus/alerts.yml", { skip }, async (t) => {
  const r = run("check", "rules", "deploy/prometheus/alerts.yml");
  t.equal(r.code, 0, r.out);
  t.match(r.out, /SUCCESS: \d+ rules found/);
});

t.test("promtool check config deploy/prometheus/prometheus.yml (with its rule file)", { skip }, async (t) => {
  const r = run("check", "config", "deploy/prometheus/prometheus.yml");
  t.equal(r.code, 0, r.out);
  t.match(r.out, /SUCCESS/);
});

t.test(
  "promtool test rules deploy/prometheus/alerts.test.yml: the alerts fire on the series they are for",
  { skip },
  async (t) => {
    const r = run("test", "rules", "deploy/prometheus/alerts.test.yml");
    t.equal(r.code, 0, r.out);
    t.match(r.out, /SUCCESS/);
  },
);
