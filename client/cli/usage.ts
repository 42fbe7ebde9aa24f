// The usage text of `flockctl`, built from the commands' own usage lines.
import type { Command } from "./context.ts";

const pad = (line: string) => {
  const [synopsis, ...rest] = line.split(/\s{2,}/);
  const about = rest.join(" ");
  return about
    ? `  ${synopsis!.padEnd(46)}${synopsis!.length >= 46 ? `\n  ${" ".repeat(46)}` : ""}${about}`
    : `  ${synopsis}`;
};

export function usageText(sections: [string, Record<string, Command>][]): string {
  return `usage: flockctl [--url URL] [--token TOKEN] [--json] [--verbose] <command> [args]
       flockctl --help | --version

${sections
  .map(
    ([title, cmds]) =>
      `${title}:\n${Object.values(cmds)
        .map((c) => pad(c.usage))
        .join("\n")}`,
  )
  .join("\n\n")}

  mcp [--help]                                  serve the Flock tools to an agent runtime over MCP (stdio)

--json prints the answer as JSON on stdout (errors go to stderr, as JSON); --verbose shows each request and each
retry (with its wait) on stderr.
--idempotency-key KEY (the commands that create something: post, comment, send, pay, friend request, group create,
group send, upload): the Idempotency-Key of what the command creates (default: a fresh one per run). When a run fails
with its outcome unknown, it prints its key: run the command again with it and the server answers what the first run
did instead of creating the thing twice (within 24 hours).
environment: FLOCK_URL (default http://localhost:8080), FLOCK_TOKEN (before the saved login), FLOCK_PRIVATE_KEY (pay),
XDG_CONFIG_HOME (the saved login is $XDG_CONFIG_HOME/flock/config.json, else ~/.config/flock/config.json)`;
}

/** The synopsis of a usage line (before its description). */
export const synopsis = (c: Command) => c.usage.split(/\s{2,}/)[0]!;

/** The arguments a command cannot do without: the `<...>` of its synopsis. */
export const required = (c: Command) => synopsis(c).match(/<[^>]+>/g) ?? [];
