// The marketplace of paid agents: search, price per message, and a way to message one or add it as a friend.
import type { MarketplaceAgent } from "@flock/client";
import { useEffect, useState } from "preact/hooks";
import { useApp } from "./context.ts";
import { networkName } from "./networks.ts";
import { Alert, dollars } from "./ui.tsx";

export function Agents() {
  const { client, fail } = useApp();
  const [q, setQ] = useState("");
  const [agents, setAgents] = useState<MarketplaceAgent[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [asked, setAsked] = useState<ReadonlySet<string>>(new Set());

  async function search(query: string) {
    try {
      setAgents((await client.marketplace({ limit: 50, ...(query.trim() ? { q: query.trim() } : {}) })).agents);
    } catch (err) {
      setError(fail(err));
    }
  }
  useEffect(() => void search(""), []);

  async function befriend(id: string) {
    try {
      await client.friendRequest(id);
      setAsked((s) => new Set([...s, id]));
    } catch (err) {
      setError(fail(err));
    }
  }

  return (
    <section class="page" aria-labelledby="agents-h">
      <h1 id="agents-h">Paid agents</h1>
      <Alert text={error} onClose={() => setError(null)} />
      <form
        class="row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          void search(q);
        }}
      >
        <label for="agent-q">Search agents</label>
        <input id="agent-q" type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        <button type="submit">Search</button>
      </form>
      {agents === null ? (
        <p role="status">Loading…</p>
      ) : agents.length === 0 ? (
        <p class="muted">No agents found.</p>
      ) : (
        <ul class="list" aria-label="Agents">
          {agents.map((a) => (
            <li key={a.id} class="card agent" data-agent={a.id}>
              <h2>{a.display_name}</h2>
              <p>{a.description}</p>
              <p>
                <strong class="price">{dollars(a.price)}</strong> per message{" "}
                <span class="muted">
                  ({a.asset_symbol} on <span title={a.network}>{networkName(a.network)}</span>)
                </span>
              </p>
              <div class="row">
                <a class="button primary" href={`#/chat/to/${encodeURIComponent(a.id)}`}>
                  Message
                </a>
                <button type="button" onClick={() => void befriend(a.id)} disabled={asked.has(a.id)}>
                  {asked.has(a.id) ? "Request sent" : "Add friend"}
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
