// An avatar's public address: /v1/avatars/<key> (runtime/accounts/avatars-store.ts has why it names a random key),
// and an author object from a principal's row: the shape every part that shows who did something (messages, moments,
// friends, presence, search) answers, so it sits below them all, beside the Author it makes.
import type { Author } from "./common.ts";

/** The address of the picture a key names, or null when there is no picture. */
export const avatarPath = (key: string | null | undefined): string | null => (key ? `/v1/avatars/${key}` : null);

/** A principal's row as stores select it for an author object. */
export interface AuthorRow {
  id: string;
  display_name: string;
  avatar_key: string | null;
}

export const toAuthor = (r: AuthorRow): Author => ({
  id: r.id,
  display_name: r.display_name,
  avatar_url: avatarPath(r.avatar_key),
});
