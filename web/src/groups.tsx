// Groups from the chat: the form that creates one (friends to tick, anyone else found by name or id) and a group's
// members, where the owner adds people (found the same way) and removes them, and anyone may leave.
import type { Author, Group } from "@flock/client";
import { useEffect, useState } from "preact/hooks";
import { Avatar } from "./avatar.tsx";
import { useApp } from "./context.ts";
import { PeopleSearch } from "./search.tsx";
import { Alert } from "./ui.tsx";

export function NewGroup() {
  const { client, fail } = useApp();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [others, setOthers] = useState<ReadonlyMap<string, string>>(new Map());
  const [friends, setFriends] = useState<Author[]>([]);
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (open) client.friends().then(setFriends, (err: unknown) => setError(fail(err)));
  }, [open]);

  async function create(e: Event) {
    e.preventDefault();
    const ids = [...picked, ...others.keys()];
    try {
      const g = await client.createGroup({ name: name.trim(), members: [...new Set(ids)] });
      setOpen(false);
      setName("");
      setOthers(new Map());
      setPicked(new Set());
      location.hash = `#/chat/t/${g.thread_id}`;
    } catch (err) {
      setError(fail(err));
    }
  }

  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        New group
      </button>
    );
  return (
    <form class="card" onSubmit={create} aria-label="New group">
      <Alert text={error} onClose={() => setError(null)} />
      <label for="group-name">Group name</label>
      <input id="group-name" value={name} required maxLength={100} onInput={(e) => setName(e.currentTarget.value)} />
      {friends.length > 0 && (
        <fieldset>
          <legend>Friends to add</legend>
          {friends.map((f) => (
            <label key={f.id} class="check">
              <input
                type="checkbox"
                checked={picked.has(f.id)}
                onChange={(e) => {
                  const on = e.currentTarget.checked;
                  setPicked((s) => {
                    const n = new Set(s);
                    if (on) n.add(f.id);
                    else n.delete(f.id);
                    return n;
                  });
                }}
              />{" "}
              {f.display_name}
            </label>
          ))}
        </fieldset>
      )}
      {others.size > 0 && <p class="muted">Also adding: {[...others.values()].join(", ")}</p>}
      <PeopleSearch
        id="group-q"
        label="Add others"
        action={(p) => {
          const on = picked.has(p.id) || others.has(p.id);
          return (
            <button
              type="button"
              aria-pressed={on}
              aria-label={`${on ? "Don't add" : "Add"} ${p.display_name}`}
              onClick={() =>
                setOthers((m) => {
                  const n = new Map(m);
                  if (n.has(p.id)) n.delete(p.id);
                  else n.set(p.id, p.display_name);
                  return n;
                })
              }
            >
              {on ? "Added" : "Add"}
            </button>
          );
        }}
      />
      <div class="row">
        <button type="submit" class="primary" disabled={!name.trim()}>
          Create group
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function Members({ group, onChange }: { group: Group; onChange(g: Group): void }) {
  const { client, session, fail } = useApp();
  const [error, setError] = useState<string | null>(null);
  const owner = group.owner === session.me.id;
  return (
    <details class="members">
      <summary>{group.members.length} members</summary>
      <Alert text={error} onClose={() => setError(null)} />
      <ul>
        {group.members.map((m) => (
          <li key={m.id} data-member={m.id}>
            <Avatar who={m} size={24} /> {m.display_name}
            {(owner || m.id === session.me.id) && m.id !== group.owner && (
              <button
                type="button"
                class="link"
                onClick={() =>
                  void client
                    .removeGroupMember(group.id, m.id)
                    .then(() => onChange({ ...group, members: group.members.filter((x) => x.id !== m.id) }))
                    .catch((err: unknown) => setError(fail(err)))
                }
              >
                {m.id === session.me.id ? "Leave" : "Remove"}
              </button>
            )}
          </li>
        ))}
      </ul>
      <PeopleSearch
        id="member-q"
        label="Add a member"
        action={(p) =>
          group.members.some((x) => x.id === p.id) ? (
            <span class="muted">Member</span>
          ) : (
            <button
              type="button"
              aria-label={`Add ${p.display_name} to the group`}
              onClick={() =>
                void client
                  .addGroupMembers(group.id, [p.id])
                  .then(onChange)
                  .catch((err: unknown) => setError(fail(err)))
              }
            >
              Add
            </button>
          )
        }
      />
    </details>
  );
}
