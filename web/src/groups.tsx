// Groups from the chat: the form that creates one (friends to tick, other members by id) and a group's members,
// where the owner adds and removes people and anyone may leave.
import type { Author, Group } from "@flock/client";
import { useEffect, useState } from "preact/hooks";
import { useApp } from "./context.ts";
import { Alert } from "./ui.tsx";

export function NewGroup() {
  const { client, fail } = useApp();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [members, setMembers] = useState("");
  const [friends, setFriends] = useState<Author[]>([]);
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (open) client.friends().then(setFriends, (err: unknown) => setError(fail(err)));
  }, [open]);

  async function create(e: Event) {
    e.preventDefault();
    const ids = [...picked, ...members.split(/[\s,]+/).filter(Boolean)];
    try {
      const g = await client.createGroup({ name: name.trim(), members: [...new Set(ids)] });
      setOpen(false);
      setName("");
      setMembers("");
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
      <label for="group-ids">Other members (ids, comma separated)</label>
      <input id="group-ids" value={members} onInput={(e) => setMembers(e.currentTarget.value)} />
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
  const [id, setId] = useState("");
  const [error, setError] = useState<string | null>(null);
  const owner = group.owner === session.me.id;
  return (
    <details class="members">
      <summary>{group.members.length} members</summary>
      <Alert text={error} onClose={() => setError(null)} />
      <ul>
        {group.members.map((m) => (
          <li key={m.id}>
            {m.display_name} <span class="muted">{m.id}</span>
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
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void client
            .addGroupMembers(group.id, [id.trim()])
            .then((g) => (onChange(g), setId("")))
            .catch((err: unknown) => setError(fail(err)));
        }}
      >
        <label for="member-id">Add member by id</label>
        <input id="member-id" value={id} onInput={(e) => setId(e.currentTarget.value)} />
        <button type="submit" disabled={!id.trim()}>
          Add
        </button>
      </form>
    </details>
  );
}
