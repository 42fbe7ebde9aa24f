// Names for ids: where the API gives only an id (friend requests, payments, a new conversation), the app shows the
// person's or agent's name and picture. Every author the app sees (friends, conversations, live frames, search
// results) is remembered here, kept in localStorage per signed-in principal; an id not seen yet is looked up once:
// an agent through its public profile, a person through people search (which finds friends and people one shares a
// conversation with).
import type { Flock } from "@flock/client";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Avatar, type Pictured } from "./avatar.tsx";
import { useApp } from "./context.ts";

const KEEP = 500;

export interface PeopleCache {
  known: ReadonlyMap<string, Pictured>;
  /** Remembers these principals (a later sighting replaces an earlier one: names and pictures change). */
  learn(list: readonly Pictured[]): void;
  /** Looks an unknown id up (once per session). */
  need(id: string): void;
}

export function usePeople(client: Flock, me: string): PeopleCache {
  const key = `flock.people.${me}`;
  const [known, setKnown] = useState<ReadonlyMap<string, Pictured>>(() => {
    try {
      return new Map((JSON.parse(localStorage.getItem(key) ?? "[]") as Pictured[]).map((p) => [p.id, p]));
    } catch {
      return new Map();
    }
  });
  const asked = useRef(new Set<string>());

  const learn = useCallback(
    (list: readonly Pictured[]) =>
      setKnown((m) => {
        const fresh = list.filter(
          (p) =>
            p.id &&
            p.display_name &&
            (m.get(p.id)?.display_name !== p.display_name ||
              (m.get(p.id)?.avatar_url ?? null) !== (p.avatar_url ?? null)),
        );
        if (fresh.length === 0) return m;
        const n = new Map(m);
        for (const p of fresh) {
          n.delete(p.id);
          n.set(p.id, { id: p.id, display_name: p.display_name, avatar_url: p.avatar_url ?? null });
        }
        return n;
      }),
    [],
  );

  useEffect(() => {
    localStorage.setItem(key, JSON.stringify([...known.values()].slice(-KEEP)));
  }, [known]);

  const need = useCallback(
    (id: string) => {
      if (!id || asked.current.has(id)) return;
      asked.current.add(id);
      const found: Promise<Pictured | undefined> = /^\d+$/.test(id)
        ? client.agent(id)
        : client.searchPeople(id, { limit: 5 }).then((r) => r.people.find((p) => p.id === id));
      found.then(
        (p) => p && learn([p]),
        () => {}, // unknown stays unknown: the id's fallback is shown
      );
    },
    [client, learn],
  );

  return useMemo(() => ({ known, learn, need }), [known, learn, need]);
}

/** The name (and, with `pictured`, the picture) for an id; looked up when not known yet, the id until then. */
export function Name({ id, pictured = false }: { id: string; pictured?: boolean }) {
  const { people, session } = useApp();
  const p = id === session.me.id ? { id, display_name: "You" } : people.known.get(id);
  useEffect(() => {
    if (!p) people.need(id);
  }, [id, Boolean(p)]);
  // no name to be had (a person one has never talked with): the id is all there is
  const who = p ?? { id, display_name: id };
  return (
    <span class="name" data-name-of={id} title={id}>
      {pictured && <Avatar who={who} size={24} />} <strong>{who.display_name}</strong>
    </span>
  );
}
